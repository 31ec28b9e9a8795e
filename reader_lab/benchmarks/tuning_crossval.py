"""Benchmark: is a tuning procedure better on photos it did not choose its rule on?
Cross-validation over source photos, one model's networks (issue 9h).

    .venv/bin/python -m reader_lab tuning-crossval [--model DIR] [--folds 5]
        [--draws 2000] [--procedures A B C] [--against DIR ...]
        [--small-detector DIR] [--small-classifiers DIR] [--small-side 32]
        [--column-procedure A] [--wrong]

Tuning (``tune_reader.best_rule``) chooses the detector and face thresholds, the faint-box
rule, the upright mix and nested boxes on validation photos, and its figures are read on
the same photos. Here the source photos of every set read are split into ``--folds``
parts by a fixed hash of the set family and source photo (a ``-half`` image goes with
its source's full-size photos); for each part, each procedure chooses its rule on the
other parts' photos of its own sets, and that rule reads the held-out part's photos of
every set. So every photo is read by rules chosen without it, and procedures that tune
on different sets are compared on the same reads. The procedures:

- A: ``table-val`` + ``trays-val`` (what ``python -m reader_lab train --part tune`` does);
- B: A + ``table-val-half`` + ``trays-val-half`` (validation with small dice, issue 9e);
- C: B + ``webcam-val``;
- D: A, and the rule may ask boxes under 20, 24, 32 or 40 px for a surer face;
- E: B, and the same;
- W: A, a wrong die counted three times as dear in tuning (wrong cost 30, issue 9u);
- R: A + the same photos hue-turned and dyed (``-hue``, ``-dyed``: every validation die
  also in other colours, issue 9u), each copy in its base photo's fold;
- RW: R, and W's wrong cost.

Every procedure is judged held out at the standing costs (``intervals.WRONG_COST``,
``FALSE_COST``), whatever it tunes with.

With ``--against DIR...`` (issue 9i), each further model's networks read the same
photos and procedure A chooses that model's rule fold by fold too, so candidate models
are judged against the first one as tuning would choose for each, on photos no rule was
chosen on (their columns are named by folder). With ``--small-detector DIR`` and/or
``--small-classifiers DIR`` one more column (``S32`` for ``--small-side 32``) reads as the
first model but with DIR's detector's boxes under that side (px, longer side in the photo)
added and/or every box under it read by DIR's classifiers; procedure A tunes it the same
way (issue 9i). ``--column-procedure P`` tunes those columns by procedure P instead of A
(still judged against the first model's A; issue 9k), e.g. D: a column that adds small
boxes may then ask them for a surer face.

Printed: each fold's rule per procedure, then each procedure's held-out figures per
group of sets, with paired 95% intervals against A (``intervals.bootstrap_difference``,
source photos drawn, a source's full-size and half-size photos together). With
``--wrong``, then every photo where a column passes other dice wrong than A does, held
out (labelled face, face read). The networks read every photo once, at each model's own
input size and views.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.intervals import (  # noqa: E402
    WRONG_COST,
    bootstrap_difference,
    point_figures,
)
from reader_lab import dice_photos  # noqa: E402
from reader_lab.dice_photos import family_sources  # noqa: E402

OLD_VAL = ("table-val", "trays-val")
HALF_VAL = ("table-val-half", "trays-val-half")
REPAINTED = ("table-val-hue", "trays-val-hue", "table-val-dyed", "trays-val-dyed")
# a procedure: the sets it tunes on, and what tuning is told: the box sides (px) a face
# threshold of their own may be set under (``tune_reader.best_rule`` ``small_sides``; none: no
# such rule) and the cost of a confidently wrong die it weighs
SMALL_SIDES = (20.0, 24.0, 32.0, 40.0)
DEAR = 3 * WRONG_COST  # procedures W and RW (issue 9u)
PROCEDURES = {"A": (OLD_VAL, ((), WRONG_COST)), "B": (OLD_VAL + HALF_VAL, ((), WRONG_COST)),
              "C": (OLD_VAL + HALF_VAL + ("webcam-val",), ((), WRONG_COST)),
              "D": (OLD_VAL, (SMALL_SIDES, WRONG_COST)),
              "E": (OLD_VAL + HALF_VAL, (SMALL_SIDES, WRONG_COST)),
              "W": (OLD_VAL, ((), DEAR)), "R": (OLD_VAL + REPAINTED, ((), WRONG_COST)),
              "RW": (OLD_VAL + REPAINTED, ((), DEAR))}
# the sets every procedure's rules read, and the groups of them figures are pooled over
READ = OLD_VAL + HALF_VAL + ("webcam-val",) + REPAINTED
POOLS = {"old validation": OLD_VAL, "half-size": HALF_VAL,
         "old + half-size": OLD_VAL + HALF_VAL, "repainted": REPAINTED,
         "old + repainted": OLD_VAL + REPAINTED, "webcam-val": ("webcam-val",)}
SHOWN = ("objective", "end_to_end", "wrong_confident", "precision", "recall")


def fold_of(group: str, folds: int) -> int:
    """Which of ``folds`` parts a source photo falls in (a fixed hash of its name)."""
    return int.from_bytes(hashlib.sha256(group.encode()).digest()[:4], "big") % folds


def cross_validate(reads: dict[str, list], folds: dict[str, list[int]], n_folds: int,
                   procedures: dict[str, tuple[tuple[str, ...], Any]],
                   choose: Callable[[list, Any], Any], score: Callable[[list, Any], list]
                   ) -> tuple[list[tuple], dict]:
    """For each fold and procedure (its sets, and what else ``choose`` is to be told):
    the rule ``choose`` picks from the other folds' reads of the procedure's sets, and
    ``score`` of the fold's reads of every set in ``reads``
    by it. Returns the rules ((fold, procedure, rule, held-out photos) each) and, per
    procedure and set, each read's held-out score in the reads' order."""
    rules = []
    held = {p: {n: [None] * len(reads[n]) for n in reads} for p in procedures}
    for k in range(n_folds):
        out = sum(f == k for n in reads for f in folds[n])
        for p, (sets, told) in procedures.items():
            rule = choose([r for n in sets for r, f in zip(reads[n], folds[n], strict=True)
                           if f != k], told)
            rules.append((k, p, rule, out))
            for n in reads:
                idx = [i for i, f in enumerate(folds[n]) if f == k]
                for i, s in zip(idx, score([reads[n][i] for i in idx], rule), strict=True):
                    held[p][n][i] = s
    return rules, held


def how_read(reader) -> str:
    """How a model's detector reads a photo: its input side, test-time views and (issue
    9l) whether it also reads the mirror."""
    return (f"input {reader.det_size} px, views {reader.views}"
            + (", the mirror too" if reader.det_flip else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default: the committed one)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--procedures", nargs="+", default=list(PROCEDURES),
                    choices=list(PROCEDURES))
    ap.add_argument("--against", nargs="+", default=[], metavar="DIR",
                    help="candidate model folders, each tuned fold by fold (by procedure A "
                         "unless --column-procedure) and judged against --model's A")
    ap.add_argument("--small-detector", metavar="DIR",
                    help="add this model's detector boxes under --small-side px")
    ap.add_argument("--small-classifiers", metavar="DIR",
                    help="read boxes under --small-side px with this model's classifiers")
    ap.add_argument("--small-side", type=float, default=None, metavar="PX",
                    help="the side (px) under which a box is small (default 32)")
    ap.add_argument("--column-procedure", default="A", choices=list(PROCEDURES),
                    help="the procedure the --against and small-box columns are tuned by "
                         "(default A; each still judged against --model's A)")
    ap.add_argument("--wrong", action="store_true",
                    help="list the photos where a column passes other dice wrong than A")
    args = ap.parse_args(argv)
    if args.folds < 2:
        print(f"tuning_crossval: --folds must be at least 2, not {args.folds}", file=sys.stderr)
        return 2
    if args.draws < 1:
        print(f"tuning_crossval: --draws must be at least 1, not {args.draws}", file=sys.stderr)
        return 2
    small_networks = args.small_detector or args.small_classifiers
    if args.small_side is not None and not small_networks:
        print("tuning_crossval: --small-side needs --small-detector or --small-classifiers",
              file=sys.stderr)
        return 2
    args.small_side = 32.0 if args.small_side is None else args.small_side
    if args.small_side <= 0:
        print(f"tuning_crossval: --small-side must be above 0, not {args.small_side:g}",
              file=sys.stderr)
        return 2
    small = f"S{args.small_side:g}" if small_networks else None
    names = [Path(d).name for d in args.against]
    if len(set(names)) < len(names) or set(names) & (set(PROCEDURES) | {small}):
        print(f"tuning_crossval: --against folders need names of their own, not "
              f"{' '.join(names)}", file=sys.stderr)
        return 2
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}")
        return 1
    cv2.setNumThreads(1)
    from companion.vision.learned import MODEL_DIR, ModelMissing
    from reader_lab.tune_reader import best_rule, rule_scores, tuning_reader

    procedures = ["A", *(p for p in args.procedures if p != "A")]
    try:
        readers = {"A": tuning_reader(args.model or MODEL_DIR)}
        readers |= {n: tuning_reader(d) for n, d in zip(names, args.against, strict=True)}
        small_det, small_cls = (tuning_reader(d) if d else None
                                for d in (args.small_detector, args.small_classifiers))
    except ModelMissing as exc:
        print(f"tuning_crossval: {exc}", file=sys.stderr)
        return 2
    images, groups, folds = load_sets(args.folds)
    reads = {m: read_sets(r, images) for m, r in readers.items()}
    reader = readers["A"]
    if small:
        reads[small], added, routed = small_box_reads(reader, reads["A"], images,
                                                      args.small_side, small_det, small_cls)
        readers[small] = reader
    judged = names + ([small] if small else [])  # the columns besides the procedures
    print(f"model {args.model or MODEL_DIR}: {how_read(reader)}; {args.folds} folds over "
          f"{len({g for n in READ for g in groups[n]})} source photos")
    for n, d in zip(names, args.against, strict=True):
        print(f"against {n} ({d}): {how_read(readers[n])}")
    column = args.column_procedure
    if column != "A" and judged:
        print(f"the columns besides the procedures are tuned by procedure {column}")
    if small:
        print(f"against {small}: the model, with boxes under {args.small_side:g} px from "
              f"{args.small_detector or 'its own detector'} ({added} added at a detector "
              f"score of 0.1 or more) read by {args.small_classifiers or 'its own'} "
              f"classifiers ({routed} boxes)")
    print("\n| fold | held-out photos | procedure | det | face | faint box | upright mix "
          "| nested | small dice |")
    print("|---|---|---|---|---|---|---|---|---|")
    def judge(name: str, chosen: dict) -> tuple[list, dict]:
        """``cross_validate`` over the reads of ``name``'s column, its reader choosing
        and scoring each procedure's rule."""
        r = readers[name]
        return cross_validate(reads[name], folds, args.folds, chosen,
                              lambda tune, told: best_rule(r, tune, small_sides=told[0],
                                                           wrong_cost=told[1])[1],
                              lambda some, rule: rule_scores(r, some, rule))

    rules, held = judge("A", {p: PROCEDURES[p] for p in procedures})
    for n in judged:
        more, by = judge(n, {n: PROCEDURES[column]})
        rules += more
        held |= by
    for k, p, rule, out in sorted(rules, key=lambda x: x[0]):
        face = f"face {rule.small_face} under {rule.small_side:g} px" if rule.small_side else "-"
        print(f"| {k} | {out} | {p} | {rule.det} | {rule.face} | {rule.low} at "
              f"{rule.low_face} | {rule.mix} | {rule.nested} | {face} |")
    print(f"\nheld-out figures; each procedure less A with a paired 95% interval "
          f"({args.draws} draws of the source photos)\n")
    others = procedures[1:] + judged
    print("| sets | figure | A | " + " | ".join(f"{p} | {p} - A" for p in others) + " |")
    print("|---|---|---|" + "---|---|" * len(others))
    for pool, pooled in POOLS.items():
        g = [x for n in pooled for x in groups[n]]
        scores = {p: [s for n in pooled for s in held[p][n]] for p in ["A", *others]}
        points = {p: point_figures(scores[p]) for p in scores}
        diffs = {p: bootstrap_difference(scores["A"], scores[p], g, draws=args.draws)
                 for p in others}
        for f in SHOWN:
            cells = [f"{points[p][f]:.4f} | {points[p][f] - points['A'][f]:+.4f} "
                     f"({diffs[p][f].low:+.4f} to {diffs[p][f].high:+.4f})" for p in others]
            print(f"| {pool} | {f} | {points['A'][f]:.4f} | " + " | ".join(cells) + " |")
    if args.wrong:
        print("\nphotos where a column passes other dice wrong than A, held out (labelled "
              "face read as face)\n")
        print("| column | set | photo | source photo | A | column |")
        print("|---|---|---|---|---|---|")
        for p in others:
            for n in READ:
                for i, a, b in wrong_changes(held["A"][n], held[p][n]):
                    print(f"| {p} | {n} | {i} | {groups[n][i]} | {a or '-'} | {b or '-'} |")
    return 0


def wrong_changes(first: list, second: list) -> list[tuple[int, str, str]]:
    """The photos (index, each one's wrong dice as "1 as 3, ...") where two lists of
    scores (``evaluate.ImageScore``, the same photos in order) pass different dice wrong:
    a labelled face read as another face, unknown not counted."""
    from companion.vision.types import UNKNOWN

    def wrong(score) -> str:
        return ", ".join(f"{want} as {got}" for want, got in sorted(score.pairs)
                         if got not in (want, UNKNOWN))

    return [(i, wrong(a), wrong(b)) for i, (a, b) in enumerate(zip(first, second, strict=True))
            if wrong(a) != wrong(b)]


def load_sets(n_folds: int) -> tuple[dict, dict, dict]:
    """Every photo of the sets read (``READ``), loaded once: per set its (image, labelled
    dice), each photo's family and source photo, and the fold it falls in. An unreadable
    photo is one line on stderr and left out."""
    from companion.vision.frames import FrameUnreadable, load_image

    images, groups, folds = {}, {}, {}
    for name in READ:
        items = dice_photos.load_set(name)
        loaded, names = [], []
        for m, g in zip(items, family_sources(name, items), strict=True):
            try:
                loaded.append((load_image(m.path), m.dice))
            except FrameUnreadable as exc:
                print(f"tuning_crossval: {exc} (left out)", file=sys.stderr)
                continue
            names.append(g)
        images[name], groups[name] = loaded, names
        folds[name] = [fold_of(g, n_folds) for g in names]
    return images, groups, folds


def small_box_reads(reader: Any, reads: dict[str, list], images: dict[str, list],
                    side: float, detector: Any = None, classifiers: Any = None
                    ) -> tuple[dict[str, list], int, int]:
    """``reads`` (``reader``'s) with ``detector``'s boxes whose longer side is under
    ``side`` px added (from a detector score of 0.1, as tuning reads; none when None), and
    every box under ``side`` read by ``classifiers`` (``reader``'s own when None; the reads
    given are not changed). Returns the reads, how many boxes were added and how many
    boxes ``classifiers`` read."""
    from companion.vision.types import box_side
    from reader_lab.tune_reader import TuningRead

    out, added, routed = {}, 0, 0
    reading = classifiers or reader
    for name, loaded in images.items():
        got = []
        for (img, _), r in zip(loaded, reads[name], strict=True):
            boxes = list(r.boxes)
            if detector is not None:
                boxes += [b for b in detector.detect(img, 0.1) if box_side(b) < side]
            probs, up = r.probs, r.upright
            new = len(boxes) - len(r.boxes)
            if new:
                p, _, u = reading.classify_both(img, boxes[len(r.boxes):],
                                                upright=up is not None)
                probs = np.concatenate([probs, p])
                up = None if up is None else np.concatenate([up, u])
            added += new
            small = [i for i in range(len(r.boxes)) if box_side(boxes[i]) < side]
            if classifiers is not None and small:
                p, _, u = classifiers.classify_both(img, [boxes[i] for i in small],
                                                    upright=up is not None)
                probs, up = probs.copy(), None if up is None else up.copy()
                probs[small] = p
                if up is not None:
                    up[small] = u
            routed += len(small) + new if classifiers is not None else 0
            got.append(TuningRead(boxes, probs, up, r.dice))
        out[name] = got
    return out, added, routed


def read_sets(reader: Any, images: dict[str, list]) -> dict[str, list]:
    """Each set's photos read once by ``reader`` (``tune_reader.tuning_reads``)."""
    from reader_lab.tune_reader import tuning_reads

    return {name: tuning_reads(reader, loaded) for name, loaded in images.items()}


if __name__ == "__main__":
    sys.exit(main())
