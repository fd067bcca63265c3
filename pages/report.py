"""Report: the weekly report of any week, previewed, and downloaded as one HTML file or
as Markdown with its chart images (to paste into the team's tracking issue)."""

from __future__ import annotations

import io
import zipfile

import pandas as pd
import streamlit as st

from perfboard import queries, report
from perfboard.ui import page_data, query, to_url, url_state, view_title, with_cjk_font

PAGE = "report"  # the scope of this page's pickers in the session
EVERY = ""  # the Project picker's "every project"
PICKER_PX = 260

view_title("Weekly report")
weeks = page_data(queries.report_weeks, empty="Nothing to report yet: ingest some documents first.")
mondays = [monday.date() for monday in pd.to_datetime(weeks.monday)]
labels = [report.week_label(m) for m in mondays]
# Each picker as wide as its longest option, wrapping under the other on a narrow window
# (equal columns cut "every project" to "every projec" at 800 px).
pickers = st.container(horizontal=True, wrap=True, gap="medium")
label = pickers.selectbox(
    "Week (weeks with data, newest first)",
    labels,
    key=url_state(PAGE, "week", labels, report.week_label(report.default_week(weeks))),
    width=PICKER_PX,
)
# "" for every project, not None: a selectbox whose value is None shows "Choose an option".
projects = [EVERY, *sorted(query(queries.projects).project)]
picked = pickers.selectbox(
    "Project",
    projects,
    key=url_state(PAGE, "project", projects, EVERY),
    format_func=lambda p: p or "every project",
    width=PICKER_PX,
)
to_url(PAGE, "week", label)
to_url(PAGE, "project", picked)  # every project: no parameter
project = picked or None

with st.spinner("Writing the report and drawing its charts..."):  # ~5 s cold
    rendered = query(report.render, mondays[labels.index(label)], project)


def markdown_archive() -> bytes:
    """The Markdown and its chart PNGs in one zip, drawn when the button is pressed (the
    PNGs cost seconds; a page run that only previews draws none)."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{rendered.stem}.md", rendered.markdown)
        for name, png in rendered.pngs().items():
            zf.writestr(name, png)
    return archive.getvalue()


buttons = st.container(horizontal=True, wrap=True)  # each button as wide as its words
buttons.download_button(
    "Download HTML",
    rendered.html.encode(),
    file_name=f"{rendered.stem}.html",
    mime="text/html",
    help="One self-contained file: opens in a browser or a mail client, prints cleanly.",
)
buttons.download_button(
    "Download Markdown",
    markdown_archive,
    file_name=f"{rendered.stem}.zip",
    mime="application/zip",
    help="The Markdown and its chart images, to paste into a GitHub issue comment.",
)
# A toggle, not an expander: a collapsed expander's code block is still drawn, and its
# syntax highlighting took 0.25-0.35 s of the browser on every open of this page.
if st.toggle("Markdown, to copy into a GitHub comment", key=f"{PAGE}-markdown"):
    # st.code has a copy button; the text is escaped only where GitHub reads markup.
    st.code(rendered.markdown, language="markdown", wrap_lines=True)
    st.caption(
        "Its charts are linked by file name (the PNGs are in the Markdown download): "
        "GitHub cannot reach them from a comment. After pasting the text, drag each PNG "
        "into the comment box; GitHub uploads it and writes its own image link, which "
        "replaces the file-name one."
    )
st.caption(
    "From the command line: `python -m perfboard.report --week "
    f"{label} --format md|html --out DIR` (add `--post ISSUE_URL` to post it)."
)
# The HTML holds no script and escapes every text it shows (report.to_html): that escaping
# is the defence here. Streamlit's iframe allows scripts and the same origin, so it is a
# frame apart from the page, not a sandbox.
st.iframe(with_cjk_font(rendered.html), height=1400)
