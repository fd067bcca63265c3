"""MLPerf LoadGen's ``mlperf_log_summary.txt``, every LoadGen from v0.5 (2019) to v5.x.

The text is written by LoadGen's ``PerformanceSummary::LogSummary`` (loadgen.cc up to
v1.0, loadgen/results.cc since) and ``TestSettingsInternal::LogSummary``
(test_settings_internal.cc); its key strings were taken from there, version by version:

- a header ``MLPerf Results Summary``, then ``SUT name : ``, ``Scenario : `` and
  ``Mode     : ``; old LoadGens spell them "Single Stream", "Multi Stream",
  "Multi Stream Free" and "Performance", "Accuracy", "Submission", "Find Peak
  Performance", newer ones "SingleStream", "PerformanceOnly", ...: both are stored in
  the newer spelling, so a series goes on across LoadGen versions;
- the headline result of the scenario: ``90th percentile latency (ns) : `` (SingleStream,
  MultiStream; "90.0th" in some versions), ``Samples per second: `` (Offline; "QPS: " in
  v0.5), ``Scheduled samples per second : `` or ``Completed samples per second    : ``
  (Server; "Scheduled QPS : " in v0.5), ``Samples per query : `` (MultiStream before
  v2.0), and with token latencies ``Tokens per second: ``, ``Completed tokens per
  second: ``, ``90.0th first token percentile latency (ns) : `` and the "(inferred)"
  token rates;
- ``Result is : VALID`` or ``INVALID`` and the indented ``Performance constraints
  satisfied``, ``Min duration satisfied``, ``Min queries satisfied`` (Yes, NO or
  Skipped), ``Early stopping satisfied``; then ``Recommendations:`` and ``Early Stopping
  Result:`` (``TTFT ...``, ``TPOT ...``) with `` * `` lines;
- ``Additional Stats``: ``QPS w/ loadgen overhead``, ``QPS w/o loadgen overhead``,
  ``TPS w/ ...``, ``Completed samples per second``, ``Scheduled samples per second``,
  ``Completed tokens per second``, ``Min latency (ns)``, ``Max latency (ns)``, ``Mean
  latency (ns)``, ``50.00 percentile latency (ns)`` ... ``99.90 percentile latency
  (ns)``, the ``First Token latency`` and ``Time to Output Token`` (later "Time per
  Output Token") blocks; MultiStream puts ``Per-query latency:`` above its latencies, and
  before v2.0 also ``Intervals between each IssueQuery:`` and ``Per-sample latency:``;
- ``Test Parameters Used``: ``samples_per_query : ``, ``target_qps : ``,
  ``target_latency (ns): ``, ``ttft_latency (ns): `` ... and the closing ``No warnings
  encountered during test.`` / ``3 warnings encountered. See detailed log.`` and
  ``No errors encountered during test.`` / ``1 ERROR encountered. See detailed log.``.

An accuracy run's summary holds only those two closing lines (LoadGen logs no
performance summary in AccuracyOnly mode): it yields nothing. A summary that does print
results in any mode is read the same way.

Decisions:

- One Measurement per value, ``params`` = ``scenario`` and ``mode`` (as above) and
  ``stat`` for a statistic ("min", "max", "mean", "p50" ... "p99.9"); framework "" and
  benchmark "" (the summary names no model; ingest.runs fills it from the document);
  the SUT name in ``testbed["sut_name"]`` when it is not empty. Before v2.0 a MultiStream
  summary's headline is ``Samples per query : N``, the number of streams the run held:
  a setting that defines the run (its latencies are those of N streams), so it goes in
  ``params["samples_per_query"]``, not a value (it has no unit).
- Metrics: "latency" (per sample), "query_latency" (per query: the latencies under
  "Per-query latency:" and MultiStream's headline percentile), "ttft" (first token),
  "tpot" (time per output token), "throughput" (Offline samples/s, and the samples/s of
  v0.5's "QPS:" and MultiStreamFree), "scheduled_throughput" and
  "completed_throughput" (Server), "qps_with_loadgen_overhead" and
  "qps_without_loadgen_overhead" (SingleStream), "token_throughput" (Offline tokens/s),
  "completed_token_throughput" (Server), "inferred_token_throughput",
  "inferred_completed_token_throughput", "tps_with_loadgen_overhead",
  "tps_without_loadgen_overhead". Latencies are ns in the file, stored in ms.
- The headline repeats a value of Additional Stats (the 90th percentile of
  SingleStream is the "90.00 percentile" line, "Completed tokens per second" is printed
  twice): a (metric, stat) is stored once per summary, at its first line; a repeat with
  another value is a warning Problem.
- The early stopping estimates (`` * Early stopping 90th percentile estimate: N``) are
  the official SingleStream and MultiStream results since v2.0: Measurements
  "early_stopping_latency" (MultiStream: "early_stopping_query_latency"; under "TTFT
  Early Stopping Result:" / "TPOT ...": "early_stopping_ttft" / "early_stopping_tpot")
  with stat "p90"/"p99". LoadGen prints no unit there; it is the QuerySampleLatency of
  the estimate, nanoseconds, as results.cc writes it (``std::to_string`` of the
  latency); in the fixtures it lies among the summary's own percentile lines (one
  equals its "95.00 percentile latency (ns)").
- ``stats`` of every Measurement of a summary (the same for all of them): ``result``
  ("VALID"/"INVALID"; an INVALID run keeps its values, status "ok"), the four
  ``*_satisfied`` lines (True/False, or the text as written, "Skipped"), the text of
  ``recommendations`` and of the early stopping results (``early_stopping_result``,
  ``ttft_early_stopping_result``, ``tpot_early_stopping_result``), ``warnings`` and
  ``errors`` (the closing counts), and the test parameters that say what a number
  means: samples_per_query, target_qps, target_latency_ns, ttft_latency_ns,
  tpot_latency_ns, max_async_queries, min/max_duration_ms, min/max_query_count,
  performance_sample_count, performance_issue_unique/same (True/False whether LoadGen
  wrote "false" or "0"). The seeds and the accuracy log settings are skipped: they
  change no number's meaning, and the seeds pass 2**63.
- Skipped, on purpose: the percentiles under "Intervals between each IssueQuery:" (v0.5
  MultiStream: how many scheduling intervals a query took, a count without a unit that
  describes LoadGen's pacing, not the system), the `` * `` lines of early stopping other
  than the estimates (kept as text in stats), LoadGen's WARNING prose.
- A value that is no number, a time beyond a day, a Result that is neither VALID nor
  INVALID, and a summary with values but no Scenario line (a MultiStream latency cannot
  then be told from a per-sample one) are Problems naming the line; a summary with a
  Result but no value (pasted up to its verdict) is a warning.
- A summary is found wherever it is pasted: from its header, or from its "SUT name" or
  "Scenario" line when the header was cut off; inside fences, quotes, and HTML
  ``<pre>``/``<b>`` markup (removed from each line before it is read).

Speed: one ``re.finditer`` per literal entry point ("MLPerf Results Summary", "SUT name
:", "Scenario :") over the whole text; only the lines of a summary found are walked, at
most a few hundred each: it ends at the closing errors line, a fence, a heading, the
next summary, or a run of lines that are none of LoadGen's.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.parsers.cells import percentile_stat
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import UnitError, normalise

NAME = "mlperf"
ANCHORS: tuple[str, ...] = ("MLPerf Results Summary", "SUT name :", "Scenario :")

_HEADER = "MLPerf Results Summary"
_ENTRIES = tuple(
    re.compile(re.escape(literal)) for literal in (_HEADER, "SUT name :", "Scenario :")
)

_MAX_LINES = 600  # a summary is 40-110 lines; LoadGen's WARNING prose adds a few
_MAX_UNKNOWN = 8  # this many lines in a row that are none of LoadGen's end a summary

# Markup a summary pasted into HTML carries (<pre>, <b>Result is : INVALID</b>).
_TAGS = re.compile(r"</?(?:b|i|em|strong|code|pre|tt|kbd|samp|span|br)\b[^>]*>", re.I)
_KV = re.compile(r"(?P<key>[^:]*?[^:\s])\s*:\s*(?P<value>.*?)\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)
_INT = re.compile(r"[-+]?\d+")
_RULE = re.compile(r"[=\-]{3,}")
_FENCE = re.compile(r"(```|~~~)")
_HEADING = re.compile(r"#{1,6}\s")
_ESTIMATE = re.compile(
    r"\*\s*Early stopping (?P<p>\d+(?:\.\d+)?)(?:th)? percentile estimate\s*:\s*(?P<value>\S+)",
    re.I,
)
_PERCENTILE = re.compile(
    r"(?P<p>\d+(?:\.\d+)?)(?P<th>th)? (?:(?P<ft>first token) )?percentile "
    r"(?P<what>latency|first token latency|time to output token|time per output token)"
    r" \(ns\)"
)
_INTERVAL = re.compile(r"\d+(?:\.\d+)? percentile")
_PARAM_KEY = re.compile(r"(?P<name>[a-z][a-z0-9_]*)(?: \((?P<unit>ns|ms)\))?")
_CLOSING = re.compile(
    r"(?P<count>no|\d+) (?P<what>warnings?|errors?) encountered"
    r"(?: during test\.| ?\. See detailed log\.)",
    re.I,
)

_MODES = {
    "performance": "PerformanceOnly",
    "accuracy": "AccuracyOnly",
    "submission": "SubmissionRun",
    "find peak performance": "FindPeakPerformance",
}
# key as written, lower case and single-spaced -> (metric, unit as written)
_RATES: dict[str, tuple[str, str]] = {
    "samples per second": ("throughput", "samples/s"),
    "inferences per second": ("throughput", "samples/s"),
    "qps": ("throughput", "qps"),
    "scheduled qps": ("scheduled_throughput", "qps"),
    "scheduled samples per second": ("scheduled_throughput", "samples/s"),
    "completed samples per second": ("completed_throughput", "samples/s"),
    "qps w/ loadgen overhead": ("qps_with_loadgen_overhead", "samples/s"),
    "qps w/o loadgen overhead": ("qps_without_loadgen_overhead", "samples/s"),
    "tokens per second": ("token_throughput", "tokens/s"),
    "tokens per second (inferred)": ("inferred_token_throughput", "tokens/s"),
    "completed tokens per second": ("completed_token_throughput", "tokens/s"),
    "completed tokens per second (inferred)": ("inferred_completed_token_throughput", "tokens/s"),
    "tps w/ loadgen overhead": ("tps_with_loadgen_overhead", "tokens/s"),
    "tps w/o loadgen overhead": ("tps_without_loadgen_overhead", "tokens/s"),
}
# "min latency (ns)" and its kin -> (what, stat); what "latency" follows the section
_TIMES: dict[str, tuple[str, str]] = {
    f"{stat} {what} (ns)": (metric, stat)
    for stat in ("min", "max", "mean")
    for what, metric in (
        ("latency", "latency"),
        ("first token latency", "ttft"),
        ("time to output token", "tpot"),
        ("time per output token", "tpot"),
    )
}
_WHAT = {
    "latency": "latency",
    "first token latency": "ttft",
    "time to output token": "tpot",
    "time per output token": "tpot",
}
_FLAGS = {
    "performance constraints satisfied": "performance_constraints_satisfied",
    "min duration satisfied": "min_duration_satisfied",
    "min queries satisfied": "min_queries_satisfied",
    "early stopping satisfied": "early_stopping_satisfied",
}
_TEXT_SECTIONS = {
    "recommendations": ("recommendations", ""),
    "early stopping result": ("early_stopping_result", "latency"),
    "ttft early stopping result": ("ttft_early_stopping_result", "ttft"),
    "tpot early stopping result": ("tpot_early_stopping_result", "tpot"),
}
_TITLES = {"additional stats": "additional", "test parameters used": "params"}
# Test parameters kept in stats (as "name" or "name_ns"/"name_ms").
_KEPT_PARAMS = frozenset(
    {
        "samples_per_query",
        "target_qps",
        "target_latency_ns",
        "ttft_latency_ns",
        "tpot_latency_ns",
        "max_async_queries",
        "min_duration_ms",
        "max_duration_ms",
        "min_query_count",
        "max_query_count",
        "performance_sample_count",
        "performance_issue_unique",
        "performance_issue_same",
    }
)


@dataclass(slots=True)
class _Value:
    metric: str
    stat: str
    value: float
    unit: str
    line: int
    raw: str


@dataclass(slots=True)
class _Summary:
    """What one summary block said, gathered before any Measurement is made of it."""

    first_line: int
    header: bool = False
    sut: str | None = None
    scenario: str | None = None
    mode: str | None = None
    streams: int | None = None  # "Samples per query : N" of MultiStream up to v1.1
    values: list[_Value] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    result_line: int = 0
    section: str = "results"  # results, additional, params, intervals, text
    text_key: str = ""  # the stats key of the text section being read
    early: str = ""  # what the early stopping section estimates: latency, ttft, tpot
    per_query: bool = False  # under "Per-query latency:" (MultiStream)

    def has_content(self) -> bool:
        return self.scenario is not None or bool(self.values) or self.result_line > 0


class _End(Exception):
    """The summary ended; ``inclusive``: the line that ended it belongs to it."""

    def __init__(self, inclusive: bool) -> None:
        self.inclusive = inclusive


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements of every LoadGen summary in the document, and Problems."""
    text = doc.text
    resume = 0
    for hit in heapq.merge(*(p.finditer(text) for p in _ENTRIES), key=lambda m: m.start()):
        if hit.start() < resume:
            continue
        start, end = doc.line_bounds(hit.start())
        if not _clean(text[start:end]).lstrip().startswith(hit[0]):
            continue  # the words inside some other line
        summary, resume = _read(doc, start)
        yield from _items(summary)


def _clean(line: str) -> str:
    return _TAGS.sub("", line) if "<" in line else line


# -- walking a summary ------------------------------------------------------------------


def _read(doc: DocText, pos: int) -> tuple[_Summary, int]:
    """The summary starting at the line of pos, and the offset where it ended."""
    summary: _Summary | None = None
    end = pos
    unknown = 0
    for count, (number, start, raw) in enumerate(doc.lines_from(pos)):
        if summary is None:
            summary = _Summary(first_line=number)
        if count >= _MAX_LINES:
            break
        line = _clean(raw)
        try:
            known = _line(summary, line, number, raw)
        except _End as stop:
            if stop.inclusive:
                end = start + len(raw)
            break
        if known is None:  # blank
            continue
        if known:
            unknown = 0
            end = start + len(raw)
        else:
            unknown += 1
            if unknown > _MAX_UNKNOWN:
                break
    assert summary is not None
    return summary, max(end, pos + 1)


def _line(s: _Summary, line: str, number: int, raw: str) -> bool | None:
    """Read one line into the summary: True if it is LoadGen's, False if not, None if blank.

    Raises _End where the summary ends.
    """
    stripped = line.strip()
    if not stripped:
        if s.section == "text":
            s.section = "results"
        return None
    if _FENCE.match(stripped) or _HEADING.match(stripped):
        raise _End(inclusive=False)
    if stripped == _HEADER:
        if s.header or s.has_content():
            raise _End(inclusive=False)
        s.header = True
        return True
    if _RULE.fullmatch(stripped):
        return True
    closing = _CLOSING.match(stripped)
    if closing:
        what = "warnings" if closing["what"].lower().startswith("warning") else "errors"
        s.stats[what] = 0 if closing["count"].lower() == "no" else int(closing["count"])
        if what == "errors":
            raise _End(inclusive=True)  # LoadGen's last line
        return True
    if stripped.startswith("*"):
        return _bullet(s, stripped, number, raw)
    if s.section == "text" and line[:1].isspace() and ":" not in stripped:
        _append_text(s, stripped)  # " early stopping estimate (would need to process at"
        return True
    kv = _KV.match(stripped)
    if kv is None:
        title = _TITLES.get(" ".join(stripped.lower().split()))
        if title:
            s.section = title
            return True
        return False
    return _key_value(s, kv["key"], kv["value"], number, raw)


def _bullet(s: _Summary, stripped: str, number: int, raw: str) -> bool:
    if s.section != "text":
        return False
    estimate = _ESTIMATE.match(stripped)
    if estimate and s.early:
        metric = {"ttft": "early_stopping_ttft", "tpot": "early_stopping_tpot"}.get(s.early)
        if metric is None:
            metric = "early_stopping_query_latency" if _multistream(s) else "early_stopping_latency"
        _time(s, metric, _stat(estimate["p"]), estimate["value"], number, raw)
    _append_text(s, stripped.lstrip("* ").strip())
    return True


def _append_text(s: _Summary, text: str) -> None:
    if s.text_key and text:
        before = s.stats.get(s.text_key)
        s.stats[s.text_key] = f"{before} {text}" if before else text


def _key_value(s: _Summary, key_written: str, value: str, number: int, raw: str) -> bool:
    key = " ".join(key_written.lower().split())
    if key == "sut name":
        if s.sut is not None or s.scenario is not None:
            raise _End(inclusive=False)  # the next summary
        s.sut = value
        return True
    if key == "scenario":
        if s.scenario is not None:
            raise _End(inclusive=False)
        s.scenario = "".join(value.split())
        return True
    if key == "mode" and s.mode is None and s.section == "results":
        s.mode = _MODES.get(" ".join(value.lower().split()), "".join(value.split()))
        return True
    if key in _TEXT_SECTIONS:
        s.section = "text"
        s.text_key, early = _TEXT_SECTIONS[key]
        s.early = early or s.early
        return True
    if key == "result is":
        _result(s, value, number, raw)
        return True
    if key in _FLAGS:
        s.stats[_FLAGS[key]] = {"yes": True, "no": False}.get(value.lower(), value)
        return True
    if s.section == "text":
        s.section = "results"
    if key == "intervals between each issuequery":
        s.section = "intervals"
        return True
    if key in ("per-query latency", "per-sample latency"):
        s.section = "additional"
        s.per_query = key == "per-query latency"
        return True
    if s.section == "intervals" and _INTERVAL.fullmatch(key):
        return True  # a count of intervals: skipped (see the module's notes)
    if s.section == "params":
        return _param(s, key_written.strip(), value)
    if key == "samples per query":
        s.streams = _count(s, key_written, value, number, raw)
        return True
    if key in _RATES:
        metric, unit = _RATES[key]
        _rate(s, metric, unit, value, number, raw)
        return True
    if key in _TIMES:
        what, stat = _TIMES[key]
        _time(s, _latency_metric(s, what, headline=False), stat, value, number, raw)
        return True
    percentile = _PERCENTILE.fullmatch(key)
    if percentile:
        what = "first token latency" if percentile["ft"] else percentile["what"]
        headline = bool(percentile["th"])
        metric = _latency_metric(s, _WHAT[what], headline)
        _time(s, metric, _stat(percentile["p"]), value, number, raw)
        return True
    return False


def _latency_metric(s: _Summary, what: str, headline: bool) -> str:
    if what != "latency":
        return what
    if s.per_query or (headline and _multistream(s)):
        return "query_latency"
    return "latency"


def _multistream(s: _Summary) -> bool:
    return (s.scenario or "").startswith("MultiStream")


def _stat(percentile: str) -> str:
    try:
        return percentile_stat(float(percentile))
    except ValueError:  # past 100: kept as printed, the value still read
        return f"p{percentile}"


# -- values ---------------------------------------------------------------------------


def _problem(s: _Summary, number: int, reason: str, raw: str, warning: bool = False) -> None:
    s.problems.append(
        Problem(number, f"MLPerf summary: {reason}", raw, NAME, "warning" if warning else "error")
    )


def _number(s: _Summary, key: str, value: str, number: int, raw: str) -> float | None:
    token = value.split()[0] if value.split() else ""
    if not token:
        _problem(s, number, f"{key.strip()} without a value (line cut?)", raw)
        return None
    if not _NUMBER.fullmatch(token):
        _problem(s, number, f"{key.strip()} {value!r} is not a number", raw)
        return None
    return float(token)


def _count(s: _Summary, key: str, value: str, number: int, raw: str) -> int | None:
    if not _INT.fullmatch(value.strip()):
        _problem(s, number, f"{key.strip()} {value!r} is not a count", raw)
        return None
    return int(value)


def _rate(s: _Summary, metric: str, unit: str, value: str, number: int, raw: str) -> None:
    parsed = _number(s, metric, value, number, raw)
    if parsed is not None:
        _add(s, metric, "", parsed, unit, number, raw)


def _time(s: _Summary, metric: str, stat: str, value: str, number: int, raw: str) -> None:
    parsed = _number(s, f"{metric} {stat}", value, number, raw)
    if parsed is not None:
        _add(s, metric, stat, parsed, "ns", number, raw)


def _add(
    s: _Summary, metric: str, stat: str, value: float, unit: str, number: int, raw: str
) -> None:
    for seen in s.values:
        if (seen.metric, seen.stat) == (metric, stat):
            if seen.value != value:
                what = f"{metric} {stat}".strip()
                _problem(
                    s,
                    number,
                    f"{what} {_written(value)} {unit} repeats line {seen.line} with another"
                    f" value ({_written(seen.value)} {seen.unit}); the first is kept",
                    raw,
                    warning=True,
                )
            return
    s.values.append(_Value(metric, stat, value, unit, number, raw))


def _written(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _result(s: _Summary, value: str, number: int, raw: str) -> None:
    s.result_line = number
    word = value.split()[0] if value.split() else ""
    if word.upper() in ("VALID", "INVALID"):
        s.stats["result"] = word.upper()
    else:
        _problem(s, number, f"result {value!r} is neither VALID nor INVALID", raw)


def _param(s: _Summary, key: str, value: str) -> bool:
    m = _PARAM_KEY.fullmatch(key)
    if m is None:
        return False  # "WARNING: sample_concatenate_permutation was set to true."
    name = m["name"] + (f"_{m['unit']}" if m["unit"] else "")
    if name in _KEPT_PARAMS:
        setting = _setting(value)
        if name.startswith("performance_issue_") and setting in (0, 1):
            setting = bool(setting)  # "false" up to v1.0, "0" since: one spelling
        s.stats[name] = setting
    return True


def _setting(value: str) -> ParamValue:
    if _INT.fullmatch(value):
        return int(value)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if _NUMBER.fullmatch(value):
        return float(value)
    return value


# -- records ----------------------------------------------------------------------------


def _items(s: _Summary) -> list[Item]:
    items: list[Item] = list(s.problems)
    if s.values and not s.scenario:
        items.append(
            Problem(
                s.values[0].line,
                "MLPerf summary without its Scenario line: its values are not stored"
                " (a MultiStream latency cannot be told from a per-sample one)",
                s.values[0].raw,
                NAME,
            )
        )
        return sorted(items, key=lambda item: item.line)
    if not s.values and s.result_line:
        items.append(
            Problem(
                s.result_line,
                f"MLPerf summary ({s.scenario or 'no scenario'},"
                f" {s.stats.get('result', '?')}) holds no value: cut short?",
                "",
                NAME,
                "warning",
            )
        )
    params: dict[str, ParamValue] = {"scenario": s.scenario or ""}
    if s.mode:
        params["mode"] = s.mode
    if s.streams is not None and _multistream(s):
        params["samples_per_query"] = s.streams
    testbed = {"sut_name": s.sut} if s.sut else {}
    for v in s.values:
        try:
            q = normalise(v.value, v.unit)
        except UnitError as e:
            items.append(Problem(v.line, f"MLPerf summary: {v.metric}: {e}", v.raw, NAME))
            continue
        items.append(
            Measurement(
                benchmark="",
                metric=v.metric,
                value=q.value,
                unit=q.unit,
                direction="higher" if q.direction == "higher" else "lower",
                framework="",
                params={**params, "stat": v.stat} if v.stat else dict(params),
                testbed=dict(testbed),
                stats=dict(s.stats),
                line=v.line,
                raw=v.raw,
            )
        )
    return sorted(items, key=lambda item: item.line)
