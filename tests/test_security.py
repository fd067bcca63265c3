"""Security (issue 7), without a browser: hostile text is text on every page and in both
report formats, query parameters cannot inject SQL, every SQL value is bound, the GitHub
token appears nowhere, and the optional sign-in keeps out whoever is not on the list.

The hostile store is tests/hostile.py's, built through the real ingest; Chromium checks
the same store in tests/test_browser_security.py.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
import secrets
import shutil
import string
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from perfboard import db, github_api, report, ui
from perfboard.links import safe_https
from tests import hostile
from tests.conftest import ROOT
from tests.github_fake import FakeGitHub
from tests.test_app import run_page
from tests.test_report import Tags

# A token like GitHub's, new each run: finding it anywhere means it leaked from here.
TOKEN = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
W06 = date(2020, 2, 3)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile store, its PRs synced from the loopback GitHub with TOKEN."""
    return hostile.build(tmp_path_factory.mktemp("hostile"), token=TOKEN)


def view(monkeypatch: pytest.MonkeyPatch, store: Path, path: str, params: dict[str, str]):
    """One page of app.py's navigation with these query parameters (run_page: no
    exception), as AppTest renders it."""
    return run_page(monkeypatch, store, hostile.PAGES[path], **params)


# -- what a page shows as markdown ------------------------------------------------------------

# Element bodies Streamlit renders as markdown (st.markdown, st.caption, headings, alerts,
# toasts); every element's label and help are markdown too (widgets, metrics, buttons).
MARKDOWN_BODIES = {"Markdown", "Heading", "Alert", "Toast"}


def nodes(at: AppTest) -> Iterator[Any]:
    """Every block and element of the page, the sidebar's included."""
    stack: list[Any] = [at._tree]
    while stack:
        node = stack.pop()
        yield node
        stack += list((getattr(node, "children", None) or {}).values())


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(where, text) of every string the page hands Streamlit's markdown renderer."""
    found: list[tuple[str, str]] = []
    for node in nodes(at):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        name = proto.DESCRIPTOR.name
        if name == "Block":
            for kind in ("expandable", "tab"):
                if proto.HasField(kind):
                    found.append((f"{kind} label", getattr(proto, kind).label))
            continue
        fields = {f.name: v for f, v in proto.ListFields()}
        for key in ("label", "help", "placeholder"):
            if isinstance(fields.get(key), str):
                found.append((f"{name}.{key}", fields[key]))
        if name in MARKDOWN_BODIES and isinstance(fields.get("body"), str):
            found.append((f"{name}.body", fields["body"]))
        if name == "Radio":  # radio options are markdown, unlike a selectbox's
            found.extend((f"{name} option", o) for o in proto.options)
        if name == "Dataframe" and proto.columns:  # a column's help is markdown
            for column, config in json.loads(proto.columns).items():
                if isinstance(config, dict) and config.get("help"):
                    found.append((f"column {column} help", config["help"]))
    return found


# Markup that is live in markdown unless backslash-escaped: raw HTML and autolinks, an
# image (fetched from anywhere), emphasis the text did not mean, a heading, and a link
# whose target is neither an https URL nor one of the dashboard's own pages.
LIVE_MARKUP = {
    "raw HTML or autolink": re.compile(r"(?<!\\)<[A-Za-z/!?]"),
    "image": re.compile(r"(?<!\\)!\["),
    "emphasis": re.compile(r"(?<!\\)\*\*bold"),
    "heading": re.compile(r"(?m)^ {0,3}#{1,6} "),
    "link to elsewhere": re.compile(r"(?<!\\)\]\((?!https://|/)"),
}
# An escaped attack holds backslashes; a verbatim one went through unescaped. ("# heading"
# stays a substring once escaped: the heading pattern above checks it.)
VERBATIM = [a for a in (*hostile.ATTACKS, *hostile.TIGHT) if a != hostile.HEADING]


def live_markup(text: str) -> list[str]:
    found = [name for name, pattern in LIVE_MARKUP.items() if pattern.search(text)]
    found += [f"verbatim {a!r}" for a in VERBATIM if a in text]
    for target in re.findall(r"(?<!\\)\]\(([^)\s]*)\)", text):
        if not target.startswith("/") and safe_https(target) is None:
            found.append(f"link to {target!r}")
    return found


def link_cells(at: AppTest) -> list[tuple[str, object]]:
    """(column, value) of every cell of every LinkColumn: what a click opens."""
    cells = []
    for frame in at.dataframe:
        if not frame.proto.columns:
            continue
        for column, config in json.loads(frame.proto.columns).items():
            kind = (config or {}).get("type_config", {}).get("type")
            if kind == "link" and column in frame.value.columns:
                cells += [(column, v) for v in frame.value[column]]
    return cells


def chart_hrefs(at: AppTest) -> list[object]:
    """Every value a Vega chart uses as a link (its href encodings' fields, in its data)."""
    values: list[object] = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        fields: set[str] = set()

        def hrefs(node: object, fields: set[str] = fields) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    if key == "href":
                        text = json.dumps(value)
                        fields.update(re.findall(r'"field": "([^"]+)"', text))
                    hrefs(value)
            elif isinstance(node, list):
                for item in node:
                    hrefs(item)

        hrefs(spec)
        assert "pr_link" in fields or not fields, fields  # links are perfboard's, by name
        for dataset in chart.proto.datasets:
            table = pa.ipc.open_stream(dataset.data.data).read_all()
            for name in fields & set(table.column_names):
                values += table.column(name).to_pylist()
    return values


def safe_link(value: object) -> bool:
    """A link a page may hold: none, an https URL safe_https passes, or a page of its own."""
    if value is None or (isinstance(value, float) and value != value):
        return True
    return isinstance(value, str) and (
        safe_https(value) == value or re.fullmatch(r"/[a-z_]+\?[\w=&%:.+-]*", value) is not None
    )


def test_the_hostile_store_holds_every_attack_where_pages_show_text(store: Path) -> None:
    """The store is what the tests below think it is: attacks in every kind of field."""
    conn = db.connect(store, read_only=True)
    try:
        one = {
            "phase name": "SELECT name FROM phases",
            "phase owner": "SELECT owner FROM phases",
            "milestone description": "SELECT description FROM milestones",
            "series benchmark": "SELECT benchmark FROM series",
            "series framework": "SELECT framework FROM series",
            "series device": "SELECT device FROM series",
            "series params": "SELECT params::VARCHAR FROM series",
            "version": "SELECT version FROM measurements",
            "PR title": "SELECT title FROM pull_requests",
            "PR author": "SELECT author FROM pull_requests",
            "PR labels": "SELECT labels::VARCHAR FROM pull_requests",
            "PR body": "SELECT body FROM pull_requests",
            "PR url": "SELECT url FROM pull_requests",
            "source title": "SELECT title FROM sources",
            "source url": "SELECT url FROM sources",
            "source author": "SELECT author FROM sources",
            "source uri": "SELECT uri FROM sources",
            "raw line": "SELECT raw FROM measurements",
            "unreadable line": "SELECT raw FROM ingest_errors",
            "triage note": "SELECT note FROM alert_triage",
            "triage who": "SELECT set_by FROM alert_triage",
            "profile event": "SELECT event FROM profile_events",
            "IR pass": "SELECT name FROM passes",
            "claim text": "SELECT raw FROM claims",
            "known PR note": "SELECT note FROM pull_requests",
        }
        missing = []
        for what, sql in one.items():
            texts = " ".join(str(v) for (v,) in conn.execute(sql).fetchall() if v is not None)
            if not any(a in texts for a in (*hostile.ATTACKS, *hostile.TIGHT)):
                missing.append(what)
        urls = {u for (u,) in conn.execute("SELECT url FROM pull_requests").fetchall()}
        alerts = conn.execute("SELECT count(DISTINCT alert_key) FROM change_points").fetchone()
    finally:
        conn.close()
    assert not missing, f"no attack in: {missing}"
    assert {"javascript:alert(1)", hostile.DATA_URL} <= urls
    assert alerts == (1,)


def test_every_page_shows_hostile_text_as_text(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    """Every page and deep link of app.py on the hostile store: no markdown or HTML from
    the data comes alive, every link a page or chart holds is https or one of its own
    pages, and the report preview passes the report's no-fetch check."""
    problems: list[str] = []
    links = hrefs = texts = 0
    views = hostile.views(store)
    assert {path for path, _ in views} == set(hostile.PAGES)  # every page of app.py
    for path, params in views:
        at = view(monkeypatch, store, path, params)
        where = f"/{path}?{params}"
        shown, cells, targets = markdown_texts(at), link_cells(at), chart_hrefs(at)
        texts, links, hrefs = texts + len(shown), links + len(cells), hrefs + len(targets)
        for element, text in shown:
            problems += [f"{where} {element}: {p} in {text[:120]!r}" for p in live_markup(text)]
        problems += [
            f"{where} link column {column}: {value!r}"
            for column, value in cells
            if not safe_link(value)
        ]
        problems += [f"{where} chart href {v!r}" for v in targets if not safe_link(v)]
        problems += [
            f"{where} link button {b.proto.url!r}"
            for b in at.get("link_button")
            if safe_https(b.proto.url) is None
        ]
        for frame in at.get("iframe"):
            # The preview's one fetch is the app's own CJK font (ui.with_cjk_font), added
            # before </head>: taken out, the rest passes the report's no-fetch check.
            style = ui.cjk_preview_style()
            assert not style or frame.proto.srcdoc.count(style) == 1
            assert_inert_html(
                frame.proto.srcdoc.replace(style, "", 1) if style else frame.proto.srcdoc
            )
    assert not problems, "\n".join(problems)
    assert texts > 500 and links > 50 and hrefs > 20  # the checks had something to check


def test_an_attack_is_shown_escaped_where_the_data_is_named(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    """Not only absent: the attack text is there, as text (escaped in markdown, as written
    in the data grid)."""
    at = view(monkeypatch, store, "phases", {"phase": "1"})
    heading = at.subheader[0].value
    assert heading.startswith(r"二期 \<script\>alert\(1\)\</script\>")
    table = next(d.value for d in at.dataframe if "pr_title" in d.value.columns)
    assert hostile.SCRIPT in table.description[1] and hostile.IMG in table.pr_title[1]
    # The phase's PR links: perfboard's own, to GitHub; a PR cell that is an attack is none.
    [links] = [m.value for m in at.markdown if m.value.startswith("Pull requests in this")]
    assert links == (
        "Pull requests in this phase: [#22486](https://github.com/PaddlePaddle/Paddle/pull/22486),"
        " [#22494](https://github.com/PaddlePaddle/Paddle/pull/22494)"
    )
    prs = view(monkeypatch, store, "prs", {"pr": "22424"})
    # Its html_url is javascript:alert(1): the link is built from its repo and number.
    assert [b.proto.url for b in prs.get("link_button")] == [
        "https://github.com/PaddlePaddle/Paddle/pull/22424"
    ]
    assert any(r"\<img src\=x onerror\=alert\(1\)\>" in m.value for m in prs.markdown)


# -- the weekly report ---------------------------------------------------------------------------


def assert_inert_html(text: str) -> None:
    """tests/test_report.assert_no_fetch's rules, with links to any https page allowed (a
    source document may live anywhere): no script, no element that fetches, no event
    handler, no javascript: or data: URL, no CSS import."""
    page = Tags()
    page.feed(text)
    tags = {tag for tag, _ in page.found}
    assert not tags & {"script", "link", "img", "image", "iframe", "object", "embed", "use"}
    for tag, attrs in page.found:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            assert name not in ("src", "srcset", "poster", "data", "formaction"), (tag, name)
            assert "url(" not in (value or "") or name != "style", (tag, name, value)
            if name in ("href", "xlink:href"):
                assert value and safe_https(value) == value, (tag, value)
    css = " ".join(page.css).lower()
    assert "@import" not in css and "url(" not in css


@pytest.mark.parametrize("project", [None, hostile.PROJECT])
def test_both_report_formats_keep_hostile_text_inert(store: Path, project: str | None) -> None:
    conn = db.connect(store, read_only=True)
    try:
        built = report.build(conn, W06, project)
    finally:
        conn.close()
    md, html = report.to_markdown(built), report.to_html(built)
    assert "\\<script\\>alert(1)\\</script\\>" in md  # the attacks are there, as text
    # The only headings are the report's own: its title and its sections'.
    lines = md.splitlines()
    title, sections = lines[0], {f"## {section.title}" for section in built.sections}
    assert title.startswith("# perfboard weekly report ")
    assert {line for line in lines[1:] if line.lstrip().startswith("#")} <= sections
    body = "\n".join([title.removeprefix("# "), *(ln for ln in lines[1:] if ln not in sections)])
    assert not live_markup(body), live_markup(body)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert_inert_html(html)  # parsed as a browser would: every href is https


# -- SQL: every value bound ----------------------------------------------------------------------

INJECTIONS = [
    "1' OR '1'='1",
    "1; DROP TABLE measurements; --",
    "../../etc/passwd",
    "A" * 10_000 + "' OR '1'='1",
    "9" * 5_000,  # past int()'s 4,300 digits, and a browser number's 2**53
    "²",  # a digit to str.isdigit, not to int
]
# The query parameters each page reads (test_every_query_parameter_a_page_reads_is_tried
# keeps this list whole).
PAGE_PARAMS = {
    "": ["q"],
    "phases": ["phase", "x"],
    "trends": [
        *("metric", "x", "log", "benchmark", "framework", "device", "precision"),
        *("batch_size", "seq_len", "threads", "project", "lines", "dates"),
    ],
    "prs": ["pr"],
    "compare": ["part", "a_kind", "a", "b_kind", "b", "dim", "metric", "series", "from", "to"],
    "explain": ["alert", "series", "run", "vs"],
    "profiles": ["run", "vs"],
    "ops": ["op", "vs", "device", "direction", "lose", "time"],
    "alerts": ["alert"],
    "report": ["week", "project"],
    "sources": ["source", "line"],
}


def test_every_query_parameter_a_page_reads_is_tried() -> None:
    read = re.compile(
        r"""(?:params\.get|query_params\.get|asked|url_int|url_text)\(\s*"(\w+)"|"""
        r"""url_(?:state|value|list)\(\s*PAGE,\s*"(\w+)"|key="(\w+)",\s*bind="query-params\""""
    )
    filters = re.compile(r'^\s+"(\w+)": "[^"]+",$', re.M)  # Trends' FILTERS
    for path, page in hostile.PAGES.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        names = {next(g for g in m.groups() if g) for m in read.finditer(text)}
        if path == "trends":
            names |= set(filters.findall(text.split("FILTERS = {")[1].split("}")[0]))
        assert names <= set(PAGE_PARAMS[path]), (page, names - set(PAGE_PARAMS[path]))


def file_digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("path", list(PAGE_PARAMS))
def test_query_parameters_cannot_inject_sql(
    monkeypatch: pytest.MonkeyPatch, store: Path, path: str
) -> None:
    """Each parameter of the page alone, then all of them at once, set to each injection:
    the page runs without an exception or an error, and the store is as it was."""
    before, digest = hostile.row_counts(store), file_digest(store)
    names = PAGE_PARAMS[path]
    tries = [{name: value} for name in names for value in INJECTIONS]
    tries += [dict.fromkeys(names, value) for value in INJECTIONS]
    if path == "compare":  # a version and a release side reach SQL as typed
        tries += [{"a_kind": "version", "a": v, "b_kind": "release", "b": v} for v in INJECTIONS]
    if path == "explain":  # an alert key and run keys, with no series to fall back on
        tries += [{"alert": v, "run": v, "vs": v} for v in INJECTIONS]
    for params in tries:
        at = view(monkeypatch, store, path, params)
        assert not at.error, (params, [e.value for e in at.error])
    assert hostile.row_counts(store) == before
    assert file_digest(store) == digest  # the pages only read


def test_an_injected_version_is_matched_as_a_literal(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    """Compare's version side goes into SQL as typed: bound, it names no version."""
    at = view(
        monkeypatch,
        store,
        "compare",
        {"a_kind": "version", "a": "v01' OR '1'='1", "b_kind": "version", "b": "x"},
    )
    assert any("Nothing was measured at version v01\\' OR" in i.value for i in at.info)


# A cheap static check that SQL is built only from fixed text. Any f-string, % or
# .format() whose fixed text reads as SQL, and any + with a SQL string, may only splice in
# UPPER_CASE module constants (themselves checked where they are built) or the pieces
# below, each with why it is fixed text. A new one fails here until it is looked at.
SQL_WORDS = re.compile(
    r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|WHERE|CREATE|ALTER|DROP|JOIN|VALUES|ORDER BY|"
    r"GROUP BY|COPY|WITH|WHEN|THEN|NULL|CAST|UNION|LIMIT|TABLE|PRAGMA|ATTACH)\b"
)
CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
# Functions that only quote or list the constants they are given (ingest/results.py).
QUOTERS = {"_sql_list", "_columns_sql", "join"}


def fixed(expression: str) -> bool:
    """Made of constants only: UPPER_CASE names (_SERIES_LABEL, labels.SERIES_LABEL,
    _HASH ...), literals, and QUOTERS applied to them ("_sql_list(STATUSES)")."""
    tree = ast.parse(expression, mode="eval")
    # A module's constant (labels.SERIES_LABEL): the module's name is no value.
    modules = {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and CONSTANT.match(n.attr) and isinstance(n.value, ast.Name)
    }
    for node in ast.walk(tree):
        if id(node) in modules:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in QUOTERS:
                return False
        elif isinstance(node, ast.Attribute) and not CONSTANT.match(node.attr):
            if not (node.attr == "join" and isinstance(node.value, ast.Constant)):
                return False
        elif isinstance(node, ast.Name) and not (CONSTANT.match(node.id) or node.id in QUOTERS):
            return False
    return True


SPLICED = {
    "perfboard/alerts.py": {
        "table": "a name from a fixed tuple ('change_points', 'series_noise'; or"
        " 'alert_triage', 'alert_triage_log')",
        "scope": "a fixed WHERE clause whose values are $ids and $project, bound",
    },
    "perfboard/check.py": {
        "columns": "the fixed _IDENTITY column names, params and testbed cast to VARCHAR",
    },
    "perfboard/db.py": {
        "table": "a name from the fixed _SOURCE_TABLES tuple",
    },
    "perfboard/queries/compare.py": {
        "sql": "one of compare_side's f-strings, which splice only _HASH and _LAST_BEFORE",
        "of_series": "'' or the fixed 'AND series_id = $series', whose value is bound",
        "last_before": "the fixed _LAST_BEFORE, formatted with of_series only",
    },
    "perfboard/queries/ops.py": {
        "summary.source(conn)": "queries.summary.source: a fixed subquery or the fixed NAME",
    },
    "perfboard/queries/store.py": {
        "summary.source(conn)": "queries.summary.source: a fixed subquery or the fixed NAME",
    },
    "perfboard/queries/report.py": {
        "summary.source(conn)": "queries.summary.source: a fixed subquery or the fixed NAME",
    },
    "ingest/results.py": {
        "name": "a field name from the fixed REQUIRED / FIELDS",
        "kind": "a DuckDB type from the fixed FIELDS",
        "columns": "column lists built from FIELDS or k0..k9",
        "load.line_map": "None or the fixed temp table name _staging_lines",
        "line": "_line_sql(): a fixed column or rowid + an int offset",
        "join": "_line_sql(): a fixed JOIN clause",
        "identity_join": "fixed comparisons over the fixed IDENTITY columns",
        "identity_sql": "coalesce() over the fixed IDENTITY columns",
        "table": "a name from a fixed tuple of temp tables",
        "_sql_path(out)": "the export's target path, quoted ('' for ') as COPY takes no"
        " parameter; the path is the operator's own --out",
        "options": "one of two fixed COPY option lists",
        "spec": "_stage_csv: a columns struct of FIELDS' names and types, a CSV header's"
        " unknown names replaced by _unknown_N placeholders",
        "select": "_stage_csv: FIELDS' names, quoted, and NULL::type for the missing ones",
    },
    "perfboard/lake.py": {
        "sql_string(str(path))": "LOAD takes no parameter: an extension file's path, quoted"
        " ('' for ') by sql_string",
        "sql_string(location)": "ATTACH takes no parameter: the operator's PERFBOARD_DB,"
        " quoted by sql_string",
        "suffix": "ATTACH's option list: fixed words and PERFBOARD_LAKE_DATA quoted by sql_string",
    },
    "ingest/save.py": {
        "table": "a name from a fixed tuple of tables",
        "table_name": "_append's callers pass fixed table names",
        "columns": "_append: the quoted column names of an Arrow table save.py built itself",
    },
}


def added(node: ast.expr) -> list[ast.expr]:
    """The operands of a + chain, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return added(node.left) + added(node.right)
    return [node]


def spliced_into_sql(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, expression) of everything spliced into SQL-looking strings."""

    def texts(node: ast.AST) -> list[str]:
        return [
            n.value
            for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]

    for node in ast.walk(tree):
        parts: list[ast.expr] = []
        if isinstance(node, ast.JoinedStr):
            fixed = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if SQL_WORDS.search(fixed):
                parts = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if any(SQL_WORDS.search(t) for t in texts(node.left)):
                parts = [node.right]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and any(SQL_WORDS.search(t) for t in texts(node.func.value))
        ):
            parts = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            operands = added(node)
            if any(
                isinstance(o, ast.Constant)
                and isinstance(o.value, str)
                and SQL_WORDS.search(o.value)
                for o in operands
            ):
                # f-strings among them are checked on their own
                parts = [o for o in operands if not isinstance(o, ast.Constant | ast.JoinedStr)]
        for part in parts:
            yield node.lineno, ast.unparse(part)


def test_sql_is_built_only_from_fixed_fragments() -> None:
    unexplained = []
    checked = 0
    for folder in ("perfboard", "ingest", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, expression in spliced_into_sql(tree):
                checked += 1
                if fixed(expression):
                    continue
                if expression not in SPLICED.get(name, {}):
                    unexplained.append(f"{name}:{line}: {expression}")
    assert checked > 20  # the check sees the SQL it is meant to see
    assert not unexplained, (
        "SQL built with a value that is not a fixed fragment (bind it with ? or $name, or"
        " explain it in SPLICED):\n" + "\n".join(unexplained)
    )


def test_the_static_check_catches_a_spliced_value() -> None:
    bad = ast.parse(
        "def f(conn, name):\n"
        "    conn.execute(f\"SELECT * FROM series WHERE benchmark = '{name}'\")\n"
        '    conn.execute("DELETE FROM runs WHERE source_id = %s" % name)\n'
        '    conn.execute("SELECT * FROM x WHERE y = {}".format(name))\n'
        '    conn.execute("SELECT * FROM x WHERE y = " + name)\n'
        '    conn.execute(f"SELECT * FROM x WHERE y IN {_sql_list(name)}")\n'
        '    conn.execute(f"SELECT {_SERIES_LABEL} FROM x WHERE y IN {_sql_list(STATUSES)}")\n'
    )
    found = [e for _, e in spliced_into_sql(bad)]
    assert found == [*["name"] * 4, "_sql_list(name)", "_SERIES_LABEL", "_sql_list(STATUSES)"]
    assert [fixed(e) for e in found] == [False] * 5 + [True] * 2


# -- the GitHub token ----------------------------------------------------------------------------


@dataclass
class TokenRun:
    """Everything a GitHub sync with TOKEN could have written somewhere."""

    store: Path
    outputs: dict[str, str] = field(default_factory=dict)  # CLI run -> stdout + stderr
    messages: dict[str, str] = field(default_factory=dict)  # scenario -> exception text
    logs: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # Authorization headers GitHub got


def cli(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """`python -m ...` in a fresh process: its exit status and everything it printed."""
    done = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def failure_text(error: BaseException) -> str:
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


@pytest.fixture(scope="module")
def token_run(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenRun]:
    """A sync with TOKEN that succeeds, and each way one fails (bad credentials, a rate
    limit, an HTML error page, a timeout), from the command line and in-process; the
    token from the environment and from Streamlit's secrets file (valid and broken)."""
    home = tmp_path_factory.mktemp("home")  # no ~/.streamlit/secrets.toml of the user's
    work = tmp_path_factory.mktemp("work")
    copy = work / "synced.duckdb"
    shutil.copy(store, copy)
    base_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GITHUB_API_URL")}
    base_env["HOME"] = str(home)
    env = {**base_env, "GITHUB_TOKEN": TOKEN}
    run = TokenRun(copy)
    handler = logging.Handler(level=logging.DEBUG)
    handler.emit = lambda record: run.logs.append(record.getMessage())  # type: ignore[method-assign]
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # urllib3 logs each request at DEBUG
    try:
        with FakeGitHub(token=TOKEN) as fake:
            hostile.add_pulls(fake)
            fake.add_issue(hostile.REPO, 165, title="tracking")
            sync = ["ingest", "github-prs", "--repo", hostile.REPO, "--api-url", fake.base_url]
            for mode in ("--all", "--referenced"):
                status, run.outputs[f"sync {mode}"] = cli(
                    [*sync, mode, "--db", str(copy)], ROOT, env
                )
                assert status == 0, run.outputs[f"sync {mode}"]
            issue = f"https://github.com/{hostile.REPO}/issues/165"
            status, run.outputs["issue"] = cli(
                ["ingest", "github-issue", issue, "--api-url", fake.base_url, "--db", str(copy)],
                ROOT,
                env,
            )
            assert status == 0, run.outputs["issue"]
            reset = str(int(time.time()) + 3600)
            fake.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
            status, run.outputs["rate limit"] = cli([*sync, "--all", "--db", str(copy)], ROOT, env)
            assert status == 1 and "try again in" in run.outputs["rate limit"]
            fake.fail_next(403, body="<html><body><h1>Forbidden</h1></body></html>")
            status, run.outputs["html page"] = cli([*sync, "--all", "--db", str(copy)], ROOT, env)
            assert status == 1 and "not JSON" in run.outputs["html page"]
            # The token from Streamlit's secrets file, as the project's .streamlit/ holds it.
            (work / ".streamlit").mkdir()
            secrets_file = work / ".streamlit" / "secrets.toml"
            secrets_file.write_text(f'[github]\ntoken = "{TOKEN}"\n', encoding="utf-8")
            status, run.outputs["secrets file"] = cli(
                [*sync, "--all", "--db", str(copy)], work, base_env
            )
            assert status == 0, run.outputs["secrets file"]
            # Posting the report (its own client and error path) with the token.
            status, run.outputs["report post"] = cli(
                [
                    "perfboard.report",
                    "--week",
                    hostile.WEEK,
                    "--db",
                    str(copy),
                    "--out",
                    str(work / "out"),
                    "--api-url",
                    fake.base_url,
                    "--post",
                    issue,
                ],
                ROOT,
                env,
            )
            assert status == 0, run.outputs["report post"]
            run.sent = [r.headers.get("authorization", "") for r in fake.requests]
            # In-process: each failure's exception, whole.
            client = github_api.GitHubClient(
                fake.base_url, token=TOKEN, timeout=(2.0, 0.3), max_retries=1, sleep=lambda _: None
            )
            fake.fail_next(200, delay=1.0, times=2)
            with pytest.raises(github_api.GitHubError) as timed_out:
                client.get(f"repos/{hostile.REPO}/pulls")
            run.messages["timeout"] = failure_text(timed_out.value)
            fake.fail_next(403, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
            with pytest.raises(github_api.GitHubError) as limited:
                client.get(f"repos/{hostile.REPO}/pulls")
            run.messages["rate limit"] = failure_text(limited.value)
            fake.fail_next(502, body="<!DOCTYPE html><title>502</title>", times=2)
            with pytest.raises(github_api.GitHubError) as html_page:
                client.get(f"repos/{hostile.REPO}/pulls")
            run.messages["html page"] = failure_text(html_page.value)
            with pytest.raises(github_api.GitHubError) as posted:
                fake.fail_next(401)
                client.post(f"repos/{hostile.REPO}/issues/165/comments", {"body": "x"})
            run.messages["post 401"] = failure_text(posted.value)
        with FakeGitHub(token="another-token") as other:  # GitHub does not know TOKEN
            other.add_repo(hostile.REPO)
            sync = ["ingest", "github-prs", "--repo", hostile.REPO, "--api-url", other.base_url]
            status, run.outputs["bad credentials"] = cli(
                [*sync, "--all", "--db", str(copy)], ROOT, env
            )
            assert status == 1 and "401" in run.outputs["bad credentials"]
            with pytest.raises(github_api.GitHubError) as refused:
                github_api.GitHubClient(other.base_url, token=TOKEN).get(
                    f"repos/{hostile.REPO}/pulls"
                )
            run.messages["bad credentials"] = failure_text(refused.value)
            assert f"{len(TOKEN)} characters" in run.messages["bad credentials"]
        # A secrets file that is not TOML, with the token on the broken line: the parser's
        # message quotes the text, and the text is a secret.
        secrets_file.write_text(f'GITHUB_TOKEN = "{TOKEN}\n', encoding="utf-8")
        status, run.outputs["broken secrets file"] = cli(
            [
                "ingest",
                "github-prs",
                "--repo",
                hostile.REPO,
                "--all",
                "--api-url",
                "http://127.0.0.1:9",
                "--db",
                str(copy),
            ],
            work,
            base_env,
        )
        assert status != 0 and "not valid TOML" in run.outputs["broken secrets file"]
        previous = Path.cwd()
        os.chdir(work)
        try:
            with pytest.raises(github_api.GitHubError) as broken:
                github_api.github_token()
            run.messages["broken secrets file"] = failure_text(broken.value)
        finally:
            os.chdir(previous)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    yield run


def test_the_token_was_used(token_run: TokenRun) -> None:
    """The leak checks below mean something: GitHub was sent TOKEN, from the environment
    and from the secrets file alike."""
    assert token_run.sent.count(f"Bearer {TOKEN}") >= 5
    assert set(token_run.sent) == {f"Bearer {TOKEN}"}


def test_the_token_is_not_in_the_commands_output(token_run: TokenRun) -> None:
    assert len(token_run.outputs) == 9
    for name, output in token_run.outputs.items():
        assert TOKEN not in output, name
        assert TOKEN[4:] not in output, name  # not even without its prefix


def test_the_token_is_not_in_any_error_or_log(token_run: TokenRun) -> None:
    assert set(token_run.messages) == {
        "timeout",
        "rate limit",
        "html page",
        "post 401",
        "bad credentials",
        "broken secrets file",
    }
    for name, text in token_run.messages.items():
        assert TOKEN[4:] not in text, name
    assert token_run.logs  # urllib3 said something
    assert not [line for line in token_run.logs if TOKEN[4:] in line]


def test_the_token_is_not_in_the_store(token_run: TokenRun, tmp_path: Path) -> None:
    conn = duckdb.connect(str(token_run.store), read_only=True)
    try:
        tables = [t for (t,) in conn.execute("SHOW TABLES").fetchall()]
        (cached,) = conn.execute("SELECT count(*) FROM http_cache").fetchone()  # type: ignore[misc]
        for table in tables:
            out = tmp_path / f"{table}.csv"
            # A table name from the store's own catalog, quoted as an identifier.
            conn.execute(f"COPY (SELECT * FROM \"{table}\") TO '{out}' (HEADER)")
            assert TOKEN[4:] not in out.read_text(encoding="utf-8"), table
    finally:
        conn.close()
    assert cached > 0 and {"http_cache", "pull_requests", "sources"} <= set(tables)
    for raw in token_run.store.parent.glob(f"{token_run.store.name}*"):  # the file and a WAL
        assert TOKEN[4:].encode() not in raw.read_bytes(), raw


def test_the_token_is_not_on_any_page_or_in_a_report(
    monkeypatch: pytest.MonkeyPatch, token_run: TokenRun
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # as a dashboard host that also syncs has it
    for path, params in hostile.views(token_run.store):
        at = view(monkeypatch, token_run.store, path, params)
        shown = b"".join(
            node.proto.SerializeToString()
            for node in nodes(at)
            if getattr(node, "proto", None) is not None
        )
        assert TOKEN[4:].encode() not in shown, (path, params)
        for frame in at.dataframe:
            assert TOKEN[4:] not in frame.value.to_csv(), (path, params)
    conn = db.connect(token_run.store, read_only=True)
    try:
        rendered = report.render(conn, W06, None)
    finally:
        conn.close()
    assert TOKEN[4:] not in rendered.markdown and TOKEN[4:] not in rendered.html


# -- optional sign-in ----------------------------------------------------------------------------

AUTH = {
    "auth": {
        "redirect_uri": "http://localhost:8501/oauth2callback",
        "cookie_secret": "a-cookie-secret",
        "client_id": "perfboard",
        "client_secret": "a-client-secret",
        "server_metadata_url": "https://idp.example/.well-known/openid-configuration",
    }
}


def signed_in_app(
    monkeypatch: pytest.MonkeyPatch,
    store: Path,
    user: dict[str, object],
    page: str | None = None,
    auth: bool = True,
) -> AppTest:
    """app.py as `user` sees it (st.user seeded by AppTest; a real sign-in needs an
    identity provider), with an [auth] section in the secrets unless auth=False."""
    monkeypatch.setenv("PERFBOARD_DB", str(store))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    # Secrets of the test's own (without [auth] when auth=False), never the machine's.
    at.secrets = json.loads(json.dumps(AUTH)) if auth else {"other": {"key": "value"}}
    at.user = user
    if page:
        at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def shows_data(at: AppTest) -> bool:
    return bool(at.dataframe or at.metric or at.get("vega_lite_chart") or at.sidebar.children)


def test_sign_in_is_off_by_default(monkeypatch: pytest.MonkeyPatch, store: Path) -> None:
    monkeypatch.delenv("PERFBOARD_AUTH", raising=False)
    monkeypatch.delenv("PERFBOARD_ALLOWED_USERS", raising=False)
    at = signed_in_app(monkeypatch, store, {"is_logged_in": False})
    assert [t.value for t in at.title] == ["Overview"] and shows_data(at)


def test_a_visitor_who_has_not_signed_in_sees_only_the_sign_in_button(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "alice@example.com")
    at = signed_in_app(monkeypatch, store, {"is_logged_in": False})
    assert [b.label for b in at.button] == ["Sign in"]
    assert [i.value for i in at.info] == ["Sign in to see perfboard."]
    assert not at.title and not shows_data(at)


@pytest.mark.parametrize(
    "user",
    [
        {"is_logged_in": True, "email": "eve@example.com"},
        {"is_logged_in": True, "email": "alice@example.com", "email_verified": False},
        {"is_logged_in": True, "name": "no email"},
    ],
    ids=["not on the list", "unverified email", "no email"],
)
def test_a_user_not_on_the_allow_list_sees_not_allowed_and_sign_out(
    monkeypatch: pytest.MonkeyPatch, store: Path, user: dict[str, object]
) -> None:
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "Alice@Example.com, bob@example.com")
    at = signed_in_app(monkeypatch, store, user)
    assert [b.label for b in at.button] == ["Sign out"]
    [error] = at.error
    assert "not allowed" in error.value
    assert not at.title and not at.info and not shows_data(at)
    at.button[0].click().run()  # st.logout(): signed out, the next run asks to sign in
    assert at.user == {"is_logged_in": False}
    assert [b.label for b in at.run().button] == ["Sign in"]


def test_a_deep_link_run_without_app_py_still_shows_no_data(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    """A page run bare (plain `streamlit run`'s legacy pages/ mode does that for a first
    deep link; so does AppTest) stops at its first query."""
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "alice@example.com")
    for page in ("pages/phases.py", "pages/sources.py", "pages/alerts.py"):
        at = signed_in_app(monkeypatch, store, {"is_logged_in": True, "email": "x@y.z"}, page)
        assert "not allowed" in at.error[0].value
        assert not at.dataframe and not at.metric and not at.get("vega_lite_chart")


def test_an_allowed_user_sees_every_page(monkeypatch: pytest.MonkeyPatch, store: Path) -> None:
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "Alice@Example.com, bob@example.com")
    user = {"is_logged_in": True, "email": "alice@example.com", "email_verified": True}
    at = signed_in_app(monkeypatch, store, user)
    assert [t.value for t in at.title] == ["Overview"] and not at.error and shows_data(at)
    phases = signed_in_app(monkeypatch, store, user, "pages/phases.py")
    assert [t.value for t in phases.title] == ["Phases"] and phases.dataframe


def test_an_auth_section_and_an_allow_list_turn_sign_in_on(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    monkeypatch.delenv("PERFBOARD_AUTH", raising=False)
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "alice@example.com")
    at = signed_in_app(monkeypatch, store, {"is_logged_in": False})
    assert [b.label for b in at.button] == ["Sign in"] and not shows_data(at)
    # An allow-list without an [auth] section: nothing to sign in with, sign-in stays off.
    at = signed_in_app(monkeypatch, store, {}, auth=False)
    assert [t.value for t in at.title] == ["Overview"]


def test_sign_in_on_without_an_auth_section_lets_nobody_in(
    monkeypatch: pytest.MonkeyPatch, store: Path
) -> None:
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.setenv("PERFBOARD_ALLOWED_USERS", "alice@example.com")
    at = signed_in_app(
        monkeypatch, store, {"is_logged_in": True, "email": "alice@example.com"}, auth=False
    )
    assert "no `[auth]` section" in at.error[0].value and not shows_data(at)


def test_an_empty_allow_list_lets_nobody_in(monkeypatch: pytest.MonkeyPatch, store: Path) -> None:
    monkeypatch.setenv("PERFBOARD_AUTH", "1")
    monkeypatch.delenv("PERFBOARD_ALLOWED_USERS", raising=False)
    at = signed_in_app(monkeypatch, store, {"is_logged_in": True, "email": "alice@example.com"})
    assert "not allowed" in at.error[0].value and not shows_data(at)
