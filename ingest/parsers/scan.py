"""Position-ordered matches of several literal-led patterns.

An alternation of literals (``a|b|c``) defeats the regex engine's literal search: a
single pattern with several leading literals is tried at every position of the text.
So each pattern is matched on its own, and the matches of all patterns are then sorted
by position, stably: equal positions keep the order the patterns are given in (what
``heapq.merge`` of the scans gives, at a fraction of its cost per match).

A ``finditer`` per pattern costs about 1.2 ms per 4 MiB even where its pattern never
occurs, and a parser gives up to fifteen patterns: a chunk of real documents, where
most of them occur, paid 150 ms for 130 such scans. In a large text, one hyperscan pass
over all the patterns' leading literals (every match starts with its literal) says
where each literal occurs, and each pattern is tried there alone (``pattern.match``),
skipping occurrences inside its previous match, as ``finditer`` would: the same matches.
A pattern without a leading literal, or whose literal is not worth locating (_locatable:
one or two bytes, or markup alone) or occurs more than DENSE times, is scanned with
``finditer`` as before, where its literal occurs at all.
"""

from __future__ import annotations

import re
import re._parser as _parser  # the regex module's own parser: a pattern's leading literal
from collections.abc import Iterator
from operator import itemgetter

import numpy as np

try:
    import hyperscan
except ImportError:  # pragma: no cover - the pinned requirements install it
    hyperscan = None

Patterns = tuple[tuple[str, re.Pattern[str]], ...]

# Below this many characters the scans are cheap: no prefilter pass.
PREFILTER_MIN = 2**16
_FIRST = itemgetter(0)


def hits(
    text: str,
    patterns: Patterns,
    start: int = 0,
    end: int | None = None,
) -> Iterator[tuple[int, str, re.Match[str]]]:
    """(position, kind, match) of every pattern's matches in text[start:end], in text order
    (equal positions in the order of `patterns`)."""
    stop = len(text) if end is None else end
    found: list[tuple[int, str, re.Match[str]]] = []
    located = _located(text, start, stop, patterns) if len(patterns) > 2 else None
    for index, (kind, pattern) in enumerate(patterns):
        if located is None:
            starts = None
        else:
            starts = located[index]
            if starts is _ABSENT:
                continue
        if starts is None:
            found += [(m.start(), kind, m) for m in pattern.finditer(text, start, stop)]
            continue
        after = start
        match = pattern.match
        for pos in starts:
            if pos >= after and (m := match(text, pos, stop)) is not None:
                found.append((pos, kind, m))
                after = m.end()
    if len(patterns) > 1:
        found.sort(key=_FIRST)  # stable: equal positions keep the patterns' order
    return iter(found)


# A literal found more often than this in one text is scanned for (finditer) instead:
# trying the pattern at each of 13,000 "====" costs more than one scan.
DENSE = 2_000
# What _located says of a pattern whose literal does not occur at all.
_ABSENT: list[int] = []


def _located(text: str, start: int, stop: int, patterns: Patterns) -> list[list[int] | None] | None:
    """For each pattern, where its leading literal occurs in text[start:stop] (character
    offsets, in order), _ABSENT when nowhere, None when it is to be scanned for; None for
    all when the text is small or there is no hyperscan."""
    if stop - start < PREFILTER_MIN:
        return None
    prefilter = _prefilter(patterns)
    if prefilter is None:
        return None
    data, continuation = _encoded(text)
    if continuation is not None and (start, stop) != (0, len(text)):
        return None  # byte offsets of a part of a text beyond ASCII: not worth mapping
    database, literal_bytes = prefilter
    ends: list[list[int]] = [[] for _ in patterns]

    def on_match(index: int, _from: int, to: int, _flags: int, _context: object) -> None:
        ends[index].append(to)

    scanned = data if continuation is not None else memoryview(data)[start:stop]
    database.scan(scanned, match_event_handler=on_match)
    located: list[list[int] | None] = []
    for found, length in zip(ends, literal_bytes, strict=True):
        if length <= 0:  # no literal, or one that says only whether it occurs
            located.append(None if found or length < 0 else _ABSENT)
        elif not found:
            located.append(_ABSENT)
        elif len(found) > DENSE:
            located.append(None)
        else:
            offsets = np.asarray(found, np.int64) - length + start
            offsets.sort()  # hyperscan reports by end offset; made certain for a few µs
            if continuation is not None:  # bytes -> characters: less the continuation bytes
                offsets -= continuation.searchsorted(offsets)
            located.append(offsets.tolist())
    return located


def lines_holding(text: str, literals: tuple[str, ...]) -> list[int] | None:
    """The starts of the lines of `text` that hold one of `literals`, in order, once each;
    None when the text is small, there is no hyperscan, or the literals occur more than once
    in 512 characters: then the caller's own scan of every line (3 ns a character, tried at
    each line start) costs less than a callback and a line lookup a hit (1.5 us)."""
    offsets = literal_starts(text, literals, len(text) // 512)
    if offsets is None:
        return None
    return sorted({text.rfind("\n", 0, pos) + 1 for pos in offsets})


def literal_starts(
    text: str, literals: tuple[str, ...], most: int | None = None
) -> list[int] | None:
    """Where each of `literals` occurs in `text` (character offsets, every occurrence,
    overlapping ones too, in no order), by one hyperscan pass; None when the text is small,
    there is no hyperscan (then str.find of each, a pass of its own: 0.5 ms a MiB), or
    they occur more than `most` times."""
    if len(text) < PREFILTER_MIN or hyperscan is None:
        return None
    database, lengths = _literal_database(literals)
    data, continuation = _encoded(text)
    ends: list[int] = []
    ids: list[int] = []

    def on_match(index: int, _from: int, to: int, _flags: int, _context: object) -> bool:
        ends.append(to)
        ids.append(index)
        return most is not None and len(ends) > most

    try:
        database.scan(data, match_event_handler=on_match)
    except hyperscan.ScanTerminated:
        return None
    offsets = np.asarray(ends, np.int64) - np.asarray(lengths, np.int64)[ids]
    if continuation is not None:  # bytes -> characters (each offset is a literal's first byte)
        offsets -= continuation.searchsorted(offsets)
    return offsets.tolist()


_LITERAL_DATABASES: dict[tuple[str, ...], tuple[object, list[int]]] = {}


def _literal_database(literals: tuple[str, ...]) -> tuple[object, list[int]]:
    """A hyperscan database reporting every occurrence of each literal (id: its index), and
    their lengths in bytes. Built once."""
    built = _LITERAL_DATABASES.get(literals)
    if built is None:
        encoded = [literal.encode("utf-8", "surrogatepass") for literal in literals]
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(
            expressions=[re.escape(literal) for literal in encoded],
            ids=list(range(len(encoded))),
            elements=len(encoded),
            flags=[0] * len(encoded),
        )
        built = _LITERAL_DATABASES[literals] = (database, [len(e) for e in encoded])
    return built


def rows_matching(data: bytes, newlines: np.ndarray, expression: str) -> np.ndarray | None:
    """The lines (indices, in order) of ASCII `data`, its line ends at `newlines`, where
    the regular expression may match: the line of every match's last character, found in
    one pass by hyperscan in prefilter mode, which matches a superset of what the
    expression matches (the caller tells each line after). None without hyperscan."""
    if hyperscan is None:
        return None
    database = _REGEX_DATABASES.get(expression)
    if database is None:
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(
            expressions=[expression.encode()],
            ids=[0],
            elements=1,
            flags=[hyperscan.HS_FLAG_PREFILTER],
        )
        _REGEX_DATABASES[expression] = database
    ends: list[int] = []
    database.scan(data, match_event_handler=lambda _id, _from, to, _f, _c: ends.append(to))
    return np.unique(newlines.searchsorted(np.asarray(ends, np.int64) - 1))


_REGEX_DATABASES: dict[str, object] = {}


# The last text encoded: the parsers of a chunk ask about the same text one after another.
_last_encoded: tuple[str, bytes, np.ndarray | None] | None = None


def _encoded(text: str) -> tuple[bytes, np.ndarray | None]:
    """The UTF-8 bytes of a text, and the offsets of their continuation bytes (None for an
    ASCII text: byte offsets are character offsets)."""
    global _last_encoded
    last = _last_encoded
    if last is not None and last[0] is text:
        return last[1], last[2]
    data = text.encode("utf-8", "surrogatepass")
    continuation = None
    if len(data) != len(text):
        continuation = np.flatnonzero((np.frombuffer(data, np.uint8) & 0xC0) == 0x80)
    _last_encoded = (text, data, continuation)
    return data, continuation


_PRESENCE_ONLY = hyperscan.HS_FLAG_SINGLEMATCH if hyperscan is not None else 0
_PREFILTERS: dict[Patterns, tuple[object, list[int]] | None] = {}


def _locatable(literal: bytes) -> bool:
    """Whether a literal is worth locating: one or two characters occur everywhere, and so
    does markup ("====", "-- " of a table's "| --- |": 13,000 in a chunk of real documents,
    a hyperscan callback each). Of those, hyperscan only says whether they occur at all."""
    return len(literal) > 2 and _WORDY.search(literal) is not None


_WORDY = re.compile(rb"[A-Za-z0-9\x80-\xff]")  # a letter or digit, or a byte of one beyond ASCII


def _prefilter(patterns: Patterns) -> tuple[object, list[int]] | None:
    """A hyperscan database of the patterns' leading literals (ids: their index), and each
    pattern's literal length in bytes: 0 for one not worth locating (reported once, to say
    it occurs), -1 for none; None without hyperscan or without any literal. Built once."""
    try:
        return _PREFILTERS[patterns]
    except KeyError:
        pass
    built = None
    if hyperscan is not None:
        # A NUL would end the expression hyperscan is given: the literal stops before it.
        literals = [
            leading_literal(p).partition("\0")[0].encode("utf-8", "surrogatepass")
            for _, p in patterns
        ]
        ids = [i for i, literal in enumerate(literals) if literal]
        if ids:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(
                expressions=[re.escape(literals[i]) for i in ids],
                ids=ids,
                elements=len(ids),
                flags=[0 if _locatable(literals[i]) else _PRESENCE_ONLY for i in ids],
            )
            lengths = [
                -1 if not literal else len(literal) if _locatable(literal) else 0
                for literal in literals
            ]
            built = (database, lengths)
    _PREFILTERS[patterns] = built
    return built


def leading_literal(pattern: re.Pattern[str]) -> str:
    """The literal every match of `pattern` starts with ("" when none is certain); a group
    of literals at the start counts ("(?P<what>Total) iterations" -> "Total iterations")."""
    if pattern.flags & re.IGNORECASE:
        return ""
    literal: list[str] = []
    _literals(_parser.parse(pattern.pattern, pattern.flags), literal)
    return "".join(literal)


def _literals(items: _parser.SubPattern, literal: list[str]) -> bool:
    """Append the literals `items` starts with; whether they were all literals."""
    for op, value in items:
        if op is _parser.SUBPATTERN and not value[1] and not value[2]:  # no flags of its own
            if not _literals(value[3], literal):
                return False
        elif op is _parser.LITERAL:
            literal.append(chr(value))
        else:
            return False
    return True
