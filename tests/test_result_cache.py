"""perfboard.result_cache: the dashboard's query results, bounded in bytes."""

from __future__ import annotations

import threading
import time

import pandas as pd

from perfboard.result_cache import ResultCache, nbytes


def frame(rows: int, text: str = "x") -> pd.DataFrame:
    return pd.DataFrame({"value": range(rows), "label": [text * 10] * rows})


def test_a_result_is_read_once_per_version_and_handed_out_as_a_copy() -> None:
    cache = ResultCache(max_bytes=10 * 2**20)
    reads: list[int] = []

    def read(version: int) -> pd.DataFrame:
        reads.append(version)
        return frame(3).assign(version=version)

    first = cache.get("q", 1, lambda: read(1))
    first.loc[0, "value"] = -1  # a page changes what it is handed
    again = cache.get("q", 1, lambda: read(1))
    assert reads == [1] and again.value.tolist() == [0, 1, 2]
    newer = cache.get("q", 2, lambda: read(2))  # an ingest committed: read again
    assert reads == [1, 2] and set(newer.version) == {2}
    stale = cache.stale("q")
    assert stale is not None and set(stale.version) == {2}
    assert cache.stale("never asked") is None


def test_the_cache_holds_at_most_its_bytes_dropping_the_least_recently_used() -> None:
    one = nbytes(frame(1000))
    assert 20_000 < one < 200_000  # the strings counted, not only their pointers
    cache = ResultCache(max_bytes=3 * one + 100)
    for key in "abc":
        cache.get(key, 1, lambda: frame(1000))
    cache.get("a", 1, lambda: frame(1000))  # a is used again: b is now the oldest
    cache.get("d", 1, lambda: frame(1000))
    assert len(cache) == 3 and cache.size <= cache.max_bytes
    assert cache.stale("b") is None and cache.stale("a") is not None
    # A result larger than the whole cache is handed out, not kept.
    big = cache.get("big", 1, lambda: frame(5000))
    assert len(big) == 5000 and cache.stale("big") is None and cache.size <= cache.max_bytes


def test_sessions_that_miss_the_same_query_at_once_read_it_once() -> None:
    cache = ResultCache(max_bytes=2**20)
    reads = []

    def slow_read() -> pd.DataFrame:
        reads.append(1)
        time.sleep(0.3)
        return frame(10)

    results: list[pd.DataFrame] = []
    sessions = [
        threading.Thread(target=lambda: results.append(cache.get("q", 7, slow_read)))
        for _ in range(8)
    ]
    for session in sessions:
        session.start()
    for session in sessions:
        session.join()
    assert len(reads) == 1 and len(results) == 8
    assert all(r.equals(results[0]) for r in results)
