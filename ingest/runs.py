"""What a parser cannot see from its own lines: which run, which model, which variant.

A document mixes formats, and its prose says what they are: "FP32 QAT BERT" above one
fence and "QATv1 INT8 model" above the next; a heading "fc+elementwise_add+layer_norm融合"
above a pass log, latency lines and a profiler table of one run. After the parsers ran,
``assemble`` splits the document into runs and fills what the parsers left empty:

- a run ends where the section ends (a markdown heading) or where a record repeats one
  the run already has (a tester prints its summary once per run, a pass sequence
  restarts at ir_graph_build_pass, a profiler report lists an event once);
- params named by the record's own line ("FP32: Run 2490 samples, ...", "QAT INT8: ..."),
  the nearest line above it in its block of lines that ends in a colon ("FP32 results
  with the fix:"), the caption above a fence, or the heading (fp32/int8/fp16, QAT, seq
  len, batch size) are added where a parser did not set them, the nearest first; the two
  line labels are read in documents of prose (up to 256 KiB: a GitHub comment holds at
  most 64 KiB), not in logs, where a line names no variant and a lookup per record would
  cost;
- the model comes from the parser, else another measurement of the same run (the
  nvprof total of an op benchmark run is that op's), else the caption or heading, else
  the document's metadata, else the model the document names most often;
- a pasted thread of comments starts a section at each comment header ("wojtuss commented
  on Nov 21, 2019", "wojtuss · comment · 2019-11-21"), and a measurement without a time
  of its own takes its comment's date, else the document's; times with a zone are stored
  as naive UTC, like every time in the store.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from itertools import chain
from operator import attrgetter

from ingest.gate import MARKER_ANCHORS, markers_of
from ingest.parsers import scan
from ingest.text import DocText, line_matches, lowered_for_literals
from perfboard.model import Found, Measurement, ParamValue

UNKNOWN_BENCHMARK = "unknown"
UNKNOWN_FRAMEWORK = "unknown"

_HEADING = re.compile(r"(?m)^#{1,6}[ \t]+(.*\S)")
_FENCE = re.compile(r"(?m)^[ \t]*(```|~~~)")
_PRECISION = re.compile(r"\b(fp32|fp16|bf16|int8|float32|float16)\b", re.I)
_QAT = re.compile(r"\bqat", re.I)
# "seq_len 128", "Seqlen512", "seq128"; not the "2" of "seq2seq".
_SEQ_LEN = re.compile(r"\bseq(?:uence)?[ _-]?len(?:gth)?[ =:_-]*(\d+)|\bseq(\d{2,})\b", re.I)
_BATCH = re.compile(r"\b(?:bs|batch[ _-]?size)[ =:_-]*(\d+)", re.I)
# Models the team benchmarks; the longest names first so "ernie-tiny" wins over "ernie".
_MODEL_NAMES = (
    r"ernie|bert|transformer[-_ ]?big|transformer|resnet[-_ ]?50|resnet|mobilenet(?:v[123])?"
    r"|seq2seq|yolov3|deeplabv3|pyramid[-_ ]?dnn|gpt[-_ ]?2|vgg16|lstm"
)
# Led by a class of the names' first letters: the regex engine then skips to the next of
# them at C speed instead of trying \b and every name at every position (48 -> 24 ms a MiB).
_MODEL_FIRSTS = "".join(sorted({name[0] for name in _MODEL_NAMES.split("|")}))
_MODELS = re.compile(rf"(?=[{_MODEL_FIRSTS}])\b({_MODEL_NAMES})\b", re.I)
_PRECISIONS = {"float32": "fp32", "float16": "fp16"}
# A line's own label: the few words before its first colon ("QAT INT8: Run 2490 ...").
_LINE_LABEL = re.compile(r"[ \t>*+-]*(?P<label>[^:：`|]{1,40}?)[ \t]*[:：]")
PROSE_LIMIT = 1 << 18  # line labels are read in documents up to this size (see above)
# Comment headers of a pasted thread, with the comment's date: GitHub's page as copied
# ("wojtuss commented on Nov 21, 2019") and the "author · comment · date" of exports.
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_COMMENT_HEADER = re.compile(
    r"(?m)^[ \t]*(?P<who>[\w.-]+)[ \t]+(?:"
    r"commented(?:[ \t]+on)?[ \t]+(?P<mon>[A-Z][a-z]{2})[a-z]*\.?[ \t]+"
    r"(?P<day>\d{1,2}),[ \t]*(?P<year>\d{4})"
    r"|·[ \t]+(?:comment|description|review(?:[ \t]+thread)?)[ \t]+·[ \t]+"
    r"(?P<iso>\d{4}-\d{2}-\d{2})"
    r")[ \t]*$"
)


@dataclass(slots=True)
class Run:
    number: int
    label: str
    first_line: int


@dataclass(slots=True)
class _Context:
    heading: str
    caption: str
    section: int
    date: datetime | None = None  # the comment's, in a pasted thread

    @property
    def label(self) -> str:
        return " / ".join(part for part in (self.heading, self.caption) if part)


_FLAT = _Context("", "", 0)
LINE = attrgetter("line")


def _model_name(text: str) -> str:
    name = text.lower().replace(" ", "-").replace("_", "-")
    return re.sub(r"-?(big|50)$", lambda m: "-" + m.group(1), name).replace("--", "-")


def params_from_label(label: str) -> dict[str, ParamValue]:
    """Variant params a heading or caption names: "QATv1 INT8 model" -> int8, qat."""
    return dict(_params_from_label(label))


@lru_cache(maxsize=1024)
def _params_from_label(label: str) -> tuple[tuple[str, ParamValue], ...]:
    params: dict[str, ParamValue] = {}
    if not label:
        return ()
    if m := _PRECISION.search(label):
        word = m.group(1).lower()
        params["precision"] = _PRECISIONS.get(word, word)
    if _QAT.search(label):
        params["quantization"] = "qat"
    if m := _SEQ_LEN.search(label):
        params["seq_len"] = int(m.group(1) or m.group(2))
    if m := _BATCH.search(label):
        params["batch_size"] = int(m.group(1))
    return tuple(params.items())


@lru_cache(maxsize=1024)
def _labels_params(*labels: str) -> tuple[tuple[str, ParamValue], ...]:
    """The params of several labels, the nearest (first) label's where they name the same
    one: one cached lookup a record, not one a label."""
    params: dict[str, ParamValue] = {}
    for label in labels:
        for key, value in _params_from_label(label):
            params.setdefault(key, value)
    return tuple(params.items())


def model_in(text: str) -> str:
    """The model a text names, "" when none."""
    m = _MODELS.search(text)
    return _model_name(m.group(1)) if m else ""


def dominant_model(text: str, limit: int = 1 << 20) -> str:
    """The model a document names most often (its first MiB), "" when none."""
    counts = Counter(_model_name(m.group(1)) for m in _model_matches(text, limit))
    return counts.most_common(1)[0][0] if counts else ""


# The letters every name of _MODEL_NAMES starts with: a match of _MODELS starts where
# the lowered text holds one of them.
_MODEL_STEMS = tuple(
    re.split(r"[^a-z0-9]", name, maxsplit=1)[0] for name in _MODEL_NAMES.split("|")
)
_STEMS = tuple(sorted(set(_MODEL_STEMS)))  # each once


def _model_matches(text: str, limit: int) -> Iterator[re.Match[str]]:
    """_MODELS.finditer(text, 0, limit), tried only where a name's first letters are.

    The regex engine stops at every letter a name may start with (a MiB of prose: 24 ms);
    the stems are found in the lowered text by one hyperscan pass over it (a MiB without
    a model's name: 6.4 ms as a str.find of each of its 12 stems, 0.5 ms as one pass).
    """
    low = lowered_for_literals(text[:limit])
    if low is None:  # the offsets of lower() would not be the text's
        yield from _MODELS.finditer(text, 0, limit)
        return
    starts = scan.literal_starts(low, _STEMS)
    if starts is None:  # a small text: a search of each stem
        starts = []
        for stem in _STEMS:
            pos = low.find(stem)
            while pos >= 0:
                starts.append(pos)
                pos = low.find(stem, pos + 1)
    end = 0
    for pos in sorted(starts):
        if pos < end:
            continue  # inside the match before (finditer goes on from its end)
        m = _MODELS.match(text, pos, limit)
        if m is not None:
            end = m.end()
            yield m


class Contexts:
    """Heading and fence caption in effect at each line of a document."""

    def __init__(self, doc: DocText) -> None:
        text = doc.text
        self._headings: list[tuple[int, str]] = []
        self._fences: list[tuple[int, int, str]] = []  # (open line, close line, caption)
        # What the reader saw (ingest.gate: line_markers, the gate's MARKER_ANCHORS), else
        # looked for now.
        markers = doc.markers if doc.markers is not None else markers_of(text)
        if "heading" in markers:
            for m in line_matches(text, _HEADING, ("#",)):
                self._headings.append((doc.line_at(m.start()), m.group(1).strip("# ")))
        dates: dict[int, datetime] = {}  # heading line -> its comment's date
        if "comment" in markers:
            for m in line_matches(text, _COMMENT_HEADER, MARKER_ANCHORS["comment"]):
                date = _comment_date(m)
                if date is not None:
                    line = doc.line_at(m.start("who"))
                    self._headings.append((line, m.group(0).strip()))
                    dates[line] = date
            self._headings.sort()
        # Looked up by bisection (a record's context is asked for once per record): the
        # heading lines, and the comment date in effect from each heading on.
        self._heading_lines = [line for line, _ in self._headings]
        self._dates: list[datetime | None] = []
        for line in self._heading_lines:
            self._dates.append(dates.get(line, self._dates[-1] if self._dates else None))
        if "fence" in markers:
            self._find_fences(doc)
        self._fence_opens = [open_line for open_line, _, _ in self._fences]
        # The lines where the context changes (a heading; the line after a fence opens;
        # a fence's closing line): between two of them every line has the same one, and
        # records are asked for in line order, so the last answer is kept with its span.
        bounds = {*self._heading_lines, *(line + 1 for line in self._fence_opens)}
        self._bounds = sorted(bounds.union(close for _, close, _ in self._fences))
        self._span = (0, 0, _FLAT)  # (first line, end line, context): none yet

    def _find_fences(self, doc: DocText) -> None:
        text = doc.text
        opened: tuple[int, str] | None = None
        for m in line_matches(text, _FENCE, ("```", "~~~")):
            line = doc.line_at(m.start())
            if opened is None:
                opened = (line, self._caption_before(text, m.start()))
            else:
                self._fences.append((opened[0], line, opened[1]))
                opened = None
        if opened is not None:  # an unclosed fence runs to the end of the document
            self._fences.append((opened[0], 1 << 62, opened[1]))

    @staticmethod
    def _caption_before(text: str, pos: int) -> str:
        """The last non-blank line before a fence, if it is prose (not a heading)."""
        end = text.rfind("\n", 0, pos)
        while end > 0:
            start = text.rfind("\n", 0, end) + 1
            line = text[start:end].strip()
            if line:
                if line.startswith(("#", "```", "~~~")):
                    return ""
                return line.lstrip("-*+ ").rstrip(":：")
            end = start - 1
        return ""

    @property
    def flat(self) -> bool:
        """A plain log: no heading, fence or comment header, one context for every line."""
        return not self._headings and not self._fences

    def at(self, line: int) -> _Context:
        if not self._headings and not self._fences:
            return _FLAT  # a plain log: one context for every line
        first, end, context = self._span
        if first <= line < end:
            return context
        after = bisect_right(self._bounds, line)
        first = self._bounds[after - 1] if after else -(1 << 62)
        end = self._bounds[after] if after < len(self._bounds) else 1 << 63
        context = self._context(line)
        self._span = (first, end, context)
        return context

    def _context(self, line: int) -> _Context:
        heading, date = "", None
        section = bisect_right(self._heading_lines, line)  # headings at or above the line
        if section:
            heading, date = self._headings[section - 1][1], self._dates[section - 1]
        caption = ""
        inside = bisect_left(self._fence_opens, line) - 1  # the last fence opened above it
        if inside >= 0 and line < self._fences[inside][1]:
            caption = self._fences[inside][2]
        return _Context(heading, caption, section, date)


def _comment_date(m: re.Match[str]) -> datetime | None:
    """The date of a comment header, None if it is no date."""
    try:
        if m.group("iso"):
            return datetime.fromisoformat(m.group("iso"))
        month = _MONTHS.get(m.group("mon").lower())
        return None if month is None else datetime(int(m.group("year")), month, int(m.group("day")))
    except ValueError:
        return None


class _LineLabels:
    """The labels of a record's own line and of the caption line of its block (the
    module docstring), for documents of prose only."""

    def __init__(self, doc: DocText) -> None:
        self._lines = doc.text.split("\n") if len(doc.text) <= PROSE_LIMIT else None
        self._first = doc.first_line

    @property
    def read(self) -> bool:
        """Whether the document is prose whose line labels are read (PROSE_LIMIT)."""
        return self._lines is not None

    def of(self, line: int, raw: str) -> tuple[str, str]:
        """(the record line's own label, the caption of its block of lines)."""
        if self._lines is None:
            return "", ""
        own = _LINE_LABEL.match(raw)
        index = line - self._first  # the record's line; its caption is from the ones above
        captions = self._captions
        caption = captions[index - 1] if 0 < index <= len(captions) else ""
        return (own.group("label") if own else ""), caption

    @cached_property  # the first record to ask pays for all
    def _captions(self) -> list[str]:
        """For each line, the caption a record on the line below it has: the nearest line
        at or above it, within its block (up to a blank line or a fence), that ends in a
        colon ("... (20 threads, bs 1, CLX 6248):" over an FP32 line and a QAT INT8 line).

        One pass over the lines. Each record walked up to its caption before: through
        every line of a JSON result, where no line ends in a colon, 2.6 million lines for
        200 of them (2.4 of the 8.7 s their folder took)."""
        captions: list[str] = []
        caption = ""
        for line in self._lines or ():
            text = line.strip()
            if not text or text.startswith(("```", "~~~")):
                caption = ""
            elif text.endswith((":", "：")):
                caption = text.rstrip(":：")
            captions.append(caption)
        return captions


_NO_LABELS = ("", "")


def record_key(item: object) -> tuple[object, ...] | None:
    """What may occur once per run: a second occurrence starts the next run."""
    if type(item) is Measurement:
        params, stats = item.params, item.stats
        return (
            "m",
            item.benchmark,
            item.task,
            item.metric,
            item.framework,
            tuple(sorted(params.items())) if params else (),
            stats.get("thread_id") if stats else None,
            stats.get("statistic") if stats else None,
        )
    event = getattr(item, "event", None)
    if event is not None:
        return ("p", item.section, event, item.thread, item.depth)  # type: ignore[attr-defined]
    if getattr(item, "order", None) == 0:
        return ("pass-sequence",)
    return None


def assemble(doc: DocText, found: Found, contexts: Contexts | None = None) -> list[Run]:
    """Assign runs and fill context into the records of one document, in place."""
    contexts = contexts or Contexts(doc)
    runs = _assign_runs(contexts, found)
    doc_model = DocModel(doc)
    named = named_benchmarks(found.measurements)
    at = contexts.at
    labels = _LineLabels(doc)
    of = labels.of if labels.read else None  # a log: no line labels to look up
    for m in found.measurements:
        own = of(m.line, m.raw) if of is not None else _NO_LABELS
        fill_measurement(m, at(m.line), doc, named.get(m.run) or _NO_LABELS, doc_model, own)
    fill_phases(doc, found, contexts, doc_model)
    return runs


def fill_phases(doc: DocText, found: Found, contexts: Contexts, doc_model: DocModel) -> None:
    """A phase's project and model, from the document where its table does not say."""
    for phase in found.phases:
        phase.project = phase.project or doc.meta.project
        ctx = contexts.at(phase.line)
        phase.benchmark = (
            phase.benchmark or model_in(ctx.heading) or doc_model.name() or UNKNOWN_BENCHMARK
        )


def _assign_runs(contexts: Contexts, found: Found) -> list[Run]:
    groups = [g for g in (found.measurements, found.profile_events, found.passes) if g]
    # Each parser yields in document order: one group needs no sort.
    items = groups[0] if len(groups) == 1 else sorted(chain(*groups), key=LINE)
    runs: list[Run] = []
    seen: set[tuple[object, ...]] = set()
    section = -1
    at = contexts.at
    flat = contexts.flat
    for item in items:
        ctx = _FLAT if flat else at(item.line)
        key = record_key(item)
        if ctx.section != section or (key is not None and key in seen) or not runs:
            runs.append(Run(len(runs), ctx.label if ctx is not _FLAT else "", item.line))
            seen = set()
        section = ctx.section
        if key is not None:
            seen.add(key)
        item.run = len(runs) - 1
    return runs


def named_benchmarks(measurements: list[Measurement]) -> dict[int, tuple[str, str]]:
    """The (benchmark, task) a run's parsers named, when all of them name the same one."""
    if all(m.benchmark for m in measurements):
        return {}  # nothing to fill (a tester log names its model on every line)
    named: dict[int, set[tuple[str, str]]] = {}
    for m in measurements:
        if m.benchmark:
            named.setdefault(m.run, set()).add((m.benchmark, m.task))
    return {run: next(iter(pairs)) for run, pairs in named.items() if len(pairs) == 1}


class DocModel:
    """The document's model, looked for only when a record needs it (a pass over 1 MiB)."""

    def __init__(self, doc: DocText) -> None:
        self._doc = doc
        self._name: str | None = doc.meta.benchmark or None

    def name(self) -> str:
        if self._name is None:
            self._name = dominant_model(self._doc.text)
        return self._name


def fill_measurement(
    m: Measurement,
    ctx: _Context,
    doc: DocText,
    sibling: tuple[str, str],
    doc_model: DocModel,
    line_labels: tuple[str, str] = ("", ""),
) -> None:
    for key, value in _labels_params(*line_labels, ctx.caption, ctx.heading):
        m.params.setdefault(key, value)
    if not m.benchmark and sibling[0]:
        m.benchmark, m.task = sibling
    if not m.benchmark:
        m.benchmark = model_in(ctx.caption) or model_in(ctx.heading) or doc_model.name()
        m.benchmark = m.benchmark or UNKNOWN_BENCHMARK
    m.framework = m.framework or UNKNOWN_FRAMEWORK
    m.project = m.project or doc.meta.project
    m.version = m.version or doc.meta.version or None
    if m.measured_at is None:
        m.measured_at = ctx.date or doc.meta.created_at
    elif m.measured_at.tzinfo is not None:  # the store keeps naive UTC
        m.measured_at = m.measured_at.astimezone(UTC).replace(tzinfo=None)
