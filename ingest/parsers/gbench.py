"""Google Benchmark results: its JSON, console and CSV reporters.

The strings were taken from the library's own reporters (google/benchmark
src/json_reporter.cc, src/console_reporter.cc, src/csv_reporter.cc, 2016-2024):

- ``--benchmark_format=json`` / ``--benchmark_out=x.json``: ``{"context": {"date",
  "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches",
  "load_avg", "library_build_type", ...}, "benchmarks": [{"name", "family_index",
  "per_family_instance_index", "run_name", "run_type" ("iteration" | "aggregate"),
  "repetitions", "repetition_index" (iterations only), "threads", "aggregate_name" ("mean",
  "median", "stddev", "cv" or a user statistic), "aggregate_unit" ("time" |
  "percentage"), "error_occurred"/"error_message", "iterations", "real_time", "cpu_time",
  "time_unit", user counters (``bytes_per_second``, ``items_per_second`` and any other),
  "allocs_per_iter"/"max_bytes_used" (memory manager), "label"}]}``. Doubles are printed
  in exponent notation (``2.1498980114547953e+02``), NaN as ``NaN``. A BigO row (name
  ``BM_x_BigO``) has ``cpu_coefficient``, ``real_coefficient``, ``big_o`` instead of the
  times; an RMS row (``BM_x_RMS``) has ``rms``. Versions before 2018 print only ``name``,
  ``iterations``, the times and ``time_unit``.
- the console: a date line, ``Running ./exe``, ``Run on (16 X 3800 MHz CPU s)``, the cache
  lines, then a rule, ``Benchmark   Time   CPU   Iterations [UserCounters...]``, a rule,
  and one row per run: ``BM_foo/8   12.3 ns   12.3 ns   56000000 items_per_second=1.2G/s``.
  Aggregates end in ``_mean``, ``_median``, ``_stddev``, ``_cv`` (cv printed in %); errors
  print ``ERROR OCCURRED: 'msg'`` (newer: ``SKIPPED: 'msg'``) instead of the numbers. Old
  versions print rates as `` 465.8MB/s`` and `` 488.4M items/s``; numbers use
  HumanReadableNumber suffixes (k M G T ..., Ki Mi Gi ... with 1024).
  ``--benchmark_counters_tabular`` puts counters in columns named in the header.
- ``--benchmark_format=csv``: ``name,iterations,real_time,cpu_time,time_unit,
  bytes_per_second,items_per_second,label,error_occurred,error_message`` and the user
  counters as further columns.

Decisions:

- ``benchmark`` is the run name (``run_name``, else ``name`` without an aggregate suffix),
  as printed: ``BM_foo/8/threads:2``. ``threads`` goes in params, ``framework``,
  ``device`` stay "", ``task`` is "microbenchmark".
- metrics ``real_time`` and ``cpu_time`` (in ms from ``time_unit``), ``bytes_per_second``
  (MB/s) and ``items_per_second`` (samples/s), ``max_bytes_used`` (MB). A plain iteration
  row has no ``stat`` (Google Benchmark reports the time per iteration averaged over the
  iterations; every repetition is one more value of the series, its index in stats); an
  aggregate row has ``stat`` "mean", "median", "std" (stddev), "min", "max" or a
  percentile ("p90"...) for user statistics of those names. ``cv`` (a ratio) is no series:
  it goes into the stats of the matching "mean" measurements (``cv``); an aggregate of
  another name or unit is a warning Problem. BigO and RMS rows are no time series: they are
  skipped (their coefficients are fits over the arguments, not measurements).
- Other user counters (their unit is not in the output) go into stats["counters"];
  iterations, repetitions, repetition_index, label, allocs_per_iter in stats.
- context -> testbed (host_name, num_cpus, mhz_per_cpu, library_build_type, as text);
  ``measured_at`` from ``context.date`` (ISO, with or without zone); the executable in
  stats. An error row is a Measurement with status "error" (no value), a skipped one
  (error_occurred false with a message) "missing".
- Problems: a JSON object that does not read, a time or rate that is no number, NaN or
  negative, an unknown time unit, a console row cut before its units.

Speed: one ``re.finditer`` per literal entry point (``"benchmarks"``, ``Iterations``,
``name,iterations,real_time``); only the rows of a table found are walked. A
``"benchmarks"`` key is decoded only when a ``"time_unit"`` follows it within
JSON_WINDOW (or the context's ``"library_build_type"`` precedes it): those keys are found
once per text, so a 40 MB log full of the word costs about a second, not a JSON decode per
hit.
"""

from __future__ import annotations

import contextlib
import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ingest.parsers.cells import NUMBER, stat_direction
from ingest.parsers.jsonscan import cut_object, find_object, near, positions
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "gbench"
ANCHORS: tuple[str, ...] = ('"real_time"', "Iterations", "name,iterations,real_time")

TASK = "microbenchmark"
MAX_TABLE_LINES = 100_000  # rows of one console table
MAX_CONTEXT_CHARS = 4096  # how far above a console table its date / "Run on" lines are
JSON_WINDOW = 8192  # a result's first row is this close after its "benchmarks" key
MAX_JSON_HEAD = 1 << 20  # how far above the key the object's "{" may be (the context)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("json", re.compile(r'"benchmarks"\s*:')),
    ("console", re.compile(r"Iterations")),
    ("csv", re.compile(r"name,iterations,real_time,cpu_time,time_unit")),
)
_HEADER = re.compile(r"Benchmark\s+Time\s+CPU\s+Iterations(?P<rest>.*)")
_TIME_UNITS = ("ns", "us", "ms", "s")
_ROW = re.compile(
    rf"(?P<name>\S.*?)\s+(?P<rt>{NUMBER})\s*(?P<ru>[a-zµμ%]+)\s+(?P<ct>{NUMBER})\s*"
    rf"(?P<cu>[a-zµμ%]+)(?:\s+(?P<it>\d+))?(?P<rest>.*)"
)
_ERROR_ROW = re.compile(r"(?P<name>\S.*?)\s+(?P<kind>ERROR OCCURRED|SKIPPED): '(?P<msg>.*)'")
_COUNTER = re.compile(
    r"(?P<key>[A-Za-z_][\w.:/-]*)=(?P<num>[-+]?[\d.]+(?:[eE][-+]?\d+)?)"
    r"(?P<suffix>[kMGTPEZY]i?|[munp])?(?P<rate>/s)?"
)
_OLD_RATE = re.compile(r"(?P<num>[\d.]+)(?P<suffix>[kMGTPEZY]i?)?(?P<what>B/s| items/s)")
_RUN_ON = re.compile(r"Run on \((?P<cpus>\d+) X (?P<mhz>[\d.]+) MHz CPU s?\)")
_DATE_LINE = re.compile(r"(?m)^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[+-]\d\d:?\d\d|Z)?$")
_RUNNING = re.compile(r"(?m)^Running (?P<exe>\S.*)$")
_AGG_SUFFIX = re.compile(r"_(mean|median|stddev|cv|min|max|p\d+(?:\.\d+)?)$")

_SUFFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_SUFFIXES |= {"Z": 1e21, "Y": 1e24, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}
_SUFFIXES |= {k + "i": 1024.0 ** (i + 1) for i, k in enumerate("kMGTPEZY")}

# Keys of a JSON row that are no user counter.
_ROW_KEYS = frozenset(
    {
        "name",
        "family_index",
        "per_family_instance_index",
        "run_name",
        "run_type",
        "repetitions",
        "repetition_index",
        "threads",
        "aggregate_name",
        "aggregate_unit",
        "error_occurred",
        "error_message",
        "skipped",
        "iterations",
        "real_time",
        "cpu_time",
        "time_unit",
        "bytes_per_second",
        "items_per_second",
        "label",
        "allocs_per_iter",
        "max_bytes_used",
        "total_allocated_bytes",
        "net_heap_growth",
        "memory_iterations",
        "big_o",
        "cpu_coefficient",
        "real_coefficient",
        "rms",
    }
)
_STATS = {"mean": "mean", "median": "median", "stddev": "std", "std": "std"}
_STATS |= {"min": "min", "max": "max"}
# Rates and sizes that are series of their own: key -> (metric, unit as printed).
_RATES = {"bytes_per_second": "bytes/s", "items_per_second": "items/s"}


@dataclass
class _Context:
    testbed: dict[str, str] = field(default_factory=dict)
    measured_at: datetime | None = None
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Row:
    """One benchmark run as any reporter prints it."""

    name: str
    line: int
    raw: str
    run_name: str = ""
    aggregate: str = ""  # "" for an iteration row
    aggregate_unit: str = "time"
    real: Any = None
    cpu: Any = None
    time_unit: str = ""
    threads: int | None = None
    rates: dict[str, Any] = field(default_factory=dict)  # bytes_per_second, items_per_second
    counters: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    message: str = ""
    raws: dict[str, tuple[int, str]] = field(default_factory=dict)  # key -> (line, raw)


def parse(doc: DocText) -> Iterator[Item]:
    """real_time / cpu_time (and rate) Measurements of every Google Benchmark result."""
    text = doc.text
    consumed = -1
    tried: set[int] = set()
    marks: dict[str, list[int]] | None = None
    for pos, kind, _m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        if kind == "json":
            if marks is None:
                marks = _marks(text)
            found = _json(doc, pos, max(consumed, 0), tried, marks)
        elif kind == "console":
            found = _console(doc, pos)
        else:
            found = _csv(doc, pos)
        if found is None:
            continue
        items, end = found
        items.sort(key=lambda item: item.line)
        yield from items
        consumed = max(consumed, end)


# -- the rows to measurements ---------------------------------------------------------------


def _items(rows: list[_Row], ctx: _Context) -> list[Item]:
    items: list[Item] = []
    means: dict[tuple[str, str], list[Measurement]] = {}
    bases = {row.run_name or row.name for row in rows if not row.aggregate}
    for row in rows:
        benchmark = row.run_name or row.name
        if row.aggregate and not row.run_name:
            benchmark = _AGG_SUFFIX.sub("", row.name)
            if benchmark not in bases and row.name in bases:
                benchmark = row.name
        stat = ""
        if row.aggregate:
            name = row.aggregate.lower()
            if name == "cv" or row.aggregate_unit == "percentage":
                if name == "cv":
                    for metric, value in (("real_time", row.real), ("cpu_time", row.cpu)):
                        for m in means.get((benchmark, metric), []):
                            if _is_number(value):
                                m.stats["cv"] = float(value)
                    continue
                items.append(
                    Problem(
                        row.line,
                        f"aggregate {row.aggregate!r} in % is not read",
                        row.raw,
                        NAME,
                        "warning",
                    )
                )
                continue
            stat = _STATS.get(name, "")
            if not stat and re.fullmatch(r"p\d+(?:\.\d+)?", name):
                stat = name
            if not stat:
                items.append(
                    Problem(
                        row.line,
                        f"aggregate {row.aggregate!r} has no known meaning",
                        row.raw,
                        NAME,
                        "warning",
                    )
                )
                continue
        params: dict[str, ParamValue] = {}
        if row.threads is not None:
            params["threads"] = row.threads
        if stat:
            params["stat"] = stat
        stats = dict(ctx.stats) | row.stats
        if row.counters:
            stats["counters"] = dict(row.counters)
        if row.status != "ok":
            if row.message:
                stats["error_message"] = row.message
            items.append(
                _measurement(
                    benchmark,
                    "real_time",
                    None,
                    "ms",
                    "lower",
                    params,
                    ctx,
                    stats,
                    row.line,
                    row.raw,
                    row.status,
                )
            )
            continue
        values: list[tuple[str, Any, str]] = [
            ("real_time", row.real, row.time_unit),
            ("cpu_time", row.cpu, row.time_unit),
        ]
        values += [(key, value, _RATES.get(key, "bytes")) for key, value in row.rates.items()]
        for metric, value, unit in values:
            if value is None:
                continue
            line, raw = row.raws.get(metric, (row.line, row.raw))
            if not _is_number(value):
                items.append(Problem(line, f"{metric} {value!r} is not a number", raw, NAME))
                continue
            try:
                q = normalise(float(value), unit)
            except UnitError as e:
                items.append(Problem(line, f"{metric}: {e}", raw, NAME))
                continue
            m = _measurement(
                benchmark, metric, q.value, q.unit, q.direction, params, ctx, dict(stats), line, raw
            )
            items.append(m)
            if stat == "mean":
                means.setdefault((benchmark, metric), []).append(m)
    return items


def _measurement(
    benchmark: str,
    metric: str,
    value: float | None,
    unit: str,
    direction: str,
    params: dict[str, ParamValue],
    ctx: _Context,
    stats: dict[str, Any],
    line: int,
    raw: str,
    status: str = "ok",
) -> Measurement:
    return Measurement(
        benchmark=benchmark,
        metric=metric,
        value=value,
        unit=unit,
        task=TASK,
        direction=stat_direction(direction, params.get("stat")),  # type: ignore[arg-type]
        framework="",
        params=dict(params),
        testbed=dict(ctx.testbed),
        measured_at=ctx.measured_at,
        status=status,  # type: ignore[arg-type]
        stats=stats,
        line=line,
        raw=raw,
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _date(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


# -- JSON --------------------------------------------------------------------------------


def _json(
    doc: DocText, pos: int, floor: int, tried: set[int], marks: dict[str, list[int]]
) -> tuple[list[Item], int] | None:
    text = doc.text
    # A cheap look first: a result's first row follows its "benchmarks" key, and its
    # "context" is a few KB above it. Only then the JSON reader (a log with thousands of
    # "benchmarks" words must not cost a JSON decode each).
    if not (
        near(marks["time_unit"], pos, pos + JSON_WINDOW)
        or near(marks["cpu_coefficient"], pos, pos + JSON_WINDOW)
        or near(marks["library_build_type"], pos - JSON_WINDOW, pos)
    ):
        return None
    floor = max(floor, pos - MAX_JSON_HEAD)
    obj, start, end, joined = find_object(text, pos, "benchmarks", floor, tried)
    if obj is None:
        if start < 0 or not _looks_gbench_text(text, pos):
            return None
        problem, line_end = cut_object(doc, start, "Google Benchmark JSON", NAME)
        return [problem], max(pos + 1, line_end)
    rows = obj.get("benchmarks")
    if not isinstance(rows, list) or not _is_gbench(obj, rows):
        return None
    ctx = _Context()
    context = obj.get("context")
    if isinstance(context, dict):
        for key in ("host_name", "num_cpus", "mhz_per_cpu", "library_build_type"):
            if context.get(key) is not None and not isinstance(context[key], dict | list):
                ctx.testbed[key] = str(context[key])
        if isinstance(context.get("date"), str):
            ctx.measured_at = _date(context["date"])
        if isinstance(context.get("executable"), str):
            ctx.stats["executable"] = context["executable"]
    items: list[Item] = []
    if joined:
        items.append(
            Problem(
                doc.line_at(start),
                "Google Benchmark JSON is wrapped over lines: read with its line breaks removed",
                doc.line_text(start),
                NAME,
                "warning",
            )
        )
    spans = _row_spans(text, pos, end, len(rows))
    parsed: list[_Row] = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        row_start, row_end = spans[index] if index < len(spans) else (pos, end)
        parsed_row = _json_row(doc, row, row_start, row_end)
        if parsed_row is not None:
            parsed.append(parsed_row)
    items += _items(parsed, ctx)
    return items, end


def _looks_gbench_text(text: str, pos: int) -> bool:
    end = pos + JSON_WINDOW
    return text.find('"time_unit"', pos, end) >= 0 or text.find('"cpu_coefficient"', pos, end) >= 0


def _marks(text: str) -> dict[str, list[int]]:
    """Where the keys that mark a result are (C-speed scans, once per text)."""
    keys = ("time_unit", "cpu_coefficient", "library_build_type")
    return {key: positions(text, f'"{key}"') for key in keys}


def _is_gbench(obj: dict[str, Any], rows: list[Any]) -> bool:
    if any(isinstance(r, dict) and isinstance(r.get("stats"), dict) for r in rows):
        return False  # pytest-benchmark
    if any(isinstance(r, dict) and ("real_time" in r or "cpu_coefficient" in r) for r in rows):
        return True
    context = obj.get("context")
    return not rows and isinstance(context, dict) and "library_build_type" in context


def _row_spans(text: str, pos: int, end: int, count: int) -> list[tuple[int, int]]:
    """Where each row of the benchmarks array is: from its "name" key to the next one."""
    starts = []
    cursor = pos
    while len(starts) < count:
        found = text.find('"name"', cursor, end)
        if found < 0:
            break
        starts.append(found)
        cursor = found + 6
    return [(s, starts[i + 1] if i + 1 < len(starts) else end) for i, s in enumerate(starts)]


def _key_raw(doc: DocText, key: str, start: int, end: int) -> tuple[int, str] | None:
    text = doc.text
    found = text.find(f'"{key}"', start, end)
    if found < 0:
        return None
    m = re.compile(r'"[^"\n]*"\s*:\s*(?:"[^"\n]*"|[^,}\]\n]*)').match(text, found, end)
    raw = m.group().strip() if m else doc.line_text(found)
    return doc.line_at(found), raw


def _json_row(doc: DocText, row: dict[str, Any], start: int, end: int) -> _Row | None:
    if "big_o" in row or "rms" in row or "cpu_coefficient" in row:
        return None  # a complexity fit, no measurement
    name = str(row.get("name", ""))
    where = _key_raw(doc, "name", start, end) or (doc.line_at(start), doc.line_text(start))
    out = _Row(name=name, line=where[0], raw=where[1])
    out.run_name = str(row.get("run_name") or "")
    if row.get("run_type") == "aggregate" or "aggregate_name" in row:
        out.aggregate = str(row.get("aggregate_name") or "")
        out.aggregate_unit = str(row.get("aggregate_unit") or "time")
        if not out.aggregate:
            m = _AGG_SUFFIX.search(name)
            out.aggregate = m.group(1) if m else "?"
    out.real, out.cpu = row.get("real_time"), row.get("cpu_time")
    out.time_unit = str(row.get("time_unit") or "ns")
    if isinstance(row.get("threads"), int):
        out.threads = row["threads"]
    for key in ("iterations", "repetitions", "repetition_index", "label", "allocs_per_iter"):
        if key in row and not isinstance(row[key], dict | list):
            out.stats[key] = row[key]
    for key in ("real_time", "cpu_time"):
        found = _key_raw(doc, key, start, end)
        if found:
            out.raws[key] = found
    for key in (*_RATES, "max_bytes_used"):
        if key in row:
            out.rates[key] = row[key]
            found = _key_raw(doc, key, start, end)
            if found:
                out.raws[key] = found
    for key, value in row.items():
        if key not in _ROW_KEYS and _is_number(value):
            out.counters[key] = value
    error = row.get("error_occurred")
    if error is True:
        out.status, out.message = "error", str(row.get("error_message", ""))
    elif row.get("error_message") or row.get("skipped"):
        out.status, out.message = "missing", str(row.get("error_message", ""))
    return out


# -- console -----------------------------------------------------------------------------


def _console(doc: DocText, pos: int) -> tuple[list[Item], int] | None:
    text = doc.text
    line_start, line_end = doc.line_bounds(pos)
    header = _HEADER.search(text, line_start, line_end)
    if header is None:
        return None
    columns = header.group("rest").split()
    tabular = [c for c in columns if c not in ("UserCounters...", "MetaData...")]
    ctx = _console_context(text, line_start)
    rows: list[_Row] = []
    items: list[Item] = []
    end = line_end
    number = doc.line_at(line_start)
    start = line_end + 1
    for _ in range(MAX_TABLE_LINES):
        if start > len(text):
            break
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop]
        number += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("```"):
            break
        if set(stripped) <= {"-"}:
            end, start = stop, stop + 1
            continue
        if _HEADER.search(line):
            break  # the next table (tabular counters changed): read on its own
        row = _console_row(line, number, tabular)
        if isinstance(row, str):
            if row:
                items.append(Problem(number, row, line, NAME))
        elif row is not None:
            rows.append(row)
        else:
            break
        end, start = stop, stop + 1
    if not rows and not items:
        return None
    _mark_aggregates(rows)
    return items + _items(rows, ctx), end


def _console_context(text: str, header_start: int) -> _Context:
    ctx = _Context()
    above = text[max(0, header_start - MAX_CONTEXT_CHARS) : header_start]
    # Only the lines since the previous table (or fence) belong to this one.
    cut = max(above.rfind("```"), above.rfind("\n\n\n"))
    if cut >= 0:
        above = above[cut:]
    m = _RUN_ON.search(above)
    if m:
        ctx.testbed["num_cpus"] = m.group("cpus")
        ctx.testbed["mhz_per_cpu"] = str(round(float(m.group("mhz"))))
    dates = _DATE_LINE.findall(above)
    if dates:
        ctx.measured_at = _date(dates[-1])
    running = _RUNNING.findall(above)
    if running:
        ctx.stats["executable"] = running[-1].strip()
    if "Library was built as DEBUG" in above:
        ctx.testbed["library_build_type"] = "debug"
    return ctx


def _human(num: str, suffix: str | None) -> float:
    return float(num) * (_SUFFIXES.get(suffix, 1.0) if suffix else 1.0)


def _console_row(line: str, number: int, tabular: list[str]) -> _Row | str | None:
    """A row, a reason it cannot be read, "" to skip it (BigO, RMS, cv), or None (no row)."""
    err = _ERROR_ROW.match(line.strip())
    if err:
        status = "error" if err.group("kind") == "ERROR OCCURRED" else "missing"
        return _Row(
            name=err.group("name"), line=number, raw=line, status=status, message=err.group("msg")
        )
    m = _ROW.fullmatch(line.strip())
    if m is None:
        first = line.split()[0] if line.split() else ""
        if first and re.search(rf"\s(?:{NUMBER})\s*(?:[a-z]+)?\s*$", line):
            return f"Google Benchmark row {first!r} is cut or cannot be read"
        return None
    name = m.group("name")
    if name.endswith(("_BigO", "_RMS")):
        return ""
    ru, cu = m.group("ru"), m.group("cu")
    if ru == "%" or name.endswith("_cv"):
        row = _Row(name=name, line=number, raw=line, aggregate="cv", aggregate_unit="percentage")
        row.real, row.cpu = float(m.group("rt")) / 100, float(m.group("ct")) / 100
        return row
    ru, cu = ru.replace("µ", "u").replace("μ", "u"), cu.replace("µ", "u").replace("μ", "u")
    if ru not in _TIME_UNITS or cu not in _TIME_UNITS:
        return f"Google Benchmark row {name!r}: unit {ru!r} is not a time unit"
    if m.group("it") is None:
        return f"Google Benchmark row {name!r} has no iteration count (cut?)"
    row = _Row(name=name, line=number, raw=line, time_unit=ru)
    row.real = float(m.group("rt"))
    row.cpu = float(m.group("ct")) * _factor(cu, ru)
    row.stats["iterations"] = int(m.group("it"))
    t = re.search(r"/threads:(\d+)", name)
    if t:
        row.threads = int(t.group(1))
    rest = m.group("rest")
    _console_counters(row, rest, tabular)
    return row


def _factor(unit: str, to: str) -> float:
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return scale[unit] / scale[to]


def _console_counters(row: _Row, rest: str, tabular: list[str]) -> None:
    found = False
    for c in _COUNTER.finditer(rest):
        found = True
        value = _human(c.group("num"), c.group("suffix"))
        key = c.group("key")
        if key in _RATES:
            row.rates[key] = value
        else:
            row.counters[key] = value
    for r in _OLD_RATE.finditer(rest):
        found = True
        key = "bytes_per_second" if r.group("what") == "B/s" else "items_per_second"
        row.rates[key] = _human(r.group("num"), r.group("suffix"))
    if found or not tabular:
        if not found and rest.strip():
            row.stats["label"] = rest.strip()
        return
    cells = rest.split()
    for key, cell in zip(tabular, cells, strict=False):
        c = re.fullmatch(
            r"(?P<num>[-+]?[\d.]+(?:[eE][-+]?\d+)?)(?P<suffix>[kMGTPEZY]i?|[munp])?"
            r"(?P<rate>/s)?",
            cell,
        )
        if not c:
            continue
        value = _human(c.group("num"), c.group("suffix"))
        if key in _RATES:
            row.rates[key] = value
        else:
            row.counters[key] = value


def _mark_aggregates(rows: list[_Row]) -> None:
    """ "BM_x_mean" after rows named "BM_x": an aggregate of BM_x (console and CSV print no
    run_name); a name that merely ends in "_mean" stays a benchmark of its own."""
    seen: set[str] = set()
    for row in rows:
        m = _AGG_SUFFIX.search(row.name)
        if m and row.name[: m.start()] in seen:
            row.run_name = row.name[: m.start()]
            row.aggregate = row.aggregate or m.group(1)
        elif not row.aggregate:
            seen.add(row.name)
        elif m:
            row.run_name = row.name[: m.start()]


# -- CSV ---------------------------------------------------------------------------------


def _csv(doc: DocText, pos: int) -> tuple[list[Item], int] | None:
    text = doc.text
    line_start, line_end = doc.line_bounds(pos)
    header = next(csv.reader([text[line_start:line_end]]))
    header = [h.strip() for h in header]
    if header[:5] != ["name", "iterations", "real_time", "cpu_time", "time_unit"]:
        return None
    number = doc.line_at(line_start)
    start = line_end + 1
    rows: list[_Row] = []
    items: list[Item] = []
    end = line_end
    for _ in range(MAX_TABLE_LINES):
        if start > len(text):
            break
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop]
        number += 1
        if not line.strip() or not (line.startswith('"') or line[:1].isalnum()):
            break
        cells = next(csv.reader([line]))
        end, start = stop, stop + 1
        if len(cells) < 5:
            items.append(Problem(number, "Google Benchmark CSV row is cut", line, NAME))
            continue
        record = dict(zip(header, cells, strict=False))
        row = _Row(name=record["name"], line=number, raw=line)
        if record.get("error_occurred", "").strip().lower() == "true":
            row.status, row.message = "error", record.get("error_message", "")
            rows.append(row)
            continue
        if record["name"].endswith(("_BigO", "_RMS")):
            continue
        row.time_unit = record["time_unit"] or "ns"
        for key in ("real_time", "cpu_time"):
            try:
                setattr(row, key.split("_")[0], float(record[key]))
            except ValueError:
                setattr(row, key.split("_")[0], record[key])
        if record["iterations"].isdigit():
            row.stats["iterations"] = int(record["iterations"])
        for key in _RATES:
            if record.get(key):
                try:
                    row.rates[key] = float(record[key])
                except ValueError:
                    row.rates[key] = record[key]
        if record.get("label"):
            row.stats["label"] = record["label"]
        for key in header[10:]:
            with contextlib.suppress(ValueError):
                row.counters[key] = float(record.get(key) or "")
        t = re.search(r"/threads:(\d+)", row.name)
        if t:
            row.threads = int(t.group(1))
        if row.name.endswith("_cv"):
            row.aggregate, row.aggregate_unit = "cv", "percentage"
        rows.append(row)
    if not rows and not items:
        return None
    _mark_aggregates(rows)
    return items + _items(rows, _Context()), end
