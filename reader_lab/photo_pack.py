"""The real photo sets packed small, to travel with the tree to the accelerator.

``../shared`` does not travel to the device machine: what a training run there reads must
ride in the working tree (64 MiB in all with the tree itself). ``python -m reader_lab
photo-pack OUT`` writes the train and validation sets of the standard split, each photo
resized so its longer side is at most ``--side`` px (512) and stored as WebP (quality
``--quality``), and one ``pack.json``: per image its file, set, source photo (augmented
copies share one) and dice (box in the packed image's pixels, face 1-6), and where a box
audit's two raters both called a box on a train photo not a die (issue 9u's board pieces,
``--not-dice``, taught by the CPU recipe's ``--rated-negatives`` since 9w), those boxes
as ``not_dice``. The held-aside sets are never packed: nothing trained on the accelerator
can see them.

OUT is git-ignored (``.lab/``); the pack is made again from ``../shared`` by the same
command, byte for byte the same images for the same options. ``load_pack(OUT)`` reads it
back (the images decoded, RGB order as OpenCV's BGR).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.errors import CompanionError
from reader_lab import dice_photos
from reader_lab.rated_boxes import RatedNegativesError, read_rated_negatives

PACK_SETS = (*dice_photos.TRAIN_SETS, *dice_photos.VAL_SETS)
DEFAULT_SIDE = 512
DEFAULT_QUALITY = 70
BUDGET_MIB = 40  # what the pack may take of the 64 MiB that travels with the tree
VERSION = 1
# issue 9u's box audit of the train photos: the boxes two raters called not a die
NOT_DICE = Path(__file__).resolve().parent / "benchmarks" / "box_audit_9u" / "train"


class PackError(CompanionError, ValueError):
    """A pack folder that cannot be read (missing, foreign or damaged)."""


@dataclass(frozen=True)
class PackedImage:
    file: str
    set: str
    source: str
    boxes: np.ndarray  # N x 4 float32, x0 y0 x1 y1 in the packed image's pixels
    faces: np.ndarray  # N int64, 1-6
    # M x 4 float32: boxes raters called not a die (board pieces), in the same pixels
    not_dice: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))


def _packed(img: np.ndarray, side: int) -> tuple[np.ndarray, float]:
    h, w = img.shape[:2]
    r = min(1.0, side / max(h, w))
    if r < 1.0:
        img = cv2.resize(img, (max(1, round(w * r)), max(1, round(h * r))),
                         interpolation=cv2.INTER_AREA)
    return img, r


def build(out: str | Path, sets: tuple[str, ...] = PACK_SETS, side: int = DEFAULT_SIDE,
          quality: int = DEFAULT_QUALITY, root: str | Path | None = None,
          limit: int | None = None, log=print, not_dice: str | Path | None = NOT_DICE
          ) -> dict:
    """Write the pack; return its ``pack.json`` contents. ``limit``: that many images
    per set at most (a small pack to try a command on). ``not_dice``: a box audit's
    round folder whose boxes both raters called not a die go with their photos (None:
    none)."""
    rated = read_rated_negatives(not_dice) if not_dice is not None else {}
    for name in sets:
        if name in dice_photos.HELD_ASIDE:
            raise PackError(f"{name} is held aside: it is never packed for training")
    out = Path(out)
    (out / "img").mkdir(parents=True, exist_ok=True)
    images = []
    total = 0
    for name in sets:
        items = dice_photos.load_set(name, root)
        sources = dice_photos.sources_of(name, items, root)
        if limit is not None:
            items, sources = items[:limit], sources[:limit]
        for k, (item, source) in enumerate(zip(items, sources, strict=True)):
            img = cv2.imread(str(item.path), cv2.IMREAD_COLOR)
            if img is None:
                raise PackError(f"{item.path}: not an image OpenCV can read")
            small, r = _packed(img, side)
            ok, data = cv2.imencode(".webp", small, [cv2.IMWRITE_WEBP_QUALITY, quality])
            if not ok:
                raise PackError(f"{item.path}: WebP encoding failed")
            file = f"img/{name}-{k:05d}.webp"
            (out / file).write_bytes(data.tobytes())
            total += len(data)
            entry = {
                "file": file, "set": name, "source": f"{name}:{source}",
                "dice": [[round(v * r, 2) for v in d.box] + [int(d.face)] for d in item.dice],
            }
            pieces = rated.get(dice_photos.photo_key(item.path, root) or "", [])
            if pieces:
                entry["not_dice"] = [[round(v * r, 2) for v in box] for box in pieces]
            images.append(entry)
        log(f"{name}: {len(items)} images, {total / 2 ** 20:.1f} MiB so far")
    meta = {"version": VERSION, "side": side, "quality": quality, "sets": list(sets),
            "bytes": total, "images": images}
    (out / "pack.json").write_text(json.dumps(meta, separators=(",", ":")))
    return meta


def load_pack(folder: str | Path, sets: tuple[str, ...] | None = None
              ) -> tuple[list[np.ndarray], list[PackedImage]]:
    """The packed images (decoded) and their labels, of ``sets`` (default: all)."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / "pack.json").read_text())
    except FileNotFoundError:
        raise PackError(f"{folder}: no pack.json (make one with python -m reader_lab "
                        "photo-pack)") from None
    except (OSError, ValueError) as exc:
        raise PackError(f"{folder / 'pack.json'}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        raise PackError(f"{folder / 'pack.json'}: not a version {VERSION} photo pack")
    imgs, labels = [], []
    for entry in meta["images"]:
        if sets is not None and entry["set"] not in sets:
            continue
        img = cv2.imread(str(folder / entry["file"]), cv2.IMREAD_COLOR)
        if img is None:
            raise PackError(f"{folder / entry['file']}: missing or not an image")
        dice = np.array(entry["dice"], np.float32).reshape(-1, 5)
        imgs.append(img)
        labels.append(PackedImage(entry["file"], entry["set"], entry["source"],
                                  dice[:, :4].copy(), dice[:, 4].astype(np.int64),
                                  np.array(entry.get("not_dice", []),
                                           np.float32).reshape(-1, 4)))
    return imgs, labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab photo-pack",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the pack folder (e.g. .lab/pack; git-ignored)")
    ap.add_argument("--side", type=int, default=DEFAULT_SIDE)
    ap.add_argument("--quality", type=int, default=DEFAULT_QUALITY)
    ap.add_argument("--sets", nargs="+", default=list(PACK_SETS))
    ap.add_argument("--limit", type=int, default=None, help="images per set at most")
    ap.add_argument("--root", default=None, help="the photo sets' folder")
    ap.add_argument("--not-dice", default=str(NOT_DICE), metavar="DIR",
                    help="a box audit round whose boxes both raters called not a die go "
                         "into the pack (default issue 9u's train round; '' for none)")
    args = ap.parse_args(argv)
    if not 64 <= args.side <= 2048 or not 1 <= args.quality <= 100:
        ap.error("--side must be 64-2048 and --quality 1-100")
    try:
        meta = build(args.out, tuple(args.sets), args.side, args.quality, args.root,
                     args.limit, not_dice=args.not_dice or None)
    except (PackError, KeyError, dice_photos.ManifestError, RatedNegativesError) as exc:
        print(f"photo-pack: {exc}")
        return 2
    mib = meta["bytes"] / 2 ** 20
    dice = sum(len(e["dice"]) for e in meta["images"])
    pieces = sum(len(e.get("not_dice", [])) for e in meta["images"])
    print(f"pack: {len(meta['images'])} images, {dice} dice, {pieces} boxes not a die, "
          f"{mib:.1f} MiB "
          f"(budget {BUDGET_MIB} MiB{'' if mib <= BUDGET_MIB else ': OVER'})")
    return 0 if mib <= BUDGET_MIB else 1
