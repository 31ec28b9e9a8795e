"""Immutable state of a game of Vault (abstract). Pawns are frozensets of cell indices."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_GAME = "no_game"
PLAYING = "playing"
GAME_OVER = "game_over"


@dataclass(frozen=True)
class AbstractState:
    phase: str = NO_GAME
    names: tuple[str, ...] = ()
    pawns: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
    to_move: int = 0
    moves: tuple[tuple[str, str], ...] = ()  # accepted moves, (from, to) cell names
    winner: int | None = None
    end: str = ""  # why the game ended: "far rank", "no legal move", "resigned", "draw"
    # A move being picked on the buttons: (pawn cell, "") while the pawn is picked,
    # (pawn cell, destination cell) once the pawn is chosen; None: no pick.
    pick: tuple[str, str] | None = None
    events_applied: int = 0
    prev: AbstractState | None = field(default=None, compare=False, repr=False)
    undo_depth: int = field(default=0, compare=False, repr=False)
