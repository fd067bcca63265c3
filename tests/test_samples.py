"""Every bundled document, through the whole ingest into the store: the values in it.

The parser tests check each format on its own; these check what a user of the demo
database sees: the right model, run, variant, version and date on each number.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def store(demo_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = duckdb.connect(str(demo_db), read_only=True)
    yield conn
    conn.close()


def values(conn: duckdb.DuckDBPyConnection, document: str, where: str = "true") -> list[tuple]:
    """(benchmark, metric, framework, params, value, status, samples, warmup, run, line)."""
    return conn.execute(
        "SELECT s.benchmark, s.metric, s.framework, s.params::VARCHAR, m.value, m.status,"
        " m.samples, m.warmup, m.run, m.line"
        " FROM measurements m JOIN series s USING (series_id) JOIN sources src USING (source_id)"
        f" WHERE src.uri = ? AND ({where}) ORDER BY m.line, s.metric, s.framework",
        [f"data/samples/{document}"],
    ).fetchall()


def errors(conn: duckdb.DuckDBPyConnection, document: str) -> list[tuple]:
    return conn.execute(
        "SELECT line, reason FROM ingest_errors WHERE source_uri = ? ORDER BY line",
        [f"data/samples/{document}"],
    ).fetchall()


def test_every_manifest_document_is_stored_and_none_failed(
    store: duckdb.DuckDBPyConnection,
) -> None:
    with open(SAMPLES / "perfboard-manifest.csv", encoding="utf-8") as fh:
        listed = {f"data/samples/{row['file']}" for row in csv.DictReader(fh)}
    stored = dict(store.execute("SELECT uri, status FROM sources").fetchall())
    # beside them, the simulated nightly history of the demo (data/simulated/README.md)
    assert set(stored) == listed | {"data/simulated/ernie-p4-nightly.jsonl"}
    assert "failed" not in stored.values()


def test_phase2_table(store: duckdb.DuckDBPyConnection) -> None:
    doc = "benchmark-165_2020-02-04_xreki_phase2-table.md"
    phase = store.execute(
        "SELECT p.name, p.project, p.benchmark, p.owner, p.platform, p.software, p.unit,"
        " p.value_header, p.baseline FROM phases p JOIN sources s USING (source_id)"
        " WHERE s.uri = ?",
        [f"data/samples/{doc}"],
    ).fetchone()
    assert phase == (
        "二期优化工作",
        "ernie",
        "ernie",
        "NHZlX",
        "Tesla P4",
        "CUDA 10.0",
        "ms",
        "P4时间 (ms)",
        10.0,
    )
    rows = store.execute(
        "SELECT label, value, date::VARCHAR, pr_repo, pr_number, pr_url, reported_speedup_raw,"
        " reported_reduction, round(computed_reduction, 6), disagrees FROM milestones"
        " ORDER BY ordinal"
    ).fetchall()
    assert rows == [
        ("0", 10.0, "2020-02-04", None, None, None, "-", None, None, False),
        (
            "1",
            9.5,
            "2020-02-04",
            "PaddlePaddle/Paddle",
            22424,
            "https://github.com/PaddlePaddle/Paddle/pull/22424",
            "5%",
            0.05,
            0.05,
            False,
        ),
    ]
    assert errors(store, doc) == [(13, "row cut short: 4 of 6 cells")]


def test_qa_results(store: duckdb.DuckDBPyConnection) -> None:
    doc = "benchmark-165_2020-02-04_xreki_qa-results.md"
    latency = values(store, doc, "s.metric = 'latency'")
    seq128 = [r for r in latency if '"seq_len":128' in r[3]]
    assert len(seq128) == 11
    assert seq128[0][:6] == (
        "ernie",
        "latency",
        "paddle",
        '{"batch_size":1,"seq_len":128}',
        8.664,
        "ok",
    )
    seq512 = [r for r in latency if '"seq_len":512' in r[3]]
    assert [r[4] for r in seq512[:7]] == [36.123, 31.663, 31.75, 32.28, 32.13, 32.917, 34.254]
    assert [(r[3], r[5]) for r in seq512[7:]] == [
        ('{"batch_size":200,"seq_len":512}', "oom"),
        ('{"batch_size":300,"seq_len":512}', "oom"),
    ]
    env = store.execute(
        "SELECT DISTINCT m.version, s.device, s.testbed->>'cuda', s.testbed->>'cudnn',"
        " m.measured_at::VARCHAR FROM measurements m JOIN series s USING (series_id)"
        " JOIN sources src USING (source_id) WHERE src.uri = ?",
        [f"data/samples/{doc}"],
    ).fetchall()
    assert env == [
        (
            "a5a8d14414213fadcfcd7dc60c794d1a515a390e",
            "Tesla P4",
            "9.0",
            "7.3",
            "2019-12-24 00:00:00",
        )
    ]
    memory = values(store, doc, "s.metric = 'gpu_memory' AND m.status = 'ok'")
    assert (memory[0][4], memory[-1][4]) == (737.0, 4951.0)
    assert errors(store, doc) == []


def test_qat_bert_fp32_against_int8(store: duckdb.DuckDBPyConnection) -> None:
    rows = values(store, "paddle-21228_2019-11-19_sand3r-_qat-latency.md")
    assert [(r[0], r[1], r[3], r[4], r[6], r[7], r[8]) for r in rows] == [
        ("bert", "latency", '{"precision":"fp32","quantization":"qat"}', 181.305, 100, None, 0),
        (
            "bert",
            "latency_excl_warmup",
            '{"precision":"fp32","quantization":"qat"}',
            181.006,
            99,
            1,
            0,
        ),
        ("bert", "latency", '{"precision":"int8","quantization":"qat"}', 50.4984, 100, None, 1),
        (
            "bert",
            "latency_excl_warmup",
            '{"precision":"int8","quantization":"qat"}',
            48.1151,
            99,
            1,
            1,
        ),
    ]


def test_fc_elementwise_layernorm_fusion_run(store: duckdb.DuckDBPyConnection) -> None:
    doc = "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md"
    rows = values(store, doc)
    assert [(r[1], r[4], r[6], r[7], r[8], r[9]) for r in rows] == [
        ("latency", 6.92849, 5010, None, 0, 8),
        ("latency_excl_warmup", 6.54723, 5009, 1, 0, 9),
    ]
    when = store.execute(
        "SELECT min(measured_at)::VARCHAR FROM measurements m JOIN sources s USING (source_id)"
        " WHERE s.uri = ?",
        [f"data/samples/{doc}"],
    ).fetchone()[0]
    assert when == "2019-09-11 06:41:55.494792"
    passes = store.execute(
        "SELECT p.name, p.subgraphs, p.run, p.line FROM passes p JOIN sources s USING (source_id)"
        " WHERE s.uri = ?",
        [f"data/samples/{doc}"],
    ).fetchall()
    assert passes == [("fc_elementwise_layernorm_fuse_pass", 24, 0, 3)]
    events = store.execute(
        "SELECT e.event, e.thread, e.calls, e.total, e.cpu_time, e.gpu_ratio, e.run"
        " FROM profile_events e JOIN sources s USING (source_id) WHERE s.uri = ? ORDER BY e.line",
        [f"data/samples/{doc}"],
    ).fetchall()
    assert [e[0] for e in events] == [
        "fc",
        "fused_fc_elementwise_layernorm",
        "matmul",
        "transpose2",
        "softmax",
    ]
    assert events[0] == ("fc", "thread0", 255459, 24269.7, 12361.669096, 0.490654, 0)
    assert events[1][2:4] == (115207, 17699.9)
    assert {e[6] for e in events} == {0}  # the profile belongs to the run of the latency
    assert errors(store, doc) == [(20, "profiler row cut short: 1 of 9 fields")]


def test_fuse_elewise_add_act_pass_sequence(store: duckdb.DuckDBPyConnection) -> None:
    passes = store.execute(
        'SELECT p.name, p.kind, p."order", p.subgraphs FROM passes p'
        " JOIN sources s USING (source_id) WHERE s.uri LIKE '%fuse-elewise-add-act.md'"
        ' ORDER BY p."order"'
    ).fetchall()
    assert len(passes) == 16
    assert passes[0] == ("ir_graph_build_pass", "analysis", 0, None)
    assert ("fuse_elewise_add_act_pass", "ir", 5, 14) in passes
    assert passes[-1] == ("ir_params_sync_among_devices_pass", "analysis", 15, None)


def test_profile_report_and_quoted_profile(store: duckdb.DuckDBPyConnection) -> None:
    mul = store.execute(
        "SELECT e.place, e.calls, e.total, e.cpu_ratio FROM profile_events e"
        " JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE '%profile-report.md' AND e.event = 'mul'"
    ).fetchone()
    assert mul == ("All", 370666, 32332.5, 0.391142)
    assert errors(store, "benchmark-165_xreki_profile-report.md") == [
        (18, "profiler row cut short: 7 of 9 fields")
    ]
    memcpy = store.execute(
        "SELECT e.calls, e.total, e.thread FROM profile_events e JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE '%profile-timeline.md' AND e.event = 'GpuMemcpyAsync:CPU->GPU'"
    ).fetchone()
    assert memcpy == (480, 7787.05, "")
    assert errors(store, "benchmark-148_2019-08-01_wangchaochaohu_profile-timeline.md") == [
        (11, "profiler row cut short: 2 of 9 fields")
    ]


def test_analysis_output_paddle_against_tensorflow(store: duckdb.DuckDBPyConnection) -> None:
    doc = "benchmark-222_2019-09-25_xreki_analysis-output.md"
    rows = [(r[0], r[1], r[2], r[4]) for r in values(store, doc)]
    assert ("seq2seq", "step_time", "paddle", 202.0) in rows
    assert ("seq2seq", "throughput", "paddle", 4.96) in rows
    assert ("seq2seq", "throughput", "tensorflow", 6.576) in rows
    assert ("seq2seq", "throughput", "tensorflow", 6.849) in rows
    assert errors(store, doc) == [(24, "FINAL_RESULT value '6.' is cut or not a number")]


def test_op_benchmark_v1(store: duckdb.DuckDBPyConnection) -> None:
    rows = values(store, "benchmark-282_2019-11-26_xreki_op-benchmark-v1.md", "m.run = 0")
    assert [(r[0], r[1], r[2], r[4], r[6]) for r in rows] == [
        ("op/abs", "total_time", "paddle", 2.76374, 980),
        ("op/abs", "total_time", "tensorflow", 1.91671, 980),
    ]
    diff = values(
        store, "benchmark-282_2019-11-26_xreki_op-benchmark-v1.md", "s.metric = 'max_diff'"
    )
    assert [(r[0], r[4]) for r in diff] == [("op/abs", 0.0)]


def test_op_timing_table(store: duckdb.DuckDBPyConnection) -> None:
    doc = "benchmark-380_2020-05-06_xreki_op-timing-table.md"
    cumsum = values(store, doc, "s.benchmark = 'op/cumsum'")
    assert [(r[1], r[2], r[4]) for r in cumsum] == [
        ("gpu_time", "paddle", 87.2404),
        ("gpu_time", "tensorflow", 1.8017),
        ("total_time", "paddle", 86.2771),
        ("total_time", "tensorflow", 1.8483),
    ]
    null = values(store, doc, "s.benchmark = 'op/null' AND s.metric = 'gpu_time'")
    assert [r[4] for r in null] == [2.2336e-06, 4.2883e-07]
    assert errors(store, doc) == [(30, "row cut short: 3 of 5 cells")]


def test_op_benchmark_v2_speed_and_accuracy(store: duckdb.DuckDBPyConnection) -> None:
    speed = values(store, "opbench_speed_abs_paddle_gpu.log")
    by_metric = {r[1]: r[4] for r in speed}
    assert by_metric == {
        "gpu_time_total": 360.3661,
        "total_include_wall_time": 1.5238642692565918,
        "total_time": 1.489502191543579,
        "wall_time": 0.034362077713012695,
        "gpu_time": 3.6036606226479644,
    }
    assert {r[0] for r in speed} == {"op/abs"}
    version = store.execute(
        "SELECT DISTINCT m.version FROM measurements m JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE '%speed_abs_paddle_gpu.log' AND m.version IS NOT NULL"
    ).fetchall()
    assert version == [("e8d5868e9720ee7b5bd8c9ff1cf2e6e7b7f1998a",)]
    kernel = store.execute(
        "SELECT e.calls, e.total, e.ratio FROM profile_events e JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE '%speed_abs_paddle_gpu.log' AND e.event = '[CUDA memcpy HtoD]'"
    ).fetchone()
    assert kernel == (4, 210.67, 0.5846)
    accuracy = values(store, "opbench_accuracy_resize_bilinear.log")
    assert [(r[0], r[1], r[4]) for r in accuracy] == [
        ("op/resize_bilinear", "max_diff", 9.563419342041016)
    ]


def test_mkldnn_pass_log(store: duckdb.DuckDBPyConnection) -> None:
    doc = "paddle-16841_2019-04-24_jczaja_ir-pass-log.md"
    fc = store.execute(
        "SELECT p.subgraphs, p.line FROM passes p JOIN sources s USING (source_id)"
        " WHERE s.uri = ? AND p.name = 'fc_fuse_pass'",
        [f"data/samples/{doc}"],
    ).fetchone()
    assert fc == (12, 16)
    assert errors(store, doc) == [(18, "pass log line cut short")]


@pytest.mark.parametrize(
    "doc",
    [
        # Plans and prose: numbers in sentences ("从1.86---->2.19"), no format perfboard knows.
        "benchmark-148_2019-07-25_wangchaochaohu_reader-speed.md",
        "benchmark-148_2019-07-25_xreki_fetch-steps.md",
        "benchmark-148_2019-07-25_xreki_memcpy-analysis.md",
        "benchmark-148_2019-07-25_xreki_plan.md",
        "benchmark-151_2019-07-25_zhaoyuchen2018_description.md",
        "benchmark-151_2019-07-25_zhaoyuchen2018_weekly-progress.md",
        "benchmark-151_2019-07-26_xreki_lookup-table-sequence-pool.md",
        "benchmark-151_2019-07-26_xreki_search-pyramid-hash.md",
        "paddle-21228_2019-11-18_sand3r-_description.md",
    ],
)
def test_prose_is_recorded_as_unrecognised_with_nothing_invented(
    store: duckdb.DuckDBPyConnection, doc: str
) -> None:
    assert values(store, doc) == []
    [(line, reason)] = errors(store, doc)
    assert line == 0 and reason.startswith("no known format found; perfboard reads: ")
    status = store.execute(
        "SELECT status, n_measurements FROM sources WHERE uri = ?", [f"data/samples/{doc}"]
    ).fetchone()
    assert status == ("unrecognised", 0)


@pytest.mark.parametrize(
    "doc",
    [
        # PR descriptions claim effects ("from 10ms to 9.5ms"): claims, not measurements.
        "paddle-pr-22486_2020-02-07_nhzlx_description.md",
        "paddle-pr-22494_2020-02-07_nhzlx_description.md",
    ],
)
def test_claims_are_read_as_claims_with_nothing_invented(
    store: duckdb.DuckDBPyConnection, doc: str
) -> None:
    assert values(store, doc) == []
    assert errors(store, doc) == []
    status = store.execute(
        "SELECT status, n_measurements, parser FROM sources WHERE uri = ?",
        [f"data/samples/{doc}"],
    ).fetchone()
    assert status == ("ok", 0, "claims")  # read by the claims parser (it said "none")
