"""One module per input format (docs/formats.md sections 1-8, 10-25), each a pure function.

Every parser module has:

- ``NAME``: the parser's name, stored with each source ("latency", "profiler", ...);
- ``ANCHORS``: literal strings of which at least one occurs in any text the parser can
  read. The ingest runs a parser on a document (or a chunk of a large log) only when an
  anchor is present: ``anchor in text`` runs at memory speed, so a 500 MB log with no
  profiler table never pays for the profiler parser;
- ``parse(doc: DocText) -> Iterator[Item]``: yields Measurement, Phase, ProfileEvent,
  PassApplied and Problem records in document order, each with its 1-based ``line``
  (``doc.line_at(pos)``) and its ``raw`` text. A parser never raises on bad input: what it
  cannot read becomes a Problem naming the line and the reason, and the rest of the
  document is still read.

Parsers find their format anywhere in a document (inside ``` fences, after prose, mixed
with other formats); quote markers are already removed by ingest.text.normalise. They scan
with ``re.finditer`` on patterns that start with a literal, never line by line in Python,
because a tester log can be gigabytes long.

Parsers of today's benchmark tools (trtexec, MLPerf LoadGen, vLLM, SGLang, ...) follow one
data model, so that their series compare and chart alike:

- one Measurement per statistic the tool prints, the statistic in ``params["stat"]``:
  "mean", "median", "min", "max", "std", or a percentile "p50", "p90", "p95", "p99",
  "p99.9" (however the tool spells it: "P99", "99th", "99%", "percentile(99%)"). A
  throughput without a statistic has no "stat". Trends then draws p50 and p99 of one
  metric as two series that differ only in params.stat;
- ``metric`` in snake_case, keeping the tool's own distinctions: "latency", "throughput",
  "ttft", "tpot", "itl", "e2e_latency", "gpu_compute_time", "h2d_time", "d2h_time",
  "enqueue_time", "request_throughput", "output_throughput", "total_token_throughput";
- value, unit and direction from perfboard.units.normalise on the unit as printed (times in
  ms, lower is better; throughputs per second, higher is better); a spread (stat "std")
  is better smaller whatever its metric (cells.stat_direction). A value whose unit or
  meaning is not clear is a Problem naming the line, never a guess;
- ``framework`` is the tool ("tensorrt", "vllm", "sglang"; "" when the tool does not say
  what ran), ``benchmark`` the model as printed (a file's basename), ``device`` as printed;
  the settings that define a series (batch, concurrency, request rate, lengths, scenario,
  mode, precision) go in params, tool versions and machine facts in testbed; the few
  extras that are no series of their own (requests completed and failed, duration, a
  VALID/INVALID result) in stats;
- tests assert values of the samples and of at least one more real document of the
  format (tests/fixtures/modern/NAME/, each source named in its README.md).

What a parser cannot know from its own lines (which model, which run, the document's
date, FP32 or INT8 from a caption above a fence) it leaves empty; ingest.runs fills it
from the document's context afterwards.
"""
