"""A monochrome LED frame: the unit the display model produces and display drivers show.

A frame is immutable: rows are stored as bit-packed integers (bit x of row y is pixel
(x, y), x counting from the left). Its size is the display's: the display says it at
start-up (``size``: a MAX7219 chain is 8 pixels wide per module) and the referee has
the games draw for it (companion.loop.Referee.size). The box's chain of four 8x8 modules
is 32x8, ``DEFAULT_SIZE``, which is also the size of the terminal's and the page's
frames when no LED panel says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

WIDTH = 32
HEIGHT = 8
Size = tuple[int, int]  # (width, height) in pixels
DEFAULT_SIZE: Size = (WIDTH, HEIGHT)


@dataclass(frozen=True)
class Frame:
    width: int = WIDTH
    height: int = HEIGHT
    rows: tuple[int, ...] = (0,) * HEIGHT

    @classmethod
    def blank(cls, width: int = WIDTH, height: int = HEIGHT) -> Frame:
        return cls(width, height, (0,) * height)

    @classmethod
    def from_pixels(
        cls, pixels: Iterable[tuple[int, int]], width: int = WIDTH, height: int = HEIGHT
    ) -> Frame:
        rows = [0] * height
        for x, y in pixels:
            if 0 <= x < width and 0 <= y < height:
                rows[y] |= 1 << x
        return cls(width, height, tuple(rows))

    def pixel(self, x: int, y: int) -> bool:
        if not (0 <= x < self.width and 0 <= y < self.height):
            return False
        return bool(self.rows[y] >> x & 1)

    def lit(self) -> list[tuple[int, int]]:
        return [(x, y) for y in range(self.height) for x in range(self.width) if self.pixel(x, y)]

    def count(self) -> int:
        return sum(bin(r).count("1") for r in self.rows)

    def inverted(self) -> Frame:
        mask = (1 << self.width) - 1
        return Frame(self.width, self.height, tuple(~r & mask for r in self.rows))

    def union(self, other: Frame) -> Frame:
        return Frame(
            self.width,
            self.height,
            tuple(a | b for a, b in zip(self.rows, other.rows, strict=True)),
        )

    def to_lines(self, on: str = "█", off: str = "·") -> list[str]:
        return [
            "".join(on if self.pixel(x, y) else off for x in range(self.width))
            for y in range(self.height)
        ]

    def to_image(self):  # -> PIL.Image.Image, mode "1"
        """The frame as a 1-bit PIL image, the form luma devices display."""
        from PIL import Image

        img = Image.new("1", (self.width, self.height), 0)
        px = img.load()
        for x, y in self.lit():
            px[x, y] = 1
        return img
