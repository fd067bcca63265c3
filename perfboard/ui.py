"""The one module of perfboard/ that knows Streamlit: cached, read-only queries.

Pages call ``query(fn, *args)``: it opens the store read-only for the length of one
query (so an ingest never waits on the dashboard), caches the result with the version of
what it reads (so fresh data shows on the next run after an ingest that changed it,
without a restart, and the rest stays cached; perfboard.result_cache, bounded in bytes),
and while an ingest holds the file it serves the last result with an "updating" notice.

``require_sign_in()`` is the optional sign-in (Streamlit's OIDC, off by default) that
app.py runs before any page.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from perfboard import db, errors, fonts, lake, queries
from perfboard import provenance as prov
from perfboard.links import safe_https
from perfboard.markup import md_escape
from perfboard.queries import summary
from perfboard.result_cache import (
    EVERY_TABLE,
    Reads,
    ResultCache,
    SeriesSummaries,
    StoreVersions,
    reads_of,
)

T = TypeVar("T")
# What Streamlit serves at app/static/ (server.enableStaticServing): beside app.py.
STATIC = Path(__file__).resolve().parent.parent / "static"

# Every session's query results, newest per query, PERFBOARD_QUERY_CACHE_MB in all (see
# result_cache): what one replica spends on them, next to its pages' working memory.
RESULTS = ResultCache(max_bytes=int(os.environ.get("PERFBOARD_QUERY_CACHE_MB") or 512) * 2**20)
# The version of what each query reads, and the per-series summary the store-wide queries
# start from (queries.summary), one keeper of each per store (see result_cache).
_VERSIONS: dict[str, StoreVersions] = {}
_SUMMARIES: dict[str, SeriesSummaries] = {}
_VERSIONS_LOCK = threading.Lock()


# The server keeps the store's DuckDB instance open between queries (db.keep_open);
# scripts/serve.py turns it on. Off elsewhere: a test or a script writing the store it
# reads in the same process would find it held.
KEEP_STORE_OPEN = os.environ.get("PERFBOARD_KEEP_STORE_OPEN") == "1"


class StoreMissing(Exception):
    """No database yet: pages show how to build one."""


def _read(fn: Callable[..., T], path: Path | str, args: tuple[Any, ...]) -> T:
    if db.writer_waiting(path):  # let it have the file: served as while it holds it
        raise duckdb.IOException("a writer is waiting for the store's lock")
    if KEEP_STORE_OPEN:
        db.keep_open(path)
    conn = db.connect(path, read_only=True)
    try:
        with summary.provided(_summaries(path).current):
            return fn(conn, *args)
    finally:
        conn.close()


def _versions(path: Path | str) -> StoreVersions:
    with _VERSIONS_LOCK:
        found = _VERSIONS.get(str(path))
        if found is None:
            found = _VERSIONS[str(path)] = StoreVersions(
                lambda: db.data_version(path), lambda after: _read(db.change_log, path, (after,))
            )
        return found


def _summaries(path: Path | str) -> SeriesSummaries:
    versions = _versions(path)
    with _VERSIONS_LOCK:
        found = _SUMMARIES.get(str(path))
        if found is None or found.versions is not versions:
            found = _SUMMARIES[str(path)] = SeriesSummaries(versions)
        return found


# What the pages read whatever view they open (their first query, the pickers' choices,
# the Overview's figures): warm_up reads each as the page asks for it, so the first sessions
# of a server find them cached. Issue 16's load test opened 20 views in the first two
# seconds of a server on the 10 M store, and each waited 2.3-3.6 s for these.
def _shared_reads() -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    from perfboard import ops  # pandas work of its own: only when warming up

    return [
        (queries.last_ingest, ()),
        (queries.counts, ()),
        (queries.projects, ()),
        (queries.headline_series, (3,)),
        (queries.referenced_prs, ()),
        (queries.latest_per_series, (None, 2000)),
        (queries.phases, ()),
        (queries.series_catalog, ()),
        (queries.releases, ()),
        (queries.compare_choices, ()),
        (queries.profile_runs, ()),
        (ops.matched_results, (ops.METRICS,)),
        (queries.alerts, ()),
        (queries.latest_outliers, ()),
        (queries.pr_claims, ()),
        (queries.report_weeks, ()),
        (queries.sources, ()),
        (queries.ingest_errors, ()),
    ]


def warm_up(path: Path | str) -> bool:
    """Read what a fresh server's first pages wait for: the chart library (0.5 s to
    import), the store's per-series summary (3 s on 10 M measurements), which every later
    read keeps in step, and the queries every page starts from (_shared_reads). A page that
    asks meanwhile waits for this read instead of making its own. Nothing is said of a
    store that cannot be read now: the first page says it. scripts/serve.py says the server
    is ready for browsers once this has returned. False when the store could not be read."""
    import perfboard.charts  # noqa: F401  (altair)

    if not db.exists(path):
        return False
    try:
        _versions(path).version(EVERY_TABLE)  # the log read up to now, as a query does
        _read(lambda conn: _summaries(path).current(conn), path, ())
        for fn, args in _shared_reads():
            _cached(fn, path, args)
        _warm_paired_variants(path)
        _warm_ops_losses(path)
    except (duckdb.Error, errors.StoreError, OSError):
        return False
    return True


def _warm_paired_variants(path: Path | str) -> None:
    """Compare's Paired variants as it opens, for each dimension: the ratios of its first
    metric's pairs (1.2-2 s to read on the 10 M store, the slowest first view of a page
    in issue 16's load test), kept until an ingest touches one of those pairs' series."""
    from perfboard import compare

    for dimension in compare.DIMENSIONS:
        pairs = _cached(compare.variant_pairs, path, (dimension,))
        if not pairs.empty:
            chosen = pairs[pairs.metric == compare.pair_metrics(pairs)[0]]
            _cached(compare.variant_ratios, path, (compare.pair_rows(chosen), compare.PAIR_POINTS))


def _warm_ops_losses(path: Path | str) -> None:
    """Ops as it opens (every op, against its first competitor): where Paddle loses, the
    walk over every losing pair's history (0.8-1 s on the 10 M store, the slowest first
    view left in issue 16's load test), kept until an ingest touches one of those pairs."""
    from perfboard import ops

    matched, _ = _cached(ops.matched_results, path, (ops.METRICS,))
    rivals = ops.competitors(matched)
    if rivals:
        view = matched[matched.theirs == rivals[0]]
        _cached(ops.losses, path, (ops.losing_pairs(view[view.loses]),))


def warm_report(path: Path | str) -> None:
    """The weekly report as its page opens (report.default_week, every project), once, after
    drawing.start(): the first report of a server process paid 0.4 s more than the next
    (imports, Altair's first charts, each drawing process's first chart). Not read again
    after an ingest: the report reads every table, and 0.6 s of the server's time per
    ingest is not worth one page's first open."""
    from perfboard import report

    try:
        weeks = _cached(queries.report_weeks, path, ())
        if not weeks.empty:
            _cached(report.render, path, (report.default_week(weeks), None))
    except (duckdb.Error, errors.StoreError, OSError):
        pass  # the page says what is wrong when it is opened
    except Exception:  # a report that cannot be drawn: the page shows its error; the
        # server's warm-up thread, which goes on to keep the pages warm, must not end here
        logging.getLogger("perfboard.ui").exception("the report the page opens on failed")


def keep_warm(path: Path | str, seen: Hashable) -> Hashable:
    """After an ingest, read again what warm_up read, before a page asks: the store's
    stamp (db.data_version) as of the last warm read, and what it is now once read.

    Each of those reads is read again only if a commit changed what it reads. Without
    this the first session to open a page after each ingest paid for it, and several at
    once: in issue 16's load test the Overview's and Ops' first runs after an ingest
    waited 1.1-2.7 s. While the ingest still holds the store nothing is read: `seen` is
    handed back, to try again on the next call."""
    try:
        now = db.data_version(path)
    except (duckdb.Error, errors.StoreError, OSError):
        return seen
    if now == seen:
        return seen
    return now if warm_up(path) else seen


def _cached(fn: Callable[..., T], path: Path | str, args: tuple[Any, ...]) -> T:
    """fn(conn, *args) from the shared cache, read when what it reads has changed."""
    key = _key(fn, path, args)
    version = _versions(path).version(reads_of(key[0], args))
    return RESULTS.get(key, version, lambda: _read(fn, path, args))


# PERFBOARD_SLOW_QUERY_SECONDS: a page's query that took longer (cached or not: a wait on
# another session's read counts) is logged with its arguments and the time, to find what
# a slow page waited for under load. Off when unset.
SLOW_QUERY_SECONDS = (
    float(os.environ["PERFBOARD_SLOW_QUERY_SECONDS"])
    if os.environ.get("PERFBOARD_SLOW_QUERY_SECONDS")
    else None
)


def _log_if_slow(fn: Callable[..., Any], args: tuple[Any, ...], seconds: float) -> None:
    if SLOW_QUERY_SECONDS is not None and seconds >= SLOW_QUERY_SECONDS:
        logging.getLogger("perfboard.ui").warning(
            "%s slow query %.3f s: %s.%s%s",
            time.strftime("%H:%M:%S"),
            seconds,
            fn.__module__,
            fn.__qualname__,
            repr(args)[:200],
        )


def _key(fn: Callable[..., Any], path: Path | str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return (f"{fn.__module__}.{fn.__qualname__}", str(path), args)


def query(fn: Callable[..., T], *args: Any) -> T:
    """Run a perfboard.queries function against the store, cached on the version of what
    it reads (result_cache.QUERY_READS)."""
    # app.py checks first; this is for a page run without it (plain `streamlit run`'s
    # legacy pages/ mode runs a deep link's page bare): no data before the sign-in.
    require_sign_in()
    path = db.db_path()
    if not db.exists(path):
        raise StoreMissing(str(path))
    try:
        started = time.perf_counter()
        try:
            return _cached(fn, path, args)
        finally:
            _log_if_slow(fn, args, time.perf_counter() - started)
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
        last = RESULTS.stale(_key(fn, path, args))
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


def _bind(
    scope: str,
    param: str,
    parse: Callable[[str], Any],
    fix: Callable[[Any], Any],
    name_of: Callable[[Any], str] | None = None,
) -> str:
    """The session key of the widget for `param`: set from the URL when the URL says
    something the page did not write itself (`parse`: its text as a value of the widget,
    or None when it is not one), then made a value the widget takes (`fix`).

    A URL without `param`, where the page had written one, is a URL the page did not
    write either (Back, to an entry from before a pick): the widget goes back to its
    default, so that Back shows the view it returns to. With `name_of`, a value the
    page does not have (`?phase=99`) is said, with what is shown instead, rather than
    replaced in silence.
    """
    widget, written = f"{scope}:{param}", f"{scope}:{param}:in_url"
    wanted = st.query_params.get(param)
    if (wanted or "") != st.session_state.get(written, ""):
        value = None
        if wanted:
            try:
                value = parse(wanted)
            except ValueError:  # a date or a number that is not one
                value = None
        if value is not None:
            st.session_state[widget] = value
        else:
            st.session_state.pop(widget, None)  # its default, below
            if wanted and name_of is not None:
                shown = name_of(fix(_UNSET))
                st.warning(
                    f"No {md_escape(param.replace('_', ' '))} {md_escape(wanted)} here: "
                    f"showing {md_escape(shown)}."
                )
    current = st.session_state.get(widget, _UNSET)
    fixed = fix(current)
    # Set only when it changes: a pick the person just made stays as the widget set it.
    if current is _UNSET or fixed != current:
        st.session_state[widget] = fixed
    return widget


def figure_row() -> DeltaGenerator:
    """A row of st.metric figures (each `width="content"`) that wraps onto another line,
    each as wide as its words: in fixed columns an 800 px window cut them ("not c...",
    "-0.66...", "Measurem...")."""
    return st.container(horizontal=True, wrap=True, gap="medium")


def url_state(
    scope: str,
    param: str,
    options: Sequence[Any],
    default: Any,
    name_of: Callable[[Any], str] | None = None,
) -> str:
    """The session key of a picker whose value is also query parameter `param` (pass it
    as the widget's key, with no index or default of its own), set up so that the URL
    opens the view it names and every pick survives the rerun it causes.

    Without a key, a widget whose default comes from the URL becomes a new widget when a
    pick rewrites the URL, and the next pick is lost. The URL wins over the widget only
    when it says something the page did not write itself: a link followed, an address
    typed, Back. `scope` (the page) keeps pages that share a parameter name apart.
    `name_of` (the widget's format_func, say): a URL value that is not among `options`
    is warned about, naming the option shown instead; without it the page says so itself.
    """
    by_text = {str(option): option for option in options}
    return _bind(
        scope,
        param,
        by_text.get,
        lambda v: v if v in options else default,
        (lambda v: name_of(v) if v in options else str(v)) if name_of else None,
    )


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


def url_list(scope: str, param: str, options: Sequence[Any], default: Sequence[Any] = ()) -> str:
    """url_state for a multiselect: `param` is the picks, comma-separated; a pick that is
    not among `options` (any more) is dropped. Nothing picked yet is `default` (those of
    it among `options`), and so is a set of picks none of which is an option any more."""
    by_text = {str(option): option for option in options}
    fallback = [v for v in default if v in options]

    def parse(text: str) -> list[Any] | None:
        picks = [by_text[t] for t in text.split(",") if t in by_text]
        return picks or None  # none of them here: the default

    def fix(value: Any) -> list[Any]:
        if not isinstance(value, list):
            return list(fallback)
        kept = [v for v in value if v in options]
        return kept if kept or not value else list(fallback)

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


def _url_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


def to_url(scope: str, param: str, value: Any, default: Any = _UNSET) -> None:
    """Put a widget's value in the URL (and remember that the page wrote it): a list
    comma-separated; None, "" or an empty list leave `param` out.

    With `default` (the widget's): a default value is not added to a URL that does not
    name it. Streamlit pushes a history entry for each change of the URL, so a page that
    writes its defaults on arrival leaves entries that Back returns to with nothing to
    show (the page writes them again); a URL that names a default keeps it.
    """
    text = _url_text(value)
    if default is not _UNSET and param not in st.query_params and text == _url_text(default):
        text = ""
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


# -- the browser --------------------------------------------------------------------------
# Two small scripts, the only ones perfboard runs in the page: both are constant text (no
# data reaches them), put in with st.html, which Streamlit does not put in an iframe.

# Vega follows a mark's href (a PR) in the tab itself, leaving the dashboard, and
# Streamlit keeps the one setting that would change it (vega-embed's `loader: {target}`)
# out of a chart's spec. So the tab turns its own navigations to another site into new
# tabs: the Navigation API's navigate event, cancelable for a navigation the page
# started, is where every such link arrives, whichever element followed it. A browser
# without the API follows the link in the tab, as before.
_NEW_TABS = """<script>
(() => {
  if (window.perfboardNewTabs || !window.navigation) return;  // once per tab
  window.perfboardNewTabs = true;
  window.navigation.addEventListener("navigate", (event) => {
    const to = new URL(event.destination.url);
    if (to.origin === window.location.origin || !event.cancelable) return;
    if (event.navigationType !== "push" || event.downloadRequest !== null) return;
    event.preventDefault();
    window.open(to.href, "_blank", "noopener,noreferrer");
  });
})();
</script>"""


def open_links_in_new_tabs() -> None:
    """Links a chart follows (a PR's page on GitHub) open in a new tab, not in the
    dashboard's own: once per run of app.py, in the sidebar (it draws nothing)."""
    with st.sidebar:
        st.html(_NEW_TABS, unsafe_allow_javascript=True, width="content")


@functools.cache  # once per process: app.py asks on every page run, and the file is
# made before the server starts (make run)
def cjk_font_faces(families: tuple[str, ...] = ("Source Sans", "Noto Sans CJK SC")) -> str:
    """The @font-face rules of the pages' CJK font (scripts/make_web_font.py says why) for
    these families, CJK characters only; "" when the font was not made (a checkout run
    without `make`: the browser's own fonts, as before). Every weight: headings ask
    "Source Sans" for bold, and a face of weight 400 alone was passed over for Streamlit's
    own, which has no CJK glyph."""
    if not (STATIC / fonts.WEB_FONT).is_file():
        return ""
    # The machine's own Noto Sans CJK SC first, where it has one: nothing to fetch.
    source = (
        'local("Noto Sans CJK SC"), local("NotoSansCJKsc-Regular"),'
        f' url("app/static/{fonts.WEB_FONT}") format("opentype")'
    )
    return "".join(
        f'@font-face {{ font-family: "{family}"; font-style: normal; font-weight: 100 900;'
        f" font-display: swap; src: {source}; unicode-range: {fonts.unicode_range()}; }}\n"
        for family in families
    )


def cjk_web_font() -> None:
    """Chinese drawn in Noto Sans CJK SC wherever the browser's machine has no CJK font: the
    subset font, served from static/, as a face of Streamlit's own "Source Sans" (the
    pages' text and the data grids) and of "Noto Sans CJK SC" (the first font the charts
    name). A browser fetches it once, and only for a page that shows such a character.
    Once per run of app.py; it draws nothing (style alone goes to Streamlit's event
    container)."""
    faces = cjk_font_faces()
    if faces:
        st.html(f"<style>\n{faces}</style>")


def cjk_preview_style() -> str:
    """The <style> with_cjk_font adds to a preview ("" without the font): the one fetch a
    preview makes, the app's own font (tests/test_security.py takes it out, and only it,
    before checking that the rest fetches nothing)."""
    faces = cjk_font_faces(("Noto Sans CJK SC",))
    if not faces:
        return ""
    return f'<style>\n{faces}svg text {{ font-family: "Noto Sans CJK SC", sans-serif; }}\n</style>'


def with_cjk_font(page: str) -> str:
    """An HTML page of perfboard's own (the weekly report) to preview in the dashboard, with
    the pages' CJK font for its text and for its SVG charts' labels (drawn as "sans-serif",
    which no @font-face can name). The preview's own copy only: the report as downloaded
    fetches nothing."""
    style = cjk_preview_style()
    return page.replace("</head>", style + "</head>", 1) if style else page


# The URL as the browser shows it is the view (to_url keeps it so): copied from the page
# itself. navigator.clipboard needs a secure context (https, or localhost); a team server
# on plain http gets the older execCommand copy of a selected text.
_COPY_LINK = """<button type="button" id="{id}" class="perfboard-copy-link"
 title="Copy a link to this view" style="font: inherit; font-size: 0.9rem; color: inherit;
 background: transparent; border: 1px solid rgba(128, 128, 128, 0.5); border-radius: 0.5rem;
 padding: 0.25rem 0.75rem; cursor: pointer; white-space: nowrap;">Copy link</button>
<script>
(() => {{
  const button = document.getElementById("{id}");
  if (!button || button.dataset.ready) return;
  button.dataset.ready = "1";
  const said = (text) => {{
    button.textContent = text;
    setTimeout(() => {{ button.textContent = "Copy link"; }}, 2000);
  }};
  const fallback = (url) => {{
    const area = document.createElement("textarea");
    area.value = url;
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    said(done ? "Copied" : "Copy failed: use the address bar");
  }};
  button.addEventListener("click", () => {{
    const url = window.location.href;
    if (navigator.clipboard && window.isSecureContext) {{
      navigator.clipboard.writeText(url).then(() => said("Copied"), () => fallback(url));
    }} else {{
      fallback(url);
    }}
  }});
}})();
</script>"""


def view_title(title: str) -> None:
    """The page's title with a "Copy link" button beside it: the link opens this view
    (the URL holds it). `title` is the page's own constant text, not data."""
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    with row:
        st.title(title, width="content")
        element = "perfboard-copy-link-" + "".join(c for c in title.lower() if c.isalnum())
        st.html(_COPY_LINK.format(id=element), unsafe_allow_javascript=True, width="content")


# -- provenance ---------------------------------------------------------------------------


def provenance(
    source_id: int,
    line: int,
    value: float | None = None,
    link: bool = True,
    series_id: int | None = None,
) -> None:
    """Where a value came from, in one view: its document, and its line among the lines
    around it with its table's header, the number marked (perfboard/provenance.py).

    `value`: the value to mark among several read on one line (a row of variants); the
    first one read there when None; `series_id`: the series of the value meant. `link`: a
    button to the document's own page. The document's text comes from the store when it
    was kept (small documents), else from its file when that is still here and unchanged.
    """
    values = query(queries.line_values, int(source_id), int(line))
    if values.empty:
        st.warning("That document is not in the store any more.")
        return
    doc = values.iloc[0]
    read = values.dropna(subset=["series_id"])  # (the label of no series is not null)
    # The value meant: the clicked series' (a line may hold several), else the one equal
    # to `value`, else the first read there.
    meant = read
    if series_id is not None and (read.series_id == series_id).any():
        meant = read[read.series_id == series_id]
    elif value is not None and (read.value == value).any():
        meant = read[read.value == value]
    elif value is not None:
        # A number that is no measurement of this line (a profile event's time, a claim):
        # marked as the link gave it, not replaced by another value read there.
        meant = read.iloc[0:0]
    if not meant.empty and pd.notna(meant.value.iloc[0]):
        value = float(meant.value.iloc[0])
    said = "no measurement was read on this line"
    if meant.empty and value is not None:
        others = f"{len(read)} other value{'s' * (len(read) > 1)}"
        said = f"marked: {value:.6g}" + (
            f" ({others} read on this line)" if len(read) else " (no measurement read here)"
        )
    if not meant.empty:
        r = meant.iloc[0]
        said = f"{md_escape(r.series)}: {_shown_value(r.value, r.unit, r.status)}"
        if len(read) > 1:
            said = f"{len(read)} values were read on this line; marked: {said}"
    st.caption(f"**{md_escape(doc.uri)}**, line {line} · {said}")
    found, why = _excerpt(source_id, doc.uri, line, value, read.raw.tolist())
    if found is not None and found.found:
        st.html(prov.to_html(found), width="stretch")
    else:
        written = read.raw.dropna()
        if not written.empty:
            st.code(str(written.iloc[0]), language=None, wrap_lines=True)
        st.caption(why)
    url = safe_https(doc.url) if link else None  # (a page that links it already: no)
    if url:
        st.link_button("Open the document", url)


def _excerpt(
    source_id: int, uri: str, line: int, value: float | None, raws: list[str]
) -> tuple[prov.Excerpt | None, str]:
    """The excerpt of the line, or None and why there is none."""
    text = query(queries.source_text, int(source_id))
    if text is not None:
        return prov.excerpt(text, line, value), "The document has no such line."
    path = Path(uri)
    if not path.is_file():
        return None, (
            "Only the line itself is kept for a document this large, and its file is not on"
            " this machine: the lines around it cannot be shown."
        )
    stat = path.stat()
    lines, first = _file_lines(str(path), stat.st_mtime_ns, stat.st_size, line)
    found = prov.excerpt_of_lines(lines, first, line, value)
    written = next((raw for raw in raws if isinstance(raw, str) and raw), None)
    if written is not None and found.found and found.lines:
        own = dict(found.lines).get(line, "")
        if written.split("\n", 1)[0].strip() != own.strip():
            return None, "The file has changed since it was read: its lines are not shown."
    return found, "The file has no such line any more."


@st.cache_data(max_entries=64, show_spinner=False)
def _file_lines(path: str, mtime_ns: int, size: int, line: int) -> tuple[list[str], int]:
    """prov.lines_from_file, once per file version and line: a rerun of the page (any widget)
    must not read a large log up to the line again. The stat is part of the key."""
    return prov.lines_from_file(Path(path), line)


def _shown_value(value: Any, unit: Any, status: Any) -> str:
    if status != "ok" or value is None or pd.isna(value):
        return str(status)
    return f"{value:.6g} {md_escape(unit or '')}".strip()


def source_lines(
    source_ids: pd.Series, lines: pd.Series, values: pd.Series | None = None
) -> list[str | None]:
    """Each value's link to its line in context (the Sources page): one click from a table
    row to where the number was read. Shown with source_line_column.

    `values`: the number to mark on each line (`&value=`), where the line holds several
    (a Paddle and a TensorFlow time, a claim's before and after) or the value is not a
    measurement (a profile event's time); none: the first measurement read there."""
    marks = [None] * len(lines) if values is None else list(values)
    return [
        _source_line(s, n, v) if pd.notna(s) and pd.notna(n) else None
        for s, n, v in zip(source_ids, lines, marks, strict=True)
    ]


def _source_line(source_id: Any, line: Any, value: Any) -> str:
    link = f"/sources?source={int(source_id)}&line={int(line)}"
    if value is None or pd.isna(value) or not math.isfinite(float(value)):
        return link
    return f"{link}&value={float(value)!r}"  # repr: the float back exactly, to match it


def source_line_column(label: str = "line", of: str = "this value") -> Any:
    """The column of source_lines' links: the line number, opening its context. `label`
    and `of` name it where a row has two (the A and B sides, Paddle and the other)."""
    return st.column_config.LinkColumn(
        label,
        display_text=r"line=(\d+)",
        help=f"Click: the line {of} was read from, among the lines around it",
    )


def url_number(param: str) -> float | None:
    """Query parameter `param` as a finite number, None when absent or not one."""
    try:
        number = float(url_text(param))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


# -- new data while a page is open ------------------------------------------------------------

# How often an open page asks whether an ingest committed new data since it ran: a stat of
# the store's file, and its change log only when that moved (shared by every session).
NEW_DATA_SECONDS = float(os.environ.get("PERFBOARD_NEW_DATA_SECONDS", "30"))
# What is news to a reader: the data the pages show, not a triage or a CI check's run.
NEWS = Reads(
    frozenset(
        {
            "measurements",
            "series",
            "sources",
            "phases",
            "milestones",
            "profile_events",
            "passes",
            "claims",
            "pull_requests",
            "change_points",
        }
    )
)
_SEEN = "perfboard-data-seen"


def new_data_notice() -> None:
    """ "New data since this page loaded", with a button that shows it, when an ingest
    commits while the page is open (checked every NEW_DATA_SECONDS). Call it on every run
    of the app: a full run shows the data of its moment, so that is what it has seen."""
    path = db.db_path()
    if not db.exists(path):
        return
    try:
        st.session_state[_SEEN] = _versions(path).version(NEWS)
    except (duckdb.Error, errors.StoreError, FileNotFoundError, OSError):
        st.session_state.pop(_SEEN, None)  # no store yet, or busy: nothing to compare
        return
    _new_data_check()


@st.fragment(run_every=NEW_DATA_SECONDS)
def _new_data_check() -> None:
    seen = st.session_state.get(_SEEN)
    try:
        now = _versions(db.db_path()).version(NEWS)
    except (duckdb.Error, errors.StoreError, FileNotFoundError, OSError):
        return  # an ingest holds the store: ask again next time
    if seen is None or now == seen:
        return
    st.info("New data since this page loaded.")
    if st.button("Show it", key="perfboard-show-new-data"):
        st.rerun(scope="app")
