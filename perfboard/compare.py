"""Comparisons as pure functions: two versions side by side, paired variants (FP32 vs INT8,
Paddle vs a competitor) as derived ratio series, and the attribution of a change to PRs.

No Streamlit and no SQL here: DataFrames and numpy arrays in, DataFrames out, so every
number the Compare page shows can be checked in a unit test. The two functions at the end
only gather what the page asks (the queries' frames, then these functions) so that ui.query
caches the result once for every session. Ratios are worded by
perfboard.wording, the one place that decides what "1.44x slower" means.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from perfboard.queries.compare import compare_side
from perfboard.queries.labels import params_of, params_text
from perfboard.queries.series import series_points
from perfboard.queries.store import series_catalog
from perfboard.stats import welch
from perfboard.wording import PAR, verdict, worded

SIGNIFICANCE = 0.05
REFERENCE_PRECISIONS = ("fp32", "float32")
OURS_FRAMEWORK = "paddle"
DIMENSIONS = ("precision", "framework")


# -- two versions side by side ----------------------------------------------------------------

_META = ["series", "project", "benchmark", "metric", "unit", "direction", "framework"]


_POINT = ["series_id", "version", "measured_at"]  # one point of a series: its measurements


def _points(frame: pd.DataFrame) -> pd.DataFrame:
    """Each series' distinct points (version and time) among its values."""
    return frame.dropna(subset=["value"])[_POINT].drop_duplicates()


def _unchanged(a: pd.DataFrame, b: pd.DataFrame) -> pd.Series:
    """By series: whether both sides hold the very same points (nothing measured again
    between them). Sets compared by counting: as many on each side, all of them shared.
    A merge matches a missing version (or time) with a missing one, as equal points."""
    points_a, points_b = _points(a), _points(b)
    n_a = points_a.groupby("series_id").size()
    n_b = points_b.groupby("series_id").size()
    shared = points_a.merge(points_b, on=_POINT).groupby("series_id").size()
    both = pd.concat([n_a, n_b, shared], axis=1, keys=["a", "b", "shared"]).fillna(0)
    return (both.a == both.b) & (both.shared == both.a)


def _one_side(frame: pd.DataFrame) -> pd.DataFrame:
    data = frame.dropna(subset=["value"])
    # Where the side's newest value was read (the rows come oldest first): the line a
    # reader opens; a side of several values is their mean, and this is one of them.
    read = {}
    if {"source_id", "line"} <= set(data.columns):
        read = {
            "source_id": ("source_id", "last"),
            "line": ("line", "last"),
            "line_value": ("value", "last"),
        }
    return data.groupby("series_id").agg(
        value=("value", "mean"),
        n=("value", "size"),
        version=("version", "last"),
        measured_at=("measured_at", "max"),
        **read,
    )


def side_by_side(
    a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str] = ("A", "B")
) -> pd.DataFrame:
    """Every series measured on both sides: the mean at A and at B, how many values each,
    ratio B / A, change in %, Welch's p on the raw values (when both sides hold two or
    more), impact |ln(B / A)|, better / worse / same by the series' direction, the ratio
    in words, and whether both sides are the very same measurements (not measured again
    between them), and where each side's newest value was read (source_id_a, line_a,
    line_value_a: its value; _b the same; missing when the frames do not say). Largest
    impact first.

    `a`, `b`: one row per measured value (queries.compare_side), oldest first: series_id,
    the columns of _META, value, version, measured_at (and source_id, line).
    """
    columns = [
        "series_id",
        *_META,
        "value_a",
        "value_b",
        "n_a",
        "n_b",
        "ratio",
        "change_pct",
        "p_value",
        "significant",
        "impact",
        "verdict",
        "words",
        "unchanged",
        "version_a",
        "version_b",
        "measured_at_a",
        "measured_at_b",
        *[f"{c}_{side}" for side in "ab" for c in ("source_id", "line", "line_value")],
    ]
    if a.empty or b.empty:
        return pd.DataFrame(columns=columns)
    sides = _one_side(a).add_suffix("_a").join(_one_side(b).add_suffix("_b"), how="inner")
    for column in columns[-6:]:
        if column not in sides:
            sides[column] = np.nan
    meta = a.drop_duplicates("series_id").set_index("series_id")[_META]
    out = sides.join(meta).reset_index()
    out["ratio"] = np.where(
        out.value_a > 0, out.value_b / out.value_a.where(out.value_a > 0), np.nan
    )
    out["change_pct"] = (out.ratio - 1) * 100
    # Welch needs two values a side: only those series' raw values are gathered.
    tested = out.series_id[(out.n_a >= 2) & (out.n_b >= 2)]
    raw_a, raw_b = (
        side[side.series_id.isin(tested)].dropna(subset=["value"]).groupby("series_id")["value"]
        for side in (a, b)
    )
    raw_a, raw_b = dict(iter(raw_a)), dict(iter(raw_b))
    p_values = {s: welch(raw_a[s].to_numpy(), raw_b[s].to_numpy()) for s in tested}
    out["p_value"] = out.series_id.map(p_values).astype(float)
    out["significant"] = pd.array(
        [None if pd.isna(p) else bool(p < SIGNIFICANCE) for p in out.p_value], dtype="boolean"
    )
    out["impact"] = np.abs(np.log(out.ratio.where(out.ratio > 0)))
    out["verdict"] = [verdict(r, d) for r, d in zip(out.ratio, out.direction, strict=True)]
    out["words"] = [
        worded(r, d, names[1], names[0]) for r, d in zip(out.ratio, out.direction, strict=True)
    ]
    out["unchanged"] = out.series_id.map(_unchanged(a, b)).astype(bool)
    return (
        out[columns]
        .sort_values(["impact", "series"], ascending=[False, True], na_position="last")
        .reset_index(drop=True)
    )


# -- paired variants ---------------------------------------------------------------------------


PAIR_COLUMNS = [
    "ours_id",
    "theirs_id",
    "pair",
    "project",
    "benchmark",
    "metric",
    "unit",
    "direction",
    "device",
    "params",
    "ours",
    "theirs",
    "differs",
    "subject",
]


def pair_series(catalog: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Pairs of series identical in everything except one dimension.

    `precision` (params.precision): the variant (int8, fp16, bf16, ...) is ours, fp32 the
    reference it is measured against; both of one framework and one testbed. `framework`:
    paddle is ours, every other framework a competitor; the testbed may differ, since it
    records each framework's own version (tensorflow 1.14.0). In both, ratio = ours /
    theirs, and the subject of the wording is ours: "Paddle int8 3.76x faster than fp32",
    "Paddle 1.44x slower than tensorflow".

    `catalog`: queries.series_catalog. Output: ours_id, theirs_id, pair (its label),
    project, benchmark, metric, unit, direction, device, params (what both share), ours,
    theirs (the names that differ), differs ("int8 vs fp32"), subject (of the wording).
    """
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {DIMENSIONS}, not {dimension!r}")
    columns = PAIR_COLUMNS
    if catalog.empty:
        return pd.DataFrame(columns=columns)
    parsed = catalog["params"].map(params_of)
    # The times an op benchmark's accuracy run prints are not a speed result (one repeat,
    # checks included): the benchmark says to ignore them, so they pair with nothing.
    timed = parsed.map(lambda p: p.get("task_kind") != "accuracy_run")
    data, parsed = catalog[timed].copy(), parsed[timed]
    keys = ["project", "benchmark", "task", "metric", "unit", "direction", "device", "rest"]
    if dimension == "precision":
        data["side"] = parsed.map(lambda p: str(p.get("precision") or "").lower())
        rest = parsed.map(lambda p: {k: v for k, v in p.items() if k != "precision"})
        keys += ["framework", "testbed"]
        ours_rows = (data.side != "") & ~data.side.isin(REFERENCE_PRECISIONS)
        theirs_rows = data.side.isin(REFERENCE_PRECISIONS)
    else:
        data["side"] = data["framework"].fillna("").str.lower()
        rest = parsed
        ours_rows = data.side == OURS_FRAMEWORK
        theirs_rows = (data.side != OURS_FRAMEWORK) & (data.side != "")
    data["rest"] = rest.map(lambda p: json.dumps(p, sort_keys=True, ensure_ascii=False))
    data["shared"] = rest.map(params_text)  # key=value as in a series' label
    ours = data[ours_rows]
    theirs = data[theirs_rows][[*keys, "series_id", "side"]]
    pairs = ours.merge(theirs, on=keys, suffixes=("_ours", "_theirs"))
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    pairs["ours"] = pairs.side_ours
    pairs["theirs"] = pairs.side_theirs
    pairs["differs"] = pairs.ours + " vs " + pairs.theirs
    if dimension == "precision":
        pairs["subject"] = pairs.framework.str.capitalize() + " " + pairs.ours
    else:
        pairs["subject"] = pairs.ours.str.capitalize()
    pairs["pair"] = [
        " · ".join(str(p) for p in parts if p)
        for parts in zip(
            pairs.benchmark, pairs.metric, pairs.device, pairs.shared, pairs.differs, strict=True
        )
    ]
    # Series that differ only in what a label leaves out (the op's argument list, the
    # testbed) would share a label: their ids tell them apart.
    twice = pairs.pair.duplicated(keep=False)
    pairs.loc[twice, "pair"] = (
        pairs.pair[twice]
        + " (#"
        + pairs.series_id_ours[twice].astype(str)
        + "/#"
        + pairs.series_id_theirs[twice].astype(str)
        + ")"
    )
    # params: what both share, described (the raw JSON of our side would make two columns).
    pairs = pairs.drop(columns=["params"]).rename(
        columns={"series_id_ours": "ours_id", "series_id_theirs": "theirs_id", "shared": "params"}
    )
    return pairs[columns].sort_values(["metric", "pair"]).reset_index(drop=True)


def ratio_over_time(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """Two series' points aligned, and ratio = ours / theirs at each.

    A version both sides measured pairs with itself (the median of each side's values at
    it, at the later of the two times); any other point pairs with the other side's last
    point at or before it (so a competitor measured once is the yardstick of every later
    point of ours, and the other way round). A point before the other side's first has no
    ratio. `ours`, `theirs`: measured_at, version, value. Output: measured_at, version,
    ours_value, theirs_value, ratio, matched ("version" or "time"), oldest first.
    """
    columns = ["measured_at", "version", "ours_value", "theirs_value", "ratio", "matched"]
    sides = [
        frame.assign(series_id=side, version=frame.get("version"))[
            ["series_id", "measured_at", "version", "value"]
        ]
        for side, frame in enumerate((ours, theirs))
    ]
    one_pair = pd.DataFrame({"ours_id": [0], "theirs_id": [1]})
    return pairs_over_time(pd.concat(sides, ignore_index=True), one_pair)[columns]


def pairs_over_time(points: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """ratio_over_time of every pair at once: the same rows, in the order of `pairs` (a
    pair with no ratio gives none), each with its pair's columns and the source_url of the
    last of our side's points (when `points` has them). One pass for all pairs: one call a
    pair took 42 s on the 1,600 op pairs of the 10 M store, at every run of the page
    (issue 7).

    `points`: series_id, measured_at, version, value[, source_url]; `pairs`: pair_series.
    """
    columns = ["measured_at", "version", "ours_value", "theirs_value", "ratio", "matched"]
    keys = pairs.reset_index(drop=True).rename_axis("_pair").reset_index()
    data = points.dropna(subset=["value", "measured_at"])[
        ["series_id", "measured_at", "version", "value"]
    ].copy()
    data["measured_at"] = pd.to_datetime(data["measured_at"]).astype("datetime64[ns]")
    side = ["_pair", "measured_at", "version", "value"]
    o = keys.merge(data, left_on="ours_id", right_on="series_id")[side]
    t = keys.merge(data, left_on="theirs_id", right_on="series_id")[side]
    o, t = (f.sort_values(["_pair", "measured_at"], kind="stable") for f in (o, t))

    def by_version(points: pd.DataFrame) -> pd.DataFrame:
        return (
            points.dropna(subset=["version"])
            .groupby(["_pair", "version"])
            .agg(value=("value", "median"), measured_at=("measured_at", "max"))
        )

    same = by_version(o).add_suffix("_o").join(by_version(t).add_suffix("_t"), how="inner")
    same = same.reset_index()
    by_version_rows = pd.DataFrame(
        {
            "_pair": same._pair,
            "measured_at": same[["measured_at_o", "measured_at_t"]].max(axis=1),
            "version": same.version,
            "ours_value": same.value_o,
            "theirs_value": same.value_t,
            "matched": "version",
        }
    )
    shared = same[["_pair", "version"]].assign(_shared=True)

    def rest(points: pd.DataFrame) -> pd.DataFrame:
        marked = points.merge(shared, on=["_pair", "version"], how="left")
        return marked[marked._shared.isna()].drop(columns="_shared")

    def then(left: pd.DataFrame, right: pd.DataFrame, mine: str, other: str) -> pd.DataFrame:
        found = pd.merge_asof(
            rest(left).rename(columns={"value": mine}).sort_values("measured_at", kind="stable"),
            right[["_pair", "measured_at", "value"]]
            .rename(columns={"value": other})
            .sort_values("measured_at", kind="stable"),
            on="measured_at",
            by="_pair",
            direction="backward",
        )
        return found.assign(matched="time").sort_values(["_pair", "measured_at"], kind="stable")

    parts = [by_version_rows, then(o, t, "ours_value", "theirs_value")]
    parts.append(then(t, o, "theirs_value", "ours_value"))
    parts = [p for p in parts if not p.empty]
    with_url = "source_url" in points
    if not parts:
        return pd.DataFrame(columns=[*columns, *pairs.columns, *(["source_url"] * with_url)])
    aligned = pd.concat(parts, ignore_index=True)
    aligned = aligned.dropna(subset=["ours_value", "theirs_value"])
    aligned = aligned.drop_duplicates(["_pair", "measured_at", "ours_value", "theirs_value"])
    aligned["ratio"] = aligned.ours_value / aligned.theirs_value.where(aligned.theirs_value > 0)
    aligned = aligned.sort_values(["_pair", "measured_at"], kind="stable")
    if with_url:
        last = points.drop_duplicates("series_id", keep="last").set_index("series_id")
        keys["source_url"] = keys.ours_id.map(last.source_url)
    aligned = aligned[["_pair", *columns]].merge(keys, on="_pair", how="left")
    return aligned.drop(columns="_pair").reset_index(drop=True)


def where_we_lose(points: pd.DataFrame) -> pd.DataFrame:
    """The pairs whose latest ratio is a loss (for a lower-is-better metric, ours / theirs
    above 1), by how much, and since when: the first point of the latest unbroken run of
    losing points. Largest loss first.

    `points`: the aligned ratio points of every pair (ratio_over_time) with their pair's
    columns (pair_series: pair, direction, subject, theirs, ...; optionally source_url,
    the document of the latest point). It takes every point, not only the latest, because
    "since when" needs the history.
    """
    keep = [
        "pair",
        "words",
        "ratio",
        "factor",
        "ours_value",
        "theirs_value",
        "unit",
        "since",
        "losing_points",
        "measured_at",
        "benchmark",
        "metric",
        "ours",
        "theirs",
        "ours_id",
        "theirs_id",
        "source_url",
    ]
    data = points.dropna(subset=["ratio"]).sort_values("measured_at", kind="stable")
    if data.empty:
        return pd.DataFrame(columns=keep)
    data = data.reset_index(drop=True)
    # Per pair at once (a loop over 1,600 pairs took 1.5 s a page run): each point's place
    # in its pair, whether it loses, and the place after the pair's last point that does
    # not: the start of the losing run that leads up to the latest point.
    place = data.groupby("pair", sort=False).cumcount()
    ratio, lower = data.ratio.to_numpy(float), (data.direction == "lower").to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        losing = (ratio > 0) & np.where(lower, ratio >= PAR, ratio <= 1 / PAR)
    last = data.groupby("pair", sort=False).tail(1)
    last = last[losing[last.index]]
    first_seen = {pair: n for n, pair in enumerate(pd.unique(data.pair))}
    last = last.iloc[np.argsort(last.pair.map(first_seen).to_numpy(), kind="stable")]
    if last.empty:
        return pd.DataFrame(columns=keep)
    not_losing = place[~losing].groupby(data.pair[~losing]).max()
    run = last.pair.map(not_losing).fillna(-1).astype(int).to_numpy() + 1
    at = pd.Series(data.measured_at.to_numpy(), index=pd.MultiIndex.from_arrays([data.pair, place]))
    rows = last.reindex(columns=keep).astype({k: object for k in keep if k not in last})
    rows[[k for k in keep if k not in last]] = None
    rows["since"] = at.loc[list(zip(last.pair, run, strict=True))].to_numpy()
    rows["losing_points"] = place[last.index].to_numpy() + 1 - run
    rows["factor"] = np.where(lower[last.index], last.ratio, 1 / last.ratio)
    rows["words"] = [
        worded(r, d, s, t)
        for r, d, s, t in zip(last.ratio, last.direction, last.subject, last.theirs, strict=True)
    ]
    return rows[keep].sort_values("factor", ascending=False).reset_index(drop=True)


def attribution(
    start_value: float,
    end_value: float,
    steps: pd.DataFrame,
    start_label: str = "start",
    end_label: str = "end",
    bounds: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """The rows of a waterfall from start_value to end_value: start, one row per step (in
    the order given), the unexplained rest = end - the level the steps reached (kept even
    when it is about 0: "nothing unexplained" is a finding too), end.

    The steps walk the series only through its own range, `bounds` (its lowest and highest
    value measured between the two points; by default the two values themselves): a step
    that would carry it beyond is cut at the edge, and counts only the part the series can
    show (`delta`; `recorded` is the step as its record has it, `cut` says it was cut).
    Steps of another measure, or overlapping ones, cannot walk a 6 ms series to -25 ms.

    `steps`: label, pr_repo, pr_number, delta (and any other columns, carried along).
    Output: order, kind (start, step, unexplained, end), label, pr_repo, pr_number, delta,
    recorded, cut, level_from, level_to (each bar spans level_from..level_to; start and
    end are levels).
    """
    steps = steps.reset_index(drop=True)
    extra = [c for c in steps.columns if c not in ("label", "pr_repo", "pr_number", "delta")]
    low, high = sorted(bounds) if bounds is not None else sorted((start_value, end_value))
    low, high = min(low, start_value, end_value), max(high, start_value, end_value)
    rows: list[dict[str, object]] = [
        {"kind": "start", "label": start_label, "delta": math.nan, "level_from": start_value}
    ]
    level = float(start_value)
    seen: dict[str, int] = {}
    for step in steps.itertuples(index=False):
        label = str(step.label)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:  # one label per bar: an axis of names cannot hold two alike
            label = f"{label} ({seen[label]})"
        recorded = float(step.delta)
        reached = min(max(level + recorded, low), high)
        row = {
            "kind": "step",
            "label": label,
            "pr_repo": step.pr_repo,
            "pr_number": step.pr_number,
            "delta": reached - level,
            "recorded": recorded,
            "cut": not math.isclose(reached, level + recorded, rel_tol=1e-9, abs_tol=1e-12),
            "level_from": level,
        }
        row.update({c: getattr(step, c) for c in extra})
        rows.append(row)
        level = reached
    rest = float(end_value) - level
    rows.append({"kind": "unexplained", "label": "unexplained", "delta": rest, "level_from": level})
    rows.append({"kind": "end", "label": end_label, "delta": math.nan, "level_from": end_value})
    out = pd.DataFrame(rows)
    for column in ("pr_repo", "pr_number", "recorded", "cut", *extra):
        if column not in out:
            out[column] = None
    out["cut"] = out.cut.fillna(False).astype(bool)
    out["level_from"] = out.level_from.astype(float)
    out["level_to"] = out.level_from + out.delta.fillna(0.0)
    out.loc[out.kind == "unexplained", "level_to"] = float(end_value)  # exact, no float drift
    out.insert(0, "order", range(len(out)))
    return out[
        [
            "order",
            "kind",
            "label",
            "pr_repo",
            "pr_number",
            "delta",
            "recorded",
            "cut",
            "level_from",
            "level_to",
            *extra,
        ]
    ]


@dataclass(frozen=True)
class Explained:
    """How much of a change the steps explain, never more than all of it.

    change: end - start; steps: what the steps sum to; share: the part of the change they
    explain, 0 to 1 (None when nothing changed); beyond: what the steps claim that the
    change does not hold (0 when they fit inside it; all of them when they point the
    other way); note: what cannot be explained, in words ("" when nothing)."""

    change: float
    steps: float
    share: float | None
    beyond: float
    note: str


def explained(change: float, steps: float, unit: str = "") -> Explained:
    """The steps' sum against the observed change: a share of it capped at 100 %, and
    what they claim beyond it flagged. Steps that sum to more than the change (they
    overlap, or one is of another measure) explain all of it and no more; steps that sum
    to the other sign explain none of it."""
    unit = f" {unit}" if unit else ""
    steps_text, change_text = f"{steps:+.4g}{unit}", f"{change:+.4g}{unit}"
    if math.isclose(change, 0.0, abs_tol=1e-12):
        if math.isclose(steps, 0.0, abs_tol=1e-12):
            return Explained(change, steps, None, 0.0, "")
        return Explained(
            change,
            steps,
            None,
            steps,
            f"The steps sum to {steps_text}, but the series did not change between the two "
            "points: this series does not show them.",
        )
    if steps * change < 0:
        return Explained(
            change,
            steps,
            0.0,
            steps,
            f"The steps sum to {steps_text}, against a change of {change_text}: the series "
            "moved the other way, and what moved it is not among these steps.",
        )
    if abs(steps) > abs(change):
        beyond = steps - change
        return Explained(
            change,
            steps,
            1.0,
            beyond,
            f"The steps sum to {steps_text}, more than the change of {change_text}: "
            f"{abs(beyond):.4g}{unit} of them this series does not show between the two points "
            "(steps that overlap, or of another measure).",
        )
    return Explained(change, steps, steps / change, 0.0, "")


# -- what the Compare page asks, through ui.query -----------------------------------------------


def variant_pairs(conn: duckdb.DuckDBPyConnection, dimension: str) -> pd.DataFrame:
    """pair_series of the store's series catalog: asked through ui.query, so it is paired
    once per data version for every session, not on each run of the page."""
    return pair_series(series_catalog(conn), dimension)


PAIR_POINTS = 20_000  # all pairs' points together, as Paired variants draws them


def pair_metrics(pairs: pd.DataFrame) -> list[str]:
    """The metrics of variant_pairs, as Paired variants offers them: latency first, then
    the most paired; the first is the one it opens with."""
    counts = pairs.metric.value_counts()
    return sorted(counts.index, key=lambda m: (m != "latency", -counts[m], m))


def pair_rows(pairs: pd.DataFrame) -> tuple[tuple[Any, ...], ...]:
    """Pairs (pair_series' rows) as variant_ratios takes them: hashable, for ui.query,
    with None for a missing value (NaN is not equal to itself: a key holding one would
    never be found again)."""
    frame = pairs[PAIR_COLUMNS].astype(object)
    return tuple(frame.where(frame.notna(), None).itertuples(index=False, name=None))


def variant_ratios(
    conn: duckdb.DuckDBPyConnection, pairs: tuple[tuple[Any, ...], ...], max_points: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ratio points of these pairs (pair_rows of variant_pairs: pairs_over_time of their
    series' points, at most `max_points` in all) and where_we_lose of them: what Paired
    variants draws. Through ui.query it is computed once for every session (1.6 s on the
    10 M store's 1,600 op pairs of a metric), and read again only after an ingest into
    one of the pairs' series: the pairs are an argument, so that result_cache.QUERY_READS
    can name their series. Asked by dimension and metric instead, each ingest made it cold
    (3-4 s for the first session after it, in issue 16's load test)."""
    chosen = pd.DataFrame(list(pairs), columns=PAIR_COLUMNS)
    ids = tuple(sorted({int(row[i]) for row in pairs for i in (0, 1)}))  # ours_id, theirs_id
    if not ids:
        no_points = pd.DataFrame(columns=["series_id", "measured_at", "version", "value"])
        ratios = pairs_over_time(no_points, chosen)
        return ratios, where_we_lose(ratios)
    points = series_points(conn, ids, max(100, max_points // len(ids)))
    ratios = pairs_over_time(points[points.status == "ok"], chosen)
    return ratios, where_we_lose(ratios)


def two_versions(
    conn: duckdb.DuckDBPyConnection,
    side_a: tuple[str, str],
    side_b: tuple[str, str],
    names: tuple[str, str],
) -> tuple[int, int, pd.DataFrame]:
    """side_by_side of two sides (compare_side's kind and value each): how many series
    each side holds, and the table. Through ui.query it is worked out once per data
    version for every session (0.5 s for the 10 M store's 10,000 series), not on every
    run of the page."""
    a, b = compare_side(conn, *side_a), compare_side(conn, *side_b)
    return a.series_id.nunique(), b.series_id.nunique(), side_by_side(a, b, names=names)
