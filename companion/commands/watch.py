"""`companion watch SOURCE`: run the camera pipeline live and show what it reads.

SOURCE is "picamera", a webcam index ("0"), a video file, a folder of images, or
"synthetic[:SEED]". One line is printed each time the settled dice change; with
``--save-annotated DIR`` every frame is also written there as a PNG with a box, set,
face and confidence per die. Unreadable frames are reported on stderr, one line each,
and the run goes on; a camera that disappears ends the run with exit code 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from companion.errors import CompanionError
from companion.vision.readers import DEFAULT_PIP_READER, PIP_READERS, load_pip_reader, readers_help


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="run the camera pipeline on a frame source and print settled readings",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("source", metavar="SOURCE",
                        help='"picamera", a webcam index ("0"), a video file, a folder of '
                             'images, or "synthetic[:SEED]"')
    parser.add_argument("--profile", metavar="DIR",
                        help="calibration profile folder (reads symbol dice); without it "
                             "only pip dice are read (the synthetic source uses the "
                             "shipped calibration/synthetic profile); \"\" for none, as "
                             "in sim and the config's [camera] profile")
    parser.add_argument("--frames", metavar="N", type=int,
                        help="stop after N frames (default: until the source ends)")
    parser.add_argument("--save-annotated", metavar="DIR", type=Path,
                        help="write every frame, annotated, as DIR/NNNNNN.png")
    parser.add_argument("--settle", metavar="N", type=int,
                        help="frames a die must lie still to count (default 3; 1 for a "
                             "folder of unrelated photos)")
    parser.add_argument("--no-pips", action="store_true",
                        help="do not look for pip dice (a game with symbol dice only)")
    parser.add_argument("--reader", choices=PIP_READERS, default=DEFAULT_PIP_READER,
                        help=f"pip dice reader (default {DEFAULT_PIP_READER}): "
                             f"{readers_help()}")
    parser.set_defaults(func=run)


def load_profile(path: Path) -> Any:
    """The calibration profile in ``path`` (see ``companion calibrate``)."""
    from companion.vision.profile import load_profile as load

    return load(path)


def describe_die(die: Any) -> str:
    where = ""
    if die.mat_xy is not None:
        where = f" @{die.mat_xy[0]:.0f},{die.mat_xy[1]:.0f}mm"
    else:
        where = f" @{die.centre[0]:.0f},{die.centre[1]:.0f}px"
    name = die.face if die.dice_set == "pip" else f"{die.dice_set} {die.face}"
    return f"{name} ({die.confidence:.2f}){where}"


def describe_settled(reading: Any) -> str:
    head = f"frame {reading.frame_index}: "
    if not reading.dice:
        return head + "no dice settled"
    dice = sorted(reading.dice, key=lambda d: (d.centre[1], d.centre[0]))
    count = f"{len(dice)} {'die' if len(dice) == 1 else 'dice'}"
    return f"{head}{count}: " + " | ".join(describe_die(d) for d in dice)


def run(args: argparse.Namespace) -> int:
    import cv2

    from companion.vision.annotate import annotate
    from companion.vision.frames import (
        CameraGone,
        FolderSource,
        FrameUnreadable,
        GuardedReader,
        SourceError,
        SyntheticSource,
        open_source,
    )
    from companion.vision.pipeline import Pipeline
    from companion.vision.settle import SettleTracker

    def err(message: str) -> None:
        print(f"companion watch: {message}", file=sys.stderr, flush=True)

    profile = None
    # "" is no profile, as sim's --profile "" and the config's [camera] profile = ""
    if args.profile:
        try:
            profile = load_profile(Path(args.profile))
        except (OSError, ValueError) as exc:
            err(f"cannot load profile {args.profile}: {exc}")
            return 2
    try:
        source = open_source(args.source)
    except (SourceError, OSError) as exc:
        err(str(exc))
        return 2
    if args.profile is None and isinstance(source, SyntheticSource):
        # The simulated table's dice come with the shipped synthetic profile (unless
        # --profile named one, or "" for none).
        from companion.vision.profile import default_profile_path

        shipped = default_profile_path("synthetic")
        if shipped.is_dir():
            try:
                profile = load_profile(shipped)
            except (OSError, ValueError) as exc:
                err(f"cannot load profile {shipped}: {exc}")
                return 2
            err(f"synthetic table: using the shipped profile {shipped}")
    photos = isinstance(source, FolderSource)
    settle = args.settle if args.settle is not None else (1 if photos else 3)
    if settle < 1:
        err("--settle must be at least 1")
        return 2
    if args.save_annotated is not None:
        args.save_annotated.mkdir(parents=True, exist_ok=True)
    # A folder holds unrelated photos: no motion between them, no mat memory.
    if args.no_pips and profile is None:
        err("--no-pips needs --profile: there would be nothing left to read")
        return 2
    pip_reader = None
    if not args.no_pips:
        try:
            pip_reader = load_pip_reader(getattr(args, "reader", DEFAULT_PIP_READER))
        except CompanionError as exc:  # a model missing or unreadable: one line
            err(str(exc))
            return 2
    pipeline = Pipeline(profile=profile, motion=not photos, mat_every=1 if photos else 15,
                        pips=not args.no_pips, pip_reader=pip_reader)
    tracker = SettleTracker(settle)

    times: list[float] = []
    frames = errors = 0
    status = 0
    # Any failure of the source is a camera failure (frames.GuardedReader); a folder
    # of photos may hold any number of unreadable files and still ends by itself.
    reader = GuardedReader(source, max_unreadable=None if photos else 30)
    try:
        reader.open()
    except SourceError as exc:
        err(str(exc))
        return 2
    try:
        while args.frames is None or frames < args.frames:
            try:
                frame = reader.read()
            except FrameUnreadable as exc:
                errors += 1
                err(f"skipped: {exc}")
                continue
            except CameraGone as exc:
                err(f"camera gone: {exc}")
                status = 1
                break
            if frame is None:
                break
            frames += 1
            start = time.perf_counter()
            try:
                reading = pipeline.process(frame.image, frame.index)
            except Exception as exc:  # one frame failing must not end the watch
                errors += 1
                err(f"skipped: {frame.name} frame {frame.index}: {type(exc).__name__}: {exc}")
                continue
            times.append((time.perf_counter() - start) * 1000.0)
            settled = tracker.update(reading)
            if tracker.changed:
                print(describe_settled(settled), flush=True)
            if args.save_annotated is not None:
                out = args.save_annotated / f"{frame.index:06d}.png"
                image = annotate(frame.image, reading, mat=pipeline.mat, settled=settled)
                if not cv2.imwrite(str(out), image):
                    err(f"cannot write {out}")
                    status = 1
                    break
    finally:
        try:
            source.close()
        except Exception as exc:  # a camera that fails to close must not hide the run
            err(f"{reader.description}: close failed: {exc}")
    median = f"{statistics.median(times):.1f} ms/frame median" if times else "no frames read"
    print(f"{frames} frames, {errors} skipped, {median}", file=sys.stderr, flush=True)
    return status
