"""What the pages ask the store: parameterized SQL -> DataFrames.

Every value goes in as a bound parameter. Aggregation happens here, in DuckDB, so a page
receives rows it can show, never a table of millions to reduce in pandas.
"""

from __future__ import annotations

from datetime import datetime

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


_SERIES_LABEL = (
    "concat_ws(' · ', s.benchmark, s.metric, s.framework, nullif(s.device, ''),"
    " nullif(s.params::VARCHAR, '{}'))"
)


def alerts(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per alert: the change points that share a project and the versions on
    either side, with the largest change, how many series moved, and the triage."""
    return conn.execute(
        f"""
        SELECT cp.alert_key, any_value(s.project) AS project,
               any_value(cp.before_version) AS before_version,
               any_value(cp.after_version) AS after_version,
               min(cp.before_at) AS before_at, min(cp.after_at) AS after_at,
               count(*) AS series,
               count(*) FILTER (WHERE cp.kind = 'regression') AS regressions,
               count(*) FILTER (WHERE cp.kind = 'improvement') AS improvements,
               CASE WHEN count(DISTINCT cp.kind) > 1 THEN 'mixed'
                    ELSE any_value(cp.kind) END AS kind,
               arg_max(cp.change_pct, abs(cp.change_pct)) AS largest_pct,
               arg_max(cp.after - cp.before, abs(cp.change_pct)) AS largest_abs,
               arg_max(s.unit, abs(cp.change_pct)) AS unit,
               arg_max({_SERIES_LABEL}, abs(cp.change_pct)) AS largest_series,
               1 - min(cp.p_value) AS confidence,
               coalesce(any_value(t.status), 'new') AS status, any_value(t.note) AS note,
               any_value(t.set_by) AS set_by, any_value(t.set_at) AS set_at
        FROM change_points cp
        JOIN series s USING (series_id)
        LEFT JOIN alert_triage t USING (alert_key)
        GROUP BY cp.alert_key
        ORDER BY after_at DESC NULLS LAST, abs(largest_pct) DESC
        """
    ).df()


def alert_changes(conn: duckdb.DuckDBPyConnection, alert_key: str) -> pd.DataFrame:
    """The change points of one alert, largest first, each with its series and the source
    and line of its first point after the change."""
    return conn.execute(
        f"""
        SELECT cp.series_id, {_SERIES_LABEL} AS series, s.metric, s.unit, cp.before,
               cp.after, cp.change_pct, cp.after - cp.before AS change_abs, cp.p_value,
               cp.kind, cp.before_version, cp.after_version, cp.before_at, cp.after_at,
               src.uri AS source, src.url AS source_url, cp.line
        FROM change_points cp
        JOIN series s USING (series_id)
        LEFT JOIN sources src USING (source_id)
        WHERE cp.alert_key = $key
        ORDER BY abs(cp.change_pct) DESC
        """,
        {"key": alert_key},
    ).df()


def alert_suspects(conn: duckdb.DuckDBPyConnection, alert_key: str) -> pd.DataFrame:
    """The PRs that landed between the two sides of an alert: from the walked history
    when both versions are commits of it (mainline commits after the one before, up to
    the one after), else the PRs merged and the milestones recorded between the last
    point before and the first point after."""
    return conn.execute(
        """
        WITH a AS (
            SELECT lower(any_value(before_version)) AS v0, lower(any_value(after_version)) AS v1,
                   min(before_at) AS t0, min(after_at) AS t1
            FROM change_points WHERE alert_key = $key
        ),
        ends AS (
            SELECT c.repo,
                   max(c.committed_at) FILTER (WHERE starts_with(c.sha, a.v0)) AS c0,
                   max(c.committed_at) FILTER (WHERE starts_with(c.sha, a.v1)) AS c1
            FROM commits c, a
            WHERE length(a.v0) >= 7 AND length(a.v1) >= 7
              AND (starts_with(c.sha, a.v0) OR starts_with(c.sha, a.v1))
            GROUP BY c.repo
        ),
        found AS (
            SELECT 1 AS rank, 'commit' AS via, c.repo, c.pr_number,
                   coalesce(k.title, c.summary) AS title, coalesce(k.author, c.author) AS author,
                   c.committed_at AS landed_at, c.sha
            FROM commits c
            JOIN ends e ON c.repo = e.repo AND c.committed_at > e.c0 AND c.committed_at <= e.c1
            LEFT JOIN pull_requests k ON k.repo = c.repo AND k.number = c.pr_number
            WHERE c.mainline
            UNION ALL
            SELECT 2, 'merged', k.repo, k.number, k.title, k.author, k.merged_at, k.merge_commit
            FROM pull_requests k, a
            WHERE k.merged_at > a.t0 AND k.merged_at <= a.t1
            UNION ALL
            SELECT 3, 'milestone', coalesce(ms.pr_repo, k.repo), ms.pr_number,
                   coalesce(k.title, ms.description), k.author, ms.date, NULL
            FROM milestones ms
            CROSS JOIN a
            LEFT JOIN pull_requests k ON k.number = ms.pr_number
                 AND k.repo = coalesce(ms.pr_repo, k.repo)
            WHERE ms.pr_number IS NOT NULL AND ms.date > a.t0::DATE AND ms.date <= a.t1::DATE
        )
        SELECT via, repo, pr_number, title, author, landed_at, sha
        FROM found
        QUALIFY row_number() OVER (
            PARTITION BY coalesce(pr_number::VARCHAR, sha) ORDER BY rank, landed_at
        ) = 1
        ORDER BY landed_at, pr_number
        """,
        {"key": alert_key},
    ).df()


# -- the weekly report: what a week [start, end) changed --------------------------------------


def week_headlines(
    conn: duckdb.DuckDBPyConnection,
    start: datetime,
    end: datetime,
    project: str | None = None,
    per_project: int = 3,
) -> pd.DataFrame:
    """Each project's most-measured series measured in the four weeks to the week's end,
    as they stood at its end and at its start (the last ok value before each)."""
    return conn.execute(
        f"""
        WITH counts AS (
            SELECT series_id, count(*) AS points FROM measurements
            WHERE status = 'ok' AND measured_at < $end GROUP BY series_id
        ),
        ranked AS (
            SELECT s.*, c.points,
                   row_number() OVER (PARTITION BY s.project
                                      ORDER BY c.points DESC, s.series_id) AS r
            FROM series s JOIN counts c USING (series_id)
            WHERE $project IS NULL OR s.project = $project
        )
        SELECT s.series_id, s.project, {_SERIES_LABEL} AS series, s.unit, s.direction,
               arg_max(m.value, m.measured_at) AS this_week,
               arg_max(m.value, m.measured_at) FILTER (WHERE m.measured_at < $start)
                   AS last_week,
               max(m.measured_at) AS measured_at
        FROM ranked s JOIN measurements m USING (series_id)
        WHERE s.r <= $per_project AND m.status = 'ok' AND m.measured_at < $end
        GROUP BY ALL
        HAVING max(m.measured_at) >= $end - INTERVAL 28 DAY  -- current, not stale
        ORDER BY s.project, series
        """,
        {"start": start, "end": end, "project": project, "per_project": per_project},
    ).df()


def week_phases(
    conn: duckdb.DuckDBPyConnection, start: datetime, end: datetime, project: str | None = None
) -> pd.DataFrame:
    """Each phase's baseline, value at the start and the end of the week (its latest
    milestone recorded before each), target, and the milestones recorded in the week."""
    return conn.execute(
        """
        SELECT p.phase_id, p.project, p.name, p.unit, p.baseline, p.target,
               arg_max(ms.value, ms.ordinal) FILTER (WHERE ms.date < $start::DATE) AS last_week,
               arg_max(ms.value, ms.ordinal) FILTER (WHERE ms.date < $end::DATE) AS this_week,
               count(*) FILTER (WHERE ms.date >= $start::DATE AND ms.date < $end::DATE)
                   AS milestones_this_week
        FROM phases p JOIN milestones ms USING (phase_id)
        WHERE ms.value IS NOT NULL AND ($project IS NULL OR p.project = $project)
        GROUP BY ALL
        HAVING count(*) FILTER (WHERE ms.date < $end::DATE) > 0
        ORDER BY p.project, p.name
        """,
        {"start": start, "end": end, "project": project},
    ).df()


def week_prs(
    conn: duckdb.DuckDBPyConnection, start: datetime, end: datetime, project: str | None = None
) -> pd.DataFrame:
    """PRs of the week: recorded by a phase milestone that week (with the step it made),
    merged that week, or opened that week when GitHub's merge time is not known."""
    return conn.execute(
        """
        WITH steps AS (
            SELECT ms.*, p.name AS phase, p.project, p.unit,
                   lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
                       AS before
            FROM milestones ms JOIN phases p USING (phase_id)
        ),
        in_week AS (
            SELECT coalesce(n.pr_repo, k.repo) AS repo, n.pr_number AS number, n.phase,
                   n.label AS milestone, n.before, n.value AS after, n.unit,
                   (n.before - n.value) / n.before AS reduction, n.date::TIMESTAMP AS at,
                   'recorded in the phase table' AS how, 0 AS rank
            FROM steps n
            LEFT JOIN pull_requests k
              ON k.number = n.pr_number AND (n.pr_repo IS NULL OR k.repo = n.pr_repo)
            WHERE n.pr_number IS NOT NULL AND n.date >= $start::DATE AND n.date < $end::DATE
              AND ($project IS NULL OR n.project = $project)
            UNION ALL
            SELECT k.repo, k.number, NULL, NULL, NULL, NULL, NULL, NULL,
                   coalesce(k.merged_at, k.created_at),
                   CASE WHEN k.merged_at IS NOT NULL THEN 'merged'
                        WHEN k.state = 'merged' THEN 'opened; merged, date unknown'
                        ELSE 'opened, ' || coalesce(k.state, 'unknown') END,
                   1
            FROM pull_requests k
            WHERE $project IS NULL
              AND coalesce(k.merged_at, k.created_at) >= $start
              AND coalesce(k.merged_at, k.created_at) < $end
        )
        SELECT w.repo, w.number, k.title, k.author, k.state, k.url, w.how, w.at, w.phase,
               w.milestone, w.before, w.after, w.unit, w.reduction
        FROM in_week w
        LEFT JOIN pull_requests k ON k.repo = w.repo AND k.number = w.number
        QUALIFY row_number() OVER (PARTITION BY w.repo, w.number ORDER BY w.rank) = 1
        ORDER BY w.at, w.number
        """,
        {"start": start, "end": end, "project": project},
    ).df()


def week_gaps(
    conn: duckdb.DuckDBPyConnection, start: datetime, end: datetime, project: str | None = None
) -> pd.DataFrame:
    """Paddle against each other framework on the same benchmark, metric, device and
    parameters, at the end of the week and at its start; only pairs one side of which
    was measured in the week. ratio = Paddle / other (for a time: above 1, Paddle slower)."""
    return conn.execute(
        """
        WITH pairs AS (
            SELECT p.series_id AS ours, o.series_id AS theirs, p.project, p.benchmark,
                   p.metric, p.unit, p.direction, p.device, p.params::VARCHAR AS params,
                   o.framework AS competitor
            FROM series p JOIN series o
              ON o.project = p.project AND o.benchmark = p.benchmark AND o.task = p.task
             AND o.metric = p.metric AND o.unit = p.unit AND o.device = p.device
             AND o.params = p.params AND o.framework <> p.framework
            WHERE p.framework = 'paddle' AND ($project IS NULL OR p.project = $project)
        ),
        ends AS (
            SELECT series_id,
                   arg_max(value, measured_at) FILTER (WHERE measured_at < $end) AS now,
                   arg_max(value, measured_at) FILTER (WHERE measured_at < $start) AS before,
                   count(*) FILTER (WHERE measured_at >= $start AND measured_at < $end)
                       AS this_week
            FROM measurements
            WHERE status = 'ok' AND value > 0
              AND series_id IN (SELECT ours FROM pairs UNION SELECT theirs FROM pairs)
            GROUP BY series_id
        )
        SELECT pr.project, pr.benchmark, pr.metric, pr.unit, pr.direction, pr.device,
               pr.params, pr.competitor, a.now AS paddle, b.now AS other,
               a.now / b.now AS ratio, a.before / b.before AS ratio_before
        FROM pairs pr JOIN ends a ON a.series_id = pr.ours JOIN ends b ON b.series_id = pr.theirs
        WHERE a.now IS NOT NULL AND b.now IS NOT NULL AND a.this_week + b.this_week > 0
        ORDER BY abs(ln(a.now / b.now)) DESC
        """,
        {"start": start, "end": end, "project": project},
    ).df()


def week_quality(
    conn: duckdb.DuckDBPyConnection, start: datetime, end: datetime, stale_days: int = 28
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ingest errors recorded in the week or in documents dated in it, by document; and
    the series measured in the `stale_days` before the week but not in it."""
    errors = conn.execute(
        """
        SELECT e.source_uri AS source, src.url, count(*) AS problems,
               arg_min(e.reason, e.line) AS first_reason, min(e.line) AS first_line
        FROM ingest_errors e LEFT JOIN sources src ON src.uri = e.source_uri
        WHERE (e.seen_at >= $start AND e.seen_at < $end)
           OR (src.created_at >= $start AND src.created_at < $end)
        GROUP BY ALL ORDER BY problems DESC, source
        """,
        {"start": start, "end": end},
    ).df()
    stale = conn.execute(
        f"""
        SELECT s.project, {_SERIES_LABEL} AS series, max(m.measured_at) AS last_measured
        FROM series s JOIN measurements m USING (series_id)
        WHERE m.measured_at < $end
        GROUP BY ALL
        HAVING max(m.measured_at) < $start
           AND max(m.measured_at) >= $start - to_days($days::INTEGER)
        ORDER BY last_measured DESC, series
        """,
        {"start": start, "end": end, "days": stale_days},
    ).df()
    return errors, stale


def report_weeks(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The Mondays of the weeks something happened in (a measurement, a milestone, a PR
    merged or opened), newest first: the weeks a report has something to say about."""
    return conn.execute(
        """
        SELECT DISTINCT date_trunc('week', happened)::DATE AS monday FROM (
            SELECT DISTINCT measured_at AS happened FROM measurements
            UNION ALL SELECT date FROM milestones
            UNION ALL SELECT coalesce(merged_at, created_at) FROM pull_requests
        ) WHERE happened IS NOT NULL
        ORDER BY monday DESC
        """
    ).df()


def latest_outliers(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Series whose newest value is outside their noise: not a change point yet (that
    takes a few points after it), worth a look before the next run."""
    return conn.execute(
        f"""
        SELECT n.series_id, s.project, {_SERIES_LABEL} AS series, s.unit, s.direction,
               n.latest_value, n.level, n.latest_change_pct, n.latest_z, n.cv
        FROM series_noise n JOIN series s USING (series_id)
        WHERE n.latest_outlier
        ORDER BY abs(n.latest_z) DESC
        """
    ).df()


# -- Compare: two versions side by side, attribution of a series' change ------------------------

# A version that is a commit hash, full or abbreviated (7 digits at least, as git prints).
_HASH = "'[0-9a-fA-F]{7,40}'"

# The ok values of each series at one side, one row per value, with the series' columns.
_SIDE_COLUMNS = f"""
        SELECT m.series_id, {_SERIES_LABEL} AS series, s.project, s.benchmark, s.metric,
               s.unit, s.direction, s.framework, m.value, m.version, m.measured_at,
               src.url AS source_url
"""

# Each series' last ok point before $cut (its version, or its time when it has none) and
# every ok value of that point before $cut: repeated runs of one commit give Welch its samples.
_LAST_BEFORE = """
        last AS (
            SELECT series_id,
                   arg_max(version, (measured_at, source_id, line)) AS v,
                   max(measured_at) AS t
            FROM measurements
            WHERE status = 'ok' AND measured_at < $cut
              AND ($series IS NULL OR series_id = $series)
            GROUP BY series_id
        ),
        before_cut AS (
            SELECT m.* FROM measurements m JOIN last l USING (series_id)
            WHERE m.status = 'ok' AND m.measured_at < $cut
              AND CASE WHEN l.v IS NULL THEN m.version IS NULL AND m.measured_at = l.t
                       ELSE m.version = l.v END
        )
"""


def compare_side(
    conn: duckdb.DuckDBPyConnection, kind: str, value: str, series_id: int | None = None
) -> pd.DataFrame:
    """Each series' measured values at one side of a comparison, one row per ok value.

    kind "version": the values measured at that version: the exact string, else a commit
    hash of 7 or more hex digits that abbreviates the measurements' version (or that the
    measurements' abbreviated version abbreviates), in any case; a prefix that names two
    different commits names none. "release": a release tag of `releases`: the values at its
    commit, else each series' last point before the release. "date" (YYYY-MM-DD): each
    series' last point measured by the end of that day. A "point" is every value of one
    version (or of one time, for values without a version). `series_id`: that series only.
    Columns: series_id, series, project, benchmark, metric, unit, direction, framework,
    value, version, measured_at, source_url.
    """
    params: dict[str, object] = {"series": series_id}
    if kind == "version":
        params["value"] = value.strip()
        sql = f"""
        WITH versions AS (
            SELECT DISTINCT version FROM measurements
            WHERE status = 'ok' AND version IS NOT NULL
        ),
        exact AS (SELECT version FROM versions WHERE version = $value),
        prefixed AS (
            SELECT version FROM versions
            WHERE regexp_full_match($value, {_HASH}) AND regexp_full_match(version, {_HASH})
              AND (starts_with(lower(version), lower($value))
                   OR starts_with(lower($value), lower(version)))
        ),
        -- Abbreviations of one commit agree with its longest spelling; two commits do not.
        longest AS (SELECT arg_max(lower(version), length(version)) AS v FROM prefixed),
        chosen AS (
            SELECT version FROM exact
            UNION ALL
            SELECT p.version FROM prefixed p, longest
            WHERE NOT EXISTS (SELECT 1 FROM exact)
              AND NOT EXISTS (SELECT 1 FROM prefixed q WHERE NOT starts_with(longest.v,
                                                                             lower(q.version)))
        ),
        side AS (
            SELECT * FROM measurements
            WHERE status = 'ok' AND version IN (SELECT version FROM chosen)
              AND ($series IS NULL OR series_id = $series)
        )
        """
    elif kind == "release":
        params["value"] = value.strip()
        release = conn.execute(
            "SELECT min(released_at) FROM releases WHERE tag = $value", {"value": params["value"]}
        ).fetchone()[0]
        params["cut"] = release
        sql = f"""
        WITH tagged AS (SELECT lower(sha) AS sha FROM releases WHERE tag = $value),
        at_commit AS (
            SELECT DISTINCT v.version
            FROM (SELECT DISTINCT version FROM measurements
                  WHERE regexp_full_match(version, {_HASH})) v
            JOIN tagged t ON starts_with(t.sha, lower(v.version))
        ),
        at_release AS (
            SELECT * FROM measurements
            WHERE status = 'ok' AND version IN (SELECT version FROM at_commit)
              AND ($series IS NULL OR series_id = $series)
        ),
        {_LAST_BEFORE},
        side AS (
            SELECT * FROM at_release
            UNION ALL
            SELECT * FROM before_cut
            WHERE series_id NOT IN (SELECT series_id FROM at_release)
        )
        """
    elif kind == "date":
        day = datetime.strptime(value.strip(), "%Y-%m-%d")  # a ValueError names a bad date
        params["cut"] = (pd.Timestamp(day) + pd.Timedelta(days=1)).to_pydatetime()
        sql = f"WITH {_LAST_BEFORE}, side AS (SELECT * FROM before_cut)"
    else:
        raise ValueError(f"kind must be version, release or date, not {kind!r}")
    return conn.execute(
        sql
        + _SIDE_COLUMNS
        + """
        FROM side m
        JOIN series s USING (series_id)
        LEFT JOIN sources src ON src.source_id = m.source_id
        ORDER BY m.series_id, m.measured_at, m.line
        """,
        params,
    ).df()


def compare_choices(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """What a comparison's sides can be: the 300 versions measured in the most series (with
    their first date), release tags, and the milestone labels that are also measurement
    versions (a phase's rows). Columns: kind (version, release), value, first_at (first measured,
    or released), series, note."""
    return conn.execute(
        """
        WITH versions AS (
            SELECT version, min(measured_at) AS first_at, count(DISTINCT series_id) AS series
            FROM measurements
            WHERE status = 'ok' AND version IS NOT NULL
            GROUP BY version
        ),
        top AS (SELECT * FROM versions ORDER BY series DESC, first_at DESC NULLS LAST LIMIT 300),
        named AS (
            SELECT ms.label AS version, 'milestone of ' || any_value(p.name) AS note
            FROM milestones ms JOIN phases p USING (phase_id)
            GROUP BY ms.label
        )
        SELECT 'version' AS kind, v.version AS value, v.first_at, v.series, n.note
        FROM versions v LEFT JOIN named n USING (version)
        WHERE v.version IN (SELECT version FROM top) OR n.note IS NOT NULL
        UNION ALL
        SELECT 'release', tag, min(released_at), NULL, string_agg(DISTINCT repo, ', ')
        FROM releases GROUP BY tag
        ORDER BY kind DESC, first_at DESC NULLS LAST, value
        """
    ).df()


def series_steps(
    conn: duckdb.DuckDBPyConnection, series_id: int, start: datetime, end: datetime
) -> pd.DataFrame:
    """What moved one series between two times (start, end]: its change points (detected
    steps, each with the PR suspected of it: alert_suspects, the first to land) and the
    milestones of the phases that measure the same thing (project, benchmark, metric and
    unit) recorded in that window. A milestone whose PR a change point already names is
    left out: the series' own step counts, not the phase table's. Oldest first.

    Columns: at, via (change point, milestone), label, pr_repo, pr_number, title, delta
    (in the series' unit), suspects (PRs suspected of a change point).
    """
    columns = ["at", "via", "label", "pr_repo", "pr_number", "title", "delta", "suspects"]
    changes = conn.execute(
        """
        SELECT alert_key, after_at AS "at", after - before AS delta, after_version
        FROM change_points
        WHERE series_id = $series AND after_at > $start AND after_at <= $end
        ORDER BY after_at
        """,
        {"series": series_id, "start": start, "end": end},
    ).df()
    rows: list[dict[str, object]] = []
    for change in changes.itertuples():
        suspects = alert_suspects(conn, change.alert_key).dropna(subset=["pr_number"])
        if suspects.empty:
            rows.append(
                {
                    "at": change.at,
                    "via": "change point",
                    "label": f"step at {change.at:%Y-%m-%d}",
                    "pr_repo": None,
                    "pr_number": None,
                    "title": f"no PR known to have landed before {change.after_version or '?'}",
                    "delta": change.delta,
                    "suspects": 0,
                }
            )
            continue
        first = suspects.iloc[0]
        rows.append(
            {
                "at": change.at,
                "via": "change point",
                "label": f"#{int(first.pr_number)}"
                + (f" +{len(suspects) - 1}" if len(suspects) > 1 else ""),
                "pr_repo": first.repo,
                "pr_number": int(first.pr_number),
                "title": first.title,
                "delta": change.delta,
                "suspects": len(suspects),
            }
        )
    milestones = conn.execute(
        """
        WITH steps AS (
            SELECT ms.*, p.name AS phase,
                   lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
                       AS before
            FROM milestones ms
            JOIN phases p USING (phase_id)
            JOIN series s ON s.project = p.project AND s.benchmark = p.benchmark
                         AND s.metric = p.metric AND s.unit = p.unit
            WHERE s.series_id = $series
        )
        SELECT st.date::TIMESTAMP AS "at", st.label, st.phase, coalesce(st.pr_repo, k.repo) AS repo,
               st.pr_number, coalesce(k.title, st.description) AS title,
               st.value - st.before AS delta
        FROM steps st
        LEFT JOIN pull_requests k
          ON k.number = st.pr_number AND (st.pr_repo IS NULL OR k.repo = st.pr_repo)
        WHERE st.value IS NOT NULL AND st.before IS NOT NULL
          AND st.date > $start::DATE AND st.date <= $end::DATE
        ORDER BY st.date, st.ordinal
        """,
        {"series": series_id, "start": start, "end": end},
    ).df()
    named = {r["pr_number"] for r in rows if r["pr_number"] is not None}
    for step in milestones.itertuples():
        if not pd.isna(step.pr_number) and int(step.pr_number) in named:
            continue
        has_pr = not pd.isna(step.pr_number)
        rows.append(
            {
                "at": step.at,
                "via": "milestone",
                "label": f"#{int(step.pr_number)}" if has_pr else f"{step.phase} {step.label}",
                "pr_repo": step.repo if has_pr else None,
                "pr_number": int(step.pr_number) if has_pr else None,
                "title": step.title,
                "delta": step.delta,
                "suspects": int(has_pr),
            }
        )
    if not rows:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(rows)[columns].sort_values("at", kind="stable").reset_index(drop=True)
