"""Ops: the op benchmark, Paddle against TensorFlow (and any other framework in the data),
per op, config, device and direction: total and GPU time ratios, accuracy beside speed,
where Paddle loses and since when, one op's ratio by Paddle commit, and every result that
found no counterpart. The view is its URL: /ops?op=cumsum&vs=tensorflow."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from perfboard import charts, ops, queries
from perfboard.links import safe_https
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
    url_text,
    url_value,
    view_title,
)

ALL_OPS, ALL_DEVICES, BOTH = "all ops", "all devices", "both"
DIRECTIONS = [BOTH, "forward", "backward"]
TIMES = {"total": "total_time", "GPU": "gpu_time"}
NO_DEVICE = "not named"  # a comparison table that names no device
PILL_PX = 250  # "Paddle 46.68x slower than tensorflow" whole, not cut
MAX_LINES = len(charts.OKABE_ITO)  # more lines than colours is not readable
# The verdict of a ratio, as coloured pills: the words stay readable, the colour carries
# the verdict at a glance (Okabe-Ito vermilion and bluish green, as on every chart).
VERDICT_COLOURS = {"worse": charts.LOSS, "better": charts.GAIN, "same": "#7F7F7F", "–": "#7F7F7F"}
ACCURACY_COLOURS = {"consistent": charts.GAIN, "diff": charts.LOSS}
PAGE = "ops"  # the scope of this page's pickers in the session

# PaddlePaddle/benchmark's op "null" (api/tests/null.py): the empty program, not a gap.
NULL_OP = "null"


def plural(n: int, word: str) -> str:
    """ "1 op", "2 ops"; "1 config and time", "2 configs and times"."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} " + " and ".join(w + "s" for w in word.split(" and "))


def pills(words: pd.Series, verdicts: pd.Series) -> tuple[list[list[str]], list[str], list[str]]:
    """Cells, options and colours of a MultiselectColumn that shows each ratio's words as a
    pill in its verdict's colour (a read-only table: nothing is ever selected)."""
    colour_of = dict(zip(words, verdicts.map(VERDICT_COLOURS), strict=True))
    options = sorted(colour_of)
    return [[w] if w != "–" else [] for w in words], options, [colour_of[o] for o in options]


view_title("Ops")
results = page_data(
    queries.op_results,
    ops.METRICS,
    empty="No op benchmark results yet. Ingest the op benchmark's outputs (v1 and v2 speed "
    "and accuracy logs of PaddlePaddle/benchmark api/) with `python -m ingest opbench PATH`, "
    "or an op comparison table (`| op | paddle-total (ms) | tensorflow-total (ms) |`) with "
    "`python -m ingest tables PATH`.",
)
matched, unmatched = query(ops.matched_results, ops.METRICS)
if matched.empty:
    st.info(
        "No op was measured by Paddle and another framework under the same op name, config id, "
        "device and direction, so there is no ratio to show. The results that found no "
        "counterpart are listed below, each with why."
    )

competitors = ops.competitors(matched)
op_names = sorted(set(matched.op) | set(unmatched.op))
devices = sorted(set(matched.device) | set(unmatched.device))
device_names = [ALL_DEVICES] + [d or NO_DEVICE for d in devices]

# Filters side by side, as many to a row as the window holds: in four fixed columns an 800
# px window cut "tensorflow" to "tensorflov" and "all devices" to "all device".
filters = st.container(horizontal=True, wrap=True)
op_options = [ALL_OPS, *op_names]
op = filters.selectbox(
    "Op",
    op_options,
    key=url_state(PAGE, "op", op_options, ALL_OPS),
    help="One op: its ratio over time by Paddle commit is drawn below the table.",
    width=240,
)
vs = (
    filters.selectbox(
        "Paddle against",
        competitors,
        key=url_state(PAGE, "vs", competitors, competitors[0]),
        width=240,
    )
    if competitors
    else None
)
device_name = filters.selectbox(
    "Device", device_names, key=url_state(PAGE, "device", device_names, ALL_DEVICES), width=240
)
direction = filters.radio(
    "Direction",
    DIRECTIONS,
    key=url_state(PAGE, "direction", DIRECTIONS, BOTH),
    horizontal=True,
    width="content",
)
only_losing = st.toggle(
    "Only where Paddle loses", key=url_value(PAGE, "lose", {"1": True, "0": False}.get, False)
)
wanted_op = url_text("op")  # before the page writes it: what the link asked for
# The defaults (every op, device and direction) are no parameter.
to_url(PAGE, "op", None if op == ALL_OPS else op)
to_url(PAGE, "vs", vs)
to_url(PAGE, "device", None if device_name == ALL_DEVICES else device_name)
to_url(PAGE, "direction", None if direction == BOTH else direction)
to_url(PAGE, "lose", "1" if only_losing else None)
if wanted_op and wanted_op not in op_names:
    st.warning(f"No op named {md_escape(wanted_op)} in the op benchmark results: showing every op.")


def chosen(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the filters keep (op, device, direction; the competitor where there is one)."""
    keep = pd.Series(True, index=frame.index)
    if op != ALL_OPS:
        keep &= frame.op == op
    if device_name != ALL_DEVICES:
        keep &= frame.device == ("" if device_name == NO_DEVICE else device_name)
    if direction != BOTH:
        keep &= frame.task == f"op-{direction}"
    return frame[keep]


view = chosen(matched)
if vs is not None:
    view = view[view.theirs == vs]
    losing = view[view.loses]
    checked = view.accuracy.notna()
    figures = figure_row()
    # A metric's label and a column's help are markdown; the competitor's name is data.
    figures.metric(f"Op configs against {md_escape(vs)}", f"{len(view):,}", width="content")
    figures.metric("Paddle slower", f"{len(losing):,}", width="content")
    figures.metric(
        "Paddle faster", f"{int((view.verdict_total == 'better').sum()):,}", width="content"
    )
    figures.metric(
        "Accuracy: diff",
        f"{int((view.accuracy == 'diff').sum()):,} of {int(checked.sum()):,} checked"
        if checked.any()
        else "not checked",
        width="content",
    )
    if only_losing:
        view = losing

    st.subheader(f"Paddle against {md_escape(vs)}")
    if view.empty:
        st.info(
            f"No op matches these filters{' where Paddle loses' * only_losing}: widen them "
            "(all ops, all devices, both directions) to see more."
        )
    else:
        table = view.assign(
            direction=view.task.map(ops.direction_label),
            device=view.device.replace("", "–"),
            link=[safe_https(u) for u in view.source_url],
            commit=view.version.map(lambda v: v[:10] if isinstance(v, str) else None),
            # Each side's total time, one click from its line (one row of a comparison
            # table holds both: the value says which number to mark).
            paddle_line=source_lines(view.source_id_total, view.line_total, view.paddle_total),
            other_line=source_lines(
                view.other_source_id_total, view.other_line_total, view.other_total
            ),
        )
        total_cells, total_options, total_colours = pills(table.words_total, table.verdict_total)
        gpu_cells, gpu_options, gpu_colours = pills(table.words_gpu, table.verdict_gpu)
        table["words_total"], table["words_gpu"] = total_cells, gpu_cells
        table["accuracy"] = [[a] if isinstance(a, str) else [] for a in table.accuracy]
        unit = table.unit.iloc[0] if table.unit.nunique() == 1 else ""
        per = f" ({unit})" if unit else ""
        st.dataframe(
            table[
                [
                    "op",
                    "config",
                    "device",
                    "direction",
                    "words_total",
                    "ratio_total",
                    "words_gpu",
                    "ratio_gpu",
                    "accuracy",
                    "paddle_total",
                    "paddle_line",
                    "other_total",
                    "other_line",
                    "link",
                    "commit",
                    "measured_at",
                    "max_diff",
                    "parameters",
                ]
            ],
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
            height=min(38 + 35 * len(table), 560),
            column_config={
                "op": st.column_config.TextColumn("op", pinned=True),
                "config": st.column_config.TextColumn(
                    "config", help="The op benchmark's config id; – when the result has none."
                ),
                "paddle_total": st.column_config.NumberColumn(f"Paddle total{per}", format="%.4g"),
                "other_total": st.column_config.NumberColumn(f"{vs} total{per}", format="%.4g"),
                "paddle_line": source_line_column("Paddle line", "Paddle's total time"),
                "other_line": source_line_column(f"{vs} line", f"{md_escape(vs)}'s total time"),
                "ratio_total": st.column_config.NumberColumn(
                    "total ratio",
                    format="%.2f",
                    help=f"Paddle / {md_escape(vs)}, total time: above 1, Paddle is slower."
                    " Sorts by size.",
                ),
                "words_total": st.column_config.MultiselectColumn(
                    "total time", options=total_options, color=total_colours, width=PILL_PX
                ),
                "ratio_gpu": st.column_config.NumberColumn(
                    "GPU ratio",
                    format="%.2f",
                    help=f"Paddle / {md_escape(vs)}, GPU (kernel) time.",
                ),
                "words_gpu": st.column_config.MultiselectColumn(
                    "GPU time", options=gpu_options, color=gpu_colours, width=PILL_PX
                ),
                "accuracy": st.column_config.MultiselectColumn(
                    "accuracy",
                    width=110,
                    options=list(ACCURACY_COLOURS),
                    color=list(ACCURACY_COLOURS.values()),
                    help="The op's latest accuracy check against the other framework: "
                    f"consistent (max diff within {ops.ATOL:g}, or the check said so), diff, "
                    "or empty when not checked.",
                ),
                "max_diff": st.column_config.NumberColumn("max diff", format="%.3g"),
                "parameters": st.column_config.TextColumn("arguments", width="medium"),
                "commit": st.column_config.TextColumn("Paddle commit"),
                "measured_at": st.column_config.DatetimeColumn("measured", format="YYYY-MM-DD"),
                "link": st.column_config.LinkColumn("source", display_text="open"),
            },
        )
        null_op = (  # a name that reads like a missing value: say what it is
            " The op named null is the op benchmark's empty program (it feeds one tensor and"
            " runs no op): its time is each framework's own cost of a run."
            if (view.op == NULL_OP).any()
            else ""
        )
        st.caption(
            "One row per op, config, device and direction: Paddle's latest result against "
            f"{md_escape(vs)}'s, matched by the op benchmark's own op name and config id. "
            "Ratio = Paddle / other; the largest loss first." + null_op
        )

    # -- one op over time --------------------------------------------------------------------
    if op != ALL_OPS and not view.empty:
        st.subheader(f"{md_escape(op)} over time")
        time_name = st.radio(
            "Ratio of",
            list(TIMES),
            key=url_state(PAGE, "time", list(TIMES), "total"),
            horizontal=True,
        )
        to_url(PAGE, "time", None if time_name == "total" else time_name)
        pairs = ops.history_pairs(view)
        pairs = pairs[pairs.metric == TIMES[time_name]]
        history = query(
            queries.op_history,
            tuple(pairs.pair),
            tuple(int(i) for i in pairs.ours_id),
            tuple(int(i) for i in pairs.theirs_id),
        )
        if history.empty:
            st.info(f"No {time_name} time of {md_escape(op)} was measured by both frameworks.")
        else:
            points = ops.with_words(history.merge(pairs, on="pair"))
            lines = list(dict.fromkeys(points.pair))
            if len(lines) > MAX_LINES:
                st.caption(
                    f"{len(lines)} configs; the first {MAX_LINES} are drawn: pick a device or "
                    "a direction to see the others."
                )
            chart = charts.ratio_lines(
                points[points.pair.isin(lines[:MAX_LINES])],
                f"Paddle / {vs}, {time_name} time (log scale)",
                "parity · above: Paddle slower",
            )
            # Dates on the time axis: one commit alone is otherwise labelled "Wed 06".
            dated = charts.themed(chart).configure_axisX(format="%Y-%m-%d", labelAngle=0)
            st.altair_chart(dated, width="stretch", theme=None)
            st.caption(
                "One point per Paddle commit: Paddle's value against the other framework's at "
                "the same commit, else its last value measured before it."
            )
    else:
        to_url(PAGE, "time", None)  # no op's history drawn: no time to pick
        if op == ALL_OPS:
            st.caption("Pick an op to see its ratio over time by Paddle commit.")
    st.page_link(
        "pages/compare.py",
        label="Every Paddle-against-other-framework pair over time: Compare, Paired variants",
        icon=":material/compare_arrows:",
        query_params={"part": "Paired variants", "dim": "framework", "metric": "total_time"},
    )

    # -- where we lose -----------------------------------------------------------------------
    st.subheader("Where we lose")
    lose = query(ops.losses, ops.losing_pairs(losing if op == ALL_OPS else losing[losing.op == op]))
    if lose.empty:
        st.caption(f"Paddle is at least on par with {md_escape(vs)} on every op shown.")
    else:
        lose = lose.assign(
            direction=lose.task.map(ops.direction_label),
            device=lose.device.replace("", "–"),
            link=[safe_https(u) for u in lose.source_url],
        )
        st.caption(
            f"{plural(lose.op.nunique(), 'op')} ({plural(len(lose), 'config and time')}) where "
            "Paddle is slower at its latest commit, the largest loss first; since: the first "
            "commit of the unbroken run of losing commits that leads up to it."
        )
        st.dataframe(
            lose[
                [
                    "op",
                    "config",
                    "device",
                    "direction",
                    "metric",
                    "words",
                    "factor",
                    "since",
                    "days",
                    "commits",
                    "ours_value",
                    "theirs_value",
                    "measured_at",
                    "link",
                ]
            ],
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
            height=min(38 + 35 * len(lose), 420),
            column_config={
                "op": st.column_config.TextColumn("op", pinned=True),
                "metric": st.column_config.TextColumn("time"),
                "words": st.column_config.TextColumn("by how much", width=PILL_PX),
                "factor": st.column_config.NumberColumn("factor", format="%.2fx"),
                "since": st.column_config.DatetimeColumn("slower since", format="YYYY-MM-DD"),
                "days": st.column_config.NumberColumn("days slower"),
                "commits": st.column_config.NumberColumn("commits slower"),
                "ours_value": st.column_config.NumberColumn("Paddle", format="%.4g"),
                "theirs_value": st.column_config.NumberColumn(vs, format="%.4g"),
                "measured_at": st.column_config.DatetimeColumn("latest", format="YYYY-MM-DD"),
                "link": st.column_config.LinkColumn("source", display_text="open"),
            },
        )

else:
    to_url(PAGE, "time", None)  # no competitor: no op's history drawn

# -- unmatched ------------------------------------------------------------------------------
st.subheader("Results without a counterpart")
alone = chosen(unmatched)
if alone.empty:
    st.caption("Every op result shown found its counterpart.")
else:
    st.caption(
        f"{plural(len(alone), 'result')} compared with nothing: an op, config, device and "
        "direction that only one framework measured, an accuracy check with no speed results "
        "beside it, and the timings the accuracy checks print (which the benchmark says to "
        "ignore)."
    )
    st.dataframe(
        alone.assign(
            direction=alone.task.map(ops.direction_label),
            device=alone.device.replace("", "–"),
            link=[safe_https(u) for u in alone.source_url],
            line=source_lines(alone.source_id, alone.line, alone.value),
        )[
            [
                "op",
                "config",
                "device",
                "direction",
                "framework",
                "why",
                "measured",
                "line",
                "link",
                "measured_at",
            ]
        ],
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            "op": st.column_config.TextColumn("op", pinned=True),
            "why": st.column_config.TextColumn("why", width="large"),
            "line": source_line_column(of="its latest value"),
            "measured_at": st.column_config.DatetimeColumn("measured", format="YYYY-MM-DD"),
            "link": st.column_config.LinkColumn("source", display_text="open"),
        },
    )
