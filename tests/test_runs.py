"""ingest.runs on real documents: what the prose around a record says of its variant and date."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, ingest

THREAD = ROOT / "tests" / "fixtures" / "tester_variants"


@pytest.mark.parametrize(
    "name",
    ["benchmark-275_ernie-int8-cpu-thread.md", "benchmark-275_ernie-int8-cpu-thread-as-copied.md"],
)
def test_variant_labels_and_comment_dates_of_a_pasted_thread(name: str, tmp_path: Path) -> None:
    # PaddlePaddle/benchmark#275: "FP32: `Run 2490 samples ... 92.2313ms`" and "QAT INT8:
    # `Run 2490 samples ... 49.1309ms`" under "(20 threads, bs 1, CLX 6248):" on
    # 2019-11-21; the next day "FP32 results with @GaoWei8's fix (...):" over a bare line.
    store = tmp_path / "thread.duckdb"
    assert ingest("auto", str(THREAD / name), "--db", str(store), "--no-detect") == 0
    conn = duckdb.connect(str(store), read_only=True)
    stored = conn.execute(
        "SELECT s.params, m.value, m.measured_at FROM measurements m JOIN series s"
        " USING (series_id) ORDER BY m.line"
    ).fetchall()
    conn.close()
    qat_int8 = '{"batch_size":1,"precision":"int8","quantization":"qat"}'
    assert stored == [
        ('{"batch_size":1,"precision":"fp32"}', 92.2313, datetime(2019, 11, 21)),
        (qat_int8, 49.1309, datetime(2019, 11, 21)),
        ('{"precision":"fp32"}', 54.6457, datetime(2019, 11, 22)),
    ]
