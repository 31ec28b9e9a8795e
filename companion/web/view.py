"""What the table page shows, as JSON: the `replay --json` summary at the top level and
the rest under keys of their own. Pure functions plus a small history keeper.

The cops' hidden row is never sent while the heist is on: only the positions the
robbers have flipped (the table sees those dice), and the whole row once the heist is
over (the cops show their dice).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from companion.display.frame import Frame
from companion.display.model import status_lines
from companion.events import encode
from companion.games import registry
from companion.rules.engine import Result, total_of
from companion.rules.state import HEIST, HEIST_HIDE, GameState
from companion.rules.summary import summary

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


def public_event(event: dict[str, Any], state: Any = None) -> dict[str, Any]:
    """The event as the page may show it: the cops' row hidden until the heist ends;
    in another game, as its `Game.public` shows it (the sim's log pane does the same),
    so The Big Score's `choose` says who chose, never what."""
    if isinstance(event, dict) and event.get("type") == "heist_hide":
        return {"type": "heist_hide", "row": "hidden"}
    if isinstance(event, dict) and state is not None:
        shown = registry.of_state(state).public(event)
        if shown is not None:
            return shown
    if isinstance(event, dict) and event.get("type") == "choose":  # The Big Score: secret
        return {"type": "choose", "seat": event.get("seat")}
    return event


def seat_details(state: GameState) -> list[dict[str, Any]]:
    turn = state.turn
    out = []
    for i, s in enumerate(state.seats):
        out.append(
            {
                "seat": i,
                "name": s.name,
                "cops": bool(turn and turn.cop == i),
                "cash": s.cash,
                "total": total_of(state, i),
                "impounded": list(s.impounded),
                "hostage": bool(turn and i in turn.hostages),
                "escaped_now": bool(turn and i in turn.escaped),
                "arrested_now": bool(turn and i in turn.arrested),
                "impound_due": bool(turn and i in turn.impounds_due),
                "tiles_lost": s.tiles_lost,
            }
        )
    return out


def turn_details(state: GameState) -> dict[str, Any] | None:
    turn = state.turn
    if turn is None:
        return None
    heist = None
    if turn.heist is not None:
        h = turn.heist
        revealed: dict[str, str] = {}
        for _seat, positions in h.flipped:
            for p in positions:
                revealed[str(p)] = h.row[p]
        show_row = state.phase not in (HEIST_HIDE, HEIST)
        heist = {
            "row_length": len(h.row),
            "row": list(h.row) if show_row else None,
            "revealed": revealed,
            "flipped": {str(s): sorted(p) for s, p in h.flipped},
            "in_heist": sorted(h.in_heist),
            "attempts": h.attempts,
            "diamond_to": h.diamond_to,
        }
    return {
        "cop": turn.cop,
        "stages": turn.stages,
        "preset": turn.preset,
        "bangs": len(turn.bang_intervals),
        "bang_since_stage": turn.bang_since_stage,
        "hostages": sorted(turn.hostages),
        "escaped": list(turn.escaped),
        "arrested": sorted(turn.arrested),
        "impounds_due": sorted(turn.impounds_due),
        "empty": turn.empty,
        "heist": heist,
    }


def earlier_game(path: Path) -> dict[str, Any] | None:
    """A finished or abandoned game from its log: its summary and file name."""
    from companion.loop import resume_state

    try:
        state, report = resume_state(path)
    except (OSError, ValueError):
        return None
    game = registry.of_state(state)
    if game.id != registry.DEFAULT:
        if not game.started(state):
            return None
        return {"log": path.name, "events": report.events, **game.summary(state)}
    if not state.seats:
        return None
    return {"log": path.name, "events": report.events, **summary(state)}


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
        from companion.rules.engine import new_state

        state = new_state()
        for event in events:
            result = registry.judge(state, event)
            if event.get("type") == "rejected":
                self.add(event.get("event", {}), result, reason=event.get("reason"))
                continue
            self.add(event, result)
            if not result.rejection:
                state = result.state

    def add(
        self,
        event: Any,
        result: Result,
        reason: str | None = None,
    ) -> None:
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
                "event": public_event(event, result.state),
            }
        )
        if kind == "buzz":
            self._verdict(event, result)

    def _verdict(self, event: dict[str, Any], result: Result) -> None:
        words = [o.text for o in result.outputs if o.name in ("escaped", "arrested")]
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

    def undo_takes_back(self, state: GameState) -> str | None:
        if state.prev is None:
            return None
        return self.undo_stack[-1] if self.undo_stack else "the last event"


def _page_common(
    state: Any,
    history: History,
    messages: list[str],
    moves: dict[str, Any],
    games: list[dict[str, Any]],
) -> dict[str, Any]:
    """What the page gets for any game: messages, history, verdict, moves, undo."""
    return {
        "messages": messages,
        "history": list(history.entries),
        "history_seq": history.seq,
        "verdict": history.verdict,
        "moves": moves,
        "undo_takes_back": history.undo_takes_back(state),
        "games": games,
    }


def state_payload(
    state: GameState,
    *,
    history: History,
    messages: list[str],
    moves: dict[str, Any],
    games: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        **summary(state),
        "phase": state.phase,
        "players": state.players,
        "status": status_lines(state),
        "diamonds_in_box": state.diamonds_in_box,
        "bank_empty": state.bank_empty,
        "sticky_fingers_used": state.sticky_fingers_used,
        "events_applied": state.events_applied,
        "seat_details": seat_details(state),
        "turn": turn_details(state),
        **_page_common(state, history, messages, moves, games),
    }


def other_games() -> list[dict[str, Any]]:
    """The games besides Vault Assault a page may start while no game is on."""
    out = []
    for game_id, (lo, hi) in registry.PLAYERS.items():
        out.append({"game": game_id, "name": registry.get(game_id).name,
                    "players": [lo, hi]})
    return out


def game_payload(
    state: Any,
    *,
    history: History,
    messages: list[str],
    moves: dict[str, Any],
    games: list[dict[str, Any]],
) -> dict[str, Any]:
    """The page's state for a game other than Vault Assault: its `replay --json`
    summary at the top level (with "game") and whole under "summary" (the abstract
    game's list of played "moves" is overwritten at the top level by the legal moves,
    as on Vault Assault's page), its own details under "details"."""
    game = registry.of_state(state)
    summary_ = game.summary(state)
    return {
        **summary_,
        "summary": summary_,
        "title": game.name,
        "phase": state.phase,
        "status": game.status_lines(state),
        "events_applied": state.events_applied,
        "details": game.page_details(state),
        **_page_common(state, history, messages, moves, games),
    }
