"""Provenance in one click from the table rows of Compare, Alerts, Ops, Profiles and a PR's
claims (issue 16 item 5), in a real browser (Debian's Chromium through Playwright), on
the demo data: a click on a row's line link opens Sources in a new tab, with the line
among its neighbours and the row's number marked.

Skipped without Chromium unless PERFBOARD_REQUIRE_BROWSER is set, like tests/test_browser.py,
whose fixtures this module uses. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import pytest

from tests.test_browser import ARTIFACTS, PROVENANCE, browser, rendered, server

__all__ = ["browser", "server"]  # the fixtures, shared with tests/test_browser.py

pytestmark = pytest.mark.browser

ROW, HEADER = 35, 35  # a data grid's row and header heights (px)
# The pointer shows over a link cell's text only: where it does along a row, a link is.
CURSOR = "([x, y]) => getComputedStyle(document.elementFromPoint(x, y)).cursor"


def links_in_row(page, grid: int, row: int) -> list[float]:  # type: ignore[no-untyped-def]
    """The x of each link drawn in row `row` (0 is the first data row) of the `grid`-th
    data grid, left to right. The grid is a canvas: its cells are found by the pointer."""
    table = page.locator('[data-testid="stDataFrame"]').nth(grid)
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    assert box is not None
    y = box["y"] + HEADER + ROW * row + ROW / 2
    runs: list[list[float]] = []
    for x in range(int(box["x"]) + 2, int(box["x"] + box["width"]) - 2, 3):
        page.mouse.move(x, y)
        if page.evaluate(CURSOR, [x, y]) != "pointer":
            continue
        if runs and x - runs[-1][-1] <= 6:
            runs[-1].append(x)
        else:
            runs.append([x])
    page.mouse.move(0, 0)
    return [sum(run) / len(run) for run in runs]


def marked_after_click(page, grid: int, row: int, link: int) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """Click the `link`-th link of a row: the Sources tab it opens, its marked number and
    its lines as shown."""
    xs = links_in_row(page, grid, row)
    assert len(xs) > link, xs
    table = page.locator('[data-testid="stDataFrame"]').nth(grid).bounding_box()
    y = table["y"] + HEADER + ROW * row + ROW / 2
    with page.expect_popup() as opened:
        page.mouse.click(xs[link], y)
    sources = opened.value
    sources.locator(PROVENANCE).wait_for(timeout=30_000)
    assert "/sources?source=" in sources.url
    text = sources.locator(f"{PROVENANCE} mark").inner_text()
    lines = sources.locator(f"{PROVENANCE} > div").all_inner_texts()
    sources.close()
    return text, lines


def test_compare_two_versions_opens_each_sides_line(server: str, browser) -> None:
    # The simulated nightly, a week apart: int8 at batch 1 is the largest change, first.
    page = rendered(
        browser,
        f"{server}/compare?a_kind=date&a=2020-03-24&b_kind=date&b=2020-03-31",
        charts=0,
    )
    assert marked_after_click(page, 0, 0, 0)[0] == "5.1413"  # line A
    assert marked_after_click(page, 0, 0, 1)[0] == "5.2358"  # line B
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare-two-versions.png"), full_page=True)
    page.context.close()


def test_compare_attribution_opens_each_steps_line(server: str, browser) -> None:
    page = rendered(browser, f"{server}/compare?part=Attribution", charts=1)
    # The fusion of 2020-02-04 (#22424): the first nightly value after it, 9.5014 ms. The
    # row's first link is its PR; the second its line.
    assert marked_after_click(page, 0, 0, 1)[0] == "9.5014"
    page.context.close()


def test_an_alert_opens_the_first_measurement_after_each_change(server: str, browser) -> None:
    page = rendered(browser, f"{server}/alerts?alert=95239106cda559ab")
    text, lines = marked_after_click(page, 0, 0, 0)
    assert text == "9.5014" and any('"value": 9.5014' in line for line in lines)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "alert-lines.png"), full_page=True)
    page.context.close()


def test_an_op_row_opens_each_frameworks_time_on_its_line(server: str, browser) -> None:
    # Wide enough for every column: the line links sit right of the ratios.
    page = rendered(browser, f"{server}/ops", width=2800, charts=0)
    # cumsum, PaddlePaddle/benchmark#380: both times on one row of its table, each marked.
    paddle, lines = marked_after_click(page, 0, 0, 0)
    assert paddle == "86.2771" and any("cumsum" in line for line in lines)
    assert marked_after_click(page, 0, 0, 1)[0] == "1.8483"
    page.context.close()


def test_a_profile_diff_opens_each_events_line_in_a_and_b(server: str, browser, demo_db) -> None:  # type: ignore[no-untyped-def]
    from tests.test_browser_profiles import run_of

    before = run_of(demo_db, "benchmark-165_xreki_profile-report.md")
    after = run_of(demo_db, "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md")
    page = rendered(browser, f"{server}/profiles?run={before}&vs={after}", charts=2)
    # mul disappeared: only its line in A; fc appeared: only its line in B.
    mul, lines = marked_after_click(page, 0, 0, 0)
    assert mul == "32332.5" and any("mul" in line for line in lines)
    assert marked_after_click(page, 0, 1, 0)[0] == "24269.7"
    # A's breakdown below the passes: its first event's own line.
    assert marked_after_click(page, 2, 0, 0)[0] == "32332.5"
    page.context.close()


def test_a_prs_claim_opens_its_line(server: str, browser) -> None:
    page = rendered(browser, f"{server}/prs?pr=22494", charts=0)
    page.get_by_role("heading", name="What its description claims").wait_for(timeout=30_000)
    # The PR's own row first (its link: the PR), then its claims: 9.5 -> 8.4 ms.
    text, lines = marked_after_click(page, 1, 0, 0)
    assert text == "8.4" and any("from 9.5ms to 8.4ms" in line for line in lines)
    page.context.close()
