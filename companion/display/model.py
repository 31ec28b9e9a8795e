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
    Empty!   once the bank is empty, the stages it skipped show an X until the turn ends
             (the game's last), and the marker moves to the Arrest block.

At game over the board gives way to the winner's name scrolling by, then each seat's
total in thousands ("ANN 160K"), over and over; until every seat is tallied it reads
"GAME OVER" / "TALLY". At start-up the pairing PIN may be shown ("PIN 4719").

A flash (Go!, Bang!, Hostage!, Escaped!, Arrested!, Empty!, ...) replaces the board
with its word for a moment; `tick` animates blinking and scrolling.
"""

from __future__ import annotations

from collections.abc import Mapping

from companion.display.animations import WORDS
from companion.display.bitfont import FONT_3X5, render_text
from companion.display.frame import HEIGHT, WIDTH, Frame
from companion.rules.engine import current_round, total_of, total_turns, winners_of
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
    "dice_unread": "NUDGE!",  # the camera cannot read a die (fits: held still)
    "log_failing": "LOG FAILING",
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


GAME_OVER_HOLD_TICKS = 8  # a held line of the game-over screen: 2 s at the loop's 0.25 s tick
SCROLL_PX_PER_TICK = 2


SCROLL_START_X = WIDTH - 8  # the first letters show at once


def _scrolled(text: str, step: int) -> Frame:
    """`text` (3x5) moving in from the right, SCROLL_PX_PER_TICK pixels a tick."""
    y0 = (HEIGHT - FONT_3X5.height) // 2
    return render_text(text, FONT_3X5, x=SCROLL_START_X - step * SCROLL_PX_PER_TICK, y=y0)


def _scroll_ticks(text: str) -> int:
    return -(-(FONT_3X5.text_width(text) + SCROLL_START_X) // SCROLL_PX_PER_TICK) + 1


def thousands(cash: int) -> str:
    """160000 -> "160K", 12500 -> "12.5K"."""
    return f"{cash / 1000:g}K"


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


def game_over_frame(state: GameState, tick: int = 0) -> Frame:
    """The frame of the game-over screen at `tick` (it cycles forever)."""
    spans = []
    for text, scrolled in game_over_lines(state):
        fits = FONT_3X5.text_width(text) <= WIDTH
        spans.append((text, not fits or scrolled))
    lengths = [_scroll_ticks(t) if sc else GAME_OVER_HOLD_TICKS for t, sc in spans]
    t = tick % sum(lengths)
    for (text, scrolled), n in zip(spans, lengths, strict=True):
        if t < n:
            return _scrolled(text, t) if scrolled else flash_frame(text)
        t -= n
    raise AssertionError("unreachable")


def flash_word(state: GameState, flash: str) -> str:
    """The word a flash shows: "STAGE 2" with the stage just claimed, "PIN 4719"."""
    if flash == "stage" and state.turn is not None and state.turn.stages:
        return f"STAGE {state.turn.stages}"
    if flash.startswith("pin:"):
        return "PIN " + flash[4:]
    return FLASH_WORDS.get(flash, flash.upper())


def render(
    state: GameState,
    flash: str | None = None,
    tick: int = 0,
    mosaic: Mapping[int, frozenset[int]] | None = None,
) -> Frame:
    """What the LED display shows now: a flash word when one is up, else the board."""
    if flash:
        return flash_frame(flash_word(state, flash), tick)
    if state.phase == GAME_OVER:
        return game_over_frame(state, tick)
    return board(state, tick, mosaic)


def status_lines(state: GameState) -> list[str]:
    """The same state in words, for the terminal beside the LED frame (each line fits
    80 columns)."""
    if state.nseats == 0:
        return ["No game yet: start one with new_game."]
    turn = state.turn
    over = state.phase == GAME_OVER
    turn_no = state.turns_played if over else min(state.turns_played + 1, total_turns(state))
    lines = [
        f"Round {current_round(state)} · turn {turn_no}/{total_turns(state)} · "
        f"{PHASE_WORDS.get(state.phase, state.phase)}"
        + (" · BANK EMPTY" if state.bank_empty else "")
    ]
    if turn:
        lines.append(
            f"Cops: {state.seats[turn.cop].name} (seat {turn.cop}) · stages {turn.stages}/3"
            f" · preset pieces {turn.preset} · Bang! used {len(turn.bang_intervals)}/4"
        )
    if state.phase == HEIST and turn and turn.heist:
        heist = turn.heist
        parts = []
        for seat, flipped in heist.flipped:
            shown = ",".join(str(p + 1) for p in sorted(flipped)) or "-"
            out = "" if seat in heist.in_heist else " (out)"
            parts.append(f"{state.seats[seat].name} {shown}{out}")
        lines.append(f"Heist, positions 1-{len(heist.row)} flipped: " + " · ".join(parts))
    winners = winners_of(state)
    if over:
        if winners:
            names = " and ".join(state.seats[w].name for w in winners)
            best = total_of(state, winners[0]) or 0
            lines.append(f"Winner: {names} with ${best:,} (total: cash + $40,000 a diamond)")
        else:
            left = [str(i) for i, s in enumerate(state.seats) if s.cash is None]
            lines.append(f"Tally each seat's cash: tally S CASH (seat {', '.join(left)} to go)")
    for i, s in enumerate(state.seats):
        tags = []
        if turn and turn.cop == i:
            tags.append("COPS")
        if turn and i in turn.hostages:
            tags.append("hostage")
        if turn and i in turn.escaped:
            tags.append("ESCAPED")
        if turn and i in turn.arrested:
            tags.append("ARRESTED")
        total = total_of(state, i)
        if total is not None:
            tags.append(f"total ${total:,}")
        if i in winners:
            tags.append("WINNER")
        lines.append(
            f"  seat {i} {s.name:<10.10} cars {s.cars} diamonds {s.diamonds} "
            f"escaped {s.escaped} arrested {s.arrested} {' '.join(tags)}".rstrip()
        )
    return lines
