"""The learned reader's detector stored as 8-bit integers (issue 9k): 309 KB instead of
547 KB and about a quarter cheaper on one core, reading about as the original does.

ONNX Runtime's static quantization (QDQ format: int8 weights per output channel, uint8
activations, MinMax ranges) calibrated on training photos, each letterboxed at a side
drawn from ``SIDES``, so the ranges hold at every input size the reader may use. Needs
the ``onnx`` package (the [train] extra) as well as onnxruntime; the reader itself loads
the result with onnxruntime alone. The OpenCV DNN back end loads it but then finds no
die, so the reader refuses an int8 network there (``learned._read_onnx_cv2``).

    python -m reader_lab int8-detector MODEL_DIR OUT_DIR [--size PX] [--photos N] [--seed S]
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from companion.errors import CompanionError
from companion.vision.learned import RANGES, ModelUnreadable, read_reader_json
from companion.vision.learned_model import letterbox

SIDES = (416, 512, 640)  # calibration photos are seen at these input sides
CALIBRATION_PHOTOS = 96
CALIBRATION_SETS = ("table-train", "trays-train")


class QuantizeError(CompanionError, ValueError):
    """A model folder or option that cannot be quantized; the message is one line."""


def calibration_blobs(images: Iterable[np.ndarray], rng: random.Random,
                      sides: tuple[int, ...] = SIDES) -> list[np.ndarray]:
    """Each image's detector input blob at a side drawn from ``sides`` by ``rng``."""
    return [letterbox(img, rng.choice(sides))[0] for img in images]


def train_blobs(n: int = CALIBRATION_PHOTOS, seed: int = 0, root=None) -> list[np.ndarray]:
    """The calibration blobs of ``n`` training photos (``CALIBRATION_SETS`` shuffled by a
    generator seeded ``seed``, which then draws each photo's side); a photo that will not
    load is skipped."""
    from companion.vision.frames import FrameUnreadable, load_image
    from reader_lab import dice_photos

    items = [m for s in CALIBRATION_SETS for m in dice_photos.load_set(s, root)]
    rng = random.Random(seed)
    rng.shuffle(items)
    images = []
    for m in items:
        if len(images) == n:
            break
        try:
            images.append(load_image(m.path))
        except FrameUnreadable:
            continue
    return calibration_blobs(images, rng)


def quantize_detector(src: Path, dst: Path, blobs: list[np.ndarray]) -> None:
    """``src`` (an fp32 or fp16-weight detector ONNX file) written to ``dst`` as int8,
    calibrated on ``blobs``. ONNX Runtime's helpers write scratch files into the current
    folder, so they run in a temporary one: the process's current folder changes while
    this runs (an offline tool's step, not for a program with other threads)."""
    import os

    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not blobs:
        raise QuantizeError("no calibration photos: the detector's ranges cannot be measured")

    class Blobs(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(blobs)

        def get_next(self) -> dict | None:
            b = next(self._it, None)
            return None if b is None else {"image": b}

    src, dst = src.resolve(), dst.resolve()  # before leaving the current folder
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            pre = Path(tmp) / "pre.onnx"
            out = Path(tmp) / "int8.onnx"
            try:
                quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
                quantize_static(str(pre), str(out), Blobs(), quant_format=QuantFormat.QDQ,
                                activation_type=QuantType.QUInt8,
                                weight_type=QuantType.QInt8, per_channel=True)
            except Exception as exc:  # onnx and onnxruntime raise their own kinds
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise QuantizeError(f"{src}: cannot quantize the network: {first}") from None
            shutil.copyfile(out, dst)
        finally:
            os.chdir(here)


def check_folders(model_dir: Path, out: Path, size: int | None = None) -> dict:
    """What ``int8_folder`` refuses, found before any photo is loaded: returns the model's
    reader.json. A missing detector or reader.json, an unreadable reader.json, an ``out``
    that is not a new or empty folder, or a side out of range is one line."""
    if not (model_dir / "detector.onnx").is_file():
        raise QuantizeError(f"{model_dir}: no detector.onnx to quantize")
    path = model_dir / "reader.json"
    if not path.is_file():
        raise QuantizeError(f"{model_dir}: no reader.json")
    try:
        meta = read_reader_json(path)
    except ModelUnreadable as exc:
        raise QuantizeError(str(exc)) from None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise QuantizeError(f"{out}: exists and is not an empty folder; name a new one")
    low, high, _ = RANGES["det_size"]  # the reader's own bounds: it refuses any other
    if size is not None and not low <= size <= high:
        raise QuantizeError(f"--size must be {low}..{high} px, not {size}")
    return meta


def int8_folder(model_dir: Path, out: Path, blobs: list[np.ndarray], *,
                size: int | None = None, seed: int = 0) -> dict:
    """A copy of ``model_dir`` in ``out`` (a new or empty folder) whose detector is int8,
    calibrated on ``blobs`` (drawn with ``seed``, recorded), and (``size``) whose
    reader.json ``det_size`` is that side; every other file as it was. Returns what
    reader.json then says of the detector. What it refuses (``check_folders``, a detector
    that will not quantize) is one line, and ``out`` is then not left behind."""
    meta = check_folders(model_dir, out, size)
    det = model_dir / "detector.onnx"
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        for f in sorted(model_dir.iterdir()):
            if f.is_file() and f.name != "detector.onnx":
                shutil.copyfile(f, out / f.name)
        quantize_detector(det, out / "detector.onnx", blobs)
        if size is not None:
            meta["det_size"] = size
        meta["detector_int8"] = {"calibration_photos": len(blobs), "seed": seed,
                                 "sides": list(SIDES)}
        (out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    except Exception:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        else:  # an empty folder given: emptied again
            for f in out.iterdir():
                f.unlink()
        raise
    return {"det_size": meta["det_size"], **meta["detector_int8"]}
