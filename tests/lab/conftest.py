"""Fixtures the lab's tests share (``reader`` is the vision tests' too: tests/support)."""

import pytest
from reader_fixtures import reader  # noqa: F401 (a fixture, found by name)


@pytest.fixture
def photo_cache(monkeypatch, tmp_path):
    """The companion's cache in ``tmp_path`` (derived photo sets build there, not in the
    user's own cache)."""
    monkeypatch.delenv("CACHE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path
