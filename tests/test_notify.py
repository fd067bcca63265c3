"""Alerts that reach people (perfboard/notify.py): each new alert once to every channel,
over real HTTP to a loopback receiver that answers (and checks signatures) as each vendor
does, and over real SMTP to aiosmtpd; failures recorded and sent once when they succeed."""

from __future__ import annotations

import base64
import email
import email.policy
import hashlib
import hmac
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from perfboard import alerts, db, notify, settings
from perfboard.__main__ import main as perfboard_main
from perfboard.errors import UsageError
from tests.conftest import ingest
from tests.test_alerts import START, nightly, sha

# The two alerts of tests/test_alerts.nightly (ERNIE on a P4, batch sizes 1 and 2, seed 7):
# 10 -> 9.5 ms after night 30 and 9.5 -> 8.4 ms after night 60, improvements both.
FIRST = alerts.alert_key("ernie", sha(29), sha(30), None)
SECOND = alerts.alert_key("ernie", sha(59), sha(60), None)
DASHBOARD = "https://perf.example.com"
FEISHU_SECRET = "feishu-signing-secret"
DINGTALK_SECRET = "SEC0123456789abcdef"
SECRET_PATHS = {  # the token part of each URL: never in a message, an error or a record
    "slack": "/services/T0001/B0001/slack-token-xyz",
    "feishu": "/open-apis/bot/v2/hook/feishu-token-xyz",
    "dingtalk": "/robot/send?access_token=dingtalk-token-xyz",
    "wecom": "/cgi-bin/webhook/send?key=wecom-token-xyz",
}
_CHANNEL_ENV = [
    f"PERFBOARD_{kind.upper()}_{part}"
    for kind in settings.WEBHOOK_KINDS
    for part in ("WEBHOOK", "SECRET")
] + ["PERFBOARD_SMTP_USER", "PERFBOARD_SMTP_PASSWORD"]


# -- the loopback bots ----------------------------------------------------------------------


@dataclass
class Received:
    vendor: str
    path: str
    query: dict[str, str]
    body: dict[str, Any]
    signed_ok: bool | None  # the signature checked as the vendor checks it; None: unsigned


@dataclass
class Receiver:
    """Chat-bot webhooks on 127.0.0.1:<free port>: Slack answers 200 "ok", Feishu
    {"code": 0}, DingTalk and WeCom {"errcode": 0}; Feishu's and DingTalk's signatures
    are checked as those vendors check them (a bad one gets their error). `fail` queues
    a vendor's error answer for its next messages."""

    base_url: str = ""
    received: list[Received] = field(default_factory=list)
    failures: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, vendor: str) -> str:
        return f"{self.base_url}{SECRET_PATHS[vendor]}"

    def fail(self, vendor: str, status: int, body: str, times: int = 1) -> None:
        with self.lock:
            self.failures.setdefault(vendor, []).extend([(status, body)] * times)

    def bodies(self, vendor: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r.body for r in self.received if r.vendor == vendor]

    def answer(self, path: str, raw: bytes) -> tuple[int, str, str]:
        split = urlsplit(path)
        vendor = next(v for v, p in SECRET_PATHS.items() if p.startswith(split.path))
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        body = json.loads(raw)
        signed_ok = _feishu_ok(body) if vendor == "feishu" else None
        if vendor == "dingtalk":
            signed_ok = _dingtalk_ok(query)
        with self.lock:
            self.received.append(Received(vendor, split.path, query, body, signed_ok))
            queued = self.failures.get(vendor)
            canned = queued.pop(0) if queued else None
        kind = "text/html" if vendor == "slack" else "application/json"
        if canned is not None:
            return canned[0], kind, canned[1]
        if vendor == "slack":
            return 200, "text/html", "ok"
        if vendor == "feishu":
            if signed_ok is False:
                failed = {"code": 19021, "data": {}, "msg": "sign match fail or timestamp is not"
                          " within one hour from current time"}  # fmt: skip
                return 200, kind, json.dumps(failed)
            return 200, kind, json.dumps({"code": 0, "data": {}, "msg": "success"})
        if vendor == "dingtalk" and not signed_ok:
            return 200, kind, json.dumps({"errcode": 310000, "errmsg": "sign not match"})
        return 200, kind, json.dumps({"errcode": 0, "errmsg": "ok"})


def _feishu_ok(body: dict[str, Any]) -> bool | None:
    """Feishu: sign = base64(HMAC-SHA256(key = "timestamp\\nsecret", message = "")), the
    timestamp in seconds and within an hour of now."""
    if "sign" not in body:
        return None
    stamp = body["timestamp"]
    key = f"{stamp}\n{FEISHU_SECRET}".encode()
    expected = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
    return body["sign"] == expected and abs(time.time() - int(stamp)) < 3600


def _dingtalk_ok(query: dict[str, str]) -> bool:
    """DingTalk: sign = base64(HMAC-SHA256(key = secret, "timestamp\\nsecret")), URL-encoded
    in the query (parse_qs decodes it), the timestamp in ms and within an hour of now."""
    if query.get("access_token") != "dingtalk-token-xyz" or "sign" not in query:
        return False
    stamp = query["timestamp"]
    message = f"{stamp}\n{DINGTALK_SECRET}".encode()
    digest = hmac.new(DINGTALK_SECRET.encode(), message, hashlib.sha256).digest()
    fresh = abs(time.time() * 1000 - int(stamp)) < 3_600_000
    return query["sign"] == base64.b64encode(digest).decode() and fresh


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    bots = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, kind, text = bots.answer(self.path, raw)
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    bots.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield bots
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- the store and the settings -------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Two alerts, not detected yet; PR 22494 merged between the sides of the second."""
    target = tmp_path / "notify.duckdb"
    path = nightly(tmp_path / "ernie.jsonl")
    assert ingest("results", str(path), "--db", str(target), "--no-detect") == 0
    conn = db.connect(target)
    conn.execute(
        "INSERT INTO pull_requests (repo, number, title, author, merged_at, origin, synced_at)"
        " VALUES ('PaddlePaddle/Paddle', 22494, 'Embedding_eltwise_layernorm Fuse', 'NHZlX',"
        " ?, 'test', now())",
        [START + timedelta(days=59, hours=12)],
    )
    conn.close()
    return target


@pytest.fixture
def configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """Write perfboard.toml and make it this process's settings (settings.current)."""
    for name in _CHANNEL_ENV:
        monkeypatch.delenv(name, raising=False)

    def write(text: str) -> Path:
        path = tmp_path / "perfboard.toml"
        path.write_text(text, encoding="utf-8")
        monkeypatch.setenv("PERFBOARD_CONFIG", str(path))
        settings.current.cache_clear()
        return path

    yield write
    settings.current.cache_clear()  # the next test reads its own


def webhooks_toml(bots: Receiver, *vendors: str) -> str:
    text = f'[notify]\ndashboard_url = "{DASHBOARD}"\n'
    for vendor in vendors:
        text += f'[notify.{vendor}]\nurl = "{bots.url(vendor)}"\n'
        if vendor == "feishu":
            text += f'secret = "{FEISHU_SECRET}"\n'
        if vendor == "dingtalk":
            text += f'secret = "{DINGTALK_SECRET}"\n'
    return text


def records(target: Path) -> list[tuple[str, str, bool, str | None]]:
    conn = db.connect(target, read_only=True)
    try:
        return conn.execute(
            "SELECT alert_key, channel, ok, error FROM alert_notifications"
            " ORDER BY sent_at, channel, alert_key"
        ).fetchall()
    finally:
        conn.close()


# -- the tests ------------------------------------------------------------------------------

FIRST_TITLE = "Improvement in ernie: -5.1% (1.05x faster than before), 2 series"
SECOND_TITLE = "Improvement in ernie: -11.8% (1.13x faster than before), 2 series"
SECOND_LARGEST = "ernie · latency · paddle · Tesla P4 · batch_size=2, seq_len=128: 9.487 → 8.371 ms"
SECOND_MOVED = (
    f"2 series moved between {sha(59)[:10]} (2020-02-29) and {sha(60)[:10]} (2020-03-01);"
    " confidence 1.000."
)
SUSPECT = "https://github.com/PaddlePaddle/Paddle/pull/22494"


def test_each_new_alert_goes_once_to_every_bot_in_its_format(
    store: Path, receiver: Receiver, configure, capsys
) -> None:
    configure(webhooks_toml(receiver, "slack", "feishu", "dingtalk", "wecom"))
    assert perfboard_main(["detect", "--db", str(store), "--no-notify"]) == 0
    assert receiver.received == [] and records(store) == []
    assert perfboard_main(["detect", "--db", str(store)]) == 0
    err = capsys.readouterr().err
    assert "perfboard: alerts sent: slack 2, feishu 2, dingtalk 2, wecom 2" in err
    assert all(r.signed_ok is not False for r in receiver.received)
    assert len(receiver.received) == 8

    # Slack: the fallback text, a header and mrkdwn sections; links as <url|text>.
    first, second = receiver.bodies("slack")
    assert first["text"] == f"perfboard: {FIRST_TITLE}"
    assert second["blocks"][0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": SECOND_TITLE},
    }
    section = second["blocks"][1]["text"]
    assert section["type"] == "mrkdwn"
    assert section["text"].split("\n") == [
        f"*Largest change:* {SECOND_LARGEST} (-11.8%)",
        SECOND_MOVED,
        "*Suspected pull requests* (merged between the two sides):",
        f"• <{SUSPECT}|PaddlePaddle/Paddle#22494> Embedding_eltwise_layernorm Fuse (NHZlX)",
    ]
    assert second["blocks"][2]["text"]["text"] == (
        f"<{DASHBOARD}/alerts?alert={SECOND}|Open the alert>"
    )
    assert "Suspected pull requests:* none known." in first["blocks"][1]["text"]["text"]

    # Feishu: a signed rich-text post, with the PR and the alert as link tags.
    [feishu] = [r for r in receiver.received if r.vendor == "feishu"][1:]
    assert feishu.signed_ok is True and feishu.body["msg_type"] == "post"
    post = feishu.body["content"]["post"]["zh_cn"]
    assert post["title"] == f"perfboard: {SECOND_TITLE}"
    assert post["content"][0] == [
        {"tag": "text", "text": f"Largest change: {SECOND_LARGEST} (-11.8%)"}
    ]
    assert {"tag": "a", "text": "PaddlePaddle/Paddle#22494", "href": SUSPECT} in post["content"][3]
    assert post["content"][-1] == [
        {"tag": "a", "text": "Open the alert", "href": f"{DASHBOARD}/alerts?alert={SECOND}"}
    ]

    # DingTalk: markdown, signed in the URL beside the robot's own access_token.
    [ding] = [r for r in receiver.received if r.vendor == "dingtalk"][1:]
    assert ding.signed_ok is True and ding.query["access_token"] == "dingtalk-token-xyz"
    assert ding.body["msgtype"] == "markdown"
    assert ding.body["markdown"]["title"] == f"perfboard: {SECOND_TITLE}"
    text = ding.body["markdown"]["text"]
    assert text.startswith(f"### perfboard: {SECOND_TITLE}\n")
    assert (
        f"- [PaddlePaddle/Paddle#22494]({SUSPECT}) Embedding_eltwise_layernorm Fuse (NHZlX)" in text
    )
    assert text.endswith(f"[Open the alert]({DASHBOARD}/alerts?alert={SECOND})")

    # WeCom: markdown content, the key kept in the URL.
    [wecom] = [r for r in receiver.received if r.vendor == "wecom"][1:]
    assert wecom.query == {"key": "wecom-token-xyz"} and wecom.body["msgtype"] == "markdown"
    content = wecom.body["markdown"]["content"]
    assert content == text  # the same Markdown as DingTalk's
    assert f"**Largest change:** {SECOND_LARGEST} (-11.8%)" in content  # batch_size as is

    # Recorded: each alert once per channel; a second detection sends nothing.
    done = records(store)
    assert sorted((k, c, ok) for k, c, ok, _ in done) == sorted(
        (k, c, True) for k in (FIRST, SECOND) for c in ("slack", "feishu", "dingtalk", "wecom")
    )
    assert perfboard_main(["detect", "--db", str(store)]) == 0
    assert len(receiver.received) == 8 and len(records(store)) == 8
    assert "alerts sent" not in capsys.readouterr().err


def test_a_failed_send_is_recorded_retried_and_sent_only_once(
    store: Path, receiver: Receiver, configure, capsys
) -> None:
    configure(webhooks_toml(receiver, "slack", "wecom"))
    receiver.fail("slack", 500, "internal_error")  # the first alert's message
    receiver.fail("wecom", 200, '{"errcode": 45009, "errmsg": "api freq out of limit"}', 2)
    assert perfboard_main(["detect", "--db", str(store), "--quiet"]) == 1  # detection stored
    err = capsys.readouterr().err
    problems = [line for line in err.splitlines() if "notify" in line]
    assert problems == [
        f"perfboard: notify slack: 1 alert not sent (alert {FIRST}: Slack answered 500:"
        " internal_error); tried again on the next run",
        f"perfboard: notify wecom: 2 alerts not sent (alert {FIRST}: answered 200, code 45009:"
        " api freq out of limit); tried again on the next run",
    ]
    kept = records(store)
    assert [(k, c, ok) for k, c, ok, _ in kept] == [
        (FIRST, "slack", False),
        (FIRST, "wecom", False),
        (SECOND, "slack", True),
        (SECOND, "wecom", False),
    ]
    assert kept[0][3] == "Slack answered 500: internal_error"
    for secret in ("slack-token-xyz", "wecom-token-xyz", receiver.base_url):
        assert secret not in err and not any(secret in (e or "") for *_, e in kept)
    conn = db.connect(store, read_only=True)
    assert conn.execute("SELECT count(*) FROM change_points").fetchone() == (4,)
    conn.close()

    # The next run sends what failed, and only that; the one after sends nothing.
    assert perfboard_main(["detect", "--db", str(store), "--quiet"]) == 0
    assert [b["text"] for b in receiver.bodies("slack")] == [
        f"perfboard: {FIRST_TITLE}",
        f"perfboard: {SECOND_TITLE}",
        f"perfboard: {FIRST_TITLE}",
    ]
    assert len(receiver.bodies("wecom")) == 4
    assert perfboard_main(["detect", "--db", str(store), "--quiet"]) == 0
    assert len(receiver.received) == 7
    delivered = [(k, c) for k, c, ok, _ in records(store) if ok]
    assert sorted(delivered) == sorted((k, c) for k in (FIRST, SECOND) for c in ("slack", "wecom"))


def test_a_wrong_signature_is_the_vendors_error_and_an_unreachable_bot_a_failed_send(
    store: Path, receiver: Receiver, configure, tmp_path: Path
) -> None:
    closed = socket.socket()  # bound and never listening: a connection there is refused
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    configure(
        f'[notify.feishu]\nurl = "{receiver.url("feishu")}"\nsecret = "not the bot\'s"\n'
        f'[notify.slack]\nurl = "http://127.0.0.1:{port}/services/T/B/slack-token-xyz"\n'
    )
    conn = db.connect(store)
    alerts.detect_store(conn)
    outcome = notify.notify_new(conn)
    assert outcome.sent == {}
    assert outcome.failed == {
        "feishu": [
            f"alert {key}: answered 200, code 19021: sign match fail or timestamp is not"
            " within one hour from current time"
            for key in (FIRST, SECOND)
        ],
        "slack": [f"alert {key}: could not connect" for key in (FIRST, SECOND)],
    }
    assert [r.signed_ok for r in receiver.received] == [False, False]
    conn.close()
    closed.close()


def test_triaged_away_older_and_improving_alerts_are_not_sent(store: Path, tmp_path: Path) -> None:
    conn = db.connect(store)
    alerts.detect_store(conn)
    toml = tmp_path / "owed.toml"
    hook = '[notify.wecom]\nurl = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k"\n'

    def owed(extra: str = "") -> list[tuple[str, list[str]]]:
        toml.write_text(f"[notify]\n{extra}\n{hook}")
        return notify.owed(conn, settings.load(toml).notify)

    assert owed() == [(FIRST, ["wecom"]), (SECOND, ["wecom"])]  # oldest first
    alerts.set_triage(conn, FIRST, "acknowledged", "", "xreki")
    assert owed() == [(FIRST, ["wecom"]), (SECOND, ["wecom"])]  # still worth telling
    alerts.set_triage(conn, FIRST, "invalid", "a noisy night", "xreki")
    assert owed() == [(SECOND, ["wecom"])]
    alerts.set_triage(conn, FIRST, "new", "", "xreki")
    assert owed("since = 2020-02-15") == [(SECOND, ["wecom"])]  # the first: 2020-01-31
    assert owed("regressions_only = true") == []  # both are improvements
    toml.write_text("[notify]\n")
    assert notify.owed(conn, settings.load(toml).notify) == []  # no channel: nothing owed
    conn.close()


# -- e-mail ---------------------------------------------------------------------------------


class _Mailbox:
    def __init__(self) -> None:
        self.envelopes: list[tuple[str, list[str], Message]] = []
        self.logins: list[tuple[bytes, bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        self.logins.append((auth_data.login, auth_data.password))
        ok = (auth_data.login, auth_data.password) == (b"perfboard", b"smtp-pass")
        return AuthResult(success=ok, handled=False)  # a refusal answers 535


class _LoopbackSMTP(Controller):
    """aiosmtpd on 127.0.0.1:<free port> (Controller itself wants a port number)."""

    def __init__(self, handler: _Mailbox, **kwargs: Any) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        super().__init__(handler, hostname="127.0.0.1", port=self._sock.getsockname()[1], **kwargs)

    def _create_server(self):  # type: ignore[override]
        return self.loop.create_server(self._factory_invoker, sock=self._sock)


@pytest.fixture
def mailbox() -> Iterator[tuple[_Mailbox, _LoopbackSMTP]]:
    box = _Mailbox()
    server = _LoopbackSMTP(box, authenticator=box.authenticate, auth_require_tls=False)
    server.start()
    try:
        yield box, server
    finally:
        server.stop()


def test_each_new_alert_is_one_email(
    store: Path, mailbox, configure, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, server = mailbox
    configure(
        f'[notify]\ndashboard_url = "{DASHBOARD}"\n[notify.email]\nhost = "127.0.0.1"\n'
        f'port = {server.port}\nsecurity = "plain"\nuser = "perfboard"\n'
        'from = "perfboard@example.com"\nto = ["perf-team@example.com", "xreki@example.com"]\n'
    )
    monkeypatch.setenv("PERFBOARD_SMTP_PASSWORD", "smtp-pass")  # a secret: from the env
    settings.current.cache_clear()
    assert perfboard_main(["detect", "--db", str(store), "--quiet"]) == 0
    assert box.logins == [(b"perfboard", b"smtp-pass")] * 2
    assert [(sender, to) for sender, to, _ in box.envelopes] == [
        ("perfboard@example.com", ["perf-team@example.com", "xreki@example.com"])
    ] * 2
    first, second = (message for *_, message in box.envelopes)
    # A long subject is folded onto a line of its own; Python's parser keeps the space
    # that starts it (a mail client's unfolding does not show it).
    assert first["Subject"].lstrip() == f"perfboard: {FIRST_TITLE}"
    assert second["Subject"].lstrip() == f"perfboard: {SECOND_TITLE}"
    assert second["To"] == "perf-team@example.com, xreki@example.com"
    plain, rich = (part.get_payload(decode=True).decode() for part in second.walk()
                   if part.get_content_maintype() == "text")  # fmt: skip
    assert plain.splitlines() == [
        f"perfboard: {SECOND_TITLE}",
        f"Largest change: {SECOND_LARGEST} (-11.8%)",
        SECOND_MOVED,
        "Suspected pull requests (merged between the two sides):",
        f"- PaddlePaddle/Paddle#22494 Embedding_eltwise_layernorm Fuse (NHZlX) {SUSPECT}",
        f"The alert: {DASHBOARD}/alerts?alert={SECOND}",
    ]
    assert f'<a href="{SUSPECT}">PaddlePaddle/Paddle#22494</a>' in rich
    assert f'<a href="{DASHBOARD}/alerts?alert={SECOND}">Open the alert</a>' in rich
    assert perfboard_main(["detect", "--db", str(store), "--quiet"]) == 0
    assert len(box.envelopes) == 2  # sent once
    assert [(k, c, ok) for k, c, ok, _ in records(store)] == [
        (FIRST, "email", True),
        (SECOND, "email", True),
    ]


def test_email_over_starttls_and_a_refused_login(
    store: Path, configure, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl makes the server's certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this server only
    box = _Mailbox()
    server = _LoopbackSMTP(
        box, tls_context=tls, require_starttls=True, authenticator=box.authenticate
    )
    server.start()
    try:
        toml = (
            f'[notify.email]\nhost = "127.0.0.1"\nport = {server.port}\nuser = "perfboard"\n'
            'from = "perfboard@example.com"\nto = "perf-team@example.com"\n'
        )
        configure(toml + 'password = "wrong"\n')
        conn = db.connect(store)
        alerts.detect_store(conn)
        outcome = notify.notify_new(conn)
        [error, _] = outcome.failed["email"]
        assert error.startswith(f"alert {FIRST}: SMTP 127.0.0.1:{server.port}:")
        assert "SMTPAuthenticationError: (535" in error and "wrong" not in error
        assert box.envelopes == []
        configure(toml + 'password = "smtp-pass"\n')  # STARTTLS is the default
        assert notify.notify_new(conn).sent == {"email": 2}
        assert [m["Subject"].lstrip() for *_, m in box.envelopes] == [
            f"perfboard: {FIRST_TITLE}",
            f"perfboard: {SECOND_TITLE}",
        ]
        assert notify.notify_new(conn).sent == {}
        conn.close()
    finally:
        server.stop()


# -- an ingest, and the settings ------------------------------------------------------------


def test_an_ingest_that_opens_alerts_sends_them(
    tmp_path: Path, receiver: Receiver, configure
) -> None:
    configure(webhooks_toml(receiver, "slack"))
    target = tmp_path / "ingest.duckdb"
    assert ingest("results", str(nightly(tmp_path / "ernie.jsonl")), "--db", str(target)) == 0
    assert [b["text"] for b in receiver.bodies("slack")] == [
        f"perfboard: {FIRST_TITLE}",
        f"perfboard: {SECOND_TITLE}",
    ]
    # The same nights measured again: re-detected, the same alerts, nobody told twice.
    again = nightly(tmp_path / "ernie.jsonl", seed=8)
    assert ingest("results", str(again), "--db", str(target)) == 0
    assert len(receiver.received) == 2
    receiver.fail("slack", 404, "no_service", times=10)
    third = nightly(tmp_path / "ernie.jsonl", levels=[(10.0, 30), (9.5, 30), (8.4, 30), (9.9, 30)])
    assert ingest("results", str(third), "--db", str(target)) == 1  # a new alert, not sent
    assert len(receiver.received) == 3


def test_notify_settings_are_checked_and_secrets_never_shown(
    configure, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = configure("")
    assert settings.load(path).notify.channels == []
    monkeypatch.setenv("PERFBOARD_SLACK_WEBHOOK", "https://hooks.slack.com/services/T/B/tok")
    loaded = settings.load(path).notify  # the environment alone turns a channel on
    assert loaded.channels == ["slack"] and "tok" not in repr(loaded)
    monkeypatch.setenv("PERFBOARD_SLACK_WEBHOOK", "ftp://hooks.slack.com/services/T/B/tok")
    with pytest.raises(UsageError) as raised:
        settings.load(path)
    assert str(raised.value) == (
        "PERFBOARD_SLACK_WEBHOOK is not an https URL (its value is not shown: it is a secret)"
    )
    monkeypatch.delenv("PERFBOARD_SLACK_WEBHOOK")
    cases = {
        '[notify.wecom]\nurl = "http://qyapi.weixin.qq.com/send?key=tok"\n': (
            f"{path}: notify.wecom.url is not an https URL (its value is not shown: it is a secret)"
        ),
        "[notify]\ndashbord_url = 'https://x'\n": f"{path}: notify.dashbord_url is not a setting",
        "[notify.feishu]\nurl = 'https://open.feishu.cn/x'\nsecert = 's'\n": (
            f"{path}: notify.feishu.secert is not a setting (known: secret, url)"
        ),
        "[notify]\nissue_repo = 'benchmark'\n": (
            f"{path}: notify.issue_repo = 'benchmark' is not OWNER/REPO"
        ),
        "[notify]\nsince = '2024-06-01'\n": f"{path}: notify.since = '2024-06-01' is not a date",
        "[notify.email]\nhost = 'smtp'\nfrom = 'a@b'\nto = ['x@y']\nsecurity = 'tls'\n": (
            f"{path}: notify.email.security = 'tls' is not one of starttls, ssl, plain"
        ),
        "[notify.email]\nhost = 'smtp'\nfrom = 'a@b'\n": (
            f"{path}: notify.email.to must be a list of addresses"
        ),
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(UsageError) as raised:
            settings.load(path)
        assert str(raised.value).startswith(message)
        assert "tok" not in str(raised.value)
    path.write_text(
        "[notify.email]\nhost = 'smtp.example.com'\nsecurity = 'ssl'\nfrom = 'a@b.c'\n"
        "to = 'team@b.c'\npassword = 'pw'\n"
    )
    mail = settings.load(path).notify.email
    assert mail is not None and (mail.port, mail.to) == (465, ("team@b.c",))
    assert "pw" not in repr(mail)
