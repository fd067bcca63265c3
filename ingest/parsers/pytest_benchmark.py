"""pytest-benchmark results: ``--benchmark-json`` files and saved runs.

The keys were taken from the plugin's own code (ionelmc/pytest-benchmark
src/pytest_benchmark/session.py ``handle_saving``, utils.py ``get_machine_info`` /
``get_commit_info``, stats.py ``Stats.fields`` and fixture.py ``as_dict``, 3.x-5.x):
``{"machine_info": {"node", "processor", "machine", "python_compiler",
"python_implementation", "python_implementation_version", "python_version",
"python_build", "release", "system", "cpu": {"vendor_id", "brand_raw" (py-cpuinfo; "brand"
in 3.x), ...}}, "commit_info": {"id", "time", "author_time", "dirty", "project",
"branch"}, "benchmarks": [{"group", "name", "fullname", "params", "param", "extra_info",
"options": {...}, "stats": {"min", "max", "mean", "stddev", "rounds", "median", "iqr",
"q1", "q3", "iqr_outliers", "stddev_outliers", "outliers", "ld15iqr", "hd15iqr", "ops",
"total", "data" (with --benchmark-save-data), "iterations"}}], "datetime", "version"}``.
Saved runs (``.benchmarks/<machine>/0001_<commit>_<date>.json``) have the same shape.
All times are in seconds, ``ops`` is 1/mean per second.

The terminal table (table.py ``TableResults.display``, also ``pytest-benchmark compare``):
a rule ``---- benchmark 'group': N tests ----`` (``benchmark: N tests`` without a group),
the header ``Name (time in us)  Min  Max  Mean  StdDev  Median  IQR  Outliers  OPS
(Kops/s)  Rounds  Iterations`` (the columns of ``--benchmark-columns``, in its order; the
time unit ``ns``/``us``/``ms``/``s`` and the OPS prefix ``""``/``K``/``M`` scaled per
table), a rule, one row per test with numbers as ``{:,.4f}`` and, beside a baseline, a
relative value in parentheses (``1.0080 (1.0)``, ``(>1000.0)``, ``(inf)``), ``Outliers``
as ``"1;2"``, and a closing rule. A log prefix before the header (``svc_1  | ``) is cut off
every row. The table gives the same metrics (no q1/q3; IQR in stats); its parentheses are
dropped, its rows have no version, testbed or date.

Decisions:

- ``benchmark`` is the test's ``fullname`` ("bench.py::test_fib_10"), without its
  parametrisation suffix ("[10-fast]") when the test is parametrised: the parameters go in
  params (``params``' values, scalars as they are, others as JSON text), with ``group``
  when set. ``framework`` and ``device`` are "", ``task`` "microbenchmark".
- metric ``time`` (ms, lower) with ``stat`` "min", "max", "mean", "median", "std"
  (stddev), "p25" (q1) and "p75" (q3); metric ``ops`` (ops/s, higher) without a stat.
  ``rounds`` is the Measurement's ``samples``; ``iterations``, ``iqr`` and ``total`` (in
  ms), ``outliers`` and ``extra_info`` (when not empty) go in stats.
- ``version`` = commit_info.id (with ``stats["dirty"]`` when the tree was dirty);
  ``measured_at`` = ``datetime`` (the plugin writes UTC without a zone); testbed: node,
  processor, machine, python_implementation, python_version, the cpu's brand_raw/brand,
  and the plugin version (``pytest_benchmark``).
- A benchmark without stats (a failed or skipped test saved no stats) is skipped with a
  warning; a statistic that is no number or negative is a Problem. A cut JSON object is a
  Problem at its first line.

Speed: one ``re.finditer`` on ``"benchmarks"`` and one on ``Name (time in ``; a
``"benchmarks"`` key is decoded only with a ``"stats"`` after it or a ``"machine_info"``
before it within JSON_WINDOW (those keys found once per text); a table's rows are walked
to its closing rule.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ingest.parsers.jsonscan import cut_object, find_object, near, positions
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "pytest_benchmark"
ANCHORS: tuple[str, ...] = ('"machine_info"', '"stddev_outliers"', "Name (time in ")

TASK = "microbenchmark"
JSON_WINDOW = 65536  # machine_info above "benchmarks", a first row's "stats" below it
MAX_JSON_HEAD = 1 << 20  # how far above the key the object's "{" may be

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("json", re.compile(r'"benchmarks"\s*:')),
    ("table", re.compile(r"Name \(time in ")),
)
# stats key -> params["stat"] of metric "time"
_TIME_STATS = {
    "min": "min",
    "max": "max",
    "mean": "mean",
    "stddev": "std",
    "median": "median",
    "q1": "p25",
    "q3": "p75",
}
_TESTBED_KEYS = ("node", "processor", "machine", "python_implementation", "python_version")
_PARAM_SUFFIX = re.compile(r"\[[^\[\]]*\]$")
_RAW = re.compile(r'"[^"\n]*"\s*:\s*(?:"[^"\n]*"|[^,}\]\n]*)')


def parse(doc: DocText) -> Iterator[Item]:
    """time (per statistic) and ops Measurements of every pytest-benchmark result."""
    text = doc.text
    consumed = -1
    tried: set[int] = set()
    marks: tuple[list[int], list[int]] | None = None
    for pos, kind, _m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        if kind == "table":
            found = _table(doc, pos)
            if found is not None:
                yield from found[0]
                consumed = found[1]
            continue
        # A cheap look first: a result has "machine_info" above its "benchmarks" key or a
        # "stats" object in its first row; only then the JSON reader.
        if marks is None:
            marks = (positions(text, '"stats"'), positions(text, '"machine_info"'))
        if not (near(marks[0], pos, pos + JSON_WINDOW) or near(marks[1], pos - JSON_WINDOW, pos)):
            continue
        floor = max(consumed, pos - MAX_JSON_HEAD, 0)
        obj, start, end, joined = find_object(text, pos, "benchmarks", floor, tried)
        if obj is None:
            if start >= 0 and '"machine_info"' in text[start:pos]:
                problem, consumed = cut_object(doc, start, "pytest-benchmark JSON", NAME)
                yield problem
            continue
        if not _is_pytest_benchmark(obj):
            continue
        items: list[Item] = []
        if joined:
            items.append(
                Problem(
                    doc.line_at(start),
                    "pytest-benchmark JSON is wrapped over "
                    "lines: read with its line breaks removed",
                    doc.line_text(start),
                    NAME,
                    "warning",
                )
            )
        items += _read(doc, obj, pos, end)
        items.sort(key=lambda item: item.line)
        yield from items
        consumed = end


def _is_pytest_benchmark(obj: dict[str, Any]) -> bool:
    rows = obj.get("benchmarks")
    if not isinstance(rows, list):
        return False
    if any(isinstance(r, dict) and isinstance(r.get("stats"), dict) for r in rows):
        return True
    return "machine_info" in obj and not rows


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _testbed(obj: dict[str, Any]) -> dict[str, str]:
    testbed: dict[str, str] = {}
    info = obj.get("machine_info")
    if isinstance(info, dict):
        for key in _TESTBED_KEYS:
            if isinstance(info.get(key), str | int | float) and info[key] != "":
                testbed[key] = str(info[key])
        cpu = info.get("cpu")
        if isinstance(cpu, dict):
            brand = cpu.get("brand_raw") or cpu.get("brand")
            if isinstance(brand, str) and brand:
                testbed["cpu"] = brand
    if isinstance(obj.get("version"), str):
        testbed["pytest_benchmark"] = obj["version"]
    return testbed


def _param_value(value: Any) -> ParamValue:
    if isinstance(value, str | int | float | bool) and value is not None:
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _read(doc: DocText, obj: dict[str, Any], pos: int, end: int) -> list[Item]:
    text = doc.text
    testbed = _testbed(obj)
    commit = obj.get("commit_info") if isinstance(obj.get("commit_info"), dict) else {}
    version = str(commit["id"]) if commit.get("id") else None
    measured_at = None
    if isinstance(obj.get("datetime"), str):
        try:
            measured_at = datetime.fromisoformat(obj["datetime"])
        except ValueError:
            measured_at = None
    items: list[Item] = []
    cursor = pos
    for row in obj["benchmarks"]:
        if not isinstance(row, dict):
            continue
        name_at = text.find('"name"', cursor, end)
        stats_at = text.find('"stats"', cursor, end)
        row_line = doc.line_at(name_at if name_at >= 0 else cursor)
        fullname = str(row.get("fullname") or row.get("name") or "")
        stats = row.get("stats")
        if not isinstance(stats, dict):
            items.append(
                Problem(
                    row_line,
                    f"benchmark {fullname!r} has no stats (failed or skipped)",
                    doc.line_text(name_at if name_at >= 0 else cursor),
                    NAME,
                    "warning",
                )
            )
            if name_at >= 0:
                cursor = name_at + 6
            continue
        next_stats = text.find('"stats"', stats_at + 7, end) if stats_at >= 0 else -1
        row_end = next_stats if next_stats >= 0 else end
        params: dict[str, ParamValue] = {}
        benchmark = fullname
        given = row.get("params")
        if isinstance(given, dict) and given:
            benchmark = _PARAM_SUFFIX.sub("", fullname)
            for key, value in given.items():
                params[str(key)] = _param_value(value)
        elif row.get("param") is not None and _PARAM_SUFFIX.search(fullname):
            benchmark = _PARAM_SUFFIX.sub("", fullname)
            params["param"] = _param_value(row["param"])
        if row.get("group"):
            params["group"] = str(row["group"])
        extra: dict[str, Any] = {}
        for key in ("iterations", "outliers", "iqr_outliers", "stddev_outliers"):
            if key in stats and not isinstance(stats[key], dict | list):
                extra[key] = stats[key]
        for key in ("iqr", "total"):
            if _number(stats.get(key)):
                extra[f"{key}_ms"] = float(stats[key]) * 1e3
        if row.get("name") and row.get("name") != fullname:
            extra["name"] = row["name"]
        if isinstance(row.get("extra_info"), dict) and row["extra_info"]:
            extra["extra_info"] = row["extra_info"]
        if commit.get("dirty"):
            extra["dirty"] = True
        rounds = stats.get("rounds") if isinstance(stats.get("rounds"), int) else None
        start = stats_at if stats_at >= 0 else cursor
        values: list[tuple[str, str | None, str, Any]] = [
            ("time", stat, key, stats.get(key)) for key, stat in _TIME_STATS.items()
        ]
        values.append(("ops", None, "ops", stats.get("ops")))
        for metric, stat, key, value in values:
            if value is None:
                continue
            key_at = text.find(f'"{key}"', start, row_end)
            line = doc.line_at(key_at) if key_at >= 0 else row_line
            m = _RAW.match(text, key_at, row_end) if key_at >= 0 else None
            raw = f"{fullname} {m.group().strip()}" if m else f"{fullname} {key}: {value}"
            if not _number(value):
                items.append(
                    Problem(line, f"{fullname} {key} {value!r} is not a number", raw, NAME)
                )
                continue
            unit = "s" if metric == "time" else "ops/s"
            item = _measurement(benchmark, metric, stat, float(value), unit, params, line, raw)
            if isinstance(item, Measurement):
                item.testbed = dict(testbed)
                item.version, item.measured_at = version, measured_at
                item.samples, item.stats = rounds, dict(extra)
            items.append(item)
        cursor = stats_at + 7 if stats_at >= 0 else row_end
    return items


# -- the console table ------------------------------------------------------------------

_TABLE_HEADER = re.compile(r"Name \(time in (?P<unit>[a-zµμ]*)s\)")
_LABEL = re.compile(
    r"OPS \((?P<prefix>[a-zA-Z]*)ops/s\)|OPS|Min|Max|Mean|StdDev|Median|IQR|Outliers|Rounds"
    r"|Iterations"
)
_GROUP = re.compile(r"-+ benchmark(?: '(?P<group>.*)')?: \d+ tests? -+")
_CELL = re.compile(
    r"(?P<outliers>\d[\d,]*;\d[\d,]*)|(?P<num>[-+]?(?:[\d,]*\.?\d+(?:[eE][-+]?\d+)?|nan|inf))"
    r"(?:[ \t]*\((?:[\d.]+|>1000\.0|inf)\))?"
)
_ROW_START = re.compile(r"(?P<name>\S.*?)[ \t]{2,}(?=[-+\d.])")
_OPS_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TABLE_STATS = {"Min": "min", "Max": "max", "Mean": "mean", "StdDev": "std", "Median": "median"}
MAX_TABLE_LINES = 10_000


def _table(doc: DocText, pos: int) -> tuple[list[Item], int] | None:
    """The compare table ("Name (time in us)  Min  Max ... OPS (Kops/s)  Rounds ...")."""
    text = doc.text
    line_start, line_end = doc.line_bounds(pos)
    header_line = text[line_start:line_end]
    header = _TABLE_HEADER.search(header_line)
    if header is None:
        return None
    # A log prefix before the header ("service_1  | ") is on every row: cut it off.
    prefix = header_line[: header.start()]
    unit = header.group("unit").replace("µ", "u").replace("μ", "u") + "s"
    labels = list(_LABEL.finditer(header_line, header.end()))
    if not labels:
        return None
    columns = [m.group() if not m.group().startswith("OPS") else "OPS" for m in labels]
    ops_prefix = next((m.group("prefix") or "" for m in labels if m.group().startswith("OPS")), "")
    group = None
    above_start = text.rfind("\n", 0, max(0, line_start - 1)) + 1
    g = _GROUP.search(text[above_start:line_start])
    if g:
        group = g.group("group")
    items: list[Item] = []
    number = doc.line_at(line_start)
    start, end = line_end + 1, line_end
    seen_rule = False
    for _ in range(MAX_TABLE_LINES):
        if start > len(text):
            break
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        line = text[start:stop]
        number += 1
        written = line
        if prefix and line.startswith(prefix):
            line = line[len(prefix) :]
        stripped = line.strip()
        if stripped and set(stripped) <= {"-"}:
            end, start = stop, stop + 1
            if seen_rule:
                break
            seen_rule = True
            continue
        if not stripped:
            break
        items += _table_row(line, written, number, columns, (unit, ops_prefix), group)
        end, start = stop, stop + 1
    return items, end


def _table_row(
    line: str,
    written: str,
    number: int,
    columns: list[str],
    units: tuple[str, str],
    group: str | None,
) -> list[Item]:
    """One row of the table: Measurements, or a Problem; ``written`` is the line as written
    (with its log prefix), kept as raw."""
    unit, ops_prefix = units
    m = _ROW_START.match(line)
    if m is None:
        return [Problem(number, "pytest-benchmark table row cannot be read", written, NAME)]
    name = m.group("name").strip()
    cells = list(_CELL.finditer(line, m.end()))
    if len(cells) < len(columns):
        return [
            Problem(
                number,
                f"pytest-benchmark row {name!r} is cut: {len(cells)} of {len(columns)} columns",
                written,
                NAME,
            )
        ]
    params: dict[str, ParamValue] = {"group": group} if group else {}
    stats: dict[str, Any] = {}
    samples = None
    values: list[tuple[str, str | None, float, str]] = []
    for column, cell in zip(columns, cells, strict=False):
        if cell.group("outliers"):
            stats["outliers"] = cell.group("outliers")
            continue
        cell_text = cell.group("num").replace(",", "")
        try:
            value = float(cell_text)
        except ValueError:
            reason = f"{name} {column} {cell_text!r} is not a number"
            return [Problem(number, reason, written, NAME)]
        if column in _TABLE_STATS:
            values.append(("time", _TABLE_STATS[column], value, unit))
        elif column == "OPS":
            if ops_prefix not in _OPS_PREFIX:
                return [Problem(number, f"OPS unit {ops_prefix}ops/s is unknown", written, NAME)]
            values.append(("ops", None, value * _OPS_PREFIX[ops_prefix], "ops/s"))
        elif column == "IQR":
            with contextlib.suppress(UnitError):
                stats["iqr_ms"] = normalise(value, unit).value
        elif column == "Rounds" and value.is_integer():
            samples = int(value)
        elif column == "Iterations" and value.is_integer():
            stats["iterations"] = int(value)
    items: list[Item] = []
    for metric, stat, value, written_unit in values:
        item = _measurement(name, metric, stat, value, written_unit, params, number, written)
        if isinstance(item, Measurement):
            item.samples, item.stats = samples, dict(stats)
        items.append(item)
    return items


def _measurement(
    benchmark: str,
    metric: str,
    stat: str | None,
    value: float,
    unit: str,
    params: dict[str, ParamValue],
    line: int,
    raw: str,
) -> Measurement | Problem:
    """One statistic of one benchmark, or the Problem of a value no unit can take."""
    try:
        q = normalise(value, unit)
    except UnitError as e:
        return Problem(line, f"{benchmark} {metric}: {e}", raw, NAME)
    return Measurement(
        benchmark=benchmark,
        metric=metric,
        value=q.value,
        unit=q.unit,
        task=TASK,
        direction=q.direction,  # type: ignore[arg-type]
        framework="",
        params={**params, "stat": stat} if stat else dict(params),
        line=line,
        raw=raw,
    )
