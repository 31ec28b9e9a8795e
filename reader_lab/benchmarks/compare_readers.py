"""Two learned models on the same labelled photos: each one's figures, and how sure the
difference is (a paired bootstrap over source photos: both models' scores of a drawn
photo are drawn together, so photos both find hard cancel out).

    .venv/bin/python -m reader_lab compare-readers --second DIR              # validation
    .venv/bin/python -m reader_lab compare-readers --first A --second B --sets table-test
    .venv/bin/python -m reader_lab compare-readers --second DIR --wrong   # and which dice

The default sets are the validation ones the thresholds are chosen on (``table-val``,
``trays-val``): compare candidates there; the held-aside sets only to report a choice
already made. ``objective`` is tuning's: end to end less 10 per confidently wrong die
and 1 per box where there is no die, over the labelled dice. Each model reads with its
own reader.json. The figures are pooled over the sets, as tuning pools them; a set
pooled with its own copies (``table-val`` with ``table-val-dyed`` or ``-half``) is
resampled by source photo with them (``photo_groups``).
``--wrong`` also lists each die a model reads confidently wrong (a face other than the
labelled one), with its set, photo, source photo and side in pixels, so the dice behind
``wrong_confident`` can be looked at one by one (issue 9g). A half-size set's image holds
four copies of one source photo, so one die may be listed up to four times there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import (
    confidently_wrong,  # noqa: E402
    evaluate_manifest,  # noqa: E402
)
from companion.vision.intervals import (  # noqa: E402
    FIGURES,
    bootstrap_difference,
    bootstrap_intervals,
    point_figures,
)
from reader_lab import dice_photos  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--first", default=None, help="model folder (default: the committed one)")
    ap.add_argument("--second", required=True, help="model folder to compare with it")
    ap.add_argument("--sets", nargs="*", default=list(dice_photos.VAL_SETS))
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--wrong", action="store_true",
                    help="also list each die a model reads confidently wrong")
    args = ap.parse_args(argv)
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}")
        return 1
    if args.draws < 1:
        print(f"compare_readers: --draws must be at least 1, not {args.draws}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    from companion.vision.learned import LearnedReader, ModelMissing

    try:
        readers = {w: LearnedReader(folder, threads=1)
                   for w, folder in (("first", args.first), ("second", args.second))}
        sets = {name: dice_photos.load_set(name) for name in args.sets}
    except ModelMissing as exc:
        print(f"compare_readers: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:  # load_set's line names the sets there are
        print(f"compare_readers: {exc.args[0]}", file=sys.stderr)
        return 2
    scores: dict[str, list] = {"first": [], "second": []}
    groups: list[str] = []
    wrong: list[tuple] = []
    for name, items in sets.items():
        for which in ("first", "second"):
            res = evaluate_manifest(items, reader=readers[which])
            scores[which] += [s for _, s in res.image_scores]
            if args.wrong:
                wrong += [(which, name, *row) for row in wrong_dice(items, res.predictions)]
            if which == "first":
                groups += photo_groups(name, items, args.sets, [k for k, _ in res.image_scores])
    print(f"sets {', '.join(args.sets)}: {len(scores['first'])} photos, "
          f"{len(set(groups))} source photos, {sum(s.labelled for s in scores['first'])} dice; "
          f"95% intervals, {args.draws} draws of the source photos\n")
    cis = {w: bootstrap_intervals(scores[w], groups, draws=args.draws) for w in scores}
    diff = bootstrap_difference(scores["first"], scores["second"], groups, draws=args.draws)
    print("| figure | first | second | second - first |")
    print("|---|---|---|---|")
    points = {w: point_figures(scores[w]) for w in scores}
    for f in FIGURES:
        point = {w: points[w][f] for w in scores}
        d = diff[f]
        print(f"| {f} | {point['first']:.4f} ({cis['first'][f].low:.4f}-"
              f"{cis['first'][f].high:.4f}) | {point['second']:.4f} ({cis['second'][f].low:.4f}-"
              f"{cis['second'][f].high:.4f}) | {point['second'] - point['first']:+.4f} "
              f"({d.low:+.4f} to {d.high:+.4f}) |")
    if args.wrong:
        print(f"\ndice read confidently wrong: {len(wrong)}\n")
        print("| model | set | photo | source photo | side (px) | labelled | read | confidence |")
        print("|---|---|---|---|---|---|---|---|")
        for which, name, key, side, want, got, conf in sorted(
                wrong, key=lambda r: (r[0], r[3])):
            print(f"| {which} | {name} | {key} | {dice_photos.source_of(key)} | {side:.0f} | "
                  f"{want} | {got} | {conf:.2f} |")
    return 0


def photo_groups(name: str, items: list, pooled: list[str], keys: list[str]) -> list[str]:
    """The bootstrap group of each photo ``keys`` names, of set ``name`` among the sets
    ``pooled``: ``set/source photo``, as always; but when ``pooled`` holds another set of
    the same family (``table-val`` with ``table-val-dyed`` or ``-half``), the family and
    the source photo the image shows (``dice_photos.family_sources``), so a photo and its
    copies are drawn together and the interval is not made narrower by counting them as
    other photos (issue 9x)."""
    family = dice_photos.family_of(name)
    if sum(dice_photos.family_of(n) == family for n in dict.fromkeys(pooled)) < 2:
        return [f"{name}/{dice_photos.source_of(k)}" for k in keys]
    by_key = dict(zip((m.key for m in items), dice_photos.family_sources(name, items),
                      strict=True))
    return [by_key[k] for k in keys]


def wrong_dice(items, predictions) -> list[tuple[str, float, int, int, float]]:
    """(photo, die side, labelled face, face read, confidence) of each labelled die a
    reading names another face, matched as the scores match them (``evaluate.match``)."""
    return [(item.key, item.dice[li].side, item.dice[li].face, pred.face, pred.confidence)
            for item, li, pred in confidently_wrong(items, predictions)]


if __name__ == "__main__":
    sys.exit(main())
