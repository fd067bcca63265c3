"""Explain a change: for an alert, or two points of a model series, the ops that moved in
the profiles of a run on either side, the passes that started or stopped firing, and the
PRs that landed in between, as one short ranked list."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from perfboard import alerts, explain, profiles, queries
from perfboard.links import pr_links
from perfboard.markup import md_escape, short_version
from perfboard.profile_views import diff_view, run_view
from perfboard.queries.labels import MISSING, unique_labels
from perfboard.ui import (
    StoreMissing,
    missing_store_notice,
    query,
    to_url,
    url_reset,
    url_state,
    url_text,
    view_title,
)

PAGE = "explain"  # the scope of this page's pickers in the session

view_title("Explain a change")
try:
    found = query(queries.alerts)
    catalog = query(queries.series_catalog)
except StoreMissing as missing:
    missing_store_notice(str(missing))
    st.stop()
runs = query(queries.profile_runs)

modes = ["an alert", "two points of a series"]
# The link names an alert or a series; without either, an alert when there is one.
asked_mode = 0 if url_text("alert") or (not url_text("series") and not found.empty) else 1
mode = st.radio("Explain", modes, index=asked_mode, horizontal=True)

# -- the change: project, benchmark and the two sides --------------------------------------
if mode == "an alert":
    if found.empty:
        st.info(
            "No alert yet: `python -m perfboard detect` finds change points; or explain two "
            "points of a series."
        )
        st.stop()
    # Opened on the alert with most to go on: PRs between its sides first, then as the
    # Alerts page ranks (not noise, size x confidence). Not the newest: that may be a
    # change with nothing to explain it (the demo's simulated leak).
    ordered = alerts.ranked(found).assign(anything=found.prs_between > 0)
    ordered = ordered.sort_values(
        ["anything", "within_noise", "score"], ascending=[False, True, False], kind="stable"
    )
    keys = list(ordered.alert_key)
    labels = {
        a.alert_key: f"{a.kind} {a.largest_pct:+.1f}% · {a.project} · "
        f"{short_version(a.before_version)} → {short_version(a.after_version)}"
        for a in found.itertuples()
    }
    key = st.selectbox(
        "Alert", keys, key=url_state(PAGE, "alert", keys, keys[0]), format_func=labels.get
    )
    to_url(PAGE, "alert", key)
    to_url(PAGE, "series", None)
    alert = found.set_index("alert_key").loc[key]
    changes = query(queries.alert_changes, key)
    largest = changes.iloc[0]
    series_row = catalog[catalog.series_id == largest.series_id].iloc[0]
    project, benchmark = str(alert.project), str(series_row.benchmark)
    before_version, after_version = largest.before_version, largest.after_version
    before_at, after_at = largest.before_at, largest.after_at
    before_value, after_value, unit = largest.before, largest.after, largest.unit
    what = str(largest.series)
else:
    measured = catalog[catalog.ok_points >= 2]
    if measured.empty:
        st.info("No series has two measured points yet.")
        st.stop()
    # Labelled once: the picker calls format_func for every option on every run, and a
    # lookup per option (set_index + loc) took 13 s a run on 10,000 series (issue 7).
    series_labels = unique_labels(
        dict(zip(map(int, measured.series_id), measured.label, strict=True))
    )
    ids = list(series_labels)
    series_id = st.selectbox(
        "Series",
        ids,
        key=url_state(PAGE, "series", ids, ids[0]),
        format_func=series_labels.__getitem__,
    )
    points = query(queries.series_points, (int(series_id),), 2000)
    points = points[points.status == "ok"].reset_index(drop=True)
    point_labels = [
        f"{p.measured_at:%Y-%m-%d %H:%M} · {p.version or 'no version'} · {p.value:.4g}"
        if pd.notna(p.measured_at)
        else f"undated · {p.version or 'no version'} · {p.value:.4g}"
        for p in points.itertuples()
    ]
    cols = st.columns(2)
    first = cols[0].selectbox(
        "From", range(len(points)), index=0, format_func=point_labels.__getitem__
    )
    last = cols[1].selectbox(
        "To", range(len(points)), index=len(points) - 1, format_func=point_labels.__getitem__
    )
    first, last = sorted((first, last))
    to_url(PAGE, "series", series_id)
    to_url(PAGE, "alert", None)
    series_row = catalog[catalog.series_id == series_id].iloc[0]
    project, benchmark = str(series_row.project), str(series_row.benchmark)
    a, b = points.iloc[first], points.iloc[last]
    before_version, after_version = a.version, b.version
    before_at, after_at = a.measured_at, b.measured_at
    before_value, after_value, unit = a.value, b.value, series_row.unit
    what = series_labels[series_id]
# A point without a version comes out of a frame as NaN (pandas' missing text), which is
# truthy and binds as a DOUBLE: suspects_between's lower($v0) then raised (issue 7).
before_version, after_version = (
    v if isinstance(v, str) else None for v in (before_version, after_version)
)

change = (after_value - before_value) / before_value * 100 if before_value else math.nan
cols = st.columns(3)
# A tooltip is markdown, and a version is text from a document: escaped.
cols[0].metric("Before", f"{before_value:.4g} {unit}", help=md_escape(before_version or ""))
cols[1].metric("After", f"{after_value:.4g} {unit}", help=md_escape(after_version or ""))
cols[2].metric("Change", f"{change:+.1f}%" if not math.isnan(change) else "–")
st.caption(
    f"{md_escape(what)}: {md_escape(short_version(before_version))}"
    f" → {md_escape(short_version(after_version))}"
)

# -- the evidence ----------------------------------------------------------------------------
pick_a, pick_b = explain.pick_runs(runs, project, benchmark, before_at, after_at)
run_keys = [profiles.run_key(int(r.source_id), int(r.run)) for r in runs.itertuples()]
run_labels = {
    profiles.run_key(int(r.source_id), int(r.run)): (
        f"{pd.Timestamp(r.date):%Y-%m-%d}" if pd.notna(r.date) else "undated"
    )
    + f" · {r.label or r.title or r.uri}"
    for r in runs.itertuples()
}
choices = ["", *run_keys]  # "": none (a selectbox at None shows "Choose an option")
picked = tuple(profiles.run_key(*pick.key) if pick.key else None for pick in (pick_a, pick_b))
# Another change with other nearest profiles: those are the runs again, whatever was
# picked for the last change (a link's run=/vs= still open the runs it names).
if st.session_state.get(f"{PAGE}:picked") != picked:
    st.session_state[f"{PAGE}:picked"] = picked
    url_reset(PAGE, "run", "vs")
cols = st.columns(2)
chosen = []
for col, side, pick, default, param in (
    (cols[0], "A (before)", pick_a, picked[0], "run"),
    (cols[1], "B (after)", pick_b, picked[1], "vs"),
):
    key = col.selectbox(
        f"Profile run {side}",
        choices,
        key=url_state(PAGE, param, choices, default or ""),
        format_func=lambda k: run_labels[k] if k else "none",
        help="Picked: the nearest dated profile of this project on that side of the change.",
    )
    if not key:
        col.caption(md_escape(pick.note))
    to_url(PAGE, param, key)
    chosen.append(key)

suspects = query(queries.suspects_between, before_version, after_version, before_at, after_at)
op_diff = passes_diff = None
run_total = math.nan
if chosen[0] and chosen[1]:
    (sa, ra), (sb, rb) = (profiles.parse_run_key(k) for k in chosen)
    diffed, view_a = query(diff_view, sa, ra, sb, rb), query(run_view, sa, ra)
    op_diff, passes_diff = diffed.rows, diffed.passes
    run_total = view_a.totals[view_a.main].total if view_a.main in view_a.totals else math.nan
    # Run keys are "SOURCE:RUN" made by profiles.run_key: nothing in them to escape.
    st.markdown(f"[The whole diff of the two profiles](/profiles?run={chosen[0]}&vs={chosen[1]})")

ranked = explain.reasons(suspects, op_diff, passes_diff, run_total)
st.subheader("What to look at, most likely first")
if ranked.empty:
    st.info(
        "Nothing to go on: no PR is known to have landed between these two points, and "
        "there is no profile on both sides. Sync the PRs (`python -m ingest github-prs "
        "--all`), walk the repository (`python -m ingest git`), or ingest a profile of a "
        "run on each side."
    )
    st.stop()
ranked["link"] = pr_links([None] * len(ranked), ranked.pr_repo, ranked.pr_number)
st.dataframe(
    # The PR beside its kind: last, after two wide columns, it was scrolled out of sight
    # at 1440 px.
    ranked[["rank", "kind", "link", "what", "how_much", "evidence"]],
    hide_index=True,
    placeholder=MISSING,
    width="stretch",
    column_config={
        "what": st.column_config.TextColumn("what", width="large"),
        "how_much": st.column_config.TextColumn("how much"),
        "evidence": st.column_config.TextColumn("evidence", width="large"),
        "link": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
    },
)
if op_diff is None:
    st.caption(
        "No profile on both sides: only the PRs in between are listed. A profiler report of "
        "a run before and one after adds the ops and passes that moved."
    )
