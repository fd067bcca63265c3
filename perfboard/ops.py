"""The op benchmark, Paddle against every other framework: pure functions for the Ops page.

No Streamlit and no SQL: the latest result of each op series (queries.op_results) in,
DataFrames out. The pairing is compare.pair_series's (Paddle against every other framework
on series identical but for the framework), fed each series' op config instead of its
whole params, so two results match by the op benchmark's own name and config id, never by
the free-text argument list beside it. Ratios are Paddle / other and worded by
wording.ratio_words; losses are wording.verdict's "worse" and their history is
compare.where_we_lose's: one rule for every page.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd

from perfboard import compare
from perfboard.model import canonical_json
from perfboard.wording import ratio_words, verdict

OURS = compare.OURS_FRAMEWORK
SPEED_METRICS = ("total_time", "gpu_time")
ACCURACY_METRIC = "max_diff"
METRICS = (*SPEED_METRICS, ACCURACY_METRIC)
METRIC_NAMES = {"total_time": "total", "gpu_time": "GPU"}
# The op benchmark's default tolerance (atol in its configs and its accuracy checks' own
# "atol is 1.00e-06" lines): a max_diff within it is consistent.
ATOL = 1e-6
# The op's argument list as the benchmark printed it: description, not identity. Two
# frameworks print it differently for one config, and one framework across versions.
FREE_TEXT = ("parameters",)
# Timings printed by an accuracy check (repeat 1): the benchmark says to ignore them.
ACCURACY_RUN = "accuracy_run"
NO_CONFIG = "–"

_ROW_KEY = ["benchmark", "task", "device", "config_key"]
MATCHED_COLUMNS = [
    "op",
    "benchmark",
    "task",
    "device",
    "config",
    "config_key",
    "parameters",
    "theirs",
    "unit",
    "direction",
    *[
        f"{col}_{name}"
        for name in ("total", "gpu")
        for col in ("paddle", "other", "ratio", "words", "verdict", "pair", "ours_id", "theirs_id")
    ],
    "loses",
    "accuracy",
    "max_diff",
    "accuracy_at",
    "version",
    "measured_at",
    "other_measured_at",
    "source",
    "source_url",
    "other_source_url",
    # where each side's total time was read (its line links to it)
    "source_id_total",
    "line_total",
    "other_source_id_total",
    "other_line_total",
]
UNMATCHED_COLUMNS = [
    "op",
    "benchmark",
    "task",
    "device",
    "config",
    "parameters",
    "framework",
    "measured",
    "why",
    "version",
    "measured_at",
    "source",
    "source_url",
    "source_id",  # where its latest value (value) was read: its line links to it
    "line",
    "value",
]


# -- identity ---------------------------------------------------------------------------------


def op_name(benchmark: str) -> str:
    """ "op/abs" -> "abs"."""
    return benchmark.removeprefix("op/")


def op_config(params: dict[str, Any]) -> dict[str, Any]:
    """What of an op result's params identifies its config: the benchmark's config id
    (0 and "0" alike: a v2 log writes a number, a comparison table's "softmax-0" a
    string), else every param but the free-text argument list (usually none: {})."""
    if "config_id" in params and params["config_id"] is not None:
        return {"config_id": str(params["config_id"])}
    return {k: v for k, v in params.items() if k not in FREE_TEXT}


def config_label(config: dict[str, Any]) -> str:
    """ "0" for config 0, "–" for a result without a config id."""
    if "config_id" in config:
        return str(config["config_id"])
    if config.get("task_kind") == ACCURACY_RUN:
        return "accuracy run"
    return ", ".join(f"{k}={v}" for k, v in config.items()) or NO_CONFIG


def direction_label(task: str) -> str:
    """ "op-backward" -> "backward"."""
    return str(task).removeprefix("op-")


def accuracy_status(max_diff: float | None, consistent: object) -> str | None:
    """consistent when the accuracy check said so or max_diff is within ATOL; diff
    otherwise; None when the op was not checked (no max_diff)."""
    if max_diff is None or pd.isna(max_diff):
        return None
    said = None if consistent is None or pd.isna(consistent) else bool(consistent)
    return "consistent" if said or max_diff <= ATOL else "diff"


def _identify(results: pd.DataFrame) -> pd.DataFrame:
    """The results with op, config_key (canonical JSON of op_config), config (its label),
    parameters (the argument list, for the reader) and accuracy_run."""
    data = results.copy()
    parsed = data["params"].map(compare.params_of)
    configs = parsed.map(op_config)
    data["op"] = data["benchmark"].map(op_name)
    data["config_key"] = configs.map(canonical_json)
    data["config"] = configs.map(config_label)
    data["parameters"] = parsed.map(lambda p: " ".join(str(p.get("parameters", "")).split()))
    data["accuracy_run"] = parsed.map(lambda p: p.get("task_kind") == ACCURACY_RUN)
    return data


# -- matching ---------------------------------------------------------------------------------


def match(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(matched, unmatched) op results.

    `results`: the latest result of each op series (queries.op_results): series_id,
    project, benchmark, task, metric, unit, direction, framework, device, params, testbed,
    value, version, measured_at, consistent, source, source_url.

    matched: one row per op, direction (task), device, config and competitor, with
    Paddle's and the competitor's latest total_time and gpu_time, the ratios Paddle /
    other (ratio_total, ratio_gpu), their words ("Paddle 1.44x slower than tensorflow")
    and verdicts (worse, better, same: wording.verdict), loses (total, else GPU, worse),
    the series pair behind each ratio (pair_*, ours_id_*, theirs_id_*: for the history),
    and the op's accuracy check (consistent, diff, or None when not checked) with its
    max_diff. Largest total loss first.

    unmatched: one row per op result (op, direction, device, config, framework) that has
    no counterpart, with why; the accuracy checks of ops with no speed result; and the
    timings of accuracy checks, which are never compared. Nothing is dropped.
    """
    if results.empty:
        return pd.DataFrame(columns=MATCHED_COLUMNS), pd.DataFrame(columns=UNMATCHED_COLUMNS)
    data = _identify(results)
    speed = data[data.metric.isin(SPEED_METRICS)]
    comparable = speed[~speed.accuracy_run]
    pairs = compare.pair_series(comparable.assign(params=comparable.config_key), "framework")
    matched = _matched(comparable, pairs)
    accuracy = data[data.metric == ACCURACY_METRIC]
    matched, checked = _with_accuracy(matched, accuracy)
    paired = set(pairs.ours_id) | set(pairs.theirs_id)
    unmatched = _unmatched(speed, comparable, paired, matched, accuracy, checked)
    return matched, unmatched


_READ_AT = ("source_id", "line")  # where a result's value was read


def _matched(comparable: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    if pairs.empty:
        return pd.DataFrame(columns=MATCHED_COLUMNS)
    comparable = comparable.assign(
        **{c: comparable.get(c) for c in _READ_AT}
    )  # a frame made by hand may not say where its values were read
    info = comparable.set_index("series_id")
    ours = info.loc[pairs.ours_id]
    theirs = info.loc[pairs.theirs_id]
    data = pairs[["ours_id", "theirs_id", "pair", "metric", "theirs", "unit", "direction"]].copy()
    for column in (*_ROW_KEY, "op", "config", "parameters"):
        data[column] = ours[column].to_numpy()
    for column in ("value", "measured_at", "version", "source", "source_url", *_READ_AT):
        data[f"ours_{column}"] = ours[column].to_numpy()
        data[f"theirs_{column}"] = theirs[column].to_numpy()
    # Several series of one side under one key (TensorFlow 1.14 and 2.3 as testbeds, or
    # two projects): the row takes the latest of each side.
    data = data.sort_values(["ours_measured_at", "theirs_measured_at"], na_position="first")
    data = data.drop_duplicates([*_ROW_KEY, "theirs", "metric"], keep="last")
    theirs_value = data.theirs_value.where(data.theirs_value > 0)
    data["ratio"] = data.ours_value / theirs_value
    data["words"] = [
        ratio_words(r, d, t)
        for r, d, t in zip(data.ratio, data.direction, data.theirs, strict=True)
    ]
    data["verdict"] = [verdict(r, d) for r, d in zip(data.ratio, data.direction, strict=True)]
    key = [*_ROW_KEY, "theirs"]
    rows = data.drop_duplicates(key, keep="last")[
        [*key, "op", "config", "parameters", "unit", "direction"]
    ]
    for metric, name in (("total_time", "total"), ("gpu_time", "gpu")):
        part = data[data.metric == metric].rename(
            columns={
                "ours_value": f"paddle_{name}",
                "theirs_value": f"other_{name}",
                "ratio": f"ratio_{name}",
                "words": f"words_{name}",
                "verdict": f"verdict_{name}",
                "pair": f"pair_{name}",
                "ours_id": f"ours_id_{name}",
                "theirs_id": f"theirs_id_{name}",
                "ours_measured_at": f"measured_at_{name}",
                "theirs_measured_at": f"other_measured_at_{name}",
                "ours_version": f"version_{name}",
                "ours_source": f"source_{name}",
                "ours_source_url": f"source_url_{name}",
                "theirs_source_url": f"other_source_url_{name}",
                "ours_source_id": f"source_id_{name}",
                "ours_line": f"line_{name}",
                "theirs_source_id": f"other_source_id_{name}",
                "theirs_line": f"other_line_{name}",
            }
        )
        keep = [c for c in part.columns if c.endswith(f"_{name}")]
        rows = rows.merge(part[[*key, *keep]], on=key, how="left")
    # The row's provenance: its total time's documents, else its GPU time's.
    for column in ("measured_at", "other_measured_at", "version", "source", "source_url"):
        rows[column] = rows[f"{column}_total"].combine_first(rows[f"{column}_gpu"])
    rows["other_source_url"] = rows.other_source_url_total.combine_first(rows.other_source_url_gpu)
    rows["words_total"] = rows.words_total.fillna("–")
    rows["words_gpu"] = rows.words_gpu.fillna("–")
    rows["verdict_total"] = rows.verdict_total.fillna("–")
    rows["verdict_gpu"] = rows.verdict_gpu.fillna("–")
    rows["loses"] = np.where(
        rows.ratio_total.notna(), rows.verdict_total == "worse", rows.verdict_gpu == "worse"
    )
    for name in ("total", "gpu"):
        for column in (f"ours_id_{name}", f"theirs_id_{name}"):
            rows[column] = rows[column].astype("Int64")
    rows["accuracy"] = None
    rows["max_diff"] = np.nan
    rows["accuracy_at"] = pd.NaT
    # ln(ratio) of the total time (else the GPU time), largest first: the largest loss
    # first, the largest win last, whatever the scale of the times.
    gap = np.log(rows.ratio_total.combine_first(rows.ratio_gpu).where(lambda r: r > 0))
    rows = rows.assign(_gap=gap).sort_values(
        ["_gap", "op", "config", "device", "task"], ascending=[False, True, True, True, True]
    )
    return rows.drop(columns="_gap")[MATCHED_COLUMNS].reset_index(drop=True)


def _latest_accuracy(accuracy: pd.DataFrame) -> pd.DataFrame:
    """The latest accuracy check of each op, direction, config and device."""
    if accuracy.empty:
        return accuracy.assign(status=pd.Series(dtype=object))
    data = accuracy.sort_values("measured_at", na_position="first")
    data = data.drop_duplicates(["benchmark", "task", "config_key", "device"], keep="last")
    return data.assign(
        status=[accuracy_status(v, c) for v, c in zip(data.value, data.consistent, strict=True)]
    )


def _with_accuracy(matched: pd.DataFrame, accuracy: pd.DataFrame) -> tuple[pd.DataFrame, set[int]]:
    """Each matched row with its op's accuracy check: the one on its device, else one that
    names no device (a v1 check prints none). Also returns the ids of the checks used."""
    checks = _latest_accuracy(accuracy)
    used: set[int] = set()
    if matched.empty or checks.empty:
        return matched, used
    key = ["benchmark", "task", "config_key"]
    cols = [*key, "device", "status", "value", "measured_at", "series_id"]
    named = checks[checks.device != ""][cols]
    anywhere = checks[checks.device == ""][[c for c in cols if c != "device"]]
    out = matched.merge(named, on=[*key, "device"], how="left", suffixes=("", "_acc"))
    out = out.merge(anywhere, on=key, how="left", suffixes=("", "_any"))
    out["accuracy"] = out.status.combine_first(out.status_any)
    out["max_diff"] = out.value.combine_first(out.value_any)
    out["accuracy_at"] = out.measured_at_acc.combine_first(out.measured_at_any)
    used = {int(i) for i in out.series_id.dropna()} | {int(i) for i in out.series_id_any.dropna()}
    return out[MATCHED_COLUMNS], used


def _describe(rows: pd.DataFrame) -> str:
    """Where a framework measured an op: "config 0 · GPU · forward; no config id · ..."."""
    keys = rows.drop_duplicates(["config", "device", "task"])
    parts = [
        " · ".join(
            (
                f"config {r.config}" if r.config != NO_CONFIG else "no config id",
                r.device or "no device named",
                direction_label(r.task),
            )
        )
        for r in keys.head(3).itertuples()
    ]
    more = len(keys) - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _measured(rows: pd.DataFrame) -> str:
    return " · ".join(
        f"{METRIC_NAMES.get(r.metric, r.metric)} {r.value:.4g} {r.unit}".rstrip()
        for r in rows.sort_values("metric", ascending=False).itertuples()
    )


def _unmatched(
    speed: pd.DataFrame,
    comparable: pd.DataFrame,
    paired: set[int],
    matched: pd.DataFrame,
    accuracy: pd.DataFrame,
    checked: set[int],
) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    lone = speed[~speed.series_id.isin(paired)]
    # Each side of a matched row: a lone series of it is a metric the other side lacks.
    counterparts: dict[tuple[Any, ...], set[str]] = {}
    # Columns as lists, not itertuples: a row of Arrow-backed columns is slow to make.
    for row in zip(*(matched[c].tolist() for c in (*_ROW_KEY, "theirs")), strict=True):
        *identity, theirs = row
        counterparts.setdefault((*identity, OURS), set()).add(theirs)
        counterparts.setdefault((*identity, theirs), set()).add("Paddle")
    # What else was measured of the ops that have a lone result: the why of each.
    # Only what _why reads of them: every filter and group below copies each column.
    near = comparable.loc[
        comparable.benchmark.isin(set(lone.benchmark)),
        ["benchmark", "framework", "config", "device", "task"],
    ]
    by_op = {name: group for name, group in near.groupby("benchmark", sort=False)}
    result_key = [*_ROW_KEY, "framework"]
    for key, group in lone.groupby([*result_key, "accuracy_run"], sort=True):
        *identity, framework, accuracy_run = key
        if accuracy_run:
            why = "the timing of an accuracy check (repeat 1): the benchmark says to ignore it"
        elif (*identity, framework) in counterparts:
            metrics = " and ".join(METRIC_NAMES.get(m, m) for m in sorted(group.metric))
            others = " or ".join(sorted(counterparts[(*identity, framework)]))
            why = f"{others} measured this config but no {metrics} time for it"
        else:
            why = _why(group.iloc[0], by_op.get(group.iloc[0].benchmark))
        rows.append(_lone_row(group, framework, why))
    for check in _latest_accuracy(accuracy).itertuples():
        if int(check.series_id) in checked:
            continue
        status = accuracy_status(check.value, check.consistent)
        rows.append(
            {
                **_identity_of(check),
                "framework": "accuracy check",
                "measured": f"max_diff {check.value:.4g} ({status})",
                "why": "an accuracy check only: no speed result of both frameworks for this op,"
                " config and device",
                "version": check.version,
                "measured_at": check.measured_at,
                "source": check.source,
                "source_url": check.source_url,
                "source_id": getattr(check, "source_id", None),
                "line": getattr(check, "line", None),
                "value": check.value,
            }
        )
    if not rows:
        return pd.DataFrame(columns=UNMATCHED_COLUMNS)
    return pd.DataFrame(rows)[UNMATCHED_COLUMNS].reset_index(drop=True)


def _identity_of(row: Any) -> dict[str, Any]:
    return {
        "op": row.op,
        "benchmark": row.benchmark,
        "task": row.task,
        "device": row.device,
        "config": row.config,
        "parameters": row.parameters,
    }


def _lone_row(group: pd.DataFrame, framework: str, why: str) -> dict[str, Any]:
    last = group.sort_values("measured_at", na_position="first").iloc[-1]
    return {
        **_identity_of(last),
        "framework": framework,
        "measured": _measured(group),
        "why": why,
        "version": last.version,
        "measured_at": last.measured_at,
        "source": last.source,
        "source_url": last.source_url,
        "source_id": last.get("source_id"),
        "line": last.get("line"),
        "value": last.value,
    }


def _why(result: Any, same_op: pd.DataFrame | None) -> str:
    """Why a result found no counterpart: what the other side measured of the same op."""
    ours = result.framework == OURS
    if same_op is None:
        same_op = pd.DataFrame(columns=["framework"])
    others = same_op[(same_op.framework != OURS) if ours else (same_op.framework == OURS)]
    if others.empty:
        return "no other framework measured this op" if ours else "Paddle did not measure this op"
    if ours:
        return " / ".join(
            f"{name} measured this op only as: {_describe(rows)}"
            for name, rows in others.groupby("framework", sort=True)
        )
    return f"Paddle measured this op only as: {_describe(others)}"


# -- where we lose, and since when ------------------------------------------------------------


# What losses reads of history_pairs' rows: each pair's identity, beside its history.
LOSS_PAIR_COLUMNS = (
    "pair",
    "ours_id",
    "theirs_id",
    "metric",
    "op",
    "benchmark",
    "task",
    "device",
    "config",
    "theirs",
    "unit",
    "direction",
)


def history_pairs(matched: pd.DataFrame) -> pd.DataFrame:
    """The series pairs behind matched rows, one per row and metric: pair (its label),
    ours_id, theirs_id, metric, the row's identity (op, benchmark, task, device, config,
    theirs, unit, direction), the latest ratio's verdict, and line (line_label: the pair
    among one op's). What queries.op_history takes, and what its rows join back to."""
    columns = [*LOSS_PAIR_COLUMNS, "verdict", "line"]
    parts = []
    for metric, name in (("total_time", "total"), ("gpu_time", "gpu")):
        part = matched.dropna(subset=[f"ours_id_{name}", f"theirs_id_{name}"])
        if part.empty:
            continue
        parts.append(
            part.assign(
                pair=part[f"pair_{name}"],
                ours_id=part[f"ours_id_{name}"].astype(int),
                theirs_id=part[f"theirs_id_{name}"].astype(int),
                metric=metric,
                verdict=part[f"verdict_{name}"],
                line=[
                    line_label(c, d, t, METRIC_NAMES[metric])
                    for c, d, t in zip(part.config, part.device, part.task, strict=True)
                ],
            )[columns]
        )
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)


def line_label(config: str, device: str, task: str, metric: str = "") -> str:
    """One op's pair as a chart line: "config 0 · GPU · forward · total"."""
    parts = [
        f"config {config}" if config != NO_CONFIG else "",
        device,
        direction_label(task),
        metric,
    ]
    return " · ".join(p for p in parts if p)


def with_words(history: pd.DataFrame) -> pd.DataFrame:
    """History points worded like every other ratio ("Paddle 1.44x slower than tensorflow")
    and labelled for a chart (pair = line_label), as charts.ratio_lines takes them."""
    data = history.copy()
    data["words"] = [
        ratio_words(r, d, t)
        for r, d, t in zip(data.ratio, data.direction, data.theirs, strict=True)
    ]
    data["series_pair"] = data["pair"]
    data["pair"] = data["line"]
    return data


_WALKED = [
    "pair",
    "direction",
    "theirs",
    "ratio",
    "measured_at",
    "ours_value",
    "theirs_value",
    "unit",
    "metric",
    "benchmark",
    "source_url",
]


def matched_results(
    conn: duckdb.DuckDBPyConnection, metrics: tuple[str, ...] = METRICS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """match() of the store's op results: what the Ops page shows, asked through ui.query
    so that it is cached on the store's data version like every other query (0.6 s on
    1,600 pairs, not worth paying again on each filter change)."""
    from perfboard.queries.ops import op_results  # imports this module's neighbours

    return match(op_results(conn, metrics))


def losing_since(history: pd.DataFrame) -> pd.DataFrame:
    """The pairs whose latest point is a loss, by how much and since when: compare's
    where_we_lose over each pair's points by Paddle commit (queries.op_history joined to
    history_pairs), with the op's identity and how long: days (latest - since) and
    commits (the losing points in a row up to the latest). Largest loss first.
    """
    columns = [
        "op",
        "task",
        "device",
        "config",
        "metric",
        "theirs",
        "words",
        "factor",
        "ratio",
        "ours_value",
        "theirs_value",
        "unit",
        "since",
        "days",
        "commits",
        "measured_at",
        "version",
        "source_url",
        "pair",
    ]
    data = history.dropna(subset=["ratio"])
    if data.empty:
        return pd.DataFrame(columns=columns)
    data = data.sort_values(["pair", "measured_at"], kind="stable")
    # where_we_lose walks every point of every pair in Python: only the pairs whose latest
    # point loses (the only ones it can return) are worth the walk.
    last = data.groupby("pair", sort=False).tail(1)
    losing = last.pair[
        [verdict(r, d) == "worse" for r, d in zip(last.ratio, last.direction, strict=True)]
    ]
    data = data[data.pair.isin(set(losing))]
    if data.empty:
        return pd.DataFrame(columns=columns)
    # Only the columns it reads: it takes each pair's last row whole, a cost per column.
    walked = data[[c for c in _WALKED if c in data.columns]].assign(subject="Paddle")
    lose = compare.where_we_lose(walked)
    meta = data.drop_duplicates("pair", keep="last").set_index("pair")
    lose = lose.join(meta[["op", "task", "device", "config", "version"]], on="pair")
    lose["days"] = (pd.to_datetime(lose.measured_at) - pd.to_datetime(lose.since)).dt.days.astype(
        "Int64"
    )
    lose["commits"] = lose.losing_points.astype(int)
    lose["metric"] = lose.metric.map(lambda m: METRIC_NAMES.get(m, m))
    return lose[columns].reset_index(drop=True)


def pair_rows(pairs: pd.DataFrame) -> tuple[tuple[Any, ...], ...]:
    """history_pairs' rows as tuples of LOSS_PAIR_COLUMNS, of plain Python values (None
    for a missing one): losses' argument, which ui.query keys its cache on (a frame is
    not hashable, and NaN is not equal to itself)."""
    frame = pairs[list(LOSS_PAIR_COLUMNS)].astype(object)
    frame = frame.where(frame.notna(), None)
    return tuple(frame.itertuples(index=False, name=None))


def competitors(matched: pd.DataFrame) -> list[str]:
    """The other frameworks of matched_results, as Ops offers them: tensorflow first (the
    one it opens with), then by name."""
    return sorted(matched.theirs.unique(), key=lambda t: (t != "tensorflow", t))


def losing_pairs(losing: pd.DataFrame) -> tuple[tuple[Any, ...], ...]:
    """What Ops' "Where we lose" asks losses for: pair_rows of the pairs behind these
    losing rows of matched_results whose latest ratio is worse."""
    behind = history_pairs(losing)
    return pair_rows(behind[behind.verdict == "worse"])


def losses(conn: duckdb.DuckDBPyConnection, pairs: tuple[tuple[Any, ...], ...]) -> pd.DataFrame:
    """losing_since of these pairs (pair_rows of history_pairs): their history by Paddle
    commit read, then walked. Asked through ui.query, so that the walk (in Python, over
    every losing pair's points) is cached on the store's data version in the one
    byte-bounded cache, like every other result a page shows."""
    from perfboard.queries.ops import op_history  # imports this module's neighbours

    frame = pd.DataFrame(list(pairs), columns=list(LOSS_PAIR_COLUMNS))
    history = op_history(
        conn,
        tuple(frame.pair),
        tuple(int(i) for i in frame.ours_id),
        tuple(int(i) for i in frame.theirs_id),
    )
    return losing_since(history.merge(frame, on="pair"))
