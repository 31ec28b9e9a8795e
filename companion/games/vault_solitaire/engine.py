"""Vault (solitaire) as a pure reducer:

    apply(state, event) -> Result(state, rejection, outputs)

Events: `new_game` {"game":"vault-solitaire","players":1,"names":[name]};
`roll` {"dice":[5 values 1-6]} (typed, or the camera's reading taken with a press),
with `"by":"camera"` when the camera entered it itself (all five read surely, `[camera]
claims` on: the state's `rolled_by`, one `undo` takes it back);
`seen` {"dice":[5 values 1-6]} (the camera's reading while a roll is awaited: shown and
advised on, taken by a press or `take`; it changes no score); `mark` {"cell":"c2",
"dice":[indices into the roll], "skimmers":[0-2]} (the values, each added or
subtracted, must make the square's number; Odd/Even take one die, x2 a pair);
`power` {"die":i,"skimmer":k}; `reroll` {"dice":[indices],"values":[new values]};
`pass` (skip the dice left: the round ends); `undo`; notes `rejected`/`note`.
A round also ends by itself when its last die is used; its lock then closes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import product
from typing import Any

from companion.games import base
from companion.games.base import Output, Rejected, Result
from companion.games.vault_solitaire import definition as d
from companion.games.vault_solitaire.state import (
    GAME_OVER,
    NO_GAME,
    PLAY,
    ROLL,
    SolitaireState,
)

Cell = tuple[int, int]
CELL_LOCKS: dict[Cell, tuple[str, ...]] = {}
for _lock in d.LOCKS:
    for _rc in d.open_cells(_lock):
        CELL_LOCKS[_rc] = CELL_LOCKS.get(_rc, ()) + (_lock,)
OPEN_CELLS: tuple[Cell, ...] = tuple(sorted(CELL_LOCKS))


# Who may enter a roll, besides a person (a `roll` without "by"): the camera, when it
# read all five dice surely (`table.camera_take`, with `[camera] claims` on).
CAMERA = "camera"
ROLLED_BY = (CAMERA,)


def new_state() -> SolitaireState:
    return SolitaireState()


# --------------------------------------------------------------------------- rules


def signed_sums(values: Iterable[int]) -> set[int]:
    """Every total of these values, each added or subtracted (the first need not be
    positive; only positive totals can match a square)."""
    values = list(values)
    if not values:
        return set()
    return {sum(s * v for s, v in zip(signs, values, strict=True))
            for signs in product((1, -1), repeat=len(values))}


def can_mark(square: int | str | None, dice: list[int], skimmers: list[int]) -> bool:
    """Whether these dice values and skimmer values (boxes) may mark this square."""
    if square is None:
        return False
    if square in ("odd", "even"):
        return len(dice) == 1 and not skimmers and (dice[0] % 2 == 1) == (square == "odd")
    if square == "x2":
        return len(dice) == 2 and not skimmers and dice[0] == dice[1]
    return bool(dice or skimmers) and square in signed_sums(dice + skimmers)


def arithmetic(square: int | str | None, dice: list[int], skimmers: list[tuple[int, int]]
               ) -> str | None:
    """A mark as the sum it is, for people: the dice values and the skimmers used
    ((skimmer from 0, its boxes)), each added or subtracted, making the square:
    "5 + 6 + 4 - 5 = 10", "13 (skimmer 1) + 5 = 18"; "5 (odd)"; "3 and 3 (a pair)".
    None when they cannot mark it. Terms keep their order, the added ones first; the
    fewest subtracted."""
    if square is None or not can_mark(square, dice, [b for _, b in skimmers]):
        return None
    if square in ("odd", "even"):
        return f"{dice[0]} ({square})"
    if square == "x2":
        return f"{dice[0]} and {dice[1]} (a pair)"
    terms = [str(v) for v in dice] + [f"{b} (skimmer {k + 1})" for k, b in skimmers]
    values = dice + [b for _, b in skimmers]
    best: tuple[int, ...] | None = None
    for signs in product((1, -1), repeat=len(values)):
        if sum(sg * v for sg, v in zip(signs, values, strict=True)) == square and (
                best is None or signs.count(-1) < best.count(-1)):
            best = signs
    assert best is not None  # can_mark said so
    plus = [t for t, sg in zip(terms, best, strict=True) if sg > 0]
    minus = [t for t, sg in zip(terms, best, strict=True) if sg < 0]
    return " - ".join([" + ".join(plus), *minus]) + f" = {square}"


def mark_arithmetic(state: SolitaireState, ev: Mapping[str, Any]) -> str | None:
    """A `mark` event's sum in this state (None: not a mark these dice make)."""
    rc = d.parse_cell(ev.get("cell"))
    dice, skims = ev.get("dice", []), ev.get("skimmers", [])
    if (rc is None or not isinstance(dice, list) or not isinstance(skims, list)
            or not all(isinstance(i, int) and 0 <= i < len(state.dice) for i in dice)
            or not all(isinstance(k, int) and 0 <= k < d.SKIMMERS for k in skims)):
        return None
    return arithmetic(d.GRID[rc[0]][rc[1]], [state.dice[i] for i in dice],
                      [(k, state.skimmer_boxes[k]) for k in skims])


def line_done(marked: frozenset[Cell], lock: str) -> bool:
    return all(rc in marked for rc in d.open_cells(lock))


def locked(state: SolitaireState) -> frozenset[str]:
    """Locks already closed (the rounds before the current one)."""
    return frozenset(d.LOCKS[: state.round])


def score(state: SolitaireState) -> int:
    gems = sum(d.GEMS[k] for k in state.circled)
    skimmers = sum(d.UNUSED_SKIMMER_POINTS for used in state.skimmer_used if not used)
    return gems + skimmers


# --------------------------------------------------------------------------- handlers


def _phase(state: SolitaireState, ev: Mapping[str, Any], *allowed: str) -> None:
    if state.phase in allowed:
        return
    what = {
        NO_GAME: "no game has started (send new_game first)",
        ROLL: "roll the five dice first",
        PLAY: "the dice are on the table (use them or pass)",
        GAME_OVER: "the game is over",
    }[state.phase]
    raise Rejected(f"{ev['type']}: not allowed now: {what}", "wrong_phase")


def _die_values(ev: Mapping[str, Any], key: str, count: int | None) -> list[int]:
    values = base.field(ev, key)
    if (not isinstance(values, list) or (count is not None and len(values) != count)
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 6
                       for v in values)):
        want = f"{count} " if count is not None else ""
        raise Rejected(f"{ev['type']}: '{key}' must list {want}die values 1-6, got "
                       f"{base._short(values)}")
    return values


def _indices(ev: Mapping[str, Any], key: str, limit: int, what: str) -> list[int]:
    raw = ev.get(key, [])
    if (not isinstance(raw, list) or len(raw) > limit
            or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < limit
                       for i in raw) or len(set(raw)) != len(raw)):
        raise Rejected(f"{ev['type']}: '{key}' must list distinct {what} 0-{limit - 1}, got "
                       f"{base._short(raw)}")
    return raw


def _new_game(state: SolitaireState, ev: Mapping[str, Any]
              ) -> tuple[SolitaireState, list[Output]]:
    if state.phase != NO_GAME:
        raise Rejected("new_game: a game is already under way in this log (start a new log)")
    game = base.field(ev, "game")
    if game != d.GAME_ID:
        raise Rejected(f"new_game: unknown game {base._short(game)} (this referee plays "
                       f"{d.GAME_ID!r})")
    base.whole(ev, "players", 1, 1)
    (name,) = base.names_of(ev, 1)
    return SolitaireState(phase=ROLL, name=name), [
        Output("announce", "new_game", f"Vault, solitaire: {name} faces 12 locks"),
        Output("announce", "roll", "Round A: roll five dice"),
    ]


def _seen(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, ROLL)
    dice = _die_values(ev, "dice", d.DICE)
    return replace(state, seen=tuple(dice)), [
        Output("announce", "seen", "Roll seen: " + " ".join(map(str, dice))
               + "; press the button to take it")]


def _roll(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, ROLL)
    dice = _die_values(ev, "dice", d.DICE)
    by = ev.get("by", "")
    if "by" in ev and by not in ROLLED_BY:
        raise Rejected(f"roll: 'by' must be {' or '.join(map(repr, ROLLED_BY))} (or left "
                       f"out), got {base._short(by)}", "bad_value")
    said = f"Round {d.LOCKS[state.round]}: " + " ".join(map(str, dice))
    if by == CAMERA:
        said += " (entered by the camera; undo takes it back)"
    return replace(state, phase=PLAY, dice=tuple(dice), used=frozenset(), seen=(),
                   rolled_by=by), [Output("announce", "dice", said)]


def _end_round(state: SolitaireState, outs: list[Output]) -> tuple[SolitaireState, list[Output]]:
    lock = d.LOCKS[state.round]
    outs.append(Output("announce", "lock", f"Lock {lock} closes"))
    nxt = state.round + 1
    if nxt >= d.ROUNDS:
        final = replace(state, phase=GAME_OVER, used=frozenset(range(len(state.dice))))
        pts = score(final)
        outs.append(Output("flash", "over", f"Game over: {pts} points, {d.rank_of(pts)}"))
        return final, outs
    new = replace(state, phase=ROLL, round=nxt, dice=(), used=frozenset(), rolled_by="")
    outs.append(Output("announce", "roll", f"Round {d.LOCKS[nxt]}: roll five dice"))
    return new, outs


def _after_use(state: SolitaireState, outs: list[Output]) -> tuple[SolitaireState, list[Output]]:
    if len(state.used) == len(state.dice):
        return _end_round(state, outs)
    return state, outs


def _mark(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, PLAY)
    raw = base.field(ev, "cell")
    rc = d.parse_cell(raw)
    if rc is None:
        raise Rejected(f"mark: 'cell' must be a square a1-f6, got {base._short(raw)}")
    name = d.cell_name(*rc)
    square = d.GRID[rc[0]][rc[1]]
    if square is None:
        raise Rejected(f"mark: {name} is blacked out (already marked)")
    if rc in state.marked:
        raise Rejected(f"mark: {name} is already marked")
    dice = _indices(ev, "dice", len(state.dice), "die indices")
    skims = _indices(ev, "skimmers", d.SKIMMERS, "skimmers")
    for i in dice:
        if i in state.used:
            raise Rejected(f"mark: die {i + 1} (a {state.dice[i]}) is already used")
    for k in skims:
        if state.skimmer_used[k]:
            raise Rejected(f"mark: skimmer {k + 1} is already used")
        if state.skimmer_boxes[k] == 0:
            raise Rejected(f"mark: skimmer {k + 1} has no power yet")
    values = [state.dice[i] for i in dice]
    boxes = [state.skimmer_boxes[k] for k in skims]
    if not can_mark(square, values, boxes):
        what = {"odd": "one odd die", "even": "one even die", "x2": "two dice showing the "
                "same value"}.get(square, f"dice (and skimmers) adding or subtracting to "  # type: ignore[arg-type]
                                          f"{square}")
        raise Rejected(f"mark: {name} needs {what}; got dice {values}"
                       + (f" and skimmers {boxes}" if boxes else ""))
    marked = state.marked | {rc}
    skimmer_used = tuple(u or k in skims for k, u in enumerate(state.skimmer_used))
    outs = [Output("announce", "mark", f"{name} marked")]
    circled = set(state.circled)
    closed = locked(state)
    for lock in CELL_LOCKS[rc]:
        if line_done(marked, lock):
            if lock in closed:
                outs.append(Output("announce", "lost", f"Line {lock} complete, but its lock is "
                                   "closed: the gems are lost"))
            else:
                circled.add(lock)
                outs.append(Output("flash", "gems", f"Line {lock} cracked: {d.GEMS[lock]} "
                                   f"gem{'s' * (d.GEMS[lock] > 1)} circled"))
    new = replace(state, marked=marked, used=state.used | set(dice),
                  skimmer_used=skimmer_used, circled=frozenset(circled))
    return _after_use(new, outs)


def _power(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, PLAY)
    i = base.whole(ev, "die", 0, len(state.dice) - 1)
    k = base.whole(ev, "skimmer", 0, d.SKIMMERS - 1)
    if i in state.used:
        raise Rejected(f"power: die {i + 1} is already used")
    if state.skimmer_used[k]:
        raise Rejected(f"power: skimmer {k + 1} is already used and cannot be powered again")
    boxes = state.skimmer_boxes[k] + state.dice[i]
    if boxes > d.SKIMMER_BOXES:
        room = d.SKIMMER_BOXES - state.skimmer_boxes[k]
        raise Rejected(f"power: skimmer {k + 1} has room for {room} more boxes, the die shows "
                       f"{state.dice[i]}")
    skb = tuple(boxes if j == k else b for j, b in enumerate(state.skimmer_boxes))
    new = replace(state, skimmer_boxes=skb, used=state.used | {i})
    return _after_use(new, [Output("announce", "power", f"Skimmer {k + 1}: {boxes} boxes")])


def _reroll(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, PLAY)
    if state.rerolls_used >= d.REROLLS:
        raise Rejected(f"reroll: all {d.REROLLS} re-rolls are used")
    idx = _indices(ev, "dice", len(state.dice), "die indices")
    if not idx:
        raise Rejected("reroll: 'dice' must name at least one unused die")
    for i in idx:
        if i in state.used:
            raise Rejected(f"reroll: die {i + 1} is already used")
    values = _die_values(ev, "values", len(idx))
    dice = list(state.dice)
    for i, v in zip(idx, values, strict=True):
        dice[i] = v
    new = replace(state, dice=tuple(dice), rerolls_used=state.rerolls_used + 1)
    return new, [Output("announce", "reroll", f"Re-roll {new.rerolls_used} of {d.REROLLS}: "
                        + " ".join(map(str, dice)))]


def _pass(state: SolitaireState, ev: Mapping[str, Any]) -> tuple[SolitaireState, list[Output]]:
    _phase(state, ev, PLAY)
    return _end_round(replace(state, used=frozenset(range(len(state.dice)))), [])


HANDLERS = {"new_game": _new_game, "seen": _seen, "roll": _roll, "mark": _mark, "power": _power,
            "reroll": _reroll, "pass": _pass}
EVENT_TYPES = frozenset(HANDLERS) | {"undo"} | base.NOTE_TYPES


def apply(state: SolitaireState, event: Any, undo_limit: int | None = None) -> Result:
    """Apply one event. Pure: the same state and event always give the same result.
    `undo_limit`: the undo steps kept (None: the whole game; see `base.run`)."""
    return base.run(state, event, HANDLERS, undo_limit)


def replay(events: list[Any], state: SolitaireState | None = None) -> SolitaireState:
    return base.replay(apply, state or new_state(), events)


# --------------------------------------------------------------------------- moves


def legal_marks(state: SolitaireState) -> list[dict[str, Any]]:
    """Every `mark` event these dice (and powered skimmers) allow now, each once per
    (cell, dice subset, skimmer subset); dice with equal values are not told apart."""
    if state.phase != PLAY:
        return []
    free = state.unused_dice()
    skims = [k for k in range(d.SKIMMERS)
             if not state.skimmer_used[k] and state.skimmer_boxes[k] > 0]
    out = []
    seen = set()
    n = len(free) + len(skims)
    for mask in range(1, 1 << n):
        items = [j for j in range(n) if mask >> j & 1]
        dice = [free[j] for j in items if j < len(free)]
        sk = [skims[j - len(free)] for j in items if j >= len(free)]
        values = sorted(state.dice[i] for i in dice)
        boxes = [state.skimmer_boxes[k] for k in sk]
        key = (tuple(values), tuple(sk))
        if key in seen:
            continue
        seen.add(key)
        sums = signed_sums(values + boxes)
        for rc in OPEN_CELLS:
            if rc in state.marked:
                continue
            sq = d.GRID[rc[0]][rc[1]]
            ok = (can_mark(sq, [state.dice[i] for i in dice], boxes) if isinstance(sq, str)
                  else sq in sums)
            if ok:
                out.append({"type": "mark", "cell": d.cell_name(*rc), "dice": dice,
                            "skimmers": sk})
    return out


def markable_cells(state: SolitaireState) -> list[str]:
    """The squares these dice (and powered skimmers) can mark now, for the board view."""
    return sorted({ev["cell"] for ev in legal_marks(state)})
