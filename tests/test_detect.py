"""Change points, noise and the latest-measurement check (perfboard.detect)."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from perfboard import detect
from perfboard.detect import ChangePoint, change_points, check_latest, examine, noise
from perfboard.detect import _welch_p as welch_p


def noisy(levels: np.ndarray, cv: float, seed: int) -> np.ndarray:
    """Latency-like values: each level times (1 + cv * Gaussian noise)."""
    rng = np.random.default_rng(seed)
    return levels * (1.0 + cv * rng.standard_normal(levels.size))


def steps(n: int, at: dict[int, float], base: float = 20.0) -> np.ndarray:
    """A level of `base` that changes by at[i] (relative) from index i on."""
    level = np.full(n, base)
    for index, change in at.items():
        level[index:] *= 1.0 + change
    return level


@pytest.mark.parametrize("seed", range(5))
def test_clean_step_found_at_its_index(seed: int) -> None:
    values = noisy(steps(200, {120: 0.10}), 0.01, seed)
    found = change_points(values)
    assert len(found) == 1
    cp = found[0]
    assert isinstance(cp, ChangePoint)
    assert abs(cp.index - 120) <= 1
    assert cp.change_pct == pytest.approx(10.0, abs=1.0)
    assert cp.before == pytest.approx(20.0, rel=0.01)
    assert cp.after == pytest.approx(22.0, rel=0.01)
    assert cp.p_value < 1e-6


def test_step_down_reported_as_negative_change() -> None:
    found = change_points(noisy(steps(150, {50: -0.20}), 0.02, 3))
    assert [cp.index for cp in found] == [50]
    assert found[0].change_pct == pytest.approx(-20.0, abs=1.5)


def test_flat_noise_rarely_gives_a_change_point() -> None:
    # confidence 0.99: about 1 % of pure-noise series may get a false change point.
    false = sum(bool(change_points(noisy(np.full(500, 50.0), 0.02, seed))) for seed in range(60))
    assert false <= 2


@pytest.mark.parametrize("n", [60, 1000])
def test_flat_noise_of_any_length(n: int) -> None:
    assert sum(bool(change_points(noisy(np.full(n, 8.0), 0.03, s))) for s in range(20)) <= 1


@pytest.mark.parametrize("where", [0, 1, 57, 120, 198, 199])
@pytest.mark.parametrize("size", [0.3, -0.3, 1.0])
def test_isolated_outlier_is_not_a_change_point(where: int, size: float) -> None:
    values = noisy(np.full(200, 10.0), 0.01, where)
    values[where] *= 1.0 + size
    assert change_points(values) == []


def test_burst_of_three_outliers_is_not_a_change_point() -> None:
    values = noisy(np.full(300, 10.0), 0.01, 11)
    values[140:143] *= 1.5
    assert change_points(values) == []


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("n", "total"), [(200, 0.10), (1000, 0.10), (1000, -0.10)])
def test_linear_drift_is_not_a_step(seed: int, n: int, total: float) -> None:
    values = noisy(20.0 * np.linspace(1.0, 1.0 + total, n), 0.01, seed)
    assert change_points(values) == []


def test_drift_between_flats_is_not_a_step() -> None:
    # Flat, a 6 % rise over 300 points, flat again: the level moved, but gradually.
    t = np.arange(1200)
    level = 20.0 * (1.0 + 0.06 * np.clip((t - 400) / 300, 0.0, 1.0))
    assert change_points(noisy(level, 0.01, 4)) == []


def test_step_inside_a_drift_is_still_found() -> None:
    t = np.arange(800)
    level = 20.0 * np.linspace(1.0, 1.05, 800) * np.where(t >= 400, 1.10, 1.0)
    found = change_points(noisy(level, 0.01, 5))
    assert len(found) == 1
    assert abs(found[0].index - 400) <= 1


@pytest.mark.parametrize("seed", range(3))
def test_two_steps_both_found(seed: int) -> None:
    values = noisy(steps(400, {100: 0.08, 250: -0.12}), 0.015, seed)
    found = change_points(values)
    assert len(found) == 2
    assert abs(found[0].index - 100) <= 1
    assert abs(found[1].index - 250) <= 1
    assert found[0].change_pct > 0 > found[1].change_pct


def test_ramp_over_most_of_a_short_series_is_not_a_step() -> None:
    # 60 nights, 8 % slower over nights 10-50 under 3 % noise: steep enough to move the
    # mean between two windows of 20 points, but no jump beyond the trend anywhere.
    t = np.arange(60)
    level = 20.0 * (1.0 + 0.08 * np.clip((t - 10) / 40, 0.0, 1.0))
    quiet = sum(change_points(noisy(level, 0.03, seed)) == [] for seed in range(40))
    assert quiet >= 26  # 8 of 40 before the test beyond a trend


def test_wandering_noise_is_not_a_staircase() -> None:
    # AR(1) noise (phi 0.5: each point half its predecessor's deviation plus 1 % noise),
    # no step: the long-run sigma of the residuals judges the splits (step 1).
    def wandering(seed: int) -> np.ndarray:
        shocks = np.random.default_rng(seed).standard_normal(500)
        y = np.zeros(500)
        for i in range(1, 500):
            y[i] = 0.5 * y[i - 1] + shocks[i]
        return 20.0 * np.exp(0.01 * y)

    found = sum(len(change_points(wandering(seed), min_change_pct=1)) for seed in range(20))
    assert found <= 2  # 144 with sigma from the differences alone
    stepped = wandering(3) * np.where(np.arange(500) >= 250, 1.1, 1.0)
    assert [c.index for c in change_points(stepped, min_change_pct=1)] == [250]


def test_a_growth_curve_is_a_drift_not_steps() -> None:
    # 50 * (1 + t / n)^2 under 0.2 % noise: a curve no single ramp follows.
    t = np.arange(200)
    steps, drifts = 0, 0
    for seed in range(20):
        noise = 1.0 + 0.002 * np.random.default_rng(seed).standard_normal(200)
        found = examine(50.0 * (1.0 + t / 200) ** 2 * noise, min_change_pct=1)
        steps += len(found.change_points)
        drifts += bool(found.drifts)
    assert steps <= 8  # 37 without the curve in the shape check
    assert drifts == 20


def test_jump_beyond_trend_is_between_two_least_squares_lines() -> None:
    rng = np.random.default_rng(21)
    level = 20.0 * np.linspace(1.0, 1.1, 500) * np.where(np.arange(500) >= 250, 1.05, 1.0)
    fit = detect._Series.of(level * (1.0 + 0.02 * rng.standard_normal(500)))
    assert fit is not None
    for s, t, e in [(0, 250, 500), (150, 250, 350), (200, 230, 260), (0, 40, 300)]:
        w = min(t - s, e - t)  # the same width on both sides
        ends, variance = [], 0.0
        for lo, hi in ((t - w, t), (t, t + w)):
            design = np.column_stack((np.ones(hi - lo), np.arange(lo, hi) - (t - 0.5)))
            inverse = np.linalg.inv(design.T @ design)
            ends.append((inverse @ design.T @ fit.y[lo:hi])[0])  # the line at t - 0.5
            variance += inverse[0, 0]
        z = abs(ends[1] - ends[0]) / (fit.sigma * math.sqrt(variance))
        assert detect._jump_beyond_trend(fit, s, t, e)[0] == pytest.approx(z, rel=1e-9)
    # The 5 % step at 250 stands out of the trend; nowhere else is there a jump.
    assert detect._jump_beyond_trend(fit, 0, 250, 500)[1] == pytest.approx(math.log(1.05), abs=0.01)
    assert detect._jump_beyond_trend(fit, 0, 400, 500)[0] < 3.0


def test_a_bend_is_no_jump() -> None:
    # A leak starts at 200: 10 % over the next 200 points, no noise. Each side's own line
    # follows it (one line shared by both sides, fitted over 100 points before and 200
    # after, left a jump of -1.7 % there).
    t = np.arange(400, dtype=np.float64)
    fit = detect._Series.of(np.exp(0.1 * np.maximum(t - 200.0, 0.0) / 200.0))
    assert fit is not None
    assert abs(detect._jump_beyond_trend(fit, 100, 200, 400)[1]) < 3e-4  # half a point's rise


def test_curve_gain_is_the_least_squares_reduction() -> None:
    rng = np.random.default_rng(4)
    fit = detect._Series.of(
        np.exp(0.3 * np.linspace(0, 1, 3000) ** 2 + 0.01 * rng.standard_normal(3000))
    )
    assert fit is not None
    for edges in ([100, 400], [2000, 2100, 2150, 2600], [2900, 2950, 3000]):
        a, b = edges[0], edges[-1]
        u = (np.arange(a, b) - a) / (b - a)
        levels = np.zeros((b - a, len(edges) - 1))
        for i, (lo, hi) in enumerate(pairwise(edges)):
            levels[lo - a : hi - a, i] = 1.0
        y = fit.y[a:b]
        without = y - levels @ np.linalg.lstsq(levels, y, rcond=None)[0]
        both = np.column_stack((levels, u, u * u))
        with_curve = y - both @ np.linalg.lstsq(both, y, rcond=None)[0]
        expected = without @ without - with_curve @ with_curve
        assert detect._curve_gain(fit, edges) == pytest.approx(expected, rel=1e-6)

    # Fewer than DRIFT_MIN_WIDTH points on a side: no such test.
    assert detect._jump_beyond_trend(fit, 240, 250, 400)[0] == math.inf


def test_noise_is_measured_again_without_the_steps() -> None:
    # Four large steps in 60 points spoil 4 of 59 differences: the first sigma is about
    # 10 % too high; measured again without them it is right on average.
    level = steps(60, {12: -0.20, 24: -0.15, 36: -0.12, 48: -0.15})
    first, final, exact = [], [], 0
    for seed in range(40):
        values = noisy(level, 0.03, seed)
        first.append(detect._Series.of(values).sigma / math.log1p(0.03))
        fit, bounds = detect._segmentation(values, 0.99, 5)
        final.append(fit.sigma / math.log1p(0.03))
        exact += bounds == [0, 12, 24, 36, 48, 60]
    assert np.mean(first) > 1.07
    assert np.mean(final) == pytest.approx(1.0, abs=0.04)
    assert exact >= 34


def test_noise_only_series_keeps_its_first_sigma() -> None:
    values = noisy(np.full(300, 40.0), 0.02, 22)
    fit, bounds = detect._segmentation(values, 0.99, 5)
    assert bounds == [0, 300]
    assert fit.sigma == detect._Series.of(values).sigma


def test_small_step_is_placed_within_a_point() -> None:
    # A 5 % step under 3 % noise (1.7 sigma) in 1,000 points, over 40 noise draws.
    level = steps(1000, {400: 0.05})
    placed = [[c.index for c in change_points(noisy(level, 0.03, seed))] for seed in range(40)]
    assert sum(len(p) == 1 for p in placed) >= 38
    assert sum(len(p) == 1 and abs(p[0] - 400) <= 1 for p in placed) >= 32
    assert sum(len(p) == 1 and abs(p[0] - 400) <= 3 for p in placed) >= 38


def test_two_close_steps_the_same_way_are_not_taken_for_a_drift() -> None:
    found = change_points(noisy(steps(300, {140: 0.10, 155: 0.10}), 0.01, 6))
    assert [cp.index for cp in found] == [140, 155]


def test_short_segment_between_steps_is_found() -> None:
    # A 10-point regression in 3,000 points, undone by the next PR.
    values = noisy(steps(3000, {1500: 0.15, 1510: -0.15 / 1.15}), 0.01, 8)
    assert [cp.index for cp in change_points(values)] == [1500, 1510]


@pytest.mark.parametrize("seed", range(5))
def test_ernie_phase_two_milestones(seed: int) -> None:
    # PaddlePaddle/benchmark#165, ERNIE GPU phase 2: 10 ms, 9.5 ms after PR 22486, then
    # 8.4 and 7.8 ms; about 30 nightly runs at each level with 1 % noise.
    levels = np.repeat([10.0, 9.5, 8.4, 7.8], 30)
    found = change_points(noisy(levels, 0.01, seed))
    assert len(found) == 3
    for cp, index, pct in zip(found, (30, 60, 90), (-5.0, -11.58, -7.14), strict=True):
        assert abs(cp.index - index) <= 1
        assert cp.change_pct == pytest.approx(pct, abs=1.0)
        assert cp.p_value < 1e-6


def test_scale_does_not_matter() -> None:
    values = noisy(steps(300, {90: 0.07, 200: -0.05}), 0.01, 9)
    assert [c.index for c in change_points(values)] == [
        c.index for c in change_points(values * 1000.0)
    ]


def test_short_constant_and_non_positive_series() -> None:
    assert change_points(np.array([5.0, 5.1, 4.9])) == []
    assert change_points(np.full(100, 7.0)) == []
    # Coarse timer: whole milliseconds, mostly repeated values, one real step.
    quantised = np.round(noisy(steps(120, {60: 0.25}, base=8.0), 0.03, 2))
    found = change_points(quantised)
    assert len(found) == 1
    assert abs(found[0].index - 60) <= 1
    # A value <= 0 (a counter, not a latency): used as is, no log.
    shifted = noisy(steps(120, {70: 0.5}, base=2.0), 0.02, 3) - 2.5
    assert [c.index for c in change_points(shifted)] == [70]


def test_min_segment_is_respected() -> None:
    values = noisy(steps(200, {100: 0.2, 106: -0.2 / 1.2}), 0.01, 1)
    assert [c.index for c in change_points(values)] == [100, 106]
    for min_segment in (8, 10, 20):
        bounds = [0, *(c.index for c in change_points(values, min_segment=min_segment)), 200]
        assert min(np.diff(bounds)) >= min_segment
    # Segments longer than half the series: no split at all (the cycle check once failed
    # here, taking out steps that have no place to go).
    assert change_points(values, min_segment=101) == []


def test_noise_of_a_quiet_series() -> None:
    values = noisy(steps(500, {250: 0.3}), 0.02, 12)
    result = noise(values)
    assert result.cv == pytest.approx(0.02, rel=0.15)
    assert result.level == pytest.approx(26.0, rel=0.01)  # the latest segment's level
    assert 0 < result.min_effect_pct < 10.0
    assert result.too_noisy is False


def test_noise_of_a_noisy_series() -> None:
    result = noise(noisy(np.full(500, 100.0), 0.20, 13))
    assert result.cv == pytest.approx(0.20, rel=0.15)
    assert result.min_effect_pct > 10.0
    assert result.too_noisy is True
    assert noise(noisy(np.full(500, 100.0), 0.20, 13), too_noisy_pct=80.0).too_noisy is False


def test_noise_of_too_short_a_series() -> None:
    result = noise(np.array([3.0, 3.1]))
    assert math.isnan(result.cv)
    assert result.too_noisy is True


def test_check_latest_flags_a_jump_not_a_wiggle() -> None:
    history = noisy(np.full(100, 50.0), 0.01, 14)
    jump = check_latest(history, 57.5)
    assert jump.outlier is True
    assert jump.change_pct == pytest.approx(15.0, abs=0.5)
    assert jump.z > 10
    wiggle = check_latest(history, 50.25)
    assert wiggle.outlier is False
    assert abs(wiggle.z) < 2
    assert check_latest(history, 42.5).outlier is True  # faster counts too


def test_check_latest_compares_with_the_last_level() -> None:
    history = noisy(steps(100, {60: -0.2}, base=50.0), 0.01, 15)
    verdict = check_latest(history, 40.2)
    assert verdict.level == pytest.approx(40.0, rel=0.01)
    assert verdict.outlier is False
    assert check_latest(history, 50.0).outlier is True  # back to the old level: a change


def test_check_latest_without_history() -> None:
    verdict = check_latest(np.array([10.0]), 11.0)
    assert verdict.outlier is False
    assert math.isnan(verdict.z)


def test_welch_p_matches_reference_values() -> None:
    # References from scipy.stats.ttest_ind(b, a, equal_var=False).
    a = np.array([1.0, 2.1, 2.9, 4.2, 5.0])
    b = np.array([3.1, 4.4, 5.2, 6.8, 7.1, 8.0])
    assert welch_p(a, b) == pytest.approx(0.027919688499119362, rel=1e-9)
    rng = np.random.default_rng(7)
    a, b = rng.normal(0, 1, 12), rng.normal(0.8, 2, 30)
    assert welch_p(a, b) == pytest.approx(0.8570661488855322, rel=1e-9)


def test_examine_gives_the_three_answers_of_one_segmentation() -> None:
    rng = np.random.default_rng(11)
    levels = np.r_[np.full(40, 10.0), np.full(40, 9.5), np.full(40, 8.4)]
    values = levels * (1 + 0.01 * rng.standard_normal(levels.size))
    values[-1] = 8.4 * 1.15  # the newest nightly run is 15 % slower
    seen = detect.examine(values)
    assert seen.change_points == detect.change_points(values)
    assert seen.noise == detect.noise(values)
    assert [round(cp.change_pct) for cp in seen.change_points] == [-5, -12]
    assert seen.latest.outlier and round(seen.latest.change_pct) == 15
    alone = detect.check_latest(values[:-1], values[-1])
    assert alone.outlier and abs(alone.level - seen.latest.level) < 0.05
    values[-1] = 8.4 * 1.005
    assert not detect.examine(values).latest.outlier


# -- the shapes of real histories (issue 14) ----------------------------------------------


def test_repeated_values_do_not_collapse_the_noise() -> None:
    """A history of whole milliseconds: most differences are exactly 0, and the MAD of the
    differences with them. The noise stays what the values say, and no step is found."""
    rng = np.random.default_rng(21)
    ties = np.round(rng.normal(100.0, 0.6, 580))
    assert np.mean(np.diff(ties) == 0) > 0.4  # as in the annotated history: 246 of 580
    assert change_points(ties) == []
    flips = rng.choice([10.0, 11.0], 5000)  # integer ms that flip between 10 and 11
    assert change_points(flips) == []
    assert noise(flips).cv == pytest.approx(0.5 / 10.5, rel=0.2)  # never 0 while it varies


def test_two_modes_are_noise_and_a_step_across_them_is_found() -> None:
    rng = np.random.default_rng(22)
    n = 20_000
    modes = np.where(rng.random(n) < 0.5, 10.0, 10.5) * (1 + 0.002 * rng.standard_normal(n))
    assert change_points(modes, min_change_pct=1.0) == []
    stepped = modes.copy()
    stepped[n // 2 :] *= 1.10
    [found] = change_points(stepped, min_change_pct=1.0)
    assert abs(found.index - n // 2) <= 2 and found.change_pct == pytest.approx(10.0, abs=2.5)


def test_a_noiseless_ramp_is_no_staircase_under_a_minimum_effect() -> None:
    """A slow leak: 10 -> 15 ms over 11,000 points, without noise. Judged no quieter than a
    1 % step needs, it holds no step (before: 135 steps over 50,000 points, in 53 s)."""
    ramp = 10.0 + 5.0 * np.arange(11_000) / 11_000
    assert change_points(ramp, min_change_pct=1.0) == []


def test_a_tiny_step_under_the_minimum_effect_is_no_change() -> None:
    rng = np.random.default_rng(23)
    quiet = 10.0 * (1 + 0.0001 * rng.standard_normal(4000))
    quiet[2000:] *= 1.0005  # 0.05 %: significant for this noise (p ~ 1e-167), unimportant
    assert [c.index for c in change_points(quiet)] == [2000]  # no minimum effect: found
    assert change_points(quiet, min_change_pct=1.0) == []
    assert detect.sigma_floor(4000, 1.0) > 0 == detect.sigma_floor(4000, 0.0)


def test_a_daily_cycle_is_no_step_and_a_step_across_it_is_found() -> None:
    rng = np.random.default_rng(24)
    n = 20_000
    t = np.arange(n)
    cycle = 10 * (1 + 0.05 * np.sin(2 * np.pi * t / 288)) * (1 + 0.005 * rng.standard_normal(n))
    assert change_points(cycle, min_change_pct=1.0) == []  # before: hundreds of "steps"
    stepped = cycle.copy()
    stepped[n // 2 :] *= 1.2
    found = [c for c in change_points(stepped, min_change_pct=1.0) if abs(c.change_pct) >= 1]
    assert [c.index for c in found] == [n // 2]


@pytest.mark.parametrize("shape", ["cycle", "steps"])
def test_a_long_series_examined_with_its_cycle_check_beside_is_examined_the_same(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From _CYCLE_BESIDE_POINTS on, the cycle check runs on a thread beside a first fit of
    # the series as it is: the same answer, whether a cycle is found (the fit is made
    # again) or not (the first fit stands).
    rng = np.random.default_rng(26)
    n = 20_000
    t = np.arange(n)
    if shape == "cycle":
        values = (
            10 * (1 + 0.05 * np.sin(2 * np.pi * t / 288)) * (1 + 0.005 * rng.standard_normal(n))
        )
        values[n // 2 :] *= 1.2
    else:
        values = noisy(steps(n, {7_000: 0.05, 13_000: -0.03}), 0.02, 26)
    alone = examine(values, min_change_pct=1.0)
    monkeypatch.setattr(detect, "_CYCLE_BESIDE_POINTS", 1_000)
    beside = examine(values, min_change_pct=1.0)
    assert beside == alone
    found = [c.index for c in alone.change_points if abs(c.change_pct) >= 1]
    truth = [n // 2] if shape == "cycle" else [7_000, 13_000]
    assert len(found) == len(truth)
    assert all(abs(got - want) <= 1 for got, want in zip(found, truth, strict=True))


def test_a_drift_is_one_finding_and_noise_holds_none() -> None:
    rng = np.random.default_rng(25)
    level = np.concatenate([np.ones(1000), np.linspace(1.0, 1.2, 500), np.full(1000, 1.2)])
    seen = detect.examine(
        10 * level * (1 + 0.01 * rng.standard_normal(level.size)), 0.99, min_change_pct=1.0
    )
    assert seen.change_points == []
    [drift] = seen.drifts
    assert abs(drift.start - 1000) <= 30 and abs(drift.end - 1500) <= 30
    assert drift.change_pct == pytest.approx(20.0, abs=1.0) and drift.p_value < 1e-6
    for seed in range(20):  # pure noise: no drift
        noise_only = 10 * (1 + 0.02 * np.random.default_rng(seed).standard_normal(2000))
        assert detect.examine(noise_only, min_change_pct=1.0).drifts == []


def test_a_drift_across_zero_is_found_not_a_crash() -> None:
    # A series of signed values (a margin in ms, a temperature) that drifts from -1 to +1:
    # its levels have no ratio's logarithm (`perfboard detect` stopped on one).
    t = np.arange(300)
    values = np.clip((t - 100) / 100, 0.0, 1.0) * 2.0 - 1.0
    values = values + 0.01 * np.random.default_rng(5).standard_normal(300)
    drift = examine(values, min_change_pct=1).drifts[0]
    assert abs(drift.start - 100) <= 5 and drift.before == pytest.approx(-1.0, abs=0.05)


def test_the_median_is_numpys_to_the_bit() -> None:
    """detect._median stands in for np.median (which imports numpy.ma on its first call):
    the same float for odd and even counts, ties, infinities, NaN and the sign of zero."""
    rng = np.random.default_rng(15)
    specials = [np.nan, np.inf, -np.inf, 1e308, -1e308, -0.0, 0.0, 5e-324]
    for trial in range(20_000):
        n = int(rng.integers(1, 40)) if trial % 10 else int(rng.integers(1, 1_000))
        x = [
            rng.normal(10, 3, n),
            rng.integers(-5, 5, n).astype(float),
            rng.choice(specials, n),
            np.where(rng.random(n) < 0.1, rng.choice(specials, n), rng.normal(0, 1, n)),
        ][trial % 4]
        for values in (x, x[::2]):
            with np.errstate(over="ignore", invalid="ignore"):  # 1e308 + 1e308, inf - inf
                expected, got = float(np.median(values)), detect._median(values)
            assert (math.isnan(expected) and math.isnan(got)) or (
                got == expected and math.copysign(1, got) == math.copysign(1, expected)
            ), (values, expected, got)


def test_examining_a_series_leaves_numpy_ma_unimported() -> None:
    """What a small ingest's change detection imports is its start-up time (issue 15):
    numpy.ma alone was 9 ms of it."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from perfboard import detect\n"
        "detect.examine(np.array([10.0, 10.2, 9.9, 10.1, 12.0, 12.1, 11.9, 12.2, 12.0, 12.1]))\n"
        "assert 'numpy.ma' not in sys.modules, 'numpy.ma imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
