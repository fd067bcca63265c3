"""The vocabulary of table headers and cells shared by the markdown and whitespace table
parsers: units in headers, metric and dimension names, precision/framework words, status
cells (显存不足 -> oom), dates, bullet lists.

Not a parser (no NAME, ANCHORS or parse): md_tables and ws_tables import from it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import fields
from datetime import date
from typing import Any

from ingest.text import lowered_for_literals
from perfboard.model import Measurement, ParamValue, Status
from perfboard.units import (
    Quantity,
    UnitError,
    is_known,
    normalise,
    split_number,
    unit_in_header,
)

# How far above a table its heading and bullet list may be (a comment, not a whole log).
CONTEXT_WINDOW = 64 * 1024

# Dimension column names (lower case, NFKC) -> the params key they become.
DIMENSIONS: dict[str, str] = {
    "threads": "threads",
    "thread": "threads",
    "thread_num": "threads",
    "num_threads": "threads",
    "线程数": "threads",
    "线程": "threads",
    "batch_size": "batch_size",
    "batchsize": "batch_size",
    "batch size": "batch_size",
    "batch": "batch_size",
    "bs": "batch_size",
    "seq_len": "seq_len",
    "seqlen": "seq_len",
    "max_seq_len": "seq_len",
    "max_seqlen": "seq_len",
    "seq len": "seq_len",
    "sequence length": "seq_len",
    "sequence_length": "seq_len",
    "序列长度": "seq_len",
}

_OOM_WORDS = ("显存不足", "内存不足", "oom", "out of memory", "outofmemory")
_ERROR_WORDS = ("error", "failed", "fail", "crash", "失败", "报错", "出错")
# Cells that mean "no value here" (not a problem, not a status).
_EMPTY_CELLS = frozenset({"", "-", "--", "—", "–", "/", "n/a", "na", "none"})

FRAMEWORKS: dict[str, str] = {
    "paddle": "paddle",
    "paddlepaddle": "paddle",
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "pytorch": "pytorch",
    "torch": "pytorch",
    "mxnet": "mxnet",
    "onnxruntime": "onnxruntime",
    "openvino": "openvino",
    "tensorrt": "tensorrt",
    "trt": "tensorrt",
}
# A framework name, alone or with its version: "tf2.3", "paddle2.1", "TF2" (the version
# is not part of the name; "tf 2.4", "pytorch-1.8" have a separator anyway). "tf32" is a
# precision, not TensorFlow 32.
_FRAMEWORK_WORD = re.compile(
    r"(?<![a-z0-9])(" + "|".join(FRAMEWORKS) + r")"
    r"(?:(?![a-z0-9])|(?!32(?![\d.]))(?=v?\d+(?:\.\d+)*(?![a-z0-9])))"
)
_PRECISION_WORD = re.compile(
    r"(?<![a-z0-9])(fp32|fp16|bf16|int8|int4|tf32|float32|float16)(?![0-9])"
)
_PRECISIONS = {"float32": "fp32", "float16": "fp16"}
_QUANT_WORD = re.compile(r"(?<![a-z])(qat|ptq)(?![a-z])")

# Ordered: the first pattern found in a header names the metric.
_METRIC_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"gpu[_ ]?mem|显存"), "gpu_memory"),
    (re.compile(r"mem(?:ory)?(?![a-z])|内存"), "memory"),
    (re.compile(r"gpu[_ ]?time"), "gpu_time"),
    (re.compile(r"total[_ ]?time"), "total_time"),
    (re.compile(r"latency|延迟|时延|耗时"), "latency"),
    (re.compile(r"throughput|吞吐"), "throughput"),
    (re.compile(r"(?<![a-z])qps(?![a-z])"), "qps"),
    (re.compile(r"(?<![a-z])fps(?![a-z])"), "fps"),
)
_DEFAULT_METRIC = {"time": "latency", "throughput": "throughput", "memory": "memory"}

# Headers that are a unit on their own ("QPS", "FPS") and units written in Chinese.
_BARE_UNIT_HEADERS = {"qps": "qps", "fps": "fps"}
_CHINESE_UNITS = {"毫秒": "ms", "微秒": "us", "纳秒": "ns", "秒": "s"}
_CHINESE_UNIT = re.compile(r"[(\[]\s*(毫秒|微秒|纳秒|秒)\s*[)\]]")
# "latency_ms", "time/us": a unit after a separator. "/s" alone is no unit of time: "t/s",
# "img/s" are rates (a header that is a whole rate unit is found before this).
_SLASH_UNIT = re.compile(r"(?:_(ms|us|ns|s|mb|gb)|/(ms|us|ns|mb|gb))\s*$", re.I)


# Functions of a header (or a unit, or a cell's label) alone, cached: the column readers ask
# them once per cell, and a team's tables reuse a few hundred headers.
_header_cache = functools.lru_cache(maxsize=4096)


@_header_cache
def norm_header(header: str) -> str:
    """Lookup spelling of a header: lower case, inner spaces collapsed, no markup."""
    return " ".join(header.strip().strip("*`").lower().split())


@_header_cache
def header_unit(header: str) -> str:
    """The unit a header names, as written ("ms", "MB", "qps"), or "" when it names none."""
    unit = unit_in_header(header)
    if unit:
        return unit
    low = norm_header(header)
    if "/" in low and is_known(low):
        return low  # "t/s", "tok/s", "samples/s": the header is the unit (llama-bench)
    if low in _BARE_UNIT_HEADERS:
        return _BARE_UNIT_HEADERS[low]
    m = _CHINESE_UNIT.search(header)
    if m:
        return _CHINESE_UNITS[m.group(1)]
    m = _SLASH_UNIT.search(header)
    return (m.group(1) or m.group(2)) if m else ""


@_header_cache
def unit_kind(unit: str) -> str:
    """ "ms" -> "time", "MB" -> "memory", "x" -> "ratio"; "" for unknown units."""
    try:
        return normalise(1.0, unit).kind
    except UnitError:
        return ""


@_header_cache
def metric_for(header: str, kind: str) -> str:
    """A metric name from header words; a time with no metric word is a latency."""
    low = norm_header(header)
    for pattern, metric in _METRIC_WORDS:
        if pattern.search(low):
            return metric
    return _DEFAULT_METRIC.get(kind, kind or "value")


@_header_cache
def framework_in(header: str) -> str | None:
    m = _FRAMEWORK_WORD.search(norm_header(header))
    return FRAMEWORKS[m.group(1)] if m else None


def precision_params(header: str) -> dict[str, ParamValue]:
    """ "QAT INT8 Latency (ms)" -> {"precision": "int8", "quantization": "qat"}."""
    low = norm_header(header)
    params: dict[str, ParamValue] = {}
    m = _PRECISION_WORD.search(low)
    if m:
        params["precision"] = _PRECISIONS.get(m.group(1), m.group(1))
    m = _QUANT_WORD.search(low)
    if m:
        params["quantization"] = m.group(1)
    return params


@_header_cache
def dimension_key(header: str) -> str | None:
    """ "Threads" -> "threads", "bs" -> "batch_size"; None if not a dimension header."""
    low = norm_header(header)
    low = re.sub(r"\s*\(.*\)$", "", low)  # "batch_size (samples)" still names a batch size
    return DIMENSIONS.get(low) or DIMENSIONS.get(low.replace("-", "_"))  # "batch-size"


_LEADING_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)?)(?![\d.])")


def dimension_value(cell: str) -> int | float | None:
    """ "4 threads" -> 4, "128" -> 128, "0.5" -> 0.5; None when the cell holds no number."""
    m = _LEADING_NUMBER.match(cell)
    if not m:
        return None
    number = float(m.group(1))
    return int(number) if number.is_integer() else number


def flag(value: str) -> bool | None:
    """A setting's true/false as a log prints it (C++ prints 1/0); anything else (None, a
    word) is no setting."""
    low = value.lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    return None


def is_empty_cell(cell: str) -> bool:
    return cell.strip().lower() in _EMPTY_CELLS


def status_of(cell: str) -> Status | None:
    """ "显存不足" / "OOM" -> "oom", "failed" -> "error"; None for anything else."""
    low = cell.strip().lower()
    if any(word in low for word in _OOM_WORDS):
        return "oom"
    if any(word in low for word in _ERROR_WORDS):
        return "error"
    return None


_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?")


_MARKUP = re.compile(r"^[*_`~]+|[*_`~]+$")
_PLUS_MINUS = re.compile(r"\s*(?:±|\+/-|\+-)\s*")


_MARKS = frozenset("*_`~")


def clean_cell(cell: str) -> str:
    """A cell without bold/code markers around it: "**0.153533**" -> "0.153533"."""
    text = cell.strip()
    if text and (text[0] in _MARKS or text[-1] in _MARKS):  # most cells: nothing to take
        return _MARKUP.sub("", text).strip()
    return text


def split_plus_minus(cell: str) -> tuple[str, str | None]:
    """ "21.96 ± 0.05" -> ("21.96", "0.05"), "1.5ms ± 0.1" -> ("1.5ms", "0.1"); else
    (the cell, None)."""
    text = clean_cell(cell)
    if "±" not in text and "+" not in text:  # every spelling of _PLUS_MINUS holds one
        return text, None
    parts = _PLUS_MINUS.split(text, maxsplit=1)
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    return text, None


@functools.lru_cache(maxsize=2048)
def cell_number(cell: str) -> tuple[float, str] | None:
    """(number, unit as written) of a value cell: bold markers, thousands separators and a
    "± x" part dropped ("**24,091,916.00**" -> (24091916.0, "")); None for text. A unit
    written once after the spread is the value's too ("92.2 ± 0.5 ms" -> (92.2, "ms"))."""
    text, spread = split_plus_minus(cell)
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    split = split_number(text)
    if split is not None and not split[1] and spread:
        after = split_number(spread.replace(",", ""))
        if after is not None and after[1]:
            return split[0], after[1]
    return split


def read_quantity(cell: str, default_unit: str) -> Quantity:
    """A cell's value in the canonical unit; the cell's own unit wins over the header's.

    Bold markers, thousands separators and a "± std" part are dropped (split_plus_minus
    gives the std). Raises UnitError (with a reason fit for a Problem) for text, unknown
    units, NaN, negative or absurd values.
    """
    split = cell_number(cell)
    if split is None:
        raise UnitError(f"{cell.strip()!r} is not a number")
    number, unit = split
    unit = unit or default_unit
    if not unit:
        raise UnitError(f"{cell.strip()!r} has no unit and its header names none")
    return normalise(number, unit)


_DATE = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?")


def parse_date(text: str) -> date | None:
    """ "2020-02-04", "2020/2/4", "2019年12月24日" -> a date; None if none or invalid."""
    m = _DATE.search(text)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


# "- key: value" bullets, nested ones indented below a key without a value.
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*?)[ \t]*$", re.M)


def bullet_pairs(text: str) -> list[tuple[str, str]]:
    """("key", "value") of "- key: value" bullets; a key with nested bullets and no value
    gets them joined with ", " ("- 软件信息:" over "    - CUDA 10.0" -> "CUDA 10.0")."""
    bullets = [(len(m.group(1).expandtabs(4)), m.group(2)) for m in _BULLET.finditer(text)]
    pairs: list[tuple[str, str]] = []
    for index, (indent, content) in enumerate(bullets):
        key, colon, value = content.partition(":")
        if not colon:
            continue
        value = value.strip()
        if not value:
            nested = []
            for child_indent, child in bullets[index + 1 :]:
                if child_indent <= indent:
                    break
                nested.append(child)
            value = ", ".join(nested)
        pairs.append((norm_header(key).replace(" ", ""), value))
    return pairs


# A number as benchmarks print it: signed, exponent, nan / inf (a Problem, not a value,
# where a parser meets one). Parsers build their patterns on it.
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf(?:inity)?)"


def stat_direction(direction: str, stat: object) -> str:
    """Which way a statistic of a metric is better: as the metric's own, except a spread
    (stat "std"), which is better smaller even for a throughput ("21.96 ± 0.05 t/s")."""
    return "lower" if stat == "std" else direction


def percentile_stat(percent: float) -> str:
    """params["stat"] of a percentile, one spelling whatever the tool printed ("99%",
    "percentile(99%)", "P99", "99.00 percentile", "99.9th"): 99.0 -> "p99", 99.9 ->
    "p99.9". Raises ValueError outside 0-100."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percentile {percent:g} is not between 0 and 100")
    return f"p{percent:g}"


# A unit the text around a table states for it: "单位 ms", "单位：us", "time in us",
# "times are in ms", "unit: ns", "(us)" alone in a caption.
_TEXT_UNIT_WORD = (
    r"(ms|us|µs|μs|ns|s|sec|seconds|milliseconds|microseconds|nanoseconds|毫秒|微秒|纳秒|秒)"
)
_TEXT_UNIT = (
    re.compile(r"单位\s*(?:为|是)?\s*[:：]?\s*" + _TEXT_UNIT_WORD + r"(?![A-Za-z])", re.I),
    re.compile(r"\bunits?\s*(?:is|are|in)?\s*[:=]?\s*" + _TEXT_UNIT_WORD + r"\b", re.I),
    re.compile(
        r"\b(?:time|times|timing|timings|latency|latencies|results?|numbers|values|耗时)\s+"
        r"(?:is\s+|are\s+)?(?:in|measured\s+in)\s+" + _TEXT_UNIT_WORD + r"\b",
        re.I,
    ),
    re.compile(r"^[^\n|]{0,60}?[(（]\s*" + _TEXT_UNIT_WORD + r"\s*[)）][^\n|]{0,20}$", re.I | re.M),
)
# Words each of _TEXT_UNIT's patterns needs, one at least, in the lowered text: most
# captions state no unit, and four searches of each (one at every line start) cost more
# than the markdown tables' other reading of a chunk of pasted PR tables.
_TEXT_UNIT_NEEDS = (
    ("单位",),
    ("unit",),
    ("time", "timing", "latenc", "result", "numbers", "values", "耗时"),
    ("(", "（"),
)


def unit_in_text(text: str) -> str:
    """The time unit a caption or sentence states ("单位 ms" -> "ms"), "" if none; the last
    statement wins (the nearest to a table below it)."""
    found: list[tuple[int, str]] = []
    low = lowered_for_literals(text)
    for pattern, needed in zip(_TEXT_UNIT, _TEXT_UNIT_NEEDS, strict=True):
        if low is not None and not any(word in low for word in needed):
            continue  # a literal every match of the pattern holds is absent: no match
        for m in pattern.finditer(text):
            found.append((m.start(1), m.group(1)))
    if not found:
        return ""
    unit = max(found)[1]
    return _CHINESE_UNITS.get(unit, unit)


# Column headers (or row labels) that name the variant a value was measured with.
_VARIANT_WORD = re.compile(
    r"(?<![a-z])(before|after|develop|dev|this\s*pr|pr|base|baseline|origin|original|old|new|"
    r"opt|optimized|optimised|optimization|ours|ref|reference|native|cudnn|cublas|cutlass|"
    r"triton|eager|static|dynamic|nv|w/o?|with|without)(?![a-z])"
    r"|优化前|优化后|修改前|修改后|原始|原版|旧|新|静态图|动态图",
)
_BASELINE_WORD = re.compile(
    r"(?<![a-z])(before|develop|dev|base|baseline|origin|original|old|w/o|without|ref|reference)"
    r"(?![a-z])|优化前|修改前|原始|原版|旧"
)
_NEW_WORD = re.compile(
    r"(?<![a-z])(after|this\s*pr|pr|new|opt|optimized|optimised|ours|w/|with)(?![a-z/])"
    r"|优化后|修改后|新"
)
_THREADS_LABEL = re.compile(r"^(\d+)\s*(?:threads?|线程)$|^(?:threads?|线程数?)\s*[=:]?\s*(\d+)$")


@_header_cache
def variant_label(header: str) -> bool:
    """Whether a header names a variant: a framework, a before/after word, a precision, a
    thread count ("paddle", "this PR", "优化后", "FP16", "4 threads", "paddle 2.3")."""
    low = norm_header(header)
    return bool(
        _VARIANT_WORD.search(low)
        or _FRAMEWORK_WORD.search(low)
        or _PRECISION_WORD.search(low)
        or _THREADS_LABEL.match(low)
    )


@_header_cache
def variant_rank(label: str) -> int:
    """Which side of a comparison a variant is on: 0 a baseline (before, develop, old, 优化前,
    w/o), 1 a competitor framework (pytorch, tensorflow), 2 anything else, 3 the change
    (after, this PR, new, opt, 优化后, w/). The lowest ranked is the "before" of a claim."""
    low = norm_header(label)
    if _BASELINE_WORD.search(low):
        return 0
    if _NEW_WORD.search(low):
        return 3
    fw = framework_in(low)
    if fw is not None and fw != "paddle":
        return 1
    return 2


def variant_word(header: str) -> bool:
    """A before/after word (develop, this PR, old, 优化后...), not a framework or precision."""
    return bool(_VARIANT_WORD.search(norm_header(header)))


def threads_of(label: str) -> int | None:
    m = _THREADS_LABEL.match(norm_header(label))
    return int(m.group(1) or m.group(2)) if m else None


# Derived columns: speedups, differences, ratios (claims, never measurements).
DERIVED_HEADER = re.compile(
    r"speed\s*-?\s*up|加速|提升|ratio|diff|gap|差距|差异|对比|faster|slower|improve|gain|"
    r"reduction|倍数|相对|vs\.?(?![a-z])"
)
# Accuracy columns: never times.
ACCURACY_HEADER = re.compile(
    r"(?<![a-z])(acc|accuracy|map|top-?1|top-?5|loss|bleu|f1|auc|precision@|recall|iou|ppl|"
    r"perplexity|wer|cer)(?![a-z])|精度|准确率|召回"
)
# Model-size columns of llama-bench and friends: the model's size, not a measurement.
SIZE_HEADERS = frozenset(
    {"size", "params", "param", "parameters", "model size", "参数量", "n_params", "#params"}
)


_SLOWER = re.compile(r"slower|worse|behind|慢|下降|降低|差于|劣于|落后|不如")
_TIMES_FIGURE = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*[x×倍]")
_PERCENT_FIGURE = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*%")
_BARE_FIGURE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def derived_figure(cell: str) -> tuple[float | None, float | None] | None:
    """(speedup, percent) a derived cell states: "2.2x" -> (2.2, None), "faster than 96.58%"
    -> (None, 96.58), "slower than 3%" / "慢3%" -> (None, -3.0), "-2.89%" -> (None, -2.89),
    "慢49.0x" -> (1/49, None), "1.36" -> (1.36, None); None when the cell states none."""
    text = clean_cell(cell).replace(",", "")
    low = text.lower()
    # "slower than 3%", "慢49.0x", "差于 10.4%" (worse than), "落后 5%" (behind)
    slower = _SLOWER.search(low) is not None
    m = _TIMES_FIGURE.search(low)
    if m:
        value = float(m.group(1))
        if slower and value > 0:
            return 1 / value, None
        return value, None
    m = _PERCENT_FIGURE.search(low)
    if m:
        value = float(m.group(1))
        return None, -abs(value) if slower else value
    m = _BARE_FIGURE.fullmatch(low)
    if m:
        return float(low), None
    return None


# Measurement's fields in the order the parsers that build one by position rely on
# (trtexec._settled, llm_serving._block_values: a fifth to a third faster than by keyword,
# for each of the many measurements of a dense log). A change to the model stops the
# import here: change those calls with it.
MEASUREMENT_FIELDS = (
    "benchmark",
    "metric",
    "value",
    "unit",
    "task",
    "direction",
    "framework",
    "device",
    "params",
    "testbed",
    "project",
    "version",
    "measured_at",
    "status",
    "samples",
    "warmup",
    "stats",
    "run",
    "line",
    "raw",
)


def fields_in_order(model: type, names: tuple[str, ...], callers: str) -> dict[str, Any]:
    """A model's field defaults by name, once its fields are checked to be `names` in this
    order: a parser that builds records by position stops at import, not with shifted
    values, when the model changes (`callers`: the calls to change with it)."""
    if tuple(f.name for f in fields(model)) != names:  # pragma: no cover
        raise ImportError(f"{model.__name__}'s fields changed: update {callers}")
    return {f.name: f.default for f in fields(model)}


# The defaults of the fields such a call does not set, as the model has them.
MEASUREMENT_DEFAULTS = fields_in_order(
    Measurement, MEASUREMENT_FIELDS, "trtexec._settled and llm_serving._block_values"
)
