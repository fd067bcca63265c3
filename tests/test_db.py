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


def memory_limit(conn: duckdb.DuckDBPyConnection) -> str:
    return conn.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_a_writer_keeps_little_memory_and_a_reader_duckdbs_default(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DuckDB's default (80 % of the machine) let a large ingest keep what it wrote.
    monkeypatch.delenv("PERFBOARD_WRITER_MEMORY_MB", raising=False)
    writer = db.open_store(db_path)
    assert memory_limit(writer) == "512.0 MiB"
    writer.close()
    reader = db.open_store(db_path, read_only=True)
    assert memory_limit(reader) != "512.0 MiB"
    reader.close()
    monkeypatch.setenv("PERFBOARD_WRITER_MEMORY_MB", "1024")
    writer = db.open_store(db_path)
    assert memory_limit(writer) == "1.0 GiB"
    # Another connection to the same file in this process, without perfboard's settings
    other = duckdb.connect(str(db_path))
    assert other.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] > 0
    other.close()
    writer.close()


@pytest.mark.parametrize("value", ["1GB", "10", "-5", "many"])
def test_a_bad_writer_memory_is_refused_and_makes_no_store(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PERFBOARD_WRITER_MEMORY_MB", value)
    with pytest.raises(db.StoreError, match=f"PERFBOARD_WRITER_MEMORY_MB='{value}'.* from 64"):
        db.open_store(db_path)
    assert not db_path.exists()


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


def test_a_kept_reader_lets_an_ingest_in_and_follows_a_replaced_file(
    db_path: Path, tmp_path: Path
) -> None:
    """db.keep_open (the dashboard server's): one read-only connection held for the
    process, closed while an ingest in another process waits for the lock, never the
    instance of a file replaced under it, and out of the way of this process's writer."""
    import subprocess
    import sys

    db.connect(db_path).close()
    try:
        db.keep_open(db_path)
        assert str(db_path) in db._KEPT
        # Another process's ingest: without the watcher it would wait out its 20 s.
        writer = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from perfboard import db;"
                " c = db.open_store(sys.argv[1], lock_timeout=20);"
                " c.execute('CREATE TABLE ingested AS SELECT 7 AS x');"
                " c.close()",
                str(db_path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert writer.returncode == 0, writer.stderr
        assert str(db_path) not in db._KEPT  # closed for it, and not opened since
        db.keep_open(db_path)  # the next read opens it again: it sees the ingest's row
        conn = db.connect(db_path, read_only=True)
        assert conn.execute("SELECT x FROM ingested").fetchone() == (7,)
        conn.close()

        # The file replaced by another (a rebuilt store): the old instance is let go.
        other = tmp_path / "other.duckdb"
        db.connect(other).close()
        kept_before = db._KEPT[str(db_path)][1]
        db.release_kept(db_path)
        db.keep_open(db_path)
        assert db._KEPT[str(db_path)][1] == kept_before
        other.replace(db_path)
        db.keep_open(db_path)
        assert db._KEPT[str(db_path)][1] != kept_before
        conn = db.connect(db_path, read_only=True)
        assert conn.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'ingested'"
        ).fetchone() == (0,)
        conn.close()

        writer_here = db.connect(db_path)  # this process's own writer (a triage)
        writer_here.close()
    finally:
        db.release_kept()
