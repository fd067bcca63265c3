"""Ops: the op benchmark's results, the latest of each series, and the history of
Paddle's ratio to another framework by Paddle commit."""

from __future__ import annotations

import duckdb
import pandas as pd

from perfboard.queries import summary

OP_PROJECT = "op-benchmark"
OP_PREFIX = "op/"


def op_results(conn: duckdb.DuckDBPyConnection, metrics: tuple[str, ...]) -> pd.DataFrame:
    """The latest ok result of every op series (project op-benchmark, or a benchmark
    "op/...") of these metrics (perfboard.ops.METRICS: total_time, gpu_time and the
    accuracy check's max_diff; passed in, since perfboard.ops imports what imports this
    package): its value, Paddle commit (version), time, the accuracy check's own verdict
    (consistent, from stats) and the source document. From the per-series summary
    (queries.summary), as latest_per_series.

    Columns: series_id, project, benchmark, task, metric, unit, direction, framework,
    device, params, testbed, points, value, version, measured_at, consistent, source,
    source_url, source_id, line. Ordered by op, direction, device, params, framework, metric.
    """
    return conn.execute(
        f"""
        WITH ops AS (
            SELECT series_id FROM series
            WHERE (project = $project OR starts_with(benchmark, $prefix))
              AND list_contains($metrics, metric)
        ),
        latest AS (
            SELECT series_id, ok_points AS points, latest_ok AS m
            FROM {summary.source(conn)}
            WHERE ok_points > 0 AND series_id IN (SELECT series_id FROM ops)
        )
        SELECT s.series_id, s.project, s.benchmark, s.task, s.metric, s.unit, s.direction,
               s.framework, s.device, s.params::VARCHAR AS params,
               s.testbed::VARCHAR AS testbed, l.points, l.m.value AS value,
               l.m.version AS version, l.m.measured_at AS measured_at,
               l.m.consistent AS consistent,
               src.uri AS source, src.url AS source_url, l.m.source_id AS source_id,
               l.m.line AS line
        FROM latest l
        JOIN series s USING (series_id)
        LEFT JOIN sources src ON src.source_id = l.m.source_id
        ORDER BY s.benchmark, s.task, s.device, s.params::VARCHAR, s.framework, s.metric
        """,
        {"project": OP_PROJECT, "prefix": OP_PREFIX, "metrics": list(metrics)},
    ).df()


def op_history(
    conn: duckdb.DuckDBPyConnection,
    pairs: tuple[str, ...],
    ours: tuple[int, ...],
    theirs: tuple[int, ...],
) -> pd.DataFrame:
    """Each pair's ratio at every Paddle commit: Paddle's value there (the median of its
    values at that version; a point without a version stands alone) against the other
    framework's value at the same version when it recorded one, else its last value
    measured at or before it (an ASOF join). This is compare.ratio_over_time's alignment
    for Paddle's points; the competitor's own points between two commits are not points
    of the history (its x axis is Paddle's commits). A commit before the competitor's
    first value has no ratio and is left out.

    `pairs`, `ours`, `theirs`: the pairs' labels and the series ids of their two sides
    (ops.history_pairs), element by element. Columns: pair, measured_at, version,
    ours_value, theirs_value, ratio (ours / theirs), matched (version or time),
    source_url (of Paddle's value). Oldest first within each pair.
    """
    columns = [
        "pair",
        "measured_at",
        "version",
        "ours_value",
        "theirs_value",
        "ratio",
        "matched",
        "source_url",
    ]
    if not pairs:
        return pd.DataFrame(columns=columns)
    return conn.execute(
        """
        WITH pairs AS (
            SELECT unnest($pairs) AS pair, unnest($ours) AS ours_id,
                   unnest($theirs) AS theirs_id
        ),
        ours AS (
            SELECT p.pair, m.version, max(m.measured_at) AS measured_at,
                   median(m.value) AS value,
                   arg_max(m.source_id, (m.measured_at, m.line)) AS source_id
            FROM measurements m JOIN pairs p ON m.series_id = p.ours_id
            WHERE m.status = 'ok' AND m.measured_at IS NOT NULL
            GROUP BY p.pair, m.version, CASE WHEN m.version IS NULL THEN m.measured_at END
        ),
        theirs AS (
            SELECT p.pair, m.version, m.measured_at, m.value
            FROM measurements m JOIN pairs p ON m.series_id = p.theirs_id
            WHERE m.status = 'ok' AND m.measured_at IS NOT NULL
        ),
        theirs_by_version AS (
            SELECT pair, version, median(value) AS value
            FROM theirs WHERE version IS NOT NULL
            GROUP BY pair, version
        ),
        aligned AS (
            SELECT o.pair, o.measured_at, o.version, o.value AS ours_value, o.source_id,
                   coalesce(v.value, t.value) AS theirs_value,
                   CASE WHEN v.value IS NOT NULL THEN 'version' ELSE 'time' END AS matched
            FROM ours o
            ASOF LEFT JOIN theirs t ON o.pair = t.pair AND o.measured_at >= t.measured_at
            LEFT JOIN theirs_by_version v ON v.pair = o.pair AND v.version = o.version
        )
        SELECT a.pair, a.measured_at, a.version, a.ours_value, a.theirs_value,
               CASE WHEN a.theirs_value > 0 THEN a.ours_value / a.theirs_value END AS ratio,
               a.matched, src.url AS source_url
        FROM aligned a
        LEFT JOIN sources src ON src.source_id = a.source_id
        WHERE a.theirs_value IS NOT NULL
        ORDER BY a.pair, a.measured_at
        """,
        {"pairs": list(pairs), "ours": list(ours), "theirs": list(theirs)},
    ).df()
