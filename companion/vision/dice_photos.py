"""The shared real-photo sets (../shared/datasets/dice-photos/) and how they are split.

One place says which labelled dice the learned reader may train on, which it may be
tuned on, and which are held aside for the figures (never trained or tuned on):

- train: ``webcam-white-d6`` (whole), ``table-mixed-d6/labels_train.csv`` except the
  validation photos, ``trays-mixed-d6`` photos whose source photo falls in the train part;
- val (thresholds, early choices): one photo in ten of ``table-mixed-d6/labels_train.csv``
  (by source photo, so augmented copies stay together) and the tray val part;
- held aside: ``table-mixed-d6/labels_test.csv``, ``webcam-two-d6`` (whole), and the
  trays photos whose ``groups.csv`` ``source_stem`` hashes into the test part.

Tray split: sha1(source_stem) % 10 -> 0, 1 = test, 2 = val, else train. The 881 images
whose source stem is just ``i`` (one unnamed source) go to train as one group.
Pure: reads CSVs, no OpenCV.
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from companion.vision.evaluate import ManifestImage, load_manifest

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOT = REPO.parent / "shared" / "datasets" / "dice-photos"

HELD_ASIDE = ("table-test", "webcam-two", "trays-test", "trays-colour-test")
_RF = re.compile(r"^(.*?)_(?:jpg|jpeg|png)\.rf\.[0-9a-f]+\.\w+$", re.IGNORECASE)


def photo_root(root: str | Path | None = None) -> Path:
    return Path(root) if root else DEFAULT_ROOT


def available(root: str | Path | None = None) -> bool:
    return (photo_root(root) / "table-mixed-d6" / "labels_test.csv").is_file()


def source_of(key: str) -> str:
    """The source photo of a Roboflow export file name (augmented copies share it)."""
    name = Path(key).name
    m = _RF.match(name)
    return m.group(1) if m else Path(name).stem


def _bucket(stem: str, mod: int = 10) -> int:
    return int(hashlib.sha1(stem.encode("utf-8")).hexdigest(), 16) % mod


def tray_part(stem: str) -> str:
    if stem == "i":
        return "train"
    b = _bucket(stem)
    return "test" if b in (0, 1) else "val" if b == 2 else "train"


def _tray_groups(root: Path) -> dict[str, tuple[str, str]]:
    path = root / "trays-mixed-d6" / "groups.csv"
    with path.open(encoding="utf-8") as fh:
        return {r["image"]: (r["source_stem"], r["group"]) for r in csv.DictReader(fh)}


def _trays(root: Path, part: str, colour_only: bool = False) -> list[ManifestImage]:
    groups = _tray_groups(root)
    name = "labels_colour.csv" if colour_only else "labels.csv"
    return [m for m in load_manifest(root / "trays-mixed-d6" / name)
            if tray_part(groups.get(m.key, (source_of(m.key), ""))[0]) == part]


def _table_train(root: Path, part: str) -> list[ManifestImage]:
    items = load_manifest(root / "table-mixed-d6" / "labels_train.csv")
    want_val = part == "val"
    return [m for m in items if (_bucket(source_of(m.key)) == 0) == want_val]


def load_set(name: str, root: str | Path | None = None) -> list[ManifestImage]:
    """A named split, as manifest images (paths resolved under the photo root)."""
    r = photo_root(root)
    if name == "webcam-white":
        return load_manifest(r / "webcam-white-d6" / "labels.csv")
    if name == "table-train":
        return _table_train(r, "train")
    if name == "table-val":
        return _table_train(r, "val")
    if name == "table-test":
        return load_manifest(r / "table-mixed-d6" / "labels_test.csv")
    if name == "webcam-two":
        return load_manifest(r / "webcam-two-d6" / "labels.csv")
    if name.startswith("trays-colour-"):
        return _trays(r, name.removeprefix("trays-colour-"), colour_only=True)
    if name.startswith("trays-"):
        return _trays(r, name.removeprefix("trays-"))
    raise KeyError(f"unknown photo set {name!r}")


TRAIN_SETS = ("webcam-white", "table-train", "trays-train")
VAL_SETS = ("table-val", "trays-val")


def manifest_path(name: str, root: str | Path | None = None) -> Path | None:
    """The CSV a held-aside set can be scored from with plain `companion eval` (or None
    when the set is a filtered split that has no file of its own)."""
    r = photo_root(root)
    return {
        "table-test": r / "table-mixed-d6" / "labels_test.csv",
        "webcam-two": r / "webcam-two-d6" / "labels.csv",
    }.get(name)


def write_manifest(items: list[ManifestImage], path: str | Path) -> Path:
    """Write a split as a manifest CSV (absolute image paths) for `companion eval`."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["image", "face", "x0", "y0", "x1", "y1"])
        for m in items:
            for d in m.dice:
                w.writerow([str(m.path.resolve()), d.face, *(round(v) for v in d.box)])
    return path
