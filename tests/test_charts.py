"""perfboard.charts: what the Vega-Lite specs say (the browser tests see them drawn)."""

from __future__ import annotations

import json

import altair as alt
import pandas as pd

from perfboard import charts


def layers(chart) -> list[dict]:  # type: ignore[no-untyped-def]
    spec = chart.to_dict()
    return spec["layer"]


def data_of(chart, layer: dict) -> list[dict]:  # type: ignore[no-untyped-def]
    """A layer's rows (Altair moves each layer's frame into the top-level datasets)."""
    return chart.to_dict()["datasets"][layer["data"]["name"]]


MILESTONES = pd.DataFrame(
    {
        "ordinal": [0, 1, 2],
        "label": ["0", "1", "2"],
        "value": [10.0, 9.5, 9.7],
        "date": pd.to_datetime(["2020-02-01", "2020-02-04", "2020-02-09"]),
        "pr_number": [None, 22424, 22486],
        "pr_link": [
            None,
            "https://github.com/PaddlePaddle/Paddle/pull/22424",
            "https://github.com/PaddlePaddle/Paddle/pull/22486",
        ],
        "pr_title": [None, None, "Fuse three fc"],
        "description": ["baseline", None, "fc"],
        "speedup": [1.0, 10 / 9.5, 10 / 9.7],
        "release": [None, None, None],
    }
)


def test_a_tooltip_lists_only_the_fields_a_point_has() -> None:
    tip = charts.tooltip([("pr_title:N", "PR title"), ("value:Q", "value (ms)", ".4g")])
    assert tip["expr"] == (
        '{"PR title": isValid(datum["pr_title"]) && datum["pr_title"] !== \'\''
        " ? datum[\"pr_title\"] : datum['no such field: left out'],"
        ' "value (ms)": isValid(datum["value"]) && datum["value"] !== \'\''
        ' ? format(datum["value"], ".4g") : datum[\'no such field: left out\']}'
    )
    dated = charts.tooltip([("date:T", "date", "%Y-%m-%d")])["expr"]
    assert 'timeFormat(datum["date"], "%Y-%m-%d")' in dated


def test_a_tooltip_of_known_rows_tests_only_the_fields_some_rows_lack() -> None:
    rows = pd.DataFrame(
        {
            "value": [1.0, 2.0],
            "pr_title": [None, "fusion"],  # one has it: tested
            "release": [None, ""],  # none has it: left out
            "source": ["a.log", "b.log"],  # both have it: shown without a test
        }
    )
    entries = [
        ("value:Q", "value", ".4g"),
        ("pr_title:N", "PR title"),
        ("release:N", "release"),
        ("source:N", "source"),
    ]
    assert charts.tooltip(entries, rows)["expr"] == (
        '{"value": format(datum["value"], ".4g"),'
        ' "PR title": isValid(datum["pr_title"]) && datum["pr_title"] !== \'\''
        " ? datum[\"pr_title\"] : datum['no such field: left out'],"
        ' "source": datum["source"]}'
    )
    # A field the rows do not have is tested, as without rows.
    assert "isValid" in charts.tooltip([("pr:N", "PR")], rows)["expr"]


def test_compact_sends_text_as_a_dictionary_and_small_whole_numbers_in_32_bits() -> None:
    rows = pd.DataFrame(
        {
            "series": pd.Series(["a · P4", "a · P4", None], dtype="str"),
            "source": ["x.log", "x.log", "y.log"],  # object dtype
            "line": [1, 2, 3],
            "big": [1, 2, 2**40],  # does not fit in 32 bits: kept
            "value": [1.5, None, 2.5],
            "release": [None, None, None],  # Arrow's null type: kept
        }
    )
    packed = charts.compact(rows)
    kinds = {column: str(kind) for column, kind in packed.dtypes.items()}
    assert kinds == {
        "series": "category",
        "source": "category",
        "line": "int32",
        "big": "int64",
        "value": "float64",
        "release": "object",
    }
    assert (
        packed.astype(object)
        .where(packed.notna(), None)
        .equals(rows.astype(object).where(rows.notna(), None))
    )


def test_phase_labels_sit_off_the_line_without_a_y_offset_channel() -> None:
    chart = charts.phase_steps(MILESTONES, "ms", 10.0, None, "date")
    spec = json.dumps(chart.to_dict())
    assert "yOffset" not in spec  # Vega-Lite drops it on a continuous y, with a warning
    texts = [
        layer for layer in layers(chart) if layer["encoding"].get("text", {}).get("field") == "pr"
    ]
    by_side = {layer["mark"]["dy"]: [r["pr"] for r in data_of(chart, layer)] for layer in texts}
    # #22424 stepped down (9.5 after 10): below its level; #22486 up (9.7): above it.
    assert by_side[6] == ["#22424"] and by_side[-6] == ["#22486"]
    # Each right of its point, but the last milestone's, which would run off the chart.
    align = {
        r["pr"]: (layer["mark"]["align"], layer["mark"]["dx"])
        for layer in texts
        for r in data_of(chart, layer)
    }
    assert align == {"#22424": ("left", 8), "#22486": ("right", -8)}
    # Tooltips are the marks' own expressions, never a channel that writes "null".
    channels = json.dumps([layer["encoding"].get("tooltip") for layer in layers(chart)])
    assert "pr_title" not in channels and "description" not in channels
    point = next(layer for layer in layers(chart) if layer["mark"]["type"] == "point")
    assert '"PR title": isValid(datum["pr_title"])' in point["mark"]["tooltip"]["expr"]


POINTS = pd.DataFrame(
    {
        "series": ["a", "a", "b", "b"],
        "series_id": [1, 1, 2, 2],
        "measured_at": pd.to_datetime(["2020-01-06", "2020-02-10"] * 2),
        "version": ["v1", "v2", "v1", None],
        "value": [10.0, 9.5, 20.0, 21.0],
        "samples": [5, 5, None, None],
        "points": [1, 1, 1, 1],
        "source": ["s.jsonl"] * 4,
        "line": [1, 2, 3, 4],
        "pr_number": [None, 22424, None, None],
        "pr_title": [None, "fusion", None, None],
        "pr_link": [None, "https://github.com/PaddlePaddle/Paddle/pull/22424", None, None],
        "release": [None] * 4,
        "batch_size": ["1", "1", "32", "32"],
        "seq_len": ["128"] * 4,
    }
)


def test_trend_lines_zoom_pick_a_line_and_name_the_year() -> None:
    noise = pd.DataFrame(
        {
            "series": ["a"],
            "level": [10.0],
            "cv": [0.01],
            "first": pd.to_datetime(["2020-01-06"]),
            "last": pd.to_datetime(["2020-02-10"]),
        }
    )
    oom = POINTS.iloc[[3]].assign(status="oom", value=None)
    prs = pd.DataFrame(
        {
            "measured_at": pd.to_datetime(["2020-02-04"]),
            "pr": ["#22424"],
            "title": [None],
            "what": ["phase 2: milestone 1"],
            "pr_link": ["https://github.com/PaddlePaddle/Paddle/pull/22424"],
        }
    )
    chart = charts.trend_lines(
        POINTS, "latency", "ms", noise=noise, statuses=oom, prs=prs, interactive=True
    )
    spec = chart.to_dict()
    params = {p["name"]: p for p in spec.get("params", [])}
    params |= {p["name"]: p for layer in spec["layer"] for p in layer.get("params", [])}
    assert params["picked"]["bind"] == "legend" and params["zoom"]["bind"] == "scales"
    assert params["zoom"]["select"]["encodings"] == ["x"]
    axis = next(
        layer["encoding"]["x"]["axis"]
        for layer in spec["layer"]
        if layer["encoding"]["x"].get("axis")
    )
    assert "%Y-%m-%d" in axis["labelExpr"] and axis["labelOverlap"] is True
    # The noise band: level ± 2 cv over the series' span.
    band = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rect")
    [row] = data_of(chart, band)
    assert (row["low"], row["high"]) == (10.0 * 0.98, 10.0 * 1.02)
    # The OOM run: a cross at the bottom edge, its batch size in the tooltip.
    cross = next(layer for layer in spec["layer"] if layer["mark"].get("shape") == "cross")
    [run] = data_of(chart, cross)
    assert (run["what"], run["batch_size"]) == ("OOM (out of memory)", "32")
    assert '"batch size": isValid(datum["batch_size"])' in cross["mark"]["tooltip"]["expr"]
    # The PR: a rule and its number, both opening the PR.
    rules = [layer for layer in spec["layer"] if layer["mark"].get("color") == charts.PR_MARK]
    assert rules and data_of(chart, rules[0])[0]["pr"] == "#22424"
    assert rules[0]["encoding"]["href"]["condition"]["field"] == "pr_link"
    # A description of the chart; a small one keeps its points' own (an SVG), ...
    drawn = [
        layer
        for layer in spec["layer"]
        if layer["mark"]["type"] in ("line", "point") and layer is not cross
    ]
    assert [layer["mark"]["aria"] for layer in drawn] == [True, True]
    assert spec["description"] == "latency (ms) of 2 series over time"
    assert "usermeta" not in spec
    # ... and each point's tooltip tests only the fields some points lack.
    tip = drawn[1]["mark"]["tooltip"]["expr"]
    assert '"series": datum["series"]' in tip and '"first release with it"' not in tip
    assert 'isValid(datum["pr_title"])' in tip
    # Many points go on a canvas, which has no description of each to give.
    days = pd.date_range("2020-01-01", periods=charts.CANVAS_POINTS + 1, freq="D")
    many = pd.concat([POINTS.iloc[[0]]] * len(days), ignore_index=True).assign(measured_at=days)
    big = charts.trend_lines(many, "latency", "ms", interactive=True).to_dict()
    assert big["usermeta"] == {"embedOptions": {"renderer": "canvas"}}
    assert [layer["mark"]["aria"] for layer in big["layer"]] == [False, False]
    assert [p["series"] for p in data_of(chart, drawn[1])] == ["a", "a", "b", "b"]
    static = charts.trend_lines(POINTS, "latency", "ms").to_dict()
    assert all(layer["mark"].get("aria", True) for layer in static["layer"])  # the SVG keeps them


DRIFTS = pd.DataFrame(  # the 10 M store's kind: each line a slow ramp over two years
    {
        "series": ["a", "b"],
        "shape": ["drift", "drift"],
        "kind": ["improvement", "improvement"],
        "change_pct": [-3.4, -3.6],
        "before_at": pd.to_datetime(["2018-03-18", "2018-03-10"]),
        "after_at": pd.to_datetime(["2020-10-10", "2020-10-14"]),
    }
)


def test_a_drift_band_shows_while_its_line_is_picked_when_several_are_drawn() -> None:
    # Eight such bands, each 0.15 opaque and all drawn, laid a wall of green over the
    # 10 M store's Trends; each is now drawn while its line is picked in the legend.
    both = POINTS.assign(measured_at=pd.to_datetime(["2018-01-01", "2020-12-01"] * 2))
    chart = charts.trend_lines(both, "latency", "ms", changes=DRIFTS, interactive=True)
    [band] = [
        layer
        for layer in chart.to_dict()["layer"]
        if layer["mark"]["type"] == "rect" and "before_at" in json.dumps(layer["encoding"])
    ]
    assert band["mark"]["opacity"] == 0.15
    assert band["transform"] == [{"filter": {"param": charts.LEGEND_PICK, "empty": False}}]
    assert [r["series"] for r in data_of(chart, band)] == ["a", "b"]
    # One line drawn, or a static chart (the report's): its bands as before.
    one = both[both.series == "a"]
    alone = charts.trend_lines(one, "latency", "ms", changes=DRIFTS[:1], interactive=True)
    static = charts.trend_lines(both, "latency", "ms", changes=DRIFTS)
    for drawn in (alone, static):
        [band] = [
            layer
            for layer in drawn.to_dict()["layer"]
            if layer["mark"]["type"] == "rect" and "before_at" in json.dumps(layer["encoding"])
        ]
        assert band["mark"]["opacity"] == 0.15 and "transform" not in band


def test_prs_close_together_keep_their_rules_but_only_the_first_its_number() -> None:
    # A phase's eight milestones a week apart on a two-year axis: one number, eight rules
    # (each still a tooltip and a click); the next phase's, four months on, its own.
    at = pd.date_range("2019-05-31", periods=8, freq="7D").append(
        pd.date_range("2019-10-04", periods=8, freq="7D")
    )
    prs = pd.DataFrame(
        {
            "measured_at": at[::-1],  # in any order
            "pr": [f"#{10040 + i}" for i in range(16)][::-1],
            "title": [None] * 16,
            "what": ["milestone"] * 16,
            "pr_link": [None] * 16,
        }
    )
    rules, labels = charts.pr_rules(prs, pd.Timestamp("2018-01-01"), pd.Timestamp("2020-12-31"))
    chart = alt.layer(rules, labels)
    spec = chart.to_dict()
    assert len(data_of(chart, spec["layer"][0])) == 16
    assert [r["pr"] for r in data_of(chart, spec["layer"][1])] == ["#10040", "#10048"]


def test_status_marks_follow_a_parameter_axis() -> None:
    oom = POINTS.iloc[[2, 3]].assign(status="oom", value=None)
    chart = charts.trend_lines(POINTS, "latency", "ms", x_by="batch_size", statuses=oom)
    cross = next(
        layer for layer in chart.to_dict()["layer"] if layer["mark"].get("shape") == "cross"
    )
    assert cross["encoding"]["x"]["field"] == "at"
    # Static (the report's SVG): no selection, so no clipped marks with numbered clip ids.
    assert "params" not in json.dumps(chart.to_dict())
    assert [r["at"] for r in data_of(chart, cross)] == [32.0, 32.0]
