"""The vocabulary of table headers and cells shared by the markdown and whitespace table
parsers: units in headers, metric and dimension names, precision/framework words, status
cells (显存不足 -> oom), dates, bullet lists.

Not a parser (no NAME, ANCHORS or parse): md_tables and ws_tables import from it.
"""

from __future__ import annotations

import re
from datetime import date

from perfboard.model import ParamValue, Status
from perfboard.units import Quantity, UnitError, normalise, split_number, unit_in_header

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
}
_FRAMEWORK_WORD = re.compile(r"(?<![a-z0-9])(" + "|".join(FRAMEWORKS) + r")(?![a-z0-9])")
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
_SLASH_UNIT = re.compile(r"[/_](ms|us|ns|s|mb|gb)\s*$", re.I)


def norm_header(header: str) -> str:
    """Lookup spelling of a header: lower case, inner spaces collapsed, no markup."""
    return " ".join(header.strip().strip("*`").lower().split())


def header_unit(header: str) -> str:
    """The unit a header names, as written ("ms", "MB", "qps"), or "" when it names none."""
    unit = unit_in_header(header)
    if unit:
        return unit
    low = norm_header(header)
    if low in _BARE_UNIT_HEADERS:
        return _BARE_UNIT_HEADERS[low]
    m = _CHINESE_UNIT.search(header)
    if m:
        return _CHINESE_UNITS[m.group(1)]
    m = _SLASH_UNIT.search(header)
    return m.group(1) if m else ""


def unit_kind(unit: str) -> str:
    """ "ms" -> "time", "MB" -> "memory", "x" -> "ratio"; "" for unknown units."""
    try:
        return normalise(1.0, unit).kind
    except UnitError:
        return ""


def metric_for(header: str, kind: str) -> str:
    """A metric name from header words; a time with no metric word is a latency."""
    low = norm_header(header)
    for pattern, metric in _METRIC_WORDS:
        if pattern.search(low):
            return metric
    return _DEFAULT_METRIC.get(kind, kind or "value")


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


def dimension_key(header: str) -> str | None:
    """ "Threads" -> "threads", "bs" -> "batch_size"; None if not a dimension header."""
    low = norm_header(header)
    low = re.sub(r"\s*\(.*\)$", "", low)  # "batch_size (samples)" still names a batch size
    return DIMENSIONS.get(low)


_LEADING_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)?)(?![\d.])")


def dimension_value(cell: str) -> int | float | None:
    """ "4 threads" -> 4, "128" -> 128, "0.5" -> 0.5; None when the cell holds no number."""
    m = _LEADING_NUMBER.match(cell)
    if not m:
        return None
    number = float(m.group(1))
    return int(number) if number.is_integer() else number


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


def read_quantity(cell: str, default_unit: str) -> Quantity:
    """A cell's value in the canonical unit; the cell's own unit wins over the header's.

    Raises UnitError (with a reason fit for a Problem) for text, unknown units, NaN,
    negative or absurd values.
    """
    text = cell.strip()
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    split = split_number(text)
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


def percentile_stat(percent: float) -> str:
    """params["stat"] of a percentile, one spelling whatever the tool printed ("99%",
    "percentile(99%)", "P99", "99.00 percentile", "99.9th"): 99.0 -> "p99", 99.9 ->
    "p99.9". Raises ValueError outside 0-100."""
    if not 0 <= percent <= 100:
        raise ValueError(f"percentile {percent:g} is not between 0 and 100")
    return f"p{percent:g}"
