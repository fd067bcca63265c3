"""Change detection on real histories that people annotated: the Turing Change Point Dataset.

    python scripts/bench_detect_tcpd.py --tcpd DIR [--no-peers]

TCPD (van den Burg & Williams 2020, "An evaluation of change point detection
algorithms", arXiv:2003.06222; github.com/alan-turing-institute/TCPD) holds 42 real series
(economies, traffic, sensors, quality control), each annotated by up to five people who
were shown the series alone. perfboard ships none of it (its series carry their own
licences): DIR is a clone of that repository (DIR/datasets/<name>/<name>.json and
DIR/annotations.json), or a folder of <name>.json files beside annotations.json.

Each univariate series is judged as `perfboard detect` judges a series (detect.examine
with the default minimum effect of 1 %; a step or a drift below it is no finding; a drift
counts at its first point), and scored as TCPDBench scores: F1 with a margin of 5 points,
the first point always a change point, precision against the union of the annotators and
recall averaged over them. Beside it, in the same run: "zero" (no change point ever,
TCPDBench's own baseline) and, from .venv-otava if ruptures is installed there, binary
segmentation and PELT with TCPDBench's defaults (normal mean-and-variance cost on the
standardised series, an MBIC-like penalty of 3 log n; binary segmentation at most 5
points, as R's changepoint package by default).

Nothing here was tuned on these series: they judge the detector's rules, which were fitted
on generated series (scripts/bench_detect.py, scripts/bench_detect_shapes.py).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard.detect import examine  # noqa: E402

MARGIN = 5  # TCPDBench's default margin
MIN_CHANGE = 1.0  # perfboard's default minimum effect (perfboard.toml)
PEERS = ROOT / ".venv-otava" / "bin" / "python"

# ruptures in its own environment: the series in, the change points of each method out.
PEER_SCRIPT = r"""
import json, math, sys, warnings
import numpy as np
import ruptures as rpt
warnings.simplefilter("ignore")
out = {}
for name, values in json.load(sys.stdin).items():
    x = np.asarray(values, dtype=float)
    z = ((x - x.mean()) / (x.std() or 1.0)).reshape(-1, 1)
    pen = 3.0 * math.log(len(x))
    b = rpt.Binseg(model="normal", min_size=2, jump=1).fit(z)
    found = b.predict(pen=pen)[:-1]
    if len(found) > 5:
        found = b.predict(n_bkps=5)[:-1]
    pelt = rpt.Pelt(model="normal", min_size=2, jump=1).fit(z).predict(pen=pen)[:-1]
    out[name] = {"binseg": found, "pelt": pelt}
print(json.dumps(out))
"""


def true_positives(truth: set[int], found: set[int], margin: int = MARGIN) -> set[int]:
    """TCPDBench's matching: each true point takes the closest unused found point."""
    left = set(found)
    hits = set()
    for tau in sorted(truth):
        close = sorted((abs(tau - x), x) for x in left if abs(tau - x) <= margin)
        if close:
            hits.add(tau)
            left.remove(close[0][1])
    return hits


def f_measure(annotations: dict[str, list[int]], found: list[int]) -> float:
    """TCPDBench's F1 (alpha 0.5): precision against the union of the annotators, recall
    averaged over them, the first point a change point for everyone."""
    truths = [set(a) | {0} for a in annotations.values()]
    predicted = set(found) | {0}
    union = set().union(*truths)
    precision = len(true_positives(union, predicted)) / len(predicted)
    recall = sum(len(true_positives(t, predicted)) / len(t) for t in truths) / len(truths)
    return precision * recall / (0.5 * recall + 0.5 * precision)


def load(tcpd: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict]:
    """(values, their positions in the raw series, annotations) of each annotated
    univariate series (missing values dropped, positions kept for the scoring)."""
    annotations_file = next(
        (
            p
            for p in (tcpd / "annotations.json", tcpd / "analysis" / "annotations.json")
            if p.exists()
        ),
        None,
    )
    if annotations_file is None:
        raise SystemExit(f"{tcpd}: no annotations.json (a TCPD clone, or its files)")
    annotations = json.loads(annotations_file.read_text())
    values, positions = {}, {}
    for name in sorted(annotations):
        path = next(
            (
                p
                for p in (tcpd / "datasets" / name / f"{name}.json", tcpd / f"{name}.json")
                if p.exists()
            ),
            None,
        )
        if path is None:
            continue
        data = json.loads(path.read_text())
        if data.get("n_dim", 1) != 1:
            continue
        raw = np.array([math.nan if v is None else float(v) for v in data["series"][0]["raw"]])
        kept = ~np.isnan(raw)
        values[name], positions[name] = raw[kept], np.flatnonzero(kept)
    return values, positions, annotations


def perfboard_found(x: np.ndarray) -> list[int]:
    """What `perfboard detect` reports: steps, and drifts at their start, at or above the
    minimum effect."""
    seen = examine(x, min_change_pct=MIN_CHANGE)
    return sorted(
        [c.index for c in seen.change_points if abs(c.change_pct) >= MIN_CHANGE]
        + [d.start for d in seen.drifts if abs(d.change_pct) >= MIN_CHANGE]
    )


def peers_found(values: dict[str, np.ndarray]) -> dict[str, dict[str, list[int]]] | None:
    if not PEERS.exists():
        return None
    done = subprocess.run(
        [str(PEERS), "-c", PEER_SCRIPT],
        input=json.dumps({k: v.tolist() for k, v in values.items()}),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"ruptures skipped: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tcpd", type=Path, required=True, help="a TCPD clone (or its files)")
    parser.add_argument("--no-peers", action="store_true", help="skip ruptures")
    args = parser.parse_args()
    values, positions, annotations = load(args.tcpd)
    if not values:
        raise SystemExit(f"{args.tcpd}: no TCPD series found")
    peers = None if args.no_peers else peers_found(values)
    methods = ["zero", "perfboard", *(["binseg", "pelt"] if peers else [])]
    scores: dict[str, list[float]] = {m: [] for m in methods}
    spent = 0.0
    print(f"{'series':22s} {'n':>5} " + " ".join(f"{m:>14s}" for m in methods))
    for name, x in values.items():
        start = time.perf_counter()
        found = {"zero": [], "perfboard": perfboard_found(x)}
        spent += time.perf_counter() - start
        if peers:
            found.update(peers[name])
        row = []
        for m in methods:
            at = [int(positions[name][i]) for i in found[m]]
            scores[m].append(f_measure(annotations[name], at))
            row.append(f"{scores[m][-1]:8.3f} ({len(at):3d})")
        print(f"{name:22s} {x.size:5d} " + " ".join(row))
    print(f"{'mean F1':28s} " + " ".join(f"{np.mean(scores[m]):14.3f}" for m in methods))
    wins = sum(p > z for p, z in zip(scores["perfboard"], scores["zero"], strict=True))
    losses = sum(p < z for p, z in zip(scores["perfboard"], scores["zero"], strict=True))
    print(
        f"{len(values)} series; perfboard above zero on {wins}, below on {losses}; "
        f"perfboard's time {spent:.2f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
