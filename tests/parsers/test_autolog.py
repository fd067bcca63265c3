"""AutoLog reports: real Python, C++ and bare-line documents, and cut/garbled variants.

The fixtures are in tests/fixtures/modern/autolog/ (its README.md names each source).
The PaddleInferBenchmark variant (PaddleDetection benchmark_utils.py, "%(asctime)s -
name - INFO - message" prefix) and PaddleDetection's C++ "preproce_time" line were not
found pasted whole: their tests are built from those files' format strings and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import autolog
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "autolog"


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(autolog.parse, doc)


def test_contract_anchors_and_readme() -> None:
    assert autolog.NAME == "autolog"
    assert all(isinstance(a, str) and a for a in autolog.ANCHORS)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            doc = fixture(path.name)
            assert any(a in doc.text for a in autolog.ANCHORS)


def test_python_gpu_report() -> None:
    measurements, problems = split(fixture("paddle_cait_python_infer_gpu_batchsize_1.log"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got == {
        ("cpu_rss", "mean"): 2362.1016,
        ("gpu_rss", "max"): 964.0,
        ("gpu_util", "max"): 4.0,
        ("total_time", ""): 1738.0,
        ("preprocess_time", "mean"): 1722.6572,
        ("inference_time", "mean"): 15.321,
        ("postprocess_time", "mean"): 0.0565,
    }
    params = {
        "precision": "fp32",
        "batch_size": 1,
        "enable_tensorrt": False,
        "enable_mkldnn": False,
        "cpu_threads": 1,
        "ir_optim": True,
    }
    for m in measurements:
        assert (m.framework, m.benchmark, m.device, m.task) == (
            "paddle",
            "classification",
            "gpu",
            "inference",
        )
        assert {k: v for k, v in m.params.items() if k != "stat"} == params
        assert m.testbed == {
            "os": "Ubuntu 16.04",
            "cuda_version": "10.1.243",
            "cudnn_version": "7.3.1",
            "driver_version": "460.32.03",
            "paddle_version": "2.2.2",
            "paddle_commit": "b031c389938bfa15e15bb20494c76f86289d77b0",
        }
        assert m.stats == {"input_shape": "dynamic", "data_num": 1}
    units = {m.metric: (m.unit, m.direction) for m in measurements}
    assert units["inference_time"] == ("ms", "lower")
    assert units["total_time"] == ("ms", "lower")
    assert units["cpu_rss"] == ("MB", "lower")
    assert units["gpu_util"] == ("%", "lower")
    inference = next(m for m in measurements if m.metric == "inference_time")
    assert inference.line == 36
    assert inference.raw.startswith("[2022/05/13 23:07:42] root INFO:  preprocess_time(ms):")


def test_cpu_run_none_values_are_skipped() -> None:
    measurements, problems = split(fixture("paddleclas_tipc_fleet_infer_cpu.md"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert set(got) == {
        ("cpu_rss", "mean"),
        ("total_time", ""),
        ("preprocess_time", "mean"),
        ("inference_time", "mean"),
        ("postprocess_time", "mean"),
    }
    assert got[("inference_time", "mean")] == 317.9824
    assert got[("total_time", "")] == pytest.approx(352.7)
    m = measurements[0]
    assert (m.benchmark, m.device) == ("cls", "cpu")
    assert m.params["batch_size"] == 16 and m.params["cpu_threads"] == 6
    assert "cudnn_version" not in m.testbed  # "None.None.None"
    assert m.testbed["paddle_version"] == "2.3.0-rc0"
    assert m.stats == {"input_shape": "[3, 224, 224]", "data_num": 3}


def test_cpp_glog_report() -> None:
    measurements, problems = split(fixture("paddlevideo_cpp_infer_readme.md"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got == {
        ("total_time", ""): 2739.0,
        ("preprocess_time", "mean"): 10.6524,
        ("inference_time", "mean"): 1269.55,
        ("postprocess_time", "mean"): 0.009118,
    }
    m = measurements[-1]
    assert (m.benchmark, m.device, m.framework) == ("rec", "cpu", "paddle")
    assert m.params == {
        "stat": "mean",
        "ir_optim": True,
        "enable_tensorrt": False,  # printed "0" by the C++ logger
        "enable_mkldnn": False,
        "cpu_threads": 10,
        "batch_size": 1,
        "precision": "fp32",
    }
    assert m.testbed == {}


def test_bare_times_lines_are_two_runs() -> None:
    measurements, problems = split(fixture("paddleocr_pr_6471.md"))
    assert problems == []
    assert [(m.line, m.metric, m.value) for m in measurements] == [
        (6, "preprocess_time", 8.9351),
        (6, "inference_time", 16.3139),
        (6, "postprocess_time", 10.3171),
        (9, "preprocess_time", 2.9121),
        (9, "inference_time", 16.755),
        (9, "postprocess_time", 10.4984),
    ]
    assert all(m.benchmark == "" and m.params == {"stat": "mean"} for m in measurements)


def test_paddle_infer_benchmark_variant_and_identifier() -> None:
    """From PaddleDetection benchmark_utils.py's format strings (PaddleInferBenchmark)."""
    lines = [
        "---------------------- Paddle info ----------------------",
        "[DET] paddle_version: 2.1.0",
        "[DET] paddle_commit: 4ccd9a0",
        "[DET] paddle_branch: release/2.1",
        "[DET] log_api_version: 1.0",
        "----------------------- Conf info -----------------------",
        "[DET] runtime_device: gpu",
        "[DET] ir_optim: True",
        "[DET] enable_memory_optim: True",
        "[DET] enable_tensorrt: True",
        "[DET] enable_mkldnn: False",
        "[DET] cpu_math_library_num_threads: 1",
        "----------------------- Model info ----------------------",
        "[DET] model_name: output_inference/ppyolo_r50vd_dcn_1x_coco/",
        "[DET] precision: trt_fp16",
        "----------------------- Data info -----------------------",
        "[DET] batch_size: 1",
        "[DET] input_shape: dynamic_shape",
        "[DET] data_num: 100",
        "----------------------- Perf info -----------------------",
        "[DET] cpu_rss(MB): 2008, gpu_rss(MB): 1288, gpu_util: 35.5%",
        "[DET] total time spent(s): 3.1942",
        "[DET] preprocess_time(ms): 7.5, inference_time(ms): 20.6, postprocess_time(ms): 0.0",
    ]
    prefix = "2021-08-19 09:36:36,123 - benchmark_utils - INFO - "
    doc = text_doc("\n".join(prefix + line for line in lines) + "\n")
    measurements, problems = split(doc)
    assert problems == []
    got = tools.by_stat(measurements)
    assert got[("inference_time", "mean")] == 20.6
    assert got[("gpu_util", "max")] == 35.5
    assert got[("total_time", "")] == pytest.approx(3194.2)
    m = measurements[0]
    assert m.benchmark == "ppyolo_r50vd_dcn_1x_coco"
    assert m.params["precision"] == "trt_fp16" and m.params["enable_tensorrt"] is True
    assert m.testbed == {
        "paddle_version": "2.1.0",
        "paddle_commit": "4ccd9a0",
        "paddle_branch": "release/2.1",
    }


def test_paddledetection_cpp_spelling() -> None:
    """PaddleDetection deploy/cpp PrintBenchmarkLog's format strings."""
    doc = text_doc(
        "----------------------- Model info -----------------------\n"
        "model_name: ppyoloe_crn_l_300e_coco\n"
        "----------------------- Perf info ------------------------\n"
        "Total number of predicted data: 10 and total time spent(ms): 81.3\n"
        "preproce_time(ms): 2.1, inference_time(ms): 5.5, postprocess_time(ms): 0.4\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    got = tools.by_stat(measurements)
    assert got == {
        ("total_time", ""): 81.3,
        ("preprocess_time", "mean"): 2.1,
        ("inference_time", "mean"): 5.5,
        ("postprocess_time", "mean"): 0.4,
    }
    assert {m.benchmark for m in measurements} == {"ppyoloe_crn_l_300e_coco"}


def test_cut_and_garbled_reports() -> None:
    text = fixture("paddle_cait_python_infer_gpu_batchsize_1.log").text
    head, _, _ = text.partition("[2022/05/13 23:07:42] root INFO:  total time spent(s)")
    # A report cut after its memory line: no times line follows its Perf info.
    measurements, problems = split(text_doc(head))
    assert {m.metric for m in measurements} == {"cpu_rss", "gpu_rss", "gpu_util"}
    (cut,) = problems
    assert cut.line == 34 and "cut" in cut.reason and "line 33" in cut.reason
    # Garbled numbers: each is a Problem, the other values are still read.
    garbled = text.replace("inference_time(ms): 15.321", "inference_time(ms): abc").replace(
        "total time spent(s): 1.738", "total time spent(s): 1.7x"
    )
    measurements, problems = split(text_doc(garbled))
    assert {m.metric for m in measurements} == {
        "cpu_rss",
        "gpu_rss",
        "gpu_util",
        "preprocess_time",
        "postprocess_time",
    }
    assert [(p.line, p.parser) for p in problems] == [(35, "autolog"), (36, "autolog")]
    assert "inference_time(ms)" in problems[1].reason


def test_no_report_no_items() -> None:
    assert list(autolog.parse(text_doc("inference time: 12 ms\nnothing here\n"))) == []
