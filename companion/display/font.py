"""Text for the display model (GLYPH_H, text_width, text_pixels).

NOTE FOR THE LEAD: the issue-3 display helper overwrote this file by accident at
11:06 UTC (a create on a path that had appeared seconds earlier). It was recreated with
the API that model.py imports, on top of the helper's fonts in bitfont.py (3x5 glyphs).
If your original differed, put it back: nothing of the helper's depends on this file.
"""

from __future__ import annotations

from companion.display.bitfont import FONT_3X5

GLYPH_H = FONT_3X5.height


def text_width(text: str) -> int:
    """Width in pixels of ``text`` (proportional glyphs, one blank column between)."""
    return FONT_3X5.text_width(text)


def text_pixels(text: str, x: int = 0, y: int = 0) -> list[tuple[int, int]]:
    """The lit pixels of ``text`` with its top-left corner at (x, y); unclipped."""
    px: list[tuple[int, int]] = []
    cx = x
    for ch in text:
        for col in FONT_3X5.columns(ch):
            px += [(cx, y + r) for r in range(FONT_3X5.height) if col >> r & 1]
            cx += 1
        cx += 1
    return px
