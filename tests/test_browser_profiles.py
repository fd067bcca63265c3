"""The Profiles page in a real browser (Debian's Chromium through Playwright): the diff of
the ERNIE profile report against the 2019-09-11 fc+elementwise_add+layer_norm run.

Skipped without Chromium unless PERFBOARD_REQUIRE_BROWSER is set, like tests/test_browser.py,
whose fixtures this module uses. The screenshot is test-artifacts/profiles.png.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.test_browser import ARTIFACTS, browser, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def run_of(db: Path, name: str) -> str:
    """The SOURCE_ID:RUN key of the profile run of the demo document named `name`."""
    conn = duckdb.connect(str(db), read_only=True)
    try:
        source_id, run = conn.execute(
            "SELECT e.source_id, e.run FROM profile_events e JOIN sources s USING (source_id)"
            " WHERE s.uri LIKE '%' || ? GROUP BY ALL",
            [name],
        ).fetchone()
    finally:
        conn.close()
    return f"{source_id}:{run}"


def test_profiles_diff_shows_the_fused_op_replacing_its_parts(
    server: str,  # noqa: F811
    browser,  # noqa: F811
    demo_db: Path,
) -> None:
    before = run_of(demo_db, "benchmark-165_xreki_profile-report.md")
    after = run_of(demo_db, "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md")
    page = browser.new_page(viewport={"width": 1400, "height": 3000})
    page.goto(f"{server}/profiles?run={before}&vs={after}")
    page.get_by_role("heading", name="Profiles").wait_for(timeout=30_000)
    page.get_by_role("heading", name="Diff: A → B").wait_for(timeout=30_000)
    page.locator(".vega-embed").nth(1).wait_for(timeout=30_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    page.wait_for_timeout(1500)  # let the charts and the grids paint before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "profiles.png"), full_page=True)
    assert page.locator(".vega-embed").count() == 2  # the diff and A's breakdown
    diff_chart = page.locator(".vega-embed").first
    # The fused op is marked as appeared, the ops it fused as gone: labels, not zeros.
    assert diff_chart.locator("text", has_text="appeared · 17,700 ms in B").count() == 1
    assert diff_chart.locator("text", has_text="disappeared · 6,891 ms in A").count() == 1
    assert page.locator('[role="gridcell"]', has_text="fc_elementwise_layernorm_fuse_pass").count()
    link = page.locator('a[href="https://github.com/PaddlePaddle/benchmark/issues/165"]')
    assert link.count() == 2  # each run's document
    assert not page.locator(".stException").count()
    page.close()
