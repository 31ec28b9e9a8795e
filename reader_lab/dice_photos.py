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

The wider split (issue 8f; sets named with a ``2``: ``table-train2``, ``table-val2``,
``trays-train2``, ``trays-val2``, ``trays-colour-val2``): validation is two tenths of the
source photos instead of one (table bucket 0 or 1, tray bucket 2 or 3), so it holds the
narrow validation split and about twice as many dice. The held-aside sets are the same.
The webcam split (issue 8l; ``--webcam-val``): ``webcam-white-d6`` is also split, by frame,
into its author's own folders: ``webcam-train`` (``Train/``, 310 frames, 951 dice) and
``webcam-val`` (``Valid/``, 86 frames, 255 dice), so validation also holds frames like the
companion's own camera (640x480, white dice, 50-80 px). A split is named by its tenths and
whether the webcam frames are split (and, since issue 9c, whether small-dice tray sources
move to validation): ``(1, False, False)`` is the split up to issue 8k.
The small-dice tray split (issue 9c; ``--tray-small-val``; sets ``trays-train-small``,
``trays-val-small``): the narrow split's tray validation is blind to small dice (20 of
its 501 dice are under 32 px, against 808 of trays-test's 2,388), because a few source
photos hold most of them and the hash happened to put none of those in val. So half of
the train part's small-dice sources (median labelled die side under
``SMALL_SOURCE_SIDE``; chosen by sha1("small/" + source_stem) % 2 == 0, sizes from the
labels only, never from a result) move to validation: 27 sources, 409 dice; the tray
validation then holds 910 dice, 319 of them small (35%; trays-test 34%). Table and
webcam parts are as in the split it extends.
Any set's name with ``-half`` (issue 9e; ``half_size``) is its photos with the dice half
as large, four copies of one source photo to a 640x640 image: small dice in validation
without moving photos out of training. With ``-hue`` (issue 9r; ``hue_turned``) its
photos' hues are turned; with ``-dyed`` (issue 9s; ``dyed_dice``) its dice are repainted
other die and pip colours.
A model records the sets it was trained and tuned on (reader.json ``train_sets`` /
``val_sets``).
A training folder records its split in ``split.json`` (``record_split``), so a part
trained or tuned later with another split is refused (``resolve_split``): thresholds tuned
on photos the networks trained on would look better than they are.
Reads CSVs (and writes that one JSON file), no OpenCV.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import statistics
from dataclasses import replace
from pathlib import Path

from companion.errors import CompanionError
from companion.vision.evaluate import ManifestError, ManifestImage, load_manifest, source_of

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO.parent / "shared" / "datasets" / "dice-photos"

HELD_ASIDE = ("table-test", "webcam-two", "trays-test", "trays-colour-test")
# held-aside set -> the set its few shots are drawn from (few-shot figures and pictures)
FEWSHOT_SOURCES = {"table-test": "table-val", "trays-test": "trays-val",
                   "trays-colour-test": "trays-colour-val", "webcam-two": "webcam-white"}


def photo_root(root: str | Path | None = None) -> Path:
    return Path(root) if root else DEFAULT_ROOT


def available(root: str | Path | None = None) -> bool:
    return (photo_root(root) / "table-mixed-d6" / "labels_test.csv").is_file()


def _bucket(stem: str, mod: int = 10) -> int:
    return int(hashlib.sha1(stem.encode("utf-8")).hexdigest(), 16) % mod


def tray_part(stem: str, val_tenths: int = 1, small: bool = False) -> str:
    """"test", "val" or "train" for a tray source photo; validation takes ``val_tenths``
    buckets after the two test ones. ``small``: the source's dice are small
    (``small_sources``) and the small-dice split is asked for, which moves half of such
    train sources to validation."""
    if stem == "i":
        return "train"
    b = _bucket(stem)
    part = "test" if b in (0, 1) else "val" if b < 2 + val_tenths else "train"
    if part == "train" and small and _bucket("small/" + stem, 2) == 0:
        return "val"
    return part


SMALL_SOURCE_SIDE = 32  # px: a tray source whose median labelled die side is below is small
_SMALL: dict[Path, frozenset[str]] = {}


def small_sources(root: str | Path | None = None) -> frozenset[str]:
    """The tray source photos whose labelled dice (all of their photos, ``labels.csv``)
    have a median side (the longer of width and height) under ``SMALL_SOURCE_SIDE`` px."""
    r = photo_root(root)
    if r not in _SMALL:
        groups = _tray_groups(r)
        sides: dict[str, list[float]] = {}
        for m in load_manifest(r / "trays-mixed-d6" / "labels.csv"):
            stem = _tray_stem(groups, m.key)
            sides.setdefault(stem, []).extend(d.side for d in m.dice)
        _SMALL[r] = frozenset(s for s, v in sides.items()
                              if v and statistics.median_low(v) < SMALL_SOURCE_SIDE)
    return _SMALL[r]


def _tray_groups(root: Path) -> dict[str, tuple[str, str]]:
    path = root / "trays-mixed-d6" / "groups.csv"
    with path.open(encoding="utf-8") as fh:
        return {r["image"]: (r["source_stem"], r["group"]) for r in csv.DictReader(fh)}


def _tray_stem(groups: dict[str, tuple[str, str]], key: str) -> str:
    return groups.get(key, (source_of(key), ""))[0]


def _trays(root: Path, part: str, colour_only: bool = False) -> list[ManifestImage]:
    groups = _tray_groups(root)
    name = "labels_colour.csv" if colour_only else "labels.csv"
    part, tenths, small = _split_name(part)
    smalls = small_sources(root) if small else frozenset()
    out = []
    for m in load_manifest(root / "trays-mixed-d6" / name):
        stem = _tray_stem(groups, m.key)
        if tray_part(stem, tenths, stem in smalls) == part:
            out.append(m)
    return out


def _split_name(part: str) -> tuple[str, int, bool]:
    """("val", 2, False) for "val2", ("val", 1, True) for "val-small": a part, how many
    tenths validation takes (1 unnamed) and whether small-dice sources move to it."""
    if part in ("train-small", "val-small"):
        return part.removesuffix("-small"), 1, True
    return (part[:-1], 2, False) if part in ("train2", "val2") else (part, 1, False)


def _table_train(root: Path, part: str) -> list[ManifestImage]:
    items = load_manifest(root / "table-mixed-d6" / "labels_train.csv")
    part, tenths, _ = _split_name(part)
    want_val = part == "val"
    return [m for m in items if (_bucket(source_of(m.key)) < tenths) == want_val]


FIXES = Path(__file__).resolve().parent / "data" / "dice_photo_fixes.csv"
FIXES_HEADER = ["image", "x0", "y0", "x1", "y1", "label", "face", "note"]


def label_fixes(path: str | Path = FIXES) -> dict[tuple[str, tuple[int, ...]], tuple[str, str]]:
    """The label audit's corrections (``reader_lab/benchmarks/label_audit.py``):
    (photo below the photo root, rounded box) -> (label as shipped, face the raters read).
    A malformed file raises ManifestError in one line naming the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"label fixes {path}: {exc}") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0] != FIXES_HEADER:
        raise ManifestError(f"{path}:1: header is not {','.join(FIXES_HEADER)}")
    fixes: dict[tuple[str, tuple[int, ...]], tuple[str, str]] = {}
    for lineno, row in enumerate(rows[1:], start=2):
        try:
            image, box, label, face = row[0], tuple(int(v) for v in row[1:5]), row[5], row[6]
        except (ValueError, IndexError):
            raise ManifestError(f"{path}:{lineno}: expected {','.join(FIXES_HEADER)}") from None
        if label not in "123456" or face not in "123456" or len(label) != 1 or len(face) != 1:
            raise ManifestError(f"{path}:{lineno}: label {label!r} and face {face!r} "
                                "must each be 1..6")
        fixes[(image, box)] = (label, face)
    return fixes


def photo_key(path: str | Path, root: str | Path | None = None) -> str | None:
    """A photo's path below the photo root, as the fixes file names it (None for a photo
    outside it, such as a half-size set's image)."""
    base, p = photo_root(root).resolve(), Path(path).resolve()
    return p.relative_to(base).as_posix() if p.is_relative_to(base) else None


def rounded_box(box) -> tuple[int, ...]:
    """A die's box as the fixes file and the audit's keys write it: whole pixels."""
    return tuple(round(v) for v in box)


def apply_fixes(items: list[ManifestImage], root: Path,
                fixes: dict[tuple[str, tuple[int, ...]], tuple[str, str]]
                ) -> list[ManifestImage]:
    """``items`` with each die the fixes name given the audited face (matched by photo
    and rounded box; a die whose shipped label is not the one the fix was made against
    is left as it is, and so is a photo outside ``root``, such as a half-size set's:
    audit the set before halving it, ``trays-test-audited-half``)."""
    out = []
    for m in items:
        key = photo_key(m.path, root)
        if key is None:
            out.append(m)
            continue
        dice = []
        for d in m.dice:
            fix = fixes.get((key, rounded_box(d.box)))
            dice.append(replace(d, face=fix[1]) if fix and fix[0] == d.face else d)
        out.append(replace(m, dice=tuple(dice)))
    return out


# name suffix -> the module building that set from its base set's photos (``build``,
# ``folder``): its dice half as large, its colours turned, its dice repainted
DERIVED = {"-hue": "hue_turned", "-dyed": "dyed_dice", "-half": "half_size"}
BASE_KEYED = ("-hue", "-dyed")  # those whose images keep the base photo's name (turned_key)


def load_set(name: str, root: str | Path | None = None) -> list[ManifestImage]:
    """A named split, as manifest images (paths resolved under the photo root); a name
    ending in ``-half`` is that split's half-size set (``half_size``), one ending in
    ``-audited`` the split with the label audit's corrections (``label_fixes``), one ending
    in ``-hue`` that split with its photos' hues turned (``hue_turned``), one ending in
    ``-dyed`` that split with its dice repainted other colours (``dyed_dice``)."""
    r = photo_root(root)
    if name.endswith("-audited"):
        return apply_fixes(load_set(name.removesuffix("-audited"), r), r, label_fixes())
    derived = next((s for s in DERIVED if name.endswith(s)), None)
    if derived:  # made from its base set's photos, images built once (module ``build``)
        module = importlib.import_module(f"reader_lab.{DERIVED[derived]}")
        base = name.removesuffix(derived)
        items = load_set(base, r)
        return module.build(items, sources_of(base, items, r), module.folder(name))
    if name == "webcam-white":
        return load_manifest(r / "webcam-white-d6" / "labels.csv")
    if name in ("webcam-train", "webcam-val"):
        folder = "Train" if name == "webcam-train" else "Valid"
        return [m for m in load_manifest(r / "webcam-white-d6" / "labels.csv")
                if Path(m.key).parent.name == folder]
    if name in ("table-train", "table-val", "table-train2", "table-val2"):
        return _table_train(r, name.removeprefix("table-"))
    if name == "table-test":
        return load_manifest(r / "table-mixed-d6" / "labels_test.csv")
    if name == "webcam-two":
        return load_manifest(r / "webcam-two-d6" / "labels.csv")
    if name.startswith("trays-colour-"):
        return _trays(r, name.removeprefix("trays-colour-"), colour_only=True)
    if name.startswith("trays-"):
        return _trays(r, name.removeprefix("trays-"))
    raise KeyError(f"unknown photo set {name!r} (e.g. {', '.join(VAL_SETS)}, webcam-val, "
                   f"{', '.join(HELD_ASIDE)}; any of them with -half: its dice half as "
                   "large; with -hue: its colours turned; with -dyed: its dice repainted)")


def sources_of(name: str, items: list[ManifestImage], root: str | Path | None = None
               ) -> list[str]:
    """Each photo's source photo (augmented copies share it): a tray photo's ``groups.csv``
    ``source_stem``, else the one its file name gives (``source_of``); a hue-turned
    or dyed set's are its base set's."""
    keys = [m.key for m in items]
    derived = next((s for s in BASE_KEYED if name.endswith(s)), None)
    if derived:  # the base photo under each hue-turned or dyed one's key
        from reader_lab.hue_turned import turned_key

        base = {turned_key(m.key): m.key for m in load_set(name.removesuffix(derived), root)}
        keys = [base.get(k, k) for k in keys]
    if not name.startswith("trays-"):
        return [source_of(k) for k in keys]
    groups = _tray_groups(photo_root(root))
    return [_tray_stem(groups, k) for k in keys]


def family_of(name: str) -> str:
    """The set a derived set is made from (``table-val-half``, ``-hue`` or ``-dyed`` ->
    ``table-val``); any other name is its own."""
    return name.removesuffix("-half").removesuffix("-hue").removesuffix("-dyed")


def family_sources(name: str, items: list) -> list[str]:
    """Each photo's set family and source photo, e.g. ``table-val/dice_105``: the same for
    a ``-half`` image as for the full-size photos of the source it shows, and for a
    ``-hue`` or ``-dyed`` copy as for its base photo (issue 9u; figures pooled over a set
    and its copies resample a source photo's copies together)."""
    from reader_lab.half_size import file_safe, source_name

    family = family_of(name)
    if name.endswith("-half"):
        return [f"{family}/{source_name(m.key)}" for m in items]
    return [f"{family}/{file_safe(s)}" for s in sources_of(name, items)]


TRAIN_SETS = ("webcam-white", "table-train", "trays-train")
VAL_SETS = ("table-val", "trays-val")
# A split: (how many tenths of the photos validation takes, whether the webcam frames are
# split too, whether small-dice tray sources move to validation) -> (train sets,
# validation sets)
Split = tuple[int, bool, bool]
SPLITS: dict[Split, tuple[tuple[str, ...], tuple[str, ...]]] = {
    (1, False, False): (TRAIN_SETS, VAL_SETS),
    (2, False, False): (("webcam-white", "table-train2", "trays-train2"),
                        ("table-val2", "trays-val2")),
    (1, True, False): (("webcam-train", "table-train", "trays-train"),
                       ("table-val", "trays-val", "webcam-val")),
    (2, True, False): (("webcam-train", "table-train2", "trays-train2"),
                       ("table-val2", "trays-val2", "webcam-val")),
    (1, False, True): (("webcam-white", "table-train", "trays-train-small"),
                       ("table-val", "trays-val-small")),
    (1, True, True): (("webcam-train", "table-train", "trays-train-small"),
                      ("table-val", "trays-val-small", "webcam-val")),
}


def split_options(split: Split) -> str:
    """The `python -m reader_lab train` options that name a split ("--val-tenths 1
    --webcam-val")."""
    return (f"--val-tenths {split[0]}" + (" --webcam-val" if split[1] else "")
            + (" --tray-small-val" if split[2] else ""))


def whole_die_boxes(name: str) -> bool:
    """Whether set ``name``'s boxes hold whole dice: webcam-white's often hug the group of
    pips rather than the top face (the photo sets' README), so a die repainted inside its
    box (``dyed_dice``) would show a coloured disc on a white die."""
    return not name.startswith(("webcam-white", "webcam-train", "webcam-val"))


def fully_labelled(name: str) -> bool:
    """Whether every die in the set's photos is boxed, so a box elsewhere holds no die.
    ``table-mixed-d6`` leaves some out (dice cut by the border, some far dice: its README)."""
    return not name.startswith("table-")


def train_of(val_set: str) -> str:
    """The train split that goes with a validation split ("table-val2" -> "table-train2")."""
    return val_set.replace("-val", "-train")


SPLIT_FILE = "split.json"


class SplitMismatch(CompanionError, ValueError):
    """A part asked for with another validation split than the parts already in the
    training folder (one line naming the folder and both splits)."""


def folder_split(out: str | Path) -> Split | None:
    """The split a training or model folder was made with: its ``split.json``, else its
    reader.json ``val_sets`` (a copied model), else None (nothing trained there yet)."""
    out = Path(out)
    path = out / SPLIT_FILE
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            had = (data["val_tenths"], data.get("webcam_val", False),
                   data.get("tray_small_val", False))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            had = None
        if had not in SPLITS:
            raise SplitMismatch(f"{path}: unreadable (delete it only if the folder holds "
                                "no trained network)")
        return had
    try:
        val_sets = json.loads((out / "reader.json").read_text(encoding="utf-8"))["val_sets"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return next((k for k, (_, v) in SPLITS.items() if list(v) == val_sets), None)


def resolve_split(out: str | Path, tenths: int | None, webcam_val: bool | None = None,
                  tray_small_val: bool | None = None) -> Split:
    """The split to train or tune ``out`` with: the one asked for (``tenths``,
    ``webcam_val`` and ``tray_small_val``, each None: the folder's, else 1 / False /
    False), which must be the folder's own when it has one; else the folder's; else
    (1, False, False). A split that does not exist (the small-dice one with two tenths) is
    refused in one line too."""
    had = folder_split(out)
    base = had or (1, False, False)
    split = (tenths if tenths is not None else base[0],
             webcam_val if webcam_val is not None else base[1],
             tray_small_val if tray_small_val is not None else base[2])
    if split not in SPLITS:
        raise SplitMismatch(f"{split_options(split)}: no such split (--tray-small-val goes "
                            "with --val-tenths 1)")
    if had is not None and split != had:
        raise SplitMismatch(f"{out}: its networks were trained with {split_options(had)}, "
                            f"not {split_options(split)}")
    return split


def record_split(out: str | Path, split: Split) -> None:
    """Write ``out/split.json`` (refusing, like ``resolve_split``, another split than one
    already recorded there, say by a part started at the same time). The split up to
    issue 8k is written as before, ``{"val_tenths": 1}``."""
    resolve_split(out, *split)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data: dict = {"val_tenths": split[0]}
    if split[1]:
        data["webcam_val"] = True
    if split[2]:
        data["tray_small_val"] = True
    (out / SPLIT_FILE).write_text(json.dumps(data) + "\n", encoding="utf-8")
