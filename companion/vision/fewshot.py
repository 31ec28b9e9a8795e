"""Few-shot face reading: teach a die set's faces from a handful of labelled views.

``build_prototypes(manifest, shots=N)`` takes N labelled dice per face from a manifest
(image,face,x0,y0,x1,y1; drawn at random for a seed), embeds each crop with the learned
classifier's embedding and keeps the mean per face: one prototype per face name.
``FewShotReader`` finds dice with the learned detector and gives each the face of the
nearest prototype (cosine similarity); no pip counting is involved, the face names are
just labels (any symbol names work the same way). A die is "unknown" when the best
similarity is below ``min_similarity`` or the runner-up is within ``min_margin``.

Stored in a calibration profile directory as ``prototypes.json``, referred to from
``profile.toml``'s optional ``[learned]`` table (profile format 1, extended: older
profiles without it load as before).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from companion.vision.evaluate import ManifestImage
from companion.vision.learned import LearnedReader
from companion.vision.types import UNKNOWN, DieReading

PROTOTYPES_FILE = "prototypes.json"
FEWSHOT_FORMAT = 1


class FewShotError(ValueError):
    """A few-shot profile that cannot be built or used; one line."""


def build_prototypes(manifest: list[ManifestImage], shots: int, *, seed: int = 0,
                     model_dir=None, reader: LearnedReader | None = None) -> dict:
    """Prototypes from ``shots`` labelled dice per face of ``manifest``."""
    from companion.vision.frames import FrameUnreadable, load_image

    if shots < 1:
        raise FewShotError("--shots must be at least 1")
    reader = reader or LearnedReader(model_dir)
    by_face: dict[str, list[tuple[int, int]]] = {}
    for i, m in enumerate(manifest):
        for j, d in enumerate(m.dice):
            by_face.setdefault(d.face, []).append((i, j))
    rng = np.random.default_rng(seed)
    chosen: dict[str, list[tuple[int, int]]] = {}
    for face, refs in sorted(by_face.items()):
        order = rng.permutation(len(refs))
        chosen[face] = [refs[k] for k in order]
    protos: dict[str, list[float]] = {}
    used: dict[str, list[str]] = {}
    cache: dict[int, np.ndarray | None] = {}
    for face, refs in chosen.items():
        embs = []
        for i, j in refs:
            if len(embs) == shots:
                break
            if i not in cache:
                try:
                    cache[i] = load_image(manifest[i].path)
                except FrameUnreadable:
                    cache[i] = None
            img = cache[i]
            if img is None:
                continue
            _, e = reader.classify(img, [manifest[i].dice[j].box])
            embs.append(e[0])
            used.setdefault(face, []).append(manifest[i].key)
        if embs:
            p = np.mean(embs, axis=0)
            protos[face] = (p / max(1e-6, float(np.linalg.norm(p)))).round(6).tolist()
    if len(protos) < 2:
        raise FewShotError("need labelled dice of at least two faces to calibrate")
    return {"format": FEWSHOT_FORMAT, "shots": shots, "seed": seed, "prototypes": protos,
            "min_similarity": 0.5, "min_margin": 0.05, "shot_images": used}


def save_fewshot(data: dict, directory: str | Path, name: str | None = None) -> Path:
    """Write prototypes.json and a profile.toml that points at it."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / PROTOTYPES_FILE).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    toml = d / "profile.toml"
    if toml.exists():
        text = toml.read_text(encoding="utf-8")
        if "[learned]" not in text:  # a camera profile: add the prototypes beside it
            toml.write_text(text.rstrip("\n") + f"\n\n[learned]\nprototypes = "
                            f"\"{PROTOTYPES_FILE}\"\n", encoding="utf-8")
    else:
        toml.write_text(
            "# vault-companion calibration profile (format documented in "
            "calibration/README.md)\n"
            f"format = 1\nname = {json.dumps(name or d.name)}\n\n"
            f"[learned]\nprototypes = \"{PROTOTYPES_FILE}\"\n", encoding="utf-8")
    return d / PROTOTYPES_FILE


def load_fewshot(directory: str | Path) -> dict:
    d = Path(directory)
    path = d / PROTOTYPES_FILE if d.is_dir() else d
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FewShotError(f"{path}: no few-shot prototypes (run companion calibrate "
                           "--from-manifest)") from None
    except (OSError, ValueError) as exc:
        raise FewShotError(f"{path}: cannot read: {exc}") from None
    protos = data.get("prototypes") if isinstance(data, dict) else None
    if not isinstance(protos, dict) or len(protos) < 2:
        raise FewShotError(f"{path}: key 'prototypes' needs at least two faces")
    dims = {len(v) for v in protos.values() if isinstance(v, list)}
    if len(dims) != 1 or not all(isinstance(v, list) for v in protos.values()):
        raise FewShotError(f"{path}: prototypes must be lists of one length")
    if not all(math.isfinite(x) for v in protos.values() for x in v):
        raise FewShotError(f"{path}: prototypes hold a non-number")
    return data


class FewShotReader:
    """Learned detector + nearest face prototype."""

    def __init__(self, data: dict, *, model_dir=None, reader: LearnedReader | None = None,
                 dice_set: str = "pip") -> None:
        self.reader = reader or LearnedReader(model_dir)
        self.faces = list(data["prototypes"])
        self.protos = np.array([data["prototypes"][f] for f in self.faces], np.float32)
        self.min_similarity = float(data.get("min_similarity", 0.5))
        self.min_margin = float(data.get("min_margin", 0.05))
        self.dice_set = dice_set

    def __call__(self, image: np.ndarray) -> list[DieReading]:
        boxes = self.reader.detect(image)
        probs, emb = self.reader.classify(image, boxes)
        out = []
        for b, p, e in zip(boxes, probs, emb, strict=True):
            if p[-1] > p[:-1].max():
                continue  # not a die
            sims = self.protos @ e
            order = np.argsort(-sims)
            best = float(sims[order[0]])
            second = float(sims[order[1]]) if len(order) > 1 else -1.0
            ok = best >= self.min_similarity and best - second >= self.min_margin
            face = self.faces[int(order[0])] if ok else UNKNOWN
            x0, y0, x1, y1 = (int(round(v)) for v in b[:4])
            out.append(DieReading(self.dice_set, face, max(0.0, best), (x0, y0, x1, y1),
                                  ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)))
        return out
