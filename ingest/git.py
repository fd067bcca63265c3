"""Commit history from a local clone: commits, the PR of each, releases, result files.

    python -m ingest git --repo PATH [--name OWNER/NAME] [--rev REF] [--since DATE]
    python -m ingest git-results --repo PATH --glob 'results/**/*.jsonl'

GitPython drives git here and only here: it starts git processes and keeps caches that
grow in a long-running process, so the dashboard never imports this module. User text
never reaches git as an option: refs are resolved to hashes first, dates are parsed and
printed again by this code, and path globs go after "--".

The walk reads the whole history in one `git log` process (a commit object at a time
through GitPython would take minutes on a large repository). A later walk reads only
what is new since the commits the last one started from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import git
import pyarrow as pa

from perfboard import db
from perfboard.links import github_url

# Final releases only by default ("v1.7.0", "2.0"): a pre-release is not what the
# question "which release has this fix" means. --release-pattern widens it.
RELEASE_PATTERN = r"^v?\d+(\.\d+)+$"
_HEX = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$")  # a branch, tag or hash; never "-x"
_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_REMOTE = re.compile(r"[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
# One record per commit (-z ends each with NUL), fields split by the unit separator.
_LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%at%x1f%ct%x1f%B"
_FIELDS = 7


class GitError(Exception):
    """The clone cannot be walked as asked; the message says why and what to do."""


# -- pure: what a commit message says about its PR -------------------------------------

_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from \S+")
_SQUASH_PR = re.compile(r"\(#(\d+)\)\s*$")
_CHERRY = re.compile(r"cherry[- _]?pick", re.IGNORECASE)
_HASH_NUMBER = re.compile(r"#(\d+)\b")
_BARE_NUMBER = re.compile(r"(?<![\w.])(\d{3,7})(?![\w.])")
_PICKED_SHA = re.compile(r"\(cherry picked from commit ([0-9a-f]{7,40})\)")


@dataclass(frozen=True, slots=True)
class PrRef:
    number: int | None = None
    via: str | None = None  # "squash" or "merge"
    picked_from: tuple[int, ...] = ()  # a cherry-pick's original PRs
    picked_sha: str | None = None  # "(cherry picked from commit X)" of git cherry-pick -x


def pr_of_message(message: str) -> PrRef:
    """The PR a commit message names, and what a cherry-pick says it copies.

    "Merge pull request #123 from o/branch" is a merge of PR 123 (its title is the body's
    first line); a summary ending in "(#123)" is PR 123 squash-merged. A title that says
    cherry-pick names its originals: "(#19933)", or bare numbers ("[Cherry-pick]: 23974;
    23723") as PaddlePaddle writes them.
    """
    lines = message.strip().splitlines()
    summary = lines[0].strip() if lines else ""
    number = via = None
    title = summary
    if merge := _MERGE_PR.match(summary):
        number, via = int(merge.group(1)), "merge"
        title = next((line.strip() for line in lines[1:] if line.strip()), "")
    elif squash := _SQUASH_PR.search(summary):
        number, via = int(squash.group(1)), "squash"
        title = summary[: squash.start()]
    picked: tuple[int, ...] = ()
    if _CHERRY.search(title):
        found = _HASH_NUMBER.findall(title) or _BARE_NUMBER.findall(title)
        picked = tuple(dict.fromkeys(int(n) for n in found if int(n) != number))
    sha = _PICKED_SHA.search(message)
    return PrRef(number, via, picked, sha.group(1) if sha else None)


# -- pure: reading git log, following parents ------------------------------------------


@dataclass(slots=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    author_email: str
    authored_at: datetime
    committed_at: datetime
    message: str

    @property
    def summary(self) -> str:
        return self.message.split("\n", 1)[0].strip()


def _utc(epoch: str) -> datetime:
    return datetime.fromtimestamp(int(epoch), UTC).replace(tzinfo=None)


def parse_log_record(record: str) -> Commit:
    """One NUL-ended record of `git log -z --format=_LOG_FORMAT`."""
    parts = record.lstrip("\n").split("\x1f", _FIELDS - 1)
    if len(parts) != _FIELDS or not _HEX.match(parts[0]):
        raise GitError(f"git log gave a record this code cannot read: {record[:80]!r}")
    sha, parents, author, email, authored, committed, message = parts
    return Commit(
        sha, tuple(parents.split()), author, email, _utc(authored), _utc(committed), message
    )


def mainline_and_branches(
    parents: dict[str, tuple[str, ...]], head: str
) -> tuple[set[str], dict[str, str]]:
    """The first-parent chain from `head`, and for every other commit the mainline merge
    that brought it in (the oldest one that reaches it). Commits outside `parents` (an
    earlier walk's) end the search: each commit is visited once."""
    mainline: list[str] = []
    sha: str | None = head
    while sha is not None and sha in parents:
        mainline.append(sha)
        sha = parents[sha][0] if parents[sha] else None
    on_mainline = set(mainline)
    brought_by: dict[str, str] = {}
    for merge in reversed(mainline):  # oldest first
        stack = list(parents[merge][1:])
        while stack:
            sha = stack.pop()
            if sha in on_mainline or sha in brought_by or sha not in parents:
                continue
            brought_by[sha] = merge
            stack.extend(parents[sha])
    return on_mainline, brought_by


def first_releases(
    parents: dict[str, tuple[str, ...]], releases: list[tuple[str, str]]
) -> dict[str, str]:
    """sha -> the first release (in the order given, oldest first) whose tag reaches it.

    A commit an earlier release reaches has all its ancestors reached too, so each search
    stops at what is already claimed and the whole history is visited once.
    """
    release_of: dict[str, str] = {}
    for tag, tip in releases:
        stack = [tip]
        while stack:
            sha = stack.pop()
            if sha in release_of or sha not in parents:
                continue
            release_of[sha] = tag
            stack.extend(parents[sha])
    return release_of


# -- the clone --------------------------------------------------------------------------


def open_repo(path: Path) -> git.Repo:
    """The repository at `path`, or a GitError that says what is wrong with it."""
    if not path.exists():
        raise GitError(f"{path}: no such folder")
    if not path.is_dir():
        raise GitError(f"{path}: not a folder (give the clone's folder)")
    try:
        repo = git.Repo(path)
    except git.InvalidGitRepositoryError:
        raise GitError(f"{path} is not a git repository (no .git in it)") from None
    except git.NoSuchPathError:
        raise GitError(f"{path}: no such folder") from None
    except git.GitCommandNotFound:
        raise GitError("git is not installed (GitPython needs the git command)") from None
    return repo


def repo_name(repo: git.Repo, given: str | None = None) -> str:
    """OWNER/NAME: as given, else from the origin remote's URL, else the folder's name."""
    if given:
        if not _NAME.match(given):
            raise GitError(f"--name {given!r} is not OWNER/NAME")
        return given
    try:
        url = repo.remotes.origin.url
    except (AttributeError, IndexError, ValueError):
        url = ""
    found = _REMOTE.search(url) if url else None
    if found:
        return found.group(1)
    folder = Path(repo.working_tree_dir or repo.git_dir).name
    return f"local/{folder}" if _NAME.match(f"local/{folder}") else "local/repository"


def resolve_rev(repo: git.Repo, rev: str) -> str:
    """The full hash of a branch, tag or hash; the user's text never reaches git as an option."""
    if not _REF.match(rev):
        raise GitError(f"{rev!r} is not a branch, tag or commit name")
    try:
        sha = repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except git.GitCommandError:
        sha = ""
    if not _HEX.match(sha.strip()):
        if rev == "HEAD":
            raise GitError(f"{repo.working_tree_dir or repo.git_dir} has no commits yet")
        raise GitError(f"{rev!r} is not a commit of {repo.working_tree_dir or repo.git_dir}")
    return sha.strip()


def shallow_boundary(repo: git.Repo) -> list[str]:
    """The commits whose parents a shallow clone lacks ([] for a full clone)."""
    shallow = Path(repo.git_dir) / "shallow"
    if not shallow.exists():
        return []
    return [line.strip() for line in shallow.read_text().splitlines() if line.strip()]


def has_commit(repo: git.Repo, sha: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{sha}^{{commit}}")
    except git.GitCommandError:
        return False
    return True


def is_ancestor(repo: git.Repo, older: str, newer: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", older, newer)
    except git.GitCommandError:
        return False
    return True


@dataclass(slots=True)
class Release:
    tag: str
    sha: str
    released_at: datetime


def read_releases(repo: git.Repo, pattern: str = RELEASE_PATTERN) -> list[Release]:
    """Tags whose name matches `pattern` and that point to a commit, oldest first."""
    matcher = re.compile(pattern)
    # tag name, its object, the commit an annotated tag points to, tagger/commit dates
    fmt = "%09".join(
        (
            "%(refname:strip=2)",
            "%(objecttype)",
            "%(objectname)",
            "%(*objecttype)",
            "%(*objectname)",
            "%(taggerdate:unix)",
            "%(committerdate:unix)",
            "%(*committerdate:unix)",
        )
    )
    out = repo.git.for_each_ref(f"--format={fmt}", "refs/tags")
    releases = []
    for line in out.splitlines():
        tag, kind, obj, peeled_kind, peeled, tagged, committed, peeled_committed = line.split("\t")
        if not matcher.search(tag):
            continue
        if kind == "commit":
            releases.append(Release(tag, obj, _utc(committed)))
        elif kind == "tag" and peeled_kind == "commit":
            releases.append(Release(tag, peeled, _utc(tagged or peeled_committed)))
    releases.sort(key=lambda r: (r.released_at, r.tag))
    return releases


def read_log(
    repo: git.Repo, revs: list[str], stop_at: list[str], since: datetime | None
) -> Iterator[Commit]:
    """Every commit reachable from `revs` and not from `stop_at` (all full hashes), streamed
    from one git process."""
    args = ["-z", f"--format={_LOG_FORMAT}", "--encoding=UTF-8"]
    if since is not None:
        args.append(f"--since={since.isoformat()}")
    args += [*revs, "--not", *stop_at, "--"] if stop_at else [*revs, "--"]
    process = repo.git.log(*args, as_process=True)
    stream = process.proc.stdout
    pending = b""
    try:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            records = (pending + chunk).split(b"\0")
            pending = records.pop()
            for record in records:
                yield parse_log_record(record.decode("utf-8", "replace"))
        if pending.strip():
            yield parse_log_record(pending.decode("utf-8", "replace"))
    finally:
        stream.close()
        process.wait()


# -- the walk, stored ---------------------------------------------------------------------


@dataclass(slots=True)
class WalkResult:
    repo: str
    head: str
    commits: int  # new commits stored
    with_pr: int  # of those, how many are known to belong to a PR
    releases: int
    notes: list[str] = field(default_factory=list)  # warnings for the user (shallow clone)


_COMMIT_COLUMNS = {
    "repo": pa.string(),
    "sha": pa.string(),
    "parents": pa.list_(pa.string()),
    "author": pa.string(),
    "author_email": pa.string(),
    "authored_at": pa.timestamp("us"),
    "committed_at": pa.timestamp("us"),
    "summary": pa.string(),
    "message": pa.string(),
    "mainline": pa.bool_(),
    "pr_number": pa.int64(),
    "pr_via": pa.string(),
    "picked_from": pa.list_(pa.int64()),
    "picked_sha": pa.string(),
}


def commit_rows(name: str, commits: list[Commit], head: str) -> pa.Table:
    """The commits table's rows for newly walked commits, each with its PR."""
    parents = {c.sha: c.parents for c in commits}
    on_mainline, brought_by = mainline_and_branches(parents, head)
    refs = {c.sha: pr_of_message(c.message) for c in commits}
    columns: dict[str, list[object]] = {name: [] for name in _COMMIT_COLUMNS}
    for c in commits:
        ref = refs[c.sha]
        number, via = ref.number, ref.via
        merge = brought_by.get(c.sha)
        if number is None and merge is not None and refs[merge].number is not None:
            number, via = refs[merge].number, "branch"
        for key, value in (
            ("repo", name),
            ("sha", c.sha),
            ("parents", list(c.parents)),
            ("author", c.author),
            ("author_email", c.author_email),
            ("authored_at", c.authored_at),
            ("committed_at", c.committed_at),
            ("summary", c.summary),
            ("message", c.message.rstrip("\n")),
            ("mainline", c.sha in on_mainline),
            ("pr_number", number),
            ("pr_via", via),
            ("picked_from", list(ref.picked_from) or None),
            ("picked_sha", ref.picked_sha),
        ):
            columns[key].append(value)
    return pa.table(columns, schema=pa.schema(list(_COMMIT_COLUMNS.items())))


def walk(
    conn: duckdb.DuckDBPyConnection,
    path: Path,
    name: str | None = None,
    rev: str = "HEAD",
    since: datetime | None = None,
    rewrite: bool = False,
    release_pattern: str = RELEASE_PATTERN,
) -> WalkResult:
    """Read the clone's history since the last walk and store it in one transaction."""
    repo = open_repo(path)
    try:
        name = repo_name(repo, name)
        head = resolve_rev(repo, rev)
        boundary = shallow_boundary(repo)
        releases = read_releases(repo, release_pattern)
        last = conn.execute(
            "SELECT head, tips, shallow, walked_at FROM git_walks WHERE repo = ?", [name]
        ).fetchone()
        stop_at: list[str] = []
        if last is not None and not rewrite and not (last[2] and not boundary):
            # A clone no longer shallow has older history to read: walk it all again.
            if not is_ancestor(repo, last[0], head):
                raise GitError(
                    f"{name}: the last walk started at {last[0][:12]} ({last[3]:%Y-%m-%d %H:%M}"
                    f" UTC), which is not in the history of {rev} any more: the history was"
                    " rewritten (force-push, rebase) or another branch is asked for. Run again"
                    " with --rewrite to replace the stored commits of this repository."
                )
            stop_at = [sha for sha in last[1] if _HEX.match(sha) and has_commit(repo, sha)]
        revs = list(dict.fromkeys([head, *(r.sha for r in releases)]))
        commits = list(read_log(repo, revs, stop_at, since))
        notes = [_shallow_note(repo, path, boundary)] if boundary else []
    except git.GitCommandError as error:
        raise GitError(f"git failed in {path}: {error.stderr.strip() or error}") from None
    finally:
        repo.close()  # GitPython's cat-file processes, not left to the garbage collector
    table = commit_rows(name, commits, head)
    _store(conn, name, path, head, revs, bool(boundary), table, releases, rewrite)
    with_pr = sum(1 for n in table.column("pr_number").to_pylist() if n is not None)
    return WalkResult(name, head, len(commits), with_pr, len(releases), notes)


def _shallow_note(repo: git.Repo, path: Path, boundary: list[str]) -> str:
    oldest = min(boundary, key=lambda sha: repo.commit(sha).committed_date)
    when = datetime.fromtimestamp(repo.commit(oldest).committed_date, UTC)
    return (
        f"{path} is a shallow clone: the history before {len(boundary)} commit(s) is missing"
        f" (the oldest one kept is {oldest[:12]}, {when:%Y-%m-%d}). Older commits, their PRs"
        " and the releases that contain them are not known; `git fetch --unshallow` in the"
        " clone fetches them, and the next walk reads them."
    )


def _store(
    conn: duckdb.DuckDBPyConnection,
    name: str,
    path: Path,
    head: str,
    tips: list[str],
    shallow: bool,
    table: pa.Table,
    releases: list[Release],
    rewrite: bool,
) -> None:
    with db.transaction(conn) as changes:
        changes.touch("commits", "releases", "git_walks")
        if rewrite:
            conn.execute("DELETE FROM commits WHERE repo = ?", [name])
        _walked = table  # read by its name (perfboard.db._reading_arrow_by_name)
        conn.execute(
            "INSERT INTO commits BY NAME SELECT * FROM _walked w"
            " WHERE NOT EXISTS (SELECT 1 FROM commits c WHERE c.repo = w.repo AND c.sha = w.sha)"
        )
        conn.execute("DELETE FROM releases WHERE repo = ?", [name])
        if releases:  # DuckDB's executemany refuses an empty list: a repo with no tag yet
            conn.executemany(
                "INSERT INTO releases (repo, tag, sha, released_at) VALUES (?, ?, ?, ?)",
                [(name, r.tag, r.sha, r.released_at) for r in releases],
            )
        stored = _stored_parents(conn, name)
        _update_mainline(conn, name, head, stored)
        _update_first_releases(conn, name, releases, stored)
        now = datetime.now(UTC).replace(tzinfo=None)
        conn.execute("DELETE FROM git_walks WHERE repo = ?", [name])  # no upsert on DuckLake
        conn.execute(
            "INSERT INTO git_walks (repo, path, head, tips, shallow, walked_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [name, str(path.resolve()), head, tips, shallow, now],
        )


def _stored_parents(conn: duckdb.DuckDBPyConnection, name: str) -> dict[str, tuple[str, ...]]:
    stored = conn.sql(
        "SELECT sha, parents FROM commits WHERE repo = ?", params=[name]
    ).to_arrow_table()
    return dict(
        zip(
            stored.column("sha").to_pylist(),
            map(tuple, stored.column("parents").to_pylist()),
            strict=True,
        )
    )


def _update_mainline(
    conn: duckdb.DuckDBPyConnection, name: str, head: str, parents: dict[str, tuple[str, ...]]
) -> None:
    """Every stored commit's mainline flag and branch PR, from the whole stored history and
    this walk's head. A walk reads the release tags with its head, so a tag ahead of an
    older head brings in commits whose place (on the mainline, or on a branch a later
    merge brings in) only a later head settles; commit_rows saw only the new commits."""
    on_mainline, brought_by = mainline_and_branches(parents, head)
    own = conn.sql(
        "SELECT sha, pr_number FROM commits WHERE repo = ? AND pr_via IS DISTINCT FROM 'branch'"
        " AND pr_number IS NOT NULL",
        params=[name],
    ).fetchall()
    pr_of = dict(own)
    inherited = {
        sha: pr_of[merge]
        for sha, merge in brought_by.items()
        if merge in pr_of and sha not in pr_of
    }
    settled = pa.table(
        {
            "sha": list(parents),
            "mainline": [sha in on_mainline for sha in parents],
            "branch_pr": pa.array([inherited.get(sha) for sha in parents], pa.int64()),
        }
    )
    _settled = settled  # read by its name (perfboard.db._reading_arrow_by_name)
    conn.execute(
        "UPDATE commits SET mainline = s.mainline,"
        " pr_number = CASE WHEN commits.pr_via IS DISTINCT FROM 'branch'"
        "  AND commits.pr_number IS NOT NULL THEN commits.pr_number ELSE s.branch_pr END,"
        " pr_via = CASE WHEN commits.pr_via IS DISTINCT FROM 'branch'"
        "  AND commits.pr_number IS NOT NULL THEN commits.pr_via"
        "  WHEN s.branch_pr IS NOT NULL THEN 'branch' END"
        " FROM _settled s WHERE commits.repo = $repo AND commits.sha = s.sha"
        " AND (commits.mainline IS DISTINCT FROM s.mainline"
        "  OR (commits.pr_via = 'branch' OR commits.pr_number IS NULL)"
        "  AND commits.pr_number IS DISTINCT FROM s.branch_pr)",
        {"repo": name},
    )


def _update_first_releases(
    conn: duckdb.DuckDBPyConnection,
    name: str,
    releases: list[Release],
    parents: dict[str, tuple[str, ...]],
) -> None:
    """Every stored commit's first release, from the whole stored history: a new tag can
    contain commits an earlier walk stored."""
    release_of = first_releases(parents, [(r.tag, r.sha) for r in releases])
    found = pa.table(
        {"sha": list(release_of), "tag": list(release_of.values())},
        schema=pa.schema([("sha", pa.string()), ("tag", pa.string())]),
    )
    _first_releases = found  # read by its name (perfboard.db._reading_arrow_by_name)
    conn.execute(
        "UPDATE commits SET first_release = f.tag FROM ("
        "  SELECT c.sha, r.tag FROM commits c LEFT JOIN _first_releases r USING (sha)"
        "  WHERE c.repo = $repo) f"
        " WHERE commits.repo = $repo AND commits.sha = f.sha"
        " AND commits.first_release IS DISTINCT FROM f.tag",
        {"repo": name},
    )


# -- result files committed to a repository ---------------------------------------------


@dataclass(slots=True)
class ResultFile:
    repo: str  # OWNER/NAME
    path: str  # inside the repository
    sha: str  # the last commit that added or changed it
    committed_at: datetime
    data: bytes
    url: str  # https link to that revision of the file ("" when the remote is not GitHub)

    @property
    def uri(self) -> str:
        """The source's name: one per file, so a new revision replaces what the last gave."""
        return f"{self.repo}:{self.path}"


def result_files(
    path: Path, glob: str, rev: str = "HEAD", name: str | None = None
) -> Iterator[ResultFile]:
    """Each file matching `glob` that the history of `rev` ever held, at the last commit
    that added or changed it (a file deleted since keeps its last content): a results
    repository is a store of record, and its files are read as of their last revision."""
    repo = open_repo(path)
    try:
        name = repo_name(repo, name)
        head = resolve_rev(repo, rev)
        remote = _remote_is_github(repo)
        # --no-renames: a renamed file is a new path with its content (status A).
        out = repo.git.execute(
            [
                "git",
                "-c",
                "core.quotePath=false",
                "log",
                "--format=%x1e%H %ct",
                "--name-only",
                "--diff-filter=AM",
                "--no-renames",
                head,
                "--",
                f":(glob){glob}",
            ]
        )
        latest: dict[str, tuple[str, datetime]] = {}
        for record in out.split("\x1e")[1:]:
            header, *names = record.strip("\n").split("\n")
            sha, epoch = header.split(" ")
            for file in filter(None, names):
                latest.setdefault(file, (sha, _utc(epoch)))  # newest first: first seen wins
        for file, (sha, when) in sorted(latest.items()):
            data = repo.git.cat_file("blob", f"{sha}:{file}", stdout_as_string=False)
            url = f"{github_url()}/{name}/blob/{sha}/{file}" if remote else ""
            yield ResultFile(name, file, sha, when, data, url)
    except git.GitCommandError as error:
        raise GitError(f"git failed in {path}: {error.stderr.strip() or error}") from None
    finally:
        repo.close()


def _remote_is_github(repo: git.Repo) -> bool:
    try:
        url = repo.remotes.origin.url
    except (AttributeError, IndexError, ValueError):
        return False
    host = github_url().split("://", 1)[1]
    return f"@{host}:" in url or f"://{host}/" in url
