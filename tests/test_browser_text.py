"""Nothing raw on screen (issue 16, item 2): every page of app.py's navigation on the demo,
and a few deep links, read in a real browser, hold no None / null / undefined / nan / NaN /
NaT / <NA> as a word, and no series named by its raw JSON.

What a page shows is read four ways, because a data grid draws its cells on a canvas (its
accessible cells hold only the rows in view, and "" where it draws "None"):
- the page's text (document.body.innerText, the report preview's frame, the charts' SVG
  text);
- the tables as the server sent them (the Arrow data of each dataframe element on the
  websocket): a missing value in a column that draws it as text is drawn as "None" unless
  the table says what to draw instead (st.dataframe's placeholder);
- the options of every picker (selectbox, multiselect, radio), as formatted by the page;
- the charts' tooltips, by hovering over their marks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from perfboard import db, queries
from tests.test_browser import browser, serving

__all__ = ["browser"]  # a fixture shared with the module it comes from

pytestmark = pytest.mark.browser

# A word, not a part of one: "Nonetheless", "nullable" and "NaNs" are fine. CJK text runs
# into Latin words without a space, so the boundary is an ASCII one, not \b.
RAW = re.compile(r"(?<![A-Za-z0-9_])(?:None|null|undefined|nan|NaN|NaT)(?![A-Za-z0-9_])|<NA>")
# PaddlePaddle/benchmark#380 names an op "null": the empty program, whose time is the
# framework's own overhead. It is the op's name as the document writes it, not a missing
# value: its series are "op/null · ...", its Ops row and picker option "null", and the Ops
# table's caption says what "the op named null" is.
OP_NAMED_NULL = re.compile(r"(?:(?<=op/)|(?<=op named ))null(?![A-Za-z0-9_])")
OP_COLUMNS = {"op", "Op"}
# A series named by its params' JSON ({"batch_size":1, ...}) instead of its label.
# Streamlit's placeholders of a selectbox whose value is None and of an empty multiselect:
# a picker showing nothing, where the page should say what empty means.
EMPTY_PICKERS = ("Choose an option", "Choose options")
PLACEHOLDERS = "inputs => inputs.map(i => i.getAttribute('placeholder'))"
RAW_JSON = re.compile(r"\{\s*\"[^\"]+\"\s*:")
# Grid columns that draw a missing value as nothing (a checkbox, a sparkline, a bar).
DRAWN_BLANK = {"checkbox", "line_chart", "bar_chart", "area_chart", "progress"}
RENDER_TIMEOUT_MS = 60_000
HOVERS_PER_CHART = 40
TOOLTIP_MS = 500


@dataclass
class Sent:
    """What the server sent one browser page: its tables, pickers and whether a run ended."""

    tables: list[tuple[pa.Table, dict, list[str], str | None]] = field(default_factory=list)
    options: list[tuple[str, list[str]]] = field(default_factory=list)
    charts: int = 0
    finished: bool = False


def _listen(sent: Sent, payload: bytes | str) -> None:
    if isinstance(payload, str):
        return
    msg = ForwardMsg.FromString(payload)
    kind = msg.WhichOneof("type")
    if kind == "script_finished":
        sent.finished = msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
        return
    if kind != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return
    element = msg.delta.new_element
    what = element.WhichOneof("type")
    if what == "dataframe":
        frame = element.dataframe
        data = frame.arrow_data.data or frame.lazy_data.initial_chunk.data
        table = pa.ipc.open_stream(data).read_all()
        config = json.loads(frame.columns) if frame.columns else {}
        placeholder = frame.placeholder if frame.HasField("placeholder") else None
        sent.tables.append((table, config, list(frame.column_order), placeholder))
    elif what == "vega_lite_chart":
        sent.charts += 1
    elif what in ("selectbox", "multiselect", "radio"):
        widget = getattr(element, what)
        sent.options.append((widget.label, list(widget.options)))


def table_hits(table: pa.Table, config: dict, order: list[str], placeholder: str | None) -> list:
    """What a grid draws that is raw: a missing value drawn as "None" (no placeholder), and
    text cells holding a raw token."""
    hits = []
    for name in table.column_names:
        if name.startswith("__index_level_"):
            continue  # the index: hidden, or a RangeIndex (never missing)
        column = config.get(name, {})
        if column.get("hidden") or (order and name not in order):
            continue
        values = table.column(name)
        kind = (column.get("type_config") or {}).get("type")
        if pa.types.is_boolean(values.type):
            kind = kind or "checkbox"  # as the grid draws a column of booleans
        if values.null_count and placeholder is None and kind not in DRAWN_BLANK:
            hits.append(f"column {name!r}: {values.null_count} missing values drawn as None")
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            for text in values.drop_null().to_pylist():
                if name in OP_COLUMNS and text == "null":
                    continue  # the op benchmark's op of that name
                if raw(text):
                    hits.append(f"column {name!r}: {text!r}")
    return hits


def tooltips(page) -> list[str]:
    """The tooltips of each chart's marks, hovered over (a sample of at most
    HOVERS_PER_CHART marks a chart, spread over its marks). A mark without a tooltip
    shows none within TOOLTIP_MS."""
    found = []
    shown = (
        "() => { const e = document.getElementById('vg-tooltip-element');"
        " return e && e.classList.contains('visible') ? e.innerText : ''; }"
    )
    for chart in page.locator(".vega-embed").all():
        marks = chart.locator("svg g[aria-roledescription] path, svg path[aria-roledescription]")
        n = marks.count()
        for i in range(0, n, max(1, n // HOVERS_PER_CHART)):
            mark = marks.nth(i)
            if not mark.is_visible():
                continue
            page.mouse.move(0, 0)
            try:
                mark.scroll_into_view_if_needed()
                mark.hover(force=True)
            except PlaywrightError:
                continue  # a mark of no size, or clipped: nothing to point at
            try:
                tip = page.wait_for_function(shown, timeout=TOOLTIP_MS).json_value()
            except PlaywrightTimeout:
                continue
            found.append(tip)
    page.mouse.move(0, 0)
    return found


def read_page(browser, url: str) -> dict[str, list[str]]:
    """Open `url` in a fresh session, wait for its run to finish and its elements to draw,
    and return what is raw in each way it was read."""
    page = browser.new_page(viewport={"width": 1440, "height": 2400})
    sent = Sent()
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: _listen(sent, p)))
    page.goto(url)
    page.locator('[data-testid="stHeading"]').first.wait_for(timeout=RENDER_TIMEOUT_MS)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=RENDER_TIMEOUT_MS,
    )
    deadline = RENDER_TIMEOUT_MS // 100
    while not sent.finished and deadline:  # the run's end, as the server says it
        page.wait_for_timeout(100)
        deadline -= 1
    assert sent.finished, f"{url}: the page's run did not finish"
    if sent.tables:
        page.locator('[role="gridcell"]').first.wait_for(
            state="attached", timeout=RENDER_TIMEOUT_MS
        )
    if sent.charts:
        page.locator(".vega-embed svg").first.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert not page.locator(".stException").count(), f"{url}: an exception is on the page"
    text = [page.evaluate("document.body.innerText")]
    text += [f.evaluate("document.body ? document.body.innerText : ''") for f in page.frames[1:]]
    text += page.locator(".vega-embed svg text").all_text_contents()
    # An empty multiselect shows its placeholder as its input's attribute, not as text (a
    # selectbox's input keeps "Choose an option" there behind its value: not asked).
    empty = page.locator('[data-testid="stMultiSelect"] input[placeholder]')
    text += [p for p in empty.evaluate_all(PLACEHOLDERS) if p]
    hits = {
        "text": [m for t in text for m in _around(t)]
        + [f"a picker shows {empty!r}" for t in text for empty in EMPTY_PICKERS if empty in t],
        "tables": [h for t in sent.tables for h in table_hits(*t)],
        "pickers": [
            f"{label}: {option!r}"
            for label, options in sent.options
            for option in options
            if (raw(option) and not (label in OP_COLUMNS and option == "null"))
            or RAW_JSON.search(option)
        ],
        "tooltips": [m for t in tooltips(page) for m in _around(t)],
    }
    page.close()
    return hits


def raw(text: str) -> bool:
    return bool(RAW.search(OP_NAMED_NULL.sub("", text)))


def _around(text: str) -> list[str]:
    text = OP_NAMED_NULL.sub("", text)
    return [
        text[max(0, m.start() - 60) : m.end() + 30].replace("\n", " / ") for m in RAW.finditer(text)
    ]


@pytest.fixture(scope="module")
def demo_server(demo_db: Path) -> Iterator[tuple[str, dict[str, str]]]:
    conn = db.connect(demo_db, read_only=True)
    alert = str(queries.alerts(conn).alert_key.iloc[0])
    # The two ERNIE profiles: the profile report against the fusion run of 2019-09-11.
    runs = {
        uri.rsplit("/", 1)[-1]: f"{source_id}:0"
        for source_id, uri in conn.execute("SELECT source_id, uri FROM sources").fetchall()
    }
    conn.close()
    links = {
        "one PR": "/prs?pr=22494",
        "one alert": f"/alerts?alert={alert}",
        "one phase": "/phases?phase=1&x=date",
        "two versions": "/compare?a_kind=date&a=2020-02-01&b_kind=date&b=2020-03-29",
        "attribution": "/compare?part=Attribution",
        "an explained alert": f"/explain?alert={alert}",
        "two profiles": "/profiles?run={}&vs={}".format(
            runs["benchmark-165_xreki_profile-report.md"],
            runs["benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md"],
        ),
    }
    with serving(demo_db) as url:
        yield url, links


# The pages of app.py's navigation, by URL path ("" is the Overview).
PAGES = (
    "",
    "phases",
    "trends",
    "prs",
    "compare",
    "explain",
    "profiles",
    "ops",
    "alerts",
    "report",
    "sources",
)
LINKS = (
    "one PR",
    "one alert",
    "one phase",
    "two versions",
    "attribution",
    "an explained alert",
    "two profiles",
)


def test_the_navigation_lists_every_page(demo_server: tuple[str, dict[str, str]], browser) -> None:
    """PAGES is every page of app.py's navigation, as its sidebar links them."""
    url, _ = demo_server
    page = browser.new_page()
    page.goto(url)
    nav = page.locator('[data-testid="stSidebarNav"] a')
    nav.first.wait_for(timeout=RENDER_TIMEOUT_MS)
    paths = sorted(
        a.get_attribute("href").rstrip("/").removeprefix(url).lstrip("/") for a in nav.all()
    )
    page.close()
    assert paths == sorted(PAGES)


def _no_raw(browser, url: str, ways: tuple[str, ...]) -> None:
    hits = read_page(browser, url)
    found = {way: hits[way] for way in ways if hits[way]}
    assert not found, f"{url}: {json.dumps(found, ensure_ascii=False, indent=1)}"


@pytest.mark.parametrize("path", PAGES)
def test_no_page_shows_a_raw_value(
    demo_server: tuple[str, dict[str, str]], browser, path: str
) -> None:
    _no_raw(browser, f"{demo_server[0]}/{path}", ("text", "tables", "pickers"))


@pytest.mark.parametrize("name", LINKS)
def test_no_deep_link_shows_a_raw_value(
    demo_server: tuple[str, dict[str, str]], browser, name: str
) -> None:
    url, links = demo_server
    _no_raw(browser, url + links[name], ("text", "tables", "pickers"))


@pytest.mark.parametrize("path", PAGES)
def test_no_chart_tooltip_shows_a_raw_value(
    demo_server: tuple[str, dict[str, str]], browser, path: str
) -> None:
    _no_raw(browser, f"{demo_server[0]}/{path}", ("tooltips",))


@pytest.mark.parametrize("name", LINKS)
def test_no_chart_tooltip_of_a_deep_link_shows_a_raw_value(
    demo_server: tuple[str, dict[str, str]], browser, name: str
) -> None:
    url, links = demo_server
    _no_raw(browser, url + links[name], ("tooltips",))
