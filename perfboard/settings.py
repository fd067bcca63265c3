"""perfboard.toml: the settings a team writes once, read by every command and page.

Today it holds the minimum effect of change detection: a change smaller than this is no
alert, however significant it is for the series' noise. Nobody acts on a 0.05 % step,
and a near-noiseless series makes one significant (p = 3.8e-167). Peers set the same
floor: Perfherder alerts from 2 %, LNT ignores changes under 1 %; perfboard's default is
1 %.

    [detect]
    min_change_pct = 1.0        # every series

    [detect.metric]             # by metric
    throughput = 2.0

    [detect.project]            # by project
    ernie = 0.5

    [detect.series]             # by series id (the Trends page lists them)
    "1234" = 5.0

The most specific wins: series, then project, then metric, then the default. The file is
$PERFBOARD_CONFIG, else perfboard.toml in the working directory; without one, the
defaults hold. A file that cannot be read is an error that names it, never ignored.

It also says where new alerts are sent (perfboard/notify.py) and where their issues are
filed (perfboard/alert_issue.py). Webhook URLs and secrets are secrets: each may come from
an environment variable instead (which wins over the file), and no message ever shows one.

    [notify]
    dashboard_url = "https://perf.example.com"   # an alert's link: .../alerts?alert=KEY
    issue_repo = "PaddlePaddle/benchmark"        # where `perfboard file-issue` files
    since = 2024-06-01                           # older alerts are not sent (optional)
    regressions_only = false
    timeout = 10                                 # seconds, per message

    [notify.slack]                               # PERFBOARD_SLACK_WEBHOOK
    url = "https://hooks.slack.com/services/..."
    [notify.feishu]                              # PERFBOARD_FEISHU_WEBHOOK, _SECRET
    url = "https://open.feishu.cn/open-apis/bot/v2/hook/..."
    secret = "..."                               # the bot's signing secret (optional)
    [notify.dingtalk]                            # PERFBOARD_DINGTALK_WEBHOOK, _SECRET
    url = "https://oapi.dingtalk.com/robot/send?access_token=..."
    secret = "SEC..."
    [notify.wecom]                               # PERFBOARD_WECOM_WEBHOOK
    url = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=..."
    [notify.email]                               # PERFBOARD_SMTP_USER, _PASSWORD
    host = "smtp.example.com"
    port = 587                                   # default: 587 starttls, 465 ssl, 25 plain
    security = "starttls"                        # or "ssl", or "plain" (a local relay)
    from = "perfboard@example.com"
    to = ["perf-team@example.com"]
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from perfboard.errors import UsageError

DEFAULT_MIN_CHANGE_PCT = 1.0
CONFIG_FILE = "perfboard.toml"


@dataclass(frozen=True, slots=True)
class DetectSettings:
    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT
    by_metric: dict[str, float] = field(default_factory=dict)
    by_project: dict[str, float] = field(default_factory=dict)
    by_series: dict[int, float] = field(default_factory=dict)

    def min_change_for(self, series_id: int, project: str, metric: str) -> float:
        """The minimum effect (%) of one series: the most specific setting."""
        for table, key in (
            (self.by_series, series_id),
            (self.by_project, project),
            (self.by_metric, metric),
        ):
            if key in table:
                return table[key]
        return self.min_change_pct


WEBHOOK_KINDS = ("slack", "feishu", "dingtalk", "wecom")
SIGNED_KINDS = ("feishu", "dingtalk")  # the bots that take a signing secret
EMAIL_SECURITY = {"starttls": 587, "ssl": 465, "plain": 25}  # and each one's usual port
DEFAULT_NOTIFY_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Webhook:
    kind: str  # one of WEBHOOK_KINDS: the format of its messages
    url: str = field(repr=False)  # secrets: never in a repr, a message or a log
    secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Email:
    host: str
    port: int
    security: str  # one of EMAIL_SECURITY
    sender: str
    to: tuple[str, ...]
    user: str | None = None
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class NotifySettings:
    dashboard_url: str | None = None  # the dashboard's base URL: alert links
    issue_repo: str | None = None  # OWNER/REPO alert issues are filed on
    since: date | None = None  # alerts whose change is older are not sent
    regressions_only: bool = False
    timeout: float = DEFAULT_NOTIFY_TIMEOUT
    webhooks: tuple[Webhook, ...] = ()
    email: Email | None = None

    @property
    def channels(self) -> list[str]:
        """The channels that are on, by name (what alert_notifications records)."""
        return [hook.kind for hook in self.webhooks] + (["email"] if self.email else [])


@dataclass(frozen=True, slots=True)
class Settings:
    detect: DetectSettings = field(default_factory=DetectSettings)
    path: Path | None = None  # the file they came from; None: the defaults
    notify: NotifySettings = field(default_factory=NotifySettings)


def config_path() -> Path | None:
    configured = os.environ.get("PERFBOARD_CONFIG")
    if configured:
        return Path(configured)
    default = Path(CONFIG_FILE)
    return default if default.exists() else None


def load(path: Path | None = None) -> Settings:
    """The settings of `path` (default: config_path()); the defaults without a file."""
    path = path if path is not None else config_path()
    if path is None:
        # No file, but a webhook or a mail password may still come from the environment.
        return Settings(notify=_notify({}, Path(CONFIG_FILE)))
    import tomllib  # only when there is a file: every ingest's detection reads settings

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: settings file not found (PERFBOARD_CONFIG)") from None
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: settings cannot be read: {e}") from None
    return Settings(
        _detect(data.get("detect", {}), path), path, _notify(data.get("notify", {}), path)
    )


@cache
def current() -> Settings:
    """The settings of this process, read once."""
    return load()


def _detect(table: object, path: Path) -> DetectSettings:
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [detect] must be a table")
    default = _percent(table.get("min_change_pct", DEFAULT_MIN_CHANGE_PCT), path, "min_change_pct")
    by = {}
    for name in ("metric", "project", "series"):
        sub = table.get(name, {})
        if not isinstance(sub, dict):
            raise UsageError(f"{path}: [detect.{name}] must be a table of percentages")
        by[name] = {k: _percent(v, path, f"detect.{name}.{k}") for k, v in sub.items()}
    try:
        series = {int(k): v for k, v in by["series"].items()}
    except ValueError:
        raise UsageError(f"{path}: [detect.series] keys are series ids (numbers)") from None
    return DetectSettings(default, by["metric"], by["project"], series)


def _percent(value: object, path: Path, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{path}: {where} = {value!r} is not a percentage")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise UsageError(f"{path}: {where} = {value!r} must be 0 or more")
    return number


# -- [notify] --------------------------------------------------------------------------------

_NOTIFY_KEYS = {"dashboard_url", "issue_repo", "since", "regressions_only", "timeout"}
_EMAIL_KEYS = {"host", "port", "security", "user", "password", "from", "to"}
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def _notify(table: object, path: Path) -> NotifySettings:
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [notify] must be a table")
    # A key misspelt here would silently turn a channel off: every key must be known.
    unknown = set(table) - _NOTIFY_KEYS - {*WEBHOOK_KINDS, "email"}
    if unknown:
        raise UsageError(
            f"{path}: notify.{sorted(unknown)[0]} is not a setting (known: "
            f"{', '.join(sorted(_NOTIFY_KEYS | {*WEBHOOK_KINDS, 'email'}))})"
        )
    dashboard = table.get("dashboard_url")
    if dashboard is not None and _http_url(dashboard, loopback_only=False) is None:
        raise UsageError(f"{path}: notify.dashboard_url = {dashboard!r} is not an http(s) URL")
    repo = table.get("issue_repo")
    if repo is not None and not (isinstance(repo, str) and _REPO.match(repo)):
        raise UsageError(f"{path}: notify.issue_repo = {repo!r} is not OWNER/REPO")
    since = table.get("since")
    if since is not None and (not isinstance(since, date) or hasattr(since, "hour")):
        raise UsageError(f"{path}: notify.since = {since!r} is not a date (since = 2024-06-01)")
    only = table.get("regressions_only", False)
    if not isinstance(only, bool):
        raise UsageError(f"{path}: notify.regressions_only = {only!r} is not true or false")
    timeout = table.get("timeout", DEFAULT_NOTIFY_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < 600:
        raise UsageError(f"{path}: notify.timeout = {timeout!r} is not a number of seconds")
    hooks = [_webhook(kind, table.get(kind), path) for kind in WEBHOOK_KINDS]
    return NotifySettings(
        dashboard_url=dashboard.rstrip("/") if dashboard else None,
        issue_repo=repo,
        since=since,
        regressions_only=only,
        timeout=float(timeout),
        webhooks=tuple(hook for hook in hooks if hook is not None),
        email=_email(table.get("email"), path),
    )


def _webhook(kind: str, table: object, path: Path) -> Webhook | None:
    """A bot's webhook: its URL (and secret) from PERFBOARD_<KIND>_WEBHOOK (_SECRET), else
    from [notify.<kind>]. Neither: that channel is off. No message shows the URL."""
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [notify.{kind}] must be a table (url = ...)")
    allowed = {"url", "secret"} if kind in SIGNED_KINDS else {"url"}
    unknown = set(table) - allowed
    if unknown:
        raise UsageError(
            f"{path}: notify.{kind}.{sorted(unknown)[0]} is not a setting"
            f" (known: {', '.join(sorted(allowed))})"
        )
    url_env, secret_env = f"PERFBOARD_{kind.upper()}_WEBHOOK", f"PERFBOARD_{kind.upper()}_SECRET"
    url, where = os.environ.get(url_env), url_env
    if not url:
        url, where = table.get("url"), f"{path}: notify.{kind}.url"
    if not url:
        return None
    if _http_url(url, loopback_only=True) is None:
        # Not the value: a webhook's URL is its password.
        raise UsageError(f"{where} is not an https URL (its value is not shown: it is a secret)")
    secret = None
    if kind in SIGNED_KINDS:
        secret = os.environ.get(secret_env) or table.get("secret")
        if secret is not None and not (isinstance(secret, str) and secret):
            raise UsageError(f"{path}: notify.{kind}.secret must be text (the bot's secret)")
    return Webhook(kind, url, secret or None)


def _email(table: object, path: Path) -> Email | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [notify.email] must be a table (host = ..., to = [...])")
    unknown = set(table) - _EMAIL_KEYS
    if unknown:
        raise UsageError(
            f"{path}: notify.email.{sorted(unknown)[0]} is not a setting"
            f" (known: {', '.join(sorted(_EMAIL_KEYS))})"
        )
    host = table.get("host")
    if not (isinstance(host, str) and host.strip()):
        raise UsageError(f"{path}: notify.email.host must name the SMTP server")
    security = table.get("security", "starttls")
    if not isinstance(security, str) or security not in EMAIL_SECURITY:
        raise UsageError(
            f"{path}: notify.email.security = {security!r} is not one of"
            f" {', '.join(EMAIL_SECURITY)}"
        )
    port = table.get("port", EMAIL_SECURITY[security])
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise UsageError(f"{path}: notify.email.port = {port!r} is not a port number")
    sender = table.get("from")
    if not (isinstance(sender, str) and "@" in sender):
        raise UsageError(f'{path}: notify.email.from must be an address (from = "x@example.com")')
    to = table.get("to")
    to = [to] if isinstance(to, str) else to
    if not to or not isinstance(to, list) or not all(isinstance(a, str) and "@" in a for a in to):
        raise UsageError(f"{path}: notify.email.to must be a list of addresses")
    user = os.environ.get("PERFBOARD_SMTP_USER") or table.get("user")
    if user is not None and not isinstance(user, str):
        raise UsageError(f"{path}: notify.email.user must be text")
    password = os.environ.get("PERFBOARD_SMTP_PASSWORD") or table.get("password")
    if password is not None and not isinstance(password, str):
        raise UsageError(f"{path}: notify.email.password must be text")
    return Email(host.strip(), port, security, sender, tuple(to), user or None, password or None)


def _http_url(url: object, loopback_only: bool) -> str | None:
    """An https URL with a host; http only for this machine when loopback_only (a relay
    or a test's receiver), for any host otherwise (a dashboard inside the network)."""
    if not isinstance(url, str) or any(c in url for c in "\x00\r\n\t <>\"'`"):
        return None
    parts = urlsplit(url)
    if not parts.hostname or parts.scheme not in ("https", "http"):
        return None
    local = parts.hostname in ("127.0.0.1", "localhost")
    if parts.scheme == "http" and loopback_only and not local:
        return None
    return url
