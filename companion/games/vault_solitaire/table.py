"""Vault (solitaire) at the table: its entry in the games registry.

LED board: "A 12" (the lock closing this round, the score so far); row 6 the five
dice of the roll (lit: still to use); row 7 one pixel per lock whose gems were circled.
At game over: the score and the rank, cycling. Drawn for the panel's size, laid out for
32x8 (companion.games.led says how other sizes look). While a roll is awaited, the camera's
pip reading of the five dice is logged as `seen` (`camera_event`), shown ("A? 35561")
and advised on (`camera_advice`); five dice with some the camera cannot read are said
with a "?" for each (`camera_unread`), to nudge or enter by hand. The player's button
press (or `take`, or the page) takes a reading as the roll.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from companion.display.frame import DEFAULT_SIZE, Size
from companion.events import command_words
from companion.games import led
from companion.games.registry import Game
from companion.games.vault_solitaire import definition as d
from companion.games.vault_solitaire import engine, helper
from companion.games.vault_solitaire.state import GAME_OVER, PLAY, ROLL, SolitaireState
from companion.games.vault_solitaire.summary import summary

WORDS = {"gems": "GEMS!", "over": "SCORE"}

HELP = """\
new NAME                     a new game (once this one is over)
roll 5 6 4 6 5               this round's five dice (or the camera reads them)
take                         take the camera's reading as the roll (or press the button)
mark CELL DIE... [sK...]     mark a square with dice (indices 0-4 in the roll) and
                             powered skimmers (s0-s2), e.g. `mark b3 0 1`
power DIE SKIMMER            put a die's pips on a skimmer (0-2)
reroll DIE:VALUE ...         re-roll dice, with the new values, e.g. `reroll 3:6 4:2`
pass                         end the round, the dice left unused
suggest                      the helper's best use of this roll (a note, changes nothing)
undo                         take back the last accepted event
{"type": ...}                any event as JSON"""


@lru_cache(maxsize=8)
def suggestion(state: SolitaireState) -> helper.Suggestion:
    """The helper's plan for this position (cached: the display asks every tick)."""
    return helper.suggest(state)


def render(state: SolitaireState, flash: str | None = None, tick: int = 0,
           size: Size = DEFAULT_SIZE) -> Any:
    if flash:
        return led.flash(WORDS, flash, tick, size)
    s = summary(state)
    if state.phase == GAME_OVER:
        return led.cycling([f"SCORE {s['score']}", s["rank"].upper()], tick, size)
    if not state.name:
        return led.board("VAULT", size=size)
    if state.phase == ROLL and state.seen:
        return led.board(f"{d.LOCKS[state.round]}? {''.join(map(str, state.seen))}", size=size)
    rows = led.marks(6, [(i, i not in state.used) for i in range(len(state.dice))])
    rows += led.marks(7, [(i, d.LOCKS[i] in state.circled) for i in range(d.ROUNDS)],
                      width=1)
    return led.board(f"{s['round']} {s['score']}", rows, size)


def status_lines(state: SolitaireState) -> list[str]:
    if not state.name:
        return ["No game yet: start one with new_game."]
    s = summary(state)
    lines = [f"Vault (solitaire) · {s['name']} · round {s['round']} · score {s['score']} "
             f"({s['rank']}) · gems {s['gems']} · re-rolls used {s['rerolls_used']}"]
    if state.phase == PLAY:
        free = [f"{i}:{state.dice[i]}" for i in state.unused_dice()]
        lines.append("Dice (index:pips) " + " ".join(free) + " · markable "
                     + " ".join(engine.markable_cells(state)))
        lines.append("Helper: " + suggestion(state).reason)
    elif state.phase == ROLL and state.seen:
        lines.append("Camera reads " + " ".join(map(str, state.seen))
                     + ": press the button (or `take`) to take this roll, or type `roll ...`")
    elif state.phase == ROLL:
        lines.append("Roll the five dice (`roll 1 2 3 4 5`, or the camera reads them)")
    lines.append("Skimmers " + " · ".join(f"{k['boxes']}{' used' if k['used'] else ''}"
                                          for k in s["skimmers"]))
    return lines


def _ints(words: list[str], what: str) -> list[int]:
    try:
        return [int(w) for w in words]
    except ValueError:
        raise ValueError(f"{what} must be numbers, got {' '.join(words)[:40]!r}") from None


def parse_command(text: str, state: SolitaireState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word == "roll" and args:
        return {"type": "roll", "dice": _ints(args, "roll: dice")}
    if word == "mark" and args:
        dice = [a for a in args[1:] if not a.lower().startswith("s")]
        skims = [a[1:] for a in args[1:] if a.lower().startswith("s")]
        return {"type": "mark", "cell": args[0].lower(), "dice": _ints(dice, "mark: dice"),
                "skimmers": _ints(skims, "mark: skimmers")}
    if word == "power" and len(args) == 2:
        die, skimmer = _ints(args, "power: DIE SKIMMER")
        return {"type": "power", "die": die, "skimmer": skimmer}
    if word == "reroll" and args and all(":" in a for a in args):
        pairs = [a.split(":", 1) for a in args]
        return {"type": "reroll", "dice": _ints([p[0] for p in pairs], "reroll: dice"),
                "values": _ints([p[1] for p in pairs], "reroll: values")}
    if word == "take" and not args:
        take = take_seen(state)
        if take is None:
            raise ValueError("take: the camera has read no roll to take")
        return take
    if word == "pass" and not args:
        return {"type": "pass"}
    if word == "undo" and not args:
        return {"type": "undo"}
    if word == "suggest" and not args:
        return {"type": "note", "text": "Helper: " + suggestion(state).reason}
    raise ValueError(f"unknown command {text[:40]!r} (help lists the commands)")


def take_seen(state: SolitaireState) -> dict[str, Any] | None:
    """The roll event that takes the camera's reading (None: none to take)."""
    if state.phase != ROLL or not state.seen:
        return None
    return {"type": "roll", "dice": list(state.seen)}


def page_moves(state: SolitaireState, new_game_after_over: bool = False) -> dict[str, Any]:
    """`roll` true; `take` {the roll event taking the camera's reading}; `mark` [every
    legal mark event]; `power` [{die, skimmer}]; `reroll`
    {"dice": [indices], "left": n}; `pass`; `suggestion` {"events", "reason"}; `undo`."""
    moves: dict[str, Any] = {}
    if state.prev is not None:
        moves["undo"] = True
    if state.phase == GAME_OVER and new_game_after_over:
        moves["new_game"] = {"game": d.GAME_ID}
    if state.phase == ROLL:
        moves["roll"] = True
        take = take_seen(state)
        if take is not None:
            moves["take"] = take
    if state.phase == PLAY:
        moves["mark"] = engine.legal_marks(state)
        moves["power"] = [
            {"die": i, "skimmer": k} for i in state.unused_dice() for k in range(d.SKIMMERS)
            if engine.apply(state, {"type": "power", "die": i, "skimmer": k}).rejection is None
        ]
        free = list(state.unused_dice())
        if free and engine.apply(state, {"type": "reroll", "dice": free[:1],
                                         "values": [1]}).rejection is None:
            moves["reroll"] = {"dice": free}
        moves["pass"] = True
        plan = suggestion(state)
        moves["suggestion"] = {"events": plan.events, "reason": plan.reason}
    return moves


def page_details(state: SolitaireState) -> dict[str, Any]:
    return {
        "dice": list(state.dice),
        "unused_dice": list(state.unused_dice()),
        "markable": engine.markable_cells(state) if state.phase == PLAY else [],
        "status": status_lines(state),
    }


def _five_pips(state: SolitaireState, pips: Any) -> bool:
    """A roll is awaited and `pips` is one: five die values 1-6."""
    return (state.phase == ROLL and isinstance(pips, list | tuple) and len(pips) == d.DICE
            and all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= 6
                    for p in pips))


def camera_advice(state: SolitaireState, pips: Any) -> str | None:
    """Five dice read by the camera: the helper's use of them (the table confirms with
    a `roll`); None when no roll is awaited or the reading is not five dice."""
    if not _five_pips(state, pips):
        return None
    return f"Camera reads {' '.join(map(str, pips))}: " + helper.suggest(state, list(pips)).reason


def camera_event(state: SolitaireState, pips: Any) -> dict[str, Any] | None:
    """Five dice read while a roll is awaited and not already seen: a `seen` event."""
    if not _five_pips(state, pips) or tuple(pips) == state.seen:
        return None
    return {"type": "seen", "dice": list(pips)}


def camera_unread(state: SolitaireState, faces: Any) -> str | None:
    """Five dice settled while a roll is awaited, some of them not read (None): which
    ones, left to right, for the table to nudge them or enter the roll; None otherwise
    (all five read, another count of dice, or no roll awaited)."""
    if (state.phase != ROLL or not isinstance(faces, list | tuple) or len(faces) != d.DICE
            or not all(f is None or (isinstance(f, int) and not isinstance(f, bool)
                                     and 1 <= f <= 6) for f in faces)):
        return None
    unread = sum(1 for f in faces if f is None)
    if not unread:
        return None
    shown = " ".join("?" if f is None else str(f) for f in faces)
    which = "it" if unread == 1 else "them"
    return (f"Camera cannot read {unread} of the {d.DICE} dice ({shown}): nudge {which} "
            f"or enter the roll")


def press_event(state: SolitaireState, seat: int, ts_ns: int) -> dict[str, Any] | None:
    """The player's press takes the camera's reading as this round's roll."""
    take = take_seen(state)
    return None if take is None else {**take, "ts_ns": ts_ns}


GAME = Game(
    id=d.GAME_ID,
    name="Vault (solitaire)",
    state_type=SolitaireState,
    new_state=engine.new_state,
    apply=engine.apply,
    summary=summary,
    event_types=engine.EVENT_TYPES,
    render=render,
    status_lines=status_lines,
    parse_command=parse_command,
    help=HELP,
    page_moves=page_moves,
    page_details=page_details,
    camera_advice=camera_advice,
    camera_event=camera_event,
    camera_unread=camera_unread,
    press_event=press_event,
    players=(1, 1),
    new_words="NAME",
    seat_names=lambda state: [state.name] if state.name else [],
    # the round's roll, a line cracked, a lock closing, the score
    spoken=frozenset({"new_game", "roll", "gems", "lock", "over"}),
)
