"""OpenVINO benchmark_app output: the project's sample, real documents of the other layouts,
and cut or garbled variants.

The fixtures are in tests/fixtures/modern/openvino/ (its README.md names each source): the
sample (C++ README, 2022-2023, static and dynamic fragments), the Python tool's README.rst
(2022.3, a whole log from Step 1 and a -pcseq fragment) and an issue with the 2021 layout
("Latency:    1.25 ms" on one line, no "[ INFO ]" prefix).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import openvino
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "openvino"
SAMPLE = "openvino-benchmark-app_openvino-samples-cpp-readme.md"
STATS = ("median", "mean", "min", "max")


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(openvino.parse, doc)


def where(measurements: list[Measurement], **params: object) -> list[Measurement]:
    return [m for m in measurements if all(m.params.get(k) == v for k, v in params.items())]


def test_contract_anchors_and_every_fixture_is_named_in_the_readme() -> None:
    assert openvino.NAME == "openvino"
    assert all(isinstance(a, str) and a for a in openvino.ANCHORS)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert len(names) >= 3
    for name in names:
        assert f"`{name}`" in readme, f"{name} is not described in README.md"
        assert any(a in fixture(name).text for a in openvino.ANCHORS), name


def test_sample_is_the_shared_sample_byte_for_byte() -> None:
    shared = Path("/work/shared/samples/modern") / SAMPLE
    if not shared.exists():
        pytest.skip("shared samples not mounted")
    assert (FIXTURES / SAMPLE).read_bytes() == shared.read_bytes()


# -- the sample --------------------------------------------------------------------------


def test_sample_static_and_dynamic_fragments() -> None:
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []
    static = [m for m in measurements if m.line < 25]
    dynamic = [m for m in measurements if m.line > 25]
    got = tools.by_stat(static)
    assert got == {
        ("first_inference_time", ""): 26.26,
        ("latency", "median"): 35.36,
        ("latency", "mean"): 36.12,
        ("latency", "min"): 18.55,
        ("latency", "max"): 88.96,
        ("throughput", ""): 110.59,
    }
    for m in measurements:
        assert (m.framework, m.task, m.benchmark, m.device) == ("openvino", "inference", "", "CPU")
        assert m.params["api"] == "async"
        assert (m.params["nireq"], m.params["nstreams"]) == (4, 4)
        if m.metric == "throughput":
            assert (m.unit, m.direction) == ("samples/s", "higher")
            assert "stat" not in m.params
        else:
            assert (m.unit, m.direction) == ("ms", "lower")
    assert {m.params["mode"] for m in static} == {"inference_only"}
    assert {m.params["mode"] for m in dynamic} == {"full"}
    assert static[0].stats == {"iterations": 6640, "duration_ms": 60039.7}
    assert static[0].samples == 6640
    # the dynamic fragment: the run's latency (no shape) and one group per data shape
    overall = [m for m in dynamic if m.metric == "latency" and "shape" not in m.params]
    assert tools.by_stat(overall) == {
        ("latency", "median"): 41.58,
        ("latency", "mean"): 46.07,
        ("latency", "min"): 8.44,
        ("latency", "max"): 115.65,
    }
    small = where(dynamic, shape="data:[1,3,224,224]")
    large = where(dynamic, shape="data:[1,3,448,448]")
    assert [m.value for m in small] == [38.37, 30.29, 8.44, 61.30]
    assert [m.value for m in large] == [68.21, 61.85, 29.58, 115.65]
    assert [m.params["stat"] for m in large] == list(STATS)
    (throughput,) = [m for m in dynamic if m.metric == "throughput"]
    assert (throughput.value, throughput.line, throughput.stats["iterations"]) == (86.59, 49, 5199)
    assert throughput.raw == "   [ INFO ] Throughput: 86.59 FPS"


def test_sample_expected_values() -> None:
    """expected.tsv: 110.59, 35.36, 36.12 (core), 86.59, 41.58 (extra)."""
    got = {m.value for m in split(fixture(SAMPLE))[0]}
    assert {110.59, 35.36, 36.12, 86.59, 41.58} <= got


# -- the Python tool's README.rst (2022.3) ----------------------------------------------


def test_python_readme_whole_log_and_pcseq_fragment() -> None:
    measurements, problems = split(fixture("benchmark-tool-readme-rst_python-2022.3.rst"))
    assert problems == []
    first = [m for m in measurements if m.line < 70]
    second = [m for m in measurements if m.line > 70]
    assert tools.by_stat(first) == {
        ("first_inference_time", ""): 38.41,
        ("latency", "median"): 22.04,
        ("latency", "mean"): 22.09,
        ("latency", "min"): 20.78,
        ("latency", "max"): 33.51,
        ("throughput", ""): 89.61,
    }
    for m in first:
        assert (m.benchmark, m.device) == ("asl-recognition-0004.xml", "CPU")
        assert {k: v for k, v in m.params.items() if k != "stat"} == {
            "api": "async",
            "nireq": 2,  # Step 10 (also OPTIMAL_NUMBER_OF_INFER_REQUESTS)
            "nstreams": 2,  # NUM_STREAMS: Step 10 names no streams here
            "batch_size": 1,
            "precision": "fp32",  # INFERENCE_PRECISION_HINT: <Type: 'float32'>
            "hint": "latency",  # PerformanceMode.LATENCY
            "mode": "inference_only",
        }
        assert m.testbed == {"openvino": "2022.3.0-7750-c1109a7317e-feature/py_cpp_align"}
        assert m.stats == {"iterations": 5380, "duration_ms": 60036.78}
    # the -pcseq fragment, under its own command: Python's "1. input: {1, 3, 16, 224, 224}"
    for m in second:
        assert (m.benchmark, m.device) == ("asl-recognition-0004.xml", "CPU")
        assert (m.params["nireq"], m.params["mode"]) == (11, "full")
        assert "hint" not in m.params and m.testbed == {}
    groups = sorted({m.params["shape"] for m in second if "shape" in m.params})
    assert groups == ["input:[1,3,16,224,224]", "input:[2,3,16,224,224]", "input:[4,3,16,224,224]"]
    assert [m.value for m in where(second, shape="input:[4,3,16,224,224]")] == [
        384.16,
        383.48,
        305.51,
        773.55,
    ]
    assert tools.by_stat([m for m in second if "shape" not in m.params])[("throughput", "")] == (
        108.82
    )


# -- the 2021 layout: openvinotoolkit/openvino#5601 --------------------------------------


def test_legacy_one_line_latency() -> None:
    measurements, problems = split(fixture("openvino-5601_legacy-2021.2.md"))
    assert problems == []
    assert tools.by_stat(measurements) == {("latency", "median"): 1.25, ("throughput", ""): 3028.72}
    for m in measurements:
        # the command after a Windows prompt: "...\benchmark_tool>python benchmark_app.py -m ..."
        assert (m.benchmark, m.device) == ("gaze-estimation-adas-8.xml", "CPU")
        assert {k: v for k, v in m.params.items() if k != "stat"} == {
            "api": "async",
            "batch_size": 1,
        }
        assert m.stats == {"iterations": 181728, "duration_ms": 60001.53}


# -- layouts built from the source, and hostile variants --------------------------------


def test_2022_1_capitals_percentile_and_microseconds() -> None:
    doc = text_doc(
        "[ INFO ] Count:          1413 iterations\n"
        "[ INFO ] Duration:       15008.32 ms\n"
        "[ INFO ] Latency:\n"
        "[ INFO ]     90 percentile:     10.45 ms\n"
        "[ INFO ]     AVG:        10.62 ms\n"
        "[ INFO ]     MIN:        850.5 us\n"
        "[ INFO ]     MAX:        16.95 ms\n"
        "[ INFO ] Throughput:   94.15 FPS\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    got = tools.by_stat(measurements)
    assert got[("latency", "p90")] == 10.45
    assert got[("latency", "mean")] == 10.62
    assert got[("latency", "min")] == pytest.approx(0.8505)
    assert got[("throughput", "")] == 94.15


def test_legacy_latency_percentile_flag() -> None:
    doc = text_doc(
        "$ ./benchmark_app -m /models/resnet.xml -d GPU -latency_percentile 99\n"
        "Count:      100 iterations\nDuration:   1000.00 ms\nLatency:    9.50 ms\n"
        "Throughput: 100.00 FPS\n"
    )
    measurements, _ = split(doc)
    assert tools.by_stat(measurements)[("latency", "p99")] == 9.5
    assert {(m.benchmark, m.device) for m in measurements} == {("resnet.xml", "GPU")}


def test_cut_report_is_read_with_problems() -> None:
    doc = text_doc(
        "[Step 11/11] Dumping statistics report\n"
        "[ INFO ] Count:      6640 iterations\n"
        "[ INFO ] Duration:   60039.70 ms\n"
        "[ INFO ] Latency:\n"
        "[ INFO ]        Median:  35.36 ms\n"
        "[ INFO ]        Avg:    abc ms\n"
        "[ INFO ]        Min:    18.5"
    )
    measurements, problems = split(doc)
    assert tools.by_stat(measurements) == {("latency", "median"): 35.36}
    assert [(p.line, p.parser) for p in problems] == [(6, "openvino"), (7, "openvino")]
    assert "not a number" in problems[0].reason
    assert "has no unit (cut?)" in problems[1].reason


def test_header_cut_and_throughput_unit() -> None:
    doc = text_doc(
        "[ INFO ] Count:      10 iterations\n[ INFO ] Latency:\n[ INFO ] Throughput: 12.5 qps\n"
    )
    measurements, problems = split(doc)
    assert measurements == []
    assert [p.line for p in problems] == [2, 3]
    assert "no statistic" in problems[0].reason


def test_other_tools_lines_are_not_read() -> None:
    doc = text_doc(
        "[08/21/2023-14:59:38] [I] Throughput: 3716.81 qps\n"
        "[08/21/2023-14:59:38] [I] Latency: min = 0.17041 ms, max = 0.243042 ms\n"
        " Throughput: 89.09 FPS \n Latency: \n    Mean: 11.22 ms\n"
        "Run `benchmark_app -m model.xml` to see it.\n"
    )
    assert list(openvino.parse(doc)) == []
    ort_sample = FIXTURES.parent / "ort_perf_test" / "ort-perf-test_onnxruntime-17313.md"
    doc = read_text_file(str(ort_sample))  # trtexec's "Throughput: 3716.81 qps" and more
    assert list(openvino.parse(doc)) == []
