"""The dashboard's Overview page through Streamlit's AppTest (no browser)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def run_app(monkeypatch: pytest.MonkeyPatch, db: Path) -> AppTest:
    monkeypatch.setenv("PERFBOARD_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    return at


def all_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += (
        [e.label for e in at.expander] + [i.value for i in at.info] + [w.value for w in at.warning]
    )
    return "\n".join(str(p) for p in parts)


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def test_overview_lists_what_the_demo_holds(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_app(monkeypatch, demo_db)
    metrics = {m.label: m.value for m in at.metric}
    conn = duckdb.connect(str(demo_db), read_only=True)
    n_series, n_sources = conn.execute(
        "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM sources)"
    ).fetchone()
    assert metrics["Series"] == f"{n_series:,}"
    assert metrics["Sources"] == f"{n_sources:,}" and n_sources == 24
    text = all_text(at)
    assert "二期优化工作" in text and "NHZlX" in text and "Tesla P4" in text

    milestones = next(f for f in frames(at) if "reported_speedup_raw" in f.columns)
    assert list(milestones["value"][:2]) == [10.0, 9.5]
    assert milestones["PR"][1] == "https://github.com/PaddlePaddle/Paddle/pull/22424"

    latest = next(f for f in frames(at) if "latest" in f.columns)
    qa = latest[(latest.benchmark == "ernie") & (latest.params.str.contains("seq_len=512"))]
    assert "OOM" in set(qa.latest)  # batch 200/300 at Seqlen512 ran out of GPU memory

    errors = next(f for f in frames(at) if "reason" in f.columns)
    assert any("cut" in r for r in errors.reason)


def test_empty_database_shows_how_to_ingest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_app(monkeypatch, path)
    assert "The database is empty" in all_text(at)


def test_missing_database_says_how_to_build_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = run_app(monkeypatch, tmp_path / "none.duckdb")
    assert "make demo" in all_text(at)
