"""Untrusted text escaped for Streamlit's markdown and for GitHub's."""

from __future__ import annotations

from perfboard.markup import gfm_escape, md_escape


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


def test_github_markdown_escapes_only_what_github_reads_as_markup() -> None:
    # A series label of the weekly report reads as written when pasted into an issue.
    label = "ernie · latency · paddle · Tesla P4 (simulated) · fp32 · batch_size=1, seq_len=128"
    assert gfm_escape(label) == label
    assert gfm_escape("10 -> 9.5 ms (-5.0%)") == r"10 -\> 9.5 ms (-5.0%)"
    # Links, images, HTML, autolinks, code, emphasis, strikethrough, cells, math: literal.
    assert gfm_escape("[x](javascript:alert(1))") == r"\[x\](javascript:alert(1))"
    assert (
        gfm_escape("![t](https://tracker.example/p.png)")
        == r"!\[t\](https://tracker.example/p.png)"
    )
    assert gfm_escape("<script>alert(1)</script>") == r"\<script\>alert(1)\</script\>"
    assert gfm_escape("`x` *b* _e_ ~~s~~ a|b $x$") == r"\`x\` \*b\* \_e\_ \~\~s\~\~ a\|b \$x\$"
    assert gfm_escape("&lt;b&gt; & more") == r"\&lt;b\&gt; & more"
    assert gfm_escape("# heading\n- item") == r"\# heading - item"  # one line, no block
    assert gfm_escape(None) == ""
    assert gfm_escape("1. item") == r"1\. item" and gfm_escape("> quote") == r"\> quote"
