"""Model benchmark analysis.py output (docs/formats.md section 8).

PaddlePaddle/benchmark's scripts/analysis.py reads a training log and prints::

    + python .../analysis.py --filename .../seq2seq/paddle/log_... --model_name seq2seq
        --run_mode sp --index speed --gpu_num 1 --base_batch_size 128 --skip_steps 10 ...
    average latency of 1750 steps, skip 10 steps:
        Avg: 0.146 s/step
        Min: 0.040 s/step
        Max: 8.570 s/step
        FPS: 6.849 steps/s
    FINAL_RESULT=6.849
    {"index": "speed", "log_file": "...", "gpu_num": 1, "model_name": "seq2seq", ...}

Decisions:

- A "run" is everything from one ``analysis.py`` command line to the next. The command
  gives benchmark (``--model_name``), task "training", params ``batch_size``
  (``--base_batch_size``), ``gpu_num`` and ``run_mode``, and the framework from the log
  path (the last path segment naming one: ".../seq2seq/paddle/log" -> "paddle"). The JSON
  line after the blocks fills what the command did not give; a disagreement is a warning.
- Each ``average latency of N steps, skip K steps:`` block gives metric ``"step_time"``
  (Avg, in ms/step) and metric ``"throughput"`` (FPS, steps/s, direction higher). The
  block's skip count goes into params ``{"skip_steps": K}``: the skip-0 and skip-10 blocks
  are different statistics of one log and must land in different series. ``stats`` holds
  ``{"steps": N}``; Min and Max go into the step_time stats as ``min``/``max`` in ms/step.
- ``FINAL_RESULT=`` repeats the figure analysis.py reports (the FPS of the last block, or
  a batch-scaled one): it is kept as ``stats["final_result"]`` of the run's last throughput
  measurement, not as a series of its own, so that a plot never doubles a value.
- A value cut by the end of an excerpt (``FINAL_RESULT=6.``, ``Avg: 0.1``) is a Problem;
  the rest of the block is still read. A log path naming no framework leaves framework ""
  (not Paddle's default: the TensorFlow runs of a comparison must not pass for Paddle).

Speed: one ``re.finditer`` per literal-led pattern ("analysis.py", "average latency of",
"s/s", "FINAL_RESULT=", '"index"'), merged by position; a block's stat lines are read
right after its heading. A training log that merely contains "steps/s" costs five C-speed
scans, not a Python loop over its lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ingest.parsers.scan import hits
from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem
from perfboard.units import UnitError, is_known, normalise

NAME = "analysis"
# Every block prints "Avg: ... s/step" and "FPS: ... steps/s". "FINAL_RESULT" is no anchor:
# alone it yields nothing, and each anchor costs a full scan of every document without it.
ANCHORS: tuple[str, ...] = ("s/step", "steps/s")

# Path segments that name the framework a log was written by.
FRAMEWORKS = {"paddle": "paddle", "tensorflow": "tensorflow", "pytorch": "pytorch"}
FRAMEWORKS |= {"torch": "pytorch", "mxnet": "mxnet", "caffe2": "caffe2"}

# One pattern per kind of line, each led by a literal: re finds a literal at memory speed,
# but tries an alternation at every character (15 times slower on a big log).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cmd", re.compile(r"analysis\.py[ \t][^\n]*")),
    (
        "head",
        re.compile(
            r"average latency of\s+(?P<steps>\d+)\s+steps?,\s*skip\s+(?P<skip>\d+)\s+steps?\s*:"
        ),
    ),
    ("stat", re.compile(r"s/s")),  # "s/step" and "steps/s": a stat line outside a block
    ("final", re.compile(r"FINAL_RESULT=[^\n]*")),
    ("json", re.compile(r'"index"\s*:')),
)
_STAT_LINE = re.compile(r"[ \t]*(?:Avg|Min|Max|FPS):")
_JSON_START = re.compile(r'\{\s*"index"\s*:')
# A block's stat lines follow its heading; more than this many is not analysis output.
MAX_BLOCK_LINES = 8
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:nan|inf)"
_STAT = re.compile(
    rf"(?P<name>Avg|Min|Max|FPS):[ \t]*(?P<num>{_NUM})?[ \t]*(?P<unit>[A-Za-z/]+)?[ \t]*$"
)
_FLAG = re.compile(r"--(?P<key>\w+)(?:[ \t=]+(?P<value>'[^']*'|\"[^\"]*\"|(?!--)[^\s]+))?")
_COMPLETE_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

Severity = Literal["error", "warning"]

_STEP_UNITS = ("s/step", "ms/step", "steps/s", "step/s")


@dataclass
class _Value:
    value: float  # normalised
    unit: str
    kind: str  # "time" or "throughput" (perfboard.units)
    direction: str
    line: int
    raw: str


@dataclass
class _Block:
    """One "average latency of N steps, skip K steps:" block and its stat lines."""

    steps: int | None
    skip: int | None
    stats: dict[str, _Value] = field(default_factory=dict)  # "Avg", "Min", "Max", "FPS"


@dataclass
class _Run:
    """What one analysis.py invocation printed."""

    benchmark: str = ""
    framework: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    blocks: list[_Block] = field(default_factory=list)
    final_result: float | None = None
    problems: list[Problem] = field(default_factory=list)

    def orphan_block(self, name: str) -> _Block:
        """The block of a stat line without a heading (an excerpt starting mid-output).

        Consecutive such lines share one block until a stat repeats.
        """
        last = self.blocks[-1] if self.blocks else None
        if last is None or last.steps is not None or name in last.stats:
            last = _Block(None, None)
            self.blocks.append(last)
        return last


def parse(doc: DocText) -> Iterator[Item]:
    """step_time and throughput Measurements of every analysis.py block, with Problems."""
    text = doc.text
    run = _Run()
    consumed = -1  # end of the last block read: its stat lines are not read again
    for pos, kind, m in hits(text, _PATTERNS):
        if pos < consumed:
            continue
        if kind == "cmd":
            if pos and text[pos - 1].isalnum():
                continue  # "myanalysis.py": not ours
            yield from _finish(run)
            run = _Run()
            _read_command(run, m.group())
        elif kind == "head":
            block = _Block(int(m.group("steps")), int(m.group("skip")))
            run.blocks.append(block)
            consumed = _read_block(doc, run, block, m.end())
        elif kind == "stat":
            start, consumed = doc.line_bounds(pos)
            line = text[start:consumed]
            if _STAT_LINE.match(line):
                _read_stat(run, None, line, doc.line_at(start))
        elif kind == "final":
            _read_final(run, m.group(), doc.line_at(pos), doc.line_text(pos))
        else:
            line = doc.line_text(pos)
            json_start = _JSON_START.search(line)
            if json_start:
                number = doc.line_at(pos)
                _read_json(run, line[json_start.start() :], number, line)
    yield from _finish(run)


def _read_block(doc: DocText, run: _Run, block: _Block, pos: int) -> int:
    """Read the stat lines right after a block heading; the end of the last one."""
    text = doc.text
    end = text.find("\n", pos)
    consumed = pos
    for _ in range(MAX_BLOCK_LINES):
        if end < 0:
            break
        start = end + 1
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        if not _STAT_LINE.match(line):
            break
        _read_stat(run, block, line, doc.line_at(start))
        consumed = start + len(line)
    return consumed


def _problem(run: _Run, line: int, reason: str, raw: str, severity: Severity = "error") -> None:
    run.problems.append(Problem(line, reason, raw, NAME, severity))


# -- command line and JSON ------------------------------------------------------------


def flags(command: str) -> dict[str, str]:
    """The --flags of a command line and their values, as written.

    "--model_name seq2seq --range -1 --separator ' '" -> {"model_name": "seq2seq",
    "range": "-1", "separator": " "}: a quoted value loses its quotes, a bare flag gets "".
    """
    out: dict[str, str] = {}
    for m in _FLAG.finditer(command):
        value = m.group("value") or ""
        out[m.group("key")] = value[1:-1] if value[:1] in "'\"" and len(value) > 1 else value
    return out


def framework_of(path: str) -> str:
    """The framework named by a log path: ".../seq2seq/paddle/log_x" -> "paddle", else ""."""
    found = ""
    for segment in path.replace("\\", "/").split("/")[:-1]:
        found = FRAMEWORKS.get(segment.lower(), found)
    return found


def _int_or_text(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


def _read_command(run: _Run, command: str) -> None:
    given = flags(command)
    run.benchmark = given.get("model_name", "")
    run.framework = framework_of(given.get("filename", ""))
    for flag, param in (("base_batch_size", "batch_size"), ("gpu_num", "gpu_num")):
        if given.get(flag):
            run.params[param] = _int_or_text(given[flag])
    if given.get("run_mode"):
        run.params["run_mode"] = given["run_mode"]


def _read_json(run: _Run, text: str, line: int, raw: str) -> None:
    try:
        record = json.loads(text.strip())
    except ValueError as e:
        _problem(run, line, f"analysis JSON line cannot be read ({e.msg})", raw)
        return
    if not isinstance(record, dict):
        return
    said = {
        "benchmark": record.get("model_name"),
        "framework": framework_of(str(record.get("log_file", ""))) or None,
    }
    for attr, value in said.items():
        if not value:
            continue
        if not getattr(run, attr):
            setattr(run, attr, str(value))
        elif getattr(run, attr) != value:
            _problem(run, line, f"JSON {attr} {value!r} differs from the command", raw, "warning")
    for key in ("gpu_num", "run_mode"):
        if key in record and key not in run.params:
            run.params[key] = record[key]
        elif key in record and run.params[key] != record[key]:
            _problem(
                run, line, f"JSON {key} {record[key]!r} differs from the command", raw, "warning"
            )


# -- blocks ---------------------------------------------------------------------------


def _read_stat(run: _Run, block: _Block | None, line: str, number: int) -> None:
    """One "Avg: 0.202 s/step" line, of a block or (block None) on its own."""
    m = _STAT.match(line.strip())
    unit = (m and m.group("unit")) or ""
    if block is None and unit not in _STEP_UNITS:
        return  # "Max: 3 ms/sample" elsewhere in a document: not analysis output
    name = line.split(":", 1)[0].strip()
    if not m or not m.group("num"):
        _problem(run, number, f"{name} value cannot be read", line)
        return
    num = m.group("num")
    if not unit:
        _problem(run, number, f"{name} value {num!r} has no unit (cut?)", line)
        return
    if not is_known(unit):
        _problem(run, number, f"{name} unit {unit!r} is unknown", line)
        return
    try:
        q = normalise(float(num), unit)
    except UnitError as e:
        _problem(run, number, f"{name}: {e}", line)
        return
    expected = "throughput" if name == "FPS" else "time"
    if q.kind != expected:
        _problem(run, number, f"{name} in {unit!r} is not a {expected}", line)
        return
    if block is None:
        block = run.orphan_block(name)
    block.stats[name] = _Value(q.value, q.unit, q.kind, q.direction, number, line)


def _read_final(run: _Run, text: str, line: int, raw: str) -> None:
    written = text.split("=", 1)[1].strip()
    if not _COMPLETE_NUMBER.fullmatch(written):
        _problem(run, line, f"FINAL_RESULT value {written!r} is cut or not a number", raw)
        return
    run.final_result = float(written)


def _finish(run: _Run) -> Iterator[Item]:
    """The run's Measurements and Problems, in document order."""
    items: list[Item] = list(run.problems)
    last_throughput: Measurement | None = None
    for block in run.blocks:
        step_time, throughput = _block_measurements(run, block)
        items += [m for m in (step_time, throughput) if m is not None]
        last_throughput = throughput or last_throughput
    if last_throughput is not None and run.final_result is not None:
        last_throughput.stats["final_result"] = run.final_result
    items.sort(key=lambda item: item.line)
    yield from items


def _block_measurements(run: _Run, block: _Block) -> tuple[Measurement | None, ...]:
    params = dict(run.params)
    if block.skip is not None:
        params["skip_steps"] = block.skip
    stats: dict[str, Any] = {} if block.steps is None else {"steps": block.steps}
    out: list[Measurement | None] = []
    for name, metric in (("Avg", "step_time"), ("FPS", "throughput")):
        value = block.stats.get(name)
        if value is None:
            out.append(None)
            continue
        extra = {}
        if name == "Avg":
            extra = {k.lower(): block.stats[k].value for k in ("Min", "Max") if k in block.stats}
        out.append(
            Measurement(
                benchmark=run.benchmark,
                metric=metric,
                value=value.value,
                unit=value.unit,
                task="training",
                direction="higher" if value.direction == "higher" else "lower",
                framework=run.framework,
                params=dict(params),
                stats={**stats, **extra},
                line=value.line,
                raw=value.raw,
            )
        )
    return tuple(out)
