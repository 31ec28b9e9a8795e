"""Coin Race's immutable state, with the bookkeeping every game keeps for undo."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_GAME = "no_game"
RACING = "racing"
GAME_OVER = "game_over"


@dataclass(frozen=True)
class CoinState:
    phase: str = NO_GAME
    names: tuple[str, ...] = ()
    pos: tuple[int, ...] = ()
    to_move: int = 0
    winner: int | None = None
    events_applied: int = 0
    prev: CoinState | None = field(default=None, compare=False, repr=False)
    undo_depth: int = field(default=0, compare=False, repr=False)
