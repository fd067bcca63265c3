"""ingest.parsers.gbench on real Google Benchmark output and variants of its reporters.

The real documents are in tests/fixtures/modern/gbench/ (README.md names each source); the
inline variants follow the reporters' format strings (google/benchmark src/json_reporter.cc,
console_reporter.cc, csv_reporter.cc).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ingest.parsers import gbench
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "gbench"
SAMPLE = "gbench-json_github-action-benchmark-googlecpp_output.json"
ARROW = "gbench-json_conbench-arrow-tensor-conversion.json"
CONSOLE = "gbench-console_google-benchmark-1752.md"
ROW = "Int8RowMajorTensorConversionFixture<Int32Type>/ConvertToSparseCOOTensorInt32"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(gbench.parse, doc)


def only(measurements: list[Measurement], **fields: object) -> list[Measurement]:
    return [m for m in measurements if all(getattr(m, k) == v for k, v in fields.items())]


def test_contract_and_readme_names_every_fixture() -> None:
    assert gbench.NAME == "gbench"
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in gbench.ANCHORS)


def test_the_shared_sample() -> None:
    ms, problems = split(fixture(SAMPLE))
    assert problems == []
    got = {(m.benchmark, m.metric): m.value for m in ms}
    # expected.tsv: fib_10 214.98980114547953 ns, fib_20 27455.600415007055 ns, cpu 213.655...
    assert got == {
        ("fib_10", "real_time"): pytest.approx(214.98980114547953e-6, rel=1e-12),
        ("fib_10", "cpu_time"): pytest.approx(213.65507206163295e-6, rel=1e-12),
        ("fib_20", "real_time"): pytest.approx(27455.600415007055e-6, rel=1e-12),
        ("fib_20", "cpu_time"): pytest.approx(27364.903204272359e-6, rel=1e-12),
    }
    first = ms[0]
    assert (first.line, first.raw) == (47, '"real_time": 2.1498980114547953e+02')
    for m in ms:
        assert (m.unit, m.direction, m.task, m.framework, m.device) == (
            "ms",
            "lower",
            "microbenchmark",
            "",
            "",
        )
        assert m.params == {"threads": 1}  # a plain iteration row: no stat
        assert m.testbed == {
            "host_name": "Corgi.local",
            "num_cpus": "4",
            "mhz_per_cpu": "2700",
            "library_build_type": "release",
        }
        assert m.measured_at == datetime(2019, 11, 29, 21, 26, 59)
        assert m.stats["executable"] == "./a.out"
    assert ms[2].stats["iterations"] == 23968
    assert len({m.series_key() for m in ms}) == 4


def test_repetitions_and_aggregates_of_arrow() -> None:
    ms, problems = split(fixture(ARROW))
    assert problems == []
    row = only(ms, benchmark=ROW)
    mean = only(row, metric="real_time")
    by = {m.params.get("stat"): m for m in mean if "stat" in m.params}
    assert set(by) == {"mean", "median", "std"}  # cv is no series
    assert by["mean"].value == pytest.approx(88519.53379436459e-6)
    assert by["median"].value == pytest.approx(88572.83803106814e-6)
    assert by["std"].value == pytest.approx(841.1366419830096e-6)
    assert by["mean"].stats["cv"] == 0.009502271486619135
    plain = [m for m in mean if "stat" not in m.params]
    assert [m.stats["repetition_index"] for m in plain] == [0, 1, 2]
    assert len({m.series_key() for m in plain}) == 1  # repetitions: values of one series
    rates = only(row, metric="bytes_per_second")
    assert (rates[0].unit, rates[0].direction) == ("MB/s", "higher")
    assert rates[0].value == pytest.approx(488408056.6457208 / 2**20)
    items = only(row, metric="items_per_second")
    assert (items[0].unit, items[0].value) == ("samples/s", 488408056.6457208)
    assert ms[0].measured_at == datetime(
        2022, 9, 2, 16, 11, 56, tzinfo=timezone(timedelta(hours=-5))
    )
    assert ms[0].testbed["num_cpus"] == "10"
    # 3 repetitions + mean/median/stddev of one family, 3 repetitions of the other, 4 metrics
    assert len(ms) == (3 + 3 + 3) * 4


def test_console_of_issue_1752_with_its_cut_row() -> None:
    ms, problems = split(fixture(CONSOLE))
    real = [m.value for m in ms if m.metric == "real_time"]
    cpu = [m.value for m in ms if m.metric == "cpu_time"]
    assert real == [8.63, 8.60, 8.59, 8.59, 8.66]
    assert cpu == [3.39, 3.43, 5.71, 3.79, 3.64]
    first = ms[0]
    assert first.benchmark == "BM_TraceBitmap_Seq/plan01/min_time:2.000"
    assert first.params == {}
    assert first.line == 19
    assert first.stats == {"executable": "traceup_benchmarks.exe", "iterations": 747}
    assert first.testbed == {"num_cpus": "16", "mhz_per_cpu": "3800"}
    assert first.measured_at == datetime(2024, 2, 3, 12, 41, tzinfo=timezone(timedelta(hours=1)))
    assert [(p.line, p.severity) for p in problems] == [(24, "error")]
    assert "cut" in problems[0].reason


CONSOLE_AGGREGATES = """\
2024-05-01T10:00:00+00:00
Running ./bench
Run on (8 X 2400 MHz CPU s)
---------------------------------------------------------------------
Benchmark                   Time        CPU   Iterations UserCounters...
---------------------------------------------------------------------
BM_cp/64/threads:2       10.5 ns    20.9 ns     66732214 bytes_per_second=2.85145Gi/s
BM_cp/64/threads:2       10.7 ns    21.1 ns     66732214 items_per_second=95M/s
BM_cp/64/threads:2_mean   10.6 ns    21.0 ns           2 bytes_per_second=2.82Gi/s
BM_cp/64/threads:2_median 10.6 ns    21.0 ns           2 items_per_second=95.3M/s
BM_cp/64/threads:2_stddev 0.141 ns  0.141 ns           2 bytes_per_second=36Mi/s
BM_cp/64/threads:2_cv     1.33 %     0.67 %            2 bytes_per_second=1.25%
BM_fail                    ERROR OCCURRED: 'out of memory'
BM_cp_BigO                0.16 N     0.33 N
BM_cp_RMS                    2 %        2 %
"""


def test_console_aggregates_counters_errors_and_bigo() -> None:
    ms, problems = split(text_doc(CONSOLE_AGGREGATES))
    assert problems == []
    real = only(ms, metric="real_time", benchmark="BM_cp/64/threads:2")
    assert [(m.params.get("stat"), m.value) for m in real] == [
        (None, pytest.approx(10.5e-6)),
        (None, pytest.approx(10.7e-6)),
        ("mean", pytest.approx(10.6e-6)),
        ("median", pytest.approx(10.6e-6)),
        ("std", pytest.approx(0.141e-6)),
    ]
    assert real[0].params == {"threads": 2}
    assert real[2].stats["cv"] == pytest.approx(0.0133)
    rate = only(ms, metric="bytes_per_second")[0]
    assert rate.value == pytest.approx(2.85145 * 1024)  # Gi/s -> MB/s
    assert only(ms, metric="items_per_second")[0].value == pytest.approx(95e6)
    failed = only(ms, benchmark="BM_fail")
    assert [(m.status, m.value, m.stats["error_message"]) for m in failed] == [
        ("error", None, "out of memory")
    ]
    assert not only(ms, benchmark="BM_cp_BigO") and not only(ms, benchmark="BM_cp")


CSV = """\
name,iterations,real_time,cpu_time,time_unit,bytes_per_second,items_per_second,label,error_occurred,error_message
"BM_SetInsert/1024/1",28928,29349.3,29349.4,ns,,136287,,,
"BM_SetInsert/1024/8",2,1.5,1.5,ms,,,"lbl",,
"BM_Broken",,,,,,,,true,"failed to init"
"""


def test_csv_reporter() -> None:
    ms, problems = split(text_doc(CSV))
    assert problems == []
    got = [(m.benchmark, m.metric, m.value, m.status) for m in ms]
    assert got == [
        ("BM_SetInsert/1024/1", "real_time", pytest.approx(0.0293493), "ok"),
        ("BM_SetInsert/1024/1", "cpu_time", pytest.approx(0.0293494), "ok"),
        ("BM_SetInsert/1024/1", "items_per_second", 136287.0, "ok"),
        ("BM_SetInsert/1024/8", "real_time", 1.5, "ok"),
        ("BM_SetInsert/1024/8", "cpu_time", 1.5, "ok"),
        ("BM_Broken", "real_time", None, "error"),
    ]
    assert ms[3].stats["label"] == "lbl"


def test_json_in_a_comment_with_errors_nan_and_unknown_aggregate() -> None:
    text = """Here is my run:

```json
{
  "context": {"date": "2024-01-01T00:00:00", "host_name": "h", "library_build_type": "debug"},
  "benchmarks": [
    {"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "repetitions": 1,
     "repetition_index": 0, "threads": 1, "iterations": 10, "real_time": NaN,
     "cpu_time": 1.0e+00, "time_unit": "us"},
    {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "repetitions": 1,
     "repetition_index": 0, "threads": 1, "error_occurred": true,
     "error_message": "boom", "iterations": 0, "real_time": 0, "cpu_time": 0,
     "time_unit": "ns"},
    {"name": "BM_c_gmean", "run_name": "BM_c", "run_type": "aggregate", "repetitions": 3,
     "threads": 1, "aggregate_name": "gmean", "aggregate_unit": "time",
     "iterations": 3, "real_time": 5, "cpu_time": 5, "time_unit": "ns"},
    {"name": "BM_c_p90", "run_name": "BM_c", "run_type": "aggregate", "repetitions": 3,
     "threads": 1, "aggregate_name": "p90", "aggregate_unit": "time",
     "iterations": 3, "real_time": 7, "cpu_time": 6, "time_unit": "s",
     "my_counter": 4.5},
    {"name": "BM_c_BigO", "run_name": "BM_c", "run_type": "aggregate", "repetitions": 0,
     "threads": 1, "aggregate_name": "BigO", "cpu_coefficient": 1.0,
     "real_coefficient": 1.0, "big_o": "N", "time_unit": "ns"}
  ]
}
```
"""
    ms, problems = split(text_doc(text))
    assert [(m.benchmark, m.metric, m.value, m.status, m.params.get("stat")) for m in ms] == [
        ("BM_a", "cpu_time", 1e-3, "ok", None),
        ("BM_b", "real_time", None, "error", None),
        ("BM_c", "real_time", 7000.0, "ok", "p90"),
        ("BM_c", "cpu_time", 6000.0, "ok", "p90"),
    ]
    assert ms[2].stats["counters"] == {"my_counter": 4.5}
    assert ms[0].testbed == {"host_name": "h", "library_build_type": "debug"}
    reasons = [(p.line, p.severity, p.reason) for p in problems]
    assert reasons[0][:2] == (8, "error") and "real_time" in reasons[0][2]
    assert reasons[1][1] == "warning" and "gmean" in reasons[1][2]


def test_cut_json_is_a_problem() -> None:
    text = fixture(SAMPLE).text[:1100]
    ms, problems = split(text_doc(text))
    assert ms == []
    assert [(p.line, p.parser) for p in problems] == [(1, "gbench")]
    assert "cut" in problems[0].reason


def test_pytest_benchmark_json_is_not_read() -> None:
    path = (
        FIXTURES.parent
        / "pytest_benchmark"
        / ("pytest-benchmark-json_github-action-benchmark-pytest_output.json")
    )
    assert list(gbench.parse(read_text_file(str(path)))) == []


TABULAR = """\
------------------------------------------------------------------------------
Benchmark                        Time           CPU Iterations    Bar   Bat  Foo
------------------------------------------------------------------------------
BM_UserCounter/threads:8      2198 ns       9953 ns      70688     16    40    8
BM_UserCounter/threads:1      9504 ns       9504 ns      73787      2     5    1
------------------------------------------------------------------------------
Benchmark                        Time           CPU Iterations items_per_second
------------------------------------------------------------------------------
BM_Items/8                     12.3 us       12.2 us      56000       1.2M/s
"""


def test_console_tabular_counters_and_a_second_header() -> None:
    # --benchmark_counters_tabular=true (docs/user_guide.md): counters in named columns,
    # a new header when the counters change.
    ms, problems = split(text_doc(TABULAR))
    assert problems == []
    first = ms[0]
    assert (first.benchmark, first.metric, first.value) == (
        "BM_UserCounter/threads:8",
        "real_time",
        pytest.approx(2198e-6),
    )
    assert first.params == {"threads": 8}
    assert first.stats["counters"] == {"Bar": 16.0, "Bat": 40.0, "Foo": 8.0}
    [items] = only(ms, metric="items_per_second")
    assert (items.benchmark, items.value, items.line) == ("BM_Items/8", 1.2e6, 9)


def test_a_spread_is_better_smaller_even_of_a_rate() -> None:
    """Arrow's items_per_second is higher-is-better; its stddev aggregate is a spread,
    better smaller (cells.stat_direction), as the stddev of its times is."""
    measurements, _ = split(fixture(ARROW))
    spreads = [m for m in measurements if m.params.get("stat") == "std"]
    assert {m.metric for m in spreads} == {
        "real_time",
        "cpu_time",
        "bytes_per_second",
        "items_per_second",
    }
    assert {m.direction for m in spreads} == {"lower"}
    means = only(measurements, metric="items_per_second")
    assert {m.direction for m in means if m.params.get("stat") != "std"} == {"higher"}
