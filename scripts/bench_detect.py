"""Score perfboard.detect's change points against apache-otava's on generated series.

(The shapes of real histories, scored through `perfboard detect`: bench_detect_shapes.py.)

    python scripts/bench_detect.py [--seed 5] [--per-length 40] [--no-otava] [--null 0]
    python scripts/bench_detect.py --seeds 11-30   # perfboard only: F1 per seed, mean, min

Goal (issue 5): F1 >= 0.95 over all series, above otava's F1 at every length, in no more
total time than otava on the same series. Exit status 0 when all three hold (with
--no-otava, only the first is checked), else 1. The figures are also written to
bench-out/detect.json.

The generator (numpy default_rng(seed), seed 5 unless told; every draw below is uniform
unless said otherwise, all in this order per series):

- lengths: 40 series at each of 60, 200, 1,000, 3,000 and 10,000 points (200 in all),
  reported per length;
- base level: log-uniform 1..1,000 (ms);
- noise: Gaussian, sigma = cv x the current level, cv in 1 %..5 % per series;
- steps: 0..4 per series (equally likely); each a relative change of 3 %..30 %, up or
  down with equal odds, multiplying the level from its index on. Every segment (between
  steps and from either end) has at least 10 points; positions are otherwise uniform (the
  spare length is spread by sorted uniform cuts). These indices are the truth set;
- drifts, in 25 % of series: a linear ramp of 2 %..10 % (up or down) over 20 %..50 % of the
  series (at least 30 points) at a uniform position, the level staying where the ramp ends.
  A ramp is gradual, not a step: it is not in the truth set, and a point reported on it is
  a false positive;
- outliers, in 30 % of series: 1..3 + n // 500 isolated points (no two adjacent) at uniform
  positions, each 3..10 noise sigmas away from its level, upwards with odds 3:1 (latency
  spikes). They are not in the truth set.

Small effects are in the set as drawn: a 3 % step under 5 % noise, or two steps 10 points
apart, may be beyond any detector at +-2 points; nothing is dropped to make scores look
better.

Scoring: a detected index matches an unmatched true step within +-2 points, one to one
(closest first; true steps are at least 10 apart, so no detection can be claimed by two).
Precision = matched / detected, recall = matched / true, F1 their harmonic mean, each over
the bucket's pooled counts (an empty denominator counts as 1).

The "oracle" column is the F1 of a reference that is told how many steps there are, where
their neighbours are and which points are outliers, and places each step at the best split
(Gaussian maximum likelihood) between its true neighbours: roughly what the noise alone
leaves reachable at +-2 points. It is not a strict bound (a drift between two steps pulls
its split, where perfboard refines locally), but with steps of 3 % under noise of up to 5 %
its F1 is 0.945-0.975 over seeds 1-10: the F1 goal of 0.95 sits close to it.

otava runs in .venv-otava (created here with `python3 -m venv .venv-otava &&
.venv-otava/bin/pip install apache-otava==0.8.0` if missing) through
scripts/otava_runner.py, on the same series in the same run; each detector's time is the
sum of perf_counter around each call, after one untimed warm-up call, on one process.

--seeds A-B (tuning): perfboard alone on each seed from A to B, one line per seed (P, R,
F1, time, the oracle's F1), then the mean and the minimum of F1 overall and at each
length. Nothing is written and the exit status is 0. Tune on seeds that the reported
figures do not use (11-30 against the default seed 5 and seeds 1-10).

--null N adds a calibration check: N pure-noise series (no step, drift or outlier) at each
length, and the share of them where perfboard reports any change point, which should be
about 1 - confidence (1 %).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard.detect import change_points  # noqa: E402

LENGTHS = (60, 200, 1000, 3000, 10000)
MIN_GAP = 10
TOLERANCE = 2
OTAVA_ENV = ROOT / ".venv-otava"
OTAVA_PYTHON = OTAVA_ENV / "bin" / "python"
OTAVA_PACKAGE = "apache-otava==0.8.0"
OUT = ROOT / "bench-out" / "detect.json"


@dataclass
class Series:
    values: np.ndarray
    steps: list[int]  # truth: index of the first point of each new level
    sizes: list[float]
    cv: float
    drift: tuple[int, int, float] | None  # (start, width, relative change)
    outliers: list[int] = field(default_factory=list)
    level: np.ndarray | None = None  # the noise-free level (steps and drift)


def generate(rng: np.random.Generator, n: int) -> Series:
    """One series, as the module docstring describes."""
    base = 10 ** rng.uniform(0.0, 3.0)
    cv = rng.uniform(0.01, 0.05)
    k = int(rng.integers(0, 5))
    slack = n - (k + 1) * MIN_GAP
    cuts = np.sort(rng.integers(0, slack + 1, size=k))
    steps = [int(MIN_GAP * (i + 1) + cuts[i]) for i in range(k)]
    sizes = list(rng.uniform(0.03, 0.30, size=k) * rng.choice([-1.0, 1.0], size=k))
    level = np.full(n, base)
    for at, size in zip(steps, sizes, strict=True):
        level[at:] *= 1.0 + size
    drift = None
    if rng.random() < 0.25:
        change = rng.uniform(0.02, 0.10) * rng.choice([-1.0, 1.0])
        width = max(30, round(rng.uniform(0.2, 0.5) * n))
        start = int(rng.integers(0, n - width + 1))
        ramp = np.clip((np.arange(n) - start) / width, 0.0, 1.0)
        level = level * (1.0 + change * ramp)
        drift = (start, width, float(change))
    values = level * (1.0 + cv * rng.standard_normal(n))
    outliers: list[int] = []
    if rng.random() < 0.30:
        count = int(rng.integers(1, 4)) + n // 500
        for at in rng.permutation(n):
            if len(outliers) == count:
                break
            if all(abs(int(at) - o) > 1 for o in outliers):
                outliers.append(int(at))
        outliers.sort()
        for at in outliers:
            sign = 1.0 if rng.random() < 0.75 else -1.0
            values[at] = level[at] * (1.0 + sign * rng.uniform(3.0, 10.0) * cv)
    return Series(values, steps, [float(s) for s in sizes], float(cv), drift, outliers, level)


def match(detected: list[int], truth: list[int], tolerance: int = TOLERANCE) -> int:
    """Detections matched one to one to true steps within +-tolerance, closest first."""
    pairs = sorted(
        (abs(d - t), i, j)
        for i, d in enumerate(detected)
        for j, t in enumerate(truth)
        if abs(d - t) <= tolerance
    )
    used_d: set[int] = set()
    used_t: set[int] = set()
    for _, i, j in pairs:
        if i not in used_d and j not in used_t:
            used_d.add(i)
            used_t.add(j)
    return len(used_d)


def scores(tp: int, detected: int, true: int) -> tuple[float, float, float]:
    precision = tp / detected if detected else 1.0
    recall = tp / true if true else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def oracle(s: Series) -> list[int]:
    """A localisation reference: each true step placed by an oracle that knows how many
    steps there are, where the neighbouring ones are, and which points are outliers. It
    takes the best single split (the Gaussian maximum-likelihood one) of the log values
    between the true neighbouring steps. Its misses are what noise alone costs at +-2."""
    y = np.log(s.values)
    if s.outliers:
        y[s.outliers] = np.log(s.level[s.outliers])
    prefix = np.concatenate(([0.0], np.cumsum(y)))
    bounds = [0, *s.steps, y.size]
    placed = []
    for a, e in zip(bounds[:-2], bounds[2:], strict=True):
        taus = np.arange(a + 1, e)
        left, right = taus - a, e - taus
        diff = (prefix[taus] - prefix[a]) / left - (prefix[e] - prefix[taus]) / right
        placed.append(int(taus[np.argmax(np.abs(diff) * np.sqrt(left * right / (e - a)))]))
    return placed


def run_perfboard(series: list[Series]) -> tuple[list[list[int]], list[float]]:
    change_points(series[0].values[:60])  # warm-up, untimed, as for otava
    indices, seconds = [], []
    for s in series:
        start = time.perf_counter()
        found = change_points(s.values)
        seconds.append(time.perf_counter() - start)
        indices.append([c.index for c in found])
    return indices, seconds


def ensure_otava() -> bool:
    if OTAVA_PYTHON.exists():
        return True
    print(f"creating {OTAVA_ENV.name} with {OTAVA_PACKAGE} (once) ...", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(OTAVA_ENV)], check=True)
        subprocess.run(
            [str(OTAVA_ENV / "bin" / "pip"), "install", "--quiet", OTAVA_PACKAGE], check=True
        )
    except (OSError, subprocess.CalledProcessError) as err:
        print(
            f"could not install otava ({err}); by hand: python3 -m venv .venv-otava && "
            f".venv-otava/bin/pip install {OTAVA_PACKAGE}; or pass --no-otava",
            file=sys.stderr,
        )
        return False
    return True


def run_otava(series: list[Series]) -> tuple[list[list[int]], list[float], str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "series.npz"
        np.savez(path, **{f"s{i}": s.values for i, s in enumerate(series)})
        done = subprocess.run(
            [str(OTAVA_PYTHON), str(ROOT / "scripts" / "otava_runner.py"), str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
    out = json.loads(done.stdout)
    return out["indices"], out["seconds"], out["otava"]


def bucket_figures(
    series: list[Series], indices: list[list[int]], seconds: list[float]
) -> dict[str, float]:
    tp = sum(match(found, s.steps) for s, found in zip(series, indices, strict=True))
    detected = sum(len(found) for found in indices)
    true = sum(len(s.steps) for s in series)
    precision, recall, f1 = scores(tp, detected, true)
    return {
        "tp": tp,
        "detected": detected,
        "true": true,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "seconds": round(sum(seconds), 4),
    }


def null_check(rng: np.random.Generator, count: int) -> dict[int, float]:
    rates = {}
    for n in LENGTHS:
        hits = 0
        for _ in range(count):
            cv = rng.uniform(0.01, 0.05)
            values = 10 ** rng.uniform(0.0, 3.0) * (1.0 + cv * rng.standard_normal(n))
            hits += bool(change_points(values))
        rates[n] = hits / count
    return rates


def parse_seeds(text: str) -> list[int]:
    """'11-30' -> [11, ..., 30]; '3' -> [3]; '1,4,9-10' -> [1, 4, 9, 10]."""
    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds += range(int(first), int(last or first) + 1)
    return seeds


def seed_sweep(seeds: list[int], per_length: int) -> None:
    """perfboard's F1 on each seed, then the mean and minimum over them (no otava)."""
    keys = [*LENGTHS, "all"]
    table: dict[object, list[float]] = {k: [] for k in keys}
    print(f"{'seed':>5} {'P':>6} {'R':>6} {'F1':>6} {'oracle':>7} {'time s':>7}   F1 per length")
    for seed in seeds:
        rng = np.random.default_rng(seed)
        series = [generate(rng, n) for n in LENGTHS for _ in range(per_length)]
        mine, mine_s = run_perfboard(series)
        placed = [oracle(s) for s in series]
        per = []
        for n in keys:
            pick = [i for i, s in enumerate(series) if n == "all" or s.values.size == n]
            sub = [series[i] for i in pick]
            figures = bucket_figures(sub, [mine[i] for i in pick], [mine_s[i] for i in pick])
            table[n].append(figures["f1"])
            per.append(figures)
        ours = per[-1]
        best = bucket_figures(series, placed, [0.0] * len(series))["f1"]
        print(
            f"{seed:>5} {ours['precision']:>6.3f} {ours['recall']:>6.3f} {ours['f1']:>6.3f} "
            f"{best:>7.3f} {ours['seconds']:>7.3f}   "
            + " ".join(f"{f['f1']:.3f}" for f in per[:-1])
        )
    print()
    for n in keys:
        f1s = table[n]
        print(f"{n!s:>7}: mean F1 {np.mean(f1s):.4f}  min {min(f1s):.4f}  over {len(f1s)} seeds")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--per-length", type=int, default=40, help="series per length")
    parser.add_argument("--no-otava", action="store_true", help="skip apache-otava")
    parser.add_argument("--null", type=int, default=0, metavar="N", help="noise-only check")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--seeds", metavar="A-B", help="perfboard alone over these seeds: mean and min F1"
    )
    args = parser.parse_args()
    if args.seeds:
        seed_sweep(parse_seeds(args.seeds), args.per_length)
        return 0

    rng = np.random.default_rng(args.seed)
    series = [generate(rng, n) for n in LENGTHS for _ in range(args.per_length)]
    lengths = [s.values.size for s in series]

    mine, mine_s = run_perfboard(series)
    theirs = theirs_s = None
    otava_version = None
    if not args.no_otava and ensure_otava():
        theirs, theirs_s, otava_version = run_otava(series)

    report: dict[str, object] = {
        "seed": args.seed,
        "tolerance": TOLERANCE,
        "otava": otava_version,
        "buckets": {},
    }
    placed = [oracle(s) for s in series]
    head = (
        f"{'points':>7} {'series':>6} {'steps':>5} {'oracle':>7} | {'perfboard P':>11} "
        f"{'R':>5} {'F1':>5} {'time s':>7}"
    )
    if theirs is not None:
        head += f" | {'otava P':>7} {'R':>5} {'F1':>5} {'time s':>7}"
    print(head)
    print("-" * len(head))
    goals = []
    for n in [*LENGTHS, "all"]:
        pick = [i for i, m in enumerate(lengths) if n == "all" or m == n]
        sub = [series[i] for i in pick]
        ours = bucket_figures(sub, [mine[i] for i in pick], [mine_s[i] for i in pick])
        best = bucket_figures(sub, [placed[i] for i in pick], [0.0 for _ in pick])["f1"]
        row = {"series": len(sub), "oracle_f1": best, "perfboard": ours}
        line = (
            f"{n!s:>7} {len(sub):>6} {ours['true']:>5} {best:>7.3f} | "
            f"{ours['precision']:>11.3f} {ours['recall']:>5.3f} {ours['f1']:>5.3f} "
            f"{ours['seconds']:>7.3f}"
        )
        if theirs is not None:
            other = bucket_figures(sub, [theirs[i] for i in pick], [theirs_s[i] for i in pick])
            row["otava"] = other
            line += (
                f" | {other['precision']:>7.3f} {other['recall']:>5.3f} {other['f1']:>5.3f} "
                f"{other['seconds']:>7.3f}"
            )
            if n != "all":
                goals.append((f"F1 above otava's at {n} points", ours["f1"] > other["f1"]))
            else:
                goals.append(("total time <= otava's", ours["seconds"] <= other["seconds"]))
        if n == "all":
            print("-" * len(head))
            goals.insert(0, ("F1 >= 0.95 overall", ours["f1"] >= 0.95))
        print(line)
        report["buckets"][str(n)] = row

    print()
    for name, ok in goals:
        print(f"{'met ' if ok else 'MISSED'} {name}")
    report["goals"] = {name: ok for name, ok in goals}

    if args.null:
        rates = null_check(np.random.default_rng(args.seed + 1), args.null)
        print("\nnoise only, share of series with any change point (perfboard):")
        print("  " + "  ".join(f"{n}: {r:.3f}" for n, r in rates.items()))
        report["null_false_alarm_rate"] = {str(n): r for n, r in rates.items()}

    report["series"] = [
        {
            **{k: v for k, v in asdict(s).items() if k not in ("values", "level")},
            "n": s.values.size,
            "perfboard": mine[i],
            **({"otava": theirs[i]} if theirs is not None else {}),
        }
        for i, s in enumerate(series)
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
