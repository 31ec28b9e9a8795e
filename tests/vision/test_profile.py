"""Calibration profiles (and the dice data they build on): round trip and bad input."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.dice_data import (
    DiceDataError,
    load_dice_data,
    parse_dice_data,
    read_toml,
)
from companion.vision.profile import (
    PROFILE_FILE,
    ProfileError,
    default_profile_path,
    dumps_toml,
    load_profile,
    save_profile,
)

SHIPPED = default_profile_path("synthetic")


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    dst = tmp_path / "prof"
    shutil.copytree(SHIPPED, dst)
    return dst


def edit(path: Path, old: str, new: str) -> None:
    toml = path / PROFILE_FILE
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))


# ---------------------------------------------------------------- dice data


def test_the_dice_data_holds_the_issues_dice() -> None:
    d = load_dice_data()
    assert sorted(d.sets) == ["black", "blue", "red", "white"]
    assert len(d.all_dice()) == 16
    assert d.kinds["robber"] == ("wires", "steal", "loot", "hostage", "backup", "escape")
    assert len(d.sets["black"].dice) == 5 and len(d.sets["white"].dice) == 5
    for k in range(1, 5):
        faces = d.kinds[f"alarm-{k}"]
        assert faces[:2] == ("alarm", "dye_pack")
        assert {d.piece(f) for f in faces[2:]} == {(s, k) for s in range(1, 5)}
    assert d.kinds["special"] == ("diamond", "dye_pack", "wild-1", "wild-2", "wild-3", "wild-4")
    assert sorted(d.sets["red"].dice + d.sets["blue"].dice) == sorted(
        ["alarm-1", "alarm-2", "alarm-3", "alarm-4", "special", "special"])
    assert d.wild("wild-3") == 3 and d.piece("escape") is None
    assert d.escape_face == "escape"
    for s in d.sets:
        for face in d.set_faces(s):
            assert d.glyph_for(face) is not None


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda r: r.pop("die_mm"), "die_mm"),
        (lambda r: r["kinds"]["robber"].update(faces=["a", "b"]), "kinds.robber.faces"),
        (lambda r: r["kinds"]["robber"].update(faces=["a"] * 6), "repeat"),
        (lambda r: r["sets"]["red"].update(dice=["nope"]), "sets.red.dice"),
        (lambda r: r["sets"]["red"].update(body=[1, 2]), "sets.red.body"),
        (lambda r: r.update(format=9), "format"),
        (lambda r: r["glyphs"]["wild-1"].update(picture="nowhere"), "glyphs.wild-1.picture"),
    ],
)
def test_bad_dice_data_names_the_key(mutate, needle: str) -> None:
    raw = read_toml(Path(load_dice_data().source))
    mutate(raw)
    with pytest.raises(DiceDataError) as err:
        parse_dice_data(raw, "dice.toml")
    msg = str(err.value)
    assert needle in msg and "dice.toml" in msg and "\n" not in msg


def test_unreadable_dice_data_file(tmp_path: Path) -> None:
    bad = tmp_path / "dice.toml"
    bad.write_text("die_mm = [")
    with pytest.raises(DiceDataError, match="not valid TOML"):
        load_dice_data(bad)
    with pytest.raises(DiceDataError, match="not found"):
        load_dice_data(tmp_path / "missing.toml")


# ---------------------------------------------------------------- profiles


def test_shipped_profile_loads_with_a_template_for_every_face() -> None:
    p = load_profile(SHIPPED)
    assert p.name == "synthetic" and p.format == 1
    for s in p.dice.sets:
        assert set(p.faces_of(s)) == set(p.dice.set_faces(s))
    for img in p.templates.values():
        assert img.shape == (p.template_px, p.template_px) and img.dtype == np.uint8
    assert set(p.set_colours) == {"red", "blue", "black", "white"}
    assert p.set_colours["red"][2] > 2 * p.set_colours["red"][1]  # redder than the mat


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    p = load_profile(SHIPPED)
    p.min_score = 0.71
    p.dice_override = {"kinds": {"robber": {"faces": ["a", "b", "c", "d", "e", "escape"]}}}
    # The override renames robber faces, so keep templates for the cop sets only.
    p.templates = {k: v for k, v in p.templates.items() if k[0] in ("red", "blue")}
    path = save_profile(p, tmp_path / "again")
    q = load_profile(path)
    assert q.templates.keys() == p.templates.keys()
    for k in p.templates:
        assert np.array_equal(q.templates[k], p.templates[k])
    assert q.set_colours.keys() == p.set_colours.keys()
    for k, v in p.set_colours.items():
        assert q.set_colours[k] == pytest.approx(v)
    assert q.mat_colour == pytest.approx(p.mat_colour)
    assert q.min_score == 0.71 and q.min_margin == p.min_margin
    assert q.dice.kinds["robber"][0] == "a"  # the override reached the dice data
    assert load_profile(tmp_path / "again").name == p.name  # directory works too


def test_dumps_toml_round_trips_nested_tables() -> None:
    doc = {"a": 1, "b": "x \"q\"", "t": {"c": [1.5, 2], "u": {"d": True}},
           "g": {"shapes": [{"circle": [0, 0, 0.5], "width": 0.2}]}}
    assert tomllib.loads(dumps_toml(doc)) == doc


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("format = 1", "format = 2", "'format'"),
        ("format = 1", "", "'format'"),
        ("[mat]\ncolour = [", "[mat]\nhue = [", "mat.colour"),
        ("min_score = ", "min_score = \"high\" #", "'min_score'"),
        ("template_px = 20", "template_px = 400", "template_px"),
        ("[sets.red]", "[sets.purple]", "sets.purple"),
        ("alarm = \"faces/red/alarm.png\"", "alarm = \"faces/red/gone.png\"", "faces.red.alarm"),
        ("alarm = \"faces/red/alarm.png\"", "alarm = 3", "faces.red.alarm"),
        ("game = \"vault_assault\"", "game = \"chess\"", "'game'"),
        ("name = \"synthetic\"", "name = \"synthetic\"\n[dice.sets.red]\ndice = [\"x\"]",
         "sets.red.dice"),
    ],
)
def test_corrupt_profile_gets_one_line_naming_the_key(copy: Path, old, new, needle) -> None:
    edit(copy, old, new)
    with pytest.raises(ProfileError) as err:
        load_profile(copy)
    msg = str(err.value)
    assert needle in msg and "\n" not in msg


def test_profile_that_is_not_toml(copy: Path) -> None:
    (copy / PROFILE_FILE).write_text("format = = 1\n")
    with pytest.raises(ProfileError, match=r"profile\.toml: not valid TOML"):
        load_profile(copy)


def test_missing_profile(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="profile not found"):
        load_profile(tmp_path / "nowhere")


def test_truncated_or_wrong_face_images_name_the_file(copy: Path) -> None:
    img = copy / "faces" / "black" / "escape.png"
    data = img.read_bytes()
    img.write_bytes(data[: len(data) // 2])
    with pytest.raises(ProfileError) as err:
        load_profile(copy)
    assert "escape.png" in str(err.value) and "faces.black.escape" in str(err.value)
    cv2.imwrite(str(img), np.zeros((12, 12), np.uint8))
    with pytest.raises(ProfileError, match="expected 20x20"):
        load_profile(copy)
    cv2.imwrite(str(img), np.full((20, 20), 128, np.uint8))
    with pytest.raises(ProfileError, match="blank"):
        load_profile(copy)


def test_learned_prototypes_extend_a_camera_profile(copy: Path, tmp_path: Path) -> None:
    from companion.vision.fewshot import save_fewshot

    assert load_profile(copy).prototypes is None  # a profile without [learned] as before
    protos = {"format": 1, "prototypes": {"escape": [1.0, 0.0], "alarm": [0.0, 1.0]}}
    save_fewshot(protos, copy)
    assert "[learned]" in (copy / PROFILE_FILE).read_text()
    p = load_profile(copy)
    assert p.prototypes is not None and set(p.prototypes["prototypes"]) == {"escape", "alarm"}
    assert load_profile(save_profile(p, tmp_path / "again")).prototypes == p.prototypes
    only = tmp_path / "only"
    save_fewshot(protos, only)
    with pytest.raises(ProfileError, match="few-shot prototypes only"):
        load_profile(only)
    edit(copy, 'prototypes = "prototypes.json"', 'prototypes = "gone.json"')
    with pytest.raises(ProfileError, match="gone.json"):
        load_profile(copy)
