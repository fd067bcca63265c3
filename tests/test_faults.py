"""Crash safety and faults of the ingest (perfboard issue 7). docs/faults.md is the table of
every fault, what happens, and the test here (or elsewhere) that shows it.

Ingests run in child processes: they are killed with SIGKILL at random points, starved of
disk (RLIMIT_FSIZE: a write past the limit fails with EFBIG, as on a full disk; or a
small tmpfs in a mount namespace of their own where the test may make one), or run beside
another ingest, dashboard readers and the weekly report. After each, the store is opened
the way the next ingest opens it and checked (tests/fault_tools.py): DuckDB's own view of
the file, a scan of every table, perfboard's invariants, and what it holds of each
document against a reference store that a clean ingest of the same documents made.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest

from ingest.results import write_records
from perfboard import db
from tests import fault_tools as ft
from tests.conftest import ingest, sample_path
from tests.conftest import rows as store_rows

# Documents of the concurrency tests that the kill corpus does not hold.
EXTRA = "paddle-pr-22486_2020-02-07_nhzlx_description.md"
OTHER = "benchmark-380_2020-05-06_xreki_op-timing-table.md"


@dataclass
class Corpus:
    """A folder of documents, and the store a clean ingest of it made."""

    folder: Path
    reference: Path
    view: ft.StoreView
    seconds: float  # that clean ingest, start to exit
    transactions: list[tuple[float, float]]  # when each of its transactions was open


def build_corpus(
    root: Path, results_rows: int, log_bytes: int = 0, results_files: int = 1
) -> Corpus:
    folder = root / "docs"
    folder.mkdir(parents=True)
    for name in ft.KILL_SAMPLES:
        shutil.copy(ft.SAMPLES / name, folder / name)
    if log_bytes:
        ft.write_log(folder / "k-big.log", log_bytes)
    for index in range(results_files):
        ft.write_results(folder / f"m-nightly-{index}.jsonl", results_rows, series=50 + index)
    reference = root / "reference.duckdb"
    run = ft.run_ingest("auto", str(folder), "--db", str(reference), "--quiet")
    assert run.returncode == 0, run.stderr
    view = ft.view(reference)
    assert len(ft.stored(view)) == len(list(folder.iterdir()))
    # Timed on a second clean ingest: the first paid for cold caches the later runs skip.
    timed = ft.timed_ingest("auto", str(folder), "--db", str(root / "timed.duckdb"), "--quiet")
    assert timed.run.returncode == 0, timed.run.stderr
    return Corpus(folder, reference, view, timed.seconds, timed.transactions)


@pytest.fixture(scope="module")
def kill_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """Eight real documents of every kind, a 68 MiB tester log (16 chunks or more: parsed
    by worker processes) and a results file of 100,000 records over 50 series (its
    transaction is open about 0.1 s), so that an ingest lasts long enough (about 2.5 s)
    to be killed in any of its phases: forking workers, opening the store, parsing, inside
    a document's transaction, between documents, in change detection."""
    return build_corpus(tmp_path_factory.mktemp("kill"), 100_000, log_bytes=68 << 20)


@pytest.fixture(scope="module")
def disk_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """The eight documents and a results file of 20,000 records: small, so that each
    disk limit below stops the ingest at another point."""
    return build_corpus(tmp_path_factory.mktemp("disk"), 20_000)


def check_store(store: Path, reference: ft.StoreView) -> tuple[ft.StoreView, list[str]]:
    """The store's integrity problems and its all-or-none problems, and what it holds."""
    problems = ft.integrity_problems(store)
    held = ft.view(store)
    return held, problems + ft.all_or_none(held, reference)


def rerun_matches(folder: Path, store: Path, reference: ft.StoreView) -> list[str]:
    """Ingest the folder again, to its end, without a fault: the store must then hold what
    the reference holds, detection included. Returns what differs."""
    run = ft.run_ingest("auto", str(folder), "--db", str(store), "--quiet")
    if run.returncode != 0:
        return [f"re-run exit {run.returncode}: {run.stderr[-500:]}"]
    return ft.differences(ft.view(store), reference, EVERYTHING)


EVERYTHING = ("documents", "series", "change_points", "series_noise")


# -- crash safety: SIGKILL at random points -----------------------------------------------


KILLS = 12  # each about 4 s with its checks and re-run: the test takes 40-60 s on 2 cores


def test_sigkill_at_random_points_leaves_each_document_all_or_none(
    kill_corpus: Corpus, tmp_path: Path
) -> None:
    """KILLS ingests of the corpus, each killed with SIGKILL (fixed seed): half after a
    delay spread over the whole length of a clean ingest, half inside a transaction. Three
    start on the store the kill before them left (its WAL is replayed by the new ingest,
    which is killed in turn). After each: no worker process outlives the ingest, the store
    opens and passes the integrity check, each document is absent or exactly as in the
    reference, and an ingest run to its end then gives exactly the reference, change
    detection included."""
    documents = len(ft.stored(kill_corpus.view))
    kills = ft.plan_kills(
        kill_corpus.seconds, kill_corpus.transactions, KILLS, random.Random(20200204)
    )
    left_by_last: Path | None = None
    for kill in kills:
        store = tmp_path / f"run-{kill.index}" / "perfboard.duckdb"
        store.parent.mkdir()
        if left_by_last is not None and kill.index % 4 == 2:  # kills not aimed at a transaction
            ft.copy_store(left_by_last, store)
            kill.resumed = True
        # The ingest alone, as the OOM killer does; its workers must go with it.
        args = ("auto", str(kill_corpus.folder), "--db", str(store), "--quiet")
        ft.run_and_kill(kill, "ingest", *args)
        # As the kill left it, before the check opens it (which replays its WAL).
        left_by_last = tmp_path / f"left-{kill.index}" / "perfboard.duckdb"
        ft.copy_store(store, left_by_last)
        held, problems = check_store(store, kill_corpus.view)
        held_documents = len(ft.stored(held))
        kill.held = f"{held_documents}/{documents} documents held"
        kill.failures += problems
        kill.failures += rerun_matches(kill_corpus.folder, store, kill_corpus.view)
    table = "\n".join(kill.describe() for kill in kills)
    spans = ", ".join(f"{a:.2f}-{b:.2f}" for a, b in kill_corpus.transactions)
    print(f"clean ingest {kill_corpus.seconds:.2f} s, transactions at {spans} s\n{table}")
    assert not any(kill.failures for kill in kills), table
    # The kills hit running ingests: mid-way (some documents stored, not all), and inside
    # transactions.
    assert sum(kill.landed for kill in kills) >= KILLS // 2, table
    assert any(not kill.held.startswith(("0/", f"{documents}/")) for kill in kills), table
    assert sum(kill.inside for kill in kills) >= 2, table


def test_a_killed_ingest_leaves_no_worker_process_behind(
    kill_corpus: Corpus, tmp_path: Path
) -> None:
    """The workers that parse a large log wait on their task queue; with the ingest killed
    they used to wait for ever (each holding its memory). They now die with it."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: the ingest parses in its own process, with no worker")
    store = tmp_path / "perfboard.duckdb"
    proc = ft.start_ingest("auto", str(kill_corpus.folder / "k-big.log"), "--db", str(store))
    try:
        deadline = time.monotonic() + 60
        while len(ft.group_members(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        workers = len(ft.group_members(proc.pid)) - 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        survivors = ft.wait_gone(proc.pid, 5.0)
    finally:
        ft.kill_group(proc.pid)
        assert proc.stderr is not None
        proc.stderr.close()
    assert workers >= 1, "the ingest forked no worker: the log is too small for the pool"
    assert survivors == []
    assert ft.integrity_problems(store) == []


# -- crash safety: a full disk -------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "where"),
    [
        (12_000, "the new store's first block"),
        # (20,000, not 13,000, since migrations 0009-0013: the new store's tables and
        # the sources' hash index need 18-19 KB before the first document)
        (20_000, "the first document, and the record of most failures"),
        (60_000, "the later documents, and change detection"),
        (300_000, "the results file"),
    ],
)
def test_a_full_disk_fails_cleanly_and_a_rerun_completes(
    disk_corpus: Corpus, tmp_path: Path, limit: int, where: str
) -> None:
    """No file of the ingest may grow past `limit` bytes (RLIMIT_FSIZE): the write that
    would fails as on a full disk, at `where`. The ingest ends with a non-zero status and
    a message naming what failed and why (File too large), never a traceback; the store
    opens, passes the integrity check and holds each document whole or not at all; with
    the limit gone, a re-run completes and gives the reference."""
    store = tmp_path / "perfboard.duckdb"
    run = ft.run_ingest(
        "auto", str(disk_corpus.folder), "--db", str(store), preexec_fn=ft.fsize_limit(limit)
    )
    assert "Traceback" not in run.stderr, run.stderr
    assert "File too large" in run.stderr, run.stderr
    assert "no transaction is active" not in run.stderr  # the cause, not a rollback's error
    if limit == 12_000:
        assert run.returncode == 2
        assert f"ingest: cannot open {store}: " in run.stderr
        assert "Another ingest" not in run.stderr  # a full disk is not a lock
        # No store cut short is left behind (it made every later open fail).
        assert list(tmp_path.iterdir()) == []
        assert rerun_matches(disk_corpus.folder, store, disk_corpus.view) == []
        return
    assert run.returncode == 1
    names = {path.name for path in disk_corpus.folder.iterdir()}
    failed_lines = [line for line in run.stderr.splitlines() if ": failed: " in line]
    assert failed_lines, run.stderr
    for line in failed_lines:
        assert Path(line.split(": failed: ")[0]).name in names  # it names the document
        assert "File too large" in line
    if limit == 18_000:  # the store could not even take the record of why
        assert "(not recorded in the store: " in run.stderr
    if limit == 60_000:
        assert "ingest: change detection could not be stored: " in run.stderr
    held, problems = check_store(store, disk_corpus.view)
    assert problems == []
    assert len(ft.stored(held)) < len(ft.stored(disk_corpus.view))
    assert rerun_matches(disk_corpus.folder, store, disk_corpus.view) == []


def _with_pending_wal(store: Path, ballast_rows: int, wal_rows: int) -> None:
    """Give a store a large table on disk and a WAL just over DuckDB's 16 MiB checkpoint
    threshold (written by a process that raised the threshold and then died without a
    checkpoint): the next commit of any ingest checkpoints, and writes the whole WAL into
    the file."""
    script = (
        "import duckdb, os, sys\n"
        "conn = duckdb.connect(sys.argv[1])\n"
        "conn.execute('CREATE TABLE ballast AS SELECT range AS i, md5(range::VARCHAR) AS s"
        " FROM range(' + sys.argv[2] + ')')\n"
        "conn.execute('CHECKPOINT')\n"
        "conn.execute(\"SET checkpoint_threshold = '1GB'\")\n"
        "conn.execute('CREATE TABLE filler (i BIGINT, s VARCHAR)')\n"
        "for _ in range(4):\n"
        "    conn.execute('INSERT INTO filler SELECT range, md5(range::VARCHAR)"
        " FROM range(' + sys.argv[3] + ')')\n"
        "os._exit(0)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(store), str(ballast_rows), str(wal_rows)], check=True
    )


def test_a_checkpoint_that_runs_out_of_disk_ends_the_ingest_cleanly(
    disk_corpus: Corpus, tmp_path: Path
) -> None:
    """The hard case: the disk fills while DuckDB checkpoints (writes its WAL into the
    file). DuckDB then invalidates the database: every later statement of the process
    fails. The ingest stops at that document, with exit status 2 and a message that names
    it and says why; the store opens (the WAL is still whole and is replayed), passes the
    check, holds each document whole or not at all, and a re-run completes."""
    seed = tmp_path / "seed" / "perfboard.duckdb"
    seed.parent.mkdir()
    db.connect(seed).close()
    _with_pending_wal(seed, 1_600_000, 100_000)
    wal = seed.with_name(seed.name + ".wal").stat().st_size
    assert wal > 16 << 20  # over the threshold: the next commit checkpoints
    assert seed.stat().st_size > wal  # the file is the larger: the limit is set by it
    reference_store = tmp_path / "reference" / "perfboard.duckdb"
    ft.copy_store(seed, reference_store)
    assert (
        ft.run_ingest("auto", str(disk_corpus.folder), "--db", str(reference_store)).returncode == 0
    )
    reference = ft.view(reference_store)
    store = tmp_path / "full" / "perfboard.duckdb"
    ft.copy_store(seed, store)
    # Room for the WAL and a document's commit, not for the checkpoint's new blocks (the
    # WAL's 400,000 rows, about 5 MB).
    limit = seed.stat().st_size + (1 << 20)
    run = ft.run_ingest(
        "auto", str(disk_corpus.folder), "--db", str(store), preexec_fn=ft.fsize_limit(limit)
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    message = run.stderr.strip().splitlines()[-1]
    assert message.startswith(f"ingest: {disk_corpus.folder}/")
    assert ": not stored: FATAL Error: Failed to create checkpoint" in message
    assert "File too large" in message and "documents stored before stay stored" in message
    _, problems = check_store(store, reference)
    assert problems == []
    assert rerun_matches(disk_corpus.folder, store, reference) == []


def _tmpfs_ingest(folder: Path, size: str, out: Path) -> tuple[int, str] | None:
    """Ingest `folder` into a store on a tmpfs of `size` mounted in a mount namespace of the
    child's own (gone when it ends), and copy the store out to `out`. None when this
    machine does not let the test make one (not root, or no CAP_SYS_ADMIN)."""
    mount = out / "mnt"
    mount.mkdir(parents=True)
    script = (
        f'mount -t tmpfs -o size={size} tmpfs "{mount}" || exit 99\n'
        f'"$PYTHON" -m ingest auto "{folder}" --db "{mount}/perfboard.duckdb" 2> "{out}/stderr"\n'
        "status=$?\n"
        f'cp "{mount}"/perfboard.duckdb* "{out}/"\n'
        "exit $status\n"
    )
    if shutil.which("unshare") is None:
        return None
    run = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
        cwd=ft.ROOT,
        env=ft.child_env(PYTHON=sys.executable),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if run.returncode == 99 or not (out / "stderr").exists():
        return None
    return run.returncode, (out / "stderr").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def big_results_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """The eight documents and three results files of 100,000 records: a WAL that passes
    the checkpoint threshold during the ingest."""
    return build_corpus(tmp_path_factory.mktemp("tmpfs"), 100_000, results_files=3)


@pytest.mark.parametrize(("size", "failing"), [("4m", "a commit"), ("12m", "a checkpoint")])
def test_a_full_tmpfs_fails_cleanly_and_a_rerun_completes(
    big_results_corpus: Corpus, tmp_path: Path, size: str, failing: str
) -> None:
    """A real full disk (ENOSPC, one budget for the store and its WAL): a small tmpfs,
    mounted in a mount namespace of the ingest's own. Where the test may not mount one it
    is skipped; test_a_full_disk_fails_cleanly_and_a_rerun_completes and the checkpoint
    test above make the same failures with RLIMIT_FSIZE, which needs no privilege."""
    done = _tmpfs_ingest(big_results_corpus.folder, size, tmp_path)
    if done is None:
        pytest.skip("cannot mount a tmpfs in a mount namespace here (needs CAP_SYS_ADMIN)")
    status, stderr = done
    assert status in (1, 2), stderr
    assert "Traceback" not in stderr, stderr
    assert "No space left on device" in stderr
    if failing == "a checkpoint":
        assert "Failed to create checkpoint" in stderr and status == 2
    else:
        assert "Failed to commit" in stderr and status == 1
    store = tmp_path / "perfboard.duckdb"
    held, problems = check_store(store, big_results_corpus.view)
    assert problems == []
    assert len(ft.stored(held)) < len(ft.stored(big_results_corpus.view))
    assert rerun_matches(big_results_corpus.folder, store, big_results_corpus.view) == []


def test_a_rerun_detects_the_series_an_interrupted_ingest_stored(tmp_path: Path) -> None:
    """An ingest stopped between storing its documents and storing their change detection
    (killed, Ctrl-C, a full disk) used to leave those series undetected for good: a re-run
    found the documents unchanged and detected nothing. It now detects the series whose
    detection is older than their documents, and only those."""
    folder = tmp_path / "docs"
    folder.mkdir()
    ft.write_results(folder / "nightly.jsonl", 2_000, series=4)
    clean, stopped = tmp_path / "clean.duckdb", tmp_path / "stopped.duckdb"
    assert ingest("auto", str(folder), "--db", str(clean)) == 0
    assert ingest("auto", str(folder), "--db", str(stopped), "--no-detect") == 0  # as if
    assert ft.view(stopped).derived["change_points"] == []
    assert ingest("auto", str(folder), "--db", str(stopped)) == 0  # unchanged: detects
    assert ft.differences(ft.view(stopped), ft.view(clean), EVERYTHING) == []
    assert ft.view(clean).derived["change_points"]
    conn = duckdb.connect(str(stopped))
    before = conn.execute("SELECT max(detected_at) FROM series_noise").fetchone()
    conn.close()
    assert ingest("auto", str(folder), "--db", str(stopped)) == 0  # nothing left to detect
    conn = duckdb.connect(str(stopped), read_only=True)
    assert conn.execute("SELECT max(detected_at) FROM series_noise").fetchone() == before


# -- concurrency -----------------------------------------------------------------------------


def test_two_ingests_at_once_the_second_waits_or_says_another_is_running(
    kill_corpus: Corpus, tmp_path: Path
) -> None:
    """While one ingest holds the store: a second with a short --lock-timeout exits 2 and
    says another ingest may be running (storing nothing); a third with a long one waits,
    then stores its document. The first's documents are all stored, as the reference."""
    store = tmp_path / "perfboard.duckdb"
    db.connect(store).close()
    first = ft.start_ingest("auto", str(kill_corpus.folder), "--db", str(store), "--quiet")
    try:
        assert ft.wait_locked(store, 60), "the first ingest never opened the store"
        impatient = ft.start_ingest(
            "auto", str(sample_path(EXTRA)), "--db", str(store), "--lock-timeout", "0.5"
        )
        patient = ft.start_ingest(
            "auto", str(sample_path(OTHER)), "--db", str(store), "--lock-timeout", "120"
        )
        _, impatient_err = impatient.communicate(timeout=60)
        _, patient_err = patient.communicate(timeout=180)
        _, first_err = first.communicate(timeout=180)
    finally:
        ft.kill_group(first.pid)
    assert first.returncode == 0, first_err
    assert impatient.returncode == 2, impatient_err
    assert "Another ingest may be running; wait for it or raise --lock-timeout" in impatient_err
    assert "Traceback" not in impatient_err
    assert patient.returncode == 0, patient_err
    held, problems = check_store(store, kill_corpus.view)
    assert set(ft.stored(held)) == ft.stored(kill_corpus.view) | {str(sample_path(OTHER))}
    # The third's document is the only difference: its source, and the series it brought.
    [source, series] = problems
    assert source == f"{sample_path(OTHER)}: not a document of the reference"
    assert series.endswith("series the reference does not hold")


@dataclass
class Reader:
    """A loop of one reader of the store, run in a thread until stopped."""

    read: Callable[[], Any]
    seen: list[Any] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self, pause: float) -> None:
        while not self.stop.is_set():
            try:
                self.seen.append(self.read())
            except Exception as error:  # every error is kept and judged by the test
                self.errors.append(error)
            time.sleep(pause)


def test_readers_during_an_ingest_see_the_old_or_the_new_data_never_an_error(
    kill_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's query path while an ingest runs: (a) what ui.query does by hand, a
    read-only open per query and a perfboard.queries function, each error recorded; (b)
    perfboard.ui.query itself (Streamlit in bare mode), which must serve the last good
    result while the ingest holds the store. Readers see the data from before the ingest
    or after it, nothing in between; after it, the new data."""
    from perfboard import ui
    from perfboard.queries import store as queries

    store = tmp_path / "perfboard.duckdb"
    monkeypatch.setenv("PERFBOARD_DB", str(store))
    assert ingest("auto", str(sample_path(EXTRA)), "--db", str(store)) == 0

    def by_hand() -> dict[str, int]:
        conn = db.connect(store, read_only=True)
        try:
            return queries.counts(conn)
        finally:
            conn.close()

    before = by_hand()
    assert ui.query(queries.counts) == before  # the last good result, from now on
    raw, page = Reader(by_hand), Reader(lambda: ui.query(queries.counts))
    threads = [
        threading.Thread(target=raw.run, args=(0.02,)),
        threading.Thread(target=page.run, args=(0.05,)),
    ]
    for thread in threads:
        thread.start()
    try:
        run = ft.run_ingest("auto", str(kill_corpus.folder), "--db", str(store), "--quiet")
        time.sleep(0.5)  # a few reads after the ingest
    finally:
        raw.stop.set()
        page.stop.set()
        for thread in threads:
            thread.join()
    assert run.returncode == 0, run.stderr
    after = by_hand()
    assert after["measurements"] == before["measurements"] + sum(
        tables.get("measurements", (0, 0))[0] for tables in kill_corpus.view.documents.values()
    )
    # (a): the only error is the lock an ingest holds, and it happened.
    assert raw.errors, "no read was refused: the ingest never held the store while read"
    for error in raw.errors:
        assert isinstance(error, duckdb.IOException) and "lock" in str(error).lower(), error
    assert all(value in (before, after) for value in raw.seen)
    assert raw.seen[-1] == after
    # (b): never an error; the last good result while locked; fresh data after.
    assert page.errors == []
    assert all(value in (before, after) for value in page.seen)
    assert page.seen[-1] == after


def test_the_weekly_report_during_an_ingest_is_whole_or_refused(
    kill_corpus: Corpus, tmp_path: Path
) -> None:
    """`python -m perfboard.report` (build + to_markdown, PNGs included) run again and again
    while an ingest holds the store: each run either writes the report of the data from
    before or after the ingest, whole, or exits 2 with the lock error and writes nothing."""
    from perfboard import report

    store = tmp_path / "perfboard.duckdb"
    assert ingest("auto", str(sample_path(EXTRA)), "--db", str(store)) == 0
    week = "2019-W52"  # the results file's December

    def attempt(out: Path) -> tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = report.main(
                [
                    *("--week", week, "--format", "md", "--out", str(out), "--db", str(store)),
                    *("--lock-timeout", "0"),  # refuse at once: waiting is tested elsewhere
                ]
            )
        return status, err.getvalue()

    assert attempt(tmp_path / "before")[0] == 0
    proc = ft.start_ingest("auto", str(kill_corpus.folder), "--db", str(store), "--quiet")
    outcomes: list[tuple[Path, int, str]] = []
    try:
        assert ft.wait_locked(store, 60)
        while proc.poll() is None:
            out = tmp_path / f"during-{len(outcomes)}"
            outcomes.append((out, *attempt(out)))
        _, ingest_err = proc.communicate()
    finally:
        ft.kill_group(proc.pid)
    assert proc.returncode == 0, ingest_err
    assert attempt(tmp_path / "after")[0] == 0
    texts = {
        name: (tmp_path / name / f"perfboard-{week}.md").read_text(encoding="utf-8")
        for name in ("before", "after")
    }
    assert texts["before"] != texts["after"]
    refused = 0
    for out, status, err in outcomes:
        if status == 0:
            assert (out / f"perfboard-{week}.md").read_text(encoding="utf-8") in texts.values()
        else:
            refused += 1
            assert status == 2 and "perfboard: " in err and "lock" in err.lower(), err
            assert not out.exists() or not any(out.iterdir())  # nothing half written
    assert refused >= 1  # it did run while the ingest held the store


# -- ingest faults ---------------------------------------------------------------------------

RECORD = {
    **ft.RESULT,
    "params": {"batch_size": 1},
    "version": "v1",
    "time": "2019-12-24T00:00:00Z",
    "value": 8.0,
}


def test_values_no_measurement_can_have_are_problems_in_a_results_file(
    tmp_path: Path, db_path: Path
) -> None:
    """NaN, infinities, a negative time or rate and a time beyond a day are ingest errors
    with their line, as they are in a log (test_impossible_values_are_problems_not_crashes);
    a negative difference or ratio is a value like any other."""
    path = tmp_path / "odd.jsonl"
    lines = [
        json.dumps({**RECORD, "value": float("nan")}),  # bare NaN, as Python writes it
        json.dumps({**RECORD, "value": "NaN"}),
        json.dumps({**RECORD, "value": float("inf")}),
        json.dumps({**RECORD, "value": "-Infinity"}),
        json.dumps(RECORD).replace('"value": 8.0', '"value": 1e400'),  # overflows
        json.dumps({**RECORD, "value": -3.2}),
        json.dumps({**RECORD, "metric": "throughput", "unit": "samples/s", "value": -1}),
        json.dumps({**RECORD, "value": 1e15}),
        json.dumps({**RECORD, "value": 0}),
        json.dumps({**RECORD, "metric": "speedup", "unit": "x", "value": -0.5}),
        json.dumps({**RECORD, "metric": "delta", "unit": "", "value": -2.5}),
        json.dumps({**RECORD, "value": 7.5}),
    ]
    # One version each: the records are not the same measurement twice.
    lines = [line.replace('"version": "v1"', f'"version": "v{n}"') for n, line in enumerate(lines)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert ingest("results", str(path)) == 0  # partial, not failed
    errors = store_rows(db_path, "SELECT line, reason FROM ingest_errors ORDER BY line")
    assert errors == [
        (1, "value is not finite: NaN"),
        (2, "value is not finite: NaN"),
        (3, "value is not finite: Infinity"),
        (4, "value is not finite: -Infinity"),
        (5, "value is not finite: 1e400"),
        (6, "value is negative: -3.2 ms"),
        (7, "value is negative: -1 samples/s"),
        (8, "value is absurd: 1000000000000000.0 ms (more than a day)"),
    ]
    values = store_rows(db_path, "SELECT line, value FROM measurements ORDER BY line")
    assert values == [(9, 0.0), (10, -0.5), (11, -2.5), (12, 7.5)]


def test_the_same_key_with_another_value_is_reported_not_overwritten(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two result files that give one series, version, time and run different values:
    both are kept (neither file is wrong on its own) and the second is reported as a
    conflict naming the first, line by line; the same value twice is reported as a
    duplicate; so are two records of one file."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_records([RECORD, {**RECORD, "version": "v2", "value": 7.0}], first)
    write_records(
        [
            {**RECORD, "value": 9.0},  # conflicts with a.jsonl:1
            {**RECORD, "version": "v2", "value": 7.0},  # the same as a.jsonl:2
            {**RECORD, "version": "v3", "value": 6.0},
            {**RECORD, "version": "v3", "value": 6.5},  # line 3 again, another value
            {**RECORD, "version": "v3", "run": 1, "value": 6.2},  # another run: no conflict
        ],
        second,
    )
    assert ingest("results", str(first)) == 0
    assert main_quiet("results", str(second)) == 0  # warnings, not failures
    warnings = store_rows(
        db_path,
        "SELECT line, severity, reason FROM ingest_errors WHERE source_uri = ? ORDER BY line",
        [str(second)],
    )
    assert warnings == [
        (
            1,
            "warning",
            f"conflicts with {first}:1: the same series, version, time and run"
            " with 8.0 there and 9.0 here (both kept)",
        ),
        (2, "warning", f"the same measurement as {first}:2 (stored twice)"),
        (
            3,
            "warning",
            f"conflicts with {second}:4: the same series, version, time and run"
            " with 6.5 there and 6.0 here (both kept)",
        ),
        (
            4,
            "warning",
            f"conflicts with {second}:3: the same series, version, time and run"
            " with 6.0 there and 6.5 here (both kept)",
        ),
    ]
    assert store_rows(db_path, "SELECT count(*) FROM measurements") == [(7,)]  # all kept
    status = store_rows(
        db_path, "SELECT status, n_problems FROM sources WHERE uri = ?", [str(second)]
    )
    assert status == [("partial", 4)]
    assert ft.integrity_problems(db_path) == []
    assert f"{second}:1: conflicts with {first}:1" in capsys.readouterr().err


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/New_York"])
def test_a_time_without_a_zone_is_utc_whatever_the_host_zone(tmp_path: Path, zone: str) -> None:
    """docs/results-format.md: a time without an offset is UTC. It used to be read in the
    ingest host's zone (DuckDB's session zone): in Shanghai "2019-12-24" became
    2019-12-23 16:00. A log's dates (--date, glog times) carry no zone and are stored as
    written."""
    results = tmp_path / "zones.jsonl"
    write_records(
        [
            {**RECORD, "version": "naive", "time": "2019-12-24T08:00:00"},
            {**RECORD, "version": "date", "time": "2019-12-24"},
            {**RECORD, "version": "space", "time": "2019-12-24 08:00"},
            {**RECORD, "version": "utc", "time": "2019-12-24T08:00:00Z"},
            {**RECORD, "version": "offset", "time": "2019-12-24T08:00:00+08:00"},
        ],
        results,
    )
    log = tmp_path / "tester.log"
    log.write_text(
        "I1224 08:00:00.000000 70931 tester_helper.h:300] Run 10 samples,"
        " average latency: 6.9 ms per sample.\n",
        encoding="utf-8",
    )
    store = tmp_path / "perfboard.duckdb"
    env = ft.child_env(TZ=zone)
    run = ft.run_ingest(
        "auto",
        str(results),
        str(log),
        "--db",
        str(store),
        "--date",
        "2019-12-24",
        "--benchmark",
        "ernie",
        env=env,
    )
    assert run.returncode == 0, run.stderr
    rows = store_rows(
        store,
        "SELECT coalesce(m.version, src.uri), m.measured_at::VARCHAR FROM measurements m"
        " JOIN sources src USING (source_id)",
    )
    assert dict(rows) == {
        "naive": "2019-12-24 08:00:00",
        "date": "2019-12-24 00:00:00",
        "space": "2019-12-24 08:00:00",
        "utc": "2019-12-24 08:00:00",
        "offset": "2019-12-24 00:00:00",
        str(log): "2019-12-24 08:00:00",
    }


def test_a_time_in_the_future_is_kept_with_a_warning(tmp_path: Path, db_path: Path) -> None:
    """A record dated after tomorrow (a wrong clock or year) is stored and flagged, each
    with its line; a document whose date is in the future gets one warning that says how
    many of its measurements it dates and from which line."""
    results = tmp_path / "ahead.jsonl"
    write_records(
        [
            {**RECORD, "time": "2099-01-01T00:00:00Z"},
            {**RECORD, "version": "v2", "time": date.today().isoformat()},  # today: fine
        ],
        results,
    )
    log = tmp_path / "ahead.log"
    log.write_text("Run 100 samples, average latency: 7.25 ms per sample.\n" * 2, encoding="utf-8")
    assert (
        ingest("auto", str(results), str(log), "--date", "2099-01-01", "--benchmark", "ernie") == 0
    )
    warnings = store_rows(db_path, "SELECT source_uri, line, severity, reason FROM ingest_errors")
    assert sorted(warnings) == sorted(
        [
            (
                str(log),
                1,
                "warning",
                "2 measurements dated in the future (up to 2099-01-01): kept;"
                " is the document's date or year wrong?",
            ),
            (
                str(results),
                1,
                "warning",
                "time is in the future: 2099-01-01T00:00:00Z: kept;"
                " is the clock or the year wrong?",
            ),
        ]
    )
    assert store_rows(db_path, "SELECT count(*) FROM measurements") == [(4,)]
    assert store_rows(db_path, "SELECT DISTINCT status FROM sources") == [("partial",)]


def test_result_files_in_other_encodings_fail_alone_and_say_so(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """perfboard's result format is UTF-8: with a BOM it is read (CSV too: the BOM used to
    hide its header, and the file was read as prose holding nothing); UTF-16 (used to be
    read as prose, silently) and GBK (used to fail as an "internal error") fail alone,
    naming the line and the byte."""
    chinese = {**RECORD, "device": "显卡 P4"}
    header = "benchmark,task,metric,unit,direction,framework,device,value,status,version\n"
    row = "ernie,inference,latency,ms,lower,paddle,显卡 P4,5.0,ok,{}\n"
    files = {
        "bom.jsonl": "\ufeff".encode()
        + json.dumps({**chinese, "version": "bom"}, ensure_ascii=False).encode()
        + b"\n",
        "bom.csv": ("\ufeff" + header + row.format("bom-csv")).encode("utf-8"),
        "u16.jsonl": (json.dumps(chinese, ensure_ascii=False) + "\n").encode("utf-16"),
        "gbk.jsonl": (json.dumps(chinese, ensure_ascii=False) + "\n").encode("gbk"),
        "gbk.csv": (header + row.format("gbk-csv")).encode("gbk"),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    assert main_quiet("auto", *(str(tmp_path / name) for name in files)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    stored = store_rows(
        db_path,
        "SELECT m.version, s.device FROM measurements m JOIN series s USING (series_id) ORDER BY 1",
    )
    assert stored == [("bom", "显卡 P4"), ("bom-csv", "显卡 P4")]
    failures = dict(
        store_rows(db_path, "SELECT source_uri, reason FROM ingest_errors WHERE source_id IS NULL")
    )
    assert failures == {
        str(tmp_path / "u16.jsonl"): "not readable: line 1: byte 0xff is not UTF-8"
        " (perfboard's result format is UTF-8)",
        str(tmp_path / "gbk.jsonl"): "not readable: line 1: byte 0xcf is not UTF-8"
        " (perfboard's result format is UTF-8)",
        str(tmp_path / "gbk.csv"): "not readable: line 2: byte 0xcf is not UTF-8"
        " (perfboard's result format is UTF-8)",
    }


def test_a_csv_results_file_is_read_by_its_header_names(tmp_path: Path, db_path: Path) -> None:
    """A CSV results file whose header lists the fields in another order, or only some of
    them: each column is read by its name (they were read by position: device and
    framework swapped places, silently). A column the format does not know is reported."""
    path = tmp_path / "nightly.csv"
    path.write_text(
        "device,framework,benchmark,task,metric,unit,direction,value,status,version,vendor\n"
        "Tesla P4,paddle,ernie,inference,latency,ms,lower,8.5,ok,v1,nvidia\n",
        encoding="utf-8",
    )
    assert ingest("auto", str(path), "--project", "ernie") == 0
    rows = store_rows(
        db_path,
        "SELECT s.framework, s.device, s.benchmark, m.version, m.value"
        " FROM measurements m JOIN series s USING (series_id)",
    )
    assert rows == [("paddle", "Tesla P4", "ernie", "v1", 8.5)]
    errors = store_rows(db_path, "SELECT line, reason FROM ingest_errors")
    assert errors == [(1, "unknown column 'vendor': ignored")]


def main_quiet(*args: str) -> int:
    """The ingest CLI in-process without --quiet (its per-document lines are checked)."""
    from ingest.cli import main

    return main(list(args))


def test_a_log_mixing_utf8_and_gbk_is_read_line_by_line_and_says_so(
    tmp_path: Path, db_path: Path
) -> None:
    """A log pasted together from a UTF-8 part and a GBK part: each line is read as what
    it is and the document's encoding is recorded as utf-8+gb18030 (it used to be decoded
    whole as GB18030, which took the UTF-8 lines for mojibake without an error: "测试结果"
    became "娴嬭瘯缁撴灉"). A line that is neither fails the document alone, naming it."""
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(
        "## ERNIE 测试结果\nRun 5010 samples, average latency: 6.92849 ms per sample.\n".encode()
        + "## 第二部分\nRun 5010 samples, average latency: 7.1 ms per sample.\n".encode("gbk")
    )
    broken = tmp_path / "broken.log"
    broken.write_bytes(mixed.read_bytes() + b"Run 5010 \xff\xfe\xfa\x80 samples\n")
    assert ingest("auto", str(mixed), str(broken), "--benchmark", "ernie") == 1
    assert store_rows(db_path, "SELECT uri, encoding, n_measurements FROM sources") == [
        (str(mixed), "utf-8+gb18030", 2)
    ]
    labels = store_rows(db_path, "SELECT label FROM runs ORDER BY run")
    assert labels == [("ERNIE 测试结果",), ("第二部分",)]
    failures = store_rows(
        db_path, "SELECT source_uri, reason FROM ingest_errors WHERE source_id IS NULL"
    )
    assert failures == [
        (str(broken), "not readable: line 5: byte 0xff is not valid utf-8 or gb18030")
    ]


def test_empty_and_binary_result_files_fail_alone(tmp_path: Path, db_path: Path) -> None:
    """The cases of test_unreadable_documents_fail_alone_with_a_clear_message, named as
    result files (which take another reader): each fails alone with its reason."""
    files = {
        "empty.jsonl": b"",
        "blank.jsonl": b"  \n\n",
        "binary.jsonl": bytes(range(256)) * 8,
        "binary.csv": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    good = tmp_path / "good.jsonl"
    write_records([RECORD], good)
    assert ingest("auto", str(tmp_path)) == 1
    failures = dict(
        store_rows(db_path, "SELECT source_uri, reason FROM ingest_errors WHERE source_id IS NULL")
    )
    assert failures == {
        str(tmp_path / "empty.jsonl"): "not readable: empty file",
        str(tmp_path / "blank.jsonl"): "not readable: only white space",
        str(
            tmp_path / "binary.jsonl"
        ): "not readable: binary data (NUL bytes), not a text document",
        str(tmp_path / "binary.csv"): "not readable: binary data (NUL bytes), not a text document",
    }
    assert store_rows(db_path, "SELECT uri, n_measurements FROM sources") == [(str(good), 1)]


def test_a_document_read_after_it_failed_keeps_no_stale_failure(
    tmp_path: Path, db_path: Path
) -> None:
    """A document that failed (here: not text yet) and is read later: its failure is not
    true any more and goes (it used to stay in the store's errors for good)."""
    path = tmp_path / "nightly.jsonl"
    path.write_bytes(b"\x00" * 64)
    assert ingest("auto", str(path)) == 1
    write_records([RECORD], path)
    assert ingest("auto", str(path)) == 0
    assert store_rows(db_path, "SELECT count(*) FROM ingest_errors") == [(0,)]
    assert ft.integrity_problems(db_path) == []


def test_a_2gb_log_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """A 2 GiB tester log is read in 4 MiB chunks by worker processes: the ingest's peak
    memory (its own and its workers') is a small fraction of the file, and about what a
    128 MiB log costs. Its latency lines are all stored."""
    big, small = tmp_path / "big.log", tmp_path / "small.log"
    try:
        lines = ft.write_log(big, 2 << 30, every=2000)
        ft.write_log(small, 128 << 20, every=2000)
        peaks = {}
        for path in (small, big):
            store = tmp_path / f"{path.stem}.duckdb"
            started = time.perf_counter()
            run, peaks[path.stem] = ft.peak_rss_run(
                "auto", str(path), "--db", str(store), "--benchmark", "ernie", "--quiet"
            )
            seconds = time.perf_counter() - started
            assert run.returncode == 0, run.stderr
        print(
            f"2 GiB log: {seconds:.1f} s; peak RSS {peaks['big'] >> 20} MiB"
            f" (128 MiB log: {peaks['small'] >> 20} MiB)"
        )
        assert store_rows(tmp_path / "big.duckdb", "SELECT count(*) FROM measurements") == [
            (lines,)
        ]
    finally:
        big.unlink(missing_ok=True)  # pytest keeps the last runs' folders: not 2 GiB of them
    assert peaks["big"] < 400 << 20
    assert peaks["big"] < peaks["small"] + (64 << 20)
