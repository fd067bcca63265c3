"""Trends: any series over time, filtered by what the data holds, overlaid to compare."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from perfboard import charts, queries
from perfboard.links import pr_links
from perfboard.markup import md_escape
from perfboard.queries.labels import MISSING, params_text, series_label
from perfboard.ui import (
    page_data,
    provenance,
    query,
    to_url,
    url_list,
    url_reset,
    url_state,
    url_value,
    view_title,
)

MAX_SERIES = len(charts.OKABE_ITO)  # more lines than colours is not readable
CHART_POINTS = 2000  # 250 a line when eight are drawn: a point every 5 px of a wide chart
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


def date_range(text: str) -> tuple[dt.date, dt.date] | None:
    """The URL's `dates` (2020-01-06..2020-02-10) as the date picker's range."""
    start, _, end = text.partition("..")
    first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    return (first, last) if first <= last else None


def noise_of(series: pd.DataFrame, ok: pd.DataFrame) -> pd.DataFrame:
    """Each drawn series' usual level and noise (series_noise, from detection) over the
    time its drawn points span: the chart's noise bands."""
    spans = ok.groupby("series_id").measured_at.agg(first="min", last="max").reset_index()
    noise = series[["series_id", "series", "noise_level", "cv"]].rename(
        columns={"noise_level": "level"}
    )
    return noise.merge(spans, on="series_id").dropna(subset=["level", "cv"])


def series_table(shown: pd.DataFrame) -> pd.DataFrame:
    """The drawn series as the Series table shows them: headed in words, each value as
    read ("—" where there is none; Markdown escaped), and only the parameters some series
    has (an empty column would read "—" on every row)."""
    held = [p for p in X_PARAMS if shown[p].notna().any()]

    def text(values: pd.Series, shown_as: Callable[[Any], str] = str) -> list[str]:
        return [MISSING if pd.isna(v) else shown_as(v) for v in values]

    table = {"series": list(shown.series)}
    table |= {p.replace("_", " "): text(shown[p]) for p in held}
    table |= {
        "unit": text(shown.unit),
        "points": text(shown.points, "{:,}".format),
        "measured": text(shown.ok_points, "{:,}".format),
        "first": text(shown["first"], lambda t: f"{t:%Y-%m-%d}"),
        "last": text(shown["last"], lambda t: f"{t:%Y-%m-%d}"),
        "noise (cv)": text(shown.cv, "{:.2%}".format),
        "smallest visible step": text(shown.min_effect_pct, "{:.1f} %".format),
        # Too few points to measure noise: detection counts the series as unsure.
        "noisy": [
            "too few points" if pd.isna(step) else "yes" if noisy else "no"
            for step, noisy in zip(shown.min_effect_pct, shown.too_noisy, strict=True)
        ],
        "testbed": [params_text(t) or MISSING for t in shown.testbed],  # stored as JSON
    }
    # st.table reads each cell as Markdown: a label is data, shown as written (an image
    # in a benchmark's name would be fetched).
    return pd.DataFrame({head: [md_escape(v) for v in cells] for head, cells in table.items()})


def milestone_prs(series: pd.DataFrame) -> pd.DataFrame:
    """The PRs of the phase milestones of these series' projects, as the chart marks
    them on a time axis: the step a phase table says each PR made."""
    found = []
    for project in sorted(series.project.dropna().unique()):
        rows = query(queries.project_milestones, str(project))
        found.append(rows[rows.pr_number.notna()])
    if not found:
        return pd.DataFrame()
    rows = pd.concat(found, ignore_index=True)
    rows = rows.assign(
        measured_at=pd.to_datetime(rows.date),
        pr=rows.pr_number.map(lambda n: f"#{int(n)}"),
        title=None,
        what=[
            f"{phase}: milestone {label}"
            for phase, label in zip(rows.phase, rows.label, strict=True)
        ],
        pr_link=pr_links(rows.pr_url, rows.pr_repo, rows.pr_number),
    )
    return rows.drop_duplicates(subset=["pr", "measured_at"])


view_title("Trends")
catalog = page_data(
    queries.series_catalog,
    empty="No series yet: ingest benchmark documents with `python -m ingest auto PATH`.",
)

metrics = sorted(catalog.metric.unique())
default_metric = "latency" if "latency" in metrics else metrics[0]
# The pickers side by side, as many to a row as the window holds (in four fixed columns
# an 800 px window cut a picked model to "e. ×"), and the chart under them: one under
# another, they pushed the chart below the fold of a 1440 x 900 window.
filters = st.container(horizontal=True, wrap=True)
metric = filters.selectbox(
    "Metric", metrics, key=url_state(PAGE, "metric", metrics, default_metric), width=240
)
to_url(PAGE, "metric", metric, default=default_metric)
if st.session_state.get(f"{PAGE}:metric:drawn", metric) != metric:
    url_reset(PAGE, "benchmark", "lines")  # another metric: its own model and lines
st.session_state[f"{PAGE}:metric:drawn"] = metric
chosen = catalog[catalog.metric == metric]
# One model by default, the most measured one: BERT and ERNIE on one axis answer nothing.
by_model = (  # ties: the first by name (groupby sorts them so)
    chosen.groupby("benchmark")["ok_points"].sum().sort_values(ascending=False, kind="stable")
)
default_model = [str(by_model.index[0])] if len(by_model) > 1 else []
for column, label in FILTERS.items():
    options = sorted((v for v in chosen[column].dropna().astype(str).unique() if v), key=sort_key)
    if len(options) < 2:
        to_url(PAGE, column, None)  # nothing to choose between
        continue
    default = default_model if column == "benchmark" else ()
    values = filters.multiselect(
        label,
        options,
        key=url_list(PAGE, column, options, default),
        placeholder="every one",
        width=240,
    )
    to_url(PAGE, column, values, default=list(default))
    if values:
        chosen = chosen[chosen[column].astype(str).isin(values)]
x_choices = ["time", "version"] + [p for p in X_PARAMS if chosen[p].nunique() > 1]
view = st.container(horizontal=True, wrap=True, vertical_alignment="bottom", gap="medium")
x_by = view.radio(
    "x axis",
    x_choices,
    horizontal=True,
    key=url_state(PAGE, "x", x_choices, "time"),
    format_func=lambda c: c.replace("_", " "),
)
log_scale = view.toggle("Log scale", key=url_value(PAGE, "log", {"1": True, "0": False}.get, False))
to_url(PAGE, "x", x_by, default="time")
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
# A line is named by its first series' id in the URL: its label is long, its ids many.
line_ids = chosen.groupby("series", sort=False).agg(
    line=("series_id", "min"), ok_points=("ok_points", "sum")
)
label_of = {int(row.line): name for name, row in line_ids.iterrows()}
ids = list(label_of)
# The longest histories first: a series measured once is a dot, not a trend.
ranked = line_ids.sort_values("ok_points", ascending=False, kind="stable")
longest = ranked[ranked.ok_points >= 2] if (ranked.ok_points >= 2).any() else ranked
default_lines = [int(i) for i in longest.line[:MAX_SERIES]]
picked = st.multiselect(
    "Lines drawn",
    ids,
    key=url_list(PAGE, "lines", ids, default_lines),
    format_func=label_of.__getitem__,
    max_selections=MAX_SERIES,
    placeholder="the longest histories",
    help=f"At most {MAX_SERIES} of the lines these filters match. In the chart, click a "
    "legend entry to show that line alone (shift-click for more), scroll to zoom in on "
    "time, drag to pan, double-click to reset.",
)
to_url(PAGE, "lines", picked if picked != default_lines else None)
drawn = set(picked or default_lines)
shown = chosen[chosen.series.map(lambda name: int(line_ids.line[name]) in drawn)]
# A few thousand points in all, however long the histories (aggregated in DuckDB).
per_series = max(100, CHART_POINTS // len(shown))
points = query(queries.series_points, tuple(int(i) for i in shown.series_id), per_series)
points = points.merge(shown[["series_id", "series", *X_PARAMS]], on="series_id")
if x_by == "time" and not points.empty:
    # The dates drawn: the picker narrows the time axis (the wheel zooms within it).
    first, last = points.measured_at.min().date(), points.measured_at.max().date()
    picked_dates = view.date_input(
        "Dates",
        key=url_value(
            PAGE,
            "dates",
            date_range,
            (first, last),
            lambda v: isinstance(v, tuple) and all(first <= d <= last for d in v),
        ),
        min_value=first,
        max_value=last,
        format="YYYY-MM-DD",
        width=260,
    )
    # While a range is being picked the widget holds its first day only.
    start, end = (*picked_dates, last)[:2] if picked_dates else (first, last)
    everything = (start, end) == (first, last)
    to_url(PAGE, "dates", None if everything else f"{start}..{end}")
    within = points.measured_at.dt.date.between(start, end)
    points = points[within]
points["pr_link"] = pr_links([None] * len(points), points.pr_repo, points.pr_number)
ok = points[points.status == "ok"]
older = 0
if by_param:
    # Along a parameter, each line's newest value at each of its values: a history measured
    # at one batch size drew a column of dots, and the line went up and down it.
    newest = ok.sort_values("measured_at", kind="stable", na_position="first")
    newest = newest.drop_duplicates(["series", x_by], keep="last").sort_index()
    older, ok = len(ok) - len(newest), newest
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
    chart = charts.trend_lines(
        ok,
        metric,
        unit,
        log_scale,
        x_by,
        releases=tags,
        changes=changes,
        noise=noise_of(shown, ok),
        statuses=not_ok,
        prs=milestone_prs(shown),
        interactive=True,
    )
    event = st.altair_chart(
        charts.themed(chart),
        width="stretch",
        theme=None,
        on_select="rerun",
        selection_mode=charts.CLICKED_POINT,  # not the legend or the zoom: no rerun for those
        key=f"{PAGE}-chart",
    )
    notes = [
        "Click a point to see the line it was read from (a PR's point opens the PR too); "
        "click a legend entry to show that line alone; scroll to zoom, drag to pan."
    ]
    if x_by == "time":
        notes.append("Pale bands: each line's usual level ± twice its noise (robust cv).")
    if older:
        along = x_by.replace("_", " ")
        notes.append(
            f"Each line's newest value at each {along}: {older} older measurements are"
            " not drawn (x axis time shows them)."
        )
    if not not_ok.empty:
        notes.append("Crosses along the bottom: runs that ran out of memory (no value).")
    st.caption(" ".join(notes))
    clicked = (event.selection or {}).get(charts.CLICKED_POINT) or []
    if clicked and clicked[0].get("source_id") is not None:
        point = clicked[0]
        many = (point.get("points") or 1) > 1
        st.subheader("Where this point comes from")
        if many:
            st.caption(
                f"This point is the median of {int(point['points'])} measurements; the newest"
                " of them is shown. Zoom in (or pick fewer dates) to see each one."
            )
        # Its series: a line may hold the values of many (a row of variants, a JSON
        # record of a whole run), and a median point has no value of its own to match.
        provenance(
            int(point["source_id"]),
            int(point["line"]),
            None if many else point.get("value"),
            series_id=point.get("series_id"),
        )
    if x_by == "time" and not changes.empty:
        drifts = int((changes["shape"] == "drift").sum())
        steps = len(changes) - drifts
        bands = (  # charts.change_marks: one line's bands at a time when several are drawn
            "bands over the ramp of the line picked in the legend"
            if ok.series.nunique() > 1
            else "bands over the ramp"
        )
        st.caption(
            f"Detected: {steps} step{'s' * (steps != 1)} (dashed rules) and {drifts} "
            f"drift{'s' * (drifts != 1)} ({bands}), vermilion when worse, green "
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
    # Written when the button is pressed: 50 ms of every run for 4,000 points otherwise.
    lambda: points.drop(columns=["series_id"]).to_csv(index=False).encode(),
    file_name=f"perfboard-{metric}.csv",
    mime="text/csv",
)
st.subheader("Series")
# A plain table: the interactive grid's code is the largest the browser compiles for this
# page, and it was drawn before the chart above it, which came 0.1-0.2 s later for it on
# the 10 M store; for a few rows that need no sorting.
st.table(series_table(shown), hide_index=True)
st.caption(
    "Measured: points with a value (the others hold a status, e.g. OOM). Noise: the robust "
    "coefficient of variation. Smallest visible step: the smallest step change detection "
    "can show on the series at 99 % confidence; noisy when it is above 10 % (its alerts "
    "count as less sure)."
)
