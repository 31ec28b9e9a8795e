"""What every set derived from photos (half-size, hue-turned, dyed) must do, built by
``half_size.build_cached``: checks each builder's tests share."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from companion.vision.frames import FrameUnreadable


def assert_unreadable_photo_keeps_built_set(build: Callable, items: Sequence, folder: Path,
                                            sources: list[str], other_sources: list[str]
                                            ) -> None:
    """``build(items, sources, folder)`` is built; then, with ``items[1]``'s photo made
    unreadable, building for ``other_sources`` names that photo, and the set built first
    is still there whole, with nothing half-built left beside it."""
    built = build(items, sources, folder)
    bad = items[1].path
    bad.write_bytes(b"not a photo")
    with pytest.raises(FrameUnreadable, match=re.escape(bad.name)):
        build(items, other_sources, folder)
    assert build(items, sources, folder) == built  # the built set stays
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]
