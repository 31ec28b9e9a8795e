"""Hue-turned sets: a photo set's colours turned, from photos no network trained on.

The box meets dice and tables of colours nobody here photographed, and validation shows
only the colours its photos hold. A hue-turned set shows validation's own photos with
every hue turned by one of ``ANGLES`` (a red die becomes a green or blue one, and its
table too), chosen by the photo's source, so augmented copies of one photo are turned
alike and an interval over source photos holds. Saturation and brightness stay, so
white, grey and black dice (and greyscale photos) are as they were: the set tests
colours only. Dice and boxes are the base set's.

``table-val-hue`` is ``table-val`` so, ``trays-val-hue`` ``trays-val``. Built once into
the companion's cache (``cache_dir("hue-turned")``, as ``half_size`` builds its sets),
each image under its own key made a PNG, so a set's source photos are found as the base
set's are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.cache import cache_dir
from companion.vision.evaluate import ManifestImage
from companion.vision.frames import load_image
from reader_lab.half_size import build_cached, inputs_stamp, manifest_row, write_image

ANGLES = (60, 120, 180, 240, 300)  # degrees a photo's hues may be turned by
VERSION = 2  # bumped when the images are made otherwise (older caches are rebuilt)


def folder(name: str) -> Path:
    """Where the hue-turned set ``name`` is built (the companion's cache)."""
    return cache_dir("hue-turned") / name


def turned_key(key: str) -> str:
    """The key of the hue-turned image of the base set's photo ``key``: its name with
    ``.png`` for its suffix, so the source photo its name gives is the base photo's
    (``dice_photos.source_of``)."""
    return str(Path(key).with_suffix(".png"))


def angle_of(source: str) -> int:
    """The degrees a source photo's hues are turned by (one of ``ANGLES``, by its name)."""
    return ANGLES[int(hashlib.sha1(source.encode("utf-8")).hexdigest(), 16) % len(ANGLES)]


def turn_hue(image: np.ndarray, degrees: int) -> np.ndarray:
    """``image`` (BGR) with every hue turned by ``degrees``; saturation and value kept."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hue = hsv[..., 0].astype(np.int16) + round(degrees / 2)  # OpenCV's hue: 0..179
    hsv[..., 0] = (hue % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def build(items: Sequence[ManifestImage], sources: Sequence[str], folder: Path
          ) -> list[ManifestImage]:
    """The hue-turned images of ``items`` (``sources``: each one's source photo) in
    ``folder`` (built there unless it already holds these inputs' images whole), as a
    manifest: each image under its own key made a PNG (``turned_key``: no JPEG loss is
    added), its dice as they were."""

    def write(tmp: Path) -> list[str]:
        rows = []
        for m, source in zip(items, sources, strict=True):
            key = turned_key(m.key)
            write_image(tmp / key, turn_hue(load_image(m.path), angle_of(source)))
            rows += [manifest_row(key, d.face, d.box) for d in m.dice]
        return rows

    stamp = inputs_stamp(items, sources, version=VERSION, angles=list(ANGLES))
    return build_cached(folder, stamp, write)
