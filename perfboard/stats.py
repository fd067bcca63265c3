"""Welch's t-test without scipy: the Student-t tail through the regularized incomplete
beta function. Used by change detection (the p-value of a step) and by Compare (whether two
versions differ). scipy would be 40 MB for these sixty lines.
"""

from __future__ import annotations

import math

import numpy as np


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by the modified Lentz
    method (Numerical Recipes, 2nd ed., section 6.4, `betacf`).

    It converges fast for x < (a + 1) / (a + b + 2); `betai` uses the symmetry
    I_x(a, b) = 1 - I_(1-x)(b, a) to stay in that range. The number of terms needed grows
    like sqrt(max(a, b)), hence the generous limit (df/2 is a for a t-test).
    """
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        # Even step of the recurrence.
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        # Odd step.
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    # The prefactor x^a (1-x)^b / B(a, b) in logs: the gammas overflow for large df.
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| >= |t|).

    P(|T| >= |t|) = I_(df / (df + t^2))(df / 2, 1 / 2), the regularized incomplete beta.
    """
    if math.isnan(t) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0
    return min(1.0, max(0.0, betai(df / 2.0, 0.5, df / (df + t * t))))


def welch(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided p-value of Welch's t-test (unequal variances) that a and b share a mean;
    None when either side holds fewer than two values (no variance to test with)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if len(x) < 2 or len(y) < 2:
        return None
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se2 = vx + vy
    if se2 == 0:
        # Both sides constant: the same constant is no difference, two constants a sure one.
        return 1.0 if x.mean() == y.mean() else 0.0
    t = (y.mean() - x.mean()) / math.sqrt(se2)
    # Welch-Satterthwaite degrees of freedom.
    df = se2**2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    return student_t_p(t, df)
