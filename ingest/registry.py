"""Which parsers read which kind of document.

``python -m ingest KIND PATH...``: ``auto`` runs every parser (documents mix formats);
the explicit kinds run only theirs, for when a user knows what a file is and wants
anything else in it ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from types import ModuleType

from ingest.gate import AnchorGate
from ingest.parsers import (
    analysis,
    claims,
    latency,
    llm_serving,
    md_tables,
    mlperf,
    nvprof,
    opbench,
    passes,
    profiler,
    trtexec,
    ws_tables,
)
from ingest.text import DocText
from perfboard.model import Item

PARSERS: dict[str, ModuleType] = {
    module.NAME: module
    for module in (
        latency,
        passes,
        profiler,
        nvprof,
        md_tables,
        ws_tables,
        opbench,
        analysis,
        claims,
        mlperf,
        llm_serving,
        trtexec,
    )
}

KINDS: dict[str, tuple[str, ...]] = {
    "auto": tuple(PARSERS),
    "logs": ("latency", "passes", "analysis"),
    "tables": ("md_tables", "ws_tables"),
    "profiles": ("profiler", "nvprof"),
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
}

# Bump when a parser reads the same bytes differently: documents stored by an older
# reader are then read again instead of being skipped as unchanged.
READER_VERSION = "2"  # 2: the parsers of today's tools (issue 13)
RESULTS_KIND = "results"

ParseFn = Callable[[DocText], Iterator[Item]]


def formats_read() -> str:
    """Every format perfboard reads, as one line for a message."""
    return "; ".join([*(READS[name] for name in PARSERS), "perfboard result files (JSONL, CSV)"])


def parsers_for(kind: str) -> list[tuple[str, ParseFn]]:
    """(name, parse) of each parser of a kind, in a fixed order."""
    if kind not in KINDS:
        raise KeyError(kind)
    return [(name, PARSERS[name].parse) for name in KINDS[kind]]


@cache
def gate_for(kind: str) -> AnchorGate:
    """The anchor gate of a kind's parsers (compiled once per process)."""
    anchors = {name: tuple(PARSERS[name].ANCHORS) for name in KINDS[kind]}
    # The latency parser takes the positions of its anchor from the gate's own pass.
    return AnchorGate(anchors, positional=frozenset({"latency"}) & anchors.keys())
