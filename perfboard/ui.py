"""The one module of perfboard/ that knows Streamlit: cached, read-only queries.

Pages call ``query(fn, *args)``: it opens the store read-only for the length of one
query (so an ingest never waits on the dashboard), caches the result under the store's
data version (so fresh data shows on the next run after an ingest, without a restart),
and while an ingest holds the file it serves the last result with an "updating" notice.
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from perfboard import db

T = TypeVar("T")

# Last good result of each query, served while an ingest holds the database; the most
# recently used LAST_GOOD_ENTRIES only, so a long-running server does not grow with them.
LAST_GOOD_ENTRIES = 256
_last_good: OrderedDict[tuple[str, tuple[Any, ...]], Any] = OrderedDict()


class StoreMissing(Exception):
    """No database yet: pages show how to build one."""


@st.cache_data(show_spinner=False, max_entries=256)
def _cached(name: str, version: tuple[int, ...], path: str, args: tuple[Any, ...]) -> Any:
    fn = _REGISTRY[name]
    conn = db.connect(path, read_only=True)
    try:
        return fn(conn, *args)
    finally:
        conn.close()


_REGISTRY: dict[str, Callable[..., Any]] = {}


def query(fn: Callable[..., T], *args: Any) -> T:
    """Run a perfboard.queries function against the store, cached on its data version."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    _REGISTRY[name] = fn
    path = db.db_path()
    if not path.exists():
        raise StoreMissing(str(path))
    try:
        result = _cached(name, db.data_version(path), str(path), args)
    except duckdb.CatalogException:
        # A store made by an older perfboard: the dashboard only reads, so it cannot
        # migrate it; say how.
        st.error(
            f"The store at `{path}` was made by an older perfboard and lacks tables this one "
            "reads. Bring it up to date with `python -m ingest migrate` (or `make run`)."
        )
        st.stop()
    except duckdb.IOException:
        # An ingest holds the write lock: show the last data and say so.
        if (name, args) not in _last_good:
            st.info("The database is being updated; this page will fill in on the next run.")
            st.stop()
        st.caption("Updating: showing the data from before the ingest in progress.")
        # A copy, like st.cache_data gives: pages may change what they are handed.
        return copy.deepcopy(_last_good[(name, args)])
    _last_good[(name, args)] = copy.deepcopy(result)
    _last_good.move_to_end((name, args))
    while len(_last_good) > LAST_GOOD_ENTRIES:
        _last_good.popitem(last=False)
    return result


def page_data(fn: Callable[..., pd.DataFrame], *args: Any, empty: str) -> pd.DataFrame:
    """A page's first query, or the page stops with what to do: no store yet, or `empty`
    when the store holds nothing for this page."""
    try:
        frame = query(fn, *args)
    except StoreMissing as missing:
        missing_store_notice(str(missing))
        st.stop()
    if frame.empty:
        st.info(empty)
        st.stop()
    return frame


def missing_store_notice(path: str) -> None:
    st.warning(
        f"No database at `{path}` yet. Build the demo with `make demo`, or ingest your own "
        "documents with `python -m ingest auto PATH`."
    )


class StoreBusy(Exception):
    """An ingest held the store for longer than a person should wait on a click."""


def write(fn: Callable[..., T], *args: Any, timeout: float = 10.0) -> T:
    """Run one write (a triage) on the store: opened read-write for this call only,
    waiting up to `timeout` s for an ingest to let go of it, else StoreBusy (the page
    keeps what the person typed, so nothing is lost)."""
    path = db.db_path()
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = db.connect(path)
            break
        except duckdb.IOException:
            if time.monotonic() >= deadline:
                raise StoreBusy(
                    "an ingest is writing to the store; try again in a moment"
                ) from None
            time.sleep(0.2)
    try:
        return fn(conn, *args)
    finally:
        conn.close()


def url_state(scope: str, param: str, options: Sequence[Any], default: Any) -> str:
    """The session key of a picker whose value is also query parameter `param` (pass it
    as the widget's key, with no index or default of its own), set up so that the URL
    opens the view it names and every pick survives the rerun it causes.

    Without a key, a widget whose default comes from the URL becomes a new widget when a
    pick rewrites the URL, and the next pick is lost. The URL wins over the widget only
    when it says something the page did not write itself: a link followed, an address
    typed. `scope` (the page) keeps pages that share a parameter name apart.
    """
    widget, written = f"{scope}:{param}", f"{scope}:{param}:in_url"
    by_text = {str(option): option for option in options}
    wanted = st.query_params.get(param)
    if wanted in by_text and wanted != st.session_state.get(written):
        st.session_state[widget] = by_text[wanted]
    if st.session_state.get(widget) not in options:
        st.session_state[widget] = default
    return widget


def to_url(scope: str, param: str, value: Any) -> None:
    """Put a picker's value in the URL (and remember that the page wrote it)."""
    text = "" if value is None else str(value)
    st.session_state[f"{scope}:{param}:in_url"] = text
    if text:
        st.query_params[param] = text
    elif param in st.query_params:
        del st.query_params[param]
