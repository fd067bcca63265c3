"""Run apache-otava's change-point detector on the series of an .npz file; print JSON.

    .venv-otava/bin/python scripts/otava_runner.py SERIES.npz > OUT.json

Run by scripts/bench_detect.py in its own environment (.venv-otava), because otava pins
numpy 2.2 and scipy, which perfboard's runtime does not carry. Each array `s0`, `s1`, ...
of the file is one series. For each, `otava.analysis.compute_change_points` is called with
its defaults (window_len=50, max_pvalue=0.001, min_magnitude=0.0) and timed with
perf_counter around that call alone. The series is passed as a list of floats, as otava's
own `Series` does: with a numpy array its sliding windows see the whole series instead of
the window and it fails. The output is {"otava": version, "indices": [[...], ...],
"seconds": [...]}; an index is the first point of the new level, as in perfboard.detect.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version

import numpy as np
from otava.analysis import compute_change_points


def main(path: str) -> None:
    data = np.load(path)
    names = sorted(data.files, key=lambda name: int(name[1:]))
    # One untimed call first, so that no series pays for imports and first-call caches.
    compute_change_points([float(v) for v in data[names[0]][:60]])
    indices: list[list[int]] = []
    seconds: list[float] = []
    for name in names:
        series = [float(v) for v in data[name]]
        start = time.perf_counter()
        points, _weak = compute_change_points(series)
        seconds.append(time.perf_counter() - start)
        indices.append(sorted(int(p.index) for p in points))
    json.dump(
        {"otava": version("apache-otava"), "indices": indices, "seconds": seconds}, sys.stdout
    )


if __name__ == "__main__":
    main(sys.argv[1])
