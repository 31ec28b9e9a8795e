"""Learned die reader vs the classical pip reader on the held-aside real photo sets.

    .venv/bin/python -m reader_lab reader-accuracy            # accuracy + speed table
    .venv/bin/python -m reader_lab reader-accuracy --fewshot  # + few-shot N = 1, 3, 10
    .venv/bin/python -m reader_lab reader-accuracy --sets table-val trays-val  # validation
    .venv/bin/python -m reader_lab reader-accuracy --misses --no-pips  # where the loss is
    .venv/bin/python -m reader_lab reader-accuracy --peaks --no-pips  # by detector score
    .venv/bin/python -m reader_lab reader-accuracy --intervals --no-pips  # how sure
    .venv/bin/python -m reader_lab reader-accuracy --sets --no-pips --rounds 7  # speed only

Held-aside sets (never trained or tuned on; see reader_lab/dice_photos.py):
table-test (table-mixed-d6/labels_test.csv), webcam-two (webcam-two-d6, whole),
trays-test (trays-mixed-d6, source-disjoint 20%) and trays-colour-test (its colour
tray photos). Timing: OpenCV on one thread, reading only (decoding excluded), median.
With --rounds N the learned reader is timed N times over (a round: the median over the
frames), and the median and range of the rounds are set against issue 8's budget (30 ms
per 640x640 photo, 60 per 1280x720 frame): one machine's figures drift by a sixth from
one run to the next, so one round alone says little near the bound (issue 9p).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import evaluate_manifest  # noqa: E402
from companion.vision.frames import load_image  # noqa: E402
from reader_lab import dice_photos  # noqa: E402


def row(name: str, reader_name: str, s) -> str:
    return (f"| {name} | {reader_name} | {s.labelled} | {s.precision:.1%} | {s.recall:.1%} | "
            f"{s.face_accuracy:.1%} | {s.end_to_end:.1%} | {s.unknown_share:.1%} | "
            f"{s.wrong_share:.2%} | {s.ms_per_image_median:.1f} |")


def misses(reader, items) -> str:
    """Where each labelled die is lost: no detector peak at all (heat >= 0.02 near it),
    a peak below the detector threshold (and not a faint box read plainly), a box the
    classifier calls "not a die", a box dropped as centred inside a stronger kept box
    (``keep_nested`` false); and of the dice read, face right / unknown / confidently
    wrong."""
    from companion.vision.learned import FACES, kept_boxes
    from companion.vision.learned_model import NOT_A_DIE

    n = no_peak = low = not_die = nested = right = unknown = wrong = 0
    for m in items:
        boxes, probs, found = _found(reader, m)
        dropped = (set(kept_boxes(boxes, probs, reader.keeps))
                   - set(kept_boxes(boxes, probs, reader.keeps, reader.keep_nested)))
        for li, die in enumerate(m.dice):
            n += 1
            pi = found.get(li)
            if pi is None:
                no_peak += 1
                continue
            p = probs[pi]
            k = int(p[:NOT_A_DIE].argmax())
            if not reader.keeps(boxes[pi][4], float(p[k])):
                low += 1  # below the detector threshold, and not a faint box read plainly
                continue
            if p[NOT_A_DIE] > p[k]:
                not_die += 1
            elif pi in dropped:
                nested += 1
            elif p[k] < reader.face_threshold:
                unknown += 1
            elif FACES[k] == die.face:
                right += 1
            else:
                wrong += 1
    return " | ".join(f"{v / max(1, n):.1%}" for v in (no_peak, low, not_die, nested, right,
                                                       unknown, wrong))


def _found(reader, m) -> tuple[list, object, dict[int, int]]:
    """One photo read for ``misses`` and ``peak_records``: every box the detector scores
    0.02 or more, their face probabilities, and labelled die -> the box matched to it
    (by centre, as scoring matches: ``tune_reader.match_kept`` over every box)."""
    from reader_lab.tune_reader import match_kept

    img = load_image(m.path)
    boxes = reader.detect(img, 0.02)
    probs = reader.face_probabilities(img, boxes)
    pairs = match_kept(boxes, list(range(len(boxes))), m.dice)
    return boxes, probs, {li: pi for pi, li in pairs}


PEAK_BANDS = (0.02, 0.1, 0.3, 0.5, 0.7, 1.0)


def peak_records(reader, items) -> list[tuple[float | None, float, bool]]:
    """For each labelled die: the detector score of the box matched to it (None: no
    peak of 0.02 near it), how sure the classifier's top face is and whether it is the
    label's ("not a die" aside, as ``misses`` reads faces)."""
    from companion.vision.learned import FACES
    from companion.vision.learned_model import NOT_A_DIE

    out = []
    for m in items:
        boxes, probs, found = _found(reader, m)
        for li, die in enumerate(m.dice):
            pi = found.get(li)
            if pi is None:
                out.append((None, 0.0, False))
                continue
            k = int(probs[pi][:NOT_A_DIE].argmax())
            out.append((float(boxes[pi][4]), float(probs[pi][k]), FACES[k] == die.face))
    return out


def peak_bands(records, sure: float, bands=PEAK_BANDS) -> list[str]:
    """``peak_records`` by detector score band: the band's share of the labelled dice,
    how often the classifier's top face is right there, and the shares read at least
    ``sure`` sure right and wrong (of the band's dice); shares with the dice counted.
    The last band holds its top."""
    n = max(1, len(records))
    lost = sum(r[0] is None for r in records)
    rows = [f"no peak | {lost / n:.1%} ({lost}) | | |"]
    for i, (lo, hi) in enumerate(zip(bands, bands[1:], strict=False)):
        last = i == len(bands) - 2
        got = [r for r in records if r[0] is not None and lo <= r[0]
               and (r[0] <= hi if last else r[0] < hi)]
        k = max(1, len(got))
        rows.append(f"{lo:g}-{hi:g} | {len(got) / n:.1%} ({len(got)}) | "
                    f"{sum(r[2] for r in got) / k:.1%} | "
                    f"{sum(r[2] and r[1] >= sure for r in got) / k:.1%} / "
                    f"{sum(not r[2] and r[1] >= sure for r in got) / k:.1%} |")
    return rows


def speed(reader, images, repeat: int = 1) -> float:
    times = []
    for img in images:
        for _ in range(repeat):
            t = time.perf_counter()
            reader(img)
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


BUDGET_MS = {"640x640": 30.0, "1280x720": 60.0}  # issue 8: per photo / per frame, one core


def budget_lines(rounds: dict[str, list[float]]) -> list[str]:
    """Per frame size: the rounds' median and range against the budget, and a verdict
    on the median (``rounds``: frame size -> each round's median ms per frame)."""
    out = []
    for size, bound in BUDGET_MS.items():
        times = rounds[size]
        mid = statistics.median(times)
        verdict = "within" if mid <= bound else "OVER"
        out.append(f"{size}: median of {len(times)} rounds {mid:.1f} ms (rounds "
                   f"{min(times):.1f}-{max(times):.1f}); budget {bound:.0f} ms: {verdict}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(dice_photos.HELD_ASIDE))
    ap.add_argument("--model", default=None)
    ap.add_argument("--no-pips", action="store_true", help="skip the classical reader")
    ap.add_argument("--fewshot", action="store_true", help="also the few-shot curve")
    ap.add_argument("--seeds", type=int, default=3, help="few-shot draws per N")
    ap.add_argument("--misses", action="store_true",
                    help="also where the learned reader loses each die")
    ap.add_argument("--peaks", action="store_true",
                    help="also the dice found by detector score band, and how well "
                         "the classifier reads each band")
    ap.add_argument("--intervals", action="store_true",
                    help="also 95%% intervals (bootstrap over source photos)")
    ap.add_argument("--backends", action="store_true",
                    help="also time OpenCV DNN against ONNX Runtime")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time the learned reader this many times over and set the "
                         "rounds against the budget (default 1: the speed line only)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, not {args.rounds}")
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}")
        return 1
    cv2.setNumThreads(1)
    from companion.vision.learned import LearnedReader
    from companion.vision.pips import read_pip_dice

    learned = LearnedReader(args.model, threads=1)
    print(f"model: {args.model or 'companion/data/models'} thresholds det "
          f"{learned.det_threshold} (faint boxes from {learned.det_low_threshold} read at "
          f"{learned.low_face_threshold}) face {learned.face_threshold}; one thread\n")
    print("| set | reader | dice | precision | recall | face acc. | end-to-end | unknown | "
          "conf. wrong | ms/image |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for name in args.sets:
        items = dice_photos.load_set(name)
        readers = [("learned", learned)] + ([] if args.no_pips else [("pips", read_pip_dice)])
        for rname, reader in readers:
            res = evaluate_manifest(items, reader=reader)
            results.append((name, rname, res))
            print(row(name, rname, res.summary), flush=True)

    if args.intervals:
        from companion.vision.evaluate import source_intervals

        print("\n95% intervals (1,000 draws of the set's source photos, with replacement; "
              "augmented copies of a photo are drawn together):")
        print("| set | reader | source photos | end-to-end | conf. wrong | precision | recall |")
        print("|---|---|---|---|---|---|---|")
        for name, rname, res in results:
            photos, ci = source_intervals(res)
            s = res.summary
            print(f"| {name} | {rname} | {photos} | {s.end_to_end:.1%} "
                  f"({ci['end_to_end']}) | {s.wrong_share:.2%} ({ci['wrong_confident'].low:.2%}"
                  f"-{ci['wrong_confident'].high:.2%}) | {s.precision:.1%} ({ci['precision']}) | "
                  f"{s.recall:.1%} ({ci['recall']}) |", flush=True)

    if args.misses:
        print("\nwhere the learned reader loses dice (share of labelled dice):")
        print("| set | no peak | peak below threshold | \"not a die\" | inside a stronger box | "
              "face right | unknown | conf. wrong |")
        print("|---|---|---|---|---|---|---|---|")
        for name in args.sets:
            print(f"| {name} | {misses(learned, dice_photos.load_set(name))} |", flush=True)

    if args.peaks:
        print(f"\nthe labelled dice by the detector score of their box: share of the "
              f"set's dice, the classifier's top face right, and read at least "
              f"{learned.low_face_threshold} sure (the faint-box rule's face) right / "
              f"wrong, of the band's dice:")
        print("| set | detector score | dice | top face right | sure: right / wrong |")
        print("|---|---|---|---|---|")
        for name in args.sets:
            records = peak_records(learned, dice_photos.load_set(name))
            for line in peak_bands(records, learned.low_face_threshold):
                print(f"| {name} | {line}", flush=True)

    # speed on the frame sizes the issue names
    table = [load_image(m.path) for m in dice_photos.load_set("table-test")[:30]]
    two = [cv2.resize(load_image(m.path), (1280, 720), interpolation=cv2.INTER_AREA)
           for m in dice_photos.load_set("webcam-two")[:20]]
    for img in table[:3]:
        learned(img)  # warm up
    print(f"\nspeed, one thread: 640x640 (table-test) {speed(learned, table):.1f} ms/image, "
          f"1280x720 (webcam-two scaled) {speed(learned, two):.1f} ms/image (learned); "
          f"pips {speed(read_pip_dice, table):.1f} / {speed(read_pip_dice, two):.1f} ms")
    print(f"of which the detector alone: {speed(learned.detect, table):.1f} / "
          f"{speed(learned.detect, two):.1f} ms (a second detector pass would add about "
          f"that)")
    if args.rounds > 1:
        rounds = {"640x640": [], "1280x720": []}
        for _ in range(args.rounds):
            rounds["640x640"].append(speed(learned, table))
            rounds["1280x720"].append(speed(learned, two))
        print("\n".join(["budget, the learned reader timed again round by round:",
                         *budget_lines(rounds)]))

    if args.backends:
        cvr = LearnedReader(args.model, threads=1, backend="opencv")
        print(f"OpenCV DNN backend: 640x640 {speed(cvr, table):.1f} ms/image, 1280x720 "
              f"{speed(cvr, two):.1f} ms/image (ONNX Runtime above)")

    if args.fewshot:
        from companion.vision.fewshot import FewShotReader, build_prototypes, fewshot_choice

        kinds = ", ".join(f"N={n} {fewshot_choice(learned, n)[2]}" for n in (1, 3, 10))
        print("\nfew-shot (nearest prototype on a classifier embedding, no pip counting; "
              f"embedding as tuned: {kinds}): end-to-end / conf. wrong, mean of "
              f"{args.seeds} draws")
        print("| set | shots from | N=1 | N=3 | N=10 |")
        print("|---|---|---|---|---|")
        for name in args.sets:
            src = dice_photos.FEWSHOT_SOURCES.get(name)
            if src is None:
                continue
            src_items = dice_photos.load_set(src)
            items = dice_photos.load_set(name)
            cells = []
            for n in (1, 3, 10):
                e2e, wrong = [], []
                for seed in range(args.seeds):
                    protos = build_prototypes(src_items, n, seed=seed, reader=learned)
                    res = evaluate_manifest(items, reader=FewShotReader(protos, reader=learned))
                    e2e.append(res.summary.end_to_end)
                    wrong.append(res.summary.wrong_share)
                cells.append(f"{statistics.mean(e2e):.1%} / {statistics.mean(wrong):.2%}")
            print(f"| {name} | {src} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
