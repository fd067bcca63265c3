"""A large chunk's profiler tables of plain rows, read in bulk as one EventBlock.

Nearly every row Paddle prints is an event name and plain numbers in range; the line path
(ingest.parsers.profiler._plain_rows) matches them a line at a time and builds an object a
row. Here the rows of every such table of a chunk are read at once, as Arrow columns:

- while the parser walks the tables (it finds their headers, reports and units as it
  always does), `Reader.take` accepts a table whose lines, from the first after its
  header, are all plain rows (one RE2 pass over the chunk's lines per column layout says
  which lines are) up to the line that ends the table; any other table the parser reads
  line by line;
- `Reader.finish` finds the fields of the accepted tables' rows from byte offsets with
  numpy (_Offsets: RE2 extracts submatches slowly, a dozen groups took half the time),
  casts the numbers with Arrow (exactly the floats float() reads), and checks
  per table what _plain_columns and convert_all check; the nesting (depth from
  indentation) is worked out per table over arrays. A table that fails a check, whose
  indentation holds a tab, or whose nesting would pass a thread from a parent to a child
  (prefixed and bare names mixed) is handed back: the parser reads it line by line, as
  before, with the same result the line path always gave.

The regular expressions are those of profiler._plain_line_pattern, over ASCII lines (a
chunk with a newline index is ASCII: ingest.documents.chunk_text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest import columns
from ingest.columns import EventBlock
from ingest.parsers.profiler import ends_table
from ingest.text import DocText, LineIndex
from perfboard.units import ABSURD_MS, scaling

# profiler._PLAIN for RE2. Python's \S over ASCII is anything but a space, \t \n \v \f \r
# and the separators \x1c-\x1f (what str.isspace says): RE2's \S would take \v and those.
_NUMBER = r"[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?"
_NAME = r"[A-Za-z_][^ \t\n\x0b\x0c\r\x1c-\x1f]*"
# A name profiler._split_thread splits: "thread", digits, "::" and an event (not empty).
_THREADED = r"^thread[0-9]+::."
_PAIRS = ("cpu", "gpu")


def _line_pattern(layout: tuple[str, ...]) -> str:
    """A whole line that profiler._plain_line_pattern matches, its numbers named n0, n1..."""
    fields, k = [], 0
    for column in layout:
        if column in _PAIRS:
            fields.append(rf"(?P<n{k}>{_NUMBER})[ \t]*\((?P<n{k + 1}>{_NUMBER})\)")
            k += 2
        else:
            fields.append(rf"(?P<n{k}>{_NUMBER})")
            k += 1
    return rf"^(?P<indent>[ \t]*)(?P<name>{_NAME})[ \t]+" + r"[ \t]+".join(fields) + r"[ \t]*$"


@dataclass(slots=True)
class Taken:
    """A table the reader took: its first row (index into the chunk's lines, and line number), how
    many rows, where its rows start (the parser's `pos`), and its header's reading."""

    index: int
    line: int
    rows: int
    pos: int
    layout: tuple[str, ...]
    place: str
    unit: str


class Reader:
    """The tables of one chunk read in bulk (the module docstring)."""

    def __init__(self, doc: DocText) -> None:
        assert isinstance(doc.line_at, LineIndex)
        self._doc = doc
        data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
        self._newlines = doc.line_at.positions
        self._starts = np.concatenate(([0], self._newlines + 1))
        self._lines: pa.LargeStringArray | None = None  # made for the first table only
        self._data = data
        self._size = len(data)
        self._not_plain: dict[tuple[str, ...], np.ndarray] = {}
        self.tables: list[Taken] = []

    def _not_plain_lines(self, layout: tuple[str, ...]) -> np.ndarray:
        """The indices of the chunk's lines that are not plain rows of this layout."""
        found = self._not_plain.get(layout)
        if found is None:
            if self._lines is None:
                self._lines, _ = columns.lines_of(self._data, self._newlines)
            plain = pc.match_substring_regex(self._lines, _line_pattern(layout))
            found = np.flatnonzero(~plain.to_numpy(zero_copy_only=False))
            self._not_plain[layout] = found
        return found

    def take(
        self, pos: int, layout: tuple[str, ...], place: str, unit: str
    ) -> tuple[Taken, int] | None:
        """The table whose rows start at pos, taken (its rows are all plain up to its end),
        and where it ends; None leaves it to the line path."""
        index = int(self._starts.searchsorted(pos))  # pos starts a line: its index
        count = len(self._starts)
        not_plain = self._not_plain_lines(layout)
        after = int(not_plain.searchsorted(index))
        stop = int(not_plain[after]) if after < len(not_plain) else count
        if stop == index:
            return None
        if stop < count:
            line = self._doc.text[self._starts[stop] : self._line_end(stop)]
            if not ends_table(line):
                return None  # the careful reader goes on here: the line path's table
        table = Taken(index, self._doc.line_at(pos), stop - index, pos, layout, place, unit)
        self.tables.append(table)
        return table, self._line_end(stop - 1)

    def _line_end(self, index: int) -> int:
        return int(self._newlines[index]) if index < len(self._newlines) else self._size

    def finish(self) -> tuple[EventBlock | None, list[Taken]]:
        """The block of every table taken that reads exactly, and the tables that do not
        (for the line path), in order."""
        from ingest.save import EVENT_SCHEMA

        by_layout: dict[tuple[str, ...], list[Taken]] = {}
        for table in self.tables:
            by_layout.setdefault(table.layout, []).append(table)
        parts, refused = [], []
        if self.tables:
            offsets = _Offsets(self._data)
        for layout, tables in by_layout.items():
            rows = np.concatenate([np.arange(t.index, t.index + t.rows) for t in tables])
            starts, ends = self._starts[rows], np.append(self._newlines, self._size)[rows]
            part, bad = _read(offsets, starts, ends, layout, tables)
            parts.append(part)
            refused += [table for table, no in zip(tables, bad, strict=True) if no]
        refused.sort(key=lambda table: table.index)
        if not parts:
            return None, refused
        events = pa.concat_tables(parts).cast(EVENT_SCHEMA)
        if len(parts) > 1:
            events = events.take(np.argsort(events["line"].to_numpy(), kind="stable"))
        return (EventBlock(events) if events.num_rows else None), refused


class _Offsets:
    """Where the blanks, tabs and number-like tokens of a chunk's bytes are (sorted).

    In a plain row (the RE2 pass said it is one), the name is the first run of non-blank
    bytes; after it, the runs of bytes other than blanks, parentheses and newlines are
    exactly its numbers, in order (a number holds none of those, and two numbers are
    always parted by one of them).
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        buf = np.frombuffer(data, np.uint8)
        self.size = len(buf)
        blank = (buf == ord(" ")) | (buf == ord("\t"))
        self.blank = blank
        # Where each run of blanks starts and where it stops (the next byte): fewer than
        # the blanks themselves (a table's columns are padded with many).
        edges = np.concatenate(([False], blank, [False]))
        self.blank_starts = np.flatnonzero(edges[1:-1] & ~edges[:-2])
        self.blank_stops = np.flatnonzero(edges[1:-1] & ~edges[2:]) + 1
        self.tabs = np.flatnonzero(buf == ord("\t"))
        parted = blank | (buf == ord("(")) | (buf == ord(")")) | (buf == ord("\n"))
        padded = np.concatenate(([True], parted, [True]))
        inside = ~padded[1:-1]
        self.token_starts = np.flatnonzero(inside & padded[:-2])
        self.token_ends = np.flatnonzero(inside & padded[2:]) + 1


def _read(
    at: _Offsets, starts: np.ndarray, ends: np.ndarray, layout: tuple[str, ...], tables: list[Taken]
) -> tuple[pa.Table, np.ndarray]:
    """The events of the tables of one layout that read exactly, and which do not; the
    tables' rows are the lines data[starts[i]:ends[i]]."""
    counts = np.array([t.rows for t in tables], np.int64)
    seg = np.concatenate(([0], np.cumsum(counts)[:-1]))
    total = int(counts.sum())
    table_of = np.repeat(np.arange(len(tables)), counts)
    offset = np.arange(total) - seg[table_of]  # the row's place in its table
    # A row is an indent of blanks, a name, then blanks: the name starts where the
    # row's first run of blanks stops (at once if none), and ends where the next starts.
    indented = at.blank[starts]
    name_start = np.where(indented, columns.next_at(at.blank_stops, starts, at.size), starts)
    name_end = columns.next_at(at.blank_starts, name_start, at.size)
    count = sum(2 if column in _PAIRS else 1 for column in layout)
    tokens = (at.token_starts.searchsorted(name_end)[:, None] + np.arange(count)).ravel()
    texts = columns.spans(at.data, at.token_starts[tokens], at.token_ends[tokens])
    table = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False).reshape(total, count)
    numbers = [table[:, k] for k in range(count)]
    # Each table's unit: values are divided by a divisor, or multiplied by a factor.
    scales = [scaling(t.unit) for t in tables]
    divisor = np.array([s[0] for s in scales], np.float64)[table_of]
    factor = np.array([s[1] for s in scales], np.float64)[table_of]

    bad = np.zeros(total, bool)  # a row that makes its table raise in _plain_columns

    def time(values: np.ndarray) -> np.ndarray:
        nonlocal bad
        converted = np.where(
            divisor > 0, values / np.where(divisor > 0, divisor, 1), values * factor
        )
        bad |= ~np.isfinite(values) | (converted > ABSURD_MS)
        return converted

    def ratio(values: np.ndarray) -> np.ndarray:
        nonlocal bad
        bad |= ~(values <= 1.001)
        return values

    values: dict[str, np.ndarray] = {}
    k = 0
    for column in layout:  # as _plain_columns: a later column of a name wins
        if column == "calls":
            calls = numbers[k]
            # A count float() reads as a whole number (and int64 holds).
            bad |= ~(np.isfinite(calls) & (np.floor(calls) == calls) & (calls < 2.0**63))
            values["calls"] = calls
        elif column == "ratio":
            values["ratio"] = ratio(numbers[k])
        elif column in _PAIRS:
            values[f"{column}_time"] = time(numbers[k])
            k += 1
            values[f"{column}_ratio"] = ratio(numbers[k])
        else:
            values[column] = time(numbers[k])
        k += 1

    width = name_start - starts  # the indent's width: spaces only (a tab: refused)
    tabbed = at.tabs.searchsorted(name_start) > at.tabs.searchsorted(starts)
    names = columns.spans(at.data, name_start, name_end)
    threaded = pc.match_substring_regex(names, _THREADED).to_numpy(zero_copy_only=False)
    # _nest: depth = round((indent - base) / step), base the least indent of the table,
    # step the least indent above it; np.rint rounds half to even, as round does.
    base = np.minimum.reduceat(width, seg)[table_of]
    above = width - base
    big = np.iinfo(np.int64).max
    step = np.minimum.reduceat(np.where(above > 0, above, big), seg)
    step = np.where(step == big, 0, step)
    nested = step > 0
    step_row = step[table_of]
    depth = np.where(step_row > 0, np.rint(above / np.maximum(step_row, 1)), 0).astype(np.int32)
    # A nested table of prefixed and bare names: children take their parent's thread, row
    # by row (the line path's work).
    mixed = nested & np.logical_or.reduceat(threaded, seg) & ~np.logical_and.reduceat(threaded, seg)
    refused = np.logical_or.reduceat(bad | tabbed, seg) | mixed

    keep = np.flatnonzero(~refused[table_of])
    n = len(keep)
    places = pa.array([t.place for t in tables], pa.string()).take(pa.array(table_of[keep]))
    first = np.array([t.line for t in tables], np.int64)[table_of[keep]]

    def floats(name: str) -> pa.Array:
        got = values.get(name)
        return pa.nulls(n, pa.float64()) if got is None else pa.array(got[keep], pa.float64())

    # thread0::fc -> ("thread0", "fc"): the thread up to the first "::", the event after.
    name_start, name_end = name_start[keep], name_end[keep]
    colons = pc.find_substring(names.take(pa.array(keep)), "::").to_numpy(zero_copy_only=False)
    thread_end = np.where(threaded[keep], name_start + colons, name_start)
    event_start = np.where(threaded[keep], thread_end + 2, name_start)
    events = pa.table(
        {
            "run": pa.array(np.zeros(n, np.int32)),
            "section": pa.repeat(pa.scalar("event", pa.string()), n),
            "place": places,
            "event": columns.spans(at.data, event_start, name_end),
            "thread": columns.spans(at.data, name_start, thread_end),
            "depth": pa.array(depth[keep]),
            "calls": pa.array(values["calls"][keep].astype(np.int64)),
            **{
                name: floats(name)
                for name in ("total", "cpu_time", "cpu_ratio", "gpu_time", "gpu_ratio")
            },
            **{name: floats(name) for name in ("min", "max", "ave", "ratio")},
            "line": pa.array(first + offset[keep]),
            "raw": columns.spans(at.data, starts[keep], ends[keep]),
        }
    )
    return events, refused
