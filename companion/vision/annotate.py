"""Drawing readings onto frames: a box per die with its set, face and confidence.

Used by ``companion watch --save-annotated`` and by calibration previews. Returns a
new image; the frame passed in is left as it was.
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.mat import MatView
from companion.vision.settle import hand_boxes
from companion.vision.types import UNKNOWN, DieReading, FrameReading

# BGR colours per dice set; anything else gets a colour from its name.
SET_COLOURS = {
    "pip": (0, 200, 0),
    "red": (40, 40, 230),
    "blue": (230, 120, 30),
    "black": (150, 150, 150),  # grey: black boxes would vanish on a dark mat
    "white": (235, 235, 235),
    UNKNOWN: (0, 165, 255),
}
UNKNOWN_FACE_COLOUR = (0, 0, 255)
HAND_COLOUR = (255, 0, 255)
MAT_COLOUR = (255, 255, 0)


def set_colour(dice_set: str) -> tuple[int, int, int]:
    if dice_set in SET_COLOURS:
        return SET_COLOURS[dice_set]
    h = sum(ord(c) * 31 ** i for i, c in enumerate(dice_set)) & 0xFFFFFF
    return (h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF)


def die_label(die: DieReading) -> str:
    if die.dice_set == "pip":
        return f"{die.face} {die.confidence:.2f}"
    return f"{die.dice_set} {die.face} {die.confidence:.2f}"


def _same_die(a: DieReading, b: DieReading) -> bool:
    size = max(1, a.box[2] - a.box[0], a.box[3] - a.box[1])
    near = abs(a.centre[0] - b.centre[0]) + abs(a.centre[1] - b.centre[1]) <= size / 2
    return near and (a.dice_set, a.face) == (b.dice_set, b.face)


def _text(image: np.ndarray, text: str, org: tuple[int, int], colour: tuple[int, int, int],
          scale: float) -> None:
    """Text on a dark band, so it reads on any background."""
    thick = max(1, round(scale * 1.5))
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    x, y = org
    cv2.rectangle(image, (x - 1, y - h - 2), (x + w + 1, y + base), (0, 0, 0), -1)
    cv2.putText(image, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick,
                cv2.LINE_AA)


def annotate(
    image: np.ndarray,
    reading: FrameReading,
    *,
    mat: MatView | None = None,
    settled: FrameReading | None = None,
) -> np.ndarray:
    """A copy of ``image`` with every die of ``reading`` boxed and labelled.

    Unknown faces get a red box. ``settled``: dice that count are drawn with a thicker
    box. ``mat``: the mat's outline. Hand boxes from the reading's notes are drawn too.
    """
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    scale = max(0.35, min(out.shape[:2]) / 1500)
    line = max(1, round(scale * 2))
    if mat is not None:
        cv2.polylines(out, [np.round(mat.outline()).astype(np.int32)], True, MAT_COLOUR, line)
    for x0, y0, x1, y1 in hand_boxes(reading.notes):
        cv2.rectangle(out, (x0, y0), (x1, y1), HAND_COLOUR, line)
        _text(out, "hand", (x0 + 4, y0 + round(20 * scale)), HAND_COLOUR, scale)
    counted = settled.dice if settled is not None else ()
    for die in reading.dice:
        colour = UNKNOWN_FACE_COLOUR if die.face == UNKNOWN else set_colour(die.dice_set)
        x0, y0, x1, y1 = die.box
        thick = line * 2 if any(_same_die(die, s) for s in counted) else line
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, thick)
        _text(out, die_label(die), (x0, max(12, y0 - 4)), colour, scale)
    status = f"frame {reading.frame_index}  dice {len(reading.dice)}  " \
             f"mat {'yes' if reading.mat_found else 'no'}"
    _text(out, status, (8, round(28 * scale) + 4), (255, 255, 255), scale)
    return out
