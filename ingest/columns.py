"""Records read in bulk: Arrow columns in place of one object a record.

A dense log holds a record on most of its lines (a million latency lines in 100 MB), and
a record built as an object, line by line, costs many times the reading of its line. A
parser that knows the exact shape of its commonest line reads all such lines of a chunk at
once (ingest.parsers.latency's bulk path): a regular expression validates them in one RE2
pass, numpy finds their fields' byte offsets, Arrow casts the fields, and the records go on
as one MeasurementBlock through runs (ingest.bulk) into the store's Rows, never as objects.

Wherever the block cannot stand for its records (a document of prose, whose headings and
line labels fill params per record; other parsers' measurements around it), it turns back
into the very Measurement objects its parser would have built (`records()`), so both
ways store the same rows: tests/test_bulk.py compares them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import orjson
import pyarrow as pa

from perfboard.model import Measurement, PassApplied, ProfileEvent

# The columns of a block, one row a measurement; what they do not hold, the template says.
BLOCK_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("raw", pa.large_string()),
        ("value", pa.float64()),
        ("samples", pa.int64()),
        ("warmup", pa.int64()),
        ("measured_at", pa.timestamp("us")),
        ("benchmark", pa.large_string()),
        ("metric", pa.large_string()),
        ("statistic", pa.large_string()),  # stats["statistic"] ("": none): in a run's key
        ("stats", pa.large_string()),  # the stats as canonical JSON (null: none)
    ]
)


@dataclass(slots=True)
class MeasurementBlock:
    """Measurements of one parser read in bulk: a table of what varies, a template of what
    every row shares (unit, task, direction, framework, device, params; empty testbed).

    Rows of several kinds (a demo summary's latency and throughput, each under the
    settings of its report) have a template each: `variants`, and `variant` the index of
    each row's. Without them every row is the template's.

    `first` and `end`: where its parser's own Measurement objects sit in Found.measurements
    (they and the block's rows are that parser's records, interleaved by line).
    """

    table: pa.Table
    template: Measurement
    first: int = 0
    end: int = 0
    # Set by ingest.bulk when the block stays columnar: run numbers, and the fills a plain
    # log gets from its document (project, version, time).
    run: np.ndarray | None = field(default=None, repr=False)
    variants: list[Measurement] = field(default_factory=list)
    variant: np.ndarray | None = field(default=None, repr=False)
    # Each row's stats["thread_id"] (-1: none), a part of its run key (runs.record_key):
    # PrintTime's records of two threads side by side are one run. None: no row has one.
    thread: np.ndarray | None = field(default=None, repr=False)

    @property
    def templates(self) -> list[Measurement]:
        """The template of each variant (the one template when there are none)."""
        return self.variants or [self.template]

    @property
    def variant_of_rows(self) -> np.ndarray:
        """Each row's index into `templates`."""
        if self.variant is None:
            return np.zeros(self.table.num_rows, np.int32)
        return self.variant

    def shift(self, lines: int, runs: int) -> None:
        """Line and run numbers moved on (its chunk put in its place in the document)."""
        if lines:
            line = self.table.schema.get_field_index("line")
            moved = pa.array(self.table["line"].to_numpy() + lines)
            self.table = self.table.set_column(line, "line", moved)
        if runs and self.run is not None:
            self.run = self.run + runs

    @property
    def thread_of_rows(self) -> np.ndarray:
        """Each row's thread id in its run key (-1: none)."""
        if self.thread is None:
            return np.full(self.table.num_rows, -1, np.int64)
        return self.thread

    @property
    def lines(self) -> np.ndarray:
        return self.table["line"].to_numpy()

    def records(self) -> list[Measurement]:
        """The rows as the Measurement objects the parser's per-line path builds."""
        templates = self.templates
        columns = {name: self.table[name].to_pylist() for name in self.table.column_names}
        parsed: dict[str | None, dict[str, object]] = {None: {}}
        out = []
        runs = self.run.tolist() if self.run is not None else [0] * self.table.num_rows
        for line, raw, value, samples, warmup, at, benchmark, metric, stats, run, kind in zip(
            columns["line"],
            columns["raw"],
            columns["value"],
            columns["samples"],
            columns["warmup"],
            columns["measured_at"],
            columns["benchmark"],
            columns["metric"],
            columns["stats"],
            runs,
            self.variant_of_rows.tolist(),
            strict=True,
        ):
            if stats not in parsed:
                parsed[stats] = orjson.loads(stats)
            t = templates[kind]
            out.append(
                Measurement(
                    benchmark=benchmark,
                    metric=metric,
                    value=value,
                    unit=t.unit,
                    task=t.task,
                    direction=t.direction,
                    framework=t.framework,
                    device=t.device,
                    params=dict(t.params),
                    measured_at=at,
                    samples=samples,
                    warmup=warmup,
                    stats=dict(parsed[stats]),
                    run=run,
                    line=line,
                    raw=raw,
                )
            )
        return out


@dataclass(slots=True)
class TableBlock:
    """A block whose rows are already in their store table's own columns, "line" and "run"
    among them (run filled by ingest.bulk, 0 before)."""

    table: pa.Table

    @property
    def lines(self) -> np.ndarray:
        return self.table["line"].to_numpy()

    def shift(self, lines: int, runs: int) -> None:
        """Line and run numbers moved on (its chunk put in its place in the document)."""
        for name, by in (("line", lines), ("run", runs)):
            if by:
                index = self.table.schema.get_field_index(name)
                field_type = self.table.schema.field(name).type
                moved = pa.array(self.table[name].to_numpy() + by, field_type)
                self.table = self.table.set_column(index, name, moved)


@dataclass(slots=True)
class PassBlock(TableBlock):
    """The passes of a chunk read in bulk (ingest.save.PASS_SCHEMA)."""

    def records(self) -> list[PassApplied]:
        """The rows as the PassApplied objects the line path builds."""
        columns = [self.table[name].to_pylist() for name in PASS_FIELDS]
        return [
            PassApplied(name, kind, order, subgraphs, run, line, raw)
            for run, name, kind, order, subgraphs, line, raw in zip(*columns, strict=True)
        ]


PASS_FIELDS = ("run", "name", "kind", "order", "subgraphs", "line", "raw")


@dataclass(slots=True)
class EventBlock(TableBlock):
    """The profile events of a chunk read in bulk (ingest.parsers.profiler_bulk;
    ingest.save.EVENT_SCHEMA).

    `first` and `end`: where its parser's own ProfileEvent objects sit in
    Found.profile_events (they and the block's rows are that parser's events, interleaved
    by line: the tables the bulk reader left to the line path).
    """

    first: int = 0
    end: int = 0

    def records(self) -> list[ProfileEvent]:
        """The rows as the ProfileEvent objects the line path builds."""
        names = self.table.column_names
        columns = [self.table[name].to_pylist() for name in names]
        rows = zip(*columns, strict=True)
        return [ProfileEvent(**dict(zip(names, row, strict=True))) for row in rows]


def line_bounds(newlines: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each line of a text of `size` bytes starts and ends (before its newline),
    from the offsets of its newlines."""
    return np.concatenate(([0], newlines + 1)), np.append(newlines, size)


def lines_of(data: bytes, newlines: np.ndarray) -> tuple[pa.LargeStringArray, np.ndarray]:
    """Every line of `data` (without its newline) as strings, and where each starts."""
    starts, ends = line_bounds(newlines, len(data))
    return spans(data, starts, ends), starts


def spans(data: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.LargeStringArray:
    """The strings data[starts[i]:ends[i]]: spans of ASCII bytes, in order, not overlapping.

    One copy: the spans and the gaps between them are laid over `data` as one array
    (offsets start0, end0, start1, end1, ...), and every other string is taken.
    """
    n = len(starts)
    if n == 0:
        return pa.array([], pa.large_string())
    offsets = np.empty(2 * n, np.int64)
    offsets[0::2] = starts
    offsets[1::2] = ends
    laid = pa.LargeStringArray.from_buffers(2 * n - 1, pa.py_buffer(offsets), pa.py_buffer(data))
    return laid.take(pa.array(np.arange(0, 2 * n, 2)))


def occurrences(buf: np.ndarray, needle: bytes) -> np.ndarray:
    """Where `needle` starts in `buf`, in order, each occurrence (overlapping ones too)."""
    if len(buf) < len(needle):
        return np.zeros(0, np.int64)
    at = np.flatnonzero(buf[: len(buf) - len(needle) + 1] == needle[0])
    for offset in range(1, len(needle)):
        at = at[buf[at + offset] == needle[offset]]
    return at.astype(np.int64)


def next_at(positions: np.ndarray, targets: np.ndarray, beyond: int) -> np.ndarray:
    """For each target, the first of the sorted `positions` at or after it (`beyond` if none)."""
    index = positions.searchsorted(targets)
    padded = np.append(positions, beyond)
    return padded[index]


def digits(buf: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """The number written in `width` ASCII digits at each offset (the caller knows they are
    digits)."""
    value = np.zeros(len(at), np.int64)
    for k in range(width):
        value = value * 10 + (buf[at + k].astype(np.int64) - 48)
    return value
