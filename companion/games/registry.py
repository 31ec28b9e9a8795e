"""The games this box plays, as definitions (boardgame.io style), keyed by the
`new_game` event's `game` field.

A `Game` holds a game's rules (new state, apply, summary) and the hooks the house
calls instead of knowing the game: whether the buttons race now (`buzz_armed`) and
whose press answers the race (`late_seat`), what a press means otherwise
(`press_event`), the LED board and the terminal's lines
(`render`, `status_lines`), the sim's short commands (`parse_command`, `help`), the
page's legal moves and extra fields (`page_moves`, `page_details`) and how a camera
reading becomes advice (`camera_advice`) and what the table hears of dice the camera
could not read (`camera_unread`). Vault Assault's entry wraps its existing
modules unchanged; it is also the default (a log without `new_game`, a fresh box).

`judge(state, event)` is the one place an event meets a game: the game of `state`,
or, for a `new_game` while no game has started, the game that event names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from companion.rules.engine import Result

DEFAULT = "vault-assault"
NO_GAME = "no_game"  # every game's state has a `phase`; this one before new_game
GAME_OVER = "game_over"

# id -> the module holding its `GAME` (imported on first use)
MODULES = {
    "vault-assault": "companion.games.vault_assault",
    "big-score": "companion.games.big_score.table",
    "vault-solitaire": "companion.games.vault_solitaire.table",
    "vault-abstract": "companion.games.vault_abstract.table",
}


def _no_press(state: Any, seat: int, ts_ns: int) -> dict[str, Any] | None:
    return None


def _no_advice(state: Any, reading: Any) -> str | None:
    return None


def _no_details(state: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Game:
    id: str
    name: str  # for people: "The Big Score (Act II)"
    state_type: type
    new_state: Callable[[], Any]
    apply: Callable[..., Result]  # (state, event, undo_limit=None) -> Result
    summary: Callable[[Any], dict[str, Any]]
    event_types: frozenset[str]
    render: Callable[..., Any]  # (state, flash, tick, mosaic) -> Frame
    status_lines: Callable[[Any], list[str]]
    parse_command: Callable[[str, Any], dict[str, Any]]  # ValueError: one line
    help: str
    page_moves: Callable[..., dict[str, Any]]  # (state, new_game_after_over=False)
    # Whether the seat buttons race now (the arbiter's windows); Vault: the assault.
    buzz_armed: Callable[[Any], bool] = field(default=lambda state: False)
    # The race's late seat (the seat whose press answers the race; the arbiter's
    # `late-seat-first` rule): Vault Assault's cops. None: no seat answers.
    late_seat: Callable[[Any], int | None] = field(default=lambda state: None)
    # A press of the late seat during the race that claims progress before it answers
    # the race (with `[table] cop_button_claims_stages`; Vault Assault: the next
    # stage): (state, ts_ns, the last claim's key) -> (the event, this claim's key), or
    # None: the press races as usual.
    late_claim: Callable[[Any, int, Any], tuple[dict[str, Any], Any] | None] = field(
        default=lambda state, ts_ns, last: None)
    # What a press means when they do not race (None: nothing, said on the display).
    press_event: Callable[[Any, int, int], dict[str, Any] | None] = _no_press
    page_details: Callable[[Any], dict[str, Any]] = _no_details
    camera_advice: Callable[[Any, Any], str | None] = _no_advice
    # What the camera reads: "mosaic" (Vault Assault's stage mosaics and robbers' dice,
    # shown as advice) or "pips" (the settled pip dice, left to right).
    camera_reads: str = "pips"
    # An event the camera's pip reading proposes (logged like any event; the table
    # takes it or not: Vault solitaire's `seen`), or None: nothing new to propose.
    camera_event: Callable[[Any, Any], dict[str, Any] | None] = field(
        default=lambda state, pips: None)
    # What to tell the table when some of the camera's settled pip dice could not be
    # read: (state, their faces left to right, None for each one not read) -> one line
    # (said once per reading), or None: nothing to say (Vault solitaire: while a roll
    # is awaited, which of the five dice to nudge or enter by hand).
    camera_unread: Callable[[Any, Any], str | None] = field(
        default=lambda state, faces: None)
    # A window the table's timer closes on its own (companion.window_timer): (a key
    # for this window, the event that closes it[, its own seconds]), or None while none
    # is open.
    timed_window: Callable[[Any], tuple[Any, ...] | None] = field(
        default=lambda state: None)

    # Events that carry one player's secret choice (The Big Score's `choose`): a phone
    # that said which player it is sends them for that player only.
    secret_events: frozenset[str] = frozenset()

    # The log line shown on screens (the sim's log pane) when it must differ from the
    # logged one (a secret choice); None: the line as logged.
    public: Callable[[dict[str, Any]], dict[str, Any] | None] = field(
        default=lambda event: None)

    def public_line(self, event: dict[str, Any]) -> str | None:
        from companion.events import encode

        shown = self.public(event)
        return None if shown is None else encode(shown)

    def started(self, state: Any) -> bool:
        return getattr(state, "phase", NO_GAME) != NO_GAME

    def over(self, state: Any) -> bool:
        return bool(self.summary(state).get("over")) if self.started(state) else False


@cache
def get(game_id: str) -> Game:
    """A game by its `new_game` id; KeyError for an unknown one."""
    return importlib.import_module(MODULES[game_id]).GAME  # type: ignore[no-any-return]


def known(game_id: Any) -> bool:
    return isinstance(game_id, str) and game_id in MODULES


def default() -> Game:
    return get(DEFAULT)


def of_state(state: Any) -> Game:
    """The game a state belongs to (Vault Assault's for anything else)."""
    for game_id in MODULES:
        g = get(game_id)
        if isinstance(state, g.state_type):
            return g
    return default()


def chosen_by(state: Any, event: Any) -> tuple[Game, Any]:
    """The game (and state) that judges `event`: a `new_game` naming a known game,
    while no game has started, switches to that game's new state."""
    current = of_state(state)
    if (
        isinstance(event, Mapping)
        and event.get("type") == "new_game"
        and not current.started(state)
        and known(event.get("game"))
        and event.get("game") != current.id
    ):
        g = get(event["game"])
        return g, g.new_state()
    return current, state


def judge(state: Any, event: Any, undo_limit: int | None = None) -> Result:
    game, state = chosen_by(state, event)
    return game.apply(state, event, undo_limit)


def summary(state: Any) -> dict[str, Any]:
    return of_state(state).summary(state)


def status_lines(state: Any) -> list[str]:
    return of_state(state).status_lines(state)


def parse_command(text: str, state: Any) -> dict[str, Any]:
    """A short command for the game being played; before any game, `play GAME NAME...`
    starts one of the others (`new ...` stays Vault Assault's)."""
    game = of_state(state)
    words = text.split()
    if words and words[0].lower() == "play" and not game.started(state):
        return play_command(words[1:])
    return game.parse_command(text, state)


PLAYERS = {"big-score": (1, 6), "vault-solitaire": (1, 1), "vault-abstract": (2, 2)}


def play_command(args: list[str]) -> dict[str, Any]:
    """`play big-score Ann Bob Cat`, `play vault-solitaire Sam`, `play vault-abstract
    Ann Bob` -> that game's new_game. Big Score needs `floor=T,T,T,T,T`; the First Player
    Marker goes to the first name (the youngest) unless `first=SEAT`; its Act I holdings
    come only with a JSON new_game."""
    if not args or args[0] not in PLAYERS:
        raise ValueError("usage: play big-score|vault-solitaire|vault-abstract NAME...")
    game_id = args[0]
    names = [a for a in args[1:] if "=" not in a]
    options = dict(a.split("=", 1) for a in args[1:] if "=" in a)
    lo, hi = PLAYERS[game_id]
    if not lo <= len(names) <= hi:
        want = str(lo) if lo == hi else f"{lo}-{hi}"
        raise ValueError(f"play {game_id}: give {want} names")
    event: dict[str, Any] = {"type": "new_game", "game": game_id, "players": len(names),
                             "names": names}
    if game_id == "big-score":
        if "floor" not in options:
            raise ValueError("play big-score NAME... floor=T,T,T,T,T [first=SEAT]")
        event["floor"] = [t for t in options["floor"].split(",") if t]
        # No Act I holdings here: everyone ties for the fewest payout tokens, and the
        # rulebook's tie-break (the youngest) is the first name listed unless first= says.
        event["first_player"] = 0
        if "first" in options:
            try:
                event["first_player"] = int(options["first"])
            except ValueError:
                raise ValueError(f"first= must be a seat, got {options['first']!r}") from None
    return event
