"""Compare: two versions side by side, and the steps that explain a series' change."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd

from perfboard.queries.changes import FIRST_AFTER, alert_suspects
from perfboard.queries.labels import SERIES_LABEL as _SERIES_LABEL

_HASH = "'[0-9a-fA-F]{7,40}'"

# The ok values of each series at one side, one row per value, with the series' columns.


_SIDE_COLUMNS = f"""
        SELECT m.series_id, {_SERIES_LABEL} AS series, s.project, s.benchmark, s.metric,
               s.unit, s.direction, s.framework, m.value, m.version, m.measured_at,
               src.url AS source_url, m.source_id, m.line
"""

# Each series' last ok point before $cut (its version, or its time when it has none) and
# every ok value of that point before $cut: repeated runs of one commit give Welch its samples.


# The version is arg_max(version, (measured_at, source_id, line)) over the rows that have
# one, found in two steps: the newest time (a plain max), then the version among the rows
# at that time. One arg_max over a struct key of 9 M rows took 0.8-1 s of a side's 1.2 s.
_LAST_BEFORE = """
        newest AS (
            SELECT series_id, max(measured_at) AS t,
                   max(measured_at) FILTER (WHERE version IS NOT NULL) AS tv
            FROM measurements
            WHERE status = 'ok' AND measured_at < $cut {of_series}
            GROUP BY series_id
        ),
        versioned AS (
            SELECT m.series_id, arg_max(m.version, (m.source_id, m.line)) AS v
            FROM measurements m JOIN newest n ON m.series_id = n.series_id AND m.measured_at = n.tv
            WHERE m.status = 'ok' AND m.version IS NOT NULL {of_series_m}
            GROUP BY m.series_id
        ),
        last AS (
            SELECT n.series_id, v.v, n.t FROM newest n LEFT JOIN versioned v USING (series_id)
        ),
        before_cut AS (
            SELECT m.* FROM measurements m JOIN last l USING (series_id)
            WHERE m.status = 'ok' AND m.measured_at < $cut {of_series_m}
              AND CASE WHEN l.v IS NULL THEN m.version IS NULL AND m.measured_at = l.t
                       ELSE m.version = l.v END
        )
"""


def compare_side(
    conn: duckdb.DuckDBPyConnection, kind: str, value: str, series_id: int | None = None
) -> pd.DataFrame:
    """Each series' measured values at one side of a comparison, one row per ok value.

    kind "version": the values measured at that version: the exact string, else a commit
    hash of 7 or more hex digits that abbreviates the measurements' version (or that the
    measurements' abbreviated version abbreviates), in any case; a prefix that names two
    different commits (of `series_id`'s, when given) names none. "release": a release tag
    of `releases`: the values at its commit, else each series' last point before the
    release. "date" (YYYY-MM-DD): each
    series' last point measured by the end of that day. A "point" is every value of one
    version (or of one time, for values without a version). `series_id`: that series only.
    Columns: series_id, series, project, benchmark, metric, unit, direction, framework,
    value, version, measured_at, source_url, source_id, line (where the value was read).
    """
    # The filter is written in only for a series (not `$series IS NULL OR ...`), so that
    # DuckDB prunes the scan to it: Attribution's two sides took 3-5 s each on 10 M.
    params: dict[str, object] = {} if series_id is None else {"series": series_id}
    of_series = "" if series_id is None else "AND series_id = $series"
    last_before = _LAST_BEFORE.format(
        of_series=of_series, of_series_m=of_series.replace("series_id", "m.series_id")
    )
    if kind == "version":
        params["value"] = value.strip()
        sql = f"""
        WITH versions AS (
            SELECT DISTINCT version FROM measurements
            WHERE status = 'ok' AND version IS NOT NULL {of_series}
        ),
        exact AS (SELECT version FROM versions WHERE version = $value),
        prefixed AS (
            SELECT version FROM versions
            WHERE regexp_full_match($value, {_HASH}) AND regexp_full_match(version, {_HASH})
              AND (starts_with(lower(version), lower($value))
                   OR starts_with(lower($value), lower(version)))
        ),
        -- Abbreviations of one commit agree with its longest spelling; two commits do not.
        longest AS (SELECT arg_max(lower(version), length(version)) AS v FROM prefixed),
        chosen AS (
            SELECT version FROM exact
            UNION ALL
            SELECT p.version FROM prefixed p, longest
            WHERE NOT EXISTS (SELECT 1 FROM exact)
              AND NOT EXISTS (SELECT 1 FROM prefixed q WHERE NOT starts_with(longest.v,
                                                                             lower(q.version)))
        ),
        side AS (
            SELECT * FROM measurements
            WHERE status = 'ok' AND version IN (SELECT version FROM chosen) {of_series}
        )
        """
    elif kind == "release":
        params["value"] = value.strip()
        release = conn.execute(
            "SELECT min(released_at) FROM releases WHERE tag = $value", {"value": params["value"]}
        ).fetchone()[0]
        params["cut"] = release
        sql = f"""
        WITH tagged AS (SELECT lower(sha) AS sha FROM releases WHERE tag = $value),
        at_commit AS (
            SELECT DISTINCT v.version
            FROM (SELECT DISTINCT version FROM measurements
                  WHERE regexp_full_match(version, {_HASH}) {of_series}) v
            JOIN tagged t ON starts_with(t.sha, lower(v.version))
        ),
        at_release AS (
            SELECT * FROM measurements
            WHERE status = 'ok' AND version IN (SELECT version FROM at_commit) {of_series}
        ),
        {last_before},
        side AS (
            SELECT * FROM at_release
            UNION ALL
            SELECT * FROM before_cut
            WHERE series_id NOT IN (SELECT series_id FROM at_release)
        )
        """
    elif kind == "date":
        day = datetime.strptime(value.strip(), "%Y-%m-%d")  # a ValueError names a bad date
        params["cut"] = (pd.Timestamp(day) + pd.Timedelta(days=1)).to_pydatetime()
        sql = f"WITH {last_before}, side AS (SELECT * FROM before_cut)"
    else:
        raise ValueError(f"kind must be version, release or date, not {kind!r}")
    return conn.execute(
        sql
        + _SIDE_COLUMNS
        + """
        FROM side m
        JOIN series s USING (series_id)
        LEFT JOIN sources src ON src.source_id = m.source_id
        ORDER BY m.series_id, m.measured_at, m.source_id, m.line
        """,
        params,
    ).df()


def compare_choices(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """What a comparison's sides can be: the 300 versions with the most measurements (with
    their first date and the series they measure), release tags, and the milestone labels
    that are also measurement versions (a phase's rows). Columns: kind (version, release),
    value, first_at (first measured, or released), series, note.

    The versions are ranked by measurements, not by distinct series, and their series are
    counted only for those chosen: a count of distinct series for every version is one
    hash set of every (version, series) pair in the store, 3-7 s on 10 M measurements,
    against 0.2 s for a count. The two rankings differ only for a version measured many
    times over in few series.
    """
    return conn.execute(
        """
        WITH counted AS (
            SELECT version, count(*) AS measured, min(measured_at) AS first_at
            FROM measurements
            WHERE status = 'ok' AND version IS NOT NULL
            GROUP BY version
        ),
        top AS (
            SELECT version FROM counted
            ORDER BY measured DESC, first_at DESC NULLS LAST, version LIMIT 300
        ),
        named AS (
            SELECT ms.label AS version, 'milestone of ' || any_value(p.name) AS note
            FROM milestones ms JOIN phases p USING (phase_id)
            GROUP BY ms.label
        ),
        chosen AS (SELECT version FROM top UNION SELECT version FROM named),
        exact AS (
            SELECT version, count(DISTINCT series_id) AS series
            FROM measurements
            WHERE status = 'ok' AND version IN (SELECT version FROM chosen)
            GROUP BY version
        )
        SELECT 'version' AS kind, c.version AS value, c.first_at, e.series, n.note
        FROM counted c JOIN exact e USING (version) LEFT JOIN named n USING (version)
        UNION ALL
        SELECT 'release', tag, min(released_at), NULL, string_agg(DISTINCT repo, ', ')
        FROM releases GROUP BY tag
        ORDER BY kind DESC, first_at DESC NULLS LAST, value
        """
    ).df()


# A phase table names no batch size or sequence length: its values stand for the series
# they measure only at that series' magnitude. A milestone's value before its step is taken
# as the same measure when it is within this factor of the series' own value at that date
# (the same model measured in two documents differs by a CUDA version, a few percent to
# 15 %: 10 ms on CUDA 10 against 8.66 ms on CUDA 9 in PaddlePaddle/benchmark#165); another
# batch size or sequence length is further off (ERNIE on a P4, batch 1: 8.66 ms at
# seq_len 128, 36.1 ms at 512).
SAME_MAGNITUDE = 1.25


def series_steps(
    conn: duckdb.DuckDBPyConnection, series_id: int, start: datetime, end: datetime
) -> pd.DataFrame:
    """What moved one series between two times (start, end]: its change points (detected
    steps, each with the PR suspected of it: alert_suspects, the first to land) and the
    milestones of the phases that measure this very series, recorded in that window.

    A milestone is this series' step only when its phase has the series' identity: the
    same project, benchmark, metric and unit, on the series' device (the phase's platform),
    and values of the series' magnitude (the value before the step within SAME_MAGNITUDE of
    the series' own value at that date: a phase table names no params). A milestone whose
    PR a change point already names, or that falls inside a change point's window, is left
    out: the series' own step counts, not the phase table's. Oldest first.

    Columns: at, via (change point, milestone), label, pr_repo, pr_number, title ("" when
    none is known), delta (in the series' unit), suspects (PRs suspected of a change point),
    source_id, line and measured: where the step's record was read and its value there
    (a change point's first measurement after it; a milestone's row in its phase table).
    """
    columns = [
        "at",
        "via",
        "label",
        "pr_repo",
        "pr_number",
        "title",
        "delta",
        "suspects",
        "source_id",
        "line",
        "measured",
    ]
    window = {"series": series_id, "start": start, "end": end}
    changes = conn.execute(
        f"""
        SELECT alert_key, before_at, after_at AS "at", after - before AS delta, after_version,
               source_id, line, {FIRST_AFTER} AS measured
        FROM change_points cp
        WHERE series_id = $series AND after_at > $start AND after_at <= $end
        ORDER BY after_at
        """,
        window,
    ).df()
    rows: list[dict[str, object]] = []
    for change in changes.itertuples():
        read = {"source_id": change.source_id, "line": change.line, "measured": change.measured}
        suspects = alert_suspects(conn, change.alert_key).dropna(subset=["pr_number"])
        if suspects.empty:
            after = change.after_version or f"{change.at:%Y-%m-%d}"
            rows.append(
                {
                    "at": change.at,
                    "via": "change point",
                    "label": f"step at {change.at:%Y-%m-%d}",
                    "pr_repo": None,
                    "pr_number": None,
                    "title": f"no PR known to have landed before {after}",
                    "delta": change.delta,
                    "suspects": 0,
                    **read,
                }
            )
            continue
        first = suspects.iloc[0]
        rows.append(
            {
                "at": change.at,
                "via": "change point",
                "label": f"#{int(first.pr_number)}"
                + (f" +{len(suspects) - 1}" if len(suspects) > 1 else ""),
                "pr_repo": first.repo,
                "pr_number": int(first.pr_number),
                "title": first.title if isinstance(first.title, str) else "",
                "delta": change.delta,
                "suspects": len(suspects),
                **read,
            }
        )
    milestones = conn.execute(
        """
        WITH steps AS (
            SELECT ms.*, p.name AS phase, p.source_id,
                   lag(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)
                       AS before
            FROM milestones ms
            JOIN phases p USING (phase_id)
            JOIN series s ON s.project = p.project AND s.benchmark = p.benchmark
                         AND s.metric = p.metric AND s.unit = p.unit
                         AND lower(trim(coalesce(p.platform, '')))
                             = lower(trim(coalesce(s.device, '')))
            WHERE s.series_id = $series
        ),
        in_window AS (
            SELECT * FROM steps
            WHERE value IS NOT NULL AND before IS NOT NULL
              AND date > $start::DATE AND date <= $end::DATE
        ),
        -- The series' own value at each milestone's date: its last ok value by the end of
        -- that day, else its first one after.
        level AS (
            SELECT st.phase_id, st.ordinal,
                   coalesce(
                       (SELECT arg_max(m.value, m.measured_at) FROM measurements m
                        WHERE m.series_id = $series AND m.status = 'ok'
                          AND m.measured_at < st.date + INTERVAL 1 DAY),
                       (SELECT arg_min(m.value, m.measured_at) FROM measurements m
                        WHERE m.series_id = $series AND m.status = 'ok'
                          AND m.measured_at >= st.date + INTERVAL 1 DAY)) AS level
            FROM in_window st
        )
        SELECT st.date::TIMESTAMP AS "at", st.label, st.phase, coalesce(st.pr_repo, k.repo) AS repo,
               st.pr_number, coalesce(k.title, st.description, '') AS title,
               st.value - st.before AS delta, st.source_id, st.line, st.value AS measured
        FROM in_window st
        JOIN level l USING (phase_id, ordinal)
        LEFT JOIN pull_requests k
          ON k.number = st.pr_number AND (st.pr_repo IS NULL OR k.repo = st.pr_repo)
        WHERE l.level > 0 AND st.before > 0
          AND greatest(st.before / l.level, l.level / st.before) <= $magnitude
          -- inside a change point's window: the series' own step already holds it
          AND NOT EXISTS (
              SELECT 1 FROM change_points cp
              WHERE cp.series_id = $series
                AND st.date > cp.before_at::DATE AND st.date <= cp.after_at::DATE
          )
        ORDER BY st.date, st.ordinal
        """,
        {**window, "magnitude": SAME_MAGNITUDE},
    ).df()
    named = {r["pr_number"] for r in rows if r["pr_number"] is not None}
    for step in milestones.itertuples():
        if not pd.isna(step.pr_number) and int(step.pr_number) in named:
            continue
        has_pr = not pd.isna(step.pr_number)
        rows.append(
            {
                "at": step.at,
                "via": "milestone",
                "label": f"#{int(step.pr_number)}" if has_pr else f"{step.phase} {step.label}",
                "pr_repo": step.repo if has_pr else None,
                "pr_number": int(step.pr_number) if has_pr else None,
                "title": step.title,
                "delta": step.delta,
                "suspects": int(has_pr),
                "source_id": step.source_id,
                "line": step.line,
                "measured": step.measured,
            }
        )
    if not rows:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(rows)[columns].sort_values("at", kind="stable").reset_index(drop=True)


def series_range(
    conn: duckdb.DuckDBPyConnection, series_id: int, start: datetime, end: datetime
) -> tuple[float, float] | None:
    """The lowest and highest ok value of one series measured in [start, end]: the range
    an attribution's steps may walk it through. None when nothing was measured."""
    low, high = conn.execute(
        "SELECT min(value), max(value) FROM measurements WHERE series_id = $series"
        " AND status = 'ok' AND measured_at >= $start AND measured_at <= $end",
        {"series": series_id, "start": start, "end": end},
    ).fetchone()
    return None if low is None else (float(low), float(high))
