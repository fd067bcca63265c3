"""Sources: every ingested document, and where each of its numbers came from."""

from __future__ import annotations

import streamlit as st

from perfboard import queries
from perfboard.links import safe_https
from perfboard.markup import md_escape
from perfboard.queries.labels import MISSING
from perfboard.ui import (
    page_data,
    provenance,
    query,
    to_url,
    url_number,
    url_state,
    url_text,
    url_value,
    view_title,
    whole_number,
)

PAGE = "sources"  # the scope of this page's pickers in the session

view_title("Sources")
sources = page_data(
    queries.sources,
    empty="No documents ingested yet: `python -m ingest auto PATH` reads files or folders.",
)

sources["url"] = sources.url.map(safe_https)
st.dataframe(
    sources.drop(columns=["source_id"]),
    hide_index=True,
    placeholder=MISSING,
    width="stretch",
    column_config={
        "url": st.column_config.LinkColumn("link"),
        "created_at": st.column_config.DatetimeColumn(
            "created", format="YYYY-MM-DD HH:mm", help="the document's own date (a comment's)"
        ),
        "ingested_at": st.column_config.DatetimeColumn("ingested", format="YYYY-MM-DD HH:mm"),
    },
)

ids = [int(i) for i in sources.source_id]
uris = dict(zip(ids, sources.uri, strict=True))
source_id = st.selectbox(
    "Document", ids, key=url_state(PAGE, "source", ids, ids[0]), format_func=uris.__getitem__
)
line = st.number_input(
    "Line (empty: every line)",
    min_value=1,
    value=None,  # may be emptied (every line); Streamlit takes None beside a key
    step=1,
    key=url_value(PAGE, "line", whole_number(low=1), None),  # the widget's bounds: 1 to 2**53 - 1
)
# A link's `value=` is the number to mark on its line: it holds while the view is the
# link's (the same document and line), and goes when another is picked.
linked = url_text("source") == str(source_id) and url_text("line") == str(line)
marked = url_number("value") if linked else None
if not linked and "value" in st.query_params:
    del st.query_params["value"]
to_url(PAGE, "source", source_id)
to_url(PAGE, "line", line)

row = sources[sources.source_id == source_id].iloc[0]
link = safe_https(row.url)
st.caption(
    f"Parser: {md_escape(row.parser)} · kind: {row.kind} · encoding: {row.encoding} · "
    f"status: {row.status} · {row.measurements} measurements, {row.problems} problems"
)
if link:
    st.link_button("Open the document", link)

if line:
    st.subheader(f"Line {int(line)} in its document")
    provenance(source_id, int(line), marked, link=False)

st.subheader("Measurements and the text they were read from")
measured = query(queries.source_measurements, source_id, int(line) if line else None)
if measured.empty:
    st.caption(f"No measurement on line {line}." if line else "This document holds no measurement.")
else:
    # A result file's records keep their fields, not their text: a column of "—" on every
    # row said nothing (the demo's nightly history opens this page).
    textless = not measured.raw.fillna("").astype(bool).any()
    if textless:
        measured = measured.drop(columns="raw")
        st.caption(
            "A result file: its records are read field by field, and their text is not kept "
            "with the values (click a row to see its line in the file)."
        )
    picked = st.dataframe(
        measured,
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={
            "raw": st.column_config.TextColumn("raw text", width="large"),
            "value": st.column_config.NumberColumn("value", format="%.6g"),
            "measured_at": st.column_config.DatetimeColumn("measured", format="YYYY-MM-DD HH:mm"),
            "series_id": None,  # which value of its line a clicked row is (below)
        },
        on_select="rerun",
        selection_mode="single-row",
        key=f"{PAGE}-measured",
    )
    rows = [i for i in picked.selection.rows if i < len(measured)]
    if rows:
        chosen = measured.iloc[rows[0]]
        # Its series: two values of one line can be equal (an OOM row: no value at all).
        provenance(
            source_id,
            int(chosen.line),
            float(chosen.value) if chosen.status == "ok" else None,
            series_id=int(chosen.series_id),
        )
    elif not line:
        st.caption("Click a row: its line is shown among the lines around it.")

st.subheader("What could not be read")
errors = query(queries.source_errors, uris[source_id])
if errors.empty:
    st.caption("Nothing: every line of this document was read.")
else:
    st.dataframe(
        errors,
        hide_index=True,
        placeholder=MISSING,
        width="stretch",
        column_config={"raw": st.column_config.TextColumn("raw text", width="large")},
    )
