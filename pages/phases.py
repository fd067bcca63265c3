"""Phases: one optimisation campaign, milestone by milestone, and the PR behind each step."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from perfboard import charts, queries
from perfboard.links import pr_links
from perfboard.markup import md_escape
from perfboard.queries.labels import MISSING
from perfboard.ui import (
    figure_row,
    page_data,
    query,
    source_line_column,
    source_lines,
    to_url,
    url_state,
    view_title,
)

X_AXES = {"order": "milestone order", "date": "record date"}
PAGE = "phases"  # the scope of this page's pickers in the session

view_title("Phases")
phases = page_data(
    queries.phases,
    empty="No phase tables yet. A markdown table with 版本 / P4时间 (ms) / PR columns under a "
    "heading becomes a phase: ingest it with `python -m ingest auto PATH`.",
)

ids = [int(i) for i in phases.phase_id]
names = {
    int(row.phase_id): f"{row.name} · {row.project or 'no project'} · {row.platform or '-'}"
    for row in phases.itertuples()
}
phase_id = st.selectbox(
    "Phase",
    ids,
    key=url_state(PAGE, "phase", ids, ids[0], name_of=names.__getitem__),  # ?phase=99: said
    format_func=names.__getitem__,
)
x_by = st.radio(
    "x axis",
    list(X_AXES),
    key=url_state(PAGE, "x", list(X_AXES), "order"),
    format_func=X_AXES.__getitem__,
    horizontal=True,
)
# The view is its URL: paste it in a PR comment and it opens here.
to_url(PAGE, "phase", phase_id, default=ids[0])
to_url(PAGE, "x", x_by, default="order")

phase = phases[phases.phase_id == phase_id].iloc[0]
table = query(queries.milestones, phase_id)
table["pr_link"] = pr_links(table.pr_url, table.pr_repo, table.pr_number)
measured = table.dropna(subset=["value"])
baseline = measured.value.iloc[0] if not measured.empty else None
latest = measured.value.iloc[-1] if not measured.empty else None
target = None if pd.isna(phase.target) else float(phase.target)  # a "目标：" bullet

st.caption(
    f"Owner: {md_escape(phase.owner or '-')} · Platform: {md_escape(phase.platform or '-')} · "
    f"Software: {md_escape(phase.software or '-')} · Model: {md_escape(phase.benchmark)} · "
    f"Source: {md_escape(phase.source)}"
)
figures = figure_row()  # wraps at 800 px, where four columns cut "12.034 ms" to "12.03..."
unit = phase.unit
figures.metric("Baseline", f"{baseline:g} {unit}" if baseline is not None else "-", width="content")
figures.metric(
    "Latest",
    f"{latest:g} {unit}" if latest is not None else "-",
    delta=f"{latest - baseline:+.3g} {unit}" if latest is not None and baseline else None,
    delta_color="inverse",
    width="content",
)
figures.metric(
    "Speedup vs baseline",
    f"{baseline / latest:.3f}x" if latest and baseline else "-",
    width="content",
)
figures.metric(
    "Target",
    "not set" if target is None else f"{target:g} {unit}",
    delta=(
        None
        if target is None or latest is None
        else (
            "reached"
            if (latest >= target if phase.metric == "throughput" else latest <= target)
            else f"{abs(latest - target):.3g} {unit} to go"
        )
    ),
    delta_color="off",
    delta_arrow="off",
    width="content",
)

if len(measured) < 2:
    st.info("This phase has fewer than two measured milestones: nothing to chart yet.")
else:
    st.subheader(f"{md_escape(phase['name'])}: {md_escape(unit)} after each milestone")
    steps = charts.phase_steps(table, unit, baseline, target, x_by)
    st.altair_chart(charts.themed(steps), width="stretch", theme=None)
    st.caption("Click a point or a PR label to open the PR.")
    st.subheader("What each milestone changed")
    st.altair_chart(charts.themed(charts.phase_waterfall(table, unit)), width="stretch", theme=None)

siblings = phases[phases.project == phase.project]
if len(siblings) > 1 and phase.project:
    with st.expander(f"Every phase of {md_escape(phase.project)} on one time axis"):
        together = query(queries.project_milestones, str(phase.project))
        together["pr_link"] = pr_links(together.pr_url, together.pr_repo, together.pr_number)
        if together.unit.nunique() > 1:
            st.caption("These phases measure in different units: drawn one by one above.")
        else:
            timeline = charts.phases_timeline(together, unit)
            st.altair_chart(charts.themed(timeline), width="stretch", theme=None)

st.subheader("Milestones")
table["flag"] = table.disagrees.map({True: "reported ≠ computed", False: ""})
# What a milestone does not have reads as a dash, not "None".
# (A link cell holds a perfboard-built https link or nothing: never "".)
shown = table.fillna({"pr_title": "—", "description": "—", "reported_speedup_raw": "—"})
shown["line"] = source_lines(shown.source_id, shown.line)  # one click: the row in its table
st.dataframe(
    shown[
        [
            "label",
            "value",
            "line",  # in sight at 800 px, beside the value it opens
            "date",
            "pr_link",
            "pr_title",
            "description",
            "reported_speedup_raw",
            "computed_reduction",
            "speedup",
            "flag",
        ]
    ],
    hide_index=True,
    width="stretch",
    placeholder=MISSING,  # the first row has no PR and nothing to reduce from
    column_config={
        "value": st.column_config.NumberColumn(f"value ({unit})", format="%.4g"),
        "date": st.column_config.DateColumn("date", format="YYYY-MM-DD"),
        "pr_link": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
        "line": source_line_column(),
        "pr_title": st.column_config.TextColumn("PR title"),
        "description": st.column_config.TextColumn("description", width="large"),
        "reported_speedup_raw": "reported",
        "computed_reduction": st.column_config.NumberColumn("computed", format="percent"),
        "speedup": st.column_config.NumberColumn("vs baseline", format="%.3fx"),
    },
)
links = [
    f"[#{int(n)}]({link})"
    for n, link in zip(table.pr_number, table.pr_link, strict=True)
    if isinstance(link, str) and pd.notna(n)  # a missing link is NaN in the frame: truthy
]
if links:
    # Only perfboard-built https links and PR numbers: nothing from the document's text.
    st.markdown("Pull requests in this phase: " + ", ".join(links))
