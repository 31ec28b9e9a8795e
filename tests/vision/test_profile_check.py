"""A profile's [check] table (companion/vision/profile.py, profile_head.py): written,
read back, refused in one line when wrong, and readable without OpenCV."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from companion.vision.profile import (
    PROFILE_FILE,
    ProfileCheck,
    ProfileError,
    default_profile_path,
    load_profile,
    save_check,
    save_profile,
)
from companion.vision.profile_head import profile_check

CHECK = ProfileCheck(passed=True, sure=0.6123, dice=48, right=47, unsure=1, wrong=0,
                     rounds=3, when="2026-12-06T10:00:00Z",
                     per_face={"escape": (8, 8), "piece-1-3": (1, 0)},
                     per_set={"black": (15, 15), "blue": (9, 8)})


def without_check(src: Path, dst: Path) -> Path:
    """A copy of ``src`` as a profile from before [check]: the table cut off."""
    shutil.copytree(src, dst)
    toml = dst / PROFILE_FILE
    toml.write_text(toml.read_text().split("\n[check]")[0].rstrip("\n") + "\n")
    return dst


@pytest.fixture()
def old(tmp_path: Path) -> Path:
    return without_check(default_profile_path(), tmp_path / "old")


def test_a_profile_from_before_the_check_loads_with_none(old):
    assert "[check" not in (old / PROFILE_FILE).read_text()
    assert load_profile(old).check is None
    assert profile_check(old) is None


def test_the_check_round_trips_through_save_and_load(old, tmp_path):
    profile = load_profile(old)
    profile.check = CHECK
    save_profile(profile, tmp_path / "new")
    back = load_profile(tmp_path / "new")
    assert back.check == CHECK
    assert profile_check(tmp_path / "new") == CHECK
    assert back.templates.keys() == profile.templates.keys()


def test_save_check_rewrites_only_the_check_table(old):
    toml = old / PROFILE_FILE
    before = toml.read_text()
    save_check(old, CHECK)
    once = toml.read_text()
    assert once.startswith(before.rstrip("\n")) and "\n[check]\npassed = true\n" in once
    later = ProfileCheck(False, 0.9, 10, 5, 3, 2, 1, "2026-12-07T00:00:00Z", {"loot": (10, 5)})
    save_check(old, later)
    twice = toml.read_text()
    assert twice.startswith(before.rstrip("\n")) and twice.count("[check]") == 1
    assert "per_set" not in twice
    assert profile_check(old) == later


@pytest.mark.parametrize("old_text, new_text, says", [
    ("sure = 0.6123", 'sure = "x"', "key 'sure' has the wrong type (str)"),
    ("sure = 0.6123", "sure = 0.2", "key 'sure' = 0.2 is out of range 0.5..1"),
    ("right = 47", "right = 49", "key 'right' = 49 is more than dice = 48"),
    ("right = 47", "right = 30", "key 'passed' = true, but 30 of 48 dice read right"),
    ("unsure = 1\n", "", "[check]: missing key 'unsure'"),
    ('"2026-12-06T10:00:00Z"', '"2026-12-06T10:00:00"', "is not an ISO 8601 time in UTC"),
    ('"2026-12-06T10:00:00Z"', '"yesterday"', "is not an ISO 8601 time in UTC"),
    ("escape = [8, 8]", "escape = [8, 9]", "key 'check.per_face.escape': expected"),
    ("black = [15, 15]", 'black = "all"', "key 'check.per_set.black': expected"),
])
def test_a_wrong_check_table_is_one_line_naming_the_key(old, old_text, new_text, says):
    save_check(old, CHECK)
    toml = old / PROFILE_FILE
    text = toml.read_text()
    assert old_text in text
    toml.write_text(text.replace(old_text, new_text, 1))
    for read in (load_profile, profile_check):
        with pytest.raises(ProfileError) as got:
            read(old)
        assert says in str(got.value) and "\n" not in str(got.value)
        assert str(toml) in str(got.value)


def test_the_check_is_read_without_opencv_or_numpy():
    code = (
        "import sys\n"
        "from companion.vision.profile_head import profile_check\n"
        f"check = profile_check({str(default_profile_path())!r})\n"
        "print(check.passed, 'cv2' in sys.modules, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False", "False"]
