"""A store whose every text field is an attack, built through the real ingest.

Shared by tests/test_security.py (AppTest, reports, SQL, token) and
tests/test_browser_security.py (Chromium). Nothing is inserted behind the ingest's back:
result files go through `ingest results`, documents through `ingest auto` with a
manifest, PRs through `ingest github-prs --all` against the loopback GitHub
(tests/github_fake.py), PR facts through `ingest pulls`, and triage through
perfboard.alerts.set_triage, as the Alerts page saves it.

What carries the attacks (each one a place a page or a report shows text):

- series: project, benchmark, framework, device, params (keys and values), unit,
  versions; a record that breaks the format (its raw line is an ingest error);
- op benchmark results: op name, competitor framework, device, argument list;
- documents: file names, manifest titles, authors and urls (javascript:, data:, a quote
  breakout), phase name, owner, platform, software, milestone descriptions and PR cells,
  log lines around the numbers, table cells, profiler event names, IR pass names, and
  lines that cannot be read (shown raw on Sources);
- GitHub: PR titles, authors, labels, bodies (read as documents for their claims) and
  html_url (javascript:, data:, a breakout, another host);
- known PR facts: titles and notes; alert triage: note and who.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ingest.cli import main as ingest_main
from ingest.results import write_records
from perfboard import alerts, db
from tests.conftest import ingest
from tests.github_fake import FakeGitHub

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
JS_LINK = "[x](javascript:alert(1))"
DATA_URL = "data:text/html,<script>alert(1)</script>"
SVG = "<svg onload=alert(1)>"
BOLD = "**bold**"
HEADING = "# heading"
IMAGE = "![img](https://evil.example/p.png)"
BREAKOUT = '"><script>alert(1)</script>'
HTML_LINK = '<a href="javascript:alert(1)">a</a>'
AUTOLINK = "<javascript:alert(1)>"
ATTACKS = (SCRIPT, IMG, JS_LINK, DATA_URL, SVG, BOLD, HEADING, IMAGE, BREAKOUT, HTML_LINK, AUTOLINK)
# Every attack in one string, for the fields that hold a sentence.
EVERY = " ".join(ATTACKS)
# Attacks without a space, for the formats whose fields end at whitespace (profiler rows,
# file names): HTML needs no space between a tag and its attributes.
TIGHT = (
    SCRIPT,
    "<img/src=x/onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    JS_LINK,
    "![i](https://evil.example/p.png)",
    BREAKOUT,
    BOLD,
)
EVIL_HOST = "evil.example"  # no page may ask this host for anything

# One project and one model for everything, so that every view (Explain's profile runs,
# the report's project, Phases' shared axis) meets the same hostile names.
PROJECT = f"ernie {SCRIPT}"
BENCHMARK = f"bert {IMG}"
OP = f"op/{SCRIPT} {JS_LINK}"
COMPETITOR = IMAGE  # an op benchmark framework named like an image
REPO = "PaddlePaddle/Paddle"
TOKEN = "ghp_" + "hostileTestToken0123456789abcdefghij"  # 40 characters, like GitHub's
WEEK = "2020-W06"  # 2020-02-03 .. 2020-02-09: the phase, the PRs and the change fall in it
START = datetime(2020, 1, 20, tzinfo=UTC)
CHANGE = datetime(2020, 2, 5, tzinfo=UTC)  # the series step down here


def version(i: int) -> str:
    """Distinct versions, each carrying an attack (alerts, Compare and Explain show them)."""
    return f"v{i:02d} {ATTACKS[i % len(ATTACKS)]}"


def _record(**fields: object) -> dict[str, object]:
    return {
        "schema": "perfboard.result/1",
        "project": PROJECT,
        "benchmark": BENCHMARK,
        "task": "inference",
        "metric": "latency",
        "unit": "ms",
        "direction": "lower",
        "framework": "paddle",
        "device": f"Tesla P4 {JS_LINK}",
        "params": {"batch_size": 1, "precision": "fp32", SVG: BOLD, "note": IMAGE},
        "testbed": {"cuda": SCRIPT},
        "samples": 100,
        "warmup": 1,
        "stats": {"comment": EVERY},
        "run": 0,
        **fields,
    }


def result_records() -> list[dict[str, object]]:
    """Three series of one model that step down on CHANGE (fp32 Paddle, int8 Paddle, and a
    hostile framework: precision and framework pairs for Compare), and op results."""
    records: list[dict[str, object]] = []
    for i in range(28):
        at = START + timedelta(days=i)
        wobble = 0.05 * ((i * 7) % 5 - 2)  # noise, so the detector has a level to judge by
        level = 10.0 if at < CHANGE else 8.0
        common = {"version": version(i), "time": at.isoformat().replace("+00:00", "Z")}
        records.append(_record(value=level + wobble, status="ok", **common))
        records.append(
            _record(
                value=0.6 * level + wobble,
                status="ok",
                params={"batch_size": 1, "precision": "int8", SVG: BOLD, "note": IMAGE},
                **common,
            )
        )
        records.append(_record(value=level * 0.5 + wobble, status="ok", framework=IMG, **common))
        records.append(  # a unit that is an attack (axis titles, values, the report)
            _record(
                metric="throughput",
                unit=f"samples/s {IMG}",
                direction="higher",
                value=100 + wobble,
                status="ok",
                **common,
            )
        )
    # A point that only holds a status, and one that breaks the format (an ingest error
    # whose raw line, attacks and all, is shown on Sources and in the report).
    records.append(
        _record(value=None, status="oom", version=version(40), time="2020-02-06T00:00:00Z")
    )
    records.append(_record(value=None, status="ok", version=EVERY, time="2020-02-06T00:00:00Z"))
    for n, commit in enumerate(("a1b2c3d4e5", "b2c3d4e5f6", "c3d4e5f6a7")):
        at = f"2020-02-0{4 + n}T00:00:00Z"
        for framework, value in (("paddle", 2.0 + n), ("tensorflow", 1.0), (COMPETITOR, 1.5)):
            for metric, scale in (("total_time", 1.0), ("gpu_time", 0.8)):
                records.append(
                    _record(
                        project="op-benchmark",
                        benchmark=OP,
                        task="op-forward",
                        metric=metric,
                        framework=framework,
                        device=f"V100 {SVG}",
                        params={"config_id": 0, "parameters": f"x: {IMG} {BREAKOUT}"},
                        version=commit,
                        time=at,
                        value=value * scale,
                        status="ok",
                    )
                )
    return records


PHASE = f"""# 二期 {EVERY}
- 负责人： {IMAGE} {BREAKOUT}
- GPU平台信息：Tesla P4 {SCRIPT} {SVG}
- 目标：7ms
- 软件信息：{JS_LINK} {HEADING}

| 版本 | P4时间 (ms) | 记录时间 | PR | 版本描述 | 加速效果 |
|---|---|---|---|---|---|
| 0 | 10 | 2020-02-03 | - | baseline {EVERY} | - |
| 1 | 9.5 | 2020-02-04 | #22424 | {EVERY} | 5% |
| 2 | 8.4 | 2020-02-05 | https://github.com/PaddlePaddle/Paddle/pull/22486 | {EVERY} | {SCRIPT} |
| 3 | 7.8 | 2020-02-06 | {JS_LINK} | {EVERY} | 7% |
| 4 | 7.5 | 2020-02-07 | {DATA_URL} | {EVERY} | 4% |
| 5 | 7.2 | 2020-02-08 | https://github.com/PaddlePaddle/Paddle/pull/22494 | {EVERY} | 4% |
"""


def profile_report(scale: float) -> str:
    """A Paddle profiler report whose event names are attacks (no spaces in a name), an
    IR pass log with attacks for pass names, and a row cut short (an ingest error)."""
    rows = [
        (f"thread0::{name}", 1000 * (i + 1), 100.0 * scale / (i + 1))
        for i, name in enumerate(TIGHT)
    ]
    total = sum(t for _, _, t in rows)
    lines = [
        f"{EVERY}",
        "```",
        "--- Running IR pass [fc_fuse_pass]",
        "---  detected 3 subgraphs",
        f"--- Running IR pass [{TIGHT[0]}]",
        "---  detected 2 subgraphs",
        f"--- Running IR pass [{TIGHT[3]}]",
        "```",
        "",
        "```",
        "------------------------->     Profiling Report     <-------------------------",
        "",
        "Place: All",
        "Time unit: ms",
        "Sorted by total time in descending order in the same thread",
        "",
        "Event                                      Calls       Total       CPU Time (Ratio)"
        "        GPU Time (Ratio)        Min.        Max.        Ave.        Ratio.",
    ]
    for name, calls, t in rows:
        cpu, gpu = t * 0.4, t * 0.6
        lines.append(
            f"{name:<42} {calls:<11} {t:<11.6g} {cpu:.6f} ({0.4:.6f}) {gpu:.6f} ({0.6:.6f})"
            f"  {t / calls:.6g}  {t / calls * 3:.6g}  {t / calls * 2:.6g}  {t / total:.6g}"
        )
    lines += [f"thread0::{SCRIPT}", "```", ""]
    return "\n".join(lines)


GLOG = "I0204 06:41:55.494792  7238 ernie_tester.cc:345]"
LOG = f"""{EVERY}

```
{GLOG} Run 5010 samples, average latency: 6.92849 ms per sample.
{SCRIPT} {IMG}
{GLOG} Run 5009 samples, average latency [exclude 1 warmup steps]: 6.54723 ms per sample. {JS_LINK}
```
"""

TABLE = f"""## {EVERY}

| model | batch_size | latency (ms) |
|---|---|---|
| ernie {IMG} | 1 | 8.6 |
| ernie {JS_LINK} | 10 | 6.3 |
| ernie {IMAGE} | 20 | NaN {BREAKOUT} |
"""


def documents(folder: Path) -> Path:
    """The documents and their manifest: every url, author and title an attack."""
    folder.mkdir(parents=True, exist_ok=True)
    docs = {
        "phase.md": (PHASE, "javascript:alert(1)", "2020-02-03"),
        f"{IMG}.md": (LOG, DATA_URL, "2020-02-04"),
        f"{JS_LINK}.md": (TABLE, f"https://github.com/x{BREAKOUT}", "2020-02-04"),
        "profile-before.md": (profile_report(1.0), "https://evil.example/before", "2020-02-03"),
        "profile-after.md": (profile_report(0.7), f"javascript:{SCRIPT}", "2020-02-07"),
    }
    with open(folder / "perfboard-manifest.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file", "project", "benchmark", "url", "author", "date", "title"])
        for name, (text, url, day) in docs.items():
            (folder / name).write_text(text, encoding="utf-8")
            writer.writerow([name, PROJECT, BENCHMARK, url, f"{IMG} {BOLD}", day, EVERY])
    return folder


def pulls_csv(path: Path) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["repo", "number", "title", "author", "state", "created_date", "note"])
        writer.writerow([REPO, 19776, EVERY, IMG, "merged", "2020-02-04", EVERY])
        writer.writerow([REPO, 22424, EVERY, SCRIPT, "merged", "2020-02-04", EVERY])
    return path


def add_pulls(fake: FakeGitHub) -> None:
    """PRs merged in WEEK, each field an attack, html_url included."""
    urls = {
        22424: "javascript:alert(1)",
        22486: DATA_URL,
        22494: f"https://github.com/{REPO}/pull/22494{BREAKOUT}",
        3: f"https://{EVIL_HOST}/pull/3",
    }
    for day, (number, url) in enumerate(urls.items(), start=3):
        fake.add_pull(
            REPO,
            number,
            title=f"{EVERY} fuse fc",
            user=f"{IMG}{BOLD}",
            labels=[SCRIPT, JS_LINK, IMAGE, DATA_URL],
            body=f"#{number} {EVERY}\n\nThe ernie model is improved from 10ms to 9.5ms. {IMAGE}\n"
            f"{HTML_LINK} (8.4ms -> 7.8ms)",
            html_url=url,
            created_at=datetime(2020, 2, day, tzinfo=UTC),
            merged_at=datetime(2020, 2, day, 12, tzinfo=UTC),
        )


@contextmanager
def token_in_env(token: str) -> Iterator[None]:
    """GITHUB_TOKEN set for the ingest's GitHub client, and put back after."""
    before = os.environ.get("GITHUB_TOKEN")
    os.environ["GITHUB_TOKEN"] = token
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("GITHUB_TOKEN", None)
        else:
            os.environ["GITHUB_TOKEN"] = before


def build(folder: Path, token: str = TOKEN) -> Path:
    """The hostile store in `folder` (created): hostile.duckdb, through the real ingest."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "hostile.duckdb"
    docs = documents(folder / "docs")
    assert ingest("auto", str(docs), "--db", str(store)) == 0
    results = folder / "results.jsonl"
    write_records(result_records(), results)
    assert ingest("results", str(results), "--db", str(store)) == 0
    with FakeGitHub(token=token) as fake, token_in_env(token):
        add_pulls(fake)
        status = ingest_main(
            ["github-prs", "--repo", REPO, "--all", "--api-url", fake.base_url, "--db", str(store)]
        )
        assert status == 0 and not fake.errors, fake.errors
    assert ingest("pulls", str(pulls_csv(folder / "pulls.csv")), "--db", str(store)) == 0
    conn = db.connect(store)
    try:
        keys = [
            k for (k,) in conn.execute("SELECT DISTINCT alert_key FROM change_points").fetchall()
        ]
        for key in keys:
            alerts.set_triage(conn, key, "acknowledged", EVERY, f"{IMG} {BOLD}")
    finally:
        conn.close()
    return store


# The page files of app.py's navigation, by the url_path each is served under.
PAGES = {
    "": "pages/overview.py",
    "phases": "pages/phases.py",
    "trends": "pages/trends.py",
    "prs": "pages/pull_requests.py",
    "compare": "pages/compare.py",
    "explain": "pages/explain.py",
    "profiles": "pages/profiles.py",
    "ops": "pages/ops.py",
    "alerts": "pages/alerts.py",
    "report": "pages/report.py",
    "sources": "pages/sources.py",
}


def views(store: Path) -> list[tuple[str, dict[str, str]]]:
    """(url_path, query parameters) of every page of app.py and the deep links into each
    one's detail views, with the ids this store gave its hostile rows."""
    conn = db.connect(store, read_only=True)
    try:
        (alert,) = conn.execute("SELECT min(alert_key) FROM change_points").fetchone()  # type: ignore[misc]
        sources = [
            s for (s,) in conn.execute("SELECT source_id FROM sources ORDER BY 1").fetchall()
        ]
        runs = [
            f"{s}:{r}"
            for s, r in conn.execute(
                "SELECT DISTINCT source_id, run FROM profile_events ORDER BY 1, 2"
            ).fetchall()
        ]
        (series,) = conn.execute(  # type: ignore[misc]
            "SELECT min(series_id) FROM series WHERE benchmark = ? AND framework = 'paddle'",
            [BENCHMARK],
        ).fetchone()
    finally:
        conn.close()
    op = OP.removeprefix("op/")
    found: list[tuple[str, dict[str, str]]] = [
        ("", {}),
        ("phases", {"phase": "1", "x": "order"}),
        ("phases", {"phase": "1", "x": "date"}),
        ("trends", {"metric": "latency"}),
        ("trends", {"metric": "latency", "benchmark": BENCHMARK, "log": "1"}),
        ("trends", {"metric": "total_time", "benchmark": OP}),
        ("trends", {"metric": "throughput"}),
        ("prs", {}),
        *[("prs", {"pr": str(n)}) for n in (22424, 22486, 22494, 3, 19776)],
        ("compare", {}),
        (
            "compare",
            {"a_kind": "version", "a": version(3), "b_kind": "version", "b": version(20)},
        ),
        ("compare", {"part": "Paired variants", "dim": "framework"}),
        ("compare", {"part": "Paired variants", "dim": "precision"}),
        ("compare", {"part": "Attribution", "series": str(series)}),
        ("explain", {"alert": alert}),
        ("explain", {"series": str(series)}),
        ("profiles", {"run": runs[0]}),
        ("profiles", {"run": runs[-1], "vs": runs[0]}),
        ("ops", {}),
        ("ops", {"op": op, "vs": "tensorflow"}),
        ("ops", {"op": op, "vs": COMPETITOR}),
        ("alerts", {}),
        ("alerts", {"alert": alert}),
        ("report", {"week": WEEK}),
        ("report", {"week": WEEK, "project": PROJECT}),
        ("sources", {}),
        *[("sources", {"source": str(s)}) for s in sources],
        ("sources", {"source": str(sources[0]), "line": "4"}),
    ]
    return found


def row_counts(store: Path) -> dict[str, int]:
    """Rows of every table: a store that nothing changed has the same counts."""
    conn = db.connect(store, read_only=True)
    try:
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
                " ORDER BY 1"
            ).fetchall()
        ]
        # Table names come from the catalog itself, quoted as identifiers.
        return {
            t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]  # type: ignore[index]
            for t in tables
        }
    finally:
        conn.close()
