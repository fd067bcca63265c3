"""hyperfine results: its console report and its JSON, CSV, markdown/org-mode and AsciiDoc
exports.

The strings were taken from sharkdp/hyperfine's output code (src/hyperfine/benchmark.rs
and src/benchmark/mod.rs for the console, src/export/{json,csv,markup,markdown,orgmode,
asciidoc}.rs, earlier src/hyperfine/export/*.rs):

- Console: ``Benchmark 1: sleep 0.1`` (``Benchmark #1:`` before 1.12), then
  ``  Time (mean ± σ):     104.8 ms ±   0.6 ms    [User: 0.9 ms, System: 1.5 ms]`` and
  ``  Range (min … max):   103.9 ms … 106.1 ms    10 runs``; a single run prints
  ``  Time (abs ≡):        104.8 ms               [User: ..., System: ...]`` and no range.
  Units are chosen per benchmark from the mean: "s", "ms" or "µs" (format_duration).
  With several commands a ``Summary`` follows (``'sleep 0.1' ran 1.49 ± 0.01 times faster
  than 'sleep 0.15'``).
- ``--export-json``: ``{"results": [{"command", "mean", "stddev" (null for one run),
  "median", "user", "system", "min", "max", "times", "exit_codes", "parameters"
  (--parameter-scan / -L: name -> value), "memory_usage_byte" (newer)}]}``, in seconds;
  newer versions add ``"metadata": {"hyperfine_version", "start_time", "platform": {"os",
  "architecture"}}``.
- ``--export-csv``: ``command,mean,stddev,median,user,system,min,max`` in seconds plus one
  ``parameter_NAME`` column per parameter; the development branch writes
  ``command,time_wall_clock_unit,time_wall_clock_mean,...`` (per metric: ``_unit``,
  ``_mean``, ``_stddev``, ``_median``, ``_min``, ``_max``).
- ``--export-markdown``: ``| Command | Mean [ms] | Min [ms] | Max [ms] | Relative |``, a
  ``|:---|---:|...`` divider, command cells in backticks with "|" escaped as "\\|", the
  mean cell ``104.8 ± 0.6`` (no "±" for one run), the unit in the header;
  ``--export-orgmode``: the same cells padded ``| =cmd=  |  104.8 ± 0.6 |``, a
  ``|--+--+--|`` divider, the command in ``=...=``. ``--export-asciidoc``:
  ``[cols="<,>,>,>,>"]``, ``|===``, then one ``| cell`` per line, rows separated by a blank
  line, ``|===`` at the end.

Decisions:

- benchmark = the command as written (hyperfine does not say what ran inside it), framework
  "", device "". metric ``time`` (wall clock, ms, lower is better) with stat "mean",
  "std", "median", "min", "max" as the format prints them; ``user_time`` and
  ``system_time`` stat "mean" (the console's and JSON's User/System are means). The
  development CSV's other metrics: ``cpu_time``, ``peak_memory`` (MB), every stat printed.
- params: the JSON ``parameters`` and the CSV ``parameter_*`` columns (values as written).
  The console and markdown print the command with the parameter substituted, so the
  command alone tells the series apart there.
- samples = the number of runs (``N runs``, the JSON ``times``); stats["failed_runs"] =
  the runs with a non-zero exit code (JSON), when any; testbed: hyperfine_version, os,
  architecture (JSON metadata); measured_at = metadata.start_time.
- "Relative" cells and the Summary's "x times faster" are ratios derived from the means:
  not read (skipped, not stored in stats).
- Problems: a Time or Range line that does not read (cut), a unit that is not a time, a
  markdown row without its closing "|" or with missing cells, a mean cell that is no "mean
  ± std", a CSV row with fewer values than its header, a JSON export that is cut. A
  console report coloured with ANSI escapes is not read.

Speed: one ``re.finditer`` per literal entry point ("Time (mean ± σ):", "Time (abs ≡):",
'"results"', "Mean [", "command,mean,stddev", "command,time_wall_clock_unit"), merged
by position; only the lines of a report or table found are walked.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.parsers.cells import NUMBER
from ingest.parsers.jsonscan import find_object
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "hyperfine"
ANCHORS: tuple[str, ...] = (
    "Time (mean ± σ):",
    "Time (abs ≡):",
    '"results"',
    "Mean [",
    "command,mean,stddev",
    "command,time_wall_clock_unit",
)

MAX_ROWS = 10_000
BENCHMARK_LOOKBACK = 6  # lines above a Time line its "Benchmark N:" line may be

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("time", re.compile(r"Time \(mean ± σ\):")),
    ("abs", re.compile(r"Time \(abs ≡\):")),
    ("json", re.compile(r'"results"\s*:\s*\[')),
    ("table", re.compile(r"Mean \[")),
    ("csv", re.compile(r"command,mean,stddev[^\n]*")),
    ("csv2", re.compile(r"command,time_wall_clock_unit[^\n]*")),
)

_NUM = NUMBER
_UNIT = r"[A-Za-zµμ]+"
_ELLIPSIS = r"(?:…|\.\.\.)"  # NFKC turns "…" into "..."
_USER_SYSTEM = (
    rf"\[User:\s*(?P<user>{_NUM})\s*(?P<uunit>{_UNIT}),"
    rf"\s*System:\s*(?P<sys>{_NUM})\s*(?P<sunit>{_UNIT})\]"
)
_TIME_LINE = re.compile(
    rf"Time \(mean ± σ\):\s*(?P<mean>{_NUM})\s*(?P<munit>{_UNIT})\s*±\s*(?P<std>{_NUM})\s*"
    rf"(?P<sdunit>{_UNIT})(?:\s*{_USER_SYSTEM})?"
)
_ABS_LINE = re.compile(
    rf"Time \(abs ≡\):\s*(?P<mean>{_NUM})\s*(?P<munit>{_UNIT})(?:\s*{_USER_SYSTEM})?"
)
_RANGE_LINE = re.compile(
    rf"Range \(min {_ELLIPSIS} max\):\s*(?P<min>{_NUM})\s*(?P<minunit>{_UNIT})\s*{_ELLIPSIS}\s*"
    rf"(?P<max>{_NUM})\s*(?P<maxunit>{_UNIT})(?:\s*(?P<runs>\d+) runs?)?"
)
_BENCHMARK_LINE = re.compile(r"Benchmark #?\d+: (?P<command>.+?)\s*$")
_HEADER_CELL = re.compile(r"(?P<stat>Mean|Median|Min|Max|User|System) \[(?P<unit>[^\]]+)\]")
_MEAN_CELL = re.compile(rf"(?P<mean>{_NUM})(?:\s*±\s*(?P<std>{_NUM}))?")
_PIPE = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"[|:+\- \t]+")

# Header stat -> (metric, stat) of the markup tables.
_TABLE_STATS = {
    "Mean": ("time", "mean"),
    "Median": ("time", "median"),
    "Min": ("time", "min"),
    "Max": ("time", "max"),
    "User": ("user_time", "mean"),
    "System": ("system_time", "mean"),
}
# The JSON's and classic CSV's keys, in seconds -> (metric, stat).
_KEYS = (
    ("mean", "time", "mean"),
    ("stddev", "time", "std"),
    ("median", "time", "median"),
    ("min", "time", "min"),
    ("max", "time", "max"),
    ("user", "user_time", "mean"),
    ("system", "system_time", "mean"),
)
# The development CSV's metric names -> metric.
_CSV_METRICS = {
    "time_wall_clock": "time",
    "time_user": "user_time",
    "time_system": "system_time",
    "time_cpu": "cpu_time",
    "memory_peak_resident": "peak_memory",
}
_CSV_STATS = {"mean": "mean", "stddev": "std", "median": "median", "min": "min", "max": "max"}
# Units normalise does not know, as (factor, unit it knows).
_UNIT_ALIASES = {"kib": (1 / 1024, "MiB"), "tib": (1024.0, "GiB")}


@dataclass
class _Series:
    benchmark: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    testbed: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    samples: int | None = None
    measured_at: datetime | None = None


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements and Problems of every hyperfine report and export in the text."""
    text = doc.text
    resume = 0
    floor = 0
    tried: set[int] = set()
    for pos, kind, m in hits(text, _PATTERNS):
        if pos < resume:
            continue
        if kind in ("time", "abs"):
            items, end = _console(doc, pos, kind)
        elif kind == "json":
            items, end = _json(doc, pos, floor, tried)
        elif kind == "table":
            found = _table(doc, pos)
            if found is None:
                continue
            items, end = found
        else:
            items, end = _csv(doc, m, kind)
        yield from sorted(items, key=lambda i: i.line)
        resume = floor = max(end, pos + 1)


def _problem(line: int, reason: str, raw: str, severity: str = "error") -> Problem:
    return Problem(line, reason, raw, NAME, severity)  # type: ignore[arg-type]


def _measure(
    series: _Series,
    metric: str,
    stat: str,
    number: float,
    unit: str,
    line: int,
    raw: str,
    items: list[Item],
    kind: str = "time",
) -> None:
    alias = _UNIT_ALIASES.get(unit.strip().lower())
    if alias:
        number, unit = number * alias[0], alias[1]
    try:
        q = normalise(number, unit)
    except UnitError as e:
        items.append(_problem(line, f"{metric} {stat}: {e}", raw))
        return
    if q.kind != kind:
        items.append(_problem(line, f"{metric} {stat} in {unit!r} is not a {kind}", raw))
        return
    items.append(
        Measurement(
            benchmark=series.benchmark,
            metric=metric,
            value=q.value,
            unit=q.unit,
            direction=q.direction,  # type: ignore[arg-type]
            framework="",
            params={**series.params, "stat": stat},
            testbed=dict(series.testbed),
            samples=series.samples,
            measured_at=series.measured_at,
            stats=dict(series.stats),
            line=line,
            raw=raw,
        )
    )


# -- console ------------------------------------------------------------------------------


def _console(doc: DocText, pos: int, kind: str) -> tuple[list[Item], int]:
    text = doc.text
    start, end = doc.line_bounds(pos)
    line = text[start:end]
    number = doc.line_at(start)
    items: list[Item] = []
    series = _Series(benchmark=_command_above(text, start))
    m = (_TIME_LINE if kind == "time" else _ABS_LINE).search(line)
    if not m:
        items.append(_problem(number, "hyperfine Time line cannot be read (cut?)", line))
        return items, end
    rng = None
    consumed = end
    if kind == "time":
        nxt_start = end + 1
        nxt_end = text.find("\n", nxt_start)
        nxt_end = len(text) if nxt_end < 0 else nxt_end
        nxt = text[nxt_start:nxt_end] if nxt_start <= len(text) else ""
        if "Range (min" in nxt:
            consumed = nxt_end
            rng = _RANGE_LINE.search(nxt)
            if rng is None:
                items.append(
                    _problem(number + 1, "hyperfine Range line cannot be read (cut?)", nxt)
                )
            elif rng.group("runs"):
                series.samples = int(rng.group("runs"))
        else:
            reason = "hyperfine Time line without its Range line (cut?)"
            items.append(_problem(number, reason, line, "warning"))
    else:
        series.samples = 1
    _measure(series, "time", "mean", float(m.group("mean")), m.group("munit"), number, line, items)
    if kind == "time":
        std, unit = float(m.group("std")), m.group("sdunit")
        _measure(series, "time", "std", std, unit, number, line, items)
    if m.group("user") is not None:
        for group, unit, metric in (
            ("user", "uunit", "user_time"),
            ("sys", "sunit", "system_time"),
        ):
            value = float(m.group(group))
            _measure(series, metric, "mean", value, m.group(unit), number, line, items)
    if rng is not None:
        raw = rng.string
        for stat, unit in (("min", "minunit"), ("max", "maxunit")):
            value = float(rng.group(stat))
            _measure(series, "time", stat, value, rng.group(unit), number + 1, raw, items)
    return items, consumed


def _command_above(text: str, start: int) -> str:
    """The command of the "Benchmark N: ..." line a few lines above a Time line."""
    pos = start
    for _ in range(BENCHMARK_LOOKBACK):
        if pos <= 0:
            break
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev : pos - 1]
        if "Time (" in line or "Range (" in line:
            break  # the report above
        m = _BENCHMARK_LINE.search(line)
        if m:
            return m.group("command")
        pos = prev
    return ""


# -- JSON ---------------------------------------------------------------------------------


def _json(doc: DocText, pos: int, floor: int, tried: set[int]) -> tuple[list[Item], int]:
    text = doc.text
    obj, start, end, joined = find_object(text, pos, "results", floor, tried)
    if obj is None:
        if start < 0:
            return [], pos + 1
        reason = "hyperfine JSON export cannot be read (cut?)"
        return [_problem(doc.line_at(start), reason, doc.line_text(start))], pos + 1
    results = obj.get("results")
    if not isinstance(results, list) or not all(
        isinstance(r, dict) and "command" in r and "mean" in r for r in results
    ):
        return [], end
    items: list[Item] = []
    base = _Series()
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        if meta.get("hyperfine_version"):
            base.testbed["hyperfine_version"] = str(meta["hyperfine_version"])
        platform = meta.get("platform")
        if isinstance(platform, dict):
            for key in ("os", "architecture"):
                if platform.get(key):
                    base.testbed[key] = str(platform[key])
        if meta.get("start_time"):
            try:
                stamp = datetime.fromisoformat(str(meta["start_time"]).replace("Z", "+00:00"))
                base.measured_at = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
            except ValueError:
                pass
    commands = [m.start() for m in re.finditer(r'"command"\s*:', text[start:end])]
    first_line = doc.line_at(start)
    for index, result in enumerate(results):
        at = start + commands[index] if len(commands) == len(results) else start
        number = doc.line_at(at) if at != start else first_line
        raw = doc.line_text(at).strip()
        series = _Series(
            benchmark=str(result["command"]),
            testbed=dict(base.testbed),
            measured_at=base.measured_at,
        )
        parameters = result.get("parameters")
        if isinstance(parameters, dict):
            series.params = {str(k): _param(v) for k, v in parameters.items()}
        times = result.get("times")
        if isinstance(times, list):
            series.samples = len(times)
        codes = result.get("exit_codes")
        if isinstance(codes, list):
            failed = sum(1 for c in codes if c != 0)
            if failed:
                series.stats["failed_runs"] = failed
        for key, metric, stat in _KEYS:
            value = result.get(key)
            if value is None:
                continue  # stddev of a single run
            if not isinstance(value, int | float) or isinstance(value, bool):
                items.append(_problem(number, f"hyperfine {key} {value!r} is no number", raw))
                continue
            _measure(series, metric, stat, float(value), "s", number, raw, items)
    if joined:
        reason = "hyperfine JSON read with its line breaks removed"
        items.append(_problem(first_line, reason, doc.line_text(start), "warning"))
    return items, end


def _param(value: Any) -> ParamValue:
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)


# -- CSV ----------------------------------------------------------------------------------


def _csv(doc: DocText, m: re.Match[str], kind: str) -> tuple[list[Item], int]:
    text = doc.text
    header_line = m.group().strip()
    fields = next(csv.reader([header_line]))
    number = doc.line_at(m.start())
    lines: list[tuple[int, str]] = []
    pos = m.end() + 1
    end = m.end()
    while pos < len(text) and len(lines) < MAX_ROWS:
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        line = text[pos:line_end]
        if not line.strip() or line.lstrip().startswith(("```", "|", "#")):
            break
        number += 1
        lines.append((number, line))
        end = line_end
        pos = line_end + 1
    items: list[Item] = []
    for row_number, line in lines:
        values = next(csv.reader(io.StringIO(line)), [])
        if len(values) != len(fields):
            reason = f"hyperfine CSV row has {len(values)} values, its header {len(fields)} (cut?)"
            items.append(_problem(row_number, reason, line))
            continue
        row = dict(zip(fields, values, strict=True))
        series = _Series(benchmark=row.get("command", ""))
        series.params = {
            k[len("parameter_") :]: v for k, v in row.items() if k.startswith("parameter_")
        }
        if kind == "csv":
            for key, metric, stat in _KEYS:
                _csv_value(series, row, key, metric, stat, "s", row_number, line, items)
        else:
            for name, metric in _CSV_METRICS.items():
                if f"{name}_unit" not in row:
                    continue
                unit = row[f"{name}_unit"] or ("B" if name.startswith("memory") else "s")
                what = "memory" if name.startswith("memory") else "time"
                for suffix, stat in _CSV_STATS.items():
                    key = f"{name}_{suffix}"
                    _csv_value(series, row, key, metric, stat, unit, row_number, line, items, what)
    return items, end


def _csv_value(
    series: _Series,
    row: dict[str, str],
    key: str,
    metric: str,
    stat: str,
    unit: str,
    number: int,
    line: str,
    items: list[Item],
    kind: str = "time",
) -> None:
    cell = row.get(key, "").strip()
    if not cell:
        return  # stddev of a single run, a metric not measured
    try:
        value = float(cell)
    except ValueError:
        items.append(_problem(number, f"hyperfine CSV {key} {cell!r} is no number", line))
        return
    _measure(series, metric, stat, value, unit, number, line, items, kind)


# -- markdown, org-mode, AsciiDoc -----------------------------------------------------------


def _split(line: str) -> tuple[list[str], bool]:
    row = line.strip()
    closed = row.endswith("|") and not row.endswith("\\|") and len(row) > 1
    if row.startswith("|"):
        row = row[1:]
    if closed:
        row = row[:-1]
    return [c.strip() for c in _PIPE.split(row)], closed


def _command_cell(cell: str) -> str:
    cell = cell.strip()
    for mark in "`=":  # markdown and AsciiDoc `cmd`, org-mode =cmd=
        if len(cell) >= 2 and cell.startswith(mark) and cell.endswith(mark):
            cell = cell[1:-1]
            break
    return cell.replace("\\|", "|")


def _table(doc: DocText, pos: int) -> tuple[list[Item], int] | None:
    text = doc.text
    start, end = doc.line_bounds(pos)
    line = text[start:end]
    if line.strip().startswith("| Mean [") and line.count("|") == 1:
        return _asciidoc(doc, start, end)
    header, _ = _split(line)
    if not header or header[0].strip().lower() != "command":
        return None
    columns = {i: _HEADER_CELL.fullmatch(h) for i, h in enumerate(header)}
    if not any(columns.values()):
        return None
    items: list[Item] = []
    number = doc.line_at(start)
    pos = end + 1
    table_end = end
    rows = 0
    while pos < len(text) and rows < MAX_ROWS:
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        row = text[pos:line_end]
        number += 1
        if not row.strip().startswith("|"):
            break
        rows += 1
        table_end = line_end
        pos = line_end + 1
        if _SEPARATOR.fullmatch(row.strip()):
            continue
        cells, closed = _split(row)
        if not closed:
            items.append(
                _problem(number, "hyperfine table row without its closing '|' (cut?)", row)
            )
            continue
        if len(cells) < len(header):
            reason = f"hyperfine table row has {len(cells)} cells, its header {len(header)}"
            items.append(_problem(number, reason, row))
            continue
        _row(cells, header, columns, number, row, items)
    return items, table_end


def _row(
    cells: list[str],
    header: list[str],
    columns: dict[int, re.Match[str] | None],
    number: int,
    raw: str,
    items: list[Item],
) -> None:
    series = _Series(benchmark=_command_cell(cells[0]))
    for index, m in columns.items():
        if m is None:
            continue  # Command, Relative
        metric, stat = _TABLE_STATS[m.group("stat")]
        unit = m.group("unit")
        cell = cells[index]
        vm = _MEAN_CELL.fullmatch(cell)
        if not vm or (vm.group("std") and m.group("stat") != "Mean"):
            reason = f"hyperfine {header[index]} cell {cell!r} is no number"
            items.append(_problem(number, reason, raw))
            continue
        _measure(series, metric, stat, float(vm.group("mean")), unit, number, raw, items)
        if vm.group("std"):
            _measure(series, metric, "std", float(vm.group("std")), unit, number, raw, items)


def _asciidoc(doc: DocText, start: int, end: int) -> tuple[list[Item], int] | None:
    """An AsciiDoc export: one "| cell" per line, header first, rows after blank lines."""
    text = doc.text
    # The header cells: the "| Command" line above and the lines after this one.
    above_start = text.rfind("\n", 0, max(start - 1, 0)) + 1
    if text[above_start : start - 1].strip() != "| Command":
        return None
    lines: list[tuple[int, int, str]] = []
    pos = above_start
    number = doc.line_at(above_start)
    table_end = end
    while pos < len(text) and len(lines) < MAX_ROWS * 8:
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        line = text[pos:line_end]
        if line.strip() == "|===":
            table_end = line_end
            break
        lines.append((number, pos, line))
        table_end = line_end
        number += 1
        pos = line_end + 1
    groups: list[list[tuple[int, str]]] = [[]]
    for number, _, line in lines:
        if not line.strip():
            if groups[-1]:
                groups.append([])
            continue
        if not line.lstrip().startswith("|"):
            break
        groups[-1].append((number, line.strip()[1:].strip()))
    groups = [g for g in groups if g]
    if not groups:
        return None
    header = [cell for _, cell in groups[0]]
    columns = {i: _HEADER_CELL.fullmatch(h) for i, h in enumerate(header)}
    items: list[Item] = []
    for group in groups[1:]:
        cells = [cell for _, cell in group]
        number = group[0][0]
        raw = " ".join(f"| {c}" for c in cells)
        if len(cells) < len(header):
            reason = f"hyperfine AsciiDoc row has {len(cells)} cells, its header {len(header)}"
            items.append(_problem(number, reason, raw))
            continue
        _row(cells, header, columns, number, raw, items)
    return items, table_end
