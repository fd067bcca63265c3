"""ws_tables: whitespace tables in test reports, with their environment block."""

from __future__ import annotations

from datetime import datetime

import pytest

from ingest.parsers import ws_tables
from ingest.parsers.cells import DIMENSIONS
from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem
from tests.conftest import sample_doc, sample_path, text_doc

QA_SAMPLE = "benchmark-165_2020-02-04_xreki_qa-results.md"


def parse(doc: DocText) -> list[Item]:
    return list(ws_tables.parse(doc))


def measurements(items: list[Item]) -> list[Measurement]:
    return [item for item in items if isinstance(item, Measurement)]


def problems(items: list[Item]) -> list[Problem]:
    return [item for item in items if isinstance(item, Problem)]


def by_metric(items: list[Item], metric: str) -> dict[tuple[int, int], Measurement]:
    """(seq_len, batch_size) -> the measurement of one metric."""
    return {
        (int(m.params["seq_len"]), int(m.params["batch_size"])): m
        for m in measurements(items)
        if m.metric == metric
    }


# --- the real QA report -----------------------------------------------------------------


def test_qa_sample_rows_per_table() -> None:
    items = parse(sample_doc(QA_SAMPLE))
    assert problems(items) == []
    latency = by_metric(items, "latency")
    seq128 = sorted(b for s, b in latency if s == 128)
    seq512_ok = sorted(b for s, b in latency if s == 512 and latency[s, b].status == "ok")
    assert seq128 == [1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert seq512_ok == [1, 10, 20, 30, 40, 50, 100]
    assert len(measurements(items)) == (11 + 7 + 2) * 3


def test_qa_sample_values() -> None:
    items = parse(sample_doc(QA_SAMPLE))
    latency = by_metric(items, "latency")
    first = latency[128, 1]
    assert (first.value, first.unit, first.direction, first.line) == (8.664, "ms", "lower", 18)
    assert first.raw == "1 8.664 8.664 737"
    assert by_metric(items, "batch_latency")[128, 1].value == 8.664
    memory = by_metric(items, "gpu_memory")[128, 1]
    assert (memory.value, memory.unit, memory.direction) == (737.0, "MB", "lower")
    assert latency[128, 100].value == 6.504
    assert latency[512, 1].value == 36.123
    assert latency[512, 1].line == 32


def test_qa_sample_out_of_memory_rows_are_statuses() -> None:
    # The file writes 显存不⾜ with U+2F9C; sample_doc NFKC-normalises it to 显存不足.
    assert "\u2f9c" in sample_path(QA_SAMPLE).read_text(encoding="utf-8")
    items = parse(sample_doc(QA_SAMPLE))
    oom = [(m.line, m.metric, m.params, m.value) for m in measurements(items) if m.status == "oom"]
    assert oom == [
        (line, metric, {"seq_len": 512, "batch_size": batch}, None)
        for line, batch in ((39, 200), (40, 300))
        for metric in ("latency", "batch_latency", "gpu_memory")
    ]


def test_qa_sample_environment_applies_to_every_measurement() -> None:
    items = parse(sample_doc(QA_SAMPLE))
    for m in measurements(items):
        assert m.version == "a5a8d14414213fadcfcd7dc60c794d1a515a390e"
        assert m.device == "Tesla P4"
        assert m.measured_at == datetime(2019, 12, 24)
        assert m.testbed == {
            "cuda": "9.0",
            "cudnn": "7.3",
            "image": "paddlepaddle/paddle_manylinux_devel:cuda9.0_cudnn7",
            "gpu": "Tesla P4 8G(7611MB)",
            "gcc": "镜像gcc482",
        }
        assert (m.benchmark, m.framework, m.task) == ("", "paddle", "inference")


def test_other_samples_hold_no_whitespace_tables() -> None:
    for name in (
        "benchmark-165_2020-02-04_xreki_phase2-table.md",
        "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md",
        "benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md",
        "opbench_speed_abs_paddle_gpu.log",
    ):
        assert parse(sample_doc(name)) == []


# --- malformed and other variants -------------------------------------------------------

ENGLISH = """\
## Results
- Date: 2020-01-05
- Environment:
    - CUDA: 10.1
    - cuDNN: 7.6
    - Paddle commit: 0123abcd
    - image: paddle:latest-gpu
    - GPU: Tesla T4 16GB
    - GCC: 8.2
bs=8 fp16
threads latency (ms) qps
1 12.5 80
2 7.0
4 out of memory
8 6.1 nan
16 6.0 -2
32 overheated
"""


def test_english_environment_keys() -> None:
    m = measurements(parse(text_doc(ENGLISH)))[0]
    assert m.measured_at == datetime(2020, 1, 5)
    assert (m.version, m.device) == ("0123abcd", "Tesla T4")
    assert m.testbed == {
        "cuda": "10.1",
        "cudnn": "7.6",
        "image": "paddle:latest-gpu",
        "gpu": "Tesla T4 16GB",
        "gcc": "8.2",
    }


def test_title_line_params_and_unit_written_apart() -> None:
    items = measurements(parse(text_doc(ENGLISH)))
    got = [(m.line, m.metric, m.value, m.unit, m.direction, m.status) for m in items]
    assert got == [
        (12, "latency", 12.5, "ms", "lower", "ok"),
        (12, "qps", 80.0, "samples/s", "higher", "ok"),
        (14, "latency", None, "ms", "lower", "oom"),
        (14, "qps", None, "samples/s", "higher", "oom"),
        (15, "latency", 6.1, "ms", "lower", "ok"),
        (16, "latency", 6.0, "ms", "lower", "ok"),
    ]
    assert items[0].params == {"batch_size": 8, "precision": "fp16", "threads": 1}


def test_ragged_bad_and_unknown_rows_are_problems() -> None:
    got = [(p.line, p.reason) for p in problems(parse(text_doc(ENGLISH)))]
    assert got == [
        (13, "row has 2 cells for 3 columns"),
        (15, "column 'qps': value nan is not a number"),
        (16, "column 'qps': negative throughput -2.0 qps"),
        (17, "row text 'overheated' is neither numbers nor a status"),
    ]


def test_chinese_headers() -> None:
    text = "线程数 平均延迟(ms) 显存(MB)\n1 8.5 737\n4 显存不足\n"
    got = [(m.params, m.metric, m.value, m.status) for m in measurements(parse(text_doc(text)))]
    assert got == [
        ({"threads": 1}, "latency", 8.5, "ok"),
        ({"threads": 1}, "gpu_memory", 737.0, "ok"),
        ({"threads": 4}, "latency", None, "oom"),
        ({"threads": 4}, "gpu_memory", None, "oom"),
    ]


def test_ratio_column_is_skipped_and_unit_suffix_names_the_metric() -> None:
    text = "bs latency_ms speedup(x)\n1 8.6 1.2\n"
    items = parse(text_doc(text))
    assert [(m.metric, m.value, m.unit) for m in measurements(items)] == [("latency", 8.6, "ms")]
    assert problems(items) == []


def test_column_without_unit_is_a_problem() -> None:
    text = "log:\nbatch_size latency(ms) accuracy\n1 8.6 0.91\n"
    items = parse(text_doc(text))
    [problem] = problems(items)
    assert (problem.line, problem.raw) == (2, "batch_size latency(ms) accuracy")
    assert "'accuracy'" in problem.reason and "unit unknown" in problem.reason
    assert [(m.metric, m.value) for m in measurements(items)] == [("latency", 8.6)]


def test_bad_test_date_is_a_warning() -> None:
    text = "- 测试时间：上周\n\nbs latency(ms)\n1 2.5\n"
    items = parse(text_doc(text))
    [warning] = problems(items)
    assert (warning.line, warning.severity) == (1, "warning")
    assert measurements(items)[0].measured_at is None


def test_prose_and_log_lines_are_not_tables() -> None:
    text = (
        "bs latency(ms) is what we compare\n"
        "batch_size: 1 latency(ms) 8.6\n"
        "threads=4 latency(ms)\n"
        "1 8.6\n"
        "I0204 12:00:00 tester.cc:1] batch_size 1 latency(ms) 8.6\n"
        "batch_size latency(ms)\n"
        "no rows here\n"
    )
    assert parse(text_doc(text)) == []


def test_header_on_first_line_of_a_chunk() -> None:
    doc = DocText("batch_size latency(ms)\n1 8.6\n2 7.1", first_line=501)
    got = [(m.line, m.params["batch_size"], m.value) for m in measurements(parse(doc))]
    assert got == [(502, 1, 8.6), (503, 2, 7.1)]


def test_each_environment_block_is_read_once() -> None:
    text = "# A\n- 测试时间：bad\n\nbs latency(ms)\n1 2\n\nbs latency(ms)\n2 3\n"
    items = parse(text_doc(text))
    assert [type(i).__name__ for i in items] == ["Problem", "Measurement", "Measurement"]


@pytest.mark.parametrize("name", sorted(n for n in DIMENSIONS if " " not in n))
def test_anchors_cover_every_header_leader(name: str) -> None:
    for spelling in (name, name[0].upper() + name[1:]):
        assert any(anchor in spelling for anchor in ws_tables.ANCHORS), spelling
