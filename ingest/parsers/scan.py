"""Position-ordered matches of several literal-led patterns.

One C-speed ``finditer`` per pattern, because an alternation of literals (``a|b|c``)
defeats the regex engine's literal search: a single pattern with several leading
literals is tried at every position of the text.

Each scan costs about 1 ms per 4 MiB even where its pattern never occurs, and a parser
gives up to a dozen patterns of which a chunk holds a few (trtexec's context: 7
patterns, none in a modern log; its data: 8, 4 there). So in a large text one
hyperscan pass first tells which patterns' leading literals occur at all (all of them
at once, like ingest.gate), and only those are scanned. The matches of all patterns
are then sorted by position, stably: equal positions keep the order the patterns are
given in (what ``heapq.merge`` of the scans gives, at a fraction of its cost per match).
"""

from __future__ import annotations

import re
import re._parser as _parser  # the regex module's own parser: a pattern's leading literal
from collections.abc import Iterator
from operator import itemgetter

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
    (equal positions in the order of `patterns`).

    One C-speed scan per literal-led pattern that can match.
    """
    stop = len(text) if end is None else end
    if len(patterns) > 2 and stop - start >= PREFILTER_MIN:
        patterns = _present(text, start, stop, patterns)
    found: list[tuple[int, str, re.Match[str]]] = []
    for kind, pattern in patterns:
        found += [(m.start(), kind, m) for m in pattern.finditer(text, start, stop)]
    if len(patterns) > 1:
        found.sort(key=_FIRST)  # stable: equal positions keep the patterns' order
    return iter(found)


def _present(text: str, start: int, stop: int, patterns: Patterns) -> Patterns:
    """The patterns that may match in text[start:stop]: those whose leading literal
    occurs there, and those without one."""
    prefilter = _prefilter(patterns)
    if prefilter is None:
        return patterns
    database, always = prefilter
    seen = set(always)

    def on_match(index: int, _from: int, _to: int, _flags: int, _context: object) -> None:
        seen.add(index)

    database.scan(text[start:stop].encode("utf-8", "surrogatepass"), match_event_handler=on_match)
    if len(seen) == len(patterns):
        return patterns
    return tuple(p for i, p in enumerate(patterns) if i in seen)


_PREFILTERS: dict[Patterns, tuple[object, tuple[int, ...]] | None] = {}


def _prefilter(patterns: Patterns) -> tuple[object, tuple[int, ...]] | None:
    """A hyperscan database of the patterns' leading literals (ids: their index), and
    the indices of the patterns without one; None without hyperscan. Built once."""
    try:
        return _PREFILTERS[patterns]
    except KeyError:
        pass
    built = None
    if hyperscan is not None:
        # A NUL would end the expression hyperscan is given: such a pattern is scanned.
        literals = [(i, leading_literal(p).partition("\0")[0]) for i, (_, p) in enumerate(patterns)]
        with_literal = [(i, lit) for i, lit in literals if lit]
        always = tuple(i for i, lit in literals if not lit)
        if with_literal:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(
                expressions=[
                    re.escape(lit).encode("utf-8", "surrogatepass") for _, lit in with_literal
                ],
                ids=[i for i, _ in with_literal],
                elements=len(with_literal),
                flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(with_literal),
            )
            built = (database, always)
    _PREFILTERS[patterns] = built
    return built


def leading_literal(pattern: re.Pattern[str]) -> str:
    """The literal every match of `pattern` starts with ("" when none is certain)."""
    if pattern.flags & re.IGNORECASE:
        return ""
    literal = []
    for op, value in _parser.parse(pattern.pattern, pattern.flags):
        if op is not _parser.LITERAL:
            break
        literal.append(chr(value))
    return "".join(literal)
