"""The committed learned reader model, for the tests that read with it."""

import pytest

from companion.vision.learned import MODEL_DIR

needs_model = pytest.mark.skipif(not (MODEL_DIR / "detector.onnx").is_file(),
                                 reason="no learned model committed yet")


def record_forwards(reader) -> list:
    """Make ``reader`` note every classifier pass it runs, as (network, input blob) pairs
    in a list it returns; the passes still run."""
    fed: list = []
    forward = reader._forward

    def noted(net, blob):
        fed.append((net, blob))
        return forward(net, blob)

    reader._forward = noted
    return fed
