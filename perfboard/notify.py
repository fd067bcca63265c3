"""Alerts that reach people: each new alert, once, to the team's chat and mail.

After a detection stores its change points (`perfboard detect`, an ingest's own), every
alert that a channel has not yet been told of is sent to it: one message per alert and
channel, recorded in alert_notifications. A send that failed is recorded with its error
and tried again on the next run; once one was delivered, that channel never hears of the
alert again, whatever re-detection and re-ingest do (an alert's key is stable:
alerts.alert_key). Alerts triaged invalid, won't fix or fixed are not sent.

The channels are settings (perfboard.toml `[notify]`, settings.py): webhooks of Slack,
Feishu/Lark, DingTalk and WeCom bots, each in its vendor's format, and e-mail over SMTP.
A message holds the alert's summary (its largest change in % and in words, how many
series moved, before and after versions and dates, the PRs suspected, with links) and its
link on the dashboard. Every send has timeouts and is tried once per run (a retry could
post twice); a vendor's own answer decides whether it was delivered. The record is
written right after each send, so a run stopped halfway sends the rest next time (a send
cut short before its record may come twice: a duplicate is better than a lost alert).

Webhook URLs are secrets (a token is in each): no message or record ever holds one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

import duckdb

from perfboard import db, settings
from perfboard.links import pr_url
from perfboard.markup import gfm_escape, short_version

if TYPE_CHECKING:
    from email.message import EmailMessage

    import pandas as pd

# pandas (the queries) and requests are imported where an alert is sent, not here: an
# ingest's detection imports this module, and with no channel set it sends nothing.

CLOSED = ("invalid", "wontfix", "fixed")  # triaged away: nobody needs telling
MAX_SUSPECTS = 10  # listed in a message; the alert's page has them all
_ERROR_CHARS = 300  # of a vendor's answer, kept with a failed send

# -- the alert, summarised ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Suspect:
    repo: str | None
    number: int | None  # None: a commit of the walked history that names no PR
    title: str
    author: str | None
    url: str | None  # validated (links.pr_url), or None
    sha: str | None = None

    @property
    def name(self) -> str:
        """ "PaddlePaddle/Paddle#22494", or the commit's short hash."""
        if self.number is None:
            return short_version(self.sha)
        return f"{self.repo}#{self.number}" if self.repo else f"#{self.number}"


@dataclass(frozen=True, slots=True)
class Change:
    """One series that moved (a row of the issue's table)."""

    series: str
    before: float
    after: float
    unit: str | None
    change_pct: float


@dataclass(frozen=True, slots=True)
class Summary:
    key: str
    project: str
    kind: str  # regression, improvement, mixed
    gradual: bool  # every change of it is a drift (a ramp), none a step
    largest_pct: float
    words: str  # the largest change in words: "1.14x slower than before"
    largest_series: str
    before: float  # the largest change's levels, in its unit
    after: float
    unit: str | None
    series: int  # how many series moved
    regressions: int
    improvements: int
    before_version: str | None
    after_version: str | None
    before_at: datetime | None
    after_at: datetime | None
    confidence: float
    changes: tuple[Change, ...]
    suspects: tuple[Suspect, ...]
    link: str | None  # the alert's page on the dashboard

    @property
    def title(self) -> str:
        """ "Regression in ernie: +12.0% (1.14x slower than before), 2 series"."""
        kind = f"Gradual {self.kind}" if self.gradual else self.kind.capitalize()
        return (
            f"{kind} in {self.project}: {self.largest_pct:+.1f}% ({self.words}),"
            f" {self.series} series"
        )

    @property
    def largest(self) -> str:
        """ "ernie · latency · ...: 9.5 → 8.4 ms"."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.largest_series}: {self.before:.4g} → {self.after:.4g}{unit}"

    @property
    def moved(self) -> str:
        """ "2 series moved between 1a2b3c4d5e (2020-01-30) and 9f8e7d6c5b (2020-01-31);
        confidence 0.999"."""
        mixed = (
            f" ({self.regressions} worse, {self.improvements} better)"
            if self.regressions and self.improvements
            else ""
        )
        return (
            f"{self.series} series moved{mixed} between {short_version(self.before_version)}"
            f" ({_day(self.before_at)}) and {short_version(self.after_version)}"
            f" ({_day(self.after_at)}); confidence {self.confidence:.3f}"
        )


def _day(moment: datetime | None) -> str:
    return "undated" if moment is None else f"{moment:%Y-%m-%d}"


def alert_link(dashboard_url: str | None, key: str) -> str | None:
    """The alert's page: the Alerts page's `alert` URL parameter (pages/alerts.py)."""
    return f"{dashboard_url.rstrip('/')}/alerts?alert={key}" if dashboard_url else None


def summarise(
    conn: duckdb.DuckDBPyConnection,
    key: str,
    dashboard_url: str | None = None,
    found: pd.DataFrame | None = None,
) -> Summary | None:
    """The alert of this key as a message tells it, from the Alerts page's queries;
    None when no detection holds it now. `found`: queries.alerts, when already read."""
    import pandas as pd

    from perfboard import queries
    from perfboard.wording import worded

    found = queries.alerts(conn) if found is None else found
    rows = found[found.alert_key == key]
    if rows.empty:
        return None
    alert = rows.iloc[0]
    changes = queries.alert_changes(conn, key)  # largest first
    top = changes.iloc[0]
    # detect.py calls a change worse when it goes against the metric's direction: so the
    # largest change's kind and sign say which direction its metric has.
    lower_is_better = (top.change_pct > 0) == (top.kind == "regression")
    direction = "lower" if lower_is_better else "higher"
    suspects = queries.alert_suspects(conn, key)
    return Summary(
        key=key,
        project=str(alert.project),
        kind=str(alert.kind),
        gradual=int(alert.drifts) == int(alert.series),
        largest_pct=float(top.change_pct),
        words=worded(top.after / top.before, direction, "", "before").strip(),
        largest_series=str(top.series),
        before=float(top.before),
        after=float(top.after),
        unit=None if pd.isna(top.unit) else str(top.unit),
        series=int(alert.series),
        regressions=int(alert.regressions),
        improvements=int(alert.improvements),
        before_version=_text(alert.before_version),
        after_version=_text(alert.after_version),
        before_at=None if pd.isna(alert.before_at) else alert.before_at.to_pydatetime(),
        after_at=None if pd.isna(alert.after_at) else alert.after_at.to_pydatetime(),
        confidence=float(alert.confidence),
        changes=tuple(
            Change(
                str(c.series), float(c.before), float(c.after), _text(c.unit), float(c.change_pct)
            )
            for c in changes.itertuples()
        ),
        suspects=tuple(
            Suspect(
                _text(s.repo),
                None if pd.isna(s.pr_number) else int(s.pr_number),
                _text(s.title) or "",
                _text(s.author),
                pr_url(_text(s.repo), s.pr_number),
                _text(s.sha),
            )
            for s in suspects.itertuples()
        ),
        link=alert_link(dashboard_url, key),
    )


def _text(value: object) -> str | None:
    import pandas as pd

    return None if value is None or pd.isna(value) else str(value)  # type: ignore[arg-type]


def _listed(summary: Summary) -> tuple[tuple[Suspect, ...], int]:
    """The suspects a message lists, and how many more there are."""
    shown = summary.suspects[:MAX_SUSPECTS]
    return shown, len(summary.suspects) - len(shown)


# -- each vendor's message ------------------------------------------------------------------
# Text from documents and GitHub (series labels, PR titles) is escaped for each format
# where it is written: a PR title cannot become a link or markup there.


def plain_text(summary: Summary) -> str:
    """The message as plain text: the e-mail's body, and the fallback of the others."""
    lines = [
        f"perfboard: {summary.title}",
        f"Largest change: {summary.largest} ({summary.largest_pct:+.1f}%)",
        f"{summary.moved}.",
    ]
    shown, more = _listed(summary)
    if shown:
        lines.append("Suspected pull requests (merged between the two sides):")
        for s in shown:
            by = f" ({s.author})" if s.author else ""
            lines.append(f"- {s.name} {s.title}{by}" + (f" {s.url}" if s.url else ""))
        if more:
            lines.append(f"- and {more} more")
    else:
        lines.append("Suspected pull requests: none known.")
    lines.append(f"The alert: {summary.link}" if summary.link else f"The alert: {summary.key}")
    return "\n".join(lines) + "\n"


def _slack_escape(text: object) -> str:
    # Slack's own rule for mrkdwn: only &, < and > are control characters.
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_payload(summary: Summary) -> dict[str, Any]:
    """Slack incoming webhook: `text` (the notification's fallback) and Block Kit blocks
    in mrkdwn (https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks/;
    a header takes 150 characters of plain text, a section 3,000 of mrkdwn)."""
    e = _slack_escape
    lines = [
        f"*Largest change:* {e(summary.largest)} ({summary.largest_pct:+.1f}%)",
        f"{e(summary.moved)}.",
    ]
    shown, more = _listed(summary)
    if shown:
        lines.append("*Suspected pull requests* (merged between the two sides):")
        for s in shown:
            name = f"<{s.url}|{e(s.name)}>" if s.url else e(s.name)
            by = f" ({e(s.author)})" if s.author else ""
            lines.append(f"• {name} {e(s.title[:120])}{by}")
        if more:
            lines.append(f"• and {more} more")
    else:
        lines.append("*Suspected pull requests:* none known.")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": summary.title[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[:3000]}},
    ]
    if summary.link:
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": f"<{summary.link}|Open the alert>"},
            }
        )
    return {"text": e(f"perfboard: {summary.title}"), "blocks": blocks}


def feishu_payload(summary: Summary, secret: str | None, now: float) -> dict[str, Any]:
    """Feishu/Lark custom bot: a rich-text `post` message (its text and link tags are
    shown as written: nothing to escape), signed when the bot has a secret
    (https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot)."""
    rows: list[list[dict[str, str]]] = [
        [
            {
                "tag": "text",
                "text": f"Largest change: {summary.largest} ({summary.largest_pct:+.1f}%)",
            }
        ],
        [{"tag": "text", "text": f"{summary.moved}."}],
    ]
    shown, more = _listed(summary)
    rows.append([{"tag": "text", "text": "Suspected pull requests:" + ("" if shown else " none")}])
    for s in shown:
        by = f" ({s.author})" if s.author else ""
        name = (
            {"tag": "a", "text": s.name, "href": s.url}
            if s.url
            else {"tag": "text", "text": s.name}
        )
        rows.append(
            [{"tag": "text", "text": "- "}, name, {"tag": "text", "text": f" {s.title}{by}"}]
        )
    if more:
        rows.append([{"tag": "text", "text": f"- and {more} more"}])
    if summary.link:
        rows.append([{"tag": "a", "text": "Open the alert", "href": summary.link}])
    payload: dict[str, Any] = {
        "msg_type": "post",
        "content": {"post": {"zh_cn": {"title": f"perfboard: {summary.title}", "content": rows}}},
    }
    if secret:
        payload.update(feishu_sign(secret, int(now)))
    return payload


def feishu_sign(secret: str, timestamp: int) -> dict[str, str]:
    """Feishu's signature: HMAC-SHA256 keyed with "timestamp\\nsecret" over nothing,
    base64; the timestamp in seconds, both in the body (Feishu refuses one that is more
    than an hour off)."""
    key = f"{timestamp}\n{secret}".encode()
    digest = hmac.new(key, b"", hashlib.sha256).digest()
    return {"timestamp": str(timestamp), "sign": base64.b64encode(digest).decode()}


def _markdown(summary: Summary, heading: str) -> str:
    """The message in the Markdown that DingTalk's and WeCom's bots show (a subset of
    CommonMark: headings, bold, links, lists); document text escaped as for GitHub."""
    e = gfm_escape
    lines = [
        f"{heading} perfboard: {e(summary.title)}",
        "",
        f"**Largest change:** {e(summary.largest)} ({summary.largest_pct:+.1f}%)",
        "",
        f"{e(summary.moved)}.",
        "",
    ]
    shown, more = _listed(summary)
    if shown:
        lines.append("**Suspected pull requests** (merged between the two sides):")
        lines.append("")
        for s in shown:
            name = f"[{e(s.name)}]({s.url})" if s.url else e(s.name)
            by = f" ({e(s.author)})" if s.author else ""
            lines.append(f"- {name} {e(s.title[:120])}{by}")
        if more:
            lines.append(f"- and {more} more")
    else:
        lines.append("**Suspected pull requests:** none known.")
    if summary.link:
        lines += ["", f"[Open the alert]({summary.link})"]
    return "\n".join(lines)


def dingtalk_payload(summary: Summary) -> dict[str, Any]:
    """DingTalk custom robot: a markdown message; `title` is what the notification shows
    (https://open.dingtalk.com/document/robots/custom-robot-access)."""
    return {
        "msgtype": "markdown",
        "markdown": {"title": f"perfboard: {summary.title}", "text": _markdown(summary, "###")},
    }


def dingtalk_url(url: str, secret: str | None, now: float) -> str:
    """The robot's URL, signed when it has a secret: timestamp (ms) and sign, the base64
    HMAC-SHA256 keyed with the secret over "timestamp\\nsecret", URL-encoded
    (https://open.dingtalk.com/document/robots/customize-robot-security-settings)."""
    if not secret:
        return url
    timestamp = str(int(now * 1000))
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256)
    sign = quote_plus(base64.b64encode(digest.digest()).decode())
    return f"{url}{'&' if '?' in url else '?'}timestamp={timestamp}&sign={sign}"


WECOM_LIMIT = 4096  # bytes of a markdown message's content


def wecom_payload(summary: Summary) -> dict[str, Any]:
    """WeCom group robot: a markdown message, at most 4,096 bytes of UTF-8
    (https://developer.work.weixin.qq.com/document/path/91770)."""
    content = _markdown(summary, "###")
    while len(content.encode()) > WECOM_LIMIT:  # a long list of suspects: cut from the end
        content = content[: len(content) - 200].rsplit("\n", 1)[0] + "\n- ..."
    return {"msgtype": "markdown", "markdown": {"content": content}}


def email_message(summary: Summary, sender: str, to: tuple[str, ...]) -> EmailMessage:
    """One e-mail: the plain text, and a simple HTML part (document text escaped)."""
    from email.message import EmailMessage  # here: email and smtplib cost an ingest 20 ms
    from email.utils import formatdate, make_msgid

    message = EmailMessage()
    message["Subject"] = f"perfboard: {summary.title}"
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid("alert-" + summary.key)
    message.set_content(plain_text(summary))
    e = html.escape
    shown, more = _listed(summary)
    items = "".join(
        "<li>"
        + (f'<a href="{e(s.url)}">{e(s.name)}</a>' if s.url else e(s.name))
        + f" {e(s.title)}"
        + (f" ({e(s.author)})" if s.author else "")
        + "</li>"
        for s in shown
    ) + (f"<li>and {more} more</li>" if more else "")
    suspects = (
        f"<p><b>Suspected pull requests</b> (merged between the two sides):</p><ul>{items}</ul>"
        if shown
        else "<p><b>Suspected pull requests:</b> none known.</p>"
    )
    link = f'<p><a href="{e(summary.link)}">Open the alert</a></p>' if summary.link else ""
    message.add_alternative(
        "<!doctype html><html><body>"
        f"<h3>{e(summary.title)}</h3>"
        f"<p><b>Largest change:</b> {e(summary.largest)} ({summary.largest_pct:+.1f}%)</p>"
        f"<p>{e(summary.moved)}.</p>"
        f"{suspects}{link}</body></html>",
        subtype="html",
    )
    return message


# -- sending --------------------------------------------------------------------------------


class SendError(Exception):
    """A message not delivered; the text is safe to print and store (no URL, no secret)."""


def post_webhook(hook: settings.Webhook, summary: Summary, timeout: float, now: float) -> None:
    """Post one message to a bot, once; SendError unless the vendor says it took it."""
    import requests

    url = hook.url
    if hook.kind == "slack":
        payload = slack_payload(summary)
    elif hook.kind == "feishu":
        payload = feishu_payload(summary, hook.secret, now)
    elif hook.kind == "dingtalk":
        payload, url = dingtalk_payload(summary), dingtalk_url(hook.url, hook.secret, now)
    else:
        payload = wecom_payload(summary)
    try:
        # No redirects: a bot's URL answers itself, and a redirected POST is no send.
        response = requests.post(
            url, json=payload, timeout=(min(5.0, timeout), timeout), allow_redirects=False
        )
    except requests.Timeout:
        raise SendError(f"no answer within {timeout:g} s") from None
    except requests.ConnectionError:
        raise SendError("could not connect") from None
    except requests.RequestException as error:  # its text holds the URL: only its kind
        raise SendError(f"the request failed ({type(error).__name__})") from None
    accepted(hook.kind, response.status_code, response.text)


def accepted(kind: str, status: int, body: str) -> None:
    """Each vendor's answer for a message it took: Slack answers 200 "ok" (an error is a
    4xx/5xx whose text names it, e.g. invalid_payload); Feishu {"code": 0} (its first
    API said {"StatusCode": 0}); DingTalk and WeCom {"errcode": 0}. Else SendError with
    the vendor's own message."""
    said = " ".join(body.split())[:_ERROR_CHARS]
    if kind == "slack":
        if status == 200 and body.strip() == "ok":
            return
        raise SendError(f"Slack answered {status}: {said or 'nothing'}")
    try:
        data = json.loads(body)
    except ValueError:
        raise SendError(f"answered {status} with no JSON: {said or 'nothing'}") from None
    if not isinstance(data, dict):
        raise SendError(f"answered {status} with {said}")
    if kind == "feishu":
        code, message = data.get("code", data.get("StatusCode")), data.get("msg")
        message = message or data.get("StatusMessage")
    else:
        code, message = data.get("errcode"), data.get("errmsg")
    if status == 200 and code == 0:
        return
    raise SendError(f"answered {status}, code {code}: {str(message or said)[:_ERROR_CHARS]}")


def send_email(mail: settings.Email, summary: Summary, timeout: float) -> str | None:
    """One e-mail to every address of the channel, through its SMTP server. Returns the
    addresses the server refused while it took the others (the mail is sent: sending it
    again would repeat it to them), else None; SendError when nobody got it."""
    import smtplib
    import ssl

    message = email_message(summary, mail.sender, mail.to)
    try:
        if mail.security == "ssl":
            context = ssl.create_default_context()
            smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                mail.host, mail.port, timeout=timeout, context=context
            )
        else:
            smtp = smtplib.SMTP(mail.host, mail.port, timeout=timeout)
        with smtp:
            if mail.security == "starttls":
                smtp.starttls(context=ssl.create_default_context())
            if mail.user:
                smtp.login(mail.user, mail.password or "")
            refused = smtp.send_message(message)
    except (smtplib.SMTPException, OSError) as error:  # the server's words, never the password
        said = " ".join(str(error).split())[:_ERROR_CHARS]
        raise SendError(f"SMTP {mail.host}:{mail.port}: {type(error).__name__}: {said}") from None
    return f"refused {', '.join(sorted(refused))}" if refused else None


# -- a run ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    sent: dict[str, int] = field(default_factory=dict)  # by channel: alerts delivered
    failed: dict[str, list[str]] = field(default_factory=dict)  # by channel: "KEY: why"

    @property
    def ok(self) -> bool:
        return not self.failed

    def problems(self) -> list[str]:
        """One line per channel that failed: how many, and the first reason."""
        return [
            f"notify {channel}: {len(errors)} alert{'s' if len(errors) > 1 else ''} not sent"
            f" ({errors[0]}); tried again on the next run"
            for channel, errors in self.failed.items()
        ]


# A channel's send: None when delivered, or a note on a delivery that was partly refused;
# SendError when not delivered.
Sender = Callable[[Summary], str | None]


def owed(
    conn: duckdb.DuckDBPyConnection,
    config: settings.NotifySettings,
    found: pd.DataFrame | None = None,
) -> list[tuple[str, list[str]]]:
    """The alerts some channel has not been told of yet, oldest first, each with those
    channels: alerts detected now, not triaged away, not before `since`, and (when
    asked) regressions only."""
    from perfboard import queries

    channels = config.channels
    if not channels:
        return []
    found = queries.alerts(conn) if found is None else found
    keep = ~found.status.isin(CLOSED)
    if config.since is not None:
        keep &= found.after_at.dt.date >= config.since
    if config.regressions_only:
        keep &= found.kind != "improvement"
    keys = list(found[keep].sort_values(["after_at", "alert_key"]).alert_key)
    done = set(
        conn.execute(
            "SELECT DISTINCT alert_key, channel FROM alert_notifications"
            " WHERE ok AND list_contains($keys, alert_key)",
            {"keys": keys},
        ).fetchall()
    )
    due = [(key, [c for c in channels if (key, c) not in done]) for key in keys]
    return [(key, missing) for key, missing in due if missing]


def notify_new(
    conn: duckdb.DuckDBPyConnection,
    config: settings.NotifySettings | None = None,
    clock: Callable[[], float] = time.time,
) -> Outcome:
    """Send every alert owed to each channel (owed) once, and record each try."""
    config = config if config is not None else settings.current().notify
    outcome = Outcome()
    if not config.channels:
        return outcome
    from perfboard import queries

    found = queries.alerts(conn)
    due = owed(conn, config, found)
    if not due:
        return outcome
    senders: dict[str, Sender] = {
        hook.kind: _hook_sender(hook, config.timeout, clock) for hook in config.webhooks
    }
    if config.email is not None:
        mail = config.email
        senders["email"] = lambda summary: send_email(mail, summary, config.timeout)
    for key, channels in due:
        summary = summarise(conn, key, config.dashboard_url, found)
        if summary is None:
            continue
        for channel in channels:
            try:
                note = senders[channel](summary)
            except SendError as error:
                _record(conn, key, channel, False, str(error))
                outcome.failed.setdefault(channel, []).append(f"alert {key}: {error}")
            else:
                _record(conn, key, channel, True, note)
                outcome.sent[channel] = outcome.sent.get(channel, 0) + 1
    return outcome


def _hook_sender(hook: settings.Webhook, timeout: float, clock: Callable[[], float]) -> Sender:
    def send(summary: Summary) -> None:
        post_webhook(hook, summary, timeout, clock())

    return send


def _record(
    conn: duckdb.DuckDBPyConnection, key: str, channel: str, ok: bool, error: str | None
) -> None:
    with db.transaction(conn) as changes:  # on a lake, under the writers' lock
        changes.touch("alert_notifications")  # no page reads it: none re-reads
        conn.execute(
            "INSERT INTO alert_notifications (alert_key, channel, sent_at, ok, error)"
            " VALUES (?, ?, ?, ?, ?)",
            [key, channel, datetime.now(UTC).replace(tzinfo=None), ok, error],
        )


def notify_and_say(conn: duckdb.DuckDBPyConnection, prog: str, quiet: bool = False) -> bool:
    """notify_new, said on stderr: what was sent (unless quiet) and one line per channel
    that failed (always). False when something was not sent: the command's exit status
    is then 1, as for a failed post; the detection stays stored."""
    outcome = notify_new(conn)
    if outcome.sent and not quiet:
        told = ", ".join(f"{channel} {n}" for channel, n in outcome.sent.items())
        print(f"{prog}: alerts sent: {told}", file=sys.stderr)
    for line in outcome.problems():
        print(f"{prog}: {line}", file=sys.stderr)
    return outcome.ok
