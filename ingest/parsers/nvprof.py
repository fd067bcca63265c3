"""nvprof summaries (docs/formats.md section 7), as printed by nvprof and by the op benchmark.

Lines read:

- the table ``Type  Time(%)  Time  Calls  Avg  Min  Max  Name``, its rows
  ``GPU activities:   58.46%  210.67ms  4  52.667ms  1.7280us  210.66ms  [CUDA memcpy HtoD]``,
  continuation rows without the Type column, and the ``API calls:`` section;
- the op benchmark's summary of the top kernel,
  ``percent: 0.58; gpu_time: 210.6700 ms; calls: 4; function: [CUDA memcpy HtoD]``;
- its total, ``total gpu_time: 360.3661 ms`` (also ``total gpu_time (exclude DtoH): ...``).

Decisions:

- Each row is a ProfileEvent with section "nvprof", the Name kept whole as the event
  (kernel names are long templates and are what identifies them), times in ms from each
  value's own unit (s, ms, us, ns), ratio = Time(%) / 100, and place "GPU" for GPU
  activities, "API" for API calls (any other Type as written). A table from nvprof before
  CUDA 9 has no Type column: its place comes from the ``API calls:`` line above it, else
  "GPU".
- The summary line repeats a row of the table just above it: it is skipped when that
  table holds the same function, else it becomes a ProfileEvent (place "GPU"; its
  ``percent`` is already a fraction).
- ``total gpu_time`` is a Measurement, metric "gpu_time_total" in ms: the kernel time of
  all repeats together (the op benchmark's own per-repeat "gpu_time" is another series),
  ``stats["source"] = "nvprof"`` (and ``stats["note"]`` for a qualifier such as "exclude
  DtoH"). The benchmark (the op) and the task are left for ingest.runs to fill from the
  document's context.
- A row or line cut short (fewer columns, a name with an unclosed bracket or parenthesis,
  a value without its unit) or holding an impossible value (NaN, negative, a percentage
  over 100) becomes a Problem.

Speed: one ``re.finditer`` per literal entry point ("Time(%)", "GPU activities:",
"API calls:", "percent:", "total gpu_time") over the whole text, merged in document
order; only lines holding a hit are examined and only the lines of a table found are
walked in Python.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterator
from typing import Any

from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem, ProfileEvent
from perfboard.units import UnitError, normalise, split_number

NAME = "nvprof"
ANCHORS: tuple[str, ...] = ("GPU activities:", "API calls:", "Time(%)", "gpu_time")

# One literal pattern per entry point: a literal is found at memory speed, an alternation
# of them is not. Their hits are merged in document order.
_HITS = tuple(
    re.compile(literal)
    for literal in (r"Time\(%\)", "GPU activities:", "API calls:", "percent:", "total gpu_time")
)
_HEADER_REST = re.compile(r"[ \t]+Time\b")
_TYPES = {"GPU activities": "GPU", "API calls": "API"}
_ROW = re.compile(
    r"[ \t]*(?:(?P<type>[A-Za-z][A-Za-z ()]*?):)?[ \t]*(?P<pct>[^\s%]+)%[ \t]+"
    r"(?P<time>\S+)[ \t]+(?P<calls>\S+)[ \t]+(?P<avg>\S+)[ \t]+(?P<min>\S+)[ \t]+"
    r"(?P<max>\S+)[ \t]+(?P<name>\S.*?)[ \t]*$"
)
# What any row starts with; a line like this that _ROW does not match is a cut row.
_ROW_START = re.compile(r"[ \t]*(?:[A-Za-z][A-Za-z ()]*?:)?[ \t]*[-+.\d]+\S*%")
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan|inf)"
_SUMMARY = re.compile(
    r"percent:[ \t]*(?P<pct>\S+?);[ \t]*"
    rf"gpu_time:[ \t]*(?P<time>{_NUM})[ \t]*(?P<unit>[A-Za-zµμ]+);"
    r"[ \t]*calls:[ \t]*(?P<calls>\S+?);[ \t]*function:[ \t]*(?P<name>\S.*?)[ \t]*$"
)
_TOTAL_LABEL = re.compile(r"total gpu_time(?:[ \t]*\((?P<note>[^)]*)\))?[ \t]*:[ \t]*")
_TOTAL = re.compile(_TOTAL_LABEL.pattern + rf"(?P<num>{_NUM})[ \t]*(?P<unit>[A-Za-zµμ]+)?")
_BRACKETS = (("(", ")"), ("[", "]"))


class _Bad(ValueError):
    """A value that cannot be read; its message is the Problem's reason."""


def parse(doc: DocText) -> Iterator[Item]:
    """ProfileEvents of nvprof tables and summaries, gpu_time Measurements, and Problems."""
    text = doc.text
    resume = 0  # end of the last table read: hits inside it are not new tables
    table_names: set[str] = set()  # kernels of the last table, which a summary repeats
    place = "GPU"  # place of a table without a Type column
    for hit in heapq.merge(*(p.finditer(text) for p in _HITS), key=lambda m: m.start()):
        if hit.start() < resume:
            continue
        start, end = doc.line_bounds(hit.start())
        line = text[start:end]
        what = hit[0]
        if what in ("percent:", "total gpu_time"):
            item = _summary(doc, start, line) if what == "percent:" else _total(doc, start, line)
            if item and not (isinstance(item, ProfileEvent) and item.event in table_names):
                yield item
            continue
        if what == "Time(%)":
            if not _HEADER_REST.match(text, hit.end()):
                continue
            first = end + 1
        elif _ROW_START.match(line):
            first = start  # a "GPU activities:" row of a table pasted without its header
        else:
            if not text[hit.end() : end].strip():
                # "==123== API calls:" ending its line: a header and rows follow.
                place = _TYPES[what.rstrip(":")]
            continue
        items, resume = _table(doc, first, place)
        table_names = {item.event for item in items if isinstance(item, ProfileEvent)}
        place = "GPU"
        yield from items


def _problem(line: int, reason: str, raw: str) -> Problem:
    return Problem(line, reason, raw, NAME)


# -- table ----------------------------------------------------------------------------


def _table(doc: DocText, pos: int, place: str) -> tuple[list[Item], int]:
    """The items of the rows from pos to the first line that is not a row, and its offset."""
    items: list[Item] = []
    end = pos
    if pos > len(doc.text):
        return items, end
    for number, start, line in doc.lines_from(pos):
        row = _ROW.match(line)
        if row:
            if row["type"]:
                place = _TYPES.get(row["type"].strip(), row["type"].strip())
            items.append(_row(row, place, number, line))
        elif _ROW_START.match(line):
            items.append(_problem(number, "nvprof row cut short", line))
        else:
            break
        end = start + len(line)
    return items, end


def _row(row: re.Match[str], place: str, number: int, line: str) -> Item:
    name = row["name"]
    if not _balanced(name):
        return _problem(number, "nvprof row cut inside the name", line)
    try:
        ratio = _percent(row["pct"]) / 100
        calls = _count(row["calls"])
        total, ave, low, high = (_time(row[k]) for k in ("time", "avg", "min", "max"))
    except _Bad as bad:
        return _problem(number, f"nvprof row: {bad}", line)
    return ProfileEvent(
        event=name,
        calls=calls,
        total=total,
        min=low,
        max=high,
        ave=ave,
        ratio=ratio,
        section="nvprof",
        place=place,
        line=number,
        raw=line,
    )


def _balanced(name: str) -> bool:
    """False when a bracket of the name is left open: the line was cut inside it."""
    return all(name.count(left) == name.count(right) for left, right in _BRACKETS)


# -- op benchmark summary lines -------------------------------------------------------


def _summary(doc: DocText, start: int, line: str) -> Item | None:
    if not line.lstrip().startswith("percent:"):
        return None  # "percent:" inside some other line
    number = doc.line_at(start)
    m = _SUMMARY.search(line)
    if not m or not _balanced(m["name"]):
        return _problem(number, "nvprof summary line cut short", line)
    try:
        ratio = _percent(m["pct"])
        total = _time(m["time"] + m["unit"])
        calls = _count(m["calls"])
    except _Bad as bad:
        return _problem(number, f"nvprof summary line: {bad}", line)
    if ratio > 1:
        return _problem(number, f"nvprof summary line: percent {m['pct']!r} is over 1", line)
    return ProfileEvent(
        event=m["name"],
        calls=calls,
        total=total,
        ratio=ratio,
        section="nvprof",
        place="GPU",
        line=number,
        raw=line,
    )


def _total(doc: DocText, start: int, line: str) -> Item | None:
    m = _TOTAL.search(line)
    if m is None:
        if _TOTAL_LABEL.search(line):  # the label with nothing readable after it: cut
            return _problem(doc.line_at(start), "total gpu_time without a value", line)
        return None  # prose that names "total gpu_time"
    if not m["unit"]:
        return _problem(doc.line_at(start), "total gpu_time without a unit (line cut?)", line)
    try:
        q = normalise(float(m["num"]), m["unit"])
    except UnitError as e:
        return _problem(doc.line_at(start), f"total gpu_time: {e}", line)
    if q.kind != "time":
        return _problem(doc.line_at(start), f"total gpu_time unit {m['unit']!r} is no time", line)
    stats: dict[str, Any] = {"source": "nvprof"}
    if m["note"]:
        stats["note"] = m["note"].strip()
    return Measurement(
        benchmark="",
        metric="gpu_time_total",
        value=q.value,
        unit=q.unit,
        stats=stats,
        line=doc.line_at(start),
        raw=line,
    )


# -- values ---------------------------------------------------------------------------


def _number(field: str) -> tuple[float, str]:
    parsed = split_number(field)
    if parsed is None:
        raise _Bad(f"{field!r} is not a number")
    return parsed


def _time(field: str) -> float:
    """ "1.7280us" -> 0.001728 (ms); nvprof writes a unit after every time."""
    value, unit = _number(field)
    if not unit:
        raise _Bad(f"time {field!r} has no unit")
    try:
        q = normalise(value, unit)
    except UnitError as e:
        raise _Bad(str(e)) from None
    if q.kind != "time":
        raise _Bad(f"{field!r} is not a time")
    return q.value


def _count(field: str) -> int:
    value, unit = _number(field)
    if unit or not math.isfinite(value) or value < 0 or not value.is_integer():
        raise _Bad(f"calls {field!r} is not a count")
    return int(value)


def _percent(field: str) -> float:
    value, unit = _number(field)
    if unit or not math.isfinite(value) or not 0 <= value <= 100:
        raise _Bad(f"percentage {field!r} is not between 0 and 100")
    return value
