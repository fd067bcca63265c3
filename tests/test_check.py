"""`python -m perfboard check`: a PR's run against its baseline, over a real store (result
files ingested as a benchmark job would), a real git history (GitPython) and real HTTP
against the loopback GitHub (tests/github_fake.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import git
import numpy as np
import pytest

from ingest.results import write_records
from perfboard import db, settings
from perfboard.check import MARKER
from perfboard.cli import main
from tests.conftest import ROOT, ingest, rows
from tests.github_fake import FakeGitHub
from tests.test_results import RECORD

# Six batch sizes of ERNIE on one machine, 3 % noise a night: a noisy set.
LEVELS = {1: 10.0, 2: 12.0, 4: 15.0, 8: 22.0, 16: 40.0, 32: 75.0}
NOISE = 0.03
NIGHTS = 40
REPO = "team/ernie"
PR = f"https://github.com/{REPO}/pull/7"


def record(batch: int, value: float | None, version: str, when: datetime, **extra: Any) -> dict:
    return {
        **RECORD,
        "params": {"batch_size": batch, "seq_len": 128},
        "version": version,
        "time": when.isoformat() + "Z",
        "value": value,
        **extra,
    }


def nightly(noise: float = NOISE, seed: int = 7) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        record(
            batch,
            round(level * (1 + noise * rng.standard_normal()), 5),
            f"nightly-{night:03d}",
            datetime(2020, 1, 1) + timedelta(days=night),
        )
        for night in range(NIGHTS)
        for batch, level in LEVELS.items()
    ]


@pytest.fixture(autouse=True)
def default_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """perfboard.toml's defaults: no PERFBOARD_CONFIG, no perfboard.toml of the tree."""
    monkeypatch.delenv("PERFBOARD_CONFIG", raising=False)
    monkeypatch.delenv("PERFBOARD_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    settings.current.cache_clear()
    yield
    settings.current.cache_clear()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with 40 noisy nights of six series, their noise detected by the ingest."""
    path = tmp_path / "store.duckdb"
    write_records(nightly(), tmp_path / "history.jsonl")
    assert ingest("results", str(tmp_path / "history.jsonl"), "--db", str(path)) == 0
    return path


def pr_run(
    folder: Path,
    factors: dict[int, float] | None = None,
    drop: tuple[int, ...] = (),
    add: dict[int, float] | None = None,
    levels: dict[int, float] = LEVELS,
) -> Path:
    """The PR's result file: every series at its level (times a factor), some left out,
    some new."""
    folder.mkdir(parents=True, exist_ok=True)
    when = datetime(2020, 2, 15)
    records = [
        record(batch, round(level * (factors or {}).get(batch, 1.0), 5), "pr-head", when)
        for batch, level in levels.items()
        if batch not in drop
    ] + [record(batch, value, "pr-head", when) for batch, value in (add or {}).items()]
    path = folder / "results.jsonl"
    write_records(records, path)
    return path


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def by_batch(report: dict) -> dict[int, dict]:
    return {s["params"]["batch_size"]: s for s in report["series"]}


# -- the verdicts ----------------------------------------------------------------------------


def test_a_10_percent_regression_in_a_noisy_set_fails_and_is_named_first(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = pr_run(tmp_path / "out", {4: 1.10})
    code, out, err = check(capsys, str(results), "--db", str(store), "--json", "--no-store")
    assert code == 1
    report = json.loads(out)
    first = report["series"][0]
    assert first["params"] == {"batch_size": 4, "seq_len": 128}
    assert first["verdict"] == "regression"
    assert first["exceeds_noise"] is True and first["exceeds_min_effect"] is True
    # The base is the level of the last 30 nights (3 % noise: within 1 % of 15 ms).
    assert first["base"] == pytest.approx(15.0, rel=0.01) and first["base_n"] == 30
    assert first["pr"] == 16.5
    assert first["change_pct"] == pytest.approx(10.0, abs=1.2)
    assert first["words"].endswith("x slower than base")
    # 3 % noise: telling takes about 2.58 * 3 % * sqrt(1 + pi / 60), near 8 %.
    assert 7.0 < first["detectable_pct"] < 9.0
    assert report["verdict"] == "failed"
    assert report["counts"]["regression"] == 1
    assert {s["verdict"] for s in report["series"][1:]} <= {"unchanged", "too noisy to tell"}
    assert report["baseline"]["kind"] == "date" and report["baseline"]["value"] == "2020-02-09"
    assert "baseline: the latest values in the store (up to 2020-02-09)" in err
    # The Markdown names it first too, in the short table.
    code, out, _ = check(capsys, str(results), "--db", str(store), "--no-store")
    assert code == 1
    assert out.startswith(
        MARKER + "\n**perfboard check failed** (--fail-on regression): 1 regression"
    )
    table = [line for line in out.splitlines() if line.startswith("| ernie")]
    assert table[0].startswith(
        "| ernie · latency · paddle · Tesla P4 · batch_size=4, seq_len=128 |"
    )
    assert "**regression** |" in table[0] and "| 16.5 ms |" in table[0]
    # --fail-on never: the same report, exit 0.
    code, out, _ = check(
        capsys, str(results), "--db", str(store), "--no-store", "--fail-on", "never", "--json"
    )
    assert code == 0 and json.loads(out)["counts"]["regression"] == 1


def test_unchanged_results_pass(store: Path, tmp_path: Path, capsys) -> None:
    results = pr_run(tmp_path / "out")
    code, out, _ = check(capsys, str(results), "--db", str(store), "--json", "--no-store")
    assert code == 0
    report = json.loads(out)
    assert report["verdict"] == "passed"
    counts = report["counts"]
    assert counts["regression"] == counts["improvement"] == counts["gone"] == counts["new"] == 0
    # Each base is the level of 30 nights at 3 % noise, so off by up to about 1.5 %: a
    # change past the 1 % minimum effect is then within the noise, and said so.
    for series in report["series"]:
        assert abs(series["change_pct"]) < 2.0
        expected = "too noisy to tell" if abs(series["change_pct"]) >= 1.0 else "unchanged"
        assert series["verdict"] == expected
        assert series["exceeds_noise"] is False
    assert counts["unchanged"] >= 4
    code, out, _ = check(capsys, str(results), "--db", str(store), "--no-store")
    assert code == 0
    assert "**perfboard check passed** (--fail-on regression): no regression. 6 series" in out
    short = out.split("<details>")[0]
    assert short.count("| too noisy to tell (within the noise") == counts["too noisy to tell"]
    assert "regression" not in short.split("\n", 2)[2]


def test_a_half_percent_change_under_a_2_percent_minimum_effect_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A quiet series (0.05 % noise) shows a 0.5 % step clearly: only the minimum effect
    keeps it from being a regression."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "quiet.duckdb"
    write_records(nightly(noise=0.0005), tmp_path / "history.jsonl")
    assert ingest("results", str(tmp_path / "history.jsonl"), "--db", str(path)) == 0
    results = pr_run(tmp_path / "out", {1: 1.005})
    config = tmp_path / "perfboard.toml"
    config.write_text("[detect]\nmin_change_pct = 2.0\n", encoding="utf-8")
    monkeypatch.setenv("PERFBOARD_CONFIG", str(config))
    settings.current.cache_clear()
    try:
        code, out, _ = check(capsys, str(results), "--db", str(path), "--json", "--no-store")
        assert code == 0
        one = by_batch(json.loads(out))[1]
        assert one["change_pct"] == pytest.approx(0.5, abs=0.1)
        assert one["exceeds_noise"] is True and one["exceeds_min_effect"] is False
        assert one["min_change_pct"] == 2.0 and one["verdict"] == "unchanged"
        # The same change under a 0.2 % minimum effect for the project: a regression.
        config.write_text("[detect]\nmin_change_pct = 2.0\n[detect.project]\nernie = 0.2\n")
        settings.current.cache_clear()
        code, out, _ = check(capsys, str(results), "--db", str(path), "--json", "--no-store")
        assert code == 1
        assert by_batch(json.loads(out))[1]["verdict"] == "regression"
    finally:
        settings.current.cache_clear()


def test_a_new_series_and_a_vanished_one_are_listed(store: Path, tmp_path: Path, capsys) -> None:
    results = pr_run(tmp_path / "out", drop=(32,), add={64: 130.0})
    code, out, _ = check(capsys, str(results), "--db", str(store), "--json", "--no-store")
    assert code == 0  # neither fails a --fail-on regression
    series = by_batch(json.loads(out))
    assert series[64]["verdict"] == "new" and series[64]["pr"] == 130.0
    assert series[64]["base"] is None and series[64]["series_id"] is None
    assert series[32]["verdict"] == "gone" and series[32]["pr"] is None
    assert series[32]["note"] == "not in the PR's results"
    assert series[32]["base"] == pytest.approx(75.0, rel=0.01)
    code, out, _ = check(capsys, str(results), "--db", str(store), "--no-store")
    assert "| gone (not in the PR's results) |" in out
    assert "| new (not measured at the baseline) |" in out
    # --fail-on any: a change either way fails; new and gone alone do not.
    assert check(capsys, str(results), "--db", str(store), "--no-store", "--fail-on", "any")[0] == 0
    faster = pr_run(tmp_path / "faster", {2: 0.85})
    code, out, _ = check(capsys, str(faster), "--db", str(store), "--json", "--no-store")
    assert code == 0 and by_batch(json.loads(out))[2]["verdict"] == "improvement"
    assert check(capsys, str(faster), "--db", str(store), "--no-store", "--fail-on", "any")[0] == 1


def test_an_out_of_memory_pr_is_a_regression(store: Path, tmp_path: Path, capsys) -> None:
    results = tmp_path / "oom.jsonl"
    write_records(
        [record(16, None, "pr", datetime(2020, 2, 15), status="oom")]
        + [record(b, LEVELS[b], "pr", datetime(2020, 2, 15)) for b in (1, 2, 4, 8, 32)],
        results,
    )
    code, out, _ = check(capsys, str(results), "--db", str(store), "--json", "--no-store")
    assert code == 1
    first = json.loads(out)["series"][0]
    assert first["params"]["batch_size"] == 16 and first["verdict"] == "regression"
    assert first["note"] == "the PR measured oom"


def test_what_cannot_run_exits_2(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    results = pr_run(tmp_path / "out")
    code, _, err = check(capsys, str(results), "--db", str(tmp_path / "nothing.duckdb"))
    assert code == 2 and "no database at" in err
    assert not (tmp_path / "nothing.duckdb").exists()  # a check never makes a store
    empty = tmp_path / "empty.duckdb"
    db.connect(empty).close()
    assert main(["check", str(results), "--db", str(empty), "--no-store"]) == 2
    assert "the store holds no measurements" in capsys.readouterr().err
    notes = tmp_path / "notes.md"
    notes.write_text("We met and talked about the plan.\n", encoding="utf-8")
    code, _, err = check(capsys, str(notes), "--db", str(empty))
    assert code == 2 and "no measurement in 1 document(s) of the PR run" in err
    binary = tmp_path / "blob.log"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    code, _, err = check(capsys, str(binary), "--db", str(empty))
    assert code == 2 and "blob.log: cannot be read" in err


def test_a_named_baseline(store: Path, tmp_path: Path, capsys) -> None:
    """--base names a version (its values), or a date (the latest values by its end)."""
    results = pr_run(tmp_path / "out")
    code, out, err = check(
        capsys, str(results), "--db", str(store), "--json", "--no-store", "--base", "nightly-010"
    )
    report = json.loads(out)
    assert report["baseline"] == {
        "kind": "version",
        "value": "nightly-010",
        "description": "version nightly-010",
    }
    code, out, _ = check(
        capsys, str(results), "--db", str(store), "--json", "--no-store", "--base", "2020-01-05"
    )
    assert json.loads(out)["baseline"]["description"] == "the latest values on or before 2020-01-05"
    code, _, err = check(capsys, str(results), "--db", str(store), "--base", "nonsense")
    assert code == 2 and "no measured version, release tag or date" in err


# -- the merge base ----------------------------------------------------------------------------


class History:
    """A repository built with GitPython: a main branch (develop) and a PR branch."""

    def __init__(self, path: Path) -> None:
        self.repo = git.Repo.init(path, initial_branch="develop")
        with self.repo.config_writer() as config:
            config.set_value("user", "name", "Xreki")
            config.set_value("user", "email", "xreki@example.com")
        self.repo.create_remote("origin", f"https://github.com/{REPO}.git")
        self.day = 0

    def commit(self, message: str, file: str = "code.txt") -> str:
        self.day += 1
        target = Path(self.repo.working_tree_dir or ".") / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{message}\n", encoding="utf-8")
        self.repo.index.add([file])
        when = f"2020-01-{self.day:02d}T12:00:00+0000"
        done = self.repo.index.commit(message, author_date=when, commit_date=when)
        return done.hexsha

    def merge(self, branch: str, message: str) -> str:
        self.day += 1
        when = f"2020-01-{self.day:02d}T12:00:00+0000"
        parents = (self.repo.head.commit, self.repo.heads[branch].commit)
        done = self.repo.index.commit(
            message, parent_commits=parents, author_date=when, commit_date=when
        )
        return done.hexsha


def test_the_merge_base_comes_from_the_walked_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """develop: c1 c2 c3 | c4 c5 (20 % slower from c4) | merge of the PR; the PR branched
    at c3. Its head is judged against c3's level, not against the latest (c5's)."""
    history = History(tmp_path / "ernie")
    main_line = [history.commit(f"develop {i}") for i in range(1, 4)]
    history.repo.create_head("pr", main_line[-1]).checkout()
    head = history.commit("Fuse fc (#7)", file="fc.txt")
    history.repo.heads.develop.checkout()
    main_line += [history.commit(f"develop {i}") for i in range(4, 6)]
    history.merge("pr", "Merge pull request #7 from dev/pr")
    store = tmp_path / "store.duckdb"
    assert ingest("git", "--repo", str(tmp_path / "ernie"), "--db", str(store)) == 0
    # Three nightly runs at each develop commit; from c4 on, 20 % slower.
    runs = [
        record(
            batch,
            level * (1.2 if i >= 3 else 1.0) * (1 + 0.001 * (run - 1)),
            sha,
            datetime(2020, 3, 1) + timedelta(days=i, hours=run),
        )
        for i, sha in enumerate(main_line)
        for run in range(3)
        for batch, level in LEVELS.items()
    ]
    write_records(runs, tmp_path / "develop.jsonl")
    assert ingest("results", str(tmp_path / "develop.jsonl"), "--db", str(store)) == 0
    results = pr_run(tmp_path / "out")  # the PR did not change a thing
    code, out, err = check(
        capsys, str(results), "--db", str(store), "--json", "--no-store", "--head-sha", head
    )
    assert code == 0
    report = json.loads(out)
    base = main_line[2]
    assert report["baseline"]["kind"] == "version" and report["baseline"]["value"] == base
    assert report["baseline"]["description"] == (
        f"merge base {base[:12]} of head {head[:12]} ({REPO})"
    )
    assert f"baseline: merge base {base[:12]}" in err
    assert report["counts"]["unchanged"] == 6
    assert by_batch(report)[4]["base"] == pytest.approx(15.0, rel=0.002)
    # Against the latest values, the same run looks 1.2x faster: the latest is not the base.
    code, out, _ = check(capsys, str(results), "--db", str(store), "--json", "--no-store")
    latest = json.loads(out)
    assert latest["counts"]["improvement"] == 6
    assert by_batch(latest)[4]["base"] == pytest.approx(18.0, rel=0.002)
    # A commit nobody measured: its nearest measured mainline ancestor, said so.
    code, out, _ = check(
        capsys, str(results), "--db", str(store), "--json", "--no-store", "--base-sha", head
    )
    assert json.loads(out)["baseline"]["description"] == (
        f"--base-sha {head[:12]}, not measured; its nearest measured mainline ancestor {base[:12]}"
    )
    # A head the walk never saw: said, and the latest values are the base.
    code, out, err = check(
        capsys, str(results), "--db", str(store), "--json", "--no-store", "--head-sha", "ab" * 20
    )
    assert json.loads(out)["baseline"]["description"].startswith(
        "head abababababab is not in the walked history (`python -m ingest git`); the latest"
    )


# -- posting --------------------------------------------------------------------------------


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub(token="t0ken") as fake:
        fake.add_pull(REPO, 7, title="Fuse fc")
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        yield fake


def methods(fake: FakeGitHub, method: str) -> list[str]:
    return [r.path for r in fake.requests if r.method == method]


def test_post_creates_one_comment_then_edits_it(
    store: Path, tmp_path: Path, github: FakeGitHub, capsys
) -> None:
    for n in range(105):  # ours will be on the second page of the PR's comments
        github.add_comment(REPO, 7, body=f"review {n}")
    first = pr_run(tmp_path / "one", {4: 1.10})
    code, _, err = check(capsys, str(first), "--db", str(store), "--post", PR)
    assert code == 1
    assert methods(github, "POST") == [f"/repos/{REPO}/issues/7/comments"]
    [ours] = [c for c in github.comments(REPO, 7) if MARKER in c["body"]]
    assert "1 regression" in ours["body"]
    assert f"posted {ours['html_url']}" in err
    second = pr_run(tmp_path / "two")
    code, _, _ = check(capsys, str(second), "--db", str(store), "--post", PR)
    assert code == 0
    assert methods(github, "POST") == [f"/repos/{REPO}/issues/7/comments"]  # still one
    assert methods(github, "PATCH") == [f"/repos/{REPO}/issues/comments/{ours['id']}"]
    mine = [c for c in github.comments(REPO, 7) if MARKER in c["body"]]
    assert len(mine) == 1 and len(github.comments(REPO, 7)) == 106
    assert mine[0]["id"] == ours["id"] and "**perfboard check passed**" in mine[0]["body"]
    # The list was read page by page, as the Link header says.
    assert [r.query.get("page") for r in github.requests if r.method == "GET"][-2:] == [None, "2"]
    assert github.errors == []


def test_a_5xx_on_the_post_is_not_retried_into_a_duplicate(
    store: Path, tmp_path: Path, github: FakeGitHub, capsys
) -> None:
    github.fail_next(502, path_contains="/issues/7/comments", method="POST")
    results = pr_run(tmp_path / "out")
    code, out, err = check(capsys, str(results), "--db", str(store), "--post", PR)
    assert code == 1  # the check passed; its post failed
    assert "**perfboard check passed**" in out
    assert "GitHub answered 502" in err
    assert len(methods(github, "POST")) == 1
    assert github.comments(REPO, 7) == []
    # The run is kept with what happened to it.
    assert rows(store, "SELECT verdict, exit_status, comment_url FROM check_runs") == [
        ("passed", 1, None)
    ]


def test_status_is_set_on_the_head_commit(
    store: Path, tmp_path: Path, github: FakeGitHub, capsys
) -> None:
    head = "c0ffee" + "0" * 34
    results = pr_run(tmp_path / "out", {4: 1.10})
    args = [str(results), "--db", str(store), "--post", PR, "--status", "--head-sha", head]
    code, _, _ = check(capsys, *args)
    assert code == 1
    [comment] = github.comments(REPO, 7)
    [status] = github.statuses(REPO, head)
    assert status["state"] == "failure"
    assert status["context"] == "perfboard/check"
    assert status["description"] == "1 regression(s) in 6 series"
    assert status["target_url"] == comment["html_url"]
    assert methods(github, "POST")[-1] == f"/repos/{REPO}/statuses/{head}"
    code, _, err = check(capsys, str(results), "--db", str(store), "--status")
    assert code == 2 and "--status needs --post and --head-sha" in err


# -- the stored run --------------------------------------------------------------------------


def test_the_run_is_kept_and_reads_back(store: Path, tmp_path: Path, capsys) -> None:
    before = rows(store, "SELECT count(*), sum(value) FROM measurements")
    results = pr_run(tmp_path / "out", {4: 1.10}, drop=(32,), add={64: 130.0})
    code, out, _ = check(
        capsys, str(results), "--db", str(store), "--pr", PR, "--head-sha", "f" * 40
    )
    assert code == 1
    assert rows(store, "SELECT count(*), sum(value) FROM measurements") == before  # untouched
    [run] = rows(
        store,
        "SELECT check_run_id, pr_url, head_sha, base_kind, base_value, verdict, fail_on,"
        " exit_status, markdown FROM check_runs",
    )
    assert run[:8] == (1, PR, "f" * 40, "date", "2020-02-09", "failed", "regression", 1)
    assert run[8] == out
    stored = rows(
        store,
        "SELECT params->>'batch_size', series_id IS NULL, base, pr, change_pct, verdict"
        " FROM check_results WHERE check_run_id = 1 ORDER BY params->>'batch_size'",
    )
    found = {batch: rest for batch, *rest in stored}
    assert set(found) == {"1", "2", "4", "8", "16", "32", "64"}
    is_new, base, pr, change, verdict = found["4"]
    assert (is_new, pr, verdict) == (False, 16.5, "regression")
    assert base == pytest.approx(15.0, rel=0.01) and change == pytest.approx((pr / base - 1) * 100)
    assert found["64"] == [True, None, 130.0, None, "new"]
    assert found["32"][-1] == "gone" and found["32"][2] is None
    # A second run is a second row.
    check(capsys, str(results), "--db", str(store))
    assert rows(store, "SELECT check_run_id FROM check_runs ORDER BY 1") == [(1,), (2,)]


def test_claims_of_the_pr_are_set_beside_what_was_measured(
    store: Path, tmp_path: Path, capsys
) -> None:
    description = tmp_path / "pr-7.md"
    description.write_text(
        "Fuse fc: ERNIE batch_size=4 latency from 15ms to 14ms.\n", encoding="utf-8"
    )
    assert ingest("auto", str(description), "--url", PR, "--db", str(store), "--no-detect") == 0
    results = pr_run(tmp_path / "out", {4: 0.93})
    _, out, _ = check(capsys, str(results), "--db", str(store), "--pr", PR, "--json")
    [claim] = json.loads(out)["claims"]
    assert claim["claimed"] == "15 -> 14 ms (-6.7 %)"
    assert claim["series"] == "ernie · latency · paddle · Tesla P4 · batch_size=4, seq_len=128"
    assert claim["measured_pct"] == pytest.approx(-7.0, abs=1.0)


def test_the_compare_link(store: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PERFBOARD_URL", "https://perfboard.example.com/")
    results = pr_run(tmp_path / "out")
    _, out, _ = check(capsys, str(results), "--db", str(store), "--no-store")
    assert (
        "[Compare the two sides on the dashboard](https://perfboard.example.com/compare?"
        "a_kind=date&a=2020-02-09&b_kind=version&b=pr-head)"
    ) in out
    monkeypatch.setenv("PERFBOARD_URL", "javascript:alert(1)")
    assert "Compare the two sides" not in check(capsys, str(results), "--db", str(store))[1]


# -- docs/ci.md, end to end ----------------------------------------------------------------------


def ci_steps() -> dict[str, str]:
    """The shell blocks of docs/ci.md, by their first line ("# on a pull request")."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    return {block.splitlines()[0].removeprefix("# "): block for block in blocks}


BENCHMARK = """\
import json, os, sys
out = sys.argv[sys.argv.index("--out") + 1]
os.makedirs(out, exist_ok=True)
factor = float(os.environ.get("SLOWER", "1"))
levels = {levels}
with open(os.path.join(out, "ernie.jsonl"), "w") as fh:
    for batch, level in levels.items():
        record = dict({record}, params={{"batch_size": int(batch), "seq_len": 128}},
                      value=level * (factor if int(batch) == 4 else 1.0),
                      version=os.environ["VERSION"], time=os.environ["WHEN"])
        fh.write(json.dumps(record) + "\\n")
"""


def test_the_ci_doc_runs_end_to_end(tmp_path: Path, github: FakeGitHub) -> None:
    """The doc's steps, as written, in a clone: nights on the main branch, then a PR that
    makes batch_size=4 10 % slower: the job fails, the PR has one comment and a status."""
    steps = ci_steps()
    assert set(steps) == {"on the main branch", "on a pull request"}
    workflow = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for block in steps.values():  # the workflow runs the same commands
        for line in block.splitlines()[1:]:
            assert line.strip() in workflow
    clone = History(tmp_path / "ernie")
    bench = Path(clone.repo.working_tree_dir or ".") / "benchmarks" / "run.py"
    bench.parent.mkdir()
    bench.write_text(BENCHMARK.format(levels=LEVELS, record=repr(RECORD)), encoding="utf-8")
    clone.repo.index.add(["benchmarks/run.py"])
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "PERFBOARD_DB": str(tmp_path / "store.duckdb"),
        "REPO": REPO,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    env.pop("PERFBOARD_CONFIG", None)

    def job(name: str, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-e", "-c", steps[name]],
            cwd=clone.repo.working_tree_dir,
            env={**env, **more},
            capture_output=True,
            text=True,
            timeout=120,
        )

    rng = np.random.default_rng(3)
    main_shas = []
    for night in range(5):  # each push to develop: the benchmark, then its ingest
        sha = clone.commit(f"develop {night}")
        main_shas.append(sha)
        done = job(
            "on the main branch",
            SHA=sha,
            VERSION=sha,
            WHEN=f"2020-02-{night + 1:02d}T00:00:00Z",
            SLOWER=str(1 + 0.01 * rng.standard_normal()),
        )
        assert done.returncode == 0, done.stderr
    base = clone.repo.head.commit.hexsha
    clone.repo.create_head("pr").checkout()
    head = clone.commit("Slow fc down (#7)", file="fc.txt")
    done = job(
        "on a pull request",
        VERSION=head,
        WHEN="2020-02-20T00:00:00Z",
        SLOWER="1.10",
        BASE_REF="develop",
        HEAD_SHA=head,
        PR_URL=PR,
    )
    assert done.returncode == 1, done.stderr  # the job fails: a regression
    assert f"baseline: --base-sha {base[:12]}" in done.stderr
    folder = Path(clone.repo.working_tree_dir or ".")
    written = (folder / "perfboard-check.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in (folder / "out").iterdir()) == sorted([*main_shas, head])
    assert "**perfboard check failed** (--fail-on regression): 1 regression, the largest" in written
    [comment] = github.comments(REPO, 7)
    assert comment["body"] == written
    [status] = github.statuses(REPO, head)
    assert status["state"] == "failure" and status["target_url"] == comment["html_url"]
