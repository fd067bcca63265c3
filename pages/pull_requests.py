"""Pull requests: every PR the data refers to, and the step it made."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from perfboard import queries
from perfboard.links import pr_links
from perfboard.markup import md_escape
from perfboard.queries.labels import MISSING
from perfboard.ui import (
    page_data,
    query,
    source_line_column,
    source_lines,
    to_url,
    url_state,
    view_title,
)

PAGE = "prs"  # the scope of this page's pickers in the session

view_title("Pull requests")
prs = page_data(
    queries.referenced_prs,
    empty="No PR is referenced yet: phase tables name them in their PR column, and "
    "`python -m ingest pulls FILE.csv` loads what is known of them.",
)

prs["link"] = pr_links(prs.pr_url, prs.pr_repo, prs.pr_number)
columns = {
    "link": st.column_config.LinkColumn("PR", display_text=r"pull/(\d+)"),
    "before": st.column_config.NumberColumn("before", format="%.4g"),
    "after": st.column_config.NumberColumn("after", format="%.4g"),
    "reduction": st.column_config.NumberColumn("measured", format="percent"),
    "description": st.column_config.TextColumn("description", width="large"),
    "date": st.column_config.DateColumn("date", format="YYYY-MM-DD"),
}
shown = [
    "link",
    "title",
    "author",
    "state",
    "phase",
    "milestone",
    "before",
    "after",
    "unit",
    "reduction",
    "reported",
    "disagrees",
    "date",
    "note",
]

# "" for every PR, not None: a selectbox whose value is None shows "Choose an option".
numbers = ["", *sorted({int(n) for n in prs.pr_number}, reverse=True)]
choice = st.selectbox(
    "Pull request",
    numbers,
    key=url_state(PAGE, "pr", numbers, ""),
    format_func=lambda n: f"#{n}" if n else "every PR",
)
to_url(PAGE, "pr", choice)  # every PR: no parameter
if not choice:
    st.dataframe(
        prs[shown], hide_index=True, width="stretch", column_config=columns, placeholder=MISSING
    )
else:
    mine = prs[prs.pr_number == choice]
    first = mine.iloc[0]
    st.subheader(f"#{choice} · {md_escape(first.pr_repo or 'repository not named')}")
    if isinstance(first.title, str):
        known = (first.title, first.author, first.state)
        byline = " · ".join(md_escape(x) for x in known if isinstance(x, str) and x)
        st.markdown(byline)
    else:
        st.caption("Title, author and state not known yet (no facts file or GitHub sync names it).")
    # Any of its rows that knows the link (a row without one holds NaN, which is truthy):
    # the rows' order among equals is not fixed, so the first may be one that does not.
    link = next((url for url in mine.link if isinstance(url, str) and url), None)
    if link:
        st.link_button("Open on GitHub", link)
    for row in mine.itertuples():
        if pd.notna(row.before) and pd.notna(row.after):
            st.metric(
                f"{md_escape(row.phase)} · milestone {md_escape(row.milestone)}",
                f"{row.after:g} {row.unit}",
                delta=f"{row.after - row.before:+.3g} {row.unit} ({row.reduction:.1%} faster)",
                delta_color="inverse",
            )
    # Only what is known of this PR: a PR no phase names has no milestone columns to show.
    known = [c for c in shown if c == "link" or mine[c].notna().any()]
    st.dataframe(
        mine[known], hide_index=True, width="stretch", column_config=columns, placeholder=MISSING
    )
    repo = first.pr_repo if isinstance(first.pr_repo, str) else None
    claimed = query(queries.pr_claims)
    claimed = claimed[(claimed.pr_number == choice) & ((claimed.pr_repo == repo) | (repo is None))]
    st.subheader("What its description claims")
    if claimed.empty:
        st.caption("No claim read: its description is not in the store, or claims nothing.")
    else:
        # Claimed beside measured: the milestones above are what the team's tables measured.
        # Its line marks what it claims to reach: the time after, else the gain, else the
        # factor (a claim's before and after share one line).
        claimed["line"] = source_lines(
            claimed.source_id,
            claimed.line,
            claimed.after.fillna(claimed.percent).fillna(claimed.speedup),
        )
        st.dataframe(
            claimed[["before", "after", "unit", "percent", "speedup", "line", "raw", "source"]],
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
            column_config={
                "percent": st.column_config.NumberColumn("claimed gain", format="%.1f%%"),
                "speedup": st.column_config.NumberColumn("claimed speedup", format="%.3gx"),
                "raw": st.column_config.TextColumn("as written", width="large"),
                "line": source_line_column(of="this claim"),
            },
        )
    on_page = query(queries.pr_page_measurements, repo, int(choice))
    if not on_page.empty:
        st.subheader("What its page measured")
        st.caption(
            "Read from the PR's description and comments (a before/after table, a benchmark's"
            " output): each value with its variant and the line it came from."
        )
        on_page["line"] = source_lines(on_page.pop("source_id"), on_page.line)
        first_columns = ["series", "variant", "value", "unit", "status", "line"]  # in sight
        st.dataframe(
            on_page[[*first_columns, *(c for c in on_page.columns if c not in first_columns)]],
            hide_index=True,
            placeholder=MISSING,
            width="stretch",
            column_config={
                "value": st.column_config.NumberColumn("value", format="%.4g"),
                "raw": st.column_config.TextColumn("as written", width="large"),
                "line": source_line_column(),
            },
        )
    measured = query(queries.pr_measurements, repo, int(choice))
    st.subheader("Measurements at its merge commit")
    if measured.empty:
        st.caption("Nothing was measured at its merge commit (yet).")
    else:
        measured["line"] = source_lines(measured.pop("source_id"), measured.line)
        first_columns = ["project", "series", "value", "unit", "status", "line"]
        st.dataframe(
            measured[[*first_columns, *(c for c in measured.columns if c not in first_columns)]],
            hide_index=True,
            width="stretch",
            placeholder=MISSING,
            column_config={"line": source_line_column()},
        )
