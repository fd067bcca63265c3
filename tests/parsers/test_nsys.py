"""Nsight Systems ``nsys stats`` reports: the NanoMoE text report (nsys 2026.1), the dotLLM
kernel CSV (2024.6), an nsys 2020.4 ``--stats=true`` output (old headings and columns,
thousands commas, a size report, a text gputrace), CSV traces, cut and garbled tables."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from ingest.parsers import nsys
from ingest.text import DocText, from_text, read_text_file
from perfboard import profiles
from perfboard.model import DocMeta, Item, Problem, ProfileEvent

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "nsys"
NANOMOE = "nsys-stats-text_nanomoe-report.md"
DOTLLM = "nsys-kern-sum-csv_dotllm-report.csv"
OLD = "nsys-2020-stats_josemonsalve2-llvm-compression-readme.md"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def parse(doc: DocText) -> list[Item]:
    items = list(nsys.parse(doc))
    assert [i.line for i in items] == sorted(i.line for i in items)  # document order
    return items


def events(items: list[Item], section: str | None = None) -> list[ProfileEvent]:
    return [
        i
        for i in items
        if isinstance(i, ProfileEvent) and (section is None or i.section == section)
    ]


def problems(items: list[Item]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def named(items: list[Item], section: str) -> dict[str, ProfileEvent]:
    rows = events(items, section)
    out = {e.event: e for e in rows}
    assert len(out) == len(rows)
    return out


def frame(items: list[Item]) -> pd.DataFrame:
    return pd.DataFrame([{s: getattr(e, s) for s in e.__slots__} for e in events(items)])


# -- nsys 2026.1: cuda_api_sum, cuda_gpu_kern_sum, nvtx_sum -------------------------------


def test_the_nanomoe_report_gives_api_kernel_and_nvtx_rows() -> None:
    items = parse(fixture(NANOMOE))
    assert not problems(items)
    api = named(items, "nsys api")
    assert list(api)[:3] == ["cudaMemcpyAsync", "cudaStreamSynchronize", "cudaLaunchKernel"]
    copy = api["cudaMemcpyAsync"]
    # expected.tsv: cudaMemcpyAsync 2613668540 (ns)
    assert copy.total == pytest.approx(2613.66854)
    assert (copy.calls, copy.ratio, copy.line) == (475600, pytest.approx(0.432), 15)
    assert copy.ave == pytest.approx(0.0054955)
    assert (copy.min, copy.max) == (pytest.approx(0.002862), pytest.approx(4.363365))
    kernels = events(items, "nsys kernels")
    assert len(kernels) == 17
    first = kernels[0]
    # expected.tsv: unrolled_elementwise_kernel 75339544 (total) and 1471.5 (avg), in ns
    assert first.event.startswith("void at::native::unrolled_elementwise_kernel<")
    assert first.event.endswith("...")  # "…" as nsys cut it, NFKC-normalised
    assert (first.total, first.ave, first.calls) == (
        pytest.approx(75.339544),
        pytest.approx(0.0014715),
        51200,
    )
    gemm = named(items, "nsys kernels")["ampere_sgemm_64x32_sliced1x4_tn"]
    assert gemm.total == pytest.approx(0.83504)  # expected.tsv: 835040 ns
    nvtx = named(items, "nsys nvtx")
    loop = nvtx[":compute_loop"]
    assert loop.total == pytest.approx(4208.569565)  # expected.tsv: 4208569565 ns
    assert (loop.calls, loop.place, loop.ratio) == (200, "PushPop", pytest.approx(0.237))


def test_the_page_takes_the_kernel_block_as_the_runs_main_block() -> None:
    rows = frame(parse(fixture(NANOMOE)))
    assert profiles.main_block(rows) == "nsys kernels"
    assert profiles.layout(rows) == "Nsight Systems summary (GPU kernels)"
    totals = profiles.block_totals(rows)
    assert set(totals) == {"nsys api", "nsys kernels", "nsys nvtx"}
    kernels = totals["nsys kernels"]
    assert kernels.total == pytest.approx(363.2, rel=5e-3) and kernels.complete


# -- nsys 2024.6: --format csv ------------------------------------------------------------


def test_the_dotllm_kernel_csv() -> None:
    items = parse(fixture(DOTLLM))
    assert not problems(items)
    kernels = named(items, "nsys kernels")
    assert len(kernels) == 15
    flash = kernels["flash_attention_prefill_f16"]
    # expected.tsv: flash_attention_prefill_f16 99385786 and 3105805.8 ns
    assert (flash.total, flash.ave) == (pytest.approx(99.385786), pytest.approx(3.1058058))
    assert (flash.calls, flash.ratio, flash.line) == (32, pytest.approx(0.501), 2)
    dequant = kernels["dequant_q4_k_f16"]
    assert dequant.total == pytest.approx(37.727461)  # expected.tsv: 37727461
    assert (dequant.min, dequant.max) == (pytest.approx(0.022207), pytest.approx(3.320037))


def test_a_csv_with_quoted_names_after_its_heading() -> None:
    text = (
        "Processing [decode.sqlite] with [/opt/nsight/reports/cuda_gpu_kern_sum.py]...\n"
        "\n ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
        "60.0,6000000,100,60000.0,60000,50000,70000,1000.0,"
        '"void foo<(ggml_type)21, 72>(char const*, int)"\n'
        '40.0,4000000,50,80000.0,80000,79000,81000,100.0,"bar(int, int)"\n'
    )
    items = parse(from_text(text))
    foo, bar = events(items, "nsys kernels")
    assert foo.event == "void foo<(ggml_type)21, 72>(char const*, int)"
    assert (foo.total, foo.calls, foo.min, foo.line) == (6.0, 100, 0.05, 6)
    assert bar.event == "bar(int, int)" and bar.ratio == 0.4


# -- nsys 2020.4: the old headings and columns --------------------------------------------


def test_the_2020_stats_output() -> None:
    items = parse(fixture(OLD))
    api = named(items, "nsys api")
    assert len(api) == 14
    release = api["cuDevicePrimaryCtxRelease_v2"]
    # "Time(%)  Total Time (ns)  Num Calls  Average  Minimum  Maximum  Name", with commas
    assert (release.total, release.calls, release.ave) == (52.866564, 1, 52.866564)
    assert release.ratio == pytest.approx(0.733)
    alloc = api["cuMemAlloc_v2"]
    assert (alloc.calls, alloc.min, alloc.max) == (8, 0.00252, 1.12527)
    (kernel,) = events(items, "nsys kernels")
    assert kernel.event == "__omp_offloading_30_736b0b47_main_l20"
    assert (kernel.total, kernel.calls, kernel.ratio) == (0.22208, 1, 1.0)
    memory = named(items, "nsys memory")
    assert memory["[CUDA memcpy HtoD]"].total == pytest.approx(4.194961)
    assert memory["[CUDA memcpy HtoD]"].calls == 4  # "Operations"
    osrt = named(items, "nsys osrt")
    assert len(osrt) == 25 and osrt["ioctl"].calls == 1031
    size, trace = problems(items)
    # The "(by size in KiB)" report holds sizes: never read as times.
    assert size.severity == "warning" and "not stored" in size.reason and size.line == 60
    assert trace.severity == "warning" and "column format is not read" in trace.reason
    assert all(e.total < 400 for e in events(items))


# -- cuda_gpu_trace in CSV ----------------------------------------------------------------

TRACE_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)


def trace_row(start: int, duration: int, name: str) -> str:
    return f'{start},{duration},1,1,1,1,128,1,1,32,0.000,0.000,,,,,"NVIDIA A100 (0)",1,,7,"{name}"'


def test_a_gpu_trace_is_summed_per_kernel() -> None:
    rows = [
        trace_row(100, 2000, "gemm<float, 128>(int, int)"),
        trace_row(200, 1000, "[CUDA memcpy Host-to-Device]"),
        trace_row(300, 4000, "gemm<float, 128>(int, int)"),
        trace_row(400, 500, "relu"),
    ]
    text = "nsys stats --report cuda_gpu_trace --format csv r.nsys-rep\n" + "\n".join(
        [TRACE_HEADER, *rows]
    )
    items = parse(from_text(text))
    assert not problems(items)
    kernels = named(items, "nsys kernels")
    gemm = kernels["gemm<float, 128>(int, int)"]
    assert (gemm.calls, gemm.total, gemm.ave, gemm.min, gemm.max) == (2, 0.006, 0.003, 0.002, 0.004)
    assert (gemm.line, gemm.ratio) == (3, None)
    assert "gemm<float, 128>" in gemm.raw
    assert kernels["relu"].total == 0.0005
    (copy,) = events(items, "nsys memory")
    assert (copy.event, copy.calls, copy.total) == ("[CUDA memcpy Host-to-Device]", 1, 0.001)


def test_a_large_trace_is_read_in_seconds() -> None:
    n = 300_000
    names = [f"kernel_{i % 50}<float>(int, float*)" for i in range(50)]
    body = "\n".join(trace_row(i * 10, 1000 + i % 7, names[i % 50]) for i in range(n))
    doc = from_text(TRACE_HEADER + "\n" + body + "\n")
    began = time.perf_counter()
    items = parse(doc)
    elapsed = time.perf_counter() - began
    kernels = events(items, "nsys kernels")
    assert len(kernels) == 50 and sum(k.calls or 0 for k in kernels) == n
    assert elapsed < 5, f"{len(doc.text) / 1e6:.0f} MB trace read in {elapsed:.1f} s"


# -- cut, garbled, unnamed ----------------------------------------------------------------

KERN = """ ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

 Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name
 --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----
     60.0          6000000        100   60000.0   60000.0     50000     70000       1000.0  foo
     30.0          3000000        300   10000.0   10000.0      9000     11000        100.0  bar
     10.0          1000000         50   20000.0   20000.0     19000     21000        100.0  baz
"""


def test_a_row_cut_short_and_a_report_cut_after_whole_rows() -> None:
    lines = KERN.splitlines()
    cut = "\n".join([*lines[:5], lines[5][:40]])
    items = parse(from_text(cut))
    assert [e.event for e in events(items)] == ["foo"]
    share, row = problems(items)
    assert row.line == 6 and row.reason == "nsys row cut short" and row.severity == "error"
    assert share.severity == "warning" and "60.0%" in share.reason
    items = parse(from_text(KERN))
    assert not problems(items) and len(events(items)) == 3


def test_a_garbled_value_is_a_problem_and_the_rest_is_read() -> None:
    items = parse(from_text(KERN.replace("3000000", "3O00000")))
    assert [e.event for e in events(items)] == ["foo", "baz"]
    problem, share = problems(items)
    assert problem.line == 6 and "'3O00000' is not a number" in problem.reason
    assert share.severity == "warning" and "70.0%" in share.reason
    garbled = "\n".join(
        [*KERN.splitlines()[:5], "     30.0          3000000        x3  1  1  1  1  1  bar"]
    )
    (problem, _) = problems(parse(from_text(garbled)))
    assert "count 'x3'" in problem.reason


def test_repeated_cut_names_are_added_up() -> None:
    items = parse(from_text(KERN.replace("  bar\n", "  foo\n")))
    foo = named(items, "nsys kernels")["foo"]
    assert (foo.calls, foo.total, foo.min, foo.max) == (400, 9.0, 0.009, 0.07)
    assert foo.ratio == pytest.approx(0.9)
    (warning,) = problems(items)
    assert warning.severity == "warning" and "2 rows" in warning.reason


def test_a_report_without_heading_is_named_by_its_columns() -> None:
    api = KERN.split("\n", 2)[2].replace("Instances", "Num Calls")
    items = parse(from_text(api))
    assert {e.section for e in events(items)} == {"nsys"}
    (warning,) = problems(items)
    assert warning.severity == "warning" and "cuda_api_sum or osrt_sum" in warning.reason
    nvtx = api.replace("Name", "Range")
    assert {e.section for e in events(parse(from_text(nvtx)))} == {"nsys nvtx"}


def test_a_size_report_is_not_read_as_times() -> None:
    text = (
        " ** CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum):\n\n"
        " Total (MB)  Count  Avg (MB)  Med (MB)  Min (MB)  Max (MB)  StdDev (MB)  Operation\n"
        " ----------  -----  --------  --------  --------  --------  -----------  ---------\n"
        "    100.000     10    10.000    10.000    10.000    10.000        0.000  "
        "[CUDA memcpy Host-to-Device]\n"
    )
    items = parse(from_text(text))
    (warning,) = items
    assert isinstance(warning, Problem) and "not times" in warning.reason


def test_prose_is_no_report() -> None:
    assert not parse(from_text("The Time (%) and Total Time (ns) columns of nsys stats."))
