"""companion/vision/calibrate_check.py: the profile's own check, fresh rolls read back."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.calibrate import CalibrationError, Step, SyntheticTable
from companion.vision.calibrate_check import (
    RIGHT,
    UNREAD,
    WRONG,
    Outcome,
    check_rolls,
    choose_sure,
    report,
    run_check,
    score_round,
    summarise,
)
from companion.vision.dice_data import load_dice_data
from companion.vision.profile import default_profile_path, load_profile
from companion.vision.types import UNKNOWN, DieReading

WHEN = "2026-12-06T10:00:00Z"


def die(dice_set: str, face: str, conf: float) -> DieReading:
    return DieReading(dice_set, face, conf, (0, 0, 10, 10), (5.0, 5.0))


def test_rolls_are_the_seeds_and_show_every_face_a_set_can_over_the_rounds():
    data = load_dice_data()
    rolls = check_rolls(data, 3, seed=4)
    assert rolls == check_rolls(data, 3, seed=4) != check_rolls(data, 3, seed=5)
    assert all(len(r) == 16 for r in rolls)
    for _set, kind, face in rolls[0]:
        assert face in data.kinds[kind]
    # Five robber dice over three rolls show all six faces of their set.
    for s in ("black", "white"):
        assert {f for r in rolls for (ss, _k, f) in r if ss == s} == set(data.set_faces(s))
    # Three cop dice a roll: nine faces over three rolls, none twice while one is fresh.
    red = [f for r in rolls for (s, _k, f) in r if s == "red"]
    assert len(set(red)) == 9


def test_the_check_step_says_the_faces_and_the_synthetic_table_lays_them():
    data = load_dice_data()
    roll = check_rolls(data, 1, seed=1)[0]
    step = Step("check", sample=0, dice=roll)
    black = ", ".join(f for s, _k, f in roll if s == "black")
    assert f"black: {black};" in step.instruction()
    table = SyntheticTable(2, data)
    table.frame(step)
    laid = sorted((d.dice_set, d.face) for d in table.last_truth.dice)
    assert laid == sorted((s, f) for s, _k, f in roll)


def test_a_round_is_matched_by_set_and_face_wherever_the_dice_lie():
    roll = (("black", "robber", "escape"), ("black", "robber", "loot"),
            ("black", "robber", "escape"), ("red", "special", "diamond"),
            ("red", "alarm-1", "alarm"))
    got = score_round(roll, [
        die("black", "loot", 0.9), die("black", "escape", 0.8),
        die("black", "wires", 0.7),           # the second escape, misread
        die("red", UNKNOWN, 0.3),             # the diamond, unsure
        die("white", "steal", 0.95),          # a die nobody asked for
    ])                                        # the red alarm: not seen at all
    as_tuples = sorted((o.dice_set, o.asked, o.read, o.status) for o in got)
    assert as_tuples == [
        ("black", "escape", "escape", RIGHT), ("black", "escape", "wires", WRONG),
        ("black", "loot", "loot", RIGHT),
        ("red", "alarm", UNKNOWN, UNREAD), ("red", "diamond", UNKNOWN, UNREAD),
        ("white", "", "steal", WRONG),
    ]


def test_sure_is_just_above_the_most_confident_wrong_and_passing_needs_95_percent():
    right = [Outcome("black", "escape", "escape", 0.9, RIGHT)] * 19
    assert choose_sure(right) == 0.5
    mixed = right + [Outcome("black", "escape", "steal", 0.7, WRONG)]
    assert choose_sure(mixed) == 0.7001
    check = summarise(mixed, 2, WHEN)
    assert (check.dice, check.right, check.unsure, check.wrong) == (20, 19, 0, 1)
    assert check.passed  # 19 of 20 right, the wrong one below sure
    low = summarise(mixed + [Outcome("black", "loot", "loot", 0.6, RIGHT)], 2, WHEN)
    assert (low.right, low.unsure, low.passed) == (19, 1, False)  # 19 of 21
    assert low.per_face == {"escape": (20, 19), "loot": (1, 0)}
    lines = report(low, mixed + [Outcome("black", "loot", "loot", 0.6, RIGHT)])
    assert lines[-1].startswith("check: not passed: 19 of 21 dice read right")
    assert lines[-1].endswith('claims stay "advise"')
    assert any("black loot: 0 of 1 read right" in line for line in lines)
    full = summarise(right + [Outcome("black", "loot", "steal", 1.0, WRONG)], 1, WHEN)
    assert full.sure == 1.0 and not full.passed


def test_the_shipped_profile_passes_its_check_on_the_synthetic_table():
    profile = load_profile(default_profile_path())
    run = run_check(SyntheticTable(7, profile.dice), profile, rounds=3, seed=7, when=WHEN,
                    log=lambda _s: None)
    assert run.check.dice == 48 and run.check.rounds == 3 and run.check.when == WHEN
    assert run.check.passed and run.check.wrong == 0
    assert run.check.right >= 46
    assert run.lines[-1] == 'check: passed: "challenge" may be turned on ([camera] claims)'


def test_a_profile_with_two_faces_swapped_does_not_pass_and_names_them():
    profile = load_profile(default_profile_path())
    t = profile.templates
    t[("black", "escape")], t[("black", "loot")] = t[("black", "loot")], t[("black", "escape")]
    run = run_check(SyntheticTable(0, profile.dice), profile, rounds=3, seed=0, when=WHEN,
                    log=lambda _s: None)
    assert not run.check.passed and run.check.wrong >= 1
    asked, right = run.check.per_face["escape"]
    assert right < asked
    assert any("black escape:" in line and "read as loot" in line for line in run.lines)
    assert run.lines[-1].startswith("check: not passed:")


class CoveredTable:
    """The synthetic table, but the first ``covered`` check frames show no mat."""

    def __init__(self, covered: int) -> None:
        self.inner = SyntheticTable(3, load_dice_data())
        self.covered = covered

    def frame(self, step: Step) -> np.ndarray:
        if step.kind == "check" and self.covered:
            self.covered -= 1
            return np.full((720, 1280, 3), (70, 128, 60), np.uint8)
        return self.inner.frame(step)


def test_a_roll_without_the_mat_is_asked_again_then_refused_in_one_line():
    profile = load_profile(default_profile_path())
    log: list[str] = []
    run = run_check(CoveredTable(2), profile, rounds=1, when=WHEN, log=log.append)
    assert sum("check, roll 1: the camera does not see marker(s)" in line
               and line.endswith("; again") for line in log) == 2
    assert run.check.dice == 16
    with pytest.raises(CalibrationError, match=r"^check, roll 1: the camera does not see") as got:
        run_check(CoveredTable(3), profile, rounds=1, when=WHEN, log=log.append)
    assert "\n" not in str(got.value)


def test_a_face_never_read_right_fails_the_check_however_few_showed_it():
    """Forty-seven dice right and one red diamond never read: 98% right, not passed."""
    right = [Outcome("black", "escape", "escape", 0.9, RIGHT)] * 47
    unread = [Outcome("red", "diamond", UNKNOWN, 0.0, UNREAD)]
    check = summarise(right + unread, 3, WHEN)
    assert check.right == 47 and not check.passed
    assert report(check, right + unread)[-1] == (
        'check: not passed: never read right: red diamond; claims stay "advise"')
    assert summarise(right + [Outcome("red", "diamond", "diamond", 0.8, RIGHT)], 3,
                     WHEN).passed
