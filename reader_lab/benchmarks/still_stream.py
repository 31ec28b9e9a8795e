"""Held-aside photos as a still camera's stream: what the settle tracker makes of the
learned reader's readings when the dice lie still and only the camera's noise changes.

A camera watching still dice sends the same scene again and again, each frame a little
different (sensor noise, a fraction of a pixel of shake, the encoder). A die the reader
is unsure of reads now with a face and now "unknown". Before issue 9q such a die never
settled (each change of face started its run over), so it vanished from the table's
reading and nobody was told to nudge it; now its run goes on and it settles "unknown".
This plays each photo of a set as ``--frames`` frames (Gaussian noise of ``--noise``
grey levels, a shift of up to half a pixel, JPEG at quality 85-95, all drawn from a
fixed seed), reads every frame once, feeds the same readings to both trackers, and
matches each tracker's settled dice to the labels at the end:

    .venv/bin/python -m reader_lab still-stream                 # the four held-aside sets
    .venv/bin/python -m reader_lab still-stream --sets table-test --frames 12

Per set, as shares of the labelled dice: settled with the right face, settled unknown,
settled with a wrong face, not settled at all; and how many dice were read both with a
face and unknown across the frames (the flicker the change is for). Also the share of
the settled dice where no die is labelled. One thread; a few minutes for all four sets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import match, predicted_dice, score_image  # noqa: E402
from companion.vision.frames import load_image  # noqa: E402
from companion.vision.settle import SettleTracker  # noqa: E402
from companion.vision.types import UNKNOWN, FrameReading  # noqa: E402
from reader_lab import dice_photos  # noqa: E402

TRACKERS = {"9q (mixed runs)": True, "before 9q": False}


def shaken(image: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """One camera frame of a still scene: a sub-pixel shift, sensor noise, JPEG."""
    dx, dy = rng.uniform(-0.5, 0.5, 2)
    h, w = image.shape[:2]
    moved = cv2.warpAffine(image, np.float32([[1, 0, dx], [0, 1, dy]]), (w, h),
                           flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    grain = rng.standard_normal(moved.shape, dtype=np.float32) * np.float32(noise)
    noisy = np.clip(moved + grain, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(85, 96))])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else noisy


def tally(settled: FrameReading, labels) -> dict[str, int]:
    """A tracker's settled dice against one photo's labels, scored as `companion eval`
    scores a photo (``evaluate.score_image``)."""
    s = score_image(predicted_dice(settled.dice), labels)
    return {"right": s.correct, "unknown": s.unknown, "wrong": s.wrong,
            "not settled": s.labelled - s.matched, "no die there": s.predicted - s.matched}


def flickers(readings: list[FrameReading], labels) -> int:
    """Labelled dice read with a face in some frames and unknown in others."""
    seen: dict[int, set[bool]] = {}
    for r in readings:
        preds = predicted_dice(r.dice)
        for pi, li in match(preds, labels):
            seen.setdefault(li, set()).add(preds[pi].face == UNKNOWN)
    return sum(1 for kinds in seen.values() if kinds == {True, False})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(dice_photos.HELD_ASIDE))
    ap.add_argument("--frames", type=int, default=10, help="frames per photo (default 10)")
    ap.add_argument("--settle", type=int, default=3, help="the tracker's frames (default 3)")
    ap.add_argument("--noise", type=float, default=2.0,
                    help="sensor noise, grey levels (standard deviation; default 2)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.frames < args.settle or args.settle < 1:
        ap.error(f"--frames ({args.frames}) must be at least --settle ({args.settle}), "
                 f"which must be at least 1")
    if not dice_photos.available():
        print(f"photo sets not found under {dice_photos.photo_root()}")
        return 1
    cv2.setNumThreads(1)
    from companion.vision.learned import LearnedReader

    reader = LearnedReader(threads=1)
    rng = np.random.default_rng(args.seed)
    print(f"{args.frames} frames per photo, noise {args.noise:g}, half-pixel shake, JPEG "
          f"85-95; settle tracker {args.settle} frames; the committed learned reader\n")
    print("| set | tracker | dice | settled right | settled unknown | settled wrong | "
          "not settled | no die there | read both ways |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.sets:
        totals = {t: {} for t in TRACKERS}
        dice = flicker = 0
        for m in dice_photos.load_set(name):
            image = load_image(m.path)
            h, w = image.shape[:2]
            readings = [FrameReading(w, h, tuple(reader(shaken(image, rng, args.noise))),
                                     frame_index=i) for i in range(args.frames)]
            dice += len(m.dice)
            flicker += flickers(readings, m.dice)
            for label, mixed in TRACKERS.items():
                tracker = SettleTracker(args.settle, mixed_runs=mixed)
                for r in readings:
                    tracker.update(r)
                for k, v in tally(tracker.settled, m.dice).items():
                    totals[label][k] = totals[label].get(k, 0) + v
        n = max(1, dice)
        for label, t in totals.items():
            print(f"| {name} | {label} | {dice} | " + " | ".join(
                f"{t.get(k, 0) / n:.1%}" for k in ("right", "unknown", "wrong",
                                                   "not settled", "no die there"))
                  + f" | {flicker / n:.1%} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
