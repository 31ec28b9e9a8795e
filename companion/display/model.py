"""What every game's LED board shares: the flash words, a word centred (or scrolling
when wider than the panel), a line scrolling in from the right, money in thousands, and
a board of a fixed layout placed on the panel. Each game draws its own board with these
(Vault Assault's: companion.games.vault_assault.board; the others': companion.games.led).

Every function takes the panel's ``size`` (width, height): the display's, which the
referee passes to the game's ``render`` (companion.loop.Referee.size); the default is
the box's 32x8 chain. Words and lines use the whole width. A board laid out for 32x8
(``BOARD_SIZE``, Vault Assault's) is drawn at that size and ``placed``: centred on a
larger panel, and on a smaller one only its top-left part shows (the rest is cut off;
``serve`` says so in one line at start-up).
"""

from __future__ import annotations

from companion.display.animations import WORDS
from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import DEFAULT_SIZE, Frame, Size

# The size the games' boards are laid out for: the box's four 8x8 modules.
BOARD_SIZE: Size = DEFAULT_SIZE

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
    "upheld": "UPHELD",
}


def flash_frame(word: str, tick: int = 0, size: Size = DEFAULT_SIZE) -> Frame:
    """A word centred on the panel (3x5 font), scrolling when wider than the panel."""
    width, height = size
    w = FONT_3X5.text_width(word)
    y0 = (height - FONT_3X5.height) // 2
    if w <= width:
        return render_text(word, FONT_3X5, x=(width - w) // 2, y=y0, width=width,
                           height=height)
    offset = tick % flash_cycle_ticks(word, size)
    return render_text(word, FONT_3X5, x=2 - offset, y=y0, width=width, height=height)


def flash_cycle_ticks(word: str, size: Size = DEFAULT_SIZE) -> int:
    """The ticks a flash word takes to scroll through once and begin again (its frame is
    that of the tick modulo this); 1 for a word that fits and stands still."""
    w = FONT_3X5.text_width(word)
    return 1 if w <= size[0] else w - size[0] + 5


GAME_OVER_HOLD_TICKS = 8  # a held line of the game-over screen: 2 s at the loop's 0.25 s tick
SCROLL_PX_PER_TICK = 2
SCROLL_LEAD = 8  # the first letters show at once: a line starts this far left of the edge


def scroll_start_x(size: Size = DEFAULT_SIZE) -> int:
    return size[0] - SCROLL_LEAD


def scrolled(text: str, step: int, size: Size = DEFAULT_SIZE) -> Frame:
    """`text` (3x5) moving in from the right, SCROLL_PX_PER_TICK pixels a tick."""
    width, height = size
    y0 = (height - FONT_3X5.height) // 2
    return render_text(text, FONT_3X5, x=scroll_start_x(size) - step * SCROLL_PX_PER_TICK,
                       y=y0, width=width, height=height)


def scroll_ticks(text: str, size: Size = DEFAULT_SIZE) -> int:
    return -(-(FONT_3X5.text_width(text) + scroll_start_x(size)) // SCROLL_PX_PER_TICK) + 1


def placed(board: Frame, size: Size = DEFAULT_SIZE) -> Frame:
    """A board drawn at its own layout's size on a panel of `size`: centred where the
    panel is larger; where it is smaller, the board's top-left part (the rest cut off)."""
    width, height = size
    if (board.width, board.height) == (width, height):
        return board
    dx, dy = max(0, (width - board.width) // 2), max(0, (height - board.height) // 2)
    mask = (1 << width) - 1
    rows = [0] * height
    for y, bits in enumerate(board.rows):
        if 0 <= y + dy < height:
            rows[y + dy] = (bits << dx) & mask
    return Frame(width, height, tuple(rows))


def thousands(cash: int) -> str:
    """160000 -> "160K", 12500 -> "12.5K"."""
    return f"{cash / 1000:g}K"
