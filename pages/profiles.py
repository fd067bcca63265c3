"""Profiles: one run's op breakdown from its profiler report (events, nested events, the
GpuMemCpy summary, the IR passes that fired), and the diff of two runs: which ops got
faster or slower, which appeared or disappeared, which passes started or stopped firing.

The view is its URL: ``/profiles?run=SOURCE_ID:RUN&vs=SOURCE_ID:RUN``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from perfboard import charts, profiles, queries
from perfboard.links import safe_https
from perfboard.markup import md_escape
from perfboard.profile_views import DiffView, RunView, diff_view, run_view
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
    view_title,
)

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_expander_container import ExpanderContainer

TOP = 30  # bars a chart draws: more than this is not readable as labels
PARENTS = 20  # nested-event expanders drawn; the rest of the parents share one
NOTHING = ""  # "Compare with": no second run
PAGE = "profiles"  # the scope of this page's pickers in the session

view_title("Profiles")
runs = page_data(
    queries.profile_runs,
    empty="No profiler reports yet. `python -m ingest profiles PATH` (or `auto`) reads Paddle "
    "profiler reports (GPU, CPU-only, and the newer layout with a GpuMemCpy Summary and nested "
    "events) and nvprof summaries from logs, issue comments or files.",
)
runs["key"] = [profiles.run_key(s, r) for s, r in zip(runs.source_id, runs.run, strict=True)]
by_key = runs.set_index("key", drop=False)
keys = list(runs.key)


def text(value: object) -> str:
    """A text cell of the runs table, "" for a missing one."""
    return value if isinstance(value, str) else ""


def described(row: Any) -> str:
    """How a run is named in the pickers: date · project/benchmark · heading · size."""
    day = f"{row.date:%Y-%m-%d}" if not pd.isna(row.date) else "undated"
    names = (text(row.project), text(row.benchmark))
    what = "/".join(dict.fromkeys(p for p in names if p))
    heading = text(row.label) or text(row.title) or text(row.uri)
    if len(heading) > 60:
        heading = heading[:59] + "…"
    size = f"{int(row.events)} events"
    return f"{day} · {what or 'no project'} · {heading} · {size} · #{row.key}"


# Named once: the pickers call this for every option on every run.
NAMES = {NOTHING: "— nothing: one run only —"} | {
    row.key: described(row) for row in runs.itertuples(index=False)
}


def describe(key: str) -> str:
    return NAMES.get(key, key)


for name in ("run", "vs"):
    asked = url_text(name)
    if asked and asked not in by_key.index:
        st.warning(
            f"The run {md_escape(asked)} in the link (`{name}=`) holds no profile here: "
            "a run is `SOURCE_ID:RUN`, as the pickers below write it."
        )


left, right = st.columns(2)
a_key = left.selectbox(
    "Run (A)",
    keys,
    key=url_state(PAGE, "run", keys, keys[0]),
    format_func=describe,
    help="Newest first. Pick the run before a change here, and the run after it on the right.",
)
b_options = [NOTHING, *(k for k in keys if k != a_key)]
b_key = right.selectbox(
    "Compare with (B)",
    b_options,
    key=url_state(PAGE, "vs", b_options, NOTHING),
    format_func=describe,
)
to_url(PAGE, "run", a_key)
to_url(PAGE, "vs", b_key)


def source_line(name: str, key: str, view: RunView) -> None:
    """Where the run came from (its document, linked when it has an https link) and what
    kind of report it is."""
    row = by_key.loc[key]
    title = md_escape(text(row.title) or text(row.uri))
    link = safe_https(text(row.url))
    # Parentheses would end the markdown link early: encoded, the URL means the same.
    shown = f"[{title}]({link.replace('(', '%28').replace(')', '%29')})" if link else title
    heading = md_escape(text(row.label))
    st.markdown(f"**{name}** · {shown}" + (f" · {heading}" if heading else ""))
    day = f"{row.date:%Y-%m-%d}" if not pd.isna(row.date) else "date unknown"
    st.caption(
        " · ".join(
            md_escape(p)
            for p in (
                view.layout,
                day,
                text(row.project) and f"project {row.project}",
                text(row.benchmark) and f"benchmark {row.benchmark}",
                text(row.author) and f"by {row.author}",
                f"run {key}",
                text(row.uri),
            )
            if p
        )
    )


def indented(rows: pd.DataFrame, below: int = 0) -> pd.Series:
    """Event names indented by their depth below `below`, as the report indents them."""
    return pd.Series(
        [
            "\u2003" * max(depth - below - 1, 0) + ("↳ " if depth > below else "") + event
            for depth, event in zip(rows.depth, rows.event, strict=True)
        ],
        index=rows.index,
    )


# A table's rows -> the link of each row's line (Links: one run's, made by line_links).
Links = Callable[[pd.Series], list[str | None]]


def line_links(key: str, events: pd.DataFrame) -> Links:
    """The links of lines of run `key`'s report, each marking the time written on it: the
    event's own total there (a row of several threads adds up lines; its link opens the
    first, whose number is that line's own)."""
    source_id = (profiles.parse_run_key(key) or (0, 0))[0]
    written = events.dropna(subset=["total"]).drop_duplicates("line").set_index("line").total

    def links(lines: pd.Series) -> list[str | None]:
        return source_lines(pd.Series(source_id, index=lines.index), lines, lines.map(written))

    return links


EVENT_COLUMNS = {
    # Medium: at 800 px the times and their line stay in sight beside it.
    "event": st.column_config.TextColumn("event", width="medium"),
    "calls": st.column_config.NumberColumn("calls", format="localized"),
    "total": st.column_config.NumberColumn("total (ms)", format="%.6g"),
    "cpu_time": st.column_config.NumberColumn("CPU (ms)", format="%.6g"),
    "gpu_time": st.column_config.NumberColumn("GPU (ms)", format="%.6g"),
    "share": st.column_config.NumberColumn("share of run", format="percent"),
    "ave": st.column_config.NumberColumn("ave (ms)", format="%.4g"),
    "min": st.column_config.NumberColumn("min (ms)", format="%.4g"),
    "max": st.column_config.NumberColumn("max (ms)", format="%.4g"),
    "line": source_line_column(of="this event"),
}


def event_table(rows: pd.DataFrame, links: Links, below: int = 0) -> None:
    shown = rows.assign(event=indented(rows, below), line=links(rows.line))
    columns = ["event", "calls", "total", "cpu_time", "gpu_time", "share", "ave", "min", "max"]
    columns = [c for c in columns if shown[c].notna().any()] + ["threads"]
    # The line beside the total it marks, in sight without scrolling the table sideways.
    columns.insert(columns.index("total") + 1 if "total" in columns else 1, "line")
    st.dataframe(
        shown[columns],
        hide_index=True,
        width="stretch",
        column_config=EVENT_COLUMNS,
        placeholder=MISSING,
    )


def block_name(block: str) -> str:
    return profiles.BLOCK_LABELS.get(block, block.replace("nvprof ", "nvprof: ") + " calls")


def nested_events(rows: pd.DataFrame, links: Links) -> None:
    """The newer report's indented Event Summary: each parent's nested events in an
    expander, the largest parents first."""
    children = rows[rows.depth > 0]
    if children.empty:
        return
    under = profiles.nested_by_parent(rows)
    top = rows[(rows.depth == 0) & rows.path.isin(list(under))]
    parents = [(parent, under[parent.path]) for parent in top.itertuples()]
    st.markdown(f"**Nested events** ({len(children)} under {len(parents)} events)")
    st.caption(
        "The newer report indents the events that ran inside another (its compute, data "
        "preparation, the copies it made). Their time is part of their parent's."
    )
    for parent, nested in parents[:PARENTS]:
        label = (
            f"{md_escape(parent.event)} · {len(nested)} nested · {profiles.ms_text(parent.total)}"
            if pd.notna(parent.total)
            else f"{md_escape(parent.event)} · {len(nested)} nested"
        )
        box = st.expander(label, key=f"nested:{parent.path}", on_change="rerun")
        lazy_table(box, nested, links)
    rest = parents[PARENTS:]
    if rest:
        box = st.expander(
            f"Nested events of {len(rest)} more events", key="nested:*", on_change="rerun"
        )
        lazy_table(box, pd.concat([c for _, c in rest]), links)


def lazy_table(box: ExpanderContainer, rows: pd.DataFrame, links: Links) -> None:
    """The events' table in `box`, drawn once the box is opened: a browser draws the
    tables of closed expanders too, and twenty of them were 0.35 s of the first load of
    a profile with nested events (1.77 -> 1.42 s on the 10 M store)."""
    if box.open:
        with box:
            event_table(rows, links)


def passes_table(passes: pd.DataFrame) -> None:
    fired = passes[passes.subgraphs.fillna(0) > 0]
    st.caption(
        f"{len(passes)} passes ran, {len(fired)} fused subgraphs. A count is left empty "
        "where the log does not say one (a pass that fused nothing, or an analysis pass)."
    )
    st.dataframe(
        passes[["order", "name", "kind", "subgraphs", "line"]],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "name": st.column_config.TextColumn("pass", width="large"),
            "subgraphs": st.column_config.NumberColumn("subgraphs fused", format="%d"),
        },
    )


def breakdown_part(key: str, view: RunView) -> None:
    rows, totals, main = view.rows, view.totals, view.main
    if main is None:
        st.info("This run holds no profile events.")
        return
    total = totals[main]
    ops = rows[(rows.block == main) & (rows.depth == 0)]
    figures = figure_row()
    figures.metric(
        "Total",
        profiles.ms_text(total.total),
        help="From the report's own Ratio column where it has one (so a table cut after a "
        "few rows still gives its run's total), else the sum of the top-level events.",
        width="content",
    )
    figures.metric("Top-level events", f"{len(ops):,}", width="content")
    figures.metric(
        "Listed",
        f"{total.coverage:.0%}",
        help="Share of the total that the rows read account for: below 100% the pasted "
        "table was cut.",
        width="content",
    )
    gpu = ops.gpu_time.sum(min_count=1)
    figures.metric(
        "GPU time",
        f"{gpu / ops.total.sum():.0%} of listed" if pd.notna(gpu) and ops.total.sum() else "–",
        help="A CPU-only report has no GPU time.",
        width="content",
    )
    if not total.complete:
        st.caption(
            f"The table was cut: its rows list {total.coverage:.0%} of the run's "
            f"{profiles.ms_text(total.total)}. Paddle sorts by total, so what is missing took "
            f"less than the last row ({profiles.ms_text(total.smallest)}) each."
        )
    shown = min(len(ops), TOP)
    st.markdown(
        f"**{block_name(main)}**: top-level events by total"
        + (f" (the {shown} largest of {len(ops)})" if len(ops) > shown else "")
    )
    chart = charts.profile_breakdown(ops, top=TOP)
    st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    links = line_links(key, view.events)
    event_table(ops, links)
    nested_events(rows[rows.block == main], links)
    for block in [b for b in dict.fromkeys(rows.block) if b != main]:
        extra = rows[rows.block == block]
        st.markdown(f"**{block_name(block)}**")
        if block == "memcpy":
            st.caption(
                "Copies between host and device as the report sums them (GpuMemcpySync "
                "and GpuMemcpyAsync under their total); share: of the whole report's time. "
                "They are also inside the events that made them."
            )
        event_table(extra, links)
    if "memcpy" not in totals and main == "event":
        st.caption("No GpuMemCpy summary in this report (only the newer layout prints one).")


def diff_part(a_key: str, b_key: str, a: RunView, b: RunView, diffed: DiffView) -> None:
    rows, summary, notes = diffed.rows, diffed.summary, diffed.notes
    if notes:
        st.info("\n".join(f"- {md_escape(note)}" for note in notes))
    # A row that wraps, each figure as wide as it needs: at 800 px six equal columns cut
    # "94,702 ms" to "94…" (as the Overview's figures were).
    figures = figure_row()
    figures.metric("Total A", profiles.ms_text(summary["total_a"]), width="content")
    figures.metric(
        "Total B",
        profiles.ms_text(summary["total_b"]),
        delta=f"{profiles.ms_text(summary['delta'], signed=True)} ({summary['delta_pct']:+.1%})"
        if pd.notna(summary["delta_pct"])
        else None,
        delta_color="inverse",
        width="content",
    )
    figures.metric("Faster / slower", f"{summary['faster']} / {summary['slower']}", width="content")
    figures.metric(
        "Appeared / disappeared",
        f"{summary['appeared']} / {summary['disappeared']}",
        width="content",
    )
    figures.metric("Same (within 1%)", summary["same"], width="content")
    figures.metric(
        "Below a cut",
        summary[profiles.BELOW_A_CUT] + summary[profiles.BELOW_B_CUT],
        help="Listed on one side only, and smaller than the last row of the other side's "
        "cut table: that side may hold it, unlisted. Not counted as appeared or disappeared.",
        width="content",
    )
    block = summary["block"]
    top = rows[(rows.block == block) & (rows.depth == 0)]
    if top.empty:
        st.info("A and B share no kind of profile rows to compare.")
        return
    st.markdown(
        f"**Change by op** ({block_name(str(block))}"
        + (f", the {TOP} largest of {len(top)}" if len(top) > TOP else "")
        + ")"
    )
    chart = charts.profile_diff(top, top=TOP)
    st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    st.caption(
        "Bars: B − A of each op's total, left when B is faster. An op listed on one side "
        "only is drawn pale and dashed at its time on that side: it appeared in B (right) or "
        "disappeared from A (left), as a fused op replaces the ops it fuses. An op missing "
        "from a table cut short whose time is below that table's last row is \"below the "
        "cut\", not drawn: the other side may hold it, unlisted. Share: of A's "
        f"total. Same: within {profiles.SAME_WITHIN:.0%} of A's time of the op."
    )
    nested = st.toggle("Show nested events and other blocks", value=False)
    table = rows if nested else top
    table = table.assign(
        event=indented(table),
        line_a=line_links(a_key, a.events)(table.line_a),
        line_b=line_links(b_key, b.events)(table.line_b),
    )
    st.dataframe(
        table[
            [
                "event",
                "status",
                "total_a",
                "line_a",
                "total_b",
                "line_b",
                "delta",
                "delta_pct",
                "delta_share",
                "calls_a",
                "calls_b",
                "cpu_a",
                "cpu_b",
                "gpu_a",
                "gpu_b",
                "note",
                *(["block"] if nested else []),
            ]
        ],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "event": st.column_config.TextColumn("event", width="medium"),
            "total_a": st.column_config.NumberColumn("A (ms)", format="%.6g"),
            "total_b": st.column_config.NumberColumn("B (ms)", format="%.6g"),
            "line_a": source_line_column("line A", "this event of A"),
            "line_b": source_line_column("line B", "this event of B"),
            "delta": st.column_config.NumberColumn("B − A (ms)", format="%+.4g"),
            "delta_pct": st.column_config.NumberColumn("change", format="percent"),
            "delta_share": st.column_config.NumberColumn("of A's total", format="percent"),
            "calls_a": st.column_config.NumberColumn("calls A", format="localized"),
            "calls_b": st.column_config.NumberColumn("calls B", format="localized"),
            "cpu_a": st.column_config.NumberColumn("CPU A", format="%.6g"),
            "cpu_b": st.column_config.NumberColumn("CPU B", format="%.6g"),
            "gpu_a": st.column_config.NumberColumn("GPU A", format="%.6g"),
            "gpu_b": st.column_config.NumberColumn("GPU B", format="%.6g"),
            "note": st.column_config.TextColumn("note", width="medium"),
        },
    )

    st.markdown("**IR passes**: which fired (fused subgraphs) in each run")
    passes = diffed.passes
    if passes.empty:
        st.caption("Neither run's document holds an IR pass log.")
        return
    st.dataframe(
        passes,
        hide_index=True,
        width="stretch",
        placeholder=MISSING,
        column_config={
            "name": st.column_config.TextColumn("pass", width="large"),
            "subgraphs_a": st.column_config.NumberColumn("subgraphs A", format="%d"),
            "subgraphs_b": st.column_config.NumberColumn("subgraphs B", format="%d"),
            "subgraphs_delta": st.column_config.NumberColumn("B − A", format="%+d"),
            "order_a": st.column_config.NumberColumn("order A", format="%d"),
            "order_b": st.column_config.NumberColumn("order B", format="%d"),
        },
    )


# Worked out once per run (and pair) for every session: perfboard.profile_views.
a_source, a_run = profiles.parse_run_key(a_key) or (0, 0)
view_a = query(run_view, a_source, a_run)
if b_key:
    b_source, b_run = profiles.parse_run_key(b_key) or (0, 0)
    view_b = query(run_view, b_source, b_run)
    st.subheader("Diff: A → B")
    source_line("A", a_key, view_a)
    source_line("B", b_key, view_b)
    diff_part(a_key, b_key, view_a, view_b, query(diff_view, a_source, a_run, b_source, b_run))
    st.subheader("Breakdown of A")
else:
    st.subheader("Breakdown")
    source_line("Run", a_key, view_a)
breakdown_part(a_key, view_a)
if not b_key:
    st.markdown("**IR passes**")
    if view_a.passes.empty:
        st.caption("The run's document holds no IR pass log.")
    else:
        passes_table(view_a.passes)
