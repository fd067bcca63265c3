"""Change points, noise and new-measurement checks for latency series.

Method
------
Values are latency-like positive floats in time order. Steps in latency are relative (a PR
makes a model 5 % faster) and the noise grows with the level, so detection runs on
``log(values)``: a step of p % becomes a shift of log(1 + p/100), and the noise is the
coefficient of variation whatever the level. (A series with a value <= 0 is used as it
is.) On that series:

0. **A periodic pattern is no step** (``_without_cycle``). A daily cycle of a shared machine
   moves the mean of each half-day as far as a step would. When one frequency of at least
   6 cycles holds most of the power of its band and stands 20 times above the power
   around it (steps and drifts spread theirs smoothly, as 1 / k^2, and never do), its
   median profile over the 7 cycles around each point (a season's shape changes over a
   long history), taken against the mean over one period around each point so that a
   step does not leak into it, is divided out first. Its period is read to a fraction of
   an FFT bin: off by 0.2 %, a 170-cycle profile would be smeared flat.
1. **Noise.** sigma is the MAD of the first differences / sqrt(2), scaled to a Gaussian
   sigma; unless values repeat or jump between modes (integer milliseconds, two CPU
   frequencies: most differences are 0 or tiny and the MAD collapses while the values
   still vary), where the root mean square of the differences without their largest 10 %
   is larger by more than a third, and is taken instead. sigma is also never below
   ``sigma_floor``: the noise under which a step of the minimum effect (``min_change_pct``,
   1 % by default in perfboard.toml) with ``min_segment`` points a side just reaches the
   threshold of step 4; so a near-noiseless series (a slow ramp, a constant, a 0.05 %
   step at 0.01 % noise) is not cut into a staircase of tiny significant steps, found at
   O(n^2) cost. Steps, drifts and outliers barely move it, unlike the standard deviation; but
   "barely" is not "not": each step spoils one difference and pushes the median up, so
   four large steps in 60 points inflate sigma by 10-30 %, and an inflated sigma both
   hides small steps and makes a staircase look like a ramp (step 6). So once steps 2-5
   have found change points, sigma is measured again without the differences that
   straddle them, and if it moved by more than 1 %, steps 2-5 run again with it. A
   series where nothing is found keeps its first sigma, so the rate of false alarms on
   pure noise (step 4) does not change. *Noise that wanders* (a machine that warms up and
   cools down, a shared host's load, an economy) moves neighbouring points together, and
   the mean of a segment is then far less certain than sigma says: a split would find
   "steps" all along it. So the residuals around the segment means found are checked
   for dependence (their lag-1 autocorrelation, and the spread of their means over
   blocks of n^(1/3) points, each past 3 standard errors of what independent noise
   gives); where they are dependent, the long-run sigma replaces sigma and steps 2-5 run
   again (at most 3 times: ``_dependent_sigma``, ``_long_run_variance``). On independent
   noise the check does not fire, whatever the steps; on AR(1) noise it cut the change
   points of 40 step-free series of 500 points from 287 to 0 (phi 0.5), 983 to 0 (0.8)
   and 957 to 22 (0.95), and still found every 5 % step in the phi-0.5 noise. A drift
   (step 6) is judged the same way, against the long-run variance of what its ramp
   leaves.
2. **Outliers.** Each point is compared with its rolling median over 9 points: beyond
   6 sigma it is replaced by that median, beyond 3 sigma it is clipped to median +- 3
   sigma. A median follows a step without lag, so steps stay whole, while an outlier, or a
   burst of up to 4 (fewer than ``min_segment``), cannot make a segment.
3. **Candidates: seeded binary segmentation** (Kovacs, Li, Buhlmann, Haubner & Munk 2023,
   Biometrika 110, "Seeded binary segmentation"), the deterministic form of wild binary
   segmentation (Fryzlewicz 2014, Ann. Statist. 42). The CUSUM statistic
   ``sqrt(l r / (l + r)) |mean(left) - mean(right)| / sigma`` (the two-sample z of a
   split) is computed over intervals of lengths n, n/2, n/4, ... overlapping by half, each
   layer in one vectorised pass, O(n log n) in all. Recursively, the interval inside the
   current segment (or the segment itself) with the largest statistic above the threshold
   lambda splits it at its argmax. Short intervals find short segments (a 10-point bump in
   10,000 points) that plain binary segmentation misses; long ones place long segments.
4. **Significance.** lambda is set so that on pure Gaussian noise a false change point
   appears in about ``1 - confidence`` of series of any length: a Student-t quantile at
   ``1 - (1 - confidence) / (2 k n)`` with ``1.5 n`` degrees of freedom (k = 3 effective
   tests per point; the t tail covers the error of sigma in short series), fitted by
   simulating noise of 30..10,000 points (the whole detector then flags 0.1-1 % of
   pure-noise series: 2,000 series at each length). It plays the part of E-divisive's
   permutation test (Matteson & James 2014, JASA 109) at O(1) cost.
5. **Selection.** The candidates are pruned by greedy descent on the penalised fit, the
   residual sum of squares / sigma^2 plus lambda^2 per change point (so a kept point is
   worth a detection: a BIC with the multiplicity-corrected penalty): delete a point, or
   merge two neighbours into the best single split between their outer neighbours (one
   step found twice, a few points apart), best move first. After each move the points are
   moved to the best split between their neighbours, within +-2 min_segment. This is the
   penalised cost that PELT (Killick, Fearnhead & Eckley 2012, JASA 107) minimises
   exactly, searched over the candidates only; and a backward elimination like the merge
   step of Hunter/Otava (Fleming et al. 2023, ICPE).
6. **Drifts are not steps.** A step is abrupt; a drift spreads the same change over many
   points. Two checks, most ramp-like point first, neighbours re-examined after each
   removal:
   - *local*: the step must be significant (two-sided normal quantile at ``confidence``)
     using only ``DRIFT_MIN_WIDTH`` points on each side, and its jump beyond the local
     lines (below) at least the minimum effect: a curve's bends are no steps. A slow
     drift moves the means of long segments but shows no jump at any one place. A
     steep one does move the mean between two windows of 20 points, so where both sides
     have at least ``DRIFT_MIN_WIDTH`` points the jump must also be significant between
     two lines: one least-squares line on each side, over the same width (up to 5
     ``DRIFT_MIN_WIDTH`` points, within its neighbours), and the z of the gap between
     their ends at the point (the regression-discontinuity estimate). Each side's own
     slope lets a bend (a leak that starts) show no jump, and equal widths cancel a
     curve's second-order term from the gap; a real step keeps its size. (Where a side
     is shorter a line's slope would eat the step, so only the first test applies.) In
     short series this removes most points put on a ramp that spans most of the series;
   - *shape*: between its neighbours, a point, or a run of up to 6 consecutive points in
     one direction (the staircase a drift leaves in a piecewise-constant fit), is compared
     with one ramp (flat, linear over at least ``DRIFT_MIN_WIDTH`` points, flat; or a
     line), fitted over a grid of ends from prefix sums, and with one quadratic curve
     (a growth that speeds up or levels off, which no single ramp follows once the noise
     is small). Penalised as above, with a ramp or a curve charged 1.5 step penalties
     (a ramp has two ends to place, a curve two shape terms); the points are a drift if
     the ramp or the curve is cheaper than the steps both alone and added to it (a step
     inside a drift stays).
   Then each segment between the steps kept is asked whether it holds a drift
   (``_drifts``): the best single ramp (flat, linear, flat) against a flat level, kept
   when it gains more than the ramp's penalty and its size reaches the minimum effect.
   A gradual change is then one finding (``Drift``: start, end, levels, size), never a
   staircase; pure noise gave none in 1,200 series.
7. **Placement.** The fit puts each point at the best split between its neighbours (the
   maximum-likelihood position). The points reported are instead the medians of each
   position's posterior between its final neighbours (flat prior over positions;
   likelihood exp(z^2 / 2) times the Laplace factor of the two levels,
   ``sqrt((e - s) / (l r))``), over +-2 ``min_segment`` around the fitted position. The
   median is the estimate with the least expected absolute error: for a small step under
   noise the likelihood is spread over a few ragged points, and its single highest point
   is a noisier estimate than the middle of that mass. The window keeps far, unrelated
   mass (a drift, another step seen through a wrong neighbour) out of the median.

Each reported change point carries the medians of the segments on either side (in the
input's units) and the two-sided p-value of Welch's t-test between the two segments (log
values cleaned as in step 2). That p-value is the plain two-sample one, with no allowance
for the search over positions; the threshold of step 4 makes that allowance and is much
stricter, so reported points have small p (at most 1.2e-3 over the 376 points reported on
the benchmark's default seed).

Code: ``_segmentation`` runs steps 1-7 in order, each over small units in its own section
below: the noise (``_noise_sigma``, ``_sigma_without``; ``_relative_sigma`` for ``noise``),
the cleaned series with its prefix sums and O(1) statistics of a split (``_Series``), the
significance rules (``_Rules``: lambda, the penalty, the local z and ``min_segment``), the
search (``_candidates``: ``_seeded_bs``, then ``_prune``), the drift checks
(``_drop_drifts``: ``_drop_gradual``, then ``_ramp_advantage``) and the placement
(``_place``). Step 0 (``_without_cycle``) comes first; from 65,536 points it runs on a
thread beside the first fit (steps 1-2), which stands when no cycle is found. A stored
series longer than that is examined in windows of 65,536 points anchored at its start
(perfboard.windows), so that an ingest appending to it examines its last windows only.

Cost: O(n log n) vectorised numpy plus small steps per candidate: the local check scores
again only the two neighbours of a removed point, and the selection keeps each merge's
cost by its four bounds, so hundreds of candidates (a curve's, a random walk's) cost
O(k) steps each, not O(k^2). About 1.8 ms for 60 points, 2 ms for 1,000 and 5.5 ms for
10,000 on this 2-core machine (apache-otava 0.8 with its defaults: about 1.4, 13 and
125 ms); at 100,000 points 0.05-0.47 s whatever the shape of scripts/bench_detect_shapes.py
(a random walk of 0.1 % a point, which is all change, 0.7 s). ``perfboard detect`` over a
whole store examines its series on every core (perfboard.alerts): the 10 M synthetic store
in 6.4-7.8 s on this machine.
scripts/bench_detect.py measures this and scores both on generated series, and
scripts/bench_detect_shapes.py scores the command on the shapes of real histories (ties,
two modes, outliers, a daily cycle, ramps, curves) beside otava and ruptures; its
``--seeds`` option gives the mean and minimum F1 over many seeds, and the changes of
steps 1, 6 and 7 were chosen on seeds 11-30 only (mean F1 0.951 -> 0.956 there), kept
apart from the seeds that the reported figures use.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from statistics import NormalDist

import numpy as np

from perfboard.stats import welch

__all__ = [
    "DRIFT_MIN_WIDTH",
    "ChangePoint",
    "Drift",
    "Noise",
    "Verdict",
    "change_points",
    "check_latest",
    "noise",
    "sigma_floor",
    "threshold",
]

# A change spread over at least this many points is a drift, not a step; and a step must
# show within this many points on each side.
DRIFT_MIN_WIDTH = 20

_MAD_TO_SIGMA = 1.482602218505602  # 1 / Phi^-1(3/4): MAD of a Gaussian -> its sigma
_MEDIAN_HALF = 4  # rolling median over 9 points: bursts of up to 4 are outliers
_MEDIAN_ROWS = 1 << 14  # windows of the rolling median partitioned at a time (_clean)
_CLIP_SIGMAS = 3.0  # clipped to the rolling median +- this
_REPLACE_SIGMAS = 6.0  # replaced by the rolling median (no Gaussian point is this far)
_SEED_DECAY = 0.5  # seeded interval lengths n, n/2, n/4, ... overlapping by half
_THRESHOLD_TESTS = 3.0  # effective independent splits per point (fitted, see step 4)
_THRESHOLD_DF = 1.5  # degrees of freedom per point of the t quantile (fitted)
_RAMP_COST = 1.5  # a ramp's penalty, in step penalties
_MAX_RUN = 6  # longest staircase tested as one drift
_TREND_REACH = 5  # the jump beyond a trend uses up to 5 DRIFT_MIN_WIDTH points a side
_PLACE_REACH = 2  # a point is placed within +-2 min_segment of where the fit put it
_SIGMA_TOLERANCE = 0.01  # re-fit when sigma without the steps moves by more than 1 %
_TRIM = 0.10  # the largest |differences| left out of their root mean square
_BLOCK_EXPONENT = 1.0 / 3.0  # blocks of n^(1/3) points measure the noise of a segment's mean
_DEPENDENCE_Z = 3.0  # block means this far above white noise's spread: the noise is dependent
_DEPENDENCE_ROUNDS = 3  # sigma widened and the candidates found again at most this often
_MAX_AUTOCORRELATION = 0.99  # (1 + rho) / (1 - rho) is at most 199
_CURVE_COST = 1.5  # a quadratic curve's penalty, in step penalties (as a ramp's)
# That root mean square of Gaussian differences, in their sigmas: E[Z^2 | |Z| < z] for
# the z that leaves out _TRIM of them.
_Z_TRIM = NormalDist().inv_cdf(1.0 - _TRIM / 2.0)
_TRIMMED_RMS = math.sqrt(
    1.0
    - 2.0 * _Z_TRIM * math.exp(-_Z_TRIM * _Z_TRIM / 2.0) / math.sqrt(2.0 * math.pi) / (1.0 - _TRIM)
)
_SHAPE_RATIO = 1.3  # the two noise estimates of Gaussian noise agree within this
_CYCLE_MIN_POINTS = 200  # shorter series hold too few periods to tell a cycle
_CYCLE_MIN_CYCLES = 6  # a cycle repeats at least this often in the series
_CYCLE_SHARE = 0.3  # a cycle holds at least this share of the variance
_CYCLE_PEAK = 20.0  # and this far above the power around it (noise: at most ~10x)
_CYCLE_WINDOW = 7  # the profile at a point: the median of the 7 cycles around it
_CYCLE_BESIDE_POINTS = 1 << 16  # from here the cycle check runs on a thread (_segmentation)
_NORMAL = NormalDist()


def _median(values: np.ndarray) -> float:
    """np.median of a 1-D array, the same float (NaN when any value is NaN), without
    numpy.ma: np.median imports it on its first call, to check for a masked array, and
    that import (9 ms, with the inspect and tokenize work it does) was a third of the
    change detection of a small ingest (issue 15's small-document goal)."""
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        return math.nan
    k = n // 2
    # As np.median partitions: the middle one or two, and the last (a NaN sorts last).
    part = np.partition(x, (k - 1, k, n - 1) if n % 2 == 0 else (k, n - 1))
    if math.isnan(part[-1]):
        return math.nan
    # np.mean of the one or two: a sum from 0.0, so -0.0 comes out as 0.0.
    return float(part[k] + 0.0) if n % 2 else float((part[k - 1] + part[k] + 0.0) / 2.0)


def _unique_sorted(values: np.ndarray) -> np.ndarray:
    """np.unique of values already in order (a rounded linspace, and such a grid shifted
    and clipped): each run of equal values once. np.unique imports numpy.ma (_median)."""
    if values.size == 0:
        return values.copy()
    return values[np.concatenate(([True], values[1:] != values[:-1]))]


# A new value is compared with the last RECENT points of its level at most: a step too
# small to detect inside a long last segment would otherwise bias its median.
RECENT = 30


@dataclass(frozen=True, slots=True)
class ChangePoint:
    index: int  # position of the first point of the new level (values[index] is after)
    before: float  # robust level (median) of the segment before the change
    after: float  # robust level of the segment after
    change_pct: float  # (after - before) / before * 100
    p_value: float  # significance of the step (two-sample test of the two segments)


@dataclass(frozen=True, slots=True)
class Drift:
    """A gradual change: one finding for a ramp, not a staircase of steps."""

    start: int  # first point of the ramp
    end: int  # first point after it (the level it reached holds from here)
    before: float  # robust level before the ramp, in the input's units
    after: float  # and after it
    change_pct: float
    p_value: float  # of the ramp against a flat level (normal tail of its z)


@dataclass(frozen=True, slots=True)
class Noise:
    level: float  # robust level of the latest segment
    cv: float  # robust coefficient of variation (sigma / level), e.g. 0.02 for 2 %
    min_effect_pct: float  # smallest step (%) this series can show at `confidence`, given
    # its noise and a segment of `min_segment` points on each side
    too_noisy: bool  # min_effect_pct above a threshold (default 10 %): its alerts less sure


@dataclass(frozen=True, slots=True)
class Verdict:  # a new measurement against its history
    value: float
    level: float  # level of the history's last segment
    change_pct: float
    z: float
    outlier: bool  # outside the history's noise at `confidence`


# ---------------------------------------------------------------------------- public API


def change_points(
    values: np.ndarray,
    confidence: float = 0.99,
    min_segment: int = 5,
    min_change_pct: float = 0.0,
) -> list[ChangePoint]:
    """The steps of `values` (time order, NaN-free), with their levels and p-values.

    `confidence` is one minus the chance of any false change point in a series of pure
    noise; no segment is shorter than `min_segment` points; `min_change_pct` is the
    smallest change that matters (sigma_floor): the series is never judged quieter than
    a step of that size needs, so tiny steps of near-noiseless series are not found.
    """
    x = np.asarray(values, dtype=np.float64)
    fit, bounds = _segmentation(x, confidence, min_segment, min_change_pct)
    return [] if fit is None else _points(x, fit, bounds)


def _points(x: np.ndarray, fit: _Series, bounds: list[int]) -> list[ChangePoint]:
    out = []
    for s, t, e in zip(bounds[:-2], bounds[1:-1], bounds[2:], strict=True):
        before = _median(x[s:t])
        after = _median(x[t:e])
        pct = (after - before) / before * 100.0 if before != 0 else math.nan
        out.append(ChangePoint(t, before, after, pct, _welch_p(fit.y[s:t], fit.y[t:e])))
    return out


@dataclass(frozen=True, slots=True)
class Examined:
    change_points: list[ChangePoint]
    noise: Noise
    latest: Verdict  # the newest value against the rest of its segment
    drifts: list[Drift] = field(default_factory=list)  # gradual changes within segments


def examine(
    values: np.ndarray,
    confidence: float = 0.99,
    min_segment: int = 5,
    too_noisy_pct: float = 10.0,
    min_change_pct: float = 0.0,
) -> Examined:
    """change_points, noise, and the newest value checked against its own segment, for
    the price of one segmentation: what the detection over a whole store runs per series.

    The newest value is compared with the median of the rest of the last segment (its
    last RECENT points), with the noise of the whole series, as check_latest does.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        nothing = Verdict(math.nan, math.nan, math.nan, math.nan, False)
        return Examined([], Noise(math.nan, math.nan, math.nan, True), nothing)
    fit, bounds = _segmentation(x, confidence, min_segment, min_change_pct)
    points = [] if fit is None else _points(x, fit, bounds)
    figures = _noise_of(x, bounds, confidence, min_segment, too_noisy_pct)
    latest = _verdict(
        x[max(bounds[-2], x.size - 1 - RECENT) : -1], float(x[-1]), figures.cv, confidence
    )
    rules = _Rules.of(x.size, confidence, min_segment, min_change_pct)
    drifts = [] if fit is None else _drifts(x, fit, rules, bounds)
    return Examined(points, figures, latest, drifts)


def _drifts(x: np.ndarray, fit: _Series, rules: _Rules, bounds: list[int]) -> list[Drift]:
    """The gradual change inside each segment between the steps, if any: the best ramp
    (flat, linear, flat) against a flat level, kept when it gains more than a ramp's
    penalty (_RAMP_COST step penalties, as in the shape check) and its size reaches the
    minimum effect. A slow leak is then one finding with its start, end and size."""
    found = []
    var = fit.sigma * fit.sigma
    for a, b in pairwise(bounds):
        if b - a < 2 * DRIFT_MIN_WIDTH:
            continue
        total = float(b - a)
        sy_all = fit.py[b] - fit.py[a]
        ss_all = fit.pyy[b] - fit.pyy[a] - sy_all * sy_all / total

        def ramp(
            u: np.ndarray, v: np.ndarray, a: int = a, b: int = b, ss_all: float = ss_all
        ) -> np.ndarray:
            sr, srr, sry = _ramp_sums(fit, u, v, float(a), float(b))
            grr = srr - sr * sr / (b - a)
            gry = sry - sr * (fit.py[b] - fit.py[a]) / (b - a)
            return ss_all - np.where(grr > 1e-12, gry * gry / np.maximum(grr, 1e-12), 0.0)

        rss, u, v = _best_ramp(a, b, ramp)
        gain = (ss_all - rss) / var
        if gain <= _RAMP_COST * rules.penalty:
            continue
        # Noise that wanders fits a ramp somewhere too: the gain is judged against the
        # long-run variance of what the ramp leaves, when that is dependent (step 1).
        long_run = _long_run_variance([_ramp_residuals(fit.y, a, b, u, v)], fit.n)
        if long_run is not None and long_run > var:
            gain = (ss_all - rss) / long_run
            if gain <= _RAMP_COST * rules.penalty:
                continue
        before = _median(x[a : max(u, a + 1)])
        after = _median(x[min(v, b - 1) : b])
        if before == 0:
            continue
        # A series with values <= 0 can cross zero: a level that changes sign is no small
        # change (and has no logarithm).
        ratio = after / before
        if not (abs(math.log(ratio)) if ratio > 0 else math.inf) >= max(rules.min_shift, 1e-12):
            continue
        p = 2.0 * (1.0 - _NORMAL.cdf(math.sqrt(gain)))
        found.append(Drift(u, v, before, after, (after - before) / before * 100.0, p))
    return found


def _ramp_residuals(y: np.ndarray, a: int, b: int, u: int, v: int) -> np.ndarray:
    """y over [a, b) less its least-squares fit by a level plus the ramp that is 0 up to
    u, rises linearly to 1 at v and stays there."""
    ramp = np.clip((np.arange(a, b) - u) / max(v - u, 1), 0.0, 1.0)
    design = np.column_stack((np.ones(b - a), ramp))
    coefficients = np.linalg.lstsq(design, y[a:b], rcond=None)[0]
    return y[a:b] - design @ coefficients


def noise(
    values: np.ndarray,
    confidence: float = 0.99,
    min_segment: int = 5,
    too_noisy_pct: float = 10.0,
) -> Noise:
    """Level, noise and the smallest step `change_points` can show on this series.

    cv is measured within segments (each divided by its median, so steps and levels do
    not count as noise). min_effect_pct is the step that just crosses the detection
    threshold with `min_segment` points on each side, lambda * cv * sqrt(2 / min_segment)
    (lambda for this series' length, step 4 of the module docstring). A series too short
    to measure (fewer than 3 points) has cv NaN and is too noisy to alert on.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return Noise(math.nan, math.nan, math.nan, True)
    return _noise_of(x, _bounds(x, confidence, min_segment), confidence, min_segment, too_noisy_pct)


def _noise_of(
    x: np.ndarray, bounds: list[int], confidence: float, min_segment: int, too_noisy_pct: float
) -> Noise:
    level = _median(x[bounds[-2] :])
    cv = _relative_sigma(x, bounds)
    if math.isnan(cv):
        return Noise(level, cv, math.nan, True)
    min_effect = 100.0 * threshold(x.size, confidence) * cv * math.sqrt(2.0 / max(min_segment, 1))
    return Noise(level, cv, min_effect, bool(min_effect > too_noisy_pct))


def check_latest(history: np.ndarray, new: float, confidence: float = 0.99) -> Verdict:
    """Is `new` outside the noise of the last level of `history`?

    z = (new - level) / (level * cv), with the level (median) of the history's last
    segment and cv within segments as in `noise`, widened for the uncertainty of that
    median; an outlier is |z| beyond the two-sided normal quantile at `confidence`. With
    fewer than 3 points of history there is no noise to compare with: z is NaN and
    nothing is flagged.
    """
    h = np.asarray(history, dtype=np.float64)
    new = float(new)
    if h.size == 0:
        return Verdict(new, math.nan, math.nan, math.nan, False)
    bounds = _bounds(h, confidence, 5)
    return _verdict(
        h[max(bounds[-2], h.size - RECENT) :], new, _relative_sigma(h, bounds), confidence
    )


def _verdict(last: np.ndarray, new: float, cv: float, confidence: float) -> Verdict:
    """`new` against `last`, the points of its level, with the series' noise cv."""
    if last.size == 0:
        return Verdict(new, math.nan, math.nan, math.nan, False)
    level = _median(last)
    change_pct = (new - level) / level * 100.0 if level != 0 else math.nan
    if math.isnan(cv) or level == 0:
        return Verdict(new, level, change_pct, math.nan, False)
    # The median of m Gaussian points has variance pi / (2 m) sigma^2.
    spread = abs(level) * cv * math.sqrt(1.0 + math.pi / (2.0 * last.size))
    if spread == 0:
        z = 0.0 if new == level else math.copysign(math.inf, new - level)
    else:
        z = (new - level) / spread
    return Verdict(new, level, change_pct, z, bool(abs(z) > _two_sided_z(confidence)))


def threshold(n: int, confidence: float = 0.99) -> float:
    """The CUSUM z that a split must exceed in a series of n points (module docstring,
    step 4): about 4.2 at 60 points, 4.7 at 1,000 and 5.1 at 10,000 for 0.99."""
    alpha = min(max(1.0 - confidence, 1e-12), 0.5)
    z = _NORMAL.inv_cdf(1.0 - alpha / (2.0 * max(_THRESHOLD_TESTS * n, 1.0)))
    nu = _THRESHOLD_DF * max(n, 2)
    # Cornish-Fisher expansion of the t quantile around the normal one (Abramowitz &
    # Stegun 26.7.5); nu >= 3 here, where its error is far below the fit's.
    return z + (z**3 + z) / (4 * nu) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu * nu)


def _two_sided_z(confidence: float) -> float:
    return _NORMAL.inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def _bounds(x: np.ndarray, confidence: float, min_segment: int) -> list[int]:
    return _segmentation(x, confidence, min_segment)[1]


# ------------------------------------------------------------------- steps 1-7 in order


def _segmentation(
    x: np.ndarray, confidence: float, min_segment: int, min_change_pct: float = 0.0
) -> tuple[_Series | None, list[int]]:
    """The fitted series and its segment boundaries [0, c1, ..., ck, n] (module docstring,
    steps 1-7): candidates, sigma again without the differences across them, and if it
    moved, the candidates again with it; then the drift checks and the placement."""
    min_segment = max(int(min_segment), 1)
    floor = sigma_floor(x.size, min_change_pct, confidence, min_segment)
    fits = x.size >= max(2 * min_segment, 3)  # long enough for a segment a side
    if x.size < _CYCLE_BESIDE_POINTS or not fits:
        x = _without_cycle(x, min_segment)
        fit = _Series.of(x, floor=floor) if fits else None
    else:
        # The cycle check of a long series is mostly an FFT, which numpy runs without the
        # GIL (0.23 s for 918,349 points, a length of two large prime factors): it runs on
        # a thread while this one fits x as it is, the fit that stands when there is no
        # cycle. A cyclic series fits again what is left without its cycle; its first fit
        # ran beside the FFT, so it lost about nothing (300,000 points: 0.51 -> 0.46 s).
        # Only the fit is guessed: candidates of a cyclic x would cost far more than that.
        from concurrent.futures import ThreadPoolExecutor  # 4 ms: long series only

        with ThreadPoolExecutor(max_workers=1) as beside:
            cycle = beside.submit(_without_cycle, x, min_segment)
            guess = _Series.of(x, floor=floor)
            without = cycle.result()
        fit = guess if without is x else _Series.of(without, floor=floor)
        x = without
    if fit is None:
        return None, [0, x.size]
    rules = _Rules.of(x.size, confidence, min_segment, min_change_pct)
    cps = _candidates(fit, rules)
    if cps:
        sigma = max(_sigma_without(fit.raw, cps), floor)
        if sigma > 0 and abs(sigma / fit.sigma - 1.0) > _SIGMA_TOLERANCE:
            again = _Series.of(x, sigma)
            if again is not None:
                fit, cps = again, _candidates(again, rules)
    for _ in range(_DEPENDENCE_ROUNDS if cps else 0):
        wider = _dependent_sigma(fit, cps)
        again = _Series.of(x, wider) if wider > fit.sigma * (1.0 + _SIGMA_TOLERANCE) else None
        if again is None:
            break
        fit, cps = again, _candidates(again, rules)
        if not cps:
            break
    if cps:
        cps = _drop_drifts(fit, rules, cps)
    if cps:
        cps = _place(fit, rules.min_segment, cps)
    return fit, [0, *cps, x.size]


# ----------------------------------------------------------- step 0: a periodic pattern


def _without_cycle(x: np.ndarray, min_segment: int) -> np.ndarray:
    """x without a strong periodic pattern (a daily cycle of a shared machine), which is
    no step however far apart its halves are: the median profile of its period is divided
    out (or subtracted, for values <= 0). A pattern counts when one frequency of at least
    6 and at most n / (2 min_segment) cycles holds over _CYCLE_SHARE of the power in that
    band and stands _CYCLE_PEAK times above the median power around it; steps and drifts
    put their power below the band and spread it smoothly (as 1 / k^2), so they never do.
    Else x as it is.
    """
    n = x.size
    top = n // (2 * max(min_segment, 1))  # a period of two segments at least
    if n < _CYCLE_MIN_POINTS or top < 2 * _CYCLE_MIN_CYCLES:
        return x  # (before the steps are taken out: segments longer than half x have none)
    logs = bool(np.all(x > 0))
    y = np.log(x) if logs else x
    centred = y - _median(y)
    # Steps put their power at low frequencies, where a cycle of a short series sits too:
    # the spectrum is read with the largest few steps taken out (the best split, thrice).
    power = np.abs(np.fft.rfft(_without_largest_steps(centred, 3, min_segment))) ** 2
    band = power[_CYCLE_MIN_CYCLES : top + 1]
    k = _CYCLE_MIN_CYCLES + int(np.argmax(band))
    # Its share of the band's power: steps and drifts put theirs below it (1 / k^2).
    total = float(np.sum(band)) or 1.0
    share = float(np.sum(power[k - 1 : k + 2])) / total
    around = power[max(k // 2, 1) : 2 * k + 1]
    if share < _CYCLE_SHARE or power[k] < _CYCLE_PEAK * _median(around):
        return x
    period = n / _peak_frequency(centred, k)
    # The profile is taken of y less its mean over one period around each point (a full
    # cycle averages to the level), so that a step or a drift does not leak into it.
    width = max(round(period), 1)
    sums = np.concatenate(([0.0], np.cumsum(y)))
    lo = np.clip(np.arange(n) - width // 2, 0, n - width)
    around = y - (sums[lo + width] - sums[lo]) / width
    bins = int(min(max(round(period), 4), 256))
    phase = np.floor((np.arange(n) % period) / period * bins).astype(np.int64)
    cleaned = y - _local_profile(around, phase, bins, np.floor(np.arange(n) / period))
    return np.exp(cleaned) if logs else cleaned


def _local_profile(
    around: np.ndarray, phase: np.ndarray, bins: int, cycle: np.ndarray
) -> np.ndarray:
    """The pattern at each point: the median, over the _CYCLE_WINDOW cycles around the
    point's own, of the mean of `around` in its phase bin. A cycle's shape changes over a
    long history (a season's peak grows, a machine's busy hours move), and one profile
    of the whole series would leave those changes behind as steps; seven cycles, the
    least seasonal window STL uses (Cleveland et al. 1990), follow them while a step
    inside one cycle cannot move the median."""
    cycles = int(cycle[-1]) + 1
    cell = cycle.astype(np.int64) * bins + phase
    sums = np.bincount(cell, weights=around, minlength=cycles * bins)
    counts = np.bincount(cell, minlength=cycles * bins)
    table = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan).reshape(cycles, bins)
    half = _CYCLE_WINDOW // 2
    padded = np.pad(table, ((half, half), (0, 0)), constant_values=np.nan)
    windows = np.lib.stride_tricks.sliding_window_view(padded, _CYCLE_WINDOW, axis=0)
    with warnings.catch_warnings():  # a cell whose window is all empty stays NaN -> 0
        warnings.simplefilter("ignore", RuntimeWarning)
        local = np.nanmedian(windows, axis=-1)
        local = local - np.nanmedian(local, axis=1, keepdims=True)
    return np.nan_to_num(local).reshape(-1)[cell]


def _without_largest_steps(y: np.ndarray, count: int, min_segment: int) -> np.ndarray:
    """y with `count` steps taken out, each at the best split of the whole series (the
    largest two-sample z) and of the size of the two sides' mean difference."""
    r = y.copy()
    n = r.size
    taus = np.arange(min_segment, n - min_segment)
    for _ in range(count):
        prefix = np.concatenate(([0.0], np.cumsum(r)))
        left, right = taus, n - taus
        diff = prefix[taus] / left - (prefix[n] - prefix[taus]) / right
        j = int(np.argmax(np.abs(diff) * np.sqrt(left * right / n)))
        r[taus[j] :] += diff[j]
    return r


def _peak_frequency(y: np.ndarray, k: int) -> float:
    """The frequency (cycles per series) of the peak near FFT bin k, to a fraction of a
    bin: a period off by 0.2 % slides the phase of a 170-cycle series by a third of a
    cycle, and its profile would be smeared flat."""
    t = np.arange(y.size, dtype=np.float64) / y.size
    grid = np.linspace(k - 1.0, k + 1.0, 41)
    power = np.abs(np.exp(-2j * np.pi * np.outer(grid, t)) @ y)
    j = int(np.argmax(power))
    if 0 < j < grid.size - 1:  # a parabola through the best three
        a, b, c = power[j - 1], power[j], power[j + 1]
        denominator = a - 2.0 * b + c
        if denominator < 0:
            return float(grid[j] + 0.5 * (a - c) / denominator * (grid[1] - grid[0]))
    return float(grid[j])


# ------------------------------------------------------------------------ step 1: noise


def _sigma_of_differences(d: np.ndarray) -> float:
    """Gaussian sigma of a series from its first differences d.

    The MAD of d, robust to steps and outliers; but it assumes a bell. Where values
    repeat (ties: quantised timers, integer milliseconds) or jump between two modes (CPU
    frequency, a shared machine), most differences are 0 or tiny and the MAD collapses
    while the values still vary. So it is checked against the root mean square of d
    without its largest 10 % (still blind to outliers and steps: each outlier spoils two
    differences, and 2 outliers and 3 steps in 84 nights are 7 of 83), and the larger is kept
    when the two disagree by more than _SHAPE_RATIO; a Gaussian series keeps its MAD.
    0 only for a constant series.
    """
    if d.size == 0:
        return 0.0
    mad = float(_MAD_TO_SIGMA * _median(np.abs(d - _median(d))) / math.sqrt(2.0))
    a = np.abs(d)
    m = max(1, math.ceil(a.size * (1.0 - _TRIM)))
    # The m smallest, in no order: a partition, not a sort (918,349 points: 10 ms, not 50).
    kept = np.partition(a, m - 1)[:m] if m < a.size else a
    rms = float(np.sqrt(np.mean(kept * kept))) / _TRIMMED_RMS / math.sqrt(2.0)
    if rms == 0.0 and a.max() > 0.0:  # a few moves among repeats: all of them count
        rms = float(np.sqrt(np.mean(a * a))) / math.sqrt(2.0)
    return rms if rms > _SHAPE_RATIO * mad else mad


def _noise_sigma(y: np.ndarray) -> float:
    """Step 1: sigma of y from its first differences (ties included: see
    _sigma_of_differences). 0 only if y is constant."""
    return _sigma_of_differences(np.diff(y))


def _sigma_without(y: np.ndarray, cps: list[int]) -> float:
    """Step 1 again without the differences that straddle the change points cps."""
    keep = np.ones(y.size - 1, dtype=bool)
    keep[np.asarray(cps, dtype=np.int64) - 1] = False
    return _sigma_of_differences(np.diff(y)[keep])


def _dependent_sigma(fit: _Series, cps: list[int]) -> float:
    """Step 1 once more, for noise that wanders (module docstring): sigma, or the root
    of the long-run variance of the residuals around the segment means of cps where they
    are dependent (_long_run_variance)."""
    residuals = [fit.y[s:e] - float(np.mean(fit.y[s:e])) for s, e in pairwise([0, *cps, fit.n])]
    long_run = _long_run_variance(residuals, fit.n)
    return fit.sigma if long_run is None else max(fit.sigma, math.sqrt(long_run))


def _long_run_variance(residuals: list[np.ndarray], n: int) -> float | None:
    """The long-run variance of residuals (each a segment's, around its fit) when they
    are dependent, else None: the larger of two estimates, each counted only when its
    evidence of dependence is past _DEPENDENCE_Z standard errors.

    - *AR(1)*: the lag-1 autocorrelation rho of the residuals (pairs within a segment)
      gives var * (1 + rho) / (1 - rho). It holds up when the candidates cut the series
      into short pieces, each following the wander, where blocks are too few.
    - *Blocks* of about n^(1/3) points: b * var(block means), for dependence that
      reaches further than one lag (a slow wave).

    For independent noise rho is about 0 (slightly negative around fitted means) and a
    block's mean has the variance of a point over the block's length, so neither fires;
    a step the candidates missed adds about z^2 / n to rho, under the threshold for any
    step the search can miss.
    """
    squares = sum(float(r @ r) for r in residuals)
    count = sum(r.size for r in residuals)
    if squares <= 0.0 or count < 3:
        return None
    variance = squares / count
    found = []
    rho = sum(float(r[1:] @ r[:-1]) for r in residuals if r.size > 1) / squares
    if rho > _DEPENDENCE_Z / math.sqrt(count):
        rho = min(rho, _MAX_AUTOCORRELATION)
        found.append(variance * (1.0 + rho) / (1.0 - rho))
    b = max(2, round(n**_BLOCK_EXPONENT))
    means = []
    for r in residuals:
        blocks = r.size // b
        if blocks >= 2:
            start = (r.size - blocks * b) // 2
            means.append(r[start : start + blocks * b].reshape(blocks, b).mean(axis=1))
    if means:
        m = np.concatenate(means)
        blocked = b * float(m @ m) / m.size
        if blocked / variance > 1.0 + _DEPENDENCE_Z * math.sqrt(2.0 / m.size):
            found.append(blocked)
    return max(found) if found else None


def sigma_floor(
    n: int, min_change_pct: float, confidence: float = 0.99, min_segment: int = 5
) -> float:
    """The least noise (sigma of log values) a series of n points is judged with: the
    sigma under which a step of exactly `min_change_pct` %, with `min_segment` points on
    each side, just reaches the threshold. A step smaller than the minimum effect is then
    never a candidate, however quiet the series (a noiseless ramp would otherwise be a
    staircase of significant steps, found at O(n^2) cost)."""
    if min_change_pct <= 0.0:
        return 0.0
    shift = math.log1p(min_change_pct / 100.0)
    return shift / (threshold(n, confidence) * math.sqrt(2.0 / max(min_segment, 1)))


def _relative_sigma(x: np.ndarray, bounds: list[int]) -> float:
    """Robust sigma / level within segments (each divided by its median): the cv of
    `noise` and `check_latest`."""
    diffs = []
    for s, e in pairwise(bounds):
        seg = x[s:e]
        if seg.size < 2:
            continue
        level = _median(seg)
        if level == 0:
            return math.nan
        diffs.append(np.diff(seg / abs(level)))
    if not diffs:
        return math.nan
    d = np.concatenate(diffs)
    if d.size < 2:
        return math.nan  # fewer than 3 points: one difference says nothing of the noise
    return _sigma_of_differences(d)


# ---------------------------------------------------------- step 2: the cleaned series


def _clean(y: np.ndarray, sigma: float) -> np.ndarray:
    """Outliers against the rolling median: replaced when far, clipped when near."""
    h = _MEDIAN_HALF
    if y.size <= 2 * h:
        return y.copy()
    windows = np.lib.stride_tricks.sliding_window_view(y, 2 * h + 1)
    # A block of windows at a time: the partition copies its rows, and a copy of them all
    # (9 n values) went through memory, not a core's cache (918,349 points: 80 -> 38 ms).
    inner = np.empty(windows.shape[0])
    for first in range(0, windows.shape[0], _MEDIAN_ROWS):
        block = windows[first : first + _MEDIAN_ROWS]
        inner[first : first + block.shape[0]] = np.partition(block, h, axis=1)[:, h]
    # The first and last h points take the median of the nearest full window: padding
    # by reflection would count an outlier at the edge twice.
    med = np.concatenate((np.full(h, inner[0]), inner, np.full(h, inner[-1])))
    clipped = np.clip(y, med - _CLIP_SIGMAS * sigma, med + _CLIP_SIGMAS * sigma)
    return np.where(np.abs(y - med) > _REPLACE_SIGMAS * sigma, med, clipped)


@dataclass(frozen=True, slots=True)
class _Series:
    """The cleaned series with its prefix sums: every statistic of a split below is O(1)
    per position, and vectorised over positions."""

    y: np.ndarray  # log values (or raw), outliers cleaned
    raw: np.ndarray  # the same before cleaning
    sigma: float  # its noise (step 1)
    py: np.ndarray  # prefix sums of yc = y - median(y), yc^2, t * yc and t^2 * yc
    pyy: np.ndarray
    pty: np.ndarray
    ptty: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, sigma: float | None = None, floor: float = 0.0) -> _Series | None:
        """The series of x with its noise sigma (measured here unless given), never below
        `floor` (sigma_floor, for log values only); None if x is constant."""
        logs = bool(np.all(x > 0))
        raw = np.log(x) if logs else x.copy()
        if sigma is None:
            sigma = _noise_sigma(raw)
        if sigma == 0.0:
            return None  # constant: nothing to find
        if logs:
            sigma = max(sigma, floor)
        y = _clean(raw, sigma)
        # Centred, so that the prefix sums keep their precision over long series.
        yc = y - _median(y)
        t = np.arange(x.size, dtype=np.float64)
        return cls(
            y=y,
            raw=raw,
            sigma=sigma,
            py=np.concatenate(([0.0], np.cumsum(yc))),
            pyy=np.concatenate(([0.0], np.cumsum(yc * yc))),
            pty=np.concatenate(([0.0], np.cumsum(t * yc))),
            ptty=np.concatenate(([0.0], np.cumsum(t * t * yc))),
        )

    @property
    def n(self) -> int:
        return self.y.size

    def cusum(self, s: int, e: int, taus: np.ndarray) -> np.ndarray:
        """|CUSUM| (not divided by sigma) of splitting [s, e) at each of taus."""
        py = self.py
        left = taus - s
        right = e - taus
        diff = (py[taus] - py[s]) / left - (py[e] - py[taus]) / right
        return np.abs(diff) * np.sqrt(left * right / (e - s))

    def best_split(self, s: int, e: int, lo: int, hi: int) -> tuple[int, float]:
        """The split of [s, e) in [lo, hi] with the largest |CUSUM|."""
        taus = np.arange(lo, hi + 1)
        stat = self.cusum(s, e, taus)
        j = int(np.argmax(stat))
        return int(taus[j]), float(stat[j])

    def neighbour_z(self, cps: list[int]) -> np.ndarray:
        """The CUSUM z of each change point between its neighbours."""
        b = np.array([0, *cps, self.n], dtype=np.int64)
        s, t, e = b[:-2], b[1:-1], b[2:]
        left = t - s
        right = e - t
        diff = (self.py[t] - self.py[s]) / left - (self.py[e] - self.py[t]) / right
        return np.abs(diff) * np.sqrt(left * right / (e - s)) / self.sigma

    def explained(self, bounds: list[int]) -> float:
        """Sum of squares the segment means of bounds explain beyond their overall mean."""
        b = np.asarray(bounds, dtype=np.int64)
        sums = self.py[b[1:]] - self.py[b[:-1]]
        sizes = (b[1:] - b[:-1]).astype(np.float64)
        total = float(sums.sum())
        return float(np.sum(sums * sums / sizes) - total * total / float(sizes.sum()))


# ------------------------------------------------------------------ step 4: significance


@dataclass(frozen=True, slots=True)
class _Rules:
    """What a change point must pass in a series of n points: a split's z above lam
    (step 4), a gain of lam^2 in the penalised fit (step 5), a local z above local_z
    (step 6), and segments of at least min_segment points."""

    lam: float
    local_z: float
    min_segment: int
    min_shift: float = 0.0  # the minimum effect in log units: an abrupt part below it is none

    @classmethod
    def of(cls, n: int, confidence: float, min_segment: int, min_change_pct: float = 0.0) -> _Rules:
        shift = math.log1p(min_change_pct / 100.0) if min_change_pct > 0 else 0.0
        return cls(threshold(n, confidence), _two_sided_z(confidence), min_segment, shift)

    @property
    def penalty(self) -> float:
        """What a change point must gain, in sigma^2 of residual sum of squares."""
        return self.lam * self.lam


# ------------------------------------------------- steps 3 and 5: candidates, selection


def _candidates(fit: _Series, rules: _Rules) -> list[int]:
    """Steps 3-5: the change points of the penalised fit, drifts not yet checked."""
    cps = _seeded_bs(fit, rules)
    return _prune(fit, rules, cps) if cps else cps


def _seeded_intervals(
    fit: _Series, rules: _Rules
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, best split, z) of every seeded interval whose z is above lam."""
    n, ms, py = fit.n, rules.min_segment, fit.py
    found: list[tuple[np.ndarray, ...]] = []
    layer = 0
    while True:
        length = math.ceil(n * _SEED_DECAY**layer)
        if length < 2 * ms or (layer > 0 and length == n):
            break
        count = 2 * math.ceil((1.0 / _SEED_DECAY) ** layer) - 1
        starts = _unique_sorted(np.round(np.linspace(0, n - length, count)).astype(np.int64))
        offsets = np.arange(ms, length - ms + 1)
        best, best_z = _best_splits(py, starts, length, offsets, fit.sigma)
        keep = best_z > rules.lam
        if keep.any():
            s = starts[keep]
            found.append((s, s + length, s + offsets[best[keep]], best_z[keep]))
        layer += 1
    if not found:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, np.empty(0)
    starts, ends, taus, zs = (np.concatenate(part) for part in zip(*found, strict=True))
    return starts, ends, taus, zs


# Elements of a block of seeded intervals worked on at once (_best_splits): 2 MiB a
# float array, which stays in a core's cache through the block's half-dozen passes.
_SPLIT_BLOCK = 1 << 18


def _best_splits(
    py: np.ndarray, starts: np.ndarray, length: int, offsets: np.ndarray, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """For each interval [start, start + length): the offset of its best split among
    `offsets`, and that split's z (the difference of the means on either side, in
    standard errors).

    A block of intervals at a time, the prefix sums at each split read once (a copy of
    a window of py per interval) and every step done in place: the same arithmetic, in
    the same order, as one array per step over all of them (which, for 918,349 points,
    held 36 n elements in temporaries of 15 MB each, 0.55 s of the series' detection).
    """
    width = offsets.size
    tail = length - offsets
    weight = np.sqrt(offsets * tail / length) / sigma
    windows = np.lib.stride_tricks.sliding_window_view(py, width)  # row i: py[i:i+width]
    best = np.empty(starts.size, np.int64)
    best_z = np.empty(starts.size)
    rows = max(1, _SPLIT_BLOCK // width)
    for first in range(0, starts.size, rows):
        block = starts[first : first + rows]
        at_splits = windows[block + offsets[0]]  # py[start + offset], a row each
        left = at_splits - py[block][:, None]
        left /= offsets
        right = np.subtract(py[block + length][:, None], at_splits, out=at_splits)
        right /= tail
        left -= right
        np.abs(left, out=left)
        left *= weight
        found = np.argmax(left, axis=1)
        best[first : first + block.size] = found
        best_z[first : first + block.size] = left[np.arange(block.size), found]
    return best, best_z


def _seeded_bs(fit: _Series, rules: _Rules) -> list[int]:
    """Step 3: seeded binary segmentation with the intervals of _seeded_intervals."""
    starts, ends, taus, zs = _seeded_intervals(fit, rules)
    ms = rules.min_segment
    found: list[int] = []
    stack = [(0, fit.n)]
    while stack:
        s, e = stack.pop()
        if e - s < 2 * ms:
            continue
        # The segment itself, then every seeded interval inside it.
        tau, z = fit.best_split(s, e, s + ms, e - ms)
        z /= fit.sigma
        inside = (starts >= s) & (ends <= e)
        if inside.any():
            j = int(np.argmax(np.where(inside, zs, -np.inf)))
            if zs[j] > z:
                tau, z = int(taus[j]), float(zs[j])
        if z <= rules.lam:
            continue
        found.append(tau)
        stack += [(s, tau), (tau, e)]
    return sorted(found)


def _refine(
    fit: _Series, ms: int, cps: list[int], only: tuple[int, int] | None = None
) -> list[int]:
    """Each point to the best split between its neighbours, within +-2 min_segment;
    `only`: the points of these indices [i, j) (those beside a move: no other point's
    neighbours changed)."""
    out = list(cps)
    first, last = only if only is not None else (0, len(out))
    for i in range(max(first, 0), min(last, len(out))):
        c = out[i]
        s = out[i - 1] if i > 0 else 0
        e = out[i + 1] if i + 1 < len(out) else fit.n
        lo = max(s + ms, c - 2 * ms)
        hi = min(e - ms, c + 2 * ms)
        if lo <= hi:
            out[i] = fit.best_split(s, e, lo, hi)[0]
    return out


def _prune(fit: _Series, rules: _Rules, cps: list[int]) -> list[int]:
    """Step 5: greedy descent on RSS / sigma^2 + lam^2 per point, by deletions and
    merges."""
    ms, penalty = rules.min_segment, rules.penalty
    cps = _refine(fit, ms, cps)
    var = fit.sigma * fit.sigma
    # A merge's cost depends on its four bounds only: kept across moves, which change a
    # few bounds each (without it, a random walk's 1,000 candidates took 8 s).
    merges: dict[tuple[int, int, int, int], tuple[float, int]] = {}
    while cps:
        z = fit.neighbour_z(cps)
        j = int(np.argmin(z))
        # Deleting a point costs its CUSUM^2 between its neighbours and saves lam^2.
        best_gain, best_move = penalty - float(z[j]) ** 2, (j, j, -1)
        b = [0, *cps, fit.n]
        for i in range(len(cps) - 1):
            a, e = b[i], b[i + 3]
            if e - a < 2 * ms:
                continue
            key = (a, b[i + 1], b[i + 2], e)
            known = merges.get(key)
            if known is None:
                # Merging two points into the best single split between their outer
                # neighbours costs what the pair explains beyond that split.
                tau, stat = fit.best_split(a, e, a + ms, e - ms)
                known = merges[key] = ((fit.explained(list(key)) - stat * stat) / var, tau)
            extra, tau = known
            if penalty - extra > best_gain:
                best_gain, best_move = penalty - extra, (i, i + 1, tau)
        if best_gain <= 0:
            break
        first, last, tau = best_move
        cps[first : last + 1] = [tau] if tau >= 0 else []
        cps = _refine(fit, ms, cps, (first - 1, first + 2))
    return cps


# ------------------------------------------------------------------ step 6: drifts


def _drop_drifts(fit: _Series, rules: _Rules, cps: list[int]) -> list[int]:
    """Step 6: the local check, then the shape check, then step 5 again on what is left."""
    cps = _drop_gradual(fit, rules, cps)
    cache: dict[tuple[int, ...], float] = {}
    while cps:
        b = [0, *cps, fit.n]
        means = [(fit.py[e] - fit.py[s]) / (e - s) for s, e in pairwise(b)]
        rises = [m1 > m0 for m0, m1 in pairwise(means)]
        best, best_run = 0.0, None
        for i in range(len(cps)):
            for j in range(i, min(i + _MAX_RUN, len(cps))):
                if rises[j] != rises[i]:
                    break  # a ramp goes one way
                key = tuple(b[i : j + 3])
                if key not in cache:
                    cache[key] = _ramp_advantage(fit, rules.penalty, list(key))
                if cache[key] > best:
                    best, best_run = cache[key], (i, j)
        if best_run is None:
            break
        del cps[best_run[0] : best_run[1] + 1]
    # Once a staircase is merged into ramps, what is left has room on both sides for the
    # local check (a curve's steps stood too close for it): it runs again.
    cps = _drop_gradual(fit, rules, cps) if cps else cps
    return _prune(fit, rules, cps) if cps else cps


def _drop_gradual(fit: _Series, rules: _Rules, cps: list[int]) -> list[int]:
    """The local check: remove, weakest first, points whose step is not significant with
    only DRIFT_MIN_WIDTH points on each side (within their neighbours), or, where both
    sides have that many, beyond a straight line over up to _TREND_REACH DRIFT_MIN_WIDTH
    points on each side, or whose jump beyond that line is below the minimum effect.

    A point's z depends on its neighbours only: after a removal, only the two points
    beside it are scored again (a curve leaves hundreds of candidates, and scoring them
    all after each removal cost O(k^2))."""
    cps = list(cps)
    z = [_gradual_z(fit, rules, b) for b in _triples(cps, fit.n)]
    while cps:
        j = int(np.argmin(z))
        if z[j] >= rules.local_z:
            break
        del cps[j], z[j]
        b = [0, *cps, fit.n]
        for i in (j - 1, j):
            if 0 <= i < len(cps):
                z[i] = _gradual_z(fit, rules, (b[i], b[i + 1], b[i + 2]))
    return cps


def _triples(cps: list[int], n: int) -> list[tuple[int, int, int]]:
    b = [0, *cps, n]
    return list(zip(b, b[1:], b[2:], strict=False))


def _gradual_z(fit: _Series, rules: _Rules, bounds: tuple[int, int, int]) -> float:
    """The local check's z of the point t between its neighbours s and e."""
    s, t, e = bounds
    w = DRIFT_MIN_WIDTH
    wide = _TREND_REACH * DRIFT_MIN_WIDTH
    jump_z, jump = _jump_beyond_trend(fit, max(s, t - wide), t, min(e, t + wide))
    if abs(jump) < rules.min_shift:
        jump_z = 0.0  # the abrupt part is below the minimum effect: a curve's bend
    local = float(fit.cusum(max(s, t - w), min(e, t + w), np.array([t]))[0]) / fit.sigma
    return min(local, jump_z)


def _sum_t(i: np.ndarray | float) -> np.ndarray | float:  # sum of t for 0 <= t < i
    return i * (i - 1.0) / 2.0


def _sum_tt(i: np.ndarray | float) -> np.ndarray | float:  # sum of t^2 for 0 <= t < i
    return (i - 1.0) * i * (2.0 * i - 1.0) / 6.0


def _jump_beyond_trend(fit: _Series, s: int, t: int, e: int) -> tuple[float, float]:
    """(|z|, size) of the jump at t between two lines, one fitted to each side over the
    same width (the most both sides of [s, e) allow); (infinite, infinite): no test, with
    fewer than DRIFT_MIN_WIDTH points a side.

    Each side's own line, not one shared slope: a curve bends at t, and a bend is no
    jump. With equal widths a curve's second-order term shifts both lines' ends at t by
    the same amount and cancels from the jump, so the curve of a growth or a leak leaves
    a jump of about zero wherever the point sits, while a real step keeps its size."""
    w = min(t - s, e - t)
    if w < DRIFT_MIN_WIDTH:
        return math.inf, math.inf
    at = t - 0.5  # the boundary between the two sides
    left, left_var = _line_end(fit, t - w, t, at)
    right, right_var = _line_end(fit, t, t + w, at)
    jump = right - left
    return abs(jump) / (fit.sigma * math.sqrt(left_var + right_var)), jump


def _line_end(fit: _Series, a: int, b: int, at: float) -> tuple[float, float]:
    """(value, variance in sigma^2) at `at` of the least-squares line through [a, b)."""
    k = float(b - a)
    st = _sum_t(b) - _sum_t(a)
    mean_t = st / k
    var_t = _sum_tt(b) - _sum_tt(a) - st * mean_t
    sy = fit.py[b] - fit.py[a]
    slope = (fit.pty[b] - fit.pty[a] - mean_t * sy) / var_t
    return sy / k + slope * (at - mean_t), 1.0 / k + (at - mean_t) ** 2 / var_t


def _sum_ttt(i: np.ndarray | float) -> np.ndarray | float:  # sum of t^3 for 0 <= t < i
    return (i * (i - 1.0) / 2.0) ** 2


def _sum_tttt(i: np.ndarray | float) -> np.ndarray | float:  # sum of t^4 for 0 <= t < i
    m = i - 1.0
    return m * (m + 1.0) * (2.0 * m + 1.0) * (3.0 * m * m + 3.0 * m - 1.0) / 30.0


def _curve_gain(fit: _Series, edges: list[int]) -> float:
    """How much one quadratic curve shared by the segments between `edges` (each with its
    own level) lowers their residual sum of squares: the reduction of least squares on
    the centred columns u and u^2, u = (t - a) / (b - a) over [a, b) = [edges[0],
    edges[-1]), all from prefix sums."""
    a, b = edges[0], edges[-1]
    width = float(b - a)
    gram = np.zeros((2, 2))
    cross = np.zeros(2)
    for lo, hi in pairwise(edges):
        k = float(hi - lo)
        j0, j1 = float(lo - a), float(hi - a)  # u * width runs over j0 .. j1 - 1
        powers = [k] + [
            (f(j1) - f(j0)) / width**p
            for p, f in ((1, _sum_t), (2, _sum_tt), (3, _sum_ttt), (4, _sum_tttt))
        ]
        sy = fit.py[hi] - fit.py[lo]
        sty = fit.pty[hi] - fit.pty[lo]
        stty = fit.ptty[hi] - fit.ptty[lo]
        suy = (sty - a * sy) / width
        suuy = (stty - 2.0 * a * sty + a * a * sy) / (width * width)
        su, suu, suuu, suuuu = powers[1], powers[2], powers[3], powers[4]
        gram += [
            [suu - su * su / k, suuu - su * suu / k],
            [suuu - su * suu / k, suuuu - suu * suu / k],
        ]
        cross += [suy - su * sy / k, suuy - suu * sy / k]
    if abs(float(np.linalg.det(gram))) < 1e-18:
        return 0.0
    return float(cross @ np.linalg.solve(gram, cross))


def _ramp_sums(
    fit: _Series, u: np.ndarray, v: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums over [lo, hi) of r, r^2 and r*yc for the ramp r = clip((t - u) / (v - u),
    0, 1); the arguments broadcast against each other."""
    width = v - u
    rise_lo = np.clip(lo, u, v)  # the rising part inside [lo, hi)
    rise_hi = np.clip(hi, u, v)
    i0, i1 = rise_lo.astype(np.int64), rise_hi.astype(np.int64)
    cnt = rise_hi - rise_lo
    st = _sum_t(rise_hi) - _sum_t(rise_lo)
    stt = _sum_tt(rise_hi) - _sum_tt(rise_lo)
    sy = fit.py[i1] - fit.py[i0]
    sty = fit.pty[i1] - fit.pty[i0]
    top_lo = np.minimum(np.maximum(lo, v), hi)  # the top part (r = 1) inside [lo, hi)
    top_n = hi - top_lo
    top_hi = np.broadcast_to(hi, top_lo.shape).astype(np.int64)
    top_y = fit.py[top_hi] - fit.py[top_lo.astype(np.int64)]
    sr = (st - u * cnt) / width + top_n
    srr = (stt - 2.0 * u * st + u * u * cnt) / (width * width) + top_n
    sry = (sty - u * sy) / width + top_y
    return sr, srr, sry


def _least_over_ramps(a: int, b: int, rss: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    """Smallest rss(u, v) over ramps of width >= DRIFT_MIN_WIDTH in [a, b]: a grid of
    33 ends, then a finer one around the best pair."""
    return _best_ramp(a, b, rss)[0]


def _best_ramp(
    a: int, b: int, rss: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> tuple[float, int, int]:
    """(rss, u, v) of the best ramp of _least_over_ramps."""
    g = _unique_sorted(np.round(np.linspace(a, b, min(b - a + 1, 33))))
    u, v = np.meshgrid(g, g, indexing="ij")
    ok = v - u >= DRIFT_MIN_WIDTH
    u, v = u[ok], v[ok]
    r = rss(u, v)
    j = int(np.argmin(r))
    step = max((b - a) / 32.0, 1.0)
    d = _unique_sorted(np.round(np.linspace(-step, step, 17)))
    uu, vv = np.meshgrid(
        _unique_sorted(np.clip(u[j] + d, a, b)),
        _unique_sorted(np.clip(v[j] + d, a, b)),
        indexing="ij",
    )
    ok = vv - uu >= DRIFT_MIN_WIDTH
    fine = rss(uu[ok], vv[ok])
    if fine.size and float(fine.min()) < float(r[j]):
        k = int(np.argmin(fine))
        return float(fine[k]), int(uu[ok][k]), int(vv[ok][k])
    return float(r[j]), int(u[j]), int(v[j])


def _ramp_advantage(fit: _Series, penalty: float, bounds: list[int]) -> float:
    """The shape check: > 0 when one ramp over [bounds[0], bounds[-1]) is cheaper
    (penalised RSS, in sigma^2) than steps at bounds[1:-1], both alone and added to that
    ramp."""
    a, b = bounds[0], bounds[-1]
    steps = len(bounds) - 2
    if b - a < DRIFT_MIN_WIDTH + 2:
        return -math.inf
    edges = np.asarray(bounds, dtype=np.int64)
    lo = edges[:-1, None].astype(np.float64)
    hi = edges[1:, None].astype(np.float64)
    size = hi - lo
    sy = (fit.py[edges[1:]] - fit.py[edges[:-1]])[:, None]
    syy = (fit.pyy[edges[1:]] - fit.pyy[edges[:-1]])[:, None]
    rss_steps = float(np.sum(syy - sy * sy / size))
    total = float(b - a)
    sy_all = fit.py[b] - fit.py[a]
    ss_all = fit.pyy[b] - fit.pyy[a] - sy_all * sy_all / total

    def ramp(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        sr, srr, sry = _ramp_sums(fit, u, v, float(a), float(b))
        grr = srr - sr * sr / total
        gry = sry - sr * sy_all / total
        return ss_all - np.where(grr > 1e-12, gry * gry / np.maximum(grr, 1e-12), 0.0)

    def ramp_and_steps(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        # One ramp shared by all the segments, each with its own level.
        sr, srr, sry = _ramp_sums(fit, u[None, :], v[None, :], lo, hi)
        grr = np.sum(srr - sr * sr / size, axis=0)
        gry = np.sum(sry - sr * sy / size, axis=0)
        return rss_steps - np.where(grr > 1e-12, gry * gry / np.maximum(grr, 1e-12), 0.0)

    var = fit.sigma * fit.sigma
    cost_steps = rss_steps / var + steps * penalty
    cost_ramp = _least_over_ramps(a, b, ramp) / var + _RAMP_COST * penalty
    cost_curve = (ss_all - _curve_gain(fit, [a, b])) / var + _CURVE_COST * penalty
    cost_drift = min(cost_ramp, cost_curve)
    if cost_drift >= cost_steps:
        return cost_steps - cost_drift
    both_ramp = _least_over_ramps(a, b, ramp_and_steps) / var + (steps + _RAMP_COST) * penalty
    both_curve = (rss_steps - _curve_gain(fit, bounds)) / var + (steps + _CURVE_COST) * penalty
    return min(cost_steps, both_ramp, both_curve) - cost_drift


# --------------------------------------------------------------------- step 7: placement


def _place(fit: _Series, ms: int, cps: list[int]) -> list[int]:
    """Each point to the median of its position's posterior between its neighbours,
    within +-2 min_segment of where the fit put it (step 7)."""
    out = list(cps)
    for i, c in enumerate(out):
        s = out[i - 1] if i > 0 else 0
        e = out[i + 1] if i + 1 < len(out) else fit.n
        lo = max(s + ms, c - _PLACE_REACH * ms)
        hi = min(e - ms, c + _PLACE_REACH * ms)
        if lo >= hi:
            continue
        taus = np.arange(lo, hi + 1)
        z = fit.cusum(s, e, taus) / fit.sigma
        # log posterior of a step at tau: the likelihood of the best two levels,
        # exp(z^2 / 2), times the Laplace width of the two levels' integral.
        log_post = 0.5 * z * z - 0.5 * np.log((taus - s) * (e - taus) / (e - s))
        cum = np.cumsum(np.exp(log_post - log_post.max()))
        out[i] = int(taus[np.searchsorted(cum, 0.5 * cum[-1])])
    return out


# --------------------------------------------------------------------------- statistics


def _welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Welch's t-test between a and b (NaN: fewer than two a side)."""
    p = welch(a, b)
    return math.nan if p is None else p
