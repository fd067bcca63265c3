"""Optimisation phases and their milestones."""

from __future__ import annotations

import duckdb
import pandas as pd


def phases(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return conn.execute(
        """
        SELECT p.phase_id, p.project, p.benchmark, p.name, p.owner, p.platform, p.software,
               p.metric, p.unit, p.baseline, p.target,
               arg_max(ms.value, ms.ordinal) FILTER (WHERE ms.value IS NOT NULL) AS latest,
               count(ms.ordinal) AS milestones,
               count(*) FILTER (WHERE ms.disagrees) AS disagreements,
               src.uri AS source
        FROM phases p
        LEFT JOIN milestones ms USING (phase_id)
        JOIN sources src USING (source_id)
        GROUP BY ALL
        ORDER BY p.project, p.name
        """
    ).df()


def milestones(conn: duckdb.DuckDBPyConnection, phase_id: int) -> pd.DataFrame:
    """A phase's milestones in order, with the cumulative speedup against the first value,
    and the document (source_id) and line each was read from."""
    return milestones_of(conn, [phase_id]).drop(columns="phase_id")


def milestones_of(conn: duckdb.DuckDBPyConnection, phase_ids: list[int]) -> pd.DataFrame:
    """milestones() of several phases in one query (the weekly report shows every phase's),
    with their phase_id first; by phase, then in order."""
    return conn.execute(
        "SELECT ms.phase_id, ms.ordinal, ms.label, ms.value, ms.date, ms.pr_repo,"
        " ms.pr_number, ms.pr_url, k.title AS pr_title, ms.description,"
        " ms.reported_speedup_raw, ms.reported_reduction, ms.computed_reduction,"
        " ms.computed_speedup,"
        " first_value(ms.value IGNORE NULLS) OVER (PARTITION BY ms.phase_id ORDER BY ms.ordinal)"
        " / ms.value AS speedup,"
        " ms.disagrees, ms.line, p.source_id FROM milestones ms"
        " JOIN phases p USING (phase_id) LEFT JOIN pull_requests k"
        " ON k.number = ms.pr_number AND (ms.pr_repo IS NULL OR k.repo = ms.pr_repo)"
        " WHERE list_contains($phases, ms.phase_id) ORDER BY ms.phase_id, ms.ordinal",
        {"phases": [int(p) for p in phase_ids]},
    ).df()


def project_milestones(conn: duckdb.DuckDBPyConnection, project: str) -> pd.DataFrame:
    """Every milestone of every phase of a project, for one shared time axis."""
    return conn.execute(
        "SELECT p.phase_id, p.name AS phase, p.unit, ms.ordinal, ms.label, ms.value, ms.date,"
        " ms.pr_repo, ms.pr_number, ms.pr_url, ms.description"
        " FROM milestones ms JOIN phases p USING (phase_id)"
        " WHERE p.project = ? AND ms.value IS NOT NULL AND ms.date IS NOT NULL"
        " ORDER BY ms.date, p.phase_id, ms.ordinal",
        [project],
    ).df()
