"""Hostile text in a real browser (issue 7): every page and deep link of app.py served on
tests/hostile.py's store and opened in Debian's Chromium. No dialog opens (no script of
the data ran), nothing is fetched from a host other than the server (no image from
evil.example), and once the page has rendered no element holds a javascript: or data:
href, a script that calls alert( or an on* attribute that does; chart points that link
a PR open only https pages. Screenshot: test-artifacts/hostile-overview.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from perfboard.links import safe_https
from tests import hostile
from tests.test_browser import ARTIFACTS, DRAWN, browser, require_chromium, serving

__all__ = ["browser"]  # the fixture, shared with tests/test_browser.py

pytestmark = pytest.mark.browser

# Run in every frame once the page has rendered (the report's preview is an iframe).
LIVE_ATTACKS = """() => {
  const found = [];
  const say = (el, what) => found.push(`${el.tagName.toLowerCase()} ${what}`.slice(0, 200));
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith('on') && value.includes('alert(')) say(el, `${name}=${attr.value}`);
      // Streamlit draws an emoji page icon as an SVG data: URL of its own making.
      const favicon = el.tagName === 'LINK' && /icon/.test(el.rel)
        && value.startsWith('data:image/svg+xml');
      if ((name === 'href' || name === 'xlink:href' || name === 'action' || name === 'formaction')
          && (value.startsWith('javascript:') || value.startsWith('data:')) && !favicon) {
        say(el, `${name}=${attr.value}`);
      }
      if ((name === 'src' || name === 'data') && (value.startsWith('javascript:')
          || value.startsWith('data:text/html') || value.includes('evil.example'))) {
        say(el, `${name}=${attr.value}`);
      }
    }
    if (el.tagName === 'SCRIPT' && el.textContent.includes('alert(')) say(el, el.textContent);
  }
  return found;
}"""

# The centre of every mark of the Vega charts (points, PR labels, bars): Vega draws them
# as SVG here and follows a mark's href itself when it is clicked.
MARKS = """() => [...document.querySelectorAll(
    '.vega-embed svg g.role-mark [role="graphics-symbol"]')].map(mark => {
  const box = mark.getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2,
          mark.getAttribute('aria-label') || ''];
}).filter(([x, y]) => x > 0 && y > 0)"""


@dataclass
class Watch:
    """What the browser did for one view: dialogs, requests, pages it opened, and where
    it was sent (a link followed in the tab itself, as a Vega mark's href is)."""

    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    popups: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    require_chromium()  # before building anything
    store = hostile.build(tmp_path_factory.mktemp("hostile-browser"))
    with serving(store) as url:
        yield url, store


def open_view(browser, server: str, path: str, params: dict[str, str], watch: Watch):  # type: ignore[no-untyped-def]
    """A fresh context (no state from another view) on one view, rendered: its page."""
    context = browser.new_context(viewport={"width": 1400, "height": 2000})
    own = urlsplit(server).netloc

    def route(route) -> None:  # type: ignore[no-untyped-def]
        host = urlsplit(route.request.url).netloc
        if host == own:
            route.continue_()
        elif host == "github.com":
            # A PR link followed. GitHub is not reachable here, and a 204 leaves the tab
            # where it was (a PR mark's link opens a new tab: ui.open_links_in_new_tabs).
            route.fulfill(status=204)
        else:
            route.abort()  # recorded below as a request, and so a failure

    context.route("**/*", route)
    context.on("request", lambda request: watch.requests.append(request.url))
    context.on(
        "request",
        lambda request: (
            request.is_navigation_request()
            and urlsplit(request.url).netloc != own
            and watch.navigations.append(request.url)
        ),
    )
    page = context.new_page()
    context.on("page", lambda opened: watch.popups.append(opened.url))  # after its own page
    page.on("dialog", lambda dialog: (watch.dialogs.append(dialog.message), dialog.dismiss()))
    query = f"?{urlencode(params)}" if params else ""
    page.goto(f"{server}/{path}{query}")
    page.locator("h1").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=60_000
    )
    # Charts draw after the run ends: wait until each has, not a fixed time (a loaded
    # machine took longer than 1.2 s, and the marks test found none).
    page.wait_for_function(DRAWN, timeout=60_000)
    page.wait_for_timeout(1200)  # and the data grids paint
    return page


def live_attacks(page) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for frame in page.frames:
        found += [f"{frame.url[:60]}: {f}" for f in frame.evaluate(LIVE_ATTACKS)]
    return found


def foreign(requests: list[str], server: str) -> list[str]:
    """Requests to anywhere but the server: an http(s) or ws URL of another host, or any
    scheme a page has no business asking (javascript:, data:text/html)."""
    own = urlsplit(server).netloc
    out = []
    for url in requests:
        parts = urlsplit(url)
        elsewhere = parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != own
        if elsewhere or parts.scheme in ("javascript", "file") or url.startswith("data:text/h"):
            out.append(url)
    return out


def test_every_page_keeps_hostile_text_inert(hostile_server: tuple[str, Path], browser) -> None:
    server, store = hostile_server
    problems: list[str] = []
    views = hostile.views(store)
    assert {path for path, _ in views} == set(hostile.PAGES)  # every page of app.py
    for path, params in views:
        watch = Watch()
        page = open_view(browser, server, path, params, watch)
        where = f"/{path}?{urlencode(params)}"
        if path == "":
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "hostile-overview.png"), full_page=True)
        page.mouse.move(5, 5)
        problems += [f"{where}: {found}" for found in live_attacks(page)]
        problems += [f"{where}: dialog {m!r}" for m in watch.dialogs]
        problems += [f"{where}: fetched {u}" for u in foreign(watch.requests, server)]
        problems += [f"{where}: opened {u}" for u in watch.popups]
        problems += [f"{where}: sent to {u}" for u in watch.navigations]
        if page.locator(".stException").count():
            problems.append(f"{where}: an exception is shown")
        page.context.close()
    assert not problems, "\n".join(problems)


def test_the_attacks_are_shown_as_text(hostile_server: tuple[str, Path], browser) -> None:
    """Inert because escaped, not because dropped: the page reads the attack as written."""
    server, _ = hostile_server
    watch = Watch()
    page = open_view(browser, server, "phases", {"phase": "1", "x": "order"}, watch)
    heading = page.locator("h3").first.inner_text()
    assert hostile.SCRIPT in heading and hostile.IMG in heading and hostile.JS_LINK in heading
    caption = page.get_by_text("Owner:").first.inner_text()
    assert hostile.IMAGE in caption and "<script>alert(1)</script>" in caption
    assert not live_attacks(page) and not watch.dialogs
    page.context.close()


def test_chart_points_that_link_a_pr_open_only_github(
    hostile_server: tuple[str, Path], browser
) -> None:
    """Hover and click every mark of the Phases charts (the steps' points and PR labels,
    the waterfall's bars): a tooltip shows the hostile description as text, a mark whose
    PR is known opens that PR on GitHub in a new tab, and the others (#22424, whose html_url is
    javascript:alert(1) and whose milestone names no repository) go nowhere."""
    server, _ = hostile_server
    watch = Watch()
    page = open_view(browser, server, "phases", {"phase": "1", "x": "order"}, watch)
    page.wait_for_function(f"({MARKS})().length >= 10", timeout=60_000)  # the charts are up
    marks = page.evaluate(MARKS)
    assert len(marks) >= 10, marks
    tooltips = []
    for x, y, _ in marks:
        page.mouse.move(x, y)
        page.wait_for_timeout(250)
        tooltip = page.locator("#vg-tooltip-element.visible")
        if tooltip.count():
            tooltips.append(tooltip.inner_text())
            assert not tooltip.locator("img, svg, script, a, iframe, object").count()
        assert not live_attacks(page)
    followed: list[tuple[str, str]] = []
    for x, y, label in marks:
        before = len(watch.navigations)
        page.mouse.click(x, y)
        page.wait_for_timeout(400)
        followed += [(url, label) for url in watch.navigations[before:]]
    assert page.url.startswith(server)  # still on the dashboard
    # A PR mark opens a new tab (ui.open_links_in_new_tabs); it is there that the PR's
    # page is asked for (its request is among watch.navigations, checked below).
    assert all(u == "about:blank" or safe_https(u) == u for u in watch.popups), watch.popups
    assert not live_attacks(page)
    assert len(tooltips) >= 10
    # The descriptions, attacks and all, read as written in the tooltips.
    assert sum(hostile.SCRIPT in text and hostile.IMG in text for text in tooltips) >= 3
    urls = {url for url, _ in followed}
    assert all(safe_https(url) == url for url in urls)
    assert urls == {
        "https://github.com/PaddlePaddle/Paddle/pull/22486",
        "https://github.com/PaddlePaddle/Paddle/pull/22494",
    }, followed
    assert len(followed) >= 4  # a point and a PR label each; the bars too
    assert not watch.dialogs
    prs = "https://github.com/PaddlePaddle/Paddle/pull/"  # the clicks above
    assert not [u for u in foreign(watch.requests, server) if not u.startswith(prs)]
    page.context.close()
