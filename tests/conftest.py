"""Shared fixtures: the bundled real documents and fresh databases."""

from __future__ import annotations

import os

# Every chart a test draws (AppTest runs, the browser tests' server, which inherits the
# environment) is checked against Vega-Lite's schema; a server skips it (perfboard.charts).
os.environ["PERFBOARD_CHECK_CHART_SPECS"] = "1"

from datetime import datetime
from pathlib import Path

import pytest

from ingest.text import DocText, from_text, read_text_file
from perfboard.model import DocMeta

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"


def sample_path(name: str) -> Path:
    path = SAMPLES / name
    assert path.exists(), f"missing sample {name}"
    return path


def sample_doc(name: str, created_at: datetime | None = None, **meta: str) -> DocText:
    """A bundled sample read the way ingest reads files (decode + normalise)."""
    return read_text_file(str(sample_path(name)), DocMeta(uri=name, created_at=created_at, **meta))


def text_doc(text: str, created_at: datetime | None = None, **meta: str) -> DocText:
    """An inline document (malformed variants in tests)."""
    return from_text(text, DocMeta(uri="<test>", created_at=created_at, **meta))


@pytest.fixture
def db_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh database path, also set as PERFBOARD_DB for code that reads the setting."""
    path = tmp_path / "perfboard.duckdb"
    monkeypatch.setenv("PERFBOARD_DB", str(path))
    return path


def ingest(*args: str) -> int:
    """Run the ingest CLI in-process (its one error boundary included)."""
    from ingest.cli import main

    return main([*args, "--quiet"] if args[0] != "export" else list(args))


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo database, built once from data/samples like `make run` does."""
    from scripts.build_demo_db import build

    path = tmp_path_factory.mktemp("demo") / "perfboard.duckdb"
    assert build(path) == 0
    return path


def real_text_documents() -> list[Path]:
    """The real text documents of the repository: issue comments, tester and tool logs,
    profiler reports, PR tables."""
    return sorted(
        p
        for folder in ("tests/fixtures", "data/samples")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in (".md", ".txt", ".log") and p.is_file() and p.name != "README.md"
    )


def stored_records(found: object) -> tuple[list, ...]:
    """What a document's parse stores, its blocks turned back into records."""
    from ingest import bulk

    bulk.materialise(found)
    return (
        found.measurements,
        found.profile_events,
        found.passes,
        found.claims,
        found.phases,
        [(p.line, p.reason, p.raw) for p in found.problems],
    )


def rows(store: Path, sql: str, params: list[object] | None = None) -> list[tuple]:
    """A query's rows from a store, opened read-only for it."""
    import duckdb

    conn = duckdb.connect(str(store), read_only=True)
    try:
        return conn.execute(sql, params or []).fetchall()
    finally:
        conn.close()


def parse_text_failing_on(monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    """A parser bug: documents.parse_text raises ZeroDivisionError on a text with `marker`."""
    from ingest import documents

    real = documents.parse_text

    def buggy(doc, kind, present=None):  # type: ignore[no-untyped-def]
        if marker in doc.text:
            raise ZeroDivisionError("division by zero")
        return real(doc, kind, present)

    monkeypatch.setattr(documents, "parse_text", buggy)
