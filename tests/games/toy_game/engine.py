"""Coin Race as a pure reducer through the house's one runner (`base.run`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from companion.games import base
from companion.games.base import Output, Rejected, Result
from toy_game import definition as d
from toy_game.state import GAME_OVER, NO_GAME, RACING, CoinState


def new_state() -> CoinState:
    return CoinState()


def _new_game(state: CoinState, ev: Mapping[str, Any]) -> tuple[CoinState, list[Output]]:
    if state.phase != NO_GAME:
        raise Rejected("new_game: a game is already under way in this log (start a new log)")
    if ev.get("game") != d.GAME_ID:
        raise Rejected(f"new_game: this is {d.GAME_ID}, not {ev.get('game')!r}")
    names = base.names_of(ev, d.PLAYERS)
    new = CoinState(phase=RACING, names=names, pos=(0,) * len(names))
    return new, [Output("announce", "new_game", f"Coin Race: {len(names)} players")]


def _step(state: CoinState, ev: Mapping[str, Any]) -> tuple[CoinState, list[Output]]:
    if state.phase != RACING:
        raise Rejected("step: no race on", "wrong_phase")
    seat = base.whole(ev, "seat", 0, len(state.names) - 1)
    if seat != state.to_move:
        raise Rejected(f"step: it is {state.names[state.to_move]}'s turn")
    n = base.whole(ev, "n", 1, d.MAX_STEP)
    pos = list(state.pos)
    pos[seat] = min(d.GOAL, pos[seat] + n)
    name = state.names[seat]
    out = [Output("announce", "step", f"{name} (seat {seat}) steps to {pos[seat]}", seat)]
    if pos[seat] == d.GOAL:
        out.append(Output("flash", "win", f"{name} wins!", seat))
        return replace(state, pos=tuple(pos), phase=GAME_OVER, winner=seat), out
    return replace(state, pos=tuple(pos), to_move=(seat + 1) % len(pos)), out


HANDLERS = {"new_game": _new_game, "step": _step}
EVENT_TYPES = frozenset(HANDLERS) | {"undo"} | base.NOTE_TYPES


def apply(state: CoinState, event: Any, undo_limit: int | None = None) -> Result:
    return base.run(state, event, HANDLERS, undo_limit)
