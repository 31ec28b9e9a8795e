"""Scoring pip-dice readings against a labelled photo manifest. No OpenCV at import:
``evaluate_manifest`` loads the photos (and the default reader) when it runs.

Manifest format (see ../shared/datasets/dice-photos/README.md): a CSV with the header
``image,face,x0,y0,x1,y1`` and one row per labelled die; ``image`` is relative to the
folder holding the CSV (an absolute path is used as is).

Matching: a predicted die matches a labelled die when the prediction's centre lies
inside the labelled box (edges included). Matching is one to one, nearest first: every
(prediction, label) pair that qualifies is sorted by the distance from the prediction's
centre to the box's centre, and pairs are taken in that order while both are free.

Every labelled die ends up in exactly one bucket: ``correct`` (matched, right face),
``wrong`` (matched, a face given and it is not the labelled one: a confidently wrong
reading), ``unknown`` (matched, read as "unknown") or ``missed`` (not matched).
"""

from __future__ import annotations

import csv
import math
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from companion.errors import CompanionError
from companion.vision.types import UNKNOWN, DieReading, box_side

FACES = ("1", "2", "3", "4", "5", "6")
MANIFEST_HEADER = ("image", "face", "x0", "y0", "x1", "y1")
# a Roboflow export's file name: the source photo's name, its suffix, then ".rf.<hash>"
_RF = re.compile(r"^(.*?)_(?:jpg|jpeg|png)\.rf\.[0-9a-f]+\.\w+$", re.IGNORECASE)


class ManifestError(CompanionError, ValueError):
    """The manifest is missing or malformed; the message is one line naming the problem."""


@dataclass(frozen=True)
class LabelledDie:
    face: str
    box: tuple[float, float, float, float]

    @property
    def side(self) -> float:
        """The box's longer edge in pixels: how large the die looks."""
        return box_side(self.box)


@dataclass(frozen=True)
class PredictedDie:
    face: str
    box: tuple[float, float, float, float]
    centre: tuple[float, float]
    confidence: float


@dataclass(frozen=True)
class ManifestImage:
    """One photo of the manifest: ``key`` is the path as written, ``path`` resolved."""

    key: str
    path: Path
    dice: tuple[LabelledDie, ...]


@dataclass
class ImageScore:
    labelled: int = 0
    predicted: int = 0
    matched: int = 0
    correct: int = 0
    wrong: int = 0
    unknown: int = 0
    unmatched_unknown: int = 0
    # (true face, predicted face) for every matched die.
    pairs: list[tuple[str, str]] = field(default_factory=list)


def load_manifest(csv_path: str | Path) -> list[ManifestImage]:
    """Read a manifest; images keep their first-seen order. Raises ManifestError."""
    csv_path = Path(csv_path)
    try:
        text = csv_path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ManifestError(f"manifest not found: {csv_path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read manifest {csv_path}: {exc}") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise ManifestError(f"{csv_path}: empty manifest (expected header image,face,x0,y0,x1,y1)")
    header = tuple(cell.strip().lower() for cell in rows[0])
    if header != MANIFEST_HEADER:
        raise ManifestError(
            f"{csv_path}:1: bad header {','.join(rows[0])!r} (expected image,face,x0,y0,x1,y1)"
        )
    base = csv_path.parent
    order: list[str] = []
    dice: dict[str, list[LabelledDie]] = {}
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 6:
            raise ManifestError(f"{csv_path}:{lineno}: expected 6 fields, got {len(row)}")
        image, face = row[0].strip(), row[1].strip()
        if not image:
            raise ManifestError(f"{csv_path}:{lineno}: empty image path")
        if face not in FACES:
            raise ManifestError(f"{csv_path}:{lineno}: face {face!r} is not 1..6")
        try:
            x0, y0, x1, y1 = (float(cell) for cell in row[2:])
        except ValueError:
            raise ManifestError(f"{csv_path}:{lineno}: box {row[2:]} is not four numbers") from None
        if not all(math.isfinite(v) for v in (x0, y0, x1, y1)) or x1 < x0 or y1 < y0:
            raise ManifestError(f"{csv_path}:{lineno}: box {row[2:]} is not x0<=x1, y0<=y1")
        if image not in dice:
            order.append(image)
            dice[image] = []
        dice[image].append(LabelledDie(face=face, box=(x0, y0, x1, y1)))
    if not order:
        raise ManifestError(f"{csv_path}: no labelled dice")
    return [ManifestImage(key=k, path=base / k, dice=tuple(dice[k])) for k in order]


def source_of(key: str) -> str:
    """The source photo of a Roboflow export file name (augmented copies share it)."""
    name = Path(key).name
    m = _RF.match(name)
    return m.group(1) if m else Path(name).stem


def _inside(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    x, y = point
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def match(
    predictions: Sequence[PredictedDie], labels: Sequence[LabelledDie]
) -> list[tuple[int, int]]:
    """One-to-one, nearest-first matching; returns (prediction index, label index) pairs."""
    candidates = []
    for pi, pred in enumerate(predictions):
        for li, lab in enumerate(labels):
            if _inside(pred.centre, lab.box):
                bx = (lab.box[0] + lab.box[2]) / 2
                by = (lab.box[1] + lab.box[3]) / 2
                dist = math.hypot(pred.centre[0] - bx, pred.centre[1] - by)
                candidates.append((dist, pi, li))
    candidates.sort()
    used_p: set[int] = set()
    used_l: set[int] = set()
    pairs = []
    for _, pi, li in candidates:
        if pi in used_p or li in used_l:
            continue
        used_p.add(pi)
        used_l.add(li)
        pairs.append((pi, li))
    return sorted(pairs)


def matched_readings(items: Sequence[ManifestImage],
                     predictions: Iterable[tuple[str, PredictedDie]]
                     ) -> list[tuple[ManifestImage, int, PredictedDie | None]]:
    """(photo, labelled die's index, the prediction matched to it or None) for every
    labelled die of ``items``, ``predictions`` being (photo key, prediction) pairs as
    ``companion eval`` keeps them, matched as ``score_image`` matches them. Each photo's
    matched dice come first, in their predictions' order, then the unmatched ones."""
    by_photo: dict[str, list[PredictedDie]] = {}
    for key, pred in predictions:
        by_photo.setdefault(key, []).append(pred)
    out: list[tuple[ManifestImage, int, PredictedDie | None]] = []
    for item in items:
        preds = by_photo.get(item.key, [])
        pairs = match(preds, item.dice)
        found = {li for _, li in pairs}
        out += [(item, li, preds[pi]) for pi, li in pairs]
        out += [(item, li, None) for li in range(len(item.dice)) if li not in found]
    return out


def confidently_wrong(items: Sequence[ManifestImage],
                      predictions: Iterable[tuple[str, PredictedDie]]
                      ) -> list[tuple[ManifestImage, int, PredictedDie]]:
    """``matched_readings``' dice whose reading names a face, not the label: the
    ``wrong`` bucket of ``score_image``, die by die."""
    return [(item, li, pred) for item, li, pred in matched_readings(items, predictions)
            if pred is not None and pred.face not in (item.dice[li].face, UNKNOWN)]


def predicted_dice(readings: Iterable[DieReading]) -> list[PredictedDie]:
    """A reader's DieReadings as the predictions ``score_image`` scores."""
    return [PredictedDie(face=r.face, box=tuple(r.box), centre=tuple(r.centre),
                         confidence=r.confidence) for r in readings]


def score_image(
    predictions: Sequence[PredictedDie], labels: Sequence[LabelledDie]
) -> ImageScore:
    score = ImageScore(labelled=len(labels), predicted=len(predictions))
    pairs = match(predictions, labels)
    matched_preds = {pi for pi, _ in pairs}
    for pi, li in pairs:
        got, want = predictions[pi].face, labels[li].face
        score.matched += 1
        score.pairs.append((want, got))
        if got == want:
            score.correct += 1
        elif got == UNKNOWN:
            score.unknown += 1
        else:
            score.wrong += 1
    score.unmatched_unknown = sum(
        1 for i, p in enumerate(predictions) if i not in matched_preds and p.face == UNKNOWN
    )
    return score


@dataclass
class Summary:
    images: int
    labelled: int
    predicted: int
    matched: int
    correct: int
    wrong: int
    unknown: int
    unmatched_unknown: int
    confusion: list[list[int]]  # 6x6, rows = labelled face 1..6, columns = read face 1..6
    unknown_by_face: list[int]  # matched dice read "unknown", per labelled face
    missed_by_face: list[int]
    ms_per_image_median: float

    @property
    def precision(self) -> float:
        return self.matched / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.labelled if self.labelled else 0.0

    @property
    def face_accuracy(self) -> float:
        return self.correct / self.matched if self.matched else 0.0

    @property
    def end_to_end(self) -> float:
        return self.correct / self.labelled if self.labelled else 0.0

    @property
    def unknown_share(self) -> float:
        """Labelled dice that were found but read as "unknown", over all labelled dice."""
        return self.unknown / self.labelled if self.labelled else 0.0

    @property
    def wrong_share(self) -> float:
        return self.wrong / self.labelled if self.labelled else 0.0

    def as_json_dict(self) -> dict[str, float | int]:
        return {
            "images": self.images,
            "labelled": self.labelled,
            "predicted": self.predicted,
            "matched": self.matched,
            "precision": round(self.precision, 6),
            "recall": round(self.recall, 6),
            "face_accuracy": round(self.face_accuracy, 6),
            "end_to_end": round(self.end_to_end, 6),
            "unknown": round(self.unknown_share, 6),
            "ms_per_image_median": round(self.ms_per_image_median, 3),
            "wrong_confident": round(self.wrong_share, 6),
            "missed": self.labelled - self.matched,
        }


def summarise(
    scores: Iterable[ImageScore], ms_per_image: Sequence[float], labelled_faces: Iterable[str] = ()
) -> Summary:
    """Add up per-image scores. ``labelled_faces`` (every labelled face) fills missed counts."""
    scores = list(scores)
    confusion = [[0] * 6 for _ in range(6)]
    unknown_by_face = [0] * 6
    matched_by_face = [0] * 6
    for s in scores:
        for want, got in s.pairs:
            wi = FACES.index(want)
            matched_by_face[wi] += 1
            if got in FACES:
                confusion[wi][FACES.index(got)] += 1
            else:
                unknown_by_face[wi] += 1
    labelled_by_face = [0] * 6
    for face in labelled_faces:
        labelled_by_face[FACES.index(face)] += 1
    missed_by_face = [max(0, n - m) for n, m in zip(labelled_by_face, matched_by_face, strict=True)]
    return Summary(
        images=len(scores),
        labelled=sum(s.labelled for s in scores),
        predicted=sum(s.predicted for s in scores),
        matched=sum(s.matched for s in scores),
        correct=sum(s.correct for s in scores),
        wrong=sum(s.wrong for s in scores),
        unknown=sum(s.unknown for s in scores),
        unmatched_unknown=sum(s.unmatched_unknown for s in scores),
        confusion=confusion,
        unknown_by_face=unknown_by_face,
        missed_by_face=missed_by_face,
        ms_per_image_median=statistics.median(ms_per_image) if ms_per_image else 0.0,
    )


def format_report(summary: Summary, title: str = "") -> str:
    """The human-readable report `companion eval` prints."""
    s = summary
    lines = []
    if title:
        lines.append(title)
    lines += [
        f"images            {s.images}",
        f"labelled dice     {s.labelled}",
        f"predicted dice    {s.predicted}",
        f"matched           {s.matched}",
        f"precision         {s.precision:.2%}",
        f"recall            {s.recall:.2%}",
        f"face accuracy     {s.face_accuracy:.2%}  (correct faces / matched dice)",
        f"end-to-end        {s.end_to_end:.2%}  (correct faces / labelled dice)",
        f"read as unknown   {s.unknown_share:.2%}  ({s.unknown} matched dice; "
        f"{s.unmatched_unknown} more unknowns matched no label)",
        f"confidently wrong {s.wrong_share:.2%}  ({s.wrong} matched dice read as a wrong face)",
        f"missed            {s.labelled - s.matched} labelled dice not found",
        f"median ms/image   {s.ms_per_image_median:.2f}  (reading only, decoding excluded)",
        "",
        "confusion (rows: labelled face, columns: read face)",
        "        " + "".join(f"{f:>6}" for f in FACES) + f"{'unk':>6}{'miss':>6}",
    ]
    for i, face in enumerate(FACES):
        cells = "".join(f"{n:>6}" for n in s.confusion[i])
        lines.append(
            f"   {face}    {cells}{s.unknown_by_face[i]:>6}{s.missed_by_face[i]:>6}"
        )
    return "\n".join(lines)



@dataclass
class EvalResult:
    """What ``evaluate_manifest`` read: the figures, the photos it could not read, every
    predicted die (with its photo's manifest key) and each read photo's score."""

    summary: Summary
    unreadable: list[str]
    predictions: list[tuple[str, PredictedDie]]
    # each read photo's manifest key and score, in order (``intervals.bootstrap_intervals``)
    image_scores: list[tuple[str, ImageScore]] = field(default_factory=list)


def evaluate_manifest(
    manifest: list[ManifestImage],
    *,
    reader: Callable | None = None,
    on_error: Callable[[str], None] | None = None,
) -> EvalResult:
    """Run ``reader`` (default: read_pip_dice) on every photo of a loaded manifest, each
    photo alone, as the camera would hand it over; a photo that cannot be read is left out
    (its key in ``unreadable``) and ``on_error`` gets its one-line error."""
    from companion.vision.frames import FrameUnreadable, load_image

    if reader is None:
        from companion.vision.pips import read_pip_dice

        reader = read_pip_dice
    scores, times, unreadable, faces, keys = [], [], [], [], []
    predictions: list[tuple[str, PredictedDie]] = []
    for item in manifest:
        try:
            image = load_image(item.path)
        except FrameUnreadable as exc:
            unreadable.append(item.key)
            if on_error is not None:
                on_error(str(exc))
            continue
        start = time.perf_counter()
        readings = reader(image)
        times.append((time.perf_counter() - start) * 1000.0)
        preds = predicted_dice(readings)
        predictions.extend((item.key, p) for p in preds)
        scores.append(score_image(preds, item.dice))
        keys.append(item.key)
        faces.extend(d.face for d in item.dice)
    return EvalResult(summarise(scores, times, faces), unreadable, predictions,
                      list(zip(keys, scores, strict=True)))


def source_intervals(result: EvalResult) -> tuple[int, dict]:
    """How many source photos the read photos come from (a Roboflow export's augmented
    copies share one: ``source_of``) and the 95% intervals of the figures, resampling
    them (``intervals.bootstrap_intervals``)."""
    from companion.vision.intervals import bootstrap_intervals

    groups = [source_of(key) for key, _ in result.image_scores]
    return len(set(groups)), bootstrap_intervals([s for _, s in result.image_scores], groups)
