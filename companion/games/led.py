"""Small LED boards for the games beside Vault Assault: a line of 3x5 text on rows 0-4
and up to two rows of marks (rows 6 and 7), plus the flash words and a cycling
game-over screen, in the same fonts as Vault Assault's board.

Drawn for the panel's ``size`` (the display's; default the box's 32x8): the text from
the left edge, the marks as far as the panel reaches, the words centred (or scrolled)
across its width. The lines are written to fit 32 pixels: on a narrower panel their
ends are cut off (``serve`` says so at start-up); on a wider one they keep to the left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import DEFAULT_SIZE, Frame, Size
from companion.display.model import FLASH_WORDS, GAME_OVER_HOLD_TICKS, flash_frame


def marks(row: int, cells: Iterable[tuple[int, bool]], width: int = 3) -> list[tuple[int, int]]:
    """Pixels for marks on `row`: (index, lit) pairs, each mark `width` px + 1 px gap;
    an unlit mark wider than 1 px shows its first pixel only (the spaces can be
    counted); an unlit 1-px mark is dark. Marks past the panel's edge are cut off by
    the frame (`board`)."""
    px = []
    for i, lit in cells:
        x0 = i * (width + 1)
        for x in range(x0, x0 + (width if lit else min(1, width - 1))):
            px.append((x, row))
    return px


def board(text: str, rows: Iterable[tuple[int, int]] = (), size: Size = DEFAULT_SIZE) -> Frame:
    width, height = size
    frame = render_text(text, FONT_3X5, x=0, y=0, width=width, height=height)
    return frame.union(Frame.from_pixels(list(rows), width, height))


def flash(word_of: Mapping[str, str], name: str, tick: int, size: Size = DEFAULT_SIZE
          ) -> Frame:
    if name.startswith("pin:"):
        return flash_frame("PIN " + name[4:], tick, size)
    if name.startswith("check:"):  # the camera challenges a claim: "CHK 4/5" (fits 32)
        return flash_frame("CHK " + name[6:], tick, size)
    return flash_frame(word_of.get(name) or FLASH_WORDS.get(name, name.upper()), tick, size)


def cycling(lines: list[str], tick: int, size: Size = DEFAULT_SIZE) -> Frame:
    """Each line held (or scrolled, when wider than the panel) in turn, forever."""
    width = size[0]
    spans = []
    for text in lines:
        w = FONT_3X5.text_width(text)
        spans.append(GAME_OVER_HOLD_TICKS if w <= width
                     else w - width + 5 + GAME_OVER_HOLD_TICKS)
    t = tick % max(1, sum(spans))
    for text, n in zip(lines, spans, strict=True):
        if t < n:
            return flash_frame(text, t, size)
        t -= n
    return flash_frame(lines[0], 0, size)
