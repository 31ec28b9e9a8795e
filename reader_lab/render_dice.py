"""Heavily randomised rendered scenes of pip dice, for training the learned reader.

``synthetic.py`` draws the project's own mat and ivory dice for the tests; this module
draws what the box may meet at someone else's table: dice of any colour (marbled,
translucent, black with white pips, coloured pips, square or ring pips), any size from
about 12 px, seen from above or obliquely (a visible side with its own pips; or, with
``cube``, each die a cube one camera sees from about 20-90 degrees above the table), with
shadows, uneven light, mats, wood, cloth, paper, clutter and a hand now and then, then
perspective, blur, noise and JPEG. Every scene comes with its truth: one box and the top
face per die. Deterministic for a seed. numpy + OpenCV only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

_A = 0.5
PIP_SPOTS = {
    1: [(0.0, 0.0)],
    2: [(-_A, -_A), (_A, _A)],
    3: [(-_A, -_A), (0.0, 0.0), (_A, _A)],
    4: [(-_A, -_A), (_A, -_A), (-_A, _A), (_A, _A)],
    5: [(-_A, -_A), (_A, -_A), (0.0, 0.0), (-_A, _A), (_A, _A)],
    6: [(-_A, -_A), (_A, -_A), (-_A, 0.0), (_A, 0.0), (-_A, _A), (_A, _A)],
}


@dataclass(frozen=True)
class RenderedDie:
    face: int
    box: tuple[float, float, float, float]


def _colour(rng: np.random.Generator) -> np.ndarray:
    """A die body colour: white/ivory, black, grey or any saturated hue."""
    kind = rng.random()
    if kind < 0.3:
        v = rng.uniform(200, 255)
        return np.array([v - rng.uniform(0, 30), v - rng.uniform(0, 15), v], np.float32)
    if kind < 0.45:
        return np.full(3, rng.uniform(10, 70), np.float32)
    if kind < 0.5:
        return np.full(3, rng.uniform(90, 180), np.float32)
    hsv = np.uint8([[[rng.integers(0, 180), rng.integers(90, 256), rng.integers(60, 256)]]])
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _pip_colour(rng: np.random.Generator, body: np.ndarray) -> np.ndarray:
    lum = float(body.mean())
    r = rng.random()
    if r < 0.55:
        return np.full(3, rng.uniform(0, 50) if lum > 110 else rng.uniform(200, 255), np.float32)
    if r < 0.75:
        # coloured pips (red, gold, blue...) that differ from the body
        for _ in range(5):
            c = _colour(rng)
            if abs(float(c.mean()) - lum) > 50:
                return c
        return np.full(3, 0 if lum > 110 else 255, np.float32)
    # low contrast pips (engraved, same hue darker/lighter)
    return np.clip(body * (rng.uniform(0.3, 0.6) if lum > 90 else rng.uniform(1.8, 3.0)), 0, 255)


def _noise_field(rng: np.random.Generator, h: int, w: int, scale: float) -> np.ndarray:
    sh, sw = max(2, int(h / scale)), max(2, int(w / scale))
    small = rng.random((sh, sw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    base = _colour(rng) if rng.random() < 0.6 else np.full(3, rng.uniform(20, 240), np.float32)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    kind = rng.integers(0, 5)
    if kind == 0:  # felt / cloth: fine noise
        img += rng.normal(0, rng.uniform(2, 12), (h, w, 1)).astype(np.float32)
    elif kind == 1:  # wood grain: stretched noise
        f = _noise_field(rng, h, w // 8 + 2, rng.uniform(2, 6))
        f = cv2.resize(f, (w, h))
        img *= (0.75 + 0.5 * f)[..., None]
        if rng.random() < 0.5:
            img = np.ascontiguousarray(np.rot90(img)) if h == w else img
    elif kind == 2:  # mottled: two colours blended by low-frequency noise
        other = _colour(rng)
        f = _noise_field(rng, h, w, rng.uniform(20, 120))[..., None]
        img = img * f + other * (1 - f)
    elif kind == 3:  # paper / plain with a gradient
        gy = np.linspace(rng.uniform(0.6, 1.0), rng.uniform(0.6, 1.0), h, dtype=np.float32)
        img *= gy[:, None, None]
    else:  # board game: big patches of colour
        for _ in range(rng.integers(2, 8)):
            x0, y0 = rng.integers(0, w), rng.integers(0, h)
            x1, y1 = x0 + rng.integers(20, w), y0 + rng.integers(20, h)
            cv2.rectangle(img, (int(x0), int(y0)), (int(x1), int(y1)),
                          _colour(rng).tolist(), -1)
    return img


def _clutter(rng: np.random.Generator, img: np.ndarray, n: int) -> None:
    """Things that are not dice: discs (pips alone), tokens, cards, lines, text, a hand."""
    h, w = img.shape[:2]
    for _ in range(n):
        c = _colour(rng).tolist()
        kind = rng.integers(0, 6)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        s = int(rng.integers(4, max(6, w // 6)))
        if kind == 0:
            cv2.circle(img, (x, y), max(2, s // 3), c, -1, cv2.LINE_AA)
        elif kind == 1:
            cv2.rectangle(img, (x, y), (x + s, y + int(s * rng.uniform(0.3, 1.8))), c, -1)
        elif kind == 2:
            cv2.line(img, (x, y), (int(rng.integers(0, w)), int(rng.integers(0, h))), c,
                     int(rng.integers(1, 5)), cv2.LINE_AA)
        elif kind == 3:
            pts = (rng.random((int(rng.integers(3, 8)), 2)) * s + [x, y]).astype(np.int32)
            cv2.polylines(img, [pts], False, c, int(rng.integers(1, 3)), cv2.LINE_AA)
        elif kind == 4:  # a hand / arm: a big skin-toned blob from an edge
            skin = np.array([rng.uniform(60, 190), rng.uniform(90, 200), rng.uniform(140, 240)])
            cx = int(rng.choice([0, w]))
            cv2.ellipse(img, (cx, y), (int(w * rng.uniform(0.1, 0.3)), int(h * 0.08)),
                        float(rng.uniform(-40, 40)), 0, 360, skin.tolist(), -1, cv2.LINE_AA)
        else:  # a ring / token
            cv2.circle(img, (x, y), max(3, s // 2), c, int(rng.integers(1, 4)), cv2.LINE_AA)


def _rounded_square(side: int, radius: float) -> np.ndarray:
    m = np.zeros((side, side), np.uint8)
    r = int(max(1, radius * side))
    cv2.rectangle(m, (r, 0), (side - 1 - r, side - 1), 255, -1)
    cv2.rectangle(m, (0, r), (side - 1, side - 1 - r), 255, -1)
    for cx, cy in ((r, r), (side - 1 - r, r), (r, side - 1 - r), (side - 1 - r, side - 1 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return m


def die_face(rng: np.random.Generator, face: int, side: int, body: np.ndarray,
             pip: np.ndarray, style: dict) -> tuple[np.ndarray, np.ndarray]:
    """One die's top face (side x side, BGR float) and its alpha mask (0..1)."""
    ss = side * 4  # draw 4x, shrink: smooth edges at any size
    mask = _rounded_square(ss, style["radius"])
    img = np.empty((ss, ss, 3), np.float32)
    img[:] = body
    if style["marble"]:
        f = _noise_field(rng, ss, ss, rng.uniform(6, 30))
        f = np.clip((f - 0.5) * rng.uniform(2, 6) + 0.5, 0.3, 1)[..., None]
        img = img * f + style["marble_colour"] * (1 - f)
    # shading: brighter centre, darker bevel
    yy, xx = np.mgrid[0:ss, 0:ss].astype(np.float32) / ss - 0.5
    d = np.maximum(np.abs(xx), np.abs(yy))
    img *= (1.0 - style["bevel"] * np.clip((d - 0.38) / 0.12, 0, 1))[..., None]
    spread = style["spread"]
    r_pip = style["pip_r"] * (1.5 if face == 1 and rng.random() < 0.5 else 1.0)
    for sx, sy in PIP_SPOTS[face]:
        cx, cy = (0.5 + sx * spread) * ss, (0.5 + sy * spread) * ss
        rad = int(r_pip * ss)
        if style["pip_shape"] == 0:
            cv2.circle(img, (int(cx), int(cy)), rad, pip.tolist(), -1, cv2.LINE_AA)
        elif style["pip_shape"] == 1:
            cv2.rectangle(img, (int(cx - rad), int(cy - rad)), (int(cx + rad), int(cy + rad)),
                          pip.tolist(), -1)
        elif style["pip_shape"] == 2:
            cv2.circle(img, (int(cx), int(cy)), rad, pip.tolist(), max(2, rad // 3), cv2.LINE_AA)
        else:  # engraved: dark rim, pip colour inside
            cv2.circle(img, (int(cx), int(cy)), rad, (body * 0.4).tolist(), -1, cv2.LINE_AA)
            cv2.circle(img, (int(cx), int(cy)), int(rad * 0.75), pip.tolist(), -1, cv2.LINE_AA)
    img = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(mask, (side, side), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    return img, alpha


def _paste(canvas: np.ndarray, patch: np.ndarray, alpha: np.ndarray, quad: np.ndarray) -> None:
    """Warp a square patch onto the canvas at the four corners ``quad`` (TL,TR,BR,BL)."""
    h, w = canvas.shape[:2]
    s = patch.shape[0]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return
    src = np.float32([[0, 0], [s, 0], [s, s], [0, s]])
    m = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(patch, m, size, flags=cv2.INTER_LINEAR)
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR)[..., None]
    region = canvas[y0:y1, x0:x1]
    region[:] = region * (1 - a) + warped * a


# a cube's faces: outward normal, then its corners in turn (unit cube, z up)
_CUBE_FACES = (
    ((0, 0, 1), ((-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1))),
    ((1, 0, 0), ((1, -1, 1), (1, 1, 1), (1, 1, -1), (1, -1, -1))),
    ((0, 1, 0), ((1, 1, 1), (-1, 1, 1), (-1, 1, -1), (1, 1, -1))),
    ((-1, 0, 0), ((-1, 1, 1), (-1, -1, 1), (-1, -1, -1), (-1, 1, -1))),
    ((0, -1, 0), ((-1, -1, 1), (1, -1, 1), (1, -1, -1), (-1, -1, -1))),
)


def side_faces(rng: np.random.Generator, top: int) -> list[int]:
    """The four side faces of a die showing ``top``, in turn around it (+x, +y, -x, -y):
    opposite faces sum to 7, so the sides are the two other pairs, each pair across."""
    a, b = [int(v) for v in rng.permutation([v for v in range(1, 7) if v not in (top, 7 - top)
                                             and v < 7 - v])]
    return [a, b, 7 - a, 7 - b]


def cube_quads(side: float, yaw: float, elevation: float, roll: float
               ) -> list[tuple[int, np.ndarray, float]]:
    """A die of edge ``side`` px, turned ``yaw`` about its vertical axis, seen by a camera
    ``elevation`` radians above the table (pi/2: straight down) from the image's bottom
    edge, the picture then turned ``roll``: each visible face as (face index: 0 top, 1-4
    the sides of ``side_faces``; its four corners in image px about the die's centre; how
    squarely it faces the camera, 0..1). Orthographic: a top face shrinks by
    sin(elevation) top to bottom, a side by cos(elevation)."""
    cy, sy = math.cos(yaw), math.sin(yaw)
    turn = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ce, se = math.cos(elevation), math.sin(elevation)
    camera = np.array([0.0, -ce, se])  # from the die towards the camera
    cr, sr = math.cos(roll), math.sin(roll)
    out = []
    for i, (normal, corners) in enumerate(_CUBE_FACES):
        facing = float(turn @ np.array(normal, float) @ camera)
        if facing <= 0.02:
            continue
        p = (np.array(corners, float) * side / 2) @ turn.T
        u, v = p[:, 0], -p[:, 1] * se - p[:, 2] * ce
        quad = np.stack([u * cr - v * sr, u * sr + v * cr], axis=1)
        out.append((i, quad, facing))
    return out


def _shadow(rng: np.random.Generator, img: np.ndarray, outline: np.ndarray,
            light: np.ndarray, side: float) -> None:
    """A soft shadow of the die's ``outline``, cast away from the light (in place)."""
    h, w = img.shape[:2]
    sh = outline + light * side * rng.uniform(0.1, 0.4)
    shm = np.zeros((h, w), np.float32)
    cv2.fillConvexPoly(shm, sh.astype(np.int32), 1.0, cv2.LINE_AA)
    k = int(side * 0.3) | 1
    shm = cv2.GaussianBlur(shm, (k, k), 0)
    img *= (1 - rng.uniform(0.2, 0.6) * shm)[..., None]


def _body(rng: np.random.Generator, img: np.ndarray, hull: np.ndarray, body: np.ndarray,
          style: dict) -> np.ndarray:
    """The die's body over its convex ``hull``, darker than its faces (see-through when
    translucent)."""
    h, w = img.shape[:2]
    sm = np.zeros((h, w), np.float32)
    cv2.fillConvexPoly(sm, hull.astype(np.int32), 1.0, cv2.LINE_AA)
    a = sm[..., None] * (0.7 if style["translucent"] else 1.0)
    return img * (1 - a) + (body * rng.uniform(0.45, 0.8)) * a


def paste_cube(rng: np.random.Generator, img: np.ndarray, face: int, side: int,
               cx: float, cy: float, elevation: float, roll: float, light: np.ndarray,
               body: np.ndarray, pip: np.ndarray, style: dict
               ) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """One die as a cube (``cube_quads``) onto the scene: its shadow, its body, then each
    visible face with its pips, the top lit best. Answers the scene and the die's box."""
    el = float(np.clip(elevation + rng.normal(0, math.radians(4)), math.radians(15),
                       math.radians(90)))
    faces = cube_quads(side, rng.uniform(0, 2 * math.pi), el, roll)
    values = [face, *side_faces(rng, face)]
    pts = np.vstack([q for _, q, _ in faces]) + [cx, cy]
    hull = cv2.convexHull(pts.astype(np.float32))[:, 0]
    if rng.random() < 0.7:
        _shadow(rng, img, hull, light, side)
    # the body shows between the rounded faces: edges and bevels, darker
    img = _body(rng, img, hull, body, style)
    for i, quad, facing in faces:
        shade = 1.0 if i == 0 else rng.uniform(0.5, 0.9)
        patch, alpha = die_face(rng, values[i], max(8, side), body * shade, pip * shade,
                                style)
        if style["translucent"]:
            alpha = alpha * rng.uniform(0.55, 0.85)
        if facing > 0.12:  # a face seen edge-on is only the body's edge
            _paste(img, patch, alpha, np.roll(quad, int(rng.integers(4)), axis=0) + [cx, cy])
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return img, (float(x0), float(y0), float(x1), float(y1))


def render_dice_scene(seed: int | np.random.Generator, size: int = 416, *,
                      upright: bool = False, cube: bool = False
                      ) -> tuple[np.ndarray, list[RenderedDie]]:
    """A size x size BGR uint8 scene and its dice (box around the visible die, top face).
    An oblique scene shows the dice's sides in any direction, or (``upright``) below
    their top faces, as a camera looking down and forward sees them (within 18 degrees;
    the same draws, so the scene is otherwise the same). ``cube`` draws each die as a
    cube seen by one camera per scene from 20-90 degrees above the table (``cube_quads``):
    a low camera sees a side face larger than the squashed top face, as in a phone photo
    across a table, and the sides carry the faces a real die has there (``side_faces``);
    the camera stands below the scene when ``upright``, anywhere around it otherwise."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    h = w = size
    img = _background(rng, h, w)
    _clutter(rng, img, int(rng.integers(0, 8)))
    n = int(rng.integers(1, 16))
    big = rng.random() < 0.3
    lo, hi = (30, 110) if big else (12, 60)
    # one dice "set" style per scene most of the time, else per die
    shared = rng.random() < 0.5
    light = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1)])
    tilt = rng.uniform(0, 0.45) if rng.random() < 0.7 else 0.0  # oblique: side visible
    tilt_dir = rng.uniform(0, 2 * math.pi)
    if upright:  # image y points down: sides below the top face
        tilt_dir = math.pi / 2 + (tilt_dir - math.pi) * 0.1
    if cube:
        elevation = math.radians(rng.uniform(65, 90) if rng.random() < 0.25
                                 else rng.uniform(20, 65))
        roll = rng.normal(0, math.radians(6)) if upright else rng.uniform(0, 2 * math.pi)
    apart = 1.0 if cube else 0.75  # how close two dice stand: a cube seen low is taller
    placed: list[tuple[float, float, float]] = []
    dice: list[RenderedDie] = []
    style = None
    body = pip = None
    for _ in range(n * 3):
        if len(dice) >= n:
            break
        side = int(rng.uniform(lo, hi))
        cx, cy = rng.uniform(side, w - side), rng.uniform(side, h - side)
        if any(math.hypot(cx - px, cy - py) < (side + ps) * apart for px, py, ps in placed):
            continue
        placed.append((cx, cy, side))
        if style is None or not shared:
            body = _colour(rng)
            pip = _pip_colour(rng, body)
            style = {
                "radius": rng.uniform(0.05, 0.25), "bevel": rng.uniform(0.0, 0.4),
                "marble": rng.random() < 0.25, "marble_colour": 0.5 * body + 0.5 * _colour(rng),
                "spread": rng.uniform(0.48, 0.62), "pip_r": rng.uniform(0.07, 0.12),
                "pip_shape": int(rng.choice(4, p=[0.75, 0.08, 0.07, 0.1])),
                "translucent": rng.random() < 0.15,
            }
        face = int(rng.integers(1, 7))
        if cube:
            img, box = paste_cube(rng, img, face, side, cx, cy, elevation, roll, light,
                                  body, pip, style)
            dice.append(RenderedDie(face, box))
            continue
        top, alpha = die_face(rng, face, max(8, side), body, pip, style)
        if style["translucent"]:
            alpha = alpha * rng.uniform(0.55, 0.85)
        ang = rng.uniform(0, 2 * math.pi)
        half = side / 2
        corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        corners = corners @ rot.T
        # oblique: squash along the tilt direction, the side shows below it
        if tilt > 0:
            d = np.array([math.cos(tilt_dir), math.sin(tilt_dir)])
            along = corners @ d
            corners = corners - np.outer(along * tilt * 0.6, d)
        quad = corners + [cx, cy]
        # shadow
        if rng.random() < 0.7:
            _shadow(rng, img, quad, light, side)
        box_pts = [quad]
        if tilt > 0:
            d = np.array([math.cos(tilt_dir), math.sin(tilt_dir)])
            depth = side * tilt * 1.2
            side_quad = quad + d * depth
            sface, salpha = die_face(rng, int(rng.integers(1, 7)), max(8, side), body * 0.7,
                                     pip * 0.7, style)
            # the side: the hull of top and shifted top, darker; then the top over it
            hull = cv2.convexHull(np.vstack([quad, side_quad]).astype(np.float32))[:, 0]
            img = _body(rng, img, hull, body, style)
            _paste(img, sface * 0.8, salpha, side_quad)
            box_pts.append(hull)
        _paste(img, top, alpha, quad)
        pts = np.vstack(box_pts)
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        dice.append(RenderedDie(face, (float(x0), float(y0), float(x1), float(y1))))
    # light: a gradient and a spot
    gy, gx = np.mgrid[0:h, 0:w].astype(np.float32) / size - 0.5
    gain = 1 + rng.uniform(-0.4, 0.4) * (gx * light[0] + gy * light[1])
    img *= gain[..., None] * rng.uniform(0.6, 1.3)
    img += rng.uniform(-25, 25, 3).astype(np.float32)  # white balance
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.4:
        k = int(rng.choice([3, 5]))
        img = cv2.GaussianBlur(img, (k, k), 0)
    if rng.random() < 0.15:  # motion blur
        k = int(rng.integers(3, 8))
        kern = np.zeros((k, k), np.float32)
        kern[k // 2] = 1.0 / k
        img = cv2.filter2D(img, -1, kern)
    if rng.random() < 0.6:
        noise = rng.normal(0, rng.uniform(2, 10), img.shape)
        img = np.clip(img + noise, 0, 255).astype(np.uint8)
    if rng.random() < 0.2:
        g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        img = cv2.cvtColor(g, cv2.COLOR_GRAY2BGR)
    q = int(rng.integers(35, 95))
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    if ok:
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img, dice
