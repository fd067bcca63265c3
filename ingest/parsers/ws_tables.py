"""Whitespace-separated tables in test reports (docs/formats.md section 5).

```
Seqlen128-data
batch_size average_latency(ms) batch_latency(ms) gpu_memory(MB)
1 8.664 8.664 737
200 显存不足
```

A table is a header line whose first column is a dimension (batch_size, bs, threads,
seq_len...) and whose other columns name a unit, followed at once by rows that start with
a number. An optional title line right above the header adds parameters ("Seqlen128" ->
seq_len 128). A row with text instead of numbers is a status ("显存不足", "OOM": out of
memory) and gives one Measurement per value column with that status and no value. The
bullet list above the tables (test date, CUDA, CUDNN, Paddle commit, image, GPU, GCC)
describes every measurement below it.

ANCHORS: the header must start with a dimension name (in lower case or with a capital
first letter), so the anchors are stems of those names: "atch" covers batch_size, Batch,
batchsize; "hread" covers threads, Thread_num, num_threads; "eq_len" covers seq_len and
max_seq_len... A column name is a better gate than a unit ("(ms)") because units come in
many spellings while the leading dimension names are few. The stems also occur in logs
("--batch_size=1"), but the scan behind them is cheap: it is led by "\\n", is case
sensitive (so the regex engine can use its literal-prefix search), and only looks at lines
that start with a dimension name followed by a blank.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, cast

import numpy as np

from ingest import columns
from ingest.parsers import scan
from ingest.parsers.cells import (
    CONTEXT_WINDOW,
    DIMENSIONS,
    dimension_key,
    dimension_value,
    header_unit,
    metric_for,
    parse_date,
    precision_params,
    status_of,
)
from ingest.text import DocText, LineIndex, last_line_match
from perfboard.model import Direction, Item, Measurement, ParamValue, Problem, Status
from perfboard.units import Quantity, UnitError, normalise, split_number

NAME = "ws_tables"
ANCHORS = (
    "atch",  # batch_size, batchsize, batch, Batch_size
    "bs",
    "Bs",
    "hread",  # threads, thread_num, num_threads, Threads
    "eq_len",  # seq_len, max_seq_len, Seq_len
    "eqlen",  # seqlen, max_seqlen
    "equence",  # sequence_length
    "线程",  # 线程数
    "序列长度",
)

# Header names are single tokens: "batch size" (two words) cannot lead a whitespace table.
_LEADERS = sorted((name for name in DIMENSIONS if " " not in name), key=len, reverse=True)


def _leader(name: str) -> str:
    """ "batch_size" -> "[bB]atch_size": lower case or a capital first letter."""
    head = name[0]
    first = f"[{head}{head.upper()}]" if head.upper() != head else re.escape(head)
    return first + re.escape(name[1:])


# What a header line holds, whatever its first letter's case: the lines to try (scan).
_SPELLINGS = {spelling for name in _LEADERS for spelling in (name, name[0].upper() + name[1:])}
_HEADER_WORDS = tuple(
    sorted(word for word in _SPELLINGS if not any(o != word and o in word for o in _SPELLINGS))
)

_HEADER_BODY = r"[ \t]*(?:" + "|".join(map(_leader, _LEADERS)) + r")[ \t]+[^\n]*"
# Led by "\n" so the scan only stops at line starts; the first line is checked apart.
_HEADER = re.compile(r"\n" + _HEADER_BODY)
_HEADER_FIRST = re.compile(_HEADER_BODY)
_DIMENSION_CELL = re.compile(r"\d+(?:\.\d+)?")
_NOT_A_NAME = re.compile(r"[=:,;]")  # "bs=1", "threads: 4" are log text, not headers

_LATENCY_NAMES = frozenset(
    {"latency", "average_latency", "avg_latency", "ave_latency", "mean_latency"}
) | frozenset({"time", "average_time", "avg_time", "ave_time", "mean_time", "平均延迟"})
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*")
_UNIT_SUFFIX = re.compile(r"[/_](?:ms|us|ns|s|mb|gb)$")


@dataclass(slots=True)
class _Column:
    index: int
    header: str  # as written: "average_latency(ms)"
    dimension: str | None  # params key for dimension columns
    unit: str = ""  # as written; "" for dimension columns
    metric: str = ""
    canonical: Quantity | None = None  # normalise(1, unit): canonical unit, direction
    derived: bool = False  # a ratio ("speedup(x)"): recomputable, so not stored


@dataclass(slots=True)
class _Env:
    """The test environment of the bullet list above a table."""

    testbed: dict[str, str] = field(default_factory=dict)
    version: str | None = None
    device: str = ""
    measured_at: datetime | None = None
    problems: list[Problem] = field(default_factory=list)


# The first character a header line may have: a blank, or a leader's first letter in
# either case (_leader).
# _HEADER_BODY of an ASCII line for RE2: the same lines (its names are identifiers).
_HEADER_RE2 = r"^[ \t]*(?:" + "|".join(sorted(n for n in _SPELLINGS if n.isascii())) + r")[ \t]"
_TRIED_ONE_BY_ONE = 256  # candidate lines below this many: Python's match on each
_FIRST_CHARACTERS = {" ", "\t", *(name[0] for name in _SPELLINGS)}
_HEADER_FIRSTS = np.zeros(256, bool)
_HEADER_FIRSTS[[ord(c) for c in _FIRST_CHARACTERS if ord(c) < 128]] = True


def _header_starts(doc: DocText) -> Iterator[int]:
    """The starts of the lines that look like a header (_HEADER_BODY from their start).

    An indexed ASCII chunk (a log's) is tried only at the lines whose first byte a header
    may start with: numpy reads every line's first byte at once, and where those are many
    (a profiler's indented rows, a demo's "Model name" lines) RE2 tells which start with a
    header's name. A glog line starts with its severity letter, so a log of them has none
    to try. The literal search below stopped at a log's every "Batch size" or "thread",
    for nothing: a 4 MiB chunk of the demo's lines 14.1 -> 3.1 ms, of profiler reports 6.2
    -> 1.9 ms, of PrintTime's 6.0 -> 0.2 ms."""
    text = doc.text
    if isinstance(doc.line_at, LineIndex):
        raw = doc.ascii_bytes()
        data = np.frombuffer(raw, np.uint8)
        starts, ends = columns.line_bounds(doc.line_at.positions, len(data))
        may = np.flatnonzero(starts < len(data))
        may = may[_HEADER_FIRSTS[data[starts[may]]]]
        del data  # no view of the chunk's buffer outlives this call
        if len(may) > _TRIED_ONE_BY_ONE:  # a log whose every line starts so: RE2 tells
            import pyarrow.compute as pc

            lines = columns.spans(raw, starts[may], ends[may])
            may = may[pc.match_substring_regex(lines, _HEADER_RE2).to_numpy(zero_copy_only=False)]
        return (start for start in starts[may].tolist() if _HEADER_FIRST.match(text, start))
    lines = scan.lines_holding(text, _HEADER_WORDS)
    if lines is None:  # a small text, or one where the words are everywhere: scan its lines
        first = [0] if _HEADER_FIRST.match(text) else []
        return itertools.chain(first, (m.start() + 1 for m in _HEADER.finditer(text)))
    return (start for start in lines if _HEADER_FIRST.match(text, start))


def parse(doc: DocText) -> Iterator[Item]:
    """Every whitespace table with a dimension column and unit-bearing value columns."""
    text = doc.text
    envs: dict[int, _Env] = {}  # by start of the environment block: read once per block
    resume = 0
    for start in _header_starts(doc):
        if start < resume:
            continue
        end = doc.line_bounds(start)[1]
        columns = _header_columns(text[start:end])
        if columns is None or end >= len(text):
            continue
        rows = _rows(doc, end + 1)
        if not rows:
            continue  # a header-like line with no rows under it: prose, not a table
        resume = rows[-1][1] + len(rows[-1][2])
        block, env = _environment(doc, start, envs)
        if block not in envs:
            envs[block] = env
            yield from env.problems
        yield from _table(doc, start, end, columns, rows, env)


def _tokens(line: str) -> list[str]:
    """Header tokens, with a unit written apart ("latency (ms)") joined to its name."""
    tokens: list[str] = []
    for token in line.split():
        if tokens and token.startswith("("):
            tokens[-1] += " " + token
        else:
            tokens.append(token)
    return tokens


def _header_columns(line: str) -> list[_Column] | None:
    """Columns of a header line, or None when the line is not a table header."""
    tokens = _tokens(line)
    if len(tokens) < 2 or dimension_key(tokens[0]) is None:
        return None
    columns: list[_Column] = []
    for index, token in enumerate(tokens):
        if split_number(token) is not None or _NOT_A_NAME.search(token):
            return None
        dimension = dimension_key(token)
        column = _Column(index, token, dimension)
        if dimension is None and (unit := header_unit(token)):
            canonical = normalise(1.0, unit)
            if canonical.kind == "ratio":
                column.derived = True
            else:
                column.unit, column.canonical = unit, canonical
                column.metric = _metric(token, canonical.kind)
        columns.append(column)
    if not any(c.unit for c in columns):
        return None
    return columns


def _metric(header: str, kind: str) -> str:
    """ "average_latency(ms)" -> "latency"; "batch_latency" and "gpu_memory" kept as named."""
    name = re.sub(r"\s*[(\[].*$", "", header).strip().lower()
    name = _UNIT_SUFFIX.sub("", name)  # "latency_ms" names a latency
    if name in _LATENCY_NAMES:
        return "latency"
    if _IDENTIFIER.fullmatch(name):
        return name
    return metric_for(name, kind)


_Row = tuple[int, int, str]  # line number, offset, text


def _rows(doc: DocText, pos: int) -> list[_Row]:
    """The lines under a header that start with a dimension value, up to the first other."""
    rows: list[_Row] = []
    for number, start, line in doc.lines_from(pos):
        tokens = line.split()
        if not tokens or not _DIMENSION_CELL.fullmatch(tokens[0]):
            break
        rows.append((number, start, line))
    return rows


def _table(
    doc: DocText, start: int, end: int, columns: list[_Column], rows: list[_Row], env: _Env
) -> Iterator[Item]:
    header_line = doc.line_at(start)
    header_raw = doc.text[start:end]
    values = [c for c in columns if c.unit]
    unitless = [c for c in columns if not (c.unit or c.dimension or c.derived)]
    for column in unitless:
        # A column with numbers but no unit: never guess one.
        reason = f"column {column.header!r} names no unit: unit unknown, values not read"
        yield _problem(header_line, reason, header_raw)
    base = _title_params(_line_above(doc, start))
    for number, _, line in rows:
        yield from _row(number, line, columns, values, base, env)


def _row(
    number: int,
    line: str,
    columns: list[_Column],
    values: list[_Column],
    base: dict[str, ParamValue],
    env: _Env,
) -> Iterator[Item]:
    """Measurements of one row: numbers, or a status for every value column."""
    cells = line.split()
    numeric = [split_number(cell) for cell in cells]
    params = dict(base)
    if all(n is not None for n in numeric):
        if len(cells) != len(columns):
            reason = f"row has {len(cells)} cells for {len(columns)} columns"
            yield _problem(number, reason, line)
            return
        for column in columns:
            if column.dimension:
                params[column.dimension] = cast(ParamValue, dimension_value(cells[column.index]))
        for column in values:
            yield _value(cells[column.index], column, params, env, number, line)
        return
    params[cast(str, columns[0].dimension)] = cast(ParamValue, dimension_value(cells[0]))
    text = " ".join(cells[1:])
    status = status_of(text)
    if status is None:
        yield _problem(number, f"row text {text!r} is neither numbers nor a status", line)
        return
    for column in values:
        yield _measurement(column, None, status, params, env, number, line)


def _value(
    cell: str, column: _Column, params: dict[str, ParamValue], env: _Env, number: int, line: str
) -> Item:
    """One numeric cell: a Measurement, or a Problem for NaN, negative or absurd values."""
    number_unit = split_number(cell) or (float("nan"), "")  # numeric: checked by the caller
    try:
        q = normalise(number_unit[0], number_unit[1] or column.unit)
    except UnitError as error:
        return _problem(number, f"column {column.header!r}: {error}", line)
    return _measurement(column, q, "ok", params, env, number, line)


def _measurement(
    column: _Column,
    q: Quantity | None,
    status: Status,
    params: dict[str, ParamValue],
    env: _Env,
    number: int,
    line: str,
) -> Measurement:
    canonical = cast(Quantity, q or column.canonical)  # value columns always have a unit
    return Measurement(
        benchmark="",
        metric=column.metric,
        value=q.value if q else None,
        unit=canonical.unit,
        direction=cast(Direction, canonical.direction),
        device=env.device,
        params={**params, **precision_params(column.header)},
        testbed=dict(env.testbed),
        version=env.version,
        measured_at=env.measured_at,
        status=status,
        line=number,
        raw=line,
    )


def _problem(
    line: int, reason: str, raw: str, severity: Literal["error", "warning"] = "error"
) -> Problem:
    return Problem(line=line, reason=reason, raw=raw, parser=NAME, severity=severity)


# --- title line -------------------------------------------------------------------------

_TITLE_PARAMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![a-z])(?:max_?)?seq(?:uence)?_?len(?:gth)?[ _=:-]*(\d+)", re.I), "seq_len"),
    (re.compile(r"(?<![a-z])(?:batch_?size|bs)[ _=:-]*(\d+)", re.I), "batch_size"),
    (re.compile(r"(\d+)[ _-]*threads?(?![a-z])", re.I), "threads"),
    (re.compile(r"(?<![a-z])threads?[ _=:-]*(\d+)", re.I), "threads"),
)


def _line_above(doc: DocText, start: int) -> str:
    if start == 0:
        return ""
    return doc.line_text(start - 1)


def _title_params(title: str) -> dict[str, ParamValue]:
    """ "Seqlen128-data" -> {"seq_len": 128}; "bs=8 fp16" -> {"batch_size": 8, ...}."""
    params: dict[str, ParamValue] = {}
    for pattern, key in _TITLE_PARAMS:
        m = pattern.search(title)
        if m and key not in params:
            params[key] = int(m.group(1))
    params.update(precision_params(title))
    return params


# --- environment block ------------------------------------------------------------------

_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+.*$", re.M)
_BULLET = re.compile(r"^[ \t]*[-*+][ \t]+(.*?)[ \t]*$", re.M)
# Bullets without a colon: "- CUDA 9.0", "- CUDNN 7.3".
_BARE_VERSION = re.compile(r"(?i)(cuda|cudnn|tensorrt|trt|gcc|python)[ \t_-]*v?(\d[\w.]*)$")
_ENV_KEYS: dict[str, str] = {
    "测试时间": "date",
    "测试日期": "date",
    "日期": "date",
    "date": "date",
    "testdate": "date",
    "cuda": "cuda",
    "cudnn": "cudnn",
    "tensorrt": "tensorrt",
    "trt": "tensorrt",
    "paddle预测库": "version",
    "预测库": "version",
    "paddle": "version",
    "paddlecommit": "version",
    "commit": "version",
    "测试镜像": "image",
    "镜像": "image",
    "image": "image",
    "dockerimage": "image",
    "docker镜像": "image",
    "gpu": "gpu",
    "gpu型号": "gpu",
    "显卡": "gpu",
    "gcc": "gcc",
    "cpu": "cpu",
    "python": "python",
    "driver": "driver",
    "驱动": "driver",
}
_VERSION_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_HASH = re.compile(r"\b[0-9a-f]{7,40}\b")
# "Tesla P4 8G(7611MB)" -> "Tesla P4": the model ends where its memory size begins.
_GPU_MEMORY = re.compile(r"\s+\d+(?:\.\d+)?\s*[GM]i?B?\b|\s*\(")


def _environment(doc: DocText, header_start: int, cache: dict[int, _Env]) -> tuple[int, _Env]:
    """The environment block governing a table: bullets from the heading above to it."""
    window_start = max(0, header_start - CONTEXT_WINDOW)
    above = doc.text[window_start:header_start]
    heading = last_line_match(above, _HEADING, "#")
    block = window_start + (heading.end() if heading else 0)
    if block in cache:
        return block, cache[block]
    env = _Env()
    for m in _BULLET.finditer(doc.text, block, header_start):
        _read_bullet(doc, m, env)
    return block, env


def _read_bullet(doc: DocText, m: re.Match[str], env: _Env) -> None:
    content = m.group(1)
    key, colon, value = content.partition(":")
    if not colon:
        bare = _BARE_VERSION.match(content)
        if not bare:
            return
        key, value = bare.group(1), bare.group(2)
    key = re.sub(r"\s+", "", key.lower())
    key = re.sub(r"(版本|version|信息)$", "", key) or key  # "GCC版本" names the gcc
    role = _ENV_KEYS.get(key)
    value = value.strip()
    if role is None or not value:
        return
    if role == "date":
        _read_date(doc, m, value, env)
    elif role == "version":
        found = _HASH.search(value)
        env.version = found.group(0) if found else value
    elif role == "gpu":
        env.testbed["gpu"] = value
        env.device = _GPU_MEMORY.split(value, maxsplit=1)[0].strip()
    elif role in ("cuda", "cudnn", "tensorrt"):
        number = _VERSION_NUMBER.search(value)
        env.testbed[role] = number.group(0) if number else value
    else:
        env.testbed[role] = value


def _read_date(doc: DocText, m: re.Match[str], value: str, env: _Env) -> None:
    day = parse_date(value)
    if day is None:
        line = doc.line_at(m.start())
        reason = f"test date {value!r} not understood"
        env.problems.append(_problem(line, reason, m.group(0), "warning"))
        return
    env.measured_at = datetime(day.year, day.month, day.day)
