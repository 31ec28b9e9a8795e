"""The head of a calibration profile (``profile.toml``'s format, name, game and dice),
read without OpenCV or numpy: the referee's own process learns a profile's dice from it
when the camera runs in a process of its own, which loads the whole profile;
``profile.load_profile`` reads every profile through it first, so the two cannot
disagree on what they check.
"""

from __future__ import annotations

from dataclasses import dataclass
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


class ProfileError(CompanionError, ValueError):
    """A calibration profile that cannot be used; the message is one line."""


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

    return ProfileHead(raw, toml_path, directory, where, fmt, name, learned, game, override,
                       dice)


def profile_dice(path: str | Path) -> DiceData:
    """The dice a profile is for (its game's dice data with its override), read from its
    head alone: no face image is opened."""
    return read_head(path).dice
