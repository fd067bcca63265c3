"""``python -m perfboard``: work on what the store holds.

    python -m perfboard detect [--project P] [--json] [--confidence 0.99]

`detect` finds the change points of every series (or a project's) over its whole
history, stores them as alerts (the triage set on an alert stays), and prints them.
Exit status: 0 done, 2 the command could not run (no store, locked past the timeout).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import closing
from pathlib import Path

import duckdb

from perfboard import alerts, db, lake


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m perfboard", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("detect", help="find change points and store them as alerts")
    p.add_argument("--project", help="only this project's series")
    p.add_argument("--json", action="store_true", help="print the change points as JSON lines")
    p.add_argument("--confidence", type=float, default=alerts.CONFIDENCE)
    p.add_argument("--db", type=Path, help="database file (default: PERFBOARD_DB)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0.5 < args.confidence < 1:
        print("perfboard: --confidence must be between 0.5 and 1 (e.g. 0.99)", file=sys.stderr)
        return 2
    path = args.db or db.db_path()
    if not db.exists(path):
        print(f"perfboard: no database at {path}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        conn = db.connect(path)
    except duckdb.Error as error:
        print(f"perfboard: cannot open {lake.redacted(path)}: {error}", file=sys.stderr)
        return 2
    try:
        with closing(conn):
            result = alerts.detect_store(conn, project=args.project, confidence=args.confidence)
            labels = _labels(conn, {int(r["series_id"]) for r in result.rows})  # type: ignore[call-overload]
    except duckdb.Error as error:  # a full disk, say: its transaction took it all back
        print(
            f"perfboard: change detection could not be stored: {error}. What was stored"
            " before stays stored; run detect again once that is fixed",
            file=sys.stderr,
        )
        return 2
    for row in sorted(result.rows, key=lambda r: (str(r["after_at"]), r["series_id"])):
        if args.json:
            print(json.dumps({**row, "series": labels[row["series_id"]]}, default=str))
        else:
            print(
                f"{row['kind']:<11} {row['change_pct']:+7.2f}%  {row['before']:.4g} -> "
                f"{row['after']:.4g}  {row['before_version'] or '?'} -> "
                f"{row['after_version'] or '?'} ({row['after_at'] or 'undated'})  "
                f"{labels[row['series_id']]}  p={row['p_value']:.2g}"
            )
    print(
        f"{result.series} series examined, {result.change_points} change points,"
        f" {result.too_noisy} too noisy to alert, {result.latest_outliers} with a newest value"
        f" outside their noise, in {time.perf_counter() - started:.2f} s",
        file=sys.stderr,
    )
    return 0


def _labels(conn: duckdb.DuckDBPyConnection, ids: set[int]) -> dict[int, str]:
    rows = conn.execute(
        "SELECT series_id, concat_ws(' · ', project, benchmark, metric, framework, device,"
        " params::VARCHAR) FROM series WHERE list_contains(?, series_id)",
        [sorted(ids)],
    ).fetchall()
    return dict(rows)


if __name__ == "__main__":
    sys.exit(main())
