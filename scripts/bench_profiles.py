"""Server time of the Profiles page showing the diff of two runs, on the 10 M synthetic store
with 500 profile runs x 300 events.

    python scripts/bench_profiles.py [--db bench-out/synthetic-10m.duckdb] [--repeat 5]

Builds the store with scripts/make_synthetic.py when it is missing and adds the profiles
with scripts/add_synthetic_profiles.py when it holds none. Runs the page with Streamlit's
AppTest at ``/profiles?run=A&vs=B`` (the two newest synthetic runs of one source): once
cold (st.cache_data cleared) and --repeat times warm, and prints the cold time and the
median warm one. Goal (issue 6): warm under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import db, ui  # noqa: E402
from scripts.add_synthetic_profiles import URI_PREFIX, add  # noqa: E402
from scripts.bench_pages import run_page as time_page  # noqa: E402
from scripts.make_synthetic import build  # noqa: E402

GOAL_WARM_S = 1.0


def run_page(path: Path, params: dict[str, str]) -> float:
    """The diff and the breakdown must both be drawn: two charts."""
    return time_page(path, "pages/profiles.py", params, charts=2)


def two_runs(path: Path) -> dict[str, str]:
    """The deep link of the diff timed: the last two runs of the newest synthetic source."""
    conn = db.connect(path, read_only=True)
    try:
        rows = conn.execute(
            "SELECT e.source_id, e.run FROM profile_events e JOIN sources s USING (source_id)"
            " WHERE starts_with(s.uri, ?) GROUP BY ALL"
            " ORDER BY e.source_id DESC, e.run DESC LIMIT 2",
            [URI_PREFIX],
        ).fetchall()
    finally:
        conn.close()
    (b_source, b_run), (a_source, a_run) = rows
    return {"run": f"{a_source}:{a_run}", "vs": f"{b_source}:{b_run}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        build(args.db, 10_000_000, 2_000)
    conn = db.connect(args.db, read_only=True)
    has = conn.execute("SELECT count(*) FROM sources WHERE starts_with(uri, ?)", [URI_PREFIX])
    missing = not has.fetchone()[0]
    conn.close()
    if missing:
        add(args.db)
    conn = db.connect(args.db, read_only=True)
    runs, events, measurements = conn.execute(
        "SELECT count(DISTINCT (source_id, run)), count(*),"
        " (SELECT count(*) FROM measurements) FROM profile_events"
    ).fetchone()
    conn.close()
    params = two_runs(args.db)

    import streamlit as st

    st.cache_data.clear()

    ui.RESULTS.clear()  # perfboard's own query cache
    cold = run_page(args.db, params)
    warm = [run_page(args.db, params) for _ in range(args.repeat)]
    median = statistics.median(warm)
    print(
        f"Profiles /profiles?run={params['run']}&vs={params['vs']} on {args.db.name}"
        f" ({measurements:,} measurements, {runs:,} profile runs, {events:,} events):"
    )
    print(
        f"  cold {cold:.3f} s, warm median of {args.repeat} {median:.3f} s"
        f" (min {min(warm):.3f}, max {max(warm):.3f}); goal warm < {GOAL_WARM_S:g} s:"
        f" {'met' if median < GOAL_WARM_S else 'MISSED'}"
    )
    return 0 if median < GOAL_WARM_S else 1


if __name__ == "__main__":
    sys.exit(main())
