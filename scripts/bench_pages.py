"""Server time of every page, on a 10 M-measurement store and on a 100 k one.

    python scripts/bench_pages.py [--big bench-out/synthetic-10m.duckdb] [--repeat 5]

Builds both synthetic stores with scripts/make_synthetic.py when missing. For each page
and store it runs the page with Streamlit's AppTest: once cold (caches cleared) and
--repeat times warm, and prints the cold time, the median warm time, and the ratio of
the 10 M median to the 100 k one. Goals (issue 3): warm <= 0.25 s, cold <= 2 s on 10 M,
and 10 M within 1.5x of 100 k. Server time only: the browser's drawing is not in it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.make_synthetic import build  # noqa: E402

PAGES = {
    "Overview": ("pages/overview.py", {}),
    "Phases": ("pages/phases.py", {"phase": "3"}),
    "Trends": (
        "pages/trends.py",
        {"metric": "latency", "benchmark": "ernie", "device": "Tesla P4"},
    ),
    "Pull requests": ("pages/pull_requests.py", {}),
    "Sources": ("pages/sources.py", {"source": "7"}),
}


def run_page(db: Path, page: str, params: dict[str, str]) -> float:
    from streamlit.testing.v1 import AppTest

    os.environ["PERFBOARD_DB"] = str(db)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(page)
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"{page} on {db}: {at.exception[0].message}")
    return seconds


def measure(db: Path, repeat: int) -> dict[str, tuple[float, float]]:
    import streamlit as st

    figures = {}
    for name, (page, params) in PAGES.items():
        st.cache_data.clear()
        cold = run_page(db, page, params)
        warm = statistics.median(run_page(db, page, params) for _ in range(repeat))
        figures[name] = (cold, warm)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--small", type=Path, default=ROOT / "bench-out" / "synthetic-100k.duckdb")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for path, size in ((args.big, 10_000_000), (args.small, 100_000)):
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            build(path, size, 2_000)
    big, small = measure(args.big, args.repeat), measure(args.small, args.repeat)
    print(f"{'page':<15}{'10M cold':>10}{'10M warm':>10}{'100k warm':>11}{'ratio':>7}  goals")
    for name in PAGES:
        (cold, warm), (_, small_warm) = big[name], small[name]
        ok = cold <= 2 and warm <= 0.25 and warm <= 1.5 * small_warm
        print(
            f"{name:<15}{cold:>9.2f}s{warm:>9.3f}s{small_warm:>10.3f}s{warm / small_warm:>7.2f}"
            f"  {'met' if ok else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
