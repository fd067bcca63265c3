"""A count the store cannot hold is its line's problem, never the document's overflow.

Each case is a real document with one number made too large for its store column; before
ingest.bounds each of them failed the whole document at insert ("internal error:
OverflowError" or "ArrowInvalid"), and nothing of it was stored.
"""

from __future__ import annotations

import sys
from pathlib import Path

from perfboard import db
from tests.conftest import ingest, sample_path

ROOT = Path(__file__).resolve().parents[1]
NSYS = ROOT / "tests/fixtures/modern/samples/nsys-stats-text_nanomoe-report.md"


def stored(store: Path, sql: str) -> list[tuple]:
    conn = db.connect(store, read_only=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def errors(store: Path) -> list[tuple[int, str, str]]:
    return stored(store, "SELECT line, parser, reason FROM ingest_errors ORDER BY line")


def ingest_changed(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    """The store of a real document with one string of it (found once) replaced."""
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / source.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    store = tmp_path / "store.duckdb"
    ingest("auto", str(path), "--db", str(store))
    return store


def test_an_nsys_instances_count_beyond_bigint_fails_its_row_only(tmp_path: Path) -> None:
    row = "     20.8         75339544      51200    1471.5"
    store = ingest_changed(tmp_path, NSYS, row, row.replace("     51200", "99999999999999999999"))
    # The other 24 rows of the real report; the kernel it had on line 27 is the problem.
    assert stored(store, "SELECT count(*) FROM profile_events") == [(24,)]
    assert stored(store, "SELECT count(*) FROM profile_events WHERE line = 27") == [(0,)]
    ((line, parser, reason),) = errors(store)
    assert (line, parser) == (27, "nsys")
    assert reason.startswith("calls = 1e+20 is beyond what the store holds")


def test_a_subgraph_count_beyond_integer_fails_its_pass_only(tmp_path: Path) -> None:
    source = sample_path("benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md")
    store = ingest_changed(tmp_path, source, "detected 14 ", "detected 99999999999 ")
    names = [name for (name,) in stored(store, "SELECT name FROM passes ORDER BY line")]
    assert "fuse_elewise_add_act_pass" not in names
    assert names[:5] == [
        "ir_graph_build_pass",
        "ir_graph_clean_pass",
        "ir_analysis_pass",
        "is_test_pass",
        "simplify_with_basic_ops_pass",
    ]
    ((line, parser, reason),) = errors(store)
    assert (line, parser) == (13, "passes")  # the pass line; its "detected" line is 14
    assert reason.startswith("subgraphs = 1e+11 is beyond what the store holds")


def test_a_tester_log_read_in_bulk_keeps_every_row_that_fits(tmp_path: Path) -> None:
    """A 10 MB session log (read in chunks, on the bulk paths): a samples count and a
    subgraph count beyond the store's columns are two problems, and the rest is stored as
    the unchanged log stores it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_ingest

    good = tmp_path / "session.log"
    bench_ingest.write_mix(good, "session", 10)
    text = good.read_text(encoding="utf-8")
    middle = len(text) // 2
    at = text.index("---  detected ", middle) + len("---  detected ")
    end = text.index(" subgraphs", at)
    text = text[:at] + "99999999999" + text[end:]
    at = text.index("] Run ", len(text) // 3) + len("] Run ")
    end = text.index(" samples", at)
    text = text[:at] + "99999999999999999999" + text[end:]
    bad = tmp_path / "session-bad.log"
    bad.write_text(text, encoding="utf-8")
    for name in ("good", "bad"):
        ingest("auto", str(good if name == "good" else bad), "--db", str(tmp_path / name))
    found = [(parser, reason.split(" = ")[0]) for _, parser, reason in errors(tmp_path / "bad")]
    assert sorted(found) == [("latency", "samples"), ("passes", "subgraphs")]
    for table in ("measurements", "passes"):
        ((good_rows,),) = stored(tmp_path / "good", f"SELECT count(*) FROM {table}")
        ((bad_rows,),) = stored(tmp_path / "bad", f"SELECT count(*) FROM {table}")
        assert bad_rows == good_rows - 1 > 3000


def test_a_phase_rows_pr_number_beyond_bigint_keeps_the_row_without_its_pr(
    tmp_path: Path,
) -> None:
    source = sample_path("benchmark-165_2020-02-04_xreki_phase2-table.md")
    store = ingest_changed(tmp_path, source, "/pull/22424", "/pull/99999999999999999999")
    rows = stored(store, "SELECT label, value, pr_number FROM milestones ORDER BY ordinal")
    assert rows == [("0", 10.0, None), ("1", 9.5, None)]  # the sample's row 2 is cut short
    (line, _, reason), cut = errors(store)
    assert line == 12 and reason.startswith("pr_number = 1e+20 is beyond what the store holds")
    assert reason.endswith("the milestone is kept without its PR number")
    assert cut[0] == 13 and cut[2] == "row cut short: 4 of 6 cells"


def test_a_stat_beyond_64_bits_is_stored_as_printed(tmp_path: Path) -> None:
    # PrintTime's lines (tester_helper.h), the second record's fps as long as a log may
    # print it: orjson refuses such an int, and the whole document failed ("internal
    # error: TypeError: Integer exceeds 64-bit range").
    glog = "I1125 10:00:53.087609  7238 tester_helper.h:384] ====== "
    path = tmp_path / "print_time.log"
    path.write_text(
        f"{glog}threads: 1, thread id: 0 ======\n"
        f"{glog}batch_size: 1, iterations: 5, repetitions: 10 ======\n"
        f"{glog}batch latency: 30.282ms, number of samples: 5, sample latency: 30.2815ms,"
        " fps: 33023 ======\n"
        f"{glog}batch latency: 1.5ms, number of samples: 5, sample latency: 1.5ms,"
        " fps: 1000000000000000000000 ======\n",
        encoding="utf-8",
    )
    store = tmp_path / "store.duckdb"
    ingest("auto", str(path), "--db", str(store))
    assert stored(store, "SELECT line, value, stats FROM measurements ORDER BY line") == [
        (
            3,
            30.2815,
            '{"batch_latency":30.282,"fps":33023,"iterations":5,"repetitions":10,"thread_id":0}',
        ),
        (4, 1.5, '{"batch_latency":1.5,"fps":1000000000000000000000}'),
    ]
    assert errors(store) == []
