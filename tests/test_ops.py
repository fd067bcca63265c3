"""Ops: op benchmark results matched between Paddle and other frameworks by the benchmark's
own op name and config id, accuracy beside speed, where Paddle loses and since when, the
queries behind them (on the demo and on the synthetic op store) and the Ops page."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from perfboard import compare, db, ops, queries
from scripts.add_synthetic_ops import add
from tests.test_app import all_text, frames, run_page

ABS_PARAMS = '{"config_id":0,"parameters":"x (Variable) - dtype: float32, shape: [16, 128]"}'


def result(
    op: str,
    framework: str,
    metric: str,
    value: float,
    params: str = "{}",
    device: str = "GPU",
    task: str = "op-forward",
    consistent: bool | None = None,
    at: str = "2020-08-12",
) -> dict[str, object]:
    """One row of queries.op_results."""
    return {
        "project": "op-benchmark",
        "benchmark": f"op/{op}",
        "task": task,
        "metric": metric,
        "unit": "" if metric == "max_diff" else "ms",
        "direction": "lower",
        "framework": framework,
        "device": device,
        "params": params,
        "testbed": '{"tensorflow":"2.3.0"}' if framework == "tensorflow" else "{}",
        "points": 1,
        "value": value,
        "version": "e8d5868e9720ee7b5bd8c9ff1cf2e6e7b7f1998a" if framework == "paddle" else None,
        "measured_at": pd.Timestamp(at),
        "consistent": consistent,
        "source": f"{op}.log",
        "source_url": f"https://github.com/PaddlePaddle/benchmark/pull/{len(op)}",
        "line": 1,
    }


def results(*rows: dict[str, object]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    frame.insert(0, "series_id", range(1, len(frame) + 1))
    return frame


# -- matching ---------------------------------------------------------------------------------


def test_op_config_is_the_config_id_never_the_argument_list() -> None:
    assert ops.op_config({"config_id": 0, "parameters": "x: [16, 128]"}) == {"config_id": "0"}
    assert ops.op_config({"config_id": "0"}) == {"config_id": "0"}  # "softmax-0" in a table
    assert ops.op_config({"parameters": "x: [16, 128]"}) == {}
    assert ops.op_config({}) == {}
    assert ops.config_label({"config_id": "3"}) == "3"
    assert ops.config_label({}) == ops.NO_CONFIG


def test_accuracy_is_consistent_within_the_tolerance_or_when_the_check_says_so() -> None:
    assert ops.accuracy_status(0.0, None) == "consistent"
    assert ops.accuracy_status(ops.ATOL, None) == "consistent"
    assert ops.accuracy_status(9.56, False) == "diff"  # resize_bilinear, config 5
    assert ops.accuracy_status(0.5, None) == "diff"
    assert ops.accuracy_status(2e-5, True) == "consistent"  # the check's own, larger atol
    assert ops.accuracy_status(None, True) is None
    assert ops.accuracy_status(float("nan"), None) is None


def test_match_pairs_configs_by_id_and_lists_the_unmatched_with_why() -> None:
    other_text = '{"config_id":"0","parameters":"x (Tensor) float32 [16, 128]"}'
    matched, unmatched = ops.match(
        results(
            # config 0: the id written as a number and as a string, the argument lists
            # printed differently by each framework: one config.
            result("abs", "paddle", "total_time", 2.76374, ABS_PARAMS),
            result("abs", "paddle", "gpu_time", 1.5, ABS_PARAMS),
            result("abs", "tensorflow", "total_time", 1.91671, other_text),
            result("abs", "tensorflow", "gpu_time", 1.5, other_text),
            # config 1 of the same op: a row of its own, Paddle faster.
            result("abs", "paddle", "total_time", 1.0, '{"config_id":1}'),
            result("abs", "tensorflow", "total_time", 2.0, '{"config_id":1}'),
            # config 2: only Paddle measured it.
            result("abs", "paddle", "total_time", 3.0, '{"config_id":2}'),
            # an op only TensorFlow measured.
            result("cumsum", "tensorflow", "total_time", 1.8483),
            # the timings an accuracy check prints: never compared.
            result("abs", "paddle", "total_time", 12.7, '{"task_kind":"accuracy_run"}'),
            result("abs", "tensorflow", "total_time", 836.2, '{"task_kind":"accuracy_run"}'),
        )
    )
    assert matched[["op", "config", "paddle_total", "other_total"]].values.tolist() == [
        ["abs", "0", 2.76374, 1.91671],  # the largest loss first
        ["abs", "1", 1.0, 2.0],
    ]
    first, second = matched.iloc[0], matched.iloc[1]
    assert first.words_total == "Paddle 1.44x slower than tensorflow"
    assert first.ratio_total == pytest.approx(2.76374 / 1.91671)
    assert (first.verdict_total, first.loses) == ("worse", True)
    assert first.words_gpu == "Paddle on par with tensorflow" and first.verdict_gpu == "same"
    assert second.words_total == "Paddle 2.00x faster than tensorflow" and not second.loses
    assert pd.isna(second.ratio_gpu) and second.words_gpu == "–"  # no GPU time measured
    assert first.parameters == "x (Variable) - dtype: float32, shape: [16, 128]"
    assert first.source_url == "https://github.com/PaddlePaddle/benchmark/pull/3"

    why = unmatched.set_index(["op", "config", "framework"]).why
    assert why["abs", "2", "paddle"].startswith("tensorflow measured this op only as: config 0")
    assert why["cumsum", ops.NO_CONFIG, "tensorflow"] == "Paddle did not measure this op"
    accuracy_runs = unmatched[unmatched.config == "accuracy run"]
    assert sorted(accuracy_runs.framework) == ["paddle", "tensorflow"]
    assert set(accuracy_runs.why) == {
        "the timing of an accuracy check (repeat 1): the benchmark says to ignore it"
    }
    assert len(unmatched) == 4  # nothing dropped


def test_match_sets_each_ops_accuracy_check_beside_its_speed() -> None:
    matched, unmatched = ops.match(
        results(
            result("abs", "paddle", "total_time", 2.0),
            result("abs", "tensorflow", "total_time", 1.0),
            # a v1 check names no device: it holds for the op on every device.
            result("abs", "paddle", "max_diff", 0.0, device="", consistent=True),
            result("relu", "paddle", "total_time", 1.0, '{"config_id":0}'),
            result("relu", "tensorflow", "total_time", 1.0, '{"config_id":0}'),
            result("relu", "paddle", "max_diff", 0.25, '{"config_id":0}', consistent=False),
            result("tanh", "paddle", "total_time", 1.0),
            result("tanh", "tensorflow", "total_time", 1.0),  # never checked
            # a check of an op no framework timed: listed, not dropped.
            result(
                "resize_bilinear",
                "paddle",
                "max_diff",
                9.563,
                '{"config_id":5}',
                task="op-backward",
                consistent=False,
            ),
        )
    )
    accuracy = matched.set_index("op")[["accuracy", "max_diff"]]
    assert accuracy.loc["abs"].tolist() == ["consistent", 0.0]
    assert accuracy.loc["relu"].tolist() == ["diff", 0.25]
    assert accuracy.loc["tanh"].isna().all()
    [check] = unmatched.itertuples()
    assert (check.op, check.config, check.task, check.framework) == (
        "resize_bilinear",
        "5",
        "op-backward",
        "accuracy check",
    )
    assert check.measured == "max_diff 9.563 (diff)"
    assert check.why.startswith("an accuracy check only")


def test_match_with_several_competitors_and_nothing_to_match() -> None:
    matched, _ = ops.match(
        results(
            result("abs", "paddle", "total_time", 2.0),
            result("abs", "tensorflow", "total_time", 1.0),
            result("abs", "pytorch", "total_time", 4.0),
        )
    )
    assert matched.set_index("theirs").words_total.to_dict() == {
        "tensorflow": "Paddle 2.00x slower than tensorflow",
        "pytorch": "Paddle 2.00x faster than pytorch",
    }
    matched, unmatched = ops.match(results(result("abs", "paddle", "total_time", 2.0)))
    assert matched.empty and unmatched.why.tolist() == ["no other framework measured this op"]
    matched, unmatched = ops.match(pd.DataFrame())
    assert matched.empty and unmatched.empty
    assert list(matched.columns) == ops.MATCHED_COLUMNS


def test_losing_since_counts_the_latest_unbroken_run_by_paddle_commit() -> None:
    times = pd.date_range("2020-01-01", periods=5)
    history = pd.DataFrame(
        {
            "pair": ["p"] * 5 + ["q"] * 2,
            "measured_at": [*times, *times[:2]],
            "version": [f"c{i}" for i in range(5)] + ["c0", "c1"],
            "ours_value": [1.3, 0.9, 1.2, 1.5, 1.5, 1.5, 0.9],
            "theirs_value": [1.0] * 7,
            "ratio": [1.3, 0.9, 1.2, 1.5, 1.5, 1.5, 0.9],
            "source_url": None,
        }
    ).assign(
        op="abs",
        benchmark="op/abs",
        task="op-forward",
        device="GPU",
        config="0",
        theirs="tensorflow",
        unit="ms",
        direction="lower",
        metric="total_time",
    )
    lose = ops.losing_since(history)
    assert lose.pair.tolist() == ["p"]  # q recovered at its latest commit
    row = lose.iloc[0]
    assert row.words == "Paddle 1.50x slower than tensorflow"
    assert (row.since, row.days, row.commits) == (times[2], 2, 3)
    assert (row.metric, row.version) == ("total", "c4")
    assert ops.losing_since(history[history.pair == "q"]).empty


# -- on the demo --------------------------------------------------------------------------------


def demo_match(demo_db: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    conn = db.connect(demo_db, read_only=True)
    try:
        return ops.match(queries.op_results(conn, ops.METRICS))
    finally:
        conn.close()


def test_the_demo_op_benchmarks_against_tensorflow(demo_db: Path) -> None:
    matched, unmatched = demo_match(demo_db)
    assert set(matched.theirs) == {"tensorflow"}
    rows = matched.set_index(["op", "device"])
    # PaddlePaddle/benchmark#282, op benchmark v1: abs on GPU, with its accuracy check.
    abs_op = rows.loc["abs", "GPU"]
    assert (abs_op.paddle_total, abs_op.other_total) == (2.76374, 1.91671)
    assert abs_op.words_total == "Paddle 1.44x slower than tensorflow"
    assert (abs_op.accuracy, abs_op.max_diff) == ("consistent", 0.0)
    assert abs_op.source_url == "https://github.com/PaddlePaddle/benchmark/pull/282"
    # PaddlePaddle/benchmark#380's op table (no device named): cumsum, the largest loss.
    cumsum = matched.iloc[0]
    assert (cumsum.op, cumsum.paddle_total, cumsum.other_total) == ("cumsum", 86.2771, 1.8483)
    assert cumsum.words_total == "Paddle 46.68x slower than tensorflow"
    # Both times are one row of #380's table: its line, read as each side's value.
    conn = db.connect(demo_db, read_only=True)
    read = conn.execute(
        "SELECT m.value FROM measurements m JOIN series s USING (series_id)"
        " WHERE m.source_id = ? AND m.line = ? AND s.benchmark = 'op/cumsum'"
        " AND s.metric = 'total_time' ORDER BY m.value",
        [int(cumsum.source_id_total), int(cumsum.line_total)],
    ).fetchall()
    conn.close()
    assert (cumsum.other_source_id_total, cumsum.other_line_total) == (
        cumsum.source_id_total,
        cumsum.line_total,
    )
    assert read == [(1.8483,), (86.2771,)]
    # abs on GPU (#282, a v1 log): each framework's time on a line of its own.
    assert abs_op.line_total != abs_op.other_line_total
    assert rows.loc["softmax", ""].config == "0"  # "softmax-0"
    # Listed, not dropped: abs config 0 of a v2 log (TensorFlow measured no config 0), the
    # timings of the v1 accuracy check, and resize_bilinear's accuracy check on its own.
    assert sorted(zip(unmatched.op, unmatched.framework, strict=True)) == [
        ("abs", "paddle"),
        ("abs", "paddle"),
        ("abs", "tensorflow"),
        ("resize_bilinear", "accuracy check"),
    ]


def test_the_history_aligns_as_compare_does(demo_db: Path) -> None:
    matched, _ = demo_match(demo_db)
    pairs = ops.history_pairs(matched)
    conn = db.connect(demo_db, read_only=True)
    try:
        history = queries.op_history(
            conn, tuple(pairs.pair), tuple(pairs.ours_id), tuple(pairs.theirs_id)
        )
        assert queries.op_history(conn, (), (), ()).empty
    finally:
        conn.close()
    lose = ops.losing_since(history.merge(pairs, on="pair"))
    cumsum = lose[(lose.op == "cumsum") & (lose.metric == "total")].iloc[0]
    assert cumsum.words == "Paddle 46.68x slower than tensorflow"
    assert cumsum.since == pd.Timestamp("2020-05-06")
    assert cumsum.source_url == "https://github.com/PaddlePaddle/benchmark/pull/380"
    # The Compare page's where-we-lose says the same of every op pair.
    theirs = compare.where_we_lose(
        history.merge(pairs, on="pair").assign(subject="Paddle")
    ).set_index("pair")
    for row in lose.itertuples():
        assert theirs.loc[row.pair, "words"] == row.words


def test_losses_reads_and_walks_the_pairs_history(demo_db: Path) -> None:
    """ops.losses: what the Ops page asks through ui.query (pairs as plain tuples, a key
    the result cache can hold), the same as losing_since of the history it reads."""
    matched, _ = demo_match(demo_db)
    pairs = ops.history_pairs(matched)
    rows = ops.pair_rows(pairs)
    assert hash(rows) == hash(ops.pair_rows(pairs.copy()))  # one key for equal pairs
    conn = db.connect(demo_db, read_only=True)
    try:
        history = queries.op_history(
            conn, tuple(pairs.pair), tuple(pairs.ours_id), tuple(pairs.theirs_id)
        )
        lose = ops.losses(conn, rows)
        assert ops.losses(conn, ()).empty
    finally:
        conn.close()
    expected = ops.losing_since(history.merge(pairs, on="pair"))
    pd.testing.assert_frame_equal(lose, expected, check_dtype=False)
    assert "Paddle 46.68x slower than tensorflow" in set(lose.words)


# -- on the synthetic op store ------------------------------------------------------------------


@pytest.fixture(scope="module")
def op_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/add_synthetic_ops.py's 1.3 M measurements, in a store of their own."""
    path = tmp_path_factory.mktemp("ops") / "ops.duckdb"
    assert add(path) == 1_315_200
    assert add(path) == 1_315_200  # again: replaces, does not double
    return path


def test_synthetic_ops_match_config_by_config(op_store: Path) -> None:
    conn = db.connect(op_store, read_only=True)
    try:
        found = queries.op_results(conn, ops.METRICS)
        matched, unmatched = ops.match(found)
        assert len(found) == 400 * 4 * 2 * 2 + 8 * 2 + 400 * 4
        assert len(matched) == 400 * 4 and set(matched.theirs) == {"tensorflow"}
        assert set(unmatched.config) == {"4"} and len(unmatched) == 8  # Paddle's extra config
        # Every 8th op is slower since a commit of its own; every 37th differs in accuracy.
        slow = matched[matched.op == "synthetic_op_003"]
        assert slow.loses.all() and len(slow) == 4
        assert (matched[matched.op == "synthetic_op_005"].accuracy == "diff").all()
        assert (matched[matched.op == "synthetic_op_004"].accuracy == "consistent").all()
        pairs = ops.history_pairs(slow)
        history = queries.op_history(
            conn, tuple(pairs.pair), tuple(pairs.ours_id), tuple(pairs.theirs_id)
        )
        assert len(history) == len(pairs) * 200  # a ratio at every Paddle commit
        lose = ops.losing_since(history.merge(pairs, on="pair"))
        # op 3 turns slower at commit 60 + (3 x 13) % 120 = 99: 2020-01-01 + 99 days.
        assert set(lose.since) == {pd.Timestamp("2020-04-09 02:00")}
        assert set(lose.commits) == {101}
        # The same pair through compare.ratio_over_time: the same ratios.
        one = pairs.iloc[0]
        points = conn.execute(
            "SELECT series_id, measured_at, version, value FROM measurements"
            " WHERE series_id IN (?, ?) ORDER BY measured_at",
            [int(one.ours_id), int(one.theirs_id)],
        ).df()
        aligned = compare.ratio_over_time(
            points[points.series_id == one.ours_id], points[points.series_id == one.theirs_id]
        )
        mine = history[history.pair == one.pair]
        assert mine.ratio.round(12).tolist() == aligned.ratio.round(12).tolist()
    finally:
        conn.close()


# -- the page -----------------------------------------------------------------------------------


def test_ops_page_on_the_demo(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_page(monkeypatch, demo_db, "pages/ops.py")
    assert dict(at.query_params) == {"vs": "tensorflow"}
    table, lose, alone = frames(at)
    cumsum = table.iloc[0]
    assert (cumsum.op, cumsum.paddle_total, cumsum.other_total) == ("cumsum", 86.2771, 1.8483)
    assert cumsum.words_total == ["Paddle 46.68x slower than tensorflow"]
    assert round(cumsum.ratio_total, 2) == 46.68  # numeric beside the words: sorts by size
    abs_op = table[(table.op == "abs") & (table.device == "GPU")].iloc[0]
    assert (abs_op.paddle_total, abs_op.other_total) == (2.76374, 1.91671)
    assert abs_op.words_total == ["Paddle 1.44x slower than tensorflow"]
    assert abs_op.accuracy == ["consistent"]
    assert abs_op.link == "https://github.com/PaddlePaddle/benchmark/pull/282"
    assert table.link.notna().all()  # every op row links to its source document
    # ... and each side's total time to its line, that number marked.
    assert abs_op.paddle_line.startswith("/sources?source=")
    assert abs_op.paddle_line.endswith("&value=2.76374")
    assert abs_op.other_line.endswith("&value=1.91671")
    assert table.paddle_line.notna().all() and table.other_line.notna().all()
    assert alone.line.notna().all()
    assert lose.words.iloc[0] == "Paddle 48.42x slower than tensorflow"  # cumsum's GPU time
    assert "resize_bilinear" in set(alone.op)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Paddle slower"] == "6" and metrics["Op configs against tensorflow"] == "7"
    assert not at.get("vega_lite_chart")  # no op picked: no chart
    # PR #380's op "null" is PaddlePaddle/benchmark's empty program: said so, as the name
    # reads like a missing value to whoever has not seen api/tests/null.py.
    assert "null" in set(table.op)
    assert "The op named null is the op benchmark's empty program" in all_text(at)
    one = run_page(monkeypatch, demo_db, "pages/ops.py", op="cumsum", vs="tensorflow")
    assert "op named null" not in all_text(one)


def test_an_op_deep_link(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_page(monkeypatch, demo_db, "pages/ops.py", op="cumsum", vs="tensorflow")
    assert dict(at.query_params) == {"op": "cumsum", "vs": "tensorflow"}
    table, lose = frames(at)
    assert table.op.tolist() == ["cumsum"]
    assert lose.words.tolist() == [
        "Paddle 48.42x slower than tensorflow",
        "Paddle 46.68x slower than tensorflow",
    ]
    assert lose.since.tolist() == [pd.Timestamp("2020-05-06")] * 2
    assert len(at.get("vega_lite_chart")) == 1
    assert "Every op result shown found its counterpart." in all_text(at)

    gpu = run_page(monkeypatch, demo_db, "pages/ops.py", op="cumsum", time="GPU", lose="1")
    assert dict(gpu.query_params) == {
        "op": "cumsum",
        "vs": "tensorflow",
        "lose": "1",
        "time": "GPU",
    }
    assert len(gpu.get("vega_lite_chart")) == 1


def test_every_result_the_ops_page_keeps_is_in_the_one_bounded_cache(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    from perfboard import ui
    from tests.conftest import ROOT

    ui.RESULTS.clear()
    at = run_page(monkeypatch, demo_db, "pages/ops.py", op="cumsum")
    assert frames(at)[1].words.tolist()[0] == "Paddle 48.42x slower than tensorflow"
    assert "perfboard.ops.losses" in {key[0] for key in ui.RESULTS._entries}
    # No page caches anything of its own beside ui.query's cache.
    for page in (ROOT / "pages").glob("*.py"):
        text = page.read_text(encoding="utf-8")
        assert "st.cache_data" not in text and "st.cache_resource" not in text, page.name


def test_filters_and_an_unknown_op(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_page(monkeypatch, demo_db, "pages/ops.py", device="GPU", lose="1")
    table = frames(at)[0]
    assert table.op.tolist() == ["abs"] and table.device.tolist() == ["GPU"]
    at = run_page(monkeypatch, demo_db, "pages/ops.py", direction="backward")
    assert "No op matches these filters" in all_text(at)
    assert frames(at)[-1].op.tolist() == ["resize_bilinear"]  # the unmatched, filtered too
    at = run_page(monkeypatch, demo_db, "pages/ops.py", op="[x](javascript:alert(1))")
    [warning] = at.warning
    assert "\\[x\\]\\(javascript" in warning.value  # shown as text, not a link
    assert "op" not in at.query_params


def test_ops_page_without_op_results(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, "pages/ops.py")
    assert "No op benchmark results yet" in all_text(at)
    assert "python -m ingest opbench PATH" in all_text(at)
    missing = run_page(monkeypatch, tmp_path / "none.duckdb", "pages/ops.py")
    assert "make demo" in all_text(missing)


def test_ops_page_when_nothing_matches(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "lonely.duckdb"
    conn = db.connect(path)
    conn.execute(
        "INSERT INTO sources (source_id, uri, content_hash, parser, kind, reader, project,"
        " ingested_at, size_bytes, status) VALUES (1, 'abs.log', 'x', 'opbench', 'auto', '1',"
        " 'op-benchmark', now()::TIMESTAMP, 0, 'ok')"
    )
    conn.execute(
        "INSERT INTO series VALUES (1, 'k', 'op-benchmark', 'op/abs', 'op-forward',"
        " 'total_time', 'ms', 'lower', 'paddle', 'GPU', ?, '{}')",
        [ABS_PARAMS],
    )
    conn.execute(
        "INSERT INTO measurements (series_id, source_id, run, version, measured_at, value,"
        " status, line) VALUES (1, 1, 0, 'e8d5868', TIMESTAMP '2020-08-12', 1.49, 'ok', 1)"
    )
    conn.close()
    at = run_page(monkeypatch, path, "pages/ops.py")
    assert "No op was measured by Paddle and another framework" in all_text(at)
    [alone] = frames(at)
    assert alone.why.tolist() == ["no other framework measured this op"]
    assert duckdb.connect(str(path), read_only=True).execute(
        "SELECT count(*) FROM measurements"
    ).fetchone() == (1,)
