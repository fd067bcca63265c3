"""Change detection on the shapes of real histories, scored through the command.

    python scripts/bench_detect_shapes.py [--seeds 6] [--no-peers] [--long]

scripts/bench_detect.py scores the detector on Gaussian series with steps and drifts.
Real benchmark histories look otherwise (issue 14): timers that print whole milliseconds,
CPUs that run in two frequency modes, shared machines with outliers and a daily cycle,
leaks that grow without a step. This benchmark generates each of those shapes, with and
without a real step, and scores what a user sees: every series is stored with `ingest
results`, `python -m perfboard detect --json` runs on the store (the minimum effect of
1 %, noisy series kept), and its change points are matched to the truth within +-2
points (+-1 % of the length for the noisy big step). Side by side on the same series:
the library alone (perfboard.detect.change_points with min_change_pct=1), apache-otava
0.8 with its defaults, and ruptures' PELT and binary segmentation (l2 cost on log values,
penalty 2 log(n) sigma^2 with sigma from the MAD of differences: a BIC-like penalty),
both from .venv-otava (`pip install ruptures` there; skipped if missing), on the series of
up to 2,000 points only (its PELT took over 8 minutes on this set's 20,000-point series).
The command's time is the whole `perfboard detect` process over the store (start-up and
storing included), so it is printed once, above the table. F1 per shape pools the
shape's series; FA is the share of its step-free series with any change point.

Shapes (numpy default_rng(seed); lengths 200, 2,000 and 20,000; `--seeds` series of
each shape at each length, half of them with one step of the size given):

- gaussian: cv 1-5 %, a step of 5-30 %;
- ties: integer milliseconds around 8-30 ms, cv 3 %, a step of 15-30 %;
- two modes: each point in one of two modes 5 % apart, cv 0.2 %, a step of 10-20 %;
- outliers: cv 1 %, 1 % of points 3-10 times their level, a step of 10-20 %;
- daily cycle: a 5 % sine of 288 points (24 h of 5-minute runs; n / 8 for short series),
  cv 0.5 %, a step of 10-20 %;
- constant: one value exactly, a step of 5-20 %;
- noisy: cv 15 % (too noisy to alert on its own), a step of 60-100 %;
- slow ramp: no noise, 10-50 % over the whole series, no step;
- growth curve: a quadratic 1x -> 4x, cv 0.2 %, no step;
- tiny step: cv 0.01 %, a 0.05 % step (below the minimum effect: not a change);
- pure noise: cv 1-5 %, no step (the false-alarm rate: series with any change point).

`--long` adds one series of each shape at 100,000 points, timed (library).
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard.detect import change_points  # noqa: E402
from scripts.bench_detect import OTAVA_PYTHON, ensure_otava, match, run_otava, scores  # noqa: E402

LENGTHS = (200, 2000, 20000)
MIN_CHANGE = 1.0
RUPTURES_MAX = 2000  # longer series are left out of ruptures' columns (quadratic cost)
SHAPES = (
    "gaussian",
    "ties",
    "two modes",
    "outliers",
    "daily cycle",
    "constant",
    "noisy",
    "slow ramp",
    "growth curve",
    "tiny step",
    "pure noise",
)
NO_STEP = {"slow ramp", "growth curve", "tiny step", "pure noise"}
DRIFTS: collections.Counter[int] = collections.Counter()  # drift findings per case


@dataclass
class Case:
    shape: str
    values: np.ndarray
    steps: list[int]


def generate(shape: str, n: int, with_step: bool, rng: np.random.Generator) -> Case:
    t = np.arange(n)
    at = int(rng.integers(n // 5, 4 * n // 5))
    level = np.ones(n)

    def step(lo: float, hi: float) -> list[int]:
        if not with_step:
            return []
        level[at:] *= 1.0 + rng.uniform(lo, hi) * rng.choice([-1.0, 1.0])
        return [at]

    if shape == "gaussian":
        truth = step(0.05, 0.30)
        x = 10 ** rng.uniform(0, 3) * level * (1 + rng.uniform(0.01, 0.05) * rng.standard_normal(n))
    elif shape == "ties":
        truth = step(0.15, 0.30)
        x = np.round(rng.uniform(8, 30) * level * (1 + 0.03 * rng.standard_normal(n)))
    elif shape == "two modes":
        truth = step(0.10, 0.20)
        modes = np.where(rng.random(n) < 0.5, 1.0, 1.05)
        x = 20 * level * modes * (1 + 0.002 * rng.standard_normal(n))
    elif shape == "outliers":
        truth = step(0.10, 0.20)
        x = 15 * level * (1 + 0.01 * rng.standard_normal(n))
        hit = rng.choice(n, max(1, n // 100), replace=False)
        x[hit] *= rng.uniform(3, 10, hit.size)
    elif shape == "daily cycle":
        truth = step(0.10, 0.20)
        period = 288 if n >= 2000 else n / 8
        cycle = 1 + 0.05 * np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi))
        x = 12 * level * cycle * (1 + 0.005 * rng.standard_normal(n))
    elif shape == "constant":
        truth = step(0.05, 0.20)
        x = 7.0 * level
    elif shape == "noisy":
        truth = step(0.60, 1.00)
        x = 30 * level * np.exp(0.15 * rng.standard_normal(n))
    elif shape == "slow ramp":
        truth = []
        x = 10 * (1 + rng.uniform(0.1, 0.5) * t / n)
    elif shape == "growth curve":
        truth = []
        x = 50 * (1 + t / n) ** 2 * (1 + 0.002 * rng.standard_normal(n))
    elif shape == "tiny step":
        truth = []
        x = 10 * (1 + 0.0001 * rng.standard_normal(n))
        x[at:] *= 1.0005
    else:  # pure noise
        truth = []
        x = 10 ** rng.uniform(0, 3) * (1 + rng.uniform(0.01, 0.05) * rng.standard_normal(n))
    return Case(shape, x.astype(np.float64), truth)


def tolerance(case: Case) -> int:
    return max(2, case.values.size // 100) if case.shape == "noisy" else 2


# -- the detectors --------------------------------------------------------------------------


def run_command(cases: list[Case], work: Path) -> tuple[list[list[int]], float]:
    """Every case a series of one store: `ingest results`, then `perfboard detect --json`."""
    results = work / "shapes.jsonl"
    longest = max(c.values.size for c in cases)
    first = datetime(2020, 1, 1)
    stamps = [f"{first + timedelta(minutes=j):%Y-%m-%dT%H:%M:%SZ}" for j in range(longest)]
    with open(results, "w", encoding="utf-8") as out:
        for i, case in enumerate(cases):
            for j, value in enumerate(case.values):
                record = {
                    "schema": "perfboard.result/1",
                    "project": "shapes",
                    "benchmark": case.shape,
                    "task": "inference",
                    "metric": "latency",
                    "unit": "ms",
                    "direction": "lower",
                    "framework": "synthetic",
                    "device": "cpu",
                    "params": {"case": i},
                    "testbed": {},
                    "version": f"v{j:06d}",
                    "time": stamps[j],
                    "value": float(value),
                    "status": "ok",
                    "run": 0,
                }
                out.write(json.dumps(record) + "\n")
    db = work / "shapes.duckdb"
    python = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
    subprocess.run(
        [
            python,
            "-m",
            "ingest",
            "results",
            str(results),
            "--db",
            str(db),
            "--quiet",
            "--no-detect",
        ],
        cwd=ROOT,
        check=True,
    )
    started = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "perfboard", "detect", "--db", str(db), "--json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    conn = duckdb.connect(str(db), read_only=True)
    case_of = dict(conn.execute("SELECT series_id, (params->>'case')::INT FROM series").fetchall())
    conn.close()
    found: list[list[int]] = [[] for _ in cases]
    for line in done.stdout.splitlines():
        row = json.loads(line)
        case = case_of[int(row["series_id"])]
        if row.get("shape") == "drift":  # a gradual change: scored apart from the steps
            DRIFTS[case] += 1
        else:
            found[case].append(int(row["position"]))
    return [sorted(f) for f in found], seconds


def run_library(cases: list[Case]) -> tuple[list[list[int]], list[float]]:
    change_points(cases[0].values[:60])
    found, seconds = [], []
    for case in cases:
        start = time.perf_counter()
        points = change_points(case.values, min_change_pct=MIN_CHANGE)
        seconds.append(time.perf_counter() - start)
        found.append([c.index for c in points if abs(c.change_pct) >= MIN_CHANGE])
    return found, seconds


RUPTURES = """
import json, sys, time
import numpy as np
import ruptures as rpt
data = np.load(sys.argv[1])
out = {"pelt": [], "binseg": [], "pelt_s": [], "binseg_s": []}
for name in sorted(data.files, key=lambda k: int(k[1:])):
    if len(data[name]) > int(sys.argv[2]):  # PELT is quadratic here: 20,000 points take minutes
        for algo in ("pelt", "binseg"):
            out[algo].append(None)
            out[algo + "_s"].append(None)
        continue
    y = np.log(data[name]) if (data[name] > 0).all() else data[name]
    d = np.diff(y)
    sigma = 1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2) or 1e-12
    pen = 2 * np.log(len(y)) * sigma ** 2
    for algo, cls in (("pelt", rpt.Pelt), ("binseg", rpt.Binseg)):
        start = time.perf_counter()
        try:
            algo_ = cls(model="l2", min_size=5, jump=1 if len(y) <= 2000 else 5)
            bk = algo_.fit(y).predict(pen=pen)
        except Exception:
            bk = [len(y)]
        out[algo + "_s"].append(time.perf_counter() - start)
        out[algo].append([int(b) for b in bk[:-1]])
json.dump(out, sys.stdout)
"""


def run_ruptures(cases: list[Case], work: Path) -> dict[str, list] | None:
    check = subprocess.run([str(OTAVA_PYTHON), "-c", "import ruptures"], capture_output=True)
    if check.returncode != 0:
        return None
    path = work / "series.npz"
    np.savez(path, **{f"s{i}": c.values for i, c in enumerate(cases)})
    script = work / "ruptures_runner.py"
    script.write_text(RUPTURES)
    done = subprocess.run(
        [str(OTAVA_PYTHON), str(script), str(path), str(RUPTURES_MAX)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


# -- scoring --------------------------------------------------------------------------------


def figures(cases: list[Case], found: list[list[int] | None]) -> tuple[float, float, float, float]:
    """(precision, recall, F1, share of step-free series with any change point), over the
    series the detector ran on (None: not run)."""
    ran = [(c, f) for c, f in zip(cases, found, strict=True) if f is not None]
    cases, found = [c for c, _ in ran], [f for _, f in ran]
    tp = sum(match(f, c.steps, tolerance(c)) for c, f in zip(cases, found, strict=True))
    detected = sum(len(f) for f in found)
    true = sum(len(c.steps) for c in cases)
    p, r, f1 = scores(tp, detected, true)
    free = [f for c, f in zip(cases, found, strict=True) if not c.steps]
    alarms = sum(bool(f) for f in free) / len(free) if free else 0.0
    return p, r, f1, alarms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=6, help="series per shape and length")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--no-peers", action="store_true", help="skip otava and ruptures")
    parser.add_argument("--long", action="store_true", help="time 100,000-point series too")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = [
        generate(shape, n, shape not in NO_STEP and k % 2 == 0, rng)
        for shape in SHAPES
        for n in LENGTHS
        for k in range(args.seeds)
    ]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        command, command_s = run_command(cases, work)
        library, library_s = run_library(cases)
        peers: dict[str, tuple[list[list[int]], list[float]]] = {}
        if not args.no_peers and ensure_otava():
            found, seconds, _version = run_otava(cases)
            peers["otava"] = (found, seconds)
            rupt = run_ruptures(cases, work)
            if rupt is None:
                print("ruptures not in .venv-otava: `.venv-otava/bin/pip install ruptures`")
            else:
                peers["PELT"] = (rupt["pelt"], rupt["pelt_s"])
                peers["BinSeg"] = (rupt["binseg"], rupt["binseg_s"])
    names = ["command", "library", *peers]
    print(
        f"{len(cases)} series, {sum(c.values.size for c in cases):,} points; "
        f"perfboard detect over the store: {command_s:.2f} s (one process, start included)"
    )
    head = f"{'shape':<13}" + "".join(f" | {n:>7} F1  P    R   FA  time s" for n in names)
    print(head)
    print("-" * len(head))
    total: dict[str, list[float]] = {n: [] for n in names}
    for shape in [*SHAPES, "all"]:
        pick = [i for i, c in enumerate(cases) if shape in ("all", c.shape)]
        sub = [cases[i] for i in pick]
        line = f"{shape:<13}"
        for name in names:
            if name == "command":
                found, secs = command, [0.0]
            elif name == "library":
                found, secs = library, library_s
            else:
                found, secs = peers[name]
            sel = [found[i] for i in pick]
            p, r, f1, fa = figures(sub, sel)
            spent = sum(secs[i] or 0.0 for i in pick) if name != "command" else float("nan")
            line += f" | {f1:10.3f} {p:.2f} {r:.2f} {fa:.2f} {spent:7.2f}"
            if shape == "all":
                total[name] = [f1, fa]
        print(line)
    print("\ndrift findings of the command (one per gradual change; the ramps and curves are")
    print("drifts, no other shape holds one):")
    print(
        "  "
        + ", ".join(
            f"{shape} {sum(DRIFTS[i] for i, c in enumerate(cases) if c.shape == shape)}"
            f"/{sum(c.shape == shape for c in cases)}"
            for shape in SHAPES
        )
    )
    if args.long:
        print("\n100,000 points, library (min_change_pct=1):")
        for shape in SHAPES:
            case = generate(shape, 100_000, shape not in NO_STEP, rng)
            start = time.perf_counter()
            found = change_points(case.values, min_change_pct=MIN_CHANGE)
            spent = time.perf_counter() - start
            kept = [c.index for c in found if abs(c.change_pct) >= MIN_CHANGE]
            print(f"  {shape:<13} {spent:6.2f} s  found {kept[:4]} truth {case.steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
