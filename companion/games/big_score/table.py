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
N (a seat 1-6)               while choosing: seat N flees (as its button does)
flee N / rob N / close       seat N's secret choice; close: the rest rob
reveal T T T ...             each seat's token, in seat order (- for none)
trade N TAKE [GIVE]          seat N trades with the floor (GIVE: a Con Man's)
pass N / muscle N            seat N keeps its token / seat N's Muscle: marker
tokens: cash20 cash30 cash50 cash100 silver gold key cop artifact diamond
new NAME... floor=T,T,T,T,T [first=N]   the next game, once this one is over
undo / {"type": ...}         take back the last event / any event as JSON"""

# The phase in words, for the terminal.
PHASE_WORDS = {CHOOSE: "choosing", TRADE: "trading", GAME_OVER: "Act II is over"}
WIDTH = 78  # the terminal's lines (80 columns less a margin)


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


def _fit(*candidates: str) -> str:
    """The first candidate that fits the terminal's width (the last one always does)."""
    for text in candidates:
        if len(text) <= WIDTH:
            return text
    return candidates[-1]


def status_lines(state: BigScoreState) -> list[str]:
    """The terminal's lines, each within 78 columns: the round, the floor, who is to
    act, one line of advice, then one line per seat (counted from 1)."""
    if not state.players:
        return ["No game yet: start one with new_game."]
    s = summary(state)
    lines = [f"The Big Score · round {state.round} · {PHASE_WORDS.get(state.phase, state.phase)}"
             f" · cops {state.cops} of {s['busted_at']}" + (" · BUSTED" if state.busted else ""),
             f"Vault Floor: {' '.join(state.floor) or 'empty'} · {sum(state.bag)} tokens in "
             "the vault"]
    if state.phase == CHOOSE:
        waiting = [i for i, p in enumerate(state.players)
                   if p.status == IN_VAULT and p.flee is None]
        if waiting:
            names = ", ".join(state.players[i].name for i in waiting)
            seats = ", ".join(str(i + 1) for i in waiting)
            lines.append(_fit(f"Choosing: {names} still to choose",
                              f"Choosing: seats {seats} still to choose"))
        else:
            letters = " ".join(f"{i + 1}{'F' if state.players[i].flee else 'R'}"
                               for i in state.in_vault())
            lines.append(_fit(f"Revealed: {engine.choices_line(state)}: enter the tokens drawn",
                              f"Revealed (seat, Rob/Flee): {letters}: enter the tokens drawn"))
    if state.phase == TRADE and state.queue:
        seat = state.queue[0]
        lines.append(_fit(f"Trading: {engine.player(state, seat)}: take from the floor or pass",
                          f"Trading: seat {seat + 1}: take from the floor or pass"))
    lines += s["advice"][:1]
    for i, p in enumerate(state.players):
        expert = ""
        if p.expert:
            expert = " " + d.EXPERT_NAMES[p.expert] + (" (used)" if p.ability_used else "")
        marker = " marker" if i == state.marker and state.phase != GAME_OVER else ""
        win = " WINNER" if i in s["winners"] else ""
        money = f"${total(state, i):,}"
        lines.append(f"  {i + 1} {p.name:<12.12} {p.status:<6} {money:>10} "
                     f"{len(p.vault):>2} tokens{expert}{marker}{win}")
    return lines


def describe(event: dict[str, Any]) -> str | None:
    """The sim's log pane and `replay`: an event of this game in words, seats counted
    from 1 (a `choose` as the screens show it says who, not what)."""
    kind = event.get("type")
    seat = event.get("seat")
    who = f"seat {seat + 1}" if isinstance(seat, int) and not isinstance(seat, bool) else "?"
    if kind == "choose":
        if "flee" not in event:
            return f"{who} has chosen"
        return f"{who} {'flees' if event.get('flee') else 'robs'} (secret)"
    if kind == "close_choices":
        return "the choosing window closes: the rest rob"
    if kind == "reveal" and isinstance(event.get("tokens"), list):
        drawn = " ".join(f"{i + 1}:{t if t is not None else '-'}"
                         for i, t in enumerate(event["tokens"]))
        extra = " (with an ability)" if "driver" in event or "grease" in event else ""
        return f"reveal {drawn}{extra}"
    if kind == "trade":
        give = f" for {event['give']}" if "give" in event else ""
        steal = f", steals {event['steal']}" if "steal" in event else ""
        return f"{who} takes {event.get('take')} from the floor{give}{steal}"
    if kind == "pass":
        return f"{who} keeps the token"
    if kind == "muscle":
        return f"{who}'s Muscle takes the First Player Marker"
    return None


def _seat(word: str, state: BigScoreState, what: str) -> int:
    """A seat as people say it (1..players) -> the event's seat (from 0)."""
    n = max(state.n, 1)
    if not word.isdigit() or not 1 <= int(word) <= n:
        raise ValueError(f"{what}: the seat is a number 1-{n}, got {word[:20]!r}")
    return int(word) - 1


def parse_command(text: str, state: BigScoreState) -> dict[str, Any]:
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word.isdigit() and not args:
        return {"type": "choose", "seat": _seat(word, state, "flee"), "flee": True}
    if word in ("flee", "rob") and len(args) == 1:
        return {"type": "choose", "seat": _seat(args[0], state, word), "flee": word == "flee"}
    if word == "close" and not args:
        return {"type": "close_choices"}
    if word == "reveal" and args:
        return {"type": "reveal", "tokens": [None if a == "-" else a for a in args]}
    if word == "trade" and len(args) in (2, 3):
        ev: dict[str, Any] = {"type": "trade", "seat": _seat(args[0], state, "trade"),
                              "take": args[1]}
        if len(args) == 3:
            ev["give"] = args[2]
        return ev
    if word in ("pass", "muscle") and len(args) == 1:
        return {"type": word, "seat": _seat(args[0], state, word)}
    if word == "undo" and not args:
        return {"type": "undo"}
    raise ValueError(f"unknown command {text[:40]!r} (help lists the commands)")


def _ok(state: BigScoreState, event: dict[str, Any]) -> bool:
    return engine.apply(state, event).rejection is None


def page_moves(state: BigScoreState, new_game_after_over: bool = False) -> dict[str, Any]:
    """What may be sent now: `choose` [seats still to choose], `close_choices`, `reveal`
    {"seats": [seats that draw], "tokens": [...], "driver": [fleeing Drivers], "grease":
    [fleeing Grease Men], "floor": [...]}, `trade` {"seat", "take": [floor], "give":
    [tokens it may give], "drawn", "steal": a Gun Man's steal is open}, `pass` [seat],
    `muscle` [seats], `undo`, and `new_game` {"game"} once it is over (when the host
    starts the next game in a new log). Seats are the events' (from 0)."""
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
            fleeing = [i for i, p in enumerate(state.players)
                       if p.status == IN_VAULT and p.flee and not p.ability_used]
            moves["reveal"] = {
                "seats": [i for i, p in enumerate(state.players)
                          if p.status == IN_VAULT and not p.flee],
                "tokens": list(d.TOKEN_KINDS),
                # the fleeing experts whose ability acts now, with the reveal
                "driver": [i for i in fleeing if state.players[i].expert == "driver"],
                "grease": [i for i in fleeing if state.players[i].expert == "grease_man"],
                "floor": sorted(set(state.floor)),
            }
    if state.phase == TRADE and state.queue and state.floor:
        seat = state.queue[0]
        p = state.players[seat]
        give = sorted({t for t in p.vault
                       if _ok(state, {"type": "trade", "seat": seat,
                                      "take": state.floor[0], "give": t})})
        moves["trade"] = {"seat": seat, "take": sorted(set(state.floor)), "give": give,
                          "drawn": p.drawn,
                          # a Gun Man's steal, once a game, with a trade
                          "steal": p.expert == "gun_man" and not p.ability_used}
    if state.phase == TRADE and state.queue:
        moves["pass"] = [state.queue[0]]
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
        "headline": status_lines(state)[0],
    }


def new_command(args: list[str]) -> dict[str, Any]:
    """The words after `new` (or `play big-score`): `Ann Bob Cat floor=T,T,T,T,T
    [first=N]` -> a new_game. No Act I holdings here (the page or a JSON new_game
    gives them): everyone ties for the fewest payout tokens, and the First Player Marker
    goes to the youngest, the first name unless `first=N` (a seat counted from 1)."""
    names = [a for a in args if "=" not in a]
    options = dict(a.split("=", 1) for a in args if "=" in a)
    if names and names[0].isdigit() and int(names[0]) == len(names) - 1:
        names = names[1:]  # the count said before the names
    if not d.MIN_PLAYERS <= len(names) <= d.MAX_PLAYERS:
        raise ValueError(f"give {d.MIN_PLAYERS}-{d.MAX_PLAYERS} names")
    if "floor" not in options:
        raise ValueError("NAME... floor=T,T,T,T,T [first=N]")
    event: dict[str, Any] = {"type": "new_game", "game": d.GAME_ID, "players": len(names),
                             "names": names, "floor": [t for t in options["floor"].split(",") if t]}
    first = options.get("first", "1")
    if not first.isdigit() or not 1 <= int(first) <= len(names):
        raise ValueError(f"first= is a seat 1-{len(names)} (the youngest), got {first[:20]!r}")
    event["first_player"] = int(first) - 1
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
    new_words="NAME... floor=T,T,T,T,T [first=N]",
    new_command=new_command,
    seat_names=lambda state: [p.name for p in state.players],
    describe=describe,
    # the choosing window, who has chosen (never what), the reveal, the cop track,
    # fleeing, Busted, the marker and the trade order, the winner
    spoken=frozenset({"new_game", "choose", "chosen", "reveal", "cop", "fled", "busted",
                      "over", "first_player", "trade", "winners"}),
)
