"""`python -m perfboard check`: a PR's benchmark results against a baseline, as a CI gate.

    python -m perfboard check RESULTS... [--head-sha SHA | --base-sha SHA | --base V|TAG|DATE]
                              [--pr URL] [--post PR_URL [--status]] [--fail-on regression]

What it says, per series (`series_key`: the PR's records are matched to stored series by
their identity, as an ingest would store them):

- base and PR values, the change in % and in words (perfboard.wording: "1.08x slower
  than base", by the series' direction). The PR's value is the median of its values
  (repeated records of one series in the PR's files: several runs). The base is the
  series' level at the baseline: the median of the recent points of its last segment
  (since its last step or drift, at most detect.RECENT, the baseline's own values
  included), for one noisy point is a poor base; but the baseline's own values when the
  newest of them is already outside the noise of that level (a step the base commit made
  itself, too fresh for segmentation to see: not the PR's doing);
- whether the change exceeds the series' noise and its minimum effect, and a verdict:
  regression, improvement, unchanged, new, gone, or too noisy to tell.

The rules are change detection's (perfboard/detect.py, alerts.py), so the gate and the
Alerts page never disagree on what a series' noise is:

- **Noise**: cv, the robust coefficient of variation of one point, as `detect.noise`
  measures it for `series_noise` (the MAD of differences within segments, checked against
  their trimmed root mean square), over the series' history up to the baseline (its last
  HISTORY ok points at or before the baseline's point): a check against an old merge base
  is judged by the noise the series had then. Where that history is shorter than 3
  points, the cv the store's detection kept in `series_noise` (the whole history's), if
  any. A change is beyond the noise when |z| exceeds the two-sided normal quantile at the
  confidence (0.99 as `perfboard detect`), z = change / (cv * sqrt(v(k) + v(m))): v(n)
  is the variance of the median of n points in units of one point's (1, 1/2, then
  pi / 2n), k the points the base is the median of and m the PR's values. When the PR
  holds 3 or more values of a series, their own spread widens its side if it is larger
  than the history's (a PR that makes a benchmark noisier is not judged by the old noise).
- **Minimum effect**: perfboard.toml's (settings.DetectSettings.min_change_for; 1 %
  unless set), as detection's: a change smaller than it is "unchanged" however clear.
- **Verdicts**: beyond both: regression or improvement by the direction; at least the
  minimum effect but within the noise: "too noisy to tell" (this check cannot see a
  change of that size on this series; the row says how large one must be); below the
  minimum effect: unchanged. Without any history (fewer than 3 points and no stored
  noise) a change of the minimum effect is "too noisy to tell" with the note "no history",
  never guessed at. A PR value that ran out of memory where the base measured one is a
  regression; one that errored or is missing, gone.
- **Gone** is only said of series of the benchmarks and devices the PR ran (project,
  benchmark, device): a PR run of one model does not make every other model gone.

The baseline, first that applies (`choose_baseline`): `--base-sha`, or the merge base of
`--head-sha` in the walked history (`ingest git`: the newest mainline commit reachable
from the head through `commits.parents`; a head on the mainline is compared with the
commit before it), as the measurements at that version (matched on a hash prefix too; a
commit no one measured is replaced by its nearest measured mainline ancestor, and the
description says so); `--base` a version, release tag or date (as Compare's sides:
queries.compare_side); else the latest values in the store.

The PR's values are never written to `measurements` (the main branch's series must not
change): a run is kept in `check_runs` / `check_results` (migration 0009), so it can be
read back and the check reproduced. The comment a run posts carries MARKER, by which the
next run finds and edits it in place (one comment per PR).

Pure functions (pr_sides, compare, claims_beside, to_markdown, to_json) take and give
plain data; the store is read and written in the functions that take a connection; GitHub
is reached through perfboard/github_api.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from statistics import NormalDist
from typing import Any
from urllib.parse import urlencode

import duckdb
import numpy as np
import pyarrow as pa

from perfboard import db, detect
from perfboard.errors import UsageError
from perfboard.links import safe_https
from perfboard.markup import gfm_escape
from perfboard.model import SERIES_IDENTITY, Measurement
from perfboard.queries.compare import compare_side
from perfboard.queries.labels import series_label
from perfboard.settings import DetectSettings
from perfboard.wording import worded

MARKER = "<!-- perfboard-check -->"
FAIL_ON = ("regression", "any", "never")
# In the order a reader wants them: what to act on first.
VERDICTS = ("regression", "improvement", "too noisy to tell", "gone", "new", "unchanged")
CONFIDENCE = 0.99  # as perfboard detect (alerts.CONFIDENCE), without importing the detector's kin
HISTORY = 200  # points of history up to the baseline the noise is measured on
MIN_HISTORY = 3  # fewer points say nothing of the noise (detect.noise: cv NaN)
SHORT_TABLE = 10  # rows of the table above the fold
STATUS_CONTEXT = "perfboard/check"
COMMENT_LIMIT = 65536  # GitHub's longest comment body
_HASH_PATTERN = "[0-9a-fA-F]{7,40}"
_IDENTITY = SERIES_IDENTITY
_MEASUREMENT_FIELDS = frozenset(f.name for f in fields(Measurement))


# -- the two sides ------------------------------------------------------------------------------


@dataclass(slots=True)
class Side:
    """One series at one side of the check: its identity and what it measured there."""

    key: str  # perfboard.model.series_key of the identity
    identity: dict[str, str]  # the _IDENTITY columns; params and testbed as canonical JSON
    values: list[float] = field(default_factory=list)  # ok values
    statuses: list[str] = field(default_factory=list)  # of the values that are not ok
    series_id: int | None = None  # in the store (the baseline's side)
    version: str | None = None
    measured_at: datetime | None = None  # the newest of its values

    @property
    def status(self) -> str:
        return "ok" if self.values else (self.statuses[0] if self.statuses else "missing")


def pr_sides(records: Iterable[Mapping[str, Any]], project: str = "") -> dict[str, Side]:
    """The PR's series from the records `ingest auto --dry-run` prints (pipeline.preview):
    a parsed document's measurements (Measurement's fields) and a result file's records
    (its fields as text, as staged). `project`: of records that name none, as the ingest's
    --project. Keyed by series_key, computed as the ingest computes it."""
    sides: dict[str, Side] = {}
    for record in records:
        if record.get("kind") != "measurement":
            continue
        m = _measurement(record, project)
        key = m.series_key()
        side = sides.get(key)
        if side is None:
            identity = dict(zip(_IDENTITY, m.series_identity(), strict=True))
            side = sides[key] = Side(key, identity)
        if m.status == "ok" and m.value is not None and math.isfinite(m.value):
            side.values.append(float(m.value))
        else:
            side.statuses.append(m.status)
        side.version = side.version or m.version
        if m.measured_at is not None and (
            side.measured_at is None or m.measured_at > side.measured_at
        ):
            side.measured_at = m.measured_at
    return sides


def _measurement(record: Mapping[str, Any], project: str) -> Measurement:
    if "schema" in record:  # perfboard's result format, staged as text (ingest/results.py)
        params = json.loads(record.get("params") or "{}")
        testbed = json.loads(record.get("testbed") or "{}")
        value = record.get("value")
        return Measurement(
            benchmark=record.get("benchmark") or "",
            metric=record.get("metric") or "",
            value=None if value is None else float(value),
            unit=record.get("unit") or "",
            task=record.get("task") or "",
            direction=record.get("direction") or "lower",  # type: ignore[arg-type]
            framework=record.get("framework") or "",
            device=record.get("device") or "",
            params=params if isinstance(params, dict) else {},
            # As the results ingest keys a series: testbed values as text.
            testbed={k: str(v) for k, v in testbed.items()} if isinstance(testbed, dict) else {},
            project=record.get("project") or project,
            version=record.get("version"),
            measured_at=_time(record.get("time")),
            status=record.get("status") or "ok",  # type: ignore[arg-type]
        )
    m = Measurement(**{k: v for k, v in record.items() if k in _MEASUREMENT_FIELDS})
    m.project = m.project or project
    return m


def _time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def in_scope(base: Mapping[str, Side], pr: Mapping[str, Side]) -> dict[str, Side]:
    """The baseline's series a PR run could have measured: those of a (project, benchmark,
    device) the PR ran. The rest of the store is not "gone" from a run that never ran it."""
    ran = {_scope(s) for s in pr.values()}
    return {k: s for k, s in base.items() if k in pr or _scope(s) in ran}


def _scope(side: Side) -> tuple[str, str, str]:
    return (side.identity["project"], side.identity["benchmark"], side.identity["device"])


# -- the comparison (pure) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeriesNoise:
    """What the check knows of one series' noise and minimum effect."""

    cv: float  # one point's robust coefficient of variation; NaN: unknown
    points: int  # history points it was measured on
    too_noisy: bool  # detection's flag: its smallest visible step is above 10 %
    min_change_pct: float  # the minimum effect (perfboard.toml)
    source: str = ""  # "history" (up to the baseline), "series_noise" (the store's), "" none
    # The base: the series' level at the baseline (the median of the recent points of its
    # last segment, the baseline's own values included) and how many points it is the
    # median of; None: the median of the baseline's own values.
    level: float | None = None
    level_n: int = 0


@dataclass(slots=True)
class Row:
    key: str
    series_id: int | None
    label: str
    identity: dict[str, str]
    base: float | None
    pr: float | None
    base_n: int
    pr_n: int
    change_pct: float | None
    words: str
    z: float | None  # the change in units of its noise
    detectable_pct: float | None  # the smallest change this check can tell on this series
    min_change_pct: float | None
    exceeds_noise: bool | None  # None: its noise is unknown, or nothing to compare
    exceeds_min_effect: bool | None
    noisy: bool
    verdict: str
    note: str = ""

    @property
    def unit(self) -> str:
        return self.identity["unit"]


def _median_variance(n: int) -> float:
    """The variance of the median of n points, in units of one point's variance: 1 and
    1/2 (a median of two is their mean), then pi / 2n (its large-sample value)."""
    return 1.0 if n <= 1 else 0.5 if n == 2 else math.pi / (2.0 * n)


def _spread_cv(values: list[float]) -> float:
    """Robust cv of a side's own values (MAD about the median, Gaussian-scaled)."""
    x = np.asarray(values, dtype=float)
    level = float(np.median(x))
    if level == 0:
        return math.nan
    return float(1.482602218505602 * np.median(np.abs(x - level)) / abs(level))


def compare(
    pr: Mapping[str, Side],
    base: Mapping[str, Side],
    noise: Mapping[str, SeriesNoise],
    confidence: float = CONFIDENCE,
    default_min_change: float = 1.0,
) -> list[Row]:
    """One row per series either side holds (module docstring: the rules), in the order
    to act on: regressions (largest first), improvements, too noisy to tell, gone, new,
    unchanged. `noise`: by series key, for the base's series; a series without one is
    judged with no history and `default_min_change`."""
    z_crit = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    rows = []
    for key in dict.fromkeys([*pr, *base]):
        p, b = pr.get(key), base.get(key)
        known = noise.get(key) or SeriesNoise(math.nan, 0, False, default_min_change)
        rows.append(_row(p, b, known, z_crit))
    labels = [r.label for r in rows]
    for row in rows:  # two series named alike (they differ in task or testbed): tell apart
        if labels.count(row.label) > 1:
            row.label += f" ({row.identity['task']}, testbed {row.identity['testbed']})"
    return sorted(rows, key=_order)


def _order(row: Row) -> tuple[int, float, str]:
    change = abs(row.change_pct) if row.change_pct is not None else -1.0
    return (VERDICTS.index(row.verdict), -change, row.label)


def _row(p: Side | None, b: Side | None, noise: SeriesNoise, z_crit: float) -> Row:
    side = p if p is not None else b
    assert side is not None
    identity = side.identity
    label = series_label(
        identity["benchmark"],
        identity["metric"],
        identity["framework"],
        identity["device"],
        identity["params"],
    )
    base_values = b.values if b is not None else []
    level = noise.level if noise.level is not None and base_values else None
    row = Row(
        key=side.key,
        series_id=b.series_id if b is not None else None,
        label=label,
        identity=identity,
        base=level if level is not None else float(np.median(base_values)) if base_values else None,
        pr=float(np.median(p.values)) if p is not None and p.values else None,
        base_n=noise.level_n if level is not None else len(base_values),
        pr_n=len(p.values) if p is not None else 0,
        change_pct=None,
        words="",
        z=None,
        detectable_pct=None,
        min_change_pct=noise.min_change_pct,
        exceeds_noise=None,
        exceeds_min_effect=None,
        noisy=noise.too_noisy,
        verdict="unchanged",
    )
    if row.base is None:
        row.verdict = "new"
        if b is not None:
            row.note = f"the baseline measured {b.status}"
        elif p is not None and not p.values:
            row.note = f"the PR measured {p.status}"
        else:
            row.note = "not measured at the baseline"
        return row
    if p is None or row.pr is None:
        status = "" if p is None else p.status
        row.verdict = "regression" if status == "oom" else "gone"
        row.note = "not in the PR's results" if p is None else f"the PR measured {status}"
        return row
    if row.base <= 0:
        row.verdict = "too noisy to tell"
        row.note = "a base of 0 or less has no relative change"
        return row
    ratio = row.pr / row.base
    row.change_pct = (ratio - 1.0) * 100.0
    row.words = worded(ratio, identity["direction"], "", "base").strip()
    row.exceeds_min_effect = abs(row.change_pct) >= noise.min_change_pct
    cv = noise.cv
    if not math.isfinite(cv):
        if row.exceeds_min_effect:
            row.verdict = "too noisy to tell"
            row.note = f"no history: {noise.points} point(s) up to the baseline, noise unknown"
        return row
    pr_cv = max(cv, _spread_cv(p.values)) if len(p.values) >= 3 else cv
    if math.isnan(pr_cv):
        pr_cv = cv
    spread = 100.0 * math.sqrt(
        cv * cv * _median_variance(row.base_n) + pr_cv * pr_cv * _median_variance(row.pr_n)
    )
    if spread > 0:
        row.z = row.change_pct / spread
    else:
        row.z = 0.0 if row.change_pct == 0 else math.copysign(math.inf, row.change_pct)
    row.detectable_pct = z_crit * spread
    row.exceeds_noise = abs(row.z) > z_crit
    worse = ratio > 1 if identity["direction"] == "lower" else ratio < 1
    if row.exceeds_noise and row.exceeds_min_effect:
        row.verdict = "regression" if worse else "improvement"
    elif row.exceeds_min_effect:
        row.verdict = "too noisy to tell"
        row.note = f"within the noise: telling takes ±{row.detectable_pct:.1f} %"
    return row


def fails(rows: Iterable[Row], fail_on: str) -> bool:
    """Whether the gate fails: on a regression (default), on any change either way
    (regression or improvement: a baseline to update), or never."""
    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    failing = {"regression": {"regression"}, "any": {"regression", "improvement"}, "never": set()}
    return any(r.verdict in failing[fail_on] for r in rows)


# -- the PR's own claims (pure) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClaimBeside:
    raw: str
    claimed: str  # what it claims, in words
    claimed_pct: float | None  # as a change in % (negative: faster)
    measured: str  # what was measured beside it
    measured_pct: float | None
    series: str  # the series it was set beside ("" none)


def claims_beside(claims: Iterable[Mapping[str, Any]], rows: list[Row]) -> list[ClaimBeside]:
    """Each claim of the PR's description beside what this run measured: a "from 10 ms to
    9.5 ms" beside the series (in ms) whose base is nearest 10 ms, when one is within 10 %
    of it; a claimed percent or speedup beside the largest improvement measured."""
    measured = [r for r in rows if r.change_pct is not None and r.base is not None]
    out = []
    for claim in claims:
        before, after = _number(claim.get("before")), _number(claim.get("after"))
        percent, speedup = _number(claim.get("percent")), _number(claim.get("speedup"))
        raw = str(claim.get("raw") or "")
        if before and after is not None:
            claimed_pct = (after - before) / before * 100.0
            claimed = f"{before:.4g} -> {after:.4g} ms ({claimed_pct:+.1f} %)"
            near = [r for r in measured if r.unit == "ms" and r.base]
            best = min(near, key=lambda r: abs(math.log(r.base / before)), default=None)  # type: ignore[operator]
            if best is not None and abs(math.log(best.base / before)) <= math.log(1.1):  # type: ignore[operator]
                out.append(
                    ClaimBeside(
                        raw,
                        claimed,
                        claimed_pct,
                        f"{best.base:.4g} -> {best.pr:.4g} ms ({best.change_pct:+.1f} %)",
                        best.change_pct,
                        best.label,
                    )
                )
            else:
                out.append(
                    ClaimBeside(
                        raw, claimed, claimed_pct, f"no series near {before:.4g} ms", None, ""
                    )
                )
            continue
        if percent is not None:
            claimed_pct, claimed = -percent, f"{percent:.4g} % faster"
        elif speedup:
            claimed_pct, claimed = (1.0 / speedup - 1.0) * 100.0, f"{speedup:.4g}x faster"
        else:
            continue
        gains = [r for r in measured if r.verdict == "improvement"]
        best = max(gains, key=lambda r: abs(r.change_pct or 0.0), default=None)
        if best is None:
            out.append(ClaimBeside(raw, claimed, claimed_pct, "no improvement measured", None, ""))
        else:
            text = f"largest improvement {best.change_pct:+.1f} % ({best.words})"
            out.append(ClaimBeside(raw, claimed, claimed_pct, text, best.change_pct, best.label))
    return out


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# -- the baseline (reads the store) -------------------------------------------------------------


@dataclass(slots=True)
class Baseline:
    kind: str  # version, release, date (as Compare's sides), or latest
    value: str  # what names it there: a commit, a tag, a date
    description: str  # which baseline, and why: said on stderr and in the comment
    sides: dict[str, Side]


def choose_baseline(
    conn: duckdb.DuckDBPyConnection,
    *,
    base_sha: str | None = None,
    head_sha: str | None = None,
    base: str | None = None,
) -> Baseline:
    """The baseline, first that applies (module docstring). UsageError when it holds no
    value at all: there is nothing to check against."""
    why = ""
    if base_sha:
        return _at_commit(conn, base_sha.strip().lower(), f"--base-sha {base_sha.strip()[:12]}")
    if head_sha:
        found, why = merge_base(conn, head_sha.strip().lower())
        if found is not None:
            return _at_commit(conn, found, why)
    if base:
        named = _named(conn, base.strip())
        named.description = f"{why}; {named.description}" if why else named.description
        return named
    latest = conn.execute(
        "SELECT max(measured_at) FROM measurements WHERE status = 'ok'"
    ).fetchone()[0]
    if latest is None:
        raise UsageError("the store holds no measurements: there is no baseline to check against")
    day = f"{latest:%Y-%m-%d}"
    text = f"the latest values in the store (up to {day})"
    return Baseline("date", day, f"{why}; {text}" if why else text, _sides(conn, "date", day))


def merge_base(conn: duckdb.DuckDBPyConnection, head: str) -> tuple[str | None, str]:
    """The merge base of `head` in the walked history, and how it was found; (None, why
    not) when the history does not hold the head."""
    found = conn.execute(
        "SELECT DISTINCT repo, sha FROM commits WHERE starts_with(sha, $head) LIMIT 2",
        {"head": head},
    ).fetchall()
    if not found:
        return None, f"head {head[:12]} is not in the walked history (`python -m ingest git`)"
    if len(found) > 1:
        raise UsageError(f"--head-sha {head}: names more than one commit; give more digits")
    repo, sha = found[0]
    graph = {
        s: (list(parents), mainline, at)
        for s, parents, mainline, at in conn.execute(
            "SELECT sha, parents, mainline, committed_at FROM commits WHERE repo = ?", [repo]
        ).fetchall()
    }
    parents, on_mainline, _ = graph[sha]
    if on_mainline:
        if not parents:
            return None, f"head {sha[:12]} is the first commit of {repo}: nothing before it"
        return parents[0], f"the commit before head {sha[:12]} on {repo}'s mainline"
    # The newest mainline commit the head reaches: git's merge base with the mainline (a
    # branch that merged the mainline in reaches the commit it merged, the newest).
    reached: list[str] = []
    seen, todo = {sha}, [sha]
    while todo:
        current = todo.pop()
        for parent in graph.get(current, ([], False, None))[0]:
            if parent in seen or parent not in graph:
                continue
            seen.add(parent)
            if graph[parent][1]:
                reached.append(parent)
            else:
                todo.append(parent)
    if not reached:
        return None, f"head {sha[:12]} reaches no mainline commit of {repo} in the walked history"
    newest = max(reached, key=lambda s: graph[s][2])
    return newest, f"merge base {newest[:12]} of head {sha[:12]} ({repo})"


def _at_commit(conn: duckdb.DuckDBPyConnection, sha: str, why: str) -> Baseline:
    sides = _sides(conn, "version", sha)
    if sides:
        return Baseline("version", sha, why, sides)
    ancestor = _measured_ancestor(conn, sha)
    if ancestor is None:
        raise UsageError(
            f"{why}: no measurements at {sha[:12]}, nor at a mainline commit before it:"
            " there is no baseline to check against"
        )
    text = f"{why}, not measured; its nearest measured mainline ancestor {ancestor[:12]}"
    return Baseline("version", ancestor, text, _sides(conn, "version", ancestor))


def _measured_ancestor(conn: duckdb.DuckDBPyConnection, sha: str) -> str | None:
    """The nearest commit before `sha` on its first-parent chain whose version was measured
    (nightly runs do not measure every commit)."""
    row = conn.execute(
        "SELECT repo FROM commits WHERE starts_with(sha, $sha) LIMIT 1", {"sha": sha}
    ).fetchone()
    if row is None:
        return None
    first_parent = dict(
        conn.execute("SELECT sha, parents[1] FROM commits WHERE repo = ?", [row[0]]).fetchall()
    )
    measured = {
        v
        for (v,) in conn.execute(
            "SELECT DISTINCT lower(version) FROM measurements"
            " WHERE status = 'ok' AND regexp_full_match(version, ?)",
            [_HASH_PATTERN],
        ).fetchall()
    }
    lengths = sorted({len(v) for v in measured})
    current = next((s for s in first_parent if s.startswith(sha)), None)
    steps = 0
    while current is not None and steps <= len(first_parent):
        current = first_parent.get(current)
        steps += 1
        if current is not None and any(current[:n] in measured for n in lengths):
            return current
    return None


def _named(conn: duckdb.DuckDBPyConnection, value: str) -> Baseline:
    """--base: a version as recorded (or a hash prefix), else a release tag, else a date."""
    sides = _sides(conn, "version", value)
    if sides:
        return Baseline("version", value, f"version {value}", sides)
    tagged = conn.execute("SELECT count(*) FROM releases WHERE tag = ?", [value]).fetchone()[0]
    if tagged:
        sides = _sides(conn, "release", value)
        if not sides:
            raise UsageError(f"--base {value}: nothing was measured at or before that release")
        return Baseline("release", value, f"release {value}", sides)
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise UsageError(
            f"--base {value!r}: no measured version, release tag or date (YYYY-MM-DD) of that name"
        ) from None
    sides = _sides(conn, "date", value)
    if not sides:
        raise UsageError(f"--base {value}: nothing was measured by the end of that day")
    return Baseline("date", value, f"the latest values on or before {value}", sides)


def _sides(conn: duckdb.DuckDBPyConnection, kind: str, value: str) -> dict[str, Side]:
    """Each series' ok values at one side (queries.compare_side), by series key."""
    frame = compare_side(conn, kind, value)
    if frame.empty:
        return {}
    ids = sorted({int(i) for i in frame["series_id"]})
    columns = ", ".join(f"{c}::VARCHAR" if c in ("params", "testbed") else c for c in _IDENTITY)
    about = {
        row[0]: row[1:]
        for row in conn.execute(
            f"SELECT series_id, series_key, {columns} FROM series"
            " WHERE list_contains($ids, series_id)",
            {"ids": ids},
        ).fetchall()
    }
    sides: dict[str, Side] = {}
    for series_id, value_, version, measured_at in frame[
        ["series_id", "value", "version", "measured_at"]
    ].itertuples(index=False):
        key, *identity = about[int(series_id)]
        side = sides.get(key)
        if side is None:
            side = sides[key] = Side(
                key, dict(zip(_IDENTITY, identity, strict=True)), series_id=int(series_id)
            )
        side.values.append(float(value_))
        side.version = version if isinstance(version, str) else side.version
        moment = None if measured_at is None or measured_at != measured_at else measured_at
        if moment is not None:
            moment = moment.to_pydatetime() if hasattr(moment, "to_pydatetime") else moment
            if side.measured_at is None or moment > side.measured_at:
                side.measured_at = moment
    return sides


def noise_of(
    conn: duckdb.DuckDBPyConnection,
    base: Mapping[str, Side],
    rules: DetectSettings,
    confidence: float = CONFIDENCE,
) -> dict[str, SeriesNoise]:
    """Each base series' noise (module docstring): from its last HISTORY ok points at or
    before its baseline point, else the store's series_noise; and its minimum effect."""
    stored_sides = [s for s in base.values() if s.series_id is not None]
    if not stored_sides:
        return {}
    ids = [s.series_id for s in stored_sides]
    history: dict[int, list[float]] = {}
    for series_id, value in conn.execute(
        """
        WITH cut AS (SELECT unnest($ids) AS series_id, unnest($ats) AS at)
        SELECT series_id, value FROM (
            SELECT m.series_id, m.value, m.measured_at, m.source_id, m.line,
                   row_number() OVER (PARTITION BY m.series_id
                       ORDER BY m.measured_at DESC NULLS LAST, m.source_id DESC, m.line DESC)
                       AS back
            FROM measurements m JOIN cut c USING (series_id)
            WHERE m.status = 'ok' AND isfinite(m.value)
              AND (c.at IS NULL OR m.measured_at <= c.at)
        )
        WHERE back <= $n
        ORDER BY series_id, measured_at NULLS FIRST, source_id, line
        """,
        {"ids": ids, "ats": [s.measured_at for s in stored_sides], "n": HISTORY},
    ).fetchall():
        history.setdefault(int(series_id), []).append(float(value))
    stored = {
        int(series_id): (cv, bool(too_noisy), int(points))
        for series_id, cv, too_noisy, points in conn.execute(
            "SELECT series_id, cv, too_noisy, points FROM series_noise"
            " WHERE list_contains($ids, series_id)",
            {"ids": ids},
        ).fetchall()
    }
    out = {}
    for side in stored_sides:
        assert side.series_id is not None
        minimum = rules.min_change_for(
            side.series_id, side.identity["project"], side.identity["metric"]
        )
        points = history.get(side.series_id, [])
        seen = (
            detect.examine(np.asarray(points), confidence, min_change_pct=minimum)
            if len(points) >= MIN_HISTORY
            else None
        )
        if seen is not None and math.isfinite(seen.noise.cv):
            level, level_n = _level(points, seen, side.values)
            out[side.key] = SeriesNoise(
                seen.noise.cv,
                len(points),
                seen.noise.too_noisy,
                minimum,
                "history",
                level,
                level_n,
            )
        elif (
            side.series_id in stored
            and stored[side.series_id][0] is not None
            and math.isfinite(stored[side.series_id][0])
        ):
            cv, too_noisy, _ = stored[side.series_id]
            out[side.key] = SeriesNoise(float(cv), len(points), too_noisy, minimum, "series_noise")
        else:
            out[side.key] = SeriesNoise(math.nan, len(points), False, minimum)
    return out


def _level(points: list[float], seen: detect.Examined, own: list[float]) -> tuple[float, int]:
    """The base of a series: the median of the last RECENT points of the last segment of
    its history up to the baseline (after its last step, or the drift it arrived by), for
    one noisy point at the baseline is a poor base; unless the baseline's own newest value
    is already outside the noise of that level (a step too fresh for segmentation to see,
    made by the base commit itself: it is not the PR's), then its own values."""
    if seen.latest.outlier and own:
        return float(np.median(own)), len(own)
    start = max([0, *(c.index for c in seen.change_points), *(d.end for d in seen.drifts)])
    recent = points[start:][-detect.RECENT :]
    return float(np.median(recent)), len(recent)


def pr_claims(conn: duckdb.DuckDBPyConnection, pr_url: str) -> list[dict[str, Any]]:
    """The claims the store holds of this PR's description (queries.pr_claims)."""
    from perfboard.github_api import parse_issue_url
    from perfboard.queries.prs import pr_claims as claims_of_prs

    repo, number = parse_issue_url(pr_url)
    frame = claims_of_prs(conn)
    if frame.empty:
        return []
    mine = frame[(frame.pr_repo.str.lower() == repo.lower()) & (frame.pr_number == number)]
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in mine.to_dict("records")
    ]


# -- one check -------------------------------------------------------------------------------


@dataclass(slots=True)
class Check:
    baseline: Baseline
    rows: list[Row]
    claims: list[ClaimBeside]
    fail_on: str
    confidence: float
    pr_url: str | None = None
    head_sha: str | None = None
    pr_version: str | None = None  # what the PR measured, for the Compare link
    documents: int = 0

    @property
    def failed(self) -> bool:
        return fails(self.rows, self.fail_on)

    def count(self, verdict: str) -> int:
        return sum(1 for r in self.rows if r.verdict == verdict)

    @property
    def verdict(self) -> str:
        """'failed' or 'passed'."""
        return "failed" if self.failed else "passed"


def run(
    conn: duckdb.DuckDBPyConnection,
    pr: dict[str, Side],
    rules: DetectSettings,
    *,
    base_sha: str | None = None,
    head_sha: str | None = None,
    base: str | None = None,
    pr_url: str | None = None,
    fail_on: str = "regression",
    confidence: float = CONFIDENCE,
    documents: int = 0,
) -> Check:
    """The check of the PR's series `pr` against the baseline chosen in the store."""
    if fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    baseline = choose_baseline(conn, base_sha=base_sha, head_sha=head_sha, base=base)
    baseline.sides = in_scope(baseline.sides, pr)
    noise = noise_of(conn, baseline.sides, rules, confidence)
    rows = compare(pr, baseline.sides, noise, confidence, rules.min_change_pct)
    claims = claims_beside(pr_claims(conn, pr_url), rows) if pr_url else []
    versions = {s.version for s in pr.values() if s.version}
    pr_version = head_sha or (versions.pop() if len(versions) == 1 else None)
    return Check(
        baseline, rows, claims, fail_on, confidence, pr_url, head_sha, pr_version, documents
    )


# -- writing it (pure) --------------------------------------------------------------------------


def compare_url(check: Check, dashboard: str | None) -> str | None:
    """The dashboard's Compare view of the two sides (pages/compare.py's URL: a_kind, a,
    b_kind, b); None without a dashboard, or when the PR's side has no version to name."""
    base = safe_https(dashboard.rstrip("/")) if dashboard else None
    if base is None:
        return None
    params = {"a_kind": check.baseline.kind, "a": check.baseline.value}
    if check.pr_version:
        params |= {"b_kind": "version", "b": check.pr_version}
    return f"{base}/compare?{urlencode(params)}"


def summary(check: Check) -> str:
    """The one-line verdict."""
    regressions = [r for r in check.rows if r.verdict == "regression"]
    counts = ", ".join(_counted(check.count(v), v) for v in VERDICTS)
    if regressions:
        worst = regressions[0]
        change = f" {worst.change_pct:+.1f} %" if worst.change_pct is not None else ""
        head = f"{_counted(len(regressions), 'regression')}, the largest {gfm_escape(worst.label)}"
        head += change
    else:
        head = "no regression"
    return (
        f"**perfboard check {check.verdict}** (--fail-on {check.fail_on}): {head}."
        f" {len(check.rows)} series: {counts}."
    )


def _counted(n: int, verdict: str) -> str:
    plural = verdict in ("regression", "improvement") and n != 1
    return f"{n} {verdict}{'s' if plural else ''}"


def _value(value: float | None, unit: str, n: int) -> str:
    if value is None:
        return "–"
    median = f" (median of {n})" if n > 1 else ""
    return f"{value:.4g} {gfm_escape(unit)}{median}".strip()


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.1f} %" if signed else f"{value:.1f} %"


def _verdict_cell(row: Row) -> str:
    text = f"**{row.verdict}**" if row.verdict in ("regression", "improvement") else row.verdict
    extras = [gfm_escape(row.note)] if row.note else []
    if row.noisy:
        extras.append("noisy series")
    return text + (f" ({'; '.join(extras)})" if extras else "")


def to_markdown(check: Check, dashboard: str | None = None, full_rows: int | None = None) -> str:
    """The PR comment: MARKER, the one-line verdict, the baseline, the largest changes in a
    short table, every series in a <details> table (its first `full_rows` rows, when a
    comment must be cut to GitHub's limit), the PR's claims beside what was measured, and a
    link to the dashboard's Compare view. Text from documents goes through gfm_escape."""
    out = [MARKER, summary(check), ""]
    pr = f"PR: {sum(1 for r in check.rows if r.pr is not None)} series"
    if check.documents:
        pr += f" from {check.documents} document{'s' if check.documents > 1 else ''}"
    if check.head_sha:
        pr += f" at {gfm_escape(check.head_sha[:12])}"
    out += [f"Baseline: {gfm_escape(check.baseline.description)}. {pr}.", ""]
    changed = [r for r in check.rows if r.verdict != "unchanged"][:SHORT_TABLE]
    if changed:
        out += ["| series | base | PR | change | in words | verdict |", "|---|---|---|---|---|---|"]
        out += [
            f"| {gfm_escape(r.label)} | {_value(r.base, r.unit, r.base_n)} |"
            f" {_value(r.pr, r.unit, r.pr_n)} | {_pct(r.change_pct)} | {gfm_escape(r.words)} |"
            f" {_verdict_cell(r)} |"
            for r in changed
        ]
    else:
        out.append("No series moved beyond its noise and its minimum effect.")
    out += ["", f"<details><summary>All {len(check.rows)} series</summary>", ""]
    out += [
        "| series | base | PR | change | in words | noise: ± to tell | min effect | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    shown = check.rows if full_rows is None else check.rows[:full_rows]
    out += [
        f"| {gfm_escape(r.label)} | {_value(r.base, r.unit, r.base_n)} |"
        f" {_value(r.pr, r.unit, r.pr_n)} | {_pct(r.change_pct)} | {gfm_escape(r.words)} |"
        f" {_pct(r.detectable_pct, signed=False)} | {_pct(r.min_change_pct, signed=False)} |"
        f" {_verdict_cell(r)} |"
        for r in shown
    ]
    if len(shown) < len(check.rows):
        out += [
            "",
            f"_{len(check.rows) - len(shown)} more series left out: see the JSON (--json)._",
        ]
    out += ["", "</details>", ""]
    if check.claims:
        out += ["What the PR's description claims, beside what was measured:", ""]
        out += ["| claim | claimed | measured | series |", "|---|---|---|---|"]
        out += [
            f"| {gfm_escape(c.raw)} | {c.claimed} | {gfm_escape(c.measured)} |"
            f" {gfm_escape(c.series)} |"
            for c in check.claims
        ]
        out.append("")
    link = compare_url(check, dashboard)
    if link:
        target = link.replace("(", "%28").replace(")", "%29")  # would end the link early
        out += [f"[Compare the two sides on the dashboard]({target})", ""]
    out.append(
        f"_perfboard check at {check.confidence:g} confidence: a change counts when it is"
        " beyond the series' noise and its minimum effect._"
    )
    return "\n".join(out) + "\n"


def comment_body(check: Check, dashboard: str | None = None) -> str:
    """to_markdown, its full table cut until it fits in one GitHub comment."""
    body = to_markdown(check, dashboard)
    for rows in (500, 200, 50, 0):
        if len(body) <= COMMENT_LIMIT:
            break
        body = to_markdown(check, dashboard, full_rows=rows)
    return body


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def to_json(check: Check, dashboard: str | None = None) -> dict[str, Any]:
    """Everything the comment says, as data (--json)."""
    return {
        "verdict": check.verdict,
        "failed": check.failed,
        "fail_on": check.fail_on,
        "confidence": check.confidence,
        "baseline": {
            "kind": check.baseline.kind,
            "value": check.baseline.value,
            "description": check.baseline.description,
        },
        "pr_url": check.pr_url,
        "head_sha": check.head_sha,
        "counts": {v: check.count(v) for v in VERDICTS},
        "compare_url": compare_url(check, dashboard),
        "series": [
            {
                "series_key": r.key,
                "series_id": r.series_id,
                "series": r.label,
                **{
                    k: (json.loads(v) if k in ("params", "testbed") else v)
                    for k, v in r.identity.items()
                },
                "base": r.base,
                "pr": r.pr,
                "base_n": r.base_n,
                "pr_n": r.pr_n,
                "change_pct": _finite(r.change_pct),
                "words": r.words,
                "z": _finite(r.z),
                "detectable_pct": _finite(r.detectable_pct),
                "min_change_pct": r.min_change_pct,
                "exceeds_noise": r.exceeds_noise,
                "exceeds_min_effect": r.exceeds_min_effect,
                "noisy": r.noisy,
                "verdict": r.verdict,
                "note": r.note,
            }
            for r in check.rows
        ],
        "claims": [
            {
                "raw": c.raw,
                "claimed": c.claimed,
                "claimed_pct": _finite(c.claimed_pct),
                "measured": c.measured,
                "measured_pct": _finite(c.measured_pct),
                "series": c.series,
            }
            for c in check.claims
        ],
    }


# -- keeping it (writes the store) ----------------------------------------------------------------

_RESULT_COLUMNS = {
    "check_run_id": pa.int64(),
    "series_id": pa.int64(),
    "series_key": pa.string(),
    **{name: pa.string() for name in _IDENTITY},
    "base": pa.float64(),
    "pr": pa.float64(),
    "base_n": pa.int64(),
    "pr_n": pa.int64(),
    "change_pct": pa.float64(),
    "z": pa.float64(),
    "detectable_pct": pa.float64(),
    "min_change_pct": pa.float64(),
    "verdict": pa.string(),
    "note": pa.string(),
}


def store_run(
    conn: duckdb.DuckDBPyConnection,
    check: Check,
    markdown: str,
    exit_status: int,
    comment_url: str | None = None,
) -> int:
    """Keep the run in check_runs / check_results, in one transaction; its id. Nothing
    goes to measurements: the main branch's series stay as they are."""
    now = datetime.now(UTC).replace(tzinfo=None)
    with db.transaction(conn) as changes:
        changes.touch("check_runs", "check_results")
        # Ids picked here, not by a sequence: a DuckLake store has none (lake.lake_ddl).
        run_id = conn.execute(
            "SELECT coalesce(max(check_run_id), 0) + 1 FROM check_runs"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO check_runs (check_run_id, pr_url, head_sha, base_kind, base_value,"
            " base, created_at, verdict, fail_on, confidence, exit_status, comment_url,"
            " markdown) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                check.pr_url,
                check.head_sha,
                check.baseline.kind,
                check.baseline.value,
                check.baseline.description,
                now,
                check.verdict,
                check.fail_on,
                check.confidence,
                exit_status,
                comment_url,
                markdown,
            ],
        )
        rows = [
            {
                "check_run_id": run_id,
                "series_id": r.series_id,
                "series_key": r.key,
                **r.identity,
                "base": r.base,
                "pr": r.pr,
                "base_n": r.base_n,
                "pr_n": r.pr_n,
                "change_pct": _finite(r.change_pct),
                "z": _finite(r.z),
                "detectable_pct": _finite(r.detectable_pct),
                "min_change_pct": r.min_change_pct,
                "verdict": r.verdict,
                "note": r.note or None,
            }
            for r in check.rows
        ]
        if rows:
            table = pa.Table.from_pylist(rows, schema=pa.schema(list(_RESULT_COLUMNS.items())))
            _check_results = table  # read by its name (perfboard.db._reading_arrow_by_name)
            conn.execute(
                "INSERT INTO check_results BY NAME SELECT * REPLACE"
                " (params::JSON AS params, testbed::JSON AS testbed) FROM _check_results"
            )
    return int(run_id)


# -- posting it (GitHub) ------------------------------------------------------------------------


def publish(
    check: Check,
    body: str,
    pr_url: str,
    api_url: str | None = None,
    status: bool = False,
) -> str:
    """The PR's one perfboard comment, edited in place when a run before posted it (found
    by MARKER among the PR's comments, every page), else created; and, with `status`, the
    head commit's status (context perfboard/check). Returns the comment's URL. A
    GitHubError says what failed; a failed POST is never tried again (github_api)."""
    from perfboard import github_api  # requests: only when posting

    repo, number = github_api.parse_issue_url(pr_url)
    client = github_api.GitHubClient(api_url)
    ours = None
    for page in client.pages(f"repos/{repo}/issues/{number}/comments", {}):
        ours = next(
            (c for c in page.data if isinstance(c, dict) and MARKER in (c.get("body") or "")),
            None,
        )
        if ours is not None:
            break
    if ours is not None:
        comment = client.patch(f"repos/{repo}/issues/comments/{int(ours['id'])}", {"body": body})
    else:
        comment = client.post(f"repos/{repo}/issues/{number}/comments", {"body": body})
    url = str(comment.get("html_url", ""))
    if status:
        if not check.head_sha:
            raise UsageError("--status needs --head-sha: the commit to set the status on")
        failed = check.failed
        payload = {
            "state": "failure" if failed else "success",
            "context": STATUS_CONTEXT,
            "description": _status_description(check)[:140],  # GitHub's limit
        }
        if safe_https(url):
            payload["target_url"] = url
        client.post(f"repos/{repo}/statuses/{check.head_sha}", payload)
    return url


def _status_description(check: Check) -> str:
    regressions = check.count("regression")
    if regressions:
        return f"{regressions} regression(s) in {len(check.rows)} series"
    return f"no regression in {len(check.rows)} series ({check.count('improvement')} improved)"
