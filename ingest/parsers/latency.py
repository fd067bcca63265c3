"""Tester latency lines (docs/formats.md section 1), glog-prefixed or bare, anywhere in a line.

Three forms are read:

- the tester summary ``Run 5010 samples, average latency: 6.92849 ms per sample.``, with
  an optional glog prefix (``I0911 06:41:55.494792  7238 ernie_tester.cc:345] ``);
- the multi-thread helper ``====== batch_size: 1, repeat: 10, threads: 2, thread id: 0,
  latency: 945.82ms, fps: 1.05728 ======``, and the three lines Paddle's PrintTime prints
  since 2019 (tester_helper.h): ``====== threads: 4, thread id: 2 ======``, ``======
  batch_size: 8, iterations: 5, repetitions: 10 ======`` and ``====== batch latency:
  40.1ms, number of samples: 40, sample latency: 5.0125ms, fps: 199.5 ======`` (since 2021
  ``batch size: 8`` with a space, and ``, data type: float32`` after the fps: a param);
- the inference demo summary ``Average latency(ms): 22.1658, QPS: 45.1145`` (or its QPS
  alone on the next line) under the report its benchmark scripts print above it: a
  ``Model name: ...`` line, then the other lines of its "Model info", "Data info" and
  "Conf info" sections, glog- or logging-prefixed or bare. Paddle's C++ demos
  (``LOG(INFO) << "Batch size: " << ...``), PaddleTest's Python ones and their TensorFlow
  and PyTorch counterparts print ``Model name: resnet50``, ``Batch size: 1, Num of
  samples: 1000``, ``device: gpu, ir_optim: true``, ``enable_tensorrt: true``,
  ``precision: fp16``, ``cpu_math_library_num_threads: 4`` (or ``Thread num: 2``), each on
  its own line; older copies put them on the model's line (``Model name: ernie, Batch
  size: 1, device: GPU, thread num: 1``).

Decisions:

- The plain average and the average that excludes warmup steps are two statistics of one
  run and must never share a series: the plain line gives metric ``"latency"`` (stats
  ``{"statistic": "average"}``), the ``[exclude N warmup steps]`` line gives metric
  ``"latency_excl_warmup"`` (stats ``{"statistic": "average_excluding_warmup"}``,
  ``warmup`` N). A metric name, not a param, because a plot picks series by metric first.
- The three-line helper's value is its sample latency (its batch latency goes to stats);
  its batch size, threads, thread id, iterations and repetitions come from the two lines
  above it, the nearest of each within HELPER_CONTEXT_LINES lines that no other latency
  line of the helper comes between, and of the same glog thread when the lines are
  glog-prefixed (threads log side by side). Without them the series of every batch size
  would be one.
- Times are normalised to ms; the demo's QPS becomes metric ``"throughput"`` in samples/s
  (direction higher).
- A demo's report, from its model's line down to the summary (within DEMO_CONTEXT_LINES
  lines; the first of each setting), gives the device and the params that tell one
  configuration from another (batch_size, threads, precision, enable_tensorrt,
  enable_mkldnn, enable_xla, ir_optim: the names ingest.parsers.autolog gives the same
  settings, threads as the demo's "thread num" always was) and the latency's samples
  ("Num of samples"). Without them an FP16 run and an FP32 one, or every batch size of a
  sweep, would be one series.
- The glog prefix has no year: it comes from ``doc.meta.created_at``, one year earlier when
  the glog month is after the document's month (a January comment quoting a December log).
  glog prints local time of an unknown zone, so ``measured_at`` is naive. Without a
  document date ``measured_at`` is None and ``stats["glog_time"]`` keeps the stamp as
  written ("0911 06:41:55.494792").
- The benchmark comes from a tester file name (``ernie_tester.cc`` and
  ``analyzer_ernie_tester.cc`` -> "ernie") or the demo's "Model name"; otherwise it is ""
  and ingest.runs fills it from the document's context.
- A recognised line whose value cannot be read (cut mid-number, no unit, NaN, negative,
  more than a day) becomes a Problem; prose that merely mentions latency yields nothing.

Speed: a tester log can be gigabytes of glog noise with one latency line per few KB. The
anchor gate's hyperscan pass already found every "atency" (every form contains it) and
hands the positions over in ``doc.hits``; without them, one ``re.finditer`` on the literal
does the same. Only lines holding a hit are examined, and their numbers come from
``doc.line_at``. Noise lines cost no Python work at all. A well-formed tester line (nearly
every hit of a big log) is read by one ``fullmatch`` and built directly (``_fast_record``);
every other line goes through the general, tolerant path. A chunk dense in tester lines or
demo summaries reads them as arrays (``_bulk``, ``_bulk_demo``: ingest.columns).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ingest import columns
from ingest.columns import MeasurementBlock
from ingest.parsers import cells
from ingest.parsers.cells import NUMBER
from ingest.text import DocText, LineIndex
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import ABSURD_MS, Quantity, UnitError, normalise

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "latency"
ANCHORS: tuple[str, ...] = ("atency",)

# How far above a demo summary its "Model name: ..." line may be.
DEMO_CONTEXT_LINES = 20
# How far above a helper's "batch latency" line its "threads" and "batch_size" lines may be:
# N threads printing their three lines side by side put them up to 2N lines above.
HELPER_CONTEXT_LINES = 64

_ANCHOR = re.compile(r"atency[^\n]*")

_NUM = NUMBER

_TESTER = re.compile(
    r"Run\s+(?P<samples>\d+)\s+samples?,\s*average\s+latency"
    r"(?:\s*\[\s*exclude\s+(?P<warmup>\d+)\s+warmup\s+steps?\s*\])?"
    rf"\s*:\s*(?P<num>{_NUM})?[ \t]*(?P<unit>[A-Za-zµμ]+)?"
)
_GLOG = re.compile(
    r"(?<![A-Za-z0-9])[IWEF](?P<month>\d\d)(?P<day>\d\d)[ \t]+"
    r"(?P<hms>\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))?[ \t]+\d+[ \t]+"
    r"(?P<file>[^\s:\]]+):\d+\]"
)
_HELPER = re.compile(r"={3,}(?P<body>[^=]*?latency\s*:[^=]*?)(?P<close>={3,}|$)")
# The lines PrintTime prints above its "batch latency" line (see _helper_context).
# Paddle spells the second "batch_size" until 2021 and "batch size" since. A copy of
# PrintTime in some model repositories prints "====== num of threads: 4 ======" and
# "====== batch size: 8, iterations: 100" (no closing rule), then its latency over two
# lines: "====== batch latency: 40.1ms, number of samples: 800" and ", sample latency:
# 5.0125ms, fps: 199.5 ======" (_HELPER_BELOW).
_HELPER_HEADER = re.compile(
    r"={3,}\s*(?P<body>(?:threads|num of threads|batch[ _]size)\s*:[^=]*)(?:={3,})?\s*$"
)
_HELPER_BELOW = re.compile(r"(?:[IWEF]\d{4} [^\n\]]*\] )?(, sample latency:[^\n]*)")
# A glog prefix's thread id: "I1125 10:00:00.000003  1234 tester_helper.h:380] ".
_GLOG_THREAD = re.compile(r"[IWEF]\d{4} +\d\d:\d\d:\d\d(?:\.\d+)? +(\d+) ")
_DEMO = re.compile(
    r"[Aa]verage latency\s*\(\s*(?P<unit>[A-Za-zµμ]+)\s*\)\s*:\s*(?P<num>" + _NUM + r")?"
    r"(?P<qps>\s*,\s*QPS\s*:\s*(?P<qnum>" + _NUM + r")?)?"
)
# The tester line exactly as Paddle's testers print it, glog-prefixed or bare, alone on its
# line: the fast path of parse(). Its unit factors are perfboard.units' for these units.
_FAST = re.compile(
    r"(?:[IWEF](\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d{6}) +\d+ ([\w.]+):\d+\] )?"
    r"Run (\d+) samples, average latency(?: \[exclude (\d+) warmup steps\])?: "
    r"(\d+\.?\d*) ?(ms|us|s) per sample\.[ \t]*"
)
_FAST_FACTORS = {"ms": 1.0, "s": 1e3}  # "us": divided (_fast_record)
# A tester line after a prefix of another kind, alone on its line (_prefixed_record).
_FAST_PREFIXED = re.compile(
    r"([^\n]*?)Run (\d+) samples, average latency(?: \[exclude (\d+) warmup steps\])?: "
    r"(\d+\.?\d*) ?(ms|us|s) per sample\.[ \t]*"
)
# The helper's latency lines exactly as PrintTime prints them (the one-line form, and the
# last of the three-line form), glog-prefixed or bare, alone on their line: read with one
# match (_fast_helper) where _HELPER, _key_values and _VALUE took most of 60 us a line.
_FAST_HELPER = re.compile(
    r"(?:[IWEF]\d{4} +\d\d:\d\d:\d\d(?:\.\d+)? +\d+ [^\s\]]+\] )?====== "
    r"(?:batch_size: (\d+), repeat: (\d+), threads: (\d+), thread id: (\d+), latency: (\d+\.?\d*)ms"
    r"|batch latency: (\d+\.?\d*)ms, number of samples: \d+, sample latency: (\d+\.?\d*)ms)"
    r"(?:, fps: (\d+\.?\d*))?(?:, data type: (\w+))? ======[ \t]*"
)
# The demo summary as the demo prints it, alone on its line (_fast_demo).
_FAST_DEMO = re.compile(r"Average latency\(ms\): (\d+\.?\d*), QPS: (\d+\.?\d*)[ \t]*")
_VALUE = re.compile(rf"\s*(?P<num>{_NUM})\s*(?P<unit>[A-Za-zµμ/]+)?\s*")
_KEY_VALUE = re.compile(r"(?P<key>[A-Za-z][A-Za-z_ ]*?)\s*:\s*(?P<value>[^,]*)")


def parse(doc: DocText) -> Iterator[Item | MeasurementBlock]:
    """Measurements and Problems of every latency line in the document, in order.

    A chunk of a dense log (BULK_MIN hit lines or more, its newline index at hand) gives
    its well-formed tester lines (_bulk), demo summaries (_bulk_demo) and PrintTime
    records (_bulk_helper) as one MeasurementBlock and reads the others line by line; a
    block's rows are exactly the Measurements the line path would build.
    """
    positions = doc.hits.get(NAME) if doc.hits is not None else None
    if positions is not None and len(positions) >= BULK_MIN and isinstance(doc.line_at, LineIndex):
        block, spans = _bulk(doc, positions)
        demo, spans = _bulk_demo(doc, spans) if len(spans) >= BULK_MIN else (None, spans)
        helper, spans = _bulk_helper(doc, spans) if len(spans) >= BULK_MIN else (None, spans)
        merged = _merged(_merged(block, demo), helper)
        if merged is not None:
            yield merged
    else:
        spans = list(_hit_lines(doc))
    yield from _read_spans(doc, spans)


def _read_spans(doc: DocText, spans: list[tuple[int, int]]) -> Iterator[Item]:
    """The records of hit lines (start, end), line by line."""
    text = doc.text
    created = doc.meta.created_at
    fast, fast_prefixed = _FAST.fullmatch, _FAST_PREFIXED.fullmatch
    fast_helper, fast_demo = _FAST_HELPER.fullmatch, _FAST_DEMO.fullmatch
    numbers = doc.lines_at([start for start, _ in spans])  # one lookup for all of them
    for (start, end), number in zip(spans, numbers, strict=True):
        # Nearly every hit in a big log is a well-formed tester (or helper) line: read it
        # with one match and no nested generators; anything else takes the general path.
        # A line without "Run " is no tester line: its two patterns are not tried (the
        # prefixed one's lazy prefix tries every position of a PrintTime line).
        tester = text.find("Run ", start, end) >= 0
        m = fast(text, start, end) if tester else None
        if m is not None:
            item = _fast_record(m, text[start:end], number, created)
            if item is not None:
                yield item
                continue
        elif tester and (m := fast_prefixed(text, start, end)) is not None:
            item = _prefixed_record(m, text[start:end], number, created)
            if item is not None:
                yield item
                continue
        elif (m := fast_helper(text, start, end)) is not None:
            item = _fast_helper(m, text, start, end, number)
            if item is not None:
                yield item
                continue
        elif (m := fast_demo(text, start, end)) is not None:
            items = _fast_demo(m, text, start, end, number)
            if items is not None:
                yield from items
                continue
        yield from _read_line(doc, start, end, number)


def _hit_lines(doc: DocText) -> Iterator[tuple[int, int]]:
    """(start, end) of each line holding the anchor, once per line.

    The anchor gate may already know where the anchor occurs (doc.hits): then no scan of
    our own is needed. Otherwise one finditer on the literal; each hit runs to its line
    end, so a line holding "latency" twice is read once.
    """
    text = doc.text
    positions = doc.hits.get(NAME) if doc.hits is not None else None
    if positions is None:
        for hit in _ANCHOR.finditer(text):
            yield text.rfind("\n", 0, hit.start()) + 1, hit.end()
        return
    line_end = -1
    for pos in positions:
        if pos < line_end:
            continue  # a second anchor on a line already read
        line_end = text.find("\n", pos)
        if line_end < 0:
            line_end = len(text)
        yield text.rfind("\n", 0, pos) + 1, line_end


def _fast_record(
    m: re.Match[str], line: str, number: int, created: datetime | None
) -> Measurement | None:
    """A Measurement from a well-formed tester line, or None to let the general path decide.

    Gives exactly what _tester_record gives for the same line (tests compare the two).
    """
    return _tester_fields(*m.groups(), line, number, created)


def _prefixed_record(
    m: re.Match[str], line: str, number: int, created: datetime | None
) -> Measurement | None:
    """_fast_record of a tester line after another prefix (a Python logger's, a CI's): one
    record alone on its line, no glog prefix before it (then _tester_record takes none)."""
    prefix, samples, warmup, num, unit = m.groups()
    if "atency" in prefix or _GLOG.search(line, 0, len(prefix)) is not None:
        return None  # another record, or a glog stamp to read: the general path's
    return _tester_fields(None, None, None, None, samples, warmup, num, unit, line, number, created)


def _tester_fields(
    month: str | None,
    day: str | None,
    clock: str | None,
    source: str | None,
    samples: str,
    warmup: str | None,
    num: str,
    unit: str,
    line: str,
    number: int,
    created: datetime | None,
) -> Measurement | None:
    # Microseconds are divided, as perfboard.units converts them: 1890 us is 1.89 ms, where
    # 1890 * 0.001 is 1.8900000000000001.
    value = float(num) / 1000 if unit == "us" else float(num) * _FAST_FACTORS[unit]
    if value > ABSURD_MS:
        return None
    measured_at = None
    benchmark = ""
    if warmup is None:
        metric, stats = "latency", {"statistic": "average"}
    else:
        metric, stats = "latency_excl_warmup", {"statistic": "average_excluding_warmup"}
    if month is not None:
        benchmark = _cached_benchmark(source)
        if created is None:
            stats["glog_time"] = f"{month}{day} {clock}"
        else:
            year = created.year - 1 if int(month) > created.month else created.year
            try:
                # One C call instead of seven int() conversions: this runs per hit.
                measured_at = datetime.fromisoformat(f"{year}-{month}-{day}T{clock}")
            except ValueError:
                return None
    return Measurement(
        benchmark=benchmark,
        metric=metric,
        value=value,
        unit="ms",
        measured_at=measured_at,
        samples=int(samples),
        warmup=None if warmup is None else int(warmup),
        stats=stats,
        line=number,
        raw=line,
    )


# -- a dense log's tester lines in bulk -----------------------------------------------

# From this many hit lines in a chunk the bulk path pays (a few array passes over the
# chunk). A 4 MiB chunk of a sparse tester log, parsed and packed, fastest of 21: with 43
# tester lines 2.0 ms line by line, 3.0 in bulk; with 257, 3.6 and 3.4; with 346, 4.4
# and 3.5 (the chunk's bytes as read, not encoded again: DocText.ascii_bytes).
BULK_MIN = 256
# _FAST for RE2 (pyarrow.compute): the same language over ASCII lines, anchored at both ends.
_FAST_RE2 = (
    r"^(?:[IWEF]\d\d\d\d \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] )?"
    r"Run \d+ samples, average latency(?: \[exclude \d+ warmup steps\])?: "
    r"\d+\.?\d* ?(?:ms|us|s) per sample\.[ \t]*$"
)
_SAMPLES_TAIL = len(" samples, average latency")
_EXCLUDE = len(" [exclude ")
_STATS = {
    False: ('{"statistic":"average"}', '","statistic":"average"}'),
    True: (
        '{"statistic":"average_excluding_warmup"}',
        '","statistic":"average_excluding_warmup"}',
    ),
}


def _bulk(
    doc: DocText, positions: list[int]
) -> tuple[MeasurementBlock | None, list[tuple[int, int]]]:
    """The well-formed tester lines among the hit lines, as one block; the spans of the
    others (read line by line).

    What _FAST.fullmatch and _fast_record decide per line is decided here per array: the
    line shape by RE2; the fields by byte offsets (the shape fixes where each one starts
    and ends); a value over ABSURD_MS, a stamp that is no date, a count too long for int64
    send the line to the line path, as _fast_record's None does.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(doc.line_at, LineIndex)
    data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
    size = len(data)
    buf = np.frombuffer(data, np.uint8)
    newlines = doc.line_at.positions
    row = newlines.searchsorted(np.asarray(positions, np.int64))  # sorted: the hits are
    row = row[np.concatenate(([True], row[1:] != row[:-1]))]  # a line with two hits, once
    before = np.concatenate(([-1], newlines))
    starts = before[row] + 1
    ends = np.append(newlines, size)[row]
    lines = columns.spans(data, starts, ends)
    ok = pc.match_substring_regex(lines, _FAST_RE2).to_numpy(zero_copy_only=False)

    # The fields are found in the well-formed lines alone, laid end to end: the passes
    # below over every space, colon, "]" and "p" then cover those lines' bytes, not the
    # chunk's (a test session's chunk: one line in 50 is a tester line, and the passes
    # over its 4 MiB took 10 of the 14 ms its tester lines cost). Each search starts
    # inside a line whose shape RE2 has checked, and finds what that shape puts there.
    well_formed = lines.filter(pa.array(ok))
    data = well_formed.buffers()[2].to_pybytes() if len(well_formed) else b""
    first_row = well_formed.offset  # 0 for a new array; a view's rows start further on
    offsets = np.frombuffer(well_formed.buffers()[1], np.int64)
    bounds = offsets[first_row : first_row + len(well_formed) + 1]
    size = len(data)
    buf = np.frombuffer(data, np.uint8)
    s = bounds[:-1]
    prefixed = buf[s] != ord("R")
    spaces = np.flatnonzero(buf == ord(" "))
    colons = np.flatnonzero(buf == ord(":"))
    # The glog prefix: a colon after the clock ends the file name, "] " after it the prefix.
    file_end = columns.next_at(colons, s + 21, size)
    file_start = spaces[np.maximum(spaces.searchsorted(file_end) - 1, 0)] + 1
    brackets = np.flatnonzero(buf == ord("]"))
    run_at = np.where(prefixed, columns.next_at(brackets, file_end, size) + 2, s)
    samples_end = columns.next_at(spaces, run_at + 4, size)
    excl = buf[samples_end + _SAMPLES_TAIL] == ord(" ")
    warmup_end = columns.next_at(spaces, samples_end + _SAMPLES_TAIL + _EXCLUDE, size)
    value_start = columns.next_at(colons, samples_end + _SAMPLES_TAIL, size) + 2
    # Nothing between the value and " per sample." holds a "p".
    unit_end = columns.next_at(np.flatnonzero(buf == ord("p")), value_start, size) - 1
    second = buf[unit_end - 2]
    unit_start = unit_end - np.where((second == ord("m")) | (second == ord("u")), 2, 1)
    value_end = unit_start - (buf[unit_start - 1] == ord(" "))

    micro = buf[unit_start] == ord("u")
    factor = np.where(buf[unit_start] == ord("m"), 1.0, 1e3)
    try:
        number = pc.cast(columns.spans(data, value_start, value_end), pa.float64())
    except pa.ArrowInvalid:  # a spelling Arrow does not take: the line path reads them all
        return None, list(zip(starts.tolist(), ends.tolist(), strict=True))
    number = number.to_numpy()
    value = np.where(micro, number / 1000, number * factor)  # divided, as in _fast_record
    good = value <= ABSURD_MS
    samples_start = run_at + 4
    good &= samples_end - samples_start <= 18
    warmup_start = samples_end + _SAMPLES_TAIL + _EXCLUDE
    good &= ~excl | (warmup_end - warmup_start <= 18)

    created = doc.meta.created_at
    month, day = columns.digits(buf, s + 1, 2), columns.digits(buf, s + 3, 2)
    at = None
    if created is not None:
        year = created.year - (month > created.month)
        first_day = ((year - 1970) * 12 + np.clip(month, 1, 12) - 1).astype("datetime64[M]")
        days = (first_day + 1).astype("datetime64[D]") - first_day.astype("datetime64[D]")
        hour, minute = columns.digits(buf, s + 6, 2), columns.digits(buf, s + 9, 2)
        second_, micro = columns.digits(buf, s + 12, 2), columns.digits(buf, s + 15, 6)
        real = (month >= 1) & (month <= 12) & (day >= 1) & (day <= days.astype(np.int64))
        real &= (hour <= 23) & (minute <= 59) & (second_ <= 59)
        good &= ~prefixed | real
        at = (
            first_day.astype("datetime64[D]").astype("datetime64[us]")
            + (day - 1) * 86_400_000_000
            + ((hour * 60 + minute) * 60 + second_) * 1_000_000
            + micro
        )

    keep = np.flatnonzero(ok)[good]
    rest = np.ones(len(row), bool)
    rest[keep] = False
    others = list(zip(starts[rest].tolist(), ends[rest].tolist(), strict=True))
    if not len(keep):
        return None, others

    def kept(values: np.ndarray) -> np.ndarray:
        return values[good]

    prefixed, excl, s = kept(prefixed), kept(excl), kept(s)
    samples = pc.cast(columns.spans(data, kept(samples_start), kept(samples_end)), pa.int64())
    # Rows without a warmup count read their samples count here, and are nulled after.
    warm_from = np.where(excl, kept(warmup_start), kept(samples_start))
    warm_to = np.where(excl, kept(warmup_end), kept(samples_end))
    warmup = pc.cast(columns.spans(data, warm_from, warm_to), pa.int64())
    excluding = pa.array(excl)
    warmup = pc.if_else(excluding, warmup, pa.scalar(None, pa.int64()))
    # The benchmark of each tester file, worked out once per distinct file name.
    files = columns.spans(
        data, np.where(prefixed, kept(file_start), s), np.where(prefixed, kept(file_end), s)
    )
    names = files.dictionary_encode()
    benchmarks = pa.array(
        [_cached_benchmark(name) if name else "" for name in names.dictionary.to_pylist()],
        pa.large_string(),
    ).take(names.indices)

    def either(excluding_warmup: str, plain: str) -> pa.Array:
        return pc.if_else(
            excluding,
            pa.scalar(excluding_warmup, pa.large_string()),
            pa.scalar(plain, pa.large_string()),
        )

    metric = either("latency_excl_warmup", "latency")
    statistic = either("average_excluding_warmup", "average")
    plain = either(_STATS[True][0], _STATS[False][0])
    if created is None:
        stamped = pc.binary_join_element_wise(
            pa.scalar('{"glog_time":"', pa.large_string()),
            columns.spans(data, s + 1, s + 21),
            either(_STATS[True][1], _STATS[False][1]),
            pa.scalar("", pa.large_string()),
        )
        stats = pc.if_else(pa.array(prefixed), stamped, plain)
        measured_at = pa.nulls(len(keep), pa.timestamp("us"))
    else:
        assert at is not None
        measured_at = pa.array(kept(at), pa.timestamp("us"))
        measured_at = pc.if_else(
            pa.array(prefixed), measured_at, pa.scalar(None, pa.timestamp("us"))
        )
        stats = plain
    table = pa.table(
        [
            pa.array(row[keep] + doc.first_line),
            lines.take(pa.array(keep)),
            pa.array(value[good]),
            samples,
            warmup,
            measured_at,
            benchmarks,
            metric,
            statistic,
            stats,
        ],
        schema=columns.BLOCK_SCHEMA,
    )
    return MeasurementBlock(
        table, Measurement(benchmark="", metric="", value=None, unit="ms")
    ), others


# _FAST_DEMO for RE2, its fields named (pyarrow.compute.extract_regex).
_FAST_DEMO_RE2 = r"^Average latency\(ms\): (?P<ms>\d+\.?\d*), QPS: (?P<qps>\d+\.?\d*)[ \t]*$"
_MODEL_NAME = b"Model name"


def _bulk_demo(
    doc: DocText, spans: list[tuple[int, int]]
) -> tuple[MeasurementBlock | None, list[tuple[int, int]]]:
    """The demo summaries in the demo's own form among hit lines, as one block (two rows a
    summary: its latency and its throughput, each under the settings of its report); the
    spans of the others.

    What _fast_demo decides per line is decided here per array (the shape by RE2, the
    values cast by Arrow; an absurd latency or a cut QPS goes to the line path). Where its
    report starts, _demo_context's rule over arrays: the last "Model name" before the
    summary, in its 4 KiB above and at most DEMO_CONTEXT_LINES line ends up. A summary
    whose model line is further up than 4 KiB but fewer lines (lines of kilobytes) goes
    to the line path, which walks them. Each distinct report is read once (_demo_report).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(doc.line_at, LineIndex)
    text = doc.text
    data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
    every = np.asarray(spans, np.int64).reshape(-1, 2)
    starts, ends = every[:, 0], every[:, 1]
    lines = columns.spans(data, starts, ends)
    found = pc.extract_regex(lines, _FAST_DEMO_RE2)
    ok = found.is_valid().to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(ok)
    if not len(rows):
        return None, spans
    well_formed = found.filter(pa.array(ok))
    qps_text = pc.struct_field(well_formed, [1])
    try:
        ms = pc.cast(pc.struct_field(well_formed, [0]), pa.float64()).to_numpy()
        qps = pc.cast(qps_text, pa.float64()).to_numpy()
    except pa.ArrowInvalid:  # a spelling Arrow does not take: the line path reads them all
        return None, spans
    cut = pc.ends_with(qps_text, ".").to_numpy(zero_copy_only=False)
    good = (ms <= ABSURD_MS) & ~cut  # else a Problem: _fast_demo's None

    # Where each summary's report starts: its "Model name" (the last before it).
    line_start = starts[rows]
    buf = np.frombuffer(data, np.uint8)
    models = columns.occurrences(buf, _MODEL_NAME)
    newlines = doc.line_at.positions
    before = np.searchsorted(models, line_start) - 1
    model = models[np.maximum(before, 0)] if len(models) else np.zeros(len(rows), np.int64)
    near = np.maximum(line_start - _DEMO_NEAR_BYTES, 0)
    has = (before >= 0) & (model >= near)

    def ends_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # newlines in [a, b)
        return np.searchsorted(newlines, b) - np.searchsorted(newlines, a)

    within = has & (ends_between(model, line_start) <= DEMO_CONTEXT_LINES)
    walked = ~has & (near > 0) & (ends_between(near, line_start) <= DEMO_CONTEXT_LINES)
    good &= ~walked
    keep = rows[good]
    rest = np.ones(len(starts), bool)
    rest[keep] = False
    others = list(zip(starts[rest].tolist(), ends[rest].tolist(), strict=True))
    if not len(keep):
        return None, spans

    # One variant a distinct context (benchmark apart): its latency's template, then its
    # throughput's. Reports are read once each.
    contexts: dict[tuple[str, tuple[tuple[str, ParamValue], ...]], int] = {}
    benchmarks: list[str] = []
    samples: list[int | None] = []
    kinds = np.empty(len(keep), np.int32)
    none: tuple[str, str, tuple[tuple[str, ParamValue], ...], int | None] = ("", "", (), None)
    for index, (start, at, known) in enumerate(
        zip(line_start[good].tolist(), model[good].tolist(), within[good].tolist(), strict=True)
    ):
        benchmark, device, params, count = _demo_report(text[at:start]) if known else none
        kinds[index] = contexts.setdefault((device, params), len(contexts))
        benchmarks.append(benchmark)
        samples.append(count)
    variants = []
    for device, params in contexts:
        for metric, unit, direction in (
            ("latency", "ms", "lower"),
            ("throughput", "samples/s", "higher"),
        ):
            variants.append(
                Measurement(
                    "", metric, None, unit, direction=direction, device=device, params=dict(params)
                )
            )

    n = len(keep)
    both = np.repeat(np.arange(n), 2)  # a summary's latency row, then its throughput row
    latency_row = np.tile([True, False], n)
    value = np.empty(2 * n)
    value[0::2], value[1::2] = ms[good], qps[good]  # samples/s are QPS times 1
    sample_counts = pa.array(samples, pa.int64()).take(pa.array(both))
    no_samples = pa.scalar(None, pa.int64())

    def alternate(latency: str | None, throughput: str | None) -> pa.Array:
        return pc.if_else(
            pa.array(latency_row),
            pa.scalar(latency, pa.large_string()),
            pa.scalar(throughput, pa.large_string()),
        )

    table = pa.table(
        [
            pa.array((np.searchsorted(newlines, line_start[good]) + doc.first_line)[both]),
            lines.take(pa.array(keep[both])),
            pa.array(value),
            pc.if_else(pa.array(latency_row), sample_counts, no_samples),
            pa.nulls(2 * n, pa.int64()),
            pa.nulls(2 * n, pa.timestamp("us")),
            pa.array(benchmarks, pa.large_string()).take(pa.array(both)),
            alternate("latency", "throughput"),
            alternate("average", ""),
            alternate(_STATS[False][0], None),
        ],
        schema=columns.BLOCK_SCHEMA,
    )
    variant = (2 * kinds)[both] + ~latency_row
    block = MeasurementBlock(
        table, variants[0], variants=variants, variant=variant.astype(np.int32)
    )
    return block, others


# -- PrintTime's records in bulk -----------------------------------------------------

# A glog prefix as _GLOG_THREAD reads it, for RE2 over ASCII text: its thread id; then
# ("file" not empty) the whole of what comes before a PrintTime line's first rule, as
# _FAST_HELPER takes it: a file name without white space (Python's \s: RE2's lacks \v and
# \x1c-\x1f) or "]", and without "=" (the line's first "=====" is then its own rule,
# where the line path looks for a header).
_GLOG_THREAD_RE2 = r"^[IWEF]\d{4} +\d\d:\d\d:\d\d(?:\.\d+)? +(?P<thread>\d+) "
_GLOG_PREFIX_RE2 = _GLOG_THREAD_RE2 + r"(?P<file>[^\t\n\x0b\x0c\r\x1c-\x1f \]=]+\] $)?"
# PrintTime's three lines from their first rule, as Paddle's tester_helper.h prints them:
# a threads header, a batch header, and a record as _FAST_HELPER reads it.
_THREADS_RE2 = r"^====== threads: \d+, thread id: \d+ ======[ \t]*$"
_BATCH_RE2 = r"^====== batch[_ ]size: \d+, iterations: \d+, repetitions: \d+ ======[ \t]*$"
_RECORD_RE2 = (
    r"^====== batch latency: \d+\.?\d*ms, number of samples: \d+, sample latency: \d+\.?\d*ms"
    r"(?:, fps: \d+\.?\d*)?(?:, data type: \w+)? ======[ \t]*$"
)
_RULE = 5  # "=" in a row: what a line must hold for _helper_context to look at it
_RECORD_WORDS = "====== batch latency: "  # what every record _RECORD_RE2 takes holds
_OTHER, _THREADS, _BATCH, _RECORD = range(4)
_LONGEST_INT = 18  # digits: any such count fits in int64


def _bulk_helper(
    doc: DocText, spans: list[tuple[int, int]]
) -> tuple[MeasurementBlock | None, list[tuple[int, int]]]:
    """PrintTime's records among hit lines (its "batch latency" line, under its threads
    and batch headers), as one block; the spans of the others.

    What _fast_helper and _helper_context decide per record is decided here per array.
    Every line holding "=====" after a glog prefix is what the context walk of a record of
    its thread may look at: RE2 tells its kind, and the shape of each kind where its
    fields are. Within a thread, the lines before each record give the nearest threads
    header, batch header and record, and the nearest line of another kind. A record goes
    into the block when its walk would find both headers (within HELPER_CONTEXT_LINES
    lines, before the thread's previous record) and pass no line of another kind on the
    way; any other (a header missing, an unusual line on the way, an absurd value, a
    number Arrow does not take) goes to the line path.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    assert isinstance(doc.line_at, LineIndex)
    data = doc.ascii_bytes()  # an indexed chunk is ASCII (ingest.documents)
    if _RECORD_WORDS not in doc.text:  # no record: one search, where the rules cost 7 ms
        return None, spans
    newlines = doc.line_at.positions
    # Every line holding a rule: where it starts, where its first rule is, where it ends.
    rules = _rules(np.frombuffer(data, np.uint8))
    if not len(rules):
        return None, spans
    line_of = newlines.searchsorted(rules)
    first = np.flatnonzero(np.concatenate(([True], line_of[1:] != line_of[:-1])))
    rows, rule = line_of[first], rules[first]
    line_starts, line_ends = columns.line_bounds(newlines, len(data))
    starts, ends = line_starts[rows], line_ends[rows]
    heads, bodies = columns.spans(data, starts, rule), columns.spans(data, rule, ends)
    glog = pc.extract_regex(heads, _GLOG_PREFIX_RE2)
    prefixed = _true(pc.not_equal(pc.struct_field(glog, [1]), ""))
    kind = np.full(len(rows), _OTHER, np.int8)
    for of, shape in ((_THREADS, _THREADS_RE2), (_BATCH, _BATCH_RE2), (_RECORD, _RECORD_RE2)):
        kind[prefixed & _true(pc.match_substring_regex(bodies, shape))] = of
    record = kind == _RECORD
    if not record.any():
        return None, spans
    try:
        fields = _HelperFields(data, bodies, rule, kind)
    except pa.ArrowInvalid:  # a spelling Arrow does not take: the line path reads them all
        return None, spans

    # Within each glog thread, in line order: the last line of each kind before a line.
    in_glog = np.flatnonzero(glog.is_valid().to_numpy(zero_copy_only=False))
    thread = pc.struct_field(glog.take(pa.array(in_glog)), [0]).dictionary_encode().indices
    group = thread.to_numpy()
    order = np.lexsort((rows[in_glog], group))
    line, group = in_glog[order], group[order]  # an index into the lines above, in order
    n = len(line)
    at = np.arange(n)
    begins = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    group_start = np.repeat(begins, np.diff(np.append(begins, n)))
    sorted_kind = kind[line]

    def last_before(of: int) -> np.ndarray:  # a line index, -1 where none
        inclusive = np.maximum.accumulate(np.where(sorted_kind == of, at, -1))
        before = np.concatenate(([-1], inclusive[:-1]))
        return np.where(before >= group_start, line[np.maximum(before, 0)], -1)

    threads, batches = last_before(_THREADS), last_before(_BATCH)
    records, others = last_before(_RECORD), last_before(_OTHER)
    # Line indices grow with lines: the farther header is the smaller of the two.
    farther = np.minimum(threads, batches)
    ok = (sorted_kind == _RECORD) & (farther >= 0) & (farther > records) & (others < farther)
    ok &= rows[line] - rows[np.maximum(farther, 0)] <= HELPER_CONTEXT_LINES
    # Every such record is a hit line the other bulk readers left (checked all the same).
    hit = np.fromiter((start for start, _ in spans), np.int64, len(spans))
    where = np.minimum(hit.searchsorted(starts[line]), max(len(hit) - 1, 0))
    ok &= (hit[where] == starts[line]) if len(hit) else False
    ok &= fields.usable[line] & fields.usable[np.maximum(threads, 0)]
    ok &= fields.usable[np.maximum(batches, 0)]
    keep = np.flatnonzero(ok)
    if not len(keep):
        return None, spans
    kept, header, batch = line[keep], threads[keep], batches[keep]
    kept_order = np.argsort(kept, kind="stable")  # the block's rows in line order
    kept, header, batch = kept[kept_order], header[kept_order], batch[kept_order]
    taken = set(starts[kept].tolist())
    rest = [span for span in spans if span[0] not in taken]

    text = fields.text
    tid = text("thread_id", header)
    stats = pc.binary_join_element_wise(
        _literal('{"batch_latency":'),
        _float_json(fields.values["batch"][kept]),
        fields.fps_json(kept),
        _literal(',"iterations":'),
        _int_json(text("iterations", batch)),
        _literal(',"repetitions":'),
        _int_json(text("repetitions", batch)),
        _literal(',"thread_id":'),
        _int_json(tid),
        _literal("}"),
        _literal(""),
    )
    # One template a distinct batch size, threads and data type, its params as
    # _fast_helper writes them (_number of each).
    settings = pc.binary_join_element_wise(
        text("batch_size", batch),
        text("threads", header),
        text("data_type", kept),
        _literal("\x1f"),
    ).dictionary_encode()
    variants = []
    for setting in settings.dictionary.to_pylist():
        batch_size, thread_count, data_type = setting.split("\x1f")
        params: dict[str, ParamValue] = {
            "batch_size": _number(batch_size),
            "threads": _number(thread_count),
        }
        if data_type:
            params["data_type"] = _number(data_type)
        variants.append(Measurement("", "latency", None, "ms", params=params))
    k = len(kept)
    table = pa.table(
        [
            pa.array(rows[kept] + doc.first_line),
            columns.spans(data, starts[kept], ends[kept]),
            pa.array(fields.values["sample"][kept]),
            pa.nulls(k, pa.int64()),
            pa.nulls(k, pa.int64()),
            pa.nulls(k, pa.timestamp("us")),
            pa.repeat(_literal(""), k),
            pa.repeat(_literal("latency"), k),
            pa.repeat(_literal(""), k),
            stats,
        ],
        schema=columns.BLOCK_SCHEMA,
    )
    block = MeasurementBlock(
        table,
        variants[0],
        variants=variants,
        variant=settings.indices.to_numpy().astype(np.int32),
        thread=pc.cast(tid, pa.int64()).to_numpy(),
    )
    return block, rest


class _HelperFields:
    """The fields of the PrintTime lines of a chunk (their shape checked by RE2): where
    each is in the chunk's bytes, found from each line's first rule; the values of its
    records; whether each line can be read in bulk."""

    def __init__(
        self, data: bytes | memoryview, bodies: pa.Array, rule: np.ndarray, kind: np.ndarray
    ):
        import pyarrow as pa
        import pyarrow.compute as pc

        self.data = data
        n = len(kind)
        # [start, end) of each field in each line; where a line has none, an empty span at
        # its rule (the spans of lines in line order are then in order: columns.spans).
        self.spans = {name: (rule.copy(), rule.copy()) for name in _FIELDS}

        def finder(of: np.ndarray) -> Callable[[str], np.ndarray]:
            """Where a text is in each line of `of` (offsets in data; -1: not there)."""
            own, base = bodies.filter(pa.array(of)), rule[of]

            def find(literal: str) -> np.ndarray:
                where = pc.find_substring(own, literal).to_numpy()
                return np.where(where >= 0, base + where, -1)

            return find

        def put(name: str, of: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
            starts, ends = self.spans[name]
            starts[of], ends[of] = start, end

        # Each field runs from the end of the text before it to the text after it.
        for of, head, parts in (
            (kind == _THREADS, "====== threads: ", _THREADS_PARTS),
            (kind == _BATCH, "====== batch_size: ", _BATCH_PARTS),
        ):
            find, start = finder(of), rule[of] + len(head)
            for name, after in parts:
                end = find(after)
                put(name, of, start, end)
                start = end + len(after)
        of = kind == _RECORD
        find = finder(of)
        put("batch", of, rule[of] + len("====== batch latency: "), find("ms, number of samples: "))
        sample = find(", sample latency: ") + len(", sample latency: ")
        fps, data_type, close = find(", fps: "), find(", data type: "), find(" ======")
        after_fps = np.where(data_type >= 0, data_type, close)
        put("sample", of, sample, np.where(fps >= 0, fps, after_fps) - len("ms"))
        given, here = fps >= 0, rule[of]
        put(
            "fps", of, np.where(given, fps + len(", fps: "), here), np.where(given, after_fps, here)
        )
        given = data_type >= 0
        start = np.where(given, data_type + len(", data type: "), here)
        put("data_type", of, start, np.where(given, close, here))

        # The counts fit in int64; the values are numbers (NaN on other lines) no larger
        # than ABSURD_MS, as _fast_helper takes them.
        self.usable = np.ones(n, bool)
        for name in ("threads", "thread_id", "batch_size", "iterations", "repetitions"):
            starts, ends = self.spans[name]
            self.usable &= ends - starts <= _LONGEST_INT
        records = np.flatnonzero(of)
        self.values = {name: np.full(n, np.nan) for name in ("batch", "sample", "fps")}
        for name in ("batch", "sample"):
            self.values[name][records] = self._floats(name, records)
            self.usable &= ~of | (self.values[name] <= ABSURD_MS)
        # An fps written whole is an int (_number), else a float.
        fps = self.text("fps", records)
        self.fps_given, self.fps_whole = np.zeros(n, bool), np.zeros(n, bool)
        self.fps_given[records] = _true(pc.not_equal(fps, ""))
        self.fps_whole[records] = self.fps_given[records] & ~_true(pc.match_substring(fps, "."))
        starts, ends = self.spans["fps"]
        self.usable &= ~self.fps_whole | (ends - starts <= _LONGEST_INT)
        fraction = np.flatnonzero(self.fps_given & ~self.fps_whole)
        self.values["fps"][fraction] = self._floats("fps", fraction)

    def _floats(self, name: str, lines: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.cast(self.text(name, lines), pa.float64()).to_numpy(zero_copy_only=False)

    def text(self, name: str, lines: np.ndarray) -> pa.Array:
        """The field of these lines as strings ("" where a line has none), in their order."""
        import pyarrow as pa

        starts, ends = self.spans[name]
        if len(lines) < 2 or (np.diff(lines) > 0).all():
            return columns.spans(self.data, starts[lines], ends[lines])
        each, back = np.unique(lines, return_inverse=True)  # in line order, once each
        return columns.spans(self.data, starts[each], ends[each]).take(pa.array(back))

    def fps_json(self, lines: np.ndarray) -> pa.Array:
        """',"fps":' and the fps as canonical_json writes _number's value (an int when
        written whole), or "" where a record has none."""
        import pyarrow as pa

        written = np.full(len(lines), "", object)
        whole, given = self.fps_whole[lines], self.fps_given[lines]
        fraction = given & ~whole
        if whole.any():
            texts = _int_json(self.text("fps", lines[whole])).to_pylist()
            written[whole] = [',"fps":' + t for t in texts]
        if fraction.any():
            texts = _float_json(self.values["fps"][lines[fraction]]).to_pylist()
            written[fraction] = [',"fps":' + t for t in texts]
        return pa.array(written, pa.large_string())


_FIELDS = (
    "threads",
    "thread_id",
    "batch_size",
    "iterations",
    "repetitions",
    "batch",
    "sample",
    "fps",
    "data_type",
)
# A header's fields in order, each with the text that follows it.
_THREADS_PARTS = (("threads", ", thread id: "), ("thread_id", " ======"))
_BATCH_PARTS = (
    ("batch_size", ", iterations: "),
    ("iterations", ", repetitions: "),
    ("repetitions", " ======"),
)


def _true(values: pa.Array) -> np.ndarray:
    """A boolean array as numpy, null as False."""
    import pyarrow.compute as pc

    return pc.fill_null(values, False).to_numpy(zero_copy_only=False)


def _literal(text: str) -> pa.Scalar:
    import pyarrow as pa

    return pa.scalar(text, pa.large_string())


def _int_json(values: pa.Array) -> pa.Array:
    """Counts as canonical_json writes them: int(text), written back."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pc.cast(values, pa.int64()), pa.large_string())


def _float_json(values: np.ndarray) -> pa.Array:
    """Floats as canonical_json writes them: orjson's own text of each."""
    import orjson
    import pyarrow as pa

    written = orjson.dumps(values.tolist())[1:-1].split(b",") if len(values) else []
    return pa.array(written, pa.binary()).cast(pa.large_string())


def _rules(buf: np.ndarray) -> np.ndarray:
    """Where each run of _RULE or more "=" starts in `buf`, in order."""
    equal = buf == ord("=")
    if len(equal) < _RULE:
        return np.zeros(0, np.int64)
    run = equal[: len(equal) - _RULE + 1].copy()
    for offset in range(1, _RULE):
        run &= equal[offset : len(equal) - _RULE + 1 + offset]
    return np.flatnonzero(run & np.concatenate(([True], ~run[:-1])))


def _merged(a: MeasurementBlock | None, b: MeasurementBlock | None) -> MeasurementBlock | None:
    """One block of two (the parser gives a chunk one block), its rows in line order."""
    import pyarrow as pa

    if a is None or b is None:
        return a if b is None else b
    table = pa.concat_tables([a.table, b.table])
    order = np.argsort(table["line"].to_numpy(), kind="stable")
    variant = np.concatenate([a.variant_of_rows, b.variant_of_rows + len(a.templates)])
    thread = None
    if a.thread is not None or b.thread is not None:
        thread = np.concatenate([a.thread_of_rows, b.thread_of_rows])[order]
    return MeasurementBlock(
        table.take(pa.array(order)),
        a.template,
        variants=[*a.templates, *b.templates],
        variant=variant[order].astype(np.int32),
        thread=thread,
    )


def _read_line(doc: DocText, start: int, end: int, number: int) -> Iterator[Item]:
    line = doc.text[start:end]
    if "sample" in line and "Run" in line:
        found = list(_TESTER.finditer(line))
        if found:
            yield from _tester_lines(doc, number, line, found)
            return
    if "===" in line:
        helper = _HELPER.search(line)
        if helper:
            below = None if helper.group("close") else _helper_below(doc, start + len(line))
            if below is not None:  # the latency goes on on the next line
                joined = _HELPER.search(line + below[1])
                if joined is not None:
                    yield _helper_line(number, f"{line}\n{below[0]}", joined, doc.text, start)
                    return
            yield _helper_line(number, line, helper, doc.text, start)
            return
    demo = _DEMO.search(line)
    if demo:
        yield from _demo_line(doc, start, number, line, demo)


# -- tester summary -------------------------------------------------------------------


def _tester_lines(
    doc: DocText, number: int, line: str, found: list[re.Match[str]]
) -> Iterator[Item]:
    previous_end = 0
    for m in found:
        glog = _last_glog(line, previous_end, m.start())
        previous_end = m.end()
        yield from _tester_record(m, glog, doc.meta.created_at, number, line)


def _last_glog(line: str, begin: int, end: int) -> re.Match[str] | None:
    """The glog prefix nearest before a record (a prose line may quote several records)."""
    last = None
    for m in _GLOG.finditer(line, begin, end):
        last = m
    return last


def _tester_record(
    m: re.Match[str], glog: re.Match[str] | None, created: datetime | None, number: int, line: str
) -> Iterator[Item]:
    value = _read_value(m.group("num"), m.group("unit"), _at_line_end(line, m.end("num")))
    if isinstance(value, str):
        yield Problem(number, f"tester latency line: {value}", line, NAME)
        return
    excl = m.group("warmup") is not None
    stats: dict[str, Any] = {"statistic": "average_excluding_warmup" if excl else "average"}
    measured_at = None
    benchmark = ""
    if glog:
        benchmark = _tester_benchmark(glog.group("file"))
        measured_at, bad_stamp = _glog_time(glog, created)
        if measured_at is None:
            stats["glog_time"] = _glog_stamp(glog)
        if bad_stamp:
            # The value is still good; only its time is lost.
            yield Problem(number, bad_stamp, line, NAME, severity="warning")
    yield Measurement(
        benchmark=benchmark,
        metric="latency_excl_warmup" if excl else "latency",
        value=value[0],
        unit=value[1],
        measured_at=measured_at,
        samples=int(m.group("samples")),
        warmup=int(m.group("warmup")) if excl else None,
        stats=stats,
        line=number,
        raw=line,
    )


def _glog_stamp(glog: re.Match[str]) -> str:
    frac = glog.group("frac")
    stamp = f"{glog.group('month')}{glog.group('day')} {glog.group('hms')}"
    return f"{stamp}.{frac}" if frac else stamp


def _glog_time(glog: re.Match[str], created: datetime | None) -> tuple[datetime | None, str]:
    """The glog stamp as a datetime in the document's year, and a reason if it is no date."""
    if created is None:
        return None, ""
    month, day = int(glog.group("month")), int(glog.group("day"))
    hour, minute, second = (int(x) for x in glog.group("hms").split(":"))
    micro = int((glog.group("frac") or "0")[:6].ljust(6, "0"))
    # A log month after the document's month was written the year before.
    year = created.year - 1 if month > created.month else created.year
    try:
        return datetime(year, month, day, hour, minute, second, micro), ""
    except ValueError:
        return None, f"glog stamp {_glog_stamp(glog)!r} is not a date"


@functools.lru_cache(maxsize=256)
def _cached_benchmark(source_file: str) -> str:
    return _tester_benchmark(source_file)


def _tester_benchmark(source_file: str) -> str:
    """Benchmark of a tester source: "ernie_tester.cc" and "analyzer_ernie_tester.cc" -> "ernie".

    Any other file (operator.cc, a demo) names no benchmark: "".
    """
    stem = source_file.rsplit("/", 1)[-1].split(".", 1)[0]
    if not stem.endswith("_tester"):
        return ""
    return stem.removesuffix("_tester").removeprefix("analyzer_")


# -- values ---------------------------------------------------------------------------


def _at_line_end(line: str, pos: int) -> bool:
    return pos < 0 or not line[pos:].strip()


def _read_value(num: str | None, unit: str | None, at_end: bool) -> tuple[float, str] | str:
    """(value in ms, "ms") or the reason it cannot be read.

    ``at_end``: nothing follows the number on its line, so "6." or a missing unit means
    the line was cut there.
    """
    if not num:
        return "no latency value (line cut?)"
    if num.endswith(".") and at_end:
        return f"latency value {num!r} is cut"
    if not unit:
        return f"latency value {num!r} has no unit" + (" (line cut)" if at_end else "")
    try:
        q = normalise(float(num), unit)
    except UnitError as e:
        return str(e)
    if q.kind != "time":
        return f"unit {unit!r} is not a time"
    return q.value, q.unit


@functools.lru_cache(maxsize=1024)  # a helper's batch sizes, threads and counts repeat
def _number(text: str) -> int | float | str:
    """A written value as its type: "1" -> 1, "1.05" -> 1.05, anything else as written."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _key_values(text: str) -> dict[str, str]:
    """Fields of a "key: value, key: value" line: "thread id: 0" -> {"thread_id": "0"}."""
    out: dict[str, str] = {}
    for m in _KEY_VALUE.finditer(text):
        key = "_".join(m.group("key").lower().split())
        out[key] = m.group("value").strip()
    return out


# -- multi-thread helper --------------------------------------------------------------

# Keys of the helper line that tell series apart, and those that only describe the value.
_HELPER_PARAMS = ("batch_size", "threads", "data_type")
_HELPER_STATS = ("thread_id", "repeat", "repetitions", "iterations", "fps")


def _helper_line(number: int, line: str, m: re.Match[str], text: str, start: int) -> Item:
    pairs = _key_values(m.group("body"))
    if "batch_size" not in pairs and "threads" not in pairs:
        pairs = {**_helper_context(text, start, line), **pairs}
    key = "latency" if "latency" in pairs else "sample_latency"
    if not m.group("close"):
        # No closing "======": the line is cut, so its last field may be partial.
        last = next(reversed(pairs), "")
        if last == key:
            return Problem(number, "helper line is cut in its latency value", line, NAME)
        pairs.pop(last, None)
    v = _VALUE.fullmatch(pairs.get(key, ""))
    value = _read_value(v and v.group("num"), v and v.group("unit"), False)
    if isinstance(value, str):
        return Problem(number, f"helper line: {value}", line, NAME)
    params = {k: _number(pairs[k]) for k in _HELPER_PARAMS if k in pairs}
    stats: dict[str, Any] = {k: _number(pairs[k]) for k in _HELPER_STATS if k in pairs}
    batch = _VALUE.fullmatch(pairs.get("batch_latency", ""))
    if batch:
        batch_ms = _read_value(batch.group("num"), batch.group("unit"), False)
        if isinstance(batch_ms, tuple):
            stats["batch_latency"] = batch_ms[0]
    return Measurement(
        benchmark="",
        metric="latency",
        value=value[0],
        unit=value[1],
        params=params,
        stats=stats,
        line=number,
        raw=line,
    )


def _fast_helper(m: re.Match[str], text: str, start: int, end: int, number: int) -> Item | None:
    """A Measurement from a helper line in PrintTime's own form, or None to let the general
    path decide. Gives exactly what _helper_line gives for the same line (tests compare)."""
    batch, repeat, threads, thread_id, latency, batch_ms, sample_ms, fps, data_type = m.groups()
    line = text[start:end]
    stats: dict[str, Any]
    if latency is not None:
        value = float(latency)
        if value > ABSURD_MS:
            return None
        params: dict[str, Any] = {"batch_size": int(batch), "threads": int(threads)}
        stats = {"thread_id": int(thread_id), "repeat": int(repeat)}
        if fps is not None:
            stats["fps"] = _number(fps)
        if data_type is not None:
            params["data_type"] = data_type
    else:
        value, batch_value = float(sample_ms), float(batch_ms)
        if value > ABSURD_MS or batch_value > ABSURD_MS:
            return None
        pairs = _helper_context(text, start, line)
        if fps is not None:
            pairs["fps"] = fps
        if data_type is not None:  # PrintTime since 2021: ", data type: float32"
            pairs["data_type"] = data_type
        params = {k: _number(pairs[k]) for k in _HELPER_PARAMS if k in pairs}
        stats = {k: _number(pairs[k]) for k in _HELPER_STATS if k in pairs}
        stats["batch_latency"] = batch_value
    return Measurement(
        benchmark="",
        metric="latency",
        value=value,
        unit="ms",
        params=params,
        stats=stats,
        line=number,
        raw=line,
    )


def _helper_context(text: str, line_start: int, line: str) -> dict[str, str]:
    """The fields of the "threads" and "batch_size" lines PrintTime prints above a "batch
    latency" line: the nearest of each, within HELPER_CONTEXT_LINES lines, up to the
    helper's previous latency line; only lines of the same glog thread when `line` has a
    glog prefix (threads of one test print side by side)."""
    thread = _GLOG_THREAD.match(line)
    found: dict[str, str] = {}
    seen: set[str] = set()  # "threads", "batch_size": the kinds of line already read
    for above in _lines_above(text, line_start, thread):
        if "=====" not in above:
            continue
        if thread is not None:
            other = _GLOG_THREAD.match(above)
            if other is None or other.group(1) != thread.group(1):
                continue
        rule = above.find("===")  # where a record's or a header's match may start
        if "atency" in above and _HELPER.search(above, rule):
            break  # the record before this one: its lines are not ours
        header = _HELPER_HEADER.search(above, rule)
        if header is None:
            continue
        kind = "batch_size" if header.group("body").startswith("batch") else "threads"
        if kind not in seen:
            seen.add(kind)
            found = {**_header_fields(header.group("body")), **found}
            if len(seen) == 2:
                break
    return found


def _lines_above(text: str, line_start: int, thread: re.Match[str] | None) -> Iterator[str]:
    """The lines above the one at `line_start`, nearest first, within HELPER_CONTEXT_LINES;
    of a glog line, only those that hold its thread id between spaces. Those are found by
    one search each, past the other threads' lines: with sixteen threads side by side a
    thread's headers are 32 lines up, and stepping line by line to them took half of
    reading the log."""
    if thread is None:
        end = line_start - 1
        for _ in range(HELPER_CONTEXT_LINES):
            if end < 0:
                return
            start = text.rfind("\n", 0, end) + 1
            yield text[start:end]
            end = start - 1
        return
    ours = f" {thread.group(1)} "
    end = line_start - 1
    while end > 0:
        at = text.rfind(ours, 0, end)
        if at < 0:
            return
        start = text.rfind("\n", 0, at) + 1
        if text.count("\n", start, line_start) > HELPER_CONTEXT_LINES:
            return
        stop = text.find("\n", at, end)
        yield text[start : end if stop < 0 else stop]
        end = start - 1


def _helper_below(doc: DocText, line_end: int) -> tuple[str, str] | None:
    """The line under a helper latency line that goes on there (_HELPER_BELOW), and what
    it adds to the line (from its ", sample latency")."""
    below = _line_below(doc, line_end)
    found = None if below is None else _HELPER_BELOW.fullmatch(below)
    return None if found is None else (found.string, found.group(1))


def _line_below(doc: DocText, line_end: int) -> str | None:
    """The line after the one that ends at `line_end`, if any."""
    return doc.line_text(line_end + 1) if line_end < len(doc.text) else None


# A test prints the same few header lines over and over: their fields are read once each.
# Callers copy, never change, the dict.
@functools.lru_cache(maxsize=1024)
def _header_fields(body: str) -> dict[str, str]:
    fields = _key_values(body)
    if "num_of_threads" in fields:  # the model repositories' copy of PrintTime
        fields["threads"] = fields.pop("num_of_threads")
    return fields


# -- inference demo summary -----------------------------------------------------------


def _demo_line(
    doc: DocText, start: int, number: int, line: str, m: re.Match[str]
) -> Iterator[Item]:
    value = _read_value(m.group("num"), m.group("unit"), _at_line_end(line, m.end("num")))
    if isinstance(value, str):
        yield Problem(number, f"demo summary: {value}", line, NAME)
        return
    context = _demo_context(doc.text, start)
    yield _demo_latency(value, context, number, line)
    if m.group("qps") is not None:
        qps, qps_line, qps_number, qps_end = m.group("qnum"), line, number, m.end("qnum")
    elif _at_line_end(line, m.end("num")) and (below := _qps_below(doc, start + len(line))):
        qps_line, qps = below  # its own line: the REPORT form prints "QPS: ..." under it
        qps_number, qps_end = number + 1, len(qps_line)
    else:
        return
    try:
        if not qps or (qps.endswith(".") and _at_line_end(qps_line, qps_end)):
            raise UnitError(f"QPS value {qps!r} is missing or cut")
        q = normalise(float(qps), "qps")
    except UnitError as e:
        yield Problem(qps_number, f"demo summary: {e}", qps_line, NAME)
        return
    yield _demo_throughput(q, context, qps_number, qps_line)


# A demo's QPS alone on the line under its latency ("QPS: 400.0", behind a log prefix or
# not), as the REPORT form of the benchmark scripts prints it.
_QPS_LINE = re.compile(r"(?<![A-Za-z_])QPS\s*:\s*(?P<qnum>" + _NUM + r")?[ \t]*")


def _qps_below(doc: DocText, line_end: int) -> tuple[str, str | None] | None:
    """The line under a demo summary and its QPS, when that line ends with one."""
    below = _line_below(doc, line_end)
    found = None if below is None else _QPS_LINE.search(below)
    if found is None or found.end() != len(found.string):
        return None
    return found.string, found.group("qnum")


# A demo summary's benchmark, device, params, and the samples of its latency.
_DemoContext = tuple[str, str, dict[str, Any], int | None]


def _demo_latency(value: tuple[float, str], context: _DemoContext, number: int, line: str) -> Item:
    benchmark, device, params, samples = context
    return Measurement(
        benchmark=benchmark,
        metric="latency",
        value=value[0],
        unit=value[1],
        device=device,
        params=params,
        samples=samples,
        stats={"statistic": "average"},
        line=number,
        raw=line,
    )


def _demo_throughput(q: Quantity, context: _DemoContext, number: int, line: str) -> Item:
    benchmark, device, params, _ = context
    return Measurement(
        benchmark=benchmark,
        metric="throughput",
        value=q.value,
        unit=q.unit,
        direction="higher",
        device=device,
        params=dict(params),
        line=number,
        raw=line,
    )


# The bytes above a demo summary searched for its "Model name" line first (_demo_context).
_DEMO_NEAR_BYTES = 4096


def _fast_demo(
    m: re.Match[str], text: str, start: int, end: int, number: int
) -> tuple[Item, Item] | None:
    """The latency and throughput of a demo summary in the demo's own form, or None to let
    the general path decide. Gives exactly what _demo_line gives (tests compare)."""
    num, qps = m.groups()
    value = float(num)
    if value > ABSURD_MS or qps.endswith("."):  # absurd, or the QPS is cut: a Problem
        return None
    context = _demo_context(text, start)
    line = text[start:end]
    return (
        _demo_latency((value, "ms"), context, number, line),
        _demo_throughput(normalise(float(qps), "qps"), context, number, line),
    )


def _demo_context(text: str, line_start: int) -> _DemoContext:
    """Benchmark, device, params and samples from the report above the summary: from the
    nearest "Model name:" line, within DEMO_CONTEXT_LINES lines, down to the summary.

    The last "Model name" in the 4 KiB above is that line when at most DEMO_CONTEXT_LINES
    line ends lie between; none there, the lines above are walked only when those 4 KiB
    hold fewer lines than that (a dense log's summaries walked 20 lines each).
    """
    near = max(0, line_start - _DEMO_NEAR_BYTES)
    at = text.rfind("Model name", near, line_start)
    if at >= 0:
        if text.count("\n", at, line_start) > DEMO_CONTEXT_LINES:
            return "", "", {}, None
    elif near and text.count("\n", near, line_start) <= DEMO_CONTEXT_LINES:
        window = line_start
        for _ in range(DEMO_CONTEXT_LINES):
            if window == 0:
                break
            window = text.rfind("\n", 0, window - 1) + 1
        at = text.rfind("Model name", window, line_start)
    if at < 0:
        return "", "", {}, None
    benchmark, device, params, samples = _demo_report(text[at:line_start])
    return benchmark, device, dict(params), samples


# The settings of a demo's report that tell one configuration from another, by the key
# its lines print (lower case, "_" for spaces), and the param each one is stored as.
_DEMO_INTS = {
    "batch_size": "batch_size",
    "thread_num": "threads",
    "cpu_math_library_num_threads": "threads",  # the C++ demos' CPU threads
}
_DEMO_FLAGS = ("enable_tensorrt", "enable_mkldnn", "enable_xla", "ir_optim")
_DEMO_TEXTS = {"precision": "precision", "trt_precision": "precision"}
# Each "key: value" of a report's lines: the words from the last character that is no
# letter or "_" up to the colon (48 at most, taken whole: no backtracking), and the value
# up to a comma, the line's end or a "]" (a glog prefix, "main.cc:128] device: gpu", reads
# as a key "cc" of its own). A pattern of the keys behind a look-behind took 70 us a
# report of twelve glog lines; a lazy key with no bound, 0.7 s a line of 3,000 letters.
_DEMO_PAIR = re.compile(r"(?<![A-Za-z_])([A-Za-z][A-Za-z_ \t]{0,48}+):[ \t]*([^,\n\]]*)")
_DEMO_KEYS = frozenset(
    ["model_name", "num_of_samples", "device", *_DEMO_INTS, *_DEMO_FLAGS, *_DEMO_TEXTS]
)


# The log prefixes of a report's lines that name no setting, as the demos print them:
# glog's, whose source file's extension reads as a key of its own ("main.cc:128]": "cc",
# its value ending at the "]"), and Python logging's default "%(asctime)s - %(name)s -
# %(levelname)s - " (no key: each word is followed by " - ", not ":"). Without them a
# sweep's reports are the same few texts, read once each: with them every report was
# read anew (its stamp differs), 27 us a report.
_REPORT_PREFIX = re.compile(
    r"^(?:[IWEF]\d{4} +\d\d:\d\d:\d\d(?:\.\d+)? +\d+ [\w./-]+\.(?:cc|cpp|cu|h|hpp|c|py):\d+\] "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - [\w.]+ - [A-Z]+ - )",
    re.MULTILINE,
)


# Cached as written too: a dense log of bare summaries asks for the same short report
# tens of thousands of times a chunk, and a call more each time cost it 18 %.
@functools.lru_cache(maxsize=256)
def _demo_report(report: str) -> tuple[str, str, tuple[tuple[str, ParamValue], ...], int | None]:
    """What a report (its "Model name" line to the summary's) says: _report_settings of
    its lines without their log prefixes, which add no setting (_REPORT_PREFIX)."""
    if "] " in report or " - " in report:  # else there is no prefix to take off
        report = _REPORT_PREFIX.sub("", report)
    return _report_settings(report)


@functools.lru_cache(maxsize=256)  # a sweep prints the same few reports
def _report_settings(
    report: str,
) -> tuple[str, str, tuple[tuple[str, ParamValue], ...], int | None]:
    """What a report says: the first of each setting, the model's line first. A line
    further down that is no part of the report may name one too: Paddle's GPU start-up
    prints "device: 0, GPU Compute Capability: 7.0" between an old demo's model line and
    its summary."""
    settings: dict[str, str] = {}
    for key, value in _DEMO_PAIR.findall(report):
        name = "_".join(key.lower().split())
        if name in _DEMO_KEYS:
            settings.setdefault(name, value.strip())
    params: dict[str, ParamValue] = {}
    for key, name in _DEMO_INTS.items():
        number = _number(settings.get(key, ""))
        if isinstance(number, int):
            params[name] = number
    for key in _DEMO_FLAGS:
        flag = cells.flag(settings.get(key, ""))
        if flag is not None:
            params[key] = flag
    for key, name in _DEMO_TEXTS.items():
        if settings.get(key, "").lower() not in ("", "none"):
            params[name] = settings[key]
    samples = _number(settings.get("num_of_samples", ""))
    device = settings.get("device", "")
    # "cpu" / "gpu" as the other formats spell devices; anything longer as written.
    return (
        settings.get("model_name", ""),
        device.upper() if len(device) <= 4 else device,
        tuple(params.items()),
        samples if isinstance(samples, int) else None,
    )
