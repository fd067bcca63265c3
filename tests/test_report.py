"""The weekly report: golden files of both formats on the demo, escaping of hostile text,
no external fetch, Chinese glyphs in the rendered charts, posting to a tracking issue."""

from __future__ import annotations

import os
import re
import shutil
from datetime import date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest

from ingest.results import write_records
from perfboard import alerts, db, queries, report
from tests.conftest import ROOT, ingest
from tests.github_fake import FakeGitHub
from tests.test_app import run_page
from tests.test_results import RECORD

GOLDEN = ROOT / "tests" / "golden"
W06 = date(2020, 2, 3)  # the week of the ERNIE phase-2 table (PaddlePaddle/benchmark#165)
HOSTILE = ["<script>alert(1)</script>", "[x](javascript:alert(1))", "<img src=x onerror=alert(1)>"]


def golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; PERFBOARD_UPDATE_GOLDEN=1 writes it instead."""
    path = GOLDEN / name
    if os.environ.get("PERFBOARD_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


@pytest.fixture(scope="module")
def demo(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo: the report tests must not change the shared one."""
    copy = tmp_path_factory.mktemp("report") / "demo.duckdb"
    shutil.copy(demo_db, copy)
    return copy


def test_markdown_of_the_phase2_week(demo: Path, tmp_path: Path) -> None:
    conn = db.connect(demo, read_only=True)
    built = report.build(conn, W06)
    conn.close()
    text = report.to_markdown(built, report.write_pngs(built, tmp_path))
    golden("report-2020-W06.md", text)
    # What the team wrote by hand in 2020, now read from the store:
    assert "| ernie | phase 二期优化工作 | 9.5 | – | ms |" in text
    assert "[PaddlePaddle/Paddle#22424](https://github.com/PaddlePaddle/Paddle/pull/22424)" in text
    # Escaped only where GitHub would read markup: the text reads as written.
    assert "10 -\\> 9.5 ms" not in text and "10 → 9.5 ms (-5.0%)" in text
    assert "9.5 → 8.4 ms; 8.4 → 7.8 ms" in text  # claimed by #22494's description
    assert "Tesla P4 (simulated) · fp32 · batch_size=1, seq_len=128" in text
    assert "row cut short" in text  # the phase table's broken row, line 13
    assert (tmp_path / "perfboard-2020-W06-phase-1.png").stat().st_size > 10_000


def test_a_projects_report_keeps_its_prs_of_the_week(demo: Path) -> None:
    # project=ernie: #22424 from the phase table, and #22486 and #22494, whose
    # descriptions are ERNIE documents of the week (once dropped by the project filter).
    conn = db.connect(demo, read_only=True)
    ernie = queries.week_prs(conn, datetime(2020, 2, 3), datetime(2020, 2, 10), "ernie")
    other = queries.week_prs(conn, datetime(2020, 2, 3), datetime(2020, 2, 10), "ops")
    conn.close()
    assert ernie.number.tolist() == [22424, 22486, 22494]
    assert other.empty


def test_html_of_the_phase2_week_is_self_contained(demo: Path) -> None:
    conn = db.connect(demo, read_only=True)
    text = report.to_html(report.build(conn, W06))
    conn.close()
    golden("report-2020-W06.html", text)
    # inline charts: the phase's steps and the headline series (the simulated nightly)
    assert text.count("<svg") == 2 and "二期优化工作" in text
    assert_no_fetch(text)


class Tags(HTMLParser):
    """Every element and attribute the browser would see (text is not an element)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


def assert_no_fetch(text: str) -> None:
    """Nothing in the page makes a browser ask for anything or run anything: no script,
    stylesheet, image, frame or font from elsewhere, no event handler; the only URLs are
    links to GitHub pages, followed only when clicked."""
    page = Tags()
    page.feed(text)
    tags = {tag for tag, _ in page.found}
    assert not tags & {"script", "link", "img", "image", "iframe", "object", "embed", "use"}
    for tag, attrs in page.found:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert (
                name not in ("src", "srcset", "poster", "data", "style")
                or not value
                or ("url(" not in value and name != "src")
            ), (tag, name, value)
            if name in ("href", "xlink:href"):
                assert value and value.startswith("https://github.com/"), (tag, value)
    css = " ".join(page.css).lower()
    assert "@import" not in css and "url(" not in css


def hostile_store(tmp_path: Path) -> Path:
    """A week whose PR titles, phase-free series names and notes are attacks."""
    target = tmp_path / "hostile.duckdb"
    records = [
        {
            **RECORD,
            "benchmark": HOSTILE[i % 3],
            "version": f"v{day}",
            "time": f"2020-02-0{day}T00:00:00Z",
            "value": 10.0 - day * 0.1,
        }
        for day in range(1, 8)
        for i in range(3)
    ]
    write_records(records, tmp_path / "hostile.jsonl")
    assert ingest("results", str(tmp_path / "hostile.jsonl"), "--db", str(target)) == 0
    conn = db.connect(target)
    for n, title in enumerate(HOSTILE, start=1):
        conn.execute(
            "INSERT INTO pull_requests (repo, number, title, author, state, merged_at, url,"
            " origin, synced_at) VALUES ('PaddlePaddle/Paddle', ?, ?, ?, 'merged',"
            " '2020-02-05', ?, 'test', now())",
            [n, title, title, "javascript:alert(1)" if n == 2 else None],
        )
    conn.close()
    return target


def test_the_servers_drawing_process_draws_the_same_charts(demo: Path) -> None:
    """The server draws the report's charts in processes of their own (perfboard.drawing),
    side by side, without holding its GIL: the same SVG and PNG bytes as drawn here; a
    chart vl-convert cannot draw is its error still."""
    from perfboard import drawing

    conn = db.connect(demo, read_only=True)
    here = report.render(conn, W06, None)
    report._svg.cache_clear()
    drawing.start()
    try:
        pids = drawing.drawing_pids()
        assert len(set(pids)) == drawing.DRAWERS and os.getpid() not in pids
        apart = report.render(conn, W06, None)
        assert apart.html == here.html and apart.html.count("<svg") == 2
        assert apart.pngs() == here.pngs()
        with pytest.raises(ValueError, match="could not draw"):
            drawing.svg({"mark": "no such mark"})
    finally:
        drawing.stop()
        report._svg.cache_clear()
        conn.close()
    assert drawing.drawing_pids() == []


def test_hostile_text_is_inert_in_both_formats(tmp_path: Path) -> None:
    store = hostile_store(tmp_path)
    conn = db.connect(store, read_only=True)
    built = report.build(conn, W06)
    conn.close()
    md = report.to_markdown(built)
    html = report.to_html(built)
    # Every < and every link bracket of the attacks is backslash-escaped: literal text.
    assert not re.search(r"(?<!\\)<(script|img)", md)
    assert not re.search(r"(?<!\\)\]\(javascript", md) and "\\[x\\](javascript" in md
    assert "\\<script\\>alert(1)\\</script\\>" in md  # shown as the literal text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "javascript:" not in html.replace("[x](javascript:alert(1))", "")
    assert "[x](javascript:alert(1))" in html  # as text, inside a cell
    assert_no_fetch(html)


# NotoSansCJK-Regular.ttc of Noto Sans CJK 2.004: the file Debian's fonts-noto-cjk
# (1:20220127+repack1-1) installs, byte for byte.
NOTO_SANS_CJK_SHA256 = "b76b0433203017ca80401b2ee0dd69350349871c4b19d504c34dbdd80541690a"


def test_the_cjk_font_is_noto_sans_cjk_as_published() -> None:
    """The font comes from a small PyPI package: pinned, and its one file checked."""
    import hashlib

    from perfboard import fonts

    [font] = sorted(fonts.cjk_font_folder().glob("*.ttc"))
    assert hashlib.sha256(font.read_bytes()).hexdigest() == NOTO_SANS_CJK_SHA256


def test_chinese_renders_as_glyphs_in_the_png_charts() -> None:
    """Without a CJK font every Chinese character draws as the same empty box: two
    different characters drawn alone must give two different images. Drawn as the report
    draws its charts (report._spec: the packaged Latin font first, so Chinese comes by
    fallback), with the font perfboard.fonts registers, not a system one (CI has none)."""
    import altair as alt
    import pandas as pd

    from perfboard import fonts

    vlc = fonts.vl_convert()

    def draw(label: str) -> bytes:
        chart = (
            alt.Chart(pd.DataFrame({"x": [label], "y": [1]})).mark_bar().encode(x="x:N", y="y:Q")
        )
        spec = report._spec(report.Chart("cjk", label, chart))
        assert spec["config"]["font"] == "Source Sans Pro, sans-serif"  # no CJK font: by fallback
        return vlc.vegalite_to_png(spec)

    assert draw("二") != draw("期")
    assert draw("期") == draw("期")  # the comparison is meaningful: rendering is stable


def test_post_puts_the_markdown_on_the_tracking_issue(demo: Path, monkeypatch) -> None:
    with FakeGitHub(token="t0ken") as fake:
        fake.add_issue("PaddlePaddle/benchmark", 165, title="ERNIE GPU 二期优化")
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        status = report.main(
            [
                "--week",
                "2020-W06",
                "--format",
                "md",
                "--out",
                str(demo.parent / "posted"),
                "--db",
                str(demo),
                "--api-url",
                fake.base_url,
                "--post",
                "https://github.com/PaddlePaddle/benchmark/issues/165",
            ]
        )
        assert status == 0
        [posted] = [r for r in fake.requests if r.method == "POST"]
    assert posted.path == "/repos/PaddlePaddle/benchmark/issues/165/comments"
    assert posted.headers["authorization"] == "Bearer t0ken"
    body = __import__("json").loads(posted.body)["body"]
    assert body.startswith("# perfboard weekly report 2020-W06")
    assert "![" not in body  # no image links: the API takes no files


def test_report_command_defaults_and_errors(demo: Path, tmp_path: Path, capsys) -> None:
    assert report.last_full_week(date(2026, 11, 30)) == date(2026, 11, 23)
    assert report.last_full_week(date(2026, 12, 6)) == date(2026, 11, 23)  # a Sunday
    assert report.week_label(report.parse_week("2020-w06")) == "2020-W06"
    assert report.main(["--week", "2020-06", "--db", str(demo), "--out", str(tmp_path)]) == 2
    assert "not an ISO week like 2020-W06" in capsys.readouterr().err
    assert report.main(["--db", str(tmp_path / "none.duckdb"), "--out", str(tmp_path)]) == 2
    assert report.main(["--format", "html", "--db", str(demo), "--out", str(tmp_path)]) == 0
    monday = report.last_full_week()
    assert (tmp_path / f"perfboard-{report.week_label(monday)}.html").exists()


def test_ratios_are_worded_with_their_direction() -> None:
    # PaddlePaddle/benchmark PR #282: abs, Paddle 2.76374 ms against TensorFlow 1.91671 ms.
    assert report.ratio_words(2.76374 / 1.91671, "lower", "tensorflow") == (
        "Paddle 1.44x slower than tensorflow"
    )
    assert report.ratio_words(0.5, "lower", "tensorflow") == "Paddle 2.00x faster than tensorflow"
    assert report.ratio_words(0.5, "higher", "tensorrt") == "Paddle 2.00x lower than tensorrt"
    assert report.ratio_words(1.001, "lower", "tensorflow") == "Paddle on par with tensorflow"


def test_a_detected_change_and_its_triage_are_in_the_report(tmp_path: Path) -> None:
    from tests.test_alerts import nightly

    target = tmp_path / "weekly.duckdb"
    assert ingest("results", str(nightly(tmp_path / "n.jsonl")), "--db", str(target)) == 0
    conn = db.connect(target)
    key = conn.execute("SELECT alert_key FROM change_points ORDER BY after_at LIMIT 1").fetchone()
    alerts.set_triage(conn, key[0], "acknowledged", "expected: PR 22486", "xreki")
    after = conn.execute("SELECT min(after_at) FROM change_points").fetchone()[0]
    built = report.build(conn, after.date() - timedelta(days=after.weekday()))
    conn.close()
    md = report.to_markdown(built)
    assert "| improvement | ernie |" in md and "| -5.0% |" not in md
    assert "acknowledged: expected: PR 22486" in md


def test_report_page_previews_and_offers_both_downloads(demo: Path, monkeypatch) -> None:
    at = run_page(monkeypatch, demo, "pages/report.py", week="2020-W06")
    assert at.selectbox[0].value == "2020-W06"
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Download HTML", "Download Markdown"]
    [frame] = at.get("iframe")
    assert "二期优化工作" in frame.proto.srcdoc
    # The Markdown to copy, as the download holds it, and how to bring its charts along:
    # drawn once asked for.
    assert not at.code
    at.toggle(key="report-markdown").set_value(True).run()
    [code] = at.code
    assert code.language == "markdown"
    assert code.value.startswith("# perfboard weekly report 2020-W06")
    assert "drag each PNG into the comment box" in " ".join(c.value for c in at.caption)


def test_report_from_a_store_with_nothing_that_week(demo: Path) -> None:
    conn = duckdb.connect(str(demo), read_only=True)
    md = report.to_markdown(report.build(conn, date(2001, 1, 1)))
    conn.close()
    assert "Nothing measured in the four weeks" in md and "No PR was merged" in md


def test_the_pages_cjk_font_holds_every_chinese_character_of_the_samples() -> None:
    """scripts/make_web_font.py's GB2312 subset draws every CJK character the bundled
    samples hold once NFKC-normalised as the ingest stores them (二期优化工作, 显存不足,
    the QA table's 测试结果...), and nothing else of theirs is left to a missing glyph."""
    import unicodedata

    from fontTools.ttLib import TTFont

    from perfboard.fonts import CJK_RANGES, WEB_FONT

    path = ROOT / "static" / WEB_FONT
    assert path.is_file(), "make the font first: make test does"
    cmap = TTFont(str(path), lazy=True).getBestCmap()
    text = "".join(
        unicodedata.normalize("NFKC", p.read_text(encoding="utf-8", errors="replace"))
        for p in (ROOT / "data" / "samples").glob("*.md")
    )
    cjk = {c for c in text if any(low <= ord(c) <= high for low, high in CJK_RANGES)}
    assert {"二", "期", "优", "化", "显", "存", "不", "足"} <= cjk
    assert sorted(c for c in cjk if ord(c) not in cmap) == []
