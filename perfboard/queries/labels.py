"""SQL fragments more than one query module writes the same way, and the one way a series
is named: SERIES_LABEL in SQL, series_label for rows already fetched, series_labels by id.

A series' label is benchmark · metric · framework · device · precision · statistic · its
other params as key=value pairs, each part left out when empty: "ernie · latency · paddle ·
Tesla P4 · batch_size=1, seq_len=128", "bert · latency · paddle · int8 · quantization=qat",
"Llama-3.1-8B-Instruct · ttft · vllm · p99 · backend=openai-chat". Never raw JSON, never a
null. The project is not part of it (pages show it in a column of its own).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import duckdb

# How a missing value reads on screen: in a table (st.dataframe's placeholder, which
# would otherwise draw "None"), a metric, a tooltip. Never "None", "nan" or "NaT".
MISSING = "—"

# Keys a label does not list as key=value: precision and the statistic (p50, p99, mean of
# today's tools) have their own places in it, and an op benchmark's "parameters" is its
# whole printed argument list, too long for a name (its config_id says which config it is).
PRECISION = "precision"
STAT = "stat"
NOT_LISTED = (PRECISION, STAT, "parameters")

# A series' params as pages hold them: JSON text (params::VARCHAR), a dict, or missing.
Params = str | Mapping[str, Any] | None

# params as a MAP of key to JSON value, in the document's order; NULL unless an object.
# Read as map keys, never as JSON paths, so a key such as "$.x" is a name like any other.
_PARAMS_MAP = (
    "CASE WHEN json_type(s.params) = 'OBJECT'"
    " THEN json_transform(s.params, '\"MAP(VARCHAR, JSON)\"') END"
)

# "batch_size=1, seq_len=128": a text value unquoted, a JSON null or "" left out.
_PARAMS_TEXT = f"""nullif(array_to_string(list_transform(
        list_filter(map_entries({_PARAMS_MAP}),
                    lambda e: e.key NOT IN ('precision', 'stat', 'parameters')
                              AND coalesce(json_extract_string(e.value, '$'), '') <> ''),
        lambda e: e.key || '=' || json_extract_string(e.value, '$')), ', '), '')"""

# How a series is named in SQL, over the series table as `s`: see the module's docstring.
# series_label writes the same for a row already fetched (tests/test_labels.py holds the
# two to one another).
SERIES_LABEL = f"""concat_ws(' · ', nullif(s.benchmark, ''), nullif(s.metric, ''),
        nullif(s.framework, ''), nullif(s.device, ''),
        nullif(json_extract_string(({_PARAMS_MAP})['precision'], '$'), ''),
        nullif(json_extract_string(({_PARAMS_MAP})['stat'], '$'), ''),
        {_PARAMS_TEXT})"""


# A sort key over the series table as `s`: its params in their order, each as (key, its
# number when it is one, its text), so that batch_size=2 comes before batch_size=10 (as
# text, "10" sorts first). Series without params sort first.
PARAMS_ORDER = f"""list_transform(coalesce(map_entries({_PARAMS_MAP}), []),
        lambda e: {{'k': e.key, 'n': TRY_CAST(json_extract_string(e.value, '$') AS DOUBLE),
                    't': json_extract_string(e.value, '$')}})"""


def series_labels(conn: duckdb.DuckDBPyConnection, ids: Iterable[int]) -> dict[int, str]:
    """The label of each of these series (SERIES_LABEL), by series id; an id the store
    does not hold is left out."""
    wanted = sorted({int(i) for i in ids})
    if not wanted:
        return {}
    rows = conn.execute(
        f"SELECT s.series_id, {SERIES_LABEL} FROM series s WHERE list_contains($ids, s.series_id)",
        {"ids": wanted},
    ).fetchall()
    return {int(series_id): label for series_id, label in rows}


def series_label(
    benchmark: object,
    metric: object,
    framework: object,
    device: object,
    params: Params,
    leave_out: Collection[str] = (),
) -> str:
    """SERIES_LABEL of a row already fetched: its params as JSON text (params::VARCHAR)
    or as a dict. `leave_out`: params not to name, e.g. the one a chart's x axis runs
    along, so that series differing only in it make one line."""
    values = params_of(params)
    precision = "" if PRECISION in leave_out else _value_text(values.get(PRECISION))
    stat = "" if STAT in leave_out else _value_text(values.get(STAT))
    parts = (
        benchmark,
        metric,
        framework,
        device,
        precision,
        stat,
        params_text(values, (*NOT_LISTED, *leave_out)),
    )
    return " · ".join(p for p in parts if isinstance(p, str) and p)


def params_text(params: Params, leave_out: Collection[str] = ("parameters",)) -> str:
    """params as "batch_size=1, seq_len=128", in their order, without the keys in
    `leave_out` (by default the op's argument list) and without empty values; "" when
    nothing is left."""
    pairs = ((k, _value_text(v)) for k, v in params_of(params).items() if k not in leave_out)
    return ", ".join(f"{k}={text}" for k, text in pairs if text)


def params_of(params: object) -> dict[str, Any]:
    """A series' params (JSON text or a dict) as a dict: {} when missing, not JSON, or
    not an object."""
    if isinstance(params, Mapping):
        return dict(params)
    if not isinstance(params, str) or not params:
        return {}
    try:
        value = json.loads(params)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def unique_labels(labels: Mapping[int, str]) -> dict[int, str]:
    """Labels by series id, with " (#id)" added to each that two series share (they
    differ only in what a label leaves out: the task, the testbed, the op's argument
    list), so that a picker tells them apart."""
    seen: dict[str, int] = {}
    for label in labels.values():
        seen[label] = seen.get(label, 0) + 1
    return {i: f"{label} (#{i})" if seen[label] > 1 else label for i, label in labels.items()}


def _value_text(value: object) -> str:
    # As DuckDB's json_extract_string writes a JSON value: text as it is, null as nothing,
    # anything else as compact JSON (true, 128, 0.5, [1,2]).
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# Each milestone with its phase (name, project, unit) and the value before it: the step
# the milestone made. A CTE body: `WITH steps AS ({MILESTONE_STEPS})`.
MILESTONE_STEPS = """
    SELECT ms.*, p.name AS phase, p.project, p.unit,
           lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
               AS before
    FROM milestones ms JOIN phases p USING (phase_id)
"""
