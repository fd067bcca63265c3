"""What the tests of the tool-output parsers share: a parse split into measurements and
problems (in document order), and the measurements by (metric, stat)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ingest.text import DocText
from perfboard.model import Item, Measurement, Problem


def split(
    parse: Callable[[DocText], Iterable[Item]], doc: DocText
) -> tuple[list[Measurement], list[Problem]]:
    items = list(parse(doc))
    measurements = [i for i in items if isinstance(i, Measurement)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert len(measurements) + len(problems) == len(items)
    assert [i.line for i in items] == sorted(i.line for i in items)  # document order
    return measurements, problems


def by_stat(measurements: list[Measurement]) -> dict[tuple[str, str], float]:
    """{(metric, stat): value}; a second measurement of the same key is a test failure."""
    out: dict[tuple[str, str], float] = {}
    for m in measurements:
        key = (m.metric, str(m.params.get("stat", "")))
        assert key not in out, f"{key} twice"
        out[key] = m.value  # type: ignore[assignment]
    return out
