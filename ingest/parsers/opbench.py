"""Op benchmark outputs of PaddlePaddle/benchmark api/ (docs/formats.md section 6).

v1 (2019) prints pseudo-JSON objects with unquoted keys over several lines, sometimes
followed by a stray ``}``; v2 (2020+) prints a header block (``-- paddle commit : ...``),
a ``run command: ...`` line and one strict JSON line per result.

Decisions:

- Benchmark ``"op/<name>"``; task ``"op-backward"`` when the result says
  ``"backward": true`` (or, failing that, the run command says ``--backward True``),
  otherwise ``"op-forward"``; framework and device as the result says.
- Speed results give one Measurement per time, named ``total_time`` (``total``),
  ``gpu_time``, ``wall_time`` and ``total_include_wall_time``, all in ms. A ``gpu_time``
  of 0 means "not profiled" and gives no Measurement. ``samples`` is end - start (v1) or
  end - begin (v2); ``stats`` keeps repeat, start/begin, end, v1's feed/compute/fetch, the
  framework's own version string (``framework_version``, "0.0.0" for Paddle dev builds) and
  the benchmark repo's commit when the header gives it.
- Repeat count: not a param. With ``--allow_adaptive_repeat`` the repeat count changes
  from run to run, and a param would split one op's history into many series. Only the
  timing that the accuracy task prints about itself (repeat 1, or a ``--task accuracy``
  run command; v1's "正确性检查时可以忽略" blocks) is set apart, with params
  ``{"task_kind": "accuracy_run"}``.
- v2 params: ``config_id`` from the run command when it runs the same op, and
  ``parameters``, the op's argument description (shapes, dtypes) stripped, in full: it is
  what tells two configs apart and it reads well on a chart.
- Version: the ``-- paddle commit`` of the header for Paddle results (None without one).
  TensorFlow results carry their version as testbed ``{"tensorflow": "2.3.0"}`` (the JSON
  version, or the header's), since TensorFlow is the environment, not the code measured.
- ``measured_at`` from ``-- benchmark last update time : Wed Aug 12 09:42:16 2020 +0800``,
  timezone-aware and converted to UTC (2020-08-12 01:42:16+00:00).
- Accuracy results give metric ``"max_diff"`` (unit "", direction lower) with stats
  ``{"consistent": bool, "num_outputs": n}``.
- Objects are found from their opening ``{ framework:`` / ``{"name":`` and read to the
  balancing ``}``, so a stray brace between objects is harmless. Each record's ``line`` is
  the line of its opening brace and ``raw`` the whole object. An object that never closes
  (the next result opens first), or does not read as (pseudo-)JSON, is a Problem at its
  first line, and the results after it are still read.

Speed: one ``re.finditer`` per literal ("framework", "consistent", "-- ", "run command:"),
merged by position; a "{" is looked for only just before a "framework" / "consistent" key
(a glog has one on every line). Strict JSON is decoded in C on its own line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem

NAME = "opbench"
# Every speed result names its framework, every accuracy result says "consistent". The
# header alone yields nothing, and each anchor costs a full scan of documents without it.
ANCHORS: tuple[str, ...] = ("framework", "consistent")

# The largest object the scan will read: results are a few hundred bytes; this bounds the
# work an unbalanced "{" can cause in a big log.
MAX_OBJECT_CHARS = 64 * 1024

# One pattern per kind of line, each led by a literal: re finds a literal at memory speed,
# but tries an alternation (or a "{", on every line of a glog) far more slowly.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("object", re.compile(r"framework")),  # first key of a speed result
    ("object", re.compile(r"consistent")),  # in every accuracy result
    (
        "header",
        re.compile(
            r"-- (?P<key>(?:paddle|tensorflow|torch|pytorch|benchmark)[\w ]*?)[ \t]*: *"
            r"(?P<value>[^\n]*)"
        ),
    ),
    ("command", re.compile(r"run command:[^\n]*")),
)
_OBJECT_START = re.compile(r'\{\s*"?(?:framework|name)"?\s*:')
# How far before its "framework" / "consistent" key a result object may open.
MAX_KEY_OFFSET = 2048
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}]')
# A string (kept as is) or a bare key after "{" or "," (quoted): strings may hold "a: b".
_BARE_KEY = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?P<lead>[{,]\s*)(?P<key>[A-Za-z_]\w*)(?=\s*:)')
_FLAG = re.compile(r"--(?P<key>\w+)[ \t=]+(?P<value>(?!--)\S+)")
_SCRIPT = re.compile(r"([\w.-]+)\.py\b")

# Speed keys that are times of their own (key in the result, metric name).
SPEED_METRICS = (
    ("total", "total_time"),
    ("gpu_time", "gpu_time"),
    ("wall_time", "wall_time"),
    ("total_include_wall_time", "total_include_wall_time"),
)
_SPEED_KEYS = {key for key, _ in SPEED_METRICS}


@dataclass
class _Context:
    """What the header and the last run command said, for the results after them."""

    header: dict[str, str] = field(default_factory=dict)  # "paddle commit" -> "e8d5..."
    measured_at: datetime | None = None
    command: dict[str, str] = field(default_factory=dict)
    script: str = ""  # op the run command runs: ".../tests/abs.py" -> "abs"


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every op benchmark result (v1 and v2) in the document, and Problems."""
    text = doc.text
    ctx = _Context()
    resume = 0  # keys inside an object already read are not read again
    tried: set[int] = set()  # object starts already read or reported
    for pos, kind, m in hits(text, _PATTERNS):
        if kind == "header":
            value = m.group("value").strip()
            yield from _read_header(ctx, m.group("key"), value, doc, pos)
        elif kind == "command":
            ctx.command = flags(m.group())
            script = _SCRIPT.findall(m.group())
            ctx.script = script[-1] if script else ""
        elif pos >= resume:
            start = object_start(text, pos)
            if start < 0 or start < resume or start in tried:
                continue
            tried.add(start)
            record, end = read_object_at(text, start)
            number = doc.line_at(start)
            if record is None:
                if end < 0:
                    reason = "op result object is cut (no closing brace)"
                    yield Problem(number, reason, doc.line_text(start), NAME)
                else:
                    reason = "op result object cannot be read"
                    yield Problem(number, reason, text[start:end], NAME)
                continue
            resume = end
            yield from _read_record(record, ctx, number, text[start:end])


def object_start(text: str, key_pos: int) -> int:
    """Where the result object holding the key at key_pos opens, or -1 if none does.

    The nearest "{" before the key must open a result ("{ framework:" / '{"name":'):
    "--framework paddle" in a command line or "framework" in prose has none.
    """
    brace = text.rfind("{", max(0, key_pos - MAX_KEY_OFFSET), key_pos)
    if brace < 0 or not _OBJECT_START.match(text, brace):
        return -1
    return brace


# -- objects --------------------------------------------------------------------------


def balanced_end(text: str, start: int) -> int:
    """End (exclusive) of the {...} object opening at start, or -1 if it never closes.

    Braces inside strings do not count. A result never holds another result, so the next
    result's opening ends the search (the object was cut), as do MAX_OBJECT_CHARS.
    """
    depth = 0
    limit = min(len(text), start + MAX_OBJECT_CHARS)
    for tok in _TOKEN.finditer(text, start, limit):
        t = tok.group()
        if t == "{":
            if depth and _OBJECT_START.match(text, tok.start()):
                return -1
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return tok.end()
    return -1


_DECODER = json.JSONDecoder()


def read_object_at(text: str, start: int) -> tuple[dict[str, Any] | None, int]:
    """The result object opening at start and its end (exclusive).

    (None, end) when the balanced text is not an object perfboard can read; (None, -1)
    when it never closes. Strict JSON on one line (v2) is decoded directly; v1 pseudo-JSON
    is cut at its balancing brace and its bare keys quoted.
    """
    # Decode a slice, never the whole text: a JSON error counts the lines before its
    # position, which over a big log would cost a full scan per bad object.
    eol = text.find("\n", start)
    line = text[start : eol if eol >= 0 else len(text)]
    try:
        value, end = _DECODER.raw_decode(line)
    except ValueError:
        pass
    else:
        return (value, start + end) if isinstance(value, dict) else (None, start + end)
    end = balanced_end(text, start)
    if end < 0:
        return None, -1
    return read_object(text[start:end]), end


def read_object(text: str) -> dict[str, Any] | None:
    """A strict JSON object, or a v1 pseudo-JSON one with bare keys; None if neither."""
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = json.loads(_BARE_KEY.sub(_quote_key, text))
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _quote_key(m: re.Match[str]) -> str:
    if m.group("key") is None:
        return m.group()
    return f'{m.group("lead")}"{m.group("key")}"'


# -- header and run command -----------------------------------------------------------


def flags(command: str) -> dict[str, str]:
    """Flags of a run command: "--config_id 0 --backward False" -> {"config_id": "0", ...}."""
    return {m.group("key"): m.group("value") for m in _FLAG.finditer(command)}


def _read_header(ctx: _Context, key: str, value: str, doc: DocText, pos: int) -> Iterator[Item]:
    key = " ".join(key.split())
    ctx.header[key] = value
    if key == "benchmark last update time":
        try:
            stamp = datetime.strptime(value, "%a %b %d %H:%M:%S %Y %z")
        except ValueError:
            ctx.measured_at = None
            reason = f"benchmark update time {value!r} is not a date"
            yield Problem(doc.line_at(pos), reason, doc.line_text(pos), NAME, "warning")
            return
        ctx.measured_at = stamp.astimezone(UTC)


# -- results --------------------------------------------------------------------------


def _truthy(value: Any) -> bool | None:
    """True/False from true, "True", "true", "False"...; None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _common(record: dict[str, Any], ctx: _Context) -> dict[str, Any]:
    """Identity fields shared by every Measurement of one result."""
    name = str(record.get("name", ""))
    backward = _truthy(record.get("backward"))
    if backward is None:
        backward = _truthy(ctx.command.get("backward")) or False
    params: dict[str, Any] = {}
    same_op = not ctx.script or ctx.script == name
    if same_op and ctx.command.get("config_id", "").isdigit():
        params["config_id"] = int(ctx.command["config_id"])
    if isinstance(record.get("parameters"), str) and record["parameters"].strip():
        params["parameters"] = record["parameters"].strip()
    device = str(record.get("device", ""))
    if not device and same_op and "use_gpu" in ctx.command:
        device = "GPU" if _truthy(ctx.command["use_gpu"]) else "CPU"
    return {
        "benchmark": f"op/{name}",
        "task": "op-backward" if backward else "op-forward",
        "device": device,
        "params": params,
        "measured_at": ctx.measured_at,
    }


def _read_record(record: dict[str, Any], ctx: _Context, line: int, raw: str) -> Iterator[Item]:
    if not record.get("name"):
        yield Problem(line, "op result has no name", raw, NAME)
    elif isinstance(record.get("speed"), dict):
        yield from _speed(record, ctx, line, raw)
    elif "consistent" in record or "diff" in record:
        yield from _accuracy(record, ctx, line, raw)
    elif "framework" in record:
        yield Problem(line, "op result has neither speed nor accuracy", raw, NAME)


def _number(value: Any) -> float | None:
    """A finite, non-negative number, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def _speed(record: dict[str, Any], ctx: _Context, line: int, raw: str) -> Iterator[Item]:
    speed: dict[str, Any] = record["speed"]
    framework = str(record.get("framework", ""))
    common = _common(record, ctx)
    repeat = speed.get("repeat")
    if repeat == 1 or ctx.command.get("task") == "accuracy":
        common["params"]["task_kind"] = "accuracy_run"
    first = speed.get("begin", speed.get("start"))
    samples = None
    if isinstance(first, int) and isinstance(speed.get("end"), int):
        samples = speed["end"] - first
    stats = {k: v for k, v in speed.items() if k not in _SPEED_KEYS}
    for k in ("feed", "compute", "fetch"):  # v1 prints them as 0.00000: keep them as floats
        if _number(stats.get(k)) is not None:
            stats[k] = float(stats[k])
    if "version" in record:
        stats["framework_version"] = str(record["version"])
    if "benchmark commit" in ctx.header:
        stats["benchmark_commit"] = ctx.header["benchmark commit"]
    version, testbed = _version(framework, record, ctx)
    if "total" not in speed:
        yield Problem(line, "op speed result has no total", raw, NAME)
    for key, metric in SPEED_METRICS:
        if key not in speed:
            continue
        value = _number(speed[key])
        if value is None:
            yield Problem(line, f"op speed {key} {speed[key]!r} is not a time", raw, NAME)
            continue
        if key == "gpu_time" and value == 0:
            continue  # not profiled
        yield Measurement(
            metric=metric,
            value=value,
            unit="ms",
            framework=framework,
            version=version,
            testbed=dict(testbed),
            samples=samples,
            stats=dict(stats),
            line=line,
            raw=raw,
            **{**common, "params": dict(common["params"])},
        )


def _version(
    framework: str, record: dict[str, Any], ctx: _Context
) -> tuple[str | None, dict[str, str]]:
    """(version, testbed) of a result: Paddle's commit; TensorFlow's release as testbed."""
    if framework == "paddle":
        return ctx.header.get("paddle commit"), {}
    release = ctx.header.get(f"{framework} version", "")
    if record.get("version"):
        release = str(record["version"])
    return None, ({framework: release} if framework and release else {})


def _accuracy(record: dict[str, Any], ctx: _Context, line: int, raw: str) -> Iterator[Item]:
    diff = _number(record.get("diff"))
    if diff is None:
        yield Problem(line, f"op accuracy diff {record.get('diff')!r} is not a number", raw, NAME)
        return
    stats: dict[str, Any] = {}
    consistent = _truthy(record.get("consistent"))
    if consistent is not None:
        stats["consistent"] = consistent
    if isinstance(record.get("num_outputs"), int):
        stats["num_outputs"] = record["num_outputs"]
    if "benchmark commit" in ctx.header:
        stats["benchmark_commit"] = ctx.header["benchmark commit"]
    yield Measurement(
        metric="max_diff",
        value=diff,
        unit="",
        version=ctx.header.get("paddle commit"),
        stats=stats,
        line=line,
        raw=raw,
        **_common(record, ctx),
    )
