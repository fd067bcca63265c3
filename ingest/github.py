"""GitHub as a source: fetch pull requests, issues and their comments through the client
(perfboard.github_api), and save them: PR rows into pull_requests, and every body and
comment as a document through the one pipeline (ingest.pipeline), in the fetch_* /
save_* shape of github-to-sqlite.

Recorded API answers (JSON files, e.g. for the demo or an offline machine) are saved
through the same rows as a sync: recorded_pull_rows and recorded_issue check their shape.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pyarrow as pa

from ingest import pipeline
from perfboard import db
from perfboard.github_api import (
    Cache,
    DuckDBCache,
    GitHubClient,
    GitHubError,
    NotFound,
    parse_issue_url,
)
from perfboard.model import DocMeta


class RecordError(ValueError):
    """A recorded API answer that does not hold what it should; the message says what."""


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
    with db.transaction(conn) as changes:
        changes.touch("pull_requests")
        if rows:
            _synced_pulls = table  # read by its name (perfboard.db._reading_arrow_by_name)
            conn.execute(_UPSERT, [datetime.now(UTC).replace(tzinfo=None)])
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
    """Each PR's description read as a document through the pipeline, as an issue's
    comment is: a source named by the PR's page, with its author, title and creation time.

    Returns how many descriptions were read and what became of those kept (pipeline's
    rules: one that claims nothing is kept only if it claimed something before). Each is stored
    in its own transaction, all of them before store_pulls commits the PRs and their
    ETags: those tell the next sync what it need not fetch again (the watermark, a 304),
    so a sync killed between the two must leave the PRs unstored, or the descriptions it
    had not read yet would never be read.
    """
    read = 0
    outcomes: dict[str, int] = {}
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
        )
        outcome = pipeline.ingest(conn, _talk(row["body"], meta)).outcome
        read += outcome not in ("empty", "emptied", "failed")
        if outcome not in NOT_KEPT:
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return read, outcomes


# What the pipeline does not store of talk that holds nothing (see pipeline's rules).
NOT_KEPT = ("empty", "unrecognised")


def _talk(body: str | None, meta: DocMeta, kind: str = "auto") -> pipeline.Document:
    """A body or a comment from GitHub, as a document of the conversation."""
    return pipeline.Document(meta, kind, text=body or "", conversation=True)


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
    try:
        held_repo, held_number = parse_issue_url(str(issue.get("html_url", "")))
    except GitHubError:
        held_repo, held_number = "", 0
    if (held_repo.lower(), held_number) != (repo.lower(), number):
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


@dataclass(slots=True)
class IssueSyncResult:
    outcomes: dict[str, int]  # added / replaced / unchanged / failed ... per document
    gone: int  # comments stored before that GitHub no longer has
    requests: int


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
    """The issue's body and every comment, each a document through the pipeline.

    A comment is a source named by its URL, with its author and its creation time (which
    dates the measurements that carry no date of their own). An edited comment has new
    bytes and replaces its own rows; an emptied one loses them; a comment the answers no
    longer hold is forgotten (its rows go, its source is marked gone). From the API
    (sync_issue) or a recorded file (recorded_issue): the same objects, read the same
    way. `cache`: the sync's new ETags, saved after the documents.
    """
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
        outcome = pipeline.ingest(conn, _talk(item.get("body"), meta, kind)).outcome
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    gone = pipeline.forget_missing(conn, f"{issue['html_url']}#issuecomment-", seen)
    if isinstance(cache, DuckDBCache):
        with db.transaction(conn) as changes:
            changes.touch("http_cache")
            cache.save()
    return IssueSyncResult(outcomes, gone, 0)
