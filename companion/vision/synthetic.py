"""A synthetic camera: draws the play mat with its ArUco markers and dice of any set
(Vault Assault's symbol dice from the dice data file, or ordinary pip dice) lying at
random positions and angles, touching or not, under varied light, and returns the
image with the ground truth of every die. Deterministic from a seed.

Public API:
    render_scene(seed, dice=None, width=1280, height=720, perspective=True,
                 lighting="random", touching=0.5) -> (image_bgr, SceneTruth)
    render_view(seed, dice=None, ...) -> (image_bgr, SceneTruth)   # top-down mat view
    draw_mat(spec=DEFAULT_MAT, px_per_mm=...) -> image_bgr           # printable mat art
    face_texture(data, set_name, face, size=64) -> (image_bgr, alpha)

Angles are degrees, clockwise as seen in the image: 0 means the face's glyph is
upright with respect to the mat's top edge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.vision.dice_data import DiceData, load_dice_data
from companion.vision.mat_spec import ARUCO_DICT, DEFAULT_MAT, MatSpec

PIP_SET = "pip"
PIP_KIND = "pip"
PIP_FACES = ("1", "2", "3", "4", "5", "6")
PIP_BODY = (236, 230, 214)  # RGB, ordinary ivory dice with black pips
PIP_INK = (20, 20, 24)

MAT_RGB = (58, 128, 72)  # felt green: the printed mat's background
MAT_LINE_RGB = (44, 104, 58)  # seat-zone lines and labels, a shade darker
TABLE_RGB = (120, 88, 60)

GLYPH_HALF = 0.36  # the glyph box spans +-0.36 of the die edge around the centre
CORNER_RADIUS = 0.14  # of the die edge
BEVEL = 0.07  # of the die edge: rounded edges read darker from above


@dataclass(frozen=True)
class DieSpec:
    """What to put on the table. None means "pick at random"."""

    dice_set: str
    kind: str
    face: str | None = None
    xy_mm: tuple[float, float] | None = None
    angle: float | None = None


@dataclass(frozen=True)
class DieTruth:
    dice_set: str
    kind: str
    face: str
    centre: tuple[float, float]  # frame pixels
    box: tuple[int, int, int, int]  # frame pixels, x0 y0 x1 y1
    angle: float  # degrees clockwise, glyph up = 0
    mat_xy: tuple[float, float]  # mm
    corners: tuple[tuple[float, float], ...] = ()  # frame pixels, the die's outline


@dataclass(frozen=True)
class SceneTruth:
    width: int
    height: int
    homography: np.ndarray  # 3x3, mat mm -> frame pixels
    dice: tuple[DieTruth, ...] = ()
    lighting: dict[str, float] = field(default_factory=dict)
    die_mm: float = 16.0


# ---------------------------------------------------------------- mat artwork


def _aruco_dictionary() -> Any:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, ARUCO_DICT))


Box = tuple[float, float, float, float]
RGB = tuple[int, int, int]


def seat_zones_mm(spec: MatSpec = DEFAULT_MAT) -> list[tuple[str, Box]]:
    """(label, (x0, y0, x1, y1)) of the printed seat zones, in mm."""
    w, h = spec.width_mm, spec.height_mm
    inner = spec.margin_mm + spec.marker_mm + 8.0
    zh = 62.0
    return [
        ("COPS", (inner, h - spec.margin_mm - zh, w / 2 - 6.0, h - spec.margin_mm)),
        ("ROBBERS 1", (w / 2 + 6.0, h - spec.margin_mm - zh, w - inner, h - spec.margin_mm)),
        ("ROBBERS 2", (inner, spec.margin_mm, w / 2 - 6.0, spec.margin_mm + zh)),
        ("TEAM 2", (w / 2 + 6.0, spec.margin_mm, w - inner, spec.margin_mm + zh)),
    ]


def draw_mat(spec: MatSpec = DEFAULT_MAT, px_per_mm: float | None = None) -> np.ndarray:
    """The printable play mat (BGR): felt-green field, an ArUco marker in each corner
    on a white quiet zone, and the seat zones. Shared by `companion calibrate` (which
    prints it) and the renderer (which photographs it)."""
    ppm = spec.px_per_mm if px_per_mm is None else px_per_mm
    wpx, hpx = round(spec.width_mm * ppm), round(spec.height_mm * ppm)
    img = np.empty((hpx, wpx, 3), np.uint8)
    img[:] = MAT_RGB[::-1]
    dictionary = _aruco_dictionary()
    for mid, corners in spec.marker_corners_mm().items():
        (x0, y0), _, (x1, y1), _ = corners
        quiet = 4.0  # mm of white around each marker
        qx0, qy0 = round((x0 - quiet) * ppm), round((y0 - quiet) * ppm)
        qx1, qy1 = round((x1 + quiet) * ppm), round((y1 + quiet) * ppm)
        img[max(qy0, 0) : qy1, max(qx0, 0) : qx1] = 255
        side = round((x1 - x0) * ppm)
        marker = cv2.aruco.generateImageMarker(dictionary, mid, side)
        px0, py0 = round(x0 * ppm), round(y0 * ppm)
        img[py0 : py0 + side, px0 : px0 + side] = marker[:, :, None]
    line = MAT_LINE_RGB[::-1]
    thick = max(1, round(1.2 * ppm))
    for label, (x0, y0, x1, y1) in seat_zones_mm(spec):
        cv2.rectangle(
            img, (round(x0 * ppm), round(y0 * ppm)), (round(x1 * ppm), round(y1 * ppm)),
            line, thick, cv2.LINE_AA,
        )
        cv2.putText(
            img, label, (round((x0 + 4) * ppm), round((y0 + 12) * ppm)),
            cv2.FONT_HERSHEY_SIMPLEX, 0.26 * ppm, line, max(1, round(0.9 * ppm)), cv2.LINE_AA,
        )
    # Which way is up, for teaching faces upright.
    cx, ty = spec.width_mm / 2, spec.margin_mm + 80.0
    arrow = np.array([(cx, ty - 8), (cx + 6, ty), (cx + 2, ty), (cx + 2, ty + 8), (cx - 2, ty + 8),
                      (cx - 2, ty), (cx - 6, ty)]) * ppm
    cv2.fillPoly(img, [arrow.round().astype(np.int32)], line, cv2.LINE_AA)
    cv2.putText(img, "TOP", (round((cx - 8) * ppm), round((ty + 18) * ppm)),
                cv2.FONT_HERSHEY_SIMPLEX, 0.26 * ppm, line, max(1, round(0.9 * ppm)), cv2.LINE_AA)
    return img


# ---------------------------------------------------------------- face textures


def _draw_shapes(
    img: np.ndarray,
    shapes: list[dict[str, Any]],
    box: tuple[float, float, float, float],
    ink: tuple[int, int, int],
    body: tuple[int, int, int],
    shift: int = 4,
) -> None:
    """Draw shape specs (coordinates in [-1, 1]) into the pixel box (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    sx, sy = (x1 - x0) / 2.0, (y1 - y0) / 2.0
    mult = 1 << shift

    def pt(p: list[float]) -> tuple[int, int]:
        return (round((x0 + (p[0] + 1) * sx) * mult), round((y0 + (p[1] + 1) * sy) * mult))

    for shape in shapes:
        colour = body if shape.get("paint") == "body" else ink
        width = shape.get("width")
        thick = -1 if width is None else max(1, round(width * sx))
        if "circle" in shape:
            cx, cy, r = shape["circle"]
            cv2.circle(img, pt([cx, cy]), round(r * sx * mult), colour, thick, cv2.LINE_AA, shift)
        elif "rect" in shape:
            a, b, c, d = shape["rect"]
            pts = np.array([pt([a, b]), pt([c, b]), pt([c, d]), pt([a, d])], np.int32)
            if thick < 0:
                cv2.fillPoly(img, [pts], colour, cv2.LINE_AA, shift)
            else:
                cv2.polylines(img, [pts], True, colour, thick, cv2.LINE_AA, shift)
        elif "poly" in shape:
            pts = np.array([pt(p) for p in shape["poly"]], np.int32)
            if thick < 0:
                cv2.fillPoly(img, [pts], colour, cv2.LINE_AA, shift)
            else:
                cv2.polylines(img, [pts], True, colour, thick, cv2.LINE_AA, shift)
        elif "line" in shape:
            pts = np.array([pt(p) for p in shape["line"]], np.int32)
            cv2.polylines(img, [pts], False, colour, max(1, thick), cv2.LINE_AA, shift)


def _draw_glyph(
    img: np.ndarray,
    data: DiceData,
    glyph: dict[str, Any],
    box: tuple[float, float, float, float],
    ink: tuple[int, int, int],
    body: tuple[int, int, int],
) -> None:
    x0, y0, x1, y1 = box
    if "shapes" in glyph:
        _draw_shapes(img, glyph["shapes"], box, ink, body)
    if "picture" in glyph:
        shapes = data.pictures[glyph["picture"]]["shapes"]
        quarter = glyph.get("quarter")
        if quarter:
            # Quarter q of a picture drawn twice as large, so the quarter fills the box.
            w, h = x1 - x0, y1 - y0
            col, row = (quarter - 1) % 2, (quarter - 1) // 2
            big = (x0 - col * w, y0 - row * h, x0 + (2 - col) * w, y0 + (2 - row) * h)
            sub = img.copy()
            _draw_shapes(sub, shapes, big, ink, body)
            ix0, iy0, ix1, iy1 = (int(math.floor(v)) for v in (x0, y0, x1 + 1, y1 + 1))
            img[iy0:iy1, ix0:ix1] = sub[iy0:iy1, ix0:ix1]
        else:
            frame = float(glyph.get("frame", 0.0))
            if frame:
                fw = max(1, round(frame * (x1 - x0) / 2))
                h = fw / 2
                cv2.rectangle(
                    img, (round(x0 + h), round(y0 + h)), (round(x1 - h), round(y1 - h)), ink, fw,
                    cv2.LINE_AA,
                )
                pad = fw * 1.8
                box = (x0 + pad, y0 + pad, x1 - pad, y1 - pad)
            _draw_shapes(img, shapes, box, ink, body)


def _pip_shapes(face: str) -> list[dict[str, Any]]:
    n = int(face)
    a = 0.62
    spots = {
        1: [(0, 0)],
        2: [(-a, -a), (a, a)],
        3: [(-a, -a), (0, 0), (a, a)],
        4: [(-a, -a), (a, -a), (-a, a), (a, a)],
        5: [(-a, -a), (a, -a), (0, 0), (-a, a), (a, a)],
        6: [(-a, -a), (a, -a), (-a, 0), (a, 0), (-a, a), (a, a)],
    }[n]
    r = 0.3 if n == 1 else 0.22
    return [{"circle": [x, y, r]} for x, y in spots]


def _set_colours(data: DiceData, set_name: str) -> tuple[RGB, RGB]:
    if set_name == PIP_SET:
        return PIP_BODY, PIP_INK
    s = data.sets[set_name]
    return s.body, s.ink


@lru_cache(maxsize=512)
def _face_texture_cached(
    data_id: int, set_name: str, face: str, size: int
) -> tuple[np.ndarray, np.ndarray]:
    data = _DATA_REGISTRY[data_id]
    body_rgb, ink_rgb = _set_colours(data, set_name)
    body, ink = tuple(int(c) for c in body_rgb[::-1]), tuple(int(c) for c in ink_rgb[::-1])
    img = np.empty((size, size, 3), np.uint8)
    img[:] = body
    c = (size - 1) / 2.0
    half = GLYPH_HALF * size
    box = (c - half, c - half, c + half, c + half)
    if set_name == PIP_SET:
        _draw_shapes(img, _pip_shapes(face), (c - 0.4 * size, c - 0.4 * size, c + 0.4 * size,
                                              c + 0.4 * size), ink, body)
    else:
        glyph = data.glyph_for(face)
        if glyph is None:  # a face the data gives no drawing for: print its name
            cv2.putText(img, face[:3], (round(c - half), round(c + 0.1 * size)),
                        cv2.FONT_HERSHEY_SIMPLEX, size / 90.0, ink, max(1, size // 24),
                        cv2.LINE_AA)
        else:
            _draw_glyph(img, data, glyph, box, ink, body)
    # Rounded edges: darker towards the outline.
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    d_edge = np.minimum.reduce([xx, yy, size - 1 - xx, size - 1 - yy]) / size
    shade = np.clip(0.62 + 0.38 * d_edge / BEVEL, 0.62, 1.0)
    img = (img.astype(np.float32) * shade[:, :, None]).astype(np.uint8)
    alpha = np.zeros((size, size), np.uint8)
    r = round(CORNER_RADIUS * size)
    cv2.rectangle(alpha, (r, 0), (size - 1 - r, size - 1), 255, -1)
    cv2.rectangle(alpha, (0, r), (size - 1, size - 1 - r), 255, -1)
    for cx, cy in ((r, r), (size - 1 - r, r), (r, size - 1 - r), (size - 1 - r, size - 1 - r)):
        cv2.circle(alpha, (cx, cy), r, 255, -1, cv2.LINE_AA)
    img.setflags(write=False)
    alpha.setflags(write=False)
    return img, alpha


_DATA_REGISTRY: dict[int, DiceData] = {}


def face_texture(
    data: DiceData, set_name: str, face: str, size: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """The upright texture (BGR) of one face and its alpha mask, size x size pixels
    (drawn large, then shrunk, so small textures stay clean)."""
    _DATA_REGISTRY[id(data)] = data
    big = max(96, size * 3)
    tex, alpha = _face_texture_cached(id(data), set_name, face, big)
    if big == size:
        return tex, alpha
    return _shrunk(id(data), set_name, face, big, size)


@lru_cache(maxsize=1024)
def _shrunk(
    data_id: int, set_name: str, face: str, big: int, size: int
) -> tuple[np.ndarray, np.ndarray]:
    tex, alpha = _face_texture_cached(data_id, set_name, face, big)
    t = cv2.resize(tex, (size, size), interpolation=cv2.INTER_AREA)
    a = cv2.resize(alpha, (size, size), interpolation=cv2.INTER_AREA)
    t.setflags(write=False)
    a.setflags(write=False)
    return t, a


@lru_cache(maxsize=1)
def default_dice_data() -> DiceData:
    return load_dice_data()


# ---------------------------------------------------------------- scene layout


def all_dice_specs(data: DiceData | None = None) -> list[DieSpec]:
    """One spec per physical die of the game (Vault Assault: all 16)."""
    data = data or default_dice_data()
    return [DieSpec(s, k) for s, k in data.all_dice()]


def pip_dice_specs(n: int) -> list[DieSpec]:
    return [DieSpec(PIP_SET, PIP_KIND) for _ in range(n)]


def mosaic_specs(
    data: DiceData,
    stage: int,
    centre_mm: tuple[float, float],
    angle: float = 0.0,
    wild_position: int | None = None,
    gap_mm: float = 0.3,
) -> list[DieSpec]:
    """The four dice laid out as stage ``stage``'s assembled mosaic (one position
    optionally filled by the stage's wild)."""
    wild_face = next(f for f, s in data.wilds.items() if s == stage)
    out = []
    step = data.die_mm + gap_mm
    th = math.radians(angle)
    ca, sa = math.cos(th), math.sin(th)
    for face, (s, pos) in data.pieces.items():
        if s != stage:
            continue
        want = wild_face if pos == wild_position else face
        holder = next(
            ((set_name, kind) for set_name, kind in data.all_dice() if want in data.kinds[kind]),
            None,
        )
        if holder is None:
            raise ValueError(f"no die shows face {want!r}")
        u = (-0.5 if pos in (1, 3) else 0.5) * step
        v = (-0.5 if pos in (1, 2) else 0.5) * step
        x = centre_mm[0] + u * ca - v * sa
        y = centre_mm[1] + u * sa + v * ca
        out.append(DieSpec(holder[0], holder[1], want, (x, y), angle))
    return out


def _square(x: float, y: float, angle: float, side: float) -> np.ndarray:
    th = math.radians(angle)
    ca, sa = math.cos(th), math.sin(th)
    h = side / 2.0
    pts = [(-h, -h), (h, -h), (h, h), (-h, h)]
    return np.array([(x + u * ca - v * sa, y + u * sa + v * ca) for u, v in pts], np.float32)


def _overlaps(poly: np.ndarray, others: list[np.ndarray]) -> bool:
    for o in others:
        area, _ = cv2.intersectConvexConvex(poly, o)
        if area > 0.5:
            return True
    return False


def _free_area(spec: MatSpec, die_mm: float) -> tuple[float, float, float, float]:
    m = spec.margin_mm + die_mm * 0.75
    return (m, m, spec.width_mm - m, spec.height_mm - m)


def _marker_keepouts(spec: MatSpec) -> list[np.ndarray]:
    out = []
    for corners in spec.marker_corners_mm().values():
        (x0, y0), _, (x1, y1), _ = corners
        q = 6.0
        out.append(np.array([(x0 - q, y0 - q), (x1 + q, y0 - q), (x1 + q, y1 + q),
                             (x0 - q, y1 + q)], np.float32))
    return out


def layout(
    rng: np.random.Generator,
    specs: list[DieSpec],
    data: DiceData,
    spec: MatSpec = DEFAULT_MAT,
    touching: float = 0.5,
) -> list[tuple[DieSpec, str, float, float, float]]:
    """Give every spec a face, a position and an angle: (spec, face, x_mm, y_mm, angle).
    Dice never overlap; with probability ``touching`` a die is pushed against one
    already placed (often edge to edge, as players line dice up)."""
    side = data.die_mm
    placed: list[np.ndarray] = list(_marker_keepouts(spec))
    n_keep = len(placed)
    dice_polys: list[tuple[float, float, float]] = []
    out = []
    fx0, fy0, fx1, fy1 = _free_area(spec, side)
    fixed = [s for s in specs if s.xy_mm is not None]
    for s in fixed:
        ang = s.angle if s.angle is not None else float(rng.uniform(0, 360))
        placed.append(_square(s.xy_mm[0], s.xy_mm[1], ang, side * 0.98))
        dice_polys.append((s.xy_mm[0], s.xy_mm[1], ang))
    result: dict[int, tuple[float, float, float]] = {}
    for i, s in enumerate(specs):
        if s.xy_mm is not None:
            result[i] = (s.xy_mm[0], s.xy_mm[1], dice_polys[fixed.index(s)][2])
    for i, s in enumerate(specs):
        if i in result:
            continue
        pos = None
        for _attempt in range(200):
            ang = s.angle if s.angle is not None else float(rng.uniform(0, 360))
            if dice_polys and rng.random() < touching:
                bx, by, bang = dice_polys[int(rng.integers(len(dice_polys)))]
                if rng.random() < 0.6:  # edge to edge, lined up
                    ang = bang + float(rng.normal(0, 2.0)) if s.angle is None else ang
                    k = int(rng.integers(4))
                    dth = math.radians(bang + 90 * k)
                    dist = side * (1.0 + float(rng.uniform(0.0, 0.04)))
                    along = float(rng.uniform(-0.3, 0.3)) * side
                    x = bx + dist * math.cos(dth) - along * math.sin(dth)
                    y = by + dist * math.sin(dth) + along * math.cos(dth)
                else:  # any angle, slid in until it touches
                    dth = float(rng.uniform(0, 2 * math.pi))
                    lo, hi = side * 0.5, side * 1.6
                    for _ in range(10):
                        mid = (lo + hi) / 2
                        poly = _square(bx + mid * math.cos(dth), by + mid * math.sin(dth), ang,
                                       side)
                        if _overlaps(poly, placed[n_keep:]):
                            lo = mid
                        else:
                            hi = mid
                    x, y = bx + hi * math.cos(dth), by + hi * math.sin(dth)
            else:
                x, y = float(rng.uniform(fx0, fx1)), float(rng.uniform(fy0, fy1))
            if not (fx0 <= x <= fx1 and fy0 <= y <= fy1):
                continue
            poly = _square(x, y, ang, side * 0.98)
            if _overlaps(poly, placed):
                continue
            pos = (x, y, ang)
            break
        if pos is None:
            raise RuntimeError("could not place every die on the mat; too many dice?")
        placed.append(_square(pos[0], pos[1], pos[2], side * 0.98))
        dice_polys.append(pos)
        result[i] = pos
    for i, s in enumerate(specs):
        faces = PIP_FACES if s.dice_set == PIP_SET else data.kinds[s.kind]
        face = s.face if s.face is not None else faces[int(rng.integers(len(faces)))]
        x, y, ang = result[i]
        out.append((s, face, x, y, ang % 360.0))
    return out


# ---------------------------------------------------------------- lighting


def random_lighting(rng: np.random.Generator) -> dict[str, float]:
    return {
        "gain": float(rng.uniform(0.65, 1.25)),
        "gradient": float(rng.uniform(0.0, 0.3)),
        "gradient_dir": float(rng.uniform(0, 2 * math.pi)),
        "tint_r": float(rng.uniform(0.92, 1.08)),
        "tint_b": float(rng.uniform(0.92, 1.08)),
        "noise": float(rng.uniform(1.0, 4.0)),
        "blur": float(rng.uniform(0.0, 0.8)),
        "shadow": float(rng.uniform(0.0, 0.35)),
    }


FLAT_LIGHTING = {
    "gain": 1.0, "gradient": 0.0, "gradient_dir": 0.0, "tint_r": 1.0, "tint_b": 1.0,
    "noise": 1.0, "blur": 0.0, "shadow": 0.15,
}


def _apply_lighting(
    img: np.ndarray, light: dict[str, float], rng: np.random.Generator
) -> np.ndarray:
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    if light["blur"] > 0.05:
        f = cv2.GaussianBlur(f, (0, 0), light["blur"])
    d = light["gradient_dir"]
    xs = (np.arange(w, dtype=np.float32) / w - 0.5) * math.cos(d)
    ys = (np.arange(h, dtype=np.float32) / h - 0.5) * math.sin(d)
    field_ = light["gain"] * (1.0 + light["gradient"] * 2.0 * (ys[:, None] + xs[None, :]))
    gains = np.array([light["tint_b"], 1.0, light["tint_r"]], np.float32)
    f *= field_[:, :, None]
    f *= gains
    if light["noise"] > 0:
        f += rng.normal(0.0, light["noise"], size=f.shape).astype(np.float32)
    return np.clip(f, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------- scene


def _frame_homography(
    rng: np.random.Generator, spec: MatSpec, width: int, height: int, perspective: bool | float
) -> np.ndarray:
    w, h = spec.width_mm, spec.height_mm
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    border = 0.04
    scale = min(width * (1 - 2 * border) / w, height * (1 - 2 * border) / h)
    amount = 0.0 if perspective is False else (0.06 if perspective is True else float(perspective))
    if amount > 0:
        scale *= 1.0 - amount * 1.2
    cx = width / 2 + rng.uniform(-0.02, 0.02) * width
    cy = height / 2 + rng.uniform(-0.02, 0.02) * height
    rot = math.radians(rng.uniform(-3, 3)) if amount > 0 else 0.0
    dst = []
    for x, y in src:
        u, v = (x - w / 2) * scale, (y - h / 2) * scale
        u, v = u * math.cos(rot) - v * math.sin(rot), u * math.sin(rot) + v * math.cos(rot)
        if amount > 0:
            u += rng.uniform(-amount, amount) * width * 0.5
            v += rng.uniform(-amount, amount) * height * 0.5
        dst.append((cx + u, cy + v))
    return cv2.getPerspectiveTransform(src, np.array(dst, np.float32))


def _make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def render_scene(
    seed: int | np.random.Generator | None = 0,
    dice: list[DieSpec] | None = None,
    width: int = 1280,
    height: int = 720,
    perspective: bool | float = True,
    lighting: dict[str, float] | str = "random",
    touching: float = 0.5,
    data: DiceData | None = None,
    spec: MatSpec = DEFAULT_MAT,
    homography: np.ndarray | None = None,
) -> tuple[np.ndarray, SceneTruth]:
    """Render one camera frame of the mat with dice on it.

    seed: an int or a numpy Generator; the same seed gives the same frame.
    dice: what to draw (default: all of the game's dice, random faces and places).
    perspective: False for a straight top-down camera, True (or an amount ~0.02..0.1)
        for a tilted one. lighting: "random", "flat", or a dict like FLAT_LIGHTING.
    touching: the chance that each die is pushed against another.
    homography: mat mm -> frame pixels, overriding the camera pose.
    Returns (BGR uint8 image of height x width, SceneTruth).
    """
    rng = _make_rng(seed)
    data = data or default_dice_data()
    specs = all_dice_specs(data) if dice is None else list(dice)
    if lighting == "random":
        light = random_lighting(rng)
    elif lighting == "flat":
        light = dict(FLAT_LIGHTING)
    else:
        light = {**FLAT_LIGHTING, **dict(lighting)}  # type: ignore[arg-type]
    H = homography if homography is not None else _frame_homography(
        rng, spec, width, height, perspective
    )
    placed = layout(rng, specs, data, spec, touching)

    # Draw on a mat canvas at about the frame's scale, then photograph it.
    frame_scale = math.sqrt(abs(np.linalg.det(H[:2, :2]))) / abs(H[2, 2])  # px per mm
    ppm = max(spec.px_per_mm, min(4.0, frame_scale * 1.15))
    canvas = _mat_canvas(spec, round(ppm * 100)).copy()
    die_px = data.die_mm * ppm
    tex_size = max(8, round(die_px))
    if light["shadow"] > 0:
        shadow = np.zeros(canvas.shape[:2], np.float32)
        for _s, _face, x, y, ang in placed:
            poly = _square(x + 0.8, y + 1.0, ang, data.die_mm * 1.04) * ppm
            cv2.fillConvexPoly(shadow, poly.astype(np.int32), 1.0, cv2.LINE_AA)
        shadow = cv2.GaussianBlur(shadow, (0, 0), 1.2 * ppm)
        canvas = (canvas.astype(np.float32) * (1.0 - light["shadow"] * shadow[:, :, None])
                  ).astype(np.uint8)
    for s, face, x, y, ang in placed:
        tex, alpha = face_texture(data, s.dice_set, face, tex_size)
        _paste_die(canvas, tex, alpha, x * ppm, y * ppm, ang, die_px)

    to_canvas = np.diag([ppm, ppm, 1.0])
    M = H @ np.linalg.inv(to_canvas)
    table = np.array(TABLE_RGB[::-1], np.float64)
    frame = cv2.warpPerspective(canvas, M, (width, height), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=tuple(table))
    frame = _apply_lighting(frame, light, rng)

    truths = []
    for s, face, x, y, ang in placed:
        sq = _square(x, y, ang, data.die_mm).reshape(-1, 1, 2).astype(np.float64)
        corners = cv2.perspectiveTransform(sq, H).reshape(-1, 2)
        c = cv2.perspectiveTransform(np.array([[[x, y]]], np.float64), H).reshape(2)
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
        truths.append(DieTruth(
            dice_set=s.dice_set, kind=s.kind, face=face,
            centre=(float(c[0]), float(c[1])), box=(int(x0), int(y0), int(x1), int(y1)),
            angle=float(ang), mat_xy=(float(x), float(y)),
            corners=tuple((float(p[0]), float(p[1])) for p in corners),
        ))
    truth = SceneTruth(width=width, height=height, homography=H, dice=tuple(truths),
                       lighting=light, die_mm=data.die_mm)
    return frame, truth


def render_view(
    seed: int | np.random.Generator | None = 0,
    dice: list[DieSpec] | None = None,
    lighting: dict[str, float] | str = "random",
    touching: float = 0.5,
    data: DiceData | None = None,
    spec: MatSpec = DEFAULT_MAT,
) -> tuple[np.ndarray, SceneTruth]:
    """Render the top-down mat view itself (spec.view_size pixels, spec.px_per_mm):
    what `MatView.warp` would give for a perfect camera. Truth is in view pixels."""
    w, h = spec.view_size
    H = np.diag([spec.px_per_mm, spec.px_per_mm, 1.0])
    return render_scene(seed, dice, w, h, perspective=False, lighting=lighting,
                        touching=touching, data=data, spec=spec, homography=H)


@lru_cache(maxsize=8)
def _mat_canvas(spec: MatSpec, ppm_x100: int) -> np.ndarray:
    img = draw_mat(spec, ppm_x100 / 100.0)
    img.setflags(write=False)
    return img


def _paste_die(
    canvas: np.ndarray, tex: np.ndarray, alpha: np.ndarray, cx: float, cy: float,
    angle: float, die_px: float,
) -> None:
    size = tex.shape[0]
    scale = die_px / size
    half = die_px * 0.75
    x0, y0 = int(math.floor(cx - half)), int(math.floor(cy - half))
    x1, y1 = int(math.ceil(cx + half)), int(math.ceil(cy + half))
    h, w = canvas.shape[:2]
    x0c, y0c, x1c, y1c = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1c <= x0c or y1c <= y0c:
        return
    th = math.radians(angle)
    ca, sa = math.cos(th) * scale, math.sin(th) * scale
    c = (size - 1) / 2.0
    # texture (u, v) -> canvas ROI (x, y)
    M = np.array([[ca, -sa, cx - x0c - (ca * c - sa * c)],
                  [sa, ca, cy - y0c - (sa * c + ca * c)]], np.float64)
    rw, rh = x1c - x0c, y1c - y0c
    warped = cv2.warpAffine(tex, M, (rw, rh), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT)
    a = cv2.warpAffine(alpha, M, (rw, rh), flags=cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_CONSTANT).astype(np.float32) / 255.0
    roi = canvas[y0c:y1c, x0c:x1c].astype(np.float32)
    roi = roi * (1.0 - a[:, :, None]) + warped.astype(np.float32) * a[:, :, None]
    canvas[y0c:y1c, x0c:x1c] = roi.astype(np.uint8)


# ---------------------------------------------------------------- test scenes


SCENARIOS = ("random", "mosaic", "mosaic_wild", "mosaic_swapped", "mosaic_turned",
             "mosaic_apart", "mosaic_wrong_wild", "escapes", "escapes_but_one")


def vault_scene(
    rng: np.random.Generator, data: DiceData | None = None, scenario: str | None = None,
    spec: MatSpec = DEFAULT_MAT,
) -> tuple[str, list[DieSpec]]:
    """All of the game's dice, arranged to test the referee: an assembled mosaic (with
    or without a wild), near-misses (two pieces swapped, one turned, one pulled apart,
    the wrong stage's wild), a robber set all on Escape or all but one, or at random.
    Returns (scenario, specs)."""
    data = data or default_dice_data()
    scenario = scenario or SCENARIOS[int(rng.integers(len(SCENARIOS)))]
    fixed: list[DieSpec] = []
    if scenario.startswith("mosaic"):
        stage = int(rng.integers(1, data.stages + 1))
        wild = int(rng.integers(1, 5)) if scenario in ("mosaic_wild", "mosaic_wrong_wild") else None
        m = data.die_mm * 2
        centre = (float(rng.uniform(spec.margin_mm + spec.marker_mm + m,
                                    spec.width_mm - spec.margin_mm - spec.marker_mm - m)),
                  float(rng.uniform(spec.margin_mm + m, spec.height_mm - spec.margin_mm - m)))
        angle = float(rng.uniform(0, 360))
        fixed = mosaic_specs(data, stage, centre, angle, wild_position=wild,
                             gap_mm=float(rng.uniform(0.0, 1.5)))
        if scenario == "mosaic_swapped":
            i, j = (int(v) for v in rng.choice(4, size=2, replace=False))
            a, b = fixed[i], fixed[j]
            fixed[i] = DieSpec(a.dice_set, a.kind, a.face, b.xy_mm, a.angle)
            fixed[j] = DieSpec(b.dice_set, b.kind, b.face, a.xy_mm, b.angle)
        elif scenario == "mosaic_turned":
            i = int(rng.integers(4))
            a = fixed[i]
            fixed[i] = DieSpec(a.dice_set, a.kind, a.face, a.xy_mm,
                               (angle + 90.0 * int(rng.integers(1, 4))) % 360)
        elif scenario == "mosaic_apart":
            i = int(rng.integers(4))
            a = fixed[i]
            assert a.xy_mm is not None
            cx, cy = centre
            dx, dy = a.xy_mm[0] - cx, a.xy_mm[1] - cy
            k = float(rng.uniform(1.7, 2.4))
            fixed[i] = DieSpec(a.dice_set, a.kind, a.face, (cx + dx * k, cy + dy * k), a.angle)
        elif scenario == "mosaic_wrong_wild":
            other = [s for s in range(1, data.stages + 1) if s != stage]
            wrong = int(rng.choice(other))
            wrong_face = next(f for f, s in data.wilds.items() if s == wrong)
            fixed = [DieSpec(d.dice_set, d.kind, wrong_face, d.xy_mm, d.angle)
                     if data.wild(d.face or "") is not None else d for d in fixed]
    elif scenario.startswith("escapes"):
        robbers = data.sets_with_role("robber")
        set_name = robbers[int(rng.integers(len(robbers)))]
        kinds = data.sets[set_name].dice
        for n, kind in enumerate(kinds):
            face = data.escape_face
            if scenario == "escapes_but_one" and n == 0:
                face = str(rng.choice([f for f in data.kinds[kind] if f != data.escape_face]))
            fixed.append(DieSpec(set_name, kind, face))
    rest = all_dice_specs(data)
    for f in fixed:  # each physical die appears once
        for i, r in enumerate(rest):
            if (r.dice_set, r.kind) == (f.dice_set, f.kind):
                del rest[i]
                break
    return scenario, fixed + rest


def truth_reading(truth: SceneTruth, spec: MatSpec = DEFAULT_MAT) -> Any:
    """The ground truth as the FrameReading a perfect reader would give in the mat's
    top-down view (for scoring, and for checking the referee's rules)."""
    from companion.vision.types import DieReading, FrameReading

    dice = []
    ppm = spec.px_per_mm
    for d in truth.dice:
        sq = _square(d.mat_xy[0], d.mat_xy[1], d.angle, truth.die_mm) * ppm
        x0, y0 = np.floor(sq.min(axis=0)).astype(int)
        x1, y1 = np.ceil(sq.max(axis=0)).astype(int)
        dice.append(DieReading(d.dice_set, d.face, 1.0, (int(x0), int(y0), int(x1), int(y1)),
                               (d.mat_xy[0] * ppm, d.mat_xy[1] * ppm), d.angle, d.mat_xy))
    w, h = spec.view_size
    return FrameReading(w, h, tuple(dice), mat_found=True)
