"""Links perfboard builds itself: only validated https URLs ever reach a page.

The GitHub base URL is a setting (PERFBOARD_GITHUB_URL; GitHub Enterprise:
https://HOST), so a team on its own GitHub gets links that work.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def github_url() -> str:
    base = os.environ.get("PERFBOARD_GITHUB_URL", "https://github.com").rstrip("/")
    if safe_https(base) is None:
        raise ValueError(f"PERFBOARD_GITHUB_URL must be an https URL, not {base!r}")
    return base


def safe_https(url: str | None) -> str | None:
    """The URL if it is a plain https URL with a host, else None (javascript:, data:...)."""
    if not isinstance(url, str) or not url or any(c in url for c in "\x00\r\n\t <>\"'`"):
        return None
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return None
    return url


def pr_url(repo: str | None, number: object) -> str | None:
    """https://github.com/OWNER/REPO/pull/N, or None when the repo or number is unknown."""
    try:
        n = int(number)  # type: ignore[call-overload]
    except (TypeError, ValueError):  # None, NaN, pandas NA
        return None
    if not isinstance(repo, str) or not _REPO.match(repo) or n <= 0:
        return None
    return f"{github_url()}/{quote(repo)}/pull/{n}"


def pr_link(url: object, repo: object, number: object) -> str | None:
    """A PR's link: built from its repository and number on PERFBOARD_GITHUB_URL, else its
    own URL when that is a safe https one on the same host, else None. Never the URL
    alone: a PR's html_url comes from the API or a recorded file, and one that lies would
    point a "pull/N" link at any host."""
    built = pr_url(repo, number)  # type: ignore[arg-type]
    if built is not None:
        return built
    own = safe_https(url)  # type: ignore[arg-type]
    if own is not None and urlsplit(own).hostname == urlsplit(github_url()).hostname:
        return own
    return None


def pr_links(
    urls: Iterable[object], repos: Iterable[object], numbers: Iterable[object]
) -> list[str | None]:
    """The link (pr_link) of each PR a table names."""
    return [pr_link(*named) for named in zip(urls, repos, numbers, strict=True)]
