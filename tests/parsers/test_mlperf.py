"""MLPerf LoadGen summaries: the sample, real summaries of every scenario, and variants.

The variants are built from LoadGen's own format strings (loadgen/results.cc, loadgen.cc,
test_settings_internal.cc and logging.cc of the versions they name), for the spellings no
stored real summary shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.parsers import mlperf
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import ROOT, text_doc
from tests.parsers import tools

FIXTURES = ROOT / "tests" / "fixtures" / "modern" / "mlperf"
SAMPLE = (
    ROOT
    / "tests"
    / "fixtures"
    / "modern"
    / "samples"
    / ("mlperf-summary_mlcommons-inference-2310.md")
)


def fixture(name: str) -> DocText:
    path = FIXTURES / name
    return read_text_file(str(path), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(mlperf.parse, doc)


def values(measurements: list[Measurement]) -> dict[tuple[str, str], float]:
    return tools.by_stat(measurements)


def test_contract() -> None:
    assert mlperf.NAME == "mlperf"
    assert all(isinstance(a, str) and a for a in mlperf.ANCHORS)
    for path in [SAMPLE, *FIXTURES.glob("*.txt"), *FIXTURES.glob("*.md")]:
        if path.name != "README.md":
            assert any(a in path.read_text(encoding="utf-8") for a in mlperf.ANCHORS), path


def test_every_fixture_is_named_in_the_readme_and_reads_without_problems() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    files = [p for p in FIXTURES.iterdir() if p.name != "README.md"]
    assert len(files) >= 8
    for path in files:
        assert f"`{path.name}`" in readme, path.name
        measurements, problems = split(fixture(path.name))
        assert problems == [], path.name
        assert measurements, path.name
        for m in measurements:
            assert (m.benchmark, m.framework, m.device, m.task) == ("", "", "", "inference")
            assert m.params["scenario"] in ("SingleStream", "MultiStream", "Server", "Offline")
            assert m.params["mode"] == "PerformanceOnly"
            assert m.status == "ok" and m.value is not None
            assert m.stats["result"] in ("VALID", "INVALID")
            kind = "ms" if m.unit == "ms" else "rate"
            assert (kind, m.direction) in (("ms", "lower"), ("rate", "higher"))
            assert m.raw and m.raw in path.read_text(encoding="utf-8")


# -- the sample: an LLM Offline run (mlcommons/inference#2310) ------------------------------


def test_sample_llm_offline() -> None:
    doc = read_text_file(str(SAMPLE), DocMeta(uri=SAMPLE.name))
    measurements, problems = split(doc)
    assert problems == []
    got = values(measurements)
    assert got[("throughput", "")] == 0.857965
    assert got[("token_throughput", "")] == 289.078
    assert got[("latency", "min")] == pytest.approx(2785.715494)
    assert got[("latency", "max")] == pytest.approx(1903340.943861)
    assert got[("latency", "mean")] == pytest.approx(955159.206269)  # 955159206269 ns
    assert got[("latency", "p50")] == pytest.approx(961910.964272)
    assert got[("latency", "p99")] == pytest.approx(1884148.081334)
    assert got[("latency", "p99.9")] == pytest.approx(1902868.349502)
    assert sorted(got) == sorted(
        [("throughput", ""), ("token_throughput", "")]
        + [("latency", s) for s in ("min", "max", "mean", "p50", "p90", "p95", "p97", "p99")]
        + [("latency", "p99.9")]
    )
    first = measurements[0]
    assert (first.metric, first.unit, first.direction, first.line) == (
        "throughput",
        "samples/s",
        "higher",
        6,
    )
    assert first.raw == "Samples per second: 0.857965"
    assert first.params == {"scenario": "Offline", "mode": "PerformanceOnly"}
    assert first.testbed == {"sut_name": "PySUT"}
    token = measurements[1]
    assert (token.unit, token.direction, token.line) == ("tokens/s", "higher", 7)
    p99 = next(m for m in measurements if m.params.get("stat") == "p99")
    assert p99.params == {"scenario": "Offline", "mode": "PerformanceOnly", "stat": "p99"}
    assert (p99.unit, p99.direction, p99.line) == ("ms", "lower", 23)
    # The excerpt is cut inside Test Parameters: what it holds is kept.
    assert first.stats == {
        "result": "VALID",
        "min_duration_satisfied": True,
        "min_queries_satisfied": True,
        "early_stopping_satisfied": True,
        "samples_per_query": 1633,
        "target_qps": 1,
        "ttft_latency_ns": 100000000,
        "tpot_latency_ns": 100000000,
        "max_async_queries": 1,
        "min_duration_ms": 600000,
        "max_duration_ms": 0,
        "min_query_count": 1,
        "max_query_count": 0,
    }
    assert all(m.stats == first.stats and m.testbed == first.testbed for m in measurements)


# -- real summaries of the other scenarios ---------------------------------------------------


def test_server_non_llm_v41() -> None:
    measurements, _ = split(fixture("server-bert-99_v4.1_asustek-test01.txt"))
    got = values(measurements)
    assert got[("completed_throughput", "")] == 15642.49
    assert got[("scheduled_throughput", "")] == 15642.71
    assert got[("latency", "min")] == pytest.approx(2.998768)
    assert got[("latency", "p99")] == pytest.approx(41.691435)
    assert got[("latency", "p99.9")] == pytest.approx(50.259523)
    assert len(got) == 11
    assert measurements[0].line == 7 and measurements[0].unit == "samples/s"
    assert measurements[0].testbed == {"sut_name": "BERT SERVER"}
    stats = measurements[0].stats
    assert stats["result"] == "VALID"
    assert stats["performance_constraints_satisfied"] is True
    assert stats["early_stopping_result"] == "Run successful."
    assert (stats["target_qps"], stats["target_latency_ns"]) == (15640, 130000000)
    assert (stats["warnings"], stats["errors"]) == (1, 0)
    assert "qsl_rng_seed" not in stats and "accuracy_log_sampling_target" not in stats
    assert stats["performance_issue_unique"] is False


def test_server_llm_ttft_tpot() -> None:
    measurements, _ = split(fixture("server-llama2-70b-99_v4.1_amd-8xmi300x.txt"))
    got = values(measurements)
    assert got[("completed_throughput", "")] == 71.74
    # Printed twice (headline, Additional Stats): stored once, at the headline.
    assert got[("completed_token_throughput", "")] == 21028.23
    token = next(m for m in measurements if m.metric == "completed_token_throughput")
    assert (token.line, token.unit) == (8, "tokens/s")
    assert got[("scheduled_throughput", "")] == 73.66
    assert got[("latency", "mean")] == pytest.approx(42835.428215)
    assert got[("ttft", "min")] == pytest.approx(288.256229)
    assert got[("ttft", "mean")] == pytest.approx(1006.32967)
    assert got[("ttft", "p99")] == pytest.approx(1604.171041)
    assert got[("tpot", "mean")] == pytest.approx(143.097185)
    assert got[("tpot", "p99")] == pytest.approx(197.873909)
    assert got[("tpot", "p99.9")] == pytest.approx(203.573466)
    assert {metric for metric, _ in got} == {
        "completed_throughput",
        "completed_token_throughput",
        "scheduled_throughput",
        "latency",
        "ttft",
        "tpot",
    }
    assert len(got) == 3 + 3 * 9
    stats = measurements[0].stats
    assert stats["ttft_early_stopping_result"] == "Run successful."
    assert stats["tpot_early_stopping_result"] == "Run successful."
    assert (stats["ttft_latency_ns"], stats["tpot_latency_ns"]) == (2000000000, 200000000)
    assert stats["target_qps"] == 73.5


def test_singlestream_early_stopping_estimates() -> None:
    measurements, _ = split(fixture("singlestream-gptj-99_v4.1_nvidia-orin.txt"))
    got = values(measurements)
    # The headline "90th percentile latency (ns)" is the "90.00 percentile" line: once.
    p90 = next(m for m in measurements if m.metric == "latency" and m.params["stat"] == "p90")
    assert (p90.value, p90.line) == (pytest.approx(4149.771822), 7)
    assert p90.raw == "90th percentile latency (ns) : 4149771822"
    assert got[("early_stopping_latency", "p90")] == pytest.approx(4176.62608)
    assert got[("early_stopping_latency", "p99")] == pytest.approx(5072.627725)
    assert got[("qps_with_loadgen_overhead", "")] == 0.36
    assert got[("qps_without_loadgen_overhead", "")] == 0.36
    assert got[("latency", "p50")] == pytest.approx(2660.090812)
    assert len(got) == 13
    assert measurements[0].testbed == {"sut_name": "gptj-SingleStream-SUT"}
    assert (
        measurements[0]
        .stats["early_stopping_result"]
        .startswith(
            "Processed at least 64 queries (13368). Would discard 1255 highest latency queries."
        )
    )


def test_singlestream_one_decimal_percentile_and_a_note_over_three_lines() -> None:
    measurements, _ = split(fixture("singlestream-90.0th_sgrad20delft-inference.txt"))
    got = values(measurements)
    assert got[("latency", "p90")] == pytest.approx(50.798)  # "90.0th percentile latency"
    assert got[("early_stopping_latency", "p90")] == pytest.approx(53.600708)
    assert ("early_stopping_latency", "p99") not in got
    assert got[("qps_without_loadgen_overhead", "")] == 20.89
    assert (
        measurements[0]
        .stats["early_stopping_result"]
        .endswith(
            "Not enough queries processed for 99.0th percentile early stopping estimate"
            " (would need to process at least 662 total queries)."
        )
    )


def test_multistream_per_query_latencies() -> None:
    measurements, _ = split(fixture("multistream-retinanet_v3.0_nvidia-a100-pcie.txt"))
    got = values(measurements)
    assert {metric for metric, _ in got} == {"query_latency", "early_stopping_query_latency"}
    headline = measurements[0]
    assert (headline.metric, headline.params["stat"], headline.line) == (
        "query_latency",
        "p99",
        7,
    )
    assert headline.value == pytest.approx(14.016972)
    assert got[("early_stopping_query_latency", "p99")] == pytest.approx(14.018468)
    assert got[("query_latency", "min")] == pytest.approx(13.167636)
    assert got[("query_latency", "p99.9")] == pytest.approx(14.155107)
    assert len(got) == 10
    assert headline.params == {"scenario": "MultiStream", "mode": "PerformanceOnly", "stat": "p99"}
    assert headline.stats["samples_per_query"] == 8
    assert headline.stats["target_qps"] == 83.3333


def test_multistream_v05_old_spellings() -> None:
    measurements, _ = split(fixture("multistream-resnet_v0.5_alibaba-hanguang-test01.txt"))
    got = values(measurements)
    first = measurements[0]
    # "Multi Stream" / "Performance" are stored as LoadGen writes them since v1.0; the
    # number of streams defines the run.
    assert first.params == {
        "scenario": "MultiStream",
        "mode": "PerformanceOnly",
        "samples_per_query": 2692,
        "stat": "p50",
    }
    assert first.testbed == {}  # "SUT name : " is empty
    # The percentiles of "Intervals between each IssueQuery" are counts: skipped.
    assert all(m.line > 22 for m in measurements)
    assert got[("query_latency", "p50")] == pytest.approx(43.831598)
    assert got[("query_latency", "p99")] == pytest.approx(49.262268)
    assert ("query_latency", "min") not in got  # v0.5 printed only percentiles per query
    assert got[("latency", "min")] == pytest.approx(18.496507)
    assert got[("latency", "p99")] == pytest.approx(48.062561)
    assert len(got) == 6 + 9
    stats = first.stats
    assert stats["result"] == "VALID"
    assert "early_stopping_satisfied" not in stats  # v0.5 had no early stopping
    assert stats["performance_issue_same"] is False  # "false"
    assert (stats["target_latency_ns"], stats["warnings"], stats["errors"]) == (50000000, 3, 0)


def test_server_v05() -> None:
    measurements, _ = split(fixture("server-resnet_v0.5_alibaba-hanguang-test01.txt"))
    got = values(measurements)
    assert got[("scheduled_throughput", "")] == 45169.48
    assert got[("completed_throughput", "")] == 45169.24
    assert got[("latency", "p97")] == pytest.approx(3.45)
    assert measurements[0].params == {"scenario": "Server", "mode": "PerformanceOnly"}
    assert measurements[0].line == 7


def test_invalid_result_keeps_its_values() -> None:
    measurements, _ = split(fixture("singlestream-invalid_mlcommons-inference-1666.md"))
    got = values(measurements)
    assert got[("latency", "p90")] == pytest.approx(700.060891)
    assert got[("latency", "mean")] == pytest.approx(635.649808)
    assert got[("qps_with_loadgen_overhead", "")] == 1.57
    assert len(got) == 11
    for m in measurements:
        assert m.status == "ok"
        assert m.stats["result"] == "INVALID"
        assert m.stats["early_stopping_satisfied"] is False
        assert m.stats["min_duration_satisfied"] is True
    stats = measurements[0].stats
    assert "recommendations" not in stats  # "Recommendations:" with nothing under it
    assert stats["early_stopping_result"] == (
        "Only processed 10 queries. Need to process at least 64 queries for early stopping."
    )


# -- variants from LoadGen's format strings -------------------------------------------------

LLM_SINGLESTREAM = """\
================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : SingleStream
Mode     : PerformanceOnly
90.0th percentile latency (ns) : 2500000000
90.0th first token percentile latency (ns) : 120000000
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
TTFT Early Stopping Result:
 * Processed at least 64 queries (700).
 * Would discard 52 highest latency queries.
 * Early stopping 90.0th percentile estimate: 125000000
 * Early stopping 99.0th percentile estimate: 140000000
TPOT Early Stopping Result:
 * Processed at least 64 queries (700).
 * Would discard 52 highest latency queries.
 * Early stopping 90.0th percentile estimate: 21000000

================================================
Additional Stats
================================================
QPS w/ loadgen overhead         : 0.40
QPS w/o loadgen overhead        : 0.41

Min latency (ns)                : 900000000
Max latency (ns)                : 3100000000
Mean latency (ns)               : 2400000000
50.00 percentile latency (ns)   : 2390000000
90.00 percentile latency (ns)   : 2500000000
99.00 percentile latency (ns)   : 3000000000

TPS w/ loadgen overhead         : 51.20
TPS w/o loadgen overhead        : 52.00
Min First Token latency (ns)                : 80000000
Max First Token latency (ns)                : 190000000
Mean First Token latency (ns)               : 110000000
50.00 percentile first token latency (ns)   : 108000000
90.00 percentile first token latency (ns)   : 120000000

Min Time per Output Token (ns)                : 15000000
Max Time per Output Token (ns)                : 25000000
Mean Time per Output Token (ns)               : 19000000
50.00 percentile time to output token (ns)   : 18900000
90.00 percentile time to output token (ns)   : 20500000

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 0.4
ttft_latency (ns): 2000000000
tpot_latency (ns): 200000000

No warnings encountered during test.

2 ERRORS encountered. See detailed log.
"""


def test_llm_singlestream_token_latencies() -> None:
    measurements, problems = split(text_doc(LLM_SINGLESTREAM))
    assert problems == []
    got = values(measurements)
    assert got[("latency", "p90")] == 2500.0
    assert got[("ttft", "p90")] == 120.0  # the headline, and the "90.00" line: once
    assert got[("early_stopping_ttft", "p90")] == 125.0
    assert got[("early_stopping_ttft", "p99")] == 140.0
    assert got[("early_stopping_tpot", "p90")] == 21.0
    assert got[("tps_with_loadgen_overhead", "")] == 51.2
    assert got[("tps_without_loadgen_overhead", "")] == 52.0
    assert got[("ttft", "mean")] == 110.0
    assert got[("tpot", "min")] == 15.0  # "Time per Output Token" (LoadGen v5.x)
    assert got[("tpot", "p90")] == 20.5
    tps = next(m for m in measurements if m.metric == "tps_with_loadgen_overhead")
    assert (tps.unit, tps.direction) == ("tokens/s", "higher")
    stats = measurements[0].stats
    assert (stats["warnings"], stats["errors"]) == (0, 2)
    assert stats["ttft_early_stopping_result"].startswith("Processed at least 64 queries")
    assert stats["tpot_early_stopping_result"].endswith("estimate: 21000000")


def test_old_singlestream_and_offline_v05() -> None:
    doc = text_doc(
        "================================================\n"
        "MLPerf Results Summary\n"
        "================================================\n"
        "SUT name : \n"
        "Scenario : Single Stream\n"
        "Mode     : Performance\n"
        "90th percentile latency (ns) : 1875000\n"
        "Result is : VALID\n"
        "  Min duration satisfied : Yes\n"
        "  Min queries satisfied : Yes\n"
        "\n"
        "================================================\n"
        "Additional Stats\n"
        "================================================\n"
        "Min latency (ns)                : 1500000\n"
        "90.00 percentile latency (ns)   : 1875000\n"
        "\n"
        "QPS w/ loadgen overhead  : 540.12\n"
        "QPS w/o loadgen overhead : 666.67\n"
        "\n"
        "No errors encountered during test.\n"
        "================================================\n"
        "MLPerf Results Summary\n"
        "================================================\n"
        "SUT name : \n"
        "Scenario : Offline\n"
        "Mode     : Submission\n"
        "QPS: 1.23457e+06\n"
        "Result is : VALID\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    single = [m for m in measurements if m.params["scenario"] == "SingleStream"]
    assert values(single) == {
        ("latency", "p90"): 1.875,
        ("latency", "min"): 1.5,
        ("qps_with_loadgen_overhead", ""): 540.12,
        ("qps_without_loadgen_overhead", ""): 666.67,
    }
    assert single[0].params["mode"] == "PerformanceOnly"
    (offline,) = (m for m in measurements if m.params["scenario"] == "Offline")
    assert (offline.metric, offline.value, offline.unit, offline.line) == (
        "throughput",
        1234570.0,
        "samples/s",
        28,
    )
    assert offline.params == {"scenario": "Offline", "mode": "SubmissionRun"}
    assert offline.stats == {"result": "VALID"}  # its own summary's, not the first one's


def test_inferred_token_rates_and_multistream_free() -> None:
    doc = text_doc(
        "SUT name : SUT\nScenario : Offline\nMode     : PerformanceOnly\n"
        "Samples per second: 42.5\nTokens per second (inferred): 10880\n"
        "Result is : VALID\n\n"
        "SUT name : SUT\nScenario : Server\nMode     : PerformanceOnly\n"
        "Completed samples per second    : 40.00\n"
        "Completed tokens per second (inferred): 10240.00\n"
        "Result is : VALID\n\n"
        "SUT name : SUT\nScenario : Multi Stream Free\nMode     : Performance\n"
        "Samples per second : 812.5\nResult is : VALID\n"
    )
    measurements, problems = split(doc)
    assert problems == []
    got = [(m.params["scenario"], m.metric, m.value, m.unit) for m in measurements]
    assert got == [
        ("Offline", "throughput", 42.5, "samples/s"),
        ("Offline", "inferred_token_throughput", 10880.0, "tokens/s"),
        ("Server", "completed_throughput", 40.0, "samples/s"),
        ("Server", "inferred_completed_token_throughput", 10240.0, "tokens/s"),
        ("MultiStreamFree", "throughput", 812.5, "samples/s"),
    ]


def test_accuracy_summary_yields_nothing_unless_it_prints_values() -> None:
    # LoadGen logs no performance summary in AccuracyOnly mode: the file holds only this.
    closing = "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n"
    assert list(mlperf.parse(text_doc(closing))) == []
    measurements, problems = split(
        text_doc(
            "SUT name : PySUT\nScenario : Offline\nMode     : AccuracyOnly\n"
            "Samples per second: 12.5\nResult is : VALID\n"
            "  Min queries satisfied : Skipped\n"
        )
    )
    assert problems == []
    (m,) = measurements
    assert m.params == {"scenario": "Offline", "mode": "AccuracyOnly"}
    assert m.stats == {"result": "VALID", "min_queries_satisfied": "Skipped"}


def test_summary_in_html_and_quoted_markdown() -> None:
    # A summary pasted into <pre> blocks with <b> marks (a vendor's README), and one
    # quoted in a comment.
    html = text_doc(
        "<details>\n<pre>\n"
        "================================================\n"
        "MLPerf Results Summary\n"
        "================================================\n"
        "SUT name : QAIC_SUT\nScenario : Offline\nMode     : PerformanceOnly\n"
        "Samples per second: 11023.4\n"
        "<b>Result is : INVALID</b>\n"
        "<b>  Min duration satisfied : NO</b>\n"
        "  Min queries satisfied : Yes\n"
        "Recommendations:\n"
        "<b> * Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.</b>\n"
        "</pre><pre>\n"
        "Min latency (ns)                : 13319750\n"
        "</pre>\n</details>\n"
    )
    measurements, problems = split(html)
    assert problems == []
    assert [(m.metric, m.value) for m in measurements] == [
        ("throughput", 11023.4),
        ("latency", pytest.approx(13.31975)),
    ]
    assert measurements[0].stats == {
        "result": "INVALID",
        "min_duration_satisfied": False,
        "min_queries_satisfied": True,
        "recommendations": "Increase expected QPS so the loadgen pre-generates a larger"
        " (coalesced) query.",
    }
    quoted = text_doc(
        "> SUT name : PySUT\n> Scenario : Server\n> Mode     : PerformanceOnly\n"
        "> Completed samples per second    : 3.50\n"
    )
    (m,) = split(quoted)[0]
    assert (m.metric, m.value, m.line) == ("completed_throughput", 3.5, 4)


def test_summary_ends_at_a_fence_and_prose_is_not_read() -> None:
    doc = text_doc(
        "We ran LoadGen (Scenario : Offline) and saw this:\n"
        "```\n"
        "SUT name : PySUT\nScenario : Offline\nMode     : PerformanceOnly\n"
        "Samples per second: 5\nResult is : VALID\n"
        "```\n"
        "Min latency (ns) : 5\n"
        "Scenario : nothing follows\n"
    )
    measurements, problems = split(doc)
    assert [(m.metric, m.value, m.line) for m in measurements] == [("throughput", 5.0, 6)]
    assert problems == []


def test_bad_values_are_problems() -> None:
    doc = text_doc(
        "================================================\n"
        "MLPerf Results Summary\n"
        "================================================\n"
        "SUT name : PySUT\nScenario : Server\nMode     : PerformanceOnly\n"
        "Completed samples per second    : nan\n"
        "Result is : INVALID/VALID\n"
        "Min latency (ns)                : \n"
        "Max latency (ns)                : 99999999999999999\n"
        "Mean latency (ns)               : 2000000\n"
        "50.00 percentile latency (ns)   : 1900000\n"
        "50.00 percentile latency (ns)   : 1800000\n"
    )
    measurements, problems = split(doc)
    assert [(m.metric, m.params["stat"], m.value) for m in measurements] == [
        ("latency", "mean", 2.0),
        ("latency", "p50", 1.9),
    ]
    assert [(p.line, p.reason, p.severity) for p in problems] == [
        (7, "MLPerf summary: completed_throughput: value nan is not a number", "error"),
        (8, "MLPerf summary: result 'INVALID/VALID' is neither VALID nor INVALID", "error"),
        (9, "MLPerf summary: latency min without a value (line cut?)", "error"),
        (10, "MLPerf summary: latency: absurd time 1e+17 ns (more than a day)", "error"),
        (
            13,
            "MLPerf summary: latency p50 1800000 ns repeats line 12 with another value"
            " (1900000 ns); the first is kept",
            "warning",
        ),
    ]
    assert all(p.parser == "mlperf" and p.raw for p in problems)


def test_summary_without_scenario_is_a_problem_and_cut_summary_a_warning() -> None:
    measurements, problems = split(
        text_doc("MLPerf Results Summary\nSUT name : PySUT\nMin latency (ns) : 5000\n")
    )
    assert measurements == []
    (problem,) = problems
    assert (problem.line, problem.severity) == (3, "error")
    assert "without its Scenario line" in problem.reason
    # A summary pasted up to its result only: nothing to store, and said so.
    measurements, problems = split(
        text_doc(
            "SUT name : PySUT\nScenario : Multi Stream\nMode     : Performance\n"
            "Samples per query : 32\nResult is : INVALID\n"
            "  Performance constraints satisfied : NO\n"
            "Recommendations:\n * Reduce samples per query to improve latency.\n...\n"
        )
    )
    assert measurements == []
    (problem,) = problems
    assert (problem.line, problem.severity) == (5, "warning")
    assert "MultiStream, INVALID" in problem.reason


def test_a_summary_deep_in_a_large_log_is_found_and_a_stray_scenario_ignored(
    tmp_path: Path,
) -> None:
    # (Its speed is a benchmark's to measure: no timing in a test.)
    filler = "I0911 06:41:55.494792  7238 tester.cc:345] key : value, step 12\n" * 200_000
    summary = (FIXTURES / "server-bert-99_v4.1_asustek-test01.txt").read_text(encoding="utf-8")
    doc = text_doc(filler + "Scenario : a word in a log line\n" + summary)
    measurements, problems = split(doc)
    assert problems == [] and len(measurements) == 11
    assert measurements[0].line == 200_001 + 7
