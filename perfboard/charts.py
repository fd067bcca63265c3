"""Pure Altair builders: a DataFrame in, a chart out; no Streamlit, no queries.

Rules every chart keeps: axes carry their units; colours come from the Okabe-Ito
palette (distinguishable with every common colour-vision deficiency); Chinese labels
name a CJK font first; every point that has a PR carries an href to it (clicking opens
the PR, in a new tab: perfboard.ui.open_links_in_new_tabs), built by perfboard.links, never
taken from the data; time axes carry the year; a tooltip lists only the fields a point has
a value for (tooltip()).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd
from altair.utils import schemapi

from perfboard.changes import NOISE_BAND_CVS

# Okabe & Ito (2008): safe for protanopia, deuteranopia and tritanopia.
OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
# A point links to its PR; a point without one links nowhere (a plain "pr_link:N" makes
# static renderers write a link to "null" resolved against their base URL).
# Channels with a condition are made as their classes, not with alt.condition: encode()
# reads alt.condition's plain dict back through the schema (6.6 ms a channel; the weekly
# report's charts took 0.08 s for it, and every Phases and Trends run paid it too).
PR_HREF = alt.HrefValue(
    value=None,
    condition={"test": "isValid(datum.pr_link)", "field": "pr_link", "type": "nominal"},
)
CLICKED_POINT = "point"  # the selection a click on a chart's point makes (its source, line)
LEGEND_PICK = "picked"  # the series a click on a trend chart's legend shows alone
MEASURED, BASELINE, TARGET, GAIN, LOSS = "#0072B2", "#7F7F7F", "#009E73", "#009E73", "#D55E00"
FONT = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, Microsoft YaHei, sans-serif"
PR_MARK, OOM_MARK = "#56B4E9", "#D55E00"

# Every time axis names the year: a day as 2020-02-04, with its hour only when a tick has
# one (zoomed in). Vega's own multi-format labels read "Feb 04", a day of no year.
TIME_LABELS = (
    "timeFormat(datum.value, hours(datum.value) || minutes(datum.value)"
    " ? '%Y-%m-%d %H:%M' : '%Y-%m-%d')"
)
# A field no frame has: reading it gives undefined, which a tooltip leaves out (Vega's
# expressions have no `undefined` of their own).
_ABSENT = "datum['no such field: left out']"


def time_axis(title: str | None = None) -> alt.Axis:
    """The axis of a time scale: labels with the year, spaced so that they do not overlap,
    and a label within 40 px of either end aligned inward (a date centred on a tick at
    the right edge was cut to "2020-0" at 800 px)."""
    return alt.Axis(
        title=title,
        labelExpr=TIME_LABELS,
        labelOverlap=True,
        labelSeparation=6,  # 0 by default: "2020-02-032020-02-11", touching, was kept
        labelAngle=0,
        labelFlush=40,
    )


def tooltip(
    entries: Sequence[tuple[str, str] | tuple[str, str, str]], data: pd.DataFrame | None = None
) -> dict[str, str]:
    """A mark's tooltip (pass it as the mark's `tooltip=`) that lists only the fields a
    point has a value for: no "PR title null", no "undefined", no empty row.

    Each entry is (field with its type, title) or (field, title, format), the type as
    Altair writes it ("value:Q", "date:T", "pr:N"); a format is d3's (".4g",
    "%Y-%m-%d"). Vega-Lite's own tooltip channel writes a missing value as "null".

    With the mark's `data`, a field no point has a value for is left out of the tooltip,
    and one every point has a value for is shown without the test: the browser evaluates
    the tooltip of every point as it draws the chart, through Vega's expression
    interpreter, whether or not the pointer ever comes near it.
    """
    parts = []
    for entry in entries:
        field, kind = entry[0].rsplit(":", 1)
        held = _held(data, field)
        if held == "none":
            continue
        value = f"datum[{json.dumps(field)}]"
        fmt = json.dumps(entry[2]) if len(entry) > 2 else None
        if kind == "Q" and fmt:
            shown = f"format({value}, {fmt})"
        elif kind == "T":
            shown = f"timeFormat({value}, {fmt or json.dumps('%Y-%m-%d %H:%M')})"
        else:
            shown = value
        if held == "some":
            shown = f"isValid({value}) && {value} !== '' ? {shown} : {_ABSENT}"
        parts.append(f"{json.dumps(entry[1])}: {shown}")
    return {"expr": "{" + ", ".join(parts) + "}"}


def _held(data: pd.DataFrame | None, field: str) -> str:
    """Whether "all", "none" or only "some" rows of `data` have a value (not missing, not
    empty text) in `field`; "some" when `data` is not known."""
    if data is None or field not in data.columns:
        return "some"
    values = data[field]
    missing = values.isna()
    if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values)):
        missing |= values.astype(str).eq("")
    return "none" if missing.all() else "all" if not missing.any() else "some"


def themed(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Fonts that draw Chinese, quiet grid, readable label sizes; drawn unchecked (below).

    The chart itself is themed and returned. Altair's configure() copies a chart, and a
    layered chart's copy combines every layer's parameters again and checks the result:
    four of them were 40 ms of a Trends run, whose chart has ten layers."""
    chart.config = alt.Config(
        font=FONT,
        axis=alt.AxisConfig(labelFontSize=12, titleFontSize=13, gridOpacity=0.4),
        legend=alt.LegendConfig(labelFontSize=12, titleFontSize=12),
        view=alt.ViewConfig(strokeOpacity=0),
    )
    return chart if CHECK_SPECS else _unchecked(chart)


def theme_config() -> dict[str, Any]:
    """The config themed() gives a chart, as a dict (for a spec made without Altair)."""
    return themed(alt.Chart()).to_dict(validate=False)["config"]


# Streamlit draws a chart with chart.to_dict(), which checks the whole spec against
# Vega-Lite's JSON schema: 25-30 % of a run of Phases or Trends, inside a lock every
# session's charts share (streamlit's _altair_globals_lock). The specs are perfboard's own
# and the same on every run; they are checked wherever the tests draw them (tests/conftest.py
# sets PERFBOARD_CHECK_CHART_SPECS, and the browser tests' server inherits it), and a
# server draws them unchecked.
# The same holds for Altair's check of each part as it is made (its "debug mode": 15-20 %
# of a Phases run), switched off for the process with the whole spec's.
CHECK_SPECS = os.environ.get("PERFBOARD_CHECK_CHART_SPECS") == "1"
if not CHECK_SPECS:
    schemapi.disable_debug_mode()
_UNCHECKED: dict[type, type] = {}


def _unchecked(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The chart, whose to_dict() skips the schema check (a subclass of its own class, so
    Altair's copies of it skip it too)."""
    kind = type(chart)
    unchecked = _UNCHECKED.get(kind)
    if unchecked is None:

        def to_dict(self: alt.TopLevelMixin, *args: Any, **kwargs: Any) -> dict:
            return kind.to_dict(self, *args, **{**kwargs, "validate": False})

        unchecked = _UNCHECKED[kind] = type(kind.__name__, (kind,), {"to_dict": to_dict})
    object.__setattr__(chart, "__class__", unchecked)
    return chart


def phase_steps(
    milestones: pd.DataFrame,
    unit: str,
    baseline: float | None,
    target: float | None,
    x_by: str = "order",
) -> alt.LayerChart:
    """The measured value after each milestone as steps, labelled with its PR.

    `milestones` columns: ordinal, label, value, date, pr_number, pr_link, pr_title (None
    when not known), description, speedup (cumulative vs baseline). `x_by`: "order"
    (milestone order, one step each, evenly spaced) or "date" (the record date: time
    between milestones shows).
    """
    data = milestones.dropna(subset=["value"]).copy()
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    data["step"] = data["label"].astype(str)
    if x_by == "date":
        x = alt.X("date:T", title="record date", axis=alt.Axis(format="%Y-%m-%d"))
    else:
        x = alt.X(
            "step:N",
            title="milestone",
            sort=alt.SortField("ordinal"),
            axis=alt.Axis(labelAngle=0),
        )
    y = alt.Y("value:Q", title=f"latency ({unit})", scale=alt.Scale(zero=False, padding=12))
    tips = tooltip(
        [
            ("step:N", "milestone"),
            ("value:Q", f"value ({unit})", ".4g"),
            ("date:T", "date", "%Y-%m-%d"),
            ("pr:N", "PR"),
            ("pr_title:N", "PR title"),
            ("release:N", "first release with it"),
            ("speedup:Q", "speedup vs baseline", ".3f"),
            ("description:N", "description"),
        ]
    )
    base = alt.Chart(data).encode(x=x, y=y)
    line = base.mark_line(interpolate="step-after", color=MEASURED, strokeWidth=2.5)
    points = base.mark_point(
        filled=True, size=90, color=MEASURED, cursor="pointer", tooltip=tips
    ).encode(href=PR_HREF)
    # PR labels right of their points, on the side of the level away from the step's riser
    # (below a step down, above a step up): clear of the riser and of the level's own line.
    # Two layers with a fixed dy each: a yOffset channel is for a band scale, and
    # Vega-Lite drops it on a continuous y (with a warning in the console).
    above = ~(data["value"] < data["value"].shift(1))  # the first: above
    # The last milestone's label left of its point: right of it, it ran off the chart.
    along = "date" if x_by == "date" else "ordinal"
    last = data[along] == data[along].max()
    with_pr = data.pr != ""
    # Split here, not by a filter transform: an empty layer's y extent warns in the console.
    sides = [
        (data[with_pr & (above if up else ~above) & (last if end else ~last)], up, end)
        for up in (True, False)
        for end in (False, True)
    ]
    labels = [
        alt.Chart(side)
        .mark_text(
            align="right" if end else "left",
            baseline="bottom" if up else "top",
            dx=-8 if end else 8,
            dy=-6 if up else 6,
            fontSize=12,
            color="#333333",
            cursor="pointer",
            tooltip=tips,
        )
        .encode(x=x, y=y, text="pr:N", href=PR_HREF)
        for side, up, end in sides
        if not side.empty
    ]
    layers: list[alt.Chart] = [line, points, *labels]
    for level, name, color in ((baseline, "baseline", BASELINE), (target, "target", TARGET)):
        if level is None or pd.isna(level):
            continue
        rule = pd.DataFrame({"y": [level], "name": [f"{name} {level:g} {unit}"]})
        layers.append(
            alt.Chart(rule)
            .mark_rule(color=color, strokeDash=[6, 4], strokeWidth=1.5)
            .encode(y="y:Q", tooltip=alt.Tooltip("name:N", title=name))
        )
        layers.append(
            alt.Chart(rule)
            .mark_text(align="right", dx=-2, dy=-7, color=color, fontSize=12)
            .encode(y="y:Q", x=alt.value("width"), text="name:N")
        )
    return alt.layer(*layers, height=320)


def phase_waterfall(milestones: pd.DataFrame, unit: str) -> alt.Chart:
    """What each milestone took off (or put on) the previous value, as a waterfall."""
    data = milestones.dropna(subset=["value"]).reset_index(drop=True).copy()
    data["step"] = data["label"].astype(str)
    data["start"] = data["value"].shift(1)
    data = data.dropna(subset=["start"])
    data["change"] = data["value"] - data["start"]
    data["effect"] = data["change"].map(lambda c: "faster" if c <= 0 else "slower")
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    return (
        alt.Chart(data)
        .mark_bar(
            size=28,
            cursor="pointer",
            tooltip=tooltip(
                [
                    ("step:N", "milestone"),
                    ("pr:N", "PR"),
                    ("start:Q", f"before ({unit})", ".4g"),
                    ("value:Q", f"after ({unit})", ".4g"),
                    ("change:Q", f"change ({unit})", "+.3g"),
                ]
            ),
        )
        .encode(
            x=alt.X(
                "step:N",
                title="milestone",
                sort=alt.SortField("ordinal"),
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("start:Q", title=f"latency ({unit})", scale=alt.Scale(zero=False)),
            y2="value:Q",
            color=alt.Color(
                "effect:N",
                title="change",
                scale=alt.Scale(domain=["faster", "slower"], range=[GAIN, LOSS]),
            ),
            href=PR_HREF,
        )
        .properties(height=220)
    )


# What trend_lines draws of a point: x, y, colour, tooltip, its PR link, and what a click
# on it hands the page (its source, line and series).
CANVAS_POINTS = 1000  # more points than this are drawn on a canvas (trend_lines)
TREND_FIELDS = (
    "series",
    "value",
    "measured_at",
    "version_short",
    "pr",
    "pr_title",
    "pr_link",
    "release",
    "samples",
    "points",
    "source",
    "line",
    "source_id",
    "series_id",
)


def compact(data: pd.DataFrame) -> pd.DataFrame:
    """`data` as the browser decodes it fastest, the same values: a text column as a
    dictionary (categories: a series' label is sent once, not on each of its points; 4,000
    points of the 10 M store's Trends chart went from 866 KB of Arrow to 276 KB) and whole numbers
    as 32 bits when they fit (a 64-bit one arrives as a BigInt that is converted back)."""
    kinds: dict[str, str] = {}
    for column in data.columns:
        values = data[column]
        if values.isna().all():
            continue  # Arrow's null type: nothing to encode
        if pd.api.types.infer_dtype(values, skipna=True) == "string":
            kinds[column] = "category"
        elif values.dtype == "int64" and values.min() >= -(2**31) and values.max() < 2**31:
            kinds[column] = "int32"
    return data.astype(kinds) if kinds else data


def trend_lines(
    points: pd.DataFrame,
    metric: str,
    unit: str,
    log_scale: bool = False,
    x_by: str = "time",
    releases: pd.DataFrame | None = None,
    changes: pd.DataFrame | None = None,
    noise: pd.DataFrame | None = None,
    statuses: pd.DataFrame | None = None,
    prs: pd.DataFrame | None = None,
    interactive: bool = False,
) -> alt.LayerChart:
    """Series over time, over their versions in order, or along a parameter (x_by names
    a column of `points`, e.g. batch_size), one colour per series. `interactive` (a page,
    not the report's static SVG): a click on a legend entry shows that series alone
    (shift-click adds one); the x axis zooms with the wheel and pans by dragging (a double
    click resets it).

    `points` columns: series (its label), measured_at, version, value, samples, points
    (how many measurements a point stands for), source, line, pr_number, pr_title, pr_link
    (empty unless the version is a known PR's commit), release (the first release that
    contains the version's commit). `releases` (tag, released_at): release tags drawn
    as dashed rules on a time axis, those within the time the points span. `changes`
    (series, shape, kind, change_pct, before_at, after_at): the detected changes of
    these series on a time axis (change_marks). `noise` (series, level, cv, first, last):
    each series' usual level and its noise on a time axis, a band of level ± 2 cv (detection's
    robust spread, series_noise). `statuses` (series, status, measured_at, the x_by column,
    batch_size, seq_len, source, line): points that hold a status and no value (OOM), drawn
    as crosses along the bottom edge, never as a value. `prs` (measured_at, pr, title,
    pr_link, what): PRs to mark on a time axis (a phase's milestones), a rule each.
    """
    data = points.dropna(subset=["value"]).copy()
    data["version_short"] = data["version"].fillna("").map(lambda v: v[:10])
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    if x_by not in ("time", "version"):
        data["at"] = pd.to_numeric(data[x_by], errors="coerce")
        data = data.dropna(subset=["at"]).sort_values(["series", "at"])
        # A margin of 2 % each side: a point or an OOM cross at the largest value was cut
        # in half by the plot's edge.
        held = [data["at"]]
        if statuses is not None and x_by in statuses.columns:
            held.append(pd.to_numeric(statuses[x_by], errors="coerce"))
        values = pd.concat(held).dropna()
        lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        margin = (hi - lo) * 0.02 or max(abs(hi) * 0.02, 1.0)
        scale = alt.Scale(zero=False, nice=False, domain=[lo - margin, hi + margin])
        x = alt.X("at:Q", title=x_by.replace("_", " "), scale=scale)
    elif x_by == "version":
        data["order"] = data.groupby("series").cumcount()
        x = alt.X(
            "order:Q", title="version (in order of measurement)", axis=alt.Axis(tickMinStep=1)
        )
    else:
        x = alt.X("measured_at:T", axis=time_axis("measured (UTC)"))
    # Only what the marks, the tooltip and a click read: the browser decodes, and Vega
    # walks, every column of every point (Trends sent 1.2 MB for 4,000 points of the 10 M
    # store, the full commit hashes and the other x axes' parameters among them).
    data = compact(data[[c for c in (*TREND_FIELDS, "at", "order") if c in data.columns]])
    scale = alt.Scale(type="log") if log_scale else alt.Scale(zero=False)
    y_title = f"{metric} ({unit})" if unit else metric
    y = alt.Y("value:Q", title=y_title, scale=scale)
    color = alt.Color(
        "series:N",
        title="series",
        scale=alt.Scale(range=list(OKABE_ITO)),
        # Full-strength symbols: the lines' opacity (which one is picked) is not a legend.
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=900, symbolOpacity=1),
    )
    tips = tooltip(
        [
            ("series:N", "series"),
            ("value:Q", f"{metric} ({unit})", ".4g"),
            ("version_short:N", "version"),
            ("measured_at:T", "measured", "%Y-%m-%d %H:%M"),
            ("pr:N", "PR"),
            ("pr_title:N", "PR title"),
            ("release:N", "first release with it"),
            ("samples:Q", "samples"),
            ("points:Q", "measurements"),
            ("source:N", "source"),
            ("line:Q", "line"),
        ],
        data,
    )
    base = alt.Chart(data).encode(x=x, y=y, color=color)
    # A point of a PR's merge commit opens the PR when clicked. Many points go on a
    # canvas (no element each, drawn at once), with no ARIA description each: a canvas
    # has none to give, and the browser built a string of every field of each point as
    # it drew. A small chart, and the report's SVG, keep them for a screen reader.
    on_canvas = interactive and len(data) > CANVAS_POINTS
    aria = not on_canvas
    marks = base.mark_point(filled=True, size=50, cursor="pointer", tooltip=tips, aria=aria).encode(
        href=PR_HREF
    )
    if interactive:
        # (A scale bound to a selection clips the marks: SVG clip ids the report's static
        # drawing would number by how many charts the process drew before it.)
        picked = alt.selection_point(fields=["series"], bind="legend", name=LEGEND_PICK)
        zoom = alt.selection_interval(encodings=["x"], bind="scales", name="zoom")
        shown = alt.OpacityValue(value=0.12, condition={"param": picked.name, "value": 1.0})
        base = base.encode(opacity=shown)
        marks = marks.encode(opacity=shown).add_params(picked, zoom)
        if "source_id" in data.columns:  # a click on a point: the page shows where it is from
            clicked = alt.selection_point(
                fields=["source_id", "line", "series_id", "value", "points"],
                on="click",
                name=CLICKED_POINT,
            )
            marks = marks.add_params(clicked)
    lines = base.mark_line(strokeWidth=2, aria=aria)
    layers = [lines, marks]
    on_time = x_by == "time"
    if on_time and noise is not None and not noise.empty:
        layers = [noise_bands(noise, y_title, scale, color), *layers]
    if on_time and releases is not None and not releases.empty:
        layers += release_rules(releases, data["measured_at"].min(), data["measured_at"].max())
    if on_time and prs is not None and not prs.empty:
        layers += pr_rules(prs, data["measured_at"].min(), data["measured_at"].max())
    if on_time and changes is not None and not changes.empty:
        # Those within the time drawn (a date range may cut it): no mark widens the axis.
        start, end = data["measured_at"].min(), data["measured_at"].max()
        within = changes[(changes.after_at >= start) & (changes.before_at <= end)]
        if not within.empty:
            several = interactive and data["series"].nunique() > 1
            marks = change_marks(within, picked=LEGEND_PICK if several else None)
            layers = marks + layers  # bands under the lines
    if statuses is not None and not statuses.empty:
        layers.append(status_marks(statuses, x_by, color))
    # The legend is drawn inside the chart's height: each series' line of it gets room.
    drawn = int(pd.concat([data["series"], _series_of(statuses)]).nunique())
    height = 340 + 18 * drawn
    # What a screen reader says of the chart, in place of a description of every point.
    along = "time" if on_time else x_by.replace("_", " ")
    about = f"{y_title} of {drawn} series over {along}"
    canvas = {"embedOptions": {"renderer": "canvas"}} if on_canvas else alt.Undefined
    return alt.layer(*layers, height=height, description=about, usermeta=canvas)


def _series_of(frame: pd.DataFrame | None) -> pd.Series:
    return frame["series"] if frame is not None and not frame.empty else pd.Series([], dtype=str)


def noise_bands(noise: pd.DataFrame, y_title: str, scale: alt.Scale, color: alt.Color) -> alt.Chart:
    """Each series' usual level ± twice its noise (series_noise: level and cv, the robust
    coefficient of variation detection measured) as a pale band in its colour over the
    time it spans: a point outside it is worth a look, one inside it is noise."""
    data = noise.dropna(subset=["level", "cv"]).copy()
    # Two robust standard deviations each side: about 95 % of a quiet series' runs.
    width = NOISE_BAND_CVS * data["cv"]
    data["low"] = data["level"] * (1 - width)
    data["high"] = data["level"] * (1 + width)
    data["noise"] = data["cv"].map(
        lambda cv: f"± {NOISE_BAND_CVS * cv:.1%} ({NOISE_BAND_CVS} × cv {cv:.1%})"
    )
    return (
        alt.Chart(data)
        .mark_rect(
            opacity=0.12,
            tooltip=tooltip(
                [
                    ("series:N", "series"),
                    ("level:Q", "usual level", ".4g"),
                    ("noise:N", "noise (robust cv)"),
                ]
            ),
        )
        .encode(
            x=alt.X("first:T", axis=time_axis("measured (UTC)")),
            x2="last:T",
            y=alt.Y("low:Q", title=y_title, scale=scale),
            y2="high:Q",
            color=color,
        )
    )


def status_marks(statuses: pd.DataFrame, x_by: str, color: alt.Color) -> alt.Chart:
    """Points that hold only a status (oom: out of memory) as crosses along the bottom
    edge at their x, in their series' colour, with the batch size and seq len they ran
    out at in the tooltip: a run that failed is not a run that took 0 ms."""
    data = statuses.copy()
    data["what"] = data["status"].map(
        lambda s: "OOM (out of memory)" if s == "oom" else str(s).upper()
    )
    if x_by == "time":
        x = alt.X("measured_at:T")
    elif x_by == "version":
        data["order"] = data.groupby("series").cumcount()
        x = alt.X("order:Q")
    else:
        data["at"] = pd.to_numeric(data[x_by], errors="coerce")
        data = data.dropna(subset=["at"])
        x = alt.X("at:Q")
    return (
        alt.Chart(data)
        .mark_point(
            shape="cross",
            angle=45,
            size=120,
            filled=True,
            strokeWidth=1,
            tooltip=tooltip(
                [
                    ("series:N", "series"),
                    ("what:N", "status"),
                    ("batch_size:N", "batch size"),
                    ("seq_len:N", "seq len"),
                    ("measured_at:T", "measured", "%Y-%m-%d %H:%M"),
                    ("source:N", "source"),
                    ("line:Q", "line"),
                ]
            ),
        )
        .encode(x=x, y=alt.value({"expr": "height - 9"}), color=color, description="what:N")
    )


# Of PRs closer than this share of the time axis only the first is labelled (about 60 px
# of a 1440 px window's chart, 35 px at 800 px: "#22424" is 35 px): a phase's milestones a
# week apart piled their numbers into one smudge on a two-year axis.
PR_LABEL_GAP = 0.06


def _spaced(prs: pd.DataFrame, start: object, end: object) -> pd.DataFrame:
    """The PRs to label: in time order, each at least PR_LABEL_GAP of the axis after the
    last one labelled. The others keep their rule, tooltip and click."""
    gap = (pd.Timestamp(end) - pd.Timestamp(start)) * PR_LABEL_GAP
    prs = prs.sort_values("measured_at", kind="stable")
    kept, last = [], None
    for i, at in zip(prs.index, prs["measured_at"], strict=True):
        if last is None or at - last >= gap:
            kept.append(i)
            last = at
    return prs.loc[kept]


def pr_rules(prs: pd.DataFrame, start: object, end: object) -> list[alt.Chart]:
    """Dotted rules at the PRs between `start` and `end`, labelled with their number a
    little below the release tags; a click opens the PR."""
    within = prs[(prs.measured_at >= start) & (prs.measured_at <= end)]
    if within.empty:
        return []
    tips = tooltip(
        [
            ("pr:N", "PR"),
            ("title:N", "PR title"),
            ("what:N", "what"),
            ("measured_at:T", "on", "%Y-%m-%d"),
        ]
    )
    base = alt.Chart(within).encode(x=alt.X("measured_at:T"), href=PR_HREF)
    rules = base.mark_rule(
        color=PR_MARK, strokeDash=[2, 3], strokeWidth=1.5, cursor="pointer", tooltip=tips
    )
    labels = alt.Chart(_spaced(within, start, end)).encode(x=alt.X("measured_at:T"), href=PR_HREF)
    labels = labels.mark_text(
        align="left",
        baseline="top",
        dx=3,
        dy=16,
        fontSize=11,
        color=MEASURED,
        cursor="pointer",
        tooltip=tips,
    ).encode(text="pr:N", y=alt.value(0))
    return [rules, labels]


def change_marks(changes: pd.DataFrame, picked: str | None = None) -> list[alt.Chart]:
    """Detected changes on a time axis: a step as a dashed rule at its first point
    after, a drift as a light band over its ramp (from the last point before it to the
    first at its new level); vermilion for a regression, green for an improvement.

    `picked`: the name of the chart's legend selection of series. A drift's band is then
    drawn while its series is picked, not always: the bands of many lines' drifts, each
    over years of a slow ramp, laid a wall of green over the 10 M store's Trends."""
    data = changes.copy()
    data["change"] = data["change_pct"].map(lambda p: f"{p:+.1f} %")
    data["what"] = [
        ("gradual " if shape == "drift" else "") + kind
        for shape, kind in zip(data["shape"], data["kind"], strict=True)
    ]
    # A value per mark, not a scale: the lines' colour scale is the series'.
    color = alt.ColorValue(
        value=GAIN, condition={"test": "datum.kind === 'regression'", "value": LOSS}
    )
    tooltip = [
        alt.Tooltip("series:N", title="series"),
        alt.Tooltip("what:N", title="change"),
        alt.Tooltip("change:N", title="by"),
        alt.Tooltip("before_at:T", title="from", format="%Y-%m-%d %H:%M"),
        alt.Tooltip("after_at:T", title="to", format="%Y-%m-%d %H:%M"),
    ]
    marks = []
    steps = data[data["shape"] != "drift"]
    if not steps.empty:
        marks.append(
            alt.Chart(steps)
            .mark_rule(strokeDash=[6, 3], strokeWidth=1.5)
            .encode(x="after_at:T", color=color, tooltip=tooltip)
        )
    drifts = data[data["shape"] == "drift"]
    if not drifts.empty:
        bands = alt.Chart(drifts)
        if picked is not None:
            # Filtered, not made transparent: a transparent band still takes the pointer,
            # and its tooltip came up over the whole plot.
            bands = bands.transform_filter({"param": picked, "empty": False})
        marks.append(
            bands.mark_rect(opacity=0.15).encode(
                x="before_at:T", x2="after_at:T", color=color, tooltip=tooltip
            )
        )
    return marks


def with_change(
    chart: alt.TopLevelMixin, at: object, since: object = None, better: bool = False
) -> alt.TopLevelMixin:
    """A dashed rule where a change was detected (at its first point after), vermilion,
    or green for a change that made the metric `better` (as change_marks colours them);
    for a drift, `since` its start, a light band over the ramp from there to `at`."""
    if at is None or pd.isna(at):
        return chart
    colour = GAIN if better else LOSS
    rule = (
        alt.Chart(pd.DataFrame({"at": [at]}))
        .mark_rule(color=colour, strokeDash=[6, 3], strokeWidth=1.5)
        .encode(x="at:T", tooltip=[alt.Tooltip("at:T", title="change", format="%Y-%m-%d %H:%M")])
    )
    if since is None or pd.isna(since):
        return alt.layer(chart, rule)
    band = (
        alt.Chart(pd.DataFrame({"since": [since], "at": [at]}))
        .mark_rect(color=colour, opacity=0.12)
        .encode(
            x="since:T",
            x2="at:T",
            tooltip=[
                alt.Tooltip("since:T", title="drift from", format="%Y-%m-%d %H:%M"),
                alt.Tooltip("at:T", title="to", format="%Y-%m-%d %H:%M"),
            ],
        )
    )
    return alt.layer(band, chart, rule)


def release_rules(releases: pd.DataFrame, start: object, end: object) -> list[alt.Chart]:
    """Dashed grey rules at the release tags between `start` and `end`, labelled at the top."""
    within = releases[(releases.released_at >= start) & (releases.released_at <= end)]
    if within.empty:
        return []
    base = alt.Chart(within).encode(x=alt.X("released_at:T"))
    rules = base.mark_rule(
        color=BASELINE,
        strokeDash=[4, 3],
        strokeWidth=1,
        tooltip=tooltip([("tag:N", "release"), ("released_at:T", "released", "%Y-%m-%d")]),
    )
    labels = base.mark_text(
        align="left", baseline="top", dx=3, dy=2, angle=0, fontSize=11, color=BASELINE
    ).encode(text="tag:N", y=alt.value(0))
    return [rules, labels]


def phases_timeline(milestones: pd.DataFrame, unit: str) -> alt.LayerChart:
    """Several phases of one project as steps on one time axis, one colour per phase.

    `milestones` columns: phase, value, date, pr_number, pr_link, label.
    """
    data = milestones.copy()
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    x = alt.X("date:T", title="record date", axis=alt.Axis(format="%Y-%m-%d"))
    y = alt.Y("value:Q", title=f"latency ({unit})", scale=alt.Scale(zero=False, padding=12))
    color = alt.Color(
        "phase:N",
        title="phase",
        scale=alt.Scale(range=list(OKABE_ITO)),
        legend=alt.Legend(orient="bottom", labelLimit=600),
    )
    base = alt.Chart(data).encode(x=x, y=y, color=color)
    lines = base.mark_line(interpolate="step-after", strokeWidth=2.5)
    tips = tooltip(
        [
            ("phase:N", "phase"),
            ("label:N", "milestone"),
            ("value:Q", f"value ({unit})", ".4g"),
            ("date:T", "date", "%Y-%m-%d"),
            ("pr:N", "PR"),
        ]
    )
    points = base.mark_point(filled=True, size=70, cursor="pointer", tooltip=tips).encode(
        href=PR_HREF
    )
    return alt.layer(lines, points, height=320)


def ratio_lines(
    points: pd.DataFrame, y_title: str = "ratio", parity_label: str = "parity"
) -> alt.LayerChart:
    """Paired series' ratio (ours / theirs) over time, one colour per pair, on a log scale
    (2x slower and 2x faster lie equally far from parity), with a dashed rule at 1 labelled
    `parity_label` (say which side of it is a loss: "parity · above: Paddle slower").

    `points` columns: pair, measured_at, ratio, words (the ratio worded), ours_value,
    theirs_value, unit, version, matched (version or time). Points are drawn as well as
    lines: a pair measured once is one point.
    """
    data = points.dropna(subset=["ratio"]).copy()
    data = data[data.ratio > 0]
    data["version_short"] = data["version"].fillna("").astype(str).map(lambda v: v[:10])
    # Padding: a pair measured once at the first or last time is a whole point, not half.
    x = alt.X(
        "measured_at:T", title="measured (UTC)", scale=alt.Scale(padding=16), axis=time_axis()
    )
    # Room between labels: on a short log axis over three decades "2" and "3" touched.
    y = alt.Y(
        "ratio:Q",
        title=y_title,
        scale=alt.Scale(type="log"),
        axis=alt.Axis(labelOverlap="greedy", labelSeparation=4),
    )
    color = alt.Color(
        "pair:N",
        title="pair",
        scale=alt.Scale(range=list(OKABE_ITO)),
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=900),
    )
    tips = tooltip(
        [
            ("pair:N", "pair"),
            ("words:N", "ratio"),
            ("ratio:Q", "ours / theirs", ".3f"),
            ("ours_value:Q", "ours", ".4g"),
            ("theirs_value:Q", "theirs", ".4g"),
            ("unit:N", "unit"),
            ("measured_at:T", "measured", "%Y-%m-%d %H:%M"),
            ("version_short:N", "version"),
            ("matched:N", "aligned by"),
        ]
    )
    base = alt.Chart(data).encode(x=x, y=y, color=color)
    lines = base.mark_line(strokeWidth=2)
    marks = base.mark_point(filled=True, size=70, tooltip=tips)
    # The label sits mid-way in time: the first and last points crowd the edges.
    times = data["measured_at"]
    middle = times.min() + (times.max() - times.min()) / 2 if len(times) else pd.NaT
    parity = pd.DataFrame({"ratio": [1.0], "name": [parity_label], "measured_at": [middle]})
    rule = (
        alt.Chart(parity)
        .mark_rule(color="#333333", strokeDash=[6, 4], strokeWidth=1.5)
        .encode(y="ratio:Q")
    )
    label = (
        alt.Chart(parity)
        .mark_text(align="center", dy=-8, color="#333333", fontSize=12)
        .encode(y="ratio:Q", x="measured_at:T", text="name:N")
    )
    # The legend is drawn inside the chart's height: each pair's line of it gets its room.
    height = 320 + 18 * int(data["pair"].nunique())
    return alt.layer(rule, label, lines, marks, height=height)


def attribution_waterfall(
    rows: pd.DataFrame, unit: str, direction: str = "lower"
) -> alt.LayerChart:
    """From one version of a series to another: the start and end levels as bars, each
    step (a PR, from a change point or a milestone) floating between the levels before and
    after it, green when it made the metric better and vermilion when worse by the
    metric's direction, and the unexplained rest in grey. A PR's bar opens the PR.

    `rows`: perfboard.compare.attribution (order, kind, label, delta, level_from, level_to)
    with pr_link (None where no PR), and title (the PR's, for the tooltip) when known. The
    axis does not start at 0 (a 5% step would be a sliver); start and end bars reach the
    bottom of the plot to read as levels.
    """
    data = rows.copy()
    if "title" not in data:
        data["title"] = None
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    better = data.delta < 0 if direction == "lower" else data.delta > 0
    data["effect"] = better.map({True: "better", False: "worse"})
    data.loc[data.kind.isin(["start", "end"]), "effect"] = "level"
    data.loc[data.kind == "unexplained", "effect"] = "unexplained"
    data["text"] = [
        f"{level:.4g}" if kind in ("start", "end") else f"{delta:+.3g}"
        for kind, level, delta in zip(data.kind, data.level_to, data.delta, strict=True)
    ]
    data["top"] = data[["level_from", "level_to"]].max(axis=1)
    # An explicit order: the layers hold different rows, and a sort by field is not kept
    # when their domains are merged.
    order = list(data.sort_values("order").label)
    # "step at 2020-02-24" on two lines: side by side at 800 px the dates ran into each other.
    x = alt.X(
        "label:N",
        title=None,
        sort=order,
        axis=alt.Axis(labelAngle=0, labelExpr="split(datum.label, ' at ')"),
    )
    color = alt.Color(
        "effect:N",
        title=None,
        scale=alt.Scale(
            domain=["level", "better", "worse", "unexplained"],
            range=[MEASURED, GAIN, LOSS, BASELINE],
        ),
        legend=alt.Legend(orient="bottom"),
    )
    tips = tooltip(
        [
            ("label:N", "step"),
            ("pr:N", "PR"),
            ("title:N", "PR title"),
            ("delta:Q", f"change ({unit})", "+.4g"),
            ("level_from:Q", f"from ({unit})", ".4g"),
            ("level_to:Q", f"to ({unit})", ".4g"),
        ]
    )
    y_title = f"value ({unit})" if unit else "value"
    scale = alt.Scale(zero=False, padding=16)
    levels = (
        alt.Chart(data)
        .transform_filter(alt.FieldOneOfPredicate(field="kind", oneOf=["start", "end"]))
        .mark_bar(size=36, tooltip=tips)
        .encode(
            x=x,
            # No stacking: a bar without a y2 field would be stacked onto 0.
            y=alt.Y("level_to:Q", title=y_title, scale=scale, stack=None),
            y2=alt.value("height"),
            color=color,
        )
    )
    steps = (
        alt.Chart(data)
        .transform_filter(alt.FieldOneOfPredicate(field="kind", oneOf=["step", "unexplained"]))
        .mark_bar(size=36, cursor="pointer", tooltip=tips)
        .encode(
            x=x,
            y=alt.Y("level_from:Q", title=y_title, scale=scale),
            y2="level_to:Q",
            color=color,
            href=PR_HREF,
        )
    )
    labels = (
        alt.Chart(data)
        .mark_text(dy=-8, fontSize=12, color="#333333")
        .encode(x=x, y=alt.Y("top:Q", scale=scale), text="text:N")
    )
    return alt.layer(levels, steps, labels, height=340)


# -- profiles ---------------------------------------------------------------------------------

CPU_COLOR, GPU_COLOR = OKABE_ITO[0], OKABE_ITO[1]
APPEARED, DISAPPEARED = OKABE_ITO[5], OKABE_ITO[4]
# Op names can be long templates (nvprof kernels): cut on the axis, whole in the tooltip.
EVENT_LABEL_PX = 300
BAR_ROW_PX = 24
# A bar at least this share of the longest holds its label: one below it ends before
# 60 % of the axis, which leaves a label's ~120 px right of it in a 300 px plot.
INSIDE_LABEL_SHARE = 0.6


def _bar_height(rows: int) -> int:
    # Streamlit fits the whole chart (legend and x axis included) into the height: they
    # get their ~80 px on top of the rows'.
    return BAR_ROW_PX * max(rows, 1) + 80


def profile_breakdown(rows: pd.DataFrame, top: int = 30) -> alt.LayerChart:
    """A run's top-level ops as horizontal bars, largest first, each labelled with its
    total and its share of the run; CPU and GPU time stacked when the report splits them
    (a CPU-only report draws its total in one colour).

    `rows`: perfboard.profiles.breakdown rows of one block at depth 0 (event, calls, total,
    cpu_time, gpu_time, share, threads). The `top` largest are drawn.
    """
    data = rows.dropna(subset=["total"]).nlargest(top, "total", keep="first").copy()
    order = list(data["event"])
    split = bool(len(data)) and data[["cpu_time", "gpu_time"]].notna().all(axis=None)
    if split:
        parts = data.melt(
            id_vars=["event", "calls", "total", "share"],
            value_vars=["cpu_time", "gpu_time"],
            var_name="part",
            value_name="ms",
        )
        parts["part"] = parts["part"].map({"cpu_time": "CPU", "gpu_time": "GPU"})
        domain, colours = ["CPU", "GPU"], [CPU_COLOR, GPU_COLOR]
    else:
        parts = data[["event", "calls", "total", "share"]].assign(part="total", ms=data["total"])
        domain, colours = ["total"], [CPU_COLOR]
    data["text"] = [
        _ms(total) + (f" · {share:.1%}" if pd.notna(share) else "")
        for total, share in zip(data["total"], data["share"], strict=True)
    ]
    longest = float(data["total"].max()) if len(data) else 1.0
    # The long bars carry their label inside their end, the others right of it: room for
    # the longest bar's label right of it cut it at 800 px ("210.7 ms · 58.5"), whatever
    # share of the axis was kept for it.
    data["inside"] = data["total"] >= INSIDE_LABEL_SHARE * longest
    x_scale = alt.Scale(domain=[0, longest * 1.02], nice=False)
    y = alt.Y(
        "event:N",
        title=None,
        sort=order,
        axis=alt.Axis(labelLimit=EVENT_LABEL_PX, labelFontSize=12),
    )
    tooltip = [
        alt.Tooltip("event:N", title="event"),
        alt.Tooltip("part:N", title="part"),
        alt.Tooltip("ms:Q", title="time (ms)", format=",.4g"),
        alt.Tooltip("total:Q", title="total (ms)", format=",.4g"),
        alt.Tooltip("share:Q", title="share of the run", format=".2%"),
        alt.Tooltip("calls:Q", title="calls", format=","),
    ]
    bars = (
        alt.Chart(parts)
        .mark_bar(height=16)
        .encode(
            y=y,
            x=alt.X("ms:Q", title="time (ms)", scale=x_scale, stack="zero"),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=domain, range=colours),
                legend=alt.Legend(orient="top") if split else None,
            ),
            order=alt.Order("part:N"),
            tooltip=tooltip,
        )
    )
    label = alt.Chart(data).encode(y=y, x=alt.X("total:Q", scale=x_scale), text="text:N")
    outside = label.transform_filter("!datum.inside").mark_text(
        align="left", dx=4, fontSize=12, color="#333333"
    )
    # Over the bar's end: the GPU part (orange) when split, else the CPU part (blue).
    inside = label.transform_filter("datum.inside").mark_text(
        align="right", dx=-4, fontSize=12, color="#1a1a1a" if split else "white"
    )
    return alt.layer(bars, outside, inside, height=_bar_height(len(data)))


def _ms(value: float, signed: bool = False) -> str:
    # Imported here: this section was appended, the module's imports are shared.
    from perfboard.profiles import ms_text

    return ms_text(value, signed)


def _diff_text(row: pd.Series) -> str:
    if row["status"] == "appeared":
        return f"appeared · {_ms(row['total_b'])} in B"
    if row["status"] == "disappeared":
        return f"disappeared · {_ms(row['total_a'])} in A"
    share = f" ({row['delta_share']:+.1%} of A)" if pd.notna(row["delta_share"]) else ""
    return _ms(row["delta"], signed=True) + share


# The pixels right and left of a diverging chart's zero line, less the label's offset and
# a margin: a text mark's `limit` ends a longer label in an ellipsis.
_LABEL_ROOM = {
    "right": alt.ExprRef("max(width - scale('x', 0) - 8, 0)"),
    "left": alt.ExprRef("max(scale('x', 0) - 8, 0)"),
}


def profile_diff(rows: pd.DataFrame, top: int = 30) -> alt.LayerChart:
    """Run A against run B, op by op: a diverging bar of each change (B - A; left is
    faster), largest first. An op found on one side only is not a change from 0: it is
    drawn as a pale, dashed bar of its time on the side that has it (right: appeared in
    B, left: disappeared from A) in its own colour, and labelled so.

    `rows`: perfboard.profiles.diff rows of one block at depth 0 (event, status, total_a,
    total_b, delta, delta_share, bar, calls_a, calls_b, note). The `top` largest are drawn.
    """
    data = rows.dropna(subset=["bar"]).copy()
    data = data.assign(size=data["bar"].abs()).nlargest(top, "size", keep="first")
    order = list(data["event"])
    data["text"] = [_diff_text(row) for _, row in data.iterrows()]
    data["one_side"] = data["status"].isin(["appeared", "disappeared"])
    # Each row holds one bar, so its label goes on the other side of the zero line, where
    # the row is empty: it never runs into the axis or another bar. Both sides are as wide,
    # room for a label whichever way the ops went: with 3/8 of the width for the smaller
    # side, an 800 px window cut "disappeared · 32,332 ms in A" (the demo's ERNIE runs).
    # A label still too long for its side ends in an ellipsis (_LABEL_ROOM), never cut.
    left = max(-float(data["bar"].min()), 0.0) if len(data) else 1.0
    right = max(float(data["bar"].max()), 0.0) if len(data) else 1.0
    side = max(left, right) or 1.0
    x_scale = alt.Scale(domain=[-side, side], nice=False)
    y = alt.Y(
        "event:N",
        title=None,
        sort=order,
        axis=alt.Axis(labelLimit=EVENT_LABEL_PX, labelFontSize=12),
    )
    x = alt.X("bar:Q", title="change B − A (ms) · left: faster in B", scale=x_scale)
    color = alt.Color(
        "status:N",
        title=None,
        scale=alt.Scale(
            domain=["faster", "slower", "same", "appeared", "disappeared"],
            range=[GAIN, LOSS, BASELINE, APPEARED, DISAPPEARED],
        ),
        legend=alt.Legend(orient="top"),
    )
    # Times as written in a report ("32,332.5 ms", not "3.233e+4"); an op of one side only
    # has no B (or A), change or share: those rows are left out, not shown as null.
    tips = tooltip(
        [
            ("event:N", "event"),
            ("status:N", "status"),
            ("total_a:Q", "A (ms)", ",.6~g"),
            ("total_b:Q", "B (ms)", ",.6~g"),
            ("delta:Q", "B − A (ms)", "+,.6~g"),
            ("delta_share:Q", "of A's total", "+.2%"),
            ("calls_a:Q", "calls A", ","),
            ("calls_b:Q", "calls B", ","),
            ("note:N", "note"),
        ]
    )
    base = alt.Chart(data).encode(y=y)
    changed = (
        base.transform_filter("!datum.one_side")
        .mark_bar(height=16, tooltip=tips)
        .encode(x=x, x2=alt.datum(0), color=color)
    )
    one_side = (
        base.transform_filter("datum.one_side")
        .mark_bar(height=16, fillOpacity=0.35, strokeWidth=1.5, strokeDash=[4, 2], tooltip=tips)
        .encode(x=x, x2=alt.datum(0), color=color, stroke=color)
    )
    origin = alt.X("zero:Q", scale=x_scale)
    labels_right = (
        base.transform_filter("datum.bar < 0")
        .transform_calculate(zero="0")
        .mark_text(align="left", dx=5, fontSize=12, color="#333333", limit=_LABEL_ROOM["right"])
        .encode(x=origin, text="text:N")
    )
    labels_left = (
        base.transform_filter("datum.bar >= 0")
        .transform_calculate(zero="0")
        .mark_text(align="right", dx=-5, fontSize=12, color="#333333", limit=_LABEL_ROOM["left"])
        .encode(x=origin, text="text:N")
    )
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="#333333").encode(x=origin)
    return alt.layer(
        changed, one_side, zero, labels_right, labels_left, height=_bar_height(len(data))
    )
