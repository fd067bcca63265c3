"""PaddlePaddle 2.x AutoLog benchmark reports (docs/formats.md, AutoLog section).

AutoLog (LDOUBLEV/AutoLog) is the benchmark logger of the Paddle 2.x model suites
(PaddleOCR, PaddleClas, PaddleDetection, PaddleSeg, PaddleVideo, the test_tipc scripts).
Its report is a run of ``key: value`` lines under dashed section rules, every line
usually behind a logging prefix. The strings come from the tool's own code:

- Python, ``auto_log/autolog.py`` ``AutoLogger.report()`` (logging format
  ``[%(asctime)s] %(name)s %(levelname)s: %(message)s``, so ``[2022/05/13 23:07:42] root
  INFO:`` or ``ppocr INFO:``; each message may start with an ``[identifier]``)::

      ---------------------- Env info ----------------------     OS_version, CUDA_version,
                                                                 CUDNN_version, drivier_version
      ---------------------- Paddle info ----------------------  paddle_version, paddle_commit,
                                                                 log_api_version
      ----------------------- Conf info -----------------------  runtime_device, ir_optim,
          enable_memory_optim, enable_tensorrt, enable_mkldnn, cpu_math_library_num_threads
      ----------------------- Model info ----------------------  model_name, precision
      ----------------------- Data info -----------------------  batch_size, input_shape, data_num
      ----------------------- Perf info -----------------------
       cpu_rss(MB): 2362.1016, gpu_rss(MB): 964.0, gpu_util: 4.0%
       total time spent(s): 1.738
       preprocess_time(ms): 1722.6572, inference_time(ms): 15.321, postprocess_time(ms): 0.0565

  Older copies (PaddleDetection's ``benchmark_utils.py`` PaddleInferBenchmark, logging
  ``%(asctime)s - %(name)s - %(levelname)s - %(message)s``) print the same sections
  without Env info, ``paddle_branch`` in Paddle info, and times rounded to 0.1 ms; some
  forks comment the memory line out. A CPU run prints ``gpu_rss(MB): None, gpu_util:
  None%``; a config passed as None prints ``precision: None`` and "None" settings.
- C++, ``auto_log/autolog.h`` (glog ``I1125 08:10:45.834288 13955 autolog.h:50]``) and
  ``lite_autolog.h`` (plain stdout): ``Config info`` (runtime_device, ir_optim,
  enable_memory_optim, enable_tensorrt printed as 0/1, enable_mkldnn,
  cpu_math_library_num_threads; lite: cpu_num_threads), ``Data info``, ``Model info``,
  ``Perf info`` with ``Total time spent(ms): 2739`` (an integer sum) and the three times
  divided by the image count. PaddleDetection's C++ deploy prints ``Total number of
  predicted data: 3 and total time spent(ms): 81.3`` and ``preproce_time(ms):``.

Data model: metrics ``preprocess_time``, ``inference_time``, ``postprocess_time`` (ms,
stat "mean": Python averages the per-call (per-batch) times after warmup, C++ divides the
sum by the image count), ``total_time`` (the sum over the run, s -> ms, no stat),
``cpu_rss`` (MB, stat "mean": AutoLog keeps a running mean of the samples), ``gpu_rss``
(MB, stat "max") and ``gpu_util`` (%, stat "max": AutoLog keeps the maximum of the
nvidia-smi samples). framework "paddle", benchmark = model_name (path stripped), device =
runtime_device; params precision, batch_size, enable_tensorrt, enable_mkldnn,
cpu_threads, ir_optim (booleans as bool, "None" left out); testbed paddle_version,
paddle_commit, paddle_branch, cuda_version, cudnn_version, driver_version, os; stats
data_num and input_shape.

Decisions:

- A report is everything from its first section rule to its times line; a rule after a
  times line, or a section seen twice, starts a new report (the sections come in
  another order in C++ than in Python). The times line alone (pasted without its report, as in
  PR comments) is still read, with an empty benchmark.
- "None" values are no values (a CPU run has no GPU memory): skipped quietly. A number
  that cannot be read, a times line without its numbers, or a ``Perf info`` rule whose
  report never reaches a times line (an excerpt cut short) is a Problem.

Speed: one ``re.finditer`` per literal-led pattern (" info -----", "_time(ms):", "time
spent(", "cpu_rss(MB):"), merged by position; only the few lines under a rule are read
line by line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.parsers import cells
from ingest.parsers.cells import NUMBER
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "autolog"
# Every report (and every pasted times line) prints "inference_time(ms)".
ANCHORS: tuple[str, ...] = ("inference_time(ms)",)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rule", re.compile(r" info -{5,}")),
    ("times", re.compile(r"_time\(ms\):")),
    ("total", re.compile(r"time spent\((?P<unit>m?s)\):[ \t]*(?P<num>[^\s,]*)")),
    ("memory", re.compile(r"cpu_rss\(MB\):")),
)
_RULE = re.compile(r"-{5,}[ \t]*(?P<name>[A-Za-z]+)[ \t]+info[ \t]*-{5,}")
# A key line under a rule: "[identifier] key: value" after any logging prefix.
_KEY = re.compile(
    r"(?:^|[\s\]:])(?P<key>OS_version|CUDA_version|CUDNN_version|drivier_version"
    r"|driver_version|paddle_version|paddle_commit|paddle_branch|log_api_version"
    r"|runtime_device|ir_optim|enable_memory_optim|enable_tensorrt|enable_mkldnn"
    r"|cpu_math_library_num_threads|cpu_num_threads|model_name|precision|batch_size"
    r"|input_shape|data_num|Paddle version|Device)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$"
)
_TIME = re.compile(
    rf"(?P<name>preprocess|preproce|inference|postprocess)_time\(ms\):[ \t]*(?P<num>{NUMBER})?"
)
_MEMORY = re.compile(
    r"(?P<name>cpu_rss|gpu_rss)\(MB\):[ \t]*(?P<num>[^\s,]*)|gpu_util:[ \t]*(?P<util>[^\s,%]*)%?"
)
_COMPLETE = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
# How many lines a section may hold before it is not AutoLog's.
MAX_SECTION_LINES = 12

_TIME_METRICS = {
    "preprocess": "preprocess_time",
    "preproce": "preprocess_time",  # PaddleDetection C++'s spelling
    "inference": "inference_time",
    "postprocess": "postprocess_time",
}
_TESTBED = {
    "paddle_version": "paddle_version",
    "Paddle version": "paddle_version",
    "paddle_commit": "paddle_commit",
    "paddle_branch": "paddle_branch",
    "CUDA_version": "cuda_version",
    "CUDNN_version": "cudnn_version",
    "drivier_version": "driver_version",  # sic, AutoLog's spelling
    "driver_version": "driver_version",
    "OS_version": "os",
}
_BOOL_PARAMS = {
    "ir_optim": "ir_optim",
    "enable_tensorrt": "enable_tensorrt",
    "enable_mkldnn": "enable_mkldnn",
}
_INT_PARAMS = {
    "batch_size": "batch_size",
    "cpu_math_library_num_threads": "cpu_threads",
    "cpu_num_threads": "cpu_threads",
}
_NONE = frozenset({"", "none", "null", "none.none.none"})


@dataclass
class _Report:
    """What the sections of one report said so far."""

    benchmark: str = ""
    device: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    testbed: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    perf_line: int = 0  # line of its "Perf info" rule, 0 when none yet
    perf_raw: str = ""
    last_line: int = 0  # line of the last value read from its Perf info
    done: bool = False  # its times line was read
    sections: set[str] = field(default_factory=set)  # the rules seen: a repeat is a new report


def parse(doc: DocText) -> Iterator[Item]:
    """AutoLog's time, memory and utilisation Measurements, with Problems."""
    text = doc.text
    report = _Report()
    consumed = -1  # end of the last section read: its lines are not read again
    for pos, kind, m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        if kind == "rule":
            start, end = doc.line_bounds(pos)
            line = text[start:end]
            rule = _RULE.search(line)
            if not rule:
                continue
            section = rule.group("name").lower()
            if report.done or section in report.sections:
                yield from _unfinished(report)
                report = _Report()
            report.sections.add(section)
            if section == "perf":
                report.perf_line, report.perf_raw = doc.line_at(start), line
                consumed = end
            else:
                consumed = _read_section(doc, report, end)
        elif kind == "times":
            start, consumed = doc.line_bounds(pos)
            line = text[start:consumed]
            if report.done:
                yield from _unfinished(report)
                report = _Report()  # a second pasted times line: a run of its own
            yield from _read_times(report, line, doc.line_at(start))
            report.done = True
        elif kind == "total":
            start, consumed = doc.line_bounds(pos)
            if report.done:
                report = _Report()
            yield from _read_total(report, m, text[start:consumed], doc.line_at(start))
        else:
            start, consumed = doc.line_bounds(pos)
            if report.done:
                report = _Report()
            yield from _read_memory(report, text[start:consumed], doc.line_at(start))
    yield from _unfinished(report)


def _unfinished(report: _Report) -> Iterator[Item]:
    """A Problem for a report whose Perf info rule was never followed by its times."""
    if report.perf_line and not report.done:
        yield Problem(
            max(report.perf_line, report.last_line),
            f"AutoLog report cut: no preprocess/inference time line after its Perf info "
            f"(line {report.perf_line})",
            report.perf_raw,
            NAME,
        )


def _read_section(doc: DocText, report: _Report, end: int) -> int:
    """Read the key lines after a section rule; the end of the last one read."""
    text = doc.text
    consumed = end
    for _ in range(MAX_SECTION_LINES):
        if end < 0 or end >= len(text):
            break
        start = end + 1
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        m = _KEY.search(line)
        if not m:
            break
        _take(report, m.group("key"), m.group("value"))
        consumed = start + len(line)
    return consumed


def _take(report: _Report, key: str, value: str) -> None:
    if value.lower() in _NONE:
        return
    if key == "model_name":
        report.benchmark = _basename(value)
    elif key in ("runtime_device", "Device"):
        report.device = value
    elif key == "precision":
        report.params["precision"] = value.lower()
    elif key in _BOOL_PARAMS:
        flag = cells.flag(value)
        if flag is not None:
            report.params[_BOOL_PARAMS[key]] = flag
    elif key in _INT_PARAMS:
        number = _int(value)
        if number is not None:
            report.params[_INT_PARAMS[key]] = number
    elif key in _TESTBED:
        report.testbed[_TESTBED[key]] = value
    elif key == "data_num":
        number = _int(value)
        report.stats["data_num"] = number if number is not None else value
    elif key == "input_shape":
        report.stats["input_shape"] = value


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _measurement(
    report: _Report, metric: str, value: float, unit: str, stat: str, line: int, raw: str
) -> Measurement | Problem:
    report.last_line = line
    try:
        q = normalise(value, unit)
    except UnitError as e:
        return Problem(line, f"{metric}: {e}", raw, NAME)
    params = dict(report.params)
    if stat:
        params["stat"] = stat
    return Measurement(
        benchmark=report.benchmark,
        metric=metric,
        value=q.value,
        unit=q.unit,
        direction=q.direction,  # type: ignore[arg-type]
        framework="paddle",
        device=report.device,
        params=params,
        testbed=dict(report.testbed),
        stats=dict(report.stats),
        line=line,
        raw=raw,
    )


def _read_times(report: _Report, line: str, number: int) -> Iterator[Item]:
    """ "preprocess_time(ms): 11.3, inference_time(ms): 33.7, postprocess_time(ms): 3.8"."""
    found = False
    for m in _TIME.finditer(line):
        found = True
        name = m.group("name")
        num = m.group("num")
        if num is None or not _COMPLETE.fullmatch(num):
            yield Problem(number, f"{name}_time(ms) value {num or ''!r} cannot be read", line, NAME)
            continue
        yield _measurement(
            report, _TIME_METRICS[name], float(num), "ms", "mean", number, line.strip()
        )
    if not found:
        yield Problem(number, "AutoLog times line cannot be read", line, NAME)


def _read_total(report: _Report, m: re.Match[str], line: str, number: int) -> Iterator[Item]:
    """ "total time spent(s): 2.4474" (Python) or "Total time spent(ms): 2739" (C++)."""
    report.last_line = number
    num = m.group("num")
    if not _COMPLETE.fullmatch(num):
        yield Problem(number, f"total time spent value {num!r} cannot be read", line, NAME)
        return
    yield _measurement(report, "total_time", float(num), m.group("unit"), "", number, line.strip())


def _read_memory(report: _Report, line: str, number: int) -> Iterator[Item]:
    """ "cpu_rss(MB): 2167.35, gpu_rss(MB): 867.0, gpu_util: 9.0%"."""
    report.last_line = number
    for m in _MEMORY.finditer(line):
        if m.group("name"):
            metric, num, unit = m.group("name"), m.group("num"), "MB"
            stat = "mean" if metric == "cpu_rss" else "max"
        else:
            metric, num, unit, stat = "gpu_util", m.group("util"), "%", "max"
        if num.lower() in _NONE:
            continue  # a CPU run: no GPU figures
        if not _COMPLETE.fullmatch(num):
            yield Problem(number, f"{metric} value {num!r} cannot be read", line, NAME)
            continue
        yield _measurement(report, metric, float(num), unit, stat, number, line.strip())
