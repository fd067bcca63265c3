"""Read one document with the parsers of a kind: bytes -> text -> records -> runs.

A document is read in chunks of 4 MiB that end at a line end (ingest.text.read_chunks):
a 2 GB log costs a few chunks of memory, not its size, and a small document is a single
chunk. For each chunk one hyperscan pass (ingest.gate) tells which parsers have anything
to read, where the latency lines are, and whether the chunk needs normalising at all: an
ASCII chunk without quote markers or carriage returns is used as it is, so a log of glog
lines costs a decode, a newline index and its matches.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from ingest.gate import markers_of
from ingest.registry import gate_for, parsers_for
from ingest.runs import Run, assemble
from ingest.save import SourceInfo
from ingest.text import (
    CHUNK_BYTES,
    DocText,
    NotText,
    decode,
    normalise,
    read_chunks,
    sniff_encoding,
)
from perfboard.model import DocMeta, Found, Problem


@dataclass(slots=True)
class Parsed:
    info: SourceInfo
    found: Found
    runs: list[Run] = field(default_factory=list)


# xxh3-128: the hash only tells "same bytes again", and it runs at memory speed, where
# sha256 alone would cost a third of the time budget of a 500 MB log.
HASH_PREFIX = "xxh3-128:"


def file_hash(path: Path) -> str:
    """The content hash of a file, read in blocks."""
    hasher = xxhash.xxh3_128()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            hasher.update(block)
    return HASH_PREFIX + hasher.hexdigest()


def parse_text(doc: DocText, kind: str, present: set[str] | None = None) -> Found:
    """Run the parsers of a kind over one text (a document or a chunk of one).

    `present`: the parsers the gate found anchors for; None: ask the gate now.
    """
    if present is None:
        present = gate_for(kind).scan(doc.text).present
    found = Found()
    for name, parse in parsers_for(kind):
        if name not in present:
            continue
        before = _count(found)
        for item in parse(doc):
            if isinstance(item, Problem) and not item.parser:
                item.parser = name
            found.add(item)
        if _count(found) > before and name not in found.parsers:
            found.parsers.append(name)
    return found


def _count(found: Found) -> int:
    return (
        len(found.measurements) + len(found.phases) + len(found.profile_events) + len(found.passes)
    )


def chunk_text(
    raw: bytes | memoryview, codec: str, kind: str, meta: DocMeta, first_line: int
) -> tuple[DocText, set[str]]:
    """Decode and normalise one chunk, and learn from the gate what it holds."""
    gate = gate_for(kind)
    if codec in ("utf-8", "utf-8-sig"):
        try:
            text = str(raw, "ascii")  # most logs: nothing to decode, nothing to normalise
        except UnicodeDecodeError:
            pass
        else:
            markers = markers_of(text)
            if not markers & {"quote", "cr"}:
                seen = gate.scan(raw)  # the bytes are the text: offsets agree
                return DocText(text, meta, first_line, "utf-8", markers, seen.hits), seen.present
            text = normalise(text)
            seen = gate.scan(text)  # ASCII stays ASCII: offsets are the text's
            doc = DocText(text, meta, first_line, "utf-8", markers_of(text), seen.hits)
            return doc, seen.present
    text, encoding = decode(bytes(raw), codec)
    text = normalise(text)
    seen = gate.scan(text)
    hits = seen.hits if text.isascii() else None  # byte offsets are not str offsets
    return DocText(text, meta, first_line, encoding, markers_of(text), hits), seen.present


def read_document(
    path: Path,
    kind: str,
    meta: DocMeta,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Callable[[int], object] | None = None,
) -> Parsed:
    """Parse a file. Raises NotText (empty, binary, undecodable) and OSError.

    `progress` is told how many bytes each chunk had, as it is read (the progress bar).
    """
    size = os.path.getsize(path)
    if size == 0:
        raise NotText("empty file")
    with open(path, "rb") as fh:
        head = fh.read(65536)
        codec = sniff_encoding(head)
        if codec not in ("utf-8", "utf-8-sig") and size > chunk_bytes:
            # Multi-byte codecs cannot be cut at a byte "\n"; such logs are never this large.
            raise NotText(f"{codec} documents larger than {chunk_bytes} bytes are not supported")
        fh.seek(0)
        hasher = xxhash.xxh3_128()
        chunks = read_chunks(fh, chunk_bytes, hasher.update)
        parsed = _parse_chunks(chunks, codec, kind, meta, progress)
    if not parsed.info.n_lines:
        raise NotText("only white space")
    parsed.info.size_bytes = size
    parsed.info.content_hash = HASH_PREFIX + hasher.hexdigest()
    return parsed


def _parse_chunks(
    chunks: Iterator[memoryview],
    codec: str,
    kind: str,
    meta: DocMeta,
    progress: Callable[[int], object] | None,
) -> Parsed:
    found = Found()
    runs: list[Run] = []
    first_line = 1
    encodings: list[str] = []
    blank = True
    for number, chunk in enumerate(chunks):
        skip = 3 if number == 0 and codec == "utf-8-sig" else 0  # the BOM
        with chunk, chunk[skip:] as raw:  # released even when decoding fails
            blank = blank and not bytes(raw[:4096]).strip() and not bytes(raw).strip()
            doc, present = chunk_text(raw, codec, kind, meta, first_line)
            if progress is not None:
                progress(len(chunk))
        encodings.append(doc.encoding)
        parsed = parse_text(doc, kind, present)
        chunk_runs = assemble(doc, parsed)
        _offset_runs(parsed, chunk_runs, len(runs))
        found.extend(parsed)
        runs += chunk_runs
        first_line += doc.newline_count()
    encoding = "gb18030" if "gb18030" in encodings else (encodings[0] if encodings else codec)
    if codec == "utf-8-sig":
        encoding = "utf-8-sig"
    info = SourceInfo(meta, "", kind, 0, encoding, n_lines=0 if blank else first_line)
    return Parsed(info, found, runs)


def _offset_runs(found: Found, runs: list[Run], offset: int) -> None:
    if not offset:
        return
    for run in runs:
        run.number += offset
    for item in (*found.measurements, *found.profile_events, *found.passes):
        item.run += offset
