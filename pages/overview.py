"""Overview: what the store holds, and the latest value of every series."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from perfboard import queries
from perfboard.links import pr_url, safe_https
from perfboard.markup import md_escape
from perfboard.ui import StoreMissing, missing_store_notice, query


def describe_params(params: str) -> str:
    """'{"batch_size":1,"precision":"int8"}' -> 'batch_size=1, precision=int8'."""
    values = json.loads(params) if params else {}
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "-"


def format_value(value: float | None, unit: str, status: str) -> str:
    if status != "ok" or value is None or pd.isna(value):
        return status.upper()
    return f"{value:.6g} {unit}"


st.title("Overview")
try:
    totals = query(queries.counts)
except StoreMissing as missing:
    missing_store_notice(str(missing))
    st.stop()

if totals["measurements"] == 0 and totals["phases"] == 0:
    st.info("The database is empty. Ingest documents with `python -m ingest auto PATH`.")
    st.stop()

cols = st.columns(6)
for col, (label, key) in zip(
    cols,
    [
        ("Projects", "projects"),
        ("Series", "series"),
        ("Measurements", "measurements"),
        ("Phases", "phases"),
        ("Sources", "sources"),
        ("Ingest errors", "errors"),
    ],
    strict=True,
):
    col.metric(label, f"{totals[key]:,}")

st.subheader("Projects")
st.dataframe(query(queries.projects), hide_index=True, width="stretch")

st.subheader("Phases")
phases = query(queries.phases)
if phases.empty:
    st.caption("No phase tables ingested yet.")
for phase in phases.itertuples():
    # Names from documents are shown as text (perfboard.markup): labels are markdown.
    header = " · ".join(
        md_escape(x) for x in (phase.name, phase.project or "no project", phase.benchmark)
    )
    with st.expander(header, expanded=True):
        st.caption(
            f"Owner: {md_escape(phase.owner or '-')} · Platform: {md_escape(phase.platform or '-')}"
            f" · Software: {md_escape(phase.software or '-')} · Source: {md_escape(phase.source)}"
        )
        table = query(queries.milestones, int(phase.phase_id))
        table["PR"] = [
            safe_https(url) or pr_url(repo, number)
            for url, repo, number in zip(table.pr_url, table.pr_repo, table.pr_number, strict=True)
        ]
        table["flag"] = table.disagrees.map({True: "reported ≠ computed", False: ""})
        st.dataframe(
            table[
                [
                    "label",
                    "value",
                    "date",
                    "PR",
                    "description",
                    "reported_speedup_raw",
                    "computed_reduction",
                    "computed_speedup",
                    "flag",
                ]
            ],
            hide_index=True,
            width="stretch",
            column_config={
                "value": st.column_config.NumberColumn(f"value ({phase.unit})", format="%.4g"),
                "date": st.column_config.DateColumn("date", format="YYYY-MM-DD"),
                "description": st.column_config.TextColumn("description", width="large"),
                "PR": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
                "reported_speedup_raw": "reported",
                "computed_reduction": st.column_config.NumberColumn(
                    "computed reduction", format="percent"
                ),
                "computed_speedup": st.column_config.NumberColumn(
                    "computed speedup", format="%.3fx"
                ),
            },
        )

st.subheader("Latest value per series")
latest = query(queries.latest_per_series, None, 2000)
if latest.empty:
    st.caption("No measurements yet.")
else:
    latest["params"] = latest.params.map(describe_params)
    latest["latest"] = [
        format_value(v, u, s)
        for v, u, s in zip(latest.latest, latest.unit, latest.status, strict=True)
    ]
    latest["source_url"] = latest.source_url.map(safe_https)
    st.dataframe(
        latest[
            [
                "project",
                "benchmark",
                "metric",
                "params",
                "framework",
                "device",
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
        width="stretch",
        column_config={
            "version": st.column_config.TextColumn("version", width="small"),
            "measured_at": st.column_config.DatetimeColumn(
                "measured (UTC)", format="YYYY-MM-DD HH:mm"
            ),
            "source_url": st.column_config.LinkColumn("link"),
        },
    )

st.subheader("Sources")
sources = query(queries.sources).drop(columns=["source_id"])
sources["url"] = sources.url.map(safe_https)
st.dataframe(
    sources,
    hide_index=True,
    width="stretch",
    column_config={"url": st.column_config.LinkColumn("link")},
)

st.subheader("Ingest errors")
errors = query(queries.ingest_errors)
if errors.empty:
    st.caption("None: every line of every document was read.")
else:
    st.dataframe(errors, hide_index=True, width="stretch")
