"""PyTorch profiler tables, ``prof.key_averages().table()`` (torch/autograd/profiler_util.py
``_build_table``), as profile events.

What the tool prints (read from ``_build_table``, PyTorch 1.4 to 2.x)::

    ---------------------------------  ------------  ------------  ...  ------------
                                 Name    Self CPU %      Self CPU  ...    # of Calls
    ---------------------------------  ------------  ------------  ...  ------------
                      model_inference        10.17%       5.509ms  ...             1
    ---------------------------------  ------------  ------------  ...  ------------
    Self CPU time total: 57.549ms
    Self CUDA time total: 11.666ms

- each column is ``"-" * width`` plus two spaces in the rules, so the rule gives every
  column's span; the name column is right-aligned (left-aligned before PyTorch 1.8), names
  longer than it are cut to ``...``; an optional ``header`` line and "This report only
  display top-level ops statistics" sit above the first rule;
- columns: Name, [Overload Name], Self CPU %, Self CPU, CPU total %, CPU total, CPU time
  avg, then with device time ``Self <DEV>``, ``Self <DEV> %``, ``<DEV> total``, ``<DEV>
  time avg`` (DEV = CUDA, XPU, MPS, PRIVATEUSE1, ...), with profile_memory ``CPU Mem``,
  ``Self CPU Mem`` [``<DEV> Mem``, ``Self <DEV> Mem``], ``# of Calls``, [Node ID], [Input
  Shapes], [Source Location, continued on rows with an empty name], [Total FLOPs];
  PyTorch before 1.8 wrote ``Self CPU total %``, ``Self CPU total``, ``CUDA total %`` and
  ``Number of Calls``. Docs and tutorials print tables with columns left out;
- times are ``_format_time``: ``%.3fus``, ``%.3fms`` or ``%.3fs``; shares ``%.2f%%`` or
  ``NaN``; memory ``_format_memory`` (``12.5 MB``, older ``12.5 Mb``): not read;
- the footer ``Self CPU time total: T`` and, with device time, ``Self CUDA time total: T``.

Decisions:

- One ProfileEvent per row, section "torch", depth 0 (key_averages is flat: ops overlap,
  an op's CPU total holds its children's). ``total`` is the row's **self** time (Self
  CPU), the one time whose rows add up to the report's total (the footer), so a block
  total and a diff never count a child twice; ``cpu_time`` = Self CPU, ``gpu_time`` = Self
  CUDA (or the device's), ``ratio``/``cpu_ratio`` = Self CPU % / 100, ``gpu_ratio`` =
  Self <DEV> % / 100, ``ave`` = CPU time avg as printed (CPU total / calls, of the
  inclusive time), calls = ``# of Calls``. The inclusive totals stay in ``raw``.
- A table without any CPU column (a trimmed one, "Name  Self CUDA  CUDA total") has
  section "torch device", place the device ("CUDA"), total = gpu_time = Self <DEV>, ave =
  <DEV> time avg: a diff never matches its self-device times with another run's self CPU.
- Without a share column, ratio = self time / the footer's total (what the column would
  print), so a table cut by ``row_limit`` still gives its report's total.
- The footer's totals are Measurements ``self_cpu_time_total`` / ``self_cuda_time_total``
  (ms, framework "pytorch", stats source "torch_profiler"). A footer whose unit is not
  one PyTorch prints (``57.549m`` in the tutorial's page) is a Problem, not a guess.
- Input Shapes, Overload Name, Node ID and the first Source Location line are part of the
  event name (``aten::addmm [[1, 2], [2, 3]]``): they are what key_averages grouped by.
  Rows whose printed names are equal (long names cut to the same 52 characters) are one
  event, their times and calls added, with a warning.
- A row that does not fit the columns, a time without a unit PyTorch prints, a negative
  self time (printed by some versions for async ops): a Problem naming the line. A table
  without its closing rule was cut: its rows are read and a Problem says so.

Speed: one ``re.finditer`` on the literal-led header pattern; only a table's lines are
walked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem, ProfileEvent
from perfboard.units import UnitError, normalise

NAME = "torch_profiler"
ANCHORS: tuple[str, ...] = ("Self CPU time total", "# of Calls", "Number of Calls", "Self CUDA")

# The header row: "Name" then (after an optional Overload Name) a "Self ..." column.
_HEADER = re.compile(r"Name[ \t]{2,}(?:Overload Name[ \t]{2,})?Self ")
_RULE = re.compile(r"[ \t]*(?:#[ \t]*)?-{3,}(?:[ \t]{1,3}-{3,})+[ \t]*$")
_DASHES = re.compile(r"-{3,}")
_TIME = re.compile(r"(-?\d+(?:\.\d+)?)(us|ms|s)")
_FOOTER = re.compile(r"Self (\S+) time total:[ \t]*(\S*)")
_FOOTER_VALUE = re.compile(r"(-?\d+(?:\.\d+)?)([A-Za-z]*)")
_PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)%")


_END = object()  # a line after the rows that is no row


class _Bad(ValueError):
    """A cell that cannot be read; its message is the Problem's reason."""


@dataclass(slots=True)
class _Columns:
    spans: list[tuple[int, int]]
    roles: list[str]  # "name", "self_cpu", ..., "" for a column not read
    device: str = ""  # "CUDA", "XPU", ... of the device columns, "" without any


@dataclass(slots=True)
class _Row:
    name: str
    line: int
    raw: str
    values: dict[str, float | None] = field(default_factory=dict)
    calls: int | None = None
    merged: int = 1


def parse(doc: DocText) -> Iterator[Item]:
    """ProfileEvents of every key_averages table, the footers' totals, and Problems."""
    text = doc.text
    resume = 0
    for hit in _HEADER.finditer(text):
        if hit.start() < resume:
            continue
        start, end = doc.line_bounds(hit.start())
        items, resume = _table(doc, start, end)
        yield from sorted(items, key=lambda item: item.line)


def _problem(line: int, reason: str, raw: str, warning: bool = False) -> Problem:
    return Problem(line, reason, raw, NAME, "warning" if warning else "error")


# -- columns --------------------------------------------------------------------------


def _role(header: str) -> tuple[str, str]:
    """(role, device) of a column header; role "" for a column not read."""
    low = " ".join(header.lower().split())
    if low == "name":
        return "name", ""
    if low.endswith(" mem") or "flops" in low:
        return "", ""
    if low in ("# of calls", "number of calls", "calls", "count"):
        return "calls", ""
    if low in ("input shapes", "overload name", "source location", "node id"):
        return low.replace(" ", "_"), ""
    m = re.fullmatch(r"self (\w+)(?: total)?( %)?", low)
    if m:
        if m[1] == "cpu":
            return ("self_cpu_pct" if m[2] else "self_cpu"), ""
        return ("self_dev_pct" if m[2] else "self_dev"), m[1].upper()
    m = re.fullmatch(r"(\w+) total( %)?", low)
    if m:
        if m[2]:
            return "", ""  # CPU total % and the like: inclusive shares, not read
        return ("cpu_total" if m[1] == "cpu" else "dev_total"), ("" if m[1] == "cpu" else m[1])
    m = re.fullmatch(r"(\w+) time avg", low)
    if m:
        return ("cpu_avg" if m[1] == "cpu" else "dev_avg"), ("" if m[1] == "cpu" else m[1])
    return "", ""


def _columns(rule: str, header: str) -> _Columns:
    spans = [(m.start(), m.end()) for m in _DASHES.finditer(rule)]
    # Header names hold single spaces; a long one can overflow its column ("Self CPU
    # total %" over 15 dashes), so they are split on wider gaps when that gives them all.
    names = re.split(r"[ \t]{2,}", header.strip().lstrip("#").strip())
    if len(names) != len(spans):
        names = [
            header[a:] if i == len(spans) - 1 else header[a:b] for i, (a, b) in enumerate(spans)
        ]
    roles, device = [], ""
    for cell in names:
        role, dev = _role(cell)
        roles.append(role)
        if dev and not device:
            device = dev.upper()
    return _Columns(spans, roles, device)


# -- one table ------------------------------------------------------------------------


def _table(doc: DocText, start: int, end: int) -> tuple[list[Item], int]:
    text = doc.text
    header = text[start:end]
    number = doc.line_at(start)
    items: list[Item] = []
    # The rule below the header gives the spans; the one above must be there too.
    below_end = text.find("\n", end + 1)
    below = text[end + 1 : below_end if below_end >= 0 else len(text)]
    if end >= len(text) or not _RULE.match(below):
        return items, end  # the column names in prose, not a table
    cols = _columns(below, header)
    if "name" not in cols.roles:
        items.append(_problem(number, "torch profiler header without a Name column", header))
        return items, end
    if "self_cpu" not in cols.roles and "self_dev" not in cols.roles:
        items.append(_problem(number, "torch profiler table without a self time column", header))
        return items, end
    rows: dict[str, _Row] = {}
    closed = False
    pos = (below_end + 1) if below_end >= 0 else len(text)
    last = pos
    footer_at = pos
    row_line = number + 2
    for row_line, line_start, line in doc.lines_from(pos) if pos < len(text) else ():
        last = line_start + len(line)
        if _RULE.match(line):
            closed = True
            footer_at = last + 1
            break
        if not line.strip():
            break
        row = _row(line, cols, row_line)
        if row is _END:
            break
        if isinstance(row, Problem):
            items.append(row)
        elif row is None:
            continue  # a Source Location continuation line
        elif row.name in rows:
            _merge(rows[row.name], row)
        else:
            rows[row.name] = row
    footers: dict[str, float] = {}
    resume = last
    if closed:
        footers, resume = _footers(doc, footer_at, items)
    else:
        items.append(
            _problem(row_line, "torch profiler table cut: no closing rule", "", warning=True)
        )
    for row in rows.values():
        if row.merged > 1:
            items.append(
                _problem(
                    row.line,
                    f"{row.merged} rows print the name {row.name!r} (cut by the table's "
                    "width): read as one event, their times added",
                    row.raw,
                    warning=True,
                )
            )
        items.append(_event(row, cols, footers))
    return items, resume


def _footers(doc: DocText, pos: int, items: list[Item]) -> tuple[dict[str, float], int]:
    """The 'Self X time total:' lines right after the closing rule: {"CPU": ms, ...}."""
    footers: dict[str, float] = {}
    resume = pos
    if pos >= len(doc.text):
        return footers, resume
    for number, start, line in doc.lines_from(pos):
        m = _FOOTER.match(line.strip().lstrip("#").strip())
        if not m:
            break
        resume = start + len(line)
        device = m[1].upper()
        value = _FOOTER_VALUE.fullmatch(m[2])
        unit = value[2] if value else ""
        if not value or unit not in ("us", "ms", "s"):
            items.append(
                _problem(
                    number,
                    f"Self {m[1]} time total {m[2]!r}: not a time PyTorch prints (us, ms, s)",
                    line,
                )
            )
            continue
        try:
            q = normalise(float(value[1]), unit)
        except UnitError as error:
            items.append(_problem(number, f"Self {m[1]} time total: {error}", line))
            continue
        footers[device] = q.value
        items.append(
            Measurement(
                benchmark="",
                metric=f"self_{device.lower()}_time_total",
                value=q.value,
                unit=q.unit,
                framework="pytorch",
                stats={"source": NAME},
                line=number,
                raw=line,
            )
        )
    return footers, resume


def _row(line: str, cols: _Columns, number: int) -> _Row | Problem | object | None:
    cells: dict[str, str] = {}
    last = len(cols.spans) - 1
    for i, ((a, b), role) in enumerate(zip(cols.spans, cols.roles, strict=True)):
        if i < last and line[b : b + 2].strip():
            return _problem(number, "torch profiler row does not fit the table's columns", line)
        cell = line[a:] if i == last else line[a:b]
        if role:
            cells[role] = cell.strip()
    name = cells.get("name", "")
    valued = ("self_cpu", "self_dev", "cpu_total", "dev_total", "calls")
    if name and not any(cells.get(k) for k in valued):
        return _END  # "[... truncated ...]", prose: the table ends here
    if not name:
        if cells.get("source_location") and not any(
            cells.get(k) for k in ("self_cpu", "self_dev", "calls")
        ):
            return None
        return _problem(number, "torch profiler row without a name", line)
    for extra in ("overload_name",):
        if cells.get(extra):
            name = f"{name}.{cells[extra]}"
    if cells.get("node_id") not in (None, "", "-1"):
        name = f"{name} (node {cells['node_id']})"
    if cells.get("input_shapes"):
        name = f"{name} {cells['input_shapes']}"
    if cells.get("source_location"):
        name = f"{name} @ {cells['source_location']}"
    row = _Row(name, number, line)
    try:
        for role in ("self_cpu", "cpu_total", "cpu_avg", "self_dev", "dev_total", "dev_avg"):
            if role in cells:
                row.values[role] = _time(cells[role])
        for role in ("self_cpu_pct", "self_dev_pct"):
            if role in cells:
                row.values[role] = _percent(cells[role])
        if "calls" in cells:
            row.calls = _count(cells["calls"])
    except _Bad as bad:
        return _problem(number, f"torch profiler row: {bad}", line)
    for role in ("self_cpu", "self_dev"):
        value = row.values.get(role)
        if value is not None and value < 0:
            return _problem(number, f"torch profiler row: negative {role} time", line)
    return row


def _merge(into: _Row, row: _Row) -> None:
    calls = (into.calls or 0) + (row.calls or 0)
    for key, value in row.values.items():
        old = into.values.get(key)
        if key.endswith("_avg"):
            # weighted by calls: avg * calls is each row's inclusive total
            a = (old or 0.0) * (into.calls or 0) + (value or 0.0) * (row.calls or 0)
            into.values[key] = a / calls if calls else None
        elif old is None or value is None:
            into.values[key] = old if value is None else value
        else:
            into.values[key] = old + value
    into.calls = calls if (into.calls is not None or row.calls is not None) else None
    into.raw += "\n" + row.raw
    into.merged += 1


def _event(row: _Row, cols: _Columns, footers: dict[str, float]) -> ProfileEvent:
    v = row.values
    cpu_pct, dev_pct = v.get("self_cpu_pct"), v.get("self_dev_pct")
    on_cpu = "self_cpu" in cols.roles
    total = v.get("self_cpu") if on_cpu else v.get("self_dev")
    share = cpu_pct if on_cpu else dev_pct
    if share is not None:
        ratio: float | None = round(share / 100, 8)
    else:
        report = footers.get("CPU" if on_cpu else cols.device)
        ratio = total / report if total is not None and report else None
    return ProfileEvent(
        event=row.name,
        calls=row.calls,
        total=total,
        cpu_time=v.get("self_cpu"),
        cpu_ratio=round(cpu_pct / 100, 8) if cpu_pct is not None else None,
        gpu_time=v.get("self_dev"),
        gpu_ratio=round(dev_pct / 100, 8) if dev_pct is not None else None,
        ave=v.get("cpu_avg") if on_cpu else v.get("dev_avg"),
        ratio=ratio,
        section="torch" if on_cpu else "torch device",
        place="" if on_cpu else cols.device,
        line=row.line,
        raw=row.raw,
    )


# -- cells ----------------------------------------------------------------------------


def _time(cell: str) -> float | None:
    """ "5.509ms" -> 5.509; PyTorch writes us, ms or s after every time."""
    m = _TIME.fullmatch(cell)
    if not m:
        raise _Bad(f"time {cell!r} is not a number with us, ms or s")
    value = float(m[1])
    q = normalise(abs(value), m[2]).value
    if m[2] == "us":
        q = abs(value) / 1000  # divided: 231.000us -> 0.231, not 0.23099999999999998
    return math.copysign(q, value)


def _percent(cell: str) -> float | None:
    if cell.lower() == "nan" or cell in ("0", "--"):
        return None  # no total to share (NaN), an async event's 0
    m = _PERCENT.fullmatch(cell)
    if not m:
        raise _Bad(f"share {cell!r} is not a percentage")
    return float(m[1])


def _count(cell: str) -> int:
    if not cell.isdigit():
        raise _Bad(f"calls {cell!r} is not a count")
    return int(cell)
