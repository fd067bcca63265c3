"""Known facts about pull requests from a CSV file, into pull_requests.

    python -m ingest pulls data/samples/pulls-known.csv

Columns: repo, number, title, author, state, created_date (YYYY-MM-DD), note; any may be
empty but repo and number. The GitHub sync (issue 4) fills the same table from the API.
A row that cannot be read is reported with its line; the others are stored, all in one
transaction, replacing what the table held for the same (repo, number).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ingest.save import now_utc
from perfboard import db
from perfboard.model import Problem

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
STATES = ("open", "closed", "merged", "unknown")


@dataclass(slots=True)
class PullsLoaded:
    stored: int
    problems: list[Problem]


def read_pulls_csv(path: Path) -> tuple[list[dict[str, object]], list[Problem]]:
    """Rows ready for pull_requests, and the lines that could not be read (pure)."""
    rows: list[dict[str, object]] = []
    problems: list[Problem] = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for line, record in enumerate(csv.DictReader(fh), start=2):
            raw = ",".join(v or "" for v in record.values() if isinstance(v, str))
            repo = (record.get("repo") or "").strip()
            number = (record.get("number") or "").strip().lstrip("#")
            if not _REPO.match(repo):
                problems.append(Problem(line, f"repo {repo!r} is not OWNER/NAME", raw, "pulls"))
                continue
            if not number.isdigit():
                problems.append(
                    Problem(line, f"number {number!r} is not a PR number", raw, "pulls")
                )
                continue
            state = (record.get("state") or "unknown").strip().lower()
            if state not in STATES:
                problems.append(
                    Problem(line, f"state {state!r} is not one of {STATES}", raw, "pulls")
                )
                continue
            created = (record.get("created_date") or "").strip()
            try:
                created_at = datetime.fromisoformat(created) if created else None
            except ValueError:
                problems.append(
                    Problem(line, f"created_date {created!r} is not a date", raw, "pulls")
                )
                continue
            rows.append(
                {
                    "repo": repo,
                    "number": int(number),
                    "title": (record.get("title") or "").strip() or None,
                    "author": (record.get("author") or "").strip() or None,
                    "state": state,
                    "created_at": created_at,
                    "note": (record.get("note") or "").strip() or None,
                }
            )
    return rows, problems


def load_pulls_csv(conn: duckdb.DuckDBPyConnection, path: Path) -> PullsLoaded:
    rows, problems = read_pulls_csv(path)
    if rows:
        table = pa.Table.from_pylist(
            rows,
            schema=pa.schema(
                [
                    ("repo", pa.string()),
                    ("number", pa.int64()),
                    ("title", pa.string()),
                    ("author", pa.string()),
                    ("state", pa.string()),
                    ("created_at", pa.timestamp("us")),
                    ("note", pa.string()),
                ]
            ),
        )
        with db.transaction(conn) as changes:
            changes.touch("pull_requests")
            _pulls = table  # read by its name (perfboard.db._reading_arrow_by_name)
            # MERGE, not INSERT OR REPLACE: a DuckLake store has no keys to upsert on.
            conn.execute(
                "MERGE INTO pull_requests t USING (SELECT repo, number, title, author, state,"
                " created_at, note, ? AS origin, ? AS synced_at FROM _pulls) s"
                " ON t.repo = s.repo AND t.number = s.number"
                " WHEN MATCHED THEN UPDATE SET title = s.title, author = s.author,"
                " state = s.state, created_at = s.created_at, note = s.note,"
                " origin = s.origin, synced_at = s.synced_at"
                " WHEN NOT MATCHED THEN INSERT (repo, number, title, author, state, created_at,"
                " note, origin, synced_at) VALUES (s.repo, s.number, s.title, s.author,"
                " s.state, s.created_at, s.note, s.origin, s.synced_at)",
                [str(path), now_utc()],
            )
    return PullsLoaded(len(rows), problems)
