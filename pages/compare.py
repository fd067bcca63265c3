"""Compare: two versions side by side across every series they share, paired variants
(INT8 vs FP32, Paddle vs another framework) as ratios over time with where we lose, and
what each PR contributed to a series' change between two of its versions."""

from __future__ import annotations

import math
from datetime import date, timedelta

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from perfboard import charts, compare, queries
from perfboard.changes import within_noise
from perfboard.links import pr_links, safe_https
from perfboard.markup import md_escape
from perfboard.queries.labels import MISSING, unique_labels
from perfboard.ui import (
    figure_row,
    page_data,
    query,
    source_line_column,
    source_lines,
    to_url,
    url_state,
    url_text,
    url_value,
    view_title,
)

PARTS = ["Two versions", "Paired variants", "Attribution"]
KINDS = ("version", "release", "date")
MAX_PAIRS = len(charts.OKABE_ITO)  # more lines than colours is not readable
DIMENSION_NAMES = {
    "precision": "precision (int8, fp16, bf16 against fp32)",
    "framework": "framework (Paddle against every other framework)",
}

view_title("Compare")
catalog = page_data(
    queries.series_catalog,
    empty="Nothing to compare yet: ingest benchmark documents with `python -m ingest auto PATH` "
    "or result files with `python -m ingest results FILE`.",
)
PAGE = "compare"  # the scope of this page's pickers in the session
# The open part is in the URL (?part=...), and only the open part runs.
versions_tab, pairs_tab, attribution_tab = st.tabs(PARTS, key="part", bind="query-params")


# -- two versions -----------------------------------------------------------------------------


def side_picker(
    column: DeltaGenerator,
    name: str,
    choices: pd.DataFrame,
    days: tuple[date, date],
    default_day: date,
) -> tuple[str, str] | None:
    """One side of the comparison: its kind and value, from the URL (a_kind, a / b_kind,
    b) or the widgets. None when the kind has nothing to choose from."""
    key = name.lower()
    kind = column.radio(
        f"{name} is a", KINDS, key=url_state(PAGE, f"{key}_kind", KINDS, "date"), horizontal=True
    )
    if kind == "version":
        versions = choices[choices.kind == "version"]
        described = {
            row.value: " · ".join(
                p
                for p in (
                    str(row.value)[:12],
                    f"{row.first_at:%Y-%m-%d}" if not pd.isna(row.first_at) else "",
                    f"{int(row.series)} series",
                    row.note if isinstance(row.note, str) else "",
                )
                if p
            )
            for row in versions.itertuples()
        }
        options = list(described)
        wanted = url_text(key) if url_text(f"{key}_kind") == kind else ""
        if wanted and wanted not in described:
            options.insert(0, wanted)  # a hash typed into the URL: matched by prefix below
        if not options:
            column.caption(
                "No measurement carries a version: result files and logs with a commit or "
                "release in them give versions to compare."
            )
            return None
        # Newest first: B defaults to the newest version, A to the one before it.
        default = options[min(len(options) - 1, 1 if key == "a" else 0)]
        value = column.selectbox(
            f"{name}: version",
            options,
            key=url_state(PAGE, key, options, default),
            format_func=lambda v: described.get(v, v),
            accept_new_options=True,
            help="A version as recorded, or a commit hash of 7 or more hex digits.",
        )
    elif kind == "release":
        tags = list(choices[choices.kind == "release"].value)
        if not tags:
            column.caption(
                "No release tags yet: `python -m ingest git --repo CLONE` reads them from a clone."
            )
            return None
        value = column.selectbox(f"{name}: release", tags, key=url_state(PAGE, key, tags, tags[0]))
    else:
        value = column.date_input(
            f"{name}: by the end of",
            min_value=days[0],
            max_value=days[1],
            key=url_value(
                PAGE,
                key,
                lambda text: min(max(date.fromisoformat(text), days[0]), days[1]),
                default_day,
                fits=lambda day: isinstance(day, date) and days[0] <= day <= days[1],
            ),
        ).isoformat()
    if not value:
        return None
    to_url(PAGE, f"{key}_kind", kind)
    to_url(PAGE, key, value)
    return kind, str(value)


def nothing_at(side: tuple[str, str]) -> str:
    """What an empty side means, as markdown (the value may come from the URL: escaped)."""
    kind, value = side[0], md_escape(side[1])
    if kind == "version":
        return (
            f"Nothing was measured at version {value}. A version is matched as recorded, or "
            "as a commit hash of 7 or more hex digits that names one commit."
        )
    if kind == "release":
        return f"Nothing was measured at release {value}'s commit or before it was released."
    return f"Nothing was measured by the end of {value}."


def two_versions_part() -> None:
    choices = query(queries.compare_choices)
    first = pd.Timestamp(catalog["first"].min()).date()
    last = pd.Timestamp(catalog["last"].max()).date()
    days = (first, last)
    # B defaults to the newest day a series was measured again, A to a week before it: the
    # newest week in which something could have changed. The very last day may hold only
    # documents measured once (the demo's newest is a pasted vLLM run of 2025), where every
    # shared series was on par with itself.
    again = catalog[catalog.points >= 2]
    newest = pd.Timestamp((catalog if again.empty else again)["last"].max()).date()
    left, right = st.columns(2)
    side_a = side_picker(left, "A", choices, days, max(first, newest - timedelta(days=7)))
    side_b = side_picker(right, "B", choices, days, newest)
    st.caption(
        "A **version** side takes every value measured at that version; a **release** the "
        "values at the release's commit, else each series' last point before the release; a "
        "**date** each series' last point measured by the end of that day (a point: every "
        "value of one version, so repeated runs count). Each side's value is the mean of its "
        "values; p is Welch's t-test on them where both sides hold two or more, significant "
        "below 0.05. Largest change (|ln B/A|) first."
    )
    if side_a is None or side_b is None:
        st.info("Choose both sides to compare.")
        return
    # Each row says "B 1.02x slower than A": the sides are named once, in the pickers. With
    # their names in each row (two dates, two hashes) the column was wider than the room
    # an 800 px window leaves it beside the series, and was cut.
    series_a, series_b, table = query(
        compare.two_versions, tuple(side_a), tuple(side_b), ("A", "B")
    )
    for name, side, series in (("A", side_a, series_a), ("B", side_b, series_b)):
        if not series:
            st.info(f"{name}: {nothing_at(side)}")
            return
    if table.empty:
        st.info(
            f"A ({series_a} series) and B ({series_b} series) share no series: pick sides "
            "measured on the same benchmarks."
        )
        return
    # A change inside the series' own noise band (changes.within_noise: Trends draws it)
    # that no t-test found significant is no verdict: a nightly series moves 1-2 % from
    # run to run, and the demo's last week read "Worse in B: 4" on changes of 0.5-1.7 %.
    cv = table.series_id.map(catalog.set_index("series_id").cv).astype(float)
    quiet = within_noise(table.ratio - 1, cv)
    noise = table.verdict.isin(["better", "worse"]) & quiet & ~table.significant.fillna(False)
    table.loc[noise, "verdict"] = "within noise"
    figures = figure_row()
    figures.metric("Shared series", len(table), width="content")
    figures.metric("Better in B", int((table.verdict == "better").sum()), width="content")
    figures.metric("Worse in B", int((table.verdict == "worse").sum()), width="content")
    figures.metric(
        "Within noise",
        int(noise.sum()),
        width="content",
        help="Moved by less than twice the series' noise (robust cv), and no t-test says "
        "otherwise: not counted as better or worse.",
    )
    figures.metric(
        "Significant (p < 0.05)", int(table.significant.fillna(False).sum()), width="content"
    )
    same = int(table.unchanged.sum())
    if same:
        st.caption(
            f"{same} of {len(table)} shared series hold the very same measurements on both "
            "sides: they were not measured again between A and B."
        )
    # Each side's line: where its newest value was read (the value marked there).
    for side in "ab":
        table[f"line_{side}"] = source_lines(
            table[f"source_id_{side}"], table[f"line_{side}"], table[f"line_value_{side}"]
        )
    st.dataframe(
        table[
            [  # the answer first: the series' labels are long, and a narrow window cut it
                "words",
                "series",
                "value_a",
                "line_a",
                "value_b",
                "line_b",
                "unit",
                "change_pct",
                "p_value",
                "significant",
                "n_a",
                "n_b",
                "verdict",
                "unchanged",
                "version_a",
                "measured_at_a",
                "version_b",
                "measured_at_b",
                "project",
            ]
        ],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "series": st.column_config.TextColumn("series", width="large"),
            "words": st.column_config.TextColumn("B against A"),
            "value_a": st.column_config.NumberColumn("A", format="%.4g"),
            "value_b": st.column_config.NumberColumn("B", format="%.4g"),
            "line_a": source_line_column("line A", "A's newest value"),
            "line_b": source_line_column("line B", "B's newest value"),
            "change_pct": st.column_config.NumberColumn("change", format="%+.2f%%"),
            "p_value": st.column_config.NumberColumn("p (Welch)", format="%.3g"),
            "significant": st.column_config.CheckboxColumn("significant"),
            "n_a": st.column_config.NumberColumn("values A"),
            "n_b": st.column_config.NumberColumn("values B"),
            "unchanged": st.column_config.CheckboxColumn("same measurement"),
            "version_a": st.column_config.Column("version A"),
            "version_b": st.column_config.Column("version B"),
            "measured_at_a": st.column_config.DatetimeColumn("measured A", format="YYYY-MM-DD"),
            "measured_at_b": st.column_config.DatetimeColumn("measured B", format="YYYY-MM-DD"),
        },
    )


# -- paired variants --------------------------------------------------------------------------


def paired_variants_part() -> None:
    dims = list(compare.DIMENSIONS)
    dimension = st.radio(
        "Pair series that differ only in",
        dims,
        key=url_state(PAGE, "dim", dims, "framework"),
        format_func=DIMENSION_NAMES.get,
        horizontal=True,
    )
    to_url(PAGE, "dim", dimension)
    pairs = query(compare.variant_pairs, dimension)
    if pairs.empty:
        st.info(
            "No paired series yet. Precision pairs are series alike in everything but "
            "`params.precision` (fp32 and int8, fp16 or bf16), e.g. a QAT report's FP32 and "
            "INT8 latencies; framework pairs are a Paddle series and another framework's on "
            "the same op, model, device and parameters, e.g. op benchmark outputs."
        )
        return
    metrics = compare.pair_metrics(pairs)
    metric = st.selectbox("Metric", metrics, key=url_state(PAGE, "metric", metrics, metrics[0]))
    to_url(PAGE, "metric", metric)
    chosen = pairs[pairs.metric == metric]
    ratios, lose = query(compare.variant_ratios, compare.pair_rows(chosen), compare.PAIR_POINTS)
    if ratios.empty:
        st.info(
            f"In each of the {len(chosen)} {md_escape(metric)} pairs one side holds no measured "
            "value (only statuses such as OOM): a ratio needs both."
        )
        return
    latest = ratios.groupby("pair").tail(1)
    gaps = latest.assign(gap=latest.ratio.map(lambda r: abs(math.log(r)) if r > 0 else 0.0))
    ranked = list(gaps.sort_values("gap", ascending=False, kind="stable").pair)
    drawn = min(len(ranked), MAX_PAIRS)
    with st.expander(f"Pairs drawn: {drawn} of {len(ranked)}, the largest gaps first"):
        shown = st.multiselect(
            "Pairs drawn",
            ranked,
            default=ranked[:MAX_PAIRS],
            max_selections=MAX_PAIRS,
            placeholder="none",
            help="At most as many as there are distinct colours.",
        )
    direction = chosen.direction.iloc[0]
    ours_name = "variant" if dimension == "precision" else "Paddle"
    theirs_name = "fp32" if dimension == "precision" else "other"
    versus = "fp32" if dimension == "precision" else "the other framework"
    side, worse = ("above", "slower") if direction == "lower" else ("below", "lower")
    if shown:
        drawn_points = ratios[ratios.pair.isin(shown)].copy()
        drawn_points["words"] = [  # the tooltip's; worded for the lines drawn only
            compare.worded(r, d, s, t)
            for r, d, s, t in zip(
                drawn_points.ratio,
                drawn_points.direction,
                drawn_points.subject,
                drawn_points.theirs,
                strict=True,
            )
        ]
        chart = charts.ratio_lines(
            drawn_points,
            f"{ours_name} / {theirs_name} (log scale)",
            f"parity · {side}: {ours_name} {worse}",
        )
        st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    st.caption(
        "Each point pairs a value with the other side's at the same version, else with the "
        "other side's last value measured before it. The dashed line is parity."
    )

    st.subheader("Where we lose")
    if lose.empty:
        st.caption(
            f"In every {md_escape(metric)} pair, {'the ' * (dimension == 'precision')}"
            f"{ours_name} is at least on par with {versus} at its latest measurement."
        )
        return
    lose["link"] = [safe_https(u) for u in lose.source_url]
    st.caption(
        f"{len(lose)} of {len(latest)} pairs, at their latest measurement; since: the first "
        "point of the unbroken run of losing points that leads up to it."
    )
    st.dataframe(
        lose[
            [
                "pair",
                "words",
                "since",
                "link",
                "factor",
                "ours_value",
                "theirs_value",
                "unit",
                "losing_points",
                "measured_at",
            ]
        ],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "pair": st.column_config.TextColumn("pair", width="large"),
            "words": st.column_config.TextColumn("by how much"),
            "factor": st.column_config.NumberColumn("factor", format="%.2fx"),
            "ours_value": st.column_config.NumberColumn(ours_name, format="%.4g"),
            "theirs_value": st.column_config.NumberColumn(theirs_name, format="%.4g"),
            "since": st.column_config.DatetimeColumn("losing since", format="YYYY-MM-DD"),
            "losing_points": st.column_config.NumberColumn("losing points"),
            "measured_at": st.column_config.DatetimeColumn("latest", format="YYYY-MM-DD"),
            "link": st.column_config.LinkColumn("source", display_text="open"),
        },
    )


# -- attribution ------------------------------------------------------------------------------


def side_of(row: pd.Series) -> str:
    """A point of a series as a side: its version, else the day it was measured."""
    if isinstance(row.version, str) and row.version:
        return f"version:{row.version}"
    return f"date:{row.measured_at:%Y-%m-%d}"


def side_name(side: str) -> str:
    kind, value = side.split(":", 1)
    return value[:10] if kind == "version" else value


def attribution_part() -> None:
    measured = catalog[catalog.ok_points >= 2].sort_values(
        ["ok_points", "series_id"], ascending=[False, True]
    )
    if measured.empty:
        st.info(
            "Attribution needs a series measured at two versions or more: nightly result "
            "files (`python -m ingest results FILE`), with `python -m perfboard detect` to "
            "find the steps between them and `python -m ingest github-prs` or a phase table "
            "to name the PRs. Every series here holds one measured value."
        )
        return
    labels = unique_labels(dict(zip(map(int, measured.series_id), measured.label, strict=True)))
    ids = list(labels)
    series_id = st.selectbox(
        "Series", ids, key=url_state(PAGE, "series", ids, ids[0]), format_func=labels.get
    )
    to_url(PAGE, "series", series_id)
    row = measured[measured.series_id == series_id].iloc[0]
    points = query(queries.series_points, (int(series_id),), 2000)
    points = points[points.status == "ok"].dropna(subset=["measured_at"])
    sides = list(dict.fromkeys(side_of(p) for _, p in points.iterrows()))
    if len(sides) < 2:
        st.info("This series was measured at one version (or on one day) only.")
        return
    cols = st.columns(2)
    start = cols[0].selectbox(
        "From", sides, key=url_state(PAGE, "from", sides, sides[0]), format_func=side_name
    )
    end = cols[1].selectbox(
        "To", sides, key=url_state(PAGE, "to", sides, sides[-1]), format_func=side_name
    )
    to_url(PAGE, "from", start)
    to_url(PAGE, "to", end)
    at_start = query(queries.compare_side, *start.split(":", 1), int(series_id))
    at_end = query(queries.compare_side, *end.split(":", 1), int(series_id))
    if at_start.empty or at_end.empty:
        st.info("No measured value at one of these sides.")
        return
    t0, t1 = at_start.measured_at.max(), at_end.measured_at.max()
    if t1 < t0:
        st.caption("From is later than To: shown from the earlier to the later.")
        start, end, at_start, at_end, t0, t1 = end, start, at_end, at_start, t1, t0
    steps = query(queries.series_steps, int(series_id), t0.to_pydatetime(), t1.to_pydatetime())
    v0, v1 = at_start.value.mean(), at_end.value.mean()
    # The steps walk the series only through the values it took between the two points.
    bounds = query(queries.series_range, int(series_id), t0.to_pydatetime(), t1.to_pydatetime())
    rows = compare.attribution(
        v0, v1, steps, start_label=side_name(start), end_label=side_name(end), bounds=bounds
    )
    rows["pr_link"] = pr_links([None] * len(rows), rows.pr_repo, rows.pr_number)
    rows["title"] = rows.title.fillna("") if "title" in rows else ""
    unit, direction = str(row.unit), str(row.direction)
    share = compare.explained(v1 - v0, rows[rows.kind == "step"].delta.sum(), unit)
    figures = figure_row()
    figures.metric("From", f"{v0:.4g} {unit}", width="content")
    figures.metric("To", f"{v1:.4g} {unit}", width="content")
    figures.metric("Change", f"{share.change:+.4g} {unit}", width="content")
    figures.metric(
        "Explained by the steps",
        "—" if share.share is None else f"{share.share:.0%}",
        width="content",
    )
    st.caption(md_escape(compare.worded(v1 / v0, direction, side_name(end), side_name(start))))
    if share.note:
        st.warning(md_escape(share.note))
    cut = rows[rows.cut]
    if not cut.empty:
        st.caption(
            f"{len(cut)} step(s) cut at the edge of the series' own range between the two "
            f"points ({bounds[0]:.4g} to {bounds[1]:.4g} {unit}): the rest of each, as its "
            "record has it, would walk the series where it never was."
        )
    chart = charts.attribution_waterfall(rows, unit, direction)
    st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    if steps.empty:
        st.caption(
            "No change point or milestone falls between these two: the whole change is "
            "unexplained. `python -m perfboard detect` finds a series' steps; a phase table "
            "of the same benchmark, metric and device gives milestones with their PRs."
        )
        return
    st.caption(
        "Steps: the series' change points between the two (each with the first PR that "
        "landed between its sides), and the milestones of phase tables that measure this "
        "series (same benchmark, metric, unit and device, at the series' own magnitude). "
        "Unexplained: the change that no step accounts for (noise, or PRs no record names)."
    )
    shown = rows[rows.kind == "step"].copy()
    shown["line"] = source_lines(shown.source_id, shown.line, shown.measured)
    st.dataframe(
        shown[
            [
                "label",
                "pr_link",
                "via",
                "at",
                "measured",
                "line",
                "delta",
                "recorded",
                "cut",
                "level_from",
                "level_to",
                "title",  # long: last, so that the numbers stay in sight
            ]
        ],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "label": st.column_config.TextColumn("step"),
            "pr_link": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
            "at": st.column_config.DatetimeColumn("at", format="YYYY-MM-DD"),
            "measured": st.column_config.NumberColumn(
                f"read ({unit})",
                format="%.4g",
                help="The value its record was read as: a change point's first measurement"
                " after it, a milestone's row of its phase table",
            ),
            "line": source_line_column(of="that value"),
            "delta": st.column_config.NumberColumn(f"counted ({unit})", format="%+.4g"),
            "recorded": st.column_config.NumberColumn(f"as recorded ({unit})", format="%+.4g"),
            "cut": st.column_config.CheckboxColumn("cut at the range"),
            "level_from": st.column_config.NumberColumn("from", format="%.4g"),
            "level_to": st.column_config.NumberColumn("to", format="%.4g"),
        },
    )


if versions_tab.open:
    with versions_tab:
        two_versions_part()
if pairs_tab.open:
    with pairs_tab:
        paired_variants_part()
if attribution_tab.open:
    with attribution_tab:
        attribution_part()
