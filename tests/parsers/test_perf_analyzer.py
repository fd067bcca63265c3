"""Triton perf_analyzer / perf_client: the two samples, real documents of other layouts,
variants built from the tool's format strings, and cut or garbled blocks.

Every fixture is in tests/fixtures/modern/perf_analyzer/ (its README.md names each source).
The response-cache, Prometheus-metrics, decoupled, --verbose-csv and LLM layouts were not
found pasted anywhere public: their tests are built from the format strings of
inference_profiler.cc and report_writer.cc (triton-inference-server/perf_analyzer and
client) and say so.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest.parsers import perf_analyzer
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "perf_analyzer"
SAMPLE = "perf-analyzer_triton-server-3657.md"
SAMPLE_CSV = "perf-analyzer-csv_triton-client-measurements_metrics.csv"


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    assert path.exists(), f"missing fixture {name}"
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(perf_analyzer.parse, doc)


def only(measurements: list[Measurement], **params: object) -> list[Measurement]:
    return [m for m in measurements if all(m.params.get(k) == v for k, v in params.items())]


def values(measurements: list[Measurement], **params: object) -> dict[tuple[str, str], float]:
    return tools.by_stat(only(measurements, **params))


# -- contract --------------------------------------------------------------------------


def test_contract_anchors_and_every_fixture_is_named_in_the_readme() -> None:
    assert perf_analyzer.NAME == "perf_analyzer"
    assert perf_analyzer.ANCHORS == ("infer/sec", "Inferences/Second")
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert len(names) >= 6
    for name in names:
        assert f"`{name}`" in readme, f"{name} is not described in README.md"
        doc = fixture(name)
        assert any(a in doc.text for a in perf_analyzer.ANCHORS), name
        measurements, _ = split(doc)
        assert measurements, name
        for m in measurements:
            assert (m.framework, m.task, m.device, m.testbed) == ("triton", "inference", "", {})
            assert m.value is not None and m.value >= 0
            if m.metric.endswith("throughput"):
                assert (m.unit, m.direction, "stat" in m.params) == ("samples/s", "higher", False)
            else:
                assert (m.unit, m.direction) == ("ms", "lower")
                assert m.params["stat"] in ("mean", "std") or m.params["stat"].startswith("p")
            assert ("concurrency" in m.params) != ("request_rate" in m.params)


def test_samples_are_the_shared_ones_byte_for_byte() -> None:
    shared = Path("/work/shared/samples/modern")
    if not shared.exists():
        pytest.skip("shared samples not mounted")
    for name in (SAMPLE, SAMPLE_CSV):
        assert (FIXTURES / name).read_bytes() == (shared / name).read_bytes()


# -- the samples -----------------------------------------------------------------------


def test_sample_console_expected_values() -> None:
    """expected.tsv: 219.6, 4553 and 11129 usec (core), 3912 and 4180 usec (extra)."""
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []
    got = tools.by_stat(measurements)  # each value once: the summary line is not stored again
    assert got[("throughput", "")] == 219.6
    assert got[("latency", "mean")] == pytest.approx(4.553)
    assert got[("latency", "std")] == pytest.approx(1.593)
    assert got[("latency", "p50")] == pytest.approx(3.912)
    assert got[("latency", "p90")] == pytest.approx(6.667)
    assert got[("latency", "p95")] == pytest.approx(8.506)
    assert got[("latency", "p99")] == pytest.approx(11.129)
    assert got[("grpc_time", "mean")] == pytest.approx(4.55)
    assert got[("client_send_time", "mean")] == pytest.approx(0.012)
    assert got[("response_wait_time", "mean")] == pytest.approx(4.536)
    assert got[("client_recv_time", "mean")] == pytest.approx(0.002)
    assert got[("server_request_latency", "mean")] == pytest.approx(4.18)
    assert got[("server_overhead_time", "mean")] == pytest.approx(0.002)
    assert got[("server_queue_time", "mean")] == pytest.approx(0.03)
    assert got[("compute_input_time", "mean")] == pytest.approx(3.012)
    assert got[("compute_infer_time", "mean")] == pytest.approx(1.1)
    assert got[("compute_output_time", "mean")] == pytest.approx(0.036)
    assert len(measurements) == 17
    (throughput,) = [m for m in measurements if m.metric == "throughput"]
    assert (throughput.unit, throughput.direction) == ("samples/s", "higher")
    assert throughput.params == {"concurrency": 1, "batch": 1}
    assert (throughput.line, throughput.raw) == (18, "Throughput: 219.6 infer/sec")
    p99 = next(m for m in measurements if m.params.get("stat") == "p99")
    assert (p99.metric, p99.unit, p99.direction) == ("latency", "ms", "lower")
    assert p99.params == {"concurrency": 1, "batch": 1, "stat": "p99"}
    for m in measurements:
        assert m.benchmark == ""  # the issue shows no command line
        assert m.samples == 1098
        assert m.stats["request_count"] == 1098
        assert m.stats["server_inference_count"] == 1315
        assert m.stats["passes"] == 3
        assert m.stats["calls"] == "sync"
        assert m.stats["measurement_window_ms"] == 5000


def test_sample_csv_expected_values_rows_in_throughput_order() -> None:
    """expected.tsv: 69.2, 21018 usec, 87.2 (core), 13891 and 34766 usec (extra)."""
    measurements, problems = split(fixture(SAMPLE_CSV))
    assert problems == []
    assert len(measurements) == 4 * 12
    c1 = values(measurements, concurrency=1)
    c2 = values(measurements, concurrency=2)
    assert c1[("throughput", "")] == 69.2
    assert c1[("latency", "p99")] == pytest.approx(21.018)
    assert c1[("latency", "p50")] == pytest.approx(13.891)
    assert c1[("client_send_time", "mean")] == pytest.approx(0.225)
    assert c1[("network_server_send_recv_time", "mean")] == pytest.approx(2.148)
    assert c1[("server_queue_time", "mean")] == pytest.approx(0.064)
    assert c1[("compute_infer_time", "mean")] == pytest.approx(11.781)
    assert c1[("client_recv_time", "mean")] == 0.0
    assert c2[("throughput", "")] == 87.2  # the last row: rows are sorted by throughput
    assert c2[("latency", "p99")] == pytest.approx(34.766)
    assert values(measurements, concurrency=4)[("server_queue_time", "mean")] == pytest.approx(
        33.669
    )
    assert values(measurements, concurrency=3)[("throughput", "")] == 84.2
    (tp,) = [m for m in only(measurements, concurrency=2) if m.metric == "throughput"]
    assert (tp.line, tp.params, tp.unit, tp.benchmark) == (5, {"concurrency": 2}, "samples/s", "")
    assert tp.stats == {"source": "csv"}


# -- real documents of other layouts ---------------------------------------------------


def test_t5_readme_grpc_percentile_mode_and_async() -> None:
    """--percentile=95: no Avg latency line, the heading says "Client p95 Batch Latency"."""
    measurements, problems = split(fixture("t5-faster-transformer-readme_grpc-p95.md"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert ("latency", "mean") not in got
    assert got[("throughput", "")] == 8.71283
    assert got[("latency", "p95")] == pytest.approx(458.693)
    assert got[("latency", "p99")] == pytest.approx(476.971)
    assert got[("server_queue_time", "mean")] == pytest.approx(338.436)
    assert got[("compute_infer_time", "mean")] == pytest.approx(116.19)
    assert got[("client_send_time", "mean")] == pytest.approx(0.003)
    for m in measurements:
        assert m.params["concurrency"] == 4 and m.params["batch"] == 1
        assert m.benchmark == ""  # "./perf_analyzer_runner.sh" is no perf_analyzer command
        assert m.stats["calls"] == "async"
        assert m.stats["stabilization"] == "p95 latency"


def test_translate_tutorial_request_rate_ensemble_and_summary_lines() -> None:
    measurements, problems = split(fixture("translate-tutorial_request-rate-bls.md"))
    assert problems == []
    block = [m for m in only(measurements, request_rate=0.894531) if m.benchmark == "translate"]
    block = [m for m in block if m.stats.get("source") != "summary"]
    top = [m for m in block if "composing_model" not in m.params]
    got = tools.by_stat(top)
    assert got[("throughput", "")] == 0.869468
    assert got[("latency", "mean")] == pytest.approx(1082.904)
    assert got[("latency", "std")] == pytest.approx(22.312)
    assert got[("http_time", "mean")] == pytest.approx(1082.89)
    assert got[("client_send_recv_time", "mean")] == pytest.approx(0.12)
    assert got[("compute_time", "mean")] == pytest.approx(1080.151)  # an ensemble's sum
    assert all(m.benchmark == "translate" for m in block)
    seamless = tools.by_stat(
        [m for m in block if m.params.get("composing_model") == "seamless-m4t-v2-large"]
    )
    assert seamless[("compute_infer_time", "mean")] == pytest.approx(1077.528)
    fasttext = [
        m for m in block if m.params.get("composing_model") == "fasttext-language-identification"
    ]
    assert {m.params["composing_model_version"] for m in fasttext} == {"1"}
    assert tools.by_stat(fasttext)[("server_request_latency", "mean")] == pytest.approx(2.648)
    assert block[0].stats["composing_models"]["fasttext-language-identification"] == {
        "inference_count": 61,
        "execution_count": 61,
        "successful_request_count": 61,
    }
    # The summary: the block's rate is not stored twice, the other three rates are.
    summary = [m for m in measurements if m.stats.get("source") == "summary"]
    first = [m for m in summary if m.benchmark == "translate"]
    assert sorted({m.params["request_rate"] for m in first}) == [0.25, 0.71875, 0.835938]
    assert values(first, request_rate=0.25) == {
        ("throughput", ""): 0.247901,
        ("latency", "mean"): pytest.approx(1116.62),
    }
    # The second command (-m seamless-m4t-v2-large) printed only its summary: all four.
    second = [m for m in summary if m.benchmark == "seamless-m4t-v2-large"]
    assert len(second) == 8
    assert values(second, request_rate=0.894531)[("throughput", "")] == 0.86946


def test_bulleted_output_with_a_wrapped_server_line() -> None:
    measurements, problems = split(fixture("tritonsprongs-e5_bullets-wrapped.md"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got[("throughput", "")] == 285.136
    assert got[("latency", "mean")] == pytest.approx(210.118)
    assert got[("client_recv_time", "mean")] == 0.0
    # "(overhead 20 usec + queue 125809 usec +" / "compute input 150 usec + ...)"
    assert got[("server_queue_time", "mean")] == pytest.approx(125.809)
    assert got[("compute_input_time", "mean")] == pytest.approx(0.15)
    assert got[("compute_output_time", "mean")] == pytest.approx(0.172)
    for m in measurements:
        assert m.benchmark == "multilingual_e5_large"  # "perf_analyzer \" then "-m ..."
        assert m.params == {
            "concurrency": 60,
            **({"stat": m.params["stat"]} if "stat" in m.params else {}),
        }
        assert m.stats["client_overhead_pct"] == 0.02


def test_perf_client_layout_old_server_line_summary_and_csv() -> None:
    """TRTIS perf_client: "Server: Request count", "(overhead + queue + compute)", summary
    lines without "throughput:", the CSV with one "Server Compute" column."""
    measurements, problems = split(fixture("perf-client-rst_trtis-layout.rst"))
    assert problems == []
    console = [m for m in measurements if m.stats.get("source") != "csv"]
    csv = [m for m in measurements if m.stats.get("source") == "csv"]
    c4 = values(console, concurrency=4)
    assert c4[("throughput", "")] == 208.4
    assert c4[("server_request_latency", "mean")] == pytest.approx(18.099)
    assert c4[("compute_time", "mean")] == pytest.approx(4.776)
    assert c4[("client_send_recv_time", "mean")] == pytest.approx(0.079)
    assert only(console, concurrency=4)[0].stats["server_request_count"] == 1250
    assert values(console, concurrency=1)[("latency", "p50")] == pytest.approx(6.212)
    # Summary lines only for the concurrencies whose blocks the docs left out ("...").
    assert values(console, concurrency=2) == {
        ("throughput", ""): 209.2,
        ("latency", "mean"): pytest.approx(9.548),
    }
    assert sorted({m.params["concurrency"] for m in console}) == [1, 2, 3, 4]
    assert len(values(console, concurrency=1)) == 4  # the block, not the summary line
    assert all(m.benchmark == "resnet50_netdef" for m in measurements)
    assert len(csv) == 4 * 10
    assert values(csv, concurrency=1)[("compute_time", "mean")] == pytest.approx(4.801)
    assert values(csv, concurrency=2)[("latency", "p99")] == pytest.approx(9.627)
    assert all("batch" not in m.params for m in csv)  # the second command gives no -b


# -- layouts from the format strings ---------------------------------------------------


# The lines as the tool prints them: some end in a space ("Client: "), as cout writes.
CACHE_AND_METRICS = "\n".join(
    (
        "$ perf_analyzer -m densenet_onnx -b 8 --request-rate-range=100 -i grpc --collect-metrics",
        "*** Measurement Settings ***",
        "  Batch size: 8",
        "  Service Kind: Triton",
        '  Using "count_windows" mode for stabilization',
        "  Stabilizing using average throughput",
        "  Minimum number of samples in each window: 50",
        "  Using uniform distribution on request generation",
        "  Using asynchronous calls for inference",
        "  Detected decoupled model, using the first response for measuring latency",
        "",
        "Request Rate: 100 inference requests per second",
        "  Pass [1] throughput: 799.5 infer/sec. Avg latency: 1203 usec (std 40 usec). ",
        "  Pass [2] cb::Error: Failed to retrieve results from inference request.",
        "  Client: ",
        "    Request count: 1200",
        "    Avg send request rate: 99.80 infer/sec",
        "    [WARNING] Perf Analyzer was not able to keep up with the desired request"
        " rate. 12.50% of the requests were delayed. ",
        "    Throughput: 800 infer/sec",
        "    Response Throughput: 1600 infer/sec",
        "    Avg client overhead: 1.25%",
        "    Avg latency: 1200 usec (standard deviation 35 usec)",
        "    p50 latency: 1190 usec",
        "    p99.9 latency: 1500 usec",
        "    Avg gRPC time: 1180 usec ((un)marshal request/response 12 usec + response"
        " wait 1168 usec)",
        "  Server: ",
        "    Inference count: 9600",
        "    Execution count: 1200",
        "    Cache hit count: 300",
        "    Cache miss count: 900",
        "    Successful request count: 1200",
        "    Avg request latency: 1100 usec (overhead 10 usec + queue 40 usec + cache"
        " hit/miss 1050 usec)",
        "      Average Cache Hit Latency: 5 usec",
        "      Average Cache Miss Latency: 1390 usec (cache lookup/insertion 20 usec +"
        " compute input 30 usec + compute infer 1300 usec + compute output 40 usec)",
        "",
        "  Server Prometheus Metrics: ",
        "    Avg GPU Utilization:",
        "      GPU-aaaa : 57.5%",
        "    Avg GPU Power Usage:",
        "      GPU-aaaa : 120.5 watts",
        "    Max GPU Memory Usage:",
        "      GPU-aaaa : 1048576000 bytes",
        "    Total GPU Memory:",
        "      GPU-aaaa : 17179869184 bytes",
        "[WARNING] Perf Analyzer is not able to keep up with the desired load. The"
        " results may not be accurate.",
        "Inferences/Second vs. Client Average Batch Latency",
        "Request Rate: 100, throughput: 800 infer/sec, latency 1200 usec",
        "",
    )
)


def test_format_strings_cache_metrics_decoupled_and_request_rate() -> None:
    """Built from ReportClientSideStats / ReportServerSideStats / ReportPrometheusMetrics and
    PrerunReport of triton-inference-server/perf_analyzer src/ (no public paste found)."""
    measurements, problems = split(text_doc(CACHE_AND_METRICS))
    assert [(p.line, p.severity) for p in problems] == [
        (14, "warning"),
        (18, "warning"),
        (45, "warning"),
    ]
    assert "pass 2 failed" in problems[0].reason
    got = tools.by_stat(measurements)
    assert got[("throughput", "")] == 800.0
    assert got[("response_throughput", "")] == 1600.0
    assert got[("latency", "p99.9")] == pytest.approx(1.5)
    assert got[("client_send_recv_time", "mean")] == pytest.approx(0.012)
    assert got[("cache_hit_miss_time", "mean")] == pytest.approx(1.05)
    assert got[("cache_hit_time", "mean")] == pytest.approx(0.005)
    assert got[("cache_miss_latency", "mean")] == pytest.approx(1.39)
    assert got[("cache_miss_time", "mean")] == pytest.approx(0.02)
    assert got[("compute_infer_time", "mean")] == pytest.approx(1.3)
    m = measurements[0]
    assert m.benchmark == "densenet_onnx"
    assert m.params == {"request_rate": 100.0, "batch": 8}
    assert m.stats["server_cache_hit_count"] == 300
    assert m.stats["send_request_rate"] == 99.8
    assert m.stats["delayed_pct"] == 12.5
    assert m.stats["passes"] == 2
    assert m.stats["gpu"] == {
        "GPU-aaaa": {
            "utilization_pct": 57.5,
            "power_w": 120.5,
            "memory_used_mb": 1000.0,
            "memory_total_mb": 16384.0,
        }
    }
    assert not [m for m in measurements if m.stats.get("source") == "summary"]


def test_format_strings_verbose_csv_with_gpu_and_llm_columns() -> None:
    """report_writer.cc with --verbose-csv, --collect-metrics, a decoupled model and the LLM
    columns; request-rate mode (built from the format strings)."""
    header = (
        "Request Rate,Inferences/Second,Response Throughput,Client Send,Network+Server Send/Recv,"
        "Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,"
        "Server Cache Hit,Server Cache Miss,Client Recv,p50 latency,p99 latency,Avg latency,"
        "request/response,response wait,Avg GPU Utilization,Avg GPU Power Usage,"
        "Max GPU Memory Usage,Total GPU Memory,Avg First Token Latency,Avg Token-to-Token Latency"
    )
    row = (
        "12.5,12.4,99.2,10,200,30,40,5000,20,1,2,3,6000,9000,6100,13,5900,"
        "GPU-a:0.5;GPU-b:0.25;,GPU-a:70;GPU-b:60;,GPU-a:2097152;,GPU-a:4194304;,1500.5,42.25"
    )
    measurements, problems = split(text_doc(f"The CSV:\n\n```\n{header}\n{row}\n```\n"))
    assert problems == []
    got = tools.by_stat(measurements)
    assert got[("throughput", "")] == 12.4
    assert got[("response_throughput", "")] == 99.2
    assert got[("latency", "mean")] == pytest.approx(6.1)
    assert got[("client_send_recv_time", "mean")] == pytest.approx(0.013)
    assert got[("response_wait_time", "mean")] == pytest.approx(5.9)
    assert got[("cache_miss_time", "mean")] == pytest.approx(0.002)
    assert got[("ttft", "mean")] == pytest.approx(1.5005)
    assert got[("itl", "mean")] == pytest.approx(0.04225)
    m = measurements[0]
    assert (m.line, m.params) == (5, {"request_rate": 12.5})
    assert m.stats["gpu"]["GPU-a"] == {
        "utilization_pct": 50.0,
        "power_w": 70.0,
        "memory_used_mb": 2.0,
        "memory_total_mb": 4.0,
    }
    assert m.stats["gpu"]["GPU-b"]["utilization_pct"] == 25.0


def test_concurrency_header_without_request_and_summary_from_settings() -> None:
    """A block headed "Concurrency: 2" (no "Request"), and a summary line with no heading
    above it: its latency statistic comes from "Stabilizing using p99 latency"."""
    doc = text_doc(
        "*** Measurement Settings ***\n"
        "  Batch size: 4\n"
        "  Stabilizing using p99latency and throughput\n"
        "\n"
        "Concurrency: 2\n"
        "  Client:\n"
        "    Request count: 10\n"
        "    Throughput: 40 infer/sec\n"
        "    p99 latency: 5000 usec\n"
        "\n"
        "Concurrency: 4, throughput: 41 infer/sec, latency 9000 usec\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    assert values(measurements, concurrency=2) == {
        ("throughput", ""): 40.0,
        ("latency", "p99"): pytest.approx(5.0),
    }
    assert values(measurements, concurrency=4) == {
        ("throughput", ""): 41.0,
        ("latency", "p99"): pytest.approx(9.0),
    }
    assert all(m.params["batch"] == 4 for m in measurements)


# -- cut and garbled -------------------------------------------------------------------


def test_cut_block_unit_less_value_and_cut_breakdown() -> None:
    doc = text_doc(
        "perf_analyzer -m bert -b 2\n"
        "Request concurrency: 1\n"
        "  Client:\n"
        "    Request count: 100\n"
        "    Throughput: 20 infer/sec\n"
        "    p50 latency: 4000 usec\n"
        "    p99 latency: 61\n"
        "  Server:\n"
        "    Avg request latency: 4180 usec (overhead 2 usec + queue 30\n"
        "\n"
        "Request concurrency: 2\n"
        "  Pass [1] throughput: 30 infer/sec. Avg latency: 6000 usec (std 10 usec). \n"
        "Failed to obtain stable measurement within 10 measurement windows for concurrency 2.\n"
    )
    measurements, problems = split(doc)
    got = tools.by_stat(measurements)
    assert got == {
        ("throughput", ""): 20.0,
        ("latency", "p50"): pytest.approx(4.0),
        ("server_request_latency", "mean"): pytest.approx(4.18),
        ("server_overhead_time", "mean"): pytest.approx(0.002),
    }
    assert all(m.benchmark == "bert" and m.params["batch"] == 2 for m in measurements)
    reasons = [(p.line, p.severity, p.reason) for p in problems]
    assert reasons[0] == (7, "error", "value '61' has no unit (cut?)")
    assert reasons[1][:2] == (9, "error") and "cut" in reasons[1][2]
    assert reasons[-1] == (
        11,
        "error",
        "concurrency 2: perf_analyzer failed to obtain a stable measurement",
    )
    assert len(reasons) == 3  # the tool's message is that Problem, not a second one


def test_cut_csv_rows_and_header_without_rows() -> None:
    doc = text_doc(
        "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p99 latency\n"
        "1,69.2,225,0,13891,21018\n"
        "2,87.2,235,0,218\n"
        "x\n"
        "\n"
        "Request Rate,Inferences/Second,Client Send,Client Recv,p50 latency\n"
        "```\n"
    )
    measurements, problems = split(doc)
    assert len(measurements) == 5 and {m.params["concurrency"] for m in measurements} == {1}
    assert [(p.line, p.reason) for p in problems] == [
        (3, "CSV row has 5 cells, the header 6 (cut?)"),
        (6, "perf_analyzer CSV header without rows (cut?)"),
    ]


def test_summary_without_heading_or_settings_keeps_throughput_only() -> None:
    measurements, problems = split(
        text_doc("Concurrency: 8, throughput: 100.5 infer/sec, latency 8000 usec\n")
    )
    assert [(m.metric, m.value, m.params) for m in measurements] == [
        ("throughput", 100.5, {"concurrency": 8})
    ]
    assert [p.reason for p in problems] == [
        "summary latency: no heading or settings say which statistic it is"
    ]


def test_text_without_perf_analyzer_output_gives_nothing() -> None:
    for text in (
        "Concurrency: 4 threads were used; 10 infer/sec is the target.\n",
        "Maximum request concurrency: 32\nRequest throughput (req/s): 0.21\n",
        "We ran `perf_analyzer` with Inferences/Second, Client Send columns.\n",
    ):
        assert list(perf_analyzer.parse(text_doc(text))) == [], text


def test_large_log_is_scanned_not_walked() -> None:
    noise = "I1201 12:00:00.000 server.cc:100] request handled in 4 ms\n" * 200_000
    text = noise + (FIXTURES / SAMPLE).read_text(encoding="utf-8") + noise
    started = time.perf_counter()
    measurements, _ = split(text_doc(text))
    assert len(measurements) == 17
    assert measurements[0].line == 200_000 + 18
    assert time.perf_counter() - started < 5


def test_command_context_batch_kept_variable_model_ignored_and_unstable_alone() -> None:
    doc = text_doc(
        "perf_analyzer -m ${MODEL} -b 16 --service-kind=torchserve\n"
        "*** Measurement Settings ***\n"
        "  Service Kind: TorchServe\n"
        "  Using synchronous calls for inference\n"
        "\n"
        "Request concurrency: 3\n"
        "  Client: \n"
        "    Request count: 10\n"
        "    Throughput: 160 infer/sec\n"
        "    Avg latency: 18000 usec (standard deviation 100 usec)\n"
        "Failed to obtain stable measurement within 10 measurement windows for concurrency 4.\n"
    )
    measurements, problems = split(doc)
    assert {(m.benchmark, m.params["batch"]) for m in measurements} == {("", 16)}
    assert {m.stats["service_kind"] for m in measurements} == {"TorchServe"}
    assert [(p.line, p.severity) for p in problems] == [(11, "warning")]
    assert problems[0].reason.startswith("Failed to obtain stable measurement")
