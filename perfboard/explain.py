"""Explain a change: the short ranked list a person can act on.

Given a change (an alert, or two points of a model series) the evidence comes from three
places: the PRs that landed between its two sides, the profiles of a run on either side
(which ops got faster or slower, appeared or disappeared), and the IR passes of those runs
(which started or stopped firing). `reasons` ranks them into one list:

1. a PR whose title names what the profiles show (an op or pass that moved: "fuse
   fc+elementwise_add+layernorm" and fused_fc_elementwise_layernorm appearing) comes
   first, with that evidence beside it: it is the likeliest cause and the one to read;
2. then the ops by how much of the run they moved (appeared and disappeared ops by their
   own time, never as a change from zero);
3. then the passes that started or stopped firing;
4. then the other PRs that landed in between, oldest first.

Pure functions on DataFrames (perfboard.profiles gives the diffs, perfboard.queries the
rows), so each rule is tested on its own.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from perfboard.profiles import BELOW_A_CUT, BELOW_B_CUT, ms_text

TOP_OPS = 5
# Words too common in op, pass and PR names to link a PR to an op: every op is an "op".
_STOPWORDS = {"pass", "fuse", "fused", "fusion", "op", "ops", "the", "and", "for", "with", "add"}
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")

REASON_COLUMNS = ["rank", "kind", "what", "how_much", "evidence", "pr_repo", "pr_number", "sort"]


@dataclass(frozen=True, slots=True)
class RunPick:
    """The profile run chosen for one side of a change, and why."""

    key: tuple[int, int] | None  # (source_id, run)
    note: str  # "2019-09-11 (6 days before)", or why there is none


def words(text: object) -> set[str]:
    """The distinctive words of an op, pass or PR name: fused_fc_elementwise_layernorm ->
    {elementwise, layernorm}; "fc" and "add" are too short or too common to tell."""
    if not isinstance(text, str):
        return set()
    found = set(_WORD.findall(text.lower().replace("_", " ").replace("+", " ")))
    return found - _STOPWORDS


def pick_runs(
    runs: pd.DataFrame,
    project: str | None,
    benchmark: str | None,
    before_at: datetime | None,
    after_at: datetime | None,
) -> tuple[RunPick, RunPick]:
    """The profile run for each side: the newest one dated at or before the last point
    before the change, and the oldest one dated at or after the first point after it, of
    the same project (and benchmark, when the run names one).

    `runs`: queries.profile_runs (source_id, run, project, benchmark, date).
    """
    same = runs
    if project:
        same = same[same["project"].fillna("") == project]
    if benchmark:
        same = same[same["benchmark"].isna() | (same["benchmark"] == benchmark)]
    dated = same[same["date"].notna()]
    undated = len(same) - len(dated)
    return (
        _pick(
            dated[dated["date"] <= before_at] if before_at is not None else dated[:0], -1, undated
        ),
        _pick(dated[dated["date"] >= after_at] if after_at is not None else dated[:0], 0, undated),
    )


def _pick(candidates: pd.DataFrame, which: int, undated: int = 0) -> RunPick:
    if candidates.empty:
        note = "no dated profile of this project on that side"
        if undated:  # never placed on a side for the user: when it ran is not known
            runs = "an undated one" if undated == 1 else f"{undated} undated ones"
            note += f"; it has {runs}, to pick by hand if it ran on that side"
        return RunPick(None, note)
    row = candidates.sort_values(["date", "source_id", "run"]).iloc[which]
    return RunPick((int(row.source_id), int(row.run)), f"{pd.Timestamp(row.date):%Y-%m-%d}")


def _op_rows(op_diff: pd.DataFrame | None) -> pd.DataFrame:
    """The top-level events of the main block that moved, largest first."""
    if op_diff is None or op_diff.empty:
        return pd.DataFrame(columns=["event", "status", "bar", "delta_share", "total_a", "total_b"])
    # An op below the other side's cut is not known to have moved: nothing to act on.
    unknown = ["same", BELOW_A_CUT, BELOW_B_CUT]
    top = op_diff[(op_diff["depth"] == 0) & ~op_diff["status"].isin(unknown)]
    if not top.empty:  # one block: the Event Summary, else the block most rows are in
        blocks = set(top["block"])
        main = "event" if "event" in blocks else top["block"].mode().iloc[0]
        top = top[top["block"] == main]
    return top.assign(size=top["bar"].abs()).sort_values("size", ascending=False)


def _op_reason(op: dict[str, object], run_total: float) -> tuple[str, str]:
    share = abs(op["bar"]) / run_total if run_total and run_total > 0 else math.nan
    share_text = f", {share:.0%} of run A" if not math.isnan(share) else ""
    if op["status"] == "appeared":
        what, how = f"{op['event']} appeared", f"{ms_text(op['total_b'])} in run B{share_text}"
    elif op["status"] == "disappeared":
        what, how = f"{op['event']} disappeared", f"{ms_text(op['total_a'])} in run A{share_text}"
    else:
        what = f"{op['event']} got {op['status']}"
        how = (
            f"{ms_text(op['total_a'])} -> {ms_text(op['total_b'])}"
            f" ({ms_text(op['delta'], signed=True)}{share_text})"
        )
    return what, how


def reasons(
    suspects: pd.DataFrame,
    op_diff: pd.DataFrame | None = None,
    passes_diff: pd.DataFrame | None = None,
    run_total: float = math.nan,
    top_ops: int = TOP_OPS,
) -> pd.DataFrame:
    """One ranked list (see the module docstring) with REASON_COLUMNS.

    `suspects`: queries.suspects_between (repo, pr_number, title, landed_at);
    `op_diff`: profiles.diff of the two runs; `passes_diff`: profiles.passes_diff;
    `run_total`: run A's main block total in ms, for each op's share of the run.
    """
    ops = _op_rows(op_diff).head(top_ops)
    moved_passes = (
        passes_diff[passes_diff["status"].isin(["started firing", "stopped firing"])]
        if passes_diff is not None and not passes_diff.empty
        else pd.DataFrame(columns=["name", "status", "subgraphs_a", "subgraphs_b"])
    )
    evidence_words: dict[str, set[str]] = {}
    for name in [*ops["event"], *moved_passes["name"]]:
        evidence_words[str(name)] = words(name)
    rows: list[dict[str, object]] = []
    for pr in suspects.itertuples():
        title_words = words(pr.title)
        named = [name for name, ws in evidence_words.items() if ws & title_words]
        rows.append(
            {
                "kind": "PR",
                "what": pr.title if isinstance(pr.title, str) else f"#{pr.pr_number}",
                "how_much": f"landed {pd.Timestamp(pr.landed_at):%Y-%m-%d}"
                if pd.notna(pr.landed_at)
                else "landed in between",
                "evidence": "names " + ", ".join(named) if named else "",
                "pr_repo": pr.repo,
                "pr_number": pr.pr_number,
                # Named evidence first (most names first), then the rest after ops and passes.
                "sort": (0, -len(named), 0.0) if named else (3, 0, 0.0),
            }
        )
    for op in ops.to_dict("records"):
        what, how = _op_reason(op, run_total)
        rows.append(
            {
                "kind": "op",
                "what": what,
                "how_much": how,
                "evidence": "profiles of the two runs",
                "pr_repo": None,
                "pr_number": None,
                "sort": (1, 0, -abs(op["bar"])),
            }
        )
    for p in moved_passes.to_dict("records"):
        count = p["subgraphs_b"] if p["status"] == "started firing" else p["subgraphs_a"]
        fused = f"{int(count)} subgraphs" if pd.notna(count) else "subgraphs: not logged"
        rows.append(
            {
                "kind": "pass",
                "what": f"{p['name']} {p['status']}",
                "how_much": fused,
                "evidence": "IR pass logs of the two runs",
                "pr_repo": None,
                "pr_number": None,
                "sort": (2, 0, -(count if pd.notna(count) else 0)),
            }
        )
    if not rows:
        return pd.DataFrame(columns=REASON_COLUMNS)
    ranked = pd.DataFrame(rows)
    ranked = ranked.iloc[sorted(range(len(ranked)), key=lambda i: ranked["sort"].iloc[i])]
    ranked = ranked.reset_index(drop=True)
    ranked["rank"] = range(1, len(ranked) + 1)
    return ranked[REASON_COLUMNS]
