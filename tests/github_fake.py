"""A loopback fake of the GitHub REST API, for the tests of the GitHub client.

It answers real HTTP on 127.0.0.1 so that the client's whole stack (requests, timeouts,
headers, Link parsing, conditional requests) is exercised rather than a mocked transport.
The GET endpoints the PR sync reads are served, with GitHub's shapes and headers, and the
writes perfboard makes (a comment created or edited, an issue, a commit status); anything
else is 404, as GitHub answers an unknown route.

    with FakeGitHub(token="t") as gh:
        gh.add_pull("PaddlePaddle/Paddle", 22486, title="Fuse three fc", additions=120)
        gh.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000000"})
        ...  # point the client at gh.base_url, then look at gh.requests / gh.count(...)

Deliberate GitHub behaviours worth knowing when writing a test:
- the list of PRs omits additions/deletions (and the other detail-only fields); one PR has them;
- `direction` defaults to desc for sort=created and to asc for sort=updated, as on GitHub;
- invalid state/sort/direction values answer 422, as GitHub does for its enums;
- a comment bumps its issue's or PR's updated_at, as on GitHub (an incremental sync sees it);
- /issues/{n} also answers for a PR number (every PR is an issue), with a `pull_request` key;
- a repo nothing was added to is unknown: 404 (use add_repo for an empty one).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
_TIME_FIELDS = ("created_at", "updated_at", "closed_at", "merged_at")
# Fields only the single-PR endpoint returns; the list endpoint leaves them out on GitHub.
_DETAIL_ONLY = frozenset(
    {
        "additions",
        "deletions",
        "changed_files",
        "commits",
        "comments",
        "review_comments",
        "merged",
        "mergeable",
        "mergeable_state",
        "merged_by",
    }
)
_DOCS = "https://docs.github.com/rest"
_JSON = "application/json; charset=utf-8"

_PULLS = re.compile(r"/repos/([^/]+)/([^/]+)/pulls")
_PULL = re.compile(r"/repos/([^/]+)/([^/]+)/pulls/(\d+)")
_ISSUE = re.compile(r"/repos/([^/]+)/([^/]+)/issues/(\d+)")
_COMMENTS = re.compile(r"/repos/([^/]+)/([^/]+)/issues/(\d+)/comments")
_ISSUES = re.compile(r"/repos/([^/]+)/([^/]+)/issues")
_COMMENT = re.compile(r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)")
_STATUSES = re.compile(r"/repos/([^/]+)/([^/]+)/statuses/([^/]+)")
_STATUS_STATES = ("error", "failure", "pending", "success")


@dataclass
class Recorded:
    """One request as the fake received it."""

    method: str
    path: str  # without the query
    query: dict[str, str]  # the first value of each parameter
    headers: dict[str, str]  # lower-case names
    status: int = 0  # 0 while the answer is pending (e.g. during a `delay`)
    body: bytes = b""  # what a POST sent


@dataclass
class _Canned:
    status: int
    headers: dict[str, str]
    body: bytes | None
    delay: float
    times: int
    path_contains: str
    method: str = ""  # only requests of this method ("": any)

    @property
    def passthrough(self) -> bool:
        # fail_next(200, delay=...) means "be slow, then answer normally".
        return self.status == 200 and self.body is None


@dataclass
class _Answer:
    status: int
    headers: dict[str, str]
    body: bytes | None  # None: no body at all (304)


class FakeGitHub:
    """A GitHub REST API on 127.0.0.1:<free port>, in a thread, for tests: real HTTP."""

    def __init__(self, token: str | None = None, per_page_max: int = 100) -> None:
        self.token = token
        self.per_page_max = per_page_max
        # GitHub refuses very deep `page` numbers on big lists; set to imitate it.
        self.deep_page_limit: int | None = None
        self.rate_limit = 5000
        self.rate_remaining = 5000  # settable, to test a client that watches its budget
        self.base_url = ""
        self.requests: list[Recorded] = []
        # Exceptions raised inside the fake itself (answered as 500), so a bug in the fake
        # shows as itself rather than as a puzzling client failure.
        self.errors: list[str] = []
        self._lock = threading.RLock()  # handler threads and the test thread share the state
        self._stopping = threading.Event()
        self._repos: dict[str, str] = {}  # lower-case key -> name as first given
        self._pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self._issues: dict[str, dict[int, dict[str, Any]]] = {}
        self._comments: dict[str, dict[int, list[dict[str, Any]]]] = {}
        # repo -> sha -> the statuses set on it, oldest first
        self._statuses: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self._failures: list[_Canned] = []
        self._ticks = 0
        self._next_comment_id = 1
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        self._server = _Server(self)
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # a quick shutdown keeps the test suite quick
            name=f"FakeGitHub:{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes handlers asleep in a `delay`
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- data ------------------------------------------------------------------------------

    def add_repo(self, repo: str) -> None:
        """Make an empty repo known (lists answer [] rather than 404)."""
        with self._lock:
            self._repo_key(repo)

    def add_pull(self, repo: str, number: int, **fields: Any) -> dict[str, Any]:
        """Store a PR as GitHub shows it; anything not given gets a sensible default.

        Convenience: `user="alice"`, `labels=["perf"]`, `base="main"` and datetimes are
        turned into GitHub's shapes. Given merged_at/closed_at and no state, it is closed.
        """
        with self._lock:
            key = self._repo_key(repo)
            now = self._tick()
            given = _normalize(fields)
            pr: dict[str, Any] = {
                "number": number,
                "title": f"PR {number}",
                "user": {"login": "dev"},
                "state": "open",
                "created_at": now,
                "updated_at": now,
                "closed_at": None,
                "merged_at": None,
                "labels": [],
                "base": {"ref": "develop"},
                "merge_commit_sha": hashlib.sha1(f"{repo}#{number}".encode()).hexdigest(),
                "html_url": f"https://github.com/{repo}/pull/{number}",
                "body": None,  # GitHub sends null for an empty description
                "additions": 0,
                "deletions": 0,
            }
            pr.update(given)
            _settle_state(pr, given, pr["created_at"])
            if "updated_at" not in given:
                # Never before its own creation, closing or merging, as on GitHub.
                stamps = [pr[f] for f in ("created_at", "closed_at", "merged_at") if pr[f]]
                pr["updated_at"] = max(stamps)
            self._pulls.setdefault(key, {})[number] = pr
            return copy.deepcopy(pr)

    def update_pull(self, repo: str, number: int, **fields: Any) -> None:
        """Change a PR's fields and bump its updated_at (KeyError if unknown)."""
        with self._lock:
            pr = self._pulls[self._known_key(repo)][number]
            now = self._tick()
            given = _normalize(fields)
            pr.update(given)
            _settle_state(pr, given, now)
            if "updated_at" not in given:
                stamps = [now] + [given[f] for f in ("closed_at", "merged_at") if given.get(f)]
                pr["updated_at"] = max(stamps)

    def add_issue(self, repo: str, number: int, **fields: Any) -> dict[str, Any]:
        """Store an issue; anything not given gets a sensible default."""
        with self._lock:
            key = self._repo_key(repo)
            now = self._tick()
            issue: dict[str, Any] = {
                "number": number,
                "title": f"Issue {number}",
                "user": {"login": "dev"},
                "state": "open",
                "body": None,
                "created_at": now,
                "updated_at": now,
                "html_url": f"https://github.com/{repo}/issues/{number}",
            }
            issue.update(_normalize(fields))
            self._issues.setdefault(key, {})[number] = issue
            return copy.deepcopy(issue)

    def add_comment(self, repo: str, issue: int, **fields: Any) -> dict[str, Any]:
        """Store a comment on an issue or PR number; ids increase across the whole fake."""
        with self._lock:
            key = self._repo_key(repo)
            now = self._tick()
            comment_id = self._next_comment_id
            self._next_comment_id += 1
            comment: dict[str, Any] = {
                "id": comment_id,
                "user": {"login": "dev"},
                "body": f"Comment {comment_id}",
                "created_at": now,
                "updated_at": now,
                "html_url": f"https://github.com/{repo}/issues/{issue}#issuecomment-{comment_id}",
            }
            comment.update(_normalize(fields))
            self._comments.setdefault(key, {}).setdefault(issue, []).append(comment)
            # On GitHub a new comment bumps its issue's/PR's updated_at.
            for parent in (self._pulls, self._issues):
                if issue in parent.get(key, {}):
                    parent[key][issue]["updated_at"] = now
            return copy.deepcopy(comment)

    def edit_comment(self, repo: str, issue: int, comment_id: int, body: str) -> None:
        """Change a comment's body and bump its updated_at, as an edit on GitHub does."""
        with self._lock:
            for comment in self._comments[self._repo_key(repo)][issue]:
                if comment["id"] == comment_id:
                    comment["body"] = body
                    comment["updated_at"] = self._tick()

    def delete_comment(self, repo: str, issue: int, comment_id: int) -> None:
        with self._lock:
            comments = self._comments[self._repo_key(repo)][issue]
            comments[:] = [c for c in comments if c["id"] != comment_id]

    # -- failures and inspection -----------------------------------------------------------

    def fail_next(
        self,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: str | bytes | None = None,
        delay: float = 0.0,
        times: int = 1,
        path_contains: str = "",
        method: str = "",
    ) -> None:
        """Queue a canned answer for the next request(s) whose path contains path_contains
        (and whose method is `method`, unless it is "": e.g. a POST failed, not the GET of
        the same path before it).

        Queued answers are used in FIFO order before any normal answer (auth included).
        Without a body, a JSON {"message": ...} like GitHub's is sent; a body starting with
        "<" is sent as text/html unless headers say otherwise. `delay` sleeps in the
        handler thread first; `fail_next(200, delay=s)` sleeps then answers normally.
        `times=0` cancels the queued answers with this status (and this path_contains,
        unless it is "": then all of them), so a test can stop a long run of failures.
        """
        if times < 0:
            raise ValueError(f"times must be >= 0, not {times}")
        with self._lock:
            if times == 0:
                self._failures = [
                    f
                    for f in self._failures
                    if f.status != status or (path_contains and f.path_contains != path_contains)
                ]
                return
            raw = body.encode() if isinstance(body, str) else body
            self._failures.append(
                _Canned(status, dict(headers or {}), raw, delay, times, path_contains, method)
            )

    def clear_failures(self) -> None:
        """Drop every queued canned answer."""
        with self._lock:
            self._failures.clear()

    def count(self, path_contains: str = "", status: int | None = None) -> int:
        """How many recorded requests have path_contains in their path (and this status)."""
        with self._lock:
            return sum(
                1
                for r in self.requests
                if path_contains in r.path and (status is None or r.status == status)
            )

    # -- internals: state ------------------------------------------------------------------

    def _tick(self) -> str:
        # A counter clock, not the wall clock: deterministic, and strictly increasing so
        # that sort=updated orders are never ties.
        stamp = _iso(_EPOCH + timedelta(minutes=self._ticks))
        self._ticks += 1
        return stamp

    def _repo_key(self, repo: str) -> str:
        owner, sep, name = repo.partition("/")
        if not (owner and sep and name) or "/" in name:
            raise ValueError(f"repo must be 'owner/name', not {repo!r}")
        key = repo.lower()  # GitHub's owner/name are case-insensitive
        self._repos.setdefault(key, repo)
        return key

    def _known_key(self, repo: str) -> str:
        key = repo.lower()
        if key not in self._repos:
            raise KeyError(f"no repo {repo!r} in the fake")
        return key

    def _take_failure(self, path: str, method: str = "") -> _Canned | None:
        with self._lock:
            for canned in self._failures:
                if canned.path_contains in path and canned.method in ("", method):
                    canned.times -= 1
                    if canned.times == 0:
                        self._failures.remove(canned)
                    return canned
        return None

    # -- internals: HTTP -------------------------------------------------------------------

    def _serve(self, handler: _Handler) -> None:
        """Answer one request: record it, apply a canned failure or route it, write it."""
        method = handler.command
        split = urlsplit(handler.path)
        pairs = parse_qsl(split.query, keep_blank_values=True)
        query: dict[str, str] = {}
        for name, value in pairs:
            query.setdefault(name, value)
        headers = {k.lower(): v for k, v in handler.headers.items()}
        length = int(headers.get("content-length") or 0)
        sent = handler.rfile.read(length) if length else b""  # keeps keep-alive in step
        recorded = Recorded(method, split.path, query, headers, body=sent)
        with self._lock:
            self.requests.append(recorded)
        canned = self._take_failure(split.path, method)
        if canned is not None and canned.delay > 0:
            # Outside the lock, in this handler's own thread: other requests go on meanwhile.
            self._stopping.wait(canned.delay)
        try:
            if canned is not None and not canned.passthrough:
                answer = _canned_answer(canned)
            else:
                if method == "POST":
                    answer = self._post(split.path, headers, sent)
                elif method == "PATCH":
                    answer = self._patch(split.path, headers, sent)
                else:
                    answer = self._answer(method, split.path, pairs, query, headers)
                if canned is not None:
                    answer.headers = _merge(answer.headers, canned.headers)
        except Exception:
            with self._lock:
                self.errors.append(traceback.format_exc())
            answer = _error(500, f"the fake failed: {sys.exc_info()[1]!r}")
        with self._lock:
            if answer.status != 304:  # GitHub does not count a 304 against the limit
                self.rate_remaining = max(0, self.rate_remaining - 1)
            rate = {
                "X-RateLimit-Limit": str(self.rate_limit),
                "X-RateLimit-Remaining": str(self.rate_remaining),
                "X-RateLimit-Reset": str(int(time.time()) + 60),
                "X-RateLimit-Used": str(self.rate_limit - self.rate_remaining),
                "X-RateLimit-Resource": "core",
            }
            # Canned headers (e.g. Remaining: 0) win over the fake's own bookkeeping.
            answer.headers = _merge(rate, answer.headers)
            recorded.status = answer.status
        _write(handler, answer)

    def _answer(
        self,
        method: str,
        path: str,
        pairs: list[tuple[str, str]],
        query: dict[str, str],
        headers: dict[str, str],
    ) -> _Answer:
        if method != "GET":
            return _error(404, "Not Found")
        if not self._authorized(headers.get("authorization", "")):
            return _error(401, "Bad credentials")
        with self._lock:  # serialise a consistent snapshot of the data
            routed = self._route(path, pairs, query)
        if isinstance(routed, _Answer):
            return routed
        payload, link = routed
        body = _json(payload)
        etag = f'W/"{hashlib.sha1(body).hexdigest()}"'
        if _etag_matches(headers.get("if-none-match", ""), etag):
            return _Answer(304, {"ETag": etag}, None)
        out = {"Content-Type": _JSON, "ETag": etag, "Cache-Control": "private, max-age=60"}
        if link:
            out["Link"] = link
        return _Answer(200, out, body)

    def _post(self, path: str, headers: dict[str, str], sent: bytes) -> _Answer:
        """POST /repos/O/N/issues/K/comments: a new comment, as GitHub creates it (201);
        POST /repos/O/N/issues: a new issue (_create_issue)."""
        if not self._authorized(headers.get("authorization", "")):
            return _error(401, "Bad credentials")
        if m := _ISSUES.fullmatch(path):
            return self._create_issue(f"{m.group(1)}/{m.group(2)}", sent)
        if m := _STATUSES.fullmatch(path):
            return self._create_status(f"{m.group(1)}/{m.group(2)}", m.group(3), sent)
        m = _COMMENTS.fullmatch(path)
        if m is None:
            return _error(404, "Not Found")
        repo, number = f"{m.group(1)}/{m.group(2)}", int(m.group(3))
        with self._lock:
            key = self._repo_key(repo)
            if number not in self._issues.get(key, {}) and number not in self._pulls.get(key, {}):
                return _error(404, "Not Found")
        try:
            body = json.loads(sent)["body"]
        except (ValueError, KeyError, TypeError):
            return _error(400, "Problems parsing JSON")
        if not isinstance(body, str) or not body:
            return _invalid("IssueComment", "body")
        if len(body) > 65536:  # GitHub's limit on a comment's body
            return _error(422, "Validation Failed", errors=[{"code": "custom", "field": "body"}])
        comment = self.add_comment(repo, number, body=body, user="perfboard-bot")
        return _Answer(201, {"Content-Type": _JSON}, _json(comment))

    def _patch(self, path: str, headers: dict[str, str], sent: bytes) -> _Answer:
        """PATCH /repos/O/N/issues/comments/ID: a comment's new body, answered 200 with the
        comment as it is now (its updated_at bumped), as GitHub edits one."""
        if not self._authorized(headers.get("authorization", "")):
            return _error(401, "Bad credentials")
        m = _COMMENT.fullmatch(path)
        if m is None:
            return _error(404, "Not Found")
        repo, comment_id = f"{m.group(1)}/{m.group(2)}", int(m.group(3))
        try:
            body = json.loads(sent)["body"]
        except (ValueError, KeyError, TypeError):
            return _error(400, "Problems parsing JSON")
        if not isinstance(body, str) or not body:
            return _invalid("IssueComment", "body")
        if len(body) > 65536:
            return _error(422, "Validation Failed", errors=[{"code": "custom", "field": "body"}])
        with self._lock:
            for issue, comments in self._comments.get(repo.lower(), {}).items():
                for comment in comments:
                    if comment["id"] == comment_id:
                        self.edit_comment(repo, issue, comment_id, body)
                        return _Answer(200, {"Content-Type": _JSON}, _json(comment))
        return _error(404, "Not Found")

    def _create_status(self, repo: str, sha: str, sent: bytes) -> _Answer:
        """POST /repos/O/N/statuses/SHA: a commit status (201). The fake knows no commits,
        so any hexadecimal sha is taken (GitHub answers 422 for one it does not hold)."""
        with self._lock:
            if repo.lower() not in self._repos:
                return _error(404, "Not Found")
        if not re.fullmatch(r"[0-9A-Fa-f]{4,40}", sha):
            return _error(422, f"No commit found for SHA: {sha}")
        try:
            payload = json.loads(sent)
        except ValueError:
            return _error(400, "Problems parsing JSON")
        if not isinstance(payload, dict) or payload.get("state") not in _STATUS_STATES:
            return _invalid("Status", "state")
        with self._lock:
            now = self._tick()
            number = sum(len(v) for by in self._statuses.values() for v in by.values()) + 1
            status = {
                "url": f"{self.base_url}/repos/{repo}/statuses/{sha}",
                "id": number,
                "node_id": f"SC_{number}",
                "state": payload["state"],
                "description": payload.get("description"),
                "target_url": payload.get("target_url"),
                "context": payload.get("context") or "default",
                "created_at": now,
                "updated_at": now,
                "creator": {"login": "perfboard-bot"},
            }
            self._statuses.setdefault(repo.lower(), {}).setdefault(sha.lower(), []).append(status)
        return _Answer(201, {"Content-Type": _JSON}, _json(status))

    def statuses(self, repo: str, sha: str) -> list[dict[str, Any]]:
        """The statuses set on a commit, oldest first."""
        with self._lock:
            return copy.deepcopy(self._statuses.get(repo.lower(), {}).get(sha.lower(), []))

    def comments(self, repo: str, issue: int) -> list[dict[str, Any]]:
        """An issue's or PR's comments as stored, oldest first."""
        with self._lock:
            return copy.deepcopy(self._comments.get(repo.lower(), {}).get(issue, []))

    def _create_issue(self, repo: str, sent: bytes) -> _Answer:
        """POST /repos/O/N/issues: a new open issue, numbered after every issue and PR of
        the repo (they share one sequence on GitHub), answered 201 with the issue."""
        with self._lock:
            if repo.lower() not in self._repos:
                return _error(404, "Not Found")
        try:
            payload = json.loads(sent)
        except ValueError:
            return _error(400, "Problems parsing JSON")
        if not isinstance(payload, dict) or "title" not in payload:
            return _error(
                422,
                "Validation Failed",
                errors=[{"resource": "Issue", "code": "missing_field", "field": "title"}],
            )
        title, body = payload["title"], payload.get("body")
        if not isinstance(title, str) or not title.strip():
            return _invalid("Issue", "title")
        if body is not None and (not isinstance(body, str) or len(body) > 65536):
            return _error(422, "Validation Failed", errors=[{"code": "custom", "field": "body"}])
        with self._lock:
            key = self._repo_key(repo)
            taken = [*self._issues.get(key, {}), *self._pulls.get(key, {})]
            number = max(taken, default=0) + 1
            issue = self.add_issue(
                self._repos[key], number, title=title, body=body, user="perfboard-bot"
            )
        issue.setdefault("comments", 0)
        issue["url"] = f"{self.base_url}/repos/{self._repos[key]}/issues/{number}"
        return _Answer(201, {"Content-Type": _JSON}, _json(issue))

    def _authorized(self, authorization: str) -> bool:
        if self.token is None:
            return True
        scheme, _, credential = authorization.partition(" ")
        return scheme.lower() in ("bearer", "token") and credential.strip() == self.token

    def _route(
        self, path: str, pairs: list[tuple[str, str]], query: dict[str, str]
    ) -> _Answer | tuple[Any, str | None]:
        if m := _PULLS.fullmatch(path):
            key = self._repo_of(m)
            return (
                _error(404, "Not Found")
                if key is None
                else self._list_pulls(key, path, pairs, query)
            )
        if m := _PULL.fullmatch(path):
            key = self._repo_of(m)
            pr = self._pulls.get(key or "", {}).get(int(m[3]))
            if pr is None:
                return _error(404, "Not Found")
            detail = copy.deepcopy(pr)
            detail.setdefault("merged", pr["merged_at"] is not None)
            return detail, None
        if m := _ISSUE.fullmatch(path):
            key = self._repo_of(m) or ""
            number = int(m[3])
            if number in self._issues.get(key, {}):
                return copy.deepcopy(self._issues[key][number]), None
            if number in self._pulls.get(key, {}):
                return _pull_as_issue(self._pulls[key][number]), None
            return _error(404, "Not Found")
        if m := _COMMENTS.fullmatch(path):
            key = self._repo_of(m) or ""
            number = int(m[3])
            comments = self._comments.get(key, {}).get(number)
            known = number in self._issues.get(key, {}) or number in self._pulls.get(key, {})
            if comments is None and not known:
                return _error(404, "Not Found")
            chosen = sorted(comments or [], key=lambda c: c["id"])
            if "since" in query:
                try:
                    since = _iso(datetime.fromisoformat(query["since"]))
                except ValueError:
                    return _invalid("IssueComment", "since")
                chosen = [c for c in chosen if c["updated_at"] >= since]
            return self._paginate(chosen, path, pairs, query)
        return _error(404, "Not Found")

    def _repo_of(self, match: re.Match[str]) -> str | None:
        key = f"{match[1]}/{match[2]}".lower()
        return key if key in self._repos else None

    def _list_pulls(
        self, key: str, path: str, pairs: list[tuple[str, str]], query: dict[str, str]
    ) -> _Answer | tuple[Any, str | None]:
        state = query.get("state", "open")
        if state not in ("open", "closed", "all"):
            return _invalid("PullRequest", "state")
        order = query.get("sort", "created")
        if order not in ("created", "updated"):  # GitHub's popularity/long-running: not here
            return _invalid("PullRequest", "sort")
        # GitHub: desc when sorting by creation, asc otherwise.
        direction = query.get("direction", "desc" if order == "created" else "asc")
        if direction not in ("asc", "desc"):
            return _invalid("PullRequest", "direction")
        pulls = [p for p in self._pulls.get(key, {}).values() if state in ("all", p["state"])]
        if base := query.get("base"):
            pulls = [p for p in pulls if p["base"].get("ref") == base]
        pulls.sort(key=lambda p: (p[f"{order}_at"], p["number"]), reverse=direction == "desc")
        listed = [{k: v for k, v in p.items() if k not in _DETAIL_ONLY} for p in pulls]
        return self._paginate(listed, path, pairs, query)

    def _paginate(
        self,
        items: list[dict[str, Any]],
        path: str,
        pairs: list[tuple[str, str]],
        query: dict[str, str],
    ) -> _Answer | tuple[Any, str | None]:
        per_page = _int(query.get("per_page"), 30)
        per_page = 30 if per_page < 1 else min(per_page, self.per_page_max)
        page = max(_int(query.get("page"), 1), 1)
        if self.deep_page_limit is not None and page > self.deep_page_limit:
            return _error(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": "Search" if "search" in path else "PullRequest",
                        "field": "page",
                        "code": "invalid",
                        "message": "Pagination with the page parameter is not supported for"
                        " large datasets, please use cursor based pagination (before/after)",
                    }
                ],
            )
        last = max(1, -(-len(items) // per_page))
        # A copy: it is serialised outside the lock while a test may change the data.
        chosen = copy.deepcopy(items[(page - 1) * per_page : page * per_page])

        def url(target: int) -> str:
            # Every original parameter kept, in its place; only page replaced (or added).
            kept = [(k, str(target) if k == "page" else v) for k, v in pairs]
            if not any(k == "page" for k, _ in pairs):
                kept.append(("page", str(target)))
            return f"{self.base_url}{path}?{urlencode(kept)}"

        # GitHub's order: prev, next, last, first.
        rels: list[tuple[str, int]] = []
        if page > 1:
            rels.append(("prev", page - 1))
        if page < last:
            rels += [("next", page + 1), ("last", last)]
        if page > 1:
            rels.append(("first", 1))
        link = ", ".join(f'<{url(n)}>; rel="{rel}"' for rel, n in rels) or None
        return chosen, link


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A handler asleep in a `delay` must not hold up __exit__ (server_close joins threads).
    block_on_close = False

    def __init__(self, fake: FakeGitHub) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (read timeout) closes its socket under us: expected.
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive, like GitHub: a client's connection pool is exercised too.
    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com"
    sys_version = ""
    timeout = 60  # an idle kept-alive connection does not hold a thread for ever
    server: _Server

    def do_GET(self) -> None:
        self.server.fake._serve(self)

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the default access log on stderr would drown the test output


# -- helpers -------------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _normalize(fields: dict[str, Any]) -> dict[str, Any]:
    """GitHub's shapes from the short forms tests like to write."""
    out = dict(fields)
    for name in _TIME_FIELDS:
        value = out.get(name)
        if isinstance(value, datetime):
            out[name] = _iso(value)
        elif isinstance(value, str):
            # One canonical form, so that string order is time order in the sorts.
            out[name] = _iso(datetime.fromisoformat(value))
    if isinstance(out.get("user"), str):
        out["user"] = {"login": out["user"]}
    if isinstance(out.get("base"), str):
        out["base"] = {"ref": out["base"]}
    if "labels" in out:
        out["labels"] = [{"name": x} if isinstance(x, str) else x for x in out["labels"]]
    return out


def _settle_state(pr: dict[str, Any], given: dict[str, Any], now: str) -> None:
    """Keep state, closed_at and merged_at consistent, as GitHub does."""
    if "state" not in given and (given.get("merged_at") or given.get("closed_at")):
        pr["state"] = "closed"  # a merged PR is a closed one
    if pr["state"] == "closed" and pr["closed_at"] is None:
        pr["closed_at"] = pr["merged_at"] or now
    if given.get("state") == "open" and "closed_at" not in given:
        pr["closed_at"] = None  # reopened


def _pull_as_issue(pr: dict[str, Any]) -> dict[str, Any]:
    issue = {
        k: copy.deepcopy(pr.get(k))
        for k in (
            "number",
            "title",
            "user",
            "state",
            "labels",
            "body",
            "created_at",
            "updated_at",
            "closed_at",
            "html_url",
        )
    }
    issue["pull_request"] = {"html_url": pr["html_url"], "merged_at": pr["merged_at"]}
    return issue


def _int(text: str | None, default: int) -> int:
    # GitHub ignores a non-numeric per_page/page rather than refusing it.
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def _etag_matches(if_none_match: str, etag: str) -> bool:
    # If-None-Match uses the weak comparison: W/"x" matches "x"; a list or * may be sent.
    tags = [t.strip() for t in if_none_match.split(",") if t.strip()]
    opaque = etag.removeprefix("W/")
    return "*" in tags or any(t.removeprefix("W/") == opaque for t in tags)


def _merge(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """base updated by extra, header names compared case-insensitively."""
    out = {k: v for k, v in base.items() if k.lower() not in {e.lower() for e in extra}}
    out.update(extra)
    return out


def _json(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def _error(status: int, message: str, **extra: Any) -> _Answer:
    payload = {"message": message, **extra, "documentation_url": _DOCS}
    return _Answer(status, {"Content-Type": _JSON}, _json(payload))


def _invalid(resource: str, name: str) -> _Answer:
    return _error(
        422, "Validation Failed", errors=[{"resource": resource, "field": name, "code": "invalid"}]
    )


def _canned_message(status: int, headers: dict[str, str]) -> str:
    lower = {k.lower(): v for k, v in headers.items()}
    if status in (403, 429) and lower.get("x-ratelimit-remaining") == "0":
        return "API rate limit exceeded for user ID 1."
    if status in (403, 429) and "retry-after" in lower:
        return (
            "You have exceeded a secondary rate limit."
            " Please wait a few minutes before you try again."
        )
    known = {
        401: "Bad credentials",
        422: "Validation Failed",
        500: "Server Error",
        502: "Server Error",
    }
    if status in known:
        return known[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _canned_answer(canned: _Canned) -> _Answer:
    if canned.body is None:
        answer = _error(canned.status, _canned_message(canned.status, canned.headers))
    else:
        html = canned.body.lstrip().startswith(b"<")
        kind = "text/html; charset=utf-8" if html else _JSON
        answer = _Answer(canned.status, {"Content-Type": kind}, canned.body)
    answer.headers = _merge(answer.headers, canned.headers)
    return answer


def _write(handler: _Handler, answer: _Answer) -> None:
    try:
        handler.send_response(answer.status)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        if answer.body is not None:
            handler.send_header("Content-Length", str(len(answer.body)))
        handler.end_headers()
        if answer.body is not None and handler.command != "HEAD":
            handler.wfile.write(answer.body)
        if handler.command != "GET":
            handler.close_connection = True  # a chunked body we did not read must not linger
    except (ConnectionError, TimeoutError):
        # The client gave up first (its read timeout during a `delay`): nobody to tell.
        handler.close_connection = True
