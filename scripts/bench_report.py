"""Time change detection over a whole store and the weekly report of one of its weeks.

    python scripts/bench_report.py [--db bench-out/synthetic-10m.duckdb] [--repeat 5]

Goal (issue 5): the weekly report of a week of the 10M-measurement synthetic store
(scripts/make_synthetic.py; built here when missing) renders in under 2 s, its charts
included. Detection runs first over every series (2,000 x 5,000 points), so the report
has alerts to show; its time is printed too. The report is built from a fresh read-only
connection each round, in both formats (Markdown with its PNG charts, and HTML with inline
SVG). The first round pays vl-convert's start-up (about 0.6 s, once per process); the
goal is met by the median.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import alerts, db, report  # noqa: E402

WEEK = date(2019, 6, 3)  # mid-history: a week with steps, milestones and stale series


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--week", default=report.week_label(WEEK))
    parser.add_argument("--no-detect", action="store_true", help="keep the stored alerts")
    args = parser.parse_args()
    if not args.db.exists():
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "make_synthetic.py"), "--out", str(args.db)],
            check=True,
        )
    conn = db.connect(args.db)
    n = conn.execute("SELECT count(*) FROM measurements").fetchone()[0]
    if not args.no_detect:
        started = time.perf_counter()
        found = alerts.detect_store(conn)
        print(
            f"detection over {found.series:,} series ({n:,} measurements):"
            f" {time.perf_counter() - started:.2f} s, {found.change_points:,} change points,"
            f" {found.too_noisy} too noisy"
        )
    conn.close()
    monday = report.parse_week(args.week)
    times: dict[str, list[float]] = {"md": [], "html": []}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.repeat):
            for fmt in ("md", "html"):  # what one `python -m perfboard.report` run does
                started = time.perf_counter()
                conn = db.connect(args.db, read_only=True)
                built = report.build(conn, monday)
                conn.close()
                if fmt == "md":
                    text = report.to_markdown(built, report.write_pngs(built, Path(folder)))
                else:
                    text = report.to_html(built)
                times[fmt].append(time.perf_counter() - started)
            charts = sum(1 for s in built.sections for b in s.blocks if isinstance(b, report.Chart))
            print(
                f"round {round_ + 1}: Markdown + PNGs {times['md'][-1]:.2f} s,"
                f" HTML {times['html'][-1]:.2f} s ({len(text):,} chars, {charts} charts)"
            )
    medians = {fmt: statistics.median(t) for fmt, t in times.items()}
    print(
        f"weekly report {args.week}: median {medians['md']:.2f} s as Markdown with PNG charts,"
        f" {medians['html']:.2f} s as HTML with SVG charts (goal < 2 s each)"
    )
    return 0 if max(medians.values()) < 2 else 1


if __name__ == "__main__":
    sys.exit(main())
