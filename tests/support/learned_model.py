"""The committed learned reader model, for the tests that read with it."""

import pytest

from companion.vision.learned import MODEL_DIR

needs_model = pytest.mark.skipif(not (MODEL_DIR / "detector.onnx").is_file(),
                                 reason="no learned model committed yet")
