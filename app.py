"""perfboard: the dashboard's entry point (`streamlit run app.py`).

Page config, navigation and the sidebar's data freshness; each page is a thin file in
pages/ that asks perfboard.queries and draws what comes back.
"""

from __future__ import annotations

import streamlit as st

from perfboard import queries
from perfboard.ui import (
    StoreMissing,
    cjk_web_font,
    new_data_notice,
    open_links_in_new_tabs,
    query,
    require_sign_in,
)

# An emoji icon is drawn in the browser; a :material/...: one is fetched from
# fonts.gstatic.com on every page load, which tells Google who opens the dashboard.
# The sidebar: "auto" hides it under Streamlit's 768 px breakpoint (a phone, a split
# screen), where it would cover the page; above it, it starts 240 px wide rather than
# ~300, so that an 800 px window leaves the page room for its metrics and filters.
st.set_page_config(page_title="perfboard", page_icon="⏱️", layout="wide", initial_sidebar_state=240)
# Before the navigation and the sidebar: a visitor who may not see the dashboard sees
# neither its pages' names nor its data's freshness (off unless PERFBOARD_AUTH=1).
require_sign_in()

# Sections, as a team reads them: where we stand, why a number moved, what the team
# tracks together, and where the numbers came from.
pages = {
    "Progress": [
        st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
        st.Page("pages/phases.py", title="Phases", icon=":material/stairs:", url_path="phases"),
        st.Page("pages/trends.py", title="Trends", icon=":material/show_chart:", url_path="trends"),
        st.Page(
            "pages/pull_requests.py", title="Pull requests", icon=":material/merge:", url_path="prs"
        ),
    ],
    "Why": [
        st.Page(
            "pages/compare.py",
            title="Compare",
            icon=":material/compare_arrows:",
            url_path="compare",
        ),
        st.Page(
            "pages/explain.py",
            title="Explain a change",
            icon=":material/psychology:",
            url_path="explain",
        ),
        st.Page(
            "pages/profiles.py", title="Profiles", icon=":material/timer:", url_path="profiles"
        ),
        st.Page("pages/ops.py", title="Ops", icon=":material/memory:", url_path="ops"),
    ],
    "Team": [
        st.Page(
            "pages/alerts.py", title="Alerts", icon=":material/notifications:", url_path="alerts"
        ),
        st.Page(
            "pages/report.py", title="Weekly report", icon=":material/summarize:", url_path="report"
        ),
    ],
    "Data": [
        st.Page(
            "pages/sources.py", title="Sources", icon=":material/description:", url_path="sources"
        ),
    ],
}
navigation = st.navigation(pages)

with st.sidebar:
    try:
        last = query(queries.last_ingest)
        st.caption(
            f"Last ingest: {last:%Y-%m-%d %H:%M} UTC" if last is not None else "No ingest yet"
        )
    except StoreMissing:
        st.caption("No database yet")
    new_data_notice()  # an ingest while the page is open: said, and one click shows it
open_links_in_new_tabs()  # a chart's PR link opens GitHub beside the dashboard
cjk_web_font()  # 二期 drawn as itself, not as boxes, on a machine without a CJK font

navigation.run()
