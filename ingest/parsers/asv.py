"""airspeed velocity (asv) result files: ``results/<machine>/<commit>-<env>.json``.

The layout was taken from asv's own code (airspeed-velocity/asv asv/results.py
``Results.save`` / ``Results.load`` / ``update_to_2``, asv_runner statistics.py):

- format version 2 (asv 0.5+): ``{"commit_hash", "env_name", "date" (the commit's date,
  ms since the epoch), "params" (machine, arch, cpu, num_cpu, os, ram, python and the
  environment matrix), "python", "requirements", "env_vars", "result_columns": ["result",
  "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
  "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"],
  "results": {name: [one value per column, trailing None columns left off]},
  "durations": {"<build>": s, ...}, "version": 2}``. ``result`` is a list (one value per
  combination of the benchmark's parameters, None for a failure, NaN for a skip) or None
  when everything failed; ``params`` is a list of lists of parameter values as ``repr``
  strings (``"'step'"``, ``"8"``), [] for an unparameterised benchmark, and ``result`` is
  the flattened cartesian product (``itertools.product(*params)``); each stats column holds
  one value per combination.
- format version 1: ``"results": {name: value | {"result": value or [...], "params":
  [...], "stats": [{"ci_99": [a, b], "q_25", "q_75", "number", "repeat"}], "samples"}}``
  with ``started_at`` / ``duration`` / ``benchmark_version`` as top-level dicts.
- ``benchmarks.json`` (units, parameter names) and ``machine.json`` are other files of the
  folder: no ``results`` object, not read here.

Decisions:

- One Measurement per benchmark and parameter combination: ``benchmark`` is asv's
  benchmark name ("benchmark.AlohaPot.track_metric"), params ``param1``, ``param2``... (asv's
  names for parameters that benchmarks.json does not name) with the values unquoted
  ("'step'" -> "step", "8" -> 8). ``framework`` "", ``task`` "microbenchmark".
- Units by asv's naming convention, since a result file names none: ``time_*`` and
  ``timeraw_*`` are seconds (metric ``time``, in ms, with stat "median": asv stores the
  median of its samples), ``mem_*`` bytes (metric ``memory``, MB), ``peakmem_*`` bytes
  (metric ``peak_memory``, MB); ``track_*`` values are stored as they are, unit "" and
  direction "lower", metric ``track``, with one warning Problem per benchmark saying the unit
  is not in the file. Any other prefix is a Problem per benchmark (nothing stored).
- ``version`` = commit_hash; ``device`` = params.machine; ``measured_at`` = the benchmark's
  ``started_at`` (UTC), else the file's ``date``; testbed: the other ``params`` and
  ``env_name``. stats: the 99% confidence interval (``ci_99_a``/``ci_99_b``) and the
  quartiles (``q_25``/``q_75``) in the stored unit, ``number``, ``repeat``, the number of
  samples, the benchmark's ``duration_s`` and ``benchmark_version``, and ``commit_date``.
- A None result is a Measurement with status "error" (the benchmark failed), a NaN result
  status "missing" (skipped); never a number. A results object that does not read is a
  Problem at its first line.

Speed: one ``re.finditer`` on ``"results"``; a hit is decoded only with a
``"commit_hash"`` within JSON_WINDOW above it (found once per text), and once.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ingest.parsers.jsonscan import cut_object, find_object, near, positions
from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "asv"
ANCHORS: tuple[str, ...] = ('"commit_hash"',)

TASK = "microbenchmark"
JSON_WINDOW = 1 << 20  # how far above "results" the file's "{" and "commit_hash" may be

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (("json", re.compile(r'"results"\s*:')),)
# prefix of the benchmark's function name -> (metric, unit as asv means it, stat)
_KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("timeraw_", "time", "s", "median"),
    ("time_", "time", "s", "median"),
    ("peakmem_", "peak_memory", "bytes", ""),
    ("mem_", "memory", "bytes", ""),
    ("track_", "track", "", ""),
)
_STATS_COLUMNS = ("ci_99_a", "ci_99_b", "q_25", "q_75")
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def parse(doc: DocText) -> Iterator[Item]:
    """One Measurement per asv benchmark and parameter combination, with Problems."""
    text = doc.text
    consumed = -1
    tried: set[int] = set()
    marks: list[int] | None = None
    for pos, _kind, _m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        # A cheap look first: a result file writes "commit_hash" (and in version 2
        # "result_columns") above "results"; only then the JSON reader.
        if marks is None:
            marks = positions(text, '"commit_hash"')
        if not near(marks, pos - JSON_WINDOW, pos):
            continue
        floor = max(consumed, pos - JSON_WINDOW, 0)
        obj, start, end, _joined = find_object(text, pos, "results", floor, tried)
        if obj is None:
            if start >= 0 and '"commit_hash"' in text[start:pos]:
                problem, consumed = cut_object(doc, start, "asv result JSON", NAME)
                yield problem
            continue
        if not isinstance(obj.get("results"), dict) or "commit_hash" not in obj:
            continue  # benchmarks.json, machine.json, other tools' "results"
        items = _read(doc, obj, pos, end)
        items.sort(key=lambda item: item.line)
        yield from items
        consumed = end


def _ms_date(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(value / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def _param_value(text: Any) -> ParamValue:
    if not isinstance(text, str):
        return text if isinstance(text, int | float | bool) else str(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _rows(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, {"result", "params", "version", "started_at", "duration", "stats": [...]})."""
    results = obj["results"]
    columns = obj.get("result_columns")
    if isinstance(columns, list):
        for name, values in results.items():
            if not isinstance(values, list):
                yield name, {"bad": values}
                continue
            row = dict(zip(columns, values, strict=False))
            out: dict[str, Any] = {
                k: row.get(k) for k in ("result", "params", "version", "started_at", "duration")
            }
            stats: dict[str, Any] = {}
            for key in (*_STATS_COLUMNS, "number", "repeat"):
                stats[key] = row.get(f"stats_{key}")
            out["stats_columns"] = stats
            samples = row.get("samples")
            out["samples"] = samples if isinstance(samples, list) else None
            yield name, out
        return
    # format version 1
    started = obj.get("started_at") if isinstance(obj.get("started_at"), dict) else {}
    durations = obj.get("duration") if isinstance(obj.get("duration"), dict) else {}
    versions = obj.get("benchmark_version")
    versions = versions if isinstance(versions, dict) else {}
    for name, value in results.items():
        if not isinstance(value, dict):
            value = {"result": [value], "params": []}
        result = value.get("result")
        if result is not None and not isinstance(result, list):
            result = [result]
        stats_list = value.get("stats")
        if stats_list is not None and not isinstance(stats_list, list):
            stats_list = [stats_list]
        stats: dict[str, Any] = {k: None for k in (*_STATS_COLUMNS, "number", "repeat")}
        if isinstance(stats_list, list):

            def pick(getter: Any, items: list[Any] = stats_list) -> list[Any]:
                return [getter(z) if isinstance(z, dict) else None for z in items]

            ci = pick(lambda z: z.get("ci_99"))
            stats["ci_99_a"] = [c[0] if isinstance(c, list) and len(c) == 2 else None for c in ci]
            stats["ci_99_b"] = [c[1] if isinstance(c, list) and len(c) == 2 else None for c in ci]
            for key in ("q_25", "q_75", "number", "repeat"):
                stats[key] = pick(lambda z, key=key: z.get(key))
        yield (
            name,
            {
                "result": result,
                "params": value.get("params") or [],
                "version": versions.get(name),
                "started_at": started.get(name),
                "duration": durations.get(name),
                "stats_columns": stats,
                "samples": value.get("samples") if isinstance(value.get("samples"), list) else None,
            },
        )


def _kind(name: str) -> tuple[str, str, str] | None:
    function = name.rsplit(".", 1)[-1]
    for prefix, metric, unit, stat in _KINDS:
        if function.startswith(prefix):
            return metric, unit, stat
    return None


def _read(doc: DocText, obj: dict[str, Any], pos: int, end: int) -> list[Item]:
    text = doc.text
    machine_params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
    device = str(machine_params.get("machine") or "")
    testbed = {
        str(k): str(v) for k, v in machine_params.items() if k != "machine" and v is not None
    }
    if obj.get("env_name"):
        testbed["env_name"] = str(obj["env_name"])
    version = str(obj["commit_hash"]) if obj.get("commit_hash") else None
    commit_date = _ms_date(obj.get("date"))
    items: list[Item] = []
    cursor = pos
    for name, row in _rows(obj):
        key = f'"{name}"'
        at = text.find(key, cursor, end)
        if at < 0:
            at = text.find(key, pos, end)
        at = at if at >= 0 else pos
        cursor = at + len(key)
        next_key = end
        line = doc.line_at(at)
        head = f"{key}: ..."
        if "bad" in row:
            items.append(Problem(line, f"asv result of {name!r} is not a list", head, NAME))
            continue
        kind = _kind(name)
        if kind is None:
            items.append(
                Problem(
                    line,
                    f"asv benchmark {name!r}: its kind (time_, mem_, "
                    "peakmem_, track_) and so its unit is unknown",
                    head,
                    NAME,
                )
            )
            continue
        metric, unit, stat = kind
        if not unit:
            items.append(
                Problem(
                    line,
                    f"asv {name!r}: track_ benchmark, unit not in the "
                    "result file (stored unitless)",
                    head,
                    NAME,
                    "warning",
                )
            )
        params_lists = row["params"] if isinstance(row["params"], list) else []
        combos = list(itertools.product(*[p if isinstance(p, list) else [p] for p in params_lists]))
        result = row["result"]
        if result is None:
            result = [None] * len(combos)
        elif not isinstance(result, list):
            result = [result]
        if len(combos) != len(result):
            items.append(
                Problem(
                    line,
                    f"asv {name!r}: {len(result)} results for {len(combos)} parameter combinations",
                    head,
                    NAME,
                )
            )
            combos = combos[: len(result)] + [()] * max(0, len(result) - len(combos))
        started = _ms_date(row["started_at"])
        measured_at = started or commit_date
        base_stats: dict[str, Any] = {}
        if _finite(row["duration"]):
            base_stats["duration_s"] = float(row["duration"])
        if row["version"]:
            base_stats["benchmark_version"] = str(row["version"])
        if commit_date is not None:
            base_stats["commit_date"] = commit_date.isoformat()
        value_cursor = cursor
        for j, (combo, value) in enumerate(zip(combos, result, strict=False)):
            params: dict[str, ParamValue] = {
                f"param{i + 1}": _param_value(v) for i, v in enumerate(combo)
            }
            if stat:
                params["stat"] = stat
            stats = dict(base_stats)
            status = "ok"
            number: float | None = None
            raw_value = "null" if value is None else repr(value)
            found = -1
            if _finite(value):
                found = _find_number(text, value, value_cursor, next_key)
                if found >= 0:
                    value_cursor = found + 1
            raw = f"{key}{_combo_text(combo)}: {raw_value}"
            # A null or NaN is on the line of the value before it (json writes no repr).
            value_line = doc.line_at(found if found >= 0 else value_cursor)
            if value is None:
                status = "error"
            elif isinstance(value, float) and math.isnan(value):
                status = "missing"
            elif not _finite(value):
                items.append(
                    Problem(
                        value_line, f"asv {name!r}: result {value!r} is not a number", raw, NAME
                    )
                )
                continue
            else:
                number = float(value)
            factor = 1.0
            out_unit, direction = unit, "lower"
            if unit and number is not None:
                try:
                    q = normalise(number, unit)
                except UnitError as e:
                    items.append(Problem(value_line, f"asv {name!r}: {e}", raw, NAME))
                    continue
                factor = q.value / number if number else normalise(1.0, unit).value
                number, out_unit, direction = q.value, q.unit, q.direction
            elif unit:
                q = normalise(1.0, unit)
                factor, out_unit, direction = q.value, q.unit, q.direction
            for col in _STATS_COLUMNS:
                v = _at(row["stats_columns"].get(col), j)
                if _finite(v):
                    stats[col] = float(v) * factor
            for col in ("number", "repeat"):
                v = _at(row["stats_columns"].get(col), j)
                if _finite(v):
                    stats[col] = int(v) if float(v).is_integer() else v
            samples = _at(row["samples"], j)
            n_samples = len(samples) if isinstance(samples, list) else None
            items.append(
                Measurement(
                    benchmark=name,
                    metric=metric,
                    value=number,
                    unit=out_unit,
                    task=TASK,
                    direction=direction,  # type: ignore[arg-type]
                    framework="",
                    device=device,
                    params=params,
                    testbed=dict(testbed),
                    version=version,
                    measured_at=measured_at,
                    status=status,  # type: ignore[arg-type]
                    samples=n_samples,
                    stats=stats,
                    line=value_line,
                    raw=raw,
                )
            )
    return items


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _at(values: Any, j: int) -> Any:
    if isinstance(values, list) and j < len(values):
        return values[j]
    return None


def _combo_text(combo: tuple[Any, ...]) -> str:
    return f"[{', '.join(str(v) for v in combo)}]" if combo else ""


def _find_number(text: str, value: float, start: int, end: int) -> int:
    """Where a result value is written (json writes repr(float)); -1 if not found."""
    for spelling in (repr(value), repr(float(value)), f"{value:g}"):
        found = text.find(spelling, start, end)
        if found >= 0:
            return found
    return -1
