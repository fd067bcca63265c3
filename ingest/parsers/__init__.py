"""One module per input format (docs/formats.md sections 1-8 and 10), each a pure function of text.

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

What a parser cannot know from its own lines (which model, which run, the document's
date, FP32 or INT8 from a caption above a fence) it leaves empty; ingest.runs fills it
from the document's context afterwards.
"""
