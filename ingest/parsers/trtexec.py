"""NVIDIA TensorRT ``trtexec`` output, TensorRT 5 to 10, wherever it is pasted.

Format strings from TensorRT's ``samples/common/sampleReporting.cpp`` (6.0 to 10.x) and
the older ``samples/opensource/trtexec/trtexec.cpp`` (5.x). Lines read:

- TensorRT 7.1 to 10, the ``=== Performance summary ===`` block: ``Throughput: 130.298
  qps``; one line per metric, ``Latency: min = 5.38672 ms, max = 13.3664 ms, mean = 7.60628
  ms, median = 7.16092 ms, percentile(90%) = 10.2996 ms, percentile(95%) = 10.8698 ms,
  percentile(99%) = 12.9675 ms``, for ``Latency``, ``End-to-End Host Latency`` (7.1 to 8.3),
  ``Enqueue Time``, ``H2D Latency``, ``GPU Compute Time`` and ``D2H Latency`` (one
  percentile only before 8.4, ``--percentile``, default 99); ``Total Host Walltime: 3.00082
  s``, ``Total GPU Compute Time: 2.96536 s``; then warnings such as ``* GPU compute time is
  unstable, with coefficient of variance = 7.05215%.``. A log prefix (``[10/03/2024-10:47:59]
  [I] ``, ``[INFO] ... [I] ``, none) may stand before each line; lines pasted joined into one
  are read too;
- TensorRT 6 and 7.0, the blocks ``Host Latency`` (``Host latency`` in 6), ``Enqueue Time``
  and ``GPU Compute``, one statistic a line: ``min: 1.64058 ms (end to end 1.66368 ms)``,
  ``percentile: 1.67065 ms at 99% (end to end 3.03931 ms at 99%)`` (``ms (99%)`` in 6.0),
  ``throughput: 219.6 qps``, ``walltime: 3.00461 s``, ``total compute time: 2.9 s``;
- the trace that every version prints before its summary, ``Average on 10 runs - GPU
  latency: 1.56 ms - Host latency: 1.66 ms (end to end 2.76 ms, enqueue 0.94 ms)`` (without
  "end to end" from 8.4, without "enqueue" in 6.x), ``GPU compute time average over 10 runs
  is 1.2 ms (latency average 1.5 ms)`` (6.0), and TensorRT 5's only output, ``Average over
  10 runs is 1.23 ms (host walltime is 1.5 ms, 99% percentile time is 1.6).``;
- the context of a run: its command line (``&&&& RUNNING TensorRT.trtexec [TensorRT v8601]
  # trtexec --onnx=...``, the ``&&&& PASSED`` line that repeats it, or a shell line
  ``$ ./trtexec --loadEngine=...``), ``Selected Device: ...``, ``TensorRT version: 8.6.1``,
  ``Timing trace has 63030 queries over 3.00012 s``, ``Warmup completed 4141 queries over
  200 ms``, and the options dump's ``Model: ...`` / ``Load engine: ...``.

Decisions:

- One Measurement per statistic printed, ``params["stat"]`` "min", "max", "mean", "median"
  or "p90", "p95", "p99", "p99.9" (from ``percentile(99%)`` and ``at 99%``); framework
  "tensorrt", task "inference".
- Metrics keep trtexec's distinctions. "latency" is trtexec's Latency, its host latency of
  one query: H2D + GPU compute + D2H (``Latency``, the ``Host Latency`` block, the trace's
  ``Host latency``; TensorRT 5's ``host walltime`` per inference). "e2e_latency" is
  ``End-to-End Host Latency`` and every "end to end": from a query's H2D to its D2H end,
  including the wait for the query before it, a different number kept apart.
  "enqueue_time", "h2d_time", "gpu_compute_time" (also the trace's ``GPU latency`` and
  TensorRT 5's average), "d2h_time". "throughput" in queries/s (``qps``, which for an
  implicit-batch engine counts the ``--batch`` samples of each query, as trtexec does).
- ``Total Host Walltime`` and ``Total GPU Compute Time`` (7.x: ``walltime``, ``total
  compute time``) are no series: the walltime is the ``--duration`` asked for (3 s unless
  set) and the GPU total is the mean times the queries. They go in stats, as
  ``host_walltime_ms`` and ``gpu_compute_total_ms``, of every measurement of their summary:
  their ratio tells how busy the GPU was, next to each number. The coefficient of variance
  of the warning goes in ``stats["gpu_compute_cv_percent"]`` of gpu_compute_time. TensorRT
  6.0's GPU Compute block throughput goes in ``stats["gpu_compute_throughput_qps"]``.
- A throughput of 0 qps is no measurement (TensorRT 7 prints 0 for explicit-batch engines,
  its batch size there being 0): a warning Problem, nothing stored.
- The trace averages are window means of the very queries the summary describes: when a
  summary follows them in the same run they are not stored. When none does (TensorRT 5, a
  log cut before its summary), each metric's windows become one measurement, stat "mean",
  the mean of the window means (every window holds the same number of queries, so this is
  the mean of the queries they cover), samples windows × runs per window, stats
  ``{"source": "trace", "windows": k, "runs_per_window": n}``. TensorRT 5's per-window
  percentile (of 10 values) is no statistic of the run and is not stored.
- A trtexec run spans an ``&&&& RUNNING`` line to its ``&&&& PASSED``/``FAILED`` line (a
  document without them is one run). A summary takes the last context line of each kind
  before it in its run; the command may also come from the run's closing ``&&&&`` line (a
  log pasted from its summary on). From the command: the benchmark is the basename without
  extension of ``--onnx``, ``--uff``, ``--deploy`` or ``--loadEngine`` (else of ``Model:``
  / ``Load engine:``); params ``batch_size`` from ``--batch``, ``shapes`` from ``--shapes``
  as printed, ``precision`` from ``--fp16``/``--bf16``/``--fp8``/``--int8``/``--int4``/
  ``--best`` (several joined by "+"; none given leaves it empty, a prebuilt engine does
  not say), ``streams`` from ``--streams``/``--infStreams``. The device is ``Selected
  Device``; ``testbed["tensorrt"]`` is ``TensorRT version``, else the RUNNING line's
  ``v8601`` read as 8.6.1 (``v100200`` as 10.2.0). ``samples``/``warmup`` are the queries of
  the prolog. ``measured_at`` is the summary's log stamp (``MM/DD/YYYY-HH:MM:SS``, local
  time of an unknown zone, so naive).
- A command line counts when trtexec starts its line (after a shell prompt or a path), not
  when prose names it ("e.g. `trtexec --onnx=model.onnx --fp16`").
- Likewise a summary starts at the header on a line of its own, or at a summary line that
  begins its line (a summary pasted without its header: ``Throughput: N qps``, ``Latency:
  min = ...``), and runs over empty lines between its lines; prose that names the header or
  quotes a value mid-sentence is none. Another tool's ``Throughput: 45 requests/s`` is not
  trtexec's.
- Problems: a value cut short or unreadable (``max = 0.0249023q ms``), a summary or block
  header with nothing after it, a statistic line of an unknown metric inside a summary, a
  cut trace line (a warning when a summary follows it: nothing is lost then), a line
  shortened with "..." by whoever pasted it (a warning; the values before it are kept). The
  verbose explanations (``[V] Latency: the summation of ...``) and trtexec's other lines
  are not values and yield nothing.

Speed: one search per literal entry point, merged in document order and searched again
from where the reading resumes (the anchors inside a summary read are never visited);
only the lines of a block found are walked in Python. A summary line exactly as trtexec
prints it is read with one match (_FAST_LINE) into Measurements made whole at once, a
trace value in ms taken as it is written; any other line goes the general way, which
``_parse(doc, fast=False)`` keeps for every line as the reference that
tests/test_speed_trtexec.py holds the fast way to.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Any

from ingest.parsers.cells import MEASUREMENT_DEFAULTS, NUMBER, percentile_stat
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import ABSURD_MS, Quantity, UnitError, converter, normalise, scaling

NAME = "trtexec"
ANCHORS: tuple[str, ...] = (
    "=== Performance summary ===",
    "Throughput:",
    "Latency: min",
    "Time: min",
    "Host Latency",
    "Host latency",
    "runs - GPU latency:",
    "compute time average over",
    "Average over ",
)

FRAMEWORK = "tensorrt"

_NUM = NUMBER
_UNIT = r"[A-Za-zµμ]+"

# -- entry points (literal-led) --------------------------------------------------------

_DATA = (
    ("header", re.compile(r"=== Performance summary ===")),
    ("line", re.compile(r"Throughput:")),
    ("line", re.compile(r"Latency: *min\b")),
    ("line", re.compile(r"Time: *min\b")),
    ("block", re.compile(r"Host [Ll]atency")),
    ("trace", re.compile(r"runs - GPU latency:")),
    ("trace", re.compile(r"GPU compute time average over ")),
    ("trace", re.compile(r"Average over ")),
)
_CONTEXT = (
    ("amp", re.compile(r"&&&& (?:RUNNING|PASSED|FAILED) TensorRT\.trtexec")),
    ("shell", re.compile(r"trtexec")),
    ("device", re.compile(r"Selected Device: ")),
    ("version", re.compile(r"TensorRT version: ")),
    ("samples", re.compile(r"Timing trace (?:has|of) ")),
    ("warmup", re.compile(r"Warmup completed ")),
    ("model", re.compile(r"\] (?:Model|Load engine): ")),
)

# -- the performance summary (7.1+) ----------------------------------------------------

# Longest first where one label ends another ("H2D Latency" before "Latency"); finditer
# takes the leftmost, so "End-to-End Host Latency" is found at "End", not at "Latency".
_LABEL = re.compile(
    r"(?<![A-Za-z0-9-])(End-to-End Host Latency|Total Host Walltime|Total GPU Compute Time"
    r"|GPU Compute Time|Enqueue Time|H2D Latency|D2H Latency|Throughput|Latency):"
)
_METRICS = {
    "Latency": "latency",
    "End-to-End Host Latency": "e2e_latency",
    "Enqueue Time": "enqueue_time",
    "H2D Latency": "h2d_time",
    "GPU Compute Time": "gpu_compute_time",
    "D2H Latency": "d2h_time",
}
_TOTALS = {
    "Total Host Walltime": "host_walltime_ms",
    "Total GPU Compute Time": "gpu_compute_total_ms",
}
_STAT = re.compile(
    rf"(?P<stat>min|max|mean|median|percentile\((?P<pct>[0-9.]+)%\))\s*=?\s*"
    rf"(?P<num>{_NUM})\s*(?P<unit>{_UNIT})"
)
_STAT_NAME = re.compile(r"(?:min|max|mean|median|percentile)\b")
_ENDS_WITH_UNIT = re.compile(r"\d\s*[A-Za-zµμ]+$")
_VALUE = re.compile(rf"\s*(?P<num>{_NUM})\s*(?P<unit>{_UNIT})?")
# A statistic line of a metric this parser does not know (a future trtexec).
_UNKNOWN_LINE = re.compile(r"(?<![A-Za-z0-9-])(?P<label>[A-Z][A-Za-z0-9 -]*?): *min *=")
_CV = re.compile(rf"coefficient of variance = (?P<num>{_NUM})%")
_ELISION = re.compile(r"\s*(?:\.\.\.|…)\s*$")
# The log prefix of a line: "[10/03/2024-10:47:59] [I] ", "[INFO] [...] [I] ".
_PREFIX = re.compile(r"\s*(?:\[[^\]\n]*\]\s*)*")
_STAMP = re.compile(r"\[(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)\]")

# The fast path: a summary line exactly as trtexec prints it (printPerformanceReport), read
# with one match (and a findall for other statistics than the usual ones) instead of a
# label dispatch and a regex per statistic. It accepts a subset of what the general
# reading accepts and reads it the same way; any other line (other spacing or units,
# "...", a value out of range, two labels joined on one line) goes the general way. The
# prefix is _PREFIX then the quotes _labels strips, both possessive: the very split
# _content and _labels make.
_FAST_NUM = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
_FAST_PCT = r"[0-9]+(?:\.[0-9]+)?"
_FAST_STAT = rf"(?:min|max|mean|median|percentile\({_FAST_PCT}%\))"
_FAST_PART = rf" {_FAST_STAT} = {_FAST_NUM} ms"
# What TensorRT 8.4 to 10 print by default (--percentile=90,95,99), its values captured by
# the one match; other statistics, in any order, by findall (_FAST_PARTS).
_FAST_USUAL = (
    rf" min = (?P<min>{_FAST_NUM}) ms, max = (?P<max>{_FAST_NUM}) ms,"
    rf" mean = (?P<mean>{_FAST_NUM}) ms, median = (?P<median>{_FAST_NUM}) ms,"
    rf" percentile\((?P<pct1>{_FAST_PCT})%\) = (?P<v1>{_FAST_NUM}) ms,"
    rf" percentile\((?P<pct2>{_FAST_PCT})%\) = (?P<v2>{_FAST_NUM}) ms,"
    rf" percentile\((?P<pct3>{_FAST_PCT})%\) = (?P<v3>{_FAST_NUM}) ms"
)
_FAST_LINE = re.compile(
    r"(?>\s*(?:\[[^\]\n]*\]\s*)*)[`'\" \t]*+"
    r"(?:(?P<metric>End-to-End Host Latency|GPU Compute Time|Enqueue Time|H2D Latency"
    rf"|D2H Latency|Latency):(?:{_FAST_USUAL}|(?P<stats>{_FAST_PART}(?:,{_FAST_PART})*))"
    rf"|Throughput: (?P<qps>{_FAST_NUM}) qps"
    rf"|(?P<total>Total Host Walltime|Total GPU Compute Time):(?P<rest> {_FAST_NUM} m?s)"
    r")[ \t]*"
)
_FAST_PARTS = re.compile(rf"({_FAST_STAT}) = ({_FAST_NUM}) ms")
# Where m.groups() of _FAST_LINE holds what _read_fast reads.
_USUAL_MIN = _FAST_LINE.groupindex["min"] - 1
_USUAL_PCTS = itemgetter(*(_FAST_LINE.groupindex[g] - 1 for g in ("pct1", "pct2", "pct3")))
_USUAL_VALUES = itemgetter(
    *(_FAST_LINE.groupindex[g] - 1 for g in ("min", "max", "mean", "median", "v1", "v2", "v3"))
)
_STATS = _FAST_LINE.groupindex["stats"] - 1
# params["stat"] of a statistic as printed; percentiles are added as they are met.
_FAST_STAT_NAMES = {"min": "min", "max": "max", "mean": "mean", "median": "median"}
_FAST_STAT_NAMES_MAX = 256  # a log of invented percentiles grows it no further
# The names of _FAST_USUAL's statistics by its three percentiles ("90", "95", "99").
_FAST_USUAL_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}
_MS = normalise(1.0, "ms")
# Whether a time in ms is stored as it is written (factor 1): what the fast path relies on.
_MS_AS_IS = scaling("ms") == (0, 1.0, "time")
_QPS = normalise(1.0, "queries/s")
_TO_QPS = converter("queries/s")

# -- the 6.x / 7.0 blocks --------------------------------------------------------------

_SECTIONS = {
    "Host Latency": "latency",
    "Host latency": "latency",
    "Enqueue Time": "enqueue_time",
    "H2D Latency": "h2d_time",
    "GPU Compute": "gpu_compute_time",
    "D2H Latency": "d2h_time",
}
_E2E = rf"(?:\s*\(end to end (?P<e2e>{_NUM})\s*(?P<e2e_unit>{_UNIT})(?:\s+at\s+[0-9.]+%)?\))?"
_BLOCK_STAT = re.compile(
    rf"(?P<stat>min|max|mean|median):\s*(?P<num>{_NUM})\s*(?P<unit>{_UNIT})" + _E2E
)
_BLOCK_PCT = re.compile(
    rf"percentile:\s*(?P<num>{_NUM})\s*(?P<unit>{_UNIT})\s*"
    r"(?:at\s+(?P<pct>[0-9.]+)%|\((?:at\s+)?(?P<pct2>[0-9.]+)%\))" + _E2E
)
_BLOCK_EXTRA = re.compile(
    rf"(?P<key>throughput|walltime|total compute time):\s*(?P<num>{_NUM})\s*(?P<unit>{_UNIT})"
)
_BLOCK_WORD = re.compile(
    r"(min|max|mean|median|percentile|throughput|walltime|total compute time):"
)

# -- the trace -------------------------------------------------------------------------

_TRACE7 = re.compile(
    rf"Average on (?P<n>\d+) runs - GPU latency: (?P<gpu>{_NUM}) (?P<gpu_u>{_UNIT}) - "
    rf"Host latency: (?P<host>{_NUM}) (?P<host_u>{_UNIT})"
    rf"(?: \((?:end to end (?P<e2e>{_NUM}) (?P<e2e_u>{_UNIT}))?(?:, )?"
    rf"(?:enqueue (?P<enq>{_NUM}) (?P<enq_u>{_UNIT}))?\))?\s*$"
)
_TRACE6 = re.compile(
    rf"GPU compute time average over (?P<n>\d+) runs is (?P<gpu>{_NUM}) (?P<gpu_u>{_UNIT})"
    rf" \(latency average (?P<host>{_NUM}) (?P<host_u>{_UNIT})\)\s*$"
)
_TRACE5 = re.compile(
    rf"Average over (?P<n>\d+) runs is (?P<gpu>{_NUM}) (?P<gpu_u>{_UNIT}) \(host walltime "
    rf"is (?P<host>{_NUM}) (?P<host_u>{_UNIT}), \d+(?:\.\d+)?% percentile time is "
    rf"(?:{_NUM})\)\.?\s*$"
)
# Where a trace line starts: a line holding one of these that does not match is cut.
_TRACE_START = re.compile(
    r"Average on \d+ runs - |GPU compute time average over \d|Average over \d+ runs is"
)
_TRACE_FIELDS = (
    ("gpu", "gpu_compute_time"),
    ("host", "latency"),
    ("e2e", "e2e_latency"),
    ("enq", "enqueue_time"),
)
# A line whose content is all one trace line of TensorRT 7 to 10, in ms: a subset of
# _TRACE7 at the start of the content, its captures the same.
_FAST_TRACE = re.compile(
    r"(?>\s*(?:\[[^\]\n]*\]\s*)*)Average on (?P<n>[0-9]+) runs"
    rf" - GPU latency: (?P<gpu>{_FAST_NUM}) ms"
    rf" - Host latency: (?P<host>{_FAST_NUM}) ms(?: \((?:end to end (?P<e2e>{_FAST_NUM}) ms)?"
    rf"(?:, )?(?:enqueue (?P<enq>{_FAST_NUM}) ms)?\))?[ \t]*"
)
_FAST_TRACE_FIELDS = tuple(name for name, _ in _TRACE_FIELDS)
# The (value, unit) groups each trace pattern has, in _TRACE_FIELDS order.
_TRACE_GROUPS = {
    pattern: [(name, f"{name}_u") for name, _ in _TRACE_FIELDS if name in pattern.groupindex]
    for pattern in (_TRACE7, _TRACE6, _TRACE5)
}

# -- context ---------------------------------------------------------------------------

_AMP = re.compile(
    r"&&&& (?P<what>RUNNING|PASSED|FAILED) TensorRT\.trtexec(?: \[TensorRT v(?P<v>\d+)\])?"
    r"(?: \[b\d+\])*(?: # (?P<cmd>.*))?"
)
# The program on a shell line: "trtexec", "./trtexec", "D:\...\trtexec.exe", after nothing
# but white space or a shell prompt ("$ ", "# ", "> ", "PS C:\x> ").
_PROGRAM = re.compile(r"(?:^|(?<=\s))[^\s`#$>%]*?(?<![\w.-])trtexec(?:\.exe)?[\"']?(?=\s)")
_PROMPT_END = re.compile(r"(?:^|[$#>%])\s*$")
_DEVICE = re.compile(r"Selected Device: (?P<v>\S[^\n]*?)\s*$")
_VERSION = re.compile(r"TensorRT version: (?P<v>\d+(?:\.\d+)*)")
_SAMPLES = re.compile(r"Timing trace (?:has (?P<q>\d+) queries|of (?P<i>\d+) iterations)")
_WARMUP = re.compile(r"Warmup completed (?P<v>\d+) queries")
_MODEL = re.compile(r"\] (?:Model|Load engine): (?P<v>\S[^\n]*?)\s*$")

_LINE = attrgetter("line")
_CONTEXT_VALUE = {
    "device": _DEVICE,
    "version": _VERSION,
    "samples": _SAMPLES,
    "warmup": _WARMUP,
    "model": _MODEL,
}
_RAW_LINES = 15  # trace lines kept at each end of a trace measurement's raw text
_MODEL_FLAGS = ("onnx", "uff", "deploy", "loadEngine")
_PRECISION_FLAGS = ("fp16", "bf16", "fp8", "int8", "int4", "best")


class _Bad(ValueError):
    """A value that cannot be read; its message is the Problem's reason."""


@dataclass(slots=True)
class _Summary:
    """What one summary (or 6.x/7.0 block) gave: its measurements carry the settings of
    its run already; its stats and time are theirs once it is read (_summary_items)."""

    start: int  # offset of its first line
    end: int  # offset after its last line
    line: int
    settings: _Settings
    measurements: list[Measurement] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)  # for every measurement
    gpu_stats: dict[str, Any] = field(default_factory=dict)  # for gpu_compute_time only
    measured_at: datetime | None = None


@dataclass(slots=True)
class _Trace:
    """The trace lines of one run, summed per metric."""

    start: int
    line: int
    runs: int  # runs per window
    head: list[str] = field(default_factory=list)  # the first and last lines, for raw
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=_RAW_LINES))
    windows: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[tuple[int, str, str]] = field(default_factory=list)  # line, reason, raw


@dataclass(slots=True)
class _Context:
    """Context lines of the document by kind: (offset, value), in order, and the runs."""

    bounds: list[int]  # offsets where a trtexec run starts (RUNNING) or ends (PASSED)
    kinds: dict[str, list[tuple[int, Any]]]
    closing: dict[int, tuple[dict[str, str], str]]  # run -> flags, version of its &&&& end
    # The offsets of every kind's lines, in order: where the settings of a position change
    # (with the run bounds). The settings made for each such stretch (_settings_at).
    marks: list[int] = field(default_factory=list)
    settings: dict[tuple[int, int], _Settings] = field(default_factory=dict)
    offsets: dict[str, list[int]] = field(default_factory=dict)  # of each kind's lines

    def __post_init__(self) -> None:
        self.offsets = {kind: [e[0] for e in entries] for kind, entries in self.kinds.items()}
        self.marks = sorted(offset for offsets in self.offsets.values() for offset in offsets)

    def run_of(self, pos: int) -> int:
        return bisect.bisect_right(self.bounds, pos)

    def latest(self, kind: str, pos: int) -> Any:
        """The last value of a kind before pos in pos's run, or None."""
        entries = self.kinds.get(kind)
        if not entries:
            return None
        i = bisect.bisect_left(self.offsets[kind], pos) - 1
        if i >= 0 and self.run_of(entries[i][0]) == self.run_of(pos):
            return entries[i][1]
        return None


class _Entries:
    """The entry points of _DATA in text order, each pattern searched again from where
    the reader resumes: the many anchors inside a summary it has read ("Latency: min" three
    times, "Time: min" twice, "Throughput" in the warnings) are never visited.

    The same hits as ingest.parsers.scan.hits from the resume point on, ties in pattern
    order: no match of these patterns spans a line end or starts inside another of its
    pattern, and resume is a line start.
    """

    __slots__ = ("_heap", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._heap: list[tuple[int, int, re.Match[str]]] = []
        for index, (_, pattern) in enumerate(_DATA):
            m = pattern.search(text)
            if m is not None:
                self._heap.append((m.start(), index, m))
        heapq.heapify(self._heap)

    def next(self, resume: int) -> tuple[int, str] | None:
        """The first hit at or after resume, (position, kind), or None."""
        heap, text = self._heap, self._text
        while heap:
            pos, index, m = heap[0]
            kind, pattern = _DATA[index]
            if pos >= resume:
                following = pattern.search(text, m.end())  # as finditer goes on
                if following is None:
                    heapq.heappop(heap)
                else:
                    heapq.heapreplace(heap, (following.start(), index, following))
                return pos, kind
            again = pattern.search(text, resume)
            if again is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (again.start(), index, again))
        return None


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every trtexec summary and trace in the document, and Problems."""
    return _parse(doc, fast=True)


def _parse(doc: DocText, fast: bool) -> Iterator[Item]:
    """parse, the fast way or (fast=False: the reference the tests hold it to) the
    general way for every line."""
    text = doc.text
    items: list[Item] = []
    context: _Context | None = None
    resume = 0
    trace: _Trace | None = None

    def ctx() -> _Context:
        nonlocal context
        if context is None:
            context = _read_context(doc)
        return context

    def close_trace(summary_follows: bool) -> None:
        nonlocal trace
        if trace is not None:
            items.extend(_trace_items(trace, ctx(), summary_follows))
        trace = None

    settings_of = _settings_at if fast else _settings
    if fast:
        next_hit = _Entries(text).next
    else:
        merged = ((pos, kind) for pos, kind, _ in hits(text, _DATA))
        next_hit = lambda _resume: next(merged, None)  # noqa: E731
    while (hit := next_hit(resume)) is not None:
        pos, kind = hit
        if pos < resume:
            continue
        start, end = doc.line_bounds(pos)
        line = text[start:end]
        if kind == "trace":
            resume = end + 1
            entry = _trace_line(line, fast)
            if entry is None:
                continue
            runs = entry[0]
            if trace is not None and (
                ctx().run_of(start) != ctx().run_of(trace.start)
                or (runs is not None and trace.runs and runs != trace.runs)
            ):
                close_trace(False)
            if trace is None:
                trace = _Trace(start, doc.line_at(start), runs or 0)
            elif not trace.runs and runs:
                trace.runs = runs
            _add_trace_line(trace, entry, doc.line_at(start), line, fast)
            if fast and trace.runs:
                bounds = ctx().bounds
                run = bisect.bisect_right(bounds, trace.start)
                resume = _read_on(trace, text, resume, bounds[run] if run < len(bounds) else -1)
            continue
        if kind == "header":
            if _content(line).strip("`'\" \t") != "=== Performance summary ===":
                continue  # prose that names the header
            summary = _read_summary(doc, end + 1, (start, line), settings_of(ctx(), start), fast)
        elif kind == "line":
            if not _starts_summary(line):
                continue
            summary = _read_summary(doc, start, None, settings_of(ctx(), start), fast)
        else:
            if _content(line).strip() not in ("Host Latency", "Host latency"):
                continue
            summary = _read_block(doc, start, ctx)
            if summary is None:
                continue
        resume = summary.end
        if trace is not None and ctx().run_of(trace.start) != ctx().run_of(summary.start):
            close_trace(False)
        close_trace(bool(summary.measurements))
        items.extend(_summary_items(summary))
    close_trace(False)
    items.sort(key=_LINE)
    yield from items


def _problem(line: int, reason: str, raw: str, severity: str = "error") -> Problem:
    return Problem(line, reason, raw, NAME, severity)  # type: ignore[arg-type]


def _has_prefix(line: str) -> bool:
    """Whether a line starts with a log prefix such as "[I] "."""
    return bool(line[: len(line) - len(_content(line))].strip())


def _content(line: str) -> str:
    """A line without its log prefix ("[10/03/2024-10:47:59] [I] ")."""
    return line[_PREFIX.match(line).end() :]  # type: ignore[union-attr]


def _stamp(line: str) -> datetime | None:
    m = _STAMP.search(line)
    if m is None:
        return None
    month, day, year, hour, minute, second = map(int, m.groups())
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


# -- the performance summary -----------------------------------------------------------


def _starts_summary(line: str) -> bool:
    """A summary line without the header above it: "Throughput: N qps" or "X: min = ...",
    at the start of its line (after a log prefix): prose that quotes one is no summary."""
    content = _content(line).lstrip("`'\" \t")
    label = _LABEL.match(content)
    if label is not None:
        rest = content[label.end() :]
        if label[1] == "Throughput":
            value = _VALUE.match(rest)
            if value and (value["unit"] or "") == "qps":
                return True
        elif label[1] in _METRICS and rest.lstrip().startswith("min"):
            return True
    return False


def _read_summary(
    doc: DocText, pos: int, header: tuple[int, str] | None, settings: _Settings, fast: bool
) -> _Summary:
    """The summary from pos to the first line that is neither a value nor a warning.

    fast: trtexec's own lines are read with _FAST_LINE (the same values, see there).
    """
    text = doc.text
    first = header[0] if header else pos
    summary = _Summary(first, first, doc.line_at(first), settings)
    if header:
        summary.end = header[0] + len(header[1]) + 1
        summary.measured_at = _stamp(header[1])
    read_any = False
    if pos <= len(text):
        for number, start, line in doc.lines_from(pos):
            if fast and (m := _FAST_LINE.fullmatch(line)) and _read_fast(summary, m, number, line):
                if (cv := _CV.search(line)) is not None:  # _warning, inlined
                    summary.gpu_stats["gpu_compute_cv_percent"] = float(cv["num"])
                if summary.measured_at is None:
                    summary.measured_at = _stamp(line)
                read_any = True
                summary.end = start + len(line) + 1
                continue
            # The prefix found once for what follows. Fast: no label without a colon in the
            # content, no statistic line of an unknown metric without "min" (the patterns
            # hold these literals): searches spared, the same answers.
            begin = _PREFIX.match(line).end()  # type: ignore[union-attr]
            content = line[begin:]
            labels = _labels_in(line, content) if not fast or ":" in content else []
            if not labels and not content.strip():
                # A paste with empty lines between the summary's lines: read on over them.
                if start + len(line) < len(text) and _labels(doc.line_text(start + len(line) + 1)):
                    continue
                break
            if labels:
                for i, label in enumerate(labels):
                    stop = labels[i + 1].start() if i + 1 < len(labels) else len(line)
                    _read_label(summary, label[1], line[label.end() : stop], number, line)
                _warning(summary, line)
            elif (not fast or "min" in line) and (unknown := _UNKNOWN_LINE.search(line)):
                summary.problems.append(
                    _problem(number, f"summary line of unknown metric {unknown['label']!r}", line)
                )
            elif "[W]" in line[:begin] or content.startswith("* "):
                # trtexec's warnings below a summary: "[W] * Throughput may be bound by
                # ...", "[W]   If ...".
                _warning(summary, line)
                summary.end = start + len(line) + 1
                continue
            else:
                break
            if summary.measured_at is None:
                summary.measured_at = _stamp(line)
            read_any = True
            summary.end = start + len(line) + 1
    if header and not read_any:
        summary.problems.append(
            _problem(summary.line, "performance summary cut after its header", header[1])
        )
    return summary


def _labels(line: str) -> list[re.Match[str]]:
    """The summary labels of a line that starts with one (after its log prefix)."""
    return _labels_in(line, _content(line))


def _labels_in(line: str, content: str) -> list[re.Match[str]]:
    """_labels of a line whose content (_content) is known."""
    content = content.lstrip("`'\" \t")
    offset = len(line) - len(content)
    labels = list(_LABEL.finditer(line, offset))
    return labels if labels and labels[0].start() == offset else []


def _warning(summary: _Summary, line: str) -> None:
    m = _CV.search(line)
    if m is not None:
        summary.gpu_stats["gpu_compute_cv_percent"] = float(m["num"])


def _read_fast(summary: _Summary, m: re.Match[str], number: int, line: str) -> bool:
    """A line _FAST_LINE matched, read as _read_label reads it; False, with nothing read,
    when a value must go the general way (a zero throughput, a percentile over 100, a time
    over a day: the general way makes its Problem)."""
    settings = summary.settings
    names: Sequence[str | None]
    groups = m.groups()
    if groups[_USUAL_MIN] is not None:
        pcts = _USUAL_PCTS(groups)
        if (names := _FAST_USUAL_NAMES.get(pcts)) is None:  # type: ignore[assignment]
            names = ("min", "max", "mean", "median", *map(_fast_percentile, pcts))
            if None in names:
                return False
            if len(_FAST_USUAL_NAMES) < _FAST_STAT_NAMES_MAX:
                _FAST_USUAL_NAMES[pcts] = names  # type: ignore[assignment]
        numbers: Sequence[str] = _USUAL_VALUES(groups)
    elif (stats := groups[_STATS]) is not None:
        parts = _FAST_PARTS.findall(stats)
        names = [_FAST_STAT_NAMES.get(stat) or _fast_percentile(stat) for stat, _ in parts]
        if None in names:
            return False
        numbers = [num for _, num in parts]
    else:
        return _read_fast_other(summary, m, number, line)
    values = list(map(float, numbers))
    # What convert_all(values, "ms") takes and leaves as it is, in one comparison: digits
    # are never negative or NaN; infinity (1e999) is over ABSURD_MS.
    if not (_MS_AS_IS and max(values) <= ABSURD_MS):
        return False
    # _settled's Measurement, inlined: this is the one place that makes most of them.
    metric = _METRICS[m["metric"]]
    params, testbed, device = settings.params, settings.testbed, settings.device
    benchmark, samples, warmup = settings.benchmark, settings.samples, settings.warmup
    unit, direction = _MS.unit, _MS.direction
    summary.measurements += [
        Measurement(
            benchmark,
            metric,
            value,
            unit,
            _TASK,
            direction,  # type: ignore[arg-type]
            FRAMEWORK,
            device,
            {**params, "stat": name} if params else {"stat": name},
            testbed.copy(),
            _PROJECT,
            _NO_VERSION,
            None,
            _STATUS,
            samples,
            warmup,
            _LATER,
            _RUN,
            number,
            line,
        )
        for name, value in zip(names, values, strict=True)
    ]
    return True


def _read_fast_other(summary: _Summary, m: re.Match[str], number: int, line: str) -> bool:
    """_read_fast of a Throughput or Total line."""
    settings = summary.settings
    if (qps := m["qps"]) is not None:
        value = float(qps)
        if value == 0:
            return False
        try:
            value = _TO_QPS(value)
        except UnitError:
            return False
        summary.measurements.append(
            _settled(settings, "throughput", value, _QPS, dict(settings.params), number, line)
        )
        return True
    try:
        summary.stats[_TOTALS[m["total"]]] = _time(m["rest"], m["total"])
    except _Bad:
        return False
    return True


def _fast_percentile(stat: str) -> str | None:
    """params["stat"] of "percentile(99%)" (or of its "99"), as _stat_name reads it; None
    if it is none."""
    pct = stat[len("percentile(") : -len("%)")] if stat.startswith("p") else stat
    try:
        name = _stat_name("percentile", pct)
    except _Bad:
        return None
    if len(_FAST_STAT_NAMES) < _FAST_STAT_NAMES_MAX:
        _FAST_STAT_NAMES[stat] = name
    return name


def _read_label(summary: _Summary, label: str, rest: str, number: int, line: str) -> None:
    try:
        if label == "Throughput":
            _read_throughput(summary, rest, number, line)
        elif label in _TOTALS:
            summary.stats[_TOTALS[label]] = _time(rest, label)
        else:
            _read_stats(summary, _METRICS[label], label, rest, number, line)
    except _Bad as bad:
        summary.problems.append(_problem(number, str(bad), line))


def _read_throughput(summary: _Summary, rest: str, number: int, line: str) -> None:
    m = _VALUE.match(rest)
    if m is None:
        raise _Bad("Throughput line cut short (no value)")
    if not m["unit"]:
        raise _Bad("Throughput line cut short (no unit)")
    if m["unit"] != "qps":
        raise _Bad(f"Throughput in {m['unit']!r}, not qps")
    value = _number(m["num"])
    if value == 0:
        summary.problems.append(_zero_throughput(number, line))
        return
    _add(summary, _measurement("throughput", None, value, "queries/s", number, line))


def _zero_throughput(number: int, line: str) -> Problem:
    return _problem(
        number,
        "throughput 0 qps is no measurement (TensorRT 7 prints 0 for explicit-batch engines):"
        " not stored",
        line,
        "warning",
    )


def _read_stats(
    summary: _Summary, metric: str, label: str, rest: str, number: int, line: str
) -> None:
    elided = _ELISION.search(rest)
    if elided:
        rest = rest[: elided.start()]
        summary.problems.append(
            _problem(
                number, f"{label} line shortened with '...': the rest is not there", line, "warning"
            )
        )
    parts = rest.split(",")
    for i, part in enumerate(parts):
        part = part.strip()
        last = i == len(parts) - 1
        if not part and last and i > 0 and not elided:
            summary.problems.append(_problem(number, f"{label} line cut short after a comma", line))
            continue
        m = _STAT.fullmatch(part)
        if m is None:
            if last and not elided and _is_cut(part):
                reason = f"{label} line cut short at {part!r}"
            else:
                reason = f"{label}: {part!r} is not a statistic with a value and unit"
            summary.problems.append(_problem(number, reason, line))
            continue
        try:
            value = _number(m["num"])
            _add(
                summary,
                _measurement(
                    metric, _stat_name(m["stat"], m["pct"]), value, m["unit"], number, line
                ),
            )
        except _Bad as bad:
            summary.problems.append(_problem(number, f"{label} {m['stat']}: {bad}", line))


def _is_cut(part: str) -> bool:
    """A last part that names a statistic but ends before its unit: "median =", "min"."""
    return bool(_STAT_NAME.match(part)) and _ENDS_WITH_UNIT.search(part) is None


def _stat_name(stat: str, pct: str | None) -> str:
    if not stat.startswith("percentile"):
        return stat
    return _percentile(pct or "")


def _percentile(pct: str) -> str:
    try:
        return percentile_stat(float(pct))
    except ValueError:
        raise _Bad(f"percentile {pct!r} is not a number between 0 and 100") from None


# -- the 6.x / 7.0 blocks --------------------------------------------------------------


def _read_block(doc: DocText, pos: int, ctx: Callable[[], _Context]) -> _Summary | None:
    """The Host Latency / Enqueue Time / GPU Compute blocks from the header at pos.

    A header starts a block when statistics follow it or when it is a log line ("[I] Host
    Latency"): a log cut right after it is then a Problem. A bare line of prose is not.
    """
    text = doc.text
    start, end = doc.line_bounds(pos)
    header = text[start:end]
    following = doc.line_text(end + 1) if end < len(text) else ""
    if not _BLOCK_WORD.match(_content(following).strip()) and not _has_prefix(header):
        return None
    summary = _Summary(start, start, doc.line_at(start), _settings(ctx(), start))
    section = ""
    section_line = (0, "")
    has_values = False
    for number, line_start, line in doc.lines_from(start):
        content = _content(line).strip()
        if content in _SECTIONS:
            if section and not has_values:
                summary.problems.append(_block_cut(section, *section_line))
            section, section_line, has_values = content, (number, line), False
        elif section and _BLOCK_WORD.match(content):
            has_values = True
            _read_block_line(summary, section, content, number, line)
        elif not content and line_start + len(line) < len(text):
            # 6.0 prints an empty line between its blocks: go on if a block follows it.
            following = _content(doc.line_text(line_start + len(line) + 1)).strip()
            if following not in _SECTIONS:
                break
            continue
        else:
            break
        if summary.measured_at is None:
            summary.measured_at = _stamp(line)
        summary.end = line_start + len(line) + 1
    if section and not has_values:
        summary.problems.append(_block_cut(section, *section_line))
    return summary


def _block_cut(section: str, number: int, line: str) -> Problem:
    return _problem(number, f"{section} block cut after its header (no values)", line)


def _read_block_line(summary: _Summary, section: str, content: str, number: int, line: str) -> None:
    metric = _SECTIONS[section]
    try:
        m = _BLOCK_STAT.fullmatch(content) or _BLOCK_PCT.fullmatch(content)
        if m is not None:
            stat = m["stat"] if "stat" in m.re.groupindex else _percentile(m["pct"] or m["pct2"])
            _add(summary, _measurement(metric, stat, _number(m["num"]), m["unit"], number, line))
            if m["e2e"] is not None:
                _add(
                    summary,
                    _measurement(
                        "e2e_latency", stat, _number(m["e2e"]), m["e2e_unit"], number, line
                    ),
                )
            return
        m = _BLOCK_EXTRA.fullmatch(content)
        if m is None:
            raise _Bad(f"{section} block: {content!r} cut short or unreadable")
        key, value = m["key"], _number(m["num"])
        if key == "throughput":
            if m["unit"] != "qps":
                raise _Bad(f"{section} block: throughput in {m['unit']!r}, not qps")
            if metric == "gpu_compute_time":
                summary.gpu_stats["gpu_compute_throughput_qps"] = value
            elif value == 0:
                summary.problems.append(_zero_throughput(number, line))
            else:
                _add(summary, _measurement("throughput", None, value, "queries/s", number, line))
            return
        ms = _time(f"{m['num']} {m['unit']}", f"{section} {key}")
        if key == "total compute time" or metric == "gpu_compute_time":
            summary.stats["gpu_compute_total_ms"] = ms
        else:
            summary.stats["host_walltime_ms"] = ms
    except _Bad as bad:
        summary.problems.append(_problem(number, str(bad), line))


# -- the trace -------------------------------------------------------------------------


def _trace_line(
    line: str, fast: bool = False
) -> tuple[int, dict[str, tuple[str, str]]] | tuple[None, str] | None:
    """(runs per window, {field: (number, unit)}), (None, reason) for a cut line, or None.

    fast: the same, searched in the line from its content on, without copies of it.
    """
    if fast:
        begin = _PREFIX.match(line).end()  # type: ignore[union-attr]
        found = _TRACE_START.search(line, begin)
        if found is None:
            return None
        at = found.start()
        m = _TRACE7.match(line, at) or _TRACE6.match(line, at) or _TRACE5.match(line, at)
        if m is None:
            return None, "trace line cut short or unreadable"
        return int(m["n"]), {
            name: (value, m[unit])
            for name, unit in _TRACE_GROUPS[m.re]
            if (value := m[name]) is not None
        }
    content = _content(line)
    start = _TRACE_START.search(content)
    if start is None:
        return None  # prose that says "average over"
    content = content[start.start() :]
    m = _TRACE7.match(content) or _TRACE6.match(content) or _TRACE5.match(content)
    if m is None:
        return None, "trace line cut short or unreadable"
    values = {
        name: (m[name], m[f"{name}_u"])
        for name, _ in _TRACE_FIELDS
        if name in m.re.groupindex and m[name] is not None
    }
    return int(m["n"]), values


def _add_trace_line(
    trace: _Trace, entry: tuple[Any, Any], number: int, line: str, fast: bool = False
) -> None:
    runs, values = entry
    if runs is None:
        trace.problems.append((number, values, line))
        return
    try:
        if fast:
            converted = {name: _trace_ms(num, unit) for name, (num, unit) in values.items()}
        else:
            converted = {
                name: _time(f"{num} {unit}", "trace") for name, (num, unit) in values.items()
            }
    except _Bad as bad:
        trace.problems.append((number, f"trace line: {bad}", line))
        return
    trace.windows += 1
    if len(trace.head) < _RAW_LINES:
        trace.head.append(line)
    else:
        trace.tail.append(line)
    for name, value in converted.items():
        trace.sums[name] = trace.sums.get(name, 0.0) + value
        trace.counts[name] = trace.counts.get(name, 0) + 1


def _read_on(trace: _Trace, text: str, pos: int, bound: int) -> int:
    """The trace lines from pos on read into trace as the entry scan and _add_trace_line
    would read them, while each is all one TensorRT 7-10 trace line (_FAST_TRACE) before
    the run's end (bound, -1: none) with the trace's window size and its values in ms as
    written; the offset of the first line not read.

    Such a line is the next entry point (its anchor is in it, any other anchor on it reads
    nothing), of the same trace (same run and window size), and _trace_ms takes its values
    as they are: no search, no dict of strings, no problem possible. Any other line goes
    back to the entry scan.
    """
    if not _MS_AS_IS:
        return pos
    size = len(text)
    stop = size if bound < 0 else min(bound, size)
    head, tail, sums, counts = trace.head, trace.tail, trace.sums, trace.counts
    while pos < stop:
        end = text.find("\n", pos)
        end = size if end < 0 else end
        m = _FAST_TRACE.fullmatch(text, pos, end)
        if m is None or int(m["n"]) != trace.runs:
            break
        values = [(name, float(v)) for name in _FAST_TRACE_FIELDS if (v := m[name]) is not None]
        if not all(0.0 <= value <= ABSURD_MS for _, value in values):
            break
        trace.windows += 1
        line = text[pos:end]
        if len(head) < _RAW_LINES:
            head.append(line)
        else:
            tail.append(line)
        for name, value in values:  # as _add_trace_line adds them, in the same order
            sums[name] = sums.get(name, 0.0) + value
            counts[name] = counts.get(name, 0) + 1
        pos = end + 1
    return pos


def _trace_ms(num: str, unit: str) -> float:
    """_time(f"{num} {unit}", "trace"): a value in ms as it is, when _time would take it
    as it is (ms converts to itself: _MS_AS_IS), without a match and a unit lookup."""
    if unit == "ms" and _MS_AS_IS:
        value = float(num)
        if 0.0 <= value <= ABSURD_MS:
            return value
    return _time(f"{num} {unit}", "trace")


def _trace_items(trace: _Trace, context: _Context, summary_follows: bool) -> list[Item]:
    items: list[Item] = []
    for number, reason, raw in trace.problems:
        if summary_follows:
            items.append(
                _problem(
                    number, f"{reason} (the summary below has the run's statistics)", raw, "warning"
                )
            )
        else:
            items.append(
                _problem(number, f"{reason}: its window is left out of the trace mean", raw)
            )
    if summary_follows or not trace.windows:
        return items
    raw = _trace_raw(trace)
    settings = _settings(context, trace.start)
    for name, metric in _TRACE_FIELDS:
        count = trace.counts.get(name, 0)
        if not count:
            continue
        m = _measurement(metric, "mean", trace.sums[name] / count, "ms", trace.line, raw)
        _apply(m, settings)
        m.samples = count * trace.runs  # the queries of the windows, not the prolog's
        m.warmup = settings.warmup
        m.stats = {"source": "trace", "windows": count, "runs_per_window": trace.runs}
        m.measured_at = _stamp(trace.head[0])
        items.append(m)
    return items


def _trace_raw(trace: _Trace) -> str:
    """The trace's lines, or its first and last ones when there are many."""
    left_out = trace.windows - len(trace.head) - len(trace.tail)
    middle = [f"[... {left_out} trace lines ...]"] if left_out else []
    return "\n".join([*trace.head, *middle, *trace.tail])


# -- values ----------------------------------------------------------------------------


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _Bad(f"{text!r} is not a number") from None


def _time(text: str, what: str) -> float:
    """ "3.00082 s" -> 3000.82 (ms)."""
    m = _VALUE.match(text)
    if m is None:
        raise _Bad(f"{what} line cut short (no value)")
    if not m["unit"]:
        raise _Bad(f"{what}: {m['num']!r} has no unit (line cut?)")
    try:
        q = normalise(_number(m["num"]), m["unit"])
    except UnitError as e:
        raise _Bad(f"{what}: {e}") from None
    if q.kind != "time":
        raise _Bad(f"{what}: {m['unit']!r} is no time")
    return q.value


def _measurement(
    metric: str, stat: str | None, value: float, unit: str, number: int, line: str
) -> Measurement:
    try:
        q = normalise(value, unit)
    except UnitError as e:
        raise _Bad(f"{metric}: {e}") from None
    expected = "throughput" if metric == "throughput" else "time"
    if q.kind != expected:
        raise _Bad(f"{metric}: {unit!r} is no {expected}")
    params: dict[str, ParamValue] = {"stat": stat} if stat else {}
    return Measurement(
        benchmark="",
        metric=metric,
        value=q.value,
        unit=q.unit,
        direction=q.direction,  # type: ignore[arg-type]
        framework=FRAMEWORK,
        params=params,
        line=number,
        raw=line,
    )


# -- context ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Settings:
    benchmark: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    device: str = ""
    testbed: dict[str, str] = field(default_factory=dict)
    samples: int | None = None
    warmup: int | None = None


def _summary_items(summary: _Summary) -> list[Item]:
    """The summary's measurements with its time and stats, and its problems."""
    stats = summary.stats
    gpu_stats = {**stats, **summary.gpu_stats}
    measured_at = summary.measured_at
    for m in summary.measurements:
        m.measured_at = measured_at
        m.stats = dict(gpu_stats if m.metric == "gpu_compute_time" else stats)
    return [*summary.measurements, *summary.problems]


def _add(summary: _Summary, m: Measurement) -> None:
    _apply(m, summary.settings)
    summary.measurements.append(m)


_DEFAULTS = MEASUREMENT_DEFAULTS  # _settled passes the fields by position (cells)
_TASK, _PROJECT, _STATUS = _DEFAULTS["task"], _DEFAULTS["project"], _DEFAULTS["status"]
_NO_VERSION, _RUN = _DEFAULTS["version"], _DEFAULTS["run"]
_LATER: dict[str, Any] = {}  # stats, replaced by _summary_items once the summary is read


def _settled(
    settings: _Settings,
    metric: str,
    value: float,
    quantity: Quantity,
    params: dict[str, ParamValue],
    number: int,
    line: str,
) -> Measurement:
    """A measurement as _measurement then _apply make it, of a value already converted to
    quantity's unit."""
    return Measurement(
        settings.benchmark,
        metric,
        value,
        quantity.unit,
        _TASK,
        quantity.direction,  # type: ignore[arg-type]
        FRAMEWORK,
        settings.device,
        params,
        dict(settings.testbed),
        _PROJECT,
        _NO_VERSION,
        None,
        _STATUS,
        settings.samples,
        settings.warmup,
        _LATER,
        _RUN,
        number,
        line,
    )


def _apply(m: Measurement, settings: _Settings) -> None:
    m.benchmark = settings.benchmark
    m.params = {**settings.params, **m.params}
    m.device = settings.device
    m.testbed = dict(settings.testbed)
    m.samples = settings.samples
    m.warmup = settings.warmup


def _settings_at(context: _Context, pos: int) -> _Settings:
    """_settings(context, pos), made once for the positions that have the same context lines
    before them in the same run (shared: nobody changes a _Settings)."""
    key = (bisect.bisect_left(context.marks, pos), bisect.bisect_right(context.bounds, pos))
    settings = context.settings.get(key)
    if settings is None:
        settings = context.settings[key] = _settings(context, pos)
    return settings


def _settings(context: _Context, pos: int) -> _Settings:
    settings = _Settings()
    closing_flags, closing_version = context.closing.get(context.run_of(pos), (None, ""))
    command = context.latest("command", pos) or closing_flags
    if command is not None:
        settings.benchmark = _benchmark(command)
        settings.params = _command_params(command)
    if not settings.benchmark and (path := context.latest("model", pos)):
        settings.benchmark = _basename(path)
    settings.device = context.latest("device", pos) or ""
    version = context.latest("version", pos) or context.latest("build", pos) or closing_version
    if version:
        settings.testbed["tensorrt"] = version
    settings.samples = context.latest("samples", pos)
    settings.warmup = context.latest("warmup", pos)
    return settings


def _read_context(doc: DocText) -> _Context:
    text = doc.text
    bounds: list[int] = []
    kinds: dict[str, list[tuple[int, Any]]] = {}
    closing_at: list[tuple[int, dict[str, str], str]] = []
    last_shell_end = -1
    for pos, kind, _ in hits(text, _CONTEXT):
        start, end = doc.line_bounds(pos)
        line = text[start:end]
        if kind == "amp":
            m = _AMP.search(line)
            if m is None:
                continue
            flags = _flags(_program_args(m["cmd"] or ""))
            version = _version_of(m["v"]) if m["v"] else ""
            if m["what"] == "RUNNING":
                bounds.append(start)
                kinds.setdefault("command", []).append((start, flags))
                if version:
                    kinds.setdefault("build", []).append((start, version))
            else:
                bounds.append(end + 1)
                closing_at.append((start, flags, version))
            last_shell_end = end
        elif kind == "shell":
            if start <= last_shell_end or "&&&& " in line:
                continue  # the same line again, or an &&&& line read above
            command, last = _shell_command(doc, start, end)
            last_shell_end = last
            if command is not None:
                kinds.setdefault("command", []).append((start, _flags(command)))
        else:
            m = _CONTEXT_VALUE[kind].search(line, pos - start)
            if m is None:
                continue
            if kind == "samples":
                value: Any = int(m["q"] or m["i"])
            elif kind == "warmup":
                value = int(m["v"])
            else:
                value = m["v"]
            kinds.setdefault(kind, []).append((start, value))
    bounds.sort()
    context = _Context(bounds, kinds, {})
    for pos, flags, version in closing_at:
        context.closing.setdefault(context.run_of(pos), (flags, version))
    return context


def _shell_command(doc: DocText, start: int, end: int) -> tuple[str | None, int]:
    """The arguments of a shell line that runs trtexec (continued by "\\"), and its end."""
    text = doc.text
    line = text[start:end]
    if "`" in line:
        return None, end
    program = _PROGRAM.search(line)
    if program is None or not _PROMPT_END.search(line[: program.start()]):
        return None, end
    args = line[program.end() :].strip()
    while args.endswith("\\") and end < len(text):
        args = args[:-1]
        next_end = text.find("\n", end + 1)
        next_end = len(text) if next_end < 0 else next_end
        args += " " + text[end + 1 : next_end].strip()
        end = next_end
    if not args.startswith("-"):
        return None, end
    return args, end


def _program_args(command: str) -> str:
    """The arguments of "trtexec --onnx=x", "./trtexec ...", "D:\\...\\trtexec.exe ..."."""
    m = _PROGRAM.search(command)
    return command[m.end() :] if m else command


def _flags(args: str) -> dict[str, str]:
    flags: dict[str, str] = {}
    for token in args.split():
        if not token.startswith("--"):
            continue
        name, eq, value = token[2:].partition("=")
        if name and name not in flags:
            flags[name] = _unquote(value) if eq else ""
    return flags


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _benchmark(flags: dict[str, str]) -> str:
    for flag in _MODEL_FLAGS:
        if flags.get(flag):
            return _basename(flags[flag])
    return ""


def _basename(path: str) -> str:
    name = re.split(r"[/\\]", _unquote(path.strip()))[-1]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def _command_params(flags: dict[str, str]) -> dict[str, ParamValue]:
    params: dict[str, ParamValue] = {}
    batch = flags.get("batch", "")
    if batch.isdigit():
        params["batch_size"] = int(batch)
    if flags.get("shapes"):
        params["shapes"] = flags["shapes"]
    precision = [flag for flag in _PRECISION_FLAGS if flag in flags]
    if precision:
        params["precision"] = "+".join(precision)
    streams = flags.get("streams") or flags.get("infStreams") or ""
    if streams.isdigit():
        params["streams"] = int(streams)
    return params


def _version_of(build: str) -> str:
    """The RUNNING line's "v8601" as 8.6.1, "v100200" as 10.2.0 (NV_TENSORRT_VERSION)."""
    n = int(build)
    if n >= 10000:  # 10.x: major * 10000 + minor * 100 + patch
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"
