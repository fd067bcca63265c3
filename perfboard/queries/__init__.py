"""What the pages ask the store: parameterized SQL -> DataFrames, one module per area.

    labels.py    how a series is named (SERIES_LABEL, series_label, series_labels)
    store.py     totals, sources, the series catalog, latest values, headline series
    progress.py  phases and their milestones
    series.py    points of series over time (bucketed), commits, PRs and releases of them
    prs.py       pull requests, what they measured and what they claim
    changes.py   change points grouped into alerts, suspects, newest values out of noise
    report.py    the weekly report's week
    compare.py   two versions side by side, the steps behind a series' change
    ops.py       op benchmark results, latest per series, a pair's ratio by Paddle commit
    profiles.py  runs with profiler reports, one run's events and its IR passes

Every value goes in as a bound parameter. Aggregation happens here, in DuckDB, so a page
receives rows it can show, never a table of millions to reduce in pandas. Pages call
these as `queries.NAME` through perfboard.ui.query.
"""

from perfboard.queries.changes import (
    alert_changes,
    alert_suspects,
    alerts,
    latest_outliers,
    series_changes,
    suspects_between,
)
from perfboard.queries.compare import compare_choices, compare_side, series_range, series_steps
from perfboard.queries.labels import series_labels
from perfboard.queries.ops import op_history, op_results
from perfboard.queries.profiles import profile_events, profile_passes, profile_runs
from perfboard.queries.progress import milestones, milestones_of, phases, project_milestones
from perfboard.queries.prs import (
    pr_claims,
    pr_measurements,
    pr_page_measurements,
    referenced_prs,
)
from perfboard.queries.report import (
    report_weeks,
    week_gaps,
    week_headlines,
    week_phases,
    week_prs,
    week_quality,
)
from perfboard.queries.series import releases, series_points
from perfboard.queries.store import (
    counts,
    headline_series,
    ingest_errors,
    last_ingest,
    latest_per_series,
    line_values,
    projects,
    series_catalog,
    source_errors,
    source_measurements,
    source_text,
    sources,
)

__all__ = [
    "alert_changes",
    "alert_suspects",
    "alerts",
    "compare_choices",
    "compare_side",
    "counts",
    "headline_series",
    "ingest_errors",
    "last_ingest",
    "latest_outliers",
    "latest_per_series",
    "line_values",
    "milestones",
    "milestones_of",
    "op_history",
    "op_results",
    "phases",
    "pr_claims",
    "pr_measurements",
    "pr_page_measurements",
    "profile_events",
    "profile_passes",
    "profile_runs",
    "project_milestones",
    "projects",
    "referenced_prs",
    "releases",
    "report_weeks",
    "series_catalog",
    "series_changes",
    "series_labels",
    "series_points",
    "series_range",
    "series_steps",
    "source_errors",
    "source_measurements",
    "source_text",
    "sources",
    "suspects_between",
    "week_gaps",
    "week_headlines",
    "week_phases",
    "week_prs",
    "week_quality",
]
