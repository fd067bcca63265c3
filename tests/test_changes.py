"""Changes said with their direction."""

from __future__ import annotations

import math

from perfboard.changes import describe_change


def test_lower_is_better_metrics() -> None:
    assert describe_change(9.5, 10.0, "lower") == "-5.0% better"  # the phase 2 step
    assert describe_change(10.5, 10.0, "lower") == "+5.0% worse"


def test_higher_is_better_metrics() -> None:
    assert describe_change(6.849, 6.576, "higher") == "+4.2% better"  # seq2seq FPS
    assert describe_change(4.96, 6.576, "higher") == "-24.6% worse"


def test_nothing_to_compare() -> None:
    assert describe_change(9.5, None, "lower") == ""
    assert describe_change(9.5, math.nan, "lower") == ""
    assert describe_change(9.5, 0.0, "lower") == ""
    assert describe_change(10.0, 10.0, "lower") == "±0%"


def test_a_change_within_the_series_noise_is_neither_better_nor_worse():
    # The demo's simulated ERNIE fp32 batch 1 line: 9.379 -> 9.44 ms, noise (cv) 0.72 %.
    assert describe_change(9.44, 9.379, "lower", 0.007185) == "+0.7% within noise"
    assert describe_change(9.44, 9.379, "lower", 0.002) == "+0.7% worse"
    assert describe_change(9.44, 9.379, "lower", math.nan) == "+0.7% worse"  # not measured
    assert describe_change(10.5, 10.0, "lower", 0.02) == "+5.0% worse"  # 5 % > 2 x 2 %
