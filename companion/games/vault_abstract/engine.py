"""The Vault (abstract) referee as a pure reducer:

    apply(state, event) -> Result(state, rejection, outputs)

Events: `new_game` {"game":"vault-abstract","players":2,"names":[White, Black]},
`move` {"from":"c1","to":"a3"} (a walk or a jump; the jumped-over pawn is the one
halfway), `resign` {"seat":n}, `draw` {} (agreed), `undo`, and the notes
`rejected`/`note`. Seat 0 is White and moves first.

Picking a move on a 2-seat table's buttons: `pick` {"seat":n} is a press. The seat to
move steps through its pawns that can move (from its home row, left to right as it
sits), and once a pawn is chosen (`pick` {"seat":n,"choose":true}: the table's pause)
through that pawn's destinations; the pause then plays the `move`. The other seat's
`pick` cancels the pick. Picks change no position; a move ends the pick.

Game end, checked at the start of each turn: the player to move wins with a pawn on the
far rank; otherwise with no legal move they lose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from companion.games import base
from companion.games.base import Output, Rejected, Result
from companion.games.vault_abstract import definition as d
from companion.games.vault_abstract.state import GAME_OVER, NO_GAME, PLAYING, AbstractState

N = d.SIZE


def new_state() -> AbstractState:
    return AbstractState()


def start_position() -> tuple[frozenset[int], frozenset[int]]:
    home_w, home_b = d.HOME_RANK
    return (
        frozenset(home_w * N + f for f in range(N)),
        frozenset(home_b * N + f for f in range(N)),
    )


# --------------------------------------------------------------------------- moves


def _walks(own: frozenset[int], other: frozenset[int], p: int) -> list[int]:
    r, f = divmod(p, N)
    out = []
    for dr in (-1, 0, 1):
        for df in (-1, 0, 1):
            if dr == 0 and df == 0:
                continue
            rr, ff = r + dr, f + df
            if 0 <= rr < N and 0 <= ff < N:
                q = rr * N + ff
                if q not in own and q not in other:
                    out.append(q)
    return out


def _jumps(own: frozenset[int], p: int) -> list[int]:
    r, f = divmod(p, N)
    out = []
    for q in own:
        if q == p:
            continue
        qr, qf = divmod(q, N)
        rr, ff = 2 * qr - r, 2 * qf - f
        if 0 <= rr < N and 0 <= ff < N:
            t = rr * N + ff
            if t not in own:
                out.append(t)
    return out


def destinations(pawns: tuple[frozenset[int], frozenset[int]], seat: int, p: int) -> list[int]:
    """Cells the pawn on `p` (of `seat`) may move to: walks then jumps, ascending."""
    own, other = pawns[seat], pawns[1 - seat]
    if p not in own:
        return []
    return sorted(set(_walks(own, other, p)) | set(_jumps(own, p)))


def moves_of(pawns: tuple[frozenset[int], frozenset[int]], seat: int) -> list[tuple[int, int]]:
    return [(p, t) for p in sorted(pawns[seat]) for t in destinations(pawns, seat, p)]


def move_pawns(
    pawns: tuple[frozenset[int], frozenset[int]], seat: int, frm: int, to: int
) -> tuple[frozenset[int], frozenset[int]]:
    own = (pawns[seat] - {frm}) | {to}
    other = pawns[1 - seat] - {to}
    return (own, other) if seat == 0 else (other, own)


def on_far_rank(pawns: tuple[frozenset[int], frozenset[int]], seat: int) -> bool:
    far = d.FAR_RANK[seat]
    return any(p // N == far for p in pawns[seat])


def legal_moves(state: AbstractState) -> list[tuple[str, str]]:
    """Every legal move of the player to move, as (from, to) cell names; [] once over."""
    if state.phase != PLAYING:
        return []
    return [(d.cell_name(p), d.cell_name(t)) for p, t in moves_of(state.pawns, state.to_move)]


def legal_destinations(state: AbstractState, cell: str) -> list[str]:
    """Where the pawn on `cell` may go now (empty if it is not the mover's pawn)."""
    p = d.parse_cell(cell)
    if state.phase != PLAYING or p is None:
        return []
    return [d.cell_name(t) for t in destinations(state.pawns, state.to_move, p)]


# --------------------------------------------------------------------------- handlers


def _name(state: AbstractState, seat: int) -> str:
    return f"{state.names[seat]} ({d.COLOURS[seat]})"


def _playing(state: AbstractState, ev: Mapping[str, Any]) -> None:
    if state.phase == NO_GAME:
        raise Rejected(f"{ev['type']}: not allowed now: no game has started (send new_game "
                       "first)", "wrong_phase")
    if state.phase == GAME_OVER:
        raise Rejected(f"{ev['type']}: not allowed now: the game is over", "wrong_phase")


def _new_game(state: AbstractState, ev: Mapping[str, Any]) -> tuple[AbstractState, list[Output]]:
    if state.phase != NO_GAME:
        raise Rejected("new_game: a game is already under way in this log (start a new log)")
    game = base.field(ev, "game")
    if game != d.GAME_ID:
        raise Rejected(f"new_game: unknown game {base._short(game)} (this referee plays "
                       f"{d.GAME_ID!r})")
    base.whole(ev, "players", d.PLAYERS, d.PLAYERS)
    names = base.names_of(ev, d.PLAYERS)
    new = AbstractState(phase=PLAYING, names=names, pawns=start_position())
    return new, [
        Output("announce", "new_game", f"New game of Vault: {names[0]} (White) against "
               f"{names[1]} (Black)"),
        Output("announce", "turn", f"{_name(new, 0)} to move", 0),
    ]


def _start_of_turn(state: AbstractState) -> tuple[AbstractState, list[Output]]:
    """The checks made at the start of the turn of the player to move."""
    seat = state.to_move
    if on_far_rank(state.pawns, seat):
        return replace(state, phase=GAME_OVER, winner=seat, end="far rank"), [
            Output("flash", "win", f"{_name(state, seat)} wins: a pawn on the far rank", seat),
        ]
    if not moves_of(state.pawns, seat):
        winner = 1 - seat
        return replace(state, phase=GAME_OVER, winner=winner, end="no legal move"), [
            Output("flash", "win", f"{_name(state, winner)} wins: {_name(state, seat)} has no "
                   "legal move", winner),
        ]
    return state, [Output("announce", "turn", f"{_name(state, seat)} to move", seat)]


def _move(state: AbstractState, ev: Mapping[str, Any]) -> tuple[AbstractState, list[Output]]:
    _playing(state, ev)
    names = []
    for key in ("from", "to"):
        raw = base.field(ev, key)
        cell = d.parse_cell(raw)
        if cell is None:
            raise Rejected(f"move: '{key}' must be a cell a1-j10, got {base._short(raw)}")
        names.append(cell)
    frm, to = names
    seat = state.to_move
    own, other = state.pawns[seat], state.pawns[1 - seat]
    fn, tn = d.cell_name(frm), d.cell_name(to)
    if frm not in own:
        whose = f"{d.COLOURS[1 - seat]}'s pawn" if frm in other else "empty"
        raise Rejected(f"move: {fn} is {whose}; {_name(state, seat)} moves a "
                       f"{d.COLOURS[seat]} pawn")
    if to in own:
        raise Rejected(f"move: {tn} holds your own pawn")
    fr, ff = divmod(frm, N)
    tr, tf = divmod(to, N)
    dr, df = tr - fr, tf - ff
    captured = False
    if max(abs(dr), abs(df)) == 1:
        if to in other:
            raise Rejected(f"move: a walk must end on an empty cell ({tn} holds "
                           f"{d.COLOURS[1 - seat]}'s pawn; captures are by jumping only)")
        kind = "walks"
    else:
        if dr % 2 or df % 2:
            raise Rejected(f"move: {fn}-{tn} is neither a walk (one step) nor a jump (no cell "
                           "lies halfway)")
        mid = (fr + dr // 2) * N + ff + df // 2
        if mid not in own:
            raise Rejected(f"move: {fn}-{tn} jumps over {d.cell_name(mid)}, which holds no "
                           f"{d.COLOURS[seat]} pawn")
        captured = to in other
        kind = f"jumps over {d.cell_name(mid)}"
    pawns = move_pawns(state.pawns, seat, frm, to)
    moved = replace(state, pawns=pawns, to_move=1 - seat, moves=state.moves + ((fn, tn),),
                    pick=None)
    text = f"{_name(state, seat)} {kind}: {fn}-{tn}" + (" and captures" if captured else "")
    outs = [Output("flash", "capture" if captured else "move", text, seat)]
    after, more = _start_of_turn(moved)
    return after, outs + more


def _resign(state: AbstractState, ev: Mapping[str, Any]) -> tuple[AbstractState, list[Output]]:
    _playing(state, ev)
    seat = base.whole(ev, "seat", 0, 1)
    return replace(state, phase=GAME_OVER, winner=1 - seat, end="resigned"), [
        Output("flash", "win", f"{_name(state, seat)} resigns: {_name(state, 1 - seat)} wins",
               1 - seat)
    ]


def _draw(state: AbstractState, ev: Mapping[str, Any]) -> tuple[AbstractState, list[Output]]:
    _playing(state, ev)
    return replace(state, phase=GAME_OVER, winner=None, end="draw"), [
        Output("announce", "draw", "Draw agreed")
    ]


def pick_order(seat: int, cells: list[str]) -> list[str]:
    """Cells in the order a seat's presses step through them: from its home row out,
    left to right as that player sits (White from file a, Black from file j)."""
    def key(name: str) -> tuple[int, int]:
        i = d.parse_cell(name)
        assert i is not None
        rank, file = divmod(i, N)
        return (rank, file) if seat == d.WHITE else (N - 1 - rank, N - 1 - file)
    return sorted(cells, key=key)


def _next(cells: list[str], current: str) -> str:
    return cells[(cells.index(current) + 1) % len(cells)] if current in cells else cells[0]


def _pick(state: AbstractState, ev: Mapping[str, Any]) -> tuple[AbstractState, list[Output]]:
    _playing(state, ev)
    seat = base.whole(ev, "seat", 0, 1)
    choose = base.boolean(ev, "choose") if "choose" in ev else False
    mover = state.to_move
    if seat != mover:
        if state.pick is None:
            raise Rejected(f"pick: it is {_name(state, mover)}'s move", "wrong_seat")
        return replace(state, pick=None), [
            Output("announce", "pick", f"{_name(state, seat)} cancels the pick", seat)]
    if choose:
        if state.pick is None or state.pick[1]:
            raise Rejected("pick: no pawn picked to choose", "wrong_phase")
        frm = state.pick[0]
        to = pick_order(mover, legal_destinations(state, frm))[0]
        return replace(state, pick=(frm, to)), [
            Output("announce", "pick", f"{frm.upper()} to {to.upper()}? Press for the next "
                   "cell; wait to play it", seat)]
    if state.pick is None or not state.pick[1]:
        pawns = pick_order(mover, list({frm for frm, _ in legal_moves(state)}))
        frm = pawns[0] if state.pick is None else _next(pawns, state.pick[0])
        return replace(state, pick=(frm, "")), [
            Output("announce", "pick", f"{frm.upper()}? Press for the next pawn; wait to "
                   "choose it", seat)]
    frm = state.pick[0]
    to = _next(pick_order(mover, legal_destinations(state, frm)), state.pick[1])
    return replace(state, pick=(frm, to)), [
        Output("announce", "pick", f"{frm.upper()} to {to.upper()}?", seat)]


HANDLERS = {"new_game": _new_game, "move": _move, "resign": _resign, "draw": _draw,
            "pick": _pick}
EVENT_TYPES = frozenset(HANDLERS) | {"undo"} | base.NOTE_TYPES


def apply(state: AbstractState, event: Any, undo_limit: int | None = None) -> Result:
    """Apply one event. Pure: the same state and event always give the same result.
    `undo_limit`: the undo steps kept (None: the whole game; see `base.run`)."""
    return base.run(state, event, HANDLERS, undo_limit)


def replay(events: list[Any], state: AbstractState | None = None) -> AbstractState:
    return base.replay(apply, state or new_state(), events)
