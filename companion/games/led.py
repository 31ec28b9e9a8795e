"""Small LED boards for the games beside Vault Assault: a line of 3x5 text on rows 0-4
and up to two rows of marks (rows 6 and 7), plus the flash words and a cycling
game-over screen, on the same 32x8 frame and fonts as Vault Assault's board."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import Frame
from companion.display.model import FLASH_WORDS, GAME_OVER_HOLD_TICKS, flash_frame


def marks(row: int, cells: Iterable[tuple[int, bool]], width: int = 3) -> list[tuple[int, int]]:
    """Pixels for marks on `row`: (index, lit) pairs, each mark `width` px + 1 px gap;
    an unlit mark wider than 1 px shows its first pixel only (the spaces can be
    counted); an unlit 1-px mark is dark."""
    px = []
    for i, lit in cells:
        x0 = i * (width + 1)
        for x in range(x0, x0 + (width if lit else min(1, width - 1))):
            if x < 32:
                px.append((x, row))
    return px


def board(text: str, rows: Iterable[tuple[int, int]] = ()) -> Frame:
    frame = render_text(text, FONT_3X5, x=0, y=0)
    return frame.union(Frame.from_pixels(list(rows)))


def flash(word_of: Mapping[str, str], name: str, tick: int) -> Frame:
    if name.startswith("pin:"):
        return flash_frame("PIN " + name[4:], tick)
    return flash_frame(word_of.get(name) or FLASH_WORDS.get(name, name.upper()), tick)


def cycling(lines: list[str], tick: int) -> Frame:
    """Each line held (or scrolled, when wider than the frame) in turn, forever."""
    spans = []
    for text in lines:
        w = FONT_3X5.text_width(text)
        spans.append(GAME_OVER_HOLD_TICKS if w <= 32 else w - 32 + 5 + GAME_OVER_HOLD_TICKS)
    t = tick % max(1, sum(spans))
    for text, n in zip(lines, spans, strict=True):
        if t < n:
            return flash_frame(text, t)
        t -= n
    return flash_frame(lines[0], 0)
