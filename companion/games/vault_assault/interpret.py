"""What a settled reading means for Vault Assault, as pure functions over a FrameReading.

    interpret(reading, dice=None) -> TableState
        .stages: per mosaic stage, the pieces showing, the wilds showing, the best 2x2
                 arrangement found, and whether the stage's mosaic is assembled;
        .complete_stages: the stages assembled right now;
        .robbers: per robber set, how many dice show each face, how many are unknown,
                  and whether every die of the set shows Escape.
    stage_complete(reading, stage) -> bool
    escaped(reading, set_name) -> bool        # e.g. five Escapes showing

The rules (from the dice data): die k of the cops' alarm dice holds piece k (1 top-left,
2 top-right, 3 bottom-left, 4 bottom-right) of every stage's mosaic; a stage's mosaic is
assembled when its four pieces lie in a 2x2 arrangement, each in its place, one of them
possibly replaced by that stage's wild.

Conservative by design: a die counts only when its face was read (not "unknown") with
at least ``min_confidence``, by a set that really owns that face. Pieces must agree on
their orientation (their glyphs all point the same way, within ``angle_tolerance``)
and sit side by side where the arrangement puts them: neighbours 0.9..1.3 die edges
apart, sliding past each other by at most ``place_tolerance`` of a die edge.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from companion.vision.dice_data import DiceData, load_dice_data
from companion.vision.types import UNKNOWN, DieReading, FrameReading

MIN_CONFIDENCE = 0.5
ANGLE_TOLERANCE = 20.0  # degrees between any piece and the mosaic's orientation
PLACE_TOLERANCE = 0.2  # die edges two neighbours may slide past each other
MIN_SPACING = 0.9  # die edges between neighbouring centres (1.0 = touching)
MAX_SPACING = 1.3


@dataclass(frozen=True)
class MosaicStage:
    stage: int
    name: str
    pieces_showing: tuple[int, ...]  # positions whose piece is read somewhere on the table
    wilds_showing: int
    placed: tuple[int, ...]  # positions filled in the best arrangement found (wild included)
    wild_used: bool
    complete: bool


@dataclass(frozen=True)
class RobberSet:
    dice_set: str
    dice: int  # dice in the set (from the dice data)
    faces: dict[str, int]  # face -> dice showing it (read faces only)
    unknown: int  # dice of the set whose face could not be read
    escaped: bool  # every die of the set shows the escape face


@dataclass(frozen=True)
class TableState:
    stages: tuple[MosaicStage, ...]
    complete_stages: tuple[int, ...]
    robbers: dict[str, RobberSet] = field(default_factory=dict)

    @property
    def highest_complete_stage(self) -> int:
        """The last stage assembled in order 1, 2, ... (0: none)."""
        n = 0
        for s in sorted(self.complete_stages):
            if s != n + 1:
                break
            n = s
        return n


@lru_cache(maxsize=1)
def _default_dice() -> DiceData:
    return load_dice_data()


def _owners(dice: DiceData) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for set_name, kind in dice.all_dice():
        for face in dice.kinds[kind]:
            out.setdefault(face, set()).add(set_name)
    return out


def counted(reading: FrameReading, dice: DiceData, min_confidence: float = MIN_CONFIDENCE
            ) -> list[DieReading]:
    """The dice whose reading can be trusted: face read, confident, set owns the face."""
    owners = _owners(dice)
    return [
        d for d in reading.dice
        if d.face != UNKNOWN and d.dice_set != UNKNOWN and d.confidence >= min_confidence
        and d.dice_set in owners.get(d.face, ())
    ]


def _position(d: DieReading) -> tuple[float, float]:
    return d.mat_xy if d.mat_xy is not None else d.centre


def _side(dice_used: list[DieReading], dice: DiceData) -> float:
    """One die edge in the units of _position."""
    if all(d.mat_xy is not None for d in dice_used):
        return dice.die_mm
    sides = []
    for d in dice_used:
        x0, y0, x1, y1 = d.box
        th = math.radians(d.angle)
        spread = abs(math.cos(th)) + abs(math.sin(th))
        sides.append(((x1 - x0) + (y1 - y0)) / 2.0 / spread)
    sides.sort()
    return sides[len(sides) // 2]


def _angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _circular_mean(angles: list[float]) -> float:
    s = sum(math.sin(math.radians(a)) for a in angles)
    c = sum(math.cos(math.radians(a)) for a in angles)
    return math.degrees(math.atan2(s, c)) % 360.0


def _arrangement_ok(
    by_pos: dict[int, DieReading], pieces: set[int], dice: DiceData,
    angle_tolerance: float, place_tolerance: float,
) -> bool:
    """Do these four dice (position -> die) form the 2x2 mosaic? Pieces (not the wild)
    set the orientation."""
    theta = _circular_mean([by_pos[p].angle for p in pieces])
    if any(_angle_diff(by_pos[p].angle, theta) > angle_tolerance for p in pieces):
        return False
    side = _side(list(by_pos.values()), dice)
    if side <= 0:
        return False
    pts = {p: _position(d) for p, d in by_pos.items()}
    cx = sum(x for x, _ in pts.values()) / 4.0
    cy = sum(y for _, y in pts.values()) / 4.0
    th = math.radians(theta)
    ca, sa = math.cos(th), math.sin(th)
    local = {}
    for p, (x, y) in pts.items():
        dx, dy = (x - cx) / side, (y - cy) / side
        local[p] = (dx * ca + dy * sa, -dx * sa + dy * ca)  # rotate by -theta
    # Neighbours side by side: 1-2 and 3-4 across, 1-3 and 2-4 down, each about one die
    # edge apart (touching, or a small gap) and not sliding past each other.
    for a, b, axis in ((1, 2, 0), (3, 4, 0), (1, 3, 1), (2, 4, 1)):
        step = (local[b][0] - local[a][0], local[b][1] - local[a][1])
        along, across = step[axis], step[1 - axis]
        if not MIN_SPACING <= along <= MAX_SPACING or abs(across) > place_tolerance:
            return False
    return True


def mosaic_stages(
    reading: FrameReading, dice: DiceData | None = None, *,
    min_confidence: float = MIN_CONFIDENCE, angle_tolerance: float = ANGLE_TOLERANCE,
    place_tolerance: float = PLACE_TOLERANCE,
) -> tuple[MosaicStage, ...]:
    dice = dice or _default_dice()
    good = counted(reading, dice, min_confidence)
    out = []
    for stage in range(1, dice.stages + 1):
        by_pos: dict[int, list[DieReading]] = {k: [] for k in range(1, 5)}
        wilds: list[DieReading] = []
        for d in good:
            piece = dice.piece(d.face)
            if piece is not None and piece[0] == stage:
                by_pos[piece[1]].append(d)
            elif dice.wild(d.face) == stage:
                wilds.append(d)
        showing = tuple(k for k in range(1, 5) if by_pos[k])
        best: tuple[int, ...] = ()
        wild_used = False
        complete = False
        # Every way to fill the four places: a piece each, or one place by a wild.
        options = []
        options.append((None, [by_pos[k] for k in range(1, 5)]))
        for missing in range(1, 5):
            if wilds:
                options.append((missing, [wilds if k == missing else by_pos[k]
                                          for k in range(1, 5)]))
        for missing, lists in options:
            if any(not lst for lst in lists):
                continue
            for combo in itertools.product(*lists):
                if len({id(d) for d in combo}) < 4:
                    continue
                chosen = dict(zip(range(1, 5), combo, strict=True))
                pieces = {k for k in range(1, 5) if k != missing}
                if _arrangement_ok(chosen, pieces, dice, angle_tolerance, place_tolerance):
                    complete = True
                    best = (1, 2, 3, 4)
                    wild_used = missing is not None
                    break
            if complete:
                break
        if not complete:
            best = showing
        name = dice.stage_names[stage - 1] if stage - 1 < len(dice.stage_names) else ""
        out.append(MosaicStage(stage, name, showing, len(wilds), best, wild_used, complete))
    return tuple(out)


def robber_sets(
    reading: FrameReading, dice: DiceData | None = None, *,
    min_confidence: float = MIN_CONFIDENCE,
) -> dict[str, RobberSet]:
    dice = dice or _default_dice()
    good = {id(d) for d in counted(reading, dice, min_confidence)}
    out = {}
    for set_name in dice.sets_with_role("robber"):
        mine = [d for d in reading.dice if d.dice_set == set_name]
        faces = Counter(d.face for d in mine if id(d) in good)
        unknown = len(mine) - sum(faces.values())
        n = len(dice.sets[set_name].dice)
        out[set_name] = RobberSet(
            set_name, n, dict(faces), unknown, faces.get(dice.escape_face, 0) >= n
        )
    return out


def interpret(reading: FrameReading, dice: DiceData | None = None, *,
              min_confidence: float = MIN_CONFIDENCE) -> TableState:
    dice = dice or _default_dice()
    stages = mosaic_stages(reading, dice, min_confidence=min_confidence)
    return TableState(
        stages=stages,
        complete_stages=tuple(s.stage for s in stages if s.complete),
        robbers=robber_sets(reading, dice, min_confidence=min_confidence),
    )


def stage_complete(reading: FrameReading, stage: int, dice: DiceData | None = None) -> bool:
    return any(s.stage == stage and s.complete for s in mosaic_stages(reading, dice))


def escaped(reading: FrameReading, set_name: str, dice: DiceData | None = None) -> bool:
    """Every die of the robber set shows the escape face (Vault Assault: five Escapes)."""
    sets = robber_sets(reading, dice)
    return set_name in sets and sets[set_name].escaped
