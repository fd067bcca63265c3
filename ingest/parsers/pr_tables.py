"""Performance tables of pull requests and issues: variants set against configs.

docs/formats.md section 4 ("variant tables"). Not a parser of its own (no NAME, ANCHORS):
md_tables finds every markdown table and hands this module the ones its phase, results
and op readers do not take. A performance PR nearly always carries such a table, and no
two are laid out alike, so the table is read by what its headers and cells say:

- variants as columns: "before | after", "develop | this PR", "优化前 | 优化后",
  "pytorch | paddle old | paddle new", "torch(ns) | paddle优化后(ns)", "FP32 | INT8",
  "Origin GPU Time | PR GPU time | tensorflow"; the other columns (op, shape, dtype, case,
  axes, device, repeat_times ...) are the config that names the series;
- variants as rows: a first column of variant labels ("w/ optimization", "torch",
  "paddle动态图") against metric columns, or a transposed table whose header runs over
  the configs ("#rows | 28672 | 14336", "seconds / slice op | cpu | gpu");
- profiler-event tables with a variant column (Calls / Total / Min. / Max. / Ave. /
  Ratio.): a measurement per statistic and variant;
- derived columns and rows (speed up "2.2x", "faster than 96.58%", "diff with pytorch",
  "差于 10.4%", "nv/paddle") become Claims, never latencies;
- a model column ("模型 | 优化前 | 优化后", the benchmark is the cell), a model in the
  corner over metric rows ("Ernie Large | -DWIHT_MKLDNN=OFF" over "latency"), models
  down a transposed table ("batch-size | 1 | 2" under "#### tensorrt").

Frameworks are named with or without a version ("tf2.3", "torch 1.10", "paddle develop").
A column of bare numbers whose header names no variant, metric or unit is never a param:
counts before the values (M, N, 阶数) are configs, anything else is not read (a warning).

Each variant's value is a Measurement with params["variant"] the label as written. Its
unit is the cell's own, else the header's (column, row label, section row, corner), else
the one unit all the table's cells agree on (with a warning), else the one the text just
above or a heading of its section states ("单位 ms", "time in us", "### Latency(ms)"),
else none: stored without a unit, with a warning naming the table. A unit is never
guessed; cells of one column whose units put them 1000 times apart are stored as written,
with a warning (a mistyped "13s" beside "16us").
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from ingest.parsers.cells import (
    ACCURACY_HEADER,
    CONTEXT_WINDOW,
    DERIVED_HEADER,
    SIZE_HEADERS,
    cell_number,
    clean_cell,
    derived_figure,
    dimension_key,
    dimension_value,
    framework_in,
    header_unit,
    is_empty_cell,
    metric_for,
    norm_header,
    precision_params,
    split_plus_minus,
    status_of,
    threads_of,
    unit_in_text,
    unit_kind,
    variant_label,
    variant_rank,
)
from ingest.text import line_matches
from perfboard.model import Claim, Direction, Item, Measurement, ParamValue, Problem, Status
from perfboard.units import UnitError, canonical_unit, normalise

if TYPE_CHECKING:
    from ingest.parsers.md_tables import _Row, _Table
    from ingest.text import DocText

PARSER = "md_tables"  # the parser these items are stored under

# How much text above a table may caption it or state its unit.
_ABOVE_CHARS = 2000
_ABOVE_LINES = 6

_OP_KEYS = frozenset(
    {"op", "ops", "api", "op_name", "op name", "op_type", "op type", "operator", "kernel"}
    | {"算子", "算子名", "算子名称", "op名"}
)
_MODEL_KEYS = frozenset(
    {"model", "models", "模型", "模型名", "模型名称", "benchmark", "network", "net"}
)
_DEVICE_KEYS = frozenset({"device", "设备", "gpu", "硬件", "hardware", "platform", "平台"})
_VARIANT_KEYS = frozenset(
    {"", "type", "variant", "variants", "framework", "method", "方法", "方案", "impl"}
    | {"implementation", "框架", "对比"}
)
# Words of a value header that name the metric, not the variant: stripped from the label.
_METRIC_HEADER = re.compile(
    r"gpu[_ ]?time|cpu[_ ]?time|total[_ ]?time|kernel[_ ]?time|time|latency|perf(?:ormance)?|"
    r"cost|duration|elapsed|耗时|时间|时延|延迟|速度|性能|显存|内存|throughput|吞吐",
    re.I,
)
_METRIC_EVIDENCE = re.compile(
    r"time|latency|perf|cost|duration|elapsed|耗时|时间|时延|延迟|速度|性能|throughput|吞吐"
)
_DEVICE_WORD = re.compile(
    r"^(cpu|gpu|xpu|npu|mlu|dcu|tpu|cuda|v100|a100|a800|h100|h800|t4|p4|p40|p100|a10|a30|"
    r"k40|k80|rtx ?\d+|\d{4}(?:ti)?|mi\d+|tesla .+|nvidia .+)$"
)
_FORWARD = re.compile(r"forward|(?<![a-z])fwd(?![a-z])|前向|正向")
_BACKWARD = re.compile(r"backward|(?<![a-z])bwd(?![a-z])|反向|(?<![a-z])grad(?![a-z])")
_OP_IN_CAPTION = re.compile(
    r"(?<![\w/`])([A-Za-z][\w.]*?)(?:_op)?\s*(?:\b(?i:op|ops)\b|算子)|"
    r"^\W*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\W*$|"
    # "conv2d forward, V100", "layer_norm grad": an op name, then the pass
    r"(?<![\w/`])([A-Za-z][\w.]*)\s+(?i:forward|backward|grad|fwd|bwd)\b"
)
# A markdown heading (the sections a table sits in) and its level.
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_UNIT_WORD = re.compile(
    r"(?<![a-z])(ns|us|µs|μs|ms|s|sec|seconds|milliseconds|microseconds|nanoseconds)(?![a-z])"
    r"|(毫秒|微秒|纳秒|秒)"
)
_CHINESE = {"毫秒": "ms", "微秒": "us", "纳秒": "ns", "秒": "s"}
_PROFILER = re.compile(r"profil|timeline|nvprof|nsys", re.I)
_PARENS = re.compile(r"^(?P<outer>.*?)\s*[(（](?P<inner>[^()（）]+)[)）]\s*(?P<rest>.*)$")
_SPACES = re.compile(r"\s+")

_PROFILE_STATS = {
    "calls": "calls",
    "total": "total",
    "min.": "min",
    "min": "min",
    "max.": "max",
    "max": "max",
    "ave.": "mean",
    "ave": "mean",
    "avg": "mean",
    "avg.": "mean",
    "average": "mean",
    "mean": "mean",
    "ratio.": "ratio",
    "ratio": "ratio",
}


def _problem(
    line: int, reason: str, raw: str, severity: Literal["error", "warning"] = "error"
) -> Problem:
    return Problem(line=line, reason=reason, raw=raw, parser=PARSER, severity=severity)


# ---------------------------------------------------------------------------------------
# What the text around a table says
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Context:
    caption: str = ""  # the nearest line above the table, markup stripped
    text_unit: str = ""  # a time unit the text just above states
    op: str = ""  # an op the caption names
    task: str = ""  # op-forward / op-backward from the caption
    params: dict[str, ParamValue] = field(default_factory=dict)  # precision from the caption
    profiler: bool = False  # the text speaks of a profiler
    variant: str = ""  # a caption that is a variant label ("#### paddle", "#### tensorrt")


_NOT_OPS = frozenset(
    {"the", "this", "that", "these", "those", "a", "an", "each", "every", "all", "some", "one"}
    | {"our", "your", "its", "new", "old", "same", "other", "which", "paddle", "per", "single"}
    | {"custom", "fused", "cuda", "gpu", "cpu", "the_op", "and", "of", "for", "by"}
    | {"both", "in", "on", "at", "to", "from", "as", "with", "without", "model", "models"}
    | {"network", "net", "layer", "kernel", "kernels", "total", "average", "avg", "mean"}
    | {"time", "speed", "performance", "result", "results", "training", "inference", "test"}
    | {"op", "ops", "api", "is", "are", "was", "pass"}
)


def _op_named(text: str, snake: bool = True) -> str:
    """The op a caption names: "- stack Op:" -> "stack", "yolo_box" alone -> "yolo_box"
    (with snake); not "the op" or "this op"."""
    for m in _OP_IN_CAPTION.finditer(text):
        name = m.group(1) or (m.group(2) if snake else "") or m.group(3)
        if name and name.lower() not in _NOT_OPS:
            return name
    return ""


def _context(doc: DocText, table: _Table) -> _Context:
    text = doc.text
    start = max(0, table.header_start - _ABOVE_CHARS)
    lines = text[start : table.header_start].split("\n")
    near: list[str] = []
    for line in reversed(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.count("|") >= 2:
            break  # the table above this one: its lines caption nothing
        near.append(stripped)
        if len(near) >= _ABOVE_LINES:
            break
    near.reverse()
    ctx = _Context()
    if near:
        ctx.caption = near[-1].strip("*#`_: ：").strip()
    ctx.text_unit = unit_in_text("\n".join(near))
    caption = norm_header(ctx.caption)
    if len(caption) <= 80:
        if _BACKWARD.search(caption):
            ctx.task = "op-backward"
        elif _FORWARD.search(caption):
            ctx.task = "op-forward"
        ctx.params = precision_params(caption)
        ctx.op = _op_named(ctx.caption)
        if len(caption) <= 30 and variant_label(caption) and not ctx.op:
            ctx.variant = ctx.caption
    ctx.profiler = bool(_PROFILER.search("\n".join(near)))
    if not ctx.text_unit:
        ctx.text_unit = _section_unit(text, table.header_start, near[-1] if near else "")
    return ctx


def _section_unit(text: str, end: int, caption: str) -> str:
    """The time unit a heading of the sections the table sits in states ("### 2. Average
    Latency(ms)" over "#### paddle" and "#### tensorrt" and their tables): the nearest
    heading of each level above the table, nearest first."""
    found = _HEADING.match(caption)
    limit = len(found.group(1)) if found else 7
    for heading in reversed(_headings_between(text, max(0, end - CONTEXT_WINDOW), end)):
        level = len(heading.group(1))
        if level >= limit:
            continue  # the caption itself, or a section beside (not around) the table
        unit = unit_in_text(heading.group(2))
        if unit:
            return unit
        limit = level
    return ""


def _headings_between(text: str, start: int, end: int) -> list[re.Match[str]]:
    """_HEADING.finditer(text, start, end), from the text's headings found once: a
    document of many tables searched the 64 KiB above each one again (a 4 MiB chunk of
    pasted PR tables: 1,700 tables, 0.17 s)."""
    starts, found = _headings_of(text)
    inside = found[bisect_left(starts, start) : bisect_left(starts, end)]
    if inside and inside[-1].end() > end:  # a heading line that `end` cuts: cut it too
        last = _HEADING.match(text, inside[-1].start(), end)
        inside = inside[:-1] + ([last] if last else [])
    return inside


# The text last asked about (one document or chunk, its tables read in turn) and its
# headings. Kept by identity, not in an lru_cache: that compared a new chunk equal to the
# last one (a log that repeats itself) character by character at every table, 1.4 ms each.
_last_headings: list = [None, ([], [])]


def _headings_of(text: str) -> tuple[list[int], list[re.Match[str]]]:
    if _last_headings[0] is not text:
        found = line_matches(text, _HEADING, ("#",))  # as _HEADING.finditer(text), faster
        _last_headings[:] = [text, ([m.start() for m in found], found)]
    return _last_headings[1]


# ---------------------------------------------------------------------------------------
# Columns
# ---------------------------------------------------------------------------------------

Role = Literal["config", "value", "derived", "skip", "variant", "op", "device", "model", "unread"]


@dataclass(slots=True)
class _Col:
    index: int
    header: str
    role: Role
    key: str = ""  # config: the params key
    label: str = ""  # value: the variant as written ("" in a variants-as-rows table)
    unit: str = ""  # value: the header's unit as written
    metric: str = ""  # value: from the header's words ("" -> from the unit's kind)
    framework: str = "paddle"
    benchmark: str = ""  # a header naming the op: "LookupTableV2Grad(this PR)"
    task: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    numeric: str = ""  # config: "int" / "float" when its cells are bare numbers


def _config_key(header: str) -> str:
    key = norm_header(header)
    return dimension_key(header) or _SPACES.sub("_", key) or "config"


def _number_of(cell: str) -> tuple[float, str] | None:
    """A value cell's number and unit: "**1.5**", "24,091,916.00", "1.5 ± 0.1", and the
    value before a note in parentheses ("0.87ms (1.15x)")."""
    n = cell_number(cell)
    if n is None:
        noted = _NOTED.match(split_plus_minus(cell)[0])
        n = cell_number(noted.group(1)) if noted else None
    return n


def _numbers(rows: list[_Row], index: int) -> list[tuple[float, str]]:
    found = []
    for row in rows:
        n = _number_of(row.cells[index])
        if n is not None:
            found.append(n)
    return found


def _classify(header: str, index: int, rows: list[_Row]) -> _Col:
    low = norm_header(header)
    numbers = _numbers(rows, index)
    cells = [row.cells[index] for row in rows if not is_empty_cell(row.cells[index])]
    if low in _OP_KEYS:
        return _Col(index, header, "op")
    if low in _MODEL_KEYS and not numbers:
        return _Col(index, header, "model")
    if low in _DEVICE_KEYS and not numbers:
        return _Col(index, header, "device")
    if DERIVED_HEADER.search(low):
        return _Col(index, header, "derived")
    if ACCURACY_HEADER.search(low):
        return _Col(index, header, "skip")  # accuracy, mAP, loss: never a time
    if low in SIZE_HEADERS or dimension_key(header):
        return _Col(index, header, "config", key=_config_key(header))
    unit = header_unit(header)
    kind = unit_kind(unit)
    if kind == "ratio":
        return _Col(index, header, "derived")
    if kind in ("time", "throughput", "memory") and numbers:
        return _value_col(index, header, unit)
    if not numbers:
        if cells and all(derived_figure(c) for c in cells):
            return _Col(index, header, "derived")
        return _Col(index, header, "config", key=_config_key(header))
    cell_units = {unit_kind(u) if u else "" for _, u in numbers}
    if cell_units == {"ratio"}:
        return _Col(index, header, "derived")  # every number a "1.36x": speedups
    if variant_label(header) or _METRIC_EVIDENCE.search(low) or cell_units & {"time"}:
        return _value_col(index, header, unit)
    # Bare numbers under a header that names no variant, metric or unit: a config (M, N,
    # 阶数) only if its numbers are counts; _column_table decides by where it stands.
    integers = all(n.is_integer() and not u for n, u in numbers)
    return _Col(
        index, header, "config", key=_config_key(header), numeric="int" if integers else "float"
    )


def _value_col(index: int, header: str, unit: str) -> _Col:
    col = _Col(index, header, "value", unit=unit)
    text = clean_cell(header)
    m = _PARENS.match(text)
    if m and m.group("outer") and header_unit(f"({m.group('inner')})") == "":
        inner = m.group("inner").strip()
        if variant_label(inner) and not variant_label(m.group("outer")):
            # "LookupTableV2Grad(this PR)": the op, then the variant
            col.benchmark = f"op/{m.group('outer').strip()}"
            text = inner + " " + m.group("rest")
    if unit:
        text = re.sub(r"[(（\[]\s*" + re.escape(unit) + r"\s*[)）\]]", " ", text)
    low = norm_header(text)
    stripped = _METRIC_HEADER.sub(" ", text)
    # "Origin GPU Time" -> "Origin", "优化前耗时" -> "优化前"; a label without metric words
    # stays as written ("-DWIHT_MKLDNN=OFF")
    label = _SPACES.sub(" ", stripped).strip(" -_:/") if stripped != text else text.strip()
    col.label = label or text.strip() or header
    col.metric = metric_for(header, "") if _has_metric_word(header) else ""
    col.framework = framework_in(col.label) or "paddle"
    col.params = precision_params(col.label)
    threads = threads_of(col.label)
    if threads is not None:
        col.params["threads"] = threads
    if _BACKWARD.search(low):
        col.task = "op-backward"
    elif _FORWARD.search(low):
        col.task = "op-forward"
    return col


def _has_metric_word(header: str) -> bool:
    return metric_for(header, "") not in ("value", "")


# ---------------------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Units:
    """The units a table's parts state, and what was said about them."""

    text: str  # from the text above
    corner: str = ""  # from the corner header ("seconds / slice op")
    cells: str = ""  # the one unit every unit-bearing value cell agrees on
    disagree: bool = False  # value cells carry several units
    used_cells: bool = False  # a bare cell took the cells' unit
    used_text: bool = False
    used_none: bool = False


def _unit_word(text: str) -> str:
    m = _UNIT_WORD.search(norm_header(text))
    if not m:
        return ""
    return m.group(1) or _CHINESE[m.group(2)]


def _cells_unit(values: list[str]) -> tuple[str, bool]:
    units = set()
    for cell in values:
        n = cell_number(cell)
        if n is not None and n[1] and unit_kind(n[1]) == "time":
            units.add(canonical_unit(n[1]))
    if len(units) == 1:
        return units.pop(), False
    return "", len(units) > 1


@dataclass(slots=True)
class _Value:
    """One value cell read: a quantity in the canonical unit, or a status."""

    value: float | None
    unit: str
    direction: str
    kind: str
    status: Status = "ok"
    std: float | None = None
    own: str = ""  # the unit the cell itself writes ("" when it took the header's or none)


def _read_value(cell: str, unit: str, units: _Units) -> _Value | str | None:
    """A value cell; None when empty, a str (the reason) when unreadable."""
    if is_empty_cell(cell):
        return None
    status = status_of(cell)
    if status is not None:
        return _Value(None, "", "lower", "", status)
    _, spread = split_plus_minus(cell)
    # "0.87 (1.15x)", "10.5ms（↓5%）": the value, then a note; "92.2 ± 0.5 ms": the unit
    # written once, after the spread
    n = _number_of(cell)
    if n is None:
        return f"{clean_cell(cell)!r} is not a number"
    number, own = n
    chosen = own or unit
    if not chosen:
        if units.cells:
            chosen = units.cells
            units.used_cells = True
        elif units.text:
            chosen = units.text
            units.used_text = True
    if not chosen:
        units.used_none = True
        if number != number or number < 0:
            return f"value {number!r} is not a measurement"
        std = _plain(spread)
        return _Value(number, "", "lower", "", std=std)
    try:
        q = normalise(number, chosen)
        std = None
        if spread:
            s = cell_number(spread)
            if s is not None:
                std = normalise(s[0], s[1] or chosen).value
    except UnitError as error:
        return str(error)
    if q.kind == "ratio":
        return f"{clean_cell(cell)!r} is a ratio, not a value"
    return _Value(q.value, q.unit, q.direction, q.kind, std=std, own=own)


_NOTED = re.compile(r"^\s*([-+]?[\d.,]+(?:e[-+]?\d+)?\s*[A-Za-zµμ/]*)\s*[(（\[].*[)）\]]\s*$", re.I)


def _plain(text: str | None) -> float | None:
    if text is None:
        return None
    n = cell_number(text)
    return n[0] if n else None


def _unit_problems(table: _Table, units: _Units) -> list[Item]:
    items: list[Item] = []
    where = f"table at line {table.header_line}"
    if units.used_cells:
        reason = (
            f"{where}: cells without a unit read in {units.cells!r}, the one unit every "
            "other cell of the table gives"
        )
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    if units.used_text:
        reason = f"{where}: values read in {units.text!r}, the unit the text above states"
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    if units.used_none:
        reason = f"{where}: no unit given (header, cells or text): values stored without a unit"
        if units.disagree:
            reason += "; the table's cells give several units, none applies to bare cells"
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    return items


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Reader:
    doc: DocText
    table: _Table
    ctx: _Context
    units: _Units
    items: list[Item] = field(default_factory=list)
    model: str = ""  # the model the whole table is about (its corner: "Ernie Large")
    # value column -> (value in its canonical unit, the unit the cell wrote) of each cell
    written: dict[int, list[tuple[float, str]]] = field(default_factory=dict)

    def measurement(
        self,
        row: _Row,
        got: _Value,
        *,
        metric: str,
        benchmark: str,
        task: str,
        framework: str,
        device: str,
        params: dict[str, ParamValue],
        unit: str,
    ) -> Measurement:
        kind = got.kind or unit_kind(unit)
        if got.status != "ok":
            canonical = _canonical(unit)
            value_unit, direction = canonical or ("", "lower")
        else:
            value_unit, direction = got.unit, got.direction
        if not metric:
            metric = {"throughput": "throughput", "memory": "memory"}.get(kind, "latency")
        stats: dict[str, object] = {}
        if got.std is not None:
            stats["std"] = got.std
        if not task:
            task = "op-forward" if benchmark.startswith("op/") else "inference"
        return Measurement(
            benchmark=benchmark,
            metric=metric,
            value=got.value,
            unit=value_unit,
            task=task,
            direction=cast(Direction, direction),
            framework=framework,
            device=device,
            params={**self.ctx.params, **params},
            status=got.status,
            stats=stats,
            line=row.line,
            raw=row.raw,
        )

    def benchmark(self, op: str = "", model: str = "") -> str:
        name = (op or self.ctx.op).strip("`* ")
        if name:
            return f"op/{name}"
        return model_name(model or self.model)


def model_name(cell: str) -> str:
    """The model as printed, tidied only by stripping its path: "/data/resnet50.pdmodel"
    -> "resnet50.pdmodel"."""
    return clean_cell(cell).rstrip("/\\").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]


def _canonical(unit: str) -> tuple[str, str] | None:
    try:
        q = normalise(1.0, unit)
    except UnitError:
        return None
    return q.unit, q.direction


def read(doc: DocText, table: _Table, rows: list[_Row]) -> list[Item] | None:
    """Items of a variant table; None when the table holds no performance values."""
    if not rows:
        return None
    ctx = _context(doc, table)
    keys = [norm_header(h) for h in table.header]
    if "calls" in keys and "total" in keys and any(_PROFILE_STATS.get(k) == "mean" for k in keys):
        return _profiler_table(doc, table, rows, ctx)
    if _transposed(table, rows):
        return _transposed_table(doc, table, rows, ctx)
    return _column_table(doc, table, rows, ctx)


# --- variants as columns (or a first column of variants against metric columns) --------


def _column_table(
    doc: DocText, table: _Table, rows: list[_Row], ctx: _Context
) -> list[Item] | None:
    cols = [_classify(h, i, rows) for i, h in enumerate(table.header)]
    first = cols[0]
    if first.role == "value" and not variant_label(first.header):
        first = cols[0] = _Col(0, first.header, "config", key=_config_key(first.header))
    labelled = any(c.role == "value" and variant_label(c.label) for c in cols)
    if first.role in ("config", "skip") and not labelled and _variants_in_column(table, rows, 0):
        cols[0] = _Col(0, table.header[0], "variant")
    unread = _unread_columns(cols)
    if any(c.role == "value" and variant_label(c.label) for c in cols):
        # "| a | 1 ms | ?? |": a variant column beside others whose cells are all garbled
        # is still a value column (its cells are Problems), not a config of "??"
        for c in cols[1:]:
            if (
                c.role == "config"
                and not c.numeric
                and variant_label(c.header)
                and not dimension_key(c.header)
                and not any(derived_figure(r.cells[c.index]) for r in rows)
            ):
                cols[c.index] = _value_col(c.index, c.header, header_unit(c.header))
    values = [c for c in cols if c.role == "value"]
    if not values:
        if unread:
            return [_unread_problem(table, unread)]
        return None
    if cols[0].role != "variant" and not _known_config(table, cols):
        reason = (
            f"table with values in {', '.join(repr(c.header) for c in values)} but its first "
            f"column {table.header[0]!r} is no config, variant, version, dimension, model or "
            "op: not read"
        )
        return [_problem(table.header_line, reason, table.header_raw, "warning")]
    _shared_metric(values)
    value_cells = [row.cells[c.index] for row in rows for c in values]
    unit, disagree = _cells_unit(value_cells)
    units = _Units(ctx.text_unit, cells=unit, disagree=disagree)
    reader = _Reader(doc, table, ctx, units, model=_corner_model(table, rows, cols))
    for row in rows:
        _column_row(reader, cols, row)
    problems = _unit_problems(table, units) + _typo_problems(table, cols, reader)
    if unread:
        problems.append(_unread_problem(table, unread))
    return problems + reader.items


def _unread_columns(cols: list[_Col]) -> list[_Col]:
    """Columns of bare numbers whose header names no variant, metric or unit, past the
    first column: never a param value. Counts before the first value column (M, N, 阶数)
    are configs; other numbers are values nobody can name, and are not read."""
    first_value = min((c.index for c in cols if c.role == "value"), default=len(cols))
    unread = []
    for col in cols:
        if col.role != "config" or not col.numeric or col.index == 0:
            continue
        if col.numeric == "float" or col.index > first_value:
            col.role = "unread"
            unread.append(col)
    return unread


def _unread_problem(table: _Table, unread: list[_Col]) -> Problem:
    names = ", ".join(repr(c.header) for c in unread)
    reason = (
        f"table at line {table.header_line}: column{'s' if len(unread) > 1 else ''} {names} "
        "hold numbers but name no variant, metric or unit: not read"
    )
    return _problem(table.header_line, reason, table.header_raw, "warning")


_GENERIC_CORNER = re.compile(
    r"^(?:metric|metrics|指标|item|items|项目|测试项|name|名称|value|values|值|结果|result|"
    r"results|stat|stats|统计)$"
)


def _corner_model(table: _Table, rows: list[_Row], cols: list[_Col]) -> str:
    """ "| Ernie Large | -DWIHT_MKLDNN=OFF | ... |" over rows "| latency | ... |": when every
    row names a metric, the corner names what was measured (a model)."""
    if cols[0].role != "config" or cols[0].numeric:
        return ""
    corner = clean_cell(table.header[0])
    low = norm_header(corner)
    if (
        not low
        or _GENERIC_CORNER.match(low)
        or _CONFIG_FIRST.search(low)
        or _METRIC_EVIDENCE.search(low)
        or variant_label(corner)
        or header_unit(corner)
        or dimension_key(corner)
    ):
        return ""
    labels = [clean_cell(r.cells[0]) for r in rows]
    if labels and all(_metric_label(label) for label in labels):
        return corner
    return ""


def _metric_label(label: str) -> bool:
    low = norm_header(label)
    return bool(header_unit(label) or _METRIC_EVIDENCE.search(low) or DERIVED_HEADER.search(low))


# Cell units of one column that put its values this many times apart: a mistyped unit?
_TYPO_FACTOR = 1000.0


def _typo_problems(table: _Table, cols: list[_Col], reader: _Reader) -> list[Item]:
    """A column whose cells write different units ("13s" beside "16us") and whose values
    are then orders of magnitude apart: stored as written, with a warning."""
    items: list[Item] = []
    for col in cols:
        written = reader.written.get(col.index, [])
        units = sorted({u for _, u in written if u})
        values = [v for v, u in written if u and v > 0]
        if len(units) < 2 or len(values) < 2 or max(values) < min(values) * _TYPO_FACTOR:
            continue
        reason = (
            f"table at line {table.header_line}: column {col.header!r} writes its cells in "
            f"{', '.join(repr(u) for u in units)} and its values are "
            f"{max(values) / min(values):,.0f} times apart: a unit may be mistyped; stored "
            "as written"
        )
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    return items


def _known_config(table: _Table, cols: list[_Col]) -> bool:
    """Whether the table reads as a comparison: a variant-labelled value column, a derived
    column, or a first column that names a config (op, shape, case, dtype...)."""
    if any(c.role == "derived" for c in cols):
        return True
    if any(c.role == "value" and c.label and variant_label(c.label) for c in cols):
        return True
    return cols[0].role in ("op", "device") or _CONFIG_FIRST.search(norm_header(table.header[0]))


_CONFIG_FIRST = re.compile(
    r"shape|case|config|dtype|type|dim|size|input|输入|形状|配置|场景|规模|数据|length|len|"
    r"axis|axes|kernel|layer|#|no\.|index|序号|编号"
)


def _variants_in_column(table: _Table, rows: list[_Row], index: int) -> bool:
    """A first column of variant labels: under a variant-ish header ("Type", "", "method")
    or every label naming one ("before", "after", "torch", "paddle动态图")."""
    labels = [clean_cell(r.cells[index]) for r in rows if not is_empty_cell(r.cells[index])]
    if not labels:
        return False
    named = [label for label in labels if variant_label(label)]
    if norm_header(table.header[index]) in _VARIANT_KEYS and named:
        return len(named) * 2 >= len(labels)
    return len(labels) >= 2 and len(named) == len(labels)


def _shared_metric(values: list[_Col]) -> None:
    """ "Origin GPU Time | PR GPU time | tensorflow": a column naming no metric takes the
    one the others agree on."""
    metrics = {c.metric for c in values if c.metric}
    if len(metrics) == 1:
        metric = metrics.pop()
        for c in values:
            c.metric = c.metric or metric


def _column_row(reader: _Reader, cols: list[_Col], row: _Row) -> None:
    params: dict[str, ParamValue] = {}
    op = device = variant = model = ""
    for col in cols:
        cell = clean_cell(row.cells[col.index])
        if col.role == "op":
            op = cell
        elif col.role == "model":
            model = cell
        elif col.role == "device":
            device = cell
        elif col.role == "variant":
            variant = cell
        elif col.role == "config" and not is_empty_cell(cell):
            if dimension_key(col.header):
                number = dimension_value(cell)
                params[col.key] = number if number is not None else cell
            else:
                params[col.key] = cell
    # "| latency (ms) | 10 | 8 |", "| QPS | 100 | 120 |": the row's label names the metric
    first = cols[0]
    label_unit = label_metric = ""
    if first.role == "config":
        row_label = clean_cell(row.cells[0])
        if DERIVED_HEADER.search(norm_header(row_label)):
            _derived_row(reader, cols, row)  # "| speedup | | 1.25x |"
            return
        label_unit = header_unit(row_label)
        if label_unit or _METRIC_EVIDENCE.search(norm_header(row_label)):
            label_metric = metric_for(row_label, unit_kind(label_unit) or "time")
            params.pop(first.key, None)  # the row names the metric, not a config
    got_values: dict[int, Measurement] = {}
    for col in cols:
        if col.role != "value":
            continue
        got = _read_value(row.cells[col.index], col.unit or label_unit, reader.units)
        if got is None:
            continue
        if isinstance(got, str):
            reason = f"column {col.header!r}: {got}"
            reader.items.append(_problem(row.line, reason, row.raw))
            continue
        label = col.label if variant == "" else variant
        col_params = dict(params)
        if variant:
            col_params["variant"] = variant
            col_params.update(precision_params(variant))
        elif variant_label(col.label) or len([c for c in cols if c.role == "value"]) > 1:
            col_params["variant"] = col.label
        col_params.update(col.params)
        m = reader.measurement(
            row,
            got,
            metric=col.metric
            or label_metric
            or ("" if got.kind else metric_for(col.header, "time")),
            benchmark=col.benchmark or reader.benchmark(op, model),
            task=col.task or reader.ctx.task or _op_task(op or col.benchmark),
            framework=framework_in(label) or col.framework if label else col.framework,
            device=device,
            params=col_params,
            unit=col.unit or label_unit,
        )
        got_values[col.index] = m
        reader.items.append(m)
        if got.value is not None:
            reader.written.setdefault(col.index, []).append((got.value, got.own))
    for col in cols:
        if col.role == "derived":
            claim = _derived_claim(cols, col, row, got_values)
            if claim is not None:
                reader.items.append(claim)


def _derived_row(reader: _Reader, cols: list[_Col], row: _Row) -> None:
    for col in cols:
        if col.role in ("value", "derived"):
            figure = derived_figure(row.cells[col.index])
            if figure is not None:
                reader.items.append(_claim(None, None, figure[0], figure[1], row))


def _op_task(op: str) -> str:
    """ "slice_grad", "LookupTableV2Grad" -> op-backward; another op -> op-forward."""
    if not op:
        return ""
    low = op.lower()
    return "op-backward" if _BACKWARD.search(low) or low.endswith("grad") else "op-forward"


def _derived_claim(
    cols: list[_Col], col: _Col, row: _Row, got: dict[int, Measurement]
) -> Claim | None:
    figure = derived_figure(row.cells[col.index])
    if figure is None:
        return None
    speedup, percent = figure
    before, after = _pair(cols, col, got)
    claim = _claim(before, after, speedup, percent, row)
    return claim


def _pair(
    cols: list[_Col], derived: _Col, got: dict[int, Measurement]
) -> tuple[Measurement | None, Measurement | None]:
    """The two values a derived column compares: the variant its header names (or the
    baseline) against the nearest value to its left (or the change)."""
    left = [c for c in cols if c.role == "value" and c.index < derived.index and c.index in got]
    if not left:
        return None, None
    named = framework_in(derived.header)
    header = norm_header(derived.header)
    if not named and not _SPEEDUP_HEADER.search(header):
        # "diff" beside a competitor's column: the value to its left against the competitor
        rivals = [c for c in left if variant_rank(c.label) == 1]
        named = framework_in(rivals[-1].label) if rivals else None
    if named:
        before = next((c for c in reversed(left) if framework_in(c.label) == named), None)
        if before is not None:
            after = next((c for c in reversed(left) if c is not before), None)
            return got[before.index], got[after.index] if after else None
    previous = max(
        (c.index for c in cols if c.role == "derived" and c.index < derived.index), default=-1
    )
    group = [c for c in left if c.index > previous]
    if len(group) < 2:
        group = left
    if len(group) < 2:
        return None, got[group[0].index]
    ranked = sorted(group, key=lambda c: (variant_rank(c.label), c.index))
    before, after = ranked[0], ranked[-1]
    return got[before.index], got[after.index]


_SPEEDUP_HEADER = re.compile(r"speed|加速|faster|提升|gain|improve|倍")


def _claim(
    before: Measurement | None,
    after: Measurement | None,
    speedup: float | None,
    percent: float | None,
    row: _Row,
) -> Claim:
    b = before.value if before is not None and before.unit == "ms" else None
    a = after.value if after is not None and after.unit == "ms" else None
    if b is not None and a is not None:
        if percent is None and b:
            percent = (b - a) / b * 100
        unit = "ms"
    else:
        b = a = None
        unit = "%" if percent is not None and speedup is None else "x"
    return Claim(b, a, unit, percent=percent, speedup=speedup, line=row.line, raw=row.raw.strip())


# --- transposed: configs across the header, variants down the first column ---------------


def _config_like(header: str) -> bool:
    text = clean_cell(header)
    low = norm_header(text)
    if not low:
        return False
    number = cell_number(text)
    if number is not None and not number[1]:
        return True
    return bool(
        low[0] in "[("
        or _DEVICE_WORD.match(low)
        or re.fullmatch(r"\d+(?:[x*×]\d+)+", low)
        or re.fullmatch(r"[a-z_#]+\s*[=:]\s*[\w.\[\](), ]+", low)
    )


def variant_columns(table: _Table, rows: list[_Row]) -> bool:
    """A table led by a model or a dimension whose value columns are variants naming no
    unit or metric of their own ("模型 | 优化前 | 优化后 | 加速比", "thread | FP32 | INT8"):
    md_tables hands it here rather than reading it as a results table."""
    for index, header in enumerate(table.header[1:], start=1):
        low = norm_header(header)
        if header_unit(header) or _has_metric_word(header) or DERIVED_HEADER.search(low):
            continue
        if variant_label(header) and _numbers(rows, index):
            return True
    return False


def transposed(table: _Table, rows: list[_Row]) -> bool:
    """Configs across the header ("#rows | 28672 | 14336", "| cpu | gpu |", "bs=1 | bs=8")
    and variants down the first column: md_tables hands such a table here even when its
    corner names a dimension ("batch_size | 1 | 4")."""
    return _transposed(table, rows)


def _transposed(table: _Table, rows: list[_Row]) -> bool:
    heads = [h for h in table.header[1:] if h.strip()]
    if not heads or not all(_config_like(h) for h in heads):
        return False
    if _model_rows(table):
        # "batch-size | 1 | 2 | 4" over "resnet50 | 10.88 | ...": the corner names the
        # dimension the header runs over, the rows are models
        return any(any(cell_number(c) is not None for c in r.cells[1:]) for r in rows)
    return any(
        variant_label(clean_cell(r.cells[0]))
        and any(cell_number(c) is not None for c in r.cells[1:])
        for r in rows
    )


def _model_rows(table: _Table) -> bool:
    """A dimension in the corner and bare numbers across the header: the rows (that are
    no variants) are models or cases measured at each of them."""
    if not dimension_key(table.header[0]):
        return False
    heads = [clean_cell(h) for h in table.header[1:] if h.strip()]
    return all((n := cell_number(h)) is not None and not n[1] for h in heads)


_KEY_VALUE = re.compile(r"([A-Za-z_#][\w#]*)\s*[=:]\s*(.+)")


def _transposed_table(
    doc: DocText, table: _Table, rows: list[_Row], ctx: _Context
) -> list[Item] | None:
    corner = table.header[0]
    corner_unit = header_unit(corner) or _unit_word(corner)
    op = _op_named(corner, snake=False)
    devices = all(_DEVICE_WORD.match(norm_header(h)) for h in table.header[1:] if h.strip())
    key = "device" if devices else (_config_key(re.sub(r"[(（].*?[)）]", "", corner)) or "config")
    value_cells = [c for r in rows for c in r.cells[1:]]
    unit, disagree = _cells_unit(value_cells)
    units = _Units(ctx.text_unit, corner=corner_unit, cells=unit, disagree=disagree)
    reader = _Reader(doc, table, ctx, units)
    model_rows = _model_rows(table)
    section_unit = ""
    section_derived = False
    rows_by_label: dict[str, tuple[_Row, list[Measurement | None]]] = {}
    for row in rows:
        label = clean_cell(row.cells[0])
        rest = row.cells[1:]
        if label and all(is_empty_cell(c) for c in rest):
            section_unit = header_unit(label) or _unit_word(label)
            section_derived = bool(DERIVED_HEADER.search(norm_header(label)))
            continue
        if not label:
            continue
        derived = (
            section_derived
            or DERIVED_HEADER.search(norm_header(label))
            or re.fullmatch(r"[^/\s]+\s*/\s*[^/\s]+", label) is not None
        )
        if derived:
            _ratio_row(reader, table, row, label, rows_by_label)
            continue
        row_unit = header_unit(label) or section_unit or corner_unit
        # A row of a model (not a variant) under a variant caption ("#### tensorrt")
        model_row = model_rows and not variant_label(label)
        variant = (ctx.variant if model_row else label).strip()
        got_row: list[Measurement | None] = []
        for index, cell in enumerate(rest, start=1):
            got = _read_value(cell, row_unit, units)
            if got is None or isinstance(got, str):
                if isinstance(got, str):
                    reason = f"row {label!r}, column {table.header[index]!r}: {got}"
                    reader.items.append(_problem(row.line, reason, row.raw))
                got_row.append(None)
                continue
            head = clean_cell(table.header[index]) if index < len(table.header) else ""
            params: dict[str, ParamValue] = {}
            if variant:
                params = {"variant": variant, **precision_params(variant)}
            device = ""
            pair = _KEY_VALUE.fullmatch(head)
            if devices:
                device = head
            elif pair:
                name = pair.group(1)
                number = dimension_value(pair.group(2))
                params[dimension_key(name) or name] = (
                    number if number is not None else pair.group(2)
                )
            else:
                number = dimension_value(head) if cell_number(head) else None
                params[key] = number if number is not None and key != "config" else head
            m_ = reader.measurement(
                row,
                got,
                metric="",
                benchmark=reader.benchmark(op, label if model_row else ""),
                task=reader.ctx.task,
                framework=framework_in(variant) or "paddle" if variant else "paddle",
                device=device,
                params=params,
                unit=row_unit,
            )
            got_row.append(m_)
            reader.items.append(m_)
        rows_by_label[label] = (row, got_row)
    if not any(isinstance(i, (Measurement, Claim)) for i in reader.items):
        return None
    return _unit_problems(table, units) + reader.items


def _ratio_row(
    reader: _Reader,
    table: _Table,
    row: _Row,
    label: str,
    rows_by_label: dict[str, tuple[_Row, list[Measurement | None]]],
) -> None:
    """ "nv/paddle | 1.306 | ...": a claim per cell, the ratio of two variants' rows."""
    parts = [p.strip() for p in label.split("/")]
    num = rows_by_label.get(parts[0]) if len(parts) == 2 else None
    den = rows_by_label.get(parts[1]) if len(parts) == 2 else None
    for index, cell in enumerate(row.cells[1:]):
        figure = derived_figure(cell)
        if figure is None:
            continue
        speedup, percent = figure
        before = num[1][index] if num and index < len(num[1]) else None
        after = den[1][index] if den and index < len(den[1]) else None
        reader.items.append(_claim(before, after, speedup, percent, row))


# --- profiler events with a variant column ------------------------------------------------


def _profiler_table(
    doc: DocText, table: _Table, rows: list[_Row], ctx: _Context
) -> list[Item] | None:
    keys = [norm_header(h) for h in table.header]
    stats = {i: _PROFILE_STATS[k] for i, k in enumerate(keys) if k in _PROFILE_STATS}
    event = next((i for i, k in enumerate(keys) if k in ("event", "name", "op", "events")), None)
    variant = next(
        (
            i
            for i in range(len(keys))
            if i not in stats and i != event and _variants_in_column(table, rows, i)
        ),
        None,
    )
    unit = ""
    items: list[Item] = []
    if ctx.profiler and not ctx.text_unit:
        unit = "ms"
        reason = (
            f"table at line {table.header_line}: profiler times read in 'ms', the Paddle "
            "profiler's unit (the text names the profiler, the table no unit)"
        )
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    units = _Units(ctx.text_unit)
    reader = _Reader(doc, table, ctx, units)
    for row in rows:
        params: dict[str, ParamValue] = {}
        if variant is not None:
            params["variant"] = clean_cell(row.cells[variant])
        if event is not None:
            params["event"] = clean_cell(row.cells[event])
        extra: dict[str, float] = {}
        found: list[Measurement] = []
        for index, stat in stats.items():
            cell = row.cells[index]
            if stat in ("calls", "ratio"):
                n = cell_number(cell)
                if n is not None:
                    extra[stat] = int(n[0]) if stat == "calls" and n[0].is_integer() else n[0]
                if stat == "ratio" and n is not None:
                    found.append(_share(row, n[0], params, ctx))
                continue
            got = _read_value(cell, unit, units)
            if got is None:
                continue
            if isinstance(got, str):
                items.append(_problem(row.line, f"column {table.header[index]!r}: {got}", row.raw))
                continue
            metric = "total_time" if stat == "total" else "latency"
            p = dict(params) if stat == "total" else {**params, "stat": stat}
            framework = framework_in(str(params.get("variant", ""))) or "paddle"
            found.append(
                reader.measurement(
                    row,
                    got,
                    metric=metric,
                    benchmark="",
                    task=ctx.task,
                    framework=framework,
                    device="",
                    params=p,
                    unit=unit,
                )
            )
        for m in found:
            if "calls" in extra:
                m.samples = int(extra["calls"])
                m.stats["calls"] = int(extra["calls"])
        reader.items.extend(found)
    if not reader.items:
        return None
    return items + _unit_problems(table, units) + reader.items


def _share(row: _Row, value: float, params: dict[str, ParamValue], ctx: _Context) -> Measurement:
    """The profiler's Ratio.: the event's share of the whole report (a fraction)."""
    return Measurement(
        benchmark="",
        metric="time_share",
        value=value,
        unit="ratio",
        task=ctx.task or "inference",
        direction="lower",
        framework=framework_in(str(params.get("variant", ""))) or "paddle",
        params={**ctx.params, **params},
        line=row.line,
        raw=row.raw,
    )
