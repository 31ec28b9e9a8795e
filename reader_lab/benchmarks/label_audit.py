"""Are the photo sets' labels right? A blind label audit (issue 8, session 9o).

    .venv/bin/python -m reader_lab label-audit sheets --out DIR       # tiles to rate
    .venv/bin/python -m reader_lab label-audit score DIR/key.csv A.csv B.csv \
        [--then KEY2 C.csv D.csv ...] [--reader] [--fixes F] [--picture PNG]

``sheets`` picks two kinds of labelled dice and draws each as a numbered tile (the die
in its surroundings and close up, its box marked by corners), shuffled together, with
neither its label nor any reading on it, on sheets of 18 (``DIR/sheet-NN.png``):

- candidates: every die the committed learned reader reads confidently wrong (a face,
  not the label, on a kept box: the evaluation's "confidently wrong") on the held-aside
  and validation sets;
- a control sample: dice drawn at random (``--seed``; ``--sample SET=N``) from each
  held-aside set, whatever the reader says of them, so the share of wrong labels can be
  estimated without leaning on the reader.

Later rounds: ``--retry KEY A B`` draws again (larger, ``--panel``) the tiles two raters
left unclear; ``--no-candidates --exclude KEY...`` draws further random dice only;
``--confirm FIXES`` adds each die a fixes file corrects, to be shown to fresh raters.

``DIR/key.csv`` says what each tile is (set, photo, box, label, reading); a rater who
has not seen it answers one line per tile in a CSV ``tile,face`` (face 1-6, ``?`` when it
cannot be told, ``n`` when the marked thing is not one die's top face).
``score`` compares two raters' answers with the labels, over every round given
(``--then``: a later round settles dice an earlier one left unclear, adds new dice, and
a "confirm" tile not read as the correction's face drops that correction). It prints,
on the control sample, how often both raters contradict the label (with an exact 95%
interval), on the candidates how many are the label's error and how many the reader's,
and (``--reader``) the committed reader on the sample dice people can and cannot read.
``--fixes FILE`` writes the corrections the rule allows: a label changes to F only when
both raters answer the same definite F that is not the label; any disagreement or ``?``
keeps it. The corrections live in ``reader_lab/data/dice_photo_fixes.csv`` (issue 9o's
four rounds: ``reader_lab/benchmarks/label_audit_9o/``); a set named with ``-audited``
(``dice_photos.load_set("trays-test-audited")``) is the set with them applied.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import (  # noqa: E402
    ManifestError,
    confidently_wrong,
    matched_readings,
)
from reader_lab import dice_photos, rated_boxes  # noqa: E402

HELD = ("table-test", "webcam-two", "trays-test")
VALIDATION = ("table-val", "trays-val", "webcam-val")
SAMPLE = {"table-test": 50, "trays-test": 50, "webcam-two": 20}
KEY_HEADER = ["tile", "kind", "set", "image", "x0", "y0", "x1", "y1", "label", "read",
              "confidence", "source"]
PER_SHEET, COLUMNS, PANEL = 18, 3, 160


def tile(image: np.ndarray, box, number: int, side_px: int = PANEL) -> np.ndarray:
    """The die twice, 2.6 and 1.25 box sides wide, each ``side_px`` px, corners marking the
    box on the wider view, the tile's number above: nothing of its label or reading."""
    x0, y0, x1, y1 = box
    cx, cy, side = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0, 4)
    panels = []
    for span, mark in ((2.6, True), (1.25, False)):
        half = side * span / 2
        a, b = int(round(cx - half)), int(round(cy - half))
        n = max(1, int(round(2 * half)))
        pad = n + 2
        big = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT,
                                 value=(128, 128, 128))
        crop = big[b + pad:b + pad + n, a + pad:a + pad + n]
        panel = cv2.resize(crop, (side_px, side_px), interpolation=cv2.INTER_CUBIC)
        if mark:
            s = side_px / n
            p0 = (int((x0 - a) * s), int((y0 - b) * s))
            p1 = (int((x1 - a) * s), int((y1 - b) * s))
            arm = max(4, (p1[0] - p0[0]) // 4)
            for (x, y), (dx, dy) in ((p0, (1, 1)), ((p1[0], p0[1]), (-1, 1)),
                                     ((p0[0], p1[1]), (1, -1)), (p1, (-1, -1))):
                cv2.line(panel, (x, y), (x + dx * arm, y), (255, 0, 255), 2)
                cv2.line(panel, (x, y), (x, y + dy * arm), (255, 0, 255), 2)
        panels.append(panel)
    body = np.hstack([panels[0], np.full((side_px, 4, 3), 255, np.uint8), panels[1]])
    band = np.full((22, body.shape[1], 3), 255, np.uint8)
    cv2.putText(band, f"#{number}", (4, 17), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 2)
    return np.vstack([band, body])


def sheet(tiles: list[np.ndarray], columns: int = COLUMNS) -> np.ndarray:
    blank = np.full_like(tiles[0], 255)
    tiles = tiles + [blank] * (-len(tiles) % columns)
    gap = lambda t: cv2.copyMakeBorder(t, 6, 6, 6, 6, cv2.BORDER_CONSTANT,  # noqa: E731
                                       value=(255, 255, 255))
    rows = [np.hstack([gap(t) for t in tiles[i:i + columns]])
            for i in range(0, len(tiles), columns)]
    return np.vstack(rows)


def die_of(row: dict) -> tuple[str, ...]:
    """A key row's die: its photo and box as written (whole pixels, as text)."""
    return (row["image"], row["x0"], row["y0"], row["x1"], row["y1"])


def make_sheets(out: Path, seed: int, model: str | None, retry: list[Path] | None = None,
                panel: int = PANEL, sample: dict[str, int] | None = None,
                candidates: bool = True, exclude: list[Path] | None = None,
                confirm: Path | None = None) -> int:

    rng = random.Random(seed)
    rows = (unclear(*retry) if retry is not None
            else pick(rng, model, sample, candidates, rated_dice(exclude or [])))
    if confirm is not None:
        rows.update(to_confirm(confirm))
    order = list(rows.values())
    rng.shuffle(order)
    return write_round(out, order, KEY_HEADER, ("label", "read", "confidence", "source"),
                       panel)


def write_round(out: Path, order: list[dict], header: list[str], after: tuple[str, ...],
                panel: int = PANEL) -> int:
    """A round's tiles, numbered in ``order``, on sheets in ``out``, and its ``key.csv``
    (``header``; each row the tile, kind, set, image, box in whole pixels, then the
    row's fields named in ``after``). Shared with ``box_audit.py``."""
    from companion.vision.frames import load_image

    out.mkdir(parents=True, exist_ok=True)
    tiles = []
    with (out / "key.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for n, r in enumerate(order, start=1):
            img = load_image(dice_photos.photo_root() / r["image"])
            tiles.append(tile(img, r["box"], n, panel))
            w.writerow([n, r["kind"], r["set"], r["image"], *(round(v) for v in r["box"]),
                        *(r[k] for k in after)])
    # larger views: two a row, four rows, so a sheet still fits a screen
    columns, per = (COLUMNS, PER_SHEET) if panel <= PANEL else (2, 8)
    for i in range(0, len(tiles), per):
        cv2.imwrite(str(out / f"sheet-{i // per + 1:02d}.png"),
                    sheet(tiles[i:i + per], columns))
    print(f"{len(tiles)} tiles on {-(-len(tiles) // per)} sheets in {out}")
    return 0


def to_confirm(fixes: Path) -> dict[tuple, dict]:
    """The dice a fixes file corrects, as tiles of kind "confirm": each correction is shown
    to fresh raters among other dice and stands only if they read the same face."""
    wanted = dice_photos.label_fixes(fixes)
    out: dict[tuple, dict] = {}
    for name in HELD + VALIDATION:
        items = dice_photos.load_set(name)
        for item, source in zip(items, dice_photos.sources_of(name, items), strict=True):
            for die in item.dice:
                k = (dice_photos.photo_key(item.path), dice_photos.rounded_box(die.box))
                if k in wanted and wanted[k][0] == die.face:
                    out.setdefault((k[0], die.box), dict(
                        kind="confirm", set=name, image=k[0], box=die.box, label=die.face,
                        read="", confidence="", source=source))
    return out


def unclear(key: Path, first: Path, second: Path) -> dict[tuple, dict]:
    """The tiles of an earlier round the raters left unclear, to be drawn again larger."""
    rows = read_key(key)
    a, b = read_answers(first, len(rows)), read_answers(second, len(rows))
    out = {}
    for r in rows:
        n = int(r["tile"])
        if verdict(r["label"], a.get(n, "?"), b.get(n, "?")) == "unclear":
            box = tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
            out[(r["image"], box)] = {**r, "box": box}
    return out


def read_key(key: Path) -> list[dict]:
    """A round's key.csv; one not of ``KEY_HEADER``'s columns is refused in one line."""
    with key.open(encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    if reader.fieldnames != KEY_HEADER:
        raise SystemExit(f"label_audit: {key}: not a key (header is not "
                         f"{','.join(KEY_HEADER)})")
    bad = next((r for r in rows if None in r.values() or None in r
                or not all(r[k].lstrip("-").isdigit() for k in ("tile", "x0", "y0", "x1", "y1"))),
               None)
    if bad is not None:
        raise SystemExit(f"label_audit: {key}: a row is not tile,kind,set,image,x0..y1 "
                         f"(numbers),label,...: {list(bad.values())[:6]}")
    return rows


def pick(rng: random.Random, model: str | None, sample: dict[str, int] | None = None,
         candidates: bool = True, exclude: frozenset = frozenset()) -> dict[tuple, dict]:
    """The candidates and the control sample (the module's docstring); ``exclude``: dice
    (photo, rounded box) an earlier round rated, never drawn again."""
    from companion.vision.evaluate import evaluate_manifest
    from companion.vision.learned import LearnedReader

    sample = SAMPLE if sample is None else sample
    cv2.setNumThreads(1)
    reader = LearnedReader(model, threads=1) if candidates else None
    rows: dict[tuple, dict] = {}  # (photo, box) -> row: a die in two sets is rated once
    for name in HELD + VALIDATION:
        if name not in sample and not candidates:
            continue
        items = dice_photos.load_set(name)
        sources = dict(zip((m.key for m in items), dice_photos.sources_of(name, items),
                           strict=True))
        photos = {m.key: dice_photos.photo_key(m.path) for m in items}  # as the keys name it
        if candidates:
            res = evaluate_manifest(items, reader=reader)
            wrong = confidently_wrong(items, res.predictions)
            for item, li, pred in wrong:
                die = item.dice[li]
                rows.setdefault((photos[item.key], die.box), dict(
                    kind="candidate", set=name, image=photos[item.key], box=die.box,
                    label=die.face, read=pred.face, confidence=f"{pred.confidence:.2f}",
                    source=sources[item.key]))
            print(f"{name}: {len(wrong)} confidently wrong", flush=True)
        if not sample.get(name):
            continue  # no draw: the rounds' random draws rebuild from their seeds
        everyone = [(item, li) for item in items for li in range(len(item.dice))]
        taken = 0
        for item, li in rng.sample(everyone, len(everyone)):
            if taken == sample.get(name, 0):
                break
            die = item.dice[li]
            k = (photos[item.key], die.box)
            if k in rows or (k[0], dice_photos.rounded_box(die.box)) in exclude:
                continue
            rows[k] = dict(kind="sample", set=name, image=k[0],
                           box=die.box, label=die.face, read="", confidence="",
                           source=sources[item.key])
            taken += 1
    return rows


def rated_dice(keys: list[Path]) -> frozenset:
    """(photo, rounded box) of every die in these rounds' keys."""
    return frozenset((r["image"], tuple(int(r[k]) for k in ("x0", "y0", "x1", "y1")))
                     for key in keys for r in read_key(key))


def read_answers(path: Path, tiles: int) -> dict[int, str]:
    """A rater's ``tile,face`` CSV; a bad line is refused in one line naming it
    (``rated_boxes.read_answers``, which training's ``--rated-negatives`` reads too)."""
    return rated_boxes.read_answers(path, tiles, SystemExit)


def both_answers(first: Path, second: Path, rows: list[dict], program: str = "label_audit"
                 ) -> tuple[dict[int, str], dict[int, str]]:
    """Two raters' answers to a round's key ``rows``; a tile either leaves unanswered is
    refused in one line naming ``program``, both files and the tiles."""
    return rated_boxes.both_answers(first, second, rows, program, SystemExit)


def verdict(label: str, a: str, b: str) -> str:
    """"fix" (both say the same definite face, not the label), "agree" (both say the
    label), "not a die" (both n), else "unclear"."""
    if a == b and a in "123456":
        return "agree" if a == label else "fix"
    return "not a die" if a == b == "n" else "unclear"


def rated(key: Path, first: Path, second: Path) -> list[dict]:
    """A round's key rows, each with its ``verdict`` and (for "fix") the raters' ``face``."""
    rows = read_key(key)
    a, b = both_answers(first, second, rows)
    both = sum(a[n] == b[n] for n in a)
    print(f"{key.parent.name}: raters agree on {both} of {len(rows)} tiles "
          f"({both / len(rows):.1%})")
    for r in rows:
        n = int(r["tile"])
        r["verdict"] = verdict(r["label"], a[n], b[n])
        r["face"] = a[n] if r["verdict"] == "fix" else ""
        r["round"] = key.parent.name
    return rows


def score(key: Path, first: Path, second: Path, fixes: Path | None,
          later: list[list[Path]] | None = None, reader=None,
          picture: Path | None = None, model: str | None = None) -> int:
    """Print the audit's tables; a later round's verdict on a die replaces an earlier
    round's "unclear" (``--then``). ``reader``: a learned reader, also scored on the
    sample (``readable_or_not``), named as ``model``'s (None: the committed one)."""
    from companion.vision.intervals import exact_share

    rows = rated(key, first, second)
    by_die = {die_of(r): r for r in rows}
    for round_files in later or []:
        for r in rated(*round_files):
            k = die_of(r)
            if r["kind"] == "confirm":  # a correction shown again, among other dice
                if k in by_die and by_die[k]["verdict"] == "fix" and (
                        r["verdict"] != "fix" or r["face"] != by_die[k]["face"]):
                    by_die[k].update(verdict="unclear", face="")
                    print(f"{r['round']}: the correction of tile {by_die[k]['tile']} "
                          f"({by_die[k]['round']}) is not confirmed: dropped")
            elif k not in by_die:  # a further round's new dice
                by_die[k] = r
                rows.append(r)
            elif by_die[k]["verdict"] == "unclear":
                by_die[k].update(verdict=r["verdict"], face=r["face"], round=r["round"],
                                 tile=r["tile"])
    print("\ncontrol sample (random dice): labels both raters contradict, among the dice "
          "both read (95% exact interval, dice taken as independent)")
    print("| set | dice | agree | label wrong | unclear | not a die | label wrong, 95% |")
    print("|---|---|---|---|---|---|---|")
    for name, part in sample_groups([r for r in rows if r["kind"] == "sample"]):
        c = Counter(r["verdict"] for r in part)
        ci = exact_share(c["fix"], c["fix"] + c["agree"])
        print(f"| {name} | {len(part)} | {c['agree']} | {c['fix']} | {c['unclear']} | "
              f"{c['not a die']} | {ci} |")
    print("\ncandidates (read confidently wrong by the committed reader)")
    print("| set | dice | label wrong (raters read the reader's face) | label wrong, "
          "another face | reader wrong (raters read the label) | unclear | not a die |")
    print("|---|---|---|---|---|---|---|")
    for name in HELD + VALIDATION:
        part = [r for r in rows if r["kind"] == "candidate" and r["set"] == name]
        if not part:
            continue
        c = Counter(r["verdict"] for r in part)
        readers = sum(r["verdict"] == "fix" and r["face"] == r["read"] for r in part)
        print(f"| {name} | {len(part)} | {readers} | {c['fix'] - readers} | {c['agree']} | "
              f"{c['unclear']} | {c['not a die']} |")
    if reader is not None:
        readable_or_not(rows, reader, model)
    if picture is not None:
        draw_picture(picture, rows)
    if fixes is not None:
        write_fixes(fixes, [r for r in rows if r["verdict"] == "fix"])
    return 0


def sample_groups(sample: list[dict]) -> list[tuple[str, list[dict]]]:
    """The control sample by set (held-aside sets first), then "all" the held-aside
    sets' dice together (a validation set's sample is its own row only)."""
    groups = [(name, [r for r in sample if r["set"] == name]) for name in HELD + VALIDATION]
    held = [r for r in sample if r["set"] in HELD]
    return [(n, g) for n, g in groups if g or n in SAMPLE] + [("all", held)]


def draw_picture(path: Path, rows: list[dict], unsure: int = 6) -> None:
    """The corrections (label, what both raters read, the reader's reading), then dice the
    reader read surely against the label but no two raters could read (the first
    ``unsure``, largest first), each captioned."""
    from companion.vision.frames import load_image

    fixed = [r for r in rows if r["verdict"] == "fix"]
    hard = sorted((r for r in rows if r["kind"] == "candidate" and r["verdict"] == "unclear"),
                  key=lambda r: -(int(r["x1"]) - int(r["x0"])))[:unsure]
    tiles = []
    for r in fixed + hard:
        img = load_image(dice_photos.photo_root() / r["image"])
        t = tile(img, tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1")), 0, 200)
        read = f"reader {r['read']} ({r['confidence']})" if r["read"] else "reader -"
        people = r["face"] if r["verdict"] == "fix" else "?"
        cv2.rectangle(t, (0, 0), (t.shape[1], 21), (255, 255, 255), -1)
        cv2.putText(t, f"{r['set']}  label {r['label']}  people {people}  {read}", (4, 16),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 160), 1)
        tiles.append(t)
    if tiles:
        cv2.imwrite(str(path), sheet(tiles, 2))
        print(f"\n{len(fixed)} corrections and {len(hard)} dice no two raters could read "
              f"drawn to {path}")


def readable_or_not(rows: list[dict], learned, model: str | None = None) -> None:
    """A learned reader (``learned``: ``model``'s folder's, None naming the committed one)
    on the control sample, split by whether both raters read the die (against the label,
    or the raters' face where they corrected it): how often it is right on each part, and
    on the dice no two raters could read how often it still names a face (sure) and a
    wrong one (issue 9x: a reader that knows when a die cannot be read says "unknown"
    there). Its share right on the readable dice comes with an exact 95% interval (issue
    9y: the figure a goal on dice people can read would be judged by)."""
    from companion.vision.evaluate import UNKNOWN, evaluate_manifest
    from companion.vision.intervals import exact_share

    sample = [r for r in rows if r["kind"] == "sample"]
    outcome: dict[tuple, str] = {}
    for name in sorted({r["set"] for r in sample}):
        want = {r["image"] for r in sample if r["set"] == name}
        every = dice_photos.load_set(name)
        photos = {m.key: dice_photos.photo_key(m.path) for m in every}
        items = [m for m in every if photos[m.key] in want]
        res = evaluate_manifest(items, reader=learned)
        for item, li, pred in matched_readings(items, res.predictions):
            box = dice_photos.rounded_box(item.dice[li].box)
            outcome[(photos[item.key], *map(str, box))] = (
                "missed" if pred is None else pred.face)
    print(f"\nthe {'committed' if model is None else model} reader on the control sample: "
          "readable = both raters read the same face (the label, or the face they corrected "
          "it to); sure = it names a face")
    print("| set | dice | readable | reader right on readable | right on readable, 95% | "
          "unclear to the raters | reader right on unclear | sure on unclear | "
          "sure and wrong on unclear |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, part in sample_groups(sample):
        if not part:  # a round of validation dice only has no held-aside rows
            continue
        got = [(r, outcome[die_of(r)]) for r in part]
        good = [(r, o) for r, o in got if r["verdict"] in ("agree", "fix")]
        hard = [(r, o) for r, o in got if r["verdict"] == "unclear"]
        right = lambda group: sum(o == (r["face"] or r["label"]) for r, o in group)  # noqa: E731
        sure = [(r, o) for r, o in hard if o not in ("missed", UNKNOWN)]
        share = lambda n, group: f"{n} ({n / max(1, len(group)):.0%})"  # noqa: E731
        print(f"| {name} | {len(part)} | {share(len(good), part)} | "
              f"{share(right(good), good)} | {exact_share(right(good), len(good))} | "
              f"{len(hard)} | {share(right(hard), hard)} | "
              f"{share(len(sure), hard)} | {share(len(sure) - right(sure), hard)} |")


def write_fixes(path: Path, rows: list[dict]) -> None:
    """Write ``rows``' corrections as the fixes file (all rounds scored together make
    it; a file already there is replaced, so a correction a later round dropped goes)."""
    out = sorted(([*die_of(r), r["label"], r["face"],
                   f"{r['round']} {r['kind']} tile {r['tile']}"] for r in rows),
                 key=lambda row: (row[0], int(row[1]), int(row[2])))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(dice_photos.FIXES_HEADER)
        w.writerows(out)
    print(f"\n{len(out)} corrections written to {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheets", help="draw the tiles to rate and their key")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--model", default=None, help="learned model folder (the committed one)")
    s.add_argument("--retry", nargs=3, type=Path, metavar=("KEY", "FIRST", "SECOND"),
                   help="draw again, larger, the tiles an earlier round's raters left unclear")
    s.add_argument("--panel", type=int, default=PANEL, help="each view's side in px")
    s.add_argument("--sample", nargs="*", metavar="SET=N", default=None,
                   help="the control sample's size per set (default: "
                   + " ".join(f"{k}={v}" for k, v in SAMPLE.items()) + ")")
    s.add_argument("--no-candidates", action="store_true",
                   help="only the control sample (a further round of random dice)")
    s.add_argument("--exclude", nargs="*", type=Path, default=[], metavar="KEY",
                   help="earlier rounds' keys: their dice are not drawn again")
    s.add_argument("--confirm", type=Path, default=None, metavar="FIXES",
                   help="also show again each die this fixes file corrects (kind confirm)")
    c = sub.add_parser("score", help="two raters' answers against the labels")
    c.add_argument("key", type=Path)
    c.add_argument("first", type=Path)
    c.add_argument("second", type=Path)
    c.add_argument("--fixes", type=Path, default=None,
                   help="write the corrections the rule allows to this CSV")
    c.add_argument("--then", nargs=3, type=Path, action="append", default=[],
                   metavar=("KEY", "FIRST", "SECOND"),
                   help="a later round: its verdicts settle dice an earlier one left unclear "
                   "(sheets --retry) and add dice not rated before (sheets --exclude)")
    c.add_argument("--picture", type=Path, default=None, metavar="PNG",
                   help="draw the corrections and dice no two raters could read")
    c.add_argument("--reader", action="store_true",
                   help="also the committed reader on the sample, readable dice or not")
    c.add_argument("--model", default=None, metavar="DIR",
                   help="with --reader: this learned model folder's reader instead")
    args = ap.parse_args(argv)
    needs_photos = args.cmd == "sheets" or (args.reader or args.picture is not None)
    if needs_photos and not dice_photos.available():  # score alone reads only its CSVs
        print(f"photo sets not found under {dice_photos.photo_root()}", file=sys.stderr)
        return 1
    if args.cmd == "sheets":
        if not 64 <= args.panel <= 512:
            print(f"label_audit: --panel {args.panel}: 64-512 px", file=sys.stderr)
            return 2
        sample = None
        if args.sample is not None:
            try:
                sample = {k: int(v) for k, v in (a.split("=") for a in args.sample)}
            except ValueError:
                print(f"label_audit: --sample {' '.join(args.sample)}: expected SET=N ...",
                      file=sys.stderr)
                return 2
            if bad := [k for k in sample if k not in HELD + VALIDATION]:
                print(f"label_audit: --sample: no set {bad[0]!r} (one of "
                      f"{', '.join(HELD + VALIDATION)})", file=sys.stderr)
                return 2
        from companion.vision.learned import ModelMissing

        try:
            return make_sheets(args.out, args.seed, args.model, args.retry, args.panel,
                               sample, not args.no_candidates, args.exclude, args.confirm)
        except (ManifestError, OSError, ModelMissing) as exc:  # a broken fixes file, an
            # unwritable --out, a --model folder with no model (loaded before any tile)
            print(f"label_audit: {exc}", file=sys.stderr)
            return 2
    for p in (args.key, args.first, args.second, *(q for t in args.then for q in t)):
        if not p.is_file():
            print(f"label_audit: {p}: no such file", file=sys.stderr)
            return 2
    if args.model is not None and not args.reader:
        print("label_audit: --model: names the reader --reader scores; give --reader too",
              file=sys.stderr)
        return 2
    learned = None
    if args.reader:  # loaded before any table, so a bad folder is one line and nothing else
        from companion.vision.learned import LearnedReader, ModelMissing

        cv2.setNumThreads(1)
        try:
            learned = LearnedReader(args.model, threads=1)
        except ModelMissing as exc:  # also a network file that will not load
            print(f"label_audit: {exc}", file=sys.stderr)
            return 2
    return score(args.key, args.first, args.second, args.fixes, args.then, learned,
                 args.picture, args.model)


if __name__ == "__main__":
    sys.exit(main())
