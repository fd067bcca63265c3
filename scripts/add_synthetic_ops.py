"""Op benchmark results of documented shape, added to a synthetic store (for bench_ops.py).

    python scripts/add_synthetic_ops.py [--db bench-out/synthetic-10m.duckdb]

Builds the store with scripts/make_synthetic.py first when it is missing (about 10 s).
Running it again replaces what an earlier run added (series keyed "synthetic-opbench-*",
sources named "synthetic-opbench-N"); nothing else in the store is touched.

Shape (fixed seed, so two runs add the same rows):
- 400 ops ("op/synthetic_op_000" ...) x 4 configs (config_id 0-3, each with its own
  argument list) x 2 frameworks (paddle, tensorflow) x 200 commits, each result a
  total_time and a gpu_time: 640,000 results, 1,280,000 measurements, 6,400 series, all
  on device "GPU", project op-benchmark; every 4th op is measured backward.
- 200 commits, a day apart from 2020-01-01 02:00 UTC; Paddle's measurements carry the
  commit (40 hex digits) as version, TensorFlow's none and testbed {"tensorflow": "2.3.0"},
  as the op benchmark's v2 logs are read. One source per commit: synthetic-opbench-N,
  linking to https://ci.example.com/opbench/N, ingested an hour after its run.
- TensorFlow's total time per op and config: 0.02 to 10 ms. Paddle / TensorFlow: 0.80 to
  0.99 (faster) for most ops; every 8th op (50 ops, 200 configs) is slower from a commit
  of its own on (1.2x to 2.4x; before it, 0.92x), so "where we lose" has a history.
  GPU time: 85% of the total. Every value has +-1% noise.
- Accuracy: a max_diff (stats {"consistent": ...}) per op and config at every 10th
  commit (32,000 measurements); every 37th op differs (max_diff 0.01, not consistent).
- Unmatched: every 50th op (8 ops) has a config 4 that only Paddle measured (3,200 more
  measurements), listed by the Ops page as results without a counterpart.

Everything is generated inside DuckDB with INSERT ... SELECT.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import db  # noqa: E402
from scripts.make_synthetic import build  # noqa: E402

OPS, CONFIGS, COMMITS = 400, 4, 200
KEY_PREFIX = "synthetic-opbench-"
LOSING_EVERY, DIFF_EVERY, EXTRA_CONFIG_EVERY, ACCURACY_EVERY = 8, 37, 50, 10

# The series: (op, config, framework, metric) for speed, (op, config) for accuracy, and the
# Paddle-only config 4 of every 50th op. `k` numbers them from 1 in this order.
SERIES = """
    WITH speed AS (
        SELECT o, c, f, m FROM range($ops) a(o), range($configs) b(c), range(2) d(f),
                               range(2) e(m)
        UNION ALL
        SELECT o, $configs, 0, m FROM range($ops) a(o), range(2) e(m)
        WHERE o % $extra_every = 7
    ),
    speed_and_accuracy AS (
        SELECT o, c, f, m FROM speed
        UNION ALL
        SELECT o, c, 0, 2 FROM range($ops) a(o), range($configs) b(c)
    )
    SELECT row_number() OVER (ORDER BY m = 2, o, c, f, m) AS k, o, c, f, m
    FROM speed_and_accuracy
"""


def clear(conn: duckdb.DuckDBPyConnection) -> None:
    """What an earlier run added: its measurements, series and sources."""
    conn.execute(
        "DELETE FROM measurements WHERE series_id IN"
        " (SELECT series_id FROM series WHERE starts_with(series_key, $p))",
        {"p": KEY_PREFIX},
    )
    conn.execute("DELETE FROM series WHERE starts_with(series_key, $p)", {"p": KEY_PREFIX})
    conn.execute("DELETE FROM sources WHERE starts_with(uri, $p)", {"p": KEY_PREFIX})


def add(path: Path) -> int:
    """Add the op results to the store at `path`; returns how many measurements."""
    conn = db.connect(path)
    try:
        conn.execute("BEGIN")
        clear(conn)
        conn.execute("SELECT setseed(0.6)")
        shape = {
            "ops": OPS,
            "configs": CONFIGS,
            "extra_every": EXTRA_CONFIG_EVERY,
        }
        base_series, base_source = conn.execute(
            "SELECT (SELECT coalesce(max(series_id), 0) FROM series),"
            " (SELECT coalesce(max(source_id), 0) FROM sources)"
        ).fetchone()
        conn.execute(
            f"CREATE TEMP TABLE op_series AS SELECT $base + k AS series_id, * FROM ({SERIES})",
            {**shape, "base": base_series},
        )
        conn.execute(
            """
            INSERT INTO sources (source_id, uri, content_hash, parser, kind, reader, encoding,
                                 project, url, title, created_at, ingested_at, size_bytes,
                                 n_lines, n_measurements, n_problems, status)
            SELECT $base + p + 1, $prefix || p, $prefix || p, 'opbench', 'opbench', '1',
                   'utf-8', 'op-benchmark', 'https://ci.example.com/opbench/' || p,
                   'synthetic op benchmark run ' || p,
                   TIMESTAMP '2020-01-01 02:00:00' + to_days(p),
                   TIMESTAMP '2020-01-01 03:00:00' + to_days(p), 0, 0, 0, 0, 'ok'
            FROM range($commits) t(p)
            """,
            {"base": base_source, "prefix": KEY_PREFIX, "commits": COMMITS},
        )
        conn.execute(
            """
            INSERT INTO series (series_id, series_key, project, benchmark, task, metric, unit,
                                direction, framework, device, params, testbed)
            SELECT series_id, $prefix || k, 'op-benchmark',
                   'op/synthetic_op_' || lpad(o::VARCHAR, 3, '0'),
                   CASE WHEN o % 4 = 3 THEN 'op-backward' ELSE 'op-forward' END,
                   ['total_time', 'gpu_time', 'max_diff'][m + 1],
                   CASE WHEN m = 2 THEN '' ELSE 'ms' END, 'lower',
                   ['paddle', 'tensorflow'][f + 1], 'GPU',
                   json_object('config_id', c, 'parameters',
                               'x (Variable) - dtype: float32, shape: [' || (16 * (c + 1))
                               || ', 128, 257, 257]'),
                   CASE WHEN f = 1 THEN json_object('tensorflow', '2.3.0') ELSE '{}'::JSON END
            FROM op_series
            """,
            {"prefix": KEY_PREFIX},
        )
        # Paddle / TensorFlow per op and config: faster for most ops; every 8th op slower
        # from a commit of its own on. Both frameworks' values of one commit share it.
        conn.execute(
            """
            INSERT INTO measurements (series_id, source_id, run, version, measured_at, value,
                                      status, samples, warmup, stats, line, raw)
            SELECT s.series_id, $base_source + p + 1, 0,
                   CASE WHEN s.f = 0 THEN md5('opbench-' || p) || md5('commit-' || p)[:8] END,
                   TIMESTAMP '2020-01-01 02:00:00' + to_days(p),
                   (0.02 + ((s.o * 37 + s.c * 11) % 500) / 50.0)
                   * CASE WHEN s.f = 1 THEN 1.0
                          WHEN s.o % $losing_every = 3
                               AND p >= 60 + (s.o * 13) % 120 THEN 1.2 + (s.o % 5) * 0.3
                          WHEN s.o % $losing_every = 3 THEN 0.92
                          ELSE 0.8 + ((s.o * 7 + s.c) % 20) / 100.0 END
                   * CASE WHEN s.m = 1 THEN 0.85 ELSE 1.0 END
                   * (1 + 0.02 * (random() - 0.5)),
                   'ok', 80, 10, NULL, s.k, NULL
            FROM op_series s, range($commits) t(p)
            WHERE s.m < 2
            """,
            {"base_source": base_source, "commits": COMMITS, "losing_every": LOSING_EVERY},
        )
        conn.execute(
            """
            INSERT INTO measurements (series_id, source_id, run, version, measured_at, value,
                                      status, samples, warmup, stats, line, raw)
            SELECT s.series_id, $base_source + p + 1, 0,
                   md5('opbench-' || p) || md5('commit-' || p)[:8],
                   TIMESTAMP '2020-01-01 02:00:00' + to_days(p),
                   CASE WHEN s.o % $diff_every = 5 THEN 0.01 ELSE 5e-7 * random() END,
                   'ok', NULL, NULL,
                   json_object('consistent', s.o % $diff_every <> 5, 'num_outputs', 1),
                   s.k, NULL
            FROM op_series s, range(0, $commits, $accuracy_every) t(p)
            WHERE s.m = 2
            """,
            {
                "base_source": base_source,
                "commits": COMMITS,
                "diff_every": DIFF_EVERY,
                "accuracy_every": ACCURACY_EVERY,
            },
        )
        conn.execute(
            "UPDATE sources SET n_measurements = c FROM (SELECT source_id, count(*) AS c"
            " FROM measurements GROUP BY source_id) m"
            " WHERE sources.source_id = m.source_id AND starts_with(sources.uri, $p)",
            {"p": KEY_PREFIX},
        )
        added = conn.execute(
            "SELECT count(*) FROM measurements JOIN op_series USING (series_id)"
        ).fetchone()[0]
        conn.execute("COMMIT")
        return int(added)
    except Exception:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    args = parser.parse_args()
    started = time.perf_counter()
    if not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        build(args.db, 10_000_000, 2_000)
        print(f"built {args.db} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    added = add(args.db)
    print(
        f"added {added:,} op benchmark measurements to {args.db}"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
