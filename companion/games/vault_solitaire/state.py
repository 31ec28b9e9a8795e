"""Immutable state of a game of Vault (solitaire)."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_GAME = "no_game"
ROLL = "roll"  # waiting for the round's five dice
PLAY = "play"  # dice on the table: mark, power, re-roll or pass
GAME_OVER = "game_over"


@dataclass(frozen=True)
class SolitaireState:
    phase: str = NO_GAME
    name: str = ""
    round: int = 0  # 0..11: the lock letter LOCKS[round] closes at this round's end
    marked: frozenset[tuple[int, int]] = frozenset()  # squares marked by the player
    circled: frozenset[str] = frozenset()  # locks whose gems were circled
    dice: tuple[int, ...] = ()  # this round's dice
    used: frozenset[int] = frozenset()  # indices of dice used (or skipped by a pass)
    skimmer_boxes: tuple[int, ...] = (0, 0, 0)
    skimmer_used: tuple[bool, ...] = (False, False, False)
    rerolls_used: int = 0
    seen: tuple[int, ...] = ()  # the camera's five dice while a roll is awaited
    # who entered this round's dice: "camera" (the camera read all five surely and
    # entered them: one tap takes them back), or "" (typed, tapped or taken)
    rolled_by: str = ""
    events_applied: int = 0
    prev: SolitaireState | None = field(default=None, compare=False, repr=False)
    undo_depth: int = field(default=0, compare=False, repr=False)

    def unused_dice(self) -> tuple[int, ...]:
        return tuple(i for i in range(len(self.dice)) if i not in self.used)
