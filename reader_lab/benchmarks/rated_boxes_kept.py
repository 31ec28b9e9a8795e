"""How many of the boxes a box audit's two raters both called "not a die" each model
still keeps as a die (issue 9v): a kept box counts when either box's centre lies in the
other. The boxes of a set the model trained on (``--rated-negatives`` teaches a round's
train photos) say only that it learned them; the others say whether that carried over.

    .venv/bin/python -m reader_lab rated-boxes-kept \
        [--round reader_lab/benchmarks/box_audit_9u/train] [--model DIR ...]

Each model reads with its own reader.json (default: the committed model alone).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import evaluate_manifest  # noqa: E402
from reader_lab import dice_photos  # noqa: E402
from reader_lab.benchmarks.box_audit import centre, inside  # noqa: E402
from reader_lab.rated_boxes import rated_not_dice  # noqa: E402

ROUND = Path(__file__).resolve().parent / "box_audit_9u" / "train"


def kept(model: str | None, folder: Path) -> Counter:
    """Per set: the rated boxes, and how many of them the model keeps as a die."""
    from companion.vision.learned import LearnedReader

    rows = rated_not_dice(folder)
    set_of = {r["image"]: r["set"] for r in rows}
    reader = LearnedReader(model, threads=1)
    out: Counter = Counter()
    for name in sorted(set(set_of.values())):
        items = {dice_photos.photo_key(m.path): m for m in dice_photos.load_set(name)}
        items = {photo: m for photo, m in items.items() if set_of.get(photo) == name}
        res = evaluate_manifest(list(items.values()), reader=reader)
        by_photo: dict[str, list] = {}
        for key, pred in res.predictions:
            by_photo.setdefault(key, []).append(pred)
        for photo, item in items.items():
            for box in (r["box"] for r in rows if r["image"] == photo):
                out[(name, "rated")] += 1
                out[(name, "kept")] += any(inside(p.centre, box) or inside(centre(box), p.box)
                                           for p in by_photo.get(item.key, []))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--round", type=Path, default=ROUND, help="a box audit's round folder")
    ap.add_argument("--model", nargs="*", default=[None],
                    help="model folders (default: the committed model)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    print("| model | set | rated not a die | still kept as a die |")
    print("|---|---|---|---|")
    for model in args.model:
        c = kept(model, args.round)
        for name in sorted({s for s, _ in c}):
            print(f"| {model or 'committed'} | {name} | {c[(name, 'rated')]} | "
                  f"{c[(name, 'kept')]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
