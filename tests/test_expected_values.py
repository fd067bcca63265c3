"""The values a user expects stored from the outputs of today's tools and from the tables
pasted in PaddlePaddle PRs (tests/fixtures/modern/samples/expected.tsv and
tests/fixtures/paddle-tables/expected.tsv, copies of the project's shared samples).

Each row is a test: `num V` is met when some stored number equals V, `row TEXT V` when one
stored row holds TEXT and V; `--units` lets V be stored converted by a power of 1000 (ns,
us, ms, s). The rows of a file whose format perfboard does not read yet are expected
failures (some of their numbers may be found already, by a table reader, and pass); a file
in READ must have every value stored. READ grows with each format read (issue 13).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from ingest.cli import main
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
FOLDERS = (FIXTURES / "modern" / "samples", FIXTURES / "paddle-tables")

# The files whose format perfboard reads: every expected value of each must be stored.
READ: frozenset[str] = frozenset(
    {
        "mlperf-summary_mlcommons-inference-2310.md",
        "vllm-bench-serve_vllm-pr-18566.md",
        "vllm-result-json_vllm-ascend-qwen3-vl-report.json",
        "vllm-bench-latency_rocm-lmcache-notes.md",
        "sglang-bench-serving_sglang-8285.md",
        "sglang-bench-serving-jsonl_sglang-12389.md",
        "trtexec_tensorrt-4177.md",
        "paddle2x-fastdeploy-table_fastdeploy-pr-449.md",
        "ort-perf-test_onnxruntime-17313.md",
        "openvino-benchmark-app_openvino-samples-cpp-readme.md",
        "llama-bench_llama.cpp-pr-4812.md",
        "hyperfine-json_hyperfine-pr-176.json",
        "perf-analyzer_triton-server-3657.md",
        "perf-analyzer-csv_triton-client-measurements_metrics.csv",
        "pytorch-profiler-table_pytorch-tutorials-profiler_recipe.txt",
        "nsys-stats-text_nanomoe-report.md",
        "nsys-kern-sum-csv_dotllm-report.csv",
        "gbench-json_github-action-benchmark-googlecpp_output.json",
        "pytest-benchmark-json_github-action-benchmark-pytest_output.json",
        "asv-results-v2_mjwarp-asv-039bc13d.json",
        "paddle-issue-34201_as_strided_variants_as_rows_seconds.md",
        "paddle-pr-15909_prior_box_profiler_w_wo_rows.md",
        "paddle-pr-25523_slice_grad_fp16_units_in_cells.md",
        "paddle-pr-29744_elementwise_add_fp16_zh_header_mixed_units.md",
        "paddle-pr-31812_samedimsadd_fwd_bwd_speedup_x.md",
        "paddle-pr-39856_lookup_table_v2_transposed_rows_zh.md",
        "paddle-pr-44783_batchnorm1d_bwd_ns_header_thousands.md",
        "paddle-pr-52482_tile_two_tables_faster_than_pct.md",
    }
)


@dataclass(frozen=True)
class Expected:
    folder: Path
    file: str
    tier: str
    check: str
    text: str
    value: float
    units: bool

    @property
    def id(self) -> str:
        what = f"{self.text} {self.value:g}" if self.text else f"{self.value:g}"
        return f"{self.file}:{self.tier}:{what}"


def expected_rows() -> list[Expected]:
    rows = []
    for folder in FOLDERS:
        with open(folder / "expected.tsv", encoding="utf-8", newline="") as fh:
            for line in csv.reader(fh, delimiter="\t"):
                if not line or line[0].startswith("#"):
                    continue
                file, tier, check, *args = line
                units = "--units" in args
                args = [a for a in args if a != "--units"]
                text = args[0] if check == "row" else ""
                rows.append(Expected(folder, file, tier, check, text, float(args[-1]), units))
    return rows


ROWS = expected_rows()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    """Every sample ingested once, as `python -m ingest auto` reads them."""
    path = tmp_path_factory.mktemp("expected") / "perfboard.duckdb"
    for folder in FOLDERS:
        main(["auto", str(folder), "--db", str(path), "--quiet", "--no-detect"])
    conn = duckdb.connect(str(path), read_only=True)
    yield conn
    conn.close()


# Every number a document can leave in the store, with the text of the row it is in.
STORED_NUMBERS = """
    SELECT src.uri, m.value AS value, concat_ws(' ', m.raw, s.benchmark, s.metric,
           s.params::VARCHAR) AS text
    FROM measurements m JOIN series s USING (series_id) JOIN sources src USING (source_id)
    UNION ALL
    SELECT src.uri, unnest([e.total, e.cpu_time, e.gpu_time, e.min, e.max, e.ave,
                            e.calls::DOUBLE]), concat_ws(' ', e.event, e.raw)
    FROM profile_events e JOIN sources src USING (source_id)
    UNION ALL
    SELECT src.uri, ms.value, concat_ws(' ', ms.label, ms.raw)
    FROM milestones ms JOIN phases p USING (phase_id) JOIN sources src USING (source_id)
    UNION ALL
    SELECT src.uri, unnest([c.before, c.after, c.percent, c.speedup]), c.raw
    FROM claims c JOIN sources src USING (source_id)
"""


def matches(stored: float, expected: float, units: bool) -> bool:
    factors = [1000.0**k for k in range(-3, 4)] if units else [1.0]
    return any(math.isclose(stored, expected * f, rel_tol=1e-6) for f in factors)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            row,
            id=row.id,
            marks=()
            if row.file in READ
            else pytest.mark.xfail(reason="issue 13: a format not read yet"),
        )
        for row in ROWS
    ],
)
def test_the_expected_value_is_stored(store: duckdb.DuckDBPyConnection, row: Expected) -> None:
    uri = str(row.folder / row.file)
    found = store.execute(
        f"SELECT value, text FROM ({STORED_NUMBERS}) WHERE uri = ? AND value IS NOT NULL",
        [uri],
    ).fetchall()
    hits = [text for value, text in found if matches(value, row.value, row.units)]
    if row.check == "row":
        hits = [text for text in hits if row.text in (text or "")]
    assert hits, f"{row.file}: no stored value {row.value:g} ({row.check} {row.text})"


def test_every_sample_is_in_the_expected_list() -> None:
    listed = {row.file for row in ROWS}
    on_disk = {p.name for folder in FOLDERS for p in folder.iterdir() if p.suffix != ".tsv"} - {
        "README.md"
    }
    assert listed == on_disk
    assert listed >= READ
