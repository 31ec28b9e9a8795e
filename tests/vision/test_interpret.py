"""The referee's reading of the table: mosaics assembled, robbers escaped."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.vault_assault.interpret import (
    escaped,
    interpret,
    mosaic_stages,
    robber_sets,
    stage_complete,
)
from companion.vision.dice_data import load_dice_data
from companion.vision.synthetic import render_view, truth_reading, vault_scene
from companion.vision.types import UNKNOWN, DieReading, FrameReading

DICE = load_dice_data()
SIDE = DICE.die_mm
PPM = 2.0
HOLDER = {"piece-{}-1": "red", "piece-{}-2": "red", "piece-{}-3": "blue", "piece-{}-4": "blue"}


def die(set_name: str, face: str, xy: tuple[float, float], angle: float = 0.0,
        confidence: float = 0.95, with_mm: bool = True) -> DieReading:
    x, y = xy
    h = SIDE / 2 * (abs(math.cos(math.radians(angle))) + abs(math.sin(math.radians(angle))))
    box = (int((x - h) * PPM), int((y - h) * PPM), int(math.ceil((x + h) * PPM)),
           int(math.ceil((y + h) * PPM)))
    return DieReading(set_name, face, confidence, box, (x * PPM, y * PPM), angle,
                      (x, y) if with_mm else None)


def mosaic(stage: int, centre=(200.0, 150.0), angle: float = 0.0, gap: float = 0.5,
           wild_at: int | None = None, wild_set: str = "red", **kw) -> list[DieReading]:
    step = SIDE + gap
    th = math.radians(angle)
    out = []
    for pos in range(1, 5):
        u = (-0.5 if pos in (1, 3) else 0.5) * step
        v = (-0.5 if pos in (1, 2) else 0.5) * step
        xy = (centre[0] + u * math.cos(th) - v * math.sin(th),
              centre[1] + u * math.sin(th) + v * math.cos(th))
        if pos == wild_at:
            out.append(die(wild_set, f"wild-{stage}", xy, (angle + 37) % 360, **kw))
        else:
            fmt = f"piece-{{}}-{pos}"
            out.append(die(HOLDER[fmt], fmt.format(stage), xy, angle, **kw))
    return out


def reading(dice: list[DieReading]) -> FrameReading:
    return FrameReading(840, 594, tuple(dice), mat_found=True)


def complete(dice: list[DieReading]) -> tuple[int, ...]:
    return interpret(reading(dice), DICE).complete_stages


# ---------------------------------------------------------------- mosaics


@pytest.mark.parametrize("stage", [1, 2, 3, 4])
def test_four_pieces_in_place_complete_their_stage_only(stage: int) -> None:
    state = interpret(reading(mosaic(stage)), DICE)
    assert state.complete_stages == (stage,)
    st_ = state.stages[stage - 1]
    assert st_.pieces_showing == (1, 2, 3, 4) and not st_.wild_used
    assert stage_complete(reading(mosaic(stage)), stage, DICE)


@settings(max_examples=60, deadline=None)
@given(angle=st.floats(0, 360), gap=st.floats(0, 3.0), x=st.floats(80, 340),
       y=st.floats(60, 240), stage=st.integers(1, 4))
def test_mosaic_is_complete_at_any_angle_and_place(angle, gap, x, y, stage) -> None:
    assert complete(mosaic(stage, (x, y), angle, gap)) == (stage,)


@pytest.mark.parametrize("wild_at", [1, 2, 3, 4])
def test_the_stage_wild_stands_in_for_any_one_piece(wild_at: int) -> None:
    state = interpret(reading(mosaic(3, wild_at=wild_at, angle=20)), DICE)
    assert state.complete_stages == (3,)
    assert state.stages[2].wild_used


def test_another_stage_wild_does_not_stand_in() -> None:
    dice = mosaic(2, wild_at=4)
    dice[3] = die("red", "wild-3", _xy(dice[3]))
    assert complete(dice) == ()


def _xy(d: DieReading) -> tuple[float, float]:
    assert d.mat_xy is not None
    return d.mat_xy


def test_swapped_pieces_are_not_a_mosaic() -> None:
    dice = mosaic(1)
    a, b = dice[0], dice[1]
    dice[0] = die(a.dice_set, a.face, _xy(b), a.angle)
    dice[1] = die(b.dice_set, b.face, _xy(a), b.angle)
    assert complete(dice) == ()


@pytest.mark.parametrize("turn", [90, 180, 270, 35])
def test_a_turned_piece_breaks_the_picture(turn: float) -> None:
    dice = mosaic(4, angle=10)
    d = dice[2]
    dice[2] = die(d.dice_set, d.face, _xy(d), (d.angle + turn) % 360)
    assert complete(dice) == ()


def test_a_piece_pulled_away_breaks_the_mosaic() -> None:
    dice = mosaic(2)
    d = dice[3]
    x, y = _xy(d)
    dice[3] = die(d.dice_set, d.face, (x + 10, y + 10), d.angle)
    assert complete(dice) == ()


def test_pieces_spread_far_apart_in_the_right_shape_do_not_count() -> None:
    assert complete(mosaic(2, gap=12.0)) == ()


def test_unknown_or_unsure_faces_never_complete_a_mosaic() -> None:
    dice = mosaic(1)
    d = dice[0]
    dice[0] = DieReading(d.dice_set, UNKNOWN, 0.4, d.box, d.centre, d.angle, d.mat_xy)
    assert complete(dice) == ()
    assert complete(mosaic(1, confidence=0.49)) == ()


def test_a_piece_read_on_a_die_set_that_cannot_show_it_is_ignored() -> None:
    dice = mosaic(1)
    d = dice[0]  # piece-1-1 lives on a red die
    dice[0] = die("blue", d.face, _xy(d), d.angle)
    assert complete(dice) == ()
    dice[0] = die(UNKNOWN, d.face, _xy(d), d.angle)
    assert complete(dice) == ()


def test_three_pieces_without_a_wild_are_not_enough() -> None:
    state = interpret(reading(mosaic(1)[:3]), DICE)
    assert state.complete_stages == ()
    assert state.stages[0].pieces_showing == (1, 2, 3)


def test_works_from_frame_pixels_when_the_mat_was_not_found() -> None:
    assert complete(mosaic(3, angle=55, with_mm=False)) == (3,)
    dice = mosaic(3, angle=55, with_mm=False)
    d = dice[0]
    dice[0] = DieReading(d.dice_set, d.face, d.confidence, d.box,
                         (d.centre[0] + 20, d.centre[1]), d.angle, None)
    assert complete(dice) == ()


def test_two_mosaics_at_once_and_the_highest_stage_in_order() -> None:
    dice = mosaic(1, (100, 100)) + mosaic(2, (250, 200), angle=90)
    state = interpret(reading(dice), DICE)
    assert state.complete_stages == (1, 2)
    assert state.highest_complete_stage == 2
    assert interpret(reading(mosaic(2)), DICE).highest_complete_stage == 0


@settings(max_examples=60, deadline=None)
@given(angle=st.floats(0, 360), stage=st.integers(1, 4), drop=st.integers(0, 3),
       blur=st.sampled_from(["unknown", "drop", "low"]))
def test_losing_any_one_piece_undoes_the_mosaic(angle, stage, drop, blur) -> None:
    dice = mosaic(stage, angle=angle)
    d = dice[drop]
    if blur == "drop":
        del dice[drop]
    elif blur == "unknown":
        dice[drop] = DieReading(d.dice_set, UNKNOWN, 0.3, d.box, d.centre, d.angle, d.mat_xy)
    else:
        dice[drop] = DieReading(d.dice_set, d.face, 0.3, d.box, d.centre, d.angle, d.mat_xy)
    assert complete(dice) == ()


# ---------------------------------------------------------------- robbers


def robbers(set_name: str, faces: list[str], confidence: float = 0.9) -> list[DieReading]:
    return [die(set_name, f, (60 + 25 * i, 120), 0, confidence) for i, f in enumerate(faces)]


def test_five_escapes_showing() -> None:
    r = reading(robbers("black", ["escape"] * 5) + robbers("white", ["loot"] * 4 + ["escape"]))
    assert escaped(r, "black", DICE)
    assert not escaped(r, "white", DICE)
    sets = robber_sets(r, DICE)
    assert sets["white"].faces == {"loot": 4, "escape": 1}
    assert sets["black"].escaped and sets["black"].dice == 5


def test_four_escapes_and_an_unknown_is_not_five() -> None:
    dice = robbers("black", ["escape"] * 4)
    dice += [die("black", UNKNOWN, (200, 200), 0, 0.2)]
    sets = robber_sets(reading(dice), DICE)
    assert not sets["black"].escaped
    assert sets["black"].unknown == 1 and sets["black"].faces == {"escape": 4}


def test_unsure_escapes_and_other_sets_escapes_do_not_count() -> None:
    assert not escaped(reading(robbers("black", ["escape"] * 5, confidence=0.45)), "black", DICE)
    mixed = robbers("black", ["escape"] * 4) + robbers("white", ["escape"])
    assert not escaped(reading(mixed), "black", DICE)
    assert not escaped(reading(robbers("red", ["escape"] * 5)), "red", DICE)


def test_cop_faces_on_robber_dice_are_not_counted() -> None:
    sets = robber_sets(reading(robbers("white", ["alarm", "escape"])), DICE)
    assert sets["white"].faces == {"escape": 1}
    assert sets["white"].unknown == 1


# ---------------------------------------------------------------- rendered scenes


@pytest.mark.parametrize("k", range(12))
def test_the_rules_agree_with_how_scenes_were_laid_out(k: int) -> None:
    rng = np.random.default_rng([7, k])
    scenario = ["mosaic", "mosaic_wild", "mosaic_swapped", "mosaic_turned", "mosaic_apart",
                "mosaic_wrong_wild", "escapes", "escapes_but_one", "random", "mosaic",
                "escapes", "mosaic_wild"][k]
    _, specs = vault_scene(rng, DICE, scenario)
    _view, truth = render_view(rng, dice=specs, data=DICE)
    state = interpret(truth_reading(truth), DICE)
    escapes = any(r.escaped for r in state.robbers.values())
    if scenario in ("mosaic", "mosaic_wild"):
        assert len(state.complete_stages) == 1
    else:
        assert state.complete_stages == ()
    assert escapes == (scenario == "escapes")


def test_mosaic_stages_reports_pieces_seen_even_when_incomplete() -> None:
    dice = mosaic(4)[:2] + [die("red", "wild-4", (50, 50))]
    stages = mosaic_stages(reading(dice), DICE)
    assert stages[3].pieces_showing == (1, 2)
    assert stages[3].wilds_showing == 1
    assert not stages[3].complete
