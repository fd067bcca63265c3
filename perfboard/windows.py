"""A long series is examined in windows anchored at its first point, so that an ingest
that appends points examines only its last windows and stores what a whole detection
would.

A series of up to WINDOW points is examined whole (perfboard.detect.examine). A longer one
is cut into windows of WINDOW points that start every STRIDE (WINDOW / 2) points from its
first; the last window ends at the series' end, and holds more than STRIDE points. Two
neighbouring windows overlap by half, and the middle of their overlap is their *seam*:
each window reports what it finds between the seams on either side of it (the first from
the series' start, the last to its end), where it sees at least STRIDE / 2 points on
either side. Where the windows start never depends on how many points there are, so a
window whose points did not change gives the same findings, however and whenever the
points arrived.

At a seam, a step close to it may be placed a point or two apart by the two windows (each
sees different neighbours), and would be reported twice, or by neither. So within
`2 min_segment` of a seam the two windows' steps are paired, nearest first: a pair is one
step, at the earlier window's place; a step the other window has no partner for stays
only on its own side. A drift is reported by the window that holds its start, unless it
overlaps a drift an earlier window reported (a ramp longer than the overlap is seen by
both).

Each window judges its steps against its own noise, so a change point's `noisy` is its
window's; the series' noise, level and newest-value check are the last window's. Over
a long history that is the noise of the recent past, not of years ago.

Why windows of 65,536 points: one costs 20-40 ms to examine on independent noise,
and no series of a test, of the demo or of a real team's history is that long (a CI run
every hour for seven years is 61,000 points). Measured on series of 300,000-918,350
points with 20-30 planted steps of 1-6 % (iid noise, AR(1) noise, a daily cycle, ties, a
slow drift), the windows found as many steps as the whole series, or more, with no more
false ones, in 0.8-1.6 times its time. An append's two windows take 40-70 ms on
independent noise (a window of AR(1) noise or a daily cycle alone, 150-230 ms).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from perfboard import detect

WINDOW = 1 << 16
STRIDE = WINDOW // 2


@dataclass(frozen=True, slots=True)
class Span:
    """A window: its points [start, end), and the part [own_start, own_end) it reports."""

    start: int
    end: int
    own_start: int
    own_end: int


@dataclass(frozen=True, slots=True)
class Finding:
    """A step (end None) or a drift of a whole series, at positions in the series."""

    index: int  # a step's first point after; a drift's first point
    end: int | None  # a drift's first point at the level it reached
    before: float
    after: float
    change_pct: float
    p_value: float
    noisy: bool  # the noise of the window that found it is too high to alert on its own

    @property
    def shape(self) -> str:
        return "step" if self.end is None else "drift"


def spans(n: int) -> list[Span]:
    """The windows of a series of n points (one, the whole series, up to WINDOW)."""
    if n <= WINDOW:
        return [Span(0, n, 0, n)]
    count = math.ceil((n - WINDOW) / STRIDE) + 1
    starts = [k * STRIDE for k in range(count)]
    seams = [start + STRIDE + STRIDE // 2 for start in starts[:-1]]
    owns = list(zip([0, *seams], [*seams, n], strict=True))
    return [
        Span(start, min(start + WINDOW, n), own_start, own_end)
        for start, (own_start, own_end) in zip(starts, owns, strict=True)
    ]


def reread_from(n: int) -> int:
    """Where an append to a series of n points needs its points again: the start of the
    window before the first one the new points fall into (that window's findings at
    their seam depend on both). 0 when the series is examined whole."""
    if n <= WINDOW:
        return 0
    first_changed = (n - WINDOW) // STRIDE + 1  # the first window that does not end by n
    return (first_changed - 1) * STRIDE


def kept_before(n: int, min_segment: int) -> int:
    """After an append to a series of n points, the findings it had before this position
    stay as stored: no window that sees the new points can move them."""
    return reread_from(n) + STRIDE + STRIDE // 2 - 2 * min_segment if n > WINDOW else 0


def findings(seen: detect.Examined, offset: int = 0) -> tuple[list[Finding], list[Finding]]:
    """A window's steps and drifts, at positions in the series."""
    noisy = seen.noise.too_noisy
    steps = [
        Finding(c.index + offset, None, c.before, c.after, c.change_pct, c.p_value, noisy)
        for c in seen.change_points
    ]
    drifts = [
        Finding(d.start + offset, d.end + offset, d.before, d.after, d.change_pct, d.p_value, noisy)
        for d in seen.drifts
    ]
    return steps, drifts


def combine(
    windows: list[Span],
    seen: list[detect.Examined],
    min_change: float,
    min_segment: int,
    earlier_drifts: Sequence[tuple[int, int]] = (),
    keep_from: int = 0,
) -> list[Finding]:
    """The findings of a series from those of its windows, in order: each window's on its
    own side of its seams, paired across them (module docstring), at least `min_change`
    percent (a smaller change is no change point). `windows` may be the last ones only
    (an append): `earlier_drifts` are then the (start, end) of the drifts stored before,
    and only findings from `keep_from` on are returned."""
    reach = 2 * min_segment
    parts = [findings(s, span.start) for span, s in zip(windows, seen, strict=True)]
    steps: list[Finding] = []
    last = len(windows) - 1
    for k, (span, (own, _)) in enumerate(zip(windows, parts, strict=True)):
        # Its own side of each seam; within `reach` of a seam, the pairing decides. (The
        # seam before the first window given, on an append, lies before `keep_from`.)
        low = span.own_start + reach if span.own_start else 0
        high = span.own_end - reach if k < last else span.own_end
        steps.extend(f for f in own if low <= f.index < high)
        if k < last:
            steps.extend(_across_seam(own, parts[k + 1][0], span.own_end, reach))
    drifts: list[Finding] = []
    taken = list(earlier_drifts)
    for span, (_, own) in zip(windows, parts, strict=True):
        for d in own:
            if not span.own_start <= d.index < span.own_end or not abs(d.change_pct) >= min_change:
                continue
            if any(d.index < end and start < (d.end or d.index) for start, end in taken):
                continue
            taken.append((d.index, d.end or d.index))
            drifts.append(d)
    kept = [f for f in steps + drifts if abs(f.change_pct) >= min_change and f.index >= keep_from]
    return sorted(kept, key=lambda f: f.index)


def _across_seam(
    earlier: list[Finding], later: list[Finding], seam: int, reach: int
) -> list[Finding]:
    """The steps within `reach` of a seam: paired nearest first; a pair is one step, at
    the earlier window's place; an unpaired step stays only on its window's side."""
    left = [f for f in earlier if seam - reach <= f.index < seam + reach]
    right = [f for f in later if seam - reach <= f.index < seam + reach]
    pairs = sorted(
        (abs(a.index - b.index), i, j)
        for i, a in enumerate(left)
        for j, b in enumerate(right)
        if abs(a.index - b.index) < reach
    )
    paired_left: set[int] = set()
    paired_right: set[int] = set()
    for _, i, j in pairs:
        if i not in paired_left and j not in paired_right:
            paired_left.add(i)
            paired_right.add(j)
    out = [a for i, a in enumerate(left) if i in paired_left or a.index < seam]
    out += [b for j, b in enumerate(right) if j not in paired_right and b.index >= seam]
    return out
