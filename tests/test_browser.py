"""The dashboard in a real browser: Debian's Chromium driven by Playwright.

Skipped when Chromium is missing, unless PERFBOARD_REQUIRE_BROWSER is set (CI sets it),
in which case a missing browser fails. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from tests.conftest import ROOT

CHROMIUM = os.environ.get("PERFBOARD_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = pytest.mark.browser


def require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("PERFBOARD_REQUIRE_BROWSER"):
        pytest.fail(f"{CHROMIUM} is missing and PERFBOARD_REQUIRE_BROWSER is set")
    pytest.skip(f"no Chromium at {CHROMIUM}: browser tests skipped (apt-get install chromium)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(db: Path) -> Iterator[str]:
    """perfboard on `db`, started as `make run` starts it; yields its URL."""
    require_chromium()
    port = free_port()
    env = {**os.environ, "PERFBOARD_DB": str(db)}
    # The server's output goes to a file beside the store, not to a pipe nobody reads: a
    # full pipe (64 KiB of warnings) would block the server mid-page and at shutdown.
    log = open(db.with_suffix(".server.log"), "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "scripts/serve.py",  # as `make run` serves it
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{url}/_stcore/health", timeout=1).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.3)
        else:
            pytest.fail("streamlit did not start within 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a server stuck in a page: stopped anyway
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def server(demo_db: Path) -> Iterator[str]:
    with serving(demo_db) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield b
        b.close()


def test_a_phase_deep_link_opens_that_view_with_its_charts_and_pr_link(
    server: str, browser
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1900})
    # A fresh server's first session, straight to a page: must go through app.py's router.
    page.goto(f"{server}/phases?phase=1&x=date")
    page.get_by_role("heading", name="Phases").wait_for(timeout=30_000)
    page.locator(".vega-embed").nth(1).wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "phases.png"), full_page=True)
    assert page.locator(".vega-embed").count() == 2
    assert page.get_by_text("record date").first.is_visible()
    link = page.locator('a[href="https://github.com/PaddlePaddle/Paddle/pull/22424"]')
    assert link.count() == 1 and link.inner_text() == "#22424"
    # Follow it: GitHub is not reachable here, so a stand-in answers for it.
    page.context.route(
        "https://github.com/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>PR</h1>"),
    )
    with page.expect_popup() as opened:
        link.click()
    assert opened.value.url == "https://github.com/PaddlePaddle/Paddle/pull/22424"
    opened.value.close()
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert nav.get_by_text("Phases").count() == 1 and nav.get_by_text("app").count() == 0
    assert not page.locator(".stException").count()
    page.close()


def test_overview_renders_its_sections(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    page.goto(server)
    page.get_by_role("heading", name="Overview").wait_for(timeout=30_000)
    for heading in ("Headline series", "Phases", "Latest pull requests with a measured effect"):
        page.get_by_role("heading", name=heading).wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').nth(2).wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # let the data grids paint before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)
    # The phase and its PR are in the grids (drawn on canvas; their cells are in the DOM).
    assert page.locator('[role="gridcell"]', has_text="二期优化工作").count() >= 1
    assert page.locator('[role="gridcell"]', has_text="22424").count() >= 1
    assert not page.locator(".stException").count()
    page.close()


def test_trends_draws_the_qa_latencies_along_batch_size(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{server}/trends?metric=latency&benchmark=ernie&x=batch_size")
    page.get_by_role("heading", name="Trends").wait_for(timeout=30_000)
    page.locator(".vega-embed").first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trends.png"), full_page=True)
    assert page.locator(".vega-embed").count() == 1
    assert page.get_by_text("Download these points (CSV)").count() == 1
    assert not page.locator(".stException").count()
    page.close()


@pytest.mark.parametrize(
    ("url", "heading", "name"),
    [("/prs?pr=22424", "Pull requests", "pull_requests"), ("/sources", "Sources", "sources")],
)
def test_the_other_pages_render(server: str, browser, url: str, heading: str, name: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(f"{server}{url}")
    page.get_by_role("heading", name=heading).wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    assert not page.locator(".stException").count()
    page.close()


def test_the_weekly_report_page_previews_the_report(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{server}/report?week=2020-W06")
    page.get_by_role("heading", name="Weekly report").wait_for(timeout=30_000)
    frame = page.frame_locator("iframe").first
    frame.get_by_role("heading", name="Phase progress").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    # inline: the phase-2 steps and the headline series (the simulated nightly history)
    assert frame.locator("svg").count() == 2
    assert page.get_by_role("button", name="Download HTML").count() == 1
    assert not page.locator(".stException").count()
    page.close()


def test_the_html_report_fetches_nothing_and_runs_nothing(browser, tmp_path: Path) -> None:
    """The hostile week's HTML report opened from disk: the only request is the file
    itself, and no dialog opens (no script ran)."""
    from perfboard import db, report
    from tests.test_report import W06, hostile_store

    conn = db.connect(hostile_store(tmp_path), read_only=True)
    path = tmp_path / "hostile.html"
    path.write_text(report.to_html(report.build(conn, W06)), encoding="utf-8")
    conn.close()
    page = browser.new_page()
    asked: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_timeout(500)
    page.mouse.move(10, 10)
    assert asked == [path.as_uri()] and dialogs == []
    assert page.get_by_text("<script>alert(1)</script>").count() >= 1  # shown as text
    page.close()


def test_compare_shows_where_paddle_loses_to_tensorflow(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1500})
    page.goto(f"{server}/compare?part=Paired+variants&dim=framework&metric=total_time")
    page.get_by_role("heading", name="Compare").wait_for(timeout=30_000)
    page.get_by_role("heading", name="Where we lose").wait_for(timeout=30_000)
    page.locator(".vega-embed").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # let the chart and the grid paint before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)
    assert page.get_by_role("tab", name="Paired variants").get_attribute("aria-selected") == "true"
    assert page.locator(".vega-embed").count() == 1
    assert page.locator(".vega-embed text", has_text="parity").count() == 1
    # cumsum, PaddlePaddle/benchmark#380: 86.2771 ms against TensorFlow's 1.8483 ms.
    cells = page.locator('[role="gridcell"]', has_text="Paddle 46.68x slower than tensorflow")
    assert cells.count() >= 1
    assert not page.locator(".stException").count()
    page.close()
