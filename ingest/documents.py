"""Read one document with the parsers of a kind: bytes -> text -> records -> runs.

A document is planned into chunks of 4 MiB that end at a line end (plan_chunks): a 2 GB
log costs a few chunks of memory, not its size, and a small document is a single chunk.
Each chunk is parsed on its own and put in its place afterwards (_combine), so chunks
can be parsed here, with the next one read ahead by a thread (read_ahead), or by worker
processes (worker_pool) for large documents.

For each chunk one hyperscan pass (ingest.gate) tells which parsers have anything to
read and where the latency lines are, and a few one-character tests tell whether it
needs normalising at all: an ASCII chunk without quote markers or carriage returns is
used as it is, so a log of glog lines costs a decode, a newline index and its matches.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import re
import signal
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import xxhash

from ingest import bounds, bulk
from ingest.columns import EventBlock, MeasurementBlock, PassBlock
from ingest.gate import line_markers
from ingest.registry import GENERIC, KINDS, RESULTS_KIND, gate_for, parse_fn
from ingest.runs import Contexts, Run, assemble
from ingest.save import (
    EVENT_SCHEMA,
    PASS_SCHEMA,
    Rows,
    SourceInfo,
    collector_paused,
    record_table,
)
from ingest.text import (
    CI_STAMP,
    MIXED,
    DocText,
    Empty,
    LineIndex,
    NotText,
    TextLineIndex,
    ci_log_started,
    decode_nfkc,
    normalise,
    sniff_encoding,
    without_ci_stamps_bytes,
)
from perfboard.model import DocMeta, Found, Measurement, PassApplied, Problem, ProfileEvent

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

# Chunks small enough to stay in cache and to reuse freed memory: decoding 32 MiB at a
# time runs at a quarter of the speed of 4 MiB (fresh pages fault in on every chunk).
CHUNK_BYTES = 4 * 2**20
CUT_WINDOW = 2**16
# A document up to this size keeps its text in the store (source_texts): a value's line
# is shown in its context. Comments, PR descriptions and reports are far smaller; a log
# larger than this is read again from its file, if it is still there.
KEEP_TEXT_BYTES = 2**20


@dataclass(slots=True)
class Parsed:
    info: SourceInfo
    found: Found  # its measurements are in `rows` too (and, from worker processes, only
    # there, with its profile events and passes)
    runs: list[Run]
    rows: Rows


# xxh3-128: the hash only tells "same bytes again", and it runs at memory speed, where
# sha256 alone would cost a third of the time budget of a 500 MB log. A document's hash
# is the xxh3-128 of the xxh3-128 digests of its chunks (so chunks can be hashed where
# they are parsed); the chunk plan is fixed by the file's bytes, so the hash is too.
HASH_PREFIX = "xxh3-128:"


def file_hash(path: Path) -> str:
    """The content hash of a file, read in blocks."""
    hasher = xxhash.xxh3_128()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            hasher.update(block)
    return HASH_PREFIX + hasher.hexdigest()


def document_hash(path: Path, chunk_bytes: int = CHUNK_BYTES) -> str:
    """The content hash read_document gives a file, without parsing it: an unchanged
    document is told by this alone (a read at memory speed), before any parser runs."""
    size = os.path.getsize(path)
    digests = xxhash.xxh3_128()
    with open(path, "rb") as fh:
        fd = fh.fileno()
        for start, end in plan_chunks(fd, size, chunk_bytes):
            digests.update(xxhash.xxh3_128_digest(os.pread(fd, end - start, start)))
    return HASH_PREFIX + digests.hexdigest()


def text_hash(text: str) -> str:
    """The content hash read_text gives a text (one chunk)."""
    digest = xxhash.xxh3_128_digest(text.encode("utf-8"))
    return HASH_PREFIX + xxhash.xxh3_128_hexdigest(digest)


def parse_text(doc: DocText, kind: str, present: set[str] | None = None) -> Found:
    """Run the parsers of a kind over one text (a document or a chunk of one).

    `present`: the parsers the gate found anchors for; None: ask the gate now. The
    generic table readers run last and yield to the tool parsers: a table that llama-bench
    or hyperfine printed is read by its own parser only, with the tool's meaning of each
    column (registry.GENERIC).
    """
    if present is None:
        present = gate_for(kind).scan(doc.text).present
    found = Found()
    taken: set[int] | None = None  # lines the tool parsers read, once a generic one runs
    for name in KINDS[kind]:
        if name not in present:
            continue  # not imported either, unless another document needed it
        parse = parse_fn(name)
        generic = name in GENERIC
        if generic and taken is None:
            taken = _lines_read(found)
        before = _count(found)
        # The bulk of a large log is records of one of these types: no dispatch for them.
        bulk = {
            Measurement: found.measurements.append,
            PassApplied: found.passes.append,
            ProfileEvent: found.profile_events.append,
            MeasurementBlock: found.blocks.append,
            PassBlock: found.blocks.append,
            EventBlock: found.blocks.append,
        }
        first = len(found.measurements)
        first_event = len(found.profile_events)
        firsts = (first, first_event, len(found.passes), len(found.phases))
        blocks = len(found.blocks)
        for item in parse(doc):
            if generic and taken and _overlaps(item, taken):
                continue
            append = bulk.get(type(item))
            if append is not None:
                append(item)
                continue
            if isinstance(item, Problem) and not item.parser:
                item.parser = name
            found.add(item)
        _keep_storable(found, firsts, name)
        for block in found.blocks[blocks:]:  # where this parser's own objects are
            if type(block) is MeasurementBlock:
                block.first, block.end = first, len(found.measurements)
            elif type(block) is EventBlock:
                block.first, block.end = first_event, len(found.profile_events)
        if _count(found) > before and name not in found.parsers:
            found.parsers.append(name)
    return found


def _keep_storable(found: Found, firsts: tuple[int, int, int, int], parser: str) -> None:
    """A parser's new records with a count the store cannot hold become problems of their
    lines (ingest.bounds); a milestone's oversized PR number is dropped with a warning."""
    lists = (
        (found.measurements, Measurement),
        (found.profile_events, ProfileEvent),
        (found.passes, PassApplied),
    )
    for (records, kind), first in zip(lists, firsts[:3], strict=True):
        bad = dict(bounds.out_of_range(records[first:], kind))
        if not bad:
            continue
        tail = records[first:]
        records[first:] = [r for i, r in enumerate(tail) if i not in bad]
        for i, reason in bad.items():
            found.add(Problem(tail[i].line, reason, tail[i].raw, parser))
    for phase in found.phases[firsts[3] :]:
        for milestone in phase.milestones:
            reason = bounds.milestone_out_of_range(milestone)
            if reason:
                found.add(Problem(milestone.line, reason, milestone.raw, parser, "warning"))
                milestone.pr_number = None


def _lines_read(found: Found) -> set[int]:
    """Every line a record found so far was read from (a record's raw may span lines)."""
    lines: set[int] = set()
    for block in found.blocks:  # one line a row
        lines.update(block.lines.tolist())
    for records in (found.measurements, found.profile_events, found.phases, found.passes):
        lines.update([record.line for record in records])
        # The few whose raw spans lines (a range per record cost 0.4 us, 1 % of an ingest).
        for record in [record for record in records if "\n" in record.raw]:
            lines.update(range(record.line, record.line + record.raw.count("\n") + 1))
    return lines


def _overlaps(item: object, taken: set[int]) -> bool:
    line = getattr(item, "line", 0)
    if isinstance(item, Problem):  # a table's header or rule is a line or two above its rows
        return any(n in taken for n in range(line - 2, line + 3))
    return line in taken


def _count(found: Found) -> int:
    return (
        len(found.measurements)
        + sum(block.table.num_rows for block in found.blocks)
        + len(found.phases)
        + len(found.profile_events)
        + len(found.passes)
        + len(found.claims)  # a PR description's claims: read by "claims", not by "none"
    )


def chunk_text(
    raw: bytes | memoryview,
    codec: str,
    kind: str,
    meta: DocMeta,
    first_line: int,
    line_index: LineIndex | None = None,
) -> tuple[DocText, set[str]]:
    """Decode and normalise one chunk, and learn from the gate what it holds.

    `line_index`: the newline index of `raw`, used when the text turns out to be the
    bytes themselves.
    """
    gate = gate_for(kind)
    if codec in ("utf-8", "utf-8-sig"):
        unstamped = without_ci_stamps_bytes(raw)
        if unstamped is not raw:  # a CI job's log: its lines as the tools wrote them
            raw, line_index = unstamped, LineIndex(unstamped)
        try:
            text = str(raw, "ascii")  # most logs: nothing to decode, nothing to normalise
        except UnicodeDecodeError:
            pass
        else:
            newlines = line_index.positions if line_index is not None else None
            markers = line_markers(text, raw, newlines)
            if not markers & {"quote", "cr"}:
                seen = gate.scan(raw)  # the bytes are the text: offsets agree
                markers |= seen.markers
                doc = DocText(text, meta, first_line, "utf-8", markers, seen.hits, line_index, raw)
                return doc, seen.present
            # A log from Windows (CRLF) or a quoted one: ASCII stays ASCII, so the text is
            # still its own bytes, indexed anew, and the bulk readers take it (a chunk of
            # CRLF tester lines: 0.54 s read line by line, 0.11 s as LF).
            text = normalise(text)
            encoded = text.encode("ascii")
            index = LineIndex(encoded)
            seen = gate.scan(encoded)
            markers = line_markers(text, encoded, index.positions) | seen.markers
            doc = DocText(text, meta, first_line, "utf-8", markers, seen.hits, index, encoded)
            return doc, seen.present
    # normalise's steps, its two searches for line ends and quote markers answered by the
    # markers the chunk needs anyway (each search costs 3 ms a 4 MiB chunk): NFKC first,
    # as the markers must be the normalised text's (it makes ">" of "＞").
    text, encoding, encoded, offsets = decode_nfkc(raw, codec)
    markers = line_markers(encoded)
    if markers & {"quote", "cr"}:
        text = normalise(text)  # NFKC again changes nothing
        encoded = text.encode("utf-8", "surrogatepass")
        markers = line_markers(encoded)
        offsets = None
    seen = gate.scan(encoded)
    markers |= seen.markers
    if text.isascii():  # normalising left ASCII ("…" made "..."): its own bytes, indexed
        index = LineIndex(encoded)
        doc = DocText(text, meta, first_line, encoding, markers, seen.hits, index, encoded)
        return doc, seen.present
    if offsets is None:  # the gate's byte offsets are not the text's
        return DocText(text, meta, first_line, encoding, markers), seen.present
    # The text's offsets of the gate's hits and of its newlines, from the bytes' (the
    # newlines of `raw` when normalising moved none): no UTF-32 copy of it to index.
    hits = {name: offsets(found).tolist() for name, found in seen.hits.items()}
    same = line_index is not None and len(encoded) == len(raw)
    newlines = (line_index if same else LineIndex(encoded)).positions
    index = TextLineIndex(text, first_line, offsets(newlines))
    return DocText(text, meta, first_line, encoding, markers, hits, index), seen.present


@dataclass(slots=True)
class ChunkResult:
    """What one chunk gave, with lines and runs counted from its own start.

    From a worker process, the measurements, runs, profile events and passes come as
    `rows` (Arrow tables) and found holds none of them.
    """

    found: Found
    runs: list[Run]
    newlines: int
    encoding: str
    blank: bool
    digest: bytes
    size: int
    rows: Rows | None = None
    text: str | None = None  # the chunk's text, when it is small enough to keep

    @property
    def run_count(self) -> int:
        return self.rows.runs.num_rows if self.rows is not None else len(self.runs)


# Where a run of one parser's lines begins: a cut just before one splits nothing. A
# predictor's pass sequence restarts its order at ir_graph_build_pass (cut inside, the
# second half would be a run of its own, its orders from 0); trtexec prints "&&&& RUNNING"
# before a run; vLLM's result block opens with its banner.
# The lines below may follow a CI runner's timestamp (ingest.text.CI_STAMP): the cuts are
# planned on the file's bytes, before chunk_text removes the stamps. These patterns are
# compiled where they are used, once (re's cache keeps them): only a document of more than
# one chunk is cut, and compiling them cost 3 ms of every ingest's start-up.
_STAMP = rb"(?:" + CI_STAMP.encode() + rb")?"
_RUN_START = (
    rb"\n(?="
    + _STAMP
    + rb"(?:--- Running analysis \[ir_graph_build_pass\]|&&&& RUNNING "
    + rb"|=+ Serving Benchmark Result))"
)
# Text every run start holds: a window without any of them needs no pass of _RUN_START
# (0.45 ms a 64 KiB window; a 500 MB log is cut 120 times, by the process that feeds the
# workers).
_RUN_START_WORDS = (b"--- Running analysis [", b"&&&& RUNNING ", b" Serving Benchmark Result")
# The first rule of an inference demo's report, whose lines its summary reads, behind any
# log prefix: found by literal search (a pattern that looked past each line's prefix made
# a cut's window cost 2.9 ms instead of 0.8).
_REPORT_RULES = (b" Model info ---", b" REPORT START ---")
# A line read with those above it, never the first of a chunk: a pass's subgraph count,
# the second and third lines of Paddle's PrintTime, and a demo's QPS under its latency
# (ingest.parsers.latency).
_CONTINUES = (
    _STAMP
    + rb"(?:[IWEF]\d{4} [^\n\]]*\] )?"
    + rb"(?:--- [ \t]?detected \d|=+ (?:batch[ _]size: \d+, iterations|batch latency:)|QPS: \d"
    + rb"|, sample latency:)"
)
# PrintTime's first two lines. The threads of one test print theirs side by side, so a
# first line right below either of them is inside the same block of records.
_PRINT_TIME_HEAD = (
    _STAMP + rb"(?:[IWEF]\d{4} [^\n\]]*\] )?=+ (?:threads|num of threads|batch[ _]size): \d"
)
_LOOK_PAST = 4096  # bytes past a cut read to tell what line follows it
# A table row: a markdown or box-drawn row, a CSV or TSV row (three separators or more,
# not a JSON line), or a line of four numbers or more that are two fifths of its fields,
# not a glog line (a profiler, nvprof or nsys row: "thread0::fc  255459  24269.7
# 12361.669096 (0.509346) ...").
_NUMBER_FIELD = re.compile(
    rb"(?<!\S)\(?[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:e[-+]?\d+)?%?(?:[mun]?s|[KMG]i?B)?\)?(?!\S)"
)
_GLOG_PREFIX = re.compile(rb"[IWEF]\d{4} \d\d:\d\d:\d\d")
_STAMPED = CI_STAMP.encode()
# A table longer than this is cut anyway: its rows after the cut are read without its
# header (they become problems or are missed, as in a table pasted without one). A CSV
# GPU trace of 128 MiB is read as one chunk (scaled from 100 MB: 750,000 kernels, 1.1 GB).
MAX_TABLE_BYTES = 128 * 2**20


def plan_chunks(
    fd: int, size: int, chunk_bytes: int = CHUNK_BYTES, table_cuts: list[int] | None = None
) -> list[tuple[int, int]]:
    """Byte ranges of a document, each ending at a line end.

    A cut prefers, in the last 64 KiB before the nominal end: a blank line, so that a
    table or a report block is not split between two chunks; else the start of a run of
    lines (_RUN_START, or a demo report's first rule: _REPORT_RULES); else the last line
    end that no continuation line follows (_CONTINUES); failing all, the last line end
    before it; a line longer than the window runs on to its own end; a cut between two
    rows of a table moves to the table's end (up to MAX_TABLE_BYTES; the offsets of cuts
    made inside a longer table are added to `table_cuts`). Planned up front (one 64 KiB
    read per cut, a table's rows read once more), the ranges can be read in any order and
    by any process.
    """
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < size:
        nominal = start + chunk_bytes
        if nominal >= size:
            ranges.append((start, size))
            break
        window_start = max(start, nominal - CUT_WINDOW)
        window = os.pread(fd, min(size, nominal + _LOOK_PAST) - window_start, window_start)
        cut = _cut_in(window, nominal - window_start)
        if cut is None:
            end = _next_line_end(fd, nominal, size)
        elif _inside_table(window, cut):
            end, too_long = _table_end(fd, window_start + cut, size)
            if too_long and table_cuts is not None:
                table_cuts.append(end)
        else:
            end = window_start + cut
        ranges.append((start, end))
        start = end
    return ranges


def _cut_in(window: bytes, limit: int) -> int | None:
    """Where in `window` a chunk best ends (after a newline, before `limit`), or None."""
    blank = window.rfind(b"\n\n", 0, limit)
    if blank >= 0:
        return blank + 2
    run_starts = (
        [m.start() for m in re.finditer(_RUN_START, window) if m.start() < limit]
        if any(word in window for word in _RUN_START_WORDS)
        else []
    )
    for rule in _REPORT_RULES:  # the line end before the line of a report's rule
        if (at := window.rfind(rule, 0, limit)) >= 0 and (
            line_end := window.rfind(b"\n", 0, at)
        ) >= 0:
            run_starts.append(line_end)
    if run_starts:
        return max(run_starts) + 1
    newline = window.rfind(b"\n", 0, limit)
    first = newline
    while newline >= 0 and _continues(window, newline):
        newline = window.rfind(b"\n", 0, newline)
    if newline >= 0:
        return newline + 1
    return first + 1 if first >= 0 else None


def _continues(window: bytes, newline: int) -> bool:
    """Whether the line after `newline` is read with the lines above it (no cut before it)."""
    if re.compile(_CONTINUES).match(window, newline + 1):
        return True
    above = window.rfind(b"\n", 0, newline) + 1
    head = re.compile(_PRINT_TIME_HEAD)
    return bool(head.match(window, newline + 1) and head.match(window, above))


def _is_row(line: bytes) -> bool:
    stamp = re.match(_STAMPED, line)
    stripped = line[stamp.end() :].lstrip() if stamp else line.lstrip()
    if stripped[:1] == b"|" or stripped[:2] in (b"\xe2\x94", b"\xe2\x95"):  # | or box drawing
        return True
    if _GLOG_PREFIX.match(stripped):
        return False  # a log line, whatever it prints ("Run 5009 samples, ... 6.5 ms")
    if stripped[:1] not in (b"{", b"[") and (line.count(b",") >= 3 or line.count(b"\t") >= 3):
        return True
    numbers = len(_NUMBER_FIELD.findall(line, 0, 4096))
    return numbers >= 4 and numbers * 5 >= len(line[:4096].split()) * 2


def _inside_table(window: bytes, cut: int) -> bool:
    """True when the lines on both sides of a cut are rows of one table."""
    before = window[window.rfind(b"\n", 0, cut - 1) + 1 : cut - 1]
    after_end = window.find(b"\n", cut)
    after = window[cut : after_end if after_end >= 0 else len(window)]
    return bool(before.strip()) and bool(after.strip()) and _is_row(before) and _is_row(after)


def _table_end(fd: int, pos: int, size: int) -> tuple[int, bool]:
    """Where the table cut at `pos` ends: the start of the first line at or after `pos`
    that is no table row, so that a table is not split between chunks (its rows after a
    cut would have no header to be read by); beyond MAX_TABLE_BYTES, `pos` itself and
    True."""
    at = pos
    rest = b""
    while at < size:
        if at - pos >= MAX_TABLE_BYTES:
            return pos, True
        block = rest + os.pread(fd, CUT_WINDOW, at + len(rest))
        lines = block.split(b"\n")
        rest = lines.pop()  # a line that goes on past the block
        if at + len(block) >= size:
            lines.append(rest)
            rest = b""
        for line in lines:
            if not line.strip() or not _is_row(line):
                return at, False
            at += len(line) + 1
        if len(rest) > 2**20:
            return at, False  # a line of a megabyte is no table row: the cut goes before it
    return size, False


def _next_line_end(fd: int, pos: int, size: int) -> int:
    while pos < size:
        block = os.pread(fd, CUT_WINDOW, pos)
        newline = block.find(b"\n")
        if newline >= 0:
            return pos + newline + 1
        pos += len(block)
    return size


def parse_chunk(chunk: Chunk, codec: str, kind: str, meta: DocMeta) -> ChunkResult:
    """Parse one chunk on its own (lines from 1, runs from 0); _combine puts it in place.

    In a worker process (worker_pool) the measurements go back as Arrow tables: sent as
    objects they cost as much to pickle as to parse (7 us a measurement each way).
    """
    raw = chunk.raw
    blank = not bytes(raw[:4096]).strip() and not bytes(raw).strip()
    doc, present = chunk_text(raw, codec, kind, meta, 1, chunk.lines)
    found = parse_text(doc, kind, present)
    contexts = Contexts(doc)
    rows = None
    if found.blocks and bulk.stays_columns(doc, found, contexts):
        rows, runs = bulk.assemble(doc, found, contexts), []
    else:
        bulk.materialise(found)
        runs = assemble(doc, found, contexts)
    kept = doc.text if len(raw) <= KEEP_TEXT_BYTES else None
    return ChunkResult(
        found, runs, doc.newline_count(), doc.encoding, blank, chunk.digest, len(raw), rows, kept
    )


@dataclass(slots=True)
class Chunk:
    """A chunk as read: its bytes (a view into a read-ahead buffer), hash, newline index."""

    raw: memoryview
    digest: bytes
    lines: LineIndex


def _read_range(fd: int, start: int, end: int, codec: str, buffer: bytearray) -> Chunk:
    """Read one planned range into `buffer` (big enough): its bytes, hash, newline index.

    The hash covers every byte of the range (a BOM too); the chunk's bytes start after
    a BOM.
    """
    with memoryview(buffer) as whole:
        view = whole[: end - start]
    got = os.preadv(fd, [view], start)
    digest = xxhash.xxh3_128_digest(view[:got])
    skip = 3 if start == 0 and codec == "utf-8-sig" else 0
    raw = view[skip:got]
    return Chunk(raw, digest, LineIndex(raw))


def _fitted(buffer: bytearray, size: int) -> bytearray:
    # A new buffer, not a resized one: views of the old one may still be alive.
    return buffer if len(buffer) >= size else bytearray(size)


def read_ahead(path: Path, ranges: list[tuple[int, int]], codec: str) -> Iterator[Chunk]:
    """The planned chunks in order, each read, hashed and indexed by a thread while the
    one before it is parsed.

    preadv, xxh3 and numpy release the GIL, so on two cores the reading costs little
    beside the parsing. Two buffers take turns, each reused: a fresh 4 MiB object per
    chunk would pay its page faults every time.
    """
    buffers = [bytearray(), bytearray()]

    def read(index: int) -> Chunk:
        start, end = ranges[index]
        buffers[index % 2] = _fitted(buffers[index % 2], end - start)
        return _read_range(fd, start, end, codec, buffers[index % 2])

    if len(ranges) <= 1:  # nothing to read ahead of: no thread (4 ms of imports to start)
        with open(path, "rb") as fh:
            fd = fh.fileno()
            yield from (read(index) for index in range(len(ranges)))
        return
    from concurrent.futures import ThreadPoolExecutor

    with open(path, "rb") as fh, ThreadPoolExecutor(1, "read-ahead") as reader:
        fd = fh.fileno()
        pending = reader.submit(read, 0) if ranges else None
        for index in range(len(ranges)):
            assert pending is not None
            chunk = pending.result()
            # The next read goes to the other buffer: this chunk's stays untouched
            # until the caller asks for the one after.
            pending = reader.submit(read, index + 1) if index + 1 < len(ranges) else None
            yield chunk


def read_document(
    path: Path,
    kind: str,
    meta: DocMeta,
    chunk_bytes: int | None = None,
    progress: Callable[[int], object] | None = None,
    pool: Executor | None = None,
) -> Parsed:
    """Parse a file. Raises NotText (empty, binary, undecodable) and OSError.

    `chunk_bytes`: CHUNK_BYTES unless given. `progress` is told the size of each chunk as
    it is read (the progress bar). With a `pool` (worker_pool), a document of many chunks
    is parsed by the pool's processes, which send their measurements back as Arrow
    tables; the stored result is the same.
    """
    plan = _Plan.of(path, meta, chunk_bytes or CHUNK_BYTES)
    with collector_paused():  # its records are acyclic (save.collector_paused)
        parsed = _combine(plan.results(kind, pool), plan.codec, kind, plan.meta, progress)
    return plan.finished(parsed)


@dataclass(slots=True)
class _Plan:
    """How a file is read: its encoding, its chunks, and the tables cut between two."""

    path: Path
    size: int
    codec: str
    meta: DocMeta
    ranges: list[tuple[int, int]]
    cut_tables: list[Problem]

    @classmethod
    def of(cls, path: Path, meta: DocMeta, chunk_bytes: int) -> _Plan:
        size = os.path.getsize(path)
        if size == 0:
            raise Empty("empty file")
        with open(path, "rb") as fh:
            head = os.pread(fh.fileno(), 65536, 0)
            codec = sniff_encoding(head)
            started = ci_log_started(head) if meta.created_at is None else None
            if started is not None:  # a CI job's log, and no date given: dated by its first
                meta = replace(meta, created_at=started)
            if codec not in ("utf-8", "utf-8-sig") and size > chunk_bytes:
                # Multi-byte codecs cannot be cut at a byte "\n"; such logs are never this large.
                raise NotText(
                    f"{codec} documents larger than {chunk_bytes} bytes are not supported"
                )
            table_cuts: list[int] = []
            ranges = plan_chunks(fh.fileno(), size, chunk_bytes, table_cuts)
            cut_tables = [_cut_table(fh.fileno(), offset) for offset in table_cuts]
        return cls(path, size, codec, meta, ranges, cut_tables)

    def results(
        self, kind: str, pool: Executor | None, ahead: int | None = None
    ) -> Iterator[ChunkResult]:
        """Each chunk parsed, in order: by the pool's processes when there are many (at
        most `ahead` of them parsed and not yet taken, when given), else here."""
        if pool is not None and len(self.ranges) >= PARALLEL_MIN_CHUNKS:
            tasks = [(str(self.path), s, e, self.codec, kind, self.meta) for s, e in self.ranges]
            if ahead is None:
                return pool.map(_parse_range_to_rows, *zip(*tasks, strict=True))
            return _in_order(pool, tasks, ahead)
        chunks = read_ahead(self.path, self.ranges, self.codec)
        return (parse_chunk(chunk, self.codec, kind, self.meta) for chunk in chunks)

    def finished(self, parsed: Parsed) -> Parsed:
        if not parsed.info.n_lines:
            raise Empty("only white space")
        parsed.info.size_bytes = self.size
        parsed.found.problems.extend(self.cut_tables)
        return parsed


def _in_order(
    pool: Executor, tasks: list[tuple[str, int, int, str, str, DocMeta]], ahead: int
) -> Iterator[ChunkResult]:
    """The tasks' results in order, with at most `ahead` of them handed to the pool and
    not yet taken: what waits for the store to take it is a few chunks' rows, not the
    whole document's (pool.map hands every task in at once)."""
    pending: deque[Future[ChunkResult]] = deque()
    queued = iter(tasks)
    try:
        for task in itertools.islice(queued, ahead):
            pending.append(pool.submit(_parse_range_to_rows, *task))
        while pending:
            result = pending.popleft().result()
            task = next(queued, None)
            if task is not None:
                pending.append(pool.submit(_parse_range_to_rows, *task))
            yield result
    finally:  # the reader stopped (a failed write): the rest is not parsed
        for future in pending:
            future.cancel()


# A document of at least this many chunks (64 MiB, as PARALLEL_MIN_CHUNKS) is stored as it
# is read (stream_document): its rows are never all held at once.
STREAM_MIN_CHUNKS = 16
# A streamed document's rows go to the store once this many bytes of them are read (in
# Arrow: a tester line's row is 251 bytes, 111 of them its line; counted in bytes, not
# rows, so that rows of long lines hold no more). A part is held while it is read and
# again while DuckDB takes it in, so with the writer's memory bound (perfboard.db) it sets
# what the store's writing holds: over a 2 GB log of tester lines (18 M rows, parts of
# about 530,000) the process sat at 0.6-0.96 GB, not growing (1.68 GB at 1 GB before
# both). Parts of 64 MiB held no less at 300 MB. The price: a part written while the
# workers parse competes with them for the cores (the 100 MB log's first part went in at
# 2.5x the time a row of its last took), so a 100 MB log of tester lines, two parts
# rather than one, takes 7-10 % longer. Writing from a thread of its own did not help.
STREAM_BYTES = 128 << 20
# Chunks each worker may have parsed ahead of the store (their rows held meanwhile).
AHEAD = 4


def streams(path: Path) -> bool:
    """Whether a file is large enough to be stored as it is read (stream_document)."""
    return path.stat().st_size >= STREAM_MIN_CHUNKS * CHUNK_BYTES


@dataclass(slots=True)
class Streamed:
    """A document read chunk by chunk: `parts` yields its rows (measurements, runs,
    profile events and passes) a few chunks at a time, in place, as they are read;
    `finish`, once they are all read, the rest (its source row, its records that are not
    rows) as a Parsed whose rows are empty. Raises what read_document raises."""

    parts: Iterator[Rows]
    finish: Callable[[], Parsed]


def stream_document(
    path: Path,
    kind: str,
    meta: DocMeta,
    progress: Callable[[int], object] | None = None,
    pool: Executor | None = None,
) -> Streamed:
    """read_document, for a caller that stores each part as it comes (save.save_streamed):
    what is held at a time is a few chunks' rows and the pool's chunks read ahead."""
    plan = _Plan.of(path, meta, CHUNK_BYTES)
    combined = _Combined(plan.codec, progress)

    def parts() -> Iterator[Rows]:
        waiting: list[tuple[Rows, int, int]] = []
        held = 0
        for chunk in plan.results(kind, pool, ahead=AHEAD * _cores()):
            if chunk.rows is None:  # parsed here: its objects as a worker sends them
                chunk = _packed(chunk)
            rows, lines, runs = combined.add(chunk)
            waiting.append((rows, lines, runs))
            held += rows.nbytes
            if held >= STREAM_BYTES:
                yield Rows.placed(waiting)
                waiting, held = [], 0
        if waiting:
            yield Rows.placed(waiting)

    def finish() -> Parsed:
        info = combined.info(plan.meta, kind)
        return plan.finished(Parsed(info, combined.found, [], Rows.of([], [])))

    return Streamed(parts(), finish)


def _cut_table(fd: int, offset: int) -> Problem:
    """The problem of a cut made inside a table longer than MAX_TABLE_BYTES: its line."""
    newlines = sum(
        os.pread(fd, min(CHUNK_BYTES, offset - at), at).count(b"\n")
        for at in range(0, offset, CHUNK_BYTES)
    )
    reason = (
        f"a table longer than {MAX_TABLE_BYTES // 2**20} MiB is read in parts from here:"
        " its rows below may be missed or read without its header; split the file"
    )
    return Problem(newlines + 1, reason, parser="ingest")


def read_text(text: str, kind: str, meta: DocMeta) -> Parsed:
    """A document that is text already (a GitHub comment), read the way a file is.

    Raises NotText when there is nothing but white space.
    """
    raw = text.encode("utf-8")
    if not raw.strip():
        raise Empty("empty document")
    chunk = Chunk(memoryview(raw), xxhash.xxh3_128_digest(raw), LineIndex(raw))
    with collector_paused():  # its records are acyclic (save.collector_paused)
        result = parse_chunk(chunk, "utf-8", kind, meta)
        parsed = _combine(iter([result]), "utf-8", kind, meta, None)
    parsed.info.size_bytes = len(raw)
    return parsed


def _combine(
    results: Iterator[ChunkResult],
    codec: str,
    kind: str,
    meta: DocMeta,
    progress: Callable[[int], object] | None,
) -> Parsed:
    """Chunks back into one document: lines and runs shifted to their place, in order."""
    combined = _Combined(codec, progress)
    # Each chunk's rows: as tables (a worker's, a block's) still to be moved on by its
    # (lines, runs), or as its objects and runs, moved on by _shift.
    parts = [combined.add(chunk) for chunk in results]
    rows = Rows.placed([p if isinstance(p[0], Rows) else (Rows.of(*p), 0, 0) for p in parts])
    return Parsed(combined.info(meta, kind), combined.found, combined.runs, rows)


class _Combined:
    """A document's chunks as they come, in order: each moved to its place (its lines and
    runs after those of the chunks before it), and what is known of the whole so far."""

    def __init__(self, codec: str, progress: Callable[[int], object] | None) -> None:
        self.codec = codec
        self.progress = progress
        self.found = Found()
        self.runs: list[Run] = []
        self.run_count = 0
        self.first_line = 1
        self.encodings: list[str] = []
        self.digests = xxhash.xxh3_128()
        self.blank = True
        self.texts: list[str | None] = []

    def add(
        self, chunk: ChunkResult
    ) -> tuple[Rows, int, int] | tuple[list[Measurement], list[Run]]:
        """Take one chunk; returns its rows, as tables with the (lines, runs) to move them
        on by, or as its objects and runs, moved already."""
        chunk_runs = chunk.run_count
        _shift(chunk, self.first_line - 1, self.run_count)
        part: tuple[Rows, int, int] | tuple[list[Measurement], list[Run]]
        if chunk.rows is not None:
            part = (chunk.rows, self.first_line - 1, self.run_count)
        else:
            part = (chunk.found.measurements, chunk.runs)
        self.run_count += chunk_runs
        self.found.extend(chunk.found)
        self.runs += chunk.runs
        self.first_line += chunk.newlines
        self.encodings.append(chunk.encoding)
        self.digests.update(chunk.digest)
        self.blank = self.blank and chunk.blank
        self.texts.append(chunk.text)
        if self.progress is not None:
            self.progress(chunk.size)
        return part

    def info(self, meta: DocMeta, kind: str) -> SourceInfo:
        """The document's source row as far as its chunks tell (not its size)."""
        # One chunk that needed the fallback makes it the document's encoding.
        fallback = [e for e in (MIXED, "gb18030") if e in self.encodings]
        encoding = (
            fallback[0] if fallback else (self.encodings[0] if self.encodings else self.codec)
        )
        if self.codec == "utf-8-sig":
            encoding = "utf-8-sig"
        info = SourceInfo(meta, HASH_PREFIX + self.digests.hexdigest(), kind, 0, encoding)
        info.n_lines = 0 if self.blank else self.first_line
        if len(self.texts) == 1:  # a document of one chunk, small enough (ChunkResult.text)
            info.text = self.texts[0]
        return info


def _shift(chunk: ChunkResult, lines: int, runs: int) -> None:
    """Move a chunk's records from its own line and run numbers to the document's."""
    found = chunk.found
    if runs:
        for run in chunk.runs:
            run.number += runs
    if lines:
        for run in chunk.runs:
            run.first_line += lines
    if runs or lines:  # the first chunk is in its place already
        for item in (*found.measurements, *found.profile_events, *found.passes):
            item.run += runs
            item.line += lines
    for block in found.blocks:
        block.shift(lines, runs)
    if lines:
        for claim in found.claims:
            claim.line += lines
        for problem in found.problems:
            if problem.line > 0:
                problem.line += lines
        for phase in found.phases:
            phase.line += lines
            for milestone in phase.milestones:
                milestone.line += lines


# Below this many chunks (64 MiB) a document is parsed in this process: starting work in
# a pool costs more than it saves.
PARALLEL_MIN_CHUNKS = 16

_buffer = bytearray()  # a worker process's read buffer, reused for every chunk it reads


def _parse_range_to_rows(
    path: str, start: int, end: int, codec: str, kind: str, meta: DocMeta
) -> ChunkResult:
    """A worker's task: read one planned range, parse it, and pack what goes back.

    Measurements, runs, profile events and passes go back as Arrow tables (a few buffers
    to pickle); the other records are few. The bytes are read into a buffer the process keeps.
    """
    global _buffer
    _buffer = _fitted(_buffer, end - start)
    with open(path, "rb") as fh:
        chunk = _read_range(fh.fileno(), start, end, codec, _buffer)
    with collector_paused():  # its records are acyclic (save.collector_paused)
        return _packed(parse_chunk(chunk, codec, kind, meta))


def _packed(result: ChunkResult) -> ChunkResult:
    """A worker's chunk result with its records as Arrow tables (_parse_range_to_rows)."""
    found = result.found
    if result.rows is None:
        result.rows = Rows.of(found.measurements, result.runs)
    events = record_table(found.profile_events, EVENT_SCHEMA)
    if result.rows.events is not None:  # a block's, and the objects' of other tables
        events = pa.concat_tables([result.rows.events, events])
    result.rows.events = events
    passes = record_table(found.passes, PASS_SCHEMA)
    if result.rows.passes is not None:  # a block's, and the objects' (none, or a few)
        passes = pa.concat_tables([result.rows.passes, passes])
    result.rows.passes = passes
    found.measurements, found.profile_events, found.passes, found.blocks = [], [], [], []
    result.runs = []
    result.text = None  # a document of many chunks: its text is not kept
    return result


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
    """A worker's first act: ask Linux to kill it when the ingest that forked it dies.

    A worker waits on its task queue for ever: an ingest killed with SIGKILL (the OOM
    killer, kill -9) would otherwise leave its workers behind, each holding its memory.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: no such request to make
        return
    if os.getppid() != parent:  # the ingest died before the request was made
        os._exit(1)


def _cores() -> int:
    """The cores this process may run on (its affinity, where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@contextmanager
def worker_pool(paths: list[Path], kind: str = "auto") -> Iterator[Executor | None]:
    """Processes to parse large documents with, when there are any and cores to spare.

    Forked at once, before the caller opens the store: then no DuckDB thread is copied
    into a worker. What every chunk needs (the compiled anchor gate, Arrow) is made
    ready first, so each worker inherits it instead of building it again. The parsers
    are not: each worker imports those its gate finds anchors for, side by side with the
    other (importing every parser of the kind first took 0.06-0.08 s of every large
    document, most of the gap between a sparse 100 MB log and its 1 MB start-up).
    """
    cores = _cores()
    threshold = PARALLEL_MIN_CHUNKS * CHUNK_BYTES
    large = any(p.is_file() and p.stat().st_size >= threshold for p in paths)
    if not large or cores < 2:
        yield None
        return
    if kind != RESULTS_KIND:
        gate_for(kind).compile()
    Rows.of([], [])
    import multiprocessing  # with concurrent.futures, 4 ms: for large documents only
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        max_workers=cores,
        mp_context=context,
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        list(pool.map(abs, range(cores)))  # start them all now, before the store opens
        yield pool
