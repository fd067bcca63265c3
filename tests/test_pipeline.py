"""The one way in for a document (ingest.pipeline), the one way to open the store, and the
one error boundary of the command lines: every source under the same rules."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ingest import documents, pipeline
from ingest.cli import main
from ingest.registry import ANCHORS, PARSERS, READS
from ingest.text import from_text
from perfboard import db
from perfboard.model import DocMeta
from tests.conftest import ROOT, parse_text_failing_on, rows, sample_path

BENCH = "PaddlePaddle/benchmark"
ISSUE = f"https://github.com/{BENCH}/issues/165"
QAT = "paddle-21228_2019-11-19_sand3r-_qat-latency.md"
PHASE = "benchmark-165_2020-02-04_xreki_phase2-table.md"
NOTES = "Met with the team. We will look at the fc fusion next week; numbers to follow.\n"


def recorded_issue(body: str, *comments: str) -> dict[str, Any]:
    """An issue and its comments as the API answers them (the fields the sync reads)."""
    return {
        "issue": {
            "html_url": ISSUE,
            "title": "ERNIE GPU 二期优化",
            "body": body,
            "user": {"login": "Xreki"},
            "created_at": "2020-02-04T08:00:00Z",
        },
        "comments": [
            {
                "id": index,
                "html_url": f"{ISSUE}#issuecomment-{index}",
                "body": text,
                "user": {"login": "NHZlX"},
                "created_at": "2020-02-05T08:00:00Z",
            }
            for index, text in enumerate(comments, start=1)
        ],
    }


def load_issue(tmp_path: Path, store: Path, recorded: dict[str, Any]) -> tuple[int, str]:
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(recorded), encoding="utf-8")
    return main(["github-issue", ISSUE, "--load", str(path), "--db", str(store)]), str(path)


# -- one pipeline: the same rules for an issue's comments as for files ------------------------


def test_a_parser_bug_in_an_issue_comment_is_recorded_and_the_sync_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    qat = sample_path(QAT).read_text("utf-8")
    parse_text_failing_on(monkeypatch, "BOOM")
    store = tmp_path / "perfboard.duckdb"
    status, _ = load_issue(tmp_path, store, recorded_issue("负责人：@NHZlX", "BOOM " + qat, qat))
    assert status == 1  # a document failed: said in the exit status, after all were read
    assert "Traceback" not in capsys.readouterr().err
    # The comment after the broken one was stored: its 4 QAT latencies.
    assert rows(store, "SELECT uri, n_measurements FROM sources WHERE n_measurements > 0") == [
        (f"{ISSUE}#issuecomment-2", 4)
    ]
    [(uri, reason)] = rows(
        store, "SELECT source_uri, reason FROM ingest_errors WHERE source_id IS NULL"
    )
    assert uri == f"{ISSUE}#issuecomment-1"
    assert reason.startswith("internal error, please report: ZeroDivisionError: division by")
    assert "conftest.py:" in reason  # where (the stand-in bug), so that it can be reported


def test_an_emptied_issue_body_loses_its_rows(tmp_path: Path) -> None:
    store = tmp_path / "perfboard.duckdb"
    phase = sample_path(PHASE).read_text("utf-8")
    assert load_issue(tmp_path, store, recorded_issue(phase))[0] == 0
    milestones = "SELECT count(*) FROM milestones"
    assert rows(store, milestones)[0][0] >= 2
    status = rows(store, "SELECT status FROM sources WHERE uri = ?", [ISSUE])
    assert load_issue(tmp_path, store, recorded_issue("   \n"))[0] == 0
    assert rows(store, milestones) == [(0,)]
    assert rows(store, "SELECT count(*) FROM phases") == [(0,)]
    assert rows(store, "SELECT status FROM sources WHERE uri = ?", [ISSUE]) == [("empty",)]
    # Still empty at the next sync: nothing to do again.
    from ingest import github

    conn = db.connect(store)
    assert github.store_issue(conn, recorded_issue("")["issue"], []).outcomes == {"unchanged": 1}
    conn.close()
    # Written again as it was: read again, not taken as unchanged.
    assert load_issue(tmp_path, store, recorded_issue(phase))[0] == 0
    assert rows(store, milestones)[0][0] >= 2
    assert rows(store, "SELECT status FROM sources WHERE uri = ?", [ISSUE]) == status


def test_a_comment_of_talk_is_counted_not_stored(tmp_path: Path) -> None:
    """Conversation that holds nothing is no problem to show: counted, never a source."""
    store = tmp_path / "perfboard.duckdb"
    qat = sample_path(QAT).read_text("utf-8")
    assert load_issue(tmp_path, store, recorded_issue(NOTES, "LGTM", qat))[0] == 0
    assert rows(store, "SELECT uri FROM sources") == [(f"{ISSUE}#issuecomment-2",)]
    assert rows(store, "SELECT count(*) FROM ingest_errors") == [(0,)]


# -- nothing is silent -------------------------------------------------------------------------


def test_a_document_with_no_known_format_is_stored_as_unrecognised_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    store = tmp_path / "perfboard.duckdb"
    assert main(["auto", str(notes), str(sample_path(QAT)), "--db", str(store)]) == 0
    err = capsys.readouterr().err
    assert f"{notes}: unrecognised: no known format found; perfboard reads: " in err
    assert "(1 added, 1 unrecognised)" in err
    assert (
        f"1 documents held no format perfboard knows (stored as unrecognised, see Sources): {notes}"
        in err
    )
    assert rows(store, "SELECT status, n_measurements, n_problems FROM sources WHERE uri = ?",
                [str(notes)]) == [("unrecognised", 0, 1)]  # fmt: skip
    [(parser, reason)] = rows(
        store,
        "SELECT e.parser, e.reason FROM ingest_errors e JOIN sources s USING (source_id)"
        " WHERE s.uri = ?",
        [str(notes)],
    )
    assert parser == "formats" and "tester latency lines" in reason
    assert "perfboard result files (JSONL, CSV)" in reason
    # Alone, it is all the command was given: nothing read, exit 1. A new name for it...
    alone = tmp_path / "alone.md"
    alone.write_text(NOTES + "Still nothing.\n", encoding="utf-8")
    assert main(["auto", str(alone), "--db", str(store), "--quiet"]) == 1
    # Again, unchanged: costs a hash, says nothing new, stores nothing twice.
    assert main(["auto", str(notes), "--db", str(store), "--quiet"]) == 0
    assert rows(store, "SELECT count(*) FROM ingest_errors") == [(2,)]


def test_in_a_folder_an_unrecognised_document_is_said_but_fails_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder holds prose beside results: the prose is named, the command does not fail
    (it read something)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text(NOTES, encoding="utf-8")
    (folder / "qat.md").write_bytes(sample_path(QAT).read_bytes())
    store = tmp_path / "perfboard.duckdb"
    assert main(["auto", str(folder), "--db", str(store)]) == 0
    err = capsys.readouterr().err
    assert f"{folder / 'plan.md'}: unrecognised: no known format found" in err
    assert f"see Sources): {folder / 'plan.md'}" in err
    assert rows(store, "SELECT uri, status FROM sources ORDER BY uri") == [
        (str(folder / "plan.md"), "unrecognised"),
        (str(folder / "qat.md"), "ok"),
    ]


def test_the_dry_run_says_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    main(["auto", str(notes), "--dry-run"])
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record["kind"] == "problem"
    assert record["reason"].startswith("no known format found; perfboard reads: ")


def test_the_sources_page_shows_an_unrecognised_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    store = tmp_path / "perfboard.duckdb"
    main(["auto", str(notes), "--db", str(store), "--quiet"])
    monkeypatch.setenv("PERFBOARD_DB", str(store))
    [(source_id,)] = rows(store, "SELECT source_id FROM sources")
    app = AppTest.from_file(str(ROOT / "pages" / "sources.py"), default_timeout=60)
    app.query_params["source"] = str(source_id)
    app.run()
    assert not app.exception
    shown = " ".join(
        [str(e.value) for e in app.markdown]
        + [str(e.value) for e in app.caption]
        + [frame.value.to_string() for frame in app.dataframe]
    )
    assert "unrecognised" in shown
    assert "no known format found" in shown


def test_every_parser_says_what_it_reads() -> None:
    assert set(READS) == set(PARSERS)


def test_the_gate_knows_every_parsers_own_anchors() -> None:
    # The registry keeps a copy of each parser's ANCHORS so the gate needs no parser module.
    for name, module in PARSERS.items():
        assert name == module.NAME
        assert ANCHORS[name] == tuple(module.ANCHORS), name


def test_an_unchanged_file_costs_a_hash_not_a_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "perfboard.duckdb"
    path = sample_path(QAT)
    conn = db.connect(store)
    meta = DocMeta(uri=str(path))
    assert pipeline.ingest(conn, pipeline.Document(meta, path=path)).outcome == "added"

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged document was parsed")

    monkeypatch.setattr(pipeline, "read_document", no_parse)
    result = pipeline.ingest(conn, pipeline.Document(meta, path=path))
    assert (result.outcome, result.previous) == ("unchanged", 4)
    conn.close()


def test_the_hash_before_a_parse_is_the_hash_of_the_parse(tmp_path: Path) -> None:
    """document_hash must give what reading gives, or nothing would ever be unchanged:
    across chunk boundaries, with a BOM, without a final newline."""
    line = "I1120 10:00:{:02d} tester.cc:1] Run {} samples, average latency: 1.{} ms\n"
    text = "".join(line.format(i % 60, i, i) for i in range(4000))
    for name, data in {
        "plain.log": text.encode(),
        "bom.log": b"\xef\xbb\xbf" + text.encode(),
        "open-end.log": text.encode().rstrip(b"\n"),
    }.items():
        path = tmp_path / name
        path.write_bytes(data)
        parsed = documents.read_document(path, "auto", DocMeta(uri=name), chunk_bytes=1 << 16)
        assert documents.document_hash(path, chunk_bytes=1 << 16) == parsed.info.content_hash
    assert (
        documents.text_hash(text)
        == documents.read_text(text, "auto", DocMeta("t")).info.content_hash
    )


# -- one way to open the store, one error boundary ------------------------------------------------


def run_module(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [
        ("ingest", "auto", f"data/samples/{QAT}"),
        ("ingest", "export"),
        ("perfboard", "detect"),
        ("perfboard", "report", "--week", "2020-W06"),
        ("perfboard.report", "--week", "2020-W06"),
    ],
)
def test_a_bad_lake_url_is_a_message_and_exit_2(command: tuple[str, ...], tmp_path: Path) -> None:
    env = {**os.environ, "PERFBOARD_DB": "ducklake:nonsense"}
    out = ("--out", str(tmp_path)) if "report" in " ".join(command) else ()
    done = run_module(*command, *out, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "PostgreSQL catalog" in done.stderr and "ducklake:postgres:" in done.stderr


# A writer that holds the store until told, then until another process has tried to open
# it (db.connect touches the writer-waiting marker at each try that finds it locked).
HOLDER = """
import sys, time
from pathlib import Path
from perfboard import db
store = Path(sys.argv[1])
conn = db.connect(store)
print("held", flush=True)
sys.stdin.readline()
store_marker = db.writer_marker(store)
store_marker.unlink(missing_ok=True)
print("watching", flush=True)
deadline = time.monotonic() + 120
while not store_marker.exists() and time.monotonic() < deadline:
    time.sleep(0.02)
conn.close()
print("released", flush=True)
"""


def test_detect_waits_for_a_writer_that_holds_the_store(tmp_path: Path) -> None:
    """`perfboard detect` opens the store as an ingest does: a store held by another
    writer is waited for (up to --lock-timeout), not a failure; too short a wait says
    why, with exit 2. No timing: the holder lets go only once detect has tried."""
    store = tmp_path / "perfboard.duckdb"
    assert main(["auto", str(sample_path(QAT)), "--db", str(store), "--quiet"]) == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        detect = [sys.executable, "-m", "perfboard", "detect", "--db", str(store)]
        impatient = subprocess.run(
            [*detect, "--lock-timeout", "0"], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert impatient.returncode == 2, impatient.stderr
        assert "Another ingest may be running" in impatient.stderr
        assert "Traceback" not in impatient.stderr
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "watching"
        patient = subprocess.run(
            [*detect, "--lock-timeout", "120"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert holder.stdout.readline().strip() == "released"  # it waited for the holder
        assert patient.returncode == 0, patient.stderr
        assert "series examined" in patient.stderr
    finally:
        holder.kill()
        holder.wait()


# -- the layers ----------------------------------------------------------------------------------


def test_nothing_in_perfboard_imports_the_ingest() -> None:
    """The core stands below the ingest: perfboard/ never imports ingest/, but for the one
    exception docs/architecture.md names: `perfboard check` reads the PR's documents as
    the ingest reads them, importing it inside perfboard/cli.py's _pr_run only."""
    offenders = []
    for path in sorted((ROOT / "perfboard").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed: set[int] = set()
        if path == ROOT / "perfboard" / "cli.py":
            for function in ast.walk(tree):
                if isinstance(function, ast.FunctionDef) and function.name == "_pr_run":
                    allowed |= {id(node) for node in ast.walk(function)}
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno}"
                for name in names
                if (name == "ingest" or name.startswith("ingest.")) and id(node) not in allowed
            ]
    assert offenders == []


def test_the_dashboard_says_a_bad_lake_url_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_app import run_page

    at = run_page(monkeypatch, "ducklake:nonsense", "pages/overview.py")  # type: ignore[arg-type]
    [error] = [e.value for e in at.error]
    assert error.startswith("The store cannot be read: ")
    assert "PostgreSQL catalog" in error  # (escaped for markdown: shown as written)


def test_a_tools_table_is_read_by_the_tools_parser_only() -> None:
    """llama-bench prints a markdown table: its t/s cells are throughputs, its size and
    params columns attributes of the series. The generic table reader, which once stored
    21.96 t/s as a latency of 21,960 ms, leaves the lines llama-bench read alone."""
    text = (ROOT / "tests/fixtures/modern/samples/llama-bench_llama.cpp-pr-4812.md").read_text()
    found = documents.parse_text(from_text(text), "auto")
    assert found.parsers == ["llama_bench"]
    assert {(m.metric, m.unit, m.direction, m.params["stat"]) for m in found.measurements} == {
        ("throughput", "tokens/s", "higher", "mean"),
        ("throughput", "tokens/s", "lower", "std"),  # a spread is better smaller
    }
    assert sorted(m.value for m in found.measurements if m.params["stat"] == "mean") == [
        59.99,
        127.43,
        237.84,
        4035.47,
    ]
    assert found.measurements[0].testbed == {"model_size": "3.56 GiB", "model_params": "6.74 B"}
    assert not found.problems


def test_the_gate_reads_a_small_text_as_its_hyperscan_database_does() -> None:
    # A small text is scanned with plain searches until the database is built (no compile
    # for a comment); the answer must be the database's: presence, and the latency offsets
    # of an ASCII text (the only ones used: a database's offsets count bytes).
    from ingest.gate import AnchorGate

    plain = AnchorGate(ANCHORS, frozenset({"latency"}))
    compiled = AnchorGate(ANCHORS, frozenset({"latency"}))
    compiled.compile()
    for path in sorted((Path(__file__).parent / "fixtures").rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()[:60_000]
        text = data.decode("utf-8", "replace")
        for given in (text, data) if data.isascii() else (text,):
            a, b = plain.scan(given), compiled.scan(given)
            assert a.present == b.present, path
            assert a.hits == b.hits or not data.isascii(), path


@pytest.mark.parametrize("dense", [1, 2, 5])
def test_the_gate_reads_a_text_dense_in_latency_lines_as_a_sparse_one(
    dense: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # After DENSE_HITS latency anchors the database stops, and the rest is scanned without
    # a Python call a hit: the same presence and offsets, wherever it stops (the real
    # documents, stopped after their first, second or fifth latency anchor).
    import ingest.gate as gate_module

    whole = gate_module.AnchorGate(ANCHORS, frozenset({"latency"}))
    whole.compile()
    stopped = gate_module.AnchorGate(ANCHORS, frozenset({"latency"}))
    stopped.compile()
    dense_ones = 0
    for path in sorted((Path(__file__).parent / "fixtures").rglob("*")):
        if not path.is_file() or not (data := path.read_bytes()).isascii():
            continue
        expected = whole.scan(data)
        with monkeypatch.context() as patch:
            patch.setattr(gate_module, "DENSE_HITS", dense)
            got = stopped.scan(data)
        assert (got.present, got.markers, got.hits) == (
            expected.present,
            expected.markers,
            expected.hits,
        ), path
        dense_ones += len(expected.hits["latency"]) >= dense
    assert dense_ones >= 10


def test_a_dense_scan_finds_an_anchor_across_its_stop_and_one_that_overlaps_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ingest.gate as gate_module

    monkeypatch.setattr(gate_module, "DENSE_HITS", 2)
    gate = gate_module.AnchorGate({"x": ("aa",), "y": ("baab",)}, frozenset({"x"}))
    gate.compile()
    # "aa" at 0, 1, 2 (overlapping), then in "baab" at 6; hyperscan stops at the second
    # "aa" (ends at 3), and "baab" (5-9) begins after it; "aa" again at 10.
    found = gate.scan(b"aaaa baab aa")
    assert found.hits == {"x": [0, 1, 2, 6, 10]} and found.present == {"x", "y"}
    monkeypatch.setattr(gate_module, "DENSE_HITS", 1)
    found = gate.scan(b"xbaab aa")  # stopped at the end of "aa" in "baab": "baab" spans it
    assert found.hits == {"x": [2, 6]} and found.present == {"x", "y"}


def test_every_command_module_runs_only_as_the_main_module() -> None:
    # Detection over many points runs in spawned processes, which import the parent's main
    # module again as __mp_main__: an unguarded `sys.exit(main())` would run the command
    # a second time in every worker.
    for module in ("ingest/__main__.py", "perfboard/__main__.py"):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        calls = [
            n
            for n in tree.body
            if isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Call)
            # the collector, around imports (save.freeze_for_life: gc.freeze, remembered)
            and not ast.unparse(n.value.func).startswith(("gc.", "freeze_for_life"))
        ]
        guards = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n)]
        assert not calls and guards, module
