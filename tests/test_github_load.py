"""Recorded GitHub answers (--load), the token from Streamlit's secrets file, and PR
descriptions read as documents: real HTTP against the loopback fake where HTTP is involved."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import requests

from ingest import github
from ingest.cli import main
from perfboard import db, github_api, queries
from tests.conftest import ROOT, sample_path
from tests.conftest import rows as stored
from tests.github_fake import FakeGitHub

REPO = "PaddlePaddle/Paddle"
BENCH = "PaddlePaddle/benchmark"
TOKEN = "ghp_" + "y" * 36
DESCRIPTION_22486 = "paddle-pr-22486_2020-02-07_nhzlx_description.md"
DESCRIPTION_22494 = "paddle-pr-22494_2020-02-07_nhzlx_description.md"
# Every column but where and when the row was stored.
PULL_COLUMNS = (
    "repo, number, title, author, state, created_at, updated_at, merged_at, closed_at,"
    " labels::VARCHAR, base, merge_commit, additions, deletions, url, body, note"
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with FakeGitHub(token=TOKEN) as server:
        yield server


def github_prs(*args: str, store: Path | None = None) -> int:
    """`python -m ingest github-prs --repo PaddlePaddle/Paddle ARGS [--db store]`."""
    return main(["github-prs", "--repo", REPO, *args, *(["--db", str(store)] if store else [])])


def answer(fake: FakeGitHub, path: str, **params: object) -> Any:
    """What the fake API answers, as a recording would keep it."""
    got = requests.get(
        f"{fake.base_url}/{path}",
        params=params,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )
    assert got.status_code == 200, got.text
    return got.json()


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def pulls_in(db_file: Path) -> list[tuple]:
    return stored(db_file, f"SELECT {PULL_COLUMNS} FROM pull_requests ORDER BY repo, number")


def documents_in(db_file: Path) -> list[tuple]:
    """Sources (without ids and times of storing), claims and measurements, by source."""
    sources = stored(
        db_file,
        "SELECT uri, url, author, title, created_at, content_hash, n_measurements, status"
        " FROM sources ORDER BY uri",
    )
    claims = stored(
        db_file,
        "SELECT s.uri, c.ordinal, c.before, c.after, c.unit, c.percent, c.line, c.raw"
        " FROM claims c JOIN sources s USING (source_id) ORDER BY s.uri, c.ordinal",
    )
    measurements = stored(
        db_file,
        "SELECT s.uri, m.line, m.value, m.measured_at FROM measurements m"
        " JOIN sources s USING (source_id) ORDER BY s.uri, m.line, m.value",
    )
    return [sources, claims, measurements]


def add_described_pulls(fake: FakeGitHub) -> None:
    """PRs #22486 and #22494 as on GitHub, their bodies the samples' descriptions."""
    for number, name, title in (
        (22486, DESCRIPTION_22486, "[Ernie GPU Optim]: Fuse three fc to multihtead matmul"),
        (22494, DESCRIPTION_22494, "[Ernie GPU Optimize]: Embedding_eltwise_layernorm Fuse"),
    ):
        fake.add_pull(
            REPO,
            number,
            title=title,
            user="NHZlX",
            body=sample_path(name).read_text("utf-8"),
            created_at="2020-02-07T03:04:05Z",
            merged_at="2020-02-10T01:02:03Z",
            labels=["perf"],
        )


# -- --load: recorded PR answers ---------------------------------------------------------


def test_a_recorded_list_page_or_its_pages_store_what_the_api_sync_stores(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    add_described_pulls(fake)
    for number in range(1, 6):
        fake.add_pull(REPO, number, title=f"change {number}", user="dev", closed_at="2020-03-01")
    synced = tmp_path / "synced.duckdb"
    assert github_prs("--all", "--api-url", fake.base_url, store=synced) == 0
    page = answer(fake, f"repos/{REPO}/pulls", state="all", sort="updated", direction="desc")
    listed = write_json(tmp_path / "pulls.json", page)
    paged = write_json(tmp_path / "pages.json", [page[:3], page[3:5], page[5:]])
    before = len(fake.requests)
    for recorded in (listed, paged):
        loaded = tmp_path / f"{recorded.stem}.duckdb"
        assert github_prs("--load", str(recorded), store=loaded) == 0
        assert pulls_in(loaded) == pulls_in(synced) and len(pulls_in(loaded)) == 7
        assert documents_in(loaded) == documents_in(synced)
        assert len(documents_in(loaded)[1]) == 3  # the claims of #22486 and #22494
        origins = stored(loaded, "SELECT DISTINCT origin FROM pull_requests")
        assert origins == [(str(recorded),)]
    assert len(fake.requests) == before  # no request reached GitHub


def test_a_recorded_single_pr_stores_what_the_referenced_sync_stores(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    add_described_pulls(fake)
    synced = tmp_path / "synced.duckdb"
    conn = db.connect(synced)
    conn.execute(
        "INSERT INTO pull_requests (repo, number, origin, synced_at) VALUES (?, 22494, 'x', now())",
        [REPO],
    )
    conn.close()
    assert github_prs("--referenced", "--api-url", fake.base_url, store=synced) == 0
    detail = answer(fake, f"repos/{REPO}/pulls/22494")
    assert detail["merged"] is True and detail["additions"] == 0  # the single form
    recorded = write_json(tmp_path / "22494.json", detail)
    before = len(fake.requests)
    loaded = tmp_path / "loaded.duckdb"
    assert github_prs("--load", str(recorded), store=loaded) == 0
    assert len(fake.requests) == before
    assert pulls_in(loaded) == pulls_in(synced)
    assert documents_in(loaded) == documents_in(synced)
    assert len(documents_in(loaded)[1]) == 2  # --referenced reads descriptions too


def test_several_files_load_in_order_and_say_what_they_stored(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = {
        "number": 7,
        "title": "first title",
        "state": "open",
        "html_url": f"https://github.com/{REPO}/pull/7",
    }
    new = {**old, "title": "second title", "state": "closed", "merged": True, "merged_at": None}
    first = write_json(tmp_path / "a.json", [old])
    second = write_json(tmp_path / "b.json", new)
    assert main(["github-prs", "--repo", REPO, "--load", str(first), "--load", str(second)]) == 0
    err = capsys.readouterr().err
    assert f"{first}: 1 pull requests of {REPO} stored;" in err
    assert "0 PR descriptions read as documents (none kept)" in err
    # merged: true without merged_at is merged (a recording may know that, not when).
    assert stored(db_path, "SELECT title, state, merged_at, origin FROM pull_requests") == [
        ("second title", "merged", None, str(second))
    ]


def test_the_recorded_demo_files_are_what_the_script_writes() -> None:
    from scripts.record_demo_pulls import recorded_files

    written = recorded_files()
    assert sorted(p.name for p in written) == [
        "PaddlePaddle-Paddle-pulls.json",
        "PaddlePaddle-benchmark-pulls.json",
    ]
    for path, text in written.items():
        assert path.read_text(encoding="utf-8") == text, f"run scripts/record_demo_pulls.py: {path}"
    paddle = {pr["number"]: pr for pr in json.loads(next(iter(written.values())))}
    assert paddle[22494]["body"] == sample_path(DESCRIPTION_22494).read_text("utf-8")
    assert paddle[22494]["created_at"] == "2020-02-07T00:00:00Z" and paddle[22494]["merged"]
    assert paddle[19776]["body"] is None and "base" not in paddle[19776]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"number": 1,}]', r"bad\.json:1:15: not valid JSON: Expecting property name"),
        ('[\n  {"number": 1}\n  {"number": 2}\n]', r"bad\.json:3:3: not valid JSON: Expecting ','"),
        ('"PaddlePaddle/Paddle#1"', r"bad\.json: holds a string; expected a PR object, an array"),
        ("42", r"bad\.json: holds a number; expected"),
        ('[{"number": 1}, [{"number": 2}]]', r"bad\.json: item 1 is an array, not a PR object"),
        ('[{"number": 1}, {"title": "no number"}]', r"bad\.json: item 1 has no number"),
        ('[[{"number": 1}], [{"number": "2"}]]', r'bad\.json: page 1 item 0 has number "2"'),
        ('{"title": "x"}', r"bad\.json: the object has no number"),
        (
            '[{"number": 1, "created_at": "yesterday"}]',
            r"bad\.json: item 0 \(#1\): Invalid isoformat",
        ),
        (
            '[{"number": 282, "html_url": "https://github.com/PaddlePaddle/benchmark/pull/282"}]',
            r"item 0 \(#282\) is .* not a pull request of PaddlePaddle/Paddle",
        ),
    ],
)
def test_a_recorded_file_that_is_not_pr_answers_is_a_usage_error_and_stores_nothing(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    good = write_json(tmp_path / "good.json", [{"number": 5, "title": "fine"}])
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert main(["github-prs", "--repo", REPO, "--load", str(good), "--load", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ingest: ") and str(bad) in err
    assert re.search(message, err), err
    # Every file is checked before the store opens: the good one is not stored either.
    assert not db_path.exists() or stored(db_path, "SELECT count(*) FROM pull_requests") == [(0,)]


def test_load_is_a_mode_of_its_own_and_a_missing_file_says_so(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["github-prs", "--repo", REPO, "--all", "--load", "x.json"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["github-prs", "--repo", REPO, "--load", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
    assert main(["github-prs", "--repo", "Paddle", "--load", str(tmp_path / "none.json")]) == 2
    assert "'Paddle' is not OWNER/NAME" in capsys.readouterr().err


def test_a_later_all_sync_is_not_stopped_by_recorded_prs(fake: FakeGitHub, tmp_path: Path) -> None:
    for number in range(1, 151):
        fake.add_pull(REPO, number)
    newest = answer(fake, f"repos/{REPO}/pulls/150")
    recorded = write_json(tmp_path / "newest.json", newest)
    store = tmp_path / "store.duckdb"
    assert github_prs("--load", str(recorded), store=store) == 0
    assert github_prs("--all", "--api-url", fake.base_url, store=store) == 0
    # The recorded PR is the newest: were it the watermark, the sync would stop at once.
    assert stored(store, "SELECT count(*) FROM pull_requests") == [(150,)]


def test_pull_row_reads_merged_and_an_unknown_state() -> None:
    row = github.pull_row(REPO, {"number": 1, "state": "closed", "merged": True}, "file")
    assert (row["state"], row["merged_at"]) == ("merged", None)
    assert (
        github.pull_row(REPO, {"number": 2, "state": "closed", "merged": False}, "f")["state"]
        == "closed"
    )
    assert github.pull_row(REPO, {"number": 3, "state": None}, "f")["state"] == "unknown"


# -- github-issue --load -------------------------------------------------------------------


def test_a_recorded_issue_is_read_as_the_api_sync_reads_it(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    phase = sample_path("benchmark-165_2020-02-04_xreki_phase2-table.md").read_text("utf-8")
    qat = sample_path("paddle-21228_2019-11-19_sand3r-_qat-latency.md").read_text("utf-8")
    fake.add_issue(BENCH, 165, title="ERNIE GPU optimisation", body="负责人：@NHZlX")
    first = fake.add_comment(
        BENCH, 165, body=phase, user="Xreki", created_at="2020-02-04T08:00:00Z"
    )
    fake.add_comment(BENCH, 165, body=qat, user="sand3r-", created_at="2019-11-19T09:30:00Z")
    url = f"https://github.com/{BENCH}/issues/165"
    synced, loaded = tmp_path / "synced.duckdb", tmp_path / "loaded.duckdb"
    issue = ["github-issue", url, "--project", "ernie"]
    assert main([*issue, "--api-url", fake.base_url, "--db", str(synced)]) == 0
    recorded = {
        "issue": answer(fake, f"repos/{BENCH}/issues/165"),
        "comments": answer(fake, f"repos/{BENCH}/issues/165/comments"),
    }
    path = write_json(tmp_path / "issue-165.json", recorded)
    before = len(fake.requests)
    assert main([*issue, "--load", str(path), "--db", str(loaded)]) == 0
    assert len(fake.requests) == before
    assert documents_in(loaded) == documents_in(synced)
    phases = (
        "SELECT p.name, m.label, m.value, m.pr_number FROM phases p"
        " JOIN milestones m USING (phase_id) ORDER BY m.ordinal"
    )
    assert stored(loaded, phases) == stored(synced, phases) and len(stored(loaded, phases)) >= 2

    # A recording without the first comment: that comment is gone, as after a sync.
    recorded["comments"] = [c for c in recorded["comments"] if c["id"] != first["id"]]
    write_json(path, recorded)
    assert main(["github-issue", url, "--load", str(path), "--db", str(loaded)]) == 0
    assert stored(loaded, "SELECT status FROM sources WHERE uri = ?", [first["html_url"]]) == [
        ("gone",)
    ]
    assert stored(loaded, "SELECT count(*) FROM phases") == [(0,)]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "holds an empty array; expected an object"),
        (
            {"issue": {"html_url": f"https://github.com/{BENCH}/issues/148"}, "comments": []},
            "its issue is",
        ),
        (
            {
                "issue": {"html_url": f"https://github.com/{BENCH}/issues/165"},
                "comments": [{"html_url": f"https://github.com/{BENCH}/issues/148#issuecomment-1"}],
            },
            "comment 0 is .* not a comment on",
        ),
    ],
)
def test_a_recorded_issue_of_the_wrong_shape_is_a_usage_error(
    tmp_path: Path, db_path: Path, capsys: pytest.CaptureFixture[str], data: object, message: str
) -> None:
    path = write_json(tmp_path / "issue.json", data)
    url = f"https://github.com/{BENCH}/issues/165"
    assert main(["github-issue", url, "--load", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and re.search(message, err), err


# -- the token -------------------------------------------------------------------------------


@pytest.fixture
def no_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No GITHUB_TOKEN, a project folder as the current one, and a home of its own."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    return tmp_path


def secrets(folder: Path, text: str) -> Path:
    path = folder / ".streamlit" / "secrets.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text",
    [f'GITHUB_TOKEN = "{TOKEN}"\n', f'other = 1\n\n[github]\ntoken = "{TOKEN}"\n'],
    ids=["top-level", "github-table"],
)
def test_the_token_comes_from_the_projects_streamlit_secrets(no_token: Path, text: str) -> None:
    secrets(no_token / "project", text)
    assert github_api.github_token() == TOKEN
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_pull(REPO, 1)
        github_api.GitHubClient(fake.base_url).get(f"repos/{REPO}/pulls/1")
        (request,) = fake.requests
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


def test_the_environment_wins_then_the_project_file_then_the_users(
    no_token: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert github_api.github_token() is None
    secrets(no_token / "home", '[github]\ntoken = "from-home"\n')
    assert github_api.github_token() == "from-home"
    secrets(no_token / "project", 'GITHUB_TOKEN = "from-project"\n')
    assert github_api.github_token() == "from-project"
    monkeypatch.setenv("GITHUB_TOKEN", "from-env")
    assert github_api.github_token() == "from-env"
    monkeypatch.delenv("GITHUB_TOKEN")
    secrets(no_token / "project", "[server]\nheadless = true\n")  # a file with no token
    assert github_api.github_token() == "from-home"


def test_a_broken_secrets_file_is_named_and_its_token_never_shown(
    no_token: Path, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = secrets(no_token / "project", f'[github]\ntoken = "{TOKEN}\n')  # unterminated
    with pytest.raises(github_api.GitHubError) as broken:
        github_api.github_token()
    assert str(path) in str(broken.value) and "not valid TOML (at line 2" in str(broken.value)
    assert TOKEN not in str(broken.value) and TOKEN[4:12] not in str(broken.value)
    args = ["github-prs", "--repo", REPO, "--all", "--api-url", "http://127.0.0.1:9"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "secrets.toml is not valid TOML" in err and TOKEN[4:12] not in err
    secrets(no_token / "project", "GITHUB_TOKEN = 12345\n")
    with pytest.raises(github_api.GitHubError, match="is not a string"):
        github_api.github_token()


# -- PR descriptions, as documents -----------------------------------------------------------


def claims_of(db_file: Path) -> list[tuple]:
    return stored(
        db_file,
        "SELECT regexp_extract(s.url, '/pull/(\\d+)', 1)::INT, c.before, c.after, c.unit"
        " FROM claims c JOIN sources s USING (source_id) ORDER BY 1, c.ordinal",
    )


def test_an_all_sync_reads_the_pr_descriptions_for_their_claims(
    fake: FakeGitHub, db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_described_pulls(fake)
    fake.add_pull(REPO, 22500, body="Refactor the tester; no performance change.")
    fake.add_pull(REPO, 22501)  # no description: GitHub sends null
    sync = ["github-prs", "--repo", REPO, "--all", "--api-url", fake.base_url]
    assert main(sync) == 0
    err = capsys.readouterr().err
    assert f"{REPO}: 4 pull requests stored; 1 requests, 0 answered 304 (unchanged);" in err
    assert "3 PR descriptions read as documents (2 added)" in err
    assert claims_of(db_path) == [
        (22486, 10.0, 9.5, "ms"),
        (22494, 9.5, 8.4, "ms"),
        (22494, 8.4, 7.8, "ms"),
    ]
    source = stored(
        db_path,
        "SELECT uri, url, author, title, created_at::VARCHAR, project FROM sources"
        " WHERE uri LIKE '%22486'",
    )
    url = f"https://github.com/{REPO}/pull/22486"
    assert source == [
        (
            url,
            url,
            "NHZlX",
            "[Ernie GPU Optim]: Fuse three fc to multihtead matmul",
            "2020-02-07 03:04:05",
            "",
        )
    ]

    # An edited description that claims nothing now loses its claim; its source stays.
    # (Updated after the merge times given above: the fake's own clock is at 2020-01-01.)
    fake.update_pull(
        REPO, 22486, body="Fuse three Fc to mutlithead matmul op.", updated_at="2020-03-01"
    )
    assert main(sync) == 0
    # #22494 again too (the ten minutes of overlap): unchanged, nothing written.
    assert (
        "2 PR descriptions read as documents (1 replaced, 1 unchanged)" in capsys.readouterr().err
    )
    assert claims_of(db_path) == [(22494, 9.5, 8.4, "ms"), (22494, 8.4, 7.8, "ms")]
    # Emptied, then written again as it was: its rows gone (the source marked empty), then
    # read again.
    body = sample_path(DESCRIPTION_22494).read_text("utf-8")
    fake.update_pull(REPO, 22494, body=None, updated_at="2020-03-02")
    assert main(sync) == 0
    assert claims_of(db_path) == []
    assert stored(db_path, "SELECT status FROM sources WHERE uri LIKE '%22494'") == [("empty",)]
    fake.update_pull(REPO, 22494, body=body, updated_at="2020-03-03")
    assert main(sync) == 0
    assert claims_of(db_path) == [(22494, 9.5, 8.4, "ms"), (22494, 8.4, 7.8, "ms")]
    assert stored(db_path, "SELECT status FROM sources WHERE uri LIKE '%22494'") == [("ok",)]


def test_prs_without_descriptions_make_no_sources(fake: FakeGitHub, db_path: Path) -> None:
    for number in range(1, 121):
        fake.add_pull(REPO, number, body=None if number % 2 else "  \n")
    fake.add_pull(REPO, 121, body="Update the docs.")  # read, but nothing in it to keep
    assert github_prs("--all", "--api-url", fake.base_url) == 0
    assert stored(db_path, "SELECT count(*) FROM pull_requests") == [(121,)]
    assert stored(db_path, "SELECT count(*) FROM sources") == [(0,)]


def test_a_claim_in_a_description_file_and_in_the_synced_body_is_shown_once(
    fake: FakeGitHub, db_path: Path
) -> None:
    # The file is the manifest's (url: the PR page); GitHub sends the body with CRLFs,
    # so the two are different documents making the same claims.
    assert main(["auto", str(sample_path(DESCRIPTION_22494)), "--quiet"]) == 0
    add_described_pulls(fake)
    body = sample_path(DESCRIPTION_22494).read_text("utf-8").replace("\n", "\r\n")
    fake.update_pull(REPO, 22494, body=body)
    assert github_prs("--all", "--api-url", fake.base_url) == 0
    assert stored(db_path, "SELECT count(*) FROM claims") == [(5,)]  # 3 from GitHub, 2 the file
    conn = duckdb.connect(str(db_path), read_only=True)
    claimed = queries.pr_claims(conn)
    conn.close()
    rows = claimed[["pr_repo", "pr_number", "before", "after", "source"]].values.tolist()
    assert rows == [
        [REPO, 22486, 10.0, 9.5, f"https://github.com/{REPO}/pull/22486"],
        [REPO, 22494, 9.5, 8.4, str(sample_path(DESCRIPTION_22494))],
        [REPO, 22494, 8.4, 7.8, str(sample_path(DESCRIPTION_22494))],
    ]


def test_the_demo_loads_its_prs_from_the_recorded_files(demo_db: Path) -> None:
    origins = stored(
        demo_db, "SELECT repo, origin, count(*) FROM pull_requests GROUP BY ALL ORDER BY 1"
    )
    assert origins == [
        (REPO, "data/github/PaddlePaddle-Paddle-pulls.json", 13),
        (BENCH, "data/github/PaddlePaddle-benchmark-pulls.json", 2),
    ]
    facts = "SELECT title, author, state FROM pull_requests WHERE repo = ? AND number = ?"
    assert stored(demo_db, facts, [BENCH, 380]) == [
        ("Update the calling of tf", "Xreki", "unknown")
    ]
    assert stored(demo_db, facts, [REPO, 20770]) == [
        ("Multi-head CPU matmul fuse pass", "bingyanghuang", "closed")
    ]
    conn = duckdb.connect(str(demo_db), read_only=True)
    claimed = queries.pr_claims(conn)
    conn.close()
    assert claimed[["pr_number", "before", "after"]].values.tolist() == [
        [22486, 10.0, 9.5],
        [22494, 9.5, 8.4],
        [22494, 8.4, 7.8],
        # the before/after table of #25523's description, one claim per row
        [25523, 0.012141, 0.005447],
        [25523, 0.276627, 0.198814],
        [25523, 0.012747, 0.006055],
    ]
    assert (ROOT / "data" / "github" / "README.md").exists()
