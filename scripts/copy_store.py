"""Copy a whole store into another: how a team's DuckDB file moves into a lake (or back).

    python scripts/copy_store.py --from data/perfboard.duckdb --to 'ducklake:postgres:...'

A file written by a newer DuckDB than the one reading it does not open (2.0.1's files in
1.4.4, the lake's DuckDB), so the move goes through Parquet, which both read:

    .venv/bin/python scripts/copy_store.py --from data/perfboard.duckdb --to moving/
    .venv-lake/bin/python scripts/copy_store.py --from moving/ \
        --to 'ducklake:postgres:host=pg.internal dbname=perfboard'

A folder as --to gets one Parquet file per table and the schema version; a folder as
--from is read back. A store target must be empty and is brought to this perfboard's
schema first; the source must be at that schema too (`python -m ingest migrate --db
SOURCE`). Every table is copied by column name in one transaction: the target holds all
of it or nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from perfboard import db, lake  # noqa: E402

TABLES = (
    "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
    " AND table_schema = 'main' AND table_type = 'BASE TABLE'"
    " AND table_name <> 'schema_migrations' ORDER BY table_name"
)


VERSION_FILE = "schema_version"


def to_parquet(source: Path, folder: Path) -> dict[str, int]:
    """Every table of the store `source` as FOLDER/TABLE.parquet, and its schema version."""
    conn = db.connect(source, read_only=True)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        copied = {}
        for (table,) in conn.execute(TABLES).fetchall():
            path = lake.sql_string(str(folder / f"{table}.parquet"))
            conn.execute(f"COPY {table} TO {path} (FORMAT parquet)")
            copied[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        (folder / VERSION_FILE).write_text(f"{version}\n", encoding="ascii")
        return copied
    finally:
        conn.close()


def copy_store(source: Path, target: str | Path) -> dict[str, int]:
    """Rows copied per table."""
    if not source.exists():
        raise ValueError(f"no store at {source}")
    if not lake.is_lake(target) and (Path(target).is_dir() or str(target).endswith("/")):
        return to_parquet(source, Path(target))
    conn = db.connect(target)
    try:
        if source.is_dir():
            theirs = int((source / VERSION_FILE).read_text(encoding="ascii"))
        else:
            conn.execute(f"ATTACH {lake.sql_string(str(source))} AS copy_source (READ_ONLY)")
            theirs = conn.execute(
                "SELECT max(version) FROM copy_source.main.schema_migrations"
            ).fetchone()[0]
        ours = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
        if theirs != ours:
            raise ValueError(
                f"{source} is at schema {theirs}, this perfboard at {ours}:"
                " run `python -m ingest migrate --db SOURCE` first"
            )
        tables = [name for (name,) in conn.execute(TABLES).fetchall()]
        copied = {}
        with db.transaction(conn):
            for table in tables:
                # Names from the store's own catalog, not from the command line.
                if conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]:
                    raise ValueError(f"{lake.redacted(target)} is not empty ({table} has rows)")
                if source.is_dir():
                    path = lake.sql_string(str(source / f"{table}.parquet"))
                    conn.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet({path})")
                else:
                    conn.execute(
                        f"INSERT INTO {table} BY NAME SELECT * FROM copy_source.main.{table}"
                    )
                copied[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        return copied
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", type=Path, required=True, help="a store or folder")
    parser.add_argument(
        "--to", dest="target", required=True, help="a store, ducklake: URI or folder/"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    try:
        copied = copy_store(args.source, args.target)
    except (OSError, ValueError, lake.LakeError, duckdb.Error) as error:
        print(f"copy_store: {error}", file=sys.stderr)
        return 2
    print(
        f"copied {sum(copied.values()):,} rows of {len(copied)} tables into"
        f" {lake.redacted(args.target)} in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
