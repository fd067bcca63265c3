"""The git ingest on real repositories built in a temp folder: squash merges, merge
commits with their branch, cherry-picks, release tags, a shallow clone, rewritten history."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from ingest import cli
from ingest.git import GitError, pr_of_message, walk
from perfboard import db, queries
from tests.test_results import RECORD


class Clone:
    """A repository built with the git command, each commit at a date of our choosing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "develop")
        self.git("config", "user.name", "Xreki")
        self.git("config", "user.email", "xreki@example.com")
        self.day = 0

    def git(self, *args: str, date: str | None = None) -> str:
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
        if date:
            env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def commit(self, message: str, file: str = "code.txt", text: str | None = None) -> str:
        self.day += 1
        date = f"2020-01-{self.day:02d}T12:00:00+08:00"
        target = self.path / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text if text is not None else f"{message}\n", encoding="utf-8")
        self.git("add", file)
        self.git("commit", "-q", "-m", message, date=date)
        return self.git("rev-parse", "HEAD")

    def tag(self, name: str, message: str | None = None) -> None:
        self.day += 1
        date = f"2020-01-{self.day:02d}T12:00:00+08:00"
        self.git("tag", *(["-a", "-m", message] if message else []), name, date=date)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = db.connect(tmp_path / "store.duckdb")
    yield conn
    conn.close()


@pytest.fixture
def paddle(tmp_path: Path) -> tuple[Clone, dict[str, str]]:
    """A small history in PaddlePaddle's habits: squash merges "(#N)", a merge commit of a
    branch, a release branch with a cherry-pick, annotated and lightweight tags."""
    clone = Clone(tmp_path / "Paddle")
    clone.git("remote", "add", "origin", "https://github.com/PaddlePaddle/Paddle.git")
    shas = {"init": clone.commit("Initial commit")}
    shas["19933"] = clone.commit("Add multihead op for ernie opt (#19933)")
    clone.tag("v1.6.0", "Release 1.6.0")
    clone.git("checkout", "-q", "-b", "release/1.6")
    shas["pick"] = clone.commit(
        "[cherry-pick] Add multihead op for ernie opt (#19933) (#20151)", file="release.txt"
    )
    clone.tag("v1.6.1")  # lightweight
    clone.git("checkout", "-q", "develop")
    shas["22424"] = clone.commit("Fuse fc + elementwise_add + layer_norm (#22424)")
    clone.git("checkout", "-q", "-b", "ernie_opt")
    shas["branch1"] = clone.commit("fuse three fc", file="fc.txt")
    shas["branch2"] = clone.commit("fix test=develop", file="fc.txt", text="fixed\n")
    clone.git("checkout", "-q", "develop")
    clone.day += 1
    clone.git(
        "merge",
        "-q",
        "--no-ff",
        "ernie_opt",
        "-m",
        "Merge pull request #22486 from NHZlX/ernie_opt\n\n"
        "[Ernie GPU Optim]: Fuse three fc to multihtead matmul",
        date=f"2020-01-{clone.day:02d}T12:00:00+08:00",
    )
    shas["merge"] = clone.git("rev-parse", "HEAD")
    shas["after"] = clone.commit("update docs")
    clone.tag("v1.7.0", "Release 1.7.0")
    clone.tag("v2.0.0-rc0", "a pre-release: not a release by default")
    return clone, shas


def commits_of(conn: duckdb.DuckDBPyConnection) -> dict[str, dict[str, object]]:
    rows = conn.execute("SELECT * FROM commits").fetchall()
    names = [d[0] for d in conn.description]
    return {row[1]: dict(zip(names, row, strict=True)) for row in rows}


# -- what a message says ------------------------------------------------------------------


def test_pr_of_message_reads_paddle_titles() -> None:
    # Titles from data/samples/pulls-known.csv as their squash commits would read.
    pick = pr_of_message("[cherry-pick] Add multihead op for ernie opt (#19933) (#20151)")
    assert (pick.number, pick.via, pick.picked_from) == (20151, "squash", (19933,))
    several = pr_of_message("[Cherry-pick]: 23974; 23723; 23984 (#24084)")
    assert (several.number, several.picked_from) == (24084, (23974, 23723, 23984))
    plain = pr_of_message(
        "update embedding_eltwise_layernorm fuse and kernel. test=develop (#23114)"
    )
    assert (plain.number, plain.via, plain.picked_from) == (23114, "squash", ())
    merge = pr_of_message(
        "Merge pull request #282 from Xreki/op_benchmark\n\n"
        "Implement a basic version to benchmark API's performance"
    )
    assert (merge.number, merge.via) == (282, "merge")
    picked_merge = pr_of_message(
        "Merge pull request #20592 from zhaoyuchen2018/cp\n\n"
        "[cherry-pick] Add multihead matmul fuse pass(#20167)"
    )
    assert (picked_merge.number, picked_merge.picked_from) == (20592, (20167,))
    x = pr_of_message("Fix a leak\n\n(cherry picked from commit a5a8d14414213fadcfcd7dc60c794d1a)")
    assert (x.number, x.picked_sha) == (None, "a5a8d14414213fadcfcd7dc60c794d1a")
    assert pr_of_message("Add CUDA 10.1 build for release 1.8").number is None
    assert pr_of_message("").number is None


# -- the walk -----------------------------------------------------------------------------


def test_walk_stores_commits_prs_and_releases(store, paddle) -> None:
    clone, shas = paddle
    result = walk(store, clone.path)
    assert result.repo == "PaddlePaddle/Paddle"  # from the origin remote
    assert (result.commits, result.releases, result.notes) == (8, 3, [])
    got = commits_of(store)
    assert set(got) == set(shas.values())
    assert (got[shas["19933"]]["pr_number"], got[shas["19933"]]["pr_via"]) == (19933, "squash")
    assert got[shas["pick"]]["pr_number"] == 20151
    assert got[shas["pick"]]["picked_from"] == [19933]
    assert (got[shas["merge"]]["pr_number"], got[shas["merge"]]["pr_via"]) == (22486, "merge")
    # The branch's own commits came in with the merge: they are PR 22486's.
    for sha in (shas["branch1"], shas["branch2"]):
        assert (got[sha]["pr_number"], got[sha]["pr_via"], got[sha]["mainline"]) == (
            22486,
            "branch",
            False,
        )
    assert got[shas["after"]]["pr_number"] is None
    assert got[shas["merge"]]["mainline"] and not got[shas["pick"]]["mainline"]
    assert got[shas["merge"]]["parents"] == [shas["22424"], shas["branch2"]]
    # Dates in UTC: 12:00 +08:00 is 04:00 UTC.
    assert got[shas["init"]]["committed_at"] == datetime(2020, 1, 1, 4, 0)
    assert got[shas["init"]]["author"] == "Xreki"
    # The first release that contains each commit (ancestry; v2.0.0-rc0 is no release).
    assert got[shas["init"]]["first_release"] == "v1.6.0"
    assert got[shas["19933"]]["first_release"] == "v1.6.0"
    assert got[shas["pick"]]["first_release"] == "v1.6.1"
    assert got[shas["branch1"]]["first_release"] == "v1.7.0"
    assert got[shas["after"]]["first_release"] == "v1.7.0"
    releases = store.execute("SELECT tag, sha FROM releases ORDER BY released_at").fetchall()
    assert releases == [
        ("v1.6.0", shas["19933"]),
        ("v1.6.1", shas["pick"]),
        ("v1.7.0", shas["after"]),
    ]


def test_second_walk_reads_only_what_is_new(store, paddle) -> None:
    clone, shas = paddle
    walk(store, clone.path)
    again = walk(store, clone.path)
    assert again.commits == 0
    new = clone.commit("Add embedding_eltwise_layernorm fuse (#22494)")
    clone.tag("v1.8.0")
    result = walk(store, clone.path)
    assert (result.commits, result.with_pr) == (1, 1)
    got = commits_of(store)
    assert len(got) == 9
    assert (got[new]["pr_number"], got[new]["first_release"]) == (22494, "v1.8.0")
    assert got[shas["after"]]["first_release"] == "v1.7.0"  # unchanged by the new tag


def test_a_walk_of_an_older_rev_then_head_equals_one_walk_of_head(store, paddle, tmp_path) -> None:
    """The release tags are walked with the head, so a walk of an older commit also reads
    the commits between it and a tag ahead of it on the same line. Whether those are on
    the mainline, and which PR a branch's commits came in with, depend on the head: they
    are settled again when a later walk moves it."""
    clone, shas = paddle
    walk(store, clone.path, rev=shas["22424"])
    early = commits_of(store)
    assert early[shas["branch1"]]["mainline"] is False  # v1.7.0 reaches it; 22424 does not
    walk(store, clone.path)
    once = db.connect(tmp_path / "once.duckdb")
    walk(once, clone.path)
    assert commits_of(store) == commits_of(once)
    got = commits_of(store)
    assert got[shas["merge"]]["mainline"] and got[shas["after"]]["mainline"]
    assert (got[shas["branch1"]]["pr_number"], got[shas["branch1"]]["pr_via"]) == (
        22486,
        "branch",
    )
    assert got[shas["branch2"]]["mainline"] is False
    once.close()


def test_since_limits_the_first_walk(store, paddle) -> None:
    clone, _ = paddle
    result = walk(store, clone.path, since=datetime(2020, 1, 6))
    dates = [row[0] for row in store.execute("SELECT committed_at FROM commits").fetchall()]
    assert result.commits == len(dates) and 0 < len(dates) < 8
    assert min(dates) >= datetime(2020, 1, 5, 16)  # the 6th, in +08:00


def test_rewritten_history_is_refused_then_replaced(store, paddle) -> None:
    clone, shas = paddle
    walk(store, clone.path)
    clone.git("reset", "-q", "--hard", shas["merge"])
    clone.git("tag", "-d", "v1.7.0", "v2.0.0-rc0")
    other = clone.commit("update docs, rebased")
    with pytest.raises(GitError, match=r"rewritten .* --rewrite") as error:
        walk(store, clone.path)
    assert shas["after"][:12] in str(error.value)
    assert len(commits_of(store)) == 8  # nothing changed
    result = walk(store, clone.path, rewrite=True)
    got = commits_of(store)
    assert other in got and shas["after"] not in got
    assert result.commits == len(got) == 8
    assert got[other]["first_release"] is None  # v1.7.0 is gone


def test_shallow_clone_says_what_is_missing(store, paddle, tmp_path) -> None:
    clone, shas = paddle
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", clone.path.as_uri(), str(shallow)],
        check=True,
    )
    result = walk(store, shallow, name="PaddlePaddle/Paddle")
    assert len(result.notes) == 1
    assert "shallow clone" in result.notes[0] and "git fetch --unshallow" in result.notes[0]
    assert shas["init"] not in commits_of(store)
    assert shas["after"] in commits_of(store)
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=shallow, check=True)
    again = walk(store, shallow, name="PaddlePaddle/Paddle")
    assert again.notes == [] and shas["init"] in commits_of(store)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "nowhere", "no such folder"),
        (lambda tmp: (tmp / "plain").mkdir() or tmp / "plain", "not a git repository"),
        (lambda tmp: Clone(tmp / "empty").path, "has no commits yet"),
    ],
)
def test_bad_clones_get_clear_errors(store, tmp_path, make, message) -> None:
    with pytest.raises(GitError, match=message):
        walk(store, make(tmp_path))


@pytest.mark.parametrize("rev", ["--output=/tmp/pwned", "-p", "HEAD;rm", "no-such-branch"])
def test_user_text_never_becomes_a_git_option(store, paddle, rev, tmp_path) -> None:
    clone, _ = paddle
    with pytest.raises(GitError, match=r"not a branch, tag or commit|not a commit"):
        walk(store, clone.path, rev=rev)
    assert not Path("/tmp/pwned").exists()


def test_walk_another_branch(store, paddle) -> None:
    clone, shas = paddle
    result = walk(store, clone.path, rev="release/1.6", name="PaddlePaddle/Paddle")
    got = commits_of(store)
    assert result.head == shas["pick"]
    assert got[shas["pick"]]["mainline"] and not got[shas["merge"]]["mainline"]


# -- versions in the data resolve to commits ---------------------------------------------


def test_versions_resolve_to_commit_pr_and_release(store, paddle, tmp_path) -> None:
    clone, shas = paddle
    walk(store, clone.path)
    results = tmp_path / "qa.jsonl"
    record = {**RECORD, "params": {"batch_size": 1}, "testbed": {}}
    lines = [
        {**record, "version": shas["branch2"][:9], "time": "2020-02-01T00:00:00Z", "value": 10},
        {**record, "version": shas["after"].upper(), "time": "2020-02-02T00:00:00Z", "value": 9.5},
        {**record, "version": "v1.5", "time": "2020-02-03T00:00:00Z", "value": 9.4},
    ]
    results.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    from ingest import pipeline
    from perfboard.model import DocMeta

    doc = pipeline.Document(DocMeta(uri=str(results)), "results", path=results)
    assert pipeline.ingest(store, doc).outcome == "added"
    series = store.execute("SELECT series_id FROM series").fetchall()
    points = queries.series_points(store, tuple(s[0] for s in series))
    by_value = {row.value: row for row in points.itertuples()}
    assert (by_value[10.0].pr_number, by_value[10.0].release) == (22486, "v1.7.0")
    assert by_value[10.0].commit_at == datetime(2020, 1, 8, 4, 0)
    assert by_value[9.5].release == "v1.7.0" and pd.isna(by_value[9.5].pr_number)
    assert pd.isna(by_value[9.4].commit_at) and pd.isna(by_value[9.4].release)
    tags = queries.releases(store)
    assert list(tags.tag) == ["v1.6.0", "v1.6.1", "v1.7.0"]
    # github-prs --referenced fetches the PRs of the commits measured.
    from ingest.github import referenced_numbers

    assert referenced_numbers(store, "PaddlePaddle/Paddle") == [22486]


# -- the commands -------------------------------------------------------------------------


def test_git_command(paddle, tmp_path, capsys) -> None:
    clone, _ = paddle
    target = tmp_path / "cli.duckdb"
    assert cli.main(["git", "--repo", str(clone.path), "--db", str(target)]) == 0
    err = capsys.readouterr().err
    assert "PaddlePaddle/Paddle: 8 new commits (6 with a PR), 3 releases" in err
    assert cli.main(["git", "--repo", str(tmp_path / "nope"), "--db", str(target)]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert cli.main(["git", "--repo", str(clone.path), "--since", "yesterday"]) == 2


def test_git_results_reads_each_file_at_its_last_revision(tmp_path, capsys) -> None:
    clone = Clone(tmp_path / "results-repo")
    clone.git("remote", "add", "origin", "git@github.com:team/ernie-results.git")
    record = {**RECORD, "params": {"batch_size": 1}, "version": None, "time": None}
    first = clone.commit(
        "day 1", "results/2020-02-04/ernie.jsonl", json.dumps({**record, "value": 10.0}) + "\n"
    )
    clone.commit("notes", "README.md", "results of the ERNIE runs\n")
    gone = clone.commit(
        "day 2", "results/2020-02-05/ernie.jsonl", json.dumps({**record, "value": 9.5}) + "\n"
    )
    clone.git("rm", "-q", "results/2020-02-05/ernie.jsonl")
    clone.day += 1
    clone.git("commit", "-q", "-m", "drop day 2", date=f"2020-01-{clone.day:02d}T12:00:00+08:00")
    fixed = clone.commit(
        "day 1, corrected",
        "results/2020-02-04/ernie.jsonl",
        json.dumps({**record, "value": 9.9})
        + "\n"
        + json.dumps({**record, "value": 9.8, "version": "abc1234", "time": "2020-02-04T08:00:00Z"})
        + "\n",
    )
    target = tmp_path / "store.duckdb"
    args = ["git-results", "--repo", str(clone.path), "--glob", "results/**/*.jsonl"]
    assert cli.main([*args, "--db", str(target)]) == 0
    conn = duckdb.connect(str(target), read_only=True)
    rows = conn.execute(
        "SELECT src.uri, src.url, m.value, m.version, m.measured_at FROM measurements m"
        " JOIN sources src USING (source_id) ORDER BY m.value"
    ).fetchall()
    conn.close()
    uri4 = "team/ernie-results:results/2020-02-04/ernie.jsonl"
    uri5 = "team/ernie-results:results/2020-02-05/ernie.jsonl"
    url4 = f"https://github.com/team/ernie-results/blob/{fixed}/results/2020-02-04/ernie.jsonl"
    assert rows == [
        (
            uri5,
            f"https://github.com/team/ernie-results/blob/{gone}/results/2020-02-05/ernie.jsonl",
            9.5,
            gone,
            datetime(2020, 1, 3, 4),
        ),
        (uri4, url4, 9.8, "abc1234", datetime(2020, 2, 4, 8)),  # its own version and time
        (uri4, url4, 9.9, fixed, datetime(2020, 1, 5, 4)),
    ]
    assert first != fixed
    capsys.readouterr()
    assert cli.main([*args, "--db", str(target)]) == 0
    assert "2 unchanged" in capsys.readouterr().err


def test_trends_marks_the_releases_of_the_walked_clone(paddle, tmp_path, monkeypatch) -> None:
    from ingest.results import write_records
    from tests.conftest import ingest
    from tests.test_app import chart_rows, run_page

    clone, shas = paddle
    store = tmp_path / "trends.duckdb"
    assert cli.main(["git", "--repo", str(clone.path), "--db", str(store)]) == 0
    runs = tmp_path / "nightly.jsonl"
    nightly = [
        ("init", "2020-01-02", 10.2),
        ("22424", "2020-01-07", 10.0),
        ("after", "2020-01-12", 9.5),
    ]
    write_records(
        [
            {**RECORD, "version": shas[key][:8], "time": f"{day}T00:00:00Z", "value": value}
            for key, day, value in nightly
        ],
        runs,
    )
    assert ingest("results", str(runs), "--db", str(store)) == 0
    at = run_page(monkeypatch, store, "pages/trends.py", metric="latency")
    [chart] = at.get("vega_lite_chart")
    values = chart_rows(chart)
    tags = {row["tag"] for row in values if "tag" in row}
    assert tags == {"v1.6.0", "v1.6.1", "v1.7.0"}  # all three fall within Jan 2-12
    # The version as the tooltip shows it (its first 10 characters: these are 8 long).
    releases = {row["version_short"]: row["release"] for row in values if "release" in row}
    assert releases == {
        shas["init"][:8]: "v1.6.0",
        shas["22424"][:8]: "v1.7.0",
        shas["after"][:8]: "v1.7.0",
    }
