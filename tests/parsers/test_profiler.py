"""Paddle profiler reports: real samples and the layouts and faults they do not show."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ingest.parsers import profiler
from ingest.text import DocText
from perfboard import db
from perfboard.model import Problem, ProfileEvent
from tests.conftest import ingest, sample_doc, text_doc


def _split(doc: DocText) -> tuple[list[ProfileEvent], list[Problem]]:
    items = list(profiler.parse(doc))
    events = [i for i in items if isinstance(i, ProfileEvent)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(events) + len(problems) == len(items)
    return events, problems


HEADER = (
    "Event                               Calls       Total       CPU Time (Ratio)        "
    "GPU Time (Ratio)        Min.        Max.        Ave.        Ratio."
)
MUL = (
    "thread0::mul                        370666      32332.5     12646.616698 (0.391142) "
    "19685.930916 (0.608858) 0.026226    95.3523     0.0872283   0.341415"
)
SOFTMAX = (
    "thread0::softmax                    60108       12311.9     4285.399399 (0.348069)  "
    "8026.520592 (0.651931)  0.18358     6.97239     0.20483     0.130007"
)


def test_contract() -> None:
    assert profiler.NAME == "profiler"
    assert all(isinstance(a, str) and a for a in profiler.ANCHORS)


# -- real documents -------------------------------------------------------------------


def test_fc_elementwise_layernorm_sample() -> None:
    doc = sample_doc("benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md")
    events, problems = _split(doc)
    assert [e.event for e in events] == [
        "fc",
        "fused_fc_elementwise_layernorm",
        "matmul",
        "transpose2",
        "softmax",
    ]
    fc = events[0]
    assert (fc.thread, fc.calls, fc.total) == ("thread0", 255459, 24269.7)
    assert (fc.cpu_time, fc.cpu_ratio) == (12361.669096, 0.509346)
    assert (fc.gpu_time, fc.gpu_ratio) == (11908.043273, 0.490654)
    assert (fc.min, fc.max, fc.ave, fc.ratio) == (0.039433, 100.758, 0.0950043, 0.346056)
    assert (fc.depth, fc.section, fc.place, fc.line) == (0, "event", "", 15)
    assert fc.raw.startswith("thread0::fc ") and fc.raw.endswith("0.346056")
    fused = events[1]
    assert (fused.calls, fused.total, fused.line) == (115207, 17699.9, 16)
    assert [e.line for e in events] == [15, 16, 17, 18, 19]
    (cut,) = problems
    assert (cut.line, cut.raw, cut.parser) == (20, "thread0::reshape", "profiler")
    assert cut.reason == "profiler row cut short: 1 of 9 fields"


def test_profile_report_sample_header_and_cut_row() -> None:
    events, problems = _split(sample_doc("benchmark-165_xreki_profile-report.md"))
    assert len(events) == 8
    assert {e.place for e in events} == {"All"}
    mul = events[0]
    assert (mul.event, mul.thread, mul.calls, mul.total, mul.line) == (
        "mul",
        "thread0",
        370666,
        32332.5,
        10,
    )
    assert (mul.cpu_time, mul.cpu_ratio, mul.gpu_time, mul.gpu_ratio) == (
        12646.616698,
        0.391142,
        19685.930916,
        0.608858,
    )
    reshape2 = events[-1]
    assert (reshape2.event, reshape2.gpu_time, reshape2.gpu_ratio) == ("reshape2", 0.013691, 7e-06)
    (cut,) = problems
    assert cut.line == 18
    assert cut.raw.startswith("thread0::scale") and cut.raw.endswith("6.40694")
    assert cut.reason == "profiler row cut short: 7 of 9 fields"


def test_quoted_profile_timeline_sample() -> None:
    events, problems = _split(
        sample_doc("benchmark-148_2019-08-01_wangchaochaohu_profile-timeline.md")
    )
    first = events[0]
    assert (first.event, first.thread, first.calls, first.total, first.line) == (
        "GpuMemcpyAsync:CPU->GPU",
        "",
        480,
        7787.05,
        4,
    )
    assert (first.min, first.max, first.ave, first.ratio) == (0.013041, 420.263, 16.223, 0.133052)
    assert events[1].event == "BufferedReader:MemoryCopy" and events[1].thread == ""
    by_name = {e.event: e for e in events}
    assert by_name["mul_grad"].calls == 1920
    assert by_name["mul_grad"].total == 5687.55
    assert len(events) == 7
    (cut,) = problems
    assert (cut.line, cut.reason) == (11, "profiler row cut short: 2 of 9 fields")
    assert cut.raw.split() == ["elementwise_add", "1480"]


def test_samples_without_a_report_yield_nothing() -> None:
    for name in (
        "opbench_speed_abs_paddle_gpu.log",
        "benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md",
        "README.md",
    ):
        assert list(profiler.parse(sample_doc(name))) == [], name


# -- layouts --------------------------------------------------------------------------

CPU_REPORT = """\
------------------------->     Profiling Report     <-------------------------

Place: CPU
Time unit: ms
Sorted by total time in descending order in the same thread

Event                       Calls       Total       Min.        Max.        Ave.        Ratio.
thread0::search_pyramid_hash  48000     1.10423e+06 0.511263    152.703     23.0048     0.604471
thread0::sequence_pool      96000       402713      0.013917    38.6093     4.19493     0.220453
thread0::lookup_table       48000       1531.2      0.012       0.9         0.0319      0.000838
"""


def test_cpu_only_layout() -> None:
    events, problems = _split(text_doc(CPU_REPORT))
    assert problems == []
    assert [e.event for e in events] == ["search_pyramid_hash", "sequence_pool", "lookup_table"]
    first = events[0]
    assert (first.calls, first.total, first.place, first.line) == (48000, 1104230.0, "CPU", 8)
    assert (first.min, first.max, first.ave, first.ratio) == (0.511263, 152.703, 23.0048, 0.604471)
    assert (first.cpu_time, first.cpu_ratio, first.gpu_time, first.gpu_ratio) == (
        None,
        None,
        None,
        None,
    )
    assert events[1].total == 402713.0


NEW_REPORT = """\
------------------------->     Profiling Report     <-------------------------

Place: All
Time unit: ms
Sorted by total time in descending order in the same thread

Total time: 598.03
  Computation time       Total: 450.1        Ratio: 75.2638%
  Framework overhead     Total: 147.93       Ratio: 24.7362%

-------------------------     GpuMemCpy Summary     -------------------------

GpuMemcpy                Calls: 6000       Total: 142.98       Ratio: 23.9085%
  GpuMemcpySync          Calls: 2000       Total: 50.29        Ratio: 8.40937%
  GpuMemcpyAsync         Calls: 4000       Total: 92.69        Ratio: 15.4991%

-------------------------       Event Summary       -------------------------

Event                            Calls       Total       CPU Time (Ratio)        GPU Time (Ratio)        Min.        Max.        Ave.        Ratio.
thread0::fused_embedding_eltwise_layernorm  1000  45.9  30.1 (0.655773)  15.8 (0.344227)  0.04  0.9  0.0459  0.0767
  thread0::fused_embedding_eltwise_layernorm/compute  1000  40.2  24.5 (0.609453)  15.7 (0.390547)  0.035  0.85  0.0402  0.0672
    GpuMemcpyAsync:CPU->GPU      2000        12.5        10.0 (0.8)              2.5 (0.2)               0.005       0.05        0.00625     0.0209
  GpuMemcpySync:GPU->CPU         1000        3.1         2.9 (0.935484)          0.2 (0.064516)          0.002       0.01        0.0031      0.0052
thread1::mul                     3000        30.5        12.2 (0.4)              18.3 (0.6)              0.008       0.1         0.0101667   0.051
"""  # noqa: E501


def test_newer_layout_memcpy_summary() -> None:
    events, problems = _split(text_doc(NEW_REPORT))
    assert problems == []
    memcpy = [e for e in events if e.section == "memcpy"]
    assert [(e.event, e.calls, e.total, e.depth, e.line) for e in memcpy] == [
        ("GpuMemcpy", 6000, 142.98, 0, 13),
        ("GpuMemcpySync", 2000, 50.29, 1, 14),
        ("GpuMemcpyAsync", 4000, 92.69, 1, 15),
    ]
    assert memcpy[0].ratio == pytest.approx(0.239085)
    assert memcpy[1].ratio == pytest.approx(0.0840937)
    assert {e.place for e in memcpy} == {"All"}
    # The overhead lines ("Computation time  Total: ...") are not memcpy rows.
    assert all(e.line > 10 for e in events)


def test_newer_layout_nested_event_summary() -> None:
    events, _ = _split(text_doc(NEW_REPORT))
    table = [e for e in events if e.section == "event"]
    assert [(e.event, e.thread, e.depth, e.line) for e in table] == [
        ("fused_embedding_eltwise_layernorm", "thread0", 0, 20),
        ("fused_embedding_eltwise_layernorm/compute", "thread0", 1, 21),
        ("GpuMemcpyAsync:CPU->GPU", "thread0", 2, 22),  # thread of its parent
        ("GpuMemcpySync:GPU->CPU", "thread0", 1, 23),
        ("mul", "thread1", 0, 24),
    ]
    memcpy = table[2]
    assert (memcpy.calls, memcpy.total, memcpy.cpu_time, memcpy.cpu_ratio) == (
        2000,
        12.5,
        10.0,
        0.8,
    )
    assert (memcpy.gpu_time, memcpy.gpu_ratio, memcpy.ratio) == (2.5, 0.2, 0.0209)
    assert {e.place for e in table} == {"All"}


def test_memcpy_row_cut_short() -> None:
    doc = text_doc(
        "GpuMemcpy                Calls: 6000       Total: 142.98       Ratio: 23.9085%\n"
        "  GpuMemcpySync          Calls: 2000       Total: 50.2"
    )
    events, problems = _split(doc)
    assert [(e.event, e.section, e.place) for e in events] == [("GpuMemcpy", "memcpy", "")]
    assert (problems[0].line, problems[0].reason) == (2, "GpuMemCpy row cut short")


def test_indent_step_comes_from_the_data() -> None:
    doc = text_doc(
        "Event  Calls  Total  Min.  Max.  Ave.  Ratio.\n"
        "    a  1  2.0  1.0  1.0  2.0  0.5\n"
        "        b  1  1.0  1.0  1.0  1.0  0.25\n"
        "            c  1  0.5  0.5  0.5  0.5  0.125\n"
        "    d  1  2.0  1.0  1.0  2.0  0.5\n"
    )
    events, _ = _split(doc)
    assert [(e.event, e.depth) for e in events] == [("a", 0), ("b", 1), ("c", 2), ("d", 0)]


def test_microsecond_report_is_converted_to_ms() -> None:
    doc = text_doc(
        "Place: All\nTime unit: us\n\n" + HEADER + "\n" + MUL + "\n",
    )
    (mul,) = _split(doc)[0]
    assert mul.total == pytest.approx(32.3325)
    assert mul.cpu_time == pytest.approx(12.646616698)
    assert mul.gpu_time == pytest.approx(19.685930916)
    assert (mul.min, mul.max, mul.ave) == pytest.approx((0.000026226, 0.0953523, 0.0000872283))
    # Ratios and counts have no unit.
    assert (mul.calls, mul.cpu_ratio, mul.ratio) == (370666, 0.391142, 0.341415)


def test_report_header_applies_to_its_own_table_only() -> None:
    doc = text_doc(
        "Place: CPU\nTime unit: s\n\n"
        "Event Calls Total Min. Max. Ave. Ratio.\n"
        "mul 10 2 0.1 0.3 0.2 1\n"
        "\n"
        "later, another table pasted without its header lines:\n"
        "Event Calls Total Min. Max. Ave. Ratio.\n"
        "mul 10 2 0.1 0.3 0.2 1\n"
    )
    first, second = _split(doc)[0]
    assert (first.total, first.place) == (2000.0, "CPU")
    assert (second.total, second.place) == (2.0, "")


def test_unknown_time_unit_is_a_problem_not_a_guess() -> None:
    doc = text_doc("Time unit: cycles\n" + HEADER + "\n" + MUL + "\n")
    events, problems = _split(doc)
    assert events == []
    assert [p.line for p in problems] == [2]
    assert "cycles" in problems[0].reason


# -- faults ---------------------------------------------------------------------------


def test_garbage_row_in_the_middle() -> None:
    doc = text_doc(
        "```\n" + HEADER + "\n" + MUL + "\n"
        "thread0::@@garbage ## ?? (pasted badly) ##\n" + SOFTMAX + "\n```\nafter the table\n"
    )
    events, problems = _split(doc)
    assert [(e.event, e.line) for e in events] == [("mul", 3), ("softmax", 5)]
    (garbage,) = problems
    assert (garbage.line, garbage.reason) == (4, "not a profiler row")


def test_bad_values_are_problems() -> None:
    rows = [
        "thread0::a  10  nan   1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::b  10  2.0   -1.0 (0.5) 3.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::c  10  2.0   1.0 (1.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::d  1.5 2.0   1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::e  10  2.0   1.0 0.5    1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::f  10  2.0   1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  inf",
        "thread0::g  10  2.0   1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1  0.7",
        "thread0::ok 10  2.0   1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
    ]
    events, problems = _split(text_doc(HEADER + "\n" + "\n".join(rows) + "\n"))
    assert [e.event for e in events] == ["ok"]
    assert [p.line for p in problems] == [2, 3, 4, 5, 6, 7, 8]
    assert "not a number" in problems[0].reason
    assert "negative" in problems[1].reason
    assert "ratio" in problems[2].reason
    assert "calls" in problems[3].reason
    assert "10 fields" in problems[4].reason  # "1.0 0.5" without parentheses is two fields
    assert "ratio" in problems[5].reason
    assert "10 fields" in problems[6].reason


def test_a_count_the_store_cannot_hold_is_a_problem_of_its_row(tmp_path) -> None:
    """Calls over 2^63 - 1 (BIGINT): once an OverflowError that failed the whole document
    as an internal error; now that row's problem, and the rest is stored."""
    rows = [
        "thread0::ok    10                    2.0  1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::huge  99999999999999999999  2.0  1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
        "thread0::edge  9223372036854774784   2.0  1.0 (0.5)  1.0 (0.5)  0.1  0.2  0.1  0.1",
    ]
    text = HEADER + "\n" + "\n".join(rows) + "\n"
    events, problems = _split(text_doc(text))
    assert [(e.event, e.calls) for e in events] == [("ok", 10), ("edge", 9223372036854774784)]
    (huge,) = problems
    assert huge.line == 3 and "2^63" in huge.reason
    path = tmp_path / "profile.log"
    path.write_text(text, encoding="utf-8")
    store = tmp_path / "store.duckdb"
    ingest("auto", str(path), "--db", str(store))
    conn = db.connect(store, read_only=True)
    stored = conn.execute("SELECT event, calls FROM profile_events ORDER BY line").fetchall()
    errors = conn.execute("SELECT line, reason FROM ingest_errors").fetchall()
    conn.close()
    assert stored == [("ok", 10), ("edge", 9223372036854774784)]
    assert [line for line, _ in errors] == [3] and "2^63" in errors[0][1]


def test_row_cut_inside_a_number() -> None:
    doc = text_doc(HEADER + "\n" + MUL + "\nthread0::softmax  60108  12311.9  4285.399399 (0.34")
    events, problems = _split(doc)
    assert [e.event for e in events] == ["mul"]
    assert (problems[0].line, problems[0].reason) == (3, "profiler row cut short: 4 of 9 fields")


def test_zero_total_has_undefined_ratios() -> None:
    row = "thread0::feed  2  0  0.000000 (nan)  0.000000 (-nan)  0  0  0  0"
    (feed,) = _split(text_doc(HEADER + "\n" + row + "\n"))[0]
    assert (feed.total, feed.cpu_time, feed.cpu_ratio, feed.gpu_ratio) == (0.0, 0.0, None, None)


def test_table_ends_at_prose_and_blank_line() -> None:
    doc = text_doc(
        HEADER + "\n" + MUL + "\nThe mul op takes 34% of the time\nthread0::x 1\n\n" + SOFTMAX
    )
    events, problems = _split(doc)
    assert [e.event for e in events] == ["mul"]
    assert problems == []


def test_unknown_header_is_a_problem() -> None:
    doc = text_doc("Event  Calls  Total  Median  Ratio.\nmul  10  2.0  0.2  1\n")
    events, problems = _split(doc)
    assert events == []
    assert problems[0].line == 1 and "header" in problems[0].reason


def test_text_without_a_report_yields_nothing() -> None:
    doc = text_doc(
        "Calls: the profiler counts Calls per op.\nEvent log follows\nPlace: home\n"
        "API Calls: 12\nEvent  Alloc Calls  Size(MB)  Free Calls  Size(MB)\n"
    )
    assert list(profiler.parse(doc)) == []


def test_large_text_without_the_format_is_cheap() -> None:
    noise = "I0911 06:41:55.494792  7238 operator.cc:100] Calls to mul, Event queue Total 3\n"
    doc = text_doc(noise * 100_000)  # ~8 MB
    start = time.perf_counter()
    assert list(profiler.parse(doc)) == []
    assert time.perf_counter() - start < 2.0


PROFILE_SAMPLES = (
    "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md",
    "benchmark-165_xreki_profile-report.md",
    "benchmark-148_2019-08-01_wangchaochaohu_profile-timeline.md",
)


@pytest.mark.parametrize("name", PROFILE_SAMPLES)
def test_column_reader_gives_what_the_row_reader_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of plain rows is read a column at a time (_plain_rows); the line-by-line
    reader must find the very same events, fields and problems in the real reports."""
    plain = profiler._plain_rows
    tables_read_by_column: list[object] = []

    def counted(*args: Any) -> Any:
        read = plain(*args)
        if read[0]:
            tables_read_by_column.append(read)
        return read

    monkeypatch.setattr(profiler, "_plain_rows", counted)
    fast = list(profiler.parse(sample_doc(name)))
    assert tables_read_by_column, "no table of the sample took the column reader"
    monkeypatch.setattr(profiler, "_plain_rows", lambda doc, pos, *args: ([], pos))
    careful = list(profiler.parse(sample_doc(name)))
    assert fast == careful
    assert any(isinstance(item, ProfileEvent) for item in fast)


@pytest.mark.parametrize(
    "unit, row, total",
    [
        ("us", "thread0::fc  10  1890  1.5 (0.5) 1.5 (0.5)  1  2  1.5  0.1", 1.89),
        ("s", "thread0::fc  10  0.25  0.125 (0.5) 0.125 (0.5)  0.1  0.2  0.15  0.1", 250.0),
        ("ms", "thread0::fc  10  1e999  1.5 (0.5) 1.5 (0.5)  1  2  1.5  0.1", None),
        ("ms", "thread0::fc  10.5  3  1.5 (0.5) 1.5 (0.5)  1  2  1.5  0.1", None),
        ("ms", "thread0::fc  10  3  1.5 (0.5) 1.5 (1.5)  1  2  1.5  0.1", None),
    ],
)
def test_column_reader_units_and_values_out_of_range(
    unit: str, row: str, total: float | None
) -> None:
    """Converted as the row reader converts (1890 us is 1.89 ms, not 1.8900000000000001);
    an infinite time, a fractional count or a ratio above 1 leave the table to the row
    reader, which makes them problems."""
    doc = text_doc(f"Place: All\nTime unit: {unit}\n\n{HEADER}\n{row}\n")
    events, problems = _split(doc)
    if total is None:
        assert events == [] and len(problems) == 1
    else:
        assert [e.total for e in events] == [total] and problems == []
