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
