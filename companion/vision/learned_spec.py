"""The sizes and names the learned die reader's networks are made with, for training
and run time alike: plain Python, no OpenCV or numpy (``learned_model`` holds the crops
and blobs cut with OpenCV; it takes these from here). The training defaults are the
lab's (``reader_lab.train_spec``).
"""

from __future__ import annotations

DET_SIZE = 416
STRIDE = 4
CROP = 48
CROP_SPAN = 1.3
NOT_A_DIE = 6
PAD_VALUE = 114
# ONNX metadata a classifier file may carry: "area" when it was trained on area-shrunk
# crops (``crop(area=True)``), so the reader must cut its crops that way.
CROP_FILTER_KEY = "crop_filter"
# ... and "crop_span" (a number) when its crops span other than ``CROP_SPAN`` die sides;
# its input side is the ONNX input's own.
CROP_SPAN_KEY = "crop_span"
