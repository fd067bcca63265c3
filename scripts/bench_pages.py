"""Server time of every page, on a 10 M-measurement store and on a 100 k one.

    python scripts/bench_pages.py [--big bench-out/synthetic-10m.duckdb] [--repeat 5]
                                  [--after-ingest-only]

Builds both synthetic stores with scripts/make_synthetic.py when missing. For each page
and store it runs the page with Streamlit's AppTest: once cold (caches cleared) and
--repeat times warm, and prints the cold time, the median warm time, and the ratio of
the 10 M median to the 100 k one. Goals (issue 3): warm <= 0.25 s, cold <= 2 s on 10 M,
and 10 M within 1.5x of 100 k. With Debian's Chromium at hand it also times, on the 10 M
store, a browser opening each page until its first chart (or table) is drawn: the first
load after the server starts (cold), the median of --repeat reloads (warm), and the median
of --repeat clicks on its sidebar link from another page of the open app (in app). Profiles and
Ops read what scripts/add_synthetic_profiles.py and add_synthetic_ops.py add to the 10 M
store (see scripts/load_test.py); the 100 k store holds none, so their ratio says little.

Then (issue 16), on a copy of the 10 M store: each page warm, an ingest of the load test's
kind (one new point in each of 100 series of every project: scripts/load_test.py), and
each page again: its time and how many of its queries were read again (the rest stayed
cached: an ingest invalidates only what it changed). --after-ingest-only runs just that.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import alerts, db, ui  # noqa: E402
from scripts import load_test  # noqa: E402
from scripts.make_synthetic import build  # noqa: E402

URLS = {
    "Overview": "/",
    "Phases": "/phases?phase=3",
    "Trends": "/trends?metric=latency&benchmark=ernie&device=Tesla+P4",
    "Pull requests": "/prs",
    "Compare": "/compare?part=Paired+variants&dim=framework",
    "Explain a change": "/explain",
    "Profiles": "/profiles",
    "Ops": "/ops",
    "Alerts": "/alerts",
    "Weekly report": "/report?week=2019-W23",
    "Sources": "/sources?source=7",
}
CHROMIUM = os.environ.get("PERFBOARD_CHROMIUM", "/usr/bin/chromium")

PAGES = {
    "Overview": ("pages/overview.py", {}),
    "Phases": ("pages/phases.py", {"phase": "3"}),
    "Trends": (
        "pages/trends.py",
        {"metric": "latency", "benchmark": "ernie", "device": "Tesla P4"},
    ),
    "Pull requests": ("pages/pull_requests.py", {}),
    "Compare": ("pages/compare.py", {"part": "Paired variants", "dim": "framework"}),
    "Explain a change": ("pages/explain.py", {}),
    "Profiles": ("pages/profiles.py", {}),
    "Ops": ("pages/ops.py", {}),
    "Alerts": ("pages/alerts.py", {}),
    "Weekly report": ("pages/report.py", {"week": "2019-W23"}),
    "Sources": ("pages/sources.py", {"source": "7"}),
}


def run_page(db: Path, page: str, params: dict[str, str], charts: int | None = None) -> float:
    """Seconds of one AppTest run of `page` on `db`; `charts`: how many charts it must draw."""
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
    if charts is not None and len(at.get("vega_lite_chart")) != charts:
        raise SystemExit(
            f"{page} on {db} drew {len(at.get('vega_lite_chart'))} charts, not {charts}"
        )
    return seconds


def measure(db: Path, repeat: int) -> dict[str, tuple[float, float]]:
    import streamlit as st

    figures = {}
    for name, (page, params) in PAGES.items():
        st.cache_data.clear()
        ui.RESULTS.clear()  # perfboard's own query cache
        cold = run_page(db, page, params)
        warm = statistics.median(run_page(db, page, params) for _ in range(repeat))
        figures[name] = (cold, warm)
    return figures


def after_ingest(big: Path) -> dict[str, tuple[float, int, int, float, int]]:
    """Per page on a copy of `big`: warm time and queries, then after one ingest round of
    the load test the time, the queries read again and the queries it ran."""
    import random
    import tempfile

    from ingest.cli import main as ingest_main

    reads: list[str] = []
    real_read = ui._read

    def counted(fn, path, args):  # type: ignore[no-untyped-def]
        if fn is not db.change_log:
            reads.append(fn.__name__)
        return real_read(fn, path, args)

    ui._read = counted
    figures = {}
    try:
        with tempfile.TemporaryDirectory(prefix="perfboard-bench-") as tmp:
            copy = load_test.copy_store(big, Path(tmp))
            conn = db.connect(copy)  # migrated: the change log of migration 11
            rng = random.Random(7)
            load_test.align_series_keys(conn)
            series, newest = load_test.ingest_series(conn, load_test.gather_pools(conn, rng), rng)
            conn.close()
            warm: dict[str, tuple[float, int]] = {}
            for name, (page, params) in PAGES.items():
                run_page(copy, page, params)  # cached now
                reads.clear()
                warm[name] = (run_page(copy, page, params), len(reads))
            round_file = Path(tmp) / "round.jsonl"
            load_test.write_round(round_file, series, 1, newest, 7)
            if ingest_main(["results", str(round_file), "--db", str(copy), "--quiet"]) != 0:
                raise SystemExit("the ingest round failed")
            after: dict[str, tuple[float, int]] = {}
            for name, (page, params) in PAGES.items():
                reads.clear()
                after[name] = (run_page(copy, page, params), len(reads))
            for name, (page, params) in PAGES.items():
                ui.RESULTS.clear()
                reads.clear()
                run_page(copy, page, params)  # every query of the page, cold
                figures[name] = (*warm[name], *after[name], len(reads))
    finally:
        ui._read = real_read
    return figures


def sidebar_times(context: Any, base: str, drawn: str, repeat: int) -> dict[str, float]:
    """Median seconds from a click on a page's sidebar link (from another page of the
    open app) to its first drawn chart or grid: a second visit within a session, where
    the browser keeps the app and only the page's script runs."""
    page = context.new_page()
    page.goto(base + "/")
    page.locator(drawn).first.wait_for(timeout=60_000)
    # Drawn by this page's run: Streamlit marks the elements of the run before as stale.
    fresh = ", ".join(
        f"[data-testid='stMain'] [data-testid='stElementContainer'][data-stale='false'] {d}"
        for d in drawn.split(",")
    )

    def visit(name: str) -> float:
        started = time.perf_counter()
        page.locator("[data-testid='stSidebarNav'] a", has_text=name).first.click()
        page.locator("[data-testid='stMain'] h1", has_text=name).first.wait_for(timeout=60_000)
        page.locator(fresh).first.wait_for(timeout=60_000)
        return time.perf_counter() - started

    names = list(URLS)
    figures = {}
    for i, name in enumerate(names):
        times = []
        for _ in range(repeat):
            visit(names[(i + 1) % len(names)])  # away first, untimed
            times.append(visit(name))
        figures[name] = statistics.median(times)
    page.close()
    return figures


def browser_times(db: Path, repeat: int) -> dict[str, tuple[float, float, float]]:
    """Seconds from navigation to the first drawn chart or data grid: cold (the first
    load after the server starts), warm (the median of reloads) and in the app (the
    median of sidebar clicks from another page)."""
    import socket
    import subprocess

    import requests
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "serve.py"), "--server.port", str(port)],
        env={**os.environ, "PERFBOARD_DB": str(db)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    figures: dict[str, tuple[float, float]] = {}
    try:
        for _ in range(240):  # 503 while it warms up, no answer before it listens
            with contextlib.suppress(requests.ConnectionError):
                if requests.get(f"{base}/_stcore/health", timeout=1).ok:
                    break
            time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            # A chart, a table, or the notice a page draws in their place (Compare's
            # Paired variants finds no pair on the synthetic store): its first content.
            drawn = (
                ".vega-embed canvas, .vega-embed svg, [data-testid='stDataFrame'] canvas,"
                " iframe, [data-testid='stAlertContainer']"
            )
            # One context: the app's scripts come from its cache after the first load, as
            # for a teammate who opens the dashboard every morning.
            context = browser.new_context(viewport={"width": 1400, "height": 1200})
            for name, url in URLS.items():
                times = []
                for _ in range(repeat + 1):
                    page = context.new_page()
                    started = time.perf_counter()
                    page.goto(base + url)
                    page.locator(drawn).first.wait_for(timeout=60_000)
                    times.append(time.perf_counter() - started)
                    page.close()
                figures[name] = (times[0], statistics.median(times[1:]))
            in_app = sidebar_times(context, base, drawn, repeat)
            figures = {n: (*f, in_app[n]) for n, f in figures.items()}
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--big", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--small", type=Path, default=ROOT / "bench-out" / "synthetic-100k.duckdb")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--after-ingest-only", action="store_true")
    parser.add_argument("--browser-only", action="store_true", help="only the browser times")
    args = parser.parse_args()
    for path, size in ((args.big, 10_000_000), (args.small, 100_000)):
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            build(path, size, 2_000)
        conn = db.connect(path)  # the Alerts page needs a detection: once per store
        if not conn.execute("SELECT count(*) FROM series_noise").fetchall()[0][0]:
            alerts.detect_store(conn)
        conn.close()
    if args.after_ingest_only:
        return print_after_ingest(args.big)
    if args.browser_only:
        print_browser_times(args.big, args.repeat)
        return 0
    big, small = measure(args.big, args.repeat), measure(args.small, args.repeat)
    print("server time (AppTest)")
    print(f"{'page':<15}{'10M cold':>10}{'10M warm':>10}{'100k warm':>11}{'ratio':>7}  goals")
    for name in PAGES:
        (cold, warm), (_, small_warm) = big[name], small[name]
        ok = cold <= 2 and warm <= 0.25 and warm <= 1.5 * small_warm
        print(
            f"{name:<15}{cold:>9.2f}s{warm:>9.3f}s{small_warm:>10.3f}s{warm / small_warm:>7.2f}"
            f"  {'met' if ok else 'MISSED'}"
        )
    print_browser_times(args.big, args.repeat)
    return print_after_ingest(args.big)


def print_browser_times(big: Path, repeat: int) -> None:
    if not Path(CHROMIUM).exists():
        print(f"browser times skipped: no Chromium at {CHROMIUM}")
        return
    print("\nbrowser, navigation to the first drawn chart or table (10 M store)")
    print(f"{'page':<17}{'cold':>8}{'reload':>8}{'in app':>8}  goals (cold <= 2 s, again <= 1 s)")
    for name, (cold, warm, in_app) in browser_times(big, repeat).items():
        verdict = "met" if cold <= 2 and min(warm, in_app) <= 1 else "MISSED"
        print(f"{name:<17}{cold:>7.2f}s{warm:>7.2f}s{in_app:>7.2f}s  {verdict}")


def print_after_ingest(big: Path) -> int:
    print("\nafter an ingest of the load test's kind (100 series, every project; 10 M store)")
    print(f"{'page':<17}{'warm':>8}{'after':>8}  queries read again / of the page")
    for name, (warm, _, after, again, total) in after_ingest(big).items():
        print(f"{name:<17}{warm:>7.2f}s{after:>7.2f}s  {again} / {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
