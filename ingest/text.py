"""From bytes on disk to the text every parser reads.

Decoding never ignores errors: UTF-8 (with or without BOM) and UTF-16 with a BOM are read
as such; a document that is not UTF-8 is tried as GB18030 (the superset of GBK that Chinese
Windows tools write) and the fallback is recorded. Text is NFKC-normalised (real documents
hold lookalikes such as U+2F9C for 足), line ends become "\\n", and markdown quote markers
("> ") are removed without changing line numbers, so a parser sees quoted logs as logs.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

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


def lowered_for_literals(text: str) -> str | None:
    """text.lower(), in which a literal that every match of a case-insensitive pattern holds
    is found where the match is (the same offsets); None when it would not be: Python's
    IGNORECASE also matches "i" with "ı" and "İ" and "s" with "ſ", which lower() keeps
    apart, and lower() makes "İ" two characters. For searches that skip a pattern, or try
    it only where its literal is (cells.unit_in_text, runs.dominant_model)."""
    low = text.lower()
    if len(low) != len(text) or "ı" in text or "ſ" in text:
        return None
    return low


_QUOTE = re.compile(r"(?m)^ {0,3}>(?: ?>)* ?")

# The timestamp a CI runner writes before every line of a job's log: GitHub Actions keeps
# "2024-01-03T02:30:00.9447399Z " before each (the log of a run, downloaded), and
# `gh run view --log` prints it after the job's and the step's names, a tab after each;
# GitLab's runner (FF_TIMESTAMPS) writes "2026-07-21T18:06:18.101984Z 00O ", the stream
# (O, E) and a flag ("+": the runner split a long line; its parts stay two lines here);
# Jenkins' timestamper "[2025-06-25T14:31:12.339Z] ". A blank line is the stamp alone.
_ISO_UTC = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"
_RUNNER_STAMP = rf"(?:{_ISO_UTC} [0-9a-f]{{2}}[OE][ +]|(?:{_ISO_UTC}|\[{_ISO_UTC}\])(?: |(?=\n)|$))"
_GH_NAMES = r"[^\t\n]*\t[^\t\n]*\t"  # `gh run view --log`: the job's and the step's names
CI_STAMP = rf"(?:{_GH_NAMES})?{_RUNNER_STAMP}"
# The stamps after each line end, in a log whose first line has the names before its
# stamp or not: a search that tries the names on every line costs four times as much.
_CI_STAMPS = {named: "\n" + (_GH_NAMES if named else "") + _RUNNER_STAMP for named in (False, True)}
# Compiled on first use (re's cache keeps them): 3 ms of every ingest's start-up otherwise,
# for the few documents that are CI logs. A first line without a "Z" near its start has no
# stamp: most documents are told so without a pattern.
_STAMP_REACH = 256


def _ci_stamp_at(data: str | bytes | memoryview, at: int) -> re.Match | None:
    """The CI stamp at `at` (the start of a document, after its BOM), if there is one."""
    if isinstance(data, str):
        if "Z" not in data[at : at + _STAMP_REACH]:
            return None
        return re.compile(CI_STAMP).match(data, at)
    if b"Z" not in bytes(data[at : at + _STAMP_REACH]):  # a memoryview's `in` takes ints
        return None
    return re.compile(CI_STAMP.encode()).match(data, at)


def without_ci_stamps(text: str) -> str:
    """A CI job's log without the runner's timestamp before each line, when its first line
    has one (a log of Paddle's testers read as the testers wrote it: the parsers' line
    patterns and a chunk's fast paths start at the line's start); any other text as it is.
    Lines keep their numbers; a line's raw text is kept without its stamp, as a quoted
    line is kept without its quote marker."""
    bom = 1 if text.startswith("\ufeff") else 0  # GitHub's log files start with one
    first = _ci_stamp_at(text, bom)
    if first is None:
        return text
    stamps = re.compile(_CI_STAMPS["\t" in first.group()])
    return text[:bom] + stamps.sub("\n", text[first.end() :])


def ci_log_started(head: bytes) -> datetime | None:
    """When a CI job's log began (UTC, naive, as the store keeps times): the stamp of its
    first line, or None for any other document. It dates the log as --date would: glog
    lines take their year from it, and records without a time of their own, the time."""
    bom = 3 if head[:3] == codecs.BOM_UTF8 else 0
    stamp = _ci_stamp_at(head, bom)
    if stamp is None:
        return None
    iso = re.search(_ISO_UTC.encode(), stamp.group())
    assert iso is not None  # every form of the stamp holds one
    try:  # fromisoformat keeps six digits of a longer fraction (GitHub writes seven)
        return datetime.fromisoformat(iso.group().decode()).replace(tzinfo=None)
    except ValueError:  # no such date or time: the log stays undated
        return None


def without_ci_stamps_bytes(data: bytes | memoryview) -> bytes | memoryview:
    """without_ci_stamps of UTF-8 bytes (a chunk of a file, before it is decoded): one
    search for each line end (24 ms a 4 MiB chunk of tester lines)."""
    bom = 3 if data[:3] == codecs.BOM_UTF8 else 0
    first = _ci_stamp_at(data, bom)
    if first is None:
        return data
    stamps = re.compile(_CI_STAMPS[b"\t" in first.group()].encode())
    return codecs.BOM_UTF8[:bom] + stamps.sub(b"\n", data[first.end() :])


def normalise(text: str) -> str:
    """NFKC, "\\n" line ends, a CI log's timestamps and markdown quote markers removed (line
    count unchanged)."""
    text = nfkc(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = without_ci_stamps(text)
    # ">" alone is one fast search; most texts without quotes have no ">" at all.
    if ">" in text and (text.startswith((">", " >")) or "\n>" in text or "\n >" in text):
        text = _unquoted(text)
    return text


def _unquoted(text: str) -> str:
    """_QUOTE.sub("", text), the markers found where lines start with them (line_matches)."""
    parts = []
    done = 0
    for m in line_matches(text, _QUOTE, (">",)):
        parts.append(text[done : m.start()])
        done = m.end()
    parts.append(text[done:])
    return "".join(parts)


# nfkc replaces the one-character decompositions in the code units when they are more than
# one in SINGLES_PER_CHAR characters of the text: that costs about 4 ns a character (a copy
# of the code units, and their decoding), where each run it spares nfkc's loop costs 1-3 us.
SINGLES_PER_CHAR = 1000


# Texts of at least this many bytes are normalised on their bytes (decode_nfkc).
NORMALISED_AS_BYTES = 2**16


def decode_nfkc(data: bytes | memoryview, codec: str) -> tuple[str, str, bytes, CharOffsets | None]:
    """decode, then nfkc: the text, the encoding used, the text's UTF-8 bytes (what the
    gate and the markers read) and, when known, what turns offsets into those bytes into
    offsets into the text.

    A large UTF-8 text (a chunk of a log) is normalised on its bytes first (nfkc_utf8):
    most need nothing more, and their bytes need no encoding back. A small one (a comment)
    is decoded first, as most are NFKC already and unicodedata tells so in microseconds:
    no table of the plane (20 ms to build) is made for it."""
    utf8 = codec == "utf-8" or (codec == "utf-8-sig" and data[:3] != codecs.BOM_UTF8)
    if utf8 and len(data) >= NORMALISED_AS_BYTES:
        normal, clean, offsets = nfkc_utf8(data)
        try:
            text = str(normal, "utf-8")
        except UnicodeDecodeError:
            pass  # GB18030, or lines of both: decode's business
        else:
            if clean:
                return text, codec, bytes(normal), offsets
            result = nfkc(text)
            if result is text:
                return text, codec, bytes(normal), offsets
            return result, codec, result.encode("utf-8"), None
    text, encoding = decode(bytes(data), codec)
    text = nfkc(text)
    return text, encoding, text.encode("utf-8", "surrogatepass"), None


def nfkc(text: str) -> str:
    """unicodedata.normalize("NFKC", text), normalising only the text around the characters
    normalisation may change, when they are few (a log with an ellipsis on some lines, a
    Chinese comment with its full-width commas).

    Normalising a whole 4 MiB chunk costs 40-80 ms, a twentieth of parsing it. Most
    characters are starters that NFKC leaves as they are and that combine with nothing
    before them (ASCII, CJK ideographs, kana): the text may be cut before any of them and
    each piece normalised on its own (UAX #15: a boundary before a character of
    NFKC_Quick_Check=Yes and combining class 0). So each run of the other characters
    ("unsafe", _unsafe_table), with the one character before it, normalises on its own to
    what it is in the whole text. The runs are found by numpy in the text's UTF-32 code
    units; where they are many, the whole text is normalised.

    First, the characters whose whole compatibility decomposition is one character (the
    full-width "（：，" of a Chinese comment, an ideographic space) are replaced by it, in
    the code units at once: NFKC is composition after NFKD, and NFKD makes the same of
    both texts. A log whose every line has a Chinese comment was normalised whole, at
    60 ms a chunk (the same chunk, ASCII, costs 3 ms to read).
    """
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    units = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    table = _unsafe_table()
    wide = np.flatnonzero(units >= 0x80)  # ASCII is safe: most of a log, looked up never
    unsafe = wide[table[np.minimum(units[wide], len(table) - 1)]]
    if len(unsafe) > len(text) // SINGLES_PER_CHAR:
        # The characters whose compatibility decomposition is ASCII ("…" -> "...", "ﬁ" ->
        # "fi") are replaced by it, a str.replace each: NFKD makes the same of both texts,
        # and ASCII is safe. 7,800 ellipses of nsys's cut names in a 4 MiB chunk were as
        # many runs normalised one by one, 8 ms.
        codes = np.unique(units[unsafe]).tolist()
        expanded = [(chr(c), to) for c in codes if (to := _ascii_expansion(c)) is not None]
        if expanded:
            del units
            for char, expansion in expanded:
                text = text.replace(char, expansion)
            return nfkc(text)
        single = _single_table()
        found = np.minimum(units[unsafe], len(single) - 1)  # beyond the plane: one entry
        mapped = single[found]
        replaced = mapped != found
        if np.count_nonzero(replaced) > len(text) // SINGLES_PER_CHAR:
            units = units.copy()
            units[unsafe[replaced]] = mapped[replaced]
            text = codecs.utf_32_le_decode(units, "surrogatepass")[0]  # type: ignore[arg-type]
            keep = ~replaced
            # the one character may be unsafe too (a combining mark, one beyond the plane)
            keep[replaced] = table[np.minimum(mapped[replaced], len(table) - 1)]
            unsafe = unsafe[keep]
    del units
    if len(unsafe) > len(text) // 64 + 64:
        return unicodedata.normalize("NFKC", text)
    if not len(unsafe):
        return text
    ends = np.flatnonzero(np.diff(unsafe) > 1)  # the last of each run but the last run
    starts = unsafe[np.concatenate(([0], ends + 1))].tolist()
    stops = (unsafe[np.concatenate((ends, [len(unsafe) - 1]))] + 1).tolist()
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


@dataclass(frozen=True, slots=True)
class CharOffsets:
    """Offsets into valid UTF-8 bytes as offsets into their str: the first byte of each
    character beyond ASCII, and the bytes beyond one of all characters before it."""

    leads: np.ndarray
    extra: np.ndarray  # one more than leads: the bytes beyond one before each lead, and all

    @classmethod
    def of(cls, leads: np.ndarray, lengths: np.ndarray) -> CharOffsets:
        return cls(leads, np.concatenate(([0], np.cumsum(lengths - 1))))

    def __call__(self, offsets: np.ndarray | list[int]) -> np.ndarray:
        """The str offsets of byte offsets, each at the start of a character."""
        offsets = np.asarray(offsets, np.int64)
        return offsets - self.extra[np.searchsorted(self.leads, offsets)]


def nfkc_utf8(data: bytes | memoryview) -> tuple[bytes | memoryview, bool, CharOffsets]:
    """nfkc's first step on the UTF-8 bytes of a text: each character whose whole
    compatibility decomposition is one character replaced by that one. Also whether no
    character normalisation may change is left (then the bytes are the NFKC text's), and
    the str offsets of the result's bytes (good only if it decodes).

    The characters' code points come from their bytes with numpy, where decoding, the
    UTF-32 copy nfkc works on and encoding back cost 20-25 ms of a 4 MiB chunk whose every
    line holds a Chinese comment and its full-width "（：，". A character is replaced only
    where its sequence is well formed and its replacement no longer (so never one beyond
    the plane): a text that was no valid UTF-8 is none after, and the caller's strict
    decoding of the result finds it. Not left "clean", the text still goes through nfkc,
    which finds the same replacements done and normalises the rest as the whole text.
    """
    b = np.frombuffer(data, np.uint8)
    leads = np.flatnonzero(b >= 0xC0)  # the first bytes of characters beyond ASCII
    last = b.size - 1
    first = b[leads].astype(np.int32)
    second = b[np.minimum(leads + 1, last)].astype(np.int32)
    third = b[np.minimum(leads + 2, last)].astype(np.int32)
    length = _UTF8_LENGTH[first]
    code = np.where(
        length == 2,
        (first & 0x1F) << 6 | second & 0x3F,
        (first & 0x0F) << 12 | (second & 0x3F) << 6 | third & 0x3F,
    )
    code[length == 4] = 0x10000  # beyond the plane: unsafe, never replaced
    table = _unsafe_table()
    unsafe = np.flatnonzero(table[code])  # of leads; a malformed one's code is any
    offsets = CharOffsets.of(leads, length)
    if not unsafe.size:
        return data, True, offsets
    was, old = code[unsafe], length[unsafe]
    mapped = _single_table()[was]
    size = np.where(mapped < 0x80, 1, np.where(mapped < 0x800, 2, 3))
    at = leads[unsafe]
    formed = (at + old - 1 <= last) & ((second[unsafe] & 0xC0) == 0x80)
    formed &= np.where(old == 2, was >= 0x80, ((third[unsafe] & 0xC0) == 0x80) & (was >= 0x800))
    replaced = formed & (mapped != was) & (size <= old) & (mapped < 0x10000)
    clean = not (~replaced).any() and not table[mapped[replaced]].any()  # one may be unsafe
    if not replaced.any():
        return data, clean, offsets
    unsafe, at, new = unsafe[replaced], at[replaced], mapped[replaced]
    old, size = old[replaced], size[replaced]
    keep = np.ones(b.size, bool)
    for k in (1, 2):  # the bytes of a sequence beyond its replacement's
        keep[at[(size <= k) & (k < old)] + k] = False
    out = b[keep]
    dropped = np.zeros(len(leads), np.int64)
    dropped[unsafe] = old - size
    moved = leads - (np.cumsum(dropped) - dropped)  # less the bytes dropped before each
    at = moved[unsafe]
    for width, lead_bits in ((1, 0), (2, 0xC0), (3, 0xE0)):
        these = size == width
        pos, value = at[these], new[these]
        out[pos] = lead_bits | value >> (6 * (width - 1))
        for k in range(1, width):
            out[pos + k] = 0x80 | (value >> (6 * (width - 1 - k))) & 0x3F
    length = length.copy()
    length[unsafe] = size
    return out.tobytes(), clean, CharOffsets.of(moved, length)


# The length of a UTF-8 sequence by its first byte (a byte that starts none: 1).
_UTF8_LENGTH = np.repeat(np.array([1, 2, 3, 4], np.int64), [0xC0, 0x20, 0x10, 0x10])


_UNSAFE: list[np.ndarray] = []
_SINGLE: list[np.ndarray] = []


def _unsafe_table() -> np.ndarray:
    """For each character of the Basic Multilingual Plane and one entry for all beyond it:
    whether the text may not be cut before it (nfkc). A character is unsafe when NFKC
    changes it, when it has a combining class, or when it may be the second of a canonical
    composition (the second of any two-character canonical decomposition, and the Hangul
    vowel and final jamo, which compose by rule): a superset of NFKC_Quick_Check != Yes.
    Every character beyond the plane counts as unsafe. Built once a process, in 20 ms."""
    if _UNSAFE:
        return _UNSAFE[0]
    table = np.zeros(0x10001, bool)
    table[0x10000] = True  # beyond the plane
    table[0xD800:0xE000] = True  # surrogates: left as they are, by the whole text's rules
    for code in itertools.chain(range(0x80, 0xD800), range(0xE000, 0x10000)):
        char = chr(code)
        if unicodedata.combining(char) or unicodedata.normalize("NFKC", char) != char:
            table[code] = True
        canonical = unicodedata.decomposition(char)
        if canonical and not canonical.startswith("<"):
            pair = canonical.split()
            if len(pair) == 2:
                table[min(int(pair[1], 16), 0x10000)] = True  # may compose with the one before
    table[0x1161:0x1176] = True  # Hangul vowel jamo: LV syllables compose by rule
    table[0x11A8:0x11C3] = True  # Hangul final jamo: LVT syllables
    _UNSAFE.append(table)
    return table


@functools.lru_cache(maxsize=4096)
def _ascii_expansion(code: int) -> str | None:
    """The compatibility decomposition of a character when it is two or more ASCII
    characters ("…" -> "..."), else None."""
    decomposed = unicodedata.normalize("NFKD", chr(code))
    return decomposed if len(decomposed) > 1 and decomposed.isascii() else None


def _single_table() -> np.ndarray:
    """For each unsafe character of the Basic Multilingual Plane, the one character its
    whole compatibility decomposition (NFKD) is, or itself; the last entry (beyond the
    plane) is itself. Built once a process, in 10 ms."""
    if _SINGLE:
        return _SINGLE[0]
    single = np.arange(0x10001, dtype=np.uint32)
    for code in np.flatnonzero(_unsafe_table()[:0x10000]).tolist():
        if 0xD800 <= code < 0xE000:
            continue  # surrogates stay as they are
        decomposed = unicodedata.normalize("NFKD", chr(code))
        if len(decomposed) == 1:
            single[code] = ord(decomposed)
    _SINGLE.append(single)
    return single


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


class _NewlineIndex:
    """Line numbers from the offsets of every newline: a sorted array, searched."""

    __slots__ = ("_first", "_newlines")

    def __call__(self, pos: int) -> int:
        return self._first + int(self._newlines.searchsorted(pos))

    def many(self, positions: list[int]) -> list[int]:
        return (self._newlines.searchsorted(positions) + self._first).tolist()

    @property
    def newlines(self) -> int:
        return len(self._newlines)


class LineIndex(_NewlineIndex):
    """Line numbers from the positions of every newline, found with numpy.

    For the bytes of an ASCII chunk: comparing and collecting runs at about 7 GB/s, where
    counting with str.count runs at 2-3 GB/s, and numpy releases the GIL, so the index can
    be built by the thread that reads ahead. A batch of positions is looked up in one
    call. The comparison goes into a scratch array each thread keeps. A DocText whose
    line_at is a LineIndex is the very bytes indexed: parsers may read it in bulk.
    """

    __slots__ = ()
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

    @property
    def positions(self) -> np.ndarray:
        """The offset of every newline, in order (for parsers that read lines in bulk)."""
        return self._newlines


class TextLineIndex(_NewlineIndex):
    """The same for a str beyond ASCII, in character offsets: from its UTF-32 code units,
    its characters one to one (6 ms a 4 MiB chunk), or, when chunk_text has them, from
    its UTF-8 bytes' newlines through CharOffsets (under 1 ms). A LineCounter over such a
    chunk counted 90 ms: every parser sweeps it from the start again, and some go back."""

    __slots__ = ()

    def __init__(self, text: str, first_line: int = 1, newlines: np.ndarray | None = None) -> None:
        """`newlines`: the text's newline offsets, when known (chunk_text: from its bytes')."""
        if newlines is None:
            units = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            newlines = np.flatnonzero(units == 10)
        self._newlines = newlines
        self._first = first_line


# Texts at least this long are indexed (TextLineIndex); shorter ones counted as asked.
INDEXED_TEXT = 2**16


_BLANK_TAIL = re.compile(r"\s*\Z")  # \s is str.isspace's set, what strip() strips


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

    # A newline index of the text, first line 1: of the bytes the text is, character for
    # character (LineIndex: an ASCII chunk used as it was read), or of a text beyond ASCII
    # (TextLineIndex); without one, it is made or lines are counted as asked for.
    line_index: LineIndex | TextLineIndex | None = field(default=None, repr=False)
    # The text's own bytes, when it is ASCII and chunk_text has them (a chunk as read):
    # the bulk readers' buffer (ascii_bytes), where encoding the text again cost 0.9 ms a
    # 4 MiB chunk, each time one of them asked.
    data: bytes | memoryview | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.line_index is not None and self.first_line == 1:
            self.line_at: LineCounter | LineIndex | TextLineIndex = self.line_index
        elif len(self.text) >= INDEXED_TEXT:
            self.line_at = TextLineIndex(self.text, self.first_line)
        else:
            self.line_at = LineCounter(self.text, self.first_line)

    def ascii_bytes(self) -> bytes | memoryview:
        """The bytes of an ASCII text (an indexed chunk's: line_at is a LineIndex)."""
        return self.data if self.data is not None else self.text.encode("ascii")

    def lines_at(self, positions: list[int]) -> list[int]:
        """The line numbers of many positions (in increasing order) at once."""
        if isinstance(self.line_at, _NewlineIndex):
            return self.line_at.many(positions)
        return [self.line_at(pos) for pos in positions]

    def newline_count(self) -> int:
        """How many line ends the text has (the next chunk starts that many lines later).

        Counted on from where the parsers' line numbers left off: one pass in all.
        """
        if isinstance(self.line_at, _NewlineIndex):
            return self.line_at.newlines
        return self.line_at(len(self.text)) - self.first_line

    def line_bounds(self, pos: int) -> tuple[int, int]:
        """Start and end (exclusive, without the newline) of the line holding pos."""
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        return start, (len(self.text) if end < 0 else end)

    def blank_after(self, pos: int) -> bool:
        """Whether nothing but whitespace follows pos (a table at the end of a cut text?).

        Matched in place: ``text[pos:].strip()`` or ``len(text.rstrip())`` would copy up
        to the whole of a 4 MiB chunk for every table asked about."""
        return _BLANK_TAIL.match(self.text, pos) is not None

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


def line_matches(
    text: str, pattern: re.Pattern[str], needles: tuple[str, ...]
) -> list[re.Match[str]]:
    """pattern.finditer(text), for a pattern that matches from a line's start ("(?m)^")
    within the line, and only on lines holding one of needles: tried at the starts of
    those lines alone.

    The regex engine has no skip to the next line start: it tries such a pattern at every
    position, 15-25 ms a 4 MiB chunk each, where str.find finds one character at memory
    speed (a search for "\n>" in a text beyond ASCII runs at a fifth of that).
    """
    starts: set[int] = set()
    for needle in needles:
        pos = text.find(needle)
        while pos >= 0:
            starts.add(text.rfind("\n", 0, pos) + 1)
            end = text.find("\n", pos + len(needle))
            pos = text.find(needle, end) if end >= 0 else -1
    found = (pattern.match(text, start) for start in sorted(starts))
    return [m for m in found if m is not None]


def last_line_match(text: str, pattern: re.Pattern[str], needle: str) -> re.Match[str] | None:
    """The last match of line_matches(text, pattern, (needle,)), looked for from the end,
    a line holding the needle at a time: the nearest heading above a table, without a
    scan of the 64 KiB above it from the start."""
    pos = len(text)
    while (pos := text.rfind(needle, 0, pos)) >= 0:
        start = text.rfind("\n", 0, pos) + 1
        m = pattern.match(text, start)
        if m is not None:
            return m
        pos = start  # this line is not one: the lines before it
    return None


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
