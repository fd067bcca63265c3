"""The store as a whole: totals, projects, sources and what could not be read, the series
catalog, the latest value of each series, the headline series."""

from __future__ import annotations

import duckdb
import pandas as pd

from perfboard.queries import summary
from perfboard.queries.labels import PARAMS_ORDER, SERIES_LABEL


def counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    row = conn.execute(
        "SELECT (SELECT count(DISTINCT project) FROM series),"
        " (SELECT count(*) FROM series), (SELECT count(*) FROM measurements),"
        " (SELECT count(*) FROM sources), (SELECT count(*) FROM phases),"
        " (SELECT count(*) FROM ingest_errors WHERE severity = 'error'),"
        " (SELECT count(*) FROM sources WHERE status = 'unrecognised')"
    ).fetchone()
    names = ("projects", "series", "measurements", "sources", "phases", "errors", "unrecognised")
    return dict(zip(names, row, strict=True))


def projects(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return conn.execute(
        "SELECT s.project, count(*) AS series, sum(m.points)::BIGINT AS measurements,"
        " count(DISTINCT s.benchmark) AS benchmarks, min(m.first) AS first,"
        f" max(m.last) AS last FROM series s JOIN {summary.source(conn)} m USING (series_id)"
        " GROUP BY s.project ORDER BY s.project"
    ).df()


def latest_per_series(
    conn: duckdb.DuckDBPyConnection, project: str | None = None, limit: int = 500
) -> pd.DataFrame:
    """The newest measurement of each series (by time, then by order of ingest), with
    its label (SERIES_LABEL); numeric params in the order of their numbers.

    From the per-series summary (queries.summary): in the dashboard, a few ms after an
    ingest where the aggregate over every measurement took 0.3-1 s on 10 M.
    """
    return conn.execute(
        f"""
        WITH latest AS (SELECT series_id, points, latest AS m FROM {summary.source(conn)})
        SELECT s.project, {SERIES_LABEL} AS series, s.benchmark, s.task, s.metric,
               s.framework, s.device, s.params::VARCHAR AS params, s.unit, s.direction,
               l.m.value AS latest, l.m.status AS status, l.m.version AS version,
               l.m.measured_at AS measured_at, l.points,
               src.uri AS source, src.url AS source_url, l.m.line AS line,
               l.m.source_id AS source_id
        FROM latest l
        JOIN series s USING (series_id)
        JOIN sources src ON src.source_id = l.m.source_id
        WHERE $project IS NULL OR s.project = $project
        ORDER BY s.project, s.benchmark, s.metric, s.framework, s.device, {PARAMS_ORDER}
        LIMIT $limit
        """,
        {"project": project, "limit": limit},
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
    """Every series with the dimensions a page filters on, its label (SERIES_LABEL), how
    many points it has, and its noise as the last detection measured it (its usual level
    noise_level, cv, smallest step it can show, too noisy)."""
    return conn.execute(
        f"""
        WITH points AS (
            SELECT series_id, points, ok_points, first, last FROM {summary.source(conn)}
        )
        SELECT s.series_id, s.project, s.benchmark, s.task, s.metric, s.unit, s.direction,
               s.framework, s.device,
               s.params->>'precision' AS precision,
               s.params->>'batch_size' AS batch_size,
               s.params->>'seq_len' AS seq_len,
               s.params->>'threads' AS threads,
               s.params->>'stat' AS stat,
               s.params::VARCHAR AS params, s.testbed::VARCHAR AS testbed,
               {SERIES_LABEL} AS label,
               coalesce(p.points, 0) AS points, coalesce(p.ok_points, 0) AS ok_points,
               p.first, p.last, n.level AS noise_level, n.cv, n.min_effect_pct,
               n.too_noisy
        FROM series s LEFT JOIN points p USING (series_id)
        LEFT JOIN series_noise n USING (series_id)
        ORDER BY s.project, s.benchmark, s.metric, s.framework, s.device, {PARAMS_ORDER},
                 s.series_id
        """
    ).df()


def source_measurements(
    conn: duckdb.DuckDBPyConnection, source_id: int, line: int | None = None, limit: int = 1000
) -> pd.DataFrame:
    """What one document gave, with the line and raw text of each value (provenance) and
    the series it is a value of (SERIES_LABEL, and its series_id)."""
    return conn.execute(
        f"SELECT m.line, m.raw, m.value, s.unit, m.status, {SERIES_LABEL} AS series,"
        " m.version, m.measured_at, m.samples, m.run, m.series_id"
        " FROM measurements m JOIN series s USING (series_id)"
        " WHERE m.source_id = $source AND ($line IS NULL OR m.line = $line)"
        " ORDER BY m.line, s.metric LIMIT $limit",
        {"source": source_id, "line": line, "limit": limit},
    ).df()


def line_values(conn: duckdb.DuckDBPyConnection, source_id: int, line: int) -> pd.DataFrame:
    """The document a line is of (uri, url, size), and each value read on that line: its
    series (SERIES_LABEL), value, unit, status and raw text. One row with no value when
    nothing was read there."""
    return conn.execute(
        f"SELECT src.uri, src.url, src.size_bytes, src.status AS source_status,"
        f" m.series_id, m.value, s.unit, m.status, {SERIES_LABEL} AS series, m.raw"
        " FROM sources src"
        " LEFT JOIN measurements m ON m.source_id = src.source_id AND m.line = $line"
        " LEFT JOIN series s USING (series_id)"
        " WHERE src.source_id = $source ORDER BY s.metric",
        {"source": source_id, "line": line},
    ).df()


def source_text(conn: duckdb.DuckDBPyConnection, source_id: int) -> str | None:
    """The text a document was read as, when it was small enough to be kept."""
    row = conn.execute("SELECT text FROM source_texts WHERE source_id = ?", [source_id]).fetchone()
    return None if row is None else row[0]


def source_errors(conn: duckdb.DuckDBPyConnection, uri: str) -> pd.DataFrame:
    return conn.execute(
        "SELECT line, parser, severity, reason, raw FROM ingest_errors"
        " WHERE source_uri = ? ORDER BY line",
        [uri],
    ).df()


def headline_series(conn: duckdb.DuckDBPyConnection, per_project: int = 3) -> pd.DataFrame:
    """Each project's most-measured series (with its label), with latest, week-ago and
    first values, and its noise as the last detection measured it (cv).

    "A week ago" is the last value at least 7 days before the series' latest one, so a
    series measured nightly and one measured monthly both compare with their own past.
    """
    return conn.execute(
        f"""
        WITH counts AS (
            SELECT series_id, ok_points AS points, ok_last AS last
            FROM {summary.source(conn)} WHERE ok_points > 0
        ),
        ranked AS (
            SELECT s.*, c.points, c.last,
                   row_number() OVER (PARTITION BY s.project
                                      ORDER BY c.points DESC, c.last DESC, s.series_id) AS r
            FROM series s JOIN counts c USING (series_id)
        ),
        -- Labelled here, once a series, not once a measurement below.
        chosen AS (SELECT *, {SERIES_LABEL} AS label FROM ranked s WHERE r <= $per_project)
        SELECT s.series_id, s.project, s.label AS series, s.benchmark, s.metric,
               s.unit, s.direction, s.framework, s.device, s.params::VARCHAR AS params,
               s.points, s.last,
               arg_max(m.value, m.measured_at) AS latest,
               arg_max(m.value, m.measured_at)
                   FILTER (WHERE m.measured_at <= s.last - INTERVAL 7 DAY) AS week_ago,
               arg_min(m.value, m.measured_at) AS first,
               any_value(n.cv) AS cv
        FROM chosen s JOIN measurements m USING (series_id)
        LEFT JOIN series_noise n USING (series_id)
        WHERE m.status = 'ok'
        GROUP BY ALL
        ORDER BY s.project, s.points DESC, s.last DESC, s.series_id  -- as ranked: no ties
        """,
        {"per_project": per_project},
    ).df()
