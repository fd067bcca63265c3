"""Performance tables of PRs and issues (md_tables -> pr_tables): the eight shared samples
(tests/fixtures/paddle-tables), more real tables (tests/fixtures/paddle-tables-more) and
malformed variants."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from ingest.parsers import md_tables
from ingest.text import DocText, read_text_file
from perfboard.model import Claim, DocMeta, Item, Measurement, Problem
from tests.conftest import ROOT, text_doc

SAMPLES = ROOT / "tests" / "fixtures" / "paddle-tables"
MORE = ROOT / "tests" / "fixtures" / "paddle-tables-more"


def doc(folder: Path, name: str) -> DocText:
    [path] = folder.glob(f"{name}*.md")
    return read_text_file(str(path), DocMeta(uri=path.name))


def parse(d: DocText) -> list[Item]:
    items = list(md_tables.parse(d))
    assert [i.line for i in items] == sorted(i.line for i in items)  # document order
    return items


def measurements(items: list[Item]) -> list[Measurement]:
    return [i for i in items if isinstance(i, Measurement)]


def claims(items: list[Item]) -> list[Claim]:
    return [i for i in items if isinstance(i, Claim)]


def problems(items: list[Item]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def find(items: list[Item], **want: object) -> Measurement:
    """The one measurement whose fields (and params, given as params={...}) match."""
    params = want.pop("params", {})
    found = [
        m
        for m in measurements(items)
        if all(getattr(m, k) == v for k, v in want.items())
        and all(m.params.get(k) == v for k, v in params.items())  # type: ignore[union-attr]
    ]
    assert len(found) == 1, f"{len(found)} measurements match {want} {params}"
    return found[0]


# --- every value of expected.tsv, read by this parser alone -----------------------------


def _expected() -> list[tuple[str, str, str, str, float, bool]]:
    rows = []
    with open(SAMPLES / "expected.tsv", encoding="utf-8", newline="") as fh:
        for line in csv.reader(fh, delimiter="\t"):
            if not line or line[0].startswith("#"):
                continue
            file, tier, check, *args = line
            units = "--units" in args
            args = [a for a in args if a != "--units"]
            text = args[0] if check == "row" else ""
            rows.append((file, tier, check, text, float(args[-1]), units))
    return rows


def _stored(items: list[Item]) -> list[tuple[float, str]]:
    """(number, text of its row) as tests/test_expected_values.py sees them stored (with a
    claim's speedup, which STORED_NUMBERS is to add)."""
    out: list[tuple[float, str]] = []
    for item in items:
        if isinstance(item, Measurement) and item.value is not None:
            text = f"{item.raw} {item.benchmark} {item.metric} {item.params}"
            out.append((item.value, text))
        elif isinstance(item, Claim):
            for value in (item.before, item.after, item.percent, item.speedup):
                if value is not None:
                    out.append((value, item.raw))
    return out


@pytest.mark.parametrize(
    ("file", "tier", "check", "text", "value", "units"),
    _expected(),
    ids=lambda v: str(v)[:40],
)
def test_every_expected_value_of_the_samples_is_read(
    file: str, tier: str, check: str, text: str, value: float, units: bool
) -> None:
    items = parse(read_text_file(str(SAMPLES / file)))
    factors = [1000.0**k for k in range(-3, 4)] if units else [1.0]
    hits = [
        t
        for v, t in _stored(items)
        if any(math.isclose(v, value * f, rel_tol=1e-6) for f in factors)
    ]
    if check == "row":
        hits = [t for t in hits if text in t]
    assert hits, f"{file}: {check} {text} {value:g} not read"


# --- the samples: series identity --------------------------------------------------------


def test_units_in_cells_config_columns_and_speedup_claim() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-25523"))
    after = find(items, value=0.005447)
    assert (after.benchmark, after.task, after.metric) == (
        "op/slice_grad",
        "op-backward",
        "latency",
    )
    assert (after.unit, after.direction, after.framework) == ("ms", "lower", "paddle")
    assert after.params == {
        "precision": "fp16",  # from the caption "**GPU FP16 performance**"
        "input_shape": "[16L, 800L]",
        "start": "[200]",
        "end": "[400]",
        "axes": "[1]",
        "variant": "after",
    }
    before = find(items, value=0.276627)  # "0.276627ms", no space
    assert before.params["variant"] == "before"
    first = claims(items)[0]
    assert (first.before, first.after, first.unit, first.speedup) == (0.012141, 0.005447, "ms", 2.2)
    assert first.percent == pytest.approx((0.012141 - 0.005447) / 0.012141 * 100)
    assert [c.speedup for c in claims(items)] == [2.2, 1.4, 2.1]
    assert problems(items) == []
    assert len(measurements(items)) == 6  # before and after of three rows; no speedup latency


def test_profiler_table_with_variants_as_rows() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-15909"))
    ave = find(items, value=0.153533)
    assert (ave.metric, ave.unit, ave.params["stat"]) == ("latency", "", "mean")
    assert ave.params["variant"] == "w/ optimization"
    assert ave.params["event"] == "thread0::prior_box"
    assert ave.stats["calls"] == 6000
    total = find(items, metric="total_time", params={"variant": "w/o optimization"})
    assert (total.value, "stat" in total.params) == (1151.85, False)
    stats = {m.params.get("stat") for m in measurements(items) if m.metric == "latency"}
    assert stats == {"min", "max", "mean"}
    share = find(items, metric="time_share", params={"variant": "w/ optimization"})
    assert (share.value, share.unit) == (0.084585, "ratio")
    # The text names no profiler and no unit: stored without one, and said so.
    [warning] = problems(items)
    assert warning.severity == "warning" and "no unit given" in warning.reason
    assert warning.line == 5


def test_profiler_table_in_ms_when_the_text_names_the_profiler() -> None:
    text = doc(SAMPLES, "paddle-pr-15909").text.replace(
        "* The below table", "* Paddle profiler report. The below table"
    )
    items = parse(text_doc(text))
    ave = find(items, value=pytest.approx(0.153533), params={"stat": "mean"})  # type: ignore[arg-type]
    assert ave.unit == "ms"
    assert "profiler" in problems(items)[0].reason


def test_chinese_header_and_one_cell_unit_for_the_table() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-29744"))
    develop, pr = measurements(items)
    assert (develop.value, develop.unit, develop.params["variant"]) == (0.033, "ms", "develop")
    assert (pr.value, pr.unit, pr.params["variant"]) == (pytest.approx(0.01518), "ms", "this PR")
    assert pr.params["输入(x_shape)/y_shape"] == "[32, 128, 768]/ [768]"
    assert pr.params["data_type"] == "float16"
    [warning] = problems(items)
    assert warning.severity == "warning"
    assert "read in 'us'" in warning.reason


def test_two_tables_without_outer_pipes_forward_backward_and_cut_row() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-31812"))
    new = find(items, task="op-forward", params={"case": "float32-8M", "variant": "paddle new"})
    assert (new.value, new.unit, new.framework) == (120.32, "", "paddle")
    torch = find(items, task="op-forward", params={"case": "float32-8M", "variant": "pytorch"})
    assert (torch.value, torch.framework) == (120.42, "pytorch")
    bwd = find(items, task="op-backward", params={"case": "float32-64M", "variant": "paddle new"})
    assert bwd.value == 1017.6
    row = [c for c in claims(items) if c.line == 16]  # float32-12M
    # two "diff with pytorch" columns (same header twice) and the speedup
    assert [(c.percent, c.speedup) for c in row] == [(-3.22, None), (0.01, None), (None, 1.032)]
    errors = [p for p in problems(items) if p.severity == "error"]
    assert [(p.line, p.reason) for p in errors] == [(38, "row cut short: 3 of 4 cells")]
    warnings = [p.line for p in problems(items) if p.severity == "warning"]
    assert warnings == [13, 30]  # no unit in either table: stored without one
    assert len(measurements(items)) == 12 * 3 + 6 * 2


def test_transposed_table_with_chinese_section_rows_and_ratio_rows() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-39856"))
    opt = find(items, params={"variant": "paddle_opt", "#rows": 28672})
    assert (opt.value, opt.unit, opt.task) == (pytest.approx(0.1965863), "ms", "op-forward")
    torch = find(items, params={"variant": "torch", "#rows": 56})
    assert (torch.value, torch.framework) == (pytest.approx(0.006862596), "pytorch")
    assert len(measurements(items)) == 30  # three variants x ten configs; no ratio latency
    ratios = [c for c in claims(items) if c.raw.startswith("nv/paddle_opt")]
    assert ratios[0].speedup == 1.974362885 and len(ratios) == 10
    [cut] = problems(items)
    assert (cut.line, cut.reason) == (27, "row cut short: 6 of 11 cells")


def test_units_in_the_header_and_thousands_separators() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-44783"))
    before = find(items, params={"shape": "(126000, 16)", "variant": "paddle优化前"})
    assert (before.value, before.unit) == (pytest.approx(24.091916), "ms")
    torch = find(items, params={"shape": "(62929, 64)", "variant": "torch"})
    assert (torch.value, torch.framework) == (pytest.approx(0.1230395), "pytorch")
    assert (
        find(items, params={"shape": "(62929, 64)", "variant": "paddle优化后"}).framework
        == "paddle"
    )
    assert problems(items) == []
    assert all(m.benchmark == "" for m in measurements(items))  # "native kernel" is prose


def test_two_tables_faster_than_percent_and_device_column() -> None:
    items = parse(doc(SAMPLES, "paddle-pr-52482"))
    new = find(items, line=23, params={"variant": "Paddle"})
    assert (new.value, new.unit, new.device) == (5.1831, "ms", "Tesla V100")
    assert new.params["input_shape"] == "[16L,100L,2L,2L]"
    assert new.params["input_type"] == "float32"
    old = find(items, line=23, params={"variant": "old Paddle"})
    assert old.value == 10.1888
    torch = find(items, line=31, params={"variant": "Pytorch"})
    assert (torch.value, torch.framework) == (8.0796, "pytorch")
    first, *_ = claims(items)
    assert (first.before, first.after, first.percent) == (10.1888, 5.1831, 96.58)
    vs_torch = [c for c in claims(items) if c.line == 31]
    assert [(c.before, c.after, c.percent) for c in vs_torch] == [(8.0796, 5.1831, 55.88)]
    [cut] = problems(items)
    assert (cut.line, cut.reason) == (33, "row cut short: 3 of 8 cells")


def test_variants_as_rows_and_unit_in_the_corner_header() -> None:
    items = parse(doc(SAMPLES, "paddle-issue-34201"))
    torch = find(items, device="cpu", params={"variant": "torch"})
    assert (torch.value, torch.unit, torch.framework) == (pytest.approx(0.00357), "ms", "pytorch")
    dygraph = find(items, device="gpu", params={"variant": "paddle动态图"})
    assert (dygraph.value, dygraph.framework) == (pytest.approx(0.13993), "paddle")
    assert len(measurements(items)) == 8
    assert problems(items) == []


# --- more real tables --------------------------------------------------------------------


def test_cumsum_metric_named_by_two_headers_and_units_in_some_cells() -> None:
    items = parse(doc(MORE, "paddle-pr-29193"))
    got = [
        (m.params["variant"], m.metric, m.value, m.unit, m.framework) for m in measurements(items)
    ][:3]
    assert got == [
        ("Origin", "gpu_time", 531.2, "ms", "paddle"),  # bare: the table's one unit
        ("PR", "gpu_time", 11.2, "ms", "paddle"),
        ("tensorflow", "gpu_time", 15.2, "ms", "tensorflow"),
    ]
    [warning] = problems(items)
    assert warning.severity == "warning" and "'ms'" in warning.reason


def test_op_and_variant_in_the_header_with_two_speedup_columns() -> None:
    items = parse(doc(MORE, "paddle-pr-28292"))
    grad = find(items, line=15, benchmark="op/LookupTableV2Grad", params={"variant": "develop"})
    assert (grad.value, grad.task) == (pytest.approx(0.008785), "op-backward")
    fwd = find(items, line=15, benchmark="op/LookupTableV2", params={"variant": "this PR"})
    assert (fwd.value, fwd.task) == (pytest.approx(0.002926), "op-forward")
    assert fwd.params["weight_size"] == "[2, 768]"
    first, second = [c for c in claims(items) if c.line == 15]
    assert (first.before, first.after, first.speedup) == (
        pytest.approx(0.008785),
        pytest.approx(0.00625),
        1.36,
    )
    assert (second.before, second.after, second.speedup) == (
        pytest.approx(0.002906),
        pytest.approx(0.002926),
        0.993,
    )


def test_slower_diffs_and_speedup_against_the_right_columns() -> None:
    items = parse(doc(MORE, "paddle-pr-52736"))
    new = find(items, params={"variant": "paddle_new"})
    assert (new.value, new.unit, new.params["config"]) == (1.361, "ms", "[360340, 3] axis=0")
    slower_x, slower_pct, speedup = claims(items)
    assert (slower_x.before, slower_x.after) == (0.859, 42.094)  # torch against paddle_old
    assert slower_x.speedup == pytest.approx(1 / 49.0)  # "慢49.0x"
    assert (slower_pct.before, slower_pct.after, slower_pct.percent) == (0.859, 1.361, -58.44)
    assert (speedup.before, speedup.after, speedup.speedup) == (42.094, 1.361, 30.93)


def test_chinese_time_and_memory_columns_per_variant() -> None:
    items = parse(doc(MORE, "paddle-pr-61874"))
    before = find(items, metric="latency", params={"阶数": "2", "variant": "优化前"})
    assert (before.benchmark, before.value, before.unit) == ("op/divide", 1.57, "ms")
    memory = find(items, metric="gpu_memory", params={"阶数": "3", "variant": "优化后"})
    assert (memory.value, memory.unit) == (pytest.approx(0.107 * 1024), "MB")
    assert len(measurements(items)) == 12 and problems(items) == []


def test_captions_name_the_op_of_each_table() -> None:
    items = parse(doc(MORE, "paddle-pr-28291"))
    assert {m.benchmark for m in measurements(items) if m.line < 20} == {"op/stack"}
    yolo = find(items, line=31, params={"variant": "Kernel average(factor=1)"})
    assert (yolo.benchmark, yolo.value) == ("op/yolo_box", pytest.approx(0.044452))
    assert find(items, line=17, params={"variant": "StackCUDAKernel"}).params["factor"] == "4"
    assert problems(items) == []


def test_non_paddle_pr_forward_backward_headings_and_bold_speedups() -> None:
    items = parse(doc(MORE, "pufferlib-pr-467"))
    opt = find(
        items, task="op-backward", params={"config": "N=32, T=64, A=6", "variant": "Optimized"}
    )
    assert (opt.value, opt.unit) == (0.023, "ms")
    assert [c.speedup for c in claims(items)] == [1.67, 1.80, 1.69, 1.62, 1.87, 1.63]
    [cut] = problems(items)
    assert (cut.line, cut.severity) == (21, "error")


# --- malformed and edge cases ------------------------------------------------------------


def test_unit_from_the_text_above_with_a_warning() -> None:
    text = "性能数据如下，单位: us\n\n| shape | develop | PR |\n|---|---|---|\n"
    text += "| [1, 2] | 12.5 | 10.1 |\n"
    items = parse(text_doc(text))
    assert [(m.value, m.unit) for m in measurements(items)] == [(0.0125, "ms"), (0.0101, "ms")]
    [warning] = problems(items)
    assert (warning.severity, warning.line) == ("warning", 3)
    assert "the text above states" in warning.reason


def test_no_unit_anywhere_is_stored_unitless_with_a_warning_never_guessed() -> None:
    text = "| shape | develop | PR |\n|---|---|---|\n| [1, 2] | 12.5 | 10.1 |\n"
    items = parse(text_doc(text))
    assert [(m.value, m.unit) for m in measurements(items)] == [(12.5, ""), (10.1, "")]
    [warning] = problems(items)
    assert "no unit given" in warning.reason and warning.severity == "warning"


def test_cell_units_that_disagree_leave_bare_cells_unitless() -> None:
    text = "| shape | before | after |\n|---|---|---|\n| [1] | 3ms | 2 |\n| [2] | 300us | 200us |\n"
    items = parse(text_doc(text))
    assert [(m.value, m.unit) for m in measurements(items)] == [
        (3.0, "ms"),
        (2.0, ""),
        (0.3, "ms"),
        (0.2, "ms"),
    ]
    assert "several units" in problems(items)[0].reason


def test_garbled_and_cut_rows_are_problems_and_the_rest_is_read() -> None:
    text = (
        "| op | before | after | speed up |\n|---|---|---|---|\n"
        "| relu | 1.0 ms | 0.5 ms | 2x |\n| gelu | abc | 0.5 ms | 2x |\n| tanh | 1.0 ms"
    )
    items = parse(text_doc(text))
    assert [(m.benchmark, m.params["variant"], m.value) for m in measurements(items)] == [
        ("op/relu", "before", 1.0),
        ("op/relu", "after", 0.5),
        ("op/gelu", "after", 0.5),
    ]
    assert [(p.line, p.reason) for p in problems(items)] == [
        (4, "column 'before': 'abc' is not a number"),
        (5, "row cut short: 2 of 4 cells"),
    ]


def test_plus_minus_cells_keep_the_spread_as_std() -> None:
    text = "| case | paddle (ms) | torch (ms) |\n|---|---|---|\n| a | 1.5 ± 0.1 | 2.0 ± 0.2 |\n"
    paddle, torch = measurements(parse(text_doc(text)))
    assert (paddle.value, paddle.stats, paddle.params["variant"]) == (1.5, {"std": 0.1}, "paddle")
    assert (torch.value, torch.stats, torch.framework) == (2.0, {"std": 0.2}, "pytorch")


def test_slower_than_percent_against_a_competitor() -> None:
    text = "| shape | paddle(us) | pytorch(us) | diff |\n|---|---|---|---|\n"
    text += "| [4] | 10 | 8 | slower than 25% |\n"
    [claim] = claims(parse(text_doc(text)))
    assert (claim.before, claim.after, claim.percent) == (0.008, 0.01, -25.0)


def test_variants_as_rows_against_metric_columns() -> None:
    text = "| | latency (ms) | throughput (samples/s) |\n|---|---|---|\n"
    text += "| before | 3 | 100 |\n| after | 2 | 150 |\n"
    got = [(m.params, m.metric, m.value, m.direction) for m in measurements(parse(text_doc(text)))]
    assert got == [
        ({"variant": "before"}, "latency", 3.0, "lower"),
        ({"variant": "before"}, "throughput", 100.0, "higher"),
        ({"variant": "after"}, "latency", 2.0, "lower"),
        ({"variant": "after"}, "throughput", 150.0, "higher"),
    ]


def test_thread_counts_and_framework_versions_as_variant_columns() -> None:
    text = "| shape | 1 thread (ms) | 4 threads (ms) | paddle 2.3 (ms) |\n|---|---|---|---|\n"
    text += "| [1] | 10 | 4 | 12 |\n"
    got = [(m.params, m.value) for m in measurements(parse(text_doc(text)))]
    assert got == [
        ({"shape": "[1]", "variant": "1 thread", "threads": 1}, 10.0),
        ({"shape": "[1]", "variant": "4 threads", "threads": 4}, 4.0),
        ({"shape": "[1]", "variant": "paddle 2.3"}, 12.0),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "| case | paddle acc | pytorch acc |\n|---|---|---|\n| a | 0.91 | 0.90 |\n",
        "| feature | paddle | pytorch |\n|---|---|---|\n| dygraph | yes | yes |\n",
        "| file | lines |\n|---|---|\n| a.py | 120 |\n",
        "| case | mAP | loss |\n|---|---|---|\n| a | 0.5 | 1.2 |\n",
    ],
)
def test_tables_that_are_no_performance_tables_give_no_times(text: str) -> None:
    assert [m for m in measurements(parse(text_doc(text))) if m.unit == "ms"] == []


def test_llama_bench_table_reads_t_s_as_a_throughput_and_no_size_series() -> None:
    # A bug seen by users: 21.96 t/s stored as 21,960 ms, "3.56 GiB" and "6.74 B" as memory.
    text = (
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp 512 | 21.96 ± 0.05 |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg 128 | 5.12 ± 0.01 |\n"
    )
    pp, tg = measurements(parse(text_doc(text)))
    assert (pp.metric, pp.value, pp.unit, pp.direction) == (
        "throughput",
        21.96,
        "tokens/s",
        "higher",
    )
    assert pp.stats == {"std": 0.05}
    assert (pp.params["test"], tg.params["test"]) == ("pp 512", "tg 128")
    assert tg.value == 5.12


def test_degenerate_variant_tables_never_raise() -> None:
    for text in (
        "| a | before | after |\n|---|---|---|\n| | | |\n",
        "| #rows | 1 | 2 |\n|---|---|---|\n| torch | |\n| 加速比: | | |\n| a/b | x | 1.2 |\n",
        "| Type | Calls | Total | Ave. |\n|---|---|---|---|\n| w/ | x | -1 | nan |\n",
        "| shape | develop | PR | speed up |\n|---|---|---|---|\n| [1] | 1e400 | -3 | 2x |\n",
    ):
        for item in parse(text_doc(text)):
            assert isinstance(item, (Measurement, Claim, Problem))


def test_rows_naming_metric_and_unit_against_variant_columns() -> None:
    text = (
        "| | develop | PR |\n|---|---|---|\n"
        "| QPS | 100 | 120 |\n| latency(ms) | 10 | 8 |\n| speedup | | 1.25x |\n"
    )
    items = parse(text_doc(text))
    got = [(m.params["variant"], m.metric, m.value, m.unit) for m in measurements(items)]
    assert got == [
        ("develop", "qps", 100.0, "samples/s"),
        ("PR", "qps", 120.0, "samples/s"),
        ("develop", "latency", 10.0, "ms"),
        ("PR", "latency", 8.0, "ms"),
    ]
    [claim] = claims(items)
    assert (claim.line, claim.speedup) == (5, 1.25)


def test_a_value_followed_by_a_note_in_parentheses() -> None:
    text = "| shape | develop | PR |\n|---|---|---|\n| [1] | 1.00ms | 0.87ms (1.15x) |\n"
    got = [(m.params["variant"], m.value) for m in measurements(parse(text_doc(text)))]
    assert got == [("develop", 1.0), ("PR", 0.87)]


def test_transposed_table_with_a_dimension_or_key_value_header() -> None:
    text = "| batch_size | 1 | 4 |\n|---|---|---|\n"
    text += "| paddle | 10ms | 30ms |\n| pytorch | 12ms | 35ms |\n"
    got = [(m.params, m.framework, m.value) for m in measurements(parse(text_doc(text)))]
    assert got[1] == ({"variant": "paddle", "batch_size": 4}, "paddle", 30.0)
    assert got[2] == ({"variant": "pytorch", "batch_size": 1}, "pytorch", 12.0)
    text = "| 耗时(ms) | bs=1 | bs=8 |\n|---|---|---|\n| develop | 10 | 30 |\n| PR | 8 | 25 |\n"
    got = [(m.params, m.value, m.unit) for m in measurements(parse(text_doc(text)))]
    assert got[3] == ({"variant": "PR", "batch_size": 8}, 25.0, "ms")


def test_an_op_named_by_the_sentence_above_but_not_by_the_op() -> None:
    table = "\n\n| shape | develop (us) | PR (us) |\n|---|---|---|\n| [1] | 10 | 8 |\n"
    named = measurements(parse(text_doc("This PR optimizes the softmax op:" + table)))
    assert {m.benchmark for m in named} == {"op/softmax"}
    unnamed = measurements(parse(text_doc("The performance of the op is as follows:" + table)))
    assert {m.benchmark for m in unnamed} == {""}


# --- layouts the reader had not seen (shapes of real PaddlePaddle PRs) -------------------


def test_a_framework_with_its_version_is_a_variant_never_a_config() -> None:
    text = "| case | paddle | tf2.3 |\n|---|---|---|\n| 1 | 0.52 | 0.61 |\n"
    items = parse(text_doc(text))
    got = [(m.params, m.framework, m.value, m.unit) for m in measurements(items)]
    assert got == [
        ({"case": "1", "variant": "paddle"}, "paddle", 0.52, ""),
        ({"case": "1", "variant": "tf2.3"}, "tensorflow", 0.61, ""),
    ]
    [warning] = problems(items)
    assert warning.severity == "warning" and "no unit given" in warning.reason


@pytest.mark.parametrize(
    ("label", "framework"),
    [
        ("tf2.3", "tensorflow"),
        ("tf 2.4", "tensorflow"),
        ("paddle2.1", "paddle"),
        ("torch 1.10", "pytorch"),
        ("pytorch-1.8", "pytorch"),
        ("paddle develop", "paddle"),
        ("TF2", "tensorflow"),
    ],
)
def test_versioned_framework_headers(label: str, framework: str) -> None:
    text = f"| shape | {label} |\n|---|---|\n| [1] | 3ms |\n"
    [m] = measurements(parse(text_doc(text)))
    assert (m.params, m.framework, m.value) == ({"shape": "[1]", "variant": label}, framework, 3.0)


def test_a_numeric_column_naming_nothing_is_never_a_param_value() -> None:
    text = "| shape | develop (ms) | foo |\n|---|---|---|\n| [1] | 1.5 | 2.5 |\n"
    items = parse(text_doc(text))
    [m] = measurements(items)
    assert m.params == {"shape": "[1]", "variant": "develop"}
    [warning] = problems(items)
    assert warning.severity == "warning" and "'foo'" in warning.reason
    # integer columns before the values still name the series (matmul M / N)
    text = "| M | N | cublas (us) | ours (us) |\n|---|---|---|---|\n| 1024 | 512 | 30 | 20 |\n"
    items = parse(text_doc(text))
    assert [m.params for m in measurements(items)] == [
        {"m": "1024", "n": "512", "variant": "cublas"},
        {"m": "1024", "n": "512", "variant": "ours"},
    ]
    assert problems(items) == []


@pytest.mark.parametrize(
    "caption",
    ["性能数据（单位 ms）：", "性能数据，单位：ms", "性能数据 (ms)", "All time in ms:", "unit: ms"],
)
def test_a_model_column_with_variant_columns_and_the_unit_in_the_text(caption: str) -> None:
    text = f"{caption}\n\n| 模型 | 优化前 | 优化后 | 加速比 |\n|---|---|---|---|\n"
    text += "| ResNet50 | 10.5 | 8.1 | 1.30 |\n"
    items = parse(text_doc(text))
    before, after = measurements(items)
    assert (before.benchmark, before.params, before.value, before.unit) == (
        "ResNet50",
        {"variant": "优化前"},
        10.5,
        "ms",
    )
    assert (after.benchmark, after.params["variant"], after.value) == ("ResNet50", "优化后", 8.1)
    assert (before.task, before.framework, before.direction) == ("inference", "paddle", "lower")
    [claim] = claims(items)
    assert (claim.before, claim.after, claim.speedup) == (10.5, 8.1, 1.3)
    [warning] = problems(items)
    assert warning.severity == "warning" and "the text above states" in warning.reason


def test_a_model_column_with_a_path_keeps_the_file_name() -> None:
    text = "| model | before (ms) | after (ms) |\n|---|---|---|\n"
    text += "| /data/models/resnet50.pdmodel | 10 | 8 |\n"
    assert {m.benchmark for m in measurements(parse(text_doc(text)))} == {"resnet50.pdmodel"}


def test_plus_minus_cells_with_the_unit_after_the_spread_and_precision_variants() -> None:
    text = "| thread | FP32 | INT8 |\n|---|---|---|\n| 1 | 92.2 ± 0.5 ms | 30.1 ± 0.2 ms |\n"
    text += "| 4 | 25.0 ± 0.3 ms | 9.9 ± 0.1 ms |\n"
    items = parse(text_doc(text))
    assert problems(items) == []
    got = [(m.params, m.value, m.unit, m.stats) for m in measurements(items)]
    assert got[:2] == [
        ({"threads": 1, "variant": "FP32", "precision": "fp32"}, 92.2, "ms", {"std": 0.5}),
        ({"threads": 1, "variant": "INT8", "precision": "int8"}, 30.1, "ms", {"std": 0.2}),
    ]
    assert got[3][:2] == ({"threads": 4, "variant": "INT8", "precision": "int8"}, 9.9)
    assert {m.metric for m in measurements(items)} == {"latency"}


def test_fp16_and_bf16_columns_are_precision_variants() -> None:
    text = "| shape | FP16 | BF16 |\n|---|---|---|\n| [8, 1024] | 12.5us | 13.0us |\n"
    got = [
        (m.params["variant"], m.params["precision"]) for m in measurements(parse(text_doc(text)))
    ]
    assert got == [("FP16", "fp16"), ("BF16", "bf16")]


def test_origin_and_pr_gpu_time_beside_tensorflow_keep_working() -> None:
    text = "| shape | Origin GPU Time | PR GPU time | tensorflow |\n|---|---|---|---|\n"
    text += "| [1700971, 100] | 531.2ms | 11.2ms | 15.2ms |\n"
    got = [
        (m.metric, m.params["variant"], m.framework, m.value)
        for m in measurements(parse(text_doc(text)))
    ]
    assert got == [
        ("gpu_time", "Origin", "paddle", 531.2),
        ("gpu_time", "PR", "paddle", 11.2),
        ("gpu_time", "tensorflow", "tensorflow", 15.2),
    ]


@pytest.mark.parametrize(
    ("heading", "benchmark", "task"),
    [
        ("### conv2d forward, V100", "op/conv2d", "op-forward"),
        ("### conv2d backward", "op/conv2d", "op-backward"),
        ("#### layer_norm grad", "op/layer_norm", "op-backward"),
        ("### softmax op on V100", "op/softmax", "op-forward"),
        ("### Results on V100", "", "inference"),
        ("### Performance of the new version", "", "inference"),
        ("## Model forward time", "", "op-forward"),
    ],
)
def test_a_heading_names_the_op_only_when_it_names_one(
    heading: str, benchmark: str, task: str
) -> None:
    text = f"{heading}\n\n| shape | develop | PR |\n|---|---|---|\n| [1] | 10ms | 8ms |\n"
    got = {(m.benchmark, m.task) for m in measurements(parse(text_doc(text)))}
    assert got == {(benchmark, task)}


@pytest.mark.parametrize(
    "text",
    [
        "| shape | foo | bar |\n|---|---|---|\n| [1] | 1.5 | 2.5 |\n",
        "| name | alpha | beta |\n|---|---|---|\n| x | 0.52 | 0.61 |\n",
    ],
)
def test_a_performance_looking_table_that_is_skipped_says_why(text: str) -> None:
    items = parse(text_doc("Performance:\n\n" + text))
    assert measurements(items) == []
    [warning] = problems(items)
    assert (warning.severity, warning.line) == ("warning", 3)
    assert "not read" in warning.reason


@pytest.mark.parametrize(
    "text",
    [
        "| case | paddle acc | pytorch acc |\n|---|---|---|\n| a | 0.91 | 0.90 |\n",
        "| feature | paddle | pytorch |\n|---|---|---|\n| dygraph | yes | yes |\n",
        "| file | lines |\n|---|---|\n| a.py | 120 |\n",
        "| 文件 | 行数 |\n|---|---|\n| paddle/phi/kernels/gpu/a.cu | 120 |\n",
        "| case | mAP | loss |\n|---|---|---|\n| a | 0.5 | 1.2 |\n",
        "| model | top1 | top5 |\n|---|---|---|\n| resnet50 | 76.1 | 92.9 |\n",
        "| task | owner | status |\n|---|---|---|\n| conv2d | alice | done |\n",
    ],
)
def test_tables_that_are_clearly_not_performance_say_nothing(text: str) -> None:
    assert parse(text_doc(text)) == []


def test_a_cut_variant_table_is_a_problem_and_the_complete_rows_are_read() -> None:
    text = "| thread | FP32 | INT8 |\n|---|---|---|\n| 1 | 92.2 ± 0.5 ms | 30.1 ± 0.2 ms |\n"
    text += "| 4 | 25.0 ± 0."
    items = parse(text_doc(text))
    assert [m.value for m in measurements(items)] == [92.2, 30.1]
    [cut] = problems(items)
    assert (cut.line, cut.severity) == (4, "error")
    garbled = text_doc("| 模型 | 优化前 | 优化后 |\n|---|---|---|\n| a | 1 ms | ?? |\n")
    items = parse(garbled)
    assert [m.value for m in measurements(items)] == [1.0]
    assert [(p.line, p.severity) for p in problems(items)] == [(3, "error")]


# --- more real tables of layouts not yet in the fixtures ---------------------------------


def test_conv2d_paddle_against_tf2_3_with_units_in_cells() -> None:
    items = parse(doc(MORE, "benchmark-pr-552"))
    tf = find(items, line=21, params={"variant": "tf2.3"})
    assert (tf.value, tf.unit, tf.framework) == (21.5862, "ms", "tensorflow")
    assert tf.params["测试类型"] == "use_cudnn=True, backward=True"
    paddle = find(items, line=21, params={"variant": "paddle"})
    assert (paddle.value, paddle.framework) == (169.8235, "paddle")
    assert find(items, line=22, params={"variant": "paddle"}).value == 34.2407
    assert len(measurements(items)) == 6  # the two "-" cells are no values
    assert problems(items) == []
    assert {m.benchmark for m in measurements(items)} == {""}  # "GPU Kernel时间" names no op


def test_scene_table_with_a_worse_than_percent_and_no_unit() -> None:
    items = parse(doc(MORE, "benchmark-issue-205"))
    paddle = find(items, params={"variant": "Paddle"})
    assert (paddle.value, paddle.unit, paddle.params["场景"]) == (7.374, "", "单GPU")
    torch = find(items, params={"variant": "pytorch"})
    assert (torch.value, torch.framework) == (8.23, "pytorch")
    [claim] = claims(items)
    assert claim.percent == -10.4  # "差于 10.4%": Paddle is worse
    [warning] = problems(items)
    assert "no unit given" in warning.reason


def test_one_variant_column_and_cell_units_that_disagree_wildly() -> None:
    items = parse(doc(MORE, "paddle-pr-29707"))
    first, second = measurements(items)
    assert (first.value, first.unit, first.params["variant"]) == (13000.0, "ms", "this PR")
    assert first.params["data_type"] == "float16"
    assert (second.value, second.params["输入(x_shape)/y_shape"]) == (
        0.016,
        "[32, 128, 3072] /[3072]",
    )
    [warning] = problems(items)
    assert warning.severity == "warning" and "'this PR'" in warning.reason
    assert "'s'" in warning.reason and "'us'" in warning.reason


def test_model_in_the_corner_build_flags_as_variants_and_a_metric_row() -> None:
    items = parse(doc(MORE, "paddle-pr-20965"))
    off, on = measurements(items)
    assert (off.benchmark, off.metric, off.value, off.unit) == (
        "Ernie Large",
        "latency",
        1676.13,
        "ms",
    )
    assert off.params == {"variant": "-DWIHT_MKLDNN=OFF"}
    assert (on.params, on.value) == ({"variant": "-DWIHT_MKLDNN=ON"}, 1212.22)
    [claim] = claims(items)
    assert (claim.before, claim.after, claim.percent) == (1676.13, 1212.22, 27.6)
    assert problems(items) == []


def test_models_by_batch_size_per_framework_heading_with_the_unit_in_the_section() -> None:
    items = parse(doc(MORE, "paddle-issue-9562"))
    resnet = find(items, benchmark="resnet50", framework="paddle", params={"batch_size": 1})
    assert (resnet.value, resnet.unit, resnet.params["variant"]) == (10.8819, "ms", "paddle")
    trt = find(items, benchmark="resnet50", framework="tensorrt", params={"batch_size": 64})
    assert (trt.value, trt.unit, trt.params["variant"]) == (2.28533, "ms", "tensorrt")
    ssd = find(items, benchmark="mobilenet-ssd", params={"batch_size": 32})
    assert ssd.value == 5.5263
    assert len(measurements(items)) == 6 * 3 - 1 + 7  # se-resnext50 has no bs 32
    warnings = [p for p in problems(items)]
    assert [(p.line, p.severity) for p in warnings] == [(18, "warning"), (26, "warning")]
    assert all("'ms'" in p.reason for p in warnings)


def test_the_headings_above_a_table_are_those_a_search_of_its_window_finds() -> None:
    # pr_tables finds a text's headings once and takes those of each table's 64 KiB by
    # bisection; the answer must be the windowed search's, for any window (one that cuts
    # a heading line too), on every fixture.
    import random
    import re

    from ingest.parsers import pr_tables

    rng = random.Random(1)
    texts = [
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((ROOT / "tests" / "fixtures").rglob("*.md"))
    ]
    checked = 0
    for text in texts:
        ends = [0, len(text), *(rng.randrange(len(text) + 1) for _ in range(20))]
        ends += [m.start() + 1 for m in re.finditer("\n", text)][:100]
        for end in ends:
            for start in (max(0, end - 65536), max(0, end - 40), 0):
                found = [
                    (m.span(), m.groups()) for m in pr_tables._headings_between(text, start, end)
                ]
                searched = [
                    (m.span(), m.groups()) for m in pr_tables._HEADING.finditer(text, start, end)
                ]
                assert found == searched, (end, start)
                checked += 1
    assert checked > 5000


def test_the_headings_of_a_chunk_equal_to_the_last_are_found_in_that_chunk() -> None:
    # A log that repeats itself gives chunks of equal text: each is read as its own (the
    # headings kept are those of the text last asked about, by identity, not by value).
    from ingest.parsers import pr_tables

    text = "### 2. Average Latency(ms)\n#### paddle\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    again = "".join(text.splitlines(keepends=True))  # equal, another object
    assert again == text and again is not text
    for chunk in (text, again, text[:40], again):
        starts, found = pr_tables._headings_of(chunk)
        assert all(m.string is chunk for m in found)
        assert [m.group(2) for m in found] == [
            h for h in ("2. Average Latency(ms)", "paddle") if h in chunk
        ]
        assert starts == [m.start() for m in found]
