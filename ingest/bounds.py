"""Integers the store can hold: a record with a count it cannot hold is its line's problem.

A parser reads a count as a Python int, which has no limit; the store's columns are
BIGINT or INTEGER. A "Num Calls" of 10^20 in a pasted nsys table once failed the whole
document at insert ("OverflowError: Python int too large"), losing every other row. Every
parser's records pass through here (ingest.documents.parse_text), so none of them needs
its own guard: the record that does not fit becomes an ingest error naming its line, and
the rest of the document is stored.

The check is a min and a max per field over the new records (C loops, about 10 ns a
record); only a document that has such a count pays for finding which records they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from perfboard.model import Measurement, Milestone, PassApplied, ProfileEvent

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

# The integer fields parsers fill, with the range of the store column each goes to
# (perfboard/migrations); run, line and ordinal are counted by the ingest itself.
FIELDS: dict[type, tuple[tuple[str, tuple[int, int]], ...]] = {
    Measurement: (("samples", INT64), ("warmup", INT64)),
    ProfileEvent: (("calls", INT64), ("depth", INT32)),
    PassApplied: (("order", INT32), ("subgraphs", INT32)),
}
MILESTONE_FIELDS = (("pr_number", INT64),)


def _any_misfit(records: Sequence[Any], fields: tuple[tuple[str, tuple[int, int]], ...]) -> bool:
    """Whether any of `records` has a value out of its field's range."""
    for name, (low, high) in fields:
        values = [v for v in map(attrgetter(name), records) if v is not None]
        if values and (min(values) < low or max(values) > high):
            return True
    return False


def _reason(record: Any, fields: tuple[tuple[str, tuple[int, int]], ...]) -> str:
    for name, (low, high) in fields:
        value = getattr(record, name)
        if value is not None and not low <= value <= high:
            return f"{name} = {value:.4g} is beyond what the store holds ({low:.4g} to {high:.4g})"
    return ""


def out_of_range(records: list[Any], kind: type) -> list[tuple[int, str]]:
    """(index, reason) of each record whose integers the store cannot hold, in order."""
    fields = FIELDS[kind]
    if not records or not _any_misfit(records, fields):
        return []
    return [(i, why) for i, record in enumerate(records) if (why := _reason(record, fields))]


def milestone_out_of_range(milestone: Milestone) -> str:
    """Why a milestone's PR number cannot be stored (its link is then dropped), or ""."""
    why = _reason(milestone, MILESTONE_FIELDS)
    return f"{why}; the milestone is kept without its PR number" if why else ""
