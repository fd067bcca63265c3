"""Nsight Systems ``nsys stats`` reports (and ``nsys profile --stats=true``), column and CSV
output, as profile events.

What the tool prints (its report scripts, ``<nsys>/host-linux-x64/reports/*.py``, and the
outputs of nsys 2020.4 to 2026.1 found in public repositories):

- a heading naming the report: 2022+ ``Processing [r.sqlite] with [.../cuda_api_sum.py]...``
  and `` ** CUDA API Summary (cuda_api_sum):``, ``[5/8] Executing 'cuda_api_sum' stats
  report``; 2020/2021 ``CUDA API Statistics:``, ``CUDA Kernel Statistics:``, ``CUDA Memory
  Operation Statistics (by time):`` / ``(by size in KiB):``, ``Operating System Runtime API
  Statistics:``, ``NVTX Push-Pop Range Statistics:``, ``Exporting [.../gputrace.py ...]``;
- column format: a header, a rule of dashes, then rows; 2022+ ``Time (%)  Total Time (ns)
  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name`` (kernels and nvtx
  say ``Instances``, memory ``Count``, nvtx adds ``Style`` and names its last column
  ``Range``, memory ``Operation``); 2020/2021 ``Time(%)  Total Time (ns)  Num Calls
  Average  Minimum  Maximum  [StdDev]  Name`` (``Calls``, ``Instances``, ``Operations``),
  numbers with thousands commas (``2,127,723,623``); long names cut with "…" (NFKC: "...");
- ``--format csv``: the same columns comma-separated, names quoted when they hold commas;
- ``--timeunit`` changes "(ns)" to "(us)", "(ms)", "(s)"; the size reports
  (``cuda_gpu_mem_size_sum``: ``Total (MB)  Count  Avg (MB) ...``) hold sizes, no times;
- the per-activity trace ``cuda_gpu_trace`` (``gputrace``): ``Start (ns),Duration (ns),
  CorrId,GrdX,...,Name``, one row per kernel or copy.

Decisions:

- One ProfileEvent per row: event = Name / Range / Operation as printed, calls = the
  count column, total/ave/min/max in ms (each converted from the column's own unit, the
  unit of "Total Time" for an old "Average"/"Minimum"/"Maximum" without one), ratio =
  Time (%) / 100 (the report's own share of its total). Median and StdDev have no field.
- section by report: "nsys kernels" (cuda_gpu_kern_sum, gpukernsum), "nsys api"
  (cuda_api_sum, cudaapisum), "nsys memory" (cuda_gpu_mem_time_sum, gpumemtimesum),
  "nsys nvtx" (nvtx_sum, nvtx_pushpop_sum, nvtxppsum, ...), "nsys osrt" (osrt_sum),
  "nsys gpu" (cuda_gpu_sum, kernels and copies together), any other summary of these
  columns "nsys <report>". nvtx's Style (PushPop, StartEnd) goes in ``place``. A report
  without a heading is named by its columns: Range -> nvtx, Operation -> memory,
  Instances -> kernels; with Num Calls it could be cuda_api_sum or osrt_sum: section
  "nsys" and a warning.
- Size reports (cuda_gpu_mem_size_sum, "by size") are bytes, not times: a warning says
  they are not stored, so no byte count is ever read as a time.
- cuda_gpu_trace in CSV is summed per kernel name (pyarrow, vectorised) into "nsys
  kernels" rows (copies and memsets, ``[CUDA memcpy ...]``, into "nsys memory") with
  calls, total, ave, min, max; no ratio (the rows are the whole trace). A trace in column
  format is a Problem saying it is not read.
- Rows with the same printed name (names cut to the same prefix) are one event, added up,
  with a warning. A row cut short is a Problem and ends the table; a value that is not a
  number is a Problem for its row, the next rows are read; a table whose Time (%) adds up
  to clearly less than 100 was cut: a warning says so.

Speed: seven literal-led ``re.finditer`` scans find every header and heading (_hits);
a column table's layout is worked out once per header (_TEXT_LAYOUTS), its lines split
with ``str.split``, a CSV block read with the csv module (pyarrow for a trace). A row's
cells are converted inline (_events: float, the unit's divisor or factor, the range
checks of _event, Time (%) as a share looked up by its cell); a row with any cell in
doubt is read again by _event, which says why.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

from ingest.parsers.cells import fields_in_order
from ingest.text import DocText
from perfboard.model import Item, Problem, ProfileEvent
from perfboard.units import ABSURD_MS, UnitError, converter, scaling

NAME = "nsys"
ANCHORS: tuple[str, ...] = ("Total Time (ns)", "Time (%)", "Time(%)", "Duration (ns)")

_SECTIONS = {
    "cuda_gpu_kern_sum": "nsys kernels",
    "gpukernsum": "nsys kernels",
    "cuda_api_sum": "nsys api",
    "cudaapisum": "nsys api",
    "cuda_gpu_mem_time_sum": "nsys memory",
    "gpumemtimesum": "nsys memory",
    "nvtx_sum": "nsys nvtx",
    "nvtxsum": "nsys nvtx",
    "nvtx_pushpop_sum": "nsys nvtx",
    "nvtxppsum": "nsys nvtx",
    "nvtx_startend_sum": "nsys nvtx",
    "osrt_sum": "nsys osrt",
    "osrtsum": "nsys osrt",
    "cuda_gpu_sum": "nsys gpu",
    "gpusum": "nsys gpu",
}
_SIZE_REPORTS = {"cuda_gpu_mem_size_sum", "gpumemsizesum"}
_TRACE_REPORTS = {"cuda_gpu_trace", "gputrace"}
_OLD_TITLES = {
    "CUDA API Statistics": "cuda_api_sum",
    "CUDA Kernel Statistics": "cuda_gpu_kern_sum",
    "CUDA Memory Operation Statistics (by time)": "cuda_gpu_mem_time_sum",
    "CUDA Memory Operation Statistics (by size": "cuda_gpu_mem_size_sum",
    "Operating System Runtime API Statistics": "osrt_sum",
    "NVTX Push-Pop Range Statistics": "nvtx_pushpop_sum",
    "NVTX Range Statistics": "nvtx_sum",
}
_REPORT = r"([A-Za-z][A-Za-z0-9_]*)"
# A report after a path: the run of name characters before ".py", from its first letter
# (the leftmost match of a lazy ``[^\]\n]*?<report>\.py``), found by taking the path up to
# the character before that run (not a name character) whole: the lazy run tried a report
# at every character of the path, backtracking each time (2-3x slower).
_NOT_NAME = r"[^A-Za-z0-9_\]\n]"
_PATH_REPORT = r"[0-9_]*([A-Za-z][A-Za-z0-9_]*+)"
_HEADINGS: tuple[re.Pattern[str], ...] = (
    # ** CUDA API Summary (cuda_api_sum):
    re.compile(r"\*\* [^\n]*?\(([A-Za-z][A-Za-z0-9_]*+)\):"),
    # Processing [report.sqlite] with [/opt/.../reports/cuda_api_sum.py]...
    re.compile(
        r"Processing \[[^\]\n]*\] with \[(?:[^\]\n]*" + _NOT_NAME + ")?" + _PATH_REPORT + r"\.py\]"
    ),
    # Exporting [/soft/.../reports/gputrace.py report1.sqlite] to console... (lazy: the
    # first ".py " after a report)
    re.compile(r"Exporting \[(?:[^\]\n]*?" + _NOT_NAME + ")??" + _PATH_REPORT + r"\.py "),
    # [5/8] Executing 'cuda_api_sum' stats report
    re.compile(r"Executing '" + _REPORT + r"' stats report"),
)
# Every old title holds "Statistics" once: one scan for the word, then the titles whose
# four characters before it are the text's (title, where the word is in it).
_STATISTICS = re.compile("Statistics")
_TITLES_BEFORE: dict[str, list[tuple[str, int]]] = {}
for _title, _at in ((t, t.index("Statistics")) for t in _OLD_TITLES):
    _TITLES_BEFORE.setdefault(_title[_at - 4 : _at], []).append((_title, _at))
del _title, _at
# A header in columns or in CSV (group 1: the comma), a trace in CSV or in columns.
_HEADER = re.compile(r"Time ?\(%\)(?:[ \t]+|(,)[ \t]*)Total Time")
_TRACE = re.compile(r"Start ?\([a-z]+\)(?:([ \t]*,[ \t]*)|[ \t]+)Duration ?\([a-z]+\)")
_UNITS = {"ns": "ns", "nsec": "ns", "us": "us", "usec": "us", "ms": "ms", "msec": "ms"}
_UNITS |= {"s": "s", "sec": "s"}
_UNIT_IN = re.compile(r"\((ns|nsec|us|usec|ms|msec|s|sec)\)\s*$")
_COUNT_HEADERS = {"num calls", "calls", "instances", "count", "operations"}
_NAME_HEADERS = {"name", "range", "operation"}


class _Bad(ValueError):
    """A value that cannot be read; its message is the Problem's reason."""


def parse(doc: DocText) -> Iterator[Item]:
    """ProfileEvents of every nsys stats table, and Problems."""
    text = doc.text
    report = _report_of_uri(doc.meta.uri)
    resume = 0
    for pos, kind, name in _hits(text):
        if pos < resume:
            continue
        start, end = doc.line_bounds(pos)
        if kind == "heading":
            report = name  # "cuda_gpu_kern_sum"; "" when no heading named the table
            if name in _SIZE_REPORTS:
                yield _problem(
                    doc.line_at(pos),
                    f"nsys {name}: sizes of memory operations, not times: not stored",
                    text[start:end],
                    warning=True,
                )
            continue
        if start != pos and text[start:pos].strip():
            continue  # the header words inside some other line
        if kind == "text":
            items, resume = _text_table(doc, start, end, report)
        elif kind == "csv":
            items, resume = _csv_table(doc, start, end, report)
        elif kind == "trace":
            items, resume = _trace(doc, start, end)
        else:
            items = [
                _problem(
                    doc.line_at(pos),
                    "nsys cuda_gpu_trace in column format is not read (use --format csv)",
                    text[start:end],
                    warning=True,
                )
            ]
            resume = end
        report = ""
        items.sort(key=_LINE)
        yield from items


_LINE = attrgetter("line")


def _hits(text: str) -> list[tuple[int, str, str]]:
    """(position, kind, report name) of every heading, old title, header and trace header,
    in text order: kind "heading" (an old title too), "text", "csv", "trace", "trace text".

    One literal-led ``finditer`` per pattern (seven scans of the text, where the fifteen
    patterns of before took fifteen), collected and sorted once: no two hits share a
    position (each pattern starts with its own literal, and the two forms of a header or
    trace exclude each other).
    """
    found = []
    for pattern in _HEADINGS:
        found += [(m.start(), "heading", m[1]) for m in pattern.finditer(text)]
    for m in _STATISTICS.finditer(text):
        at = m.start()
        for title, offset in _TITLES_BEFORE.get(text[at - 4 : at], ()) if at >= 4 else ():
            if at >= offset and text.startswith(title, at - offset):
                found.append((at - offset, "heading", _OLD_TITLES[title]))
    found += [(m.start(), "csv" if m[1] else "text", "") for m in _HEADER.finditer(text)]
    found += [(m.start(), "trace" if m[1] else "trace text", "") for m in _TRACE.finditer(text)]
    found.sort()
    return found


def _problem(line: int, reason: str, raw: str, warning: bool = False) -> Problem:
    return Problem(line, reason, raw, NAME, "warning" if warning else "error")


def _report_of_uri(uri: str) -> str:
    """A CSV written with ``-o prefix`` is named ``prefix_cuda_gpu_kern_sum.csv``."""
    base = uri.rsplit("/", 1)[-1]
    for name in sorted(_SECTIONS, key=len, reverse=True):
        if f"_{name}." in base or base.startswith(f"{name}."):
            return name
    return ""


# -- columns --------------------------------------------------------------------------


@dataclass(slots=True)
class _Layout:
    names: list[str]
    section: str
    warning: str  # why the section is a guess, "" when a heading named it
    pct: int
    count: int
    name: int
    style: int
    times: dict[str, tuple[int, str]]  # role -> (column, unit)
    # total, ave, min, max: (column or -1, divisor, factor) as units.scaling converts a
    # value; None: some unit is not a time the fast path knows (every row takes _event).
    scales: tuple[tuple[int, int, float], ...] | None


def _layout(names: list[str], report: str) -> _Layout | str:
    """Where each value is, or why the columns are not a summary report."""
    low = [" ".join(n.lower().split()) for n in names]
    idx = {n: i for i, n in enumerate(low)}
    pct = next((i for i, n in enumerate(low) if n in ("time (%)", "time(%)")), -1)
    count = next((i for i, n in enumerate(low) if n in _COUNT_HEADERS), -1)
    name = next((i for i, n in enumerate(low) if n in _NAME_HEADERS), -1)
    total = next((i for i, n in enumerate(low) if n.startswith("total time")), -1)
    if min(pct, count, name, total) < 0 or name != len(low) - 1:
        return "columns are not those of an nsys summary report"
    m = _UNIT_IN.search(low[total])
    default = _UNITS[m[1]] if m else ""
    times: dict[str, tuple[int, str]] = {}
    roles = {"total": ("total time",), "ave": ("avg", "average"), "min": ("min", "minimum")}
    roles["max"] = ("max", "maximum")
    for role, words in roles.items():
        for i, n in enumerate(low):
            word = _UNIT_IN.sub("", n).strip()
            if word in words:
                unit_m = _UNIT_IN.search(n)
                unit = _UNITS[unit_m[1]] if unit_m else default
                if not unit:
                    return f"column {names[i]!r} names no time unit"
                times[role] = (i, unit)
    if "total" not in times:
        return "no Total Time column"
    section, warning = _section(report, low[name], "instances" in idx)
    style = idx.get("style", -1)
    return _Layout(names, section, warning, pct, count, name, style, times, _scales(times))


def _scales(times: dict[str, tuple[int, str]]) -> tuple[tuple[int, int, float], ...] | None:
    scales = []
    for role in ("total", "ave", "min", "max"):
        if role not in times:
            scales.append((-1, 0, 0.0))
            continue
        column, unit = times[role]
        try:
            divisor, factor, kind = scaling(unit)
        except UnitError:
            return None
        if kind != "time":
            return None
        scales.append((column, divisor, factor))
    return tuple(scales)


def _section(report: str, name_header: str, instances: bool) -> tuple[str, str]:
    if report:
        if report in _SECTIONS:
            return _SECTIONS[report], ""
        return f"nsys {report}", ""
    if name_header == "range":
        return "nsys nvtx", ""
    if name_header == "operation":
        return "nsys memory", ""
    if instances:
        return "nsys kernels", ""
    return "nsys", "no heading names this nsys report (cuda_api_sum or osrt_sum?)"


# -- column (text) format -------------------------------------------------------------


_DASHES = re.compile(r"-{2,}")


# The layout of a column table by its header line, its rule and its report's name: a log
# holds the same few reports again and again (bounded: cleared when full).
_TEXT_LAYOUTS: dict[tuple[str, str, str], _Layout | str] = {}


def _text_layout(header: str, rule: str, report: str) -> _Layout | str:
    """Where each value of a column table is, or the Problem's reason (cached)."""
    key = (header, rule, report)
    layout = _TEXT_LAYOUTS.get(key)
    if layout is not None:
        return layout
    spans = [(m.start(), m.end()) for m in _DASHES.finditer(rule)]
    if not spans or rule.replace("-", "").strip():
        layout = "nsys table header without its rule of dashes"
    else:
        last = len(spans) - 1
        names = [
            (header[a:] if i == last else header[a:b]).strip() for i, (a, b) in enumerate(spans)
        ]
        layout = _layout(names, report)
        if isinstance(layout, str):
            layout = f"nsys table: {layout}"
    if len(_TEXT_LAYOUTS) >= 1024:
        _TEXT_LAYOUTS.clear()
    _TEXT_LAYOUTS[key] = layout
    return layout


def _text_table(doc: DocText, start: int, end: int, report: str) -> tuple[list[Item], int]:
    text = doc.text
    size = len(text)
    header = text[start:end]
    number = doc.line_at(start)
    rule_end = text.find("\n", end + 1)
    rule_end = size if rule_end < 0 else rule_end
    rule = text[end + 1 : rule_end] if end < size else ""
    layout = _text_layout(header, rule, report)
    if isinstance(layout, str):
        return [_problem(number, layout, header)], end
    rows: list[tuple[int, list[str], str]] = []
    items: list[Item] = []
    resume = rule_end
    width = len(layout.names)
    last = width - 1  # the name: the rest of the line, spaces and all
    pct = layout.pct
    numeric = _NUMERIC
    # The rows: one find and one split a line (a blank line splits into no cells). The
    # cells before the name hold no white space, so only the name is stripped.
    pos = rule_end + 1
    line_no = number + 2
    while pos <= size:
        stop = text.find("\n", pos)
        if stop < 0:
            stop = size
        line = text[pos:stop]
        parts = line.split(None, last)
        if len(parts) < width or not (numeric.get(parts[pct]) or _numeric_share(parts[pct])):
            if parts and _numeric(parts[0]):
                items.append(_problem(line_no, "nsys row cut short", line))
                resume = stop
            break
        parts[last] = parts[last].strip()
        rows.append((line_no, parts, line))
        resume = stop
        pos = stop + 1
        line_no += 1
    items += _events(rows, layout, number, header)
    return items, resume


def _numeric(cell: str) -> bool:
    return bool(cell) and cell.replace(",", "").replace(".", "", 1).isdigit()


# The Time (%) cells found numeric (_numeric): few distinct ones, read again and again.
_NUMERIC: dict[str, bool] = {}


def _numeric_share(cell: str) -> bool:
    """_numeric, the True answers kept in _NUMERIC."""
    if not _numeric(cell):
        return False
    if len(_NUMERIC) >= 4096:
        _NUMERIC.clear()
    _NUMERIC[cell] = True
    return True


# -- CSV format -----------------------------------------------------------------------


def _block_end(text: str, start: int) -> int:
    """End of the CSV block from start: a blank line, a fence or the end of the text."""
    ends = [i for i in (text.find("\n\n", start), text.find("\n```", start)) if i >= 0]
    return min(ends) if ends else len(text)


def _csv_table(doc: DocText, start: int, end: int, report: str) -> tuple[list[Item], int]:
    text = doc.text
    stop = _block_end(text, start)
    block = text[start:stop]
    number = doc.line_at(start)
    lines = block.split("\n")
    reader = csv.reader(lines)
    names = [n.strip() for n in next(reader)]
    layout = _layout(names, report)
    if isinstance(layout, str):
        return [_problem(number, f"nsys CSV: {layout}", lines[0])], stop
    rows: list[tuple[int, list[str], str]] = []
    items: list[Item] = []
    for cells in reader:
        line_no = number + reader.line_num - 1
        raw = lines[reader.line_num - 1] if reader.line_num <= len(lines) else ""
        if not cells or not "".join(cells).strip():
            break
        if len(cells) != len(names):
            items.append(_problem(line_no, "nsys CSV row cut short", raw))
            break
        rows.append((line_no, [c.strip() for c in cells], raw))
    items += _events(rows, layout, number, lines[0])
    return items, stop


# -- rows -----------------------------------------------------------------------------


def _events(
    rows: list[tuple[int, list[str], str]],
    layout: _Layout,
    number: int,
    header: str,
) -> list[Item]:
    items: list[Item] = []
    if layout.warning:
        items.append(_problem(number, layout.warning, header, warning=True))
    events: dict[tuple[str, str], ProfileEvent] = {}
    merged: dict[tuple[str, str], int] = {}
    listed = 0.0
    scales = layout.scales if _FAST else None
    if scales is not None:
        (ti, td, tf), (ai, ad, af), (mi, md, mf), (xi, xd, xf) = scales
    pi, ci, ni, si = layout.pct, layout.count, layout.name, layout.style
    ratios = _RATIOS
    section = layout.section
    on_gpu = section in ON_GPU
    for line_no, cells, raw in rows:
        event = None
        if scales is not None:
            # The row as _event reads it when every value is a plain number in range;
            # any doubt (not a number, out of range, absurd) and _event reads it again,
            # to say why. A float failing a comparison is NaN or out of range.
            try:
                ratio = ratios.get(cells[pi])
                if ratio is None:
                    ratio = _ratio(cells[pi])
                value = float(cells[ti].replace(",", ""))
                total = value / td if td else value * tf
                ok = ratio >= 0.0 and value >= 0.0 and total <= ABSURD_MS
                ave = mn = mx = None
                if ai >= 0:
                    value = float(cells[ai].replace(",", ""))
                    ave = value / ad if ad else value * af
                    ok = ok and value >= 0.0 and ave <= ABSURD_MS
                if mi >= 0:
                    value = float(cells[mi].replace(",", ""))
                    mn = value / md if md else value * mf
                    ok = ok and value >= 0.0 and mn <= ABSURD_MS
                if xi >= 0:
                    value = float(cells[xi].replace(",", ""))
                    mx = value / xd if xd else value * xf
                    ok = ok and value >= 0.0 and mx <= ABSURD_MS
                calls = float(cells[ci].replace(",", ""))
                ok = ok and calls >= 0.0 and calls.is_integer()
            except ValueError:
                ok = False
            if ok:
                key = (cells[ni], cells[si] if si >= 0 else "")
                # ProfileEvent's fields in order (_FIELDS): positional is twice as fast.
                event = ProfileEvent(
                    key[0],
                    int(calls),
                    total,
                    None,
                    None,
                    total if on_gpu else None,
                    None,
                    mn,
                    mx,
                    ave,
                    ratio,
                    0,
                    "",
                    section,
                    key[1],
                    0,
                    line_no,
                    raw,
                )
                listed += ratio  # >= 0.0: as "event.ratio or 0.0" adds it
        if event is None:
            try:
                event = _event(cells, layout, line_no, raw)
            except _Bad as bad:
                items.append(_problem(line_no, f"nsys row: {bad}", raw))
                continue
            listed += event.ratio or 0.0
            key = (event.event, event.place)
        first = events.setdefault(key, event)
        if first is not event:
            _merge(first, event)
            merged[key] = merged.get(key, 1) + 1
    for key, count in merged.items():
        event = events[key]
        items.append(
            _problem(
                event.line,
                f"{count} rows print the name {event.event!r} (cut short): read as one "
                "event, their times added",
                event.raw,
                warning=True,
            )
        )
    items += events.values()
    if rows and listed < 0.99 - 0.0005 * len(rows):
        last = rows[-1][0]
        items.append(
            _problem(
                last,
                f"nsys report lists {listed:.1%} of its time: cut after line {last}?",
                rows[-1][2],
                warning=True,
            )
        )
    return items


# False: every row read by _event alone (tests compare the two ways).
_FAST = True

# Time (%) as _event reads it, by its cell: a report prints few distinct shares (one
# decimal), so most rows find theirs here. -1.0: not a share _event would accept.
_RATIOS: dict[str, float] = {}


def _ratio(cell: str) -> float:
    try:
        pct = float(cell.replace(",", ""))
    except ValueError:
        return -1.0
    ratio = round(pct / 100, 8) if 0.0 <= pct <= 100.0 else -1.0
    if len(_RATIOS) >= 4096:
        _RATIOS.clear()
    _RATIOS[cell] = ratio
    return ratio


_FIELDS = (
    "event",
    "calls",
    "total",
    "cpu_time",
    "cpu_ratio",
    "gpu_time",
    "gpu_ratio",
    "min",
    "max",
    "ave",
    "ratio",
    "depth",
    "thread",
    "section",
    "place",
    "run",
    "line",
    "raw",
)
fields_in_order(ProfileEvent, _FIELDS, "nsys._events's positional call")


def _event(cells: list[str], layout: _Layout, line: int, raw: str) -> ProfileEvent:
    pct = _number(cells[layout.pct], "Time (%)")
    if pct > 100:
        raise _Bad(f"Time (%) {cells[layout.pct]!r} is over 100")
    times = {role: _time(cells[i], unit) for role, (i, unit) in layout.times.items()}
    calls = _number(cells[layout.count], "count")
    if not calls.is_integer():
        raise _Bad(f"count {cells[layout.count]!r} is not a whole number")
    return ProfileEvent(
        event=cells[layout.name],
        calls=int(calls),
        total=times["total"],
        gpu_time=times["total"] if layout.section in ON_GPU else None,
        min=times.get("min"),
        max=times.get("max"),
        ave=times.get("ave"),
        ratio=round(pct / 100, 8),
        section=layout.section,
        place=cells[layout.style] if layout.style >= 0 else "",
        line=line,
        raw=raw,
    )


# The reports whose times are spent on the GPU (the Profiles page's "GPU time"); API calls,
# NVTX ranges and OS runtime calls are host time.
ON_GPU = frozenset({"nsys kernels", "nsys memory", "nsys gpu"})


def _merge(into: ProfileEvent, row: ProfileEvent) -> None:
    into.calls = (into.calls or 0) + (row.calls or 0)
    into.total = (into.total or 0.0) + (row.total or 0.0)
    if row.gpu_time is not None:
        into.gpu_time = (into.gpu_time or 0.0) + row.gpu_time
    into.ratio = (into.ratio or 0.0) + (row.ratio or 0.0)
    if row.min is not None:
        into.min = row.min if into.min is None else min(into.min, row.min)
    if row.max is not None:
        into.max = row.max if into.max is None else max(into.max, row.max)
    into.ave = into.total / into.calls if into.calls else None
    into.raw += "\n" + row.raw


def _number(cell: str, what: str) -> float:
    try:
        value = float(cell.replace(",", ""))
    except ValueError:
        raise _Bad(f"{what} {cell!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise _Bad(f"{what} {cell!r} is not a number of nsys")
    return value


def _time(cell: str, unit: str) -> float:
    value = _number(cell, "time")
    try:
        return to_ms(value, unit)
    except UnitError as error:
        raise _Bad(str(error)) from None


def to_ms(value: float, unit: str) -> float:
    """normalise(value, unit).value, divided rather than multiplied where the unit is
    smaller than a ms: 2520 ns -> 0.00252, not 0.0025199999999999997 (normalise divides
    too; its converter skips making a Quantity, for the many cells of a report)."""
    return converter(unit)(value)


# -- cuda_gpu_trace (CSV) -------------------------------------------------------------


def _trace(doc: DocText, start: int, end: int) -> tuple[list[Item], int]:
    """The per-activity trace summed per name, vectorised with pyarrow."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    text = doc.text
    stop = _block_end(text, start)
    number = doc.line_at(start)
    header = text[start:end]
    names = [n.strip() for n in next(csv.reader([header]))]
    duration = next((n for n in names if n.lower().startswith("duration")), "")
    m = _UNIT_IN.search(duration.lower())
    if "Name" not in names or not m:
        return [_problem(number, "nsys trace without Duration (unit) and Name", header)], stop
    unit = _UNITS[m[1]]
    try:
        table = pacsv.read_csv(
            io.BytesIO(text[start:stop].encode()),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
            convert_options=pacsv.ConvertOptions(
                include_columns=[duration, "Name"],
                column_types={duration: pa.float64(), "Name": pa.string()},
            ),
        )
    except (pa.ArrowInvalid, ValueError) as error:
        return [_problem(number, f"nsys trace not read: {error}", header)], stop
    table = table.append_column("row", pa.array(range(table.num_rows), pa.int64()))
    table = table.filter(pc.is_valid(table[duration]))
    grouped = table.group_by("Name", use_threads=False).aggregate(
        [
            (duration, "sum"),
            (duration, "count"),
            (duration, "min"),
            (duration, "max"),
            ("row", "min"),
        ]
    )
    lines = None
    items: list[Item] = []
    for rec in grouped.to_pylist():
        name = rec["Name"] or ""
        row = int(rec["row_min"])
        if lines is None:
            lines = text[start:stop].split("\n")
        calls = int(rec[f"{duration}_count"])
        total = to_ms(rec[f"{duration}_sum"], unit)
        memory = name.startswith("[CUDA mem")
        items.append(
            ProfileEvent(
                event=name,
                calls=calls,
                total=total,
                gpu_time=total,
                min=to_ms(rec[f"{duration}_min"], unit),
                max=to_ms(rec[f"{duration}_max"], unit),
                ave=total / calls if calls else None,
                section="nsys memory" if memory else "nsys kernels",
                line=number + 1 + row,
                raw=lines[1 + row] if 1 + row < len(lines) else "",
            )
        )
    return items, stop
