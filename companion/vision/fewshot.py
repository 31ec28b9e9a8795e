"""Few-shot face reading: teach a die set's faces from a handful of labelled views.

``build_prototypes(manifest, shots=N)`` takes N labelled dice per face from a manifest
(image,face,x0,y0,x1,y1; drawn at random for a seed), embeds each crop with a learned
classifier's embedding and keeps the mean per face: one prototype per face name. The
embedding is the turned classifier's (trained at any rotation) or the
upright classifiers' (trained keeping the photo's up, so an oblique view's top face is
told from its sides): the model's tuning chooses per number of shots on the validation
splits (``reader_lab.tune_fewshot``, kept in its reader.json ``fewshot`` table), and the
profile records it (``embedding``; a profile without it is "turned").
``FewShotReader`` finds dice with the learned detector and gives each the face of the
nearest prototype (cosine similarity); no pip counting is involved, the face names are
just labels (any symbol names work the same way). A third embedding,
"members", keeps each upright classifier's own embedding and prototype: a face's score
is then the mean over those networks of a softmax over the faces of each network's
similarities (``face_scores``), so a die the networks see differently scores low. The
"similarity" thresholds below apply to that score. A die is "unknown" when the best
score is below ``min_similarity`` or the runner-up is within ``min_margin``; the
two are chosen per number of shots on the validation splits (the lab's tuning, kept in
the model's reader.json) and written into each profile, as is the
detector score from which a box is read: the learned reader's own ``det_threshold`` goes
with its faint-box rule, which asks the pip classifier how sure it is, so the few-shot
reader chooses its own. It has a faint-box rule of its own too: a box
scored below that threshold but at least ``det_low_threshold`` is read when its nearest
prototype is at least ``low_similarity`` similar (a faint die read plainly), asking the
prototypes, never the pip classifier.

Stored in a calibration profile directory as ``prototypes.json``, referred to from
``profile.toml``'s optional ``[learned]`` table (profile format 1, extended: older
profiles without it load as before).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from companion.errors import CompanionError
from companion.vision.evaluate import ManifestImage
from companion.vision.learned import (
    EMBED_SIZE,
    EMBEDDINGS,
    TURNED,
    UPRIGHT_EMBEDDINGS,
    LearnedReader,
    is_fraction,
    kept_boxes,
)
from companion.vision.types import UNKNOWN, DieReading

PROTOTYPES_FILE = "prototypes.json"
FEWSHOT_FORMAT = 1
# Unknown below this similarity or within this margin of the runner-up, when the model
# has no tuned table (reader.json ``fewshot``).
DEFAULT_SIMILARITY, DEFAULT_MARGIN = 0.5, 0.05
# The "members" embedding's softmax sharpness: each network's cosine similarities to the
# faces' prototypes times this (10 read validation dice surer-right than 20).
MEMBER_SHARPNESS = 10.0


def face_scores(emb: np.ndarray, protos: np.ndarray, embedding: str) -> np.ndarray:
    """N x F: how like each of the F faces' prototypes each of the N dice is. The
    "turned" and "upright" embeddings: cosine similarity (units' dot product). "members"
    (each network's EMBED_SIZE numbers side by side, prototypes likewise): per network a
    softmax over the faces of ``MEMBER_SHARPNESS`` x its cosine similarities, averaged
    over the networks (a score in 0..1, the faces' scores summing to one)."""
    if embedding != "members":
        return emb @ protos.T
    n, f = len(emb), len(protos)
    if n == 0:
        return np.zeros((0, f), np.float32)
    e = emb.reshape(n, -1, EMBED_SIZE)
    p = protos.reshape(f, -1, EMBED_SIZE)
    sims = MEMBER_SHARPNESS * np.einsum("nmd,fmd->nmf", e, p)
    z = np.exp(sims - sims.max(axis=2, keepdims=True))
    return (z / z.sum(axis=2, keepdims=True)).mean(axis=1)


def prototype(embs: list[np.ndarray], embedding: str) -> np.ndarray:
    """One face's prototype from its shots' embeddings: their mean made a unit (for
    "members", each network's part made a unit)."""
    p = np.mean(embs, axis=0)
    parts = p.reshape(-1, EMBED_SIZE) if embedding == "members" else p.reshape(1, -1)
    norms = np.maximum(1e-6, np.linalg.norm(parts, axis=1, keepdims=True))
    return (parts / norms).reshape(-1)


class FewShotError(CompanionError, ValueError):
    """A few-shot profile that cannot be built or used; one line."""


def build_prototypes(manifest: list[ManifestImage], shots: int, *, seed: int = 0,
                     model_dir=None, reader: LearnedReader | None = None,
                     embedding: str | None = None) -> dict:
    """Prototypes from ``shots`` labelled dice per face of ``manifest``, in ``embedding``
    (default: the one the model's tuned table chooses for that many shots)."""
    from companion.vision.frames import FrameUnreadable, load_image

    if shots < 1:
        raise FewShotError("--shots must be at least 1")
    reader = reader or LearnedReader(model_dir)
    sim, margin, tuned, det, low, low_sim = fewshot_choice(reader, shots)
    embedding = embedding or tuned
    _check_embedding(embedding, reader)
    if embedding != tuned:  # thresholds tuned for another embedding do not carry over
        sim, margin, low, low_sim = DEFAULT_SIMILARITY, DEFAULT_MARGIN, None, None
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
            _, e = reader.classify(img, [manifest[i].dice[j].box], embedding)
            embs.append(e[0])
            used.setdefault(face, []).append(manifest[i].key)
        if embs:
            protos[face] = prototype(embs, embedding).round(6).tolist()
    if len(protos) < 2:
        raise FewShotError("need labelled dice of at least two faces to calibrate")
    networks = ({"upright_files": list(reader.upright_files)}
                if embedding in UPRIGHT_EMBEDDINGS else {})
    networks["fingerprints"] = {name: reader.fingerprints[name]
                                for name in _embedding_files(embedding, reader)}
    return {"format": FEWSHOT_FORMAT, "shots": shots, "seed": seed, "embedding": embedding,
            **networks, "prototypes": protos, "min_similarity": sim, "min_margin": margin,
            "det_threshold": det, "det_low_threshold": low, "low_similarity": low_sim,
            "shot_images": used}


def _check_embedding(embedding: str, reader: LearnedReader) -> None:
    if embedding not in EMBEDDINGS:
        raise FewShotError(f"embedding {embedding!r} is not one of {', '.join(EMBEDDINGS)}")
    if embedding in UPRIGHT_EMBEDDINGS and not reader.has_upright:
        raise FewShotError(f"the {embedding!r} embedding needs a model with an upright "
                           "classifier")


def _embedding_files(embedding: str, reader: LearnedReader) -> list[str]:
    """The classifier files whose embeddings make ``embedding``."""
    return list(reader.upright_files) if embedding in UPRIGHT_EMBEDDINGS else [TURNED]


def _check_networks(data: dict, reader: LearnedReader) -> None:
    """A profile of an embedding the upright networks make must have been made by this
    model's networks (older profiles name none: taken on trust), each
    holding the weights it held then (older profiles keep no
    fingerprints: names only), and its prototypes must be as long as this model's
    embedding."""
    embedding = data.get("embedding", "turned")
    named = data.get("upright_files")
    if embedding in UPRIGHT_EMBEDDINGS and named is not None and named != reader.upright_files:
        raise FewShotError(f"the profile was built with upright classifiers {named}, this "
                           f"model has {reader.upright_files}: build it again "
                           "(companion calibrate --from-manifest)")
    made = data.get("fingerprints") or {}
    for name in _embedding_files(embedding, reader):
        if name in made and made[name] != reader.fingerprints[name]:
            raise FewShotError(f"the profile was built with another {name} (weights "
                               f"{made[name]}, this model's {reader.fingerprints[name]}): "
                               "build it again (companion calibrate --from-manifest)")
    size = reader.embedding_size(embedding)
    length = len(next(iter(data["prototypes"].values())))
    if length != size:
        raise FewShotError(f"the profile's prototypes hold {length} numbers, this model's "
                           f"{embedding!r} embedding {size}: build it again "
                           "(companion calibrate --from-manifest)")


class FewShotChoice(NamedTuple):
    """How a few-shot profile reads (``fewshot_choice``)."""

    min_similarity: float
    min_margin: float
    embedding: str
    det_threshold: float
    # the faint-box rule: a box scored at least det_low_threshold and below
    # det_threshold is read when its nearest prototype is at least low_similarity
    # similar; None and None: no faint boxes
    det_low_threshold: float | None = None
    low_similarity: float | None = None


def fewshot_choice(reader: LearnedReader, shots: int) -> FewShotChoice:
    """How prototypes of ``shots`` views per face read: the model's ``fewshot`` table in
    reader.json (chosen on the validation splits by the lab's tuning; the entry of the
    most shots not above ``shots``), else 0.5, 0.05 and the turned embedding; the
    detector threshold, where the table has none (an older model), is the reader's
    ``det_threshold``; the faint-box rule, where it has none, none."""
    entries = sorted((int(n), v) for n, v in reader.meta["fewshot"].items())
    if not entries:
        return FewShotChoice(DEFAULT_SIMILARITY, DEFAULT_MARGIN, "turned",
                             reader.det_threshold)
    fits = [e for e in entries if e[0] <= shots] or entries[:1]  # fewer: the fewest
    sim, margin, embedding, det, low, low_sim = fits[-1][1]
    return FewShotChoice(float(sim), float(margin), str(embedding),
                         reader.det_threshold if det is None else float(det),
                         None if low is None else float(low),
                         None if low_sim is None else float(low_sim))


def nearest_faces(boxes, probs: np.ndarray, emb: np.ndarray, faces: list[str],
                  protos: np.ndarray, min_similarity: float, min_margin: float,
                  dice_set: str = "pip", keep_nested: bool = True,
                  embedding: str = "turned") -> list[DieReading]:
    """Each box the classifier does not call "not a die", read as the face of the nearest
    prototype (``face_scores`` of ``embedding``), or "unknown" (best score below
    ``min_similarity``, or the runner-up within ``min_margin``); unless ``keep_nested``, a
    box whose centre lies inside a stronger one read is dropped (``kept_boxes``). In the
    boxes' order."""
    out = []
    kept = kept_boxes(boxes, probs, keep_nested=keep_nested)
    scores = face_scores(emb[kept], protos, embedding) if kept else np.zeros((0, 0))
    for i, sims in zip(kept, scores, strict=True):
        b = boxes[i]
        order = np.argsort(-sims)
        best = float(sims[order[0]])
        second = float(sims[order[1]]) if len(order) > 1 else -1.0
        ok = best >= min_similarity and best - second >= min_margin
        face = faces[int(order[0])] if ok else UNKNOWN
        x0, y0, x1, y1 = (int(round(v)) for v in b[:4])
        out.append(DieReading(dice_set, face, max(0.0, best), (x0, y0, x1, y1),
                              ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)))
    return out


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
    embedding = data.get("embedding", "turned")
    if embedding not in EMBEDDINGS:
        raise FewShotError(f"{path}: key 'embedding' must be one of "
                           f"{', '.join(EMBEDDINGS)}, not {embedding!r}")
    named = data.get("upright_files")
    if named is not None and (not isinstance(named, list) or not named
                              or not all(isinstance(f, str) and f for f in named)):
        raise FewShotError(f"{path}: key 'upright_files' must be a list of network file "
                           f"names, not {named!r}")
    prints = data.get("fingerprints")
    if prints is not None and (not isinstance(prints, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and k and v for k, v in prints.items())):
        raise FewShotError(f"{path}: key 'fingerprints' must map network file names to "
                           f"fingerprints, not {prints!r}")
    if embedding == "members" and next(iter(dims)) % EMBED_SIZE:
        raise FewShotError(f"{path}: 'members' prototypes must hold {EMBED_SIZE} numbers "
                           "per network")
    # a similarity no face can reach (cosine similarities and the members' scores are
    # at most 1) would leave every die "unknown" without a word
    for key, low, high in (("min_similarity", -1, 1), ("min_margin", 0, 2)):
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                low <= value <= high):
            raise FewShotError(f"{path}: key {key!r} must be a number from {low} to "
                               f"{high}, not {value!r}")
    for key in ("det_threshold", "det_low_threshold", "low_similarity"):
        value = data.get(key)
        if value is not None and not is_fraction(value):
            raise FewShotError(f"{path}: key {key!r} must be a number above 0, at most 1, "
                               f"not {value!r}")
    low, low_sim = data.get("det_low_threshold"), data.get("low_similarity")
    if (low is None) != (low_sim is None):
        raise FewShotError(f"{path}: keys 'det_low_threshold' and 'low_similarity' go "
                           "together (the faint-box rule), or neither")
    det = data.get("det_threshold")
    if low is not None and det is not None and low > det:
        raise FewShotError(f"{path}: key 'det_low_threshold' ({low!r}) must be at most "
                           f"'det_threshold' ({det!r})")
    return data


class FewShotReader:
    """Learned detector + nearest face prototype."""

    def __init__(self, data: dict, *, model_dir=None, reader: LearnedReader | None = None,
                 dice_set: str = "pip") -> None:
        self.reader = reader or LearnedReader(model_dir)
        self.faces = list(data["prototypes"])
        self.protos = np.array([data["prototypes"][f] for f in self.faces], np.float32)
        self.min_similarity = float(data.get("min_similarity", DEFAULT_SIMILARITY))
        self.min_margin = float(data.get("min_margin", DEFAULT_MARGIN))
        self.dice_set = dice_set
        # older profiles without an embedding hold the turned classifier's embedding
        self.embedding = data.get("embedding", "turned")
        _check_embedding(self.embedding, self.reader)
        _check_networks(data, self.reader)
        # boxes are read from this detector score: the profile's (when it names one), else
        # the model's choice for as many shots, else its own threshold; the faint-box rule
        # goes with it (a profile that names a threshold but no rule: none)
        det = data.get("det_threshold")
        low, low_sim = data.get("det_low_threshold"), data.get("low_similarity")
        shots = data.get("shots")
        if det is None and isinstance(shots, int) and not isinstance(shots, bool):
            choice = fewshot_choice(self.reader, shots)
            det, low, low_sim = (choice.det_threshold, choice.det_low_threshold,
                                 choice.low_similarity)
        self.det_threshold = float(self.reader.det_threshold if det is None else det)
        self.det_low_threshold = None if low is None else min(float(low), self.det_threshold)
        self.low_similarity = None if low_sim is None else float(low_sim)

    def __call__(self, image: np.ndarray) -> list[DieReading]:
        # a threshold of its own: the faint-box rule asks the pip classifier's face
        # confidence, which says nothing of a symbol die; this one asks the prototypes
        faint = self.det_low_threshold is not None and self.low_similarity is not None
        boxes = self.reader.detect(image, self.det_low_threshold if faint
                                   else self.det_threshold)
        probs, emb = self.reader.classify(image, boxes, self.embedding)
        if faint and len(boxes):
            top = face_scores(emb, self.protos, self.embedding).max(axis=1)
            keep = faint_kept(boxes, top, self.det_threshold, self.det_low_threshold,
                              self.low_similarity)
            boxes, probs, emb = [boxes[i] for i in keep], probs[keep], emb[keep]
        return nearest_faces(boxes, probs, emb, self.faces, self.protos,
                             self.min_similarity, self.min_margin, self.dice_set,
                             keep_nested=self.reader.keep_nested, embedding=self.embedding)


def faint_kept(boxes, top: np.ndarray, det: float, low: float | None,
               low_similarity: float | None) -> list[int]:
    """Indices of the boxes scored at least ``det``, or at least ``low`` with their
    nearest prototype at least ``low_similarity`` similar (``top``: each box's best
    similarity): the few-shot faint-box rule (``low`` None: no faint boxes)."""
    return [i for i, b in enumerate(boxes)
            if b[4] >= det or (low is not None and b[4] >= low
                               and top[i] >= low_similarity)]
