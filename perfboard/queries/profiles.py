"""Profiler reports: the runs that hold profile events, one run's events, one run's passes.

A run is (source_id, run): the rows one report of one document gave. The list of runs is
aggregated here, in one pass over profile_events and passes, so the page receives one
row per run whatever the number of events; the events and passes of a run come only for
the run (or two) the page shows.
"""

from __future__ import annotations

import duckdb
import pandas as pd


def profile_runs(conn: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run with profile events, newest first (runs without any date last).

    Columns: source_id, run, label (the heading the run sits under), uri, title, url,
    author, project, benchmark (of the run's measurements, when it has any), date (its
    first measurement's time, else the document's date), events, top_events (depth 0),
    sections (comma-separated), place, has_gpu, has_nested, total (ms, the top-level events
    of its main block: the Event Summary, else nvprof's GPU kernels, else a PyTorch
    table's self times, else Nsight Systems' kernels; what the rows list,
    not what a cut table left out), passes, fired (passes that fused a subgraph or more).
    """
    return conn.execute(
        """
        WITH ev AS (
            SELECT source_id, run, count(*) AS events,
                   count(*) FILTER (WHERE depth = 0) AS top_events,
                   string_agg(DISTINCT section, ',' ORDER BY section) AS sections,
                   max(place) FILTER (WHERE section = 'event') AS place,
                   count(gpu_time) > 0 AS has_gpu,
                   max(depth) > 0 AS has_nested,
                   sum(total) FILTER (WHERE depth = 0 AND section = 'event') AS event_total,
                   sum(total) FILTER (WHERE depth = 0 AND section = 'nvprof'
                                      AND coalesce(place, '') IN ('', 'GPU')) AS kernel_total,
                   sum(total) FILTER (WHERE section = 'torch') AS torch_total,
                   sum(total) FILTER (WHERE section = 'torch device') AS torch_device_total,
                   sum(total) FILTER (WHERE section = 'nsys kernels') AS nsys_kernel_total
            FROM profile_events GROUP BY source_id, run
        ),
        pa AS (
            SELECT source_id, run, count(*) AS passes,
                   count(*) FILTER (WHERE subgraphs > 0) AS fired
            FROM passes
            WHERE (source_id, run) IN (SELECT (source_id, run) FROM ev)
            GROUP BY source_id, run
        ),
        measured AS (
            SELECT m.source_id, m.run, min(m.measured_at) AS measured_at,
                   min(s.benchmark) AS benchmark
            FROM measurements m JOIN series s USING (series_id)
            WHERE m.source_id IN (SELECT source_id FROM ev)
            GROUP BY m.source_id, m.run
        )
        SELECT ev.source_id, ev.run, r.label, src.uri, src.title, src.url, src.author,
               src.project, me.benchmark,
               coalesce(me.measured_at, src.created_at) AS date,
               ev.events, ev.top_events, ev.sections, coalesce(ev.place, '') AS place,
               ev.has_gpu, ev.has_nested,
               coalesce(ev.event_total, ev.kernel_total, ev.torch_total,
                        ev.torch_device_total, ev.nsys_kernel_total) AS total,
               coalesce(pa.passes, 0) AS passes, coalesce(pa.fired, 0) AS fired
        FROM ev
        JOIN sources src USING (source_id)
        LEFT JOIN runs r USING (source_id, run)
        LEFT JOIN pa USING (source_id, run)
        LEFT JOIN measured me USING (source_id, run)
        ORDER BY date DESC NULLS LAST, ev.source_id DESC, ev.run DESC
        """
    ).df()


def profile_events(conn: duckdb.DuckDBPyConnection, source_id: int, run: int) -> pd.DataFrame:
    """One run's profile events in the order of the report (line), times in ms."""
    return conn.execute(
        "SELECT section, coalesce(place, '') AS place, event, coalesce(thread, '') AS thread,"
        " depth, calls, total, cpu_time, cpu_ratio, gpu_time, gpu_ratio, min, max, ave,"
        " ratio, line, raw"
        " FROM profile_events WHERE source_id = $source AND run = $run"
        " ORDER BY section, line",
        {"source": source_id, "run": run},
    ).df()


def profile_passes(conn: duckdb.DuckDBPyConnection, source_id: int, run: int) -> pd.DataFrame:
    """One run's IR and analysis passes in the order they ran, with subgraphs fused."""
    return conn.execute(
        'SELECT name, kind, "order", subgraphs, line, raw FROM passes'
        ' WHERE source_id = $source AND run = $run ORDER BY line, "order"',
        {"source": source_id, "run": run},
    ).df()
