"""What the box says out loud at a Vault Assault table: a pure function from what the
referee did (the event and its Result) to a few short phrases (`Game.callouts`).

Only what the table must hear is spoken: the shouts of the game (Go!, Bang!, each stage
with its yell, Hostage!, Backup!, Empty!, Escaped!, Arrested!), the verdict of a photo
finish with its margin in words, false starts and the rejections a player at the table
would otherwise miss (a press too late, an Arrest before stage 3, an escape with a
hostage set aside), whose turn it is to be the cops, and the winner. Typos and other
rejections of typed input stay on the screen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.games.base import Result, rejection_code
from companion.games.vault_assault.engine import total_of, winners_of
from companion.games.vault_assault.state import GameState
from companion.speech.numbers import margin_words, number_words
from companion.speech.phrases import SEAT_TAG

STAGE_YELLS = {
    1: "Stage one. Fuel up! Yell a donut flavour!",
    2: "Stage two. Dispatch! Yell a street name!",
    3: "Stage three. Crime scene! Yell surrounded!",
}

def _name(state: GameState, seat: Any) -> str:
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < state.nseats:
        return state.seats[seat].name
    return "someone"


def _names(state: GameState, seats: Any) -> str:
    if not isinstance(seats, list | tuple):
        return ""
    names: list[str] = []
    for s in seats:
        name = _name(state, s)
        if name not in names:
            names.append(name)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _money(n: int) -> str:
    return number_words(n) + " dollars"


def photo_finish_phrase(state: GameState, event: Mapping[str, Any]) -> str | None:
    """ "Photo finish! Ann, by four tenths of a millisecond." for a verdict's first press."""
    finish = event.get("photo_finish")
    if not isinstance(finish, dict):
        return None
    margin = finish.get("margin_ns")
    seats = finish.get("seats") or []
    ties = finish.get("ties") or []
    if not isinstance(margin, int) or isinstance(margin, bool):
        return "Photo finish!"
    if ties and len(seats) > 1 and set(seats[:2]) <= set(ties[0]):
        return "Photo finish! A tie, decided by the tie rule."
    return f"Photo finish! {_name(state, event.get('seat'))}, by {margin_words(margin)}."


def rejection_phrase(state: GameState, event: Mapping[str, Any], reason: str) -> str | None:
    """The rejections worth hearing: those of a button press, and stages out of order,
    chosen by the rejection's code (companion.games.base.Rejection), never its text."""
    kind = event.get("type")
    code = rejection_code(reason)
    who = _name(state, event.get("seat"))
    if kind == "buzz":
        return {
            "false_start": f"False start! {who}.",
            "too_late": f"Too late, {who}.",
            "arrest_too_early": "Not yet! The cops need all three stages before the arrest.",
            "hostage_set_aside": f"{who}, you have a hostage set aside. Backup first!",
        }.get(code or "")
    if kind == "stage" and code == "stage_out_of_order" and state.turn is not None:
        return f"Stage {number_words(state.turn.stages + 1)} comes next."
    if kind == "stage" and code == "bank_empty":
        return "The bank is empty. No more stages: go for the arrest!"
    if kind == "dye_pack" and code == "one_bang_per_stage":
        return "Only one bang before each stage."
    return None


def winners_phrase(state: GameState) -> str | None:
    winners = winners_of(state)
    if not winners:
        return None
    total = total_of(state, winners[0]) or 0
    if len(winners) == 1:
        return f"The winner is {_name(state, winners[0])}, with {_money(total)}!"
    return f"A tie! The winners are {_names(state, list(winners))}, with {_money(total)} each!"


def callouts(event: Any, result: Result) -> list[str]:
    """The phrases to say for one event the referee handled (accepted or rejected)."""
    if not isinstance(event, Mapping):
        return []
    state = result.state
    if result.rejection:
        phrase = rejection_phrase(state, event, result.rejection)
        return [phrase] if phrase else []
    said: list[str] = []
    finish = photo_finish_phrase(state, event)
    for out in result.outputs:
        name = out.name
        if name == "go":
            said.append("Go!")
        elif name == "stage":
            said.append(STAGE_YELLS.get(event.get("stage"), "Stage!"))  # type: ignore[arg-type]
        elif name == "bang":
            said.append(f"Bang! Tiles from {_names(state, event.get('targets'))}.")
        elif name == "hostage":
            said.append(f"Hostage! {_name(state, out.seat)}.")
        elif name == "backup":
            said.append(f"Backup! {_name(state, out.seat)}.")
        elif name == "empty":
            said.append("Empty! Everyone, escape or arrest!")
        elif name == "escaped":
            said.append(f"Escaped! {_name(state, out.seat)}.")
            if finish:
                said.append(finish)
        elif name == "arrested":
            caught = SEAT_TAG.sub("", out.text.removeprefix("Arrested! "))
            said.append("Arrested!" + ("" if caught == "nobody" else f" {caught}."))
            if finish:
                said.append(finish)
        elif name == "diamond":
            said.append(f"Diamond! {_name(state, out.seat)}.")
        elif name == "trap":
            said.append(f"Trap! {_name(state, out.seat)} takes a hostage die.")
        elif name == "alarm" and out.kind == "flash":
            said.append("Alarm!")
        elif name == "heist_over":
            said.append("The heist is over. Get ready for the race.")
        elif name == "impound" and out.seat is None:
            said.append("Cops, choose a getaway car to impound.")
        elif name == "no_car":
            said.append(f"{_name(state, out.seat)} has no getaway car left.")
        elif name == "cops":
            said.append(f"{_name(state, state.cop)}, you are the cops. Hide the diamond.")
        elif name == "round":
            said.append(SEAT_TAG.sub("", out.text) + ".")
        elif name == "game_over":
            said.append("Game over! Count your cash.")
        elif name == "winners":
            phrase = winners_phrase(state)
            if phrase:
                said.append(phrase)
        elif name == "undo":
            said.append("Undone.")
        elif name.startswith("check:"):  # the camera doubts a claim
            said.append("Check! " + out.text.removeprefix("CHECK ").split(". Uphold")[0] + ".")
        elif name == "upheld":
            said.append(f"Challenge upheld. {SEAT_TAG.sub('', out.text.split(': ', 1)[-1])}.")
        elif name == "play_on":
            said.append("Play on.")
    return said


# Phrases worth rendering ahead, so the first of each plays at once.
COMMON_PHRASES = (
    "Go!",
    *STAGE_YELLS.values(),
    "Empty! Everyone, escape or arrest!",
    "Alarm!",
    "Cops, choose a getaway car to impound.",
    "Not yet! The cops need all three stages before the arrest.",
)
