"""Overview: the morning look. Headline series, phases against their targets, the latest
PRs and what they did, and how fresh the data is; everything else one click below."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from perfboard import queries
from perfboard.changes import describe_change
from perfboard.links import pr_links, safe_https
from perfboard.queries.labels import MISSING
from perfboard.ui import (
    StoreMissing,
    figure_row,
    missing_store_notice,
    query,
    source_line_column,
    source_lines,
    view_title,
)

SPARK_POINTS = 40


def format_value(value: float | None, unit: str, status: str = "ok") -> str:
    if status != "ok" or value is None or pd.isna(value):
        return status.upper()
    return f"{value:.4g} {unit}"


view_title("Overview")
try:
    totals = query(queries.counts)
except StoreMissing as missing:
    missing_store_notice(str(missing))
    st.stop()

if totals["measurements"] == 0 and totals["phases"] == 0:
    st.info("The database is empty. Ingest documents with `python -m ingest auto PATH`.")
    st.stop()

labels = {
    "projects": "Projects",
    "series": "Series",
    "measurements": "Measurements",
    "phases": "Phases",
    "sources": "Sources",
    "errors": "Ingest errors",
}
figures = figure_row()
for key, label in labels.items():
    n = totals[key]
    figures.metric(label, f"{n / 1e6:.1f} M" if n >= 1_000_000 else f"{n:,}", width="content")
last = query(queries.last_ingest)
# An unrecognised document is one error row (line 0), not a line: said apart.
unread_lines = totals["errors"] - totals["unrecognised"]
st.caption(
    f"Last ingest {last:%Y-%m-%d %H:%M} UTC · {unread_lines:,} lines could not be read"
    f" · {totals['unrecognised']:,} documents held no format perfboard knows"
    " (see Ingest errors below)"
    if last is not None
    else "Nothing ingested yet."
)

st.subheader("Headline series")
headline = query(queries.headline_series, 3)
if headline.empty:
    st.caption("No measured values yet.")
else:
    spark = query(queries.series_points, tuple(int(i) for i in headline.series_id), SPARK_POINTS)
    trends = spark[spark.status == "ok"].groupby("series_id").value.apply(list)
    headline["now"] = [
        format_value(v, u) for v, u in zip(headline.latest, headline.unit, strict=True)
    ]
    headline["vs last week"] = [
        describe_change(v, w, d, cv)
        for v, w, d, cv in zip(
            headline.latest, headline.week_ago, headline.direction, headline.cv, strict=True
        )
    ]
    # One point has nothing to compare with: no change, no trend (not "±0%").
    headline["vs first"] = [
        describe_change(v, f, d, cv) if n > 1 else ""
        for v, f, d, n, cv in zip(
            headline.latest,
            headline.first,
            headline.direction,
            headline.points,
            headline.cv,
            strict=True,
        )
    ]
    headline["trend"] = [
        trends.get(i) if n > 1 else None
        for i, n in zip(headline.series_id, headline.points, strict=True)
    ]
    st.dataframe(
        headline[
            ["project", "series", "now", "vs last week", "vs first", "trend", "points", "last"]
        ],
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            # One neutral colour: the column's colour cannot follow each row's direction
            # (lower is better for a latency, higher for a throughput), and red on every
            # line read as "all worse"; "vs last week" says better or worse in words.
            "trend": st.column_config.LineChartColumn("trend", width="medium", color="#0072B2"),
            # The label at most 400 px (its whole text in the cell's tooltip), the changes
            # wide enough for "+0.7% within noise": auto widths cut both and the trend.
            "series": st.column_config.TextColumn("series", width="large"),
            "vs last week": st.column_config.TextColumn("vs last week", width=130),
            "vs first": st.column_config.TextColumn("vs first", width=130),
            "last": st.column_config.DatetimeColumn("last measured", format="YYYY-MM-DD"),
        },
    )

st.subheader("Phases")
phases = query(queries.phases)
if phases.empty:
    st.caption("No phase tables ingested yet.")
else:
    reached = (phases.baseline - phases.latest) / (phases.baseline - phases.target)
    phases["progress"] = reached.clip(lower=0, upper=1)
    phases["open"] = [f"/phases?phase={int(i)}" for i in phases.phase_id]
    shown = ["name", "project", "owner", "platform", "baseline", "latest", "target"]
    # "To target" only where a phase has a target: a bar of nothing reads as 0 %.
    if phases.progress.notna().any():
        shown.append("progress")
    st.dataframe(
        phases[[*shown, "milestones", "disagreements", "open"]],
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            "progress": st.column_config.ProgressColumn(
                "to target", min_value=0.0, max_value=1.0, format="percent"
            ),
            "disagreements": st.column_config.NumberColumn("reported ≠ computed"),
            "open": st.column_config.LinkColumn("phase", display_text="open"),
        },
    )

st.subheader("Latest pull requests with a measured effect")
prs = query(queries.referenced_prs)
prs = prs[prs.after.notna()].head(5)
if prs.empty:
    st.caption("No PR named by the data yet.")
else:
    prs["PR"] = pr_links(prs.pr_url, prs.pr_repo, prs.pr_number)
    st.dataframe(
        prs[
            ["PR", "phase", "milestone", "before", "after", "unit", "reduction", "reported", "date"]
        ],
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            "PR": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
            "reduction": st.column_config.NumberColumn("measured", format="percent"),
            "date": st.column_config.DateColumn("date", format="YYYY-MM-DD"),
        },
    )

with st.expander("Latest value of every series"):
    latest = query(queries.latest_per_series, None, 2000)
    latest["latest"] = [
        format_value(v, u, s)
        for v, u, s in zip(latest.latest, latest.unit, latest.status, strict=True)
    ]
    latest["source_url"] = latest.source_url.map(safe_https)
    latest["line"] = source_lines(latest.source_id, latest.line)
    st.dataframe(
        latest[
            [
                "project",
                "series",
                "latest",
                "version",
                "measured_at",
                "points",
                "source",
                "line",
                "source_url",
            ]
        ],
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            "series": st.column_config.TextColumn("series", width="large"),
            "version": st.column_config.TextColumn("version", width="small"),
            "measured_at": st.column_config.DatetimeColumn(
                "measured (UTC)", format="YYYY-MM-DD HH:mm"
            ),
            "source_url": st.column_config.LinkColumn("link"),
            "line": source_line_column(),
        },
    )

with st.expander("Ingest errors", expanded=totals["errors"] > 0):
    errors = query(queries.ingest_errors)
    if errors.empty:
        st.caption("No ingest errors: every line of every document was read.")
    else:
        st.dataframe(
            errors,
            hide_index=True,
            width="stretch",
            placeholder=MISSING,
            column_config={
                "raw": st.column_config.TextColumn("raw text", width="large"),
                "seen_at": st.column_config.DatetimeColumn("seen", format="YYYY-MM-DD HH:mm"),
            },
        )
