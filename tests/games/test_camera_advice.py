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
