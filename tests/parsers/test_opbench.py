"""ingest.parsers.opbench on the op benchmark outputs of PaddlePaddle/benchmark api/."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from ingest.parsers import opbench
from perfboard.model import Measurement, Problem
from tests.conftest import sample_doc, text_doc

UPDATED = datetime(2020, 8, 12, 1, 42, 16, tzinfo=UTC)  # Wed Aug 12 09:42:16 2020 +0800
BENCHMARK_COMMIT = "573652e4831d5986955dcb41f2eb8a2a68f9bf0b"
HEADER = (
    "-- paddle version             : 0.0.0\n"
    "-- paddle commit              : e8d5868e9720ee7b5bd8c9ff1cf2e6e7b7f1998a\n"
    "-- tensorflow version         : 2.3.0\n"
)


def parse_text(text: str) -> list:
    return list(opbench.parse(text_doc(text)))


def by_metric(items: list) -> dict[str, Measurement]:
    return {i.metric: i for i in items if isinstance(i, Measurement)}


def v2_line(**overrides: object) -> str:
    record: dict[str, object] = {
        "framework": "paddle",
        "version": "0.0.0",
        "name": "abs",
        "device": "GPU",
        "backward": False,
        "speed": {"repeat": 100, "begin": 10, "end": 90, "total": 1.5, "gpu_time": 3.5},
        "parameters": "x (Variable) - dtype: float32, shape: [16, 128, 257, 257]\n",
    }
    record.update(overrides)
    return json.dumps(record)


# -- real documents -------------------------------------------------------------------


def test_v2_speed_run_of_abs() -> None:
    items = list(opbench.parse(sample_doc("opbench_speed_abs_paddle_gpu.log")))
    assert [type(i) for i in items] == [Measurement] * 4
    got = by_metric(items)
    assert set(got) == {"total_time", "gpu_time", "wall_time", "total_include_wall_time"}
    assert got["total_time"].value == 1.489502191543579
    assert got["gpu_time"].value == 3.6036606226479644
    assert got["wall_time"].value == 0.034362077713012695
    assert got["total_include_wall_time"].value == 1.5238642692565918
    for m in items:
        assert m.benchmark == "op/abs"
        assert m.task == "op-forward"
        assert m.framework == "paddle"
        assert m.device == "GPU"
        assert m.unit == "ms"
        assert m.direction == "lower"
        assert m.version == "e8d5868e9720ee7b5bd8c9ff1cf2e6e7b7f1998a"
        assert m.testbed == {}
        assert m.measured_at == UPDATED
        assert m.params == {
            "config_id": 0,
            "parameters": "x (Variable) - dtype: float32, shape: [16, 128, 257, 257]",
        }
        assert m.samples == 80
        assert m.stats == {
            "repeat": 100,
            "begin": 10,
            "end": 90,
            "framework_version": "0.0.0",
            "benchmark_commit": BENCHMARK_COMMIT,
        }
        assert m.line == 29
        assert m.raw.startswith('{"framework": "paddle"')
        assert m.raw.endswith('257]\\n"}')


def test_v2_accuracy_run_of_resize_bilinear() -> None:
    (m,) = opbench.parse(sample_doc("opbench_accuracy_resize_bilinear.log"))
    assert m.metric == "max_diff"
    assert m.value == 9.563419342041016
    assert m.unit == ""
    assert m.direction == "lower"
    assert m.stats == {"consistent": False, "num_outputs": 2, "benchmark_commit": BENCHMARK_COMMIT}
    assert m.benchmark == "op/resize_bilinear"
    assert m.task == "op-backward"
    assert m.device == "GPU"  # from --use_gpu True
    assert m.version == "350d20fe5274eddfd97aee810c0fa4f2ca52f11f"
    assert m.measured_at == UPDATED
    assert m.params["config_id"] == 5
    assert m.params["parameters"].startswith("input (Variable) - dtype: float32, shape: [16, 129")
    assert m.params["parameters"].endswith("scale (string): None")
    assert m.line == 37


def test_v1_pseudo_json_with_stray_brace() -> None:
    items = list(opbench.parse(sample_doc("benchmark-282_2019-11-26_xreki_op-benchmark-v1.md")))
    assert not [i for i in items if isinstance(i, Problem)]  # the stray "}" is harmless
    paddle, tf, paddle_once, tf_once, accuracy = items

    assert (paddle.framework, paddle.metric, paddle.value, paddle.line) == (
        "paddle",
        "total_time",
        2.76374,
        7,
    )
    assert (tf.framework, tf.metric, tf.value, tf.line) == ("tensorflow", "total_time", 1.91671, 16)
    for m in (paddle, tf):
        assert m.benchmark == "op/abs"
        assert m.task == "op-forward"
        assert m.device == "GPU"
        assert m.unit == "ms"
        assert m.samples == 980
        assert m.params == {}
        assert m.measured_at is None
    assert paddle.stats == {
        "repeat": 1000,
        "start": 10,
        "end": 990,
        "feed": 0.0,
        "compute": 0.0,
        "fetch": 0.0,
        "framework_version": "0.0.0",
    }
    assert paddle.version is None and paddle.testbed == {}
    assert tf.stats["framework_version"] == "1.14.0"
    assert tf.testbed == {"tensorflow": "1.14.0"}
    assert tf.version is None

    # The accuracy task's own single timed run: kept, but in series of their own.
    assert (paddle_once.value, paddle_once.line, paddle_once.samples) == (12.69507, 33, 1)
    assert (tf_once.value, tf_once.line) == (836.18402, 41)
    for m in (paddle_once, tf_once):
        assert m.params == {"task_kind": "accuracy_run"}
        assert m.stats["repeat"] == 1
    assert paddle_once.series_key() != paddle.series_key()

    assert accuracy.metric == "max_diff"
    assert accuracy.value == 0.0
    assert accuracy.unit == ""
    assert accuracy.stats == {"consistent": True}
    assert accuracy.line == 51
    assert accuracy.raw == '{name: "abs", consistent: "True", diff: 0.00000}'


def test_anchors() -> None:
    for name in (
        "opbench_speed_abs_paddle_gpu.log",
        "opbench_accuracy_resize_bilinear.log",
        "benchmark-282_2019-11-26_xreki_op-benchmark-v1.md",
    ):
        assert any(anchor in sample_doc(name).text for anchor in opbench.ANCHORS)


# -- inline variants ------------------------------------------------------------------


def test_tensorflow_v2_result_carries_its_release_as_testbed() -> None:
    line = v2_line(framework="tensorflow", version="2.3.0", backward=True)
    got = by_metric(parse_text(HEADER + line))
    tf = got["total_time"]
    assert (tf.framework, tf.version, tf.testbed, tf.task) == (
        "tensorflow",
        None,
        {"tensorflow": "2.3.0"},
        "op-backward",
    )
    assert tf.line == 4


def test_gpu_time_zero_means_not_profiled() -> None:
    line = v2_line(speed={"repeat": 100, "begin": 10, "end": 90, "total": 1.5, "gpu_time": 0.0})
    assert set(by_metric(parse_text(line))) == {"total_time"}


def test_config_id_only_from_a_run_command_of_the_same_op() -> None:
    cmd = "run command: python /b/api/tests/{op}.py --task speed --config_id 3 --backward False\n"
    (same,) = parse_text(cmd.format(op="abs") + v2_line(speed={"total": 1.0}))
    (other,) = parse_text(cmd.format(op="relu") + v2_line(speed={"total": 1.0}))
    assert same.params["config_id"] == 3
    assert "config_id" not in other.params
    assert same.series_key() != other.series_key()


def test_accuracy_task_run_command_marks_its_timing() -> None:
    cmd = "run command: python /b/api/tests/abs.py --task accuracy --config_id 0 --repeat 1\n"
    speed = {"repeat": 1, "begin": 0, "end": 1, "total": 9.0}
    (m,) = parse_text(cmd + v2_line(speed=speed))
    assert m.params["task_kind"] == "accuracy_run"


def test_unquoted_keys_with_nested_object_on_one_line() -> None:
    text = (
        'x = 1\n{ framework: "paddle", version: "0.0.0", name: "relu", device: "CPU", '
        "speed: { repeat: 10, start: 1, end: 9, total: 0.5, feed: 0.1, compute: 0.2, "
        "fetch: 0.2 } }\n"
    )
    (m,) = parse_text(text)
    assert (m.benchmark, m.device, m.value, m.samples, m.line) == ("op/relu", "CPU", 0.5, 8, 2)
    assert m.stats["feed"] == 0.1


def test_bare_keys_are_not_quoted_inside_strings() -> None:
    text = '{name: "abs", consistent: "False", diff: 1.5, parameters: "x: 1, shape: [2]"}'
    (m,) = parse_text(text)
    assert m.params == {"parameters": "x: 1, shape: [2]"}
    assert m.stats == {"consistent": False}


# -- malformed ------------------------------------------------------------------------


def test_json_line_cut_mid_object_is_a_problem_and_the_next_is_read() -> None:
    good = v2_line()
    cut = good[:80]
    items = parse_text(HEADER + cut + "\n" + good + "\n")
    problem, *rest = items
    assert isinstance(problem, Problem)
    assert problem.line == 4
    assert problem.parser == "opbench"
    assert "cut" in problem.reason
    assert problem.raw == cut
    assert [m.line for m in rest] == [5, 5]
    assert by_metric(rest)["total_time"].value == 1.5


def test_cut_v1_object_at_the_end_of_an_excerpt() -> None:
    text = '{\n  framework: "paddle",\n  name: "abs",\n  speed: { repeat: 1000, start: 10, end'
    (p,) = parse_text(text)
    assert isinstance(p, Problem)
    assert p.line == 1


def test_stray_braces_around_objects() -> None:
    text = '}\n}\n{ framework: "paddle", name: "abs", speed: { total: 2.0 } }\n}\n'
    (m,) = parse_text(text)
    assert (m.value, m.line) == (2.0, 3)


def test_unreadable_object_is_a_problem_and_the_rest_is_read() -> None:
    text = (
        '{ framework: "paddle", name: "abs", speed: { total: 2.0,, } }\n'
        '{ framework: "paddle", name: "abs", speed: { total: 3.0 } }\n'
    )
    problem, m = parse_text(text)
    assert isinstance(problem, Problem)
    assert problem.line == 1
    assert "cannot be read" in problem.reason
    assert (m.value, m.line) == (3.0, 2)


def test_bad_numbers_are_problems() -> None:
    items = parse_text(
        '{ framework: "paddle", name: "abs", speed: { total: -1.0, wall_time: 0.1 } }\n'
        '{"name": "abs", "consistent": false, "diff": "nan"}\n'
        '{"framework": "paddle", "name": "abs", "device": "GPU"}\n'
    )
    kinds = [(type(i).__name__, i.line, getattr(i, "metric", "")) for i in items]
    assert kinds == [
        ("Problem", 1, ""),
        ("Measurement", 1, "wall_time"),
        ("Problem", 2, ""),
        ("Problem", 3, ""),
    ]
    assert "total" in items[0].reason


def test_update_time_that_is_no_date_is_a_warning() -> None:
    items = parse_text("-- benchmark last update time : yesterday\n" + v2_line())
    warning = items[0]
    assert isinstance(warning, Problem)
    assert (warning.severity, warning.line) == ("warning", 1)
    assert all(m.measured_at is None for m in items[1:])


def test_odd_documents_never_raise() -> None:
    for text in ("", "{", "{name:", '{"name": [}', "-- paddle commit :", "run command:", "{}" * 3):
        for item in parse_text(text):
            assert isinstance(item, Measurement | Problem)


def test_cut_v1_object_followed_by_a_good_one() -> None:
    text = (
        '{\n  framework: "paddle",\n  name: "abs",\n  speed: { repeat: 1000, start: 10, end\n'
        '{\n  framework: "tensorflow",\n  name: "abs",\n  speed: { total: 1.91671 }\n}\n'
    )
    problem, m = parse_text(text)
    assert isinstance(problem, Problem)
    assert problem.line == 1
    assert (m.framework, m.value, m.line) == ("tensorflow", 1.91671, 5)


def test_every_cut_of_the_samples_reads_without_raising() -> None:
    for name in (
        "opbench_speed_abs_paddle_gpu.log",
        "benchmark-282_2019-11-26_xreki_op-benchmark-v1.md",
    ):
        text = sample_doc(name).text
        for cut in range(0, len(text), 7):
            items = parse_text(text[:cut])
            assert all(isinstance(i, Measurement | Problem) for i in items)
            assert [i.line for i in items] == sorted(i.line for i in items)
