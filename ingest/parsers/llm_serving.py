"""LLM serving benchmarks of vLLM and SGLang: their console blocks and their result JSON.

The strings were taken from the tools' own output code, version by version:

- vLLM's serving benchmark (``benchmarks/benchmark_serving.py`` 2024-2025, ``vllm bench
  serve`` = ``vllm/benchmarks/serve.py`` since 2025): the block opens with
  ``============ Serving Benchmark Result ============`` and prints ``Label:`` padded to
  40 columns, then the value: ``Successful requests:``, ``Failed requests:`` (since late
  2025), ``Maximum request concurrency:``, ``Request rate configured (RPS):``, ``Benchmark
  duration (s):``, ``Total input tokens:``, ``Total generated tokens:``, ``Request
  throughput (req/s):``, ``Request goodput (req/s):``, ``Input token throughput (tok/s):``
  (2024), ``Output token throughput (tok/s):``, ``Peak output token throughput (tok/s):``,
  ``Peak concurrent requests:``, ``Total Token throughput (tok/s):`` (later "Total token");
  then one section per metric under a ``-----Title-----`` rule, ``Mean X (ms):``,
  ``Median X (ms):``, ``P99 X (ms):`` and every percentile of ``--metric-percentiles``
  (``P90``, ``P99.9``...), for X = TTFT, TPOT, ITL, E2EL, "Client Queue Time", "E2EL incl.
  Client Queue", the probe requests' E2EL; the speculative decoding and diffusion
  sections; a closing rule of ``=``. Just before the block it prints ``Traffic request
  rate: inf``, ``Burstiness factor: 1.0 (Poisson process)`` and ``Maximum request
  concurrency: 2``, and before all of it the ``Namespace(...)`` of its arguments.
- SGLang's ``python -m sglang.bench_serving`` (python/sglang/bench_serving.py, later
  python/sglang/benchmark/metrics.py): the same header and layout, opening with
  ``Backend:``, ``Traffic request rate:``, ``Max request concurrency:`` ("Max reqeuest
  concurrency:" in 2024, "not set" without a limit), with ``Total generated tokens
  (retokenized):``, ``Total throughput (tok/s):`` (later "Total token throughput"),
  ``Concurrency:``, ``Accept length:``, an ``End-to-End Latency`` section (``Mean E2E
  Latency (ms):``...) and ``P95 ITL``, ``Max ITL``. Newer versions print values
  unpadded.
- vLLM's ``--save-result`` JSON (one object; ``--append-result`` writes one per line):
  ``date`` ("20260722-041843"), ``backend``/``endpoint_type``, ``model_id`` (old forks:
  ``model_ids``), ``num_prompts``, ``request_rate`` (a number or "inf"), ``burstiness``,
  ``max_concurrency``, ``completed``, ``failed``, ``duration``, the totals, the
  throughputs (``request_throughput``, ``request_goodput`` (2024: "request_goodput:"),
  ``output_throughput``, ``total_token_throughput``, ``max_output_tokens_per_s``) and
  ``{mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms``; with ``--save-detailed`` also the
  per-request arrays. SGLang's ``--output-file`` JSONL: one record per run with
  ``backend``, ``dataset_name``, ``request_rate`` (Infinity when unlimited),
  ``max_concurrency``, ``random_input_len``/``random_output_len``/``sharegpt_output_len``,
  ``server_info`` (newer: the server's arguments, ``model_path`` and ``version``), the
  throughputs (``input_throughput``, ``total_throughput``) and
  ``{mean,median,std,p95,p99,max}_{e2e_latency,ttft,tpot,itl}_ms``.
- ``vllm bench latency`` (and benchmarks/benchmark_latency.py): ``Avg latency: 1.47
  seconds``, ``Std latency: ...`` (newer), ``10% percentile latency: ... seconds`` for 10,
  25, 50, 75, 90, 99; its ``--output-json``: ``avg_latency``, ``std_latency``,
  ``latencies``, ``percentiles`` {"10": ...}, in seconds.
- ``vllm bench throughput`` (benchmarks/benchmark_throughput.py): ``Throughput: 12.30
  requests/s, 4567.80 total tokens/s, 1234.50 output tokens/s`` (2024: ``Throughput: 5.12
  requests/s, 2621.45 tokens/s``, where tokens/s counts prompt and output tokens), then
  ``Total num prompt tokens:`` and ``Total num output tokens:``; its ``--output-json``:
  ``elapsed_time``, ``num_requests``, ``total_num_tokens``, ``requests_per_second``,
  ``tokens_per_second``.

Decisions:

- One Measurement per statistic printed, the statistic in ``params["stat"]`` ("mean",
  "median", "std", "min", "max", "p99", "p99.9"; "Avg" latency is "mean", "10%
  percentile" is "p10"). Metrics: ``ttft``, ``tpot``, ``itl``, ``e2e_latency`` (vLLM's
  E2EL and SGLang's E2E Latency alike), ``client_queue_time``,
  ``e2e_latency_incl_client_queue``, ``probe_e2e_latency``, ``latency`` (bench latency),
  all in ms; ``request_throughput`` and ``request_goodput`` (requests/s),
  ``input_throughput``, ``output_throughput``, ``total_token_throughput`` (SGLang's
  "Total throughput" too), ``peak_output_throughput`` (tokens/s), without a stat.
- Framework: the server the benchmark measured. A backend that names one ("vllm",
  "vllm-chat", "sglang", "sglang-oai", "lmdeploy", "tgi", "trt"...) says it; the others
  ("openai", "openai-chat": an API, not a server) leave the tool's own name ("vllm" for
  vLLM's benchmarks, "sglang" for SGLang's). The backend as written goes in
  ``params["backend"]`` when it differs from the framework (SGLang's "sglang-oai",
  vLLM's "openai-chat"); a vLLM console block prints no backend, so it comes from the
  command line or the Namespace above the block when they are there.
- Benchmark: the model as the tool or the command line names it, its basename
  ("meta-llama/Llama-3.1-8B-Instruct" -> "Llama-3.1-8B-Instruct"); the name as written
  goes in ``stats["model"]``. Found in the JSON (``model_id``, SGLang's
  ``server_info.model_path``), else above the block: the bench command's ``--model``
  (``$MODEL`` resolved from a ``MODEL=...`` line above), the Namespace's ``model=``, the
  server command (``vllm serve X``, ``sglang.launch_server --model-path X``). Without
  one it is "" and ingest.runs fills it.
- Params: ``request_rate`` (a number, or "inf", or SGLang's "trace"), ``max_concurrency``
  (omitted when "not set"), ``burstiness`` (only when not 1.0), ``dataset``
  (``--dataset-name``; a Hugging Face dataset also ``dataset_path``), ``input_len`` and
  ``output_len`` (the lengths that apply to the dataset: ``--random-input-len`` for
  "random", ``--sharegpt-output-len`` for "sharegpt"...), and for bench latency /
  throughput ``batch_size`` and ``tensor_parallel_size``. What the block or the JSON
  prints wins over vLLM's lines above the block, which win over the command line, which
  wins over the Namespace. A command's ``$VAR`` that no line above sets is left out. The
  lines above a result are those after the result before it: a block without a command
  of its own takes nothing from an earlier one, and a command of the other tool (or of
  another vLLM benchmark) gives it nothing.
- Failed requests are no series of their own (perfboard has no count unit): every
  Measurement of a run carries ``stats["completed"]`` and ``stats["failed"]`` (when
  printed), with ``duration_s``, the token totals, ``num_prompts``,
  ``max_concurrent_requests``, ``concurrency``, ``accept_length``, the speculative
  decoding counts and the tool (``stats["tool"]``). Any other ``Label: value`` line of a
  block goes in stats under its snake_case label: nothing printed is dropped. Per-request
  arrays of a detailed JSON are not stored.
- bench latency: ``samples`` and ``warmup`` from ``--num-iters`` / ``--num-iters-warmup``
  (JSON: the number of ``latencies``). vLLM's JSON ``date`` is the time of the run
  (local time of an unknown zone: naive).
- A JSON document (a whole file, a line of a JSONL file, an object pasted in a comment,
  even wrapped over lines) is recognised by its keys: ``request_throughput`` with
  ``completed``/``duration``/``mean_ttft_ms``/``output_throughput``; ``avg_latency`` with
  ``percentiles``/``latencies``; ``requests_per_second`` with ``tokens_per_second``/
  ``elapsed_time``. The tool: SGLang when it has ``total_output_tokens_retokenized``,
  ``mean_e2e_latency_ms``, ``server_info`` or ``accept_length``, else vLLM. Each
  Measurement's line is the line of its key, ``raw`` the key and value as written. An
  object that a terminal wrapped mid-token is read with its line breaks removed (a
  warning says so); one that is cut is a Problem at its first line. vLLM's
  ``.pytorch.json`` (results under ``extra_info``) is not read.
- Problems: a statistic line without a value (a block cut there), a value that is no
  number, a unit that is not a time or a throughput, NaN or negative values; a block
  that ends without its closing rule is a warning (its values are kept).

Speed: four scans of the text find the entry points ("Serving Benchmark Result", the
" latency: " of "Avg latency: "/"Std latency: "/"% percentile latency: ", " requests/s, ",
the three JSON keys as one pattern; _hits); only the lines of a block found are walked
(at most MAX_BLOCK_LINES), each with a few string methods and no regex when its value is
a plain number: what a label means (key, param, metric, unit, conversion) is worked out
once per spelling. The context above a result is looked at once, within
MAX_CONTEXT_CHARS; a command's $VARs are looked up by name. 10 MB of vLLM blocks (90,000
values) take 0.4 s of parser CPU (1.4 s before; tests/test_speed_llm.py pins the fast
paths to the code they replaced).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from ingest.parsers.cells import MEASUREMENT_DEFAULTS, percentile_stat, stat_direction
from ingest.parsers.jsonscan import cut_object, find_object
from ingest.text import DocText
from perfboard.model import Item, Measurement, ParamValue, Problem
from perfboard.units import ABSURD_MS, UnitError, converter, normalise, scaling

NAME = "llm_serving"
ANCHORS: tuple[str, ...] = (
    "Serving Benchmark Result",
    "Avg latency: ",
    "% percentile latency: ",
    " requests/s, ",
    '"request_throughput"',
    '"avg_latency"',
    '"requests_per_second"',
)

MAX_BLOCK_LINES = 300  # a serving block has ~40 lines; a spec-decode one a few more
MAX_CONTEXT_CHARS = 64 * 1024  # how far above a result its command and Namespace may be

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("serve", re.compile(r"Serving Benchmark Result")),
    ("latency", re.compile(r"Avg latency: ")),
    ("latency", re.compile(r"Std latency: ")),
    ("latency", re.compile(r"% percentile latency: ")),
    # Not "Throughput: ": training logs print that on every step; only vLLM's line goes on
    # with requests/s and a comma.
    ("throughput", re.compile(r" requests/s, ")),
    ("json", re.compile(r'"request_throughput"\s*:')),
    ("json", re.compile(r'"avg_latency"\s*:')),
    ("json", re.compile(r'"requests_per_second"\s*:')),
)

# _PATTERNS as _hits scans for them.
_SERVE_ANCHOR = re.compile(r"Serving Benchmark Result")
_JSON_ANCHOR = re.compile(r'"(?:request_throughput|avg_latency|requests_per_second)"\s*:')

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUM_HEAD = re.compile(rf"(?:{_NUM}|[-+]?(?i:nan|inf(?:inity)?))(?![\w.])")
_CLOSE = re.compile(r"={3,}")
_RULE = re.compile(r"-{3,}(?P<title>[^-].*?)?-{3,}")
_ENTRY = re.compile(r"(?P<label>[A-Za-z][^:]*?)[ \t]*:(?:[ \t]*(?P<value>.*?))?[ \t]*")
_STAT_LABEL = re.compile(
    r"(?P<stat>Mean|Median|Std|Avg|Average|Min|Max|P\d+(?:\.\d+)?)\s+(?P<name>.+?)"
    r"\s*\((?P<unit>[^()]*)\)"
)
_UNIT_LABEL = re.compile(r"(?P<name>.+?)\s*\((?P<unit>[^()]*)\)")
_LATENCY_LINE = re.compile(
    r"(?:(?P<avg>Avg)|(?P<std>Std)|(?P<pct>\d+(?:\.\d+)?)% percentile) latency:"
    r"[ \t]*(?P<num>\S+)?(?:[ \t]+(?P<unit>\S+))?[ \t]*"
)
_THROUGHPUT_LINE = re.compile(
    rf"Throughput:\s*(?P<req>{_NUM})\s*requests/s,\s*(?P<tok>{_NUM})\s*(?:total\s+)?tokens/s"
    rf"(?:,\s*(?P<out>{_NUM})\s*output\s+tokens/s)?"
)
_THROUGHPUT_TOTALS = re.compile(r"Total num (?P<what>prompt|output) tokens:\s*(?P<n>\d+)")
_JSON_LATENCY_KEY = re.compile(
    r"(?P<stat>mean|median|std|min|max|p\d+(?:\.\d+)?)_(?P<name>\w+?)_ms"
)
_PROBE_KEY = re.compile(r"probe_(?P<stat>mean|median|std|min|max|p\d+(?:\.\d+)?)_e2el_ms")

# Bench commands above a result, by tool and kind.
_BENCH_COMMAND = re.compile(
    r"\bvllm\s+bench\s+(?P<vsub>serve|latency|throughput)\b"
    r"|\bbenchmark_(?P<vold>serving|latency|throughput)\.py\b"
    r"|\bvllm\.benchmarks\.(?P<vmod>serve|latency|throughput)\b"
    r"|\bsglang\.(?P<sglang>bench_serving)\b|\b(?P<sgfile>bench_serving)\.py\b"
)
_SERVER_COMMAND = re.compile(
    r"\bvllm\s+serve\b|\bvllm\.entrypoints\.openai\.api_server\b|\bsglang\.launch_server\b"
)
# The words the alternatives of the two patterns above start with (_matches_at).
_BENCH_COMMAND_WORDS = ("vllm", "benchmark_", "sglang.", "bench_serving")
_SERVER_COMMAND_WORDS = ("vllm", "sglang.")
_COMMAND_WORDS = tuple(dict.fromkeys(_BENCH_COMMAND_WORDS + _SERVER_COMMAND_WORDS))
_ASSIGNMENT = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_]\w*)="
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s;]*))"
)
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>\w+)\}|(?P<plain>\w+))")
_NAMESPACE_ITEM = re.compile(
    r"(?:(?<=\()|(?<=, ))(?P<key>\w+)="
    r"(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\[\]{}]*)"
)
# vLLM's lines just above its block (SGLang prints them inside).
_PRE_BLOCK_WORDS = ("Traffic request rate", "Maximum request concurrency", "Burstiness factor")
_PRE_BLOCK = re.compile(
    r"(?m)^[ \t#>]*(?P<key>Traffic request rate|Maximum request concurrency|Burstiness factor)"
    r":[ \t]*(?P<value>\S+)"
)

# Flags (as argparse keys) a command or Namespace may give, for prefix matching: argparse
# takes "--random-input 1024" for --random-input-len.
_KNOWN_FLAGS = (
    "model",
    "model_path",
    "served_model_name",
    "backend",
    "endpoint_type",
    "dataset_name",
    "dataset_path",
    "input_len",
    "output_len",
    "random_input_len",
    "random_output_len",
    "sharegpt_output_len",
    "hf_output_len",
    "sonnet_input_len",
    "sonnet_output_len",
    "custom_output_len",
    "request_rate",
    "max_concurrency",
    "burstiness",
    "num_prompts",
    "batch_size",
    "tensor_parallel_size",
    "num_iters",
    "num_iters_warmup",
)
# Exact flags of the tools that are prefixes of one above: never read as an abbreviation.
_EXACT_FLAGS = frozenset({"endpoint", "dataset", "tokenizer", "input", "output", "num"})
_SHORT_FLAGS = {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size"}

# Throughputs of a console block: label without its unit -> metric.
_THROUGHPUT_LABELS = {
    "request throughput": "request_throughput",
    "request goodput": "request_goodput",
    "input token throughput": "input_throughput",
    "output token throughput": "output_throughput",
    "total token throughput": "total_token_throughput",
    "total throughput": "total_token_throughput",
    "peak output token throughput": "peak_output_throughput",
    "committed throughput": "diffusion_committed_throughput",
}
# Stats of a console block whose key is not the snake_case of the label (the JSON's keys).
_STAT_LABELS = {
    "successful requests": "completed",
    "failed requests": "failed",
    "benchmark duration (s)": "duration_s",
    "total input tokens": "total_input_tokens",
    "total generated tokens": "total_output_tokens",
    "total generated tokens (retokenized)": "total_output_tokens_retokenized",
    "total input text tokens": "total_input_text_tokens",
    "total input vision tokens": "total_input_vision_tokens",
    "peak concurrent requests": "max_concurrent_requests",
    "rtfx (inverse real-time factor)": "rtfx",
    "acceptance rate (%)": "spec_decode_acceptance_rate",
    "acceptance length": "spec_decode_acceptance_length",
    "drafts": "spec_decode_num_drafts",
    "draft tokens": "spec_decode_draft_tokens",
    "accepted tokens": "spec_decode_accepted_tokens",
}
# Stats that count things, printed by some versions as "23.00".
_COUNT_STATS = frozenset(
    {
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "total_output_tokens_retokenized",
        "total_input_text_tokens",
        "total_input_vision_tokens",
        "max_concurrent_requests",
        "spec_decode_num_drafts",
        "spec_decode_draft_tokens",
        "spec_decode_accepted_tokens",
    }
)
_PARAM_LABELS = {
    "backend": "backend",
    "traffic request rate": "request_rate",
    "request rate configured (rps)": "request_rate",
    "max request concurrency": "max_concurrency",
    "max reqeuest concurrency": "max_concurrency",  # SGLang's spelling in 2024
    "maximum request concurrency": "max_concurrency",
}
# Metric names of the statistics lines and JSON keys (lower case) -> metric.
_METRIC_NAMES = {
    "ttft": "ttft",
    "tpot": "tpot",
    "itl": "itl",
    "e2el": "e2e_latency",
    "e2e latency": "e2e_latency",
    "e2e_latency": "e2e_latency",
    "client queue time": "client_queue_time",
    "e2el incl. client queue": "e2e_latency_incl_client_queue",
    "e2el_including_client_queue": "e2e_latency_incl_client_queue",
    "probe e2el": "probe_e2e_latency",
}
# JSON throughputs: key -> (metric, unit as the tool means it).
_JSON_THROUGHPUTS = {
    "request_throughput": ("request_throughput", "req/s"),
    "request_goodput": ("request_goodput", "req/s"),
    "request_goodput:": ("request_goodput", "req/s"),  # vLLM's key in 2024, colon and all
    "input_throughput": ("input_throughput", "tok/s"),
    "output_throughput": ("output_throughput", "tok/s"),
    "total_token_throughput": ("total_token_throughput", "tok/s"),
    "total_throughput": ("total_token_throughput", "tok/s"),
    "max_output_tokens_per_s": ("peak_output_throughput", "tok/s"),
    "diffusion_committed_throughput": ("diffusion_committed_throughput", "tok/s"),
}
# JSON keys that are identity, not stats; per-request arrays are skipped by type.
_JSON_IDENTITY = frozenset(
    {
        "date",
        "backend",
        "endpoint_type",
        "model_id",
        "model_ids",
        "tokenizer_id",
        "request_rate",
        "max_concurrency",
        "burstiness",
        "dataset_name",
        "random_input_len",
        "random_output_len",
        "sharegpt_output_len",
        "server_info",
    }
)
_JSON_RENAMES = {"duration": "duration_s"}
_SGLANG_KEYS = ("total_output_tokens_retokenized", "mean_e2e_latency_ms", "server_info")

# Backends that name the server measured (prefix before "-chat", "-oai"...) -> framework.
_SERVERS = {
    "vllm": "vllm",
    "sglang": "sglang",
    "lmdeploy": "lmdeploy",
    "tgi": "tgi",
    "trt": "tensorrt-llm",
    "tensorrt": "tensorrt-llm",
    "deepspeed": "deepspeed-mii",
    "mii": "deepspeed-mii",
    "scalellm": "scalellm",
    "llama.cpp": "llama.cpp",
    "hf": "transformers",
}


@dataclass
class _Context:
    """What the lines above a result say about it."""

    tool: str = ""  # "vllm" or "sglang", when a bench command names it
    kind: str = ""  # "serve", "latency", "throughput"
    args: dict[str, Any] = field(default_factory=dict)  # Namespace, then command on top
    pre: dict[str, Any] = field(default_factory=dict)  # vLLM's lines above its block
    # The server command is looked for only when a run asks for its model (one whose
    # bench command names none): (text, window start, window, command word starts).
    server_at: tuple[str, int, str, list[int]] | None = field(default=None, repr=False)
    found_server_model: str | None = field(default=None, repr=False)

    @property
    def server_model(self) -> str:
        """The model the last server command above serves ("" without one)."""
        if self.found_server_model is None:
            self.found_server_model = _server_model_at(*self.server_at) if self.server_at else ""
        return self.found_server_model

    @server_model.setter
    def server_model(self, model: str) -> None:
        self.found_server_model = model


@dataclass
class _Run:
    """One result (block or JSON) before it becomes Measurements."""

    tool: str
    kind: str
    framework: str = ""
    benchmark: str = ""
    params: dict[str, ParamValue] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    testbed: dict[str, str] = field(default_factory=dict)
    samples: int | None = None
    warmup: int | None = None
    measured_at: datetime | None = None


def parse(doc: DocText) -> Iterator[Item]:
    """Measurements and Problems of every vLLM / SGLang benchmark result, in order."""
    text = doc.text
    resume = 0  # hits inside a result already read are not read again
    context_start = 0  # the lines above a result start after the previous result
    tried_json: set[int] = set()
    for pos, _, kind in _hits(text):
        if pos < resume:
            continue
        if kind == "serve":
            found = _serve_block(doc, pos, context_start)
        elif kind == "latency":
            found = _latency_lines(doc, pos, context_start)
        elif kind == "throughput":
            found = _throughput_line(doc, pos, context_start)
        else:
            found = _json_result(doc, pos, context_start, tried_json)
        if found is None:
            continue
        items, end = found
        yield from items
        resume = context_start = end


def _hits(text: str) -> list[tuple[int, int, str]]:
    """(position, pattern, kind) of every match of _PATTERNS, in text order: what
    scan.hits(text, _PATTERNS) gives, in four scans of the text instead of eight.

    The three latency anchors are found as the " latency: " they share (every occurrence,
    overlapping ones too), then told apart by the words before it; the three JSON keys
    are one pattern led by their quote (a match of one cannot overlap one of another:
    each key's quote is followed by the key, its closing quote by blanks and a colon).
    """
    found = [(m.start(), 0, "serve") for m in _SERVE_ANCHOR.finditer(text)]
    at = text.find(" latency: ")
    while at >= 0:
        if at >= 3 and text.startswith(("Avg", "Std"), at - 3, at):
            found.append((at - 3, 1 if text[at - 3] == "A" else 2, "latency"))
        elif at >= 12 and text.startswith("% percentile", at - 12, at):
            found.append((at - 12, 3, "latency"))
        at = text.find(" latency: ", at + 1)
    # str.find, twice as fast as the regex's search for a literal led by a blank; each
    # search goes on from the end of the one found, as finditer does.
    at = text.find(" requests/s, ")
    while at >= 0:
        found.append((at, 4, "throughput"))
        at = text.find(" requests/s, ", at + len(" requests/s, "))
    found += [(m.start(), 5, "json") for m in _JSON_ANCHOR.finditer(text)]
    found.sort()
    return found


# -- context above a result -----------------------------------------------------------


def _context(text: str, start: int, end: int, pre: bool = True) -> _Context:
    """The bench command, Namespace, server command and vLLM's pre-block lines above
    (`pre`: only for a run that reads them, a vLLM serving one)."""
    start = max(start, end - MAX_CONTEXT_CHARS)
    window = text[start:end]
    ctx = _Context()
    namespace = window.rfind("Namespace(")
    if namespace >= 0:
        eol = window.find("\n", namespace)
        ctx.args.update(_namespace(window[namespace : eol if eol >= 0 else len(window)]))
    # Where either kind of command may start, found once for both (a superset of each
    # pattern's words: a start of the other kind fails to match and changes nothing).
    candidates = _word_starts(window, _COMMAND_WORDS)
    commands = _matches_from(_BENCH_COMMAND, window, candidates)
    if commands:
        m = commands[-1]
        ctx.tool = "sglang" if (m.group("sglang") or m.group("sgfile")) else "vllm"
        sub = m.group("vsub") or m.group("vold") or m.group("vmod") or "serve"
        ctx.kind = "serve" if sub in ("serve", "serving", "bench_serving") else sub
        line = _logical_line(window, m.end())
        ctx.args.update(_flags(line, _variables(text, start + m.start(), line)))
    ctx.server_at = (text, start, window, candidates)
    if not pre:
        return ctx
    # _PRE_BLOCK.finditer(window), tried only at the starts of the lines that hold one of
    # its words (its (?m)^ would be tried at every position; a match lies within a line).
    for line_start in _word_line_starts(window, _PRE_BLOCK_WORDS):
        m = _PRE_BLOCK.match(window, line_start)
        if m is not None:
            ctx.pre[m.group("key")] = m.group("value").rstrip(",")
    return ctx


def _server_model_at(text: str, start: int, window: str, candidates: list[int]) -> str:
    """The model of the last server command in the window (at text[start:])."""
    servers = _matches_from(_SERVER_COMMAND, window, candidates)
    if not servers:
        return ""
    m = servers[-1]
    line = _logical_line(window, m.end())
    return _server_model(m.group(), line, _variables(text, start + m.start(), line))


def _word_line_starts(text: str, words: tuple[str, ...]) -> list[int]:
    """The starts of the lines of text that hold any of the words, in order."""
    starts: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(word, at + 1)
    return sorted(starts)


def _variables(text: str, command: int, line: str) -> dict[str, str]:
    """The shell variables set above a command at `command` (within MAX_CONTEXT_CHARS)
    that its line uses: MODEL="/data/Qwen3-8B/" -> {"MODEL": ...}.

    _resolve reads a variable only where a token says $NAME, so the others need not be
    looked for: each name used is looked up by itself (_last_assignment).
    """
    if "$" not in line:
        return {}
    start = max(0, command - MAX_CONTEXT_CHARS)
    out: dict[str, str] = {}
    for name in _used_names(line):
        value = _last_assignment(text, name, start, command)
        if value is not None:
            out[name] = value
    return out


@functools.lru_cache(maxsize=1024)
def _used_names(line: str) -> tuple[str, ...]:
    """The names of the $VARs in a command line's tokens (the ones _resolve may read)."""
    names: dict[str, None] = {}
    for token in _split_command(line):
        if "$" in token:
            for m in _VARIABLE.finditer(token):
                names[m.group("braced") or m.group("plain")] = None
    return tuple(names)


def _matches_at(pattern: re.Pattern[str], text: str, words: tuple[str, ...]) -> list[re.Match[str]]:
    """What list(pattern.finditer(text)) gives, for a pattern each of whose alternatives
    starts with one of `words` (after a \\b): tried only where a word occurs. Its
    alternation of \\b-led words has no literal prefix, so finditer tries it at every
    position of a window that may be 64 KiB, once for every result of a long log.
    """
    return _matches_from(pattern, text, _word_starts(text, words))


def _word_starts(text: str, words: tuple[str, ...]) -> list[int]:
    """Where any of the words occurs in text, in order."""
    starts: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            starts.add(at)
            at = text.find(word, at + 1)
    return sorted(starts)


def _matches_from(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """_matches_at with the places to try given (in order)."""
    found: list[re.Match[str]] = []
    end = 0
    for at in starts:
        if at < end:
            continue  # inside the match before: finditer goes on from its end
        m = pattern.match(text, at)
        if m is not None:
            found.append(m)
            end = m.end()
    return found


def _logical_line(text: str, pos: int) -> str:
    """The rest of the line at pos, with its backslash continuation lines."""
    parts = []
    while True:
        eol = text.find("\n", pos)
        line = text[pos : eol if eol >= 0 else len(text)].rstrip()
        if line.endswith("\\") and eol >= 0:
            parts.append(line[:-1])
            pos = eol + 1
            continue
        parts.append(line)
        return " ".join(parts)


def _last_assignment(text: str, name: str, start: int, end: int) -> str | None:
    """The value of the last assignment of `name` that `_ASSIGNMENT.finditer(text, start,
    end)` finds, or None.

    An assignment lies within its line and starts at the line's start (after blanks and
    "export"), so it is the last "NAME=" whose line starts at or after `start` and that
    _ASSIGNMENT matches at its line's start with this very name; one that `end` cuts
    short is matched as cut (as finditer would: matched up to `end`).
    """
    needle = name + "="
    occurrences = _occurrences(text, needle)
    index = bisect.bisect_right(occurrences, end - len(needle))
    while index > 0:
        index -= 1
        at = occurrences[index]
        line_start = text.rfind("\n", 0, at) + 1
        if line_start < start:
            return None  # this line and every one above it start before the range
        m = _ASSIGNMENT.match(text, line_start, end)
        if m is not None and m.start("name") == at and m.group("name") == name:
            return _assigned(m)
    return None


def _assigned(m: re.Match[str]) -> str:
    value = m.group("dq") if m.group("dq") is not None else m.group("sq")
    return value if value is not None else (m.group("bare") or "")


_occurrences_cache: list[tuple[str, dict[str, list[int]]]] = []


def _occurrences(text: str, needle: str) -> list[int]:
    """Where needle occurs in text (the last text's, kept): one search of the text for
    every variable name, where a log of many commands looks each up many times."""
    if not _occurrences_cache or _occurrences_cache[0][0] is not text:
        _occurrences_cache[:] = [(text, {})]
    found = _occurrences_cache[0][1]
    if needle not in found:
        positions = []
        at = text.find(needle)
        while at >= 0:
            positions.append(at)
            at = text.find(needle, at + 1)
        found[needle] = positions
    return found[needle]


def _resolve(value: str, variables: dict[str, str]) -> str | None:
    """A value with its $VARs replaced; None when one of them is not known."""
    if "$" not in value:  # most values: nothing to replace (and no closure made)
        return None if "`" in value else value
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        name = m.group("braced") or m.group("plain")
        if name not in variables:
            missing = True
            return ""
        return variables[name]

    resolved = _VARIABLE.sub(sub, value)
    return None if missing or "$" in resolved or "`" in resolved else resolved


def _tokens(line: str) -> list[str]:
    return list(_split_command(line))


@functools.lru_cache(maxsize=1024)
def _split_command(line: str) -> tuple[str, ...]:
    # A log of many runs repeats its command lines, and shlex reads 1 MB/s: split once.
    # A "#" after the command is a shell comment; shlex would also read it as one.
    try:
        return tuple(shlex.split(line, comments=True))
    except ValueError:  # an unbalanced quote in a pasted line
        return tuple(line.split())


@functools.lru_cache(maxsize=1024)
def _flag_key(raw: str) -> str:
    key = raw.lstrip("-").replace("-", "_")
    if key in _SHORT_FLAGS:
        return _SHORT_FLAGS[key]
    if key in _KNOWN_FLAGS or key in _EXACT_FLAGS:
        return key
    candidates = [k for k in _KNOWN_FLAGS if k.startswith(key)]
    return candidates[0] if len(candidates) == 1 and len(key) >= 4 else key


def _flags(line: str, variables: dict[str, str]) -> dict[str, Any]:
    """The --flags of a command line as argparse keys: {"random_input_len": 1024, ...}."""
    return dict(_command_flags(line, tuple(variables.items())))


@functools.lru_cache(maxsize=1024)
def _command_flags(line: str, assigned: tuple[tuple[str, str], ...]) -> tuple[tuple[str, Any], ...]:
    # A log of many runs repeats its command lines (and the variables they use): read
    # each once. The flags as pairs, so that no caller can change what the cache holds.
    variables = dict(assigned)
    out: dict[str, Any] = {}
    tokens = _tokens(line)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-") or token in ("-", "--") or _NUM_HEAD.fullmatch(token):
            continue
        if "=" in token:
            raw_key, value = token.split("=", 1)
        elif i < len(tokens) and (not tokens[i].startswith("-") or _NUM_HEAD.fullmatch(tokens[i])):
            raw_key, value = token, tokens[i]
            i += 1
        else:
            out[_flag_key(token)] = True
            continue
        resolved = _resolve(value, variables)
        if resolved is not None:
            out[_flag_key(raw_key)] = _scalar(resolved)
    return tuple(out.items())


def _server_model(command: str, rest: str, variables: dict[str, str]) -> str:
    """The model a server command serves: ``vllm serve MODEL``, ``--model(-path) MODEL``."""
    return _served_model(command, rest, tuple(variables.items()))


@functools.lru_cache(maxsize=1024)
def _served_model(command: str, rest: str, assigned: tuple[tuple[str, str], ...]) -> str:
    variables = dict(assigned)
    flags = _flags(rest, variables)
    for key in ("model", "model_path"):
        if isinstance(flags.get(key), str):
            return flags[key]
    if command.startswith("vllm"):
        tokens = _tokens(rest)
        if tokens and not tokens[0].startswith("-"):
            model = _resolve(tokens[0], variables) or ""
            # A model id or path, not the next word of prose ("vllm serve with ...").
            return model if re.search(r"[/\\._\-\d]", model) else ""
    return ""


def _namespace(line: str) -> dict[str, Any]:
    """Arguments of a printed ``Namespace(model='x', request_rate=inf, ...)``."""
    out: dict[str, Any] = {}
    for m in _NAMESPACE_ITEM.finditer(line):
        value = m.group("value").strip()
        if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2:
            out[m.group("key")] = value[1:-1]
        elif value not in ("None", ""):
            out[m.group("key")] = _scalar(value)
    return out


def _scalar(text: str) -> Any:
    """ "1024" -> 1024, "1.5" -> 1.5, "inf" -> "inf", "True" -> True, else the text."""
    if text.isdecimal():  # what int() reads, without the ValueErrors below
        return int(text)
    if text.replace(".", "", 1).isdecimal():  # "1.5": what float() reads and int() not
        number = float(text)
        return number if math.isfinite(number) else text
    if not text:
        return text
    low = text.lower()
    if low in ("inf", "infinity", "+inf"):
        return "inf"
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


# -- identity ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _framework(backend: str, tool: str) -> tuple[str, str]:
    """(framework, backend param or "") of a backend as the tool prints it."""
    word = backend.strip().lower()
    head = word.split("-", 1)[0]
    framework = _SERVERS.get(word) or _SERVERS.get(head) or tool
    return framework, (backend.strip() if backend.strip() and backend.strip() != framework else "")


@functools.lru_cache(maxsize=256)
def _model_name(model: str) -> str:
    """ "meta-llama/Llama-3.1-8B-Instruct" -> "Llama-3.1-8B-Instruct"; a path's last part."""
    return model.strip().rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]


def _rate(value: Any) -> ParamValue | None:
    """A request rate as a param: a finite number as float, unlimited as "inf"."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else ("inf" if value > 0 else None)
    text = str(value).strip().lower()
    if text in ("inf", "infinity", "+inf"):
        return "inf"
    if text in ("none", "not set", ""):
        return None
    try:
        number = float(text)
    except ValueError:
        return text  # "trace"
    return number if math.isfinite(number) else None


def _count(value: Any) -> int | None:
    if value is None:  # most: an argument not given
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _lengths(args: dict[str, Any]) -> dict[str, ParamValue]:
    """dataset, dataset_path, input_len and output_len from a tool's arguments."""
    if not args:  # a block without a command above it
        return {}
    out: dict[str, ParamValue] = {}
    dataset = args.get("dataset_name")
    if isinstance(dataset, str) and dataset:
        out["dataset"] = dataset
        path = args.get("dataset_path")
        if dataset == "hf" and isinstance(path, str) and path:
            out["dataset_path"] = path
    for param, keys in _length_keys(dataset if isinstance(dataset, str) else ""):
        for key in keys:
            value = args.get(key)
            if value is None:
                continue
            number = _count(value)
            if number is not None:
                out[param] = number
                break
    return out


@functools.lru_cache(maxsize=64)
def _length_keys(name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The arguments that give input_len and output_len for a dataset, in order."""
    inputs: list[str] = ["input_len"]
    outputs: list[str] = ["output_len"]
    if name.startswith("random") or not name:
        inputs.append("random_input_len")
        outputs.append("random_output_len")
    if name in ("sharegpt", ""):
        outputs.append("sharegpt_output_len")
    if name in ("hf", ""):
        outputs.append("hf_output_len")
    if name in ("sonnet", ""):
        inputs.append("sonnet_input_len")
        outputs.append("sonnet_output_len")
    if name in ("custom", ""):
        outputs.append("custom_output_len")
    return (("input_len", tuple(inputs)), ("output_len", tuple(outputs)))


def _args_for(ctx: _Context, tool: str, kind: str) -> dict[str, Any]:
    """The context's arguments when its command ran this tool's benchmark of this kind."""
    if ctx.tool and (ctx.tool != tool or (ctx.kind and ctx.kind != kind)):
        return {}
    return ctx.args


def _fill_run(run: _Run, ctx: _Context, backend: str | None, model: str | None) -> None:
    """Framework, benchmark and params of a run from what it printed and its context."""
    args = _args_for(ctx, run.tool, run.kind)
    if not backend:
        value = args.get("backend") or args.get("endpoint_type")
        backend = value if isinstance(value, str) else ""
    run.framework, backend_param = _framework(backend, run.tool)
    if backend_param:
        run.params.setdefault("backend", backend_param)
    if not model:
        for key in ("model", "model_path", "served_model_name"):
            if isinstance(args.get(key), str) and args[key]:
                model = args[key]
                break
        else:
            model = ctx.server_model
    if model:
        run.benchmark = _model_name(model)
        run.stats.setdefault("model", model)
    if run.kind == "serve":
        pre = ctx.pre if run.tool == "vllm" else {}
        rate = _rate(pre.get("Traffic request rate", args.get("request_rate")))
        if rate is not None:
            run.params.setdefault("request_rate", rate)
        concurrency = _count(pre.get("Maximum request concurrency", args.get("max_concurrency")))
        if concurrency is not None:
            run.params.setdefault("max_concurrency", concurrency)
        burst = _scalar(str(pre.get("Burstiness factor", args.get("burstiness", ""))))
        if isinstance(burst, int | float) and not isinstance(burst, bool) and burst != 1:
            run.params.setdefault("burstiness", float(burst))
        prompts = _count(args.get("num_prompts"))
        if prompts is not None:
            run.stats.setdefault("num_prompts", prompts)
    else:
        for key in ("batch_size", "tensor_parallel_size"):
            number = _count(args.get(key))
            if number is not None:
                run.params.setdefault(key, number)
        if run.kind == "latency":
            run.samples = _count(args.get("num_iters"))
            run.warmup = _count(args.get("num_iters_warmup"))
        else:
            prompts = _count(args.get("num_prompts"))
            if prompts is not None:
                run.stats.setdefault("num_prompts", prompts)
    for key, value in _lengths(args).items():
        run.params.setdefault(key, value)


def _stat(word: str) -> str:
    """ "Mean" -> "mean", "Avg" -> "mean", "P99" -> "p99", "99.0" -> "p99", "P99.9" -> "p99.9"."""
    low = word.lower()
    if low in ("avg", "average"):
        return "mean"
    if low in ("mean", "median", "std", "min", "max"):
        return low
    number = low.lstrip("p").rstrip("%")
    try:
        return percentile_stat(float(number))
    except ValueError:
        return low


def _metric(name: str) -> str:
    low = " ".join(name.lower().split())
    if low in _METRIC_NAMES:
        return _METRIC_NAMES[low]
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")


def _snake(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _measurement(
    run: _Run,
    metric: str,
    q_value: float,
    unit: str,
    direction: str,
    line: int,
    raw: str,
    stat: str | None = None,
) -> Measurement:
    params = dict(run.params)
    if stat is not None:
        params["stat"] = stat
    return Measurement(
        benchmark=run.benchmark,
        metric=metric,
        value=q_value,
        unit=unit,
        direction=stat_direction(direction, stat),  # type: ignore[arg-type]
        framework=run.framework,
        params=params,
        testbed=dict(run.testbed),
        measured_at=run.measured_at,
        samples=run.samples,
        warmup=run.warmup,
        stats=dict(run.stats),
        line=line,
        raw=raw,
    )


def _quantity(value: Any, unit: str, kind: str) -> tuple[float, str, str] | str:
    """(value, canonical unit, direction) or the reason the value cannot be stored."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"value {value!r} is not a number"
    try:
        q = normalise(float(value), unit)
    except UnitError as e:
        return str(e)
    if q.kind != kind:
        return f"unit {unit!r} is not a {kind}"
    return q.value, q.unit, q.direction


# -- serving block ----------------------------------------------------------------------
#
# A dense log holds thousands of blocks of the same ~25 labels: what a label means (its
# key, metric, unit, stat, whether it marks SGLang) is worked out once per spelling
# (_label), and a unit's conversion once per unit (_conversion); each line costs a find, a
# strip and a split at its colon, each value a float and a Measurement.


# (convert, canonical unit, its kind, direction) of a unit, or why it is none (_conversion)
_Conversion = tuple[Callable[[float], float], str, str, str, int, float, float] | str
# (metric, unit, kind, stat, the unit's _conversion) of a label that gives a value
_Metric = tuple[str, str, str, str | None, _Conversion]
# (line, raw, label, value as written, _Label.metric)
_Pending = tuple[int, str, str, str, _Metric]


class _Label(NamedTuple):
    """What a block's label says, whatever its value."""

    key: str  # lower case, single spaces: "mean ttft (ms)"
    param: str | None  # the param it gives (_PARAM_LABELS)
    sglang: bool  # only SGLang prints it (_is_sglang)
    metric: _Metric | None  # what its value is a value of


@functools.lru_cache(maxsize=4096)
def _label(label: str) -> _Label:
    key = " ".join(label.lower().split())
    sglang = key in _SGLANG_LABELS or "e2e latency" in key
    metric: _Metric | None = None
    stat_line = _STAT_LABEL.fullmatch(label)
    if stat_line:  # "Mean TTFT (ms)"
        unit = stat_line.group("unit")
        metric = (
            _metric(stat_line.group("name")),
            unit,
            "time",
            _stat(stat_line.group("stat")),
            _conversion(unit, "time"),
        )
    else:  # "Request throughput (req/s)"
        m = _UNIT_LABEL.fullmatch(key)
        if m is not None and m.group("name") in _THROUGHPUT_LABELS:
            unit = m.group("unit")
            metric = (
                _THROUGHPUT_LABELS[m.group("name")],
                unit,
                "throughput",
                None,
                _conversion(unit, "throughput"),
            )
    return _Label(key, _PARAM_LABELS.get(key), sglang, metric)


@functools.lru_cache(maxsize=4096)
def _stat_name(key: str) -> str:
    """The stats key of a block's "Label: value" line."""
    return _STAT_LABELS.get(key) or _snake(key)


_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_SGLANG_LABELS = frozenset(
    {"backend", "concurrency", "total generated tokens (retokenized)", "accept length"}
)


@functools.lru_cache(maxsize=1024)
def _conversion(unit: str, kind: str) -> _Conversion:
    """(convert, canonical unit, its kind, direction, divisor, factor, largest value) of a
    unit, or why it is no unit: what _quantity does for a value, the unit looked up once.

    convert is perfboard.units' (it raises the errors); the divisor and factor are how it
    converts (units.scaling), so that _block_values converts a plain value inline and
    calls it for any other (NaN, infinite, negative, or beyond the largest value).
    """
    try:
        convert = converter(unit)
    except UnitError as e:
        return str(e)
    q = normalise(0.0, unit)  # 0 is no NaN, negative or absurd value: only the unit speaks
    divisor, factor, _ = scaling(unit)
    largest = ABSURD_MS if q.kind == "time" else math.inf
    return convert, q.unit, q.kind, q.direction, divisor, factor, largest


def _serve_block(doc: DocText, pos: int, context_start: int) -> tuple[list[Item], int] | None:
    text = doc.text
    line_start, line_end = doc.line_bounds(pos)
    header = text[line_start:line_end]
    eq = header.find("=")
    if eq < 0 or "=" not in header[pos - line_start :]:
        return None  # prose naming the block, not the block
    prefix = header[:eq]
    skip = len(prefix)
    number = doc.line_at(line_start)
    size = len(text)
    closed = False
    end = line_end
    cursor = line_end + 1
    sglang = False
    items: list[Item] = []  # the cut lines' Problems, then the values in line order
    pending: list[_Pending] = []  # values to store as Measurements, once the run is known
    stats: dict[str, Any] = {"tool": None}  # first, as the slow path put it
    params: dict[str, ParamValue] = {}
    backend = ""
    last_line, last_raw = 0, None  # of the last "Label: value" line
    subheading = ""  # "Per-position acceptance (%):" above indented "  Position 0: 85.00"
    # A line holds the header only if the header's next occurrence is on it: one search
    # per block instead of one per line.
    header_next = text.find("Serving Benchmark Result", cursor)
    if header_next < 0:
        header_next = size
    for _ in range(MAX_BLOCK_LINES):
        if cursor > size:
            break
        eol = text.find("\n", cursor)
        if eol < 0:
            eol = size
        raw = text[cursor:eol]
        body = raw[skip:] if prefix and raw.startswith(prefix) else raw
        s = body.strip()
        number += 1
        if not s:
            break
        first = s[0]
        if first == "=":  # the closing rule, else no line of a block
            if _CLOSE.fullmatch(s):
                closed, end = True, eol
            break
        if header_next < eol:
            if "Serving Benchmark Result" in s:
                break
            header_next = text.find("Serving Benchmark Result", eol)  # in its prefix
            if header_next < 0:
                header_next = size
        if first == "-":  # a section's rule, else no line of a block
            if not _is_rule(s):
                break
            end, cursor = eol, eol + 1
            continue
        # "Label:   value": _ENTRY.fullmatch(s), at C speed (a letter, no colon in the label)
        colon = s.find(":")
        if colon < 1 or first not in _LETTERS:
            break
        label = s[:colon].strip()
        value = s[colon + 1 :].lstrip(" \t")
        end = eol
        cursor = eol + 1
        last_line, last_raw = number, raw
        key, param, marks_sglang, metric = _label(label)
        if marks_sglang:
            sglang = True
        if subheading:
            if body[0] in " \t":
                key = f"{subheading} {key}"
                param = _PARAM_LABELS.get(key)
            else:
                subheading = ""
        if metric is not None and param is None:
            pending.append((number, raw, label, value, metric))  # most lines of a block
            continue
        # The number the value starts with (_NUM_HEAD), and what _scalar makes of it: most
        # values are nothing but digits, with a point or without.
        if value.isdecimal():
            head, number_value = value, int(value)
        elif value.replace(".", "", 1).isdecimal():
            head, number_value = value, float(value)
        else:
            head_match = _NUM_HEAD.match(value)
            head = head_match.group() if head_match is not None else None
            number_value = _scalar(head) if head is not None else None
        if param is not None:
            words = value.split()
            if param == "backend":
                backend = words[0] if words else ""
            elif param == "request_rate":
                rate = _rate(words[0] if words else "")
                if rate is not None:
                    params["request_rate"] = rate
            else:
                count = _count(head or "")
                if count is not None:
                    params["max_concurrency"] = count
        elif head:
            name = _stat_name(key)
            if (
                name in _COUNT_STATS
                and isinstance(number_value, float)
                and number_value.is_integer()
            ):
                number_value = int(number_value)  # "Peak concurrent requests: 23.00" is a count
            stats[name] = number_value
        elif value:
            stats[_stat_name(key)] = value
        elif key in _STAT_LABELS:
            items.append(Problem(number, f"{label}: no value (line cut?)", raw, NAME))
        else:  # an empty label of no known kind heads the indented lines below it
            subheading = key
    tool = "sglang" if sglang else "vllm"
    if stats["tool"] is None:
        stats["tool"] = "sglang.bench_serving" if sglang else "vllm bench serve"
    run = _Run(tool=tool, kind="serve", params=params, stats=stats)
    _fill_run(run, _context(text, context_start, line_start, not sglang), backend, None)
    cut_lines = bool(items)  # their Problems come before the values of lines above them
    items += _block_values(run, pending)
    if not closed and not (items and isinstance(items[-1], Problem) and "cut" in items[-1].reason):
        items.append(
            Problem(
                doc.line_at(line_start) if last_raw is None else last_line,
                "serving result block ends without its closing ===== line (cut?)",
                header if last_raw is None else last_raw,
                NAME,
                severity="warning",
            )
        )
    if cut_lines:  # else the items are in line order: the values', then the last line's
        items.sort(key=_line_of)
    return items, end


@functools.lru_cache(maxsize=1024)
def _is_rule(line: str) -> bool:
    """A section's rule, "-----Time to First Token-----" (the same few in every block)."""
    return _RULE.fullmatch(line) is not None


def _line_of(item: Item) -> int:
    return item.line


_DEFAULTS = MEASUREMENT_DEFAULTS
_TASK, _DEVICE, _PROJECT, _VERSION, _STATUS, _RUN_NUMBER = (
    _DEFAULTS[name] for name in ("task", "device", "project", "version", "status", "run")
)


def _block_values(run: _Run, pending: list[_Pending]) -> list[Item]:
    """The Measurements (or Problems) of a block's statistics and throughputs."""
    items: list[Item] = []
    # What every Measurement of the run shares, looked up once.
    benchmark, framework, params, testbed = run.benchmark, run.framework, run.params, run.testbed
    stats, measured_at, samples, warmup = run.stats, run.measured_at, run.samples, run.warmup
    for line, raw, label, written, (metric, unit, kind, stat, conversion) in pending:
        # The number the value starts with (_NUM_HEAD): most values are nothing but
        # digits, with a point or without.
        if written.isdecimal() or written.replace(".", "", 1).isdecimal():
            head = written
        elif not written:
            items.append(Problem(line, f"{label}: no value (line cut?)", raw, NAME))
            continue
        else:
            head_match = _NUM_HEAD.match(written)
            if head_match is None:
                items.append(Problem(line, f"{label}: {written!r} is not a number", raw, NAME))
                continue
            head = head_match.group()
        if isinstance(conversion, str):
            items.append(Problem(line, f"{label}: {conversion}", raw, NAME))
            continue
        convert, canon, unit_kind, direction, divisor, factor, largest = conversion
        number = float(head)
        try:
            if 0.0 <= number < math.inf:  # what convert does for a plain number
                value = number / divisor if divisor else number * factor
                if value > largest:
                    value = convert(number)  # raises its error
            else:
                value = convert(number)
        except UnitError as e:
            items.append(Problem(line, f"{label}: {e}", raw, NAME))
            continue
        if unit_kind != kind:
            items.append(Problem(line, f"{label}: unit {unit!r} is not a {kind}", raw, NAME))
            continue
        point_params = dict(params)
        if stat is not None:
            point_params["stat"] = stat
        items.append(
            Measurement(  # by position (cells.MEASUREMENT_FIELDS): a third faster than by keyword
                benchmark,
                metric,
                value,
                canon,
                _TASK,
                "lower" if stat == "std" else direction,  # type: ignore[arg-type]
                framework,
                _DEVICE,
                point_params,
                dict(testbed),
                _PROJECT,
                _VERSION,
                measured_at,
                _STATUS,
                samples,
                warmup,
                dict(stats),
                _RUN_NUMBER,
                line,
                raw,
            )
        )
    return items


# -- vllm bench latency / throughput ------------------------------------------------------


def _latency_lines(doc: DocText, pos: int, context_start: int) -> tuple[list[Item], int] | None:
    text = doc.text
    start, end = doc.line_bounds(pos)
    lines: list[tuple[int, str, re.Match[str]]] = []
    cursor = start
    number = doc.line_at(start)
    while cursor <= len(text) and len(lines) < MAX_BLOCK_LINES:
        eol = text.find("\n", cursor)
        eol = len(text) if eol < 0 else eol
        raw = text[cursor:eol]
        m = _LATENCY_LINE.search(raw)
        if m is None or raw[: m.start()].strip(" \t#>`") != "":
            break
        lines.append((number, raw, m))
        end, cursor, number = eol, eol + 1, number + 1
    if not lines:
        return None
    ours = any(m.group("pct") for _, _, m in lines) or any(
        (m.group("unit") or "") == "seconds" for _, _, m in lines
    )
    if not ours:
        return None
    ctx = _context(text, context_start, start, pre=False)  # not a serving run
    run = _Run(tool="vllm", kind="latency")
    run.stats["tool"] = "vllm bench latency"
    _fill_run(run, ctx, None, None)
    items: list[Item] = []
    for line, raw, m in lines:
        stat = "mean" if m.group("avg") else "std" if m.group("std") else _stat(m.group("pct"))
        num, unit = m.group("num"), m.group("unit") or ""
        if not num:
            items.append(Problem(line, "latency line: no value (line cut?)", raw, NAME))
            continue
        value = _scalar(num)
        if unit in ("seconds", "second"):
            unit = "s"
        if not unit:
            items.append(Problem(line, f"latency value {num!r} has no unit (line cut?)", raw, NAME))
            continue
        q = _quantity(value if not isinstance(value, str) else num, unit, "time")
        if isinstance(q, str):
            items.append(Problem(line, f"latency line: {q}", raw, NAME))
            continue
        items.append(_measurement(run, "latency", q[0], q[1], q[2], line, raw, stat))
    return items, end


def _throughput_line(doc: DocText, pos: int, context_start: int) -> tuple[list[Item], int] | None:
    text = doc.text
    start, end = doc.line_bounds(pos)
    raw = text[start:end]
    m = _THROUGHPUT_LINE.search(raw)
    if m is None:
        return None
    line = doc.line_at(start)
    ctx = _context(text, context_start, start, pre=False)  # not a serving run
    run = _Run(tool="vllm", kind="throughput")
    run.stats["tool"] = "vllm bench throughput"
    # The two lines after it: "Total num prompt tokens:  N", "Total num output tokens:  N".
    cursor = end + 1
    for _ in range(2):
        eol = text.find("\n", cursor)
        eol = len(text) if eol < 0 else eol
        totals = _THROUGHPUT_TOTALS.search(text, cursor, eol)
        if totals is None:
            break
        key = "total_input_tokens" if totals.group("what") == "prompt" else "total_output_tokens"
        run.stats[key] = int(totals.group("n"))
        end, cursor = eol, eol + 1
    _fill_run(run, ctx, None, None)
    items: list[Item] = []
    for group, metric, unit in (
        ("req", "request_throughput", "req/s"),
        ("tok", "total_token_throughput", "tok/s"),
        ("out", "output_throughput", "tok/s"),
    ):
        if m.group(group) is None:
            continue
        q = _quantity(float(m.group(group)), unit, "throughput")
        if isinstance(q, str):
            items.append(Problem(line, f"throughput line: {q}", raw, NAME))
            continue
        items.append(_measurement(run, metric, q[0], q[1], q[2], line, raw))
    return items, end


# -- JSON results -------------------------------------------------------------------------


def _json_kind(obj: dict[str, Any]) -> str:
    if "request_throughput" in obj and any(
        k in obj for k in ("completed", "duration", "mean_ttft_ms", "output_throughput")
    ):
        return "serve"
    if "avg_latency" in obj and ("percentiles" in obj or "latencies" in obj):
        return "latency"
    if "requests_per_second" in obj and ("tokens_per_second" in obj or "elapsed_time" in obj):
        return "throughput"
    return ""


def _json_result(
    doc: DocText, pos: int, context_start: int, tried: set[int]
) -> tuple[list[Item], int] | None:
    text = doc.text
    key = text[pos + 1 : text.index('"', pos + 1)]
    obj, start, end, joined = find_object(text, pos, key, context_start, tried)
    if obj is None:
        if start < 0:
            return None
        problem, line_end = cut_object(doc, start, "benchmark result JSON object", NAME)
        return [problem], max(pos + 1, line_end)
    kind = _json_kind(obj)
    if not kind:
        return None
    ctx = _context(text, context_start, start)
    span = _Span(doc, start, end)
    items: list[Item] = []
    if joined:
        items.append(
            Problem(
                doc.line_at(start),
                "result JSON is wrapped over lines: read with its line breaks removed",
                span.line_text(start),
                NAME,
                severity="warning",
            )
        )
    if kind == "serve":
        items += _json_serving(obj, ctx, span)
    elif kind == "latency":
        items += _json_latency(obj, ctx, span)
    else:
        items += _json_throughput(obj, ctx, span)
    items.sort(key=lambda item: item.line)
    return items, end


class _Span:
    """Where the keys of one JSON object are, for line numbers and raw text."""

    def __init__(self, doc: DocText, start: int, end: int) -> None:
        self.doc, self.start, self.end = doc, start, end
        self._cursor = start

    def find(self, key: str, after: int | None = None) -> int:
        """Where a key is written. Keys are looked for in the object's order, each from
        the last one found (a detailed result holds megabytes of arrays between them)."""
        text = self.doc.text
        needle = f'"{key}"'
        start = self._cursor if after is None else max(after, self._cursor)
        pos = text.find(needle, start, self.end)
        if pos < 0:
            pos = text.find(needle, self.start if after is None else after, self.end)
        if pos < 0:
            return self.start
        self._cursor = pos
        return pos

    def line(self, pos: int) -> int:
        return self.doc.line_at(pos)

    def line_text(self, pos: int) -> str:
        start, end = self.doc.line_bounds(pos)
        return self.doc.text[start : min(end, start + 2000)]

    def raw(self, pos: int) -> str:
        """'"mean_ttft_ms": 95.63' as written (a scalar value; a nested one is cut short)."""
        text = self.doc.text
        m = re.compile(r'"[^"\n]*"\s*:\s*(?:"[^"\n]*"|[^,}\]\n]*)').match(text, pos, self.end)
        return m.group().strip() if m else self.line_text(pos)


def _json_identity(obj: dict[str, Any], run: _Run) -> tuple[str, str]:
    """Backend and model named by a serving result."""
    backend = obj.get("backend") or obj.get("endpoint_type") or ""
    model = obj.get("model_id")
    if not isinstance(model, str) or not model:
        ids = obj.get("model_ids")
        model = "+".join(_model_name(str(i)) for i in ids) if isinstance(ids, list) and ids else ""
    info = obj.get("server_info")
    if isinstance(info, dict) and "decode" in info and isinstance(info["decode"], list):
        info = info["decode"][0] if info["decode"] and isinstance(info["decode"][0], dict) else info
    if isinstance(info, dict):
        if not model and isinstance(info.get("model_path"), str):
            model = info["model_path"]
        if isinstance(info.get("version"), str):
            run.testbed["sglang"] = info["version"]
    return (backend if isinstance(backend, str) else ""), model


def _json_serving(obj: dict[str, Any], ctx: _Context, span: _Span) -> list[Item]:
    sglang = any(k in obj for k in _SGLANG_KEYS) or (
        "accept_length" in obj and "model_id" not in obj
    )
    tool = "sglang" if sglang else "vllm"
    run = _Run(tool=tool, kind="serve")
    run.stats["tool"] = "sglang.bench_serving" if sglang else "vllm bench serve"
    backend, model = _json_identity(obj, run)
    rate = _rate(obj.get("request_rate"))
    if rate is not None:
        run.params["request_rate"] = rate
    concurrency = _count(obj.get("max_concurrency"))
    if concurrency is not None:
        run.params["max_concurrency"] = concurrency
    burst = obj.get("burstiness")
    if isinstance(burst, int | float) and not isinstance(burst, bool) and burst != 1:
        run.params["burstiness"] = float(burst)
    if sglang:
        for key, value in _lengths(obj).items():
            run.params[key] = value
    date = obj.get("date")
    if isinstance(date, str):
        try:
            run.measured_at = datetime.strptime(date, "%Y%m%d-%H%M%S")
        except ValueError:
            run.stats["date"] = date
    metrics: list[tuple[str, Any]] = []
    for key, value in obj.items():
        if (
            key in _JSON_THROUGHPUTS
            or _PROBE_KEY.fullmatch(key)
            or _JSON_LATENCY_KEY.fullmatch(key)
        ):
            metrics.append((key, value))
        elif key not in _JSON_IDENTITY and _is_scalar(value):
            run.stats[_JSON_RENAMES.get(key, key)] = value
    _fill_run(run, ctx, backend, model or None)
    items: list[Item] = []
    for key, value in metrics:
        if value is None:
            continue  # not measured (request_goodput without --goodput)
        pos = span.find(key)
        if key in _JSON_THROUGHPUTS:
            metric, unit = _JSON_THROUGHPUTS[key]
            kind, stat = "throughput", None
        else:
            m = _PROBE_KEY.fullmatch(key)
            if m:
                metric, stat = "probe_e2e_latency", _stat(m.group("stat"))
            else:
                m = _JSON_LATENCY_KEY.fullmatch(key)
                assert m is not None
                metric, stat = _metric(m.group("name")), _stat(m.group("stat"))
            unit, kind = "ms", "time"
        q = _quantity(value, unit, kind)
        if isinstance(q, str):
            items.append(Problem(span.line(pos), f"{key}: {q}", span.raw(pos), NAME))
            continue
        items.append(
            _measurement(run, metric, q[0], q[1], q[2], span.line(pos), span.raw(pos), stat)
        )
    return items


def _is_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)


def _json_latency(obj: dict[str, Any], ctx: _Context, span: _Span) -> list[Item]:
    run = _Run(tool="vllm", kind="latency")
    run.stats["tool"] = "vllm bench latency"
    _fill_run(run, ctx, None, None)
    latencies = obj.get("latencies")
    if isinstance(latencies, list):
        run.samples = len(latencies)
    values: list[tuple[str, Any, int]] = []
    for key, stat in (("avg_latency", "mean"), ("std_latency", "std")):
        if key in obj:
            values.append((stat, obj[key], span.find(key)))
    percentiles = obj.get("percentiles")
    if isinstance(percentiles, dict):
        base = span.find("percentiles")
        for key, value in percentiles.items():
            values.append((_stat(str(key)), value, span.find(str(key), base)))
    items: list[Item] = []
    for stat, value, pos in values:
        q = _quantity(value, "s", "time")
        if isinstance(q, str):
            items.append(Problem(span.line(pos), f"latency {stat}: {q}", span.raw(pos), NAME))
            continue
        items.append(
            _measurement(run, "latency", q[0], q[1], q[2], span.line(pos), span.raw(pos), stat)
        )
    return items


def _json_throughput(obj: dict[str, Any], ctx: _Context, span: _Span) -> list[Item]:
    run = _Run(tool="vllm", kind="throughput")
    run.stats["tool"] = "vllm bench throughput"
    for key, name in (
        ("elapsed_time", "elapsed_s"),
        ("num_requests", "num_requests"),
        ("total_num_tokens", "total_num_tokens"),
    ):
        if _is_scalar(obj.get(key)):
            run.stats[name] = obj[key]
    _fill_run(run, ctx, None, None)
    items: list[Item] = []
    for key, metric, unit in (
        ("requests_per_second", "request_throughput", "req/s"),
        ("tokens_per_second", "total_token_throughput", "tok/s"),
    ):
        if obj.get(key) is None:
            continue
        pos = span.find(key)
        q = _quantity(obj[key], unit, "throughput")
        if isinstance(q, str):
            items.append(Problem(span.line(pos), f"{key}: {q}", span.raw(pos), NAME))
            continue
        items.append(_measurement(run, metric, q[0], q[1], q[2], span.line(pos), span.raw(pos)))
    return items
