"""Read one document with the parsers of a kind: bytes -> text -> records -> runs.

Small documents are read whole. A large log is memory-mapped and read in chunks of
32 MiB that end at a line end (ingest.text.split_chunks), so a 2 GB log costs a few
chunks of memory, not its size. In each chunk a parser runs only if one of its anchors
occurs there, so a log of latency lines pays for the latency parser alone.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from ingest.registry import gate_for, parsers_for
from ingest.runs import Run, assemble
from ingest.save import SourceInfo
from ingest.text import (
    CHUNK_BYTES,
    DocText,
    NotText,
    decode,
    normalise,
    sniff_encoding,
    split_chunks,
)
from perfboard.model import DocMeta, Found, Problem


@dataclass(slots=True)
class Parsed:
    info: SourceInfo
    found: Found
    runs: list[Run] = field(default_factory=list)


def content_hash(data: bytes | mmap.mmap) -> str:
    # xxh3-128: the hash only tells "same bytes again", and it runs at memory speed,
    # where sha256 alone would cost a third of the time budget of a 500 MB log.
    return "xxh3-128:" + xxhash.xxh3_128_hexdigest(data)


def parse_text(doc: DocText, kind: str, raw: bytes | None = None) -> Found:
    """Run the parsers of a kind over one text (a document or a chunk of one).

    `raw`: the bytes the text was decoded from; when the text is ASCII the anchor gate
    scans them instead of encoding the text again (normalising only removes characters,
    so every anchor of the text is also in the bytes).
    """
    found = Found()
    text = doc.text
    present = gate_for(kind).present(text, raw if raw is not None and text.isascii() else None)
    for name, parse in parsers_for(kind):
        if name not in present:
            continue
        before = len(found.measurements) + len(found.phases)
        before += len(found.profile_events) + len(found.passes)
        for item in parse(doc):
            if isinstance(item, Problem) and not item.parser:
                item.parser = name
            found.add(item)
        after = len(found.measurements) + len(found.phases)
        after += len(found.profile_events) + len(found.passes)
        if after > before and name not in found.parsers:
            found.parsers.append(name)
    return found


def read_document(path: Path, kind: str, meta: DocMeta, chunk_bytes: int = CHUNK_BYTES) -> Parsed:
    """Parse a file. Raises NotText (empty, binary, undecodable) and OSError."""
    size = os.path.getsize(path)
    if size == 0:
        raise NotText("empty file")
    with open(path, "rb") as fh:
        if size <= chunk_bytes:
            data = fh.read()
            return _parse_whole(data, kind, meta)
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _parse_chunked(mm, kind, meta, chunk_bytes)


def _parse_whole(data: bytes, kind: str, meta: DocMeta) -> Parsed:
    if not data.strip():
        raise NotText("only white space")
    text, encoding = decode(data, sniff_encoding(data[:65536]))
    doc = DocText(normalise(text), meta, encoding=encoding)
    found = parse_text(doc, kind, data if encoding.startswith("utf-8") else None)
    runs = assemble(doc, found)
    info = SourceInfo(
        meta, content_hash(data), kind, len(data), encoding, n_lines=text.count("\n") + 1
    )
    return Parsed(info, found, runs)


def _parse_chunked(mm: mmap.mmap, kind: str, meta: DocMeta, chunk_bytes: int) -> Parsed:
    codec = sniff_encoding(mm[:65536])
    if codec not in ("utf-8", "utf-8-sig"):
        # Multi-byte codecs cannot be cut at a byte "\n"; such logs are never this large.
        raise NotText(f"{codec} documents larger than {chunk_bytes} bytes are not supported")
    found = Found()
    runs: list[Run] = []
    first_line = 1
    encodings = set()
    for start, end in split_chunks(mm, chunk_bytes):
        data = mm[start:end]
        if start == 0 and codec == "utf-8-sig":
            data = data[3:]
        text, used = decode(data, "utf-8")
        encodings.add(used)
        doc = DocText(normalise(text), meta, first_line=first_line, encoding=used)
        chunk = parse_text(doc, kind, data if used == "utf-8" else None)
        chunk_runs = assemble(doc, chunk)
        _offset_runs(chunk, chunk_runs, len(runs))
        found.extend(chunk)
        runs += chunk_runs
        first_line += data.count(b"\n")
    encoding = "gb18030" if "gb18030" in encodings else "utf-8"
    info = SourceInfo(meta, content_hash(mm), kind, len(mm), encoding, n_lines=first_line)
    return Parsed(info, found, runs)


def _offset_runs(found: Found, runs: list[Run], offset: int) -> None:
    if not offset:
        return
    for run in runs:
        run.number += offset
    for item in (*found.measurements, *found.profile_events, *found.passes):
        item.run += offset
