"""The camera's stream economy: full detection only when something moved (or now and
then), the last reading standing in between, late frames dropped, threads held."""

from __future__ import annotations

import asyncio

import numpy as np

from companion.vision.frames import SyntheticSource
from companion.vision.pipeline import Pipeline
from companion.vision.synthetic import pip_dice_specs, render_scene
from companion.vision.types import DieReading
from companion.vision.worker import FULL, SAME, SKIP, ChangeGate, VisionWorker


def table(seed: int = 1) -> np.ndarray:
    image, _ = render_scene(seed, pip_dice_specs(4), width=640, height=360)
    return image


def test_a_still_table_is_read_again_only_every_refresh_frames():
    gate = ChangeGate(refresh_every=10)
    img = table()
    rng = np.random.default_rng(0)
    decisions = []
    for _ in range(30):
        noisy = np.clip(img.astype(np.int16) + rng.integers(-3, 4, img.shape), 0, 255)
        d = gate.check(noisy.astype(np.uint8))  # sensor noise is not movement
        if d == FULL:
            gate.detected()
        decisions.append(d)
    assert decisions[0] == FULL
    assert decisions.count(FULL) == 3 and decisions.count(SAME) == 27


def test_a_die_moved_is_read_once_still_and_a_moving_table_every_few_frames():
    gate = ChangeGate(refresh_every=100, busy_every=3)
    a = table(1)
    assert gate.check(a) == FULL
    gate.detected()
    assert gate.check(a) == SAME
    b = a.copy()
    b[100:140, 200:240] = 255  # one die-sized patch changed
    assert gate.check(b) in (SKIP, FULL)  # it is moving (differs from the frame before)
    assert gate.check(b) == FULL  # still again, but not as last read: read at once
    gate.detected()
    assert gate.check(b) == SAME
    decisions = []
    for k in range(9):  # a hand sweeping across: every frame differs from the last
        c = a.copy()
        c[:, 60 * k : 60 * k + 80] = 30
        d = gate.check(c)
        if d == FULL:
            gate.detected()
        decisions.append(d)
    assert decisions.count(SKIP) >= 5 and decisions.count(FULL) >= 2


def fixed_dice(img):
    return [DieReading("pip", "5", 0.9, (100, 100, 140, 140), (120.0, 120.0))]


def run(source, **kw):
    async def main():
        readings = []
        done = asyncio.Event()
        worker = VisionWorker(
            source,
            asyncio.get_running_loop(),
            readings.append,
            on_end=done.set,
            every_frame=True,
            pipeline=Pipeline(pip_reader=fixed_dice),
            **kw,
        )
        worker.start()
        await asyncio.wait_for(done.wait(), 60)
        await worker.aclose()
        return worker, readings

    return asyncio.run(main())


def test_the_gated_worker_settles_the_same_dice_with_a_fraction_of_the_detections():
    def source():
        return SyntheticSource(3, hold=20, frames=60, dice=pip_dice_specs(3), width=320, height=240)

    plain, r1 = run(source())
    gated, r2 = run(source(), gate=ChangeGate(refresh_every=30), threads=1, nice=5)
    assert plain.detections == 60
    assert gated.detections <= 10 and gated.reused + gated.detections == 60
    assert [r.dice for r in r1] == [r.dice for r in r2]
    assert gated.cpu_ms > 0


def test_late_frames_are_dropped_not_queued():
    class SlowFirst(SyntheticSource):
        def read(self):
            frame = super().read()
            if frame is not None and frame.index == 0:
                import time

                time.sleep(0.25)  # the first frame takes 5 frame slots
            return frame

    worker, readings = run(
        SlowFirst(1, hold=50, frames=12, dice=pip_dice_specs(1), width=160, height=120),
        max_fps=20,
    )
    assert worker.frames == 12 and worker.frames_dropped >= 3
