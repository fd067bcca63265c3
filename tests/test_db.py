"""The store: forward-only migrations recorded in a table, the PERFBOARD_DB setting."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from perfboard import db


def test_perfboard_db_overrides_the_path(db_path: Path) -> None:
    assert db.db_path() == db_path
    db.connect().close()
    assert db_path.exists()


def test_migrations_are_recorded_and_applied_once(db_path: Path) -> None:
    conn = db.connect(db_path)
    rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert rows[0] == (1, "initial")
    assert db.migrate(conn) == []  # nothing left to apply
    tables = {
        r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert {
        "sources",
        "series",
        "measurements",
        "phases",
        "milestones",
        "profile_events",
        "passes",
        "runs",
        "ingest_errors",
    } <= tables


def test_a_database_newer_than_the_code_is_refused(db_path: Path) -> None:
    conn = db.connect(db_path)
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', now())")
    with pytest.raises(RuntimeError, match="newer than this code"):
        db.migrate(conn)


def test_read_only_open_of_a_missing_store_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="make demo"):
        db.connect(tmp_path / "none.duckdb", read_only=True)


def test_data_version_changes_when_an_ingest_commits(db_path: Path) -> None:
    conn = db.connect(db_path)
    conn.close()
    before = db.data_version(db_path)
    conn = duckdb.connect(str(db_path))
    conn.execute("INSERT INTO runs VALUES (1, 0, 'x', 1)")
    conn.close()
    assert db.data_version(db_path) != before
