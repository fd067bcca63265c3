"""ingest.parsers.latency on the real tester logs and on inline variants."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from ingest.parsers import latency
from ingest.text import DocText
from perfboard.model import DocMeta, Measurement, Problem
from tests.conftest import sample_doc, text_doc

GLOG = "I0911 06:41:55.494792  7238 ernie_tester.cc:345] "
PLAIN = "Run 5010 samples, average latency: 6.92849 ms per sample."
EXCL = "Run 5009 samples, average latency [exclude 1 warmup steps]: 6.54723 ms per sample."


def measurements(items: list) -> list[Measurement]:
    return [i for i in items if isinstance(i, Measurement)]


def problems(items: list) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def parse_text(text: str, created_at: datetime | None = datetime(2019, 9, 11)) -> list:
    return list(latency.parse(text_doc(text, created_at=created_at)))


# -- real documents -------------------------------------------------------------------


def test_glog_lines_of_the_fc_elementwise_layernorm_comment() -> None:
    doc = sample_doc(
        "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md",
        created_at=datetime(2019, 9, 11),
    )
    items = list(latency.parse(doc))
    assert problems(items) == []
    plain, excl = measurements(items)

    assert plain.metric == "latency"
    assert plain.value == 6.92849
    assert plain.unit == "ms"
    assert plain.direction == "lower"
    assert plain.samples == 5010
    assert plain.warmup is None
    assert plain.stats == {"statistic": "average"}
    assert plain.benchmark == "ernie"
    assert plain.task == "inference"
    assert plain.measured_at == datetime(2019, 9, 11, 6, 41, 55, 494792)
    assert plain.line == 8
    assert plain.raw == GLOG + PLAIN

    assert excl.metric == "latency_excl_warmup"
    assert excl.value == 6.54723
    assert excl.samples == 5009
    assert excl.warmup == 1
    assert excl.stats == {"statistic": "average_excluding_warmup"}
    assert excl.benchmark == "ernie"
    assert excl.measured_at == datetime(2019, 9, 11, 6, 41, 55, 494873)
    assert excl.line == 9
    # Two statistics of one run: never one series.
    assert plain.series_key() != excl.series_key()


def test_bare_lines_of_the_qat_comment() -> None:
    doc = sample_doc(
        "paddle-21228_2019-11-19_sand3r-_qat-latency.md", created_at=datetime(2019, 11, 19)
    )
    items = list(latency.parse(doc))
    assert problems(items) == []
    got = [(m.line, m.metric, m.value, m.samples, m.warmup, m.benchmark) for m in items]
    assert got == [
        (4, "latency", 181.305, 100, None, ""),
        (5, "latency_excl_warmup", 181.006, 99, 1, ""),
        (9, "latency", 50.4984, 100, None, ""),
        (10, "latency_excl_warmup", 48.1151, 99, 1, ""),
    ]
    assert all(m.measured_at is None for m in items)


def test_samples_without_latency_lines_yield_nothing() -> None:
    # The analysis output says "average latency of 2 steps"; the QA table has
    # "average_latency(ms)": neither is a tester line, neither is a problem.
    for name in (
        "benchmark-222_2019-09-25_xreki_analysis-output.md",
        "benchmark-165_2020-02-04_xreki_qa-results.md",
    ):
        assert list(latency.parse(sample_doc(name, created_at=datetime(2020, 2, 4)))) == []


def test_anchor_is_in_every_form() -> None:
    for line in (
        PLAIN,
        EXCL,
        "====== batch_size: 1, repeat: 10, threads: 2, thread id: 0, latency: 945.82ms ======",
        "Average latency(ms): 22.1658, QPS: 45.1145",
    ):
        assert any(anchor in line for anchor in latency.ANCHORS)


# -- glog time ------------------------------------------------------------------------


def test_glog_time_without_document_date_is_kept_as_written() -> None:
    (m,) = parse_text(GLOG + PLAIN, created_at=None)
    assert m.measured_at is None
    assert m.stats == {"statistic": "average", "glog_time": "0911 06:41:55.494792"}
    assert m.benchmark == "ernie"


def test_glog_month_after_the_document_month_is_last_year() -> None:
    (m,) = parse_text("I1231 23:59:58.000001  1 bert_tester.cc:1] " + PLAIN, datetime(2020, 1, 5))
    assert m.measured_at == datetime(2019, 12, 31, 23, 59, 58, 1)
    assert m.benchmark == "bert"


def test_analyzer_tester_file_and_non_tester_file() -> None:
    a, b = parse_text(
        "I0911 06:41:55.494792  7 analyzer_ernie_tester.cc:3] " + PLAIN + "\n"
        "I0911 06:41:55.494792  7 inference_demo.cc:3] " + PLAIN
    )
    assert (a.benchmark, b.benchmark) == ("ernie", "")


def test_glog_stamp_that_is_no_date_keeps_the_value_with_a_warning() -> None:
    items = parse_text("I0231 06:41:55.494792  7238 ernie_tester.cc:345] " + PLAIN)
    (warning,) = problems(items)
    (m,) = measurements(items)
    assert warning.severity == "warning"
    assert warning.line == 1
    assert "0231" in warning.reason
    assert m.value == 6.92849
    assert m.measured_at is None
    assert m.stats["glog_time"] == "0231 06:41:55.494792"


# -- inline variants ------------------------------------------------------------------


def test_no_space_before_unit_and_other_time_units() -> None:
    items = parse_text(
        "Run 10 samples, average latency: 92.2313ms per sample.\n"
        "Run 10 samples, average latency: 6250us per sample.\n"
        "Run 10 samples, average latency: 1.5 s per sample.\n"
    )
    assert [(m.value, m.unit, m.line) for m in items] == [
        (92.2313, "ms", 1),
        (6.25, "ms", 2),
        (1500.0, "ms", 3),
    ]


def test_line_inside_backticks_in_prose() -> None:
    text = (
        "Some prose about latency first.\n"
        f"After the fuse we get `{GLOG}{EXCL}` which is fine, versus `{PLAIN}` before.\n"
    )
    items = parse_text(text)
    assert problems(items) == []
    excl, plain = items
    assert (excl.metric, excl.value, excl.warmup, excl.line) == (
        "latency_excl_warmup",
        6.54723,
        1,
        2,
    )
    assert excl.benchmark == "ernie"
    assert excl.measured_at == datetime(2019, 9, 11, 6, 41, 55, 494792)
    # The second record on the line has no glog prefix of its own.
    assert (plain.metric, plain.value, plain.benchmark, plain.line) == ("latency", 6.92849, "", 2)
    assert plain.measured_at is None


@pytest.mark.parametrize(
    "body",
    [
        PLAIN,
        EXCL,
        "Run 3 samples, average latency: 6250us per sample.",
        "Run 3 samples, average latency: 1890us per sample.",  # 1.89, not 1.8900000000000001
        "Run 3 samples, average latency: 1.89 s per sample.",
    ],
)
@pytest.mark.parametrize("created", [datetime(2019, 9, 11), None])
def test_fast_path_and_general_path_agree(body: str, created: datetime | None) -> None:
    (fast,) = parse_text(GLOG + body, created)
    (general,) = parse_text(f"`{GLOG}{body}`", created)  # backticks: not the fast form
    assert replace(general, raw=fast.raw) == fast


@pytest.mark.parametrize(
    "prefix",
    [
        "[2019-09-11 06:41:55] ",  # a Python logger's stamp
        "INFO:root:",
        "2024-01-03 02:30:00,944 - tester - INFO - ",
        "[ernie] " + GLOG,  # a glog stamp after the prefix: read by the general path
        "Run 5 samples, average latency: 3 ms per sample. ",  # two records on a line
    ],
)
@pytest.mark.parametrize(
    "body", [PLAIN, EXCL, "Run 3 samples, average latency: 1890us per sample."]
)
def test_a_tester_line_after_another_prefix_reads_as_the_general_path_reads_it(
    prefix: str, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = parse_text(prefix + body)
    monkeypatch.setattr(latency, "_FAST_PREFIXED", re.compile("(?!)"))
    assert fast == parse_text(prefix + body)
    assert fast[-1].value in (6.92849, 6.54723, 1.89)


def test_line_numbers_of_a_chunk_start_at_its_first_line() -> None:
    text = "noise\n" * 5 + PLAIN + "\nnoise\n" + EXCL + "\n"
    doc = DocText(text, DocMeta(uri="<chunk>"), first_line=1001)
    assert [m.line for m in latency.parse(doc)] == [1006, 1008]


def test_multi_thread_helper_line() -> None:
    line = (
        "I0911 06:41:55.494792  7238 tester_helper.h:345] ====== batch_size: 1, repeat: 10, "
        "threads: 2, thread id: 0, latency: 945.82ms, fps: 1.05728 ======"
    )
    other = line.replace("thread id: 0", "thread id: 1").replace("945.82ms", "950.1ms")
    first, second = parse_text(line + "\n" + other)
    assert first.metric == "latency"
    assert first.value == 945.82
    assert first.unit == "ms"
    assert first.params == {"batch_size": 1, "threads": 2}
    assert first.stats == {"thread_id": 0, "repeat": 10, "fps": 1.05728}
    assert first.line == 1
    assert (second.value, second.stats["thread_id"], second.line) == (950.1, 1, 2)
    assert first.series_key() == second.series_key()


# Paddle's PrintTime since 2019 (paddle/fluid/inference/tests/api/tester_helper.h): three
# LOG(INFO) lines a thread, the threads of one test side by side.
PRINT_TIME = (
    "I1125 10:00:00.000003  1234 tester_helper.h:380] ====== threads: 4, thread id: 2 ======\n"
    "I1125 10:00:00.000003  1235 tester_helper.h:380] ====== threads: 4, thread id: 3 ======\n"
    "I1125 10:00:00.000004  1234 tester_helper.h:382] ====== batch_size: 8, iterations: 5,"
    " repetitions: 10 ======\n"
    "I1125 10:00:00.000004  1235 tester_helper.h:382] ====== batch_size: 8, iterations: 5,"
    " repetitions: 10 ======\n"
    "I1125 10:00:00.000005  1234 tester_helper.h:384] ====== batch latency: 40.1ms, number of"
    " samples: 40, sample latency: 5.0125ms, fps: 199.5 ======\n"
    "I1125 10:00:00.000005  1235 tester_helper.h:384] ====== batch latency: 41.1ms, number of"
    " samples: 40, sample latency: 5.1375ms, fps: 194.6 ======\n"
)


def test_print_time_in_three_lines_takes_batch_size_and_threads_from_its_thread() -> None:
    """Read alone, the "batch latency" line gave every batch size one series."""
    first, second = parse_text(PRINT_TIME)
    assert (first.value, first.unit, first.line) == (5.0125, "ms", 5)
    assert first.params == {"batch_size": 8, "threads": 4}
    assert first.stats == {
        "thread_id": 2,
        "repetitions": 10,
        "iterations": 5,
        "fps": 199.5,
        "batch_latency": 40.1,
    }
    assert (second.value, second.stats["thread_id"], second.stats["batch_latency"]) == (
        5.1375,
        3,
        41.1,
    )
    other = parse_text(PRINT_TIME.replace("batch_size: 8", "batch_size: 1"))[0]
    assert other.params == {"batch_size": 1, "threads": 4}
    assert other.series_key() != first.series_key()


# PrintTime since 2021 (Paddle's tester_helper.h): "batch size" with a space, and the data
# type after the fps.
def _context_searched_from_the_start(text: str, line_start: int, line: str) -> dict[str, str]:
    """latency._helper_context as it was before it searched each line from its first
    "===" (the reference of the test below)."""
    thread = latency._GLOG_THREAD.match(line)
    found: dict[str, str] = {}
    seen: set[str] = set()
    for above in latency._lines_above(text, line_start, thread):
        if "=====" not in above:
            continue
        if thread is not None:
            other = latency._GLOG_THREAD.match(above)
            if other is None or other.group(1) != thread.group(1):
                continue
        if "atency" in above and latency._HELPER.search(above):
            break
        header = latency._HELPER_HEADER.search(above)
        if header is None:
            continue
        kind = "batch_size" if header.group("body").startswith("batch") else "threads"
        if kind not in seen:
            seen.add(kind)
            found = {**latency._header_fields(header.group("body")), **found}
            if len(seen) == 2:
                break
    return found


def test_a_helpers_context_is_the_same_searched_from_a_lines_first_rule() -> None:
    """PrintTime's header and record lines, their rules of three to seven "=", some
    with text or a shorter rule before them, glog-prefixed by two threads or bare: each
    record's context is what a search from each line's start finds."""
    rng = random.Random(11)

    def rule() -> str:
        return "=" * rng.randrange(3, 8)

    lines = []
    for _ in range(3000):
        body = rng.choice(
            [
                f"threads: {rng.randrange(1, 9)}, thread id: {rng.randrange(4)}",
                f"batch_size: {rng.randrange(1, 33)}, iterations: 5, repetitions: 10",
                f"batch size: {rng.randrange(1, 33)}, iterations: 5",
                "num of threads: 4",
                "batch latency: 40.1ms, number of samples: 40, sample latency: 5.0125ms",
                "latency: 3.2ms",
            ]
        )
        lead = rng.choice(["", "", "x ", "=== ", "== a ===== "])
        text = f"{lead}{rule()} {body} {rule() if rng.random() < 0.8 else ''}"
        if rng.random() < 0.7:
            tid = rng.choice(["1234", "1235"])
            text = f"I1125 10:00:00.000003  {tid} tester_helper.h:380] {text}"
        lines.append(text)
    text = "\n".join(lines) + "\n"
    checked = found = 0
    start = 0
    for line in lines:
        if "latency:" in line:
            context = latency._helper_context(text, start, line)
            assert context == _context_searched_from_the_start(text, start, line), line
            checked, found = checked + 1, found + bool(context)
        start += len(line) + 1
    assert checked > 500 and found > 300


PRINT_TIME_2021 = PRINT_TIME.replace("batch_size: 8", "batch size: 8").replace(
    "fps: 199.5 ======", "fps: 199.5, data type: float32 ======"
)


def test_print_time_as_paddle_prints_it_since_2021() -> None:
    first, second = parse_text(PRINT_TIME_2021)
    before, _ = parse_text(PRINT_TIME)  # the same record before 2021
    assert (first.value, first.line, first.stats) == (5.0125, 5, before.stats)
    assert first.params == {"batch_size": 8, "threads": 4, "data_type": "float32"}
    assert second.stats["thread_id"] == 3 and second.params["batch_size"] == 8


# A copy of PrintTime in some model repositories: "num of threads", a "batch size" line
# without its closing rule, and the latency over two lines.
PRINT_TIME_COPY = (
    "I0311 10:00:00.000001  4321 tester.cc:80] Model: /models/resnet50_int8\n"
    "I0311 10:00:00.000002  4321 tester.cc:81] ====== num of threads: 4 ======\n"
    "I0311 10:00:00.000003  4321 tester.cc:82] ====== batch size: 8, iterations: 100\n"
    "I0311 10:00:00.000004  4321 tester.cc:83] ====== batch latency: 40.1ms, number of"
    " samples: 800\n"
    "I0311 10:00:00.000005  4321 tester.cc:85] , sample latency: 5.0125ms, fps: 199.5 ======\n"
)


def test_print_time_of_the_model_repositories_copy_reads_its_latency_over_two_lines() -> None:
    (m,) = parse_text(PRINT_TIME_COPY)
    assert (m.metric, m.value, m.unit, m.line) == ("latency", 5.0125, "ms", 4)
    assert m.params == {"batch_size": 8, "threads": 4}
    assert m.stats == {"iterations": 100, "fps": 199.5, "batch_latency": 40.1}
    assert m.raw == "\n".join(PRINT_TIME_COPY.splitlines()[3:5])


def test_a_cut_batch_latency_line_with_no_sample_latency_under_it_is_a_problem() -> None:
    text = "\n".join(PRINT_TIME_COPY.splitlines()[:4]) + "\nsomething else\n"
    (p,) = parse_text(text)
    assert isinstance(p, Problem) and p.line == 4 and "no latency value" in p.reason


def test_print_time_of_sixteen_threads_side_by_side() -> None:
    """Each thread's header lines are 2 x 16 lines above its latency line at most."""
    glog = "I1125 10:00:00.000003  {tid} tester_helper.h:380] "
    lines = [
        glog.format(tid=7000 + k) + f"====== threads: 16, thread id: {k} ======" for k in range(16)
    ]
    lines += [
        glog.format(tid=7000 + k) + "====== batch_size: 4, iterations: 5, repetitions: 10 ======"
        for k in range(16)
    ]
    lines += [
        glog.format(tid=7000 + k)
        + f"====== batch latency: 40ms, number of samples: 20, sample latency: {10 + k}ms ======"
        for k in range(16)
    ]
    found = parse_text("\n".join(lines) + "\n")
    assert [(m.value, m.params, m.stats["thread_id"]) for m in found] == [
        (10.0 + k, {"batch_size": 4, "threads": 16}, k) for k in range(16)
    ]


@pytest.mark.parametrize("threads", [32, 33])
def test_print_time_headers_are_read_within_64_lines_of_their_thread(threads: int) -> None:
    """With 32 threads side by side a thread's "threads" line is 64 lines above its
    latency line, the farthest read; with 33 it is 66, and only its batch size is read."""
    glog = "I1125 10:00:00.000003  {tid} tester_helper.h:380] "
    lines = [
        glog.format(tid=7000 + k) + f"====== threads: {threads}, thread id: {k} ======"
        for k in range(threads)
    ]
    lines += [
        glog.format(tid=7000 + k) + "====== batch_size: 4, iterations: 5, repetitions: 10 ======"
        for k in range(threads)
    ]
    lines += [
        glog.format(tid=7000 + k)
        + f"====== batch latency: 40ms, number of samples: 20, sample latency: {10 + k}ms ======"
        for k in range(threads)
    ]
    found = parse_text("\n".join(lines) + "\n")
    assert [m.value for m in found] == [10.0 + k for k in range(threads)]
    if threads == 32:
        assert all(m.params == {"batch_size": 4, "threads": 32} for m in found)
        assert [m.stats["thread_id"] for m in found] == list(range(32))
    else:
        assert all(m.params == {"batch_size": 4} and "thread_id" not in m.stats for m in found)
    assert all(m.stats["iterations"] == 5 for m in found)


def test_print_time_passes_over_another_threads_line_that_names_its_thread() -> None:
    # Thread 1235's line between 1234's headers and its latency line holds " 1234 ".
    text = PRINT_TIME.replace(
        "I1125 10:00:00.000004  1235 tester_helper.h:382] ====== batch_size: 8,",
        "I1125 10:00:00.000004  1235 tester_helper.h:377] waiting for 1234 to end\n"
        "I1125 10:00:00.000004  1235 tester_helper.h:382] ====== batch_size: 8,",
    )
    first, second = parse_text(text)
    assert first.params == {"batch_size": 8, "threads": 4} and first.stats["thread_id"] == 2
    assert second.params == {"batch_size": 8, "threads": 4} and second.stats["thread_id"] == 3


def test_print_time_bare_lines_and_a_record_that_borrows_nothing_from_the_one_before() -> None:
    bare = "".join(line.split("] ", 1)[1] + "\n" for line in PRINT_TIME.splitlines()[::2])
    (m,) = parse_text(bare)
    assert (m.value, m.params, m.stats["thread_id"]) == (5.0125, {"batch_size": 8, "threads": 4}, 2)
    # A second "batch latency" line right below the first has no lines of its own.
    again = bare + "====== batch latency: 30ms, number of samples: 8, sample latency: 3.75ms ===\n"
    _, lone = parse_text(again)
    assert (lone.value, lone.params, lone.stats) == (3.75, {}, {"batch_latency": 30.0})


HELPER = "====== batch_size: 1, repeat: 10, threads: 2, thread id: 0, latency: 945.82ms"


@pytest.mark.parametrize(
    "text",
    [
        GLOG.replace("ernie_tester.cc", "tester_helper.h") + HELPER + ", fps: 1.05728 ======",
        HELPER + ", fps: 80 ======  ",
        HELPER + " ======",
        HELPER.replace("945.82ms", "945ms") + ", fps: 80. ======",
        HELPER.replace("945.82ms", "90000000ms") + " ======",  # absurd: a Problem either way
        PRINT_TIME,
        PRINT_TIME.replace(", fps: 199.5", "").replace("5.1375ms", "1e3ms"),
        PRINT_TIME.replace("40.1ms", "99999999ms"),  # an absurd batch latency is dropped
        "".join(line.split("] ", 1)[1] + "\n" for line in PRINT_TIME.splitlines()),
        PRINT_TIME_2021,
        HELPER + ", fps: 80, data type: int8 ======",
    ],
)
def test_helper_fast_path_and_general_path_agree(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PrintTime's lines in their own form are read by one match (_fast_helper); the same
    text through _HELPER and _key_values gives the same records."""
    fast = parse_text(text)
    monkeypatch.setattr(latency, "_FAST_HELPER", re.compile("(?!)"))
    general = parse_text(text)
    assert fast == general
    assert fast


@pytest.mark.parametrize(
    "summary",
    [
        "Average latency(ms): 22.1658, QPS: 45.1145",
        "Average latency(ms): 22., QPS: 45 ",
        "Average latency(ms): 22.1658, QPS: 45.",  # cut: a Problem either way
        "Average latency(ms): 90000000, QPS: 0.01",  # absurd
    ],
)
def test_demo_fast_path_and_general_path_agree(
    summary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "Model name: ernie, Batch size: 1, device: cpu, thread num: 2\n" + summary + "\n"
    fast = parse_text(text)
    monkeypatch.setattr(latency, "_FAST_DEMO", re.compile("(?!)"))
    assert fast == parse_text(text)
    assert fast


ERNIE = ("ernie", "CPU", {"batch_size": 1, "threads": 2})


@pytest.mark.parametrize(
    ("above", "want"),
    [
        ("x\n" * 19, ERNIE),  # the model line 20 lines above the summary
        ("x\n" * 20, ("", "", {})),
        ("x\n" * 3 + ("y" * 3000 + "\n") * 3, ERNIE),  # 9 KB above, 7 lines
        (("y" * 3000 + "\n") * 21, ("", "", {})),
        # the nearest, 5 KB above
        ("Model name: bert, Batch size: 4\n" + "y" * 5000 + "\n", ("bert", "", {"batch_size": 4})),
    ],
)
def test_demo_summary_finds_its_model_line_within_twenty_lines(above: str, want: tuple) -> None:
    model = "Model name: ernie, Batch size: 1, device: cpu, thread num: 2\n"
    text = "intro\n" + model + above + "Average latency(ms): 22.1658, QPS: 45.1145\n"
    lat, qps = parse_text(text)
    assert (lat.benchmark, lat.device, lat.params) == want
    assert (qps.benchmark, qps.device, qps.params) == want
    assert lat.params is not qps.params


def test_helper_line_cut_in_its_latency_is_a_problem() -> None:
    (p,) = parse_text("====== batch_size: 1, repeat: 10, threads: 2, thread id: 0, latency: 945.")
    assert isinstance(p, Problem)
    assert p.line == 1
    assert p.parser == "latency"
    assert "cut" in p.reason


def test_helper_line_cut_after_its_latency_keeps_the_value() -> None:
    (m,) = parse_text("====== batch_size: 1, threads: 2, thread id: 0, latency: 945.82ms, fps: 1.0")
    assert m.value == 945.82
    assert "fps" not in m.stats  # possibly cut: dropped


def test_demo_summary_with_model_line_above() -> None:
    text = (
        "Model name: ernie, Batch size: 1, device: cpu, thread num: 2\n"
        "load model ...\n"
        "Average latency(ms): 22.1658, QPS: 45.1145\n"
    )
    lat, qps = parse_text(text)
    assert (lat.metric, lat.value, lat.unit, lat.direction) == ("latency", 22.1658, "ms", "lower")
    assert (qps.metric, qps.value, qps.unit) == ("throughput", 45.1145, "samples/s")
    assert qps.direction == "higher"
    for m in (lat, qps):
        assert m.benchmark == "ernie"
        assert m.device == "CPU"
        assert m.params == {"batch_size": 1, "threads": 2}
        assert m.line == 3


def test_demo_summary_ignores_a_model_line_too_far_above() -> None:
    text = "Model name: ernie, Batch size: 1, device: cpu, thread num: 2\n" + "x\n" * 25
    lat, _ = parse_text(text + "Average latency(ms): 22.1658, QPS: 45.1145")
    assert (lat.benchmark, lat.device, lat.params, lat.line) == ("", "", {}, 27)


# The reports the demos' benchmark scripts print above their summary (README there).
DEMO_REPORTS = Path(__file__).resolve().parent.parent / "fixtures" / "demo_reports"


def demo_report(name: str) -> list:
    return parse_text((DEMO_REPORTS / name).read_text(encoding="utf-8"))


def test_a_cpp_demo_report_gives_its_settings_to_the_summary() -> None:
    (lat,) = demo_report("cpp-inference-demo_trt-fp16.log")
    assert (lat.benchmark, lat.metric, lat.value, lat.unit) == (
        "fcn_hrnetw18_small_v1", "latency", 18.4721, "ms"
    )  # fmt: skip
    assert lat.device == "GPU"
    assert lat.params == {
        "batch_size": 1,
        "ir_optim": True,
        "enable_tensorrt": True,
        "precision": "fp16",
    }
    assert (lat.samples, lat.line) == (100, 12)


def test_a_python_demo_report_through_logging() -> None:
    found = measurements(demo_report("python-benchmark_trt-fp32-int8.log"))
    lat, qps = found[2:]  # the INT8 run, after the FP32 one
    want = {"batch_size": 8, "enable_tensorrt": True, "enable_xla": False, "precision": "int8"}
    for m in (lat, qps):
        assert (m.benchmark, m.device, m.params, m.line) == ("resnet50", "GPU", want, 22)
    assert (lat.value, lat.samples) == (4.0561, 1000)
    assert (qps.metric, qps.value, qps.unit, qps.samples) == (
        "throughput",
        1972.34,
        "samples/s",
        None,
    )


def test_the_report_form_reads_the_qps_on_the_line_under_the_latency() -> None:
    lat, qps = demo_report("tensorflow-report.log")
    want = ("mobilenet", "GPU", {"batch_size": 1, "threads": 2})
    assert (lat.benchmark, lat.device, lat.params) == want
    assert (qps.benchmark, qps.device, qps.params) == want
    assert (lat.value, lat.samples, lat.line) == (2.4877548217773438, 10, 7)
    assert (qps.value, qps.line, qps.raw) == (401.9690212431476, 8, "QPS: 401.9690212431476")


def test_real_demo_logs_read_as_their_authors_printed_them() -> None:
    """Two logs pasted in PaddlePaddle/continuous_integration (README there): a C++ CPU
    report, and a TensorRT FP16 one followed by the Python monitor's logging lines."""
    cpu = measurements(demo_report("continuous-integration-pr55_cpp-cpu-mkldnn.log"))
    want = {"batch_size": 1, "threads": 1, "enable_mkldnn": True, "ir_optim": True}
    assert [(m.metric, m.value, m.line) for m in cpu] == [
        ("latency", 22.1658, 10),
        ("throughput", 45.1145, 10),
    ]
    for m in cpu:  # threads: cpu_math_library_num_threads, printed after "thread num"
        assert (m.benchmark, m.device, m.params) == ("mobilenetv1", "CPU", want)
    assert cpu[0].samples == 10
    trt = measurements(demo_report("continuous-integration-benchmark-readme_cpp-trt-fp16.log"))
    want = {"batch_size": 4, "enable_tensorrt": True, "ir_optim": True, "precision": "fp16"}
    assert [(m.metric, m.value, m.line) for m in trt] == [
        ("latency", 0.960231, 11),
        ("throughput", 4165.66, 11),
    ]
    for m in trt:
        assert (m.benchmark, m.device, m.params) == ("AlexNet", "GPU", want)
    assert trt[0].samples == 1000


def _reports(text: str) -> list[str]:
    """Each report of a log as _demo_context hands it over: its "Model name" on."""
    starts = [m.start() for m in re.finditer("Model name", text)]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


@pytest.mark.parametrize(
    ("prefix", "dropped"),
    [
        ("I0311 10:02:17.338230 41250 main.cc:121] ", True),
        ("W1125 10:00:00  7 paddle/fluid/inference/api/analysis_predictor.cc:1 ] ", False),
        ("I0311 10:02:17.338230 41250 x.device:121] ", False),  # an extension that is a key
        ("I0311 10:02:17.338230 41250 batch_size:121] ", False),  # a file that is a key
        ("2021-03-11 10:02:17,338 - __main__ - INFO - ", True),
        ("2021-03-11 10:02:17,338 - device - WARNING - ", True),
        ("2021-03-11 10:02:17,338 - device: cpu - INFO - ", False),  # a name with a setting
    ],
)
def test_a_reports_log_prefixes_are_left_out_only_where_they_name_no_setting(
    prefix: str, dropped: bool
) -> None:
    """_demo_report reads a report without its lines' log prefixes (so a sweep's reports
    are read once each): it must say what the whole text says, whatever the prefix."""
    texts = [
        (DEMO_REPORTS / name).read_text(encoding="utf-8")
        for name in sorted(p.name for p in DEMO_REPORTS.glob("*.log"))
    ]
    bare = [re.sub(r"(?m)^(?:[IWEF]\d{4} .*?\] |\d{4}-.*? - INFO - )", "", t) for t in texts]
    reports = [r for text in bare for r in _reports(text)]
    assert len(reports) == 6
    for report in reports:
        first, *rest = report.split("\n")
        prefixed = "\n".join([first, *(prefix + line for line in rest)])
        assert latency._demo_report(prefixed) == latency._report_settings(prefixed)
        left_out = latency._REPORT_PREFIX.sub("", prefixed) == report
        assert left_out == dropped
        if dropped:  # glog's and logging's own: the report reads as it would bare
            assert latency._demo_report(prefixed) == latency._report_settings(report)


def test_fp32_and_int8_runs_of_one_log_are_two_series() -> None:
    found = measurements(demo_report("python-benchmark_trt-fp32-int8.log"))
    latencies = [(m.params["precision"], m.value) for m in found if m.metric == "latency"]
    assert latencies == [("fp32", 9.8712), ("int8", 4.0561)]
    assert len({m.series_key() for m in found}) == 4


@pytest.mark.parametrize(
    ("below", "want"),
    [
        ("QPS: 45.", "cut"),  # a Problem of the QPS line, the latency kept
        ("QPS: 45 (peak)", None),  # not the summary's QPS: nothing more read
        ("QPS: 45.1, P99 latency: 30 ms", None),
    ],
)
def test_a_qps_line_under_a_summary_is_read_only_when_it_ends_with_its_value(
    below: str, want: str | None
) -> None:
    items = parse_text("Model name: ernie\nAverage latency(ms): 22.1658\n" + below + "\n")
    (lat,) = measurements(items)
    assert (lat.value, lat.line) == (22.1658, 2)
    if want is None:
        assert not problems(items)
    else:
        (p,) = problems(items)
        assert (p.line, p.raw) == (3, below) and want in p.reason


def test_a_gpu_start_up_line_under_the_model_line_does_not_change_its_device() -> None:
    text = (
        "Model name: ernie, Batch size: 1, device: GPU, thread num: 1\n"
        "W1125 10:00:00.000001  1234 gpu_resources.cc:61] Please NOTE: device: 0, GPU"
        " Compute Capability: 7.0, Driver API Version: 11.2, Runtime API Version: 10.2\n"
        "Average latency(ms): 22.1658, QPS: 45.1145\n"
    )
    lat, qps = parse_text(text)
    assert (lat.device, lat.params) == ("GPU", {"batch_size": 1, "threads": 1})
    assert qps.device == "GPU"


def test_a_report_setting_the_demo_does_not_print_as_a_setting_is_left_out() -> None:
    text = (
        "Model name: bert, cuda_device: 3, precision: None, enable_mkldnn: maybe\n"
        "Average latency(ms): 22.1658, QPS: 45.1145\n"
    )
    lat, _ = parse_text(text)
    assert (lat.device, lat.params) == ("", {})


def test_demo_summary_cut_in_qps_keeps_the_latency() -> None:
    items = parse_text("Average latency(ms): 22.1658, QPS: 45.")
    (m,) = measurements(items)
    (p,) = problems(items)
    assert m.value == 22.1658
    assert "QPS" in p.reason


# -- malformed ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Run 5010 samples, average latency: nan ms per sample.", "not a number"),
        ("Run 5010 samples, average latency: inf ms per sample.", "not a number"),
        ("Run 5010 samples, average latency: -6.9 ms per sample.", "negative"),
        ("Run 5010 samples, average latency: 1e12 ms per sample.", "absurd"),
        ("Run 5010 samples, average latency: 90000000 ms per sample.", "absurd"),
        ("Run 5010 samples, average latency: 6.92849 parsecs per sample.", "unknown unit"),
        ("Run 5010 samples, average latency: 6.928", "no unit"),
        ("Run 5010 samples, average latency: 6.", "cut"),
        ("Run 5010 samples, average latency: ", "no latency value"),
        ("Average latency(ms): nan, QPS: 45.1145", "not a number"),
        ("====== batch_size: 1, thread id: 0, latency: nanms, fps: 1.0 ======", "not a number"),
    ],
)
def test_bad_values_are_problems_and_the_rest_is_still_read(line: str, reason: str) -> None:
    items = parse_text(f"intro\n{line}\n{GLOG}{PLAIN}\n")
    bad, good = items
    assert isinstance(bad, Problem)
    assert bad.line == 2
    assert reason in bad.reason
    assert bad.raw == line
    assert bad.parser == "latency"
    assert isinstance(good, Measurement)
    assert (good.value, good.line) == (6.92849, 3)


def test_prose_about_latency_is_not_a_problem() -> None:
    text = (
        "We want lower latency.\n"
        "The average latency is high because of fc.\n"
        "average latency of 2 steps, skip 0 step:\n"
        "| batch_size | average_latency(ms) |\n"
    )
    assert parse_text(text) == []


def test_empty_and_odd_documents_never_raise() -> None:
    for text in (
        "",
        "latency",
        "\n\nlatency\n",
        "Run samples, average latency: ms",
        "====latency:",
    ):
        for item in parse_text(text):
            assert isinstance(item, Problem | Measurement)


def test_every_cut_of_a_sample_reads_without_raising() -> None:
    text = sample_doc("paddle-21228_2019-11-19_sand3r-_qat-latency.md").text
    for cut in range(0, len(text), 3):
        items = parse_text(text[:cut])
        assert all(m.value is not None and m.value > 0 for m in measurements(items))
        assert [i.line for i in items] == sorted(i.line for i in items)


def test_sample_cut_inside_a_value_is_a_problem() -> None:
    text = sample_doc("paddle-21228_2019-11-19_sand3r-_qat-latency.md").text
    cut = text[: text.index("50.4984") + 3]  # "...average latency: 50."
    items = parse_text(cut)
    assert [m.value for m in measurements(items)] == [181.305, 181.006]
    (p,) = problems(items)
    assert (p.line, p.raw) == (9, "Run 100 samples, average latency: 50.")
