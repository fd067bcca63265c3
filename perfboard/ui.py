"""The one module of perfboard/ that knows Streamlit: cached, read-only queries.

Pages call ``query(fn, *args)``: it opens the store read-only for the length of one
query (so an ingest never waits on the dashboard), caches the result with the store's
data version (so fresh data shows on the next run after an ingest, without a restart;
perfboard.result_cache, bounded in bytes), and while an ingest holds the file it serves
the last result with an "updating" notice.

``require_sign_in()`` is the optional sign-in (Streamlit's OIDC, off by default) that
app.py runs before any page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st

from perfboard import db, errors, lake
from perfboard.markup import md_escape
from perfboard.result_cache import ResultCache

T = TypeVar("T")

# Every session's query results, newest per query, PERFBOARD_QUERY_CACHE_MB in all (see
# result_cache): what one replica spends on them, next to its pages' working memory.
RESULTS = ResultCache(max_bytes=int(os.environ.get("PERFBOARD_QUERY_CACHE_MB") or 512) * 2**20)


class StoreMissing(Exception):
    """No database yet: pages show how to build one."""


def _read(fn: Callable[..., T], path: Path | str, args: tuple[Any, ...]) -> T:
    if db.writer_waiting(path):  # let it have the file: served as while it holds it
        raise duckdb.IOException("a writer is waiting for the store's lock")
    conn = db.connect(path, read_only=True)
    try:
        return fn(conn, *args)
    finally:
        conn.close()


def query(fn: Callable[..., T], *args: Any) -> T:
    """Run a perfboard.queries function against the store, cached on its data version."""
    # app.py checks first; this is for a page run without it (plain `streamlit run`'s
    # legacy pages/ mode runs a deep link's page bare): no data before the sign-in.
    require_sign_in()
    path = db.db_path()
    if not db.exists(path):
        raise StoreMissing(str(path))
    key = (f"{fn.__module__}.{fn.__qualname__}", str(path), args)
    try:
        return RESULTS.get(key, db.data_version(path), lambda: _read(fn, path, args))
    except FileNotFoundError:  # a lake that no ingest has written yet
        raise StoreMissing(lake.redacted(path)) from None
    except errors.StoreError as error:  # a PERFBOARD_DB the store cannot be opened with
        st.error(f"The store cannot be read: {md_escape(str(error))}")
        st.stop()
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
        last = RESULTS.stale(key)
        if last is None:
            st.info("The database is being updated; this page will fill in on the next run.")
            st.stop()
        st.caption("Updating: showing the data from before the ingest in progress.")
        return last


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


class StoreBusy(errors.StoreBusy):
    """An ingest held the store for longer than a person should wait on a click."""


def write(fn: Callable[..., T], *args: Any, timeout: float = 10.0) -> T:
    """Run one write (a triage) on the store: opened read-write for this call only
    (db.open_store, as every command opens it), waiting up to `timeout` s for an ingest
    to let go of it, else StoreBusy (the page keeps what the person typed, so nothing is
    lost). Any other failure to open it is the StoreError that says why."""
    try:
        conn = db.open_store(lock_timeout=timeout)
    except errors.StoreBusy:
        raise StoreBusy("an ingest is writing to the store; try again in a moment") from None
    try:
        return fn(conn, *args)
    finally:
        conn.close()


# -- the URL ------------------------------------------------------------------------------
# Every page keeps its view in the URL one way: a widget's session key comes from
# url_state, url_value or url_list (which read the URL), and to_url writes its value back.
# Pages read st.query_params through these only, so a link means the same on every page.

_UNSET = object()  # a widget the session holds no value of yet


def _whole(text: str, low: int, high: int) -> int | None:
    # A link is anyone's text: "²" is a digit to str.isdigit but not to int, 5,000 digits
    # are past int's limit, and a browser number holds 2**53 at most.
    if not (text.isascii() and text.isdigit() and len(text) <= 16):
        return None
    value = int(text)
    return value if low <= value <= high else None


def url_int(param: str, low: int = 0, high: int = 2**53 - 1) -> int | None:
    """Query parameter `param` as a whole number from low to high, else None: each text
    that is not one opens the default view rather than an error."""
    return _whole(st.query_params.get(param, ""), low, high)


def url_text(param: str) -> str:
    """Query parameter `param` as the link gave it ("" when absent): for what a page says
    about the link itself (an op it does not know); a widget's value comes from
    url_state, url_value or url_list."""
    return st.query_params.get(param, "")


def _bind(scope: str, param: str, parse: Callable[[str], Any], fix: Callable[[Any], Any]) -> str:
    """The session key of the widget for `param`: set from the URL when the URL says
    something the page did not write itself (`parse`: its text as a value of the widget,
    or None when it is not one), then made a value the widget takes (`fix`)."""
    widget, written = f"{scope}:{param}", f"{scope}:{param}:in_url"
    wanted = st.query_params.get(param)
    if wanted is not None and wanted != st.session_state.get(written):
        try:
            value = parse(wanted)
        except ValueError:  # a date or a number that is not one
            value = None
        if value is not None:
            st.session_state[widget] = value
    current = st.session_state.get(widget, _UNSET)
    fixed = fix(current)
    # Set only when it changes: a pick the person just made stays as the widget set it.
    if current is _UNSET or fixed != current:
        st.session_state[widget] = fixed
    return widget


def url_state(scope: str, param: str, options: Sequence[Any], default: Any) -> str:
    """The session key of a picker whose value is also query parameter `param` (pass it
    as the widget's key, with no index or default of its own), set up so that the URL
    opens the view it names and every pick survives the rerun it causes.

    Without a key, a widget whose default comes from the URL becomes a new widget when a
    pick rewrites the URL, and the next pick is lost. The URL wins over the widget only
    when it says something the page did not write itself: a link followed, an address
    typed. `scope` (the page) keeps pages that share a parameter name apart.
    """
    by_text = {str(option): option for option in options}
    return _bind(scope, param, by_text.get, lambda v: v if v in options else default)


def url_value(
    scope: str,
    param: str,
    parse: Callable[[str], Any],
    default: Any,
    fits: Callable[[Any], bool] = lambda _: True,
) -> str:
    """url_state for a widget without a list of options (a date, a number, a toggle):
    `parse` makes the URL's text a value the widget takes (None, or ValueError, when it is
    not one), `fits` says whether a value the session holds still suits the widget (a date
    inside its bounds, say); `default` otherwise."""
    return _bind(scope, param, parse, lambda v: v if v is not _UNSET and fits(v) else default)


def url_list(scope: str, param: str, options: Sequence[Any]) -> str:
    """url_state for a multiselect: `param` is the picks, comma-separated; a pick that is
    not among `options` (any more) is dropped, nothing picked is the default."""
    by_text = {str(option): option for option in options}

    def parse(text: str) -> list[Any]:
        return [by_text[t] for t in text.split(",") if t in by_text]

    def fix(value: Any) -> list[Any]:
        return [v for v in value if v in options] if isinstance(value, list) else []

    return _bind(scope, param, parse, fix)


def url_reset(scope: str, *params: str) -> None:
    """Forget the session's picks of these parameters, so that their defaults apply on
    this run (the view they belong to changed) and the URL the page wrote does not bring
    them back."""
    for param in params:
        st.session_state.pop(f"{scope}:{param}", None)


def whole_number(low: int = 0, high: int = 2**53 - 1) -> Callable[[str], int | None]:
    """url_value's parse of a whole number from low to high (as url_int reads one)."""
    return lambda text: _whole(text, low, high)


def to_url(scope: str, param: str, value: Any) -> None:
    """Put a widget's value in the URL (and remember that the page wrote it): a list
    comma-separated; None, "" or an empty list leave `param` out."""
    if isinstance(value, list | tuple):
        text = ",".join(str(v) for v in value)
    else:
        text = "" if value is None else str(value)
    st.session_state[f"{scope}:{param}:in_url"] = text
    if text:
        st.query_params[param] = text
    elif param in st.query_params:
        del st.query_params[param]


def allowed_users() -> frozenset[str]:
    """PERFBOARD_ALLOWED_USERS: the emails that may use the dashboard, comma-separated;
    compared without case, as email providers treat them."""
    listed = os.environ.get("PERFBOARD_ALLOWED_USERS", "")
    return frozenset(e.strip().lower() for e in listed.split(",") if e.strip())


def _auth_configured() -> bool:
    # load_if_toml_exists is False (not an error) when there is no secrets file.
    return st.secrets.load_if_toml_exists() and "auth" in st.secrets


def sign_in_required() -> bool:
    """Off by default. On with PERFBOARD_AUTH=1, or when Streamlit's secrets hold an [auth]
    section and PERFBOARD_ALLOWED_USERS names who may sign in."""
    if os.environ.get("PERFBOARD_AUTH") == "1":
        return True
    return bool(allowed_users()) and _auth_configured()


def require_sign_in() -> None:
    """When sign-in is on, only a signed-in user whose email is on the allow-list goes on
    to the pages; anyone else gets one line and one button (sign in, or sign out), and
    the run stops there. Fails closed: sign-in on without an [auth] section, or with an
    empty allow-list, lets nobody in."""
    if not sign_in_required():
        return
    if not _auth_configured():
        st.error(
            "Sign-in is on (PERFBOARD_AUTH=1) but Streamlit's secrets hold no `[auth]` "
            "section: see the Sign-in part of README.md."
        )
        st.stop()
    if not st.user.get("is_logged_in"):
        st.info("Sign in to see perfboard.")
        if st.button("Sign in"):
            st.login()
        st.stop()
    email = str(st.user.get("email") or "").strip().lower()
    # An identity provider that says the address is unverified does not vouch for it.
    verified = st.user.get("email_verified") is not False
    if not (email and verified and email in allowed_users()):
        st.error(
            f"Signed in as {md_escape(email or 'a user without an email')}, who is not "
            "allowed to see perfboard. Ask its maintainers to add you to "
            "PERFBOARD_ALLOWED_USERS."
        )
        if st.button("Sign out"):
            st.logout()
        st.stop()
