"""One way in for a document: bytes and metadata in; read by the parsers (or the reader of
perfboard's result files); saved in one transaction, or why not recorded.

Every source hands its documents in here (files and dry runs through ingest.cli, PR
descriptions and issue bodies and comments through ingest.github, result files of a git
history through ingest.cli's git-results), so every source has the same rules:

- unchanged (the same bytes read the same way under the same name): costs a hash, and
  writes nothing;
- a document that cannot be read (binary, undecodable) or that a parser fails on (a bug):
  recorded against it as an ingest problem, its earlier rows kept; `ingest` returns, and
  the caller goes on with the next document;
- emptied (nothing but white space now): its rows go, its source stays, marked 'empty';
  deleted upstream (`forget`): its rows go, its source stays, marked 'gone';
- nothing perfboard knows in it: stored as a source marked 'unrecognised' with an ingest
  problem that says what perfboard reads, never silently. Conversation (an issue comment,
  a PR description: `Document.conversation`) is the exception: most of it is talk, and a
  sync of 2,500 PRs must not store 2,500 sources that hold nothing (saving one costs
  about 5 ms, reading one well under 1). It is counted, and kept only once it held
  something: then what it held goes when it holds nothing any more.
- the store failing for good under a write (a full disk at a checkpoint): StoreError,
  which ends the command; documents stored before stay stored.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ingest.documents import (
    Parsed,
    document_hash,
    file_hash,
    read_document,
    read_text,
    stream_document,
    streams,
    text_hash,
)
from ingest.registry import RESULT_SUFFIXES, RESULTS_KIND, formats_read
from ingest.save import (
    Rows,
    SaveResult,
    SourceInfo,
    Unsaved,
    clear_source,
    prior_state,
    record_failure,
    save_found,
    save_streamed,
)
from ingest.text import Empty, NotText
from perfboard.errors import StoreError
from perfboard.model import DocMeta, Found, Problem

if TYPE_CHECKING:
    from concurrent.futures import Executor

UNRECOGNISED_PARSER = "formats"


@dataclass(frozen=True, slots=True)
class Document:
    """A document handed in: a file on disk (`path`: read in chunks, by worker processes
    when large) or a text fetched (`text`), with what is known of it (`meta`; meta.uri is
    its identity) and the kind to read it as (a registry kind, or "results")."""

    meta: DocMeta
    kind: str = "auto"
    path: Path | None = None
    text: str | None = None
    conversation: bool = False  # talk (a comment, a PR description): see the module doc

    @property
    def uri(self) -> str:
        return self.meta.uri


def ingest(
    conn: duckdb.DuckDBPyConnection,
    doc: Document,
    progress: Callable[[int], object] | None = None,
    pool: Executor | None = None,
) -> SaveResult:
    """Read and store one document by the rules above; any failure of this document is
    recorded against it and returned, never raised (StoreError aside)."""
    try:
        if _is_results(doc):
            return _save_results(conn, doc)
        known = _known(conn, doc)
        if known:
            # Probably a re-ingest: the hash alone may show it unchanged. A new name skips
            # this read: its duplicate check comes with the hash the parse computes.
            unchanged = prior_state(conn, _identity(doc, _hash(doc)))
            if unchanged is not None:
                return unchanged
        if doc.path is not None and streams(doc.path):
            return _stream(conn, doc, progress, pool, known)
        parsed = _read(doc, progress, pool)
        if parsed.found.is_empty() and not parsed.rows.records:
            return _holds_nothing(conn, doc, parsed, known)
        return save_found(conn, parsed.info, parsed.found, parsed.rows)
    except Empty as error:
        return _emptied(conn, doc, str(error), known=_known(conn, doc))
    except NotText as error:
        return record_failure(conn, doc.uri, _problem(f"not readable: {error}", doc))
    except StoreError:
        raise  # the store, not this document (a lake's lock out of reach): the run ends
    except duckdb.FatalException as error:
        # DuckDB invalidated the database (a checkpoint failed: the disk is full). Nothing
        # more can be written through this connection, so the run ends here, cleanly.
        raise StoreError(
            f"{doc.uri}: not stored: {error}. The store cannot be written any more;"
            " documents stored before stay stored (free space and run the ingest again)"
        ) from None
    except (OSError, duckdb.Error) as error:
        return record_failure(conn, doc.uri, _problem(f"{type(error).__name__}: {error}", doc))
    except Exception as error:  # a parser bug must not cost the other documents
        return record_failure(conn, doc.uri, _problem(internal_error(error), doc))


def forget(conn: duckdb.DuckDBPyConnection, uri: str) -> bool:
    """A document its source no longer has (a deleted comment): its rows go, its source
    stays, marked 'gone'. False when there was nothing stored under that name."""
    row = conn.execute(
        "SELECT source_id FROM sources WHERE uri = ? AND status <> 'gone'", [uri]
    ).fetchone()
    if row is None:
        return False
    clear_source(conn, row[0], uri, "gone")
    return True


def forget_missing(conn: duckdb.DuckDBPyConnection, prefix: str, present: set[str]) -> int:
    """Forget every stored document named `prefix...` that is not `present` any more (an
    issue's comments that GitHub no longer has); returns how many."""
    stored = conn.execute(
        "SELECT uri FROM sources WHERE starts_with(uri, ?) AND status <> 'gone'", [prefix]
    ).fetchall()
    missing = [uri for (uri,) in stored if uri not in present]
    for uri in missing:
        forget(conn, uri)
    return len(missing)


def preview(doc: Document) -> tuple[list[dict[str, Any]], bool]:
    """What `ingest` would store, as JSON-ready records, touching no store (--dry-run);
    and whether the document failed. The same reading and the same rules: an
    unrecognised document shows its problem record."""
    try:
        if _is_results(doc):
            assert doc.path is not None
            return _results_preview(doc.path), False
        parsed = _read(doc, None, None)
        records = parsed.found.records()
        if parsed.found.is_empty() and not doc.conversation:
            records.append({"kind": "problem", "line": 0, "reason": unrecognised_reason()})
        return records, False
    except (NotText, OSError, duckdb.Error) as error:
        return [{"kind": "problem", "line": 0, "reason": f"not readable: {error}"}], True
    except Exception as error:  # as in ingest: one document, not the run
        return [{"kind": "problem", "line": 0, "reason": internal_error(error)}], True


def unrecognised_reason() -> str:
    return f"no known format found; perfboard reads: {formats_read()}"


def internal_error(error: Exception) -> str:
    """A bug's message for the user: what and where, so it can be reported."""
    where = traceback.extract_tb(error.__traceback__)[-1]
    return (
        f"internal error, please report: {type(error).__name__}: {error}"
        f" at {Path(where.filename).name}:{where.lineno}"
    )


# -- the steps ----------------------------------------------------------------------------


def _read(doc: Document, progress: Callable[[int], object] | None, pool: Executor | None) -> Parsed:
    if doc.path is not None:
        return read_document(doc.path, doc.kind, doc.meta, progress=progress, pool=pool)
    return read_text(doc.text or "", doc.kind, doc.meta)


def _stream(
    conn: duckdb.DuckDBPyConnection,
    doc: Document,
    progress: Callable[[int], object] | None,
    pool: Executor | None,
    known: bool,
) -> SaveResult:
    """A large file, stored as it is read (documents.stream_document): by the same rules
    as _read and save_found, with a duplicate or a document that holds nothing found
    only once it is all read, and then all of it taken back (save.Unsaved)."""
    assert doc.path is not None
    streamed = stream_document(doc.path, doc.kind, doc.meta, progress=progress, pool=pool)

    def finish() -> tuple[SourceInfo, Found]:
        parsed = streamed.finish()
        return parsed.info, parsed.found

    try:
        return save_streamed(conn, doc.meta, doc.kind, streamed.parts, finish)
    except Unsaved as unsaved:
        if unsaved.result is not None:
            return unsaved.result
        parsed = Parsed(unsaved.info, unsaved.found, [], Rows.of([], []))
        return _holds_nothing(conn, doc, parsed, known)


def _hash(doc: Document) -> str:
    return document_hash(doc.path) if doc.path is not None else text_hash(doc.text or "")


def _identity(doc: Document, content_hash: str) -> SourceInfo:
    size = doc.path.stat().st_size if doc.path is not None else len((doc.text or "").encode())
    return SourceInfo(doc.meta, content_hash, doc.kind, size)


def _known(conn: duckdb.DuckDBPyConnection, doc: Document) -> bool:
    """Whether a live source holds this name (one that can be unchanged, emptied...)."""
    row = conn.execute(
        "SELECT 1 FROM sources WHERE uri = ? AND status <> 'gone'", [doc.uri]
    ).fetchone()
    return row is not None


def _holds_nothing(
    conn: duckdb.DuckDBPyConnection, doc: Document, parsed: Parsed, known: bool
) -> SaveResult:
    """Text in which no parser found a thing: said loudly, or (talk) only counted."""
    if doc.conversation:
        if not known:
            return SaveResult(doc.uri, "unrecognised", note="no known format found")
        # It held something once: what it held is held no more (its hash is kept, so the
        # next sync of the same text costs a hash).
        return save_found(conn, parsed.info, parsed.found, parsed.rows, status="unrecognised")
    problem = Problem(0, unrecognised_reason(), parser=UNRECOGNISED_PARSER)
    parsed.found.problems.append(problem)
    saved = save_found(conn, parsed.info, parsed.found, parsed.rows, status="unrecognised")
    if saved.outcome in ("added", "replaced"):
        saved.outcome = "unrecognised"
        saved.note = problem.reason
    return saved


def _emptied(conn: duckdb.DuckDBPyConnection, doc: Document, why: str, known: bool) -> SaveResult:
    """Nothing but white space: a stored document loses its rows; a new one is not kept
    (talk) or fails with the reason (a file handed in)."""
    if known:
        source_id, status = conn.execute(
            "SELECT source_id, status FROM sources WHERE uri = ?", [doc.uri]
        ).fetchone()
        if status == "empty":  # emptied before: nothing to write again
            return SaveResult(doc.uri, "unchanged")
        previous = clear_source(conn, source_id, doc.uri, "empty")
        return SaveResult(doc.uri, "emptied", previous=previous, note=why)
    if doc.conversation:
        return SaveResult(doc.uri, "empty", note=why)
    return record_failure(conn, doc.uri, _problem(f"not readable: {why}", doc))


def _problem(reason: str, doc: Document) -> Problem:
    return Problem(0, reason, parser=doc.kind)


# -- perfboard's result files (a bulk reader of their own) --------------------------------------


def _is_results(doc: Document) -> bool:
    if doc.path is None:
        return False
    if doc.kind == RESULTS_KIND:
        return True
    if doc.kind != "auto" or doc.path.suffix.lower() not in RESULT_SUFFIXES:
        return False
    from ingest import results  # only for a file that may be one (pyarrow.csv, ...)

    with open(doc.path, "rb") as fh:
        return results.looks_like_results(doc.path, fh.read(4096))


def _save_results(conn: duckdb.DuckDBPyConnection, doc: Document) -> SaveResult:
    from ingest import results

    assert doc.path is not None
    size = doc.path.stat().st_size
    if size == 0:
        raise Empty("empty file")
    info = SourceInfo(doc.meta, file_hash(doc.path), RESULTS_KIND, size)
    return results.save_results(conn, doc.path, info)


def _results_preview(path: Path) -> list[dict[str, Any]]:
    from ingest import results

    conn = duckdb.connect()
    try:
        load = results.stage(conn, path)
        problems = load.problems + results.check(conn, load)
        rows = conn.execute("SELECT * EXCLUDE (_problem) FROM _staging WHERE _problem IS NULL")
        names = [d[0] for d in rows.description]
        records: list[dict[str, Any]] = [
            {"kind": "measurement", **dict(zip(names, row, strict=True))} for row in rows.fetchall()
        ]
    finally:
        conn.close()
    records += [{"kind": "problem", "line": p.line, "reason": p.reason} for p in problems]
    return records
