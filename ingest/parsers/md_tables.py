"""Markdown (GitHub-flavoured) tables: phase tables, results tables, op comparison tables.

docs/formats.md section 4. A table is a header row, a separator row (``|---|``,
``| :-- |``) and data rows. The scan looks for separator rows only, with a pattern led by
"\n" (a separator always starts a line below its header), so a large log with pipes but
no table costs one regex pass at line starts; each separator found is checked, and then
the header line above it and the rows below it are read.

Three kinds are told apart by their key column:

- phase table: a version/label column (版本, version, 阶段, step...) and a value column with a
  unit in its header; yields one Phase with a Milestone per row;
- op comparison table: first column op/api/name, value headers "<framework>-<metric> (ms)";
  yields a Measurement per cell with benchmark "op/<name>";
- results table: first column a dimension (Threads, batch_size, seq_len...) or a model;
  yields a Measurement per numeric cell of each value column (text columns such as a
  backend name the series; llama-bench's size/params columns are no measurements);
- variant table (pr_tables.py): the before/after tables of PRs and issues, variants as
  columns (develop / this PR, 优化前 / 优化后, paddle / pytorch) or rows (transposed tables,
  profiler events with a w/ / w/o column), config columns naming the series; yields a
  Measurement per variant and value, and a Claim per speedup / diff / ratio cell.

A table led by a model or a dimension whose value columns are bare variants ("模型 | 优化前
| 优化后", "thread | FP32 | INT8") is a variant table, not a results table. A table led by
none of these is ordinary prose (a file list, a plan, a feature matrix, accuracy) and is
skipped without a word; one that holds numbers and is none of those gets a warning saying
it was not read. Separator-less
pipe tables (docs/formats.md section 4 quotes one) are read when their header names a
unit, because without the separator the unit is the only sign that the lines are a table;
they are read only when they are of a known kind (no warning), since ASCII tables of other
tools look the same.

The vocabulary of headers and cells (units, metrics, dimensions, statuses, dates) is in
cells.py, shared with ws_tables.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, cast

from ingest.parsers import pr_tables
from ingest.parsers.cells import (
    ACCURACY_HEADER,
    CONTEXT_WINDOW,
    FRAMEWORKS,
    SIZE_HEADERS,
    bullet_pairs,
    dimension_key,
    dimension_value,
    framework_in,
    header_unit,
    is_empty_cell,
    metric_for,
    norm_header,
    parse_date,
    precision_params,
    read_quantity,
    split_plus_minus,
    status_of,
    unit_kind,
    variant_word,
)
from ingest.text import DocText, last_line_match
from perfboard.model import (
    Direction,
    Item,
    Measurement,
    Milestone,
    ParamValue,
    Phase,
    Problem,
    Status,
)
from perfboard.units import UnitError, normalise, split_number

NAME = "md_tables"
ANCHORS = ("|",)

# ---------------------------------------------------------------------------------------
# Finding tables
# ---------------------------------------------------------------------------------------

# Scans are led by "\n": a table line starts a line, and matching only at line starts
# is several times faster on a log full of "|" than matching at every pipe.
# A separator row always follows its header line, so it always comes after a "\n".
_SEP_HINT = re.compile(r"\n[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\||$)", re.M)
_SEP_CELL = re.compile(r":?-+:?")
# Separator-less tables: a pipe row naming a unit in parentheses (checked after the match).
_UNIT_HEADER_BODY = r"[ \t]*\|[^\n]*\([ \t]*[A-Za-zµμ%/]+[ \t]*\)"
_UNIT_HEADER_HINT = re.compile(r"\n" + _UNIT_HEADER_BODY)
_UNIT_HEADER_FIRST = re.compile(_UNIT_HEADER_BODY)
_PIPE = re.compile(r"(?<!\\)\|")


def split_cells(line: str) -> tuple[list[str], bool]:
    """Cells of a pipe row and whether the row ends with a closing pipe."""
    s = line.strip()
    closed = len(s) > 1 and s.endswith("|") and not s.endswith("\\|")
    if s.startswith("|"):
        s = s[1:]
    if closed:
        s = s[:-1]
    if "\\|" not in s:  # most rows: every pipe separates, str.split finds them
        return [c.strip() for c in s.split("|")], closed
    return [c.strip().replace("\\|", "|") for c in _PIPE.split(s)], closed


def _separator_width(line: str) -> int:
    """Number of cells of a separator row, 0 if the line is not one."""
    if "|" not in line or "-" not in line:
        return 0
    cells, _ = split_cells(line)
    while len(cells) > 1 and cells[-1] == "":
        cells.pop()  # "|---|---| " and an extra empty cell after the closing pipe
    return len(cells) if all(_SEP_CELL.fullmatch(c) for c in cells) else 0


@dataclass(slots=True)
class _Row:
    line: int
    raw: str
    cells: list[str]
    closed: bool


@dataclass(slots=True)
class _Table:
    header: list[str]
    header_line: int
    header_raw: str
    header_start: int  # offset of the header line
    end: int  # offset just past the last line of the table
    rows: list[_Row] = field(default_factory=list)
    separated: bool = True  # has a |---| row (else found by a unit in its header)
    ends_text: bool = False  # nothing but blanks after the table: a cut document?


def parse(doc: DocText) -> Iterator[Item]:
    """Every markdown table in the document that holds phases or measurements."""
    tables = list(_separated_tables(doc))
    spans = [(t.header_start, t.end) for t in tables]
    tables += _unseparated_tables(doc, spans)
    tables.sort(key=lambda t: t.header_start)
    for table in tables:
        items = _read_table(doc, table)
        # Items of one table come in row order; a stable sort keeps a Phase before the
        # Problems of its rows (same line as its header).
        yield from sorted(items, key=lambda item: item.line)


def _separated_tables(doc: DocText) -> Iterator[_Table]:
    text = doc.text
    resume = 0  # offset past the last table read: separators before it are its own
    for m in _SEP_HINT.finditer(text):
        start = m.start() + 1
        if start < resume:
            continue
        end = doc.line_bounds(start)[1]
        width = _separator_width(text[start:end])
        if not width:
            continue
        header_start = text.rfind("\n", 0, start - 1) + 1
        header_raw = text[header_start : start - 1]
        if "|" not in header_raw or _separator_width(header_raw):
            continue
        header, _ = split_cells(header_raw)
        while len(header) > width and header[-1] == "":
            header.pop()
        table = _Table(header, doc.line_at(header_start), header_raw, header_start, end)
        if end < len(text):
            _read_rows(doc, table, end + 1)
        resume = table.end + 1
        yield table


def _unseparated_tables(doc: DocText, spans: list[tuple[int, int]]) -> Iterator[_Table]:
    """Pipe tables written without a separator row, found by a unit in a header cell."""
    text = doc.text
    starts = [0] if _UNIT_HEADER_FIRST.match(text) else []
    span_starts = [a for a, _ in spans]  # in text order, none inside another
    resume = 0
    for start in itertools.chain(starts, (m.start() + 1 for m in _UNIT_HEADER_HINT.finditer(text))):
        end = doc.line_bounds(start)[1]
        within = bisect.bisect_right(span_starts, start) - 1
        if start < resume or end >= len(text) or (within >= 0 and start <= spans[within][1]):
            continue  # a line of a table already read, or the last line of the text
        raw = text[start:end]
        header, _ = split_cells(raw)
        if not any(header_unit(h) for h in header[1:]):
            continue
        next_end = text.find("\n", end + 1)
        next_line = text[end + 1 : len(text) if next_end < 0 else next_end]
        if "|" not in next_line or _separator_width(next_line):
            continue  # not followed by a row (or a separated table: the other scan reads it)
        table = _Table(header, doc.line_at(start), raw, start, end, separated=False)
        _read_rows(doc, table, end + 1)
        resume = table.end + 1
        yield table


def _read_rows(doc: DocText, table: _Table, pos: int) -> None:
    """Append the rows that follow a header/separator; stop at the first non-table line."""
    ends = [table.end]
    for number, start, line in doc.lines_from(pos):
        if "|" not in line or not line.strip():
            break
        if _separator_width(line):
            # A second table right below: its header is our last row; give it back.
            if table.rows:
                table.rows.pop()
                ends.pop()
            break
        cells, closed = split_cells(line)
        table.rows.append(_Row(number, line, cells, closed))
        ends.append(start + len(line))
    table.end = ends[-1]
    table.ends_text = doc.blank_after(table.end)


# ---------------------------------------------------------------------------------------
# Reading a table
# ---------------------------------------------------------------------------------------

_OP_KEYS = frozenset({"op", "ops", "api", "name", "op_name", "op name", "operator", "算子"})
_MODEL_KEYS = frozenset({"model", "models", "模型", "benchmark", "network", "net"})
_LABEL_KEYS = frozenset({"版本", "版本号", "阶段", "里程碑", "步骤", "序号"}) | frozenset(
    {"version", "ver", "milestone", "step", "stage", "phase", "iteration", "round"}
)


def _read_table(doc: DocText, table: _Table) -> list[Item]:
    """Items of one table, or nothing for a table that holds no values (prose, a file list)."""
    row_problems: list[Item] = []
    rows = _checked_rows(table, row_problems)
    keys = [norm_header(h) for h in table.header]
    if keys[0] in _OP_KEYS and _framework_metric_headers(table):
        items = _op_table(table, rows)
    elif any(k in _LABEL_KEYS for k in keys):
        items = _phase_table(doc, table, rows)
    elif table.separated and rows and pr_tables.transposed(table, rows):
        items = pr_tables.read(doc, table, rows)  # "batch_size | 1 | 4" over variant rows
    elif (
        table.separated
        and (dimension_key(table.header[0]) or keys[0] in _MODEL_KEYS)
        and pr_tables.variant_columns(table, rows)
    ):
        # "模型 | 优化前 | 优化后", "thread | FP32 | INT8": variants without a unit or metric
        # of their own (the text or the cells give it) are a variant table
        items = pr_tables.read(doc, table, rows)
    elif dimension_key(table.header[0]) or keys[0] in _MODEL_KEYS:
        items = _results_table(table, rows)
    elif table.separated and (items := pr_tables.read(doc, table, rows)) is not None:
        pass  # a variant table: before/after, develop/PR, paddle/pytorch (pr_tables)
    elif table.separated and any(
        header_unit(h) and unit_kind(header_unit(h)) != "ratio" for h in table.header
    ):
        reason = (
            f"table with values in {_units_named(table)} but its first column "
            f"{table.header[0]!r} is not a version, dimension, model or op: not read"
        )
        return [_problem(table.header_line, reason, table.header_raw, "warning")]
    else:
        items = None
    if items is None and table.separated and _looks_like_performance(table, rows):
        reason = (
            f"table at line {table.header_line} holds numbers, but no column reads as a "
            "measurement (no unit, variant, metric, model or op names one): not read"
        )
        return [_problem(table.header_line, reason, table.header_raw, "warning")]
    # Broken rows matter only in a table that holds values.
    return [] if items is None else row_problems + items


_FILE_KEYS = frozenset({"file", "files", "filename", "file name", "path", "文件", "文件名", "路径"})
_FILE_CELL = re.compile(r"[\w-]\.[A-Za-z][\w]{0,5}$|/")


def _looks_like_performance(table: _Table, rows: list[_Row]) -> bool:
    """Numbers beside the first column, and not clearly another kind of table (accuracy,
    a file list; a feature matrix or a plan has no numbers)."""
    if not any(split_number(c.replace(",", "")) is not None for r in rows for c in r.cells[1:]):
        return False
    if any(_accuracy(h) for h in table.header):
        return False
    firsts = [r.cells[0].strip("`* ") for r in rows if r.cells[0].strip()]
    files = bool(firsts) and all(_FILE_CELL.search(c) for c in firsts)
    return not (files or norm_header(table.header[0]) in _FILE_KEYS)


def _framework_metric_headers(table: _Table) -> bool:
    """An op table of "<framework>-<metric> (unit)" headers ("paddle-gpu (ms)"); other op
    tables (before / after, develop / PR) are variant tables."""
    for header in table.header[1:]:
        m = _OP_HEADER.match(norm_header(header))
        if m and m.group("framework") in FRAMEWORKS:
            return True
    return False


def _units_named(table: _Table) -> str:
    return ", ".join(repr(h) for h in table.header if header_unit(h))


def _checked_rows(table: _Table, items: list[Item]) -> list[_Row]:
    """Rows with exactly one cell per column; cut rows become Problems and are dropped."""
    width = len(table.header)
    kept: list[_Row] = []
    # Without outer pipes ("a | b" over "-- | --"), a row's trailing pipe closes nothing:
    # "float16-8M | 69.240 |" is a row cut short, not one with empty cells.
    outer = table.header_raw.lstrip().startswith("|")
    for row in table.rows:
        cells = row.cells
        closed = row.closed and (outer or row.raw.lstrip().startswith("|"))
        if row.closed and not closed:
            cells.append("")  # "a | b |": the trailing pipe starts an empty last cell
        while len(cells) > width and cells[-1] == "":
            cells.pop()  # "| - | " at the end of a row: an empty cell after the closing pipe
        if (len(cells) < width and not closed) or _cut_at_end(table, row):
            reason = f"row cut short: {len(cells)} of {width} cells"
            if len(cells) >= width:
                reason += ", the last one unclosed at the end of the text"
            items.append(_problem(row.line, reason, row.raw))
            continue
        if len(cells) < width:
            # A closed row with missing cells: GFM reads them as empty; say so anyway.
            reason = f"row has {len(cells)} of {width} cells; missing cells read as empty"
            items.append(_problem(row.line, reason, row.raw, "warning"))
            cells += [""] * (width - len(cells))
        elif len(cells) > width:
            reason = f"row has {len(cells)} cells for {width} columns; extra cells ignored"
            items.append(_problem(row.line, reason, row.raw, "warning"))
            del cells[width:]
        kept.append(row)
    return kept


def _cut_at_end(table: _Table, row: _Row) -> bool:
    """An unclosed last row that ends the text, in a table whose rows close: cut mid-cell
    (mid-URL) even though it has all its cells."""
    if row is not table.rows[-1] or row.closed or not table.ends_text:
        return False
    others = table.rows[:-1]
    return all(r.closed for r in others) if others else split_cells(table.header_raw)[1]


def _problem(
    line: int, reason: str, raw: str, severity: Literal["error", "warning"] = "error"
) -> Problem:
    return Problem(line=line, reason=reason, raw=raw, parser=NAME, severity=severity)


# --- value columns (results and op tables) ----------------------------------------------


@dataclass(slots=True)
class _ValueColumn:
    index: int
    header: str
    unit: str  # as written in the header; "" when the cells carry their own unit
    framework: str
    params: dict[str, ParamValue]
    metric: str = ""  # fixed by the header (op tables); "" -> from header words and kind
    task: str = "inference"


_RATIO_WORDS = re.compile(r"ratio|speedup|speed-up|加速|提升|倍|gain|improvement|reduction")


def _is_ratio_header(header: str) -> bool:
    unit = header_unit(header)
    return bool(_RATIO_WORDS.search(norm_header(header))) or unit_kind(unit) == "ratio"


def _value_columns(
    table: _Table, rows: list[_Row], skip: set[int], items: list[Item]
) -> list[_ValueColumn]:
    """Columns that hold measurements; a numeric column without any unit is a Problem."""
    columns: list[_ValueColumn] = []
    for index, header in enumerate(table.header):
        if index in skip or _is_ratio_header(header):
            continue  # ratios are derived: they can be recomputed from the values
        if norm_header(header) in SIZE_HEADERS:
            continue  # llama-bench "size | params": the model's size, not a measurement
        unit = header_unit(header)
        if not unit:
            kinds = _cell_unit_kinds(rows, index)
            if not kinds or kinds <= {"ratio"}:
                continue  # a text column (notes), or ratios written as "2.99X"
            if "" in kinds:
                items.append(_no_unit_problem(table, header))
                continue
        framework = framework_in(header) or "paddle"
        params = precision_params(header)
        if variant_word(header):
            # "develop (ms)" beside "this PR (ms)": two variants, two series
            params["variant"] = re.sub(r"\s*[(（\[][^)）\]]*[)）\]]\s*", " ", header).strip()
        columns.append(_ValueColumn(index, header, unit, framework, params))
    return columns


def _cell_unit_kinds(rows: list[_Row], index: int) -> set[str]:
    """Kinds of the units numeric cells carry ("" for a bare number); empty for text."""
    kinds: set[str] = set()
    for row in rows:
        split = split_number(row.cells[index])
        if split is not None:
            kinds.add(unit_kind(split[1]) if split[1] else "")
    return kinds


def _no_unit_problem(table: _Table, header: str) -> Problem:
    reason = (
        f"column {header!r} holds numbers but names no unit (header or cells): "
        "unit unknown, values not read"
    )
    return _problem(table.header_line, reason, table.header_raw)


def _cell_item(
    cell: str, column: _ValueColumn, row: _Row, benchmark: str, params: dict[str, ParamValue]
) -> Item | None:
    """One Measurement (or status, or Problem) for one cell; None for an empty cell."""
    where = _Where(column, row, benchmark, {**params, **column.params})
    if is_empty_cell(cell):
        return None
    status = status_of(cell)
    if status is not None:
        unit, kind, direction = _column_unit(column)
        if not unit:
            return _problem(row.line, f"{cell!r} in column {column.header!r}: no unit", row.raw)
        metric = column.metric or metric_for(column.header, kind)
        return where.measurement(metric, None, unit, direction, status)
    try:
        q = read_quantity(cell, column.unit)
    except UnitError as error:
        return _problem(row.line, f"column {column.header!r}: {error}", row.raw)
    if q.kind == "ratio":
        return None  # "2.99X" in a column without a ratio header: still a derived number
    metric = column.metric or metric_for(column.header, q.kind)
    m = where.measurement(metric, q.value, q.unit, q.direction, "ok")
    _, spread = split_plus_minus(cell)
    if spread is not None:
        # "21.96 ± 0.05": the mean, and the ± part as its std in the same unit
        with contextlib.suppress(UnitError):
            m.stats["std"] = read_quantity(spread + _unit_of(cell, column.unit), "").value
    return m


def _unit_of(cell: str, default: str) -> str:
    """The unit a "value ± spread" cell is in (its own, else the column's)."""
    main, spread = split_plus_minus(cell)
    if spread is not None and (after := split_number(spread.replace(",", ""))) and after[1]:
        return ""  # "92.2 ± 0.5 ms": the spread writes its own unit
    split = split_number(main.replace(",", ""))
    return (split[1] if split and split[1] else default) if split else default


def _column_unit(column: _ValueColumn) -> tuple[str, str, str]:
    """Canonical unit, kind and direction of a column's header unit ("" if none)."""
    try:
        q = normalise(1.0, column.unit)
    except UnitError:
        return "", "", "lower"
    return q.unit, q.kind, q.direction


@dataclass(slots=True)
class _Where:
    """What a cell's place in the table says about its measurement."""

    column: _ValueColumn
    row: _Row
    benchmark: str
    params: dict[str, ParamValue]

    def measurement(
        self, metric: str, value: float | None, unit: str, direction: str, status: Status
    ) -> Measurement:
        return Measurement(
            benchmark=self.benchmark,
            metric=metric,
            value=value,
            unit=unit,
            task=self.column.task,
            direction=cast(Direction, direction),
            framework=self.column.framework,
            params=self.params,
            status=status,
            line=self.row.line,
            raw=self.row.raw,
        )


# --- results tables ---------------------------------------------------------------------


def _results_table(table: _Table, rows: list[_Row]) -> list[Item] | None:
    """Dimension (or model) in the first column, a Measurement per value cell."""
    items: list[Item] = []
    dims = {i: k for i, h in enumerate(table.header) if (k := dimension_key(h))}
    model_column = norm_header(table.header[0]) in _MODEL_KEYS
    skip = set(dims) | ({0} if model_column else set())
    if all(_accuracy(h) for i, h in enumerate(table.header) if i not in skip):
        return None  # "| model | top1 | top5 |": an accuracy table, no measurements
    columns = _value_columns(table, rows, skip, items)
    if not columns and not items:
        return None
    _tell_apart(columns)
    # Text columns (backend, test, 后端) name the series of the values beside them.
    valued = {c.index for c in columns} | skip
    texts = {
        i: "_".join(norm_header(h).split()) or "config"
        for i, h in enumerate(table.header)
        if i not in valued and not _cell_unit_kinds(rows, i) and not _accuracy(h)
    }
    for row in rows:
        params: dict[str, ParamValue] = {
            key: row.cells[i].strip("`* ")
            for i, key in texts.items()
            if not is_empty_cell(row.cells[i])
        }
        for index, key in dims.items():
            value = dimension_value(row.cells[index])
            if value is None:
                reason = f"{table.header[index]!r} cell {row.cells[index]!r} is not a number"
                items.append(_problem(row.line, reason, row.raw))
                break
            params[key] = value
        else:
            benchmark = pr_tables.model_name(row.cells[0]) if model_column else ""
            for column in columns:
                item = _cell_item(row.cells[column.index], column, row, benchmark, params)
                if item is not None:
                    items.append(item)
    return items


def _accuracy(header: str) -> bool:
    return bool(ACCURACY_HEADER.search(norm_header(header)))


def _tell_apart(columns: list[_ValueColumn]) -> None:
    """Two value columns that would give one series ("每个样本Runtime用时" and
    "每个样本端到端用时", both latencies): each gets its header as params["variant"]."""
    groups: dict[tuple[str, str, str], list[_ValueColumn]] = {}
    for column in columns:
        kind = unit_kind(column.unit) or "time"
        key = (
            column.framework,
            metric_for(column.header, kind),
            repr(sorted(column.params.items())),
        )
        groups.setdefault(key, []).append(column)
    for group in groups.values():
        if len(group) > 1:
            for column in group:
                label = re.sub(r"\s*[(（\[][^)）\]]*[)）\]]\s*", " ", column.header).strip()
                column.params.setdefault("variant", label or column.header)


# --- op comparison tables ---------------------------------------------------------------

_OP_HEADER = re.compile(r"^(?P<framework>[a-z]+)[-_ ](?P<metric>[a-z][a-z_ ]*?)\s*(?:\(|$)")
_OP_CONFIG = re.compile(r"^(?P<op>.+?)-(?P<config>\d+)$")


def _op_table(table: _Table, rows: list[_Row]) -> list[Item] | None:
    """Op name in the first column; "<framework>-<metric> (unit)" value headers."""
    items: list[Item] = []
    columns = _value_columns(table, rows, {0}, items)
    if not columns and not items:
        return None
    for column in columns:
        _op_column(column)
    for row in rows:
        name = row.cells[0].strip("`* ")
        if not name:
            items.append(_problem(row.line, "op name cell is empty", row.raw))
            continue
        params: dict[str, ParamValue] = {}
        m = _OP_CONFIG.match(name)
        if m:
            # "softmax-0": the same op under config 0 of the benchmark's config list
            name, params["config_id"] = m.group("op"), m.group("config")
        for column in columns:
            item = _cell_item(row.cells[column.index], column, row, f"op/{name}", params)
            if item is not None:
                items.append(item)
    return items


def _op_column(column: _ValueColumn) -> None:
    """ "paddle-gpu (ms)" -> framework paddle, metric gpu_time, task op-forward."""
    low = norm_header(column.header)
    column.task = "op-backward" if "backward" in low else "op-forward"
    m = _OP_HEADER.match(low)
    if m and m.group("framework") in FRAMEWORKS:
        column.framework = FRAMEWORKS[m.group("framework")]
        metric = m.group("metric").replace("backward", "").strip(" _-").replace(" ", "_")
        if metric:
            column.metric = metric if metric.endswith("time") else f"{metric}_time"


# --- phase tables -----------------------------------------------------------------------

_DATE_KEYS = frozenset({"记录时间", "记录日期", "日期", "测试时间", "测试日期", "date", "time"})
_PR_KEYS = frozenset({"pr", "prs", "pull request", "pr链接", "pr link", "链接", "link"})
_DESC_KEYS = frozenset({"版本描述", "描述", "说明", "优化内容", "内容", "备注"}) | frozenset(
    {"description", "desc", "changes", "change", "notes", "note", "summary"}
)
_SPEEDUP_WORDS = re.compile(r"加速|效果|提升|降低|speedup|speed-up|gain|improvement|reduction")


@dataclass(slots=True)
class _PhaseColumns:
    label: int
    value: int
    date: int | None = None
    pr: int | None = None
    description: int | None = None
    speedup: int | None = None


def _phase_table(doc: DocText, table: _Table, rows: list[_Row]) -> list[Item] | None:
    """One Phase from a version/value table, named and described by the text above it."""
    items: list[Item] = []
    columns = _phase_columns(table, rows, items)
    if columns is None:
        return items or None
    value_header = table.header[columns.value]
    unit = header_unit(value_header)
    q = normalise(1.0, unit)
    phase = Phase(
        name="",
        metric=metric_for(value_header, q.kind),
        unit=q.unit,
        value_header=value_header,
        line=table.header_line,
    )
    _describe_phase(doc, table, phase, items)
    for ordinal, row in enumerate(rows):
        phase.milestones.append(_milestone(ordinal, row, columns, unit, items))
    _compare(phase.milestones, q.direction)
    return [phase, *items]


def _phase_columns(table: _Table, rows: list[_Row], items: list[Item]) -> _PhaseColumns | None:
    keys = [norm_header(h) for h in table.header]
    label = next(i for i, k in enumerate(keys) if k in _LABEL_KEYS)
    roles: dict[str, int] = {}
    values: list[int] = []
    for index, (key, header) in enumerate(zip(keys, table.header, strict=True)):
        if index == label:
            continue
        unit = header_unit(header)
        if unit and unit_kind(unit) not in ("", "ratio"):
            values.append(index)
        elif key in _PR_KEYS:
            roles.setdefault("pr", index)
        elif key in _DESC_KEYS:
            roles.setdefault("description", index)
        elif key in _DATE_KEYS:
            roles.setdefault("date", index)
        elif dimension_key(header):
            continue  # a batch size or thread count beside the value: not a value
        elif _SPEEDUP_WORDS.search(key) or unit_kind(unit) == "ratio":
            roles.setdefault("speedup", index)
        elif _cell_unit_kinds(rows, index) & {""}:
            items.append(_no_unit_problem(table, header))
    if not values:
        return None
    for extra in values[1:]:
        reason = f"phase table: second value column {table.header[extra]!r} not read"
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
    return _PhaseColumns(label, values[0], **roles)


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_OWNER_KEYS = frozenset({"负责人", "负责", "责任人", "owner", "owners", "assignee"})
_PLATFORM_KEYS = frozenset(
    {"gpu平台信息", "gpu平台", "平台信息", "平台", "platform", "gpu", "device", "硬件", "硬件信息"}
)
_SOFTWARE_KEYS = frozenset(
    {"软件信息", "软件", "软件环境", "测试环境", "环境", "software", "environment", "env"}
)
_TARGET_KEYS = frozenset({"目标", "优化目标", "性能目标", "target", "goal"})


def _describe_phase(doc: DocText, table: _Table, phase: Phase, items: list[Item]) -> None:
    """Name from the nearest heading above; owner, platform, software from its bullets."""
    window_start = max(0, table.header_start - CONTEXT_WINDOW)
    above = doc.text[window_start : table.header_start]
    heading = last_line_match(above, _HEADING, "#")  # the nearest one
    if heading is None:
        phase.name = doc.meta.title
        reason = "phase table has no heading above it: phase named after the document"
        items.append(_problem(table.header_line, reason, table.header_raw, "warning"))
        bullets = above
    else:
        phase.name = heading.group(1).strip("*` ")
        bullets = above[heading.end() :]
    for key, value in bullet_pairs(bullets):
        if key in _OWNER_KEYS and not phase.owner:
            phase.owner = ", ".join(re.findall(r"@?([^\s@,，、]+)", value))
        elif key in _PLATFORM_KEYS and not phase.platform:
            phase.platform = value
        elif key in _SOFTWARE_KEYS and not phase.software:
            phase.software = value
        elif key in _TARGET_KEYS and phase.target is None:
            _read_target(phase, value, table, items)


def _read_target(phase: Phase, value: str, table: _Table, items: list[Item]) -> None:
    """ "目标：7ms" / "target: 7.5 ms" -> the phase's target in its own unit."""
    found = re.search(r"(\d+(?:\.\d+)?)\s*([A-Za-zµμ]+)?", value)
    if found is None:
        items.append(
            _problem(table.header_line, f"phase target {value!r} has no number", value, "warning")
        )
        return
    number, unit = float(found.group(1)), found.group(2) or phase.unit
    try:
        target, canonical = read_quantity(f"{number}{unit}", phase.unit), phase.unit
    except UnitError as error:
        items.append(
            _problem(table.header_line, f"phase target {value!r}: {error}", value, "warning")
        )
        return
    if target.unit != canonical:
        reason = f"phase target {value!r} is in {target.unit}, the table in {canonical}"
        items.append(_problem(table.header_line, reason, value, "warning"))
        return
    phase.target = target.value


def _milestone(
    ordinal: int, row: _Row, columns: _PhaseColumns, unit: str, items: list[Item]
) -> Milestone:
    cells = row.cells

    def cell(index: int | None) -> str:
        return cells[index] if index is not None else ""

    ms = Milestone(ordinal, cells[columns.label], None, line=row.line, raw=row.raw)
    ms.description = cell(columns.description)
    value = cells[columns.value]
    if not is_empty_cell(value):
        try:
            ms.value = read_quantity(value, unit).value
        except UnitError as error:
            items.append(_problem(row.line, f"milestone {ms.label!r}: {error}", row.raw))
    _read_date(ms, cell(columns.date), items)
    _read_pr(ms, cell(columns.pr), items)
    _read_reported(ms, cell(columns.speedup), items)
    return ms


def _read_date(ms: Milestone, cell: str, items: list[Item]) -> None:
    if is_empty_cell(cell):
        return
    day = parse_date(cell)
    if day is None:
        reason = f"milestone {ms.label!r}: date {cell!r} not understood"
        items.append(_problem(ms.line, reason, ms.raw, "warning"))
    else:
        ms.date = day.isoformat()


_PR_URL = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/pull/(\d+)")
_PR_REF = re.compile(r"^(?:([\w.-]+/[\w.-]+))?#?(\d+)$")


def _read_pr(ms: Milestone, cell: str, items: list[Item]) -> None:
    """A PR as a GitHub URL, "owner/repo#N", "#N" or a bare number."""
    text = cell.strip().strip("[]()<>")
    if is_empty_cell(text):
        return
    m = _PR_URL.search(text)
    if m:
        ms.pr_repo, ms.pr_number = m.group(1), int(m.group(2))
        ms.pr_url = f"https://github.com/{ms.pr_repo}/pull/{ms.pr_number}"
        return
    m = _PR_REF.match(text)
    if m:
        ms.pr_repo, ms.pr_number = m.group(1), int(m.group(2))
        return
    reason = f"milestone {ms.label!r}: PR {cell!r} not understood"
    items.append(_problem(ms.line, reason, ms.raw, "warning"))


_PERCENT = re.compile(r"([-+]?\d+(?:\.(\d+))?)\s*%")
_TIMES = re.compile(r"([-+]?\d+(?:\.(\d+))?)\s*[xX×倍]")


def _read_reported(ms: Milestone, cell: str, items: list[Item]) -> None:
    """ "5%" is a reduction against the previous row, "1.36x" a speedup."""
    ms.reported_speedup_raw = cell
    if is_empty_cell(cell):
        return
    m = _TIMES.search(cell)
    if m:
        ms.reported_speedup = float(m.group(1))
        return
    m = _PERCENT.search(cell)
    if m:
        ms.reported_reduction = float(m.group(1)) / 100
        return
    reason = f"milestone {ms.label!r}: speedup {cell!r} not understood"
    items.append(_problem(ms.line, reason, ms.raw, "warning"))


def _compare(milestones: list[Milestone], direction: str) -> None:
    """Computed reduction/speedup against the previous milestone that has a value."""
    prev: float | None = None
    for ms in milestones:
        if ms.value is None:
            continue
        if prev is not None and prev > 0 and ms.value > 0:
            if direction == "lower":
                ms.computed_reduction = (prev - ms.value) / prev
                ms.computed_speedup = prev / ms.value
            else:
                # Higher is better (throughput): the "reduction" field holds the relative
                # gain, so that a reported "+5%" compares like for like.
                ms.computed_reduction = (ms.value - prev) / prev
                ms.computed_speedup = ms.value / prev
            ms.disagrees = _disagrees(ms)
        prev = ms.value


def _disagrees(ms: Milestone) -> bool:
    """Reported and computed differ by more than the rounding of the written figure."""
    if ms.reported_speedup is not None and ms.computed_speedup is not None:
        m = _TIMES.search(ms.reported_speedup_raw)
        tolerance = _half_unit(m.group(2) if m else None)
        return abs(ms.reported_speedup - ms.computed_speedup) > tolerance
    if ms.reported_reduction is not None and ms.computed_reduction is not None:
        m = _PERCENT.search(ms.reported_speedup_raw)
        tolerance = _half_unit(m.group(2) if m else None) / 100
        return abs(ms.reported_reduction - ms.computed_reduction) > tolerance
    return False


def _half_unit(decimals: str | None) -> float:
    """Half a unit of the last written digit ("5" -> 0.5, "1.36" -> 0.005), plus float slack."""
    return 0.5 * 10 ** -len(decimals or "") + 1e-9
