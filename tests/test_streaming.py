"""A large document stored as it is read (documents.stream_document, save.save_streamed):
the same store as when it is read whole and then stored, by the same rules (replaced,
duplicate, holding nothing, empty, a parser failing in the middle), in one transaction.

The sizes are made small (chunks of 32 KiB, a document of two chunks streams, a part of
50 rows is written): the real thresholds are 64 MiB and 262,144 rows.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb
import pytest

import ingest.documents as documents
import ingest.pipeline as pipeline
from ingest.cli import main
from perfboard.model import DocMeta
from tests.conftest import parse_text_failing_on, real_text_documents, rows
from tests.test_ingest import snapshot as _snapshot

TESTER = (
    "I0911 06:41:55.{us:06d}  7238 ernie_tester.cc:345] Run {n} samples,"
    " average latency: {ms:.5f} ms per sample.\n"
)


def snapshot(store: Path) -> dict[str, list[tuple]]:
    """Everything the store holds but ingest times: tests.test_ingest's, with the runs,
    claims and phases."""
    held = _snapshot(store)
    conn = duckdb.connect(str(store), read_only=True)
    try:
        for table in ("runs", "claims", "phases"):
            held[table] = conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
    finally:
        conn.close()
    return held


@pytest.fixture
def small_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "CHUNK_BYTES", 32 * 1024)
    monkeypatch.setattr(documents, "STREAM_MIN_CHUNKS", 2)
    monkeypatch.setattr(documents, "STREAM_BYTES", 8 * 1024)
    monkeypatch.setattr(documents, "PARALLEL_MIN_CHUNKS", 2)


def real_log(path: Path, repeats: int = 3) -> Path:
    """Every real text document of the repository, end to end, `repeats` times: tester
    logs, profiler reports, pass lists, PR tables, tool outputs, issue comments."""
    texts = [p.read_text(encoding="utf-8").rstrip("\n") + "\n\n" for p in real_text_documents()]
    path.write_text("".join(texts) * repeats, encoding="utf-8")
    return path


def ingest_into(store: Path, path: Path, *, stream: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    with monkeypatch.context() as patch:
        if not stream:
            patch.setattr(pipeline, "streams", lambda _path: False)
        return main(["auto", str(path), "--db", str(store), "--quiet", "--no-detect"])


def test_a_streamed_document_is_stored_as_one_read_whole(
    tmp_path: Path, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = real_log(tmp_path / "real.md")
    whole, streamed = tmp_path / "whole.duckdb", tmp_path / "streamed.duckdb"
    assert ingest_into(whole, log, stream=False, monkeypatch=monkeypatch) == 0
    assert ingest_into(streamed, log, stream=True, monkeypatch=monkeypatch) == 0
    one, other = snapshot(whole), snapshot(streamed)
    assert len(one["measurements"]) > 4000 and len(one["profile"]) > 700
    assert len(one["passes"]) >= 90 and len(one["runs"]) > 100 and len(one["claims"]) > 10
    assert other == one


def test_a_streamed_document_read_by_worker_processes_is_stored_as_one_read_whole(
    tmp_path: Path, small_sizes: None
) -> None:
    from ingest.save import save_found, save_streamed
    from perfboard import db

    log = real_log(tmp_path / "real.md", repeats=2)
    meta = DocMeta(uri="real.md", project="ernie")
    stores = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        for name in ("whole.duckdb", "streamed.duckdb"):
            conn = db.connect(tmp_path / name)
            if name == "whole.duckdb":
                parsed = documents.read_document(log, "auto", meta, pool=pool)
                save_found(conn, parsed.info, parsed.found, parsed.rows)
            else:
                streamed = documents.stream_document(log, "auto", meta, pool=pool)

                def finish(streamed=streamed):  # type: ignore[no-untyped-def]
                    parsed = streamed.finish()
                    return parsed.info, parsed.found

                save_streamed(conn, meta, "auto", streamed.parts, finish)
            conn.close()
            stores.append(snapshot(tmp_path / name))
    one, other = stores
    assert len(one["measurements"]) > 1000
    assert other == one


def test_a_streamed_documents_parts_are_bounded_in_bytes(
    tmp_path: Path, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A part goes to the store once STREAM_BYTES of rows are read: each holds that and at
    # most one chunk's rows more (here a chunk's rows, about 80 KiB, are under the bound).
    bound = 150 * 1024
    monkeypatch.setattr(documents, "STREAM_BYTES", bound)
    log = write_tester_log(tmp_path / "tester.log", 2000, 6.0)
    parts = list(documents.stream_document(log, "auto", DocMeta(uri="tester.log")).parts)
    assert len(parts) >= 3
    assert all(bound <= p.nbytes < 2 * bound for p in parts[:-1])
    lines = [line for p in parts for line in p.measurements["line"].to_pylist()]
    assert lines == list(range(1, 2001))


def write_tester_log(path: Path, lines: int, ms: float) -> Path:
    path.write_text(
        "".join(TESTER.format(us=i, n=5000 + i, ms=ms + i % 7 / 100) for i in range(lines)),
        encoding="utf-8",
    )
    return path


def stored_tester_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A store holding a streamed log of 2,000 tester lines (6.00-6.06 ms), and the log."""
    store = tmp_path / "store.duckdb"
    log = write_tester_log(tmp_path / "tester.log", 2000, 6.0)
    assert ingest_into(store, log, stream=True, monkeypatch=monkeypatch) == 0
    return store, log


def test_a_streamed_document_replaced_duplicated_and_emptied_by_the_same_rules(
    tmp_path: Path, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, log = stored_tester_log(tmp_path, monkeypatch)
    assert rows(store, "SELECT uri, n_measurements, status FROM sources") == [
        (str(log), 2000, "ok")
    ]
    # Changed: its rows replaced, in the same transaction
    write_tester_log(log, 1500, 7.0)
    assert ingest_into(store, log, stream=True, monkeypatch=monkeypatch) == 0
    assert rows(store, "SELECT count(*), min(value) FROM measurements") == [(1500, 7.0)]
    # The same bytes under another name: a duplicate, nothing of it stored
    twin = tmp_path / "twin.log"
    twin.write_bytes(log.read_bytes())
    assert ingest_into(store, twin, stream=True, monkeypatch=monkeypatch) == 0
    assert rows(store, "SELECT uri FROM sources") == [(str(log),)]
    assert rows(store, "SELECT count(*) FROM measurements") == [(1500,)]
    # Nothing but white space now: its rows go, its source stays, marked empty
    log.write_text(" \n" * 40_000, encoding="utf-8")
    assert ingest_into(store, log, stream=True, monkeypatch=monkeypatch) == 0
    assert rows(store, "SELECT status, n_measurements FROM sources") == [("empty", 0)]
    assert rows(store, "SELECT count(*) FROM measurements") == [(0,)]


def test_a_streamed_document_that_holds_nothing_is_stored_as_unrecognised(
    tmp_path: Path, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    noise = tmp_path / "noise.log"
    noise.write_text("nothing to read here, line {}\n" * 4000, encoding="utf-8")
    found = []
    for name, stream in (("whole.duckdb", False), ("streamed.duckdb", True)):
        store = tmp_path / name
        # Said in the exit status, as any document perfboard cannot read
        assert ingest_into(store, noise, stream=stream, monkeypatch=monkeypatch) == 1
        found.append(snapshot(store))
    assert found[1] == found[0]
    assert rows(tmp_path / "streamed.duckdb", "SELECT status FROM sources") == [("unrecognised",)]


def test_a_parser_failing_in_the_middle_of_a_streamed_document_takes_it_all_back(
    tmp_path: Path, small_sizes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, log = stored_tester_log(tmp_path, monkeypatch)
    before = snapshot(store)
    text = log.read_text(encoding="utf-8").splitlines(keepends=True)
    text.insert(1500, "BOOM\n")  # in a chunk after the first parts were written
    log.write_text("".join(text).replace("6.0", "9.0"), encoding="utf-8")
    parse_text_failing_on(monkeypatch, "BOOM")
    assert ingest_into(store, log, stream=True, monkeypatch=monkeypatch) == 1
    after = snapshot(store)
    assert after["measurements"] == before["measurements"]  # the earlier rows kept
    [(reason,)] = rows(store, "SELECT reason FROM ingest_errors")
    assert reason.startswith("internal error, please report: ZeroDivisionError")
