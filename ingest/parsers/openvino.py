"""OpenVINO ``benchmark_app`` console output (C++ and Python), 2020 to today, wherever pasted.

Format strings from openvinotoolkit/openvino ``samples/cpp/benchmark_app/main.cpp`` with
``samples/cpp/common/utils/src/latency_metrics.cpp`` (``LatencyMetrics::write_to_slog``), and
``tools/benchmark_tool/openvino/tools/benchmark/main.py``. The report of a run, its lines
prefixed ``[ INFO ] `` from 2022 on:

- 2022.1 on: ``Count: 6640 iterations``, ``Duration: 60039.70 ms``, a ``Latency:`` header and
  one statistic a line, ``Median:`` (or ``90 percentile:`` with ``-latency_percentile 90``),
  ``Average:`` (``Avg:``/``AVG:`` in 2022.1 and 2022.2), ``Min:``, ``Max:``, in ``ms`` (``us``
  or ``µs`` below 1 ms in the newest C++); with ``-pcseq`` ``Latency for each data shape
  group:`` and per group ``1. data : [1, 3, 224, 224]`` (C++; Python ``1. input: {1, 3,
  16, 224, 224}``; one C++ version ``Data shape: ...`` inside the group) over its own four
  statistics; then ``Throughput: 110.59 FPS``. With a MULTI device there is no latency;
- 2020 to 2021.4, printed without a prefix: ``Count: 181728 iterations``, ``Duration:
  60001.53 ms``, ``Latency: 1.25 ms`` (the median of the requests' latencies, or the
  ``-latency_percentile`` asked for), ``Throughput: 3028.72 FPS``;
- the context before it: the command (``[ INFO ] Input command: .../benchmark_app -m ...``
  or a shell line ``benchmark_app -m model.xml -d GPU``), ``Build ........ 2022.3.0-7750-...``
  (the first after ``OpenVINO:``/``InferenceEngine:``), ``Model batch size: 1``, the Step 8
  properties (``NUM_STREAMS: 4``, ``OPTIMAL_NUMBER_OF_INFER_REQUESTS: 4``,
  ``INFERENCE_PRECISION_HINT: f32`` / ``<Type: 'float32'>``, ``PERFORMANCE_HINT: LATENCY`` /
  ``PerformanceMode.LATENCY``), ``[Step 10/11] Measuring performance (Start inference
  asynchronously, 4 inference requests using 4 streams for CPU, limits: 60000 ms duration)``,
  ``BENCHMARK IS IN INFERENCE ONLY MODE`` / ``Benchmarking in full mode ...``, ``First
  inference took 26.26 ms``, ``Execution Devices: CPU`` / ``Execution Devices:['CPU']``.

Decisions:

- framework "openvino", task "inference". Metric "latency" with stat "median" (also the
  one-line legacy latency, unless the command asks for another percentile: "p90"), "mean",
  "min", "max", "pN"; "throughput" in samples/s (FPS: frames, that is inferences times the
  batch); "first_inference_time". A shape group's latencies carry ``params["shape"]``, the
  group as printed with spaces dropped and braces as brackets (``data:[1,3,224,224]``, the
  C++ and Python spellings of one shape alike); the run's overall latency has none.
- benchmark: the basename of ``-m`` (``--path_to_model``), else of a model path printed
  under ``Loading model files``/``Loading network files``. device: ``-d`` as given, else the
  devices of the Step 10 streams, else ``Execution Devices`` (then kept in
  ``testbed["execution_devices"]`` too). params: ``api`` (``async``/``sync``), ``nireq``,
  ``nstreams`` (Step 10, else ``-nireq``/``-nstreams``, else the Step 8 properties; with
  several devices ``"CPU:4,GPU:2"``), ``batch_size`` (the last non-zero ``Model batch size``,
  else ``-b``), ``precision`` (``INFERENCE_PRECISION_HINT`` or ``-infer_precision``: f32 ->
  fp32, f16 -> fp16, bf16, i8 -> int8), ``hint`` (latency/throughput/...), ``mode``
  (``inference_only``/``full``). testbed ``openvino``: the build. stats: ``iterations`` (also
  ``samples``), ``duration_ms``.
- A run's context is what came since the previous report (or since ``[Step 1/11]``): each
  report takes the settings printed before it and no later report inherits them.
- A report counts when it has a ``Count: N iterations`` line, ``[ INFO ]``-prefixed lines, or
  follows a Step line or a benchmark_app command: another tool's ``Throughput: 89 FPS`` alone
  is not OpenVINO's.
- Problems: a value that is no number or has no unit (cut), a unit that is not a time (a
  throughput not in FPS), a ``Latency:`` header or a shape group with no statistic after it.

Speed: one ``re.finditer`` per literal entry point, merged in document order; only the lines
of a report found are walked.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.parsers.cells import NUMBER, percentile_stat
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "openvino"
# Every report ends with "Throughput: N FPS" (none with MULTI but the throughput); pasted
# without it, the Step lines or the group header remain.
ANCHORS: tuple[str, ...] = ("FPS", "Dumping statistics report", "Latency for each data shape")

FRAMEWORK = "openvino"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("step", re.compile(r"\[Step \d+/\d+\]")),
    ("cmd", re.compile(r"benchmark_app")),
    ("count", re.compile(r"Count:")),
    ("duration", re.compile(r"Duration:")),
    ("latency", re.compile(r"Latency")),
    ("throughput", re.compile(r"Throughput:")),
    ("first", re.compile(r"First inference took ")),
    ("build", re.compile(r"Build \.")),
    ("prop", re.compile(r"INFERENCE_PRECISION_HINT:")),
    ("prop", re.compile(r"PERFORMANCE_HINT:")),
    ("prop", re.compile(r"NUM_STREAMS:")),
    ("prop", re.compile(r"OPTIMAL_NUMBER_OF_INFER_REQUESTS:")),
    ("batch", re.compile(r"Model batch size:")),
    ("exec", re.compile(r"Execution Devices")),
    ("mode", re.compile(r"BENCHMARK IS IN ")),
    ("mode", re.compile(r"Benchmarking in ")),
    ("load", re.compile(r"Loading (?:model|network) files")),
)

_PREFIX = re.compile(r"^[ \t>`*]*(?P<info>\[ ?(?:INFO|WARNING|ERROR|DEBUG) ?\][ \t]*)?")
_STAT = re.compile(
    r"(?P<name>median|average|avg|mean|min|max|(?P<pct>\d+(?:\.\d+)?)[ \t]*percentile)"
    r"[ \t]*:[ \t]*(?P<value>[^\n]*?)[ \t`]*$",
    re.I,
)
_STAT_NAMES = {"median": "median", "average": "mean", "avg": "mean", "mean": "mean"}
_STAT_NAMES |= {"min": "min", "max": "max"}
_VALUE = re.compile(rf"(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-zµμ/]+)?")
_GROUP = re.compile(r"(?P<n>\d+)\.[ \t]*(?P<shape>\S[^\n]*?)[ \t]*$")
_DATA_SHAPE = re.compile(r"Data shape:[ \t]*(?P<shape>\S[^\n]*?)[ \t]*$")
_COUNT = re.compile(r"Count:[ \t]*(?P<n>\d+)[ \t]+iterations")
_DURATION = re.compile(rf"Duration:[ \t]*(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-zµμ]+)?[ \t]*$")
_THROUGHPUT = re.compile(r"Throughput:[ \t]*(?P<value>[^\n]*?)[ \t`]*$")
_ONE_LINE = re.compile(r"Latency:[ \t]*(?P<value>\S[^\n]*?)[ \t`]*$")
_FIRST = re.compile(rf"First inference took[ \t]*(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-zµμ]+)")
_BUILD = re.compile(r"Build \.+[ \t]*(?P<v>\S+)")
_PROP = re.compile(r"(?P<key>[A-Z_]+):[ \t]*(?P<v>\S[^\n]*?)[ \t]*$")
_BATCH = re.compile(r"Model batch size:[ \t]*(?P<n>\d+)")
_EXEC = re.compile(r"Execution Devices:?[ \t]*(?P<v>\S[^\n]*?)[ \t]*$")
_STEP10 = re.compile(
    r"Start inference (?P<api>a?synchronously)(?:, (?P<nireq>\d+) inference requests?)?"
    r"(?: using (?P<streams>.*?))?, limits:"
)
_STREAMS = re.compile(r"(?P<n>\d+) streams? for (?P<dev>[\w.()]+)")
_PROGRAM = re.compile(r"[^\s\"'`]*benchmark_app(?:\.py|\.exe)?[\"']?(?=[ \t]+-)")
_LEADERS = {"python", "python3", "py", "sudo", "time", "numactl", "taskset", "nohup"}
_MODEL_EXT = (".xml", ".onnx", ".pdmodel", ".pb", ".tflite", ".blob", ".bin")

# A report's statistic lines follow their header; more than this is not a report.
_MAX_GROUP_LINES = 400
_PRECISIONS = {"f32": "fp32", "float32": "fp32", "fp32": "fp32", "f16": "fp16"}
_PRECISIONS |= {"float16": "fp16", "fp16": "fp16", "bf16": "bf16", "bfloat16": "bf16"}
_PRECISIONS |= {"i8": "int8", "int8": "int8", "u8": "int8"}


@dataclass(slots=True)
class _Context:
    """What was printed since the previous report."""

    strong: bool = False  # a Step line or a benchmark_app command was seen
    benchmark: str = ""
    device: str = ""
    flags: dict[str, str] = field(default_factory=dict)
    step10: dict[str, ParamValue] = field(default_factory=dict)
    step10_devices: str = ""
    props: dict[str, str] = field(default_factory=dict)
    batch: int | None = None
    mode: str = ""
    build: str = ""
    execution_devices: str = ""
    loaded_model: str = ""
    first_inference: tuple[float, str, int, str] | None = None  # value ms, unit, line, raw


@dataclass(slots=True)
class _Value:
    metric: str
    stat: str
    value: float
    unit: str
    direction: str
    line: int
    raw: str
    shape: str = ""


@dataclass(slots=True)
class _Report:
    line: int
    prefixed: bool = False
    counted: bool = False
    values: list[_Value] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    done: bool = False  # its throughput was read


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every benchmark_app report in the document, and Problems."""
    text = doc.text
    ctx = _Context()
    report: _Report | None = None
    items: list[Item] = []
    resume = 0

    def close() -> None:
        nonlocal report, ctx
        if report is not None:
            if report.values or report.problems:
                items.extend(_finish(report, ctx))
            if report.values:
                ctx = _Context()
        report = None

    def current(line: int, prefixed: bool) -> _Report:
        nonlocal report
        if report is None or report.done:
            close()
            report = _Report(line)
        report.prefixed = report.prefixed or prefixed
        return report

    for pos, kind, _ in hits(text, _PATTERNS):
        if pos < resume:
            continue
        start, end = doc.line_bounds(pos)
        line = text[start:end]
        prefix = _PREFIX.match(line)
        content = line[prefix.end() :] if prefix else line  # type: ignore[union-attr]
        prefixed = bool(prefix and prefix.group("info"))
        number = doc.line_at(start)
        if kind == "step":
            if content.startswith("[Step 1/"):
                close()
                ctx = _Context()
            ctx.strong = True
            m = _STEP10.search(line)
            if m:
                _read_step10(ctx, m)
        elif kind == "cmd":
            flags = _read_command(line)
            if flags is not None:
                if report is not None and report.done:
                    close()
                ctx.strong = True
                ctx.flags = flags
        elif kind == "count":
            m = _COUNT.match(content)
            if m is None:
                if content.startswith("Count:") and (prefixed or report is not None):
                    r = current(number, prefixed)
                    _problem(r, number, "Count value cannot be read (cut?)", line)
                continue
            if report is not None and (report.counted or report.done):
                close()
            r = current(number, prefixed)
            r.counted = True
            r.stats["iterations"] = int(m.group("n"))
        elif kind == "duration":
            m = _DURATION.match(content)
            if report is None or report.done or not report.counted:
                continue
            if m is None or not m.group("unit"):
                if content.startswith("Duration:"):
                    _problem(report, number, "Duration value cannot be read (cut?)", line)
                continue
            try:
                q = normalise(float(m.group("num")), m.group("unit"))
            except UnitError as e:
                _problem(report, number, f"Duration: {e}", line)
                continue
            report.stats["duration_ms"] = q.value
        elif kind == "latency":
            if content.strip().strip("`") == "Latency:":
                r = current(number, prefixed)
                resume = _read_stats(doc, r, end + 1, number, line)
            elif content.startswith("Latency for each data shape group"):
                r = current(number, prefixed)
                resume = _read_groups(doc, r, end + 1, number, line)
            elif content.startswith("Latency:"):
                m = _ONE_LINE.match(content)
                if m is None:
                    continue
                # The one-line legacy report's latency: only where a report is read.
                if not (prefixed or ctx.strong or (report is not None and report.counted)):
                    continue
                r = current(number, prefixed)
                stat = _legacy_stat(ctx)
                _add_value(r, "latency", stat, m.group("value"), number, line, "Latency")
        elif kind == "throughput":
            if not content.startswith("Throughput:"):
                continue
            m = _THROUGHPUT.match(content)
            value = m.group("value") if m else ""
            v = _VALUE.fullmatch(value.strip())
            if v is None or (v.group("unit") or "").lower() != "fps":
                pending = report is not None and not report.done and report.values
                if pending or (report is not None and report.counted):
                    _problem(  # type: ignore[arg-type]
                        report, number, f"Throughput {value!r} is not a number of FPS", line
                    )
                continue
            if not (prefixed or ctx.strong or (report is not None and not report.done)):
                continue  # another tool's "Throughput: 89 FPS"
            r = current(number, prefixed)
            _add_value(r, "throughput", "", value, number, line, "Throughput")
            r.done = True
            close()
        elif kind == "first":
            m = _FIRST.search(content)
            if m:
                try:
                    q = normalise(float(m.group("num")), m.group("unit"))
                except UnitError:
                    continue
                if q.kind == "time":
                    ctx.first_inference = (q.value, q.unit, number, line)
        elif kind == "build":
            m = _BUILD.search(content)
            if m and not ctx.build:
                ctx.build = m.group("v")
        elif kind == "prop":
            m = _PROP.match(content.strip())
            if m:
                ctx.props[m.group("key")] = m.group("v")
        elif kind == "batch":
            m = _BATCH.search(content)
            if m and int(m.group("n")) > 0:
                ctx.batch = int(m.group("n"))
        elif kind == "exec":
            m = _EXEC.match(content)
            if m:
                ctx.execution_devices = m.group("v").strip("[]'\" ").replace("', '", ",")
        elif kind == "mode":
            low = content.lower()
            if "inference only" in low:
                ctx.mode = "inference_only"
            elif "full mode" in low:
                ctx.mode = "full"
        elif kind == "load":
            _read_loaded_model(doc, ctx, end + 1)
    close()
    items.sort(key=lambda item: item.line)
    yield from items


def _problem(report: _Report, line: int, reason: str, raw: str) -> None:
    report.problems.append(Problem(line, reason, raw, NAME))


def _legacy_stat(ctx: _Context) -> str:
    percentile = ctx.flags.get("latency_percentile", "")
    try:
        pct = float(percentile) if percentile else 50.0
        return "median" if pct == 50 else percentile_stat(pct)
    except ValueError:
        return "median"


def _content(line: str) -> tuple[str, bool]:
    m = _PREFIX.match(line)
    if m is None:
        return line, False
    return line[m.end() :], bool(m.group("info"))


def _read_stats(doc: DocText, report: _Report, pos: int, head_line: int, head: str) -> int:
    """The statistic lines after a "Latency:" header; the offset after the last."""
    text = doc.text
    found = 0
    start = pos
    line_no = head_line
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        content, _ = _content(line)
        m = _STAT.match(content.strip())
        if m is None:
            break
        line_no += 1
        stat = _stat_name(m)
        _add_value(report, "latency", stat, m.group("value"), line_no, line, m.group("name"))
        found += 1
        start = end + 1
    if not found:
        _problem(report, head_line, "Latency header with no statistic after it (cut?)", head)
        return pos
    return start


def _read_groups(doc: DocText, report: _Report, pos: int, head_line: int, head: str) -> int:
    """The shape groups after "Latency for each data shape group:"."""
    text = doc.text
    start = pos
    line_no = head_line
    shape = ""
    group_line = head_line
    group_raw = head
    in_group = 0
    groups = 0
    for _ in range(_MAX_GROUP_LINES):
        if start >= len(text):
            break
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        content, _ = _content(line)
        stripped = content.strip()
        g = _GROUP.match(stripped)
        d = _DATA_SHAPE.match(stripped)
        m = _STAT.match(stripped)
        if g is not None and m is None:
            if groups and not in_group:
                _problem(report, group_line, "shape group with no statistic (cut?)", group_raw)
            shape = _shape(g.group("shape"))
            groups += 1
            in_group = 0
            group_line, group_raw = line_no + 1, line
        elif d is not None:
            shape = _shape(d.group("shape"))
        elif m is not None and shape:
            stat = _stat_name(m)
            _add_value(
                report, "latency", stat, m.group("value"), line_no + 1, line, m.group("name")
            )
            if report.values and report.values[-1].line == line_no + 1:
                report.values[-1].shape = shape
            in_group += 1
        else:
            break
        line_no += 1
        start = end + 1
    if groups and not in_group:
        _problem(report, group_line, "shape group with no statistic (cut?)", group_raw)
    if not groups:
        _problem(report, head_line, "shape group header with no group after it (cut?)", head)
    return start


def _stat_name(m: re.Match[str]) -> str:
    if m.group("pct"):
        try:
            pct = float(m.group("pct"))
            return "median" if pct == 50 else percentile_stat(pct)
        except ValueError:
            return "p" + m.group("pct")
    return _STAT_NAMES[m.group("name").lower()]


def _shape(text: str) -> str:
    """ "data : [1, 3, 224, 224]" -> "data:[1,3,224,224]"; "input: {1, 3}" -> "input:[1,3]"."""
    return re.sub(r"\s+", "", text).replace("{", "[").replace("}", "]")


def _add_value(
    report: _Report, metric: str, stat: str, written: str, number: int, raw: str, label: str
) -> None:
    v = _VALUE.fullmatch(written.strip())
    if v is None:
        _problem(report, number, f"{label} value {written.strip()!r} is not a number", raw)
        return
    unit = v.group("unit") or ""
    if not unit:
        _problem(report, number, f"{label} value {v.group('num')!r} has no unit (cut?)", raw)
        return
    try:
        q = normalise(float(v.group("num")), unit)
    except UnitError as e:
        _problem(report, number, f"{label}: {e}", raw)
        return
    expected = "throughput" if metric == "throughput" else "time"
    if q.kind != expected:
        _problem(report, number, f"{label} in {unit!r} is not a {expected}", raw)
        return
    report.values.append(_Value(metric, stat, q.value, q.unit, q.direction, number, raw))


def _finish(report: _Report, ctx: _Context) -> list[Item]:
    if not (report.counted or report.prefixed or ctx.strong):
        return []
    out: list[Item] = list(report.problems)
    if not report.values:
        return out
    params = _params(ctx)
    device = ctx.flags.get("d", "") or ctx.step10_devices or ctx.execution_devices
    testbed: dict[str, str] = {}
    if ctx.build:
        testbed["openvino"] = ctx.build
    if ctx.execution_devices:
        testbed["execution_devices"] = ctx.execution_devices
    benchmark = _basename(ctx.flags.get("m", "")) or ctx.loaded_model
    iterations = report.stats.get("iterations")
    values = list(report.values)
    if ctx.first_inference is not None:
        value, unit, line, raw = ctx.first_inference
        values.insert(0, _Value("first_inference_time", "", value, unit, "lower", line, raw))
    for v in values:
        p = dict(params)
        if v.stat:
            p["stat"] = v.stat
        if v.shape:
            p["shape"] = v.shape
        out.append(
            Measurement(
                benchmark=benchmark,
                metric=v.metric,
                value=v.value,
                unit=v.unit,
                direction=v.direction,  # type: ignore[arg-type]
                framework=FRAMEWORK,
                device=device,
                params=p,
                testbed=dict(testbed),
                samples=iterations,
                stats=dict(report.stats),
                line=v.line,
                raw=v.raw,
            )
        )
    return out


def _params(ctx: _Context) -> dict[str, ParamValue]:
    params: dict[str, ParamValue] = {}
    flags, props = ctx.flags, ctx.props
    api = ctx.step10.get("api") or flags.get("api", "")
    if api:
        params["api"] = str(api).lower()
    for key, flag, prop in (
        ("nireq", "nireq", "OPTIMAL_NUMBER_OF_INFER_REQUESTS"),
        ("nstreams", "nstreams", "NUM_STREAMS"),
    ):
        value = ctx.step10.get(key) or flags.get(flag) or props.get(prop)
        if value:
            params[key] = _int_or_text(str(value))
    batch = ctx.batch or (flags.get("b") and _int_or_text(flags["b"]))
    if batch:
        params["batch_size"] = batch
    precision = _precision(props.get("INFERENCE_PRECISION_HINT", "")) or _precision(
        flags.get("infer_precision", "")
    )
    if precision:
        params["precision"] = precision
    hint = props.get("PERFORMANCE_HINT", "") or flags.get("hint", "")
    hint = hint.split(".")[-1].strip().lower()
    if hint and hint != "undefined" and hint != "none":
        params["hint"] = hint
    if ctx.mode:
        params["mode"] = ctx.mode
    return params


def _precision(text: str) -> str:
    """ "f32", "<Type: 'float32'>", "bf16" -> "fp32", "fp32", "bf16"; "" if none."""
    m = re.search(r"[A-Za-z]+\d+", text)
    return _PRECISIONS.get(m.group().lower(), m.group().lower()) if m else ""


def _int_or_text(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1] if path else ""


def _read_step10(ctx: _Context, m: re.Match[str]) -> None:
    ctx.step10["api"] = "async" if m.group("api") == "asynchronously" else "sync"
    if m.group("nireq"):
        ctx.step10["nireq"] = int(m.group("nireq"))
    streams = _STREAMS.findall(m.group("streams") or "")
    if len(streams) == 1:
        ctx.step10["nstreams"] = int(streams[0][0])
        ctx.step10_devices = streams[0][1]
    elif streams:
        ctx.step10["nstreams"] = ",".join(f"{dev}:{n}" for n, dev in streams)
        ctx.step10_devices = ",".join(dev for _, dev in streams)


def _read_loaded_model(doc: DocText, ctx: _Context, pos: int) -> None:
    """A model path printed on the line after "Loading model files" (2019-2020)."""
    text = doc.text
    end = text.find("\n", pos)
    line = text[pos : end if end >= 0 else len(text)]
    content, _ = _content(line)
    word = content.strip()
    if word.lower().endswith(_MODEL_EXT) and " " not in word:
        ctx.loaded_model = _basename(word)


# Flags that take a value, long spellings -> the short one.
_FLAG_NAMES = {
    "m": "m",
    "path_to_model": "m",
    "d": "d",
    "target_device": "d",
    "b": "b",
    "batch_size": "b",
    "nireq": "nireq",
    "number_infer_requests": "nireq",
    "nstreams": "nstreams",
    "number_streams": "nstreams",
    "hint": "hint",
    "perf_hint": "hint",
    "api": "api",
    "api_type": "api",
    "infer_precision": "infer_precision",
    "latency_percentile": "latency_percentile",
}


def _read_command(line: str) -> dict[str, str] | None:
    """The flags of a benchmark_app command on the line, else None (prose naming it)."""
    m = _PROGRAM.search(line)
    if m is None:
        return None
    before = line[: m.start()].strip().strip("`").strip()
    if before and not before.endswith("Input command:"):
        last = re.split(r"[\s>$#%]", before)[-1].strip("\"'`").lower()
        if last and last not in _LEADERS:
            return None
        if not last and not re.search(r"[>$#%]$", before):
            return None
    args_text = line[m.end() :].strip().strip("`").strip()
    try:
        args = shlex.split(args_text, posix=False)
    except ValueError:
        args = args_text.split()
    args = [a.strip("\"'`") for a in args]
    flags: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and not _is_number(arg):
            name, _, inline = arg.lstrip("-").partition("=")
            key = _FLAG_NAMES.get(name)
            if inline:
                if key:
                    flags[key] = inline
                i += 1
                continue
            if i + 1 < len(args) and (not args[i + 1].startswith("-") or _is_number(args[i + 1])):
                if key:
                    flags[key] = args[i + 1]
                i += 2
                continue
        i += 1
    return flags


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
