"""An alert filed as a GitHub issue (perfboard/alert_issue.py, `perfboard file-issue`),
over real HTTP against the loopback GitHub: created once with its table and suspects, its
link stored on the alert and in its triage, never filed twice, a 5xx never retried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfboard import alert_issue, alerts, db
from perfboard.__main__ import main as perfboard_main
from perfboard.errors import UsageError
from perfboard.github_api import GitHubClient, GitHubError
from tests.github_fake import FakeGitHub
from tests.test_alerts import sha
from tests.test_notify import (  # noqa: F401 (fixtures)
    DASHBOARD,
    FIRST,
    SECOND,
    SECOND_MOVED,
    SUSPECT,
    configure,
    store,
)

REPO = "PaddlePaddle/benchmark"
TOKEN = "t0ken"
TITLE = (
    "Improvement in ernie: -11.8% (1.13x faster than before) in"
    " ernie · latency · paddle · Tesla P4 · batch_size=2, seq_len=128 and 1 more series"
)


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch):
    with FakeGitHub(token=TOKEN) as fake:
        fake.add_issue(REPO, 165, title="ERNIE GPU 二期优化")  # the tracking issue: #165
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield fake


@pytest.fixture
def detected(store: Path, configure) -> Path:  # noqa: F811
    configure(f'[notify]\ndashboard_url = "{DASHBOARD}"\nissue_repo = "{REPO}"\n')
    conn = db.connect(store)
    alerts.detect_store(conn)
    conn.close()
    return store


def posts(fake: FakeGitHub) -> list[dict]:
    return [json.loads(r.body) for r in fake.requests if r.method == "POST"]


def test_an_alert_is_filed_once_with_its_table_suspects_and_link(
    detected: Path, github: FakeGitHub, capsys
) -> None:
    command = ["file-issue", SECOND, "--db", str(detected), "--api-url", github.base_url]
    assert perfboard_main([*command, "--who", "xreki"]) == 0
    assert capsys.readouterr().err == f"filed: https://github.com/{REPO}/issues/166\n"
    [posted] = [r for r in github.requests if r.method == "POST"]
    assert posted.path == f"/repos/{REPO}/issues"
    assert posted.headers["authorization"] == f"Bearer {TOKEN}"
    [sent] = posts(github)
    assert sent["title"] == TITLE
    assert sent["body"].split("\n") == [
        "**Improvement in ernie: -11.8% (1.13x faster than before), 2 series**",
        "",
        "Largest change: ernie · latency · paddle · Tesla P4 · batch_size=2, seq_len=128:"
        " 9.487 → 8.371 ms (-11.8%).",
        SECOND_MOVED,
        "",
        "| series | before | after | change |",
        "|---|---:|---:|---:|",
        "| ernie · latency · paddle · Tesla P4 · batch_size=2, seq_len=128 | 9.487 ms"
        " | 8.371 ms | -11.77% |",
        "| ernie · latency · paddle · Tesla P4 · batch_size=1, seq_len=128 | 9.502 ms"
        " | 8.383 ms | -11.77% |",
        "",
        "**Suspected pull requests** (merged between the two sides):",
        "",
        f"- [PaddlePaddle/Paddle#22494]({SUSPECT}) Embedding_eltwise_layernorm Fuse (NHZlX)",
        "",
        f"Filed from [the alert on the dashboard]({DASHBOARD}/alerts?alert={SECOND}),"
        f" alert `{SECOND}`.",
        "",
    ]
    # GitHub holds it; the store holds its link, and the triage says who filed it.
    issue = GitHubClient(github.base_url, token=TOKEN).get(f"repos/{REPO}/issues/166").data
    assert (issue["title"], issue["state"]) == (TITLE, "open")
    conn = db.connect(detected)
    url = f"https://github.com/{REPO}/issues/166"
    assert alert_issue.filed_issue(conn, SECOND) == url
    assert alert_issue.filed_issue(conn, FIRST) is None
    assert conn.execute("SELECT repo, number, filed_by FROM alert_issues").fetchall() == [
        (REPO, 166, "xreki")
    ]
    assert conn.execute("SELECT status, note, set_by FROM alert_triage").fetchall() == [
        ("acknowledged", None, "xreki")
    ]
    assert conn.execute("SELECT status, note, set_by FROM alert_triage_log").fetchall() == [
        ("acknowledged", f"issue filed: {url}", "xreki")
    ]
    conn.close()

    # Filing it again is refused, naming the issue; nothing more is posted.
    assert perfboard_main([*command, "--who", "NHZlX"]) == 2
    assert capsys.readouterr().err == (f"perfboard: alert {SECOND} has an issue already: {url}\n")
    assert len(posts(github)) == 1


def test_a_server_error_on_the_post_is_not_retried_and_nothing_is_stored(
    detected: Path, github: FakeGitHub, capsys
) -> None:
    github.add_repo("PaddlePaddle/Paddle")
    github.fail_next(502, path_contains="/issues")
    command = ["file-issue", FIRST, "--db", str(detected), "--api-url", github.base_url]
    assert perfboard_main([*command, "--repo", "PaddlePaddle/Paddle", "--quiet"]) == 1
    assert capsys.readouterr().err == (
        f"perfboard: GitHub answered 502 for {github.base_url}/repos/PaddlePaddle/Paddle/issues:"
        " Server Error\n"
    )
    assert github.count("/issues") == 1  # one POST, not retried
    conn = db.connect(detected)
    assert alert_issue.filed_issue(conn, FIRST) is None
    for table in ("alert_issues", "alert_triage", "alert_triage_log"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    conn.close()
    # Asked again once GitHub is back: one issue, the repo's first (#165 is benchmark's).
    assert perfboard_main([*command, "--repo", "PaddlePaddle/Paddle", "--quiet"]) == 0
    assert github.count("/issues") == 2 and len(posts(github)) == 2
    conn = db.connect(detected)
    assert alert_issue.filed_issue(conn, FIRST) == "https://github.com/PaddlePaddle/Paddle/issues/1"
    conn.close()


def test_the_page_files_through_a_client_of_its_own_and_text_is_escaped(
    store: Path,  # noqa: F811
    configure,  # noqa: F811
    github: FakeGitHub,
) -> None:
    configure("[notify]\n")  # no dashboard, no issue_repo
    conn = db.connect(store)
    conn.execute(
        "UPDATE pull_requests SET title = ?, author = ? WHERE number = 22494",
        ["[urgent](https://evil.example) <img src=x> *fix* `now` @team", "<b>x</b>"],
    )
    alerts.detect_store(conn)
    client = GitHubClient(github.base_url, token=TOKEN)
    with pytest.raises(UsageError, match="no repository to file in: give OWNER/REPO"):
        alert_issue.file_issue(conn, SECOND, None, "xreki", client)
    with pytest.raises(UsageError, match="is not a repository like OWNER/REPO"):
        alert_issue.file_issue(conn, SECOND, "benchmark", "xreki", client)
    with pytest.raises(UsageError, match="no alert 'f00d' in the store"):
        alert_issue.file_issue(conn, "f00d", REPO, "xreki", client)
    with pytest.raises(GitHubError, match="not found on GitHub"):
        alert_issue.file_issue(conn, SECOND, "PaddlePaddle/unknown", "xreki", client)
    url = alert_issue.file_issue(conn, SECOND, REPO, "xreki", client)
    assert url == f"https://github.com/{REPO}/issues/166"
    [sent] = posts(github)[-1:]
    assert (
        f"- [PaddlePaddle/Paddle#22494]({SUSPECT}) \\[urgent\\](https://evil.example)"
        " \\<img src=x\\> \\*fix\\* \\`now\\` @team (\\<b\\>x\\</b\\>)"
    ) in sent["body"]
    assert sent["body"].endswith(f"Filed from perfboard, alert `{SECOND}`.\n")
    assert f"{sha(59)[:10]} (2020-02-29)" in sent["body"]
    with pytest.raises(alert_issue.AlreadyFiled, match=f"has an issue already: {url}"):
        alert_issue.file_issue(conn, SECOND, REPO, "NHZlX", client)
    conn.close()


def test_the_alerts_page_files_the_issue_and_then_shows_its_link(
    detected: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From an alert's page: the form files the issue on [notify] issue_repo through the
    GitHub client (GITHUB_API_URL), and the page then shows the issue in place of the form."""
    from tests.test_app import run_page

    monkeypatch.setenv("GITHUB_API_URL", github.base_url)
    page = run_page(monkeypatch, detected, "pages/alerts.py", alert=SECOND)
    [form_repo] = [t for t in page.text_input if t.label == "Repository"]
    assert form_repo.value == REPO
    [button] = [b for b in page.button if b.label == "File an issue"]
    button.click()
    page.run()
    assert not page.exception, page.exception
    [created] = posts(github)
    assert created["title"] == TITLE
    conn = db.connect(detected, read_only=True)
    url = alert_issue.filed_issue(conn, SECOND)
    conn.close()
    assert url is not None and url.startswith(f"https://github.com/{REPO}/issues/")
    again = run_page(monkeypatch, detected, "pages/alerts.py", alert=SECOND)
    assert any(url in m.value for m in again.markdown)
    assert not [b for b in again.button if b.label == "File an issue"]
