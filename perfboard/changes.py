"""How a value moved, said the way a reader needs it: the sign and which way is better.

speedup = old / new (x), reduction = (old - new) / old (%), as in docs/architecture.md; a
change is (new - old) / old, called better or worse by the series' direction.
"""

from __future__ import annotations

import math
from typing import Any

# A series' usual level ± this many of its noise (the robust cv detection measures): the
# band Trends draws, and what a change must leave to be called better or worse.
NOISE_BAND_CVS = 2


def within_noise(relative: Any, cv: Any) -> Any:
    """Whether a relative change (0.017 for +1.7 %) stays inside the series' noise band;
    False where the noise is unknown (NaN). Scalars, or numpy / pandas arrays of both."""
    return abs(relative) < NOISE_BAND_CVS * cv


def describe_change(now: float, then: float | None, direction: str, cv: float | None = None) -> str:
    """ "-5.0% better" for a latency that fell 5%; "" when there is nothing to compare;
    "+0.7% within noise" for a change under twice the series' noise (`cv`, its robust
    coefficient of variation, when detection measured one): a nightly series moves by
    1-2 % from run to run, which is neither better nor worse."""
    if then is None or now is None or math.isnan(then) or math.isnan(now) or then == 0:
        return ""
    relative = (now - then) / then
    if abs(relative) < 0.0005:
        return "±0%"
    if cv is not None and within_noise(relative, cv):
        return f"{relative:+.1%} within noise"
    better = relative < 0 if direction == "lower" else relative > 0
    return f"{relative:+.1%} {'better' if better else 'worse'}"
