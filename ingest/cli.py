"""``python -m ingest``: read benchmark documents into the store.

    python -m ingest auto PATH...            every format, files or folders
    python -m ingest logs|tables|profiles|opbench|passes|analysis PATH...
    python -m ingest results PATH...         perfboard result files (JSONL / CSV)
    python -m ingest auto PATH --dry-run     print what would be stored, touch nothing
    python -m ingest pulls FILE.csv            known facts about PRs (title, author, state)
    python -m ingest github-prs --repo O/N --referenced|--all [--since D] [--api-url URL]
    python -m ingest github-prs --repo O/N --load FILE.json    recorded API answers, no HTTP
    python -m ingest github-issue https://github.com/O/N/issues/K [--project P] [--load F]
    python -m ingest git --repo PATH [--name O/N] [--rev REF] [--since D] [--rewrite]
    python -m ingest git-results --repo PATH --glob 'results/**/*.jsonl'
    python -m ingest export --format jsonl|csv [--out FILE]
    python -m ingest migrate                   bring an older store up to this schema
    python -m ingest compact [--keep-days 7]   a lake's weekly upkeep: merge small files

Every document goes in through ingest.pipeline, whatever its source. One error boundary
(perfboard.cli.run): every expected failure becomes a message and an exit status (0 ok,
1 some document failed or held nothing perfboard reads, 2 the command could not run); a
document that cannot be read fails alone and the others are still ingested.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import duckdb
import pyarrow as pa

from ingest import pipeline
from ingest.documents import worker_pool
from ingest.registry import KINDS, RESULTS_KIND
from ingest.save import SaveResult
from perfboard import db, lake
from perfboard.cli import UsageError, first_error, run, store_location, store_options
from perfboard.model import DocMeta

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from tqdm import tqdm

    from ingest import github
    from perfboard.github_api import GitHubClient

T = TypeVar("T")
MANIFEST = "perfboard-manifest.csv"
SKIP_SUFFIXES = {".duckdb", ".wal", ".png", ".jpg", ".jpeg", ".gif", ".zip", ".gz", ".pdf"}
SHOW_PROBLEMS = 5  # per document on the terminal; all of them are stored
NOT_A_FAILURE = ("added", "replaced", "unchanged", "duplicate", "emptied", "empty", "unrecognised")


@dataclass
class Summary:
    documents: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    added: int = 0
    replaced: int = 0
    replaced_previous: int = 0
    unchanged: int = 0
    problems: int = 0
    unrecognised: list[str] = field(default_factory=list)

    def count(self, result: SaveResult) -> None:
        self.documents += 1
        self.outcomes[result.outcome] = self.outcomes.get(result.outcome, 0) + 1
        self.problems += result.problems
        if result.outcome == "added":
            self.added += result.measurements
        elif result.outcome == "replaced":
            self.replaced += result.measurements
            self.replaced_previous += result.previous
        elif result.outcome == "unchanged":
            self.unchanged += result.previous
        elif result.outcome == "unrecognised":
            self.unrecognised.append(result.uri)

    @property
    def failed(self) -> int:
        """Documents that failed; and, when every document the command was given held
        nothing perfboard reads, those: a CI job that ingests its benchmark's output then
        learns from the exit status that nothing was stored. (Prose beside results, in a
        folder or a glob, is said on the terminal and on Sources, and fails nothing.)"""
        failed = sum(n for name, n in self.outcomes.items() if name not in NOT_A_FAILURE)
        return failed if len(self.unrecognised) < self.documents else self.documents

    def render(self, seconds: float) -> str:
        docs = ", ".join(f"{n} {name}" for name, n in sorted(self.outcomes.items()))
        line = (
            f"{self.documents} documents read ({docs or 'none'}) in {seconds:.2f} s; "
            f"measurements: {self.added} added, {self.replaced} replaced "
            f"(were {self.replaced_previous}), {self.unchanged} unchanged; "
            f"{self.problems} problems recorded"
        )
        if self.unrecognised:
            shown = ", ".join(self.unrecognised[:SHOW_PROBLEMS])
            more = len(self.unrecognised) - SHOW_PROBLEMS
            line += (
                f"\n{len(self.unrecognised)} documents held no format perfboard knows"
                f" (stored as unrecognised, see Sources): {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        return line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ingest", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="KIND")
    store = store_options()
    documents = store_options("no progress bar, no problems")
    for kind in (*KINDS, RESULTS_KIND):
        p = sub.add_parser(kind, parents=[documents], help=f"ingest documents as {kind}")
        p.add_argument("paths", nargs="+", type=Path, metavar="PATH")
        p.add_argument("--dry-run", action="store_true", help="print records as JSON lines")
        p.add_argument("--project", default="", help="project of these documents")
        p.add_argument("--benchmark", default="", help="model, when the text does not say")
        p.add_argument("--date", help="document date (YYYY-MM-DD): gives glog lines a year")
        p.add_argument("--url", default="", help="https link to the document")
        p.add_argument(
            "--no-detect",
            action="store_true",
            help="skip change detection on the series this ingest touched"
            " (python -m perfboard detect runs it later)",
        )
        p.set_defaults(run=run_ingest, kind=kind)
    p = sub.add_parser("pulls", parents=[store], help="load known facts about PRs from a CSV file")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE.csv")
    p.set_defaults(run=run_pulls)
    p = sub.add_parser(
        "github-prs",
        parents=[store],
        help="sync pull requests from GitHub",
        description="Sync pull requests from GitHub, or load recorded API answers (--load)."
        " Each PR's description is read by the parsers: the effects it claims are set"
        " beside what was measured. The token comes from GITHUB_TOKEN, else from Streamlit's"
        " secrets file (.streamlit/secrets.toml here, then ~/.streamlit/secrets.toml):"
        " GITHUB_TOKEN at its top level or token in its [github] table.",
    )
    p.add_argument("--repo", required=True, metavar="OWNER/NAME")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--referenced", action="store_true", help="the PRs the data names")
    mode.add_argument("--all", action="store_true", help="every PR, since the last sync")
    mode.add_argument(
        "--load",
        action="append",
        type=Path,
        metavar="FILE.json",
        help="recorded API JSON (a /pulls page, PR objects, or an array of pages); no HTTP."
        " May be given again",
    )
    p.add_argument("--since", help="with --all: stop at PRs last updated before YYYY-MM-DD")
    _api_url_option(p)
    p.set_defaults(run=run_github_prs)
    p = sub.add_parser(
        "github-issue", parents=[store], help="an issue's body and comments, read as documents"
    )
    p.add_argument("url", metavar="https://github.com/OWNER/REPO/issues/N")
    p.add_argument("--as", dest="read_as", choices=tuple(KINDS), default="auto")
    p.add_argument("--project", default="", help="project of the measurements in it")
    p.add_argument(
        "--load",
        type=Path,
        metavar="FILE.json",
        help='recorded API answers {"issue": {...}, "comments": [...]}, read instead of'
        " asking GitHub",
    )
    _api_url_option(p)
    p.set_defaults(run=run_github_issue)
    p = sub.add_parser(
        "git", parents=[store], help="a local clone's commits, their PRs and release tags"
    )
    p.add_argument("--repo", required=True, type=Path, metavar="PATH", help="the clone")
    p.add_argument("--name", help="OWNER/NAME (default: from the origin remote)")
    p.add_argument("--rev", default="HEAD", help="branch, tag or commit to walk from")
    p.add_argument("--since", help="only commits made since YYYY-MM-DD")
    p.add_argument("--rewrite", action="store_true", help="history was rewritten: walk anew")
    p.add_argument(
        "--release-pattern",
        help="tags that are releases, a regular expression (default: final releases such as"
        " v1.7.0 or 2.0, not v2.0.0-rc0)",
    )
    p.set_defaults(run=run_git)
    p = sub.add_parser(
        "git-results", parents=[store], help="result files committed to a git repository"
    )
    p.add_argument("--repo", required=True, type=Path, metavar="PATH", help="the clone")
    p.add_argument("--glob", required=True, help="files to read, e.g. 'results/**/*.jsonl'")
    p.add_argument("--as", dest="read_as", choices=(*KINDS, RESULTS_KIND), default="auto")
    p.add_argument("--name", help="OWNER/NAME (default: from the origin remote)")
    p.add_argument("--rev", default="HEAD", help="branch, tag or commit whose history to read")
    p.add_argument("--project", default="", help="project of these documents")
    p.set_defaults(run=run_git_results)
    p = sub.add_parser("migrate", parents=[store], help="bring the store up to this schema")
    p.set_defaults(run=run_migrate)
    p = sub.add_parser(
        "compact", parents=[store], help="a lake's upkeep: merge small files, drop old snapshots"
    )
    p.add_argument("--keep-days", type=float, default=7.0, help="snapshots kept for time travel")
    p.set_defaults(run=run_compact)
    p = sub.add_parser(
        "export", parents=[store], help="write every measurement in perfboard's result format"
    )
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    p.add_argument("--out", type=Path, help="file to write (default: standard output)")
    p.set_defaults(run=run_export)
    return parser


def _api_url_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--api-url",
        help="GitHub API (default: GITHUB_API_URL, else https://api.github.com;"
        " GitHub Enterprise: https://HOST/api/v3)",
    )


def main(argv: list[str] | None = None) -> int:
    return run("ingest", build_parser().parse_args(argv))


class _NoPandas:
    """An import finder that says pandas is not installed (see arrow_without_pandas)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("not imported by the ingest", name=name)


def arrow_without_pandas() -> None:
    """Keep pyarrow from importing pandas, for the rest of this process.

    The first Arrow value made from Python objects (pa.array, pa.scalar, pa.table) makes
    pyarrow try `import pandas`, in case the object is a pandas one: 0.25-0.4 s, as much
    as importing DuckDB and pyarrow together, for a library the ingest never uses. pyarrow
    tries once and remembers the answer; this makes the answer "not installed" and then
    lets `import pandas` work again. Only for the command line (ingest/__main__.py): in a
    process that also serves pages, pyarrow must still convert to and from pandas.
    """
    if "pandas" in sys.modules:
        return
    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.scalar(0)  # pyarrow's one attempt at importing pandas, made now
    finally:
        sys.meta_path.remove(blocker)


# glibc's mallopt parameters (malloc.h), and the values keep_freed_memory sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 * 2**20  # glibc's largest
_TRIM_THRESHOLD = 64 * 2**20


def keep_freed_memory() -> bool:
    """Have glibc's malloc keep freed memory for reuse, for the rest of this process (and
    the workers it forks).

    Each step of a chunk's reading makes arrays and strings of the chunk's size (4 MiB).
    By default glibc maps a block that large fresh, and unmaps it when freed, so every
    chunk pays again the page faults of touching new memory: copying 4 MiB took 3.6 ms,
    into memory used before 1.8 ms. Blocks up to 32 MiB then come from the heap, and up to
    64 MiB of it freed stays there. Only for the command line (ingest/__main__.py), and
    only where the C library has mallopt; returns whether it took both settings.
    """
    import ctypes  # numpy has imported it already

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False  # not glibc (musl, macOS): their own allocators
    return bool(
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )


def open_store(args: argparse.Namespace, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The store of a command's --db, as every command opens it (perfboard.db.open_store)."""
    return db.open_store(store_location(args), read_only=read_only, lock_timeout=args.lock_timeout)


def run_migrate(args: argparse.Namespace) -> int:
    with closing(open_store(args)) as conn:  # opening migrates
        version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    print(f"the store is at schema version {version[0]}", file=sys.stderr)
    return 0


def iter_documents(paths: list[Path]) -> Iterator[Path]:
    """Files as given; folders walked in name order (manifests, hidden and binary skipped)."""
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        if path.is_file():
            yield path
            continue
        for child in sorted(path.rglob("*")):
            if (
                child.is_file()
                and child.name != MANIFEST
                and not any(part.startswith(".") for part in child.relative_to(path).parts)
                and child.suffix.lower() not in SKIP_SUFFIXES
                and child.name.lower() != "readme.md"
            ):
                yield child


def load_manifests(paths: list[Path]) -> dict[Path, dict[str, str]]:
    """perfboard-manifest.csv in a folder: per-file project, benchmark, url, author, date."""
    found: dict[Path, dict[str, str]] = {}
    for path in paths:
        folder = path if path.is_dir() else path.parent
        manifest = folder / MANIFEST
        if not manifest.exists():
            continue
        with open(manifest, encoding="utf-8", newline="") as fh:
            for line, row in enumerate(csv.DictReader(fh), start=2):
                if not row.get("file"):
                    raise UsageError(f"{manifest}:{line}: a manifest row needs a file name")
                found[(folder / row["file"]).resolve()] = row
    return found


def parse_date(text: str | None, where: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{where}: date {text!r} is not YYYY-MM-DD[THH:MM:SS]") from None


def meta_for(path: Path, args: argparse.Namespace, manifest: dict[Path, dict[str, str]]) -> DocMeta:
    row = manifest.get(path.resolve(), {})
    return DocMeta(
        # The path as given, tidied ("./data/x.md" is "data/x.md"): a source's name.
        uri=os.path.normpath(path),
        project=args.project or row.get("project", ""),
        benchmark=args.benchmark or row.get("benchmark", ""),
        url=args.url or row.get("url", ""),
        author=row.get("author", ""),
        created_at=parse_date(args.date or row.get("date"), str(path)),
        title=row.get("title", ""),
    )


def run_ingest(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    paths = list(iter_documents(args.paths))
    manifest = load_manifests(args.paths)
    if args.dry_run:
        return dry_run(paths, args, manifest, sys.stdout)
    summary = Summary()
    total = sum(p.stat().st_size for p in paths)
    # On a terminal, for runs long enough to wait on.
    show_bar = not args.quiet and sys.stderr.isatty() and (total > 2**24 or len(paths) > 20)
    with (
        worker_pool(paths, args.kind) as pool,  # forked before the store opens
        closing(open_store(args)) as conn,
        progress_bar(total, show_bar) as bar,
    ):
        changed: list[str] = []
        unchanged: list[str] = []
        for path in paths:
            done = bar.n
            doc = pipeline.Document(meta_for(path, args, manifest), args.kind, path=path)
            result = pipeline.ingest(conn, doc, bar.update, pool)
            summary.count(result)
            if result.outcome in ("added", "replaced", "emptied"):
                changed.append(result.uri)
            elif result.outcome == "unchanged":
                unchanged.append(result.uri)
            if not args.quiet:
                report(result, conn, bar)
            bar.update(done + path.stat().st_size - bar.n)  # the rest: results files, failures
        print(summary.render(time.perf_counter() - started), file=sys.stderr)
        notified = True
        if not args.no_detect:
            try:
                notified = detect_changed(conn, changed, unchanged, pool)
            except duckdb.Error as error:
                print(
                    f"ingest: change detection could not be stored: {first_error(error)}."
                    " The documents are stored; the next ingest of them (or"
                    " `python -m perfboard detect`) detects again",
                    file=sys.stderr,
                )
                return 1
    return 1 if summary.failed or not notified else 0


def detect_changed(
    conn: duckdb.DuckDBPyConnection,
    changed: list[str],
    unchanged: list[str] | None = None,
    pool: Executor | None = None,
) -> bool:
    """Change detection of every series these documents touched: over its whole history,
    or, for a long series they only appended to, over its last windows (perfboard.windows).

    Those of the documents stored now, and those of `unchanged` documents whose series'
    detection is older than the document (an ingest killed or interrupted between storing
    it and detecting): without them, a re-run would never detect those series. Then the
    new alerts go to perfboard.toml's channels (perfboard/notify.py): False when one was
    not sent (said on stderr, tried again next run; the detection stays stored).
    `pool`: the ingest's worker processes, which examine a long series' windows.
    """
    from perfboard import alerts, settings  # the detector (numpy): only when detecting

    started = time.perf_counter()
    touched = conn.execute(
        "SELECT DISTINCT m.series_id FROM measurements m JOIN sources s USING (source_id)"
        " LEFT JOIN series_noise n USING (series_id)"
        " WHERE list_contains($changed, s.uri) OR (list_contains($unchanged, s.uri)"
        " AND m.status = 'ok' AND isfinite(m.value)"
        " AND (n.detected_at IS NULL OR n.detected_at < s.ingested_at))",
        {"changed": changed, "unchanged": unchanged or []},
    ).fetchall()
    if not changed and not touched:
        return True  # nothing stored now and no detection left undone: nothing to say
    # The sources stored now: a long series they only appended to is examined in its
    # last windows (perfboard.windows), not over its whole history.
    appended = conn.execute(
        "SELECT source_id FROM sources WHERE list_contains($changed, uri)", {"changed": changed}
    ).fetchall()
    result = alerts.detect_store(
        conn,
        [series_id for (series_id,) in touched],
        appended=[i for (i,) in appended],
        pool=pool,
    )
    print(
        f"change detection: {result.change_points} change points in {result.series} series"
        f" ({result.too_noisy} noisy, {result.latest_outliers} with a newest value"
        f" outside their noise) in {time.perf_counter() - started:.2f} s",
        file=sys.stderr,
    )
    if not settings.current().notify.channels:
        return True  # none to send to: notify (3 ms to import) has nothing to do
    from perfboard import notify

    return notify.notify_and_say(conn, "ingest")


class _NoBar:
    """What the ingest asks of a progress bar, when none is shown (not on a terminal, or
    too short a run to wait on): tqdm itself costs 25 ms to import."""

    n = 0

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float = 1) -> None:
        self.n += int(n)

    def write(self, text: str, file: TextIO | None = None) -> None:
        print(text, file=file or sys.stdout)


def progress_bar(total: int, show: bool) -> tqdm | _NoBar:
    """A byte-counting progress bar on stderr when `show`, else a stand-in for one."""
    if not show:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, leave=False)


def report(result: SaveResult, conn: duckdb.DuckDBPyConnection, bar: tqdm | _NoBar) -> None:
    """One line per document that did something noteworthy, and its first problems."""
    if result.outcome in ("failed", "duplicate", "unrecognised", "emptied") or result.problems:
        detail = f": {result.note}" if result.note else ""
        bar.write(f"{result.uri}: {result.outcome}{detail}", file=sys.stderr)
    if result.problems and result.outcome not in ("failed", "unrecognised"):
        rows = conn.execute(
            "SELECT line, reason FROM ingest_errors WHERE source_uri = ? ORDER BY line LIMIT ?",
            [result.uri, SHOW_PROBLEMS],
        ).fetchall()
        for line, reason in rows:
            bar.write(f"  {result.uri}:{line}: {reason}", file=sys.stderr)
        if result.problems > SHOW_PROBLEMS:
            bar.write(f"  ... and {result.problems - SHOW_PROBLEMS} more", file=sys.stderr)


def dry_run(
    paths: list[Path],
    args: argparse.Namespace,
    manifest: dict[Path, dict[str, str]],
    out: TextIO,
) -> int:
    """Print what would be stored, one JSON object per line; touch no database."""
    failed = False
    for path in paths:
        doc = pipeline.Document(meta_for(path, args, manifest), args.kind, path=path)
        records, bad = pipeline.preview(doc)
        failed = failed or bad
        for record in records:
            out.write(
                json.dumps({"document": str(path), **record}, ensure_ascii=False, default=str)
            )
            out.write("\n")
    return 1 if failed else 0


def _github(args: argparse.Namespace, sync: Callable[[Any, GitHubClient], T]) -> T | None:
    """Run a GitHub sync on the store; a failure is printed and gives None (exit 1)."""
    from perfboard.github_api import DuckDBCache, GitHubClient, GitHubError

    try:
        with closing(open_store(args)) as conn:
            client = GitHubClient(args.api_url, cache=DuckDBCache(conn))
            return sync(conn, client)
    except GitHubError as error:
        print(f"ingest: {error}", file=sys.stderr)
        return None


def run_github_prs(args: argparse.Namespace) -> int:
    """Sync PRs from GitHub; a failed sync stores nothing and exits 1 with the reason."""
    from ingest import github  # requests: only in the commands that use it

    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
        raise UsageError(f"--repo {args.repo!r} is not OWNER/NAME")
    if args.load:
        return load_github_prs(args)
    since = parse_date(args.since, "--since")
    result = _github(
        args,
        lambda conn, client: (
            github.sync_referenced(conn, client, args.repo)
            if args.referenced
            else github.sync_all(conn, client, args.repo, since)
        ),
    )
    if result is None:
        return 1
    print(
        f"{args.repo}: {result.stored} pull requests stored; {result.requests} requests,"
        f" {result.not_modified} answered 304 (unchanged); {_descriptions(result)}",
        file=sys.stderr,
    )
    return 1 if result.kept.get("failed") else 0


def load_github_prs(args: argparse.Namespace) -> int:
    """Recorded API answers stored as a sync stores them, without a request. Every file is
    checked before the store opens; each is then stored in its own transaction."""
    from ingest import github

    recorded = []
    for path in args.load:
        try:
            recorded.append(github.recorded_pull_rows(args.repo, read_json(path), str(path)))
        except github.RecordError as error:
            raise UsageError(f"{path}: {error}") from None
    failed = False
    with closing(open_store(args)) as conn:
        for path, rows in zip(args.load, recorded, strict=True):
            result = github.store_recorded(conn, rows)
            failed = failed or bool(result.kept.get("failed"))
            print(
                f"{path}: {result.stored} pull requests of {args.repo} stored;"
                f" {_descriptions(result)}",
                file=sys.stderr,
            )
    return 1 if failed else 0


def _descriptions(result: github.SyncResult) -> str:
    kept = ", ".join(f"{n} {name}" for name, n in sorted(result.kept.items()))
    return f"{result.descriptions} PR descriptions read as documents ({kept or 'none kept'})"


def read_json(path: Path) -> Any:
    """A recorded JSON file; one that cannot be read or parsed is a usage error that says
    where."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot be read: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise UsageError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON: {error.msg}"
        ) from None


def run_github_issue(args: argparse.Namespace) -> int:
    """Read an issue's body and comments through the parsers; 1 when GitHub failed."""
    from ingest import github  # requests: only in the commands that use it
    from perfboard.github_api import GitHubError

    if args.load:
        try:
            issue, comments = github.recorded_issue(read_json(args.load), args.url)
        except github.RecordError as error:
            raise UsageError(f"{args.load}: {error}") from None
        except GitHubError as error:  # the URL given is no issue's
            raise UsageError(str(error)) from None
        with closing(open_store(args)) as conn:
            result = github.store_issue(conn, issue, comments, args.read_as, args.project)
    else:
        result = _github(
            args,
            lambda conn, client: github.sync_issue(
                conn, client, args.url, args.read_as, args.project
            ),
        )
    if result is None:
        return 1
    docs = ", ".join(f"{n} {name}" for name, n in sorted(result.outcomes.items()))
    print(
        f"{args.url}: documents {docs or 'none'}; {result.gone} gone; {result.requests} requests",
        file=sys.stderr,
    )
    return 1 if result.outcomes.get("failed") else 0


def run_git(args: argparse.Namespace) -> int:
    """Walk a clone's history into the store; a clone that cannot be walked exits 2."""
    from ingest import git  # GitPython: only in the commands that use it

    since = parse_date(args.since, "--since")
    pattern = args.release_pattern or git.RELEASE_PATTERN
    try:
        re.compile(pattern)
    except re.error as error:
        raise UsageError(f"--release-pattern {args.release_pattern!r}: {error}") from None
    with closing(open_store(args)) as conn:
        try:
            result = git.walk(conn, args.repo, args.name, args.rev, since, args.rewrite, pattern)
        except git.GitError as error:
            raise UsageError(str(error)) from None
    for note in result.notes:
        print(f"ingest: {note}", file=sys.stderr)
    print(
        f"{result.repo}: {result.commits} new commits ({result.with_pr} with a PR),"
        f" {result.releases} releases; walked from {result.head[:12]}",
        file=sys.stderr,
    )
    return 0


def run_git_results(args: argparse.Namespace) -> int:
    """Each result file a repository's history holds, read at its last revision: a record
    without a version or time of its own takes that commit's."""
    import tempfile  # 4 ms to import: only for the commands that need a folder

    from ingest import git

    started = time.perf_counter()
    summary = Summary()
    with (
        closing(open_store(args)) as conn,
        tempfile.TemporaryDirectory() as folder,
        progress_bar(0, False) as bar,
    ):
        try:
            for file in git.result_files(args.repo, args.glob, args.rev, args.name):
                local = Path(folder) / f"revision{Path(file.path).suffix}"  # the suffix tells
                local.write_bytes(file.data)  # the format, as for a file on disk
                meta = DocMeta(
                    uri=file.uri,
                    project=args.project,
                    url=file.url,
                    created_at=file.committed_at,
                    title=f"{file.path} at {file.sha[:12]}",
                    version=file.sha,
                )
                result = pipeline.ingest(conn, pipeline.Document(meta, args.read_as, path=local))
                summary.count(result)
                if not args.quiet:
                    report(result, conn, bar)
        except git.GitError as error:
            raise UsageError(str(error)) from None
    print(summary.render(time.perf_counter() - started), file=sys.stderr)
    return 1 if summary.failed else 0


def run_pulls(args: argparse.Namespace) -> int:
    """Known PR facts from CSV files; bad lines are reported, the rest stored."""
    from ingest.pulls import load_pulls_csv  # only this command reads PR facts

    for path in args.paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
    with closing(open_store(args)) as conn:
        for path in args.paths:
            try:
                loaded = load_pulls_csv(conn, path)
            except (OSError, UnicodeDecodeError, csv.Error) as error:
                raise UsageError(f"{path}: cannot be read: {error}") from None
            for problem in [] if args.quiet else loaded.problems:
                print(f"  {path}:{problem.line}: {problem.reason}", file=sys.stderr)
            print(
                f"{path}: {loaded.stored} pull requests stored,"
                f" {len(loaded.problems)} lines could not be read",
                file=sys.stderr,
            )
    return 0


def run_compact(args: argparse.Namespace) -> int:
    if not lake.is_lake(store_location(args)):
        raise UsageError(
            "compact is for a lake (PERFBOARD_DB=ducklake:...): a DuckDB file compacts itself"
            " at each checkpoint"
        )
    started = time.perf_counter()
    with closing(open_store(args)) as conn:
        before = lake.data_files(conn)
        with db.transaction(conn) as changes:
            changes.nothing()  # the same rows in fewer files: every cached page stays true
            expired = lake.compact(conn, timedelta(days=args.keep_days))
        after = lake.data_files(conn)  # the new snapshot's, once committed
    print(
        f"compacted: {before} files -> {after},"
        f" {expired} snapshots older than {args.keep_days:g} days expired,"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


def run_export(args: argparse.Namespace) -> int:
    from ingest import results  # the reader and writer of result files: this command only

    conn = open_store(args, read_only=True)
    if args.out:
        n = results.export(conn, args.out, args.format)
        print(f"exported {n} measurements to {args.out}", file=sys.stderr)
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"export.{args.format}"
        n = results.export(conn, out, args.format)
        with open(out, encoding="utf-8") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), ""):
                sys.stdout.write(chunk)
    print(f"exported {n} measurements", file=sys.stderr)
    return 0
