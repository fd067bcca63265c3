"""ingest.parsers.analysis on the analysis.py output of benchmark PR #222 and variants."""

from __future__ import annotations

from ingest.parsers import analysis
from perfboard.model import Measurement, Problem
from tests.conftest import sample_doc, text_doc

SAMPLE = "benchmark-222_2019-09-25_xreki_analysis-output.md"
COMMAND = (
    "+ python /b/scripts/analysis.py --filename /b/static_graph/seq2seq/paddle/log_seq2seq "
    "--keyword avg_time: --separator ' ' --position -2 --base_batch_size 128 --skip_steps 0 "
    "--model_mode 2 --model_name seq2seq --run_mode sp --index speed --gpu_num 1 --range 0"
)
PARAMS = {"batch_size": 128, "gpu_num": 1, "run_mode": "sp"}


def parse_text(text: str) -> list:
    return list(analysis.parse(text_doc(text)))


def test_paddle_and_tensorflow_runs_of_the_sample() -> None:
    items = list(analysis.parse(sample_doc(SAMPLE)))
    got = [
        (i.line, i.framework, i.metric, i.value, i.unit, i.params["skip_steps"])
        for i in items
        if isinstance(i, Measurement)
    ]
    assert got == [
        (6, "paddle", "step_time", 202.0, "ms/step", 0),
        (7, "paddle", "throughput", 4.96, "steps/s", 0),
        (17, "tensorflow", "step_time", 152.0, "ms/step", 0),
        (18, "tensorflow", "throughput", 6.576, "steps/s", 0),
        (20, "tensorflow", "step_time", 146.0, "ms/step", 10),
        (23, "tensorflow", "throughput", 6.849, "steps/s", 10),
    ]
    for m in items[:-1]:
        assert m.benchmark == "seq2seq"
        assert m.task == "training"
        assert m.params == {**PARAMS, "skip_steps": m.params["skip_steps"]}
        assert m.direction == ("higher" if m.metric == "throughput" else "lower")
    paddle_avg, paddle_fps, tf_avg0, tf_fps0, tf_avg10, tf_fps10, cut = items
    assert paddle_avg.stats == {"steps": 2}
    assert paddle_avg.raw == "\tAvg: 0.202 s/step"
    assert paddle_fps.stats == {"steps": 2, "final_result": 4.96}
    assert tf_avg0.stats == {"steps": 1750}
    assert tf_avg10.stats == {"steps": 1750, "min": 40.0, "max": 8570.0}
    assert tf_fps10.stats == {"steps": 1750}  # its FINAL_RESULT is cut
    # skip-0 and skip-10 blocks are different series
    assert tf_fps0.series_key() != tf_fps10.series_key()
    assert tf_avg0.series_key() != tf_avg10.series_key()
    # and Paddle / TensorFlow too
    assert paddle_fps.series_key() != tf_fps0.series_key()

    assert isinstance(cut, Problem)
    assert cut.line == 24
    assert cut.raw == "FINAL_RESULT=6."
    assert "cut" in cut.reason
    assert cut.parser == "analysis"


def test_anchors_are_in_the_sample() -> None:
    text = sample_doc(SAMPLE).text
    assert all(anchor in text for anchor in analysis.ANCHORS)


def test_flags_and_framework_of_a_path() -> None:
    got = analysis.flags(COMMAND)
    assert got["separator"] == " "
    assert got["position"] == "-2"
    assert got["model_name"] == "seq2seq"
    assert got["range"] == "0"
    assert analysis.framework_of("/h/PaddlePaddle/benchmark/x/seq2seq/tensorflow/log") == (
        "tensorflow"
    )
    assert analysis.framework_of("/h/paddle/models/pytorch/log_paddle") == "pytorch"
    assert analysis.framework_of("log_seq2seq") == ""


def test_json_line_fills_what_the_command_did_not_give() -> None:
    text = (
        "average latency of 5 steps, skip 0 step:\n"
        "\tAvg: 0.5 s/step\n"
        "\tFPS: 2.000 steps/s\n"
        "FINAL_RESULT=2.000\n"
        '{"index": "speed", "log_file": "/x/bert/paddle/log", "gpu_num": 8, '
        '"model_name": "bert", "run_mode": "mp"}\n'
    )
    avg, fps = parse_text(text)
    assert (avg.benchmark, avg.framework) == ("bert", "paddle")
    assert avg.params == {"gpu_num": 8, "run_mode": "mp", "skip_steps": 0}
    assert (avg.value, avg.line, fps.value, fps.line) == (500.0, 2, 2.0, 3)
    assert fps.stats == {"steps": 5, "final_result": 2.0}


def test_json_line_that_disagrees_is_a_warning() -> None:
    text = (
        COMMAND + "\naverage latency of 2 steps, skip 0 step:\n\tFPS: 4.960 steps/s\n"
        '{"index": "speed", "gpu_num": 1, "model_name": "transformer", "run_mode": "sp"}\n'
    )
    fps, warning = parse_text(text)
    assert fps.benchmark == "seq2seq"
    assert (warning.severity, warning.line) == ("warning", 4)
    assert "transformer" in warning.reason


def test_cut_json_line_is_a_problem() -> None:
    text = COMMAND + '\naverage latency of 2 steps, skip 0 step:\n\tFPS: 4.9 steps/s\n{"index": "sp'
    fps, problem = parse_text(text)
    assert fps.value == 4.9
    assert isinstance(problem, Problem)
    assert problem.line == 4


def test_cut_and_bad_stat_values_are_problems() -> None:
    text = (
        COMMAND + "\n"
        "average latency of 2 steps, skip 0 step:\n"
        "\tAvg: 0.2\n"  # cut before its unit
        "\tMin: nan s/step\n"
        "\tMax: 1.0 furlongs\n"
        "\tMin: 3.0 steps/s\n"  # a rate where a time belongs
        "\tFPS: 4.960 steps/s\n"
        "FINAL_RESULT=\n"
    )
    items = parse_text(text)
    kinds = [(type(i).__name__, i.line) for i in items]
    assert kinds == [
        ("Problem", 3),
        ("Problem", 4),
        ("Problem", 5),
        ("Problem", 6),
        ("Measurement", 7),
        ("Problem", 8),
    ]
    assert items[4].value == 4.96
    assert items[4].stats == {"steps": 2}
    assert "not a time" in items[3].reason
    assert "no unit" in items[0].reason


def test_stat_lines_outside_analysis_output_are_ignored() -> None:
    text = "Avg: 3\nMax: 17 ms\nthe FPS: is good\n"
    assert parse_text(text) == []


def test_stat_lines_without_a_heading_still_count() -> None:
    avg, fps = parse_text("Avg: 0.146 s/step\nMin: 0.040 s/step\nFPS: 6.849 steps/s\n")
    assert (avg.metric, avg.value, avg.params, avg.stats) == (
        "step_time",
        146.0,
        {},
        {"min": 40.0},
    )
    assert (fps.metric, fps.value, fps.params, fps.stats, fps.line) == (
        "throughput",
        6.849,
        {},
        {},
        3,
    )


def test_a_training_log_mentioning_steps_per_second_is_not_analysis_output() -> None:
    text = "step 10, loss 2.3, speed: 3.2 steps/s\n" * 3 + "Avg: 1.0 ms\n"
    assert parse_text(text) == []


def test_odd_documents_never_raise() -> None:
    for text in ("", "FINAL_RESULT=", "analysis.py --", '{"index": [1, 2]}', "Avg: s/step"):
        for item in parse_text(text):
            assert isinstance(item, Measurement | Problem)


def test_every_cut_of_the_sample_reads_without_raising() -> None:
    text = sample_doc(SAMPLE).text
    for cut in range(0, len(text), 5):
        items = parse_text(text[:cut])
        assert all(isinstance(i, Measurement | Problem) for i in items)
        assert [i.line for i in items] == sorted(i.line for i in items)
