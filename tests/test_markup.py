"""Untrusted text escaped for Streamlit's markdown."""

from __future__ import annotations

from perfboard.markup import md_escape


def test_links_images_and_html_become_literal_text() -> None:
    assert md_escape("[x](javascript:alert(1))") == r"\[x\]\(javascript\:alert\(1\)\)"
    assert md_escape("![t](https://tracker.example/p.png)").startswith(r"\!\[t\]\(https\:")
    assert md_escape("<script>alert(1)</script>") == r"\<script\>alert\(1\)\<\/script\>".replace(
        r"\/", "/"
    )
    assert md_escape("# heading\n- item") == r"\# heading \- item"


def test_plain_text_and_chinese_are_kept() -> None:
    assert md_escape("二期优化工作") == "二期优化工作"
    assert md_escape("NHZlX") == "NHZlX"
    assert md_escape(None) == ""
    assert md_escape("Tesla P4") == "Tesla P4"
