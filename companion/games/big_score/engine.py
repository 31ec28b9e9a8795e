"""The Big Score, Act II, as a pure reducer:

    apply(state, event) -> Result(state, rejection, outputs)

Events (one JSON object a line):
- `new_game` {"game":"big-score","players":N,"names":[...],"act1":[{"cash":K,"diamonds":n,
  "artifacts":n,"hard_drives":n,"expert":"hacker"|...|null}, ...],"floor":[5 tokens],
  "first_player":seat (one of the players with the fewest Act I payout tokens, the
  youngest of a tie; optional unless they tie)}. Seats count from 0 in the events; the
  messages name players with their seats counted from 1 ("Ann (seat 1)").
- `choose` {"seat":s,"flee":true|false}: one player's secret Rob/Flee choice (a press in
  the choosing window means Flee; the window closing unpressed sends flee false).
- `close_choices` {}: the choosing window closed; every player in the vault who has not
  chosen robs.
- `reveal` {"tokens":[token or null per seat], "driver":{"seat":s,"tokens":[t,t]},
  "grease":{"seat":s,"token":t}}: all open their fists; robbers' drawn tokens by seat
  (null for a seat that fled or is out). driver/grease are optional ability uses.
- `trade` {"seat":s,"take":floor token,"give":token (Con Man: a previously drawn one),
  "steal":floor token (Gun Man)} and `pass` {"seat":s}: the Vault Floor phase, in order
  from the First Player Marker.
- `muscle` {"seat":s}: a Muscle steals the First Player Marker (any time in Act II).
- `undo`, and the notes `rejected`/`note`.
Token names: cash20 cash30 cash50 cash100 silver gold key cop artifact diamond.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from companion.games import base
from companion.games.base import Output, Rejected, Result
from companion.games.big_score import definition as d
from companion.games.big_score.state import (
    BUSTED,
    CHOOSE,
    FLED,
    GAME_OVER,
    IN_VAULT,
    NO_GAME,
    TRADE,
    BigScoreState,
    Player,
)

Handler = base.Handler
# The act1 fields as the Player's fields.
_PLAYER_FIELD = {"diamonds": "act1_diamonds", "artifacts": "act1_artifacts",
                 "hard_drives": "act1_drives"}


def new_state() -> BigScoreState:
    return BigScoreState()


# --------------------------------------------------------------------------- helpers


def player(state: BigScoreState, seat: int) -> str:
    """A player for people: the name and the seat counted from 1 ("Ann (seat 1)")."""
    return f"{state.players[seat].name} (seat {seat + 1})"


def fewest_payout_tokens(players: tuple[Player, ...] | list[Player]) -> list[int]:
    """The seats tied for the fewest Act I payout tokens (diamonds, artifacts, hard
    drives; cash does not count): the First Player Marker goes to one of them."""
    payout = [p.act1_diamonds + p.act1_artifacts + p.act1_drives for p in players]
    low = min(payout, default=0)
    return [s for s, n in enumerate(payout) if n == low]


def _who(players: tuple[Player, ...] | list[Player], seats: list[int]) -> str:
    return ", ".join(f"{players[s].name} (seat {s + 1})" for s in seats)


def _phase(state: BigScoreState, ev: Mapping[str, Any], *allowed: str) -> None:
    if state.phase in allowed:
        return
    what = {
        NO_GAME: "no game has started (send new_game first)",
        CHOOSE: "players are choosing Rob or Flee",
        TRADE: "the Vault Floor trades are on",
        GAME_OVER: "Act II is over",
    }[state.phase]
    raise Rejected(f"{ev['type']}: not allowed now: {what}", "wrong_phase")


def _token(ev: Mapping[str, Any], value: Any, what: str) -> str:
    if not isinstance(value, str) or value not in d.VAULT_TOKENS:
        raise Rejected(f"{ev['type']}: {what} must be a token name "
                       f"({' '.join(d.TOKEN_KINDS)}), got {base._short(value)}")
    return value


def _take_from_bag(state: BigScoreState, ev: Mapping[str, Any], bag: list[int], tok: str
                   ) -> None:
    k = d.TOKEN_KINDS.index(tok)
    if bag[k] <= 0:
        raise Rejected(f"{ev['type']}: no {tok} token is left in the vault to draw")
    bag[k] -= 1


def _return_to_bag(bag: list[int], tokens: tuple[str, ...] | list[str]) -> None:
    for tok in tokens:
        bag[d.TOKEN_KINDS.index(tok)] += 1


def _without(tokens: tuple[str, ...], tok: str) -> tuple[str, ...]:
    items = list(tokens)
    items.remove(tok)
    return tuple(items)


def _with(tokens: tuple[str, ...], *toks: str) -> tuple[str, ...]:
    return tuple(sorted(tokens + toks))


def _set(players: tuple[Player, ...], seat: int, **changes: Any) -> tuple[Player, ...]:
    items = list(players)
    items[seat] = replace(items[seat], **changes)
    return tuple(items)


def _left_in_vault(state: BigScoreState, seat: int) -> int:
    """The next seat to the left of `seat` still in the vault (`seat` itself if none)."""
    for k in range(1, state.n + 1):
        s = (seat + k) % state.n
        if state.players[s].status == IN_VAULT:
            return s
    return seat


def _clockwise_from(state: BigScoreState, start: int) -> list[int]:
    return [(start + k) % state.n for k in range(state.n)]


# --------------------------------------------------------------------------- handlers


def _new_game(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    if state.phase != NO_GAME:
        raise Rejected("new_game: a game is already under way in this log (start a new log)")
    game = base.field(ev, "game")
    if game != d.GAME_ID:
        raise Rejected(f"new_game: unknown game {base._short(game)} (this referee plays "
                       f"{d.GAME_ID!r})")
    n = base.whole(ev, "players", d.MIN_PLAYERS, d.MAX_PLAYERS)
    names = base.names_of(ev, n)
    act1 = ev.get("act1", [{} for _ in range(n)])
    if not isinstance(act1, list) or len(act1) != n or not all(isinstance(a, dict)
                                                              for a in act1):
        raise Rejected(f"new_game: 'act1' must list {n} objects of Act I holdings")
    players = []
    for seat, (name, a) in enumerate(zip(names, act1, strict=True)):
        a = {"type": "new_game", **a}
        unknown = set(a) - {"type", "expert", *d.ACT1_FIELDS}
        if unknown:
            # The key is the player's text: shown short, with the fields it may name.
            raise Rejected(f"new_game: act1 of seat {seat + 1} has unknown field "
                           f"{base._short(min(unknown, key=str))} (known: expert, "
                           f"{', '.join(d.ACT1_FIELDS)})")
        counts = {f: base.whole(a, f, 0, 100_000 if f == "cash" else 100, default=0)
                  for f in d.ACT1_FIELDS}
        expert = a.get("expert")
        if expert is not None and expert not in d.EXPERTS:
            raise Rejected(f"new_game: act1 of seat {seat + 1}: 'expert' must be one of "
                           f"{', '.join(d.EXPERTS)} or null, got {base._short(expert)}")
        players.append(Player(name=name, act1_cash=counts["cash"],
                              act1_diamonds=counts["diamonds"],
                              act1_artifacts=counts["artifacts"],
                              act1_drives=counts["hard_drives"], expert=expert))
    for f, supply in d.ACT1_SUPPLY.items():
        held = sum(getattr(p, _PLAYER_FIELD[f]) for p in players)
        if held > supply:
            raise Rejected(f"new_game: the players hold {held} {f.replace('_', ' ')} from "
                           f"Act I, but the box has {supply}", "bad_value")
    for expert in d.EXPERTS:
        holders = [s for s, p in enumerate(players) if p.expert == expert]
        if len(holders) > d.MAX_SAME_EXPERT:
            raise Rejected(f"new_game: {len(holders)} players trained a "
                           f"{d.EXPERT_NAMES[expert]}, but its {d.EXPERT_CARDS} expert cards "
                           f"train at most {d.MAX_SAME_EXPERT}", "bad_value")
    floor = base.field(ev, "floor")
    if not isinstance(floor, list) or len(floor) != d.FLOOR_SIZE:
        raise Rejected(f"new_game: 'floor' must list the {d.FLOOR_SIZE} Vault Floor tokens")
    bag = list(d.VAULT_TOKENS.values())
    for tok in floor:
        _token(ev, tok, "a floor token")
        if tok == "cop":
            raise Rejected("new_game: cop tokens are never placed on the Vault Floor (return "
                           "it and draw again)")
        _take_from_bag(state, ev, bag, tok)
    # "The First Player Marker is given to the player with the fewest number (not
    # value) of Payout Tokens [...] If there is a tie, the First Player Marker is given
    # to the youngest among the tied players."
    fewest = fewest_payout_tokens(players)
    if "first_player" in ev:
        marker = base.whole(ev, "first_player", 0, n - 1)
        if marker not in fewest:
            who = (f"{_who(players, fewest)} (the fewest payout tokens)" if len(fewest) == 1
                   else f"one of {_who(players, fewest)} (tied for the fewest payout "
                        "tokens: the youngest)")
            raise Rejected(f"new_game: {_who(players, [marker])} may not go first: the "
                           f"First Player Marker goes to {who}", "bad_value")
    elif len(fewest) > 1:
        raise Rejected(f"new_game: {_who(players, fewest)} tie for the fewest payout "
                       "tokens: give 'first_player' (the youngest of them)")
    else:
        marker = fewest[0]
    new = BigScoreState(phase=CHOOSE, players=tuple(players), bag=tuple(bag),
                        floor=tuple(sorted(floor)), marker=marker, round=1)
    return new, [
        Output("announce", "new_game", f"The Big Score, Act II: {n} players in the vault"),
        Output("announce", "first_player", f"{player(new, marker)} holds the First Player "
               "Marker"),
        Output("announce", "choose", "Round 1: Rob or Flee? Press to flee; a fist to rob"),
    ]


def _choose(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    _phase(state, ev, CHOOSE)
    seat = base.whole(ev, "seat", 0, state.n - 1)
    flee = base.boolean(ev, "flee")
    p = state.players[seat]
    if p.status != IN_VAULT:
        raise Rejected(f"choose: {player(state, seat)} is no longer in the vault")
    if p.flee is not None:
        raise Rejected(f"choose: {player(state, seat)} has already chosen (no changing your "
                       "mind; undo a mistaken entry)")
    new = replace(state, players=_set(state.players, seat, flee=flee))
    waiting = [s for s in new.in_vault() if new.players[s].flee is None]
    outs = [Output("announce", "chosen", f"{p.name} has chosen", seat)]
    if not waiting:
        outs += _all_reveal(new)
    return new, outs


def choices_line(state: BigScoreState) -> str:
    """Every choice of the round, once all have chosen: "Ann flees, Bob robs"."""
    return ", ".join(f"{state.players[s].name} {'flees' if state.players[s].flee else 'robs'}"
                     for s in state.in_vault())


def _all_reveal(state: BigScoreState) -> list[Output]:
    """The window has closed: all open their fists at once (said, shown, flashed)."""
    return [Output("announce", "reveal", "Everyone has chosen: open your fists!"),
            Output("flash", "reveal", choices_line(state))]


def _close_choices(state: BigScoreState, ev: Mapping[str, Any]
                   ) -> tuple[BigScoreState, list[Output]]:
    """The choosing window closes: everyone still in the vault who has not pressed robs."""
    _phase(state, ev, CHOOSE)
    waiting = [s for s in state.in_vault() if state.players[s].flee is None]
    if not waiting:
        raise Rejected("close_choices: everyone has chosen already")
    players = state.players
    for seat in waiting:
        players = _set(players, seat, flee=False)
    new = replace(state, players=players)
    return new, _all_reveal(new)


def _reveal(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    _phase(state, ev, CHOOSE)
    inside = state.in_vault()
    waiting = [s for s in inside if state.players[s].flee is None]
    if waiting:
        raise Rejected("reveal: still choosing: " + ", ".join(player(state, s) for s in waiting))
    tokens = base.field(ev, "tokens")
    if not isinstance(tokens, list) or len(tokens) != state.n:
        raise Rejected(f"reveal: 'tokens' must list {state.n} entries, a token or null per "
                       "seat")
    bag = list(state.bag)
    players = state.players
    floor = state.floor
    outs: list[Output] = []
    robbers: list[int] = []
    fleeing: list[int] = []
    new_cops = 0
    for seat, tok in enumerate(tokens):
        p = players[seat]
        if p.status != IN_VAULT or p.flee:
            if tok is not None:
                why = "fled" if p.flee else "is out of the vault"
                raise Rejected(f"reveal: {player(state, seat)} {why} and drew nothing "
                               f"(null), got {base._short(tok)}")
            if p.status == IN_VAULT:
                fleeing.append(seat)
            continue
        _token(ev, tok, f"{player(state, seat)}'s token")
        _take_from_bag(state, ev, bag, tok)
        robbers.append(seat)
        if tok == "cop":
            new_cops += 1
            players = _set(players, seat, drawn="cop")
        else:
            players = _set(players, seat, drawn=tok, vault=_with(p.vault, tok))
    # Abilities used on fleeing (entered with the reveal).
    for key, expert in (("driver", "driver"), ("grease", "grease_man")):
        if key not in ev:
            continue
        use = ev[key]
        if not isinstance(use, dict):
            raise Rejected(f"reveal: '{key}' must be an object with a 'seat'")
        use = {"type": "reveal", **use}
        seat = base.whole(use, "seat", 0, state.n - 1)
        p = players[seat]
        if p.expert != expert:
            raise Rejected(f"reveal: {player(state, seat)} is not a {expert.replace('_', ' ')}")
        if p.ability_used:
            raise Rejected(f"reveal: {player(state, seat)} has already used the ability")
        if seat not in fleeing:
            raise Rejected(f"reveal: {player(state, seat)} did not flee this round")
        if key == "driver":
            drew = base.field(use, "tokens")
            if not isinstance(drew, list) or len(drew) != d.DRIVER_DRAWS:
                raise Rejected(f"reveal: the driver draws {d.DRIVER_DRAWS} tokens: 'tokens' "
                               "must list them")
            kept = []
            for tok in drew:
                _token(ev, tok, "a driver's token")
                if tok != "cop":  # a cop goes straight back: it is never drawn from the bag
                    _take_from_bag(state, ev, bag, tok)
                    kept.append(tok)
            players = _set(players, seat, ability_used=True,
                           vault=_with(players[seat].vault, *kept))
            outs.append(Output("announce", "driver", f"{p.name}'s Driver draws "
                               f"{', '.join(kept) or 'only cops (returned)'}", seat))
        else:
            tok = _token(ev, base.field(use, "token"), "the stolen token")
            if tok not in floor:
                raise Rejected(f"reveal: there is no {tok} on the Vault Floor")
            floor = _without(floor, tok)
            players = _set(players, seat, ability_used=True,
                           vault=_with(players[seat].vault, tok))
            outs.append(Output("announce", "grease", f"{p.name}'s Grease Man steals {tok} "
                               "from the Vault Floor", seat))
    cops = state.cops + new_cops
    limit = d.busted_after(state.n)
    for seat in fleeing:
        players = _set(players, seat, status=FLED, flee=None, fled_round=state.round)
        outs.append(Output("flash", "fled", f"{players[seat].name} flees the vault", seat))
    if new_cops:
        outs.append(Output("flash", "cop", f"{new_cops} cop token{'s' * (new_cops > 1)} on the "
                           f"track: {min(cops, limit)} of {limit}"))
    # "Opens his empty fist and reveals that he has chosen to Flee, his participation in
    # Act II is over. If he has it, he should pass the First Player Marker to the left."
    # He passes it as the fists open, whatever the cops do: so also when this reveal
    # busts the vault (to the next player on his left who did not flee).
    new = replace(state, players=players, bag=tuple(bag), floor=floor, cops=cops)
    marker = state.marker
    if new.players[marker].status != IN_VAULT:
        marker = _left_in_vault(new, marker)
        new = replace(new, marker=marker)
        if new.players[marker].status == IN_VAULT:
            outs.append(Output("announce", "first_player", f"The First Player Marker passes to "
                               f"{new.players[marker].name}", marker))
    if cops >= limit:
        for seat in robbers:
            _return_to_bag(bag, players[seat].vault)
            players = _set(players, seat, status=BUSTED, vault=(), flee=None, drawn=None)
        new = replace(new, phase=GAME_OVER, players=players, bag=tuple(bag), queue=(),
                      busted=True)
        names = ", ".join(players[s].name for s in robbers) or "nobody"
        return new, outs + [Output("flash", "busted", f"BUSTED! Act II tokens lost: {names}. "
                                   "Act II is over")]
    queue = tuple(s for s in _clockwise_from(new, marker)
                  if s in robbers and new.players[s].drawn != "cop")
    new = replace(new, phase=TRADE, queue=queue)
    return _after_trade_step(new, outs)


def _after_trade_step(state: BigScoreState, outs: list[Output]
                      ) -> tuple[BigScoreState, list[Output]]:
    if state.queue:
        seat = state.queue[0]
        return state, outs + [Output("announce", "trade", f"{state.players[seat].name}: trade "
                                     "with the Vault Floor or pass", seat)]
    players = tuple(replace(p, flee=None, drawn=None) for p in state.players)
    new = replace(state, players=players)
    if not new.in_vault():
        return replace(new, phase=GAME_OVER), outs + [
            Output("flash", "over", "Everyone has fled: Act II is over")]
    new = replace(new, phase=CHOOSE, round=state.round + 1)
    outs.append(Output("announce", "choose", f"Round {new.round}: Rob or Flee?"))
    if new.cops == 0:
        outs.append(Output("announce", "advice", "No cops on the track: never flee now"))
    return new, outs


def _trader(state: BigScoreState, ev: Mapping[str, Any]) -> int:
    _phase(state, ev, TRADE)
    seat = base.whole(ev, "seat", 0, state.n - 1)
    if seat not in state.queue:
        raise Rejected(f"{ev['type']}: {player(state, seat)} may not trade this round")
    if seat != state.queue[0]:
        raise Rejected(f"{ev['type']}: it is {player(state, state.queue[0])}'s turn to trade "
                       "first")
    return seat


def _trade(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    seat = _trader(state, ev)
    p = state.players[seat]
    take = _token(ev, base.field(ev, "take"), "'take'")
    if take not in state.floor:
        raise Rejected(f"trade: there is no {take} on the Vault Floor")
    assert p.drawn is not None
    give = p.drawn
    used = False
    if "give" in ev:
        give = _token(ev, ev["give"], "'give'")
        if give != p.drawn:
            if p.expert != "con_man" or p.ability_used:
                raise Rejected(f"trade: only the token just drawn ({p.drawn}) may be traded "
                               "(a Con Man may trade an earlier one, once)")
            if give not in p.vault:
                raise Rejected(f"trade: {p.name} holds no {give}")
            used = True
    floor = _with(_without(state.floor, take), give)
    vault = _with(_without(p.vault, give), take)
    outs = [Output("announce", "trade", f"{p.name} trades {give} for {take}", seat)]
    if "steal" in ev:
        if p.expert != "gun_man" or p.ability_used or used:
            raise Rejected("trade: only a Gun Man steals from the Vault Floor, once a game")
        steal = _token(ev, ev["steal"], "'steal'")
        if steal not in floor:
            raise Rejected(f"trade: there is no {steal} on the Vault Floor to steal")
        floor = _without(floor, steal)
        vault = _with(vault, steal)
        used = True
        outs.append(Output("announce", "gun_man", f"{p.name}'s Gun Man steals {steal}", seat))
    players = _set(state.players, seat, vault=vault, ability_used=p.ability_used or used)
    new = replace(state, players=players, floor=floor, queue=state.queue[1:])
    if state.marker == seat:
        marker = _left_in_vault(new, seat)
        new = replace(new, marker=marker)
        outs.append(Output("announce", "first_player", f"The First Player Marker passes to "
                           f"{new.players[marker].name}", marker))
    return _after_trade_step(new, outs)


def _pass(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    seat = _trader(state, ev)
    new = replace(state, queue=state.queue[1:])
    return _after_trade_step(new, [Output("announce", "pass", f"{state.players[seat].name} "
                                          "keeps the token", seat)])


def _muscle(state: BigScoreState, ev: Mapping[str, Any]) -> tuple[BigScoreState, list[Output]]:
    _phase(state, ev, CHOOSE, TRADE)
    seat = base.whole(ev, "seat", 0, state.n - 1)
    p = state.players[seat]
    if p.expert != "muscle" or p.ability_used:
        raise Rejected(f"muscle: {player(state, seat)} has no unused Muscle ability")
    if p.status != IN_VAULT:
        raise Rejected(f"muscle: {player(state, seat)} is no longer in the vault")
    if state.marker == seat:
        raise Rejected(f"muscle: {player(state, seat)} already holds the First Player Marker")
    new = replace(state, marker=seat, players=_set(state.players, seat, ability_used=True))
    if state.phase == TRADE and seat in state.queue:
        # The trade order runs from the marker's new holder for the rest of the round.
        rest = [s for s in _clockwise_from(new, seat) if s in state.queue]
        new = replace(new, queue=tuple(rest))
    return new, [Output("announce", "muscle", f"{p.name}'s Muscle takes the First Player "
                        "Marker", seat)]


HANDLERS: dict[str, Handler] = {
    "new_game": _new_game,
    "choose": _choose,
    "close_choices": _close_choices,
    "reveal": _reveal,
    "trade": _trade,
    "pass": _pass,
    "muscle": _muscle,
}
EVENT_TYPES = frozenset(HANDLERS) | {"undo"} | base.NOTE_TYPES


def apply(state: BigScoreState, event: Any, undo_limit: int | None = None) -> Result:
    """Apply one event. Pure: the same state and event always give the same result.
    `undo_limit`: the undo steps kept (None: the whole game; see `base.run`)."""
    return base.run(state, event, HANDLERS, undo_limit)


def replay(events: list[Any], state: BigScoreState | None = None) -> BigScoreState:
    return base.replay(apply, state or new_state(), events)


# --------------------------------------------------------------------------- advice


def advice(state: BigScoreState) -> list[str]:
    """One-line hints for the table at the start of a choosing window."""
    if state.phase != CHOOSE:
        return []
    limit = d.busted_after(state.n)
    if state.cops == 0:
        return ["No cops on the track: nobody can be busted this round, never flee now"]
    left = limit - state.cops
    robbers = len(state.in_vault())
    tips = [f"{left} more cop{'s' * (left > 1)} and everyone still in the vault is busted"]
    in_bag = state.bag[d.TOKEN_KINDS.index("cop")]
    total = sum(state.bag)
    if total:
        tips.append(f"{in_bag} of the {total} tokens in the vault are cops")
    if left <= robbers and robbers > 0:
        tips.append("Enough of you could draw cops this round to bust the table")
    return tips


def tokens_accounted(state: BigScoreState) -> int:
    """Every Vault Token somewhere: bag, floor, players' Act II holdings, cop track."""
    return (sum(state.bag) + len(state.floor) + sum(len(p.vault) for p in state.players)
            + state.cops)
