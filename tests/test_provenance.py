"""Where a value came from: its line among the lines around it, its table's header, the
number marked (perfboard/provenance.py), and the document text the store keeps for it."""

from __future__ import annotations

from pathlib import Path

import duckdb

from perfboard import provenance
from tests.conftest import ingest, sample_path

ROOT = Path(__file__).resolve().parent.parent
QA = "benchmark-165_2020-02-04_xreki_qa-results.md"
OP_TIMING = "benchmark-380_2020-05-06_xreki_op-timing-table.md"
FUSION = ROOT / "tests/fixtures/ernie-before-fc-fusion.md"
TRTEXEC = ROOT / "tests/fixtures/modern/samples/trtexec_tensorrt-4177.md"


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_a_whitespace_table_row_comes_with_its_header_and_its_number_marked() -> None:
    found = provenance.excerpt(text_of(sample_path(QA)), 25, 451.965)
    assert found.header == [(17, "batch_size average_latency(ms) batch_latency(ms) gpu_memory(MB)")]
    assert [n for n, _ in found.lines] == [22, 23, 24, 25, 26, 27]
    line = dict(found.lines)[25]
    assert line == "70 6.457 451.965 1283"
    assert found.mark is not None and line[slice(*found.mark)] == "451.965"


def test_a_markdown_row_comes_with_its_header_and_rule() -> None:
    found = provenance.excerpt(text_of(sample_path(OP_TIMING)), 28, 24.0810)
    assert [n for n, _ in found.header] == [22, 23]
    assert found.header[0][1].startswith("| op | paddle-total (ms) | paddle-gpu (ms)")
    assert set(found.header[1][1]) <= set("|-")
    line = dict(found.lines)[28]
    assert line[slice(*found.mark)] == "24.0810"  # type: ignore[misc]


def test_a_profiler_row_comes_with_the_event_header() -> None:
    found = provenance.excerpt(text_of(FUSION), 23, None)
    assert found.header and found.header[0][0] == 16
    assert found.header[0][1].startswith("Event ") and "CPU Time (Ratio)" in found.header[0][1]


def test_a_log_line_has_no_header_and_its_value_is_marked_in_any_unit() -> None:
    found = provenance.excerpt(text_of(TRTEXEC), 8, 5.38672)
    assert found.header == []
    line = dict(found.lines)[8]
    assert line[slice(*found.mark)] == "5.38672"  # type: ignore[misc]
    log = "I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run 10 samples, average latency:"
    text = "\n".join([log + " 6928.49 us per sample.", log + " 6.5 ms per sample."])
    us = provenance.excerpt(text, 1, 6.92849)  # stored in ms, written in us
    assert us.header == [] and text.split("\n")[0][slice(*us.mark)] == "6928.49"  # type: ignore[misc]
    assert provenance.excerpt(text, 1, 12345.0).mark is None  # not on the line: nothing marked


def test_a_line_the_document_does_not_have_is_said_to_be_missing() -> None:
    assert not provenance.excerpt("one\ntwo", 9).found
    assert provenance.excerpt("one\ntwo", 2).lines == [(1, "one"), (2, "two")]


def test_the_html_escapes_the_document_and_marks_only_the_number() -> None:
    text = '<script>alert(1)</script>\n| a | b | c |\n|---|---|---|\n| x <b> | 1.5 | "q" |'
    html = provenance.to_html(provenance.excerpt(text, 4, 1.5))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "x &lt;b&gt;" in html and "&quot;q&quot;" in html
    assert html.count("<mark") == 1 and ">1.5</mark>" in html


def test_a_large_logs_lines_are_read_back_from_its_file(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {n}\n" for n in range(1, 5001)), encoding="utf-8")
    lines, first = provenance.lines_from_file(path, 4000)
    found = provenance.excerpt_of_lines(lines, first, 4000, 4000.0)
    assert [n for n, _ in found.lines] == [3997, 3998, 3999, 4000, 4001, 4002]
    assert dict(found.lines)[4000] == "line 4000" and found.mark == (5, 9)


def test_the_store_keeps_a_small_documents_text_and_replaces_it_with_the_document(
    tmp_path: Path, db_path: Path
) -> None:
    doc = tmp_path / "qa.md"
    doc.write_text(text_of(sample_path(QA)), encoding="utf-8")
    big = tmp_path / "big.log"
    line = "I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run 10 samples, average latency:"
    big.write_text(f"{line} 6.5 ms per sample.\n" * 20_000, encoding="utf-8")  # 2.2 MB
    assert ingest("auto", str(doc), str(big), "--db", str(db_path), "--no-detect") == 0

    def texts() -> dict[str, str]:
        conn = duckdb.connect(str(db_path), read_only=True)
        try:
            return dict(
                conn.execute(
                    "SELECT s.uri, t.text FROM source_texts t JOIN sources s USING (source_id)"
                ).fetchall()
            )
        finally:
            conn.close()

    assert list(texts()) == [str(doc)]  # the 2 MB log is read back from its file instead
    assert texts()[str(doc)].split("\n")[24] == "70 6.457 451.965 1283"
    doc.write_text(text_of(sample_path(QA)).replace("451.965", "451.966"), encoding="utf-8")
    assert ingest("auto", str(doc), "--db", str(db_path), "--no-detect") == 0
    assert texts()[str(doc)].split("\n")[24] == "70 6.457 451.966 1283"
