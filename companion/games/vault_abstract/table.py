"""Vault (abstract) at the table: its entry in the games registry.

LED board: "W 12" / "B 12" (who moves, the move number) and the last move "c1a3" is
on the page; row 6 one pixel per White pawn left, row 7 one per Black pawn; while a
move is picked on the buttons, "W C3?" (the pawn) or "C3-D4?" (the move). At game
over: the winner and why, cycling. Drawn for the panel's size, laid out for 32x8
(companion.games.led says how other sizes look). The companion can play a side: the
short command `bot [LEVEL]` (or the page's "companion moves") sends the opponent's move.

A 2-seat table's buttons: the seat to move presses to step through its pawns, waits
(`PICK_SECONDS`) to choose the one shown, presses to step through that pawn's cells
and waits to play the move (`pick` events; the table's window timer sends the pause).
The other seat's press cancels a pick, or, with none, asks the companion to move for
the side to move (the `bot` move at the default level).
"""

from __future__ import annotations

from typing import Any

from companion.display.frame import DEFAULT_SIZE, Size
from companion.events import command_words
from companion.games import led
from companion.games.registry import Game
from companion.games.vault_abstract import definition as d
from companion.games.vault_abstract import engine, opponent
from companion.games.vault_abstract.state import GAME_OVER, PLAYING, AbstractState
from companion.games.vault_abstract.summary import summary

WORDS = {"move": "MOVE", "capture": "CAPTURE!", "win": "WIN!"}
SIDES = ("W", "B")
DEFAULT_LEVEL = 2

HELP = """\
new NAME NAME                a new game (once this one is over): White, Black
c1 a3  (or: move c1 a3)      move the pawn on c1 to a3 (a walk or a jump)
bot [LEVEL]                  the companion moves for the side to move (0-3)
pick N [choose]              seat N's button (1 White, 2 Black): step the pick
resign N                     seat N resigns (1 White, 2 Black)
draw                         a draw, agreed
undo                         take back the last accepted event
{"type": ...}                any event as JSON"""
WIDTH = 78  # the terminal's lines (80 columns less a margin)


def render(state: AbstractState, flash: str | None = None, tick: int = 0,
           size: Size = DEFAULT_SIZE) -> Any:
    if flash:
        return led.flash(WORDS, flash, tick, size)
    if state.phase == GAME_OVER:
        return led.cycling(game_over_lines(state), tick, size)
    if state.phase != PLAYING:
        return led.board("VAULT", size=size)
    if state.pick is not None:
        frm, to = (c.upper() for c in state.pick)
        return led.board(f"{frm}-{to}?" if to else f"{SIDES[state.to_move]} {frm}?",
                         size=size)
    white, black = (len(p) for p in state.pawns)
    rows = [(x, 6) for x in range(white)] + [(x, 7) for x in range(black)]
    last = "".join(state.moves[-1]).upper() if state.moves else ""
    text = f"{SIDES[state.to_move]}{len(state.moves) + 1}"
    if last and len(text) + len(last) < 8:
        text += " " + last
    return led.board(text, rows, size)


def game_over_lines(state: AbstractState) -> list[str]:
    if state.winner is None:
        return ["DRAW"]
    return [f"WINNER {state.names[state.winner]}", state.end.upper()]


def status_lines(state: AbstractState) -> list[str]:
    """The terminal's lines, within 78 columns: the board (11 lines, rank 10 at the
    top) with the players, the last move and who is to move beside it."""
    if state.phase == "no_game":
        return ["No game yet: start one with new_game."]
    s = summary(state)
    white, black = (n[:16] for n in state.names)
    side = [
        "Vault (abstract)",
        f"White (W, seat 1): {white}, {s['pawns'][0]} pawns",
        f"Black (B, seat 2): {black}, {s['pawns'][1]} pawns",
        f"{len(state.moves)} move{'' if len(state.moves) == 1 else 's'} played"
        + (f" · last {'-'.join(state.moves[-1])}" if state.moves else ""),
    ]
    if state.phase == PLAYING:
        side.append(f"To move: {('White', 'Black')[state.to_move]} "
                    f"({state.names[state.to_move][:16]})")
        side.append(f"{len(engine.legal_moves(state))} legal moves: type e.g. c1 c2")
        if state.pick is not None:
            frm, to = state.pick
            side.append(f"Picked: {frm}-{to}? (wait to play it)" if to
                        else f"Picked: {frm}? (wait to choose it)")
    else:
        who = "nobody" if state.winner is None else state.names[state.winner][:16]
        side.append(f"Game over: {who} wins ({state.end})")
    board = board_lines(state)
    return [f"{row:<28}{side[i]}".rstrip() if i < len(side) else row
            for i, row in enumerate(board)]


def headline(state: AbstractState) -> str:
    """One line on the game now, for the page's top."""
    if state.phase == "no_game":
        return "Vault (abstract)"
    if state.phase == GAME_OVER:
        if state.winner is None:
            return "Vault (abstract): game over, a draw"
        return (f"Vault (abstract): {state.names[state.winner]} "
                f"({d.COLOURS[state.winner]}) wins ({state.end})")
    return (f"Vault (abstract) · move {len(state.moves) + 1}: "
            f"{d.COLOURS[state.to_move]} ({state.names[state.to_move]}) to move")


def board_lines(state: AbstractState) -> list[str]:
    """The board as text, rank 10 at the top: W, B or '.'."""
    out = []
    for rank in range(d.SIZE, 0, -1):
        row = []
        for f in range(d.SIZE):
            i = (rank - 1) * d.SIZE + f
            row.append("W" if i in state.pawns[0] else "B" if i in state.pawns[1] else ".")
        out.append(f"  {rank:>2} " + " ".join(row))
    out.append("     " + " ".join(d.FILES))
    return out


def describe(event: dict[str, Any]) -> str | None:
    """The sim's log pane and `replay`: an event of this game in words, seats counted
    from 1 (1 White, 2 Black)."""
    kind = event.get("type")
    seat = event.get("seat")
    who = (f"seat {seat + 1} ({d.COLOURS[seat]})" if seat in (0, 1)
           and not isinstance(seat, bool) else "?")
    if kind == "move":
        return f"move {event.get('from')}-{event.get('to')}"
    if kind == "resign":
        return f"{who} resigns"
    if kind == "pick":
        return f"{who} picks" + (" (the pause: chosen)" if event.get("choose") else "")
    if kind == "draw":
        return "a draw, agreed"
    return None


def _seat(word: str, what: str) -> int:
    """A seat as people say it (1 White, 2 Black) -> the event's seat (from 0)."""
    if word not in ("1", "2"):
        raise ValueError(f"usage: {what} (seat 1 White, 2 Black), got {word[:20]!r}")
    return int(word) - 1


def parse_command(text: str, state: AbstractState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    words = [w.lower() for w in parsed]
    if words[0] == "move":
        words = words[1:]
    if len(words) == 2 and all(d.parse_cell(w) is not None for w in words):
        return {"type": "move", "from": words[0], "to": words[1]}
    if words and words[0] == "bot" and len(words) <= 2:
        try:
            level = int(words[1]) if len(words) == 2 else DEFAULT_LEVEL
            frm, to = opponent.choose_move(state, level, seed=len(state.moves))
        except ValueError as exc:
            raise ValueError(f"bot: {exc}") from None
        return {"type": "move", "from": frm, "to": to}
    if words[:1] == ["pick"] and len(words) in (2, 3):
        event: dict[str, Any] = {"type": "pick", "seat": _seat(words[1], "pick N [choose]")}
        if len(words) == 3:
            if words[2] != "choose":
                raise ValueError("usage: pick N [choose] (seat 1 White, 2 Black)")
            event["choose"] = True
        return event
    if words[:1] == ["resign"] and len(words) == 2:
        return {"type": "resign", "seat": _seat(words[1], "resign N")}
    if words == ["draw"]:
        return {"type": "draw"}
    if words == ["undo"]:
        return {"type": "undo"}
    raise ValueError(f"unknown command {text[:40]!r} (help lists the commands)")


def page_moves(state: AbstractState, new_game_after_over: bool = False) -> dict[str, Any]:
    """`move` {from: [legal destinations]} (tap a pawn, then one of its cells),
    `resign` [seats], `draw`, `bot` [levels] (the companion moves), `undo`, and
    `new_game` {"game"} once it is over (when the host starts the next game in a new
    log). Seats are the events' (from 0: White)."""
    moves: dict[str, Any] = {}
    if state.prev is not None:
        moves["undo"] = True
    if state.phase == GAME_OVER and new_game_after_over:
        moves["new_game"] = {"game": d.GAME_ID}
    if state.phase == PLAYING:
        by_from: dict[str, list[str]] = {}
        for frm, to in engine.legal_moves(state):
            by_from.setdefault(frm, []).append(to)
        moves["move"] = by_from
        moves["resign"] = [0, 1]
        moves["draw"] = True
        moves["bot"] = sorted(d.LEVELS)
    return moves


def page_details(state: AbstractState) -> dict[str, Any]:
    return {
        "size": d.SIZE,
        "white": sorted(d.cell_name(i) for i in state.pawns[0]),
        "black": sorted(d.cell_name(i) for i in state.pawns[1]),
        "last_move": list(state.moves[-1]) if state.moves else None,
        "pick": list(state.pick) if state.pick is not None else None,
        "status": status_lines(state),
        "headline": headline(state),
    }


def press_event(state: AbstractState, seat: int, ts_ns: int) -> dict[str, Any] | None:
    """On a 2-seat table's buttons: the seat to move steps its pick (`pick`); the other
    seat cancels a pick, or, with none, asks the companion for the mover's move (the
    `bot` move at the default level, seeded by the move number, so a replay plays it
    again)."""
    if state.phase != PLAYING or seat not in (0, 1):
        return None
    if seat == state.to_move or state.pick is not None:
        return {"type": "pick", "seat": seat, "ts_ns": ts_ns}
    frm, to = opponent.choose_move(state, DEFAULT_LEVEL, seed=len(state.moves))
    return {"type": "move", "from": frm, "to": to, "ts_ns": ts_ns}


def timed_window(state: AbstractState) -> tuple[Any, dict[str, Any], float] | None:
    """A pick on the buttons: `PICK_SECONDS` without a press chooses the pawn shown, or
    plays the move shown. Each press is a new window (the timer starts again)."""
    if state.phase != PLAYING or state.pick is None:
        return None
    key = ("pick", state.events_applied)  # each press a new window
    frm, to = state.pick
    if to:
        return key, {"type": "move", "from": frm, "to": to}, d.PICK_SECONDS
    return key, {"type": "pick", "seat": state.to_move, "choose": True}, d.PICK_SECONDS


GAME = Game(
    id=d.GAME_ID,
    name="Vault (abstract)",
    state_type=AbstractState,
    new_state=engine.new_state,
    apply=engine.apply,
    summary=summary,
    event_types=engine.EVENT_TYPES,
    render=render,
    status_lines=status_lines,
    parse_command=parse_command,
    help=HELP,
    page_moves=page_moves,
    page_details=page_details,
    press_event=press_event,
    timed_window=timed_window,
    players=(d.PLAYERS, d.PLAYERS),
    new_words="NAME NAME",
    seat_names=lambda state: list(state.names),
    describe=describe,
    # captures, the win, an agreed draw
    spoken=frozenset({"new_game", "capture", "win", "draw"}),
)
