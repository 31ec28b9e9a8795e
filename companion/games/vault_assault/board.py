"""Vault Assault's LED board: a pure function from its state to what the LED display
shows.

The board is laid out for 32x8 (companion.display.model.BOARD_SIZE), left to right:

    x 0-18   the cops' four stages as 4x4 blocks (gap 1): a claimed stage is solid; the
             current stage shows the pieces of its mosaic in place (2x2 px each, in
             top-left, top-right, bottom-left, bottom-right order); stage 4 is the
             Arrest. y 4: a marker under the stage being worked on (during the race).
             y 5: a bar under a stage block when a Bang! was used before that stage.
             y 7: the cop track: one 2-px mark per turn of the game (lit: played,
             blinking: this turn).
    x 21-31  one 3-px column per seat (x 21, 25, 29: seats 1, 2, 3): y 0 lit bar =
             this seat is the cops; y 1 middle = a hostage set aside; y 2 one pixel per
             getaway car; y 3-4 one pixel per diamond; y 6 solid = escaped this turn,
             dotted = arrested this turn.
    Empty!   once the bank is empty, the stages it skipped show an X until the turn ends
             (the game's last), and the marker moves to the Arrest block.

`legend(state, size)` says the same as data, for the page's key to the board
(`Game.led_legend`): the columns (stages, seats) and the rows, each a region of the
frame and how the page reads it from the lit dots.

At game over the board gives way to the winner's name scrolling by, then each seat's
total in thousands ("ANN 160K"), over and over; until every seat is tallied it reads
"GAME OVER" / "TALLY". At start-up the pairing PIN may be shown ("PIN 4719").

A flash (Go!, Bang!, Hostage!, Escaped!, Arrested!, Empty!, ...) replaces the board
with its word for a moment; `tick` animates blinking and scrolling.

Frames are drawn for the panel's `size` (the display's; default 32x8). The words and
the game-over lines use the panel's whole width. The board itself needs its 32x8: on a
larger panel it is drawn centred; on a smaller one only its left part shows (a 24x8
panel cuts off the second and third seats' columns; `serve` says so at start-up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.display.bitfont import FONT_3X5
from companion.display.frame import DEFAULT_SIZE, Frame, Size
from companion.display.model import (
    BOARD_SIZE,
    FLASH_WORDS,
    GAME_OVER_HOLD_TICKS,
    flash_frame,
    placed,
    scroll_ticks,
    scrolled,
    thousands,
)
from companion.games.vault_assault.engine import total_of, total_turns, winners_of
from companion.games.vault_assault.state import ASSAULT, GAME_OVER, GameState

STAGE_X = (0, 5, 10, 15)
SEAT_X = (21, 25, 29)
PIECE_OFFSETS = ((0, 0), (2, 0), (0, 2), (2, 2))  # TL, TR, BL, BR


def _block(x0: int, y0: int, w: int, h: int) -> list[tuple[int, int]]:
    return [(x, y) for x in range(x0, x0 + w) for y in range(y0, y0 + h)]


def board(
    state: GameState,
    tick: int = 0,
    mosaic: Mapping[int, frozenset[int]] | None = None,
    size: Size = DEFAULT_SIZE,
) -> Frame:
    """The board frame on a panel of `size` (its 32x8 layout `placed` there). `mosaic`
    optionally maps stage (1-4) to the pieces (0-3) the camera sees in place; without it
    the first mosaic shows the pieces preset by alarms."""
    return placed(_board(state, tick, mosaic), size)


def _board(state: GameState, tick: int, mosaic: Mapping[int, frozenset[int]] | None
           ) -> Frame:
    """The board in its own 32x8 layout."""
    px: list[tuple[int, int]] = []
    turn = state.turn
    if state.nseats == 0:
        return Frame.blank(*BOARD_SIZE)
    stages_done = turn.stages if turn else 0
    arrested = bool(turn and turn.arrest_called)
    current = 4 if state.bank_empty else stages_done + 1
    for k, x0 in enumerate(STAGE_X, start=1):
        done = k <= stages_done or (k == 4 and arrested)
        if done:
            px += _block(x0, 0, 4, 4)
            continue
        if turn is not None and state.bank_empty and k < 4:
            px += [(x0 + i, i) for i in range(4)] + [(x0 + 3 - i, i) for i in range(4)]
            continue
        if turn is None or k != current:
            continue
        pieces: frozenset[int] = frozenset()
        if mosaic and k in mosaic:
            pieces = mosaic[k]
        elif k == 1:
            pieces = frozenset(range(turn.preset))
        for p in sorted(pieces):
            ox, oy = PIECE_OFFSETS[p]
            px += _block(x0 + ox, oy, 2, 2)
        if state.phase == ASSAULT:
            px += [(x0 + 1, 4), (x0 + 2, 4)]
    if turn:
        for k in turn.bang_intervals:
            px += [(x, 5) for x in range(STAGE_X[k], STAGE_X[k] + 4)]
    # The cop track: every turn of the game.
    for t in range(total_turns(state)):
        x = t * 3
        if x + 1 >= SEAT_X[0] - 1:
            break
        if t < state.turns_played or (t == state.turns_played and turn and tick % 2 == 0):
            px += [(x, 7), (x + 1, 7)]
    for i, seat in enumerate(state.seats[: len(SEAT_X)]):
        x0 = SEAT_X[i]
        if turn and turn.cop == i:
            px += [(x0 + j, 0) for j in range(3)]
        if turn and i in turn.hostages:
            px.append((x0 + 1, 1))
        px += [(x0 + j, 2) for j in range(min(seat.cars, 3))]
        px += [(x0 + j % 3, 3 + j // 3) for j in range(min(seat.diamonds, 6))]
        if turn and i in turn.escaped:
            px += [(x0 + j, 6) for j in range(3)]
        elif turn and i in turn.arrested:
            px += [(x0, 6), (x0 + 2, 6)]
    return Frame.from_pixels(px, *BOARD_SIZE)


# The board's parts for the key to it: (x, y, w, h) in its 32x8 layout, what it means,
# and how the page reads it from the frame's lit dots ("lit": the columns with one lit
# there; "full": the columns wholly lit; "count": how many in each column, in words by
# `values` when given; "marks": how many marks of 2 dots in the whole part).
STAGE_ROWS: tuple[tuple[tuple[int, int, int, int], str, str, dict[str, str]], ...] = (
    ((0, 0, 19, 4), "cops' stages: claimed = solid; the current one shows the mosaic "
                    "pieces in place", "full", {}),
    ((0, 4, 19, 1), "marker: the stage being worked on", "lit", {}),
    ((0, 5, 19, 1), "a bar: a Bang! was used before this stage", "lit", {}),
    ((0, 7, 20, 1), "cop track: one mark per turn played (blinking: this turn)", "marks",
     {}),
)
SEAT_ROWS: tuple[tuple[tuple[int, int, int, int], str, str, dict[str, str]], ...] = (
    ((21, 0, 11, 1), "bar on top: this seat is the cops", "lit", {}),
    ((21, 1, 11, 1), "dot: a hostage die set aside", "lit", {}),
    ((21, 2, 11, 1), "one dot per getaway car", "count", {}),
    ((21, 3, 11, 2), "one dot per diamond", "count", {}),
    ((21, 6, 11, 1), "solid line: escaped this turn · dotted: arrested", "count",
     {"3": "escaped", "2": "arrested", "0": ""}),
)


def legend(state: GameState, size: Size = DEFAULT_SIZE) -> dict[str, Any] | None:
    """What each part of the board means, for the page's key to the LED (None while
    the board does not show: no game, game over). Regions in the frame of `size` (the
    board placed on it); those the panel cuts off are left out."""
    if state.nseats == 0 or state.phase == GAME_OVER:
        return None
    width, height = size
    dx = max(0, (width - BOARD_SIZE[0]) // 2)
    dy = max(0, (height - BOARD_SIZE[1]) // 2)

    def region(x: int, y: int, w: int, h: int) -> dict[str, int] | None:
        if x + dx >= width or y + dy >= height:
            return None
        return {"x": x + dx, "y": y + dy, "w": min(w, width - x - dx),
                "h": min(h, height - y - dy)}

    columns = []
    for k, x0 in enumerate(STAGE_X, start=1):
        label = f"stage {k}" if k < 4 else "arrest"
        columns.append({"label": label, "name": label, "side": "stages",
                        **(region(x0, 0, 4, 8) or {})})
    for i, seat in enumerate(state.seats[: len(SEAT_X)]):
        columns.append({"label": str(i + 1), "name": f"seat {i + 1} {seat.name}",
                        "side": "seats", **(region(SEAT_X[i], 0, 3, 8) or {})})
    rows = []
    for side, parts in (("stages", STAGE_ROWS), ("seats", SEAT_ROWS)):
        for (x, y, w, h), text, read, values in parts:
            where = region(x, y, w, h)
            if where is not None:
                rows.append({"label": text, "side": side, "read": read, **where,
                             **({"values": values} if values else {})})
    return {"columns": [c for c in columns if "x" in c], "rows": rows}


def game_over_lines(state: GameState) -> list[tuple[str, bool]]:
    """The game-over screen as (text, scrolled) lines, shown one after another."""
    winners = winners_of(state)
    if not winners:
        return [("GAME OVER", True), ("TALLY", False)]
    names = "+".join(state.seats[w].name for w in winners)
    lines = [(("WINNERS " if len(winners) > 1 else "WINNER ") + names, True)]
    for i, seat in enumerate(state.seats):
        lines.append((f"{seat.name} {thousands(total_of(state, i) or 0)}", False))
    return lines


def game_over_frame(state: GameState, tick: int = 0, size: Size = DEFAULT_SIZE) -> Frame:
    """The frame of the game-over screen at `tick` (it cycles forever)."""
    spans = []
    for text, scrolls in game_over_lines(state):
        fits = FONT_3X5.text_width(text) <= size[0]
        spans.append((text, not fits or scrolls))
    lengths = [scroll_ticks(t, size) if sc else GAME_OVER_HOLD_TICKS for t, sc in spans]
    t = tick % sum(lengths)
    for (text, scrolls), n in zip(spans, lengths, strict=True):
        if t < n:
            return scrolled(text, t, size) if scrolls else flash_frame(text, 0, size)
        t -= n
    raise AssertionError("unreachable")


def flash_word(state: GameState, flash: str) -> str:
    """The word a flash shows: "STAGE 2" with the stage just claimed, "PIN 4719"."""
    if flash == "stage" and state.turn is not None and state.turn.stages:
        return f"STAGE {state.turn.stages}"
    if flash.startswith("pin:"):
        return "PIN " + flash[4:]
    if flash.startswith("check:"):
        return "CHK " + flash[6:]
    return FLASH_WORDS.get(flash, flash.upper())


def render(
    state: GameState, flash: str | None = None, tick: int = 0, size: Size = DEFAULT_SIZE
) -> Frame:
    """What the LED display shows now: a flash word when one is up, else the board."""
    return render_seen(state, flash, tick, None, size)


def render_seen(
    state: GameState,
    flash: str | None,
    tick: int,
    mosaic: Mapping[int, frozenset[int]] | None,
    size: Size = DEFAULT_SIZE,
) -> Frame:
    """`render` with the camera's view drawn in: `mosaic` maps stage (1-4) to the
    pieces (0-3) the camera sees in place (its reader's overlay:
    companion.games.vault_assault.camera)."""
    if flash:
        return flash_frame(flash_word(state, flash), tick, size)
    if state.phase == GAME_OVER:
        return game_over_frame(state, tick, size)
    return board(state, tick, mosaic, size)
