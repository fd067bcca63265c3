"""Claimed effects in PR descriptions (docs/formats.md section 10), from the real ones."""

from __future__ import annotations

import pytest

from ingest.parsers import claims
from perfboard.model import Claim
from tests.conftest import sample_doc, text_doc


def found(doc) -> list[tuple[float | None, float | None, str, float | None, int]]:  # type: ignore[no-untyped-def]
    return [
        (c.before, c.after, c.unit, None if c.percent is None else round(c.percent, 2), c.line)
        for c in claims.parse(doc)
        if isinstance(c, Claim)
    ]


def test_pr_22486_claims_10_to_9_5_ms() -> None:
    doc = sample_doc("paddle-pr-22486_2020-02-07_nhzlx_description.md")
    assert found(doc) == [(10.0, 9.5, "ms", 5.0, 2)]


def test_pr_22494_claims_two_steps() -> None:
    doc = sample_doc("paddle-pr-22494_2020-02-07_nhzlx_description.md")
    assert found(doc) == [(9.5, 8.4, "ms", 11.58, 4), (8.4, 7.8, "ms", 7.14, 15)]


def test_a_relative_gain_counts_only_where_performance_is_meant() -> None:
    text = (
        "This PR improve the end-to-end performance of ERINE on NVIDIA Tesla T4 GPU by 8%.\n"
        "Reduced the number of files by 8%.\n"
        "Latency 1200us -> 1.1ms on T4.\n"
        "Throughput 1.86---->1.90 (no unit: not a claim).\n"
    )
    assert found(text_doc(text)) == [
        (None, None, "%", 8.0, 1),
        (1.2, 1.1, "ms", 8.33, 3),
    ]


@pytest.mark.parametrize(
    "text", ["plain prose without numbers", "went from 10 to 9", "see #22424 -> merged"]
)
def test_no_claim_where_there_is_none(text: str) -> None:
    assert found(text_doc(text)) == []
