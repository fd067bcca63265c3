"""The load test's machinery, for real but small: the demo store served by the real server,
3 websocket sessions for 20 s, an ingest every 8 s (scripts/load_test.py runs the full
one: 20 sessions for 5 minutes on the 10 M-measurement store)."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.load_test import PAGES, Config, run_load


def test_a_short_load_visits_every_page_without_error_while_ingests_run(
    demo_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "load.json"
    config = Config(
        clients=3, duration=20, ingest_every=8, db=demo_db, out=out, seed=3, rounds=2, idle=2
    )
    result = run_load(config)

    assert result["errors"]["count"] == 0, result["errors"]
    assert result["page_runs"] >= len(PAGES)
    for page, figures in result["pages"].items():
        # Every page was opened and drew its title at least, through the real protocol.
        assert figures["runs"] >= 1, f"{page} was never visited"
        assert figures["elements_min"] >= 1, f"{page} drew nothing"
        assert figures["p50"] is not None and figures["p50"] > 0
    assert all(runs >= 1 for runs in result["sessions"]["runs"])

    ingests = result["ingests"]
    assert ingests["count"] >= 1 and ingests["failed"] == 0
    assert all(run["exit_code"] == 0 for run in ingests["runs"])
    # The ingests continued the store's series: new points, no new series.
    store = result["store"]
    assert store["after"]["series"] == store["before"]["series"]
    added = store["after"]["measurements"] - store["before"]["measurements"]
    assert added == ingests["count"] * ingests["records_each"]

    memory = result["memory"]
    assert len(memory["samples"]) >= 3
    assert 0 < memory["min_mb"] <= memory["max_mb"]
    assert memory["per_minute"] and memory["per_minute"][0]["minute"] == 0
    idle = memory["idle_after_rounds"]
    assert [p["after_round"] for p in idle] == [1, 2] and all(p["rss_mb"] > 0 for p in idle)

    # The JSON report holds the documented fields.
    written = json.loads(out.read_text())
    for key in (
        "config",
        "page_runs",
        "errors",
        "page_time_s",
        "pages",
        "sessions",
        "ingests",
        "before_ingest",
        "memory",
        "server_log",
        "store",
    ):
        assert key in written, key
    assert set(written["pages"]) == set(PAGES)
    for key in ("p50", "p95", "max"):
        assert key in written["page_time_s"]
    for key in ("first_mb", "last_mb", "min_mb", "max_mb", "slope_mb_per_min_second_half"):
        assert key in written["memory"]
    for key in ("updating_runs", "not_ready_runs"):
        assert key in written["before_ingest"]
