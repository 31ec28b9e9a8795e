"""The house's claim watch (companion.claims): a claim the referee accepted is judged
against the camera's settled readings and answered with one logged `claim_check`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.game_builders import at_race

from companion.camera import CameraInput
from companion.claims import ClaimWatch, effective_mode
from companion.games.claims import ADVISE, CHALLENGE, OFF
from companion.loop import Referee
from companion.vision.types import DieReading, FrameReading


def die(face: str, x: float, dice_set: str = "black", conf: float = 0.99) -> DieReading:
    return DieReading(dice_set, face, conf, (int(x), 0, int(x) + 20, 20), (x + 10, 10))


def reading(*faces: str, dice_set: str = "black") -> FrameReading:
    return FrameReading(640, 480, tuple(die(f, 30 * i, dice_set) for i, f in enumerate(faces)),
                        mat_found=True)


FIVE = reading(*["escape"] * 5)
FOUR = reading(*["escape"] * 4, "loot")


class Table:
    """A referee with a watch whose posts are judged at once, as the table's queue
    would."""

    def __init__(self, mode: str = CHALLENGE, players: int = 3) -> None:
        self.referee = Referee(state=at_race(players))
        self.posted: list[dict[str, Any]] = []
        self.watch = ClaimWatch(self.referee, self.post, mode=mode)
        self.referee.listeners.append(self.watch.on_event)

    def post(self, event: dict[str, Any]) -> None:
        self.posted.append(event)
        self.referee.submit(event)


def test_a_true_escape_is_confirmed_from_the_reading_before_the_press() -> None:
    t = Table()
    t.watch.on_reading(FIVE)
    t.referee.submit({"type": "buzz", "seat": 1})
    assert [(e["answer"], e["seen"]) for e in t.posted] == [("confirmed", 5)]
    assert t.referee.state.challenges == ()


def test_a_false_escape_is_challenged_and_the_table_can_uphold_it() -> None:
    t = Table()
    t.watch.on_reading(FOUR)
    t.referee.submit({"type": "buzz", "seat": 1})
    assert t.posted[0]["answer"] == "challenged"
    assert "CHECK Bob's Escape: the camera sees 4 Escapes" in " ".join(t.referee.messages)
    assert t.referee.flash == "check:4/5"
    t.referee.submit({"type": "challenge_upheld"})
    assert t.referee.state.turn.escaped == ()


def test_cant_see_waits_for_a_better_reading_within_the_window() -> None:
    t = Table()
    t.watch.on_reading(reading(*["escape"] * 4))  # the fifth die still rolling
    t.referee.submit({"type": "buzz", "seat": 1})
    assert t.posted == [] and len(t.watch.pending) == 1
    t.watch.on_reading(FIVE)  # it lands
    assert [e["answer"] for e in t.posted] == ["confirmed"]
    assert t.watch.pending == []


def test_the_window_closes_with_cant_see() -> None:
    async def go() -> Table:
        t = Table()
        t.watch.window_s = 0.05
        t.watch.attach(asyncio.get_running_loop())  # (it listens once, as before)
        t.watch.on_reading(reading(*["escape"] * 3))
        t.referee.submit({"type": "buzz", "seat": 1})
        await asyncio.sleep(0.2)
        return t

    t = asyncio.run(go())
    assert [e["answer"] for e in t.posted] == ["cant_see"]
    assert "it stands" in " ".join(t.referee.messages)
    assert t.referee.state.turn.escaped == (1,)


def test_other_colours_dice_do_not_count() -> None:
    t = Table()
    t.watch.on_reading(reading(*["escape"] * 5, dice_set="white"))  # seat 3's set
    t.referee.submit({"type": "buzz", "seat": 1})  # seat 2 holds black
    assert t.posted == []


def test_advise_says_but_opens_no_challenge_and_off_says_nothing() -> None:
    t = Table(ADVISE)
    t.watch.on_reading(FOUR)
    t.referee.submit({"type": "buzz", "seat": 1})
    assert t.posted[0]["mode"] == ADVISE and t.referee.state.challenges == ()
    off = Table(OFF)
    off.watch.on_reading(FOUR)
    off.referee.submit({"type": "buzz", "seat": 1})
    assert off.posted == []


def test_rejected_presses_and_non_claims_are_not_checked() -> None:
    t = Table()
    t.watch.on_reading(FOUR)
    t.referee.submit({"type": "buzz", "seat": 0})  # an Arrest before the stages: refused
    t.referee.submit({"type": "loot", "seat": 1})
    assert t.posted == []


def test_challenge_needs_a_passed_check() -> None:
    assert effective_mode(CHALLENGE, True) == (CHALLENGE, None)
    mode, why = effective_mode(CHALLENGE, False)
    assert mode == ADVISE and why is not None and "did not" in why
    mode, why = effective_mode(CHALLENGE, None)
    assert mode == ADVISE and why is not None and "\n" not in why
    assert effective_mode(ADVISE, None) == (ADVISE, None)
    with pytest.raises(ValueError, match="claims must be one of"):
        effective_mode("loud", None)


def test_a_camera_that_dies_mid_game_turns_claims_off_with_one_message() -> None:
    referee = Referee(state=at_race(3))
    cam = CameraInput(referee, "none", claims=ADVISE)
    cam.watch = ClaimWatch(referee, lambda e: None, mode=ADVISE)
    before = len(referee.messages)
    cam.on_gone(RuntimeError("USB camera unplugged"))
    said = list(referee.messages)[before:]
    assert said == ["Camera gone (USB camera unplugged): refereeing from the buttons, "
                    "claims off"]
    assert cam.watch.mode == OFF and not cam.watch.on
