"""The camera pipeline: one frame in, every die on the mat out.

``read_frame(image)`` is the pure core: find the mat (ArUco corners), read the pip
dice (``companion.vision.pips``, no calibration needed) and, given a calibration
profile, the symbol dice in the mat's top-down view (``companion.vision.symbols``).
Every DieReading it returns is in frame pixels, with ``mat_xy`` in mat millimetres
when the mat was found. Dice on the corner markers or off the mat are dropped then
(noted in ``FrameReading.notes``); without the mat the whole frame is read.

``Pipeline`` wraps it for a stream of frames: it looks for the mat only every
``mat_every`` frames (the mat does not move; a bump of the camera changes how the
markers' patches look, which triggers a new look at once; a mat missed ``mat_keep`` looks
in a row, not just hidden by a hand for a moment, is dropped), and marks large moving blobs
(hands) with ``settle.hand_note`` so the settle tracker ignores what lies under them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from companion.vision.mat import MatView, find_mat
from companion.vision.mat_spec import DEFAULT_MAT, MatSpec
from companion.vision.settle import hand_note
from companion.vision.types import UNKNOWN, DieReading, FrameReading

_NOT_GIVEN: Any = object()

DieReader = Callable[..., list[DieReading]]


def _pip_reader() -> DieReader:
    from companion.vision.pips import read_pip_dice

    return read_pip_dice


def _symbol_reader() -> DieReader:
    from companion.vision.symbols import read_symbol_dice

    return read_symbol_dice


def _box_of(points: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0 = np.floor(points.min(axis=0))
    x1, y1 = np.ceil(points.max(axis=0))
    return (
        int(max(0, x0)), int(max(0, y0)), int(min(width, x1)), int(min(height, y1))
    )


def _view_die_to_frame(die: DieReading, mat: MatView, width: int, height: int) -> DieReading:
    """A die read in the top-down view, with box and centre moved to frame pixels."""
    x0, y0, x1, y1 = die.box
    corners = mat.view_to_frame([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    (cx, cy), = mat.view_to_frame([die.centre])
    mm = (die.centre[0] / mat.spec.px_per_mm, die.centre[1] / mat.spec.px_per_mm)
    return DieReading(
        die.dice_set, die.face, die.confidence, _box_of(corners, width, height),
        (float(cx), float(cy)), die.angle, mm, die.set_confidence,
    )


def _inside(box: tuple[int, int, int, int], xy: tuple[float, float]) -> bool:
    x0, y0, x1, y1 = box
    return x0 <= xy[0] <= x1 and y0 <= xy[1] <= y1


def merge_readings(pip_dice: list[DieReading], symbol_dice: list[DieReading]) -> list[DieReading]:
    """Both readers may report the same die: where one die's centre lies in the other's
    box, keep the symbol reading when it knows the set, else the pip reading."""
    kept_symbols = []
    dropped_pips: set[int] = set()
    for s in symbol_dice:
        clash = [i for i, p in enumerate(pip_dice)
                 if _inside(p.box, s.centre) or _inside(s.box, p.centre)]
        if not clash:
            kept_symbols.append(s)
        elif s.dice_set != UNKNOWN and s.set_confidence >= 0.5:
            kept_symbols.append(s)
            dropped_pips.update(clash)
    pips = [p for i, p in enumerate(pip_dice) if i not in dropped_pips]
    return pips + kept_symbols


def read_frame(
    image: np.ndarray,
    *,
    profile: Any = None,
    mat_spec: MatSpec = DEFAULT_MAT,
    mat: MatView | None = _NOT_GIVEN,
    frame_index: int = 0,
    pip_reader: DieReader | None = None,
    symbol_reader: DieReader | None = None,
    pips: bool = True,
) -> FrameReading:
    """Read every die in one BGR frame.

    profile: a calibration profile (from ``companion calibrate``); without one only
        pip dice are read.
    mat: pass a MatView (or None for "no mat") found earlier to skip looking again.
    pip_reader / symbol_reader: stand-ins for the real readers (tests, benchmarks).
    pips: False skips the pip reader (a game with symbol dice only, e.g. Vault Assault).
    """
    height, width = image.shape[:2]
    if mat is _NOT_GIVEN:
        mat = find_mat(image, mat_spec)
    dice: list[DieReading] = []
    if pips:
        read_pips = pip_reader or _pip_reader()
        dice = list(read_pips(image))
    notes: list[str] = []

    symbol_dice: list[DieReading] = []
    if profile is not None:
        read_symbols = symbol_reader or _symbol_reader()
        if mat is not None:
            view = mat.warp(image)
            symbol_dice = [
                _view_die_to_frame(d, mat, width, height)
                for d in read_symbols(view, profile, spec=mat_spec)
            ]
        else:
            # No mat: best effort on the whole frame, as if it were the top-down view.
            symbol_dice = list(read_symbols(image, profile, spec=mat_spec))

    if mat is not None:
        placed = []
        off_mat = on_marker = 0
        for die in dice:
            (mx, my), = mat.frame_to_mm([die.centre])
            xy = (float(mx), float(my))
            if not mat.contains_mm(xy):
                off_mat += 1
            elif mat.in_marker_mm(xy):
                on_marker += 1
            else:
                placed.append(DieReading(
                    die.dice_set, die.face, die.confidence, die.box, die.centre,
                    die.angle, xy, die.set_confidence,
                ))
        dice = placed
        symbol_dice = [d for d in symbol_dice
                       if d.mat_xy is None or not mat.in_marker_mm(d.mat_xy)]
        notes.append("mat:" + ",".join(str(m) for m in mat.markers))
        if off_mat:
            notes.append(f"dropped {off_mat} off the mat")
        if on_marker:
            notes.append(f"dropped {on_marker} on a marker")

    if symbol_dice:
        dice = merge_readings(dice, symbol_dice)
    return FrameReading(width, height, tuple(dice), mat is not None, frame_index, tuple(notes))


class MotionDetector:
    """Large moving blobs between consecutive frames (hands, a bumped camera).

    Works on a grey copy about ``width`` pixels wide (every n-th pixel, blurred). A
    blob of changed pixels bigger than ``hand_fraction`` of the frame is a hand; its
    box comes back in frame pixels.
    """

    def __init__(self, width: int = 160, threshold: int = 25, hand_fraction: float = 0.03):
        self.width = width
        self.threshold = threshold
        self.hand_fraction = hand_fraction
        self._prev: np.ndarray | None = None

    def reset(self) -> None:
        self._prev = None

    def update(self, image: np.ndarray) -> list[tuple[int, int, int, int]]:
        h, w = image.shape[:2]
        step = max(1, w // self.width)
        scale = 1.0 / step
        small = np.ascontiguousarray(image[::step, ::step])  # every step-th pixel: free
        gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        gray = cv2.GaussianBlur(gray, (5, 5), 0)
        prev, self._prev = self._prev, gray
        if prev is None or prev.shape != gray.shape:
            return []
        diff = cv2.absdiff(gray, prev)
        _, mask = cv2.threshold(diff, self.threshold, 255, cv2.THRESH_BINARY)
        mask = cv2.dilate(mask, np.ones((3, 3), np.uint8))
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        limit = self.hand_fraction * gray.size
        boxes = []
        for i in range(1, count):
            x, y, bw, bh, area = stats[i]
            if area >= limit:
                boxes.append((
                    int(x / scale), int(y / scale),
                    int(min(w, (x + bw) / scale)), int(min(h, (y + bh) / scale)),
                ))
        return boxes


class Pipeline:
    """read_frame over a stream: the mat looked for now and then, hands marked."""

    def __init__(
        self,
        *,
        profile: Any = None,
        mat_spec: MatSpec = DEFAULT_MAT,
        mat_every: int = 15,
        mat_keep: int = 2,
        marker_change: float = 30.0,
        motion: bool = True,
        hand_fraction: float = 0.03,
        pip_reader: DieReader | None = None,
        symbol_reader: DieReader | None = None,
        pips: bool = True,
    ) -> None:
        self.profile = profile
        self.mat_spec = mat_spec
        self.mat_every = max(1, mat_every)
        self.mat_keep = mat_keep
        self.motion = MotionDetector(hand_fraction=hand_fraction) if motion else None
        self.pips = pips
        self.pip_reader = (pip_reader or _pip_reader()) if pips else None
        self.symbol_reader = symbol_reader
        if profile is not None and symbol_reader is None:
            self.symbol_reader = _symbol_reader()
        self.mat: MatView | None = None
        self._since_mat = self.mat_every
        self._mat_misses = 0
        self._patches: list = []
        self._patches_shape: tuple = ()
        self.marker_change = marker_change
        self._count = 0

    def _marker_patches(self, gray: np.ndarray, mat: MatView) -> list:
        h, w = gray.shape[:2]
        patches = []
        for quad in mat.corners.values():
            x0, y0 = np.floor(quad.min(axis=0)).astype(int)
            x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
            if x1 > x0 and y1 > y0:
                patches.append((x0, y0, x1, y1, gray[y0:y1, x0:x1].copy()))
        return patches

    def _mat_moved(self, image: np.ndarray) -> bool:
        """True when at least two markers no longer look as they did (camera bumped)."""
        if not self._patches or image.shape[:2] != self._patches_shape:
            return False
        changed = 0
        for x0, y0, x1, y1, ref in self._patches:
            patch = image[y0:y1, x0:x1]
            if patch.ndim == 3:
                patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
            changed += float(cv2.absdiff(patch, ref).mean()) > self.marker_change
        return changed >= min(2, len(self._patches))

    def process(self, image: np.ndarray, frame_index: int | None = None) -> FrameReading:
        index = self._count if frame_index is None else frame_index
        self._count += 1
        hands = self.motion.update(image) if self.motion is not None else []
        self._since_mat += 1
        if self._since_mat >= self.mat_every or self._mat_moved(image):
            gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
            found = find_mat(gray, self.mat_spec)
            self._since_mat = 0
            if found is not None:
                if not found.same_place(self.mat):
                    self.mat = found  # else keep the old view: same place, warp maps built
                self._mat_misses = 0
                self._patches = self._marker_patches(gray, found)
                self._patches_shape = gray.shape[:2]
            else:
                # A hand over a marker hides it for a moment; the mat has not moved.
                self._mat_misses += 1
                self._patches = []
                if self._mat_misses > self.mat_keep:
                    self.mat = None
        reading = read_frame(
            image, profile=self.profile, mat_spec=self.mat_spec, mat=self.mat,
            frame_index=index, pip_reader=self.pip_reader, symbol_reader=self.symbol_reader,
            pips=self.pips,
        )
        if hands:
            reading = FrameReading(
                reading.width, reading.height, reading.dice, reading.mat_found,
                reading.frame_index, reading.notes + tuple(hand_note(b) for b in hands),
            )
        return reading
