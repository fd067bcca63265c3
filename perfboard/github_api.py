"""A GitHub REST client that is careful with the API: used by the ingest's syncs
(ingest/github.py), by the weekly report's --post and by `perfboard check --post`.

- The API base is a setting (GITHUB_API_URL or --api-url; GitHub Enterprise:
  https://HOST/api/v3); every request has connect and read timeouts.
- Headers: Authorization: Bearer <token>, Accept: application/vnd.github+json,
  X-GitHub-Api-Version. The token is GITHUB_TOKEN, else the one in Streamlit's secrets
  file (github_token). It is never logged, stored or put in a message: errors say at
  most how many characters it has.
- Pagination only by following the Link header (per_page=100).
- Conditional requests: the ETag and body of every answer are kept (http_cache); the
  next request for the same URL sends If-None-Match and a 304 reuses the stored body.
- Rate limits: a 403/429 with Retry-After, or with X-RateLimit-Remaining: 0, is waited
  out when the wait is short (max_wait), else it is an error saying when to come back.
  5xx answers and timeouts are retried with backoff, a few times; a POST never is (it
  may have been done); a PATCH is (it sets the resource: a second try changes nothing).
- Every failure is a GitHubError whose message names the URL and what to do.
"""

from __future__ import annotations

import json
import os
import re
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import duckdb
import requests

DEFAULT_API = "https://api.github.com"
API_VERSION = "2022-11-28"
PER_PAGE = 100


class GitHubError(Exception):
    """A GitHub request that failed; the message is safe to print (no token in it)."""


class NotFound(GitHubError):
    pass


class Cache(Protocol):
    def get(self, url: str) -> tuple[str, Any] | None: ...
    def put(self, url: str, etag: str, body: Any) -> None: ...


class DuckDBCache:
    """ETags and bodies in the store's http_cache table.

    New entries wait in memory until save(): a sync saves them in the same transaction
    as the rows it stores, so an interrupted sync cannot leave an ETag whose 304 would
    hide PRs that were never stored.
    """

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._conn = conn
        self._pending: dict[str, tuple[str, Any]] = {}

    def get(self, url: str) -> tuple[str, Any] | None:
        if url in self._pending:
            return self._pending[url]
        row = self._conn.execute(
            "SELECT etag, body FROM http_cache WHERE url = ?", [url]
        ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def put(self, url: str, etag: str, body: Any) -> None:
        self._pending[url] = (etag, body)

    def save(self) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        for url, (etag, body) in self._pending.items():
            # DELETE then INSERT, not an upsert: a DuckLake store has no keys to upsert on.
            self._conn.execute("DELETE FROM http_cache WHERE url = ?", [url])
            self._conn.execute(
                "INSERT INTO http_cache (url, etag, body, fetched_at) VALUES (?, ?, ?, ?)",
                [url, etag, json.dumps(body), now],
            )
        self._pending.clear()


@dataclass(slots=True)
class Answer:
    data: Any
    next_url: str | None
    not_modified: bool  # the cached body, confirmed unchanged by a 304


def secrets_files() -> list[Path]:
    """Streamlit's secrets files in its own order: the project's (the current folder's)
    first, then the user's."""
    return [Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"]


def github_token() -> str | None:
    """GITHUB_TOKEN, else GITHUB_TOKEN or [github] token in Streamlit's secrets file.

    The file is read with tomllib: the ingest runs without Streamlit. The first file that
    gives a token wins, so the project's wins over the user's, as in Streamlit.
    """
    token = os.environ.get("GITHUB_TOKEN")
    if token:
        return token
    for path in secrets_files():
        if path.is_file():
            token = _secrets_token(path)
            if token:
                return token
    return None


def _secrets_token(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            secrets = tomllib.load(fh)
    except OSError as error:
        raise GitHubError(f"cannot read {path}: {error.strerror}") from None
    except ValueError as error:  # TOMLDecodeError, UnicodeDecodeError
        # Only where: a parser's message may quote the text, and the text holds a secret.
        where = re.search(r"line \d+, column \d+|end of document", str(error))
        at = f" (at {where.group(0)})" if where else ""
        raise GitHubError(f"{path} is not valid TOML{at}: fix it, or set GITHUB_TOKEN") from None
    table = secrets.get("github")
    token = secrets.get("GITHUB_TOKEN") or (table.get("token") if isinstance(table, dict) else None)
    if token is not None and not isinstance(token, str):
        raise GitHubError(f"{path}: the GitHub token there is not a string")
    return token or None


def api_url(explicit: str | None = None) -> str:
    url = (explicit or os.environ.get("GITHUB_API_URL") or DEFAULT_API).rstrip("/")
    if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
        raise GitHubError(f"the GitHub API URL must be https (got {url!r})")
    return url


class GitHubClient:
    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        cache: Cache | None = None,
        timeout: tuple[float, float] = (5.0, 30.0),
        max_retries: int = 3,
        max_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = api_url(base_url)
        self._token = token if token is not None else github_token()
        self.cache = cache
        self._timeout = timeout
        self._max_retries = max_retries
        self._max_wait = max_wait
        self._sleep = sleep
        self._session = requests.Session()
        self._session.headers.update(
            {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION}
        )
        if self._token:
            self._session.headers["Authorization"] = f"Bearer {self._token}"
        self.requests_made = 0

    def get(self, path_or_url: str, params: dict[str, Any] | None = None) -> Answer:
        """GET one resource or page, conditionally, with retries and rate-limit waits."""
        url = self._url(path_or_url, params)
        cached = self.cache.get(url) if self.cache else None
        headers = {"If-None-Match": cached[0]} if cached else {}
        for attempt in range(self._max_retries + 1):
            response = self._send(url, headers, attempt)
            if response is None:
                continue  # a timeout or a dropped connection: try again
            if response.status_code == 304 and cached:
                return Answer(cached[1], _next(response), not_modified=True)
            wait = self._wait_for(response)
            if wait is not None:
                if wait > self._max_wait:
                    raise GitHubError(
                        f"GitHub rate limit reached for {url}: try again in {wait:.0f} s"
                    )
                self._sleep(wait)
                continue
            if response.status_code >= 500 and attempt < self._max_retries:
                self._sleep(0.5 * 2**attempt)
                continue
            data = self._json(url, response)
            etag = response.headers.get("ETag")
            if etag and self.cache:
                self.cache.put(url, etag, data)
            return Answer(data, _next(response), not_modified=False)
        raise GitHubError(f"GitHub did not answer {url} after {self._max_retries + 1} tries")

    def post(self, path: str, payload: dict[str, Any]) -> Any:
        """POST once and return the created resource. Not retried on a timeout or a 5xx:
        GitHub may have acted on the first try, and a second would post twice. A rate
        limit answer says when to try again."""
        url = self._url(path, None)
        self.requests_made += 1
        try:
            response = self._session.post(url, json=payload, timeout=self._timeout)
        except (requests.Timeout, requests.ConnectionError) as error:
            kind = "timed out" if isinstance(error, requests.Timeout) else "could not connect"
            raise GitHubError(
                f"GitHub {kind} for POST {url}; it may or may not have been done: look before"
                " trying again"
            ) from None
        wait = self._wait_for(response)
        if wait is not None:
            raise GitHubError(f"GitHub rate limit reached for {url}: try again in {wait:.0f} s")
        return self._json(url, response)

    def patch(self, path: str, payload: dict[str, Any]) -> Any:
        """PATCH a resource (edit a comment) and return it as it is now.

        Unlike a POST, retried on a timeout, a dropped connection or a 5xx, with the
        backoff of `get`: a PATCH sets the resource to the payload, so a second try after
        a first that GitHub did act on leaves the same result, never a duplicate. A rate
        limit answer says when to try again, as for a POST.
        """
        url = self._url(path, None)
        for attempt in range(self._max_retries + 1):
            self.requests_made += 1
            try:
                response = self._session.patch(url, json=payload, timeout=self._timeout)
            except (requests.Timeout, requests.ConnectionError) as error:
                if attempt >= self._max_retries:
                    kind = (
                        "timed out" if isinstance(error, requests.Timeout) else "could not connect"
                    )
                    raise GitHubError(
                        f"GitHub {kind} for PATCH {url} ({self._max_retries + 1} tries)"
                    ) from None
                self._sleep(0.5 * 2**attempt)
                continue
            wait = self._wait_for(response)
            if wait is not None:
                raise GitHubError(f"GitHub rate limit reached for {url}: try again in {wait:.0f} s")
            if response.status_code >= 500 and attempt < self._max_retries:
                self._sleep(0.5 * 2**attempt)
                continue
            return self._json(url, response)
        raise GitHubError(f"GitHub did not answer PATCH {url} after {self._max_retries + 1} tries")

    def pages(self, path: str, params: dict[str, Any]) -> Iterator[Answer]:
        """Every page of a list, following the Link header's rel="next"."""
        answer = self.get(path, {**params, "per_page": PER_PAGE})
        yield answer
        while answer.next_url:
            answer = self.get(answer.next_url)
            yield answer

    def _url(self, path_or_url: str, params: dict[str, Any] | None) -> str:
        url = path_or_url if "://" in path_or_url else f"{self.base_url}/{path_or_url.lstrip('/')}"
        if params:
            url = requests.Request("GET", url, params=params).prepare().url or url
        return url

    def _send(self, url: str, headers: dict[str, str], attempt: int) -> requests.Response | None:
        try:
            self.requests_made += 1
            return self._session.get(url, headers=headers, timeout=self._timeout)
        except (requests.Timeout, requests.ConnectionError) as error:
            if attempt >= self._max_retries:
                kind = "timed out" if isinstance(error, requests.Timeout) else "could not connect"
                raise GitHubError(
                    f"GitHub {kind} for {url} ({self._max_retries + 1} tries,"
                    f" timeouts {self._timeout[0]:g} s connect / {self._timeout[1]:g} s read)"
                ) from None
            self._sleep(0.5 * 2**attempt)
            return None

    @staticmethod
    def _wait_for(response: requests.Response) -> float | None:
        """Seconds to wait before asking again, if this is a rate-limit answer."""
        if response.status_code not in (403, 429):
            return None
        retry_after = response.headers.get("Retry-After")
        if retry_after and retry_after.isdigit():
            return float(retry_after)
        if response.headers.get("X-RateLimit-Remaining") == "0":
            reset = response.headers.get("X-RateLimit-Reset", "")
            if reset.isdigit():
                return max(0.0, int(reset) - time.time()) + 1
            return 60.0
        return None if response.status_code == 403 else 60.0

    def _json(self, url: str, response: requests.Response) -> Any:
        status = response.status_code
        if "json" not in response.headers.get("Content-Type", ""):
            raise GitHubError(
                f"GitHub answered {status} for {url} with "
                f"{response.headers.get('Content-Type') or 'no content type'}, not JSON"
            )
        try:
            data = response.json()
        except ValueError:
            raise GitHubError(f"GitHub answered {status} for {url} with broken JSON") from None
        if status in (200, 201):
            return data
        message = data.get("message", "") if isinstance(data, dict) else ""
        if status == 401:
            held = (
                f"the token given has {len(self._token)} characters"
                if self._token
                else "no token was given: set GITHUB_TOKEN or put it in .streamlit/secrets.toml"
            )
            raise GitHubError(f"GitHub refused the request for {url} (401 {message}); {held}")
        if status == 404:
            raise NotFound(f"not found on GitHub: {url}")
        raise GitHubError(f"GitHub answered {status} for {url}: {message or 'no message'}")


def _next(response: requests.Response) -> str | None:
    return response.links.get("next", {}).get("url")


# -- issue and PR pages ---------------------------------------------------------------------

_ISSUE_URL = re.compile(
    r"^https://[^/\s]+/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/(\d+)/?$"
)


def parse_issue_url(issue_url: str) -> tuple[str, int]:
    """OWNER/REPO and number of an issue's (or a PR's) page."""
    match = _ISSUE_URL.match(issue_url.strip())
    if match is None:
        raise GitHubError(
            f"{issue_url!r} is not an issue URL like https://github.com/OWNER/REPO/issues/N"
        )
    return match.group(1), int(match.group(2))
