"""Which parsers have anything to read in a text: every anchor of every parser, one pass.

Testing 20 anchors with ``anchor in text`` costs 20 passes over the text (0.12 GB/s
together on this machine): more than reading the file. Hyperscan matches all of them in
one SIMD pass (3-6 GB/s), so a 500 MB log of latency lines pays for the latency parser
and nothing else. The same pass reports where the anchors of "positional" parsers occur
(the latency parser then needs no scan of its own). Without hyperscan (a platform with
no wheel) the same answer comes from plain string searches, more slowly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

try:
    import hyperscan
except ImportError:  # pragma: no cover - the pinned requirements install it
    hyperscan = None


def line_markers(
    text: str | bytes, data: bytes | memoryview | None = None, newlines: np.ndarray | None = None
) -> frozenset[str]:
    """The markdown structure of a text: headings, fences, quote markers, carriage returns.

    `text`: the text as a str if it is ASCII, else as its UTF-8 bytes; `data`: those bytes
    (`text` itself when it is bytes); `newlines`: the offsets of their "\n" bytes, when
    known. The bytes answer as the characters do (a byte of a character beyond ASCII is
    beyond ASCII too). A line's first bytes are looked at in one numpy gather: searches
    for "\n#", "\n>" or "\n >" stop at every line of a chunk that holds a "#" or a ">"
    anywhere ("->" will do), 3-4 ms each of 4 MiB. Fences and "\r" are one-character
    searches first (memchr), which fail at once on a plain log.
    """
    buf = np.frombuffer(text if data is None else data, np.uint8)
    found = set()
    if not buf.size:
        return frozenset(found)
    if newlines is None:
        newlines = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], newlines[newlines + 1 < buf.size] + 1))
    first = buf[starts]
    if (first == ord("#")).any():
        found.add("heading")
    tick, tilde, cr = ("`", "~", "\r") if isinstance(text, str) else (b"`", b"~", b"\r")
    if (tick in text and tick * 3 in text) or (tilde in text and tilde * 3 in text):
        found.add("fence")
    spaced = starts[(first == ord(" ")) & (starts + 1 < buf.size)]
    if (first == ord(">")).any() or (buf[spaced + 1] == ord(">")).any():
        found.add("quote")
    if cr in text:
        found.add("cr")
    return frozenset(found)


def markers_of(text: str) -> frozenset[str]:
    """The markers of a text no gate has scanned (a DocText made without them): its
    structure (line_markers) and the words of MARKER_ANCHORS it holds."""
    found = line_markers(text.encode("utf-8", "surrogatepass"))
    words = {name for name, group in MARKER_ANCHORS.items() if any(w in text for w in group)}
    return found | words


# Words the gate looks for on behalf of the reader, not of a parser: a GitHub comment's
# header ("Xreki commented on Feb 4, 2020", "Xreki · comment · 2020-02-04"), whose date
# dates the lines below it (ingest.runs.Contexts). As the "comment" marker: a search of
# a 4 MiB chunk for "commented" costs 1.6 ms, a fifth of what a sparse log's chunk costs.
MARKER_ANCHORS: dict[str, tuple[str, ...]] = {"comment": ("commented", "·")}

# A text with this many positional anchors is dense in them: the rest is scanned without
# a Python call for each (AnchorGate._dense_rest). A sparse log's 4 MiB chunk has some 400.
DENSE_HITS = 2048

# Below this size (bytes or characters) a text is scanned with plain searches until the
# database is built: the same answer (the fallback without hyperscan), no compile.
SMALL_TEXT = 2**16


@dataclass(slots=True)
class GateResult:
    present: set[str]  # parsers with an anchor in the text
    hits: dict[str, list[int]] = field(default_factory=dict)  # positional parsers' anchors
    markers: frozenset[str] = frozenset()  # of MARKER_ANCHORS, those whose words occur


class AnchorGate:
    """Maps a text to the parsers whose anchors occur in it (and where, for some)."""

    def __init__(
        self, anchors: Mapping[str, tuple[str, ...]], positional: frozenset[str] = frozenset()
    ) -> None:
        groups = {**anchors, **MARKER_ANCHORS}
        self._pairs = [(name, anchor) for name, group in groups.items() for anchor in group]
        self._positional = positional
        self._database = None
        self._presence = None  # the database without positions (_dense_rest), when needed
        self._compiled = False
        # Each anchor of a positional parser, to find where it occurs in the rest of a
        # dense text (_dense_rest).
        self._starts = [
            (name, anchor.encode()) for name, anchor in self._pairs if name in positional
        ]

    def compile(self) -> None:
        """Build the hyperscan database now (once): before worker processes are forked."""
        if self._compiled:
            return
        self._compiled = True
        if hyperscan is not None and self._pairs:
            self._database = self._built(with_positions=True)

    def _built(self, with_positions: bool) -> object:
        """The hyperscan database of every anchor: reporting each match of a positional
        parser's anchors, or only whether each anchor occurs at all."""
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        database.compile(
            expressions=[re.escape(anchor).encode() for _, anchor in self._pairs],
            ids=list(range(len(self._pairs))),
            elements=len(self._pairs),
            flags=[
                0 if with_positions and name in self._positional else hyperscan.HS_FLAG_SINGLEMATCH
                for name, _ in self._pairs
            ],
        )
        return database

    def scan(self, data: bytes | memoryview | str) -> GateResult:
        """Scan bytes (or a str, encoded first). Hit offsets index `data` as given."""
        if len(data) < SMALL_TEXT and not self._compiled:
            # A small document (a comment, a PR description): a hundred plain searches take
            # less than a millisecond, compiling the database 20 ms, a tenth of the ingest.
            text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
            return self._scan_text(text)
        self.compile()
        if isinstance(data, str):
            if self._database is None:
                return self._scan_text(data)
            data = data.encode("utf-8", "surrogatepass")
        if self._database is None:
            return self._scan_text(bytes(data).decode("utf-8", "replace"))
        found: set[int] = set()
        hits: dict[str, list[int]] = {name: [] for name in self._positional}
        lengths = [len(anchor.encode()) for _, anchor in self._pairs]
        pairs = self._pairs
        positional = self._positional
        stopped = [0]  # where a dense text's scan stopped (the end of its last match)

        def on_match(anchor_id: int, start: int, end: int, flags: int, context: object) -> bool:
            name = pairs[anchor_id][0]
            found.add(anchor_id)
            if name in positional:
                hits[name].append(end - lengths[anchor_id])
                if len(hits[name]) >= DENSE_HITS:
                    stopped[0] = end
                    return True  # hyperscan stops here: _dense_rest goes on
            return False

        try:
            self._database.scan(data, match_event_handler=on_match)
        except hyperscan.ScanTerminated:
            self._dense_rest(data, stopped[0], found, hits)
        for group in hits.values():
            group.sort()
        return _result({pairs[i][0] for i in found}, hits)

    def _dense_rest(
        self, data: bytes | memoryview, stopped: int, found: set[int], hits: dict[str, list[int]]
    ) -> None:
        """The scan of a text dense in positional anchors, stopped at `stopped`: where they
        start, all of them again, by numpy (each occurrence, overlapping ones too, as
        hyperscan reports them); whether the others occur after `stopped`, by a database
        that reports no positions. A Python call for every latency line was a third of the
        time a log of them took to read; a regular expression's match a hit, 4.1 ms of a
        4 MiB chunk of them, where numpy takes 2.0."""
        from ingest.columns import occurrences

        for group in hits.values():
            group.clear()
        buf = np.frombuffer(data, np.uint8)
        for name, anchor in self._starts:
            hits[name].extend(occurrences(buf, anchor).tolist())
        del buf  # no view of the caller's buffer outlives this call
        if self._presence is None:
            self._presence = self._built(with_positions=False)
        # From before `stopped`: an anchor that begins before it and ends after it.
        longest = max(len(anchor.encode()) for _, anchor in self._pairs)
        with memoryview(data) as view, view[max(0, stopped - longest) :] as rest:
            self._presence.scan(rest, match_event_handler=_adder(found))

    def _scan_text(self, text: str) -> GateResult:
        present = {name for name, anchor in self._pairs if anchor in text}
        hits: dict[str, list[int]] = {}
        for name in self._positional:
            positions: list[int] = []
            for _, anchor in (pair for pair in self._pairs if pair[0] == name):
                pos = text.find(anchor)
                while pos >= 0:
                    positions.append(pos)
                    pos = text.find(anchor, pos + 1)
            hits[name] = sorted(positions)
        return _result(present, hits)


def _adder(found: set[int]) -> object:
    """A hyperscan match handler that adds each anchor id to `found`."""

    def on_match(anchor_id: int, start: int, end: int, flags: int, context: object) -> None:
        found.add(anchor_id)

    return on_match


def _result(names: set[str], hits: dict[str, list[int]]) -> GateResult:
    markers = frozenset(names.intersection(MARKER_ANCHORS))
    return GateResult(names - markers, hits, markers)
