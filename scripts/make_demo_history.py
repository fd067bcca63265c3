"""Write the demo's simulated nightly history: data/simulated/ernie-p4-nightly.jsonl.

    python scripts/make_demo_history.py [--out data/simulated/ernie-p4-nightly.jsonl]

The bundled documents (data/samples) are real, and each holds one run: a dashboard of
single points shows no trend, no alert, nothing to explain or compare. This history
gives the demo twelve weeks of nightly runs to show those pages with. It is simulated,
and says so wherever a series is named: its device is "Tesla P4 (simulated)" and its
testbed carries simulated=true. Its levels are anchored to the published figures of the
ERNIE phase-2 table (PaddlePaddle/benchmark#165: 10 ms on a Tesla P4, 9.5 ms from
2020-02-04 with PR 22424's fusion); everything else (the other batch size and precision,
a regression that is fixed a week later, a slow leak at the end, the noise) is made up
to show what the dashboard does with such events. Seeded: the same file every time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "simulated" / "ernie-p4-nightly.jsonl"
FIRST_NIGHT = datetime(2020, 1, 6)
NIGHTS = 84  # 2020-01-06 .. 2020-03-29
FUSION = datetime(2020, 2, 4)  # the phase-2 table's row 1 (PR 22424): 10 ms -> 9.5 ms
REGRESSION = (datetime(2020, 2, 24), datetime(2020, 3, 2))  # +6 %, fixed a week later
LEAK = (datetime(2020, 3, 12), datetime(2020, 3, 22))  # +8 % over ten nights, batch 32 FP32
# (batch size, precision): latency before the fusion, after it (ms)
LEVELS = {
    (1, "fp32"): (10.0, 9.5),
    (1, "int8"): (5.4, 5.2),
    (32, "fp32"): (72.0, 68.4),
    (32, "int8"): (38.0, 36.5),
}
NOISE = 0.008  # coefficient of variation of a night's average
OUTLIERS = 0.02  # share of nights 20-40 % slow (a busy machine)


def version(night: int) -> str:
    """A commit-like id per night (simulated: no repository holds it)."""
    return hashlib.sha1(f"perfboard demo: simulated night {night}".encode()).hexdigest()


def level(batch: int, precision: str, at: datetime) -> float:
    before, after = LEVELS[(batch, precision)]
    value = before if at < FUSION else after
    if REGRESSION[0] <= at < REGRESSION[1]:
        value *= 1.06
    if (batch, precision) == (32, "fp32") and at >= LEAK[0]:
        done = min((at - LEAK[0]) / (LEAK[1] - LEAK[0]), 1.0)
        value *= 1.0 + 0.08 * done
    return value


def records() -> list[dict]:
    rng = np.random.default_rng(2020)
    out = []
    for night in range(NIGHTS):
        at = FIRST_NIGHT + timedelta(days=night)
        for (batch, precision), _ in LEVELS.items():
            value = level(batch, precision, at) * (1.0 + NOISE * rng.standard_normal())
            if rng.random() < OUTLIERS:
                value *= rng.uniform(1.2, 1.4)
            out.append(
                {
                    "schema": "perfboard.result/1",
                    "project": "ernie",
                    "benchmark": "ernie",
                    "task": "inference",
                    "metric": "latency",
                    "unit": "ms",
                    "direction": "lower",
                    "framework": "paddle",
                    "device": "Tesla P4 (simulated)",
                    "params": {"batch_size": batch, "seq_len": 128, "precision": precision},
                    "testbed": {"cuda": "10.0", "simulated": "true"},
                    "version": version(night),
                    "time": f"{at:%Y-%m-%dT%H:%M:%SZ}",
                    "value": round(float(value), 4),
                    "status": "ok",
                    "samples": 1000,
                    "warmup": 10,
                    "stats": {},
                    "run": 0,
                }
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        for record in records():
            fh.write(json.dumps(record, sort_keys=True) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
