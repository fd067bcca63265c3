"""A GitHub REST client that is careful with the API, and the PR sync built on it.

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
  5xx answers and timeouts are retried with backoff, a few times.
- Every failure is a GitHubError whose message names the URL and what to do.

Recorded API answers (JSON files, e.g. for the demo or an offline machine) are stored
through the same rows as a sync: recorded_pull_rows and recorded_issue check their shape.
"""

from __future__ import annotations

import json
import os
import re
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pyarrow as pa
import requests

from perfboard import db

DEFAULT_API = "https://api.github.com"
API_VERSION = "2022-11-28"
PER_PAGE = 100


class GitHubError(Exception):
    """A GitHub request that failed; the message is safe to print (no token in it)."""


class NotFound(GitHubError):
    pass


class RecordError(ValueError):
    """A recorded API answer that does not hold what it should; the message says what."""


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
                "INSERT INTO http_cache VALUES (?, ?, ?, ?)",
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


# -- the PR sync ------------------------------------------------------------------------


@dataclass(slots=True)
class SyncResult:
    stored: int
    requests: int
    not_modified: int
    descriptions: int = 0  # PR descriptions read by the parsers
    kept: dict[str, int] = field(default_factory=dict)  # outcome -> descriptions kept as such


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def pull_row(repo: str, pr: dict[str, Any], origin: str) -> dict[str, Any]:
    """A pull_requests row from a GitHub PR object (list or single form).

    The single form's `merged: true` says merged even without merged_at: a recorded
    file may know that a PR was merged but not when.
    """
    merged = pr.get("merged_at")
    return {
        "repo": repo,
        "number": int(pr["number"]),
        "title": pr.get("title"),
        "author": (pr.get("user") or {}).get("login"),
        "state": "merged" if merged or pr.get("merged") is True else pr.get("state") or "unknown",
        "created_at": _time(pr.get("created_at")),
        "updated_at": _time(pr.get("updated_at")),
        "merged_at": _time(merged),
        "closed_at": _time(pr.get("closed_at")),
        "labels": json.dumps([label.get("name") for label in pr.get("labels") or []]),
        "base": (pr.get("base") or {}).get("ref"),
        "merge_commit": pr.get("merge_commit_sha"),
        "additions": pr.get("additions"),
        "deletions": pr.get("deletions"),
        "url": pr.get("html_url"),
        "body": pr.get("body"),
        "origin": origin,
    }


_PULL_COLUMNS = {
    "repo": pa.string(),
    "number": pa.int64(),
    "title": pa.string(),
    "author": pa.string(),
    "state": pa.string(),
    "created_at": pa.timestamp("us"),
    "updated_at": pa.timestamp("us"),
    "merged_at": pa.timestamp("us"),
    "closed_at": pa.timestamp("us"),
    "labels": pa.string(),
    "base": pa.string(),
    "merge_commit": pa.string(),
    "additions": pa.int64(),
    "deletions": pa.int64(),
    "url": pa.string(),
    "body": pa.string(),
    "origin": pa.string(),
}


def store_pulls(
    conn: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], cache: Cache | None = None
) -> None:
    """Upsert PR rows in one statement, and the sync's new ETags, in one transaction.

    A list answer lacks additions/deletions: what a single-PR answer gave is kept.
    """
    table = pa.Table.from_pylist(rows, schema=pa.schema(list(_PULL_COLUMNS.items())))
    with db.transaction(conn):
        if rows:
            conn.register("_synced_pulls", table)
            conn.execute(_UPSERT, [datetime.now(UTC).replace(tzinfo=None)])
            conn.unregister("_synced_pulls")
        if isinstance(cache, DuckDBCache):
            cache.save()


# MERGE, not INSERT ... ON CONFLICT: a DuckLake store has no keys to conflict on.
_UPSERT = (
    "MERGE INTO pull_requests t USING (SELECT DISTINCT ON (repo, number) repo, number, title,"
    " author, state, created_at, updated_at, merged_at, closed_at, labels::JSON AS labels, base,"
    " merge_commit, additions, deletions, url, body, origin, ? AS synced_at"
    " FROM _synced_pulls) s ON t.repo = s.repo AND t.number = s.number"
    " WHEN MATCHED THEN UPDATE SET title = s.title, author = s.author, state = s.state,"
    " created_at = s.created_at, updated_at = s.updated_at, merged_at = s.merged_at,"
    " closed_at = s.closed_at, labels = s.labels, base = s.base,"
    " merge_commit = s.merge_commit,"
    " additions = coalesce(s.additions, t.additions),"
    " deletions = coalesce(s.deletions, t.deletions),"
    " url = s.url, body = s.body, origin = s.origin, synced_at = s.synced_at"
    " WHEN NOT MATCHED THEN INSERT (repo, number, title, author, state, created_at,"
    " updated_at, merged_at, closed_at, labels, base, merge_commit, additions, deletions,"
    " url, body, origin, synced_at) VALUES (s.repo, s.number, s.title, s.author, s.state,"
    " s.created_at, s.updated_at, s.merged_at, s.closed_at, s.labels, s.base,"
    " s.merge_commit, s.additions, s.deletions, s.url, s.body, s.origin, s.synced_at)"
)


def referenced_numbers(conn: duckdb.DuckDBPyConnection, repo: str) -> list[int]:
    """PRs of a repo the data names: milestones (repo given or not), known PR facts, and
    the PRs of the walked commits that measurements name as their version (and the PRs
    those commits cherry-pick)."""
    rows = conn.execute(
        """
        SELECT DISTINCT pr_number FROM milestones WHERE pr_number IS NOT NULL
          AND (pr_repo IS NULL OR pr_repo = $repo)
        UNION SELECT number FROM pull_requests WHERE repo = $repo
        UNION SELECT unnest(list_prepend(c.pr_number, coalesce(c.picked_from, [])))
        FROM commits c
        JOIN (SELECT DISTINCT lower(version) AS v FROM measurements
              WHERE regexp_full_match(version, '[0-9a-fA-F]{7,40}')) m
          ON left(c.sha, 7) = left(m.v, 7) AND starts_with(c.sha, m.v)
        WHERE c.repo = $repo AND c.pr_number IS NOT NULL
        ORDER BY 1
        """,
        {"repo": repo},
    ).fetchall()
    return [int(r[0]) for r in rows]


def sync_referenced(conn: duckdb.DuckDBPyConnection, client: GitHubClient, repo: str) -> SyncResult:
    """Fetch each PR the data refers to: one conditional request each."""
    before = client.requests_made
    rows, unchanged = [], 0
    for number in referenced_numbers(conn, repo):
        try:
            answer = client.get(f"repos/{repo}/pulls/{number}")
        except NotFound:
            continue  # a PR number that is no PR of this repo: nothing to store
        unchanged += answer.not_modified
        if not answer.not_modified:
            rows.append(pull_row(repo, answer.data, _api_origin(client, repo)))
    read, kept = read_descriptions(conn, rows)  # first: see read_descriptions
    store_pulls(conn, rows, client.cache)
    return SyncResult(len(rows), client.requests_made - before, unchanged, read, kept)


def sync_all(
    conn: duckdb.DuckDBPyConnection,
    client: GitHubClient,
    repo: str,
    since: datetime | None = None,
    overlap: timedelta = timedelta(minutes=10),
) -> SyncResult:
    """Every PR of a repo, newest update first, stopping at what the last sync saw.

    The watermark is the newest updated_at this API stored for the repo, less a small
    overlap (GitHub's clock and ordering are not exact); --since stops earlier still. PRs
    loaded from a recorded file do not count: the API was never asked for the PRs
    between them.
    """
    before = client.requests_made
    row = conn.execute(
        "SELECT max(updated_at) FROM pull_requests"
        " WHERE repo = ? AND origin = ? AND updated_at IS NOT NULL",
        [repo, _api_origin(client, repo)],
    ).fetchone()
    stop = max(
        [t for t in (row[0] - overlap if row[0] else None, since) if t is not None],
        default=None,
    )
    rows, unchanged = [], 0
    params = {"state": "all", "sort": "updated", "direction": "desc"}
    for answer in client.pages(f"repos/{repo}/pulls", params):
        if answer.not_modified:
            unchanged += 1
            break  # the newest page is as it was: nothing was updated since
        done = False
        for pr in answer.data:
            updated = _time(pr.get("updated_at"))
            if stop is not None and updated is not None and updated < stop:
                done = True
                break
            rows.append(pull_row(repo, pr, _api_origin(client, repo)))
        if done:
            break
    read, kept = read_descriptions(conn, rows)  # first: see read_descriptions
    store_pulls(conn, rows, client.cache)
    return SyncResult(len(rows), client.requests_made - before, unchanged, read, kept)


def _api_origin(client: GitHubClient, repo: str) -> str:
    return f"{client.base_url}/repos/{repo}/pulls"


def store_recorded(conn: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> SyncResult:
    """PR rows from a recorded file (recorded_pull_rows), stored as a sync stores them."""
    read, kept = read_descriptions(conn, rows)
    store_pulls(conn, rows)
    return SyncResult(len(rows), 0, 0, read, kept)


# -- PR descriptions, as documents ----------------------------------------------------------


def read_descriptions(
    conn: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]
) -> tuple[int, dict[str, int]]:
    """Each PR's description read as a document by the parsers, as sync_issue reads a
    comment: a source named by the PR's page, with its author, title and creation time.

    Returns how many descriptions were read and what became of those kept. Kept only when
    the parsers found something in it (claims, measurements, phases, profiles, passes)
    or when its source exists already: an edited description that claims nothing now
    must lose its old claims, but a sync of 2,500 PRs must not store 2,500 sources that
    hold nothing (saving one costs about 5 ms; reading one, well under 1 ms). Each
    description is stored in its own transaction, all of them before store_pulls
    commits the PRs and their ETags: those tell the next sync what it need not fetch
    again (the watermark, a 304), so a sync killed between the two must leave the PRs
    unstored, or the descriptions it had not read yet would never be read.
    """
    # Imported here, as in sync_issue: the PR rows do not need the document pipeline.
    from ingest.documents import read_text
    from ingest.save import record_failure, save_found
    from ingest.text import NotText
    from perfboard.model import DocMeta, Problem

    known = _sources_named(conn, [row["url"] for row in rows if row["url"]])
    read = 0
    kept: dict[str, int] = {}
    for row in rows:
        uri = row["url"]
        if not uri:
            continue  # no page to name the document by
        meta = DocMeta(
            uri=uri,
            url=uri,
            author=row["author"] or "",
            created_at=row["created_at"],
            title=row["title"] or "",
            project="",
        )
        try:
            parsed = read_text(row["body"] or "", "auto", meta)
        except NotText:
            if uri in known:  # emptied: what it claimed is claimed no more
                with db.transaction(conn):
                    _mark_gone(conn, known[uri], uri)
                kept["gone"] = kept.get("gone", 0) + 1
            continue
        except Exception as error:  # a parser bug costs this description, not the sync
            outcome = record_failure(
                conn, uri, Problem(0, f"internal error, please report: {error!r}", parser="auto")
            ).outcome
            kept[outcome] = kept.get(outcome, 0) + 1
            continue
        read += 1
        if parsed.found.is_empty() and uri not in known:
            continue  # lines it could not read alone (a table without units) are not kept
        outcome = save_found(conn, parsed.info, parsed.found, parsed.rows).outcome
        kept[outcome] = kept.get(outcome, 0) + 1
    return read, kept


def _sources_named(conn: duckdb.DuckDBPyConnection, uris: list[str]) -> dict[str, int]:
    """source_id by uri of the live sources among these names: one query for a sync."""
    if not uris:
        return {}
    rows = conn.execute(
        "SELECT uri, source_id FROM sources WHERE status <> 'gone' AND list_contains(?, uri)",
        [uris],
    ).fetchall()
    return dict(rows)


def _mark_gone(conn: duckdb.DuckDBPyConnection, source_id: int, uri: str) -> None:
    """A document GitHub no longer has (a deleted comment, an emptied description): its
    rows go, its source stays, marked gone. Its hash is forgotten, so that the same text
    coming back is read again rather than taken as unchanged. Inside a transaction."""
    from ingest.save import delete_source_rows

    delete_source_rows(conn, source_id, uri)
    conn.execute(
        "UPDATE sources SET status = 'gone', n_measurements = 0, content_hash = ''"
        " WHERE source_id = ?",
        [source_id],
    )


# -- recorded API answers ---------------------------------------------------------------------

_PULL_URL = re.compile(r"^https://[^/\s]+/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/\d+/?$")


def recorded_pull_rows(repo: str, data: Any, origin: str) -> list[dict[str, Any]]:
    """pull_requests rows from recorded API JSON: a list of PR objects (a /pulls page, or
    single-PR answers collected by hand), one PR object, or a list of pages.

    All or nothing: the first item that is no PR of `repo` is a RecordError naming it
    (items counted from 0, as in the JSON). A PR given twice: the later one wins.
    """
    if isinstance(data, dict):
        items = [("the object", data)]
    elif isinstance(data, list) and data and all(isinstance(page, list) for page in data):
        items = [
            (f"page {p} item {i}", pr) for p, page in enumerate(data) for i, pr in enumerate(page)
        ]
    elif isinstance(data, list):
        items = [(f"item {i}", pr) for i, pr in enumerate(data)]
    else:
        raise RecordError(
            f"holds {_json_kind(data)}; expected a PR object, an array of PR objects"
            " (a /pulls page) or an array of such pages"
        )
    rows: dict[int, dict[str, Any]] = {}
    for where, pr in items:
        row = _recorded_pull(repo, pr, origin, where)
        rows[row["number"]] = row
    return list(rows.values())


def _recorded_pull(repo: str, pr: Any, origin: str, where: str) -> dict[str, Any]:
    if not isinstance(pr, dict):
        raise RecordError(f"{where} is {_json_kind(pr)}, not a PR object")
    number = pr.get("number")
    if type(number) is not int or number < 1:  # bool is an int to isinstance
        held = "has no number" if number is None else f"has number {json.dumps(number)}"
        raise RecordError(f"{where} {held}: a PR object needs its number")
    url = pr.get("html_url")
    match = _PULL_URL.match(url) if isinstance(url, str) else None
    if url is not None and (match is None or match.group(1).lower() != repo.lower()):
        raise RecordError(f"{where} (#{number}) is {url!r}, not a pull request of {repo}")
    try:
        return pull_row(repo, pr, origin)
    except (AttributeError, TypeError, ValueError) as error:  # a field of the wrong shape
        raise RecordError(f"{where} (#{number}): {error}") from None


def recorded_issue(data: Any, issue_url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The issue and its comments from a recorded file {"issue": {...}, "comments": [...]},
    checked to be the issue at issue_url."""
    if not (
        isinstance(data, dict)
        and isinstance(data.get("issue"), dict)
        and isinstance(data.get("comments"), list)
    ):
        raise RecordError(
            f"holds {_json_kind(data)}; expected an object"
            ' {"issue": {...the issue...}, "comments": [...its comments...]}'
        )
    issue, comments = data["issue"], data["comments"]
    repo, number = parse_issue_url(issue_url)
    held = _ISSUE_URL.match(str(issue.get("html_url", "")))
    if held is None or (held.group(1).lower(), int(held.group(2))) != (repo.lower(), number):
        raise RecordError(f"its issue is {issue.get('html_url')!r}, not {issue_url}")
    prefix = f"{issue['html_url']}#issuecomment-"
    for index, comment in enumerate(comments):
        if not isinstance(comment, dict):
            raise RecordError(f"comment {index} is {_json_kind(comment)}, not a comment object")
        if not str(comment.get("html_url", "")).startswith(prefix):
            raise RecordError(
                f"comment {index} is {comment.get('html_url')!r}, not a comment on {issue_url}"
            )
    return issue, comments


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an empty array" if not value else "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    return "null"


# -- an issue and its comments, as documents ------------------------------------------------

_ISSUE_URL = re.compile(
    r"^https://[^/\s]+/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/(\d+)/?$"
)


@dataclass(slots=True)
class IssueSyncResult:
    outcomes: dict[str, int]  # added / replaced / unchanged / failed ... per document
    gone: int  # comments stored before that GitHub no longer has
    requests: int


def parse_issue_url(issue_url: str) -> tuple[str, int]:
    """OWNER/REPO and number of an issue's (or a PR's) page."""
    match = _ISSUE_URL.match(issue_url.strip())
    if match is None:
        raise GitHubError(
            f"{issue_url!r} is not an issue URL like https://github.com/OWNER/REPO/issues/N"
        )
    return match.group(1), int(match.group(2))


def sync_issue(
    conn: duckdb.DuckDBPyConnection,
    client: GitHubClient,
    issue_url: str,
    kind: str = "auto",
    project: str = "",
) -> IssueSyncResult:
    """Fetch an issue and its comments, and store them as documents (store_issue)."""
    before = client.requests_made
    issue, comments = fetch_issue(client, issue_url)
    result = store_issue(conn, issue, comments, kind, project, client.cache)
    result.requests = client.requests_made - before
    return result


def fetch_issue(
    client: GitHubClient, issue_url: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The issue's API object and every comment's, following the comments' pages."""
    repo, number = parse_issue_url(issue_url)
    issue = client.get(f"repos/{repo}/issues/{number}").data
    comments = []
    for page in client.pages(f"repos/{repo}/issues/{number}/comments", {}):
        comments += page.data
    return issue, comments


def store_issue(
    conn: duckdb.DuckDBPyConnection,
    issue: dict[str, Any],
    comments: list[dict[str, Any]],
    kind: str = "auto",
    project: str = "",
    cache: Cache | None = None,
) -> IssueSyncResult:
    """The issue's body and every comment, each read as a document by the parsers.

    A comment is a source named by its URL, with its author and its creation time (which
    dates the measurements that carry no date of their own). An edited comment has new
    bytes and replaces its own rows; a comment the answers no longer hold is marked gone
    and its rows removed. From the API (sync_issue) or a recorded file (recorded_issue):
    the same objects, read the same way. `cache`: the sync's new ETags, saved with the
    gone comments.
    """
    # Imported here: the document pipeline is not needed by the PR sync.
    from ingest.documents import read_text
    from ingest.save import save_found
    from ingest.text import NotText
    from perfboard.model import DocMeta

    repo, number = parse_issue_url(issue["html_url"])
    documents = [(issue, issue.get("title") or "")]
    documents += [(comment, f"comment on {repo}#{number}") for comment in comments]
    outcomes: dict[str, int] = {}
    seen = set()
    for item, title in documents:
        uri = item["html_url"]
        seen.add(uri)
        meta = DocMeta(
            uri=uri,
            project=project,
            url=uri,
            author=(item.get("user") or {}).get("login", ""),
            created_at=_time(item.get("created_at")),
            title=title,
        )
        try:
            parsed = read_text(item.get("body") or "", kind, meta)
        except NotText:
            outcomes["empty"] = outcomes.get("empty", 0) + 1
            continue
        outcome = save_found(conn, parsed.info, parsed.found, parsed.rows).outcome
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    prefix = f"{issue['html_url']}#issuecomment-"
    stored = conn.execute(
        "SELECT source_id, uri FROM sources WHERE starts_with(uri, ?) AND status <> 'gone'",
        [prefix],
    ).fetchall()
    with db.transaction(conn):
        gone = [(sid, uri) for sid, uri in stored if uri not in seen]
        for source_id, uri in gone:
            _mark_gone(conn, source_id, uri)
        if isinstance(cache, DuckDBCache):
            cache.save()
    return IssueSyncResult(outcomes, len(gone), 0)
