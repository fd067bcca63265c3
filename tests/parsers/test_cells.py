"""Shared cell vocabulary: one spelling of a percentile for every tool's parser, and the
words of table headers and cells."""

from __future__ import annotations

import pytest

from ingest.parsers.cells import (
    cell_number,
    derived_figure,
    dimension_key,
    framework_in,
    header_unit,
    percentile_stat,
    split_plus_minus,
    unit_in_text,
    variant_label,
    variant_rank,
)


@pytest.mark.parametrize(
    ("printed", "stat"),
    [
        (99.0, "p99"),  # trtexec percentile(99%), vLLM P99, MLPerf "99.00 percentile"
        (99.9, "p99.9"),  # MLPerf "99.90 percentile latency", vLLM P99.9
        (50.0, "p50"),
        (90, "p90"),
        (0.5, "p0.5"),
    ],
)
def test_a_percentile_has_one_spelling(printed: float, stat: str) -> None:
    assert percentile_stat(printed) == stat


def test_a_percentile_past_100_is_no_percentile() -> None:
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile_stat(150)


# --- the table vocabulary of PR tables (md_tables / pr_tables) ---------------------------


@pytest.mark.parametrize(
    ("header", "unit"),
    [
        ("t/s", "t/s"),  # llama-bench: a rate, never seconds
        ("tok/s", "tok/s"),
        ("samples/s", "samples/s"),
        ("img/s", ""),  # a rate perfboard does not know: no unit, not "s"
        ("latency_ms", "ms"),
        ("time/us", "us"),
        ("torch(ns)", "ns"),
        ("Paddle Perf(ms)", "ms"),
        ("优化前耗时(ms)", "ms"),
        ("size", ""),
    ],
)
def test_header_units(header: str, unit: str) -> None:
    assert header_unit(header) == unit


@pytest.mark.parametrize(
    ("cell", "number"),
    [
        ("**0.153533**", (0.153533, "")),
        ("24,091,916.00", (24091916.0, "")),
        ("0.276627ms", (0.276627, "ms")),
        (" 0.012141 ms", (0.012141, "ms")),
        ("21.96 ± 0.05", (21.96, "")),
        ("92.2 ± 0.5 ms", (92.2, "ms")),  # the unit written once, after the spread
        ("1.5ms ± 0.1", (1.5, "ms")),
        ("faster than 96.58%", None),
    ],
)
def test_cell_numbers(cell: str, number: tuple[float, str] | None) -> None:
    assert cell_number(cell) == number


def test_plus_minus_split() -> None:
    assert split_plus_minus("21.96 ± 0.05") == ("21.96", "0.05")
    assert split_plus_minus("1.5ms +/- 0.1") == ("1.5ms", "0.1")
    assert split_plus_minus("**3**") == ("3", None)


@pytest.mark.parametrize(
    ("cell", "figure"),
    [
        ("2.2x", (2.2, None)),
        ("**1.67x**", (1.67, None)),
        ("1.030x", (1.03, None)),
        ("faster than 96.58%", (None, 96.58)),
        ("slower than 3%", (None, -3.0)),
        ("-2.89%", (None, -2.89)),
        ("慢58.44%", (None, -58.44)),
        ("差于 10.4%", (None, -10.4)),  # worse than
        ("worse than 5%", (None, -5.0)),
        ("1.974362885", (1.974362885, None)),
        ("n/a", None),
    ],
)
def test_derived_figures(cell: str, figure: tuple[float | None, float | None] | None) -> None:
    assert derived_figure(cell) == figure


def test_a_slower_factor_is_a_speedup_below_one() -> None:
    assert derived_figure("慢49.0x") == (pytest.approx(1 / 49), None)


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("性能数据如下，单位: us", "us"),
        ("单位为毫秒", "ms"),
        ("all times are in ms", "ms"),
        ("time in us", "us"),
        ("**Forward (us)**", "us"),
        ("the kernel runs 3 times", ""),
        ("", ""),
    ],
)
def test_units_the_text_states(text: str, unit: str) -> None:
    assert unit_in_text(text) == unit


def test_variant_labels_and_their_side() -> None:
    for label in ("develop", "this PR", "优化后", "paddle old", "torch(ns)", "FP16", "4 threads"):
        assert variant_label(label), label
    for label in ("input shape", "axes", "repeat_times", "Case No."):
        assert not variant_label(label), label
    ranks = {v: variant_rank(v) for v in ("before", "pytorch", "Paddle", "after", "w/o opt")}
    assert ranks == {"before": 0, "pytorch": 1, "Paddle": 2, "after": 3, "w/o opt": 0}


@pytest.mark.parametrize(
    ("label", "framework"),
    [
        ("tf2.3", "tensorflow"),
        ("tf 2.4", "tensorflow"),
        ("TF2", "tensorflow"),
        ("paddle2.1", "paddle"),
        ("paddle develop", "paddle"),
        ("torch 1.10", "pytorch"),
        ("torch1.10", "pytorch"),
        ("pytorch-1.8", "pytorch"),
        ("tensorrt", "tensorrt"),
        ("TF32", None),  # a precision
        ("tflite", None),
        ("paddle_old", "paddle"),
        ("paddlex", None),
    ],
)
def test_frameworks_with_their_versions(label: str, framework: str | None) -> None:
    assert framework_in(label) == framework
    assert variant_label(label) == (framework is not None or label == "TF32")


def test_a_hyphenated_dimension() -> None:
    assert dimension_key("batch-size") == "batch_size"
    assert dimension_key("seq-len") == "seq_len"
