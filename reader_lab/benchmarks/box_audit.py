"""Are the reader's "boxes where no die is" dice the labels leave out? A blind audit of
the committed learned reader's unmatched boxes on the held-aside sets (issue 8, 9u).

    .venv/bin/python -m reader_lab box-audit sheets --out DIR [--seed 0] [--model DIR]
        [--sets SET ...] [--controls N]
    .venv/bin/python -m reader_lab box-audit score DIR/key.csv A.csv B.csv [--picture PNG]

Precision counts every kept box that matches no labelled die as a box where there is
no die. ``sheets`` draws each such box on table-test, webcam-two and trays-test as a
numbered tile (``label_audit.tile``: the box in its surroundings and close up, nothing
of what the reader read), shuffled among controls: labelled dice drawn at random (should
be called dice) and background boxes of a die's size drawn where no labelled die and no
kept box lies near (should be called "not a die"). A box whose centre lies inside a
labelled die's box is a second box on a labelled die: counted, not drawn. Raters who see
only the sheets answer ``tile,face`` (1-6, ``?`` or ``n``) as for ``label_audit.py``.

``score`` applies the rule written before any sheet was drawn: an unmatched box is an
unlabelled die when both raters answer a face (any of 1-6, not necessarily the same),
not a die when both answer ``n``, else unclear. It prints how the raters did on the
controls, and per set the unmatched boxes by verdict with the precision the set would
have if the unlabelled dice were labelled (the figures of record stay on the labels as
shipped). If the raters call more than 4 of 20 background boxes a die, or fewer than 14
of 20 labelled dice one, it says the audit cannot tell.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from collections import Counter
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab import dice_photos, rated_boxes  # noqa: E402
from reader_lab.benchmarks.label_audit import both_answers, sheet, tile, write_round  # noqa: E402

HELD = ("table-test", "webcam-two", "trays-test")
CONTROLS = {"table-test": 10, "trays-test": 10}  # labelled dice and background boxes each
KEY_HEADER = rated_boxes.BOX_KEY_HEADER
KINDS = rated_boxes.BOX_KINDS
MAX_BACKGROUND_DICE, MIN_LABELLED_DICE = 4, 14  # of 20 each: else the audit cannot tell


def inside(point: tuple[float, float], box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def centre(box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def unmatched_boxes(item, predictions) -> tuple[list, int]:
    """The predictions of one photo matched to no labelled die (as scoring matches them)
    whose centre lies in no labelled box, and how many more lie inside a labelled box."""
    from companion.vision.evaluate import match

    pairs = match(predictions, item.dice)
    taken = {pi for pi, _ in pairs}
    free = [p for i, p in enumerate(predictions) if i not in taken]
    alone = [p for p in free if not any(inside(p.centre, d.box) for d in item.dice)]
    return alone, len(free) - len(alone)


def background_box(rng: random.Random, item, image_shape, avoid: list) -> tuple | None:
    """A box of one of the photo's labelled dice' size, centred where no labelled die and
    no box in ``avoid`` lies within one and a half sides (None: no room in 50 draws)."""
    h, w = image_shape[:2]
    sides = [max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in item.dice]
    if not sides:
        return None
    side = rng.choice(sides)
    others = [centre(d.box) for d in item.dice] + [centre(b) for b in avoid]
    for _ in range(50):
        cx, cy = rng.uniform(side, w - side), rng.uniform(side, h - side)
        if all(abs(cx - x) > 1.5 * side or abs(cy - y) > 1.5 * side for x, y in others):
            return (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    return None


def pick(seed: int, model: str | None, sets: tuple[str, ...] = HELD,
         controls: dict[str, int] | None = None) -> tuple[list[dict], dict[str, Counter]]:
    """The tiles' rows (unshuffled) and, per set of ``sets``, counts of kept boxes by how
    they fall: matched, unmatched (drawn), on a labelled die (a second box, not drawn);
    ``controls``: how many labelled dice and background boxes each set adds (default
    ``CONTROLS``)."""
    from companion.vision.evaluate import evaluate_manifest
    from companion.vision.frames import load_image
    from companion.vision.learned import LearnedReader

    rng = random.Random(seed)
    cv2.setNumThreads(1)
    reader = LearnedReader(model, threads=1)
    controls = CONTROLS if controls is None else controls
    rows, counts = [], {}
    for name in sets:
        items = dice_photos.load_set(name)
        res = evaluate_manifest(items, reader=reader)
        by_photo: dict[str, list] = {}
        for key, pred in res.predictions:
            by_photo.setdefault(key, []).append(pred)
        c = Counter()
        backgrounds = []
        for item in items:
            preds = by_photo.get(item.key, [])
            alone, second = unmatched_boxes(item, preds)
            c["kept"] += len(preds)
            c["unmatched"] += len(alone)
            c["second box on a labelled die"] += second
            photo = dice_photos.photo_key(item.path)
            for p in alone:
                rows.append(dict(kind="unmatched", set=name, image=photo, box=p.box,
                                 read=p.face, confidence=f"{p.confidence:.2f}"))
            backgrounds.append((item, photo, preds))
        counts[name] = c
        want = controls.get(name, 0)
        dice = [(item, d) for item in items for d in item.dice]
        for item, d in rng.sample(dice, min(want, len(dice))):
            rows.append(dict(kind="labelled", set=name, image=dice_photos.photo_key(item.path),
                             box=d.box, read="", confidence=""))
        drawn = 0
        for item, photo, preds in rng.sample(backgrounds, len(backgrounds)):
            if drawn == want:
                break
            img = load_image(item.path)
            box = background_box(rng, item, img.shape, [p.box for p in preds])
            if box is not None:
                rows.append(dict(kind="background", set=name, image=photo, box=box,
                                 read="", confidence=""))
                drawn += 1
        print(f"{name}: {c['kept']} kept boxes, {c['unmatched']} matching no labelled die "
              f"outside every labelled box, {c['second box on a labelled die']} more "
              f"inside a labelled die's box", flush=True)
    return rows, counts


def make_sheets(out: Path, seed: int, model: str | None, sets: tuple[str, ...] = HELD,
                controls: dict[str, int] | None = None) -> int:
    rows, counts = pick(seed, model, sets, controls)
    rng = random.Random(seed + 1)
    rng.shuffle(rows)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "counts.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["set", "kept", "unmatched", "second box on a labelled die"])
        for name, c in counts.items():
            w.writerow([name, c["kept"], c["unmatched"], c["second box on a labelled die"]])
    return write_round(out, rows, KEY_HEADER, ("read", "confidence"))


verdict = rated_boxes.box_verdict


def read_key(key: Path) -> list[dict]:
    return rated_boxes.read_box_key(key, SystemExit)


def score(key: Path, first: Path, second: Path, picture_to: Path | None = None) -> int:
    rows = read_key(key)
    a, b = both_answers(first, second, rows, "box_audit")
    for r in rows:
        n = int(r["tile"])
        r["verdict"] = verdict(a[n], b[n])
        r["same face"] = a[n] == b[n] and a[n] in "123456"
        r["reader's face"] = r["same face"] and a[n] == r["read"]
    agree = sum(a[n] == b[n] for n in a)
    print(f"raters agree on {agree} of {len(rows)} tiles ({agree / len(rows):.1%})\n")
    print("| tiles | n | die (both a face) | not a die (both n) | unclear |")
    print("|---|---|---|---|---|")
    seen = {}
    for kind in KINDS:
        c = Counter(r["verdict"] for r in rows if r["kind"] == kind)
        seen[kind] = c
        print(f"| {kind} | {sum(c.values())} | {c['die']} | {c['not a die']} | "
              f"{c['unclear']} |")
    tells = (seen["background"]["die"] <= MAX_BACKGROUND_DICE
             and seen["labelled"]["die"] >= MIN_LABELLED_DICE)
    if not tells:
        print("\nthe raters cannot tell dice from table here (the controls): no verdict")
    counts_path = key.parent / "counts.csv"
    counts = {}
    if counts_path.is_file():
        with counts_path.open(encoding="utf-8") as fh:
            counts = {r["set"]: r for r in csv.DictReader(fh)}
    print("\nunmatched boxes (matching no labelled die, outside every labelled box) by set; "
          "precision as shipped and with the unlabelled dice counted as dice")
    print("| set | kept boxes | unmatched | unlabelled die | of which the reader's face "
          "| not a die | unclear | precision | with them |")
    print("|---|---|---|---|---|---|---|---|---|")
    drawn = sorted({r["set"] for r in rows if r["kind"] == "unmatched"} - set(counts))
    for name in [*counts, *drawn]:  # as the sheets drew the sets, then any others keyed
        part = [r for r in rows if r["kind"] == "unmatched" and r["set"] == name]
        c = Counter(r["verdict"] for r in part)
        face = sum(r["reader's face"] for r in part)
        row = counts.get(name)
        if row is None:
            print(f"| {name} | ? | {len(part)} | {c['die']} | {face} | {c['not a die']} | "
                  f"{c['unclear']} | ? | ? |")
            continue
        kept = int(row["kept"])
        false = int(row["unmatched"]) + int(row["second box on a labelled die"])
        was = (kept - false) / kept if kept else 1.0
        now = (kept - false + c["die"]) / kept if kept else 1.0
        shown = f"{now:.1%}" if tells else "(cannot tell)"
        print(f"| {name} | {kept} | {len(part)} (+{row['second box on a labelled die']} "
              f"on labelled dice) | {c['die']} | {face} | {c['not a die']} | "
              f"{c['unclear']} | {was:.1%} | {shown} |")
    if picture_to is not None:
        picture(rows, picture_to)
    return 0


def picture(rows: list[dict], out: Path, sets: tuple[str, ...] = ("table-test",)) -> None:
    """The unmatched boxes of ``sets`` (scored ``rows``) as tiles, each captioned with
    what the reader read there and the raters' verdict, on one sheet (needs the photos)."""
    import numpy as np

    from companion.vision.frames import load_image

    tiles = []
    for r in (r for r in rows if r["kind"] == "unmatched" and r["set"] in sets):
        box = tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
        t = tile(load_image(dice_photos.photo_root() / r["image"]), box, int(r["tile"]))
        band = np.full((22, t.shape[1], 3), 255, np.uint8)
        cv2.putText(band, f"read {r['read']} ({r['confidence']}): {r['verdict']}", (4, 16),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
        tiles.append(np.vstack([t, band]))
    if tiles:
        cv2.imwrite(str(out), sheet(tiles, 5))
        print(f"\n{len(tiles)} tiles in {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sheets", help="draw the tiles to rate and their key")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--model", default=None)
    s.add_argument("--sets", nargs="+", default=list(HELD), metavar="SET",
                   help="the photo sets whose unmatched boxes are drawn (default the held-"
                        "aside ones; e.g. table-val table-train for a set to learn from)")
    s.add_argument("--controls", type=int, default=None, metavar="N",
                   help="labelled dice and background boxes drawn from each set (default "
                        "10 each from table-test and trays-test)")
    c = sub.add_parser("score", help="score two raters' answers against a key")
    c.add_argument("key", type=Path)
    c.add_argument("answers", nargs=2, type=Path)
    c.add_argument("--picture", type=Path, default=None,
                   help="also draw table-test's unmatched boxes, captioned, to this PNG")
    args = ap.parse_args(argv)
    if args.command == "sheets":
        if not dice_photos.available():
            print(f"photo sets not found under {dice_photos.photo_root()}")
            return 1
        if args.controls is not None and args.controls < 0:
            print(f"box_audit: --controls must be 0 or more, not {args.controls}",
                  file=sys.stderr)
            return 2
        try:
            for name in args.sets:
                dice_photos.load_set(name)
        except KeyError as exc:
            print(f"box_audit: {exc.args[0]}", file=sys.stderr)
            return 2
        controls = (None if args.controls is None
                    else {name: args.controls for name in args.sets})
        return make_sheets(args.out, args.seed, args.model, tuple(args.sets), controls)
    for path in (args.key, *args.answers):
        if not path.is_file():
            print(f"box_audit: {path}: no such file", file=sys.stderr)
            return 2
    return score(args.key, *args.answers, picture_to=args.picture)


if __name__ == "__main__":
    sys.exit(main())
