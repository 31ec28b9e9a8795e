"""What can go wrong with a frame source, as exceptions (``frames`` raises them).

Plain Python, no OpenCV or numpy: the camera's process sends these to the referee's
process, which unpickles them without loading OpenCV for it (issue 9u).
"""

from __future__ import annotations


class SourceError(RuntimeError):
    """A frame source could not be opened (or was used before opening)."""


class FrameUnreadable(ValueError):
    """One frame could not be read; the source stays open and the next read carries on."""


class CameraGone(RuntimeError):
    """A live camera stopped delivering frames mid-stream."""
