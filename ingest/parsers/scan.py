"""Merged, position-ordered matches of several literal-led patterns.

One C-speed ``finditer`` per pattern, merged lazily by position, because an alternation
of literals (``a|b|c``) defeats the regex engine's literal search: a single pattern
with several leading literals is tried at every position of the text.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator


def hits(
    text: str,
    patterns: tuple[tuple[str, re.Pattern[str]], ...],
    start: int = 0,
    end: int | None = None,
) -> Iterator[tuple[int, str, re.Match[str]]]:
    """(position, kind, match) of every pattern's matches in text[start:end], in text order.

    One C-speed scan per literal-led pattern, merged lazily.
    """
    stop = len(text) if end is None else end
    streams = [_tagged(kind, pattern, text, start, stop) for kind, pattern in patterns]
    return heapq.merge(*streams, key=lambda hit: hit[0])


def _tagged(
    kind: str, pattern: re.Pattern[str], text: str, start: int, end: int
) -> Iterator[tuple[int, str, re.Match[str]]]:
    for m in pattern.finditer(text, start, end):
        yield m.start(), kind, m
