"""Plain data the camera pipeline hands out. No OpenCV here: these cross the thread
boundary from the vision worker to the event loop and go into logs and CSVs."""

from __future__ import annotations

from dataclasses import dataclass, field

UNKNOWN = "unknown"


def _plain(v):
    """A numpy number as the Python number of the same value; anything else as it is."""
    return v.item() if hasattr(v, "item") else v


def _plain_all(values):
    """A tuple of numbers with numpy's made Python's (None, or one with none, as it is)."""
    if values is None or not any(hasattr(v, "item") for v in values):
        return values
    return tuple(_plain(v) for v in values)


def box_side(box) -> float:
    """A box's (x0, y0, x1, y1, ...) longer side in pixels: how large the die looks."""
    return max(box[2] - box[0], box[3] - box[1])


@dataclass(frozen=True)
class DieReading:
    """One die found in one frame.

    dice_set: "pip" for ordinary pip dice, else a set name from the dice data file or
        a calibration profile (Vault Assault: "red", "blue", "black", "white"), or
        "unknown" when the set cannot be told.
    face: "1".."6" for pip dice, a face name ("escape", "alarm", "piece-2-3", ...) for
        symbol dice, or "unknown" below the confidence threshold.
    confidence: 0..1 for the face.
    box: (x0, y0, x1, y1) in the source frame's pixels.
    centre: (x, y) in the source frame's pixels.
    angle: degrees, the die's rotation on the mat (0 when not known).
    mat_xy: centre in mat millimetres when the mat was found, else None.
    """

    dice_set: str
    face: str
    confidence: float
    box: tuple[int, int, int, int]
    centre: tuple[float, float]
    angle: float = 0.0
    mat_xy: tuple[float, float] | None = None
    set_confidence: float = 1.0

    def __post_init__(self) -> None:
        # Plain Python numbers whatever a reader computed them with: a reading pickled in
        # the camera's process and holding a numpy number would load numpy in the
        # referee's to unpickle it (7 MiB). The values stay the same.
        for name in ("confidence", "angle", "set_confidence"):
            object.__setattr__(self, name, _plain(getattr(self, name)))
        for name in ("box", "centre", "mat_xy"):
            object.__setattr__(self, name, _plain_all(getattr(self, name)))


@dataclass(frozen=True)
class FrameReading:
    """Every die read in one frame."""

    width: int
    height: int
    dice: tuple[DieReading, ...] = ()
    mat_found: bool = False
    frame_index: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
