"""The dashboard's query results, shared by every session of a server process and bounded
by size.

Each (query, arguments) keeps its newest result and the data version it was read at. A
result of an older version is read again, unless the store cannot be read (an ingest
holds the file): then it is what the page shows, with a note. Memory is bounded in bytes,
least recently used out first: st.cache_data bounds entries by count only, and with one
of Compare's results on the 10 M store at 57 MB, issue 7's load test grew by 160-260 MB a
minute. A result is copied in and out (pages may change what they are handed, as with
st.cache_data), and a query that many sessions miss at once is read once.

The data version is that of what the query reads (Reads, declared in QUERY_READS), not
the store's: an ingest into some series leaves every cached result that reads none of
their rows warm. StoreVersions keeps it: the file's stat first (no connection: nothing
moved, nothing to ask), and only when that moved the commits since (db.change_log, the
data_changes rows each write transaction records). Issue 16's load test had every page
cold after each ingest: p50 8.8 s.
"""

from __future__ import annotations

import copy
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from perfboard.db import EVERYTHING, Change, ChangeLog


def nbytes(value: Any) -> int:
    """About how much memory a query result holds: frames counted deep (their strings),
    containers by what they hold."""
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=True).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(deep=True))
    if isinstance(value, list | tuple | set | frozenset):
        return sys.getsizeof(value) + sum(nbytes(v) for v in value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k) + nbytes(v) for k, v in value.items())
    return sys.getsizeof(value)


READ_LOCKS = 64


@dataclass(slots=True)
class _Entry:
    version: Hashable
    value: Any
    nbytes: int


class ResultCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        # A read's lock, by the key's hash: two keys rarely share one, and the pool does
        # not grow with the keys ever asked for.
        self._reading = [threading.Lock() for _ in range(READ_LOCKS)]

    def get(self, key: Hashable, version: Hashable, read: Callable[[], Any]) -> Any:
        """A copy of key's result at `version`, read (once, whoever else asks meanwhile)
        when the cache has none."""
        found = self._find(key, version)
        if found is not None:
            return copy.deepcopy(found.value)
        with self._reading[
            hash(key) % READ_LOCKS
        ]:  # the sessions that missed it too wait for this read
            found = self._find(key, version)
            if found is None:
                value = read()
                found = self._put(key, version, copy.deepcopy(value))
                return value
        return copy.deepcopy(found.value)

    def stale(self, key: Hashable) -> Any | None:
        """A copy of key's newest result whatever its version, or None."""
        with self._lock:
            entry = self._entries.get(key)
        return None if entry is None else copy.deepcopy(entry.value)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    @property
    def size(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def _find(self, key: Hashable, version: Hashable) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.version != version:
                return None
            self._entries.move_to_end(key)
            return entry

    def _put(self, key: Hashable, version: Hashable, value: Any) -> _Entry:
        entry = _Entry(version, value, nbytes(value))
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            if entry.nbytes <= self.max_bytes:  # one larger than all is not kept
                self._entries[key] = entry
                self._bytes += entry.nbytes
            while self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.nbytes
        return entry


# -- what a query reads, and its version ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reads:
    """What a cached query reads: these tables (None: everything), and of their rows only
    those of `series_ids` / `project` when given."""

    tables: frozenset[str] | None
    series_ids: frozenset[int] | None = None
    project: str | None = None

    def affected_by(self, change: Change) -> bool:
        """Whether a commit's change to one table may change what this query returns."""
        if change.table == EVERYTHING or self.tables is None:
            return True
        if change.table not in self.tables:
            return False
        other_series = (
            self.series_ids is not None
            and change.series_ids is not None
            and not self.series_ids & change.series_ids
        )
        other_project = (
            self.project is not None
            and change.projects is not None
            and self.project not in change.projects
        )
        return not (other_series or other_project)


EVERY_TABLE = Reads(None)


def tables(*names: str) -> Callable[..., Reads]:
    """QUERY_READS' entry of a query that reads these tables, whatever its arguments."""
    reads = Reads(frozenset(names))
    return lambda *args: reads


def of_series(*names: str, ids: Callable[..., Iterable[int]]) -> Callable[..., Reads]:
    """QUERY_READS' entry of a query that reads only the rows of the series `ids(*args)`
    names, in these tables."""
    return lambda *args: Reads(frozenset(names), series_ids=frozenset(int(i) for i in ids(*args)))


def of_project(*names: str, project: Callable[..., str | None]) -> Callable[..., Reads]:
    """QUERY_READS' entry of a query that reads only one project's rows (every project's
    when `project(*args)` is None), in these tables."""
    return lambda *args: Reads(frozenset(names), project=project(*args))


_MEASURED = ("measurements", "series", "sources")

# What each query pages run through ui.query reads, by the query's qualified name: the
# tables its SQL names (tests/test_result_cache.py checks them against its source), and
# for the few whose arguments name series, only theirs. Not listed: reads everything (safe,
# and slow to stay warm). A query that reads other series' rows than its arguments name
# (compare_side's versions, series_steps' alerts) is declared by table only.
QUERY_READS: dict[str, Callable[..., Reads]] = {
    "perfboard.alert_issue.filed_issue": tables("alert_issues"),
    "perfboard.compare.two_versions": tables(*_MEASURED, "releases"),
    "perfboard.compare.variant_pairs": tables("measurements", "series", "series_noise"),
    "perfboard.compare.variant_ratios": of_series(
        "commits",
        "measurements",
        "pull_requests",
        "sources",
        # compare.pair_rows: each row starts with ours_id, theirs_id
        ids=lambda pairs, max_points=0: [row[i] for row in pairs for i in (0, 1)],
    ),
    "perfboard.queries.changes.alert_changes": tables(
        "change_points", "measurements", "series", "sources"
    ),
    "perfboard.queries.changes.alert_suspects": tables(
        "change_points", "commits", "milestones", "pull_requests"
    ),
    "perfboard.queries.changes.alerts": tables(
        "alert_triage", "change_points", "milestones", "pull_requests", "series"
    ),
    "perfboard.queries.changes.latest_outliers": tables("measurements", "series", "series_noise"),
    "perfboard.queries.changes.series_changes": of_series(
        "change_points", ids=lambda series_ids: series_ids
    ),
    "perfboard.queries.changes.suspects_between": tables(
        "commits", "measurements", "milestones", "pull_requests"
    ),
    "perfboard.queries.compare.compare_choices": tables(
        "measurements", "milestones", "phases", "releases", "series"
    ),
    "perfboard.queries.compare.compare_side": tables(*_MEASURED, "releases"),
    "perfboard.queries.compare.series_range": of_series(
        "measurements", ids=lambda series_id, start, end: (series_id,)
    ),
    "perfboard.queries.compare.series_steps": tables(
        "change_points",
        "commits",
        "measurements",
        "milestones",
        "phases",
        "pull_requests",
        "series",
    ),
    "perfboard.queries.ops.op_history": of_series(
        "measurements", "sources", ids=lambda pairs, ours, theirs: (*ours, *theirs)
    ),
    "perfboard.queries.ops.op_results": tables(*_MEASURED),
    "perfboard.ops.matched_results": tables(*_MEASURED),
    "perfboard.ops.losses": of_series(  # op_history of the pairs' series (ops.pair_rows)
        "measurements", "sources", ids=lambda pairs: [row[i] for row in pairs for i in (1, 2)]
    ),
    "perfboard.profile_views.diff_view": tables("passes", "profile_events"),
    "perfboard.profile_views.run_view": tables("passes", "profile_events"),
    "perfboard.queries.profiles.profile_events": tables("profile_events"),
    "perfboard.queries.profiles.profile_passes": tables("passes"),
    "perfboard.queries.profiles.profile_runs": tables(
        *_MEASURED, "passes", "profile_events", "runs"
    ),
    "perfboard.queries.progress.milestones": tables("milestones", "phases", "pull_requests"),
    "perfboard.queries.progress.phases": tables("milestones", "phases", "sources"),
    "perfboard.queries.progress.project_milestones": tables("milestones", "phases"),
    "perfboard.queries.prs.pr_claims": tables("claims", "sources"),
    "perfboard.queries.prs.pr_measurements": tables(*_MEASURED, "pull_requests"),
    "perfboard.queries.prs.pr_page_measurements": tables(*_MEASURED),
    "perfboard.queries.prs.referenced_prs": tables(
        "claims", "milestones", "phases", "pull_requests", "sources"
    ),
    "perfboard.queries.report.report_weeks": tables("measurements", "milestones", "pull_requests"),
    "perfboard.queries.series.releases": tables("releases"),
    "perfboard.queries.series.series_points": of_series(
        "commits",
        "measurements",
        "pull_requests",
        "sources",
        ids=lambda series_ids, max_points=0: series_ids,
    ),
    "perfboard.queries.store.counts": tables(*_MEASURED, "ingest_errors", "phases"),
    "perfboard.queries.store.headline_series": tables("measurements", "series", "series_noise"),
    "perfboard.queries.store.ingest_errors": tables("ingest_errors"),
    "perfboard.queries.store.last_ingest": tables("sources"),
    "perfboard.queries.store.latest_per_series": of_project(
        *_MEASURED, project=lambda project=None, limit=0: project
    ),
    "perfboard.queries.store.line_values": tables("sources", "measurements", "series"),
    "perfboard.queries.store.projects": tables("measurements", "series"),
    "perfboard.queries.store.series_catalog": tables("measurements", "series", "series_noise"),
    "perfboard.queries.store.source_errors": tables("ingest_errors"),
    "perfboard.queries.store.source_measurements": tables("measurements", "series"),
    "perfboard.queries.store.source_text": tables("source_texts"),
    "perfboard.queries.store.sources": tables("sources"),
    # The weekly report reads nearly every table: everything (perfboard.report.render).
}


def reads_of(name: str, args: tuple[Any, ...]) -> Reads:
    """What query `name` (module.qualname) reads when called with `args`."""
    declared = QUERY_READS.get(name)
    return EVERY_TABLE if declared is None else declared(*args)


# Changes kept in memory; past it the oldest go, and a result read before them counts as
# changed (read again once), as if everything had changed there.
KEEP_CHANGES = 5_000


class StoreVersions:
    """The data version of what a query reads, in one store.

    `stamp()`: the cheap check that nothing changed at all (db.data_version: the file's
    stat, a lake's snapshot). `read_log(after)`: db.change_log on a read-only connection
    (may raise what a read raises while an ingest holds the store: nothing is updated
    then). A version is (generation, seq): the newest commit that changed something the
    query reads, no older than `base`, below which nothing is known; the generation moves
    whenever all of it must be read again (the first look, a store replaced by another, a
    store without a change log, a write that did not record itself).
    """

    def __init__(
        self,
        stamp: Callable[[], Hashable],
        read_log: Callable[[tuple[int, datetime] | None], ChangeLog | None],
        keep: int = KEEP_CHANGES,
    ) -> None:
        self._stamp_of, self._read_log, self._keep = stamp, read_log, keep
        self._lock = threading.Lock()
        self._stamp: Hashable = None
        self._head: tuple[int, datetime] | None = None
        self._generation = 0
        self._base = 0
        self._changes: list[Change] = []
        self._memo: dict[Reads, tuple[int, int]] = {}
        self.refreshes = 0  # change logs read: tests count them

    def version(self, reads: Reads) -> tuple[int, int]:
        stamp = self._stamp_of()
        with self._lock:
            if stamp != self._stamp:
                # The stamp first, then the log: a commit between the two is in the log
                # and moves the stamp again (read once more), never missed.
                self._refresh()
                self._stamp = stamp
            found = self._memo.get(reads)
            if found is None:
                newest = max(
                    (c.seq for c in self._changes if reads.affected_by(c)), default=self._base
                )
                found = self._memo[reads] = (self._generation, max(self._base, newest))
            return found

    def _refresh(self) -> None:
        log = self._read_log(self._head)
        self.refreshes += 1
        self._memo.clear()
        if log is None:  # no change log: every move of the stamp is a change of everything
            self._restart(None)
        elif self._head is None or not log.continues:
            self._restart(log.head)  # the first look, or not the store seen before
        elif not log.changes:
            # The stamp moved and no commit says why: a write that did not record itself
            # (an older perfboard, SQL by hand). Everything, to be safe.
            self._restart(log.head)
        else:
            self._changes.extend(log.changes)
            self._head = log.head
            if len(self._changes) > self._keep:
                dropped = self._changes[: -self._keep]
                self._changes = self._changes[-self._keep :]
                self._base = max(self._base, dropped[-1].seq)

    def series_changed(
        self, table: str, since: tuple[int, int] | None
    ) -> tuple[tuple[int, int], frozenset[int] | None]:
        """Where the log stands now (generation, newest commit known), and the series whose
        rows of `table` changed after `since` (a position this returned before): None when
        that is not known (no `since`, a restart since, changes older than those kept, a
        commit that did not list its series). As the last version() call left the log."""
        with self._lock:
            newest = max((c.seq for c in self._changes), default=self._base)
            now = (self._generation, max(self._base, newest))
            if since is None or since[0] != self._generation or since[1] < self._base:
                return now, None
            changed: set[int] = set()
            for change in self._changes:
                if change.seq <= since[1] or not (
                    change.table == EVERYTHING or change.table == table
                ):
                    continue
                if change.table == EVERYTHING or change.series_ids is None:
                    return now, None
                changed |= change.series_ids
            return now, frozenset(changed)

    def _restart(self, head: tuple[int, datetime] | None) -> None:
        self._generation += 1
        self._head = head
        self._base = head[0] if head is not None else 0
        self._changes = []


KEEP_READS = 100


class SeriesSummaries:
    """The per-series summary (perfboard.queries.summary) of one store, kept in step with
    its commits: read whole the first time (and whenever the log cannot say what changed),
    then only the rows of the series whose measurements a commit changed, spliced in.

    `current(conn)` is called inside a query's read, on its connection, after version()
    brought `versions` up to date. The position it records is the older of the log's and
    the connection's own newest commit: a lake's reader sees the snapshot it opened, which
    another session's look at the log may have passed, and the commits it did not see are
    read again (their series) on the next call; a commit the log has not seen yet is too.
    """

    def __init__(self, versions: StoreVersions) -> None:
        self.versions = versions
        self._lock = threading.Lock()
        self._table: Any = None  # a pyarrow.Table
        self._at: tuple[int, int] | None = None
        # Series read at each of the last KEEP_READS refreshes (None: all): tests count them.
        self.reads: list[int | None] = []

    def current(self, conn: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        from perfboard.queries import summary

        with self._lock:
            at, changed = self.versions.series_changed("measurements", self._at)
            if self._table is None or changed is None:
                self._table = summary.read(conn)
                self.reads.append(None)
            elif changed:
                kept = self._table.filter(
                    pc.invert(pc.is_in(self._table["series_id"], pa.array(sorted(changed))))
                )
                fresh = summary.read(conn, changed).cast(kept.schema)
                self._table = pa.concat_tables([kept, fresh])
                self.reads.append(len(changed))
            del self.reads[:-KEEP_READS]  # a server runs for weeks
            self._at = (at[0], min(at[1], _newest_commit(conn)))
            return self._table


def _newest_commit(conn: Any) -> int:
    """The newest commit (data_changes.seq) the connection's snapshot holds; 0: none, or a
    store without a change log (then every change is read whole anyway)."""
    import duckdb

    try:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM data_changes").fetchall()[0][0])
    except duckdb.CatalogException:
        return 0
