"""Short flashes for the LED display, as pure functions returning (Frame, duration_ms).

``flash(kind)`` gives the animation for one of :data:`KINDS`. Its first frame is the
word itself (the verdict is readable the moment it is shown), then a little picture
that catches the eye (burst, bars, sweep...) and then the word again, big (5x7) when it fits on
the display, else scrolled through once in 5x7 and then held in the 3x5 font. An
optional ``detail`` ("SEAT 2", "12US") follows the word. Nothing here sleeps or draws:
a display driver plays the list (``LedMatrixDisplay.play``) and the event loop may
interrupt it whenever something newer must be shown. Each animation is built once
per panel size and kept (``flash`` returns the kept frames; ``prebuild(width, height)``
builds them all ahead), so showing a verdict costs no drawing.

Every animation is drawn for the panel's size (``width``, ``height``: the display's,
companion.display.led_display; by default the box's 32x8): the word centred or
scrolled across the whole width, the pictures spread over it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from companion.display.bitfont import FONT_3X5, FONT_5X7, centred_text, render_text
from companion.display.frame import HEIGHT, WIDTH, Frame

Step = tuple[Frame, int]

WORDS = {
    "go": "GO!",
    "bang": "BANG!",
    "hostage": "HOSTAGE!",
    "escaped": "ESCAPED!",
    "arrested": "ARRESTED!",
    "empty": "EMPTY!",
    "photo_finish": "PHOTO FINISH!",
}
KINDS = tuple(WORDS)

HOLD_MS = 900  # how long the word stays up at the end
FIRST_WORD_MS = 300  # how long the word stays up first, before the picture
SCROLL_STEP_MS = 25  # per pixel of scrolling (40 px/s)
BLINK_MS = 120


def _frame(pixels: Iterable[tuple[int, int]], width: int, height: int) -> Frame:
    return Frame.from_pixels(pixels, width, height)


def scroll_text(
    text: str, width: int = WIDTH, height: int = HEIGHT, step_ms: int = SCROLL_STEP_MS
) -> list[Step]:
    """The 5x7 text entering at the right edge and leaving at the left, one pixel a step."""
    total = FONT_5X7.text_width(text)
    return [
        (render_text(text, FONT_5X7, x=x, width=width, height=height), step_ms)
        for x in range(width, -total - 1, -1)
    ]


def word(text: str, width: int = WIDTH, height: int = HEIGHT, hold_ms: int = HOLD_MS) -> list[Step]:
    """The text held centred in 5x7 if it fits; else scrolled in 5x7, then held in 3x5
    (without a trailing "!", or its first word, if only that fits); else just scrolled."""
    if FONT_5X7.text_width(text) <= width:
        return [(centred_text(text, FONT_5X7, width, height), hold_ms)]
    steps = scroll_text(text, width, height)
    first = text.split()[0] if text.split() else text
    for candidate in (text, text.rstrip("!"), first if first.endswith("!") else first + "!"):
        if FONT_3X5.text_width(candidate) <= width:
            return steps + [(centred_text(candidate, FONT_3X5, width, height), hold_ms)]
    return steps


def blink(frame: Frame, times: int = 2, ms: int = BLINK_MS) -> list[Step]:
    """The frame alternating with its inverse."""
    out: list[Step] = []
    for _ in range(times):
        out += [(frame.inverted(), ms), (frame, ms)]
    return out


def _burst(width: int, height: int) -> list[Step]:
    """Rings (diamonds) growing from the centre: the shot."""
    cx, cy = width // 2, height // 2
    steps = []
    for r in (1, 3, 5, 8, 12, 16):
        px = [
            (x, y)
            for x in range(width)
            for y in range(height)
            if r - 1 <= abs(x - cx) // 2 + abs(y - cy) <= r
        ]
        steps.append((_frame(px, width, height), 45))
    return steps


def _bars_closing(width: int, height: int) -> list[Step]:
    """Cell bars sliding in from both sides until the display is barred."""
    steps = []
    bars = list(range(1, width, 4))
    half = (len(bars) + 1) // 2
    for n in range(1, half + 1):
        xs = bars[:n] + bars[len(bars) - n :]
        px = [(x, y) for x in xs for y in range(height)]
        px += [(x, 0) for x in range(width)] if n == half else []
        px += [(x, height - 1) for x in range(width)] if n == half else []
        steps.append((_frame(px, width, height), 70))
    return steps


def _sweep(width: int, height: int) -> list[Step]:
    """An arrow (">") racing off to the right: the getaway."""
    steps = []
    mid = height // 2
    for x in range(-4, width + 4, 3):
        px = [(x - abs(y - mid) + k, y) for y in range(height) for k in range(2)]
        px += [(x - 6 - 3 * j, mid) for j in range(3)]  # speed lines
        steps.append((_frame(px, width, height), 25))
    return steps


def _vault_opening(width: int, height: int) -> list[Step]:
    """The vault's outline shrinking to nothing: nothing left inside."""
    steps = []
    for inset in range(0, height // 2):
        x0, y0, x1, y1 = inset * 4, inset, width - 1 - inset * 4, height - 1 - inset
        px = [(x, y0) for x in range(x0, x1 + 1)] + [(x, y1) for x in range(x0, x1 + 1)]
        px += [(x0, y) for y in range(y0, y1 + 1)] + [(x1, y) for y in range(y0, y1 + 1)]
        steps.append((_frame(px, width, height), 90))
    steps.append((Frame.blank(width, height), 150))
    return steps


def _countdown(width: int, height: int) -> list[Step]:
    """A bar filling from both ends to the middle: ready, steady..."""
    steps = []
    for n in range(0, width // 2 + 1, 4):
        px = [(x, y) for x in list(range(n)) + list(range(width - n, width)) for y in (3, 4)]
        steps.append((_frame(px, width, height), 30))
    return steps


def _photo_finish(width: int, height: int) -> list[Step]:
    """Two runners reaching the finish line together, then a camera flash."""
    line = width - 4
    steps = []
    for x in range(0, line, 3):
        px = [(line, y) for y in range(0, height, 2)]
        px += [(x + dx, y) for dx in range(2) for y in (1, 2)]
        px += [(x - 1 + dx, y) for dx in range(2) for y in (5, 6)]
        steps.append((_frame(px, width, height), 30))
    full = Frame.blank(width, height).inverted()
    return steps + [(full, 80), (Frame.blank(width, height), 60), (full, 80)]


_INTROS = {
    "go": _countdown,
    "bang": _burst,
    "hostage": _bars_closing,
    "escaped": _sweep,
    "arrested": _bars_closing,
    "empty": _vault_opening,
    "photo_finish": _photo_finish,
}


def flash(
    kind: str, detail: str | None = None, width: int = WIDTH, height: int = HEIGHT
) -> list[Step]:
    """The animation for a flash ``kind`` (one of KINDS): the word (held still, in the
    font it ends in), the intro picture, the word (blinked once for go/bang), then
    ``detail`` if given. Raises ValueError naming an unknown kind. Built once per
    arguments and kept; the list returned is a fresh copy of the kept steps."""
    if kind not in WORDS:
        raise ValueError(f"unknown flash kind {kind!r}; expected one of {', '.join(KINDS)}")
    return list(_built(kind, detail, width, height))


@lru_cache(maxsize=64)
def _built(kind: str, detail: str | None, width: int, height: int) -> tuple[Step, ...]:
    text = WORDS[kind]
    shown = word(text, width, height)
    steps = [(shown[-1][0], FIRST_WORD_MS)]
    steps += _INTROS[kind](width, height)
    if kind in ("go", "bang"):
        steps += blink(shown[0][0], times=1)
    steps += shown
    if detail:
        steps += word(detail, width, height)
    return tuple(steps)


def prebuild(width: int = WIDTH, height: int = HEIGHT) -> None:
    """Build every flash's animation now, so the first verdict shown costs no drawing."""
    for kind in KINDS:
        _built(kind, None, width, height)


def duration_ms(steps: Iterable[Step]) -> int:
    return sum(ms for _, ms in steps)
