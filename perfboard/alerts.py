"""Change points of the stored series, grouped into alerts, and the alerts' triage.

`detect` runs perfboard.detect over each series' whole history (its ok values in time
order; a series over 65,536 points in windows anchored at its start, perfboard.windows)
and replaces that series' change points and noise figures in one transaction. An ingest
that only appended points to a long series examines its last windows, and replaces only
what they report. A
change point belongs to an alert: the same project and the same versions on either side
make one alert however many series moved (a PR that slows every batch size of ERNIE is
one alert, not eleven). The alert's key is a hash of those, so it is the same key after
any re-detection or re-ingest, and the triage people set on it stays.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa

from perfboard import db, detect, settings, windows

if TYPE_CHECKING:
    from concurrent.futures import Executor

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
    "tail_start": pa.int64(),
    "tail_measured_at": pa.timestamp("us"),
    "tail_source_id": pa.int64(),
    "tail_line": pa.int64(),
}


def detect_store(
    conn: duckdb.DuckDBPyConnection,
    series_ids: Iterable[int] | None = None,
    project: str | None = None,
    confidence: float = CONFIDENCE,
    rules: settings.DetectSettings | None = None,
    appended: Sequence[int] = (),
    pool: Executor | None = None,
) -> DetectResult:
    """Detect change points in the given series (default: every series, or a project's)
    and store them, replacing what an earlier detection stored for those series.

    The one set of rules of `perfboard detect` and of an ingest's own detection: every
    series is judged against its own noise, never quieter than its minimum effect
    (`rules`, default perfboard.toml's: settings.current()); a change smaller than that
    minimum is no change point; a series too noisy to alert on its own keeps its change
    points, marked noisy. A series of more than windows.WINDOW points is examined in
    windows (perfboard.windows); when `appended` (the sources an ingest stored now) only
    added points after all the others since the series' last detection, only its last
    windows are examined, and the findings before them stay as stored: the same as a
    whole detection, for a fraction of its time. `pool`: processes to examine many points
    in (an ingest's, forked before its store opened); without one, they are spawned.
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
        return _detect(conn, ids, project, confidence, rules, list(appended), pool)


# Below this many points a pool's start (two interpreters importing numpy: about 0.3 s)
# costs more than the second core saves; the whole 10 M store takes half the time.
PARALLEL_MIN_POINTS = 500_000
MIN_SEGMENT = 5  # detect.examine's: no segment shorter (the seams of windows.combine)


def _examine_all(
    tasks: list[tuple[np.ndarray, float, float]], pool: Executor | None = None
) -> list[detect.Examined]:
    """detect.examine of each window (a whole series, or a window of a long one), on
    every core when there is much to examine: in `pool` when given, else in processes
    spawned, not forked, so that the store's DuckDB threads are not copied."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    size = sum(len(values) for values, _, _ in tasks)
    if size < PARALLEL_MIN_POINTS or (cores or 1) < 2 or len(tasks) < 2:
        return [_examine(task) for task in tasks]
    chunksize = max(1, len(tasks) // (8 * cores))
    if pool is not None:
        # A pool that is there already: two spawned interpreters importing the detector
        # cost 0.5 s of a 918,349-point series' 1.0 s (examined in 0.53 s here).
        return list(pool.map(_examine, tasks, chunksize=chunksize))
    # Imported here: a small ingest's detection never gets this far (4 ms of imports).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=cores, mp_context=context) as spawned:
        return list(spawned.map(_examine, tasks, chunksize=chunksize))


def _examine(task: tuple[np.ndarray, float, float]) -> detect.Examined:
    values, confidence, min_change = task
    return detect.examine(values, confidence, MIN_SEGMENT, min_change_pct=min_change)


# The order of a series' points. Detection reads each point's value and its row (DuckDB's
# rowid, which a DuckLake keeps too; _whole says why the rows hold still); the rest of a
# point (its version, time, source and line) is read afterwards for the few points a
# finding or a series' tail names (_located). Reading all of them for every point held 43
# bytes a point where these hold 16: a 1 GB log's 9.1 M-point series peaked at 1.20 GB in
# its detection, 0.39 GB of it that table.
_ORDER = "measured_at NULLS FIRST, source_id, line"
_COLUMNS = "value, rowid"
_OK = "status = 'ok' AND isfinite(value)"


@dataclass(slots=True)
class _Points:
    """A series' points as read: the values and rows of its points from position `first`
    (0, or where an append re-reads from) to its end."""

    series_id: int
    values: np.ndarray
    rowids: np.ndarray
    first: int = 0
    keep_from: int = 0  # findings before this stay as stored (an append)
    earlier_drifts: list[tuple[int, int]] = field(default_factory=list)

    @property
    def n(self) -> int:  # the series' points
        return self.first + len(self.values)

    def rowid(self, position: int) -> int:  # a position in the series -> its row
        if position < self.first:  # not read (an append's tail): never a row wrapped round
            raise IndexError(f"position {position} is before the points read ({self.first})")
        return int(self.rowids[position - self.first])


# What detection stores of a point beside its value (_located), by its rowid.
_Located = dict[int, tuple[str | None, datetime | None, int, int]]


def _detect(
    conn: duckdb.DuckDBPyConnection,
    ids: list[int] | None,
    project: str | None,
    confidence: float,
    rules: settings.DetectSettings,
    appended: list[int],
    pool: Executor | None,
) -> DetectResult:
    # A cursor of its own: conn may hold an unfinished result of its caller's, and
    # DuckDB's relation API refuses to run beside one. Held in a name until the rows are
    # read: DuckDB 1.4 closes a cursor that is collected while its relation still runs.
    cursor = db.cursor(conn)
    try:
        # What is per series (project, direction, metric) is read once a series, not once
        # a point: 10 M strings of each took a second of the 10 M store's detection.
        about = {
            series_id: (name, direction, metric)
            for series_id, name, direction, metric in cursor.execute(
                "SELECT series_id, project, direction, metric FROM series"
                " WHERE ($ids IS NULL OR list_contains($ids, series_id))"
                " AND ($project IS NULL OR project = $project)",
                {"ids": ids, "project": project},
            ).fetchall()
        }
        minimums = {
            series_id: rules.min_change_for(series_id, name, metric)
            for series_id, (name, _, metric) in about.items()
        }
        tails = _appended_tails(cursor, ids, appended, minimums) if ids and appended else []
        whole_ids = None if ids is None else sorted(set(ids) - {t.series_id for t in tails})
        series = tails + (_whole(cursor, whole_ids, project) if whole_ids != [] else [])
        stored = _stored_before(cursor, tails)
    finally:
        cursor.close()
    now = datetime.now(UTC).replace(tzinfo=None)
    spans = {s.series_id: _spans_of(s) for s in series}
    tasks = []
    for s in series:
        minimum = minimums[s.series_id]
        for span in spans[s.series_id]:
            window = s.values[span.start - s.first : span.end - s.first]
            tasks.append((window, confidence, minimum))
    examined = iter(_examine_all(tasks, pool))
    findings = []
    for s in series:
        windows_of = spans[s.series_id]
        seen = [next(examined) for _ in windows_of]
        min_change = minimums[s.series_id]
        kept = windows.combine(
            windows_of, seen, min_change, MIN_SEGMENT, s.earlier_drifts, s.keep_from
        )
        findings.append((s, seen[-1], kept))
    located = _located(conn, [row for s, _, kept in findings for row in _rows_named(s, kept)])
    found: list[dict[str, object]] = []
    noise_rows: list[dict[str, object]] = []
    for s, last, kept in findings:
        min_change = minimums[s.series_id]
        project_name, direction, _ = about[s.series_id]
        noise_rows.append(_noise_row(s, last, min_change, now, located))
        found.extend(_change_row(s, f, project_name, direction == "lower", located) for f in kept)
    _replace(conn, ids if not tails else whole_ids, project, tails, found, noise_rows)
    return DetectResult(
        len(noise_rows),
        len(found) + stored,
        sum(bool(r["too_noisy"]) for r in noise_rows),
        sum(bool(r["latest_outlier"]) for r in noise_rows),
        found,
    )


def _whole(
    cursor: duckdb.DuckDBPyConnection, ids: list[int] | None, project: str | None
) -> list[_Points]:
    """Every point of these series (or of every series, or a project's), in order."""
    params = {"ids": ids, "project": project}
    scope = f"""
        WHERE {_OK} AND ($ids IS NULL OR list_contains($ids, m.series_id))
          AND ($project IS NULL OR m.series_id IN
               (SELECT series_id FROM series WHERE project = $project))"""
    # Each series' count, then the points of all in series order. The two (and _located
    # after) are statements of a cursor, each its own snapshot; they agree because no one
    # else writes meanwhile: a file store has one writer, and on a lake detect_store
    # holds the writers' lock (and a lake keeps a row's rowid when it moves between files).
    counts = cursor.execute(
        f"SELECT series_id, count(*) FROM measurements m {scope}"
        " GROUP BY series_id ORDER BY series_id",
        params,
    ).fetchall()
    # Straight into numpy: by way of an Arrow table the 9.1 M points peaked 50 MB higher.
    read = cursor.sql(
        f"SELECT {_COLUMNS} FROM measurements m {scope} ORDER BY m.series_id, {_ORDER}",
        params=params,
    ).fetchnumpy()
    values, rowids = read["value"], read["rowid"]
    points, start = [], 0
    for series_id, count in counts:
        end = start + count
        points.append(_Points(series_id, values[start:end], rowids[start:end]))
        start = end
    return points


def _spans_of(points: _Points) -> list[windows.Span]:
    """The windows of a series to examine: all of them, or on an append those from
    where it re-read."""
    return [span for span in windows.spans(points.n) if span.start >= points.first]


def _appended_tails(
    cursor: duckdb.DuckDBPyConnection,
    ids: list[int],
    appended: list[int],
    minimums: dict[int, float],
) -> list[_Points]:
    """The long series to which the `appended` sources only added points, after all of
    their others, since their last detection: each with its points from where its last
    windows start (series_noise's tail), read without sorting the whole history.

    Any other change gives the series a whole detection: a point of another source
    gone, added or stored again since (the count, and their ingested_at), a new point
    among the old ones, another minimum effect."""
    known = cursor.execute(
        "SELECT series_id, points, tail_start, tail_measured_at, tail_source_id, tail_line,"
        " detected_at, min_change_pct FROM series_noise"
        " WHERE list_contains($ids, series_id) AND tail_start IS NOT NULL AND points > $window",
        {"ids": ids, "window": windows.WINDOW},
    ).fetchall()
    known = [row for row in known if row[7] == minimums.get(row[0])]
    if not known:
        return []
    candidates = [row[0] for row in known]
    # Counted apart, each a filter DuckDB pushes into its scan: one count with a FILTER
    # clause took 11 ms over 918,350 points, these two 3 ms.
    totals = dict(
        cursor.execute(
            f"SELECT series_id, count(*) FROM measurements"
            f" WHERE list_contains($ids, series_id) AND {_OK} GROUP BY series_id",
            {"ids": candidates},
        ).fetchall()
    )
    news = dict(
        cursor.execute(
            f"SELECT series_id, count(*) FROM measurements WHERE list_contains($ids, series_id)"
            f" AND list_contains($new, source_id) AND {_OK} GROUP BY series_id",
            {"ids": candidates, "new": appended},
        ).fetchall()
    )
    # Sources other than these stored (or emptied) after a series' detection: its points
    # may have changed since without a detection (an ingest run with --no-detect).
    late_sources = [
        source_id
        for (source_id,) in cursor.execute(
            "SELECT source_id FROM sources WHERE ingested_at > $oldest"
            " AND NOT list_contains($new, source_id)",
            {"oldest": min(row[6] for row in known), "new": appended},
        ).fetchall()
    ]
    late = (
        dict(
            cursor.execute(
                "SELECT m.series_id, max(s.ingested_at) FROM measurements m"
                " JOIN sources s USING (source_id) WHERE list_contains($late, m.source_id)"
                " AND list_contains($ids, m.series_id) GROUP BY m.series_id",
                {"late": late_sources, "ids": candidates},
            ).fetchall()
        )
        if late_sources
        else {}
    )
    tails = []
    for series_id, points, start, at, source_id, line, detected_at, _ in known:
        total, new = totals.get(series_id, 0), news.get(series_id, 0)
        if not new or total - new != points or late.get(series_id, detected_at) > detected_at:
            continue
        read = cursor.sql(
            f"""
            SELECT {_COLUMNS}, source_id FROM measurements m
            WHERE m.series_id = $id AND {_OK}
              AND (coalesce(measured_at, '-infinity'::TIMESTAMP)
                     > coalesce($at::TIMESTAMP, '-infinity'::TIMESTAMP)
                   OR (measured_at IS NOT DISTINCT FROM $at::TIMESTAMP
                       AND (source_id > $source OR (source_id = $source AND line >= $line))))
            ORDER BY {_ORDER}
            """,
            params={"id": series_id, "at": at, "source": source_id, "line": line},
        ).fetchnumpy()
        # The points from the tail on are the old ones, then all the new ones: else a new
        # point sorts among the old (a document measured earlier), and all are examined.
        is_new = np.isin(read["source_id"], appended)
        count = len(is_new)
        old = count - new
        if count != total - start or is_new[:old].any() or not is_new[old:].all():
            continue
        keep_from = windows.kept_before(points, MIN_SEGMENT)
        tails.append(_Points(series_id, read["value"], read["rowid"], start, keep_from))
    return tails


def _stored_before(cursor: duckdb.DuckDBPyConnection, tails: list[_Points]) -> int:
    """The change points an append keeps as stored (before each series' keep_from); the
    drifts among them, which a later window's drift must not overlap."""
    kept = 0
    for tail in tails:
        rows = cursor.execute(
            "SELECT position, end_position, shape FROM change_points"
            " WHERE series_id = ? AND position < ?",
            [tail.series_id, tail.keep_from],
        ).fetchall()
        kept += len(rows)
        tail.earlier_drifts = [(p, e) for p, e, shape in rows if shape == "drift"]
    return kept


def _rows_named(s: _Points, kept: list[windows.Finding]) -> Iterator[int]:
    """The rows _noise_row and _change_row read of a series: its tail's, and each
    finding's sides."""
    if (tail := _tail_start(s)) is not None:
        yield s.rowid(tail)
    for f in kept:
        yield from (s.rowid(p) for p in _sides(s, f))


def _tail_start(s: _Points) -> int | None:
    """Where an append to a long series re-reads from; None for a series of one window."""
    return windows.reread_from(s.n) if s.n > windows.WINDOW else None


def _sides(s: _Points, f: windows.Finding) -> tuple[int, int]:
    """The positions of a finding's sides: a step's are the points around it; a drift's,
    the point before it starts and where it has arrived."""
    return max(f.index - 1, 0), min(f.index if f.end is None else f.end, s.n - 1)


def _located(conn: duckdb.DuckDBPyConnection, rowids: list[int]) -> _Located:
    """The version, time, source and line of these rows, in one scan."""
    if not rowids:
        return {}
    with closing(db.cursor(conn)) as cursor:
        rows = cursor.execute(
            "SELECT rowid, version, measured_at, source_id, line FROM measurements"
            " WHERE rowid IN (SELECT unnest($rowids))",
            {"rowids": sorted(set(rowids))},
        ).fetchall()
    return {rowid: (version, at, source_id, line) for rowid, version, at, source_id, line in rows}


def _noise_row(
    s: _Points, last: detect.Examined, min_change: float, now: datetime, located: _Located
) -> dict[str, object]:
    """series_noise of a series: the last window's noise and newest-value check, and
    where an append to it re-reads from."""
    figures, latest = last.noise, last.latest
    row: dict[str, object] = {
        "series_id": s.series_id,
        "points": s.n,
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
    if (tail := _tail_start(s)) is not None:
        _, at, source_id, line = located[s.rowid(tail)]
        row.update(tail_start=tail, tail_measured_at=at, tail_source_id=source_id, tail_line=line)
    return row


def _change_row(
    s: _Points, f: windows.Finding, project_name: str, lower_is_better: bool, located: _Located
) -> dict[str, object]:
    """change_points' row of a finding, its sides as _sides says."""
    before, after = (located[s.rowid(p)] for p in _sides(s, f))
    (before_version, before_at, _, _), (after_version, after_at, source_id, line) = before, after
    worse = f.change_pct > 0 if lower_is_better else f.change_pct < 0
    return {
        "series_id": s.series_id,
        "alert_key": alert_key(project_name, before_version, after_version, after_at),
        "position": f.index,
        "before_version": before_version,
        "after_version": after_version,
        "before_at": before_at,
        "after_at": after_at,
        "before": f.before,
        "after": f.after,
        "change_pct": f.change_pct,
        "p_value": f.p_value,
        "kind": "regression" if worse else "improvement",
        "source_id": source_id,
        "line": line,
        "noisy": f.noisy,
        "shape": f.shape,
        "end_position": f.end,
    }


def _replace(
    conn: duckdb.DuckDBPyConnection,
    ids: list[int] | None,
    project: str | None,
    tails: list[_Points],
    found: list[dict[str, object]],
    noise_rows: list[dict[str, object]],
) -> None:
    """Store the detection: of the series examined whole (`ids`, or all, or a project's)
    everything is replaced; of an appended tail, what lies from its keep_from on."""
    scope = (
        "($ids IS NULL OR list_contains($ids, series_id)) AND ($project IS NULL OR series_id IN"
        " (SELECT series_id FROM series WHERE project = $project))"
    )
    if ids != []:
        for table in ("change_points", "series_noise"):
            conn.execute(f"DELETE FROM {table} WHERE {scope}", {"ids": ids, "project": project})
    for tail in tails:
        conn.execute(
            "DELETE FROM change_points WHERE series_id = ? AND position >= ?",
            [tail.series_id, tail.keep_from],
        )
        conn.execute("DELETE FROM series_noise WHERE series_id = ?", [tail.series_id])
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
