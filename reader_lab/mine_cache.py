"""What fine-tunes mine and draw before their first step, kept on disk (``python -m reader_lab train
--cache DIR``; issue 9w).

Fine-tunes taught from the same model mine the same boxes: its false peaks, its boxes on
the dice, the dice it reads wrong or unsure, its soft targets, the dice its detector
misses (``train_reader.mine_*``). Each result is stored once under a name that is the
digest of everything it depends on (what was mined, the miner's settings and code, the
teacher's network and reader files, every train photo's bytes and labels,
``MINE_VERSION``); a later run with the same inputs reads it back, and any change of
input names another file. A file that will not read is one line in the log and is mined
(and written) again: nothing is lost.

The rendered training scenes (``train_reader.Rendered``: thousands drawn before any step,
half of a short fine-tune's time) are kept the same way, named by the scene count, seed
and kind, the renderer's source and the numpy and OpenCV versions that draw them; a
stored set whose first scene is not the one drawn now is drawn again. No torch here.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

MINE_VERSION = 1  # raise when a miner's output for the same inputs changes

# RealImages attribute each miner fills
KINDS = ("false_peaks", "die_boxes", "hard_dice", "soft_dice", "missed")


def photos_digest(items: Sequence[tuple[bytes, np.ndarray, np.ndarray]],
                  sets: Sequence[str], keys: Sequence[str | None]) -> str:
    """The digest of the train photos as a miner sees them: each one's set, path key,
    bytes and labelled boxes and faces, in order."""
    h = hashlib.sha256(json.dumps([len(items), len(sets), len(keys)]).encode())
    for (data, boxes, faces), name, key in zip(items, sets, keys, strict=False):
        h.update(json.dumps([name, key, len(data), boxes.shape, faces.shape]).encode())
        h.update(hashlib.sha256(data).digest())
        h.update(np.ascontiguousarray(boxes, np.float32).tobytes())
        h.update(np.ascontiguousarray(faces, np.int64).tobytes())
    h.update(str(len(items)).encode())
    return h.hexdigest()


def model_digest(model_dir: str | Path) -> str:
    """The digest of a teacher folder's files a miner may read: its ``*.onnx`` and
    ``reader.json`` (names and bytes)."""
    d = Path(model_dir)
    h = hashlib.sha256()
    for p in sorted([*d.glob("*.onnx"), d / "reader.json"]):
        if p.is_file():
            h.update(p.name.encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def cache_file(cache: str | Path, kind: str, settings: dict, model: str, photos: str) -> Path:
    """Where the result of mining ``kind`` with ``settings`` from the teacher of digest
    ``model`` on the photos of digest ``photos`` is kept."""
    if kind not in KINDS:
        raise ValueError(f"mine cache: no miner fills {kind!r} (one of {', '.join(KINDS)})")
    key = json.dumps({"kind": kind, "settings": settings, "model": model, "photos": photos,
                      "version": MINE_VERSION}, sort_keys=True, default=str)
    return Path(cache) / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


def _write_npz(path: Path, **arrays: np.ndarray) -> None:
    """``arrays`` to ``path``, whole or not at all (a temporary file renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.part")  # runs at once: one each
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _unreadable(exc: Exception) -> ValueError:
    """A stored file that will not read, as one line."""
    return ValueError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def save(path: Path, kind: str, per_photo: Sequence) -> None:
    """Write one result (a list, one entry per photo) whole or not at all."""
    _write_npz(path, kind=np.array(kind), n=np.array(len(per_photo)),
               **{f"p{i}": np.asarray(v) for i, v in enumerate(per_photo)})


def load(path: Path, kind: str, photos: int) -> list:
    """One stored result, per photo; ``ValueError`` (one line) when it is not a result of
    ``kind`` for ``photos`` photos."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["kind"]) != kind or int(z["n"]) != photos:
                raise ValueError(f"holds {z['kind']} for {int(z['n'])} photos, not {kind} "
                                 f"for {photos}")
            out = [z[f"p{i}"] for i in range(photos)]
    except Exception as exc:  # a cut or foreign file: zip, pickle, key or value errors
        raise _unreadable(exc) from None
    return [int(v) for v in out] if kind == "missed" else out


def count(kind: str, per_photo: Sequence) -> int:
    """How many a result holds, as its miner says it: boxes, or dice (hard, missed), or
    dice with soft targets."""
    if kind in ("hard_dice", "missed"):
        return int(sum(int(np.asarray(v).sum()) for v in per_photo))
    return int(sum(len(v) for v in per_photo))


def mined(cache: str | Path | None, kind: str, settings: dict, model_dir: str | Path,
          real, mine: Callable[[], object], log=print) -> None:
    """Fill ``real.<kind>`` by ``mine()`` (which fills it), or from ``cache`` when the same
    inputs were mined before; with ``cache`` None, just ``mine()``. A new result is
    stored; a stored one that will not read is said in one line and mined again."""
    if cache is None:
        mine()
        return
    path = cache_file(cache, kind, settings, model_digest(model_dir),
                      photos_digest(real.items, real.sets, real.keys))
    if path.is_file():
        try:
            setattr(real, kind, load(path, kind, len(real)))
        except ValueError as exc:
            log(f"mine cache {path}: unreadable ({exc}); mining again")
        else:
            log(f"{kind} of {model_dir} read from the mine cache ({path.name}): "
                f"{count(kind, getattr(real, kind))}")
            return
    mine()
    save(path, kind, getattr(real, kind))
    log(f"{kind} of {model_dir} stored in the mine cache ({path.name})")


def rendered_file(cache: str | Path, n: int, seed: int, upright: bool, cube: bool,
                  size: int) -> Path:
    """Where ``n`` rendered scenes of ``seed`` (and kind) are kept: named by a digest of
    those and of what draws them (``render_dice``'s source, numpy's and OpenCV's
    versions)."""
    import cv2

    from reader_lab import render_dice

    source = Path(render_dice.__file__).read_bytes()
    key = json.dumps({"n": n, "seed": seed, "upright": upright, "cube": cube, "size": size,
                      "renderer": hashlib.sha256(source).hexdigest(),
                      "numpy": np.__version__, "cv2": cv2.__version__,
                      "version": MINE_VERSION}, sort_keys=True)
    return Path(cache) / f"rendered-{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


def save_scenes(path: Path, items: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
                ) -> None:
    """Rendered scenes (image, boxes, faces), whole or not at all."""
    images = np.stack([img for img, _, _ in items]) if items else np.zeros((0, 1, 1, 3),
                                                                              np.uint8)
    counts = np.array([len(b) for _, b, _ in items], np.int64)
    boxes = np.concatenate([b for _, b, _ in items]) if items else np.zeros((0, 4), np.float32)
    faces = np.concatenate([f for _, _, f in items]) if items else np.zeros(0, np.int64)
    _write_npz(path, images=images, counts=counts, boxes=boxes.astype(np.float32),
               faces=faces.astype(np.int64))


def load_scenes(path: Path, n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Stored rendered scenes; ``ValueError`` (one line) when the file is not ``n`` of
    them."""
    try:
        with np.load(path, allow_pickle=False) as z:
            images, counts, boxes, faces = z["images"], z["counts"], z["boxes"], z["faces"]
        if (len(images) != n or len(counts) != n or int(counts.sum()) != len(boxes)
                or len(boxes) != len(faces)):
            raise ValueError(f"holds {len(images)} scenes, not {n}")
    except Exception as exc:  # a cut or foreign file
        raise _unreadable(exc) from None
    ends = np.cumsum(counts)
    return [(images[i], boxes[e - c:e].reshape(-1, 4), faces[e - c:e])
            for i, (c, e) in enumerate(zip(counts, ends, strict=True))]


def scenes(cache: str | Path | None, n: int, seed: int, upright: bool, cube: bool,
           size: int, draw: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]],
           log=print) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``n`` scenes, ``draw(i)`` each, or read from ``cache`` when drawn before (and its
    first scene is the one ``draw(0)`` gives now); with ``cache`` None, drawn."""
    if cache is None:
        return [draw(i) for i in range(n)]
    path = rendered_file(cache, n, seed, upright, cube, size)
    if path.is_file():
        try:
            items = load_scenes(path, n)
            if n and not all(np.array_equal(a, b) for a, b in zip(items[0], draw(0),
                                                                   strict=True)):
                raise ValueError("its first scene is not the one drawn now")
        except ValueError as exc:
            log(f"render cache {path}: unreadable ({exc}); drawing again")
        else:
            log(f"rendered scenes read from the cache ({path.name}): {n}")
            return items
    items = [draw(i) for i in range(n)]
    save_scenes(path, items)
    log(f"rendered scenes stored in the cache ({path.name}): {n}")
    return items
