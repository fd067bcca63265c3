"""The CJK web font the dashboard's pages draw Chinese with, whatever fonts the browser's
machine has.

    python scripts/make_web_font.py [--out static/noto-sans-sc-gb2312.otf]

A browser draws a page's text with its own machine's fonts. On one with no CJK font (a bare
Debian desktop, CI's Chromium) every Chinese character of a phase name, a picker, a data
grid or a chart label came out as the same empty box. The report's PNG and SVG charts carry
their font already (perfboard/fonts.py); this is the same font for the pages: Noto Sans CJK
SC from the pinned noto-cjk-sans-otc package, cut down with fontTools to the characters of
GB2312's level 1 (its 3,755 commonest simplified hanzi, with kana, CJK punctuation and
full-width forms), as OpenType. About 1.5 MB, downloaded once per browser and only by a page
that shows one of those characters (the unicode-range of its @font-face: ui.cjk_web_font).
A page that shows one loads the whole file: with GB2312's level 2 as well (2.8 MB) a
Phases load took about 0.1 s more; at 1.5 MB no difference was measurable. A rarer
character falls to the browser's own fonts. The file is made by `make run` and `make
test` (about 15 s), not kept in git. Plain OpenType, not
WOFF2: its outlines are CFF, which WOFF2's compression shrinks by a tenth, for one more
dependency (brotli).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfboard.fonts import CJK_RANGES, WEB_FONT  # noqa: E402

SIMPLIFIED_CHINESE = 2  # the SC face of the collection (JP, KR, SC, TC, HK, then Mono)
# GB2312's rows: 0xA1-0xA9 symbols, punctuation, kana, full-width forms; 0xB0-0xD7 its
# level 1, the 3,755 commonest hanzi (0xD8-0xF7, level 2, the rarer 3,008, would double
# the file, and every page that shows Chinese loads the whole of it: about 0.1 s a load).
GB2312_ROWS = [*range(0xA1, 0xAA), *range(0xB0, 0xD8)]


def gb2312_characters() -> list[str]:
    """Every character of GB2312's rows above, in its order, CJK and full-width ones only
    (its Latin, Greek and Cyrillic are the page's own font's)."""
    characters = []
    for row in GB2312_ROWS:
        for cell in range(0xA1, 0xFF):
            try:
                character = bytes([row, cell]).decode("gb2312")
            except UnicodeDecodeError:
                continue
            if any(low <= ord(character) <= high for low, high in CJK_RANGES):
                characters.append(character)
    return characters


def make(out: Path) -> int:
    """Write the subset font to `out` (atomically); the number of characters it holds."""
    import noto_cjk_sans_otc
    from fontTools import subset
    from fontTools.ttLib import TTFont

    characters = gb2312_characters()
    font = TTFont(str(noto_cjk_sans_otc.FONT_PATH), fontNumber=SIMPLIFIED_CHINESE, lazy=True)
    options = subset.Options()
    options.hinting = False  # no hints, the default layout features: a fifth smaller
    options.name_IDs = ["*"]  # its copyright and licence (SIL OFL 1.1) stay in the file
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in characters])
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".tmp", delete=False) as tmp:
        font.save(tmp.name)
    Path(tmp.name).chmod(0o644)
    Path(tmp.name).replace(out)
    return len(characters)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "static" / WEB_FONT)
    args = parser.parse_args()
    count = make(args.out)
    print(f"{args.out}: {count} characters, {args.out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
