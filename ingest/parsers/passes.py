"""IR pass / analysis logs (docs/formats.md section 2): which passes ran, in order, and what fused.

Lines read:

- ``--- Running analysis [ir_graph_build_pass]`` -> PassApplied kind "analysis";
- ``--- Running IR pass [fc_elementwise_layernorm_fuse_pass]`` -> PassApplied kind "ir";
- ``---  detected 24 subgraphs``, bare or as a glog line
  (``I0718 10:11:44.254137 2153053 fuse_pass_base.cc:59] ---  detected 26 subgraphs``),
  which belongs to the pass above it.

Decisions:

- ``order`` counts passes from 0 within one pass sequence; ``ir_graph_build_pass`` is the
  first pass Paddle's analyzer runs, so it starts a new sequence and order restarts at 0.
  Which run a sequence belongs to is ingest.runs' business.
- A pass is yielded once its "detected" lines are known (at the next pass line, at a
  Problem, or at the end), so records still come out in document order. Its ``raw`` is the
  pass line as written, followed by its "detected" lines.
- A pass whose detector runs several patterns logs "detected" once per pattern: the counts
  are summed, since the number wanted is how many subgraphs the pass fused.
- ``subgraphs`` is None when the log does not say (the pass fused nothing or does not
  report); it is never guessed as 0.
- A "detected" line with no pass above it, and a pass line cut short (``--- Running IR pa``,
  a pass name without its closing bracket, ``---  detected 2``), become Problems. Other
  lines starting with "--- " (diff headers, prose) are not pass logs and yield nothing.

Speed: one ``re.finditer`` on the literal "--- " (then "R" or "d") over the whole text;
only lines holding a hit are examined, and their line numbers are looked up together.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ingest import bounds, columns
from ingest.columns import PassBlock
from ingest.text import DocText, LineIndex
from perfboard.model import Item, PassApplied, Problem

NAME = "passes"
ANCHORS: tuple[str, ...] = ("--- ",)

# The first pass of every analysis run: it starts a new sequence.
SEQUENCE_START = "ir_graph_build_pass"

# "--- " then the first letter of "Running" or "detected": a literal prefix keeps the scan
# at memory speed (a lookbehind would not). Runs of dashes are told apart in Python.
_HIT = re.compile(r"--- [ \t]?[Rd]")
_PASS = re.compile(r"Running (?P<kind>IR pass|analysis) \[(?P<name>[^\]\s]+)\]")
_DETECTED = re.compile(r"detected (?P<count>\d+) subgraphs?\b")
# What a pass line cut short still looks like: a prefix of the fixed words, a name without
# its "]", or a count without "subgraphs" (the count itself may be cut).
_CUT_PARTS = ("Running IR pass [", "Running analysis [", "detected ")
_CUT = re.compile(r"Running (?:IR pass|analysis) \[[^\]]*|detected \d+(?: \w*)?")


def parse(doc: DocText) -> Iterator[Item | PassBlock]:
    """PassApplied for every pass line and Problems for cut or orphan lines, in order.

    A large chunk (its newline index at hand) whose every pass log line is a plain pass
    or "detected" line gives its passes as one PassBlock (_bulk); any other line there
    (cut, or with text before its "--- ") and the chunk is read line by line.
    """
    if _HIT.search(doc.text) is None:
        # Every record and problem is read at a hit: a text whose "--- " are only the
        # ends of rules ("------ Model info ------", a demo report's, every few lines)
        # holds none. One search (2.6 ms a 4 MiB chunk of demo reports) where the bulk
        # path split every line and ran RE2 over the 18,764 rules (45-52 ms).
        return
    if isinstance(doc.line_at, LineIndex) and len(doc.text) >= BULK_MIN_BYTES:
        read = _bulk(doc)
        if read is not None:
            block, orphans = read
            yield from orphans  # only before the first pass: in line order with the block
            if block is not None:
                yield block
            return
    items = _read(doc.text)
    # Line numbers in one lookup for all records (a dense pass log has a record a line:
    # asked for one at a time, they cost as much as the reading).
    for item, number in zip(items, doc.lines_at([item.line for item in items]), strict=True):
        item.line = number
    yield from items


def _read(text: str) -> list[PassApplied | Problem]:
    """The records of a text in order, each with the offset of its line as `line`."""
    items: list[PassApplied | Problem] = []
    pending: PassApplied | None = None  # the last pass, waiting for its "detected" lines
    order = -1  # order of the last pass; the first pass of a document gets 0
    examined_to = -1
    match_pass, match_detected = _PASS.match, _DETECTED.match
    for hit in _HIT.finditer(text):
        at = hit.start()
        if at < examined_to or text[at - 1 : at] == "-":
            continue  # a line already read, or the end of a dashed rule or banner
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end < 0:
            end = len(text)
        examined_to = end
        rest = text[hit.end() - 1 : end].rstrip()
        step = match_pass(rest)
        if step:
            if pending:
                items.append(pending)
            name = step["name"]
            order = 0 if name == SEQUENCE_START else order + 1
            kind = "ir" if step["kind"] == "IR pass" else "analysis"
            pending = PassApplied(name, kind, order, line=start, raw=text[start:end])
            continue
        detected = match_detected(rest)
        if detected and pending:
            count = int(detected["count"])
            pending.subgraphs = count + (pending.subgraphs or 0)
            pending.raw += "\n" + text[start:end]
        elif detected or _is_cut(rest):
            if pending:
                items.append(pending)
                pending = None
            items.append(Problem(start, _reason(detected is not None), text[start:end], NAME))
    if pending:
        items.append(pending)
    return items


# -- a dense log's passes in bulk ----------------------------------------------------

BULK_MIN_BYTES = 1 << 18  # below this a chunk is read line by line (it costs as little)
# The pass log lines the bulk path reads, as RE2 patterns over single lines: a pass line at
# the start of its line, a "detected" line bare or after a glog prefix. Any other line
# with a hit (_HIT) sends the chunk to the line path.
_HIT_RE2 = r"--- [ \t]?[Rd]"
_PASS_RE2 = r"^--- Running (?:IR pass|analysis) \[[^\]\s]+\]"
_DETECTED_RE2 = (
    r"^(?:[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w.]+:\d+\] )?"
    r"--- [ \t]?detected \d+ subgraphs?\b"
)
_RUNNING = len("--- Running ")
_MOST_SUBGRAPHS = bounds.INT32[1]  # passes.subgraphs is an INTEGER


def _bulk(doc: DocText) -> tuple[PassBlock | None, list[Problem]] | None:
    """The passes of a chunk as one block, and the orphan "detected" lines (before the
    first pass) as Problems; None when a line needs the line path (see parse).

    _read's rules over arrays: a pass line opens a pass; the "detected" lines after it
    add their counts and lines to it; ir_graph_build_pass restarts the order at 0.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(doc.line_at, LineIndex)
    data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
    lines, starts = columns.lines_of(data, doc.line_at.positions)
    candidates = np.flatnonzero(pc.match_substring(lines, "--- ").to_numpy(zero_copy_only=False))
    if not len(candidates):
        return None, []
    texts = lines.take(pa.array(candidates))
    # RE2 costs about half a microsecond a string it is given (7 ms a pattern over a pass
    # log's 4 MiB chunk): each pattern is given only the lines the ones before left. A
    # pass line is no "detected" line (they differ right after the glog prefix or the
    # "--- "); a hit in any line that is neither sends the chunk to the line path, and a
    # hit cannot span a line end, so those lines are searched as one string.
    is_pass = pc.match_substring_regex(texts, _PASS_RE2).to_numpy(zero_copy_only=False)
    rest = np.flatnonzero(~is_pass)
    is_detected = np.zeros(len(texts), bool)
    is_detected[rest] = pc.match_substring_regex(
        texts.take(pa.array(rest)), _DETECTED_RE2
    ).to_numpy(zero_copy_only=False)
    others = texts.filter(pa.array(~is_pass & ~is_detected))
    if len(others):
        joined = pa.ListArray.from_arrays(pa.array([0, len(others)], pa.int32()), others)
        one = pc.binary_join(joined, pa.scalar("\n", others.type))
        if pc.match_substring_regex(one, _HIT_RE2)[0].as_py():
            return None  # a cut line, or text before "--- ": the line path decides
    rows = candidates[is_pass]
    found = candidates[is_detected]
    first = rows[0] if len(rows) else len(lines)
    orphans = [
        Problem(int(row) + doc.first_line, _reason(True), lines[int(row)].as_py(), NAME)
        for row in found[found < first]
    ]
    if not len(rows):
        return None, orphans
    found = found[found > first]
    pass_starts = starts[rows]
    buf = np.frombuffer(data, np.uint8)
    ir = buf[pass_starts + _RUNNING] == ord("I")
    name_start = pass_starts + _RUNNING + np.where(ir, len("IR pass ["), len("analysis ["))
    name_end = columns.next_at(np.flatnonzero(buf == ord("]")), name_start, len(data))
    names = columns.spans(data, name_start, name_end)
    restart = pc.equal(names, SEQUENCE_START).to_numpy(zero_copy_only=False)
    index = np.arange(len(rows))
    sequence_start = np.maximum.accumulate(np.where(restart, index, 0))
    order = index - sequence_start
    # Each "detected" line belongs to the last pass above it.
    owner = rows.searchsorted(found) - 1
    detected = texts.filter(pa.array(is_detected))
    detected = detected.slice(len(detected) - len(found))
    counted = pc.find_substring(detected, "detected ").to_numpy() + len("detected ")
    count_start = starts[found] + counted
    count_end = columns.next_at(np.flatnonzero(buf == ord(" ")), count_start, len(data))
    try:
        counts = pc.cast(columns.spans(data, count_start, count_end), pa.int64()).to_numpy()
    except pa.ArrowInvalid:  # a count beyond int64: the line path reads it as Python does
        return None
    subgraphs = np.bincount(owner, weights=None, minlength=len(rows))
    if len(counts) and counts.max() > _MOST_SUBGRAPHS:
        return None  # a count the store's INTEGER cannot hold: the line path's problem
    totals = np.zeros(len(rows), np.int64)  # counts <= 2^31 each: the sums cannot wrap
    np.add.at(totals, owner, counts)
    if len(totals) and totals.max() > _MOST_SUBGRAPHS:
        return None
    # A pass's raw text: its line, then the "detected" lines it owns, each on its own
    # line; they lie between it and the next pass, so in line order they follow it.
    merged = np.sort(np.concatenate([rows, found]))
    offsets = np.append(merged.searchsorted(rows), merged.size).astype(np.int32)
    owned = pa.ListArray.from_arrays(pa.array(offsets), lines.take(pa.array(merged)))
    raw = pc.binary_join(owned, pa.scalar("\n", pa.large_string()))
    table = pa.table(
        {
            "run": pa.array(np.zeros(len(rows), np.int32)),
            "name": names.cast(pa.string()),
            "kind": pc.if_else(pa.array(ir), "ir", "analysis"),
            "order": pa.array(order, pa.int32()),
            "subgraphs": pa.array(totals, pa.int32(), mask=subgraphs == 0),
            "line": pa.array(rows + doc.first_line),
            "raw": raw.cast(pa.string()),
        }
    )
    return PassBlock(table), orphans


def _is_cut(rest: str) -> bool:
    """True when the text after "--- " is a pass log line cut short."""
    return any(part.startswith(rest) for part in _CUT_PARTS) or bool(_CUT.fullmatch(rest))


def _reason(orphan: bool) -> str:
    if orphan:
        return "'detected N subgraphs' line with no pass above it"
    return "pass log line cut short"
