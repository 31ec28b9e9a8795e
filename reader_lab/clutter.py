"""Scenes of table clutter for the detector: things that are not dice but look like them,
drawn around rendered dice (``render_dice``) or on a table with no die at all.

The big detector's first run found nearly every die of unseen photos but also boxed
things no training photo shows: round plastic parts, speckled stone. The real sets cannot
teach those away (they hold few such things), so these scenes do: coins with a rim,
buttons with two or four holes (pips without a die), screws, pawns seen from above,
square tokens printed with dots or a number, cards with pip symbols, knobs, and speckled
stone and carpet to lie on. A quarter of the scenes hold no die at all. The dice in the
others are ``render_dice``'s (flat or cube), and the whole scene is blurred and noised
again after the clutter is drawn, so sharpness does not tell a die from a thing.
Deterministic for a seed; numpy + OpenCV only.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from reader_lab.render_dice import _background, _colour, _noise_field, render_dice_scene

NO_DICE_SHARE = 0.25
KINDS = ("coin", "button", "screw", "pawn", "token", "card", "knob")


def speckled_stone(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Granite or terrazzo: a mottled base with dark and light specks of many sizes."""
    base = np.full((h, w, 3), rng.uniform(60, 220), np.float32)
    base *= (0.85 + 0.3 * _noise_field(rng, h, w, rng.uniform(30, 150)))[..., None]
    base += (_colour(rng) - base.mean()) * rng.uniform(0, 0.3)
    for _ in range(int(rng.integers(200, 1500) * h * w / 512 ** 2)):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = max(1, int(rng.exponential(1.5)))
        c = rng.uniform(0, 60) if rng.random() < 0.6 else rng.uniform(180, 255)
        cv2.circle(base, (x, y), r, (c, c, c), -1, cv2.LINE_AA)
    return base


def carpet(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    img = np.empty((h, w, 3), np.float32)
    img[:] = _colour(rng) * rng.uniform(0.4, 1.0)
    img += rng.normal(0, rng.uniform(10, 30), (h, w, 1)).astype(np.float32)
    return cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 1.2))


def _holes(img: np.ndarray, x: int, y: int, r: int, n: int, colour, rng) -> None:
    spots = {2: [(-0.35, 0)], 4: [(-0.3, -0.3), (0.3, -0.3), (-0.3, 0.3), (0.3, 0.3)]}
    pts = spots.get(n, [(-0.35, 0)]) + ([(0.35, 0)] if n == 2 else [])
    ang = rng.uniform(0, math.pi)
    for dx, dy in pts:
        hx = x + r * (dx * math.cos(ang) - dy * math.sin(ang))
        hy = y + r * (dx * math.sin(ang) + dy * math.cos(ang))
        cv2.circle(img, (int(hx), int(hy)), max(1, int(r * 0.13)), colour, -1, cv2.LINE_AA)


def draw_thing(rng: np.random.Generator, img: np.ndarray, kind: str, x: int, y: int,
               size: int) -> None:
    """One thing that is not a die, about ``size`` px across, centred at (x, y)."""
    c = _colour(rng).tolist()
    dark = [v * 0.45 for v in c]
    light = [min(255.0, v * 1.4 + 30) for v in c]
    r = max(3, size // 2)
    if kind == "coin":
        metal = rng.choice([[60, 140, 190], [170, 170, 175], [70, 110, 160]]) * rng.uniform(
            0.7, 1.2)
        cv2.circle(img, (x, y), r, metal.tolist(), -1, cv2.LINE_AA)
        cv2.circle(img, (x, y), max(2, int(r * 0.82)), (metal * 0.8).tolist(), 1, cv2.LINE_AA)
        cv2.ellipse(img, (x - r // 4, y - r // 4), (max(1, r // 3), max(1, r // 5)), 30, 0,
                    360, (metal * 1.2).clip(0, 255).tolist(), -1, cv2.LINE_AA)
    elif kind == "button":
        cv2.circle(img, (x, y), r, c, -1, cv2.LINE_AA)
        cv2.circle(img, (x, y), max(2, int(r * 0.75)), dark, 1, cv2.LINE_AA)
        _holes(img, x, y, r, int(rng.choice([2, 4])), dark, rng)
    elif kind == "screw":
        grey = [rng.uniform(120, 200)] * 3
        cv2.circle(img, (x, y), max(2, r // 2), grey, -1, cv2.LINE_AA)
        a = rng.uniform(0, math.pi)
        dx, dy = int(r * 0.4 * math.cos(a)), int(r * 0.4 * math.sin(a))
        cv2.line(img, (x - dx, y - dy), (x + dx, y + dy), [g * 0.3 for g in grey], 2)
        if rng.random() < 0.5:
            cv2.line(img, (x + dy, y - dx), (x - dy, y + dx), [g * 0.3 for g in grey], 2)
    elif kind == "pawn":
        cv2.circle(img, (x, y), r, dark, -1, cv2.LINE_AA)
        cv2.circle(img, (x, y), max(2, int(r * 0.6)), c, -1, cv2.LINE_AA)
        cv2.circle(img, (x - r // 5, y - r // 5), max(1, r // 5), light, -1, cv2.LINE_AA)
    elif kind == "token":  # a square (or hexagonal) tile printed with dots or a number
        half = r
        ang = rng.uniform(0, math.pi / 2)
        sides = 4 if rng.random() < 0.7 else 6
        pts = np.array([[x + half * math.cos(ang + k * 2 * math.pi / sides),
                         y + half * math.sin(ang + k * 2 * math.pi / sides)]
                        for k in range(sides)], np.int32)
        cv2.fillConvexPoly(img, pts, c, cv2.LINE_AA)
        if rng.random() < 0.5:
            for _ in range(int(rng.integers(1, 4))):
                px = x + int(rng.uniform(-0.4, 0.4) * half)
                py = y + int(rng.uniform(-0.4, 0.4) * half)
                cv2.circle(img, (px, py), max(1, half // 5), dark, -1, cv2.LINE_AA)
        else:
            cv2.putText(img, str(int(rng.integers(0, 10))), (x - half // 3, y + half // 3),
                        cv2.FONT_HERSHEY_SIMPLEX, max(0.3, half / 25), dark,
                        max(1, half // 10), cv2.LINE_AA)
    elif kind == "card":
        w, h = size, int(size * 1.4)
        cv2.rectangle(img, (x - w // 2, y - h // 2), (x + w // 2, y + h // 2),
                      [rng.uniform(220, 255)] * 3, -1)
        ink = [0, 0, 200] if rng.random() < 0.5 else [20, 20, 20]
        for _ in range(int(rng.integers(1, 7))):
            px = x + int(rng.uniform(-0.35, 0.35) * w)
            py = y + int(rng.uniform(-0.4, 0.4) * h)
            cv2.circle(img, (px, py), max(1, w // 10), ink, -1, cv2.LINE_AA)
    else:  # a knob: a ridged disc
        cv2.circle(img, (x, y), r, dark, -1, cv2.LINE_AA)
        for k in range(12):
            a = k * math.pi / 6
            cv2.line(img, (x, y), (x + int(r * math.cos(a)), y + int(r * math.sin(a))), c, 1)
        cv2.circle(img, (x, y), max(2, r // 2), c, -1, cv2.LINE_AA)


def _clear(x: int, y: int, size: int, boxes: np.ndarray) -> bool:
    """Whether a thing at (x, y) keeps off every die's box (grown by half the thing)."""
    if not len(boxes):
        return True
    m = size * 0.6
    inside = ((x > boxes[:, 0] - m) & (x < boxes[:, 2] + m)
              & (y > boxes[:, 1] - m) & (y < boxes[:, 3] + m))
    return not bool(inside.any())


def clutter_scene(seed: int | np.random.Generator, size: int = 512,
                  things: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A size x size BGR uint8 scene and its dice's boxes (N x 4 float32; none in a
    quarter of the scenes), with things that are not dice around them. ``things``: a list
    that gets each thing's square (x0, y0, x1, y1), its size about its centre (the face
    classifier's "not a die" crops); the scene is the same either way."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if rng.random() < NO_DICE_SHARE:
        floor = rng.random()
        img = (speckled_stone(rng, size, size) if floor < 0.35 else
               carpet(rng, size, size) if floor < 0.55 else _background(rng, size, size))
        img = np.clip(img, 0, 255).astype(np.uint8)
        boxes = np.zeros((0, 4), np.float32)
    else:
        img, dice = render_dice_scene(rng, size, cube=rng.random() < 0.5)
        img = img.copy()
        boxes = np.array([d.box for d in dice], np.float32).reshape(-1, 4)
    scale = rng.uniform(12, 70)
    for _ in range(int(rng.integers(3, 16))):
        s = int(scale * rng.uniform(0.6, 1.5))
        x, y = int(rng.integers(0, size)), int(rng.integers(0, size))
        if _clear(x, y, s, boxes):
            draw_thing(rng, img, str(rng.choice(KINDS)), x, y, s)
            if things is not None:
                things.append((x - s / 2, y - s / 2, x + s / 2, y + s / 2))
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.4, 1.5))
    if rng.random() < 0.5:
        noise = rng.normal(0, rng.uniform(2, 8), img.shape)
        img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img, boxes
