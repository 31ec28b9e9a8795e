"""Draw what the learned reader's classifiers are trained on from the renderer: the same
scene seed with flat dice and with cube dice, and single cube dice seen from ever lower.

    .venv/bin/python -m reader_lab render-training-dice [docs/render-dice.png]

Left, the flat renderer (``render_dice_scene(seed, upright=True)``): a top face squashed
a little, its side a shifted copy of it. Right, the cube renderer (``cube=True``): one
camera 20-90 degrees above the table, a low one seeing the side facing it larger than
the top. Bottom row: one red die from 90 down to 25 degrees. Each rendered die's label is
its top face (yellow). Prints the file written.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab.render_dice import paste_cube, render_dice_scene  # noqa: E402

SEED = 1028
STYLE = {"radius": 0.15, "bevel": 0.2, "marble": False, "marble_colour": np.zeros(3),
         "spread": 0.55, "pip_r": 0.1, "pip_shape": 0, "translucent": False}


def _labelled(img: np.ndarray, dice, title: str) -> np.ndarray:
    img = img.copy()
    for d in dice:
        x0, y0, x1, y1 = (int(v) for v in d.box)
        cv2.rectangle(img, (x0, y0), (x1, y1), (0, 200, 0), 1)
        cv2.putText(img, str(d.face), (x0, max(10, y0 - 2)), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    (0, 255, 255), 1, cv2.LINE_AA)
    cv2.putText(img, title, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2,
                cv2.LINE_AA)
    return img


def _single(face: int, degrees: float, rng: np.random.Generator) -> np.ndarray:
    img = np.full((138, 138, 3), 125, np.float32)
    img, _ = paste_cube(rng, img, face, 64, 69, 72, math.radians(degrees), 0.0,
                         np.array([0.3, 0.3]), np.array([40, 40, 190], np.float32),
                         np.array([245, 245, 245], np.float32), STYLE)
    out = np.clip(img, 0, 255).astype(np.uint8)
    cv2.putText(out, f"{degrees:.0f} deg, top {face}", (4, 14), cv2.FONT_HERSHEY_SIMPLEX,
                0.42, (0, 255, 255), 1, cv2.LINE_AA)
    return out


def picture() -> np.ndarray:
    flat, flat_dice = render_dice_scene(SEED, upright=True)
    cube, cube_dice = render_dice_scene(SEED, upright=True, cube=True)
    top = np.hstack([_labelled(flat, flat_dice, "flat (before)"),
                     _labelled(cube, cube_dice, "cube (--render-cube)")])
    rng = np.random.default_rng(0)
    row = np.hstack([_single(f, d, rng) for f, d in ((5, 90), (3, 70), (4, 55), (2, 40),
                                                     (6, 30), (1, 25))])
    row = cv2.copyMakeBorder(row, 0, 0, 0, top.shape[1] - row.shape[1], cv2.BORDER_CONSTANT,
                             value=(40, 40, 40))
    return np.vstack([top, row])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", default="docs/render-dice.png")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), picture(), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
