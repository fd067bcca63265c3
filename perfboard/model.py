"""The vocabulary of perfboard: what the parsers find and the store keeps.

Parsers produce these plain records; ingest/save.py turns them into rows. Nothing here
touches a database or a file, so every record can be printed (``--dry-run``) or compared
in a test as it is.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

import orjson

Direction = Literal["lower", "higher"]
Status = Literal["ok", "oom", "error", "missing"]

STATUSES: tuple[str, ...] = ("ok", "oom", "error", "missing")
DIRECTIONS: tuple[str, ...] = ("lower", "higher")

ParamValue = str | int | float | bool


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces; used in keys and stored columns.

    orjson: the same text as json.dumps(sort_keys=True, separators=(",", ":"),
    ensure_ascii=False), eight times faster; it runs once per stored measurement.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # orjson refuses an int beyond 64 bits (a count as a log printed it)
        if not _has_long_int(value):
            raise
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _has_long_int(value: Any) -> bool:
    if isinstance(value, int):
        return not -(2**63) <= value < 2**64
    if isinstance(value, dict):
        return any(_has_long_int(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_long_int(v) for v in value)
    return False


# The columns of a series' identity, in the order of Measurement.series_identity (and of
# the series table): what series_key hashes.
SERIES_IDENTITY: tuple[str, ...] = (
    "project",
    "benchmark",
    "task",
    "metric",
    "unit",
    "direction",
    "framework",
    "device",
    "params",
    "testbed",
)


@dataclass(slots=True)
class Measurement:
    """One value of one series, found at one place in one document.

    The series identity is (project, benchmark, task, metric, unit, direction, framework,
    device, params, testbed); everything else describes this measurement.
    """

    benchmark: str  # model or op: "ernie", "bert", "op/abs"
    metric: str  # "latency", "throughput", "gpu_time", "total_time", "gpu_memory", ...
    value: float | None  # in the normalised unit; None unless status is "ok"
    unit: str  # normalised: "ms", "samples/s", "steps/s", "MB", "ratio"
    task: str = "inference"  # inference, training, op-forward, op-backward
    direction: Direction = "lower"
    framework: str = "paddle"
    device: str = ""  # "Tesla P4", "GPU", "CPU"
    params: dict[str, ParamValue] = field(default_factory=dict)
    testbed: dict[str, str] = field(default_factory=dict)
    project: str = ""
    version: str | None = None  # commit hash, release, phase row label, PR
    measured_at: datetime | None = None
    status: Status = "ok"
    samples: int | None = None
    warmup: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)  # repeat, fps, thread_id, min, max...
    run: int = 0  # which run of the document it belongs to (see ingest.runs)
    line: int = 0  # 1-based line in the document
    raw: str = ""  # the text it was read from, as written

    def series_identity(self) -> tuple[str, ...]:
        return (
            self.project,
            self.benchmark,
            self.task,
            self.metric,
            self.unit,
            self.direction,
            self.framework,
            self.device,
            canonical_json(self.params),
            canonical_json(self.testbed),
        )

    def series_key(self) -> str:
        return series_key(*self.series_identity())


def series_key(*identity: str) -> str:
    """A stable id of a series from its identity columns (same in Python and in bulk loads)."""
    return hashlib.sha1("\x1f".join(identity).encode()).hexdigest()[:20]


@dataclass(slots=True)
class Milestone:
    """One row of a phase table: a version of the optimisation and what it measured."""

    ordinal: int  # position in the table, 0 = first row
    label: str  # the 版本 column as written ("0", "1", "v2")
    value: float | None  # in the phase unit
    date: str | None = None  # ISO date as written in 记录时间
    pr_url: str | None = None
    pr_number: int | None = None
    pr_repo: str | None = None  # "PaddlePaddle/Paddle"
    description: str = ""
    reported_speedup_raw: str = ""  # 加速效果 as written: "5%", "1.36x", "-"
    reported_reduction: float | None = None  # parsed "5%" -> 0.05
    reported_speedup: float | None = None  # parsed "1.36x" -> 1.36
    computed_reduction: float | None = None  # (prev - value) / prev
    computed_speedup: float | None = None  # prev / value
    disagrees: bool = False  # reported and computed differ beyond rounding
    line: int = 0
    raw: str = ""


@dataclass(slots=True)
class Phase:
    """A named optimisation campaign with its ordered milestones (a phase table)."""

    name: str  # from the heading: "二期优化工作"
    metric: str  # "latency"
    unit: str  # from the value header: "ms"
    value_header: str  # "P4时间 (ms)"
    owner: str = ""
    platform: str = ""
    software: str = ""
    target: float | None = None  # from a "目标：7 ms" / "target: 7 ms" bullet, in `unit`
    project: str = ""
    benchmark: str = ""
    milestones: list[Milestone] = field(default_factory=list)
    line: int = 0


@dataclass(slots=True)
class ProfileEvent:
    """One row of a profiler report (Paddle profiler) or of an nvprof table."""

    event: str  # "thread0::fc" -> "fc" with thread "thread0"
    calls: int | None
    total: float | None  # ms
    cpu_time: float | None = None
    cpu_ratio: float | None = None
    gpu_time: float | None = None
    gpu_ratio: float | None = None
    min: float | None = None
    max: float | None = None
    ave: float | None = None
    ratio: float | None = None  # share of the whole report
    depth: int = 0  # nesting in the newer Event Summary
    thread: str = ""
    section: str = "event"  # "event", "memcpy" (GpuMemCpy Summary), "nvprof"
    place: str = ""  # "All", "CPU", "GPU"
    run: int = 0
    line: int = 0
    raw: str = ""


@dataclass(slots=True)
class PassApplied:
    """An analysis or IR pass that ran, and how many subgraphs it fused (None: not said)."""

    name: str  # "fc_elementwise_layernorm_fuse_pass"
    kind: str  # "ir" or "analysis"
    order: int  # position in the run's pass sequence
    subgraphs: int | None = None
    run: int = 0
    line: int = 0
    raw: str = ""


@dataclass(slots=True)
class Claim:
    """An effect a text claims ("from 10ms to 9.5ms", "(8.4ms -> 7.8ms)", "by 8%", a table's
    "speed up 2.2x" or "faster than 96.58%"), to be set beside what was measured. Times in
    ms; `percent` for a claimed relative gain, `speedup` for a claimed factor."""

    before: float | None
    after: float | None
    unit: str  # "ms" for times, "%" for a relative claim, "x" for a speedup alone
    percent: float | None = None
    line: int = 0
    raw: str = ""
    speedup: float | None = None  # a claimed factor as written ("2.2x" -> 2.2; >1 is faster)


@dataclass(slots=True)
class Problem:
    """Something in a document that could not be read: kept, shown, never dropped silently."""

    line: int
    reason: str
    raw: str = ""
    parser: str = ""
    severity: Literal["error", "warning"] = "error"


Item = Measurement | Phase | ProfileEvent | PassApplied | Claim | Problem


@dataclass(slots=True)
class Found:
    """Everything the parsers found in one document."""

    measurements: list[Measurement] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    profile_events: list[ProfileEvent] = field(default_factory=list)
    passes: list[PassApplied] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    parsers: list[str] = field(default_factory=list)  # which parsers found something
    # Measurements and passes read in bulk (ingest.columns): Arrow columns, not objects,
    # until something needs them as objects (each block's `records()`).
    blocks: list[Any] = field(default_factory=list)

    def add(self, item: Item) -> None:
        match item:
            case Measurement():
                self.measurements.append(item)
            case Phase():
                self.phases.append(item)
            case ProfileEvent():
                self.profile_events.append(item)
            case PassApplied():
                self.passes.append(item)
            case Claim():
                self.claims.append(item)
            case Problem():
                self.problems.append(item)
            case _:
                raise TypeError(f"not a parse result: {item!r}")

    def extend(self, other: Found) -> None:
        self.measurements += other.measurements
        self.phases += other.phases
        self.profile_events += other.profile_events
        self.passes += other.passes
        self.claims += other.claims
        self.problems += other.problems
        self.parsers += [p for p in other.parsers if p not in self.parsers]
        self.blocks += other.blocks

    def is_empty(self) -> bool:
        return not (
            self.measurements
            or self.blocks
            or self.phases
            or self.profile_events
            or self.passes
            or self.claims
        )

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per record, tagged with its kind (for --dry-run)."""
        out: list[dict[str, Any]] = []
        measurements, passes, events = self.measurements, self.passes, self.profile_events
        if self.blocks:  # the rows of each block as objects, in line order with the others
            rows = [record for block in self.blocks for record in block.records()]
            measurements = sorted(
                [*measurements, *(r for r in rows if isinstance(r, Measurement))],
                key=lambda m: m.line,
            )
            passes = sorted(
                [*passes, *(r for r in rows if isinstance(r, PassApplied))], key=lambda p: p.line
            )
            events = sorted(
                [*events, *(r for r in rows if isinstance(r, ProfileEvent))], key=lambda e: e.line
            )
        groups: list[tuple[str, list[Any]]] = [
            ("measurement", measurements),
            ("phase", self.phases),
            ("profile_event", events),
            ("pass", passes),
            ("claim", self.claims),
            ("problem", self.problems),
        ]
        for kind, items in groups:
            for item in items:
                out.append({"kind": kind, **asdict(item)})
        return out


@dataclass(slots=True)
class DocMeta:
    """What is known about a document before reading it (from the CLI, a manifest, GitHub)."""

    uri: str  # path or URL: the source's identity
    project: str = ""
    benchmark: str = ""  # the model, when the text does not name it
    url: str = ""  # https link to the document (issue comment, PR)
    author: str = ""
    created_at: datetime | None = None  # the document's own date: gives glog lines a year
    title: str = ""
    version: str = ""  # what its measurements measured when they do not say (git-results: sha)
