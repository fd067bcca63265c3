"""onnxruntime_perf_test output: the project's sample, real documents of the newer layouts,
and cut or garbled variants.

The fixtures are in tests/fixtures/modern/ort_perf_test/ (its README.md names each source):
the sample (1.x wording "Min Latency is 0.0559777 sec", a trtexec part that is not ours), a
1.8-1.19 log after its command line (spacemit-com/docs-ai) and two 1.20+ logs ("Average
inference time cost total") under one command (ArmDeveloperEcosystem/arm-learning-paths).
The 2019 layout ("Total time cost:58.8", "Min Latency is 0.05sec") is built from
performance_runner.cc/.h of that time and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import ort_perf_test
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "ort_perf_test"
SAMPLE = "ort-perf-test_onnxruntime-17313.md"
STATS = ("min", "max", "p50", "p90", "p95", "p99", "p99.9")


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(ort_perf_test.parse, doc)


def test_contract_anchors_and_every_fixture_is_named_in_the_readme() -> None:
    assert ort_perf_test.NAME == "ort_perf_test"
    assert all(isinstance(a, str) and a for a in ort_perf_test.ANCHORS)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert len(names) >= 3
    for name in names:
        assert f"`{name}`" in readme, f"{name} is not described in README.md"
        doc = fixture(name)
        assert any(a in doc.text for a in ort_perf_test.ANCHORS), name


def test_sample_is_the_shared_sample_byte_for_byte() -> None:
    shared = Path("/work/shared/samples/modern") / SAMPLE
    if not shared.exists():
        pytest.skip("shared samples not mounted")
    assert (FIXTURES / SAMPLE).read_bytes() == shared.read_bytes()


# -- the sample (1.x wording) ----------------------------------------------------------


def test_sample_older_wording() -> None:
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []  # the trtexec part below is not ours
    got = tools.by_stat(measurements)
    assert set(got) == {("latency", "mean")} | {("latency", s) for s in STATS}
    assert got[("latency", "mean")] == 58.8053
    assert got[("latency", "min")] == pytest.approx(55.9777)
    assert got[("latency", "p50")] == pytest.approx(58.7108)
    assert got[("latency", "p99")] == pytest.approx(61.9517)
    assert got[("latency", "p99.9")] == pytest.approx(62.3472)
    for m in measurements:
        assert (m.framework, m.task, m.benchmark, m.device) == ("onnxruntime", "inference", "", "")
        assert (m.metric, m.unit, m.direction) == ("latency", "ms", "lower")
        assert m.params == {"stat": m.params["stat"]}
        assert m.samples == 1000
        assert m.stats["requests"] == 1000
        # "Total time cost: 58.8053" has no unit: seconds by the source (the sum of requests)
        assert m.stats["total_time_ms"] == pytest.approx(58805.3)
        assert m.stats["duration_ms"] == pytest.approx(58810.2)
    (p99,) = [m for m in measurements if m.params["stat"] == "p99"]
    assert (p99.line, p99.raw) == (19, "P99 Latency is 0.0619517 sec")


def test_sample_expected_values() -> None:
    """expected.tsv: 58.8053 and 0.0619517 (core), 0.0587108 (extra), as stored in ms; the
    trtexec values 3716.81 and 0.184305 of the same file are the trtexec parser's."""
    got = [m.value for m in split(fixture(SAMPLE))[0]]
    for value in (58.8053, 0.0619517 * 1000, 0.0587108 * 1000):
        assert any(v == pytest.approx(value) for v in got), value


# -- 1.8 to 1.19: spacemit-com/docs-ai quick_start.md ----------------------------------


def test_spacemit_log_after_its_command() -> None:
    measurements, problems = split(fixture("spacemit-docs-ai_quick-start.md"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got[("session_creation_time", "")] == pytest.approx(1144.76)
    assert got[("first_inference_time", "")] == 248.0
    assert got[("latency", "mean")] == 82.3382
    assert got[("throughput", "")] == 12.1435
    assert got[("peak_working_set", "")] == pytest.approx(78946304 / 2**20)
    assert got[("latency", "min")] == pytest.approx(80.8129)
    assert got[("latency", "p99.9")] == pytest.approx(83.8817)
    assert len(measurements) == 5 + len(STATS)
    for m in measurements:
        # The command on the line above the output (not the one in the earlier fence).
        assert m.benchmark == "yolov8n.q.onnx"
        assert {k: v for k, v in m.params.items() if k != "stat"} == {
            "execution_provider": "spacemit",
            "threads": 4,
            "concurrent_runs": 1,
        }
        assert m.samples == 10
        assert m.stats == {
            "total_time_ms": pytest.approx(823.382),
            "requests": 10,
            "duration_ms": pytest.approx(823.483),
            "avg_cpu_usage_percent": 48.0,
        }
    (throughput,) = [m for m in measurements if m.metric == "throughput"]
    assert (throughput.unit, throughput.direction) == ("samples/s", "higher")
    (peak,) = [m for m in measurements if m.metric == "peak_working_set"]
    assert (peak.unit, peak.direction, peak.line) == ("MB", "lower", 25)
    assert peak.raw == "Peak working set size: 78946304 bytes"  # not the dump's repeat


# -- 1.20 on: ArmDeveloperEcosystem/arm-learning-paths, two runs under one command ----


def test_arm_two_runs_under_one_command() -> None:
    measurements, problems = split(fixture("arm-learning-paths_kleidiai-sme2-profiling.md"))
    assert problems == []
    first = [m for m in measurements if m.line < 35]
    second = [m for m in measurements if m.line > 35]
    assert len(first) == len(second) == 5 + len(STATS)
    a, b = tools.by_stat(first), tools.by_stat(second)
    assert a[("latency", "mean")] == 98.961997  # "Average inference time cost total"
    assert b[("latency", "mean")] == 339.38112
    assert a[("throughput", "")] == 10.104
    assert b[("throughput", "")] == 2.94642
    assert a[("latency", "p50")] == pytest.approx(99.5086)
    assert b[("latency", "p50")] == pytest.approx(336.476)
    assert a[("session_creation_time", "")] == pytest.approx(217.932)
    assert b[("first_inference_time", "")] == 343.0
    for m in measurements:
        assert m.benchmark == "resnet50v2.onnx"  # "-p resnet50v2.onnx_1xC1-Pro_profile" is -p's
        assert m.params.get("execution_provider") == "cpu"
        assert m.params.get("threads") == 1
        assert m.samples == 5


# -- layouts built from the source, and hostile variants --------------------------------


OLDEST = """\
Total time cost:1.2
Total iterations:100
Average time cost:12 ms
"""


def test_2019_layout_from_the_source() -> None:
    """performance_runner.cc of 2019: no spaces, "Total time cost" in seconds, no unit."""
    measurements, problems = split(text_doc(OLDEST + "\nMin Latency is 0.011sec\n"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got == {("latency", "mean"): 12.0, ("latency", "min"): pytest.approx(11.0)}
    assert measurements[0].stats == {"total_time_ms": pytest.approx(1200.0), "requests": 100}


def test_command_forms() -> None:
    log = "Average inference time cost: 1 ms\n"
    for command, benchmark, params in (
        (
            'adb shell "taskset 1 /data/local/tmp/onnxruntime_perf_test -e cpu -r 5 -m times'
            ' -s -Z  -x 1 /data/local/tmp/resnet50-v2-7/resnet50-v2-7.onnx -p prof"',
            "resnet50-v2-7.onnx",
            {"execution_provider": "cpu", "threads": 1},
        ),
        (
            r"build\RelWithDebInfo\onnxruntime_perf_test.exe -r 100 -e tensorrt "
            r'"X:\testdata\test_squeezenet\model.onnx"',
            "model.onnx",
            {"execution_provider": "tensorrt"},
        ),
        (
            "$ ./onnxruntime_perf_test -e cuda -I model.ort result.txt",
            "model.ort",
            {"execution_provider": "cuda"},
        ),
    ):
        (m,) = split(text_doc(command + "\n" + log))[0]
        assert m.benchmark == benchmark, command
        assert {k: v for k, v in m.params.items() if k != "stat"} == params


def test_prose_naming_the_tool_is_no_command() -> None:
    doc = text_doc(
        "I ran onnxruntime_perf_test -e cuda model.onnx yesterday\n"
        "The `onnxruntime_perf_test` tool prints:\n" + "Average inference time cost: 2 ms\n"
    )
    (m,) = split(doc)[0]
    assert (m.benchmark, m.params) == ("", {"stat": "mean"})


def test_cut_and_garbled_lines_are_problems() -> None:
    doc = text_doc(
        "Session creation time cost: 0.01 s\n"
        "Average inference time cost: 0.9 ms\n"
        "Number of inferences per second: 10x0\n"
        "Min Latency: 0.0007 s\n"
        "P90 Latency: abc s\n"
        "P99 Latency: 0.00"
    )
    measurements, problems = split(doc)
    got = tools.by_stat(measurements)
    assert set(got) == {("session_creation_time", ""), ("latency", "mean"), ("latency", "min")}
    assert [(p.line, p.parser, p.severity) for p in problems] == [
        (3, "ort_perf_test", "error"),
        (5, "ort_perf_test", "error"),
        (6, "ort_perf_test", "error"),
    ]
    assert "has no unit (cut?)" in problems[2].reason
    assert problems[2].raw == "P99 Latency: 0.00"


def test_other_tools_lines_are_not_read() -> None:
    doc = text_doc(
        "Runs: 5\nAvg CPU usage: 3 %\n"
        '    mean = search(r"Average inference time cost:\\s*([\\d.]+)\\s*ms", stdout)\n'
        "[I] Latency: min = 0.17 ms, max = 0.24 ms\n"
    )
    assert list(ort_perf_test.parse(doc)) == []


def test_two_pasted_runs_split_on_a_repeated_label() -> None:
    run = "Average inference time cost: {} ms\nP50 Latency: {} s\n"
    measurements, _ = split(text_doc(run.format(1, 0.001) + run.format(2, 0.002)))
    assert [(m.line, m.value) for m in measurements] == [
        (1, 1.0),
        (2, pytest.approx(1.0)),
        (3, 2.0),
        (4, pytest.approx(2.0)),
    ]
