"""The sizes and names the learned die reader's networks are made with, for training
and run time alike: plain Python, no OpenCV or numpy, so the command line can name the
defaults (``companion train --help``) without loading them (``learned_model`` holds the
crops and blobs cut with OpenCV; it takes these from here).
"""

from __future__ import annotations

DET_SIZE = 416
STRIDE = 4
CROP = 48
CROP_SPAN = 1.3
INIT_LR = 1e-3  # training: a fine-tune's peak rate (from scratch 3e-3 detector, 4e-3 classifiers)
LOW_RES_SHARE = 0.1  # training: classifier crops seen at a lower resolution (issue 9g)
NOT_A_DIE = 6
PAD_VALUE = 114
TRAIN_PARTS = ("det", "cls", "cls-upright", "tune")  # `companion train --part`, in order
PART_NETWORKS = {"det": "detector", "cls": "classifier", "cls-upright": "classifier_upright"}
# ONNX metadata a classifier file may carry: "area" when it was trained on area-shrunk
# crops (``crop(area=True)``; issue 8q), so the reader must cut its crops that way.
CROP_FILTER_KEY = "crop_filter"
# ... and "crop_span" (a number) when its crops span other than ``CROP_SPAN`` die sides
# (issue 8u); its input side is the ONNX input's own.
CROP_SPAN_KEY = "crop_span"


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
