"""What the Profiles and Explain pages show of one profiled run, or of two: worked out here
once per run (or pair) and store version, and shared by every session through ui.query.

Under a team's load a profile diff was a fifth of the server's time: each session's page
run worked out the same breakdown, totals and diff (0.2-0.4 s on a 300-event run) from
the same two cached frames. These functions read the frames and do that work; the pages
only draw what they return.
"""

from __future__ import annotations

from typing import NamedTuple

import duckdb
import pandas as pd

from perfboard import profiles
from perfboard.queries.profiles import profile_events, profile_passes


class RunView(NamedTuple):
    """One run: its events (queries.profile_events), their breakdown (profiles.breakdown),
    each block's total, the block that stands for the run (None: no events), the kind of
    report in words (profiles.layout) and its IR passes (queries.profile_passes)."""

    events: pd.DataFrame
    rows: pd.DataFrame
    totals: dict[str, profiles.BlockTotal]
    main: str | None
    layout: str
    passes: pd.DataFrame


class DiffView(NamedTuple):
    """Run A against run B: profiles.diff's rows, its summary and layout notes, and the
    passes of the two side by side (profiles.passes_diff)."""

    rows: pd.DataFrame
    summary: dict[str, object]
    notes: list[str]
    passes: pd.DataFrame


def run_view(conn: duckdb.DuckDBPyConnection, source_id: int, run: int) -> RunView:
    events = profile_events(conn, source_id, run)
    return RunView(
        events,
        profiles.breakdown(events),
        profiles.block_totals(events) if not events.empty else {},
        profiles.main_block(events),
        profiles.layout(events),
        profile_passes(conn, source_id, run),
    )


def diff_view(
    conn: duckdb.DuckDBPyConnection, a_source: int, a_run: int, b_source: int, b_run: int
) -> DiffView:
    a, b = profile_events(conn, a_source, a_run), profile_events(conn, b_source, b_run)
    rows = profiles.diff(a, b)
    return DiffView(
        rows,
        profiles.diff_summary(a, b, rows),
        profiles.layout_notes(a, b),
        profiles.passes_diff(
            profile_passes(conn, a_source, a_run), profile_passes(conn, b_source, b_run)
        ),
    )
