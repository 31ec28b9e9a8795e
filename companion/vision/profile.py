"""Calibration profiles: what `companion calibrate` learnt about one table's dice.

A profile is a directory calibration/<name>/ holding profile.toml and one small
grayscale PNG per (set, face): the face as the camera saw it, upright, cropped to the
central ``template_span`` of the die edge and resampled to ``template_px`` square.
The format is documented in calibration/README.md and versioned by ``format``.

    load_profile(path) -> Profile          # path: the directory or its profile.toml
    save_profile(profile, directory) -> Path
    save_check(directory, check) -> Path   # rewrite only the [check] table
    Profile.templates[(set, face)] -> np.ndarray (uint8, template_px square)

Any problem loading a profile raises ProfileError with one line naming the file and
the key (or face image) that was wrong.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.vision.dice_data import DiceData
from companion.vision.profile_head import (  # noqa: F401 (importers find them here too)
    PASS_SHARE,
    PROFILE_FILE,
    PROFILE_FORMAT,
    ProfileCheck,
    ProfileError,
    parse_check,
    profile_check,
    read_head,
)
from companion.vision.profile_head import checked_key as _get

DEFAULT_TEMPLATE_PX = 20
DEFAULT_TEMPLATE_SPAN = 0.80
DEFAULT_MIN_SCORE = 0.75
DEFAULT_MIN_MARGIN = 0.12
REPO_CALIBRATION = Path(__file__).resolve().parents[2] / "calibration"


@dataclass
class Profile:
    name: str
    dice: DiceData
    mat_colour: tuple[float, float, float]  # BGR of the bare mat in the view
    set_colours: dict[str, tuple[float, float, float]]  # BGR body colour / mat colour
    templates: dict[tuple[str, str], np.ndarray]
    template_px: int = DEFAULT_TEMPLATE_PX
    template_span: float = DEFAULT_TEMPLATE_SPAN
    min_score: float = DEFAULT_MIN_SCORE
    min_margin: float = DEFAULT_MIN_MARGIN
    game: str = "vault_assault"
    dice_override: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    directory: Path | None = None
    format: int = PROFILE_FORMAT
    # Optional [learned] table: few-shot face prototypes (companion.vision.fewshot).
    prototypes: dict[str, Any] | None = None
    # Optional [check] table: the profile's own check (companion.vision.calibrate_check).
    check: ProfileCheck | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def faces_of(self, set_name: str) -> list[str]:
        return [f for (s, f) in self.templates if s == set_name]


# ---------------------------------------------------------------- TOML writing


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"cannot write {v!r} to TOML")
        return repr(round(v, 6))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    if k and all(c.isalnum() or c in "-_" for c in k):
        return k
    return _toml_value(k)


def dumps_toml(data: dict[str, Any], _prefix: str = "") -> str:
    """A small TOML writer for profiles: tables, scalars, arrays and inline tables."""
    lines: list[str] = []
    tables = []
    for k, v in data.items():
        if isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_toml_value(v)}")
    out = "\n".join(lines)
    for k, v in tables:
        name = f"{_prefix}.{_key(k)}" if _prefix else _key(k)
        has_scalars = any(not isinstance(x, dict) for x in v.values())
        body = dumps_toml(v, name)
        chunk = (f"[{name}]\n" if has_scalars or not v else "") + body
        out = (out + "\n\n" if out else "") + chunk.strip("\n")
    return out + ("\n" if not _prefix else "")


# ---------------------------------------------------------------- save / load


def template_path(set_name: str, face: str) -> str:
    return f"faces/{set_name}/{face}.png"


def save_profile(profile: Profile, directory: str | Path) -> Path:
    """Write profile.toml and the face images under ``directory``; returns the TOML path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    faces: dict[str, dict[str, str]] = {}
    for (set_name, face), img in sorted(profile.templates.items()):
        rel = template_path(set_name, face)
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(str(d / rel), img):
            raise ProfileError(f"{d / rel}: could not write the face image")
        faces.setdefault(set_name, {})[face] = rel
    doc: dict[str, Any] = {
        "format": PROFILE_FORMAT,
        "name": profile.name,
        "game": profile.game,
        "notes": profile.notes,
        "reader": {
            "template_px": profile.template_px,
            "template_span": profile.template_span,
            "min_score": profile.min_score,
            "min_margin": profile.min_margin,
        },
        "mat": {"colour": [float(c) for c in profile.mat_colour]},
        "sets": {s: {"colour": [float(c) for c in col]} for s, col in profile.set_colours.items()},
        "faces": faces,
    }
    if profile.dice_override:
        doc["dice"] = profile.dice_override
    if profile.prototypes:
        import json

        (d / "prototypes.json").write_text(json.dumps(profile.prototypes, indent=1) + "\n",
                                           encoding="utf-8")
        doc["learned"] = {"prototypes": "prototypes.json"}
    if profile.check is not None:
        doc["check"] = profile.check.table()
    path = d / PROFILE_FILE
    path.write_text(
        "# vault-companion calibration profile (format documented in calibration/README.md)\n"
        + dumps_toml(doc),
        encoding="utf-8",
    )
    profile.directory = d
    return path


_CHECK_HEADER = re.compile(r"\s*\[\s*check\s*[.\]]")


def save_check(directory: str | Path, check: ProfileCheck) -> Path:
    """Rewrite only the ``[check]`` table of the profile in ``directory`` (appended when
    it has none): every other line stays as it is. Returns the TOML path."""
    head = read_head(directory)
    text = head.toml_path.read_text(encoding="utf-8")
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skipping = bool(_CHECK_HEADER.match(line))
        if not skipping:
            kept.append(line)
    new = "".join(kept).rstrip("\n") + "\n\n" + dumps_toml({"check": check.table()})
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        after = {}
    rest = {k: v for k, v in head.raw.items() if k != "check"}
    if ({k: v for k, v in after.items() if k != "check"} != rest
            or after.get("check") != check.table()):
        raise ProfileError(f"{head.where}: its [check] table cannot be rewritten alone; "
                           "make the profile again")
    tmp = head.toml_path.with_name(head.toml_path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, head.toml_path)
    return head.toml_path


def _colour(v: Any, where: str) -> tuple[float, float, float]:
    if (
        not isinstance(v, list)
        or len(v) != 3
        or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in v)
        or not all(math.isfinite(c) and c >= 0 for c in v)
    ):
        raise ProfileError(f"{where}: expected three non-negative numbers")
    return (float(v[0]), float(v[1]), float(v[2]))


def load_profile(path: str | Path) -> Profile:
    """Load a profile from its directory (or its profile.toml)."""
    head = read_head(path)
    raw, directory, where = head.raw, head.directory, head.where
    fmt, name, learned, game = head.fmt, head.name, head.learned, head.game
    override, dice = head.override, head.dice

    reader = raw.get("reader", {})
    if not isinstance(reader, dict):
        raise ProfileError(f"{where}: key 'reader' must be a table")
    tpx = int(_get(reader, "template_px", int, f"{where}: [reader]"))
    span = _get(reader, "template_span", float, f"{where}: [reader]")
    min_score = _get(reader, "min_score", float, f"{where}: [reader]")
    min_margin = _get(reader, "min_margin", float, f"{where}: [reader]")
    if not 8 <= tpx <= 128:
        raise ProfileError(f"{where}: key 'reader.template_px' = {tpx} is out of range 8..128")
    if not 0.3 <= span <= 1.0:
        raise ProfileError(f"{where}: key 'reader.template_span' = {span} is out of range")

    mat = _get(raw, "mat", dict, where)
    mat_colour = _colour(mat.get("colour"), f"{where}: key 'mat.colour'")
    sets_raw = _get(raw, "sets", dict, where)
    set_colours = {}
    for s, table in sets_raw.items():
        if s not in dice.sets:
            raise ProfileError(f"{where}: key 'sets.{s}' names a set the dice data lacks")
        if not isinstance(table, dict):
            raise ProfileError(f"{where}: key 'sets.{s}' must be a table")
        set_colours[s] = _colour(table.get("colour"), f"{where}: key 'sets.{s}.colour'")

    faces_raw = _get(raw, "faces", dict, where)
    templates: dict[tuple[str, str], np.ndarray] = {}
    for s, table in faces_raw.items():
        if s not in set_colours:
            raise ProfileError(f"{where}: key 'faces.{s}' has no colour under [sets.{s}]")
        if not isinstance(table, dict):
            raise ProfileError(f"{where}: key 'faces.{s}' must be a table")
        for face, rel in table.items():
            key = f"faces.{s}.{face}"
            if not isinstance(rel, str):
                raise ProfileError(f"{where}: key '{key}' must be a file name")
            img_path = (directory / rel).resolve()
            if not img_path.is_file():
                raise ProfileError(f"{img_path}: face image for '{key}' is missing")
            img = cv2.imread(str(img_path), cv2.IMREAD_GRAYSCALE)
            if img is None:
                raise ProfileError(f"{img_path}: face image for '{key}' is unreadable")
            if img.shape != (tpx, tpx):
                raise ProfileError(
                    f"{img_path}: face image for '{key}' is {img.shape[1]}x{img.shape[0]}, "
                    f"expected {tpx}x{tpx} (reader.template_px)"
                )
            if float(img.std()) < 1.0:
                raise ProfileError(f"{img_path}: face image for '{key}' is blank")
            templates[(s, face)] = img
    if not templates:
        raise ProfileError(f"{where}: key 'faces' lists no face images")
    prototypes = None
    if learned is not None:
        from companion.vision.fewshot import FewShotError, load_fewshot

        rel = learned.get("prototypes")
        if not isinstance(rel, str):
            raise ProfileError(f"{where}: key 'learned.prototypes' must be a file name")
        try:
            prototypes = load_fewshot(directory / rel)
        except FewShotError as exc:
            raise ProfileError(str(exc)) from None

    return Profile(
        name=name,
        dice=dice,
        mat_colour=mat_colour,
        set_colours=set_colours,
        templates=templates,
        template_px=tpx,
        template_span=float(span),
        min_score=float(min_score),
        min_margin=float(min_margin),
        game=game,
        dice_override=override,
        notes=str(raw.get("notes", "")),
        directory=directory,
        format=fmt,
        prototypes=prototypes,
        check=head.check,
    )


def default_profile_path(name: str = "synthetic") -> Path:
    return REPO_CALIBRATION / name
