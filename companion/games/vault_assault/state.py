"""Immutable game state for Vault Assault. Every field is a value: tuples, frozensets,
ints, strings. The engine makes new states with its own `replace` (engine.py: one
dict copy, no __init__), so nothing here may define __post_init__ or __slots__."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

# Phases of a game, in the order a turn goes through them.
NO_GAME = "no_game"  # before new_game
HEIST_HIDE = "heist_hide"  # the cops hide the diamond in their row
HEIST = "heist"  # robbers flip wires
HEIST_OVER = "heist_over"  # waiting for "Go!" (assault_start)
ASSAULT = "assault"  # the real-time race
IMPOUND = "impound"  # arrested seats lose a car
GAME_OVER = "game_over"  # tallies and sticky fingers

PHASES = (NO_GAME, HEIST_HIDE, HEIST, HEIST_OVER, ASSAULT, IMPOUND, GAME_OVER)


@dataclass(frozen=True)
class Seat:
    name: str
    diamonds: int = 0
    cars: int = 3
    impounded: tuple[int, ...] = ()  # car indices impounded so far
    escaped: int = 0  # turns in which this seat escaped
    arrested: int = 0  # turns in which this seat was arrested
    cash: int | None = None  # tallied at game end
    loots: int = 0  # statistics only
    steals: int = 0
    stolen_from: int = 0
    tiles_lost: int = 0  # to dye packs (statistics)


@dataclass(frozen=True)
class Heist:
    row: tuple[str, ...]  # cops' hidden row, cops' left-to-right order
    in_heist: frozenset[int]  # robber seats still flipping
    flipped: tuple[tuple[int, frozenset[int]], ...]  # (seat, positions flipped)
    attempts: int = 0
    diamond_to: int | None = None  # seat that found the diamond this turn
    trapped: frozenset[int] = frozenset()  # seats that hit the dye pack
    # This attempt's flips chosen so far one robber at a time (`heist_flip`, a robber's
    # own phone), by seat: (seat, position, or None for a stop). The attempt is
    # evaluated when every robber still in has chosen.
    pending: tuple[tuple[int, int | None], ...] = ()

    def chosen(self) -> frozenset[int]:
        """The seats whose flip for this attempt is in (`pending`)."""
        return frozenset(s for s, _ in self.pending)

    def flipped_by(self, seat: int) -> frozenset[int]:
        for s, positions in self.flipped:
            if s == seat:
                return positions
        return frozenset()


@dataclass(frozen=True)
class Turn:
    cop: int
    heist: Heist | None = None
    preset: int = 0  # pieces of the first mosaic preset by alarms
    stages: int = 0  # stages 1..3 claimed so far
    bang_intervals: frozenset[int] = frozenset()  # k: a Bang! used before stage k+1

    @property
    def bang_since_stage(self) -> bool:
        """A dye pack has been used since the last stage claim."""
        return self.stages in self.bang_intervals

    hostages: frozenset[int] = frozenset()  # robber seats with a hostage die set aside
    escaped: tuple[int, ...] = ()  # in the order they escaped
    arrested: frozenset[int] = frozenset()
    arrest_called: bool = False
    empty: bool = False  # "Empty!" called this turn
    impounds_due: frozenset[int] = frozenset()
    go_ns: int | None = None  # the ts_ns of assault_start, when it carried one
    # The clock epoch of go_ns (the event's "clock": a boot of the box, or None for a
    # script's own stamps and old logs). Stamps of different epochs are never compared.
    go_clock: str | None = None


@dataclass(frozen=True)
class Challenge:
    """A claim the camera challenged (`claim_check`, mode "challenge"), open until the
    table answers: `challenge_upheld` undoes the claimed verdict, `play_on` keeps it.
    `event` is the claimed event's number (its `events_applied`); `before` and `after`
    the states on either side of it, when still held (not part of equality)."""

    event: int
    claim: str  # "escape", "stage" or "arrest"
    seat: int | None
    stage: int | None
    text: str  # what the camera sees, for people
    before: Any = field(default=None, compare=False, repr=False)
    after: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class GameState:
    phase: str = NO_GAME
    players: int = 0
    seats: tuple[Seat, ...] = ()
    first_cop: int = 0
    turns_played: int = 0
    turn: Turn | None = None
    diamonds_in_box: int = 5
    bank_empty: bool = False
    sticky_fingers_used: bool = False
    events_applied: int = 0
    # Claims the camera challenged that wait for the table's answer, oldest first.
    challenges: tuple[Challenge, ...] = ()
    # The state before the last accepted event, for undo. Not part of equality: two
    # states are equal when the game is in the same position, however it got there.
    prev: GameState | None = field(default=None, compare=False, repr=False)
    # How many states `prev` reaches (the undo steps held). Not part of equality either.
    undo_depth: int = field(default=0, compare=False, repr=False)

    @property
    def nseats(self) -> int:
        return len(self.seats)

    @property
    def cop(self) -> int | None:
        return self.turn.cop if self.turn else None

    def robbers(self) -> tuple[int, ...]:
        """Robber seats in the cops' comparison order: clockwise from the cops' left."""
        if self.turn is None:
            return ()
        return _robbers(len(self.seats), self.turn.cop)


@lru_cache(maxsize=64)
def _robbers(nseats: int, cop: int) -> tuple[int, ...]:
    return tuple((cop + i) % nseats for i in range(1, nseats))
