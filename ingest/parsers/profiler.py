"""Paddle profiler reports (docs/formats.md section 3): the event table and the GpuMemCpy summary.

Three layouts are read:

- GPU (``Place: All``): ``Event Calls Total CPU Time (Ratio) GPU Time (Ratio) Min. Max.
  Ave. Ratio.``, the CPU and GPU times each followed by their share in parentheses;
- CPU-only (``Place: CPU``, also ``Place: CUDA``): ``Event Calls Total Min. Max. Ave.
  Ratio.``, totals may be written ``1.10423e+06``;
- the newer report: a ``GpuMemCpy Summary`` (``GpuMemcpy  Calls: 6000  Total: 142.98
  Ratio: 23.9085%``, sub-items indented) and an ``Event Summary`` whose nested events are
  indented under their parent.

Decisions:

- The columns come from the table's own header, so one row reader serves every layout; a
  header with columns perfboard does not know is a Problem and its table is not read.
- ``Place:`` and ``Time unit:`` lines belong to the report whose banner is above them and
  apply to its GpuMemCpy summary and its event table; they are looked for above a table,
  back to the previous event table (a report prints one) and at most CONTEXT_CHARS.
  Without them place is "" and the unit ms (Paddle always prints ms). Times are
  converted to ms; ratios stay fractions (``23.9085%`` -> 0.239085). A table in a unit
  that is not a time is a Problem, not read.
- ``thread0::fc`` -> event "fc", thread "thread0"; any other name (``GpuMemcpyAsync:CPU->GPU``,
  ``ParallelExecutor::Run``) is kept whole with thread "". A nested event without a thread
  prefix inherits its parent's thread: Paddle records children in the parent's thread.
- Depth is indentation divided by the table's indent step (the smallest indent of a nested
  row, 2 spaces in Paddle's output), measured from the least indented row.
- A row with fewer fields than its header (pasted text cut mid-row), a field that is not a
  number, a NaN/infinite/negative time, a ratio outside 0..1 all become Problems; no event
  is ever half filled. A ratio printed as ``nan`` for an event of total 0 (0/0 in Paddle)
  is read as None.
- A table ends at a blank line, a fence, or a line that is not a row. A single line that is
  not a row, followed by a well-formed row, is garbage inside the table: a Problem, and
  reading goes on.

Speed: one ``re.finditer`` on the literal "Calls" (in every table header and GpuMemCpy
row) over the whole text; only lines holding a hit are examined, the few KB above a table
are searched for its report header, and only the lines of a table found are walked.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ingest.text import DocText, LineIndex
from perfboard.model import Item, Problem, ProfileEvent
from perfboard.units import UnitError, convert_all, converter, normalise, split_number

if TYPE_CHECKING:
    from ingest.columns import EventBlock
    from ingest.parsers.profiler_bulk import Reader, Taken

NAME = "profiler"
# Every event table header and every GpuMemCpy row holds "Calls".
ANCHORS: tuple[str, ...] = ("Calls",)

# A literal, so the scan runs at memory speed; the report header lines ("Place:",
# "Time unit:") are looked for only above a table that was found.
_HIT = re.compile(r"Calls")
_HEADER = re.compile(r"[ \t]*Event(?=[ \t]+Calls[ \t]+Total\b)")
_CONTEXT = re.compile(r"^[ \t]*(?:Place:[ \t]*(?P<place>\S*)|Time unit:[ \t]*(?P<unit>\S*))", re.M)
_BANNER = "Profiling Report"
# How far above a table its report header may be (banner, place, unit, overhead and
# GpuMemCpy summaries take about 1 KB).
CONTEXT_CHARS = 8192
# A count above the store's BIGINT: its row is a problem, not an overflow of the document.
MAX_COUNT = 2.0**63
# Header columns -> ProfileEvent fields; "cpu"/"gpu" are time-and-ratio pairs.
_COLUMN = re.compile(r"Calls|Total|(?P<pair>[CG]PU) Time \(Ratio\)|Min\.|Max\.|Ave\.|Ratio\.")
_COLUMN_FIELDS = {
    "Calls": "calls",
    "Total": "total",
    "Min.": "min",
    "Max.": "max",
    "Ave.": "ave",
    "Ratio.": "ratio",
}
# A line that may be a table row: an event name, then nothing (cut after the name) or
# something that starts like a number. Prose ("Note that ...") is not a row.
_ROW = re.compile(
    r"(?P<indent>[ \t]*)(?P<name>[A-Za-z_]\S*)"
    r"(?:[ \t]+(?P<rest>(?:[-+.\d]|nan|inf).*?))?[ \t]*$",
    re.IGNORECASE,
)
# One field of a row: a value, with its "(ratio)" when one follows (possibly cut unclosed).
_FIELD = re.compile(r"[^\s(]+(?:[ \t]*\([^)\s]*\)?)?|\([^)\s]*\)?")
_PAIR = re.compile(r"(?P<time>[^\s(]+)[ \t]*\((?P<ratio>[^)\s]*)\)")
# Paddle names the rows GpuMemcpy, GpuMemcpyAsync and GpuMemcpySync; requiring the prefix
# keeps log lines such as "API Calls: 12" from passing for cut rows.
_MEMCPY_ROW = re.compile(
    r"(?P<indent>[ \t]*)(?P<name>GpuMemcpy\S*)[ \t]+Calls:[ \t]*(?P<calls>\S+)[ \t]+"
    r"Total:[ \t]*(?P<total>\S+)[ \t]+Ratio:[ \t]*(?P<ratio>\S+?)%[ \t]*$"
)
_MEMCPY_START = re.compile(r"[ \t]*GpuMemcpy\S*[ \t]+Calls:")


@dataclass(slots=True)
class _Report:
    """What the report header above a table says about it."""

    place: str = ""
    unit: str = "ms"  # as written; Paddle prints ms


class _Bad(ValueError):
    """A field that cannot be read; its message is the Problem's reason."""


def parse(doc: DocText) -> Iterator[Item | EventBlock]:
    """ProfileEvents of every profiler table and GpuMemCpy summary, and Problems, in order.

    A chunk dense with tables (BULK_MIN_HITS, its newline index at hand) gives the events
    of its tables of plain rows as one EventBlock first (ingest.parsers.profiler_bulk),
    then the items of the other tables in order: exactly what the line path reads.
    """
    if not (isinstance(doc.line_at, LineIndex) and doc.text.count("Calls") >= BULK_MIN_HITS):
        for items in _tables(doc, None):
            assert isinstance(items, list)
            yield from items
        return
    from ingest.parsers.profiler_bulk import Reader

    reader = Reader(doc)
    found = list(_tables(doc, reader))  # the reader's tables are read at the end
    block, refused = reader.finish()
    if block is not None:
        yield block
    again = {id(table) for table in refused}
    for items in found:
        if isinstance(items, list):
            yield from items
        elif id(items) in again:  # a table the bulk reader cannot read exactly
            rows, _ = _table_rows(doc, items.pos, items.layout, items.place, items.unit)
            yield from _nest(rows)


# From this many hits of "Calls" (a table header each, or a GpuMemCpy row) in a chunk,
# the bulk reader pays for its passes over the chunk's lines.
BULK_MIN_HITS = 32


def _tables(doc: DocText, reader: Reader | None) -> Iterator[list[Item] | Taken]:
    """The items of each table and GpuMemCpy summary in order, or the table the reader
    took in their place."""
    text = doc.text
    resume = 0  # end of the last table read: hits inside it are not new tables
    floor = 0  # end of the last event table: the header lines above it were its own
    for hit in _HIT.finditer(text):
        if hit.start() < resume:
            continue
        start, end = doc.line_bounds(hit.start())
        line = text[start:end]
        header = _HEADER.match(line)
        items: list[Item] | Taken
        if header:
            report = _report_above(text, start, floor)
            items, resume = _event_table(doc, start, end, start + header.end(), report, reader)
            floor = resume
        elif _MEMCPY_START.match(line):
            items, resume = _memcpy_section(doc, start, _report_above(text, start, floor))
        else:
            resume = end
            continue
        yield items


def _report_above(text: str, pos: int, floor: int) -> _Report:
    """Place and unit from the header lines of the report above pos (not above floor)."""
    low = max(floor, pos - CONTEXT_CHARS)
    banner = text.rfind(_BANNER, low, pos)
    report = _Report()
    for m in _CONTEXT.finditer(text, max(low, banner), pos):
        if m["place"] is not None:
            report.place = m["place"]
        else:
            report.unit = m["unit"]
    return report


def _unit_problem(unit: str) -> str:
    """Why a report's time unit cannot be used, or "" when it can."""
    try:
        if normalise(1.0, unit).kind == "time":
            return ""
    except UnitError:
        pass
    return f"unknown profiler time unit {unit!r}"


def _problem(line: int, reason: str, raw: str) -> Problem:
    return Problem(line, reason, raw, NAME)


# -- event table ----------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _columns(header: str) -> tuple[str, ...] | None:
    """The fields of the columns after "Event", or None if the header is not one we know
    (a report prints the same header again and again: read once each)."""
    found = list(_COLUMN.finditer(header))
    if _COLUMN.sub("", header).strip() or not found:
        return None
    columns = [m["pair"].lower() if m["pair"] else _COLUMN_FIELDS[m[0]] for m in found]
    if columns[:2] != ["calls", "total"] or columns[-1] != "ratio":
        return None
    return tuple(columns)


def _event_table(
    doc: DocText, start: int, end: int, columns_at: int, report: _Report, reader: Reader | None
) -> tuple[list[Item] | Taken, int]:
    """The items of the table whose header line is text[start:end] (or the table as the
    bulk reader took it), and where it ends."""
    text = doc.text
    columns = _columns(text[columns_at:end])
    reason = "header not recognised" if columns is None else _unit_problem(report.unit)
    if columns is None or reason:
        problem = _problem(
            doc.line_at(start), f"profiler table {reason}: not read", text[start:end]
        )
        return [problem], end
    if end >= len(text):
        return [], end
    if reader is not None:
        taken = reader.take(end + 1, columns, report.place, report.unit)
        if taken is not None:
            return taken
    rows, table_end = _table_rows(doc, end + 1, columns, report.place, report.unit)
    return list(_nest(rows)), table_end


def _table_rows(
    doc: DocText, pos: int, columns: tuple[str, ...], place: str, unit: str
) -> tuple[list[tuple[int, Item]], int]:
    """(indent, item) of each row from pos to the end of the table, and the end offset."""
    # The plain rows first, a column at a time; the careful reader goes on from the first
    # line that is not one, in the state it would have reached by itself (no suspect).
    rows, end = _plain_rows(doc, pos, columns, place, unit)
    if rows:
        pos = end + 1
        if pos > len(doc.text):
            return rows, end
    suspect: tuple[int, str] | None = None  # a non-row line: garbage if a good row follows
    for number, start, line in doc.lines_from(pos):
        if ends_table(line):
            break
        row = _ROW.match(line)
        if row is None:
            if suspect is not None:
                break
            suspect = (number, line)
            continue
        item = _read_row(row, columns, place, unit, number, line)
        if suspect is not None:
            if not isinstance(item, ProfileEvent):
                break  # prose, then something row-like: the table ended at the prose
            rows.append((-1, _problem(suspect[0], "not a profiler row", suspect[1])))
            suspect = None
        rows.append((len(row["indent"].expandtabs(8)), item))
        end = start + len(line)
    return rows, end


@functools.cache
def _plain_line_pattern(columns: tuple[str, ...]) -> re.Pattern[str]:
    """A whole line that _ROW reads as a row and _plain_row_pattern as plain numbers."""
    return re.compile(
        r"(?P<indent>[ \t]*)(?P<name>[A-Za-z_]\S*)[ \t]+(?:"
        + _plain_row_pattern(columns).pattern
        + r")[ \t]*(?=\n|\Z)"
    )


def _plain_rows(
    doc: DocText, pos: int, columns: tuple[str, ...], place: str, unit: str
) -> tuple[list[tuple[int, Item]], int]:
    """The table's leading rows of plain numbers in range (nearly every row Paddle
    prints), read a column at a time: the same events _table_rows would make of them,
    several times faster. ([], pos) when there are none, or when a value of theirs is out
    of range: then the row reader reads them one by one and says what is wrong.
    """
    text = doc.text
    match = _plain_line_pattern(columns).match
    matches: list[re.Match[str]] = []
    at = pos
    while (m := match(text, at)) is not None:
        matches.append(m)
        at = m.end() + 1
    if not matches:
        return [], pos
    try:
        fields = _plain_columns([m.groups()[2:] for m in matches], columns, unit)
    except (UnitError, _Bad):
        return [], pos
    first = doc.line_at(pos)
    rows: list[tuple[int, Item]] = []
    for offset, m in enumerate(matches):
        indent, name = m.group("indent", "name")
        thread, event = _split_thread(name)
        values = {column: values[offset] for column, values in fields.items()}
        raw = text[m.start() : m.end()]
        event_item = ProfileEvent(
            event=event, thread=thread, place=place, line=first + offset, raw=raw, **values
        )
        rows.append((len(indent.expandtabs(8)), event_item))
    return rows, matches[-1].end()


def _plain_columns(
    rows: list[tuple[str, ...]], columns: tuple[str, ...], unit: str
) -> dict[str, list[float] | list[int]]:
    """The event fields of plain rows, column by column, as _plain_row reads them."""
    numbers = [list(map(float, field)) for field in zip(*rows, strict=True)]
    fields: dict[str, list[float] | list[int]] = {}
    index = 0
    for column in columns:
        if column == "calls":
            calls = numbers[index]
            if not all(c.is_integer() and c < MAX_COUNT for c in calls):
                raise _Bad("calls not a count")
            fields["calls"] = list(map(int, calls))
        elif column == "ratio":
            fields["ratio"] = _plain_ratios(numbers[index])
        elif column in ("cpu", "gpu"):
            fields[f"{column}_time"] = convert_all(numbers[index], unit)
            index += 1
            fields[f"{column}_ratio"] = _plain_ratios(numbers[index])
        else:
            fields[column] = convert_all(numbers[index], unit)
        index += 1
    return fields


def _plain_ratios(values: list[float]) -> list[float]:
    if values and not max(values) <= 1.001:  # _plain_ratio's bound, for a column
        raise _Bad("out of range")
    return values


def ends_table(line: str) -> bool:
    """Whether a line ends a table: a blank line or a fence."""
    stripped = line.strip()
    return not stripped or stripped.startswith(("```", "~~~"))


def _read_row(
    row: re.Match[str], columns: tuple[str, ...], place: str, unit: str, number: int, line: str
) -> Item:
    fast = _plain_row(row["rest"] or "", columns, unit)
    if fast is not None:
        thread, event = _split_thread(row["name"])
        return ProfileEvent(event=event, thread=thread, place=place, line=number, raw=line, **fast)
    fields = _FIELD.findall(row["rest"] or "")
    got, want = len(fields) + 1, len(columns) + 1
    if got < want:
        return _problem(number, f"profiler row cut short: {got} of {want} fields", line)
    if got > want:
        return _problem(number, f"profiler row has {got} fields, its header {want}", line)
    values: dict[str, float | int | None] = {}
    try:
        for column, field in zip(columns, fields, strict=True):
            values.update(_read_field(column, field, unit, values))
    except _Bad as bad:
        return _problem(number, f"profiler row: {bad}", line)
    thread, event = _split_thread(row["name"])
    return ProfileEvent(event=event, thread=thread, place=place, line=number, raw=line, **values)


# A plain number as a row field: what split_number reads as float(field), no sign, no unit.
_PLAIN = r"(\d+\.?\d*(?:[eE][-+]?\d+)?)"


@functools.cache
def _plain_row_pattern(columns: tuple[str, ...]) -> re.Pattern[str]:
    """A row of a table with these columns whose every field is a plain number."""
    fields = [rf"{_PLAIN}[ \t]*\({_PLAIN}\)" if c in ("cpu", "gpu") else _PLAIN for c in columns]
    return re.compile("[ \t]+".join(fields))


def _plain_row(rest: str, columns: tuple[str, ...], unit: str) -> dict[str, float | int] | None:
    """The values of a row of plain numbers in range (nearly every row of a report), read
    with one match; None leaves the row to the field-by-field reader (_read_field), which
    gives the same values for such a row and says what is wrong with any other.

    The fields a match finds are those _FIELD finds: each is free of white space and
    "(", and only a time-and-ratio pair is followed by a parenthesis.
    """
    m = _plain_row_pattern(columns).fullmatch(rest)
    if m is None:
        return None
    numbers = iter(m.groups())
    values: dict[str, float | int] = {}
    try:
        time = converter(unit)  # normalise(value, unit).value
        for column in columns:
            if column == "calls":
                calls = float(next(numbers))
                if not calls.is_integer() or calls >= MAX_COUNT:  # inf is not an integer
                    return None
                values["calls"] = int(calls)
            elif column == "ratio":
                values["ratio"] = _plain_ratio(float(next(numbers)))
            elif column in ("cpu", "gpu"):
                values[f"{column}_time"] = time(float(next(numbers)))
                values[f"{column}_ratio"] = _plain_ratio(float(next(numbers)))
            else:
                values[column] = time(float(next(numbers)))
    except (UnitError, _Bad):
        return None
    return values


def _plain_ratio(value: float) -> float:
    if not value <= 1.001:  # the bound of _ratio (plain numbers are finite or inf, >= 0)
        raise _Bad("out of range")
    return value


def _read_field(
    column: str, field: str, unit: str, seen: dict[str, float | int | None]
) -> dict[str, float | int | None]:
    if column == "calls":
        return {"calls": _count(field)}
    if column == "ratio":
        return {"ratio": _ratio(field)}
    if column in ("cpu", "gpu"):
        pair = _PAIR.fullmatch(field)
        if not pair:
            raise _Bad(f"{column.upper()} Time (Ratio) {field!r} is not 'time (ratio)'")
        time = _time(pair["time"], unit)
        # Paddle prints time/total: 0/0 is "nan" (or "-nan") for an event of total 0.
        undefined = seen.get("total") == 0 and pair["ratio"].lstrip("+-").lower() == "nan"
        ratio = None if undefined else _ratio(pair["ratio"])
        return {f"{column}_time": time, f"{column}_ratio": ratio}
    return {column: _time(field, unit)}


def _split_thread(name: str) -> tuple[str, str]:
    """thread0::fc -> ("thread0", "fc"): "thread", digits, "::", an event; else ("", name)."""
    if name.startswith("thread"):
        thread, colons, event = name.partition("::")
        if colons and event and thread[6:].isdecimal():  # isdecimal: what \d matches
            return thread, event
    return "", name


def _nest(rows: list[tuple[int, Item]]) -> Iterator[Item]:
    """Set depth from indentation, and a nested event's thread from its parent."""
    indents = [indent for indent, item in rows if isinstance(item, ProfileEvent)]
    base = min(indents, default=0)
    step = min((i - base for i in indents if i > base), default=0)
    parents: list[ProfileEvent] = []
    for indent, item in rows:
        if step and isinstance(item, ProfileEvent):
            item.depth = round((indent - base) / step)
            while parents and parents[-1].depth >= item.depth:
                parents.pop()
            if not item.thread and parents:
                item.thread = parents[-1].thread
            parents.append(item)
        yield item


# -- values ---------------------------------------------------------------------------


def _number(field: str) -> float:
    parsed = split_number(field)
    if parsed is None or parsed[1]:
        raise _Bad(f"{field!r} is not a number")
    return parsed[0]


def _time(field: str, unit: str) -> float:
    try:
        return normalise(_number(field), unit).value
    except UnitError as e:
        raise _Bad(str(e)) from None


def _count(field: str) -> int:
    value = _number(field)
    if not math.isfinite(value) or value < 0 or not value.is_integer():
        raise _Bad(f"calls {field!r} is not a count")
    if value >= MAX_COUNT:
        raise _Bad(f"calls {field!r} is more than the store's counts hold (2^63 - 1)")
    return int(value)


def _ratio(field: str, scale: float = 1.0) -> float:
    value = _number(field) / scale
    # Ratios are shares of the whole report; allow rounding just above 1.
    if not math.isfinite(value) or not 0 <= value <= 1.001:
        raise _Bad(f"ratio {field!r} is not a share between 0 and 1")
    return value


# -- GpuMemCpy summary ----------------------------------------------------------------


def _memcpy_section(doc: DocText, pos: int, report: _Report) -> tuple[list[Item], int]:
    """Items of the GpuMemCpy rows from the line at pos on, and the offset where they end."""
    rows: list[tuple[int, Item]] = []
    end = pos
    reason = _unit_problem(report.unit)
    for number, start, line in doc.lines_from(pos):
        row = _MEMCPY_ROW.match(line)
        if row and reason:
            rows.append((-1, _problem(number, f"GpuMemCpy row: {reason}", line)))
        elif row:
            rows.append((len(row["indent"].expandtabs(8)), _memcpy_row(row, report, number, line)))
        elif _MEMCPY_START.match(line):
            rows.append((-1, _problem(number, "GpuMemCpy row cut short", line)))
        else:
            break
        end = start + len(line)
    return list(_nest(rows)), end


def _memcpy_row(row: re.Match[str], report: _Report, number: int, line: str) -> Item:
    try:
        calls = _count(row["calls"])
        total = _time(row["total"], report.unit)
        ratio = _ratio(row["ratio"], scale=100.0)
    except _Bad as bad:
        return _problem(number, f"GpuMemCpy row: {bad}", line)
    return ProfileEvent(
        event=row["name"],
        calls=calls,
        total=total,
        ratio=ratio,
        section="memcpy",
        place=report.place,
        line=number,
        raw=line,
    )
