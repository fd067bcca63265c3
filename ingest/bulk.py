"""A chunk whose parsers read records in bulk (ingest.columns): runs and Rows as columns.

Blocks stay columns only where ingest.runs would fill nothing per record from the text
around it: a plain log (no heading, fence or comment header, and too large for line
labels), with at most one block of measurements and one of passes, where the measurement
block's parser is the only one that found measurements, and every record names its
benchmark or none does. Then the fills are the document's own (project, version, date, and
the model where no record names one), the same for every row, and runs are assigned over
arrays (assign_runs) by runs' very rule. Anywhere else
`materialise` puts each block's rows back among its parser's objects, as the records the
parser's line path builds, and ingest.runs does what it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ingest import runs
from ingest.columns import EventBlock, MeasurementBlock, PassBlock, TableBlock
from ingest.save import EVENT_SCHEMA, PASS_SCHEMA, Rows
from ingest.text import DocText
from perfboard.model import Found


def _blocks(found: Found) -> tuple[list[MeasurementBlock], list[PassBlock]]:
    measurements = [b for b in found.blocks if isinstance(b, MeasurementBlock)]
    return measurements, [b for b in found.blocks if isinstance(b, PassBlock)]


def _event_blocks(found: Found) -> list[EventBlock]:
    return [b for b in found.blocks if isinstance(b, EventBlock)]


def stays_columns(doc: DocText, found: Found, contexts: runs.Contexts) -> bool:
    """Whether the blocks of a chunk can go on as columns (the module docstring)."""
    import pyarrow.compute as pc

    if not contexts.flat or len(doc.text) <= runs.PROSE_LIMIT:
        return False
    measurement_blocks, pass_blocks = _blocks(found)
    if len(measurement_blocks) > 1 or len(pass_blocks) > 1:
        return False
    event_blocks = _event_blocks(found)
    if len(event_blocks) > 1:
        return False
    if event_blocks and event_blocks[0].end - event_blocks[0].first != len(found.profile_events):
        return False  # another parser's events: their order on a shared line would matter
    if not measurement_blocks:
        return True
    block = measurement_blocks[0]
    if block.end - block.first != len(found.measurements):
        return False  # another parser's measurements: runs would order and fill them too
    # A record that names no benchmark takes the one its run names (runs.named_benchmarks),
    # else the document's. Only where every record names one, or none does, is that the
    # same for every row (the document's: assemble).
    unnamed_objects = sum(not m.benchmark for m in found.measurements)
    unnamed_rows = pc.sum(pc.equal(pc.binary_length(block.table["benchmark"]), 0)).as_py() or 0
    unnamed = unnamed_objects + unnamed_rows
    return unnamed in (0, len(found.measurements) + block.table.num_rows)


def materialise(found: Found) -> None:
    """The blocks' rows back among their parsers' objects, in line order, as objects."""
    measurement_blocks, pass_blocks = _blocks(found)
    for block in reversed(measurement_blocks):  # later blocks first: indices stay true
        own = found.measurements[block.first : block.end]
        merged = sorted([*own, *block.records()], key=runs.LINE)
        found.measurements[block.first : block.end] = merged
    for passes in pass_blocks:  # the passes parser gives a block or objects, never both
        found.passes += passes.records()
    for events in reversed(_event_blocks(found)):  # later blocks first: indices stay true
        own = found.profile_events[events.first : events.end]
        merged = sorted([*own, *events.records()], key=runs.LINE)
        found.profile_events[events.first : events.end] = merged
    found.blocks = []


def assemble(doc: DocText, found: Found, contexts: runs.Contexts) -> Rows:
    """Runs and fills for a chunk whose blocks stay columns (stays_columns said so): the
    objects as ingest.runs.assemble fills them in a plain log, the blocks' rows by the
    same rules as arrays; the measurements, runs and block passes as Rows."""
    import pyarrow.compute as pc

    measurement_blocks, pass_blocks = _blocks(found)
    measured = measurement_blocks[0] if measurement_blocks else None
    passes = pass_blocks[0] if pass_blocks else None
    event_blocks = _event_blocks(found)
    events = event_blocks[0] if event_blocks else None
    first_lines = assign_runs(found, measured, passes, events)
    doc_model = runs.DocModel(doc)
    named = runs.named_benchmarks(found.measurements)
    for m in found.measurements:  # as runs.assemble fills them in a plain log
        sibling = named.get(m.run) or ("", "")
        runs.fill_measurement(m, contexts.at(m.line), doc, sibling, doc_model)
    runs.fill_phases(doc, found, contexts, doc_model)
    meta = doc.meta
    if measured is not None:
        measured.table = _named(measured.table, doc_model)
        for template in measured.templates:
            template.project = meta.project
            template.version = meta.version or None
        if meta.created_at is not None:
            table = measured.table
            measured.table = table.set_column(
                table.schema.get_field_index("measured_at"),
                "measured_at",
                pc.fill_null(table["measured_at"], pa.scalar(meta.created_at, pa.timestamp("us"))),
            )
    run_table = pa.table(
        {
            "run": pa.array(np.arange(len(first_lines), dtype=np.int32)),
            "label": pa.repeat(pa.scalar("", pa.string()), len(first_lines)),
            "first_line": pa.array(first_lines, pa.int64()),
        }
    )
    blocks = [measured] if measured is not None else []
    rows = Rows.of(found.measurements, [], blocks=blocks, run_table=run_table)
    if passes is not None:
        rows.passes = passes.table.cast(PASS_SCHEMA)
    if events is not None:
        rows.events = events.table.cast(EVENT_SCHEMA)
    return rows


def _named(table: pa.Table, doc_model: runs.DocModel) -> pa.Table:
    """The rows' benchmarks, the document's model where a row names none (stays_columns:
    then no record of the chunk names one), as runs.fill_measurement fills them."""
    import pyarrow.compute as pc

    benchmark = table["benchmark"]
    unnamed = pc.equal(pc.binary_length(benchmark), 0)
    if not pc.any(unnamed).as_py():
        return table
    name = doc_model.name() or runs.UNKNOWN_BENCHMARK
    filled = pc.if_else(unnamed, pa.scalar(name, pa.large_string()), benchmark)
    return table.set_column(table.schema.get_field_index("benchmark"), "benchmark", filled)


@dataclass(slots=True)
class _Part:
    """Records of one kind in the order ingest.runs sorts them: objects, or a block's rows."""

    group: int  # 0 measurements, 1 profile events, 2 passes: the tie order on one line
    lines: np.ndarray
    within: np.ndarray  # the order found in, within the group
    codes: np.ndarray  # the run key of each (runs.record_key), -1 for none
    objects: list | None = None
    block: MeasurementBlock | TableBlock | None = None


def assign_runs(
    found: Found,
    measured: MeasurementBlock | None,
    passes: PassBlock | None,
    events: EventBlock | None = None,
) -> np.ndarray:
    """ingest.runs' rule over a plain log's records, objects and block rows together: a
    run starts at the first record and wherever a record repeats a key the run has.

    Sets `run` on every object and each block's run numbers; returns each run's first line.
    """
    codes: dict[tuple[object, ...], int] = {}

    def code(key: tuple[object, ...] | None) -> int:
        return -1 if key is None else codes.setdefault(key, len(codes))

    def objects(group: int, items: list) -> _Part:
        lines = np.fromiter((item.line for item in items), np.int64, len(items))
        keys = np.fromiter((code(runs.record_key(i)) for i in items), np.int64, len(items))
        return _Part(group, lines, np.arange(len(items)), keys, objects=items)

    parts = [objects(0, found.measurements)]
    if measured is not None:
        parts.append(
            _Part(
                0,
                measured.lines,
                _zeros(measured),
                _measurement_codes(measured, code),
                block=measured,
            )
        )
    parts.append(objects(1, found.profile_events))
    if events is not None:  # its parser's only events (stays_columns): none on its lines
        event_codes = _event_codes(events, code)
        parts.append(_Part(1, events.lines, _zeros(events), event_codes, block=events))
    parts.append(objects(2, found.passes))
    if passes is not None:
        order = passes.table["order"].to_numpy()
        sequence = code(("pass-sequence",))
        parts.append(
            _Part(2, passes.lines, _zeros(passes), np.where(order == 0, sequence, -1), block=passes)
        )

    lines = np.concatenate([p.lines for p in parts])
    group = np.concatenate([np.full(len(p.lines), p.group) for p in parts])
    within = np.concatenate([p.within for p in parts])
    order = np.lexsort((within, group, lines))  # sorted(..., key=line), stable by group
    in_order = np.concatenate([p.codes for p in parts])[order]
    n = len(order)
    # The record before each one (in that order) with the same key.
    by_key = np.argsort(in_order, kind="stable")
    sorted_keys = in_order[by_key]
    same = sorted_keys[1:] == sorted_keys[:-1]
    previous = np.full(n, -1, np.int64)
    previous[by_key[1:][same]] = by_key[:-1][same]
    previous[in_order < 0] = -1
    repeats = np.flatnonzero(previous >= 0)
    starts = [0] if n else []
    start = 0
    for index, before in zip(repeats.tolist(), previous[repeats].tolist(), strict=True):
        if before >= start:  # the key is in the run already: the next run starts here
            start = index
            starts.append(index)
    run_starts = np.asarray(starts, np.int64)
    run_of = np.empty(n, np.int32)
    run_of[order] = np.searchsorted(run_starts, np.arange(n), side="right") - 1
    position = 0
    for part in parts:
        mine = run_of[position : position + len(part.lines)]
        position += len(part.lines)
        if part.objects is not None:
            for item, run in zip(part.objects, mine.tolist(), strict=True):
                item.run = run
        elif isinstance(part.block, MeasurementBlock):
            part.block.run = mine
        elif isinstance(part.block, TableBlock):
            table = part.block.table
            part.block.table = table.set_column(
                table.schema.get_field_index("run"), "run", pa.array(mine, pa.int32())
            )
    return lines[order][run_starts]


def _zeros(block: MeasurementBlock | TableBlock) -> np.ndarray:
    return np.zeros(block.table.num_rows, np.int64)  # a block's rows have lines of their own


def _measurement_codes(
    block: MeasurementBlock, code: Callable[[tuple[object, ...] | None], int]
) -> np.ndarray:
    """The run key code of each row (runs.record_key of its Measurement): one a distinct
    (benchmark, metric, statistic, variant, thread id) of the block."""
    import pyarrow.compute as pc

    templates, table = block.templates, block.table
    joined = pc.binary_join_element_wise(
        table["benchmark"],
        table["metric"],
        table["statistic"],
        pa.array(block.variant_of_rows).cast(pa.large_string()),
        pa.array(block.thread_of_rows).cast(pa.large_string()),
        pa.scalar("\x1f", pa.large_string()),
    )
    combos = joined.combine_chunks().dictionary_encode()
    combo_codes = []
    for combo in combos.dictionary.to_pylist():
        benchmark, metric, statistic, variant, thread = combo.split("\x1f")
        t = templates[int(variant)]
        params = tuple(sorted(t.params.items()))
        thread_id = None if thread == "-1" else int(thread)
        key = ("m", benchmark, t.task, metric, t.framework, params, thread_id, statistic or None)
        combo_codes.append(code(key))
    return np.asarray(combo_codes, np.int64)[combos.indices.to_numpy()]


def _event_codes(block: EventBlock, code: Callable[[tuple[object, ...] | None], int]) -> np.ndarray:
    """The run key code of each row: ("p", section, event, thread, depth), as
    runs.record_key gives it for a ProfileEvent, one code per distinct key."""
    import pyarrow.compute as pc

    table = block.table
    depth = pc.cast(table["depth"], pa.string())
    joined = pc.binary_join_element_wise(
        table["section"], table["event"], table["thread"], depth, pa.scalar("\x1f", pa.string())
    )
    combos = joined.combine_chunks().dictionary_encode()
    combo_codes = []
    for combo in combos.dictionary.to_pylist():
        section, event, thread, depth_text = combo.split("\x1f")
        combo_codes.append(code(("p", section, event, thread, int(depth_text))))
    return np.asarray(combo_codes, np.int64)[combos.indices.to_numpy()]
