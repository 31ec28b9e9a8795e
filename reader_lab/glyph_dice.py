"""Dice with made-up symbols, rendered as the companion crops a die: face classes without
end, for teaching a face network's embedding what makes two dice show the same face
whatever the die's colours, light and turn (issue 64's few-shot symbol dice).

A glyph is one to three shapes (a disc, a ring, a bar, a triangle or other polygon, a
star, a stroke) in the face's own frame ([-1, 1] both ways). ``glyph_views`` draws views
of one glyph on a die: each view its own die colours (any body, ink that stands out or an
engraved tone of the body), table, turn on the table (the glyph turns with the face),
size in the crop, a side seen below the top face when the camera looks forward, shadow,
light and blur. The colours change from view to view on purpose: two faces of one die set
share their colours, so only the symbol may tell a face from another. ``glyph_bank`` draws
many glyphs' views on every core. Deterministic for a seed; numpy and OpenCV only.

    python -m reader_lab glyph-dice [docs/glyph-dice.png] [--glyphs 8] [--views 8]

draws a picture: one glyph a row, its views side by side.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import cv2
import numpy as np

from companion.vision.learned_spec import CROP_SPAN
from reader_lab.every_core import map_on_every_core
from reader_lab.render_dice import (
    _background,
    _body,
    _colour,
    _paste,
    _pip_colour,
    _rounded_square,
    _shadow,
)

KINDS = ("disc", "ring", "bar", "polygon", "star", "stroke")
SCALE = 4  # faces drawn this many times larger, then shrunk: smooth edges at any size


def random_glyph(rng: np.random.Generator) -> list[tuple]:
    """One to three shapes: (kind, centre x, centre y, size, turn in radians, sides or
    points, line width as a share of the size)."""
    out = []
    n = int(rng.choice([1, 2, 3], p=[0.45, 0.4, 0.15]))
    for _ in range(n):
        kind = KINDS[int(rng.integers(len(KINDS)))]
        size = rng.uniform(0.7, 1.7) / math.sqrt(n)  # across, of the face's 2
        cx, cy = rng.uniform(-0.95 + size / 2, 0.95 - size / 2, 2)
        out.append((kind, float(cx), float(cy), float(size), float(rng.uniform(0, 2 * math.pi)),
                    int(rng.integers(3, 7)), float(rng.uniform(0.12, 0.3))))
    return out


def draw_glyph(img: np.ndarray, glyph: list[tuple], ink: tuple[float, float, float]) -> None:
    """Draw ``glyph`` filling the square ``img`` (in place)."""
    side = img.shape[0]
    shift = 4

    def px(x: float, y: float) -> tuple[int, int]:
        return (round((x + 1) / 2 * side * (1 << shift)),
                round((y + 1) / 2 * side * (1 << shift)))

    for kind, cx, cy, size, turn, n, width in glyph:
        r = size / 2
        line = max(1, round(width * size / 2 * side))
        if kind in ("disc", "ring"):
            c, rad = px(cx, cy), round(r / 2 * side * (1 << shift))
            cv2.circle(img, c, rad, ink, -1 if kind == "disc" else line, cv2.LINE_AA, shift)
            continue
        if kind == "bar":
            pts = [(-1, -0.35), (1, -0.35), (1, 0.35), (-1, 0.35)]
        elif kind == "star":
            pts = [((1 if k % 2 == 0 else 0.45) * math.cos(math.pi * k / n),
                    (1 if k % 2 == 0 else 0.45) * math.sin(math.pi * k / n))
                   for k in range(2 * n)]
        elif kind == "stroke":
            pts = [(-1, 0.2 * (n - 4)), (0, -0.5), (1, 0.1 * n - 0.5)][: 2 + n % 2]
        else:
            pts = [(math.cos(2 * math.pi * k / n), math.sin(2 * math.pi * k / n))
                   for k in range(n)]
        c, s = math.cos(turn), math.sin(turn)
        poly = np.array([px(cx + r * (x * c - y * s), cy + r * (x * s + y * c))
                         for x, y in pts], np.int32)
        if kind == "stroke":
            cv2.polylines(img, [poly], False, ink, line, cv2.LINE_AA, shift)
        else:
            cv2.fillPoly(img, [poly], ink, cv2.LINE_AA, shift)


def glyph_face(rng: np.random.Generator, glyph: list[tuple], side: int, body: np.ndarray,
               ink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One die face showing ``glyph`` (side x side, BGR float) and its alpha mask (0..1):
    rounded corners and a darker bevel, as ``render_dice.die_face`` draws a pip face."""
    ss = side * SCALE
    img = np.empty((ss, ss, 3), np.float32)
    img[:] = body
    inner = int(ss * 0.12)
    face = np.ascontiguousarray(img[inner:ss - inner, inner:ss - inner])
    draw_glyph(face, glyph, tuple(float(v) for v in ink))
    img[inner:ss - inner, inner:ss - inner] = face
    yy, xx = np.mgrid[0:ss, 0:ss].astype(np.float32) / ss - 0.5
    d = np.maximum(np.abs(xx), np.abs(yy))
    img *= (1.0 - rng.uniform(0, 0.4) * np.clip((d - 0.38) / 0.12, 0, 1))[..., None]
    mask = _rounded_square(ss, rng.uniform(0.05, 0.25))
    img = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(mask, (side, side), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    return img, alpha


def glyph_view(rng: np.random.Generator, glyph: list[tuple], size: int = 64,
               jitter: bool = True) -> np.ndarray:
    """One view of a die showing ``glyph`` on top, cut as the companion cuts a die: a
    size x size BGR uint8 crop spanning ``CROP_SPAN`` die sides (0.8-1.3 times that and
    off centre by up to 6% of a side with ``jitter``; exactly, centred, without), the
    photo's up kept (a camera looking forward sees a side below the top face)."""
    big = size * 2
    img = _background(rng, big, big)
    spread = rng.uniform(0.8, 1.3) if jitter else 1.0
    side = big / (CROP_SPAN * spread)
    cx, cy = (big / 2 + rng.normal(0, 0.06 * side, 2)) if jitter else (big / 2, big / 2)
    body = _colour(rng)
    ink = _pip_colour(rng, body)
    yaw = rng.uniform(0, 2 * math.pi)
    half = side / 2
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    corners = corners @ np.array([[math.cos(yaw), -math.sin(yaw)],
                                  [math.sin(yaw), math.cos(yaw)]]).T
    tilt = rng.uniform(0, 0.4) if rng.random() < 0.6 else 0.0
    d = np.array([math.sin(rng.normal(0, 0.1)), math.cos(rng.normal(0, 0.1))])  # down
    corners = corners - np.outer(corners @ d * tilt * 0.6, d)
    quad = corners + [cx, cy]
    light = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1)])
    style = {"translucent": False}
    if rng.random() < 0.7:
        _shadow(rng, img, quad, light, side)
    if tilt > 0:
        below = quad + d * side * tilt * 1.2
        hull = cv2.convexHull(np.vstack([quad, below]).astype(np.float32))[:, 0]
        img = _body(rng, img, hull, body, style)
        shade = rng.uniform(0.5, 0.8)
        other, alpha = glyph_face(rng, random_glyph(rng), max(8, int(side)), body * shade,
                                  ink * shade)
        _paste(img, other, alpha, below)
    top, alpha = glyph_face(rng, glyph, max(8, int(side)), body, ink)
    _paste(img, top, alpha, quad)
    gy, gx = np.mgrid[0:big, 0:big].astype(np.float32) / big - 0.5
    img *= (1 + rng.uniform(-0.4, 0.4) * (gx * light[0] + gy * light[1]))[..., None]
    img *= rng.uniform(0.7, 1.25)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (3, 3), 0)
    out = cv2.resize(np.clip(img, 0, 255), (size, size), interpolation=cv2.INTER_AREA)
    return out.astype(np.uint8)


def glyph_views(seed: int, views: int, size: int = 64, jitter: bool = True) -> np.ndarray:
    """``views`` views (views x size x size x 3 uint8) of the glyph drawn for ``seed``."""
    rng = np.random.default_rng(seed)
    glyph = random_glyph(rng)
    return np.stack([glyph_view(rng, glyph, size, jitter) for _ in range(views)])


def _one(job: tuple[int, int, int, bool]) -> np.ndarray:
    return glyph_views(*job)


def glyph_bank(classes: int, views: int, size: int = 64, seed: int = 0,
               jitter: bool = True) -> np.ndarray:
    """``classes`` glyphs' views (classes x views x size x size x 3 uint8), drawn on every
    core; glyph k is ``glyph_views(seed * 1_000_003 + k, ...)``."""
    jobs = [(seed * 1_000_003 + k, views, size, jitter) for k in range(classes)]
    out = map_on_every_core(_one, jobs, least=16)
    return (np.stack(out) if out else
            np.zeros((0, views, size, size, 3), np.uint8))


def picture(glyphs: int = 8, views: int = 8, size: int = 64, seed: int = 0) -> np.ndarray:
    """``glyphs`` rows of ``views`` views each, drawn 1.5 times larger, a glyph's number
    (counted from 1) at the left."""
    bank = glyph_bank(glyphs, views, size, seed)
    rows = []
    for k, row in enumerate(bank):
        strip = cv2.resize(np.hstack(list(row)), None, fx=1.5, fy=1.5,
                           interpolation=cv2.INTER_NEAREST)
        label = np.full((strip.shape[0], 40, 3), 40, np.uint8)
        cv2.putText(label, str(k + 1), (6, strip.shape[0] // 2 + 6),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
        rows.append(np.hstack([label, strip]))
    return np.vstack(rows) if rows else np.zeros((1, 1, 3), np.uint8)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default="docs/glyph-dice.png")
    ap.add_argument("--glyphs", type=int, default=8)
    ap.add_argument("--views", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not 1 <= args.glyphs <= 64 or not 1 <= args.views <= 32:
        ap.error("--glyphs must be 1-64 and --views 1-32")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), picture(args.glyphs, args.views, seed=args.seed),
                [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(out)
    return 0
