"""Alerts: the change points detection found, grouped by the versions they fall between,
with the PRs suspected of each and the team's triage."""

from __future__ import annotations

import getpass

import pandas as pd
import streamlit as st

from perfboard import alert_issue, alerts, charts, queries, settings
from perfboard.errors import StoreError, UsageError
from perfboard.github_api import GitHubError
from perfboard.links import pr_links, safe_https
from perfboard.markup import md_escape, short_version
from perfboard.queries.labels import MISSING
from perfboard.ui import (
    StoreMissing,
    missing_store_notice,
    query,
    source_line_column,
    source_lines,
    to_url,
    url_text,
    view_title,
    write,
)

PAGE = "alerts"  # the scope of this page's URL state in the session

# How the list can be ordered: the column each sorts on, largest first.
ORDERS = {"size x confidence": "score", "newest first": "after_at"}
# What a change means for its metric (the kind says it, by the series' direction): a
# regression in vermilion, an improvement in green (the charts' Okabe-Ito colours). The
# list is drawn as a pill of that colour: a pandas Styler that coloured the cells cost
# 0.28 s a page run for 977 alerts (it renders every cell as text), the table 2 ms.
KIND_COLOURS = {"regression": "#d55e00", "improvement": "#009e73", "mixed": "#7f7f7f"}


def show_moved_most(ranked: pd.DataFrame, limit: int = 5) -> None:
    """The few open alerts of the latest week of data that matter most."""
    latest = ranked.after_at.max()
    if pd.isna(latest):
        return
    week = ranked[
        (ranked.after_at > latest - pd.Timedelta(days=7))
        & ranked.status.isin(["new", "acknowledged"])
        & ~ranked.within_noise
    ].nlargest(limit, "score")
    if week.empty:
        return
    st.markdown(f"**Moved most in the week to {latest:%Y-%m-%d}**")
    lines = []
    for row in week.itertuples():
        what = md_escape(str(row.largest_series or row.project))
        lines.append(
            f"- [{row.largest_pct:+.1f}% {row.kind}](/alerts?alert={row.alert_key}) · {what}"
            f" · {int(row.series)} series · confidence {row.confidence:.3f}"
        )
    st.markdown("\n".join(lines))


def default_repo() -> str:
    """Where alerts are filed ([notify] issue_repo), "" when not set or unreadable (the
    field then asks for one; `perfboard file-issue` says what is wrong with the file)."""
    try:
        return settings.current().notify.issue_repo or ""
    except UsageError:
        return ""


def bulk_triage(keys: list[str]) -> None:
    """One triage for the selected alerts."""
    with st.form("bulk_triage"):
        st.markdown(f"**Triage the {len(keys)} selected alerts**")
        cols = st.columns([1, 2, 1])
        status = cols[0].selectbox("Status", alerts.STATUSES, index=1)
        note = cols[1].text_input("Note")
        who = cols[2].text_input(
            "Who", value=st.session_state.get("triage_who") or getpass.getuser()
        )
        if st.form_submit_button(f"Set {len(keys)} alerts to this status"):
            st.session_state["triage_who"] = who
            try:
                write(alerts.set_triage_many, keys, status, note, who)
            except (StoreError, ValueError) as error:
                st.error(f"Not saved: {error}. What you typed is still in the form.")
            else:
                st.toast(f"Triage saved for {len(keys)} alerts: {status}.")
                st.rerun()


view_title("Alerts")
try:
    found = query(queries.alerts)
except StoreMissing as missing:
    missing_store_notice(str(missing))
    st.stop()
outliers = query(queries.latest_outliers)
if found.empty and outliers.empty:
    st.info(
        "No change detected yet. `python -m perfboard detect` looks for change points in "
        "every series (each ingest does it for the series it touched)."
    )
    st.stop()

# One alert, when the link names one (by its key), else the list.
asked = url_text("alert")
if asked not in set(found.alert_key):
    if not outliers.empty:
        st.subheader(f"Newest values outside their series' noise ({len(outliers)})")
        st.caption(
            "Not a change point yet (that takes a few runs after it); worth a look before "
            "the next run."
        )
        outliers["line"] = source_lines(outliers.source_id, outliers.line, outliers.latest_value)
        st.dataframe(
            outliers[
                ["project", "series", "latest_value", "line", "level", "unit", "latest_change_pct"]
            ],
            hide_index=True,
            width="stretch",
            placeholder=MISSING,
            column_config={
                "latest_value": st.column_config.NumberColumn("newest", format="%.4g"),
                "line": source_line_column(of="the newest value"),
                "level": st.column_config.NumberColumn("its level", format="%.4g"),
                "latest_change_pct": st.column_config.NumberColumn("change", format="%+.1f%%"),
            },
        )
    st.subheader(f"Change points ({len(found)} alerts)")
    if found.empty:
        st.info("No change point detected.")
        st.stop()
    ranked = alerts.ranked(found)
    show_moved_most(ranked)
    # Pills, not multiselects: the chosen values stay readable in a narrow window.
    statuses = st.pills(
        "Status", alerts.STATUSES, selection_mode="multi", default=["new", "acknowledged"]
    )
    cols = st.columns(3)
    kinds = cols[0].pills("Kind", list(KIND_COLOURS), selection_mode="multi")
    # Empty is every project: said so, not Streamlit's "Choose options".
    projects = cols[1].multiselect(
        "Project", sorted(found.project.unique()), placeholder="every project"
    )
    order = cols[2].radio(
        "Order",
        list(ORDERS),
        horizontal=True,
        help="size x confidence: |largest change| x"
        " confidence, so a large sure change comes before a small or doubtful one",
    )
    shown = ranked[ranked.status.isin(statuses or alerts.STATUSES)]
    if kinds:
        shown = shown[shown.kind.isin(kinds)]
    if projects:
        shown = shown[shown.project.isin(projects)]
    quiet = int(shown.within_noise.sum())
    if quiet and not st.toggle(f"Show the {quiet} changes within noise", value=False):
        shown = shown[~shown.within_noise]
    shown = shown.sort_values(ORDERS[order], ascending=False, kind="stable")
    shown = shown.assign(open="/alerts?alert=" + shown.alert_key).reset_index(drop=True)
    st.caption(
        f"{len(shown)} of {len(found)} alerts. A regression is a change for the worse by the "
        "series' own direction (latency up, throughput down); confidence is one minus the "
        "step's p-value, counted ten times weaker for a step of a noisy series. A drift is "
        "a gradual change (a ramp between two levels), reported once, not as a staircase. "
        "Within noise: every series of the alert is too noisy to alert on its own. Select "
        "rows to triage them together."
    )
    columns = [
        "open",
        "after_at",
        "project",
        "kind",
        "largest_pct",
        "confidence",
        "series",
        "largest_series",
        "before_version",
        "after_version",
        "noisy_series",
        "drifts",
        "status",
        "note",
    ]
    picked = st.dataframe(
        shown[columns].assign(kind=[[k] if isinstance(k, str) else [] for k in shown.kind]),
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="multi-row",
        key="alert_rows",
        placeholder=MISSING,
        column_config={
            "open": st.column_config.LinkColumn("alert", display_text="open"),
            "after_at": st.column_config.DatetimeColumn("first point after", format="YYYY-MM-DD"),
            "kind": st.column_config.MultiselectColumn(
                "kind", options=list(KIND_COLOURS), color=list(KIND_COLOURS.values())
            ),
            "largest_pct": st.column_config.NumberColumn("largest change", format="%+.1f%%"),
            "series": st.column_config.NumberColumn("series"),
            # Named as a person reads them, not as the columns are ("largest_series").
            "largest_series": st.column_config.TextColumn("moved most", width="large"),
            "before_version": st.column_config.Column("version before"),
            "after_version": st.column_config.Column("version after"),
            "confidence": st.column_config.NumberColumn("confidence", format="%.3f"),
            "drifts": st.column_config.NumberColumn(
                "drifts", help="of its changes, those that are gradual (a ramp), not a step"
            ),
            "noisy_series": st.column_config.NumberColumn(
                "noisy",
                help="series too noisy to alert on their own (smallest visible step > 10 %)",
            ),
        },
    )
    chosen = [str(shown.alert_key.iloc[i]) for i in picked.selection.rows if i < len(shown)]
    if chosen:
        bulk_triage(chosen)
    st.stop()

# -- one alert ------------------------------------------------------------------------------
to_url(PAGE, "alert", asked)
alert = found[found.alert_key == asked].iloc[0]
st.page_link("pages/alerts.py", label="All alerts", icon=":material/arrow_back:")
# A drift: its "before" is where the ramp starts, its "after" where it has arrived.
shape = "Gradual " + alert.kind if alert.drifts == alert.series else alert.kind.capitalize()
st.subheader(
    f"{shape} in {md_escape(alert.project)}: "
    f"{md_escape(short_version(alert.before_version))}"
    f" → {md_escape(short_version(alert.after_version))}"
)
cols = st.columns(4)
cols[0].metric("Largest change", f"{alert.largest_pct:+.1f}%")
cols[1].metric("Series that moved", int(alert.series))
cols[2].metric("Confidence", f"{alert.confidence:.3f}")
cols[3].metric("Status", alert.status)
if alert.noisy_series:
    st.caption(
        f"{int(alert.noisy_series)} of its {int(alert.series)} series are too noisy to alert on"
        " their own (their smallest visible step is above 10 %): their steps are real for"
        " their noise, and count ten times weaker in the confidence."
    )

changes = query(queries.alert_changes, asked)
points = query(queries.series_points, tuple(int(i) for i in changes.series_id[:8]), 2000)
points = points.merge(changes[["series_id", "series"]], on="series_id")
points["pr_link"] = pr_links([None] * len(points), points.pr_repo, points.pr_number)
ok = points[points.status == "ok"]
if not ok.empty:
    units = sorted(changes.unit.dropna().unique())
    chart = charts.trend_lines(
        ok, str(changes.metric.iloc[0]), units[0] if len(units) == 1 else "mixed units"
    )
    # A drift: the band from where its ramp starts (the last point before it) to its end.
    since = changes.before_at.min() if alert.drifts == alert.series else None
    chart = charts.with_change(chart, alert.after_at, since, alert.kind == "improvement")
    st.altair_chart(charts.themed(chart), width="stretch", theme=None)
    if len(changes) > 8:
        st.caption(f"The 8 largest of {len(changes)} changes are drawn.")

st.markdown("**What changed**")
changes["source_link"] = [safe_https(u) for u in changes.source_url]
# The first measurement after the change, one click from its line (the value marked).
changes["line"] = source_lines(changes.source_id, changes.line, changes.first_after)
st.dataframe(
    changes[
        [
            "series",
            "before",
            "after",
            "first_after",
            "line",
            "unit",
            "change_pct",
            "change_abs",
            "p_value",
            "kind",
            "shape",
            "before_at",
            "after_at",
            "source",
            "source_link",
        ]
    ],
    hide_index=True,
    placeholder=MISSING,
    width="stretch",
    column_config={
        "before": st.column_config.NumberColumn(format="%.4g"),
        "after": st.column_config.NumberColumn(format="%.4g"),
        "first_after": st.column_config.NumberColumn(
            "first after",
            format="%.4g",
            help="The first measurement after the change (before and after are levels)",
        ),
        "line": source_line_column(of="the first measurement after"),
        "change_pct": st.column_config.NumberColumn("change", format="%+.2f%%"),
        "change_abs": st.column_config.NumberColumn("change (abs)", format="%+.4g"),
        "p_value": st.column_config.NumberColumn("p", format="%.2g"),
        "source_link": st.column_config.LinkColumn("link", display_text="open"),
    },
)

st.markdown("**Suspected pull requests** (merged between the two sides of the change)")
suspects = query(queries.alert_suspects, asked)
if suspects.empty:
    st.caption(
        "No PR is known to have landed between these versions: walk the repository with"
        " `python -m ingest git` or sync its PRs with `python -m ingest github-prs --all`."
    )
else:
    suspects["link"] = pr_links([None] * len(suspects), suspects.repo, suspects.pr_number)
    st.dataframe(
        suspects[["link", "title", "author", "landed_at", "via", "sha"]],
        hide_index=True,
        width="stretch",
        placeholder=MISSING,  # a milestone's PR: no author or commit known
        column_config={
            "link": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
            "landed_at": st.column_config.DatetimeColumn("landed", format="YYYY-MM-DD HH:mm"),
        },
    )

# The key is one of ours (checked against the alerts above): nothing in it to escape.
st.markdown(
    f"[Explain this change](/explain?alert={asked}): the ops and passes that moved in the "
    "profiles on either side, and the PRs in between, ranked."
)

st.markdown("**Triage**")
with st.form("triage"):
    status = st.selectbox("Status", alerts.STATUSES, index=alerts.STATUSES.index(alert.status))
    note = st.text_area("Note", value="" if pd.isna(alert.note) else str(alert.note))
    who = st.text_input("Who", value=st.session_state.get("triage_who") or getpass.getuser())
    if st.form_submit_button("Save triage"):
        st.session_state["triage_who"] = who
        try:
            write(alerts.set_triage, asked, status, note, who)
        except (StoreError, ValueError) as error:  # busy, or the store refused: said
            st.error(f"Not saved: {error}. What you typed is still in the form.")
        else:
            st.toast(f"Triage saved: {status}.")
            st.rerun()
if not pd.isna(alert.set_by):
    st.caption(f"Last set by {md_escape(alert.set_by)} at {alert.set_at:%Y-%m-%d %H:%M} UTC.")

issue = query(alert_issue.filed_issue, asked)
if issue and safe_https(issue):
    st.markdown(f"Filed as [{md_escape(issue)}]({safe_https(issue)}).")
else:
    with st.form("file_issue"):
        st.caption(
            "File this alert as a GitHub issue: its table of series, the suspects and this"
            " page's link (as `python -m perfboard file-issue`)."
        )
        cols = st.columns([2, 1])
        repo = cols[0].text_input("Repository", value=default_repo(), placeholder="OWNER/REPO")
        filer = cols[1].text_input(
            "Who", value=st.session_state.get("triage_who") or getpass.getuser(), key="filer"
        )
        if st.form_submit_button("File an issue"):
            try:
                filed = write(alert_issue.file_issue, asked, repo.strip() or None, filer)
            except (StoreError, UsageError, GitHubError) as error:
                st.error(f"Not filed: {md_escape(str(error))}")
            else:
                st.toast(f"Filed: {filed}")
                st.rerun()
