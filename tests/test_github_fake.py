"""The loopback GitHub fake answers like GitHub does, over real HTTP (tests/github_fake.py)."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from tests.github_fake import FakeGitHub

REPO = "PaddlePaddle/Paddle"
TOKEN = "ghp_" + "f" * 36
API = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
    "Authorization": f"Bearer {TOKEN}",
}


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as fake:
        yield fake


def get(
    fake: FakeGitHub,
    path: str,
    params: dict[str, str | int] | None = None,
    headers: dict[str, str] | None = None,
) -> requests.Response:
    """GET as the client does: the API headers and the token, overridable."""
    merged = {**API, **(headers or {})}
    return requests.get(f"{fake.base_url}{path}", params=params, headers=merged, timeout=5)


def test_250_prs_come_in_3_pages_linked_like_github(gh: FakeGitHub) -> None:
    # Added out of number order so that update order is not number order.
    order = [(i * 97) % 250 + 1 for i in range(250)]
    assert sorted(order) == list(range(1, 251))
    for number in order:
        gh.add_pull(REPO, number)
    params = {"state": "all", "sort": "updated", "direction": "desc", "per_page": "100"}
    base = f"{gh.base_url}/repos/{REPO}/pulls?state=all&sort=updated&direction=desc&per_page=100"

    first = get(gh, f"/repos/{REPO}/pulls", params=params)
    assert first.status_code == 200
    assert first.headers["Link"] == f'<{base}&page=2>; rel="next", <{base}&page=3>; rel="last"'

    second = requests.get(first.links["next"]["url"], headers=API, timeout=5)
    assert second.links == {
        "prev": {"url": f"{base}&page=1", "rel": "prev"},
        "next": {"url": f"{base}&page=3", "rel": "next"},
        "last": {"url": f"{base}&page=3", "rel": "last"},
        "first": {"url": f"{base}&page=1", "rel": "first"},
    }
    third = requests.get(second.links["next"]["url"], headers=API, timeout=5)
    assert set(third.links) == {"prev", "first"}

    numbers = [pr["number"] for page in (first, second, third) for pr in page.json()]
    assert [len(page.json()) for page in (first, second, third)] == [100, 100, 50]
    assert numbers == order[::-1]  # the last added is the last updated: first in desc
    updated = [pr["updated_at"] for pr in first.json()]
    assert updated == sorted(updated, reverse=True) and len(set(updated)) == 100
    assert get(gh, f"/repos/{REPO}/pulls", params={**params, "page": "4"}).json() == []
    assert [r.query.get("page") for r in gh.requests[:3]] == [None, "2", "3"]


def test_shapes_defaults_and_detail_only_fields(gh: FakeGitHub) -> None:
    stored = gh.add_pull(
        REPO,
        22494,
        title="Embedding_eltwise_layernorm Fuse",
        user="NHZlX",
        labels=["inference"],
        merged_at="2020-02-07T03:04:05Z",
        additions=120,
    )
    assert stored["state"] == "closed" and stored["closed_at"] == "2020-02-07T03:04:05Z"
    assert stored["updated_at"] == "2020-02-07T03:04:05Z"  # never before the merge
    gh.add_pull(REPO, 7)

    one = get(gh, f"/repos/{REPO}/pulls/22494").json()
    assert one["user"] == {"login": "NHZlX"} and one["labels"] == [{"name": "inference"}]
    assert (one["additions"], one["deletions"], one["merged"]) == (120, 0, True)
    assert one["html_url"] == f"https://github.com/{REPO}/pull/22494"
    assert one["base"] == {"ref": "develop"} and len(one["merge_commit_sha"]) == 40

    default_open = get(gh, f"/repos/{REPO}/pulls").json()
    assert [pr["number"] for pr in default_open] == [7]  # state defaults to open
    (seven,) = default_open
    assert seven["created_at"] == "2020-01-01T00:01:00Z" and seven["body"] is None
    assert "additions" not in seven and "deletions" not in seven  # the list omits them

    listed = get(gh, f"/repos/{REPO}/pulls", params={"state": "all"}).json()
    assert [pr["number"] for pr in listed] == [7, 22494]  # created desc by default
    asc = get(gh, f"/repos/{REPO}/pulls", params={"state": "all", "sort": "updated"}).json()
    assert [pr["number"] for pr in asc] == [7, 22494]  # updated: GitHub's default is asc
    bad = get(gh, f"/repos/{REPO}/pulls", params={"state": "merged"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "state"


def test_200_headers_and_304_on_if_none_match(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, 1, title="渲染 fused kernel")
    first = get(gh, f"/repos/{REPO}/pulls/1")
    assert first.headers["Content-Type"] == "application/json; charset=utf-8"
    assert first.headers["ETag"] == f'W/"{hashlib.sha1(first.content).hexdigest()}"'
    assert first.json()["title"] == "渲染 fused kernel"
    assert first.headers["X-RateLimit-Limit"] == "5000"
    assert first.headers["X-RateLimit-Remaining"] == "4999"
    assert 0 < int(first.headers["X-RateLimit-Reset"]) - time.time() <= 61

    again = get(gh, f"/repos/{REPO}/pulls/1", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == first.headers["ETag"]
    assert again.headers["X-RateLimit-Remaining"] == "4999"  # a 304 is free
    third = get(gh, f"/repos/{REPO}/pulls/1", headers={"If-None-Match": 'W/"stale"'})
    assert third.status_code == 200 and third.headers["X-RateLimit-Remaining"] == "4998"
    assert (gh.count(), gh.count(status=304), gh.count("/pulls/1", status=200)) == (3, 1, 2)


def test_update_pull_changes_the_etag_and_moves_it_first(gh: FakeGitHub) -> None:
    for number in (1, 2, 3):
        gh.add_pull(REPO, number)
    params = {"state": "all", "sort": "updated", "direction": "desc"}
    before = get(gh, f"/repos/{REPO}/pulls", params=params)
    assert [pr["number"] for pr in before.json()] == [3, 2, 1]
    gh.update_pull(REPO, 1, title="revised", state="closed")
    after = get(
        gh, f"/repos/{REPO}/pulls", params=params, headers={"If-None-Match": before.headers["ETag"]}
    )
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    assert [pr["number"] for pr in after.json()] == [1, 3, 2]
    assert after.json()[0]["title"] == "revised"
    assert after.json()[0]["closed_at"] == after.json()[0]["updated_at"]
    with pytest.raises(KeyError):
        gh.update_pull(REPO, 99)


def test_the_token_is_required_and_headers_are_recorded(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, 1)
    bare = requests.get(f"{gh.base_url}/repos/{REPO}/pulls/1", timeout=5)
    assert bare.status_code == 401 and bare.json()["message"] == "Bad credentials"
    wrong = get(gh, f"/repos/{REPO}/pulls/1", headers={"Authorization": "Bearer ghp_nope"})
    assert wrong.status_code == 401
    classic = get(gh, f"/repos/{REPO}/pulls/1", headers={"Authorization": f"token {TOKEN}"})
    assert classic.status_code == 200
    assert [r.status for r in gh.requests] == [401, 401, 200]
    last = gh.requests[-1]
    assert (last.method, last.path) == ("GET", f"/repos/{REPO}/pulls/1")
    assert last.headers["accept"] == "application/vnd.github+json"
    assert last.headers["x-github-api-version"] == "2022-11-28"


def test_queued_failures_come_first_in_order_and_only_where_asked(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, 1)
    reset = str(int(time.time()) + 30)
    gh.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
    gh.fail_next(429, headers={"Retry-After": "1"})
    gh.fail_next(502, body="<html><body>Unicorn!</body></html>", times=2)
    gh.fail_next(500, path_contains="/comments")

    primary = get(gh, f"/repos/{REPO}/pulls/1")
    assert primary.status_code == 403
    assert primary.headers["X-RateLimit-Remaining"] == "0"
    assert primary.headers["X-RateLimit-Reset"] == reset
    assert "rate limit" in primary.json()["message"]
    secondary = get(gh, f"/repos/{REPO}/pulls/1")
    assert secondary.status_code == 429 and secondary.headers["Retry-After"] == "1"
    assert secondary.headers["X-RateLimit-Remaining"] != "0"  # secondary: budget is left
    for _ in range(2):
        unicorn = get(gh, f"/repos/{REPO}/pulls/1")
        assert unicorn.status_code == 502
        assert unicorn.headers["Content-Type"].startswith("text/html")
        assert unicorn.text == "<html><body>Unicorn!</body></html>"
    assert get(gh, f"/repos/{REPO}/pulls/1").status_code == 200  # /comments one still queued
    assert get(gh, f"/repos/{REPO}/issues/1/comments").status_code == 500

    gh.fail_next(500, times=10, path_contains="/pulls")
    assert get(gh, f"/repos/{REPO}/pulls/1").status_code == 500
    gh.fail_next(500, times=0)  # cancels the 9 still queued
    assert get(gh, f"/repos/{REPO}/pulls/1").status_code == 200


def test_a_delay_trips_the_read_timeout_without_blocking_others(gh: FakeGitHub) -> None:
    gh.add_pull(REPO, 1)
    gh.fail_next(200, delay=3.0)  # __exit__ wakes it: the test does not wait it out
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(f"{gh.base_url}/repos/{REPO}/pulls/1", headers=API, timeout=(1, 0.2))
    retried = get(gh, f"/repos/{REPO}/pulls/1")
    assert retried.status_code == 200 and retried.json()["number"] == 1
    assert time.monotonic() - started < 2.5  # answered while the first is still asleep
    assert gh.requests[0].status == 0  # not answered yet

    # A slow answer is a normal one once it comes, and others go on meanwhile.
    gh.fail_next(200, delay=0.5)
    slow: list[requests.Response] = []
    waiter = threading.Thread(target=lambda: slow.append(get(gh, f"/repos/{REPO}/pulls/1")))
    waiter.start()
    time.sleep(0.1)
    assert get(gh, f"/repos/{REPO}/pulls/1").status_code == 200
    waiter.join()
    assert slow[0].status_code == 200 and slow[0].json()["number"] == 1


def test_deep_pages_unknown_prs_and_routes(gh: FakeGitHub) -> None:
    for number in range(1, 6):
        gh.add_pull(REPO, number)
    gh.deep_page_limit = 2
    assert get(gh, f"/repos/{REPO}/pulls", params={"per_page": 1, "page": 2}).status_code == 200
    deep = get(gh, f"/repos/{REPO}/pulls", params={"per_page": 1, "page": 3})
    assert deep.status_code == 422 and deep.json()["message"] == "Validation Failed"
    assert deep.json()["errors"][0]["field"] == "page"

    missing = get(gh, f"/repos/{REPO}/pulls/404")
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert get(gh, "/repos/nobody/nothing/pulls").status_code == 404
    assert get(gh, f"/repos/{REPO}/commits").status_code == 404
    posted = requests.post(f"{gh.base_url}/repos/{REPO}/pulls", headers=API, json={}, timeout=5)
    assert posted.status_code == 404
    # Owner/name are case-insensitive on GitHub.
    assert get(gh, f"/repos/{REPO.lower()}/pulls/1").status_code == 200


def test_per_page_is_capped() -> None:
    with FakeGitHub(per_page_max=10) as gh:  # no token: anyone may read
        for number in range(1, 26):
            gh.add_pull(REPO, number)
        page = requests.get(f"{gh.base_url}/repos/{REPO}/pulls?per_page=100", timeout=5)
        assert len(page.json()) == 10
        assert page.links["last"]["url"].endswith("per_page=100&page=3")
        assert len(requests.get(f"{gh.base_url}/repos/{REPO}/pulls", timeout=5).json()) == 10


def test_issues_and_paginated_comments(gh: FakeGitHub) -> None:
    gh.add_issue(REPO, 10, title="Ernie slower on 2.0", user="reporter")
    for n in range(5):
        gh.add_comment(REPO, 10, body=f"measured {n}")
    issue = get(gh, f"/repos/{REPO}/issues/10").json()
    assert issue["title"] == "Ernie slower on 2.0" and issue["user"] == {"login": "reporter"}
    assert issue["html_url"] == f"https://github.com/{REPO}/issues/10"
    assert issue["updated_at"] > issue["created_at"]  # comments bump it, as on GitHub

    first = get(gh, f"/repos/{REPO}/issues/10/comments", params={"per_page": 2})
    assert [c["body"] for c in first.json()] == ["measured 0", "measured 1"]
    assert set(first.links) == {"next", "last"}
    assert first.links["last"]["url"].endswith("per_page=2&page=3")
    rest = get(gh, f"/repos/{REPO}/issues/10/comments", params={"per_page": 2, "page": 3})
    (last,) = rest.json()
    ids = [c["id"] for c in first.json()] + [last["id"]]
    assert ids == sorted(ids) and last["body"] == "measured 4"
    assert last["html_url"] == f"https://github.com/{REPO}/issues/10#issuecomment-{last['id']}"

    gh.add_pull(REPO, 11)  # a PR is an issue too: its comments live under /issues
    assert get(gh, f"/repos/{REPO}/issues/11").json()["pull_request"]["merged_at"] is None
    assert get(gh, f"/repos/{REPO}/issues/11/comments").json() == []
    assert get(gh, f"/repos/{REPO}/issues/12/comments").status_code == 404
