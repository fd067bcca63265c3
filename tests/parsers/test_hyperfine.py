"""ingest.parsers.hyperfine on real hyperfine output and on variants from its exporters.

The real documents are in tests/fixtures/modern/hyperfine/ (its README.md names each
source): the shared sample (--export-json of hyperfine PR 176), a console report and a
--export-markdown table. The inline variants follow sharkdp/hyperfine's
src/benchmark/mod.rs (console) and src/export/{json,csv,markup,asciidoc}.rs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.parsers import hyperfine
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "hyperfine"
SAMPLE = "hyperfine-json_hyperfine-pr-176.json"
CONSOLE = "hyperfine-console_oryon-dominik-adventofcode-2021-01.md"
MARKDOWN = "hyperfine-markdown_nanopub-rs-readme.md"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(hyperfine.parse, doc)


def table(measurements: list[Measurement]) -> dict[tuple[str, str, str], float]:
    out: dict[tuple[str, str, str], float] = {}
    for m in measurements:
        key = (m.benchmark, m.metric, str(m.params["stat"]))
        assert key not in out, key
        out[key] = m.value  # type: ignore[assignment]
    return out


def test_contract_and_every_fixture_is_named_in_the_readme() -> None:
    assert hyperfine.NAME == "hyperfine"
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in hyperfine.ANCHORS)


def test_sample_json_export_of_pr_176() -> None:
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []
    got = table(measurements)
    assert got == pytest.approx(
        {
            ("sleep 0.1", "time", "mean"): 104.79531597500001,
            ("sleep 0.1", "time", "std"): 2.8952282760556763,
            ("sleep 0.1", "time", "median"): 103.899629975,
            ("sleep 0.1", "time", "min"): 102.477719475,
            ("sleep 0.1", "time", "max"): 108.904284475,
            ("sleep 0.1", "user_time", "mean"): 1.8704149999999996,
            ("sleep 0.1", "system_time", "mean"): 2.7805025,
            ("sleep 0.15", "time", "mean"): 155.849670225,
            ("sleep 0.15", "time", "std"): 1.5191348863954144,
            ("sleep 0.15", "time", "median"): 156.060130475,
            ("sleep 0.15", "time", "min"): 153.803724475,
            ("sleep 0.15", "time", "max"): 157.474695475,
            ("sleep 0.15", "user_time", "mean"): 3.8596649999999995,
            ("sleep 0.15", "system_time", "mean"): 1.8617525000000001,
        }
    )
    first = measurements[0]
    assert (first.unit, first.direction, first.framework, first.device) == ("ms", "lower", "", "")
    assert first.params == {"stat": "mean"}
    assert (first.samples, first.line, first.raw) == (4, 4, '"command": "sleep 0.1",')
    assert measurements[-1].line == 20
    assert len({m.series_key() for m in measurements}) == 14


def test_console_report_of_adventofcode() -> None:
    measurements, problems = split(fixture(CONSOLE))
    assert problems == []
    assert len(measurements) == 5 * 6
    simple = [m for m in measurements if m.benchmark == "python .\\01_simple.py"]
    assert {(m.metric, m.params["stat"]): m.value for m in simple} == {
        ("time", "mean"): 43.4,
        ("time", "std"): 1.4,
        ("user_time", "mean"): 1.3,
        ("system_time", "mean"): 3.9,
        ("time", "min"): 41.3,  # "Range (min … max)", read after NFKC turned … into ...
        ("time", "max"): 49.5,
    }
    assert {(m.line, m.samples) for m in simple} == {(6, 100), (7, 100)}
    rust, go = (m for m in measurements if m.benchmark == ".\\01.exe" and m.params["stat"] == "max")
    assert (rust.value, rust.samples, go.value, go.samples) == (213.7, 1000, 7.7, 247)


def test_markdown_export_of_nanopub_rs() -> None:
    measurements, problems = split(fixture(MARKDOWN))
    assert problems == []
    got = table(measurements)
    args = "sign lib/tests/resources/simple1-rsa.trig -k lib/tests/resources/id_rsa"
    rust = f"target/release/nanopub-cli {args}"
    java = f"java -jar nanopub.jar {args}"
    assert {k[1:]: v for k, v in got.items() if k[0] == rust} == {
        ("time", "mean"): 5.3,
        ("time", "std"): 0.1,
        ("time", "min"): 5.1,
        ("time", "max"): 6.3,
    }
    assert got[(java, "time", "mean")] == 319.5
    # "Relative" (60.74 ± 2.49) is derived from the means: not stored.
    assert 60.74 not in got.values() and len(got) == 12


# -- variants from the exporters ---------------------------------------------------------

CONSOLE_VARIANTS = """\
$ hyperfine -N 'sleep 1' 'echo hi' 'true'
Benchmark #1: sleep 1
  Time (mean ± σ):      1.002 s ±  0.001 s    [User: 0.4 ms, System: 0.9 ms]
  Range (min … max):    1.001 s …  1.004 s    10 runs

Benchmark 2: echo hi
  Time (abs ≡):        512.3 µs               [User: 201.0 µs, System: 150.2 µs]

Benchmark 3: true
  Time (mean ± σ):       1.5 ms ±   0.
"""


def test_console_seconds_microseconds_single_run_and_a_cut_report() -> None:
    measurements, problems = split(text_doc(CONSOLE_VARIANTS))
    got = table(measurements)
    assert got == pytest.approx(
        {
            ("sleep 1", "time", "mean"): 1002.0,
            ("sleep 1", "time", "std"): 1.0,
            ("sleep 1", "user_time", "mean"): 0.4,
            ("sleep 1", "system_time", "mean"): 0.9,
            ("sleep 1", "time", "min"): 1001.0,
            ("sleep 1", "time", "max"): 1004.0,
            ("echo hi", "time", "mean"): 0.5123,
            ("echo hi", "user_time", "mean"): 0.201,
            ("echo hi", "system_time", "mean"): 0.1502,
        }
    )
    assert {m.samples for m in measurements if m.benchmark == "echo hi"} == {1}
    assert [(p.line, p.reason) for p in problems] == [
        (10, "hyperfine Time line cannot be read (cut?)")
    ]


JSON_NEW = """\
Results:
```json
{
  "results": [
    {
      "command": "fd -e txt",
      "mean": 0.25,
      "stddev": null,
      "median": 0.25,
      "user": 0.1,
      "system": 0.05,
      "min": 0.25,
      "max": 0.25,
      "times": [0.25],
      "exit_codes": [1],
      "parameters": {"threads": "4"}
    }
  ],
  "metadata": {"hyperfine_version": "1.20.0", "start_time": "2025-06-01T10:00:00Z",
               "platform": {"os": "Linux", "architecture": "x86_64"}}
}
```
and a cut one:
```json
{
  "results": [
    {
      "command": "sleep 0.2",
      "mean": 0.20
```
"""


def test_json_parameters_metadata_single_run_and_cut() -> None:
    measurements, problems = split(text_doc(JSON_NEW))
    got = table(measurements)
    assert "std" not in {k[2] for k in got}  # stddev null: one run
    assert got[("fd -e txt", "time", "mean")] == 250.0
    m = measurements[0]
    assert m.params == {"threads": "4", "stat": "mean"}
    assert m.stats == {"failed_runs": 1}
    assert m.testbed == {"hyperfine_version": "1.20.0", "os": "Linux", "architecture": "x86_64"}
    assert m.measured_at == datetime(2025, 6, 1, 10, tzinfo=UTC)
    assert (m.samples, m.line) == (1, 6)
    assert [(p.line, p.reason) for p in problems] == [
        (25, "hyperfine JSON export cannot be read (cut?)")
    ]


CSV = """\
command,mean,stddev,median,user,system,min,max,parameter_n
"sleep 0.1",0.1047,0.0028,0.1038,0.0018,0.0027,0.1024,0.1089,1
sleep 0.15,0.1558,0.0015,0.1560,0.0038,0.0018,0.1538,0.1574,2
sleep 0.2,0.2
"""


def test_csv_export_with_parameters_and_a_cut_row() -> None:
    measurements, problems = split(text_doc(CSV))
    got = table(measurements)
    assert got[("sleep 0.1", "time", "mean")] == pytest.approx(104.7)
    assert got[("sleep 0.15", "system_time", "mean")] == pytest.approx(1.8)
    assert len(got) == 14
    assert {m.params["n"] for m in measurements} == {"1", "2"}
    assert [(p.line, p.reason) for p in problems] == [
        (4, "hyperfine CSV row has 2 values, its header 9 (cut?)")
    ]


CSV_METRICS = """\
command,time_wall_clock_unit,time_wall_clock_mean,time_wall_clock_stddev,time_wall_clock_median,time_wall_clock_min,time_wall_clock_max,memory_peak_resident_unit,memory_peak_resident_mean,memory_peak_resident_stddev,memory_peak_resident_median,memory_peak_resident_min,memory_peak_resident_max,parameter_bar,parameter_foo
command_a,s,9,2.6457513110645907,8,7,12,B,1024,0,1024,1024,1024,two,one
"""


def test_csv_of_the_metric_layout() -> None:
    measurements, problems = split(text_doc(CSV_METRICS))
    assert problems == []
    got = table(measurements)
    assert got[("command_a", "time", "mean")] == 9000.0
    assert got[("command_a", "time", "std")] == pytest.approx(2645.7513110645907)
    assert got[("command_a", "peak_memory", "max")] == pytest.approx(1024 / 2**20)
    peak = next(m for m in measurements if m.metric == "peak_memory")
    assert (peak.unit, peak.params) == ("MB", {"bar": "two", "foo": "one", "stat": "mean"})


ORG_AND_ASCIIDOC = """\
| Command  |  Mean [s] |  Min [s] |  Max [s] |  Relative |
|--+--+--+--+--|
| =sleep 1=  |  1.002 ± 0.001 |  1.001 |  1.004 |  1.00 |
| `a \\| b` | 2.5 | 2.5 | 2.5 | 2.50 ± 0.01 |
| `cut` | 1.0 ± 0.1 | 0.9

[cols="<,>,>,>,>"]
|===
| Command 
| Mean [ms] 
| Min [ms] 
| Max [ms] 
| Relative 

| `sleep 0.1` 
| 104.8 ± 0.6 
| 103.9 
| 106.1 
| 1.00 

| `sleep 0.2` 
| 204.8 ± x 
| 203.9 
| 206.1 
| 1.95 
|===
"""  # noqa: W291 (AsciiDoc cells end in a space)


def test_orgmode_and_asciidoc_exports() -> None:
    measurements, problems = split(text_doc(ORG_AND_ASCIIDOC))
    got = table(measurements)
    assert got[("sleep 1", "time", "mean")] == 1002.0
    assert got[("a | b", "time", "max")] == 2500.0  # the escaped "|" of a command
    assert ("a | b", "time", "std") not in got
    assert got[("sleep 0.1", "time", "mean")] == 104.8
    assert got[("sleep 0.1", "time", "std")] == 0.6
    assert got[("sleep 0.1", "time", "max")] == 106.1
    assert got[("sleep 0.2", "time", "min")] == 203.9
    assert ("sleep 0.2", "time", "mean") not in got
    assert [(p.line, p.reason) for p in problems] == [
        (5, "hyperfine table row without its closing '|' (cut?)"),
        (21, "hyperfine Mean [ms] cell '204.8 ± x' is no number"),
    ]


def test_summary_and_unrelated_tables_give_nothing() -> None:
    text = (
        "Summary\n  'sleep 0.1' ran\n    1.49 ± 0.01 times faster than 'sleep 0.15'\n\n"
        "| Participant | Input | Mean [ms] | Min [ms] | Max [ms] | Relative |\n"
        "|:---|:---|---:|---:|---:|---:|\n| mattcl | input-kcen | 1.4 ± 0.2 | 1.0 | 2.5 | 1.00 |\n"
    )
    assert list(hyperfine.parse(text_doc(text))) == []
