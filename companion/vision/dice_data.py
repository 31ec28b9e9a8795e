"""The dice a game uses, loaded from data (companion/data/dice_<game>.toml).

Which sets exist, which dice each set holds, the six faces of each die kind, the
mosaic naming rules and the renderer's colours and glyphs all live in the data file;
a calibration profile may override any table of it (``override``). Nothing here knows
a face by name.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.errors import CompanionError

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_GAME = "vault_assault"
SUPPORTED_FORMATS = (1,)


class DiceDataError(CompanionError, ValueError):
    """The dice data (or a profile's override of it) is unusable; the message names
    the file and the key."""


@dataclass(frozen=True)
class DiceSet:
    name: str
    role: str
    dice: tuple[str, ...]  # die kinds, one entry per physical die
    body: tuple[int, int, int]  # RGB, renderer only
    ink: tuple[int, int, int]  # RGB, renderer only


@dataclass(frozen=True)
class DiceData:
    game: str
    die_mm: float
    kinds: dict[str, tuple[str, ...]]
    sets: dict[str, DiceSet]
    stages: int
    positions: tuple[str, ...]
    stage_names: tuple[str, ...]
    escape_face: str
    glyphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pictures: dict[str, dict[str, Any]] = field(default_factory=dict)
    pieces: dict[str, tuple[int, int]] = field(default_factory=dict)  # face -> (stage, pos)
    wilds: dict[str, int] = field(default_factory=dict)  # face -> stage
    picture_of_stage: dict[int, str] = field(default_factory=dict)
    source: str = ""

    def set_faces(self, set_name: str) -> tuple[str, ...]:
        """Every distinct face the dice of a set can show, in data order."""
        out: list[str] = []
        for kind in self.sets[set_name].dice:
            for face in self.kinds[kind]:
                if face not in out:
                    out.append(face)
        return tuple(out)

    def all_dice(self) -> list[tuple[str, str]]:
        """(set, kind) for every physical die, sets in data order."""
        return [(s.name, kind) for s in self.sets.values() for kind in s.dice]

    def piece(self, face: str) -> tuple[int, int] | None:
        """(stage, position) when ``face`` is a mosaic piece, else None."""
        return self.pieces.get(face)

    def wild(self, face: str) -> int | None:
        """The stage when ``face`` is a wild, else None."""
        return self.wilds.get(face)

    def glyph_for(self, face: str) -> dict[str, Any] | None:
        """What the renderer draws for a face: {"shapes": [...]} or
        {"picture": name, "quarter": 1..4} or a glyph with a ``picture`` and ``frame``."""
        if face in self.glyphs:
            return self.glyphs[face]
        if face in self.pieces:
            stage, pos = self.pieces[face]
            return {"picture": self.picture_of_stage[stage], "quarter": pos}
        return None

    def sets_with_role(self, role: str) -> list[str]:
        return [s.name for s in self.sets.values() if s.role == role]


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``: tables merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def data_path(game: str = DEFAULT_GAME) -> Path:
    return DATA_DIR / f"dice_{game}.toml"


def read_toml(path: Path, error: type[Exception] = DiceDataError,
              missing: str = "file not found") -> dict[str, Any]:
    """Parse a TOML file; any failure is a one-line ``error`` naming the file (a file
    that is not there: ``missing``). Calibration profiles read theirs so too."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise error(f"{path}: {missing}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read ({exc})") from exc


def load_dice_data(
    path: str | Path | None = None, override: dict[str, Any] | None = None
) -> DiceData:
    """Load the dice data file (default: Vault Assault), with an optional override
    table (a calibration profile's [dice] table) merged on top."""
    p = Path(path) if path is not None else data_path()
    raw = read_toml(p)
    source = str(p)
    if override:
        raw = deep_merge(raw, override)
        source += " + profile override"
    return parse_dice_data(raw, source)


def _need(raw: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if key not in raw:
        raise DiceDataError(f"{where}: missing key '{key}'")
    value = raw[key]
    if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
        raise DiceDataError(f"{where}: key '{key}' has the wrong type ({type(value).__name__})")
    return value


def _rgb(value: Any, where: str) -> tuple[int, int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(v, int) and 0 <= v <= 255 for v in value)
    ):
        raise DiceDataError(f"{where}: expected [r, g, b] with 0..255 integers")
    return (value[0], value[1], value[2])


def parse_dice_data(raw: dict[str, Any], source: str = "<dice data>") -> DiceData:
    fmt = raw.get("format", 1)
    if fmt not in SUPPORTED_FORMATS:
        raise DiceDataError(f"{source}: key 'format' = {fmt!r} is not supported")
    die_mm = float(_need(raw, "die_mm", (int, float), source))
    if not 4.0 <= die_mm <= 60.0:
        raise DiceDataError(f"{source}: key 'die_mm' = {die_mm} is out of range 4..60")

    kinds_raw = _need(raw, "kinds", dict, source)
    kinds: dict[str, tuple[str, ...]] = {}
    for name, table in kinds_raw.items():
        where = f"{source}: kinds.{name}"
        if not isinstance(table, dict):
            raise DiceDataError(f"{where}: expected a table")
        faces = _need(table, "faces", list, where)
        if len(faces) != 6 or not all(isinstance(f, str) and f for f in faces):
            raise DiceDataError(f"{where}.faces: expected six face names")
        if len(set(faces)) != 6:
            raise DiceDataError(f"{where}.faces: face names repeat")
        kinds[name] = tuple(faces)

    sets_raw = _need(raw, "sets", dict, source)
    sets: dict[str, DiceSet] = {}
    for name, table in sets_raw.items():
        where = f"{source}: sets.{name}"
        if not isinstance(table, dict):
            raise DiceDataError(f"{where}: expected a table")
        dice = _need(table, "dice", list, where)
        for kind in dice:
            if kind not in kinds:
                raise DiceDataError(f"{where}.dice: unknown die kind {kind!r}")
        if not dice:
            raise DiceDataError(f"{where}.dice: a set needs at least one die")
        sets[name] = DiceSet(
            name=name,
            role=str(table.get("role", "")),
            dice=tuple(dice),
            body=_rgb(table.get("body", [128, 128, 128]), f"{where}.body"),
            ink=_rgb(table.get("ink", [255, 255, 255]), f"{where}.ink"),
        )
    if not sets:
        raise DiceDataError(f"{source}: key 'sets' is empty")

    mosaic = raw.get("mosaic", {})
    if not isinstance(mosaic, dict):
        raise DiceDataError(f"{source}: key 'mosaic' must be a table")
    stages = int(mosaic.get("stages", 0))
    positions = tuple(mosaic.get("positions", ["top-left", "top-right", "bottom-left",
                                               "bottom-right"]))
    if len(positions) != 4:
        raise DiceDataError(f"{source}: mosaic.positions: expected four positions")
    stage_names = tuple(mosaic.get("stage_names", [f"Stage {s}" for s in range(1, stages + 1)]))
    piece_fmt = str(mosaic.get("piece_face", "piece-{stage}-{position}"))
    wild_fmt = str(mosaic.get("wild_face", "wild-{stage}"))
    picture_fmt = str(mosaic.get("picture", "stage-{stage}"))
    pieces: dict[str, tuple[int, int]] = {}
    wilds: dict[str, int] = {}
    picture_of_stage: dict[int, str] = {}
    try:
        for s in range(1, stages + 1):
            for k in range(1, 5):
                pieces[piece_fmt.format(stage=s, position=k)] = (s, k)
            wilds[wild_fmt.format(stage=s)] = s
            picture_of_stage[s] = picture_fmt.format(stage=s)
    except (KeyError, IndexError, ValueError) as exc:
        raise DiceDataError(f"{source}: mosaic face pattern is malformed ({exc})") from exc

    escape = raw.get("escape", {})
    escape_face = str(escape.get("face", "escape")) if isinstance(escape, dict) else "escape"

    glyphs = raw.get("glyphs", {})
    pictures = raw.get("pictures", {})
    for tname, table in (("glyphs", glyphs), ("pictures", pictures)):
        if not isinstance(table, dict):
            raise DiceDataError(f"{source}: key '{tname}' must be a table")
        for gname, g in table.items():
            if not isinstance(g, dict):
                raise DiceDataError(f"{source}: {tname}.{gname}: expected a table")
            if "shapes" not in g and "picture" not in g:
                raise DiceDataError(f"{source}: {tname}.{gname}: needs 'shapes' or 'picture'")
            if "picture" in g and g["picture"] not in pictures:
                raise DiceDataError(
                    f"{source}: {tname}.{gname}.picture: unknown picture {g['picture']!r}"
                )

    return DiceData(
        game=str(raw.get("game", "")),
        die_mm=die_mm,
        kinds=kinds,
        sets=sets,
        stages=stages,
        positions=positions,
        stage_names=stage_names,
        escape_face=escape_face,
        glyphs=glyphs,
        pictures=pictures,
        pieces=pieces,
        wilds=wilds,
        picture_of_stage=picture_of_stage,
        source=source,
    )
