"""The games this box plays, as definitions (boardgame.io style), keyed by the
`new_game` event's `game` field.

A `Game` holds a game's rules (new state, apply, summary) and the hooks the house
calls instead of knowing the game: whether the buttons race now (`buzz_armed`) and
whose press answers the race (`late_seat`), what a press means otherwise
(`press_event`), the seat lamps and the bar (`live_seats`, `bar`), the LED board and
the terminal's lines (`render`, `status_lines`, `describe`), the sim's short commands
(`parse_command`, `new_command`, `help`), the page's legal moves and fields
(`page_moves`, `page_state`, `page_details`, `seat_names`), what the table hears
(`callouts`, `spoken`), and what the camera's readings mean (`camera_sense`,
`camera_render`, or the house's pip reading through `camera_event`, `camera_advice`
and `camera_unread`). Every game is a guest alike; Vault Assault is also the default
(a log without `new_game`, a fresh box).

`judge(state, event)` is the one place an event meets a game when only a state is at
hand: the game of `state`, or, for a `new_game` while no game has started, the game
that event names. The Referee holds its game instead (`chosen_by`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from companion.games.base import Result

DEFAULT = "vault-assault"
NO_GAME = "no_game"  # every game's state has a `phase`; this one before new_game
GAME_OVER = "game_over"

# id -> the module holding its `GAME` (imported on first use)
MODULES = {
    "vault-assault": "companion.games.vault_assault.table",
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


def _nothing(state: Any) -> None:
    return None


@dataclass(frozen=True)
class Game:
    id: str
    name: str  # for people: "The Big Score (Act II)"
    state_type: type
    new_state: Callable[[], Any]
    apply: Callable[..., Result]  # (state, event, undo_limit=None) -> Result
    summary: Callable[[Any], dict[str, Any]]
    event_types: frozenset[str]
    # (state, flash=None, tick=0, size=(32, 8)) -> a Frame of `size`, the display's
    # (width, height): companion.loop.Referee.size
    render: Callable[..., Any]
    status_lines: Callable[[Any], list[str]]
    parse_command: Callable[[str, Any], dict[str, Any]]  # ValueError: one line
    help: str  # the game's own commands, one a line (the house adds new/play/help)
    page_moves: Callable[..., dict[str, Any]]  # (state, new_game_after_over=False)
    players: tuple[int, int]  # how many may play: (fewest, most)
    # The words after `new` (or `play GAME`) for people, e.g. "NAME", "Ann Bob".
    new_words: str = "NAME..."
    # Those words -> this game's new_game (ValueError: one line); None: the names
    # (as many as `players` allows), after their count if it is said.
    new_command: Callable[[list[str]], dict[str, Any]] | None = None
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
    # The seats whose button counts now, lit on the seat lamps (Vault Assault: the
    # robbers still racing and the cops once they may call the Arrest).
    live_seats: Callable[[Any], set[int]] = field(default=lambda state: set())
    # How many lamps of the bar are lit (Vault Assault: the stages the cops claimed).
    bar: Callable[[Any], int] = field(default=lambda state: 0)
    # Why a seat's key presses nothing (a seat this game has not), or None; `seat` is
    # 0-based, the line says it as people count (key and seat N+1).
    no_seat: Callable[[Any, int], str | None] = field(default=lambda state, seat: None)
    # Whether a game that is over is finished for good: a new game then starts a new
    # log (Vault Assault: every seat tallied). None: as soon as it is over.
    done: Callable[[Any], bool] | None = None
    # One line on a finished game, for the sim resuming its log.
    over_line: Callable[[Any], str] = field(default=lambda state: "this game is over")
    # The page's top level for this game besides the house's keys (None: the summary,
    # also whole under "summary", with title, phase, status, events_applied, details).
    page_state: Callable[[Any], dict[str, Any]] | None = None
    page_details: Callable[[Any], dict[str, Any]] = _no_details
    # The players in seat order, by name ([] while none is seated).
    seat_names: Callable[[Any], list[str]] = field(default=lambda state: [])
    # An event as the page shows it when it must differ from the log pane's (Vault
    # Assault: the cops' row hidden until the heist ends); None: as `public` shows it.
    page_event: Callable[[dict[str, Any]], dict[str, Any] | None] = field(
        default=lambda event: None)
    # What the table hears of an event: (event, Result) -> phrases; None: each output
    # named in `spoken`, its text without seat tags; phrases worth rendering ahead.
    callouts: Callable[[Mapping[str, Any], Result], list[str]] | None = None
    spoken: frozenset[str] = frozenset()
    common_phrases: tuple[str, ...] = ()
    # A new reader of the camera's settled readings for this game, given the profile's
    # dice data (or None): its `read(state, reading)` gives a
    # companion.games.camera_sense.Seen. None: the house reads the pip dice, left to
    # right, and asks `camera_event`, `camera_advice` and `camera_unread`.
    camera_sense: Callable[[Any], Any] | None = None
    # The LED board with what the camera sees drawn in (state, flash, tick, the
    # reader's overlay, size) -> Frame (Vault Assault: the stage mosaics' pieces in
    # place); None: the camera draws nothing on the board.
    camera_render: Callable[[Any, str | None, int, Any, tuple[int, int]], Any] | None = None
    camera_advice: Callable[[Any, Any], str | None] = _no_advice
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
    # The event that enters a roll when the camera read every die of it surely (with
    # `[camera] claims` on): (state, pips left to right) -> the event, or None (Vault
    # solitaire: its `roll`, by the camera, which one tap takes back).
    camera_take: Callable[[Any, Any], dict[str, Any] | None] = field(
        default=lambda state, pips: None)
    # The claims the camera checks (companion.games.claims): (the state before an
    # accepted event, the event, the state after it) -> a Claim, or None: no claim
    # (Vault Assault: an Escape, a stage, the Arrest). None: the game has none.
    claim_of: Callable[[Any, Mapping[str, Any], Any], Any] | None = None
    # A claim against a settled reading: (claim, reading, the profile's dice data or
    # None, the sure confidence, the state now) -> a Judgement.
    judge_claim: Callable[..., Any] | None = None
    # Events only the camera posts (Vault Assault: `claim_check`): the page refuses
    # them from a phone; a log, a script or the input line replays them as any event.
    camera_only: frozenset[str] = frozenset()
    # What each part of the LED board means, for the page's key to it: (state, size) ->
    # {"columns": [{"label", "name", "side", "x", "y", "w", "h"}], "rows": [{"label",
    # "side", "read", "x", "y", "w", "h"}]} in the frame's pixels ("read": how the page
    # reads that part from the lit dots: "lit", "count" or "full"), or None: no key
    # (a flash, a game-over screen, a game without one).
    led_legend: Callable[[Any, tuple[int, int]], dict[str, Any] | None] = field(
        default=lambda state, size: None)
    # A window the table's timer closes on its own (companion.window_timer): (a key
    # for this window, the event that closes it[, its own seconds]), or None while none
    # is open.
    timed_window: Callable[[Any], tuple[Any, ...] | None] = _nothing

    # Events that carry one player's secret choice (The Big Score's `choose`): a phone
    # that said which player it is sends them for that player only.
    secret_events: frozenset[str] = frozenset()

    # The log line shown on screens (the sim's log pane) when it must differ from the
    # logged one (a secret choice); None: the line as logged.
    public: Callable[[dict[str, Any]], dict[str, Any] | None] = field(
        default=lambda event: None)
    # The same, when it depends on the game: (event, the state after it) -> the event
    # as screens show it (Vault Assault: a 3-player heist attempt without the positions
    # flipped), or None: as `public` shows it.
    public_in: Callable[[dict[str, Any], Any], dict[str, Any] | None] | None = None
    # What one paired device may see that the table may not: (state, the seat that
    # device said it is, or None for the table's own controls) -> JSON-ready data for
    # that device only, or None (Vault Assault: a 3-player heist, where robbers hide
    # their dice from each other: a robber's phone its own dice).
    private: Callable[[Any, int | None], dict[str, Any] | None] = field(
        default=lambda state, seat: None)
    # One readable line for an event of this game's log (None: the house's line).
    describe: Callable[[dict[str, Any]], str | None] = field(default=lambda event: None)

    def shown(self, event: dict[str, Any], state: Any = None) -> dict[str, Any] | None:
        """The event as screens show it when that differs from the logged one (a secret
        choice), given the state after it when known; None: as logged."""
        if state is not None and self.public_in is not None:
            own = self.public_in(event, state)
            if own is not None:
                return own
        return self.public(event)

    def public_event(self, event: Any, state: Any = None) -> Any:
        """The event as screens show it (`shown`), else the event itself."""
        if not isinstance(event, dict):
            return event
        shown = self.shown(event, state)
        return event if shown is None else shown

    def public_line(self, event: dict[str, Any], state: Any = None) -> str | None:
        from companion.events import encode

        shown = self.shown(event, state)
        return None if shown is None else encode(shown)

    def started(self, state: Any) -> bool:
        return getattr(state, "phase", NO_GAME) != NO_GAME

    def over(self, state: Any) -> bool:
        return bool(self.summary(state).get("over")) if self.started(state) else False

    def finished(self, state: Any) -> bool:
        """Over for good: a `new_game` now starts the next game in a new log."""
        if self.done is not None:
            return self.started(state) and self.done(state)
        return self.over(state)

    def new_game(self, words: list[str]) -> dict[str, Any]:
        """This game's new_game from the words after `new` or `play GAME`."""
        if self.new_command is not None:
            return self.new_command(words)
        names = [w for w in words if "=" not in w]
        if names and names[0].isdigit() and int(names[0]) == len(names) - 1:
            names = names[1:]  # `new 2 Ann Bob`: the count said before the names
        lo, hi = self.players
        if not lo <= len(names) <= hi:
            want = str(lo) if lo == hi else f"{lo}-{hi}"
            raise ValueError(f"give {want} names")
        return {"type": "new_game", "game": self.id, "players": len(names), "names": names}

    def page_fields(self, state: Any) -> dict[str, Any]:
        """The page's state for this game, before the house's keys (moves, history,
        messages, ...): the game's `page_state`, or its `replay --json` summary at the
        top level (the abstract game's list of played "moves" is overwritten there by
        the legal moves) and whole under "summary", and its own "details"."""
        if self.page_state is not None:
            return self.page_state(state)
        summary_ = self.summary(state)
        return {
            **summary_,
            "summary": summary_,
            "title": self.name,
            "phase": state.phase,
            "status": self.status_lines(state),
            "events_applied": state.events_applied,
            "details": self.page_details(state),
        }

    def describe_event(self, event: Any) -> str:
        """One readable line for a line of the log (the sim's log pane)."""
        if isinstance(event, dict):
            own = self.describe(event)
            if own is not None:
                return own
        return describe(event)


@cache
def get(game_id: str) -> Game:
    """A game by its `new_game` id; KeyError for an unknown one."""
    return importlib.import_module(MODULES[game_id]).GAME  # type: ignore[no-any-return]


def known(game_id: Any) -> bool:
    return isinstance(game_id, str) and game_id in MODULES


def default() -> Game:
    return get(DEFAULT)


def games() -> Iterator[Game]:
    """Every game this box plays, in the registry's order."""
    for game_id in MODULES:
        yield get(game_id)


def of_state(state: Any) -> Game:
    """The game a state belongs to (the default's for anything else), for callers that
    hold a state and no game (a replay of states, a test)."""
    for g in games():
        if isinstance(state, g.state_type):
            return g
    return default()


def chosen_by(game: Game, state: Any, event: Any) -> tuple[Game, Any]:
    """The game (and state) that judges `event`: `game`'s, except that a `new_game`
    naming another known game, while `game` has not started, switches to that game's
    new state."""
    if (
        isinstance(event, Mapping)
        and event.get("type") == "new_game"
        and event.get("game") != game.id
        and known(event.get("game"))
        and not game.started(state)
    ):
        g = get(event["game"])
        return g, g.new_state()
    return game, state


def judge(state: Any, event: Any, undo_limit: int | None = None) -> Result:
    game, state = chosen_by(of_state(state), state, event)
    return game.apply(state, event, undo_limit)


def summary(state: Any) -> dict[str, Any]:
    return of_state(state).summary(state)


def status_lines(state: Any) -> list[str]:
    return of_state(state).status_lines(state)


def parse_command(text: str, state: Any) -> Any:
    """A short command at the table for the game of `state` (companion.games.house)."""
    from companion.games.house import command

    return command(text, of_state(state), state)


def describe(event: Any) -> str:
    """The house's readable line for a log line no game describes: a new game, a
    rejected input, an undo, else the event as JSON without its stamp."""
    import json

    if not isinstance(event, dict):
        return repr(event)
    kind = event.get("type")
    try:
        if kind == "new_game":
            names = ", ".join(str(n) for n in event.get("names", []))
            game = event.get("game")
            title = get(game).name if known(game) else str(game)[:40]
            return f"new game of {title}: {event.get('players')} players ({names})"
        if kind == "rejected":
            return f"REJECTED {event.get('reason')}"
    except (TypeError, ValueError, AttributeError):
        pass
    if kind == "undo":
        return "undo"
    shown = {k: v for k, v in event.items() if k != "ts_ns"}
    try:
        return json.dumps(shown, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(shown)[:120]
