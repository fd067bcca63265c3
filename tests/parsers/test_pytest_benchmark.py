"""ingest.parsers.pytest_benchmark on real --benchmark-json files and variants.

The real documents are in tests/fixtures/modern/pytest_benchmark/ (README.md names each
source); the variants follow the plugin's JSON (pytest_benchmark/session.py, stats.py,
utils.py).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from ingest.parsers import pytest_benchmark
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "pytest_benchmark"
SAMPLE = "pytest-benchmark-json_github-action-benchmark-pytest_output.json"
UNITS = "pytest-benchmark-json_github-action-benchmark-pytest_several_units.json"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(pytest_benchmark.parse, doc)


def of(ms: list[Measurement], benchmark: str) -> dict[tuple[str, str], float]:
    return tools.by_stat([m for m in ms if m.benchmark == benchmark])


def test_contract_and_readme_names_every_fixture() -> None:
    assert pytest_benchmark.NAME == "pytest_benchmark"
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in pytest_benchmark.ANCHORS)


def test_the_shared_sample() -> None:
    ms, problems = split(fixture(SAMPLE))
    assert problems == []
    fib10 = of(ms, "bench.py::test_fib_10")
    # expected.tsv: mean 2.408868133322941e-05 s, median 2.2300000000363696e-05 s, ops 41513.27
    assert fib10 == {
        ("time", "min"): pytest.approx(2.2067000000181025e-02),
        ("time", "max"): pytest.approx(0.3125999999999962),
        ("time", "mean"): pytest.approx(2.408868133322941e-02),
        ("time", "std"): pytest.approx(6.175090189861328e-03),
        ("time", "median"): pytest.approx(2.2300000000363696e-02),
        ("time", "p25"): pytest.approx(2.2255999999831744e-02),
        ("time", "p75"): pytest.approx(2.3523000000191807e-02),
        ("ops", ""): 41513.272817492856,
    }
    assert of(ms, "bench.py::test_fib_20")[("time", "mean")] == pytest.approx(2.985030672661863)
    mean = next(m for m in ms if m.params == {"stat": "mean"})
    assert (mean.unit, mean.direction, mean.task, mean.framework) == (
        "ms",
        "lower",
        "microbenchmark",
        "",
    )
    assert (mean.line, mean.raw) == (49, 'bench.py::test_fib_10 "mean": 2.408868133322941e-05')
    assert "test_fib_10" in mean.raw
    ops = next(m for m in ms if m.metric == "ops")
    assert (ops.unit, ops.direction, ops.params) == ("ops/s", "higher", {})
    for m in ms:
        assert m.version == "9d55ab0434c9088746ae2d134702d782bf088644"
        assert m.measured_at == datetime(2019, 11, 17, 2, 22, 16, 817862)
        assert m.testbed == {
            "node": "Corgi.local",
            "processor": "i386",
            "machine": "x86_64",
            "python_implementation": "CPython",
            "python_version": "3.7.5",
            "cpu": "Intel(R) Core(TM) i7-4771 CPU @ 3.50GHz",
            "pytest_benchmark": "3.2.2",
        }
        assert m.stats["dirty"] is True
    assert mean.samples == 38523
    assert mean.stats["iterations"] == 1
    assert mean.stats["outliers"] == "2523;2896"
    assert len({m.series_key() for m in ms}) == len(ms) == 16


def test_several_units_from_ns_to_seconds() -> None:
    ms, problems = split(fixture(UNITS))
    assert problems == []
    assert {m.benchmark for m in ms} == {
        "bench.py::test_fib_1",
        "bench.py::test_fib_10",
        "bench.py::test_fib_20",
        "bench.py::test_sleep_2",
    }
    assert of(ms, "bench.py::test_fib_1")[("time", "mean")] == pytest.approx(1.4995610248628836e-4)
    sleep = of(ms, "bench.py::test_sleep_2")
    assert sleep[("time", "median")] == pytest.approx(2005.124842999999)
    assert sleep[("ops", "")] == 0.49904108083570886
    fib1 = next(m for m in ms if m.benchmark == "bench.py::test_fib_1")
    assert fib1.stats["iterations"] == 100
    assert fib1.testbed["cpu"] == "Intel(R) Core(TM) i5-5257U CPU @ 2.70GHz"


def _doc(**row_changes: object) -> dict:
    doc = json.loads((FIXTURES / SAMPLE).read_text())
    doc["benchmarks"] = doc["benchmarks"][:1]
    doc["benchmarks"][0].update(row_changes)
    return doc


def test_parametrised_test_keeps_its_params_and_group() -> None:
    doc = _doc(
        name="test_fib[10-fast]",
        fullname="tests/bench.py::test_fib[10-fast]",
        params={"n": 10, "mode": "fast"},
        param="10-fast",
        group="fib",
        extra_info={"size": 3},
    )
    doc["machine_info"]["cpu"] = {"brand_raw": "AMD EPYC 7B13"}
    text = "pytest-benchmark said:\n```json\n" + json.dumps(doc, indent=2) + "\n```\n"
    ms, problems = split(text_doc(text))
    assert problems == []
    m = ms[0]
    assert m.benchmark == "tests/bench.py::test_fib"
    assert m.params == {"n": 10, "mode": "fast", "group": "fib", "stat": "min"}
    assert m.stats["extra_info"] == {"size": 3}
    assert m.stats["name"] == "test_fib[10-fast]"
    assert m.testbed["cpu"] == "AMD EPYC 7B13"


def test_bad_values_and_missing_stats_are_problems() -> None:
    doc = _doc()
    doc["benchmarks"][0]["stats"]["mean"] = "fast"
    doc["benchmarks"][0]["stats"]["max"] = -1.0
    doc["benchmarks"].append({"name": "test_x", "fullname": "b.py::test_x", "stats": None})
    ms, problems = split(text_doc(json.dumps(doc, indent=4)))
    assert ("time", "mean") not in tools.by_stat(ms)
    reasons = [(p.severity, p.reason) for p in problems]
    assert any(s == "error" and "mean 'fast' is not a number" in r for s, r in reasons)
    assert any(s == "error" and "negative" in r for s, r in reasons)
    assert any(s == "warning" and "test_x" in r for s, r in reasons)


def test_cut_json_is_a_problem() -> None:
    text = fixture(SAMPLE).text[:2500]
    ms, problems = split(text_doc(text))
    assert ms == []
    assert [(p.line, p.parser, p.severity) for p in problems] == [(1, "pytest_benchmark", "error")]


def test_google_benchmark_json_is_not_read() -> None:
    path = FIXTURES.parent / "gbench" / "gbench-json_github-action-benchmark-googlecpp_output.json"
    assert list(pytest_benchmark.parse(read_text_file(str(path)))) == []


# -- the console table -------------------------------------------------------------------


def test_table_of_issue_187() -> None:
    ms, problems = split(fixture("pytest-benchmark-table_pytest-benchmark-187.md"))
    assert problems == []
    assert tools.by_stat(ms) == {
        ("time", "min"): 3.507,
        ("time", "max"): 3.507,
        ("time", "mean"): 3.507,
        ("time", "std"): 0.0,
        ("time", "median"): 3.507,
        ("ops", ""): 285.1445,
    }
    m = ms[0]
    assert (m.benchmark, m.line, m.samples, m.unit) == ("test_myfunc", 6, 1, "ms")
    assert m.stats == {"iqr_ms": 0.0, "outliers": "0;0", "iterations": 5}


def test_table_in_seconds_with_relative_cells_of_issue_120() -> None:
    ms, problems = split(fixture("pytest-benchmark-table_pytest-benchmark-120.md"))
    assert problems == []
    foo2 = tools.by_stat([m for m in ms if m.benchmark == "foo2[500]"])
    assert foo2[("time", "mean")] == pytest.approx(15427.6)  # "15.4276 (7.69)" in s
    assert foo2[("ops", "")] == 0.0648
    assert {m.benchmark for m in ms} == {"foo1[50]", "foo2[500]"}


def test_grouped_table_behind_a_log_prefix_of_issue_179() -> None:
    ms, problems = split(fixture("pytest-benchmark-table_pytest-benchmark-179.md"))
    assert problems == []
    now = [m for m in ms if m.benchmark == "test_fig (NOW)"]
    assert tools.by_stat(now)[("time", "max")] == 230.8245
    assert now[0].params == {"group": "mytest-fig", "stat": "min"}
    assert now[0].raw.startswith("pytest-benchmark-tests-fig_1        | test_fig (NOW)")
    assert now[0].stats["outliers"] == "3;312"
    assert len({m.benchmark for m in ms}) == 2


TABLE_NS = """\
------------------------------- benchmark: 2 tests -------------------------------
Name (time in ns)        Min               Max    Outliers  OPS (Mops/s)  Rounds
----------------------------------------------------------------------------------
test_fast            60.3346 (1.0)  1,450.3254 (1.0)  1237;2742  14.9066 (1.0)   74289
test_slow     1,018,696.9303 (>1000.0)   1,077,774.9121 (743.13)
----------------------------------------------------------------------------------
"""


def test_table_in_ns_with_thousands_mops_and_a_cut_row() -> None:
    ms, problems = split(text_doc(TABLE_NS))
    got = tools.by_stat(ms)
    assert got[("time", "max")] == pytest.approx(1.4503254e-3)
    assert got[("ops", "")] == pytest.approx(14.9066e6)
    assert ms[0].samples == 74289
    assert [(p.line, p.severity) for p in problems] == [(5, "error")]
    assert "test_slow" in problems[0].reason and "cut" in problems[0].reason
