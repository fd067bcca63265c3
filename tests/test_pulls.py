"""Known PR facts from a CSV file (data/samples/pulls-known.csv)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from ingest.pulls import read_pulls_csv
from tests.conftest import ingest, sample_path


def test_the_bundled_facts_are_read_as_written() -> None:
    rows, problems = read_pulls_csv(sample_path("pulls-known.csv"))
    assert problems == [] and len(rows) == 15
    by_number = {r["number"]: r for r in rows}
    assert by_number[22494] == {
        "repo": "PaddlePaddle/Paddle",
        "number": 22494,
        "title": "[Ernie GPU Optimize]: Embedding_eltwise_layernorm Fuse",
        "author": "NHZlX",
        "state": "merged",
        "created_at": datetime(2020, 2, 7),
        "note": "body claims 9.5ms -> 8.4ms and 8.4ms -> 7.8ms",
    }
    assert by_number[380]["repo"] == "PaddlePaddle/benchmark"
    assert by_number[380]["state"] == "unknown" and by_number[20770]["state"] == "closed"


def test_bad_lines_are_named_and_the_rest_is_stored(tmp_path: Path, db_path: Path) -> None:
    path = tmp_path / "pulls.csv"
    path.write_text(
        "repo,number,title,author,state,created_date,note\n"
        "PaddlePaddle/Paddle,22486,Fuse three fc,NHZlX,merged,2020-02-07,\n"
        "not a repo,1,x,y,merged,2020-02-07,\n"
        "PaddlePaddle/Paddle,#22494,Emb fuse,NHZlX,merged,2020-02-07,\n"
        "PaddlePaddle/Paddle,abc,x,y,merged,,\n"
        "PaddlePaddle/Paddle,5,x,y,reverted,,\n"
        "PaddlePaddle/Paddle,6,x,y,open,07/02/2020,\n",
        encoding="utf-8",
    )
    _rows, problems = read_pulls_csv(path)
    assert [(p.line, p.reason) for p in problems] == [
        (3, "repo 'not a repo' is not OWNER/NAME"),
        (5, "number 'abc' is not a PR number"),
        (6, "state 'reverted' is not one of ('open', 'closed', 'merged', 'unknown')"),
        (7, "created_date '07/02/2020' is not a date"),
    ]
    assert ingest("pulls", str(path)) == 0
    assert ingest("pulls", str(path)) == 0  # loading again replaces, never doubles
    conn = duckdb.connect(str(db_path), read_only=True)
    assert conn.execute("SELECT number, title FROM pull_requests ORDER BY number").fetchall() == [
        (22486, "Fuse three fc"),
        (22494, "Emb fuse"),
    ]
