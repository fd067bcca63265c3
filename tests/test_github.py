"""The GitHub client and PR sync, over real HTTP against a loopback fake of the REST API."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from ingest import github
from ingest.cli import main
from perfboard import db, github_api
from tests.github_fake import FakeGitHub

REPO = "PaddlePaddle/Paddle"
TOKEN = "ghp_" + "x" * 36  # a token-shaped secret that must never show anywhere


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def store(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = db.connect(db_path)
    yield conn
    conn.close()


def client_for(
    fake: FakeGitHub, conn: duckdb.DuckDBPyConnection, **options: object
) -> github_api.GitHubClient:
    naps: list[float] = []
    client = github_api.GitHubClient(
        fake.base_url,
        token=TOKEN,
        cache=github_api.DuckDBCache(conn),
        sleep=naps.append,  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )
    client.naps = naps  # type: ignore[attr-defined]
    return client


def test_requests_carry_the_api_headers_and_the_token(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    fake.add_pull(REPO, 22486, title="[Ernie GPU Optim]: Fuse three fc to multihtead matmul")
    client_for(fake, store).get(f"repos/{REPO}/pulls/22486")
    (request,) = fake.requests
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == github_api.API_VERSION
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


def test_the_api_url_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "https://github.example.corp/api/v3/")
    assert github_api.api_url() == "https://github.example.corp/api/v3"
    assert github_api.api_url("https://ghe.example/api/v3") == "https://ghe.example/api/v3"
    with pytest.raises(github_api.GitHubError, match="must be https"):
        github_api.api_url("http://ghe.example/api/v3")


def test_all_syncs_incrementally_by_update_time(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    for number in range(1, 251):
        fake.add_pull(REPO, number, title=f"change {number}")
    first = github.sync_all(store, client_for(fake, store), REPO)
    assert (first.stored, first.requests) == (250, 3)  # per_page=100: three list pages
    assert all(r.query["per_page"] == "100" for r in fake.requests)
    assert store.execute("SELECT count(*) FROM pull_requests").fetchone()[0] == 250

    again = github.sync_all(store, client_for(fake, store), REPO)
    assert (again.stored, again.requests, again.not_modified) == (0, 1, 1)  # one 304

    for number in (7, 70, 170):
        fake.update_pull(REPO, number, title=f"change {number}, revised")
    after = github.sync_all(store, client_for(fake, store), REPO)
    assert after.requests == 1  # the first page holds every change
    titles = dict(store.execute("SELECT number, title FROM pull_requests").fetchall())
    assert titles[70] == "change 70, revised" and titles[71] == "change 71"


def test_referenced_prs_are_fetched_one_by_one_then_answered_304(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    store.execute(
        "INSERT INTO pull_requests (repo, number, origin, synced_at) VALUES"
        " (?, 22486, 'facts', now()), (?, 22494, 'facts', now()), (?, 99999, 'facts', now())",
        [REPO, REPO, REPO],
    )
    fake.add_pull(REPO, 22486, title="Fuse three fc", additions=120, deletions=30)
    fake.add_pull(
        REPO, 22494, title="Embedding_eltwise_layernorm Fuse", merged_at="2020-02-10T01:02:03Z"
    )
    first = github.sync_referenced(store, client_for(fake, store), REPO)
    assert (first.stored, first.requests) == (2, 3)  # 99999 is no PR there: skipped
    row = store.execute(
        "SELECT title, state, additions, deletions, merged_at::VARCHAR FROM pull_requests"
        " WHERE number = 22494"
    ).fetchone()
    assert row[:2] == ("Embedding_eltwise_layernorm Fuse", "merged")
    assert row[4] == "2020-02-10 01:02:03"
    again = github.sync_referenced(store, client_for(fake, store), REPO)
    assert (again.requests, again.not_modified) == (3, 2)


def test_rate_limits_are_waited_out_when_short_and_reported_when_long(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    fake.add_pull(REPO, 1)
    soon = str(int(time.time()) + 5)
    fake.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": soon})
    fake.fail_next(429, headers={"Retry-After": "2"})
    client = client_for(fake, store)
    assert client.get(f"repos/{REPO}/pulls/1").data["number"] == 1
    assert len(client.naps) == 2 and client.naps[1] == 2.0  # type: ignore[attr-defined]
    assert 4 <= client.naps[0] <= 7  # type: ignore[attr-defined]

    later = str(int(time.time()) + 3600)
    fake.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": later})
    with pytest.raises(github_api.GitHubError, match=r"rate limit reached .* try again in \d+ s"):
        client_for(fake, store).get(f"repos/{REPO}/pulls/1")


def test_server_errors_and_timeouts_are_retried(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    fake.add_pull(REPO, 1)
    fake.fail_next(502)
    fake.fail_next(200, delay=1.0)  # slower than the read timeout below
    client = client_for(fake, store, timeout=(1.0, 0.3))
    assert client.get(f"repos/{REPO}/pulls/1").data["number"] == 1
    assert client.requests_made == 3
    fake.fail_next(500, times=5)
    with pytest.raises(github_api.GitHubError, match="answered 500"):
        client_for(fake, store, max_retries=2).get(f"repos/{REPO}/pulls/1")


def test_clear_errors_never_show_the_token(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection
) -> None:
    fake.add_pull(REPO, 1)
    wrong = github_api.GitHubClient(fake.base_url, token="ghp_wrong_but_secret")
    with pytest.raises(github_api.GitHubError) as refused:
        wrong.get(f"repos/{REPO}/pulls/1")
    assert "401" in str(refused.value) and "20 characters" in str(refused.value)
    assert "ghp_wrong_but_secret" not in str(refused.value)
    fake.fail_next(
        502, headers={"Content-Type": "text/html"}, body="<html>Unicorn!</html>", times=4
    )
    with pytest.raises(github_api.GitHubError, match="text/html, not JSON"):
        client_for(fake, store).get(f"repos/{REPO}/pulls/1")
    with pytest.raises(github_api.NotFound, match="not found on GitHub"):
        client_for(fake, store).get(f"repos/{REPO}/pulls/404")
    fake.deep_page_limit = 1
    with pytest.raises(github_api.GitHubError, match="422"):
        client_for(fake, store).get(f"repos/{REPO}/pulls", {"page": 5})


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_sync_interrupted_at_a_page_boundary_stores_nothing_and_the_next_starts_over(
    fake: FakeGitHub, store: duckdb.DuckDBPyConnection, fail_at: int
) -> None:
    for number in range(1, 251):
        fake.add_pull(REPO, number)
    client = client_for(fake, store)
    real_get = client.get
    calls = []

    def get_until_cut(*args: object, **kwargs: object) -> github_api.Answer:
        calls.append(args)
        if len(calls) == fail_at:
            raise github_api.GitHubError("connection lost")  # the sync dies before page fail_at
        return real_get(*args, **kwargs)  # type: ignore[arg-type]

    client.get = get_until_cut  # type: ignore[method-assign]
    with pytest.raises(github_api.GitHubError, match="connection lost"):
        github.sync_all(store, client, REPO)
    assert store.execute("SELECT count(*) FROM pull_requests").fetchone()[0] == 0
    assert store.execute("SELECT count(*) FROM http_cache").fetchone()[0] == 0
    result = github.sync_all(store, client_for(fake, store), REPO)
    assert (result.stored, result.requests) == (250, 3)


def test_the_cli_syncs_and_the_token_is_nowhere_after(
    fake: FakeGitHub,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    fake.add_pull(REPO, 22486, title="Fuse three fc")
    status = main(["github-prs", "--repo", REPO, "--all", "--api-url", fake.base_url])
    assert status == 0
    err = capsys.readouterr().err
    assert f"{REPO}: 1 pull requests stored; 1 requests" in err
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_other_secret_value")
    assert main(["github-prs", "--repo", REPO, "--all", "--api-url", fake.base_url]) == 1
    err = capsys.readouterr().err
    assert "401" in err and "ghp_other_secret_value" not in err
    dump = db_path.read_bytes()
    assert TOKEN.encode() not in dump and b"ghp_other_secret_value" not in dump


BENCH = "PaddlePaddle/benchmark"


def test_an_issue_and_its_comments_are_read_as_documents(
    fake: FakeGitHub, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import sample_path

    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    phase = sample_path("benchmark-165_2020-02-04_xreki_phase2-table.md").read_text("utf-8")
    qat = sample_path("paddle-21228_2019-11-19_sand3r-_qat-latency.md").read_text("utf-8")
    fake.add_issue(BENCH, 165, title="ERNIE GPU optimisation", body="负责人：@NHZlX")
    first = fake.add_comment(
        BENCH, 165, body=phase, user="Xreki", created_at="2020-02-04T08:00:00Z"
    )
    second = fake.add_comment(
        BENCH, 165, body=qat, user="sand3r-", created_at="2019-11-19T09:30:00Z"
    )
    url = f"https://github.com/{BENCH}/issues/165"
    args = ["github-issue", url, "--api-url", fake.base_url, "--project", "ernie"]
    assert main(args) == 0
    conn = duckdb.connect(str(db_path), read_only=True)
    phase_row = conn.execute(
        "SELECT p.name, s.uri, s.author, s.url FROM phases p JOIN sources s USING (source_id)"
    ).fetchone()
    assert phase_row == ("二期优化工作", first["html_url"], "Xreki", first["html_url"])
    latency = conn.execute(
        "SELECT m.value, m.measured_at::VARCHAR, m.line FROM measurements m"
        " JOIN sources s USING (source_id) WHERE s.uri = ? ORDER BY m.line",
        [second["html_url"]],
    ).fetchall()
    # No date of their own: the comment's creation time dates them.
    assert latency[0] == (181.305, "2019-11-19 09:30:00", 4) and len(latency) == 4
    conn.close()

    fake.edit_comment(BENCH, 165, second["id"], qat.replace("181.305", "180.5"))
    fake.delete_comment(BENCH, 165, first["id"])
    assert main(args) == 0
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT count(*) FROM phases").fetchone()[0] == 0
    gone = conn.execute("SELECT status FROM sources WHERE uri = ?", [first["html_url"]]).fetchone()
    assert gone == ("gone",)
    values = conn.execute(
        "SELECT m.value FROM measurements m JOIN sources s USING (source_id)"
        " WHERE s.uri = ? ORDER BY m.line",
        [second["html_url"]],
    ).fetchall()
    assert values[0] == (180.5,) and len(values) == 4
    conn.close()
    fake.requests.clear()
    assert main(args) == 0  # nothing changed: every request answered 304
    assert fake.count(status=304) == len(fake.requests) == 2
    with pytest.raises(github_api.GitHubError, match="not an issue URL"):
        github.sync_issue(
            duckdb.connect(), github_api.GitHubClient(fake.base_url), "https://example.com/x"
        )
