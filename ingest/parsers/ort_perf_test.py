"""ONNX Runtime ``onnxruntime_perf_test`` console output, every version, wherever it is pasted.

Format strings from microsoft/onnxruntime ``onnxruntime/test/perftest/performance_runner.cc``
(``PerformanceRunner::Run`` and ``PerformanceResult::DumpToFile``) and, before that moved,
``performance_runner.h``. The layouts:

- 2019 (0.x): ``Total time cost:58.8`` (seconds, no unit printed), ``Total iterations:1000``,
  ``Average time cost:58.8 ms``; the statistics (``-s``) went to the result file only, as
  ``Min Latency is 0.0559sec`` ... ``P999 Latency is 0.0623sec``;
- 1.x before 1.8 (the project's sample): the same with a space after the colon, ``Total run
  time: 58.81 s``, and ``Min Latency is 0.0559777 sec``;
- 1.8 to 1.19: ``Session creation time cost: 0.018 s``, ``First inference time cost: 2 ms``
  (from 1.12), ``Total inference time cost: 9.4 s`` (the sum of the requests' times), ``Total
  inference requests: 10000``, ``Average inference time cost: 0.94 ms``, ``Total inference run
  time: 9.41 s`` (wall time, less than the sum with ``-c`` > 1), ``Number of inferences per
  second: 1062.57`` (no unit), ``Avg CPU usage: 74 %``, ``Peak working set size: 50905088
  bytes``; then the dump that repeats the last two without spaces or units (``Avg CPU
  usage:74``, ``Peak working set size:50905088``) and ``Runs:10000``, and with ``-s`` ``Min
  Latency: 0.00077 s``, ``Max Latency``, ``P50``/``P90``/``P95``/``P99``/``P999 Latency``;
- 1.20 on: ``Average inference time cost total: 98.96 ms`` (the same mean).

Decisions:

- framework "onnxruntime", task "inference", device "" (the tool names no device; the
  execution provider is a setting). One Measurement per statistic: metric "latency" with
  stat "mean" (the average time cost, in every spelling), "min", "max", "p50", "p90", "p95",
  "p99", "p99.9" (``P999``); "throughput" (inferences per second, samples/s, no stat);
  "session_creation_time", "first_inference_time"; "peak_working_set" in MB.
- The run's command line (``onnxruntime_perf_test -e cuda -r 100 ... model.onnx``, a line
  where the program starts a command, possibly after a path, a prompt, ``adb shell "`` or
  ``taskset 1``) gives the benchmark (the basename of the ``.onnx``/``.ort`` argument) and
  params ``execution_provider`` (``-e``), ``threads`` (``-x``, else the printed ``Setting
  intra_op_num_threads to N``), ``concurrent_runs`` (``-c``). A command applies to every
  block after it up to the next command.
- stats of every measurement of a block: ``requests`` (also ``samples``), ``total_time_ms``
  (the sum of the requests' times: ``Total inference time cost``, the old unit-less ``Total
  time cost``, seconds by the source), ``duration_ms`` (the run's wall time),
  ``avg_cpu_usage_percent``. They are not series.
- A block is the run of these lines; a label seen again with another value starts the next
  block (two runs pasted one after the other). The dump's repeat of ``Avg CPU usage`` and
  ``Peak working set size`` is no new value; alone (an excerpt), the unit-less peak is bytes
  by the source.
- A line counts when its label starts the line (after white space, a ``[...]`` prefix or a
  backtick): a script's regex or prose that names a label is none.
- Problems: a value that is no number, a time printed without its unit (cut), a unit that
  is not a time. The rest of the block is still read.

Speed: one ``re.finditer`` per literal entry point, merged in document order; only the
lines found are looked at.
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

NAME = "ort_perf_test"
# Every layout prints a "... time cost" line; a pasted statistics part has "Min Latency".
ANCHORS: tuple[str, ...] = ("time cost", "Min Latency", "P50 Latency", "inferences per second")

FRAMEWORK = "onnxruntime"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("line", re.compile(r"time cost")),
    ("line", re.compile(r"Total inference r")),
    ("line", re.compile(r"Total iterations:")),
    ("line", re.compile(r"Total run time:")),
    ("line", re.compile(r"inferences per second:")),
    ("line", re.compile(r"Avg CPU usage:")),
    ("line", re.compile(r"Peak working set size:")),
    ("line", re.compile(r"Runs:")),
    ("line", re.compile(r"Min Latency")),
    ("line", re.compile(r"Max Latency")),
    ("line", re.compile(r"P\d+ Latency")),
    ("threads", re.compile(r"Setting intra_op_num_threads to ")),
    ("cmd", re.compile(r"onnxruntime_perf_test")),
)

# label as printed -> (key, what it is). Longest first where one label starts another.
_LABELS: dict[str, tuple[str, str]] = {
    "Session creation time cost": ("session_creation_time", "metric"),
    "First inference time cost": ("first_inference_time", "metric"),
    "Average inference time cost total": ("mean", "latency"),
    "Average inference time cost": ("mean", "latency"),
    "Average time cost": ("mean", "latency"),
    "Total inference time cost": ("total_time_ms", "stat_time"),
    "Total time cost": ("total_time_ms", "stat_time"),
    "Total inference requests": ("requests", "count"),
    "Total iterations": ("requests", "count"),
    "Runs": ("runs", "count"),
    "Total inference run time": ("duration_ms", "stat_time"),
    "Total run time": ("duration_ms", "stat_time"),
    "Number of inferences per second": ("throughput", "throughput"),
    "Avg CPU usage": ("avg_cpu_usage_percent", "cpu"),
    "Peak working set size": ("peak_working_set", "memory"),
    "Min Latency": ("min", "latency"),
    "Max Latency": ("max", "latency"),
}
_LABEL_RE = "|".join(re.escape(label) for label in _LABELS) + r"|P(?P<pct>\d+) Latency"
_LINE = re.compile(
    rf"^[ \t>`*]*(?:\[[^\]\n]*\][ \t]*)*(?P<label>{_LABEL_RE})"
    r"(?P<sep>[ \t]+is[ \t]+|[ \t]*:)[ \t]*(?P<value>[^\n]*?)[ \t`]*$"
)
_VALUE = re.compile(rf"(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-z%/]+)?")
_THREADS = re.compile(r"Setting intra_op_num_threads to (?P<n>\d+)")
# The program at the start of a command: after a path, a prompt, "adb shell \"", "taskset 1".
_PROGRAM = re.compile(r"[^\s\"'`]*onnxruntime_perf_test(?:\.exe)?[\"']?(?=[ \t])")
_LEADERS = {"adb", "shell", "taskset", "sudo", "numactl", "time", "nohup", "env"}
_MODEL_EXT = (".onnx", ".ort")
# Flags of onnxruntime_perf_test that take a value (the model is the positional argument).
_VALUE_FLAGS = set("mertpxycoufFidRCST")

# Labels other tools print too: lines of only these are no onnxruntime_perf_test block.
_WEAK = frozenset({"Runs", "Avg CPU usage", "Peak working set size", "Total run time"})

# P999 is 99.9%, P50 50%: the digits after the first two are decimals.
_SPECIAL_PCT = {"999": 99.9, "9999": 99.99}


def _percent(digits: str) -> float:
    if digits in _SPECIAL_PCT:
        return _SPECIAL_PCT[digits]
    if len(digits) <= 2:
        return float(digits)
    return float(digits[:2] + "." + digits[2:])


@dataclass(slots=True)
class _Command:
    benchmark: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)


@dataclass(slots=True)
class _Value:
    key: str
    kind: str
    value: float
    unit: str
    direction: str
    line: int
    raw: str
    printed: str  # the value as written, to tell a repeat from a new block


@dataclass(slots=True)
class _Block:
    line: int
    command: _Command
    threads: int | None = None
    values: dict[str, _Value] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    printed: dict[str, str] = field(default_factory=dict)  # key -> value as written
    problems: list[Problem] = field(default_factory=list)
    strong: bool = False  # a label no other tool prints was seen


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every onnxruntime_perf_test block in the document, and Problems."""
    text = doc.text
    command = _Command()
    block: _Block | None = None
    threads: int | None = None
    items: list[Item] = []
    seen_lines: set[int] = set()

    def close() -> None:
        nonlocal block
        if block is not None:
            items.extend(_finish(block))
        block = None

    for pos, kind, _ in hits(text, _PATTERNS):
        start, end = doc.line_bounds(pos)
        if start in seen_lines:
            continue
        line = text[start:end]
        if kind == "cmd":
            parsed = _read_command(line)
            if parsed is None:
                continue
            seen_lines.add(start)
            close()
            command, threads = parsed, None
            continue
        if kind == "threads":
            m = _THREADS.search(line)
            if m:
                seen_lines.add(start)
                threads = int(m.group("n"))
                if block is not None and block.values:
                    close()
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        seen_lines.add(start)
        number = doc.line_at(start)
        label = m.group("label")
        key, what = _label_key(m)
        printed = m.group("value")
        if block is not None and key in block.printed:
            if block.printed[key] == printed or _is_dump_repeat(key, block.printed[key], printed):
                continue  # the dump's repeat of a value already read
            close()
        if block is None:
            block = _Block(number, command, threads)
        block.printed[key] = printed
        block.strong = block.strong or label not in _WEAK
        _read_value(block, key, what, label, m, number, line)
    close()
    items.sort(key=lambda item: item.line)
    yield from items


def _label_key(m: re.Match[str]) -> tuple[str, str]:
    if m.group("pct") is not None:
        try:
            return percentile_stat(_percent(m.group("pct"))), "latency"
        except ValueError:
            return "p" + m.group("pct"), "latency"
    return _LABELS[m.group("label")]


def _is_dump_repeat(key: str, before: str, now: str) -> bool:
    """ "Avg CPU usage:74" after "Avg CPU usage: 74 %": the dump, not a new block."""
    if key not in ("avg_cpu_usage_percent", "peak_working_set"):
        return False
    a, b = _VALUE.match(before.strip()), _VALUE.match(now.strip())
    return a is not None and b is not None and a.group("num") == b.group("num")


def _problem(block: _Block, line: int, reason: str, raw: str) -> None:
    block.problems.append(Problem(line, reason, raw, NAME))


def _read_value(
    block: _Block, key: str, what: str, label: str, m: re.Match[str], number: int, raw: str
) -> None:
    written = m.group("value")
    v = _VALUE.fullmatch(written.strip())
    if v is None:
        _problem(block, number, f"{label} value {written.strip()!r} is not a number", raw)
        return
    num = float(v.group("num"))
    unit = v.group("unit") or ""
    if what == "count":
        if not v.group("num").isdigit():
            _problem(block, number, f"{label} {v.group('num')!r} is not a count", raw)
            return
        if key == "runs":
            block.stats.setdefault("requests", int(num))
        else:
            block.stats["requests"] = int(num)
        return
    if what == "cpu":
        if unit not in ("", "%"):
            _problem(block, number, f"{label} unit {unit!r} is not a percentage", raw)
            return
        block.stats[key] = num
        return
    if what == "stat_time":
        unit = unit or ("s" if label == "Total time cost" else "")
    elif what == "throughput":
        if unit:
            _problem(block, number, f"{label} has an unknown unit {unit!r}", raw)
            return
        unit = "inferences/s"
    elif what == "memory":
        unit = unit or "bytes"  # the dump prints the byte count without a unit
    if not unit:
        _problem(block, number, f"{label} value {v.group('num')!r} has no unit (cut?)", raw)
        return
    try:
        q = normalise(num, unit)
    except UnitError as e:
        _problem(block, number, f"{label}: {e}", raw)
        return
    expected = {"memory": "memory", "throughput": "throughput"}.get(what, "time")
    if q.kind != expected:
        _problem(block, number, f"{label} in {unit!r} is not a {expected}", raw)
        return
    if what == "stat_time":
        block.stats[key] = q.value
        return
    block.values[key] = _Value(key, what, q.value, q.unit, q.direction, number, raw, written)


def _finish(block: _Block) -> list[Item]:
    if not block.strong:
        return []  # "Runs: 5" of another tool
    out: list[Item] = list(block.problems)
    params_base: dict[str, ParamValue] = dict(block.command.params)
    if "threads" not in params_base and block.threads is not None:
        params_base["threads"] = block.threads
    requests = block.stats.get("requests")
    for key, v in block.values.items():
        params = dict(params_base)
        if v.kind == "latency":
            metric = "latency"
            params["stat"] = key
        else:
            metric = key
        out.append(
            Measurement(
                benchmark=block.command.benchmark,
                metric=metric,
                value=v.value,
                unit=v.unit,
                direction=v.direction,  # type: ignore[arg-type]
                framework=FRAMEWORK,
                params=params,
                samples=requests,
                stats=dict(block.stats),
                line=v.line,
                raw=v.raw,
            )
        )
    return out


def _read_command(line: str) -> _Command | None:
    """The command on a line where onnxruntime_perf_test starts one, else None."""
    m = _PROGRAM.search(line)
    if m is None:
        return None
    before = [w.strip("\"'`") for w in line[: m.start()].split()]
    if not all(_is_leader(w) for w in before):
        return None  # prose that names the tool
    args_text = line[m.end() :].strip().strip("`").strip()
    try:
        args = shlex.split(args_text, posix=False)
    except ValueError:
        args = args_text.split()
    args = [a.strip("\"'`") for a in args]
    if not args or args[0] in ("--help", "-h", "-?"):
        return None
    command = _Command()
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if len(arg) == 2 and arg[0] == "-" and arg[1] in _VALUE_FLAGS and i + 1 < len(args):
            _flag(command, arg[1], args[i + 1])
            i += 2
            continue
        if not arg.startswith("-"):
            positional.append(arg)
        i += 1
    for arg in positional:
        if arg.lower().endswith(_MODEL_EXT):
            command.benchmark = re.split(r"[\\/]", arg)[-1]
            break
    return command


def _is_leader(word: str) -> bool:
    """A word before the program on a command line: a prompt, "adb", "shell", "taskset",
    its CPU mask, "LD_LIBRARY_PATH=./lib"; anything else is prose."""
    w = word.strip("$#>%")
    return not w or w.isdigit() or w.lower() in _LEADERS or "=" in w or w.startswith("-")


def _flag(command: _Command, flag: str, value: str) -> None:
    if flag == "e":
        command.params["execution_provider"] = value.lower()
    elif flag == "x" and value.isdigit():
        command.params["threads"] = int(value)
    elif flag == "c" and value.isdigit():
        command.params["concurrent_runs"] = int(value)
