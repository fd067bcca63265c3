"""Measurements read in bulk (ingest.columns, ingest.bulk) are the measurements the line path
reads: the same records, runs, series and stored rows, in every path a document can take."""

from __future__ import annotations

import multiprocessing
import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

import pytest

from ingest import bulk, pipeline
from ingest.columns import MeasurementBlock, PassBlock
from ingest.documents import read_document
from ingest.gate import AnchorGate
from ingest.parsers import claims, latency, passes
from ingest.save import save_found
from ingest.text import DocText, LineIndex
from perfboard import db
from perfboard.model import DocMeta
from tests.test_ingest import snapshot

ROOT = Path(__file__).resolve().parent.parent
VLLM = ROOT / "tests/fixtures/modern/samples/vllm-bench-serve_vllm-pr-18566.md"


def a_tester_line(rng: random.Random) -> str:
    """A tester summary line, mostly well formed, now and then in every way it may not be:
    stamps that are no date, counts too long for int64, absurd values, units, tails."""
    prefix = ""
    if rng.random() < 0.9:
        month = rng.choice(["09", "11", "12", "02", "13", "00"])
        day = rng.choice(["11", "29", "30", "31", "00"])
        clock = f"{rng.choice(['06', '23', '24'])}:41:{rng.choice(['55', '59', '60'])}"
        source = rng.choice(["ernie_tester.cc", "analyzer_bert_tester.cc", "operator.cc"])
        pid = " " * rng.randrange(1, 3) + str(rng.randrange(10**5))
        stamp = f"{rng.choice('IWEF')}{month}{day} {clock}.{rng.randrange(10**6):06d}"
        prefix = f"{stamp} {pid} {source}:345] "
    warmup = ""
    if rng.random() < 0.3:
        warmup = f" [exclude {rng.randrange(1, 10 ** rng.randrange(1, 21))} warmup steps]"
    number = rng.choice(
        [f"{rng.uniform(0, 100):.5f}", "6.", "12", f"{rng.uniform(0, 1e9):.3f}", "0.000001"]
    )
    unit = rng.choice(["ms", " ms", "us", " us", "s", " s"])
    samples = rng.randrange(1, 10 ** rng.randrange(1, 21))
    tail = rng.choice(["", " ", "\t", " more"])
    body = f"Run {samples} samples, average latency{warmup}: {number}{unit} per sample.{tail}"
    if rng.random() < 0.05:
        body = body.replace("Run", "run")
    return prefix + body


def chunk_doc(text: str, created: datetime | None) -> DocText:
    """A text as ingest.documents reads an ASCII chunk: gate hits and a newline index."""
    raw = text.encode()
    hits = AnchorGate({"latency": latency.ANCHORS}, frozenset({"latency"})).scan(raw).hits
    meta = DocMeta(uri="chunk.log", created_at=created)
    return DocText(text, meta, 1, "utf-8", frozenset(), hits, LineIndex(raw))


@pytest.mark.parametrize("created", [None, datetime(2020, 1, 15), datetime(2019, 12, 3)])
def test_a_block_holds_exactly_the_measurements_the_line_path_builds(
    created: datetime | None,
) -> None:
    rng = random.Random(5)
    text = "\n".join(a_tester_line(rng) for _ in range(6000)) + "\n"
    doc = chunk_doc(text, created)
    items = list(latency.parse(doc))
    blocks = [item for item in items if isinstance(item, MeasurementBlock)]
    assert len(blocks) == 1 and blocks[0].table.num_rows > 500
    others = [item for item in items if not isinstance(item, MeasurementBlock)]
    read = sorted([*others, *blocks[0].records()], key=lambda item: item.line)
    line_by_line = list(latency.parse(DocText(text, doc.meta)))  # no hits: the line path
    assert read == line_by_line


def a_pass_log_line(rng: random.Random) -> str:
    """A line of a predictor's optimisation log: passes, "detected" lines, glog noise."""
    glog = f"I0718 10:11:44.{rng.randrange(10**6):06d} 2153053 fuse_pass_base.cc:59] "
    return rng.choice(
        [
            f"--- Running IR pass [{rng.choice(['fc_fuse_pass', 'conv_bn_fuse_pass'])}]",
            "--- Running analysis [ir_graph_build_pass]",
            "--- Running analysis [ir_params_sync_among_devices_pass]  ",
            f"{glog}---  detected {rng.randrange(1, 80)} subgraphs",
            f"---  detected {rng.randrange(1, 80)} subgraph",
            f"{glog}---  skip [feed], feed -> src_ids",
            f"{glog}Sync params from CPU to GPU",
            "-------------------------------------------",
        ]
    )


@pytest.mark.parametrize("cut", [False, True], ids=["plain", "with-a-cut-line"])
def test_a_pass_block_holds_exactly_the_passes_the_line_path_reads(cut: bool) -> None:
    rng = random.Random(8)
    lines = [f"---  detected {k} subgraphs" for k in (3, 4)]  # orphans: no pass above
    lines += [a_pass_log_line(rng) for _ in range(12_000)]
    if cut:
        lines.insert(7000, "--- Running IR pa")
    text = "\n".join(lines) + "\n"
    doc = chunk_doc(text, None)
    items = list(passes.parse(doc))
    blocks = [item for item in items if isinstance(item, PassBlock)]
    assert len(blocks) == (0 if cut else 1)
    read = [*(item for item in items if not isinstance(item, PassBlock))]
    read += [record for block in blocks for record in block.records()]
    assert read == list(passes.parse(DocText(text, doc.meta)))  # the line path


def a_claiming_line(rng: random.Random) -> str:
    """A log or prose line with the words a claim needs, claiming something or nothing."""
    before, after = f"{rng.uniform(1, 20):.1f}", f"{rng.uniform(1, 20):.2f}"
    unit = rng.choice(["ms", "us", "s", "MS", "sec", ""])
    return rng.choice(
        [
            f"improved from {before}{unit} to {after} {unit}",
            f"2. refine fc ({before}ms -> {after}ms) and {before} ms => {after}ms",
            f"speed up by {rng.randrange(1, 99)}%, latency by about {before} %",
            f"the memory grew by {rng.randrange(1, 99)}%",
            "I0718 10:11:44.254137 2153053 naive_executor.cc:102] ---  skip [feed], feed -> x",
            "I0718 10:11:44.254137 2153053 ir_params_sync.cc:89] Sync params from CPU to GPU",
            f"went {before}ms\x0b->\x0b{after}ms by {before}\x0b%",
            f"step {before} to {after}, by the way",
        ]
    )


def test_a_large_chunk_finds_the_claims_a_whole_search_finds() -> None:
    rng = random.Random(9)
    text = "\n".join(a_claiming_line(rng) for _ in range(8000)) + "\n"
    assert len(text) > claims.BULK_MIN_BYTES
    read = list(claims.parse(chunk_doc(text, None)))
    assert len(read) > 1000
    assert read == list(claims.parse(DocText(text, DocMeta(uri="chunk.log"))))


def dense_log(path: Path, rng: random.Random, blocks: int, extra: str = "") -> None:
    """A test session's log: each block a predictor's passes, then its latency lines."""
    out = []
    for k in range(blocks):
        out.append("--- Running analysis [ir_graph_build_pass]\n")
        out.append("--- Running IR pass [fc_fuse_pass]\n")
        out.append(
            f"I0718 10:11:44.{k % 10**6:06d} 2153053 fuse_pass_base.cc:59]"
            " ---  detected 3 subgraphs\n"
        )
        for _ in range(4):
            out.append(
                f"I0911 06:41:55.{rng.randrange(10**6):06d}  7238 ernie_tester.cc:345] Run"
                f" {rng.randrange(1, 9000)} samples, average latency: {rng.uniform(6, 7):.5f} ms"
                " per sample.\n"
            )
        if k % 97 == 0:
            out.append(
                "I0911 06:41:55.000000  7238 ernie_tester.cc:345] Run 50 samples,"
                " average latency: 6.\n"
            )
        if k == blocks // 2:
            out.append(extra)
        out.append("\n")  # where a chunk is cut: a pass never loses its "detected" line
    path.write_text("".join(out), encoding="utf-8")


def stored(path: Path, tmp_path: Path, name: str, meta: DocMeta, pool: object = None) -> dict:
    parsed = read_document(path, "auto", meta, chunk_bytes=512 * 1024, pool=pool)  # type: ignore[arg-type]
    store = tmp_path / f"{name}.duckdb"
    conn = db.connect(store)
    save_found(conn, parsed.info, parsed.found, parsed.rows)
    conn.close()
    return snapshot(store)


def line_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every parser line by line from here on."""
    monkeypatch.setattr(latency, "BULK_MIN", 10**9)
    monkeypatch.setattr(passes, "BULK_MIN_BYTES", 1 << 62)
    monkeypatch.setattr(claims, "BULK_MIN_BYTES", 1 << 62)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many chunks went on as columns (bulk.assemble calls)."""
    calls: list[int] = []
    original = bulk.assemble

    def assemble(*args: object) -> object:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(bulk, "assemble", assemble)
    yield calls


@pytest.mark.parametrize("date", [None, datetime(2020, 1, 15)])
def test_a_dense_log_stores_what_the_line_path_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int], date: datetime | None
) -> None:
    path = tmp_path / "session.log"
    dense_log(path, random.Random(3), 6000)
    meta = DocMeta(uri="session.log", project="ernie", version="v1", created_at=date)
    columns = stored(path, tmp_path, "columns", meta)
    assert counted, "the bulk path was not taken"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        pooled = stored(path, tmp_path, "pooled", meta, pool)
    line_path(monkeypatch)
    line_by_line = stored(path, tmp_path, "lines", meta)
    assert len(line_by_line["measurements"]) == 24_000
    assert len(line_by_line["passes"]) == 12_000
    assert len(line_by_line["errors"]) == 62  # the cut lines, one in 97 blocks
    assert columns == line_by_line
    assert pooled == line_by_line


@pytest.mark.parametrize(
    "extra",
    [
        "## FP32\n",  # a heading: params from the context, record by record
        VLLM.read_text(encoding="utf-8"),  # another parser's measurements among the block's
        "Run 12 samples, average latency: 1.5 ms per sample.\n",  # a row without a benchmark
    ],
    ids=["heading", "another-parser", "no-benchmark"],
)
def test_where_a_block_cannot_stand_for_its_rows_they_are_read_as_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int], extra: str
) -> None:
    path = tmp_path / "mixed.log"
    dense_log(path, random.Random(4), 2000, extra)
    meta = DocMeta(uri="mixed.log", project="ernie", benchmark="bert")
    parsed = read_document(path, "auto", meta)
    assert not counted and not parsed.found.blocks
    columns = stored(path, tmp_path, "columns", meta)
    line_path(monkeypatch)
    assert columns == stored(path, tmp_path, "lines", meta)


def test_a_dry_run_lists_a_blocks_rows_like_any_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int]
) -> None:
    path = tmp_path / "session.log"
    dense_log(path, random.Random(6), 3000)
    doc = pipeline.Document(DocMeta(uri=str(path)), "auto", path=path)
    records, failed = pipeline.preview(doc)
    assert counted and not failed
    line_path(monkeypatch)
    assert records == pipeline.preview(doc)[0]
    first = next(r for r in records if r["kind"] == "measurement")
    assert (first["benchmark"], first["line"], first["run"]) == ("ernie", 4, 0)
