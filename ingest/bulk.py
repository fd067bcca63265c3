"""A chunk whose parsers read measurements in bulk (ingest.columns): runs and Rows as columns.

A block stays columns only where ingest.runs would fill nothing per record from the text
around it: a plain log (no heading, fence or comment header, and too large for line
labels), where the block's parser is the only one that found measurements and every row
names its benchmark. Then the fills are the document's own (project, version, date), the
same for every row, and runs are assigned over arrays (assign_runs) by runs' very rule.
Anywhere else `materialise` puts the block's rows back among its parser's objects, as the
Measurements the parser's line path builds, and ingest.runs does what it always did.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ingest import runs
from ingest.columns import MeasurementBlock
from ingest.save import Rows
from ingest.text import DocText
from perfboard.model import Found


def stays_columns(doc: DocText, found: Found, contexts: runs.Contexts) -> bool:
    """Whether the blocks of a chunk can go on as columns (the module docstring)."""
    import pyarrow.compute as pc

    if not contexts.flat or len(doc.text) <= runs.PROSE_LIMIT or len(found.blocks) != 1:
        return False
    block = found.blocks[0]
    if block.end - block.first != len(found.measurements):
        return False  # another parser's measurements: runs would order and fill them too
    if any(not m.benchmark for m in found.measurements):
        return False
    return pc.min(pc.binary_length(block.table["benchmark"])).as_py() > 0


def materialise(found: Found) -> None:
    """The blocks' rows back among their parsers' objects, in line order, as objects."""
    for block in reversed(found.blocks):  # later blocks first: earlier indices stay true
        own = found.measurements[block.first : block.end]
        merged = sorted([*own, *block.measurements()], key=runs.LINE)
        found.measurements[block.first : block.end] = merged
    found.blocks = []


def assemble(doc: DocText, found: Found, contexts: runs.Contexts) -> Rows:
    """Runs and fills for a chunk whose block stays columns (stays_columns said so): the
    objects as ingest.runs.assemble fills them, the block's rows by the same rules as
    arrays; its measurements and runs as Rows."""
    import pyarrow.compute as pc

    block = found.blocks[0]
    run_starts, first_lines = assign_runs(found, block)
    doc_model = runs.DocModel(doc)
    for m in found.measurements:  # as runs.assemble fills them in a plain log
        runs.fill_measurement(m, contexts.at(m.line), doc, ("", ""), doc_model)
    runs.fill_phases(doc, found, contexts, doc_model)
    meta = doc.meta
    block.template.project = meta.project
    block.template.version = meta.version or None
    if meta.created_at is not None:
        at = block.table["measured_at"]
        block.table = block.table.set_column(
            block.table.schema.get_field_index("measured_at"),
            "measured_at",
            pc.fill_null(at, pa.scalar(meta.created_at, pa.timestamp("us"))),
        )
    run_table = pa.table(
        {
            "run": pa.array(np.arange(len(run_starts), dtype=np.int32)),
            "label": pa.array([""] * len(run_starts), pa.string()),
            "first_line": pa.array(first_lines, pa.int64()),
        }
    )
    return Rows.of(found.measurements, [], blocks=[block], run_table=run_table)


def assign_runs(found: Found, block: MeasurementBlock) -> tuple[np.ndarray, np.ndarray]:
    """ingest.runs' rule over a plain log's records, objects and block rows together: a
    run starts at the first record and wherever a record repeats a key the run has.

    Sets `run` on every object and block.run; returns each run's first record (its index
    in line order) and first line.
    """
    groups = [found.measurements, found.profile_events, found.passes]
    lines_of = [np.fromiter((item.line for item in g), np.int64, len(g)) for g in groups]
    block_lines = block.lines
    lines = np.concatenate([lines_of[0], block_lines, *lines_of[1:]])
    group = np.concatenate(
        [
            np.full(len(lines_of[0]) + len(block_lines), 0),
            *(np.full(len(x), k + 1) for k, x in enumerate(lines_of[1:])),
        ]
    )
    # Within a group, the order it was found in (a block's rows have lines of their own).
    within = np.concatenate(
        [
            np.arange(len(lines_of[0])),
            np.zeros(len(block_lines), np.int64),
            *(np.arange(len(x)) for x in lines_of[1:]),
        ]
    )
    codes = _key_codes(groups, block)
    order = np.lexsort((within, group, lines))
    n = len(order)
    in_order = codes[order]
    # The record before each one (in line order) with the same key.
    by_key = np.argsort(in_order, kind="stable")
    sorted_keys = in_order[by_key]
    same = sorted_keys[1:] == sorted_keys[:-1]
    previous = np.full(n, -1, np.int64)
    previous[by_key[1:][same]] = by_key[:-1][same]
    previous[in_order < 0] = -1
    repeats = np.flatnonzero(previous >= 0)
    starts = [0]
    start = 0
    for index, before in zip(repeats.tolist(), previous[repeats].tolist(), strict=True):
        if before >= start:  # the key is in the run already: the next run starts here
            start = index
            starts.append(index)
    run_starts = np.asarray(starts, np.int64)
    run_of = np.empty(n, np.int32)
    run_of[order] = np.searchsorted(run_starts, np.arange(n), side="right") - 1
    position = 0
    for g, items in enumerate(groups):
        if g == 1:
            block.run = run_of[position : position + len(block_lines)]
            position += len(block_lines)
        for item, run in zip(items, run_of[position : position + len(items)].tolist(), strict=True):
            item.run = run
        position += len(items)
    return run_starts, lines[order][run_starts]


def _key_codes(groups: list[list], block: MeasurementBlock) -> np.ndarray:
    """An integer for each record's run key (runs.record_key), -1 for none; in the order
    objects of the first group, block rows, objects of the others."""
    import pyarrow.compute as pc

    codes: dict[tuple[object, ...], int] = {}

    def code(key: tuple[object, ...] | None) -> int:
        return -1 if key is None else codes.setdefault(key, len(codes))

    first = [code(runs.record_key(item)) for item in groups[0]]
    t = block.template
    table = block.table
    combos = (
        pc.binary_join_element_wise(
            table["benchmark"],
            table["metric"],
            table["statistic"],
            pa.scalar("\x1f", pa.large_string()),
        )
        .combine_chunks()
        .dictionary_encode()
    )
    combo_codes = []
    for combo in combos.dictionary.to_pylist():
        benchmark, metric, statistic = combo.split("\x1f")
        combo_codes.append(code(("m", benchmark, t.task, metric, t.framework, (), None, statistic)))
    rows = np.asarray(combo_codes, np.int64)[combos.indices.to_numpy()]
    rest = [code(runs.record_key(item)) for g in groups[1:] for item in g]
    return np.concatenate([np.array(first, np.int64), rows, np.array(rest, np.int64)])
