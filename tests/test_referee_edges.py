"""The referee's narrow API for the edges (camera, serve, sim) and the tie rules'
names (companion.hardware.arbitration)."""

from __future__ import annotations

from companion.games.vault_assault.state import NO_GAME
from companion.hardware.arbitration import (
    LATE_SEAT_FIRST,
    LOWEST_SEAT,
    RACERS_FIRST,
    TIE_RULES,
    ArbiterConfig,
)
from companion.loop import Referee


def test_camera_overlay_reaches_the_view_and_the_board() -> None:
    ref = Referee()
    ref.set_camera_overlay({1: frozenset({0, 3})}, "Camera: 4 dice settled")
    view = ref.view()
    assert view.camera == "Camera: 4 dice settled"
    assert ref.camera_overlay == {1: frozenset({0, 3})}
    ref.set_camera_overlay(None, "Camera: GONE")
    assert ref.camera_overlay is None and ref.view().camera == "Camera: GONE"


def test_say_adds_a_message_without_a_flash() -> None:
    ref = Referee()
    ref.say("Camera: stage 1 mosaic assembled")
    assert ref.messages[-1] == "Camera: stage 1 mosaic assembled" and ref.flash is None


def test_show_flash_for_holds_the_flash_the_given_seconds() -> None:
    now = [100.0]
    ref = Referee(clock=lambda: now[0])
    ref.show_flash_for("pin:1234", 10.0)
    assert ref.flash == "pin:1234" and ref.flash_until == 110.0


def test_start_new_log_clears_the_game() -> None:
    from game_builders import new_game

    ref = Referee()
    ref.submit(new_game(2))
    assert ref.state.phase != NO_GAME
    ref.start_new_log(None)
    assert ref.state.phase == NO_GAME and ref.log is None


def test_config_tie_values_name_what_the_rule_does() -> None:
    assert TIE_RULES == ("robbers", "cops", "lowest-seat")  # the config's contract
    assert [ArbiterConfig(tie_rule=v).rule for v in TIE_RULES] == [
        RACERS_FIRST,
        LATE_SEAT_FIRST,
        LOWEST_SEAT,
    ]
