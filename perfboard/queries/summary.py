"""The per-series summary the store-wide queries start from: one row a series (its points,
first and last times, latest value and latest ok value), aggregated from measurements.

Overview's latest values, the series catalog (Trends, Compare, Explain), the op results
(Ops), the headline series and the projects each began with the same hash aggregate over
every measurement: 0.3-1 s cold on 10 M measurements, and any ingest made them cold again.
Here it is one aggregate, which a query names through `source(conn)`:

- on its own (a command, a test, a report from the command line) that is the aggregate
  itself, as a subquery: the same SQL as before;
- in the dashboard, ui's reads are `provided()` a table kept in step with the store
  (result_cache.SeriesSummaries): read whole once, then only the rows of the series each
  commit changed (data_changes), some 50 ms after an ingest of 100 series. It is registered
  on the query's connection under NAME, so the query's own SQL does not change.

Either way the rows are those of `rows_sql`: the two cannot drift apart.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator

import duckdb
import pyarrow as pa

NAME = "series_summary"  # the table's name on a dashboard connection

# Newest first: by time, then by order of ingest (source, line), an undated point first.
_NEWEST = "(coalesce(epoch_us(measured_at), 0), source_id, line)"
_ROWS = f"""
    SELECT series_id,
           count(*) AS points,
           count(*) FILTER (WHERE status = 'ok') AS ok_points,
           min(measured_at) AS first,
           max(measured_at) AS last,
           max(measured_at) FILTER (WHERE status = 'ok') AS ok_last,
           arg_max(struct_pack(value, status, version, measured_at, source_id, line),
                   {_NEWEST}) AS latest,
           arg_max(struct_pack(value, version, measured_at, source_id, line,
                               consistent := TRY_CAST(stats->>'consistent' AS BOOLEAN)),
                   {_NEWEST}) FILTER (WHERE status = 'ok') AS latest_ok
    FROM measurements
    {{where}}
    GROUP BY series_id
"""


def rows_sql(of_series: bool = False) -> str:
    """The summary's SQL: of every series, or (of_series) of those in the list $series."""
    where = "WHERE series_id IN (SELECT unnest($series))" if of_series else ""
    return _ROWS.format(where=where)


def read(conn: duckdb.DuckDBPyConnection, series: Iterable[int] | None = None) -> pa.Table:
    """The summary's rows as an Arrow table: of every series, or of `series` only."""
    if series is None:
        return conn.sql(rows_sql()).to_arrow_table()
    return conn.sql(rows_sql(True), params={"series": sorted(series)}).to_arrow_table()


_provided = threading.local()  # the provider of the thread's dashboard read, if any


@contextlib.contextmanager
def provided(summary_of: Callable[[duckdb.DuckDBPyConnection], pa.Table]) -> Iterator[None]:
    """Within the block, source() on this thread takes its table from summary_of(conn)
    (the dashboard's kept summary) instead of aggregating."""
    _provided.summary_of = summary_of
    try:
        yield
    finally:
        _provided.summary_of = None


def source(conn: duckdb.DuckDBPyConnection) -> str:
    """The FROM item of the per-series summary for a query on `conn`: the kept table when
    one is provided (registered on conn as NAME), else the aggregate as a subquery."""
    summary_of = getattr(_provided, "summary_of", None)
    if summary_of is None:
        return f"({rows_sql()})"
    conn.register(NAME, summary_of(conn))
    return NAME
