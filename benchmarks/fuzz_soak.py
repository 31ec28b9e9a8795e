"""The fuzz suite's long mode: every target of tests/fuzz for SECONDS each (default 30),
plus several `serve --input` runs, then one line of figures per target. Any crash, hang
or silent stop raises with the seed and the input.

    .venv/bin/python benchmarks/fuzz_soak.py [SECONDS] [--seed N] [--serve-runs N]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

import fuzzing  # noqa: E402

logging.getLogger("companion.hardware.pico_link").setLevel(logging.ERROR)  # 1 line per bad line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("seconds", nargs="?", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--serve-runs", type=int, default=5)
    args = ap.parse_args()
    s, seed = args.seconds, args.seed
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-soak-"))
    targets = [
        ("events -> gate + referee", lambda: fuzzing.fuzz_referee(s, seed), "events"),
        ("events -> companion replay", lambda: fuzzing.fuzz_replay(s, seed, tmp), "events"),
        ("events -> sim (buttons, settle window)", lambda: fuzzing.fuzz_sim(s, seed), "events"),
        (
            "events -> serve --input (subprocess)",
            lambda: sum(
                fuzzing.fuzz_serve_input(seed + i, tmp, lines=2000)
                for i in range(args.serve_runs)
            ),
            "events",
        ),
        ("bytes -> Pico parser + link", lambda: fuzzing.fuzz_pico(s, seed), "chunks"),
        ("mutated TOML -> config", lambda: fuzzing.fuzz_config(s, seed), "configs"),
        ("damaged logs -> resume", lambda: fuzzing.fuzz_logs(s, seed, tmp), "logs"),
    ]
    total = 0
    for name, run, unit in targets:
        t0 = time.monotonic()
        n = run()
        total += n
        dt = time.monotonic() - t0
        print(f"{name:40s} {n:>9,} {unit:8s} {dt:6.1f} s  0 crashes, 0 hangs, 0 silent stops")
    print(f"seed {seed}: {total:,} inputs in all, no failure")


if __name__ == "__main__":
    main()
