"""Vault Assault's seat buttons and lamps: a press is a `buzz` (the race: Escaped! or
Arrested!, or a false start before Go!), the cops' press may claim the next stage
first, the lamps light the seats whose button counts now and the bar the stages
claimed, and a key for a seat the game has not says so."""

from __future__ import annotations

from typing import Any

from companion.games.vault_assault.definition import STAGES_BEFORE_ARREST
from companion.games.vault_assault.state import ASSAULT, GameState


def press(state: GameState, seat: int, ts_ns: int) -> dict[str, Any]:
    return {"type": "buzz", "seat": seat, "ts_ns": ts_ns}


def stage_claim(
    state: GameState, ts_ns: int, last: tuple[int, int] | None
) -> tuple[dict[str, Any], tuple[int, int]] | None:
    """The cops' press as the next stage claim, while stages 1-3 are not all in; `last`
    is the (turn, stage) of the last press's claim, which may not be applied yet."""
    turn = state.turn
    if turn is None or state.bank_empty:
        return None
    last_turn, last_stage = last or (-1, 0)
    done = max(turn.stages, last_stage if last_turn == state.turns_played else 0)
    if done >= STAGES_BEFORE_ARREST:
        return None
    return ({"type": "stage", "stage": done + 1, "ts_ns": ts_ns},
            (state.turns_played, done + 1))


def live_seats(state: GameState) -> set[int]:
    """Seats whose button counts now: robbers not yet escaped during the race, and the
    cops once they may call the Arrest."""
    turn = state.turn
    if state.phase != ASSAULT or turn is None:
        return set()
    live = {s for s in state.robbers() if s not in turn.escaped}
    if turn.stages >= STAGES_BEFORE_ARREST or state.bank_empty:
        live.add(turn.cop)
    return live


def bar(state: GameState) -> int:
    """The stage bar: the stages claimed this turn."""
    return state.turn.stages if state.turn else 0


def no_seat(state: GameState, seat: int) -> str | None:
    """Why a seat's key presses nothing: this game has no such seat (or team). Keys
    and seats as people count them, from 1 (`seat` is the 0-based seat)."""
    if state.nseats and seat >= state.nseats:
        what = "teams" if state.players == 4 else "seats"
        return (
            f"key {seat + 1}: no seat {seat + 1} in this {state.players}-player game "
            f"({what} 1-{state.nseats})"
        )
    return None
