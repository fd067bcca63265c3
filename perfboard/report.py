"""The weekly report: what one ISO week changed, written for the team's tracking issue.

    python -m perfboard report [--week 2020-W06] [--project P] --format md|html [--out DIR]
                               [--post https://github.com/OWNER/REPO/issues/N]

(perfboard/cli.py is the command; `python -m perfboard.report` still runs it.)

`build` reads the store into a Report (sections of tables and charts; every piece of
text from a document or from GitHub is kept as data); `to_markdown` and `to_html` write
it. Markdown pastes into a GitHub comment (tables, PR links, charts as PNG files beside
it); HTML is one self-contained file (inline SVG, inline CSS, no script, nothing fetched)
that reads in a mail client and in print. Untrusted text is escaped for each format at
the moment it is written, never before, so neither format can be tricked by the other's
escaping. `--week` defaults to the last full ISO week.
"""

from __future__ import annotations

import functools
import html
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import altair as alt
import duckdb
import pandas as pd
from altair.utils.data import to_values

from perfboard import charts, drawing, fonts, queries
from perfboard.links import pr_link, pr_url, safe_https
from perfboard.markup import gfm_escape, short_version
from perfboard.wording import ratio_words

CHART_WIDTH = 640  # px: fits a GitHub comment, a mail and an A4 page

# -- the report as data --------------------------------------------------------------------


class Own(str):
    """Text perfboard wrote itself (numbers, labels): Markdown shows it unescaped, so the
    raw comment stays readable. Anything from a document or GitHub is a plain str and is
    escaped."""


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    url: str | None  # validated https, or None: shown as plain text


Cell = str | Link | None


@dataclass(slots=True)
class Table:
    columns: list[str]
    rows: list[list[Cell]]


@dataclass(slots=True)
class Chart:
    name: str  # file name stem of its PNG
    title: str
    spec: alt.TopLevelMixin


Paragraph = list[Cell]


@dataclass(slots=True)
class Section:
    title: str
    blocks: list[Paragraph | Table | Chart] = field(default_factory=list)  # in order

    def say(self, *cells: Cell) -> None:
        self.blocks.append(list(cells))


@dataclass(slots=True)
class Report:
    week: str  # 2020-W06
    start: date  # Monday
    end: date  # the next Monday (exclusive)
    project: str | None
    sections: list[Section]

    @property
    def title(self) -> str:
        scope = f" · {self.project}" if self.project else ""
        last = self.end - timedelta(days=1)
        return f"perfboard weekly report {self.week}{scope} ({self.start} to {last})"

    @property
    def stem(self) -> str:
        return f"perfboard-{self.week}" + (f"-{_slug(self.project)}" if self.project else "")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:40]


# -- weeks -------------------------------------------------------------------------------------


def parse_week(text: str) -> date:
    """The Monday of an ISO week written 2020-W06."""
    try:
        year, week = text.upper().split("-W")
        return date.fromisocalendar(int(year), int(week), 1)
    except ValueError:
        raise ValueError(f"week {text!r} is not an ISO week like 2020-W06") from None


def last_full_week(today: date | None = None) -> date:
    today = today or datetime.now(UTC).date()
    return today - timedelta(days=today.weekday() + 7)


def week_label(monday: date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


def default_week(weeks: pd.DataFrame) -> date:
    """The week a report opens on (queries.report_weeks, newest first): the newest in which
    a series measured before was measured again, else the newest. A store measured
    nightly opens on this week; the demo, whose newest week holds one vLLM run measured
    once, opens on the last week of its ERNIE history, not on a report of single dots."""
    again = weeks[weeks.repeated]
    return pd.Timestamp((again if not again.empty else weeks).monday.iloc[0]).date()


# -- building it -------------------------------------------------------------------------------


def _num(value: object, digits: int = 4) -> Own:
    if value is None or pd.isna(value):
        return Own("–")
    return Own(f"{float(value):.{digits}g}")


def _pct(value: object) -> Own:
    if value is None or pd.isna(value):
        return Own("–")
    return Own(f"{float(value):+.1f}%")


def _change(now: object, before: object) -> Own:
    if pd.isna(now) or pd.isna(before) or not before:
        return Own("–")
    return _pct((float(now) - float(before)) / float(before) * 100)


def _pr(repo: object, number: object, url: object = None) -> Link:
    return Link(
        f"{repo}#{int(number)}" if repo else f"#{int(number)}",
        pr_link(url, repo, number),
    )  # type: ignore[arg-type]


def build(conn: duckdb.DuckDBPyConnection, monday: date, project: str | None = None) -> Report:
    start = datetime.combine(monday, datetime.min.time())
    end = start + timedelta(days=7)
    report = Report(week_label(monday), monday, monday + timedelta(days=7), project, [])
    report.sections = [
        _headlines(conn, start, end, project),
        _phases(conn, start, end, project),
        _prs(conn, start, end, project),
        _alerts(conn, start, end, project),
        _gaps(conn, start, end, project),
        _quality(conn, start, end),
    ]
    return report


def _headlines(conn, start, end, project) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Headline numbers")
    rows: list[list[Cell]] = []
    for p in queries.week_phases(conn, start, end, project).itertuples():
        to_go = p.this_week - p.target if not pd.isna(p.target) else math.nan
        rows.append(
            [
                p.project,
                f"phase {p.name}",
                _num(p.this_week),
                _num(p.last_week),
                p.unit,
                _change(p.this_week, p.last_week),
                _num(p.target),
                _num(to_go) if not pd.isna(to_go) else Own("no target set"),
            ]
        )
    heads = queries.week_headlines(conn, start, end, project)
    for h in heads.itertuples():
        rows.append(
            [
                h.project,
                h.series,
                _num(h.this_week),
                _num(h.last_week),
                h.unit,
                _change(h.this_week, h.last_week),
                None,
                None,
            ]
        )
    if rows:
        section.blocks.append(
            Table(
                ["project", "what", "this week", "last week", "unit", "change", "target", "to go"],
                rows,
            )
        )
    else:
        section.say(Own("Nothing measured in the four weeks to the end of this week."))
    if not heads.empty:
        # The eight weeks to the week's end, one chart per unit (ms and samples/s do not
        # share an axis).
        points = queries.series_points(conn, tuple(int(i) for i in heads.series_id), 500)
        recent = (points.measured_at >= end - timedelta(days=56)) & (points.measured_at < end)
        points = points[recent & (points.status == "ok")].merge(
            heads[["series_id", "series", "unit"]], on="series_id"
        )
        points["pr_link"] = None
        for unit, group in points.groupby("unit"):
            section.blocks.append(
                Chart(
                    f"headline-{_slug(str(unit))}",
                    f"Headline series ({unit}), the eight weeks to {end:%Y-%m-%d}",
                    charts.trend_lines(group, "value", str(unit)),
                )
            )
    return section


def _phases(conn, start, end, project) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Phase progress")
    phases = queries.week_phases(conn, start, end, project)
    if phases.empty:
        section.say(Own("No phase has a milestone recorded by the end of this week."))
        return section
    every = queries.milestones_of(conn, [int(i) for i in phases.phase_id])  # one query
    for p in phases.itertuples():
        steps = every[every.phase_id == p.phase_id].drop(columns="phase_id").reset_index(drop=True)
        steps = steps[pd.to_datetime(steps.date) < end]
        steps["pr_link"] = [
            pr_url(r, n) for r, n in zip(steps.pr_repo, steps.pr_number, strict=True)
        ]
        baseline = float(p.baseline) if not pd.isna(p.baseline) else None
        target = float(p.target) if not pd.isna(p.target) else None
        progress = (
            f"{(baseline - p.this_week) / (baseline - target):.0%} of the way to the target"
            if baseline is not None and target is not None and baseline != target
            else "no target set"
        )
        section.say(
            p.project,
            Own(" · "),
            p.name,
            Own(f": {_num(p.this_week)} "),
            p.unit,
            Own(
                f" (baseline {_num(baseline)}; {progress};"
                f" {int(p.milestones_this_week)} milestone(s) recorded this week)"
            ),
        )
        if not p.milestones_this_week:
            continue  # its chart would say what last week's said
        section.blocks.append(
            Chart(
                f"phase-{int(p.phase_id)}",
                f"{p.name}: {p.unit} after each milestone",
                charts.phase_steps(steps, str(p.unit), baseline, target),
            )
        )
    return section


def _prs(conn, start, end, project) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Pull requests of the week")
    prs = queries.week_prs(conn, start, end, project)
    if prs.empty:
        section.say(Own("No PR was merged or recorded this week."))
        return section
    claims = queries.pr_claims(conn)
    rows: list[list[Cell]] = []
    for pr in prs.itertuples():
        said = claims[(claims.pr_number == pr.number) & (claims.pr_repo == pr.repo)]
        claimed = "; ".join(
            f"{_num(c.before)} → {_num(c.after)} {c.unit}"
            if not pd.isna(c.before)
            else f"{_num(c.percent, 3)}%"
            for c in said.itertuples()
        )
        measured = (
            f"{_num(pr.before)} → {_num(pr.after)} {pr.unit} ({_pct(-pr.reduction * 100)})"
            if not pd.isna(pr.reduction)
            else "–"
        )
        rows.append(
            [
                _pr(pr.repo, pr.number, pr.url),
                pr.title if isinstance(pr.title, str) else "",
                pr.author if isinstance(pr.author, str) else "",
                Own(pr.how),
                measured,
                claimed or Own("–"),
            ]
        )
    section.blocks.append(
        Table(["PR", "title", "author", "this week", "measured", "claimed"], rows)
    )
    return section


def _alerts(conn, start, end, project) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Regressions and improvements detected")
    found = queries.alerts(conn)
    found = found[(found.after_at >= start) & (found.after_at < end)]
    if project:
        found = found[found.project == project]
    if found.empty:
        section.say(Own("No change point falls in this week."))
        return section
    rows: list[list[Cell]] = [
        [
            Own(a.kind),
            a.project,
            a.largest_series,
            _pct(a.largest_pct),
            Own(str(int(a.series))),
            f"{short_version(a.before_version)} → {short_version(a.after_version)}",
            Own(f"{a.confidence:.3f}"),
            a.status + (f": {a.note}" if isinstance(a.note, str) and a.note else ""),
        ]
        for a in found.itertuples()
    ]
    section.blocks.append(
        Table(
            [
                "kind",
                "project",
                "largest change in",
                "change",
                "series",
                "versions",
                "confidence",
                "triage",
            ],
            rows,
        )
    )
    return section


def _gaps(conn, start, end, project) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Competitor gaps that moved")
    gaps = queries.week_gaps(conn, start, end, project)
    moved = gaps[gaps.ratio_before.isna() | ((gaps.ratio / gaps.ratio_before - 1).abs() >= 0.02)]
    if moved.empty:
        section.say(Own("No comparison with another framework moved this week."))
        return section
    rows: list[list[Cell]] = [
        [
            g.benchmark,
            g.metric,
            queries.labels.params_text(g.params),  # key=value, as in a series' label
            f"{_num(g.paddle)} / {_num(g.other)} {g.unit}",
            ratio_words(g.ratio, g.direction, g.competitor),
            ratio_words(g.ratio_before, g.direction, g.competitor)
            if not pd.isna(g.ratio_before)
            else "new this week",
        ]
        for g in moved.itertuples()
    ]
    section.blocks.append(
        Table(["benchmark", "metric", "config", "Paddle / other", "now", "a week before"], rows)
    )
    return section


def _quality(conn, start, end) -> Section:  # type: ignore[no-untyped-def]
    section = Section("Data quality")
    errors, stale = queries.week_quality(conn, start, end)
    if errors.empty:
        section.say(Own("No ingest error this week."))
    else:
        section.blocks.append(
            Table(
                ["document", "problems", "first", "line"],
                [
                    [
                        Link(e.source, safe_https(e.url)),
                        Own(str(int(e.problems))),
                        e.first_reason,
                        Own(str(int(e.first_line))) if not pd.isna(e.first_line) else None,
                    ]
                    for e in errors.itertuples()
                ],
            )
        )
    if stale.empty:
        section.say(Own("No series went stale (measured in the four weeks before, not this week)."))
    else:
        section.blocks.append(
            Table(
                ["project", "stale series", "last measured"],
                [
                    [s.project, s.series, Own(f"{s.last_measured:%Y-%m-%d}")]
                    for s in stale.itertuples()
                ],
            )
        )
    return section


# -- writing it ----------------------------------------------------------------------------------


def _md_cell(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, Own):
        return str(cell)
    if isinstance(cell, Link):
        if cell.url is None:
            return gfm_escape(cell.text)
        # Parentheses and spaces would end the link target early: percent-encode them.
        target = cell.url.replace("(", "%28").replace(")", "%29")
        return f"[{gfm_escape(cell.text)}]({target})"
    return gfm_escape(cell)


def to_markdown(report: Report, images: Callable[[Chart], str | None] | None = None) -> str:
    """GitHub-flavoured Markdown. `images(chart)` writes the chart and returns the path
    to link it by (None: no image, e.g. for a comment posted through the API)."""
    scope = f" · {gfm_escape(report.project)}" if report.project else ""
    last = report.end - timedelta(days=1)
    out = [f"# perfboard weekly report {report.week}{scope} ({report.start} to {last})", ""]
    for section in report.sections:
        out += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                out.append("| " + " | ".join(block.columns) + " |")
                out.append("|" + "---|" * len(block.columns))
                out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            elif isinstance(block, Chart):
                path = images(block) if images else None
                if not path:
                    continue
                out.append(f"![{gfm_escape(block.title)}]({path})")
            else:
                out.append("".join(_md_cell(c) for c in block))
            out.append("")
    out.append("_Written by perfboard from the numbers in its store; every PR links to GitHub._")
    return "\n".join(out) + "\n"


def _spec(chart: Chart) -> dict:
    """The chart at a fixed width (a page or a mail has no container to stretch to), in
    the packaged Latin font (perfboard.fonts: the same layout on any machine), not the
    CJK one: vl-convert measures every label in the first font named, and the CJK font
    took a 275-point chart from 0.3 s to 0.9 s. Chinese text is still drawn in CJK
    glyphs, by font fallback (tests/test_report.py checks a rendered label).

    The width and the theme go into the spec's dict, not through Altair's properties()
    and configure(): each of those copies the chart deep, its inline values included
    (0.1 s of a report's 0.8 s on the 10 M store)."""
    spec = _inline(chart.spec).to_dict(validate=False)
    spec["width"] = CHART_WIDTH
    font = f"{fonts.LATIN_FONT}, sans-serif"  # sans-serif: a browser without it
    spec["config"] = {**spec.get("config", {}), **charts.theme_config(), "font": font}
    return spec


def _inline(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The chart with its frames turned into inline values, as Altair's default data
    transformer turns them, so that to_dict runs no transformer. The transformer is global:
    in the dashboard's server, Streamlit enables its own while it draws a chart in another
    session, bound to that chart's datasets, and a report rendered meanwhile put its data
    there (issue 7's load test: Trends raised "dictionary changed size during iteration")."""
    chart = chart.copy(deep=False)
    if isinstance(chart.data, pd.DataFrame):
        chart.data = to_values(chart.data)
    for part in ("layer", "concat", "hconcat", "vconcat"):
        parts = getattr(chart, part, alt.Undefined)
        if parts is not alt.Undefined:
            setattr(chart, part, [_inline(p) for p in parts])
    return chart


def write_pngs(report: Report, folder: Path) -> Callable[[Chart], str]:
    """An `images` for to_markdown that draws each chart to a PNG in `folder`."""

    def draw(chart: Chart) -> str:
        name = f"{report.stem}-{chart.name}.png"
        png = drawing.png(_spec(chart), scale=2)
        (folder / name).write_bytes(png)
        return name

    return draw


# Its own light page, whatever the viewer's theme: in the dashboard's dark mode the preview
# frame is otherwise transparent, dark text on a dark page (and the charts are light SVG).
_CSS = """
html { color-scheme: light; background: #ffffff; }
body { background: #ffffff;
       font-family: "Noto Sans CJK SC", "Noto Sans SC", "Microsoft YaHei", -apple-system,
       "Segoe UI", Roboto, sans-serif; color: #1f2328; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.45; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem;
  border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
figure { margin: 1rem 0; page-break-inside: avoid; }
figcaption { font-size: .85rem; color: #59636e; }
svg { max-width: 100%; height: auto; }
a { color: #0969da; }
@media print { body { margin: 0; max-width: none; } a { color: inherit; } }
"""


def _html_cell(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, Link):
        text = html.escape(cell.text)
        return f'<a href="{html.escape(cell.url)}">{text}</a>' if cell.url else text
    return html.escape(cell)


@functools.lru_cache(maxsize=64)
def _svg(spec: str) -> str:
    """A chart's SVG, by its Vega-Lite spec (JSON text): the same chart is drawn once.

    A chart costs 0.05-0.5 s to draw (in the server, in its drawing processes: see
    perfboard.drawing). An ingest makes every report cold again, but a past week's charts
    mostly show the same points: their spec, data included, is the same text, and their
    SVG comes from here (64 at most: a few MB).
    """
    return drawing.svg(json.loads(spec))


def to_html(report: Report, spec: Callable[[Chart], dict] | None = None) -> str:
    """One self-contained HTML file: inline CSS and SVG charts; no script, no fetch.
    `spec`: each chart's Vega-Lite spec (default _spec), for a caller that has them."""
    spec = spec or _spec
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(report.title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(report.title)}</h1>",
    ]
    charts = [b for section in report.sections for b in section.blocks if isinstance(b, Chart)]
    texts = [json.dumps(spec(chart), sort_keys=True) for chart in charts]
    svg_of = dict(zip(map(id, charts), drawing.side_by_side(_svg, texts), strict=True))
    for section in report.sections:
        out.append(f"<h2>{html.escape(section.title)}</h2>")
        for block in section.blocks:
            if isinstance(block, Table):
                out.append("<table><thead><tr>")
                out += [f"<th>{html.escape(c)}</th>" for c in block.columns]
                out.append("</tr></thead><tbody>")
                for row in block.rows:
                    out.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>")
                out.append("</tbody></table>")
            elif isinstance(block, Chart):
                out.append(
                    f"<figure>{svg_of[id(block)]}"
                    f"<figcaption>{html.escape(block.title)}</figcaption></figure>"
                )
            else:
                out.append("<p>" + "".join(_html_cell(c) for c in block) + "</p>")
    out.append(
        "<p><small>Written by perfboard from the numbers in its store; every PR links to"
        " GitHub.</small></p></body></html>"
    )
    return "\n".join(out) + "\n"


# -- posting it -------------------------------------------------------------------------------


def post(report: Report, issue_url: str, api_url: str | None = None) -> str:
    """Post the report's Markdown (charts left out: the API takes no images) as a comment
    on the team's tracking issue; returns the comment's URL."""
    from perfboard import github_api  # requests: only when posting

    repo, number = github_api.parse_issue_url(issue_url)
    client = github_api.GitHubClient(api_url)
    body = (
        to_markdown(report)
        + "\n_Charts: in the HTML report, or the PNG files beside the Markdown._\n"
    )
    comment = client.post(f"repos/{repo}/issues/{number}/comments", {"body": body})
    return str(comment.get("html_url", ""))


def main(argv: list[str] | None = None) -> int:
    """`python -m perfboard.report ...`: the same as `python -m perfboard report ...`."""
    from perfboard import cli

    return cli.main(["report", *(sys.argv[1:] if argv is None else argv)])


@dataclass(slots=True)
class Rendered:
    """A report in both formats, for the Report page's preview and downloads. Its charts
    are kept as specs and drawn to PNG only for a download (pngs): drawing them took most
    of a render, 3 of 5 s on the 10 M store, paid by every page run after an ingest."""

    title: str
    stem: str
    markdown: str
    html: str
    charts: dict[str, dict]  # Vega-Lite spec by PNG file name, linked from the Markdown

    def pngs(self) -> dict[str, bytes]:
        """The Markdown's chart images, PNG by file name."""
        pngs = drawing.side_by_side(
            lambda spec: drawing.png(spec, scale=2), [*self.charts.values()]
        )
        return dict(zip(self.charts, pngs, strict=True))


def render(conn: duckdb.DuckDBPyConnection, monday: date, project: str | None) -> Rendered:
    report = build(conn, monday, project)
    specs: dict[str, dict] = {}  # by PNG name: each chart's spec made once, for both formats

    def name_of(chart: Chart) -> str:
        return f"{report.stem}-{chart.name}.png"

    def spec(chart: Chart) -> dict:
        name = name_of(chart)
        if name not in specs:
            specs[name] = _spec(chart)
        return specs[name]

    def keep(chart: Chart) -> str:
        spec(chart)
        return name_of(chart)

    markdown = to_markdown(report, keep)
    return Rendered(report.title, report.stem, markdown, to_html(report, spec), specs)


if __name__ == "__main__":
    sys.exit(main())
