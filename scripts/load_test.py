"""Load test (issue 7): concurrent sessions of the real server while ingests write.

    python scripts/load_test.py [--clients 20] [--duration 300] [--ingest-every 30]
                                [--think 0.5-2] [--arrival MIN-MAX]
                                [--db bench-out/synthetic-10m.duckdb]
                                [--out bench-out/load.json] [--seed 7] [--port 0]

What it does:

1. Copies the store (default the 10 M-measurement one that scripts/make_synthetic.py and
   scripts/bench_pages.py build) into a temp folder: the ingests write to the copy. The
   synthetic store's series keys are placeholders (md5 of the id), so the copy's keys are
   set to the ones an ingest computes from each series' identity: new results then land on
   the existing series, as they would on a store that ingests built.
2. Starts the real server (scripts/serve.py, as `make run` does) on the copy and waits for
   /_stcore/health.
3. Runs --clients websocket clients of the server, each speaking Streamlit's own protocol
   (BackMsg / ForwardMsg protobufs of the installed streamlit): a session opens its first
   page as a deep link (ClientState.page_name = the page's url path, no page hash, as the
   frontend does for the URL it was opened at), learns every page's script hash from the
   Navigation message, and from then on moves between pages the way the sidebar does
   (ClientState.page_script_hash = the page's hash, page_name empty), each with query
   parameters taken from the store (a real phase, series, alert, profile run, op, week,
   source...), with a seeded think time of --think (0.5-2) s between pages, its first page
   --arrival s into each round (default 0 to think's most). Each session walks the
   pages lap after lap, its first lap in the sidebar's order from a page of its own (the
   sessions start spread over the pages), later laps shuffled; its walk goes on from
   round to round. Every page is run at least once by construction, not by chance: a
   round does not end while some page has not been run by any session (past its end,
   each session takes such a page instead of going on with its walk, each page going to
   one session), up to a hard cap (CATCH_UP_S past the load's end), after which each page
   still not run is an error, "never visited", named in the report.
4. Every --ingest-every s runs `python -m ingest results` on a new small result file (one
   new point, at a new version and time, for each of a fixed set of existing series).
5. Samples the server's RSS (the server process and its descendants) every 5 s, and once
   at the end of a 20 s pause after each of --rounds rounds of load (sessions closed; the
   next round's are new): RSS between bursts must not grow from round to round.

A page run's time is from sending rerun_script to its script_finished. Errors: a
connection that fails or drops, a run longer than 120 s, a script_finished that is not
FINISHED_SUCCESSFULLY, an exception element, an st.error alert, a run that drew no
element, a run that drew another page than asked, and a failed ingest. Exit status 1 when
there was any (2: the test could not run); the report goes to stdout and, as JSON, to --out
(the server's log beside it, as NAME-server.log). Its last line is the verdict of issue 16:
`page p50 X s, p95 Y s, errors N`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
from google.protobuf.message import DecodeError  # noqa: E402
from streamlit.proto.Alert_pb2 import Alert  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.Markdown_pb2 import Markdown  # noqa: E402
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidHandshake  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from perfboard import db as perfboard_db  # noqa: E402
from perfboard import ops, profiles, queries, report  # noqa: E402
from perfboard.model import canonical_json, series_key  # noqa: E402

DEFAULT_DB = ROOT / "bench-out" / "synthetic-10m.duckdb"
DEFAULT_OUT = ROOT / "bench-out" / "load.json"
RUN_TIMEOUT = 120.0  # seconds a page run may take before it counts as an error
THINK = (0.5, 2.0)  # seconds a person looks at a page before the next click
# Seconds of load clock past the load's end within which the sessions still run the pages
# none has run yet (see Coverage): generous, as a page that never ran is a failed load test.
CATCH_UP_S = 600.0
MEMORY_EVERY = 5.0  # seconds between RSS samples
IDLE_S = 20.0  # seconds of no page run after each round, before its idle RSS is read
SESSION_TTL_S = 5  # the server keeps a closed session this long (see start_server)
INGEST_SERIES = 100  # series that get a new point in each ingest round
SLOWEST = 12  # the slowest runs the report lists
FIRST_ERRORS = 3  # error details kept in the report for each kind of error and page
# ui.query's notices while an ingest holds the store: the previous data, or none yet.
UPDATING = "Updating: showing the data from before the ingest in progress"
NOT_READY = "The database is being updated"

# Every page app.py registers: title (its st.title) -> url path ("" is the default page).
PAGES: dict[str, str] = {
    "Overview": "",
    "Phases": "phases",
    "Trends": "trends",
    "Pull requests": "prs",
    "Compare": "compare",
    "Explain a change": "explain",
    "Profiles": "profiles",
    "Ops": "ops",
    "Alerts": "alerts",
    "Weekly report": "report",
    "Sources": "sources",
}


# A result record's series identity besides params and testbed (docs/results-format.md).
IDENTITY = ("project", "benchmark", "task", "metric", "unit", "direction", "framework", "device")


class LoadTestError(Exception):
    """The load test could not run as asked (no store, the server did not start...)."""


# -- the store: a copy, its series keys, and what the pages and ingests will ask for ----------


def copy_store(source: Path, folder: Path) -> Path:
    """The store and its WAL, copied: the ingests must not write to the original."""
    if not source.exists():
        raise LoadTestError(
            f"no store at {source}. Build the 10 M-measurement one as the benchmarks do: "
            "`python scripts/make_synthetic.py --out bench-out/synthetic-10m.duckdb`, then "
            "`python scripts/add_synthetic_profiles.py`, `python scripts/add_synthetic_ops.py` "
            "and `python -m perfboard detect --db bench-out/synthetic-10m.duckdb` (or run "
            "scripts/bench_pages.py, bench_profiles.py and bench_ops.py, which do the same); "
            "or pass another store with --db"
        )
    target = folder / "perfboard.duckdb"
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + ".wal"))
    return target


def align_series_keys(conn: duckdb.DuckDBPyConnection) -> int:
    """Give every series the key an ingest computes from its identity (ingest/results.py
    _register_series); returns how many changed. make_synthetic.py stores md5(id) instead,
    and an ingest would then start a second series beside each one it continues."""
    rows = conn.execute(
        "SELECT series_id, series_key, project, benchmark, task, metric, unit, direction,"
        " framework, device, params::VARCHAR, testbed::VARCHAR FROM series"
    ).fetchall()
    changed: list[tuple[int, str]] = []
    keys: set[str] = set()
    for series_id, old, *identity, params, testbed in rows:
        testbed_text = canonical_json({k: str(v) for k, v in json.loads(testbed).items()})
        key = series_key(*identity, canonical_json(json.loads(params)), testbed_text)
        if key in keys:
            raise LoadTestError(f"two series of the store have one identity ({key})")
        keys.add(key)
        if key != old:
            changed.append((int(series_id), key))
    if changed:
        new_keys = pa.table(  # noqa: F841 (DuckDB reads the local by its name)
            {"series_id": [c[0] for c in changed], "series_key": [c[1] for c in changed]}
        )
        conn.execute(
            "UPDATE series SET series_key = k.series_key FROM new_keys k"
            " WHERE series.series_id = k.series_id"
        )
    return len(changed)


@dataclass
class Pools:
    """What a person clicking through the store would ask each page for."""

    phase_ids: list[int] = field(default_factory=list)
    trends: list[dict[str, str]] = field(default_factory=list)
    pr_numbers: list[int] = field(default_factory=list)
    days: tuple[date, date] | None = None
    series_ids: list[int] = field(default_factory=list)  # with two measured points or more
    alert_keys: list[str] = field(default_factory=list)
    profile_runs: list[str] = field(default_factory=list)
    op_names: list[str] = field(default_factory=list)
    competitors: list[str] = field(default_factory=list)
    weeks: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    source_ids: list[int] = field(default_factory=list)


def gather_pools(conn: duckdb.DuckDBPyConnection, rng: random.Random) -> Pools:
    """Real values from the store, through the same queries the pages run; a few of each,
    so that sessions come back to the same views (as a team does) and caches matter."""
    catalog = queries.series_catalog(conn)
    measured = catalog[catalog.ok_points >= 2]
    pools = Pools()
    pools.phase_ids = [int(i) for i in queries.phases(conn).phase_id]
    for row in trend_rows(measured, rng).itertuples():
        view = {"metric": row.metric, "benchmark": row.benchmark}
        if row.device:
            view["device"] = row.device
        if isinstance(row.precision, str) and rng.random() < 0.5:
            view["precision"] = row.precision
        pools.trends.append(view)
    prs = queries.referenced_prs(conn)
    pools.pr_numbers = sorted({int(n) for n in prs.pr_number.dropna()})[-40:]
    if not measured.empty:
        pools.days = (measured["first"].min().date(), measured["last"].max().date())
        ids = [int(i) for i in measured.series_id]
        pools.series_ids = rng.sample(ids, min(30, len(ids)))
    pools.alert_keys = list(queries.alerts(conn).alert_key[:30])
    runs = queries.profile_runs(conn)
    pools.profile_runs = [
        profiles.run_key(int(r.source_id), int(r.run)) for r in runs.head(30).itertuples()
    ]
    matched, unmatched = ops.matched_results(conn, ops.METRICS)
    names = sorted(set(matched.op) | set(unmatched.op))
    pools.op_names = rng.sample(names, min(30, len(names)))
    pools.competitors = sorted(set(matched.theirs))
    mondays = queries.report_weeks(conn).monday
    pools.weeks = [report.week_label(m.date()) for m in mondays.head(20)]
    pools.projects = sorted(queries.projects(conn).project)
    pools.source_ids = [int(i) for i in queries.sources(conn).source_id][:40]
    return pools


def trend_rows(measured: pd.DataFrame, rng: random.Random, count: int = 30) -> pd.DataFrame:
    """Series to open in Trends: half of them models, half ops (the synthetic store holds
    four op series for each model one)."""
    is_op = measured.task.str.startswith("op")
    halves = [measured[~is_op], measured[is_op]]
    picked = [h.sample(min(count // 2, len(h)), random_state=rng.randrange(2**31)) for h in halves]
    return pd.concat(picked)


def maybe(rng: random.Random, chance: float) -> bool:
    return rng.random() < chance


def params_for(page: str, pools: Pools, rng: random.Random) -> dict[str, str]:
    """The query parameters of one visit of `page`: what a link or a pick would set."""
    if page == "Phases" and pools.phase_ids:
        return {"phase": str(rng.choice(pools.phase_ids)), "x": rng.choice(["order", "date"])}
    if page == "Trends" and pools.trends:
        x = rng.choices(["time", "version", "batch_size"], weights=[7, 2, 1])[0]
        return {**rng.choice(pools.trends), "x": x}
    if page == "Pull requests" and pools.pr_numbers and maybe(rng, 0.7):
        return {"pr": str(rng.choice(pools.pr_numbers))}
    if page == "Compare":
        return compare_params(pools, rng)
    if page == "Explain a change":
        if pools.alert_keys and maybe(rng, 0.7):
            return {"alert": rng.choice(pools.alert_keys)}
        if pools.series_ids:
            return {"series": str(rng.choice(pools.series_ids))}
    if page == "Profiles" and pools.profile_runs:
        run = rng.choice(pools.profile_runs)
        others = [r for r in pools.profile_runs if r != run]
        if others and maybe(rng, 0.5):
            return {"run": run, "vs": rng.choice(others)}
        return {"run": run}
    if page == "Ops" and pools.op_names and maybe(rng, 0.7):
        chosen = {"op": rng.choice(pools.op_names)}
        return chosen | ({"vs": rng.choice(pools.competitors)} if pools.competitors else {})
    if page == "Alerts" and pools.alert_keys and maybe(rng, 0.6):
        return {"alert": rng.choice(pools.alert_keys)}
    if page == "Weekly report" and pools.weeks:
        chosen = {"week": rng.choice(pools.weeks)}
        if pools.projects and maybe(rng, 0.5):
            chosen["project"] = rng.choice(pools.projects)
        return chosen
    if page == "Sources" and pools.source_ids:
        chosen = {"source": str(rng.choice(pools.source_ids))}
        return chosen | ({"line": str(rng.randint(1, 50))} if maybe(rng, 0.2) else {})
    return {}


def compare_params(pools: Pools, rng: random.Random) -> dict[str, str]:
    part = rng.choice(["Two versions", "Paired variants", "Attribution"])
    if part == "Two versions" and pools.days:
        first, last = pools.days
        b = last - timedelta(days=rng.randint(0, 60))
        a = max(first, b - timedelta(days=rng.choice([7, 30, 90])))
        return {
            "part": part,
            "a_kind": "date",
            "a": a.isoformat(),
            "b_kind": "date",
            "b": b.isoformat(),
        }
    if part == "Attribution" and pools.series_ids:
        return {"part": part, "series": str(rng.choice(pools.series_ids))}
    return {"part": "Paired variants", "dim": rng.choice(["framework", "precision"])}


@dataclass
class IngestSeries:
    """A series each ingest round gives a new point: its identity as a result record."""

    identity: dict[str, Any]
    last_value: float


def ingest_series(
    conn: duckdb.DuckDBPyConnection, pools: Pools, rng: random.Random
) -> tuple[list[IngestSeries], datetime]:
    """The series the ingests continue: each project's headline series (the Overview shows
    them), those the Trends views draw, and others at random; and the newest time stored."""
    wanted = {int(i) for i in queries.headline_series(conn).series_id}
    for view in pools.trends:
        found = conn.execute(
            "SELECT series_id FROM series WHERE metric = ? AND benchmark = ? LIMIT 3",
            [view["metric"], view["benchmark"]],
        ).fetchall()
        wanted |= {int(r[0]) for r in found}
    every = [int(r[0]) for r in conn.execute("SELECT series_id FROM series").fetchall()]
    rest = sorted(set(every) - wanted)
    wanted |= set(rng.sample(rest, max(0, min(len(rest), INGEST_SERIES - len(wanted)))))
    conn.execute(
        "CREATE TEMP TABLE _wanted AS SELECT unnest(?::BIGINT[]) AS series_id", [sorted(wanted)]
    )
    rows = conn.execute(
        """
        SELECT s.project, s.benchmark, s.task, s.metric, s.unit, s.direction, s.framework,
               s.device, s.params::VARCHAR, s.testbed::VARCHAR,
               arg_max(m.value, m.measured_at) FILTER (WHERE m.status = 'ok')
        FROM series s JOIN _wanted USING (series_id) JOIN measurements m USING (series_id)
        GROUP BY ALL ORDER BY min(s.series_id)
        """
    ).fetchall()
    newest = conn.execute("SELECT max(measured_at) FROM measurements").fetchone()[0]
    chosen = []
    for *names, params, testbed, value in rows:
        identity = dict(zip(IDENTITY, names, strict=True))
        identity |= {"params": json.loads(params), "testbed": json.loads(testbed)}
        chosen.append(IngestSeries(identity, float(value) if value is not None else 10.0))
    return chosen, newest or datetime(2021, 1, 1)


def write_round(
    path: Path, series: list[IngestSeries], round_no: int, newest: datetime, seed: int
) -> int:
    """One nightly result file in perfboard's format (docs/results-format.md): a new
    commit, a day after the last, a point for each series near its last value."""
    rng = random.Random(seed * 1_000 + round_no)
    version = hashlib.sha1(f"load-test {seed} round {round_no}".encode()).hexdigest()
    at = (newest + timedelta(days=round_no)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(path, "w", encoding="utf-8") as out:
        for s in series:
            record = {
                "schema": "perfboard.result/1",
                **s.identity,
                "version": version,
                "time": at,
                "value": round(s.last_value * (1 + 0.02 * (rng.random() - 0.5)), 6),
                "status": "ok",
                "samples": 100,
                "warmup": 1,
                "stats": {},
                "run": 0,
            }
            out.write(json.dumps(record) + "\n")
    return len(series)


# -- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """perfboard served as `make run` serves it, on the copy."""
    with open(log, "wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "scripts" / "serve.py"),
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--server.headless",
                "true",
                "--browser.gatherUsageStats",
                "false",
                # A closed session's state is kept this long for a reconnect (default
                # 120 s): shorter than a pause, so the idle RSS after a round is the
                # server's without that round's sessions.
                "--server.disconnectedSessionTTL",
                str(SESSION_TTL_S),
            ],
            cwd=ROOT,
            env={**os.environ, "PERFBOARD_DB": str(db)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def wait_healthy(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LoadTestError(f"the server exited ({proc.returncode}):\n{tail(log)}")
        health = f"http://127.0.0.1:{port}/_stcore/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.3)
    raise LoadTestError(
        f"the server did not answer /_stcore/health in {timeout:.0f} s:\n{tail(log)}"
    )


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def rss_tree_mb(pid: int) -> tuple[float, int]:
    """RSS of a process and all its descendants (MB), and how many processes that is."""
    total_kb, count, todo = 0, 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue  # gone meanwhile
        count += 1
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return total_kb / 1024, count


# -- one session: Streamlit's websocket protocol ------------------------------------------------


@dataclass
class PageRun:
    session: int
    page: str
    query: str
    started: float  # seconds since the load began
    seconds: float
    elements: int = 0  # new elements drawn in the page's main area
    # connection failed / dropped, timeout, protocol, script status, exception, st.error,
    # page not found, empty page, wrong page
    error: str | None = None
    message: str = ""
    exception: str = ""
    updating: bool = False  # served the data from before the ingest in progress
    not_ready: bool = False  # an ingest held the store and nothing was cached yet


@dataclass
class RunState:
    """What the messages of one run said."""

    title: str = ""
    ran_hash: str = ""
    elements: int = 0
    status: int | None = None
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # kind, message, detail
    updating: bool = False
    not_ready: bool = False


def rerun_message(query: str, page_hash: str, page_name: str, port: int, path: str) -> bytes:
    """The BackMsg the frontend sends to run a page (see sendRerunBackMsg in its bundle)."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query
    state.page_script_hash = page_hash
    state.page_name = page_name
    info = state.context_info
    info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
    info.url = f"http://127.0.0.1:{port}/{path}" + (f"?{query}" if query else "")
    info.is_embedded = False
    return msg.SerializeToString()


def read_message(state: RunState, fm: ForwardMsg, started: bool) -> bool:
    """Note one ForwardMsg in `state`; True when it is the run's script_finished. Messages
    before the run's new_session belong to the previous run and are skipped."""
    kind = fm.WhichOneof("type")
    if kind == "script_finished":
        if started:
            state.status = fm.script_finished
        return started
    if not started:
        return False
    if kind == "navigation":
        state.ran_hash = fm.navigation.page_script_hash
    elif kind == "page_not_found":
        state.errors.append(("page not found", f"no page {fm.page_not_found.page_name!r}", ""))
    elif kind == "session_event" and fm.session_event.HasField("script_compilation_exception"):
        exc = fm.session_event.script_compilation_exception
        state.errors.append(("exception", exc.message, "\n".join(exc.stack_trace)))
    elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
        read_element(state, fm.delta.new_element, list(fm.metadata.delta_path))
    return False


def read_element(state: RunState, element: Any, path: list[int]) -> None:
    kind = element.WhichOneof("type")
    if path and path[0] == 0:  # the main area; 1 is the sidebar
        state.elements += 1
    if kind == "heading" and element.heading.tag == "h1" and not state.title:
        state.title = element.heading.body
    elif kind == "exception":
        exc = element.exception
        detail = "\n".join(exc.stack_trace[-8:])
        state.errors.append(("exception", f"{exc.type}: {exc.message}", detail))
    elif kind == "alert":
        body = element.alert.body
        if element.alert.format == Alert.ERROR:
            state.errors.append(("st.error", body[:500], ""))
        elif element.alert.format == Alert.INFO and body.startswith(NOT_READY):
            state.not_ready = True
    elif kind == "markdown" and element.markdown.element_type == Markdown.CAPTION:
        state.updating |= element.markdown.body.startswith(UPDATING)


class Coverage:
    """The pages no session has started a run of yet, shared by the sessions of a load:
    each page is run at least once by construction (see Session.loop). Until the load
    clock reaches `cap`; a page still missing then is named as an error in the report."""

    def __init__(self, pages: list[str], cap: float) -> None:
        self.missing: dict[str, None] = dict.fromkeys(pages)  # in the sidebar's order
        self.cap = cap

    def started(self, page: str) -> None:
        self.missing.pop(page, None)

    def take(self, now: float) -> str | None:
        """A page no session has started yet, now this session's to run; None when there
        is none left, or past the cap."""
        if not self.missing or now >= self.cap:
            return None
        page = next(iter(self.missing))
        self.started(page)
        return page


class Session:
    """One visitor: a websocket of the server, clicking through every page."""

    def __init__(
        self,
        number: int,
        port: int,
        pools: Pools,
        seed: int,
        clock: Callable[[], float],
        sessions: int,
        coverage: Coverage,
        think: tuple[float, float] = THINK,
        arrival: tuple[float, float] | None = None,
    ) -> None:
        self.number = number
        self.port = port
        self.pools = pools
        self.rng = random.Random(seed * 10_007 + number)
        self.clock = clock
        self.coverage = coverage
        self.ws: ClientConnection | None = None
        self.hashes: dict[str, str] = {}  # page title -> page script hash, from Navigation
        self.runs: list[PageRun] = []
        self.reconnects = 0
        # The rest of this lap of the walk: the first in the sidebar's order from a page of
        # this session's own, so that the sessions start spread over the pages.
        start = number * len(PAGES) // sessions
        self.lap: list[str] = list(PAGES)[start:] + list(PAGES)[:start]
        self.arrival, self.think = arrival or (0.0, think[1]), think

    async def connect(self) -> None:
        url = f"ws://127.0.0.1:{self.port}/_stcore/stream"
        # As the browser: the "streamlit" subprotocol, same-origin, no client pings (a
        # browser answers the server's pings but sends none), and no frame size cap (a
        # page's data frames are sent whole; the server caps them at 200 MB).
        self.ws = await connect(
            url,
            subprotocols=[Subprotocol("streamlit")],
            origin=f"http://127.0.0.1:{self.port}",  # type: ignore[arg-type]
            max_size=None,
            ping_interval=None,
            open_timeout=30,
            close_timeout=5,
        )
        self.hashes = {}  # a new session: open the next page as a deep link again

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
            self.ws = None

    async def visit(self, page: str, started: float) -> PageRun:
        self.coverage.started(page)  # a run once started always ends, in a verdict
        query = urllib.parse.urlencode(params_for(page, self.pools, self.rng))
        run = PageRun(self.number, page, query, started, 0.0)
        state = RunState()
        began = time.perf_counter()
        try:
            if self.ws is None:
                await self.connect()
            await asyncio.wait_for(self.run_page(page, query, state), RUN_TIMEOUT)
        except TimeoutError:
            run.error, run.message = "timeout", f"no script_finished within {RUN_TIMEOUT:.0f} s"
        except (ConnectionClosed, InvalidHandshake, OSError) as error:
            kind = (
                "connection dropped" if isinstance(error, ConnectionClosed) else "connection failed"
            )
            run.error, run.message = kind, f"{type(error).__name__}: {error}"
        except DecodeError as error:  # a frame that is no ForwardMsg
            run.error, run.message = "protocol", f"not a ForwardMsg: {error}"
        run.seconds = time.perf_counter() - began
        if run.error:  # the next visit starts a new session, as a reloaded tab would
            await self.close()
            self.reconnects += 1
        else:
            judge(run, state, page, self.hashes.get(page, ""))
        self.runs.append(run)
        return run

    async def run_page(self, page: str, query: str, state: RunState) -> None:
        assert self.ws is not None
        if self.hashes:  # a click in the sidebar: the page's hash, no name
            page_hash, name = self.hashes[page], ""
        else:  # the URL the tab was opened at: its path names the page
            page_hash, name = "", PAGES[page]
        await self.ws.send(rerun_message(query, page_hash, name, self.port, PAGES[page]))
        started = False
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await self.ws.recv(decode=False))
            if fm.WhichOneof("type") == "new_session":
                started = True
            if fm.WhichOneof("type") == "navigation" and started:
                self.learn_pages(fm)
            if read_message(state, fm, started):
                return

    def learn_pages(self, fm: ForwardMsg) -> None:
        by_path = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
        if set(by_path) != set(PAGES.values()):
            raise LoadTestError(
                f"app.py registers the pages {sorted(by_path)}, this script knows "
                f"{sorted(PAGES.values())}: update PAGES in scripts/load_test.py"
            )
        self.hashes = {title: by_path[path] for title, path in PAGES.items()}

    def next_page(self) -> str:
        """The next page of the walk: lap after lap, each lap after the first shuffled."""
        if not self.lap:
            self.lap = list(PAGES)
            self.rng.shuffle(self.lap)
        return self.lap.pop(0)

    async def loop(self, until: float) -> None:
        """One round: the walk, one page at least, until `until` (load clock); then, while
        some page has been run by no session yet, such a page (Coverage.take), so that the
        round does not end before every page has run, however slow the pages are."""
        await asyncio.sleep(self.rng.uniform(*self.arrival))  # Config.arrival
        page: str | None = self.next_page()
        while page is not None:
            await self.visit(page, self.clock())
            await asyncio.sleep(self.rng.uniform(*self.think))
            now = self.clock()
            page = self.next_page() if now < until else self.coverage.take(now)
        await self.close()


def judge(run: PageRun, state: RunState, page: str, expected_hash: str) -> None:
    """A finished run's verdict: the first error its messages showed, if any."""
    run.elements, run.updating, run.not_ready = state.elements, state.updating, state.not_ready
    if state.errors:
        run.error, run.message, run.exception = state.errors[0]
    elif state.status != ForwardMsg.FINISHED_SUCCESSFULLY:
        run.error, run.message = "script status", f"script_finished status {state.status}"
    elif state.elements == 0:
        run.error, run.message = "empty page", "the run drew no element"
    elif state.title != page or (expected_hash and state.ran_hash != expected_hash):
        run.error = "wrong page"
        run.message = f"asked for {page}, drew {state.title!r} (page hash {state.ran_hash})"


# -- ingests and memory -------------------------------------------------------------------------


@dataclass
class IngestRun:
    round: int
    started: float
    seconds: float
    exit_code: int | None
    records: int
    output: str = ""


async def ingest_loop(
    db: Path,
    folder: Path,
    series: list[IngestSeries],
    newest: datetime,
    every: float,
    until: float,
    seed: int,
    clock: Callable[[], float],
    done: list[IngestRun],
) -> None:
    """An ingest every `every` s of the load clock, one at a time (ingest is the only
    writer: a second would only wait on the first's lock)."""
    round_no = 0
    while True:
        round_no += 1
        due = round_no * every
        if due >= until:
            return
        await asyncio.sleep(max(0.0, due - clock()))
        path = folder / f"load-round-{round_no:03d}.jsonl"
        records = write_round(path, series, round_no, newest, seed)
        began, at = time.perf_counter(), clock()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ingest",
            "results",
            str(path),
            "--db",
            str(db),
            "--quiet",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await proc.communicate()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        text = output.decode(errors="replace").strip()
        done.append(
            IngestRun(
                round_no, at, time.perf_counter() - began, proc.returncode, records, text[-2000:]
            )
        )


async def memory_loop(
    pid: int,
    clock: Callable[[], float],
    stop: asyncio.Event,
    samples: list[tuple[float, float, int]],
) -> None:
    while True:
        mb, count = rss_tree_mb(pid)
        samples.append((round(clock(), 1), round(mb, 1), count))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), MEMORY_EVERY)
            return


# -- the whole load and its report ----------------------------------------------------------


@dataclass
class Config:
    clients: int = 20
    duration: float = 300.0
    ingest_every: float = 30.0
    db: Path = DEFAULT_DB
    out: Path | None = DEFAULT_OUT
    seed: int = 7
    port: int = 0
    rounds: int = 3
    idle: float = IDLE_S
    think: tuple[float, float] = THINK  # seconds between a session's pages, least and most
    # Seconds into a round a session opens its first page, least and most. None: 0 to
    # think's most, the sessions spread as they are between rounds (each one somewhere in
    # its pause between two pages). A narrow range, as 0-2, is a stampede: every session
    # opening a cold view in the same two seconds.
    arrival: tuple[float, float] | None = None


async def drive(
    config: Config,
    db: Path,
    folder: Path,
    port: int,
    pid: int,
    pools: Pools,
    series: list[IngestSeries],
    newest: datetime,
) -> dict[str, Any]:
    t0 = time.perf_counter()

    def clock() -> float:
        return time.perf_counter() - t0

    coverage = Coverage(list(PAGES), cap=config.duration + CATCH_UP_S)
    sessions = [
        Session(
            i,
            port,
            pools,
            config.seed,
            clock,
            config.clients,
            coverage,
            config.think,
            config.arrival,
        )
        for i in range(config.clients)
    ]
    ingests: list[IngestRun] = []
    samples: list[tuple[float, float, int]] = []
    stop = asyncio.Event()
    memory = asyncio.create_task(memory_loop(pid, clock, stop, samples))
    ingest = asyncio.create_task(
        ingest_loop(
            db,
            folder,
            series,
            newest,
            config.ingest_every,
            config.duration,
            config.seed,
            clock,
            ingests,
        )
    )
    idle: list[dict[str, float]] = []
    try:
        # Rounds of load, each followed by a pause with no page run: the server's RSS at
        # the end of each pause is what it keeps between bursts of sessions (their
        # websockets closed; the next round's sessions are new ones). Those must not grow
        # from round to round: RSS under load swings by a gigabyte with what the running
        # pages hold at that moment, which hides a slow leak.
        for number in range(1, config.rounds + 1):
            until = config.duration * number / config.rounds
            await asyncio.gather(*(s.loop(until) for s in sessions))
            await asyncio.sleep(config.idle)
            mb, _ = rss_tree_mb(pid)
            idle.append({"after_round": number, "at_s": round(clock(), 1), "rss_mb": round(mb, 1)})
            t0 -= config.idle  # the load clock stands still in a pause: ingests keep their pace
        await ingest  # the last round, if one is running
    finally:
        ingest.cancel()  # interrupted: an ingest in flight is killed, not left running
        with contextlib.suppress(asyncio.CancelledError):
            await ingest
        stop.set()
        await memory
        for s in sessions:
            await s.close()
    result = summarise(config, clock(), sessions, ingests, samples)
    result["memory"]["idle_after_rounds"] = idle
    # The trend of the idle RSS from round 2 on (round 1 fills the caches): a leak is a
    # steady climb; what the pages and allocator hold at a given moment comes and goes.
    warm = [(float(p["after_round"]), p["rss_mb"]) for p in idle[1:]]
    result["memory"]["idle_slope_mb_per_round"] = rounded(least_squares_slope(warm), 1)
    return result


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0-100); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def times(values: list[float]) -> dict[str, float | None]:
    return {
        "p50": rounded(percentile(values, 50)),
        "p95": rounded(percentile(values, 95)),
        "max": rounded(max(values, default=None)),
        "mean": rounded(statistics.fmean(values) if values else None),
    }


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def least_squares_slope(points: list[tuple[float, float]]) -> float | None:
    """The least-squares slope of y on x; None for fewer than two points."""
    if len(points) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    spread = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / spread if spread else None


def slope_mb_per_min(samples: list[tuple[float, float, int]], since: float) -> float | None:
    """Least-squares slope of RSS over time, from `since` on (warm-up left out)."""
    points = [(t / 60, mb) for t, mb, _ in samples if t >= since]
    return least_squares_slope(points) if len(points) >= 3 else None


def memory_report(samples: list[tuple[float, float, int]], duration: float) -> dict[str, Any]:
    if not samples:
        return {"samples": []}
    mbs = [mb for _, mb, _ in samples]
    per_minute = []
    for minute in range(int(samples[-1][0] // 60) + 1):
        nearest = min(samples, key=lambda s, m=minute: abs(s[0] - 60 * m))
        per_minute.append({"minute": minute, "rss_mb": nearest[1]})
    slope = slope_mb_per_min(samples, duration / 2)
    return {
        "every_s": MEMORY_EVERY,
        "first_mb": mbs[0],
        "last_mb": mbs[-1],
        "min_mb": min(mbs),
        "max_mb": max(mbs),
        "processes": max(c for _, _, c in samples),
        "per_minute": per_minute,
        "slope_mb_per_min_second_half": rounded(slope, 2),
        "samples": [[t, mb] for t, mb, _ in samples],
    }


def _run_entry(run: PageRun) -> dict[str, Any]:
    return {
        "page": run.page,
        "query": run.query,
        "at_s": round(run.started, 1),
        "seconds": round(run.seconds, 3),
        "error": run.error,
    }


def summarise(
    config: Config,
    elapsed: float,
    sessions: list[Session],
    ingests: list[IngestRun],
    samples: list[tuple[float, float, int]],
) -> dict[str, Any]:
    runs = [r for s in sessions for r in s.runs]
    errors = [r for r in runs if r.error]
    failed_ingests = [i for i in ingests if i.exit_code != 0]
    by_page: dict[str, list[PageRun]] = defaultdict(list)
    for r in runs:
        by_page[r.page].append(r)
    # Only past the hard cap (Coverage): each such page is an error, named.
    never = [page for page in PAGES if not by_page.get(page)]
    pages = {}
    for page in PAGES:
        mine = by_page.get(page, [])
        ok = [r for r in mine if not r.error]
        pages[page] = {
            "runs": len(mine),
            "errors": len(mine) - len(ok),
            **times([r.seconds for r in ok]),
            "elements_min": min((r.elements for r in ok), default=0),
            "elements_median": statistics.median([r.elements for r in ok]) if ok else 0,
        }
    details = [
        {
            "session": r.session,
            "page": r.page,
            "query": r.query,
            "at_s": round(r.started, 1),
            "kind": r.error,
            "message": r.message,
            "exception": r.exception,
        }
        for r in first_of_each(errors)
    ]
    ingest_errors = [
        {
            "round": i.round,
            "at_s": round(i.started, 1),
            "exit_code": i.exit_code,
            "output": i.output,
        }
        for i in failed_ingests[:FIRST_ERRORS]
    ]
    durations = [i.seconds for i in ingests]
    return {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
        "elapsed_s": round(elapsed, 1),
        "page_runs": len(runs),
        "errors": {
            "count": len(errors) + len(failed_ingests) + len(never),
            "page_errors": len(errors),
            "ingest_failures": len(failed_ingests),
            "never_visited": never,
            "by_kind": dict(Counter(r.error for r in errors))
            | ({"ingest failed": len(failed_ingests)} if failed_ingests else {})
            | ({"never visited": len(never)} if never else {}),
            "first": details,
            "first_ingest_failures": ingest_errors,
        },
        "page_time_s": times([r.seconds for r in runs if not r.error]),
        "pages": pages,
        # The runs behind the p95: which page, view and moment (after an ingest? at the
        # start of a round, when every session opens a page at once?). Every run is kept,
        # in the order they started, to see what the slow ones ran beside.
        "slowest": [
            _run_entry(r) for r in sorted(runs, key=lambda r: r.seconds, reverse=True)[:SLOWEST]
        ],
        "runs": [_run_entry(r) for r in sorted(runs, key=lambda r: r.started)],
        "sessions": {
            "count": len(sessions),
            "runs": [len(s.runs) for s in sessions],
            "reconnects": sum(s.reconnects for s in sessions),
        },
        "ingests": {
            "count": len(ingests),
            "failed": len(failed_ingests),
            "records_each": ingests[0].records if ingests else 0,
            **{f"seconds_{k}": v for k, v in times(durations).items()},
            "runs": [
                {
                    "round": i.round,
                    "at_s": round(i.started, 1),
                    "seconds": round(i.seconds, 2),
                    "exit_code": i.exit_code,
                }
                for i in ingests
            ],
        },
        "before_ingest": {
            "updating_runs": sum(r.updating for r in runs),
            "not_ready_runs": sum(r.not_ready for r in runs),
        },
        "memory": memory_report(samples, config.duration),
    }


def first_of_each(errors: list[PageRun]) -> list[PageRun]:
    """The first few errors of each kind on each page: one slow page's timeouts must not
    hide another page's exception."""
    seen: Counter[tuple[str | None, str]] = Counter()
    kept = []
    for run in errors:
        seen[(run.error, run.page)] += 1
        if seen[(run.error, run.page)] <= FIRST_ERRORS:
            kept.append(run)
    return kept


def server_log_problems(log: Path) -> dict[str, Any]:
    """Tracebacks the server logged: a cross-check of the errors the sessions saw."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    blocks = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            end = i + 1
            while end < len(lines) and lines[end].startswith(" "):
                end += 1
            blocks.append("\n".join(lines[max(0, i - 1) : end + 1]))  # through its last line
    return {"tracebacks": len(blocks), "first": blocks[:5]}


def print_report(r: dict[str, Any]) -> None:
    c = r["config"]
    first, last = c["arrival"] or (0, c["think"][1])
    arrival = f"first pages {first:g}-{last:g} s into each round"
    print(
        f"load test: {c['clients']} sessions x {c['duration']:.0f} s, think "
        f"{c['think'][0]:g}-{c['think'][1]:g} s, {arrival}, "
        f"ingest every {c['ingest_every']:.0f} s, on {c['db']} (elapsed {r['elapsed_s']} s)"
    )
    e = r["errors"]
    print(f"page runs: {r['page_runs']}   errors: {e['count']} {e['by_kind'] or ''}")
    t = r["page_time_s"]
    print(f"page time (s): p50 {t['p50']}  p95 {t['p95']}  max {t['max']}")
    print(f"  {'page':<18}{'runs':>6}{'errors':>8}{'p50':>8}{'p95':>8}{'max':>8}{'elements':>10}")
    for page, p in r["pages"].items():
        cells = "".join(
            f"{v:>8.2f}" if v is not None else f"{'-':>8}" for v in (p["p50"], p["p95"], p["max"])
        )
        print(f"  {page:<18}{p['runs']:>6}{p['errors']:>8}{cells}{p['elements_min']:>10}")
    print("slowest runs (s, at s, page, query):")
    for run in r.get("slowest", []):
        print(f"  {run['seconds']:6.2f} {run['at_s']:6.1f}  {run['page']:<18}{run['query'][:70]}")
    s = r["sessions"]
    print(
        f"sessions: runs each {min(s['runs'], default=0)}-{max(s['runs'], default=0)}, "
        f"reconnects {s['reconnects']}"
    )
    i = r["ingests"]
    print(
        f"ingests: {i['count']} ({i['records_each']} records each), failed {i['failed']}, "
        f"seconds p50 {i['seconds_p50']} max {i['seconds_max']}"
    )
    b = r["before_ingest"]
    print(
        f"runs served the data from before an ingest: {b['updating_runs']}; "
        f"runs with nothing cached yet: {b['not_ready_runs']}"
    )
    m = r["memory"]
    if m.get("per_minute"):
        minutes = ", ".join(f"{p['rss_mb']:.0f}" for p in m["per_minute"])
        print(
            f"server RSS (MB): first {m['first_mb']:.0f}, last {m['last_mb']:.0f}, "
            f"min {m['min_mb']:.0f}, max {m['max_mb']:.0f}; by minute: {minutes}; slope over "
            f"the second half {m['slope_mb_per_min_second_half']} MB/min"
        )
    if m.get("idle_after_rounds"):
        idle = ", ".join(f"{p['rss_mb']:.0f}" for p in m["idle_after_rounds"])
        print(
            f"server RSS idle after each round (MB): {idle}; trend after the first round:"
            f" {m['idle_slope_mb_per_round']} MB a round"
        )
    log = r.get("server_log", {})
    if log.get("tracebacks"):
        print(f"server log: {log['tracebacks']} tracebacks; the first ones end:")
        for block in log["first"]:
            print("    " + "\n    ".join(block.splitlines()[-3:]))
    for d in e["first"]:
        print(
            f"  error: session {d['session']} {d['page']}?{d['query']} at {d['at_s']} s: "
            f"{d['kind']}: {d['message']}"
        )
        if d["exception"]:
            print("    " + d["exception"].replace("\n", "\n    "))
    if e["never_visited"]:
        print(
            f"  error: never visited within {CATCH_UP_S:.0f} s past the load's end: "
            + ", ".join(e["never_visited"])
        )
    for d in e["first_ingest_failures"]:
        print(
            f"  ingest round {d['round']} at {d['at_s']} s: exit {d['exit_code']}: "
            + d["output"][-400:]
        )


def store_counts(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    found = conn.execute(
        "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM measurements),"
        " (SELECT count(*) FROM sources)"
    ).fetchone()
    return dict(zip(("series", "measurements", "sources"), found, strict=True))


def run_load(config: Config) -> dict[str, Any]:
    """The whole load test: copy, serve, drive, report. Cleans up whatever happens."""
    with tempfile.TemporaryDirectory(prefix="perfboard-load-") as tmp:
        folder = Path(tmp)
        db = copy_store(config.db, folder)
        rng = random.Random(config.seed)
        conn = perfboard_db.connect(db)  # migrated, as the first ingest would: the server reads
        try:
            aligned = align_series_keys(conn)
            pools = gather_pools(conn, rng)
            series, newest = ingest_series(conn, pools, rng)
            before = store_counts(conn)
        finally:
            conn.close()
        port = config.port or free_port()
        log = folder / "server.log"
        server = start_server(db, port, log)
        try:
            wait_healthy(server, port, log)
            result = asyncio.run(drive(config, db, folder, port, server.pid, pools, series, newest))
        finally:
            stop_server(server)
        # Each round's points must have continued existing series, not started new ones.
        with contextlib.closing(duckdb.connect(str(db), read_only=True)) as conn:
            after = store_counts(conn)
        result["store"] = {"series_keys_aligned": aligned, "before": before, "after": after}
        result["server_log"] = server_log_problems(log)
        if config.out is not None:  # kept beside the report: the copy and its folder go
            config.out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, config.out.with_name(config.out.stem + "-server.log"))
    if config.out is not None:
        config.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    return result


def parse_args(argv: list[str] | None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20, help="concurrent sessions")
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of load")
    parser.add_argument("--ingest-every", type=float, default=30.0, help="seconds between ingests")
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, help="the store to copy")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the JSON report")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of load, each followed by --idle s idle"
    )
    parser.add_argument("--idle", type=float, default=IDLE_S, help="seconds of each pause")
    parser.add_argument(
        "--think",
        type=think_range,
        default=THINK,
        metavar="MIN-MAX",
        help="seconds between a session's pages, drawn evenly from MIN to MAX (default 0.5-2)",
    )
    parser.add_argument(
        "--arrival",
        type=think_range,
        default=None,
        metavar="MIN-MAX",
        help="seconds into each round a session opens its first page, drawn evenly from MIN "
        "to MAX (default 0 to --think's MAX: spread as between rounds; 0-2 is a stampede)",
    )
    args = parser.parse_args(argv)
    if args.clients < 1 or args.duration <= 0 or args.ingest_every <= 0 or args.rounds < 1:
        parser.error("--clients, --duration, --ingest-every and --rounds must be positive")
    return Config(
        args.clients,
        args.duration,
        args.ingest_every,
        args.db,
        args.out,
        args.seed,
        args.port,
        args.rounds,
        args.idle,
        args.think,
        args.arrival,
    )


def think_range(text: str) -> tuple[float, float]:
    """--think's and --arrival's MIN-MAX (seconds, 0 <= MIN <= MAX), e.g. `5-15` or `0.5-2`."""
    low, sep, high = text.partition("-")
    try:
        least, most = float(low), float(high)
    except ValueError:
        least = most = -1.0
    if not sep or not 0 <= least <= most or math.isinf(most):
        raise argparse.ArgumentTypeError(f"{text!r} is not MIN-MAX seconds, as in 5-15")
    return least, most


def verdict(r: dict[str, Any]) -> str:
    """The last line: what issue 16's goal is judged on (p95 <= 1 s, 0 errors)."""
    t = r["page_time_s"]
    p50 = "-" if t["p50"] is None else f"{t['p50']:.2f}"
    p95 = "-" if t["p95"] is None else f"{t['p95']:.2f}"
    return f"page p50 {p50} s, p95 {p95} s, errors {r['errors']['count']}"


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    try:
        result = run_load(config)
    except LoadTestError as error:
        print(f"load test: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("load test: interrupted; the server is stopped and the copy removed", file=sys.stderr)
        return 130
    print_report(result)
    if config.out is not None:
        print(f"report: {config.out}")
    print(verdict(result))
    return 1 if result["errors"]["count"] else 0


if __name__ == "__main__":
    sys.exit(main())
