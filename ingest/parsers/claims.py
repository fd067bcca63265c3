"""Effects a text claims (docs/formats.md section 10): PR descriptions, issue comments.

    "the normal ernie model performance is improved from 10ms to 9.5ms."
    "2. refine fc_eltwise_layernorm (8.4ms -> 7.8ms)"
    "improve the end-to-end performance of ERINE on NVIDIA Tesla T4 GPU by 8%"

A claim is a before -> after pair of times (normalised to ms) or a relative gain in %. It
is not a measurement: the dashboard sets it beside what was measured (a PR's view).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ingest import columns
from ingest.parsers import scan
from ingest.parsers.scan import hits
from ingest.text import DocText, LineIndex
from perfboard.model import Claim, Item
from perfboard.units import UnitError, normalise

if TYPE_CHECKING:
    import numpy as np

NAME = "claims"
# "->"/"→" arrows, "from X to Y" and "by N%": the words a claim cannot do without.
ANCHORS: tuple[str, ...] = ("->", "→", " to ", "by ")

_NUMBER = r"(\d+(?:\.\d+)?)"
_UNIT = r"(ms|us|µs|s)\b"
_PAIR = re.compile(
    rf"{_NUMBER}\s*{_UNIT}\s*(?:-+>|→|=>|\bto\b)\s*{_NUMBER}\s*{_UNIT}", re.IGNORECASE
)
_GAIN = re.compile(rf"\b(?:by|of)\s+(?:about\s+|~)?{_NUMBER}\s*%", re.IGNORECASE)
# Literal-led entry points for the scan (an alternation would defeat the literal search).
_ENTRIES = (
    ("arrow", re.compile("->")),
    ("arrow", re.compile("→")),
    ("arrow", re.compile("=>")),
    ("to", re.compile(" to ")),
    ("gain", re.compile("by ")),
)
_IMPROVE = re.compile(r"improv|faster|speed|perf|加速|提升", re.IGNORECASE)


# In a large chunk, only the lines where a claim may be (_candidate_rows, then RE2) are
# searched: a log says "feed -> x" and "from CPU to GPU" on thousands of lines, claiming
# nothing. Supersets of _PAIR and _GAIN over an ASCII line (Python's \s also takes \v and
# \x1c-\x1f; RE2's does not).
BULK_MIN_BYTES = 1 << 18
_BLOCK_LINES = 64
_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f ]"
_MAY_CLAIM = (
    rf"(?i)\d+(?:\.\d+)?{_SPACE}*(?:ms|us|s)\b{_SPACE}*(?:-+>|=>|\bto\b){_SPACE}*\d+(?:\.\d+)?"
    rf"{_SPACE}*(?:ms|us|s)\b|\b(?:by|of){_SPACE}+(?:about{_SPACE}+|~)?\d+(?:\.\d+)?{_SPACE}*%"
)


def parse(doc: DocText) -> Iterator[Item]:
    """Every claim in the text, once per place, in order."""
    text = doc.text
    done: set[tuple[int, int]] = set()
    # Lines already searched with each pattern: a second hit on one finds nothing new.
    searched: dict[re.Pattern[str], int] = {_GAIN: -1, _PAIR: -1}
    for pos, kind, _ in _hits(doc):
        start = text.rfind("\n", 0, pos) + 1
        pattern = _GAIN if kind == "gain" else _PAIR
        if searched[pattern] == start:
            continue
        searched[pattern] = start
        end = text.find("\n", pos)
        line = text[start : end if end >= 0 else len(text)]
        if pattern is _GAIN and "%" not in line:
            continue  # no gain without a percent sign
        for m in pattern.finditer(line):
            where = (start + m.start(), start + m.end())
            if where in done:
                continue
            done.add(where)
            claim = _claim(m, kind, line)
            if claim is not None:
                claim.line = doc.line_at(start)
                yield claim


def _hits(doc: DocText) -> Iterator[tuple[int, str, re.Match[str]]]:
    """The entry hits of the text, or of the lines that may hold a claim (see above)."""
    text = doc.text
    if not isinstance(doc.line_at, LineIndex) or len(text) < BULK_MIN_BYTES:
        yield from hits(text, _ENTRIES)
        return
    import pyarrow.compute as pc

    data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
    newlines = doc.line_at.positions
    starts, ends = columns.line_bounds(newlines, len(data))
    rows = _candidate_rows(data, newlines, starts, ends)
    lines = columns.spans(data, starts[rows], ends[rows])
    may = rows[pc.match_substring_regex(lines, _MAY_CLAIM).to_numpy(False)]
    for row in may.tolist():
        yield from hits(text, _ENTRIES, int(starts[row]), int(ends[row]))


def _candidate_rows(
    data: bytes, newlines: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> np.ndarray:
    """The lines (in order) that _MAY_CLAIM may match, RE2 to tell each one after.

    Hyperscan finds them in one pass (scan.rows_matching: 0.4-1.2 ms a 4 MiB chunk; the
    pattern compiled once a process, 14 ms). Without hyperscan, RE2 tries the lines a
    block at a time first, as it costs about half a microsecond a string it is given,
    whatever its length (6-7 ms a chunk), and takes every line of a block that matched
    (a line that matches alone matches in its block too: its neighbours are joined by
    "\n", a word boundary as the text's edge is).
    """
    rows = scan.rows_matching(data, newlines, _MAY_CLAIM)
    if rows is not None:
        return rows
    import numpy as np
    import pyarrow.compute as pc

    first = np.arange(0, len(starts), _BLOCK_LINES)
    last = np.minimum(first + _BLOCK_LINES, len(starts)) - 1
    blocks = columns.spans(data, starts[first], ends[last])
    matched = np.flatnonzero(pc.match_substring_regex(blocks, _MAY_CLAIM).to_numpy(False))
    rows = (first[matched, None] + np.arange(_BLOCK_LINES)).ravel()
    return rows[rows < len(starts)]


def _claim(m: re.Match[str], kind: str, line: str) -> Claim | None:
    if kind == "gain":
        # "by 8%" claims a gain only where the line speaks of performance.
        if not _IMPROVE.search(line):
            return None
        return Claim(None, None, "%", percent=float(m.group(1)), raw=line.strip())
    try:
        before = normalise(float(m.group(1)), m.group(2))
        after = normalise(float(m.group(3)), m.group(4))
    except UnitError:
        return None
    percent = (before.value - after.value) / before.value * 100 if before.value else None
    return Claim(before.value, after.value, "ms", percent=percent, raw=line.strip())
