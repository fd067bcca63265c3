"""The nsys parser's fast paths read what its slow ones read (issue 15).

- ``nsys._hits`` (seven scans, lazy headings found as a lead and a report) against the
  fifteen patterns the parser scanned with before, merged by ``scan.hits``: the same hits
  on the fixtures, their variants and random texts made of the patterns' pieces;
- a table's rows read inline (``nsys._FAST``) against ``nsys._event`` alone, row by row,
  on the fixtures and variants that would embarrass the fast path: cut tables, missing
  cells, other time units, CRLF, non-ASCII text, exponents, NaN, negative and absurd
  values, thousands commas, merged names, fenced and quoted blocks; and with the caches
  (layouts, shares) cold and warm.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.parsers import nsys
from ingest.parsers.scan import hits
from ingest.text import DocText, from_text
from perfboard.model import DocMeta

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "modern"
DOCUMENTS = (
    "nsys/nsys-stats-text_nanomoe-report.md",
    "nsys/nsys-2020-stats_josemonsalve2-llvm-compression-readme.md",
    "nsys/nsys-kern-sum-csv_dotllm-report.csv",
    "samples/nsys-stats-text_nanomoe-report.md",
    "samples/nsys-kern-sum-csv_dotllm-report.csv",
)

# The patterns the parser scanned with before _hits, as it had them.
_R = r"([A-Za-z][A-Za-z0-9_]*)"
OLD_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("heading", re.compile(r"\*\* [^\n]*?\(" + _R + r"\):")),
    ("heading", re.compile(r"Processing \[[^\]\n]*\] with \[[^\]\n]*?" + _R + r"\.py\]")),
    ("heading", re.compile(r"Executing '" + _R + r"' stats report")),
    ("heading", re.compile(r"Exporting \[[^\]\n]*?" + _R + r"\.py ")),
    *(("title", re.compile(re.escape(title))) for title in nsys._OLD_TITLES),
    ("text", re.compile(r"Time ?\(%\)[ \t]+Total Time")),
    ("csv", re.compile(r"Time ?\(%\),[ \t]*Total Time")),
    ("trace", re.compile(r"Start ?\([a-z]+\)[ \t]*,[ \t]*Duration ?\([a-z]+\)")),
    ("trace text", re.compile(r"Start ?\([a-z]+\)[ \t]+Duration ?\([a-z]+\)")),
)


def old_hits(text: str) -> list[tuple[int, str, str]]:
    out = []
    for pos, kind, m in hits(text, OLD_PATTERNS):
        if kind == "title":
            out.append((pos, "heading", nsys._OLD_TITLES[m[0]]))
        else:
            out.append((pos, kind, m[1] if kind == "heading" else ""))
    return out


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# -- variants -----------------------------------------------------------------------------


def _is_csv(line: str) -> bool:
    return "," in line and "  " not in line


def _map_rows(text: str, change: Callable[[str, int], str]) -> str:
    out = []
    for i, line in enumerate(text.split("\n")):
        cells = line.split(",") if _is_csv(line) else line.split()
        is_row = len(cells) > 4 and cells[0].replace(",", "").replace(".", "", 1).isdigit()
        out.append(change(line, i) if is_row else line)
    return "\n".join(out)


def _swap_number(line: str, i: int, values: tuple[str, ...]) -> str:
    """The line with one of its numbers (which one and what by: i) made another value."""
    value = values[i % len(values)]
    if _is_csv(line):
        cells = line.split(",")
        k = i % (len(cells) - 1)
        cells[k] = f'"{value}"' if "," in value else value
        return ",".join(cells)
    numbers = list(re.finditer(r"(?<![\w.,])[\d,]+(?:\.\d+)?(?![\w.,])", line))
    if not numbers:
        return line
    m = numbers[i % len(numbers)]
    return line[: m.start()] + value + line[m.end() :]


def _drop_cell(line: str, i: int) -> str:
    if _is_csv(line):
        return re.sub(r",[^,]*", "", line, count=1)
    return re.sub(r"\s+\S+", "", line, count=1)


def _commas(line: str, i: int) -> str:
    if _is_csv(line):
        return re.sub(r"(?<=,)(\d+)(\d{3})(?=,)", r'"\1,\2"', line, count=2)
    return re.sub(r"(\d)(\d{3})(?!\d)", r"\1,\2", line, count=2)


ODD_VALUES = (
    "1e5",
    "2.5E-3",
    "1e400",
    "nan",
    "inf",
    "-1",
    "-0",
    "1_000",
    "1,2,3",
    "100.1",
    "1e20",
    "123456789012345678901",
    "0.0",
    "000",
    "7.",
    ".5",
    "1..2",
    "\u0661\u0662",  # Arabic-Indic digits: float() reads them
    "\u00b2",  # a digit to str.isdigit, not to float()
    "-",
    "99999999999999999",
)


def variants(text: str) -> dict[str, str]:
    """The text and the variants of it that would embarrass a fast path."""
    lines = text.split("\n")
    out = {
        "as is": text,
        "crlf": text.replace("\n", "\r\n"),
        "cut in a row": text[: len(text) * 2 // 3],
        "cut at a row's end": "\n".join(lines[: len(lines) * 2 // 3]),
        "no newline at the end": text.rstrip("\n"),
        "back to back": text.rstrip("\n") + "\n" + text,
        "twice, no blank line between tables": re.sub(r"\n\s*\n", "\n", text),
        "non-ASCII around": "日志 ✓ café\n" + text.replace("\n\n", "\n\n温度 «x» …\n\n") + "\nñ",
        "fenced": "```\n" + text + "\n```\n",
        "quoted": "".join("> " + line + "\n" for line in lines),
        "indented": "".join("    " + line + "\n" for line in lines),
        "units us": text.replace("(ns)", "(us)"),
        "units ms": text.replace("(ns)", "(ms)"),
        "units s": text.replace("(ns)", "(s)"),
        "units usec": text.replace("(ns)", "(usec)"),
        "units unknown": text.replace("(ns)", "(ks)"),
        "no rule": re.sub(r"\n[ -]*-{3,}[ -]*\n", "\n", text, count=2),
        "missing cells": _map_rows(text, _drop_cell),
        "short rows": _map_rows(text, lambda line, i: line[: len(line) // 3]),
        "odd values": _map_rows(text, lambda line, i: _swap_number(line, i, ODD_VALUES)),
        "odd values 2": _map_rows(text, lambda line, i: _swap_number(line, i * 7 + 3, ODD_VALUES)),
        "absurd times": _map_rows(
            text, lambda line, i: _swap_number(line, i, ("86400000000001", "9" * 16, "1e14"))
        ),
        "commas": _map_rows(text, _commas),
        "same names": _map_rows(text, lambda line, i: line[:-12] + "kernel_x    "),
        "share over 100": _map_rows(text, lambda line, i: line.replace("0.0", "100.5", 1)),
        "no headings": re.sub(r"\*\* |Processing \[|CUDA [A-Za-z ]*Statistics", "", text),
        "headings mid-line": text.replace("Processing [", "[3/4] Processing [").replace(
            "** ", "x ** ("
        ),
    }
    return out


@functools.cache
def texts() -> dict[str, str]:
    out = {}
    for name in DOCUMENTS:
        for label, text in variants(fixture_text(name)).items():
            out[f"{name} / {label}"] = text
    out["csv named by the file"] = fixture_text(DOCUMENTS[2])
    return out


def doc_of(text: str, uri: str = "<text>") -> DocText:
    return from_text(text, DocMeta(uri=uri))


# -- the scan -----------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(texts()))
def test_the_scan_finds_what_the_old_patterns_found(label: str) -> None:
    text = doc_of(texts()[label]).text
    assert nsys._hits(text) == old_hits(text)


PIECES = (
    "Processing [",
    "] with [",
    ".py]",
    ".py ",
    "Exporting [",
    "Executing '",
    "' stats report",
    "** ",
    "**",
    "(",
    "):",
    ")",
    "]",
    "[",
    "\n",
    " ",
    "/",
    "-",
    ".",
    "_",
    "a",
    "cuda_api_sum",
    "x1",
    "a1",
    "x.py",
    "9",
    "Statistics",
    "CUDA API ",
    "CUDA Memory Operation ",
    " (by time)",
    " (by size",
    "NVTX Push-Pop Range ",
    "NVTX Range ",
    "Time (%)",
    "Time(%)",
    "  Total Time",
    ",Total Time",
    "Start (ns)",
    ",Duration (ns)",
    " Duration (us)",
)


@pytest.mark.parametrize(
    "text",
    [
        "Processing [a] with [Processing [b] with [/r/cuda_api_sum.py]...",
        "Processing [a] with [/r/1.py] Processing [b] with [/r/x.py]",
        "Processing [a] with [/r/_1abc.py]",
        "Processing [a] with [/r/nvtx_sum.py\nProcessing [a] with [nvtx_sum.py]",
        "Processing [a] with [cuda_api_sum.pyx.py]",
        "Exporting [/a/1.py /b/gputrace.py x.py ] Exporting [/c/y.py ",
        "Exporting [Exporting [/a/1.py gputrace.py ]",
        "Exporting [/a/-.py gputrace.py x] and [z.py ",
        " ** CUDA API Summary (cuda_api_sum): ** x (y): ** (1x): (osrt_sum):",
        " ** (a) (b): ** (c):",
        "** CUDA (not one) Summary (cuda_gpu_sum):x",
        "CUDA API Statistics:CUDA Kernel StatisticsNVTX Range Statistics",
        "NVTX Push-Pop Range Statistics CUDA Memory Operation Statistics (by size in KiB)",
        "Statistics: API Statistics",
        "[3/8] Executing 'cuda_gpu_kern_sum' stats report\nExecuting '1x' stats report",
    ],
)
def test_the_scan_on_headings_that_nest_and_repeat(text: str) -> None:
    assert nsys._hits(text) == old_hits(text)


def test_the_scan_agrees_on_random_texts_of_the_patterns_pieces() -> None:
    rng = random.Random(15)
    for _ in range(20000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 40)))
        assert nsys._hits(text) == old_hits(text), text


# -- the rows -----------------------------------------------------------------------------


def parsed(doc: DocText, fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(nsys, "_FAST", fast)
    return [repr(item) for item in nsys.parse(doc)]


@pytest.mark.parametrize("label", sorted(texts()))
def test_the_fast_rows_are_the_slow_rows(label: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = texts()[label]
    uri = "r_cuda_gpu_kern_sum.csv" if label == "csv named by the file" else "<text>"
    slow = parsed(doc_of(text, uri), False, monkeypatch)
    nsys._TEXT_LAYOUTS.clear()
    nsys._RATIOS.clear()
    nsys._NUMERIC.clear()
    cold = parsed(doc_of(text, uri), True, monkeypatch)
    warm = parsed(doc_of(text, uri), True, monkeypatch)
    assert cold == slow
    assert warm == slow


def test_every_odd_cell_in_every_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each odd value in each numeric column of a 2026 and a 2020 table, text and CSV."""
    new = (
        " Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)"
        "  StdDev (ns)  Name\n"
        " --------  ---------------  ---------  --------  --------  --------  --------"
        "  -----------  ----\n"
    )
    old = (
        " Time(%)  Total Time (ns)  Instances   Average   Minimum  Maximum  Name\n"
        " -------  ---------------  ---------  ---------  -------  -------  ----\n"
    )
    good_new = ["43.2", "2613668540", "475600", "5495.5", "4817.0", "2862", "4363365", "12.5"]
    good_old = ["100.0", "222,080", "1", "222,080.0", "222,080", "222,080"]
    for header, good in ((new, good_new), (old, good_old)):
        names = [n.strip() for n in header.split("\n")[0].split("  ") if n.strip()]
        texts, csvs = [], []  # one table of a good row and an odd one each
        for column in range(len(good)):
            for k, value in enumerate(ODD_VALUES):
                cells = list(good)
                cells[column] = value
                rows = [[*good, "good"], [*cells, f"k{column}_{k}"]]
                texts.append(header + "".join("  ".join(r) + "\n" for r in rows))
                quoted = [",".join(f'"{c}"' if "," in c else c for c in r) for r in rows]
                csvs.append(",".join(names) + "\n" + "\n".join(quoted))
        for body in ("\n".join(texts), "\n\n".join(csvs) + "\n"):
            slow = parsed(doc_of(body), False, monkeypatch)
            assert parsed(doc_of(body), True, monkeypatch) == slow
            assert sum("nsys row:" in r for r in slow) > 30  # the odd values were read as such
