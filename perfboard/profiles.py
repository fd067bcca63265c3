"""Profiler reports as pure functions: a run's op breakdown, the diff of two runs, and the
IR passes each run fired.

An events frame is one run's rows of ``profile_events`` (queries.profile_events): section
("event", "memcpy", "nvprof"), place, event, thread, depth, calls, total, cpu_time,
gpu_time, min, max, ave, ratio, line. The parsers store every time in ms; a frame may
carry a ``unit`` column (a hand-made frame, another exporter), and then its times are
converted to ms before anything is added up or compared.

Decisions:

- Rows fall into blocks that are added up separately: the Event Summary ("event"), the
  GpuMemCpy Summary ("memcpy"), nvprof's GPU activities ("nvprof") and any other nvprof
  Type ("nvprof API"): GPU kernels and the API calls that launch them overlap in time,
  and a GpuMemCpy total is already inside the events that copied.
- A block's total is what the report says it was, when it says: Paddle's ``Ratio.`` is
  an event's share of the whole report, so total / ratio of the top-level rows gives the
  report's total even when the pasted table was cut after a few rows (the demo's are).
  Without ratios it is the sum of the top-level rows. Shares are of that total, so they
  match the report's own Ratio column; ``coverage`` says how much of it the rows list.
- Nested rows (the newer Event Summary, indented) are kept under their parent: a child's
  key is its path from the top-level event, so ``mul/compute`` under ``mul`` in one run
  meets the same child in the other. Only top-level rows add up to a block's total.
- The same event in several threads (``thread0::mul``, ``thread1::mul``) is one row with
  the threads listed: the diff matches ops, not threads.
- In a diff an event found on one side only is "appeared" or "disappeared": its delta is
  missing, never computed against a 0 it does not have. When the other side's table was
  cut (a top-N table: coverage below COMPLETE), an event whose time is below the smallest
  row that side lists is "below B's cut" (or "below A's cut"): Paddle sorts by total, so
  the other side may well hold it, unlisted. Only an event that side should have listed
  (its time above that side's last row) disappeared or appeared. The demo's two ERNIE
  reports: reshape2 (1,970 ms in A) is below B's cut at 4,204 ms; mul (32,332 ms) is gone.
- A CPU-only report (``Place: CPU``) has a total and no CPU/GPU split: its gpu columns
  stay missing and the diff compares totals, saying GPU time is absent on that side.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import pandas as pd

from perfboard.units import UnitError, normalise

TIME_COLUMNS = ("total", "cpu_time", "gpu_time", "min", "max", "ave")
# A delta within 1% of A's own total is "same": profiles of one build vary by that much.
SAME_WITHIN = 0.01
# A table listing less than this share of its report's total was cut short.
COMPLETE = 0.99
BELOW_A_CUT = "below A's cut"
BELOW_B_CUT = "below B's cut"
STATUSES = ("faster", "slower", "same", "appeared", "disappeared", BELOW_A_CUT, BELOW_B_CUT)
PASS_STATUSES = (
    "started firing",
    "stopped firing",
    "fired in both",
    "ran in both",
    "only in A",
    "only in B",
    "no pass log in A",
    "no pass log in B",
)
_BLOCK_ORDER = {"event": 0, "torch": 0, "nvprof": 1, "nsys": 1, "memcpy": 2}
# The block that stands for a run, in this order of preference: Paddle's Event Summary,
# nvprof's GPU activities, a PyTorch profiler table (self CPU, else self device time),
# Nsight Systems' kernel summary, then the others (GpuMemCpy, nsys API / NVTX / memory).
MAIN_BLOCKS = ("event", "nvprof", "torch", "torch device", "nsys kernels", "memcpy")
# What a block is, for a reader (pages label the blocks with it).
BLOCK_LABELS = {
    "event": "Event summary",
    "memcpy": "GpuMemCpy summary",
    "nvprof": "nvprof: GPU activities",
    "torch": "PyTorch profiler: self CPU time per op",
    "torch device": "PyTorch profiler: self device time per op",
    "nsys kernels": "Nsight Systems: GPU kernels",
    "nsys api": "Nsight Systems: CUDA API calls",
    "nsys memory": "Nsight Systems: GPU memory operations (time)",
    "nsys nvtx": "Nsight Systems: NVTX ranges",
    "nsys osrt": "Nsight Systems: OS runtime calls",
    "nsys gpu": "Nsight Systems: GPU kernels and memory operations",
}
T = TypeVar("T")
_PATH_SEP = "\x1f"  # joins the names of a path: a character no event name holds


@dataclass(frozen=True, slots=True)
class BlockTotal:
    """A block's total (ms), what its rows list of it, and where a cut table stops."""

    block: str
    total: float
    listed: float
    coverage: float  # listed / total, 1.0 for a complete table
    smallest: float  # the smallest top-level total listed: a cut hides only smaller ones
    reported: bool  # total taken from the report's own ratios

    @property
    def complete(self) -> bool:
        return self.coverage >= COMPLETE


# -- run keys ---------------------------------------------------------------------------------


def run_key(source_id: int, run: int) -> str:
    """The run's key as the URL writes it: ``SOURCE_ID:RUN``."""
    return f"{int(source_id)}:{int(run)}"


def parse_run_key(text: object) -> tuple[int, int] | None:
    """``"11:0"`` -> (11, 0); anything else (a typo in a URL, None) -> None."""
    if not isinstance(text, str):
        return None
    left, sep, right = text.strip().partition(":")
    if not sep or not left.isdigit() or not right.isdigit():
        return None
    return int(left), int(right)


def ms_text(value: float, signed: bool = False) -> str:
    """A time in ms as a person reads it: "24,270 ms", "4.204 ms", "+182.9 ms"; never
    "2.427e+04". Four significant digits, whole ms from 1,000 ms on."""
    if value is None or pd.isna(value):
        return "–"
    sign = "+" if signed else ""
    if abs(value) >= 1000:
        return f"{value:{sign},.0f} ms"
    return f"{value:{sign}.4g} ms"


# -- one run ----------------------------------------------------------------------------------


def to_ms(events: pd.DataFrame) -> pd.DataFrame:
    """The events with every time in ms, by their ``unit`` column when they have one.

    Raises ValueError for a unit that is not a time (a table in MB is no profile).
    """
    frame = events.copy()
    if "unit" not in frame.columns:
        return frame
    factors = {}
    for unit in frame["unit"].fillna("ms").unique():
        try:
            quantity = normalise(1.0, str(unit))
        except UnitError as error:
            raise ValueError(f"profile times in {unit!r}: {error}") from None
        if quantity.kind != "time":
            raise ValueError(f"profile times in {unit!r}, which is not a unit of time")
        factors[unit] = quantity.value
    factor = frame["unit"].fillna("ms").map(factors).astype(float)
    for column in TIME_COLUMNS:
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce") * factor
    frame["unit"] = "ms"
    return frame


def _blocks(frame: pd.DataFrame) -> pd.Series:
    section = frame["section"].fillna("event").astype(str)
    place = (
        frame["place"].fillna("").astype(str)
        if "place" in frame.columns
        else pd.Series("", index=frame.index)
    )
    other_type = (section == "nvprof") & ~place.isin(["", "GPU"])
    return section.where(~other_type, "nvprof " + place)


class _Recent(threading.local):
    """What was last worked out of a few events frames, in this thread: by the kind of
    result and the frame it came from."""

    def __init__(self) -> None:
        self.made: list[tuple[str, pd.DataFrame, object]] = []


_RECENT = _Recent()
_KEEP_RECENT = 8


def _recent(kind: str, events: pd.DataFrame, make: Callable[[pd.DataFrame], T]) -> T:
    """make(events), or what it gave for this very frame a moment ago.

    A diff with its summary, notes and breakdown asks for one run's normalised frame and
    totals a dozen times (20 ms each on a 300-event run). The frame asked about is held,
    so its id is not reused; copy-on-write keeps it and the result unchanged.
    """
    for made_kind, given, made in _RECENT.made:
        if made_kind == kind and given is events:
            return made  # type: ignore[return-value]
    made = make(events)
    _RECENT.made = [(kind, events, made), *_RECENT.made[: _KEEP_RECENT - 1]]
    return made


def _normalised(events: pd.DataFrame) -> pd.DataFrame:
    """The columns every function here reads, with defaults, times in ms, and each row's
    block and path (its parent's path, then its own name)."""
    return _recent("normalised", events, _normalise)


def _normalise(events: pd.DataFrame) -> pd.DataFrame:
    # The raw lines are not read here, and every filter below would copy them.
    frame = to_ms(events.drop(columns=["raw"], errors="ignore")).reset_index(drop=True)
    defaults: dict[str, object] = {
        "section": "event",
        "place": "",
        "thread": "",
        "depth": 0,
        "calls": math.nan,
        "ratio": math.nan,
    }
    for column, value in defaults.items():
        if column not in frame.columns:
            frame[column] = value
    for column in TIME_COLUMNS:
        if column not in frame.columns:
            frame[column] = math.nan
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["calls"] = pd.to_numeric(frame["calls"], errors="coerce").astype(float)
    frame["ratio"] = pd.to_numeric(frame["ratio"], errors="coerce").astype(float)
    frame["depth"] = pd.to_numeric(frame["depth"], errors="coerce").fillna(0).astype(int)
    frame["thread"] = frame["thread"].fillna("").astype(str)
    frame["event"] = frame["event"].astype(str)
    frame["block"] = _blocks(frame)
    if "line" in frame.columns:
        frame = frame.sort_values(["block", "line"], kind="stable").reset_index(drop=True)
    paths: list[str] = []
    parents: list[str] = []
    stack: dict[str, list[tuple[int, str]]] = {}  # block -> (depth, path) of open parents
    for block, depth, event in zip(frame["block"], frame["depth"], frame["event"], strict=True):
        open_ = stack.setdefault(block, [])
        while open_ and open_[-1][0] >= depth:
            open_.pop()
        parent = open_[-1][1] if open_ else ""
        path = f"{parent}{_PATH_SEP}{event}" if parent else event
        parents.append(parent)
        paths.append(path)
        open_.append((depth, path))
    frame["path"] = paths
    frame["parent_path"] = parents
    return frame


def block_totals(events: pd.DataFrame) -> dict[str, BlockTotal]:
    """Each block's total as the report gives it (see the module's decisions)."""
    return _recent("totals", events, lambda e: _block_totals(_normalised(e)))


def _block_totals(frame: pd.DataFrame) -> dict[str, BlockTotal]:
    totals = {}
    top = frame.loc[frame["parent_path"] == "", ["block", "total", "ratio"]]
    for block, rows in top.groupby("block", sort=False):
        listed = float(rows["total"].sum(min_count=1)) if rows["total"].notna().any() else 0.0
        rated = rows[(rows["ratio"] > 0) & (rows["total"] > 0)]
        reported = float((rated["total"] / rated["ratio"]).median()) if len(rated) else math.nan
        total = max(listed, reported) if not math.isnan(reported) else listed
        coverage = listed / total if total > 0 else 1.0
        smallest = float(rows["total"].min()) if rows["total"].notna().any() else math.nan
        totals[str(block)] = BlockTotal(
            str(block), total, listed, coverage, smallest, not math.isnan(reported)
        )
    return totals


def main_block(events: pd.DataFrame) -> str | None:
    """The block that stands for the run: the Event Summary, else nvprof's GPU kernels."""
    if events.empty:
        return None
    blocks = set(_blocks(_with_place(events)))
    for block in MAIN_BLOCKS:
        if block in blocks:
            return block
    return sorted(blocks)[0]


def _with_place(events: pd.DataFrame) -> pd.DataFrame:
    frame = events
    for column, value in (("section", "event"), ("place", "")):
        if column not in frame.columns:
            frame = frame.assign(**{column: value})
    return frame


def layout(events: pd.DataFrame) -> str:
    """The kind of report a run's main block comes from, in words."""
    block = main_block(events)
    if block is None:
        return "no profile"
    if block.startswith("nvprof"):
        return "nvprof summary (GPU kernels)"
    if block.startswith("nsys"):
        return f"Nsight Systems summary ({BLOCK_LABELS.get(block, block).split(': ')[-1]})"
    if block == "torch":
        rows = _with_place(events)
        rows = rows[rows["section"] == block]
        if "gpu_time" in rows.columns and (rows["gpu_time"].fillna(0) > 0).any():
            return "PyTorch profiler table (self CPU and device time)"
        return "PyTorch profiler table (self CPU time)"
    if block == "torch device":
        return "PyTorch profiler table (self device time only)"
    if block == "memcpy":
        return "GpuMemCpy summary without an event table"
    rows = _with_place(events)
    rows = rows[rows["section"] == block]
    has_gpu = "gpu_time" in rows.columns and rows["gpu_time"].notna().any()
    if has_gpu:
        return "GPU report (CPU and GPU time)"
    place = next((p for p in rows["place"].fillna("") if p), "")
    return f"CPU-only report (Place: {place})" if place else "report without a CPU/GPU split"


_FIRST = ["section", "event", "depth", "parent_path"]
_SUMMED = ["calls", "total", "cpu_time", "gpu_time", "ratio"]


def _aggregated(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (block, path): the same event of several threads added up."""
    if "line" not in frame.columns:
        frame = frame.assign(line=range(len(frame)))
    keys = ["block", "path"]
    columns = [*keys, *_FIRST, *_SUMMED, "min", "max", "thread", "line"]
    if not frame.duplicated(keys).any():
        # The usual report: one thread, every path once. Nothing to add up.
        grouped = frame[columns].rename(columns={"thread": "threads"})
    else:
        groups = frame.groupby(keys, sort=False)
        # sum(min_count=1): a column missing in every thread stays missing, not 0.
        grouped = pd.concat(
            [
                groups[_FIRST].first(),
                groups[_SUMMED].sum(min_count=1),
                groups["min"].min(),
                groups["max"].max(),
                groups["thread"].agg(lambda s: ", ".join(sorted({t for t in s if t}))),
                groups["line"].min(),
            ],
            axis=1,
        )
        grouped = grouped.rename(columns={"thread": "threads"}).reset_index()
    grouped = grouped.reset_index(drop=True)
    grouped["ave"] = grouped["total"] / grouped["calls"].where(grouped["calls"] > 0)
    return grouped


def _tree_order(frame: pd.DataFrame, weight: pd.Series) -> list[int]:
    """Row positions in display order: blocks in their order, each level's rows by weight
    (largest first), every row followed by its children."""
    children: dict[tuple[str, str], list[int]] = {}
    for i, (block, parent) in enumerate(zip(frame["block"], frame["parent_path"], strict=True)):
        children.setdefault((block, parent), []).append(i)
    weights = weight.fillna(-1.0).to_numpy()
    paths = frame["path"].to_numpy()
    order: list[int] = []

    def visit(block: str, parent: str) -> None:
        rows = sorted(children.get((block, parent), []), key=lambda i: (-weights[i], paths[i]))
        for i in rows:
            order.append(i)
            visit(block, paths[i])

    blocks = sorted(frame["block"].unique(), key=lambda b: (_BLOCK_ORDER.get(b.split()[0], 9), b))
    for block in blocks:
        visit(block, "")
    # A row whose parent was never listed (a cut table) is not lost: it comes last.
    seen = set(order)
    order += [i for i in range(len(frame)) if i not in seen]
    return order


BREAKDOWN_COLUMNS = [
    "block",
    "section",
    "event",
    "parent",
    "depth",
    "path",
    "threads",
    "calls",
    "total",
    "cpu_time",
    "gpu_time",
    "share",
    "ratio",
    "ave",
    "min",
    "max",
    "line",
]


def breakdown(events: pd.DataFrame) -> pd.DataFrame:
    """A run's ops: top-level events by total (largest first), each followed by the events
    nested in it (by total), each block after the other (events, nvprof, GpuMemCpy).

    Columns: block, section, event, parent (the parent event's name, "" at the top),
    depth, path (the key a diff matches on), threads, calls, total, cpu_time, gpu_time (ms;
    missing where the report has no split), share (of the block's total as the report
    gives it), ratio (as the report printed it), ave (total / calls), min, max, line.
    """
    if events.empty:
        return pd.DataFrame(columns=BREAKDOWN_COLUMNS)
    frame = _normalised(events)
    totals = _block_totals(frame)
    rows = _aggregated(frame)
    block_total = rows["block"].map({b: t.total for b, t in totals.items()}).astype(float)
    rows["share"] = rows["total"] / block_total.where(block_total > 0)
    rows["parent"] = rows["parent_path"].map(lambda p: p.rsplit(_PATH_SEP, 1)[-1] if p else "")
    rows = rows.iloc[_tree_order(rows, rows["total"])].reset_index(drop=True)
    return rows[BREAKDOWN_COLUMNS]


def nested_under(rows: pd.DataFrame, path: str) -> pd.DataFrame:
    """The rows of a breakdown (or diff) nested, at any depth, under the event at `path`."""
    return rows[rows["path"].str.startswith(path + _PATH_SEP)]


def nested_by_parent(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The nested rows of a breakdown grouped by the path of their top-level event, in
    the rows' order (one pass, where nested_under per parent would scan once each)."""
    nested = rows[rows["depth"] > 0]
    roots = nested["path"].str.split(_PATH_SEP, n=1).str[0]
    return {str(root): group for root, group in nested.groupby(roots, sort=False)}


def display_path(path: str) -> str:
    """A path as a person reads it: ``fused_op › fused_op/compute``."""
    return path.replace(_PATH_SEP, " › ")


# -- two runs ---------------------------------------------------------------------------------

DIFF_COLUMNS = [
    "block",
    "section",
    "event",
    "parent",
    "depth",
    "path",
    "status",
    "total_a",
    "total_b",
    "delta",
    "delta_pct",
    "delta_share",
    "share_a",
    "share_b",
    "calls_a",
    "calls_b",
    "cpu_a",
    "cpu_b",
    "gpu_a",
    "gpu_b",
    "bar",
    "note",
    "line_a",  # where the event was read in each run's report (its first line)
    "line_b",
]


def _status(total_a: float, total_b: float, tolerance: float) -> str:
    if math.isnan(total_a) and math.isnan(total_b):
        return "same"  # listed on both sides without a time: nothing to compare
    if math.isnan(total_b):
        return "disappeared"
    if math.isnan(total_a):
        return "appeared"
    delta = total_b - total_a
    if abs(delta) <= tolerance * total_a:
        return "same"
    return "faster" if delta < 0 else "slower"


def _below_cut(time: float, total: BlockTotal | None) -> bool:
    """Whether an event of this time, absent from a side, may be there unlisted: that
    side's table was cut short and stops above it."""
    if total is None or total.complete or math.isnan(total.smallest) or math.isnan(time):
        return False
    return time < total.smallest


def _absent_note(side: str, total: BlockTotal | None, time: float, below: bool) -> str:
    """Why an event absent from `side` is, or is not, known to be gone."""
    if total is None:
        return f"{side} has no rows of this block"
    if total.complete or math.isnan(total.smallest):
        return ""
    cut = (
        f"{side}'s table lists {total.coverage:.0%} of its time and stops at "
        f"{ms_text(total.smallest)}"
    )
    other = "B" if side == "A" else "A"
    if below:
        return f"{cut}: at {ms_text(time)} in {other} the event would be below that, unlisted"
    return f"{cut}: at {ms_text(time)} in {other} the event would have been listed"


def diff(a: pd.DataFrame, b: pd.DataFrame, tolerance: float = SAME_WITHIN) -> pd.DataFrame:
    """Run A against run B, event by event (matched by block and path: event name and
    section, and the parents of a nested event), both in ms whatever unit they came in.

    Columns: block, section, event, parent, depth, path, status (faster, slower, same
    within `tolerance` of A's total of the event, appeared, disappeared, below A's cut,
    below B's cut: see the module's docstring; a nested event absent from one side
    takes its top-level event's word when that one is below the cut too), total_a,
    total_b, delta (B - A; missing for an event found on one side only), delta_pct (of
    the event's A total), delta_share (of A's block total: how much of the run it moved),
    share_a, share_b, calls_a, calls_b, cpu_a, cpu_b, gpu_a, gpu_b (missing on a side
    whose report has no CPU/GPU split), bar (the delta; for an event on one side only,
    its total there, +B for appeared and -A for disappeared, to draw it with its own
    mark; missing for an event below a cut: its time on that side is not known), note
    (why a side is missing or unsure), line_a, line_b (its line in each report).
    Top-level rows by the size of their change (the time of an appeared or disappeared
    one), each followed by its children.
    """
    empty = pd.DataFrame(columns=DIFF_COLUMNS)
    if a.empty and b.empty:
        return empty
    side_a, side_b = breakdown(a), breakdown(b)
    totals_a = block_totals(a) if not a.empty else {}
    totals_b = block_totals(b) if not b.empty else {}
    keys = ["block", "path"]
    meta = ["section", "event", "parent", "depth"]
    values = ["total", "share", "calls", "cpu_time", "gpu_time", "line"]
    merged = side_a[keys + meta + values].merge(
        side_b[keys + meta + values],
        on=keys,
        how="outer",
        suffixes=("_a", "_b"),
        indicator=True,
        sort=False,
    )
    for column in meta:
        merged[column] = merged[f"{column}_a"].combine_first(merged[f"{column}_b"])
    merged = merged.rename(columns={"cpu_time_a": "cpu_a", "cpu_time_b": "cpu_b"})
    merged = merged.rename(columns={"gpu_time_a": "gpu_a", "gpu_time_b": "gpu_b"})
    for column in ("total_a", "total_b", "calls_a", "calls_b", "cpu_a", "cpu_b", "gpu_a", "gpu_b"):
        merged[column] = merged[column].astype(float)
    only_a = merged["_merge"] == "left_only"
    only_b = merged["_merge"] == "right_only"
    # An event on one side only keeps its missing side missing: no 0 stands in for it.
    merged.loc[only_a, ["total_b", "calls_b", "cpu_b", "gpu_b", "share_b"]] = math.nan
    merged.loc[only_b, ["total_a", "calls_a", "cpu_a", "gpu_a", "share_a"]] = math.nan
    # Below the cut: a top-level event the other side's cut table may hold unlisted (a
    # top-N table cuts top-level rows; the children of a listed event are all listed), and
    # a nested one absent with its top-level event when that one is below the cut.
    paths = merged["path"].astype(str)
    top_level = [
        (oa and _below_cut(ta, totals_b.get(block))) or (ob and _below_cut(tb, totals_a.get(block)))
        for block, oa, ob, ta, tb in zip(
            merged["block"], only_a, only_b, merged["total_a"], merged["total_b"], strict=True
        )
    ]
    top_below = {
        (block, path)
        for block, path, depth, b in zip(
            merged["block"], paths, merged["depth"], top_level, strict=True
        )
        if depth == 0 and b
    }
    below = [
        bool(oa or ob) and (block, path.split(_PATH_SEP, 1)[0]) in top_below
        for block, path, oa, ob in zip(merged["block"], paths, only_a, only_b, strict=True)
    ]
    merged["status"] = [
        (BELOW_B_CUT if oa else BELOW_A_CUT)
        if bc
        else "disappeared"
        if oa
        else "appeared"
        if ob
        else _status(ta, tb, tolerance)
        for oa, ob, bc, ta, tb in zip(
            only_a, only_b, below, merged["total_a"], merged["total_b"], strict=True
        )
    ]
    merged["delta"] = merged["total_b"] - merged["total_a"]
    merged["delta_pct"] = merged["delta"] / merged["total_a"].where(merged["total_a"] > 0)
    base = merged["block"].map({k: v.total for k, v in totals_a.items()}).astype(float)
    merged["delta_share"] = merged["delta"] / base.where(base > 0)
    merged["bar"] = merged["delta"]
    merged.loc[only_b, "bar"] = merged.loc[only_b, "total_b"]
    merged.loc[only_a, "bar"] = -merged.loc[only_a, "total_a"]
    merged.loc[below, "bar"] = math.nan
    notes = []
    for block, oa, ob, bc, ta, tb in zip(
        merged["block"], only_a, only_b, below, merged["total_a"], merged["total_b"], strict=True
    ):
        if ob:
            notes.append(_absent_note("A", totals_a.get(block), tb, bc))
        elif oa:
            notes.append(_absent_note("B", totals_b.get(block), ta, bc))
        else:
            notes.append("")
    merged["note"] = notes
    merged["path"] = merged["path"].astype(str)
    merged["parent_path"] = merged["path"].map(
        lambda p: p.rsplit(_PATH_SEP, 1)[0] if _PATH_SEP in p else ""
    )
    merged["depth"] = merged["depth"].astype(int)
    order = _tree_order(merged, merged["bar"].abs())
    return merged.iloc[order].reset_index(drop=True)[DIFF_COLUMNS]


def diff_summary(a: pd.DataFrame, b: pd.DataFrame, rows: pd.DataFrame) -> dict[str, object]:
    """The headline of a diff: each run's main block total, the change, and how many
    top-level events went each way."""
    block = main_block(a) or main_block(b)
    total_a = block_totals(a).get(block) if not a.empty and block else None
    total_b = block_totals(b).get(block) if not b.empty and block else None
    top = rows[(rows["depth"] == 0) & (rows["block"] == block)] if block else rows.iloc[:0]
    counts = {status: int((top["status"] == status).sum()) for status in STATUSES}
    ta = total_a.total if total_a else math.nan
    tb = total_b.total if total_b else math.nan
    return {
        "block": block,
        "total_a": ta,
        "total_b": tb,
        "delta": tb - ta,
        "delta_pct": (tb - ta) / ta if ta and ta > 0 else math.nan,
        "coverage_a": total_a.coverage if total_a else math.nan,
        "coverage_b": total_b.coverage if total_b else math.nan,
        **counts,
    }


def layout_notes(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """What a reader must know to trust the comparison of A and B: reports of different
    layouts (CPU-only against GPU), units converted, tables cut short."""
    notes = []
    layout_a, layout_b = layout(a), layout(b)
    gpu_a, gpu_b = layout_a.startswith("GPU"), layout_b.startswith("GPU")
    if a.empty or b.empty:
        pass
    elif main_block(a) != main_block(b):
        notes.append(
            f"A is a {layout_a}, B a {layout_b}: their rows are different things (kernels "
            "against ops), so none is matched; compare runs of the same kind."
        )
    elif gpu_a != gpu_b:
        without = "A" if gpu_b else "B"
        notes.append(
            f"A is a {layout_a}, B a {layout_b}: totals compare; GPU time is absent in "
            f"{without}, so only the other side's CPU/GPU split is shown."
        )
    units = [
        sorted({str(u) for u in side["unit"].dropna()}) if "unit" in side.columns else []
        for side in (a, b)
    ]
    if any(u and u != ["ms"] for u in units):
        written = " and ".join(
            f"{name} in {', '.join(u)}" for name, u in zip("AB", units, strict=True) if u
        )
        notes.append(f"Times were written {written}; both are compared in ms.")
    for name, side in (("A", a), ("B", b)):
        block = main_block(side)
        total = block_totals(side).get(block) if block else None
        if total and not total.complete:
            notes.append(
                f"{name}'s table was cut: its rows list {total.coverage:.0%} of the "
                f"{ms_text(total.total)} its report totals (by the report's own share "
                "column: Paddle's Ratio, nvprof's or nsys' Time (%), PyTorch's Self CPU %); "
                f"an event missing from {name} whose time is below its last row "
                f'({ms_text(total.smallest)}) is "below {name}\'s cut", not gone: {name} may '
                "hold it unlisted."
            )
    return notes


# -- IR passes --------------------------------------------------------------------------------

PASSES_DIFF_COLUMNS = [
    "name",
    "kind",
    "status",
    "subgraphs_a",
    "subgraphs_b",
    "subgraphs_delta",
    "order_a",
    "order_b",
]


def _pass_side(passes: pd.DataFrame) -> pd.DataFrame:
    """One row per pass name: how many subgraphs it fused (a pass run twice: summed; None
    when the log never said), where it first ran."""
    frame = passes.copy()
    counts = frame["subgraphs"] if "subgraphs" in frame.columns else math.nan
    frame["subgraphs"] = pd.to_numeric(counts, errors="coerce")
    frame["subgraphs"] = frame["subgraphs"].astype(float)
    if "order" not in frame.columns:
        frame["order"] = range(len(frame))
    return frame.groupby("name", sort=False).agg(
        kind=("kind", "first"),
        subgraphs=("subgraphs", lambda s: s.sum(min_count=1)),
        order=("order", "min"),
    )


def _fired(subgraphs: float) -> bool:
    return not math.isnan(subgraphs) and subgraphs > 0


def _pass_status(
    in_a: bool, in_b: bool, sub_a: float, sub_b: float, logs: tuple[bool, bool]
) -> str:
    logged_a, logged_b = logs
    if not logged_a:
        return "no pass log in A"
    if not logged_b:
        return "no pass log in B"
    fired_a, fired_b = _fired(sub_a), _fired(sub_b)
    if fired_a and fired_b:
        return "fired in both"
    if fired_b:
        return "started firing"
    if fired_a:
        return "stopped firing"
    if in_a and in_b:
        return "ran in both"
    return "only in A" if in_a else "only in B"


def passes_diff(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The IR and analysis passes of two runs side by side: which fired (fused one or more
    subgraphs) in each, with their counts, and which started or stopped firing.

    `a`, `b`: one run's passes (queries.profile_passes): name, kind, order, subgraphs (None
    when the log did not say; never taken for 0). A run with no pass log at all says so
    ("no pass log in A") instead of having every pass of the other "started firing".
    Rows: passes that started or stopped firing first, then those fired in both (largest
    count first), then the rest in the order they ran.
    """
    if a.empty and b.empty:
        return pd.DataFrame(columns=PASSES_DIFF_COLUMNS)
    empty = pd.DataFrame(columns=["kind", "subgraphs", "order"])
    side_a = _pass_side(a) if not a.empty else empty
    side_b = _pass_side(b) if not b.empty else empty
    merged = side_a.merge(
        side_b, how="outer", left_index=True, right_index=True, suffixes=("_a", "_b"), sort=False
    )
    merged.index.name = "name"
    merged = merged.reset_index()
    merged["kind"] = merged["kind_a"].combine_first(merged["kind_b"])
    in_a = merged["name"].isin(side_a.index)
    in_b = merged["name"].isin(side_b.index)
    for column in ("subgraphs_a", "subgraphs_b", "order_a", "order_b"):
        merged[column] = merged[column].astype(float)
    logs = (not a.empty, not b.empty)
    merged["status"] = [
        _pass_status(ia, ib, sa, sb, logs)
        for ia, ib, sa, sb in zip(
            in_a, in_b, merged["subgraphs_a"], merged["subgraphs_b"], strict=True
        )
    ]
    merged["subgraphs_delta"] = merged["subgraphs_b"] - merged["subgraphs_a"]
    rank = {"started firing": 0, "stopped firing": 0, "fired in both": 1}
    merged["_rank"] = merged["status"].map(rank).fillna(2)
    merged["_count"] = -merged[["subgraphs_a", "subgraphs_b"]].max(axis=1).fillna(0)
    merged["_order"] = merged["order_a"].combine_first(merged["order_b"])
    merged = merged.sort_values(["_rank", "_count", "_order", "name"], kind="stable")
    return merged.reset_index(drop=True)[PASSES_DIFF_COLUMNS]
