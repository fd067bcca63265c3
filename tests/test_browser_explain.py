"""Explain a change in a real browser, on the fusion store of tests/test_explain.py;
screenshot to test-artifacts/explain.png."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from perfboard import db, queries
from tests.test_browser import ARTIFACTS, browser, serving
from tests.test_explain import fusion

__all__ = ["browser", "fusion"]  # fixtures shared with the modules they come from

pytestmark = pytest.mark.browser


@pytest.fixture
def fusion_server(fusion: Path) -> Iterator[tuple[str, str]]:
    conn = db.connect(fusion, read_only=True)
    [key] = list(queries.alerts(conn).alert_key)
    conn.close()
    with serving(fusion) as url:
        yield url, key


def test_explain_ranks_the_fusion_pr_first(fusion_server: tuple[str, str], browser) -> None:
    url, key = fusion_server
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(f"{url}/explain?alert={key}")
    page.get_by_role("heading", name="What to look at, most likely first").wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explain.png"), full_page=True)
    cell = page.locator('[role="gridcell"]', has_text="Add a pass to fuse fc+elementwise_add")
    assert cell.count() >= 1
    assert page.locator('[role="gridcell"]', has_text="fused_fc_elementwise_layernorm appeared")
    assert not page.locator(".stException").count()
    page.close()
