"""Explain a change: the ERNIE fc+elementwise_add+layer_norm fusion, seen from its alert.

Nightly ERNIE latency steps from 7.43 to 6.93 ms on 2019-09-11; the night before, PR 19776 ("Add a
pass to fuse fc+elementwise_add+layernorm") and an unrelated PR were merged; a profile
before (a constructed fixture) and the real 2019-09-11 profile after
(data/samples/benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md) are on either
side. The explanation must put PR 19776 first, with the fused op and the pass as its
evidence, then the ops and the pass.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from perfboard import alerts, db, explain, profiles, queries
from tests.conftest import ROOT, ingest
from tests.test_alerts import nightly
from tests.test_app import run_page

BEFORE = ROOT / "tests" / "fixtures" / "ernie-before-fc-fusion.md"
AFTER = ROOT / "data" / "samples" / "benchmark-165_2019-09-11_xreki_fc-elementwise-layernorm.md"


@pytest.fixture
def fusion(tmp_path: Path) -> Path:
    store = tmp_path / "fusion.duckdb"
    runs = nightly(
        tmp_path / "ernie.jsonl",
        batch_sizes=(1,),
        levels=[(7.43, 20), (6.93, 20)],
        start=datetime(2019, 8, 22),  # night 20, the first at 6.93 ms, is 2019-09-11
    )
    assert ingest("results", str(runs), "--db", str(store)) == 0
    for path, day in ((BEFORE, "2019-08-20"), (AFTER, "2019-09-11")):
        args = ["--date", day, "--project", "ernie", "--benchmark", "ernie", "--db", str(store)]
        assert ingest("auto", str(path), *args) == 0
    conn = db.connect(store)
    conn.execute(
        "INSERT INTO pull_requests (repo, number, title, author, state, merged_at, origin,"
        " synced_at) VALUES"
        " ('PaddlePaddle/Paddle', 19776, 'Add a pass to fuse fc+elementwise_add+layernorm',"
        "  'Xreki', 'merged', '2019-09-10 12:00', 'test', now()),"
        " ('PaddlePaddle/Paddle', 19801, 'Fix a typo in the README', 'someone', 'merged',"
        "  '2019-09-10 13:00', 'test', now())"
    )
    alerts.detect_store(conn)
    conn.close()
    return store


def test_words_link_a_pr_title_to_the_op_and_pass_it_made() -> None:
    title = explain.words("Add a pass to fuse fc+elementwise_add+layernorm")
    assert title == {"elementwise", "layernorm"}
    assert explain.words("fused_fc_elementwise_layernorm") & title
    assert explain.words("fc_elementwise_layernorm_fuse_pass") & title
    assert not explain.words("transpose2") & title


def test_the_runs_either_side_of_the_change_are_picked(fusion: Path) -> None:
    conn = db.connect(fusion, read_only=True)
    runs = queries.profile_runs(conn)
    a, b = explain.pick_runs(runs, "ernie", "ernie", datetime(2019, 9, 10), datetime(2019, 9, 11))
    uris = dict(zip(zip(runs.source_id, runs.run, strict=True), runs.uri, strict=True))
    assert uris[a.key].endswith("ernie-before-fc-fusion.md") and a.note == "2019-08-20"
    assert uris[b.key].endswith("2019-09-11_xreki_fc-elementwise-layernorm.md")
    none, _ = explain.pick_runs(runs, "bert", None, datetime(2019, 9, 10), None)
    assert none.key is None and "no dated profile" in none.note
    conn.close()


def test_an_undated_profile_is_named_but_never_placed_on_a_side() -> None:
    """The demo's ERNIE profile report (benchmark#165) has no date: it is no side's pick,
    and the side without one says it is there to pick by hand."""
    runs = pd.DataFrame(
        {
            "source_id": [11, 14],
            "run": [0, 0],
            "project": ["ernie", "ernie"],
            "benchmark": ["ernie", None],
            "date": [pd.Timestamp("2019-09-11"), pd.NaT],
        }
    )
    a, b = explain.pick_runs(runs, "ernie", "ernie", datetime(2020, 2, 3), datetime(2020, 2, 4))
    assert (a.key, a.note) == ((11, 0), "2019-09-11")
    assert b.key is None
    assert b.note == (
        "no dated profile of this project on that side; it has an undated one, to pick by "
        "hand if it ran on that side"
    )


def test_the_fusion_pr_comes_first_with_its_evidence(fusion: Path) -> None:
    conn = db.connect(fusion, read_only=True)
    [key] = list(queries.alerts(conn).alert_key)
    suspects = queries.alert_suspects(conn, key)
    runs = queries.profile_runs(conn)
    changes = queries.alert_changes(conn, key)
    a, b = explain.pick_runs(
        runs, "ernie", "ernie", changes.before_at.iloc[0], changes.after_at.iloc[0]
    )
    events_a, events_b = (queries.profile_events(conn, *k) for k in (a.key, b.key))
    op_diff = profiles.diff(events_a, events_b)
    passes_diff = profiles.passes_diff(
        queries.profile_passes(conn, *a.key), queries.profile_passes(conn, *b.key)
    )
    total = profiles.block_totals(events_a)[profiles.main_block(events_a)].total
    conn.close()
    ranked = explain.reasons(suspects, op_diff, passes_diff, total)
    assert list(ranked.kind) == ["PR", "op", "op", "op", "op", "pass", "pass", "PR"]
    first = ranked.iloc[0]
    assert (first.pr_number, first.what) == (
        19776,
        "Add a pass to fuse fc+elementwise_add+layernorm",
    )
    # The title's distinctive words (elementwise, layernorm) name what moved in the runs.
    assert first.evidence == (
        "names fused_fc_elementwise_layernorm, elementwise_add, fc_elementwise_layernorm_fuse_pass"
    )
    ops = ranked[ranked.kind == "op"]
    assert ops.what.iloc[0] == "fused_fc_elementwise_layernorm appeared"
    assert ops.how_much.iloc[0] == "17,700 ms in run B, 23% of run A"
    assert ops.how_much.iloc[1] == "31,540 ms -> 24,270 ms (-7,270 ms, 9% of run A)"
    assert set(ops.what) >= {
        "fc got faster",
        "layer_norm disappeared",
        "elementwise_add disappeared",
    }
    passes = ranked[ranked.kind == "pass"]
    assert "fc_elementwise_layernorm_fuse_pass started firing" in set(passes.what)
    assert "24 subgraphs" in set(passes.how_much)
    assert ranked.iloc[-1].pr_number == 19801  # landed in between, names nothing that moved
    assert not math.isnan(total)


def test_without_profiles_only_the_prs_are_listed() -> None:
    suspects = pd.DataFrame(
        {
            "repo": ["PaddlePaddle/Paddle"],
            "pr_number": [22486],
            "title": ["[Ernie GPU Optim]: Fuse three fc to multihtead matmul"],
            "landed_at": [pd.Timestamp("2020-02-07")],
        }
    )
    ranked = explain.reasons(suspects)
    assert list(ranked.kind) == ["PR"] and ranked.how_much.iloc[0] == "landed 2020-02-07"
    assert explain.reasons(suspects.iloc[:0]).empty


def test_explain_page_from_an_alert(fusion: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = db.connect(fusion, read_only=True)
    [key] = list(queries.alerts(conn).alert_key)
    conn.close()
    at = run_page(monkeypatch, fusion, "pages/explain.py", alert=key)
    [table] = [d.value for d in at.dataframe]
    # The PR beside its kind, in sight: after the two wide columns it was scrolled away.
    assert list(table.columns) == ["rank", "kind", "link", "what", "how_much", "evidence"]
    assert table["what"].iloc[0] == "Add a pass to fuse fc+elementwise_add+layernorm"
    assert table["link"].iloc[0] == "https://github.com/PaddlePaddle/Paddle/pull/19776"
    assert "fused_fc_elementwise_layernorm appeared" in set(table["what"])
    assert {m.label: m.value for m in at.metric}["Change"].startswith("-6.")


def test_explain_page_on_two_points_of_a_series_without_profiles(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/explain.py")
    assert not at.exception
    texts = [i.value for i in at.info]
    assert any("Nothing to go on" in t or "No series has two" in t for t in texts) or at.dataframe


def test_explain_page_opens_the_runs_its_link_names(
    fusion: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = db.connect(fusion, read_only=True)
    [key] = list(queries.alerts(conn).alert_key)
    conn.close()
    picked = run_page(monkeypatch, fusion, "pages/explain.py", alert=key)
    runs = {s.label: s.value for s in picked.selectbox if s.label.startswith("Profile run")}
    before, after = runs["Profile run A (before)"], runs["Profile run B (after)"]
    assert before and after and before != after  # the nearest profile on either side
    assert dict(picked.query_params) == {"alert": key, "run": before, "vs": after}
    # A link that names the runs opens them (here the other way round), and says so.
    swapped = run_page(monkeypatch, fusion, "pages/explain.py", alert=key, run=after, vs=before)
    runs = {s.label: s.value for s in swapped.selectbox if s.label.startswith("Profile run")}
    assert (runs["Profile run A (before)"], runs["Profile run B (after)"]) == (after, before)
    assert dict(swapped.query_params) == {"alert": key, "run": after, "vs": before}
