"""Points of series over time (bucketed in DuckDB), with the commit, PR and release of
each version; release tags."""

from __future__ import annotations

import duckdb
import pandas as pd


def series_points(
    conn: duckdb.DuckDBPyConnection, series_ids: tuple[int, ...], max_points: int = 2000
) -> pd.DataFrame:
    """The points of some series, at most about `max_points` per series.

    A longer series is cut into that many equal time buckets and each bucket gives its
    median (with the newest version and the count it stands for): the browser gets a few
    thousand points however long the history, and a step still shows. A point whose
    version is a commit of a walked clone carries its repository, commit date and first
    release (commit_repo, commit_at, release) and its PR (pr_repo, pr_number, pr_title;
    the title once the PR's facts are known).
    """
    return conn.execute(
        """
        WITH chosen AS (
            SELECT m.*, src.uri AS source, src.url AS source_url,
                   count(*) OVER (PARTITION BY m.series_id) AS n,
                   epoch_us(min(m.measured_at) OVER (PARTITION BY m.series_id)) AS t0,
                   epoch_us(max(m.measured_at) OVER (PARTITION BY m.series_id)) AS t1
            FROM measurements m JOIN sources src USING (source_id)
            WHERE m.series_id IN (SELECT unnest($ids))
        ),
        bucketed AS (
            SELECT *, CASE WHEN n <= $max_points OR t1 = t0 THEN row_number() OVER ()
                           ELSE (epoch_us(measured_at) - t0) * $max_points // (t1 - t0 + 1)
                      END AS bucket
            FROM chosen
        ),
        points AS (
            SELECT series_id,
                   max(measured_at) AS measured_at,
                   arg_max(version, measured_at) AS version,
                   median(value) FILTER (WHERE status = 'ok') AS value,
                   CASE WHEN count(*) FILTER (WHERE status = 'ok') > 0 THEN 'ok'
                        ELSE any_value(status) END AS status,
                   max(samples) AS samples,
                   count(*) AS points,
                   arg_max(source, measured_at) AS source,
                   arg_max(source_url, measured_at) AS source_url,
                   arg_max(line, measured_at) AS line,
                   arg_max(source_id, measured_at) AS source_id
            FROM bucketed
            GROUP BY series_id, bucket
        ),
        -- A version that is a commit hash (full or abbreviated) of a walked clone has its
        -- commit date, its PR and the first release containing it; failing that, a
        -- version that is a known PR's merge commit is that PR's. The equality on the
        -- first 7 digits lets DuckDB hash-join; a prefix two commits share matches none.
        commit_of AS (
            SELECT v.version, any_value(c.repo) AS repo, any_value(c.committed_at) AS commit_at,
                   any_value(c.pr_number) AS pr_number, any_value(c.first_release) AS release
            FROM (SELECT DISTINCT version FROM points
                  WHERE regexp_full_match(version, '[0-9a-fA-F]{7,40}')) v
            JOIN commits c ON left(c.sha, 7) = lower(left(v.version, 7))
                          AND starts_with(c.sha, lower(v.version))
            GROUP BY v.version HAVING count(*) = 1
        ),
        merge_of AS (
            SELECT v.version, any_value(k.repo) AS repo, any_value(k.number) AS number
            FROM (SELECT DISTINCT version FROM points WHERE length(version) >= 7) v
            JOIN pull_requests k ON starts_with(k.merge_commit, lower(v.version))
            GROUP BY v.version HAVING count(*) = 1
        ),
        resolved AS (
            SELECT p.*, g.repo AS commit_repo, g.commit_at, g.release,
                   CASE WHEN g.pr_number IS NOT NULL THEN g.repo ELSE mk.repo END AS pr_repo,
                   coalesce(g.pr_number, mk.number) AS pr_number
            FROM points p
            LEFT JOIN commit_of g USING (version)
            LEFT JOIN merge_of mk USING (version)
        )
        SELECT r.*, k.title AS pr_title
        FROM resolved r
        LEFT JOIN pull_requests k ON k.repo = r.pr_repo AND k.number = r.pr_number
        ORDER BY r.series_id, r.measured_at
        """,
        {"ids": list(series_ids), "max_points": max_points},
    ).df()


def releases(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Release tags of the walked clones, oldest first: markers on time charts."""
    return conn.execute(
        "SELECT repo, tag, sha, released_at FROM releases ORDER BY released_at, repo, tag"
    ).df()
