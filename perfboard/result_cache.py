"""The dashboard's query results, shared by every session of a server process and bounded
by size.

Each (query, arguments) keeps its newest result and the data version it was read at. A
result of an older version is read again, unless the store cannot be read (an ingest
holds the file): then it is what the page shows, with a note. Memory is bounded in bytes,
least recently used out first: st.cache_data bounds entries by count only, and with one
of Compare's results on the 10 M store at 57 MB, issue 7's load test grew by 160-260 MB a
minute. A result is copied in and out (pages may change what they are handed, as with
st.cache_data), and a query that many sessions miss at once is read once.
"""

from __future__ import annotations

import copy
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd


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
