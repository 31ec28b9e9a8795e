"""Vault Assault's moves legal now, for the table page: pure, state in, a JSON-ready
dict out.

Each candidate event is checked with the engine's own `apply`, so the page never offers
what the referee would refuse. Keys (present only when at least one move of that kind
is legal):

- ``new_game``: {"players": {"2": seats, ...}} (the seat count per player count)
- ``heist_hide``: {"row": {face: count}, "faces": [...]} the counts the row must hold
- ``heist_attempt``: {"seats": {seat: {"positions": [0-based], "stop": true}},
  "row_length": n, "secret": false, "chosen": [seats]}: every robber still in the
  heist who has not chosen on their phone must flip or stop in one attempt. In a
  3-player game (``"secret": true``: robbers hide their dice from each other) the
  seats carry no "positions" here: which dice a robber flipped is no one else's to see;
  `private_moves` gives them to the device that may see them
- ``heist_flip``: [seats] the robbers who may still choose this attempt's flip, one at a
  time (each on their own phone)
- ``assault_start``: true
- ``stage``: the next stage number
- ``dye_pack``: {"targets": [seats], "max": 2}
- ``hostage`` / ``backup`` / ``loot``: [seats]
- ``steal``: {seat: [victims]}
- ``empty``: true
- ``buzz``: [seats whose button counts now]
- ``impound``: {seat: [cars]} (0-based car numbers; a seat with no car left is never
  asked)
- ``tally``: [seats]
- ``sticky_fingers``: {seat: [victim seats, or null for the box]}
- ``undo``: true
- ``challenge_upheld`` / ``play_on``: [the claimed events' numbers] while the camera's
  challenges of them are open (``challenges`` in the page's state says what it saw)
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

from companion.games.vault_assault import definition as d
from companion.games.vault_assault.engine import apply, setup_of
from companion.games.vault_assault.state import (
    ASSAULT,
    GAME_OVER,
    HEIST,
    HEIST_HIDE,
    HEIST_OVER,
    IMPOUND,
    NO_GAME,
    GameState,
)

FACES = ("alarm", "dye_pack", "diamond")


def _ok(state: GameState, event: dict[str, Any]) -> bool:
    return apply(state, event).rejection is None


def legal_moves(state: GameState, *, new_game_after_over: bool = False) -> dict[str, Any]:
    """What may be sent now. `new_game_after_over`: the host starts a new log when a
    finished game gets a `new_game` (serve does), so a new game is offered then too."""
    moves: dict[str, Any] = {}
    finished = state.phase == GAME_OVER and all(s.cash is not None for s in state.seats)
    if state.phase == NO_GAME or (finished and new_game_after_over):
        moves["new_game"] = {
            "players": {str(p): s.seats for p, s in sorted(d.SETUPS.items())},
            "game": d.GAME_ID,
        }
    if state.prev is not None:
        moves["undo"] = True
    if state.challenges:
        moves["play_on"] = [c.event for c in state.challenges]
        upheld = [c.event for c in state.challenges
                  if _ok(state, {"type": "challenge_upheld", "event": c.event})]
        if upheld:
            moves["challenge_upheld"] = upheld
    turn = state.turn
    phase = state.phase
    if phase == HEIST_HIDE:
        moves["heist_hide"] = {"row": dict(setup_of(state).row_dice), "faces": list(FACES)}
    elif phase == HEIST and turn is not None and turn.heist is not None:
        secret = setup_of(state).secret_flips
        moves["heist_attempt"] = flip_moves(state, with_positions=not secret)
        moves["heist_flip"] = [int(s) for s in moves["heist_attempt"]["seats"]]
    elif phase == HEIST_OVER:
        moves["assault_start"] = True
    elif phase == ASSAULT and turn is not None:
        _assault_moves(state, moves)
    elif phase == IMPOUND and turn is not None:
        impound: dict[str, list[int]] = {}
        for seat in sorted(turn.impounds_due):
            impound[str(seat)] = [
                c
                for c in range(d.CARS_PER_SEAT)
                if _ok(state, {"type": "impound", "seat": seat, "car": c})
            ]
        moves["impound"] = impound
    elif phase == GAME_OVER:
        tally = [
            s for s in range(state.nseats) if _ok(state, {"type": "tally", "seat": s, "cash": 0})
        ]
        if tally:
            moves["tally"] = tally
        sticky: dict[str, list[int | None]] = {}
        for seat in range(state.nseats):
            sources: list[int | None] = [
                src
                for src in [None, *range(state.nseats)]
                if _ok(state, {"type": "sticky_fingers", "seat": seat, "from": src})
            ]
            if sources:
                sticky[str(seat)] = sources
        if sticky:
            moves["sticky_fingers"] = sticky
    return moves


def flip_moves(state: GameState, *, with_positions: bool = True) -> dict[str, Any]:
    """The heist attempt's moves now: each robber still in who has not chosen on their
    phone, with the positions they may flip (0-based; left out without
    `with_positions`), and who has chosen."""
    assert state.turn is not None and state.turn.heist is not None
    heist = state.turn.heist
    chosen = heist.chosen()
    seats: dict[str, Any] = {}
    for seat in state.robbers():
        if seat not in heist.in_heist or seat in chosen:
            continue
        spec: dict[str, Any] = {"stop": True}
        if with_positions:
            done = heist.flipped_by(seat)
            spec["positions"] = [p for p in range(len(heist.row)) if p not in done]
        seats[str(seat)] = spec
    return {"seats": seats, "row_length": len(heist.row),
            "secret": setup_of(state).secret_flips, "chosen": sorted(chosen)}


def private_moves(state: GameState, seat: int | None) -> dict[str, Any] | None:
    """What one device may see of a 3-player heist that the table may not (robbers
    hide their chosen dice from each other): a robber's own phone (`seat`) its own
    flipped dice and the positions it may flip (`heist_flip`); the cops' phone, or a
    paired device that said it is nobody (the table's controls, where the cops enter
    the flips they compare), every robber's (`heist_attempt`). None: nothing secret
    now (another phase, or a game whose robbers do not hide their dice)."""
    turn = state.turn
    if (state.phase != HEIST or turn is None or turn.heist is None
            or not setup_of(state).secret_flips):
        return None
    heist = turn.heist
    flipped = {str(s): {str(p): heist.row[p] for p in sorted(ps)} for s, ps in heist.flipped}
    if seat is None or seat == turn.cop:
        return {"heist": {"flipped": flipped, "heist_attempt": flip_moves(state)}}
    if seat not in state.robbers():
        return None
    mine = heist.flipped_by(seat)
    can = seat in heist.in_heist and seat not in heist.chosen()
    return {"heist": {
        "seat": seat,
        "flipped": flipped.get(str(seat), {}),
        "in_heist": seat in heist.in_heist,
        "chosen": seat in heist.chosen(),
        # this attempt's own choice while the others choose: a position, or "stop"
        "choice": next(("stop" if p is None else p for s, p in heist.pending if s == seat),
                       None),
        "heist_flip": ({"positions": [p for p in range(len(heist.row)) if p not in mine],
                        "stop": True} if can else None),
    }}


def _assault_moves(state: GameState, moves: dict[str, Any]) -> None:
    assert state.turn is not None
    turn = state.turn
    nxt = turn.stages + 1
    if _ok(state, {"type": "stage", "stage": nxt}):
        moves["stage"] = nxt
    robbers = list(state.robbers())
    targets = [s for s in robbers if _ok(state, {"type": "dye_pack", "targets": [s]})]
    if targets:
        moves["dye_pack"] = {"targets": targets, "max": d.TILES_PER_DYE_PACK}
    for kind in ("hostage", "backup", "loot"):
        seats = [s for s in robbers if _ok(state, {"type": kind, "seat": s})]
        if seats:
            moves[kind] = seats
    steal: dict[str, list[int]] = {}
    for s in robbers:
        victims = [
            v
            for v in range(state.nseats)
            if _ok(state, {"type": "steal", "seat": s, "from": v})
        ]
        if victims:
            steal[str(s)] = victims
    if steal:
        moves["steal"] = steal
    if _ok(state, {"type": "empty"}):
        moves["empty"] = True
    buzz = [s for s in range(state.nseats) if _ok(state, {"type": "buzz", "seat": s})]
    if buzz:
        moves["buzz"] = buzz


def dye_pack_choices(state: GameState) -> list[list[int]]:
    """Every legal Bang! target list (one seat per tile taken), for tests."""
    if state.turn is None:
        return []
    robbers = list(state.robbers())
    out = []
    for n in range(1, d.TILES_PER_DYE_PACK + 1):
        for combo in combinations_with_replacement(robbers, n):
            if _ok(state, {"type": "dye_pack", "targets": list(combo)}):
                out.append(list(combo))
    return out
