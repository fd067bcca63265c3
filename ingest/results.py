"""perfboard's own result format (docs/results-format.md): JSON Lines or CSV, one
measurement per record, every field of a series and a measurement spelled out.

Reading is bulk: DuckDB's own read_json / read_csv load the file into a staging table,
the checks are one SQL query, and the rows go to the store with INSERT ... SELECT. Only
a file that DuckDB cannot read (a line that is not JSON) goes through Python, line by
line, so that the error names the line; its good lines still take the bulk path.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from ingest.registry import RESULT_SUFFIXES
from ingest.save import (
    FUTURE_SLACK,
    SaveResult,
    SourceInfo,
    begin_source,
    ensure_series,
    now_utc,
    prior_state,
    write_problems,
)
from ingest.text import NotText
from perfboard import db
from perfboard.model import DIRECTIONS, STATUSES, Problem, canonical_json, series_key
from perfboard.units import ABSURD_MS

SCHEMA_ID = "perfboard.result/1"
NAME = "results"

# field -> DuckDB type it is read as (scalars as text, checked and cast in SQL)
FIELDS: dict[str, str] = {
    "schema": "VARCHAR",
    "project": "VARCHAR",
    "benchmark": "VARCHAR",
    "task": "VARCHAR",
    "metric": "VARCHAR",
    "unit": "VARCHAR",
    "direction": "VARCHAR",
    "framework": "VARCHAR",
    "device": "VARCHAR",
    "params": "JSON",
    "testbed": "JSON",
    "version": "VARCHAR",
    "time": "VARCHAR",
    "value": "VARCHAR",
    "status": "VARCHAR",
    "samples": "VARCHAR",
    "warmup": "VARCHAR",
    "stats": "JSON",
    "run": "VARCHAR",
}
# Must be present and non-empty ("unit" may be "": a difference or a count has none).
REQUIRED = ("benchmark", "task", "metric", "direction", "framework", "status")
IDENTITY = ("project", "benchmark", "task", "metric", "unit", "direction", "framework", "device")
# The format's units that hold no negative value (every canonical unit of perfboard.units
# but the ratios), and its time units, in which more than a day is a wrong unit.
NON_NEGATIVE_UNITS = ("ms", "ms/step", "samples/s", "steps/s", "tokens/s", "MB")
TIME_UNITS = ("ms", "ms/step")


@dataclass(slots=True)
class ResultsLoad:
    """How a results file was staged: the line of each staged record, when not rowid+1."""

    problems: list[Problem] = field(default_factory=list)
    line_offset: int = 1  # JSONL: record i is on line i+1; CSV: i+2 (header)
    line_map: str | None = None  # name of a table (rowid, line) for the Python path


def looks_like_results(path: Path, head: bytes) -> bool:
    """True for perfboard result files (auto mode sends them here)."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # Saved as UTF-16 (Windows tools do): recognised, so that it fails as "not UTF-8"
        # instead of being read as prose that holds nothing.
        head = head.decode("utf-16", "replace").encode("utf-8")
    head = head.removeprefix(codecs.BOM_UTF8)  # a BOM must not hide the CSV header
    first = head.lstrip().split(b"\n", 1)[0]
    if path.suffix.lower() not in RESULT_SUFFIXES:
        return False
    if path.suffix.lower() != ".csv":
        return b'"schema"' in first and SCHEMA_ID.encode() in first
    columns = first.decode("utf-8", "replace").strip().split(",")
    return {"benchmark", "metric", "value", "status"} <= {c.strip() for c in columns}


def _columns_sql() -> str:
    return "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in FIELDS.items()) + "}"


def stage(conn: duckdb.DuckDBPyConnection, path: Path) -> ResultsLoad:
    """Load a results file into the temp table _staging; fall back to Python on bad JSON."""
    conn.execute("DROP TABLE IF EXISTS _staging")
    if path.suffix.lower() == ".csv":
        return _stage_csv(conn, path)
    try:
        conn.execute(
            "CREATE TEMP TABLE _staging AS SELECT * FROM read_json(?,"
            f" format = 'newline_delimited', columns = {_columns_sql()})",
            [str(path)],
        )
    except (duckdb.InvalidInputException, duckdb.ConversionException):
        return _stage_line_by_line(conn, path)
    staged = conn.execute("SELECT count(*) FROM _staging").fetchone()[0]
    if staged != _line_count(path):
        # Blank lines make record numbers differ from line numbers: map them exactly.
        conn.execute("DROP TABLE _staging")
        return _stage_line_by_line(conn, path)
    return ResultsLoad()


def _stage_csv(conn: duckdb.DuckDBPyConnection, path: Path) -> ResultsLoad:
    """A CSV file's columns are taken by the names of its header, in its order (read_csv
    given `columns` takes them by position: a header that lists device before framework
    used to swap the two, silently). A column the format lacks is a problem, ignored."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), [])
    except UnicodeDecodeError:
        check_utf8(path)
        raise
    load = ResultsLoad(line_offset=2)
    # Unknown names get placeholders: no text of the file reaches the SQL.
    columns = {
        name if name in FIELDS else f"_unknown_{index}": FIELDS.get(name, "VARCHAR")
        for index, name in enumerate(header)
    }
    for name in header:
        if name not in FIELDS:
            load.problems.append(Problem(1, f"unknown column {name!r}: ignored", parser=NAME))
    spec = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items()) + "}"
    select = ", ".join(
        f'"{name}"' if name in columns else f'NULL::{kind} AS "{name}"'
        for name, kind in FIELDS.items()
    )
    try:
        conn.execute(
            f"CREATE TEMP TABLE _staging AS SELECT {select} FROM read_csv(?, header = true,"
            f" columns = {spec}, quote = '\"', escape = '\"', auto_detect = false)",
            [str(path)],
        )
    except duckdb.InvalidInputException:
        check_utf8(path)  # when that is why, say so with the line
        raise
    return load


def _line_count(path: Path) -> int:
    """The file's lines, blank ones too (the last may lack its line end), counted a chunk
    at a time at memory speed.

    read_json stages only the records: fewer rows than lines means blank lines, whose
    records' line numbers the Python path maps exactly. (Counting the non-blank lines, by
    "\n\n", missed a single blank line, and its records' problems were put a line too
    early; it also took 0.9 s of a 500 MB file's ingest, this 0.2 s.)
    """
    lines = 0
    last = b""
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 24), b""):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (1 if last and last != b"\n" else 0)


def _stage_line_by_line(conn: duckdb.DuckDBPyConnection, path: Path) -> ResultsLoad:
    """The exact path: lines that are not JSON objects become problems naming their line;
    the good ones are staged through read_json like any file, with a map back to lines."""
    check_utf8(path)
    load = ResultsLoad(line_map="_staging_lines")
    good_lines: list[int] = []
    with (
        tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as out,
        open(path, encoding="utf-8-sig", errors="strict") as fh,
    ):
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            problem = _json_object_problem(line)
            if problem:
                load.problems.append(Problem(number, problem, line[:2000], NAME))
                continue
            out.write(line + "\n")
            good_lines.append(number)
    try:
        if good_lines:
            conn.execute(
                "CREATE TEMP TABLE _staging AS SELECT * FROM read_json(?,"
                f" format = 'newline_delimited', columns = {_columns_sql()})",
                [out.name],
            )
        else:
            columns = ", ".join(f'NULL::{kind} AS "{name}"' for name, kind in FIELDS.items())
            conn.execute(f"CREATE TEMP TABLE _staging AS SELECT {columns} WHERE false")
    finally:
        os.unlink(out.name)
    lines = pa.table(
        {
            "rowid_": pa.array(range(len(good_lines)), pa.int64()),
            "line": pa.array(good_lines, pa.int64()),
        }
    )
    _lines_arrow = lines  # read by its name (perfboard.db._reading_arrow_by_name)
    conn.execute("CREATE OR REPLACE TEMP TABLE _staging_lines AS SELECT * FROM _lines_arrow")
    return load


def check_utf8(path: Path) -> None:
    """Raise NotText naming the first line that is not UTF-8: the format is UTF-8, and a
    file in another encoding fails whole rather than being guessed at or read in part."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise NotText(
                    f"line {number}: byte {raw[error.start]:#04x} is not UTF-8"
                    " (perfboard's result format is UTF-8)"
                ) from None


def _json_object_problem(line: str) -> str | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        return f"not JSON: {error.msg} at column {error.colno}"
    return None if isinstance(record, dict) else "a record must be a JSON object"


def _line_sql(load: ResultsLoad) -> tuple[str, str]:
    """The SQL expression for a staged record's line, and the join that provides it."""
    if load.line_map:
        return "lm.line", f"JOIN {load.line_map} lm ON lm.rowid_ = st.rowid"
    return f"st.rowid + {load.line_offset}", ""


def _sql_list(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


_MISSING = " ".join(
    f"WHEN st.{name} IS NULL OR st.{name} = '' THEN 'missing field {name}'" for name in REQUIRED
)
# The first rule a record breaks, or NULL: the whole format's checks in one SQL pass.
_CHECKS = f"""
    CASE
      WHEN st.schema IS NOT NULL AND st.schema <> '{SCHEMA_ID}'
        THEN 'unknown schema ' || st.schema || ' (expected {SCHEMA_ID})'
      {_MISSING}
      WHEN st.direction NOT IN {_sql_list(DIRECTIONS)}
        THEN 'direction must be lower or higher, not ' || st.direction
      WHEN st.status NOT IN {_sql_list(STATUSES)}
        THEN 'status must be one of {", ".join(STATUSES)}, not ' || st.status
      WHEN st.status = 'ok' AND st.value IS NULL THEN 'status ok needs a value'
      WHEN st.value IS NOT NULL AND TRY_CAST(st.value AS DOUBLE) IS NULL
        THEN 'value is not a number: ' || st.value
      WHEN st.value IS NOT NULL AND NOT isfinite(TRY_CAST(st.value AS DOUBLE))
        THEN 'value is not finite: ' || st.value
      WHEN st.unit IN {_sql_list(NON_NEGATIVE_UNITS)} AND TRY_CAST(st.value AS DOUBLE) < 0
        THEN 'value is negative: ' || st.value || ' ' || st.unit
      WHEN st.unit IN {_sql_list(TIME_UNITS)} AND TRY_CAST(st.value AS DOUBLE) > {ABSURD_MS}
        THEN 'value is absurd: ' || st.value || ' ' || st.unit || ' (more than a day)'
      WHEN st.time IS NOT NULL AND TRY_CAST(st.time AS TIMESTAMPTZ) IS NULL
        THEN 'time is not ISO 8601: ' || st.time
      WHEN st.samples IS NOT NULL AND TRY_CAST(st.samples AS BIGINT) IS NULL
        THEN 'samples is not an integer: ' || st.samples
      WHEN st.warmup IS NOT NULL AND TRY_CAST(st.warmup AS BIGINT) IS NULL
        THEN 'warmup is not an integer: ' || st.warmup
      WHEN st.params IS NOT NULL AND json_type(st.params) <> 'OBJECT'
        THEN 'params must be an object'
      WHEN st.testbed IS NOT NULL AND json_type(st.testbed) <> 'OBJECT'
        THEN 'testbed must be an object'
      WHEN st.stats IS NOT NULL AND json_type(st.stats) <> 'OBJECT' THEN 'stats must be an object'
      ELSE NULL
    END
"""


def check(conn: duckdb.DuckDBPyConnection, load: ResultsLoad) -> list[Problem]:
    """Mark staged records that break the format; return them as problems with lines."""
    line, join = _line_sql(load)
    conn.execute("ALTER TABLE _staging ADD COLUMN _problem VARCHAR")
    conn.execute(f"UPDATE _staging AS st SET _problem = {_CHECKS}")
    rows = conn.execute(
        f"SELECT {line}, st._problem FROM _staging st {join} WHERE st._problem IS NOT NULL"
        " ORDER BY 1"
    ).fetchall()
    return [Problem(int(n), reason, parser=NAME) for n, reason in rows]


def future(conn: duckdb.DuckDBPyConnection, load: ResultsLoad) -> list[Problem]:
    """Good records dated after tomorrow: kept, each with a warning (a wrong clock or
    year). Run after check(), in the UTC session save_results sets."""
    line, join = _line_sql(load)
    rows = conn.execute(
        f"SELECT {line}, st.time FROM _staging st {join} WHERE st._problem IS NULL"
        " AND TRY_CAST(st.time AS TIMESTAMPTZ) AT TIME ZONE 'UTC' > ? ORDER BY 1",
        [now_utc() + FUTURE_SLACK],
    ).fetchall()
    return [
        Problem(
            int(n),
            f"time is in the future: {time}: kept; is the clock or the year wrong?",
            parser=NAME,
            severity="warning",
        )
        for n, time in rows
    ]


# Two records of one key: the same series, version, time and run. Each record of the new
# source that shares its key with another (of any source, or another line of its own) is
# reported once, a conflict (another value or status) before a plain duplicate.
_CONFLICTS = """
    SELECT n.line, src.uri, o.line, o.value, o.status, n.value, n.status,
           o.value IS NOT DISTINCT FROM n.value AND o.status = n.status AS same
    FROM measurements n
    JOIN measurements o
      ON o.series_id = n.series_id AND o.run = n.run AND o.measured_at = n.measured_at
     AND o.version IS NOT DISTINCT FROM n.version
     AND (o.source_id <> n.source_id OR o.line <> n.line)
    JOIN sources src ON src.source_id = o.source_id
    WHERE n.source_id = ?
    QUALIFY row_number() OVER (PARTITION BY n.line ORDER BY same, src.uri, o.line) = 1
    ORDER BY n.line
"""


def conflicts(conn: duckdb.DuckDBPyConnection, source_id: int) -> list[Problem]:
    """Warnings for the records of a just-written source whose key another record holds.

    Both records are kept (neither document is wrong on its own, and which one is right
    is for a person to say); the warning names the other one.
    """
    problems = []
    for line, uri, other_line, other, other_status, mine, status, same in conn.execute(
        _CONFLICTS, [source_id]
    ).fetchall():
        if same:
            reason = f"the same measurement as {uri}:{other_line} (stored twice)"
        else:
            there = other if other_status == "ok" else other_status
            here = mine if status == "ok" else status
            reason = (
                f"conflicts with {uri}:{other_line}: the same series, version, time and run"
                f" with {there} there and {here} here (both kept)"
            )
        problems.append(Problem(int(line), reason, parser=NAME, severity="warning"))
    return problems


def _with_raw_lines(path: Path, problems: list[Problem], limit: int = 10_000) -> list[Problem]:
    """Give the first `limit` problems the text of their line (a pass only when needed)."""
    wanted = {p.line: p for p in problems[:limit]}
    if wanted:
        last = max(wanted)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                if number in wanted:
                    wanted[number].raw = line.rstrip("\r\n")[:2000]
                if number >= last:
                    break
    return problems


def _register_series(conn: duckdb.DuckDBPyConnection, project: str) -> None:
    """Give each distinct identity of the staged records its series key and series row."""
    identity_sql = ", ".join(f"coalesce(st.{c}, '')" for c in IDENTITY)
    # In the order of first appearance: series ids are numbered in that order, so the
    # same file gives the same ids every time (a bare DISTINCT comes out in hash order).
    distinct = conn.execute(
        f"SELECT {identity_sql}, coalesce(st.params::VARCHAR, '{{}}'),"
        " coalesce(st.testbed::VARCHAR, '{}') FROM _staging st WHERE st._problem IS NULL"
        " GROUP BY ALL ORDER BY min(st.rowid)"
    ).fetchall()
    rows = []
    series: dict[str, tuple[str, ...]] = {}
    for row in distinct:
        values = list(row)
        if not values[0]:
            values[0] = project
        params = canonical_json(json.loads(values[8]))
        testbed = canonical_json({k: str(v) for k, v in json.loads(values[9]).items()})
        identity = (*values[:8], params, testbed)
        key = series_key(*identity)
        series[key] = identity
        rows.append((*row, key))
    ensure_series(conn, series)
    conn.execute("DROP TABLE IF EXISTS _staging_keys")
    columns = ", ".join(f"k{i} VARCHAR" for i in range(10))
    conn.execute(f"CREATE TEMP TABLE _staging_keys ({columns}, series_key VARCHAR)")
    if rows:
        table = pa.table(
            {f"k{i}": [r[i] for r in rows] for i in range(10)}
            | {"series_key": [r[10] for r in rows]}
        )
        _keys_arrow = table  # read by its name (perfboard.db._reading_arrow_by_name)
        conn.execute("INSERT INTO _staging_keys SELECT * FROM _keys_arrow")


def save_results(conn: duckdb.DuckDBPyConnection, path: Path, info: SourceInfo) -> SaveResult:
    """Ingest one results file atomically; bad records are kept as ingest errors."""
    prior = prior_state(conn, info)
    if prior is not None:
        return prior
    # A time without an offset is UTC (docs/results-format.md), whatever the host's zone:
    # DuckDB reads such a time in the session's zone, which is the host's unless set.
    conn.execute("SET TimeZone = 'UTC'")
    try:
        # Staging and checks touch only temp tables, and a failed read would abort an
        # open transaction: they come before it.
        load = stage(conn, path)
        problems = load.problems + _with_raw_lines(path, check(conn, load) + future(conn, load))
        problems.sort(key=lambda p: p.line)
        with db.transaction(conn) as changes:
            changes.add_source(conn, info.meta.uri)  # what it held, and (below) what it holds
            _register_series(conn, info.meta.project)
            n_good = conn.execute(
                "SELECT count(*) FROM _staging WHERE _problem IS NULL"
            ).fetchone()[0]
            source_id, previous = begin_source(conn, info, NAME, n_good, len(problems))
            line, join = _line_sql(load)
            identity_join = " AND ".join(
                [f"coalesce(st.{c}, '') = k.k{i}" for i, c in enumerate(IDENTITY)]
                + [
                    "coalesce(st.params::VARCHAR, '{}') = k.k8",
                    "coalesce(st.testbed::VARCHAR, '{}') = k.k9",
                ]
            )
            conn.execute(
                "INSERT INTO measurements (series_id, source_id, run, version, measured_at, value,"
                " status, samples, warmup, stats, line, raw)"
                # A record without a version or time of its own takes its document's.
                f" SELECT s.series_id, ?, coalesce(TRY_CAST(st.run AS INTEGER), 0),"
                " coalesce(st.version, ?),"
                " coalesce(TRY_CAST(st.time AS TIMESTAMPTZ) AT TIME ZONE 'UTC', ?),"
                " TRY_CAST(st.value AS DOUBLE), st.status, TRY_CAST(st.samples AS BIGINT),"
                f" TRY_CAST(st.warmup AS BIGINT), st.stats, {line}, NULL"
                f" FROM _staging st {join} JOIN _staging_keys k ON {identity_join}"
                " JOIN series s ON s.series_key = k.series_key WHERE st._problem IS NULL",
                [source_id, info.meta.version or None, info.meta.created_at],
            )
            found = conflicts(conn, source_id)
            if found:
                problems = sorted(problems + found, key=lambda p: p.line)
                conn.execute(
                    "UPDATE sources SET n_problems = ?, status = 'partial' WHERE source_id = ?",
                    [len(problems), source_id],
                )
            write_problems(conn, info.meta.uri, source_id, problems)
            changes.add_source(conn, info.meta.uri)
    finally:
        # Temp tables only; a store that failed (a full disk) must not hide why behind
        # an error of this clean-up. stage() drops them again before it loads.
        with contextlib.suppress(duckdb.Error):
            for table in ("_staging", "_staging_keys", "_staging_lines"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
    return SaveResult(
        info.meta.uri,
        "added" if previous is None else "replaced",
        measurements=n_good,
        previous=previous or 0,
        problems=len(problems),
    )


EXPORT_SQL = f"""
    SELECT '{SCHEMA_ID}' AS schema, s.project, s.benchmark, s.task, s.metric, s.unit,
           s.direction, s.framework, s.device, s.params, s.testbed, m.version,
           strftime(m.measured_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS time, m.value, m.status,
           m.samples, m.warmup, m.stats, m.run
    FROM measurements m JOIN series s USING (series_id)
    ORDER BY s.series_key, m.measured_at NULLS FIRST, m.source_id, m.line
"""


def export(conn: duckdb.DuckDBPyConnection, out: Path, fmt: str) -> int:
    """Write every measurement to a results file; returns how many."""
    if fmt not in ("jsonl", "csv"):
        raise ValueError(f"unknown export format {fmt!r}: use jsonl or csv")
    options = "FORMAT json" if fmt == "jsonl" else "FORMAT csv, HEADER"
    conn.execute(f"COPY ({EXPORT_SQL}) TO '{_sql_path(out)}' ({options})")
    return conn.execute("SELECT count(*) FROM measurements").fetchone()[0]


def _sql_path(path: Path) -> str:
    # COPY ... TO takes no bound parameter for its target; quote it as a literal.
    return str(path).replace("'", "''")


def write_records(records: list[dict[str, Any]], out: Path, fmt: str = "jsonl") -> None:
    """Write result records (a benchmark job's side of the format; used by tests/benches)."""
    with open(out, "w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            for record in records:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            return
        writer = csv.DictWriter(fh, fieldnames=list(FIELDS))
        writer.writeheader()
        for record in records:
            writer.writerow(
                {k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in record.items()}
            )
