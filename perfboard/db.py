"""The DuckDB store: where it lives, how to open it, and its forward-only migrations.

Writers (ingest) open it read-write for the length of one run; the dashboard opens it
read-only per query and never holds a connection, so an ingest is never blocked by it.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = ROOT / "data" / "perfboard.duckdb"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def db_path() -> Path:
    """The database file: PERFBOARD_DB when set, else data/perfboard.duckdb."""
    return Path(os.environ.get("PERFBOARD_DB") or DEFAULT_DB)


def connect(path: Path | str | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the store. Read-write connections are migrated to the latest schema first."""
    target = Path(path) if path is not None else db_path()
    if read_only:
        if not target.exists():
            raise FileNotFoundError(f"no database at {target}: run `make demo` or an ingest")
        return duckdb.connect(str(target), read_only=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        _create(target)
    try:
        conn = duckdb.connect(str(target))
    except duckdb.IOException as error:
        if "lock" in str(error).lower():  # readers (or a writer) hold the file
            with contextlib.suppress(OSError):
                writer_marker(target).touch()  # see writer_waiting
        raise
    writer_marker(target).unlink(missing_ok=True)
    migrate(conn)
    return conn


# A writer waiting for the file's lock touches this file at each try. A busy dashboard's
# read-only connections overlap (one DuckDB instance per process, alive while any is open),
# so the file would never come free and an ingest would wait out its --lock-timeout (issue
# 7's load test: 4 of 9 ingests); the dashboard holds off new reads while it is fresh.
WRITER_WAITING_S = 5.0


def writer_marker(target: Path) -> Path:
    return target.with_name(target.name + ".tmp-writer-waiting")  # *.duckdb.tmp*: git-ignored


def writer_waiting(path: Path | str) -> bool:
    """Whether a writer has been waiting for the file's lock in the last few seconds."""
    try:
        touched = writer_marker(Path(path)).stat().st_mtime
    except OSError:
        return False
    return time.time() - touched < WRITER_WAITING_S


def _create(target: Path) -> None:
    """Make a new store whole or not at all: built and migrated under a scratch name, then
    linked into place. A store whose first blocks a full disk cut short would otherwise be
    left behind, and every later open would fail on it ("Could not read enough bytes")."""
    scratch = target.with_name(f".{target.name}.{os.getpid()}.new")
    try:
        conn = duckdb.connect(str(scratch))
        try:
            migrate(conn)
        finally:
            conn.close()  # a checkpoint: the migrations go into the file
        try:
            os.link(scratch, target)  # never over a store another process made meanwhile
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not target.exists():
                os.replace(scratch, target)
    finally:
        for leftover in (scratch, scratch.with_name(scratch.name + ".wal")):
            leftover.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    path: Path


def migrations() -> list[Migration]:
    found = []
    for path in sorted(MIGRATIONS.glob("*.sql")):
        m = _MIGRATION_NAME.match(path.name)
        if not m:
            raise RuntimeError(f"{path}: migration files are named NNNN_name.sql")
        found.append(Migration(int(m.group(1)), m.group(2), path))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return found


def migrate(conn: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply, in order and each in its own transaction, the migrations not yet recorded."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations").fetchall()}
    known = migrations()
    if done - {m.version for m in known}:
        raise RuntimeError(
            f"the database has migrations {sorted(done)} newer than this code knows:"
            " upgrade perfboard"
        )
    applied = []
    for migration in known:
        if migration.version in done:
            continue
        conn.execute("BEGIN TRANSACTION")
        try:
            conn.execute(migration.path.read_text(encoding="utf-8"))
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                [migration.version, migration.name, datetime.now(UTC).replace(tzinfo=None)],
            )
            conn.execute("COMMIT")
        except Exception:
            rollback(conn)
            raise
        applied.append(migration.version)
    return applied


@contextlib.contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """BEGIN, then COMMIT when the block ends, or take it all back (rollback) and
    re-raise when anything in it fails, an interrupt included."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def rollback(conn: duckdb.DuckDBPyConnection) -> None:
    """Take back the open transaction, if there is one.

    A COMMIT that failed (the disk is full) has ended the transaction already: ROLLBACK
    would then raise "no transaction is active" in place of the error that says why.
    """
    with contextlib.suppress(duckdb.Error):
        conn.execute("ROLLBACK")


def data_version(path: Path | str | None = None) -> tuple[int, int, int, int]:
    """A key that changes whenever an ingest commits: the stat of the file and its WAL.

    Cheap enough to call on every page run, needs no connection (so it cannot contend
    with a writer), and is what cached queries are keyed on.
    """
    target = Path(path) if path is not None else db_path()
    stamp: list[int] = []
    for candidate in (target, target.with_name(target.name + ".wal")):
        try:
            st = candidate.stat()
            stamp += [st.st_mtime_ns, st.st_size]
        except FileNotFoundError:
            stamp += [0, 0]
    return (stamp[0], stamp[1], stamp[2], stamp[3])
