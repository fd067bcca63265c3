"""The weekly report: what one week [start, end) changed."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd

from perfboard.queries import summary
from perfboard.queries.labels import MILESTONE_STEPS
from perfboard.queries.labels import SERIES_LABEL as _SERIES_LABEL


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
            SELECT s.*, c.points, {_SERIES_LABEL} AS label,  -- once a series, not a point
                   row_number() OVER (PARTITION BY s.project
                                      ORDER BY c.points DESC, s.series_id) AS r
            FROM series s JOIN counts c USING (series_id)
            WHERE $project IS NULL OR s.project = $project
        )
        SELECT s.series_id, s.project, s.label AS series, s.unit, s.direction,
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
    merged that week, or opened that week when GitHub's merge time is not known; with a
    project, its milestones' PRs and the PRs whose page is one of its documents."""
    return conn.execute(
        f"""
        WITH steps AS ({MILESTONE_STEPS}),
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
            -- a project's PRs: those a document of the project is the page of (its
            -- description, ingested with the project's name)
            WHERE ($project IS NULL OR EXISTS (
                      SELECT 1 FROM sources src WHERE src.project = $project AND src.url = k.url))
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
        SELECT s.project, {_SERIES_LABEL} AS series, last.last_measured
        FROM (  -- each series' last point first: the label is then built once a series
            SELECT series_id, max(measured_at) AS last_measured FROM measurements
            WHERE measured_at < $end
            GROUP BY series_id
            HAVING max(measured_at) < $start
               AND max(measured_at) >= $start - to_days($days::INTEGER)
        ) last JOIN series s USING (series_id)
        ORDER BY last_measured DESC, series
        """,
        {"start": start, "end": end, "days": stale_days},
    ).df()
    return errors, stale


def report_weeks(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The Mondays of the weeks something happened in (a measurement, a milestone, a PR
    merged or opened), newest first: the weeks a report has something to say about.

    `repeated`: the week holds the newest point of a series measured more than once, a
    week in which a series could have moved (perfboard.report.default_week)."""
    return conn.execute(
        f"""
        WITH weeks AS (
            SELECT DISTINCT date_trunc('week', happened)::DATE AS monday FROM (
                SELECT DISTINCT measured_at AS happened FROM measurements
                UNION ALL SELECT date FROM milestones
                UNION ALL SELECT coalesce(merged_at, created_at) FROM pull_requests
            ) WHERE happened IS NOT NULL
        ), repeated AS (
            SELECT DISTINCT date_trunc('week', last)::DATE AS monday
            FROM {summary.source(conn)} WHERE points >= 2 AND last IS NOT NULL
        )
        SELECT w.monday, r.monday IS NOT NULL AS repeated
        FROM weeks w LEFT JOIN repeated r USING (monday)
        ORDER BY w.monday DESC
        """
    ).df()
