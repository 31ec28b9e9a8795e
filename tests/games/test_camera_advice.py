"""The camera in another game: Vault solitaire's five pip dice, read left to right,
become the helper's advice once (the table confirms by entering the roll)."""

from __future__ import annotations

from companion.camera import CameraInput
from companion.games import registry
from companion.loop import Referee
from companion.vision.types import DieReading, FrameReading


def die(face, x, dice_set="pip"):
    return DieReading(dice_set, face, 0.9, (x, 0, x + 10, 10), (float(x), 5.0))


def reading(*faces):
    return FrameReading(640, 480, tuple(die(f, 100 * i + 50) for i, f in enumerate(faces)),
                        mat_found=True)


def test_solitaire_roll_read_by_the_camera_becomes_the_helpers_advice_once():
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    cam = CameraInput(ref, "synthetic", profile_dir="")
    # Handed over in any order: read left to right.
    cam.on_reading(FrameReading(640, 480, tuple(reversed(reading("6", "2", "3", "1", "5").dice))))
    advice = [m for m in ref.messages if m.startswith("Camera reads")]
    expect = registry.get("vault-solitaire").camera_advice(ref.state, [6, 2, 3, 1, 5])
    assert advice == [expect] and expect.startswith("Camera reads 6 2 3 1 5: ")
    cam.on_reading(reading("6", "2", "3", "1", "5"))  # the same dice: said once
    assert len([m for m in ref.messages if m.startswith("Camera reads")]) == 1
    assert ref.camera_status.startswith("Camera: 5 dice settled, pips 6 2 3 1 5")
    cam.on_reading(reading("5", "6", "unknown"))  # not five dice: no advice
    assert len([m for m in ref.messages if m.startswith("Camera reads")]) == 1
    assert ref.state.dice == ()  # the camera never enters the roll itself


def test_a_camera_wired_to_the_table_proposes_the_roll_and_a_press_takes_it():
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    posted = []
    cam = CameraInput(ref, "synthetic", profile_dir="", post=posted.append)
    cam.on_reading(reading("6", "2", "3", "1", "5"))
    assert posted == [{"type": "seen", "dice": [6, 2, 3, 1, 5]}]
    assert ref.submit(posted[0]).rejection is None
    assert ref.state.seen == (6, 2, 3, 1, 5) and ref.state.dice == ()  # seen, not rolled
    cam.on_reading(reading("6", "2", "3", "1", "5"))  # the same dice: nothing new
    assert len(posted) == 1
    game = registry.get("vault-solitaire")
    take = game.press_event(ref.state, 0, 123)
    assert take == {"type": "roll", "dice": [6, 2, 3, 1, 5], "ts_ns": 123}
    assert ref.submit(take).rejection is None
    assert ref.state.dice == (6, 2, 3, 1, 5) and ref.state.seen == ()
    cam.on_reading(reading("1", "1", "1", "1", "1"))  # dice on the table: no proposal
    assert len(posted) == 1
    assert game.press_event(ref.state, 0, 124) is None  # nothing to take now


def test_a_second_reading_replaces_the_first_and_take_is_a_command():
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    game = registry.get("vault-solitaire")
    try:
        game.parse_command("take", ref.state)
    except ValueError as exc:
        assert str(exc) == "take: the camera has read no roll to take"
    else:
        raise AssertionError("take with nothing seen must be refused")
    for dice in ([1, 2, 3, 4, 5], [6, 6, 5, 4, 1]):
        assert ref.submit({"type": "seen", "dice": dice}).rejection is None
    assert game.page_moves(ref.state)["take"] == {"type": "roll", "dice": [6, 6, 5, 4, 1]}
    assert any("Camera reads 6 6 5 4 1: take it" in line  # beside the board
               for line in game.status_lines(ref.state))
    assert ref.submit(game.parse_command("take", ref.state)).rejection is None
    assert ref.state.dice == (6, 6, 5, 4, 1)
    # a `seen` while the dice are on the table is refused with one line
    r = ref.submit({"type": "seen", "dice": [1, 1, 1, 1, 1]})
    assert r.rejection is not None and r.rejection.code == "wrong_phase"
    assert ref.submit({"type": "undo"}).rejection is None  # undo the roll: seen again
    assert ref.state.seen == (6, 6, 5, 4, 1) and ref.state.dice == ()


def test_five_dice_with_some_not_read_are_said_once_with_a_question_mark_for_each():
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    posted, heard = [], []
    ref.speech.append(heard.append)  # as the speaker is wired (speech.callouts)
    cam = CameraInput(ref, "synthetic", profile_dir="", post=posted.append)
    unread = "Camera cannot read 1 of the 5 dice (5 ? 3 1 6): nudge it or enter the roll"
    cam.on_reading(reading("5", "unknown", "3", "1", "6"))
    assert [m for m in ref.messages if m.startswith("Camera")] == [unread]
    assert ref.flash == "dice_unread"  # the LED says NUDGE!
    assert heard == ["The camera cannot read one die: nudge it, or enter the roll."]
    assert ref.camera_status.startswith("Camera: 5 dice settled, pips 5 ? 3 1 6")
    assert posted == []  # four faces are not a roll: nothing proposed
    cam.on_reading(reading("5", "unknown", "3", "1", "6"))  # the same reading: said once
    assert list(ref.messages).count(unread) == 1
    cam.on_reading(reading("5", "2", "3", "1", "6"))  # nudged: read whole, proposed
    assert posted == [{"type": "seen", "dice": [5, 2, 3, 1, 6]}]
    assert ref.camera_status.startswith("Camera: 5 dice settled, pips 5 2 3 1 6")
    cam.on_reading(reading("unknown", "2", "3", "unknown", "6"))
    assert ref.messages[-1] == ("Camera cannot read 2 of the 5 dice (? 2 3 ? 6): nudge them "
                                "or enter the roll")
    assert heard[-1] == "The camera cannot read two dice: nudge them, or enter the roll."
    cam.on_reading(reading("5", "unknown", "3", "1", "6"))  # unread again: said again
    assert list(ref.messages).count(unread) == 2 and len(heard) == 3


def test_what_is_said_of_dice_not_read_depends_on_the_game_awaiting_five():
    game = registry.get("vault-solitaire")
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    say = game.camera_unread
    assert say(ref.state, [None, None, None, None, None]).startswith(
        "Camera cannot read 5 of the 5 dice (? ? ? ? ?)")
    for faces in ([5, 2, 3, 1, 6], [5, None, 3, 1], [5, None, 3, 1, 6, 2], "5?316",
                  [5, None, 3, 1, 7], [5, None, 3, True, 6], [5, None, "3", 1, 6], None):
        assert say(ref.state, faces) is None, faces
    assert ref.submit({"type": "roll", "dice": [5, 2, 3, 1, 6]}).rejection is None
    assert say(ref.state, [5, None, 3, 1, 6]) is None  # the roll is in: nothing to ask
    # the other games say nothing of dice they do not read
    for other in ("vault-assault", "big-score", "vault-abstract"):
        assert registry.get(other).camera_unread(ref.state, [5, None, 3, 1, 6]) is None


def test_the_nudge_flash_is_drawn_on_the_solitaire_board_and_a_failing_hook_is_a_fault():
    from companion.display.model import FLASH_WORDS, flash_frame

    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]})
    board = registry.get("vault-solitaire").render(ref.state, None, 0)
    nudge = registry.get("vault-solitaire").render(ref.state, "dice_unread", 0)
    assert FLASH_WORDS["dice_unread"] == "NUDGE!"
    assert nudge == flash_frame("NUDGE!", 0) and nudge != board
    assert flash_frame("NUDGE!", 0) == flash_frame("NUDGE!", 9)  # held still, not scrolled

    def broken(text):
        raise OSError("no sound card")

    ref.speech.append(broken)
    faults = ref.internal_errors
    ref.alert("Camera cannot read 1 of the 5 dice (5 ? 3 1 6): nudge it or enter the roll",
              "dice_unread")
    assert ref.internal_errors == faults + 1  # counted and journalled, not raised
    assert list(ref.messages)[-2:] == [
        "Camera cannot read 1 of the 5 dice (5 ? 3 1 6): nudge it or enter the roll",
        "internal error (a speech hook): OSError: no sound card"]
    assert ref.submit({"type": "roll", "dice": [5, 2, 3, 1, 6]}).rejection is None
