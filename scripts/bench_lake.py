"""The lake against the file store: page times, moving a store in, and writers at once.

    .venv-lake/bin/python scripts/bench_lake.py [--measurements 1000000] [--writers 1,2,4]
        [--files 8] [--rows 20000] [--repeat 3] [--out bench-out/lake.json]

Runs in .venv-lake (DuckDB 1.4.4 and the lake's extension wheels) and starts its own
PostgreSQL on loopback (as tests/postgres_server.py does); the lake's Parquet files go to
a temp folder on the local disk (shared storage would add its own latency).

(a) Moving in: a synthetic store of MEASUREMENTS (scripts/make_synthetic.py) copied into
    an empty lake with scripts/copy_store.py.
(b) Pages: every page of scripts/bench_pages.py through AppTest, on the file and on the
    lake: cold (caches cleared) and warm (median of --repeat).
(c) Writers: FILES result files of ROWS records each (distinct times, shared series),
    stored by W ingest processes at once (each its share of the files, --no-detect),
    into a fresh lake, for each W of --writers; and by one process into a file store.
    Wall time from the first start to the last exit; every run is checked whole.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from perfboard import db, ui  # noqa: E402
from scripts import make_synthetic  # noqa: E402
from scripts.bench_pages import PAGES, run_page  # noqa: E402
from scripts.copy_store import copy_store  # noqa: E402
from tests.postgres_server import running_postgres  # noqa: E402

START = datetime(2020, 1, 6)
INGEST = [sys.executable, "-m", "ingest", "results"]
QUIET = ["--quiet", "--no-detect", "--lock-timeout", "600"]


def write_files(folder: Path, files: int, rows: int) -> list[Path]:
    """FILES nightly result files over 50 shared series, a day apart, ROWS records each."""
    paths = []
    for f in range(files):
        path = folder / f"nightly-{f:03d}.jsonl"
        lines = []
        for i in range(rows):
            record = {
                "project": "lake-bench",
                "benchmark": f"model{i % 5}",
                "task": "inference",
                "metric": "latency",
                "unit": "ms",
                "direction": "lower",
                "framework": "paddle",
                "device": "Tesla T4",
                "params": {"batch_size": i % 10},
                "version": f"n{f}-{i // 50}",
                "time": (START + timedelta(days=f, seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "value": round(5 + (i % 50) / 10 + (i % 7) / 100, 4),
                "status": "ok",
            }
            lines.append(json.dumps(record))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def ingest_at_once(store: str | Path, shares: list[list[Path]]) -> float:
    """Seconds for one ingest process per share, all started at once."""
    started = time.perf_counter()
    running = [
        subprocess.Popen(
            [*INGEST, *map(str, share), "--db", str(store), *QUIET],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    for process in running:
        _, err = process.communicate(timeout=3600)
        if process.returncode:
            raise SystemExit(f"an ingest into {store} failed: {err}")
    return time.perf_counter() - started


def count(store: str | Path) -> int:
    conn = db.connect(store, read_only=True)
    try:
        return conn.execute("SELECT count(*) FROM measurements").fetchone()[0]
    finally:
        conn.close()


def page_times(store: str | Path, repeat: int) -> dict[str, tuple[float, float]]:
    import streamlit as st

    figures = {}
    for name, (page, params) in PAGES.items():
        st.cache_data.clear()
        ui.RESULTS.clear()  # perfboard's own query cache
        cold = run_page(store, page, params)  # type: ignore[arg-type]
        warm = statistics.median(run_page(store, page, params) for _ in range(repeat))  # type: ignore[arg-type]
        figures[name] = (cold, warm)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--measurements", type=int, default=1_000_000)
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "lake.json")
    args = parser.parse_args()
    print(f"DuckDB {duckdb.__version__}", file=sys.stderr)
    report: dict[str, object] = {"duckdb": duckdb.__version__}
    with tempfile.TemporaryDirectory() as tmp, running_postgres() as postgres:
        folder = Path(tmp)

        def new_lake(name: str) -> str:
            uri = "ducklake:postgres:" + postgres.create_database(name)
            db.connect(uri).close()  # created (and its data path set) before any timing
            return uri

        os.environ["PERFBOARD_LAKE_DATA"] = f"{folder / 'lake-data'}/"
        store = folder / "synthetic.duckdb"
        make_synthetic.build(store, args.measurements, 2_000)
        lake_uri = new_lake("pages")
        started = time.perf_counter()
        copied = copy_store(store, lake_uri)
        moved = time.perf_counter() - started
        assert copied["measurements"] == count(store) == count(lake_uri)
        print(
            f"(a) {copied['measurements']:,} measurements moved in: {moved:.1f} s", file=sys.stderr
        )
        report["move_in_s"] = round(moved, 2)

        pages = {"file": page_times(store, args.repeat), "lake": page_times(lake_uri, args.repeat)}
        report["pages"] = pages
        print("(b) page         file cold/warm    lake cold/warm   (s)", file=sys.stderr)
        for name in PAGES:
            (fc, fw), (lc, lw) = pages["file"][name], pages["lake"][name]
            print(f"    {name:14} {fc:6.2f} {fw:6.2f}     {lc:6.2f} {lw:6.2f}", file=sys.stderr)

        files = write_files(folder, args.files, args.rows)
        expected = args.files * args.rows
        file_store = folder / "writers.duckdb"
        one = ingest_at_once(file_store, [files])
        assert count(file_store) == expected
        writers: dict[str, float] = {"file, 1 process": round(one, 2)}
        print(f"(c) {args.files} files x {args.rows:,} rows", file=sys.stderr)
        print(f"    file store, 1 process: {one:.1f} s", file=sys.stderr)
        for w in [int(n) for n in args.writers.split(",")]:
            uri = new_lake(f"writers_{w}")
            seconds = ingest_at_once(uri, [files[i::w] for i in range(w)])
            assert count(uri) == expected, f"{w} writers stored {count(uri)}, not {expected}"
            writers[f"lake, {w} processes"] = round(seconds, 2)
            print(f"    lake, {w} processes at once: {seconds:.1f} s", file=sys.stderr)
        report["writers"] = writers
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
