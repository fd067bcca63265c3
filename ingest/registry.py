"""Which parsers read which kind of document.

``python -m ingest KIND PATH...``: ``auto`` runs every parser (documents mix formats);
the explicit kinds run only theirs, for when a user knows what a file is and wants
anything else in it ignored.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from types import ModuleType

from ingest.gate import AnchorGate
from ingest.text import DocText
from perfboard.model import Item

# Each parser's ANCHORS (the module's own constant, copied here: tests/test_pipeline.py
# checks they agree). The gate needs only these, so a parser module is imported, and its
# regular expressions compiled, only when a document holds one of its anchors: importing
# all 24 costs 0.2 s, about what the rest of ingesting a small document costs.
ANCHORS: dict[str, tuple[str, ...]] = {
    "latency": ("atency",),
    "passes": ("--- ",),
    "profiler": ("Calls",),
    "nvprof": ("GPU activities:", "API calls:", "Time(%)", "gpu_time"),
    "md_tables": ("|",),
    "ws_tables": ("atch", "bs", "Bs", "hread", "eq_len", "eqlen", "equence", "线程", "序列长度"),
    "opbench": ("framework", "consistent"),
    "analysis": ("s/step", "steps/s"),
    "claims": ("->", "→", " to ", "by "),
    "mlperf": ("MLPerf Results Summary", "SUT name :", "Scenario :"),
    "llm_serving": (
        "Serving Benchmark Result",
        "Avg latency: ",
        "% percentile latency: ",
        " requests/s, ",
        '"request_throughput"',
        '"avg_latency"',
        '"requests_per_second"',
    ),
    "trtexec": (
        "=== Performance summary ===",
        "Throughput:",
        "Latency: min",
        "Time: min",
        "Host Latency",
        "Host latency",
        "runs - GPU latency:",
        "compute time average over",
        "Average over ",
    ),
    "autolog": ("inference_time(ms)",),
    "fastdeploy": ("End2End", "端到端", "Runtime(ms)", "exclude warmup step", "fastdeploy/"),
    "ort_perf_test": ("time cost", "Min Latency", "P50 Latency", "inferences per second"),
    "openvino": ("FPS", "Dumping statistics report", "Latency for each data shape"),
    "llama_bench": ("t/s |", '"avg_ts"', "build_commit,build_number,", "INSERT INTO llama_bench"),
    "hyperfine": (
        "Time (mean ± σ):",
        "Time (abs ≡):",
        '"results"',
        "Mean [",
        "command,mean,stddev",
        "command,time_wall_clock_unit",
    ),
    "perf_analyzer": ("infer/sec", "Inferences/Second"),
    "torch_profiler": ("Self CPU time total", "# of Calls", "Number of Calls", "Self CUDA"),
    "nsys": ("Total Time (ns)", "Time (%)", "Time(%)", "Duration (ns)"),
    "gbench": ('"real_time"', "Iterations", "name,iterations,real_time"),
    "pytest_benchmark": ('"machine_info"', '"stddev_outliers"', "Name (time in "),
    "asv": ('"commit_hash"',),
}


class _Parsers(Mapping[str, ModuleType]):
    """Parser name -> its module (ingest/parsers/NAME.py), imported when first asked for."""

    def __getitem__(self, name: str) -> ModuleType:
        if name not in ANCHORS:
            raise KeyError(name)
        return importlib.import_module(f"ingest.parsers.{name}")

    def __iter__(self) -> Iterator[str]:
        return iter(ANCHORS)

    def __len__(self) -> int:
        return len(ANCHORS)


PARSERS: Mapping[str, ModuleType] = _Parsers()

# Readers of any table, by its headers; they run after the parsers of a tool and leave the
# lines those read alone (documents.parse_text): a tool's table means what the tool says.
GENERIC: frozenset[str] = frozenset({"md_tables", "ws_tables"})

KINDS: dict[str, tuple[str, ...]] = {
    # tools first, the generic table readers last
    "auto": tuple(sorted(PARSERS, key=lambda name: name in GENERIC)),
    "logs": ("latency", "passes", "analysis"),
    "tables": ("md_tables", "ws_tables"),
    "profiles": ("profiler", "nvprof", "torch_profiler", "nsys"),
    "opbench": ("opbench", "nvprof", "md_tables"),
    "passes": ("passes",),
    "analysis": ("analysis",),
}
# "results" (perfboard's own format) has its own bulk reader: ingest/results.py.

# What each parser reads, in a user's words: the message of a document none of them
# could read says this list (docs/formats.md has each in detail).
READS: dict[str, str] = {
    "latency": "tester latency lines (Paddle's inference testers)",
    "passes": "IR pass logs",
    "profiler": "Paddle profiler reports",
    "nvprof": "nvprof summaries",
    "md_tables": "Markdown tables whose header names a unit",
    "ws_tables": "whitespace-aligned result tables",
    "opbench": "PaddlePaddle/benchmark op benchmark output",
    "analysis": "model benchmark analysis.py output",
    "claims": 'effects a text claims ("from 10ms to 9.5ms")',
    "mlperf": "MLPerf LoadGen summaries (mlperf_log_summary.txt)",
    "llm_serving": "vLLM and SGLang serving, latency and throughput benchmarks (console and"
    " result JSON)",
    "trtexec": "TensorRT trtexec performance summaries and traces (TensorRT 5-10)",
    "autolog": "PaddlePaddle 2.x AutoLog benchmark reports (PaddleOCR/Clas/Det/Seg/Video)",
    "fastdeploy": "FastDeploy benchmark outputs (Runtime/End2End lines, result files and tables)",
    "ort_perf_test": "onnxruntime_perf_test summaries (0.x to 1.20+)",
    "openvino": "OpenVINO benchmark_app reports (C++ and Python, 2020 on)",
    "llama_bench": "llama.cpp llama-bench results (markdown table, CSV, JSON/JSONL, SQL)",
    "hyperfine": "hyperfine console reports and exports (JSON, CSV, markdown, org-mode, AsciiDoc)",
    "perf_analyzer": "Triton perf_analyzer / perf_client console reports and their -f CSV",
    "torch_profiler": "PyTorch profiler tables (key_averages().table(), 1.4 on)",
    "nsys": "Nsight Systems nsys stats summaries (text or CSV) and CSV GPU traces",
    "gbench": "Google Benchmark results (JSON, console and CSV)",
    "pytest_benchmark": "pytest-benchmark JSON (--benchmark-json, saved runs) and terminal tables",
    "asv": "asv result files (results/<machine>/<commit>-<env>.json, format 1 and 2)",
}

# Bump when a parser reads the same bytes differently: documents stored by an older
# reader are then read again instead of being skipped as unchanged.
READER_VERSION = "3"  # 2: trtexec, MLPerf, vLLM, SGLang; 3: the other tools, PR tables
RESULTS_KIND = "results"
# The file names perfboard's own result files may have (ingest.results.looks_like_results):
# any other file is not one, and is told so without importing that reader.
RESULT_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv")

ParseFn = Callable[[DocText], Iterator[Item]]


def formats_read() -> str:
    """Every format perfboard reads, as one line for a message."""
    return "; ".join([*(READS[name] for name in PARSERS), "perfboard result files (JSONL, CSV)"])


def parsers_for(kind: str) -> list[tuple[str, ParseFn]]:
    """(name, parse) of each parser of a kind, in a fixed order (imports them all)."""
    if kind not in KINDS:
        raise KeyError(kind)
    return [(name, parse_fn(name)) for name in KINDS[kind]]


def parse_fn(name: str) -> ParseFn:
    """The parse function of one parser, its module imported on first use."""
    return PARSERS[name].parse  # type: ignore[no-any-return]


@cache
def gate_for(kind: str) -> AnchorGate:
    """The anchor gate of a kind's parsers (compiled once per process)."""
    anchors = {name: ANCHORS[name] for name in KINDS[kind]}
    # The latency parser takes the positions of its anchor from the gate's own pass.
    return AnchorGate(anchors, positional=frozenset({"latency"}) & anchors.keys())
