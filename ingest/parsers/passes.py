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

from ingest.text import DocText
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


def parse(doc: DocText) -> Iterator[Item]:
    """PassApplied for every pass line and Problems for cut or orphan lines, in order."""
    items = _read(doc.text)
    # Line numbers in one lookup for all records (a dense pass log has a record a line:
    # asked for one at a time, they cost as much as the reading).
    for item, number in zip(items, doc.lines_at([item.line for item in items]), strict=True):
        item.line = number
    return iter(items)


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


def _is_cut(rest: str) -> bool:
    """True when the text after "--- " is a pass log line cut short."""
    return any(part.startswith(rest) for part in _CUT_PARTS) or bool(_CUT.fullmatch(rest))


def _reason(orphan: bool) -> str:
    if orphan:
        return "'detected N subgraphs' line with no pass above it"
    return "pass log line cut short"
