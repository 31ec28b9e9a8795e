"""The display model: a pure function from game state to what the LED display shows.

The 32x8 frame, left to right:

    x 0-18   the cops' four stages as 4x4 blocks (gap 1): a claimed stage is solid; the
             current stage shows the pieces of its mosaic in place (2x2 px each, in
             top-left, top-right, bottom-left, bottom-right order); stage 4 is the
             Arrest. y 4: a marker under the stage being worked on (during the race).
             y 5: a bar under a stage block when a Bang! was used before that stage.
             y 7: the cop track: one 2-px mark per turn of the game (lit: played,
             blinking: this turn).
    x 21-31  one 3-px column per seat (x 21, 25, 29): y 0 lit bar = this seat is the
             cops; y 1 middle = a hostage set aside; y 2 one pixel per getaway car;
             y 3-4 one pixel per diamond; y 6 solid = escaped this turn, dotted =
             arrested this turn.

A flash (Go!, Bang!, Hostage!, Escaped!, Arrested!, Empty!, ...) replaces the board
with its word for a moment; `tick` animates blinking and scrolling.
"""

from __future__ import annotations

from collections.abc import Mapping

from companion.display.animations import WORDS
from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import HEIGHT, WIDTH, Frame
from companion.rules.engine import current_round, total_turns
from companion.rules.state import (
    ASSAULT,
    GAME_OVER,
    HEIST,
    HEIST_HIDE,
    HEIST_OVER,
    IMPOUND,
    GameState,
)

STAGE_X = (0, 5, 10, 15)
SEAT_X = (21, 25, 29)
PIECE_OFFSETS = ((0, 0), (2, 0), (0, 2), (2, 2))  # TL, TR, BL, BR

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
}

PHASE_WORDS = {
    HEIST_HIDE: "cops hide the diamond",
    HEIST: "diamond heist",
    HEIST_OVER: "ready: waiting for Go!",
    ASSAULT: "the race is on",
    IMPOUND: "impound cars",
    GAME_OVER: "game over",
}


def _block(x0: int, y0: int, w: int, h: int) -> list[tuple[int, int]]:
    return [(x, y) for x in range(x0, x0 + w) for y in range(y0, y0 + h)]


def board(
    state: GameState, tick: int = 0, mosaic: Mapping[int, frozenset[int]] | None = None
) -> Frame:
    """The board frame. `mosaic` optionally maps stage (1-4) to the pieces (0-3) the
    camera sees in place; without it the first mosaic shows the pieces preset by alarms."""
    px: list[tuple[int, int]] = []
    turn = state.turn
    if state.nseats == 0:
        return Frame.blank()
    stages_done = turn.stages if turn else 0
    arrested = bool(turn and turn.arrest_called)
    for k, x0 in enumerate(STAGE_X, start=1):
        done = k <= stages_done or (k == 4 and arrested)
        if done:
            px += _block(x0, 0, 4, 4)
            continue
        if turn is None or k != stages_done + 1:
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
    return Frame.from_pixels(px)


def flash_frame(word: str, tick: int = 0) -> Frame:
    """A word centred on the frame (3x5 font), scrolling when wider than the display."""
    w = FONT_3X5.text_width(word)
    y0 = (HEIGHT - FONT_3X5.height) // 2
    if w <= WIDTH:
        return render_text(word, FONT_3X5, x=(WIDTH - w) // 2, y=y0)
    span = w - WIDTH + 4
    offset = tick % (span + 1)
    return render_text(word, FONT_3X5, x=2 - offset, y=y0)


def render(
    state: GameState,
    flash: str | None = None,
    tick: int = 0,
    mosaic: Mapping[int, frozenset[int]] | None = None,
) -> Frame:
    """What the LED display shows now: a flash word when one is up, else the board."""
    if flash:
        return flash_frame(FLASH_WORDS.get(flash, flash.upper()), tick)
    return board(state, tick, mosaic)


def status_lines(state: GameState) -> list[str]:
    """The same state in words, for the terminal beside the LED frame."""
    if state.nseats == 0:
        return ["No game yet: start one with new_game."]
    turn = state.turn
    lines = [
        f"Round {current_round(state)} · turn {min(state.turns_played + 1, total_turns(state))}"
        f"/{total_turns(state)} · {PHASE_WORDS.get(state.phase, state.phase)}"
        + (" · BANK EMPTY" if state.bank_empty else "")
    ]
    if turn:
        lines.append(
            f"Cops: {state.seats[turn.cop].name} (seat {turn.cop}) · stages {turn.stages}/3"
            f" · preset pieces {turn.preset} · Bang! used {len(turn.bang_intervals)}/4"
        )
    for i, s in enumerate(state.seats):
        tags = []
        if turn and turn.cop == i:
            tags.append("COPS")
        if turn and i in turn.hostages:
            tags.append("hostage set aside")
        if turn and i in turn.escaped:
            tags.append("ESCAPED")
        if turn and i in turn.arrested:
            tags.append("ARRESTED")
        cash = "" if s.cash is None else f" cash ${s.cash:,}"
        lines.append(
            f"  seat {i} {s.name:<10} cars {s.cars} diamonds {s.diamonds} "
            f"escaped {s.escaped} arrested {s.arrested}{cash} {' '.join(tags)}"
        )
    return lines
