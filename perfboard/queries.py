"""What the pages ask the store: parameterized SQL -> DataFrames.

Every value goes in as a bound parameter. Aggregation happens here, in DuckDB, so a page
receives rows it can show, never a table of millions to reduce in pandas.
"""

from __future__ import annotations

import duckdb
import pandas as pd


def counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    row = conn.execute(
        "SELECT (SELECT count(DISTINCT project) FROM series),"
        " (SELECT count(*) FROM series), (SELECT count(*) FROM measurements),"
        " (SELECT count(*) FROM sources), (SELECT count(*) FROM phases),"
        " (SELECT count(*) FROM ingest_errors WHERE severity = 'error')"
    ).fetchone()
    names = ("projects", "series", "measurements", "sources", "phases", "errors")
    return dict(zip(names, row, strict=True))


def projects(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return conn.execute(
        "SELECT s.project, count(DISTINCT s.series_id) AS series, count(*) AS measurements,"
        " count(DISTINCT s.benchmark) AS benchmarks, min(m.measured_at) AS first,"
        " max(m.measured_at) AS last"
        " FROM series s JOIN measurements m USING (series_id)"
        " GROUP BY s.project ORDER BY s.project"
    ).df()


def latest_per_series(
    conn: duckdb.DuckDBPyConnection, project: str | None = None, limit: int = 500
) -> pd.DataFrame:
    """The newest measurement of each series (by time, then by order of ingest).

    One hash aggregate with arg_max, not a window over every row: 0.3 s instead of 3 s
    cold on 10 M measurements.
    """
    return conn.execute(
        """
        WITH latest AS (
            SELECT series_id, count(*) AS points,
                   arg_max(struct_pack(value, status, version, measured_at, source_id, line),
                           (coalesce(epoch_us(measured_at), 0), source_id, line)) AS m
            FROM measurements GROUP BY series_id
        )
        SELECT s.project, s.benchmark, s.task, s.metric, s.framework, s.device,
               s.params::VARCHAR AS params, s.unit, s.direction,
               l.m.value AS latest, l.m.status AS status, l.m.version AS version,
               l.m.measured_at AS measured_at, l.points,
               src.uri AS source, src.url AS source_url, l.m.line AS line
        FROM latest l
        JOIN series s USING (series_id)
        JOIN sources src ON src.source_id = l.m.source_id
        WHERE $project IS NULL OR s.project = $project
        ORDER BY s.project, s.benchmark, s.metric, s.params::VARCHAR
        LIMIT $limit
        """,
        {"project": project, "limit": limit},
    ).df()


def phases(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return conn.execute(
        """
        SELECT p.phase_id, p.project, p.benchmark, p.name, p.owner, p.platform, p.software,
               p.metric, p.unit, p.baseline, p.target,
               arg_max(ms.value, ms.ordinal) FILTER (WHERE ms.value IS NOT NULL) AS latest,
               count(ms.ordinal) AS milestones,
               count(*) FILTER (WHERE ms.disagrees) AS disagreements,
               src.uri AS source
        FROM phases p
        LEFT JOIN milestones ms USING (phase_id)
        JOIN sources src USING (source_id)
        GROUP BY ALL
        ORDER BY p.project, p.name
        """
    ).df()


def milestones(conn: duckdb.DuckDBPyConnection, phase_id: int) -> pd.DataFrame:
    """A phase's milestones in order, with the cumulative speedup against the first value."""
    return conn.execute(
        "SELECT ms.ordinal, ms.label, ms.value, ms.date, ms.pr_repo, ms.pr_number, ms.pr_url,"
        " k.title AS pr_title, ms.description, ms.reported_speedup_raw, ms.reported_reduction,"
        " ms.computed_reduction, ms.computed_speedup,"
        " first_value(ms.value IGNORE NULLS) OVER (ORDER BY ms.ordinal) / ms.value AS speedup,"
        " ms.disagrees, ms.line FROM milestones ms LEFT JOIN pull_requests k"
        " ON k.number = ms.pr_number AND (ms.pr_repo IS NULL OR k.repo = ms.pr_repo)"
        " WHERE ms.phase_id = ? ORDER BY ms.ordinal",
        [phase_id],
    ).df()


def sources(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return conn.execute(
        "SELECT source_id, uri, url, parser, kind, status, encoding,"
        " n_measurements AS measurements,"
        " n_problems AS problems, created_at, ingested_at"
        " FROM sources ORDER BY ingested_at DESC, uri"
    ).df()


def ingest_errors(conn: duckdb.DuckDBPyConnection, limit: int = 200) -> pd.DataFrame:
    return conn.execute(
        "SELECT source_uri AS source, line, parser, severity, reason, raw, seen_at"
        " FROM ingest_errors ORDER BY seen_at DESC, source_uri, line LIMIT ?",
        [limit],
    ).df()


def last_ingest(conn: duckdb.DuckDBPyConnection) -> pd.Timestamp | None:
    value = conn.execute("SELECT max(ingested_at) FROM sources").fetchone()[0]
    return None if value is None else pd.Timestamp(value)


def series_catalog(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every series with the dimensions a page filters on, and how many points it has."""
    return conn.execute(
        """
        WITH points AS (
            SELECT series_id, count(*) AS points,
                   count(*) FILTER (WHERE status = 'ok') AS ok_points,
                   min(measured_at) AS first, max(measured_at) AS last
            FROM measurements GROUP BY series_id
        )
        SELECT s.series_id, s.project, s.benchmark, s.task, s.metric, s.unit, s.direction,
               s.framework, s.device,
               s.params->>'precision' AS precision,
               s.params->>'batch_size' AS batch_size,
               s.params->>'seq_len' AS seq_len,
               s.params->>'threads' AS threads,
               s.params::VARCHAR AS params, s.testbed::VARCHAR AS testbed,
               coalesce(p.points, 0) AS points, coalesce(p.ok_points, 0) AS ok_points,
               p.first, p.last
        FROM series s LEFT JOIN points p USING (series_id)
        ORDER BY s.project, s.benchmark, s.metric, s.framework, s.params::VARCHAR
        """
    ).df()


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
                   arg_max(line, measured_at) AS line
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


def source_measurements(
    conn: duckdb.DuckDBPyConnection, source_id: int, line: int | None = None, limit: int = 1000
) -> pd.DataFrame:
    """What one document gave, with the line and raw text of each value (provenance)."""
    return conn.execute(
        "SELECT m.line, m.raw, m.value, s.unit, m.status, s.benchmark, s.metric, s.framework,"
        " s.params::VARCHAR AS params, m.version, m.measured_at, m.samples, m.run"
        " FROM measurements m JOIN series s USING (series_id)"
        " WHERE m.source_id = $source AND ($line IS NULL OR m.line = $line)"
        " ORDER BY m.line, s.metric LIMIT $limit",
        {"source": source_id, "line": line, "limit": limit},
    ).df()


def source_errors(conn: duckdb.DuckDBPyConnection, uri: str) -> pd.DataFrame:
    return conn.execute(
        "SELECT line, parser, severity, reason, raw FROM ingest_errors"
        " WHERE source_uri = ? ORDER BY line",
        [uri],
    ).df()


def referenced_prs(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every PR the data refers to: those a milestone names, with the step it made (before
    -> after), and those known from a PR facts file or a sync, with what is known of them."""
    return conn.execute(
        """
        WITH steps AS (
            SELECT ms.*, p.name AS phase, p.project, p.unit,
                   lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
                       AS before
            FROM milestones ms JOIN phases p USING (phase_id)
        ),
        named AS (SELECT * FROM steps WHERE pr_number IS NOT NULL)
        SELECT coalesce(n.pr_repo, k.repo) AS pr_repo,
               coalesce(n.pr_number, k.number) AS pr_number,
               n.pr_url, k.title, k.author, k.state, n.project, n.phase, n.phase_id,
               n.label AS milestone, n.before, n.value AS after, n.unit,
               (n.before - n.value) / n.before AS reduction,
               n.reported_speedup_raw AS reported, n.disagrees, n.description,
               coalesce(n.date, k.created_at::DATE) AS date, k.note
        FROM named n
        FULL OUTER JOIN pull_requests k
          ON k.number = n.pr_number AND (n.pr_repo IS NULL OR k.repo = n.pr_repo)
        ORDER BY n.pr_number IS NULL, date DESC NULLS LAST, pr_number DESC
        """
    ).df()


def headline_series(conn: duckdb.DuckDBPyConnection, per_project: int = 3) -> pd.DataFrame:
    """Each project's most-measured series, with latest, week-ago and first values.

    "A week ago" is the last value at least 7 days before the series' latest one, so a
    series measured nightly and one measured monthly both compare with their own past.
    """
    return conn.execute(
        """
        WITH counts AS (
            SELECT series_id, count(*) AS points, max(measured_at) AS last
            FROM measurements WHERE status = 'ok' GROUP BY series_id
        ),
        ranked AS (
            SELECT s.*, c.points, c.last,
                   row_number() OVER (PARTITION BY s.project
                                      ORDER BY c.points DESC, c.last DESC, s.series_id) AS r
            FROM series s JOIN counts c USING (series_id)
        ),
        chosen AS (SELECT * FROM ranked WHERE r <= $per_project)
        SELECT c.series_id, c.project, c.benchmark, c.metric, c.unit, c.direction, c.framework,
               c.device, c.params::VARCHAR AS params, c.points, c.last,
               arg_max(m.value, m.measured_at) AS latest,
               arg_max(m.value, m.measured_at)
                   FILTER (WHERE m.measured_at <= c.last - INTERVAL 7 DAY) AS week_ago,
               arg_min(m.value, m.measured_at) AS first
        FROM chosen c JOIN measurements m USING (series_id)
        WHERE m.status = 'ok'
        GROUP BY ALL
        ORDER BY c.project, c.points DESC
        """,
        {"per_project": per_project},
    ).df()


def project_milestones(conn: duckdb.DuckDBPyConnection, project: str) -> pd.DataFrame:
    """Every milestone of every phase of a project, for one shared time axis."""
    return conn.execute(
        "SELECT p.phase_id, p.name AS phase, p.unit, ms.ordinal, ms.label, ms.value, ms.date,"
        " ms.pr_repo, ms.pr_number, ms.pr_url, ms.description"
        " FROM milestones ms JOIN phases p USING (phase_id)"
        " WHERE p.project = ? AND ms.value IS NOT NULL AND ms.date IS NOT NULL"
        " ORDER BY ms.date, p.phase_id, ms.ordinal",
        [project],
    ).df()


def pr_measurements(
    conn: duckdb.DuckDBPyConnection, repo: str | None, number: int, limit: int = 500
) -> pd.DataFrame:
    """Measurements taken at a PR's merge commit (their version is its full or short hash)."""
    return conn.execute(
        """
        SELECT s.project, s.benchmark, s.metric, s.framework, s.device,
               s.params::VARCHAR AS params, m.value, s.unit, m.status, m.version,
               m.measured_at, src.uri AS source, m.line
        FROM pull_requests k
        JOIN measurements m
          ON length(m.version) >= 7 AND starts_with(k.merge_commit, lower(m.version))
        JOIN series s USING (series_id)
        JOIN sources src USING (source_id)
        WHERE k.number = $number AND ($repo IS NULL OR k.repo = $repo)
        ORDER BY s.project, s.benchmark, s.metric
        LIMIT $limit
        """,
        {"repo": repo, "number": number, "limit": limit},
    ).df()


def pr_claims(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Effects claimed by documents that are PR pages (their url ends in /pull/N).

    A PR's description may be in the store twice (a file whose url is the PR's page, and
    the body a GitHub sync read): each distinct claim of a PR is given once, with the
    first source (by name) that makes it.
    """
    return conn.execute(
        """
        WITH claimed AS (
            SELECT regexp_extract(src.url, 'https://[^/]+/([^/]+/[^/]+)/pull/\\d+', 1)
                       AS pr_repo,
                   regexp_extract(src.url, '/pull/(\\d+)', 1)::BIGINT AS pr_number,
                   c.before, c.after, c.unit, c.percent, c.raw, src.uri AS source, c.line,
                   c.ordinal
            FROM claims c JOIN sources src USING (source_id)
            WHERE regexp_matches(src.url, '/pull/\\d+/?$')
        )
        SELECT * EXCLUDE (ordinal) FROM claimed
        QUALIFY row_number() OVER (
            PARTITION BY pr_repo, pr_number, before, after, unit, percent
            ORDER BY source, ordinal) = 1
        ORDER BY pr_number, source, ordinal
        """
    ).df()


def releases(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Release tags of the walked clones, oldest first: markers on time charts."""
    return conn.execute(
        "SELECT repo, tag, sha, released_at FROM releases ORDER BY released_at, repo, tag"
    ).df()
