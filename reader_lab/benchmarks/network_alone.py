"""Each classifier network alone on the labelled boxes of photo sets: how many dice its
most probable class names right, before it is averaged into a reader.

    .venv/bin/python -m reader_lab network-alone DIR/classifier_upright.onnx [FILE ...]
    .venv/bin/python -m reader_lab network-alone FILE --sets table-val trays-val
    .venv/bin/python -m reader_lab network-alone FILE --under 32   # small dice only

Each network is fed the crops the reader would cut for it (its input side; its span and
area-shrinking from its metadata, else 1.3 die sides, sampled), one per labelled box; no
detector, no thresholds. Per network and set: the dice whose most probable of the seven
classes (faces 1-6, "not a die") is the labelled face ("right"), those it names another
face at least 0.9 sure ("sure wrong"), and those it calls "not a die". The default sets
are the validation ones (table-val, trays-val, webcam-val): judge new networks there.
The "alone" figures of reader_lab/HISTORY.md since issue 8u are these. ``--under PX`` counts only
the dice whose labelled box's longer side is under PX pixels (a network for small dice).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.frames import FrameUnreadable, load_image  # noqa: E402
from companion.vision.learned import FACES, _softmax  # noqa: E402
from companion.vision.learned_model import NOT_A_DIE, box_crops, crops_blob  # noqa: E402
from companion.vision.types import box_side  # noqa: E402
from reader_lab import dice_photos  # noqa: E402

SETS = ("table-val", "trays-val", "webcam-val")
SURE = 0.9


def tally(net, cut: tuple[bool, int, float], items, under: float | None = None
          ) -> tuple[int, int, int, int]:
    """(dice, right, sure wrong, "not a die") of one network over manifest ``items``; only
    the dice whose labelled box is under ``under`` px when given."""
    area, side, span = cut
    dice = right = sure_wrong = not_die = 0
    for m in items:
        dice_here = [d for d in m.dice if under is None or box_side(d.box) < under]
        if not dice_here:
            continue
        try:
            img = load_image(m.path)
        except FrameUnreadable as exc:
            print(f"network_alone: skipped {exc}", file=sys.stderr)
            continue
        crops = box_crops(img, [d.box for d in dice_here], side, span, area)
        logits, _ = net.run(None, {"crops": crops_blob(crops)})
        probs = _softmax(logits)
        for d, p in zip(dice_here, probs, strict=True):
            k = int(p.argmax())
            dice += 1
            if k == NOT_A_DIE:
                not_die += 1
            elif FACES[k] == d.face:
                right += 1
            elif p[k] >= SURE:
                sure_wrong += 1
    return dice, right, sure_wrong, not_die


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("networks", nargs="+", help="classifier .onnx files")
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--under", type=float, metavar="PX",
                    help="only dice whose labelled box's longer side is under PX pixels")
    args = ap.parse_args(argv)
    if args.under is not None and not args.under > 0:
        print(f"network_alone: --under must be more than 0 pixels, not {args.under:g}",
              file=sys.stderr)
        return 2
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}")
        return 1
    cv2.setNumThreads(1)
    from companion.vision.learned import ModelMissing
    from reader_lab.tune_reader import load_classifier

    try:
        nets = [(f, *load_classifier(f)) for f in args.networks]
        sets = {name: dice_photos.load_set(name) for name in args.sets}
    except ModelMissing as exc:
        print(f"network_alone: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:  # load_set's line names the sets there are
        print(f"network_alone: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.under is not None:
        print(f"dice whose labelled box is under {args.under:g} px only")
    print(f"| network | crops | set | dice | right | sure wrong (>= {SURE}) | not a die |")
    print("|---|---|---|---|---|---|---|")
    for f, net, cut in nets:
        area, side, span = cut
        for name, items in sets.items():
            n, right, wrong, not_die = tally(net, cut, items, args.under)
            shares = " | ".join(f"{100 * k / n:.1f}%" if n else "-"
                                for k in (right, wrong, not_die))
            print(f"| {f} | {side} px over {span:g}{', area' if area else ''} | {name} | {n} "
                  f"| {shares} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
