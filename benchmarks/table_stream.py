"""A camera-like stream of the game table for the benchmarks (not a benchmark itself).

Frames are rendered ahead (companion.vision.synthetic: the mat, the 16 Vault Assault
dice, random light) and then played back as a camera delivers them: a throw (``moving``
frames, each a different arrangement: dice rolling, a hand in the way) followed by the
dice lying still for ``still`` frames, throw after throw. Producing a frame costs
nothing, as a camera's DMA costs the CPU nothing, so whatever CPU the stream costs is
the companion's own.
"""

from __future__ import annotations

import time

import numpy as np

from companion.vision.frames import Frame
from companion.vision.synthetic import all_dice_specs, pip_dice_specs, render_scene


def dice_for(n: int, symbols: bool = True) -> list:
    if not symbols:
        return pip_dice_specs(n)
    every = all_dice_specs()
    return [every[i % len(every)] for i in range(n)]


def render_table(
    n_dice: int,
    count: int,
    size: tuple[int, int] = (1280, 720),
    seed: int = 0,
    symbols: bool = True,
) -> list[np.ndarray]:
    return [
        render_scene(seed + k, dice=dice_for(n_dice, symbols), width=size[0], height=size[1])[0]
        for k in range(count)
    ]


class TableStream:
    """A FrameSource over pre-rendered frames: throws of ``moving`` frames, then ``still``
    frames of one arrangement, cycling through ``stills`` arrangements; endless unless
    ``frames`` is given."""

    def __init__(
        self,
        stills: list[np.ndarray],
        movers: list[np.ndarray],
        *,
        moving: int = 9,
        still: int = 81,
        frames: int | None = None,
    ) -> None:
        self.stills, self.movers = stills, movers
        self.moving, self.still, self.frames = moving, still, frames
        self.description = f"table stream ({len(stills)} throws)"
        self._index = 0

    def open(self) -> None:
        self._index = 0

    def close(self) -> None:
        pass

    def __enter__(self) -> TableStream:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def image_at(self, i: int) -> np.ndarray:
        period = self.moving + self.still
        throw, k = divmod(i, period)
        if k < self.moving:
            return self.movers[(throw * self.moving + k) % len(self.movers)]
        return self.stills[throw % len(self.stills)]

    def read(self) -> Frame | None:
        if self.frames is not None and self._index >= self.frames:
            return None
        i = self._index
        self._index += 1
        return Frame(self.image_at(i), i, time.monotonic(), "table stream")
