"""Store what was found in one document: one transaction, all or nothing.

The same content twice changes nothing; a changed document replaces its own rows; a
document whose content is already stored under another name is a duplicate run and is
not stored twice; a document that fails leaves the database as it was and leaves an
ingest error behind. Rows go in through Arrow tables, never row by row.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Any, Literal

import duckdb
import numpy as np
import pyarrow as pa

from ingest.columns import MeasurementBlock
from ingest.registry import READER_VERSION
from ingest.runs import Run
from perfboard import db
from perfboard.model import (
    SERIES_IDENTITY,
    DocMeta,
    Found,
    Measurement,
    Problem,
    canonical_json,
    series_key,
)

Outcome = Literal[
    "added",
    "replaced",
    "unchanged",
    "duplicate",
    "failed",
    "unrecognised",  # stored, holding nothing a parser knows (and a problem that says so)
    "emptied",  # nothing but white space now: its earlier rows removed
    "empty",  # talk with nothing in it, never stored
]

SERIES_COLUMNS = SERIES_IDENTITY


@dataclass(slots=True)
class SourceInfo:
    """A document as a source: its identity, content hash and how it was read."""

    meta: DocMeta
    content_hash: str
    kind: str
    size_bytes: int
    encoding: str = "utf-8"
    n_lines: int | None = None
    # The text as read, kept for provenance when the document is small (source_texts).
    text: str | None = None


@dataclass(slots=True)
class SaveResult:
    uri: str
    outcome: Outcome
    measurements: int = 0  # stored now (added or replacing)
    previous: int = 0  # what the source held before (replaced / unchanged)
    problems: int = 0
    note: str = ""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a document's records are made and stored.

    A document's records (measurements, profile events and the dicts in them) are
    acyclic: reading one frees nothing the collector could find (none in a 20 MB modern
    log, after its first imports). But every object made counts towards a collection, and
    each full one walks every record made so far: 8 % of the CPU of a 20 MB modern log's
    ingest went there. Off, the records are freed by their counts as before; the
    collector's state is restored after, a nested pause leaves it alone.

    Turned on again, the collector would walk all the objects made meanwhile at the next
    allocation, as the young generation they still are (0.11 s after a 20 MB modern log
    is read). They go to the oldest generation unexamined instead (gc.freeze, then
    gc.unfreeze: two list splices), where a full collection would still find any cycle
    among them; none is run before the records are saved and freed. Not when something
    else froze objects (a server before it forks): unfreezing would undo that.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not _frozen_for_life and not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()


# Set by freeze_for_life: then collector_paused knows objects are frozen without asking
# gc.get_freeze_count(), which walks every frozen object. The command's some hundred
# thousand took 4.6 ms a call: 40 % of each 4 MiB chunk a worker it forked parsed of a
# sparse log, and two calls for every small document.
_frozen_for_life = False


def freeze_for_life() -> None:
    """gc.freeze() every object made so far (a command's imports, which live as long as
    it does and make no garbage), for good: collector_paused leaves them frozen."""
    global _frozen_for_life
    gc.freeze()
    _frozen_for_life = True


def now_utc() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# The sources holding a content hash: by the hash alone, which its index answers
# (migration 13). With the kind and the name compared in the same query, DuckDB scanned
# every source instead (4.3 ms a document at 100,000 sources, against 0.4).
TWINS_SQL = "SELECT uri, kind FROM sources WHERE content_hash = ?"


def prior_state(conn: duckdb.DuckDBPyConnection, info: SourceInfo) -> SaveResult | None:
    """Unchanged or duplicate: the result to report without writing, else None."""
    row = conn.execute(
        "SELECT content_hash, kind, reader, n_measurements FROM sources WHERE uri = ?",
        [info.meta.uri],
    ).fetchone()
    # Unchanged: the same bytes, read the same way (same kind, same reader version).
    if row and row[:3] == (info.content_hash, info.kind, READER_VERSION):
        return SaveResult(info.meta.uri, "unchanged", previous=row[3])
    twins = conn.execute(TWINS_SQL, [info.content_hash]).fetchall()
    twin = min(
        (uri for uri, kind in twins if kind == info.kind and uri != info.meta.uri), default=None
    )
    if twin is not None:
        return SaveResult(
            info.meta.uri, "duplicate", note=f"same content as {twin} (already stored)"
        )
    return None


def begin_source(
    conn: duckdb.DuckDBPyConnection,
    info: SourceInfo,
    parsers: str,
    n_measurements: int,
    n_problems: int,
    status: str | None = None,
) -> tuple[int, int | None]:
    """Inside an open transaction: clear the source's old rows and (re)write its row.

    `status`: ok or partial (by its problems) unless given. Returns (source_id,
    measurements it held before, or None for a new source).
    """
    row = conn.execute(
        "SELECT source_id, n_measurements FROM sources WHERE uri = ?", [info.meta.uri]
    ).fetchone()
    meta = info.meta
    values = _source_values(info, parsers, n_measurements, n_problems, status)
    if row is None:
        source_id = next_id(conn, "sources")
        conn.execute(
            "INSERT INTO sources (content_hash, parser, kind, reader, encoding, project, url,"
            " author, title, created_at, ingested_at, size_bytes, n_lines, n_measurements,"
            " n_problems, status, uri, source_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*values, meta.uri, source_id],
        )
        # An earlier run may have failed to read it: that failure is not true any more.
        conn.execute(
            "DELETE FROM ingest_errors WHERE source_uri = ? AND source_id IS NULL", [meta.uri]
        )
        return source_id, None
    source_id, previous = row
    delete_source_rows(conn, source_id, meta.uri)
    _update_source(conn, source_id, values)
    return source_id, previous


def _source_values(
    info: SourceInfo, parsers: str, n_measurements: int, n_problems: int, status: str | None
) -> list[Any]:
    """A sources row's columns, in the order of begin_source's INSERT and _update_source."""
    meta = info.meta
    return [
        info.content_hash,
        parsers,
        info.kind,
        READER_VERSION,
        info.encoding,
        meta.project,
        meta.url or None,
        meta.author or None,
        meta.title or None,
        meta.created_at,
        now_utc(),
        info.size_bytes,
        info.n_lines,
        n_measurements,
        n_problems,
        status or ("partial" if n_problems else "ok"),
    ]


def _update_source(conn: duckdb.DuckDBPyConnection, source_id: int, values: list[Any]) -> None:
    conn.execute(
        "UPDATE sources SET content_hash = ?, parser = ?, kind = ?, reader = ?, encoding = ?,"
        " project = ?,"
        " url = ?, author = ?, title = ?, created_at = ?, ingested_at = ?, size_bytes = ?,"
        " n_lines = ?, n_measurements = ?, n_problems = ?, status = ? WHERE source_id = ?",
        [*values, source_id],
    )


# Ids are the next after the largest, not a sequence's: a DuckLake store has no
# sequences (nor RETURNING). Safe because one writer at a time holds the store (the file's
# lock, or the lake's writers' lock), and taken inside that writer's transaction.
_NEXT_ID = {
    "sources": "SELECT coalesce(max(source_id), 0) + 1 FROM sources",
    "phases": "SELECT coalesce(max(phase_id), 0) + 1 FROM phases",
}


def next_id(conn: duckdb.DuckDBPyConnection, table: str) -> int:
    return conn.execute(_NEXT_ID[table]).fetchall()[0][0]  # all: no result left open


def clear_source(conn: duckdb.DuckDBPyConnection, source_id: int, uri: str, status: str) -> int:
    """A document that holds nothing now (emptied: 'empty'; deleted upstream: 'gone'): its
    rows go in one transaction, its source stays with that status. Its hash is forgotten,
    so that the same text coming back is read again rather than taken as unchanged.
    Returns how many measurements it held."""
    with db.transaction(conn) as changes:
        changes.add_source(conn, uri)  # what it held: the dashboard re-reads what showed it
        (previous,) = conn.execute(
            "SELECT n_measurements FROM sources WHERE source_id = ?", [source_id]
        ).fetchone()
        delete_source_rows(conn, source_id, uri)
        conn.execute(
            "UPDATE sources SET status = ?, n_measurements = 0, n_problems = 0,"
            " content_hash = '', ingested_at = ? WHERE source_id = ?",
            [status, now_utc(), source_id],
        )
    return previous or 0


def write_text(conn: duckdb.DuckDBPyConnection, source_id: int, text: str | None) -> None:
    """The document's text, for a value's line in context (when it was kept)."""
    if text is not None:
        conn.execute("INSERT INTO source_texts (source_id, text) VALUES (?, ?)", [source_id, text])


def delete_source_rows(conn: duckdb.DuckDBPyConnection, source_id: int, uri: str) -> None:
    for table in ("measurements", "profile_events", "passes", "runs", "claims", "source_texts"):
        conn.execute(f"DELETE FROM {table} WHERE source_id = ?", [source_id])
    conn.execute(
        "DELETE FROM milestones"
        " WHERE phase_id IN (SELECT phase_id FROM phases WHERE source_id = ?)",
        [source_id],
    )
    conn.execute("DELETE FROM phases WHERE source_id = ?", [source_id])
    conn.execute("DELETE FROM ingest_errors WHERE source_uri = ?", [uri])


def save_found(
    conn: duckdb.DuckDBPyConnection,
    info: SourceInfo,
    found: Found,
    rows: Rows,
    status: str | None = None,
) -> SaveResult:
    """Store one parsed document atomically (see the module docstring for the rules).

    `rows`: its measurements and runs (found.measurements may be empty when they came
    as tables from worker processes). `status`: the source's, when not ok / partial.
    """
    with collector_paused():
        return _save_found(conn, info, found, rows, status)


def _save_found(
    conn: duckdb.DuckDBPyConnection,
    info: SourceInfo,
    found: Found,
    rows: Rows,
    status: str | None,
) -> SaveResult:
    prior = prior_state(conn, info)
    if prior is not None:
        return prior
    parsers = ",".join(found.parsers) or "none"
    problems = found.problems
    future = future_warning(rows)
    if future is not None:
        problems = [*problems, future]
    with db.transaction(conn) as changes:
        changes.add_source(conn, info.meta.uri)  # what it held, and (below) what it holds
        source_id, previous = begin_source(conn, info, parsers, rows.count, len(problems), status)
        series = write_rows(conn, source_id, rows)
        write_phases(conn, source_id, found)
        write_profile(conn, source_id, found, rows)
        write_claims(conn, source_id, found)
        write_problems(conn, info.meta.uri, source_id, problems)
        write_text(conn, source_id, info.text)
        changes.add_written(
            info.meta.project, series, _tables_written(found, rows, info), bool(problems)
        )
    return SaveResult(
        info.meta.uri,
        "added" if previous is None else "replaced",
        measurements=rows.count,
        previous=previous or 0,
        problems=len(problems),
    )


class Unsaved(Exception):
    """A document stored as it was read (save_streamed), taken back once all of it was
    read: a duplicate (`result`), or one that holds nothing (`result` None), which the
    caller stores by its own rules from `info` and `found`."""

    def __init__(self, result: SaveResult | None, info: SourceInfo, found: Found) -> None:
        super().__init__(result.outcome if result is not None else "holds nothing")
        self.result, self.info, self.found = result, info, found


def save_streamed(
    conn: duckdb.DuckDBPyConnection,
    meta: DocMeta,
    kind: str,
    parts: Iterator[Rows],
    finish: Callable[[], tuple[SourceInfo, Found]],
) -> SaveResult:
    """save_found for a large document stored as it is read (documents.stream_document),
    in one transaction: its source row first, each part's rows as they come, the rest once
    all of it is read (`finish`: its source row's values and its records that are not
    rows). What it holds at a time is a part, not the document.

    Raises Unsaved, all of it taken back, for a duplicate or a document that holds
    nothing; and what reading it raises, all of it taken back too."""
    with collector_paused(), db.transaction(conn) as changes:
        changes.add_source(conn, meta.uri)  # what it held, and (below) what it holds
        source_id, previous = begin_source(conn, SourceInfo(meta, "", kind, 0), "", 0, 0)
        series: dict[int, str | None] = {}
        count = records = events = passes = runs = 0
        ahead: tuple[int, int, datetime] | None = None
        for rows in parts:
            series.update(write_rows(conn, source_id, rows))
            write_profile(conn, source_id, Found(), rows)
            count, records = count + rows.count, records + rows.records
            events += rows.events.num_rows if rows.events is not None else 0
            passes += rows.passes.num_rows if rows.passes is not None else 0
            runs += rows.runs.num_rows
            ahead = _later(ahead, _future(rows))
        info, found = finish()
        prior = prior_state(conn, info)  # a duplicate (its own row has no hash yet)
        if prior is not None or (found.is_empty() and not records):
            raise Unsaved(prior, info, found)
        future = _future_problem(ahead)
        problems = [*found.problems, future] if future is not None else found.problems
        parsers = ",".join(found.parsers) or "none"
        values = _source_values(info, parsers, count, len(problems), None)
        _update_source(conn, source_id, values)
        write_phases(conn, source_id, found)
        write_profile(conn, source_id, found)
        write_claims(conn, source_id, found)
        write_problems(conn, meta.uri, source_id, problems)
        tables = _tables_of(found, events + len(found.profile_events), passes, runs, False)
        changes.add_written(meta.project, series.items(), tables, bool(problems))
    return SaveResult(
        meta.uri,
        "added" if previous is None else "replaced",
        measurements=count,
        previous=previous or 0,
        problems=len(problems),
    )


def _later(
    one: tuple[int, int, datetime] | None, other: tuple[int, int, datetime] | None
) -> tuple[int, int, datetime] | None:
    """Two parts' measurements dated in the future (_future), as one document's."""
    if one is None or other is None:
        return one or other
    return one[0] + other[0], min(one[1], other[1]), max(one[2], other[2])


# A day of slack: a clock a little ahead, or a time written in a zone east of UTC, is not
# yet "in the future".
FUTURE_SLACK = timedelta(days=1)


def future_warning(rows: Rows) -> Problem | None:
    """One warning for a document whose measurements are dated after tomorrow (a wrong
    --date or year): they are kept, and the warning says how many and from which line.

    With numpy, not pyarrow.compute: importing that costs a small document's ingest 60 ms,
    a tenth of it. A missing time (NaT) is after nothing.
    """
    return _future_problem(_future(rows))


def _future(rows: Rows) -> tuple[int, int, datetime] | None:
    """How many of the rows are dated after tomorrow, the first one's line, the latest."""
    if not rows.count:
        return None
    times = rows.measurements["measured_at"].to_numpy()
    ahead = times > np.datetime64(now_utc() + FUTURE_SLACK, "us")
    count = int(ahead.sum())
    if not count:
        return None
    first = int(rows.measurements["line"].to_numpy()[ahead].min())
    return count, first, times[ahead].max().astype(datetime)


def _future_problem(ahead: tuple[int, int, datetime] | None) -> Problem | None:
    if ahead is None:
        return None
    count, first, latest = ahead
    return Problem(
        first,
        f"{count} measurements dated in the future (up to {latest:%Y-%m-%d}): kept;"
        " is the document's date or year wrong?",
        parser="dates",
        severity="warning",
    )


def record_failure(conn: duckdb.DuckDBPyConnection, uri: str, problem: Problem) -> SaveResult:
    """A document that could not be read at all: its old rows stay, the error is kept.

    When the store cannot take even that (the disk is full), the failure is still
    reported, with why it was not recorded: it never raises for a store error.
    """
    try:
        with db.transaction(conn) as changes:
            changes.touch("ingest_errors")  # its rows stay as they were
            conn.execute(
                "DELETE FROM ingest_errors WHERE source_uri = ? AND source_id IS NULL", [uri]
            )
            write_problems(conn, uri, None, [problem])
    except duckdb.Error as error:
        note = f"{problem.reason} (not recorded in the store: {error})"
        return SaveResult(uri, "failed", problems=1, note=note)
    return SaveResult(uri, "failed", problems=1, note=problem.reason)


def write_problems(
    conn: duckdb.DuckDBPyConnection, uri: str, source_id: int | None, problems: list[Problem]
) -> None:
    if not problems:
        return
    seen = now_utc()
    table = pa.table(
        {
            "source_uri": [uri] * len(problems),
            "source_id": pa.array([source_id] * len(problems), pa.int64()),
            "parser": [p.parser for p in problems],
            "line": pa.array([p.line for p in problems], pa.int64()),
            "severity": [p.severity for p in problems],
            "reason": [p.reason for p in problems],
            "raw": [p.raw for p in problems],
            "seen_at": pa.array([seen] * len(problems), pa.timestamp("us")),
        }
    )
    _append(conn, "ingest_errors", table)


def _append(conn: duckdb.DuckDBPyConnection, table_name: str, table: pa.Table) -> None:
    # Read by its name (DuckDB's replacement scan, perfboard.db._reading_arrow_by_name).
    _perfboard_rows = table
    columns = ", ".join(f'"{c}"' for c in table.column_names)
    conn.execute(f"INSERT INTO {table_name} ({columns}) SELECT {columns} FROM _perfboard_rows")


def ensure_series(conn: duckdb.DuckDBPyConnection, series: dict[str, tuple[str, ...]]) -> None:
    """Insert the series (key -> identity columns) that the store does not hold yet."""
    if not series:
        return
    columns: dict[str, list[Any]] = {"series_key": list(series)}
    for index, name in enumerate(SERIES_COLUMNS):
        columns[name] = [identity[index] for identity in series.values()]
    _append_new_series(conn, pa.table(columns))


def _append_new_series(conn: duckdb.DuckDBPyConnection, table: pa.Table) -> pa.Table:
    """Store the series of `table` (series_key + identity columns) that the store does not
    hold yet; returns (series_key, series_id) of every key in it.

    One lookup of the document's own keys and an insert of the new ones only: the cost
    follows the document's series, not the store's (an anti join against every series
    cost 4 ms a document at 20,000 series, the most of a small result file's ingest).
    """
    keys = table.column("series_key").to_pylist()
    _perfboard_keys = table.select(["series_key"])  # read by its name, as in _append
    found = conn.sql(
        "SELECT series_key, series_id FROM series"
        " WHERE series_key IN (SELECT series_key FROM _perfboard_keys)"
    ).to_arrow_table()
    # First arrival of each new key, in order: series are numbered in the order they first
    # appear, so one document gives the same ids in one process or many. In Python, not
    # pyarrow.compute (see future_warning): a document has few series.
    seen = set(found.column("series_key").to_pylist())
    firsts = []
    for index, key in enumerate(keys):
        if key not in seen:
            seen.add(key)
            firsts.append(index)
    if not firsts:
        return found
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    new = pa.table(
        {name: [values[i] for i in firsts] for name, values in columns.items()},
        schema=table.schema,
    )
    start = conn.execute("SELECT coalesce(max(series_id), 0) FROM series").fetchall()[0][0]
    ids = list(range(start + 1, start + 1 + new.num_rows))
    _perfboard_series = new.append_column("series_id", pa.array(ids, pa.int64()))
    conn.execute(
        "INSERT INTO series (series_id, series_key, project, benchmark, task, metric,"
        " unit, direction, framework, device, params, testbed)"
        " SELECT series_id, series_key, project, benchmark, task, metric, unit,"
        " direction, framework, device, params::JSON, testbed::JSON"
        " FROM _perfboard_series"
    )
    return pa.table(
        {
            "series_key": found.column("series_key").to_pylist() + [keys[i] for i in firsts],
            "series_id": found.column("series_id").to_pylist() + ids,
        },
        schema=found.schema,
    )


# pyarrow 26 builds a string or int32 array from a list ten times slower when told the
# type than when it builds large_string or int64 and casts (184,000 strings: 0.27 s
# against 0.03 s). The same values, and the cast is checked. Only for long columns: a cast
# imports pyarrow.compute, which a small document's ingest does not otherwise need.
_BUILT_AS = {pa.string(): pa.large_string(), pa.int32(): pa.int64()}
_CAST_FROM = 4096


def column(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """pa.array(values, type_), the fast way."""
    via = _BUILT_AS.get(type_) if len(values) >= _CAST_FROM else None
    return pa.array(values, type_) if via is None else pa.array(values, via).cast(type_)


@dataclass(slots=True)
class Rows:
    """A document's measurements and runs as Arrow tables: how they are stored, and how
    they travel from a worker process (a table pickles as a few buffers; measurement
    objects cost 7 us each way).
    """

    measurements: pa.Table  # series_key + the measurement columns
    series: pa.Table  # series_key + the identity columns, one row per key
    runs: pa.Table  # run, label, first_line
    # From worker processes, their profile events and passes too (EVENT_SCHEMA,
    # PASS_SCHEMA); in this process they stay objects in Found.
    events: pa.Table | None = None
    passes: pa.Table | None = None

    @classmethod
    def of(
        cls,
        measurements: list[Measurement],
        runs: list[Run],
        blocks: Sequence[MeasurementBlock] = (),
        run_table: pa.Table | None = None,
    ) -> Rows:
        """The rows of measurement objects and of blocks (ingest.columns), with the runs
        as objects or as a table already."""
        keys, series = _series_keys(measurements)
        n = len(measurements)
        table = pa.table(
            {
                "series_key": column(keys, pa.string()),
                "run": column([m.run for m in measurements], pa.int32()),
                "version": column([m.version for m in measurements], pa.string()),
                "measured_at": pa.array([m.measured_at for m in measurements], pa.timestamp("us")),
                "value": pa.array([m.value for m in measurements], pa.float64()),
                "status": column([m.status for m in measurements], pa.string()),
                "samples": pa.array([m.samples for m in measurements], pa.int64()),
                "warmup": pa.array([m.warmup for m in measurements], pa.int64()),
                "stats": column(_stats_json(measurements), pa.string()),
                "line": pa.array([m.line for m in measurements], pa.int64()),
                "raw": column([m.raw for m in measurements], pa.string()),
            }
        )
        assert table.num_rows == n
        if blocks:
            table, series = _with_blocks(table, series, blocks)
        columns: dict[str, Any] = {"series_key": column(list(series), pa.string())}
        for index, name in enumerate(SERIES_COLUMNS):
            columns[name] = column([identity[index] for identity in series.values()], pa.string())
        if run_table is None:
            run_table = pa.table(
                {
                    "run": column([r.number for r in runs], pa.int32()),
                    "label": column([r.label for r in runs], pa.string()),
                    "first_line": pa.array([r.first_line for r in runs], pa.int64()),
                }
            )
        return cls(table, pa.table(columns), run_table)

    @property
    def tables(self) -> tuple[pa.Table | None, ...]:
        """Its tables in the order of its fields (events and passes may be None)."""
        return (self.measurements, self.series, self.runs, self.events, self.passes)

    def __reduce__(self) -> tuple[Any, ...]:
        # How rows travel from a worker: each table as an Arrow IPC stream. A pickled
        # table goes column by column through its schema: a tester chunk's rows took
        # 0.72 ms both ways, 0.20 as streams; the process that unpickles them is the one
        # that feeds the workers and writes the store.
        return (_rows_from_streams, tuple(_as_stream(t) for t in self.tables))

    @property
    def count(self) -> int:
        return self.measurements.num_rows

    @property
    def nbytes(self) -> int:
        """The bytes its tables' buffers hold (a buffer two columns share counted twice).

        The size of the buffers, not Table.nbytes: that one walks each array to count
        only the part of a buffer it uses, 0.3-0.6 ms a chunk's rows in the process that
        feeds the workers (40-75 ms of a 500 MB log), where this is 10 us."""
        return sum(t.get_total_buffer_size() for t in self.tables if t is not None)

    @property
    def records(self) -> int:
        """Measurements, profile events and passes: whether a document held anything."""
        extra = [t.num_rows for t in (self.events, self.passes) if t is not None]
        return self.count + sum(extra)

    @classmethod
    def placed(cls, parts: list[tuple[Rows, int, int]]) -> Rows:
        """The rows of a document's chunks as one, each chunk's line and run numbers moved
        on by its (lines, runs).

        One numpy addition a column for the whole document: moving each chunk's tables on
        its own took eight Arrow calls a chunk (0.4-0.7 ms), in the process that feeds the
        workers and competes with them for the cores (80 ms of its 0.2 s of CPU for a
        500 MB log).
        """
        whole = cls.concat([rows for rows, _, _ in parts])
        lines = np.array([n for _, n, _ in parts], np.int64)
        runs = np.array([n for _, _, n in parts], np.int64)

        def moved(
            table: pa.Table | None, each: list[pa.Table | None], **by: np.ndarray
        ) -> pa.Table | None:
            if table is None:
                return None
            counts = [0 if t is None else t.num_rows for t in each]
            for name, amounts in by.items():
                index = table.schema.get_field_index(name)
                table = table.set_column(index, name, _plus(table[name], amounts, counts))
            return table

        return cls(
            moved(whole.measurements, [r.measurements for r, _, _ in parts], line=lines, run=runs),
            whole.series,
            moved(whole.runs, [r.runs for r, _, _ in parts], run=runs, first_line=lines),
            moved(whole.events, [r.events for r, _, _ in parts], line=lines, run=runs),
            moved(whole.passes, [r.passes for r, _, _ in parts], line=lines, run=runs),
        )

    @classmethod
    def concat(cls, parts: list[Rows]) -> Rows:
        if not parts:
            return cls.of([], [])
        events = [p.events for p in parts if p.events is not None]
        passes = [p.passes for p in parts if p.passes is not None]
        return cls(
            pa.concat_tables([p.measurements for p in parts]),
            pa.concat_tables([p.series for p in parts]),
            pa.concat_tables([p.runs for p in parts]),
            pa.concat_tables(events) if events else None,
            pa.concat_tables(passes) if passes else None,
        )


def _as_stream(table: pa.Table | None) -> pa.Buffer | None:
    if table is None:
        return None
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _rows_from_streams(*streams: pa.Buffer | None) -> Rows:
    tables = [None if s is None else pa.ipc.open_stream(s).read_all() for s in streams]
    return Rows(*tables)


def _with_blocks(
    table: pa.Table, series: dict[str, tuple[str, ...]], blocks: Sequence[MeasurementBlock]
) -> tuple[pa.Table, dict[str, tuple[str, ...]]]:
    """The measurement table with the rows of blocks, in line order, and the identity of
    every series key in the order the keys first occur (as _series_keys gives them)."""
    import pyarrow.compute as pc

    identities: dict[str, tuple[str, ...]] = dict(series)
    parts = [table]
    for block in blocks:
        t, rows, templates = block.template, block.table, block.templates
        n = rows.num_rows
        # The few (benchmark, metric, variant) of a block: an identity and a key for each.
        pairs = pc.binary_join_element_wise(
            rows["benchmark"],
            rows["metric"],
            pa.array(block.variant_of_rows).cast(pa.large_string()),
            pa.scalar("\x1f", pa.large_string()),
        )
        pairs = pairs.combine_chunks().dictionary_encode()
        keys = []
        for pair in pairs.dictionary.to_pylist():
            benchmark, metric, variant = pair.split("\x1f")
            kind = templates[int(variant)]
            identity = replace(kind, benchmark=benchmark, metric=metric).series_identity()
            keys.append(series_key(*identity))
            identities.setdefault(keys[-1], identity)
        run = block.run if block.run is not None else np.zeros(n, np.int32)
        parts.append(
            pa.table(
                {
                    "series_key": pa.array(keys, pa.string()).take(pairs.indices),
                    "run": pa.array(run, pa.int32()),
                    "version": pa.nulls(n, pa.string())
                    if t.version is None
                    else pa.repeat(pa.scalar(t.version, pa.string()), n),
                    "measured_at": rows["measured_at"],
                    "value": rows["value"],
                    "status": pa.repeat(pa.scalar(t.status, pa.string()), n),
                    "samples": rows["samples"],
                    "warmup": rows["warmup"],
                    "stats": rows["stats"].cast(pa.string()),
                    "line": rows["line"],
                    "raw": rows["raw"].cast(pa.string()),
                },
                schema=table.schema,
            )
        )
    combined = pa.concat_tables(parts)
    if table.num_rows:  # objects and rows interleave: into line order (a stable sort)
        combined = combined.take(pc.sort_indices(combined["line"]))
    order = pc.unique(combined["series_key"]).to_pylist()  # in order of first occurrence
    return combined, {key: identities[key] for key in order}


def _plus(column: pa.ChunkedArray, amounts: np.ndarray, counts: list[int]) -> pa.Array:
    """An integer column (line or run numbers: never null) of parts `counts` rows long,
    each part's rows plus its amount, in the column's type.

    With numpy, not pyarrow.compute: the ingest that puts a large document's chunks in
    place would import it (30-55 ms) in the process that feeds the workers their chunks,
    and they waited on it, idle, for 25 ms of a 100 MB log's 0.3 s. And back into Arrow
    as a buffer, not by pa.array: its first call imports numpy.ma (20 ms, after the last
    chunk, while the workers wait for the next document).
    """
    added = np.repeat(amounts, counts)
    if column.null_count:  # not in these columns; the general way all the same
        import pyarrow.compute as pc

        return pc.add(column.combine_chunks(), pa.array(added)).cast(column.type)
    values = column.to_numpy()
    total = values.astype(np.int64) + added
    narrowed = total.astype(values.dtype)
    if not np.array_equal(narrowed, total):
        raise OverflowError(f"a {column.type} column moved on beyond its type's range")
    return pa.Array.from_buffers(column.type, len(narrowed), [None, pa.py_buffer(narrowed)])


def _series_keys(measurements: list[Measurement]) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """The series key of each measurement, and the identity of each key."""
    keys: list[str] = []
    series: dict[str, tuple[str, ...]] = {}
    memo: dict[tuple[Any, ...], str] = {}
    for m in measurements:
        # Memo on the fields as they are (a parser writes its params in one order): the
        # canonical identity, with sorted JSON, is computed once per distinct memo key.
        fast = (
            m.project,
            m.benchmark,
            m.task,
            m.metric,
            m.unit,
            m.direction,
            m.framework,
            m.device,
            tuple(m.params.items()),
            tuple(m.testbed.items()),
        )
        key = memo.get(fast)
        if key is None:
            identity = m.series_identity()
            key = memo[fast] = series_key(*identity)
            series[key] = identity
        keys.append(key)
    return keys, series


def write_rows(
    conn: duckdb.DuckDBPyConnection, source_id: int, rows: Rows
) -> list[tuple[int, str | None]]:
    """The measurements (their new series first) and runs of one source; returns the
    (series id, project) of the measurements' series."""
    series: list[tuple[int, str | None]] = []
    if rows.count:
        ids = _append_new_series(conn, rows.series)
        project_of = dict(
            zip(
                rows.series.column("series_key").to_pylist(),
                rows.series.column("project").to_pylist(),
                strict=True,
            )
        )
        series = [
            (series_id, project_of[key])
            for key, series_id in zip(
                ids.column("series_key").to_pylist(),
                ids.column("series_id").to_pylist(),
                strict=True,
            )
        ]
        # Both read by their names (the replacement scan of _append).
        _perfboard_measurements, _perfboard_ids = rows.measurements, ids
        conn.execute(
            "INSERT INTO measurements (series_id, source_id, run, version, measured_at,"
            " value, status, samples, warmup, stats, line, raw)"
            " SELECT s.series_id, ?, n.run, n.version, n.measured_at, n.value,"
            " n.status, n.samples, n.warmup, n.stats::JSON, n.line, n.raw"
            " FROM _perfboard_measurements n JOIN _perfboard_ids s USING (series_key)",
            [source_id],
        )
    if rows.runs.num_rows:
        runs = rows.runs.add_column(
            0, "source_id", pa.array([source_id] * rows.runs.num_rows, pa.int64())
        )
        _append(conn, "runs", runs)
    return series


def _tables_written(found: Found, rows: Rows, info: SourceInfo) -> list[str]:
    """The tables of a source's rows (db._SOURCE_TABLES) that _save_found writes rows to."""
    events = len(found.profile_events) + (rows.events.num_rows if rows.events is not None else 0)
    passes = len(found.passes) + (rows.passes.num_rows if rows.passes is not None else 0)
    return _tables_of(found, events, passes, rows.runs.num_rows, info.text is not None)


def _tables_of(found: Found, events: int, passes: int, runs: int, text: bool) -> list[str]:
    counts = {
        "phases": len(found.phases),
        "profile_events": events,
        "passes": passes,
        "runs": runs,
        "claims": len(found.claims),
        "source_texts": text,
    }
    return [table for table, count in counts.items() if count]


def write_measurements(
    conn: duckdb.DuckDBPyConnection, source_id: int, measurements: list[Measurement]
) -> None:
    """Measurements without runs (a source written record by record)."""
    write_rows(conn, source_id, Rows.of(measurements, []))


def _stats_json(measurements: list[Measurement]) -> list[str | None]:
    """Canonical JSON of each measurement's stats; the few distinct ones dumped once each."""
    memo: dict[tuple[Any, ...], str] = {}
    out: list[str | None] = []
    for m in measurements:
        stats = m.stats
        if not stats:
            out.append(None)
            continue
        try:
            key = tuple(stats.items())
            text = memo.get(key)
        except TypeError:  # an unhashable value (a list): no memo for this one
            key, text = None, None
        if text is None:
            text = canonical_json(stats)
            if key is not None:
                memo[key] = text
        out.append(text)
    return out


_PHASE_COLUMNS = (
    "name", "project", "benchmark", "metric", "unit", "value_header", "line", "target"
)  # fmt: skip
_MILESTONE_COLUMNS = (
    "ordinal", "label", "value", "date", "pr_repo", "pr_number", "pr_url", "description",
    "reported_speedup_raw", "reported_reduction", "reported_speedup", "computed_reduction",
    "computed_speedup", "disagrees", "line", "raw",
)  # fmt: skip


def write_phases(conn: duckdb.DuckDBPyConnection, source_id: int, found: Found) -> None:
    """The phases and their milestones, numbered on from the store's last phase: one insert
    each, not one a row (a log of pasted phase tables: 2,500 rows, 1.3 s one by one)."""
    if not found.phases:
        return
    first_id = next_id(conn, "phases")
    phase_ids = list(range(first_id, first_id + len(found.phases)))
    phases: dict[str, list[Any]] = {c: [] for c in _PHASE_COLUMNS}
    for phase in found.phases:
        for column in _PHASE_COLUMNS:
            phases[column].append(getattr(phase, column))
    phases["owner"] = [phase.owner or None for phase in found.phases]
    phases["platform"] = [phase.platform or None for phase in found.phases]
    phases["software"] = [phase.software or None for phase in found.phases]
    phases["baseline"] = [
        next((m.value for m in phase.milestones if m.value is not None), None)
        for phase in found.phases
    ]
    table = pa.table(phases).append_column("source_id", pa.array([source_id] * len(phase_ids)))
    _append(conn, "phases", table.append_column("phase_id", pa.array(phase_ids, pa.int64())))
    milestones: dict[str, list[Any]] = {"phase_id": []} | {c: [] for c in _MILESTONE_COLUMNS}
    for phase_id, phase in zip(phase_ids, found.phases, strict=True):
        for ms in phase.milestones:
            milestones["phase_id"].append(phase_id)
            for column in _MILESTONE_COLUMNS:
                milestones[column].append(getattr(ms, column))
    if milestones["phase_id"]:
        _append(conn, "milestones", pa.table(milestones))


# Profile events and passes as Arrow tables, typed as the store's columns: how a worker
# process sends them back (a few buffers to pickle: 1.3 M pass objects took longer to
# pickle than to parse), and how they are stored.
EVENT_SCHEMA = pa.schema(
    [
        ("run", pa.int32()),
        ("section", pa.string()),
        ("place", pa.string()),
        ("event", pa.string()),
        ("thread", pa.string()),
        ("depth", pa.int32()),
        ("calls", pa.int64()),
        *((name, pa.float64()) for name in ("total", "cpu_time", "cpu_ratio", "gpu_time")),
        *((name, pa.float64()) for name in ("gpu_ratio", "min", "max", "ave", "ratio")),
        ("line", pa.int64()),
        ("raw", pa.string()),
    ]
)
PASS_SCHEMA = pa.schema(
    [
        ("run", pa.int32()),
        ("name", pa.string()),
        ("kind", pa.string()),
        ("order", pa.int32()),
        ("subgraphs", pa.int32()),
        ("line", pa.int64()),
        ("raw", pa.string()),
    ]
)


def record_table(records: list[Any], schema: pa.Schema) -> pa.Table:
    """Records (ProfileEvent, PassApplied) as a table of the schema's columns.

    One pass over the records: an attrgetter makes a tuple of each (in C) and Arrow
    converts the tuples as a struct array. A column at a time visited every record once a
    column, 17 times a profile event, most visits a cache miss in a large document: the
    58,000 nsys events of a 20 MB modern log took 62-84 ms, now 52-58 ms. Built as
    `column` builds (the wide types, then a checked cast) when long.
    """
    if not records:
        return schema.empty_table()
    getter = attrgetter(*schema.names)  # schemas of many fields: a tuple a record
    if len(records) < _CAST_FROM:
        return pa.Table.from_struct_array(pa.array(list(map(getter, records)), pa.struct(schema)))
    built = pa.struct([(f.name, _BUILT_AS.get(f.type, f.type)) for f in schema])
    # The tuples of 65,536 records at a time (13 MB of them), not of all (200 bytes each).
    parts = [
        pa.array(list(map(getter, records[start : start + _RECORD_BATCH])), built)
        for start in range(0, len(records), _RECORD_BATCH)
    ]
    table = pa.Table.from_struct_array(pa.chunked_array(parts, built)).cast(schema)
    return table.combine_chunks() if len(parts) > 1 else table


_RECORD_BATCH = 1 << 16


def write_profile(
    conn: duckdb.DuckDBPyConnection, source_id: int, found: Found, rows: Rows | None = None
) -> None:
    """The profile events and passes of found, and those that came as tables in rows."""
    # Passes in any order: every read of them orders them (by line), and a large
    # document's come as a record batch a chunk, whose order DuckDB keeps at a cost (the
    # 1,170,821 passes of a 100 MB test session: 0.3 s of its 2 s ingest). Not profile
    # events: theirs only moved to the checkpoint, and grew (596,477 events: +0.15 s).
    for table_name, records, schema, packed, any_order in (
        ("profile_events", found.profile_events, EVENT_SCHEMA, rows and rows.events, False),
        ("passes", found.passes, PASS_SCHEMA, rows and rows.passes, True),
    ):
        for table in (record_table(records, schema) if records else None, packed):
            if table is not None and table.num_rows:
                n = table.num_rows
                table = table.add_column(0, "source_id", pa.array([source_id] * n, pa.int64()))
                with _in_any_order(conn) if any_order else nullcontext():
                    _append(conn, table_name, table)


@contextmanager
def _in_any_order(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Inserts that DuckDB may store in any order (write_profile says which, and why)."""
    conn.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        # After a failed insert the transaction is aborted and says so again: the store's
        # error is the one to report (the command ends with it).
        with suppress(duckdb.Error):
            conn.execute("RESET preserve_insertion_order")


def write_claims(conn: duckdb.DuckDBPyConnection, source_id: int, found: Found) -> None:
    if found.claims:
        claims = found.claims
        table = pa.table(
            {
                "source_id": pa.array([source_id] * len(claims), pa.int64()),
                "ordinal": column(range(len(claims)), pa.int32()),
                "before": pa.array([c.before for c in claims], pa.float64()),
                "after": pa.array([c.after for c in claims], pa.float64()),
                "unit": [c.unit for c in claims],
                "percent": pa.array([c.percent for c in claims], pa.float64()),
                "line": pa.array([c.line for c in claims], pa.int64()),
                "raw": [c.raw for c in claims],
                "speedup": pa.array([c.speedup for c in claims], pa.float64()),
            }
        )
        _append(conn, "claims", table)
