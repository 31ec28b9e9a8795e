"""The Big Score (Act II) at the table: its entry in the games registry (the LED
board, the terminal lines, short commands, the page's moves, what a button press means).

LED board: "R2 C3/4" (round, cops on the track / the cop that busts); row 6 the cop
track (one 3-px mark per space, lit: a cop there); row 7 one mark per seat: lit = has
chosen this round (never what), one pixel = still to choose, dark = out of the vault.
At game over: the winner and each player's total in thousands, cycling. Drawn for the
panel's size, laid out for 32x8 (companion.games.led says how other sizes look).
A press of a seat's button while choosing is that seat's Flee (`choose`, flee true).
"""

from __future__ import annotations

from typing import Any

from companion.display.frame import DEFAULT_SIZE, Size
from companion.display.model import thousands
from companion.events import command_words
from companion.games import led
from companion.games.big_score import definition as d
from companion.games.big_score import engine
from companion.games.big_score.state import CHOOSE, GAME_OVER, IN_VAULT, TRADE, BigScoreState
from companion.games.big_score.summary import summary, total, winners
from companion.games.registry import Game

WORDS = {"fled": "FLED", "cop": "COP!", "busted": "BUSTED!", "over": "PAYOUT",
         "reveal": "OPEN!"}

HELP = """\
Keys 0-5 while choosing: that seat presses (Flee); `close` closes the window (the rest rob)
new NAME... floor=T,T,T,T,T [first=SEAT]   a new game (once this one is over)
flee S / rob S               a seat's secret choice, typed
close                        the choosing window closes: everyone not pressed robs
reveal T T T ...             the token each seat drew, in seat order (- for none)
trade S TAKE [GIVE]          seat S trades with the Vault Floor (GIVE: Con Man's earlier token)
pass S                       seat S keeps the token
muscle S                     seat S's Muscle takes the First Player Marker
undo                         take back the last accepted event
tokens: cash20 cash30 cash50 cash100 silver gold key cop artifact diamond
{"type": ...}                any event as JSON (reveal with driver/grease, trade with steal)"""


def render(state: BigScoreState, flash: str | None = None, tick: int = 0,
           size: Size = DEFAULT_SIZE) -> Any:
    if flash:
        return led.flash(WORDS, flash, tick, size)
    if state.phase == GAME_OVER:
        return led.cycling(game_over_lines(state), tick, size)
    if not state.players:
        return led.board("BIG SCORE", size=size)
    limit = d.busted_after(state.n)
    rows = led.marks(6, [(i, i < state.cops) for i in range(limit)])
    seats = []
    for i, p in enumerate(state.players):
        if p.status == IN_VAULT:
            seats.append((i, p.flee is not None and state.phase == CHOOSE))
    rows += led.marks(7, seats)
    if revealed(state):  # all at once: R or F above each seat's mark (4 px a seat)
        return led.board(reveal_letters(state), rows, size)
    return led.board(f"R{state.round} C{state.cops}/{limit}", rows, size)


def revealed(state: BigScoreState) -> bool:
    """The choosing window has closed (everyone in the vault has chosen) and the tokens
    drawn are not entered yet: the choices are public now."""
    inside = state.in_vault()
    return (state.phase == CHOOSE and bool(inside)
            and all(state.players[s].flee is not None for s in inside))


def reveal_letters(state: BigScoreState) -> str:
    """One letter a seat, over its mark on row 7: R robs, F flees, blank: out."""
    return "".join(("F" if p.flee else "R") if p.status == IN_VAULT else " "
                   for p in state.players)


def game_over_lines(state: BigScoreState) -> list[str]:
    best = winners(state)
    names = "+".join(state.players[w].name for w in best)
    lines = [("WINNERS " if len(best) > 1 else "WINNER ") + names]
    for i, p in enumerate(state.players):
        lines.append(f"{p.name} {thousands(total(state, i))}")
    return lines


def status_lines(state: BigScoreState) -> list[str]:
    if not state.players:
        return ["No game yet: start one with new_game."]
    s = summary(state)
    lines = [f"The Big Score · round {state.round} · {state.phase} · cops {state.cops}/"
             f"{s['busted_at']}" + (" · BUSTED" if state.busted else "")
             + f" · floor {' '.join(state.floor)}"]
    if state.phase == CHOOSE:
        waiting = [p.name for p in state.players if p.status == IN_VAULT and p.flee is None]
        lines.append("Choosing: " + ", ".join(waiting) + " to choose" if waiting
                     else f"Revealed: {engine.choices_line(state)}: enter the tokens drawn")
    if state.phase == TRADE and state.queue:
        lines.append(f"Trading: {state.players[state.queue[0]].name} (seat {state.queue[0]})")
    lines += s["advice"]
    for i, p in enumerate(s["players"]):
        marker = " MARKER" if i == state.marker else ""
        win = " WINNER" if i in s["winners"] else ""
        lines.append(f"  seat {i} {p['name']:<10.10} {p['status']:<6} "
                     f"${p['total']:,} tokens {len(p['vault_tokens'])}{marker}{win}")
    return lines


def _seat(word: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise ValueError(f"seat must be a number, got {word!r}") from None


def parse_command(text: str, state: BigScoreState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word.isdigit() and not args:
        return {"type": "choose", "seat": int(word), "flee": True}
    if word in ("flee", "rob") and len(args) == 1:
        return {"type": "choose", "seat": _seat(args[0]), "flee": word == "flee"}
    if word == "close" and not args:
        return {"type": "close_choices"}
    if word == "reveal" and args:
        return {"type": "reveal", "tokens": [None if a == "-" else a for a in args]}
    if word == "trade" and len(args) in (2, 3):
        ev: dict[str, Any] = {"type": "trade", "seat": _seat(args[0]), "take": args[1]}
        if len(args) == 3:
            ev["give"] = args[2]
        return ev
    if word in ("pass", "muscle") and len(args) == 1:
        return {"type": word, "seat": _seat(args[0])}
    if word == "undo" and not args:
        return {"type": "undo"}
    raise ValueError(f"unknown command {text[:40]!r} (help lists the commands)")


def _ok(state: BigScoreState, event: dict[str, Any]) -> bool:
    return engine.apply(state, event).rejection is None


def page_moves(state: BigScoreState, new_game_after_over: bool = False) -> dict[str, Any]:
    """What may be sent now: `choose` [seats still to choose], `close_choices`, `reveal`
    {"seats": [seats that draw], "tokens": [...]}, `trade` {"seat", "take": [floor],
    "give": [tokens it may give]}, `pass` [seat], `muscle` [seats], `undo`."""
    moves: dict[str, Any] = {}
    if state.prev is not None:
        moves["undo"] = True
    if state.phase == GAME_OVER and new_game_after_over:
        moves["new_game"] = {"game": d.GAME_ID}
    if state.phase == CHOOSE:
        waiting = [i for i, p in enumerate(state.players)
                   if p.status == IN_VAULT and p.flee is None]
        if waiting:
            moves["choose"] = waiting
            moves["close_choices"] = True
        else:
            moves["reveal"] = {
                "seats": [i for i, p in enumerate(state.players)
                          if p.status == IN_VAULT and not p.flee],
                "tokens": list(d.TOKEN_KINDS),
            }
    if state.phase == TRADE and state.queue:
        seat = state.queue[0]
        p = state.players[seat]
        give = sorted({t for t in p.vault
                       if _ok(state, {"type": "trade", "seat": seat,
                                      "take": state.floor[0], "give": t})})
        moves["trade"] = {"seat": seat, "take": sorted(set(state.floor)), "give": give,
                          "drawn": p.drawn}
        moves["pass"] = [seat]
    muscle = [i for i in range(state.n) if state.phase in (CHOOSE, TRADE)
              and _ok(state, {"type": "muscle", "seat": i})]
    if muscle:
        moves["muscle"] = muscle
    return moves


def page_details(state: BigScoreState) -> dict[str, Any]:
    """For the page: who has chosen (never what, while anyone is still choosing), the
    reveal once the window has closed ("revealed": [{"seat", "name", "flee"}] of the
    seats in the vault, else null), the trader, the marker."""
    return {
        "chosen": [i for i, p in enumerate(state.players)
                   if p.status == IN_VAULT and p.flee is not None and state.phase == CHOOSE],
        "revealed": [{"seat": s, "name": state.players[s].name,
                      "flee": bool(state.players[s].flee)} for s in state.in_vault()]
        if revealed(state) else None,
        "trader": state.queue[0] if state.phase == TRADE and state.queue else None,
        "status": status_lines(state),
    }


def new_command(args: list[str]) -> dict[str, Any]:
    """The words after `new` (or `play big-score`): `Ann Bob Cat floor=T,T,T,T,T
    [first=SEAT]` -> a new_game. The First Player Marker goes to the first name (the
    youngest) unless `first=SEAT`; Act I holdings come only with a JSON new_game."""
    names = [a for a in args if "=" not in a]
    options = dict(a.split("=", 1) for a in args if "=" in a)
    if names and names[0].isdigit() and int(names[0]) == len(names) - 1:
        names = names[1:]  # the count said before the names
    if not d.MIN_PLAYERS <= len(names) <= d.MAX_PLAYERS:
        raise ValueError(f"give {d.MIN_PLAYERS}-{d.MAX_PLAYERS} names")
    if "floor" not in options:
        raise ValueError("NAME... floor=T,T,T,T,T [first=SEAT]")
    event: dict[str, Any] = {"type": "new_game", "game": d.GAME_ID, "players": len(names),
                             "names": names, "floor": [t for t in options["floor"].split(",") if t]}
    # No Act I holdings here: everyone ties for the fewest payout tokens, and the
    # rulebook's tie-break (the youngest) is the first name listed unless first= says.
    event["first_player"] = 0
    if "first" in options:
        try:
            event["first_player"] = int(options["first"])
        except ValueError:
            raise ValueError(f"first= must be a seat, got {options['first']!r}") from None
    return event


def press_event(state: BigScoreState, seat: int, ts_ns: int) -> dict[str, Any] | None:
    """A press while choosing is that seat's Flee; otherwise it means nothing (a `buzz`
    event, refused with its reason)."""
    if state.phase == CHOOSE:
        return {"type": "choose", "seat": seat, "flee": True, "ts_ns": ts_ns}
    return {"type": "buzz", "seat": seat, "ts_ns": ts_ns}


def public(event: dict[str, Any]) -> dict[str, Any] | None:
    """A `choose` on screens: who chose, never what."""
    if event.get("type") == "choose":
        return {"type": "choose", "seat": event.get("seat")}
    return None


def timed_window(state: BigScoreState) -> tuple[Any, dict[str, Any]] | None:
    """The choosing window of this round, closed by `close_choices` (the rest rob)."""
    if state.phase != CHOOSE or all(state.players[s].flee is not None
                                    for s in state.in_vault()):
        return None
    return (state.round, {"type": "close_choices"})


GAME = Game(
    id=d.GAME_ID,
    name="The Big Score (Act II)",
    state_type=BigScoreState,
    new_state=engine.new_state,
    apply=engine.apply,
    summary=summary,
    event_types=engine.EVENT_TYPES,
    render=render,
    status_lines=status_lines,
    parse_command=parse_command,
    help=HELP,
    page_moves=page_moves,
    press_event=press_event,
    page_details=page_details,
    public=public,
    secret_events=frozenset({"choose"}),
    timed_window=timed_window,
    players=(d.MIN_PLAYERS, d.MAX_PLAYERS),
    new_words="NAME... floor=T,T,T,T,T [first=SEAT]",
    new_command=new_command,
    seat_names=lambda state: [p.name for p in state.players],
    # the choosing window, who has chosen (never what), the reveal, the cop track,
    # fleeing, Busted, the marker and the trade order, the winner
    spoken=frozenset({"new_game", "choose", "chosen", "reveal", "cop", "fled", "busted",
                      "over", "first_player", "trade", "winners"}),
)
