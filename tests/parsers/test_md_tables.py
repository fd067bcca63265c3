"""md_tables: phase, results and op comparison tables, real and malformed."""

from __future__ import annotations

import pytest

from ingest.parsers import md_tables
from ingest.text import DocText
from perfboard.model import Item, Measurement, Milestone, Phase, Problem
from tests.conftest import sample_doc, text_doc

PHASE_SAMPLE = "benchmark-165_2020-02-04_xreki_phase2-table.md"
OP_SAMPLE = "benchmark-380_2020-05-06_xreki_op-timing-table.md"


def parse(doc: DocText) -> list[Item]:
    return list(md_tables.parse(doc))


def only(items: list[Item], kind: type) -> list:
    return [item for item in items if isinstance(item, kind)]


def cell(items: list[Item], benchmark: str, framework: str, metric: str) -> Measurement:
    [found] = [
        m
        for m in only(items, Measurement)
        if (m.benchmark, m.framework, m.metric) == (benchmark, framework, metric)
    ]
    return found


# --- real documents ---------------------------------------------------------------------


def test_phase_table_sample_gives_one_phase_with_metadata() -> None:
    items = parse(sample_doc(PHASE_SAMPLE))
    [phase] = only(items, Phase)
    assert phase.name == "二期优化工作"
    assert (phase.owner, phase.platform, phase.software) == ("NHZlX", "Tesla P4", "CUDA 10.0")
    assert (phase.metric, phase.unit, phase.value_header) == ("latency", "ms", "P4时间 (ms)")
    assert phase.line == 9  # the header row, which lacks its closing pipe
    assert [ms.label for ms in phase.milestones] == ["0", "1"]


def test_phase_sample_baseline_milestone() -> None:
    [phase] = only(parse(sample_doc(PHASE_SAMPLE)), Phase)
    first = phase.milestones[0]
    assert (first.ordinal, first.label, first.value, first.date) == (0, "0", 10.0, "2020-02-04")
    assert (first.pr_url, first.pr_number, first.pr_repo) == (None, None, None)
    assert first.reported_speedup_raw == "-"
    assert first.reported_reduction is None and first.reported_speedup is None
    assert first.computed_reduction is None and first.computed_speedup is None
    assert first.disagrees is False
    assert first.description == "baseline,CUDA10的时间比CUDA9的时间长"  # NFKC: "，" -> ","
    assert first.line == 11


def test_phase_sample_second_milestone_links_pr_and_agrees() -> None:
    [phase] = only(parse(sample_doc(PHASE_SAMPLE)), Phase)
    second = phase.milestones[1]
    assert (second.ordinal, second.label, second.value) == (1, "1", 9.5)
    assert second.pr_url == "https://github.com/PaddlePaddle/Paddle/pull/22424"
    assert (second.pr_number, second.pr_repo) == (22424, "PaddlePaddle/Paddle")
    assert second.reported_speedup_raw == "5%"
    assert second.reported_reduction == pytest.approx(0.05)
    assert second.reported_speedup is None
    assert second.computed_reduction == pytest.approx(0.05)
    assert second.computed_speedup == pytest.approx(10 / 9.5)
    assert second.disagrees is False
    assert second.line == 12
    assert second.raw.startswith("| 1 | 9.5 | 2020-02-04 |")


def test_phase_sample_row_cut_mid_url_is_a_problem_not_a_milestone() -> None:
    items = parse(sample_doc(PHASE_SAMPLE))
    [problem] = only(items, Problem)
    assert problem.line == 13
    assert problem.reason == "row cut short: 4 of 6 cells"
    assert problem.raw == "| 2 | 8.4 | 2020-02-04 | https://github.com/PaddlePaddle/Padd"
    assert (problem.parser, problem.severity) == ("md_tables", "error")
    assert [type(item) for item in items] == [Phase, Problem]  # document order


def test_op_table_sample_values() -> None:
    items = parse(sample_doc(OP_SAMPLE))
    cumsum = {
        (fw, metric): cell(items, "op/cumsum", fw, metric).value
        for fw in ("paddle", "tensorflow")
        for metric in ("total_time", "gpu_time")
    }
    assert cumsum == {
        ("paddle", "total_time"): 86.2771,
        ("paddle", "gpu_time"): 87.2404,
        ("tensorflow", "total_time"): 1.8483,
        ("tensorflow", "gpu_time"): 1.8017,
    }
    assert cell(items, "op/null", "paddle", "gpu_time").value == 2.2336e-06
    assert cell(items, "op/null", "tensorflow", "gpu_time").value == 4.2883e-07
    assert cell(items, "op/abs", "paddle", "total_time").value == 0.0344
    assert cell(items, "op/argsort", "tensorflow", "total_time").value == 15.7265


def test_op_table_sample_measurement_fields() -> None:
    items = parse(sample_doc(OP_SAMPLE))
    m = cell(items, "op/abs", "paddle", "total_time")
    assert (m.task, m.unit, m.direction, m.status, m.params) == (
        "op-forward",
        "ms",
        "lower",
        "ok",
        {},
    )
    assert m.line == 25
    assert m.raw == "| abs | 0.0344 | 0.0173 | 0.0318 |  0.0172 |"
    softmax = cell(items, "op/softmax", "tensorflow", "gpu_time")
    assert (softmax.value, softmax.params, softmax.line) == (0.0090, {"config_id": "0"}, 29)


def test_op_table_sample_cut_last_row_is_a_problem() -> None:
    items = parse(sample_doc(OP_SAMPLE))
    assert len(only(items, Measurement)) == 6 * 4  # null..softmax-0, four columns each
    [problem] = only(items, Problem)
    assert (problem.line, problem.reason) == (30, "row cut short: 3 of 5 cells")
    assert problem.raw == "| softmax-1 | 0.0228 | 0.0188"
    assert not [m for m in only(items, Measurement) if m.line == 30]


def test_samples_without_tables_give_nothing() -> None:
    # The samples README holds a (prose) table of files: not a table of values.
    for name in ("README.md", "benchmark-165_2020-02-04_xreki_qa-results.md"):
        assert parse(sample_doc(name)) == []


# --- phase tables, malformed variants ---------------------------------------------------

PHASE_EN = """\
# Phase 3
- owner: @alice
- platform: Tesla T4
- software:
    - CUDA 10.1
    - TensorRT 6.0

version | latency (ms) | date | PR | description | speedup
--- | --- | --- | --- | --- | ---
v0 | 10 | 2020/3/1 | - | baseline | -
v1 | 9 | 2020-03-02 | #22424 | fuse fc | 5%
v2 | 6.6 | 2020-03-03 | 22425 | fuse gelu | 1.36x
v3 | 6 | 2020-03-04 | PaddlePaddle/Paddle#22500 | int8 | 1.36x
"""


def test_phase_without_any_pipe_at_row_ends_and_english_keys() -> None:
    [phase] = only(parse(text_doc(PHASE_EN)), Phase)
    assert (phase.name, phase.owner, phase.platform) == ("Phase 3", "alice", "Tesla T4")
    assert phase.software == "CUDA 10.1, TensorRT 6.0"
    assert [ms.label for ms in phase.milestones] == ["v0", "v1", "v2", "v3"]
    assert [ms.line for ms in phase.milestones] == [10, 11, 12, 13]
    assert phase.milestones[0].date == "2020-03-01"  # "2020/3/1" written as ISO


def test_phase_pr_as_hash_bare_number_and_repo_ref() -> None:
    milestones = only(parse(text_doc(PHASE_EN)), Phase)[0].milestones
    prs = [(ms.pr_number, ms.pr_repo, ms.pr_url) for ms in milestones]
    assert prs == [
        (None, None, None),
        (22424, None, None),
        (22425, None, None),
        (22500, "PaddlePaddle/Paddle", None),
    ]


def test_phase_reported_percent_disagreeing_with_values() -> None:
    # 10 -> 9 ms is a 10% reduction; the table claims 5%.
    v1 = only(parse(text_doc(PHASE_EN)), Phase)[0].milestones[1]
    assert v1.reported_reduction == pytest.approx(0.05)
    assert v1.computed_reduction == pytest.approx(0.10)
    assert v1.disagrees is True


def test_phase_reported_speedup_agreeing_and_disagreeing() -> None:
    milestones = only(parse(text_doc(PHASE_EN)), Phase)[0].milestones
    v2, v3 = milestones[2], milestones[3]
    # 9 -> 6.6 is 1.3636x: "1.36x" agrees within its written precision.
    assert (v2.reported_speedup_raw, v2.reported_speedup) == ("1.36x", 1.36)
    assert v2.computed_speedup == pytest.approx(9 / 6.6)
    assert v2.disagrees is False
    # 6.6 -> 6 is 1.1x, not 1.36x.
    assert v3.computed_speedup == pytest.approx(1.1)
    assert v3.disagrees is True


def test_phase_speedup_written_with_capital_x() -> None:
    doc = text_doc(
        "## p\n| 版本 | 时间 (ms) | 加速效果 |\n|:--|--:|:-:|\n| a | 8 |  |\n| b | 4 | 2X |\n"
    )
    [phase] = only(parse(doc), Phase)
    b = phase.milestones[1]
    assert (b.reported_speedup, b.computed_speedup, b.disagrees) == (2.0, 2.0, False)


def test_phase_table_with_no_unit_is_a_problem_not_a_guess() -> None:
    doc = text_doc("# p\n| 版本 | P4时间 | PR |\n|---|---|---|\n| 0 | 10 | - |\n| 1 | 9.5 | - |\n")
    items = parse(doc)
    assert only(items, Phase) == []
    [problem] = items
    assert isinstance(problem, Problem)
    assert problem.line == 2
    assert "'P4时间'" in problem.reason and "unit unknown" in problem.reason


def test_phase_bad_values_become_problems_and_milestones_stay() -> None:
    text = (
        "# p\n"
        "| 版本 | 时间 (ms) | PR |\n"
        "|---|---|---|\n"
        "| 0 | 10 | - |\n"
        "| 1 | nan | - |\n"
        "| 2 | -3 | - |\n"
        "| 3 | 1e12 | see below |\n"
        "| 4 | 8 | - |\n"
    )
    items = parse(text_doc(text))
    [phase] = only(items, Phase)
    assert [ms.value for ms in phase.milestones] == [10.0, None, None, None, 8.0]
    # The last value compares with the previous milestone that has one.
    assert phase.milestones[4].computed_reduction == pytest.approx(0.2)
    problems = [(p.line, p.reason) for p in only(items, Problem)]
    assert problems == [
        (5, "milestone '1': value nan is not a number"),
        (6, "milestone '2': negative time -3.0 ms"),
        (7, "milestone '3': absurd time 1000000000000.0 ms (more than a day)"),
        (7, "milestone '3': PR 'see below' not understood"),
    ]


def test_phase_cut_last_row_keeps_rows_before() -> None:
    text = "# p\n| 版本 | 时间 (ms) | PR |\n|---|---|---|\n| 0 | 10 | - |\n| 1 | 9 | https://gith"
    items = parse(text_doc(text))
    [phase] = only(items, Phase)
    assert [ms.label for ms in phase.milestones] == ["0"]
    [problem] = only(items, Problem)
    # All its cells are there, but the text ends mid-URL without the closing pipe.
    assert problem.line == 5
    assert problem.reason == (
        "row cut short: 3 of 3 cells, the last one unclosed at the end of the text"
    )


def test_phase_row_cut_before_its_last_cells() -> None:
    text = "# p\n| 版本 | 时间 (ms) | PR | 描述 |\n|---|---|---|---|\n| 0 | 10 | - | a |\n| 1 | 9"
    [problem] = only(parse(text_doc(text)), Problem)
    assert (problem.line, problem.reason) == (5, "row cut short: 2 of 4 cells")


def test_phase_without_heading_is_named_after_the_document() -> None:
    doc = text_doc("| step | latency (ms) |\n|---|---|\n| a | 2 |\n", title="ERNIE on T4")
    items = parse(doc)
    [phase] = only(items, Phase)
    assert phase.name == "ERNIE on T4"
    [warning] = only(items, Problem)
    assert (warning.line, warning.severity) == (1, "warning")


# --- results tables ---------------------------------------------------------------------

QAT = """\
QAT results on CLX:

|     Threads  | FP32 Latency (ms) | QAT INT8 Latency (ms)    | Ratio (FP32/INT8) |
|---|---|---|---|
| 1 thread     |       237.21          |      79.26           |    2.99X       |
| 4 threads | 70.1 | 显存不足 | - |
| 8 threads | - | OOM | 1x |
"""


def test_results_table_measurements_with_precision_and_dimension() -> None:
    items = parse(text_doc(QAT))
    fp32, int8 = only(items, Measurement)[:2]
    assert (fp32.metric, fp32.value, fp32.unit, fp32.direction) == (
        "latency",
        237.21,
        "ms",
        "lower",
    )
    assert fp32.params == {"threads": 1, "precision": "fp32"}
    assert int8.value == 79.26
    assert int8.params == {"threads": 1, "precision": "int8", "quantization": "qat"}
    assert (fp32.benchmark, fp32.framework, fp32.task, fp32.line) == ("", "paddle", "inference", 5)


def test_results_table_ratio_column_skipped_and_oom_cells_are_statuses() -> None:
    items = parse(text_doc(QAT))
    assert only(items, Problem) == []  # ratios are derived numbers, not problems
    rows = [(m.line, m.params["threads"], m.value, m.status) for m in only(items, Measurement)]
    assert rows == [
        (5, 1, 237.21, "ok"),
        (5, 1, 79.26, "ok"),
        (6, 4, 70.1, "ok"),
        (6, 4, None, "oom"),
        (7, 8, None, "oom"),  # "-" is skipped, "OOM" is a status
    ]


def test_results_table_without_separator_row() -> None:
    # As quoted in docs/formats.md section 4: no |---| row; the unit in the header shows it
    # is a table.
    text = (
        "|     Threads  | FP32 Latency (ms) | QAT INT8 Latency (ms)    | Ratio (FP32/INT8) |\n"
        "| 1 thread     |       237.21          |      79.26           |    2.99X       |\n"
    )
    values = [(m.line, m.value) for m in only(parse(text_doc(text)), Measurement)]
    assert values == [(2, 237.21), (2, 79.26)]


def test_results_table_bad_cells_become_problems() -> None:
    text = (
        "| bs | latency (ms) | qps |\n"
        "|---|---|---|\n"
        "| 1 | nan | 10 |\n"
        "| 2 | -1 | 20 |\n"
        "| 4 | 1e9 | fast |\n"
        "| x | 3 | 30 |\n"
    )
    items = parse(text_doc(text))
    problems = [(p.line, p.reason) for p in only(items, Problem)]
    assert problems == [
        (3, "column 'latency (ms)': value nan is not a number"),
        (4, "column 'latency (ms)': negative time -1.0 ms"),
        (5, "column 'latency (ms)': absurd time 1000000000.0 ms (more than a day)"),
        (5, "column 'qps': 'fast' is not a number"),
        (6, "'bs' cell 'x' is not a number"),
    ]
    qps = [(m.params, m.metric, m.value, m.unit, m.direction) for m in only(items, Measurement)]
    assert qps == [
        ({"batch_size": 1}, "qps", 10.0, "samples/s", "higher"),
        ({"batch_size": 2}, "qps", 20.0, "samples/s", "higher"),
    ]


def test_results_table_unit_in_cells_and_no_unit_anywhere() -> None:
    text = "| batch_size | time | accuracy |\n|---|---|---|\n| 1 | 6.25us | 0.91 |\n"
    items = parse(text_doc(text))
    [m] = only(items, Measurement)
    assert (m.metric, m.value, m.unit) == ("latency", pytest.approx(0.00625), "ms")
    [problem] = only(items, Problem)
    assert problem.line == 1
    assert problem.reason.startswith("column 'accuracy' holds numbers but names no unit")


def test_results_table_chinese_headers_and_other_framework() -> None:
    text = (
        "| 线程数 | 平均延迟 (ms) | TensorFlow 平均延迟 (ms) | 显存 (MB) |\n"
        "| --- | --- | --- | --- |\n"
        "| 1 | 8.5 | 9.1 | 737 |\n"
    )
    got = [
        (m.framework, m.metric, m.value, m.unit) for m in only(parse(text_doc(text)), Measurement)
    ]
    assert got == [
        ("paddle", "latency", 8.5, "ms"),
        ("tensorflow", "latency", 9.1, "ms"),
        ("paddle", "gpu_memory", 737.0, "MB"),
    ]


def test_unseparated_table_of_unknown_kind_is_left_alone() -> None:
    # ASCII tables of other tools look like this; other parsers read them.
    assert parse(text_doc("| Event | Total (ms) |\n| fc | 1.0 |\n")) == []


def test_table_of_values_with_unknown_first_column_is_a_warning() -> None:
    text = "| item | latency (ms) |\n|---|---|\n| a | 1 |\n"
    [problem] = parse(text_doc(text))
    assert isinstance(problem, Problem)
    assert (problem.line, problem.severity) == (1, "warning")


def test_a_case_column_names_the_series_of_the_values_beside_it() -> None:
    # "case" is a config column of PR tables (pr_tables): its cell goes into params.
    [m] = parse(text_doc("| case | latency (ms) |\n|---|---|\n| a | 1 |\n"))
    assert isinstance(m, Measurement)
    assert (m.metric, m.value, m.unit, m.params) == ("latency", 1.0, "ms", {"case": "a"})


# --- op tables, malformed variants ------------------------------------------------------


def test_op_table_missing_closing_pipes_and_extra_empty_cell() -> None:
    text = (
        "op | paddle-total (ms) | tensorflow-gpu (us)\n"
        "---|---|---\n"
        "abs | 0.0344 | 17.2 | \n"
        "relu | 1e-3 | - |  |\n"
    )
    items = parse(text_doc(text))
    assert only(items, Problem) == []
    got = [(m.benchmark, m.framework, m.metric, m.value) for m in only(items, Measurement)]
    assert got == [
        ("op/abs", "paddle", "total_time", 0.0344),
        ("op/abs", "tensorflow", "gpu_time", pytest.approx(0.0172)),
        ("op/relu", "paddle", "total_time", 0.001),
    ]


def test_closed_row_with_missing_cells_is_padded_with_a_warning() -> None:
    text = "| api | paddle-total (ms) | paddle-gpu (ms) |\n|---|---|---|\n| abs | 0.5 |\n"
    items = parse(text_doc(text))
    [m] = only(items, Measurement)
    assert (m.benchmark, m.metric, m.value) == ("op/abs", "total_time", 0.5)
    [warning] = only(items, Problem)
    assert (warning.line, warning.severity) == (3, "warning")


# --- scanning ---------------------------------------------------------------------------


def test_table_found_after_prose_and_bullets_and_in_chunks() -> None:
    text = "- a | b\n- c\n\n| op | paddle-total (ms) |\n|---|---|\n| abs | 1 |\n"
    [m] = parse(DocText(text, first_line=101))  # a chunk of a larger log
    assert isinstance(m, Measurement)
    assert m.line == 106


def test_two_tables_stacked_without_blank_line() -> None:
    text = (
        "| op | paddle-total (ms) |\n|---|---|\n| abs | 1 |\n"
        "| bs | latency (ms) |\n|---|---|\n| 2 | 3 |\n"
    )
    got = [(m.benchmark, m.params, m.value, m.line) for m in parse(text_doc(text))]
    assert got == [("op/abs", {}, 1.0, 3), ("", {"batch_size": 2}, 3.0, 6)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "|",
        "|---|",
        "|---|\n| a |",
        "| a |\n|---|",
        "| a | b |\n|---|---|\n",
        "| 版本 | 时间 (ms) |\n|---|---|\n| 0 |",
        "| op | x (ms) |\n|---|---|\n| | 1 |\n|  |",
        "a | b\n--|--\n" + "| |\n" * 5,
        "```\n| x |\n|:-:|\n```",
    ],
)
def test_degenerate_input_never_raises(text: str) -> None:
    for item in parse(text_doc(text)):
        assert isinstance(item, (Measurement, Phase, Problem, Milestone))


def test_large_log_without_tables_gives_nothing() -> None:
    line = "I0204 12:00:00.123 tester.cc:120] batch_size=1 | repeat 100 | latency 8.6 ms (avg)\n"
    assert parse(DocText(line * 20_000)) == []


def test_a_target_bullet_becomes_the_phase_target_in_its_unit() -> None:
    text = (
        "# 三期优化工作\n- 负责人：@NHZlX\n- 目标：7.5ms\n\n"
        "| 版本 | P4时间 (ms) | 记录时间 | PR |\n|---|---|---|---|\n"
        "| 0 | 9 | 2020-03-01 | - |\n| 1 | 8 | 2020-03-08 | #23114 |\n"
    )
    (phase,) = [i for i in md_tables.parse(text_doc(text)) if isinstance(i, Phase)]
    assert (phase.name, phase.target, phase.unit) == ("三期优化工作", 7.5, "ms")
    in_us = text.replace("目标：7.5ms", "target: 7500 us")
    (phase,) = [i for i in md_tables.parse(text_doc(in_us)) if isinstance(i, Phase)]
    assert phase.target == 7.5
    no_number = text.replace("目标：7.5ms", "目标：尽快")
    items = list(md_tables.parse(text_doc(no_number)))
    assert next(i for i in items if isinstance(i, Phase)).target is None
    assert any("has no number" in i.reason for i in items if isinstance(i, Problem))


def test_a_model_table_of_bare_variant_columns_is_a_variant_table() -> None:
    # "模型 | 优化前 | 优化后": the variants name no unit (the text does); the results reader
    # would call each column unit-less, the variant reader reads the text's unit
    text = "单位：ms\n\n| 模型 | 优化前 | 优化后 |\n|---|---|---|\n| ResNet50 | 10.5 | 8.1 |\n"
    items = parse(text_doc(text))
    got = [(m.benchmark, m.params, m.value, m.unit) for m in only(items, Measurement)]
    assert got == [
        ("ResNet50", {"variant": "优化前"}, 10.5, "ms"),
        ("ResNet50", {"variant": "优化后"}, 8.1, "ms"),
    ]
    assert [p.severity for p in only(items, Problem)] == ["warning"]


def test_a_model_table_with_units_in_its_headers_stays_a_results_table() -> None:
    text = "| model | latency (ms) | qps |\n|---|---|---|\n| models/resnet50 | 10.5 | 95 |\n"
    got = [(m.benchmark, m.metric, m.params) for m in only(parse(text_doc(text)), Measurement)]
    assert got == [("resnet50", "latency", {}), ("resnet50", "qps", {})]


def test_an_accuracy_table_of_models_says_nothing() -> None:
    text = "| model | top1 | top5 |\n|---|---|---|\n| resnet50 | 76.1 | 92.9 |\n"
    assert parse(text_doc(text)) == []


def test_a_numeric_table_no_reader_takes_says_why() -> None:
    text = "| name | alpha | beta |\n|---|---|---|\n| x | 0.52 | 0.61 |\n"
    [warning] = parse(text_doc(text))
    assert isinstance(warning, Problem) and warning.severity == "warning"
    assert warning.line == 1 and "not read" in warning.reason
