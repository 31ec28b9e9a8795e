"""Vault (solitaire) at the table: its entry in the games registry.

LED board: "A 12" (the lock closing this round, the score so far); row 6 the five
dice of the roll (lit: still to use); row 7 one pixel per lock whose gems were circled.
At game over: the score and the rank, cycling. Drawn for the panel's size, laid out for
32x8 (companion.games.led says how other sizes look). While a roll is awaited, the camera's
pip reading of the five dice is logged as `seen` (`camera_event`), shown ("A? 35561")
and advised on (`camera_advice`); five dice with some the camera cannot read are said
with a "?" for each (`camera_unread`), to nudge or enter by hand. The player's button
press (or `take`, or the page) takes a reading as the roll. With `[camera] claims` on, five
dice all read surely are entered by the camera itself (`camera_take`: a `roll` with
`"by": "camera"`); until a die is used, the LED shows "CAM35561", the status and the page
say "Camera entered 3 5 5 6 1" and one tap (`undo`) takes it back (`camera_entered`).
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
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
roll 5 6 4 6 5 / take        this round's dice / take the camera's reading
mark CELL DIE... [sK...]     mark a square with dice (1-5, as the status lists
                             them) and skimmers (s1-s3), e.g. `mark b3 1 2`
power DIE SKIMMER            a die's pips onto a skimmer (1-3): `power 5 1`
reroll DIE:VALUE ...         re-roll dice, with the new values: `reroll 4:6`
pass / suggest               end the round / the helper's use of this roll
new NAME                     a new game (once this one is over)
undo / {"type": ...}         take back the last event / any event as JSON"""
WIDTH = 78  # the terminal's lines (80 columns less a margin)
SQUARE_TEXT = {"odd": "od", "even": "ev", "x2": "x2", None: "##"}


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
    entered = camera_entered(state)
    if entered is not None:  # "CAM35561": the camera's roll, still to be taken back
        return led.board("CAM" + "".join(map(str, entered)), rows, size)
    return led.board(f"{s['round']} {s['score']}", rows, size)


def lock_line(lock: str) -> str:
    """What a lock closes, in words: "column b", "row 2"."""
    kind, i = d.LOCK_LINES[lock]
    return f"column {d.COLS[i]}" if kind == "col" else f"row {i + 1}"


def lock_state(state: SolitaireState, lock: str) -> str:
    """"cracked" (its gems circled), "closed" (its round is over: its gems are lost
    unless cracked before), "closing" (this round's), else "open"."""
    if lock in state.circled:
        return "cracked"
    if state.phase == GAME_OVER or lock in engine.locked(state):
        return "closed"
    return "closing" if state.phase != "no_game" and lock == d.LOCKS[state.round] else "open"


def _lock_label(state: SolitaireState, lock: str) -> str:
    """A lock beside its line on the terminal's board: "A1" (lock A, 1 gem), "A+" its
    gems taken, "a-" closed with them lost."""
    st = lock_state(state, lock)
    if st == "cracked":
        return f"{lock}+"
    if st == "closed":
        return f"{lock.lower()}-"
    return f"{lock}{d.GEMS[lock]}"


def board_lines(state: SolitaireState) -> list[str]:
    """The board as 9 lines of 32 columns: column letters, the locks over columns b d
    f, rows 1-6 (locks L K J on the left, D E F on the right), the locks under columns
    e c a. A square: its number (od/ev odd/even, x2 a pair), ## blacked out, XX marked,
    a * before it: markable with these dice."""
    markable = set(engine.markable_cells(state)) if state.phase == PLAY else set()
    at = {(kind, i): lock for lock, (kind, i) in d.LOCK_LINES.items()}

    def over(row_locks: dict[int, str]) -> str:
        cells = [f"{_lock_label(state, row_locks[c]):<3}" if c in row_locks else "   "
                 for c in range(d.SIZE)]
        return "       " + " ".join(cells)

    top = {c: lock for (kind, c), lock in at.items() if kind == "col" and c in (1, 3, 5)}
    bottom = {c: lock for (kind, c), lock in at.items() if kind == "col" and c in (0, 2, 4)}
    lines = ["        " + "   ".join(d.COLS), over(top)]
    for r in range(d.SIZE):
        cells = []
        for c in range(d.SIZE):
            square = d.GRID[r][c]
            if square is not None and (r, c) in state.marked:
                text = "XX"
            else:
                text = SQUARE_TEXT.get(square, str(square)) if isinstance(square, str | None) \
                    else str(square)
            star = "*" if d.cell_name(r, c) in markable else " "
            cells.append(f"{star}{text:>2}")
        lock = at[("row", r)]
        left = _lock_label(state, lock) if lock in "JKL" else ""
        right = _lock_label(state, lock) if lock in "DEF" else ""
        lines.append(f"{left:<3} {r + 1} " + " ".join(cells) + f" {right}")
    lines.append(over(bottom))
    return [line.rstrip() for line in lines]


def _dice_line(state: SolitaireState) -> str:
    free = [f"{i + 1}:{state.dice[i]}" for i in state.unused_dice()]
    return "Dice left (die:pips) " + " ".join(free)


def status_lines(state: SolitaireState) -> list[str]:
    """The terminal's lines, within 78 columns: the board (9 lines) with the round,
    score, dice and skimmers beside it, then the helper's plan (one or two lines)."""
    if not state.name:
        return ["No game yet: start one with new_game."]
    s = summary(state)
    lock = d.LOCKS[min(state.round, d.ROUNDS - 1)]
    if state.phase == GAME_OVER:
        now = f"Game over: {s['score']} points, {s['rank']}"
        dice = ""
    else:
        now = f"Round {lock} of L: lock {lock} closes {lock_line(lock)}"
        if state.phase == PLAY:
            dice = _dice_line(state)
        elif state.seen:
            dice = "Camera reads " + " ".join(map(str, state.seen)) + ": take it or roll"
        else:
            dice = "Roll the five dice: roll 1 2 3 4 5"
    side = [
        f"Vault (solitaire) · {state.name[:20]}",
        now,
        f"Score {s['score']}" + ("" if s["over"] else " so far")
        + f" · gems {s['gems']} of {sum(d.GEMS.values())}",
        f"Re-rolls used {s['rerolls_used']} of {d.REROLLS}",
        dice,
        "Skimmers " + " ".join(f"{k + 1}:{x['boxes']}{' used' if x['used'] else ''}"
                               for k, x in enumerate(s["skimmers"]))
        + f" (of {d.SKIMMER_BOXES})",
        "*: markable now · XX marked · ## blacked",
        "A1: lock A, 1 gem · A+ cracked · a- closed",
    ]
    entered = camera_entered(state)
    if entered is not None:
        side.append(f"{entered_text(entered)}: undo takes it back")
    board = board_lines(state)
    lines = []
    for i, row in enumerate(board):
        extra = side[i] if i < len(side) else ""
        lines.append(f"{row:<34}{extra}".rstrip() if extra else row)
    if state.phase == PLAY:
        lines += textwrap.wrap("Helper: " + suggestion(state).reason, WIDTH,
                               subsequent_indent="  ")[:2]
    return lines


def headline(state: SolitaireState) -> str:
    """One line on the game now, for the page's top (words that are true: a rank only
    once the game is over)."""
    if not state.name:
        return "Vault (solitaire)"
    s = summary(state)
    if state.phase == GAME_OVER:
        return f"Vault (solitaire) · {state.name}: game over, {s['score']} points"
    lock = d.LOCKS[state.round]
    what = "roll the five dice" if state.phase == ROLL else "use the dice"
    return (f"Vault (solitaire) · {state.name} · round {lock}: {what} (lock {lock} closes "
            f"{lock_line(lock)})")


def describe(event: dict[str, Any]) -> str | None:
    """The sim's log pane and `replay`: an event of this game in words, dice and
    skimmers counted from 1 (as the status lists them)."""
    kind = event.get("type")

    def nums(key: str) -> str:
        values = event.get(key)
        if not isinstance(values, list):
            return "?"
        return ", ".join(str(v + 1) if isinstance(v, int) else "?" for v in values)

    if kind in ("roll", "seen") and isinstance(event.get("dice"), list):
        pips = " ".join(str(v) for v in event["dice"])
        by = " (entered by the camera)" if kind == "roll" and event.get("by") == "camera" else ""
        return ("roll " if kind == "roll" else "the camera reads ") + pips + by
    if kind == "mark":
        with_ = f"dice {nums('dice')}" if event.get("dice") else ""
        if event.get("skimmers"):
            with_ += (" and " if with_ else "") + f"skimmer {nums('skimmers')}"
        return f"mark {event.get('cell')} with {with_ or 'nothing'}"
    if kind == "power":
        die, k = event.get("die"), event.get("skimmer")
        if isinstance(die, int) and isinstance(k, int):
            return f"die {die + 1} powers skimmer {k + 1}"
    if kind == "reroll" and isinstance(event.get("values"), list):
        return f"re-roll dice {nums('dice')} to " + " ".join(map(str, event["values"]))
    if kind == "pass":
        return "pass: the round ends"
    return None


def _ints(words: list[str], what: str) -> list[int]:
    try:
        return [int(w) for w in words]
    except ValueError:
        raise ValueError(f"{what} must be numbers, got {' '.join(words)[:40]!r}") from None


def _numbers(words: list[str], what: str, top: int) -> list[int]:
    """Dice or skimmers as people count them (1..top) -> the event's indices (from 0)."""
    out = []
    for w in words:
        if not w.isdigit() or not 1 <= int(w) <= top:
            raise ValueError(f"{what}: a number 1-{top}, got {w[:20]!r}")
        out.append(int(w) - 1)
    return out


def parse_command(text: str, state: SolitaireState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    dice = len(state.dice) or d.DICE
    if word == "roll" and args:
        return {"type": "roll", "dice": _ints(args, "roll: dice")}
    if word == "mark" and args:
        picked = [a for a in args[1:] if not a.lower().startswith("s")]
        skims = [a[1:] for a in args[1:] if a.lower().startswith("s")]
        return {"type": "mark", "cell": args[0].lower(),
                "dice": _numbers(picked, "mark: a die", dice),
                "skimmers": _numbers(skims, "mark: a skimmer (s1-s3)", d.SKIMMERS)}
    if word == "power" and len(args) == 2:
        (die,) = _numbers(args[:1], "power: the die", dice)
        (skimmer,) = _numbers(args[1:], "power: the skimmer", d.SKIMMERS)
        return {"type": "power", "die": die, "skimmer": skimmer}
    if word == "reroll" and args and all(":" in a for a in args):
        pairs = [a.split(":", 1) for a in args]
        return {"type": "reroll", "dice": _numbers([p[0] for p in pairs], "reroll: a die", dice),
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


def camera_entered(state: SolitaireState) -> tuple[int, ...] | None:
    """The dice the camera entered as this round's roll, while one `undo` takes that
    roll back (nothing marked, powered or re-rolled since); None otherwise."""
    if (state.phase != PLAY or state.rolled_by != engine.CAMERA or state.used
            or state.prev is None or state.prev.phase != ROLL):
        return None
    return state.dice


def entered_text(dice: tuple[int, ...]) -> str:
    """"Camera entered 3 5 5 6 1": the page's and the status's words for it."""
    return "Camera entered " + " ".join(map(str, dice))


def take_seen(state: SolitaireState) -> dict[str, Any] | None:
    """The roll event that takes the camera's reading (None: none to take)."""
    if state.phase != ROLL or not state.seen:
        return None
    return {"type": "roll", "dice": list(state.seen)}


def step_text(state: SolitaireState, ev: dict[str, Any]) -> str:
    """One of the helper's steps (or any event of the game) for people: a mark as its
    sum, dice and skimmers counted from 1."""
    kind = ev.get("type")
    if kind == "mark":
        return f"{ev['cell']}: {engine.mark_arithmetic(state, ev) or '?'}"
    if kind == "power":
        return (f"die {ev['die'] + 1} (a {state.dice[ev['die']]}) powers skimmer "
                f"{ev['skimmer'] + 1}")
    if kind == "reroll":
        return f"re-roll {len(ev['dice'])} dice"
    if kind == "pass":
        return "end the round (pass)"
    return str(kind)


def page_moves(state: SolitaireState, new_game_after_over: bool = False) -> dict[str, Any]:
    """`roll` true; `take` {the roll event taking the camera's reading}; `take_back`
    {"dice", "text": "Camera entered 3 5 5 6 1"} right after the camera entered the roll
    itself (its button sends `undo`); `mark` [every
    legal mark event]; `power` [{die, skimmer}]; `reroll` {"dice": [indices], "left": n};
    `pass`; `suggestion` {"events", "reason", "steps": [each event in words]}; `undo`;
    `new_game` {"game"} once the game is over (when the host starts the next in a new
    log). Dice and skimmers are the events' indices (from 0)."""
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
    entered = camera_entered(state)
    if entered is not None:
        moves["take_back"] = {"dice": list(entered), "text": entered_text(entered)}
    if state.phase == PLAY:
        moves["mark"] = engine.legal_marks(state)
        moves["power"] = [
            {"die": i, "skimmer": k} for i in state.unused_dice() for k in range(d.SKIMMERS)
            if engine.apply(state, {"type": "power", "die": i, "skimmer": k}).rejection is None
        ]
        free = list(state.unused_dice())
        if free and engine.apply(state, {"type": "reroll", "dice": free[:1],
                                         "values": [1]}).rejection is None:
            moves["reroll"] = {"dice": free, "left": d.REROLLS - state.rerolls_used}
        moves["pass"] = True
        plan = suggestion(state)
        steps, cur = [], state
        for ev in plan.events:
            steps.append(step_text(cur, ev))
            if ev.get("type") in ("mark", "power"):
                cur = engine.apply(replace(cur, dice=cur.dice + (0,)), ev).state
                cur = replace(cur, dice=state.dice)
        moves["suggestion"] = {"events": plan.events, "reason": plan.reason, "steps": steps}
    return moves


def page_details(state: SolitaireState) -> dict[str, Any]:
    """For the page: the dice, the board (rows of squares: `cell`, `square` (a number,
    "odd", "even", "x2", or null: blacked out), `marked`), the locks (`lock`, `line`
    ("column b"), `kind`/`index` (the row or column, from 0), `gems`, `state`: open,
    closing (this round's), closed, cracked), the squares markable now and, for each,
    the ways to mark it (`ways`: cell -> [{"event", "text": "5 + 6 - 1 = 10"}], the
    fewest dice first)."""
    ways: dict[str, list[dict[str, Any]]] = {}
    if state.phase == PLAY:
        for ev in engine.legal_marks(state):
            text = engine.mark_arithmetic(state, ev)
            ways.setdefault(ev["cell"], []).append({"event": ev, "text": text})
        for options in ways.values():
            options.sort(key=lambda w: (len(w["event"]["dice"]) + len(w["event"]["skimmers"]),
                                        w["text"]))
    return {
        "dice": list(state.dice),
        "unused_dice": list(state.unused_dice()),
        "markable": engine.markable_cells(state) if state.phase == PLAY else [],
        "board": [[{"cell": d.cell_name(r, c), "square": d.GRID[r][c],
                    "marked": d.GRID[r][c] is None or (r, c) in state.marked}
                   for c in range(d.SIZE)] for r in range(d.SIZE)],
        "locks": [{"lock": k, "line": lock_line(k), "kind": d.LOCK_LINES[k][0],
                   "index": d.LOCK_LINES[k][1], "gems": d.GEMS[k],
                   "state": lock_state(state, k)} for k in d.LOCKS],
        "ways": ways,
        "skimmer_boxes": d.SKIMMER_BOXES,
        "rerolls": d.REROLLS,
        "status": status_lines(state),
        "headline": headline(state),
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


def camera_take(state: SolitaireState, pips: Any) -> dict[str, Any] | None:
    """Five dice the camera read surely while a roll is awaited: the `roll` it enters
    itself (`"by": "camera"`; one `undo` takes it back); None otherwise."""
    if not _five_pips(state, pips):
        return None
    return {"type": "roll", "dice": list(pips), "by": engine.CAMERA}


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
    camera_take=camera_take,
    camera_unread=camera_unread,
    press_event=press_event,
    players=(1, 1),
    new_words="NAME",
    seat_names=lambda state: [state.name] if state.name else [],
    describe=describe,
    # the round's roll, a line cracked, a lock closing, the score
    spoken=frozenset({"new_game", "roll", "gems", "lock", "over"}),
)
