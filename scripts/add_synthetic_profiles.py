"""Add profiler reports of documented shape to a synthetic store, for the Profiles benchmark.

    python scripts/add_synthetic_profiles.py --db bench-out/synthetic-10m.duckdb

The store must exist (scripts/make_synthetic.py builds it). Shape (fixed seed, so two runs
of the script give the same rows; running it again replaces what it added before):

- SOURCES sources (default 100) named ``synthetic/synthetic-profile-N``, project cycling
  over make_synthetic's projects, dated a week apart from 2019-01-07, each holding
  RUNS_PER_SOURCE runs (default 5): 500 runs;
- EVENTS rows per run (default 300), as Paddle's newer report lays them out
  (``Place: All``, times in ms, CPU and GPU time):
  - a GpuMemCpy summary of 3 rows (GpuMemcpy, then GpuMemcpySync and GpuMemcpyAsync
    nested under it), section "memcpy", ratios of the run's total;
  - an Event Summary of EVENTS - 3 rows: the top-level ops and, under each of the NESTED
    (40) largest, 3 nested events (``op/compute``, ``op/infer_shape``,
    ``op/prepare_data``, depth 1). So 300 rows = 3 + 177 ops + 40 x 3 nested;
  - op i of run r: the first 12 carry real Paddle op names (mul, elementwise_add, ...),
    the rest ``op_NNN``; ops 150 and up are drawn from a rotating pool of 60 names by run,
    so two runs hold ops the other lacks (appeared / disappeared in a diff); total =
    5000 / (1 + i) ms x a per-run drift of +-10% x +-2.5% noise, CPU share 30-70%;
- 20 IR passes per run (real fuse pass names), each fired in two runs of three with
  1-24 subgraphs, else logged without a count;
- a runs row per run, labelled ``synthetic profile N run R``.

Everything is generated inside DuckDB with INSERT ... SELECT, in one transaction.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard import db  # noqa: E402
from scripts.make_synthetic import PROJECTS  # noqa: E402

URI_PREFIX = "synthetic/synthetic-profile-"
REAL_OPS = [
    "mul",
    "elementwise_add",
    "softmax",
    "matmul",
    "layer_norm",
    "transpose2",
    "dropout",
    "reshape2",
    "scale",
    "fc",
    "fused_fc_elementwise_layernorm",
    "lookup_table",
]
PASSES = [
    "is_test_pass",
    "simplify_with_basic_ops_pass",
    "fc_fuse_pass",
    "fc_elementwise_layernorm_fuse_pass",
    "multihead_matmul_fuse_pass",
    "embedding_eltwise_layernorm_fuse_pass",
    "skip_layernorm_fuse_pass",
    "fuse_elewise_add_act_pass",
    "conv_bn_fuse_pass",
    "conv_eltwiseadd_bn_fuse_pass",
    "conv_elementwise_add_act_fuse_pass",
    "transpose_flatten_concat_fuse_pass",
    "seqconv_eltadd_relu_fuse_pass",
    "fc_gru_fuse_pass",
    "fc_lstm_fuse_pass",
    "attention_lstm_fuse_pass",
    "seq_concat_fc_fuse_pass",
    "squared_mat_sub_fuse_pass",
    "repeated_fc_relu_fuse_pass",
    "runtime_context_cache_pass",
]
NESTED = 40  # ops with nested events
CHILDREN = ("compute", "infer_shape", "prepare_data")
CHILD_SHARE = (0.7, 0.1, 0.05)  # of the parent's total


def add(path: Path, sources: int = 100, runs_per_source: int = 5, events: int = 300) -> int:
    """Replace the synthetic profiles of the store at `path`; returns the runs added."""
    memcpy_rows = 3
    ops = events - memcpy_rows - NESTED * len(CHILDREN)
    if ops < NESTED:
        raise SystemExit(f"--events {events} is too few: at least {memcpy_rows + NESTED * 4}")
    conn = db.connect(path)
    try:
        conn.execute("BEGIN TRANSACTION")
        # What an earlier run of this script added goes first: running it again replaces.
        old = "SELECT source_id FROM sources WHERE starts_with(uri, ?)"
        for table in ("profile_events", "passes", "runs", "sources"):
            conn.execute(f"DELETE FROM {table} WHERE source_id IN ({old})", [URI_PREFIX])
        base = conn.execute("SELECT coalesce(max(source_id), 0) FROM sources").fetchone()[0]
        conn.execute("SELECT setseed(0.17)")
        conn.execute(
            """
            INSERT INTO sources (source_id, uri, content_hash, parser, kind, reader, encoding,
                                 project, url, author, title, created_at, ingested_at,
                                 size_bytes, n_lines, n_measurements, n_problems, status)
            SELECT $base + n, $prefix || n, 'synthetic-profile-' || n, 'profiler,passes',
                   'auto', '1', 'utf-8', $projects[1 + n % 5], NULL, 'synthetic',
                   'synthetic profile ' || n, TIMESTAMP '2019-01-07' + to_days(7 * n),
                   TIMESTAMP '2021-01-01', 0, 0, 0, 0, 'ok'
            FROM range(1, $sources + 1) t(n)
            """,
            {"base": base, "prefix": URI_PREFIX, "projects": list(PROJECTS), "sources": sources},
        )
        conn.execute(
            """
            INSERT INTO runs
            SELECT $base + n, r, 'synthetic profile ' || n || ' run ' || r, 1
            FROM range(1, $sources + 1) a(n), range(0, $runs) b(r)
            """,
            {"base": base, "sources": sources, "runs": runs_per_source},
        )
        # The top-level ops of every run, then their ratios from the run's total.
        conn.execute(
            """
            CREATE TEMP TABLE synthetic_ops AS
            SELECT $base + n AS source_id, r AS run, i,
                   CASE WHEN i < len($real) THEN $real[i + 1]
                        WHEN i < 150 THEN 'op_' || lpad(i::VARCHAR, 3, '0')
                        ELSE 'op_' || lpad((150 + (i + (n * $runs + r) * 7) % 60)::VARCHAR,
                                           3, '0') END AS event,
                   5000.0 / (1 + i) * (1 + 0.1 * sin(n * $runs + r + i))
                       * (1 + 0.05 * (random() - 0.5)) AS total,
                   0.3 + 0.4 * ((i * 37) % 100) / 100.0 AS cpu_share,
                   1000 + (i * 7919) % 100000 AS calls
            FROM range(1, $sources + 1) a(n), range(0, $runs) b(r), range(0, $ops) c(i)
            """,
            {
                "base": base,
                "real": REAL_OPS,
                "sources": sources,
                "runs": runs_per_source,
                "ops": ops,
            },
        )
        conn.execute(
            """
            CREATE TEMP TABLE synthetic_totals AS
            SELECT source_id, run, sum(total) AS run_total FROM synthetic_ops GROUP BY ALL
            """
        )
        event_columns = (
            "source_id, run, section, place, event, thread, depth, calls, total, cpu_time,"
            " cpu_ratio, gpu_time, gpu_ratio, min, max, ave, ratio, line, raw"
        )
        conn.execute(
            f"""
            INSERT INTO profile_events ({event_columns})
            SELECT o.source_id, o.run, 'event', 'All', o.event, 'thread0', 0, o.calls,
                   o.total, o.total * o.cpu_share, o.cpu_share,
                   o.total * (1 - o.cpu_share), 1 - o.cpu_share,
                   o.total / o.calls * 0.5, o.total / o.calls * 20, o.total / o.calls,
                   o.total / t.run_total, 20 + o.i * 4, NULL
            FROM synthetic_ops o JOIN synthetic_totals t USING (source_id, run)
            """
        )
        conn.execute(
            f"""
            INSERT INTO profile_events ({event_columns})
            SELECT o.source_id, o.run, 'event', 'All', o.event || '/' || $children[k + 1],
                   'thread0', 1, o.calls, o.total * $shares[k + 1],
                   o.total * $shares[k + 1] * o.cpu_share, o.cpu_share,
                   o.total * $shares[k + 1] * (1 - o.cpu_share), 1 - o.cpu_share,
                   o.total * $shares[k + 1] / o.calls * 0.5,
                   o.total * $shares[k + 1] / o.calls * 20,
                   o.total * $shares[k + 1] / o.calls,
                   o.total * $shares[k + 1] / t.run_total, 20 + o.i * 4 + 1 + k, NULL
            FROM synthetic_ops o JOIN synthetic_totals t USING (source_id, run),
                 range(0, 3) c(k)
            WHERE o.i < $nested
            """,
            {"children": list(CHILDREN), "shares": list(CHILD_SHARE), "nested": NESTED},
        )
        conn.execute(
            f"""
            INSERT INTO profile_events ({event_columns})
            SELECT source_id, run, 'memcpy', 'All',
                   ['GpuMemcpy', 'GpuMemcpySync', 'GpuMemcpyAsync'][k + 1], '',
                   CASE WHEN k = 0 THEN 0 ELSE 1 END, [6000, 2000, 4000][k + 1],
                   run_total * [0.05, 0.02, 0.03][k + 1], NULL, NULL, NULL, NULL,
                   NULL, NULL, NULL, [0.05, 0.02, 0.03][k + 1], 10 + k, NULL
            FROM synthetic_totals, range(0, 3) c(k)
            """
        )
        conn.execute(
            """
            INSERT INTO passes
            SELECT $base + n, r, $passes[k + 1], 'ir', k,
                   CASE WHEN (k + n * $runs + r) % 3 = 0 THEN NULL
                        ELSE 1 + (k * 5 + n * $runs + r) % 24 END,
                   1 + k, '--- Running IR pass [' || $passes[k + 1] || ']'
            FROM range(1, $sources + 1) a(n), range(0, $runs) b(r), range(0, len($passes)) c(k)
            """,
            {"base": base, "passes": PASSES, "sources": sources, "runs": runs_per_source},
        )
        conn.execute("DROP TABLE synthetic_ops")
        conn.execute("DROP TABLE synthetic_totals")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return sources * runs_per_source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=ROOT / "bench-out" / "synthetic-10m.duckdb")
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--runs-per-source", type=int, default=5)
    parser.add_argument("--events", type=int, default=300)
    args = parser.parse_args()
    if not args.db.exists():
        print(
            f"no store at {args.db}: build one first with "
            f"`python scripts/make_synthetic.py --out {args.db}`",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    runs = add(args.db, args.sources, args.runs_per_source, args.events)
    print(
        f"added {runs:,} profile runs x {args.events} events to {args.db}"
        f" in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
