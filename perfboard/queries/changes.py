"""Change points grouped into alerts, their suspects, and newest values outside their noise."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd

from perfboard.queries.labels import SERIES_LABEL as _SERIES_LABEL

# The value of a change point's first measurement after the change (its source_id and
# line say where it was read): the number its provenance link marks.
FIRST_AFTER = """(
    SELECT arg_min(m.value, m.measured_at) FROM measurements m
    WHERE m.series_id = cp.series_id AND m.source_id = cp.source_id AND m.line = cp.line
      AND m.status = 'ok')"""


def alerts(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per alert: the change points that share a project and the versions on
    either side, with the largest change, how many series moved, and the triage; and
    prs_between, how many PRs merged or milestones with a PR fall between its two sides
    (by date: what Explain has to go on; suspects_between reads the walked history too)."""
    return conn.execute(
        f"""
        WITH grouped AS (
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
               -- a change point of a series too noisy to alert on its own counts ten
               -- times weaker (migration 0008)
               1 - min(CASE WHEN coalesce(cp.noisy, false) THEN least(1.0, 10 * cp.p_value)
                            ELSE cp.p_value END) AS confidence,
               count(*) FILTER (WHERE cp.noisy) AS noisy_series,
               count(*) FILTER (WHERE cp.shape = 'drift') AS drifts,
               coalesce(any_value(t.status), 'new') AS status, any_value(t.note) AS note,
               any_value(t.set_by) AS set_by, any_value(t.set_at) AS set_at
        FROM change_points cp
        JOIN series s USING (series_id)
        LEFT JOIN alert_triage t USING (alert_key)
        GROUP BY cp.alert_key
        )
        SELECT g.*,
               (SELECT count(*) FROM pull_requests k
                WHERE k.merged_at > g.before_at AND k.merged_at <= g.after_at)
             + (SELECT count(*) FROM milestones ms
                WHERE ms.pr_number IS NOT NULL AND ms.date > g.before_at::DATE
                  AND ms.date <= g.after_at::DATE) AS prs_between
        FROM grouped g
        ORDER BY after_at DESC NULLS LAST, abs(largest_pct) DESC
        """
    ).df()


def alert_changes(conn: duckdb.DuckDBPyConnection, alert_key: str) -> pd.DataFrame:
    """The change points of one alert, largest first, each with its series and the source
    (source_id, its uri and url) and line of its first point after the change, and that
    point's value (first_after)."""
    return conn.execute(
        f"""
        SELECT cp.series_id, {_SERIES_LABEL} AS series, s.metric, s.unit, cp.before,
               cp.after, cp.change_pct, cp.after - cp.before AS change_abs, cp.p_value,
               cp.kind, coalesce(cp.shape, 'step') AS shape, cp.position, cp.end_position,
               coalesce(cp.noisy, false) AS noisy, cp.before_version,
               cp.after_version, cp.before_at, cp.after_at,
               src.uri AS source, src.url AS source_url, cp.source_id, cp.line,
               {FIRST_AFTER} AS first_after
        FROM change_points cp
        JOIN series s USING (series_id)
        LEFT JOIN sources src USING (source_id)
        WHERE cp.alert_key = $key
        ORDER BY abs(cp.change_pct) DESC
        """,
        {"key": alert_key},
    ).df()


def series_changes(conn: duckdb.DuckDBPyConnection, series_ids: tuple[int, ...]) -> pd.DataFrame:
    """The change points of these series for a chart: a step at after_at (its first point
    after), a drift from before_at (the last point before its ramp) to after_at (the
    first at the level it reached)."""
    return conn.execute(
        """
        SELECT cp.series_id, coalesce(cp.shape, 'step') AS shape, cp.kind, cp.change_pct,
               cp.before_at, cp.after_at, coalesce(cp.noisy, false) AS noisy, cp.alert_key
        FROM change_points cp
        WHERE list_contains($ids, cp.series_id) AND cp.after_at IS NOT NULL
        ORDER BY cp.after_at
        """,
        {"ids": list(series_ids)},
    ).df()


def alert_suspects(conn: duckdb.DuckDBPyConnection, alert_key: str) -> pd.DataFrame:
    """The PRs that landed between the two sides of an alert (see suspects_between)."""
    sides = conn.execute(
        "SELECT any_value(before_version), any_value(after_version), min(before_at),"
        " min(after_at) FROM change_points WHERE alert_key = ?",
        [alert_key],
    ).fetchall()[0]
    return suspects_between(conn, *sides)


def suspects_between(
    conn: duckdb.DuckDBPyConnection,
    before_version: str | None,
    after_version: str | None,
    before_at: datetime | None,
    after_at: datetime | None,
) -> pd.DataFrame:
    """The PRs that landed between two measurements: from the walked history when both
    versions are commits of it (mainline commits after the one before, up to the one
    after), else the PRs merged and the milestones recorded between the two times."""
    return conn.execute(
        """
        WITH a AS (
            SELECT lower($v0) AS v0, lower($v1) AS v1,
                   $t0::TIMESTAMP AS t0, $t1::TIMESTAMP AS t1
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
        {"v0": before_version, "v1": after_version, "t0": before_at, "t1": after_at},
    ).df()


def latest_outliers(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Series whose newest value is outside their noise: not a change point yet (that
    takes a few points after it), worth a look before the next run; with the source_id
    and line that value was read from (the series' newest ok measurement of it)."""
    return conn.execute(
        f"""
        WITH flagged AS (
            SELECT n.series_id, s.project, {_SERIES_LABEL} AS series, s.unit, s.direction,
                   n.latest_value, n.level, n.latest_change_pct, n.latest_z, n.cv
            FROM series_noise n JOIN series s USING (series_id)
            WHERE n.latest_outlier
        ),
        read AS (
            SELECT f.series_id,
                   arg_max(struct_pack(source_id := m.source_id, line := m.line),
                           (m.measured_at, m.source_id, m.line)) AS at
            FROM flagged f
            JOIN measurements m ON m.series_id = f.series_id AND m.status = 'ok'
                               AND m.value = f.latest_value
            GROUP BY f.series_id
        )
        SELECT f.*, r.at.source_id AS source_id, r.at.line AS line
        FROM flagged f LEFT JOIN read r USING (series_id)
        ORDER BY abs(f.latest_z) DESC
        """
    ).df()
