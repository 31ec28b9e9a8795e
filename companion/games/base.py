"""What every game's reducer shares: the Result/Output/Rejection types, the one
runner (`run`: envelope checks, notes, undo, a handler per event type, the previous
state kept for an exact undo), field readers that reject bad input with one line, and
the undo chain's bound.

A game's state is a frozen dataclass (no __post_init__, no __slots__) with three
bookkeeping fields, `events_applied`, `prev` (the state before the last accepted
event) and `undo_depth` (how many `prev` steps lie behind it; both excluded from
equality). `[log] undo_limit` bounds the chain of `prev` in every game alike
(`bound_undo`, `trim_undo`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar

from companion.errors import CompanionError
from companion.events import MAX_TS_NS, clip

__all__ = ["Output", "Result", "Rejected", "Rejection", "NOTE_TYPES", "run", "replay",
           "rejection_code", "envelope_problem", "replace", "trim_undo", "bound_undo",
           "field", "whole", "boolean", "names_of"]

# Log lines that never change a game's position: the loop records rejected input as
# `rejected`; a `note` is anyone's remark; a `clock` note says the box resumed the log
# in another boot (a game may let it forget a stamp of the old epoch: `run`'s `note`).
NOTE_TYPES = frozenset({"rejected", "note", "clock"})

# No count or number a table can enter is anywhere near this; bigger is garbage.
MAX_WHOLE = 10**6

S = TypeVar("S")
Handler = Callable[[Any, Mapping[str, Any]], tuple[Any, list["Output"]]]


class Output(NamedTuple):
    """Something for the table: `flash` (a display animation by name: go, bang,
    escaped, ...) or `announce` (a line of text for the screen and the log), with the
    seat it is about, when it is about one."""

    kind: str
    name: str
    text: str
    seat: int | None = None


class Result(NamedTuple):
    state: Any  # the game's state after the event (the same object when refused)
    rejection: str | None  # a Rejection when refused
    outputs: tuple[Output, ...]


class Rejection(str):
    """A rejection: its one line (a `str`, as it always was: logs, pages and tests read
    the text) and a `code` naming what was wrong, for callers that decide on it (the
    false-start flash, the spoken callouts), so nobody matches the text. Codes:
    `not_an_object`, `no_type`, `unknown_event`, `nothing_to_undo`, `missing_field`,
    `bad_value`, `wrong_phase`, `internal_error` (the referee's), a game's own (Vault
    Assault: `false_start`, `too_late`, `arrest_too_early`, `hostage_set_aside`,
    `stage_out_of_order`, `bank_empty`, `one_bang_per_stage`), `rejected` (any other
    rule).

    Every rejection is capped where it is made: one printable line of at most
    `companion.events.MAX_REASON_CHARS` characters (`companion.events.clip`), never
    empty (an empty reason would read as "accepted" to every caller that tests
    `if result.rejection`), whatever a handler put into its text."""

    code: str

    def __new__(cls, text: str, code: str = "rejected") -> Rejection:
        obj = super().__new__(cls, clip(str(text)) or "rejected")
        obj.code = code
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (Rejection, (str(self), self.code))


def rejection_code(rejection: str | None) -> str | None:
    """The code of a rejection (None: accepted; "rejected" for a plain string)."""
    if rejection is None:
        return None
    return getattr(rejection, "code", "rejected")


class Rejected(CompanionError):
    """Raised inside handlers; `run` turns it into a one-line `Rejection` with a code
    ("rejected" for any rule without a code of its own)."""

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


_T = TypeVar("_T")


def replace(obj: _T, **changes: Any) -> _T:
    """A copy of a frozen state dataclass with some fields changed: one dict copy, not
    dataclasses.replace's __init__ through the frozen setattr (5x faster; Vault
    Assault's engine makes several per event). For classes without __post_init__ or
    __slots__ (every game's state)."""
    new = object.__new__(obj.__class__)
    d = new.__dict__
    d.update(obj.__dict__)
    d.update(changes)
    return new


def trim_undo(state: S, keep: int) -> S:
    """`state` with at most `keep` undo steps behind it: the older ones are let go. The
    game position is unchanged (equal states); only the chain of `prev` is rebuilt."""
    chain: list[Any] = [state]
    while len(chain) <= keep and chain[-1].prev is not None:
        chain.append(chain[-1].prev)
    if chain[-1].prev is None:
        return state  # nothing older to let go
    rebuilt: Any = None
    for depth, s in enumerate(reversed(chain)):
        rebuilt = replace(s, prev=rebuilt, undo_depth=depth)
    assert rebuilt is not None
    return rebuilt  # type: ignore[no-any-return]


def bound_undo(state: S, undo_limit: int | None) -> S:
    """`state` trimmed to `undo_limit` undo steps once its chain has grown past twice
    that (None: the whole game kept), so the cost is O(1) an event on average."""
    if undo_limit is not None and state.undo_depth > 2 * max(undo_limit, 0):  # type: ignore[attr-defined]
        return trim_undo(state, max(undo_limit, 0))
    return state


def envelope_problem(event: Any) -> tuple[str, str] | None:
    """What every game checks first: a JSON object with a string "type" and, when it is
    stamped, a `ts_ns` in range. None if so, else (one-line reason, rejection code)."""
    if type(event) is not dict and not isinstance(event, Mapping):
        return f"an event must be a JSON object, got {type(event).__name__}", "not_an_object"
    kind = event.get("type")
    if not isinstance(kind, str):
        return "event has no 'type'", "no_type"
    if "ts_ns" in event:
        ts = event["ts_ns"]
        if isinstance(ts, bool) or not isinstance(ts, int) or not 0 <= ts <= MAX_TS_NS:
            return f"{clip(kind, 40)}: 'ts_ns' must be a whole number 0..{MAX_TS_NS}", "bad_value"
    return None


def run(
    state: S,
    event: Any,
    handlers: Mapping[str, Handler],
    undo_limit: int | None = None,
    *,
    note: Callable[[S, Mapping[str, Any]], S] | None = None,
    refused: Callable[[Rejection], tuple[Output, ...]] | None = None,
    asides: Mapping[str, Handler] | None = None,
) -> Result:
    """Apply one event with `handlers` (keyed by event type): the one reducer runner of
    every game. Pure: the same state and event always give the same result.

    A note (NOTE_TYPES) is no event of the game: not counted, not undone; it changes
    nothing, or what `note(state, event)` says (Vault Assault: a `clock` note lets a
    race forget Go!'s stamp of another boot). `undo` returns the kept previous state.
    Anything refused returns the same state object, one line saying why (a Rejection)
    and the outputs `refused(rejection)` gives (none by default; Vault Assault: the
    false start's flash). A handler returns a state it made, or the state it was
    given. `undo_limit`: how many undo steps the new state keeps (None: the whole
    game); the chain is trimmed when it grows past twice the limit, so the cost is
    O(1) an event on average.

    `asides`: a game's events (keyed by type) that, like notes, are not moves: not
    counted, not undone on their own (an `undo` goes back past them), so the events
    around them keep their numbers; unlike notes, their handler checks them (a
    rejection) and may change the state and say things (Vault Assault: the camera's
    `claim_check`)."""
    try:
        problem = envelope_problem(event)  # the checks every game makes first
        if problem is not None:
            raise Rejected(*problem)
        kind = event["type"]
        if kind in NOTE_TYPES:
            return Result(state if note is None else note(state, event), None, ())
        if asides is not None and kind in asides:
            new, outputs = asides[kind](state, event)
            return Result(new, None, tuple(outputs))
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
        rejection = Rejection(str(exc), exc.code)
        return Result(state, rejection, () if refused is None else refused(rejection))
    if new is state:
        new = replace(state)
    # `new` is a fresh object no one else holds yet: finish it in place (no second copy).
    d = new.__dict__
    d["events_applied"] = state.events_applied + 1  # type: ignore[attr-defined]
    d["prev"] = state
    d["undo_depth"] = state.undo_depth + 1  # type: ignore[attr-defined]
    return Result(bound_undo(new, undo_limit), None, tuple(outputs))


def replay(apply: Callable[[Any, Any], Result], state: Any, events: list[Any]) -> Any:
    """Apply every event, raising ValueError on the first rejection."""
    for i, ev in enumerate(events, 1):
        result = apply(state, ev)
        if result.rejection:
            raise ValueError(f"event {i}: {result.rejection}")
        state = result.state
    return state
