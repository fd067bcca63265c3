"""Measurements read in bulk (ingest.columns, ingest.bulk) are the measurements the line path
reads: the same records, runs, series and stored rows, in every path a document can take."""

from __future__ import annotations

import multiprocessing
import random
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from ingest import bulk, columns, pipeline
from ingest.columns import EventBlock, MeasurementBlock, PassBlock
from ingest.documents import read_document
from ingest.gate import AnchorGate
from ingest.parsers import claims, latency, passes, profiler, scan
from ingest.save import save_found
from ingest.text import DocText, LineIndex
from perfboard import db
from perfboard.model import DocMeta, Measurement, Problem
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


def a_noise_line(rng: random.Random) -> str:
    """A line among tester lines: glog noise full of spaces, colons, "]" and "p", some of it
    naming latency in a shape the fast path does not take."""
    glog = f"I0719 10:14:50.{rng.randrange(10**6):06d} 70931 operator.cc:169] "
    return glog + rng.choice(
        [
            "CUDAPlace(0) Op(elementwise_add), inputs:{X[fc_0.tmp_1:float[1, 128, 768]({})]}",
            "[ RUN      ] AnalyzerErnieTest.profile: p99 p50 sample ]",
            "average latency: unknown (skipped: no samples)",
            "Run 5 samples, average latency: n/a ms per sample.",
        ]
    )


@pytest.mark.parametrize("created", [None, datetime(2020, 1, 15), datetime(2019, 12, 3)])
@pytest.mark.parametrize("noise", [0, 3], ids=["dense", "among-noise"])
def test_a_block_holds_exactly_the_measurements_the_line_path_builds(
    created: datetime | None, noise: int
) -> None:
    rng = random.Random(5)
    lines = []
    for _ in range(6000):
        lines.append(a_tester_line(rng))
        lines += [a_noise_line(rng) for _ in range(rng.randrange(noise + 1))]
    text = "\n".join(lines) + ("\n" if rng.random() < 0.5 or not noise else "")
    doc = chunk_doc(text, created)
    items = list(latency.parse(doc))
    blocks = [item for item in items if isinstance(item, MeasurementBlock)]
    assert len(blocks) == 1 and blocks[0].table.num_rows > 500
    others = [item for item in items if not isinstance(item, MeasurementBlock)]
    read = sorted([*others, *blocks[0].records()], key=lambda item: item.line)
    line_by_line = list(latency.parse(DocText(text, doc.meta)))  # no hits: the line path
    assert read == line_by_line


@pytest.mark.parametrize("mix", ["session", "latency", "profiler", "demo", "print-time"])
def test_a_chunks_rows_hold_none_of_the_buffer_it_was_read_into(tmp_path: Path, mix: str) -> None:
    """The bulk readers read an ASCII chunk's bytes where they were read (DocText.data, a
    view of a buffer the next chunk is read into): what they give must be copies. The
    rows of a chunk read from a buffer that is then written over equal those of the
    same bytes kept."""
    from ingest import documents
    from scripts import bench_ingest

    path = tmp_path / f"{mix}.log"
    bench_ingest.write_mix(path, mix, 1.2)
    raw = path.read_bytes()
    meta = DocMeta(uri=path.name)

    def rows(data: bytes | memoryview) -> documents.ChunkResult:
        chunk = documents.Chunk(memoryview(data), b"", LineIndex(data))
        return documents._packed(documents.parse_chunk(chunk, "utf-8", "auto", meta))

    kept = rows(raw).rows
    buffer = bytearray(raw)
    read = rows(memoryview(buffer)).rows
    buffer[:] = b"x" * len(buffer)
    assert kept is not None and read is not None and read.records > 200
    for name in ("measurements", "series", "runs", "events", "passes"):
        assert getattr(read, name).equals(getattr(kept, name)), name


def test_a_block_divides_microseconds_as_the_units_do() -> None:
    """1890 us is 1.89 ms, as perfboard.units divides it; multiplied by 0.001 it was
    1.8900000000000001, which is not the number printed."""
    glog = "I0911 06:41:55.494792  7238 ernie_tester.cc:345] "
    text = "".join(
        f"{glog}Run 3 samples, average latency: {us}us per sample.\n"
        for us in (1890, 7, 123456) * 700
    )
    (block,) = [i for i in latency.parse(chunk_doc(text, None)) if isinstance(i, MeasurementBlock)]
    assert block.table["value"].to_pylist()[:3] == [1.89, 0.007, 123.456]


def test_a_chunk_of_latency_lines_none_of_them_tester_lines_reads_as_the_line_path() -> None:
    # More hits than BULK_MIN, and not one line the fast path takes: no block, the same
    # records (problems, helper lines) as the line path.
    rng = random.Random(11)
    text = "\n".join(a_noise_line(rng) for _ in range(3 * latency.BULK_MIN)) + "\n"
    doc = chunk_doc(text, None)
    items = list(latency.parse(doc))
    assert not any(isinstance(item, MeasurementBlock) for item in items)
    assert items == list(latency.parse(DocText(text, doc.meta)))


def demo_lines(rng: random.Random) -> list[str]:
    """A demo summary in the demo's own form, under a report of one of the forms its
    scripts print (or none), now and then in every way the bulk path must leave to the
    line path: an absurd latency, a cut QPS, a tail, a model line far above, or lines of
    kilobytes between (which the line path walks)."""
    prefix = rng.choice(["", "I0311 10:02:17.338272 41250 main.cc:142] ", "2021 - x - INFO - "])
    batch = rng.choice([1, 2, 4, 8])
    report = rng.choice(
        [
            [f"Model name: ernie, Batch size: {batch}, device: GPU, thread num: 1"],
            [
                f"{prefix}Model name: resnet50, Model type: static",
                f"{prefix}Batch size: {batch}, Num of samples: 1000",
                f"{prefix}device: {rng.choice(['gpu', 'cpu', 'Tesla P4'])}, ir_optim: true",
                f"{prefix}precision: {rng.choice(['fp16', 'int8', 'None'])}",
            ],
            [f"{prefix}Model name: bert", f"{prefix}Thread num: {batch}"],
            [],  # no report: no benchmark, the block's rows go back to objects
        ]
    )
    between = rng.choice([[], [], ["load model ..."], ["x"] * 20, ["y" * 3000] * 3])
    ms = rng.choice([f"{rng.uniform(1, 500):.4f}", "22.", "12", "90000000", "0.0001"])
    qps = rng.choice([f"{rng.uniform(1, 500):.4f}", "45.", "45", "7.25"])
    tail = rng.choice(["", "", " ", "\t", " more"])
    return [*report, *between, f"Average latency(ms): {ms}, QPS: {qps}{tail}"]


@pytest.mark.parametrize("tester_lines", [0, 1], ids=["demo", "demo-and-tester"])
def test_a_demo_block_holds_exactly_the_measurements_the_line_path_builds(
    tester_lines: int,
) -> None:
    rng = random.Random(8)
    lines = []
    for _ in range(3000):
        lines += demo_lines(rng)
        lines += [a_tester_line(rng) for _ in range(tester_lines)]
    text = "\n".join(lines) + "\n"
    doc = chunk_doc(text, datetime(2021, 3, 11))
    items = list(latency.parse(doc))
    blocks = [item for item in items if isinstance(item, MeasurementBlock)]
    assert len(blocks) == 1 and blocks[0].table.num_rows > 2000
    assert len(blocks[0].templates) > 8  # contexts of every report form, latency and QPS
    others = [item for item in items if not isinstance(item, MeasurementBlock)]
    read = sorted([*others, *blocks[0].records()], key=lambda item: item.line)
    line_by_line = list(latency.parse(DocText(text, doc.meta)))  # no hits: the line path
    assert read == line_by_line
    resnet = [m for m in read if isinstance(m, Measurement) and m.benchmark == "resnet50"]
    assert {m.params.get("precision") for m in resnet} == {"fp16", "int8", None}


def print_time_lines(rng: random.Random, threads: list[str]) -> list[str]:
    """One test's PrintTime output (tester_helper.h): each thread's threads header, batch
    header and record, the threads' lines side by side, now and then in every way the
    bulk path must leave to the line path: a header missing or in another form, a line
    holding "=====" between, the headers beyond 64 lines, the old one-line record, a record
    over two lines, an absurd value, numbers written oddly, a file name with "=" or "]"."""
    batch = rng.choice(["1", "4", "16", "007"])
    count = len(threads)
    data_type = rng.choice(["", "", ", data type: float32", ", data type: int8", ", data type: 32"])

    def glog(thread: str, file: str = "tester_helper.h:380") -> str:
        if thread == "bare":
            return ""
        clock = f"10:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
        fraction = rng.choice([f".{rng.randrange(10**6):06d}", "", ".5"])
        return f"I1125 {clock}{fraction}{' ' * rng.randrange(1, 3)}{thread} {file}] "

    per_thread = []
    for index, thread in enumerate(threads):
        header = [
            f"====== threads: {count}, thread id: {index} ======",
            f"====== {rng.choice(['batch_size', 'batch size'])}: {batch}, iterations: 5,"
            f" repetitions: {rng.choice(['10', '3'])} ======",
        ]
        odd = rng.random()
        if odd < 0.04:
            header.pop(rng.randrange(2))
        elif odd < 0.08:
            header[0] = f"====== num of threads: {count} ======"
        elif odd < 0.1:
            header[1] = f"====== batch size: {batch}, iterations: 5"
        elif odd < 0.12:
            header.insert(1, "====== loading the model ======")
        elif odd < 0.14:
            header.insert(rng.randrange(3), "=====")
        ms = rng.choice([f"{rng.uniform(1, 90):.4f}", "30.", "030.5", "12", "90000000.1"])
        fps = rng.choice([f", fps: {rng.uniform(1, 900):.3f}", ", fps: 33", ", fps: 033", ""])
        fps = rng.choice([fps, fps, ", fps: 45.", ", fps: 1234567890123456789012"])
        record = (
            f"====== batch latency: {ms}ms, number of samples: 5, sample latency:"
            f" {ms}ms{fps}{data_type} ======{rng.choice(['', '', ' ', ' x'])}"
        )
        if rng.random() < 0.03:
            record = (
                f"====== batch_size: {batch}, repeat: 10, threads: {count}, thread id: {index},"
                f" latency: {ms}ms, fps: 33.0 ======"
            )
        lines = [glog(thread) + line for line in header]
        odd = rng.random()
        if odd < 0.03:
            lines.append(glog(thread, rng.choice(["a=b.h:3", "a]b.h:3"])) + record)
        elif odd < 0.06 and ", sample latency" in record:
            cut = record.index(", sample latency")
            lines += [glog(thread) + record[:cut], glog(thread) + record[cut:]]
        else:
            lines.append(glog(thread) + record)
        per_thread.append(lines)
    out = []
    while any(per_thread):  # side by side, in a random order
        lines = rng.choice([lines for lines in per_thread if lines])
        out.append(lines.pop(0))
        if rng.random() < 0.02:
            out += [glog(rng.choice(threads)) + "load ..."] * rng.choice([3, 70])
    return out


@pytest.mark.parametrize("seed", range(4))
def test_a_print_time_block_holds_exactly_the_measurements_the_line_path_builds(
    seed: int,
) -> None:
    rng = random.Random(seed)
    lines = []
    for _ in range(1500):
        count = rng.choice([1, 2, 2, 4])
        threads = rng.sample(["7238", "7239", "17", "123456", "bare"], count)
        lines += print_time_lines(rng, threads)
    text = "\n".join(lines) + "\n"
    doc = chunk_doc(text, None)
    items = list(latency.parse(doc))
    blocks = [item for item in items if isinstance(item, MeasurementBlock)]
    assert len(blocks) == 1 and blocks[0].table.num_rows > 800
    others = [item for item in items if not isinstance(item, MeasurementBlock)]
    assert len(others) > 200  # every way above that the line path reads
    read = sorted([*others, *blocks[0].records()], key=lambda item: item.line)
    line_by_line = list(latency.parse(DocText(text, doc.meta)))  # no hits: the line path
    assert read == line_by_line
    assert blocks[0].thread_of_rows.tolist() == [m.stats["thread_id"] for m in blocks[0].records()]
    first = blocks[0].records()[0]
    assert set(first.params) >= {"batch_size", "threads"} and first.stats["batch_latency"] > 0


def test_a_print_time_block_reads_paddles_own_lines() -> None:
    # tester_helper.h's PrintTime, two threads side by side (the print-time mix), 300 times.
    out = []
    for k in range(300):
        for tid, thread in enumerate(("7238", "7239")):
            out.append(
                f"I1125 10:00:53.08760{tid}  {thread} tester_helper.h:380] ====== threads: 2,"
                f" thread id: {tid} ======"
            )
        for thread in ("7238", "7239"):
            out.append(
                f"I1125 10:00:53.087609  {thread} tester_helper.h:382] ====== batch_size:"
                f" {k % 5 + 1}, iterations: 5, repetitions: 10 ======"
            )
        # The threads print their records in either order (their headers' order apart).
        for thread in ("7238", "7239")[:: 1 if k % 3 else -1]:
            out.append(
                f"I1125 10:00:53.087609  {thread} tester_helper.h:384] ====== batch latency:"
                f" 30.282ms, number of samples: 5, sample latency: 30.2815ms, fps: 33.023 ======"
            )
    text = "\n".join(out) + "\n"
    items = list(latency.parse(chunk_doc(text, None)))
    (block,) = items
    assert isinstance(block, MeasurementBlock) and block.table.num_rows == 600
    first = block.records()[0]
    assert (first.value, first.unit, first.params) == (
        30.2815,
        "ms",
        {"batch_size": 1, "threads": 2},
    )
    assert first.stats == {
        "batch_latency": 30.282,
        "fps": 33.023,
        "iterations": 5,
        "repetitions": 10,
        "thread_id": 1,  # 7239's record first, under its own headers
    }
    assert (first.line, block.records()[1].stats["thread_id"]) == (5, 0)
    assert block.records() == list(latency.parse(DocText(text, DocMeta(uri="chunk.log"))))


def test_print_time_fields_are_read_in_any_order_asked() -> None:
    # A record's headers are in line order only thread by thread: a record of one thread
    # may come before another's whose headers are above its own.
    glog = "I1125 10:00:53.087609  {} tester_helper.h:380] ====== "
    lines = [
        glog.format(7238) + "threads: 2, thread id: 0 ======",
        glog.format(7239) + "threads: 2, thread id: 1 ======",
        glog.format(7239) + "batch_size: 4, iterations: 5, repetitions: 10 ======",
    ]
    data = ("\n".join(lines) + "\n").encode()
    rule = np.asarray([data.index(b"=====", data.index(line.encode())) for line in lines])
    ends = np.asarray([data.index(line.encode()) + len(line) for line in lines])
    bodies = columns.spans(data, rule, ends)
    kind = np.asarray([latency._THREADS, latency._THREADS, latency._BATCH], np.int8)
    fields = latency._HelperFields(data, bodies, rule, kind)
    assert fields.text("thread_id", np.asarray([1, 0])).to_pylist() == ["1", "0"]
    assert fields.text("threads", np.asarray([1, 1, 0])).to_pylist() == ["2", "2", "2"]
    assert fields.text("batch_size", np.asarray([2, 0])).to_pylist() == ["4", ""]


def print_time_log(path: Path, rng: random.Random, tests: int, extra: str = "") -> None:
    lines = []
    for k in range(tests):
        lines += print_time_lines(rng, rng.sample(["7238", "7239", "17"], rng.choice([1, 2, 3])))
        if k == tests // 2:
            lines.append(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("date", [None, datetime(2020, 11, 25)])
def test_a_print_time_log_stores_what_the_line_path_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int], date: datetime | None
) -> None:
    path = tmp_path / "print_time.log"
    print_time_log(path, random.Random(12), 9000)
    meta = DocMeta(uri="print_time.log", project="ernie", created_at=date)
    columns, pooled, line_by_line = three_ways(path, tmp_path, meta, monkeypatch, counted)
    assert len(line_by_line["measurements"]) > 14_000
    assert {s[3] for s in line_by_line["series"]} == {"unknown"}  # no record names one
    assert columns == line_by_line
    assert pooled == line_by_line


@pytest.mark.parametrize(
    "extra",
    [
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run 3 samples, average latency:"
        " 1.5 ms per sample.",  # a record that names its benchmark: the others take it
        "model: bert, batch_size: 1",  # the model the document names: every record's
    ],
    ids=["a-named-record", "a-named-model"],
)
def test_a_print_time_log_with_a_benchmark_named_stores_what_the_line_path_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int], extra: str
) -> None:
    path = tmp_path / "print_time.log"
    print_time_log(path, random.Random(13), 3000, extra)
    meta = DocMeta(uri="print_time.log", project="ernie")
    columns = stored(path, tmp_path, "columns", meta)
    line_path(monkeypatch)
    line_by_line = stored(path, tmp_path, "lines", meta)
    assert columns == line_by_line
    assert {s[3] for s in line_by_line["series"]} - {"unknown"}


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


def test_a_text_whose_dashes_end_only_rules_holds_no_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The demo's reports rule their parts with "------ Model info ------": a "--- " every
    # few lines and no pass log line. The one search that says so gives what reading every
    # line gives, in bulk or line by line, for them and for every fixture.
    reports = sorted((ROOT / "tests/fixtures/demo_reports").glob("*.log"))
    texts = ["".join(path.read_text(encoding="utf-8") for path in reports) * 100]
    fixtures = sorted((ROOT / "tests/fixtures").rglob("*.md"))
    texts += [path.read_text(encoding="utf-8") for path in fixtures]
    assert texts[0].count("--- ") > 2000 and len(texts[0]) >= passes.BULK_MIN_BYTES

    def read() -> list[list]:
        docs = [chunk_doc(t, None) if t.isascii() else DocText(t) for t in texts]
        return [list(passes.parse(doc)) for doc in docs]

    searched = read()
    monkeypatch.setattr(passes, "_HIT", _AlwaysFound(passes._HIT))
    assert searched == read()
    assert searched[0] == [] and any(searched)


class _AlwaysFound:
    """A pattern whose search says it found something: the reading that follows decides."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def search(self, text: str) -> bool:
        return True

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text)


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


@pytest.fixture(params=["hyperscan", "re2"])
def claim_lines_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The lines that may claim found by hyperscan, or (a platform without it) RE2 alone."""
    if request.param == "re2":
        monkeypatch.setattr(scan, "hyperscan", None)
    return request.param


def test_a_large_chunk_finds_the_claims_a_whole_search_finds(claim_lines_by: str) -> None:
    rng = random.Random(9)
    text = "\n".join(a_claiming_line(rng) for _ in range(8000)) + "\n"
    assert len(text) > claims.BULK_MIN_BYTES
    read = list(claims.parse(chunk_doc(text, None)))
    assert len(read) > 1000
    assert read == list(claims.parse(DocText(text, DocMeta(uri="chunk.log"))))


def test_a_large_chunk_finds_rare_claims_among_lines_that_claim_nothing(
    claim_lines_by: str,
) -> None:
    # The lines are tried in blocks first (claims._BLOCK_LINES): most blocks hold none,
    # some one claim, and a pair cut by a line end matches a block and no line of it.
    rng = random.Random(11)
    noise = "I0718 10:11:44.254137 2153053 op_desc.cc:40] fc_0.tmp_0 shape [1, 128, 768]"
    lines = [noise] * 20_000
    for at in rng.sample(range(len(lines)), 150):
        lines[at] = a_claiming_line(rng)
    lines[7_000:7_002] = ["went from 9.0 ms ->", "8.0 ms, by"]
    edges = [63, 64, 127, 6_400, len(lines) - 1]  # a block's last and first lines, the text's
    for at in edges:
        lines[at] = "fc fused: 10.0ms -> 9.5 ms"
    text = "\n".join(lines) + "\n"
    read = list(claims.parse(chunk_doc(text, None)))
    assert 50 < len(read) < 300
    assert {c.line - 1 for c in read if c.raw == lines[63]} == set(edges)
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
    monkeypatch.setattr(profiler, "BULK_MIN_HITS", 1 << 62)


def three_ways(
    path: Path, tmp_path: Path, meta: DocMeta, monkeypatch: pytest.MonkeyPatch, counted: list
) -> tuple[dict, dict, dict]:
    """The stores of `path` read in bulk in this process, in bulk by worker processes, and
    line by line (from here on, for the test)."""
    columns = stored(path, tmp_path, "columns", meta)
    assert counted, "the bulk path was not taken"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        pooled = stored(path, tmp_path, "pooled", meta, pool)
    line_path(monkeypatch)
    return columns, pooled, stored(path, tmp_path, "lines", meta)


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
    columns, pooled, line_by_line = three_ways(path, tmp_path, meta, monkeypatch, counted)
    assert len(line_by_line["measurements"]) == 24_000
    assert len(line_by_line["passes"]) == 12_000
    assert len(line_by_line["errors"]) == 62  # the cut lines, one in 97 blocks
    assert columns == line_by_line
    assert pooled == line_by_line


def test_a_log_of_demo_reports_stores_what_the_line_path_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int]
) -> None:
    # A sweep in the demo's one-line form, and now and then a report of each form its
    # scripts print (tests/fixtures/demo_reports), over several chunks.
    reports = sorted((ROOT / "tests/fixtures/demo_reports").glob("*.log"))
    rng = random.Random(9)
    out = []
    for k in range(9000):
        batch = (1, 2, 4, 8, 16)[k % 5]
        out.append(f"Model name: ernie, Batch size: {batch}, device: GPU, thread num: 1\n")
        out.append(f"Average latency(ms): {rng.uniform(20, 23) * batch:.4f}, QPS: 4{k % 7}.5\n")
        if k % 997 == 0:
            out.append(reports[k % len(reports)].read_text(encoding="utf-8"))
    path = tmp_path / "demo.log"
    path.write_text("".join(out), encoding="utf-8")
    meta = DocMeta(uri="demo.log", project="ernie", created_at=datetime(2021, 3, 11))
    columns, pooled, line_by_line = three_ways(path, tmp_path, meta, monkeypatch, counted)
    # the sweep; and 4 C++ reports (a latency), 3 Python (2 runs of 2), 3 TensorFlow (2)
    assert len(line_by_line["measurements"]) == 2 * 9000 + 4 * 1 + 3 * 4 + 3 * 2
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


# -- profiler tables -------------------------------------------------------------------

GPU_HEADER = (
    "Event                       Calls       Total       CPU Time (Ratio)        GPU Time (Ratio)"
    "        Min.        Max.        Ave.        Ratio."
)
CPU_HEADER = (
    "Event                       Calls       Total       Min.        Max.        Ave.        Ratio."
)


def a_number(rng: random.Random, low: float = 0.0, high: float = 100.0) -> str:
    """A field as Paddle prints it, now and then as no plain number may be."""
    if rng.random() < 0.001:
        return rng.choice(["nan", "-1.5", "inf", "1e400", "2e9", "+3", "1,5", "7ms", ".5"])
    value = rng.uniform(low, high)
    return rng.choice([f"{value:.6f}", f"{value:.6g}", f"{value:.3e}", f"{int(value)}", "6."])


def a_ratio(rng: random.Random) -> str:
    if rng.random() < 0.001:
        return rng.choice(["1.0011", "nan", "2"])
    return rng.choice([f"{rng.uniform(0, 1):.6f}", "1.001", "1e-400", "0"])


def a_name(rng: random.Random, k: int) -> str:
    op = rng.choice(["fc", "matmul", "GpuMemcpyAsync:CPU->GPU", "ParallelExecutor::Run", "x"])
    if rng.random() < 0.01:  # \x0b and \x1c: white space to Python's \S, not to RE2's
        odd = [f"thread{k}::", f"threadx::{op}", f"thread1:::{op}", f"_{op}", f"{op}\x0b{k}"]
        return rng.choice([*odd, f"thread1::{op}\x1c", f"fc({k})"])
    return f"thread{k % 3}::{op}_{k}"


def a_row(rng: random.Random, gpu: bool, k: int, indent: str) -> str:
    calls = str(rng.randrange(1, 10**6))
    if rng.random() < 0.002:
        calls = rng.choice(["12.5", "1e3", "9" * 25, "0", "1e400"])
    fields = [calls, a_number(rng, 0, 1e5)]
    if gpu:
        for _ in range(2):
            fields.append(f"{a_number(rng)} ({a_ratio(rng)})")
    fields += [a_number(rng), a_number(rng), a_number(rng), a_ratio(rng)]
    sep = rng.choice(["  ", "\t", " "])
    row = f"{indent}{a_name(rng, k)}{sep}" + sep.join(fields)
    if rng.random() < 0.002:
        row = row.rsplit(sep, 2)[0]  # cut short
    elif rng.random() < 0.001:
        row += f"{sep}0.1"  # a field too many
    return row + rng.choice([""] * 300 + [" ", "\t", "\r"])


def a_profiler_table(rng: random.Random) -> list[str]:
    """A report: maybe a banner with place and unit, a GpuMemCpy summary, a table of plain
    rows, nested or not, with or without thread prefixes, now and then a row or line that
    is not plain, ended somehow."""
    out = []
    bare = rng.random() < 0.2  # no thread prefixes
    if rng.random() < 0.5:
        out.append("------------------------->     Profiling Report     <-------------------------")
        out.append(f"Place: {rng.choice(['All', 'CPU', 'CUDA', ''])}")
        out.append(f"Time unit: {rng.choice(['ms'] * 5 + ['us', 's', 'ns', 'MB', 'furlong'])}")
    if rng.random() < 0.1:
        out.append(f"GpuMemcpy  Calls: {rng.randrange(99)}  Total: 12.5  Ratio: 23.9085%")
        out.append(f"  GpuMemcpyAsync  Calls: {rng.randrange(99)}  Total: 1.5  Ratio: 2.1%")
        out.append("")
    gpu = rng.random() < 0.6
    out.append(GPU_HEADER if gpu else CPU_HEADER)
    nested = rng.random() < 0.3
    step = rng.choice([2, 2, 3, 4])
    margin = rng.choice(["", "", " ", "\t"]) if rng.random() < 0.1 else ""
    depth = 0
    for k in range(rng.randrange(1, 40)):
        if nested:
            depth = max(0, min(depth + rng.choice([-1, 0, 1]), 3))
        indent = margin + " " * (step * depth)
        if rng.random() < 0.003:
            indent = "\t" + indent
        row = a_row(rng, gpu, k, indent)
        out.append(row.replace(f"thread{k % 3}::", "") if bare else row)
        if rng.random() < 0.001:
            out.append(rng.choice(["Note that the numbers are rough", "....", "----"]))
    out.append(rng.choice([""] * 8 + ["```", "I0911 06:41:55.000000  7238 x.cc:1] Run 5", "  "]))
    return out


def profiler_text(seed: int, tables: int) -> str:
    rng = random.Random(seed)
    lines = [line for _ in range(tables) for line in a_profiler_table(rng)]
    return "\n".join(lines) + rng.choice(["\n", ""])


@pytest.mark.parametrize("seed", range(6))
def test_an_event_block_holds_exactly_the_events_the_line_path_reads(seed: int) -> None:
    text = profiler_text(seed, 400)
    doc = chunk_doc(text, None)
    items = list(profiler.parse(doc))
    blocks = [item for item in items if isinstance(item, EventBlock)]
    assert len(blocks) == 1 and blocks[0].table.num_rows > 2000
    others = [item for item in items if not isinstance(item, EventBlock)]
    assert any(isinstance(item, Problem) for item in others)  # malformed rows: the line path
    read = sorted([*others, *blocks[0].records()], key=lambda item: item.line)
    assert read == list(profiler.parse(DocText(text, doc.meta)))  # the line path


def test_a_table_cut_at_the_end_of_a_chunk_reads_as_the_line_path_reads_it() -> None:
    text = profiler_text(11, 200)
    for cut in (len(text) - 1, text.rindex("\n"), text.rindex("\n") + 7):
        doc = chunk_doc(text[:cut], None)
        items = list(profiler.parse(doc))
        blocks = [item for item in items if isinstance(item, EventBlock)]
        others = [item for item in items if not isinstance(item, EventBlock)]
        read = sorted([*others, *(r for b in blocks for r in b.records())], key=lambda i: i.line)
        assert read == list(profiler.parse(DocText(text[:cut], doc.meta)))


def profiler_log(path: Path, seed: int, tables: int, extra: str = "") -> None:
    rng = random.Random(seed)
    out = []
    for k in range(tables):
        out += a_profiler_table(rng)
        out.append("")
        if k == tables // 2:
            out.append(extra)
        if k % 5 == 0:  # a latency line now and then: measurements among the events
            out.append(
                "I0911 06:41:55.969791  7238 ernie_tester.cc:345] Run 5000 samples,"
                f" average latency: {rng.uniform(6, 7):.5f} ms per sample."
            )
    # A count beyond int64 cannot be stored (either way the ingest fails), a fence makes
    # the log no plain one, a carriage return makes its chunks normalised text (no
    # newline index): none of them in this log.
    text = "\n".join(line.rstrip("\r") for line in out if line != "```")
    text = text.replace("9" * 25, "9" * 18)
    path.write_text(text + "\n", encoding="utf-8")


@pytest.mark.parametrize("date", [None, datetime(2020, 1, 15)])
def test_a_profiler_log_stores_what_the_line_path_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[int], date: datetime | None
) -> None:
    path = tmp_path / "profile.log"
    profiler_log(path, 12, 1500)
    meta = DocMeta(uri="profile.log", project="ernie", version="v1", created_at=date)
    columns, pooled, line_by_line = three_ways(path, tmp_path, meta, monkeypatch, counted)
    assert len(line_by_line["profile"]) > 20_000
    assert len(line_by_line["errors"]) > 100
    assert columns == line_by_line
    assert pooled == line_by_line


@pytest.mark.parametrize(
    "extra",
    [
        "## FP32\n",  # a heading: runs start at each section
        (ROOT / "tests/fixtures/modern/samples/nsys-stats-text_nanomoe-report.md").read_text(
            encoding="utf-8"
        ),  # another parser's records among the events
    ],
    ids=["heading", "another-parser"],
)
def test_where_an_event_block_cannot_stand_for_its_rows_they_are_read_as_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str
) -> None:
    path = tmp_path / "mixed.log"
    profiler_log(path, 13, 600, extra)
    meta = DocMeta(uri="mixed.log", project="ernie", benchmark="bert")
    columns = stored(path, tmp_path, "columns", meta)
    line_path(monkeypatch)
    assert columns == stored(path, tmp_path, "lines", meta)


def test_a_dry_run_lists_an_event_blocks_rows_like_any_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "profile.log"
    profiler_log(path, 14, 300)
    doc = pipeline.Document(DocMeta(uri=str(path)), "auto", path=path)
    records, failed = pipeline.preview(doc)
    assert not failed and any(r["kind"] == "profile_event" for r in records)
    line_path(monkeypatch)
    assert records == pipeline.preview(doc)[0]
