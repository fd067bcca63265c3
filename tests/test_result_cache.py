"""perfboard.result_cache: the dashboard's query results, bounded in bytes, and kept until
what each reads changes (data_changes)."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ingest.results import write_records
from perfboard import alerts, db, queries
from perfboard.db import EVERYTHING, Change, ChangeLog
from perfboard.result_cache import (
    QUERY_READS,
    Reads,
    ResultCache,
    StoreVersions,
    nbytes,
    reads_of,
)
from tests.conftest import ingest


def frame(rows: int, text: str = "x") -> pd.DataFrame:
    return pd.DataFrame({"value": range(rows), "label": [text * 10] * rows})


def test_a_result_is_read_once_per_version_and_handed_out_as_a_copy() -> None:
    cache = ResultCache(max_bytes=10 * 2**20)
    reads: list[int] = []

    def read(version: int) -> pd.DataFrame:
        reads.append(version)
        return frame(3).assign(version=version)

    first = cache.get("q", 1, lambda: read(1))
    first.loc[0, "value"] = -1  # a page changes what it is handed
    again = cache.get("q", 1, lambda: read(1))
    assert reads == [1] and again.value.tolist() == [0, 1, 2]
    newer = cache.get("q", 2, lambda: read(2))  # an ingest committed: read again
    assert reads == [1, 2] and set(newer.version) == {2}
    stale = cache.stale("q")
    assert stale is not None and set(stale.version) == {2}
    assert cache.stale("never asked") is None


def test_the_cache_holds_at_most_its_bytes_dropping_the_least_recently_used() -> None:
    one = nbytes(frame(1000))
    assert 20_000 < one < 200_000  # the strings counted, not only their pointers
    cache = ResultCache(max_bytes=3 * one + 100)
    for key in "abc":
        cache.get(key, 1, lambda: frame(1000))
    cache.get("a", 1, lambda: frame(1000))  # a is used again: b is now the oldest
    cache.get("d", 1, lambda: frame(1000))
    assert len(cache) == 3 and cache.size <= cache.max_bytes
    assert cache.stale("b") is None and cache.stale("a") is not None
    # A result larger than the whole cache is handed out, not kept.
    big = cache.get("big", 1, lambda: frame(5000))
    assert len(big) == 5000 and cache.stale("big") is None and cache.size <= cache.max_bytes


def test_sessions_that_miss_the_same_query_at_once_read_it_once() -> None:
    cache = ResultCache(max_bytes=2**20)
    reads = []

    def slow_read() -> pd.DataFrame:
        reads.append(1)
        time.sleep(0.3)
        return frame(10)

    results: list[pd.DataFrame] = []
    sessions = [
        threading.Thread(target=lambda: results.append(cache.get("q", 7, slow_read)))
        for _ in range(8)
    ]
    for session in sessions:
        session.start()
    for session in sessions:
        session.join()
    assert len(reads) == 1 and len(results) == 8
    assert all(r.equals(results[0]) for r in results)


# -- the version of what a query reads (issue 16) ---------------------------------------------


class FakeStore:
    """A stamp and a change log that a test moves by hand."""

    def __init__(self) -> None:
        self.stamp = 0
        self.rows: list[Change] = [Change(1, EVERYTHING)]  # the migration's commit
        self.at: dict[int, datetime] = {1: datetime(2020, 1, 1)}

    def commit(self, *changes: tuple[str, set[int] | None]) -> None:
        seq = max(self.at) + 1
        self.at[seq] = datetime(2020, 1, 1) + timedelta(seconds=seq)
        self.rows += [Change(seq, t, None, None if s is None else frozenset(s)) for t, s in changes]
        self.stamp += 1

    def log(self, after: tuple[int, datetime] | None) -> ChangeLog:
        newest = max(self.at)
        head = (newest, self.at[newest])
        if after is None:
            return ChangeLog(head, (), True)
        continues = self.at.get(after[0]) == after[1]
        return ChangeLog(head, tuple(c for c in self.rows if c.seq > after[0]), continues)


def test_a_commit_moves_the_version_of_what_read_its_rows_only() -> None:
    store = FakeStore()
    versions = StoreVersions(lambda: store.stamp, store.log)
    points_a = Reads(frozenset({"measurements", "series"}), series_ids=frozenset({1}))
    points_b = Reads(frozenset({"measurements", "series"}), series_ids=frozenset({2}))
    catalog = Reads(frozenset({"measurements", "series"}))
    phases = Reads(frozenset({"phases"}))
    first = {r: versions.version(r) for r in (points_a, points_b, catalog, phases)}
    assert versions.refreshes == 1 and len(set(first.values())) == 1
    assert versions.version(points_a) == first[points_a] and versions.refreshes == 1  # stat still

    store.commit(("measurements", {1}), ("sources", {1}))
    assert versions.version(points_a) != first[points_a]
    assert versions.version(catalog) != first[catalog]
    assert versions.version(points_b) == first[points_b]
    assert versions.version(phases) == first[phases]
    assert versions.refreshes == 2  # one log read for every query after the stat moved

    store.commit(("phases", None))
    assert versions.version(phases) != first[phases]
    assert versions.version(points_b) == first[points_b]
    store.commit((EVERYTHING, None))  # a write that did not say what it wrote
    assert versions.version(points_b) != first[points_b]


def test_a_store_that_moved_without_a_commit_or_was_replaced_is_all_read_again() -> None:
    stores = [FakeStore()]  # the store under the name the dashboard reads
    versions = StoreVersions(lambda: stores[0].stamp, lambda after: stores[0].log(after))
    reads = Reads(frozenset({"phases"}))
    before = versions.version(reads)
    stores[0].stamp += 1  # the file changed, and no commit says what: everything, to be safe
    moved = versions.version(reads)
    assert moved != before
    replaced = FakeStore()  # another store under the same name: its commit 1 is another's
    replaced.at[1] = datetime(2021, 6, 1)
    replaced.stamp = 99
    stores[0] = replaced
    assert versions.version(reads) not in (before, moved)
    stamp = [0]
    no_log = StoreVersions(lambda: stamp[0], lambda after: None)  # a store before 0011
    once = no_log.version(reads)
    stamp[0] += 1
    assert no_log.version(reads) != once


def test_changes_past_those_kept_count_as_a_change_of_everything() -> None:
    store = FakeStore()
    versions = StoreVersions(lambda: store.stamp, store.log, keep=2)
    other = Reads(frozenset({"phases"}))
    start = versions.version(other)
    store.commit(("measurements", {1}))
    assert versions.version(other) == start
    store.commit(("measurements", {1}), ("series", {1}))  # 3 changes kept: 1 forgotten
    assert versions.version(other) != start


def result(project: str, batch_size: int, day: int, value: float) -> dict[str, object]:
    """A result record (docs/results-format.md) of one ERNIE-like series."""
    return {
        "schema": "perfboard.result/1",
        "project": project,
        "benchmark": project,
        "task": "inference",
        "metric": "latency",
        "unit": "ms",
        "direction": "lower",
        "framework": "paddle",
        "device": "Tesla P4",
        "params": {"batch_size": batch_size},
        "testbed": {},
        "version": f"{day:040x}",
        "time": f"2020-01-{day:02d}T00:00:00Z",
        "value": value,
        "status": "ok",
        "samples": 10,
        "warmup": 1,
        "stats": {},
        "run": 0,
    }


def test_an_ingest_re_reads_the_cached_queries_of_what_it_changed_and_no_other(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through ui.query on a real store, ingests by the command line: a page never shows
    data older than the store where what it reads changed, and keeps the rest cached."""
    from perfboard import ui

    reads: list[str] = []
    real_read = ui._read

    def counted(fn, path, args):  # type: ignore[no-untyped-def]
        if fn is not db.change_log:
            reads.append(fn.__name__)
        return real_read(fn, path, args)

    monkeypatch.setattr(ui, "_read", counted)
    ui.RESULTS.clear()
    write_records([result("ernie", 1, 1, 10.0), result("bert", 1, 1, 20.0)], tmp_path / "a.jsonl")
    assert ingest("results", str(tmp_path / "a.jsonl")) == 0
    ids = dict(
        db.connect(db_path, read_only=True)
        .execute("SELECT project, series_id FROM series")
        .fetchall()
    )

    def page() -> dict[str, object]:
        return {
            "ernie": ui.query(queries.series_points, (ids["ernie"],), 2000).value.tolist(),
            "bert": ui.query(queries.series_points, (ids["bert"],), 2000).value.tolist(),
            "bert latest": ui.query(queries.latest_per_series, "bert", 10).latest.tolist(),
            "catalog": ui.query(queries.series_catalog).points.tolist(),
            "phases": len(ui.query(queries.phases)),
            "alerts": len(ui.query(queries.alerts)),
        }

    assert page() == {
        "ernie": [10.0],
        "bert": [20.0],
        "bert latest": [20.0],
        "catalog": [1, 1],
        "phases": 0,
        "alerts": 0,
    }
    assert len(reads) == 6
    reads.clear()
    page()
    assert reads == []  # nothing changed: every query served from the cache

    write_records([result("ernie", 1, 2, 11.0)], tmp_path / "b.jsonl")  # ERNIE's series only
    assert ingest("results", str(tmp_path / "b.jsonl")) == 0
    shown = page()
    assert shown["ernie"] == [10.0, 11.0] and shown["catalog"] == [1, 2]  # the new point
    # Re-read: what reads ERNIE's rows (its points, the catalog of every series), the
    # alerts (the ingest's detection replaced ERNIE's change points) and what reads the
    # sources table (phases name their document). BERT's points and latest stayed warm.
    assert sorted(reads) == ["alerts", "phases", "series_catalog", "series_points"]
    assert shown["bert"] == [20.0] and shown["bert latest"] == [20.0]

    reads.clear()
    conn = db.connect(db_path)
    alerts.set_triage(conn, "abc", "acknowledged", "", "ana")  # the dashboard's one write
    conn.close()
    page()
    assert reads == ["alerts"]

    reads.clear()
    conn = db.connect(db_path)
    with db.transaction(conn):  # a write that does not say what it wrote: everything
        conn.execute("UPDATE series SET unit = 'ms' WHERE series_id = ?", [ids["bert"]])
    conn.close()
    page()
    assert len(reads) == 6


def test_the_per_series_summary_is_read_whole_once_then_only_for_the_series_that_changed(
    db_path: Path, tmp_path: Path
) -> None:
    """The store-wide queries start from queries.summary; in the dashboard it is kept in
    step with the change log (result_cache.SeriesSummaries), and what the queries return
    through it is what they return aggregating every measurement themselves."""
    from perfboard import ops, ui

    def store_wide() -> dict[str, pd.DataFrame]:
        return {
            "latest": ui.query(queries.latest_per_series, None, 500),
            "catalog": ui.query(queries.series_catalog),
            "headline": ui.query(queries.headline_series, 3),
            "projects": ui.query(queries.projects),
            "ops": ui.query(queries.op_results, ops.METRICS),
        }

    def aggregated() -> dict[str, pd.DataFrame]:  # no summary provided: the aggregate itself
        conn = db.connect(db_path, read_only=True)
        try:
            return {
                "latest": queries.latest_per_series(conn, None, 500),
                "catalog": queries.series_catalog(conn),
                "headline": queries.headline_series(conn, 3),
                "projects": queries.projects(conn),
                "ops": queries.op_results(conn, ops.METRICS),
            }
        finally:
            conn.close()

    def same(shown: dict[str, pd.DataFrame]) -> None:
        for name, expected in aggregated().items():
            pd.testing.assert_frame_equal(shown[name], expected, obj=name)

    ui.RESULTS.clear()
    records = [result("ernie", b, 1, 10.0 + b) for b in (1, 2, 4)] + [result("bert", 1, 1, 20.0)]
    write_records(records, tmp_path / "a.jsonl")
    assert ingest("results", str(tmp_path / "a.jsonl")) == 0
    shown = store_wide()
    same(shown)
    assert shown["latest"].latest.tolist() == [20.0, 11.0, 12.0, 14.0]
    kept = ui._summaries(db_path)
    assert kept.reads[-1:] == [None]  # read whole, once, for all five queries
    first = len(kept.reads)

    write_records([result("ernie", 2, 2, 9.5)], tmp_path / "b.jsonl")  # one series moves
    assert ingest("results", str(tmp_path / "b.jsonl")) == 0
    shown = store_wide()
    same(shown)
    assert shown["latest"].latest.tolist() == [20.0, 11.0, 9.5, 14.0]
    assert shown["projects"].measurements.tolist() == [1, 4]
    assert kept.reads[first:] == [1]  # that series' rows only

    conn = db.connect(db_path)
    with db.transaction(conn):  # a write that does not say what it wrote: read whole again
        conn.execute("DELETE FROM measurements WHERE value = 20.0")
    conn.close()
    shown = store_wide()
    same(shown)
    assert shown["projects"].project.tolist() == ["ernie"]
    assert kept.reads[-1] is None


def test_a_fresh_server_reads_the_summary_before_its_first_page(
    db_path: Path, tmp_path: Path
) -> None:
    """scripts/serve.py runs ui.warm_up as the server starts: the per-series summary is
    read whole, and the first page's store-wide query finds it."""
    from perfboard import ui

    ui.warm_up(tmp_path / "no store yet.duckdb")  # nothing to read: no error
    write_records([result("ernie", b, 1, 10.0 + b) for b in (1, 2)], tmp_path / "a.jsonl")
    assert ingest("results", str(tmp_path / "a.jsonl")) == 0
    ui.RESULTS.clear()
    ui.warm_up(db_path)
    kept = ui._summaries(db_path)
    assert kept.reads == [None]
    latest = ui.query(queries.latest_per_series, None, 500)
    assert sorted(latest.latest) == [11.0, 12.0] and kept.reads == [None]  # nothing read again
    # What every page starts from is cached too, under the key the page asks with.
    warmed = {key[0] for key in ui.RESULTS._entries}
    for fn, args in ui._shared_reads():
        assert ui._key(fn, db_path, args)[0] in warmed
    assert {
        "perfboard.ops.matched_results",
        "perfboard.queries.store.series_catalog",
        "perfboard.compare.variant_pairs",
    } <= warmed


@pytest.mark.parametrize(
    ("page", "params", "warmed"),
    [
        ("pages/ops.py", {}, "perfboard.ops.losses"),
        ("pages/compare.py", {"part": "Paired variants"}, "perfboard.compare.variant_ratios"),
        (
            "pages/compare.py",
            {"part": "Paired variants", "dim": "framework"},
            "perfboard.compare.variant_ratios",
        ),
    ],
)
def test_a_page_opened_as_is_finds_what_the_server_warmed(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, page: str, params: dict, warmed: str
) -> None:
    """The page asks with the very key warm_up read (the same pairs, in the same order):
    it reads nothing of `warmed` itself."""
    from perfboard import ui
    from tests.test_app import run_page

    ui.RESULTS.clear()
    assert ui.warm_up(demo_db)
    before = {key for key in ui.RESULTS._entries if key[0] == warmed}
    assert before
    run_page(monkeypatch, demo_db, page, **params)
    assert {key for key in ui.RESULTS._entries if key[0] == warmed} == before


def test_the_server_renders_the_report_the_page_opens_on(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    """scripts/serve.py renders the report the page opens on (report.default_week) for
    every project once, under the key the Weekly report page asks with when opened as is:
    it renders nothing."""
    from perfboard import ui
    from tests.test_app import run_page

    ui.RESULTS.clear()
    ui.warm_report(demo_db)
    rendered = {key for key in ui.RESULTS._entries if key[0] == "perfboard.report.render"}
    assert [key[2][1] for key in rendered] == [None]  # every project
    at = run_page(monkeypatch, demo_db, "pages/report.py")
    # The demo's newest week (2025-W21) holds one vLLM run measured once; its ERNIE
    # history was last measured on 2020-03-29, a Sunday of 2020-W13.
    assert at.selectbox[0].value == "2020-W13"
    assert [key[2][0] for key in rendered] == [date(2020, 3, 23)]
    assert {key for key in ui.RESULTS._entries if key[0] == "perfboard.report.render"} == rendered


def test_a_report_that_cannot_be_drawn_leaves_the_warm_up_going(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """serve.py's warm-up thread goes on to keep the pages warm after warm_report: a
    failure of the report is logged, not raised."""
    from perfboard import report, ui

    def broken(*args: object) -> None:
        raise ValueError("vl-convert could not draw the chart: no such mark")

    monkeypatch.setattr(report, "render", broken)
    ui.RESULTS.clear()
    ui.warm_report(demo_db)
    assert "the report the page opens on failed" in caplog.text
    assert "no such mark" in caplog.text


def test_the_server_warms_paired_variants_as_the_page_opens_it(demo_db: Path) -> None:
    """Compare's Paired variants opens on its first metric's pairs: warm_up reads their
    ratios for each dimension, under the key the page asks with."""
    from perfboard import compare, ui

    ui.RESULTS.clear()
    assert ui.warm_up(demo_db)
    conn = db.connect(demo_db, read_only=True)
    try:
        for dimension in compare.DIMENSIONS:
            pairs = compare.variant_pairs(conn, dimension)
            first = compare.pair_metrics(pairs)[0]
            assert first == "latency" if dimension == "precision" else first == "total_time"
            args = (compare.pair_rows(pairs[pairs.metric == first]), compare.PAIR_POINTS)
            key = ui._key(compare.variant_ratios, demo_db, args)
            version = ui._versions(demo_db).version(reads_of(key[0], args))
            cached = ui.RESULTS._find(key, version)
            assert cached is not None and not cached.value[0].empty
    finally:
        conn.close()


# A process that holds a store's write lock, as an ingest does, until it is killed.
HOLD_THE_STORE = """
import sys, time, duckdb
conn = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(600)
"""


def test_after_an_ingest_the_server_reads_again_what_it_changed_before_a_page_asks(
    db_path: Path, tmp_path: Path
) -> None:
    """scripts/serve.py calls ui.keep_warm every second: nothing is read while the store
    is as it was, nor while an ingest holds it; after the ingest the shared reads are
    current again, the summary read for the one series that moved."""
    from perfboard import ui

    write_records([result("ernie", b, 1, 10.0 + b) for b in (1, 2)], tmp_path / "a.jsonl")
    assert ingest("results", str(tmp_path / "a.jsonl")) == 0
    ui.RESULTS.clear()
    seen = db.data_version(db_path)
    assert ui.warm_up(db_path)
    kept = ui._summaries(db_path)
    assert ui.keep_warm(db_path, seen) == seen and kept.reads == [None]  # nothing moved

    write_records([result("bert", 1, 1, 20.0)], tmp_path / "b.jsonl")
    assert ingest("results", str(tmp_path / "b.jsonl")) == 0
    # An ingest still holding the store (another process's write lock): try again later.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_STORE, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        assert ui.keep_warm(db_path, seen) == seen
    finally:
        holder.kill()
        holder.wait()
    now = ui.keep_warm(db_path, seen)
    assert now == db.data_version(db_path) != seen
    assert kept.reads == [None, 1]  # the new series' rows only
    key = ui._key(queries.projects, db_path, ())
    version = ui._versions(db_path).version(reads_of(key[0], ()))
    cached = ui.RESULTS._find(key, version)  # current, with no page having asked
    assert cached is not None and sorted(cached.value.project) == ["bert", "ernie"]


def test_the_server_is_ready_for_browsers_once_warmed_up() -> None:
    """scripts/serve.py: /_stcore/health (Streamlit's readiness) says no while perfboard
    warms up, and yes once it has, or once the deadline has passed."""
    import asyncio

    from streamlit.runtime.runtime import Runtime

    from scripts import serve

    class Started:  # a runtime past its start, as Streamlit's readiness reads it
        _state = "running"

    original = Runtime.__dict__["is_ready_for_browser_connection"]
    try:
        serve.WARMED.clear()
        serve.ready_once_warm(time.monotonic())
        ask = Runtime.is_ready_for_browser_connection.fget
        assert asyncio.run(ask(Started())) == (False, "warming up")
        serve.WARMED.set()
        assert asyncio.run(ask(Started())) == (True, "ok")
        serve.WARMED.clear()
        Runtime.is_ready_for_browser_connection = original
        serve.ready_once_warm(time.monotonic() - serve.WARM_UP_SECONDS)  # past the deadline
        ask = Runtime.is_ready_for_browser_connection.fget
        assert asyncio.run(ask(Started())) == (True, "ok")
    finally:
        Runtime.is_ready_for_browser_connection = original


def test_a_summary_read_on_an_older_snapshot_than_the_log_reads_those_series_again() -> None:
    """A lake's reader sees the snapshot it opened; another session may have read the log
    past it. The summary then records the reader's own newest commit, not the log's, and
    the next call reads the series of the commits it did not see."""
    import duckdb

    from perfboard.result_cache import SeriesSummaries

    def snapshot(rows: list[tuple[int, float]], newest: int) -> Any:
        conn = duckdb.connect()
        conn.execute(
            "CREATE TABLE measurements (series_id BIGINT, status VARCHAR, measured_at TIMESTAMP,"
            " value DOUBLE, version VARCHAR, source_id BIGINT, line BIGINT, stats JSON)"
        )
        for series, value in rows:
            conn.execute(
                "INSERT INTO measurements VALUES (?, 'ok', TIMESTAMP '2020-01-01', ?, 'v', 1, 1,"
                " NULL)",
                [series, value],
            )
        conn.execute("CREATE TABLE data_changes AS SELECT ?::BIGINT AS seq", [newest])
        return conn

    log = [ChangeLog((1, datetime(2020, 1, 1)), (), True)]
    versions = StoreVersions(lambda: len(log), lambda after: log[-1])
    versions.version(EVERY_READ)
    kept = SeriesSummaries(versions)
    kept.current(snapshot([(1, 10.0), (2, 20.0)], 1))
    # Commit 2 changes series 2; the log has it, the reader's snapshot does not yet.
    log.append(
        ChangeLog(
            (2, datetime(2020, 1, 2)), (Change(2, "measurements", None, frozenset({2})),), True
        )
    )
    versions.version(EVERY_READ)
    old = kept.current(snapshot([(1, 10.0), (2, 20.0)], 1))
    assert old["latest"].to_pylist()[1]["value"] == 20.0 and kept.reads == [None, 1]
    new = kept.current(snapshot([(1, 10.0), (2, 21.0)], 2))  # series 2 read again
    assert sorted(r["value"] for r in new["latest"].to_pylist()) == [10.0, 21.0]
    assert kept.reads == [None, 1, 1]
    kept.current(snapshot([(1, 10.0), (2, 21.0)], 2))
    assert kept.reads == [None, 1, 1]  # nothing new: nothing read


EVERY_READ = Reads(None)


# -- what each query reads, as declared (result_cache.QUERY_READS) -----------------------------

ROOT = Path(__file__).resolve().parent.parent
TABLES = {
    name
    for sql in (ROOT / "perfboard" / "migrations").glob("*.sql")
    for name in re.findall(r"CREATE TABLE (\w+)", sql.read_text(encoding="utf-8"))
}


def sql_of(fn: Any, seen: set[Any]) -> str:
    """The text of every string a function uses, its own and those of the perfboard
    functions and constants it names (its SQL, and its helpers' SQL), transitively."""
    if fn in seen:
        return ""
    seen.add(fn)
    node = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    names = dict(fn.__globals__)
    for sub in ast.walk(node):  # imports inside the function (to dodge import cycles)
        if isinstance(sub, ast.ImportFrom) and sub.module:
            module = importlib.import_module(sub.module)
            names |= {a.asname or a.name: getattr(module, a.name) for a in sub.names}
    texts = []
    for sub in ast.walk(node):
        value: Any = None
        if isinstance(sub, ast.Constant):
            value = sub.value
        elif isinstance(sub, ast.Name):
            value = names.get(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            owner = names.get(sub.value.id)
            value = getattr(owner, sub.attr, None) if inspect.ismodule(owner) else None
        if isinstance(value, str):
            texts.append(value)
        elif inspect.isfunction(value) and value.__module__.startswith("perfboard."):
            texts.append(sql_of(value, seen))
    return "\n".join(texts)


def query_function(name: str) -> Any:
    module, _, function = name.rpartition(".")
    return getattr(importlib.import_module(module), function)


def test_every_declared_query_reads_no_table_it_does_not_declare() -> None:
    """A query that starts reading another table and is not declared to would be served
    from the cache after that table changed: its SQL (and its helpers') is checked."""
    missing = {}
    for name, declared in QUERY_READS.items():
        read = set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql_of(query_function(name), set())))
        reads = declared(*ARGUMENTS.get(name, ()))
        assert reads.tables is not None
        if (read & TABLES) - reads.tables:
            missing[name] = sorted((read & TABLES) - reads.tables)
    assert missing == {}, "add these tables to their result_cache.QUERY_READS entries"


# Arguments for the declarations that look at theirs.
ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "perfboard.compare.variant_ratios": (((1, 2, "pair"), (3, 4, "pair")), 500),
    "perfboard.ops.losses": ((("pair", 1, 2), ("pair", 3, 4)),),
    "perfboard.queries.changes.series_changes": ((1, 2),),
    "perfboard.queries.compare.series_range": (1, datetime(2020, 1, 1), datetime(2020, 2, 1)),
    "perfboard.queries.ops.op_history": (("pair",), (1,), (2,)),
    "perfboard.queries.series.series_points": ((1, 2), 500),
    "perfboard.queries.store.latest_per_series": ("ernie", 10),
}


def test_every_query_a_page_runs_is_declared_and_series_arguments_narrow_it() -> None:
    asked = set()
    for page in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("query", "page_data")
                and isinstance(node.args[0], ast.Attribute)
            ):
                module = {"queries": "perfboard.queries", "ops": "perfboard.ops"}.get(
                    node.args[0].value.id, f"perfboard.{node.args[0].value.id}"
                )
                fn = getattr(importlib.import_module(module), node.args[0].attr)
                asked.add(f"{fn.__module__}.{fn.__qualname__}")
    assert len(asked) > 30
    # The weekly report reads nearly everything: it is left to the default.
    undeclared = asked - set(QUERY_READS) - {"perfboard.report.render"}
    assert not undeclared, f"declare what they read in result_cache.QUERY_READS: {undeclared}"
    assert reads_of("perfboard.report.render", ()) == Reads(None)
    points = reads_of("perfboard.queries.series.series_points", ((3, 4), 500))
    assert points.series_ids == {3, 4} and "measurements" in (points.tables or ())
    assert reads_of("perfboard.queries.store.latest_per_series", (None, 10)).project is None
    ratios = reads_of("perfboard.compare.variant_ratios", (((1, 2, "pair"), (3, 4, "pair")), 9))
    assert ratios.series_ids == {1, 2, 3, 4}  # both sides of each pair
    losses = reads_of("perfboard.ops.losses", ((("pair", 1, 2), ("pair", 3, 4)),))
    assert losses.series_ids == {1, 2, 3, 4}


def changes_of_last_commit(conn: Any) -> dict[str, tuple[list[str] | None, list[int] | None]]:
    rows = conn.execute(
        "SELECT table_name, projects, series_ids FROM data_changes"
        " WHERE seq = (SELECT max(seq) FROM data_changes)"
    ).fetchall()
    return {table: (projects, series) for table, projects, series in rows}


def test_each_commit_records_what_it_wrote_in_its_own_transaction(
    db_path: Path, tmp_path: Path
) -> None:
    doc = tmp_path / "nightly.jsonl"
    write_records([result("ernie", 1, 1, 10.0)], doc)
    assert ingest("results", str(doc), "--no-detect") == 0
    with db.connect(db_path, read_only=True) as conn:
        assert changes_of_last_commit(conn) == {
            table: (["", "ernie"], [1]) for table in ("measurements", "series", "sources")
        }
    # The same document, now of another series: what it held and what it holds.
    write_records([result("bert", 8, 2, 20.0)], doc)
    assert ingest("results", str(doc), "--no-detect") == 0
    conn = db.connect(db_path)
    try:
        assert changes_of_last_commit(conn)["measurements"] == (["", "bert", "ernie"], [1, 2])
        with db.transaction(conn) as changes:  # said nothing: everything
            conn.execute("UPDATE series SET unit = 'ms'")
        assert changes.rows() == [(db.EVERYTHING, None, None)]
        assert changes_of_last_commit(conn) == {"*": (None, None)}
        with pytest.raises(RuntimeError), db.transaction(conn) as changes:
            changes.touch("phases")
            raise RuntimeError("taken back: so is its record")
        assert changes_of_last_commit(conn) == {"*": (None, None)}
        alerts.detect_store(conn, [2])
        assert changes_of_last_commit(conn) == {
            "change_points": (None, [2]),
            "series_noise": (None, [2]),
        }
    finally:
        conn.close()


def test_what_a_transaction_says_it_changed_adds_up_and_any_absorbs_a_list() -> None:
    changes = db.Changes()
    changes.touch("measurements", "sources", projects=["ernie"], series_ids=iter([3, 1]))
    changes.touch("measurements", projects=["bert", None], series_ids=[2])
    changes.touch("sources")  # any row of the sources table: of any project, any series
    changes.touch("phases", series_ids=range(db.MAX_LISTED + 1))  # too many to list: any
    assert changes.rows() == [
        ("measurements", ["bert", "ernie"], [1, 2, 3]),
        ("phases", None, None),
        ("sources", None, None),
    ]
    assert db.Changes().rows() == [(db.EVERYTHING, None, None)]
    # A change names its series: a query of others is not affected, one of none of them
    # (or of every series) is.
    change = Change(9, "measurements", frozenset({"ernie"}), frozenset({1, 2}))
    assert not Reads(frozenset({"measurements"}), series_ids=frozenset({3})).affected_by(change)
    assert Reads(frozenset({"measurements"}), series_ids=frozenset({2, 3})).affected_by(change)
    assert Reads(frozenset({"measurements"})).affected_by(change)
    assert not Reads(frozenset({"measurements"}), project="bert").affected_by(change)
    assert not Reads(frozenset({"phases"})).affected_by(change)
    assert Reads(frozenset({"phases"})).affected_by(Change(9, db.EVERYTHING))
    assert Reads(None).affected_by(change)


SOURCE_DOCUMENTS = sorted(
    [
        *Path("data/samples").glob("*.md"),
        *Path("data/samples").glob("*.txt"),
        *Path("tests/fixtures").glob("*.md"),
        *Path("tests/fixtures/paddle-tables").glob("*.md"),
    ]
)


def test_a_stored_document_records_what_queries_of_its_rows_find(
    db_path: Path, tmp_path: Path
) -> None:
    # save._save_found says what a document now holds from what it wrote (Changes.
    # add_written), without add_source's queries: the record must be theirs, for
    # documents of every table (phases, profile events, passes, claims, problems, text).
    assert len(SOURCE_DOCUMENTS) > 30
    replaced = tmp_path / "replaced.md"
    replaced.write_text(SOURCE_DOCUMENTS[0].read_text(encoding="utf-8"), encoding="utf-8")
    ingest("auto", str(replaced), "--no-detect")
    replaced.write_text(
        Path("tests/fixtures/ernie-before-fc-fusion.md").read_text("utf-8"), "utf-8"
    )
    checked = set()
    for path in [*SOURCE_DOCUMENTS, replaced]:
        uri = os.path.normpath(path)  # as ingest.cli names a file
        conn = db.connect(db_path)
        try:
            expected = db.Changes()
            expected.add_source(conn, uri)  # what it held
            (before,) = conn.execute("SELECT coalesce(max(seq), 0) FROM data_changes").fetchone()
        finally:
            conn.close()
        ingest("auto", str(path), "--no-detect")
        conn = db.connect(db_path, read_only=True)
        try:
            (after,) = conn.execute("SELECT max(seq) FROM data_changes").fetchone()
            if after == before:
                continue  # a duplicate: nothing written
            expected.add_source(conn, uri)  # what it holds, asked of the store
            recorded = changes_of_last_commit(conn)
        finally:
            conn.close()
        assert recorded == {table: (p, s) for table, p, s in expected.rows()}, path.name
        checked.update(recorded)
    # Every table a document's rows may be in was checked at least once.
    assert checked >= {
        "sources",
        "measurements",
        "series",
        "ingest_errors",
        "phases",
        "milestones",
        "profile_events",
        "passes",
        "runs",
        "claims",
        "source_texts",
    }
