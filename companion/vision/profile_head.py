"""The head of a calibration profile (``profile.toml``'s format, name, game, dice and
its own check), read without OpenCV or numpy: the referee's own process learns a
profile's dice from it when the camera runs in a process of its own, which loads the
whole profile, and decides from its ``[check]`` whether claims may be challenged;
``profile.load_profile`` reads every profile through it first, so the two cannot
disagree on what they check.

    profile_dice(path) -> DiceData
    profile_check(path) -> ProfileCheck | None     # None: the profile was never checked
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from companion.errors import CompanionError
from companion.vision.dice_data import (
    DiceData,
    DiceDataError,
    data_path,
    load_dice_data,
    read_toml,
)

PROFILE_FORMAT = 1
PROFILE_FILE = "profile.toml"
PASS_SHARE = 0.95  # a check passes with at least this share of its dice read right, surely


class ProfileError(CompanionError, ValueError):
    """A calibration profile that cannot be used; the message is one line."""


@dataclass(frozen=True)
class ProfileCheck:
    """The profile's own check (its optional ``[check]`` table): fresh rolls read back.

    passed: no die read wrong at ``sure`` or above, and at least 95% of the dice read
        right at ``sure`` or above: ``[camera] claims = "challenge"`` may be turned on.
    sure: the confidence from which a reading counts as sure (at least 0.5).
    dice: dice asked; right: read right at ``sure`` or above; unsure: read right below
        it, unread or without a face; wrong: read as another face (an extra die read
        with a face included). rounds: rolls read; when: ISO 8601 UTC.
    per_face / per_set: face (set) -> (asked, right at ``sure`` or above).
    """

    passed: bool
    sure: float
    dice: int
    right: int
    unsure: int
    wrong: int
    rounds: int
    when: str
    per_face: dict[str, tuple[int, int]]
    per_set: dict[str, tuple[int, int]] = field(default_factory=dict)

    def table(self) -> dict[str, Any]:
        """The ``[check]`` table as ``save_profile`` writes it."""
        out: dict[str, Any] = {
            "passed": self.passed, "sure": round(self.sure, 6), "dice": self.dice,
            "right": self.right, "unsure": self.unsure, "wrong": self.wrong,
            "rounds": self.rounds, "when": self.when,
            "per_face": {f: list(v) for f, v in self.per_face.items()},
        }
        if self.per_set:
            out["per_set"] = {s: list(v) for s, v in self.per_set.items()}
        return out


@dataclass
class ProfileHead:
    """What ``read_head`` checked: the parsed TOML, where it came from, and its keys."""

    raw: dict[str, Any]
    toml_path: Path
    directory: Path
    where: str
    fmt: int
    name: str
    learned: dict[str, Any] | None
    game: str
    override: dict[str, Any]
    dice: DiceData
    check: ProfileCheck | None = None


def checked_key(table: dict[str, Any], key: str, typ: Any, where: str) -> Any:
    """``table[key]`` when it is there and of type ``typ`` (an int passes for a float),
    else ProfileError naming ``where`` and the key."""
    if key not in table:
        raise ProfileError(f"{where}: missing key '{key}'")
    v = table[key]
    if typ is float and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool):
        raise ProfileError(f"{where}: key '{key}' has the wrong type ({type(v).__name__})")
    return v


def read_head(path: str | Path) -> ProfileHead:
    """A profile's TOML (its directory or its profile.toml) read and its head checked:
    format, name, the few-shot table's kind, game and the dice override (ProfileError
    in one line naming the file and key)."""
    p = Path(path)
    toml_path = p / PROFILE_FILE if p.is_dir() or p.suffix != ".toml" else p
    directory = toml_path.parent
    raw = read_toml(toml_path, ProfileError, "profile not found")
    where = str(toml_path)
    fmt = checked_key(raw, "format", int, where)
    if fmt != PROFILE_FORMAT:
        raise ProfileError(f"{where}: key 'format' = {fmt} is not supported (this version "
                           f"reads format {PROFILE_FORMAT})")
    name = checked_key(raw, "name", str, where)
    learned = raw.get("learned")
    if learned is not None and not isinstance(learned, dict):
        raise ProfileError(f"{where}: key 'learned' must be a table")
    if learned is not None and "mat" not in raw:
        raise ProfileError(f"{where}: holds few-shot prototypes only (from calibrate "
                           "--from-manifest); use it with `companion eval --profile`")
    game = raw.get("game", "vault_assault")
    if not isinstance(game, str) or not data_path(game).exists():
        raise ProfileError(f"{where}: key 'game' = {game!r} has no dice data file")
    override = raw.get("dice", {})
    if not isinstance(override, dict):
        raise ProfileError(f"{where}: key 'dice' must be a table")
    try:
        dice = load_dice_data(data_path(game), override=override)
    except DiceDataError as exc:
        raise ProfileError(f"{where}: [dice] override: {exc}") from exc

    check = parse_check(raw["check"], where) if "check" in raw else None
    return ProfileHead(raw, toml_path, directory, where, fmt, name, learned, game, override,
                       dice, check)


def _counts(table: Any, key: str, where: str) -> dict[str, tuple[int, int]]:
    """A table of name -> [asked, right], right at most asked, both whole and >= 0."""
    if not isinstance(table, dict):
        raise ProfileError(f"{where}: key '{key}' must be a table")
    out = {}
    for name, v in table.items():
        if (not isinstance(v, list) or len(v) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in v)
                or not 0 <= v[1] <= v[0]):
            raise ProfileError(f"{where}: key '{key}.{name}': expected [asked, right], "
                               "whole numbers with 0 <= right <= asked")
        out[str(name)] = (v[0], v[1])
    return out


def parse_check(table: Any, where: str) -> ProfileCheck:
    """The ``[check]`` table checked (ProfileError in one line naming the key)."""
    if not isinstance(table, dict):
        raise ProfileError(f"{where}: key 'check' must be a table")
    at = f"{where}: [check]"
    passed = checked_key(table, "passed", bool, at)
    sure = checked_key(table, "sure", float, at)
    if not (math.isfinite(sure) and 0.5 <= sure <= 1.0):
        raise ProfileError(f"{at}: key 'sure' = {sure} is out of range 0.5..1")
    n = {}
    for key in ("dice", "right", "unsure", "wrong", "rounds"):
        n[key] = checked_key(table, key, int, at)
        if n[key] < 0:
            raise ProfileError(f"{at}: key '{key}' = {n[key]} is negative")
    if n["right"] > n["dice"]:
        raise ProfileError(f"{at}: key 'right' = {n['right']} is more than dice = {n['dice']}")
    when = checked_key(table, "when", str, at)
    try:
        stamp = datetime.fromisoformat(when)
    except ValueError:
        stamp = None
    if stamp is None or stamp.utcoffset() != timedelta(0):
        raise ProfileError(f"{at}: key 'when' = {when!r} is not an ISO 8601 time in UTC")
    per_face = _counts(checked_key(table, "per_face", dict, at), "check.per_face", where)
    per_set = _counts(table.get("per_set", {}), "check.per_set", where)
    if passed and (n["dice"] == 0 or n["right"] < PASS_SHARE * n["dice"]):
        raise ProfileError(f"{at}: key 'passed' = true, but {n['right']} of {n['dice']} "
                           f"dice read right ({PASS_SHARE:.0%} needed)")
    return ProfileCheck(passed, float(sure), n["dice"], n["right"], n["unsure"], n["wrong"],
                        n["rounds"], when, per_face, per_set)


def profile_dice(path: str | Path) -> DiceData:
    """The dice a profile is for (its game's dice data with its override), read from its
    head alone: no face image is opened."""
    return read_head(path).dice


def profile_check(path: str | Path) -> ProfileCheck | None:
    """The profile's own check (its ``[check]`` table), read from its TOML alone: None when
    it was never checked. A ``[check]`` that is wrong is a one-line ProfileError."""
    return read_head(path).check
