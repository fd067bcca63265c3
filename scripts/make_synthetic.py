"""A synthetic store of documented shape, for the page benchmark (scripts/bench_pages.py).

    python scripts/make_synthetic.py --out bench-out/synthetic-10m.duckdb [--measurements 10000000]

Shape (fixed seed, so two builds are the same store):
- SERIES series (default 2,000): 5 projects x models, metrics latency (lower is better)
  and throughput (higher), frameworks paddle / tensorflow, devices Tesla P4 / T4 / V100,
  params batch_size x seq_len x precision;
- MEASUREMENTS measurements spread evenly over each series (10,000,000 -> 5,000 points a
  series), over 3 years (2018-01-01 to 2020-12-31), one version (a 40-hex commit) per
  point, values = base x (1 - small steps at fixed dates) x (1 +- 2% noise), and 1 in
  500 points an OOM status;
- 100 sources (nightly result files), each holding a slice of the points;
- 20 phases of 8 milestones each, every milestone with a PR (10000 + n) and a reported
  reduction that disagrees with the computed one in 1 milestone of 8.

Everything is generated inside DuckDB with INSERT ... SELECT: 10 M rows in seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import db  # noqa: E402

PROJECTS = ("ernie", "bert", "resnet50", "transformer", "ops")


def build(out: Path, measurements: int, series: int) -> None:
    for stale in (out, out.with_name(out.name + ".wal")):
        stale.unlink(missing_ok=True)
    conn = db.connect(out)
    per_series = max(1, measurements // series)
    conn.execute("SELECT setseed(0.42)")
    conn.execute(
        """
        INSERT INTO sources (source_id, uri, content_hash, parser, kind, reader, encoding,
                             project, ingested_at, size_bytes, n_lines, n_measurements,
                             n_problems, status)
        SELECT i, 'synthetic/nightly-' || lpad(i::VARCHAR, 3, '0') || '.jsonl',
               'synthetic-' || i, 'results', 'results', '1', 'utf-8',
               $projects[1 + i % 5], TIMESTAMP '2021-01-01' + to_days(i), 0, 0, 0, 0, 'ok'
        FROM range(1, 101) t(i)
        """,
        {"projects": list(PROJECTS)},
    )
    conn.execute(
        """
        INSERT INTO series (series_id, series_key, project, benchmark, task, metric, unit,
                            direction, framework, device, params, testbed)
        SELECT i, md5(i::VARCHAR)[:20], $projects[1 + i % 5],
               CASE WHEN i % 5 = 4 THEN 'op/op' || (i % 97) ELSE $projects[1 + i % 5] END,
               CASE WHEN i % 5 = 4 THEN 'op-forward' ELSE 'inference' END,
               CASE WHEN i % 4 = 3 THEN 'throughput' ELSE 'latency' END,
               CASE WHEN i % 4 = 3 THEN 'samples/s' ELSE 'ms' END,
               CASE WHEN i % 4 = 3 THEN 'higher' ELSE 'lower' END,
               CASE WHEN i % 3 = 0 THEN 'tensorflow' ELSE 'paddle' END,
               ['Tesla P4', 'Tesla T4', 'Tesla V100'][1 + i % 3],
               json_object('batch_size', [1, 8, 32, 64][1 + (i // 3) % 4],
                           'seq_len', [128, 512][1 + (i // 12) % 2],
                           'precision', ['fp32', 'fp16', 'int8'][1 + (i // 24) % 3],
                           'variant', i // 72),
               json_object('cuda', '10.0', 'cudnn', '7.6')
        FROM range(1, $series + 1) t(i)
        """,
        {"projects": list(PROJECTS), "series": series},
    )
    conn.execute(
        """
        INSERT INTO measurements (series_id, source_id, run, version, measured_at, value,
                                  status, samples, warmup, stats, line, raw)
        SELECT s, 1 + (p * 100) // $per, 0,
               md5((p)::VARCHAR) || lpad(p::VARCHAR, 8, '0'),
               TIMESTAMP '2018-01-01' + to_microseconds(
                   (p * (94608000000000 // $per))::BIGINT),
               CASE WHEN (s * 7 + p) % 500 = 0 THEN NULL
                    ELSE (5 + s % 50) * (1 - 0.04 * (p * 8 // $per) / 8.0)
                         * (1 + 0.02 * (random() - 0.5)) END,
               CASE WHEN (s * 7 + p) % 500 = 0 THEN 'oom' ELSE 'ok' END,
               100, 1, NULL, p + 1, NULL
        FROM range(1, $series + 1) a(s), range(0, $per) b(p)
        """,
        {"per": per_series, "series": series},
    )
    conn.execute(
        """
        INSERT INTO phases (phase_id, source_id, name, project, benchmark, metric, unit,
                            value_header, owner, platform, software, baseline, line)
        SELECT i, 1, 'phase ' || i || ' 优化工作', $projects[1 + i % 5], $projects[1 + i % 5],
               'latency', 'ms', 'P4时间 (ms)', 'owner' || i, 'Tesla P4', 'CUDA 10.0',
               20.0, 1
        FROM range(1, 21) t(i)
        """,
        {"projects": list(PROJECTS)},
    )
    conn.execute(
        """
        INSERT INTO milestones
        SELECT i, k, k::VARCHAR, 20.0 * pow(0.93, k),
               DATE '2019-01-01' + (i * 30 + k * 7)::INTEGER,
               'PaddlePaddle/Paddle', 10000 + i * 8 + k,
               'https://github.com/PaddlePaddle/Paddle/pull/' || (10000 + i * 8 + k),
               'milestone ' || k || ' of phase ' || i,
               CASE WHEN k = 0 THEN '-' WHEN k % 8 = 5 THEN '12%' ELSE '7%' END,
               CASE WHEN k = 0 THEN NULL WHEN k % 8 = 5 THEN 0.12 ELSE 0.07 END, NULL,
               CASE WHEN k = 0 THEN NULL ELSE 0.07 END,
               CASE WHEN k = 0 THEN NULL ELSE 1 / 0.93 END,
               k % 8 = 5, 10 + k, NULL
        FROM range(1, 21) a(i), range(0, 8) b(k)
        """
    )
    conn.execute(
        "UPDATE sources SET n_measurements = c FROM (SELECT source_id, count(*) AS c"
        " FROM measurements GROUP BY source_id) m WHERE sources.source_id = m.source_id"
    )
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--measurements", type=int, default=10_000_000)
    parser.add_argument("--series", type=int, default=2_000)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    build(args.out, args.measurements, args.series)
    print(
        f"built {args.out}: {args.measurements:,} measurements over {args.series:,} series"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
