"""Vault Assault's short commands (the sim, `serve --input`, the page's command box):
typed words that become events of its vocabulary, its help, and its log lines in
words. Pure: text (and the state, for defaults) in, an event dict out, or ValueError
with a one-line reason. The house reads `help`, `new`, `play` and `undo` first
(companion.games.house).

People count from 1: seats 1-4 (a seat's key too), heist positions 1-5 (1-6), cars 1-3.
The events count seats, positions and cars from 0 (the event format, a contract), so
`flip 2:3` is {"seat": 1, "position": 2} and `impound 3 1` is {"seat": 2, "car": 0}.
"""

from __future__ import annotations

from typing import Any

from companion.events import command_words
from companion.games.vault_assault.definition import CARS_PER_SEAT, GAME_ID, SETUPS
from companion.games.vault_assault.state import GameState

FACE_LETTERS = {"a": "alarm", "p": "dye_pack", "t": "dye_pack", "d": "diamond"}

HELP = """\
Keys 1-4 on an empty line: press that seat's button (Escaped!/Arrested!)
new 3 Ann Bob Cat [cop=N]    new game, seats 1-3 clockwise (4 players: 2 teams)
hide A P D A A               cops' row: A alarm, P dye pack (trap), D diamond
flip 2:3 3:stop              seat:POS (1-5, cops' left to right) or seat:stop
flip 2:3                     one robber's flip alone (the others choose later)
go                           start the race (Go!)
stage N                      cops claim stage N (1-3)
bang 2 [3]                   dye pack: seats losing a tile (2 tiles in all)
hostage S / backup S         robber S sets a hostage aside / takes it back
loot S / steal S FROM        bookkeeping for statistics
empty                        the bank is empty
impound S [CAR]              arrested seat S loses car 1-3 (default: the next)
tally S CASH                 end of game: value of seat S's tiles, e.g. 35k
sticky S FROM|box            sticky fingers: S steals a diamond
upheld / playon              the camera's challenge: take the claim back / keep it
undo                         take back the last accepted event
{"type": ...}                any event as JSON (seats, positions, cars from 0)"""


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {word!r}") from None


def _need(args: list[str], n: int, usage: str) -> None:
    if len(args) < n:
        raise ValueError(f"usage: {usage}")


def _seat(word: str, state: GameState, what: str = "seat", count: int | None = None) -> int:
    """A seat as people type it (from 1) -> the event's seat (from 0)."""
    n = _int(word, what)
    seats = count or state.nseats or 4
    if not 1 <= n <= seats:
        raise ValueError(f"{what} must be 1-{seats} (seats count from 1), got {n}")
    return n - 1


def new_command(args: list[str]) -> dict[str, Any]:
    """`new 3 Ann Bob Cat [cop=N]` (the words after `new`): a new game, the names in
    seat order (seat 1 first) and the first cops' seat N (from 1; default 1); 4 players
    play as two teams (two names); no names: P1, P2, ... (Team A, Team B)."""
    _need(args, 1, "new PLAYERS NAME... [cop=N]")
    players = _int(args[0], "players")
    names = [a for a in args[1:] if not a.startswith("cop=")]
    seats = SETUPS[players].seats if players in SETUPS else players
    cop = next((_seat(a[4:], GameState(), "cop", seats) for a in args[1:]
                if a.startswith("cop=")), 0)
    if not names:
        names = ["Team A", "Team B"] if players == 4 else [f"P{i + 1}" for i in range(players)]
    return {
        "type": "new_game",
        "game": GAME_ID,
        "players": players,
        "names": names,
        "first_cop": cop,
    }


def parse_command(text: str, state: GameState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word.isdigit() and not args:  # a seat's key: that seat's button, pressed now
        return {"type": "buzz", "seat": _seat(word, state, "key")}
    if word == "new":
        return new_command(args)
    if word == "hide":
        _need(args, 1, "hide A P D A A (A alarm, P dye pack trap, D diamond)")
        letters = "".join(args).lower()
        if all(c in FACE_LETTERS for c in letters):
            return {"type": "heist_hide", "row": [FACE_LETTERS[c] for c in letters]}
        if all(len(a) == 1 for a in args):
            raise ValueError("hide: use A (alarm), P (dye pack trap), D (diamond)")
        return {"type": "heist_hide", "row": args}
    if word == "flip":
        return _flip(args, state)
    if word in ("go", "start"):
        return {"type": "assault_start"}
    if word == "stage":
        _need(args, 1, "stage N")
        return {"type": "stage", "stage": _int(args[0], "stage")}
    if word in ("bang", "dye", "dye_pack"):
        _need(args, 1, "bang SEAT [SEAT]")
        return {"type": "dye_pack", "targets": [_seat(a, state) for a in args]}
    if word in ("hostage", "backup", "loot"):
        _need(args, 1, f"{word} SEAT")
        return {"type": word, "seat": _seat(args[0], state)}
    if word == "steal":
        _need(args, 2, "steal SEAT FROM")
        return {"type": "steal", "seat": _seat(args[0], state),
                "from": _seat(args[1], state, "from")}
    if word == "empty":
        return {"type": "empty"}
    if word == "impound":
        _need(args, 1, "impound SEAT [CAR]")
        seat = _seat(args[0], state)
        taken = state.seats[seat].impounded if seat < state.nseats else ()
        if len(args) > 1:
            car = _int(args[1], "car")
            if not 1 <= car <= CARS_PER_SEAT:
                raise ValueError(f"impound: car must be 1-{CARS_PER_SEAT}, got {car}")
            car -= 1
        else:
            car = next((c for c in range(CARS_PER_SEAT) if c not in taken), 0)
        return {"type": "impound", "seat": seat, "car": car}
    if word == "tally":
        _need(args, 2, "tally SEAT CASH")
        cash = args[1].replace("$", "").replace(",", "").lower()
        value = _int(cash[:-1], "cash") * 1000 if cash.endswith("k") else _int(cash, "cash")
        return {"type": "tally", "seat": _seat(args[0], state), "cash": value}
    if word == "sticky":
        _need(args, 2, "sticky SEAT FROM|box")
        box = args[1].lower() in ("box", "null", "none")
        src = None if box else _seat(args[1], state, "from")
        return {"type": "sticky_fingers", "seat": _seat(args[0], state), "from": src}
    if word in ("upheld", "playon"):
        if args:
            raise ValueError(f"{word} takes nothing after it (it answers the latest challenge)")
        return {"type": "challenge_upheld" if word == "upheld" else "play_on"}
    if word == "undo":
        return {"type": "undo"}
    raise ValueError(f"unknown command {word!r} (type help)")


def _flip(args: list[str], state: GameState) -> dict[str, Any]:
    """`flip 2:3 3:stop`: this attempt's flips (a `heist_attempt`), each robber's
    position from 1 (the cops' row, from their left) or stop; one robber's flip while
    others still have to choose (`flip 2:3`) is that robber's alone (a `heist_flip`)."""
    _need(args, 1, "flip SEAT:POSITION|SEAT:stop ...")
    heist = state.turn.heist if state.turn else None
    size = len(heist.row) if heist else 6
    secret = bool(state.players in SETUPS and SETUPS[state.players].secret_flips)
    flips = []
    for a in args:
        seat, colon, what = a.partition(":")
        if not colon:
            raise ValueError(f"flip: write SEAT:POSITION or SEAT:stop, got {a!r}")
        who = _seat(seat, state)
        if what.lower() in ("stop", "s", "x"):
            flips.append({"seat": who, "stop": True})
            continue
        shown = _int(what, "position")
        if not 1 <= shown <= size:
            raise ValueError(
                f"flip: position must be 1-{size} (the cops' row, left to right), got {shown}"
            )
        if heist is not None and shown - 1 in heist.flipped_by(who):
            which = "that die" if secret else f"position {shown}"
            raise ValueError(f"flip: seat {who + 1} already flipped {which}")
        flips.append({"seat": who, "position": shown - 1})
    if heist is not None and len(flips) == 1:
        others = heist.in_heist - heist.chosen() - {flips[0]["seat"]}
        if others:  # one robber's own choice: the others choose theirs later
            return {"type": "heist_flip", **flips[0]}
    return {"type": "heist_attempt", "flips": flips}


FACE_LETTER = {"alarm": "A", "dye_pack": "P", "diamond": "D"}


def _n(value: Any) -> str:
    """An event's 0-based seat, position or car as people count it (from 1)."""
    return str(int(value) + 1)


def _flip_words(flip: dict[str, Any]) -> str:
    if flip.get("stop") is True:
        return f"{_n(flip.get('seat'))}:stop"
    if "position" not in flip:  # a secret flip as screens show it
        return f"{_n(flip.get('seat'))}:?"
    return f"{_n(flip.get('seat'))}:{_n(flip.get('position'))}"


def describe(event: dict[str, Any]) -> str | None:
    """One readable line for an event of Vault Assault's log, as people count (seats,
    heist positions and cars from 1, no ts_ns); None for any other line (the house
    describes it: companion.games.registry.describe)."""
    kind = event.get("type")
    try:
        if kind == "new_game" and event.get("game") in (None, GAME_ID):
            names = ", ".join(str(n) for n in event.get("names", []))
            cops = _n(event.get("first_cop", 0))
            return f"new game: {event.get('players')} players ({names}), cops seat {cops}"
        if kind == "heist_hide":
            row = event.get("row", [])
            if not isinstance(row, list):
                return f"hide ({row})"
            return "hide " + " ".join(FACE_LETTER.get(f, str(f)) for f in row)
        if kind == "heist_attempt":
            return "flip " + " ".join(_flip_words(f) for f in event.get("flips", []))
        if kind == "heist_flip":
            if "position" not in event and event.get("stop") is not True:
                return f"seat {_n(event.get('seat'))} has chosen (secret)"
            return f"flip {_flip_words(event)} (one robber's own)"
        if kind == "assault_start":
            return "go"
        if kind == "stage":
            return f"stage {event.get('stage')}"
        if kind == "dye_pack":
            return "bang " + " ".join(_n(t) for t in event.get("targets", []))
        if kind in ("hostage", "backup", "loot"):
            return f"{kind} {_n(event.get('seat'))}"
        if kind == "steal":
            return f"steal {_n(event.get('seat'))} from {_n(event.get('from'))}"
        if kind == "buzz":
            text = f"button {_n(event.get('seat'))}"
            finish = event.get("photo_finish")
            if isinstance(finish, dict) and isinstance(finish.get("margin_ns"), int):
                text += f" (photo finish, by {finish['margin_ns'] / 1e6:.3f} ms)"
            return text
        if kind == "impound":
            return f"impound {_n(event.get('seat'))} car {_n(event.get('car'))}"
        if kind == "tally":
            return f"tally {_n(event.get('seat'))} ${int(event.get('cash')):,}"
        if kind == "sticky_fingers":
            src = "box" if event.get("from") is None else _n(event.get("from"))
            return f"sticky {_n(event.get('seat'))} from {src}"
        if kind == "empty":
            return "empty"
        if kind == "claim_check":
            return (f"camera: {event.get('claim')} (event {event.get('event')}) "
                    f"{str(event.get('answer')).replace('_', ' ')}: {event.get('text')}")
        if kind in ("challenge_upheld", "play_on"):
            what = "challenge upheld" if kind == "challenge_upheld" else "play on"
            return what + (f" (event {event['event']})" if "event" in event else "")
    except (TypeError, ValueError, AttributeError):
        pass
    return None


def public(event: dict[str, Any]) -> dict[str, Any] | None:
    """A robber's own flip (`heist_flip`) on screens: who chose, never what."""
    if event.get("type") == "heist_flip":
        return {"type": "heist_flip", "seat": event.get("seat")}
    return None


def public_in(event: dict[str, Any], state: GameState) -> dict[str, Any] | None:
    """A 3-player heist attempt on screens (robbers hide their chosen dice from each
    other): who flipped and who stopped, never which position."""
    if event.get("type") != "heist_attempt" or state.players not in SETUPS:
        return None
    if not SETUPS[state.players].secret_flips:
        return None
    flips = event.get("flips")
    if not isinstance(flips, list):
        return None
    shown = [{"seat": f.get("seat"), **({"stop": True} if f.get("stop") is True else {})}
             for f in flips if isinstance(f, dict)]
    return {"type": "heist_attempt", "flips": shown}
