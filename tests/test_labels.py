"""The one way a series is named: SERIES_LABEL (SQL), series_label (rows already fetched)
and series_labels (by id) write the same text, readable, never raw JSON or a null."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from perfboard.queries.labels import (
    PARAMS_ORDER,
    SERIES_LABEL,
    params_text,
    series_label,
    series_labels,
    unique_labels,
)

# Params as documents give them, and as a hostile one might.
TRICKY_PARAMS = [
    None,
    "{}",
    "[1, 2]",
    '"text"',
    '{"batch_size": 1, "seq_len": 128}',
    '{"precision": "int8", "quantization": "qat", "threads": 1}',
    '{"precision": null, "note": null, "empty": "", "flag": true, "off": false}',
    '{"ratio": 0.5, "nested": {"x": [1, 2]}, "list": ["a", 2]}',
    '{"$.x": 3, "a.b": "dotted", "q\\"uote": "v", "中文": "值"}',
    '{"parameters": "x (Variable) - dtype: float32, shape: [16, 128]", "config_id": 0}',
    '{"precision": 16, "<svg onload=alert(1)>": "**bold**"}',
    '{"backend": "openai-chat", "stat": "p99", "request_rate": 4, "precision": "fp16"}',
]


@pytest.fixture
def tricky() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    conn.execute(
        "CREATE TABLE series (series_id INTEGER, benchmark VARCHAR, metric VARCHAR,"
        " framework VARCHAR, device VARCHAR, params JSON)"
    )
    for i, params in enumerate(TRICKY_PARAMS):
        device = {1: "Tesla P4", 2: None, 3: "Tesla P4", 4: "Tesla P4"}.get(i, "")
        framework = "" if i == 3 else "paddle"
        conn.execute(
            "INSERT INTO series VALUES (?, 'ernie', 'latency', ?, ?, ?)",
            [i, framework, device, params],
        )
    return conn


def sql_and_python(conn: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    rows = conn.execute(
        f"SELECT {SERIES_LABEL}, s.benchmark, s.metric, s.framework, s.device,"
        " s.params::VARCHAR FROM series s ORDER BY s.series_id"
    ).fetchall()
    return [(sql, series_label(*rest)) for sql, *rest in rows]


def test_sql_and_python_write_the_same_label(tricky: duckdb.DuckDBPyConnection) -> None:
    pairs = sql_and_python(tricky)
    assert len(pairs) == len(TRICKY_PARAMS)
    assert [sql for sql, _ in pairs] == [python for _, python in pairs]


def test_sql_and_python_agree_on_every_demo_series(demo_db: Path) -> None:
    conn = duckdb.connect(str(demo_db), read_only=True)
    try:
        pairs = sql_and_python(conn)
    finally:
        conn.close()
    assert pairs and all(sql == python for sql, python in pairs)


def test_a_label_is_readable(tricky: duckdb.DuckDBPyConnection) -> None:
    labels = [sql for sql, _ in sql_and_python(tricky)]
    assert labels[4] == "ernie · latency · paddle · Tesla P4 · batch_size=1, seq_len=128"
    # Precision in its own place, right after the device (none here), then the rest.
    assert labels[5] == "ernie · latency · paddle · int8 · quantization=qat, threads=1"
    # Nulls and empty values say nothing; JSON values are written compact.
    assert labels[6] == "ernie · latency · paddle · flag=true, off=false"
    assert labels[7] == 'ernie · latency · paddle · ratio=0.5, nested={"x":[1,2]}, list=["a",2]'
    # A key is a name, never a JSON path.
    assert labels[8] == 'ernie · latency · paddle · $.x=3, a.b=dotted, q"uote=v, 中文=值'
    # The op's printed argument list is left out: its config id names the config.
    assert labels[9] == "ernie · latency · paddle · config_id=0"
    # The statistic of today's tools in its own place, after the precision: p50 and p99
    # of one metric read as the same series but for it.
    assert (
        labels[11] == "ernie · latency · paddle · fp16 · p99 · backend=openai-chat, request_rate=4"
    )
    # Params that are not an object have no key=value to give.
    assert labels[:4] == [
        "ernie · latency · paddle",
        "ernie · latency · paddle · Tesla P4",
        "ernie · latency · paddle",
        "ernie · latency · Tesla P4",
    ]
    for label in labels:
        assert "None" not in label and "null" not in label and "{}" not in label


def test_a_label_can_leave_out_the_parameter_a_chart_runs_along() -> None:
    params = {"batch_size": 8, "seq_len": 128, "precision": "fp16"}
    assert series_label("ernie", "latency", "paddle", "Tesla P4", params, ("batch_size",)) == (
        "ernie · latency · paddle · Tesla P4 · fp16 · seq_len=128"
    )
    assert series_label("ernie", "latency", "paddle", "", json.dumps(params), ("precision",)) == (
        "ernie · latency · paddle · batch_size=8, seq_len=128"
    )


def test_params_text_keeps_precision_and_drops_the_argument_list() -> None:
    params = '{"precision": "int8", "parameters": "x: [2]", "threads": 4}'
    assert params_text(params) == "precision=int8, threads=4"
    assert params_text("not json") == params_text(None) == ""


def test_series_labels_by_id(tricky: duckdb.DuckDBPyConnection) -> None:
    labels = series_labels(tricky, [4, 5, 999])
    assert labels == {
        4: "ernie · latency · paddle · Tesla P4 · batch_size=1, seq_len=128",
        5: "ernie · latency · paddle · int8 · quantization=qat, threads=1",
    }
    assert series_labels(tricky, []) == {}


def test_a_picker_tells_apart_series_that_share_a_label() -> None:
    assert unique_labels({1: "a", 2: "a", 3: "b"}) == {1: "a (#1)", 2: "a (#2)", 3: "b"}


def test_numeric_params_sort_as_numbers(tricky: duckdb.DuckDBPyConnection) -> None:
    # The QA tables of PaddlePaddle/benchmark#165 measure ERNIE at batch 1 to 300: as text
    # "10" and "100" would sort before "2".
    for i, batch in enumerate((100, 2, 10, 1, 300, 20), start=100):
        tricky.execute(
            "INSERT INTO series VALUES (?, 'qa', 'latency', 'paddle', 'Tesla P4', ?)",
            [i, json.dumps({"batch_size": batch, "seq_len": 128})],
        )
    tricky.execute("INSERT INTO series VALUES (200, 'qa', 'latency', 'paddle', 'Tesla P4', '{}')")
    ordered = tricky.execute(
        f"SELECT {SERIES_LABEL} FROM series s WHERE s.benchmark = 'qa' ORDER BY {PARAMS_ORDER}"
    ).fetchall()
    assert [label for (label,) in ordered] == [
        "qa · latency · paddle · Tesla P4",  # no params first
        *(
            f"qa · latency · paddle · Tesla P4 · batch_size={b}, seq_len=128"
            for b in (1, 2, 10, 20, 100, 300)
        ),
    ]
    # Every params shape of a document sorts without an error (text, nulls, lists).
    assert len(tricky.execute(f"SELECT 1 FROM series s ORDER BY {PARAMS_ORDER}").fetchall())
