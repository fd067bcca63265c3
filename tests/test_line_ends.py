"""A log written on Windows (CRLF line ends) reads as the same log with LF ends, and as fast.

Its chunks were normalised to LF and then read line by line: the bulk readers want a text
that is its own bytes with a newline index, which the normalised ASCII text still is. A
chunk of CRLF tester lines took 0.54 s against 0.11 s for LF.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ingest.columns import EventBlock, MeasurementBlock, PassBlock
from ingest.documents import chunk_text, parse_text, read_document
from ingest.text import LineIndex
from perfboard.model import DocMeta
from scripts.bench_ingest import _profile_rows
from tests.conftest import real_text_documents, stored_records


@pytest.mark.parametrize("path", real_text_documents(), ids=lambda p: p.name)
def test_every_real_document_reads_the_same_with_crlf_line_ends(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    windows = tmp_path / path.name
    windows.write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    meta = DocMeta(uri=path.name)
    plain = read_document(path, "auto", meta)
    crlf = read_document(windows, "auto", meta)
    assert stored_records(crlf.found) == stored_records(plain.found)
    assert crlf.info.n_lines == plain.info.n_lines


def test_a_crlf_chunk_is_read_in_bulk() -> None:
    tester = (
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345]"
        " Run 5010 samples, average latency: 6.92849 ms per sample.\r\n"
    )
    passes = "--- Running analysis [ir_graph_build_pass]\r\n--- Running IR pass [fc_fuse_pass]\r\n"
    rng = random.Random(1)
    profiles = "".join("\n" + "".join(_profile_rows(rng, 20)) for _ in range(40))  # 40 tables
    raw = ((passes + tester * 3) * 2000 + profiles.replace("\n", "\r\n")).encode()
    doc, present = chunk_text(raw, "utf-8", "auto", DocMeta(uri="win.log"), 1, LineIndex(raw))
    assert isinstance(doc.line_at, LineIndex)
    assert "\r" not in doc.text
    found = parse_text(doc, "auto", present)
    kinds = {type(block) for block in found.blocks}
    assert {MeasurementBlock, PassBlock} <= kinds
    assert EventBlock in kinds
    assert doc.newline_count() == raw.count(b"\n")
