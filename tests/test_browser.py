"""The dashboard in a real browser: Debian's Chromium driven by Playwright.

Skipped when Chromium is missing, unless PERFBOARD_REQUIRE_BROWSER is set (CI sets it),
in which case a missing browser fails. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
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
            # 503 while the server warms up (scripts/serve.py), no answer before it listens
            with contextlib.suppress(requests.ConnectionError):
                if requests.get(f"{url}/_stcore/health", timeout=1).ok:
                    break
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


def test_chinese_is_drawn_in_the_served_cjk_font(server: str, browser) -> None:
    """On a machine with no CJK font (this one has none: Debian's fonts-noto-cjk is not
    installed) 二期优化工作 in the picker, the heading and the grid is drawn with the font
    the server serves (static/, made by `make`), loaded as a face of Streamlit's own
    "Source Sans", not left to the system's fonts as boxes."""
    from perfboard.fonts import WEB_FONT

    assert (ROOT / "static" / WEB_FONT).is_file(), "make the font first: make test does"
    page = rendered(browser, f"{server}/phases?phase=1", charts=1)
    page.wait_for_function(
        """() => [...document.fonts].some(face => face.family.replace(/"/g, '') ===
                 'Source Sans' && face.unicodeRange.includes('U+4E00') &&
                 face.status === 'loaded')""",
        timeout=10_000,
    )
    assert page.evaluate("document.fonts.check('700 28px \"Source Sans\"', '二期优化工作')")
    assert page.get_by_role("heading", name="二期优化工作: ms after each milestone").count() == 1
    page.context.close()


def test_trends_draws_the_qa_latencies_along_batch_size(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{server}/trends?metric=latency&benchmark=ernie&x=batch_size")
    page.get_by_role("heading", name="Trends").wait_for(timeout=30_000)
    page.locator(".vega-embed").first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trends.png"), full_page=True)
    assert page.locator(".vega-embed").count() == 1
    # The run over before the click: a button clicked while the script still runs can be
    # redrawn under the click, and no download comes (seen once on a loaded machine).
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=60_000
    )
    # The points as CSV, written when the button is pressed: the QA table's values.
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download these points (CSV)").click()
    points = pd.read_csv(download.value.path())
    assert {"series", "value", "batch_size", "status"} <= set(points.columns)
    assert {8.664, 36.123, 6.504} <= set(points.value.dropna())
    assert (points.status == "oom").sum() == 2  # seq len 512 at batch sizes 200 and 300
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
    # Its Chinese in the served CJK font (this machine has none), in the preview only.
    frame.locator("body").evaluate(
        """async () => {
             await document.fonts.load('16px "Noto Sans CJK SC"', '二期优化工作');
             const ours = [...document.fonts].filter(face =>
               face.family.replace(/"/g, '') === 'Noto Sans CJK SC');
             if (!ours.some(face => face.status === 'loaded')) throw 'not loaded'; }"""
    )
    assert page.get_by_role("button", name="Download HTML").count() == 1
    # The Markdown to copy: drawn once the toggle asks for it (no highlighting before).
    code = page.locator('[data-testid="stCode"]')
    assert not code.count()
    page.get_by_text("Markdown, to copy into a GitHub comment").click()
    code.first.wait_for(timeout=30_000)
    assert code.first.inner_text().startswith("# perfboard weekly report 2020-W06")
    assert not page.locator(".stException").count()
    page.close()


def test_the_markdown_download_draws_the_charts_it_links(server: str, browser) -> None:
    """The PNGs are drawn only when the button is pressed (report.Rendered.pngs): the zip
    holds the Markdown and one PNG for each image it links."""
    import re
    import zipfile

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/report?week=2020-W06")
    button = page.get_by_role("button", name="Download Markdown")
    button.wait_for(timeout=30_000)
    with page.expect_download(timeout=60_000) as download:
        button.click()
    with zipfile.ZipFile(download.value.path()) as zf:
        names = set(zf.namelist())
        markdown = zf.read("perfboard-2020-W06.md").decode()
        linked = set(re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", markdown))
        assert len(linked) == 2 and names == {"perfboard-2020-W06.md", *linked}
        assert all(zf.read(name).startswith(b"\x89PNG") for name in linked)
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


# -- charts that behave, navigation (issue 16 items 4 and 6) ----------------------------------

# Every mark of the Vega charts with its centre and aria-label (Vega draws them as SVG).
MARKS = """() => [...document.querySelectorAll(
    '.vega-embed svg g.role-mark [role="graphics-symbol"]')].map(mark => {
  const box = mark.getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2,
          mark.getAttribute('aria-label') || ''];
})"""
# Every chart of the page drawn: its SVG holds its marks (a loaded machine draws late).
DRAWN = """() => [...document.querySelectorAll('.vega-embed')].every(
  chart => chart.querySelector('svg g.role-mark'))"""
AXIS_LABELS = """() => [...document.querySelectorAll(
    '.vega-embed svg g.role-axis-label text')].map(t => t.textContent)"""
PR_22424 = "https://github.com/PaddlePaddle/Paddle/pull/22424"


@pytest.fixture(scope="module")
def history_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A small history store: the phase-2 table and twelve weeks of simulated nightly
    runs (data/simulated), nothing else."""
    require_chromium()
    from tests.conftest import ingest

    store = tmp_path_factory.mktemp("history") / "history.duckdb"
    table = "data/samples/benchmark-165_2020-02-04_xreki_phase2-table.md"
    assert ingest("auto", str(ROOT / table), "--db", str(store)) == 0
    nightly = ROOT / "data" / "simulated" / "ernie-p4-nightly.jsonl"
    assert ingest("results", str(nightly), "--db", str(store)) == 0
    with serving(store) as url:
        yield url


def rendered(browser, url: str, width: int = 1400, charts: int = 1, **context: object):  # type: ignore[no-untyped-def]
    """A fresh context on `url`, its run finished and `charts` charts drawn: its page,
    with the console's warnings and errors in page.console."""
    page = browser.new_context(viewport={"width": width, "height": 1600}, **context).new_page()
    page.console = []  # type: ignore[attr-defined]
    page.on("console", lambda m: m.type in ("warning", "error") and page.console.append(m.text))
    page.goto(url)
    page.locator("h1").first.wait_for(timeout=30_000)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=60_000
    )
    if charts:
        page.locator(".vega-embed svg").nth(charts - 1).wait_for(timeout=30_000)
        page.wait_for_function(DRAWN, timeout=30_000)
    page.wait_for_timeout(800)
    return page


def test_a_pr_mark_opens_the_pr_in_a_new_tab_with_labels_clear_of_the_line(
    server: str, browser
) -> None:
    page = rendered(browser, f"{server}/phases?phase=1&x=date", charts=2)
    page.context.route(
        "https://github.com/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>PR</h1>"),
    )
    labels = [m for m in page.evaluate(MARKS) if "pr: #22424" in m[2]]
    assert labels, [m[2] for m in page.evaluate(MARKS)]
    x, y, _ = labels[0]
    with page.expect_popup() as opened:
        page.mouse.click(x, y)
    assert opened.value.url == PR_22424
    assert page.url.startswith(server)  # the dashboard stays in its own tab
    # The PR label sits off its step's line (below it, here), and Vega-Lite had nothing
    # to drop: the console holds no "yOffset dropped".
    assert not [m for m in page.console if "yOffset" in m]
    assert any(label.startswith("2020-02-04") for label in page.evaluate(AXIS_LABELS))
    page.context.close()


def test_phases_tooltips_leave_out_what_a_milestone_lacks(server: str, browser) -> None:
    page = rendered(browser, f"{server}/phases?phase=1&x=order", charts=2)
    texts = []
    for x, y, _ in page.evaluate(MARKS):
        page.mouse.move(x, y)
        page.wait_for_timeout(200)
        tooltip = page.locator("#vg-tooltip-element.visible")
        if tooltip.count():
            texts.append(tooltip.inner_text())
    assert len(texts) >= 3 and any("milestone" in t for t in texts)
    joined = "\n".join(texts)
    assert "null" not in joined and "undefined" not in joined and "NaN" not in joined
    assert "PR title" not in joined  # the demo knows #22424's number, not its title
    page.context.close()


def test_trends_shows_one_model_with_years_and_the_picker_changes_the_lines(
    server: str, browser
) -> None:
    page = rendered(browser, f"{server}/trends")
    picks = page.locator('[data-testid="stMultiSelect"]', has_text="Lines drawn")
    chips = picks.locator("[data-tag]")
    assert chips.count() == 4
    assert all("ernie" in t and "simulated" in t for t in chips.all_inner_texts())
    model = page.locator('[data-testid="stMultiSelect"]', has_text="model / op")
    assert model.locator("[data-tag]").all_inner_texts() == ["ernie"]
    labels = page.evaluate(AXIS_LABELS)
    dated = [t for t in labels if t[:4] == "2020" and t[4] == "-"]
    assert len(dated) >= 4, labels
    assert not [t for t in labels if t[:3].isalpha() and t[3:4] == " "]  # no bare "Feb 04"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trends-default.png"), full_page=True)
    # The picker: take a line out, and the chart and the URL follow.
    from playwright.sync_api import expect  # waits for the condition, not for a time

    chips.first.locator('button[aria-label^="Remove "]').click()
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    expect(chips).to_have_count(3)
    page.wait_for_url("**lines=*")  # the URL follows the pick
    legend = page.locator(".vega-embed svg g.role-legend-label text")
    expect(legend).to_have_count(3, timeout=30_000)  # the chart is drawn again
    page.context.close()


def test_trends_on_a_history_store_marks_the_pr_and_the_oom_runs(
    history_server: str, server: str, browser
) -> None:
    page = rendered(browser, f"{history_server}/trends")
    labels = page.evaluate(AXIS_LABELS)
    assert any(t.startswith("2020-0") for t in labels), labels
    marks = page.evaluate(MARKS)
    assert any("pr: #22424" in label for _, _, label in marks)  # the phase table's PR
    # The wheel zooms the time axis in: the ticks come closer together in time.
    box = page.locator(".vega-embed svg").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 120)
    page.mouse.wheel(0, -600)
    page.wait_for_function(f"({AXIS_LABELS})().join() !== {labels!r}.join()", timeout=5000)
    zoomed = [t for t in page.evaluate(AXIS_LABELS) if t.startswith("2020-")]
    assert zoomed and (min(zoomed), max(zoomed)) != (min(labels), max(labels))
    page.context.close()
    # A date range: the axis holds only February.
    february = rendered(browser, f"{history_server}/trends?dates=2020-02-01..2020-02-29")
    days = [t for t in february.evaluate(AXIS_LABELS) if t.startswith("2020-")]
    assert days and all("2020-02-01" <= t <= "2020-02-29" for t in days), days
    picker = february.locator('[data-testid="stDateInput"] input[type="date"]')
    assert [picker.nth(i).input_value() for i in range(2)] == ["2020-02-01", "2020-02-29"]
    february.context.close()
    # The demo's QA table: Seqlen512 at batch 200 and 300 ran out of memory: two crosses.
    qa = rendered(browser, f"{server}/trends?metric=latency&benchmark=ernie&x=batch_size")
    crosses = [m for m in qa.evaluate(MARKS) if "OOM" in m[2]]
    assert len(crosses) == 2, crosses
    qa.mouse.move(crosses[0][0], crosses[0][1])
    tooltip = qa.locator("#vg-tooltip-element.visible")
    tooltip.wait_for(timeout=5000)
    assert "batch size" in tooltip.inner_text() and "OOM" in tooltip.inner_text()
    qa.context.close()


def test_back_after_a_pick_shows_the_view_before_it(history_server: str, browser) -> None:
    from playwright.sync_api import expect  # waits for the condition, not for a time

    page = rendered(browser, f"{history_server}/phases?phase=1&x=order", charts=2)
    page.get_by_text("record date", exact=True).click()
    page.wait_for_url("**x=date*")
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    page.go_back()
    page.wait_for_url("**x=order*")
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    checked = page.locator('[data-testid="stRadio"] label:has(input:checked)')
    expect(checked).to_have_text("milestone order", timeout=30_000)
    page.context.close()
    # Arrived from the Overview, the page adds no entry of its own (its defaults stay out
    # of the URL): after a pick, Back shows the view before it, and the next Back leaves.
    page = rendered(browser, history_server, charts=0)
    page.goto(f"{history_server}/phases")
    page.locator(".vega-embed svg").nth(1).wait_for(timeout=30_000)
    page.get_by_text("record date", exact=True).click()
    page.wait_for_url("**/phases?x=date")
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    page.go_back()
    page.wait_for_url("**/phases")
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for()
    now = page.locator('[data-testid="stRadio"] label:has(input:checked)')
    expect(now).to_have_text("milestone order", timeout=30_000)
    page.go_back()
    page.wait_for_url(lambda url: "/phases" not in url)
    page.context.close()


def test_a_bad_deep_link_says_so_and_a_view_copies_its_link(server: str, browser) -> None:
    page = rendered(
        browser,
        f"{server}/phases?phase=99",
        charts=2,
        permissions=["clipboard-read", "clipboard-write"],
    )
    warning = page.locator('[data-testid="stAlert"]', has_text="No phase 99")
    assert "showing" in warning.inner_text()
    assert "phase=1" in page.url
    page.get_by_role("button", name="Copy link").click()
    page.get_by_role("button", name="Copied").wait_for(timeout=5000)
    assert page.evaluate("navigator.clipboard.readText()") == page.url
    page.context.close()


def test_the_sidebar_gives_way_on_narrow_windows(server: str, browser) -> None:
    widths = {}
    for width in (700, 800, 1400):
        page = rendered(browser, f"{server}/phases", width=width, charts=2)
        sidebar = page.locator('[data-testid="stSidebar"]')
        widths[width] = sidebar.evaluate(
            "bar => bar.dataset.collapsed === 'true' ? 0"
            " : Math.round(bar.getBoundingClientRect().right)"
        )
        if width == 800:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "phases-800.png"), full_page=True)
            metric = page.locator('[data-testid="stMetricValue"]').first
            assert metric.inner_text() == "10 ms"  # whole, not "10..."
        page.context.close()
    assert widths[700] == 0  # collapsed under Streamlit's 768 px breakpoint
    assert 0 < widths[800] <= 260 and widths[1400] == widths[800]


# Figures that sat in four fixed columns, cut at 800 px before they wrapped: Ops' accuracy
# figure ("not c..."), Attribution's change ("-0.66..."); axis labels run together or cut
# at the chart's edge (Paired variants' last date read "2020-0"); the phase's figures in
# four columns ("12.03...") and its last PR label run off the chart.
@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("/ops?op=cumsum", "not checked"),
        ("/compare?part=Attribution", "-0.6609 ms"),
        ("/compare?part=Paired+variants&dim=framework", None),
        ("/phases?phase=1", "9.5 ms"),
    ],
)
def test_at_800_px_no_figure_is_cut(server: str, browser, url: str, shown: str) -> None:
    page = rendered(browser, f"{server}{url}", width=800, charts=1)
    cut = page.evaluate(
        """() => [...document.querySelectorAll(
                '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p')]
            .filter(e => e.scrollWidth > e.clientWidth + 1)
            .map(e => e.textContent)"""
    )
    assert cut == []
    if shown:
        assert shown in page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    # Nor do an axis's labels run into each other (Attribution's "step at 2020-02-24"
    # beside "step at 2020-03-02" did, on one line each).
    overlapping = page.evaluate(
        """() => [...document.querySelectorAll('.vega-embed svg g.role-axis-label')]
            .flatMap(axis => {
              const boxes = [...axis.querySelectorAll('text')]  // not those Vega hid
                .filter(t => getComputedStyle(t).opacity !== '0')
                .map(t => [t.textContent, t.getBoundingClientRect()]);
              return boxes.flatMap(([a, p], i) => boxes.slice(i + 1)
                .filter(([, q]) => p.left < q.right - 1 && q.left < p.right - 1
                                   && p.top < q.bottom - 1 && q.top < p.bottom - 1)
                .map(([b]) => a + ' / ' + b));
            })"""
    )
    assert overlapping == []
    beyond = page.evaluate(
        """() => [...document.querySelectorAll('.vega-embed')].flatMap(chart => {
              const edge = chart.getBoundingClientRect();
              return [...chart.querySelectorAll(
                  'svg g.role-axis-label text, svg g.role-mark text')]
                .filter(t => getComputedStyle(t).opacity !== '0')
                .filter(t => { const box = t.getBoundingClientRect();
                               return box.left < edge.left - 1 || box.right > edge.right + 1; })
                .map(t => t.textContent);
            })"""
    )
    assert beyond == []
    page.context.close()


def test_dark_mode_is_a_choice_and_the_report_preview_stays_readable(server: str, browser) -> None:
    page = rendered(browser, f"{server}/report?week=2020-W06", charts=0)
    frame = page.frame_locator("iframe").first
    frame.get_by_role("heading", name="Phase progress").wait_for(timeout=30_000)
    app = page.locator('[data-testid="stApp"]')
    assert app.evaluate("a => getComputedStyle(a).backgroundColor") == "rgb(255, 255, 255)"
    # The choice: the menu keeps its theme entries (client.toolbarMode = "viewer").
    page.locator('[data-testid="stMainMenuButton"]').click()
    page.locator('[data-testid="stMainMenuItem-theme-Dark"]').click()
    page.wait_for_function(
        "getComputedStyle(document.querySelector('[data-testid=\"stApp\"]'))"
        ".backgroundColor !== 'rgb(255, 255, 255)'",
        timeout=5000,
    )
    page.keyboard.press("Escape")
    # The preview is its own light page, readable whatever the dashboard's theme.
    body = frame.locator("body")
    assert body.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(255, 255, 255)"
    assert body.evaluate("b => getComputedStyle(b).color") == "rgb(31, 35, 40)"
    page.wait_for_timeout(500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-dark.png"), full_page=True)
    page.context.close()


PROVENANCE = ".perfboard-provenance"


def clicked_point(page, label: str) -> None:  # type: ignore[no-untyped-def]
    """Click the first chart point whose tooltip label holds `label`; wait for its run."""
    points = [m for m in page.evaluate(MARKS) if label in m[2]]
    assert points, [m[2] for m in page.evaluate(MARKS)][:5]
    x, y, _ = points[0]
    page.mouse.click(x, y)
    page.get_by_role("heading", name="Where this point comes from").wait_for(timeout=30_000)
    page.locator(PROVENANCE).first.wait_for(timeout=30_000)


def shown_lines(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The lines of the provenance block as shown, each with its number."""
    return page.locator(f"{PROVENANCE} > div").all_inner_texts()


def test_a_click_on_a_point_shows_its_line_under_its_tables_header(server: str, browser) -> None:
    page = rendered(browser, f"{server}/trends?metric=latency&benchmark=ernie&x=batch_size")
    clicked_point(page, "batch size: 70; latency (ms): 6.457;")
    lines = shown_lines(page)
    # The QA table's header is 8 lines above the row, outside the window: shown above it;
    # the row's latency (6.457 ms at batch size 70) is the number marked.
    assert "batch_size average_latency(ms) batch_latency(ms) gpu_memory(MB)" in lines[0]
    assert any("70 6.457 451.965 1283" in line for line in lines)
    assert page.locator(f"{PROVENANCE} mark").inner_text() == "6.457"
    page.get_by_text("benchmark-165_2020-02-04_xreki_qa-results.md").first.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trends-provenance.png"), full_page=True)
    page.context.close()


def test_a_table_row_clicked_on_sources_shows_its_line_in_context(
    server: str, browser, demo_db: Path
) -> None:
    import duckdb

    uri = "data/samples/paddle-pr-25523_2020-07-14_zhangting2020_slice-grad-table.md"
    conn = duckdb.connect(str(demo_db), read_only=True)
    (source_id,) = conn.execute("SELECT source_id FROM sources WHERE uri = ?", [uri]).fetchone()
    conn.close()
    page = rendered(browser, f"{server}/sources?source={source_id}", charts=0)
    page.get_by_text("Click a row: its line is shown").wait_for(timeout=30_000)
    grid = page.locator('[data-testid="stDataFrame"]').nth(1)
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 36)  # the second row's checkbox
    page.locator(PROVENANCE).wait_for(timeout=30_000)
    lines = shown_lines(page)
    assert any("|op|input shape|start|end|axes|before|after| speed up |" in x for x in lines)
    assert page.locator(f"{PROVENANCE} mark").inner_text() == "0.005447"
    page.context.close()


def test_a_clicked_row_marks_its_own_series_among_equal_values_of_its_line(
    server: str, browser, demo_db: Path
) -> None:
    """The QA table's batch 300 at seq len 512 ran out of memory: its line holds three
    values, all OOM (batch latency, GPU memory, latency). The latency row, clicked, is the
    one marked; matched by value, the first of the three was."""
    import duckdb

    uri = "data/samples/benchmark-165_2020-02-04_xreki_qa-results.md"
    conn = duckdb.connect(str(demo_db), read_only=True)
    (source_id,) = conn.execute("SELECT source_id FROM sources WHERE uri = ?", [uri]).fetchone()
    conn.close()
    page = rendered(browser, f"{server}/sources?source={source_id}&line=40", charts=0)
    batch = "ernie · batch_latency · paddle · Tesla P4 · batch_size=300, seq_len=512"
    latency = "ernie · latency · paddle · Tesla P4 · batch_size=300, seq_len=512"
    page.get_by_text(f"3 values were read on this line; marked: {batch}").wait_for()
    grid = page.locator('[data-testid="stDataFrame"]').last
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 2 * 35 + 18)  # the third row: latency
    page.get_by_text(f"3 values were read on this line; marked: {latency}").wait_for(timeout=30_000)
    page.context.close()


def test_an_ingest_while_a_page_is_open_is_said_and_one_click_shows_it(
    browser, demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from tests.conftest import ingest

    store = tmp_path / "open.duckdb"
    shutil.copyfile(demo_db, store)
    monkeypatch.setenv("PERFBOARD_NEW_DATA_SECONDS", "1")  # the page asks every second
    with serving(store) as url:
        page = rendered(browser, f"{url}/sources", charts=0)
        notice = page.get_by_text("New data since this page loaded.")
        page.wait_for_timeout(2500)  # it has asked twice: nothing new, nothing said
        assert notice.count() == 0
        document = ROOT / "tests/fixtures/modern/samples/trtexec_tensorrt-4177.md"
        copy = tmp_path / "trtexec-again.md"
        copy.write_text(document.read_text(encoding="utf-8").replace("7.60628", "7.7"))
        assert ingest("auto", str(copy), "--db", str(store), "--no-detect") == 0
        notice.wait_for(timeout=30_000)
        page.get_by_role("button", name="Show it").click()
        notice.wait_for(state="detached", timeout=30_000)
        # The new document is in Sources' grid now (its cells are drawn on a canvas; the
        # grid keeps them in the page for screen readers).
        page.get_by_text("trtexec-again.md").first.wait_for(state="attached", timeout=30_000)
        page.context.close()


def test_explain_opens_on_an_alert_with_something_to_go_on(server: str, browser) -> None:
    page = rendered(browser, f"{server}/explain", charts=0)
    # Not the newest alert (a simulated change with no PR between its sides): the one
    # with the fusion PR between them, its suspects listed.
    page.get_by_text("only the PRs in between are listed").wait_for(timeout=30_000)
    assert not page.get_by_text("Nothing to go on").count()
    page.context.close()
