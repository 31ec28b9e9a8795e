"""What every game's LED board shares: the flash words, a word centred (or scrolling
when wider than the 32x8 frame), a line scrolling in from the right, and money in
thousands. Each game draws its own board with these (Vault Assault's:
companion.games.vault_assault.board; the others': companion.games.led).
"""

from __future__ import annotations

from companion.display.animations import WORDS
from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import HEIGHT, WIDTH, Frame

# The animated flashes' words (companion.display.animations), plus the referee's others.
FLASH_WORDS = {
    **WORDS,
    "false_start": "FALSE START",
    "diamond": "DIAMOND!",
    "trap": "TRAP!",
    "alarm": "ALARM!",
    "stage": "STAGE",
    "stuck": "STUCK!",
    "camera_gone": "CAMERA GONE",
    "dice_unread": "NUDGE!",  # the camera cannot read a die (fits: held still)
    "log_failing": "LOG FAILING",
}


def flash_frame(word: str, tick: int = 0) -> Frame:
    """A word centred on the frame (3x5 font), scrolling when wider than the display."""
    w = FONT_3X5.text_width(word)
    y0 = (HEIGHT - FONT_3X5.height) // 2
    if w <= WIDTH:
        return render_text(word, FONT_3X5, x=(WIDTH - w) // 2, y=y0)
    span = w - WIDTH + 4
    offset = tick % (span + 1)
    return render_text(word, FONT_3X5, x=2 - offset, y=y0)


GAME_OVER_HOLD_TICKS = 8  # a held line of the game-over screen: 2 s at the loop's 0.25 s tick
SCROLL_PX_PER_TICK = 2
SCROLL_START_X = WIDTH - 8  # the first letters show at once


def scrolled(text: str, step: int) -> Frame:
    """`text` (3x5) moving in from the right, SCROLL_PX_PER_TICK pixels a tick."""
    y0 = (HEIGHT - FONT_3X5.height) // 2
    return render_text(text, FONT_3X5, x=SCROLL_START_X - step * SCROLL_PX_PER_TICK, y=y0)


def scroll_ticks(text: str) -> int:
    return -(-(FONT_3X5.text_width(text) + SCROLL_START_X) // SCROLL_PX_PER_TICK) + 1


def thousands(cash: int) -> str:
    """160000 -> "160K", 12500 -> "12.5K"."""
    return f"{cash / 1000:g}K"
