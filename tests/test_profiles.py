"""Profiles: a run's op breakdown, the diff of two runs (units, CPU-only against GPU, events
on one side only), the IR passes each fired, the queries behind them, the Profiles page on
the demo store (the 2019-09-11 ERNIE run with fc and fused_fc_elementwise_layernorm), and
the synthetic profiles of the benchmark."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from ingest.parsers import passes as pass_parser
from ingest.parsers import profiler
from ingest.text import DocText
from perfboard import charts, profiles, queries, ui
from perfboard.model import PassApplied, ProfileEvent
from tests.conftest import ingest, sample_doc, text_doc
from tests.parsers.test_profiler import CPU_REPORT, HEADER, MUL, NEW_REPORT
from tests.test_app import all_text, frames, run_page

FUSION = "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md"
REPORT = "benchmark-165_xreki_profile-report.md"
TIMELINE = "benchmark-148_2019-08-01_wangchaochaohu_profile-timeline.md"
FUSE_ACT = "benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md"


def events_of(doc: DocText) -> pd.DataFrame:
    """The profile events the profiler parser reads from a document, as the store holds
    them (the columns of queries.profile_events)."""
    rows = [asdict(i) for i in profiler.parse(doc) if isinstance(i, ProfileEvent)]
    return pd.DataFrame(rows)


def passes_of(doc: DocText) -> pd.DataFrame:
    rows = [asdict(i) for i in pass_parser.parse(doc) if isinstance(i, PassApplied)]
    return pd.DataFrame(rows, columns=["name", "kind", "order", "subgraphs", "line", "raw"])


def frame(*rows: dict[str, object]) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def by_event(rows: pd.DataFrame) -> dict[str, pd.Series]:
    return {row.event: row for _, row in rows.iterrows()}


# -- run keys and words -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [("11:0", (11, 0)), (" 7:3 ", (7, 3)), ("11", None), ("a:0", None), ("-1:0", None)],
)
def test_run_keys_from_a_url(text: str, key: tuple[int, int] | None) -> None:
    assert profiles.parse_run_key(text) == key
    assert profiles.parse_run_key(None) is None
    assert profiles.run_key(11, 0) == "11:0"


def test_times_read_as_a_person_reads_them() -> None:
    assert profiles.ms_text(24269.7) == "24,270 ms"
    assert profiles.ms_text(4.20446) == "4.204 ms"
    assert profiles.ms_text(182.88, signed=True) == "+182.9 ms"
    assert profiles.ms_text(-24569.4, signed=True) == "-24,569 ms"
    assert profiles.ms_text(math.nan) == "–"


# -- one run ----------------------------------------------------------------------------------


def test_breakdown_of_the_fc_elementwise_layernorm_run() -> None:
    events = events_of(sample_doc(FUSION))
    rows = profiles.breakdown(events)
    assert list(rows.event) == [
        "fc",
        "fused_fc_elementwise_layernorm",
        "matmul",
        "transpose2",
        "softmax",
    ]
    fc, fused = rows.iloc[0], rows.iloc[1]
    assert (fc.calls, fc.total, fc.threads, fc.depth) == (255459, 24269.7, "thread0", 0)
    assert (fused.calls, fused.total) == (115207, 17699.9)
    assert (fc.cpu_time, fc.gpu_time) == (12361.669096, 11908.043273)
    # The table was cut at "thread0::reshape": the run's total comes from Paddle's Ratio
    # column (fc is 34.6056% of it), not from the five rows read.
    assert fc.share == pytest.approx(0.346056, rel=1e-5)
    assert fused.share == pytest.approx(0.252378, rel=1e-5)
    (total,) = profiles.block_totals(events).values()
    assert total.total == pytest.approx(24269.7 / 0.346056, rel=1e-5)
    assert total.listed == pytest.approx(60733.42)
    assert total.coverage == pytest.approx(0.866, abs=1e-3) and not total.complete
    assert total.smallest == 4204.46
    assert profiles.layout(events) == "GPU report (CPU and GPU time)"


def test_the_breakdown_chart_labels_its_long_bars_inside_their_end() -> None:
    # fc 24,269.7 ms and the fused op 17,699.9 ms (73 % of fc) hold their labels; matmul
    # and the rest, under 60 % of fc, have theirs right of the bar. Right of fc, an
    # 800 px window cut "24,270 ms · 34.6" (issue 16).
    rows = profiles.breakdown(events_of(sample_doc(FUSION)))
    spec = charts.profile_breakdown(rows).to_dict()
    bars, outside, inside = spec["layer"]
    assert bars["encoding"]["x"]["scale"]["domain"] == [0, pytest.approx(24269.7 * 1.02)]
    assert (outside["mark"]["align"], inside["mark"]["align"]) == ("left", "right")
    assert inside["mark"]["color"] == "#1a1a1a"  # over the orange GPU part
    data = spec["datasets"][inside["data"]["name"]]
    held = {row["text"]: row["inside"] for row in data}
    assert held == {
        "24,270 ms · 34.6%": True,
        "17,700 ms · 25.2%": True,
        **{text: False for text in held if not text.startswith(("24,270", "17,700"))},
    }
    assert sum(not inside for inside in held.values()) == 3


def test_the_demo_reports_are_older_layouts_without_nesting_or_memcpy() -> None:
    # Checked, not assumed: the profile report sample holds a GPU event table only (no
    # GpuMemCpy Summary, no indented events); the 2019-08-01 timeline is a GPU table too.
    for name in (REPORT, TIMELINE, FUSION):
        events = events_of(sample_doc(name))
        assert set(events.section) == {"event"} and set(events.depth) == {0}, name
        assert events.gpu_time.notna().all(), name
    assert set(events_of(sample_doc(REPORT)).place) == {"All"}


def test_nested_events_sit_under_their_parents_and_memcpy_is_its_own_block() -> None:
    events = events_of(text_doc(NEW_REPORT))
    rows = profiles.breakdown(events)
    assert [(r.block, r.event, r.parent, r.depth) for r in rows.itertuples()] == [
        ("event", "fused_embedding_eltwise_layernorm", "", 0),
        (
            "event",
            "fused_embedding_eltwise_layernorm/compute",
            "fused_embedding_eltwise_layernorm",
            1,
        ),
        (
            "event",
            "GpuMemcpyAsync:CPU->GPU",
            "fused_embedding_eltwise_layernorm/compute",
            2,
        ),
        ("event", "GpuMemcpySync:GPU->CPU", "fused_embedding_eltwise_layernorm", 1),
        ("event", "mul", "", 0),
        ("memcpy", "GpuMemcpy", "", 0),
        ("memcpy", "GpuMemcpyAsync", "GpuMemcpy", 1),
        ("memcpy", "GpuMemcpySync", "GpuMemcpy", 1),
    ]
    totals = profiles.block_totals(events)
    # Both blocks' ratios are of the report's "Total time: 598.03".
    assert totals["event"].total == pytest.approx(598.03, rel=2e-3)
    assert totals["memcpy"].total == pytest.approx(598.03, rel=1e-4)
    memcpy = rows[rows.block == "memcpy"].set_index("event")
    assert memcpy.loc["GpuMemcpy", "share"] == pytest.approx(0.239085, rel=1e-4)
    # Only top-level rows add up: the nested ones are inside their parent's total.
    assert totals["event"].listed == pytest.approx(45.9 + 30.5)
    nested = profiles.nested_by_parent(rows[rows.block == "event"])
    assert list(nested) == ["fused_embedding_eltwise_layernorm"]
    assert len(nested["fused_embedding_eltwise_layernorm"]) == 3
    assert profiles.main_block(events) == "event"


def test_one_op_in_several_threads_is_one_row() -> None:
    events = frame(
        {"event": "mul", "thread": "thread0", "calls": 10, "total": 3.0, "gpu_time": 1.0},
        {"event": "mul", "thread": "thread1", "calls": 5, "total": 2.0, "gpu_time": None},
        {"event": "fc", "thread": "thread1", "calls": 1, "total": 1.0},
    )
    rows = profiles.breakdown(events)
    mul = by_event(rows)["mul"]
    assert (mul.calls, mul.total, mul.gpu_time, mul.threads) == (15, 5.0, 1.0, "thread0, thread1")
    assert mul.share == pytest.approx(5 / 6)  # no ratios: the sum of the top-level rows
    assert math.isnan(by_event(rows)["fc"].gpu_time)  # never filled in as 0


def test_a_table_in_another_unit_than_time_is_refused() -> None:
    with pytest.raises(ValueError, match="not a unit of time"):
        profiles.to_ms(frame({"event": "mul", "total": 1.0, "unit": "MB"}))


# -- two runs ---------------------------------------------------------------------------------


def test_diff_of_the_profile_report_against_the_fusion_run() -> None:
    """Before: mul + elementwise_add + layer_norm (profile report); after (2019-09-11):
    fc and fused_fc_elementwise_layernorm in their place."""
    before, after = events_of(sample_doc(REPORT)), events_of(sample_doc(FUSION))
    rows = profiles.diff(before, after)
    status = dict(zip(rows.event, rows.status, strict=True))
    assert status == {
        "mul": "disappeared",
        "fc": "appeared",
        "fused_fc_elementwise_layernorm": "appeared",
        "elementwise_add": "disappeared",
        "softmax": "faster",
        "layer_norm": "disappeared",
        "dropout": "disappeared",
        "reshape2": "below B's cut",
        "transpose2": "slower",
        "matmul": "same",
    }
    rows = rows.set_index("event")
    fused = rows.loc["fused_fc_elementwise_layernorm"]
    # Found in B only: A's side stays missing, and so does the change.
    assert fused.total_b == 17699.9 and fused.calls_b == 115207
    assert math.isnan(fused.total_a) and math.isnan(fused.calls_a) and math.isnan(fused.delta)
    assert fused.bar == 17699.9  # drawn as its time in B, with its own mark
    assert "A's table lists 94% of its time" in fused.note
    mul = rows.loc["mul"]
    assert math.isnan(mul.total_b) and math.isnan(mul.delta) and mul.bar == -32332.5
    # Each side's line in its report: an event found on one side only has one.
    assert (mul.line_a, fused.line_b) == (10, 16)
    assert math.isnan(mul.line_b) and math.isnan(fused.line_a)
    assert (rows.loc["softmax"].line_a, rows.loc["softmax"].line_b) == (12, 19)
    softmax = rows.loc["softmax"]
    assert softmax.delta == pytest.approx(4204.46 - 12311.9)
    assert softmax.delta_pct == pytest.approx((4204.46 - 12311.9) / 12311.9)
    a_total = profiles.block_totals(before)["event"].total
    assert softmax.delta_share == pytest.approx((4204.46 - 12311.9) / a_total)
    assert softmax.note == ""
    assert list(rows.index[:3]) == ["mul", "fc", "fused_fc_elementwise_layernorm"]  # by size
    summary = profiles.diff_summary(before, after, rows.reset_index())
    assert (summary["appeared"], summary["disappeared"]) == (2, 4)
    assert (summary["below A's cut"], summary["below B's cut"]) == (0, 1)
    assert (summary["faster"], summary["slower"], summary["same"]) == (1, 1, 1)
    notes = profiles.layout_notes(before, after)
    assert len(notes) == 2 and all("table was cut" in n for n in notes)


def test_the_diff_chart_gives_both_sides_of_zero_the_same_room() -> None:
    # mul disappeared (-32,332 ms) and fc appeared (+24,270 ms): the right side, which
    # holds mul's label "disappeared · 32,332 ms in A", is as wide as the left. With 43 %
    # of the width it was cut at 800 px; a label longer than its side ends in "…".
    before, after = events_of(sample_doc(REPORT)), events_of(sample_doc(FUSION))
    spec = charts.profile_diff(profiles.diff(before, after)).to_dict()
    changed, _one_side, _zero, labels_right, labels_left = spec["layer"]
    assert changed["encoding"]["x"]["scale"]["domain"] == [-32332.5, 32332.5]
    data = spec["datasets"][labels_right["data"]["name"]]
    assert "disappeared · 32,332 ms in A" in {row["text"] for row in data}
    assert labels_right["mark"]["limit"] == {"expr": "max(width - scale('x', 0) - 8, 0)"}
    assert labels_left["mark"]["limit"] == {"expr": "max(scale('x', 0) - 8, 0)"}


def test_an_op_missing_below_a_cut_table_is_below_its_cut_not_gone() -> None:
    """B (2019-09-11) is a top-N table: its rows list 87% of its run and stop at softmax,
    4,204 ms. reshape2 took 1,970 ms in A: below B's last row, so B may hold it unlisted.
    mul (32,332 ms) and dropout (4,844 ms) would have been listed above that row: gone."""
    before, after = events_of(sample_doc(REPORT)), events_of(sample_doc(FUSION))
    assert profiles.block_totals(after)["event"].smallest == 4204.46
    rows = profiles.diff(before, after).set_index("event")
    reshape = rows.loc["reshape2"]
    assert reshape.status == "below B's cut"
    assert reshape.total_a == 1970.44 and math.isnan(reshape.total_b)
    assert math.isnan(reshape.delta) and math.isnan(reshape.bar)  # nothing known to draw
    assert reshape.note == (
        "B's table lists 87% of its time and stops at 4,204 ms: at 1,970 ms in A the event "
        "would be below that, unlisted"
    )
    assert rows.loc["dropout"].status == "disappeared"
    assert rows.loc["dropout"].note.endswith("at 4,844 ms in A the event would have been listed")
    # The other way round: reshape2 (1,970 ms in B) is below A's cut at 4,204 ms; mul
    # (32,332 ms in B) would have been listed in A: it appeared.
    back = profiles.diff(after, before).set_index("event")
    assert back.loc["reshape2"].status == "below A's cut"
    assert back.loc["mul"].status == "appeared"


def test_a_complete_table_has_no_cut() -> None:
    # B lists its whole run (no ratios: its rows are its total): an op missing from it
    # disappeared, however small it was.
    a = frame({"event": "mul", "total": 10.0}, {"event": "tiny", "total": 0.5})
    b = frame({"event": "mul", "total": 10.0})
    assert profiles.block_totals(b)["event"].complete
    rows = profiles.diff(a, b).set_index("event")
    assert rows.loc["tiny"].status == "disappeared" and rows.loc["tiny"].note == ""


def test_a_report_in_us_compares_with_one_in_ms() -> None:
    in_ms = events_of(text_doc("Place: All\nTime unit: ms\n\n" + HEADER + "\n" + MUL + "\n"))
    # The same row written in us: every time x 1000, ratios and calls as they were.
    values = MUL.split()
    scaled = [values[0], values[1]]
    for field in values[2:]:
        scaled.append(field if field.startswith("(") else f"{float(field) * 1000:.6f}")
    scaled[-1] = values[-1]  # Ratio. is a share, not a time
    us_row = "  ".join(scaled)
    in_us = events_of(text_doc("Place: All\nTime unit: us\n\n" + HEADER + "\n" + us_row + "\n"))
    assert in_us.total[0] == pytest.approx(32332.5 * 1000 / 1000)  # stored in ms
    (row,) = profiles.diff(in_ms, in_us).itertuples()
    assert row.status == "same" and row.delta == pytest.approx(0, abs=1e-6)
    # A frame that carries its unit is converted before the comparison.
    a = frame({"event": "mul", "total": 2_000_000.0, "calls": 4, "unit": "us"})
    b = frame({"event": "mul", "total": 1_500.0, "calls": 4, "unit": "ms"})
    (row,) = profiles.diff(a, b).itertuples()
    assert (row.total_a, row.total_b, row.delta, row.status) == (2000.0, 1500.0, -500.0, "faster")
    assert row.delta_pct == pytest.approx(-0.25)
    assert (
        profiles.layout_notes(a, b)[-1]
        == "Times were written A in us and B in ms; both are compared in ms."
    )


def test_a_cpu_only_report_against_a_gpu_one_compares_totals() -> None:
    cpu = events_of(text_doc(CPU_REPORT))
    gpu = frame(
        {
            "event": "search_pyramid_hash",
            "place": "All",
            "calls": 48000,
            "total": 900000.0,
            "cpu_time": 600000.0,
            "gpu_time": 300000.0,
            "ratio": 0.6,
        },
        {
            "event": "lookup_table",
            "place": "All",
            "calls": 48000,
            "total": 1531.2,
            "cpu_time": 1500.0,
            "gpu_time": 31.2,
            "ratio": 0.001,
        },
    )
    assert profiles.layout(cpu) == "CPU-only report (Place: CPU)"
    rows = profiles.diff(cpu, gpu).set_index("event")
    hash_ = rows.loc["search_pyramid_hash"]
    assert (hash_.total_a, hash_.total_b, hash_.status) == (1104230.0, 900000.0, "faster")
    assert math.isnan(hash_.gpu_a) and math.isnan(hash_.cpu_a)  # not reported, not 0
    assert hash_.gpu_b == 300000.0
    assert rows.loc["lookup_table"].status == "same"
    assert rows.loc["sequence_pool"].status == "disappeared"
    (note,) = [n for n in profiles.layout_notes(cpu, gpu) if "GPU time is absent" in n]
    assert note.startswith("A is a CPU-only report (Place: CPU), B a GPU report")
    assert "GPU time is absent in A" in note


def test_an_event_on_one_side_is_never_a_change_from_zero() -> None:
    a = frame(
        {"event": "gone", "calls": 3, "total": 5.0},
        {"event": "idle", "calls": 1, "total": 0.0},
        {"event": "kept", "calls": 2, "total": 4.0},
    )
    b = frame(
        {"event": "new", "calls": 7, "total": 2.0},
        {"event": "idle", "calls": 1, "total": 1.0},
        {"event": "kept", "calls": 2, "total": 4.02},
    )
    rows = profiles.diff(a, b).set_index("event")
    gone, new = rows.loc["gone"], rows.loc["new"]
    assert gone.status == "disappeared" and new.status == "appeared"
    for column in ("total_b", "calls_b", "delta", "delta_pct", "delta_share", "share_b"):
        assert math.isnan(gone[column]), column
    for column in ("total_a", "calls_a", "delta", "delta_pct", "delta_share", "share_a"):
        assert math.isnan(new[column]), column
    assert (gone.bar, new.bar) == (-5.0, 2.0)
    assert gone.note == "" and new.note == ""  # both tables complete: nothing hides below
    # A measured 0 is a value: from 0 to 1 ms is slower (its % of 0 is undefined).
    idle = rows.loc["idle"]
    assert (idle.status, idle.delta) == ("slower", 1.0) and math.isnan(idle.delta_pct)
    assert rows.loc["kept"].status == "same"  # within 1% of A
    assert profiles.diff(a, b, tolerance=0.001).set_index("event").loc["kept"].status == "slower"
    assert set(rows.status) <= set(profiles.STATUSES)


def test_diff_matches_nested_events_by_their_parents() -> None:
    a = events_of(text_doc(NEW_REPORT))
    b = a[a.event != "GpuMemcpySync:GPU->CPU"].copy()
    b.loc[b.event == "fused_embedding_eltwise_layernorm/compute", "total"] = 30.0
    rows = profiles.diff(a, b)
    nested = rows[(rows.block == "event") & (rows.depth > 0)].set_index("event")
    assert nested.loc["fused_embedding_eltwise_layernorm/compute", "status"] == "faster"
    assert nested.loc["GpuMemcpySync:GPU->CPU", "status"] == "disappeared"
    assert nested.loc["GpuMemcpyAsync:CPU->GPU", "status"] == "same"
    # Children follow their parent; the memcpy block comes after the events.
    assert list(rows.block) == ["event"] * 5 + ["memcpy"] * 3
    assert rows.iloc[1].parent == "fused_embedding_eltwise_layernorm"


def test_nvprof_kernels_are_not_matched_with_paddle_ops() -> None:
    kernels = frame(
        {"event": "[CUDA memcpy HtoD]", "section": "nvprof", "place": "GPU", "total": 210.67}
    )
    ops = events_of(sample_doc(FUSION))
    notes = profiles.layout_notes(kernels, ops)
    assert any("none is matched" in n for n in notes)
    assert profiles.layout(kernels) == "nvprof summary (GPU kernels)"


def test_torch_and_nsys_sections_are_blocks_of_their_own() -> None:
    # A PyTorch table's self times add up (ratio = Self CPU %); nsys' kernels stand for a
    # run that has API calls and NVTX ranges too.
    torch_rows = frame(
        {"event": "aten::mm", "section": "torch", "total": 518.336, "ratio": 0.9983},
        {"event": "aten::matmul", "section": "torch", "total": 0.890805, "ratio": 0.0017},
        {"event": "gemm", "section": "torch", "total": 0.0, "gpu_time": 239.3, "ratio": 0.0},
    )
    assert profiles.main_block(torch_rows) == "torch"
    assert profiles.layout(torch_rows) == "PyTorch profiler table (self CPU and device time)"
    (total,) = profiles.block_totals(torch_rows).values()
    assert total.total == pytest.approx(519.2, rel=1e-2) and total.complete
    nsys_rows = frame(
        {"event": "cudaLaunchKernel", "section": "nsys api", "total": 1662.3, "ratio": 0.275},
        {"event": "gemm", "section": "nsys kernels", "total": 75.3, "ratio": 0.208},
        {"event": ":loop", "section": "nsys nvtx", "place": "PushPop", "total": 4208.6},
    )
    assert profiles.main_block(nsys_rows) == "nsys kernels"
    assert profiles.layout(nsys_rows) == "Nsight Systems summary (GPU kernels)"
    assert list(profiles.breakdown(nsys_rows).block) == ["nsys api", "nsys kernels", "nsys nvtx"]
    notes = profiles.layout_notes(torch_rows, nsys_rows)
    assert any("none is matched" in n for n in notes)
    assert set(profiles.BLOCK_LABELS) >= {"torch", "torch device", "nsys kernels", "nsys api"}


# -- IR passes --------------------------------------------------------------------------------


def test_passes_that_started_and_stopped_firing() -> None:
    before = passes_of(sample_doc(FUSE_ACT))  # fuse_elewise_add_act_pass: 14 subgraphs
    after = passes_of(sample_doc(FUSION))  # fc_elementwise_layernorm_fuse_pass: 24
    rows = profiles.passes_diff(before, after).set_index("name")
    started = rows.loc["fc_elementwise_layernorm_fuse_pass"]
    assert (started.status, started.subgraphs_b) == ("started firing", 24)
    assert math.isnan(started.subgraphs_a)
    stopped = rows.loc["fuse_elewise_add_act_pass"]
    assert (stopped.status, stopped.subgraphs_a) == ("stopped firing", 14)
    assert rows.loc["is_test_pass", "status"] == "only in A"  # ran, fused nothing said
    # Changes first, the larger count first.
    assert list(rows.index[:2]) == [
        "fc_elementwise_layernorm_fuse_pass",
        "fuse_elewise_add_act_pass",
    ]


def test_passes_fired_in_both_and_a_run_without_a_pass_log() -> None:
    a = frame(
        {"name": "fc_fuse_pass", "kind": "ir", "order": 0, "subgraphs": 12},
        {"name": "is_test_pass", "kind": "ir", "order": 1, "subgraphs": None},
    )
    b = frame(
        {"name": "fc_fuse_pass", "kind": "ir", "order": 0, "subgraphs": 10},
        {"name": "is_test_pass", "kind": "ir", "order": 1, "subgraphs": None},
    )
    rows = profiles.passes_diff(a, b).set_index("name")
    assert rows.loc["fc_fuse_pass", "status"] == "fired in both"
    assert rows.loc["fc_fuse_pass", "subgraphs_delta"] == -2
    assert rows.loc["is_test_pass", "status"] == "ran in both"
    # No pass log at all in A: B's passes did not "start" firing, A just does not say.
    rows = profiles.passes_diff(pd.DataFrame(), b)
    assert set(rows.status) == {"no pass log in A"}
    assert profiles.passes_diff(pd.DataFrame(), pd.DataFrame()).empty


# -- queries ----------------------------------------------------------------------------------


def key_of(conn: duckdb.DuckDBPyConnection, name: str) -> str:
    source_id, run = conn.execute(
        "SELECT e.source_id, e.run FROM profile_events e JOIN sources s USING (source_id)"
        " WHERE s.uri LIKE '%' || ? GROUP BY ALL",
        [name],
    ).fetchone()
    return profiles.run_key(source_id, run)


@pytest.fixture
def demo(demo_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    conn = duckdb.connect(str(demo_db), read_only=True)
    yield conn
    conn.close()


def test_profile_runs_of_the_demo(demo: duckdb.DuckDBPyConnection) -> None:
    runs = queries.profile_runs(demo)
    # the two ERNIE reports, the Transformer timeline, the nvprof op run; today's tools: an
    # nsys stats report and the PyTorch profiler recipe's tables
    assert len(runs) == 6
    by_uri = runs.set_index("uri")
    nsys = by_uri.loc["data/samples/nanomoe_nsys-stats-report.md"]
    assert nsys.sections == "nsys api,nsys kernels,nsys nvtx" and nsys.has_gpu
    assert nsys.total == pytest.approx(362.8, abs=0.05)  # its GPU kernels, in ms
    torch = by_uri.loc["data/samples/pytorch-tutorials_profiler-recipe-table.txt"]
    assert torch.sections == "torch,torch device" and torch.events == 20
    runs["key"] = [profiles.run_key(s, r) for s, r in zip(runs.source_id, runs.run, strict=True)]
    fusion = runs[runs.key == key_of(demo, FUSION)].iloc[0]
    assert (fusion.project, fusion.benchmark, fusion.events, fusion.passes, fusion.fired) == (
        "ernie",
        "ernie",
        5,
        1,
        1,
    )
    assert fusion.label == "fc+elementwise_add+layer_norm融合"
    assert f"{fusion.date:%Y-%m-%d}" == "2019-09-11" and fusion.has_gpu
    assert fusion.total == pytest.approx(60733.42)
    assert runs.iloc[0].sections == "nvprof"  # the newest: the 2020-08-12 op benchmark
    assert pd.isna(runs.iloc[-1].date)  # the profile report's date was not recovered
    source_id, run = profiles.parse_run_key(fusion.key)
    events = queries.profile_events(demo, source_id, run)
    assert list(events.event) == [
        "fc",
        "fused_fc_elementwise_layernorm",
        "matmul",
        "transpose2",
        "softmax",
    ]
    passes = queries.profile_passes(demo, source_id, run)
    assert passes[["name", "subgraphs"]].values.tolist() == [
        ["fc_elementwise_layernorm_fuse_pass", 24]
    ]


# -- the page ---------------------------------------------------------------------------------


def dataframe_with(at: AppTest, column: str) -> pd.DataFrame:
    return next(f for f in frames(at) if column in f.columns)


def test_page_shows_the_breakdown_of_the_2019_09_11_run(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, demo: duckdb.DuckDBPyConnection
) -> None:
    key = key_of(demo, FUSION)
    source_id, _ = profiles.parse_run_key(key)
    at = run_page(monkeypatch, demo_db, "pages/profiles.py", run=key)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Total"] == "70,132 ms" and metrics["Listed"] == "87%"
    assert metrics["Top-level events"] == "5"
    table = dataframe_with(at, "share")
    fc = table[table.event == "fc"].iloc[0]
    assert (fc.calls, fc.total) == (255459, 24269.7)
    fused = table[table.event == "fused_fc_elementwise_layernorm"].iloc[0]
    assert (fused.calls, fused.total) == (115207, 17699.9)
    # Its line opens it in the report, its total marked.
    assert fused.line == f"/sources?source={source_id}&line=16&value=17699.9"
    assert len(at.get("vega_lite_chart")) == 1
    passes = dataframe_with(at, "subgraphs")
    assert passes[["name", "subgraphs"]].values.tolist() == [
        ["fc_elementwise_layernorm_fuse_pass", 24]
    ]
    text = all_text(at)
    assert "The table was cut" in text and "No GpuMemCpy summary" in text
    assert "(https://github.com/PaddlePaddle/benchmark/issues/165)" in text
    assert dict(at.query_params) == {"run": key}


def test_page_opens_on_the_newest_run(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, demo: duckdb.DuckDBPyConnection
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/profiles.py")
    newest = queries.profile_runs(demo).iloc[0]
    assert at.query_params["run"] == profiles.run_key(newest.source_id, newest.run)
    assert "nvprof summary \\(GPU kernels\\)" in all_text(at)
    assert "**nvprof: GPU activities**" in all_text(at)
    assert at.selectbox[1].value == ""  # nothing to compare with until asked


def test_page_diff_deep_link_shows_what_appeared_and_disappeared(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, demo: duckdb.DuckDBPyConnection
) -> None:
    before, after = key_of(demo, REPORT), key_of(demo, FUSION)
    at = run_page(monkeypatch, demo_db, "pages/profiles.py", run=before, vs=after)
    assert dict(at.query_params) == {"run": before, "vs": after}
    assert (at.selectbox[0].value, at.selectbox[1].value) == (before, after)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Appeared / disappeared"] == "2 / 4"
    assert metrics["Below a cut"] == "1"  # reshape2, below B's last row
    assert metrics["Faster / slower"] == "1 / 1"
    assert (metrics["Total A"], metrics["Total B"]) == ("94,702 ms", "70,132 ms")
    table = dataframe_with(at, "status")
    status = dict(zip(table.event, table.status, strict=True))
    assert status["fused_fc_elementwise_layernorm"] == "appeared"
    assert status["fc"] == "appeared" and status["layer_norm"] == "disappeared"
    fused = table[table.event == "fused_fc_elementwise_layernorm"].iloc[0]
    assert pd.isna(fused.total_a) and pd.isna(fused.delta)  # not a change from 0
    passes = dataframe_with(at, "subgraphs_b")
    assert passes[["name", "status", "subgraphs_b"]].values.tolist() == [
        ["fc_elementwise_layernorm_fuse_pass", "no pass log in A", 24]
    ]
    assert len(at.get("vega_lite_chart")) == 2  # the diff and A's breakdown
    assert "A\\'s table was cut" in all_text(at)


def test_a_diff_is_worked_out_once_for_every_session(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, demo: duckdb.DuckDBPyConnection
) -> None:
    """Two sessions on one diff: the second draws what the first worked out
    (profile_views, through ui.query), as under a team's load."""
    before, after = key_of(demo, REPORT), key_of(demo, FUSION)
    ui.RESULTS.clear()
    real_diff, calls = profiles.diff, []
    monkeypatch.setattr(profiles, "diff", lambda a, b: calls.append(1) or real_diff(a, b))
    shown = []
    for _ in range(2):
        at = run_page(monkeypatch, demo_db, "pages/profiles.py", run=before, vs=after)
        shown.append({m.label: m.value for m in at.metric})
    assert len(calls) == 1
    assert shown[0] == shown[1] and shown[1]["Appeared / disappeared"] == "2 / 4"


def test_picking_a_run_to_compare_with_puts_it_in_the_url(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, demo: duckdb.DuckDBPyConnection
) -> None:
    before, after = key_of(demo, REPORT), key_of(demo, FUSION)
    at = run_page(monkeypatch, demo_db, "pages/profiles.py", run=before)
    at.selectbox[1].set_value(after).run()
    assert not at.exception
    assert at.query_params["vs"] == after
    assert any(s.value == "Diff: A → B" for s in at.subheader)
    at.selectbox[1].set_value("").run()
    assert "vs" not in at.query_params


def test_a_run_the_store_does_not_hold_is_said_and_the_newest_shown(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/profiles.py", run="999:0", vs="[x](javascript:1)")
    warnings = [w.value for w in at.warning]
    assert any("999\\:0" in w for w in warnings)
    assert any("\\[x\\]\\(javascript\\:1\\)" in w for w in warnings)  # escaped, not a link
    assert at.query_params["run"] != "999:0" and "vs" not in at.query_params


def test_page_on_an_empty_store_says_how_to_get_profiles(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, "pages/profiles.py")
    assert "No profiler reports yet" in all_text(at)


LAYOUTS = {
    "new.md": "# [x](javascript:alert(1)) newer report\n\n```\n" + NEW_REPORT + "```\n",
    "cpu.md": "# pyramidDNN on CPU\n\n```\n" + CPU_REPORT + "```\n",
    "gpu.md": "# pyramidDNN on GPU\n\n```\n"
    + CPU_REPORT.replace("Place: CPU", "Place: All")
    .replace(
        "Event                       Calls       Total       Min.",
        "Event  Calls  Total  CPU Time (Ratio)  GPU Time (Ratio)  Min.",
    )
    .replace("1.10423e+06 0.511263", "900000  600000 (0.666667)  300000 (0.333333)  0.511263")
    .replace("402713      0.013917", "402713  402000 (0.998229)  713 (0.001771)  0.013917")
    .replace("1531.2      0.012", "1531.2  1500 (0.979624)  31.2 (0.020376)  0.012")
    + "```\n",
}


@pytest.fixture
def layouts_db(tmp_path: Path) -> Path:
    """A store with the newer layout (nested events, GpuMemCpy Summary), a CPU-only report
    and a GPU report of the same ops."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in LAYOUTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    store = tmp_path / "layouts.duckdb"
    assert ingest("auto", str(folder), "--db", str(store), "--project", "demo") == 0
    return store


def keys_by_file(store: Path) -> dict[str, str]:
    conn = duckdb.connect(str(store), read_only=True)
    try:
        return {name: key_of(conn, name) for name in LAYOUTS}
    finally:
        conn.close()


def test_page_shows_nested_events_and_the_memcpy_summary(
    monkeypatch: pytest.MonkeyPatch, layouts_db: Path
) -> None:
    keys = keys_by_file(layouts_db)
    at = run_page(monkeypatch, layouts_db, "pages/profiles.py", run=keys["new.md"])
    labels = [e.label for e in at.expander]
    assert labels == ["fused\\_embedding\\_eltwise\\_layernorm · 3 nested · 45.9 ms"]
    text = all_text(at)
    assert "**GpuMemCpy summary**" in text and "Nested events" in text
    memcpy = next(f for f in frames(at) if "GpuMemcpy" in set(f.event))
    assert list(memcpy.event) == ["GpuMemcpy", "↳ GpuMemcpyAsync", "↳ GpuMemcpySync"]
    # The heading the run sits under is document text: shown escaped, never a link.
    heading = next(m.value for m in at.markdown if m.value.startswith("**Run**"))
    assert "\\[x\\]\\(javascript\\:alert\\(1\\)\\)" in heading and "](javascript" not in heading


def test_a_parents_nested_events_are_drawn_once_its_expander_is_opened(
    monkeypatch: pytest.MonkeyPatch, layouts_db: Path
) -> None:
    keys = keys_by_file(layouts_db)
    at = run_page(monkeypatch, layouts_db, "pages/profiles.py", run=keys["new.md"])
    events = [list(f.event) for f in frames(at)]
    assert events == [  # the run's events and the memcpy summary, nothing nested
        ["fused_embedding_eltwise_layernorm", "mul"],
        ["GpuMemcpy", "↳ GpuMemcpyAsync", "↳ GpuMemcpySync"],
    ]
    (box,) = at.expander
    at.session_state[box.key] = True  # as a click on it does
    at.run()
    assert [list(f.event) for f in frames(at)][1] == [
        "↳ fused_embedding_eltwise_layernorm/compute",
        "\u2003↳ GpuMemcpyAsync:CPU->GPU",
        "↳ GpuMemcpySync:GPU->CPU",
    ]


def test_page_compares_a_cpu_only_report_with_a_gpu_one(
    monkeypatch: pytest.MonkeyPatch, layouts_db: Path
) -> None:
    keys = keys_by_file(layouts_db)
    at = run_page(
        monkeypatch, layouts_db, "pages/profiles.py", run=keys["cpu.md"], vs=keys["gpu.md"]
    )
    assert any("GPU time is absent in A" in i.value for i in at.info)
    table = dataframe_with(at, "status")
    hash_ = table[table.event == "search_pyramid_hash"].iloc[0]
    assert (hash_.total_a, hash_.total_b, hash_.status) == (1104230.0, 900000.0, "faster")
    assert pd.isna(hash_.gpu_a) and hash_.gpu_b == 300000.0
    assert set(table.status) == {"faster", "same"}


# -- the benchmark's synthetic profiles -------------------------------------------------------


def test_synthetic_profiles_have_their_documented_shape(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from scripts.add_synthetic_profiles import URI_PREFIX, add
    from scripts.make_synthetic import build

    store = tmp_path / "synthetic.duckdb"
    build(store, 2_000, 20)
    assert add(store, sources=3, runs_per_source=2) == 6
    assert add(store, sources=3, runs_per_source=2) == 6  # again: replaced, not doubled
    conn = duckdb.connect(str(store), read_only=True)
    shape = conn.execute(
        "SELECT count(DISTINCT (source_id, run)), count(*), count(*) FILTER (WHERE depth > 0),"
        " count(*) FILTER (WHERE section = 'memcpy') FROM profile_events"
    ).fetchone()
    sources = conn.execute(
        "SELECT count(*) FROM sources WHERE starts_with(uri, ?)", [URI_PREFIX]
    ).fetchone()[0]
    runs = queries.profile_runs(conn)
    conn.close()
    assert shape == (6, 6 * 300, 6 * (40 * 3 + 2), 6 * 3) and sources == 3
    newest = runs.iloc[0]
    other = runs.iloc[1]
    at = run_page(
        monkeypatch,
        store,
        "pages/profiles.py",
        run=profiles.run_key(other.source_id, other.run),
        vs=profiles.run_key(newest.source_id, newest.run),
    )
    metrics = {m.label: m.value for m in at.metric}
    appeared, disappeared = (int(n) for n in metrics["Appeared / disappeared"].split(" / "))
    assert appeared > 0 and disappeared > 0  # the rotating pool of ops at work
    assert len(at.expander) == 21  # the 20 largest parents, and one for the other 20
