"""Fixtures the vision tests share."""

import pytest

from companion.vision.learned import MODEL_DIR, LearnedReader


@pytest.fixture(scope="module")
def reader():
    """A reader of the committed learned model, one per test module (skipped without it)."""
    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no learned model committed yet")
    return LearnedReader()


@pytest.fixture
def photo_cache(monkeypatch, tmp_path):
    """The companion's cache in ``tmp_path`` (derived photo sets build there, not in the
    user's own cache)."""
    monkeypatch.delenv("CACHE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path
