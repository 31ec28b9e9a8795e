"""A detector's boxes on a photo pack, as they fall, for ``train-faces`` to cut dice from.

    python -m reader_lab pack-boxes --pack .lab/pack --model DIR [--threshold 0.3]
    python -m reader_lab pack-boxes --pack .lab/pack --picture docs/pack-boxes.png

Runs the reader of model folder DIR (its detector, at the input side it reads a photo of
that size at the table: ``LearnedReader.detect``) over every photo of the pack and writes
``PACK/boxes.json``, so it travels with the pack to the accelerator. Per photo: each box
scored at least ``--threshold`` that lies on a labelled die (the two centres each inside
the other's box, ``on_die``; the nearest die when several) with that die's
number, and, on the sets that box every die (``dice_photos.fully_labelled``), each box on
no die: a "phantom", which the face network learns as "not a die". ``train-faces --boxes
PACK/boxes.json`` then cuts a share of its dice where the detector put them (off centre,
too large or too small, as at the table) rather than only in the labelled boxes, and
reports the validation sets read in the detector's boxes too.

``--picture OUT`` draws the pack's ``boxes.json`` on four photos with phantoms (of the
validation sets): the labelled boxes in green, the detector's boxes on dice in orange with
their scores, its phantoms in red.

Issue 64 asks for the face network trained on "the boxes of the new detector as they
fall": run this with a folder holding the big detector once it is trained (the committed
detector until then).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import cv2
import numpy as np

from reader_lab import dice_photos
from reader_lab.photo_pack import PackedImage, PackError, load_pack

VERSION = 1
FILE = "boxes.json"
DEFAULT_THRESHOLD = 0.3


def on_die(box, die) -> bool:
    """Each box's centre lies inside the other (a detector box on a labelled die)."""
    x0, y0, x1, y1 = box[:4]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return bool(die[0] <= cx <= die[2] and die[1] <= cy <= die[3]
                or x0 <= (die[0] + die[2]) / 2 <= x1 and y0 <= (die[1] + die[3]) / 2 <= y1)


def boxes_of(detected: list, labelled: np.ndarray, whole: bool
             ) -> tuple[list[list[float]], list[list[float]]]:
    """A photo's detector boxes (x0, y0, x1, y1, score) split into those on a labelled
    die, as [x0, y0, x1, y1, score, die index] (the die whose centre is nearest), and,
    where the photo boxes every die (``whole``), those on none: [x0, y0, x1, y1, score]."""
    dice, phantoms = [], []
    for box in detected:
        row = [round(float(v), 2) for v in box[:4]] + [round(float(box[4]), 4)]
        on = [j for j, b in enumerate(labelled) if on_die(box, b)]
        if on:
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            j = min(on, key=lambda k: math.hypot((labelled[k][0] + labelled[k][2]) / 2 - cx,
                                                 (labelled[k][1] + labelled[k][3]) / 2 - cy))
            dice.append([*row, j])
        elif whole:
            phantoms.append(row)
    return dice, phantoms


def mine(pack: str | Path, model_dir: str | Path, threshold: float = DEFAULT_THRESHOLD,
         log=print) -> dict:
    """The boxes of ``model_dir``'s detector on every photo of ``pack`` (``boxes.json``'s
    content)."""
    from companion.vision.learned import LearnedReader, network_fingerprint

    reader = LearnedReader(model_dir, threads=1)
    imgs, labels = load_pack(pack)
    t0 = time.time()
    out: dict = {"version": VERSION, "model": str(model_dir),
                 "detector": network_fingerprint(Path(model_dir) / "detector.onnx"),
                 "threshold": threshold, "images": {}}
    counts = {"dice": 0, "phantoms": 0, "labelled": 0, "found": 0}
    for img, lab in zip(imgs, labels, strict=True):
        dice, phantoms = boxes_of(reader.detect(img, threshold), lab.boxes,
                                  dice_photos.fully_labelled(lab.set))
        out["images"][lab.file] = {"dice": dice, "phantoms": phantoms}
        counts["dice"] += len(dice)
        counts["phantoms"] += len(phantoms)
        counts["labelled"] += len(lab.boxes)
        counts["found"] += len({d[5] for d in dice})
    log(f"{len(imgs)} photos in {time.time() - t0:.0f}s: {counts['dice']} boxes on "
        f"{counts['found']} of {counts['labelled']} labelled dice, {counts['phantoms']} "
        f"on no die (sets that box every die), score >= {threshold}")
    return out


def load_boxes(path: str | Path, labels: list[PackedImage]
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per photo of ``labels`` (as ``load_pack`` gave them): the detector's boxes on dice
    (n x 6: x0, y0, x1, y1, score, die index) and on no die (n x 5), from ``path`` (a
    ``boxes.json``). A file that cannot be read, or that was made for another pack (a
    photo it does not name, a die index the photo does not have), is ``PackError``."""
    path = Path(path)
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise PackError(f"{path}: no such file (make it with python -m reader_lab "
                        "pack-boxes)") from None
    except (OSError, ValueError) as exc:
        raise PackError(f"{path}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or meta.get("version") != VERSION \
            or not isinstance(meta.get("images"), dict):
        raise PackError(f"{path}: not a version {VERSION} boxes file")
    dice, phantoms = [], []
    for lab in labels:
        entry = meta["images"].get(lab.file)
        if not isinstance(entry, dict):
            raise PackError(f"{path}: made for another pack (no boxes for {lab.file})")
        try:
            d = np.array(entry["dice"], np.float32).reshape(-1, 6)
            p = np.array(entry["phantoms"], np.float32).reshape(-1, 5)
        except (KeyError, TypeError, ValueError):
            raise PackError(f"{path}: the boxes of {lab.file} are not rows of numbers") \
                from None
        if len(d) and not (d[:, 5].min() >= 0 and d[:, 5].max() < len(lab.boxes)):
            raise PackError(f"{path}: made for another pack ({lab.file} has "
                            f"{len(lab.boxes)} dice)")
        dice.append(d)
        phantoms.append(p)
    return dice, phantoms


def picture(pack: str | Path, photos: int = 4) -> np.ndarray:
    """``photos`` validation photos of the pack that hold phantoms, side by side (each
    scaled to 320 px high): labelled boxes green, the detector's on dice orange (score
    above), its phantoms red."""
    names = [s for s in dice_photos.VAL_SETS if dice_photos.fully_labelled(s)]
    imgs, labels = load_pack(pack, tuple(names))
    dice, phantoms = load_boxes(Path(pack) / FILE, labels)
    tiles = []
    for img, lab, d, ph in zip(imgs, labels, dice, phantoms, strict=True):
        if not len(ph) or len(tiles) >= photos:
            continue
        img = img.copy()
        for b in lab.boxes:
            cv2.rectangle(img, (int(b[0]), int(b[1])), (int(b[2]), int(b[3])), (0, 200, 0), 1)
        for rows, colour in ((d, (0, 140, 255)), (ph, (0, 0, 255))):
            for b in rows:
                cv2.rectangle(img, (int(b[0]), int(b[1])), (int(b[2]), int(b[3])), colour, 2)
                cv2.putText(img, f"{b[4]:.2f}", (int(b[0]), max(10, int(b[1]) - 3)),
                            cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv2.LINE_AA)
        scale = 320 / img.shape[0]
        tiles.append(cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA))
    if not tiles:
        raise PackError(f"{Path(pack) / FILE}: no validation photo with a phantom to draw")
    return np.hstack(tiles)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab pack-boxes",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", required=True, help="a photo pack (python -m reader_lab "
                    "photo-pack); the boxes are written into it, as boxes.json")
    ap.add_argument("--model", help="a model folder whose detector runs")
    ap.add_argument("--picture", metavar="OUT", help="draw the pack's boxes.json on four "
                    "photos into OUT (a PNG) instead")
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                    help="the lowest detector score kept")
    args = ap.parse_args(argv)
    if not 0.05 <= args.threshold <= 0.95:
        ap.error("--threshold must be 0.05-0.95")
    from companion.vision.learned import ModelMissing

    if args.picture:
        try:
            img = picture(args.pack)
        except PackError as exc:
            print(f"pack-boxes: {exc}")
            return 2
        Path(args.picture).parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(args.picture, img, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(args.picture)
        return 0
    if not args.model:
        ap.error("--model is needed to find the boxes (or --picture OUT to draw them)")
    try:
        content = mine(args.pack, args.model, args.threshold)
    except (PackError, ModelMissing) as exc:
        print(f"pack-boxes: {exc}")
        return 2
    out = Path(args.pack) / FILE
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(content, separators=(",", ":")))
    tmp.replace(out)
    print(out)
    return 0
