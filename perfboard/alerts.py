"""Change points of the stored series, grouped into alerts, and the alerts' triage.

`detect` runs perfboard.detect over each series' whole history (its ok values in time
order) and replaces that series' change points and noise figures in one transaction. A
change point belongs to an alert: the same project and the same versions on either side
make one alert however many series moved (a PR that slows every batch size of ERNIE is
one alert, not eleven). The alert's key is a hash of those, so it is the same key after
any re-detection or re-ingest, and the triage people set on it stays.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa

from perfboard import db, detect, settings

if TYPE_CHECKING:
    import pandas as pd  # only the type: an ingest's detection does not import pandas

STATUSES = ("new", "acknowledged", "invalid", "fixed", "wontfix")
CONFIDENCE = 0.99


def alert_key(
    project: str, before_version: str | None, after_version: str | None, after_at: datetime | None
) -> str:
    """The same change seen again has the same key: versions when both are known, else
    the day of the first point after it."""
    if before_version and after_version:
        identity = f"{project}\x1f{before_version}\x1f{after_version}"
    else:
        identity = f"{project}\x1f{after_at:%Y-%m-%d}" if after_at else f"{project}\x1f?"
    return hashlib.sha1(identity.encode()).hexdigest()[:16]


@dataclass(slots=True)
class DetectResult:
    series: int  # series examined
    change_points: int
    too_noisy: int
    latest_outliers: int  # series whose newest value is outside their noise
    rows: list[dict[str, object]]  # the change points found, for printing


_CHANGE_COLUMNS = {
    "series_id": pa.int64(),
    "alert_key": pa.string(),
    "position": pa.int64(),
    "before_version": pa.string(),
    "after_version": pa.string(),
    "before_at": pa.timestamp("us"),
    "after_at": pa.timestamp("us"),
    "before": pa.float64(),
    "after": pa.float64(),
    "change_pct": pa.float64(),
    "p_value": pa.float64(),
    "kind": pa.string(),
    "source_id": pa.int64(),
    "line": pa.int64(),
    "noisy": pa.bool_(),
    "shape": pa.string(),
    "end_position": pa.int64(),
}
_NOISE_COLUMNS = {
    "series_id": pa.int64(),
    "points": pa.int64(),
    "level": pa.float64(),
    "cv": pa.float64(),
    "min_effect_pct": pa.float64(),
    "too_noisy": pa.bool_(),
    "latest_value": pa.float64(),
    "latest_change_pct": pa.float64(),
    "latest_z": pa.float64(),
    "latest_outlier": pa.bool_(),
    "detected_at": pa.timestamp("us"),
    "min_change_pct": pa.float64(),
}


def detect_store(
    conn: duckdb.DuckDBPyConnection,
    series_ids: Iterable[int] | None = None,
    project: str | None = None,
    confidence: float = CONFIDENCE,
    rules: settings.DetectSettings | None = None,
) -> DetectResult:
    """Detect change points in the given series (default: every series, or a project's)
    and store them, replacing what an earlier detection stored for those series.

    The one set of rules of `perfboard detect` and of an ingest's own detection: every
    series is judged against its own noise, never quieter than its minimum effect
    (`rules`, default perfboard.toml's: settings.current()); a change smaller than that
    minimum is no change point; a series too noisy to alert on its own keeps its change
    points, marked noisy.
    """
    ids = None if series_ids is None else sorted({int(i) for i in series_ids})
    rules = rules if rules is not None else settings.current().detect
    # One transaction from the read to the write: on a lake, the writers' lock is held
    # throughout, so no other ingest's measurements land between what is read and what
    # is stored about them (a file store has one writer anyway).
    with db.transaction(conn) as changes:
        changes.touch(
            "change_points",
            "series_noise",
            projects=None if project is None else [project],
            series_ids=ids,
        )
        return _detect(conn, ids, project, confidence, rules)


# Below this many points a pool's start (two interpreters importing numpy: about 0.3 s)
# costs more than the second core saves; the whole 10 M store takes half the time.
PARALLEL_MIN_POINTS = 500_000


def _examine_all(
    values: np.ndarray,
    bounds: list[tuple[int, int]],
    confidence: float,
    minimums: list[float],
) -> list[detect.Examined]:
    """detect.examine of each series (values[start:end]), on every core when there is
    much to examine. Spawned, not forked: the store's DuckDB threads are not copied."""
    tasks = [(values[a:b], confidence, m) for (a, b), m in zip(bounds, minimums, strict=True)]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if values.size < PARALLEL_MIN_POINTS or (cores or 1) < 2 or len(tasks) < 2:
        return [_examine(task) for task in tasks]
    # Imported here: a small ingest's detection never gets this far (4 ms of imports).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=cores, mp_context=context) as pool:
        return list(pool.map(_examine, tasks, chunksize=max(1, len(tasks) // (8 * cores))))


def _examine(task: tuple[np.ndarray, float, float]) -> detect.Examined:
    values, confidence, min_change = task
    return detect.examine(values, confidence, min_change_pct=min_change)


def _detect(
    conn: duckdb.DuckDBPyConnection,
    ids: list[int] | None,
    project: str | None,
    confidence: float,
    rules: settings.DetectSettings,
) -> DetectResult:
    # A cursor of its own: conn may hold an unfinished result of its caller's, and
    # DuckDB's relation API refuses to run beside one. Held in a name until the rows are
    # read: DuckDB 1.4 closes a cursor that is collected while its relation still runs.
    cursor = db.cursor(conn)
    try:
        # What is per series (project, direction, metric) is read once a series, not once
        # a point: 10 M strings of each took a second of the 10 M store's detection.
        points = cursor.sql(
            """
        SELECT m.series_id, m.value, m.version, m.measured_at, m.source_id, m.line
        FROM measurements m JOIN series s USING (series_id)
        WHERE m.status = 'ok' AND isfinite(m.value)
          AND ($ids IS NULL OR list_contains($ids, m.series_id))
          AND ($project IS NULL OR s.project = $project)
        ORDER BY m.series_id, m.measured_at NULLS FIRST, m.source_id, m.line
        """,
            params={"ids": ids, "project": project},
        ).to_arrow_table()
        about = {
            series_id: (name, direction, metric)
            for series_id, name, direction, metric in cursor.execute(
                "SELECT series_id, project, direction, metric FROM series"
                " WHERE ($ids IS NULL OR list_contains($ids, series_id))"
                " AND ($project IS NULL OR project = $project)",
                {"ids": ids, "project": project},
            ).fetchall()
        }
    finally:
        cursor.close()
    now = datetime.now(UTC).replace(tzinfo=None)
    found: list[dict[str, object]] = []
    noise_rows: list[dict[str, object]] = []
    series_col = points.column("series_id").to_numpy()
    values = points.column("value").to_numpy()
    # Rows come ordered by series: each series is the run between two changes of id.
    starts = np.flatnonzero(np.diff(series_col, prepend=-1))
    columns = {name: points.column(name) for name in ("version", "measured_at", "source_id")}
    lines = points.column("line")
    bounds = list(pairwise([*starts, len(values)]))
    minimums = []
    for start, _ in bounds:
        series_id = int(series_col[start])
        name, _, metric = about[series_id]
        minimums.append(rules.min_change_for(series_id, name, metric))
    examined = _examine_all(values, bounds, confidence, minimums)
    for (start, end), min_change, seen in zip(bounds, minimums, examined, strict=True):
        series_id = int(series_col[start])
        project_name, direction, _ = about[series_id]
        figures, latest = seen.noise, seen.latest
        noise_rows.append(
            {
                "series_id": series_id,
                "points": end - start,
                "level": figures.level,
                "cv": figures.cv,
                "min_effect_pct": figures.min_effect_pct,
                "too_noisy": figures.too_noisy,
                "latest_value": latest.value,
                "latest_change_pct": latest.change_pct,
                "latest_z": latest.z,
                "latest_outlier": latest.outlier
                and not figures.too_noisy
                and abs(latest.change_pct) >= min_change,
                "detected_at": now,
                "min_change_pct": min_change,
            }
        )
        lower_is_better = direction == "lower"
        changes = [
            (cp.index, None, cp.before, cp.after, cp.change_pct, cp.p_value, "step")
            for cp in seen.change_points
        ] + [
            (d.start, d.end, d.before, d.after, d.change_pct, d.p_value, "drift")
            for d in seen.drifts
        ]
        for index, end_index, before, after, change_pct, p_value, shape in changes:
            if not abs(change_pct) >= min_change:  # below the minimum effect (or NaN)
                continue
            # A step's sides are the points around it; a drift's, the points before it
            # starts and where it has arrived.
            before_i = start + max(index - 1, 0)
            after_i = start + min(index if end_index is None else end_index, end - start - 1)
            before_version = columns["version"][before_i].as_py()
            after_version = columns["version"][after_i].as_py()
            after_at = columns["measured_at"][after_i].as_py()
            worse = change_pct > 0 if lower_is_better else change_pct < 0
            found.append(
                {
                    "series_id": series_id,
                    "alert_key": alert_key(project_name, before_version, after_version, after_at),
                    "position": index,
                    "before_version": before_version,
                    "after_version": after_version,
                    "before_at": columns["measured_at"][before_i].as_py(),
                    "after_at": after_at,
                    "before": before,
                    "after": after,
                    "change_pct": change_pct,
                    "p_value": p_value,
                    "kind": "regression" if worse else "improvement",
                    "source_id": columns["source_id"][after_i].as_py(),
                    "line": lines[after_i].as_py(),
                    "noisy": figures.too_noisy,
                    "shape": shape,
                    "end_position": end_index,
                }
            )
    _replace(conn, ids, project, found, noise_rows)
    return DetectResult(
        len(noise_rows),
        len(found),
        sum(bool(r["too_noisy"]) for r in noise_rows),
        sum(bool(r["latest_outlier"]) for r in noise_rows),
        found,
    )


def _replace(
    conn: duckdb.DuckDBPyConnection,
    ids: list[int] | None,
    project: str | None,
    found: list[dict[str, object]],
    noise_rows: list[dict[str, object]],
) -> None:
    scope = (
        "($ids IS NULL OR list_contains($ids, series_id)) AND ($project IS NULL OR series_id IN"
        " (SELECT series_id FROM series WHERE project = $project))"
    )
    for table in ("change_points", "series_noise"):
        conn.execute(f"DELETE FROM {table} WHERE {scope}", {"ids": ids, "project": project})
    for table, rows, schema in (
        ("change_points", found, _CHANGE_COLUMNS),
        ("series_noise", noise_rows, _NOISE_COLUMNS),
    ):
        if rows:
            # Read by its name (perfboard.db._reading_arrow_by_name).
            _detected = pa.Table.from_pylist(rows, schema=pa.schema(list(schema.items())))
            conn.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _detected")


def set_triage(conn: duckdb.DuckDBPyConnection, key: str, status: str, note: str, who: str) -> None:
    """Set an alert's triage, and log the change; the alert need not be detected now
    (a triage set on an alert stays when a later detection no longer finds it)."""
    set_triage_many(conn, [key], status, note, who)


def set_triage_many(
    conn: duckdb.DuckDBPyConnection, keys: list[str], status: str, note: str, who: str
) -> None:
    """One triage for several alerts at once (the Alerts page's bulk triage), in one
    transaction: all of them are set, or none."""
    if status not in STATUSES:
        raise ValueError(f"triage status must be one of {', '.join(STATUSES)}, not {status!r}")
    if not who.strip():
        raise ValueError("say who sets the triage")
    now = datetime.now(UTC).replace(tzinfo=None)
    rows = [[key, status, note or None, who.strip(), now] for key in dict.fromkeys(keys)]
    if not rows:
        return
    with db.transaction(conn) as changes:
        changes.touch("alert_triage", "alert_triage_log")
        # DELETE then INSERT, not an upsert: a DuckLake store has no keys to upsert on.
        conn.executemany("DELETE FROM alert_triage WHERE alert_key = ?", [[r[0]] for r in rows])
        for table in ("alert_triage", "alert_triage_log"):
            conn.executemany(
                f"INSERT INTO {table} (alert_key, status, note, set_by, set_at)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )


def ranked(found: pd.DataFrame) -> pd.DataFrame:
    """Alerts (queries.alerts) with what ranks them: score = |largest change| x
    confidence, and within_noise when every series of the alert is too noisy to alert on
    its own. The Alerts page sorts by it; Explain opens on the first that is not noise."""
    return found.assign(
        score=found.largest_pct.abs() * found.confidence,
        within_noise=found.noisy_series >= found.series,
    )
