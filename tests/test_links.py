"""Links perfboard builds: validated https only, with a configurable GitHub base."""

from __future__ import annotations

import pytest

from perfboard.links import pr_links, pr_url, safe_https


def test_pr_links_follow_the_configured_github(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (
        pr_url("PaddlePaddle/Paddle", 22424) == "https://github.com/PaddlePaddle/Paddle/pull/22424"
    )
    monkeypatch.setenv("PERFBOARD_GITHUB_URL", "https://github.example.corp/")
    assert pr_url("PaddlePaddle/Paddle", 22424) == (
        "https://github.example.corp/PaddlePaddle/Paddle/pull/22424"
    )
    monkeypatch.setenv("PERFBOARD_GITHUB_URL", "http://insecure.example")
    with pytest.raises(ValueError, match="https"):
        pr_url("PaddlePaddle/Paddle", 1)


def test_only_plain_https_urls_pass() -> None:
    assert safe_https("https://github.com/PaddlePaddle/Paddle/pull/22424")
    for bad in (
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "http://github.com/x",
        'https://github.com/x" onmouseover="alert(1)',
        "https:///no-host",
        None,
        float("nan"),
    ):
        assert safe_https(bad) is None, bad  # type: ignore[arg-type]


def test_a_table_row_gets_its_own_url_or_one_built_from_repo_and_number() -> None:
    links = pr_links(
        ["https://github.com/PaddlePaddle/Paddle/pull/22424", "javascript:alert(1)", None],
        [None, "PaddlePaddle/Paddle", "not a repo!"],
        [22424, 22486, 7],
    )
    assert links == [
        "https://github.com/PaddlePaddle/Paddle/pull/22424",
        "https://github.com/PaddlePaddle/Paddle/pull/22486",
        None,
    ]


def test_a_pr_link_never_leaves_the_configured_github(monkeypatch: pytest.MonkeyPatch) -> None:
    # A lying API answer or recorded file: html_url on another host. The link is rebuilt
    # from the PR's repository and number, and a URL alone is kept only on GitHub's host.
    links = pr_links(
        [
            "https://evil.example/PaddlePaddle/Paddle/pull/3",
            "https://evil.example/pull/4",
            "https://github.com/PaddlePaddle/Paddle/pull/5",
        ],
        ["PaddlePaddle/Paddle", None, None],
        [3, 4, 5],
    )
    assert links == [
        "https://github.com/PaddlePaddle/Paddle/pull/3",
        None,
        "https://github.com/PaddlePaddle/Paddle/pull/5",
    ]
    monkeypatch.setenv("PERFBOARD_GITHUB_URL", "https://github.example.corp")
    assert pr_links(["https://github.com/O/N/pull/5"], ["O/N"], [5]) == [
        "https://github.example.corp/O/N/pull/5"
    ]
    assert pr_links(["https://github.com/O/N/pull/5"], [None], [5]) == [None]
