"""Ratios and changes in words: the one place that decides what "1.44x slower" means.

The analyses (compare, ops) and the report all word their numbers here, so a table, a
chart's tooltip and the weekly report never disagree on a verdict. Pure functions.
"""

from __future__ import annotations

import pandas as pd

# A ratio within 0.5 % of 1 is "on par"; a pair only loses (and a version is only better
# or worse) beyond that, so a table and its wording never disagree.
PAR = 1.005


def _missing(ratio: float | None) -> bool:
    # pd.isna: a ratio may come as None, NaN, pd.NA or a numpy scalar.
    return ratio is None or bool(pd.isna(ratio)) or ratio <= 0


def ratio_words(ratio: float, direction: str, other: str) -> str:
    """ "Paddle 1.44x slower than tensorflow": a ratio with its direction, never bare.

    `ratio` is Paddle / other; `direction` is the metric's (lower or higher is better).
    """
    if _missing(ratio):
        return "–"
    factor = ratio if ratio >= 1 else 1 / ratio
    if factor < PAR:
        return f"Paddle on par with {other}"
    worse_word, better_word = ("slower", "faster") if direction == "lower" else ("lower", "higher")
    worse = ratio > 1 if direction == "lower" else ratio < 1
    return f"Paddle {factor:.2f}x {worse_word if worse else better_word} than {other}"


def worded(ratio: float, direction: str, subject: str, other: str) -> str:
    """ratio_words with another subject than "Paddle": "Paddle int8 3.76x faster than fp32",
    "B 1.05x faster than A". `ratio` is subject / other."""
    words = ratio_words(ratio, direction, other)
    return subject + words.removeprefix("Paddle") if words.startswith("Paddle") else words


def verdict(ratio: float, direction: str) -> str:
    """better / worse / same for a ratio new / old of a metric with this direction."""
    if _missing(ratio):
        return "–"
    if max(ratio, 1 / ratio) < PAR:
        return "same"
    worse = ratio > 1 if direction == "lower" else ratio < 1
    return "worse" if worse else "better"
