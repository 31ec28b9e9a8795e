"""The Vault Assault referee as a pure reducer.

    apply(state, event) -> Result(state, rejection, outputs)

`event` is one decoded JSON object of the event vocabulary (see README.md). An event
the rules do not allow returns the *same* state object, a one-line `rejection` and
no outputs other than a flash the table may want to see (a false start). Outputs are
data describing what to show and announce; the engine never does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from companion.games import base
from companion.games.base import (
    NOTE_TYPES,
    Output,
    Rejected,
    Rejection,
    Result,
    replace,
    run,
)
from companion.games.claims import ADVISE, ANSWERS, CANT_SEE, CHALLENGE, CONFIRMED
from companion.games.vault_assault import definition as d
from companion.games.vault_assault.state import (
    ASSAULT,
    GAME_OVER,
    HEIST,
    HEIST_HIDE,
    HEIST_OVER,
    IMPOUND,
    NO_GAME,
    Challenge,
    GameState,
    Heist,
    Seat,
    Turn,
)

STAGE_NAMES = {
    1: "Fuel Up: yell a donut flavour!",
    2: "Dispatch: yell a street name!",
    3: 'Crime Scene: yell "Surrounded!"',
}


def new_state() -> GameState:
    return GameState()


_BLANK_TURN = Turn(cop=0)
_BLANK_HEIST = Heist(row=(), in_heist=frozenset(), flipped=())


def _turn(cop: int) -> Turn:
    """A fresh turn (a copy of a kept blank one: cheaper than Turn's frozen __init__)."""
    return replace(_BLANK_TURN, cop=cop)


# --------------------------------------------------------------------------- fields


def _short(value: Any) -> str:
    """A value from the event, shown in a reason: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(event: Mapping[str, Any], key: str) -> Any:
    if key not in event:
        raise Rejected(f"{event.get('type')}: missing field '{key}'", "missing_field")
    return event[key]


def _int(event: Mapping[str, Any], key: str, lo: int | None = None, hi: int | None = None) -> int:
    value = _field(event, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Rejected(f"{event['type']}: '{key}' must be a whole number, got {_short(value)}",
                       "bad_value")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        span = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise Rejected(f"{event['type']}: '{key}' must be {span}, got {value}", "bad_value")
    return value


def _seat(state: GameState, event: Mapping[str, Any], key: str = "seat") -> int:
    return _int(event, key, 0, state.nseats - 1)


def _name(state: GameState, seat: int) -> str:
    """A seat for people: its name and its number counted from 1 (the event format
    counts seats from 0: a contract)."""
    return f"{state.seats[seat].name} (seat {seat + 1})"


def _robber(state: GameState, event: Mapping[str, Any], key: str = "seat") -> int:
    seat = _seat(state, event, key)
    if seat == state.cop:
        raise Rejected(f"{event['type']}: {_name(state, seat)} is the cops this turn, "
                       "not a robber")
    return seat


def _active_robber(state: GameState, event: Mapping[str, Any], key: str = "seat") -> int:
    seat = _robber(state, event, key)
    assert state.turn is not None
    if seat in state.turn.escaped:
        raise Rejected(f"{event['type']}: {_name(state, seat)} has already escaped")
    return seat


def _phase(state: GameState, event: Mapping[str, Any], *allowed: str) -> None:
    if state.phase in allowed:
        return
    what = {
        NO_GAME: "no game has started (send new_game first)",
        HEIST_HIDE: "the cops have not hidden the diamond yet (heist_hide)",
        HEIST: "the diamond heist is still on",
        HEIST_OVER: "the race has not started (assault_start)",
        ASSAULT: "the race is on",
        IMPOUND: "the race is settled; waiting for impounds",
        GAME_OVER: "the game is over",
    }[state.phase]
    raise Rejected(f"{event['type']}: not allowed now: {what}", "wrong_phase")


def _set_seat(seats: tuple[Seat, ...], seat: int, **changes: Any) -> tuple[Seat, ...]:
    return (*seats[:seat], replace(seats[seat], **changes), *seats[seat + 1 :])


def setup_of(state: GameState) -> d.Setup:
    return d.SETUPS[state.players]


def total_turns(state: GameState) -> int:
    return setup_of(state).rounds * state.nseats if state.players else 0


def current_round(state: GameState) -> int:
    """The round of the turn being played; once the game is over, of the last turn."""
    if not state.players:
        return 0
    turn_index = state.turns_played - 1 if state.phase == GAME_OVER else state.turns_played
    return min(max(turn_index, 0) // state.nseats + 1, setup_of(state).rounds)


def cop_seat(state: GameState) -> int | None:
    """The cops' seat this turn; once the game is over, in the last turn."""
    if not state.nseats:
        return None
    turn_index = state.turns_played - 1 if state.phase == GAME_OVER else state.turns_played
    return (state.first_cop + max(turn_index, 0)) % state.nseats


# --------------------------------------------------------------------------- handlers

Handler = Callable[[GameState, Mapping[str, Any]], tuple[GameState, list[Output]]]


def _new_game(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    if state.phase != NO_GAME:
        raise Rejected("new_game: a game is already under way in this log (start a new log)")
    game = _field(ev, "game")
    if game != d.GAME_ID:
        raise Rejected(f"new_game: unknown game {_short(game)} (this referee plays {d.GAME_ID!r})")
    players = _int(ev, "players", 2, 4)
    setup = d.SETUPS[players]
    names = _field(ev, "names")
    if (
        not isinstance(names, list)
        or len(names) != setup.seats
        or not all(isinstance(n, str) and n.strip() for n in names)
    ):
        raise Rejected(
            f"new_game: 'names' must list {setup.seats} non-empty names for {players} players"
            f"{' (2 teams)' if players == 4 else ''}, got {_short(names)}"
        )
    first_cop = _int({**ev, "first_cop": ev.get("first_cop", 0)}, "first_cop", 0, setup.seats - 1)
    seats = tuple(Seat(name=n.strip(), cars=d.CARS_PER_SEAT) for n in names)
    new = GameState(
        phase=HEIST_HIDE,
        players=players,
        seats=seats,
        first_cop=first_cop,
        turn=_turn(first_cop),
        diamonds_in_box=d.DIAMONDS_IN_BOX,
    )
    return new, [
        Output("announce", "new_game", f"New game of Vault Assault, {players} players"),
        Output("announce", "cops", f"{_name(new, first_cop)} are the cops: hide the diamond"),
    ]


def _heist_hide(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, HEIST_HIDE)
    row = _field(ev, "row")
    want = setup_of(state).row_dice
    if not isinstance(row, list) or not all(isinstance(f, str) for f in row):
        raise Rejected("heist_hide: 'row' must be a list of faces")
    got = {f: row.count(f) for f in set(row)}
    if got != want:
        spec = ", ".join(f"{n} {f}" for f, n in want.items())
        raise Rejected(
            f"heist_hide: the row must hold {sum(want.values())} dice ({spec}), got {_short(row)}"
        )
    assert state.turn is not None
    robbers = state.robbers()
    heist = replace(
        _BLANK_HEIST,
        row=tuple(row),
        in_heist=frozenset(robbers),
        flipped=tuple((s, frozenset()) for s in robbers),
    )
    turn = replace(state.turn, heist=heist)
    return replace(state, phase=HEIST, turn=turn), [
        Output("announce", "heist", "Diamond Heist: robbers, cut a wire (flip a die) or stop"),
    ]


def _heist_attempt(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, HEIST)
    assert state.turn is not None and state.turn.heist is not None
    heist = state.turn.heist
    by_seat = _heist_flips(state, heist, ev)
    return _evaluate(state, {**_pending_flips(heist), **by_seat})


def _heist_flip(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    """One robber's flip (or stop) for this attempt, from their own phone: kept secret
    until every robber still in has chosen, then the attempt is evaluated as a
    `heist_attempt` of them all."""
    _phase(state, ev, HEIST)
    assert state.turn is not None and state.turn.heist is not None
    heist = state.turn.heist
    seat, flip = _checked_flip(state, heist, {"type": "heist_flip", **ev})
    if seat in heist.chosen():
        raise Rejected(f"heist_flip: {_name(state, seat)} has already chosen this attempt "
                       "(undo takes it back)")
    chosen = {**_pending_flips(heist), seat: flip}
    if heist.in_heist <= chosen.keys():
        return _evaluate(state, chosen)
    pending = tuple(sorted((s, f.get("position")) for s, f in chosen.items()))
    turn = replace(state.turn, heist=replace(heist, pending=pending))
    waiting = ", ".join(_name(state, s) for s in sorted(heist.in_heist - chosen.keys()))
    return replace(state, turn=turn), [
        Output("announce", "chosen", f"{_name(state, seat)} has chosen; waiting for {waiting}",
               seat)
    ]


def _pending_flips(heist: Heist) -> dict[int, dict[str, Any]]:
    """The flips chosen one by one so far (`heist_flip`), as a heist_attempt's."""
    return {s: {"stop": True} if p is None else {"position": p} for s, p in heist.pending}


def _evaluate(state: GameState, by_seat: Mapping[int, Mapping[str, Any]]
              ) -> tuple[GameState, list[Output]]:
    """One attempt of checked flips, one from every robber still in the heist."""
    attempt = _HeistAttempt(state)
    for seat in state.robbers():  # clockwise from the cops' left
        if seat in by_seat and attempt.flip(seat, by_seat[seat]):
            break  # the diamond ends the heist at once; later flips are not evaluated
    return attempt.finish()


def _checked_flip(
    state: GameState, heist: Heist, flip: Mapping[str, Any]
) -> tuple[int, dict[str, Any]]:
    """One flip of a robber still in the heist, checked: (seat, {"position": p} or
    {"stop": True}), a position that seat has not flipped yet. In a 3-player game the
    reasons never say which position (robbers hide their dice from each other)."""
    kind = flip["type"]
    seat = _seat(state, flip)
    who = _name(state, seat)
    if seat not in heist.in_heist:
        raise Rejected(f"{kind}: {who} is not in the heist")
    if flip.get("stop") is True:
        if "position" in flip:
            raise Rejected(f"{kind}: {who} both stops and flips")
        return seat, {"stop": True}
    pos = _int(flip, "position", 0, len(heist.row) - 1)
    if pos in heist.flipped_by(seat):
        which = "that die" if setup_of(state).secret_flips else f"position {pos + 1}"
        raise Rejected(f"{kind}: {who} already flipped {which}")
    return seat, {"position": pos}


def _heist_flips(
    state: GameState, heist: Heist, ev: Mapping[str, Any]
) -> dict[int, dict[str, Any]]:
    """The attempt's flips by seat, checked: one flip or stop from every robber still in
    the heist who has not chosen yet on their phone (`heist_flip`), each at a position
    that seat has not flipped yet."""
    flips = _field(ev, "flips")
    if not isinstance(flips, list) or not all(isinstance(f, dict) for f in flips):
        raise Rejected("heist_attempt: 'flips' must be a list of {seat, position|stop} objects")
    by_seat: dict[int, dict[str, Any]] = {}
    chosen = heist.chosen()
    for flip in flips:
        seat, checked = _checked_flip(state, heist, {**flip, "type": "heist_attempt"})
        if seat in by_seat:
            raise Rejected(f"heist_attempt: {_name(state, seat)} flips twice in one attempt")
        if seat in chosen:
            raise Rejected(f"heist_attempt: {_name(state, seat)} has already chosen this "
                           "attempt on their phone")
        by_seat[seat] = checked
    missing = heist.in_heist - by_seat.keys() - chosen
    if missing:
        raise Rejected(
            "heist_attempt: every robber still in the heist must flip or stop; missing "
            + ", ".join(_name(state, s) for s in sorted(missing))
        )
    return by_seat


class _HeistAttempt:
    """One heist attempt being evaluated, flip by flip, in seat order (checked flips)."""

    def __init__(self, state: GameState) -> None:
        assert state.turn is not None and state.turn.heist is not None
        self.state = state
        self.heist = state.turn.heist
        self.outputs: list[Output] = []
        self.in_heist = set(self.heist.in_heist)
        self.flipped = dict(self.heist.flipped)
        self.seats = state.seats
        self.box = state.diamonds_in_box
        self.hostages = set(state.turn.hostages)
        self.trapped = set(self.heist.trapped)
        self.diamond_to: int | None = None
        self.alarm = False

    def flip(self, seat: int, flip: Mapping[str, Any]) -> bool:
        """Evaluate one seat's flip or stop; True when it ends the heist (the diamond)."""
        name = _name(self.state, seat)
        if flip.get("stop") is True:
            self.in_heist.discard(seat)
            self.outputs.append(Output("announce", "stop", f"{name} stops", seat))
            return False
        pos = flip["position"]
        self.flipped[seat] = self.flipped[seat] | {pos}
        face = self.heist.row[pos]
        if face == "diamond":
            self._diamond(seat)
            return True
        if face == "dye_pack":
            self._trap(seat)
        else:
            self.alarm = True
            self.outputs.append(Output("announce", "alarm", f"{name} tripped an alarm", seat))
        return False

    def _diamond(self, seat: int) -> None:
        name = _name(self.state, seat)
        self.diamond_to = seat
        if self.box > 0:
            self.box -= 1
            self.seats = _set_seat(self.seats, seat, diamonds=self.seats[seat].diamonds + 1)
            text = f"{name} found the diamond and takes a Diamond tile!"
        else:
            text = f"{name} found the diamond, but the box has no tiles left"
        self.outputs.append(Output("flash", "diamond", text, seat))
        self.in_heist.clear()

    def _trap(self, seat: int) -> None:
        self.in_heist.discard(seat)
        self.hostages.add(seat)
        self.trapped.add(seat)
        self.outputs.append(
            Output(
                "flash",
                "trap",
                f"{_name(self.state, seat)} hit the trap: that die is a Hostage",
                seat,
            )
        )

    def _preset(self) -> int:
        """The cops' preset pieces after this attempt: one more on an alarm (capped)."""
        assert self.state.turn is not None
        preset = self.state.turn.preset
        if self.alarm and preset < d.MAX_PRESET_PIECES:
            preset += 1
            self.outputs.append(
                Output("flash", "alarm", f"Alarm! The cops start with {preset} piece(s) preset")
            )
        return preset

    def finish(self) -> tuple[GameState, list[Output]]:
        """The state after the attempt, and its outputs."""
        state = self.state
        assert state.turn is not None
        preset = self._preset()
        new_heist = replace(
            self.heist,
            in_heist=frozenset(self.in_heist),
            flipped=tuple(sorted((s, frozenset(p)) for s, p in self.flipped.items())),
            attempts=self.heist.attempts + 1,
            diamond_to=self.diamond_to,
            trapped=frozenset(self.trapped),
            pending=(),
        )
        turn = replace(
            state.turn, heist=new_heist, preset=preset, hostages=frozenset(self.hostages)
        )
        phase = HEIST if self.in_heist else HEIST_OVER
        if phase == HEIST_OVER:
            self.outputs.append(
                Output(
                    "announce",
                    "heist_over",
                    "The heist is over: cops, show your dice. Ready for the race",
                )
            )
        new = replace(state, phase=phase, turn=turn, seats=self.seats, diamonds_in_box=self.box)
        return new, self.outputs


def _assault_start(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, HEIST_OVER)
    assert state.turn is not None
    clock = ev.get("clock")
    turn = replace(
        state.turn, go_ns=ev.get("ts_ns"), go_clock=clock if isinstance(clock, str) else None
    )
    # A challenge of the last race is answered by now, or never: the new race drops it.
    return replace(state, phase=ASSAULT, turn=turn, challenges=()), [
        Output("flash", "go", "Go!")]


def _stage(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    stage = _int(ev, "stage", 1, d.STAGES_BEFORE_ARREST)
    if state.bank_empty:
        raise Rejected("stage: the bank is empty: remaining stages are skipped, claim the Arrest",
                       "bank_empty")
    if stage != state.turn.stages + 1:
        raise Rejected(
            f"stage: stages go in order; next is stage {state.turn.stages + 1}, got {stage}",
            "stage_out_of_order",
        )
    turn = replace(state.turn, stages=stage)
    return replace(state, turn=turn), [
        Output("flash", "stage", f"Stage {stage}: {STAGE_NAMES[stage]}")
    ]


def _dye_pack(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    if state.turn.bang_since_stage:
        raise Rejected("dye_pack: only one Bang! before each stage; claim the next stage first",
                       "one_bang_per_stage")
    targets = _field(ev, "targets")
    if not isinstance(targets, list) or not 1 <= len(targets) <= d.TILES_PER_DYE_PACK:
        raise Rejected(
            f"dye_pack: 'targets' must list 1 to {d.TILES_PER_DYE_PACK} seats, one per tile taken"
        )
    seats = state.seats
    for t in targets:
        seat = _active_robber(state, {"type": "dye_pack", "seat": t})
        seats = _set_seat(seats, seat, tiles_lost=seats[seat].tiles_lost + 1)
    turn = replace(state.turn, bang_intervals=state.turn.bang_intervals | {state.turn.stages})
    who = ", ".join(_name(state, t) for t in targets)
    return replace(state, turn=turn, seats=seats), [
        Output("flash", "bang", f"Bang! Tiles from {who}")
    ]


def _hostage(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    seat = _active_robber(state, ev)
    if seat in state.turn.hostages:
        raise Rejected(f"hostage: {_name(state, seat)} already has a hostage set aside")
    turn = replace(state.turn, hostages=state.turn.hostages | {seat})
    return replace(state, turn=turn), [
        Output("flash", "hostage", f"Hostage! by {_name(state, seat)}: cops reroll all dice", seat)
    ]


def _backup(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    seat = _active_robber(state, ev)
    if seat not in state.turn.hostages:
        raise Rejected(f"backup: {_name(state, seat)} has no hostage set aside")
    turn = replace(state.turn, hostages=state.turn.hostages - {seat})
    return replace(state, turn=turn), [
        Output("announce", "backup", f"Backup! {_name(state, seat)} takes the hostage back", seat)
    ]


def _loot(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    seat = _active_robber(state, ev)
    if state.bank_empty:
        raise Rejected("loot: the bank is empty")
    seats = _set_seat(state.seats, seat, loots=state.seats[seat].loots + 1)
    return replace(state, seats=seats), [
        Output("announce", "loot", f"{_name(state, seat)} loots 2 tiles", seat)
    ]


def _steal(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    seat = _active_robber(state, ev)
    victim = _seat(state, ev, "from")
    if victim == seat:
        raise Rejected("steal: a seat cannot steal from itself")
    seats = _set_seat(state.seats, seat, steals=state.seats[seat].steals + 1)
    seats = _set_seat(seats, victim, stolen_from=seats[victim].stolen_from + 1)
    return replace(state, seats=seats), [
        Output(
            "announce", "steal", f"{_name(state, seat)} steals from {_name(state, victim)}", seat
        )
    ]


def _empty(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    if state.bank_empty:
        raise Rejected("empty: the bank is already empty")
    turn = replace(state.turn, empty=True)
    return replace(state, bank_empty=True, turn=turn), [
        Output(
            "flash",
            "empty",
            "Empty! Everyone rolls to Escape or Arrest; the game ends with this turn",
        )
    ]


def _buzz(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _buzz_outside_race(state, ev)
    _phase(state, ev, ASSAULT)
    assert state.turn is not None
    turn = state.turn
    seat = _seat(state, ev)
    _buzz_after_go(state, turn, seat, ev)
    if seat == turn.cop:
        return _arrest(state, turn, seat)
    return _escape(state, turn, seat)


def _buzz_outside_race(state: GameState, ev: Mapping[str, Any]) -> None:
    """Reject a press outside the race: one that lost a photo finish which already
    settled it (too late), or one before Go! (a false start)."""
    after = ev.get("after")
    if isinstance(after, dict) and state.phase != ASSAULT:
        # A press that lost a photo finish which already settled the race.
        seat = _seat(state, ev)
        raise Rejected(
            f"buzz: too late: {_name(state, seat)} pressed {after.get('by_ns')} ns after "
            f"{_settler(state, after.get('seat'))}, whose press settled the race",
            "too_late",
        )
    if state.phase in (HEIST_HIDE, HEIST, HEIST_OVER):
        seat = _seat(state, ev)
        raise Rejected(f"buzz: false start: {_name(state, seat)} pressed before Go!",
                       "false_start")


def _settler(state: GameState, seat: Any) -> str:
    """The seat whose press settled a race, for people (the event's own value when it
    is not a seat of this game)."""
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < state.nseats:
        return _name(state, seat)
    return f"seat {seat!r}"


def _clock_changed(state: GameState, ev: Mapping[str, Any]) -> GameState:
    """A `clock` note: the stamps after it are of the note's epoch. A race on since a Go!
    of another epoch (another boot, or unknown: an old log's live stamps carry no
    `clock`, like a script's own) goes on as after a reboot: Go!'s stamp is let go, so
    no later press, of any epoch, is compared with it. Anything else: unchanged."""
    turn = state.turn
    if state.phase != ASSAULT or turn is None or turn.go_ns is None:
        return state
    clock = ev.get("clock")
    if isinstance(clock, str) and clock == turn.go_clock:
        return state  # the same epoch as Go!: its stamps still compare
    return replace(state, turn=replace(turn, go_ns=None, go_clock=None))


def _buzz_after_go(state: GameState, turn: Turn, seat: int, ev: Mapping[str, Any]) -> None:
    """Reject a press stamped before Go! but delivered after it: the edge's time decides."""
    ts = ev.get("ts_ns")
    clock = ev.get("clock")
    same_clock = (clock if isinstance(clock, str) else None) == turn.go_clock
    # A press stamped on another clock (the box rebooted since Go!) came after the
    # resume, so after Go!: only stamps of one epoch are compared.
    if turn.go_ns is not None and isinstance(ts, int) and same_clock and ts < turn.go_ns:
        # Stamped before Go! but delivered after it: the edge's time decides.
        raise Rejected(
            f"buzz: false start: {_name(state, seat)} pressed "
            f"{(turn.go_ns - ts) / 1e6:.3f} ms before Go!",
            "false_start",
        )


def _arrest(state: GameState, turn: Turn, seat: int) -> tuple[GameState, list[Output]]:
    """The cops' press: Arrested! Every robber not yet escaped is caught."""
    if turn.stages < d.STAGES_BEFORE_ARREST and not state.bank_empty:
        raise Rejected(
            f"buzz: Arrested! needs stages 1-{d.STAGES_BEFORE_ARREST} complete "
            f"(only {turn.stages} claimed)",
            "arrest_too_early",
        )
    caught = frozenset(s for s in state.robbers() if s not in turn.escaped)
    seats = state.seats
    for s in caught:
        seats = _set_seat(seats, s, arrested=seats[s].arrested + 1)
    # A seat with no getaway car left has nothing to impound: it is skipped, not asked.
    due = frozenset(s for s in caught if seats[s].cars > 0)
    turn = replace(turn, arrest_called=True, arrested=caught, impounds_due=due)
    names = ", ".join(_name(state, s) for s in sorted(caught)) or "nobody"
    out = [Output("flash", "arrested", f"Arrested! {names}", seat)]
    for s in sorted(caught - due):
        out.append(Output("announce", "no_car",
                          f"{_name(state, s)} has no getaway car left: nothing to impound", s))
    new = replace(state, seats=seats, turn=turn, phase=IMPOUND)
    if not due:
        return _end_turn(new, out)
    out.append(
        Output("announce", "impound", "Cops: choose a getaway car to impound from "
               + ", ".join(_name(state, s) for s in sorted(due)))
    )
    return new, out


def _escape(state: GameState, turn: Turn, seat: int) -> tuple[GameState, list[Output]]:
    """A robber's press: Escaped! The turn ends when every robber is out."""
    if seat in turn.escaped:
        raise Rejected(f"buzz: {_name(state, seat)} has already escaped")
    setup = setup_of(state)
    if seat in turn.hostages and setup.robber_dice - 1 < setup.escape_needs:
        raise Rejected(
            f"buzz: {_name(state, seat)} has a hostage die set aside: "
            f"{setup.robber_dice - 1} dice cannot show {setup.escape_needs} Escapes (Backup first)",
            "hostage_set_aside",
        )
    seats = _set_seat(state.seats, seat, escaped=state.seats[seat].escaped + 1)
    turn = replace(turn, escaped=(*turn.escaped, seat))
    new = replace(state, seats=seats, turn=turn)
    out = [Output("flash", "escaped", f"Escaped! {_name(state, seat)}", seat)]
    if all(s in turn.escaped for s in state.robbers()):
        return _end_turn(new, out)
    return new, out


def _impound(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, IMPOUND)
    assert state.turn is not None
    seat = _seat(state, ev)
    if seat not in state.turn.impounds_due:
        raise Rejected(f"impound: {_name(state, seat)} has no car due for impound")
    car = _int(ev, "car", 0, d.CARS_PER_SEAT - 1)
    s = state.seats[seat]
    if car in s.impounded:  # (a seat with no car left is never due: `_arrest`)
        raise Rejected(f"impound: car {car + 1} of {_name(state, seat)} is already impounded")
    seats = _set_seat(state.seats, seat, cars=s.cars - 1, impounded=(*s.impounded, car))
    text = f"{_name(state, seat)} loses getaway car {car + 1}"
    turn = replace(state.turn, impounds_due=state.turn.impounds_due - {seat})
    new = replace(state, seats=seats, turn=turn)
    out = [Output("announce", "impound", text, seat)]
    if turn.impounds_due:
        return new, out
    return _end_turn(new, out)


def _end_turn(state: GameState, out: list[Output]) -> tuple[GameState, list[Output]]:
    played = state.turns_played + 1
    new = replace(state, turns_played=played)
    if played >= total_turns(state) or state.bank_empty:
        out.append(
            Output(
                "announce",
                "game_over",
                "Game over: tally each seat's cash (tally) to find the winners",
            )
        )
        return replace(new, phase=GAME_OVER, turn=None), out
    cop = (state.first_cop + played) % state.nseats
    new = replace(new, phase=HEIST_HIDE, turn=_turn(cop))
    if played % state.nseats == 0:
        out.append(Output("announce", "round", f"Round {current_round(new)} begins"))
    out.append(
        Output(
            "announce",
            "cops",
            f"Dice pass clockwise: {_name(new, cop)} are the cops: hide the diamond",
        )
    )
    return new, out


def _tally(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, GAME_OVER)
    seat = _seat(state, ev)
    cash = _int(ev, "cash", 0)
    if state.seats[seat].cash is not None:
        raise Rejected(f"tally: {_name(state, seat)} is already tallied (undo to correct it)")
    new = replace(state, seats=_set_seat(state.seats, seat, cash=cash))
    out = [Output("announce", "tally", f"{_name(state, seat)} tallies ${cash:,}", seat)]
    winners = winners_of(new)
    if winners:
        names = " and ".join(_name(new, w) for w in winners)
        out.append(Output("announce", "winners", f"Winner: {names}"))
    return new, out


def _sticky_fingers(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    _phase(state, ev, GAME_OVER)
    if state.sticky_fingers_used:
        raise Rejected("sticky_fingers: already used this game (there is one pair of tiles)")
    seat = _seat(state, ev)
    victim = _field(ev, "from")
    seats = state.seats
    box = state.diamonds_in_box
    if victim is None:
        if box <= 0:
            raise Rejected("sticky_fingers: the box has no Diamond tile left")
        box -= 1
        source = "the box"
    else:
        victim = _seat(state, ev, "from")
        if victim == seat:
            raise Rejected("sticky_fingers: a seat cannot steal from itself")
        if seats[victim].diamonds <= 0:
            raise Rejected(f"sticky_fingers: {_name(state, victim)} has no Diamond tile")
        seats = _set_seat(state.seats, victim, diamonds=seats[victim].diamonds - 1)
        source = _name(state, victim)
    seats = _set_seat(seats, seat, diamonds=seats[seat].diamonds + 1)
    new = replace(state, seats=seats, diamonds_in_box=box, sticky_fingers_used=True)
    return new, [
        Output(
            "announce",
            "sticky_fingers",
            f"Sticky fingers: {_name(state, seat)} steals a Diamond from {source}",
            seat,
        )
    ]


# --------------------------------------------------------------------------- claims

CLAIMS = ("escape", "stage", "arrest")
MAX_CHECK_TEXT = 120


def _claimed(state: GameState, ev: Mapping[str, Any]) -> tuple[str, str]:
    """What a claim_check is about, for people: ("Ann's", "Escape")."""
    claim = ev["claim"]
    seat = ev.get("seat")
    who = f"{state.seats[seat].name}'s" if isinstance(seat, int) \
        and 0 <= seat < state.nseats else "the"
    what = {"escape": "Escape", "arrest": "Arrest"}.get(claim, f"stage {ev.get('stage')}")
    return who, what


def _check_fields(state: GameState, ev: Mapping[str, Any]) -> None:
    if state.phase == NO_GAME:
        raise Rejected("claim_check: no game under way")
    if ev.get("claim") not in CLAIMS:
        raise Rejected(f"claim_check: 'claim' must be one of {', '.join(CLAIMS)}, got "
                       f"{_short(ev.get('claim'))}", "bad_value")
    if ev.get("answer") not in ANSWERS:
        raise Rejected(f"claim_check: 'answer' must be one of {', '.join(ANSWERS)}, got "
                       f"{_short(ev.get('answer'))}", "bad_value")
    if ev.get("mode", ADVISE) not in (ADVISE, CHALLENGE):
        raise Rejected(f"claim_check: 'mode' must be {ADVISE!r} or {CHALLENGE!r}, got "
                       f"{_short(ev.get('mode'))}", "bad_value")
    _int(ev, "event", 1, state.events_applied)
    _int(ev, "seen", 0, 99)
    _int(ev, "needs", 0, 99)
    if "seat" in ev:
        _seat(state, ev)
    if "stage" in ev:
        _int(ev, "stage", 1, d.STAGES_BEFORE_ARREST + 1)
    text = _field(ev, "text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHECK_TEXT \
            or not text.isprintable():
        raise Rejected(f"claim_check: 'text' must be one printable line of 1-{MAX_CHECK_TEXT} "
                       "characters", "bad_value")


def _around(state: GameState, number: int) -> tuple[GameState | None, GameState | None]:
    """The states before and after event `number`, while the undo chain holds them."""
    s: GameState | None = state
    while s is not None and s.events_applied > number:
        s = s.prev
    if s is None or s.events_applied != number:
        return None, None
    return s.prev, s


def _claim_check(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    """The camera's answer to a claim (an aside: not a move, not counted, not undone on
    its own). A challenged claim in "challenge" mode waits for the table's answer."""
    _check_fields(state, ev)
    who, what = _claimed(state, ev)
    answer, text = ev["answer"], ev["text"].strip()
    if answer == CONFIRMED:
        return state, [Output("announce", "claim_confirmed",
                              f"Camera confirms {who} {what}: {text}")]
    if answer == CANT_SEE:
        return state, [Output("announce", "claim_unseen",
                              f"Camera can't check {who} {what} ({text}): it stands")]
    flash = f"check:{ev['seen']}/{ev['needs']}"  # the LED: "CHK 4/5"
    if ev.get("mode", ADVISE) != CHALLENGE:
        return state, [Output("flash", flash, f"CHECK {who} {what}: {text}", ev.get("seat"))]
    number = ev["event"]
    if any(c.event == number for c in state.challenges):
        raise Rejected(f"claim_check: event {number} is already challenged")
    before, after = _around(state, number)
    seat = ev.get("seat")
    challenge = Challenge(number, ev["claim"], seat, ev.get("stage"), text, before, after)
    new = replace(state, challenges=(*state.challenges, challenge))
    return new, [Output("flash", flash, f"CHECK {who} {what}: {text}. "
                        "Uphold the challenge or play on", seat)]


def _challenge_of(state: GameState, ev: Mapping[str, Any]) -> Challenge:
    kind = ev["type"]
    if not state.challenges:
        raise Rejected(f"{kind}: no challenge is open", "no_challenge")
    if "event" not in ev:
        return state.challenges[-1]
    number = _int(ev, "event", 1)
    for c in state.challenges:
        if c.event == number:
            return c
    raise Rejected(f"{kind}: no open challenge of event {number}", "no_challenge")


def _position(state: GameState) -> GameState:
    """The game's position, for comparing: without the bookkeeping and the challenges."""
    return replace(state, events_applied=0, challenges=())


def _undo_claim(state: GameState, c: Challenge) -> GameState:
    """The state with challenge `c`'s verdict taken back. An Escape or a stage while
    its race goes on is taken back alone (whatever else happened since stands); a
    claim that changed more (the last Escape ended the turn, an Arrest) is taken back
    by going back to before it, only while nothing else has happened since."""
    turn = state.turn
    same_race = (state.phase == ASSAULT and turn is not None and c.before is not None
                 and c.before.turns_played == state.turns_played)
    if same_race and turn is not None and c.claim == "escape" and c.seat in turn.escaped:
        seat = c.seat
        assert seat is not None
        seats = _set_seat(state.seats, seat, escaped=state.seats[seat].escaped - 1)
        return replace(state, seats=seats,
                       turn=replace(turn, escaped=tuple(s for s in turn.escaped if s != seat)))
    if same_race and turn is not None and c.claim == "stage" and turn.stages == c.stage:
        stage = c.stage
        assert stage is not None
        bangs = turn.bang_intervals
        if stage in bangs:  # a Bang! since the stage counts before it
            bangs = (bangs - {stage}) | {stage - 1}
        return replace(state, turn=replace(turn, stages=stage - 1, bang_intervals=bangs))
    if c.before is None or c.after is None:
        raise Rejected(f"challenge_upheld: event {c.event} is too far back to take back here; "
                       "undo by hand", "too_late")
    if _position(state) != _position(c.after):
        raise Rejected(f"challenge_upheld: play went on since event {c.event}; undo by hand",
                       "too_late")
    return replace(c.before, challenges=())


def _challenge_upheld(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    c = _challenge_of(state, ev)
    new = _undo_claim(state, c)
    left = tuple(x for x in state.challenges if x is not c)
    who, what = _claimed(state, {"claim": c.claim, "seat": c.seat, "stage": c.stage})
    new = replace(new, challenges=left)
    return new, [Output("flash", "upheld", f"Challenge upheld: {who} {what} is taken back",
                        c.seat)]


def _play_on(state: GameState, ev: Mapping[str, Any]) -> tuple[GameState, list[Output]]:
    c = _challenge_of(state, ev)
    who, what = _claimed(state, {"claim": c.claim, "seat": c.seat, "stage": c.stage})
    new = replace(state, challenges=tuple(x for x in state.challenges if x is not c))
    return new, [Output("announce", "play_on", f"Play on: {who} {what} stands")]



HANDLERS: dict[str, Handler] = {
    "new_game": _new_game,
    "heist_hide": _heist_hide,
    "heist_attempt": _heist_attempt,
    "heist_flip": _heist_flip,
    "assault_start": _assault_start,
    "stage": _stage,
    "dye_pack": _dye_pack,
    "hostage": _hostage,
    "backup": _backup,
    "loot": _loot,
    "steal": _steal,
    "empty": _empty,
    "buzz": _buzz,
    "impound": _impound,
    "tally": _tally,
    "sticky_fingers": _sticky_fingers,
    "challenge_upheld": _challenge_upheld,
    "play_on": _play_on,
}
# Not moves: the camera's answers to claims (`base.run`'s asides).
ASIDES: dict[str, Handler] = {"claim_check": _claim_check}

EVENT_TYPES = frozenset(HANDLERS) | frozenset(ASIDES) | {"undo"} | NOTE_TYPES


# --------------------------------------------------------------------------- scoring


def total_of(state: GameState, seat: int) -> int | None:
    s = state.seats[seat]
    if s.cash is None:
        return None
    return s.cash + s.diamonds * d.DIAMOND_VALUE


def winners_of(state: GameState) -> tuple[int, ...]:
    """Seats with the most valuable loot (ties shared), once the game is over and every
    seat is tallied; empty before that."""
    if state.phase != GAME_OVER:
        return ()
    totals = [total_of(state, i) for i in range(state.nseats)]
    if any(t is None for t in totals):
        return ()
    best = max(t for t in totals if t is not None)
    return tuple(i for i, t in enumerate(totals) if t == best)


# --------------------------------------------------------------------------- apply


def _note(state: GameState, ev: Mapping[str, Any]) -> GameState:
    """A note changes nothing but a `clock` note's race (`_clock_changed`)."""
    return _clock_changed(state, ev) if ev["type"] == "clock" else state


def _false_start_flash(rejection: Rejection) -> tuple[Output, ...]:
    """A refused press before Go! is flashed: the table must see a false start."""
    if rejection.code == "false_start":
        return (Output("flash", "false_start", rejection),)
    return ()


def apply(state: GameState, event: Any, undo_limit: int | None = None) -> Result:
    """Apply one event (`companion.games.base.run`). Pure: the same state and event
    always give the same result.

    `undo_limit`: how many undo steps the new state keeps (None: the whole game). The
    chain is trimmed when it grows past twice the limit, so the cost is O(1) an event
    on average and between `undo_limit` and twice that many steps are kept."""
    return run(state, event, HANDLERS, undo_limit, note=_note, refused=_false_start_flash,
               asides=ASIDES)


def replay(events: list[Any], state: GameState | None = None) -> GameState:
    """Apply every event, raising ValueError on the first rejection."""
    return base.replay(apply, state or new_state(), events)
