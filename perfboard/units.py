"""Units on the way in: every time becomes ms, every rate a per-second throughput.

Benchmarks print "6.2500us", "1.41084s", "92.2313ms", "0.202 s/step", "4.960 steps/s",
"QPS: 45.1", "fps: 1.05". perfboard stores one unit per kind so that series compare; the
text as written is kept next to the value by the caller.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

# factor to the canonical unit, canonical unit, what it measures, which way is better
_UNITS: dict[str, tuple[float, str, str, str]] = {
    "ns": (1e-6, "ms", "time", "lower"),
    "us": (1e-3, "ms", "time", "lower"),
    "µs": (1e-3, "ms", "time", "lower"),
    "μs": (1e-3, "ms", "time", "lower"),
    "ms": (1.0, "ms", "time", "lower"),
    "s": (1e3, "ms", "time", "lower"),
    "sec": (1e3, "ms", "time", "lower"),
    "min": (6e4, "ms", "time", "lower"),
    "nanoseconds": (1e-6, "ms", "time", "lower"),
    "microseconds": (1e-3, "ms", "time", "lower"),
    "milliseconds": (1.0, "ms", "time", "lower"),
    "seconds": (1e3, "ms", "time", "lower"),
    "second": (1e3, "ms", "time", "lower"),
    "usec": (1e-3, "ms", "time", "lower"),
    "msec": (1.0, "ms", "time", "lower"),
    "nsec": (1e-6, "ms", "time", "lower"),
    "s/step": (1e3, "ms/step", "time", "lower"),
    "ms/step": (1.0, "ms/step", "time", "lower"),
    "steps/s": (1.0, "steps/s", "throughput", "higher"),
    "step/s": (1.0, "steps/s", "throughput", "higher"),
    "fps": (1.0, "samples/s", "throughput", "higher"),
    "qps": (1.0, "samples/s", "throughput", "higher"),
    "samples/s": (1.0, "samples/s", "throughput", "higher"),
    "sample/s": (1.0, "samples/s", "throughput", "higher"),
    "examples/s": (1.0, "samples/s", "throughput", "higher"),
    "images/s": (1.0, "samples/s", "throughput", "higher"),
    "infer/sec": (1.0, "samples/s", "throughput", "higher"),  # Triton perf_analyzer
    "infer/s": (1.0, "samples/s", "throughput", "higher"),
    "inferences/s": (1.0, "samples/s", "throughput", "higher"),
    "items/s": (1.0, "samples/s", "throughput", "higher"),  # Google Benchmark
    "iter/s": (1.0, "iterations/s", "throughput", "higher"),
    "iterations/s": (1.0, "iterations/s", "throughput", "higher"),
    "it/s": (1.0, "iterations/s", "throughput", "higher"),
    "ops/s": (1.0, "ops/s", "throughput", "higher"),  # pytest-benchmark's OPS
    "bytes/s": (1 / 2**20, "MB/s", "throughput", "higher"),
    "mb/s": (1.0, "MB/s", "throughput", "higher"),
    "gb/s": (2**10, "MB/s", "throughput", "higher"),
    "tokens/s": (1.0, "tokens/s", "throughput", "higher"),
    "token/s": (1.0, "tokens/s", "throughput", "higher"),
    "tok/s": (1.0, "tokens/s", "throughput", "higher"),
    "t/s": (1.0, "tokens/s", "throughput", "higher"),  # llama-bench
    "req/s": (1.0, "requests/s", "throughput", "higher"),
    "requests/s": (1.0, "requests/s", "throughput", "higher"),
    "request/s": (1.0, "requests/s", "throughput", "higher"),
    "queries/s": (1.0, "queries/s", "throughput", "higher"),
    "query/s": (1.0, "queries/s", "throughput", "higher"),
    "words/s": (1.0, "tokens/s", "throughput", "higher"),
    "wps": (1.0, "tokens/s", "throughput", "higher"),
    "b": (1 / 2**20, "MB", "memory", "lower"),
    "bytes": (1 / 2**20, "MB", "memory", "lower"),
    "kb": (1 / 2**10, "MB", "memory", "lower"),
    "mb": (1.0, "MB", "memory", "lower"),
    "mib": (1.0, "MB", "memory", "lower"),
    "gb": (2**10, "MB", "memory", "lower"),
    "gib": (2**10, "MB", "memory", "lower"),
    "%": (1.0, "%", "ratio", "lower"),
    "x": (1.0, "x", "ratio", "higher"),
}

# Larger than any latency a benchmark could mean (a day, in ms): a sign of a wrong unit.
ABSURD_MS = 86_400_000.0


class UnitError(ValueError):
    """A unit perfboard does not know, or a value it cannot take."""


@dataclass(frozen=True, slots=True)
class Quantity:
    value: float
    unit: str  # canonical
    kind: str  # time, throughput, memory, ratio
    direction: str  # lower / higher is better


def canonical_unit(unit: str) -> str:
    """The lookup spelling of a unit as written: "MS" -> "ms", "step/s" -> "step/s"."""
    u = unit.strip().strip("()[]").strip()
    low = u.lower()
    return low if low not in ("μs", "µs") else "us"


def is_known(unit: str) -> bool:
    return canonical_unit(unit) in _UNITS


@functools.lru_cache(maxsize=4096)
def _unit_entry(unit: str) -> tuple[float, str, str, str] | None:
    # A profiler table or a tool report says the same few units on every row: looked up
    # once each (the spelling's canonical form and its entry), not once per value.
    return _UNITS.get(canonical_unit(unit))


def normalise(value: float, unit: str) -> Quantity:
    """Convert a value in a written unit to perfboard's canonical unit.

    Raises UnitError for unknown units and for values that cannot be a measurement
    (NaN, infinite, negative times, or times beyond a day).
    """
    entry = _unit_entry(unit)
    if entry is None:
        raise UnitError(f"unknown unit {unit!r}")
    _, canon, kind, direction = entry
    return Quantity(converter(unit)(value), canon, kind, direction)


@functools.lru_cache(maxsize=4096)
def converter(unit: str) -> Callable[[float], float]:
    """normalise(value, unit).value as a function of the value: for the many values of a
    table in one unit (no Quantity made per value). Raises UnitError as normalise does."""
    entry = _unit_entry(unit)
    if entry is None:
        raise UnitError(f"unknown unit {unit!r}")
    factor, _, kind, _ = entry
    # Down to a smaller unit by dividing: 1890 us / 1000 is 1.89 ms, where 1890 * 0.001 is
    # 1.8900000000000001 (the stored number would not equal the one printed).
    divisor = round(1 / factor) if factor < 1 else 0

    def convert(value: float) -> float:
        if math.isnan(value) or math.isinf(value):
            raise UnitError(f"value {value!r} is not a number")
        if value < 0 and kind != "ratio":
            raise UnitError(f"negative {kind} {value!r} {unit}")
        converted = value / divisor if divisor else value * factor
        if kind == "time" and converted > ABSURD_MS:
            raise UnitError(f"absurd {kind} {value!r} {unit} (more than a day)")
        return converted

    return convert


def scaling(unit: str) -> tuple[int, float, str]:
    """How converter and convert_all convert a value in unit: (divisor, factor, kind);
    a value is divided by the divisor when there is one (not 0), else multiplied by the
    factor. For readers that convert whole arrays (ingest.parsers.profiler_bulk).
    Raises UnitError for an unknown unit."""
    entry = _unit_entry(unit)
    if entry is None:
        raise UnitError(f"unknown unit {unit!r}")
    factor, _, kind, _ = entry
    return (round(1 / factor) if factor < 1 else 0), factor, kind  # converter: see there


def convert_all(values: list[float], unit: str) -> list[float]:
    """converter(unit) over a column of values, in one pass each for the checks and the
    conversion (a profiler table's column): the same numbers, and a UnitError when any
    value would raise one."""
    divisor, factor, kind = scaling(unit)
    if not all(map(math.isfinite, values)):
        raise UnitError(f"a value in {unit} is not a number")
    if values and kind != "ratio" and min(values) < 0:
        raise UnitError(f"negative {kind} {min(values)!r} {unit}")
    if divisor:
        converted = [value / divisor for value in values]
    elif factor == 1:
        converted = values
    else:
        converted = [value * factor for value in values]
    if kind == "time" and converted and max(converted) > ABSURD_MS:
        raise UnitError(f"absurd {kind} in {unit} (more than a day)")
    return converted


_NUMBER_WITH_UNIT = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)\s*([A-Za-zµμ%/]+)?\s*$", re.I
)


def split_number(text: str) -> tuple[float, str] | None:
    """ "6.2500us" -> (6.25, "us"); "9.5" -> (9.5, ""); anything else -> None."""
    m = _NUMBER_WITH_UNIT.match(text)
    if not m:
        return None
    return float(m.group(1)), (m.group(2) or "")


_HEADER_UNIT = re.compile(r"[(（\[]\s*([A-Za-zµμ%/]+)\s*[)）\]]")


def unit_in_header(header: str) -> str:
    """ "P4时间 (ms)" -> "ms"; "gpu_memory(MB)" -> "MB"; no unit -> ""."""
    m = _HEADER_UNIT.search(header)
    return m.group(1) if m and is_known(m.group(1)) else ""
