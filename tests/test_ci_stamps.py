"""A CI job's log, with the runner's timestamp before every line, reads as the log itself.

GitHub Actions keeps "2024-01-03T02:30:00.9447399Z " before each line of a job's log (the
log of a run, downloaded); `gh run view --log` prints the job's and the step's names and a
tab each before it; GitLab's runner writes "2026-07-21T18:06:18.101984Z 00O " (stream and
flag after the time), Jenkins' timestamper "[2025-06-25T14:31:12.339Z] ". Read as they
were, the profiler's tables were not read at all, and a dense log's lines missed every fast
path (a chunk of tester lines: 0.13 s -> 0.90 s).
"""

from __future__ import annotations

import codecs
from datetime import datetime
from pathlib import Path

import pytest

from ingest import bulk
from ingest.documents import chunk_text, read_document
from ingest.text import (
    LineIndex,
    ci_log_started,
    from_text,
    without_ci_stamps,
    without_ci_stamps_bytes,
)
from perfboard.model import DocMeta
from tests.conftest import real_text_documents, sample_path, stored_records

STAMP = "2024-01-03T02:30:00.9447399Z "
STARTED = datetime(2024, 1, 3, 2, 30, 0, 944739)
# Each runner's stamp for the same moment (GitLab's carries microseconds).
RUNNERS = {
    "github": STAMP,
    "gitlab": "2024-01-03T02:30:00.944739Z 00O ",
    "jenkins": "[2024-01-03T02:30:00.944739Z] ",
}


def stamped(text: str, stamp: str = STAMP) -> str:
    """Every line of `text` as the runner writes it (a blank line: the stamp alone; GitLab
    keeps the space after its flag)."""
    if stamp.endswith(("O ", "E ")):
        return "".join(stamp + line for line in text.splitlines(True))
    return "".join(
        stamp + line if line != "\n" else stamp.rstrip() + "\n" for line in text.splitlines(True)
    )


def test_stamps_go_and_lines_stay() -> None:
    log = (
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run 10 samples\n"
        "\n--- Running IR pass [fc_fuse_pass]\n"
    )
    assert without_ci_stamps(stamped(log)) == log
    assert (
        without_ci_stamps("\ufeff" + stamped(log)) == "\ufeff" + log
    )  # GitHub's files start with a BOM
    assert without_ci_stamps(stamped(log, "2026-03-10T20:29:05Z ")) == log  # no fraction
    assert (
        without_ci_stamps(stamped(log, "bench\tRun tester\t" + STAMP)) == log
    )  # gh run view --log
    assert without_ci_stamps(stamped(log, RUNNERS["gitlab"])) == log
    assert without_ci_stamps(stamped(log, RUNNERS["gitlab"].replace("00O", "01E"))) == log
    assert without_ci_stamps(stamped(log, RUNNERS["jenkins"])) == log
    data = stamped(log).encode()
    assert without_ci_stamps_bytes(data) == log.encode()
    assert without_ci_stamps_bytes(codecs.BOM_UTF8 + data) == codecs.BOM_UTF8 + log.encode()


def test_a_text_whose_first_line_has_no_stamp_is_left_as_it_is() -> None:
    prose = "A comment quoting a log:\n" + stamped("Run 10 samples\n")
    assert without_ci_stamps(prose) is prose
    data = prose.encode()
    assert without_ci_stamps_bytes(data) is data
    assert from_text(prose).text == prose


def test_a_ci_log_is_dated_by_its_first_stamp_unless_a_date_is_given(tmp_path: Path) -> None:
    assert ci_log_started(stamped("x\n").encode()) == STARTED
    assert ci_log_started(codecs.BOM_UTF8 + b"2026-03-10T20:29:05Z x\n") == datetime(
        2026, 3, 10, 20, 29, 5
    )
    assert ci_log_started(b"bench\tRun tester\t2026-03-10T20:29:05.5Z x") == datetime(
        2026, 3, 10, 20, 29, 5, 500000
    )
    for stamp in RUNNERS.values():
        assert ci_log_started(stamp.encode() + b"x\n") == STARTED
    assert ci_log_started(b"2026-02-30T20:29:05Z x\n") is None  # no such day
    assert ci_log_started(b"I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run") is None
    tester = (
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345]"
        " Run 5010 samples, average latency: 6.92849 ms per sample.\n"
    )
    log = tmp_path / "job.log"
    log.write_text(stamped(tester), encoding="utf-8")
    (m,) = read_document(log, "auto", DocMeta(uri="job.log")).found.measurements
    assert m.measured_at == datetime(2023, 9, 11, 6, 41, 55, 494792)  # Sept: the year before
    given = DocMeta(uri="job.log", created_at=datetime(2019, 9, 12))
    (m,) = read_document(log, "auto", given).found.measurements
    assert m.measured_at == datetime(2019, 9, 11, 6, 41, 55, 494792)


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("path", real_text_documents(), ids=lambda p: p.name)
def test_every_real_document_reads_the_same_with_a_stamp_on_every_line(
    path: Path, runner: str, tmp_path: Path
) -> None:
    text = path.read_text(encoding="utf-8")
    log = tmp_path / path.name
    log.write_text(stamped(text, RUNNERS[runner]), encoding="utf-8")
    # The log is dated by its first stamp, as the document would be by --date.
    plain = read_document(path, "auto", DocMeta(uri=path.name, created_at=STARTED))
    as_logged = read_document(log, "auto", DocMeta(uri=path.name))
    assert stored_records(as_logged.found) == stored_records(plain.found)
    assert as_logged.info.n_lines == plain.info.n_lines
    assert [(r.number, r.label, r.first_line) for r in as_logged.runs] == [
        (r.number, r.label, r.first_line) for r in plain.runs
    ]


def test_a_profiler_report_in_a_ci_log_is_read() -> None:
    text = sample_path("benchmark-165_xreki_profile-report.md").read_text(encoding="utf-8")
    doc = from_text(stamped(text))
    assert doc.text == from_text(text).text


def test_a_large_ci_log_is_cut_where_a_plain_one_is_and_read_in_bulk(tmp_path: Path) -> None:
    """The chunk planner reads the stamped bytes: it still cuts before a pass sequence (a
    cut inside one would make its second half a run of its own), and a chunk's text is the
    unstamped bytes with their own newline index, so the bulk readers take it."""
    lines = sample_path("benchmark-165_2019-08-28_xreki_fuse-elewise-add-act.md").read_text(
        encoding="utf-8"
    )
    passes = "".join(ln for ln in lines.splitlines(True) if ln.startswith("---"))
    tester = (
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345]"
        " Run 5010 samples, average latency: 6.92849 ms per sample.\n"
    )
    block = passes + tester  # a predictor's passes, then its latency: one run
    plain, logged = tmp_path / "plain.log", tmp_path / "logged.log"
    plain.write_text(block * 400, encoding="utf-8")
    logged.write_text(stamped(block * 400), encoding="utf-8")
    meta = DocMeta(uri="session.log")
    key = lambda p: (p.line, p.name, p.order, p.subgraphs, p.run)  # noqa: E731
    whole = read_document(plain, "auto", meta).found
    bulk.materialise(whole)
    assert len({p.run for p in whole.passes}) == 400
    for chunk_bytes in (70_000, 100_003, 131_111):
        chunked = read_document(logged, "auto", meta, chunk_bytes=chunk_bytes).found
        assert not chunked.problems
        bulk.materialise(chunked)
        assert [key(p) for p in chunked.passes] == [key(p) for p in whole.passes]
        assert [(m.line, m.value, m.run) for m in chunked.measurements] == [
            (m.line, m.value, m.run) for m in whole.measurements
        ]
    raw = stamped(block * 8).encode()
    doc, present = chunk_text(raw, "utf-8", "auto", meta, 1, LineIndex(raw))
    assert isinstance(doc.line_at, LineIndex)
    assert doc.text == (block * 8)
    assert {"latency", "passes"} <= present
