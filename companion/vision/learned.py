"""The learned die reader: a small detector finds the dice, a crop classifier reads them.

Run time is ONNX Runtime (about 2-4x faster than OpenCV's DNN module here, measured
by ``python -m reader_lab reader-accuracy --backends``) or, when it is not installed,
OpenCV's DNN module, on the ONNX files under ``companion/data/models/`` (never torch): the detector,
the turned classifier, and the upright classifiers (``reader.json`` ``upright_files``,
their probabilities averaged).
``LearnedReader()(image)`` returns DieReadings (set "pip") like ``pips.read_pip_dice``.
A box is kept when the detector scores it at least ``det_threshold``, or at least
``det_low_threshold`` and the classifier reads its face at least ``low_face_threshold``
sure (a faint die read plainly); with ``keep_nested`` false (reader.json), a kept box
whose centre lies inside a kept box the detector scored higher is dropped (a die's side
or a pip seen as a second die); a die whose face the classifier is less sure of than
``face_threshold`` is "unknown"; a box the classifier calls "not a die" is dropped.
Thresholds and the detector's input size come from ``reader.json``, chosen on the
validation splits when the model was trained (``reader_lab.tune_reader``, outside the
package); so does whether the detector also reads the frame's mirror (``det_flip``; false
unless it says).

The classifiers' embeddings also read symbol dice with few shots (``classify`` with
``embedding`` "turned", "upright" or "members"): see ``companion.vision.fewshot``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.errors import CompanionError
from companion.vision.learned_model import (
    CROP_FILTER_KEY,
    CROP_SPAN,
    CROP_SPAN_KEY,
    DET_SIZE,
    NOT_A_DIE,
    box_crops,
    crops_blob,
    decode,
    letterbox,
)
from companion.vision.types import UNKNOWN, DieReading, box_side

MODEL_DIR = Path(__file__).resolve().parents[1] / "data" / "models"
FACES = ("1", "2", "3", "4", "5", "6")
DEFAULTS = {"det_threshold": 0.3, "face_threshold": 0.6, "det_low_threshold": None,
            "low_face_threshold": 1.0, "det_size": 416,
            "det_ref_side": 640, "det_max_side": 1024, "views": 1, "crop": 32,
            "upright_weight": 0.0, "keep_nested": True, "upright_files": None,
            "area_crops": [], "crop_shapes": {}, "det_flip": False}
# reader.json numbers: (lowest, highest, whether the lowest itself is refused)
RANGES = {"det_threshold": (0, 1, True), "det_low_threshold": (0, 1, True),
          "face_threshold": (0, 1, False), "low_face_threshold": (0, 1, False),
          "upright_weight": (0, 1, False), "det_size": (32, 2048, False),
          "det_ref_side": (32, 8192, False), "det_max_side": (32, 4096, False),
          "views": (1, 8, False), "crop": (16, 256, False)}
TURNED = "classifier.onnx"
UPRIGHT = "classifier_upright.onnx"
# Which embedding few-shot prototypes are made of: the turned classifier's (trained at any
# rotation), the upright classifiers' mean (trained keeping the photo's up), or
# each upright classifier's own, side by side ("members": EMBED_SIZE numbers per
# network in ``upright_files`` order; the few-shot reader scores a face by each network's
# own similarity, see ``fewshot.face_scores``).
EMBEDDINGS = ("turned", "upright", "members")
# The embeddings the upright classifiers make: a model needs one for them, and a few-shot
# profile of one records which networks made it (``upright_files``).
UPRIGHT_EMBEDDINGS = ("upright", "members")
EMBED_SIZE = 64  # numbers in one network's embedding


class ModelMissing(CompanionError, RuntimeError):
    """The model files are not there (one line naming the folder)."""


class ModelUnreadable(ModelMissing):
    """A model file that is there but cannot be used (one line naming it): a corrupt or
    hand-broken reader.json, an ONNX file that will not load."""


def read_reader_json(path: Path) -> dict:
    """A reader.json file's object as written (no defaults); one that cannot be read or
    is not a JSON object is one line naming it."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelUnreadable(f"{path}: cannot read: {exc}") from None
    if not isinstance(loaded, dict):
        raise ModelUnreadable(f"{path}: expected a JSON object")
    return loaded


def _read_meta(path: Path) -> dict:
    """reader.json over the defaults; any key of the wrong kind is one line naming it."""
    meta = dict(DEFAULTS)
    if not path.is_file():
        return meta
    meta.update(read_reader_json(path))
    for key in ("det_threshold", "face_threshold", "low_face_threshold", "upright_weight"):
        _number(path, meta, key, float)
    for key in ("det_size", "det_ref_side", "det_max_side", "views", "crop"):
        _number(path, meta, key, int)
    if meta["det_low_threshold"] is not None:
        _number(path, meta, "det_low_threshold", float)
    # a number of the right kind but out of range would blind the reader without a word
    # (a detector input of 0 px finds no die) or stall it (100,000 px)
    for key, (low, high, open_low) in RANGES.items():
        value = meta[key]
        if value is not None and not (low < value <= high if open_low else
                                      low <= value <= high):
            span = (f"above {low:g} and at most {high:g}" if open_low
                    else f"from {low:g} to {high:g}")
            raise ModelUnreadable(f"{path}: key {key!r} must be {span}, not {value!r}")
    for key in ("keep_nested", "det_flip"):
        if not isinstance(meta[key], bool):
            raise ModelUnreadable(f"{path}: key {key!r} must be true or false, not "
                                  f"{meta[key]!r}")
    files = meta["upright_files"]
    if files is not None and (not isinstance(files, list) or not files or not all(
            isinstance(f, str) and f and Path(f).name == f for f in files)):
        raise ModelUnreadable(f"{path}: key 'upright_files' must be a list of file names "
                              f"in the model folder, not {files!r}")
    area = meta["area_crops"]
    if not isinstance(area, list) or not all(isinstance(f, str) and f and Path(f).name == f
                                             for f in area):
        raise ModelUnreadable(f"{path}: key 'area_crops' must be a list of classifier file "
                              f"names in the model folder, not {area!r}")
    shapes = meta["crop_shapes"]
    if not isinstance(shapes, dict) or not all(
            isinstance(f, str) and f and Path(f).name == f and isinstance(v, list)
            and len(v) == 2 and isinstance(v[0], int) and not isinstance(v[0], bool)
            and 16 <= v[0] <= 256 and isinstance(v[1], int | float)
            and not isinstance(v[1], bool) and 0.8 <= v[1] <= 4
            for f, v in shapes.items()):
        raise ModelUnreadable(f"{path}: key 'crop_shapes' must map classifier file names "
                              "to [crop side in px (16-256), crop span in die sides "
                              f"(0.8-4)], not {shapes!r}")
    table = meta.get("fewshot") or {}
    try:
        # [similarity, margin] (the turned embedding), or [similarity, margin, embedding],
        # or [similarity, margin, embedding, detector threshold] (older models: the
        # few-shot reader kept boxes at ``det_threshold``: None), or also [...,
        # faint-box detector threshold, similarity a faint box needs] (before: no faint
        # boxes, None and None)
        meta["fewshot"] = {str(int(n)): [float(v[0]), float(v[1]),
                                         v[2] if len(v) > 2 else "turned",
                                         *(_fraction(v[k]) if len(v) > k else None
                                           for k in (3, 4, 5))]
                           for n, v in table.items()}
        if any(len(v) not in (2, 3, 4, 6) for v in table.values()):
            raise ValueError
        if any(e[4] is not None and e[4] > e[3] for e in meta["fewshot"].values()):
            raise ValueError  # a faint box scores below the plain threshold
    except (AttributeError, TypeError, ValueError, IndexError, KeyError):
        raise ModelUnreadable(f"{path}: key 'fewshot' must map shots to [similarity, "
                              "margin], [similarity, margin, embedding], [similarity, "
                              "margin, embedding, detector threshold] or those and [faint "
                              "detector threshold (at most the other), faint similarity]"
                              ", thresholds above 0 and at most 1") from None
    for entry in meta["fewshot"].values():
        if entry[2] not in EMBEDDINGS:
            raise ModelUnreadable(f"{path}: key 'fewshot' names embedding {entry[2]!r}, "
                                  f"not one of {', '.join(EMBEDDINGS)}")
    return meta


def is_fraction(value: Any) -> bool:
    """Whether ``value`` is a number above 0 and at most 1 (a threshold; not a bool)."""
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 < value <= 1


def _fraction(value: Any) -> float:
    """A threshold (``is_fraction``) of a reader.json ``fewshot`` entry; else ValueError."""
    if not is_fraction(value):
        raise ValueError(value)
    return float(value)


def _number(path: Path, meta: dict, key: str, kind: type) -> None:
    value = meta[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelUnreadable(f"{path}: key {key!r} must be a number, not {value!r}")
    meta[key] = kind(value)


def _load(path: Path, load: Callable[[bytes], Any],
          prints: dict[str, str] | None = None) -> Any:
    """A network from its ONNX file's bytes; one that will not load is one line naming
    it. The file is read once: ``prints`` (if given) gets the fingerprint of the very
    bytes loaded, under the file's name."""
    try:
        data = path.read_bytes()
        net = load(data)
    except Exception as exc:  # onnxruntime and cv2 raise their own kinds
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelUnreadable(f"{path}: cannot load the network: {first}") from None
    if prints is not None:
        prints[path.name] = _fingerprint(data)
    return net


def _read_onnx_cv2(data: bytes, side: int = DET_SIZE) -> Any:
    # OpenCV DNN loads a network stored as int8 (QuantizeLinear nodes: the lab's
    # int8-detector command) but its outputs are then wrong: it found no die at all
    # where ONNX Runtime reads the same file right. Refused, so the reader never runs
    # blind.
    if b"QuantizeLinear" in data:
        raise ValueError("it is stored as int8 (python -m reader_lab int8-detector), "
                         "which only ONNX Runtime reads right: install onnxruntime or use "
                         "a float network")
    # OpenCV 4.x (4.11.0 is the Pi's: systemd/pi-constraints.txt) infers every layer's
    # shape while it parses, from the input's declared shape; the detector declares its
    # height and width by name ("h", "w": any frame), and 4.11 then refuses the first
    # Add of its feature pyramid ("findCommonShape"). Declared as numbers (``side``), it
    # parses, and it still runs any other size (OpenCV infers again at setInput): its
    # heat map equals ONNX Runtime's on the same file to 1e-6. Only the declaration in
    # memory changes; the file, and what ONNX Runtime reads, do not. (The classifiers
    # declare their crop side as numbers already: unchanged.)
    return cv2.dnn.readNetFromONNX(np.frombuffer(image_side_declared(data, side), np.uint8))


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("not an ONNX file (a truncated number)")
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _pb_fields(buf: bytes):
    """A protobuf message's fields: (number, wire type, start, payload (start, end) or
    None, end)."""
    i = 0
    while i < len(buf):
        start = i
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        payload = None
        if wire == 0:
            i = _varint(buf, i)[1]
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, j = _varint(buf, i)
            payload, i = (j, j + n), j + n
        else:
            raise ValueError("not an ONNX file (an unknown field kind)")
        if i > len(buf):
            raise ValueError("not an ONNX file (truncated)")
        yield number, wire, start, payload, i


def _pb_edit(buf: bytes, number: int, edit: Callable[[bytes, int], bytes]) -> bytes:
    """``buf`` with each length-delimited field ``number`` (the k-th of them) replaced by
    ``edit(its payload, k)``; every other byte kept."""
    out, k = bytearray(), 0
    for num, wire, start, payload, end in _pb_fields(buf):
        if wire == 2 and num == number and payload is not None:
            new = edit(buf[payload[0]:payload[1]], k)
            k += 1
            out += _varint_bytes(number << 3 | 2) + _varint_bytes(len(new)) + new
        else:
            out += buf[start:end]
    return bytes(out)


def image_side_declared(data: bytes, side: int) -> bytes:
    """An ONNX model's bytes in which each graph input's height and width (NCHW
    dimensions 2 and 3), where declared by name, are declared as the number ``side``;
    nothing else changes (the weights' bytes included). Reads the protobuf itself: the ``onnx``
    package is the lab's, not the box's. ModelProto.graph (7) > GraphProto.input (11) >
    ValueInfoProto.type (2) > TypeProto.tensor_type (1) > shape (2) > dim (1), whose
    dim_param (2) becomes a dim_value (1)."""
    def dim(msg: bytes, k: int) -> bytes:
        named = any(num == 2 for num, *_ in _pb_fields(msg))
        return _varint_bytes(1 << 3) + _varint_bytes(side) if k in (2, 3) and named else msg

    Edit = Callable[[bytes, int], bytes]

    def nest(number: int, inner: Edit) -> Edit:
        return lambda msg, _k: _pb_edit(msg, number, inner)

    return _pb_edit(data, 7, nest(11, nest(2, nest(1, nest(2, nest(1, dim))))))


def _unit(e: np.ndarray) -> np.ndarray:
    return e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-6)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class LearnedReader:
    """Detector + classifier. Not thread safe: one per worker thread."""

    def __init__(self, model_dir: str | Path | None = None, *, threads: int = 1,
                 det_threshold: float | None = None, face_threshold: float | None = None,
                 det_size: int | None = None, backend: str = "auto",
                 upright_files: list[str] | None = None,
                 area_crops: list[str] | None = None,
                 crop_shapes: dict[str, list] | None = None) -> None:
        if backend not in ("auto", "onnxruntime", "opencv"):
            raise ValueError(f"backend must be auto, onnxruntime or opencv, not {backend!r}")
        d = Path(model_dir) if model_dir else MODEL_DIR
        det, cls = d / "detector.onnx", d / TURNED
        if not det.is_file() or not cls.is_file():
            raise ModelMissing(f"learned reader model not found in {d}")
        self.meta = meta = _read_meta(d / "reader.json")
        self.det_threshold = float(det_threshold if det_threshold is not None
                                   else meta["det_threshold"])
        self.face_threshold = float(face_threshold if face_threshold is not None
                                    else meta["face_threshold"])
        # Faint boxes read plainly: none unless reader.json names them (older models).
        low = meta["det_low_threshold"]
        self.det_low_threshold = float(self.det_threshold if low is None else low)
        self.low_face_threshold = float(meta["low_face_threshold"])
        # Whether a kept box may have its centre inside a kept box scored higher (older
        # models: yes; see ``readings_from``).
        self.keep_nested = meta["keep_nested"]
        self.det_size = int(det_size or meta["det_size"])
        # Test-time flip for the detector (reader.json ``det_flip``): the frame
        # and its mirror image both run, the mirror's heat map and sizes flipped back and
        # averaged with the plain ones before peaks are found (older models: no).
        self.det_flip = meta["det_flip"]
        # Scale-aware detection: the model was trained and tuned on frames whose longest
        # side is ``det_ref_side`` (640) seen at ``det_size``; a larger frame is seen at the
        # same pixels-per-die ratio (so a 75 px die in a 1920x1080 frame is not shrunk to
        # 16 px), up to ``det_max_side`` for speed. Frames up to 640 px are unchanged.
        self.det_ref_side = int(meta["det_ref_side"])
        self.det_max_side = int(meta["det_max_side"])
        # Test-time views: each crop is also read turned by 90/180/270 degrees (and
        # mirrored, for 8) and the probabilities averaged; a face's pips read the same.
        self.views = int(meta["views"])
        # The upright classifier (classifier_upright.onnx, optional): trained keeping the
        # photo's up, so in an oblique view it knows the top face from the sides; read on
        # the crop as it is, its probabilities mixed in at ``upright_weight``. reader.json
        # ``upright_files`` may name several, whose probabilities are averaged;
        # each must be there.
        named = upright_files or meta["upright_files"]
        ups = [d / f for f in named or [UPRIGHT]]
        missing = [u.name for u in ups if not u.is_file()]
        if named and missing:
            raise ModelUnreadable(f"{d / 'reader.json'}: upright classifier "
                                  f"{missing[0]} is not in {d}")
        ups = [] if missing else ups
        self.upright_files = [u.name for u in ups]
        self.upright_weight = float(meta["upright_weight"]) if ups else 0.0
        self.crop_size = int(meta["crop"])  # the classifier's input side (px)
        # Networks trained on area-shrunk crops (reader.json ``area_crops``) are
        # given crops cut that way (``learned_model.crop``); the others sampled ones.
        area = set(meta["area_crops"] if area_crops is None else area_crops)
        self.area_crops = sorted(area & {cls.name, *self.upright_files})
        # Networks trained on other crops (reader.json ``crop_shapes``: file ->
        # [side px, span in die sides]) are given crops cut that way; the others
        # ``crop``-sided crops spanning ``CROP_SPAN`` die sides.
        shapes = meta["crop_shapes"] if crop_shapes is None else crop_shapes
        self.crop_shapes = {n: list(shapes[n]) for n in sorted(shapes)
                            if n in {cls.name, *self.upright_files}}
        self.backend = backend
        prints: dict[str, str] = {}  # file name -> fingerprint of the bytes loaded
        if backend in ("auto", "onnxruntime"):
            try:
                import onnxruntime as ort
            except ImportError:
                if backend == "onnxruntime":
                    raise
                self.backend = "opencv"
            else:
                self.backend = "onnxruntime"
                so = ort.SessionOptions()
                so.intra_op_num_threads = max(1, threads)
                so.inter_op_num_threads = 1
                so.log_severity_level = 3
                # Memory: no planned block per input shape, and one arena for
                # every session in the process (the environment's), not one each; the
                # outputs are the same bit for bit
                so.enable_mem_pattern = False
                if shared_arena(ort):
                    so.add_session_config_entry(SHARED_ARENA_KEY, "1")
                prov = ["CPUExecutionProvider"]

                def session(path: Path, keep: dict[str, str] | None = None) -> Any:
                    return _load(path, lambda b: ort.InferenceSession(b, so, providers=prov),
                                 keep)

                self._det_s = session(det)
                check_io(self._det_s, det, "detector", DETECTOR_IO)
                self._cls_s = session(cls, prints)
                self._up_nets = [session(u, prints) for u in ups]
                shape = self._cls_s.get_inputs()[0].shape
                if isinstance(shape[-1], int):  # the network's own input side wins
                    self.crop_size = shape[-1]
                # each file's own marks must agree with reader.json's cuts
                for path, net in ((cls, self._cls_s), *zip(ups, self._up_nets, strict=True)):
                    marked = net.get_modelmeta().custom_metadata_map.get(CROP_FILTER_KEY)
                    if marked == "area" and path.name not in area:
                        raise ModelUnreadable(
                            f"{d / 'reader.json'}: {path.name} was trained on area-shrunk "
                            "crops but key 'area_crops' does not name it: tune the folder "
                            "again (python -m reader_lab train --part tune) or add it")
                    side, span = self._shape_of(path.name)
                    own = network_shape(net, self.crop_size, path)
                    if own != (side, span):
                        raise ModelUnreadable(
                            f"{d / 'reader.json'}: {path.name} reads {own[0]} px crops "
                            f"spanning {own[1]:g} die sides but key 'crop_shapes' gives "
                            f"{side} px and {span:g}: tune the folder again (python -m "
                            "reader_lab train --part tune) or set it")
        if self.backend == "opencv":
            side = self.det_size

            def read_cv2(data: bytes) -> Any:
                return _read_onnx_cv2(data, side)

            self._det = _load(det, read_cv2)
            self._cls = _load(cls, read_cv2, prints)
            self._up_nets = [_load(u, read_cv2, prints) for u in ups]
            check_io(self._det, det, "detector", DETECTOR_IO)
            for path, net in ((cls, self._cls), *zip(ups, self._up_nets, strict=True)):
                check_io(net, path, "classifier", CLASSIFIER_IO)
        self._turned = self._cls_s if self.backend == "onnxruntime" else self._cls
        # how each network's crops are cut: (area-shrunk, side px, span in die sides)
        self._turned_cut = (cls.name in area, *self._shape_of(cls.name))
        self._up_cuts = [(u.name in area, *self._shape_of(u.name)) for u in ups]
        self.has_upright = bool(ups)
        # what each classifier file holds: a few-shot profile names the
        # networks that embedded its shots, and a file of the same name may since hold
        # other weights (a retrained classifier_upright.onnx); each fingerprint is
        # of the bytes loaded (the file is read once)
        self.fingerprints = {p.name: prints[p.name] for p in (cls, *ups)}
        self._lock = threading.Lock()  # one forward at a time per network pair

    def _shape_of(self, name: str) -> tuple[int, float]:
        """A classifier file's crop side (px) and span (die sides)."""
        side, span = self.crop_shapes.get(name, (self.crop_size, CROP_SPAN))
        return int(side), float(span)

    @property
    def embeddings(self) -> tuple[str, ...]:
        """The embedding kinds this model gives ("upright" and "members" only with an
        upright classifier)."""
        return tuple(k for k in EMBEDDINGS
                     if k not in UPRIGHT_EMBEDDINGS or self.has_upright)

    def embedding_size(self, embedding: str) -> int:
        """How many numbers one die's ``embedding`` has."""
        return EMBED_SIZE * (len(self._up_nets) if embedding == "members" else 1)

    # -- the two stages
    def input_side(self, image: np.ndarray) -> int:
        """The detector's input longest side for this frame (see ``det_ref_side``)."""
        longest = max(image.shape[:2])
        scaled = round(longest * self.det_size / max(1, self.det_ref_side))
        return max(self.det_size, min(self.det_max_side, scaled))

    @property
    def lowest_threshold(self) -> float:
        """The lowest detector score a kept box may have (see ``keeps``)."""
        return min(self.det_threshold, self.det_low_threshold)

    def keeps(self, score: float, face_confidence: float) -> bool:
        """Whether a box the detector scored ``score`` is kept, its face read this sure."""
        return score >= self.det_threshold or (
            score >= self.det_low_threshold and face_confidence >= self.low_face_threshold)

    def detect(self, image: np.ndarray, threshold: float | None = None
               ) -> list[tuple[float, float, float, float, float]]:
        """Boxes (x0, y0, x1, y1, score) scored at least ``threshold`` (default: the
        lowest a kept box may have; ``keeps`` then decides with the face read)."""
        blob, scale = letterbox(image, self.input_side(image))
        hm, wh = self._heat(blob)
        if self.det_flip:
            # the letterboxed blob's width is a whole number of heat-map cells, so its
            # mirror's cells flipped back lie on the plain ones
            fhm, fwh = self._heat(np.ascontiguousarray(blob[..., ::-1]))
            hm = (hm + fhm[..., ::-1]) / 2
            wh = (wh + fwh[..., ::-1]) / 2
        thr = self.lowest_threshold if threshold is None else threshold
        h, w = image.shape[:2]
        boxes = []
        for x0, y0, x1, y1, s in decode(hm, wh, scale, thr):
            boxes.append((max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1), s))
        return boxes

    def _heat(self, blob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The detector's heat map and log box sizes for one letterboxed blob."""
        if self.backend == "onnxruntime":
            hm, wh = self._det_s.run(None, {"image": blob})
        else:
            self._det.setInput(blob)
            hm, wh = self._det.forward(["hm", "wh"])
        return hm, wh

    def classify(self, image: np.ndarray, boxes, embedding: str = "turned"
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities N x 7, embeddings) for the dice in ``boxes``: the turned views'
        mean, mixed with the upright classifier's at ``upright_weight``. The embeddings
        are the turned classifier's unit ones (N x 64), or (``embedding`` "upright") the
        mean of the upright classifiers' unit embeddings, made a unit again (N x 64), or
        (``embedding`` "members") each upright classifier's unit embedding side by side
        (N x 64 per network)."""
        if embedding not in EMBEDDINGS:
            raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}")
        probs, embs = self.classify_all(image, boxes, (embedding,))
        return probs, embs[embedding]

    def classify_all(self, image: np.ndarray, boxes,
                     embeddings: tuple[str, ...] | None = None
                     ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The probabilities ``classify`` gives and each of ``embeddings`` (default: every
        kind this model has) from one pass: the crops cut once, each network run once. A
        network runs only when the probabilities or an embedding asked for need it."""
        if embeddings is None:
            embeddings = self.embeddings
        for k in embeddings:
            if k in UPRIGHT_EMBEDDINGS and not self.has_upright:
                raise ModelUnreadable(f"this model has no upright classifier for the "
                                      f"{k!r} embedding")
        if len(boxes) == 0:
            return (np.zeros((0, 7), np.float32),
                    {k: np.zeros((0, self.embedding_size(k)), np.float32)
                     for k in embeddings})
        cuts = _Cuts(self, image, boxes)
        embs: dict[str, np.ndarray] = {}
        turned = up = None
        if "turned" in embeddings or self.upright_weight < 1.0:
            turned, embs["turned"] = self._turned_read(cuts)
        if self.has_upright and ("upright" in embeddings or "members" in embeddings
                                 or self.upright_weight > 0):
            up, embs["upright"], embs["members"] = self._upright_embedded(cuts)
        if turned is None:  # the upright classifiers carry all the weight
            probs = up
        else:
            probs = mix_upright(turned, up if self.upright_weight > 0 else None,
                                self.upright_weight)
        return probs, {k: embs[k] for k in embeddings}

    def classify_both(self, image: np.ndarray, boxes, *, upright: bool
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The turned-views classifier's probabilities and embeddings, and (``upright``
        and the model has one) the upright classifier's probabilities, else None."""
        if len(boxes) == 0:
            return np.zeros((0, 7), np.float32), np.zeros((0, 64), np.float32), None
        cuts = _Cuts(self, image, boxes)
        probs, emb = self._turned_read(cuts)
        up = self._upright(cuts) if upright and self.has_upright else None
        return probs, emb, up

    def _turned_read(self, cuts: _Cuts) -> tuple[np.ndarray, np.ndarray]:
        """The turned classifier's probabilities and unit embeddings, each the mean over
        the test-time views (``views``)."""
        crops = cuts(self._turned_cut)
        n = len(crops)
        views = list(crops)
        for v in range(1, self.views):
            turned = [np.ascontiguousarray(np.rot90(c, v % 4)) for c in crops]
            views.extend([np.ascontiguousarray(c[:, ::-1]) for c in turned] if v >= 4
                         else turned)
        logits, emb = self._forward(self._turned, crops_blob(views))
        probs = _softmax(logits).reshape(-1, n, logits.shape[1]).mean(axis=0)
        return probs, _unit(emb.reshape(-1, n, emb.shape[1]).mean(axis=0))

    def face_probabilities(self, image: np.ndarray, boxes) -> np.ndarray:
        """The probabilities ``classify`` gives (N x 7), asking for no embedding: the
        turned classifier is not run when the upright ones carry all the weight (it then
        only gives the few-shot embedding, which reading faces does not use)."""
        return self.classify_all(image, boxes, ())[0]

    def _crops(self, image: np.ndarray, boxes, area: bool = False, side: int | None = None,
               span: float = CROP_SPAN) -> list[np.ndarray]:
        return box_crops(image, boxes, side or self.crop_size, span, area)

    def _upright(self, cuts: _Cuts) -> np.ndarray:
        """The upright classifiers' probabilities, averaged."""
        return self._upright_embedded(cuts)[0]

    def _upright_embedded(self, cuts: _Cuts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The upright classifiers' probabilities, averaged; the mean of their unit
        embeddings, made a unit again; and their unit embeddings side by side."""
        blobs = {cut: crops_blob(cuts(cut)) for cut in set(self._up_cuts)}
        outs = [self._forward(net, blobs[cut])
                for net, cut in zip(self._up_nets, self._up_cuts, strict=True)]
        probs = np.mean([_softmax(logits) for logits, _ in outs], axis=0)
        units = [_unit(e) for _, e in outs]
        return probs, _unit(np.mean(units, axis=0)), np.concatenate(units, axis=1)

    def _forward(self, net: Any, blob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits, embeddings) of one classifier network (a session or an OpenCV net)."""
        if self.backend == "onnxruntime":
            logits, emb = net.run(None, {"crops": blob})
        else:
            net.setInput(blob)
            logits, emb = net.forward(["logits", "embedding"])
        return logits, emb

    def __call__(self, image: np.ndarray) -> list[DieReading]:
        with self._lock:
            boxes = self.detect(image)
            probs = self.face_probabilities(image, boxes)
        return readings_from(boxes, probs, self.face_threshold, self.keeps,
                             self.keep_nested)


def network_fingerprint(path: Path) -> str:
    """The first 16 hex digits of a network file's SHA-256: which weights it holds."""
    return _fingerprint(path.read_bytes())


def _fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


class _Cuts:
    """One frame's crops of some boxes for a reader's classifiers: each kind (area-shrunk
    or sampled, side px, span in die sides) cut once, when a network first asks for it."""

    def __init__(self, reader: LearnedReader, image: np.ndarray, boxes) -> None:
        self._reader, self._image, self._boxes = reader, image, boxes
        self._made: dict[tuple[bool, int, float], list[np.ndarray]] = {}

    def __call__(self, cut: tuple[bool, int, float]) -> list[np.ndarray]:
        if cut not in self._made:
            self._made[cut] = self._reader._crops(self._image, self._boxes, *cut)
        return self._made[cut]


def mix_upright(probs: np.ndarray, upright: np.ndarray | None, weight: float) -> np.ndarray:
    """The turned classifier's probabilities mixed with the upright one's at ``weight``
    (unchanged when there is no upright reading)."""
    return probs if upright is None else (1 - weight) * probs + weight * upright


def kept_boxes(boxes, probs: np.ndarray,
               keeps: Callable[[float, float], bool] | None = None,
               keep_nested: bool = True) -> list[int]:
    """Indices (in the boxes' order) of the boxes the classifier does not call "not a
    die" and ``keeps`` (detector score, face confidence) keeps (all when None); unless
    ``keep_nested``, a box whose centre lies inside a kept box scored higher is dropped."""
    kept: list[int] = []
    for i in sorted(range(len(boxes)), key=lambda j: -float(boxes[j][4])):
        b, p = boxes[i], probs[i]
        k = int(p[:NOT_A_DIE].argmax())
        if p[NOT_A_DIE] > p[k]:
            continue  # the classifier says this box holds no die
        if keeps is not None and not keeps(float(b[4]), float(p[k])):
            continue
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        if not keep_nested and any(boxes[j][0] <= cx <= boxes[j][2]
                                   and boxes[j][1] <= cy <= boxes[j][3] for j in kept):
            continue
        kept.append(i)
    return sorted(kept)


def readings_from(boxes, probs: np.ndarray, face_threshold: float,
                  keeps: Callable[[float, float], bool] | None = None,
                  keep_nested: bool = True, small_side: float = 0.0,
                  small_face: float = 0.0) -> list[DieReading]:
    """Readings of the boxes ``kept_boxes`` keeps, in the boxes' order; a face read less
    sure than ``face_threshold`` is unknown, and so is one less sure than ``small_face``
    in a box whose longer side is under ``small_side`` px."""
    out = []
    for i in kept_boxes(boxes, probs, keeps, keep_nested):
        b, face_p = boxes[i], probs[i][:NOT_A_DIE]
        k = int(face_p.argmax())
        conf = float(face_p[k])
        small = box_side(b) < small_side
        face = FACES[k] if conf >= max(face_threshold, small_face if small else 0.0) \
            else UNKNOWN
        x0, y0, x1, y1 = (int(round(v)) for v in b[:4])
        out.append(DieReading("pip", face, conf, (x0, y0, x1, y1),
                              ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)))
    return out


CLASSIFIER_IO = (("crops",), ("logits", "embedding"))
DETECTOR_IO = (("image",), ("hm", "wh"))


SHARED_ARENA_KEY = "session.use_env_allocators"
_arena_lock = threading.Lock()
_arena: list[bool] = []  # whether the process's shared CPU arena is registered


def shared_arena(ort: Any) -> bool:
    """Register (once per process) one CPU arena in ONNX Runtime's environment, for
    sessions made with ``SHARED_ARENA_KEY`` to share: five networks' sessions each
    keeping an arena of their own, as large as their largest run, held serve's camera
    24 MiB more (``benchmarks/serve_memory.py --pip-reader learned``). False
    when this ONNX Runtime cannot, so sessions keep arenas of their own."""
    with _arena_lock:
        if not _arena:
            try:
                info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0,
                                         ort.OrtMemType.DEFAULT)
                ort.create_and_register_allocator(info, ort.OrtArenaCfg(0, -1, -1, -1))
            except (AttributeError, RuntimeError, TypeError):
                _arena.append(False)
            else:
                _arena.append(True)
        return _arena[0]


def check_io(net: Any, path: Path, kind: str, io: tuple[tuple[str, ...], ...]) -> None:
    """One line naming ``path`` when a loaded network's input and output names are not
    those of a ``kind`` network (``io``: input names, output names): a detector in a
    classifier's place, say, is refused when loaded, not at the first frame. An OpenCV
    DNN net shows only its outputs, so only they are compared."""
    outputs = sorted(o.name for o in net.get_outputs()) if hasattr(net, "get_outputs") \
        else sorted(net.getUnconnectedOutLayersNames())
    inputs = [i.name for i in net.get_inputs()] if hasattr(net, "get_inputs") else None
    if outputs == sorted(io[1]) and inputs in (None, list(io[0])):
        return
    takes = "" if inputs is None else f"takes {', '.join(inputs) or 'nothing'} and "
    raise ModelUnreadable(
        f"{path}: not a die {kind} network: it {takes}gives {', '.join(outputs) or 'nothing'} "
        f"(a {kind} takes {', '.join(io[0])} and gives {', '.join(io[1])})")


def network_shape(session: Any, side: int, path: Path) -> tuple[int, float]:
    """An ONNX Runtime classifier session's crop side (its input's own, else ``side``)
    and span in die sides (its ``CROP_SPAN_KEY`` metadata, else ``CROP_SPAN``); a span
    that is not a number from 0.8 to 4, or a file that is no classifier, is one line
    naming the file (``path``)."""
    check_io(session, path, "classifier", CLASSIFIER_IO)
    shape = session.get_inputs()[0].shape
    span = session.get_modelmeta().custom_metadata_map.get(CROP_SPAN_KEY)
    try:
        own_span = float(span) if span is not None else CROP_SPAN
        if not 0.8 <= own_span <= 4:
            raise ValueError
    except ValueError:
        raise ModelUnreadable(f"{path}: metadata '{CROP_SPAN_KEY}' must be a number of die "
                              f"sides from 0.8 to 4, not {span!r}") from None
    return (shape[-1] if isinstance(shape[-1], int) else side), own_span
