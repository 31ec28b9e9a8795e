"""How well the symbol reader and the referee's rules do on synthetic Vault Assault dice.

Every frame holds all 16 dice (touching or not, any angle, varied light), often laid
out as an assembled mosaic, a near-miss mosaic (pieces swapped, one turned, one pulled
apart, the wrong wild), or a robber set on five Escapes or four. Prints:

- face accuracy: dice whose set and face are both right / dice on the table;
- unknown share and confidently-wrong faces (a wrong face is worse than unknown);
- false "mosaic complete" and false "five Escapes" verdicts (the reading says so, the
  ground truth does not), and the true ones found / missed;
- the symbol reader's median and p95 ms per frame, one thread: CPU time (what a core
  costs, steady on a busy machine) and wall time.

    .venv/bin/python benchmarks/symbol_accuracy.py                  # 2000 camera frames
    .venv/bin/python benchmarks/symbol_accuracy.py --frames 200 --view
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from companion.games.vault_assault.interpret import interpret  # noqa: E402
from companion.vision.mat_spec import DEFAULT_MAT  # noqa: E402
from companion.vision.profile import load_profile  # noqa: E402
from companion.vision.symbols import read_symbol_dice  # noqa: E402
from companion.vision.synthetic import (  # noqa: E402
    render_scene,
    render_view,
    truth_reading,
    vault_scene,
)
from companion.vision.types import UNKNOWN, FrameReading  # noqa: E402


def score_frame(readings, truth, spec=DEFAULT_MAT) -> dict[str, int]:
    """Match readings to true dice (nearest centre within half a die), count outcomes."""
    pts = [(d.mat_xy[0] * spec.px_per_mm, d.mat_xy[1] * spec.px_per_mm) for d in truth.dice]
    half = truth.die_mm * spec.px_per_mm / 2
    used: set[int] = set()
    out = {"dice": len(truth.dice), "right": 0, "unknown": 0, "wrong": 0, "extra": 0}
    for r in readings:
        best, bi = math.inf, -1
        for i, p in enumerate(pts):
            if i not in used:
                dd = math.dist(r.centre, p)
                if dd < best:
                    best, bi = dd, i
        if bi < 0 or best > half:
            out["extra"] += 1
            continue
        used.add(bi)
        t = truth.dice[bi]
        if r.face == UNKNOWN or r.dice_set == UNKNOWN:
            out["unknown"] += 1
        elif r.face == t.face and r.dice_set == t.dice_set:
            out["right"] += 1
        else:
            out["wrong"] += 1
    out["missed"] = len(truth.dice) - len(used)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--profile", default=str(REPO / "calibration" / "synthetic"))
    ap.add_argument("--view", action="store_true",
                    help="render the top-down view directly (skip camera, markers and warp)")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    profile = load_profile(args.profile)
    find_mat = None
    if not args.view:
        from companion.vision.mat import find_mat
    totals = {"dice": 0, "right": 0, "unknown": 0, "wrong": 0, "extra": 0, "missed": 0}
    verdicts = {"mosaic_true": 0, "mosaic_found": 0, "mosaic_false": 0,
                "escape_true": 0, "escape_found": 0, "escape_false": 0}
    no_mat = 0
    ms: list[float] = []
    cpu_ms: list[float] = []
    scen_count: dict[str, int] = {}
    t_start = time.perf_counter()
    for k in range(args.frames):
        rng = np.random.default_rng([args.seed, k])
        scenario, specs = vault_scene(rng)
        scen_count[scenario] = scen_count.get(scenario, 0) + 1
        if args.view:
            view, truth = render_view(rng, dice=specs)
        else:
            frame, truth = render_scene(rng, dice=specs, width=args.width, height=args.height)
            mat = find_mat(frame)
            if mat is None:
                no_mat += 1
                continue
            view = mat.warp(frame)
        t0, c0 = time.perf_counter(), time.thread_time()
        readings = read_symbol_dice(view, profile)
        ms.append((time.perf_counter() - t0) * 1000)
        cpu_ms.append((time.thread_time() - c0) * 1000)
        for key, v in score_frame(readings, truth).items():
            totals[key] += v
        w, h = DEFAULT_MAT.view_size
        seen = interpret(FrameReading(w, h, tuple(readings), mat_found=True), profile.dice)
        real = interpret(truth_reading(truth), profile.dice)
        for s_seen, s_real in zip(seen.stages, real.stages, strict=True):
            verdicts["mosaic_true"] += s_real.complete
            verdicts["mosaic_found"] += s_real.complete and s_seen.complete
            verdicts["mosaic_false"] += s_seen.complete and not s_real.complete
        for name, r_real in real.robbers.items():
            r_seen = seen.robbers[name]
            verdicts["escape_true"] += r_real.escaped
            verdicts["escape_found"] += r_real.escaped and r_seen.escaped
            verdicts["escape_false"] += r_seen.escaped and not r_real.escaped
    elapsed = time.perf_counter() - t_start
    n = totals["dice"]
    print(f"symbol dice, synthetic: {args.frames} frames "
          f"({'top-down view' if args.view else f'{args.width}x{args.height} camera'}), "
          f"{n} dice, profile {args.profile}")
    print("scenarios: " + ", ".join(f"{k} {v}" for k, v in sorted(scen_count.items())))
    if no_mat:
        print(f"mat not found in {no_mat} frames (skipped)")
    print(f"face accuracy (set and face right): {totals['right'] / max(n, 1):.4%}")
    print(f"unknown: {totals['unknown'] / max(n, 1):.4%}  confidently wrong: {totals['wrong']}  "
          f"missed dice: {totals['missed']}  extra detections: {totals['extra']}")
    print(f"false 'mosaic complete' verdicts: {verdicts['mosaic_false']}  "
          f"(true mosaics found {verdicts['mosaic_found']} of {verdicts['mosaic_true']})")
    print(f"false 'five Escapes' verdicts: {verdicts['escape_false']}  "
          f"(true five-Escapes found {verdicts['escape_found']} of {verdicts['escape_true']})")
    if ms:
        vw, vh = DEFAULT_MAT.view_size
        print(f"symbol reader per {vw}x{vh} view with 16 dice, one thread: "
              f"CPU ms median {np.median(cpu_ms):.2f}, p95 {np.percentile(cpu_ms, 95):.2f}; "
              f"wall ms median {np.median(ms):.2f}, p95 {np.percentile(ms, 95):.2f} "
              f"(load average now {os.getloadavg()[0]:.1f})")
    print(f"wall time {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
