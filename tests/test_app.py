"""The dashboard's Overview page through Streamlit's AppTest (no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def run_app(monkeypatch: pytest.MonkeyPatch, db: Path) -> AppTest:
    monkeypatch.setenv("PERFBOARD_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    return at


def all_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += (
        [e.label for e in at.expander] + [i.value for i in at.info] + [w.value for w in at.warning]
    )
    return "\n".join(str(p) for p in parts)


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def series_table(at: AppTest) -> pd.DataFrame:
    """Trends' table of the series drawn (a plain table, its values as shown)."""
    return next(t.value for t in at.table if "measured" in t.value.columns)


def chart_rows(chart: object) -> list[dict]:
    """Every row of every dataset of an AppTest chart: Streamlit sends them as Arrow IPC
    streams beside the spec."""
    return [
        row
        for named in chart.proto.datasets  # type: ignore[attr-defined]
        for row in pa.ipc.open_stream(named.data.data).read_all().to_pylist()
    ]


def test_overview_lists_what_the_demo_holds(monkeypatch: pytest.MonkeyPatch, demo_db: Path) -> None:
    at = run_app(monkeypatch, demo_db)
    metrics = {m.label: m.value for m in at.metric}
    conn = duckdb.connect(str(demo_db), read_only=True)
    n_series, n_sources = conn.execute(
        "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM sources)"
    ).fetchone()
    assert metrics["Series"] == f"{n_series:,}"
    assert metrics["Sources"] == f"{n_sources:,}" and n_sources == 31  # 30 documents, 1 simulated

    phases = next(f for f in frames(at) if "disagreements" in f.columns)
    assert phases[["name", "owner", "platform", "baseline", "latest"]].values.tolist() == [
        ["二期优化工作", "NHZlX", "Tesla P4", 10.0, 9.5]
    ]
    assert phases.open[0] == "/phases?phase=1"
    assert "progress" not in phases.columns  # the demo's phase has no target: no empty bar

    prs = next(f for f in frames(at) if "PR" in f.columns and "reduction" in f.columns)
    assert prs.PR[0] == "https://github.com/PaddlePaddle/Paddle/pull/22424"

    headline = next(f for f in frames(at) if "vs last week" in f.columns)
    assert set(headline.project) == {
        "ernie",
        "bert-qat",
        "model-benchmark",
        "op-benchmark",
        # the outputs of today's tools beside them (vLLM and llama-bench, trtexec, a PR's
        # before/after table, the PyTorch profiler's totals)
        "llm-serving",
        "tensorrt",
        "ops",
        "pytorch",
    }
    # The simulated ERNIE lines moved 0.7-1.7 % in their last week, each under twice its
    # noise: said so, not "worse"; the move since their first night is beyond it.
    ernie = headline[headline.project == "ernie"]
    assert ernie["vs last week"].str.endswith("within noise").all(), ernie["vs last week"]
    assert ernie["vs first"].str.contains("better|worse").any()

    latest = next(f for f in frames(at) if "latest" in f.columns and "source_url" in f.columns)
    qa = latest[latest.series.str.startswith("ernie · latency · paddle · Tesla P4 · ")]
    oom = qa[qa.latest == "OOM"]  # batch 200/300 at Seqlen512 ran out of GPU memory
    assert oom.series.tolist() == [
        "ernie · latency · paddle · Tesla P4 · batch_size=200, seq_len=512",
        "ernie · latency · paddle · Tesla P4 · batch_size=300, seq_len=512",
    ]
    # Numeric params in the order of their numbers: batch 2 before 10 before 100.
    batches = [int(s.split("batch_size=")[1].split(",")[0]) for s in qa.series]
    assert batches == sorted(batches) and batches[:3] == [1, 1, 10] and batches[-1] == 300

    errors = next(f for f in frames(at) if "reason" in f.columns)
    assert any("cut" in r for r in errors.reason)


def test_empty_database_shows_how_to_ingest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_app(monkeypatch, path)
    assert "The database is empty" in all_text(at)


def test_missing_database_says_how_to_build_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    at = run_app(monkeypatch, tmp_path / "none.duckdb")
    assert "make demo" in all_text(at)


def run_page(monkeypatch: pytest.MonkeyPatch, db: Path, page: str, **params: str) -> AppTest:
    monkeypatch.setenv("PERFBOARD_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def test_phases_page_shows_the_phase2_milestones_and_their_pr(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/phases.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Baseline"] == "10 ms" and metrics["Latest"] == "9.5 ms"
    assert metrics["Speedup vs baseline"] == "1.053x" and metrics["Target"] == "not set"
    table = next(f for f in frames(at) if "pr_link" in f.columns)
    assert list(table["value"]) == [10.0, 9.5]
    assert list(table["pr_link"].fillna("")) == [
        "",
        "https://github.com/PaddlePaddle/Paddle/pull/22424",
    ]
    assert table["speedup"].round(4).tolist() == [1.0, round(10 / 9.5, 4)]
    # Each row's line opens it in its table (Sources): the phase table's rows 11 and 12.
    conn = duckdb.connect(str(demo_db), read_only=True)
    (source,) = conn.execute("SELECT source_id FROM phases").fetchone()
    conn.close()
    assert list(table["line"]) == [f"/sources?source={source}&line={n}" for n in (11, 12)]
    links = [m.value for m in at.markdown if "Pull requests in this phase" in m.value]
    assert links == [
        "Pull requests in this phase: [#22424](https://github.com/PaddlePaddle/Paddle/pull/22424)"
    ]
    assert len(at.get("vega_lite_chart")) == 2  # the steps and the waterfall
    # Its defaults are not added to the URL: each would be a history entry Back shows
    # nothing for (a link that names them keeps them).
    assert dict(at.query_params) == {}


def test_phases_page_opens_the_view_its_url_names(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/phases.py", phase="1", x="date")
    assert at.radio[0].value == "date"
    at.radio[0].set_value("order").run()
    assert at.query_params["x"] == "order"  # changing the view changes its URL


def test_phases_page_on_an_empty_store_says_how_to_get_a_phase(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, "pages/phases.py")
    assert "No phase tables yet" in all_text(at)


def test_trends_draws_latency_along_batch_size_from_the_qa_tables(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(
        monkeypatch, demo_db, "pages/trends.py", metric="latency", benchmark="ernie", x="batch_size"
    )
    assert at.radio[0].value == "batch_size"
    assert len(at.get("vega_lite_chart")) == 1
    # Seqlen512 batch 200 and 300 ran out of GPU memory: said, not drawn as zero.
    assert "2 points without a value" in all_text(at) and "(oom)" in all_text(at)
    table = series_table(at)
    qa = table[(table["batch size"] != "—") & ~table.series.str.contains("simulated")]
    assert len(qa) == 20 and set(qa["seq len"]) == {"128", "512"}
    # One point each: no noise to measure, said so rather than "noisy" or a blank.
    assert set(qa.noisy) == {"too few points"} and set(qa["noise (cv)"]) == {"—"}
    simulated = table[table.series.str.contains("simulated")]
    assert set(simulated.noisy) == {"no"} and set(simulated["first"]) == {
        r"2020\-01\-06"
    }  # escaped
    assert dict(at.query_params) == {"metric": "latency", "x": "batch_size", "benchmark": "ernie"}
    # The simulated nightly history sits at batch sizes 1 and 32: each line draws its newest
    # value there, one point a batch size, and says the older ones are on the time axis.
    [chart] = at.get("vega_lite_chart")
    drawn = [
        row
        for row in chart_rows(chart)
        if row.get("at") is not None and row.get("value") is not None
    ]
    at_32 = [r for r in drawn if "simulated" in r["series"] and r["at"] == 32]
    assert len(at_32) == 2  # fp32 and int8, seq_len 128
    assert len({(r["series"], r["at"]) for r in drawn}) == len(drawn)
    conn = duckdb.connect(str(demo_db), read_only=True)
    newest = conn.execute(
        "SELECT arg_max(value, measured_at) FROM measurements JOIN series USING (series_id)"
        " WHERE device LIKE '%simulated%' AND params->>'batch_size' = '32' GROUP BY series_id"
    ).fetchall()
    conn.close()
    assert sorted(r["value"] for r in at_32) == pytest.approx(sorted(v for (v,) in newest))
    assert "older measurements are not drawn (x axis time shows them)" in all_text(at)


def test_trends_filters_narrow_the_series_and_the_url(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/trends.py", metric="total_time")
    model = next(m for m in at.multiselect if m.label == "model / op")
    model.set_value(["op/cumsum"]).run()
    table = series_table(at)
    assert set(table.series.str.split(" · ").str[0]) == {"op/cumsum"}
    assert len(table) == 2  # paddle and tensorflow
    assert at.query_params["benchmark"] == "op/cumsum"


def test_trends_on_an_empty_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, "pages/trends.py")
    assert "No series yet" in all_text(at)


def test_sources_shows_the_line_a_number_came_from(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    conn = duckdb.connect(str(demo_db), read_only=True)
    (source_id,) = conn.execute(
        "SELECT source_id FROM sources WHERE uri LIKE '%fc-elementwise-layernorm.md'"
    ).fetchone()
    conn.close()
    at = run_page(monkeypatch, demo_db, "pages/sources.py", source=str(source_id), line="8")
    measured = next(f for f in frames(at) if "raw" in f.columns and "value" in f.columns)
    assert measured[["line", "value"]].values.tolist() == [[8, 6.92849]]
    assert measured.raw[0] == (
        "I0911 06:41:55.494792  7238 ernie_tester.cc:345] Run 5010 samples, average latency:"
        " 6.92849 ms per sample."
    )
    errors = next(f for f in frames(at) if "reason" in f.columns)
    assert errors[["line", "reason", "raw"]].values.tolist() == [
        [20, "profiler row cut short: 1 of 9 fields", "thread0::reshape"]
    ]
    assert dict(at.query_params) == {"source": str(source_id), "line": "8"}


def test_pull_requests_lists_the_phase_prs_and_opens_one(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/pull_requests.py")
    every = next(f for f in frames(at) if "link" in f.columns)
    # The phase table's PR with its measured step first, then the 15 PRs of pulls-known.csv
    # and the 4 whose pages are stored documents (PaddlePaddle/benchmark#222's analysis
    # output, a PR's before/after table, vLLM's and llama.cpp's benchmark runs).
    assert len(every) == 20
    step = every.iloc[0]
    assert (step.link, step.milestone, step.before, step.after) == (
        "https://github.com/PaddlePaddle/Paddle/pull/22424",
        "1",
        10.0,
        9.5,
    )
    known = every.set_index(every.link.str.extract(r"pull/(\d+)$")[0])
    assert known.loc["22486", "title"] == "[Ernie GPU Optim]: Fuse three fc to multihtead matmul"
    assert known.loc["22486", "author"] == "NHZlX" and known.loc["22486", "state"] == "merged"
    one = run_page(monkeypatch, demo_db, "pages/pull_requests.py", pr="22424")
    assert [(m.label, m.value) for m in one.metric] == [("二期优化工作 · milestone 1", "9.5 ms")]
    assert "5.0% faster" in one.metric[0].proto.delta
    assert "not known yet" in all_text(one)  # #22424 is in no facts file
    assert dict(one.query_params) == {"pr": "22424"}
    titled = run_page(monkeypatch, demo_db, "pages/pull_requests.py", pr="22494")
    assert "Embedding\\_eltwise\\_layernorm Fuse" in all_text(titled)


def test_pages_show_the_last_data_while_an_ingest_holds_the_store(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, tmp_path: Path
) -> None:
    import shutil
    import subprocess
    import sys

    store = tmp_path / "busy.duckdb"
    shutil.copy(demo_db, store)
    at = run_app(monkeypatch, store)  # a first run caches the pages' queries
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time\n"
            "c = duckdb.connect(sys.argv[1])\n"
            "c.execute(\"INSERT INTO runs VALUES (999, 0, 'ingest in progress', 1)\")\n"
            "c.execute('CHECKPOINT')\n"
            "print('holding', flush=True)\n"
            "time.sleep(60)\n",
            str(store),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        at.run()  # the data version moved, and the writer holds the file
    finally:
        holder.kill()
        holder.wait()
    assert not at.exception
    assert "Updating: showing the data from before the ingest in progress." in all_text(at)
    phases = next(f for f in frames(at) if "disagreements" in f.columns)
    assert list(phases.name) == ["二期优化工作"]  # the last data, still shown


HOSTILE_PHASE = """# [x](javascript:alert(1)) <img src=x onerror=alert(1)>
- 负责人： ![t](https://tracker.example/p.png)
- GPU平台信息：<script>alert(1)</script>

| 版本 | P4时间 (ms) | 记录时间 | PR | 版本描述 | 加速效果 |
|---|---|---|---|---|---|
| 0 | 10 | 2020-02-04 | - | [y](javascript:alert(2)) | - |
| 1 | 9.5 | 2020-02-05 | #22424 | fused | 5% |
"""


def test_text_from_documents_is_shown_as_text_not_markdown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import ingest

    doc = tmp_path / "hostile.md"
    doc.write_text(HOSTILE_PHASE, encoding="utf-8")
    store = tmp_path / "hostile.duckdb"
    assert ingest("auto", str(doc), "--db", str(store), "--project", "ernie") == 0
    phases = run_page(monkeypatch, store, "pages/phases.py")
    captions = all_text(phases)
    assert r"Owner: \!\[t\]\(https\:" in captions and r"\<script\>" in captions
    heading = phases.subheader[0].value
    assert heading.startswith(r"\[x\]\(javascript\:alert\(1\)\)") and "](" not in heading
    # Milestone descriptions stay in the data grid, which shows text as text.
    table = next(f for f in frames(phases) if "pr_link" in f.columns)
    assert table.description[0] == "[y](javascript:alert(2))"


def test_a_phase_with_a_target_shows_it_and_the_distance_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import SAMPLES, ingest

    doc = tmp_path / "phase3.md"
    doc.write_text(
        (SAMPLES / "benchmark-165_2020-02-04_xreki_phase2-table.md")
        .read_text(encoding="utf-8")
        .replace("- 软件信息：", "- 目标：8ms\n- 软件信息："),
        encoding="utf-8",
    )
    store = tmp_path / "target.duckdb"
    assert ingest("auto", str(doc), "--db", str(store)) == 0
    at = run_page(monkeypatch, store, "pages/phases.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Target"] == "8 ms"
    assert "1.5 ms to go" in at.metric[3].proto.delta


def test_phases_of_one_project_share_a_time_axis(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import SAMPLES, ingest

    original = (SAMPLES / "benchmark-165_2020-02-04_xreki_phase2-table.md").read_text(
        encoding="utf-8"
    )
    (tmp_path / "phase2.md").write_text(original, encoding="utf-8")
    (tmp_path / "phase3.md").write_text(
        original.replace("二期优化工作", "三期优化工作").replace("2020-02-04", "2020-03-10"),
        encoding="utf-8",
    )
    store = tmp_path / "two.duckdb"
    assert ingest("auto", str(tmp_path), "--db", str(store), "--project", "ernie") == 0
    at = run_page(monkeypatch, store, "pages/phases.py")
    assert [e.label for e in at.expander] == ["Every phase of ernie on one time axis"]
    assert len(at.get("vega_lite_chart")) == 3  # steps, waterfall, and the shared axis


def test_a_new_ingest_shows_on_the_next_run_without_a_restart(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.conftest import ingest, sample_path

    store = tmp_path / "live.duckdb"
    assert (
        ingest(
            "auto",
            str(sample_path("paddle-21228_2019-11-19_sand3r-_qat-latency.md")),
            "--db",
            str(store),
            "--project",
            "bert-qat",
        )
        == 0
    )
    at = run_app(monkeypatch, store)
    assert {m.label: m.value for m in at.metric}["Phases"] == "0"
    doc = sample_path("benchmark-165_2020-02-04_xreki_phase2-table.md")
    assert ingest("auto", str(doc), "--db", str(store), "--project", "ernie") == 0
    at.run()  # same server, same session: the data version moved, the caches follow
    assert {m.label: m.value for m in at.metric}["Phases"] == "1"
    phases = next(f for f in frames(at) if "disagreements" in f.columns)
    assert list(phases.name) == ["二期优化工作"]


@pytest.mark.parametrize(
    ("page", "says"),
    [
        ("pages/pull_requests.py", "No PR is referenced yet"),
        ("pages/sources.py", "No documents ingested yet"),
    ],
)
def test_other_pages_on_an_empty_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, page: str, says: str
) -> None:
    from perfboard import db

    path = tmp_path / "empty.duckdb"
    db.connect(path).close()
    at = run_page(monkeypatch, path, page)
    assert says in all_text(at)


def test_trends_points_at_a_prs_merge_commit_carry_that_pr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ingest.results import write_records
    from perfboard import queries
    from tests.conftest import ingest
    from tests.test_results import RECORD

    merge = "9f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c"
    runs = tmp_path / "nightly.jsonl"
    write_records(
        [
            {**RECORD, "version": "a5a8d14", "time": "2020-02-03T00:00:00Z", "value": 10.0},
            {**RECORD, "version": merge[:10], "time": "2020-02-08T00:00:00Z", "value": 9.5},
        ],
        runs,
    )
    store = tmp_path / "prs.duckdb"
    assert ingest("results", str(runs), "--db", str(store)) == 0
    conn = duckdb.connect(str(store))
    conn.execute(
        "INSERT INTO pull_requests (repo, number, title, merge_commit, origin, synced_at)"
        " VALUES ('PaddlePaddle/Paddle', 22486, 'Fuse three fc to multihead matmul', ?,"
        " 'github', now())",
        [merge],
    )
    points = queries.series_points(conn, (1,))
    conn.close()
    rows = points[["version", "value", "pr_number", "pr_title"]].astype(object)
    assert rows.where(rows.notna(), None).values.tolist() == [
        ["a5a8d14", 10.0, None, None],
        [merge[:10], 9.5, 22486, "Fuse three fc to multihead matmul"],
    ]
    at = run_page(monkeypatch, store, "pages/trends.py", metric="latency")
    assert len(at.get("vega_lite_chart")) == 1
    pr = run_page(monkeypatch, store, "pages/pull_requests.py", pr="22486")
    measured = next(f for f in frames(pr) if "source" in f.columns)
    assert measured[["version", "value"]].values.tolist() == [[merge[:10], 9.5]]


def test_a_store_from_an_older_perfboard_gets_a_clear_message_then_migrates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ingest.cli import main
    from perfboard import db

    old = tmp_path / "old.duckdb"
    conn = duckdb.connect(str(old))
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL)"
    )
    conn.execute(db.migrations()[0].path.read_text(encoding="utf-8"))
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', now())")
    conn.close()  # a store as the first release left it: no pull_requests table
    at = run_page(monkeypatch, old, "pages/pull_requests.py")
    assert any("python -m ingest migrate" in e.value for e in at.error)
    assert main(["migrate", "--db", str(old)]) == 0
    assert f"schema version {len(db.migrations())}" in capsys.readouterr().err
    at = run_page(monkeypatch, old, "pages/pull_requests.py")
    assert not at.error


def test_a_pr_view_sets_the_claimed_effect_beside_the_measured_one(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/pull_requests.py", pr="22494")
    claimed = next(f for f in frames(at) if "percent" in f.columns)
    assert claimed[["before", "after"]].values.tolist() == [[9.5, 8.4], [8.4, 7.8]]
    assert claimed.source.iloc[0] == "data/samples/paddle-pr-22494_2020-02-07_nhzlx_description.md"
    # Each claim opens its line, the time it claims to reach marked.
    conn = duckdb.connect(str(demo_db), read_only=True)
    (source,) = conn.execute(
        "SELECT source_id FROM sources WHERE uri = ?", [claimed.source.iloc[0]]
    ).fetchone()
    conn.close()
    assert claimed.line.tolist() == [
        f"/sources?source={source}&line=4&value=8.4",
        f"/sources?source={source}&line=15&value=7.8",
    ]
    measured_step = run_page(monkeypatch, demo_db, "pages/pull_requests.py", pr="22424")
    assert "No claim read" in all_text(measured_step)  # #22424's own text is not in the store


def test_a_pr_view_shows_the_before_after_table_of_its_description(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    """PR #25523's description is a before/after table: what it measured per variant, and
    its speed-up column as what it claims (never as a latency)."""
    at = run_page(monkeypatch, demo_db, "pages/pull_requests.py", pr="25523")
    measured = next(f for f in frames(at) if "variant" in f.columns)
    assert measured[["variant", "value", "unit"]].values.tolist()[:2] == [
        ["before", 0.012141, "ms"],
        ["after", 0.005447, "ms"],
    ]
    assert "input_shape=[16L, 800L]" in measured.series.iloc[0]
    claimed = next(f for f in frames(at) if "speedup" in f.columns)
    assert claimed[["before", "after", "speedup"]].values.tolist() == [
        [0.012141, 0.005447, 2.2],
        [0.276627, 0.198814, 1.4],
        [0.012747, 0.006055, 2.1],
    ]
    # its title and author from the document's metadata (no sync knows this PR)
    assert "slice\\_grad FP16\\: before / after table · zhangting2020" in all_text(at)


def test_report_and_trends_keep_every_pick_in_the_url(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    """Every page keeps its view in the URL one way (ui.url_state and its kin, to_url): a
    link opens the view it names, each pick is written back, a default is no parameter."""
    at = run_page(monkeypatch, demo_db, "pages/report.py", week="2020-W06", project="ernie")
    assert [s.value for s in at.selectbox] == ["2020-W06", "ernie"]
    at.selectbox[1].set_value("").run()  # every project
    assert dict(at.query_params) == {"week": "2020-W06"}
    at.selectbox[1].set_value("bert-qat").run()
    assert dict(at.query_params) == {"week": "2020-W06", "project": "bert-qat"}

    trends = run_page(
        monkeypatch, demo_db, "pages/trends.py", metric="latency", benchmark="ernie", log="1"
    )
    assert [t.value for t in trends.toggle] == [True]
    next(m for m in trends.multiselect if m.label == "seq len").set_value(["512"]).run()
    assert dict(trends.query_params) == {  # x is its default, time: not added
        "metric": "latency",
        "log": "1",
        "benchmark": "ernie",
        "seq_len": "512",
    }
    trends.toggle[0].set_value(False).run()
    next(m for m in trends.multiselect if m.label == "model / op").set_value([]).run()
    assert dict(trends.query_params) == {"metric": "latency", "seq_len": "512"}


def test_a_line_typed_on_the_sources_page_goes_in_the_url(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/sources.py")
    assert at.number_input[0].value is None  # every line
    assert set(at.query_params) == {"source"}
    # It opens on the demo's nightly history, a result file: no column of empty texts.
    assert "Parser: results · kind: results" in all_text(at)
    measured = next(f for f in frames(at) if "value" in f.columns and "line" in f.columns)
    assert "raw" not in measured.columns and len(measured) > 300
    assert "A result file: its records are read field by field" in all_text(at)
    at.number_input[0].set_value(8).run()
    assert at.query_params["line"] == "8"
    at.number_input[0].set_value(None).run()
    assert "line" not in at.query_params


def test_a_deep_link_to_a_phase_the_store_lacks_says_so(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/phases.py", phase="99")
    [warning] = [w.value for w in at.warning]
    assert warning.startswith("No phase 99 here: showing 二期优化工作")
    assert at.query_params["phase"] == "1"  # the view shown instead, linkable
    at.radio[0].set_value("date").run()
    assert not at.warning  # said once, on arrival


def test_trends_opens_on_one_model_and_its_longest_histories(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    at = run_page(monkeypatch, demo_db, "pages/trends.py")
    model = next(m for m in at.multiselect if m.label == "model / op")
    assert model.value == ["ernie"]  # not BERT and ERNIE on one axis
    lines = next(m for m in at.multiselect if m.label == "Lines drawn")
    table = series_table(at)
    assert len(lines.value) == 4 and len(table) == 4
    assert all("simulated" in s for s in table.series) and set(table.measured) == {"84"}
    assert "lines" not in at.query_params  # the default lines are no parameter
    lines.set_value(lines.value[:1]).run()
    assert at.query_params["lines"] == str(lines.value[0])
    assert len(series_table(at)) == 1
    # Another metric: its own most measured model.
    next(s for s in at.selectbox if s.label == "Metric").set_value("total_time").run()
    model = next(m for m in at.multiselect if m.label == "model / op")
    assert model.value == ["op/abs"] and "lines" not in at.query_params


def test_a_url_that_drops_a_pick_shows_the_view_without_it(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path
) -> None:
    """Back, to the entry from before a pick: the URL no longer names it, and the widget
    goes back to its default (it used to keep the pick and write it back: Back did
    nothing visible)."""
    at = run_page(monkeypatch, demo_db, "pages/trends.py", metric="latency", benchmark="ernie")
    next(m for m in at.multiselect if m.label == "seq len").set_value(["512"]).run()
    assert at.query_params["seq_len"] == "512"
    del at.query_params["seq_len"]  # what Back leaves in the address bar
    at.run()
    assert next(m for m in at.multiselect if m.label == "seq len").value == []
    assert "seq_len" not in at.query_params


# A column header spelled as the frame's column ("seen_at", "ok_points"): a name for
# the code, not for whoever reads the table.
SNAKE_CASE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("overview", {}),
        ("phases", {}),
        ("trends", {}),
        ("pull_requests", {}),
        ("compare", {}),
        ("compare", {"part": "Paired variants"}),
        ("explain", {}),
        ("profiles", {}),
        ("ops", {}),
        ("alerts", {}),
        ("sources", {}),
    ],
)
def test_no_table_heads_a_column_with_its_code_name(
    monkeypatch: pytest.MonkeyPatch, demo_db: Path, page: str, params: dict[str, str]
) -> None:
    at = run_page(monkeypatch, demo_db, f"pages/{page}.py", **params)
    assert at.dataframe or at.table, page  # each of these views shows a table on the demo
    heads = [str(c) for table in at.table for c in table.value.columns]
    for table in at.dataframe:
        config = json.loads(table.proto.columns or "{}")
        shown = list(table.proto.column_order) or [str(c) for c in table.value.columns]
        heads += [
            config.get(name, {}).get("label") or name
            for name in shown
            if not config.get(name, {}).get("hidden")
        ]
    assert heads and not [h for h in heads if SNAKE_CASE.match(h)], heads
