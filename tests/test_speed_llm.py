"""The fast paths of ingest.parsers.llm_serving pinned to the code they replaced.

The serving block reader (_serve_block) and the context above a result (_context: the
command's flags and shell variables) were rewritten for speed (issue 15). The functions
below are main's as they were before (2a7eaff), unchanged; `_reference_parse` runs
llm_serving.parse with them in place of the new ones, and every test here asserts that
both give the same items, field for field (their reprs: 1000 and 1000.0 differ), on the
real fixtures and on variants made to embarrass a fast path.
"""

# ruff: noqa: E501

from __future__ import annotations

import bisect
import math
import random
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any

import pytest

from ingest.parsers import llm_serving as lm
from ingest.parsers.llm_serving import (
    _ASSIGNMENT,
    _BENCH_COMMAND,
    _BENCH_COMMAND_WORDS,
    _CLOSE,
    _COUNT_STATS,
    _ENTRY,
    _EXACT_FLAGS,
    _KNOWN_FLAGS,
    _NUM_HEAD,
    _PARAM_LABELS,
    _PRE_BLOCK,
    _PRE_BLOCK_WORDS,
    _RULE,
    _SERVER_COMMAND,
    _SERVER_COMMAND_WORDS,
    _SERVERS,
    _SHORT_FLAGS,
    _STAT_LABEL,
    _STAT_LABELS,
    _THROUGHPUT_LABELS,
    _UNIT_LABEL,
    _VARIABLE,
    MAX_BLOCK_LINES,
    MAX_CONTEXT_CHARS,
    NAME,
    _Context,
    _count,
    _fill_run,
    _logical_line,
    _matches_at,
    _measurement,
    _metric,
    _namespace,
    _quantity,
    _rate,
    _Run,
    _snake,
    _stat,
    _tokens,
)
from ingest.text import DocText, read_text_file
from perfboard.model import DocMeta, Item, Measurement, ParamValue, Problem
from tests.conftest import ROOT

# -- the reference: main's code before the fast paths (2a7eaff) ---------------------------

_index_cache: list[tuple[str, list[re.Match[str]], list[int]]] = []


def _context(text: str, start: int, end: int) -> _Context:
    """The bench command, Namespace, server command and vLLM's pre-block lines above."""
    start = max(start, end - MAX_CONTEXT_CHARS)
    window = text[start:end]
    ctx = _Context()
    namespace = window.rfind("Namespace(")
    if namespace >= 0:
        eol = window.find("\n", namespace)
        ctx.args.update(_namespace(window[namespace : eol if eol >= 0 else len(window)]))
    commands = _matches_at(_BENCH_COMMAND, window, _BENCH_COMMAND_WORDS)
    if commands:
        m = commands[-1]
        ctx.tool = "sglang" if (m.group("sglang") or m.group("sgfile")) else "vllm"
        sub = m.group("vsub") or m.group("vold") or m.group("vmod") or "serve"
        ctx.kind = "serve" if sub in ("serve", "serving", "bench_serving") else sub
        variables = _assignments(
            text, max(0, start + m.start() - MAX_CONTEXT_CHARS), start + m.start()
        )
        ctx.args.update(_flags(_logical_line(window, m.end()), variables))
    servers = _matches_at(_SERVER_COMMAND, window, _SERVER_COMMAND_WORDS)
    if servers:
        m = servers[-1]
        variables = _assignments(
            text, max(0, start + m.start() - MAX_CONTEXT_CHARS), start + m.start()
        )
        ctx.server_model = _server_model(m.group(), _logical_line(window, m.end()), variables)
    if any(word in window for word in _PRE_BLOCK_WORDS):  # a scan of every line else
        for m in _PRE_BLOCK.finditer(window):
            ctx.pre[m.group("key")] = m.group("value").rstrip(",")
    return ctx


def _assignments(text: str, start: int, end: int) -> dict[str, str]:
    """Shell variables set above a command: MODEL="/data/Qwen3-8B/" -> {"MODEL": ...}.

    What `_ASSIGNMENT.finditer(text, start, end)` finds, taken from one scan of the whole
    text: each command looks 64 KiB back, so a log of many benchmark runs would scan each
    stretch again for every command in it. An assignment lies within its line and starts
    at the line's start, so the matches in a range are the text's matches that start in
    it, except the one its end cuts short, which is matched again as cut.
    """
    matches, starts = _assignment_index(text)
    out: dict[str, str] = {}
    for index in range(bisect.bisect_left(starts, start), len(matches)):
        m: re.Match[str] | None = matches[index]
        assert m is not None
        if m.start() >= end:
            break
        if m.end() > end:  # its line runs past the end: any later line starts after it
            m = _ASSIGNMENT.match(text, m.start(), end)
            if m is None:
                break
        value = m.group("dq") if m.group("dq") is not None else m.group("sq")
        out[m.group("name")] = value if value is not None else (m.group("bare") or "")
        if m.end() >= end:
            break
    return out


def _assignment_index(text: str) -> tuple[list[re.Match[str]], list[int]]:
    """Every assignment in the text and where each starts (the last text's, kept)."""
    if _index_cache and _index_cache[0][0] is text:
        return _index_cache[0][1], _index_cache[0][2]
    matches = list(_ASSIGNMENT.finditer(text))
    _index_cache[:] = [(text, matches, [m.start() for m in matches])]
    return matches, _index_cache[0][2]


def _resolve(value: str, variables: dict[str, str]) -> str | None:
    """A value with its $VARs replaced; None when one of them is not known."""
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
    return out


def _server_model(command: str, rest: str, variables: dict[str, str]) -> str:
    """The model a server command serves: ``vllm serve MODEL``, ``--model(-path) MODEL``."""
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


def _scalar(text: str) -> Any:
    """ "1024" -> 1024, "1.5" -> 1.5, "inf" -> "inf", "True" -> True, else the text."""
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


def _framework(backend: str, tool: str) -> tuple[str, str]:
    """(framework, backend param or "") of a backend as the tool prints it."""
    word = backend.strip().lower()
    head = word.split("-", 1)[0]
    framework = _SERVERS.get(word) or _SERVERS.get(head) or tool
    return framework, (backend.strip() if backend.strip() and backend.strip() != framework else "")


def _model_name(model: str) -> str:
    """ "meta-llama/Llama-3.1-8B-Instruct" -> "Llama-3.1-8B-Instruct"; a path's last part."""
    return model.strip().rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]


def _lengths(args: dict[str, Any]) -> dict[str, ParamValue]:
    """dataset, dataset_path, input_len and output_len from a tool's arguments."""
    out: dict[str, ParamValue] = {}
    dataset = args.get("dataset_name")
    if isinstance(dataset, str) and dataset:
        out["dataset"] = dataset
        path = args.get("dataset_path")
        if dataset == "hf" and isinstance(path, str) and path:
            out["dataset_path"] = path
    name = dataset if isinstance(dataset, str) else ""
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
    for param, keys in (("input_len", inputs), ("output_len", outputs)):
        for key in keys:
            number = _count(args.get(key))
            if number is not None:
                out[param] = number
                break
    return out


@dataclass
class _Entry:
    line: int
    raw: str
    label: str
    value: str
    indented: bool = False


def _serve_block(doc: DocText, pos: int, context_start: int) -> tuple[list[Item], int] | None:
    text = doc.text
    line_start, line_end = doc.line_bounds(pos)
    header = text[line_start:line_end]
    eq = header.find("=")
    if eq < 0 or "=" not in header[pos - line_start :]:
        return None  # prose naming the block, not the block
    prefix = header[:eq]
    number = doc.line_at(line_start)
    entries: list[_Entry] = []
    closed = False
    end = line_end
    cursor = line_end + 1
    for _ in range(MAX_BLOCK_LINES):
        if cursor > len(text):
            break
        eol = text.find("\n", cursor)
        eol = len(text) if eol < 0 else eol
        raw = text[cursor:eol]
        body = raw[len(prefix) :] if prefix and raw.startswith(prefix) else raw
        s = body.strip()
        number += 1
        if _CLOSE.fullmatch(s):
            closed, end = True, eol
            break
        if "Serving Benchmark Result" in s or not s:
            break
        if _RULE.fullmatch(s):
            end, cursor = eol, eol + 1
            continue
        m = _ENTRY.fullmatch(s)
        if m is None:
            break
        label, value = m.group("label").strip(), m.group("value") or ""
        entries.append(_Entry(number, raw, label, value, body[:1] in (" ", "\t")))
        end, cursor = eol, eol + 1
    tool = "sglang" if _is_sglang(entries) else "vllm"
    ctx = _context(text, context_start, line_start)
    run = _Run(tool=tool, kind="serve")
    run.stats["tool"] = "sglang.bench_serving" if tool == "sglang" else "vllm bench serve"
    items: list[Item] = []
    backend = ""
    pending: list[tuple[_Entry, re.Match[str] | None]] = []  # values to store as Measurements
    subheading = ""  # "Per-position acceptance (%):" above indented "  Position 0: 85.00"
    for entry in entries:
        key = " ".join(entry.label.lower().split())
        head = _NUM_HEAD.match(entry.value)
        words = entry.value.split()
        if not entry.indented:
            subheading = ""
        elif subheading:
            key = f"{subheading} {key}"
        if key in _PARAM_LABELS:
            param = _PARAM_LABELS[key]
            if param == "backend":
                backend = words[0] if words else ""
            elif param == "request_rate":
                rate = _rate(words[0] if words else "")
                if rate is not None:
                    run.params["request_rate"] = rate
            else:
                count = _count(head.group() if head else "")
                if count is not None:
                    run.params["max_concurrency"] = count
        elif _is_metric_label(entry.label):
            pending.append((entry, head))
        elif head:
            name = _STAT_LABELS.get(key) or _snake(key)
            value = _scalar(head.group())
            if name in _COUNT_STATS and isinstance(value, float) and value.is_integer():
                value = int(value)  # "Peak concurrent requests: 23.00" is a count
            run.stats[name] = value
        elif entry.value:
            run.stats[_STAT_LABELS.get(key) or _snake(key)] = entry.value
        elif key in _STAT_LABELS:
            items.append(_cut(entry))
        else:  # an empty label of no known kind heads the indented lines below it
            subheading = key
    _fill_run(run, ctx, backend, None)
    for entry, head in pending:
        items.append(_block_value(run, entry, head))
    if not closed and not (items and isinstance(items[-1], Problem) and "cut" in items[-1].reason):
        last = entries[-1] if entries else None
        items.append(
            Problem(
                last.line if last else doc.line_at(line_start),
                "serving result block ends without its closing ===== line (cut?)",
                last.raw if last else header,
                NAME,
                severity="warning",
            )
        )
    items.sort(key=lambda item: item.line)
    return items, end


def _is_sglang(entries: list[_Entry]) -> bool:
    labels = {" ".join(e.label.lower().split()) for e in entries}
    return bool(
        labels & {"backend", "concurrency", "total generated tokens (retokenized)", "accept length"}
        or any("e2e latency" in label for label in labels)
    )


def _is_metric_label(label: str) -> bool:
    """A statistic ("Mean TTFT (ms)") or a throughput ("Request throughput (req/s)")."""
    if _STAT_LABEL.fullmatch(label):
        return True
    m = _UNIT_LABEL.fullmatch(" ".join(label.lower().split()))
    return m is not None and m.group("name") in _THROUGHPUT_LABELS


def _cut(entry: _Entry) -> Problem:
    return Problem(entry.line, f"{entry.label}: no value (line cut?)", entry.raw, NAME)


def _block_value(run: _Run, entry: _Entry, head: re.Match[str] | None) -> Item:
    stat_line = _STAT_LABEL.fullmatch(entry.label)
    if stat_line:
        name, unit = stat_line.group("name"), stat_line.group("unit")
        metric, kind, stat = _metric(name), "time", _stat(stat_line.group("stat"))
    else:
        m = _UNIT_LABEL.fullmatch(" ".join(entry.label.lower().split()))
        if m is None:
            return Problem(entry.line, f"{entry.label}: no unit", entry.raw, NAME)
        metric, unit, kind, stat = (
            _THROUGHPUT_LABELS[m.group("name")],
            m.group("unit"),
            "throughput",
            None,
        )
    if not entry.value:
        return _cut(entry)
    if head is None:
        return Problem(
            entry.line, f"{entry.label}: {entry.value!r} is not a number", entry.raw, NAME
        )
    q = _quantity(float(head.group()), unit, kind)
    if isinstance(q, str):
        return Problem(entry.line, f"{entry.label}: {q}", entry.raw, NAME)
    return _measurement(run, metric, q[0], q[1], q[2], entry.line, entry.raw, stat)


# -- running the reference ----------------------------------------------------------------

_REFERENCE = (
    _context,
    _assignments,
    _assignment_index,
    _resolve,
    _flag_key,
    _flags,
    _server_model,
    _scalar,
    _framework,
    _model_name,
    _lengths,
    _serve_block,
    _is_sglang,
    _is_metric_label,
    _cut,
    _block_value,
)


def _reference_parse() -> Callable[[DocText], Iterator[Item]]:
    """llm_serving.parse with the reference functions in place of the new ones: every
    function of the module bound to a copy of its globals that holds the reference's."""
    namespace: dict[str, Any] = dict(vars(lm))
    namespace["_index_cache"] = []
    namespace["_Entry"] = _Entry
    for name, obj in list(namespace.items()):
        if isinstance(obj, types.FunctionType) and obj.__module__ == lm.__name__:
            namespace[name] = _rebound(obj, namespace)
    for function in _REFERENCE:
        namespace[function.__name__] = _rebound(function, namespace)
    # The latency and throughput readers (unchanged but for this) tell _context not to
    # read the pre-block lines they never use; the reference reads them always.
    reference_context = namespace["_context"]

    def context(text: str, start: int, end: int, pre: bool = True) -> _Context:
        return reference_context(text, start, end)

    namespace["_context"] = context
    return namespace["parse"]


def _rebound(function: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    return types.FunctionType(
        function.__code__,
        namespace,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )


REFERENCE_PARSE = _reference_parse()
MODERN = ROOT / "tests" / "fixtures" / "modern"


def doc_of(text: str, first_line: int = 1) -> DocText:
    return DocText(text, DocMeta(uri="<variant>"), first_line=first_line)


def same(doc: DocText) -> list[Item]:
    """The items of both paths, asserted equal (their reprs: a value's type counts)."""
    fast = list(lm.parse(doc))
    slow = list(REFERENCE_PARSE(doc))
    assert [repr(i) for i in fast] == [repr(i) for i in slow]
    return fast


def check(text: str) -> list[Item]:
    return same(doc_of(text))


# -- the documents ------------------------------------------------------------------------

DOCUMENTS = sorted(
    [
        *(MODERN / "llm_serving").iterdir(),
        *(MODERN / "samples").iterdir(),
        *(ROOT / "data" / "samples").iterdir(),
    ]
)
BLOCK_FIXTURES = [
    path
    for path in sorted([*(MODERN / "llm_serving").glob("*.md"), *(MODERN / "samples").glob("*")])
    if "Serving Benchmark Result" in path.read_text(encoding="utf-8", errors="replace")
]


def fixture_text(path) -> str:  # type: ignore[no-untyped-def]
    return read_text_file(str(path), DocMeta(uri=path.name)).text


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_document_reads_the_same(path) -> None:  # type: ignore[no-untyped-def]
    same(read_text_file(str(path), DocMeta(uri=path.name)))


def test_the_block_fixtures_give_measurements() -> None:
    # The comparisons below are of something: the fixtures' blocks are read.
    assert len(BLOCK_FIXTURES) >= 9
    read = [
        path
        for path in BLOCK_FIXTURES
        if any(isinstance(i, Measurement) for i in check(fixture_text(path)))
    ]
    assert len(read) >= len(BLOCK_FIXTURES) - 1  # vllm-24005's block is cut at its 4th line


# -- variants of the real blocks ----------------------------------------------------------


def _line_variants(text: str) -> Iterator[str]:
    lines = text.split("\n")
    for k in range(len(lines) + 1):
        yield "\n".join(lines[:k])  # cut after a line: a block at the document's end
        yield "\n".join(lines[:k]) + "\n"
        if k < len(lines):
            yield "\n".join(lines[:k] + lines[k + 1 :])  # a line missing
            yield "\n".join([*lines[:k], lines[k][: len(lines[k]) // 2], *lines[k + 1 :]])
            yield "\n".join([*lines[:k], lines[k] + "  ", "", *lines[k + 1 :]])  # a blank after


@pytest.mark.parametrize("path", BLOCK_FIXTURES, ids=lambda p: p.name)
def test_cut_and_missing_lines(path) -> None:  # type: ignore[no-untyped-def]
    for text in _line_variants(fixture_text(path)):
        check(text)


def _forms(text: str) -> Iterator[str]:
    yield text.replace("\n", "\r\n")  # CRLF (as a parser may be handed it)
    yield "测试 — é ü\n" + text + "\n终了 ü"  # non-ASCII around the block
    yield text.replace("Successful requests:", "Successful requests: ü")
    yield "```\n" + text + "\n```\n"
    yield "\n".join("> " + line for line in text.split("\n"))
    yield "\n".join("> " + line for line in ("```", *text.split("\n"), "```"))
    yield "\n".join("    " + line for line in text.split("\n"))
    yield "\n".join("\t" + line for line in text.split("\n"))
    yield "\n".join("# " + line for line in text.split("\n"))
    yield "\n".join("2025-01-01 12:00:00 INFO " + line for line in text.split("\n"))
    yield text + text  # two blocks back to back
    yield text.replace("=\n", "=\n" + text[text.find("=") :], 1)
    yield re.sub(r"(?m)^=+\s*$", "", text)  # no closing rule: one block runs into the next
    yield re.sub(r"(?m)^=+\s*$", "", text) + text
    yield text.upper()
    yield text.lower()
    yield text.replace(":", " :")
    yield text.replace(":", ":\t")
    yield text.replace("  ", "\t")
    yield text.replace(" (", "(")
    for unit in ("(us)", "(s)", "(tok/s)", "(furlongs)", "()", "(ms/token)", "(%)"):
        yield text.replace("(ms)", unit)
        yield text.replace("(tok/s)", unit)
        yield text.replace("(req/s)", unit)
    for number in ("1.5e3", "2E-2", "-3", "+4", "nan", "NaN", "inf", "-inf", "Infinity", ".5"):
        yield re.sub(r"(?m)(:\s+)\d+(?:\.\d+)?", rf"\g<1>{number}", text)
    for number in ("5.", "1_000", "١٢", "١٢.٥", "0x10", "1.2.3", "12abc", "12.5 ms", "N/A", "-"):
        yield re.sub(r"(?m)(:\s+)\d+(?:\.\d+)?", rf"\g<1>{number}", text)
    yield re.sub(r"(?m)(:\s+)\d+(?:\.\d+)?", r"\g<1>1e999", text)  # an infinite value
    for number in ("1e12", "86400000", "86400000.5", "86400.0001", "-0", "0", "1e-320"):
        yield re.sub(r"(?m)(:\s+)\d+(?:\.\d+)?", rf"\g<1>{number}", text)  # absurd or not
    yield re.sub(r"(?m)(:\s+)(\d+)\.\d+", r"\g<1>\g<2>.00", text)  # counts printed as floats
    yield text.replace("Serving Benchmark Result", "Serving Benchmark Result (cont.)")
    yield text.replace("=", "")  # prose naming the block
    yield text.replace("-", "=")


@pytest.mark.parametrize("path", BLOCK_FIXTURES, ids=lambda p: p.name)
def test_forms_of_a_block(path) -> None:  # type: ignore[no-untyped-def]
    for text in _forms(fixture_text(path)):
        check(text)


SPEC_DECODE = """\
============ Serving Benchmark Result ============
Successful requests:                     100
Failed requests:                         0
Maximum request concurrency:             8
Request rate configured (RPS):           4.00
Benchmark duration (s):                  20.1
Total input tokens:                      12800
Total generated tokens:                  12800
Request throughput (req/s):              4.97
Request goodput (req/s):                 4.50
Output token throughput (tok/s):         636.8
Peak output token throughput (tok/s):    900.00
Peak concurrent requests:                23.00
Total Token throughput (tok/s):          1273.6
---------------Time to First Token----------------
Mean TTFT (ms):                          35.1
Median TTFT (ms):                        33.0
P90 TTFT (ms):                           40.2
P99.9 TTFT (ms):                         52.9
Std TTFT (ms):                           3.5
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          11.2
P99 TPOT (ms):                           13.0
---------------Inter-token Latency----------------
Mean ITL (ms):                           11.0
Max ITL (ms):                            80.0
----------------End-to-end Latency----------------
Mean E2EL (ms):                          1500.0
Median E2EL incl. Client Queue (ms):     1550.0
Mean Client Queue Time (ms):             4.0
Mean Probe E2EL (ms):                    1200.0
---------------Speculative Decoding---------------
Acceptance rate (%):                     71.50
Acceptance length:                       2.43
Drafts:                                  5000
Draft tokens:                            15000
Accepted tokens:                         10725
Per-position acceptance (%):
  Position 0:                            85.00
  Position 1:                            71.00
\tPosition 2:                            58.50
Odd label with no unit:                  12
Notes:                                   a free text value
Empty label:
Total input tokens:
==================================================
"""

SGLANG = """\
python3 -m sglang.bench_serving --backend sglang-oai --dataset-name random --random-input 1024 --random-output-len 256 --num-prompts 80 --request-rate 4 --max-concurrency 16
============ Serving Benchmark Result ============
Backend:                                 sglang-oai
Traffic request rate:                    4.0
Max reqeuest concurrency:                16
Successful requests:                     80
Benchmark duration (s):                  23.9
Total input tokens:                      81920
Total generated tokens:                  20480
Total generated tokens (retokenized):    20475
Request throughput (req/s):              3.35
Input token throughput (tok/s):          3427.3
Output token throughput (tok/s):         856.8
Total throughput (tok/s):                4284.1
Concurrency:                             12.3
Accept length:                           3.1
----------------End-to-End Latency----------------
Mean E2E Latency (ms):                   3671.5
Median E2E Latency (ms):                 3634.0
---------------Time to First Token----------------
Mean TTFT (ms):                          98.2
P95 ITL (ms):                            20.1
Max ITL (ms):                            310.0
==================================================
"""


@pytest.mark.parametrize("text", [SPEC_DECODE, SGLANG], ids=["spec-decode", "sglang"])
def test_made_blocks_and_their_forms(text: str) -> None:
    items = check(text)
    assert sum(isinstance(i, Measurement) for i in items) >= 9
    for variant in (*_line_variants(text), *_forms(text)):
        check(variant)


# -- the context above a block: commands, shell variables, Namespace ------------------------

COMMANDS = [
    'MODEL="org/m-7b"\nexport RATE=4\nvllm bench serve --model $MODEL --request-rate ${RATE} --dataset-name random --random-input-len 128\n',
    "MODEL=org/m vllm bench serve --model $MODEL --max-concurrency 8\n",
    'CMD="vllm bench serve --model $M"\n',  # an assignment that runs past the command
    'M="vllm bench serve --model $M"\n',  # ... and gives the command its (cut) value
    "vllm bench serve --model $NOPE --request-rate 2\n",
    "M='a/b c'\nvllm serve $M --tensor-parallel-size 2\nvllm bench serve --backend vllm --num-prompts 10 \\\n  --burstiness 0.5 --dataset-name sharegpt --sharegpt-output-len 64\n",
    "python -m sglang.launch_server --model-path /mnt/Qwen2-7B/\npython3 -m sglang.bench_serving --backend sglang --num-prompts 5\n",
    "Namespace(backend='openai-chat', model='org/ns-model', request_rate=inf, max_concurrency=None, dataset_name='hf', dataset_path='x/y', hf_output_len=32)\n",
    "vllm bench latency --model x/y\n",  # a command of another benchmark gives nothing
    "Traffic request rate: 8.0\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: 4\n",
    "export MODEL=`pwd`/m\nvllm bench serve --model $MODEL --dataset-name hf --dataset-path a/b\n",
    "vllm bench serve --model=org/m --input-len 10 --output 20 --tp 2 -x --flag # comment\n",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_above_a_block(command: str) -> None:
    block = fixture_text(MODERN / "samples" / "vllm-bench-serve_vllm-pr-18566.md")
    block = block[block.find("=====") :]
    sglang = SGLANG[SGLANG.find("=====") :]
    for text in (
        command + block,
        command + sglang,
        command + block + block,
        command + block + command.replace("org/", "other/") + block,
        command + "x" * (MAX_CONTEXT_CHARS + 10) + "\n" + block,  # too far above
        command + "\n" * 3 + "filler line\n" * 5000 + command + block,
        "VAR=1\n" * 3000 + command + block,  # many assignments within the window
    ):
        check(text)
        for first_line in (1, 1001):
            same(doc_of(text, first_line))


def test_a_variable_looked_up_alone_is_the_last_one_a_scan_of_the_range_sets() -> None:
    # _variables looks up each name a command uses by itself (_last_assignment), where the
    # reference collected every assignment of the range.
    rng = random.Random(15)
    pieces = [
        "A=1",
        'B="x y"',
        "C='q'",
        "export D=4",
        "  E=5;",
        "F=",
        "x G=1",
        'H="open',
        "AA=2",
        "xA=3",
        "\tA='4'",
        "export  B=5 6",
        "--A=7",
        "\n",
        " ",
        "text",
    ]
    names = ["A", "AA", "B", "C", "D", "E", "F", "G", "H", "Z"]
    reference = REFERENCE_PARSE.__globals__["_assignments"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) + rng.choice(["\n", "", " "]) for _ in range(30))
        for _ in range(10):
            start = rng.randrange(len(text) + 1)
            end = rng.randrange(start, len(text) + 1)
            expected = reference(text, start, end)
            for name in names:
                got = lm._last_assignment(text, name, start, end)
                assert got == expected.get(name), (text, start, end, name)


def test_the_names_a_command_uses() -> None:
    line = """--model "$MODEL" --x ${RATE}/$"Q" --y '$SINGLE' a$B=c \\$ESC $ --n $1"""
    assert lm._used_names(line) == ("MODEL", "RATE", "Q", "SINGLE", "B", "ESC", "1")


def test_hits_are_those_of_a_scan_per_pattern() -> None:
    # _hits finds in four scans what scan.hits finds in one per pattern of _PATTERNS.
    from ingest.parsers.scan import hits

    rng = random.Random(3)
    pieces = [
        "Serving Benchmark Result",
        "Avg latency: ",
        "Std latency: ",
        "% percentile latency: ",
        " latency: ",
        " latency:  latency: ",
        "vg latency: ",
        " requests/s, ",
        " requests/s,  requests/s, ",
        " requests/s, requests/s, ",  # overlapping: finditer takes the first only
        "requests/s, ",
        '"request_throughput"',
        '"request_throughput" :',
        '"avg_latency":',
        '"requests_per_second"\n:',
        '"avg_latency""requests_per_second":',
        "x",
        "\n",
        "%",
        "Avg",
        '"',
    ]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = [(pos, kind) for pos, kind, _ in hits(text, lm._PATTERNS)]
        assert [(pos, kind) for pos, _, kind in lm._hits(text)] == expected, text


# -- random damage ------------------------------------------------------------------------

_PALETTE = [":", " ", "\t", "-", "=", "\n", "é", "1", ".", "e", "$", "#", ">", "(", ")", "x", "\r"]


def test_randomly_damaged_blocks() -> None:
    rng = random.Random(2026)
    texts = [fixture_text(path) for path in BLOCK_FIXTURES] + [SPEC_DECODE, SGLANG]
    for _ in range(1500):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text) + 1)
            op = rng.random()
            if op < 0.4:
                text = text[:at] + rng.choice(_PALETTE) + text[at:]
            elif op < 0.7:
                text = text[:at] + text[at + 1 :]
            else:
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                end = len(text) if end < 0 else end + 1
                text = text[:end] + text[start:end] + text[end:]  # a line twice
        check(text)


# -- the pieces the fast block reader relies on ---------------------------------------------


def test_measurement_fields_are_in_the_order_they_are_passed() -> None:
    from ingest.parsers.cells import MEASUREMENT_FIELDS

    assert tuple(f.name for f in fields(Measurement)) == MEASUREMENT_FIELDS


def test_the_colon_split_is_the_entry_pattern() -> None:
    # _serve_block splits "Label:   value" at its first colon where _ENTRY.fullmatch ran.
    rng = random.Random(7)
    alphabet = "aZ :\t-=1.é(\x0c\u2028"
    for _ in range(20_000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))).strip()
        if not s or s[0] in "=-":
            continue
        m = _ENTRY.fullmatch(s)
        colon = s.find(":")
        ok = colon >= 1 and s[0] in lm._LETTERS
        assert (m is not None) == ok, s
        if m is not None:
            assert m.group("label").strip() == s[:colon].strip(), s
            assert (m.group("value") or "") == s[colon + 1 :].lstrip(" \t"), s


def test_scalars_are_the_reference_scalars() -> None:
    reference = REFERENCE_PARSE.__globals__["_scalar"]
    rng = random.Random(11)
    texts = ["", ".", "..", "1.", ".5", "1.5", "1.2.3", "١.٥", "١٢", "1e5", "inf", "-inf", "NaN"]
    texts += [" 1", "1 ", "1_0", "+1", "-1.5", "True", "false", "9" * 400, "9" * 400 + ".5", "0x1"]
    texts += [
        "".join(rng.choice("0123456789.e-_ ") for _ in range(rng.randint(0, 6)))
        for _ in range(3000)
    ]
    for text in texts:
        assert repr(lm._scalar(text)) == repr(reference(text)), text


def test_number_heads_of_plain_values_are_the_whole_value() -> None:
    for value in ("0", "1000", "30.85", "30.", ".5", "١٢", "١٢.٥", "007"):
        m = _NUM_HEAD.match(value)
        assert m is not None and m.group() == value
        assert repr(lm._scalar(value)) == repr(REFERENCE_PARSE.__globals__["_scalar"](value))
