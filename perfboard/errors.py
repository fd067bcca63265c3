"""The store's error family: what any command line turns into a message and exit 2.

Raised by db.open_store (and the lake under it) with a message that names the store (a
lake's password hidden) and says what to do; never a traceback for a user.
"""

from __future__ import annotations


class UsageError(Exception):
    """The command cannot run as asked (a bad path, a bad option, a bad setting); exit 2."""


class StoreError(Exception):
    """The store cannot be opened or written as asked: missing, broken, misconfigured."""


class StoreBusy(StoreError):
    """Another writer (an ingest) held the store for longer than the caller would wait."""
