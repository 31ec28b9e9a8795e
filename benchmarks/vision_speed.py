"""Benchmark: milliseconds per frame of the camera pipeline, single-threaded.

    .venv/bin/python benchmarks/vision_speed.py [--frames N] [--scenes K]
        [--profile DIR [--with-pips]]

Frames come from the synthetic renderer (companion.vision.synthetic): the mat under a
tilted camera with 2, 8, 16 and 32 dice at 640x480, 1280x720 and 1920x1080, random light,
dice touching or not. OpenCV is held to one thread (cv2.setNumThreads(1)), as one core
of a Pi 4 is what the vision worker can count on, and BLAS to one (set before numpy
loads).

Printed per cell, median and p95 over N timed frames (K distinct scenes, cycled):
- frame: ``read_frame`` on a lone frame, the mat looked for every time (a photo);
- stream: ``Pipeline.process`` on a live stream (each scene held for a while, as dice
  lie still): the mat looked for every 15 frames, hands looked for every frame. This
  is what the vision worker pays per camera frame;
- mat / dice: the two stages of ``frame`` alone (find_mat; the dice readers);
- own: ``stream`` with readers that find nothing: the pipeline's own cost per frame
  (hand detection, the mat now and then, the warp to the top-down view);
- cpu: medians of ``frame`` and ``stream`` in CPU time rather than wall time (the
  steadier figure when other jobs share the machine).

Without --profile the dice are pip dice, read with no calibration. With --profile
(e.g. calibration/synthetic) they are the game's symbol dice, read with that profile;
the pip reader is skipped as for a Vault Assault table, unless --with-pips.
"""

from __future__ import annotations

import os
import sys

from companion.vision.threads import limit_native_threads

limit_native_threads(1)  # BLAS held to one thread too, before numpy loads

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.vision.mat import find_mat  # noqa: E402
from companion.vision.pipeline import Pipeline, read_frame  # noqa: E402
from companion.vision.synthetic import all_dice_specs, pip_dice_specs, render_scene  # noqa: E402

SIZES = [(640, 480), (1280, 720), (1920, 1080)]
DICE = [2, 8, 16, 32]


def stats(ms: list[float]) -> tuple[float, float]:
    return statistics.median(ms), float(np.percentile(ms, 95))


CPU_MS: list[float] = []  # CPU time of the last timed call, beside its wall time


def timed(fn, *args, **kw) -> float:
    """Wall milliseconds of one call; its CPU milliseconds go to CPU_MS (on a machine
    shared with other jobs the CPU time is the steadier of the two)."""
    cpu = time.thread_time()
    start = time.perf_counter()
    fn(*args, **kw)
    wall = (time.perf_counter() - start) * 1000.0
    CPU_MS.append((time.thread_time() - cpu) * 1000.0)
    return wall


def dice_for(n: int, symbols: bool):
    if not symbols:
        return pip_dice_specs(n)
    every = all_dice_specs()
    return [every[i % len(every)] for i in range(n)]


def bench_cell(size, n, frames, scenes, profile, pips):
    width, height = size
    images = [
        render_scene(1000 * n + k, dice=dice_for(n, profile is not None), width=width,
                     height=height)[0]
        for k in range(scenes)
    ]
    # warm up: caches, lazy imports, first-call allocations
    for image in images:
        read_frame(image, profile=profile, pips=pips)

    frame_ms, frame_cpu, mat_ms, dice_ms = [], [], [], []
    for i in range(frames):
        image = images[i % scenes]
        frame_ms.append(timed(read_frame, image, profile=profile, pips=pips))
        frame_cpu.append(CPU_MS[-1])
        mat_ms.append(timed(find_mat, image))
        mat = find_mat(image)
        dice_ms.append(timed(read_frame, image, profile=profile, mat=mat, pips=pips))

    pipe = Pipeline(profile=profile, pips=pips)
    hold = max(1, frames // scenes)
    stream_ms, stream_cpu = [], []
    for i in range(frames):
        image = images[(i // hold) % scenes]
        stream_ms.append(timed(pipe.process, image))
        stream_cpu.append(CPU_MS[-1])
    nothing = Pipeline(profile=profile, pips=pips, pip_reader=lambda image: [],
                       symbol_reader=lambda view, prof, spec: [])
    own_ms = []
    for i in range(frames):
        image = images[(i // hold) % scenes]
        own_ms.append(timed(nothing.process, image))
    return (stats(frame_ms), stats(stream_ms), stats(mat_ms), stats(dice_ms), stats(own_ms),
            statistics.median(frame_cpu), statistics.median(stream_cpu))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=40, help="timed frames per cell")
    parser.add_argument("--scenes", type=int, default=4, help="distinct scenes per cell")
    parser.add_argument("--profile", type=Path, help="calibration profile: symbol dice")
    parser.add_argument("--with-pips", action="store_true",
                        help="with --profile: run the pip reader too")
    args = parser.parse_args(argv)

    cv2.setNumThreads(1)
    profile = None
    if args.profile is not None:
        from companion.vision.profile import load_profile

        profile = load_profile(args.profile)
    pips = profile is None or args.with_pips
    kind = "pip dice"
    if profile is not None:
        kind = f"symbol dice, profile {args.profile}, pip reader {'on' if pips else 'off'}"
    print(f"vision speed: {kind}; OpenCV {cv2.__version__}, threads={cv2.getNumThreads()}, "
          f"{args.frames} frames per cell")
    print(f"{'size':>10} {'dice':>4} | {'frame med':>9} {'p95':>6} | {'stream med':>10} "
          f"{'p95':>6} | {'mat med':>7} | {'dice med':>8} | {'own med':>7} | "
          f"{'cpu frame':>9} {'stream':>6}")
    worst_frame = worst_stream = worst_cpu = 0.0
    for size in SIZES:
        for n in DICE:
            frame, stream, mat, dice, own, cpu_frame, cpu_stream = bench_cell(
                size, n, args.frames, args.scenes, profile, pips)
            print(f"{size[0]:>5}x{size[1]:<4} {n:>4} | {frame[0]:9.1f} {frame[1]:6.1f} | "
                  f"{stream[0]:10.1f} {stream[1]:6.1f} | {mat[0]:7.1f} | {dice[0]:8.1f} | "
                  f"{own[0]:7.1f} | {cpu_frame:9.1f} {cpu_stream:6.1f}",
                  flush=True)
            if size == (1280, 720):
                worst_frame = max(worst_frame, frame[0])
                worst_stream = max(worst_stream, stream[0])
                worst_cpu = max(worst_cpu, cpu_frame)
    for what, ms in (("lone frame", worst_frame), ("stream frame", worst_stream),
                     ("lone frame, CPU time", worst_cpu)):
        print(f"1280x720 worst median per {what}, every frame read in full: {ms:.1f} ms")
    print("(the camera's goal, <= 5 ms a frame on average in a 30 fps stream, is measured "
          "by benchmarks/vision_stream.py)")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores (a busy machine inflates every figure)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
