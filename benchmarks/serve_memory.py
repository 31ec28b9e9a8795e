"""Benchmark: memory of `companion serve` with the camera on a camera-like source.

    .venv/bin/python benchmarks/serve_memory.py [--seconds 14] [--samples 80]
    .venv/bin/python benchmarks/serve_memory.py --pip-reader learned   # pip dice

Writes a 1280x720 MJPG video of the game table (16 symbol dice, throws and stillness:
benchmarks/table_stream.py) to a temporary directory, then runs `companion serve` in a
subprocess with a config that reads that video as its camera (decoded frame by frame
by OpenCV, as a USB camera's MJPG is) at 30 fps with the shipped calibration profile,
mock GPIO, no LED, the game log in the temporary directory. After ``--seconds`` the
proportional set (PSS: each process's share of the pages, so shared libraries count
once), the resident set (VmRSS) and its peak (VmHWM) of serve and of its child processes
(the camera's; before issue 64 also multiprocessing's resource tracker) are read from
/proc and summed, ``--samples`` times 0.1 s apart (the last at ``--seconds``: by default
8 s of play, two or three throws), and serve is stopped. The goal is judged on the
highest summed PSS of those snapshots: while the dice roll the camera's process holds a
detection's working memory, so one snapshot (as before) says mostly whether a detection
was running when it was taken. The median and the share of snapshots within the goal are
printed beside it.

With ``--pip-reader pips`` or ``learned`` the video holds 5 pip dice and the config has
no profile and ``[camera] reader`` so named (the learned reader's networks load in the
camera's process).

Printed beside the goal: serve with camera <= 150 MB.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from companion.vision.readers import PIP_READERS

REPO = Path(__file__).resolve().parents[1]
GOAL_MB = 150.0
SAMPLE_GAP_S = 0.1  # between snapshots


def write_video(path: Path, frames: int, dice: int = 16, symbols: bool = True) -> None:
    import cv2
    from table_stream import TableStream, render_table

    stream = TableStream(render_table(dice, 3, seed=7, symbols=symbols),
                         render_table(dice, 9, seed=70, symbols=symbols))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (1280, 720))
    for i in range(frames):
        writer.write(stream.image_at(i))
    writer.release()


def status_mb(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM and Pss (the process's fair share of pages it shares with others:
    what summing over processes must use, or shared libraries count once per process)."""
    out = {}
    for name in ("status", "smaps_rollup"):
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Pss"):
                out[key] = int(value.split()[0]) / 1024  # kB -> MiB
    return out


def tree(pid: int) -> list[int]:
    """pid and all its descendants (the camera's process among them)."""
    out = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            out += tree(int(child))
    return out


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=14.0)
    ap.add_argument("--samples", type=int, default=80,
                    help="PSS snapshots, %(default)s by default, the last at --seconds")
    ap.add_argument("--pip-reader", choices=PIP_READERS, default=None,
                    help="5 pip dice, no profile, [camera] reader so named (default: 16 "
                         "symbol dice with calibration/synthetic)")
    args = ap.parse_args(argv)
    pips = args.pip_reader
    dice = 16 if pips is None else 5
    with tempfile.TemporaryDirectory() as tmp:
        video = Path(tmp) / "table.avi"
        write_video(video, int(30 * (args.seconds + 5)), dice, symbols=pips is None)
        config = Path(tmp) / "config.toml"
        reading = (f'profile = "{REPO / "calibration" / "synthetic"}"\n' if pips is None
                   else f'profile = ""\nreader = "{pips}"\n')
        config.write_text(
            f'[display]\ntype = "none"\n[log]\ndir = "{tmp}/logs"\n'
            f'[camera]\nsource = "{video}"\n{reading}'
        )
        companion = Path(sys.executable).with_name("companion")
        proc = subprocess.Popen(
            [str(companion), "serve", "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(max(0.0, args.seconds - SAMPLE_GAP_S * (args.samples - 1)))
            snapshots = []
            for k in range(args.samples):
                if k:
                    time.sleep(SAMPLE_GAP_S)
                if proc.poll() is not None:
                    print(f"serve exited early: {proc.stderr.read() if proc.stderr else ''}")
                    return 1
                pids = tree(proc.pid)
                each_now = [status_mb(p) for p in pids]
                snapshots.append((sum(m["Pss"] for m in each_now), pids, each_now))
            # judged on the highest snapshot: a detection's working memory, caught
            # between two frames, counts
            pss_all = [total for total, _, _ in snapshots]
            _, pids, each = max(snapshots, key=lambda snap: snap[0])
            mem = {k: sum(m[k] for m in each) for k in ("VmRSS", "VmHWM", "Pss")}
            used = [cpu_s(p) for p in pids]
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        said = proc.stderr.read().strip().splitlines() if proc.stderr else []
        for line in said:
            print(f"  serve: {line}")
        verdict = "met" if mem["Pss"] <= GOAL_MB else "NOT met"
        within = sum(total <= GOAL_MB for total in pss_all) / len(pss_all)
        pss_each = ", ".join(f"{m['Pss']:.0f}" for m in each)
        cpu_each = ", ".join(f"{u:.1f}" for u in used)
        print(
            f"serve with camera (1280x720 MJPG at 30 fps, {dice} "
            f"{'dice' if pips is None else 'pip dice, ' + pips}, {args.seconds:g} s): "
            f"PSS {mem['Pss']:.0f} MiB, the highest of {args.samples} snapshots "
            f"{SAMPLE_GAP_S:g} s apart (median {statistics.median(pss_all):.0f}; "
            f"{within:.0%} of them within the goal) "
            f"(goal: <= {GOAL_MB:g} MB: {verdict}) over its "
            f"{len(pids)} processes ({pss_each} MiB); RSS summed {mem['VmRSS']:.0f} MiB, "
            f"peaks summed {mem['VmHWM']:.0f} MiB; CPU used {cpu_each} s"
        )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
