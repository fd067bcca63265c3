"""The store on DuckLake, for more than one machine: a PostgreSQL catalog and Parquet data
files on shared storage, read and written by DuckDB itself, so every query of perfboard
runs on it unchanged. Chosen by setting PERFBOARD_DB to a DuckLake URI:

    PERFBOARD_DB='ducklake:postgres:host=pg.internal dbname=perfboard user=perfboard'
    PERFBOARD_LAKE_DATA=/mnt/shared/perfboard/    # where a new lake puts its Parquet files

What DuckLake lacks, and how perfboard does without it:

- keys, sequences, CHECK constraints, RETURNING and upserts: the migrations are read
  without them (`lake_ddl`); ids are the next after the largest (ingest.save.next_id) and
  upserts are MERGE or DELETE+INSERT, in both kinds of store;
- one writer at a time: a DuckDB file has its lock; a lake has PostgreSQL's advisory lock
  (`WritersLock`), held for each write transaction only. Ingests on many machines read
  and parse at once and store one document at a time; readers never wait (each query
  reads a snapshot).

Extensions: DuckDB installs ducklake and postgres from its repository when it can; where
it cannot (offline), they are loaded from PERFBOARD_DUCKDB_EXTENSIONS or from the
duckdb-ext-* wheels of PyPI (requirements-lake.txt), which exist for DuckDB 1.4.4 only.
"""

from __future__ import annotations

import os
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from perfboard.errors import StoreError

PREFIX = "ducklake:"
ALIAS = "perfboard_lake"  # the attached lake's name; `USE` makes it the default
EXTENSIONS = ("postgres_scanner", "ducklake")
# pg_advisory_lock's key for "perfboard writers" (any constant both sides agree on).
WRITERS_LOCK_KEY = 0x70657266626F617264 & 0x7FFF_FFFF_FFFF_FFFF
LOCK_POLL_S = 0.05


class LakeError(StoreError):
    """The lake cannot be used as configured (a missing extension, a bad URI)."""


def is_lake(location: str | Path) -> bool:
    return str(location).startswith(PREFIX)


def redacted(location: str | Path) -> str:
    """The store as it may be shown: a lake's password, if its URI holds one, hidden
    (better kept in PGPASSWORD or ~/.pgpass)."""
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", str(location))


def conninfo(location: str) -> str:
    """The libpq connection string of a `ducklake:postgres:...` catalog."""
    catalog = location[len(PREFIX) :]
    if not catalog.startswith("postgres:"):
        raise LakeError(
            "perfboard's lake needs a PostgreSQL catalog: PERFBOARD_DB=ducklake:postgres:..."
            " (a DuckDB or SQLite catalog file cannot take writers from many machines)"
        )
    return catalog[len("postgres:") :]


def extension_dir() -> Path | None:
    """Where the offline extension files are, or None (DuckDB installs them itself)."""
    configured = os.environ.get("PERFBOARD_DUCKDB_EXTENSIONS")
    if configured:
        return Path(configured)
    try:
        import duckdb_ext  # the duckdb-ext-* wheels: a namespace package of files
    except ImportError:
        return None
    for root in duckdb_ext.__path__:
        found = sorted(Path(root).glob(f"extensions/v{duckdb.__version__}/*"))
        if found:
            return found[0]
    return None


def load_extensions(conn: duckdb.DuckDBPyConnection) -> None:
    folder = extension_dir()
    for name in EXTENSIONS:
        if folder is None:
            conn.execute(f"INSTALL {name}")  # DuckDB's repository: needs the network
            conn.execute(f"LOAD {name}")
            continue
        path = folder / f"{name}.duckdb_extension"
        if not path.exists():
            raise LakeError(
                f"no {name} extension for DuckDB {duckdb.__version__} in {folder}:"
                " install requirements-lake.txt, or set PERFBOARD_DUCKDB_EXTENSIONS"
            )
        conn.execute(f"LOAD {sql_string(str(path))}")


def sql_string(text: str) -> str:
    """A SQL string literal, for the few statements that take no parameters (LOAD, ATTACH)."""
    return "'" + text.replace("'", "''") + "'"


def attach(conn: duckdb.DuckDBPyConnection, location: str, read_only: bool) -> None:
    conninfo(location)  # the catalog kind is checked before DuckDB tries it
    options = ["READ_ONLY"] if read_only else []
    data = os.environ.get("PERFBOARD_LAKE_DATA")
    if data and not read_only:
        # Only a new lake takes it; an existing one keeps the path its catalog records.
        options.append(f"DATA_PATH {sql_string(data)}")
    suffix = f" ({', '.join(options)})" if options else ""
    conn.execute(f"ATTACH {sql_string(location)} AS {ALIAS}{suffix}")
    conn.execute(f"USE {ALIAS}")


# Writer connections and their lake and lock timeout, by id(): db.transaction takes the
# writers' lock for these (a DuckDB connection takes no attributes of ours).
_writers: dict[int, tuple[str, float]] = {}


def open_writer(location: str, lock_timeout: float) -> duckdb.DuckDBPyConnection:
    """A connection of its own for a writer (an ingest, a triage): the lake attached."""
    conninfo(location)  # a bad URI fails here, before extensions are looked for
    conn = duckdb.connect()
    load_extensions(conn)
    # The first ATTACH of a new lake creates its catalog tables: writers starting at once
    # would each try (and all but one fail on PostgreSQL's keys).
    lock = writers_lock(location)
    lock.acquire(lock_timeout)
    try:
        attach(conn, location, read_only=False)
    finally:
        lock.release()
    _writers[id(conn)] = (location, lock_timeout)
    return conn


def writer_of(conn: duckdb.DuckDBPyConnection) -> tuple[str, float] | None:
    """(lake, lock timeout) when conn is a lake writer's, else None. The database name is
    checked too: an id is reused once its connection is gone."""
    found = _writers.get(id(conn))
    if found is None:
        return None
    if conn.execute("SELECT current_database()").fetchone()[0] != ALIAS:
        del _writers[id(conn)]
        return None
    return found


# Readers share one attached connection per process and lake: attaching costs a quarter
# of a second (the catalog is read), a cursor of an attached one 5 ms, and each query
# still reads the newest snapshot.
_readers: dict[str, duckdb.DuckDBPyConnection] = {}
_readers_lock = threading.Lock()


def open_reader(location: str) -> duckdb.DuckDBPyConnection:
    with _readers_lock:
        shared = _readers.get(location)
        if shared is None:
            conninfo(location)
            shared = duckdb.connect()
            load_extensions(shared)
            try:
                attach(shared, location, read_only=True)
            except duckdb.InvalidInputException as error:
                if "does not exist" not in str(error):
                    raise
                # Its first writer creates a lake; a reader only says there is none yet.
                raise FileNotFoundError(f"no lake at {redacted(location)} yet") from None
            _readers[location] = shared
        cursor = shared.cursor()
    cursor.execute(f"USE {ALIAS}")
    return cursor


def snapshot(location: str) -> int:
    """The lake's newest snapshot id: what cached queries are keyed on (it changes with
    every commit of every writer)."""
    conn = open_reader(location)
    try:
        return conn.execute(f"SELECT id FROM {ALIAS}.current_snapshot()").fetchone()[0]
    finally:
        conn.close()


# What DuckLake refuses in a CREATE statement, dropped from the migrations for a lake.
_UNSUPPORTED = [
    re.compile(r"^\s*CREATE SEQUENCE [^;]*;\s*$", re.MULTILINE),
    re.compile(r"^\s*CREATE (?:UNIQUE )?INDEX [^;]*;\s*$", re.MULTILINE),
    re.compile(r",\s*PRIMARY KEY\s*\([^)]*\)"),  # a table's key of several columns
    re.compile(r"\s+PRIMARY KEY\b"),
    re.compile(r"\s+UNIQUE\b"),
    re.compile(r"\s+DEFAULT nextval\('[a-z_]+'\)"),
    re.compile(r"\s+CHECK\s*\((?:[^()]|\([^()]*\))*\)"),  # one level of nested brackets
]


def lake_ddl(sql: str) -> str:
    """A migration as DuckLake takes it: without keys, sequences, indexes and CHECKs
    (perfboard's own code keeps what they kept: one writer at a time, ids it picks)."""
    for pattern in _UNSUPPORTED:
        sql = pattern.sub("", sql)
    return sql


# A file no snapshot refers to any more is deleted only this long after: a query that
# started on an older snapshot may still be reading it.
FILES_GRACE = timedelta(hours=1)


def data_files(conn: duckdb.DuckDBPyConnection) -> int:
    """The data and delete files the lake's newest snapshot reads, over every table."""
    return conn.execute(
        "SELECT coalesce(sum(file_count + delete_file_count), 0) FROM ducklake_table_info(?)",
        [ALIAS],
    ).fetchone()[0]


def compact(conn: duckdb.DuckDBPyConnection, keep: timedelta) -> int:
    """Merge the small files that one commit per document leaves, forget snapshots older
    than `keep` (time travel goes back that far), and delete the files nothing reads.
    Returns the snapshots expired. Run it weekly (`python -m ingest compact`), inside a
    write transaction of the caller's (db.transaction: one writer at a time)."""
    now = datetime.now(UTC)
    conn.execute("CALL ducklake_merge_adjacent_files(?)", [ALIAS])
    expired = conn.execute(
        "SELECT count(*) FROM ducklake_expire_snapshots(?, older_than => ?::TIMESTAMPTZ)",
        [ALIAS, now - keep],
    ).fetchone()[0]
    conn.execute(
        "CALL ducklake_cleanup_old_files(?, older_than => ?::TIMESTAMPTZ)",
        [ALIAS, now - FILES_GRACE],
    )
    return expired


class WritersLock:
    """PostgreSQL's advisory lock on the lake's catalog: one writer at a time, across
    machines. Held on a connection of its own (psycopg), for one write transaction."""

    def __init__(self, location: str) -> None:
        self._conninfo = conninfo(location)
        self._conn = None

    def acquire(self, timeout: float) -> None:
        try:
            import psycopg  # only lake writers need it (requirements-lake.txt)
        except ImportError:
            raise LakeError(
                "a lake's writers need psycopg: install requirements-lake.txt"
            ) from None
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg.connect(self._conninfo, autocommit=True)
            except psycopg.Error as error:
                # Redacted: a malformed connection string may be quoted back in part.
                raise LakeError(
                    f"cannot reach the lake's catalog: {redacted(str(error).strip())}"
                ) from None
        deadline = time.monotonic() + timeout
        while True:
            (taken,) = self._conn.execute(
                "SELECT pg_try_advisory_lock(%s)", [WRITERS_LOCK_KEY]
            ).fetchone()
            if taken:
                return
            if time.monotonic() >= deadline:
                # "lock" in the message: callers tell a busy store from a broken one by it.
                raise duckdb.IOException(
                    f"Could not set lock on the lake: another writer held perfboard's"
                    f" writers' lock for {timeout:g} s"
                )
            time.sleep(LOCK_POLL_S)

    def release(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.execute("SELECT pg_advisory_unlock(%s)", [WRITERS_LOCK_KEY])


_writers_locks: dict[str, WritersLock] = {}


def writers_lock(location: str) -> WritersLock:
    if location not in _writers_locks:
        _writers_locks[location] = WritersLock(location)
    return _writers_locks[location]
