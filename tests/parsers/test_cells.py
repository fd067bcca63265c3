"""Shared cell vocabulary: one spelling of a percentile for every tool's parser."""

from __future__ import annotations

import pytest

from ingest.parsers.cells import percentile_stat


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
