"""Helpers of the fault tests (tests/test_faults.py, tests/test_faults_commands.py): an
ingest or another command run in a child process (so it can be killed or starved of disk),
a store's integrity check, and what a store holds of each document (and what the other
commands write), as digests that two stores can be compared by.

Row ids (source_id, series_id, phase_id) are left out of every digest: a store that lived
through killed ingests may have spent sequence numbers a clean one did not, and that is
not a difference a user can see. Rows are named by their document's uri and their
series' key instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from perfboard import db

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"

# Real documents of every kind the parsers read (phase table, glog latency with profile
# and passes, bare latency lines, whitespace result tables, op benchmark, op timing
# table, IR pass log, analysis output, claims in a PR description).
KILL_SAMPLES = (
    "benchmark-165_2020-02-04_xreki_phase2-table.md",
    "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md",
    "benchmark-165_2020-02-04_xreki_qa-results.md",
    "benchmark-222_2019-09-25_xreki_analysis-output.md",
    "opbench_speed_abs_paddle_gpu.log",
    "paddle-16841_2019-04-24_jczaja_ir-pass-log.md",
    "paddle-21228_2019-11-19_sand3r-_qat-latency.md",
    "paddle-pr-22494_2020-02-07_nhzlx_description.md",
)

RESULT = {
    "schema": "perfboard.result/1",
    "project": "ernie",
    "benchmark": "ernie",
    "task": "inference",
    "metric": "latency",
    "unit": "ms",
    "direction": "lower",
    "framework": "paddle",
    "device": "Tesla P4",
    "status": "ok",
}
NOISE_LINE = b"I0719 10:14:50.539557 70931 operator.cc:169] CUDAPlace(0) Op(increment).\n"
LATENCY_LINE = (
    b"I0719 10:14:51.000000 70931 tester_helper.h:300] Run 5010 samples, average latency:"
    b" 6.92849 ms per sample.\n"
)


START = datetime(2019, 12, 23)  # a Monday: the rounds fall in ISO week 2019-W52
ROUND = timedelta(minutes=10)


def write_results(path: Path, rows: int, series: int = 50) -> None:
    """A results file of `rows` records over `series` series (batch sizes), one version
    and time (ten minutes apart, from START) per round of series: noise around a level
    that steps up 5% half-way, as a nightly job's numbers do (so change detection finds
    one step, and quickly)."""
    noise = random.Random(rows * 1000 + series)
    rounds = max(1, rows // series)
    lines = []
    for i in range(rows):
        level = 8.0 + (i % series) / 10
        step = 1.05 if i // series >= rounds // 2 else 1.0
        record = {
            **RESULT,
            "params": {"batch_size": i % series},
            "version": f"v{i // series}",
            "time": (START + (i // series) * ROUND).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "value": round(level * step * (1 + noise.gauss(0, 0.005)), 4),
        }
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_log(path: Path, size: int, every: int = 200) -> int:
    """A glog-style tester log of about `size` bytes: `every` noise lines, then one
    latency line, over and over (written a block at a time). Returns the latency lines."""
    unit = NOISE_LINE * every + LATENCY_LINE
    block = unit * max(1, (1 << 22) // len(unit))
    written = latency = 0
    with open(path, "wb") as fh:
        while written < size:
            fh.write(block)
            written += len(block)
            latency += block.count(LATENCY_LINE)
    return latency


def fsize_limit(limit: int) -> Callable[[], None]:
    """A preexec_fn: no file the child writes may grow past `limit` bytes (writes beyond it
    fail with EFBIG, as on a full disk), and SIGXFSZ is ignored so that the write fails
    instead of the process being killed."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PERFBOARD_DB", None)  # every command names its store with --db
    env.update(extra)
    return env


def run_ingest(
    *args: str,
    preexec_fn: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`python -m ingest ARGS` in a child process, to its end."""
    return run_command("ingest", *args, preexec_fn=preexec_fn, env=env, timeout=timeout)


@dataclass(frozen=True, slots=True)
class Timed:
    """An ingest run to its end: how long it took, and when (seconds from its start) each
    of its transactions was open."""

    run: subprocess.CompletedProcess[str]
    seconds: float
    transactions: list[tuple[float, float]]


def timed_ingest(*args: str) -> Timed:
    """`python -m ingest ARGS` with the times of its transactions (see _PROBE)."""
    return timed_command("ingest", *args)


def start_ingest(*args: str, probe: bool = False) -> subprocess.Popen[str]:
    """`python -m ingest ARGS` started in a session (and process group) of its own, so that
    what it forks can be found, and stopped, by the group. `probe`: with the times of its
    transactions on stderr (see _PROBE)."""
    return start_command("ingest", *args, probe=probe)


# -- other commands: `python -m ingest github-prs|git ...`, `python -m perfboard detect` -----

# The module whose main() each `python -m` runs.
MAINS = {"ingest": "ingest.cli", "perfboard": "perfboard.__main__"}

# A command with its store connections wrapped: the wall-clock time of each BEGIN (as it
# starts) and COMMIT (as it returns) goes to stderr as "@@ BEGIN|COMMIT <time>". Every
# command opens the store with perfboard.db.connect. argv[1] names the module (MAINS).
_PROBE = """
import importlib, sys, time
from perfboard import db

class Logged:
    def __init__(self, conn):
        self._conn = conn

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, sql, *args):
        if sql == "BEGIN TRANSACTION":
            print(f"@@ BEGIN {time.time():.6f}", file=sys.stderr, flush=True)
        result = self._conn.execute(sql, *args)
        if sql == "COMMIT":
            print(f"@@ COMMIT {time.time():.6f}", file=sys.stderr, flush=True)
        return result

connect = db.connect
db.connect = lambda *args, **kwargs: Logged(connect(*args, **kwargs))
sys.exit(importlib.import_module(sys.argv[1]).main(sys.argv[2:]))
"""


def command(module: str, *args: str, probe: bool = False) -> list[str]:
    """`python -m MODULE ARGS`; `probe`: with the times of its transactions on stderr."""
    if probe:
        return [sys.executable, "-c", _PROBE, MAINS[module], *args]
    return [sys.executable, "-m", module, *args]


def run_command(
    module: str,
    *args: str,
    preexec_fn: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` in a child process, to its end."""
    return subprocess.run(
        command(module, *args),
        cwd=ROOT,
        env=env or child_env(),
        preexec_fn=preexec_fn,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def transaction_windows(stderr: str, started: float) -> list[tuple[float, float]]:
    """When (seconds from `started`) each transaction a probed command logged was open."""
    begins: list[float] = []
    windows = []
    for line in stderr.splitlines():
        if line.startswith("@@ BEGIN "):
            begins.append(float(line.split()[2]) - started)
        elif line.startswith("@@ COMMIT ") and begins:
            windows.append((begins.pop(), float(line.split()[2]) - started))
    return windows


def timed_command(module: str, *args: str, env: dict[str, str] | None = None) -> Timed:
    """`python -m MODULE ARGS` to its end, with the times of its transactions."""
    started = time.time()
    run = subprocess.run(
        command(module, *args, probe=True),
        cwd=ROOT,
        env=env or child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Timed(run, time.time() - started, transaction_windows(run.stderr, started))


def start_command(
    module: str, *args: str, probe: bool = False, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`python -m MODULE ARGS` in a session (and process group) of its own, so that what it
    forks can be found, and stopped, by the group. `probe`: see _PROBE."""
    return subprocess.Popen(
        command(module, *args, probe=probe),
        cwd=ROOT,
        env=env or child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@dataclass
class Kill:
    """One SIGKILL of a command: after `delay` s from its start, or `delay` s after the
    BEGIN of its `transaction`-th transaction (counted from 0); what it hit."""

    index: int
    delay: float
    transaction: int | None = None
    landed: bool = False  # the command was still running when killed
    inside: bool = False  # killed between that BEGIN and its COMMIT
    resumed: bool = False  # started on the store the kill before left
    held: str = ""  # what the store held after, in the caller's words
    failures: list[str] = field(default_factory=list)

    def describe(self) -> str:
        where = (
            f"at {self.delay:4.2f} s"
            if self.transaction is None
            else f"{self.delay:5.3f} s into transaction {self.transaction}"
            f" ({'inside' if self.inside else 'it had committed'})"
        )
        outcome = "killed" if self.landed else "had ended"
        resumed = " (resumed)" if self.resumed else ""
        held = f", {self.held}" if self.held else ""
        return (
            f"kill {self.index:2d} {where}{resumed}: {outcome}{held};"
            f" {'; '.join(self.failures) or 'ok'}"
        )


def plan_kills(
    seconds: float, spans: list[tuple[float, float]], count: int, rng: random.Random
) -> list[Kill]:
    """`count` kills of a command whose clean run took `seconds`, with its transactions
    open at `spans` (seconds from its start; see Timed): every other one at a
    delay stratified over the whole run, the others inside a transaction chosen
    stratified over the time transactions were open (a delay within the first 70% of
    it: a run a little faster than the clean one still has it open)."""
    total = sum(end - start for start, end in spans)
    anywhere, inside = (count + 1) // 2, count // 2
    kills = []
    for index in range(count):
        stratum = index // 2
        if index % 2 == 0 or not spans:
            kills.append(Kill(index, seconds * (stratum + rng.random()) / anywhere))
            continue
        at = total * (stratum + rng.random()) / inside
        for number, (start, end) in enumerate(spans):
            if at <= end - start or number == len(spans) - 1:
                kills.append(Kill(index, 0.7 * min(at, end - start), number))
                break
            at -= end - start
    return kills


def run_and_kill(
    kill: Kill, module: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `python -m MODULE ARGS`, SIGKILL it as `kill` plans (a command that ends
    first is left to end), and make sure nothing it started lives on."""
    if kill.transaction is None:
        proc = start_command(module, *args, env=env)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=kill.delay)
    else:
        proc = start_command(module, *args, probe=True, env=env)
        assert proc.stderr is not None
        begins = 0
        while begins <= kill.transaction and (line := proc.stderr.readline()):
            begins += line.startswith("@@ BEGIN ")
        if begins > kill.transaction:
            time.sleep(kill.delay)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        kill.landed = True
    _, rest = proc.communicate()
    kill.inside = kill.landed and kill.transaction is not None and "@@ COMMIT" not in rest
    if left := wait_gone(proc.pid, 5.0):
        kill.failures.append(f"processes {left} outlived the killed command")
    kill_group(proc.pid)
    return proc


def peak_rss_run(*args: str, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `python -m ingest ARGS` under a fresh Python that waits for it, and return the
    peak resident set of the ingest and its workers in bytes (RUSAGE_CHILDREN of that
    parent: the largest of the processes it waited for, and of theirs)."""
    probe = (
        "import resource, subprocess, sys;"
        "status = subprocess.run(sys.argv[1:]).returncode;"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr);"
        "sys.exit(status)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, *command("ingest", *args)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return run, int(run.stderr.strip().splitlines()[-1]) * 1024  # Linux counts in KiB


# -- processes -------------------------------------------------------------------------------


def group_members(pgid: int) -> list[int]:
    """The live processes of a process group, from /proc (zombies are dead already)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def wait_gone(pgid: int, timeout: float) -> list[int]:
    """Wait up to `timeout` s for a process group to end; the members still alive."""
    deadline = time.monotonic() + timeout
    while (left := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def kill_group(pgid: int) -> None:
    """SIGKILL what is left of a process group this test started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def wait_locked(path: Path, timeout: float) -> bool:
    """Wait until a writer holds the store at `path` (a read-only open is refused)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            duckdb.connect(str(path), read_only=True).close()
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                return True
        time.sleep(0.02)
    return False


def copy_store(source: Path, target: Path) -> None:
    """A store's files as they are (the database and its WAL, when there is one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".wal"):
        origin = source.with_name(source.name + suffix)
        if origin.exists():
            shutil.copyfile(origin, target.with_name(target.name + suffix))


# -- integrity -------------------------------------------------------------------------------

# (table, column, parent table, parent column): every row's reference must exist.
REFERENCES = (
    ("measurements", "source_id", "sources", "source_id"),
    ("measurements", "series_id", "series", "series_id"),
    ("profile_events", "source_id", "sources", "source_id"),
    ("passes", "source_id", "sources", "source_id"),
    ("runs", "source_id", "sources", "source_id"),
    ("claims", "source_id", "sources", "source_id"),
    ("phases", "source_id", "sources", "source_id"),
    ("milestones", "phase_id", "phases", "phase_id"),
    ("ingest_errors", "source_id", "sources", "source_id"),
    ("change_points", "series_id", "series", "series_id"),
    ("change_points", "source_id", "sources", "source_id"),
    ("series_noise", "series_id", "series", "series_id"),
)
# Keys that must be unique (the store's own constraints, checked again by a scan).
UNIQUE = (
    ("sources", "source_id"),
    ("sources", "uri"),
    ("series", "series_id"),
    ("series", "series_key"),
    ("phases", "phase_id"),
    ("milestones", "phase_id, ordinal"),
    ("runs", "source_id, run"),
    ("schema_migrations", "version"),
)


def integrity_problems(path: Path) -> list[str]:
    """What is wrong with the store at `path`; [] for a sound one.

    It is opened the way the next ingest opens it (perfboard.db.connect, read-write: the
    WAL is replayed and migrations applied), then: DuckDB's own view of the file
    (pragma_database_size, pragma_storage_info of every table), a full scan of every
    column of every table, the unique keys, every reference, each source's counts
    against its rows, and a checkpoint (the store can be written again).
    """
    problems: list[str] = []
    try:
        conn = db.connect(path)
    except duckdb.Error as error:
        return [f"does not open: {type(error).__name__}: {error}"]
    try:
        conn.execute("SELECT * FROM pragma_database_size()").fetchall()
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY 1"
            ).fetchall()
        ]
        for table in tables:
            try:
                conn.execute(f"SELECT count(*) FROM pragma_storage_info('{table}')").fetchall()
                # hash() of the whole row reads every column of every row group.
                conn.execute(f'SELECT count(*), sum(hash(t)) FROM "{table}" t').fetchall()
            except duckdb.Error as error:
                problems.append(f"{table}: cannot be scanned: {error}")
        for table, key in UNIQUE:
            dupes = conn.execute(
                f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY ALL HAVING count(*) > 1)"
            ).fetchone()[0]
            if dupes:
                problems.append(f"{table}: {dupes} duplicated values of ({key})")
        for table, column, parent, key in REFERENCES:
            orphans = conn.execute(
                f"SELECT count(*) FROM {table} c WHERE c.{column} IS NOT NULL"
                f" AND NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.{key} = c.{column})"
            ).fetchone()[0]
            if orphans:
                problems.append(f"{table}: {orphans} rows whose {column} is not in {parent}")
        for uri, stored, rows in conn.execute(
            "SELECT s.uri, s.n_measurements, count(m.source_id) FROM sources s"
            " LEFT JOIN measurements m USING (source_id)"
            " GROUP BY ALL HAVING s.n_measurements <> count(m.source_id)"
        ).fetchall():
            problems.append(f"{uri}: n_measurements {stored} but {rows} measurement rows")
        for uri, stored, rows in conn.execute(
            "SELECT s.uri, s.n_problems, count(e.source_id) FROM sources s"
            " LEFT JOIN ingest_errors e USING (source_id)"
            " GROUP BY ALL HAVING s.n_problems <> count(e.source_id)"
        ).fetchall():
            problems.append(f"{uri}: n_problems {stored} but {rows} ingest_errors rows")
        wrong_uri = conn.execute(
            "SELECT count(*) FROM ingest_errors e JOIN sources s USING (source_id)"
            " WHERE e.source_uri <> s.uri"
        ).fetchone()[0]
        if wrong_uri:
            problems.append(f"ingest_errors: {wrong_uri} rows name another source's uri")
        conn.execute("CHECKPOINT")
    except duckdb.Error as error:
        problems.append(f"check failed: {type(error).__name__}: {error}")
    finally:
        conn.close()
    return problems


# -- what a store holds of each document -----------------------------------------------------

# (table, SQL giving uri and a hash of one row without its ids); rows of one document
# are summed into (count, hash sum), a digest that does not depend on row order.
_DOCUMENT_ROWS = {
    "source": """
        SELECT uri AS uri,
               hash(content_hash, parser, kind, reader, encoding, project, url, author, title,
                    created_at, size_bytes, n_lines, n_measurements, n_problems, status) AS h
        FROM sources""",
    "measurements": """
        SELECT src.uri AS uri,
               hash(s.series_key, m.run, m.version, m.measured_at, m.value, m.status,
                    m.samples, m.warmup, m.stats::VARCHAR, m.line, m.raw) AS h
        FROM measurements m JOIN sources src USING (source_id)
        JOIN series s USING (series_id)""",
    "profile_events": """
        SELECT src.uri AS uri,
               hash(p.run, p.section, p.place, p.event, p.thread, p.depth, p.calls, p.total,
                    p.cpu_time, p.gpu_time, p.min, p.max, p.ave, p.ratio, p.line, p.raw) AS h
        FROM profile_events p JOIN sources src USING (source_id)""",
    "passes": """
        SELECT src.uri AS uri,
               hash(p.run, p.name, p.kind, p."order", p.subgraphs, p.line, p.raw) AS h
        FROM passes p JOIN sources src USING (source_id)""",
    "runs": """
        SELECT src.uri AS uri, hash(r.run, r.label, r.first_line) AS h
        FROM runs r JOIN sources src USING (source_id)""",
    "claims": """
        SELECT src.uri AS uri,
               hash(c.ordinal, c.before, c.after, c.unit, c.percent, c.line, c.raw) AS h
        FROM claims c JOIN sources src USING (source_id)""",
    "phases": """
        SELECT src.uri AS uri,
               hash(p.name, p.project, p.benchmark, p.metric, p.unit, p.baseline, p.target,
                    p.line) AS h
        FROM phases p JOIN sources src USING (source_id)""",
    "milestones": """
        SELECT src.uri AS uri,
               hash(p.line, ms.ordinal, ms.label, ms.value, ms.date, ms.pr_number,
                    ms.description, ms.disagrees, ms.line, ms.raw) AS h
        FROM milestones ms JOIN phases p USING (phase_id) JOIN sources src USING (source_id)""",
    "ingest_errors": """
        SELECT source_uri AS uri, hash(parser, line, severity, reason, raw) AS h
        FROM ingest_errors WHERE source_id IS NOT NULL""",
    # A document that could not be stored at all leaves only this: why it failed.
    "failure": """
        SELECT source_uri AS uri, hash(parser, line, severity) AS h
        FROM ingest_errors WHERE source_id IS NULL""",
}

Digest = tuple[int, int]


def documents(conn: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Digest]]:
    """uri -> table -> (rows, hash sum) of everything the store holds of each document."""
    held: dict[str, dict[str, Digest]] = {}
    for table, rows_sql in _DOCUMENT_ROWS.items():
        for uri, count, total in conn.execute(
            f"SELECT uri, count(*), sum(h)::VARCHAR FROM ({rows_sql}) GROUP BY uri"
        ).fetchall():
            held.setdefault(uri, {})[table] = (count, int(total))
    return held


def derived(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """What is derived from the documents rather than read from one: series, and what
    change detection stored (without its times)."""
    return {
        "series": conn.execute(
            "SELECT series_key, project, benchmark, metric, params::VARCHAR FROM series"
            " ORDER BY ALL"
        ).fetchall(),
        "change_points": conn.execute(
            "SELECT s.series_key, c.alert_key, c.position, c.before_version, c.after_version,"
            " c.before, c.after, c.kind, src.uri, c.line"
            " FROM change_points c JOIN series s USING (series_id)"
            " LEFT JOIN sources src USING (source_id) ORDER BY ALL"
        ).fetchall(),
        "series_noise": conn.execute(
            # As text: a noise figure may be NaN (one point), and NaN is not equal to NaN.
            "SELECT s.series_key, n.points, n.level::VARCHAR, n.cv::VARCHAR, n.too_noisy,"
            " n.latest_value::VARCHAR"
            " FROM series_noise n JOIN series s USING (series_id) ORDER BY ALL"
        ).fetchall(),
    }


@dataclass(frozen=True, slots=True)
class StoreView:
    documents: dict[str, dict[str, Digest]]
    derived: dict[str, list[tuple]]


def view(path: Path) -> StoreView:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return StoreView(documents(conn), derived(conn))
    finally:
        conn.close()


def all_or_none(held: StoreView, reference: StoreView) -> list[str]:
    """Each document in `held` is absent (perhaps with the record of its failure) or
    exactly as in `reference`; every series held is one the reference holds. Returns what
    breaks that."""
    problems = []
    for uri, tables in held.documents.items():
        expected = reference.documents.get(uri)
        if set(tables) == {"failure"}:
            continue  # not stored, and why is recorded
        if expected is None:
            problems.append(f"{uri}: not a document of the reference")
        elif tables != expected:
            differs = sorted(
                t for t in set(tables) | set(expected) if tables.get(t) != expected.get(t)
            )
            problems.append(f"{uri}: partly stored ({', '.join(differs)} differ)")
    extra = set(held.derived["series"]) - set(reference.derived["series"])
    if extra:
        problems.append(f"{len(extra)} series the reference does not hold")
    return problems


def stored(held: StoreView) -> set[str]:
    """The documents a store holds (has a source row for)."""
    return {uri for uri, tables in held.documents.items() if "source" in tables}


def failed(held: StoreView) -> set[str]:
    """The documents a store holds only the failure of."""
    return {uri for uri, tables in held.documents.items() if set(tables) == {"failure"}}


def differences(a: StoreView, b: StoreView, what: Sequence[str]) -> list[str]:
    """The parts of `what` ("documents" or a derived table) in which two views differ."""
    out = []
    for part in what:
        left = a.documents if part == "documents" else a.derived[part]
        right = b.documents if part == "documents" else b.derived[part]
        if left != right:
            out.append(part)
    return out


# -- what the other commands write -----------------------------------------------------------

# Each table a command writes besides the documents', every row without the time it was
# written (a re-run writes another), in order: two stores compare by these.
COMMAND_TABLES = {
    "pull_requests": "SELECT * EXCLUDE (synced_at) FROM pull_requests ORDER BY ALL",
    "http_cache": "SELECT url, etag, body FROM http_cache ORDER BY ALL",
    "commits": "SELECT * FROM commits ORDER BY ALL",
    "releases": "SELECT * FROM releases ORDER BY ALL",
    "git_walks": "SELECT * EXCLUDE (walked_at) FROM git_walks ORDER BY ALL",
    "alert_triage": "SELECT * FROM alert_triage ORDER BY ALL",
    "alert_triage_log": "SELECT * FROM alert_triage_log ORDER BY ALL",
}


def table_rows(path: Path, names: Sequence[str]) -> dict[str, list[tuple]]:
    """The rows of the COMMAND_TABLES `names` in the store at `path`."""
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return {name: conn.execute(COMMAND_TABLES[name]).fetchall() for name in names}
    finally:
        conn.close()
