"""PyTorch profiler tables (key_averages().table()): the tutorial's sample, a full table
with CUDA columns, the pre-1.8 layout of pytorch/pytorch#45209, and cut or garbled tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ingest.parsers import torch_profiler
from ingest.text import DocText, from_text, read_text_file
from perfboard import profiles
from perfboard.model import DocMeta, Item, Measurement, Problem, ProfileEvent

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "modern" / "torch_profiler"
SAMPLE = "pytorch-profiler-table_pytorch-tutorials-profiler_recipe.txt"
CUDA_TABLE = "pytorch-profiler-table-cuda_cudagraph-training.txt"
LEGACY = "pytorch-profiler-table-legacy_pytorch-pr-45209.md"


def fixture(name: str) -> DocText:
    return read_text_file(str(FIXTURES / name), DocMeta(uri=name))


def parse(doc: DocText) -> list[Item]:
    items = list(torch_profiler.parse(doc))
    assert [i.line for i in items] == sorted(i.line for i in items)  # document order
    return items


def events(items: list[Item]) -> list[ProfileEvent]:
    return [i for i in items if isinstance(i, ProfileEvent)]


def problems(items: list[Item]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def by_name(items: list[Item], section: str | None = None) -> dict[str, ProfileEvent]:
    rows = [e for e in events(items) if section is None or e.section == section]
    out = {e.event: e for e in rows}
    assert len(out) == len(rows)
    return out


# -- the tutorial's sample ----------------------------------------------------------------


def test_the_tutorials_cpu_table_gives_self_cpu_times_per_op() -> None:
    items = parse(fixture(SAMPLE))
    cpu = by_name(items, "torch")
    assert list(cpu) == [
        "model_inference",
        "aten::conv2d",
        "aten::convolution",
        "aten::_convolution",
        "aten::mkldnn_convolution",
        "aten::batch_norm",
        "aten::_batch_norm_impl_index",
        "aten::native_batch_norm",
        "aten::mean",
        "aten::select",
    ]
    conv = cpu["aten::mkldnn_convolution"]
    # expected.tsv: aten::mkldnn_convolution 30.838 (Self CPU, ms)
    assert (conv.total, conv.cpu_time, conv.calls) == (30.838, 30.838, 20)
    assert conv.ave == pytest.approx(1.556)  # CPU time avg, as printed
    assert (conv.depth, conv.gpu_time, conv.place, conv.line) == (0, None, "", 8)
    inference = cpu["model_inference"]
    # expected.tsv: model_inference 57.503 (CPU total = CPU time avg of its one call)
    assert (inference.total, inference.calls, inference.ave) == (5.509, 1, 57.503)
    assert "57.503ms" in inference.raw
    assert cpu["aten::select"].calls == 255
    assert cpu["aten::select"].ave == pytest.approx(0.008988)
    # "Self CPU time total: 57.549m" (sic): no unit PyTorch prints, so no ratio is made
    # from it and no total is stored.
    (footer,) = [p for p in problems(items) if p.line == 15]
    assert "57.549m" in footer.reason and footer.severity == "error"
    assert all(e.ratio is None for e in cpu.values())


def test_the_tutorials_cuda_table_is_a_device_table_with_its_footers() -> None:
    items = parse(fixture(SAMPLE))
    device = by_name(items, "torch device")
    forward = device["aten::thnn_conv2d_forward"]
    # expected.tsv: aten::thnn_conv2d_forward 10.484, sgemm_32x32x32_NN 3.206 (Self CUDA)
    assert (forward.total, forward.gpu_time, forward.cpu_time) == (10.484, 10.484, None)
    assert (forward.place, forward.calls, forward.line) == ("CUDA", None, 26)
    assert device["sgemm_32x32x32_NN"].gpu_time == 3.206
    assert device["model_inference"].total == 0.0
    assert "void at::native::im2col_kernel<float>(long, float co..." in device
    # No Self CUDA % column: the share is of the footer's "Self CUDA time total".
    assert forward.ratio == pytest.approx(10.484 / 11.666)
    totals = {m.metric: m for m in items if isinstance(m, Measurement)}
    # expected.tsv: 11.666 (Self CUDA time total)
    assert totals["self_cuda_time_total"].value == 11.666
    assert totals["self_cpu_time_total"].value == 23.015
    cuda = totals["self_cuda_time_total"]
    assert (cuda.unit, cuda.direction, cuda.framework, cuda.line) == ("ms", "lower", "pytorch", 32)
    assert cuda.stats == {"source": "torch_profiler"}


# -- a full table with CUDA columns -------------------------------------------------------


def test_a_full_cuda_table_keeps_self_cpu_and_self_cuda_apart() -> None:
    items = parse(fixture(CUDA_TABLE))
    rows = by_name(items)
    assert {e.section for e in rows.values()} == {"torch"}
    sync = rows["cudaDeviceSynchronize"]
    assert (sync.total, sync.cpu_time, sync.gpu_time, sync.calls) == (934.608, 934.608, 0.0, 1)
    assert sync.ratio == pytest.approx(0.5043) and sync.cpu_ratio == pytest.approx(0.5043)
    gemm = rows["ampere_fp16_s16816gemm_fp16_128x128_ldg8_relu_f2f_st..."]
    assert (gemm.total, gemm.gpu_time, gemm.calls) == (0.0, 239.338, 720)
    assert gemm.gpu_ratio == pytest.approx(0.128)
    launch = rows["cudaLaunchKernel"]
    assert (launch.cpu_time, launch.calls, launch.ave) == (904.87, 2020, 0.447955)
    totals = {m.metric: m.value for m in items if isinstance(m, Measurement)}
    assert totals == {"self_cpu_time_total": 1853.0, "self_cuda_time_total": 1870.0}


def test_rows_whose_names_were_cut_alike_are_one_event() -> None:
    items = parse(fixture(CUDA_TABLE))
    rows = by_name(items)
    cutlass = rows["void cutlass::Kernel<cutlass_80_tensorop_f16_s16816g..."]
    # eight rows: 94.903 + 71.341 + 69.041 + 61.763 + 29.151 + 3.247 + 2.838 + 0.070 ms
    assert cutlass.gpu_time == pytest.approx(332.354)
    assert cutlass.calls == 240 + 120 + 480 + 240 + 120 + 10 + 10 + 10
    assert cutlass.raw.count("\n") == 7
    warned = [p for p in problems(items) if "cutlass" in p.reason]
    assert len(warned) == 1 and warned[0].severity == "warning" and warned[0].line == 8
    assert not [p for p in problems(items) if p.severity == "error"]


def test_the_block_total_is_the_reports_self_cpu_total() -> None:
    rows = pd.DataFrame([vars_of(e) for e in events(parse(fixture(CUDA_TABLE)))])
    (total,) = profiles.block_totals(rows).values()
    # Self CPU % of each row is its share of "Self CPU time total: 1.853s".
    assert total.total == pytest.approx(1853.0, rel=2e-3)
    assert total.complete
    assert profiles.main_block(rows) == "torch"
    assert profiles.layout(rows) == "PyTorch profiler table (self CPU and device time)"


def vars_of(event: ProfileEvent) -> dict[str, object]:
    return {slot: getattr(event, slot) for slot in event.__slots__}


# -- the layout before PyTorch 1.8 --------------------------------------------------------


def test_the_legacy_layout_and_a_cut_excerpt() -> None:
    items = parse(fixture(LEGACY))
    rows = by_name(items)
    assert list(rows) == ["aten::matmul", "aten::mm"]
    mm = rows["aten::mm"]
    # "Self CPU total %" and "Number of Calls"; left-aligned cells.
    assert (mm.total, mm.ratio, mm.calls, mm.ave) == (518.336, pytest.approx(0.9809), 100, 5.225)
    assert rows["aten::matmul"].total == pytest.approx(0.890805)
    # CUDA total of this layout is inclusive: no self device time to store.
    assert mm.gpu_time is None
    cut, end = problems(items)
    assert (cut.line, cut.severity) == (9, "error") and "1.53" in cut.reason
    assert end.severity == "warning" and "no closing rule" in end.reason


# -- other columns, garbled tables --------------------------------------------------------


def table_row(*cells: str) -> str:
    name, pct, self_cpu, total, mem, calls, shape = cells
    row = [f"{name:>22}"] + [f"{c:>12}" for c in (pct, self_cpu, total, mem, calls)]
    return "  ".join([*row, f"{shape:>44}"]) + "  "


def shapes_table() -> str:
    header = "  ".join(
        [f"{'Name':>22}"]
        + [f"{h:>12}" for h in ("Self CPU %", "Self CPU", "CPU total", "CPU Mem", "# of Calls")]
        + [f"{'Input Shapes':>44}"]
    )
    rule = "  ".join(["-" * 22] + ["-" * 12] * 5 + ["-" * 44]) + "  "
    return "\n".join(
        [
            rule,
            header,
            rule,
            table_row(
                "aten::addmm", "60.00%", "3.000ms", "4.000ms", "12.50 MB", "2", "[[1], [1, 2]]"
            ),
            table_row("aten::addmm", "20.00%", "1.000ms", "1.200ms", "0 B", "1", "[[4], [4, 8]]"),
            table_row("aten::relu", "20.00%", "1.000ms", "1.000ms", "-2.00 Kb", "3", "[[1, 2]]"),
            rule,
            "Self CPU time total: 5.000ms",
        ]
    )


def test_input_shapes_are_part_of_the_event_and_memory_is_not_read() -> None:
    items = parse(from_text("Profile:\n```\n" + shapes_table() + "\n```\n"))
    rows = by_name(items)
    assert list(rows) == [
        "aten::addmm [[1], [1, 2]]",
        "aten::addmm [[4], [4, 8]]",
        "aten::relu [[1, 2]]",
    ]
    first = rows["aten::addmm [[1], [1, 2]]"]
    assert (first.total, first.ratio, first.calls) == (3.0, 0.6, 2)
    assert not problems(items)
    (total,) = [m for m in items if isinstance(m, Measurement)]
    assert total.value == 5.0


def test_a_table_cut_before_its_rule_and_a_garbled_cell() -> None:
    text = shapes_table().split("\n")
    garbled = [*text[:3], text[3].replace("3.000ms", "3.000xx"), *text[4:5]]
    items = parse(from_text("\n".join(garbled)))
    bad, cut = problems(items)
    assert bad.line == 4 and "3.000xx" in bad.reason and bad.severity == "error"
    assert cut.severity == "warning" and "cut" in cut.reason
    assert [e.event for e in events(items)] == ["aten::addmm [[4], [4, 8]]"]


def test_prose_naming_the_columns_is_no_table() -> None:
    text = "The columns are Name  Self CPU and # of Calls; see Self CPU time total: 5 ms."
    items = parse(from_text(text))
    assert not items
