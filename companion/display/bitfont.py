"""Two tiny bitmap fonts for the LED display, as data, and text layout into Frames of
any size (by default the box's 32x8).

``FONT_5X7``: classic 5x7 capitals, digits and a little punctuation (the HD44780 shapes),
readable from across the table; "BANG!" or "EMPTY!" fit on 32 px.
``FONT_3X5``: 3x5 capitals and digits, for words like "HOSTAGE!" that do not fit in 5x7.

Glyphs are stored as one integer per row, most significant of ``width`` bits = leftmost
column. Layout is proportional: empty columns at a glyph's sides are dropped (so "!" is
one pixel wide) and glyphs are one column apart. Lowercase is drawn as uppercase;
characters a font lacks are drawn as "?".
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.display.frame import HEIGHT, WIDTH, Frame


@dataclass(frozen=True)
class Font:
    name: str
    width: int  # cell width in bits
    height: int  # rows per glyph
    top: int  # row of the display the glyph's first row goes to
    space: int  # width of " "
    glyphs: dict[str, tuple[int, ...]]

    def columns(self, ch: str) -> list[int]:
        """The glyph's columns left to right, each a bit mask of rows (bit r = row r),
        empty side columns trimmed."""
        if ch == " ":
            return [0] * self.space
        rows = self.glyphs.get(ch.upper(), self.glyphs["?"])
        cols = [
            sum(1 << r for r, bits in enumerate(rows) if bits >> (self.width - 1 - c) & 1)
            for c in range(self.width)
        ]
        while cols and cols[0] == 0:
            cols.pop(0)
        while cols and cols[-1] == 0:
            cols.pop()
        return cols or [0]

    def text_width(self, text: str) -> int:
        if not text:
            return 0
        return sum(len(self.columns(ch)) for ch in text) + len(text) - 1


FONT_5X7 = Font(
    name="5x7",
    width=5,
    height=7,
    top=0,
    space=3,
    glyphs={
        "A": (0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11),
        "B": (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
        "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E),
        "D": (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
        "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F),
        "F": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
        "G": (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F),
        "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
        "I": (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E),
        "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
        "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11),
        "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
        "M": (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11),
        "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
        "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
        "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
        "Q": (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D),
        "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
        "S": (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E),
        "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
        "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E),
        "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
        "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A),
        "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
        "Y": (0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04),
        "Z": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
        "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E),
        "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
        "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F),
        "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
        "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02),
        "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
        "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E),
        "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
        "8": (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E),
        "9": (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
        "!": (0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04),
        "?": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04),
        ".": (0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C),
        ",": (0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08),
        ":": (0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00),
        "-": (0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00),
        "+": (0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00),
        "/": (0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00),
        "$": (0x04, 0x0F, 0x14, 0x0E, 0x05, 0x1E, 0x04),
        "#": (0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A),
    },
)

FONT_3X5 = Font(
    name="3x5",
    width=3,
    height=5,
    top=1,
    space=2,
    glyphs={
        "A": (2, 5, 7, 5, 5),
        "B": (6, 5, 6, 5, 6),
        "C": (3, 4, 4, 4, 3),
        "D": (6, 5, 5, 5, 6),
        "E": (7, 4, 6, 4, 7),
        "F": (7, 4, 6, 4, 4),
        "G": (3, 4, 5, 5, 3),
        "H": (5, 5, 7, 5, 5),
        "I": (7, 2, 2, 2, 7),
        "J": (1, 1, 1, 5, 2),
        "K": (5, 5, 6, 5, 5),
        "L": (4, 4, 4, 4, 7),
        "M": (5, 7, 7, 5, 5),
        "N": (6, 5, 5, 5, 5),
        "O": (2, 5, 5, 5, 2),
        "P": (6, 5, 6, 4, 4),
        "Q": (2, 5, 5, 6, 3),
        "R": (6, 5, 6, 5, 5),
        "S": (3, 4, 2, 1, 6),
        "T": (7, 2, 2, 2, 2),
        "U": (5, 5, 5, 5, 7),
        "V": (5, 5, 5, 5, 2),
        "W": (5, 5, 7, 7, 5),
        "X": (5, 5, 2, 5, 5),
        "Y": (5, 5, 2, 2, 2),
        "Z": (7, 1, 2, 4, 7),
        "0": (7, 5, 5, 5, 7),
        "1": (2, 6, 2, 2, 7),
        "2": (6, 1, 2, 4, 7),
        "3": (6, 1, 2, 1, 6),
        "4": (5, 5, 7, 1, 1),
        "5": (7, 4, 6, 1, 6),
        "6": (3, 4, 7, 5, 7),
        "7": (7, 1, 2, 2, 2),
        "8": (7, 5, 7, 5, 7),
        "9": (7, 5, 7, 1, 6),
        "!": (2, 2, 2, 0, 2),
        "?": (6, 1, 2, 0, 2),
        ".": (0, 0, 0, 0, 2),
        ":": (0, 2, 0, 2, 0),
        "-": (0, 0, 7, 0, 0),
        "+": (0, 2, 7, 2, 0),
        "/": (1, 1, 2, 4, 4),
    },
)


def render_text(
    text: str,
    font: Font = FONT_5X7,
    x: int = 0,
    y: int | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
) -> Frame:
    """Text drawn with its left edge at column ``x`` (may be negative: scrolled off),
    rows from ``y`` (default: the font's own placement). Clipped to the frame."""
    top = font.top if y is None else y
    rows = [0] * height
    mask = (1 << width) - 1
    cx = x
    for ch in text:
        for col in font.columns(ch):
            if 0 <= cx < width:
                for r in range(font.height):
                    if col >> r & 1 and 0 <= top + r < height:
                        rows[top + r] |= 1 << cx
            cx += 1
        cx += 1
    return Frame(width, height, tuple(r & mask for r in rows))


def fits(text: str, font: Font, width: int = WIDTH) -> bool:
    return font.text_width(text) <= width


def centred_text(
    text: str, font: Font = FONT_5X7, width: int = WIDTH, height: int = HEIGHT
) -> Frame:
    """Text centred horizontally (clipped if wider than the frame)."""
    x = (width - font.text_width(text)) // 2
    return render_text(text, font, x=x, width=width, height=height)
