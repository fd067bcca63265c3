"""FastDeploy benchmark outputs: console lines, result files and results tables
(docs/formats.md, FastDeploy section).

The strings come from PaddlePaddle/FastDeploy's own code:

- ``benchmark/benchmark_*.py`` (2022) write a result file per run: a ``====NAME====:``
  line (NAME = model dir + ``_ort_cpu_8``, ``_paddle_gpu``, ``_trt_fp16_gpu``... from
  ``args.model + "_" + backend + ["_fp16"] + "_" + device + ["_" + threads]``), then
  ``Runtime(ms): 5.0312 ``, ``End2End(ms): 9.38 ``, ``cpu_rss_mb: ``, ``gpu_rss_mb: ``,
  ``gpu_util: `` (the same lines are printed on the console by later versions), or
  ``!!!!!Infer Failed``. ``convert_info.py`` turns them into tab tables.
- ``benchmark/cpp/benchmark_*.cc`` and ``macros.h`` (2023): ``PrintBenchmarkInfo`` prints
  ``======= Model Info =======`` (``model_name:``, ``profile_mode: runtime|end2end``,
  ``include_h2d_d2h:``) and ``======= Backend Info =======`` (``warmup:``, ``repeats:``,
  ``device:``, ``device_id:``, ``use_fp16:``, ``backend:``, ``cpu_thread_nums:``,
  ``collect_memory_info:``); then ``Runtime(ms): 5.03ms.`` or ``End2End(ms): 9.38ms.``
  (``Runtime(ms): Failed`` when a prediction fails), ``cpu_rss_mb: 812MB.``,
  ``gpu_rss_mb: 1024MB.``, ``gpu_util: 35`` (in the result file ``gpu_util: 35MB.``, a
  slip of the code). Early C++ examples print ``cpu_pss_mb:``/``gpu_pss_mb:``.
  ``benchmark/cpp/benchmark.cc`` prints ``Runtime: 1.23 ms``.
- The runtime's ``PrintStatisInfoOfRuntime`` (fastdeploy/runtime, fastdeploy_model.cc)::

      ============= Runtime Statis Info(PaddleClasModel) =============
      Total iterations: 2000
      Total time of runtime: 3.46793s.
      Warmup iterations: 400
      Total time of runtime in warmup step: 0.703937s.
      Average time of runtime exclude warmup step: 1.72749ms.

  and the benchmark shell scripts print ``[Benchmark-PPcls] 1/20 ppcls_model/NAME ...``
  before each model. The runtime logs ``[INFO] fastdeploy/runtime/runtime.cc(279)::
  CreateOpenVINOBackend	Runtime initialized with Backend::OPENVINO in Device::CPU.``
- Results tables in PRs and benchmark docs (markdown): identity columns (模型/model,
  后端/backend, 精度/precision, device) and value columns ``Runtime(ms)``,
  ``End2End(ms)``, ``每个样本Runtime用时``, ``每个样本端到端用时``; cells carry the unit
  ("56.91ms") or the header does.

Data model: metrics ``runtime_latency`` (the backend's own inference time) and
``end2end_latency`` (pre- and post-processing included), ms, stat "mean" (every layout
prints an average over the repeats after warmup); ``cpu_rss``/``gpu_rss`` (MB, no stat:
early Python scripts average the samples, the C++ monitor keeps the maximum, and the
line does not say which) and ``gpu_util`` (%). framework "fastdeploy", benchmark = the
model (directory basename, "_model"/"_infer" kept as printed, a version suffix such as
"(v0.4)" or "(dev)" moved to ``version``), device as printed; params ``backend`` as
printed, ``precision`` (lower case) from a precision column, ``use_fp16`` from the
console/result file, ``cpu_threads``, ``include_h2d_d2h``; warmup and repeats go to the
Measurement's ``warmup``/``samples``, iteration counts to stats.

Decisions:

- A ``精度`` column is read by its cells: FastDeploy tables use the word for the numeric
  precision (FP32/FP16) and for the accuracy ("51.4%"), even in one table (PR 449 has
  an unnamed FP32/FP16 column and a 精度 column of mAP). Precision words make a
  precision column whatever its header; a column of percentages goes to
  ``stats["accuracy"]`` (percent).
- "-", "--", "N/A" cells are no values (skipped); "Failed"/OOM cells and lines become
  Measurements with status "error"/"oom"; a number with no unit in its cell or header,
  or an unknown unit, is a Problem. A row cut short or with the wrong cell count is a
  Problem; the rest of the table is still read.
- ``gpu_util`` is a fraction (GPUtil ``load``) in the 2022 Python scripts and a
  percentage (nvidia-smi) elsewhere: a bare value of at most 1 cannot be told apart and
  is a warning Problem, not a value.
- The runtime's ``Average time of runtime`` and the ``Runtime(ms)`` line a Python script
  writes from it are one figure: the second is not stored again.

Speed: one ``re.finditer`` per literal-led pattern, merged by position.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.parsers.cells import (
    NUMBER,
    header_unit,
    is_empty_cell,
    norm_header,
    read_quantity,
    status_of,
)
from ingest.parsers.md_tables import split_cells
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "fastdeploy"
ANCHORS: tuple[str, ...] = (
    "End2End",
    "端到端",
    "Runtime(ms)",
    "exclude warmup step",
    "fastdeploy/",
)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("end2end", re.compile(r"End2End")),
    ("end2end", re.compile(r"端到端")),
    ("end2end", re.compile(r"end2end")),
    ("runtime", re.compile(r"Runtime")),
    ("avg", re.compile(rf"Average time of runtime exclude warmup step:[ \t]*(?P<num>{NUMBER})?")),
    # one pattern a literal: each is tried only where its literal is (ingest.parsers.scan)
    ("iters", re.compile(r"(?P<what>Total) iterations:[ \t]*(?P<num>\d+)")),
    ("iters", re.compile(r"(?P<what>Warmup) iterations:[ \t]*(?P<num>\d+)")),
    ("name", re.compile(r"====(?P<name>[^=\s][^=\n]*?)====:")),
    ("bench", re.compile(r"\[Benchmark-\w+\][ \t]+\d+/\d+[ \t]+(?P<path>\S+)")),
    ("info", re.compile(r"======= (?P<what>Model|Backend) Info =======")),
    ("memory", re.compile(r"(?P<which>cpu)_[rp]ss_mb:[ \t]*(?P<rest>[^\n]*)")),
    ("memory", re.compile(r"(?P<which>gpu)_[rp]ss_mb:[ \t]*(?P<rest>[^\n]*)")),
    ("util", re.compile(r"gpu_util:[ \t]*(?P<rest>[^\n]*)")),
    ("failed", re.compile(r"!!!!!Infer Failed")),
)

_VALUE_LINE = re.compile(
    rf"(?P<label>Runtime|End2End)\((?P<hunit>[A-Za-zµμ]+)\):[ \t]*"
    rf"(?:(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-zµμ]+)?\.?|(?P<word>[A-Za-z]+))?[ \t]*$"
)
_RUNTIME_PLAIN = re.compile(
    rf"(?<![\w(])Runtime:[ \t]*(?P<num>{NUMBER})[ \t]*(?P<unit>[A-Za-zµμ]+)"
)
_INITIALIZED = re.compile(
    r"Runtime initialized with Backend::(?P<backend>\w+) in Device::(?P<device>\w+)"
)
_INFO_KEY = re.compile(r"^[ \t]*(?P<key>[a-z_0-9]+):[ \t]*(?P<value>.*?)[ \t]*$")
_RESULT_NAME = re.compile(
    r"^(?P<model>.+?)_(?P<backend>ort|ov|openvino|paddle_trt|paddle|trt|lite|tnn|mnn|ncnn"
    r"|rknpu2|sophgo|horizon|pplite)(?P<fp16>_fp16)?_(?P<device>cpu|gpu|ipu|xpu|npu|ascend)"
    r"(?:_(?P<threads>\d+))?$"
)
_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_PRECISION_CELL = re.compile(r"^(fp32|fp16|bf16|int8|int4|tf32|float32|float16)$", re.I)
_PERCENT_CELL = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")
_VERSION_SUFFIX = re.compile(
    r"^(?P<model>.+?)\s*[(（](?P<version>v?\d+(?:\.\d+)*|dev|develop|release[\w./-]*)[)）]$",
    re.I,
)
_COMPLETE = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

_MODEL_HEADERS = frozenset({"模型", "model", "models", "model_name", "model name", "模型名称"})
_BACKEND_HEADERS = frozenset({"后端", "backend", "推理后端", "推理引擎", "engine"})
_DEVICE_HEADERS = frozenset({"device", "设备", "硬件", "hardware", "平台", "platform"})
_PRECISION_HEADERS = frozenset({"精度", "precision", "数据类型", "dtype"})
_THREAD_HEADERS = frozenset({"thread_nums", "threads", "线程数", "cpu_thread_nums", "cpu threads"})
_BACKEND_WORD = re.compile(
    r"(?<![a-z])(paddle[_-]?trt|pp-tensorrt|paddle|ort|onnxruntime|openvino|ov|trt|tensorrt|lite)"
    r"(?![a-z])"
)
_PRECISION_WORD = re.compile(r"(?<![a-z0-9])(fp32|fp16|bf16|int8)(?![0-9])")
MAX_INFO_LINES = 10
MAX_TABLE_ROWS = 10_000


@dataclass
class _Run:
    """What is known of the run the next value belongs to."""

    benchmark: str = ""
    version: str | None = None
    device: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    warmup: int | None = None
    samples: int | None = None
    known: bool = False  # a FastDeploy marker was seen: plain lines are ours
    last_runtime: float | None = None  # ms, to drop the Runtime(ms) echo of the average


def parse(doc: DocText) -> Iterator[Item]:
    """FastDeploy runtime/end2end latencies and resource figures, with Problems."""
    text = doc.text
    run = _Run()
    consumed = -1
    for pos, kind, m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        start, end = doc.line_bounds(pos)
        line = text[start:end]
        if kind in ("end2end", "runtime"):
            if line.lstrip().startswith("|"):
                table_end = _table_end(text, start, end)
                if table_end is not None:
                    yield from _read_table(doc, start, table_end)
                    consumed = table_end
                    continue
            consumed = end
            yield from _read_line(doc, run, line, start)
        elif kind == "avg":
            consumed = end
            yield from _read_average(run, m, text[m.end() : end], line, doc.line_at(start))
        elif kind == "iters":
            key = "iterations" if m.group("what") == "Total" else "warmup_iterations"
            run.stats[key] = int(m.group("num"))
            run.known = True
        elif kind == "name":
            run = _Run(known=True)
            _read_result_name(run, m.group("name"))
            consumed = end
        elif kind == "bench":
            run = _Run(known=True)
            run.benchmark = _model_name(m.group("path"))
            consumed = end
        elif kind == "info":
            if m.group("what") == "Model":
                run = _Run(known=True)
            consumed = _read_info(doc, run, end)
        elif kind == "memory":
            consumed = end
            if run.known:
                yield from _read_memory(run, m, line, doc.line_at(start))
        elif kind == "util":
            consumed = end
            if run.known:
                yield from _read_util(run, m.group("rest"), line, doc.line_at(start))
        else:
            consumed = end
            yield Problem(
                doc.line_at(start), "FastDeploy run failed (Infer Failed)", line, NAME, "warning"
            )


# -- console and result files ---------------------------------------------------------


def _model_name(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _read_result_name(run: _Run, name: str) -> None:
    """ "ResNet50_vd_infer_ort_cpu_8" -> model, backend ort, device cpu, 8 threads."""
    name = _model_name(name.strip())
    m = _RESULT_NAME.match(name)
    if not m:
        run.benchmark = name
        return
    run.benchmark = m.group("model")
    run.device = m.group("device")
    run.params["backend"] = m.group("backend")
    run.params["use_fp16"] = bool(m.group("fp16"))
    if m.group("threads"):
        run.params["cpu_threads"] = int(m.group("threads"))


def _read_info(doc: DocText, run: _Run, end: int) -> int:
    """The "key: value" lines under a Model Info / Backend Info heading."""
    text = doc.text
    consumed = end
    for _ in range(MAX_INFO_LINES):
        if end < 0 or end >= len(text):
            break
        start = end + 1
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        m = _INFO_KEY.match(line)
        if not m:
            break
        _take_info(run, m.group("key"), m.group("value"))
        consumed = start + len(line)
    return consumed


def _flag(value: str) -> bool | None:
    return {"true": True, "1": True, "false": False, "0": False}.get(value.lower())


def _take_info(run: _Run, key: str, value: str) -> None:
    if not value:
        return
    if key == "model_name":
        run.benchmark = _model_name(value)
    elif key == "device":
        run.device = value
    elif key == "backend":
        run.params["backend"] = value
    elif key in ("use_fp16", "include_h2d_d2h"):
        flag = _flag(value)
        if flag is not None:
            run.params[key] = flag
    elif key in ("cpu_thread_nums", "cpu_num_thread"):
        if value.isdigit():
            run.params["cpu_threads"] = int(value)
    elif key == "warmup" and value.isdigit():
        run.warmup = int(value)
    elif key == "repeats" and value.isdigit():
        run.samples = int(value)
    elif key == "profile_mode":
        run.stats["profile_mode"] = value


def _measurement(
    run: _Run,
    metric: str,
    value: float | None,
    unit: str,
    line: int,
    raw: str,
    stat: str = "mean",
    status: str = "ok",
) -> Measurement:
    params = dict(run.params)
    if stat:
        params["stat"] = stat
    return Measurement(
        benchmark=run.benchmark,
        metric=metric,
        value=value,
        unit=unit,
        direction="lower",
        framework="fastdeploy",
        device=run.device,
        params=params,
        version=run.version,
        status=status,  # type: ignore[arg-type]
        samples=run.samples,
        warmup=run.warmup,
        stats=dict(run.stats),
        line=line,
        raw=raw,
    )


def _latency(
    run: _Run, metric: str, num: str, unit: str, line: int, raw: str
) -> Measurement | Problem:
    if not _COMPLETE.fullmatch(num):
        return Problem(line, f"{metric} value {num!r} cannot be read", raw, NAME)
    try:
        q = normalise(float(num), unit)
    except UnitError as e:
        return Problem(line, f"{metric}: {e}", raw, NAME)
    if q.kind != "time":
        return Problem(line, f"{metric} in {unit!r} is not a time", raw, NAME)
    return _measurement(run, metric, q.value, q.unit, line, raw)


def _read_line(doc: DocText, run: _Run, line: str, start: int) -> Iterator[Item]:
    """ "Runtime(ms): 5.03ms.", "End2End(ms): 9.38 ", "Runtime: 1.2 ms", "Runtime initialized"."""
    number = doc.line_at(start)
    raw = line.strip()
    init = _INITIALIZED.search(line)
    if init:
        run.known = True
        run.params.setdefault("backend", init.group("backend").lower())
        run.device = run.device or init.group("device").lower()
        return
    m = _VALUE_LINE.search(line)
    if m:
        run.known = True
        metric = "runtime_latency" if m.group("label") == "Runtime" else "end2end_latency"
        if m.group("word"):
            status = status_of(m.group("word"))
            if status:
                yield _measurement(run, metric, None, "ms", number, raw, status=status)
            else:
                yield Problem(
                    number, f"{metric} value {m.group('word')!r} is not a number", raw, NAME
                )
            return
        if not m.group("num"):
            yield Problem(number, f"{metric} line has no value (cut?)", raw, NAME)
            return
        unit = m.group("unit") or m.group("hunit")
        if m.group("unit") and m.group("unit").lower() != m.group("hunit").lower():
            yield Problem(
                number,
                f"{metric} value in {m.group('unit')!r} under a ({m.group('hunit')}) label",
                raw,
                NAME,
            )
            return
        item = _latency(run, metric, m.group("num"), unit, number, raw)
        if isinstance(item, Measurement) and metric == "runtime_latency":
            if _same(run.last_runtime, item.value):
                return  # the script's echo of the runtime's own average
            run.last_runtime = item.value
        yield item
        return
    plain = _RUNTIME_PLAIN.search(line)
    if plain and run.known:
        item = _latency(
            run, "runtime_latency", plain.group("num"), plain.group("unit"), number, raw
        )
        if isinstance(item, Measurement):
            run.last_runtime = item.value
        yield item


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-4 * max(abs(a), abs(b), 1e-9)


def _read_average(run: _Run, m: re.Match[str], rest: str, line: str, number: int) -> Iterator[Item]:
    """ "Average time of runtime exclude warmup step: 1.72749ms." """
    run.known = True
    rest = rest.strip().rstrip(".")
    num = m.group("num")
    if not num:
        yield Problem(number, "runtime average has no value (cut?)", line.strip(), NAME)
        return
    unit = rest.strip() or ""
    if not unit:
        yield Problem(number, "runtime average has no unit (cut?)", line.strip(), NAME)
        return
    item = _latency(run, "runtime_latency", num, unit, number, line.strip())
    if isinstance(item, Measurement):
        if _same(run.last_runtime, item.value):
            return
        run.last_runtime = item.value
    yield item


def _read_memory(run: _Run, m: re.Match[str], line: str, number: int) -> Iterator[Item]:
    """ "cpu_rss_mb: 812.5 ", "gpu_rss_mb: 1024MB.", "cpu_pss_mb: Failed"."""
    metric = f"{m.group('which')}_rss"
    rest = m.group("rest").strip().rstrip(".")
    raw = line.strip()
    vm = re.fullmatch(rf"(?P<num>{NUMBER})[ \t]*(?P<unit>MB)?", rest, re.I)
    if not vm:
        status = status_of(rest)
        if status:
            yield _measurement(run, metric, None, "MB", number, raw, stat="", status=status)
        else:
            yield Problem(number, f"{metric} value {rest!r} cannot be read", raw, NAME)
        return
    try:
        q = normalise(float(vm.group("num")), "MB")
    except UnitError as e:
        yield Problem(number, f"{metric}: {e}", raw, NAME)
        return
    yield _measurement(run, metric, q.value, q.unit, number, raw, stat="")


def _read_util(run: _Run, rest: str, line: str, number: int) -> Iterator[Item]:
    """ "gpu_util: 35" (nvidia-smi, percent), "gpu_util: 35MB." (a slip in the C++ file)."""
    rest = rest.strip().rstrip(".")
    raw = line.strip()
    vm = re.fullmatch(rf"(?P<num>{NUMBER})[ \t]*(?P<unit>MB|%)?", rest, re.I)
    if not vm:
        status = status_of(rest)
        if status:
            yield _measurement(run, "gpu_util", None, "%", number, raw, stat="", status=status)
        else:
            yield Problem(number, f"gpu_util value {rest!r} cannot be read", raw, NAME)
        return
    if not _COMPLETE.fullmatch(vm.group("num")):
        yield Problem(number, f"gpu_util value {vm.group('num')!r} cannot be read", raw, NAME)
        return
    value = float(vm.group("num"))
    if value <= 1 and not vm.group("unit"):
        yield Problem(
            number,
            f"gpu_util {value:g} may be a fraction (2022 scripts) or a percentage: not stored",
            raw,
            NAME,
            "warning",
        )
        return
    yield _measurement(run, "gpu_util", value, "%", number, raw, stat="")


# -- markdown tables ------------------------------------------------------------------


def _table_end(text: str, start: int, end: int) -> int | None:
    """The end of the table whose header line is text[start:end], None if it is no table."""
    nxt = end + 1
    if nxt >= len(text):
        return None
    sep_end = text.find("\n", nxt)
    sep_end = len(text) if sep_end < 0 else sep_end
    if not _SEPARATOR.match(text[nxt:sep_end]) or "-" not in text[nxt:sep_end]:
        return None
    pos = sep_end
    for _ in range(MAX_TABLE_ROWS):
        if pos >= len(text):
            break
        line_end = text.find("\n", pos + 1)
        line_end = len(text) if line_end < 0 else line_end
        if not text[pos + 1 : line_end].lstrip().startswith("|"):
            break
        pos = line_end
    return pos


@dataclass
class _Columns:
    model: int | None = None
    backend: int | None = None
    device: int | None = None
    precision: int | None = None
    accuracy: int | None = None
    threads: int | None = None
    values: list[tuple[int, str, str, dict[str, ParamValue]]] = field(default_factory=list)


def _value_metric(header: str) -> str | None:
    low = norm_header(header)
    if re.search(r"end2end|端到端|e2e|end-to-end|end to end", low):
        return "end2end_latency"
    if "runtime" in low or "运行时" in low:
        return "runtime_latency"
    return None


def _header_params(header: str) -> dict[str, ParamValue]:
    """A backend or precision named in a value header ("ORT Runtime(ms)", "trt_fp16_run")."""
    low = norm_header(header).replace("runtime", " ")
    params: dict[str, ParamValue] = {}
    m = _BACKEND_WORD.search(low)
    if m:
        params["backend"] = m.group(1)
    p = _PRECISION_WORD.search(low)
    if p:
        params["precision"] = p.group(1)
    return params


def _is_accuracy(low: str, cells: list[str]) -> bool:
    """精度 of percentages (mAP, top-1), or a column named for the accuracy."""
    if not cells:
        return False
    if low in _PRECISION_HEADERS:
        return all(_PERCENT_CELL.match(c) for c in cells)
    return low in ("accuracy", "map", "top1", "top-1", "top-1 acc")


def _columns(headers: list[str], rows: list[list[str]]) -> _Columns:
    cols = _Columns()
    for i, header in enumerate(headers):
        low = norm_header(header)
        cells = [r[i] for r in rows if i < len(r) and not is_empty_cell(r[i])]
        metric = _value_metric(header)
        if metric and low not in _BACKEND_HEADERS:
            cols.values.append((i, header, metric, _header_params(header)))
        elif cells and all(_PRECISION_CELL.match(c) for c in cells):
            cols.precision = i
        elif _is_accuracy(low, cells):
            cols.accuracy = i
        elif low in _MODEL_HEADERS and cols.model is None:
            cols.model = i
        elif low in _BACKEND_HEADERS:
            cols.backend = i
        elif low in _DEVICE_HEADERS:
            cols.device = i
        elif low in _PRECISION_HEADERS and cols.precision is None:
            cols.precision = i
        elif low in _THREAD_HEADERS:
            cols.threads = i
    if (
        cols.model is None
        and cols.values
        and cols.values[0][0] > 0
        and 0
        not in (
            cols.backend,
            cols.device,
            cols.precision,
            cols.accuracy,
        )
    ):
        cols.model = 0  # an unnamed first column names the model
    return cols


def _is_results_table(cols: _Columns) -> bool:
    """FastDeploy's: an End2End column, or a Runtime column beside a backend one."""
    metrics = {metric for _, _, metric, _ in cols.values}
    if "end2end_latency" in metrics:
        return True
    return bool(metrics) and (
        cols.backend is not None or any("backend" in p for *_, p in cols.values)
    )


def _read_table(doc: DocText, start: int, end: int) -> Iterator[Item]:
    text = doc.text
    lines = text[start:end].split("\n")
    first = doc.line_at(start)
    headers, _ = split_cells(lines[0])
    body = [(first + 2 + k, line) for k, line in enumerate(lines[2:]) if line.strip()]
    rows = [split_cells(line)[0] for _, line in body]
    cols = _columns(headers, rows)
    if not _is_results_table(cols):
        return
    cut_last = doc.blank_after(end)
    for index, ((number, line), cells) in enumerate(zip(body, rows, strict=True)):
        raw = line.strip()
        if len(cells) != len(headers):
            closed = split_cells(line)[1]
            reason = (
                "results row cut short"
                if index == len(rows) - 1 and cut_last and not closed
                else f"results row has {len(cells)} cells, the header {len(headers)}"
            )
            yield Problem(number, reason, raw, NAME)
            continue
        yield from _read_row(cols, cells, number, raw)


def _read_row(cols: _Columns, cells: list[str], number: int, raw: str) -> Iterator[Item]:
    run = _Run()
    if cols.model is not None:
        model = cells[cols.model].strip().strip("*`")
        vm = _VERSION_SUFFIX.match(model)
        if vm:
            model, run.version = vm.group("model"), vm.group("version")
        run.benchmark = _model_name(model)
    if cols.backend is not None and not is_empty_cell(cells[cols.backend]):
        run.params["backend"] = cells[cols.backend].strip()
    if cols.device is not None and not is_empty_cell(cells[cols.device]):
        run.device = cells[cols.device].strip()
    if cols.precision is not None and not is_empty_cell(cells[cols.precision]):
        precision = cells[cols.precision].strip().lower()
        run.params["precision"] = {"float32": "fp32", "float16": "fp16"}.get(precision, precision)
    if cols.threads is not None and cells[cols.threads].strip().isdigit():
        run.params["cpu_threads"] = int(cells[cols.threads].strip())
    if cols.accuracy is not None:
        pm = _PERCENT_CELL.match(cells[cols.accuracy].strip())
        if pm:
            run.stats["accuracy"] = float(pm.group(1))
    for index, header, metric, header_params in cols.values:
        cell = cells[index].strip()
        if is_empty_cell(cell):
            continue
        cell_run = _Run(
            benchmark=run.benchmark,
            version=run.version,
            device=run.device,
            params={**header_params, **run.params},
            stats=dict(run.stats),
        )
        status = status_of(cell)
        if status:
            yield _measurement(cell_run, metric, None, "ms", number, raw, status=status)
            continue
        try:
            q = read_quantity(cell, header_unit(header))
        except UnitError as e:
            yield Problem(number, f"{header.strip() or metric}: {e}", raw, NAME)
            continue
        if q.kind != "time":
            yield Problem(number, f"{header.strip()}: {cell!r} is not a time", raw, NAME)
            continue
        yield _measurement(cell_run, metric, q.value, q.unit, number, raw)
