"""Fixtures the vision tests share (``reader`` is the lab's tests' too: tests/support)."""

from reader_fixtures import reader  # noqa: F401 (a fixture, found by name)
