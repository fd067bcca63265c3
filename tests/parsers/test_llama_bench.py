"""ingest.parsers.llama_bench on real llama-bench output and on variants from its printers.

The real documents: the shared sample (tests/fixtures/modern/llama_bench/, a copy of
shared/samples/modern/llama-bench_llama.cpp-pr-4812.md) and the excerpt of llama.cpp's own
tools/llama-bench/README.md (its README.md names the sources). The inline variants follow
the printers of examples/llama-bench/llama-bench.cpp (2023) and
tools/llama-bench/llama-bench.cpp (2025).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.parsers import llama_bench
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import text_doc
from tests.parsers import tools

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "llama_bench"
SAMPLE = "llama-bench_llama.cpp-pr-4812.md"
README = "llama-bench-readme_llama.cpp-tools-readme.md"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def split(doc: DocText) -> tuple[list[Measurement], list[Problem]]:
    return tools.split(llama_bench.parse, doc)


def rows(measurements: list[Measurement]) -> list[tuple[str, str, str, float]]:
    return [(m.metric, str(m.params["test"]), str(m.params["stat"]), m.value) for m in measurements]  # type: ignore[misc]


def test_contract_and_every_fixture_is_named_in_the_readme() -> None:
    assert llama_bench.NAME == "llama_bench"
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    for path in FIXTURES.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme
            assert any(a in fixture(path.name).text for a in llama_bench.ANCHORS)


def test_sample_of_pr_4812_early_markdown_layout() -> None:
    measurements, problems = split(fixture(SAMPLE))
    assert problems == []
    assert [
        (m.params["no_kv_offload"], *r)
        for m, r in zip(measurements, rows(measurements), strict=True)
    ] == [
        (0, "throughput", "pp512", "mean", 4035.47),
        (0, "throughput", "pp512", "std", 157.68),
        (0, "throughput", "tg128", "mean", 127.43),
        (0, "throughput", "tg128", "std", 0.18),
        (1, "throughput", "pp512", "mean", 237.84),
        (1, "throughput", "pp512", "std", 10.28),
        (1, "throughput", "tg128", "mean", 59.99),
        (1, "throughput", "tg128", "std", 2.35),
    ]
    first = measurements[0]
    # The bug this parser fixes: t/s is a throughput, size and params are no measurements.
    assert {m.unit for m in measurements} == {"tokens/s"}
    # the mean throughput is better higher, its spread better lower
    assert {(m.params["stat"], m.direction) for m in measurements} == {
        ("mean", "higher"),
        ("std", "lower"),
    }
    assert first.benchmark == "llama 7B Q4_0"
    assert first.framework == "llama.cpp"
    assert first.device == "NVIDIA GeForce RTX 3090 Ti"  # the "Device 0:" line above
    assert first.params == {
        "backend": "CUDA",
        "n_gpu_layers": 99,
        "no_kv_offload": 0,
        "test": "pp512",  # printed "pp 512" by this early version
        "n_prompt": 512,
        "n_gen": 0,
        "stat": "mean",
    }
    assert first.testbed == {"model_size": "3.56 GiB", "model_params": "6.74 B"}
    assert first.version == "32d9f7d9"  # build: 32d9f7d9 (1786)
    assert first.stats == {"build_number": 1786}
    assert (first.line, first.raw.split("|")[7].strip()) == (8, "pp 512")
    # mean and std of one test differ only in params.stat; the four tests are four series.
    keys = {m.series_key() for m in measurements}
    assert len(keys) == 8
    no_stat = {
        tuple(sorted((k, v) for k, v in m.params.items() if k != "stat")) for m in measurements
    }
    assert len(no_stat) == 4


def test_readme_markdown_with_depth_csv_and_json() -> None:
    measurements, problems = split(fixture(README))
    md = [m for m in measurements if m.line < 30]
    assert rows(md) == [
        ("throughput", "pp512", "mean", 7340.20),
        ("throughput", "pp512", "std", 23.45),
        ("throughput", "tg128", "mean", 120.60),
        ("throughput", "tg128", "std", 0.59),
        ("throughput", "pp512 @ d512", "mean", 6425.91),
        ("throughput", "pp512 @ d512", "std", 18.88),
        ("throughput", "tg128 @ d512", "mean", 116.71),
        ("throughput", "tg128 @ d512", "std", 0.60),
        ("throughput", "pp512", "mean", 2368.80),
        ("throughput", "pp512", "std", 93.24),
        ("throughput", "tg128", "mean", 131.42),
        ("throughput", "tg128", "std", 0.59),
    ]
    assert md[4].params["n_depth"] == 512 and "n_depth" not in md[0].params
    assert md[0].benchmark == "qwen2 7B Q4_K - Medium" and md[0].params["n_gpu_layers"] == -1
    assert md[8].benchmark == "llama 7B mostly Q4_0"
    assert all(m.version is None for m in md)  # the README shows no build: line
    # The README's CSV header lists 42 fields, its rows 41 values: not guessed, reported.
    assert [(p.line, p.reason) for p in problems] == [
        (41, "llama-bench CSV row has 41 values, its header 42 (cut?)"),
        (42, "llama-bench CSV row has 41 values, its header 42 (cut?)"),
    ]
    js = [m for m in measurements if m.line > 90]
    got = {(m.params["test"], m.metric, m.params["stat"]): m.value for m in js}
    assert got == pytest.approx(
        {
            ("pp512", "test_time", "mean"): 72.13564,
            ("pp512", "test_time", "std"): 1.453752,
            ("pp512", "throughput", "mean"): 7100.002165,
            ("pp512", "throughput", "std"): 140.341520,
            ("tg128", "test_time", "mean"): 1076.76788,
            ("tg128", "test_time", "std"): 9.449585,
            ("tg128", "throughput", "mean"): 118.881588,
            ("tg128", "throughput", "std"): 1.041811,
        }
    )
    tt = js[0]
    assert (tt.metric, tt.unit, tt.direction, tt.line) == ("test_time", "ms", "lower", 96)
    assert tt.raw == '"avg_ns": 72135640,'
    assert js[2].unit == "tokens/s" and js[2].line == 98
    assert tt.benchmark == "qwen2 7B Q4_K - Medium"
    assert tt.device == "NVIDIA GeForce RTX 4080"
    assert tt.version == "8cf427ff"
    assert tt.measured_at == datetime(2025, 4, 24, 11, 58, 50, tzinfo=UTC)
    assert tt.samples == 5
    assert tt.stats == {"build_number": 5163, "model_filename": "Qwen2.5-7B-Instruct-Q4_K_M.gguf"}
    assert tt.testbed == {
        "model_size": "4.36 GiB",  # as the markdown printer shows 4677120000 bytes
        "model_params": "7.62 B",
        "cpu_info": "AMD Ryzen 7 7800X3D 8-Core Processor",
    }
    assert tt.params["backend"] == "CUDA"
    assert tt.params["n_gpu_layers"] == -1  # the same value as the markdown's ngl cell
    assert tt.params["no_kv_offload"] == 0 and tt.params["use_mmap"] == 1  # booleans as 0/1
    assert tt.params["type_k"] == "f16" and tt.params["n_batch"] == 2048


# -- variants from the printers ---------------------------------------------------------

CSV_2023 = """\
build_commit,build_number,cuda,opencl,metal,gpu_blas,blas,cpu_info,gpu_info,model_filename,model_type,model_size,model_n_params,n_batch,n_threads,type_k,type_v,n_gpu_layers,main_gpu,mul_mat_q,tensor_split,n_prompt,n_gen,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts
"3469684","1275","1","0","0","1","1","13th Gen Intel(R) Core(TM) i9-13900K","NVIDIA GeForce RTX 3090 Ti","models/7B/ggml-model-q4_0.gguf","llama 7B mostly Q4_0","3825065984","6738415616","512","16","f16","f16","99","0","1","0.00","512","0","2023-09-23T12:09:01Z","212155977","732372","2413.341687","8.305961"
"3469684","1275","1","0","0","1","1","13th Gen Intel(R) Core(TM) i9-13900K","NVIDIA GeForce RTX 3090 Ti","models/7B/ggml-model-q4_0.gguf","llama 7B mostly Q4_0","3825065984","6738415616","512","16","f16","f16","99","0","1","0.00","0","128","2023-09-23T12:09:02Z","977425379","4","130.9
"""  # noqa: E501


def test_csv_of_2023_with_backend_flags_and_a_cut_row() -> None:
    measurements, problems = split(text_doc(CSV_2023))
    assert rows(measurements) == [
        ("test_time", "pp512", "mean", pytest.approx(212.155977)),
        ("test_time", "pp512", "std", pytest.approx(0.732372)),
        ("throughput", "pp512", "mean", 2413.341687),
        ("throughput", "pp512", "std", 8.305961),
    ]
    m = measurements[2]
    assert m.params["backend"] == "CUDA"  # the first true flag, as get_backend() chose
    assert "cuda" not in m.params and m.params["mul_mat_q"] == 1
    assert m.testbed["model_size"] == "3.56 GiB" and m.testbed["model_params"] == "6.74 B"
    assert (m.line, m.version) == (2, "3469684")
    assert [(p.line, p.reason) for p in problems] == [
        (3, "llama-bench CSV row has 27 values, its header 28 (cut?)")
    ]


JSONL = (
    '{"build_commit": "abc1234", "build_number": 4000, "cpu_info": "Apple M2 Ultra", '
    '"gpu_info": "Apple M2 Ultra", "backends": "Metal,BLAS", "model_filename": "m.gguf", '
    '"model_type": "qwen2 7B Q8_0", "model_size": 8098525184, "model_n_params": 7615616512, '
    '"n_batch": 2048, "n_ubatch": 512, "n_threads": 16, "flash_attn": true, "n_prompt": 512, '
    '"n_gen": 128, "n_depth": 1024, "test_time": "2025-01-02T03:04:05Z", "avg_ns": 1000000000, '
    '"stddev_ns": 0, "avg_ts": 640.0, "stddev_ts": 0.0, "samples_ns": [ 1000000000 ],'
    '"samples_ts": [ 640 ]}\n'
    '{"build_commit": "abc1234", "build_number": 4000, "model_type": "qwen2 7B Q8_0", '
    '"n_prompt": 0, "n_gen": 128, "avg_ts": nan, "stddev_ts": 0.0}\n'
)


def test_jsonl_pg_test_with_depth_and_a_nan() -> None:
    measurements, problems = split(text_doc("```\n" + JSONL + "```\n"))
    assert rows(measurements) == [
        ("test_time", "pp512+tg128 @ d1024", "mean", 1000.0),
        ("test_time", "pp512+tg128 @ d1024", "std", 0.0),
        ("throughput", "pp512+tg128 @ d1024", "mean", 640.0),
        ("throughput", "pp512+tg128 @ d1024", "std", 0.0),
    ]
    m = measurements[0]
    assert m.params["flash_attn"] == 1 and m.params["n_depth"] == 1024
    assert m.params["backend"] == "Metal,BLAS" and m.testbed["model_size"] == "7.54 GiB"
    assert m.line == 2
    # The second line is no JSON (nan is not JSON): reported, not guessed.
    assert [p.line for p in problems] == [3]


def test_sql_insert() -> None:
    fields = (
        "build_commit, build_number, model_type, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, "
        "stddev_ts"
    )
    text = (
        "CREATE TABLE IF NOT EXISTS llama_bench (\n  build_commit TEXT\n);\n\n"
        f"INSERT INTO llama_bench ({fields}) VALUES ('deadbee', '99', 'llama 7B Q4_0', "
        "'0', '128', '1000000000', '1000000', '128.000000', '0.500000');\n"
        f"INSERT INTO llama_bench ({fields}) VALUES ('deadbee', '99', 'llama 7B Q4_0', '512"
    )
    measurements, problems = split(text_doc(text))
    assert rows(measurements) == [
        ("test_time", "tg128", "mean", 1000.0),
        ("test_time", "tg128", "std", 1.0),
        ("throughput", "tg128", "mean", 128.0),
        ("throughput", "tg128", "std", 0.5),
    ]
    assert measurements[0].version == "deadbee" and measurements[0].line == 5
    assert [p.line for p in problems] == [6]


NEW_TABLE = """\
Some prose before the table.

| model                          |       size |     params | backend    | threads | n_ubatch | fa | mmap |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | ------: | -------: | -: | ---: | --------------: | -------------------: |
| qwen2 7B Q8_0                  |   7.54 GiB |     7.62 B | Metal,BLAS |      16 |     2048 |  1 |    0 |  pp512+tg128 |      1525.13 ± 2.06 |
| qwen2 0.5B Q8_0                |  500.79 MiB |   494.03 M | Metal,BLAS |      16 |     2048 |  1 |    0 |           tg128 |        nan ± nan |
| qwen2 0.5B Q8_0                |  500.79 MiB |   494.03 M | Metal,BLAS |      16 |     2048 |  1 |    0 |           tg128 |        abc |
| qwen2 0.5B Q8_0                |  500.79 MiB |   494.03 M | Metal,BLAS |      16 |
| qwen2 0.5B Q8_0                |  500.79 MiB |   494.03 M | Metal,BLAS |      16 |     2048 |  1 |    0 |           pp512 |        1234.5

build: 1234abcd (5678)
"""  # noqa: E501


def test_new_layout_settings_and_garbled_rows() -> None:
    measurements, problems = split(text_doc(NEW_TABLE))
    assert rows(measurements) == [
        ("throughput", "pp512+tg128", "mean", 1525.13),
        ("throughput", "pp512+tg128", "std", 2.06),
    ]
    m = measurements[0]
    assert m.params == {
        "backend": "Metal,BLAS",
        "n_threads": 16,
        "n_ubatch": 2048,
        "flash_attn": 1,
        "use_mmap": 0,
        "test": "pp512+tg128",
        "n_prompt": 512,
        "n_gen": 128,
        "stat": "mean",
    }
    assert m.device == "" and m.version == "1234abcd" and m.stats == {"build_number": 5678}
    assert [(p.line, p.reason.split(":")[0]) for p in problems] == [
        (6, "throughput mean"),
        (6, "throughput std"),
        (7, "t/s cell 'abc' is no 'mean ± std'"),
        (8, "llama-bench row has 5 cells, its header 10"),
        (9, "llama-bench row without its closing '|' (cut?)"),
    ]


def test_tables_that_are_not_llama_bench_are_left_alone() -> None:
    batched = (
        "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |\n"
        "|-------|--------|------|--------|----------|----------|----------|----------|\n"
        "|   512 |     32 |    1 |    544 |    0.337 |  1518.90 |    0.405 |    79.04 |\n"
    )
    compare = (
        "| CPU | Model | Test | t/s master | t/s PR | Speedup |\n"
        "|-----|-------|------|-----------:|-------:|--------:|\n"
        "| M2  | llama 7B | pp512 | 100.0 | 110.0 | 1.10 |\n"
    )
    assert list(llama_bench.parse(text_doc(batched + "\n" + compare))) == []
