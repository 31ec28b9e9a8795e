"""Vault Assault's short commands (the sim, `serve --input`, the page's command box):
typed words that become events of its vocabulary, its help, and its log lines in
words. Pure: text (and the state, for defaults) in, an event dict out, or ValueError
with a one-line reason. The house reads `help`, `new`, `play` and `undo` first
(companion.games.house)."""

from __future__ import annotations

from typing import Any

from companion.events import command_words
from companion.games.vault_assault.definition import GAME_ID
from companion.games.vault_assault.state import GameState

FACE_LETTERS = {"a": "alarm", "p": "dye_pack", "t": "dye_pack", "d": "diamond"}

HELP = """\
Keys 0-3 on an empty line: press that seat's button (Escaped!/Arrested!)
new 2 Alice Bob [cop=N]      new game (4 players: two team names)
hide A P D A A               cops' row: A alarm, P dye pack (trap), D diamond
flip 1:3 2:stop              seat:POS (1-5, cops' left to right) or seat:stop
go                           start the race (Go!)
stage N                      cops claim stage N (1-3)
bang 1 [2]                   dye pack: seats losing a tile (2 tiles in all)
hostage S / backup S         robber S sets a hostage aside / takes it back
loot S / steal S FROM        bookkeeping for statistics
empty                        the bank is empty
impound S [CAR]              arrested seat S loses a car (default: the next one)
tally S CASH                 end of game: value of seat S's tiles
sticky S FROM|box            sticky fingers: S steals a diamond
undo                         take back the last accepted event
{"type": ...}                any event as JSON"""


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {word!r}") from None


def _need(args: list[str], n: int, usage: str) -> None:
    if len(args) < n:
        raise ValueError(f"usage: {usage}")


def new_command(args: list[str]) -> dict[str, Any]:
    """`new 2 Alice Bob [cop=N]` (the words after `new`): a new game; 4 players play
    as two teams (two names); no names: P1, P2, ... (Team A, Team B)."""
    _need(args, 1, "new PLAYERS NAME... [cop=N]")
    players = _int(args[0], "players")
    names = [a for a in args[1:] if not a.startswith("cop=")]
    cop = next((_int(a[4:], "cop") for a in args[1:] if a.startswith("cop=")), 0)
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
    if word.isdigit() and not args:
        return {"type": "buzz", "seat": int(word)}
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
        _need(args, 1, "flip SEAT:POSITION|SEAT:stop ...")
        heist = state.turn.heist if state.turn else None
        size = len(heist.row) if heist else 6
        flips = []
        for a in args:
            seat, _, what = a.partition(":")
            if what.lower() in ("stop", "s", "x"):
                flips.append({"seat": _int(seat, "seat"), "stop": True})
                continue
            shown = _int(what, "position")
            if not 1 <= shown <= size:
                raise ValueError(
                    f"flip: position must be 1-{size} (the cops' row, left to right), got {shown}"
                )
            who = _int(seat, "seat")
            if heist is not None and shown - 1 in heist.flipped_by(who):
                raise ValueError(f"flip: seat {who} already flipped position {shown}")
            # People count 1-5; the event format counts from 0 (a contract).
            flips.append({"seat": who, "position": shown - 1})
        return {"type": "heist_attempt", "flips": flips}
    if word in ("go", "start"):
        return {"type": "assault_start"}
    if word == "stage":
        _need(args, 1, "stage N")
        return {"type": "stage", "stage": _int(args[0], "stage")}
    if word in ("bang", "dye", "dye_pack"):
        _need(args, 1, "bang SEAT [SEAT]")
        return {"type": "dye_pack", "targets": [_int(a, "seat") for a in args]}
    if word in ("hostage", "backup", "loot"):
        _need(args, 1, f"{word} SEAT")
        return {"type": word, "seat": _int(args[0], "seat")}
    if word == "steal":
        _need(args, 2, "steal SEAT FROM")
        return {"type": "steal", "seat": _int(args[0], "seat"), "from": _int(args[1], "from")}
    if word == "empty":
        return {"type": "empty"}
    if word == "impound":
        _need(args, 1, "impound SEAT [CAR]")
        seat = _int(args[0], "seat")
        if len(args) > 1:
            car = _int(args[1], "car")
        else:
            taken = state.seats[seat].impounded if 0 <= seat < state.nseats else ()
            car = next((c for c in range(3) if c not in taken), 0)
        return {"type": "impound", "seat": seat, "car": car}
    if word == "tally":
        _need(args, 2, "tally SEAT CASH")
        cash = args[1].replace("$", "").replace(",", "").lower()
        value = _int(cash[:-1], "cash") * 1000 if cash.endswith("k") else _int(cash, "cash")
        return {"type": "tally", "seat": _int(args[0], "seat"), "cash": value}
    if word == "sticky":
        _need(args, 2, "sticky SEAT FROM|box")
        src = None if args[1].lower() in ("box", "null", "none") else _int(args[1], "from")
        return {"type": "sticky_fingers", "seat": _int(args[0], "seat"), "from": src}
    if word == "undo":
        return {"type": "undo"}
    raise ValueError(f"unknown command {word!r} (type help)")


FACE_LETTER = {"alarm": "A", "dye_pack": "P", "diamond": "D"}


def describe(event: dict[str, Any]) -> str | None:
    """One readable line for an event of Vault Assault's log (heist positions 1-5, no
    ts_ns); None for any other line (the house describes it:
    companion.games.registry.describe)."""
    kind = event.get("type")
    try:
        if kind == "new_game" and event.get("game") in (None, GAME_ID):
            names = ", ".join(str(n) for n in event.get("names", []))
            cops = event.get("first_cop", 0)
            return f"new game: {event.get('players')} players ({names}), cops seat {cops}"
        if kind == "heist_hide":
            return "hide " + " ".join(FACE_LETTER.get(f, str(f)) for f in event.get("row", []))
        if kind == "heist_attempt":
            parts = []
            for f in event.get("flips", []):
                what = "stop" if f.get("stop") is True else str(int(f.get("position")) + 1)
                parts.append(f"{f.get('seat')}:{what}")
            return "flip " + " ".join(parts)
        if kind == "assault_start":
            return "go"
        if kind == "stage":
            return f"stage {event.get('stage')}"
        if kind == "dye_pack":
            return "bang " + " ".join(str(t) for t in event.get("targets", []))
        if kind in ("hostage", "backup", "loot"):
            return f"{kind} {event.get('seat')}"
        if kind == "steal":
            return f"steal {event.get('seat')} from {event.get('from')}"
        if kind == "buzz":
            text = f"button {event.get('seat')}"
            finish = event.get("photo_finish")
            if isinstance(finish, dict) and isinstance(finish.get("margin_ns"), int):
                text += f" (photo finish, by {finish['margin_ns'] / 1e6:.3f} ms)"
            return text
        if kind == "impound":
            return f"impound {event.get('seat')} car {event.get('car')}"
        if kind == "tally":
            return f"tally {event.get('seat')} ${int(event.get('cash')):,}"
        if kind == "sticky_fingers":
            src = "box" if event.get("from") is None else event.get("from")
            return f"sticky {event.get('seat')} from {src}"
        if kind == "empty":
            return "empty"
    except (TypeError, ValueError, AttributeError):
        pass
    return None
