"""Faults of the commands besides the document ingest (perfboard issue 7; docs/faults.md is
the table): a dashboard triage while an ingest holds the store, and `python -m ingest
github-prs` (against the loopback fake GitHub), `python -m ingest git` (a generated
repository of thousands of commits) and `python -m perfboard detect`, each killed with
SIGKILL at random points and starved of disk.

Every command runs in a child process against a real store; after each fault the store is
opened as the next command would open it and checked (tests/fault_tools.py), then the
command is run again to its end and must give what a clean run gave: the tables it writes
(without the times they were written) and the documents it stores.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from perfboard import alerts, queries, ui
from scripts.bench_git import make_repo
from tests import fault_tools as ft
from tests.conftest import ingest, rows, sample_path
from tests.github_fake import FakeGitHub
from tests.test_alerts import nightly
from tests.test_app import run_page


@dataclass
class Reference:
    """What a clean run of a command made: its store, the run timed, and what it holds."""

    store: Path
    clean: ft.Timed
    view: ft.StoreView
    tables: dict[str, list[tuple]]


def differences(store: Path, reference: Reference, tables: tuple[str, ...]) -> list[str]:
    """What the store holds otherwise than the reference: its documents, what detection
    derived from them, and `tables`."""
    held = ft.view(store)
    out = ft.differences(held, reference.view, ("documents", "change_points", "series_noise"))
    if "documents" in out:
        stored, expected = ft.stored(held), ft.stored(reference.view)
        missing, extra = len(expected - stored), len(stored - expected)
        out[out.index("documents")] = f"documents ({missing} missing, {extra} not expected)"
    got = ft.table_rows(store, tables)
    return out + [name for name in tables if got[name] != reference.tables[name]]


def no_traceback(run: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in run.stderr, run.stderr


# -- dashboard writes during an ingest --------------------------------------------------------

NOTE = "bisected to PR 22494: the fuse, expected on P4"


def test_a_triage_during_an_ingest_waits_or_says_busy_and_keeps_what_was_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A triage goes through perfboard.ui.write, as the Alerts page saves it, while a real
    ingest (a re-run of the nightly results, which re-detects their series, and a 32 MiB
    log) holds the store; the ingest is paused (SIGSTOP) once it holds it, so that every
    attempt falls inside it whatever the machine's load. A write with a short timeout
    raises StoreBusy and writes nothing; the Alerts page says "Not saved" and keeps the
    status, note and name typed, which are saved by the next click once the ingest is
    done; a write with a timeout longer than the ingest waits and is stored after the
    ingest's re-detection. The triage set before the ingest survives its re-detection."""
    store = tmp_path / "perfboard.duckdb"
    monkeypatch.setenv("PERFBOARD_DB", str(store))
    docs = tmp_path / "docs"
    docs.mkdir()
    results = nightly(docs / "ernie.jsonl")
    assert ingest("results", str(results), "--db", str(store)) == 0  # detects: two alerts
    conn = duckdb.connect(str(store), read_only=True)
    first, second = queries.alerts(conn).sort_values("after_at").alert_key
    conn.close()
    ui.write(alerts.set_triage, first, "acknowledged", "PR 22486: expected", "xreki")
    page = run_page(monkeypatch, store, "pages/alerts.py", alert=first)
    nightly(results, seed=8)  # the same nights measured again: replaced, re-detected
    ft.write_log(docs / "tester.log", 32 << 20)
    monkeypatch.setattr(ui.write, "__kwdefaults__", {"timeout": 1.0})  # the page's wait
    proc = ft.start_ingest("auto", str(docs), "--db", str(store), "--quiet")
    patient: list[object] = []
    try:
        assert ft.wait_locked(store, 60), "the ingest never opened the store"
        os.killpg(proc.pid, signal.SIGSTOP)
        with pytest.raises(ui.StoreBusy, match="an ingest is writing to the store"):
            ui.write(alerts.set_triage, first, "invalid", "not now", "xreki", timeout=0.5)
        page.selectbox[0].set_value("wontfix")
        page.text_area[0].input(NOTE)
        page.text_input[0].input("NHZlX")
        page.button[0].click()
        page.run()
        assert not page.exception, page.exception
        assert [e.value for e in page.error] == [
            "Not saved: an ingest is writing to the store; try again in a moment."
            " What you typed is still in the form."
        ]
        typed = (page.selectbox[0].value, page.text_area[0].value, page.text_input[0].value)
        assert typed == ("wontfix", NOTE, "NHZlX")

        def wait_long() -> None:
            patient.append(
                ui.write(alerts.set_triage, second, "fixed", "as planned", "Xreki", timeout=120)
            )

        waiter = threading.Thread(target=wait_long)
        waiter.start()
        time.sleep(1.0)
        assert waiter.is_alive()  # waiting for the ingest
        os.killpg(proc.pid, signal.SIGCONT)
        waiter.join(timeout=120)
        _, err = proc.communicate(timeout=120)
    finally:
        ft.kill_group(proc.pid)  # what is left of it, stopped or not
    assert proc.returncode == 0, err
    assert patient == [None]  # set_triage returned: stored
    triage = rows(store, "SELECT alert_key, status, note, set_by, set_at FROM alert_triage")
    assert sorted(t[:4] for t in triage) == sorted(
        [
            (first, "acknowledged", "PR 22486: expected", "xreki"),
            (second, "fixed", "as planned", "Xreki"),
        ]
    )
    log = rows(store, "SELECT alert_key, status, set_by FROM alert_triage_log ORDER BY set_at")
    assert log == [(first, "acknowledged", "xreki"), (second, "fixed", "Xreki")]
    # The ingest re-detected the nightly series after the first triage; the waiting one
    # was stored after that.
    [(detected,)] = rows(store, "SELECT max(detected_at) FROM series_noise")
    set_at = {key: at for key, *_, at in triage}
    assert set_at[first] < detected < set_at[second]
    conn = duckdb.connect(str(store), read_only=True)
    found = queries.alerts(conn).set_index("alert_key")
    conn.close()
    assert (found.loc[first, "status"], found.loc[first, "note"]) == (
        "acknowledged",
        "PR 22486: expected",
    )
    # The ingest is done: the same click saves what was typed.
    page.button[0].click()
    page.run()
    assert not page.exception and not page.error, [e.value for e in page.error]
    now = rows(store, "SELECT status, note, set_by FROM alert_triage WHERE alert_key = ?", [first])
    assert now == [("wontfix", NOTE, "NHZlX")]
    assert len(rows(store, "SELECT * FROM alert_triage_log")) == 3
    assert ft.integrity_problems(store) == []


# -- python -m ingest github-prs ------------------------------------------------------------

REPO = "PaddlePaddle/Paddle"
TOKEN = "ghp_" + "k" * 36
PULLS = 60
PER_PAGE = 20  # the fake's largest page (GitHub's is 100): three pages
PULL_PAGES = 3
GITHUB_TABLES = ("pull_requests", "http_cache")


def github_args(api: str, store: Path) -> tuple[str, ...]:
    return ("github-prs", "--repo", REPO, "--all", "--api-url", api, "--db", str(store))


@dataclass
class GitHubCase:
    fake: FakeGitHub
    env: dict[str, str]
    reference: Reference

    def args(self, store: Path) -> tuple[str, ...]:
        return github_args(self.fake.base_url, store)


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitHubCase]:
    """The fake GitHub with 60 PRs in pages of 20, every third with the description of
    PaddlePaddle/Paddle#22494 (two claimed effects, its numbers changed a little in each,
    so that none is another's duplicate), and the store a clean sync made."""
    description = sample_path("paddle-pr-22494_2020-02-07_nhzlx_description.md").read_text(
        encoding="utf-8"
    )
    folder = tmp_path_factory.mktemp("github")
    with FakeGitHub(token=TOKEN, per_page_max=PER_PAGE) as fake:
        for number in range(1, PULLS + 1):
            body = description.replace("9.5ms", f"{9 + number / 1000:.3f}ms")
            fake.add_pull(
                REPO,
                number,
                title=f"Optimize op {number}",
                user=f"dev{number % 7}",
                body=body if number % 3 == 0 else None,
            )
        env = ft.child_env(GITHUB_TOKEN=TOKEN, NO_PROXY="127.0.0.1,localhost")
        store = folder / "reference.duckdb"
        clean = ft.timed_command("ingest", *github_args(fake.base_url, store), env=env)
        assert clean.run.returncode == 0, clean.run.stderr
        assert f"{REPO}: {PULLS} pull requests stored; {PULL_PAGES} requests" in clean.run.stderr
        reference = Reference(store, clean, ft.view(store), ft.table_rows(store, GITHUB_TABLES))
        assert len(ft.stored(reference.view)) == PULLS // 3
        yield GitHubCase(fake, env, reference)


def github_rerun(case: GitHubCase, store: Path) -> list[str]:
    run = ft.run_command("ingest", *case.args(store), env=case.env)
    if run.returncode != 0:
        return [f"re-run exit {run.returncode}: {run.stderr[-500:]}"]
    return differences(store, case.reference, GITHUB_TABLES)


def github_all_or_none(store: Path, reference: Reference) -> list[str]:
    """The PRs and the ETags are stored together or not at all (one transaction), each
    description document whole or not at all."""
    problems = ft.integrity_problems(store)
    got = ft.table_rows(store, GITHUB_TABLES)
    for name in GITHUB_TABLES:
        if got[name] not in ([], reference.tables[name]):
            problems.append(f"{name}: {len(got[name])} rows, neither none nor the reference's")
    return problems + ft.all_or_none(ft.view(store), reference.view)


def test_github_prs_killed_at_every_page_boundary_and_at_random_points(
    github: GitHubCase, tmp_path: Path
) -> None:
    """The sync killed with SIGKILL while it waits for each page of the PR list (pages
    slowed down by the fake: after 0, 1 and 2 pages read), then at random points (fixed
    seed: half of them inside one of its transactions). After each: the store opens and
    passes the integrity check, the PRs and their ETags are all stored or none, each
    description is whole or absent, and a sync run to its end gives what a clean one
    gave: the PRs, the ETags and every description's document."""
    pulls = f"/repos/{REPO}/pulls"
    lines = []
    failures = []
    for page in range(1, PULL_PAGES + 1):
        store = tmp_path / f"page-{page}" / "perfboard.duckdb"
        store.parent.mkdir()
        before = github.fake.count(pulls)
        github.fake.fail_next(200, delay=0.3, times=PULL_PAGES, path_contains=pulls)
        proc = ft.start_command("ingest", *github.args(store), env=github.env)
        try:
            deadline = time.monotonic() + 60
            while github.fake.count(pulls) < before + page and time.monotonic() < deadline:
                time.sleep(0.01)
            assert proc.poll() is None, proc.communicate()[1]
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate()
        finally:
            ft.kill_group(proc.pid)
            github.fake.clear_failures()
        found = github_all_or_none(store, github.reference)
        if ft.table_rows(store, GITHUB_TABLES) != {name: [] for name in GITHUB_TABLES}:
            found.append("stored PRs before reading every page")
        found += github_rerun(github, store)
        lines.append(f"killed waiting for page {page}: {'; '.join(found) or 'ok'}")
        failures += found
    kills = ft.plan_kills(
        github.reference.clean.seconds, github.reference.clean.transactions, 4, random.Random(22494)
    )
    for kill in kills:
        store = tmp_path / f"kill-{kill.index}" / "perfboard.duckdb"
        store.parent.mkdir()
        ft.run_and_kill(kill, "ingest", *github.args(store), env=github.env)
        kill.failures += github_all_or_none(store, github.reference)
        kill.failures += github_rerun(github, store)
        lines.append(kill.describe())
        failures += kill.failures
    table = "\n".join(lines)
    print(f"clean sync {github.reference.clean.seconds:.2f} s\n{table}")
    assert failures == [], table
    assert sum(kill.landed for kill in kills) >= 2, table
    assert sum(kill.inside for kill in kills) >= 1, table


# -- python -m ingest git -------------------------------------------------------------------

COMMITS = 3000
GIT_TABLES = ("commits", "releases", "git_walks")


def git_args(repo: Path, store: Path, rev: str = "HEAD") -> tuple[str, ...]:
    return ("git", "--repo", str(repo), "--name", "bench/paddle", "--rev", rev, "--db", str(store))


@dataclass
class GitCase:
    repo: Path
    reference: Reference
    partial: Path  # a store that walked the history up to the tag `base` only
    incremental: ft.Timed  # a clean walk of the rest, on a copy of it

    def args(self, store: Path) -> tuple[str, ...]:
        return git_args(self.repo, store)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> GitCase:
    """A repository of 3,000 commits in PaddlePaddle's habits (scripts/bench_git.py: squash
    merges, merged branches, cherry-picks onto a release branch, release tags), and the
    store a clean walk of it made; a store that walked it up to 200 commits before its
    head, and a clean walk of the rest on a copy of that."""
    folder = tmp_path_factory.mktemp("git")
    repo = make_repo(folder, COMMITS)
    # After the last release tag: the first walk reads no commit past its head.
    subprocess.run(["git", "tag", "base", "develop~200"], cwd=repo, check=True)
    store = folder / "reference.duckdb"
    clean = ft.timed_command("ingest", *git_args(repo, store))
    assert clean.run.returncode == 0, clean.run.stderr
    walked = int(clean.run.stderr.split("bench/paddle: ")[1].split()[0])
    # All but the cherry-picks made on the release branch after its last tag.
    assert walked > COMMITS * 0.99
    reference = Reference(store, clean, ft.view(store), ft.table_rows(store, GIT_TABLES))
    partial = folder / "partial.duckdb"
    run = ft.run_command("ingest", *git_args(repo, partial, rev="base"))
    assert run.returncode == 0, run.stderr
    rest = folder / "rest" / "perfboard.duckdb"
    ft.copy_store(partial, rest)
    incremental = ft.timed_command("ingest", *git_args(repo, rest))
    assert incremental.run.returncode == 0, incremental.run.stderr
    # Walked in two steps or in one: the same rows.
    assert ft.table_rows(rest, GIT_TABLES) == reference.tables
    return GitCase(repo, reference, partial, incremental)


def git_check(case: GitCase, store: Path, start: dict[str, list[tuple]]) -> list[str]:
    """After a killed walk: the store is sound and holds the walk whole or not at all
    (what it held before, `start`, or the reference); a walk run to its end then gives
    the reference."""
    problems = ft.integrity_problems(store)
    got = ft.table_rows(store, GIT_TABLES)
    if got not in (start, case.reference.tables):
        counts = {name: len(found) for name, found in got.items()}
        problems.append(f"neither the walk before nor the reference: {counts}")
    run = ft.run_command("ingest", *case.args(store))
    if run.returncode != 0:
        return [*problems, f"re-run exit {run.returncode}: {run.stderr[-500:]}"]
    return problems + differences(store, case.reference, GIT_TABLES)


def test_git_walk_killed_at_random_points(clone: GitCase, tmp_path: Path) -> None:
    """`python -m ingest git` on the 3,000-commit repository killed with SIGKILL (fixed
    seed): four walks of a new store, half of the kills inside its transaction, and three
    walks that continue a store holding the history up to 200 commits before the head
    (the incremental walk: it adds commits, replaces the releases and updates every
    stored commit's first release). After each: the store opens and passes the integrity
    check, holds the commits, releases and walk record from before or the whole walk,
    nothing between, and a walk run to its end gives what a clean walk gave."""
    empty = {name: [] for name in GIT_TABLES}
    partial = ft.table_rows(clone.partial, GIT_TABLES)
    rng = random.Random(22486)
    kills = ft.plan_kills(clone.reference.clean.seconds, clone.reference.clean.transactions, 4, rng)
    resumed = ft.plan_kills(clone.incremental.seconds, clone.incremental.transactions, 3, rng)
    lines = []
    for kill, start in [(k, empty) for k in kills] + [(k, partial) for k in resumed]:
        store = tmp_path / f"kill-{len(lines)}" / "perfboard.duckdb"
        store.parent.mkdir()
        if start is partial:
            ft.copy_store(clone.partial, store)
        ft.run_and_kill(kill, "ingest", *clone.args(store))
        kill.failures += git_check(clone, store, start)
        lines.append(f"{'continued ' if start is partial else ''}{kill.describe()}")
    table = "\n".join(lines)
    print(f"clean walk {clone.reference.clean.seconds:.2f} s\n{table}")
    assert not any(kill.failures for kill in kills + resumed), table
    assert sum(kill.landed for kill in kills + resumed) >= 4, table
    assert sum(kill.inside for kill in kills + resumed) >= 2, table


# -- python -m perfboard detect -------------------------------------------------------------


@dataclass
class DetectCase:
    seed: Path  # detection of the ernie series only; the bert series not detected yet
    before: dict[str, list[tuple]]
    reference: Reference


@pytest.fixture(scope="module")
def detection(tmp_path_factory: pytest.TempPathFactory) -> DetectCase:
    """A store whose ernie series (2,000 records over 20 series) were detected by their
    ingest, holding a triage, and whose bert series (as many) were ingested with
    --no-detect; and the store `python -m perfboard detect` made of a copy of it."""
    folder = tmp_path_factory.mktemp("detect")
    ft.write_results(folder / "ernie.jsonl", 2_000, series=20)
    ft.write_results(folder / "bert.jsonl", 2_000, series=21)
    bert = (folder / "bert.jsonl").read_text(encoding="utf-8")
    (folder / "bert.jsonl").write_text(
        bert.replace('"project": "ernie"', '"project": "bert"'), encoding="utf-8"
    )
    seed = folder / "seed.duckdb"
    assert ft.run_ingest("results", str(folder / "ernie.jsonl"), "--db", str(seed)).returncode == 0
    run = ft.run_ingest("results", str(folder / "bert.jsonl"), "--db", str(seed), "--no-detect")
    assert run.returncode == 0, run.stderr
    conn = duckdb.connect(str(seed))
    key = conn.execute("SELECT min(alert_key) FROM change_points").fetchone()[0]
    alerts.set_triage(conn, key, "acknowledged", "seen", "xreki")
    conn.close()
    before = ft.view(seed).derived
    reference = folder / "reference.duckdb"
    ft.copy_store(seed, reference)
    clean = ft.timed_command("perfboard", "detect", "--db", str(reference))
    assert clean.run.returncode == 0, clean.run.stderr
    assert "41 series examined" in clean.run.stderr
    view = ft.view(reference)
    assert view.derived != before  # the bert series are detected now
    tables = ft.table_rows(reference, ("alert_triage",))
    return DetectCase(seed, before, Reference(reference, clean, view, tables))


def detect_rerun(case: DetectCase, store: Path) -> list[str]:
    run = ft.run_command("perfboard", "detect", "--db", str(store))
    if run.returncode != 0:
        return [f"re-run exit {run.returncode}: {run.stderr[-500:]}"]
    return differences(store, case.reference, ("alert_triage",))


def test_detect_killed_at_random_points(detection: DetectCase, tmp_path: Path) -> None:
    """`python -m perfboard detect` killed with SIGKILL (fixed seed; half inside the
    transaction that replaces the change points and noise figures). After each: the
    store opens and passes the integrity check, holds the detection from before (ernie
    only) or the new one (ernie and bert), nothing between, the triage is untouched, and
    a detect run to its end gives what a clean one gave."""
    kills = ft.plan_kills(
        detection.reference.clean.seconds,
        detection.reference.clean.transactions,
        6,
        random.Random(22424),
    )
    for kill in kills:
        store = tmp_path / f"kill-{kill.index}" / "perfboard.duckdb"
        ft.copy_store(detection.seed, store)
        ft.run_and_kill(kill, "perfboard", "detect", "--db", str(store))
        kill.failures += ft.integrity_problems(store)
        held = ft.view(store)
        if held.derived not in (detection.before, detection.reference.view.derived):
            kill.failures.append("change points neither the old nor the new")
        if ft.table_rows(store, ("alert_triage",)) != detection.reference.tables:
            kill.failures.append("the triage changed")
        kill.failures += detect_rerun(detection, store)
    table = "\n".join(kill.describe() for kill in kills)
    print(f"clean detect {detection.reference.clean.seconds:.2f} s\n{table}")
    assert not any(kill.failures for kill in kills), table
    assert sum(kill.landed for kill in kills) >= 3, table
    assert sum(kill.inside for kill in kills) >= 1, table


# -- the same commands with a full disk ------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "where"),
    [(20_000, "a description's commit"), (60_000, "the PRs' commit")],
)
def test_github_prs_on_a_full_disk_fails_cleanly_and_a_rerun_completes(
    github: GitHubCase, tmp_path: Path, limit: int, where: str
) -> None:
    """No file of the sync may grow past `limit` bytes (RLIMIT_FSIZE, EFBIG as on a full
    disk): the write at `where` fails. The sync exits 2 with a message that names the
    command and the error (File too large), no traceback; the store is sound, the PRs
    and ETags all stored or none, each description whole or absent; a sync without the
    limit then gives what a clean one gave."""
    store = tmp_path / "perfboard.duckdb"
    run = ft.run_command(
        "ingest", *github.args(store), env=github.env, preexec_fn=ft.fsize_limit(limit)
    )
    no_traceback(run)
    assert run.returncode == 2, run.stderr
    message = run.stderr.strip().splitlines()[-1]
    assert message.startswith("ingest: github-prs: the store failed: "), message
    assert "File too large" in message and "stays stored" in message
    assert github_all_or_none(store, github.reference) == []
    assert ft.table_rows(store, GITHUB_TABLES) == {name: [] for name in GITHUB_TABLES}
    assert github_rerun(github, store) == []


@pytest.mark.parametrize(
    ("limit", "status"),
    [(20_000, 2), (1_000_000, 0)],
    ids=["the walk's commit", "the checkpoint at close"],
)
def test_git_walk_on_a_full_disk_fails_cleanly_and_a_rerun_completes(
    clone: GitCase, tmp_path: Path, limit: int, status: int
) -> None:
    """The walk with no file allowed past `limit` bytes. At 20 KB its commit fails: exit 2,
    a message naming the error, nothing stored. At 1 MB the commit (its WAL, 0.9 MB) is
    written and the checkpoint when the store closes is not: DuckDB keeps the WAL, the walk
    is stored (exit 0) and the next open replays it. Either way no traceback, the store
    is sound, and a walk without the limit then gives what a clean walk gave."""
    store = tmp_path / "perfboard.duckdb"
    run = ft.run_command("ingest", *clone.args(store), preexec_fn=ft.fsize_limit(limit))
    no_traceback(run)
    assert run.returncode == status, run.stderr
    empty = {name: [] for name in GIT_TABLES}
    if status:
        message = run.stderr.strip().splitlines()[-1]
        assert message.startswith("ingest: git: the store failed: "), message
        assert "File too large" in message and "stays stored" in message
    else:
        assert store.with_name(store.name + ".wal").stat().st_size > 0
    # Read-only: as the walk left it, before the check checkpoints the WAL.
    assert ft.table_rows(store, GIT_TABLES) == (empty if status else clone.reference.tables)
    assert git_check(clone, store, empty) == []


@pytest.mark.parametrize(
    ("limit", "status"),
    [(4_000, 2), (60_000, 0)],
    ids=["the detection's commit", "the checkpoint at close"],
)
def test_detect_on_a_full_disk_fails_cleanly_and_a_rerun_completes(
    detection: DetectCase, tmp_path: Path, limit: int, status: int
) -> None:
    """`python -m perfboard detect` with no file allowed to grow past `limit` bytes. At
    4 KB its WAL cannot take the commit (9 KB): exit 2, a message naming the error, the
    detection from before kept whole. At 60 KB the commit goes to the WAL and the
    checkpoint at close cannot write the store's blocks: DuckDB keeps the WAL, the
    detection is stored (exit 0) and the next open replays it. No traceback; the store
    is sound; a detect without the limit gives the clean result."""
    store = tmp_path / "perfboard.duckdb"
    ft.copy_store(detection.seed, store)
    run = ft.run_command(
        "perfboard", "detect", "--db", str(store), preexec_fn=ft.fsize_limit(limit)
    )
    no_traceback(run)
    assert run.returncode == status, run.stderr
    if status:
        message = run.stderr.strip().splitlines()[-1]
        assert message.startswith("perfboard: change detection could not be stored: "), message
        assert "File too large" in message and "stays stored" in message
    else:
        assert store.with_name(store.name + ".wal").stat().st_size > 0
    expected = detection.reference.view.derived if status == 0 else detection.before
    assert ft.view(store).derived == expected  # read-only: before the WAL is checkpointed
    assert ft.integrity_problems(store) == []
    assert detect_rerun(detection, store) == []
