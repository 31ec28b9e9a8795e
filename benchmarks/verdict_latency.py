"""Benchmark: a button's edge to the verdict on the LED device, as `companion serve` runs.

    .venv/bin/python benchmarks/verdict_latency.py [--presses 5000] [--no-camera|--camera-only]

One measurement, end to end: a thread (as lgpio's alert thread on a Pi) stamps an edge
with CLOCK_MONOTONIC and drives a simulated pin low (companion's StampedMockPin, a
gpiozero MockFactory pin); the clock stops when the LED device (a luma dummy device,
the same `display()` call a MAX7219 gets) receives the frame of the verdict's word.
Everything between is `serve`'s own wiring (companion.appliance.Appliance with its
default timing, 5 ms settle window included): gpiozero's callback, the seat buttons,
the settle window and its timer, the referee, the game log (group-committed to a
temporary directory on this disk by its writer thread), the LED display.

Run twice in one process: without the camera, then with the camera at 30 fps as serve
runs it (companion.camera.CameraInput with the config's defaults: the vision worker in
its own process, one thread, nice 10, the shipped calibration profile, every Escape's
claim checked against its readings: `[camera] claims = "challenge"`) on a camera-like
stream of 16 dice at 1280x720 (the frames rendered ahead and handed over as a camera
does: benchmarks/table_stream.py). Seats 1 and 2 press in turn; between presses the verdict is
undone and the LED put back to blank, so each verdict is a frame change on the device.
(timing.lockout_ms is 5 here instead of 50, so 5,000 presses take minutes, not an
hour; the lockout never delays a first press.)

Printed: p50 / p99 / max of edge -> LED frame for each run, the goal beside them
(p99 <= 10 ms; camera on within 1 ms of camera off at p99), the log's durability
window (each line's time from append to fsync done) and what the camera did.
"""

from __future__ import annotations

import os
import sys

from companion.vision.threads import limit_native_threads

limit_native_threads(1)  # before numpy loads, as `serve` does

import argparse  # noqa: E402
import asyncio  # noqa: E402
import queue  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from luma.core.device import dummy  # noqa: E402

from companion.appliance import Appliance  # noqa: E402
from companion.config import parse_config  # noqa: E402
from companion.display.animations import flash  # noqa: E402
from companion.display.led_display import LedDisplay  # noqa: E402
from companion.display.led_matrix import LedMatrixDisplay  # noqa: E402
from companion.games.claims import CHALLENGE  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
GOAL_P99_MS = 10.0
GOAL_CAMERA_DELTA_MS = 1.0
SETUP_3P = [
    {"type": "new_game", "game": "vault-assault", "players": 3, "names": ["A", "B", "C"]},
    {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
    {"type": "assault_start"},
]


class StampingDevice(dummy):
    """A luma dummy device that notes when each frame reaches it."""

    def __init__(self) -> None:
        super().__init__(width=32, height=8, mode="1")
        self.want: bytes | None = None
        self.t_seen = 0
        self.seen: asyncio.Event | None = None

    def display(self, image) -> None:  # noqa: ANN001
        t = time.monotonic_ns()
        super().display(image)
        if self.want is not None and image.tobytes() == self.want:
            self.want = None
            self.t_seen = t
            assert self.seen is not None
            self.seen.set()


class EdgeThread(threading.Thread):
    """Drives the pins from a thread of its own, as lgpio's callback thread would."""

    def __init__(self, buttons) -> None:  # noqa: ANN001
        super().__init__(daemon=True, name="edges")
        self.buttons = buttons
        self.jobs: queue.Queue = queue.Queue()
        self.stamps: queue.Queue = queue.Queue()

    def run(self) -> None:
        while (seat := self.jobs.get()) is not None:
            pin = self.buttons.pin(seat)
            ts = time.monotonic_ns()
            pin.drive_low(ts_ns=ts)
            self.stamps.put(ts)
            pin.drive_high(ts_ns=ts + 1_000_000)


def camera_stream():  # noqa: ANN201
    from table_stream import TableStream, render_table

    stills = render_table(16, 3, seed=100)
    movers = render_table(16, 9, seed=200)
    return TableStream(stills, movers)


async def run(presses: int, camera: bool, log_dir: Path) -> dict:
    config = parse_config(
        f'[display]\ntype = "none"\n[timing]\nlockout_ms = 5\n[log]\ndir = "{log_dir}"\n'
    )
    app = Appliance(config, echo=False)
    await app.start()
    device = StampingDevice()
    device.seen = asyncio.Event()
    led = LedMatrixDisplay(device)
    led_display = LedDisplay(led)
    app.referee.displays.append(led_display)
    cam = None
    if camera:
        from companion.camera import CameraInput

        cam = CameraInput(
            app.referee,
            camera_stream(),
            profile_dir=str(REPO / "calibration" / "synthetic"),
            fps=config.camera.fps,
            threads=config.camera.threads,
            nice=config.camera.nice,
            process=config.camera.process,
            post=app.table.post,
            claims=CHALLENGE,  # every Escape checked against the camera's reading
        )
        cam.start(asyncio.get_running_loop())
        if cam.watch is not None:
            cam.watch.mode = CHALLENGE  # whatever the profile's own check said
        await asyncio.sleep(3.0)  # the camera warmed up and streaming
    for ev in SETUP_3P:
        app.table.post(ev)
    await app.table.drain()
    assert app.buttons is not None
    edges = EdgeThread(app.buttons)
    edges.start()
    want = led.image_for(flash("escaped")[0][0]).tobytes()
    lat_ms = []
    for i in range(presses):
        seat = 1 + i % 2
        # The last verdict's flash over, its animation cut, the device blank: the next
        # verdict is a frame change, and nothing else can show its word.
        app.referee.flash = None
        app.referee.flash_queue.clear()
        led_display.close()
        device.seen.clear()
        device.want = want
        edges.jobs.put(seat)
        await asyncio.wait_for(device.seen.wait(), 10)
        ts = edges.stamps.get(timeout=10)
        assert device.t_seen > ts, "a verdict frame before its edge"
        lat_ms.append((device.t_seen - ts) / 1e6)
        await app.table.drain()
        app.table.post({"type": "undo"})
        await app.table.drain()
        await asyncio.sleep(0.002)
    edges.jobs.put(None)
    app.log.flush(timeout=10)
    durable = [ns / 1e6 for ns in app.log.durable_ns]
    worker = cam.worker if cam else None
    stats = {}
    if worker is not None:
        stats = {
            "frames": worker.frames,
            "detections": worker.detections,
            "reused": worker.reused,
            "skipped": worker.skipped,
            "dropped": worker.frames_dropped,
            "cpu_ms": worker.cpu_ms,
            "claim_checks": cam.watch.posted if cam and cam.watch else 0,
        }
    if cam:
        await cam.aclose()
    await app.close()
    return {"lat": lat_ms, "durable": durable, "camera": stats}


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def line(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.2f} ms  p99 {pct(values, 99):6.2f} ms  "
        f"max {max(values):6.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=5000)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--no-camera", action="store_true", help="only the run without it")
    which.add_argument("--camera-only", action="store_true", help="only the run with it")
    args = ap.parse_args(argv)
    runs = [("camera off", False), ("camera on, 30 fps", True)]
    if args.no_camera:
        runs = runs[:1]
    elif args.camera_only:
        runs = runs[1:]
    p99 = {}
    for label, camera in runs:
        with tempfile.TemporaryDirectory(dir=REPO) as tmp:
            r = asyncio.run(run(args.presses, camera, Path(tmp)))
        p99[camera] = pct(r["lat"], 99)
        print(
            f"edge -> LED frame, {label} ({len(r['lat'])} presses): {line(r['lat'])}  "
            f"(goal: p99 <= {GOAL_P99_MS:g} ms, settle window included)",
            flush=True,
        )
        print(
            f"  log durability, {label}, append -> fsync done ({len(r['durable'])} lines): "
            f"{line(r['durable'])}",
            flush=True,
        )
        if r["camera"]:
            c = r["camera"]
            print(
                f"  camera during the camera-on run: {c['frames']} frames, "
                f"{c['detections']} full detections, "
                f"{c['reused']} reused, {c['skipped']} skipped while moving, {c['dropped']} "
                f"dropped late; {c['cpu_ms']:.2f} ms CPU a frame; "
                f"{c['claim_checks']} claims answered",
                flush=True,
            )
    if len(p99) == 2:
        delta = p99[True] - p99[False]
        print(f"camera on - off at p99: {delta:+.2f} ms (goal: within {GOAL_CAMERA_DELTA_MS:g} ms)")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
