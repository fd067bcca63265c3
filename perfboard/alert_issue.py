"""An alert filed as a GitHub issue, as Perfherder files a bug for its alerts.

    python -m perfboard file-issue ALERT_KEY [--repo OWNER/REPO] [--api-url URL]

The issue's title names the alert's largest change and its series; its body holds the
alert's summary, a table of every series that moved (before, after, change), the PRs
suspected, with links, and the alert's page on the dashboard. Text from documents and
GitHub is escaped (markup.gfm_escape) so a PR title cannot become markup in it.

It is posted once through the GitHub client (github_api: its token rules and Enterprise
URLs; a POST is never retried, so a 5xx or a timeout cannot make two issues), and the
issue's link is stored on the alert (alert_issues) with a line in its triage log; a new
alert becomes acknowledged (someone is on it). An alert that has an issue is never filed
again: the refusal names the issue. The Alerts page calls file_issue and filed_issue.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import duckdb

from perfboard import db, settings
from perfboard.errors import UsageError
from perfboard.markup import gfm_escape
from perfboard.notify import MAX_SUSPECTS, Summary, summarise

if TYPE_CHECKING:
    from perfboard.github_api import GitHubClient

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
TITLE_CHARS = 200  # GitHub takes 256; a title is read in lists, shorter is better


class AlreadyFiled(UsageError):
    """The alert has an issue already; the message names it."""


def filed_issue(conn: duckdb.DuckDBPyConnection, alert_key: str) -> str | None:
    """The link of the issue filed for this alert, if one was."""
    row = conn.execute("SELECT url FROM alert_issues WHERE alert_key = ?", [alert_key]).fetchone()
    return None if row is None else str(row[0])


def issue_title(summary: Summary) -> str:
    """ "Regression in ernie: +12.0% (1.14x slower than before) in ernie · latency · ..."
    (a title is plain text on GitHub: nothing in it to escape)."""
    kind = f"Gradual {summary.kind}" if summary.gradual else summary.kind.capitalize()
    more = f" and {summary.series - 1} more series" if summary.series > 1 else ""
    title = (
        f"{kind} in {summary.project}: {summary.largest_pct:+.1f}% ({summary.words})"
        f" in {summary.largest_series}{more}"
    )
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def issue_body(summary: Summary) -> str:
    """The issue's Markdown: the summary, the table of series, the suspects, the link."""
    e = gfm_escape
    lines = [
        f"**{e(summary.title)}**",
        "",
        f"Largest change: {e(summary.largest)} ({summary.largest_pct:+.1f}%).",
        f"{e(summary.moved)}.",
        "",
        "| series | before | after | change |",
        "|---|---:|---:|---:|",
    ]
    for change in summary.changes:
        unit = f" {e(change.unit)}" if change.unit else ""
        lines.append(
            f"| {e(change.series)} | {change.before:.4g}{unit} | {change.after:.4g}{unit}"
            f" | {change.change_pct:+.2f}% |"
        )
    lines.append("")
    if summary.suspects:
        lines += ["**Suspected pull requests** (merged between the two sides):", ""]
        for s in summary.suspects[: MAX_SUSPECTS * 3]:
            name = f"[{e(s.name)}]({s.url})" if s.url else e(s.name)
            by = f" ({e(s.author)})" if s.author else ""
            lines.append(f"- {name} {e(s.title)}{by}")
        if len(summary.suspects) > MAX_SUSPECTS * 3:
            lines.append(f"- and {len(summary.suspects) - MAX_SUSPECTS * 3} more")
    else:
        lines.append(
            "**Suspected pull requests:** none known (walk the repository with"
            " `python -m ingest git`, or sync its PRs, to see what landed in between)."
        )
    lines.append("")
    where = f"[the alert on the dashboard]({summary.link})" if summary.link else "perfboard"
    lines.append(f"Filed from {where}, alert `{summary.key}`.")
    return "\n".join(lines) + "\n"


def file_issue(
    conn: duckdb.DuckDBPyConnection,
    alert_key: str,
    repo: str | None,
    who: str,
    client: GitHubClient | None = None,
) -> str:
    """File the alert as an issue on `repo` (default: [notify] issue_repo), store its
    link on the alert and log it in its triage; returns the issue's link.

    UsageError for an unknown alert or repo; AlreadyFiled when the alert has an issue
    (nothing is posted); github_api.GitHubError when GitHub did not create it (nothing
    is stored). `client`: a github_api.GitHubClient (default: one from GITHUB_API_URL and
    the token rules of github_api)."""
    from perfboard import github_api  # requests: only when filing

    if not who or not who.strip():
        raise UsageError("say who files the issue")
    config = settings.current().notify
    repo = repo or config.issue_repo
    if not repo:
        raise UsageError("no repository to file in: give OWNER/REPO, or set [notify] issue_repo")
    if not _REPO.match(repo):
        raise UsageError(f"{repo!r} is not a repository like OWNER/REPO")
    existing = filed_issue(conn, alert_key)
    if existing:
        raise AlreadyFiled(f"alert {alert_key} has an issue already: {existing}")
    summary = summarise(conn, alert_key, config.dashboard_url)
    if summary is None:
        raise UsageError(f"no alert {alert_key!r} in the store (perfboard detect finds them)")
    gh = client if client is not None else github_api.GitHubClient()
    created = gh.post(
        f"repos/{repo}/issues", {"title": issue_title(summary), "body": issue_body(summary)}
    )
    url, number = _created(created, repo)
    _store(conn, alert_key, repo, number, url, who.strip())
    return url


def _created(created: object, repo: str) -> tuple[str, int]:
    from perfboard.github_api import GitHubError

    if not isinstance(created, dict):
        raise GitHubError(f"GitHub answered the new issue on {repo} with no issue")
    number, url = created.get("number"), created.get("html_url")
    if not isinstance(number, int) or not isinstance(url, str) or not url.startswith("https://"):
        raise GitHubError(f"GitHub's new issue on {repo} has no number or https link")
    return url, number


def _store(
    conn: duckdb.DuckDBPyConnection, key: str, repo: str, number: int, url: str, who: str
) -> None:
    """The issue on the alert, and its triage: a new alert becomes acknowledged (its note
    kept); the log says the issue was filed, by whom."""
    now = datetime.now(UTC).replace(tzinfo=None)
    with db.transaction(conn) as changes:
        changes.touch("alert_issues", "alert_triage", "alert_triage_log")
        conn.execute(
            "INSERT INTO alert_issues (alert_key, repo, number, url, filed_by, filed_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [key, repo, number, url, who, now],
        )
        row = conn.execute(
            "SELECT status, note FROM alert_triage WHERE alert_key = ?", [key]
        ).fetchone()
        status, note = row if row is not None else ("new", None)
        if status == "new":
            status = "acknowledged"
            # DELETE then INSERT, not an upsert: a DuckLake store has no keys to upsert on.
            conn.execute("DELETE FROM alert_triage WHERE alert_key = ?", [key])
            conn.execute(
                "INSERT INTO alert_triage (alert_key, status, note, set_by, set_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [key, status, note, who, now],
            )
        conn.execute(
            "INSERT INTO alert_triage_log (alert_key, status, note, set_by, set_at)"
            " VALUES (?, ?, ?, ?, ?)",
            [key, status, f"issue filed: {url}", who, now],
        )
