"""Text from documents, shown as text: escaped for Streamlit's markdown, or GitHub's.

Headings, captions, subheaders, metric and expander labels in Streamlit are markdown:
a phase named ``[x](javascript:alert(1))`` or holding ``![](https://tracker/...)`` would
become a link or an image fetched from anywhere. Every string that comes from a
document or from GitHub goes through ``md_escape`` before it reaches one of those.

The weekly report's Markdown is read raw too (pasted into an issue, kept in a repository):
there ``gfm_escape`` escapes only what GitHub-flavoured Markdown would read as markup in a
line of text or a table cell, so "batch_size=1, seq_len=128 (simulated)" stays as written.
"""

from __future__ import annotations

import re

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping
# them all leaves no way to start a link, an image, emphasis, code or raw HTML.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&=\"'])")


def md_escape(text: object) -> str:
    """The text, to be shown as written inside Streamlit markdown."""
    if text is None:
        return ""
    flat = " ".join(str(text).split())  # no line breaks: no new block (lists, headings)
    return _SPECIAL.sub(r"\\\1", flat)


# What starts markup inline in GitHub-flavoured Markdown: code, emphasis, strikethrough,
# links and images ([ ]), raw HTML and autolinks (< >), table cells (|), math ($) and the
# backslash itself. An underscore inside a word is no emphasis in GFM (batch_size), and
# "(", "-", "=", "#" or "." mean nothing inside a line once "[" cannot open a link.
_GFM_SPECIAL = re.compile(r"([\\`*~\[\]<>|$])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|&(?=#?\w+;)")


# What starts a block at the start of a line: a heading ("# "), a list item ("- ", "+ ",
# "1. "), a rule or a setext underline ("---", "==="). "-5.0%" or "9.5 ms" starts none.
_GFM_BLOCK_START = re.compile(r"#{1,6}(?=\s|$)|[-+](?=\s|$)|\d{1,9}[.)](?=\s|$)|[=-]+\s*$")


def gfm_escape(text: object) -> str:
    """The text, to be shown as written in GitHub-flavoured Markdown (one line)."""
    if text is None:
        return ""
    flat = " ".join(str(text).split())  # no line breaks: no new block (lists, headings)
    escaped = _GFM_SPECIAL.sub(lambda m: "\\" + m.group(0), flat)
    # It may start a line of the report: no heading, quote, list or rule starts there
    # ("1. " is escaped at its dot: a backslash before a digit would be shown).
    start = _GFM_BLOCK_START.match(escaped)
    if start is None:
        return escaped
    at = start.end() - 1 if escaped[0].isdigit() else 0
    return escaped[:at] + "\\" + escaped[at:]


def short_version(version: object) -> str:
    """A version as a person reads it: a commit hash cut to 10 characters (as the charts
    show it), anything else as it is, "?" when there is none."""
    if not isinstance(version, str) or not version:
        return "?"
    is_hash = len(version) >= 12 and all(c in "0123456789abcdef" for c in version.lower())
    return version[:10] if is_hash else version
