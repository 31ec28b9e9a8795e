"""Half-size sets: a photo set's dice made small, from photos no network trained on.

Validation is nearly blind to small dice (issue 9c: dice under 32 px are 20 of trays-val's
501, but 808 of trays-test's 2,388), and a split that moves small-dice photos to
validation needs every network trained again. A half-size set shows validation's own
photos, unseen by every network, with their dice half as large: each source photo's
copies (augmented copies of one photo share a source) scaled to half the side, four to a
640x640 image in a 2x2 grid (copies cycled when there are fewer than four), boxes scaled
with them. The image stays 640 px, so the detector sees the dice at half the size too.

``table-val-half`` is ``table-val`` so (median die side 21.5 px against 43), and
``trays-val-half`` ``trays-val`` (28.5 against 57). Downscaling is not distance: a far die
is also blurred and lit as the lens and the light make it; this is a proxy that counts
small dice found and read, not a set of its own. One image holds one source photo, so an
interval over source photos holds.

The images are built once into the companion's cache (``companion.cache``: systemd's
``$CACHE_DIRECTORY/half-size`` when set, else ``$XDG_CACHE_HOME/vault-companion/half-size``,
by default under ``~/.cache``), one folder per set with its ``labels.csv``; a folder
whose recorded inputs differ from the set's is built again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

from companion.cache import cache_dir
from companion.vision.evaluate import ManifestError, ManifestImage, load_manifest
from companion.vision.frames import load_image

SIDE = 640  # px: a mosaic's side
GRID = 2  # tiles across: each copy is scaled to SIDE / GRID
VERSION = 1  # bumped when the mosaics are made otherwise (older caches are rebuilt)
_STAMP = "inputs.json"


def folder(name: str) -> Path:
    """Where the half-size set ``name`` is built (the companion's cache)."""
    return cache_dir("half-size") / name


def file_safe(text: str) -> str:
    """A source photo's name as the half-size image showing it spells it: at most 60
    letters, digits, ``-``, ``_`` or ``.`` (anything else becomes ``_``)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:60]


def source_name(key: str) -> str:
    """The source photo a half-size image shows, as ``file_safe`` spells it."""
    return Path(key).stem.split("_", 1)[1]


def mosaic(copies: Sequence[ManifestImage]) -> tuple[np.ndarray, list[tuple[str, tuple]]]:
    """One SIDE x SIDE image of ``copies`` (cycled) at 1/GRID of the side, each kept whole
    in its tile (aspect kept, top left; the rest black), and its dice (face, box)."""
    tile = SIDE // GRID
    canvas = np.zeros((SIDE, SIDE, 3), np.uint8)
    dice: list[tuple[str, tuple]] = []
    for q in range(GRID * GRID):
        m = copies[q % len(copies)]
        img = load_image(m.path)
        h, w = img.shape[:2]
        f = tile / max(h, w)
        nw, nh = max(1, round(w * f)), max(1, round(h * f))
        ox, oy = (q % GRID) * tile, (q // GRID) * tile
        canvas[oy:oy + nh, ox:ox + nw] = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
        for d in m.dice:
            x0, y0, x1, y1 = d.box
            dice.append((d.face, (ox + x0 * f, oy + y0 * f, ox + x1 * f, oy + y1 * f)))
    return canvas, dice


def inputs_stamp(items: Sequence[ManifestImage], sources: Sequence[str], **how) -> dict:
    """What a derived set is built from: each photo's source, path and dice (hashed) and
    ``how`` it is made (version and parameters), as ``build_cached`` compares it."""
    h = hashlib.sha1()
    for m, s in zip(items, sources, strict=True):
        h.update(json.dumps([s, str(m.path), [[d.face, *d.box] for d in m.dice]]).encode())
    return {**how, "images": len(items), "sha1": h.hexdigest()}


def manifest_row(key: str, face: str, box) -> str:
    """One die's row of a derived set's labels.csv."""
    return f"{key},{face}," + ",".join(f"{v:.2f}" for v in box)


def _holds(folder: Path, want: dict) -> bool:
    """Whether ``folder`` holds a whole build of these inputs (none yet, another set's or
    a half-written one: no)."""
    try:
        return json.loads((folder / _STAMP).read_text(encoding="utf-8")) == want
    except (OSError, ValueError):
        return False


def build(items: Sequence[ManifestImage], sources: Sequence[str], folder: Path
          ) -> list[ManifestImage]:
    """The half-size images of ``items`` (``sources``: each one's source photo) in
    ``folder`` (built there unless it already holds these inputs' images whole: a cache
    with its labels unreadable or an image gone is built again), as a manifest:
    one image per source photo, named after it, in order of first appearance."""
    by_source: dict[str, list[ManifestImage]] = {}
    for m, s in zip(items, sources, strict=True):
        by_source.setdefault(s, []).append(m)

    def write(tmp: Path) -> list[str]:
        rows = []
        for k, (source, copies) in enumerate(by_source.items()):
            name = f"{k:04d}_{file_safe(source)}.png"
            canvas, dice = mosaic(copies)
            write_image(tmp / name, canvas)
            rows += [manifest_row(name, face, box) for face, box in dice]
        return rows

    stamp = inputs_stamp(items, sources, version=VERSION, side=SIDE, grid=GRID)
    return build_cached(folder, stamp, write)


def write_image(path: Path, image: np.ndarray) -> None:
    """``image`` to ``path`` (its folders made); OSError naming the file if it cannot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), image):
        raise OSError(f"{path}: cannot write the image")


def build_cached(folder: Path, want: dict, write: Callable[[Path], list[str]]
                 ) -> list[ManifestImage]:
    """A set derived from photos, built once into ``folder``: the manifest there when
    the folder holds a whole build of the inputs ``want`` describes, else ``write`` (given
    an empty folder to fill with images; it returns their manifest rows, without the
    header) builds it anew beside it and it takes the folder's place (a build another
    process finished meanwhile is taken when it is of the same inputs)."""
    if _holds(folder, want):
        try:
            cached = load_manifest(folder / "labels.csv")
            if all(m.path.is_file() for m in cached):
                return cached
        except ManifestError:
            pass  # damaged: built again below (it holds nothing that cannot be rebuilt)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        rows = ["image,face,x0,y0,x1,y1", *write(tmp)]
        (tmp / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (tmp / _STAMP).write_text(json.dumps(want) + "\n", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process built it meanwhile: fine if it is the same
            if not _holds(folder, want):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return load_manifest(folder / "labels.csv")
