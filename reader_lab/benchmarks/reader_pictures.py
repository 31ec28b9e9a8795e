"""Draw what the learned die reader makes of held-aside photos, against their labels.

    .venv/bin/python -m reader_lab reader-pictures [--model DIR] [--out docs/learned-reader.png]
    .venv/bin/python -m reader_lab reader-pictures --fewshot 10 --out docs/fewshot-reader.png
    .venv/bin/python -m reader_lab reader-pictures --sets table-val table-val-dyed \
        trays-val-dyed --out docs/dyed-reader.png

One photo from each held-aside set (the one with the most labelled dice, so the choice
never looks at the reader), read by the committed model (or
``--model DIR``). Each die: green, read right (its face); red, read wrong ("read/label");
orange "?", unknown; blue, labelled but not found; magenta "x", a box where no die is
labelled. Prints, per photo, what it counted, and the file written. Needs the shared
photo sets (../shared/datasets/dice-photos/).

``--fewshot N``: each photo is read instead by a few-shot profile of N labelled dice per
face (seed 0) of the set its few shots come from (``dice_photos.FEWSHOT_SOURCES``, as
``reader_accuracy.py --fewshot`` draws them): nearest prototype, no pip counting.

``--sets NAME ...``: one panel for each of these sets instead (any name ``dice_photos``
knows: a validation set beside its dyed copy, issue 9s, shows one photo both ways).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import match, predicted_dice
from companion.vision.fewshot import FewShotReader, build_prototypes
from companion.vision.frames import load_image
from companion.vision.learned import LearnedReader
from companion.vision.types import UNKNOWN
from reader_lab import dice_photos  # noqa: E402

RIGHT, WRONG, UNSURE, MISSED, FALSE = ((0, 200, 0), (40, 40, 230), (0, 165, 255),
                                       (230, 120, 30), (200, 0, 200))
HEIGHT = 420
PANELS = ("table-test", "webcam-two", "trays-colour-test")  # the default panels


def _box(img, box, colour, text, scale):
    x0, y0, x1, y1 = (int(round(v * scale)) for v in box)
    cv2.rectangle(img, (x0, y0), (x1, y1), colour, 2)
    if text:
        org = (x0, max(14, y0 - 4))
        cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)


def panel(reader, name: str, title: str = "") -> tuple[np.ndarray, dict[str, int]]:
    """``reader``: a LearnedReader or a FewShotReader; ``title`` follows the set's name."""
    items = dice_photos.load_set(name)
    item = max(items, key=lambda m: len(m.dice))
    image = load_image(item.path)
    reads = reader(image)
    pairs = match(predicted_dice(reads), item.dice)
    scale = HEIGHT / image.shape[0]
    out = cv2.resize(image, (round(image.shape[1] * scale), HEIGHT),
                     interpolation=cv2.INTER_AREA)
    count = {"right": 0, "wrong": 0, "unknown": 0, "missed": 0, "no die": 0}
    found = {li for _, li in pairs}
    for li, die in enumerate(item.dice):
        if li not in found:
            _box(out, die.box, MISSED, "", scale)
            count["missed"] += 1
    matched = {pi: li for pi, li in pairs}
    for pi, r in enumerate(reads):
        if pi not in matched:
            _box(out, r.box, FALSE, "x", scale)
            count["no die"] += 1
            continue
        label = item.dice[matched[pi]].face
        if r.face == UNKNOWN:
            _box(out, r.box, UNSURE, "?", scale)
            count["unknown"] += 1
        elif r.face == label:
            _box(out, r.box, RIGHT, r.face, scale)
            count["right"] += 1
        else:
            _box(out, r.box, WRONG, f"{r.face}/{label}", scale)
            count["wrong"] += 1
    title = f"{name}{title}: {count['right']} of {len(item.dice)} right"
    width = cv2.getTextSize(title, cv2.FONT_HERSHEY_SIMPLEX, 0.7, 2)[0][0]
    size = 0.7 * min(1.0, (out.shape[1] - 16) / width)  # the whole title on the panel
    cv2.putText(out, title, (8, 24), cv2.FONT_HERSHEY_SIMPLEX, size, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.putText(out, title, (8, 24), cv2.FONT_HERSHEY_SIMPLEX, size, (255, 255, 255), 2,
                cv2.LINE_AA)
    return out, count


def legend(width: int) -> np.ndarray:
    strip = np.full((34, width, 3), 40, np.uint8)
    x = 10
    for colour, text in ((RIGHT, "read right"), (WRONG, "read wrong (read/label)"),
                         (UNSURE, "? unknown"), (MISSED, "not found"),
                         (FALSE, "x box, no die labelled")):
        cv2.rectangle(strip, (x, 9), (x + 16, 25), colour, 2)
        cv2.putText(strip, text, (x + 22, 23), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    (235, 235, 235), 1, cv2.LINE_AA)
        x += 30 + 9 * len(text)
    return strip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default: the committed one)")
    ap.add_argument("--out", type=Path, default=Path("docs/learned-reader.png"))
    ap.add_argument("--fewshot", type=int, default=None, metavar="N",
                    help="read with a few-shot profile of N dice per face of each set's "
                         "few-shot source instead")
    ap.add_argument("--sets", nargs="+", default=list(PANELS), metavar="NAME",
                    help="one panel per set (default: " + ", ".join(PANELS) + ")")
    args = ap.parse_args(argv)
    if args.fewshot and any(n not in dice_photos.FEWSHOT_SOURCES for n in args.sets):
        print("--fewshot: only for the held-aside sets "
              f"({', '.join(dice_photos.FEWSHOT_SOURCES)})", file=sys.stderr)
        return 2
    if args.fewshot is not None and args.fewshot < 1:
        print(f"--fewshot {args.fewshot}: needs at least 1", file=sys.stderr)
        return 2
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}", file=sys.stderr)
        return 2
    reader = LearnedReader(args.model)
    panels = []
    for name in args.sets:
        read, title = reader, ""
        if args.fewshot:
            source = dice_photos.FEWSHOT_SOURCES[name]
            protos = build_prototypes(dice_photos.load_set(source), args.fewshot, seed=0,
                                      reader=reader)
            read, title = FewShotReader(protos, reader=reader), f" ({args.fewshot}-shot)"
        img, count = panel(read, name, title)
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in count.items()))
        panels.append(img)
    row = np.hstack(panels)
    picture = np.vstack([row, legend(row.shape[1])])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), picture)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
