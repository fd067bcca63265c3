"""The Ops page in a real browser (Debian's Chromium through Playwright), on the demo data;
screenshots to test-artifacts/ops.png and test-artifacts/ops-cumsum.png."""

from __future__ import annotations

import pytest

from tests.test_browser import ARTIFACTS, browser, server

__all__ = ["browser", "server"]  # the fixtures, shared with tests/test_browser.py

pytestmark = pytest.mark.browser


def test_ops_page_shows_every_op_against_tensorflow(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 2000})
    page.goto(f"{server}/ops")
    page.get_by_role("heading", name="Ops").wait_for(timeout=30_000)
    page.get_by_role("heading", name="Results without a counterpart").wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').nth(2).wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # let the data grids paint before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ops.png"), full_page=True)
    # PaddlePaddle/benchmark#282: abs, 2.76374 ms against TensorFlow's 1.91671 ms.
    cells = page.locator('[role="gridcell"]', has_text="Paddle 1.44x slower than tensorflow")
    assert cells.count() >= 1
    # PaddlePaddle/benchmark#380: cumsum, 86.2771 ms against 1.8483 ms.
    assert page.locator('[role="gridcell"]', has_text="46.68x slower").count() >= 1
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert nav.get_by_text("Ops").count() == 1
    assert not page.locator(".stException").count()
    page.close()


def test_an_op_deep_link_draws_its_ratio_by_commit(server: str, browser) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 1400})
    page.goto(f"{server}/ops?op=cumsum&vs=tensorflow")
    page.get_by_role("heading", name="cumsum over time").wait_for(timeout=30_000)
    page.locator(".vega-embed").first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ops-cumsum.png"), full_page=True)
    assert page.locator(".vega-embed").count() == 1
    assert page.locator(".vega-embed text", has_text="parity").count() == 1
    link = page.get_by_role("link", name="Compare, Paired variants", exact=False)
    assert "part=Paired+variants" in (link.get_attribute("href") or "")
    assert not page.locator(".stException").count()
    page.close()
