"""From bytes on disk to the text every parser reads.

Decoding never ignores errors: UTF-8 (with or without BOM) and UTF-16 with a BOM are read
as such; a document that is not UTF-8 is tried as GB18030 (the superset of GBK that Chinese
Windows tools write) and the fallback is recorded. Text is NFKC-normalised (real documents
hold lookalikes such as U+2F9C for 足), line ends become "\\n", and markdown quote markers
("> ") are removed without changing line numbers, so a parser sees quoted logs as logs.
"""

from __future__ import annotations

import codecs
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from perfboard.model import DocMeta


class NotText(ValueError):
    """The document is empty, binary, or in no encoding perfboard can read."""


class Empty(NotText):
    """The document holds nothing but white space (or nothing at all)."""


_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Control bytes that never occur in text documents (tab, LF, CR, FF, ESC are allowed).
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def sniff_encoding(head: bytes) -> str:
    """Pick the codec for a document from its first bytes; raise NotText for binary data."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    if not head:
        return "utf-8"
    if b"\x00" in head:
        sample = head[:4096]
        even, odd = sample[0::2], sample[1::2]
        # UTF-16 text without a BOM: ASCII characters leave every other byte zero.
        if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
            return "utf-16-le"
        if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf-16-be"
        raise NotText("binary data (NUL bytes), not a text document")
    bad = len(_BINARY_BYTES.findall(head[:65536]))
    if bad > max(8, len(head[:65536]) // 100):
        raise NotText("binary data (control bytes), not a text document")
    return "utf-8"


def decode(data: bytes, codec: str) -> tuple[str, str]:
    """Decode with the sniffed codec; fall back from UTF-8 to GB18030, recording it.

    A text that mixes the two (a UTF-8 log with a GBK part pasted in) is decoded line by
    line, each line as UTF-8 when it is that, else as GB18030, and recorded as
    "utf-8+gb18030": decoded whole as GB18030, its UTF-8 lines would turn to mojibake
    without an error. Returns (text, encoding actually used). Raises NotText naming the
    line of the first byte that no candidate encoding accepts.
    """
    try:
        return data.decode(codec), codec
    except UnicodeDecodeError as utf_error:
        if codec != "utf-8":
            raise NotText(_decode_failure(data, utf_error, codec)) from None
        lines = data.split(b"\n")
        if any(_is_wide_utf8(line) for line in lines):
            return "\n".join(_decode_line(line, n) for n, line in enumerate(lines, 1)), MIXED
        try:
            return data.decode("gb18030"), "gb18030"
        except UnicodeDecodeError:
            raise NotText(_decode_failure(data, utf_error, "utf-8 or gb18030")) from None


MIXED = "utf-8+gb18030"  # the encoding recorded for a text of UTF-8 and GB18030 lines


def _is_wide_utf8(line: bytes) -> bool:
    """A line that is UTF-8 with a character of three bytes or more (all of CJK): the
    mark of a UTF-8 part. GBK text is now and then valid UTF-8 by chance, but as two-byte
    characters only (none in 20,000 short GBK lines tried formed a three-byte one)."""
    if line.isascii():
        return False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return any(ord(char) >= 0x800 for char in text)


def _decode_line(line: bytes, number: int) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return line.decode("gb18030")
        except UnicodeDecodeError as error:
            raise NotText(
                f"line {number}: byte {line[error.start]:#04x} is not valid utf-8 or gb18030"
            ) from None


def _decode_failure(data: bytes, error: UnicodeDecodeError, tried: str) -> str:
    line = data.count(b"\n", 0, error.start) + 1
    return f"line {line}: byte {data[error.start]:#04x} is not valid {tried}"


_QUOTE = re.compile(r"(?m)^ {0,3}>(?: ?>)* ?")


def normalise(text: str) -> str:
    """NFKC, "\\n" line ends, and markdown quote markers removed (line count unchanged)."""
    text = nfkc(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    # ">" alone is one fast search; most texts without quotes have no ">" at all.
    if ">" in text and (text.startswith((">", " >")) or "\n>" in text or "\n >" in text):
        text = _QUOTE.sub("", text)
    return text


def nfkc(text: str) -> str:
    """unicodedata.normalize("NFKC", text), normalising only the text around its non-ASCII
    characters when they are few (a log with an ellipsis on some lines).

    Normalising a whole 4 MiB chunk for a few thousand "…" costs 40 ms, a twentieth of
    parsing it. ASCII characters are normalised already and each is a starter that no
    character before it combines with; only a character after one can combine with it (a
    combining accent after "e"). So each run of non-ASCII characters, with the one
    character before it, normalises on its own to what it is in the whole text. The runs
    are found by numpy in the text's UTF-16 code units (a regex over 4 MiB for them costs
    as much as normalising it all); where they are many (a Chinese document) or the code
    units are not the characters (one beyond U+FFFF), the whole text is normalised.
    """
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) != 2 * len(text):
        return unicodedata.normalize("NFKC", text)
    wide = np.flatnonzero(np.frombuffer(units, np.uint16) > 0x7F)
    if len(wide) > len(text) // 64 + 64:
        return unicodedata.normalize("NFKC", text)
    ends = np.flatnonzero(np.diff(wide) > 1)  # the last of each run but the last run
    starts = wide[np.concatenate(([0], ends + 1))].tolist()
    stops = (wide[np.concatenate((ends, [len(wide) - 1]))] + 1).tolist()
    parts: list[str] = []
    done = 0
    normalize = unicodedata.normalize
    for start, stop in zip(starts, stops, strict=True):
        start = max(start - 1, 0)  # the starter the run may combine with
        parts.append(text[done:start])
        parts.append(normalize("NFKC", text[start:stop]))
        done = stop
    parts.append(text[done:])
    return "".join(parts)


class LineCounter:
    """Line numbers of positions in a text, counted incrementally (no index of all lines).

    Parsers visit positions mostly in increasing order; counting newlines between the last
    position and the next runs at C speed and keeps memory flat for a 2 GB log.
    """

    __slots__ = ("_line", "_pos", "_text")

    def __init__(self, text: str, first_line: int = 1) -> None:
        self._text = text
        self._pos = 0
        self._line = first_line

    def __call__(self, pos: int) -> int:
        if pos >= self._pos:
            self._line += self._text.count("\n", self._pos, pos)
        else:
            self._line -= self._text.count("\n", pos, self._pos)
        self._pos = pos
        return self._line


class LineIndex:
    """Line numbers from the positions of every newline, found with numpy.

    For the bytes of an ASCII chunk: comparing and collecting runs at about 7 GB/s, where
    counting with str.count runs at 2-3 GB/s, and numpy releases the GIL, so the index can
    be built by the thread that reads ahead. A batch of positions is looked up in one
    call. The comparison goes into a scratch array each thread keeps.
    """

    __slots__ = ("_first", "_newlines")
    _scratch = threading.local()

    def __init__(self, raw: bytes | memoryview, first_line: int = 1) -> None:
        data = np.frombuffer(raw, dtype=np.uint8)
        scratch = getattr(LineIndex._scratch, "array", None)
        if scratch is None or len(scratch) < len(data):
            scratch = LineIndex._scratch.array = np.empty(len(data), dtype=bool)
        is_newline = scratch[: len(data)]
        np.equal(data, 10, out=is_newline)
        del data  # no view of the caller's buffer outlives this call
        self._newlines = np.flatnonzero(is_newline)
        self._first = first_line

    def __call__(self, pos: int) -> int:
        return self._first + int(self._newlines.searchsorted(pos))

    def many(self, positions: list[int]) -> list[int]:
        return (self._newlines.searchsorted(positions) + self._first).tolist()

    @property
    def newlines(self) -> int:
        return len(self._newlines)

    @property
    def positions(self) -> np.ndarray:
        """The offset of every newline, in order (for parsers that read lines in bulk)."""
        return self._newlines


@dataclass
class DocText:
    """The normalised text of a document (or of one chunk of a large one) and its context.

    ``markers``: the markdown structure the reader saw in the text ("heading", "fence",
    "quote", "cr"; ingest.gate.markers_of) and the words its gate saw ("comment": a
    comment's header; gate.MARKER_ANCHORS), or None when it did not look (then whoever
    needs to know looks). ``hits``: where the
    anchors of each parser that wants them occur (offsets into text), when the gate
    scanned this very text; parsers then skip their own scan.
    """

    text: str
    meta: DocMeta = field(default_factory=lambda: DocMeta(uri="<text>"))
    first_line: int = 1
    encoding: str = "utf-8"
    markers: frozenset[str] | None = None
    hits: dict[str, list[int]] | None = None

    # A newline index of the bytes the text is, character for character (an ASCII chunk
    # used as it was read, first line 1); without one, lines are counted as asked for.
    line_index: LineIndex | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.line_index is not None and self.first_line == 1:
            self.line_at: LineCounter | LineIndex = self.line_index
        else:
            self.line_at = LineCounter(self.text, self.first_line)

    def lines_at(self, positions: list[int]) -> list[int]:
        """The line numbers of many positions (in increasing order) at once."""
        if isinstance(self.line_at, LineIndex):
            return self.line_at.many(positions)
        return [self.line_at(pos) for pos in positions]

    def newline_count(self) -> int:
        """How many line ends the text has (the next chunk starts that many lines later).

        Counted on from where the parsers' line numbers left off: one pass in all.
        """
        if isinstance(self.line_at, LineIndex):
            return self.line_at.newlines
        return self.line_at(len(self.text)) - self.first_line

    def line_bounds(self, pos: int) -> tuple[int, int]:
        """Start and end (exclusive, without the newline) of the line holding pos."""
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        return start, (len(self.text) if end < 0 else end)

    def line_text(self, pos: int) -> str:
        start, end = self.line_bounds(pos)
        return self.text[start:end]

    def lines_from(self, pos: int) -> Iterator[tuple[int, int, str]]:
        """(line number, start offset, text) of the line holding pos and every line after."""
        start, _ = self.line_bounds(pos)
        number = self.line_at(start)
        text = self.text
        while start <= len(text):
            end = text.find("\n", start)
            if end < 0:
                end = len(text)
            yield number, start, text[start:end]
            number += 1
            start = end + 1


def from_text(text: str, meta: DocMeta | None = None) -> DocText:
    """A DocText from a str (tests, GitHub comments): normalised like a file would be."""
    return DocText(normalise(text), meta or DocMeta(uri="<text>"))


def read_text_file(path: str, meta: DocMeta | None = None) -> DocText:
    """Read a whole (small) document from disk: sniff, decode, normalise."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.strip():
        raise Empty("empty document")
    text, encoding = decode(data, sniff_encoding(data[:65536]))
    return DocText(normalise(text), meta or DocMeta(uri=str(path)), encoding=encoding)
