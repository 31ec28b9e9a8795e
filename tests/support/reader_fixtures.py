"""The fixture the reader's tests (tests/vision) and the lab's (tests/lab) share; each
folder's conftest.py imports it."""

import pytest

from companion.vision.learned import MODEL_DIR, LearnedReader


@pytest.fixture(scope="module")
def reader():
    """A reader of the committed learned model, one per test module (skipped without it)."""
    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no learned model committed yet")
    return LearnedReader()
