"""The training defaults and parts the lab's command line names, in plain Python (no
OpenCV, numpy or torch), so ``python -m reader_lab train --help`` shows them without
loading any of those. The shapes training and run time share stay in
``companion.vision.learned_spec``.
"""

from __future__ import annotations

INIT_LR = 1e-3  # a fine-tune's peak rate (from scratch 3e-3 detector, 4e-3 classifiers)
LOW_RES_SHARE = 0.1  # classifier crops seen at a lower resolution
TRAIN_PARTS = ("det", "cls", "cls-upright", "tune")  # `train --part`, in order
PART_NETWORKS = {"det": "detector", "cls": "classifier", "cls-upright": "classifier_upright"}


def feature_side(crop: int) -> int:
    """Cells across a classifier's last feature map for a ``crop`` px input (four
    stride-2 convolutions, each rounding up)."""
    for _ in range(4):
        crop = (crop + 1) // 2
    return crop


def grid_tiles(crop: int, grid: int) -> bool:
    """Whether ``grid`` x ``grid`` parts tile a ``crop`` px classifier's last feature map
    (``--cls-grid``): a whole number of cells each."""
    return grid >= 1 and feature_side(crop) % grid == 0
