"""Coin Race at the table: its entry in the games registry, every hook its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.display.frame import DEFAULT_SIZE, Frame, Size
from companion.events import command_words
from companion.games import led
from companion.games.base import Result
from companion.games.camera_sense import Seen
from companion.games.registry import Game
from toy_game import definition as d
from toy_game import engine
from toy_game.state import GAME_OVER, RACING, CoinState
from toy_game.summary import summary

HELP = """\
new NAME NAME [NAME]         a new race (once this one is over)
step N                       the player to move steps N (1-3); a seat's button: 1
undo                         take back the last accepted event"""


def render(state: CoinState, flash: str | None = None, tick: int = 0,
           size: Size = DEFAULT_SIZE) -> Frame:
    if flash:
        return led.flash({"win": "WIN!"}, flash, tick, size)
    if not state.names:
        return led.board("COIN", size=size)
    return led.board("-".join(map(str, state.pos)),
                     led.marks(7, [(i, i == state.to_move) for i in range(len(state.pos))]),
                     size)


def camera_render(state: CoinState, flash: str | None, tick: int, overlay: Any,
                  size: Size = DEFAULT_SIZE) -> Frame:
    """The board with one pixel on row 6 for each die the camera sees."""
    return render(state, flash, tick, size).union(
        Frame.from_pixels([(x, 6) for x in range(min(int(overlay), size[0]))], *size))


def status_lines(state: CoinState) -> list[str]:
    if not state.names:
        return ["No race yet: play coin-race NAME NAME"]
    where = ", ".join(f"{n} at {p}" for n, p in zip(state.names, state.pos, strict=True))
    return [f"Coin Race to {d.GOAL}: {where}"]


def parse_command(text: str, state: CoinState) -> dict[str, Any]:
    parsed = command_words(text)
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word == "step" and len(args) == 1 and args[0].isdigit():
        return {"type": "step", "seat": state.to_move, "n": int(args[0])}
    raise ValueError(f"unknown command {text[:40]!r} (help lists the commands)")


def page_moves(state: CoinState, new_game_after_over: bool = False) -> dict[str, Any]:
    moves: dict[str, Any] = {}
    if state.prev is not None:
        moves["undo"] = True
    if state.phase == GAME_OVER and new_game_after_over:
        moves["new_game"] = {"game": d.GAME_ID}
    if state.phase == RACING:
        moves["step"] = {"seat": state.to_move, "n": list(range(1, d.MAX_STEP + 1))}
    return moves


def callouts(event: Mapping[str, Any], result: Result) -> list[str]:
    if result.rejection:
        return []
    return [f"{out.text.replace(f' (seat {out.seat})', '')}." for out in result.outputs
            if out.name == "step"] + [out.text for out in result.outputs if out.name == "win"]


class DiceCounter:
    """Counts the dice the camera sees: said when the count changes, drawn on row 6."""

    def __init__(self, dice: Any) -> None:
        self.last: int | None = None

    def read(self, state: CoinState, reading: Any) -> Seen:
        n = len(reading.dice)
        says = (f"Camera: {n} coins",) if n != self.last else ()
        self.last = n
        return Seen(f"Camera: {n} dice", says=says, overlay=n)


def describe(event: dict[str, Any]) -> str | None:
    if event.get("type") == "step":
        return f"seat {event.get('seat')} steps {event.get('n')}"
    return None


GAME = Game(
    id=d.GAME_ID,
    name="Coin Race",
    state_type=CoinState,
    new_state=engine.new_state,
    apply=engine.apply,
    summary=summary,
    event_types=engine.EVENT_TYPES,
    render=render,
    status_lines=status_lines,
    parse_command=parse_command,
    help=HELP,
    page_moves=page_moves,
    players=d.PLAYERS,
    new_words="NAME NAME [NAME]",
    press_event=lambda state, seat, ts_ns: (
        {"type": "step", "seat": seat, "n": 1, "ts_ns": ts_ns}
        if state.phase == RACING else None),
    live_seats=lambda state: {state.to_move} if state.phase == RACING else set(),
    bar=lambda state: max(state.pos, default=0),
    no_seat=lambda state, seat: (f"key {seat + 1}: no seat {seat + 1} in this race"
                                 if state.names and seat >= len(state.names) else None),
    over_line=lambda state: f"this race is over: {state.names[state.winner]} won",
    page_details=lambda state: {"goal": d.GOAL, "to_move": state.to_move},
    seat_names=lambda state: list(state.names),
    callouts=callouts,
    camera_sense=DiceCounter,
    camera_render=camera_render,
    describe=describe,
)
