"""companion/vision/profile_head.py: a profile's head (format, name, game, dice), read
without its face images, as the referee's process reads it."""

from __future__ import annotations

import shutil

import pytest

from companion.vision import profile, profile_head
from companion.vision.profile import default_profile_path, load_profile


def test_the_head_gives_the_dice_the_whole_profile_gives():
    whole = load_profile(default_profile_path())
    dice = profile_head.profile_dice(default_profile_path())
    assert dice.sets.keys() == whole.dice.sets.keys()
    assert all(dice.sets[s] == whole.dice.sets[s] for s in dice.sets)


def test_one_error_class_and_the_head_checks_what_load_profile_checks(tmp_path):
    assert profile.ProfileError is profile_head.ProfileError
    d = tmp_path / "p"
    shutil.copytree(default_profile_path(), d)
    toml = d / "profile.toml"
    toml.write_text(toml.read_text().replace("format = 1", "format = 7"))
    for read in (profile_head.profile_dice, load_profile):
        with pytest.raises(profile.ProfileError, match="key 'format' = 7 is not supported"):
            read(d)


def test_the_head_opens_no_face_image(tmp_path):
    """A broken face image is found by load_profile only: the head never opens one."""
    d = tmp_path / "p"
    shutil.copytree(default_profile_path(), d)
    (d / "faces" / "black" / "backup.png").write_bytes(b"not a png")
    assert profile_head.profile_dice(d).sets
    with pytest.raises(profile.ProfileError, match="backup.png: face image .* is unreadable"):
        load_profile(d)


@pytest.mark.parametrize("text, says", [
    (b"format = [unclosed", "not valid TOML"),
    (b"\xff\xfe garbage", "cannot read"),
])
def test_a_corrupt_or_missing_profile_is_one_line(tmp_path, text, says):
    d = tmp_path / "p"
    d.mkdir()
    (d / "profile.toml").write_bytes(text)
    with pytest.raises(profile.ProfileError, match=says) as got:
        profile_head.profile_dice(d)
    assert "\n" not in str(got.value) and str(d / "profile.toml") in str(got.value)
    with pytest.raises(profile.ProfileError, match="profile not found"):
        profile_head.profile_dice(tmp_path / "nowhere")
