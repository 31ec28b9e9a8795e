"""The settle tracker: which dice lie still, from a stream of per-frame readings. Pure.

Feed every ``FrameReading`` in order to ``SettleTracker.update``. A die counts (is
"settled") only once it has been seen for ``frames`` frames in a row with the same set
and face, its centre within ``tolerance`` of where the run began. A moving die never
gets there; a rolling die that changes face starts over. A still die read now with a
face and now "unknown" (a borderline die flickers so) does not start over: its run goes
on and it settles "unknown", so the table hears that a die lies there unread instead of
the die vanishing; read the same face ``frames`` times in a row, it settles with that
face, as any die.

A settled die stays settled while it is seen; it leaves once it has been missing (or
showing another face, or somewhere else) for ``frames`` frames in a row, so one
misread or blurred frame changes nothing. A die turned to a new face in place: the old
face leaves and the new one settles on the same frame, ``frames`` frames later.

Hands: the pipeline marks a large moving blob in a frame with a note
``hand_note(box)`` ("hand:x0,y0,x1,y1" in frame pixels). Readings inside a hand's box
(grown by ``hand_margin``) are ignored, runs there start over, and settled dice there
are neither confirmed nor counted missing: a hand passing over the table neither adds
nor removes anything. ``hand_note((0, 0, w, h))`` freezes the whole table. Readings
whose box is far larger than the frame's typical die (``max_area_ratio``) are blobs,
not dice, and are ignored too.

``update`` returns the settled reading (every settled die, first seen first); the
tracker's ``changed`` says whether the settled dice differ from the previous update.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from companion.vision.types import UNKNOWN, DieReading, FrameReading

HAND_PREFIX = "hand:"


def hand_note(box: tuple[int, int, int, int]) -> str:
    """The FrameReading note marking a large moving blob (a hand) at box (frame pixels)."""
    x0, y0, x1, y1 = (int(v) for v in box)
    return f"{HAND_PREFIX}{x0},{y0},{x1},{y1}"


def hand_boxes(notes: tuple[str, ...]) -> list[tuple[int, int, int, int]]:
    """Every hand box in a reading's notes; malformed hand notes are ignored."""
    boxes = []
    for note in notes:
        if not note.startswith(HAND_PREFIX):
            continue
        try:
            x0, y0, x1, y1 = (int(v) for v in note[len(HAND_PREFIX):].split(","))
        except ValueError:
            continue
        boxes.append((x0, y0, x1, y1))
    return boxes


def die_size(die: DieReading) -> float:
    x0, y0, x1, y1 = die.box
    return max(1.0, ((x1 - x0) + (y1 - y0)) / 2.0)


@dataclass
class _Track:
    die: DieReading  # the observation the die settled with (or the latest, while unsettled)
    anchor: tuple[float, float]  # centre when the still run began
    last: tuple[float, float]  # centre last seen
    seen: int = 1  # frames in a row seen still
    missing: int = 0  # frames in a row not seen (settled tracks only)
    settled: bool = False
    ident: int = 0


class SettleTracker:
    """Turns per-frame readings into the settled reading.

    frames: frames in a row a die must be still to count (and missing to stop counting).
    tolerance: fraction of a die's size its centre may wander and still be "still".
    min_tolerance_px: floor for that distance, in frame pixels.
    hand_margin: fraction of a hand box's size it is grown by on each side.
    max_area_ratio: readings with a box this many times the median die area are blobs.
    mixed_runs: a run takes a die read "unknown" where it had a face, or the other way
        round (settling it unknown); False: any change of face
        starts the run over (the lab's still_stream benchmark compares the two).
    """

    def __init__(
        self,
        frames: int = 3,
        *,
        tolerance: float = 0.25,
        min_tolerance_px: float = 3.0,
        hand_margin: float = 0.1,
        max_area_ratio: float = 4.0,
        mixed_runs: bool = True,
    ) -> None:
        if frames < 1:
            raise ValueError("frames must be at least 1")
        self.frames = frames
        self.tolerance = tolerance
        self.min_tolerance_px = min_tolerance_px
        self.hand_margin = hand_margin
        self.max_area_ratio = max_area_ratio
        self.mixed_runs = mixed_runs
        self._tracks: list[_Track] = []
        self._next_id = 0
        self._settled_key: tuple = ()
        self.changed = False
        self.settled = FrameReading(0, 0)

    def reset(self) -> None:
        """Forget everything (a new game, or the camera came back)."""
        self._tracks = []
        self._settled_key = ()
        self.changed = False
        self.settled = FrameReading(0, 0)

    # -- helpers ---------------------------------------------------------------------

    def _tol(self, die: DieReading) -> float:
        return max(self.min_tolerance_px, self.tolerance * die_size(die))

    def _hands(self, reading: FrameReading) -> list[tuple[float, float, float, float]]:
        grown = []
        for x0, y0, x1, y1 in hand_boxes(reading.notes):
            mx, my = self.hand_margin * (x1 - x0), self.hand_margin * (y1 - y0)
            grown.append((x0 - mx, y0 - my, x1 + mx, y1 + my))
        return grown

    @staticmethod
    def _under(hands: list[tuple[float, float, float, float]], xy: tuple[float, float]) -> bool:
        x, y = xy
        return any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in hands)

    def _candidates(self, reading: FrameReading, hands: list) -> list[DieReading]:
        dice = [d for d in reading.dice if not self._under(hands, d.centre)]
        if len(dice) >= 3:
            areas = sorted(die_size(d) ** 2 for d in dice)
            median = areas[len(areas) // 2]
            dice = [d for d in dice if die_size(d) ** 2 <= self.max_area_ratio * median]
        return dice

    # -- the update ------------------------------------------------------------------

    def update(self, reading: FrameReading) -> FrameReading:
        """Take the next frame's reading; return the settled reading."""
        hands = self._hands(reading)
        dice = self._candidates(reading, hands)

        # Match each die to a track with the same set and face, nearest first; a track
        # still on its run also takes the same die read "unknown" (or, unknown so far,
        # read with a face), after every same-face match.
        pairs = []
        for ti, track in enumerate(self._tracks):
            for di, die in enumerate(dice):
                if die.dice_set != track.die.dice_set:
                    continue
                mixed = die.face != track.die.face
                if mixed and (track.settled or not self.mixed_runs
                              or UNKNOWN not in (die.face, track.die.face)):
                    continue
                dist = math.dist(die.centre, track.last)
                if dist <= self._tol(die):
                    pairs.append((mixed, dist, ti, di))
        pairs.sort()
        track_of: dict[int, int] = {}
        die_taken: set[int] = set()
        for _, _, ti, di in pairs:
            if ti in track_of or di in die_taken:
                continue
            track_of[ti] = di
            die_taken.add(di)

        kept: list[_Track] = []
        for ti, track in enumerate(self._tracks):
            if ti in track_of:
                die = dice[track_of[ti]]
                if math.dist(die.centre, track.anchor) > self._tol(die):
                    # Drifted: whatever was settled has moved; start a new run here.
                    if track.settled:
                        track.missing += 1
                        if track.missing < self.frames:
                            kept.append(track)
                    die_taken.discard(track_of[ti])
                    continue
                track.last = die.centre
                track.missing = 0
                if not track.settled:
                    # a run that was not read the same way throughout settles unknown
                    mixed = die.face != track.die.face
                    track.die = replace(die, face=UNKNOWN) if mixed else die
                    track.seen += 1
                    track.settled = track.seen >= self.frames
                kept.append(track)
            elif self._under(hands, track.last):
                if track.settled:
                    kept.append(track)  # hidden by a hand: neither confirmed nor missing
            elif track.settled:
                track.missing += 1
                if track.missing < self.frames:
                    kept.append(track)
            # an unsettled track not seen this frame ends its run
        for di, die in enumerate(dice):
            if di in die_taken:
                continue
            track = _Track(die, die.centre, die.centre, ident=self._next_id)
            self._next_id += 1
            track.settled = self.frames <= 1
            kept.append(track)
        self._tracks = kept

        settled = sorted((t for t in kept if t.settled), key=lambda t: t.ident)
        key = tuple((t.ident, t.die.dice_set, t.die.face) for t in settled)
        self.changed = key != self._settled_key
        self._settled_key = key
        self.settled = replace(
            reading,
            dice=tuple(t.die for t in settled),
            notes=tuple(n for n in reading.notes if not n.startswith(HAND_PREFIX)),
        )
        return self.settled
