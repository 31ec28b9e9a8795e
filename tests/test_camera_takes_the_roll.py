"""The camera enters Vault solitaire's roll itself (issue 66): with `[camera] claims`
on, five settled pip dice all read surely are proposed as the `roll` (by the camera)
instead of a `seen`, once per roll; an unsure or unread die, or claims "off", leaves
today's `seen` (or nudge)."""

from __future__ import annotations

from companion.camera import CameraInput, PipSense
from companion.games import registry
from companion.games.claims import ADVISE, CHALLENGE, DEFAULT_SURE, OFF
from companion.loop import Referee
from companion.vision.types import DieReading, FrameReading

NEW = {"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]}
GAME = registry.get("vault-solitaire")


def die(face, x, confidence=0.9, y=5.0):
    return DieReading("pip", face, confidence, (x - 5, int(y) - 5, x + 5, int(y) + 5),
                      (float(x), y))


def reading(*faces, confidence=0.9, shift=0, unsure=()):
    """Pip dice left to right, 100 px apart (`shift` moves them all; the dice at the
    indices in `unsure` read with confidence 0.6)."""
    return FrameReading(640, 480, tuple(
        die(f, 100 * i + 50 + shift, 0.6 if i in unsure else confidence)
        for i, f in enumerate(faces)), mat_found=True)


def table(claims=ADVISE):
    ref = Referee()
    ref.submit(NEW)
    posted = []
    return ref, posted, CameraInput(ref, "synthetic", profile_dir="", post=posted.append,
                                    claims=claims)


def roll(*dice):
    return {"type": "roll", "dice": list(dice), "by": "camera"}


def test_five_dice_read_surely_are_entered_as_the_roll_once():
    ref, posted, cam = table(ADVISE)
    cam.on_reading(reading("3", "5", "5", "6", "1"))
    assert posted == [roll(3, 5, 5, 6, 1)]  # the roll, not a `seen`
    cam.on_reading(reading("3", "5", "5", "6", "1"))  # the same reading: proposed once
    assert posted == [roll(3, 5, 5, 6, 1)]
    assert ref.submit(posted[0]).rejection is None
    assert ref.state.dice == (3, 5, 5, 6, 1) and ref.state.rolled_by == "camera"
    assert GAME.page_moves(ref.state)["take_back"]["text"] == "Camera entered 3 5 5 6 1"
    # one tap takes it back; the same dice where they lay are not entered again, nor seen
    assert ref.submit({"type": "undo"}).rejection is None
    assert ref.state.phase == "roll" and ref.state.dice == ()
    cam.on_reading(reading("3", "5", "5", "6", "1"))
    assert posted == [roll(3, 5, 5, 6, 1)]
    # picked up and thrown again: a new roll, even with the same faces
    cam.on_reading(reading("3", "5", "5", "6", "1", shift=40))
    assert posted == [roll(3, 5, 5, 6, 1)] * 2
    cam.on_reading(reading("2", "2", "4", "6", "1", shift=40))  # turned over in place
    assert posted[-1] == roll(2, 2, 4, 6, 1) and len(posted) == 3


def test_in_challenge_mode_too_but_not_while_the_dice_are_in_play():
    ref, posted, cam = table(CHALLENGE)
    cam.on_reading(reading("6", "2", "3", "1", "5"))
    assert posted == [roll(6, 2, 3, 1, 5)]
    assert ref.submit(posted[0]).rejection is None
    cam.on_reading(reading("1", "1", "1", "1", "1"))  # the dice on the table: no roll
    assert posted == [roll(6, 2, 3, 1, 5)]


def test_one_die_unsure_is_todays_seen():
    game = registry.get("vault-solitaire")
    ref = Referee()
    ref.submit(NEW)
    sense = PipSense(game, claims=ADVISE, sure=0.8)
    seen = sense.read(ref.state, reading("3", "5", "5", "6", "1", unsure=(2,)))
    assert seen.propose == {"type": "seen", "dice": [3, 5, 5, 6, 1]}
    seen = sense.read(ref.state, reading("3", "5", "5", "6", "1"))  # now all sure
    assert seen.propose == roll(3, 5, 5, 6, 1)
    # a die exactly as sure as asked is sure; the default is the claims' own
    assert PipSense(game, claims=ADVISE).sure == DEFAULT_SURE
    at = PipSense(game, claims=ADVISE, sure=0.6)
    assert at.read(ref.state, reading("3", "5", "5", "6", "1", unsure=(0,))).propose == roll(
        3, 5, 5, 6, 1)


def test_one_die_unread_is_the_nudge_as_today_and_nothing_is_entered():
    ref, posted, cam = table(ADVISE)
    cam.on_reading(reading("5", "unknown", "3", "1", "6"))
    assert posted == []
    assert ref.flash == "dice_unread"
    assert ref.messages[-1].startswith("Camera cannot read 1 of the 5 dice (5 ? 3 1 6)")
    cam.on_reading(reading("5", "2", "3", "1", "6"))  # nudged: read whole and sure
    assert posted == [roll(5, 2, 3, 1, 6)]


def test_claims_off_proposes_todays_seen():
    for cam_claims in (OFF, None):  # named, or the camera's default
        ref = Referee()
        ref.submit(NEW)
        posted = []
        kwargs = {} if cam_claims is None else {"claims": cam_claims}
        cam = CameraInput(ref, "synthetic", profile_dir="", post=posted.append, **kwargs)
        assert cam.claims == OFF
        cam.on_reading(reading("3", "5", "5", "6", "1"))
        assert posted == [{"type": "seen", "dice": [3, 5, 5, 6, 1]}]
        assert ref.submit(posted[0]).rejection is None
        cam.on_reading(reading("3", "5", "5", "6", "1"))  # seen already: nothing new
        assert len(posted) == 1 and ref.state.dice == ()


def test_the_camera_passes_its_mode_to_the_pip_reading():
    ref = Referee()
    ref.submit(NEW)
    cam = CameraInput(ref, "synthetic", profile_dir="", claims=ADVISE)
    sense = cam.sense(ref.game)
    assert isinstance(sense, PipSense) and sense.claims == ADVISE


def test_a_game_without_camera_take_gets_todays_proposal():
    """The hook's default (None) leaves the house's `camera_event` proposal as it was."""
    from dataclasses import replace

    game = replace(GAME, camera_take=lambda state, pips: None)
    ref = Referee()
    ref.submit(NEW)
    seen = PipSense(game, claims=ADVISE).read(ref.state, reading("3", "5", "5", "6", "1"))
    assert seen.propose == {"type": "seen", "dice": [3, 5, 5, 6, 1]}
