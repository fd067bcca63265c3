"""A real PostgreSQL server on loopback for the lake tests: initdb into a temp folder,
pg_ctl start on a free port, one database per test, stopped at the end.

PostgreSQL refuses to run as root (CI runs as root): there it runs as `nobody`.
Where PostgreSQL or the lake's DuckDB extensions are missing the tests are skipped,
unless PERFBOARD_REQUIRE_LAKE is set (.ci/run sets it): then they fail, and say why.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def _pg_bin() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(candidates[-1]).parent if candidates else None


def unavailable(reason: str) -> None:
    if os.environ.get("PERFBOARD_REQUIRE_LAKE"):
        pytest.fail(f"{reason}, and PERFBOARD_REQUIRE_LAKE is set (CI must run the lake tests)")
    pytest.skip(f"{reason}: the lake tests are skipped (make test runs them in .venv-lake)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Postgres:
    port: int
    user: str = "perfboard"

    def conninfo(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={dbname}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.conninfo(name)


@contextlib.contextmanager
def running_postgres() -> Iterator[Postgres]:
    """A PostgreSQL server on a free loopback port for the length of the block (also used
    by scripts/bench_lake.py). Raises RuntimeError when it cannot start."""
    bin_dir = _pg_bin()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server (pg_ctl) on this machine")
    # Not under pytest's temp folder: `nobody` may not enter root's.
    root = Path(tempfile.mkdtemp(prefix="perfboard-postgres-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL will not run as root
        as_user = ["runuser", "-u", "nobody", "--"]
        shutil.chown(root, "nobody")
    data, port = root / "data", _free_port()

    def run(*args: str) -> None:
        done = subprocess.run([*as_user, *args], capture_output=True, text=True, cwd=root)
        if done.returncode:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stdout}{done.stderr}")

    try:
        run(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "perfboard",
            "--auth=trust",
            "-E",
            "UTF8",
        )
        options = (
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        )
        run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-o",
            options,
            "-w",
            "start",
        )
        yield Postgres(port)
    finally:
        subprocess.run(
            [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed (requirements-lake.txt)")
    try:
        server = running_postgres()
        started = server.__enter__()
    except RuntimeError as error:
        unavailable(str(error))
    try:
        yield started
    finally:
        server.__exit__(None, None, None)
