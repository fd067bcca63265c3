"""llama.cpp llama-bench results: its markdown table and its CSV, JSON, JSONL and SQL output.

The strings were taken from llama-bench's printers (ggml-org/llama.cpp
``examples/llama-bench/llama-bench.cpp`` from 2023, ``tools/llama-bench/llama-bench.cpp``
since 2025):

- ``markdown_printer`` (``-o md``, the default): a header row of the fields shown, always
  ``model``, ``size``, ``params``, ``backend``, then ``ngl`` (GPU backends), ``threads``
  (CPU backends or when set) and only those settings that were given on the command line
  (``n_batch``, ``n_ubatch``, ``type_k``, ``type_v``, ``main_gpu``, ``sm``, ``nkvo``,
  ``fa``, ``mmap``, ``embd``, ``ts``, ``dev``, ``ot``, ``mmq`` (2023), ``nopo``, ...), then
  ``test`` and ``t/s``. ``model`` is the model description ("llama 7B Q4_0", "llama 7B
  mostly Q4_0" in 2023), ``size`` "3.56 GiB" / "960.00 MiB", ``params`` "6.74 B" / "494.03
  M". ``test``: "pp 512" / "tg 128" until early 2024, then "pp512", "tg128",
  "pp512+tg128", and with a depth "pp512 @ d1024". ``t/s``: ``"%.2f ± %.2f"``, the mean
  and standard deviation of the repetitions' tokens per second. After the table:
  ``build: 32d9f7d9 (1786)``, the commit and build number.
- ``csv_printer``: a header of the field names (``build_commit,build_number,...``) and one
  row per test, every value quoted; ``json_printer``: an array of objects, one per test,
  with the same fields plus ``samples_ns`` and ``samples_ts``; ``jsonl_printer``: the same
  objects one per line; ``sql_printer``: ``CREATE TABLE IF NOT EXISTS llama_bench`` and one
  ``INSERT INTO llama_bench (fields) VALUES ('...', ...);`` per test. The fields:
  build_commit, build_number, cpu_info, gpu_info, backends (2023: the booleans cuda,
  opencl, metal, gpu_blas, blas...), model_filename, model_type, model_size (bytes),
  model_n_params, the settings (n_batch, n_ubatch, n_threads, cpu_mask, cpu_strict, poll,
  type_k, type_v, n_gpu_layers, split_mode, main_gpu, no_kv_offload, flash_attn,
  tensor_split, use_mmap, embeddings, ...), n_prompt, n_gen, n_depth (2025), test_time
  (when the test ran, UTC), avg_ns, stddev_ns (nanoseconds per repetition of the whole
  test), avg_ts, stddev_ts (tokens per second: ``1e9 * (n_prompt + n_gen) / ns`` per
  repetition, then averaged).

Decisions:

- Metric ``throughput`` in tokens/s (higher is better): one Measurement with stat "mean"
  (the t/s value, avg_ts) and one with stat "std" (the ± value, stddev_ts). From the
  CSV/JSON/SQL also metric ``test_time`` in ms (stat "mean" from avg_ns, "std" from
  stddev_ns): the time one repetition of the test took (the code times the whole pp/tg
  run per repetition).
- Series identity: benchmark = the model description (the markdown's ``model`` column,
  the JSON's ``model_type``: the only name both print); params = ``test`` (spelled as
  today's printer does: "pp 512" -> "pp512"), ``n_prompt``, ``n_gen``, ``n_depth`` (when
  > 0), ``backend`` and every setting printed, by its field name (``ngl`` ->
  ``n_gpu_layers``, ``threads`` -> ``n_threads``, ``nkvo`` -> ``no_kv_offload``, ``fa`` ->
  ``flash_attn``, ...), booleans as 0/1 and numbers as numbers, so a markdown cell and a
  JSON value of one setting are equal. The markdown shows only the settings that were
  given, the JSON all of them: the two formats of one run are different series.
- testbed: ``model_size`` and ``model_params`` as the markdown prints them (from the JSON
  formatted the same way), ``cpu_info``. device = ``gpu_info`` (JSON), or in markdown the
  CUDA/ROCm ``Device N: NAME, compute capability`` lines just above the table (several
  joined by ", " like gpu_info); else "". framework = "llama.cpp".
- version = the build commit (``build:`` line after the table, ``build_commit``);
  stats["build_number"]; stats["model_filename"] (basename); measured_at = ``test_time``;
  samples = the number of repetitions (``samples_ns``).
- size and params are never measurements (the generic table reader once stored "3.56
  GiB" as memory and "6.74 B" as bytes); t/s is never a time.
- Problems: a row without its closing "|" (cut: its last value may be short), a row with
  fewer cells than the header, a t/s cell that is no "mean ± std", NaN/negative values, a
  JSON object or CSV row that is cut. compare-llama-bench.py tables ("t/s master") and
  llama-batched-bench tables (no ``test`` column) are not read.

Speed: one ``re.finditer`` per literal entry point ("t/s |", '"avg_ts"', "build_commit,
build_number,", "INSERT INTO llama_bench (", "build: "), merged by position; only the
rows of a table found are walked.
"""

from __future__ import annotations

import contextlib
import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.parsers.cells import NUMBER, stat_direction
from ingest.parsers.jsonscan import find_object
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "llama_bench"
ANCHORS: tuple[str, ...] = (
    "t/s |",
    '"avg_ts"',
    "build_commit,build_number,",
    "INSERT INTO llama_bench",
)

FRAMEWORK = "llama.cpp"
MAX_TABLE_ROWS = 10_000
DEVICE_WINDOW = 4096  # how far above a table its "Device 0: ..." lines may be
BUILD_WINDOW = 400  # how far after a table its "build:" footer may start

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("md", re.compile(r"t/s[ \t]*\|")),
    ("build", re.compile(r"build: (?P<commit>[0-9a-f]{6,40}) \((?P<number>\d+)\)")),
    ("json", re.compile(r'"avg_ts"\s*:')),
    ("csv", re.compile(r"build_commit,build_number,[^\n]*")),
    ("sql", re.compile(r"INSERT INTO llama_bench \((?P<fields>[^)]*)\)\s*VALUES\s*\(")),
)

_NUM = NUMBER
_TS_CELL = re.compile(rf"(?P<mean>{_NUM})(?:\s*(?:±|\+-|\+/-)\s*(?P<std>{_NUM}))?")
_TEST = re.compile(
    r"(?:pp ?(?P<pp>\d+)(?:\+tg ?(?P<pg>\d+))?|tg ?(?P<tg>\d+))(?: @ d(?P<depth>\d+))?"
)
_DEVICE = re.compile(r"Device \d+: (?P<name>[^,\n]+), compute capability")
_SEPARATOR = re.compile(r"\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*")
_SQL_VALUE = re.compile(r"'((?:[^']|'')*)'")
_INT = re.compile(r"-?\d+")

# Markdown display names -> field names (markdown_printer.get_field_display_name).
_DISPLAY = {
    "ngl": "n_gpu_layers",
    "threads": "n_threads",
    "sm": "split_mode",
    "mg": "main_gpu",
    "nkvo": "no_kv_offload",
    "fa": "flash_attn",
    "mmq": "mul_mat_q",
    "ts": "tensor_split",
    "mmap": "use_mmap",
    "dio": "use_direct_io",
    "embd": "embeddings",
    "nopo": "no_op_offload",
    "noh": "no_host",
    "lm": "load_mode",
    "dev": "devices",
    "ot": "tensor_buft_overrides",
    "fitt": "fit_target",
    "fitc": "fit_min_ctx",
    "backend": "backend",
}
# Record fields that are no setting of the test (identity, facts or results).
_NOT_SETTINGS = frozenset(
    {
        "build_commit",
        "build_number",
        "cpu_info",
        "gpu_info",
        "backends",
        "model_filename",
        "model_type",
        "model_size",
        "model_n_params",
        "n_prompt",
        "n_gen",
        "n_depth",
        "test_time",
        "avg_ns",
        "stddev_ns",
        "avg_ts",
        "stddev_ts",
        "samples_ns",
        "samples_ts",
    }
)
# 2023 records: one boolean per backend, in the order get_backend() tried them.
_BACKEND_FLAGS = (
    ("cuda", "CUDA"),
    ("vulkan", "Vulkan"),
    ("kompute", "Kompute"),
    ("metal", "Metal"),
    ("sycl", "SYCL"),
    ("opencl", "OpenCL"),
    ("gpu_blas", "GPU BLAS"),
    ("blas", "BLAS"),
)
_BACKEND_FLAG_NAMES = frozenset(name for name, _ in _BACKEND_FLAGS)


@dataclass
class _Pending:
    """Items of a markdown table, held until its ``build:`` footer gives their version."""

    items: list[Item] = field(default_factory=list)
    end: int = -1  # where the table ended


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements and Problems of every llama-bench result in the text, in order."""
    text = doc.text
    resume = 0
    pending = _Pending()
    tried: set[int] = set()
    failed: set[int] = set()
    floor = 0  # the lines above a table start after the previous result
    for pos, kind, m in hits(text, _PATTERNS):
        if pos < resume:
            continue
        if kind == "build":
            if pending.items and 0 <= pos - pending.end <= BUILD_WINDOW:
                for item in pending.items:
                    if isinstance(item, Measurement):
                        item.version = m.group("commit")
                        item.stats["build_number"] = int(m.group("number"))
            yield from _flush(pending)
            continue
        if kind == "md":
            found = _markdown(doc, pos, floor)
            if found is None:
                continue
            items, end = found
            yield from _flush(pending)
            pending.items, pending.end = items, end
            resume = floor = end
            continue
        yield from _flush(pending)
        if kind == "json":
            items, end = _json(doc, pos, floor, tried, failed)
        elif kind == "csv":
            items, end = _csv(doc, m)
        else:
            items, end = _sql(doc, m)
        yield from sorted(items, key=lambda i: i.line)
        resume = floor = max(end, pos + 1)
    yield from _flush(pending)


def _flush(pending: _Pending) -> Iterator[Item]:
    items, pending.items, pending.end = pending.items, [], -1
    yield from items


def _problem(line: int, reason: str, raw: str, severity: str = "error") -> Problem:
    return Problem(line, reason, raw, NAME, severity)  # type: ignore[arg-type]


# -- values shared by every format ----------------------------------------------------


def _param(value: Any) -> ParamValue:
    """A setting as a param: booleans 0/1 (what the markdown prints), integers as numbers."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    text = str(value).strip()
    return int(text) if _INT.fullmatch(text) else text


def test_name(n_prompt: int, n_gen: int, n_depth: int) -> str:
    """The test as today's markdown printer names it: "pp512", "tg128", "pp512+tg128",
    "pp512 @ d1024"."""
    if n_prompt > 0 and n_gen == 0:
        name = f"pp{n_prompt}"
    elif n_gen > 0 and n_prompt == 0:
        name = f"tg{n_gen}"
    else:
        name = f"pp{n_prompt}+tg{n_gen}"
    return f"{name} @ d{n_depth}" if n_depth > 0 else name


def model_size(size: int) -> str:
    """Bytes as the markdown printer shows them: "3.56 GiB", "960.00 MiB"."""
    if size < 1024**3:
        return f"{size / 1024 / 1024:.2f} MiB"
    return f"{size / 1024**3:.2f} GiB"


def model_params(n: int) -> str:
    """A parameter count as the markdown printer shows it: "6.74 B", "494.03 M"."""
    return f"{n / 1e6:.2f} M" if n < 1_000_000_000 else f"{n / 1e9:.2f} B"


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


@dataclass
class _Series:
    benchmark: str = ""
    device: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    testbed: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    version: str | None = None
    measured_at: datetime | None = None
    samples: int | None = None


def _measurement(
    series: _Series,
    metric: str,
    stat: str,
    number: float,
    unit: str,
    line: int,
    raw: str,
    problems: list[Item],
) -> Measurement | None:
    try:
        q = normalise(number, unit)
    except UnitError as e:
        problems.append(_problem(line, f"{metric} {stat}: {e}", raw))
        return None
    return Measurement(
        benchmark=series.benchmark,
        metric=metric,
        value=q.value,
        unit=q.unit,
        direction=stat_direction(q.direction, stat),  # type: ignore[arg-type]
        framework=FRAMEWORK,
        device=series.device,
        params={**series.params, "stat": stat},
        testbed=dict(series.testbed),
        version=series.version,
        measured_at=series.measured_at,
        samples=series.samples,
        stats=dict(series.stats),
        line=line,
        raw=raw,
    )


# -- markdown --------------------------------------------------------------------------


def _cells(line: str) -> tuple[list[str], bool]:
    """The cells of a table row and whether it has its closing "|"."""
    row = line.strip()
    closed = row.endswith("|") and len(row) > 1
    if row.startswith("|"):
        row = row[1:]
    if closed:
        row = row[:-1]
    return [c.strip() for c in row.split("|")], closed


def _markdown(doc: DocText, pos: int, floor: int) -> tuple[list[Item], int] | None:
    """The table whose header holds the "t/s |" at pos: its items and where it ends.

    None when the line is no llama-bench header (a batched-bench or comparison table).
    """
    text = doc.text
    start, end = doc.line_bounds(pos)
    header, _ = _cells(text[start:end])
    names = [h.lower() for h in header]
    if "t/s" not in names or "test" not in names:
        return None
    ts_col, test_col = names.index("t/s"), names.index("test")
    model_col = names.index("model") if "model" in names else -1
    items: list[Item] = []
    device = _devices(text, max(floor, start - DEVICE_WINDOW), start)
    line_no = doc.line_at(start)
    pos = end + 1
    table_end = end
    rows = 0
    while pos < len(text) and rows < MAX_TABLE_ROWS:
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        line = text[pos:line_end]
        line_no += 1
        if not line.strip().startswith("|"):
            break
        table_end = line_end
        rows += 1
        if _SEPARATOR.fullmatch(line.strip()):
            pos = line_end + 1
            continue
        _md_row(line, line_no, header, names, ts_col, test_col, model_col, device, items)
        pos = line_end + 1
    return items, table_end


def _devices(text: str, lo: int, hi: int) -> str:
    found: list[str] = []
    for m in _DEVICE.finditer(text, lo, hi):
        name = m.group("name").strip()
        if name not in found:
            found.append(name)
    return ", ".join(found)


def _md_row(
    line: str,
    number: int,
    header: list[str],
    names: list[str],
    ts_col: int,
    test_col: int,
    model_col: int,
    device: str,
    items: list[Item],
) -> None:
    cells, closed = _cells(line)
    if not closed:
        items.append(_problem(number, "llama-bench row without its closing '|' (cut?)", line))
        return
    if len(cells) < len(header):
        reason = f"llama-bench row has {len(cells)} cells, its header {len(header)}"
        items.append(_problem(number, reason, line))
        return
    series = _Series(device=device)
    if model_col >= 0:
        series.benchmark = cells[model_col]
    for col, name in enumerate(names):
        cell = cells[col]
        if col in (ts_col, test_col, model_col) or col > ts_col:
            continue  # columns after t/s (a hand-added "speedup") are no setting
        if name == "size":
            series.testbed["model_size"] = cell
        elif name == "params":
            series.testbed["model_params"] = cell
        elif cell:
            series.params[_DISPLAY.get(name, name.replace(" ", "_"))] = _param(cell)
    test = cells[test_col]
    tm = _TEST.fullmatch(test)
    if tm:
        n_prompt = int(tm.group("pp") or 0)
        n_gen = int(tm.group("tg") or tm.group("pg") or 0)
        n_depth = int(tm.group("depth") or 0)
        series.params.update(_test_params(n_prompt, n_gen, n_depth))
    else:
        series.params["test"] = test
    ts = _TS_CELL.fullmatch(cells[ts_col])
    if not ts:
        items.append(_problem(number, f"t/s cell {cells[ts_col]!r} is no 'mean ± std'", line))
        return
    for stat, group in (("mean", "mean"), ("std", "std")):
        if ts.group(group) is None:
            continue
        m = _measurement(
            series, "throughput", stat, float(ts.group(group)), "t/s", number, line, items
        )
        if m is not None:
            items.append(m)


def _test_params(n_prompt: int, n_gen: int, n_depth: int) -> dict[str, ParamValue]:
    out: dict[str, ParamValue] = {
        "test": test_name(n_prompt, n_gen, n_depth),
        "n_prompt": n_prompt,
        "n_gen": n_gen,
    }
    if n_depth > 0:
        out["n_depth"] = n_depth
    return out


# -- records: JSON, JSONL, CSV, SQL -----------------------------------------------------


def _record(
    record: dict[str, Any], lines: dict[str, tuple[int, str]], first: tuple[int, str]
) -> list[Item]:
    """The Measurements of one test record (JSON object, CSV row or SQL insert).

    lines: the line and text of each key where the format has one per key (JSON).
    """
    items: list[Item] = []
    series = _Series(benchmark=str(record.get("model_type", "")).strip())
    series.device = str(record.get("gpu_info", "") or "").strip()
    try:
        n_prompt = int(record.get("n_prompt", 0) or 0)
        n_gen = int(record.get("n_gen", 0) or 0)
        n_depth = int(record.get("n_depth", 0) or 0)
    except (TypeError, ValueError):
        items.append(
            _problem(first[0], "llama-bench record: n_prompt/n_gen is no number", first[1])
        )
        return items
    series.params.update(_test_params(n_prompt, n_gen, n_depth))
    backend = record.get("backends")
    if backend is None:
        flags = [label for name, label in _BACKEND_FLAGS if _truthy(record.get(name))]
        backend = (
            flags[0]
            if flags
            else ("CPU" if any(f in record for f in _BACKEND_FLAG_NAMES) else None)
        )
    if backend:
        series.params["backend"] = str(backend)
    for key, value in record.items():
        if key in _NOT_SETTINGS or key in _BACKEND_FLAG_NAMES or isinstance(value, list | dict):
            continue
        if value is None or value == "":
            continue
        series.params[key] = _param(value)
    for key, label, fmt in (
        ("model_size", "model_size", model_size),
        ("model_n_params", "model_params", model_params),
    ):
        with contextlib.suppress(KeyError, TypeError, ValueError):
            series.testbed[label] = fmt(int(record[key]))
    if record.get("cpu_info"):
        series.testbed["cpu_info"] = str(record["cpu_info"]).strip()
    if record.get("build_commit"):
        series.version = str(record["build_commit"])
    if record.get("build_number") not in (None, ""):
        series.stats["build_number"] = _param(record["build_number"])
    if record.get("model_filename"):
        series.stats["model_filename"] = _basename(str(record["model_filename"]))
    stamp = str(record.get("test_time", "") or "")
    if stamp:
        try:
            series.measured_at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            if series.measured_at.tzinfo is None:
                series.measured_at = series.measured_at.replace(tzinfo=UTC)
        except ValueError:
            items.append(_problem(first[0], f"test_time {stamp!r} is no date", first[1], "warning"))
    if isinstance(record.get("samples_ns"), list):
        series.samples = len(record["samples_ns"])
    for key, metric, stat, unit in (
        ("avg_ns", "test_time", "mean", "ns"),
        ("stddev_ns", "test_time", "std", "ns"),
        ("avg_ts", "throughput", "mean", "t/s"),
        ("stddev_ts", "throughput", "std", "t/s"),
    ):
        if key not in record:
            continue
        line, raw = lines.get(key, first)
        try:
            number = float(record[key])
        except (TypeError, ValueError):
            items.append(_problem(line, f"{key} {record[key]!r} is no number", raw))
            continue
        if math.isnan(number) and stat == "std" and series.samples == 1:
            continue  # one repetition has no deviation
        m = _measurement(series, metric, stat, number, unit, line, raw, items)
        if m is not None:
            items.append(m)
    return items


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true")


def _json(
    doc: DocText, pos: int, floor: int, tried: set[int], failed: set[int]
) -> tuple[list[Item], int]:
    text = doc.text
    obj, start, end, joined = find_object(text, pos, "avg_ts", floor, tried)
    if obj is None:
        if start < 0 or start in failed:
            return [], pos + 1
        failed.add(start)
        raw = doc.line_text(start)
        reason = "llama-bench JSON object cannot be read (cut?)"
        return [_problem(doc.line_at(start), reason, raw)], pos + 1
    if "n_prompt" not in obj and "build_commit" not in obj:
        return [], end
    lines: dict[str, tuple[int, str]] = {}
    for key in ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts"):
        at = text.find(f'"{key}"', start, end)
        if at >= 0:
            lines[key] = (doc.line_at(at), doc.line_text(at).strip())
    first = (doc.line_at(start), doc.line_text(start))
    items = _record(obj, lines, first)
    if joined:
        items.append(
            _problem(
                first[0], "llama-bench JSON read with its line breaks removed", first[1], "warning"
            )
        )
    return items, end


def _csv(doc: DocText, m: re.Match[str]) -> tuple[list[Item], int]:
    text = doc.text
    fields = [f.strip() for f in m.group().strip().split(",")]
    items: list[Item] = []
    pos = m.end() + 1
    end = m.end()
    number = doc.line_at(m.start())
    while pos < len(text):
        nl = text.find("\n", pos)
        line_end = len(text) if nl < 0 else nl
        line = text[pos:line_end]
        if not line.startswith('"'):
            break
        number += 1
        end = line_end
        values = next(csv.reader([line]))
        if len(values) != len(fields) or not line.rstrip().endswith('"'):
            reason = (
                f"llama-bench CSV row has {len(values)} values, its header {len(fields)} (cut?)"
            )
            items.append(_problem(number, reason, line))
        else:
            items.extend(_record(dict(zip(fields, values, strict=True)), {}, (number, line)))
        pos = line_end + 1
    return items, end


def _sql(doc: DocText, m: re.Match[str]) -> tuple[list[Item], int]:
    text = doc.text
    fields = [f.strip() for f in m.group("fields").split(",")]
    line_start, line_end = doc.line_bounds(m.start())
    raw = text[line_start:line_end]
    number = doc.line_at(m.start())
    rest = text[m.end() : line_end]
    values = [v.replace("''", "'") for v in _SQL_VALUE.findall(rest)]
    if not rest.rstrip().endswith(");") or len(values) != len(fields):
        reason = f"llama-bench SQL insert has {len(values)} values for {len(fields)} fields (cut?)"
        return [_problem(number, reason, raw)], line_end
    return _record(dict(zip(fields, values, strict=True)), {}, (number, raw)), line_end
