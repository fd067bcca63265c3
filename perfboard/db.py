"""The DuckDB store: where it lives, how to open it, and its forward-only migrations.

Writers (ingest) open it read-write for the length of one run; the dashboard opens it
read-only per query and never holds a connection, so an ingest is never blocked by it.

The store is a DuckDB file (the default) or, for many machines, a DuckLake
(PERFBOARD_DB=ducklake:postgres:...; perfboard.lake): the same SQL runs on both.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from perfboard import lake
from perfboard.errors import StoreBusy, StoreError

__all__ = ["StoreBusy", "StoreError", "connect", "open_store", "transaction"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = ROOT / "data" / "perfboard.duckdb"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


def db_path() -> Path | str:
    """The store: PERFBOARD_DB when set (a file, or a `ducklake:` URI kept as text), else
    data/perfboard.duckdb."""
    configured = os.environ.get("PERFBOARD_DB") or DEFAULT_DB
    return str(configured) if lake.is_lake(configured) else Path(configured)


def exists(path: Path | str) -> bool:
    """Whether there is a store to read (a lake always is: its first writer makes it)."""
    return lake.is_lake(path) or Path(path).exists()


def connect(
    path: Path | str | None = None, read_only: bool = False, lock_timeout: float = 30.0
) -> duckdb.DuckDBPyConnection:
    """Open the store. Read-write connections are migrated to the latest schema first.

    `lock_timeout`: how long a lake's writer waits for the writers' lock at each write
    (a file's writer waits for the file's lock in the caller, see ingest.cli.open_store).
    """
    location = path if path is not None else db_path()
    if lake.is_lake(location):
        if read_only:
            return lake.open_reader(str(location))
        conn = lake.open_writer(str(location), lock_timeout)
        migrate(conn)
        return _reading_arrow_by_name(conn)
    target = Path(location)
    if read_only:
        if not target.exists():
            raise FileNotFoundError(f"no database at {target}: run `make demo` or an ingest")
        return duckdb.connect(str(target), read_only=True)
    memory = writer_memory_mb()  # a bad setting makes no store
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        _create(target)
    release_kept(target)  # this process's kept reader would refuse a writer of its own
    try:
        conn = duckdb.connect(str(target))
    except duckdb.IOException as error:
        if "lock" in str(error).lower():  # readers (or a writer) hold the file
            with contextlib.suppress(OSError):
                writer_marker(target).touch()  # see writer_waiting
        raise
    with contextlib.suppress(OSError):
        writer_marker(target).unlink(missing_ok=True)
    # Set, not given as connect()'s config: a connection with another config to the same
    # file in this process (a test's, a script's) would then be refused.
    conn.execute(f"SET memory_limit = '{memory}MiB'")  # a checked whole number
    migrate(conn)
    return _reading_arrow_by_name(conn)


# What DuckDB may keep in memory for a writer of a file store, in MiB: its buffer pool,
# which holds a transaction's new rows until they are written, a results file's staging
# table, the pages it read. By default DuckDB may keep 80 % of the machine's memory, and
# it kept what a large ingest wrote: a 1 GB log of tester lines peaked at 1.68 GB, and
# at 0.95 GB with this bound, ingest.documents' parts of 128 MiB and a detection that
# reads 16 bytes a point (perfboard.alerts). Past the bound DuckDB
# writes pages out to the store's file (or its .tmp folder) and reads them back when it
# needs them. 256 MiB made that log 0.80 GB, but a results file of 1 M rows 60 % slower
# (its staging table written out: 0.40 of read_json; 0.58 at 512). A lake's writer keeps
# DuckDB's default: its database is in memory, and what it would write out would go to
# the working directory.
WRITER_MEMORY_MB = 512
_LEAST_MEMORY_MB = 64  # at 4 MiB DuckDB ran out making a table of 3 M rows; 16 did


def writer_memory_mb() -> int:
    """PERFBOARD_WRITER_MEMORY_MB if set (a StoreError if it is no whole number of MiB
    from 64), else WRITER_MEMORY_MB."""
    configured = os.environ.get("PERFBOARD_WRITER_MEMORY_MB", "").strip()
    if not configured:
        return WRITER_MEMORY_MB
    if not configured.isdigit() or int(configured) < _LEAST_MEMORY_MB:
        raise StoreError(
            f"PERFBOARD_WRITER_MEMORY_MB={configured!r}: give the MiB a writer's DuckDB may"
            f" keep, a whole number from {_LEAST_MEMORY_MB}"
        )
    return int(configured)


def _reading_arrow_by_name(conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A writer's SQL reads the Arrow tables it inserts by the name of a local variable
    (DuckDB's replacement scan: no view registered and dropped, 0.5 ms a table, four
    tables a small document on average). DuckDB looks only in the frame that called it unless
    told to look further: then a wrapper of the connection (a tracing probe) still finds
    them, in its caller's frame."""
    conn.execute("SET python_scan_all_frames = true")
    return conn


LOCK_POLL_S = 0.2


def open_store(
    path: Path | str | None = None, *, read_only: bool = False, lock_timeout: float = 30.0
) -> duckdb.DuckDBPyConnection:
    """The one way every command, and the dashboard's writes, open the store.

    Waits up to `lock_timeout` s while another writer (an ingest) holds it, then raises
    StoreBusy; every other failure (no store to read, a bad lake URI, a migration that
    could not be written, a full disk) is a StoreError whose message names the store
    (a lake's password hidden) and says what to do. Never anything else.
    """
    location = path if path is not None else db_path()
    target = lake.redacted(location)
    deadline = time.monotonic() + lock_timeout
    while True:
        try:
            return connect(location, read_only=read_only, lock_timeout=lock_timeout)
        except StoreError:
            raise
        except duckdb.IOException as error:
            if "lock" not in str(error).lower():  # not another writer: a full disk, say
                raise StoreError(f"cannot open {target}: {error}") from None
            if time.monotonic() >= deadline:
                raise StoreBusy(
                    f"cannot open {target}: {error}. Another ingest may be running;"
                    " wait for it or raise --lock-timeout"
                ) from None
            time.sleep(LOCK_POLL_S)
        except FileNotFoundError as error:
            raise StoreError(str(error)) from None
        except (duckdb.Error, OSError, RuntimeError) as error:
            # A migration that could not be written, a folder that cannot be made, a
            # store newer than this code (RuntimeError from migrate).
            raise StoreError(f"cannot open {target}: {error}") from None


# A writer waiting for the file's lock touches this file at each try. A busy dashboard's
# read-only connections overlap (one DuckDB instance per process, alive while any is open),
# so the file would never come free and an ingest would wait out its --lock-timeout (issue
# 7's load test: 4 of 9 ingests); the dashboard holds off new reads while it is fresh.
WRITER_WAITING_S = 5.0


def writer_marker(target: Path) -> Path:
    return target.with_name(target.name + ".tmp-writer-waiting")  # *.duckdb.tmp*: git-ignored


def writer_waiting(path: Path | str) -> bool:
    """Whether a writer has been waiting for the file's lock in the last few seconds."""
    if lake.is_lake(path):
        return False  # a lake's readers never block its writers
    try:
        touched = writer_marker(Path(path)).stat().st_mtime
    except OSError:
        return False
    return time.time() - touched < WRITER_WAITING_S


# -- one read-only connection a reader keeps open (the dashboard) ----------------------------

# DuckDB keeps one database instance per file and process while any connection to it is
# open: its catalog and its cache of decompressed blocks. The dashboard opens a connection
# per query (so that an ingest is never locked out), and when none overlapped each query
# opened the file anew: 35 ms on the 10 M store, and its blocks read again. keep_open holds
# one connection per store for the process; a watcher closes it as soon as a writer waits
# for the lock (writer_waiting), or when the file is replaced, and the next read opens it
# again once the writer is done. The dashboard's server turns it on (ui, with
# PERFBOARD_KEEP_STORE_OPEN=1, which scripts/serve.py sets); a writer in the same process
# (a triage) closes it first (connect).
_KEPT: dict[str, tuple[duckdb.DuckDBPyConnection, tuple[int, int]]] = {}
_KEPT_LOCK = threading.Lock()
_WATCHER: threading.Thread | None = None
KEEP_OPEN_POLL_S = 0.1  # a writer retries every LOCK_POLL_S: it waits one more poll at most


def _file_id(target: Path) -> tuple[int, int]:
    st = target.stat()
    return (st.st_dev, st.st_ino)


def keep_open(path: Path | str) -> None:
    """Hold a read-only connection to the file store at `path` open for this process
    (nothing for a lake: its readers share one already), unless a writer is waiting. A
    store that cannot be opened now (an ingest holds it) is left to the next call."""
    global _WATCHER
    if lake.is_lake(path) or writer_waiting(path):
        return
    target = Path(path)
    with _KEPT_LOCK:
        kept = _KEPT.get(str(target))
        try:
            current = _file_id(target)
        except OSError:
            return
        if kept is not None and kept[1] == current:
            return
        if kept is not None:  # the file was replaced: the instance is the old file's
            _close_kept(str(target))
        try:
            _KEPT[str(target)] = (duckdb.connect(str(target), read_only=True), current)
        except duckdb.Error:
            return
        if _WATCHER is None:
            _WATCHER = threading.Thread(target=_watch_kept, name="perfboard-keep-open", daemon=True)
            _WATCHER.start()


def release_kept(path: Path | str | None = None) -> None:
    """Close the kept connection of `path` (of every store when None)."""
    with _KEPT_LOCK:
        for key in [str(Path(path))] if path is not None else list(_KEPT):
            _close_kept(key)


def _close_kept(key: str) -> None:
    kept = _KEPT.pop(key, None)
    if kept is not None:
        with contextlib.suppress(duckdb.Error):
            kept[0].close()


def _watch_kept() -> None:
    while True:
        time.sleep(KEEP_OPEN_POLL_S)
        with _KEPT_LOCK:
            for key, (_, opened) in list(_KEPT.items()):
                try:
                    replaced = _file_id(Path(key)) != opened
                except OSError:
                    replaced = True
                if replaced or writer_waiting(key):
                    _close_kept(key)


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
    writer = lake.writer_of(conn)
    if writer is None:
        return _migrate(conn, lambda sql: sql)
    # Writers starting at once on a new lake would each create the tables: one at a time.
    location, timeout = writer
    lock = lake.writers_lock(location)
    lock.acquire(timeout)
    try:
        return _migrate(conn, lake.lake_ddl)
    finally:
        lock.release()


def _migrate(conn: duckdb.DuckDBPyConnection, ddl: Callable[[str], str]) -> list[int]:
    conn.execute(
        ddl(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
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
        with transaction(conn):
            conn.execute(ddl(migration.path.read_text(encoding="utf-8")))
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                [migration.version, migration.name, datetime.now(UTC).replace(tzinfo=None)],
            )
        applied.append(migration.version)
    return applied


@contextlib.contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[Changes]:
    """BEGIN, then COMMIT when the block ends, or take it all back (rollback) and
    re-raise when anything in it fails, an interrupt included.

    The block is handed a Changes: what it says it wrote (`touch`, `add_source`) is
    recorded in data_changes in the same transaction, so the dashboard re-reads only the
    cached queries that read it; a block that says nothing is recorded as having changed
    everything, which is always true enough.

    On a lake, the writers' lock is held from before BEGIN (so the transaction reads what
    the writer before committed) to after COMMIT.
    """
    writer = lake.writer_of(conn)
    lock = None
    if writer is not None:
        location, timeout = writer
        lock = lake.writers_lock(location)
        lock.acquire(timeout)
    try:
        conn.execute("BEGIN TRANSACTION")
        try:
            changes = Changes()
            yield changes
            _record(conn, changes)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
    finally:
        if lock is not None:
            lock.release()


def cursor(conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A connection of its own onto the same store (a cursor, in DuckDB's words). A lake's
    is pointed at the lake: `USE` belongs to each connection, not to the database."""
    own = conn.cursor()
    if lake.writer_of(conn) is not None:
        own.execute(f"USE {lake.ALIAS}")
    return own


def rollback(conn: duckdb.DuckDBPyConnection) -> None:
    """Take back the open transaction, if there is one.

    A COMMIT that failed (the disk is full) has ended the transaction already: ROLLBACK
    would then raise "no transaction is active" in place of the error that says why.
    """
    with contextlib.suppress(duckdb.Error):
        conn.execute("ROLLBACK")


# -- what each commit changed (data_changes, migration 0011) -------------------------------

EVERYTHING = "*"  # data_changes.table_name of a commit that did not say what it wrote
# A commit's series or projects past this many are recorded as "any": the log stays small,
# and a page reading a few of them re-reads, as it must.
MAX_LISTED = 10_000
# The other tables a document's rows are in (delete_source_rows), by source_id.
_SOURCE_TABLES = ("phases", "profile_events", "passes", "runs", "claims", "source_texts")
_HELD_IN_SOURCE_TABLES = ", ".join(
    f"(SELECT count(*) FROM {table} WHERE source_id = $source)" for table in _SOURCE_TABLES
)


@dataclass(slots=True)
class TableChange:
    """What changed in one table: the rows of these projects and these series (None: of
    any project, of any series)."""

    projects: set[str] | None = None
    series_ids: set[int] | None = None


class Changes:
    """What one write transaction changed, table by table (db.transaction records it)."""

    def __init__(self) -> None:
        self.tables: dict[str, TableChange] = {}
        self.no_rows = False  # nothing() was said: no row of data_changes at all

    def nothing(self) -> None:
        """No data changed (a lake's compaction rewrites files, not rows): nothing is
        recorded. DuckLake refuses a transaction that compacts and writes rows too."""
        self.no_rows = True

    def touch(
        self,
        *tables: str,
        projects: Iterable[str | None] | None = None,
        series_ids: Iterable[int] | None = None,
    ) -> None:
        """These tables changed: only rows of `projects` / `series_ids` when given (an
        empty list: rows of none), else any."""
        projects = None if projects is None else list(projects)
        series_ids = None if series_ids is None else list(series_ids)
        for table in tables:
            known = self.tables.get(table)
            if known is None:
                self.tables[table] = TableChange(_listed(projects), _listed(series_ids))
                continue
            known.projects = _union(known.projects, projects)
            known.series_ids = _union(known.series_ids, series_ids)

    def add_source(self, conn: duckdb.DuckDBPyConnection, uri: str) -> None:
        """The rows stored for document `uri` change: call it before they are replaced or
        removed and again after they are written, inside the transaction, so that both
        what it held and what it holds now are recorded. Its measurements, their series
        and its sources row name the series (and projects) of its measurements, so that a
        chart of other series stays cached; its other tables' rows name none (any)."""
        row = conn.execute("SELECT source_id, project FROM sources WHERE uri = ?", [uri]).fetchone()
        if row is None:
            if conn.execute(
                "SELECT count(*) FROM ingest_errors WHERE source_uri = ?", [uri]
            ).fetchone()[0]:
                self.touch("ingest_errors")
            return
        source_id, project = row
        # Three plain queries: as one statement of nine subqueries over a CTE they took
        # 36 ms, five times their sum, twice for every document stored.
        (series_ids,) = conn.execute(
            "SELECT list(DISTINCT series_id) FROM measurements WHERE source_id = ?", [source_id]
        ).fetchone()
        projects = None
        if series_ids:
            (projects,) = conn.execute(
                "SELECT list(DISTINCT project) FROM series WHERE series_id IN"
                " (SELECT series_id FROM measurements WHERE source_id = ?)",
                [source_id],
            ).fetchone()
        errors, *held = conn.execute(
            "SELECT (SELECT count(*) FROM ingest_errors WHERE source_uri = $uri),"
            f" {_HELD_IN_SOURCE_TABLES}",
            {"source": source_id, "uri": uri},
        ).fetchone()
        owners = [project, *(projects or [])]
        self.touch("sources", projects=owners, series_ids=series_ids or [])
        if series_ids:
            self.touch("measurements", "series", projects=owners, series_ids=series_ids)
        if errors:
            self.touch("ingest_errors")
        for table, count in zip(_SOURCE_TABLES, held, strict=True):
            if count:
                self.touch(table, *(("milestones",) if table == "phases" else ()))

    def add_written(
        self,
        project: str | None,
        series: Iterable[tuple[int, str | None]],
        tables: Iterable[str],
        errors: bool,
    ) -> None:
        """What add_source says of a document its caller has just written, from what the
        caller wrote: its project, the (series id, project) of its measurements' series,
        the other tables of _SOURCE_TABLES it wrote rows to, and whether it wrote ingest
        errors. No query: add_source's four cost 3.5-4.4 ms a document, a sixth of storing
        a small one. Rows of the source that the writer did not write (and did not delete)
        were there before: add_source, called before the write, named them.
        """
        series = list(series)
        series_ids = [series_id for series_id, _ in series]
        owners = [project, *{owner for _, owner in series}]
        self.touch("sources", projects=owners, series_ids=series_ids)
        if series_ids:
            self.touch("measurements", "series", projects=owners, series_ids=series_ids)
        if errors:
            self.touch("ingest_errors")
        for table in tables:
            if table not in _SOURCE_TABLES:
                raise ValueError(f"{table} is not a table of a source's rows")
            self.touch(table, *(("milestones",) if table == "phases" else ()))

    def rows(self) -> list[tuple[str, list[str] | None, list[int] | None]]:
        """data_changes' rows (table, projects, series ids), or the one of everything."""
        if not self.tables:
            return [(EVERYTHING, None, None)]
        return [
            (
                table,
                None if c.projects is None else sorted(c.projects),
                None if c.series_ids is None else sorted(c.series_ids),
            )
            for table, c in sorted(self.tables.items())
        ]


def _listed(values: Iterable[Any] | None) -> set[Any] | None:
    if values is None:
        return None
    kept = {v for v in values if v is not None}
    return kept if len(kept) <= MAX_LISTED else None


def _union(known: set[Any] | None, more: Iterable[Any] | None) -> set[Any] | None:
    if known is None or more is None:
        return None
    return _listed([*known, *more])


def _has_change_log(conn: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store has data_changes (a store before migration 11 has not; nor has
    a migration's transaction before 11's). Asked once a connection after it has: no
    migration drops it, and the question cost 0.8 ms of every document stored."""
    if conn in _CHANGE_LOGGED:
        return True
    found = bool(
        conn.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'data_changes'"
            " AND database_name = current_database() AND schema_name = current_schema()"
        ).fetchone()[0]
    )
    if found:
        _CHANGE_LOGGED.add(conn)
    return found


_CHANGE_LOGGED: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()


def _record(conn: duckdb.DuckDBPyConnection, changes: Changes) -> None:
    """Inside the transaction: its rows of data_changes, numbered after the last commit's
    (the largest + 1, as ids are: one writer at a time, and a lake has no sequences)."""
    if changes.no_rows or not _has_change_log(conn):
        return
    (seq,) = conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM data_changes").fetchone()
    now = datetime.now(UTC).replace(tzinfo=None)
    rows = changes.rows()
    # One statement, not executemany's one per row (6.4 against 1.8 ms for four rows).
    conn.execute(
        "INSERT INTO data_changes (seq, committed_at, table_name, projects, series_ids)"
        " SELECT ?, ?, unnest(?), unnest(?::VARCHAR[][]), unnest(?::BIGINT[][])",
        [seq, now, *(list(column) for column in zip(*rows, strict=True))],
    )


@dataclass(frozen=True, slots=True)
class Change:
    """One row of data_changes: table `table` changed in commit `seq`, in the rows of
    `projects` and of `series_ids` (None: any)."""

    seq: int
    table: str
    projects: frozenset[str] | None = None
    series_ids: frozenset[int] | None = None


@dataclass(frozen=True, slots=True)
class ChangeLog:
    """The store's data_changes after a commit a reader saw: `head` its newest commit
    (seq, committed_at; None when none yet), `changes` the rows after the one asked
    about, oldest first, and whether the store still holds that one (`continues`: False
    when the store is not the one seen then: replaced by a copy, rebuilt)."""

    head: tuple[int, datetime] | None
    changes: tuple[Change, ...]
    continues: bool


def change_log(
    conn: duckdb.DuckDBPyConnection, after: tuple[int, datetime] | None
) -> ChangeLog | None:
    """What changed since commit `after` (None: only the newest commit); None when the
    store keeps no change log (made before migration 11). Three small queries."""
    try:
        head = conn.execute(
            "SELECT seq, committed_at FROM data_changes ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    except duckdb.CatalogException:
        return None
    newest = None if head is None else (head[0], head[1])
    if after is None:
        return ChangeLog(newest, (), True)
    continues = bool(
        conn.execute(
            "SELECT count(*) FROM data_changes WHERE seq = ? AND committed_at = ?", list(after)
        ).fetchone()[0]
    )
    rows = conn.execute(
        "SELECT seq, table_name, projects, series_ids FROM data_changes WHERE seq > ?"
        " ORDER BY seq, table_name",
        [after[0]],
    ).fetchall()
    changes = tuple(
        Change(
            seq,
            table,
            None if projects is None else frozenset(projects),
            None if series is None else frozenset(series),
        )
        for seq, table, projects, series in rows
    )
    return ChangeLog(newest, changes, continues)


def data_version(path: Path | str | None = None) -> tuple[int, int, int, int]:
    """A key that changes whenever an ingest commits: the stat of the file and its WAL.

    Cheap enough to call on every page run, needs no connection (so it cannot contend
    with a writer), and is what cached queries are keyed on. A lake's is its newest
    snapshot (one catalog query on the process's shared reader).
    """
    location = path if path is not None else db_path()
    if lake.is_lake(location):
        return (lake.snapshot(str(location)), 0, 0, 0)
    target = Path(location)
    stamp: list[int] = []
    for candidate in (target, target.with_name(target.name + ".wal")):
        try:
            st = candidate.stat()
            stamp += [st.st_mtime_ns, st.st_size]
        except FileNotFoundError:
            stamp += [0, 0]
    return (stamp[0], stamp[1], stamp[2], stamp[3])
