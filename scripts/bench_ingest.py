"""Ingest throughput next to the raw ceilings measured in the same run.

    python scripts/bench_ingest.py [--rows 1000000] [--log-mb 500] [--repeat 3] [--out DIR]
        [--mix-mb 100] [--mixes sparse,session,...] [--parts a,b,c,d,e,f,g,h,i,j]

(a) ROWS measurements in perfboard's JSONL format (2,000 series, 500 versions each, about
    485 bytes a record), end to end into a fresh DuckDB store with `ingest results`,
    against DuckDB's own read_json of the same file into a bare table.
(b) a LOG_MB tester log: one glog latency line per 50 noise lines (glog operator traces
    of about 180 bytes), ingested with `ingest auto` into a fresh store, against a bare
    `for line in f` loop over the same file (binary mode, the faster ceiling). The fixed
    cost of each (interpreter, imports, opening the store) is measured on a 1 MB file of
    the same shape and subtracted from both. Peak memory of the ingest is its process's
    max RSS.
(c) the ROWS file ingested again, unchanged: the time, and that the store file did not
    change.
(d) 1,000 JSON result files of today's tools (vLLM --save-result, Google Benchmark,
    pytest-benchmark, hyperfine, asv, llama-bench), made from the real samples in
    tests/fixtures with their numbers scaled, ingested as one folder with `ingest auto`,
    against a bare loop that opens and json.loads every file.
(e) a 100 MB Nsight Systems CSV (`nsys stats --format csv`, the GPU trace of a long run),
    against a bare `for line in f` loop and pyarrow's CSV reader over the same file.

(f) logs of every mix a team's logs may be (MIXES): today's sparse log; dense logs of IR
    pass lines (a predictor's optimisation as Paddle prints it), of a test session (passes,
    a gtest case, its latency line), of gtest lines, of latency lines only, of Paddle
    profiler reports; the vLLM / trtexec / nsys samples of tests/fixtures/modern repeated;
    110 KB tensor-dump lines; a log without its last newline; the sparse log with a Chinese
    comment on every line (full-width punctuation, which NFKC changes); dense logs of the
    other latency lines Paddle prints: PrintTime's three lines a thread (two threads side by
    side, five batch sizes), the inference demo's model line and summary, and the demo's
    reports as its C++ (glog) and Python (logging) scripts print them; the test
    session as GitHub Actions keeps a job's log (a timestamp before every line); the real
    documents of tests/fixtures and data/samples (issue comments, tester logs, profiler
    reports, PR tables, tool outputs) laid end to end and repeated. Each --mix-mb big and
    1 MB for the fixed costs, ingested with `python -m ingest auto FILE --db fresh` WITH its
    change detection, against the bare loop; the table gives the marginal times, their
    ratio and the ingest's peak RSS (os.wait4), and the worst ratio (goal <= 2x). Beside
    them, the write floor: the time DuckDB alone takes to write the rows that ingest stored
    into a fresh store ("write s"), and its ratio to the loop ("write x"); where it is
    over 2x, no parser can bring the ingest under 2x with the rows stored as they are.
(g) a small real document (a tester log with its profile and passes) ingested with
    `python -m ingest auto` into an existing store (a copy made afresh for each run),
    against `python -c "import duckdb, pyarrow"`: medians of >= 5 fresh processes, wall
    time (goal <= 2x).

(h) the real documents of (f), one file each, as one folder: `python -m ingest auto FOLDER`
    into a fresh store (with detection), medians of >= 5 fresh processes; the time of each
    document after the first (a folder of the first alone is the start-up).
(i) the small document of (g) into a store whose series it adds to already holds a long
    history (the latency mix of (f), --mix-mb big: 918,349 points at 100 MB, detected
    once): `python -m ingest auto` with the change detection it runs on that series (its
    last windows, perfboard/windows.py: the document only appends to it), and with
    --no-detect, against `python -c "import duckdb, pyarrow"`; medians of >= 5 fresh
    processes (goal <= 2x, as (g)).
(j) the floor of any reader of a log where every line is a record (the latency mix of (f),
    one tester line each): what the native tools the issue names take with no Python per
    line, against the same bare loop, 1 MB start-up subtracted, medians of fresh processes.
    pyarrow's CSV reader splits the lines (multithreaded) and pc.extract_regex (RE2) takes
    the latency from each, storing nothing; DuckDB reads the lines (read_csv), takes the
    value with regexp_extract and inserts (line, value) into a fresh store, and again with
    the line's text beside it (what a record keeps for provenance). Where these are over
    2x, no parser of perfboard's can be under it on such a log.

Parts (a)-(e) run the ingest with --no-detect: they compare reading and storing with their
ceilings. The change detection an ingest runs afterwards on the series it touched is
timed on its own, over the store of (a) (`python -m perfboard detect`).

Every run is a fresh process; the steps of a part run in rounds (ceiling, perfboard,
ceiling, ...) and each figure is the median over --repeat rounds. --parts picks parts
(--only results|log|tools still works).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("ernie", "bert", "resnet50", "transformer", "seq2seq")


def write_results(path: Path, rows: int) -> None:
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(rows):
            s = i % 2000
            record = {
                "schema": "perfboard.result/1",
                "project": MODELS[s % 5],
                "benchmark": MODELS[s % 5],
                "task": "inference",
                "metric": "latency",
                "unit": "ms",
                "direction": "lower",
                "framework": "paddle",
                "device": ("Tesla P4", "Tesla T4", "Tesla V100")[s % 3],
                "params": {
                    "batch_size": (1, 8, 32, 64)[s % 4],
                    "seq_len": (128, 512)[s % 2],
                    "precision": ("fp32", "int8", "fp16")[s % 3],
                    "variant": s // 24,
                },
                "testbed": {"cuda": "10.0", "cudnn": "7.6"},
                "version": f"{i // 2000:040x}",
                "time": f"2020-01-01T{(i // 2000) % 24:02d}:00:00Z",
                "value": round(rng.uniform(5, 50), 4),
                "status": "ok",
                "samples": 100,
                "warmup": 1,
                "stats": {},
                "run": 0,
            }
            out.write(json.dumps(record) + "\n")


NOISE = (
    "I0719 10:14:50.{us:06d} 70931 operator.cc:169] CUDAPlace(0) Op(elementwise_add),"
    " inputs:{{X[fc_{n}.tmp_1:float[1, 128, 768]({{}})], Y[fc_{n}.b_0:float[768]({{}})]}},"
    " outputs:{{Out[fc_{n}.tmp_2:float[1, 128, 768]({{}})]}}.\n"
)
LATENCY = (
    "I0911 06:41:55.{us:06d}  7238 ernie_tester.cc:345] Run {n} samples,"
    " average latency: {ms:.5f} ms per sample.\n"
)


def write_log(path: Path, megabytes: float) -> int:
    """A tester log of about `megabytes` MB; returns how many latency lines it holds."""
    rng = random.Random(11)
    target = int(megabytes * 1e6)
    written = latencies = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            block = [NOISE.format(us=rng.randrange(10**6), n=k) for k in range(50)]
            block.append(
                LATENCY.format(us=rng.randrange(10**6), n=5000 + latencies, ms=rng.uniform(6, 7))
            )
            text = "".join(block)
            out.write(text)
            written += len(text)
            latencies += 1
    return latencies


# The real JSON documents (d) is made of: each copied 1000 / len(...) times, numbers scaled.
TOOL_JSON = (
    "tests/fixtures/modern/samples/vllm-result-json_vllm-ascend-qwen3-vl-report.json",
    "tests/fixtures/modern/samples/gbench-json_github-action-benchmark-googlecpp_output.json",
    "tests/fixtures/modern/samples/pytest-benchmark-json_github-action-benchmark-pytest_output.json",
    "tests/fixtures/modern/samples/hyperfine-json_hyperfine-pr-176.json",
    "tests/fixtures/modern/samples/asv-results-v2_mjwarp-asv-039bc13d.json",
    "tests/fixtures/modern/llama_bench/llama-bench-json_ggml-org-llama.cpp-test.json",
)


def _scaled(value: object, factor: float) -> object:
    if isinstance(value, float):
        return value * factor
    if isinstance(value, list):
        return [_scaled(v, factor) for v in value]
    if isinstance(value, dict):
        return {k: _scaled(v, factor) for k, v in value.items()}
    return value


def write_tool_json(folder: Path, files: int) -> None:
    """`files` JSON documents of today's tools, round robin over TOOL_JSON."""
    rng = random.Random(13)
    folder.mkdir()
    templates = [
        (Path(name).stem, json.loads((ROOT / name).read_text(encoding="utf-8")))
        for name in TOOL_JSON
        if (ROOT / name).exists()
    ]
    for i in range(files):
        stem, doc = templates[i % len(templates)]
        scaled = _scaled(doc, rng.uniform(0.9, 1.1))
        (folder / f"{i:04d}-{stem}.json").write_text(json.dumps(scaled, indent=1))


NSYS_TRACE_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
)
NSYS_KERNELS = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>,"
    " at::detail::Array<char *, 3>>(int, T2, T3)",
    "ampere_sgemm_128x64_tn",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false,"
    " cutlass::half_t>, false, false, false, false, true, true, false>(Flash_fwd_params)",
    "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>"
    "(T1::Params)",
    "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>(long, float,"
    " const T1 *, T1 *, T1 *)",
)


def write_nsys_trace(path: Path, megabytes: float) -> int:
    """A `nsys stats --report cuda_gpu_trace --format csv` of about `megabytes`; its rows."""
    rng = random.Random(17)
    target = int(megabytes * 1e6)
    rows = written = 0
    start = 1_000_000_000
    with open(path, "w", encoding="utf-8") as out:
        out.write(NSYS_TRACE_HEADER)
        while written < target:
            name = NSYS_KERNELS[rows % len(NSYS_KERNELS)]
            duration = rng.randrange(2_000, 400_000)
            line = (
                f"{start},{duration},{rows + 120},{rng.randrange(1, 4096)},1,1,128,1,1,"
                f'{rng.randrange(16, 255)},0.000,0.000,,,,,0,1,7,"{name}"\n'
            )
            out.write(line)
            written += len(line)
            start += duration + rng.randrange(500, 5_000)
            rows += 1
    return rows


def run_timed(code: str) -> dict[str, float]:
    """Run Python code in a fresh process; it prints a JSON dict of its own figures."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


BARE_READ_JSON = """
import json, time, duckdb
t = time.perf_counter()
c = duckdb.connect({db!r})
c.execute("CREATE TABLE t AS SELECT * FROM read_json(?, format='newline_delimited')", [{path!r}])
n = c.execute("SELECT count(*) FROM t").fetchone()[0]
c.close()
print(json.dumps({{"seconds": time.perf_counter() - t, "rows": n}}))
"""

DETECT = """
import json, time
t = time.perf_counter()
import duckdb
from perfboard import alerts
conn = duckdb.connect({db!r})
result = alerts.detect_store(conn)
conn.close()
print(json.dumps({{"seconds": time.perf_counter() - t, "series": result.series}}))
"""

# As `python -m ingest` starts (ingest/__main__.py): the collector off while importing,
# the imports frozen for life, pyarrow kept from importing pandas. Without them the parts
# below measured another process than the command's (nothing frozen, pandas imported).
INGEST = """
import gc, json, resource, time
t = time.perf_counter()
gc.disable()
from ingest.cli import arrow_without_pandas, main
from ingest.save import freeze_for_life
freeze_for_life()
gc.enable()
arrow_without_pandas()
status = main([{kind!r}, {path!r}, "--db", {db!r}, "--quiet", "--no-detect"])
seconds = time.perf_counter() - t
import duckdb
c = duckdb.connect({db!r}, read_only=True)
n = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
events = c.execute("SELECT count(*) FROM profile_events").fetchone()[0]
calls = c.execute("SELECT coalesce(sum(calls), 0) FROM profile_events").fetchone()[0]
peak = max(resource.getrusage(who).ru_maxrss for who in
           (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))  # workers too
print(json.dumps({{"seconds": seconds, "rows": n, "events": events, "calls": calls,
                  "status": status, "peak_mb": peak / 1024}}))
"""

BARE_LOOP = """
import json, time
t = time.perf_counter()
n = 0
with open({path!r}, "rb") as f:
    for line in f:
        n += 1
print(json.dumps({{"seconds": time.perf_counter() - t, "rows": n}}))
"""


Step = tuple[str, Callable[[], str], Callable[[], None] | None]


def interleaved(repeat: int, steps: list[Step]) -> dict[str, list[dict[str, float]]]:
    """Run each step once per round, round after round, each in a fresh process.

    Interleaving puts the ceiling and perfboard under the same machine load in every
    round (this machine is shared: a loop alone varied from 0.37 to 0.51 s between runs),
    so the ratios of one round compare like with like.
    """
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in steps}
    for _ in range(repeat):
        for name, make_code, cleanup in steps:
            if cleanup:
                cleanup()
            runs[name].append(run_timed(make_code()))
    return runs


def median(runs: list[dict[str, float]], key: str = "seconds") -> float:
    return statistics.median(run[key] for run in runs)


def fresh(db: Path):
    def clean() -> None:
        for p in (db, db.with_name(db.name + ".wal")):
            p.unlink(missing_ok=True)

    return clean


def bench_results(work: Path, rows: int, repeat: int) -> None:
    path = work / "results.jsonl"
    write_results(path, rows)
    size_mb = path.stat().st_size / 1e6
    bare_db, our_db = work / "bare.duckdb", work / "ours.duckdb"
    runs = interleaved(
        repeat,
        [
            (
                "bare",
                lambda: BARE_READ_JSON.format(db=str(bare_db), path=str(path)),
                fresh(bare_db),
            ),
            (
                "ours",
                lambda: INGEST.format(kind="results", path=str(path), db=str(our_db)),
                fresh(our_db),
            ),
        ],
    )
    assert all(run["rows"] == rows for run in runs["ours"]), runs["ours"]
    bare_s, ours_s = median(runs["bare"]), median(runs["ours"])
    ratio = statistics.median(
        b["seconds"] / o["seconds"] for b, o in zip(runs["bare"], runs["ours"], strict=True)
    )
    print(f"(a) {rows:,} JSONL measurements ({size_mb:.0f} MB), medians of {repeat} rounds")
    print(
        f"    DuckDB read_json, bare table : {bare_s:6.2f} s  {rows / bare_s / 1e6:5.2f} M rows/s"
    )
    print(
        f"    ingest results, end to end   : {ours_s:6.2f} s  {rows / ours_s / 1e6:5.2f} M rows/s"
        f"  = {ratio:.2f} of read_json (goal >= 0.5),"
        f" peak {median(runs['ours'], 'peak_mb'):.0f} MB"
    )
    detect = interleaved(repeat, [("detect", lambda: DETECT.format(db=str(our_db)), None)])
    print(
        f"    then change detection        : {median(detect['detect']):6.2f} s over the"
        f" {detect['detect'][0]['series']:,} series it touched"
    )
    # (c) the same file again: nothing to do, nothing written.
    before = our_db.stat().st_mtime_ns, our_db.stat().st_size
    again = interleaved(
        repeat,
        [("again", lambda: INGEST.format(kind="results", path=str(path), db=str(our_db)), None)],
    )
    after = our_db.stat().st_mtime_ns, our_db.stat().st_size
    wal = our_db.with_name(our_db.name + ".wal")
    print(
        f"(c) re-ingest unchanged          : {median(again['again']):6.2f} s (goal < 3 s);"
        f" store file {'unchanged' if before == after else 'CHANGED'},"
        f" WAL {'absent' if not wal.exists() or wal.stat().st_size == 0 else 'written'}"
    )


def bench_log(work: Path, megabytes: float, repeat: int) -> None:
    path, small = work / "tester.log", work / "tester-1mb.log"
    latencies = write_log(path, megabytes)
    write_log(small, 1)
    size = path.stat().st_size
    db = work / "log.duckdb"
    runs = interleaved(
        repeat,
        [
            ("loop", lambda: BARE_LOOP.format(path=str(path)), None),
            ("loop0", lambda: BARE_LOOP.format(path=str(small)), None),
            ("ours", lambda: INGEST.format(kind="auto", path=str(path), db=str(db)), fresh(db)),
            ("ours0", lambda: INGEST.format(kind="auto", path=str(small), db=str(db)), fresh(db)),
        ],
    )
    assert all(run["rows"] == latencies for run in runs["ours"]), (runs["ours"], latencies)
    loop_s = median(runs["loop"]) - median(runs["loop0"])
    ours_s = median(runs["ours"]) - median(runs["ours0"])
    ratio = statistics.median(
        (lp["seconds"] - lp0["seconds"]) / (o["seconds"] - o0["seconds"])
        for lp, lp0, o, o0 in zip(
            runs["loop"], runs["loop0"], runs["ours"], runs["ours0"], strict=True
        )
    )
    lines = int(runs["loop"][0]["rows"])
    print(f"(b) {size / 1e6:.0f} MB tester log, {latencies:,} latency lines in {lines:,} lines,")
    print(f"    medians of {repeat} rounds, fixed costs (a 1 MB file) subtracted")
    print(f"    bare `for line in f` loop    : {loop_s:6.2f} s  {size / loop_s / 1e9:5.2f} GB/s")
    print(
        f"    ingest auto, end to end      : {ours_s:6.2f} s  {size / ours_s / 1e9:5.2f} GB/s"
        f"  = {ratio:.2f} of the loop (goal >= 0.5; median of the rounds' ratios)"
    )
    print(
        f"    fixed costs: loop {median(runs['loop0']):.2f} s,"
        f" ingest {median(runs['ours0']):.2f} s;"
        f" ingest peak RSS {median(runs['ours'], 'peak_mb'):.0f} MB (goal < 1024)"
    )


BARE_JSON_FILES = """
import json, os, time
t = time.perf_counter()
n = 0
for name in sorted(os.listdir({path!r})):
    with open(os.path.join({path!r}, name), "rb") as f:
        json.loads(f.read())
    n += 1
print(json.dumps({{"seconds": time.perf_counter() - t, "rows": n}}))
"""

BARE_ARROW_CSV = """
import json, time
t = time.perf_counter()
import pyarrow.csv
n = pyarrow.csv.read_csv({path!r}).num_rows
print(json.dumps({{"seconds": time.perf_counter() - t, "rows": n}}))
"""


def bench_tool_json(work: Path, files: int, repeat: int) -> None:
    folder = work / "tool-json"
    write_tool_json(folder, files)
    size = sum(p.stat().st_size for p in folder.iterdir())
    db = work / "tools.duckdb"
    runs = interleaved(
        repeat,
        [
            ("loop", lambda: BARE_JSON_FILES.format(path=str(folder)), None),
            ("ours", lambda: INGEST.format(kind="auto", path=str(folder), db=str(db)), fresh(db)),
        ],
    )
    loop_s, ours_s = median(runs["loop"]), median(runs["ours"])
    rows = int(runs["ours"][0]["rows"])
    print(
        f"(d) {files:,} JSON results of today's tools ({size / 1e6:.0f} MB), {rows:,} measurements"
    )
    print(f"    bare open + json.loads loop  : {loop_s:6.2f} s  {files / loop_s:7.0f} files/s")
    print(
        f"    ingest auto FOLDER, end to end: {ours_s:6.2f} s  {files / ours_s:7.0f} files/s"
        f"  = {loop_s / ours_s:.2f} of the loop, peak {median(runs['ours'], 'peak_mb'):.0f} MB"
    )


def bench_nsys_csv(work: Path, megabytes: float, repeat: int) -> None:
    path = work / "cuda_gpu_trace.csv"
    kernels = write_nsys_trace(path, megabytes)
    db = work / "nsys.duckdb"
    runs = interleaved(
        repeat,
        [
            ("loop", lambda: BARE_LOOP.format(path=str(path)), None),
            ("arrow", lambda: BARE_ARROW_CSV.format(path=str(path)), None),
            ("ours", lambda: INGEST.format(kind="auto", path=str(path), db=str(db)), fresh(db)),
        ],
    )
    loop_s, arrow_s, ours_s = (median(runs[k]) for k in ("loop", "arrow", "ours"))
    size = path.stat().st_size
    events = int(runs["ours"][0]["events"])
    calls = int(runs["ours"][0]["calls"])
    if calls != kernels:  # fast because it dropped rows is no result
        raise SystemExit(f"(e) stored {calls:,} of the trace's {kernels:,} kernel launches")
    print(
        f"(e) {size / 1e6:.0f} MB nsys cuda_gpu_trace CSV, {kernels:,} kernel launches"
        f" -> {events} kernel rows, every launch counted"
    )
    print(f"    bare `for line in f` loop    : {loop_s:6.2f} s  {size / loop_s / 1e9:5.2f} GB/s")
    print(f"    pyarrow.csv.read_csv         : {arrow_s:6.2f} s  {size / arrow_s / 1e9:5.2f} GB/s")
    print(
        f"    ingest auto, end to end      : {ours_s:6.2f} s  {size / ours_s / 1e9:5.2f} GB/s"
        f"  = {loop_s / ours_s:.2f} of the loop, peak {median(runs['ours'], 'peak_mb'):.0f} MB"
    )


# -- (f) logs of every mix -----------------------------------------------------------------

# The IR passes of one predictor, as Paddle's analyzer prints them for every model a test
# session builds (names from Paddle's pass list; "detected" lines as glog lines).
PASS_NAMES = (
    "simplify_with_basic_ops_pass",
    "layer_norm_fuse_pass",
    "attention_lstm_fuse_pass",
    "seqconv_eltadd_relu_fuse_pass",
    "fc_lstm_fuse_pass",
    "mul_lstm_fuse_pass",
    "fc_gru_fuse_pass",
    "multihead_matmul_fuse_pass_v2",
    "fc_fuse_pass",
    "repeated_fc_relu_fuse_pass",
    "squared_mat_sub_fuse_pass",
    "conv_bn_fuse_pass",
    "conv_eltwiseadd_bn_fuse_pass",
    "conv_elementwise_add_act_fuse_pass",
    "fc_elementwise_layernorm_fuse_pass",
    "transpose_flatten_concat_fuse_pass",
    "runtime_context_cache_pass",
)
GTEST_RUN = "[ RUN      ] AnalyzerErnieTest.{name}_{k}\n"
GTEST_OK = "[       OK ] AnalyzerErnieTest.{name}_{k} ({ms} ms)\n"
PROFILE_HEADER = (
    "Event                                      Calls       Total       CPU Time (Ratio)"
    "        GPU Time (Ratio)        Min.        Max.        Ave.        Ratio.\n"
)
PROFILE_ROW = (
    "thread0::{op:<36} {calls:<11} {total:<11.6g} {cpu:.6f} ({cr:.6f}) {gpu:.6f} ({gr:.6f})"
    "  {mn:<11.6g} {mx:<11.6g} {ave:<11.6g} {ratio:.6g}\n"
)
PROFILE_OPS = (
    "fc",
    "matmul",
    "transpose2",
    "layer_norm",
    "elementwise_add",
    "softmax",
    "reshape2",
    "scale",
    "stack",
    "lookup_table",
    "dropout",
    "relu",
    "gelu",
    "slice",
    "concat",
)
# The tool outputs of "what teams run today": their sample documents, fences dropped.
MODERN_SAMPLES = (
    "tests/fixtures/modern/samples/vllm-bench-serve_vllm-pr-18566.md",
    "tests/fixtures/modern/samples/trtexec_tensorrt-4177.md",
    "tests/fixtures/modern/samples/nsys-stats-text_nanomoe-report.md",
)


# Paddle's PrintTime (tester_helper.h) as two threads of a multi-thread test print it, and
# the inference demo's model line and summary (docs/formats.md section 1).
PRINT_TIME = (
    "I1125 10:0{m}:{s:02d}.{us:06d}  {tid} tester_helper.h:{at}] ====== threads: 2,"
    " thread id: {k} ======\n",
    "I1125 10:0{m}:{s:02d}.{us:06d}  {tid} tester_helper.h:{at}] ====== batch_size: {batch},"
    " iterations: 5, repetitions: 10 ======\n",
    "I1125 10:0{m}:{s:02d}.{us:06d}  {tid} tester_helper.h:{at}] ====== batch latency:"
    " {ms:.3f}ms, number of samples: {samples}, sample latency: {sample:.4f}ms,"
    " fps: {fps:.3f} ======\n",
)
DEMO = (
    "Model name: ernie, Batch size: {batch}, device: GPU, thread num: 1\n"
    "Average latency(ms): {ms:.4f}, QPS: {qps:.4f}\n"
)
BATCH_SIZES = (1, 2, 4, 8, 16)
# The reports the demos print above their summaries, as their own C++ (glog) and Python
# (logging) code prints them (tests/fixtures/demo_reports): the real shape of a demo's log.
DEMO_REPORTS = (
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] ----------------------- Model info"
    " ----------------------\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] Model name: fcn_hrnetw18_small_v1\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] ----------------------- Data info"
    " -----------------------\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] Batch size: {batch}, Num of samples: 100\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] input_shape: dynamic shape\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] ----------------------- Conf info"
    " -----------------------\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] device: gpu, ir_optim: true\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] enable_memory_optim: true\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] enable_tensorrt: true\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] precision: {precision}\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] ----------------------- Perf info"
    " -----------------------\n"
    "I0311 10:02:{s:02d}.{us:06d} 41250 main.cc:{at}] Average latency(ms): {ms:.4f}\n",
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - ----------------------- Model info"
    " ----------------------\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - Model name: resnet50, Model type:"
    " static\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - ----------------------- Data info"
    " -----------------------\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - Batch size: {batch}, Num of"
    " samples: 1000\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - ----------------------- Conf info"
    " -----------------------\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - device: gpu\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - enable_tensorrt: True\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - trt_precision: {precision}\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - ----------------------- Perf info"
    " -----------------------\n"
    "2021-03-11 10:02:{s:02d},{ms3:03d} - __main__ - INFO - Average latency(ms): {ms:.4f}, QPS:"
    " {qps:.4f}\n",
)


def _print_time(rng: random.Random, n: int) -> str:
    batch = BATCH_SIZES[n % len(BATCH_SIZES)]
    lines = []
    for step, template in enumerate(PRINT_TIME):
        for k in (0, 1):  # the two threads' lines side by side
            ms = rng.uniform(30, 50) * batch
            lines.append(
                template.format(
                    m=n % 10,
                    s=rng.randrange(60),
                    us=rng.randrange(10**6),
                    tid=7238 + k,
                    at=380 + 2 * step,
                    k=k,
                    batch=batch,
                    ms=ms,
                    samples=batch * 5,
                    sample=ms / batch,
                    fps=1000 * batch / ms,
                )
            )
    return "".join(lines)


def _demo(rng: random.Random, n: int) -> str:
    batch = BATCH_SIZES[n % len(BATCH_SIZES)]
    ms = rng.uniform(20, 23) * batch
    return DEMO.format(batch=batch, ms=ms, qps=1000 * batch / ms)


# A Chinese comment a test script appends to its lines: full-width punctuation that NFKC
# makes ASCII, and ideographs it leaves as they are.
CHINESE = " # 第{n}次（预测）：算子耗时，见上。\n"


def _demo_report(rng: random.Random, n: int) -> str:
    batch = BATCH_SIZES[n % len(BATCH_SIZES)]
    ms = rng.uniform(20, 23) * batch
    return DEMO_REPORTS[n // len(BATCH_SIZES) % 2].format(
        s=rng.randrange(60),
        us=rng.randrange(10**6),
        ms3=rng.randrange(1000),
        at=120 + n % 30,
        batch=batch,
        precision=("fp32", "fp16", "int8")[n // 10 % 3],
        ms=ms,
        qps=1000 * batch / ms,
    )


def _latency(rng: random.Random, n: int) -> str:
    return LATENCY.format(us=rng.randrange(10**6), n=5000 + n, ms=rng.uniform(6, 7))


def _noise(rng: random.Random, k: int) -> str:
    return NOISE.format(us=rng.randrange(10**6), n=k)


def _passes(rng: random.Random, count: int) -> list[str]:
    """`count` lines of a predictor's optimisation as Paddle prints it: the analysis and IR
    passes, their "detected" lines, and the glog lines around them (some say "CPU to GPU"
    and "feed -> x", which the claims parser's anchors catch)."""

    def glog(where: str, text: str) -> str:
        return f"I0718 10:11:44.{rng.randrange(10**6):06d} 2153053 {where}] {text}\n"

    head = [
        "--- Running analysis [ir_graph_build_pass]\n",
        "--- Running analysis [ir_graph_clean_pass]\n",
        "--- Running analysis [ir_analysis_pass]\n",
    ]
    tail = [
        "--- Running analysis [ir_params_sync_among_devices_pass]\n",
        glog("ir_params_sync_among_devices_pass.cc:89", "Sync params from CPU to GPU"),
        "--- Running analysis [adjust_cudnn_workspace_size_pass]\n",
        "--- Running analysis [inference_op_replace_pass]\n",
        "--- Running analysis [memory_optimize_pass]\n",
        glog("memory_optimize_pass.cc:219", "Cluster name : fc_0.tmp_0  size: 3072"),
        "--- Running analysis [ir_graph_to_program_pass]\n",
        glog("analysis_predictor.cc:1035", "======= optimize end ======="),
        glog("naive_executor.cc:102", "---  skip [feed], feed -> src_ids"),
        glog("naive_executor.cc:102", "---  skip [feed], feed -> pos_ids"),
        glog("naive_executor.cc:102", "---  skip [save_infer_model/scale_0.tmp_1], fetch -> fetch"),
    ]
    middle: list[str] = []
    k = 0
    while len(head) + len(middle) + len(tail) < count:
        middle.append(f"--- Running IR pass [{PASS_NAMES[k % len(PASS_NAMES)]}]\n")
        if rng.random() < 0.3:
            detected = f"---  detected {rng.randrange(1, 80)} subgraphs"
            middle.append(glog("fuse_pass_base.cc:59", detected))
        k += 1
    return (head + middle + tail)[:count]


def _gtest(rng: random.Random, count: int, k: int) -> list[str]:
    lines = []
    for i in range(count // 2):
        name = PASS_NAMES[(k + i) % len(PASS_NAMES)]
        lines.append(GTEST_RUN.format(name=name, k=k + i))
        lines.append(GTEST_OK.format(name=name, k=k + i, ms=rng.randrange(1, 90_000)))
    return lines


def _profile_rows(rng: random.Random, count: int) -> list[str]:
    rows = [PROFILE_HEADER]
    for i in range(count - 1):
        calls = rng.randrange(1000, 400_000)
        ave = rng.uniform(0.01, 0.1)
        cpu = calls * ave * rng.uniform(0.3, 0.7)
        gpu = calls * ave - cpu
        rows.append(
            PROFILE_ROW.format(
                op=f"{PROFILE_OPS[i % len(PROFILE_OPS)]}_{i // len(PROFILE_OPS)}",
                calls=calls,
                total=calls * ave,
                cpu=cpu,
                cr=cpu / (calls * ave),
                gpu=gpu,
                gr=gpu / (calls * ave),
                mn=ave / 2,
                mx=ave * 100,
                ave=ave,
                ratio=rng.uniform(0, 0.4),
            )
        )
    return rows


def _modern_blocks() -> list[str]:
    blocks = []
    for name in MODERN_SAMPLES:
        lines = (ROOT / name).read_text(encoding="utf-8").splitlines(keepends=True)[1:]
        blocks.append("".join(ln for ln in lines if not ln.startswith("```")) + "\n")
    return blocks


# Every real text document the repository keeps (its tests' fixtures and the demo's
# samples), in a fixed order: the mix no generator thought of.
REAL_SUFFIXES = (".md", ".txt", ".log", ".rst")


def _real_documents() -> list[str]:
    paths = sorted(
        p
        for folder in ("tests/fixtures", "data/samples")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in REAL_SUFFIXES and p.is_file()
    )
    return [p.read_text(encoding="utf-8").rstrip("\n") + "\n\n" for p in paths]


def _long_line(rng: random.Random, k: int) -> str:
    values = " ".join(f"{rng.uniform(-1, 1):.6f}" for _ in range(12_000))  # ~110 KB
    return (
        f"I0719 10:14:50.{rng.randrange(10**6):06d} 70931 tensor_util.cc:{k}]"
        f" Tensor[fc_{k}.tmp_0] shape: [1, 128, 768] data: {values}\n"
    )


def _block(mix: str, rng: random.Random, n: int) -> str:
    """One repeat of a mix: about 50 lines of its shape and one latency line (n-th)."""
    latency = _latency(rng, n)
    if mix in ("sparse", "no-final-newline"):
        return "".join(_noise(rng, k) for k in range(50)) + latency
    if mix == "chinese":
        lines = [_noise(rng, k) for k in range(50)] + [latency]
        return "".join(line[:-1] + CHINESE.format(n=k) for k, line in enumerate(lines))
    if mix == "session":  # the issue's: a predictor's passes, its gtest case, its latency
        return "".join([*_passes(rng, 48), *_gtest(rng, 2, n), latency])
    if mix == "passes":
        return "".join(_passes(rng, 50)) + latency
    if mix == "gtest":
        return "".join(_gtest(rng, 50, n * 25)) + latency
    if mix == "latency":
        return latency
    if mix == "profiler":
        return "".join(_profile_rows(rng, 50)) + "\n" + latency
    if mix == "long-lines":
        return _long_line(rng, n) + latency
    if mix == "print-time":
        return _print_time(rng, n)
    if mix == "demo":
        return _demo(rng, n)
    if mix == "demo-reports":
        return _demo_report(rng, n)
    if mix == "ci-log":  # the session as GitHub Actions keeps a job's log
        stamp = f"2026-12-07T10:{n // 60 % 60:02d}:{n % 60:02d}.{rng.randrange(10**7):07d}Z "
        return "".join(stamp + line for line in _block("session", rng, n).splitlines(True))
    raise ValueError(mix)


MIXES = (
    "sparse",
    "session",
    "passes",
    "gtest",
    "latency",
    "profiler",
    "modern",
    "long-lines",
    "no-final-newline",
    "chinese",
    "print-time",
    "demo",
    "demo-reports",
    "ci-log",
    "real-documents",
)


def write_mix(path: Path, mix: str, megabytes: float) -> None:
    """A seeded log of one mix, about `megabytes` MB."""
    rng = random.Random(23)
    target = int(megabytes * 1e6)
    written = n = 0
    repeated = {"modern": _modern_blocks, "real-documents": _real_documents}.get(mix)
    documents = [d.encode() for d in repeated()] if repeated else []
    with open(path, "wb") as out:
        while written < target:
            text = documents[n % len(documents)] if documents else _block(mix, rng, n).encode()
            out.write(text)
            written += len(text)
            n += 1
    if mix == "no-final-newline":
        with open(path, "rb+") as fh:
            fh.truncate(written - 1)


def run_measured(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MB, the process and the children it waited for) of a
    fresh process, and its stderr."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark step failed: {argv}\n{err}")
    return seconds, usage.ru_maxrss / 1024, err


LOOP_CODE = """
import sys
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        n += 1
print(n)
"""


def _stored(db: Path) -> tuple[int, int]:
    """Rows a store holds: measurements, and measurements + profile events + passes."""
    import duckdb

    conn = duckdb.connect(str(db), read_only=True)
    try:
        counts = [
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("measurements", "profile_events", "passes")
        ]
    finally:
        conn.close()
    return counts[0], sum(counts)


# What any ingest of a mix pays at least, whatever its parsers: DuckDB writing the rows it
# stored (every table, read into Arrow first, untimed) into a fresh store of the same
# schema, committed and closed. Where this alone is over 2x the line loop, so is the ingest.
WRITE_FLOOR_CODE = """
import sys, time
import duckdb
from perfboard import db
source, target = sys.argv[1], sys.argv[2]
conn = duckdb.connect(source, read_only=True)
names = [name for (name,) in conn.execute(
    "SELECT table_name FROM information_schema.tables"
    " WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
    " AND table_name <> 'schema_migrations'").fetchall()]
tables = {name: conn.sql(f'SELECT * FROM "{name}"').to_arrow_table() for name in names}
conn.close()
out = db.connect(target)
started = time.perf_counter()
out.execute("BEGIN")
for name, rows in tables.items():
    if rows.num_rows:
        out.register("stored_rows", rows)
        out.execute(f'INSERT INTO "{name}" SELECT * FROM stored_rows')
        out.unregister("stored_rows")
out.execute("COMMIT")
out.close()
print(time.perf_counter() - started)
"""


def write_floor(db: Path, work: Path) -> float:
    """Seconds DuckDB takes to write the rows of `db` into a fresh store (WRITE_FLOOR_CODE)."""
    target = work / "floor.duckdb"
    fresh(target)()
    done = subprocess.run(
        [sys.executable, "-c", WRITE_FLOOR_CODE, str(db), str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    fresh(target)()
    return float(done.stdout.split()[-1])


def bench_mixes(work: Path, megabytes: float, repeat: int, mixes: list[str]) -> None:
    ingest = [sys.executable, "-m", "ingest", "auto"]
    loop = [sys.executable, "-c", LOOP_CODE]
    print(
        f"(f) logs of every mix, {megabytes:g} MB each, `ingest auto FILE --db fresh` (with"
        f" detection) vs a bare `for line in f`; 1 MB start-up subtracted; medians of {repeat}"
    )
    print(
        f"    {'mix':<17}{'MB':>6}{'lines':>11}{'meas.':>10}{'records':>10}"
        f"{'ingest s':>10}{'loop s':>8}{'ratio':>7}{'RSS MB':>8}{'write s':>9}{'write x':>8}"
    )
    worst = ("", 0.0)
    for mix in mixes:
        big, small = work / f"{mix}.log", work / f"{mix}-1mb.log"
        write_mix(big, mix, megabytes)
        write_mix(small, mix, 1)
        db = work / f"{mix}.duckdb"
        times: dict[str, list[float]] = {"ours": [], "ours0": [], "loop": [], "loop0": []}
        rss: list[float] = []
        floors: list[float] = []
        for _ in range(repeat):
            for name, argv in (
                ("loop", [*loop, str(big)]),
                ("loop0", [*loop, str(small)]),
                ("ours", [*ingest, str(big), "--db", str(db), "--quiet"]),
                ("ours0", [*ingest, str(small), "--db", str(db), "--quiet"]),
            ):
                fresh(db)()
                seconds, peak, _ = run_measured(argv)
                times[name].append(seconds)
                if name == "ours":
                    rss.append(peak)
                    stored = _stored(db)
                    floors.append(write_floor(db, work))
        ours = statistics.median(times["ours"]) - statistics.median(times["ours0"])
        bare = statistics.median(times["loop"]) - statistics.median(times["loop0"])
        ratio = ours / bare if bare > 0 else float("inf")
        with open(big, "rb") as fh:
            lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 22), b""))
        floor = statistics.median(floors)
        print(
            f"    {mix:<17}{big.stat().st_size / 1e6:6.0f}{lines:11,}{stored[0]:10,}"
            f"{stored[1]:10,}{ours:10.2f}{bare:8.2f}{ratio:7.1f}{statistics.median(rss):8.0f}"
            f"{floor:9.2f}{floor / bare if bare > 0 else float('inf'):8.1f}"
        )
        if ratio > worst[1]:
            worst = (mix, ratio)
        for p in (big, small):
            p.unlink()
    print(f"    worst: {worst[0]} at {worst[1]:.1f}x the loop (goal <= 2x, RSS < 1024 MB)")


# -- (g) a small document end to end ---------------------------------------------------------

SMALL_DOCUMENT = "tests/fixtures/ernie-before-fc-fusion.md"
SEED_DOCUMENT = "tests/fixtures/modern/samples/trtexec_tensorrt-4177.md"


def bench_small(work: Path, repeat: int) -> None:
    """`ingest auto one.md --db existing` (a copy of a store that holds a document already,
    made afresh for every run) against `python -c "import duckdb, pyarrow"`."""
    seed = work / "seed.duckdb"
    fresh(seed)()
    run_measured([sys.executable, "-m", "ingest", "auto", SEED_DOCUMENT, "--db", str(seed)])
    times = _small_document_into(seed, work, repeat, {"ours": []})
    fresh(seed)()
    base, mine = statistics.median(times["imports"]), statistics.median(times["ours"])
    print(f"(g) a small document end to end, medians of {len(times['ours'])} fresh processes")
    print(f'    python -c "import duckdb, pyarrow"        : {base:6.2f} s')
    print(
        f"    ingest auto {Path(SMALL_DOCUMENT).name} --db existing: {mine:6.2f} s"
        f"  = {mine / base:.2f}x (goal <= 2x)"
    )


def _small_document_into(
    seed: Path, work: Path, repeat: int, variants: dict[str, list[str]]
) -> dict[str, list[float]]:
    """Seconds of `python -c "import duckdb, pyarrow"` ("imports") and of `ingest auto
    SMALL_DOCUMENT` into a fresh copy of `seed`, once a round with each variant's extra
    arguments; >= 5 rounds."""
    # As on any machine where Python may write bytecode: this one sets
    # PYTHONDONTWRITEBYTECODE, and every process would compile perfboard's source anew
    # (0.1 s of the 0.5 s a small document took).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "ingest", "perfboard"], cwd=ROOT, check=True
    )
    db = work / "existing.duckdb"
    times: dict[str, list[float]] = {"imports": [], **{name: [] for name in variants}}
    for _ in range(max(repeat, 5)):
        times["imports"].append(run_measured([sys.executable, "-c", "import duckdb, pyarrow"])[0])
        for name, extra in variants.items():
            fresh(db)()
            shutil.copyfile(seed, db)
            argv = [sys.executable, "-m", "ingest", "auto", SMALL_DOCUMENT, "--db", str(db)]
            seconds, _, err = run_measured([*argv, *extra])
            assert "1 added" in err, err
            times[name].append(seconds)
    return times


# -- (h) a folder of many small documents ---------------------------------------------------


def bench_folder(work: Path, repeat: int) -> None:
    """`ingest auto FOLDER --db fresh` over the repository's real documents, one file each
    (what a sync of issue comments or a folder of CI logs hands in): the time a document,
    the start-up (the same command over a folder of the first one alone) subtracted."""
    folder, one = work / "documents", work / "one-document"
    folder.mkdir()
    one.mkdir()
    texts = _real_documents()
    for index, text in enumerate(texts):
        (folder / f"{index:03d}.md").write_text(text, encoding="utf-8")
    (one / "000.md").write_text(texts[0], encoding="utf-8")
    db = work / "folder.duckdb"
    times: dict[str, list[float]] = {"all": [], "one": []}
    for _ in range(max(repeat, 5)):
        for name, path in (("all", folder), ("one", one)):
            fresh(db)()
            argv = [sys.executable, "-m", "ingest", "auto", str(path), "--db", str(db), "--quiet"]
            times[name].append(run_measured(argv)[0])
    fresh(db)()
    whole, start = statistics.median(times["all"]), statistics.median(times["one"])
    each = (whole - start) / (len(texts) - 1)
    runs = len(times["all"])
    print(f"(h) a folder of {len(texts)} real documents, medians of {runs} fresh processes")
    print(f"    ingest auto FOLDER --db fresh: {whole:6.2f} s; one document alone {start:.2f} s")
    print(f"    each further document: {each * 1000:.1f} ms")


# -- (i) a small document into a store with a long history -------------------------------


def bench_long_history(work: Path, megabytes: float, repeat: int) -> None:
    """(g)'s small document into a copy of a store where the series it adds to holds the
    latency mix's points: with the change detection of that series, and without."""
    log, seed = work / "history.log", work / "history.duckdb"
    write_mix(log, "latency", megabytes)
    fresh(seed)()
    run_measured([sys.executable, "-m", "ingest", "auto", str(log), "--db", str(seed)])
    log.unlink()
    variants = {"detect": [], "no-detect": ["--no-detect"]}
    times = _small_document_into(seed, work, repeat, variants)
    run_measured([sys.executable, "-m", "ingest", "auto", SMALL_DOCUMENT, "--db", str(seed)])
    points = _longest_series_of_last_source(seed)
    fresh(seed)()
    if points < 1000:
        raise SystemExit(f"(i): the small document adds to no long series ({points} points)")
    base = statistics.median(times["imports"])
    print(
        f"(i) the small document of (g) into a store whose series it adds to holds {points:,}"
        f" points, medians of {len(times['detect'])} fresh processes"
    )
    print(f'    python -c "import duckdb, pyarrow"         : {base:6.2f} s')
    for name, label in (("detect", "with its change detection"), ("no-detect", "--no-detect")):
        mine = statistics.median(times[name])
        print(f"    ingest auto, {label:<26}: {mine:6.2f} s  = {mine / base:.2f}x (goal <= 2x)")


def _longest_series_of_last_source(db: Path) -> int:
    """The points of the longest series the newest source adds to (it must be the long
    history, or (i) measures nothing)."""
    import duckdb

    conn = duckdb.connect(str(db), read_only=True)
    try:
        (points,) = conn.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM measurements WHERE series_id IN"
            " (SELECT series_id FROM measurements WHERE source_id ="
            " (SELECT max(source_id) FROM sources)) GROUP BY series_id)"
        ).fetchone()
    finally:
        conn.close()
    return points or 0


# -- (j) the floor of any reader --------------------------------------------------------

# The latency of a tester line (the latency mix's only line form), for RE2 and DuckDB.
LATENCY_VALUE = r"average latency: ([0-9.]+) ms"
LATENCY_FIELD = r"average latency: (?P<ms>[0-9.]+) ms"  # extract_regex wants a named group

ARROW_EXTRACT_CODE = f"""
import sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as csv
lines = csv.read_csv(
    sys.argv[1],
    read_options=csv.ReadOptions(column_names=["line"]),
    parse_options=csv.ParseOptions(delimiter="\\x01", quote_char=False),
    convert_options=csv.ConvertOptions(column_types={{"line": pa.string()}}),
).column("line")
found = pc.extract_regex(lines, {LATENCY_FIELD!r})
values = pc.cast(pc.struct_field(found, [0]), pa.float64())
print(len(values) - values.null_count)
"""

DUCKDB_EXTRACT_CODE = f"""
import sys
import duckdb
path, target, keep_text = sys.argv[1], sys.argv[2], sys.argv[3] == "text"
conn = duckdb.connect(target)
text = ", line_text VARCHAR" if keep_text else ""
conn.execute(f"CREATE TABLE m (line BIGINT, value DOUBLE{{text}})")
conn.execute(
    "INSERT INTO m SELECT row_number() OVER (), CAST(regexp_extract(l, $pattern, 1) AS DOUBLE)"
    + (", l" if keep_text else "")
    + " FROM read_csv($path, columns = {{'l': 'VARCHAR'}}, delim = '\\x01', quote = '',"
    " escape = '', header = false, auto_detect = false)",
    {{"path": path, "pattern": {LATENCY_VALUE!r}}},
)
print(conn.execute("SELECT count(value) FROM m").fetchone()[0])
conn.close()
"""


def bench_reader_floor(work: Path, megabytes: float, repeat: int) -> None:
    """(j): the native tools alone over the latency mix, against the bare line loop."""
    big, small = work / "floor.log", work / "floor-1mb.log"
    write_mix(big, "latency", megabytes)
    write_mix(small, "latency", 1)
    db = work / "floor.duckdb"
    steps = {
        "loop": [sys.executable, "-c", LOOP_CODE],
        "arrow": [sys.executable, "-c", ARROW_EXTRACT_CODE],
        "duckdb": [sys.executable, "-c", DUCKDB_EXTRACT_CODE],
        "duckdb+text": [sys.executable, "-c", DUCKDB_EXTRACT_CODE],
        "perfboard": [sys.executable, "-m", "ingest", "auto"],
    }
    times: dict[tuple[str, Path], list[float]] = {}
    for _ in range(repeat):
        for name, argv in steps.items():
            for path in (big, small):
                fresh(db)()
                extra = {
                    "duckdb": [str(db), "values"],
                    "duckdb+text": [str(db), "text"],
                    "perfboard": ["--db", str(db), "--quiet"],
                }.get(name, [])
                seconds = run_measured([*argv, str(path), *extra])[0]
                times.setdefault((name, path), []).append(seconds)
    fresh(db)()
    marginal = {
        name: statistics.median(times[(name, big)]) - statistics.median(times[(name, small)])
        for name in steps
    }
    bare = marginal["loop"]
    print(
        f"(j) the floor of any reader: the latency mix of (f), {megabytes:g} MB, one record a"
        f" line; 1 MB start-up subtracted; medians of {repeat}"
    )
    labels = {
        "loop": "bare `for line in f`",
        "arrow": "pyarrow: read lines + extract_regex, nothing stored",
        "duckdb": "DuckDB: read_csv + regexp_extract + insert (line, value)",
        "duckdb+text": "DuckDB: the same, each line's text stored too",
        "perfboard": "perfboard: ingest auto, with detection",
    }
    for name, label in labels.items():
        print(f"    {label:<58}{marginal[name]:7.2f} s {marginal[name] / bare:6.1f}x")
    for p in (big, small):
        p.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--log-mb", type=float, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="keep the generated files here")
    parser.add_argument("--json-files", type=int, default=1000)
    parser.add_argument("--nsys-mb", type=float, default=100)
    parser.add_argument("--mix-mb", type=float, default=100, help="size of each log of (f)")
    parser.add_argument("--mixes", default=",".join(MIXES), help="the mixes (f) runs")
    parser.add_argument(
        "--parts",
        default="a,b,c,d,e,f,g,h,i,j",
        help="which parts to run (c runs with a, e with d)",
    )
    parser.add_argument("--only", choices=("results", "log", "tools"), help="run one part only")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if args.only:
        parts = {"results": {"a"}, "log": {"b"}, "tools": {"d"}}[args.only]
    with tempfile.TemporaryDirectory(dir=args.out) as folder:
        work = Path(folder)
        started = time.perf_counter()
        if parts & {"a", "c"}:
            bench_results(work, args.rows, args.repeat)
        if "b" in parts:
            bench_log(work, args.log_mb, args.repeat)
        if parts & {"d", "e"}:
            bench_tool_json(work, args.json_files, args.repeat)
            bench_nsys_csv(work, args.nsys_mb, args.repeat)
        if "f" in parts:
            bench_mixes(work, args.mix_mb, args.repeat, args.mixes.split(","))
        if "g" in parts:
            bench_small(work, args.repeat)
        if "h" in parts:
            bench_folder(work, args.repeat)
        if "i" in parts:
            bench_long_history(work, args.mix_mb, args.repeat)
        if "j" in parts:
            bench_reader_floor(work, args.mix_mb, args.repeat)
        print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
