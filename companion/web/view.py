"""What the table page shows, as JSON: the game's own fields at the top level (its
`replay --json` summary among them: `Game.page_fields`) and the house's under keys of
their own (messages, history, verdict, moves, undo, earlier games). Pure functions
plus a small history keeper.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from companion.display.frame import Frame
from companion.events import encode
from companion.games import registry
from companion.games.base import Result
from companion.games.registry import Game

HISTORY_LENGTH = 200
GAMES_LISTED = 20


def led_rows(frame: Frame) -> list[str]:
    """The frame as rows of '0'/'1', left to right."""
    return ["".join("1" if frame.pixel(x, y) else "0" for x in range(frame.width))
            for y in range(frame.height)]


def describe(event: dict[str, Any], result: Result) -> str:
    """One readable line for the history: what the referee said about it."""
    texts = [o.text for o in result.outputs if o.text]
    if texts:
        return " · ".join(texts)
    return encode(event) if isinstance(event, dict) and "type" in event else repr(event)[:120]


def public_event(event: Any, game: Game, state: Any = None) -> Any:
    """The event as the page may show it: as the game's `page_event` shows it (Vault
    Assault: the cops' row hidden), else as its `public` does given `state`, the state
    after it (the sim's log pane does the same), so The Big Score's `choose` says who
    chose, never what, nor a 3-player Vault Assault heist which dice were flipped."""
    if not isinstance(event, dict):
        return event
    shown = game.page_event(event)
    if shown is not None:
        return shown
    return game.public_event(event, state)


def earlier_game(path: Path) -> dict[str, Any] | None:
    """A finished or abandoned game from its log: its summary and file name (None: no
    game was started in it)."""
    from companion.loop import resume_state

    try:
        state, report = resume_state(path)
    except (OSError, ValueError):
        return None
    game = report.game
    if not game.started(state):
        return None
    return {"log": path.name, "events": report.events, **game.summary(state)}


class History:
    """Accepted events and rejections, newest first, and what an undo would take back."""

    def __init__(self, length: int = HISTORY_LENGTH) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=length)
        self.undo_stack: list[str] = []  # descriptions, one per state in the prev chain
        self.seq = 0
        self.verdict: dict[str, Any] | None = None

    def clear(self) -> None:
        self.entries.clear()
        self.undo_stack.clear()
        self.verdict = None

    def seed(self, events: list[dict[str, Any]]) -> None:
        """Rebuild from a resumed log (the states the referee replayed)."""
        game = registry.default()
        state = game.new_state()
        for event in events:
            judge, before = registry.chosen_by(game, state, event)
            result = judge.apply(before, event)
            if event.get("type") == "rejected":
                self.add(event.get("event", {}), result, game, reason=event.get("reason"))
                continue
            self.add(event, result, judge)
            if not result.rejection:
                game, state = judge, result.state

    def add(
        self,
        event: Any,
        result: Result,
        game: Game | None = None,
        reason: str | None = None,
    ) -> None:
        """One event the referee judged, by `game` (None: the game of its state)."""
        self.seq += 1
        kind = event.get("type") if isinstance(event, dict) else None
        rejection = reason or result.rejection
        if rejection:
            self.entries.appendleft(
                {"n": self.seq, "accepted": False, "text": str(rejection), "type": kind}
            )
            return
        if kind in ("note",):
            return
        text = describe(event, result)
        if kind == "undo":
            taken = self.undo_stack.pop() if self.undo_stack else "the last event"
            text = f"Undone: {taken}"
        else:
            self.undo_stack.append(text)
            del self.undo_stack[:-HISTORY_LENGTH]
        self.entries.appendleft(
            {
                "n": self.seq,
                "accepted": True,
                "text": text,
                "type": kind,
                "event": public_event(event, game or registry.of_state(result.state),
                                      result.state),
            }
        )
        if kind == "buzz":
            self._verdict(event, result)

    def _verdict(self, event: dict[str, Any], result: Result) -> None:
        words = [o.text for o in result.outputs if o.kind == "flash"]  # the verdict's word
        verdict: dict[str, Any] = {
            "seat": event.get("seat"),
            "text": words[0] if words else describe(event, result),
            "margin_ms": None,
            "tie": False,
        }
        finish = event.get("photo_finish")
        if isinstance(finish, dict) and isinstance(finish.get("margin_ns"), int):
            verdict["margin_ms"] = abs(finish["margin_ns"]) / 1e6
            ties = finish.get("ties") or []
            seats = finish.get("seats") or []
            verdict["tie"] = bool(ties) and len(seats) > 1 and set(seats[:2]) <= set(ties[0])
        after = event.get("after")
        if isinstance(after, dict) and isinstance(after.get("by_ns"), int):
            verdict["after_ms"] = after["by_ns"] / 1e6
        self.verdict = verdict

    def undo_takes_back(self, state: Any) -> str | None:
        if state.prev is None:
            return None
        return self.undo_stack[-1] if self.undo_stack else "the last event"


def page_payload(
    game: Game,
    state: Any,
    *,
    history: History,
    messages: list[str],
    moves: dict[str, Any],
    games: list[dict[str, Any]],
) -> dict[str, Any]:
    """The page's state: the game's own fields (`Game.page_fields`), then what the page
    gets for any game: messages, history, verdict, moves, undo, earlier games, and,
    while a new game may be started, the other games it may be of."""
    payload = {
        **game.page_fields(state),
        "messages": messages,
        "history": list(history.entries),
        "history_seq": history.seq,
        "verdict": history.verdict,
        "moves": moves,
        "undo_takes_back": history.undo_takes_back(state),
        "games": games,
    }
    if "new_game" in moves:
        payload["other_games"] = other_games(game)
    return payload


def other_games(game: Game) -> list[dict[str, Any]]:
    """The games besides `game` a page may start while no game is on (or after one)."""
    return [{"game": g.id, "name": g.name, "players": list(g.players)}
            for g in registry.games() if g is not game]
