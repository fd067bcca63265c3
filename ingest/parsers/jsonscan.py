"""Find a JSON object inside any text: a whole result file, a fenced block in an issue
comment, a terminal paste that wrapped the object's lines.

Parsers of JSON results (vLLM's --save-result, Google Benchmark, pytest-benchmark, asv,
hyperfine, llama-bench) find a key they know with re.finditer and call ``find_object`` for
the object holding it, so one JSON reader serves every format and a document never has to
be JSON from its first byte.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

from ingest.text import DocText
from perfboard.model import Problem

MAX_JSON_CHARS = 256 * 1024 * 1024  # a --save-detailed result can be large
_JSON_TRIES = 64  # "{" positions tried back from a key before giving up

_DECODER = json.JSONDecoder()
_OBJECT_HEAD = re.compile(r'\{\s*"')


def decode_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value opening at start and its end; a slice at a time, never the whole text
    (a JSON error counts the lines before its position)."""
    size = 1 << 16
    while True:
        chunk = text[start : start + size]
        try:
            value, n = _DECODER.raw_decode(chunk)
        except json.JSONDecodeError as e:
            near_end = e.pos >= len(chunk) - 64 or e.msg.startswith("Unterminated string")
            if start + size >= len(text) or not near_end or size >= MAX_JSON_CHARS:
                raise
            size *= 8
            continue
        return value, start + n


def nested_value(text: str, brace: int) -> bool:
    """A "{" that opens the value of a key (``"server_info": {``): not a result's start."""
    i = brace - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    if i < 0 or text[i] != ":":
        return False
    i -= 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i >= 0 and text[i] == '"'  # a quoted key before the colon, not "result:"


def find_object(
    text: str, key_pos: int, key: str, floor: int, tried: set[int]
) -> tuple[dict[str, Any], int, int, bool] | tuple[None, int, int, bool]:
    """The object holding the key at key_pos: (obj, start, end, joined).

    (None, start, -1, False) when the nearest candidate never reads (cut), (None, -1, -1,
    False) when no object holds the key. ``joined``: read only with its line breaks
    removed (a terminal wrapped it mid-token).
    """
    brace = key_pos
    first_failed = -1
    for _ in range(_JSON_TRIES):
        brace = text.rfind("{", floor, brace)
        if brace < 0:
            break
        if nested_value(text, brace):
            continue
        try:
            obj, end = decode_at(text, brace)
        except ValueError:
            if first_failed < 0:
                first_failed = brace
            continue
        if isinstance(obj, dict) and end > key_pos and key in obj:
            return obj, brace, end, False
    if first_failed < 0 or first_failed in tried or not _OBJECT_HEAD.match(text, first_failed):
        return None, -1, -1, False
    if "\n\n" in text[first_failed:key_pos].replace(" ", "").replace("\t", ""):
        return None, -1, -1, False  # a "{" paragraphs above the key opens no object of it
    tried.add(first_failed)
    # A wrapped paste: the object's lines joined. It ends at the first "}" line end after
    # the key that makes it read.
    limit = min(len(text), first_failed + (1 << 20))
    close = text.find("}", key_pos, limit)
    while close >= 0:
        joined = text[first_failed : close + 1].replace("\n", "")
        try:
            obj = json.loads(joined)
        except ValueError:
            close = text.find("}", close + 1, limit)
            continue
        if isinstance(obj, dict) and key in obj:
            return obj, first_failed, close + 1, True
        break
    return None, first_failed, -1, False


def cut_object(doc: DocText, start: int, what: str, parser: str) -> tuple[Problem, int]:
    """The Problem of a JSON object opening at `start` that never reads (cut short, or
    garbled), and the end of its first line: where reading goes on."""
    line_start, line_end = doc.line_bounds(start)
    problem = Problem(
        doc.line_at(start),
        f"{what} is cut or cannot be read",
        doc.text[line_start : min(line_end, line_start + 2000)],
        parser,
    )
    return problem, line_end


def positions(text: str, literal: str) -> list[int]:
    """Where a literal stands in a text, in order: the marker keys of a format, found once
    per text, so that a hit is decoded only when a marker is near (near)."""
    return [m.start() for m in re.finditer(re.escape(literal), text)]


def near(found: list[int], lo: int, hi: int) -> bool:
    """Whether some position of `found` (sorted) lies in [lo, hi)."""
    i = bisect.bisect_left(found, lo)
    return i < len(found) and found[i] < hi
