"""trtexec's fast path (issue 15) reads exactly what its general path reads.

``trtexec.parse`` reads trtexec's own summary lines with one match each (_FAST_LINE), its
trace values without the unit table, and finds its entry points searched again from
where it resumes (_Entries); ``trtexec._parse(doc, fast=False)`` is the general path
every line took before, kept as the reference. Every test here holds the two to the same
items, field for field and in the same order: on every real document, on every variant
the parser's own tests build, and on variants that would embarrass a fast path (cut
blocks, missing fields, odd units, CRLF, exponents, quotes, fences, random edits).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from ingest.parsers import trtexec
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Item, Measurement
from tests.conftest import text_doc
from tests.parsers import test_trtexec

ROOT = Path(__file__).resolve().parent.parent
MODERN = ROOT / "tests" / "fixtures" / "modern"
DOCUMENTS = sorted(
    [
        *(p for p in (MODERN / "trtexec").iterdir() if p.name != "README.md"),
        MODERN / "samples" / "trtexec_tensorrt-4177.md",
        MODERN / "samples" / "ort-perf-test_onnxruntime-17313.md",
        MODERN / "ort_perf_test" / "ort-perf-test_onnxruntime-17313.md",
        ROOT / "data" / "samples" / "tensorrt-4177_2024-10-03_lix19937_trtexec.md",
    ]
)


def record(item: Item) -> tuple[Any, ...]:
    """Every field of an item, dicts as their items in order (JSON keeps the order)."""
    values = []
    for f in fields(item):  # type: ignore[arg-type]
        value = getattr(item, f.name)
        values.append(tuple(value.items()) if isinstance(value, dict) else value)
    return (type(item).__name__, *values)


def both(doc: DocText) -> Iterator[Item]:
    """parse, after checking that the fast and the general path read the same items."""
    fast = list(trtexec._parse(doc, fast=True))
    general = list(trtexec._parse(doc, fast=False))
    assert [record(i) for i in fast] == [record(i) for i in general]
    # No measurement keeps the placeholder its stats had until its summary was read.
    assert not any(isinstance(i, Measurement) and i.stats is trtexec._LATER for i in fast)
    return iter(fast)


def same(text: str) -> list[Item]:
    """The items of a text read both ways, as a document is (normalised) and as it is."""
    items = list(both(text_doc(text)))
    list(both(DocText(text)))
    return items


def document(path: Path) -> DocText:
    return read_text_file(str(path), DocMeta(uri=path.name))


# -- real documents --------------------------------------------------------------------


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_real_document_reads_the_same_both_ways(path: Path) -> None:
    items = list(both(document(path)))
    assert items or "4036" in path.name  # a command without a summary: nothing to read


def test_the_benchmark_blocks_read_the_same_and_most_lines_go_the_fast_way() -> None:
    """The documents scripts/bench_ingest.py repeats, several times over: the fast way
    reads each summary line itself (no general reading of a label)."""
    blocks = [document(p).text for p in DOCUMENTS if "4177" in p.name or "3083" in p.name]
    hackathon = document(MODERN / "trtexec" / "hackathon-cookbook_result-03_trt86.log").text
    text = "\n".join([*blocks, hackathon] * 3)
    calls = 0
    general = trtexec._read_label

    def counted(*args: Any) -> None:
        nonlocal calls
        calls += 1
        general(*args)

    trtexec._read_label = counted  # type: ignore[assignment]
    try:
        items = list(trtexec.parse(DocText(text)))
    finally:
        trtexec._read_label = general
    assert sum(isinstance(i, Measurement) for i in items) > 200
    assert calls == 3  # only the cut line of tensorrt-3083, in each of its three copies
    same(text)


@pytest.mark.parametrize("name", [n for n in dir(test_trtexec) if n.startswith("test_")])
def test_every_variant_of_the_parser_tests_reads_the_same_both_ways(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/parsers/test_trtexec.py again, each of its documents read both ways."""
    monkeypatch.setattr(trtexec, "parse", both)
    getattr(test_trtexec, name)()


# -- variants --------------------------------------------------------------------------

SAMPLE = document(MODERN / "samples" / "trtexec_tensorrt-4177.md").text
TRACE = document(MODERN / "trtexec" / "tensorrt-3083_trt86-trace-and-summary.md").text
LOG = document(MODERN / "trtexec" / "hackathon-cookbook_result-03_trt86.log").text
JOINED = document(MODERN / "trtexec" / "yolo-on-jetson-4_summary-lines-joined.md").text
OLD = document(MODERN / "trtexec" / "tensorrt-2054_trt7-host-latency-block.md").text
E2E = document(MODERN / "trtexec" / "yolov7-triton-readme_trt82-e2e.md").text
TRACE_ONLY = document(MODERN / "trtexec" / "tensorrt-1243_trt7-trace-only.md").text
# Trace lines no summary follows: their values are stored (window means), not only checked.
WINDOWS = TRACE[: TRACE.index("\n\n[06/26/2023-11:30:51] [I] === Performance")]
LOG_WINDOWS = LOG[: LOG.index("=== Performance summary ===")]


@pytest.mark.parametrize("text", [SAMPLE, TRACE, LOG], ids=["sample", "trace", "log"])
def test_cut_at_every_line_and_inside_summary_lines(text: str) -> None:
    """A block at a chunk's end: the text cut after every line, and inside every summary
    and trace line at several places."""
    ends = [i for i, c in enumerate(text) if c == "\n"]
    for end in ends:
        same(text[:end])
        same(text[: end + 1])
    for start, end in zip([-1, *ends], ends, strict=False):
        line = text[start + 1 : end]
        if "ms" in line or "qps" in line:
            for cut in range(start + 1, end, 7):
                same(text[:cut])


# (old, new) replacements, each applied alone to every document below.
EDITS = [
    ("\n", "\r\n"),
    (" ms", " us"),
    (" ms", "ms"),
    (" ms", " MS"),
    (" ms,", " ms ,"),
    (" ms", " ms  "),
    (" = ", "="),
    (" = ", " =  "),
    (" s\n", " ms\n"),
    (" s\n", " sec\n"),
    (" qps", " QPS"),
    (" qps", " qps extra"),
    ("qps", "requests/s"),
    ("130.298", "0"),
    ("130.298", "0.0"),
    ("234.19", "1e999"),
    ("5.38672", "5.38672e0"),
    ("5.38672", "5.38672E-3"),
    ("5.38672", "5e+2"),
    ("5.38672", "99999999999"),
    ("5.38672", "1e999"),
    ("5.38672", "nan"),
    ("5.38672", "-5.38672"),
    ("5.38672", "٥.٣٨"),  # Arabic-Indic digits: float() reads them
    ("5.38672", "5."),
    ("5.38672", ".5"),
    ("5.38672", "5.38672 ms, max"),
    ("percentile(90%)", "percentile(101%)"),
    ("percentile(90%)", "percentile(99.9%)"),
    ("percentile(90%)", "percentile(90.%)"),
    ("percentile(90%)", "percentile(90 %)"),
    ("percentile(99%)", "percentile(1e2%)"),
    ("percentile(95%)", "p95"),
    ("min = ", "min: "),
    ("min = ", ""),
    (", max = 13.3664 ms", ""),
    (", median = 7.16092 ms", ""),
    (" ms\n", " ms...\n"),
    (" ms\n", " ms…\n"),
    (" ms\n", " ms,\n"),
    (" ms\n", "\n"),
    ("[I] ", ""),
    ("[I] ", "[I]"),
    ("[I] ", "[I]\t"),
    ("[I] ", "[I] `"),
    ("[I] ", "[I] > "),
    ("[I] ", "[I] 数据 "),
    ("[I] ", "[W] "),
    ("[I] ", "[I] [coefficient of variance = 3%] "),
    ("[I] Latency", "[I] Latency: min = 1 ms [I] Latency"),
    ("[I] Enqueue", "[I] Enqueue Time: min = 1 ms, Enqueue"),
    ("Latency:", "Latency :"),
    ("Latency:", "latency:"),
    ("Latency: min", "Latency:  min"),
    ("Latency: min", "Latency:\tmin"),
    ("H2D Latency", "X2Y Latency"),
    ("GPU Compute Time", "GPU Compute Time: min = 2 ms, GPU Compute Time"),
    ("Total Host Walltime: ", "Total Host Walltime:"),
    ("Total Host Walltime: 3", "Total Host Walltime: 99999999999"),
    ("Total GPU Compute Time: 2.96536 s", "Total GPU Compute Time: 2.96536"),
    ("Total GPU Compute Time: 2.96536 s", "Total GPU Compute Time: 2.96536 qps"),
    ("=== Performance summary ===", "=== Performance summary ===\n"),
    ("=== Performance summary ===\n", ""),
    ("\n[10/03/2024-10:47:59] [I] Throughput", "\n\n[10/03/2024-10:47:59] [I] Throughput"),
    ("\n[10/03/2024-10:47:59] [I] Enqueue", "\n\n\n[10/03/2024-10:47:59] [I] Enqueue"),
    ("GPU latency: 4.24171 ms", "GPU latency: 4.24171 us"),
    ("GPU latency: 4.24171 ms", "GPU latency: 4.24171 s"),
    ("Host latency: 4.29793 ms", "Host latency: 4.29793 s"),
    ("(enqueue 1.81771 ms)", "(enqueue 1.81771 s)"),
    ("(end to end 6.07249 ms", "(end to end 6.07249 s"),
    ("(end to end 6.07249 ms", "(end to end 6.07249e3 ms"),
    ("(end to end 6.07249 ms, ", "("),
    (", enqueue 0.489038 ms)", ")"),
    ("GPU latency: 0.0433136 ms", "GPU latency: 0.0433136 s"),
    # The lines after a trace's first one are read on without a search: edits there too.
    ("GPU latency: 4.24151 ms", "GPU latency: 4.24151 s"),
    ("Host latency: 4.30073 ms", "Host latency: 4.30073 us"),
    ("(enqueue 1.79398 ms)", "(enqueue 1.79398 s)"),
    ("GPU latency: 4.24223 ms", "GPU latency: 4.24223e1 ms"),
    ("GPU latency: 4.24223 ms", "GPU latency: 1e999 ms"),
    ("GPU latency: 4.24223 ms", "GPU latency: 99999999999 ms"),
    ("Average on 10 runs - GPU latency: 4.24048", "Average on 20 runs - GPU latency: 4.24048"),
    (
        "[I] Average on 10 runs - GPU latency: 4.24048",
        "[I] Host Latency\n[I] Average on 10 runs - GPU latency: 4.24048",
    ),
    ("[I] Average on 10 runs - GPU latency: 4.24048", "Average on 10 runs - GPU latency: 4.24048"),
    (
        "[I] Average on 10 runs - GPU latency: 4.24048",
        "[I] x Average on 10 runs - GPU latency: 4.24048",
    ),
    (
        "[I] Average on 10 runs - GPU latency: 4.24048",
        "&&&& PASSED TensorRT.trtexec [TensorRT v8600] # Average on 10 runs - GPU latency: 4.24048",
    ),
    (
        "[I] Average on 10 runs - GPU latency: 4.24048",
        "[I] Throughput: 5 qps Average on 10 runs - GPU latency: 4.24048",
    ),
    ("GPU latency: 3.05674 ms", "GPU latency: 3.05674 s"),
    ("(end to end 6.04717 ms, ", "(end to end 6.04717 us, "),
    ("enqueue 0.478613 ms)", "enqueue 0.478613 s)"),
    ("Host latency: 0.0518692 ms", "Host latency: 0.0518692 sec"),
    ("Average on 10 runs - GPU latency: 3.05674", "Average on 7 runs - GPU latency: 3.05674"),
    ("GPU latency: 4.24171 ms", "GPU latency: 4.24171e0 ms"),
    ("GPU latency: 4.24171 ms", "GPU latency: 1e999 ms"),
    ("GPU latency: 4.24171 ms", "GPU latency: -4.2 ms"),
    ("GPU latency: 4.24171 ms", "GPU latency: nan ms"),
    ("GPU latency: 4.24171 ms", "GPU latency: 99999999999 ms"),
    ("(enqueue 1.81771 ms)", ""),
    ("(enqueue 1.81771 ms)", "(end to end 9 ms, enqueue 1.81771 ms)"),
    ("Average on 10 runs", "Average on 20 runs"),
    ("[I] Average on", "[I] [Throughput: 1 qps] Average on"),
    ("[I] Average on", "[I] Host Latency Average on"),
    ("0.0433136", "0.0433136 ms - Host latency: 1"),
    ("Average on 10 runs - GPU latency: 0.0434158", "Average on 10 runs - GPU latency: 0.04"),
    ("&&&& PASSED", "&&&& FAILED"),
    ("&&&& RUNNING", "&&&& PASSED"),
    ("--shapes=", "--fp16 --batch=4 --streams=2 --shapes="),
    ("Selected Device: ", "Selected Device:  "),
]


@pytest.mark.parametrize("old,new", EDITS)
def test_edited_documents_read_the_same_both_ways(old: str, new: str) -> None:
    for text in (SAMPLE, TRACE, LOG, JOINED, OLD, E2E, TRACE_ONLY, WINDOWS, LOG_WINDOWS):
        if old in text:
            same(text.replace(old, new))
            same(text.replace(old, new, 1))


def test_blocks_back_to_back_fenced_quoted_and_among_other_text() -> None:
    block = "\n".join(ln for ln in SAMPLE.split("\n")[1:] if not ln.startswith("```"))
    summary = block[block.index("[10/03") :]
    for text in (
        summary + summary,  # no line between them
        summary + "\n" + summary,
        summary.rstrip("\n") + summary,
        "```\n" + summary + "```\n",
        "```text\n" + summary + "\n```\n" + summary,
        "".join(f"> {ln}\n" for ln in summary.split("\n")),
        "".join(f">{ln}\n" for ln in summary.split("\n")),
        "温度 ± µs 数据\n" + summary + "\n结果 ✓\n",
        TRACE + SAMPLE + LOG + TRACE,
        LOG + LOG,
        LOG.replace("&&&& PASSED", "&&&& RUNNING") + SAMPLE,
        summary.replace("[10/03/2024-10:47:59] [I] ", ""),
        summary.replace("[10/03/2024-10:47:59] [I] ", "    "),
        summary.replace("[10/03/2024-10:47:59] [I] ", "[10/03/2024-10:47:59] [I] [x] "),
        summary.replace("[10/03/2024-10:47:59]", "[13/45/2024-10:47:59]"),
        summary.replace("\n", " "),  # everything joined on one line
    ):
        same(text)


def test_entry_points_at_the_very_start_of_the_line_after_a_read_one() -> None:
    """_Entries searches again from the line after what was read: an entry point right
    there (no log prefix) is the next one, as in the merged scan."""
    v5 = "Average over 10 runs is {} ms (host walltime is 1.5 ms, 99% percentile time is 1.6).\n"
    v6 = "GPU compute time average over 10 runs is {} ms (latency average 1.5 ms)\n"
    v7 = "Average on 10 runs - GPU latency: {} ms - Host latency: 1.6 ms (end to end 2.7 ms)\n"
    block = "Host Latency\nmin: 1.6 ms (end to end 1.7 ms)\nmean: 1.7 ms (end to end 1.8 ms)\n"
    tail = summary_lines()
    for line in (v5, v6, v7):
        trace = "".join(line.format(f"1.{i}") for i in range(4))
        for after in ("", "=== Performance summary ===\n" + tail, tail, block, "\n" + tail):
            same(trace + after)
            same(after + trace + after)
            same(trace.replace("1.2 ms", "1.2") + after)


def test_trace_lines_read_on_stop_at_the_end_of_their_run() -> None:
    """A run ends after its &&&& PASSED line: when that line is a trace line too, the
    trace lines below it are another run's, read on or not."""
    v7 = "[I] Average on 10 runs - GPU latency: {} ms - Host latency: 1.6 ms (enqueue 0.5 ms)\n"
    first = "".join(v7.format(f"1.{i}") for i in range(3))
    second = "".join(v7.format(f"2.{i}") for i in range(3))
    passed = "&&&& PASSED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=a.onnx "
    for end in (passed + v7.format("3.0"), passed + "\n", "&&&& RUNNING TensorRT.trtexec\n"):
        items = same(first + end + second)
        assert len([i for i in items if isinstance(i, Measurement)]) == 6  # two runs


def summary_lines() -> str:
    start = SAMPLE.index("Throughput:")
    return "\n".join(
        ln.split("] ")[-1]
        for ln in SAMPLE[start:].split("\n")
        if "[W]" not in ln and "[." not in ln
    )


TOKENS = [
    " ",
    "  ",
    "\t",
    ",",
    ", ",
    "=",
    " = ",
    ":",
    "ms",
    " ms",
    "s",
    "us",
    "qps",
    "e",
    "e-",
    "E+3",
    ".",
    "...",
    "%",
    "(",
    ")",
    "min",
    "max",
    "mean",
    "median",
    "percentile(",
    "[I] ",
    "]",
    "[",
    "`",
    "0",
    "9",
    "-",
    "\n",
    "",
]


def test_random_edits_of_summary_and_trace_lines_read_the_same_both_ways() -> None:
    """Seeded: a few hundred documents, each with one to three random edits (a token put
    in, a character taken out or replaced) on the lines a fast path reads."""
    rng = random.Random(15)
    texts = [SAMPLE, TRACE, E2E, JOINED, TRACE_ONLY, WINDOWS]
    for _ in range(400):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            at = rng.choice(
                [i for i in range(len(text)) if text.startswith((" ms", "qps", " s\n", "= "), i)]
            )
            at += rng.randint(-12, 4)
            at = max(0, min(at, len(text)))
            cut = rng.randint(0, 2)
            text = text[:at] + rng.choice(TOKENS) + text[at + cut :]
        same(text)
