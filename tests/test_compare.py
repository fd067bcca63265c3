"""Compare: Welch's test without scipy, two versions side by side, paired variants (BERT QAT
INT8 vs FP32, Paddle vs TensorFlow op benchmarks) with where we lose, the attribution of a
series' change to PRs, the queries behind them and the Compare page."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ingest.results import write_records
from perfboard import alerts, compare, db, queries, stats
from tests.conftest import ingest
from tests.test_alerts import START, nightly, sha
from tests.test_app import all_text, frames, run_page
from tests.test_results import RECORD

PADDLE = "PaddlePaddle/Paddle"

# -- the t distribution and Welch's test ------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "df", "p"),
    [
        (2.0, 10, 0.0734),  # tables of Student's t
        (1.0, 5, 0.3632),
        (-1.0, 5, 0.3632),  # two-sided: the sign does not matter
        (2.228, 10, 0.0500),  # the 5% critical value at 10 degrees of freedom
        (12.706, 1, 0.0500),  # ... and at 1 (the Cauchy distribution)
        (1.96, 1e6, 0.0500),  # the normal limit
        (0.0, 7, 1.0),
    ],
)
def test_student_t_p_matches_the_tables(t: float, df: float, p: float) -> None:
    assert stats.student_t_p(t, df) == pytest.approx(p, abs=5e-5)


def test_incomplete_beta_at_closed_forms() -> None:
    # I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
    assert stats.betai(2.5, 1.0, 0.3) == pytest.approx(0.3**2.5, rel=1e-12)
    assert stats.betai(1.0, 3.0, 0.2) == pytest.approx(1 - 0.8**3, rel=1e-12)
    assert (stats.betai(2, 3, 0.0), stats.betai(2, 3, 1.0)) == (0.0, 1.0)


def test_welch_matches_r_on_the_sleep_data() -> None:
    # R: t.test(extra ~ group, data = sleep) -> t = -1.8608, df = 17.776, p-value = 0.07939
    group1 = np.array([0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0])
    group2 = np.array([1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4])
    assert stats.welch(group1, group2) == pytest.approx(0.07939, abs=5e-6)
    assert stats.welch(group2, group1) == pytest.approx(0.07939, abs=5e-6)


def test_welch_needs_two_values_a_side() -> None:
    assert stats.welch(np.array([1.0]), np.array([1.0, 2.0])) is None
    assert stats.welch(np.array([1.0, np.nan]), np.array([1.0, 2.0])) is None
    assert stats.welch(np.array([3.0, 3.0]), np.array([3.0, 3.0])) == 1.0
    assert stats.welch(np.array([3.0, 3.0]), np.array([4.0, 4.0])) == 0.0


# -- two versions side by side ----------------------------------------------------------------


def side(rows: list[tuple[int, float]], version: str) -> pd.DataFrame:
    meta = {
        1: ("ernie · latency", "lower"),
        2: ("ernie · throughput", "higher"),
        3: ("bert · latency", "lower"),
        4: ("op/abs · total_time", "lower"),
    }
    return pd.DataFrame(
        [
            {
                "series_id": s,
                "series": meta[s][0],
                "project": "ernie",
                "benchmark": "ernie",
                "metric": meta[s][0].split(" · ")[1],
                "unit": "ms",
                "direction": meta[s][1],
                "framework": "paddle",
                "value": v,
                "version": version,
                "measured_at": pd.Timestamp("2020-02-04"),
            }
            for s, v in rows
        ]
    )


def test_side_by_side_on_two_tiny_frames() -> None:
    a = side([(1, 10.0), (1, 10.2), (1, 9.8), (2, 100.0), (3, 5.0)], "v1")
    b = side([(1, 8.4), (1, 8.5), (1, 8.3), (2, 101.0), (4, 1.0)], "v2")
    table = compare.side_by_side(a, b)
    assert list(table.series_id) == [1, 2]  # shared only, largest impact first
    first, second = table.iloc[0], table.iloc[1]
    assert (first.value_a, first.value_b, first.n_a, first.n_b) == (10.0, 8.4, 3, 3)
    assert first.ratio == pytest.approx(0.84) and first.change_pct == pytest.approx(-16.0)
    assert first.impact == pytest.approx(-np.log(0.84))
    # By hand: t = -1.6 / sqrt(0.04 / 3 + 0.01 / 3) = -12.39, Welch's df = 2.94.
    assert first.p_value == pytest.approx(0.00125, abs=1e-5) and bool(first.significant)
    assert (first.verdict, first.words) == ("better", "B 1.19x faster than A")
    # One value a side: no test; throughput up 1% is better.
    assert pd.isna(second.p_value) and pd.isna(second.significant)
    assert (second.verdict, second.words) == ("better", "B 1.01x higher than A")
    assert not table.unchanged.any()
    same = compare.side_by_side(a, a, names=("v1", "v1 again"))
    assert same.unchanged.all() and set(same.verdict) == {"same"}
    assert same.words.iloc[0] == "v1 again on par with v1"


def test_unchanged_means_the_very_same_points_on_both_sides() -> None:
    """A side that holds one more point, or another point, is not unchanged; points
    without a version are matched by their time."""
    a = side([(1, 10.0), (2, 100.0), (3, 5.0)], "v1")
    more = pd.concat([a, side([(1, 9.0)], "v2")], ignore_index=True)  # series 1: v1 and v2
    other = a.assign(measured_at=[a.measured_at[0], pd.Timestamp("2020-02-05"), a.measured_at[2]])
    b = pd.concat([more[more.series_id == 1], other[other.series_id == 2], a[a.series_id == 3]])
    table = compare.side_by_side(a, b).set_index("series_id")
    assert table.unchanged.to_dict() == {1: False, 2: False, 3: True}
    unversioned = a.assign(version=None)
    assert compare.side_by_side(unversioned, unversioned.copy()).unchanged.all()


# -- paired variants on the demo --------------------------------------------------------------


def demo_pairs(demo_db: Path, dimension: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs of a dimension and their aligned ratio points, as the page builds them."""
    conn = db.connect(demo_db, read_only=True)
    pairs = compare.pair_series(queries.series_catalog(conn), dimension)
    ids = tuple(sorted(set(pairs.ours_id) | set(pairs.theirs_id)))
    points = queries.series_points(conn, tuple(int(i) for i in ids))
    conn.close()
    aligned = []
    for pair in pairs.itertuples(index=False):
        ours = points[points.series_id == pair.ours_id]
        ratios = compare.ratio_over_time(ours, points[points.series_id == pair.theirs_id])
        aligned.append(ratios.assign(**pair._asdict(), source_url=ours.source_url.iloc[-1]))
    return pairs, pd.concat(aligned, ignore_index=True)


def test_bert_qat_pairs_int8_with_fp32(demo_db: Path) -> None:
    # PaddlePaddle/Paddle#21228: BERT QAT on CPU, FP32 181.006 ms, INT8 48.1151 ms.
    pairs, ratios = demo_pairs(demo_db, "precision")
    # and the simulated ERNIE nightly history's INT8 and FP32 series (data/simulated)
    assert set(pairs.differs) == {"int8 vs fp32"} and set(pairs.project) == {"bert-qat", "ernie"}
    ratios = ratios[ratios.project == "bert-qat"]
    one = ratios[ratios.metric == "latency_excl_warmup"].iloc[0]
    assert one.pair == "bert · latency_excl_warmup · quantization=qat · int8 vs fp32"
    assert (one.ours_value, one.theirs_value) == (48.1151, 181.006)
    assert one.ratio == pytest.approx(48.1151 / 181.006)
    words = compare.worded(one.ratio, one.direction, one.subject, one.theirs)
    assert words == "Paddle int8 3.76x faster than fp32"
    assert compare.where_we_lose(ratios).empty  # INT8 wins in both pairs


def test_variant_ratios_of_a_metric_no_pair_has(demo_db: Path) -> None:
    """What Paired variants asks for a metric none of the pairs measures (a link from
    before an ingest): no ratio and no loss, not a KeyError on the empty points."""
    conn = db.connect(demo_db, read_only=True)
    pairs = compare.variant_pairs(conn, "precision")
    chosen = compare.pair_rows(pairs[pairs.metric == "no such metric"])
    ratios, lose = compare.variant_ratios(conn, chosen, 20_000)
    conn.close()
    assert ratios.empty and lose.empty and "ratio" in ratios.columns


def test_op_benchmarks_pair_paddle_with_tensorflow(demo_db: Path) -> None:
    pairs, ratios = demo_pairs(demo_db, "framework")
    assert set(pairs.ours) == {"paddle"} and set(pairs.theirs) == {"tensorflow"}
    # PaddlePaddle/benchmark#282, op benchmark v1: abs, total 2.76374 ms against 1.91671 ms.
    abs_op = ratios[ratios.pair == "op/abs · total_time · GPU · paddle vs tensorflow"].iloc[0]
    assert (abs_op.ours_value, abs_op.theirs_value) == (2.76374, 1.91671)
    assert round(abs_op.ratio, 2) == 1.44
    assert (
        compare.worded(abs_op.ratio, "lower", abs_op.subject, abs_op.theirs)
        == "Paddle 1.44x slower than tensorflow"
    )
    # PaddlePaddle/benchmark#380's op table: cumsum, total 86.2771 ms against 1.8483 ms.
    lose = compare.where_we_lose(ratios).set_index("pair")
    cumsum = lose.loc["op/cumsum · total_time · paddle vs tensorflow"]
    assert cumsum.factor == pytest.approx(86.2771 / 1.8483) and round(cumsum.factor, 2) == 46.68
    assert cumsum.words == "Paddle 46.68x slower than tensorflow"
    assert cumsum.since == pd.Timestamp("2020-05-06") and cumsum.losing_points == 1
    assert cumsum.source_url == "https://github.com/PaddlePaddle/benchmark/pull/380"
    assert lose.index[0] == "op/cumsum · gpu_time · paddle vs tensorflow"  # 48.42x, the worst
    # Seq2seq training throughput: higher is better, so Paddle's lower value loses too.
    seq2seq = lose[lose.metric == "throughput"].iloc[0]
    assert seq2seq.words == "Paddle 1.33x lower than tensorflow"
    # The fc op's GPU time: Paddle ahead, not a loss.
    assert "op/fc · gpu_time · paddle vs tensorflow" not in lose.index
    # #282's accuracy-run timings (12.7 against 836.2 ms) are not a speed result.
    assert pairs.columns.is_unique
    assert not any("accuracy_run" in str(cell) for cell in pairs.to_numpy().ravel())


def test_pairs_need_everything_else_equal() -> None:
    catalog = pd.DataFrame(
        [
            (1, "paddle", '{"batch_size":1,"precision":"fp32"}', '{"cuda":"10"}'),
            (2, "paddle", '{"batch_size":1,"precision":"int8"}', '{"cuda":"10"}'),
            (3, "paddle", '{"batch_size":2,"precision":"fp16"}', '{"cuda":"10"}'),  # no fp32
            (4, "paddle", '{"batch_size":1,"precision":"fp16"}', '{"cuda":"11"}'),  # testbed
            (5, "tensorrt", '{"batch_size":1,"precision":"fp32"}', '{"trt":"7"}'),
        ],
        columns=["series_id", "framework", "params", "testbed"],
    ).assign(
        project="ernie",
        benchmark="ernie",
        task="inference",
        metric="latency",
        unit="ms",
        direction="lower",
        device="Tesla T4",
    )
    precision = compare.pair_series(catalog, "precision")
    assert precision[["ours_id", "theirs_id", "differs"]].values.tolist() == [
        [2, 1, "int8 vs fp32"]
    ]
    assert precision.subject.tolist() == ["Paddle int8"]
    framework = compare.pair_series(catalog, "framework")
    assert framework[["ours_id", "theirs_id", "differs"]].values.tolist() == [
        [1, 5, "paddle vs tensorrt"]  # the testbed may differ between frameworks
    ]
    with pytest.raises(ValueError, match="dimension"):
        compare.pair_series(catalog, "device")


def points(*rows: tuple[str, str | None, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"measured_at": pd.Timestamp(t), "version": v, "value": x} for t, v, x in rows],
        columns=["measured_at", "version", "value"],
    )


def test_ratio_over_time_aligns_by_version_else_by_the_last_earlier_point() -> None:
    ours = points(
        ("2020-01-01", "c1", 12.0),
        ("2020-01-03", "c2", 11.0),
        ("2020-01-05", "c3", 10.0),
    )
    theirs = points(
        ("2020-01-02", "c1", 10.0),  # the same commit, measured a day later
        ("2020-01-04", None, 8.0),
    )
    aligned = compare.ratio_over_time(ours, theirs)
    aligned["version"] = aligned.version.fillna("")
    assert aligned[["version", "ours_value", "theirs_value", "matched"]].values.tolist() == [
        ["c1", 12.0, 10.0, "version"],
        ["c2", 11.0, 10.0, "time"],  # theirs' last value before 01-03: c1's
        ["", 11.0, 8.0, "time"],  # theirs measured again: ours' last value
        ["c3", 10.0, 8.0, "time"],
    ]
    assert list(aligned.measured_at.dt.day) == [2, 3, 4, 5]
    assert aligned.ratio.round(3).tolist() == [1.2, 1.1, 1.375, 1.25]
    # Theirs measured once, after all of ours: one ratio, against ours' last value.
    late = compare.ratio_over_time(ours, points(("2021-01-01", None, 1.0)))
    assert late[["ours_value", "theirs_value", "ratio"]].values.tolist() == [[10.0, 1.0, 10.0]]
    assert compare.ratio_over_time(ours, points()).empty


def test_where_we_lose_counts_the_latest_unbroken_run() -> None:
    def pair(name: str, direction: str, ratios: list[float]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "pair": name,
                "direction": direction,
                "subject": "Paddle",
                "theirs": "tensorflow",
                "measured_at": pd.date_range("2020-01-01", periods=len(ratios)),
                "ratio": ratios,
            }
        )

    lose = compare.where_we_lose(
        pd.concat(
            [
                pair("latency", "lower", [1.3, 0.9, 1.1, 1.2]),
                pair("recovered", "lower", [1.5, 1.4, 0.98]),
                pair("on par", "lower", [1.5, 1.004]),
                pair("throughput", "higher", [0.5, 0.5, 0.5]),
            ]
        )
    )
    assert list(lose.pair) == ["throughput", "latency"]
    assert lose.words.tolist() == [
        "Paddle 2.00x lower than tensorflow",
        "Paddle 1.20x slower than tensorflow",
    ]
    assert lose.since.tolist() == [pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-03")]
    assert lose.losing_points.tolist() == [3, 2]


# -- the queries: one side of a comparison ----------------------------------------------------

HASH_A = "abcdef1" + "0" * 33
HASH_B = "abcdef1" + "1" * 33  # shares its first 7 digits with HASH_A


def runs_store(tmp_path: Path) -> Path:
    """Two ERNIE series measured five times at each of three commits, a day apart: 10 ms,
    then 9.5 ms at HASH_A, then 9.5 ms again at HASH_B."""
    rng = np.random.default_rng(3)
    records = []
    for batch in (1, 2):
        for day, (version, level) in enumerate(((sha(0), 10.0), (HASH_A, 9.5), (HASH_B, 9.5))):
            for run in range(5):
                records.append(
                    {
                        **RECORD,
                        "params": {"batch_size": batch, "seq_len": 128},
                        "version": version,
                        "time": f"{START + timedelta(days=day, minutes=run):%Y-%m-%dT%H:%M:%SZ}",
                        "value": round(float(level * (1 + 0.005 * rng.standard_normal())), 4),
                        "run": run,
                    }
                )
    path = tmp_path / "runs.jsonl"
    write_records(records, path)
    target = tmp_path / "runs.duckdb"
    assert ingest("results", str(path), "--db", str(target)) == 0
    return target


def test_compare_side_by_version_and_abbreviated_hash(tmp_path: Path) -> None:
    conn = db.connect(runs_store(tmp_path))
    full = queries.compare_side(conn, "version", sha(0))
    assert len(full) == 10 and set(full.version) == {sha(0)}
    assert full.groupby("series_id").size().tolist() == [5, 5]  # every run, one row each
    assert list(full.columns[:8]) == [
        "series_id",
        "series",
        "project",
        "benchmark",
        "metric",
        "unit",
        "direction",
        "framework",
    ]
    abbreviated = queries.compare_side(conn, "version", sha(0)[:7].upper())
    assert abbreviated.value.tolist() == full.value.tolist()
    assert queries.compare_side(conn, "version", sha(0)[:6]).empty  # too short to be a hash
    assert queries.compare_side(conn, "version", "abcdef1").empty  # two commits: neither
    assert set(queries.compare_side(conn, "version", "ABCDEF10").version) == {HASH_A}
    one = queries.compare_side(conn, "version", HASH_A, int(full.series_id.iloc[0]))
    assert len(one) == 5 and set(one.series_id) == {full.series_id.iloc[0]}

    table = compare.side_by_side(full, queries.compare_side(conn, "version", HASH_A))
    assert table.n_a.tolist() == [5, 5] and table.n_b.tolist() == [5, 5]
    assert table.ratio.round(2).tolist() == [0.95, 0.95]
    assert (table.p_value < 1e-4).all() and table.significant.all()
    assert set(table.verdict) == {"better"}

    # Each side's newest value and where it was read: that line of the store holds it.
    for suffix in ("a", "b"):
        for row in table.itertuples():
            source_id, line = getattr(row, f"source_id_{suffix}"), getattr(row, f"line_{suffix}")
            read = conn.execute(
                "SELECT value FROM measurements WHERE series_id = ? AND source_id = ? AND line = ?",
                [row.series_id, int(source_id), int(line)],
            ).fetchall()
            assert read == [(getattr(row, f"line_value_{suffix}"),)]

    choices = queries.compare_choices(conn)
    assert set(choices[choices.kind == "version"].value) == {sha(0), HASH_A, HASH_B}
    assert set(choices.series) == {2}
    conn.close()


def test_compare_side_by_release(tmp_path: Path) -> None:
    conn = db.connect(runs_store(tmp_path))
    conn.execute(
        "INSERT INTO releases VALUES ('PaddlePaddle/Paddle', 'v1.7.0', $tagged, $at),"
        " ('PaddlePaddle/Paddle', 'v1.6.0', $unmeasured, $before)",
        {
            "tagged": HASH_A,
            "at": START + timedelta(days=20),  # the tag's own commit was measured earlier
            "unmeasured": "f" * 40,
            "before": START + timedelta(days=1, hours=12),
        },
    )
    tagged = queries.compare_side(conn, "release", "v1.7.0")
    assert len(tagged) == 10 and set(tagged.version) == {HASH_A}
    # A release whose commit was never measured: each series' last point before it.
    before = queries.compare_side(conn, "release", "v1.6.0")
    assert len(before) == 10 and set(before.version) == {HASH_A}
    assert queries.compare_side(conn, "release", "v9.9.9").empty
    choices = queries.compare_choices(conn)
    assert choices[choices.kind == "release"].value.tolist() == ["v1.7.0", "v1.6.0"]
    conn.close()


def test_compare_side_by_date(tmp_path: Path) -> None:
    conn = db.connect(runs_store(tmp_path))
    # By the end of the second day: the five runs at HASH_A (not only the last one).
    day = queries.compare_side(conn, "date", (START + timedelta(days=1)).strftime("%Y-%m-%d"))
    assert len(day) == 10 and set(day.version) == {HASH_A}
    assert queries.compare_side(conn, "date", "2019-12-31").empty
    with pytest.raises(ValueError):
        queries.compare_side(conn, "date", "yesterday")
    with pytest.raises(ValueError, match="kind"):
        queries.compare_side(conn, "branch", "develop")
    conn.close()


def test_a_date_side_is_each_series_last_point_with_or_without_a_version(
    tmp_path: Path,
) -> None:
    """Batch 1: two commits measured at one time (the later line's is the last point),
    then a value without a version, newer: the last point with a version is still the
    commit's, and the side holds every value of that commit. Batch 2: no version at all,
    so its last point is its newest time's values."""

    def record(batch: int, version: str | None, minutes: int, value: float) -> dict:
        written = {
            **RECORD,
            "params": {"batch_size": batch, "seq_len": 128},
            "time": f"{START + timedelta(minutes=minutes):%Y-%m-%dT%H:%M:%SZ}",
            "value": value,
        }
        if version is None:
            del written["version"]
        else:
            written["version"] = version
        return written

    records = [
        record(1, sha(0), 0, 10.0),
        record(1, HASH_A, 10, 9.6),
        record(1, HASH_B, 10, 9.4),  # same time as HASH_A's, on a later line
        record(1, HASH_B, 5, 9.5),  # HASH_B measured earlier too: part of its point
        record(1, None, 20, 9.0),
        record(2, None, 0, 7.0),
        record(2, None, 30, 6.0),
        record(2, None, 30, 6.1),
    ]
    path = tmp_path / "mixed.jsonl"
    write_records(records, path)
    assert ingest("results", str(path), "--db", str(tmp_path / "mixed.duckdb")) == 0
    conn = db.connect(tmp_path / "mixed.duckdb")
    side = queries.compare_side(conn, "date", START.strftime("%Y-%m-%d"))
    by_batch = {
        batch: sorted(zip(rows.value, rows.version.fillna("-"), strict=True))
        for batch, rows in side.groupby(side.series.str.contains("batch_size=1"))
    }
    assert by_batch[True] == [(9.4, HASH_B), (9.5, HASH_B)]
    assert by_batch[False] == [(6.0, "-"), (6.1, "-")]
    conn.close()


# -- attribution ------------------------------------------------------------------------------


def test_attribution_rows_run_from_start_to_end() -> None:
    steps = pd.DataFrame(
        {
            "label": ["#22486", "#22494"],
            "pr_repo": [PADDLE, PADDLE],
            "pr_number": [22486, 22494],
            "delta": [-0.5, -1.1],
        }
    )
    rows = compare.attribution(10.0, 8.3, steps, "A", "B")
    assert rows.kind.tolist() == ["start", "step", "step", "unexplained", "end"]
    assert rows.label.tolist() == ["A", "#22486", "#22494", "unexplained", "B"]
    assert rows.level_from.round(3).tolist() == [10.0, 10.0, 9.5, 8.4, 8.3]
    assert rows.level_to.round(3).tolist() == [10.0, 9.5, 8.4, 8.3, 8.3]
    assert rows.delta.iloc[3] == pytest.approx(-0.1)
    assert not rows.cut.any() and rows.recorded.iloc[1:3].tolist() == [-0.5, -1.1]
    nothing = compare.attribution(10.0, 10.0, steps.iloc[:0])
    assert nothing.kind.tolist() == ["start", "unexplained", "end"]
    assert nothing.delta.iloc[1] == 0.0  # shown, as about 0


def test_steps_never_walk_a_series_beyond_its_own_range() -> None:
    """Issue 16: a 6 ms series was walked down to -25 ms by the milestones of phases of
    another device and magnitude (20 ms x 0.93 per step, four phases). Whatever steps
    come in, the waterfall stays within what the series measured between the two points,
    and says which steps it cut."""
    deltas = [20.0 * 0.93**k * (0.93 - 1) for k in range(7)] * 4
    steps = pd.DataFrame(
        {
            "label": [f"#{10000 + i}" for i in range(len(deltas))],
            "pr_repo": PADDLE,
            "pr_number": [10000 + i for i in range(len(deltas))],
            "delta": deltas,
        }
    )
    assert sum(deltas) < -30  # what the old waterfall walked the series down by
    rows = compare.attribution(6.0, 5.6, steps, bounds=(5.5, 6.1))
    levels = rows[["level_from", "level_to"]].to_numpy()
    assert levels.min() == pytest.approx(5.5) and levels.max() <= 6.1
    walked = rows[rows.kind == "step"]
    assert walked.delta.iloc[0] == pytest.approx(-0.5) and walked.cut.iloc[0]
    assert walked.recorded.iloc[0] == pytest.approx(-1.4)
    assert (walked.delta.iloc[1:] == 0).all() and walked.cut.iloc[1:].all()
    assert rows[rows.kind == "unexplained"].delta.iloc[0] == pytest.approx(0.1)
    # Without bounds, the two values themselves are the range.
    assert compare.attribution(6.0, 5.6, steps)[["level_from", "level_to"]].min().min() == 5.6


def test_steps_that_sum_to_more_than_the_change_explain_all_of_it_and_say_so() -> None:
    # The phase-2 table of PaddlePaddle/benchmark#165 gives -0.5 ms (PR 22424) and the
    # series' own change point -0.5 ms again: together more than the -0.6 ms it moved.
    over = compare.explained(-0.6, -1.0, "ms")
    assert (over.share, over.beyond) == (1.0, pytest.approx(-0.4))
    assert over.note == (
        "The steps sum to -1 ms, more than the change of -0.6 ms: 0.4 ms of them this "
        "series does not show between the two points (steps that overlap, or of another "
        "measure)."
    )
    against = compare.explained(-0.6, 0.6, "ms")
    assert (against.share, against.beyond) == (0.0, 0.6)
    assert "the series moved the other way" in against.note
    fits = compare.explained(-1.0, -0.5, "ms")
    assert (fits.share, fits.beyond, fits.note) == (0.5, 0.0, "")
    still = compare.explained(0.0, -0.5, "ms")
    assert still.share is None and "did not change" in still.note
    # The "Explained by the steps 15744 %": never more than all of it.
    assert compare.explained(-0.2, -31.5).share == 1.0


@pytest.fixture
def phase_store(tmp_path: Path) -> Path:
    """The real phase-2 table of PaddlePaddle/benchmark#165 (ERNIE on a Tesla P4: 10 ->
    9.5 ms with PR 22424, recorded 2020-02-04), and three nightly series around it: ERNIE
    at batch 1 on the P4 (10 -> 9.5 ms: the table's own measure), the same on a V100,
    and batch 32 on the P4 (72 -> 68 ms: another magnitude)."""
    target = tmp_path / "phase.duckdb"
    table = Path("data/samples/benchmark-165_2020-02-04_xreki_phase2-table.md")
    assert (
        ingest(
            "auto",
            str(table),
            "--db",
            str(target),
            "--project",
            "ernie",
            "--benchmark",
            "ernie",
            "--date",
            "2020-02-04",
        )
        == 0
    )
    records = []
    for device, batch, before, after in (
        ("Tesla P4", 1, 10.0, 9.5),
        ("Tesla V100", 1, 10.0, 9.5),
        ("Tesla P4", 32, 72.0, 68.0),
    ):
        for day in range(1, 9):
            records.append(
                {
                    **RECORD,
                    "device": device,
                    "params": {"batch_size": batch, "seq_len": 128},
                    "version": sha(day),
                    "time": f"2020-02-{day:02d}T00:00:00Z",
                    "value": before if day < 5 else after,
                }
            )
    path = tmp_path / "nightly.jsonl"
    write_records(records, path)
    assert ingest("results", str(path), "--db", str(target), "--no-detect") == 0
    return target


def test_milestones_count_only_for_the_series_they_measure(phase_store: Path) -> None:
    conn = db.connect(phase_store, read_only=True)
    ids = dict(
        conn.execute(
            "SELECT device || ' ' || (params->>'batch_size'), series_id FROM series"
        ).fetchall()
    )
    window = (datetime(2020, 2, 1), datetime(2020, 2, 8))
    p4, v100, big = (
        queries.series_steps(conn, ids[name], *window)
        for name in ("Tesla P4 1", "Tesla V100 1", "Tesla P4 32")
    )
    assert queries.series_range(conn, ids["Tesla P4 1"], *window) == (9.5, 10.0)
    conn.close()
    assert p4[["via", "label", "pr_number", "delta"]].values.tolist() == [
        ["milestone", "#22424", 22424, -0.5]
    ]
    assert v100.empty  # another device: the table was measured on a P4
    assert big.empty  # another magnitude: 72 ms is not the table's 10 ms
    rows = compare.attribution(10.0, 9.5, p4, bounds=(9.5, 10.0))
    assert rows[rows.kind == "unexplained"].delta.iloc[0] == pytest.approx(0.0)
    assert compare.explained(-0.5, rows[rows.kind == "step"].delta.sum()).share == 1.0


@pytest.fixture
def nightly_store(tmp_path: Path) -> Path:
    """ERNIE on a P4 at 10 -> 9.5 -> 8.4 ms (PaddlePaddle/benchmark#165, phase 2), with
    PR 22486 merged between nights 29 and 30 and PR 22494 between nights 59 and 60."""
    target = tmp_path / "nightly.duckdb"
    path = nightly(tmp_path / "ernie.jsonl", noise=0.002)
    assert ingest("results", str(path), "--db", str(target)) == 0
    conn = db.connect(target)
    alerts.detect_store(conn)
    conn.execute(
        "INSERT INTO pull_requests (repo, number, title, author, merged_at, origin, synced_at)"
        " VALUES ($repo, 22486, 'Fuse three fc to multihead matmul', 'NHZlX', $first, 'test',"
        " now()), ($repo, 22494, 'Embedding_eltwise_layernorm Fuse', 'NHZlX', $second,"
        " 'test', now())",
        {
            "repo": PADDLE,
            "first": START + timedelta(days=29, hours=12),
            "second": START + timedelta(days=59, hours=12),
        },
    )
    conn.close()
    return target


def test_attribution_gives_each_pr_its_step(nightly_store: Path) -> None:
    conn = db.connect(nightly_store, read_only=True)
    start = queries.compare_side(conn, "version", sha(0)[:8])
    end = queries.compare_side(conn, "version", sha(89))
    series_id = int(start.series_id.min())
    v0 = start[start.series_id == series_id].value.mean()
    v1 = end[end.series_id == series_id].value.mean()
    steps = queries.series_steps(conn, series_id, START, START + timedelta(days=89))
    later = datetime(2020, 3, 31)
    assert queries.series_steps(conn, series_id, later, later + timedelta(days=1)).empty
    conn.close()
    assert steps.pr_number.tolist() == [22486, 22494]
    assert steps.via.tolist() == ["change point", "change point"]
    assert steps.title.tolist() == [
        "Fuse three fc to multihead matmul",
        "Embedding_eltwise_layernorm Fuse",
    ]
    assert steps.delta.round(1).tolist() == [-0.5, -1.1]
    rows = compare.attribution(v0, v1, steps)
    unexplained = rows[rows.kind == "unexplained"].delta.iloc[0]
    assert abs(unexplained) < 0.05


def test_series_steps_takes_milestones_of_the_same_measure(demo_db: Path) -> None:
    conn = db.connect(demo_db, read_only=True)
    [series_id] = conn.execute(
        "SELECT series_id FROM series WHERE benchmark = 'ernie' AND metric = 'latency'"
        " AND device = 'Tesla P4' AND (params->>'batch_size') = '1'"
        " AND (params->>'seq_len') = '128'"
    ).fetchone()
    steps = queries.series_steps(conn, series_id, datetime(2020, 1, 1), datetime(2020, 3, 1))
    memory = conn.execute(
        "SELECT series_id FROM series WHERE metric = 'gpu_memory' LIMIT 1"
    ).fetchone()[0]
    other = queries.series_steps(conn, memory, datetime(2020, 1, 1), datetime(2020, 3, 1))
    conn.close()
    # The phase-2 table of PaddlePaddle/benchmark#165: 10 -> 9.5 ms with PR 22424, on the
    # P4 whose batch-1 latency the QA table measured at 8.66 ms (CUDA 9: within 25 %).
    assert steps[["via", "label", "pr_number", "delta"]].values.tolist() == [
        ["milestone", "#22424", 22424, -0.5]
    ]
    # The milestone's row of the phase table: 9.5 ms on its line 12.
    assert steps[["line", "measured"]].values.tolist() == [[12, 9.5]]
    assert steps.source_id.iloc[0] == phase_source(demo_db)
    assert other.empty  # a latency phase says nothing of GPU memory
    # The same model at batch 10 (6.39 ms) and at seq_len 512 (36.1 ms) are other series.
    for batch, seq_len in ((10, 128), (1, 512)):
        [sibling] = conn_ids(demo_db, batch, seq_len)
        conn = db.connect(demo_db, read_only=True)
        assert queries.series_steps(
            conn, sibling, datetime(2020, 1, 1), datetime(2020, 3, 1)
        ).empty, (batch, seq_len)
        conn.close()


def phase_source(path: Path) -> int:
    conn = db.connect(path, read_only=True)
    (source_id,) = conn.execute("SELECT source_id FROM phases").fetchone()
    conn.close()
    return int(source_id)


def test_series_steps_say_where_each_change_point_was_read(demo_db: Path) -> None:
    conn = db.connect(demo_db, read_only=True)
    [series_id] = conn.execute(
        "SELECT series_id FROM series WHERE benchmark = 'ernie' AND metric = 'latency'"
        " AND device = 'Tesla P4 (simulated)' AND (params->>'batch_size') = '1'"
        " AND (params->>'precision') = 'fp32'"
    ).fetchone()
    steps = queries.series_steps(conn, series_id, datetime(2020, 1, 1), datetime(2020, 4, 1))
    (nightly,) = conn.execute(
        "SELECT source_id FROM sources WHERE uri LIKE '%ernie-p4-nightly.jsonl'"
    ).fetchone()
    conn.close()
    # The simulated nightly's fusion (2020-02-04), regression and fix: each change point's
    # first measurement after it, the record of data/simulated/ernie-p4-nightly.jsonl.
    assert steps.via.tolist() == ["change point"] * 3
    assert steps.source_id.tolist() == [nightly] * 3
    assert steps.line.tolist() == [117, 197, 225]
    assert steps.measured.tolist() == [9.5014, 9.9778, 9.4393]


def conn_ids(path: Path, batch: int, seq_len: int) -> list[int]:
    """The demo's ERNIE latency series on the (real) Tesla P4 at that batch and seq_len."""
    conn = db.connect(path, read_only=True)
    ids = conn.execute(
        "SELECT series_id FROM series WHERE benchmark = 'ernie' AND metric = 'latency'"
        " AND device = 'Tesla P4' AND (params->>'batch_size') = $b"
        " AND (params->>'seq_len') = $s",
        {"b": str(batch), "s": str(seq_len)},
    ).fetchall()
    conn.close()
    return [i for (i,) in ids]


# -- the page ---------------------------------------------------------------------------------


def test_compare_page_opens_two_versions_from_its_url(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(
        monkeypatch,
        demo_db,
        "pages/compare.py",
        a_kind="version",
        a="A5A8D14",
        b_kind="date",
        b="2020-08-12",
    )
    assert [r.value for r in at.radio] == ["version", "date"]
    assert at.selectbox[0].value == "A5A8D14"  # the typed hash, matched by prefix
    [table] = frames(at)
    assert len(table) == 54  # the ERNIE QA tables of benchmark#165, at commit a5a8d14
    assert table.unchanged.all() and set(table.verdict) == {"same"}
    assert {m.label: m.value for m in at.metric}["Shared series"] == "54"
    assert dict(at.query_params) == {
        "a_kind": "version",
        "a": "A5A8D14",
        "b_kind": "date",
        "b": "2020-08-12",
    }
    at.radio[1].set_value("version").run()
    assert at.query_params["b_kind"] == "version"  # the view is its URL


def test_compare_page_opens_on_the_newest_week_something_was_measured_again(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    """The demo's newest day is a vLLM run measured once (2025-05-22), where every shared
    series would be on par with itself; its simulated ERNIE history ends 2020-03-29."""
    at = run_page(monkeypatch, demo_db, "pages/compare.py")
    assert [d.value.isoformat() for d in at.date_input] == ["2020-03-22", "2020-03-29"]
    [table] = frames(at)
    moved = table[~table.unchanged]
    assert len(moved) == 4 and moved.series.str.contains("simulated").all()
    # +0.5 to +1.7 %, each under twice its series' noise (cv 0.7-1.0 %): no verdict.
    assert set(moved.verdict) == {"within noise"}
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Worse in B"], metrics["Within noise"]) == ("0", "4")


def test_compare_page_tests_significance_between_two_commits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = runs_store(tmp_path)
    at = run_page(
        monkeypatch,
        store,
        "pages/compare.py",
        a_kind="version",
        a=sha(0),
        b="ABCDEF10",
        b_kind="version",
    )
    [table] = frames(at)
    assert table.significant.all() and (table.p_value < 1e-4).all()
    # The sides are named in the pickers; each row says how B stands against A.
    assert set(table.words) == {"B 1.05x faster than A"}
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Better in B"], metrics["Significant (p < 0.05)"]) == ("2", "2")


def test_compare_page_paired_variants(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_page(monkeypatch, demo_db, "pages/compare.py", part="Paired variants")
    assert at.query_params["dim"] == "framework" and at.query_params["metric"] == "total_time"
    assert len(at.get("vega_lite_chart")) == 1
    [lose] = frames(at)
    cumsum = lose[lose.pair == "op/cumsum · total_time · paddle vs tensorflow"].iloc[0]
    assert cumsum.words == "Paddle 46.68x slower than tensorflow"
    assert cumsum.link == "https://github.com/PaddlePaddle/benchmark/pull/380"
    assert lose.pair.iloc[0] == cumsum.pair  # the largest loss first
    assert "Paddle 1.44x slower than tensorflow" in set(lose.words)

    qat = run_page(
        monkeypatch, demo_db, "pages/compare.py", part="Paired variants", dim="precision"
    )
    assert len(qat.get("vega_lite_chart")) == 1 and not frames(qat)
    assert "at least on par" in all_text(qat)


def test_compare_page_attribution(monkeypatch: pytest.MonkeyPatch, nightly_store: Path) -> None:
    at = run_page(monkeypatch, nightly_store, "pages/compare.py", part="Attribution")
    assert len(at.get("vega_lite_chart")) == 1
    [steps] = frames(at)
    assert steps.pr_link.tolist() == [
        "https://github.com/PaddlePaddle/Paddle/pull/22486",
        "https://github.com/PaddlePaddle/Paddle/pull/22494",
    ]
    assert steps.delta.round(1).tolist() == [-0.5, -1.1]
    assert at.query_params["from"] == f"version:{sha(0)}"
    assert at.query_params["to"] == f"version:{sha(89)}"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Explained by the steps"] in {"99%", "100%"}  # never more than all
    # The same view from its URL, between the two steps only: PR 22494 alone.
    middle = run_page(
        monkeypatch,
        nightly_store,
        "pages/compare.py",
        part="Attribution",
        series=at.query_params["series"],
        **{"from": f"version:{sha(40)}", "to": f"version:{sha(70)}"},
    )
    [steps] = frames(middle)
    assert steps.label.tolist() == ["#22494"]


def test_attribution_on_the_demo_walks_the_simulated_history(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    # The simulated ERNIE nightly (data/simulated): the phase-2 fusion of 2020-02-04 is a
    # change point of the measured series, explained by the phase table's PR 22424; the
    # regression of 2020-02-24 and its fix a week later name no PR (none is recorded).
    at = run_page(monkeypatch, demo_db, "pages/compare.py", part="Attribution")
    assert "1\\.07x faster than" in all_text(at)
    steps = next(f for f in frames(at) if "via" in f.columns)
    assert steps.label.tolist() == ["#22424", "step at 2020-02-24", "step at 2020-03-02"]
    assert steps.pr_link.iloc[0] == "https://github.com/PaddlePaddle/Paddle/pull/22424"
    assert steps.delta.round(1).tolist() == [-0.5, 0.6, -0.6]  # ms, 10 -> 9.5 -> 10.1 -> 9.5


def test_compare_page_on_an_empty_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, "pages/compare.py")
    assert "Nothing to compare yet" in all_text(at)


def test_a_version_from_the_url_is_shown_as_text(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    hostile = "[x](javascript:alert(1))"
    at = run_page(monkeypatch, demo_db, "pages/compare.py", a_kind="version", a=hostile)
    [info] = [i.value for i in at.info]
    assert "Nothing was measured at version" in info
    assert r"\[x\]\(javascript\:alert\(1\)\)" in info and "[x](" not in info


def test_pair_rows_are_a_key_found_again_when_a_value_is_missing(demo_db: Path) -> None:
    """variant_ratios is cached on pair_rows: a missing value is None there, not NaN, which
    is not equal to itself (the page would read the ratios again on every run)."""
    conn = db.connect(demo_db, read_only=True)
    pairs = compare.variant_pairs(conn, "precision")
    conn.close()
    pairs.loc[pairs.index[0], "unit"] = float("nan")
    rows = compare.pair_rows(pairs)
    assert rows == compare.pair_rows(pairs) and rows[0][6] is None
    assert rows[0][:2] == (int(pairs.ours_id.iloc[0]), int(pairs.theirs_id.iloc[0]))
