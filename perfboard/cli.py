"""``python -m perfboard``: work on what the store holds.

    python -m perfboard detect [--project P] [--json] [--confidence 0.99]
    python -m perfboard report [--week 2020-W06] [--project P] --format md|html [--out DIR]
                               [--post https://github.com/OWNER/REPO/issues/N]

`detect` finds the change points of every series (or a project's) over its whole
history, stores them as alerts (the triage set on an alert stays), and prints them.
`report` writes the weekly report (perfboard/report.py says what is in it) and can post
it on the team's tracking issue. (`python -m perfboard.report` is the same command.)

Also the pieces every command line of perfboard shares, `python -m ingest` included: the
store's options, defined once (`store_options`), and the one error boundary (`run`).
Exit status: 0 done, 1 done but something failed (a document, a post), 2 the command
could not run (bad option, no store, store locked past --lock-timeout, broken store).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

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
    p.set_defaults(run=run_detect)
    p = sub.add_parser(
        "report",
        parents=[store_options("no line about what was written")],
        help="write the weekly report (and post it on the tracking issue)",
    )
    add_report_arguments(p)
    p.set_defaults(run=run_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run("perfboard", args)


def run_detect(args: argparse.Namespace) -> int:
    from perfboard import alerts  # numpy and the detector: only this command needs them
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
    return 0


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
