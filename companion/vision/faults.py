"""What can go wrong with a frame source, as exceptions (``frames`` raises them).

Plain Python, no OpenCV or numpy: the camera's process sends these to the referee's
process, which unpickles them without loading OpenCV for it.
"""

from __future__ import annotations

from companion.errors import CompanionError


class SourceError(CompanionError, RuntimeError):
    """A frame source could not be opened (or was used before opening)."""


class FrameUnreadable(CompanionError, ValueError):
    """One frame could not be read; the source stays open and the next read carries on."""


class CameraGone(CompanionError, RuntimeError):
    """A live camera stopped delivering frames mid-stream."""
