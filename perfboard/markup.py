"""Text from documents, shown as text: escaped for Streamlit's markdown.

Headings, captions, subheaders, metric and expander labels in Streamlit are markdown:
a phase named ``[x](javascript:alert(1))`` or holding ``![](https://tracker/...)`` would
become a link or an image fetched from anywhere. Every string that comes from a
document or from GitHub goes through ``md_escape`` before it reaches one of those.
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
