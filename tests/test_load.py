"""The load test's machinery, for real but small: the demo store served by the real server,
3 websocket sessions for 20 s, an ingest every 8 s (scripts/load_test.py runs the full
one: 20 sessions for 5 minutes on the 10 M-measurement store). That every page is run
does not depend on the machine's speed: the sessions' walk and Coverage make it so, which
the tests without a server check with a clock that says the round is over."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from scripts import load_test
from scripts.load_test import (
    PAGES,
    Config,
    Coverage,
    Pools,
    RunState,
    Session,
    parse_args,
    run_load,
    summarise,
)


def test_a_short_load_visits_every_page_without_error_while_ingests_run(
    demo_db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "load.json"
    config = Config(
        clients=3, duration=20, ingest_every=8, db=demo_db, out=out, seed=3, rounds=2, idle=2
    )
    result = run_load(config)

    assert result["errors"]["count"] == 0, result["errors"]
    assert result["errors"]["never_visited"] == []
    assert result["page_runs"] >= len(PAGES)
    for page, figures in result["pages"].items():
        # Every page was opened and drew its title at least, through the real protocol.
        assert figures["runs"] >= 1, f"{page} was never visited"
        assert figures["elements_min"] >= 1, f"{page} drew nothing"
        assert figures["p50"] is not None and figures["p50"] > 0
    assert all(runs >= 1 for runs in result["sessions"]["runs"])

    ingests = result["ingests"]
    assert ingests["count"] >= 1 and ingests["failed"] == 0
    assert all(run["exit_code"] == 0 for run in ingests["runs"])
    # The ingests continued the store's series: new points, no new series.
    store = result["store"]
    assert store["after"]["series"] == store["before"]["series"]
    added = store["after"]["measurements"] - store["before"]["measurements"]
    assert added == ingests["count"] * ingests["records_each"]

    memory = result["memory"]
    assert len(memory["samples"]) >= 3
    assert 0 < memory["min_mb"] <= memory["max_mb"]
    assert memory["per_minute"] and memory["per_minute"][0]["minute"] == 0
    idle = memory["idle_after_rounds"]
    assert [p["after_round"] for p in idle] == [1, 2] and all(p["rss_mb"] > 0 for p in idle)

    # The JSON report holds the documented fields.
    written = json.loads(out.read_text())
    for key in (
        "config",
        "page_runs",
        "errors",
        "page_time_s",
        "pages",
        "sessions",
        "ingests",
        "before_ingest",
        "memory",
        "server_log",
        "store",
    ):
        assert key in written, key
    assert set(written["pages"]) == set(PAGES)
    for key in ("p50", "p95", "max"):
        assert key in written["page_time_s"]
    for key in ("first_mb", "last_mb", "min_mb", "max_mb", "slope_mb_per_min_second_half"):
        assert key in written["memory"]
    for key in ("updating_runs", "not_ready_runs"):
        assert key in written["before_ingest"]


class Offline(Session):
    """A session whose pages answer at once, drawing their title: no server, no waits."""

    async def connect(self) -> None:
        self.ws = object()  # type: ignore[assignment]

    async def close(self) -> None:
        self.ws = None

    async def run_page(self, page: str, query: str, state: RunState) -> None:
        state.title, state.elements, state.status = page, 1, ForwardMsg.FINISHED_SUCCESSFULLY


FIRST = [list(PAGES)[n * len(PAGES) // 3] for n in range(3)]  # of 3 sessions' walks


def offline_round(clients: int, now: float, until: float, cap: float) -> list[Offline]:
    """One round of `clients` offline sessions whose clock always says `now`."""
    coverage = Coverage(list(PAGES), cap)
    sessions = [Offline(i, 0, Pools(), 3, lambda: now, clients, coverage) for i in range(clients)]
    for s in sessions:
        s.arrival = s.think = (0.0, 0.0)

    async def round_() -> None:
        await asyncio.gather(*(s.loop(until) for s in sessions))

    asyncio.run(round_())
    return sessions


def test_every_page_is_run_even_when_the_round_is_over_at_the_first_click() -> None:
    # As on a machine so slow that each session's first page ends the round.
    sessions = offline_round(3, now=50.0, until=10.0, cap=100.0)
    visited = [r.page for s in sessions for r in s.runs]
    assert sorted(visited) == sorted(PAGES)  # each page once: no session ran one twice
    # Each session's first page is its own, spread over the sidebar's order.
    assert [s.runs[0].page for s in sessions] == FIRST == ["Overview", "Pull requests", "Ops"]
    assert all(not r.error for s in sessions for r in s.runs)
    result = summarise(Config(clients=3), 50.0, sessions, [], [])
    assert result["errors"]["count"] == 0 and result["errors"]["never_visited"] == []


def test_pages_not_run_by_the_hard_cap_are_errors_named_in_the_report() -> None:
    sessions = offline_round(3, now=150.0, until=10.0, cap=100.0)
    assert [r.page for s in sessions for r in s.runs] == FIRST  # one page a round at least
    errors = summarise(Config(clients=3), 150.0, sessions, [], [])["errors"]
    missed = [p for p in PAGES if p not in FIRST]
    assert errors["never_visited"] == missed
    assert errors["count"] == len(missed) and errors["by_kind"] == {"never visited": len(missed)}


def test_a_walk_goes_on_from_round_to_round_in_laps_of_every_page() -> None:
    session = Offline(1, 0, Pools(), 3, lambda: 0.0, 3, Coverage(list(PAGES), 1.0))
    walk = [session.next_page() for _ in range(3 * len(PAGES))]
    assert walk[: len(PAGES)] == list(PAGES)[3:] + list(PAGES)[:3]  # from its own page
    for lap in range(1, 3):
        assert sorted(walk[lap * len(PAGES) : (lap + 1) * len(PAGES)]) == sorted(PAGES)


def test_think_is_a_range_of_seconds_a_session_waits_between_its_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_args([]).think == (0.5, 2.0)  # as before --think
    assert parse_args(["--think", "5-15"]).think == (5.0, 15.0)
    for bad in ("15-5", "5", "a-b", "-1-2", "5-inf"):
        with pytest.raises(SystemExit):
            parse_args(["--think", bad])
    clock = [0.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the load clock moves by what was slept
        waits.append(seconds)
        clock[0] += seconds

    monkeypatch.setattr(load_test.asyncio, "sleep", sleep)
    session = Offline(0, 0, Pools(), 3, lambda: clock[0], 1, Coverage(list(PAGES), 0.0), (5, 15))
    asyncio.run(session.loop(until=120.0))
    thinks = waits[1:]  # the first is its arrival
    assert len(session.runs) == len(thinks) >= 120 // 15
    assert all(5 <= w <= 15 for w in thinks) and max(thinks) - min(thinks) > 5


def test_sessions_arrive_spread_over_the_think_range_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each round's first pages come 0 to think's most seconds in, as the sessions are
    spread between rounds; --arrival 0-2 is the stampede of every session at once."""
    assert parse_args([]).arrival is None
    assert parse_args(["--arrival", "0-2"]).arrival == (0.0, 2.0)
    with pytest.raises(SystemExit):
        parse_args(["--arrival", "2-0"])

    def arrivals(arrival: tuple[float, float] | None) -> list[float]:
        first: list[float] = []

        async def sleep(seconds: float) -> None:
            first.append(seconds)
            raise asyncio.CancelledError  # the arrival is all this looks at

        monkeypatch.setattr(load_test.asyncio, "sleep", sleep)
        for number in range(40):
            session = Offline(
                number,
                0,
                Pools(),
                3,
                lambda: 0.0,
                40,
                Coverage(list(PAGES), 0.0),
                (5, 15),
                arrival,
            )
            with pytest.raises(asyncio.CancelledError):
                asyncio.run(session.loop(until=120.0))
        return first

    spread = arrivals(None)
    assert all(0 <= w <= 15 for w in spread) and max(spread) > 10
    assert all(0 <= w <= 2 for w in arrivals((0.0, 2.0)))


def test_the_last_line_is_the_verdict_of_issue_16(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = offline_round(3, now=50.0, until=10.0, cap=100.0)
    for n, run in enumerate(r for s in sessions for r in s.runs):
        run.seconds = 0.1 * (n + 1)  # 0.1 ... 1.1 s over the 11 pages
    result = summarise(Config(clients=3, think=(5.0, 15.0)), 50.0, sessions, [], [])
    result["memory"]["idle_after_rounds"] = []
    monkeypatch.setattr(load_test, "run_load", lambda config: result)
    assert load_test.main(["--think", "5-15", "--duration", "60"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "think 5-15 s" in lines[0]
    assert lines[-1] == "page p50 0.60 s, p95 1.10 s, errors 0"  # nearest rank: 11th of 11
