"""A long series examined in windows anchored at its start (perfboard.windows): an ingest
that only appends to it examines its last windows and stores exactly what a whole
`perfboard detect` stores; anything else about the series gives it a whole detection."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from ingest.results import write_records
from perfboard import alerts, db, detect, settings, windows
from tests.conftest import ingest
from tests.test_check import default_settings  # noqa: F401  (autouse: perfboard.toml's defaults)
from tests.test_results import RECORD

START = datetime(2020, 1, 1)
SMALL_WINDOW = 512  # the tests' windows: the same code, at a size a test can afford


def series(n: int, seed: int = 3) -> np.ndarray:
    """A latency history with steps of 5-8 %, most of them a few points from a seam of the
    small windows (seams at 384 + 256 k), a 10 % drift over 120 points, and 1 % noise."""
    rng = np.random.default_rng(seed)
    level = np.full(n, 10.0)
    steps = ((384, 6), (641, -5), (898, 5), (1150, -8), (1410, 6), (1666, -5), (1897, 5))
    for at, pct in (*steps, (2178, -6), (2300, 7)):
        level[at:] *= 1 + pct / 100
    level *= 1 + 0.10 * np.clip((np.arange(n) - 2400) / 120, 0, 1)
    return level * (1 + 0.01 * rng.standard_normal(n))


def document(
    path: Path, values: np.ndarray, first: int = 0, shift: timedelta | None = None
) -> Path:
    """One result record an hour, from hour `first` (or `shift` earlier)."""
    at = START + timedelta(hours=first) - (shift or timedelta(0))
    records = [
        {
            **RECORD,
            "version": hashlib.sha1(f"run {first + i}".encode()).hexdigest(),
            "time": f"{at + timedelta(hours=i):%Y-%m-%dT%H:%M:%SZ}",
            "value": round(float(v), 5),
        }
        for i, v in enumerate(values)
    ]
    write_records(records, path)
    return path


STORED = (
    "SELECT position, end_position, shape, round(change_pct, 9), round(p_value, 12), noisy,"
    " alert_key, before_version, after_version, source_id, line FROM change_points"
    " ORDER BY position",
    "SELECT points, round(level, 9), round(cv, 9), too_noisy, latest_value, latest_outlier,"
    " tail_start, tail_measured_at, tail_source_id, tail_line FROM series_noise",
)


def stored(path: Path) -> list[list[tuple]]:
    conn = db.connect(path)
    try:
        return [conn.execute(query).fetchall() for query in STORED]
    finally:
        conn.close()


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(windows, "WINDOW", SMALL_WINDOW)
    monkeypatch.setattr(windows, "STRIDE", SMALL_WINDOW // 2)


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[int] | None]:
    """The series each detection read whole (an append's tail is read apart)."""
    calls: list[list[int] | None] = []
    real = alerts._whole

    def spy(cursor, ids, project):  # type: ignore[no-untyped-def]
        calls.append(ids)
        return real(cursor, ids, project)

    monkeypatch.setattr(alerts, "_whole", spy)
    return calls


def test_windows_partition_the_series_and_never_move_as_it_grows() -> None:
    for n in (windows.WINDOW, windows.WINDOW + 1, 100_000, 918_350, 3 * windows.WINDOW):
        spans = windows.spans(n)
        assert spans[0].own_start == 0 and spans[-1].own_end == spans[-1].end == n
        for a, b in pairwise(spans):
            assert a.own_end == b.own_start  # each position is reported by one window
            # ... where that window sees at least a quarter window on either side
            assert b.own_start - b.start >= windows.STRIDE // 2
            assert a.end - a.own_end >= windows.STRIDE // 2
        assert windows.STRIDE < spans[-1].end - spans[-1].start <= windows.WINDOW
        # A window that ends before the series does is the same in any longer series.
        full = [s for s in spans if s.end - s.start == windows.WINDOW]
        longer = windows.spans(n + 40_000)
        assert all(
            windows.Span(s.start, s.end, s.own_start, longer[i].own_end) in longer
            for i, s in enumerate(full)
        )
    assert windows.spans(1000) == [windows.Span(0, 1000, 0, 1000)]


def test_appending_examines_the_last_windows_and_stores_what_a_whole_detection_does(
    tmp_path: Path, small_windows: None, whole_reads: list
) -> None:
    """Points appended in six documents, each detected as it comes: after each, what is
    stored is what a whole detection of the series then stores."""
    values, target = series(2600), tmp_path / "store.duckdb"
    cuts = [0, 1400, 1600, 1800, 2000, 2200, 2400, 2600]
    for a, b in pairwise(cuts):
        doc = document(tmp_path / f"points-{a}.jsonl", values[a:b], first=a)
        assert ingest("results", str(doc), "--db", str(target)) == 0
        appended = stored(target)
        conn = db.connect(target)
        alerts.detect_store(conn)
        conn.close()
        assert appended == stored(target), a
    [(series_id,)] = db.connect(target).execute("SELECT series_id FROM series").fetchall()
    # The first document was examined whole, then each append its tail alone (the whole
    # reads after are the whole detections the test compares with).
    assert whole_reads == [[series_id], *[None] * len(cuts[1:])]
    steps, noise = stored(target)
    # The planted steps and the drift are found, each once, where they are.
    assert [shape for _, _, shape, *_ in steps].count("drift") == 1
    step_at = [p for p, _, shape, *_ in steps if shape == "step"]
    planted = [384, 641, 898, 1150, 1410, 1666, 1897, 2178, 2300]
    assert len(step_at) == len(planted)
    assert all(abs(p - q) <= 2 for p, q in zip(step_at, planted, strict=True)), step_at
    assert noise[0][0] == 2600 and noise[0][6] == windows.reread_from(2600)


def test_steps_near_a_seam_are_paired_once() -> None:
    """The two windows of a seam place a step close to it a point apart (each sees other
    neighbours): one step, at the earlier window's place. A step only one window finds
    stays only on that window's side."""
    spans = windows.spans(3 * windows.WINDOW)
    seam = spans[0].own_end

    def seen(*at: int) -> detect.Examined:
        points = [detect.ChangePoint(i, 10.0, 10.6, 6.0, 1e-9) for i in at]
        quiet = detect.Noise(10.0, 0.01, 0.5, False)
        return detect.Examined(points, quiet, detect.Verdict(10.0, 10.0, 0.0, 0.0, False))

    def found(earlier: tuple[int, ...], later: tuple[int, ...]) -> list[int]:
        second = tuple(i - spans[1].start for i in later)
        kept = windows.combine(spans[:3], [seen(*earlier), seen(*second), seen()], 1.0, 5)
        return [f.index for f in kept]

    assert found((seam + 1,), (seam - 1,)) == [seam + 1]
    assert found((seam - 1,), (seam + 1,)) == [seam - 1]
    assert found((seam,), (seam,)) == [seam]
    assert found((seam + 3,), ()) == []  # the later window's side, where it found none
    assert found((), (seam - 3,)) == []
    assert found((seam - 3,), (seam + 4,)) == [seam - 3]  # paired: 7 points < 10
    assert found((seam - 8,), (seam + 8,)) == [seam - 8, seam + 8]  # two steps
    assert found((seam - 40,), (seam + 40,)) == [seam - 40, seam + 40]
    # A change under the minimum effect is no change point, on either side.
    assert windows.combine(spans[:3], [seen(seam - 40), seen(), seen()], 7.0, 5) == []


def test_a_step_on_a_seam_is_reported_once() -> None:
    """A 6 % step at the seam of two windows: both windows see it, one reports it."""
    rng = np.random.default_rng(5)
    n = 3 * windows.WINDOW
    seam = windows.spans(n)[0].own_end
    for at in (seam - 1, seam, seam + 1):
        x = np.where(np.arange(n) < at, 10.0, 10.6) * (1 + 0.01 * rng.standard_normal(n))
        spans = windows.spans(n)
        seen = [detect.examine(x[s.start : s.end], min_change_pct=1.0) for s in spans]
        kept = windows.combine(spans, seen, 1.0, 5)
        assert [(f.index, f.shape) for f in kept] == [(at, "step")]


@pytest.mark.parametrize("change", ["earlier document", "no-detect ingest", "minimum effect"])
def test_anything_but_an_append_gives_the_series_a_whole_detection(
    tmp_path: Path,
    small_windows: None,
    whole_reads: list,
    change: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = series(2600, seed=4)
    target, whole = tmp_path / "target.duckdb", tmp_path / "whole.duckdb"
    first = document(tmp_path / "first.jsonl", values[:2000])
    docs = [first]
    if change == "earlier document":  # measured before the last stored points
        docs.append(document(tmp_path / "late.jsonl", values[2000:], 2000, timedelta(hours=50)))
    else:
        docs.append(document(tmp_path / "more.jsonl", values[2000:2300], first=2000))
        docs.append(document(tmp_path / "last.jsonl", values[2300:], first=2300))
    for target_path in (target, whole):
        assert ingest("results", str(first), "--db", str(target_path)) == 0
    [(series_id,)] = db.connect(target).execute("SELECT series_id FROM series").fetchall()
    if change == "no-detect ingest":
        assert ingest("results", str(docs[1]), "--db", str(target), "--no-detect") == 0
    if change == "minimum effect":
        assert ingest("results", str(docs[1]), "--db", str(target)) == 0
        toml = tmp_path / "perfboard.toml"
        toml.write_text("[detect]\nmin_change_pct = 2.0\n", encoding="utf-8")
        monkeypatch.setenv("PERFBOARD_CONFIG", str(toml))
        settings.current.cache_clear()
    calls = len(whole_reads)
    assert ingest("results", str(docs[-1]), "--db", str(target)) == 0
    assert whole_reads[calls:] == [[series_id]]  # the series was read whole
    for doc in docs[1:]:
        assert ingest("results", str(doc), "--db", str(whole), "--no-detect") == 0
    conn = db.connect(whole)
    alerts.detect_store(conn)
    conn.close()
    assert stored(target) == stored(whole)
