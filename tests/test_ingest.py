"""The ingest CLI end to end: idempotent, atomic per document, honest about bad input."""

from __future__ import annotations

import itertools
import json
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

import ingest.save as save_module
from ingest.cli import main
from ingest.documents import read_document
from perfboard.model import DocMeta
from tests.conftest import ingest, sample_path

PHASE = "benchmark-165_2020-02-04_xreki_phase2-table.md"
FUSION = "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md"
QAT = "paddle-21228_2019-11-19_sand3r-_qat-latency.md"


def snapshot(db: Path) -> dict[str, list[tuple]]:
    """Everything the store holds except ingest times (which a re-ingest may not touch)."""
    conn = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "measurements": conn.execute("SELECT * FROM measurements ORDER BY ALL").fetchall(),
            "series": conn.execute("SELECT * FROM series ORDER BY ALL").fetchall(),
            "sources": conn.execute(
                "SELECT * EXCLUDE (ingested_at) FROM sources ORDER BY ALL"
            ).fetchall(),
            "milestones": conn.execute("SELECT * FROM milestones ORDER BY ALL").fetchall(),
            "profile": conn.execute("SELECT * FROM profile_events ORDER BY ALL").fetchall(),
            "passes": conn.execute("SELECT * FROM passes ORDER BY ALL").fetchall(),
            "errors": conn.execute(
                "SELECT * EXCLUDE (seen_at) FROM ingest_errors ORDER BY ALL"
            ).fetchall(),
        }
    finally:
        conn.close()


def copy_samples(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(sample_path(name), folder / name)
    return folder


def test_the_same_content_twice_changes_nothing(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_samples(tmp_path, PHASE, FUSION, QAT)
    assert ingest("auto", str(folder), "--date", "2020-02-04") == 0
    first = snapshot(db_path)
    capsys.readouterr()
    assert ingest("auto", str(folder), "--date", "2020-02-04") == 0
    assert snapshot(db_path) == first
    summary = capsys.readouterr().err
    assert "3 documents read (3 unchanged)" in summary
    assert "0 added, 0 replaced (were 0), 6 unchanged" in summary


def test_a_changed_document_replaces_only_its_own_rows(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_samples(tmp_path, FUSION, QAT)
    assert ingest("auto", str(folder)) == 0
    before = snapshot(db_path)
    doc = folder / FUSION
    doc.write_text(doc.read_text(encoding="utf-8").replace("6.92849", "6.5"), encoding="utf-8")
    capsys.readouterr()
    assert ingest("auto", str(folder)) == 0
    assert "2 replaced (were 2), 4 unchanged" in capsys.readouterr().err
    after = snapshot(db_path)
    conn = duckdb.connect(str(db_path), read_only=True)
    values = conn.execute(
        "SELECT m.value FROM measurements m JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE ? ORDER BY m.line",
        [f"%{FUSION}"],
    ).fetchall()
    assert values == [(6.5,), (6.54723,)]
    qat_rows = lambda snap: [r for r in snap["measurements"] if r[1] == 2]  # noqa: E731
    assert qat_rows(after) == qat_rows(before)  # the other document's rows are untouched
    assert len(after["profile"]) == len(before["profile"]) == 5
    assert len(after["errors"]) == len(before["errors"]) == 1


def test_a_document_that_fails_to_save_changes_nothing(
    tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_samples(tmp_path, FUSION)
    assert ingest("auto", str(folder)) == 0
    before = snapshot(db_path)
    doc = folder / FUSION
    doc.write_text(doc.read_text(encoding="utf-8").replace("6.92849", "6.5"), encoding="utf-8")

    def disk_full(*args: object) -> None:
        raise duckdb.IOException("No space left on device")

    # The measurements and the old rows' deletion are written before the profile rows
    # fail: the transaction must take all of it back.
    monkeypatch.setattr(save_module, "write_profile", disk_full)
    assert ingest("auto", str(folder)) == 1
    after = snapshot(db_path)
    assert after["measurements"] == before["measurements"]
    assert after["profile"] == before["profile"]
    assert after["sources"] == before["sources"]
    reasons = [e[5] for e in after["errors"]]
    assert "IOException: No space left on device" in reasons


def test_the_same_run_under_another_name_is_a_duplicate(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = copy_samples(tmp_path, QAT)
    shutil.copy(folder / QAT, folder / "copy-of-qat.md")
    assert main(["auto", str(folder)]) == 0
    err = capsys.readouterr().err
    assert f"{QAT}: duplicate: same content as {folder / 'copy-of-qat.md'}" in err
    assert "(1 added, 1 duplicate)" in err
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 4
    # The check runs before every new document is stored: answered by the index of
    # migration 13, its cost does not grow with the store (a scan of every source took
    # 4.3 ms a document at 100,000).
    (content_hash,) = conn.execute("SELECT content_hash FROM sources").fetchone()
    twins = conn.execute(save_module.TWINS_SQL, [content_hash]).fetchall()
    assert twins == [(str(folder / "copy-of-qat.md"), "auto")]
    ((_, plan),) = conn.execute(
        "EXPLAIN ANALYZE " + save_module.TWINS_SQL, [content_hash]
    ).fetchall()
    assert "Index Scan" in plan


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not readable: empty file"),
        (b"   \n\n  ", "not readable: only white space"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4, "not readable: binary data"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "not readable: binary data"),
        (b"Run 100 samples \xff\xfe\xfa\x80\x80 average", "not valid utf-8 or gb18030"),
    ],
)
def test_unreadable_documents_fail_alone_with_a_clear_message(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    folder = copy_samples(tmp_path, QAT)
    (folder / "bad.log").write_bytes(content)
    assert main(["auto", str(folder)]) == 1  # a failed document makes the exit status 1
    err = capsys.readouterr().err
    assert "bad.log: failed" in err and reason in err
    assert "Traceback" not in err
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 4  # the rest
    (uri, _line, why) = conn.execute(
        "SELECT source_uri, line, reason FROM ingest_errors WHERE source_id IS NULL"
    ).fetchone()
    assert uri.endswith("bad.log") and reason in why


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [("gbk", "gb18030"), ("gb18030", "gb18030"), ("utf-16", "utf-16"), ("utf-8-sig", "utf-8-sig")],
)
def test_chinese_logs_in_other_encodings_are_read_and_the_encoding_recorded(
    tmp_path: Path, db_path: Path, encoding: str, expected: str
) -> None:
    text = (
        "## ERNIE 测试结果\n"
        "- 测试时间：2019年12月24日\n"
        "Run 5010 samples, average latency: 6.92849 ms per sample.\n"
        "200 显存不足\n"
    )
    path = tmp_path / f"log-{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    assert ingest("auto", str(path)) == 0
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT encoding FROM sources").fetchone()[0] == expected
    row = conn.execute(
        "SELECT s.benchmark, m.value, m.samples FROM measurements m JOIN series s USING (series_id)"
    ).fetchone()
    assert row == ("ernie", 6.92849, 5010)


def test_impossible_values_are_problems_not_crashes(tmp_path: Path, db_path: Path) -> None:
    path = tmp_path / "odd.log"
    path.write_text(
        "Run 100 samples, average latency: nan ms per sample.\n"
        "Run 100 samples, average latency: inf ms per sample.\n"
        "Run 100 samples, average latency: -3.2 ms per sample.\n"
        "Run 100 samples, average latency: 1e15 ms per sample.\n"
        "Run 100 samples, average latency: 7.25 ms per sample.\n",
        encoding="utf-8",
    )
    assert ingest("auto", str(path), "--benchmark", "ernie") == 0
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT value FROM measurements").fetchall() == [(7.25,)]
    lines = conn.execute("SELECT line FROM ingest_errors ORDER BY line").fetchall()
    assert lines == [(1,), (2,), (3,), (4,)]


def test_dry_run_prints_records_and_touches_no_database(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["auto", str(sample_path(PHASE)), "--dry-run"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds == ["phase", "problem"]
    phase = records[0]
    assert phase["name"] == "二期优化工作" and phase["owner"] == "NHZlX"
    assert [m["value"] for m in phase["milestones"]] == [10.0, 9.5]
    assert records[1]["line"] == 13
    assert not db_path.exists()


def test_a_missing_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["auto", str(tmp_path / "nope.log")]) == 2
    assert "nope.log: no such file or folder" in capsys.readouterr().err


def test_a_locked_database_is_waited_for_then_reported(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ok', flush=True);"
            " time.sleep(30)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        status = main(["auto", str(sample_path(QAT)), "--lock-timeout", "0.5"])
    finally:
        holder.kill()
        holder.wait()
    assert status == 2
    assert "Another ingest may be running" in capsys.readouterr().err


def test_a_large_log_read_in_chunks_gives_what_a_whole_read_gives(tmp_path: Path) -> None:
    block = sample_path(FUSION).read_text(encoding="utf-8")
    noise = "I0719 10:14:50.539557 70931 operator.cc:169] CUDAPlace(0) Op(increment).\n" * 300
    path = tmp_path / "big.md"
    path.write_text((noise + "\n" + block + "\n") * 40, encoding="utf-8")
    meta = DocMeta(uri="big.md")
    whole = read_document(path, "auto", meta).found
    chunked = read_document(path, "auto", meta, chunk_bytes=64 * 1024).found
    assert len(whole.measurements) == 80
    key = lambda m: (m.line, m.metric, m.value, m.samples)  # noqa: E731
    assert [key(m) for m in chunked.measurements] == [key(m) for m in whole.measurements]
    assert [(e.line, e.event, e.total) for e in chunked.profile_events] == [
        (e.line, e.event, e.total) for e in whole.profile_events
    ]
    assert [(p.line, p.subgraphs) for p in chunked.passes] == [
        (p.line, p.subgraphs) for p in whole.passes
    ]
    assert len({m.run for m in chunked.measurements}) == 40  # one run per pasted block


PASS_LOG = "benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md"


@pytest.mark.parametrize("window", [64 * 1024, 160])
def test_a_pass_log_without_blank_lines_is_never_cut_inside_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """A long tester log has no blank lines to cut at. Cut before a "detected" line, the
    count was lost (a problem "with no pass above it"); cut inside a predictor's pass
    sequence, its second half became a run of its own with orders from 0. The chunks now
    end before a sequence's first pass, else not before a "detected" line (window=160:
    too narrow for a sequence start, the second rule alone keeps every count)."""
    import ingest.documents as documents

    lines = sample_path(PASS_LOG).read_text(encoding="utf-8").splitlines(keepends=True)
    passes = [ln for ln in lines if ln.startswith("---")]
    assert sum("detected 14 subgraphs" in ln for ln in passes) == 1
    glog = "I0828 10:11:44.687104 2153053 fuse_pass_base.cc:59] "
    block = "".join(glog + ln if "detected" in ln else ln for ln in passes)
    path = tmp_path / "session.log"
    path.write_text(block * 60, encoding="utf-8")
    meta = DocMeta(uri="session.log")
    whole = read_document(path, "auto", meta).found
    monkeypatch.setattr(documents, "CUT_WINDOW", window)
    if window == 160:
        key = lambda p: (p.line, p.name, p.subgraphs)  # noqa: E731
    else:
        key = lambda p: (p.line, p.name, p.order, p.subgraphs, p.run)  # noqa: E731
    for chunk_bytes in range(1500, 2600, 97):  # cuts at every offset of the 1.4 KB block
        chunked = read_document(path, "auto", meta, chunk_bytes=chunk_bytes).found
        assert not chunked.problems
        assert [key(p) for p in chunked.passes] == [key(p) for p in whole.passes]
    assert len({p.run for p in whole.passes}) == 60
    assert sum(p.subgraphs == 14 for p in whole.passes) == 60


@pytest.mark.parametrize(
    "start",
    [
        "--- Running analysis [ir_graph_build_pass]",
        "&&&& RUNNING TensorRT.trtexec [TensorRT v8600] # trtexec --loadEngine=./model-FP32.plan",
        "============ Serving Benchmark Result ============",
        "2026-12-07T10:00:00.1234567Z ============ Serving Benchmark Result ============",
    ],
)
def test_a_chunk_ends_before_the_last_run_start_of_its_window(start: str) -> None:
    """With no blank line to cut at, a cut goes before the last run's first line (a
    predictor's first pass, trtexec's RUNNING line, a serving benchmark's result rule,
    each as the tools print them, the last behind a CI's stamp): the words every run start
    holds tell a window that has none, and must not miss one that has."""
    from ingest.documents import _cut_in

    line = b"I0719 10:14:50.000001 70931 operator.cc:99] CPU op ran\n"
    noise = line * 40
    window = noise + start.encode() + b"\n" + noise
    assert _cut_in(window, len(window) - 100) == len(noise)  # where the run's line starts
    limit = len(noise) * 2 - 100  # no run start: after the last whole line before it
    assert _cut_in(noise * 2, limit) == limit // len(line) * len(line)


@pytest.mark.parametrize("form", ["batch_size", "batch size", "copy"])
def test_paddle_print_time_is_never_cut_from_the_lines_above_it(tmp_path: Path, form: str) -> None:
    """PrintTime's "batch latency" line takes its batch size and threads from the two
    lines above it: a chunk never starts with either of the lower two (nor, in the model
    repositories' copy, with the line its latency goes on to). Paddle spells "batch_size"
    before 2021 and "batch size" since."""
    from tests.parsers.test_latency import PRINT_TIME, PRINT_TIME_COPY

    printed = PRINT_TIME_COPY if form == "copy" else PRINT_TIME.replace("batch_size", form)
    spelling = "batch size" if form == "copy" else form
    records = [printed.replace(f"{spelling}: 8", f"{spelling}: {k}") for k in (1, 2, 4, 8)]
    path = tmp_path / "helper.log"
    path.write_text("".join(records) * 30, encoding="utf-8")
    meta = DocMeta(uri="helper.log")
    whole = read_document(path, "auto", meta).found
    assert len(whole.measurements) == (120 if form == "copy" else 240)  # threads a record
    assert {m.params["batch_size"] for m in whole.measurements} == {1, 2, 4, 8}
    assert not whole.problems
    key = lambda m: (m.line, m.value, m.params, m.stats)  # noqa: E731
    for chunk_bytes in range(700, 1500, 61):  # cuts at every line of a 1.4 KB record
        chunked = read_document(path, "auto", meta, chunk_bytes=chunk_bytes).found
        assert [key(m) for m in chunked.measurements] == [key(m) for m in whole.measurements]


@pytest.mark.parametrize("report", ["cpp-inference-demo_trt-fp16.log", "tensorflow-report.log"])
def test_a_demo_report_is_never_cut_from_its_summary(tmp_path: Path, report: str) -> None:
    """A demo summary takes its model, device and settings from the report above it, and
    the REPORT form its QPS from the line below: a chunk never starts inside one (a glog
    log of reports has no blank line to cut at)."""
    from tests.parsers.test_latency import DEMO_REPORTS

    text = (DEMO_REPORTS / report).read_text(encoding="utf-8")
    records = [text.replace("Batch size: 1", f"Batch size: {k}") for k in (1, 2, 4, 8)]
    path = tmp_path / "demo.log"
    path.write_text("".join(records) * 30, encoding="utf-8")
    meta = DocMeta(uri="demo.log")
    whole = read_document(path, "auto", meta).found
    assert {m.params["batch_size"] for m in whole.measurements} == {1, 2, 4, 8}
    assert all(m.benchmark and m.device == "GPU" for m in whole.measurements)
    key = lambda m: (m.line, m.metric, m.value, m.device, m.params, m.samples)  # noqa: E731
    size = len(text)
    for chunk_bytes in range(size, 2 * size, 53):  # cuts at every line of a report
        chunked = read_document(path, "auto", meta, chunk_bytes=chunk_bytes).found
        assert [key(m) for m in chunked.measurements] == [key(m) for m in whole.measurements]


def _event_rows(found: object) -> list[tuple]:
    """(line, event, calls, total) of every profile event, objects and blocks alike."""
    from ingest import bulk

    bulk.materialise(found)
    return sorted((e.line, e.event, e.calls, e.total) for e in found.profile_events)


def test_a_table_longer_than_the_cut_window_is_not_split_between_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of a thousand rows has no blank line to cut at. Cut inside, its rows after
    the cut had no header to be read by: a 10 MB nsys GPU trace CSV of 57,949 kernels
    (bench_ingest's) kept 24,374 of them, silently. A cut between two rows now moves to
    the table's end."""
    import ingest.documents as documents

    lines = sample_path(FUSION).read_text(encoding="utf-8").splitlines(keepends=True)
    header = next(ln for ln in lines if ln.startswith("Event "))
    rows = [ln for ln in lines if ln.startswith("thread0::") and len(ln.split()) >= 9]
    assert len(rows) == 5  # the sample's sixth row is cut short
    table = header + "".join(
        row.replace("thread0::", f"thread0::op{k}_", 1) for k in range(200) for row in rows
    )
    noise = "I0719 10:14:50.539557 70931 operator.cc:169] CUDAPlace(0) Op(increment).\n"
    path = tmp_path / "profile.log"
    path.write_text(noise * 2000 + table + "\n" + noise * 2000, encoding="utf-8")
    meta = DocMeta(uri="profile.log")
    whole = read_document(path, "auto", meta)
    monkeypatch.setattr(documents, "CUT_WINDOW", 4096)
    chunked = read_document(path, "auto", meta, chunk_bytes=32 * 1024)
    assert len(_event_rows(whole.found)) == 200 * len(rows)
    assert _event_rows(chunked.found) == _event_rows(whole.found)
    assert not chunked.found.problems

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import bench_ingest

    trace = tmp_path / "cuda_gpu_trace.csv"
    kernels = bench_ingest.write_nsys_trace(trace, 1)
    meta = DocMeta(uri="cuda_gpu_trace.csv")
    for chunk_bytes in (2**30, 64 * 1024):
        found = read_document(trace, "auto", meta, chunk_bytes=chunk_bytes).found
        assert sum(calls for _, _, calls, _ in _event_rows(found)) == kernels

    # Longer than MAX_TABLE_BYTES: cut anyway, and said so on the line of the cut.
    monkeypatch.setattr(documents, "MAX_TABLE_BYTES", 16 * 1024)
    cut = read_document(path, "auto", DocMeta(uri="profile.log"), chunk_bytes=32 * 1024)
    problems = [p for p in cut.found.problems if "is read in parts from here" in p.reason]
    assert problems and all(p.line > 2001 for p in problems)
    text = path.read_text(encoding="utf-8").splitlines()
    assert all(text[p.line - 1].startswith("thread0::op") for p in problems)


def test_chunks_cover_the_file_and_end_at_line_ends_even_after_a_long_line(tmp_path: Path) -> None:
    from ingest.documents import plan_chunks

    path = tmp_path / "plan.log"
    lines = [f"line {i:05d} " + "x" * (i % 90) for i in range(4000)]
    lines[2600] = "y" * 5000  # a line longer than a chunk
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    with open(path, "rb") as fh:
        ranges = plan_chunks(fh.fileno(), len(data), chunk_bytes=4096)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))  # no gap
    assert all(data[end - 1 : end] == b"\n" for _, end in ranges)  # every cut at a line end
    long_start = data.index(b"y" * 5000)
    assert any(start <= long_start and end > long_start + 5000 for start, end in ranges)
    whole = read_document(path, "auto", DocMeta(uri="plan.log")).info
    small = read_document(path, "auto", DocMeta(uri="plan.log"), chunk_bytes=4096).info
    assert whole.n_lines == small.n_lines == 4001


def test_a_parser_bug_fails_its_document_only(
    tmp_path: Path,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import ingest.parsers.latency as latency

    def broken(doc: object) -> object:
        raise IndexError("list index out of range")

    monkeypatch.setattr(latency, "parse", broken)
    folder = copy_samples(tmp_path, QAT, PHASE)
    assert main(["auto", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "internal error, please report: IndexError: list index out of range" in err
    assert "Traceback" not in err
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT name FROM phases").fetchall() == [("二期优化工作",)]


def test_damaged_copies_of_every_sample_never_crash_the_reader(tmp_path: Path) -> None:
    """Truncations, flipped bytes and spliced lines of real documents: records or
    problems, never an exception (other than NotText for what is not text)."""
    import random

    from ingest.text import NotText
    from tests.conftest import SAMPLES

    rng = random.Random(20200204)
    documents = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".md", ".log"))
    path = tmp_path / "damaged.md"
    for original in documents:
        data = original.read_bytes()
        for _ in range(25):
            damaged = bytearray(data[: rng.randrange(1, len(data) + 1)])
            for _ in range(rng.randrange(4)):
                damaged[rng.randrange(len(damaged))] = rng.choice(b"|{}:\n -.0123456789e>#`")
            if rng.random() < 0.3:
                cut = rng.randrange(len(damaged))
                damaged[cut:cut] = damaged[: rng.randrange(len(damaged))]
            path.write_bytes(bytes(damaged))
            try:
                parsed = read_document(path, "auto", DocMeta(uri="damaged.md"))
            except NotText:
                continue
            lines = [m.line for m in parsed.found.measurements]
            assert all(1 <= n <= parsed.info.n_lines for n in lines), original.name


def test_one_file_named_two_ways_is_one_source(tmp_path: Path, db_path: Path) -> None:
    folder = copy_samples(tmp_path, QAT)
    assert ingest("auto", str(folder / QAT)) == 0
    assert ingest("auto", f"{folder}/./{QAT}") == 0
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT uri FROM sources").fetchall() == [(str(folder / QAT),)]


def test_the_same_bytes_read_another_way_are_read_again(
    tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_samples(tmp_path, FUSION)
    assert ingest("profiles", str(folder)) == 0  # only the profiler table
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 0
    conn.close()
    assert ingest("auto", str(folder)) == 0  # another kind: read again, latency too
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 2
    conn.close()
    newer = str(int(save_module.READER_VERSION) + 1)
    monkeypatch.setattr(save_module, "READER_VERSION", newer)  # a newer perfboard
    before = snapshot(db_path)["sources"]
    assert ingest("auto", str(folder)) == 0
    after = snapshot(db_path)["sources"]
    assert [row[5] for row in after] == [newer]
    assert [row[5] for row in before] == [str(int(newer) - 1)]


def test_a_large_logs_detection_runs_in_the_ingests_own_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers an ingest forked for a large log also examine its series' windows
    (two spawned interpreters importing the detector cost 0.5 s), and store the change
    points one process finds: ERNIE and BERT each fall 20 % at their 601st run."""
    import math

    import ingest.documents as documents_module
    from perfboard import alerts

    lines = []
    for i in range(1200):
        for model in ("ernie", "bert"):
            ms = (10.0 if i < 600 else 8.0) * (1 + 0.01 * math.sin(i * 1.7 + len(model)))
            lines.append(
                f"I0911 06:41:55.{i:06d}  7238 {model}_tester.cc:345] Run {5000 + i} samples,"
                f" average latency: {ms:.5f} ms per sample.\n"
            )
    log = tmp_path / "tester.log"
    log.write_text("".join(lines), encoding="utf-8")
    query = "SELECT series_id, position, round(change_pct, 2) FROM change_points ORDER BY ALL"
    pools: list[object] = []
    examine_all = alerts._examine_all

    def spied(tasks: list, pool: object = None) -> list:
        pools.append(pool)
        return examine_all(tasks, pool)

    monkeypatch.setattr(alerts, "_examine_all", spied)
    found = []
    for name in ("one.duckdb", "workers.duckdb"):
        if name == "workers.duckdb":  # the log counts as large, and its points as many
            monkeypatch.setattr(documents_module, "CHUNK_BYTES", 2**13)
            monkeypatch.setattr(alerts, "PARALLEL_MIN_POINTS", 0)
        assert ingest("auto", str(log), "--db", str(tmp_path / name)) == 0
        conn = duckdb.connect(str(tmp_path / name), read_only=True)
        found.append(conn.execute(query).fetchall())
        conn.close()
    one, workers = found
    assert one == [(1, 600, -19.98), (2, 600, -20.0)]
    assert workers == one
    assert pools[0] is None and type(pools[1]).__name__ == "ProcessPoolExecutor"


def test_worker_processes_store_exactly_what_one_process_stores(tmp_path: Path) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ingest.save import save_found
    from perfboard import db

    block = sample_path(FUSION).read_text(encoding="utf-8")
    noise = "I0719 10:14:50.539557 70931 operator.cc:169] CUDAPlace(0) Op(increment).\n" * 300
    path = tmp_path / "big.md"
    path.write_text((noise + "\n" + block + "\n") * 60, encoding="utf-8")
    meta = DocMeta(uri="big.md", project="ernie")
    stores = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        for name, workers in (("one.duckdb", None), ("pool.duckdb", pool)):
            parsed = read_document(path, "auto", meta, chunk_bytes=32 * 1024, pool=workers)
            store = tmp_path / name
            conn = db.connect(store)
            save_found(conn, parsed.info, parsed.found, parsed.rows)
            conn.close()
            stores.append(snapshot(store))
    one, pooled = stores
    assert len(one["measurements"]) == 120 and len(one["profile"]) == 300
    assert pooled == one
