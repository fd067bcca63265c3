"""ingest.parsers.llm_serving on real vLLM and SGLang benchmark output, and inline variants.

The real documents: the shared samples (tests/fixtures/modern/samples/) and the further
threads of tests/fixtures/modern/llm_serving/ (each source named in its README.md). The
inline variants follow the tools' print and JSON code (vllm/benchmarks/serve.py,
latency.py, throughput.py, benchmarks/benchmark_serving.py, sglang/bench_serving.py).
"""

from __future__ import annotations

import csv
import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from ingest.parsers import llm_serving
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import ROOT, text_doc

MODERN = ROOT / "tests" / "fixtures" / "modern"
SAMPLES = MODERN / "samples"
FIXTURES = MODERN / "llm_serving"
OURS = (
    "vllm-bench-serve_vllm-pr-18566.md",
    "vllm-result-json_vllm-ascend-qwen3-vl-report.json",
    "vllm-bench-latency_rocm-lmcache-notes.md",
    "sglang-bench-serving_sglang-8285.md",
    "sglang-bench-serving-jsonl_sglang-12389.md",
)


def read(path: Path) -> list:
    return list(llm_serving.parse(read_text_file(str(path), DocMeta(uri=path.name))))


def sample(name: str) -> list:
    return read(SAMPLES / name)


def fixture(name: str) -> list:
    return read(FIXTURES / name)


def parse_text(text: str) -> list:
    return list(llm_serving.parse(text_doc(text)))


def measurements(items: list) -> list[Measurement]:
    return [i for i in items if isinstance(i, Measurement)]


def problems(items: list) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def values(items: list) -> dict[tuple[str, str | None], float]:
    """(metric, stat) -> value of each Measurement (each once per run in these tests)."""
    out: dict[tuple[str, str | None], float] = {}
    for m in measurements(items):
        key = (m.metric, m.params.get("stat"))
        assert key not in out, f"{key} twice"
        out[key] = m.value
    return out


def without_stat(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "stat"}


# -- the shared samples -----------------------------------------------------------------


def test_vllm_bench_serve_block_of_pr_18566() -> None:
    items = sample("vllm-bench-serve_vllm-pr-18566.md")
    assert problems(items) == []  # its closing rule is cut short, but it is a rule
    assert values(items) == {
        ("request_throughput", None): 32.42,
        ("output_throughput", None): 6582.87,
        ("total_token_throughput", None): 14029.44,
        ("ttft", "mean"): 9626.13,
        ("ttft", "median"): 9459.70,
        ("ttft", "p99"): 12666.73,
        ("tpot", "mean"): 77.86,
        ("tpot", "median"): 48.84,
        ("tpot", "p99"): 211.21,
        ("itl", "mean"): 38.13,
        ("itl", "median"): 25.44,
        ("itl", "p99"): 214.35,
    }
    first, *rest = measurements(items)
    assert (first.line, first.raw) == (11, "Request throughput (req/s):              32.42     ")
    assert (first.unit, first.direction) == ("requests/s", "higher")
    ttft = next(m for m in rest if m.metric == "ttft")
    assert (ttft.unit, ttft.direction, ttft.line) == ("ms", "lower", 15)
    for m in measurements(items):
        # The command above the block: its --model, --endpoint-type and dataset.
        assert m.benchmark == "Llama-3.1-8B-Instruct"
        assert m.framework == "vllm"
        assert without_stat(m.params) == {
            "backend": "openai-chat",
            "dataset": "hf",
            "dataset_path": "Aeala/ShareGPT_Vicuna_unfiltered",
        }
        assert m.stats == {
            "tool": "vllm bench serve",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "completed": 1000,
            "duration_s": 30.85,
            "total_input_tokens": 229711,
            "total_output_tokens": 203068,
        }
        assert m.task == "inference"
    assert len({m.series_key() for m in measurements(items)}) == 12


def test_vllm_save_result_json_of_vllm_ascend() -> None:
    items = sample("vllm-result-json_vllm-ascend-qwen3-vl-report.json")
    assert problems(items) == []
    got = values(items)
    assert got[("request_throughput", None)] == 0.9827502819171137
    assert got[("output_throughput", None)] == 125.79203608539055
    assert got[("total_token_throughput", None)] == 322.3420924688133
    assert got[("peak_output_throughput", None)] == 313.0
    assert got[("ttft", "mean")] == 95.6344293046277
    assert got[("ttft", "p99")] == 143.32562107359988
    assert got[("ttft", "std")] == 12.71286480609931
    assert got[("tpot", "mean")] == 27.911832109121164
    assert got[("itl", "p99")] == 42.0829780306667
    assert len(got) == 16  # request_goodput is null: not measured
    for m in measurements(items):
        assert m.benchmark == "Qwen3-VL-8B-Instruct"
        assert m.framework == "vllm"
        # backend "openai" names an API, not a server: kept as a param.
        assert without_stat(m.params) == {"request_rate": 1.0, "backend": "openai"}
        assert m.measured_at == datetime(2026, 7, 22, 4, 18, 43)
        assert m.line == 1
        assert m.stats["completed"] == 200
        assert m.stats["failed"] == 0
        assert m.stats["num_prompts"] == 200
        assert m.stats["duration_s"] == 203.5104987300001
        assert m.stats["max_concurrent_requests"] == 12
        assert m.stats["model"] == "/workspace/shared_assets/models/Qwen/Qwen3-VL-8B-Instruct"
    ttft = next(m for m in measurements(items) if m.metric == "ttft")
    assert ttft.raw == '"mean_ttft_ms": 95.6344293046277'


def test_vllm_bench_latency_of_the_rocm_notes() -> None:
    items = sample("vllm-bench-latency_rocm-lmcache-notes.md")
    assert problems(items) == []
    got = measurements(items)
    assert [(m.line, m.params["stat"]) for m in got] == [
        (18, "mean"),
        (19, "p10"),
        (20, "p25"),
        (21, "p50"),
        (22, "p75"),
        (23, "p90"),
        (24, "p99"),
    ]
    assert math.isclose(got[0].value, 1475.279240796808)
    assert math.isclose(got[3].value, 1472.6597834960558)
    assert math.isclose(got[-1].value, 1506.2954947334948)
    for m in got:
        assert (m.metric, m.unit, m.direction, m.framework) == ("latency", "ms", "lower", "vllm")
        # The command says Qwen/Qwen3-8B (the heading above it says Qwen2-7B: the
        # command is what ran).
        assert m.benchmark == "Qwen3-8B"
        assert without_stat(m.params) == {
            "batch_size": 8,
            "tensor_parallel_size": 1,
            "input_len": 256,
            "output_len": 128,
        }
        assert (m.samples, m.warmup) == (100, 10)
    assert got[0].raw == "Avg latency: 1.475279240796808 seconds"


def test_sglang_bench_serving_block_of_issue_8285() -> None:
    items = sample("sglang-bench-serving_sglang-8285.md")
    assert values(items) == {
        ("request_throughput", None): 11.91,
        ("input_throughput", None): 12195.89,
        ("output_throughput", None): 12195.89,
        ("total_token_throughput", None): 24391.79,
        ("e2e_latency", "mean"): 26530.12,
        ("e2e_latency", "median"): 26001.41,
        ("ttft", "mean"): 2533.44,
        ("ttft", "median"): 2409.87,
        ("ttft", "p99"): 6002.16,
        ("itl", "mean"): 23.46,
        ("itl", "median"): 22.82,
    }
    # The excerpt ends at "P95 ITL (ms):" with no value.
    (cut,) = problems(items)
    assert (cut.line, cut.raw, cut.parser) == (29, "P95 ITL (ms):", "llm_serving")
    assert "no value" in cut.reason
    for m in measurements(items):
        assert m.framework == "sglang"  # backend "sglang" is the server: no backend param
        assert m.benchmark == ""  # the excerpt names no model
        assert without_stat(m.params) == {"request_rate": 330.0, "max_concurrency": 330}
        assert m.stats["completed"] == 660
        assert m.stats["total_output_tokens_retokenized"] == 675679
        assert m.stats["concurrency"] == 315.98
        assert m.stats["tool"] == "sglang.bench_serving"


def test_sglang_jsonl_record_wrapped_over_two_lines_in_issue_12389() -> None:
    items = sample("sglang-bench-serving-jsonl_sglang-12389.md")
    assert problems(items) == []  # the break falls between two keys: still JSON
    got = values(items)
    assert got[("request_throughput", None)] == 0.47075469529455866
    assert got[("input_throughput", None)] == 1883.0187811782346
    assert got[("output_throughput", None)] == 470.75469529455864
    assert got[("ttft", "mean")] == 15507.68955973695
    assert got[("ttft", "p99")] == 27439.755643145763
    assert got[("itl", "mean")] == 49.62970093071924
    assert got[("itl", "p95")] == 39.689119486138225
    assert got[("tpot", "mean")] == 49.62953782860856
    assert got[("e2e_latency", "p99")] == 66922.00062695076
    lines = {m.metric: m.line for m in measurements(items)}
    assert (lines["ttft"], lines["itl"]) == (4, 5)
    for m in measurements(items):
        assert m.framework == "sglang"
        assert without_stat(m.params) == {
            "request_rate": "inf",  # Infinity in the record
            "max_concurrency": 32,
            "dataset": "random",
            "input_len": 4000,
            "output_len": 1000,
        }
        assert m.stats["completed"] == 300
        assert m.stats["total_output_tokens_retokenized"] == 298262
        assert "accept_length" not in m.stats  # null


def expected_rows() -> list[tuple[str, str, float, bool]]:
    with open(SAMPLES / "expected.tsv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.reader(fh, delimiter="\t") if r and not r[0].startswith("#")]
    return [
        (r[0], r[1], float([a for a in r[3:] if a != "--units"][-1]), "--units" in r)
        for r in rows
        if r[0] in OURS
    ]


@pytest.mark.parametrize(("name", "tier", "value", "units"), expected_rows())
def test_the_expected_values_of_the_samples(
    name: str, tier: str, value: float, units: bool
) -> None:
    factors = [1000.0**k for k in range(-3, 4)] if units else [1.0]
    stored = [m.value for m in measurements(sample(name))]
    assert any(math.isclose(v, value * f, rel_tol=1e-9) for v in stored for f in factors)


def test_every_cut_of_a_sample_reads_without_raising() -> None:
    for name in OURS:
        text = (SAMPLES / name).read_text(encoding="utf-8")
        for cut in range(0, len(text), 7):
            items = parse_text(text[:cut])
            assert all(m.value is not None and m.value >= 0 for m in measurements(items))
            assert [i.line for i in items] == sorted(i.line for i in items)
            for m in measurements(items):
                assert m.raw and m.unit in ("ms", "requests/s", "tokens/s")


# -- further real documents -------------------------------------------------------------


def test_complete_block_of_pr_33743_with_its_command_above() -> None:
    items = fixture("vllm-bench-serve_vllm-pr-33743.md")
    assert problems(items) == []
    got = values(items)
    assert got[("request_throughput", None)] == 0.77
    assert got[("peak_output_throughput", None)] == 352.0
    assert got[("total_token_throughput", None)] == 1052.55
    assert got[("ttft", "p99")] == 4610.48
    assert got[("itl", "p99")] == 258.31
    assert len(got) == 13
    for m in measurements(items):
        assert m.benchmark == "gemma-3-27b-it"
        assert without_stat(m.params) == {"dataset": "random", "input_len": 1024, "output_len": 350}
        assert m.stats["failed"] == 0
        assert m.stats["completed"] == 16
        assert m.stats["num_prompts"] == 16
        assert m.stats["max_concurrent_requests"] == 16  # printed "16.00": a count


def test_annotated_value_and_a_second_block_cut_in_pr_31826() -> None:
    items = fixture("vllm-bench-serve_vllm-pr-31826.md")
    got = values(items)
    assert got[("ttft", "median")] == 27.44  # "27.44             <========"
    assert got[("request_throughput", None)] == 6.16
    assert len(got) == 13
    assert {m.params["max_concurrency"] for m in measurements(items)} == {8}
    (cut,) = problems(items)
    assert cut.severity == "warning"
    assert cut.line == 35  # the second block's header: it has no line of its own
    assert "closing" in cut.reason


def test_failed_requests_line_of_pr_26478() -> None:
    items = fixture("vllm-bench-serve_vllm-pr-26478.md")
    got = measurements(items)
    assert values(items)[("ttft", "p99")] == 18164.16
    assert {m.stats["failed"] for m in got} == {0}  # "0          <<<<<<< New line"
    assert {m.stats["completed"] for m in got} == {1000}
    assert {m.benchmark for m in got} == {"Qwen3-0.6B"}
    assert {tuple(sorted(without_stat(m.params).items())) for m in got} == {
        (("dataset", "hf"), ("dataset_path", "philschmid/mt-bench"))
    }
    (cut,) = problems(items)  # "Mean TPOT (ms)" without its colon: the block ends there
    assert (cut.severity, cut.line) == ("warning", 33)


def test_2024_block_with_more_percentiles_in_pr_7062() -> None:
    items = fixture("vllm-bench-serve_vllm-pr-7062.md")
    assert values(items) == {
        ("request_throughput", None): 7.79,
        ("input_throughput", None): 1666.99,
        ("output_throughput", None): 1556.25,
        ("ttft", "mean"): 157.75,
        ("ttft", "median"): 118.73,
        ("ttft", "p90"): 332.99,
        ("ttft", "p95"): 400.04,
        ("ttft", "p99"): 532.92,
        ("tpot", "mean"): 218.36,
        ("tpot", "median"): 223.08,
    }
    assert [p.severity for p in problems(items)] == ["warning"]  # cut at "P90 TPO"


def test_block_cut_at_its_totals_in_issue_24005() -> None:
    items = fixture("vllm-bench-serve_vllm-24005.md")
    (cut,) = items
    assert isinstance(cut, Problem)
    assert (cut.line, cut.raw, cut.severity) == (38, "Total input tokens:", "error")


def test_shell_variable_and_vllm_lines_above_the_block_of_issue_24005() -> None:
    # The issue's text with the cut line completed by one throughput line: what the
    # context above the block gives each value.
    text = (FIXTURES / "vllm-bench-serve_vllm-24005.md").read_text(encoding="utf-8")
    text = text.replace("Total input tokens:\n", "Request throughput (req/s):              0.35\n")
    (m, warning) = parse_text(text)
    assert m.value == 0.35
    assert m.benchmark == "Qwen3-8B"  # --model "$MODEL", MODEL="/data0/data/Qwen3-8B/"
    assert m.stats["model"] == "/data0/data/Qwen3-8B/"
    assert m.params == {
        "max_concurrency": 2,
        "backend": "openai",
        "request_rate": "inf",  # "Traffic request rate: inf" above the block
        "dataset": "random",
        "input_len": 128,
        "output_len": 128,
    }
    assert m.stats["num_prompts"] == 500
    assert m.stats["completed"] == 1
    assert warning.severity == "warning"


def test_sglang_2024_block_with_its_commands_above_in_issue_2805() -> None:
    items = fixture("sglang-bench-serving_sglang-2805.md")
    got = measurements(items)
    assert values(items)[("e2e_latency", "median")] == 81160.44
    assert values(items)[("ttft", "mean")] == 44294.80
    for m in got:
        assert m.benchmark == "Llama-3.1-8B-Instruct"  # launch_server --model-path
        assert m.framework == "sglang"
        # "Max reqeuest concurrency: not set": no limit, no param.
        assert without_stat(m.params) == {"request_rate": "inf", "dataset": "sharegpt"}
        assert m.stats["num_prompts"] == 3000
        assert m.stats["completed"] == 1648
    (cut,) = problems(items)
    assert (cut.line, cut.raw) == (25, "Median TTFT (ms):")


def test_sglang_measuring_a_vllm_server_in_pr_9812() -> None:
    items = fixture("sglang-bench-serving_sglang-pr-9812.md")
    got = measurements(items)
    assert {(m.framework, m.params["backend"]) for m in got} == {("vllm", "vllm-chat")}
    assert values(items)[("itl", "mean")] == 0.0
    assert got[0].stats["total_input_vision_tokens"] == 769536
    assert got[0].stats["tool"] == "sglang.bench_serving"
    assert len(problems(items)) == 1


def test_newer_sglang_block_of_pr_33108() -> None:
    items = fixture("sglang-bench-serving_sglang-pr-33108.md")
    got = values(items)
    assert got[("peak_output_throughput", None)] == 76.0
    assert got[("e2e_latency", "p90")] == 56060.61
    assert got[("e2e_latency", "p95")] == 57295.94
    assert got[("e2e_latency", "p99")] == 59795.16
    assert got[("ttft", "median")] == 607.40
    m = measurements(items)[0]
    assert m.params == {"request_rate": "inf", "max_concurrency": 4}
    assert m.stats["max_concurrent_requests"] == 5
    assert [p.severity for p in problems(items)] == ["warning"]


def test_every_fixture_yields_values_or_says_why() -> None:
    names = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert len(names) == 8
    for name in names:
        items = fixture(name)
        assert items, name
        assert [i.line for i in items] == sorted(i.line for i in items)


# -- vLLM console variants ----------------------------------------------------------------

NAMESPACE = (
    "Namespace(subparser='bench', bench_type='serve', dispatch_function=<function "
    "BenchmarkServingSubcommand.cmd at 0x7f0819714900>, seed=0, num_prompts=100, "
    "dataset_name='random', dataset_path=None, sonnet_input_len=550, sharegpt_output_len=None, "
    "random_input_len=1024, random_output_len=128, random_range_ratio=0.0, "
    "model='/models/Qwen2.5-7B-Instruct', backend='vllm', request_rate=inf, "
    "max_concurrency=16, burstiness=1.0, metadata=None)"
)
NEW_BLOCK = """\
============ Serving Benchmark Result ============
Successful requests:                     97
Failed requests:                         3
Maximum request concurrency:             16
Request rate configured (RPS):           65.00
Benchmark duration (s):                  41.24
Request throughput (req/s):              2.43
Output token throughput (tok/s):         2425.01
---------------Time to First Token----------------
Mean TTFT (ms):                          60.77
Median TTFT (ms):                        58.20
P99.9 TTFT (ms):                         99.10
----------------End-to-end Latency----------------
Mean E2EL (ms):                          3000.00
P50 E2EL (ms):                           2900.00
-------------Client-side Queueing-----------------
Mean Client Queue Time (ms):             1.50
--------Queue-inclusive End-to-end Latency--------
Mean E2EL incl. Client Queue (ms):       3001.50
-------------------Probe Requests-----------------
Probe requests completed:                10
Median probe E2EL (ms):                  12.50
---------------Speculative Decoding---------------
Acceptance rate (%):                     75.00
Acceptance length:                       2.50
Drafts:                                  100
Per-position acceptance (%):
  Position 0:                            85.00
  Position 1:                            65.00
==================================================
"""


def test_namespace_and_newest_block_with_every_section() -> None:
    items = parse_text(NAMESPACE + "\nStarting main benchmark run...\n" + NEW_BLOCK)
    assert problems(items) == []
    assert values(items) == {
        ("request_throughput", None): 2.43,
        ("output_throughput", None): 2425.01,
        ("ttft", "mean"): 60.77,
        ("ttft", "median"): 58.20,
        ("ttft", "p99.9"): 99.10,
        ("e2e_latency", "mean"): 3000.0,
        ("e2e_latency", "p50"): 2900.0,  # vLLM prints P50 beside Median when asked
        ("client_queue_time", "mean"): 1.5,
        ("e2e_latency_incl_client_queue", "mean"): 3001.5,
        ("probe_e2e_latency", "median"): 12.5,
    }
    m = measurements(items)[0]
    assert m.benchmark == "Qwen2.5-7B-Instruct"
    assert m.framework == "vllm"
    # The block's own rate (65) wins over the Namespace's (inf); backend "vllm" is the
    # framework itself; random_* lengths apply to the random dataset.
    assert m.params == {
        "max_concurrency": 16,
        "request_rate": 65.0,
        "dataset": "random",
        "input_len": 1024,
        "output_len": 128,
    }
    assert m.stats == {
        "tool": "vllm bench serve",
        "model": "/models/Qwen2.5-7B-Instruct",
        "num_prompts": 100,
        "completed": 97,
        "failed": 3,
        "duration_s": 41.24,
        "probe_requests_completed": 10,
        "spec_decode_acceptance_rate": 75.0,
        "spec_decode_acceptance_length": 2.5,
        "spec_decode_num_drafts": 100,
        "per_position_acceptance_position_0": 85.0,
        "per_position_acceptance_position_1": 65.0,
    }


def test_block_in_shell_comments_and_vllm_lines_above() -> None:
    text = (
        "# Traffic request rate: 4.0\n"
        "# Burstiness factor: 0.5 (Gamma distribution)\n"
        "# Maximum request concurrency: 32\n"
        "# 100%|██████████| 32/32 [02:30<00:00,  4.71s/it]\n"
        + "".join(f"# {line}\n" for line in NEW_BLOCK.splitlines()[:10])
        + "# ==================================================\n"
    )
    items = parse_text(text)
    assert problems(items) == []
    ttft = next(m for m in items if m.metric == "ttft")
    assert ttft.value == 60.77
    assert ttft.raw == "# Mean TTFT (ms):                          60.77"
    assert ttft.params == {
        "max_concurrency": 16,  # the block's line wins over the one above
        "request_rate": 65.0,
        "burstiness": 0.5,
        "stat": "mean",
    }


def test_pre_block_rate_and_the_2024_request_goodput() -> None:
    text = (
        "Traffic request rate: 4.0\n"
        "============ Serving Benchmark Result ============\n"
        "Successful requests:                     100       \n"
        "Request throughput (req/s):              3.90      \n"
        "Request goodput (req/s):                 3.10      \n"
        "==================================================\n"
    )
    got = measurements(parse_text(text))
    assert [(m.metric, m.value, m.params) for m in got] == [
        ("request_throughput", 3.9, {"request_rate": 4.0}),
        ("request_goodput", 3.1, {"request_rate": 4.0}),
    ]


def test_two_blocks_each_with_its_own_command() -> None:
    block = NEW_BLOCK.splitlines()
    one = "\n".join([block[0], block[6], block[-1]]) + "\n"
    text = (
        "vllm bench serve --model org/model-a --request-rate 2 --backend openai-chat\n"
        + one
        + "\nvllm bench serve --model org/model-b --request-rate 4 --max-concurrency 8\n"
        + one.replace("2.43", "4.80")
        + "\nno command above this one\n"
        + one
    )
    a, b, c = measurements(parse_text(text))
    assert (a.benchmark, a.params) == ("model-a", {"request_rate": 2.0, "backend": "openai-chat"})
    assert (b.benchmark, b.params) == ("model-b", {"request_rate": 4.0, "max_concurrency": 8})
    # A block with no command above it takes nothing of the one before: ingest.runs
    # fills its model from the document.
    assert (c.benchmark, c.params) == ("", {})
    assert (a.line, b.line, c.line) == (3, 8, 13)


def test_unresolved_variable_and_argparse_abbreviations() -> None:
    text = (
        "python3 -m sglang.bench_serving --backend sglang-oai --model $MODEL_PATH "
        "--dataset-name random --random-input 1024 --random-output 256 --request-rate=8\n"
        "============ Serving Benchmark Result ============\n"
        "Backend:                                 sglang-oai\n"
        "Request throughput (req/s):              7.90\n"
        "==================================================\n"
    )
    (m,) = parse_text(text)
    assert m.benchmark == ""  # $MODEL_PATH is set nowhere above
    assert "model" not in m.stats
    assert m.framework == "sglang"
    assert m.params == {
        "backend": "sglang-oai",
        "request_rate": 8.0,
        "dataset": "random",
        "input_len": 1024,
        "output_len": 256,
    }


def test_command_of_another_tool_is_not_this_blocks() -> None:
    text = (
        "vllm bench serve --model org/model-a --random-input-len 64\n"
        "============ Serving Benchmark Result ============\n"
        "Backend:                                 sglang\n"
        "Request throughput (req/s):              7.90\n"
        "==================================================\n"
    )
    (m,) = parse_text(text)
    assert (m.framework, m.benchmark, m.params) == ("sglang", "", {})


@pytest.mark.parametrize(
    ("backend", "tool", "framework", "param"),
    [
        ("vllm", "vllm", "vllm", ""),
        ("openai", "vllm", "vllm", "openai"),
        ("openai-chat", "vllm", "vllm", "openai-chat"),
        ("sglang", "vllm", "sglang", ""),
        ("tgi", "vllm", "tgi", ""),
        ("tensorrt-llm", "vllm", "tensorrt-llm", ""),
        ("sglang", "sglang", "sglang", ""),
        ("sglang-oai-chat", "sglang", "sglang", "sglang-oai-chat"),
        ("vllm-chat", "sglang", "vllm", "vllm-chat"),
        ("lmdeploy", "sglang", "lmdeploy", ""),
        ("trt", "sglang", "tensorrt-llm", "trt"),
        ("truss", "sglang", "sglang", "truss"),
        ("", "sglang", "sglang", ""),
    ],
)
def test_framework_is_the_server_a_backend_names(
    backend: str, tool: str, framework: str, param: str
) -> None:
    assert llm_serving._framework(backend, tool) == (framework, param)


# -- vllm bench latency / throughput --------------------------------------------------------


def test_bench_latency_json_as_latency_py_writes_it() -> None:
    record = {
        "avg_latency": 1.475,
        "std_latency": 0.0027,
        "latencies": [1.47, 1.48, 1.47, 1.48],
        "percentiles": {"10": 1.4704, "25": 1.4711, "50": 1.4726, "99": 1.5063},
    }
    items = parse_text(json.dumps(record, indent=4))
    assert problems(items) == []
    got = measurements(items)
    assert [(m.params["stat"], round(m.value, 6), m.line) for m in got] == [
        ("mean", 1475.0, 2),
        ("std", 2.7, 3),
        ("p10", 1470.4, 11),
        ("p25", 1471.1, 12),
        ("p50", 1472.6, 13),
        ("p99", 1506.3, 14),
    ]
    assert {(m.metric, m.unit, m.samples, m.framework) for m in got} == {
        ("latency", "ms", 4, "vllm")
    }
    assert got[2].raw == '"10": 1.4704'


def test_bench_latency_console_with_std_and_the_old_command() -> None:
    text = (
        "python benchmarks/benchmark_latency.py --model facebook/opt-125m "
        "--input-len 32 --output-len 128 --batch-size 8 --num-iters 30\n"
        "Avg latency: 0.5 seconds\n"
        "Std latency: 0.01 seconds\n"
        "99% percentile latency: 0.6 seconds\n"
    )
    got = measurements(parse_text(text))
    assert [(m.params["stat"], m.value) for m in got] == [
        ("mean", 500.0),
        ("std", 10.0),
        ("p99", 600.0),
    ]
    assert got[0].benchmark == "opt-125m"
    assert (got[0].samples, got[0].warmup) == (30, None)
    assert got[0].params == {"batch_size": 8, "input_len": 32, "output_len": 128, "stat": "mean"}


def test_latency_lines_of_other_tools_are_not_read() -> None:
    assert parse_text("Avg latency: 5 ms\nP99 latency: 9 ms\n") == []


def test_bench_throughput_console_new_and_2024() -> None:
    text = (
        "vllm bench throughput --model meta-llama/Llama-2-7b-hf --input-len 128 "
        "--output-len 128 -tp 2 --num-prompts 1000\n"
        "Throughput: 12.30 requests/s, 4567.80 total tokens/s, 1234.50 output tokens/s\n"
        "Total num prompt tokens:  128000\n"
        "Total num output tokens:  128000\n"
    )
    got = measurements(parse_text(text))
    assert [(m.metric, m.value, m.unit) for m in got] == [
        ("request_throughput", 12.3, "requests/s"),
        ("total_token_throughput", 4567.8, "tokens/s"),
        ("output_throughput", 1234.5, "tokens/s"),
    ]
    for m in got:
        assert m.benchmark == "Llama-2-7b-hf"
        assert m.params == {"tensor_parallel_size": 2, "input_len": 128, "output_len": 128}
        assert m.stats["total_input_tokens"] == 128000
        assert m.stats["num_prompts"] == 1000
        assert m.line == 2
    old = measurements(parse_text("Throughput: 5.12 requests/s, 2621.45 tokens/s\n"))
    assert [(m.metric, m.value) for m in old] == [
        ("request_throughput", 5.12),
        ("total_token_throughput", 2621.45),  # prompt and output tokens, as 2024 counted
    ]


def test_bench_throughput_json() -> None:
    record = {
        "elapsed_time": 81.3,
        "num_requests": 1000,
        "total_num_tokens": 256000,
        "requests_per_second": 12.3,
        "tokens_per_second": 3148.8,
    }
    got = measurements(parse_text(json.dumps(record, indent=4)))
    assert [(m.metric, m.value, m.line) for m in got] == [
        ("request_throughput", 12.3, 5),
        ("total_token_throughput", 3148.8, 6),
    ]
    assert got[0].stats == {
        "tool": "vllm bench throughput",
        "elapsed_s": 81.3,
        "num_requests": 1000,
        "total_num_tokens": 256000,
    }


# -- JSON variants -----------------------------------------------------------------------------


def sglang_record(**overrides: object) -> dict:
    record: dict = {
        "backend": "sglang-oai",
        "dataset_name": "sharegpt",
        "request_rate": 4.0,
        "max_concurrency": None,
        "sharegpt_output_len": 256,
        "random_input_len": 1024,
        "random_output_len": 1024,
        "server_info": {
            "model_path": "/models/DeepSeek-V3",
            "version": "0.4.9",
            "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}",
            "internal_states": [{"avg_spec_accept_length": None}],
        },
        "duration": 10.5,
        "completed": 40,
        "total_output_tokens_retokenized": 9000,
        "request_throughput": 3.8,
        "total_throughput": 1500.0,
        "mean_e2e_latency_ms": 900.0,
        "mean_ttft_ms": 40.1,
        "max_itl_ms": 80.0,
        "output_throughput_retokenized": 700.0,
    }
    record.update(overrides)
    return record


def test_sglang_jsonl_lines_with_server_info() -> None:
    lines = [json.dumps(sglang_record()), json.dumps(sglang_record(request_rate=8.0))]
    items = parse_text("\n".join(lines) + "\n")
    assert problems(items) == []
    first = [m for m in measurements(items) if m.line == 1]
    second = [m for m in measurements(items) if m.line == 2]
    assert {(m.metric, m.params.get("stat")) for m in first} == {
        ("request_throughput", None),
        ("total_token_throughput", None),
        ("e2e_latency", "mean"),
        ("ttft", "mean"),
        ("itl", "max"),
    }
    m = first[0]
    assert m.benchmark == "DeepSeek-V3"
    assert m.framework == "sglang"
    assert m.testbed == {"sglang": "0.4.9"}
    # sharegpt: sharegpt_output_len applies, the random_* lengths do not.
    assert m.params == {
        "request_rate": 4.0,
        "dataset": "sharegpt",
        "output_len": 256,
        "backend": "sglang-oai",
    }
    assert m.stats["output_throughput_retokenized"] == 700.0
    assert "server_info" not in m.stats
    assert {s.params["request_rate"] for s in second} == {8.0}


def test_json_list_of_results_and_a_detailed_one() -> None:
    detailed = {
        "date": "20250101-120000",
        "backend": "vllm",
        "model_id": "org/m",
        "request_rate": "inf",
        "max_concurrency": 4,
        "burstiness": 1.0,
        "completed": 3,
        "request_throughput": 1.5,
        "input_lens": [1, 2, 3],
        "ttfts": [0.1, 0.2, 0.3],
        "generated_texts": ["{not json", "}", "x"],
        "mean_ttft_ms": 200.0,
    }
    items = parse_text(json.dumps([detailed, {**detailed, "max_concurrency": 8}], indent=2))
    got = measurements(items)
    assert [(m.metric, m.params["max_concurrency"]) for m in got] == [
        ("request_throughput", 4),
        ("ttft", 4),
        ("request_throughput", 8),
        ("ttft", 8),
    ]
    assert got[0].params == {"request_rate": "inf", "max_concurrency": 4}  # burstiness 1: none
    assert "input_lens" not in got[0].stats and "generated_texts" not in got[0].stats
    assert got[0].measured_at == datetime(2025, 1, 1, 12, 0)
    assert got[0].line < got[1].line < got[2].line


def test_json_wrapped_mid_number_is_read_with_a_warning() -> None:
    text = (
        "result:\n"
        '{"backend": "vllm", "completed": 10, "request_throughput": 1.5, "mean_ttft_ms": 4\n'
        "0.25}\n"
    )
    items = parse_text(text)
    warning, *got = items
    assert isinstance(warning, Problem) and warning.severity == "warning"
    assert warning.line == 2
    assert [(m.metric, m.value) for m in got] == [("request_throughput", 1.5), ("ttft", 40.25)]


def test_json_cut_is_a_problem_and_bad_values_are_problems() -> None:
    cut = parse_text('{"backend": "vllm", "completed": 10, "request_throughput": 1.5, "mean_tt')
    (p,) = cut
    assert isinstance(p, Problem) and p.line == 1 and "cut" in p.reason
    record = {"completed": 1, "request_throughput": 2.0, "mean_ttft_ms": float("nan")}
    record |= {"p99_ttft_ms": -3.0, "median_ttft_ms": "fast", "mean_itl_ms": 5.0}
    items = parse_text(json.dumps(record))
    assert [(m.metric, m.params.get("stat")) for m in measurements(items)] == [
        ("request_throughput", None),
        ("itl", "mean"),
    ]
    reasons = sorted(p.reason for p in problems(items))
    assert len(reasons) == 3
    assert any("not a number" in r and "mean_ttft_ms" in r for r in reasons)
    assert any("negative" in r for r in reasons)


def test_other_json_with_the_same_keys_is_not_read() -> None:
    for record in (
        {"avg_latency": 0.5, "success_rate": 1.0},
        {"request_throughput": 3, "name": "x"},
        {"requests_per_second": 3},
    ):
        assert parse_text(json.dumps(record)) == []
    # A key named in prose, with a brace paragraphs above it.
    assert parse_text('use {braces}\n\nthe "request_throughput": key of the JSON\n') == []


def test_vllm_pytorch_benchmark_format_is_not_read() -> None:
    record = [
        {
            "benchmark": {"name": "vLLM benchmark"},
            "metric": {"name": "median_ttft_ms", "benchmark_values": [12.0]},
            "extra_info": {"request_throughput": 3.0, "completed": 10},
        }
    ]
    assert parse_text(json.dumps(record)) == []


def test_a_console_block_and_the_json_of_the_same_run_share_series() -> None:
    command = (
        "python3 -m sglang.bench_serving --backend sglang --dataset-name random "
        "--random-input 4000 --random-output 1000 --max-concurrency 32\n"
    )
    block = (
        "============ Serving Benchmark Result ============\n"
        "Backend:                                 sglang    \n"
        "Traffic request rate:                    inf       \n"
        "Max request concurrency:                 32        \n"
        "Mean TTFT (ms):                          15507.69  \n"
        "==================================================\n"
    )
    record = json.dumps(
        {
            "backend": "sglang",
            "dataset_name": "random",
            "request_rate": float("inf"),
            "max_concurrency": 32,
            "random_input_len": 4000,
            "random_output_len": 1000,
            "completed": 300,
            "request_throughput": 0.47,
            "mean_ttft_ms": 15507.68955973695,
            "mean_e2e_latency_ms": 65087.6,
        }
    )
    console = next(m for m in parse_text(command + block) if m.metric == "ttft")
    result = next(m for m in parse_text(record) if m.metric == "ttft")
    assert console.series_key() == result.series_key()


# -- malformed and odd input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Mean TTFT (ms):                          nan", "not a number"),
        ("Mean TTFT (ms):                          -5.00", "negative"),
        ("Mean TTFT (ms):                          fast", "not a number"),
        ("Mean TTFT (parsecs):                     5.00", "unknown unit"),
        ("Mean TTFT (tok/s):                       5.00", "not a time"),
        ("Request throughput (req/min):            5.00", "unknown unit"),
        ("Mean TTFT (ms):", "no value"),
    ],
)
def test_bad_values_are_problems_and_the_rest_is_still_read(line: str, reason: str) -> None:
    text = (
        "============ Serving Benchmark Result ============\n"
        f"{line}\n"
        "Median TTFT (ms):                        9.50\n"
        "==================================================\n"
    )
    bad, good = parse_text(text)
    assert isinstance(bad, Problem)
    assert (bad.line, bad.raw, bad.parser) == (2, line, "llm_serving")
    assert reason in bad.reason
    assert isinstance(good, Measurement)
    assert (good.value, good.line, good.params) == (9.5, 3, {"stat": "median"})


def test_prose_naming_the_block_yields_nothing() -> None:
    text = (
        "The Serving Benchmark Result block below shows it.\n"
        "Throughput: good\n"
        "See `Avg latency: ` in the docs.\n"
    )
    assert parse_text(text) == []


def test_empty_and_odd_documents_never_raise() -> None:
    for text in (
        "",
        "Serving Benchmark Result",
        "=== Serving Benchmark Result ===\n:\n",
        '"request_throughput":',
        '{"request_throughput": }',
        "Avg latency: \n",
        "10% percentile latency: x seconds\n",
        "Throughput: 1 requests/s, 2 tokens/s",
        "Namespace(model=\nvllm bench serve --model\n=== Serving Benchmark Result ===\n",
    ):
        for item in parse_text(text):
            assert isinstance(item, Problem | Measurement)


def test_line_numbers_of_a_chunk_start_at_its_first_line() -> None:
    text = "noise\n" * 3 + NEW_BLOCK
    doc = DocText(text, DocMeta(uri="<chunk>"), first_line=1001)
    got = measurements(llm_serving.parse(doc))
    assert got[0].line == 1010  # "Request throughput" is the block's 7th line


def test_anchor_is_in_every_form() -> None:
    for text in (
        NEW_BLOCK,
        "Avg latency: 1.4 seconds",
        "10% percentile latency: 1.4 seconds",
        "Throughput: 12.30 requests/s, 4567.80 total tokens/s",
        json.dumps(sglang_record()),
        '{"avg_latency": 1, "percentiles": {}}',
        '{"requests_per_second": 1, "tokens_per_second": 2}',
    ):
        assert any(anchor in text for anchor in llm_serving.ANCHORS), text


def test_a_detailed_result_of_many_requests_gives_its_summary_values() -> None:
    # (Its speed is a benchmark's to measure: no timing in a test.)
    n = 200_000
    record = {
        "date": "20250101-120000",
        "backend": "vllm",
        "model_id": "org/m",
        "completed": n,
        "request_throughput": 100.0,
        "input_lens": [512] * n,
        "itls": [[0.01, 0.02]] * n,
        "generated_texts": ["some text {with braces}"] * n,
        "mean_ttft_ms": 30.0,
        "p99_itl_ms": 40.0,
    }
    text = json.dumps(record)
    got = measurements(parse_text(text))
    assert [(m.metric, m.value) for m in got] == [
        ("request_throughput", 100.0),
        ("ttft", 30.0),
        ("itl", 40.0),
    ]


def test_command_matches_found_at_their_words_are_finditers() -> None:
    # _matches_at tries the command patterns only where their first words occur; it must
    # find what a scan of every position finds, overlaps and word boundaries included.
    from ingest.parsers import llm_serving as lm

    texts = [
        "python -m sglang.bench_serving.py --x 1\nvllm bench serve --model m",
        "xvllm bench serve; vllm  bench\tlatency --n 2 vllm.benchmarks.throughput",
        "benchmark_serving.py benchmark_latency.pyc sglang.launch_server vllm serve m",
        "nothing here but vllm and sglang. and bench_serving",
    ]
    for text in texts:
        for pattern, words in (
            (lm._BENCH_COMMAND, lm._BENCH_COMMAND_WORDS),
            (lm._SERVER_COMMAND, lm._SERVER_COMMAND_WORDS),
        ):
            expected = [(m.span(), m.groups()) for m in pattern.finditer(text)]
            assert [(m.span(), m.groups()) for m in lm._matches_at(pattern, text, words)] == (
                expected
            )
