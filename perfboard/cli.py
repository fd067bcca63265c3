"""``python -m perfboard``: work on what the store holds.

    python -m perfboard detect [--project P] [--json] [--confidence 0.99] [--no-notify]
    python -m perfboard report [--week 2020-W06] [--project P] --format md|html [--out DIR]
                               [--post https://github.com/OWNER/REPO/issues/N]
    python -m perfboard check RESULTS... [--head-sha SHA | --base-sha SHA | --base V|TAG|DATE]
                              [--post https://github.com/OWNER/REPO/pull/N [--status]]

`detect` finds the change points of every series (or a project's) over its whole
history, stores them as alerts (the triage set on an alert stays), and prints them.
`report` writes the weekly report (perfboard/report.py says what is in it) and can post
it on the team's tracking issue. (`python -m perfboard.report` is the same command.)
`check` judges a PR's benchmark run against its merge base (perfboard/check.py) and can
keep one comment on the PR up to date; exit 1 when it fails, for a CI gate.
`detect` then sends each new alert to the channels perfboard.toml names (notify.py);
`file-issue ALERT_KEY [--repo OWNER/REPO]` files an alert as a GitHub issue (alert_issue.py).

Also the pieces every command line of perfboard shares, `python -m ingest` included: the
store's options, defined once (`store_options`), and the one error boundary (`run`).
Exit status: 0 done, 1 done but something failed (a document, a post), 2 the command
could not run (bad option, no store, store locked past --lock-timeout, broken store).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import duckdb

from perfboard import db, lake
from perfboard.errors import StoreError, UsageError

DEFAULT_LOCK_TIMEOUT = 30.0


def store_options(quiet: str = "only the summary line") -> argparse.ArgumentParser:
    """The options of every command that opens the store, as a parent parser: --db,
    --lock-timeout and --quiet (whose help says what it leaves out)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--db", help="the store: a DuckDB file or a ducklake: URI (default: PERFBOARD_DB)"
    )
    parent.add_argument(
        "--lock-timeout",
        type=float,
        default=DEFAULT_LOCK_TIMEOUT,
        metavar="SECONDS",
        help="how long to wait while another writer holds the store (default: %(default)g)",
    )
    parent.add_argument("--quiet", action="store_true", help=quiet)
    return parent


def store_location(args: argparse.Namespace) -> Path | str:
    """--db as given (a lake's URI stays text), else PERFBOARD_DB."""
    if not args.db:
        return db.db_path()
    return str(args.db) if lake.is_lake(args.db) else Path(args.db)


def existing_store(args: argparse.Namespace) -> Path | str:
    """The store a reading command works on: it must exist (a lake always does)."""
    location = store_location(args)
    if not db.exists(location):
        raise UsageError(f"no database at {location}: run `make demo` or an ingest")
    return location


def run(prog: str, args: argparse.Namespace) -> int:
    """Run the subcommand the parser chose (args.run): the one error boundary of a command
    line. Every expected failure becomes one message on stderr and an exit status."""
    try:
        return args.run(args)
    except (UsageError, StoreError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    except duckdb.Error as error:  # the store failed under a command (a full disk, say)
        print(
            f"{prog}: {args.command}: the store failed: {first_error(error)}. What was"
            " stored before stays stored; run the command again once that is fixed",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; what was already stored stays stored", file=sys.stderr)
        return 130


def first_error(error: BaseException) -> BaseException:
    """The error that started a chain of them (a failed COMMIT, not the ROLLBACK after)."""
    while isinstance(error.__context__, duckdb.Error):
        error = error.__context__
    return error


Command = Callable[[argparse.Namespace], int]


# -- python -m perfboard ------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m perfboard", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser(
        "detect",
        parents=[store_options("only the summary line, not each change point")],
        help="find change points and store them as alerts",
    )
    p.add_argument("--project", help="only this project's series")
    p.add_argument("--json", action="store_true", help="print the change points as JSON lines")
    p.add_argument("--confidence", type=float, help="default: 0.99 (alerts.CONFIDENCE)")
    p.add_argument(
        "--no-notify",
        action="store_true",
        help="do not send new alerts to the channels of perfboard.toml [notify]",
    )
    p.set_defaults(run=run_detect)
    p = sub.add_parser(
        "report",
        parents=[store_options("no line about what was written")],
        help="write the weekly report (and post it on the tracking issue)",
    )
    add_report_arguments(p)
    p.set_defaults(run=run_report)
    p = sub.add_parser(
        "check",
        parents=[store_options("no line about the baseline and what was posted")],
        help="a PR's benchmark results against a baseline: a CI gate (exit 1 on a regression)",
        description="Compare a PR's benchmark results (perfboard result files, or any"
        " document `python -m ingest auto` reads) with a baseline, write a Markdown summary"
        " (or --json), and exit 1 when it fails. perfboard/check.py says how a change is"
        " judged.",
    )
    add_check_arguments(p)
    p.set_defaults(run=run_check)
    p = sub.add_parser(
        "file-issue",
        parents=[store_options("no line about the issue filed")],
        help="file an alert as a GitHub issue, and store its link on the alert",
    )
    p.add_argument("alert_key", metavar="ALERT_KEY", help="the alert (/alerts?alert=KEY)")
    p.add_argument("--repo", help="OWNER/REPO (default: perfboard.toml [notify] issue_repo)")
    p.add_argument("--api-url", help="GitHub API (default: GITHUB_API_URL or api.github.com)")
    p.add_argument("--who", help="who files it, for the triage log (default: your user name)")
    p.set_defaults(run=run_file_issue)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run("perfboard", args)


def run_detect(args: argparse.Namespace) -> int:
    from perfboard import alerts, notify  # numpy, the detector: only this command needs them
    from perfboard.queries.labels import series_labels  # pandas, with every query module

    confidence = alerts.CONFIDENCE if args.confidence is None else args.confidence
    if not 0.5 < confidence < 1:
        raise UsageError("--confidence must be between 0.5 and 1 (e.g. 0.99)")
    location = existing_store(args)
    started = time.perf_counter()
    with closing(db.open_store(location, lock_timeout=args.lock_timeout)) as conn:
        try:
            result = alerts.detect_store(conn, project=args.project, confidence=confidence)
        except duckdb.Error as error:  # a full disk, say: its transaction took it all back
            raise StoreError(
                f"change detection could not be stored: {first_error(error)}. What was"
                " stored before stays stored; run detect again once that is fixed"
            ) from None
        labels = series_labels(conn, {int(r["series_id"]) for r in result.rows})  # type: ignore[call-overload]
        # After the detection is stored: a failed send never takes it back (exit 1).
        notified = args.no_notify or notify.notify_and_say(conn, "perfboard", args.quiet)
    for row in [] if args.quiet else sorted(result.rows, key=_by_time):
        label = labels.get(int(row["series_id"]), str(row["series_id"]))  # type: ignore[call-overload]
        if args.json:
            print(json.dumps({**row, "series": label}, default=str))
        else:
            shape = "drift " if row.get("shape") == "drift" else ""
            print(
                f"{shape}{row['kind']:<11} {row['change_pct']:+7.2f}%  {row['before']:.4g} -> "
                f"{row['after']:.4g}  {row['before_version'] or '?'} -> "
                f"{row['after_version'] or '?'} ({row['after_at'] or 'undated'})  "
                f"{label}  p={row['p_value']:.2g}"
            )
    print(
        f"{result.series} series examined, {result.change_points} change points,"
        f" {result.too_noisy} noisy (their alerts less sure), {result.latest_outliers} with a"
        " newest value"
        f" outside their noise, in {time.perf_counter() - started:.2f} s",
        file=sys.stderr,
    )
    return 0 if notified else 1


def _by_time(row: dict[str, object]) -> tuple[str, int]:
    return (str(row["after_at"]), int(row["series_id"]))  # type: ignore[call-overload]


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--week", help="ISO week, e.g. 2020-W06 (default: the last full week)")
    p.add_argument("--project", help="only this project")
    p.add_argument("--format", choices=("md", "html"), default="md")
    p.add_argument("--out", type=Path, default=Path("."), help="folder to write into")
    p.add_argument("--post", metavar="ISSUE_URL", help="post the Markdown as a comment")
    p.add_argument("--api-url", help="GitHub API (default: GITHUB_API_URL or api.github.com)")


def run_report(args: argparse.Namespace) -> int:
    """Write the report; 1 when only its post failed (the file is written)."""
    from perfboard import report
    from perfboard.github_api import GitHubError

    started = time.perf_counter()
    try:
        monday = report.parse_week(args.week) if args.week else report.last_full_week()
    except ValueError as error:
        raise UsageError(str(error)) from None
    location = existing_store(args)
    with closing(db.open_store(location, read_only=True, lock_timeout=args.lock_timeout)) as conn:
        built = report.build(conn, monday, args.project)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        if args.format == "md":
            text = report.to_markdown(built, report.write_pngs(built, args.out))
        else:
            text = report.to_html(built)
        target = args.out / f"{built.stem}.{args.format}"
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write the report: {error}") from None
    if not args.quiet:
        print(f"wrote {target} in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    if args.post:
        try:
            print(f"posted: {report.post(built, args.post, args.api_url)}", file=sys.stderr)
        except GitHubError as error:  # the report is written; only the post failed
            print(f"perfboard: {error}", file=sys.stderr)
            return 1
    return 0


def run_file_issue(args: argparse.Namespace) -> int:
    """File the alert as an issue; 1 when GitHub did not create it (nothing is stored)."""
    import getpass

    from perfboard import alert_issue
    from perfboard.github_api import GitHubClient, GitHubError

    location = existing_store(args)
    with closing(db.open_store(location, lock_timeout=args.lock_timeout)) as conn:
        try:
            client = GitHubClient(args.api_url)
            url = alert_issue.file_issue(
                conn, args.alert_key, args.repo, args.who or getpass.getuser(), client
            )
        except GitHubError as error:
            print(f"perfboard: {error}", file=sys.stderr)
            return 1
    if not args.quiet:
        print(f"filed: {url}", file=sys.stderr)
    return 0


# -- python -m perfboard check ---------------------------------------------------------------


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "results", nargs="+", type=Path, metavar="PATH", help="the PR run's files or folders"
    )
    p.add_argument("--project", default="", help="project of documents that name none")
    p.add_argument("--benchmark", default="", help="model, when the text does not say")
    p.add_argument("--date", help="document date (YYYY-MM-DD): gives glog lines a year")
    p.add_argument("--head-sha", help="the PR's head commit: its merge base is the baseline")
    p.add_argument("--base-sha", help="the baseline's commit (e.g. `git merge-base`)")
    p.add_argument("--base", metavar="VERSION|TAG|DATE", help="a named baseline")
    p.add_argument("--pr", metavar="PR_URL", help="the PR (its claims); default: --post's")
    p.add_argument("--post", metavar="PR_URL", help="keep one comment on the PR up to date")
    p.add_argument("--status", action="store_true", help="with --post: set the commit status")
    p.add_argument("--api-url", help="GitHub API (default: GITHUB_API_URL or api.github.com)")
    p.add_argument("--dashboard-url", help="the dashboard, for a Compare link (PERFBOARD_URL)")
    p.add_argument("--json", action="store_true", help="write JSON, not Markdown")
    p.add_argument("--out", type=Path, help="file to write (default: standard output)")
    p.add_argument("--fail-on", choices=("regression", "any", "never"), default="regression")
    p.add_argument("--confidence", type=float, help="default: 0.99, as perfboard detect")
    p.add_argument(
        "--store",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep the run in check_runs (never in measurements; default: on)",
    )


def run_check(args: argparse.Namespace) -> int:
    """0 passed, 1 failed (or its post failed), 2 it could not run (UsageError)."""
    from perfboard import check, settings
    from perfboard.github_api import GitHubError

    confidence = check.CONFIDENCE if args.confidence is None else args.confidence
    if not 0.5 < confidence < 1:
        raise UsageError("--confidence must be between 0.5 and 1 (e.g. 0.99)")
    if args.status and not (args.post and args.head_sha):
        raise UsageError("--status needs --post and --head-sha: the commit to set it on")
    rules = settings.current().detect
    location = existing_store(args)
    pr, documents = _pr_run(args)
    with closing(db.open_store(location, read_only=True, lock_timeout=args.lock_timeout)) as conn:
        result = check.run(
            conn,
            pr,
            rules,
            base_sha=args.base_sha,
            head_sha=args.head_sha,
            base=args.base,
            pr_url=args.pr or args.post,
            fail_on=args.fail_on,
            confidence=confidence,
            documents=documents,
        )
    dashboard = args.dashboard_url or os.environ.get("PERFBOARD_URL")
    markdown = check.comment_body(result, dashboard)
    text = json.dumps(check.to_json(result, dashboard), indent=1) + "\n" if args.json else markdown
    if args.out:
        try:
            args.out.write_text(text, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {args.out}: {error}") from None
    else:
        sys.stdout.write(text)
    if not args.quiet:
        print(f"perfboard check: baseline: {result.baseline.description}", file=sys.stderr)
    status = 1 if result.failed else 0
    comment_url = None
    if args.post:
        try:
            comment_url = check.publish(result, markdown, args.post, args.api_url, args.status)
        except GitHubError as error:  # the check is written; only the post failed
            print(f"perfboard: {error}", file=sys.stderr)
            status = 1
        else:
            if not args.quiet:
                print(f"perfboard check: posted {comment_url}", file=sys.stderr)
    if args.store:
        with closing(db.open_store(location, lock_timeout=args.lock_timeout)) as conn:
            check.store_run(conn, result, markdown, status, comment_url)
    return status


def _pr_run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """The PR's series (check.pr_sides), read as `python -m ingest auto --dry-run` reads
    its documents: nothing is stored. The one place perfboard imports the ingest
    (docs/architecture.md): reading a document is the ingest's job, and the check must
    read the PR's documents exactly as an ingest of them would."""
    from ingest import cli as ingest_cli
    from ingest import pipeline
    from perfboard import check

    paths = list(ingest_cli.iter_documents(args.results))
    manifest = ingest_cli.load_manifests(args.results)
    meta_args = argparse.Namespace(
        project=args.project, benchmark=args.benchmark, url="", date=args.date
    )
    records: list[dict[str, Any]] = []
    for path in paths:
        doc = pipeline.Document(ingest_cli.meta_for(path, meta_args, manifest), "auto", path=path)
        found, failed = pipeline.preview(doc)
        if failed:
            reasons = "; ".join(str(r.get("reason")) for r in found if r.get("kind") == "problem")
            raise UsageError(f"{path}: cannot be read: {reasons}")
        if not any(r.get("kind") == "measurement" for r in found) and not args.quiet:
            print(f"perfboard check: {path}: no measurement in it", file=sys.stderr)
        records += found
    pr = check.pr_sides(records, args.project)
    if not pr:
        raise UsageError(
            f"no measurement in {len(paths)} document(s) of the PR run: nothing to check"
        )
    return pr, len(paths)
