"""Triton perf_analyzer (and its predecessor perf_client): the console report and the ``-f`` CSV.

The strings come from the tool's own output code: triton-inference-server/perf_analyzer
``src/inference_profiler.cc`` (ReportClientSideStats, ReportServerSideStats,
ReportPrometheusMetrics, the verbose pass lines of ProfileHelper), ``src/perf_analyzer.cc``
(PrerunReport, WriteReport), ``src/concurrency_manager.cc``; the older copies of the same
files in triton-inference-server/client ``src/c++/perf_analyzer/`` with ``report_writer.cc``
(the CSV), and the perf_client of TRTIS (server ``docs/perf_client.rst``). The console::

    *** Measurement Settings ***
      Batch size: 1
      Service Kind: Triton
      Using "time_windows" mode for stabilization
      Measurement window: 5000 msec
      Using synchronous calls for inference
      Stabilizing using average latency

    Request concurrency: 1                       (or "Request Rate: 0.89 inference requests
      Pass [1] throughput: 221.6 infer/sec. Avg latency: 4512 usec (std 1538 usec)   per
      Client:                                     second(s)" with --request-rate-range)
        Request count: 1098
        Throughput: 219.6 infer/sec
        Avg latency: 4553 usec (standard deviation 1593 usec)    (only without --percentile)
        p50 latency: 3912 usec
        ...
        Avg gRPC time: 4550 usec (marshal 12 usec + response wait 4536 usec + unmarshal 2 usec)
      Server:
        Inference count: 1315
        Execution count: 1315
        Successful request count: 1315
        Avg request latency: 4180 usec (overhead 2 usec + queue 30 usec + compute input 3012
          usec + compute infer 1100 usec + compute output 36 usec)

    Inferences/Second vs. Client Average Batch Latency        ("Client p95 Batch Latency")
    Concurrency: 1, throughput: 219.6 infer/sec, latency 4553 usec

Variants read: the client library line as ``Avg gRPC time: T usec ((un)marshal
request/response X usec + response wait Y usec)`` (non-verbose) or ``(marshal a + response
wait b + unmarshal c)`` (verbose), ``Avg HTTP time: T usec (send/recv X usec + response wait
Y usec)`` or ``(send a + response wait b + receive c)``; ``Response Throughput:`` (decoupled
models), ``Avg client overhead: N%``, ``Sequence count: N (X seq/sec)``, ``Avg send request
rate:`` and its "[WARNING] ... N% of the requests were delayed"; the server line of perf_client
and of ensembles, ``(overhead a usec + queue b usec + compute c usec)``, with the response
cache ``(overhead + queue + cache hit/miss)`` then ``Average Cache Hit Latency:`` and
``Average Cache Miss Latency: N usec (cache lookup/insertion a usec + compute input ...)``;
``Composing models:`` followed by ``NAME, version: V`` and that model's server lines;
perf_client's server ``Request count: N``; ``Server Prometheus Metrics:`` (GPU utilisation,
power, memory per GPU UUID); perf_client's summary lines without "throughput:"
(``Concurrency: 1, 160.8 infer/sec, latency 6207 usec``). Lines may carry markdown bullets
(``* Client:``), a line wrapped inside its parenthesis is joined with the next, and the
indentation may be lost (the known field names still belong to the block).

The CSV (``-f perf.csv``, report_writer.cc): ``Concurrency`` or ``Request Rate``,
``Inferences/Second``, [``Response Throughput``], ``Client Send``, [``Network+Server
Send/Recv``, ``Server Queue``, ``Server Compute Input``, ``Server Compute Infer``, ``Server
Compute Output`` (perf_client: one ``Server Compute``), [``Server Cache Hit``, ``Server Cache
Miss``]], ``Client Recv``, ``pNN latency``...; with ``--verbose-csv`` also ``Avg latency``,
``request/response``, ``response wait`` and the GPU columns (``uuid:value;`` per GPU); LLM
runs add ``Avg First Token Latency`` and ``Avg Token-to-Token Latency``. Times in usec; rows
sorted by throughput, not by concurrency (no order is assumed).

Decisions:

- framework "triton", task "inference"; benchmark = ``-m``/``--model-name`` of the latest
  ``perf_analyzer``/``perf_client`` command line above (``\\`` continuations joined), else "".
  params: ``concurrency`` (int) or ``request_rate`` (float), ``batch`` (``Batch size:`` of the
  settings block, else the command's ``-b``/``--batch-size``), ``stat``; a composing model's
  server figures also ``composing_model`` and ``composing_model_version``.
- Metrics (ms, lower is better; throughputs in samples/s): ``throughput`` and
  ``response_throughput`` (no stat); ``latency`` (stat mean / std / pNN); the client library
  ``grpc_time`` / ``http_time`` and its parts ``client_send_time`` (send, marshal; CSV Client
  Send), ``client_recv_time`` (receive, unmarshal; CSV Client Recv), ``client_send_recv_time``
  (send/recv, (un)marshal request/response; CSV request/response), ``response_wait_time``;
  the server's ``server_request_latency`` and its parts ``server_overhead_time``,
  ``server_queue_time``, ``compute_time``, ``compute_input_time``, ``compute_infer_time``,
  ``compute_output_time``, ``cache_hit_miss_time``, ``cache_hit_time`` (Average Cache Hit
  Latency; CSV Server Cache Hit), ``cache_miss_time`` (cache lookup/insertion; CSV Server Cache
  Miss), ``cache_miss_latency`` (Average Cache Miss Latency, which adds the compute time);
  CSV-only ``network_server_send_recv_time``; LLM ``ttft`` and ``itl`` (stat mean). Averages
  have stat "mean".
- stats: the client ``request_count`` (also Measurement.samples), the server's counts,
  ``passes`` (stabilisation windows printed), ``client_overhead_pct``, the settings
  (``calls`` sync/async, ``stabilization``, ``measurement_window_ms``), GPU metrics (``gpu``:
  {uuid: {utilization_pct, power_w, memory_used_mb, memory_total_mb}}). The verbose ``Pass
  [k]`` lines are stabilisation windows, not results: counted, not stored.
- The summary lines after "Inferences/Second vs. Client ..." repeat the blocks' throughput
  and stabilising latency: a summary line is stored only for a concurrency/rate whose block
  was not read since the run began (a command line or settings block starts a run). Its
  latency statistic is the heading's ("Average" = mean, "p95" = p95), else the settings'
  "Stabilizing using ..."; without either, the latency is a Problem (the throughput is kept).
- A block with no Client results (cut, or "Failed to obtain stable measurement"), a value
  without its unit, a breakdown cut inside its parenthesis, a CSV row with the wrong number
  of cells: Problems naming the line. Pass errors and perf_analyzer's [WARNING] lines are
  warnings.

Speed: one ``re.finditer`` per literal-led pattern, merged by position (ingest.parsers.scan);
lines are only walked inside a block, a settings block or a CSV table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ingest.parsers.cells import NUMBER, percentile_stat
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "perf_analyzer"
# Every console report prints "infer/sec" (the Throughput line, the summary lines); every
# CSV header holds "Inferences/Second".
ANCHORS: tuple[str, ...] = ("infer/sec", "Inferences/Second")

FRAMEWORK = "triton"
Severity = Literal["error", "warning"]

_NUM = NUMBER
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("settings", re.compile(r"\*\*\* Measurement Settings \*\*\*")),
    ("conc", re.compile(r"Request concurrency:")),
    ("summary_conc", re.compile(r"Concurrency:")),
    ("rate", re.compile(r"Request Rate:")),
    ("heading", re.compile(r"Inferences/Second vs\. Client")),
    ("csv", re.compile(r"Inferences/Second,")),
    ("command", re.compile(r"perf_(?:analyzer|client)(?![\w.])")),
    ("unstable", re.compile(r"Failed to obtain stable measurement")),
)
# What may stand before a line's content: indentation and markdown bullets / quotes.
_PREFIX = re.compile(r"[ \t]*(?:[*+\-][ \t]+)?")
_HEADER_CONC = re.compile(r"(?:Request concurrency|Concurrency):[ \t]*(?P<n>\d+)[ \t]*$")
_HEADER_RATE = re.compile(
    rf"Request Rate:[ \t]*(?P<n>{_NUM})[ \t]+inference requests per seconds?[ \t]*$"
)
_SUMMARY = re.compile(
    rf"(?P<kind>Concurrency|Request Rate):[ \t]*(?P<n>{_NUM}),[ \t]*(?P<rest>.*)$"
)
_SUMMARY_TP = re.compile(rf"^(?:throughput:[ \t]*)?(?P<num>{_NUM})[ \t]*(?P<unit>infer/sec)?")
_SUMMARY_LAT = re.compile(rf"latency[ \t]*(?P<num>{_NUM})?[ \t]*(?P<unit>[A-Za-z]+)?")
_HEADING = re.compile(
    r"Inferences/Second vs\. Client (?:(?P<avg>Average)|p(?P<pct>\d+(?:\.\d+)?)) Batch Latency"
)
_FIELD = re.compile(r"(?P<key>[A-Za-z\[(][^:]*?):[ \t]*(?P<rest>.*?)[ \t]*$")
_VALUE = re.compile(rf"(?P<num>{_NUM})(?:[ \t]*(?P<unit>usec|infer/sec|%|watts|bytes))?")
_PASS = re.compile(r"Pass \[(?P<k>\d+)\][ \t]*(?P<rest>.*)$")
_PERCENTILE_KEY = re.compile(r"p(?P<pct>\d+(?:\.\d+)?) latency")
_VERSION_LINE = re.compile(r"(?P<name>[^\s,][^,]*), version: (?P<v>\S+)$")
_GPU_LINE = re.compile(rf"(?P<uuid>\S+) : (?P<num>{_NUM})[ \t]*(?P<unit>%|watts|bytes)?$")
_PART = re.compile(rf"(?P<name>[A-Za-z(][A-Za-z()/ \-]*?)[ \t]+(?P<num>{_NUM})[ \t]*(?P<unit>\w+)?")
_STD = re.compile(rf"\((?:standard deviation|std)[ \t]+(?P<num>{_NUM})[ \t]*(?P<unit>\w+)?\)?")
_CUT_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

# Block lines that belong to a block whatever their indentation.
_BLOCK_KEYS = frozenset(
    {
        "client",
        "server",
        "request count",
        "sequence count",
        "throughput",
        "response throughput",
        "avg client overhead",
        "avg latency",
        "avg grpc time",
        "avg http time",
        "avg send request rate",
        "inference count",
        "execution count",
        "successful request count",
        "cache hit count",
        "cache miss count",
        "avg request latency",
        "average cache hit latency",
        "average cache miss latency",
        "composing models",
        "server prometheus metrics",
        "avg gpu utilization",
        "avg gpu power usage",
        "max gpu memory usage",
        "total gpu memory",
    }
)
_COUNTS = {
    "inference count": "inference_count",
    "execution count": "execution_count",
    "successful request count": "successful_request_count",
    "cache hit count": "cache_hit_count",
    "cache miss count": "cache_miss_count",
}
# The parts of a parenthesised breakdown, as the tool names them.
_PARTS = {
    "overhead": "server_overhead_time",
    "queue": "server_queue_time",
    "compute": "compute_time",
    "compute input": "compute_input_time",
    "compute infer": "compute_infer_time",
    "compute output": "compute_output_time",
    "cache hit/miss": "cache_hit_miss_time",
    "cache lookup/insertion": "cache_miss_time",
    "marshal": "client_send_time",
    "unmarshal": "client_recv_time",
    "send": "client_send_time",
    "receive": "client_recv_time",
    "send/recv": "client_send_recv_time",
    "(un)marshal request/response": "client_send_recv_time",
    "response wait": "response_wait_time",
}
# Lines "Key: N usec (parts)" and the metric of their main value.
_TIMED = {
    "avg grpc time": "grpc_time",
    "avg http time": "http_time",
    "avg request latency": "server_request_latency",
    "average cache hit latency": "cache_hit_time",
    "average cache miss latency": "cache_miss_latency",
}
_CSV_COLUMNS: dict[str, tuple[str, str | None]] = {
    "inferences/second": ("throughput", None),
    "response throughput": ("response_throughput", None),
    "client send": ("client_send_time", "mean"),
    "network+server send/recv": ("network_server_send_recv_time", "mean"),
    "server queue": ("server_queue_time", "mean"),
    "server compute": ("compute_time", "mean"),
    "server compute input": ("compute_input_time", "mean"),
    "server compute infer": ("compute_infer_time", "mean"),
    "server compute output": ("compute_output_time", "mean"),
    "server cache hit": ("cache_hit_time", "mean"),
    "server cache miss": ("cache_miss_time", "mean"),
    "client recv": ("client_recv_time", "mean"),
    "avg latency": ("latency", "mean"),
    "request/response": ("client_send_recv_time", "mean"),
    "response wait": ("response_wait_time", "mean"),
    "avg first token latency": ("ttft", "mean"),
    "avg token-to-token latency": ("itl", "mean"),
}
_CSV_GPU = {
    "avg gpu utilization": "utilization",
    "avg gpu power usage": "power_w",
    "max gpu memory usage": "memory_used_mb",
    "total gpu memory": "memory_total_mb",
}
_GPU_SECTIONS = {
    "avg gpu utilization": "utilization_pct",
    "avg gpu power usage": "power_w",
    "max gpu memory usage": "memory_used_mb",
    "total gpu memory": "memory_total_mb",
}
MAX_BLOCK_LINES = 2000  # an ensemble of many composing models; more is not one block
MAX_WRAP_LINES = 3  # a breakdown wrapped over more lines than this is cut


class _Bad(ValueError):
    """A value that cannot be read; its message is the Problem's reason."""


@dataclass
class _Run:
    """What the lines above a block say about it."""

    model: str = ""
    batch: int | None = None
    command_batch: int | None = None  # the -b of the command line that began this run
    fresh_command: bool = False  # a command line above, no settings block since
    stabilizing: str | None = None  # the stat of the stabilising latency
    settings: dict[str, Any] = field(default_factory=dict)
    summary_stat: str | None = None
    seen: set[tuple[str, ParamValue]] = field(default_factory=set)


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every perf_analyzer block, summary line and CSV row, with Problems."""
    text = doc.text
    run = _Run()
    consumed = -1
    for pos, kind, _ in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        start, end = doc.line_bounds(pos)
        line = text[start:end]
        prefix = _PREFIX.match(line)
        at_start = prefix is not None and prefix.end() == pos - start
        if kind == "command":
            consumed = max(consumed, _read_command(doc, run, pos, end))
        elif kind == "settings":
            run.batch = run.command_batch if run.fresh_command else None
            run.fresh_command, run.stabilizing, run.settings = False, None, {}
            run.seen, run.summary_stat = set(), None
            consumed = _read_settings(doc, run, end)
        elif kind == "heading":
            h = _HEADING.search(line)
            if h is not None:
                run.summary_stat = "mean" if h["avg"] else percentile_stat(float(h["pct"]))
        elif kind == "csv":
            if _csv_header(line):
                items, consumed = _read_csv(doc, run, start, end)
                yield from items
        elif kind == "unstable":
            yield _problem(doc.line_at(start), _strip(line), line, "warning")
        elif at_start:
            content = line[pos - start :].rstrip()
            header = _HEADER_CONC.match(content) or (
                _HEADER_RATE.match(content) if kind == "rate" else None
            )
            if header is not None and (kind != "summary_conc" or _starts_block(doc, end)):
                key: tuple[str, ParamValue] = (
                    ("request_rate", _rate(header["n"]))
                    if kind == "rate"
                    else ("concurrency", int(header["n"]))
                )
                run.summary_stat = None
                items, consumed = _read_block(
                    doc, run, key, start, end, len(line) - len(line.lstrip())
                )
                yield from items
            elif kind != "conc":
                summary = _SUMMARY.match(content)
                if summary is not None:
                    yield from _read_summary(doc, run, summary, start, line)


# -- context ---------------------------------------------------------------------------


def _logical_line(doc: DocText, start: int, end: int) -> tuple[str, int]:
    """A command line with its "\\" continuations joined, and where it ends."""
    text = doc.text
    line = text[start:end]
    while line.rstrip().endswith("\\") and end < len(text):
        next_end = text.find("\n", end + 1)
        next_end = len(text) if next_end < 0 else next_end
        line = line.rstrip()[:-1] + " " + text[end + 1 : next_end].strip()
        end = next_end
    return line, end


def _read_command(doc: DocText, run: _Run, pos: int, end: int) -> int:
    line, last = _logical_line(doc, pos, end)
    tokens = line.split()[1:]
    if not any(t.startswith("-") for t in tokens):
        return -1  # "the `perf_analyzer` CLI": prose, not a command
    flags: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("`'\"")
        if token.startswith("-"):
            name, eq, value = token.lstrip("-").partition("=")
            if not eq and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                value = tokens[i + 1].strip("`'\"")
                i += 1
            flags.setdefault(name, value)
        i += 1
    model = flags.get("m") or flags.get("model-name") or ""
    batch = flags.get("b") or flags.get("batch-size") or ""
    # "-m ${MODEL}" names no model; a path is tidied to its last part.
    run.model = re.split(r"[/\\]", model)[-1] if model and "$" not in model else ""
    run.batch = run.command_batch = int(batch) if batch.isdigit() else None
    run.fresh_command = True
    run.stabilizing, run.settings, run.summary_stat = None, {}, None
    run.seen = set()
    return last


def _read_settings(doc: DocText, run: _Run, end: int) -> int:
    """The indented lines under "*** Measurement Settings ***"; where they end."""
    text = doc.text
    consumed = end
    for _, line_start, line in doc.lines_from(min(end + 1, len(text))):
        content = _strip(line)
        if not content or line_start <= end:
            break
        consumed = line_start + len(line)
        low = content.lower()
        if low.startswith("batch size:"):
            value = content.split(":", 1)[1].strip()
            run.batch = int(value) if value.isdigit() else run.batch
        elif low.startswith("using asynchronous calls"):
            run.settings["calls"] = "async"
        elif low.startswith("using synchronous calls"):
            run.settings["calls"] = "sync"
        elif low.startswith("stabilizing using "):
            what = content[len("stabilizing using ") :]
            run.settings["stabilization"] = what
            m = re.match(r"p(\d+(?:\.\d+)?)", what)
            run.stabilizing = percentile_stat(float(m[1])) if m else "mean"
        elif low.startswith("measurement window:"):
            m = re.search(r"(\d+)\s*msec", content)
            if m:
                run.settings["measurement_window_ms"] = int(m[1])
        elif low.startswith("service kind:"):
            run.settings["service_kind"] = content.split(":", 1)[1].strip()
    return consumed


# -- the console block -----------------------------------------------------------------


@dataclass
class _Block:
    key: tuple[str, ParamValue]
    run: _Run
    items: list[Item] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    section: str = ""  # "client", "server", "metrics"
    composing: tuple[str, str] | None = None
    gpu_section: str = ""
    has_client: bool = False


def _starts_block(doc: DocText, end: int) -> bool:
    """ "Concurrency: 1" alone on its line heads a block when a block line follows."""
    following = _strip(doc.line_text(end + 1)) if end < len(doc.text) else ""
    key = following.split(":", 1)[0].lower()
    return key in _BLOCK_KEYS or following.startswith("Pass [")


def _read_block(
    doc: DocText, run: _Run, key: tuple[str, ParamValue], start: int, end: int, indent: int
) -> tuple[list[Item], int]:
    text = doc.text
    header_line = doc.line_at(start)
    block = _Block(key, run)
    consumed = end
    pending: tuple[int, str] | None = None  # a line whose parenthesis is still open
    wrapped = 0
    lines = doc.lines_from(end + 1) if end < len(text) else iter(())
    for count, (number, line_start, line) in enumerate(lines):
        if count > MAX_BLOCK_LINES or line_start <= end:
            break
        content = _strip(line)
        if pending is not None:
            if content and wrapped < MAX_WRAP_LINES and not _is_block_line(content):
                pending = (pending[0], pending[1] + " " + content)
                wrapped += 1
                consumed = line_start + len(line)
                if ")" in content:
                    _read_line(block, pending[1], pending[0])
                    pending = None
                continue
            _read_line(block, pending[1], pending[0])
            pending = None
        if not content:
            continue
        own_indent = len(line) - len(line.lstrip())
        if _HEADER_CONC.match(content) or _HEADER_RATE.match(content):
            break
        if content.startswith("*** Measurement") or content.startswith("Inferences/Second"):
            break
        if own_indent <= indent and not _is_block_line(content):
            break
        consumed = line_start + len(line)
        if "(" in content and ")" not in content and _FIELD.match(content):
            pending, wrapped = (number, content), 0
            continue
        _read_line(block, content, number)
    if pending is not None:
        _read_line(block, pending[1], pending[0])
    if not block.has_client:
        reason = f"{_key_text(key)}: no Client results (block cut or not stable)"
        failed = text.find("Failed to obtain stable measurement", consumed, consumed + 400)
        if failed >= 0:
            reason = f"{_key_text(key)}: perf_analyzer failed to obtain a stable measurement"
            consumed = doc.line_bounds(failed)[1]  # said here: not again as a warning
        block.items.append(_problem(header_line, reason, doc.line_text(start)))
    else:
        run.seen.add(key)
    _finish_block(block)
    block.items.sort(key=lambda item: item.line)
    return block.items, consumed


def _is_block_line(content: str) -> bool:
    key = content.split(":", 1)[0].strip().lower()
    return (
        key in _BLOCK_KEYS
        or bool(_PERCENTILE_KEY.fullmatch(key))
        or content.startswith("Pass [")
        or bool(_VERSION_LINE.match(content))
        or content.startswith("[WARNING] Perf Analyzer")
    )


def _read_line(block: _Block, content: str, number: int) -> None:
    try:
        _read_field(block, content, number)
    except _Bad as bad:
        block.items.append(_problem(number, str(bad), content))


def _read_field(block: _Block, content: str, number: int) -> None:
    if content.startswith("Pass ["):
        m = _PASS.match(content)
        block.stats["passes"] = block.stats.get("passes", 0) + 1
        if m and "cb::Error" in m["rest"]:
            block.items.append(
                _problem(number, f"pass {m['k']} failed: {m['rest']}", content, "warning")
            )
        return
    if content.startswith("[WARNING]"):
        block.items.append(_problem(number, content, content, "warning"))
        m = re.search(rf"({_NUM})% of the requests were delayed", content)
        if m:
            block.stats["delayed_pct"] = float(m[1])
        return
    version = _VERSION_LINE.match(content)
    if version and block.section in ("server", "composing"):
        block.composing = (version["name"].strip(), version["v"])
        block.section = "composing"
        return
    if block.gpu_section:
        gpu = _GPU_LINE.match(content)
        if gpu:
            _gpu_value(block, block.gpu_section, gpu["uuid"], gpu["num"], gpu["unit"] or "")
            return
    m = _FIELD.match(content)
    if m is None:
        if "usec" in content or "infer/sec" in content:
            raise _Bad(f"block line {content!r} cannot be read")
        return
    key, rest = m["key"].strip().lower(), m["rest"]
    block.gpu_section = ""
    if key in ("client", "server"):
        block.section, block.composing = key, None
        block.has_client = block.has_client or key == "client"
        return
    if key == "composing models":
        block.section = "composing"
        return
    if key == "server prometheus metrics":
        block.section = "metrics"
        return
    if key in _GPU_SECTIONS:
        block.gpu_section = _GPU_SECTIONS[key]
        return
    if key == "request count":
        count = _count(rest, content)
        if block.section == "client" or not block.section:
            block.has_client = True
            block.stats["request_count"] = count
        else:
            _server_count(block, "request_count", count)
        return
    if key in _COUNTS:
        _server_count(block, _COUNTS[key], _count(rest, content))
        return
    if key == "sequence count":
        block.stats["sequence_count"] = _count(rest.split("(")[0], content)
        return
    if key == "avg client overhead":
        block.stats["client_overhead_pct"] = _number(rest.rstrip("%").strip(), content)
        return
    if key == "avg send request rate":
        block.stats["send_request_rate"] = _number(rest.split()[0] if rest else "", content)
        return
    if key in ("throughput", "response throughput"):
        block.has_client = True
        metric = "throughput" if key == "throughput" else "response_throughput"
        num, unit = _value(rest, "infer/sec", content)
        _add(block, metric, None, num, unit, number, content)
        return
    if key == "avg latency":
        block.has_client = True
        num, unit = _value(rest, "usec", content)
        _add(block, "latency", "mean", num, unit, number, content)
        std = _STD.search(rest)
        if std is not None:
            if not std["unit"] or not std.group(0).endswith(")"):
                raise _Bad(f"latency standard deviation {std['num']!r} cut (no unit)")
            _add(block, "latency", "std", std["num"], std["unit"], number, content)
        elif "(" in rest:
            raise _Bad("latency standard deviation cut or unreadable")
        return
    pct = _PERCENTILE_KEY.fullmatch(key)
    if pct is not None:
        block.has_client = True
        num, unit = _value(rest, "usec", content)
        _add(block, "latency", percentile_stat(float(pct["pct"])), num, unit, number, content)
        return
    if key in _TIMED:
        num, unit = _value(rest, "usec", content)
        _add(block, _TIMED[key], "mean", num, unit, number, content)
        _read_parts(block, rest, number, content)
        return
    if "usec" in rest or "infer/sec" in rest:
        raise _Bad(f"unknown perf_analyzer field {m['key'].strip()!r}")


def _read_parts(block: _Block, rest: str, number: int, content: str) -> None:
    """ "(overhead 2 usec + queue 30 usec + ...)": one measurement per part."""
    open_at = rest.find("(")
    if open_at < 0:
        return
    inner = rest[open_at + 1 :]
    closed = inner.rstrip().endswith(")")
    inner = inner.rstrip().rstrip(")")
    parts = [p.strip() for p in inner.split("+")]
    for index, part in enumerate(parts):
        m = _PART.fullmatch(part)
        last = index == len(parts) - 1
        if m is None or (not m["unit"] and not closed and last):
            if last and not closed:
                block.items.append(_problem(number, f"breakdown cut at {part!r}", content))
                return
            block.items.append(_problem(number, f"breakdown part {part!r} cannot be read", content))
            continue
        name = " ".join(m["name"].split()).lower()
        metric = _PARTS.get(name)
        if metric is None:
            block.items.append(_problem(number, f"breakdown part {name!r} is unknown", content))
            continue
        if not m["unit"]:
            block.items.append(_problem(number, f"breakdown part {name!r} has no unit", content))
            continue
        try:
            _add(block, metric, "mean", m["num"], m["unit"], number, content)
        except _Bad as bad:
            block.items.append(_problem(number, str(bad), content))
    if not closed:
        block.items.append(_problem(number, "breakdown cut (no closing parenthesis)", content))


def _server_count(block: _Block, name: str, count: int) -> None:
    """A server count: the model's own in stats, a composing model's under its name."""
    if block.composing is None:
        block.stats[f"server_{name}"] = count
        return
    composing = block.stats.setdefault("composing_models", {})
    composing.setdefault(block.composing[0], {})[name] = count


def _gpu_value(block: _Block, section: str, uuid: str, num: str, unit: str) -> None:
    """One "GPU-uuid : 50%" line of the Prometheus metrics (bytes become MB)."""
    value = float(num) / 2**20 if unit == "bytes" else float(num)
    block.stats.setdefault("gpu", {}).setdefault(uuid, {})[section] = value


def _add(
    block: _Block, metric: str, stat: str | None, num: str, unit: str, number: int, raw: str
) -> None:
    params: dict[str, ParamValue] = {}
    if block.composing is not None and block.section == "composing":
        params["composing_model"] = block.composing[0]
        params["composing_model_version"] = block.composing[1]
    if stat:
        params["stat"] = stat
    block.items.append(_measurement(metric, params, num, unit, number, raw))


def _finish_block(block: _Block) -> None:
    run = block.run
    stats = {**block.stats, **run.settings}
    for item in block.items:
        if isinstance(item, Measurement):
            _apply(item, run, block.key)
            item.stats = dict(stats)
            item.samples = block.stats.get("request_count")


# -- summary lines ---------------------------------------------------------------------


def _read_summary(
    doc: DocText, run: _Run, m: re.Match[str], start: int, line: str
) -> Iterator[Item]:
    number = doc.line_at(start)
    try:
        key: tuple[str, ParamValue] = (
            ("concurrency", int(m["n"]))
            if m["kind"] == "Concurrency"
            else ("request_rate", _rate(m["n"]))
        )
    except ValueError:
        return
    rest = m["rest"]
    tp = _SUMMARY_TP.match(rest)
    if tp is None or "infer/sec" not in rest:
        return  # not the summary line ("Concurrency: 4, max 8")
    if key in run.seen:
        return  # its block was read: the same figures
    items: list[Item] = []
    stats = {"source": "summary", **run.settings}
    try:
        if not tp["unit"]:
            raise _Bad("summary throughput has no unit (cut?)")
        items.append(_measurement("throughput", {}, tp["num"], tp["unit"], number, line.strip()))
    except _Bad as bad:
        items.append(_problem(number, str(bad), line))
    lat = _SUMMARY_LAT.search(rest, tp.end())
    stat = run.summary_stat or run.stabilizing
    if lat is None:
        items.append(_problem(number, "summary line cut before its latency", line))
    elif not lat["num"] or not lat["unit"]:
        items.append(_problem(number, "summary latency cut (no value or unit)", line))
    elif stat is None:
        items.append(
            _problem(
                number,
                "summary latency: no heading or settings say which statistic it is",
                line,
            )
        )
    else:
        try:
            items.append(
                _measurement(
                    "latency", {"stat": stat}, lat["num"], lat["unit"], number, line.strip()
                )
            )
        except _Bad as bad:
            items.append(_problem(number, str(bad), line))
    for item in items:
        if isinstance(item, Measurement):
            _apply(item, run, key)
            item.stats = dict(stats)
    yield from items


# -- CSV -------------------------------------------------------------------------------


def _csv_header(line: str) -> list[str] | None:
    content = line.strip()
    if not (content.startswith("Concurrency,") or content.startswith("Request Rate,")):
        return None
    return [cell.strip() for cell in content.split(",")]


def _read_csv(doc: DocText, run: _Run, start: int, end: int) -> tuple[list[Item], int]:
    text = doc.text
    header = _csv_header(text[start:end]) or []
    header_line = doc.line_at(start)
    key_name = "concurrency" if header[0] == "Concurrency" else "request_rate"
    items: list[Item] = []
    columns: list[tuple[int, str, str | None, str]] = []  # index, metric, stat, unit
    gpu_columns: list[tuple[int, str]] = []
    for index, name in enumerate(header[1:], 1):
        low = " ".join(name.lower().split())
        pct = _PERCENTILE_KEY.fullmatch(low)
        if pct is not None:
            columns.append((index, "latency", percentile_stat(float(pct["pct"])), "usec"))
        elif low in _CSV_COLUMNS:
            metric, stat = _CSV_COLUMNS[low]
            unit = "infer/sec" if stat is None else "usec"
            columns.append((index, metric, stat, unit))
        elif low in _CSV_GPU:
            gpu_columns.append((index, _CSV_GPU[low]))
        else:
            items.append(
                _problem(
                    header_line,
                    f"CSV column {name!r} is unknown: left out",
                    text[start:end],
                    "warning",
                )
            )
    consumed = end
    rows = 0
    if end < len(text):
        for number, line_start, line in doc.lines_from(end + 1):
            if line_start <= end:
                break
            content = line.strip()
            if not content or not content[0].isdigit():
                break
            consumed = line_start + len(line)
            rows += 1
            cells = [cell.strip() for cell in content.split(",")]
            if len(cells) != len(header):
                items.append(
                    _problem(
                        number,
                        f"CSV row has {len(cells)} cells, the header {len(header)} (cut?)",
                        line,
                    )
                )
                continue
            try:
                value: ParamValue = int(cells[0]) if key_name == "concurrency" else _rate(cells[0])
            except ValueError:
                items.append(_problem(number, f"CSV row key {cells[0]!r} is not a number", line))
                continue
            stats: dict[str, Any] = {"source": "csv"}
            for index, what in gpu_columns:
                for entry in filter(None, cells[index].split(";")):
                    uuid, _, num = entry.rpartition(":")
                    try:
                        number_value = float(num)
                    except ValueError:
                        continue
                    if what == "utilization":
                        number_value *= 100.0
                        what_key = "utilization_pct"
                    else:
                        what_key = what
                        if what.startswith("memory"):
                            number_value /= 2**20
                    stats.setdefault("gpu", {}).setdefault(uuid, {})[what_key] = number_value
            for index, metric, stat, unit in columns:
                params: dict[str, ParamValue] = {"stat": stat} if stat else {}
                try:
                    m = _measurement(metric, params, cells[index], unit, number, line)
                except _Bad as bad:
                    items.append(_problem(number, f"{header[index]}: {bad}", line))
                    continue
                _apply(m, run, (key_name, value))
                m.stats = dict(stats)
                items.append(m)
    if not rows:
        items.append(
            _problem(header_line, "perf_analyzer CSV header without rows (cut?)", text[start:end])
        )
    return items, consumed


# -- values ----------------------------------------------------------------------------


def _strip(line: str) -> str:
    m = _PREFIX.match(line)
    return line[m.end() if m else 0 :].strip()


def _rate(text: str) -> float:
    return float(text)


def _key_text(key: tuple[str, ParamValue]) -> str:
    return f"{'concurrency' if key[0] == 'concurrency' else 'request rate'} {key[1]}"


def _count(text: str, raw: str) -> int:
    value = text.strip()
    if not value.isdigit():
        raise _Bad(f"count {value!r} is not a whole number (cut?)")
    return int(value)


def _number(text: str, raw: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _Bad(f"{text!r} is not a number") from None


def _value(rest: str, expected: str, raw: str) -> tuple[str, str]:
    m = _VALUE.match(rest)
    if m is None:
        raise _Bad(f"no value in {raw!r} (cut?)")
    if not m["unit"]:
        raise _Bad(f"value {m['num']!r} has no unit (cut?)")
    if m["unit"] != expected:
        raise _Bad(f"value in {m['unit']!r}, not {expected!r}")
    return m["num"], m["unit"]


def _measurement(
    metric: str, params: dict[str, ParamValue], num: str, unit: str, number: int, raw: str
) -> Measurement:
    if not _CUT_NUMBER.fullmatch(num.strip()):
        raise _Bad(f"{metric}: {num!r} is not a plain number")
    try:
        q = normalise(float(num), unit)
    except (UnitError, ValueError) as e:
        raise _Bad(f"{metric}: {e}") from None
    expected = "throughput" if metric.endswith("throughput") else "time"
    if q.kind != expected:
        raise _Bad(f"{metric}: {unit!r} is no {expected}")
    return Measurement(
        benchmark="",
        metric=metric,
        value=q.value,
        unit=q.unit,
        direction=q.direction,  # type: ignore[arg-type]
        framework=FRAMEWORK,
        params=dict(params),
        line=number,
        raw=raw.strip(),
    )


def _apply(m: Measurement, run: _Run, key: tuple[str, ParamValue]) -> None:
    params: dict[str, ParamValue] = {key[0]: key[1]}
    if run.batch is not None:
        params["batch"] = run.batch
    m.params = {**params, **m.params}
    m.benchmark = run.model


def _problem(line: int, reason: str, raw: str, severity: Severity = "error") -> Problem:
    return Problem(line, reason, raw.strip(), NAME, severity)
