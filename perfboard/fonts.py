"""vl-convert with the CJK font the report's charts draw Chinese in, carried by a package.

vl-convert (resvg, in-process) draws with the system's fonts and with those registered
with it. On a machine without a CJK font (no Debian fonts-noto-cjk) every Chinese
character of a PNG chart came out as the same empty box. The font comes instead from the
pinned PyPI package noto-cjk-sans-otc: Noto Sans CJK Regular 2.004, byte for byte the
NotoSansCJK-Regular.ttc that fonts-noto-cjk installs, so a chart draws the same on any
machine. Its folder is registered once per process, before the first render: every use
of vl-convert gets the module from `vl_convert()` here.

The charts' text is set in Source Sans Pro (LATIN_FONT), from the pinned PyPI package
font-source-sans-pro, registered beside it: vl-convert measures every label in the first
font named, and the generic sans-serif named before was whatever the machine had, so the
same report laid its legends out 3 px apart on two machines (DejaVu Sans with and without
its extra faces) and its golden test failed on one of them. The characters Source Sans Pro
lacks, Chinese among them, are drawn by fallback in the registered CJK font
(tests/test_report.py checks that two characters draw differently).
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

# The pages' CJK font: an OpenType subset of the same Noto Sans CJK SC, made by
# scripts/make_web_font.py into static/ and declared by perfboard.ui.cjk_web_font for the
# characters of these ranges only (CJK punctuation, kana, bopomofo, the unified ideographs,
# full-width forms): a browser fetches it only for a page that shows one of them.
WEB_FONT = "noto-sans-sc-gb2312.otf"
LATIN_FONT = "Source Sans Pro"  # the charts' text (report._spec), from font-source-sans-pro
CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3100, 0x312F),
    (0x4E00, 0x9FFF),
    (0xFF00, 0xFFEF),
)


def unicode_range() -> str:
    """CJK_RANGES as a CSS unicode-range."""
    return ", ".join(f"U+{low:04X}-{high:04X}" for low, high in CJK_RANGES)


_lock = threading.Lock()  # Streamlit renders the Report page of each session in a thread
_ready: ModuleType | None = None


def cjk_font_folder() -> Path:
    """The folder holding Noto Sans CJK (one collection: SC, TC, HK, JP and KR faces)."""
    import noto_cjk_sans_otc

    font = Path(str(noto_cjk_sans_otc.FONT_PATH))
    if not font.is_file():
        raise FileNotFoundError(f"{font}: noto-cjk-sans-otc lost its font; reinstall it")
    return font.parent


def latin_font_folder() -> Path:
    """The folder holding Source Sans Pro (its weights, each as OTF and TTF: the same
    advance widths, so a label measures the same whichever of the two is taken)."""
    import font_source_sans_pro

    folder = Path(font_source_sans_pro.font_directory)
    if not (folder / "SourceSansPro-Regular.ttf").is_file():
        raise FileNotFoundError(f"{folder}: font-source-sans-pro lost its font; reinstall it")
    return folder


def vl_convert() -> ModuleType:
    """The vl_convert module, with the charts' fonts registered (by the process's first
    call)."""
    global _ready
    if _ready is None:
        with _lock:
            if _ready is None:
                import vl_convert as vlc

                vlc.register_font_directory(str(latin_font_folder()))
                vlc.register_font_directory(str(cjk_font_folder()))
                _ready = vlc
    return _ready
