"""trtexec output: the two samples, real documents of every layout, and hostile variants.

The samples are the project's (tests/fixtures/modern/samples/, copies of shared/samples/
modern/); the other real documents are in tests/fixtures/modern/trtexec/ (its README.md
names each source).
TensorRT 5 and 6 outputs were not found pasted anywhere public: their tests are built from
the format strings of trtexec.cpp (5.x) and sampleReporting.cpp (6.0) and say so.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from ingest.parsers import trtexec
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

MODERN = Path(__file__).resolve().parent.parent / "fixtures" / "modern"
FIXTURES = MODERN / "trtexec"
SAMPLES = MODERN / "samples"
STATS = ("min", "max", "mean", "median", "p90", "p95", "p99")


def fixture(name: str) -> DocText:
    path = FIXTURES / name if (FIXTURES / name).exists() else SAMPLES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(trtexec.parse, doc)


def values(measurements: list[Measurement]) -> dict[tuple[str, str], float]:
    return tools.by_stat(measurements)


def only(measurements: list[Measurement], **fields: object) -> list[Measurement]:
    return [m for m in measurements if all(getattr(m, k) == v for k, v in fields.items())]


# -- contract --------------------------------------------------------------------------


def test_contract_anchors_and_every_fixture_is_named_in_the_readme() -> None:
    assert trtexec.NAME == "trtexec"
    assert all(isinstance(a, str) and a for a in trtexec.ANCHORS)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert len(names) >= 10
    for name in names:
        assert f"`{name}`" in readme, f"{name} is not described in README.md"
        doc = fixture(name)
        # The gate runs the parser only on text with an anchor: text without one has nothing.
        if not any(a in doc.text for a in trtexec.ANCHORS):
            assert list(trtexec.parse(doc)) == [], name


# -- the samples -----------------------------------------------------------------------


def test_sample_tensorrt_10_summary() -> None:
    measurements, problems = split(fixture("trtexec_tensorrt-4177.md"))
    assert problems == []  # the cut "[W] * Throughput may be bound by E" is a warning line
    got = values(measurements)
    assert len(measurements) == 1 + 5 * 7
    assert got[("throughput", "")] == 130.298
    (throughput,) = only(measurements, metric="throughput")
    assert (throughput.unit, throughput.direction, throughput.params) == ("queries/s", "higher", {})
    latency = [got[("latency", s)] for s in STATS]
    assert latency == [5.38672, 13.3664, 7.60628, 7.16092, 10.2996, 10.8698, 12.9675]
    assert got[("enqueue_time", "p99")] == 14.1848
    assert got[("h2d_time", "median")] == 0.00814819
    assert got[("gpu_compute_time", "mean")] == 7.58404
    assert got[("gpu_compute_time", "p99")] == 12.9485
    assert got[("d2h_time", "max")] == 0.110596
    for m in measurements:
        assert (m.framework, m.task, m.benchmark, m.device, m.testbed) == (
            "tensorrt",
            "inference",
            "",
            "",
            {},
        )
        assert m.measured_at == datetime(2024, 10, 3, 10, 47, 59)
        assert m.stats["host_walltime_ms"] == pytest.approx(3000.82)
        assert m.stats["gpu_compute_total_ms"] == pytest.approx(2965.36)
        if m.metric != "throughput":
            assert (m.unit, m.direction) == ("ms", "lower")
    latency_p99 = only(measurements, metric="latency", params={"stat": "p99"})[0]
    assert latency_p99.line == 8
    assert latency_p99.raw.startswith("[10/03/2024-10:47:59] [I] Latency: min = 5.38672 ms")


def test_sample_expected_values() -> None:
    """The headline values of samples/modern/expected.tsv for the two trtexec samples."""
    got = {m.value for m in split(fixture("trtexec_tensorrt-4177.md"))[0]}
    assert {130.298, 7.60628, 12.9675, 7.58404, 7.16092, 12.9485} <= got
    got = {m.value for m in split(fixture("ort-perf-test_onnxruntime-17313.md"))[0]}
    assert {3716.81, 0.184305} <= got


def test_sample_cut_trtexec_part_of_the_onnxruntime_issue() -> None:
    """The issue quotes trtexec's summary up to "Enqueue Time: min": Throughput and the
    Latency line are whole; the rest (Enqueue Time on, H2D, GPU Compute, D2H, the totals)
    is cut. The onnxruntime_perf_test lines above are no trtexec lines."""
    measurements, problems = split(fixture("ort-perf-test_onnxruntime-17313.md"))
    got = values(measurements)
    assert set(got) == {("throughput", "")} | {("latency", s) for s in STATS}
    assert got[("throughput", "")] == 3716.81
    assert got[("latency", "mean")] == 0.184305
    assert got[("latency", "p99")] == 0.197144
    (cut,) = problems
    assert (cut.line, cut.severity, cut.parser) == (29, "error", "trtexec")
    assert cut.reason == "Enqueue Time line cut short at 'min'"
    assert all(m.stats == {} for m in measurements)  # the totals were cut too


# -- real documents of the other layouts --------------------------------------------------


def test_full_tensorrt_8_6_log_with_context() -> None:
    measurements, problems = split(fixture("hackathon-cookbook_result-03_trt86.log"))
    assert problems == []
    assert len(measurements) == 36  # the trace (window means) is not stored twice
    got = values(measurements)
    assert got[("throughput", "")] == 21009.2
    assert got[("gpu_compute_time", "p95")] == 0.045105
    for m in measurements:
        assert m.benchmark == "model-FP32"  # --loadEngine=./model-FP32.plan
        assert m.params.get("shapes") == "tensor-0:4x1x28x28"
        assert "precision" not in m.params and "batch_size" not in m.params
        assert m.device == "NVIDIA GeForce RTX 3090"
        assert m.testbed == {"tensorrt": "8.6.0"}
        assert (m.samples, m.warmup) == (63030, 4141)
        assert m.measured_at == datetime(2023, 3, 25, 7, 13, 26)
    gpu = only(measurements, metric="gpu_compute_time")
    assert {m.stats["gpu_compute_cv_percent"] for m in gpu} == {44.3558}
    assert all("gpu_compute_cv_percent" not in m.stats for m in measurements if m not in gpu)


def test_tensorrt_7_host_latency_blocks_and_zero_throughput() -> None:
    measurements, problems = split(fixture("tensorrt-2054_trt7-host-latency-block.md"))
    got = values(measurements)
    assert got == {
        ("latency", "min"): 1.64058,
        ("latency", "max"): 6.2915,
        ("latency", "mean"): 1.66069,
        ("latency", "median"): 1.65601,
        ("latency", "p99"): 1.67065,
        ("e2e_latency", "min"): 1.66368,
        ("e2e_latency", "max"): 7.65552,
        ("e2e_latency", "mean"): 3.00909,
        ("e2e_latency", "median"): 3.01636,
        ("e2e_latency", "p99"): 3.03931,
    }
    assert all(m.stats == {"host_walltime_ms": pytest.approx(3004.61)} for m in measurements)
    assert all(m.measured_at == datetime(2022, 6, 12, 22, 34) for m in measurements)
    zero, cut = problems
    assert (zero.line, zero.severity) == (17, "warning")
    assert zero.reason.startswith("throughput 0 qps is no measurement")
    assert (cut.line, cut.severity) == (19, "error")
    assert cut.reason == "Enqueue Time block cut after its header (no values)"


def test_tensorrt_7_trace_without_its_summary_is_stored_as_window_means() -> None:
    measurements, problems = split(fixture("tensorrt-1243_trt7-trace-only.md"))
    (cut,) = problems
    assert (cut.line, cut.reason) == (15, "Host Latency block cut after its header (no values)")
    got = values(measurements)
    assert got == {
        ("gpu_compute_time", "mean"): pytest.approx((3.05903 + 3.05674 + 3.04807 + 3.02651) / 4),
        ("latency", "mean"): pytest.approx((3.5863 + 3.58508 + 3.57705 + 3.55483) / 4),
        ("e2e_latency", "mean"): pytest.approx((6.07532 + 6.07249 + 6.04717 + 6.0396) / 4),
        ("enqueue_time", "mean"): pytest.approx((0.538281 + 0.489038 + 0.552759 + 0.478613) / 4),
    }
    for m in measurements:
        assert m.stats == {"source": "trace", "windows": 4, "runs_per_window": 10}
        assert m.samples == 40
        assert m.line == 11  # the first trace line ("_[05/10/2021-..." in italics markup)
        assert m.raw.count("\n") == 3
        assert m.measured_at == datetime(2021, 5, 10, 12, 24, 30)


def test_tensorrt_8_6_cut_trace_line_and_cut_summary() -> None:
    measurements, problems = split(fixture("tensorrt-3083_trt86-trace-and-summary.md"))
    got = values(measurements)
    assert got[("throughput", "")] == 234.19
    assert got[("latency", "p95")] == 4.31128
    assert {k for k in got if k[0] == "enqueue_time"} == {
        ("enqueue_time", s) for s in ("min", "max", "mean")
    }
    # The maintainer's `trtexec --onnx=model.onnx --fp16` in prose is not this run's command.
    assert all(m.benchmark == "" and "precision" not in m.params for m in measurements)
    trace, cut = problems
    assert (trace.line, trace.severity) == (13, "warning")  # the summary has it all
    assert "trace line cut short" in trace.reason
    assert (cut.line, cut.severity, cut.reason) == (
        18,
        "error",
        "Enqueue Time line cut short at 'median ='",
    )


def test_tensorrt_8_4_four_engines_each_with_its_command() -> None:
    measurements, problems = split(fixture("cassava-readme_four-engines.md"))
    assert problems == []
    assert len(measurements) == 4 * 26
    by_engine = {m.benchmark for m in measurements}
    assert by_engine == {f"efficientnet_b4_ns.{p}" for p in ("INT8", "FP16", "TF32", "FP32")}
    throughput = {m.benchmark: m.value for m in only(measurements, metric="throughput")}
    assert throughput == {
        "efficientnet_b4_ns.INT8": 37538.6,
        "efficientnet_b4_ns.FP16": 45453.9,
        "efficientnet_b4_ns.TF32": 41712.7,
        "efficientnet_b4_ns.FP32": 36973.1,
    }
    for m in measurements:
        assert {k: v for k, v in m.params.items() if k != "stat"} == {
            "batch_size": 8192,
            "streams": 8,
        }
    fp32 = values(only(measurements, benchmark="efficientnet_b4_ns.FP32"))
    assert set(fp32) == {("throughput", "")} | {
        (metric, s)
        for metric in ("latency", "enqueue_time", "h2d_time", "gpu_compute_time", "d2h_time")
        for s in ("min", "max", "mean", "median", "p99")
    }
    assert fp32[("d2h_time", "median")] == 0.0175781
    int8 = only(measurements, benchmark="efficientnet_b4_ns.INT8", metric="gpu_compute_time")
    assert {m.stats["gpu_compute_cv_percent"] for m in int8} == {14.8214}
    assert all(m.stats["gpu_compute_total_ms"] == pytest.approx(128916.0) for m in int8)


def test_typo_in_a_value_is_a_problem_and_the_rest_of_its_line_is_kept() -> None:
    measurements, problems = split(fixture("cassava-readme-2022_tf32-typo.md"))
    (typo,) = problems
    assert (typo.line, typo.severity) == (11, "error")
    assert typo.reason.startswith("D2H Latency: 'max = 0.0249023q ms' is not a statistic")
    got = values(measurements)
    assert got[("throughput", "")] == pytest.approx(1.25112e08)
    assert {k[1] for k in got if k[0] == "d2h_time"} == {"min", "mean", "median", "p99"}
    assert got[("d2h_time", "mean")] == 0.00983961
    assert all(m.benchmark == "resnet50.tf32" for m in measurements)


def test_end_to_end_host_latency_line_and_the_command_of_the_test_run() -> None:
    measurements, problems = split(fixture("yolov7-triton-readme_trt82-e2e.md"))
    assert problems == []
    got = values(measurements)
    assert [got[("e2e_latency", s)] for s in ("min", "max", "mean", "median", "p99")] == [
        25.8715,
        28.4102,
        26.672,
        26.6082,
        27.8314,
    ]
    assert got[("latency", "mean")] == 15.07
    assert got[("throughput", "")] == 73.4985
    for m in measurements:
        # The build line above (--onnx=yolov7.onnx ... --fp16) is not the run summarised:
        # the last trtexec command before the summary is "--loadEngine=...".
        assert m.benchmark == "yolov7-fp16-1x8x8"
        assert {k: v for k, v in m.params.items() if k != "stat"} == {}
        assert m.measured_at is None  # "[I] " lines have no stamp


def test_summary_pasted_with_lines_joined_and_equals_signs_lost() -> None:
    measurements, problems = split(fixture("yolo-on-jetson-4_summary-lines-joined.md"))
    assert problems == []
    got = values(measurements)
    assert len(got) == 26  # throughput + 5 metrics x 5 statistics
    assert got[("latency", "max")] == 6.19507  # "max 6.19507 ms"
    assert got[("gpu_compute_time", "p99")] == 3.87793  # "percentile(99%) 3.87793 ms"
    assert got[("d2h_time", "p99")] == 1.50879
    d2h = only(measurements, metric="d2h_time")[0]
    assert d2h.stats == {
        "host_walltime_ms": pytest.approx(3052.81),
        "gpu_compute_total_ms": pytest.approx(1877.96),
    }
    gpu = only(measurements, metric="gpu_compute_time")[0]
    assert gpu.stats["gpu_compute_cv_percent"] == 5.55763
    # The reply's prose "you can see  GPU Compute Time: min = 3.17834 ms, ..." adds nothing.
    assert {m.line for m in measurements} == {5, 6, 7, 8, 9, 10}


def test_device_and_version_from_the_log_above_a_summary_tail() -> None:
    measurements, problems = split(fixture("tensorrt-3747_device-and-summary-tail.md"))
    assert problems == []
    got = values(measurements)
    assert {k[0] for k in got} == {"gpu_compute_time", "d2h_time"}
    assert got[("gpu_compute_time", "median")] == 197.253
    for m in measurements:
        assert m.device == "NVIDIA GeForce RTX 2080"
        assert m.testbed == {"tensorrt": "8.6.3"}
        assert m.stats["host_walltime_ms"] == pytest.approx(3754.75)


def test_prefixed_summary_and_a_table_that_names_its_fields() -> None:
    measurements, problems = split(fixture("sync-ait-readme_prefixed-summary.md"))
    assert problems == []
    got = values(measurements)
    assert len(got) == 36
    assert got[("throughput", "")] == 120.699
    assert got[("h2d_time", "p90")] == 1.55664
    assert all(m.measured_at == datetime(2023, 5, 27, 12, 5, 31) for m in measurements)


def test_options_dump_without_a_summary_yields_nothing() -> None:
    assert list(trtexec.parse(fixture("tensorrt-4036_trt10-command-no-summary.md"))) == []


# -- older layouts, from the format strings ----------------------------------------------


TRT5 = """\
&&&& RUNNING TensorRT.trtexec # ./trtexec --deploy=/path/to/mnist.prototxt --output=prob --batch=16
[I] deploy: /path/to/mnist.prototxt
[I] output: prob
[I] batch: 16
[I] Average over 10 runs is 0.80 ms (host walltime is 0.90 ms, 99% percentile time is 1.1).
[I] Average over 10 runs is 0.84 ms (host walltime is 0.96 ms, 99% percentile time is 1.2).
[I] Average over 10 runs is 0.82 ms (host walltime is 0.93 ms, 99% percentile time is 1.1).
&&&& PASSED TensorRT.trtexec # ./trtexec --deploy=/path/to/mnist.prototxt --output=prob --batch=16
"""


def test_tensorrt_5_averages() -> None:
    """trtexec.cpp 5.x: "Average over N runs is X ms (host walltime is Y ms, P% percentile
    time is Z)." per iteration, and nothing else."""
    measurements, problems = split(text_doc(TRT5))
    assert problems == []
    got = values(measurements)
    assert got == {
        ("gpu_compute_time", "mean"): pytest.approx(0.82),
        ("latency", "mean"): pytest.approx((0.90 + 0.96 + 0.93) / 3),
    }
    for m in measurements:
        assert m.benchmark == "mnist"
        assert m.params == {"stat": "mean", "batch_size": 16}
        assert (m.samples, m.line) == (30, 5)
        assert m.stats == {"source": "trace", "windows": 3, "runs_per_window": 10}


def test_a_long_trace_keeps_its_first_and_last_lines_as_raw() -> None:
    line = (
        "[I] Average over 10 runs is {0}.5 ms (host walltime is {0}.9 ms,"
        " 99% percentile time is 2).\n"
    )
    doc = text_doc("".join(line.format(i) for i in range(40)))
    measurements, problems = split(doc)
    assert problems == []
    gpu = only(measurements, metric="gpu_compute_time")[0]
    assert gpu.value == pytest.approx(sum(i + 0.5 for i in range(40)) / 40)
    assert (gpu.samples, gpu.stats["windows"]) == (400, 40)
    lines = gpu.raw.split("\n")
    assert len(lines) == 31 and lines[15] == "[... 10 trace lines ...]"
    assert lines[0].startswith("[I] Average over 10 runs is 0.5 ms")
    assert lines[-1].startswith("[I] Average over 10 runs is 39.5 ms")


TRT6 = """\
&&&& RUNNING TensorRT.trtexec # ./trtexec --onnx=resnet50.onnx --fp16 --int8 --shapes=input:8x3x224x224
[I] Selected Device: Tesla T4
[I] Timing trace of 300 iterations over 3.012 s
[I] Averages of 10 iterations:
[I] GPU compute time average over 10 runs is 2.51 ms (latency average 2.83 ms)
[I] GPU compute time average over 10 runs is 2.49 ms (latency average 2.81 ms)
[I]
[I] Host latency
[I] min: 2.71 ms
[I] max: 3.9 ms
[I] mean: 2.82 ms
[I] median: 2.8 ms
[I] percentile: 3.1 ms (99%)
[I] throughput: 354.2 qps
[I] walltime: 0.846 s
[I]
[I] GPU Compute
[I] min: 2.4 ms
[I] max: 3.5 ms
[I] mean: 2.5 ms
[I] median: 2.49 ms
[I] percentile: 2.8 ms (99%)
[I] throughput: 400.1 qps
[I] walltime: 0.75 s
&&&& PASSED TensorRT.trtexec # ./trtexec --onnx=resnet50.onnx --fp16 --int8 --shapes=input:8x3x224x224
"""  # noqa: E501


def test_tensorrt_6_blocks() -> None:
    """sampleReporting.cpp 6.0: "Host latency" / "GPU Compute" blocks, "percentile: X ms
    (P%)", a throughput and walltime in each block, an empty line between the blocks.
    The GPU block's walltime is its total compute time, its throughput a stat."""
    measurements, problems = split(text_doc(TRT6))
    assert problems == []
    got = values(measurements)
    assert got == {
        ("latency", "min"): 2.71,
        ("latency", "max"): 3.9,
        ("latency", "mean"): 2.82,
        ("latency", "median"): 2.8,
        ("latency", "p99"): 3.1,
        ("throughput", ""): 354.2,
        ("gpu_compute_time", "min"): 2.4,
        ("gpu_compute_time", "max"): 3.5,
        ("gpu_compute_time", "mean"): 2.5,
        ("gpu_compute_time", "median"): 2.49,
        ("gpu_compute_time", "p99"): 2.8,
    }
    for m in measurements:
        assert m.benchmark == "resnet50"
        assert m.params["precision"] == "fp16+int8"
        assert m.params["shapes"] == "input:8x3x224x224"
        assert (m.device, m.samples) == ("Tesla T4", 300)
    totals = {"host_walltime_ms": pytest.approx(846.0), "gpu_compute_total_ms": 750.0}
    assert only(measurements, metric="latency")[0].stats == totals
    gpu = only(measurements, metric="gpu_compute_time")[0]
    assert gpu.stats == {**totals, "gpu_compute_throughput_qps": 400.1}


TRT71 = """\
&&&& RUNNING TensorRT.trtexec # trtexec --onnx=bert_base.onnx --fp16
[08/01/2020-10:00:00] [I] === Performance summary ===
[08/01/2020-10:00:00] [I] Throughput: 812.5 qps
[08/01/2020-10:00:00] [I] Latency: min = 1.19 ms, max = 1.6 ms, mean = 1.22 ms, median = 1.21 ms, percentile(99.9%) = 1.5 ms
[08/01/2020-10:00:00] [I] End-to-End Host Latency: min = 2.3 ms, max = 3.1 ms, mean = 2.41 ms, median = 2.4 ms, percentile(99.9%) = 2.9 ms
[08/01/2020-10:00:00] [I] Enqueue Time: min = 0.2 ms, max = 0.5 ms, mean = 0.21 ms, median = 0.2 ms, percentile(99.9%) = 0.45 ms
[08/01/2020-10:00:00] [I] Total Host Walltime: 3.001 s
&&&& PASSED TensorRT.trtexec # trtexec --onnx=bert_base.onnx --fp16
"""  # noqa: E501


def test_tensorrt_7_1_summary_with_one_odd_percentile() -> None:
    measurements, problems = split(text_doc(TRT71))
    assert problems == []
    got = values(measurements)
    assert got[("latency", "p99.9")] == 1.5
    assert got[("e2e_latency", "p99.9")] == 2.9
    assert got[("enqueue_time", "median")] == 0.2
    assert all(m.params.get("precision") == "fp16" for m in measurements)
    assert all(m.benchmark == "bert_base" for m in measurements)


# -- context ---------------------------------------------------------------------------

SUMMARY = """\
[{stamp}] [I] === Performance summary ===
[{stamp}] [I] Throughput: {qps} qps
[{stamp}] [I] Latency: min = 1 ms, max = 2 ms, mean = 1.5 ms, median = 1.4 ms, percentile(99%) = 1.9 ms
"""  # noqa: E501


def summary(qps: float, stamp: str = "01/02/2025-03:04:05") -> str:
    return SUMMARY.format(qps=qps, stamp=stamp)


def test_two_runs_in_one_log_each_take_their_own_context() -> None:
    doc = text_doc(
        "&&&& RUNNING TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=a.onnx --batch=4\n"
        "[I] Selected Device: NVIDIA A100-SXM4-80GB\n"
        "[I] Timing trace has 900 queries over 3.0 s\n"
        + summary(300)
        + "&&&& PASSED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=a.onnx --batch=4\n"
        "&&&& RUNNING TensorRT.trtexec [TensorRT v100200] # trtexec --loadEngine=b.plan\n"
        + summary(600)
        + "&&&& PASSED TensorRT.trtexec [TensorRT v100200] # trtexec --loadEngine=b.plan\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    first = only(measurements, benchmark="a")
    second = only(measurements, benchmark="b")
    assert len(first) == len(second) == 6
    assert {(m.device, m.samples, m.params.get("batch_size")) for m in first} == {
        ("NVIDIA A100-SXM4-80GB", 900, 4)
    }
    assert {m.testbed["tensorrt"] for m in first} == {"8.6.1"}
    # Nothing of the first run leaks into the second.
    assert {(m.device, m.samples, m.params.get("batch_size")) for m in second} == {("", None, None)}
    assert {m.testbed["tensorrt"] for m in second} == {"10.2.0"}


def test_command_from_the_passed_line_below_a_summary_tail() -> None:
    doc = text_doc(
        summary(99) + "&&&& PASSED TensorRT.trtexec [TensorRT v8401] # ./tensorrt/bin/trtexec "
        "--loadEngine=yolov7-fp16-1x8x8.engine --int8\n" + summary(77)
    )
    measurements, _ = split(doc)
    tail = only(measurements, line=2) + only(measurements, line=3)
    assert {(m.benchmark, m.testbed.get("tensorrt"), m.params.get("precision")) for m in tail} == {
        ("yolov7-fp16-1x8x8", "8.4.1", "int8")
    }
    after = [m for m in measurements if m.line > 4]
    assert {m.benchmark for m in after} == {""}  # a new run began after the PASSED line


def test_shell_command_lines() -> None:
    doc = text_doc(
        "Use `trtexec --onnx=wrong.onnx --fp16` as in the docs.\n"
        "# Build with trtexec and docker\n"
        "#/usr/src/tensorrt/bin/trtexec --onnx=commented.onnx\n"
        r"(venv) PS C:\work> D:\TensorRT-10.2.0.19\bin\trtexec.exe --onnx=C:\models\unet.v2.onnx \\"
        "\n"
        "    --shapes=x:1x3x512x512 --best --infStreams=2 --batch=oops\n" + summary(10)
    )
    measurements, problems = split(doc)
    assert problems == []
    for m in measurements:
        assert m.benchmark == "unet.v2"
        assert {k: v for k, v in m.params.items() if k != "stat"} == {
            "shapes": "x:1x3x512x512",
            "precision": "best",
            "streams": 2,
        }


def test_model_path_of_the_options_dump_when_no_command_was_pasted() -> None:
    doc = text_doc(
        "[11/01/2024-10:32:46] [I] === Model Options ===\n"
        "[11/01/2024-10:32:46] [I] Format: ONNX\n"
        "[11/01/2024-10:32:46] [I] Model: models/alexnet/alexnet_fp16.onnx\n" + summary(5)
    )
    measurements, _ = split(doc)
    assert {m.benchmark for m in measurements} == {"alexnet_fp16"}


def test_version_numbers_of_the_running_line() -> None:
    assert trtexec._version_of("8601") == "8.6.1"
    assert trtexec._version_of("7103") == "7.1.3"
    assert trtexec._version_of("100200") == "10.2.0"
    assert trtexec._version_of("101600") == "10.16.0"


# -- hostile and cut input ---------------------------------------------------------------


def test_impossible_values_and_unknown_lines_are_problems() -> None:
    doc = text_doc(
        "[I] === Performance summary ===\n"
        "[I] Throughput: 0 qps\n"
        "[I] Latency: min = inf ms, max = nan ms, mean = -1 ms, median = 1.2 ms,"
        " percentile(99%) = 1.3 s\n"
        "[I] Host Compute Time: min = 1 ms, max = 2 ms\n"
        "[I] GPU Compute Time: min = 1.0 ms, max = 2.0 ms, mean = 1.5 ms, median = 1.4 ms ...\n"
        "[I] Total Host Walltime: 3.0\n"
        "[I] Total GPU Compute Time: 2.9 s\n"
    )
    measurements, problems = split(doc)
    got = values(measurements)
    assert got == {
        ("latency", "median"): 1.2,
        ("latency", "p99"): 1300.0,  # "1.3 s" in ms
        ("gpu_compute_time", "min"): 1.0,
        ("gpu_compute_time", "max"): 2.0,
        ("gpu_compute_time", "mean"): 1.5,
        ("gpu_compute_time", "median"): 1.4,
    }
    assert all(m.stats == {"gpu_compute_total_ms": pytest.approx(2900.0)} for m in measurements)
    reasons = [(p.line, p.severity, p.reason) for p in problems]
    assert reasons[0][:2] == (2, "warning")  # 0 qps
    assert [r[:2] for r in reasons[1:4]] == [(3, "error")] * 3  # inf, nan, negative
    assert "not a number" in reasons[1][2] and "not a number" in reasons[2][2]
    assert "negative" in reasons[3][2]
    assert reasons[4] == (4, "error", "summary line of unknown metric 'Host Compute Time'")
    assert reasons[5][:2] == (5, "warning") and "'...'" in reasons[5][2]
    assert reasons[6] == (6, "error", "Total Host Walltime: '3.0' has no unit (line cut?)")
    assert len(reasons) == 7


def test_summary_pasted_with_empty_lines_between_its_lines() -> None:
    doc = text_doc(
        "=== Performance summary ===\n\n"
        "Throughput: 50 qps\n\n"
        "Latency: min = 1 ms, max = 3 ms, mean = 2 ms, median = 2 ms, percentile(99%) = 3 ms\n\n"
        "Total Host Walltime: 3.1 s\n\n"
        "That is all we measured: Latency: min = 9 ms was an outlier.\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    assert len(measurements) == 6
    assert all(m.stats == {"host_walltime_ms": pytest.approx(3100.0)} for m in measurements)


def test_header_cut_right_after_is_a_problem() -> None:
    measurements, problems = split(text_doc("log:\n[I] === Performance summary ===\n"))
    assert measurements == []
    assert [(p.line, p.reason) for p in problems] == [
        (2, "performance summary cut after its header")
    ]


def test_prose_and_explanations_yield_nothing() -> None:
    doc = text_doc(
        "Look for the `=== Performance summary ===` section; its Throughput: line matters.\n"
        "We saw GPU Compute Time: min = 3.1 ms in our run, and Host Latency was fine.\n"
        "Throughput: 45.3 requests/s\n"
        "Average over the week the latency rose.\n"
        "[V] === Explanations of the performance metrics ===\n"
        "[V] Total Host Walltime: the host walltime from when the first query is enqueued.\n"
        "[V] Throughput: the observed throughput computed by dividing the number of queries.\n"
        "[V] Latency: the summation of H2D Latency, GPU Compute Time, and D2H Latency.\n"
        "[V] End-to-End Host Latency: the duration from when the H2D of a query is called.\n"
        "Host Latency\n"
        "is what the host sees.\n"
    )
    assert list(trtexec.parse(doc)) == []


def test_a_long_trace_before_a_summary_is_not_stored_twice() -> None:
    # (Its speed is a benchmark's to measure: no timing in a test.)
    line = (
        "[03/25/2023-07:13:26] [I] Average on 10 runs - GPU latency: 0.0433136 ms - "
        "Host latency: 0.0513611 ms (enqueue 0.0253128 ms)\n"
    )
    noise = "[03/25/2023-07:13:23] [V] [TRT] Registered plugin creator - ::Clip_TRT version 1\n"
    doc = text_doc(noise * 50_000 + line * 100_000 + summary(21009.2))  # ~16 MB
    measurements, problems = split(doc)
    assert problems == [] and len(measurements) == 6  # the summary; the trace not twice
