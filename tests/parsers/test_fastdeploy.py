"""FastDeploy benchmark outputs: the PR 449 results table (the sample), the PR 437 console
log, and the console/result-file layouts of FastDeploy's benchmark code.

Fixtures are in tests/fixtures/modern/fastdeploy/ (its README.md names each source). The
result-file and C++ console layouts were not found pasted whole in public documents:
their tests are built from the format strings of benchmark/benchmark_ppcls.py,
benchmark/cpp/macros.h and benchmark/cpp/option.h, and say so.
"""

from __future__ import annotations

from pathlib import Path

from ingest.parsers import fastdeploy
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "fastdeploy"
SAMPLE = "paddle2x-fastdeploy-table_fastdeploy-pr-449.md"


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(fastdeploy.parse, doc)


def test_contract_anchors_and_readme() -> None:
    assert fastdeploy.NAME == "fastdeploy"
    assert all(isinstance(a, str) and a for a in fastdeploy.ANCHORS)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in fastdeploy.ANCHORS)


def test_sample_is_the_shared_sample_byte_for_byte() -> None:
    shared = Path("/work/shared/samples/modern") / SAMPLE
    if shared.exists():
        assert (FIXTURES / SAMPLE).read_bytes() == shared.read_bytes()


def test_sample_table_every_row() -> None:
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []
    assert len(measurements) == 12 * 2
    rows = [
        (
            m.line,
            m.benchmark,
            m.version,
            m.params["backend"],
            m.params["precision"],
            m.metric,
            m.value,
        )
        for m in measurements
    ]
    assert rows[:4] == [
        (15, "PP-YOLOE-L", None, "PP-TensorRT", "fp32", "runtime_latency", 56.91),
        (15, "PP-YOLOE-L", None, "PP-TensorRT", "fp32", "end2end_latency", 64.29),
        (16, "PP-YOLOE-L", None, "PP-TensorRT", "fp16", "runtime_latency", 46.76),
        (16, "PP-YOLOE-L", None, "PP-TensorRT", "fp16", "end2end_latency", 52.69),
    ]
    assert rows[-4:] == [
        (25, "YOLOv3-Dark53", "dev", "TensorRT", "fp32", "runtime_latency", 10.7831),
        (25, "YOLOv3-Dark53", "dev", "TensorRT", "fp32", "end2end_latency", 15.2),
        (26, "YOLOv3-Dark53", "dev", "TensorRT", "fp16", "runtime_latency", 5.03),
        (26, "YOLOv3-Dark53", "dev", "TensorRT", "fp16", "end2end_latency", 9.38),
    ]
    assert {m.version for m in measurements} == {None, "v0.4", "0.4", "dev"}
    # expected.tsv: core 56.91, 64.29; extra 5.03, 9.38 (all in ms already)
    assert {56.91, 64.29, 5.03, 9.38} <= {m.value for m in measurements}
    for m in measurements:
        assert (m.unit, m.direction, m.framework, m.device, m.task) == (
            "ms",
            "lower",
            "fastdeploy",
            "",
            "inference",
        )
        assert m.params["stat"] == "mean"
        assert set(m.params) == {"backend", "precision", "stat"}
    # The 精度 column is the mAP, kept as an extra of the rows that print it.
    accuracy = {(m.line, m.stats.get("accuracy")) for m in measurements}
    assert (15, 51.4) in accuracy and (16, None) in accuracy


def test_pr_437_console_runtime_stats() -> None:
    measurements, problems = split(fixture("fastdeploy_pr_437_ipu.md"))
    assert problems == []
    assert [(m.line, m.benchmark, m.metric, m.value) for m in measurements] == [
        (14, "EfficientNetB0_small_infer", "runtime_latency", 1.72749),
        (21, "EfficientNetB7_infer", "runtime_latency", 10.1965),
        (28, "GhostNet_x0_5_infer", "runtime_latency", 1.64145),
    ]
    for m in measurements:
        assert m.params == {"stat": "mean"}
        assert m.stats == {"iterations": 2000, "warmup_iterations": 400}
        assert (m.unit, m.framework) == ("ms", "fastdeploy")


def test_cpp_benchmark_console() -> None:
    """benchmark/cpp/option.h PrintBenchmarkInfo + macros.h BENCHMARK_MODEL output; the
    Model/Backend Info lines are those FastDeploy PR 1816 quotes."""
    doc = text_doc(
        "[INFO] fastdeploy/runtime/runtime.cc(279)::CreateOpenVINOBackend\tRuntime initialized"
        " with Backend::OPENVINO in Device::CPU.\n"
        "\n"
        "======= Model Info =======\n"
        "model_name: en_ppstructure_mobile_v2.0_SLANet_infer\n"
        "profile_mode: runtime\n"
        "include_h2d_d2h: false\n"
        "\n"
        "======= Backend Info =======\n"
        "warmup: 50\n"
        "repeats: 200\n"
        "device: gpu\n"
        "device_id: 0\n"
        "use_fp16: false\n"
        "backend: paddle\n"
        "collect_memory_info: true\n"
        "sampling_interval: 50ms\n"
        "\n"
        "Runtime(ms): 12.3456ms.\n"
        "cpu_rss_mb: 812MB.\n"
        "gpu_rss_mb: 1024MB.\n"
        "gpu_util: 35MB.\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    got = tools.by_stat(measurements)
    assert got == {
        ("runtime_latency", "mean"): 12.3456,
        ("cpu_rss", ""): 812.0,
        ("gpu_rss", ""): 1024.0,
        ("gpu_util", ""): 35.0,
    }
    runtime = measurements[0]
    assert (runtime.benchmark, runtime.device, runtime.warmup, runtime.samples) == (
        "en_ppstructure_mobile_v2.0_SLANet_infer",
        "gpu",
        50,
        200,
    )
    assert runtime.params == {
        "stat": "mean",
        "backend": "paddle",
        "use_fp16": False,
        "include_h2d_d2h": False,
    }
    assert [m.unit for m in measurements] == ["ms", "MB", "MB", "%"]


def test_python_result_files_and_failures() -> None:
    """benchmark_ppcls.py's result file lines; convert_info.py's ====NAME==== header."""
    doc = text_doc(
        "====ResNet50_vd_infer_trt_fp16_gpu====: \n"
        "Runtime(ms): 1.2345 \n"
        "End2End(ms): 3.2 \n"
        "cpu_rss_mb: 1500.5 \n"
        "gpu_rss_mb: 900.25 \n"
        "gpu_util: 0.35 \n"
        "====MobileNetV1_infer_ort_cpu_8====: \n"
        "!!!!!Infer Failed\n"
        "====PPYOLOE_infer_paddle_gpu====: \n"
        "End2End(ms): Failed\n"
        "Runtime(ms): 4.\n"  # cut after the point
    )
    measurements, problems = split(doc)
    first = [m for m in measurements if m.benchmark == "ResNet50_vd_infer"]
    assert [(m.metric, m.value) for m in first] == [
        ("runtime_latency", 1.2345),
        ("end2end_latency", 3.2),
        ("cpu_rss", 1500.5),
        ("gpu_rss", 900.25),
    ]
    assert first[0].params == {"backend": "trt", "use_fp16": True, "stat": "mean"}
    assert first[0].device == "gpu"
    failed = [m for m in measurements if m.status != "ok"]
    assert [(m.benchmark, m.metric, m.status, m.value) for m in failed] == [
        ("PPYOLOE_infer", "end2end_latency", "error", None)
    ]
    assert [(p.line, p.severity) for p in problems] == [
        (6, "warning"),
        (8, "warning"),
        (11, "error"),
    ]
    assert "fraction" in problems[0].reason and "Infer Failed" in problems[1].reason
    assert "'4.'" in problems[2].reason


def test_garbled_and_cut_tables() -> None:
    text = fixture(SAMPLE).text
    garbled = (
        text.replace("|46.76ms |", "|46.76parsecs |")
        .replace("| YOLOv3-Dark53 | PP-TensorRT | FP16 | | 10.89ms | 16.43ms |", "| YOLOv3 | x |")
        .replace("| 6.30ms |", "| N/A |")
    )
    cut = garbled[: garbled.index("| 5.03ms | 9.38ms|") + len("| 5.03")]
    measurements, problems = split(text_doc(cut))
    assert [(p.line, p.parser) for p in problems] == [
        (16, "fastdeploy"),
        (22, "fastdeploy"),
        (26, "fastdeploy"),
    ]
    assert "unknown unit" in problems[0].reason
    assert "2 cells" in problems[1].reason
    assert "cut" in problems[2].reason
    lines = {m.line for m in measurements}
    assert 22 not in lines and 26 not in lines
    row24 = [m for m in measurements if m.line == 24]
    assert [(m.metric, m.value) for m in row24] == [("end2end_latency", 13.52)]  # N/A skipped
    assert len(measurements) == 24 - 1 - 2 - 2 - 1


def test_unitless_table_cells_are_problems_and_other_tables_are_not_ours() -> None:
    doc = text_doc(
        "| Model | Backend | Runtime | End2End |\n"
        "| --- | --- | --- | --- |\n"
        "| ResNet50 | ORT | 5.1 | 7.9 |\n"
        "\n"
        "| Model | Runtime |\n"
        "| --- | --- |\n"
        "| ResNet50 | 5.1 ms |\n"
        "\n"
        "Runtime: 3 ms\n"
    )
    measurements, problems = split(doc)
    assert measurements == []
    assert [p.line for p in problems] == [3, 3]
    assert all("no unit" in p.reason for p in problems)


def test_header_backend_words() -> None:
    doc = text_doc(
        "| model | ORT Runtime(ms) | TRT FP16 End2End(ms) |\n"
        "|:--|:--|:--|\n"
        "| PP-LiteSeg | 12.5 | 3.25 |\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    assert [(m.benchmark, m.metric, m.value, m.params) for m in measurements] == [
        ("PP-LiteSeg", "runtime_latency", 12.5, {"backend": "ort", "stat": "mean"}),
        (
            "PP-LiteSeg",
            "end2end_latency",
            3.25,
            {"backend": "trt", "precision": "fp16", "stat": "mean"},
        ),
    ]
