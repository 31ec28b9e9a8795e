"""What every game's reducer shares: the Result/Output types of `companion.rules.engine`
(game-agnostic named tuples), field readers that reject bad input with one line, and the
`apply` wrapper that keeps the previous state for an exact undo.

A game's state is a frozen dataclass with three bookkeeping fields, `events_applied`,
`prev` (the state before the last accepted event) and `undo_depth` (how many `prev`
steps lie behind it; both excluded from equality), exactly as
`companion.rules.state.GameState` keeps them. `[log] undo_limit` bounds the chain of
`prev` in every game alike (`companion.rules.engine.bound_undo`, `trim_undo`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from companion.rules.engine import (
    Output,
    Rejection,
    Result,
    bound_undo,
    envelope_problem,
    trim_undo,
)

__all__ = ["Output", "Result", "Rejected", "Rejection", "NOTE_TYPES", "run", "trim_undo", "field",
           "whole",
           "boolean", "names_of"]

# Log lines that never change a game (the loop records rejected input as `rejected`).
NOTE_TYPES = frozenset({"rejected", "note", "clock"})

# No count or number a table can enter is anywhere near this; bigger is garbage.
MAX_WHOLE = 10**6

S = TypeVar("S")
Handler = Callable[[Any, Mapping[str, Any]], tuple[Any, list[Output]]]


class Rejected(Exception):
    """Raised inside handlers; `run` turns it into a one-line rejection with a code
    (`companion.rules.engine.Rejection`: the same codes as Vault Assault's where they
    apply, "rejected" for any other rule)."""

    def __init__(self, text: str, code: str = "rejected") -> None:
        super().__init__(text)
        self.code = code


def field(event: Mapping[str, Any], key: str) -> Any:
    if key not in event:
        raise Rejected(f"{event.get('type')}: missing field '{key}'", "missing_field")
    return event[key]


def whole(event: Mapping[str, Any], key: str, lo: int | None = None, hi: int | None = None,
          default: int | None = None) -> int:
    if default is not None and key not in event:
        return default
    value = field(event, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Rejected(f"{event['type']}: '{key}' must be a whole number, got {_short(value)}",
                       "bad_value")
    lo_ = -MAX_WHOLE if lo is None else lo
    hi_ = MAX_WHOLE if hi is None else hi
    if value < lo_ or value > hi_:
        span = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise Rejected(f"{event['type']}: '{key}' must be {span}, got {_short(value)}",
                       "bad_value")
    return value


def boolean(event: Mapping[str, Any], key: str) -> bool:
    value = field(event, key)
    if not isinstance(value, bool):
        raise Rejected(f"{event['type']}: '{key}' must be true or false, got {_short(value)}",
                       "bad_value")
    return value


def names_of(event: Mapping[str, Any], count: int | tuple[int, int]) -> tuple[str, ...]:
    lo, hi = (count, count) if isinstance(count, int) else count
    names = field(event, "names")
    if (
        not isinstance(names, list)
        or not lo <= len(names) <= hi
        or not all(isinstance(n, str) and n.strip() and len(n) <= 40 for n in names)
    ):
        want = f"{lo}" if lo == hi else f"{lo}-{hi}"
        raise Rejected(f"new_game: 'names' must list {want} non-empty names (up to 40 "
                       f"characters), got {_short(names)}", "bad_value")
    return tuple(n.strip() for n in names)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def run(state: S, event: Any, handlers: Mapping[str, Handler],
        undo_limit: int | None = None) -> Result:
    """Apply one event with `handlers` (keyed by event type): notes change nothing, `undo`
    returns the kept previous state, anything refused returns the same state object and
    one line saying why. `undo_limit`: how many undo steps the new state keeps (None:
    the whole game); the chain is trimmed when it grows past twice the limit, so the
    cost is O(1) an event on average."""
    try:
        problem = envelope_problem(event)  # the checks every game makes first
        if problem is not None:
            raise Rejected(*problem)
        kind = event["type"]
        if kind in NOTE_TYPES:
            return Result(state, None, ())  # type: ignore[arg-type]
        if kind == "undo":
            prev = getattr(state, "prev", None)
            if prev is None:
                raise Rejected("undo: nothing to undo", "nothing_to_undo")
            return Result(prev, None, (Output("announce", "undo", "Undone"),))
        handler = handlers.get(kind)
        if handler is None:
            raise Rejected(f"unknown event type {_short(kind)}", "unknown_event")
        new, outputs = handler(state, event)
    except Rejected as exc:  # Rejection makes it one line, capped, never empty
        return Result(state, Rejection(str(exc), exc.code), ())  # type: ignore[arg-type]
    new = replace(new, events_applied=state.events_applied + 1, prev=state,  # type: ignore
                  undo_depth=state.undo_depth + 1)  # type: ignore[attr-defined]
    return Result(bound_undo(new, undo_limit), None, tuple(outputs))


def replay(apply: Callable[[Any, Any], Result], state: Any, events: list[Any]) -> Any:
    """Apply every event, raising ValueError on the first rejection."""
    for i, ev in enumerate(events, 1):
        result = apply(state, ev)
        if result.rejection:
            raise ValueError(f"event {i}: {result.rejection}")
        state = result.state
    return state
