"""Trends: any series over time, filtered by what the data holds, overlaid to compare."""

from __future__ import annotations

import streamlit as st

from perfboard import charts, queries
from perfboard.links import pr_links
from perfboard.markup import md_escape
from perfboard.queries.labels import series_label
from perfboard.ui import page_data, query, to_url, url_list, url_state, url_value

MAX_SERIES = len(charts.OKABE_ITO)  # more lines than colours is not readable
CHART_POINTS = 4000
FILTERS = {
    "benchmark": "model / op",
    "framework": "framework",
    "device": "device",
    "precision": "precision",
    "batch_size": "batch size",
    "seq_len": "seq len",
    "threads": "threads",
    "stat": "statistic",  # p50, p99, mean ... of one metric: pick two to draw side by side
    "project": "project",
}


X_PARAMS = ("batch_size", "seq_len", "threads")  # besides time and version
PAGE = "trends"  # the scope of this page's pickers in the session


def sort_key(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order (1, 10, 100 after 2), then text."""
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


st.title("Trends")
catalog = page_data(
    queries.series_catalog,
    empty="No series yet: ingest benchmark documents with `python -m ingest auto PATH`.",
)

metrics = sorted(catalog.metric.unique())
metric = st.selectbox(
    "Metric",
    metrics,
    key=url_state(PAGE, "metric", metrics, "latency" if "latency" in metrics else metrics[0]),
)
to_url(PAGE, "metric", metric)
chosen = catalog[catalog.metric == metric]
cols = st.columns(4)
shown_filters = 0
for column, label in FILTERS.items():
    options = sorted((v for v in chosen[column].dropna().astype(str).unique() if v), key=sort_key)
    if len(options) < 2:
        to_url(PAGE, column, None)  # nothing to choose between
        continue
    values = cols[shown_filters % 4].multiselect(
        label, options, key=url_list(PAGE, column, options)
    )
    to_url(PAGE, column, values)
    shown_filters += 1
    if values:
        chosen = chosen[chosen[column].astype(str).isin(values)]
x_choices = ["time", "version"] + [p for p in X_PARAMS if chosen[p].nunique() > 1]
x_by = st.radio(
    "x axis",
    x_choices,
    horizontal=True,
    key=url_state(PAGE, "x", x_choices, "time"),
    format_func=lambda c: c.replace("_", " "),
)
log_scale = st.toggle("Log scale", key=url_value(PAGE, "log", {"1": True, "0": False}.get, False))
to_url(PAGE, "x", x_by)
to_url(PAGE, "log", "1" if log_scale else None)

if chosen.empty:
    st.info("No series matches these filters.")
    st.stop()
by_param = x_by in X_PARAMS
chosen = chosen.copy()
# Along a parameter, the series that differ only in it make one line.
leave_out = (x_by,) if by_param else ()
chosen["series"] = [
    series_label(r.benchmark, r.metric, r.framework, r.device, r.params, leave_out)
    for r in chosen.itertuples()
]
lines = sorted(chosen.series.unique(), key=list(chosen.series).index)
if len(lines) > MAX_SERIES:
    st.caption(
        f"{len(lines)} lines match; the first {MAX_SERIES} are drawn. Narrow the filters "
        "to compare others."
    )
shown = chosen[chosen.series.isin(lines[:MAX_SERIES])]
# A few thousand points in all, however long the histories (aggregated in DuckDB).
per_series = max(100, CHART_POINTS // len(shown))
points = query(queries.series_points, tuple(int(i) for i in shown.series_id), per_series)
points = points.merge(shown[["series_id", "series", *X_PARAMS]], on="series_id")
points["pr_link"] = pr_links([None] * len(points), points.pr_repo, points.pr_number)
ok = points[points.status == "ok"]
units = sorted(u for u in shown.unit.unique() if u is not None)
unit = units[0] if len(units) == 1 else "mixed units"
not_ok = points[points.status != "ok"]
if ok.empty:
    st.info(
        f"These series hold no measured value, only statuses: "
        f"{', '.join(sorted(not_ok.status.unique()))} (e.g. oom: out of GPU memory)."
    )
else:
    # Release tags of the repositories whose commits the plotted versions are, or of the
    # one repository walked: where a step falls against the releases shows at a glance.
    tags = query(queries.releases)
    resolved = set(points.commit_repo.dropna())
    if resolved or tags.repo.nunique() > 1:
        tags = tags[tags.repo.isin(resolved)]
    # Where detection found a step or a drift in these series (perfboard detect, or the
    # ingest's own run): on the time axis, beside the lines.
    changes = query(queries.series_changes, tuple(int(i) for i in shown.series_id))
    changes = changes.merge(shown[["series_id", "series"]], on="series_id")
    chart = charts.trend_lines(ok, metric, unit, log_scale, x_by, releases=tags, changes=changes)
    st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    if x_by == "time" and not changes.empty:
        drifts = int((changes["shape"] == "drift").sum())
        steps = len(changes) - drifts
        st.caption(
            f"Detected: {steps} step{'s' * (steps != 1)} (dashed rules) and {drifts} "
            f"drift{'s' * (drifts != 1)} (bands over the ramp), vermilion when worse, green "
            "when better; Alerts has each with its suspects and triage."
        )
if not not_ok.empty:
    st.caption(
        f"{len(not_ok)} points without a value: "
        + ", ".join(
            f"{md_escape(row.series)} ({row.status})" for row in not_ok.head(5).itertuples()
        )
    )
st.download_button(
    "Download these points (CSV)",
    points.drop(columns=["series_id"]).to_csv(index=False).encode(),
    file_name=f"perfboard-{metric}.csv",
    mime="text/csv",
)
st.subheader("Series")
# Only the parameters these series have: an empty column would read "None" on every row.
params_held = [p for p in X_PARAMS if shown[p].notna().any()]
st.dataframe(
    shown[
        [
            "series",
            *params_held,
            "unit",
            "points",
            "ok_points",
            "first",
            "last",
            "cv",
            "min_effect_pct",
            "too_noisy",
            "testbed",
        ]
    ],
    hide_index=True,
    width="stretch",
    column_config={
        "cv": st.column_config.NumberColumn(
            "noise (cv)", format="percent", help="robust coefficient of variation"
        ),
        "min_effect_pct": st.column_config.NumberColumn(
            "smallest visible step",
            format="%.1f%%",
            help="the smallest step change detection can show on this series at 99% confidence",
        ),
        "too_noisy": st.column_config.CheckboxColumn(
            "noisy",
            help="its smallest visible step is above 10 %: its alerts count as less sure",
        ),
    },
)
