"""ingest.parsers.asv on real asv result files and variants of both format versions.

The real documents are in tests/fixtures/modern/asv/ (README.md names each source); the
variants follow asv's own writer and reader (asv/results.py ``save``, ``load``,
``update_to_2``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.parsers import asv
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "asv"
SAMPLE = "asv-results-v2_mjwarp-asv-039bc13d.json"
CONBENCH = "asv-results-v2_conbench-benchadapt-asvbench.json"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(asv.parse, doc)


def test_contract_and_readme_names_every_fixture() -> None:
    assert asv.NAME == "asv"
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in asv.ANCHORS)


def test_the_shared_sample_parameterised_track_metric() -> None:
    ms, problems = split(fixture(SAMPLE))
    # One warning per track_ benchmark: its unit is not in the file.
    assert len(problems) == 8
    assert all(p.severity == "warning" and "unit" in p.reason for p in problems)
    assert len(ms) == 8 * 28
    pot = {m.params["param1"]: m for m in ms if m.benchmark == "benchmark.AlohaPot.track_metric"}
    assert len(pot) == 28
    # expected.tsv: 724.8386208084412 (step), 44.0704545880144 (jit_duration)
    assert pot["step"].value == 724.8386208084412
    assert pot["jit_duration"].value == 44.0704545880144
    assert pot["device_memory_allocated"].value == 1377828864
    assert pot["step.euler"].value == 6.302749859969481
    franka = {
        m.params["param1"]: m.value
        for m in ms
        if m.benchmark == "benchmark.FrankaEmikaPanda.track_metric"
    }
    assert franka["step"] == 59.78220321048866  # expected.tsv
    assert "step.implicit" in franka and "step.euler" not in franka
    m = pot["step"]
    assert (m.metric, m.unit, m.direction, m.task, m.framework) == (
        "track",
        "",
        "lower",
        "microbenchmark",
        "",
    )
    assert m.params == {"param1": "step"}
    assert m.device == "adenzler-asv-runner"
    assert m.version == "039bc13df9e6785ac2c87c9ffa116481e357427f"
    assert m.measured_at == datetime.fromtimestamp(1757332620.985, tz=UTC)
    assert m.testbed == {
        "arch": "x86_64",
        "cpu": "AMD EPYC-Milan Processor",
        "num_cpu": "32",
        "os": "Linux 5.15.0-131-generic",
        "ram": "65836440",
        "python": "3.13",
        "env_name": "virtualenv-py3.13",
    }
    assert m.stats["duration_s"] == 38.979
    assert m.stats["commit_date"] == "2025-09-08T09:19:08+00:00"
    assert m.raw == "\"benchmark.AlohaPot.track_metric\"['step']: 724.8386208084412"
    assert len({x.series_key() for x in ms}) == len(ms)


def test_conbench_time_benchmark_with_stats() -> None:
    ms, problems = split(fixture(CONBENCH))
    assert problems == []
    [m] = ms
    assert m.benchmark == "benchmarks.TimeSuite.time_insertion_sort"
    assert (m.metric, m.unit, m.direction, m.params) == ("time", "ms", "lower", {"stat": "median"})
    assert m.value == pytest.approx(4.789694385535404e-04)
    assert m.stats["ci_99_a"] == pytest.approx(4.7191e-04)
    assert m.stats["ci_99_b"] == pytest.approx(4.8881e-04)
    assert m.stats["q_25"] == pytest.approx(4.7676e-04)
    assert m.stats["q_75"] == pytest.approx(4.8181e-04)
    assert (m.stats["number"], m.stats["repeat"]) == (22921, 10)
    assert m.device == "Deas-MacBook-Air.local"
    assert m.line == 15
    assert m.measured_at == datetime.fromtimestamp(1697559305.660, tz=UTC)


V2 = {
    "commit_hash": "a" * 40,
    "env_name": "py3",
    "date": 1356631584000,
    "params": {"machine": "box", "python": "3.11"},
    "python": "3.11",
    "requirements": {},
    "env_vars": {},
    "result_columns": [
        "result",
        "params",
        "version",
        "started_at",
        "duration",
        "stats_ci_99_a",
        "stats_ci_99_b",
        "stats_q_25",
        "stats_q_75",
        "stats_number",
        "stats_repeat",
        "samples",
        "profile",
    ],
    "results": {
        "bench.Suite.time_sort": [
            [0.5, None, float("nan"), 2.0],
            [["'a'", "'b'"], ["1", "2.5"]],
            "v1",
            1356631600000,
            3.0,
            None,
            None,
            [0.4, None, None, 1.9],
        ],
        "bench.Suite.peakmem_load": [[1048576], []],
        "bench.Suite.mem_all_failed": [None, [["10", "20"]]],
        "bench.Suite.weird_thing": [[1.0], []],
    },
    "durations": {},
    "version": 2,
}


def test_v2_product_failures_skips_and_memory() -> None:
    ms, problems = split(text_doc(json.dumps(V2, indent=1)))
    sort = [m for m in ms if m.benchmark == "bench.Suite.time_sort"]
    assert [(m.params, m.value, m.status) for m in sort] == [
        ({"param1": "a", "param2": 1, "stat": "median"}, 500.0, "ok"),
        ({"param1": "a", "param2": 2.5, "stat": "median"}, None, "error"),
        ({"param1": "b", "param2": 1, "stat": "median"}, None, "missing"),
        ({"param1": "b", "param2": 2.5, "stat": "median"}, 2000.0, "ok"),
    ]
    assert sort[0].stats["q_25"] == pytest.approx(400.0)
    assert sort[3].stats["q_25"] == pytest.approx(1900.0)
    [peak] = [m for m in ms if m.benchmark == "bench.Suite.peakmem_load"]
    assert (peak.metric, peak.value, peak.unit, peak.params) == ("peak_memory", 1.0, "MB", {})
    failed = [m for m in ms if m.benchmark == "bench.Suite.mem_all_failed"]
    assert [(m.params, m.status, m.value) for m in failed] == [
        ({"param1": 10}, "error", None),
        ({"param1": 20}, "error", None),
    ]
    assert [p.severity for p in problems] == ["error"]
    assert "weird_thing" in problems[0].reason
    assert not [m for m in ms if m.benchmark == "bench.Suite.weird_thing"]


def test_v1_results() -> None:
    v1 = {
        "commit_hash": "b" * 40,
        "date": 1356631584000,
        "params": {"machine": "old", "python": "2.7"},
        "python": "2.7",
        "requirements": {},
        "results": {
            "bench.time_plain": 0.001,
            "bench.time_param": {
                "result": [0.1, 0.2],
                "params": [["1", "2"]],
                "stats": [{"ci_99": [0.09, 0.11], "q_25": 0.095}, None],
            },
            "bench.track_count": None,
        },
        "started_at": {"bench.time_plain": 1356631600000},
        "duration": {"bench.time_plain": 1.5},
        "version": 1,
    }
    ms, problems = split(text_doc(json.dumps(v1)))
    got = [(m.benchmark, m.params, m.value, m.status) for m in ms]
    assert got == [
        ("bench.time_plain", {"stat": "median"}, 1.0, "ok"),
        ("bench.time_param", {"param1": 1, "stat": "median"}, 100.0, "ok"),
        ("bench.time_param", {"param1": 2, "stat": "median"}, 200.0, "ok"),
        ("bench.track_count", {}, None, "error"),
    ]
    assert ms[0].stats["duration_s"] == 1.5
    assert ms[0].measured_at == datetime.fromtimestamp(1356631600, tz=UTC)
    assert ms[1].stats["ci_99_a"] == pytest.approx(90.0)
    assert [p.severity for p in problems] == ["warning"]  # track_: no unit


def test_benchmarks_and_machine_json_are_not_results() -> None:
    benchmarks = {
        "bench.time_x": {"name": "bench.time_x", "unit": "seconds", "params": []},
        "version": 2,
    }
    machine = {"arch": "x86_64", "machine": "box", "version": 1}
    for doc in (benchmarks, machine):
        assert list(asv.parse(text_doc(json.dumps(doc)))) == []


def test_cut_result_file_is_a_problem() -> None:
    text = fixture(SAMPLE).text[:3000]
    ms, problems = split(text_doc(text))
    assert ms == []
    assert [(p.line, p.parser, p.severity) for p in problems] == [(1, "asv", "error")]
