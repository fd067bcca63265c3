"""The shared pipeline's fast paths give what the plain ones gave, on real fixture text and
on variants made to embarrass them: scan.hits (the hyperscan prefilter and the sorted
merge), text.nfkc, chunk_text's normalising, record_table, Contexts.at's kept span,
runs' cached label params, documents._lines_read, and the paused cycle collector."""

from __future__ import annotations

import codecs
import gc
import heapq
import importlib
import pkgutil
import platform
import random
import re
import subprocess
import sys
import unicodedata
from operator import attrgetter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ingest.parsers
from ingest import bulk, documents, gate, runs, save
from ingest import text as text_module
from ingest.parsers import md_tables, pr_tables, scan, ws_tables
from ingest.text import (
    DocText,
    LineIndex,
    decode,
    last_line_match,
    line_matches,
    nfkc,
    normalise,
)
from perfboard.model import DocMeta, Found, Measurement, ProfileEvent

ROOT = Path(__file__).resolve().parent.parent
MODERN = ROOT / "tests/fixtures/modern"
SAMPLES = sorted((ROOT / "data/samples").glob("*.md")) + sorted((MODERN / "samples").glob("*"))
MODERN_MIX = [
    MODERN / "samples/vllm-bench-serve_vllm-pr-18566.md",
    MODERN / "samples/trtexec_tensorrt-4177.md",
    MODERN / "samples/nsys-stats-text_nanomoe-report.md",
]


# Every real text document the repository keeps (the real-documents mix of bench_ingest).
REAL_DOCUMENTS = sorted(
    p
    for folder in ("tests/fixtures", "data/samples")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in (".md", ".txt", ".log", ".rst") and p.is_file()
)


def _texts() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in SAMPLES if p.is_file()]


def _real_documents() -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in REAL_DOCUMENTS]


def _modern_log(repeat: int = 12) -> str:
    """The modern mix of scripts/bench_ingest.py (its blocks, 8.6 KB a repeat)."""
    blocks = []
    for path in MODERN_MIX:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[1:]
        blocks.append("".join(ln for ln in lines if not ln.startswith("```")) + "\n")
    return "".join(blocks) * repeat


def _variants(text: str) -> dict[str, str]:
    """A text as it may also arrive: CRLF, quoted, fenced, non-ASCII around it, cut."""
    return {
        "as is": text,
        "crlf": text.replace("\n", "\r\n"),
        "quoted": "".join("> " + line for line in text.splitlines(keepends=True)),
        "fenced": "```\n" + text + "\n```\n",
        "non-ascii": "耗时…\n" + text.replace("\n\n", "\n…é\u0301 ＞ ﬁ\n\n") + "\n足\u2f9c",
        "cut": text[: len(text) // 2],
        "twice": text + text,
    }


# -- scan.hits ---------------------------------------------------------------------------


def _merged(text, patterns, start=0, end=None):
    """scan.hits as it was: a lazy heapq.merge of one finditer a pattern."""
    stop = len(text) if end is None else end

    def tagged(kind, pattern):
        for m in pattern.finditer(text, start, stop):
            yield m.start(), kind, m

    return heapq.merge(*(tagged(k, p) for k, p in patterns), key=lambda hit: hit[0])


# The fifteen patterns nsys gave hits before it scanned on its own: a set of which a modern
# log holds three, the most the prefilter skips.
_NSYS_BEFORE: scan.Patterns = (
    ("heading", re.compile(r"\*\* [^\n]*?\(([A-Za-z][A-Za-z0-9_]*)\):")),
    (
        "heading",
        re.compile(r"Processing \[[^\]\n]*\] with \[[^\]\n]*?([A-Za-z][A-Za-z0-9_]*)\.py\]"),
    ),
    ("heading", re.compile(r"Executing '([A-Za-z][A-Za-z0-9_]*)' stats report")),
    ("heading", re.compile(r"Exporting \[[^\]\n]*?([A-Za-z][A-Za-z0-9_]*)\.py ")),
    ("title", re.compile(r"CUDA\ API\ Statistics")),
    ("title", re.compile(r"CUDA\ Kernel\ Statistics")),
    ("title", re.compile(r"CUDA\ Memory\ Operation\ Statistics\ \(by\ time\)")),
    ("title", re.compile(r"CUDA\ Memory\ Operation\ Statistics\ \(by\ size")),
    ("title", re.compile(r"Operating\ System\ Runtime\ API\ Statistics")),
    ("title", re.compile(r"NVTX\ Push\-Pop\ Range\ Statistics")),
    ("title", re.compile(r"NVTX\ Range\ Statistics")),
    ("text", re.compile(r"Time ?\(%\)[ \t]+Total Time")),
    ("csv", re.compile(r"Time ?\(%\),[ \t]*Total Time")),
    ("trace", re.compile(r"Start ?\([a-z]+\)[ \t]*,[ \t]*Duration ?\([a-z]+\)")),
    ("trace text", re.compile(r"Start ?\([a-z]+\)[ \t]+Duration ?\([a-z]+\)")),
)


def _pattern_sets() -> list[tuple[str, scan.Patterns]]:
    """Every tuple of (kind, pattern) pairs a parser module holds (what it gives hits), and
    nsys's of before."""
    found = [("nsys before", _NSYS_BEFORE)]
    for info in pkgutil.iter_modules(ingest.parsers.__path__):
        module = importlib.import_module(f"ingest.parsers.{info.name}")
        for name, value in vars(module).items():
            if (
                isinstance(value, tuple)
                and value
                and all(
                    isinstance(p, tuple)
                    and len(p) == 2
                    and isinstance(p[0], str)
                    and isinstance(p[1], re.Pattern)
                    for p in value
                )
            ):
                found.append((f"{info.name}.{name}", value))
    return found


def _spans(hits):
    return [(pos, kind, m.span(), m.groups()) for pos, kind, m in hits]


def test_pattern_sets_are_found():
    names = {name for name, _ in _pattern_sets()}
    assert {"llm_serving._PATTERNS", "trtexec._DATA", "trtexec._CONTEXT"} <= names


@pytest.mark.parametrize("variant", list(_variants("x")))
def test_hits_equal_the_merge_on_the_modern_mix(variant):
    text = _variants(_modern_log())[variant]
    assert len(text) >= scan.PREFILTER_MIN // 2
    text = normalise(text) if variant != "crlf" else text
    for name, patterns in _pattern_sets():
        got = _spans(scan.hits(text, patterns))
        assert got == _spans(_merged(text, patterns)), name
    assert any(built is not None for built in scan._PREFILTERS.values())  # it was used


def test_hits_equal_the_merge_on_every_sample_and_range():
    rng = random.Random(15)
    sets = _pattern_sets()
    for text in _texts():
        big = text * (1 + scan.PREFILTER_MIN // max(len(text), 1))  # through the prefilter too
        for body in (text, big):
            for name, patterns in sets:
                assert _spans(scan.hits(body, patterns)) == _spans(_merged(body, patterns)), name
                a = rng.randrange(len(body) + 1)
                b = rng.randrange(a, len(body) + 1)
                got = _spans(scan.hits(body, patterns, a, b))
                assert got == _spans(_merged(body, patterns, a, b)), (name, a, b)


def test_hits_equal_the_merge_on_the_real_documents():
    """All the repository's real documents as one text (beyond ASCII: its byte offsets are
    mapped to characters), and as ASCII alone: most literals located, some scanned for."""
    text = normalise("\n".join(_real_documents()))
    for body in (text, text.encode("ascii", "ignore").decode()):
        for name, patterns in _pattern_sets():
            assert _spans(scan.hits(body, patterns)) == _spans(_merged(body, patterns)), name


def test_hits_keep_the_patterns_order_at_one_position():
    patterns = (
        ("b", re.compile("ab+")),
        ("a", re.compile("a")),
        ("c", re.compile("(?=a)")),
        ("d", re.compile("AB", re.I)),
        ("e", re.compile("x?")),
    )
    text = ("ab xab\nAB\x00ab " * 6000)[:70000]
    got = _spans(scan.hits(text, patterns))
    assert got == _spans(_merged(text, patterns))
    assert [kind for _, kind, _, _ in got[:5]] == ["b", "a", "c", "d", "e"]


def test_hits_without_hyperscan(monkeypatch):
    monkeypatch.setattr(scan, "hyperscan", None)
    monkeypatch.setattr(scan, "_PREFILTERS", {})
    text = normalise(_modern_log())
    for name, patterns in _pattern_sets():
        assert _spans(scan.hits(text, patterns)) == _spans(_merged(text, patterns)), name


@pytest.mark.parametrize("wide", ["", "😀 é "])
def test_hits_tried_where_their_literals_are_equal_the_merge(wide):
    """Literals that overlap themselves ("=====", "aaaa"), one found more than DENSE times,
    one never found, characters of 2 to 4 bytes before every hit."""
    patterns = (
        ("name", re.compile(r"====(?P<name>[^=\s][^=\n]*?)====:")),
        ("run", re.compile(r"Runtime\((ms)\): (\d+)")),
        ("aa", re.compile(r"aaa")),
        ("dense", re.compile(r"Latency: (\d+)")),
        ("wide", re.compile(r"端到端(\d+)")),
        ("never", re.compile(r"Infer Failed")),
        ("short", re.compile(r"P(\d+)")),
    )
    block = "a line of nothing much\n" * 10
    block += f"{wide}=========x====:\n{wide}Runtime(ms): 5 aaaaaaa P90 端到端3\n"
    text = block * 250 + "Latency: 7 " * (scan.DENSE + 10) + block
    located = scan._located(text, 0, len(text), patterns)
    assert located is not None
    by_kind = dict(zip((kind for kind, _ in patterns), located, strict=True))
    assert len(by_kind["run"]) == 251 and len(by_kind["aa"]) == 251 * 5
    assert by_kind["never"] is scan._ABSENT
    # scanned for: a literal found too often, one of one letter, one of markup
    assert by_kind["dense"] is None and by_kind["short"] is None and by_kind["name"] is None
    assert _spans(scan.hits(text, patterns)) == _spans(_merged(text, patterns))
    for a, b in ((1, len(text)), (len(block) * 7 + 3, len(text) - 5)):
        assert _spans(scan.hits(text, patterns, a, b)) == _spans(_merged(text, patterns, a, b))


def test_leading_literal():
    assert scan.leading_literal(re.compile(r"Time ?\(%\)[ \t]+Total")) == "Time"
    assert scan.leading_literal(re.compile(r"CUDA\ API\ Statistics")) == "CUDA API Statistics"
    assert scan.leading_literal(re.compile(r"\] (?:Model|Load engine): ")) == "] "
    assert scan.leading_literal(re.compile(r"abc", re.I)) == ""
    assert scan.leading_literal(re.compile(r"(?i)abc")) == ""
    assert scan.leading_literal(re.compile(r"(?<=a)bc")) == ""
    assert scan.leading_literal(re.compile(r"a*b")) == ""
    assert scan.leading_literal(re.compile(r"ab|ac")) == "a"  # the regex parser factors it
    assert scan.leading_literal(re.compile("…x")) == "…x"
    assert scan.leading_literal(re.compile(r"(?P<w>Total) it(er)s")) == "Total iters"
    assert scan.leading_literal(re.compile(r"(?P<w>cpu|gpu)_rss")) == ""
    assert scan.leading_literal(re.compile(r"(c(?:p)u)+_rss")) == ""
    assert scan.leading_literal(re.compile(r"(?i:ab)c")) == ""
    assert scan.leading_literal(re.compile(r"(ab*)c")) == "a"


def test_hits_of_a_pattern_with_a_nul_or_non_ascii_literal():
    patterns = (("nul", re.compile("a\x00b")), ("dots", re.compile("…+")), ("z", re.compile("z")))
    text = ("a\x00b …… z " * 10000) + "é…"
    assert _spans(scan.hits(text, patterns)) == _spans(_merged(text, patterns))


# -- text.nfkc and chunk_text ---------------------------------------------------------------

_SPECIAL = [
    chr(c)
    for c in [
        *range(0x300, 0x370),
        *range(0x1100, 0x1180),
        *range(0xAC00, 0xAC10),
        *range(0xFF00, 0xFF70),
        *range(0x2F00, 0x2F20),
        0xB5,
        0xC5,
        0xE9,
        0x212B,
        0x2026,
        0x3099,
        0x309A,
        0x304B,
        0x0CD5,
        0x0CC6,
        0x0B47,
        0x0B3E,
        0x0340,
        0x0344,
        0x0385,
        0x1FED,
        0x0958,
        0x093C,
        0x0915,
        0x0627,
        0x0653,
        0x1D15E,
        0x1D7CE,
        0xFDFA,
        0x3300,
    ]
]


def test_nfkc_equals_normalize_on_fixtures_and_variants():
    for text in [*_texts(), _modern_log(2)]:
        for variant, body in _variants(text).items():
            assert nfkc(body) == unicodedata.normalize("NFKC", body), variant


# nfkc's two ways with a character whose decomposition is one character: in the code units
# at once (always: 0 characters a replacement), or each in its run (never).
EVERY_WAY = pytest.mark.parametrize("singles_per_char", [10**12, 1, text_module.SINGLES_PER_CHAR])


@EVERY_WAY
def test_nfkc_equals_normalize_on_sparse_and_dense_strings(monkeypatch, singles_per_char):
    monkeypatch.setattr(text_module, "SINGLES_PER_CHAR", singles_per_char)
    rng = random.Random(2026)
    ascii_ = [chr(c) for c in range(0x20, 0x7F)] + ["\n", "\r", "\t"]
    for _ in range(3000):
        dense = rng.random() < 0.3
        parts = []
        for _ in range(rng.randrange(1, 25)):
            parts.append("".join(rng.choices(ascii_, k=rng.randrange(0, 3 if dense else 150))))
            parts.append("".join(rng.choices(_SPECIAL, k=rng.randrange(1, 4))))
        body = "".join(parts)[rng.randrange(0, 3) :]
        assert nfkc(body) == unicodedata.normalize("NFKC", body), repr(body)


@EVERY_WAY
def test_nfkc_equals_normalize_around_every_character_of_the_plane(monkeypatch, singles_per_char):
    """Every character of the Basic Multilingual Plane, after and before the characters it
    may combine with (a letter, a combining accent, Hangul jamo of each kind, a syllable),
    16 characters a text so that each takes the path of a few unsafe runs."""
    codes = [c for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000]
    before: dict[str, str] = {}  # a character -> those it composes with, before it
    for code in codes:
        canonical = unicodedata.decomposition(chr(code)).split()
        if len(canonical) == 2 and not canonical[0].startswith("<"):
            first, second = (chr(int(part, 16)) for part in canonical)
            before[second] = before.get(second, "") + first
    monkeypatch.setattr(text_module, "SINGLES_PER_CHAR", singles_per_char)
    pad = "x" * 2048
    for first in range(0, len(codes), 16):
        body = pad.join(
            f"e{c}\u0301{c}\u1100{c}\u1161{c}\uac00{c}\u11a8{c}{c}a\u0300{c}"
            + "".join(f"{b}{c}" for b in before.get(c, ""))
            for c in map(chr, codes[first : first + 16])
        )
        assert nfkc(body) == unicodedata.normalize("NFKC", body), body[:40]


def test_nfkc_of_a_log_with_a_chinese_comment_on_every_line():
    """Full-width punctuation on every line (replaced in the code units), an ellipsis and a
    decomposed accent on some (left to their runs), a full-width letter before a combining
    mark (replaced, then composed with it): as normalize makes it."""
    lines = []
    for n in range(3000):
        line = f"I0719 10:14:{n % 60:02d}.5 7093 a.cc:{n}] 第{n}次（预测）：耗时，{n / 10:.1f}ms"
        if n % 7 == 0:
            line += "……"
        if n % 11 == 0:
            line += " Ｅ\u0301 e\u0301 ﬁ"
        lines.append(line)
    body = "\n".join(lines) + "\n"
    assert nfkc(body) == unicodedata.normalize("NFKC", body)
    assert "（" not in nfkc(body) and "É" in nfkc(body)


def _decoded_then_normalised(raw: bytes, codec: str) -> tuple[str, str]:
    text, encoding = decode(raw, codec)
    return nfkc(text), encoding


def _assert_decode_nfkc_as_before(raw: bytes, codec: str = "utf-8") -> bool:
    """decode_nfkc (the bytes normalised first) gives what decoding then nfkc gave, the
    UTF-8 bytes of that text, and (when it gives them) the text's offset of each of its
    characters' first byte; or fails where that failed, with the same reason."""
    try:
        expected = _decoded_then_normalised(raw, codec)
    except text_module.NotText as error:
        with pytest.raises(text_module.NotText, match=re.escape(str(error))):
            text_module.decode_nfkc(memoryview(raw), codec)
        return False
    for data in (raw, memoryview(raw)):
        text, encoding, encoded, offsets = text_module.decode_nfkc(data, codec)
        assert (text, encoding) == expected, repr(raw[:60])
        assert encoded == text.encode("utf-8"), repr(raw[:60])
        if offsets is not None:
            starts = np.flatnonzero(np.frombuffer(encoded, np.uint8) & 0xC0 != 0x80)
            assert offsets(starts).tolist() == list(range(len(text))), repr(raw[:60])
    return offsets is not None


@pytest.fixture
def bytes_always(monkeypatch):
    """decode_nfkc normalising on the bytes whatever their length (else from 64 KiB)."""
    monkeypatch.setattr(text_module, "NORMALISED_AS_BYTES", 0)


def test_decode_nfkc_around_every_character_of_the_plane(bytes_always):
    """Each character of the plane as UTF-8 bytes, among those it may combine with (as in
    the test of nfkc above): the bytes' replacements are the code units'."""
    codes = [c for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000]
    pad = "x" * 64
    for first in range(0, len(codes), 64):
        body = pad.join(
            f"e{c}\u0301{c}\u1100{c}\u1161{c}\uac00{c}{c}a\u0300{c}Ｅ{c}"
            for c in map(chr, codes[first : first + 64])
        )
        _assert_decode_nfkc_as_before(body.encode("utf-8"))


def test_decode_nfkc_on_random_strings_and_the_fixtures(bytes_always):
    rng = random.Random(2027)
    ascii_ = [chr(c) for c in range(0x20, 0x7F)] + ["\n", "\t"]
    wide = _SPECIAL + list("（）：，。　第次预测耗时…ﬁ") + [chr(0x1D400), chr(0x2F9C)]
    indexed = 0
    for _ in range(3000):
        parts = []
        for _ in range(rng.randrange(1, 25)):
            parts.append("".join(rng.choices(ascii_, k=rng.randrange(0, 40))))
            parts.append("".join(rng.choices(wide, k=rng.randrange(1, 4))))
        indexed += _assert_decode_nfkc_as_before("".join(parts).encode("utf-8"))
    for text in [*_texts(), _modern_log(2)]:
        indexed += _assert_decode_nfkc_as_before(text.encode("utf-8"))
    assert indexed > 300  # texts normalised on their bytes alone, offsets given


def test_decode_nfkc_of_bytes_that_are_no_utf8(bytes_always):
    """Malformed sequences are never replaced: the text fails to decode as UTF-8 just as it
    did, and goes on to GB18030, lines of both, or the same reason of failure."""
    gbk = "第1次（预测）：耗时\n".encode("gb18030")
    full = "（x）：\n".encode()
    cases = [
        b"a\xef\xbc",  # cut short at the end
        b"\xef\xbc\x88\x88",  # a full-width "(" and a stray continuation byte
        b"\xe0\x80\xa8 overlong (",
        b"\xed\xa0\x80 a surrogate",
        b"\xf0\x9d\x90\x80 bold A, beyond the plane",
        b"\xef\xbc(\xef\xbc\x88",  # a lead without its last byte, then a whole one
        b"\xc0\xa8\xc1\xbf",
        gbk,
        gbk + full,  # GB18030 bytes that hold a UTF-8 sequence's look
        full + b"\xd6\xd0\n",
        "第1次（预测）\n".encode() + gbk,  # lines of both
        b"\xff\xfe",
    ]
    for raw in cases:
        _assert_decode_nfkc_as_before(raw)
    _assert_decode_nfkc_as_before(codecs.BOM_UTF8 + full, "utf-8-sig")  # a chunk's BOM
    _assert_decode_nfkc_as_before(full, "utf-8-sig")
    _assert_decode_nfkc_as_before("（x）".encode("utf-16"), "utf-16")


def test_nfkc_unsafe_table_covers_compositions_beyond_the_plane():
    """A character beyond the plane that composes has its parts beyond the plane too (all
    of them count as unsafe): none has a second part inside it the table leaves safe."""
    table = text_module._unsafe_table()
    for code in range(0x10000, 0x110000):
        canonical = unicodedata.decomposition(chr(code))
        if canonical and not canonical.startswith("<") and len(canonical.split()) == 2:
            second = int(canonical.split()[1], 16)
            assert second >= 0x10000 or table[second], hex(code)


def test_line_matches_equal_finditer_on_every_sample_and_variant():
    """The line-start patterns, tried only on the lines holding their needles, find what a
    scan of every position finds: headings, comment headers, fences, quote markers."""
    cases = [
        (runs._HEADING, ("#",)),
        (runs._COMMENT_HEADER, gate.MARKER_ANCHORS["comment"]),
        (runs._FENCE, ("```", "~~~")),
        (text_module._QUOTE, (">",)),
        (pr_tables._HEADING, ("#",)),
        (md_tables._HEADING, ("#",)),
        (ws_tables._HEADING, ("#",)),
    ]
    edge = "# a\n#b\n  ``` x\n> q\n   >> q\n    > code\nwho · comment · 2020-01-02\n#"
    for text in [*_real_documents(), _modern_log(2), edge]:
        for body in _variants(text).values():
            for pattern, needles in cases:
                got = [m.span() for m in line_matches(body, pattern, needles)]
                assert got == [m.span() for m in pattern.finditer(body)], pattern.pattern


def test_last_line_match_is_the_last_heading_of_any_window():
    """The nearest heading above a table, looked for from the end, is finditer's last, on
    windows of the real documents cut anywhere (mid-line too)."""
    rng = random.Random(16)
    text = "\n".join(_real_documents())
    for _ in range(400):
        a = rng.randrange(len(text))
        window = text[a : a + rng.randrange(1, 70_000)]
        for pattern in (md_tables._HEADING, ws_tables._HEADING):
            found = list(pattern.finditer(window))
            got = last_line_match(window, pattern, "#")
            assert (got.span() if got else None) == (found[-1].span() if found else None)


def test_whitespace_table_headers_found_where_their_words_are():
    """ws_tables tries header lines where hyperscan finds a header's words, or in an
    indexed ASCII chunk at the lines whose first byte a header may start with: the lines
    its scan of every line start finds, in a text of real documents, with the words rare,
    where they are too many (that scan again), and in logs where every line holds one."""
    from scripts.bench_ingest import _block

    text = "\n".join(_real_documents())
    batch = "batch_size latency(ms)\n1 2.5\n" * 40_000
    rng = random.Random(3)
    logs = ["".join(_block(mix, rng, n) for n in range(3000)) for mix in _HEADER_MIXES]
    bodies = [text * 2, text.encode("ascii", "ignore").decode() * 2, batch, *logs]
    bodies.append(" \tbatch_size latency(ms)\n" + "\n".join(bodies[1:4]))  # one at the start
    for body in bodies:
        first = [0] if ws_tables._HEADER_FIRST.match(body) else []
        scanned = first + [m.start() + 1 for m in ws_tables._HEADER.finditer(body)]
        assert list(ws_tables._header_starts(DocText(body))) == scanned
        if body.isascii():
            raw = body.encode()
            indexed = DocText(body, line_index=LineIndex(raw), data=raw)
            assert list(ws_tables._header_starts(indexed)) == scanned
    assert len(scanned) > 1000  # the last: the batch table's headers, and one at the start
    assert sum(log.count("atch") + log.count("hread") for log in logs) > 10_000
    assert scan.lines_holding(text * 2, ws_tables._HEADER_WORDS) is not None
    assert scan.lines_holding(batch, ws_tables._HEADER_WORDS) is None  # one a line: scanned


# Logs full of a header's words ("Batch size", "threads", "batch_size: 1,") in lines that
# are no header, and one of its tables (the sparse log's latency lines below none).
_HEADER_MIXES = ("demo-reports", "print-time", "demo", "gtest", "profiler")


def test_split_cells_equals_the_escaped_pipe_split():
    """md_tables.split_cells splits rows without an escaped pipe with str.split: the same
    cells as the regular expression that skips escaped pipes, on every row of every text."""

    def oracle(line):
        s = line.strip()
        closed = len(s) > 1 and s.endswith("|") and not s.endswith("\\|")
        s = s[1:] if s.startswith("|") else s
        s = s[:-1] if closed else s
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)], closed

    edge = ["| a \\| b | c |", "|", "||", "\\|x|", " | 1 |2| ", "a|b\\|", "|\u3000x\u3000|"]
    lines = [ln for text in _real_documents() for ln in text.splitlines() if "|" in ln]
    assert len(lines) > 300
    for line in [*lines, *edge]:
        assert md_tables.split_cells(line) == oracle(line), line


def test_model_names_found_as_without_their_first_letters_class():
    """runs._MODELS, led by a class of the names' first letters, finds what the names
    alone find, case-insensitively (with the letters that fold to them: "ſ" for "s")."""
    plain = re.compile(rf"\b({runs._MODEL_NAMES})\b", re.I)
    edge = "ERNIE bert-base ReſNet-50 xbert ernie_tiny Transformer big GPT-2 VGG16 lstm1 ſeq2seq"
    for text in [*_real_documents(), edge]:
        for body in _variants(text).values():
            got = [m.span(1) for m in runs._MODELS.finditer(body)]
            assert got == [m.span(1) for m in plain.finditer(body)]
    assert len(runs._MODELS.findall(edge)) == 7


def _chunk(text: str) -> DocText:
    raw = text.encode("utf-8")
    doc, _ = documents.chunk_text(memoryview(raw), "utf-8", "auto", DocMeta(uri="x"), 1)
    return doc


def test_chunk_text_normalises_as_normalise_did():
    for text in [*_texts()[:8], _modern_log(2)]:
        for variant, body in _variants(text).items():
            body = "é " + body  # not ASCII: the decoding path
            doc = _chunk(body)
            expected = normalise(decode(body.encode("utf-8"), "utf-8")[0])
            assert doc.text == expected, variant
            assert doc.markers == gate.markers_of(expected), variant


def _searched_markers(text: str) -> frozenset[str]:
    """The markers as chunk_text found them by searching the str, before line_markers."""
    found = set()
    if "#" in text and (text.startswith("#") or "\n#" in text):
        found.add("heading")
    if ("`" in text and "```" in text) or ("~" in text and "~~~" in text):
        found.add("fence")
    if ">" in text and (text.startswith((">", " >")) or "\n>" in text or "\n >" in text):
        found.add("quote")
    if "\r" in text:
        found.add("cr")
    return frozenset(found)


def test_line_markers_answer_as_the_searches_did():
    # chunk_text asks line_markers (the lines' first bytes by numpy) what it asked of the
    # str by searches ("\n#", "\n>", "\n >"): of the str when ASCII, else of the UTF-8
    # bytes.
    edges = ["", "#", "# x", " >", ">", "a->b\n", "x\n#", "x\n >", "x\n  >", "x #\n", "``", "~~~"]
    edges += ["a\rb", "x\n", "\n\n>", "x\n ", "é\n> y", "é #", "＞ x\n＃ y"]
    texts = [*edges, *(v for t in _texts()[:12] for v in _variants(t).values()), _modern_log(2)]
    for text in texts:
        expected = _searched_markers(text)
        raw = text.encode("utf-8")
        newlines = np.flatnonzero(np.frombuffer(raw, np.uint8) == ord("\n"))
        assert gate.line_markers(raw) == expected, repr(text[:60])
        assert gate.line_markers(raw, raw, newlines) == expected, repr(text[:60])
        if text.isascii():
            assert gate.line_markers(text, raw, newlines) == expected, repr(text[:60])
        comment = {"comment"} if "commented" in text or "·" in text else set()
        assert gate.markers_of(text) == expected | comment, repr(text[:60])


def test_chunk_text_beyond_ascii_gives_the_text_offsets_of_hits_and_lines():
    """A chunk beyond ASCII, normalised on its bytes: the gate's hits and the newline index
    are the text's offsets (as a search of the str finds them), whether normalising moved
    bytes (full-width "（：", three bytes to one), changed them in place ("µ" to "μ") or
    left them. Where the text needed more (an ellipsis is three dots), no hits, as before."""
    line = (
        "I0719 10:14:50.{n:06d} 70931 tester.cc:98] batch_size: 1, repeat: 1000,"
        " average latency: {ms:.4f}ms # 第{n}次{extra}\n"
    )
    for extra, on_bytes in (
        ("（预测）：耗时", True),
        ("µs", True),
        ("预测耗时", True),
        ("é…", False),
    ):
        body = "".join(
            line.format(n=n, ms=6 + n / 1e4, extra=extra if n % 3 else "") + f"说明 {n}\n"
            for n in range(2000)
        )
        raw = body.encode("utf-8")
        doc, _ = documents.chunk_text(
            memoryview(raw), "utf-8", "auto", DocMeta(uri="x"), 1, documents.LineIndex(raw)
        )
        assert doc.text == nfkc(body)
        if on_bytes:
            assert doc.hits == documents.gate_for("auto")._scan_text(doc.text).hits
            assert len(doc.hits["latency"]) == 2000
        else:
            assert doc.hits is None
        assert isinstance(doc.line_at, text_module.TextLineIndex)
        positions = list(range(0, len(doc.text), 7))
        assert doc.lines_at(positions) == [doc.text.count("\n", 0, p) + 1 for p in positions]


def test_the_command_keeps_freed_memory_where_glibc_allows():
    """ingest/__main__.py asks glibc to keep freed blocks of a chunk's size for reuse; with
    glibc (these machines, the CI image) both settings are taken."""
    code = "from ingest.cli import keep_freed_memory; print(keep_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(platform.libc_ver()[0] == "glibc")


def test_chunk_text_with_a_quote_marker_that_nfkc_makes():
    doc = _chunk("é\n＞ Throughput: 10 qps\n\r\n")  # a fullwidth ">" becomes a quote marker
    assert doc.text == normalise("é\n＞ Throughput: 10 qps\n\r\n")
    assert doc.text == "é\nThroughput: 10 qps\n\n"


# -- rows ------------------------------------------------------------------------------------


def test_chunks_rows_are_moved_on_by_their_own_amounts_in_their_own_types():
    """Rows.placed's addition: each part's rows plus its amount, the column's type kept,
    and a run number pushed past what its int32 column holds refused, not wrapped."""
    parts = [pa.array([0, 1], pa.int32()), pa.array([], pa.int32()), pa.array([0], pa.int32())]
    run = pa.chunked_array(parts)
    moved = save._plus(run, np.array([0, 5, 7]), [2, 0, 1])
    assert moved.type == pa.int32() and moved.to_pylist() == [0, 1, 7]
    line = pa.chunked_array([pa.array([3, 9], pa.int64()), pa.array([1], pa.int64())])
    assert save._plus(line, np.array([0, 2**40]), [2, 1]).to_pylist() == [3, 9, 2**40 + 1]
    with pytest.raises(OverflowError):
        save._plus(run, np.array([0, 0, 2**31]), [2, 0, 1])


def test_rows_travel_from_a_worker_as_they_were():
    """Rows pickle as Arrow IPC streams (save.Rows.__reduce__): every table comes back
    equal, in its own schema, and an absent one stays absent. The chunk holds vLLM,
    trtexec and nsys reports (measurements, profile events) and a pass log (passes)."""
    import pickle

    passes = ROOT / "data/samples/benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md"
    log = _modern_log(3) + passes.read_text(encoding="utf-8")
    result = documents._packed(_parsed(log))
    rows = result.rows
    assert rows.count and rows.events.num_rows and rows.passes.num_rows
    back = pickle.loads(pickle.dumps(result)).rows
    for name in ("measurements", "series", "runs", "events", "passes"):
        table, came = getattr(rows, name), getattr(back, name)
        assert came.schema.equals(table.schema, check_metadata=True), name
        assert came.equals(table), name
    bare = pickle.loads(pickle.dumps(save.Rows.of([], [])))
    assert bare.events is None and bare.passes is None and bare.count == 0


def _old_record_table(records, schema):
    return pa.table(
        [save.column(list(map(attrgetter(f.name), records)), f.type) for f in schema],
        schema=schema,
    )


def _parsed(text: str):
    raw = text.encode("utf-8")
    chunk = documents.Chunk(memoryview(raw), b"", documents.LineIndex(raw))
    return documents.parse_chunk(chunk, "utf-8", "auto", DocMeta(uri="x"))


@pytest.mark.parametrize("size", [3, 5000, 140_000])  # as is; wide and cast; in batches
def test_record_table_equals_a_column_at_a_time(size):
    rng = random.Random(size)
    events = [
        ProfileEvent(
            f"op{rng.randrange(9)}…",
            rng.choice([None, rng.randrange(10**12)]),
            rng.choice([None, rng.random(), 3]),
            ave=rng.choice([None, 1e-300, 2.5]),
            depth=rng.randrange(4),
            thread=rng.choice(["", "thread0"]),
            run=rng.randrange(100),
            line=rng.randrange(10**9),
            raw="x" * rng.randrange(5),
        )
        for _ in range(size)
    ]
    new, old = (
        save.record_table(events, save.EVENT_SCHEMA),
        _old_record_table(events, save.EVENT_SCHEMA),
    )
    assert new.schema.equals(old.schema, check_metadata=True)
    assert new.equals(old)
    assert [c.num_chunks for c in new.columns] == [c.num_chunks for c in old.columns]
    assert save.record_table([], save.PASS_SCHEMA).equals(_old_record_table([], save.PASS_SCHEMA))


def test_record_table_of_the_modern_mix():
    result = _parsed(_modern_log(200))
    events = result.found.profile_events
    assert len(events) > 4096
    new = save.record_table(events, save.EVENT_SCHEMA)
    assert new.equals(_old_record_table(events, save.EVENT_SCHEMA))
    assert new.schema.equals(save.EVENT_SCHEMA)


def test_record_table_refuses_what_the_store_cannot_hold():
    event = ProfileEvent("op", 1, 1.0, depth=2**40)  # int32 depth
    with pytest.raises(pa.ArrowInvalid):
        _old_record_table([event] * 5000, save.EVENT_SCHEMA)
    with pytest.raises(pa.ArrowInvalid):
        save.record_table([event] * 5000, save.EVENT_SCHEMA)


# -- runs ------------------------------------------------------------------------------------


def _uncached_at(contexts: runs.Contexts, line: int):
    if contexts.flat:
        return runs._FLAT
    return contexts._context(line)


def test_contexts_at_keeps_its_span_truly():
    rng = random.Random(7)
    docs = [*_texts(), "```\nno close\n# inside\n", "# a\n```x\n```\n## b\n```\n"]
    for text in docs:
        doc = DocText(normalise(text))
        contexts = runs.Contexts(doc)
        n = text.count("\n") + 3
        lines = list(range(-1, n)) + [rng.randrange(-2, n + 2) for _ in range(300)]
        for line in lines:  # in order, then anywhere
            got, expected = contexts.at(line), _uncached_at(contexts, line)
            assert (got.heading, got.caption, got.section, got.date, got.label) == (
                expected.heading,
                expected.caption,
                expected.section,
                expected.date,
                expected.label,
            ), line


def test_labels_params_are_the_nearest_labels_first():
    labels = ["", "FP32 bs 4", "INT8 QAT seq_len 128", "fp16 batch size 8", "seq128 INT8"]
    for a in labels:
        for b in labels:
            for c in labels:
                expected: dict[str, object] = {}
                for label in (a, b, c, "bs 2 fp32"):
                    for key, value in runs.params_from_label(label).items():
                        expected.setdefault(key, value)
                assert dict(runs._labels_params(a, b, c, "bs 2 fp32")) == expected
                m = Measurement("bert", "latency", 1.0, "ms", params={"batch_size": 1})
                ctx = runs._Context("bs 2 fp32", c, 0)
                runs.fill_measurement(
                    m, ctx, DocText("x"), ("", ""), runs.DocModel(DocText("x")), (a, b)
                )
                assert m.params == {**expected, "batch_size": 1}


def test_assemble_with_the_span_kept_or_not(monkeypatch):
    """Runs and filled records of prose documents (headings, fences, captions, line
    labels) are the same with a context looked up afresh for each record."""
    docs = [normalise(p.read_text(encoding="utf-8")) for p in SAMPLES if p.suffix == ".md"]
    results = []
    for fresh in (False, True):
        if fresh:
            monkeypatch.setattr(runs.Contexts, "at", _uncached_at)
        out = []
        for text in docs:
            doc = DocText(text)
            found = documents.parse_text(doc, "auto")
            bulk.materialise(found)
            assembled = runs.assemble(doc, found, runs.Contexts(doc))
            out.append((assembled, found.measurements, found.profile_events, found.phases))
        results.append(out)
    assert results[0] == results[1]
    assert sum(len(m) for _, m, _, _ in results[0]) > 100


# -- documents -------------------------------------------------------------------------------


def _old_lines_read(found: Found) -> set[int]:
    lines: set[int] = set()
    for block in found.blocks:
        lines.update(block.lines.tolist())
    for records in (found.measurements, found.profile_events, found.phases, found.passes):
        for record in records:
            lines.update(range(record.line, record.line + record.raw.count("\n") + 1))
    return lines


def _outcome(function, found):
    try:
        return function(found)
    except AttributeError as error:  # a phase has no raw: both fail alike
        return str(error)


def test_lines_read_equal_a_range_a_record():
    for text in [*_texts(), _modern_log(1)]:
        doc = DocText(normalise(text))
        found = documents.parse_text(doc, "auto")
        assert _outcome(documents._lines_read, found) == _outcome(_old_lines_read, found)
        found.phases = []
        assert documents._lines_read(found) == _old_lines_read(found)


def test_collector_paused_restores_its_state():
    assert gc.isenabled()
    with save.collector_paused():
        assert not gc.isenabled()
        with save.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), save.collector_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with save.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_command_frozen_for_life_is_never_counted_again() -> None:
    """`python -m ingest` freezes its imports (save.freeze_for_life): collector_paused then
    leaves them frozen without gc.get_freeze_count(), which walks each of them (4.6 ms a
    chunk in the workers the command forks). Run in a process of its own: a freeze for
    life would stay in the test process."""
    code = """
import gc
from ingest import save
save.freeze_for_life()
frozen, count = gc.get_freeze_count(), gc.get_freeze_count
def counted():
    raise AssertionError("gc.get_freeze_count() asked again")
gc.get_freeze_count = counted
with save.collector_paused():
    made = [[i] for i in range(1000)]
gc.get_freeze_count = count
assert gc.get_freeze_count() == frozen > 1000, (gc.get_freeze_count(), frozen)
assert gc.isenabled()
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_collector_paused_leaves_a_freeze_alone():
    """What it made goes to the oldest generation unexamined; objects someone else froze
    stay frozen."""
    with save.collector_paused():
        made = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == 0
    assert gc.is_tracked(made[0])
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with save.collector_paused():
            again = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen  # not unfrozen, and nothing new frozen
        assert len(again) == len(made)
    finally:
        gc.unfreeze()
    cycle: list[object] = []
    with save.collector_paused():
        cycle.append(cycle)  # a cycle made while paused is still found
    del cycle
    assert gc.collect() >= 1


def _old_caption(lines: list[str], index: int) -> str:
    """runs._LineLabels' caption as it was found before: a walk up from the record's line."""
    index -= 1
    while 0 <= index < len(lines):
        text = lines[index].strip()
        if not text or text.startswith(("```", "~~~")):
            return ""
        if text.endswith((":", "：")):
            return text.rstrip(":：")
        index -= 1
    return ""


def test_line_captions_are_the_walk_up_from_each_line() -> None:
    """The captions come from one pass over a document's lines: each record walked up to
    its caption before, through every line of a JSON result (no line ends in a colon),
    2.6 million lines for 200 of them. Every line of every sample and real document, first
    line 1 and 7, against the walk."""
    texts = [*_texts(), *_real_documents(), "a:\n\nb\nFP32: 1 ms\n```\nc:\nx\n"]
    checked = 0
    for text in texts:
        text = normalise(text)
        if len(text) > runs.PROSE_LIMIT:
            continue
        lines = text.split("\n")
        for first in (1, 7):
            labels = runs._LineLabels(DocText(text, first_line=first))
            for index in range(-1, len(lines) + 2):
                raw = lines[index] if 0 <= index < len(lines) else ""
                _, caption = labels.of(first + index, raw)
                assert caption == _old_caption(lines, index), (index, text[:80])
                checked += 1
    assert checked > 10_000
