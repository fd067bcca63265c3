"""The store on DuckLake (perfboard.lake): a real PostgreSQL catalog on loopback, Parquet
data files in a temp folder, several ingest processes writing at once, the dashboard
reading. Run by `make test` in .venv-lake (DuckDB 1.4.4, whose extensions PyPI carries);
skipped in .venv (DuckDB 2.0.1) with a note, and required in CI.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from ingest.cli import main as ingest_main
from perfboard import alerts, db, lake, ui
from scripts.build_demo_db import RECORDED, demo_documents
from tests.conftest import ROOT, ingest
from tests.fault_tools import write_results
from tests.postgres_server import Postgres, postgres, unavailable  # noqa: F401 (fixture)


def _extensions_load() -> None:
    try:
        lake.load_extensions(duckdb.connect())
    except (lake.LakeError, duckdb.Error) as error:
        unavailable(f"DuckDB {duckdb.__version__} cannot load the lake's extensions ({error})")


@pytest.fixture
def lake_uri(
    postgres: Postgres,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> str:
    """A new, empty lake: its own PostgreSQL database and data folder; PERFBOARD_DB."""
    _extensions_load()
    name = "t_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    uri = "ducklake:postgres:" + postgres.create_database(name)
    monkeypatch.setenv("PERFBOARD_DB", uri)
    monkeypatch.setenv("PERFBOARD_LAKE_DATA", f"{tmp_path / 'lake-data'}/")
    return uri


def build_demo(store: str | Path) -> None:
    """The demo's documents and recorded PRs, stored the way scripts/build_demo_db.py does."""
    with contextlib.chdir(ROOT):
        assert ingest("auto", *demo_documents(), "--db", str(store)) == 0
        for repo, recorded in RECORDED.items():
            load = ["--load", str(recorded.relative_to(ROOT)), "--db", str(store)]
            assert ingest_main(["github-prs", "--repo", repo, *load]) == 0


# Each table by its natural keys, without the ids (assigned in commit order, which
# differs between writers racing and one writer) or the times things were done at.
CONTENT = {
    "sources": "SELECT uri, content_hash, parser, kind, encoding, project, n_measurements,"
    " n_problems, status FROM sources",
    "series": "SELECT series_key, project, benchmark, metric, unit, framework, device,"
    " params::VARCHAR FROM series",
    "measurements": "SELECT s.uri, e.series_key, m.run, m.version, m.measured_at, m.value,"
    " m.status, m.line FROM measurements m JOIN sources s USING (source_id)"
    " JOIN series e USING (series_id)",
    "phases": "SELECT s.uri, p.name, p.baseline, p.target, p.line FROM phases p"
    " JOIN sources s USING (source_id)",
    "milestones": "SELECT s.uri, m.ordinal, m.label, m.value FROM milestones m"
    " JOIN phases p USING (phase_id) JOIN sources s USING (source_id)",
    "profile_events": "SELECT s.uri, count(*), sum(e.total) FROM profile_events e"
    " JOIN sources s USING (source_id) GROUP BY s.uri",
    "claims": "SELECT s.uri, c.line, c.raw FROM claims c JOIN sources s USING (source_id)",
    "ingest_errors": "SELECT source_uri, line, severity, reason FROM ingest_errors",
    "pull_requests": "SELECT repo, number, title, state, merged_at FROM pull_requests",
    "change_points": "SELECT e.series_key, c.alert_key, c.before, c.after, c.kind"
    " FROM change_points c JOIN series e USING (series_id)",
    "series_noise": "SELECT e.series_key, n.points, n.cv::VARCHAR FROM series_noise n"
    " JOIN series e USING (series_id)",
}


def content(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    return {table: sorted(conn.execute(sql).fetchall(), key=repr) for table, sql in CONTENT.items()}


def unique_keys(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows that break a key the file store's schema enforces and the lake's cannot."""
    return {
        key: conn.execute(sql).fetchone()[0]
        for key, sql in {
            "sources.uri": "SELECT count(*) - count(DISTINCT uri) FROM sources",
            "sources.source_id": "SELECT count(*) - count(DISTINCT source_id) FROM sources",
            "series.series_key": "SELECT count(*) - count(DISTINCT series_key) FROM series",
            "series.series_id": "SELECT count(*) - count(DISTINCT series_id) FROM series",
            "phases.phase_id": "SELECT count(*) - count(DISTINCT phase_id) FROM phases",
            "pull_requests": "SELECT count(*) - count(DISTINCT (repo, number)) FROM pull_requests",
            "orphan measurements": "SELECT count(*) FROM measurements m"
            " ANTI JOIN sources USING (source_id)",
            "measurements without series": "SELECT count(*) FROM measurements m"
            " ANTI JOIN series USING (series_id)",
        }.items()
    }


@contextlib.contextmanager
def opened(store: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = db.connect(store, read_only=True)
    try:
        yield conn
    finally:
        conn.close()


def test_every_migration_becomes_a_lake_schema_with_the_file_stores_columns(
    lake_uri: str, tmp_path: Path
) -> None:
    for migration in db.migrations():
        ddl = lake.lake_ddl(migration.path.read_text(encoding="utf-8")).upper()
        statements = re.sub(r"--[^\n]*", "", ddl)  # the comments may say "unique"
        for refused in ("PRIMARY KEY", "UNIQUE", "CHECK", "SEQUENCE", "NEXTVAL", "INDEX"):
            # As a word: a table may be named check_runs.
            assert not re.search(rf"\b{refused}\b", statements), (migration.name, refused)
    db.connect(lake_uri).close()
    db.connect(tmp_path / "file.duckdb").close()
    columns = (
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_catalog = current_database() ORDER BY ALL"
    )
    with opened(lake_uri) as conn:
        in_lake = conn.execute(columns).fetchall()
        versions = conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
    with opened(tmp_path / "file.duckdb") as conn:
        in_file = conn.execute(columns).fetchall()
    assert in_lake == in_file and len(in_file) > 150
    assert [v for (v,) in versions] == [m.version for m in db.migrations()]
    # Connecting again applies nothing twice.
    db.connect(lake_uri).close()
    with opened(lake_uri) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(
            db.migrations()
        )


def test_the_demo_ingested_into_a_lake_is_the_demo_of_a_file_store(
    lake_uri: str, tmp_path: Path
) -> None:
    build_demo(lake_uri)
    build_demo(tmp_path / "file.duckdb")
    with opened(lake_uri) as conn:
        in_lake, broken = content(conn), unique_keys(conn)
        # Parquet files on the data path, a catalog in PostgreSQL: a real lake.
        files = conn.execute(
            "SELECT count(*) FROM ducklake_list_files('perfboard_lake', 'measurements')"
        ).fetchone()[0]
    with opened(tmp_path / "file.duckdb") as conn:
        in_file = content(conn)
    assert broken == dict.fromkeys(broken, 0)
    assert in_lake == in_file
    assert len(in_lake["measurements"]) == 171 and len(in_lake["sources"]) == 30
    assert len(in_lake["series_noise"]) > 100 and len(in_lake["pull_requests"]) > 10
    assert files > 0 and list((tmp_path / "lake-data").rglob("*.parquet"))
    # Re-ingesting the same documents changes nothing.
    with contextlib.chdir(ROOT):
        assert ingest("auto", *demo_documents(), "--db", lake_uri) == 0
    with opened(lake_uri) as conn:
        assert content(conn) == in_lake


INGEST = [sys.executable, "-m", "ingest"]


def _ingest_process(store: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*INGEST, *args, "--db", store, "--quiet", "--lock-timeout", "120"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_several_ingests_writing_at_once_store_what_one_at_a_time_stores(
    lake_uri: str, tmp_path: Path
) -> None:
    """Four ingest processes at once: two with every demo document (the same documents,
    the same new series, racing), two with a results file each whose 40 series are new
    and shared between them. Then the lake must hold what the same ingests give one after
    the other in a file store: every key unique, every document whole, detection the same."""
    first, second = tmp_path / "nightly-1.jsonl", tmp_path / "nightly-2.jsonl"
    write_results(first, rows=2000, series=40)
    write_results(second, rows=2400, series=40)  # the same series, more rounds...
    # ...a day later. Measurements at the same time in both would be conflicts (warned
    # on whichever file commits second) and ties (ordered by source id): both depend on
    # the order of commits, which racing writers choose and one writer does not.
    shifted = []
    for line in second.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        when = datetime.fromisoformat(record["time"]) + timedelta(days=1)
        shifted.append(json.dumps(record | {"time": when.strftime("%Y-%m-%dT%H:%M:%SZ")}))
    second.write_text("\n".join(shifted) + "\n", encoding="utf-8")
    jobs = [
        ["auto", *demo_documents()],
        ["auto", *demo_documents()],
        ["results", str(first)],
        ["results", str(second)],
    ]
    started = time.monotonic()
    running = [_ingest_process(lake_uri, *job) for job in jobs]
    outcomes = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in running]
    took = time.monotonic() - started
    assert [code for code, _ in outcomes] == [0, 0, 0, 0], outcomes

    file_store = tmp_path / "one-at-a-time.duckdb"
    with contextlib.chdir(ROOT):
        for job in jobs:
            assert ingest(*job, "--db", str(file_store)) == 0
    with opened(lake_uri) as conn:
        broken, in_lake = unique_keys(conn), content(conn)
    with opened(file_store) as conn:
        in_file = content(conn)
    assert broken == dict.fromkeys(broken, 0)
    assert in_lake == in_file
    assert sum(1 for row in in_lake["sources"] if row[0].endswith(".jsonl")) == 2
    assert len(in_lake["measurements"]) == 2000 + 2400 + 171
    print(f"four ingests at once into the lake: {took:.1f} s")


def test_a_writer_waits_for_the_writers_lock_then_says_so(lake_uri: str, tmp_path: Path) -> None:
    import psycopg

    results = tmp_path / "nightly.jsonl"
    write_results(results, rows=200, series=10)
    db.connect(lake_uri).close()  # the schema, before the lock is taken away
    holder = psycopg.connect(lake.conninfo(lake_uri), autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s)", [lake.WRITERS_LOCK_KEY])
    try:
        busy = subprocess.run(
            [*INGEST, "results", str(results), "--db", lake_uri, "--lock-timeout", "1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        holder.close()  # the lock goes with its session
    assert busy.returncode != 0
    assert "another writer held perfboard's writers' lock for 1 s" in busy.stderr
    assert "Traceback" not in busy.stderr
    with opened(lake_uri) as conn:
        assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 0
    assert ingest("results", str(results), "--db", lake_uri) == 0
    with opened(lake_uri) as conn:
        assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == 200


def test_the_dashboard_reads_the_lake_and_shows_new_data_without_a_restart(
    lake_uri: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    build_demo(lake_uri)
    monkeypatch.chdir(ROOT)
    before = db.data_version(lake_uri)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    with opened(lake_uri) as conn:
        n_series, n_sources = conn.execute(
            "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM sources)"
        ).fetchone()
    assert metrics["Sources"] == f"{n_sources:,}" == "30"
    assert metrics["Series"] == f"{n_series:,}"

    for page in ("trends", "phases", "pull_requests", "alerts", "compare", "sources"):
        page_test = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=60)
        page_test.run()
        assert not page_test.exception, (page, page_test.exception)
        assert not page_test.error, (page, [e.value for e in page_test.error])

    # An ingest elsewhere: the snapshot moves, and the next run shows it.
    results = tmp_path / "nightly.jsonl"
    write_results(results, rows=300, series=30)
    assert ingest("results", str(results), "--db", lake_uri) == 0
    assert db.data_version(lake_uri) > before
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sources"] == "31"
    assert metrics["Series"] == f"{n_series + 30:,}"

    # A triage from the dashboard is a write under the writers' lock too.
    with opened(lake_uri) as conn:
        key = conn.execute("SELECT min(alert_key) FROM change_points").fetchone()[0]
    ui.write(alerts.set_triage, key, "acknowledged", "looking", "reviewer")
    with opened(lake_uri) as conn:
        assert conn.execute(
            "SELECT status, note, set_by FROM alert_triage WHERE alert_key = ?", [key]
        ).fetchall() == [("acknowledged", "looking", "reviewer")]
        assert conn.execute("SELECT count(*) FROM alert_triage_log").fetchone()[0] == 1


def test_a_dashboard_on_a_lake_no_ingest_has_made_says_how_to_fill_it(
    lake_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    [warning] = [w.value for w in at.warning]
    assert warning.startswith("No database at `ducklake:postgres:host=127.0.0.1")
    assert "python -m ingest auto PATH" in warning


def test_compact_merges_the_small_files_of_many_commits_and_keeps_every_row(
    lake_uri: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for night in range(12):  # a nightly job's twelve runs: twelve commits, small files
        path = tmp_path / f"nightly-{night}.jsonl"
        write_results(path, rows=100 + night, series=10)
        assert ingest("results", str(path), "--db", lake_uri, "--no-detect") == 0
    with opened(lake_uri) as conn:
        before = content(conn)
    capsys.readouterr()
    assert ingest_main(["compact", "--db", lake_uri, "--keep-days", "0"]) == 0
    said = capsys.readouterr().err
    files = [int(n) for n in re.findall(r"(\d+) files -> (\d+)", said)[0]]
    assert files[0] >= 36 and files[1] < files[0] / 3, said  # measurements, sources, errors...
    assert re.search(r"[1-9]\d* snapshots older than 0 days expired", said), said
    with opened(lake_uri) as conn:
        after = content(conn)
        assert conn.execute("SELECT count(*) FROM measurements").fetchone()[0] == sum(
            100 + night for night in range(12)
        )
    assert after == before
