"""Where a value came from: its line among the lines around it, its table's header, the
number marked (issue 16, provenance in one click). Pure: text in, an Excerpt out.

The text is the document's as the parsers read it (source_texts), or the lines read back
from its file (lines_from_file); the page renders the Excerpt (perfboard.ui.provenance).
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

BEFORE, AFTER = 3, 2  # lines shown around the value's own
HEADER_REACH = 400  # how far above its row a table's header is looked for
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_CELLS = re.compile(r"\s*\|\s*|\t|\s{2,}")
_SPACES = re.compile(r"\s+")
# The unit factors a stored value may be off from its written number by (us, s, ns...).
_SCALES = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)


@dataclass(slots=True)
class Excerpt:
    """The lines to show: the header of the value's table (when above the window), then a
    window of lines with the value's own; `mark`: where its number is in that line."""

    line: int  # the value's line number
    lines: list[tuple[int, str]] = field(default_factory=list)  # (number, text), in order
    header: list[tuple[int, str]] = field(default_factory=list)  # above a gap, when apart
    mark: tuple[int, int] | None = None  # (start, end) in the value's line
    found: bool = True  # False: the document has no such line


def excerpt(text: str, line: int, value: float | None = None) -> Excerpt:
    """The excerpt of line `line` (1-based) of `text`, its number `value` marked."""
    lines = text.split("\n")
    return excerpt_of_lines(lines, 1, line, value)


def excerpt_of_lines(
    lines: list[str], first: int, line: int, value: float | None = None
) -> Excerpt:
    """As excerpt, from some of a document's lines (`lines[0]` is line `first`)."""
    index = line - first
    if not 0 <= index < len(lines):
        return Excerpt(line, found=False)
    low, high = max(0, index - BEFORE), min(len(lines), index + AFTER + 1)
    shown = [(first + i, lines[i].rstrip("\r")) for i in range(low, high)]
    header_at = table_header(lines, index)
    header: list[tuple[int, str]] = []
    if header_at is not None and header_at < low:
        header = [(first + i, lines[i]) for i in range(header_at, min(header_at + 2, low))]
        if len(header) == 2 and not _is_rule(header[1][1]):
            header = header[:1]  # the line under a header is shown only if it is its rule
    return Excerpt(line, shown, header, number_span(lines[index], value))


def table_header(lines: list[str], index: int) -> int | None:
    """The index of the header of the table line `index` is a row of, or None.

    A markdown row's header is the first line of its block of "|" lines; another table's
    (a profiler's, an op benchmark's) is the nearest line above, in the row's block of
    non-blank lines, whose cells are words and not numbers.
    """
    row = lines[index].strip()
    if not row:
        return None
    if row.startswith("|"):
        at = index
        while at > 0 and lines[at - 1].strip().startswith("|") and index - at < HEADER_REACH:
            at -= 1
        return at if at < index else None
    at = index - 1
    while at >= 0 and index - at <= HEADER_REACH:
        text = lines[at].strip()
        if not text or text.startswith(("```", "~~~")):
            return None
        if _looks_like_header(text, row):
            return at
        at -= 1
    return None


def _looks_like_header(text: str, row: str) -> bool:
    """A line of words above a row: as many cells as the row (split at runs of spaces, or
    at any space: "batch_size average_latency(ms) ..."), or three columns set apart by
    wide gaps (a profiler's "Event   Calls   Total   CPU Time (Ratio) ...")."""
    if _is_rule(text):
        return False
    for split in (_CELLS, _SPACES):
        cells = [c for c in split.split(text) if c]
        row_cells = [c for c in split.split(row) if c]
        same = len(cells) >= 2 and len(cells) == len(row_cells)
        if same and not _numbers(cells) and _numbers(row_cells):
            return True
    cells = [c for c in _CELLS.split(text) if c]
    return len(cells) >= 3 and not _numbers(cells)


def _numbers(cells: list[str]) -> bool:
    return any(_NUMBER.fullmatch(c) for c in cells)


def _is_rule(text: str) -> bool:
    return bool(text.strip()) and set(text.strip()) <= set("|-:= +")


def number_span(line: str, value: float | None) -> tuple[int, int] | None:
    """Where the written number a stored value was read from is in its line: the number
    equal to it, or to it in another unit (a latency written in us, stored in ms)."""
    if value is None or not math.isfinite(value):
        return None
    numbers = [(m.span(), float(m.group())) for m in _NUMBER.finditer(line)]
    for scale in _SCALES:
        for span, number in numbers:
            if math.isclose(number, value * scale, rel_tol=1e-9, abs_tol=1e-12):
                return span
    return None


def lines_from_file(path: Path, line: int, reach: int = HEADER_REACH) -> tuple[list[str], int]:
    """Lines `line - reach` to `line + AFTER` of a file, and the first one's number: a
    large log's lines are read back from it (its text is not kept in the store)."""
    first = max(1, line - reach)
    out: list[str] = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if number >= first:
                out.append(raw.decode("utf-8", "replace").rstrip("\n"))
            if number >= line + AFTER:
                break
    return out, first


def to_html(found: Excerpt) -> str:
    """The excerpt as a block of numbered lines: the header, a gap, the window; the value's
    line shaded and its number marked. Every character of the document is escaped."""
    rows: list[str] = []

    def row(number: int, text: str, own: bool = False) -> None:
        body = html.escape(text)
        if own and found.mark is not None:
            start, end = found.mark
            body = (
                html.escape(text[:start])
                + f'<mark style="{_MARK}">{html.escape(text[start:end])}</mark>'
                + html.escape(text[end:])
            )
        style = _OWN if own else ""  # the value's own line wraps: its number always shows
        rows.append(
            f'<div style="{_ROW}{style}"><span style="{_NUMBER_STYLE}">{number}</span>'
            f"{body or '&nbsp;'}</div>"
        )

    for number, text in found.header:
        row(number, text)
    if found.header and found.lines and found.lines[0][0] > found.header[-1][0] + 1:
        rows.append(f'<div style="{_ROW}{_NUMBER_STYLE}">⋮</div>')
    for number, text in found.lines:
        row(number, text, own=number == found.line)
    return f'<div class="perfboard-provenance" style="{_BLOCK}">{"".join(rows)}</div>'


# Colours that read on a light and on a dark page alike: translucent over the theme's own.
_BLOCK = (
    "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.82rem;"
    " background: rgba(127,127,127,0.08); border-radius: 0.4rem; padding: 0.4rem 0;"
    " overflow-x: auto;"
)
_ROW = "white-space: pre; padding: 0 0.6rem; line-height: 1.5;"
_OWN = " background: rgba(255,190,0,0.18); white-space: pre-wrap; overflow-wrap: anywhere;"
_NUMBER_STYLE = (
    "display: inline-block; min-width: 3.5em; margin-right: 0.8em; text-align: right;"
    " opacity: 0.55; user-select: none;"
)
_MARK = "background: rgba(255,170,0,0.6); color: inherit; border-radius: 0.2rem; padding: 0 0.1rem;"
