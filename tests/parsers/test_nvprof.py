"""nvprof tables and the op benchmark's nvprof summary: the real log and variants."""

from __future__ import annotations

import time

import pytest

from ingest.parsers import nvprof
from ingest.text import DocText
from perfboard.model import Measurement, Problem, ProfileEvent
from tests.conftest import sample_doc, text_doc


def _split(doc: DocText) -> tuple[list[ProfileEvent], list[Measurement], list[Problem]]:
    items = list(nvprof.parse(doc))
    events = [i for i in items if isinstance(i, ProfileEvent)]
    measurements = [i for i in items if isinstance(i, Measurement)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(events) + len(measurements) + len(problems) == len(items)
    return events, measurements, problems


def test_contract() -> None:
    assert nvprof.NAME == "nvprof"
    assert all(isinstance(a, str) and a for a in nvprof.ANCHORS)
    text = sample_doc("opbench_speed_abs_paddle_gpu.log").text
    assert any(a in text for a in nvprof.ANCHORS)


def test_opbench_speed_log() -> None:
    events, measurements, problems = _split(sample_doc("opbench_speed_abs_paddle_gpu.log"))
    assert problems == []
    # The "percent: ...; function: [CUDA memcpy HtoD]" line repeats the table: not doubled.
    assert len(events) == 2
    memcpy, eigen = events
    assert (memcpy.event, memcpy.calls, memcpy.line) == ("[CUDA memcpy HtoD]", 4, 10)
    assert memcpy.total == pytest.approx(210.67)
    assert memcpy.ave == pytest.approx(52.667)
    assert memcpy.min == pytest.approx(0.001728)
    assert memcpy.max == pytest.approx(210.66)
    assert memcpy.ratio == pytest.approx(0.5846)
    assert (memcpy.section, memcpy.place, memcpy.thread, memcpy.depth) == ("nvprof", "GPU", "", 0)
    assert eigen.event.startswith("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<")
    assert eigen.event.endswith("Eigen::GpuDevice>, long>(float, int=1)")
    assert (eigen.calls, eigen.line, eigen.place) == (101, 11, "GPU")
    assert eigen.total == pytest.approx(149.69)
    assert (eigen.ave, eigen.min, eigen.max) == pytest.approx((1.4821, 1.4507, 1.5254))
    assert eigen.ratio == pytest.approx(0.4154)
    (total,) = measurements
    assert (total.metric, total.value, total.unit, total.benchmark) == (
        "gpu_time_total",
        360.3661,
        "ms",
        "",
    )
    assert (total.stats, total.line, total.raw) == (
        {"source": "nvprof"},
        14,
        "total gpu_time: 360.3661 ms",
    )


def test_samples_without_nvprof_yield_nothing() -> None:
    for name in (
        "README.md",
        "benchmark-380_2020-05-06_xreki_op-timing-table.md",
        "benchmark-165_xreki_profile-report.md",
        "opbench_accuracy_resize_bilinear.log",
    ):
        assert list(nvprof.parse(sample_doc(name))) == [], name


FULL = """\
==31337== NVPROF is profiling process 31337, command: python3 conv2d.py
==31337== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   93.81%  1.41084s      1001  1.4094ms  1.3686ms  1.4216ms  void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)
                    6.19%  93.148ms         3  31.049ms     896ns  93.146ms  [CUDA memcpy HtoD]
      API calls:   63.10%  2.10735s        16  131.71ms  5.7710us  1.04695s  cudaMalloc
                   36.90%  1.23211s      1004  1.2272ms  4.1000us  1.4394ms  cudaStreamSynchronize

percent: 0.94; gpu_time: 1410.8400 ms; calls: 1001; function: void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)
total gpu_time: 1503.9880 ms
"""  # noqa: E501


def test_gpu_and_api_sections_with_their_units() -> None:
    events, measurements, problems = _split(text_doc(FULL))
    assert problems == []
    assert [(e.event, e.place, e.calls, e.line) for e in events] == [
        (events[0].event, "GPU", 1001, 4),
        ("[CUDA memcpy HtoD]", "GPU", 3, 5),
        ("cudaMalloc", "API", 16, 6),
        ("cudaStreamSynchronize", "API", 1004, 7),
    ]
    kernel, memcpy, malloc, _ = events
    assert kernel.event.startswith("void cudnn::winograd_nonfused::winogradForwardData4x4<")
    assert kernel.total == pytest.approx(1410.84)  # 1.41084s
    assert memcpy.min == pytest.approx(0.000896)  # 896ns
    assert malloc.min == pytest.approx(0.005771)  # 5.7710us
    assert malloc.max == pytest.approx(1046.95)  # 1.04695s
    assert malloc.ratio == pytest.approx(0.631)
    assert [m.value for m in measurements] == [pytest.approx(1503.988)]


def test_summary_line_of_a_kernel_not_in_a_table() -> None:
    doc = text_doc(
        "run command: nvprof python3 pool2d.py\n"
        "percent: 1.00; gpu_time: 437.4400 ms; calls: 1000; function: void "
        "phi::funcs::KernelPool2D<float>(int, float const *)\n"
        "total gpu_time (exclude DtoH): 437.4400 ms (kernel: 437.4400 ms (100.00%))\n"
    )
    events, measurements, problems = _split(doc)
    assert problems == []
    (kernel,) = events
    assert kernel.event == "void phi::funcs::KernelPool2D<float>(int, float const *)"
    assert (kernel.calls, kernel.total, kernel.ratio, kernel.place, kernel.line) == (
        1000,
        437.44,
        1.0,
        "GPU",
        2,
    )
    (total,) = measurements
    assert total.value == 437.44
    assert total.stats == {"source": "nvprof", "note": "exclude DtoH"}


def test_old_nvprof_without_type_column() -> None:
    doc = text_doc(
        "==2345== Profiling result:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " 70.12%  10.000ms        10  1.0000ms  900.00us  1.1000ms  kernelA(float*)\n"
        " 29.88%  4.2610ms         1  4.2610ms  4.2610ms  4.2610ms  [CUDA memcpy DtoH]\n"
        "\n"
        "==2345== API calls:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " 98.00%  300.00ms         5  60.000ms  1.0000us  299.00ms  cudaMalloc\n"
    )
    events, _, problems = _split(doc)
    assert problems == []
    assert [(e.event, e.place, e.line) for e in events] == [
        ("kernelA(float*)", "GPU", 3),
        ("[CUDA memcpy DtoH]", "GPU", 4),
        ("cudaMalloc", "API", 8),
    ]
    assert events[0].min == pytest.approx(0.9)


def test_cut_and_impossible_rows_are_problems() -> None:
    doc = text_doc(
        "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " GPU activities:   58.46%  210.67ms         4  52.667ms\n"
        "                  120.00%  1.0ms   1  1.0ms  1.0ms  1.0ms  kernelB\n"
        "                   10.00%  -1.0ms  1  1.0ms  1.0ms  1.0ms  kernelC\n"
        "                   10.00%  1.0     1  1.0ms  1.0ms  1.0ms  kernelD\n"
        "                   10.00%  nanms   1  1.0ms  1.0ms  1.0ms  kernelE\n"
        "                    5.00%  1.0ms   1  1.0ms  1.0ms  1.0ms  void kF<float>(float*, int\n"
        "                    5.00%  1.0ms   1  1.0ms  1.0ms  1.0ms  kernelG\n"
        "total gpu_time: 360.36\n"
    )
    events, measurements, problems = _split(doc)
    assert [e.event for e in events] == ["kernelG"]
    assert measurements == []
    assert [p.line for p in problems] == [2, 3, 4, 5, 6, 7, 9]
    reasons = [p.reason for p in problems]
    assert reasons[0] == "nvprof row cut short"
    assert "percentage" in reasons[1]
    assert "negative" in reasons[2]
    assert "no unit" in reasons[3]
    assert "not a number" in reasons[4]
    assert reasons[5] == "nvprof row cut inside the name"
    assert "unit" in reasons[6]
    assert {p.parser for p in problems} == {"nvprof"}


def test_cut_summary_line_is_a_problem() -> None:
    doc = text_doc("percent: 0.58; gpu_time: 210.6700 ms; calls: 4; funct")
    events, _, problems = _split(doc)
    assert events == []
    assert (problems[0].line, problems[0].reason) == (1, "nvprof summary line cut short")


def test_prose_naming_the_format_yields_nothing() -> None:
    doc = text_doc(
        "We read GPU activities: and API calls: from nvprof, and the total gpu_time.\n"
        "The percent: column is a share; --gpu_time  360.36 is a flag.\n"
    )
    assert list(nvprof.parse(doc)) == []


def test_large_text_without_the_format_is_cheap() -> None:
    noise = "I0911 06:41:55.494792  7238 operator.cc:100] gpu_time of op mul 3.5 (Time unit)\n"
    doc = text_doc(noise * 100_000)  # ~8 MB
    start = time.perf_counter()
    assert list(nvprof.parse(doc)) == []
    assert time.perf_counter() - start < 2.0
