"""Immutable state of The Big Score, Act II. Token collections are sorted tuples (so
two states holding the same tokens are equal), the bag a tuple of counts in
`definition.TOKEN_KINDS` order."""

from __future__ import annotations

from dataclasses import dataclass, field

NO_GAME = "no_game"
CHOOSE = "choose"  # players in the vault choose Rob or Flee, secretly
TRADE = "trade"  # eligible robbers trade with the Vault Floor in turn
GAME_OVER = "game_over"

IN_VAULT, FLED, BUSTED = "in", "fled", "busted"


@dataclass(frozen=True)
class Player:
    name: str
    act1_cash: int = 0  # $K of cash tokens from Act I
    act1_diamonds: int = 0
    act1_artifacts: int = 0
    act1_drives: int = 0
    expert: str | None = None
    status: str = IN_VAULT
    vault: tuple[str, ...] = ()  # Act II Vault Tokens held (sorted)
    ability_used: bool = False
    flee: bool | None = None  # this round's secret choice (None: not chosen yet)
    drawn: str | None = None  # the token drawn this round (kept in `vault` too)
    fled_round: int | None = None


@dataclass(frozen=True)
class BigScoreState:
    phase: str = NO_GAME
    players: tuple[Player, ...] = ()
    bag: tuple[int, ...] = ()  # counts per token kind
    floor: tuple[str, ...] = ()  # the Vault Floor (sorted)
    cops: int = 0  # cop tokens on the track
    busted: bool = False  # a cop reached Busted
    marker: int = 0  # the First Player Marker's seat
    round: int = 0
    queue: tuple[int, ...] = ()  # seats still to trade or pass this round, in order
    events_applied: int = 0
    prev: BigScoreState | None = field(default=None, compare=False, repr=False)
    undo_depth: int = field(default=0, compare=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.players)

    def in_vault(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.players) if p.status == IN_VAULT)
