"""Pure Altair builders: a DataFrame in, a chart out; no Streamlit, no queries.

Rules every chart keeps: axes carry their units; colours come from the Okabe-Ito
palette (distinguishable with every common colour-vision deficiency); Chinese labels
name a CJK font first; every point that has a PR carries an href to it (clicking opens
the PR), built by perfboard.links, never taken from the data.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

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
PR_HREF = alt.condition("isValid(datum.pr_link)", "pr_link:N", alt.value(None))
MEASURED, BASELINE, TARGET, GAIN, LOSS = "#0072B2", "#7F7F7F", "#009E73", "#009E73", "#D55E00"
FONT = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, Microsoft YaHei, sans-serif"


def themed(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Fonts that draw Chinese, quiet grid, readable label sizes."""
    return (
        chart.configure(font=FONT)
        .configure_axis(labelFontSize=12, titleFontSize=13, gridOpacity=0.4)
        .configure_legend(labelFontSize=12, titleFontSize=12)
        .configure_view(strokeOpacity=0)
    )


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
    tooltip = [
        alt.Tooltip("step:N", title="milestone"),
        alt.Tooltip("value:Q", title=f"value ({unit})", format=".4g"),
        alt.Tooltip("date:T", title="date", format="%Y-%m-%d"),
        alt.Tooltip("pr:N", title="PR"),
        alt.Tooltip("pr_title:N", title="PR title"),
        alt.Tooltip("release:N", title="first release with it"),
        alt.Tooltip("speedup:Q", title="speedup vs baseline", format=".3f"),
        alt.Tooltip("description:N", title="description"),
    ]
    base = alt.Chart(data).encode(x=x, y=y)
    line = base.mark_line(interpolate="step-after", color=MEASURED, strokeWidth=2.5)
    points = base.mark_point(filled=True, size=90, color=MEASURED, cursor="pointer").encode(
        href=PR_HREF, tooltip=tooltip
    )
    # PR labels right of their points (a step's riser is left of its point), alternating
    # above and below so the labels of neighbouring milestones do not run into each other.
    data["label_dy"] = [-10 if i % 2 == 0 else 14 for i in range(len(data))]
    labels = (
        alt.Chart(data)
        .transform_filter(alt.datum.pr != "")
        .mark_text(align="left", dx=8, fontSize=12, color="#333333", cursor="pointer")
        .encode(x=x, y=y, text="pr:N", href=PR_HREF, yOffset="label_dy:Q")
    )
    layers: list[alt.Chart] = [line, points, labels]
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
    return alt.layer(*layers).properties(height=320)


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
        .mark_bar(size=28, cursor="pointer")
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
            tooltip=[
                alt.Tooltip("step:N", title="milestone"),
                alt.Tooltip("pr:N", title="PR"),
                alt.Tooltip("start:Q", title=f"before ({unit})", format=".4g"),
                alt.Tooltip("value:Q", title=f"after ({unit})", format=".4g"),
                alt.Tooltip("change:Q", title=f"change ({unit})", format="+.3g"),
            ],
        )
        .properties(height=220)
    )


def trend_lines(
    points: pd.DataFrame,
    metric: str,
    unit: str,
    log_scale: bool = False,
    x_by: str = "time",
    releases: pd.DataFrame | None = None,
) -> alt.LayerChart:
    """Series over time, over their versions in order, or along a parameter (x_by names
    a column of `points`, e.g. batch_size), one colour per series.

    `points` columns: series (its label), measured_at, version, value, samples, points
    (how many measurements a point stands for), source, line, pr_number, pr_title, pr_link
    (empty unless the version is a known PR's commit), release (the first release that
    contains the version's commit). `releases` (tag, released_at): release tags drawn
    as dashed rules on a time axis, those within the time the points span.
    """
    data = points.dropna(subset=["value"]).copy()
    data["version_short"] = data["version"].fillna("").map(lambda v: v[:10])
    data["pr"] = data["pr_number"].map(lambda n: f"#{int(n)}" if pd.notna(n) else "")
    if x_by not in ("time", "version"):
        data["at"] = pd.to_numeric(data[x_by], errors="coerce")
        data = data.dropna(subset=["at"]).sort_values(["series", "at"])
        x = alt.X("at:Q", title=x_by.replace("_", " "), scale=alt.Scale(zero=False))
    elif x_by == "version":
        data["order"] = data.groupby("series").cumcount()
        x = alt.X(
            "order:Q", title="version (in order of measurement)", axis=alt.Axis(tickMinStep=1)
        )
    else:
        x = alt.X("measured_at:T", title="measured (UTC)")
    scale = alt.Scale(type="log") if log_scale else alt.Scale(zero=False)
    y = alt.Y("value:Q", title=f"{metric} ({unit})" if unit else metric, scale=scale)
    color = alt.Color(
        "series:N",
        title="series",
        scale=alt.Scale(range=list(OKABE_ITO)),
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=900),
    )
    tooltip = [
        alt.Tooltip("series:N", title="series"),
        alt.Tooltip("value:Q", title=f"{metric} ({unit})", format=".4g"),
        alt.Tooltip("version_short:N", title="version"),
        alt.Tooltip("measured_at:T", title="measured", format="%Y-%m-%d %H:%M"),
        alt.Tooltip("pr:N", title="PR"),
        alt.Tooltip("pr_title:N", title="PR title"),
        alt.Tooltip("release:N", title="first release with it"),
        alt.Tooltip("samples:Q", title="samples"),
        alt.Tooltip("points:Q", title="measurements"),
        alt.Tooltip("source:N", title="source"),
        alt.Tooltip("line:Q", title="line"),
    ]
    base = alt.Chart(data).encode(x=x, y=y, color=color)
    lines = base.mark_line(strokeWidth=2)
    # A point of a PR's merge commit opens the PR when clicked.
    marks = base.mark_point(filled=True, size=50, cursor="pointer").encode(
        tooltip=tooltip, href=PR_HREF
    )
    layers = [lines, marks]
    if x_by == "time" and releases is not None and not releases.empty:
        layers += release_rules(releases, data["measured_at"].min(), data["measured_at"].max())
    return alt.layer(*layers).properties(height=360)


def with_change(chart: alt.TopLevelMixin, at: object) -> alt.TopLevelMixin:
    """A dashed vermilion rule where a change was detected (at its first point after)."""
    if at is None or pd.isna(at):
        return chart
    rule = (
        alt.Chart(pd.DataFrame({"at": [at]}))
        .mark_rule(color=LOSS, strokeDash=[6, 3], strokeWidth=1.5)
        .encode(x="at:T", tooltip=[alt.Tooltip("at:T", title="change", format="%Y-%m-%d %H:%M")])
    )
    return alt.layer(chart, rule)


def release_rules(releases: pd.DataFrame, start: object, end: object) -> list[alt.Chart]:
    """Dashed grey rules at the release tags between `start` and `end`, labelled at the top."""
    within = releases[(releases.released_at >= start) & (releases.released_at <= end)]
    if within.empty:
        return []
    base = alt.Chart(within).encode(x=alt.X("released_at:T"))
    rules = base.mark_rule(color=BASELINE, strokeDash=[4, 3], strokeWidth=1).encode(
        tooltip=[
            alt.Tooltip("tag:N", title="release"),
            alt.Tooltip("released_at:T", title="released", format="%Y-%m-%d"),
        ]
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
    points = base.mark_point(filled=True, size=70, cursor="pointer").encode(
        href=PR_HREF,
        tooltip=[
            alt.Tooltip("phase:N", title="phase"),
            alt.Tooltip("label:N", title="milestone"),
            alt.Tooltip("value:Q", title=f"value ({unit})", format=".4g"),
            alt.Tooltip("date:T", title="date", format="%Y-%m-%d"),
            alt.Tooltip("pr:N", title="PR"),
        ],
    )
    return alt.layer(lines, points).properties(height=320)


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
    x = alt.X("measured_at:T", title="measured (UTC)", scale=alt.Scale(padding=16))
    y = alt.Y("ratio:Q", title=y_title, scale=alt.Scale(type="log"))
    color = alt.Color(
        "pair:N",
        title="pair",
        scale=alt.Scale(range=list(OKABE_ITO)),
        legend=alt.Legend(orient="bottom", columns=1, labelLimit=900),
    )
    tooltip = [
        alt.Tooltip("pair:N", title="pair"),
        alt.Tooltip("words:N", title="ratio"),
        alt.Tooltip("ratio:Q", title="ours / theirs", format=".3f"),
        alt.Tooltip("ours_value:Q", title="ours", format=".4g"),
        alt.Tooltip("theirs_value:Q", title="theirs", format=".4g"),
        alt.Tooltip("unit:N", title="unit"),
        alt.Tooltip("measured_at:T", title="measured", format="%Y-%m-%d %H:%M"),
        alt.Tooltip("version_short:N", title="version"),
        alt.Tooltip("matched:N", title="aligned by"),
    ]
    base = alt.Chart(data).encode(x=x, y=y, color=color)
    lines = base.mark_line(strokeWidth=2)
    marks = base.mark_point(filled=True, size=70).encode(tooltip=tooltip)
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
    return alt.layer(rule, label, lines, marks).properties(height=height)


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
    x = alt.X("label:N", title=None, sort=order, axis=alt.Axis(labelAngle=0))
    color = alt.Color(
        "effect:N",
        title=None,
        scale=alt.Scale(
            domain=["level", "better", "worse", "unexplained"],
            range=[MEASURED, GAIN, LOSS, BASELINE],
        ),
        legend=alt.Legend(orient="bottom"),
    )
    tooltip = [
        alt.Tooltip("label:N", title="step"),
        alt.Tooltip("pr:N", title="PR"),
        alt.Tooltip("title:N", title="title"),
        alt.Tooltip("delta:Q", title=f"change ({unit})", format="+.4g"),
        alt.Tooltip("level_from:Q", title=f"from ({unit})", format=".4g"),
        alt.Tooltip("level_to:Q", title=f"to ({unit})", format=".4g"),
    ]
    y_title = f"value ({unit})" if unit else "value"
    scale = alt.Scale(zero=False, padding=16)
    levels = (
        alt.Chart(data)
        .transform_filter(alt.FieldOneOfPredicate(field="kind", oneOf=["start", "end"]))
        .mark_bar(size=36)
        .encode(
            x=x,
            # No stacking: a bar without a y2 field would be stacked onto 0.
            y=alt.Y("level_to:Q", title=y_title, scale=scale, stack=None),
            y2=alt.value("height"),
            color=color,
            tooltip=tooltip,
        )
    )
    steps = (
        alt.Chart(data)
        .transform_filter(alt.FieldOneOfPredicate(field="kind", oneOf=["step", "unexplained"]))
        .mark_bar(size=36, cursor="pointer")
        .encode(
            x=x,
            y=alt.Y("level_from:Q", title=y_title, scale=scale),
            y2="level_to:Q",
            color=color,
            href=PR_HREF,
            tooltip=tooltip,
        )
    )
    labels = (
        alt.Chart(data)
        .mark_text(dy=-8, fontSize=12, color="#333333")
        .encode(x=x, y=alt.Y("top:Q", scale=scale), text="text:N")
    )
    return alt.layer(levels, steps, labels).properties(height=340)
