"""Calibration: teach the reader one table's dice.

The steps `companion calibrate` walks through, as plain functions:

    print_mat(out_dir, dpi=150) -> [png, pdf]        the A3 mat with markers and seat zones
    check_markers(frame) -> MatView                   CalibrationError naming missing ids
    calibrate(table, data, name, ...) -> CalibrationResult
        1. a frame of the bare mat: all four markers seen, mat colour sampled;
        2. for each set, for each face its dice can show: the die lying alone on the
           mat, face up and upright (glyph towards the mat's top edge), ``samples``
           times; the set's body colour and the face's template are averaged over them;
        3. a frame with every die, read back with the new profile: the preview.
    The profile's own check (fresh rolls read back) follows: ``calibrate_check``.

Where frames come from is a ``CalibrationTable``: ``SyntheticTable`` answers each step
by rendering it (the simulated person), ``LiveTable`` prompts a person and grabs a frame
from any frame source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from companion.errors import CompanionError
from companion.vision.dice_data import DiceData
from companion.vision.mat_spec import DEFAULT_MAT, MatSpec
from companion.vision.profile import (
    DEFAULT_MIN_MARGIN,
    DEFAULT_MIN_SCORE,
    DEFAULT_TEMPLATE_PX,
    DEFAULT_TEMPLATE_SPAN,
    Profile,
)
from companion.vision.symbols import (
    SEARCH_PX,
    DieCandidate,
    crop_die,
    find_dice,
    foreground_mask,
    read_symbol_dice,
    relative_body_colour,
)
from companion.vision.synthetic import DieSpec, all_dice_specs, draw_mat, render_scene
from companion.vision.types import UNKNOWN, DieReading

MM_PER_INCH = 25.4


class CalibrationError(CompanionError, RuntimeError):
    """Calibration cannot go on; the message says what to fix, in one line."""


@dataclass(frozen=True)
class Step:
    # "empty" (bare mat), "face" (one die), "all" (every die, for the preview), "check"
    # (every die showing the faces in ``dice``: round ``sample`` of the profile's check)
    kind: str
    dice_set: str = ""
    face: str = ""
    sample: int = 0
    dice: tuple[tuple[str, str, str], ...] = ()  # "check": (set, die kind, face) per die

    def instruction(self) -> str:
        if self.kind == "empty":
            return "Clear the mat so that only the four corner markers show."
        if self.kind == "face":
            return (f"Put one {self.dice_set} die alone on the mat showing '{self.face}', "
                    f"upright (top of the symbol towards the mat's top edge)"
                    + (f", moved a little (view {self.sample + 1})" if self.sample else "")
                    + ".")
        if self.kind == "check":
            faces: dict[str, list[str]] = {}
            for set_name, _kind, face in self.dice:
                faces.setdefault(set_name, []).append(face)
            return (f"Check, roll {self.sample + 1}: lay the dice anywhere on the mat, at "
                    "any angle, showing "
                    + "; ".join(f"{s}: {', '.join(f)}" for s, f in faces.items()) + ".")
        return "Roll every die onto the mat for the preview."


class CalibrationTable(Protocol):
    def frame(self, step: Step) -> np.ndarray: ...


class SyntheticTable:
    """The simulated person at the synthetic table: every step is rendered as asked."""

    def __init__(self, seed: int = 0, data: DiceData | None = None, width: int = 1280,
                 height: int = 720, perspective: bool | float = True) -> None:
        self.seed = seed
        self.data = data
        self.width, self.height, self.perspective = width, height, perspective
        self.count = 0
        self.last_truth: Any = None

    def _kind_for(self, set_name: str, face: str) -> str:
        assert self.data is not None
        for kind in self.data.sets[set_name].dice:
            if face in self.data.kinds[kind]:
                return kind
        raise CalibrationError(f"no {set_name} die shows face {face!r}")

    def frame(self, step: Step) -> np.ndarray:
        rng = np.random.default_rng([self.seed, self.count])
        self.count += 1
        if step.kind == "empty":
            dice: list[DieSpec] = []
        elif step.kind == "face":
            x = float(rng.uniform(120, 300))
            y = float(rng.uniform(100, 200))
            ang = float(rng.uniform(-10, 10)) % 360
            dice = [DieSpec(step.dice_set, self._kind_for(step.dice_set, step.face), step.face,
                            (x, y), ang)]
        elif step.kind == "check":  # the faces asked; places, angles and light at random
            dice = [DieSpec(set_name, kind, face) for set_name, kind, face in step.dice]
        else:
            dice = all_dice_specs(self.data)
        img, truth = render_scene(rng, dice=dice, width=self.width, height=self.height,
                                  perspective=self.perspective, data=self.data)
        self.last_truth = truth
        return img


class LiveTable:
    """A person at a real table: prints each instruction, waits for Enter, then grabs
    the newest frame from a frame source (``companion.vision.frames``)."""

    def __init__(self, source: Any, ask: Callable[[str], str] = input,
                 say: Callable[[str], None] = print, flush: int | None = None) -> None:
        self.source = source
        self.ask, self.say = ask, say
        # A camera buffers stale frames; a folder of photos holds one photo per step.
        if flush is None:
            flush = 1 if type(source).__name__ == "FolderSource" else 5
        self.flush = flush

    def frame(self, step: Step) -> np.ndarray:
        self.ask(f"{step.instruction()} Press Enter when ready. ")
        from companion.vision.frames import CameraGone, FrameUnreadable, read_checked

        frame = None
        for _ in range(self.flush):  # drop stale buffered frames
            try:  # any failure of the camera is a camera failure, said in one line
                got = read_checked(self.source)
            except FrameUnreadable:
                continue
            except CameraGone as exc:
                raise CalibrationError(f"camera gone: {exc}") from exc
            if got is not None:
                frame = got
        if frame is None:
            raise CalibrationError(f"{getattr(self.source, 'description', 'camera')}: "
                                   "no frame came from the camera")
        return getattr(frame, "image", frame)


@dataclass
class CalibrationResult:
    profile: Profile
    preview: np.ndarray
    preview_readings: list[DieReading] = field(default_factory=list)
    preview_correct: int | None = None  # synthetic only: faces matching the truth
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the mat


def print_mat(out_dir: str | Path, spec: MatSpec = DEFAULT_MAT, dpi: float = 150.0,
              pdf: bool = True) -> list[Path]:
    """Write mat_a3.png (and mat_a3.pdf when Pillow can) at ``dpi``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    img = draw_mat(spec, px_per_mm=dpi / MM_PER_INCH)
    paths = []
    png = out / "mat_a3.png"
    try:
        from PIL import Image

        pil = Image.fromarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
        pil.save(png, dpi=(dpi, dpi))
        paths.append(png)
        if pdf:
            pdf_path = out / "mat_a3.pdf"
            pil.save(pdf_path, "PDF", resolution=dpi)
            paths.append(pdf_path)
    except ImportError:
        if not cv2.imwrite(str(png), img):
            raise CalibrationError(f"{png}: could not write the mat image") from None
        paths.append(png)
    return paths


def check_markers(frame: np.ndarray, spec: MatSpec = DEFAULT_MAT) -> Any:
    """The MatView when the camera sees all four markers, else CalibrationError."""
    from companion.vision.mat import detect_markers, fit_mat

    if frame is None or frame.ndim != 3:
        raise CalibrationError("the camera gave no usable colour frame")
    found = detect_markers(frame, spec)
    missing = [m for m in spec.marker_ids if m not in found]
    if missing:
        names = {spec.marker_ids[0]: "top-left", spec.marker_ids[1]: "top-right",
                 spec.marker_ids[2]: "bottom-right", spec.marker_ids[3]: "bottom-left"}
        raise CalibrationError(
            "the camera does not see marker(s) "
            + ", ".join(f"{m} ({names[m]})" for m in missing)
            + ": move the camera or the mat so all four corners are in view"
        )
    view = fit_mat(found, spec, min_markers=4)
    if view is None:
        raise CalibrationError("the markers do not fit the mat's shape: is the mat flat?")
    return view


def sample_mat_colour(view_img: np.ndarray, spec: MatSpec = DEFAULT_MAT) -> tuple[float, ...]:
    """Median BGR of the bare mat (markers and their quiet zones left out)."""
    mask = np.ones(view_img.shape[:2], bool)
    ppm = spec.px_per_mm
    for corners in spec.marker_corners_mm().values():
        (x0, y0), _, (x1, y1), _ = corners
        q = 6.0
        mask[max(0, int((y0 - q) * ppm)):int((y1 + q) * ppm),
             max(0, int((x0 - q) * ppm)):int((x1 + q) * ppm)] = False
    px = view_img[mask]
    return tuple(float(c) for c in np.median(px, axis=0))


# ---------------------------------------------------------------- teaching


def _norm(a: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64) - a.mean()
    return a / max(float(np.linalg.norm(a)), 1e-6)


def _align(reference: np.ndarray, patch: np.ndarray, t: int, margin: int) -> np.ndarray:
    """The t x t window of ``patch`` (any quarter turn) that best matches ``reference``."""
    ref = _norm(reference)
    best, best_win = -2.0, patch[margin:margin + t, margin:margin + t]
    for k in range(4):
        p = np.rot90(patch, k)
        for dy in range(2 * margin + 1):
            for dx in range(2 * margin + 1):
                win = p[dy:dy + t, dx:dx + t]
                s = float((_norm(win) * ref).sum())
                if s > best:
                    best, best_win = s, win
    return best_win


def _one_die(view_img: np.ndarray, provisional: Profile, spec: MatSpec) -> DieCandidate:
    fg = foreground_mask(view_img, provisional, spec)
    cands = find_dice(view_img, provisional, spec, fg)
    if len(cands) != 1:
        raise CalibrationError(
            f"expected exactly one die on the mat, found {len(cands)}"
            + (": clear the mat but for the one die" if cands else
               ": is the die on the mat and in good light?")
        )
    c = cands[0]
    ang = c.angle if c.angle < 45.0 else c.angle - 90.0  # upright: nearest to 0
    return DieCandidate(c.centre, ang)


def calibrate(
    table: CalibrationTable,
    data: DiceData,
    name: str,
    *,
    samples: int = 3,
    spec: MatSpec = DEFAULT_MAT,
    log: Callable[[str], None] = print,
    confirm: Callable[[str], bool] = lambda _q: True,
    retries: int = 3,
    game: str = "vault_assault",
    dice_override: dict[str, Any] | None = None,
) -> CalibrationResult:
    """Run the calibration steps against ``table``; nothing is written here."""
    t, span, margin = DEFAULT_TEMPLATE_PX, DEFAULT_TEMPLATE_SPAN, SEARCH_PX

    def view_of(step: Step) -> np.ndarray:
        frame = table.frame(step)
        return check_markers(frame, spec).warp(frame)

    empty = view_of(Step("empty"))
    mat_colour = sample_mat_colour(empty, spec)
    log(f"mat: all four markers seen; mat colour BGR {tuple(round(c) for c in mat_colour)}")
    provisional = Profile(name=name, dice=data, mat_colour=mat_colour, set_colours={},
                          templates={}, template_px=t, template_span=span)
    stray = find_dice(empty, provisional, spec)
    if stray:
        raise CalibrationError(f"the bare mat shows {len(stray)} object(s) that look like "
                               "dice: clear the mat (or light it more evenly)")

    set_colours: dict[str, tuple[float, float, float]] = {}
    templates: dict[tuple[str, str], np.ndarray] = {}
    for set_name in data.sets:
        ratios = []
        for face in data.set_faces(set_name):
            while True:
                acc: list[np.ndarray] = []
                for k in range(samples):
                    step = Step("face", set_name, face, k)
                    for attempt in range(retries):
                        view_img = view_of(step)
                        try:
                            cand = _one_die(view_img, provisional, spec)
                            break
                        except CalibrationError as exc:
                            if attempt == retries - 1:
                                raise CalibrationError(f"{set_name} {face}: {exc}") from None
                            log(f"{set_name} {face}: {exc}; again")
                    ratios.append(relative_body_colour(view_img, cand, provisional, spec))
                    gray = cv2.cvtColor(view_img, cv2.COLOR_BGR2GRAY)
                    patch = crop_die(gray, cand.centre, cand.angle, provisional, spec, margin)
                    if not acc:
                        acc.append(patch[margin:margin + t, margin:margin + t].astype(np.float64))
                    else:
                        ref = np.mean(acc, axis=0)
                        acc.append(_align(ref, patch, t, margin).astype(np.float64))
                mean = np.mean(acc, axis=0)
                lo, hi = float(mean.min()), float(mean.max())
                if hi - lo < 8:
                    raise CalibrationError(f"{set_name} {face}: the face shows no contrast; "
                                           "is it in focus and lit?")
                tmpl = np.round((mean - lo) * 255.0 / (hi - lo)).astype(np.uint8)
                if confirm(f"{set_name} {face}: learnt from {samples} view(s). Keep it?"):
                    templates[(set_name, face)] = tmpl
                    break
                log(f"{set_name} {face}: again")
        r = np.median(np.array(ratios), axis=0)
        set_colours[set_name] = (float(r[0]), float(r[1]), float(r[2]))
        log(f"set {set_name}: colour relative to the mat (B, G, R) "
            f"{tuple(round(float(c), 3) for c in r)}; {len(data.set_faces(set_name))} faces")

    profile = Profile(
        name=name, dice=data, mat_colour=mat_colour, set_colours=set_colours,
        templates=templates, template_px=t, template_span=span,
        min_score=DEFAULT_MIN_SCORE, min_margin=DEFAULT_MIN_MARGIN, game=game,
        dice_override=dict(dice_override or {}),
        notes=f"taught with {samples} view(s) per face",
    )
    warnings = lookalike_warnings(profile)
    for w in warnings:
        log(f"warning: {w}")

    frame = table.frame(Step("all"))
    mat = check_markers(frame, spec)
    view_img = mat.warp(frame)
    readings = read_symbol_dice(view_img, profile, spec)
    preview = annotate(view_img, readings)
    correct = None
    truth = getattr(table, "last_truth", None)
    if truth is not None:
        correct = _count_correct(readings, truth, mat, spec)
    known = sum(1 for r in readings if r.face != UNKNOWN)
    log(f"preview: {len(readings)} dice found, {known} read"
        + (f", {correct} of {len(truth.dice)} right" if truth is not None else ""))
    return CalibrationResult(profile, preview, readings, correct, warnings)


def lookalike_warnings(profile: Profile, limit: float = 0.85) -> list[str]:
    """Pairs of faces of one set that look alike in some quarter turn."""
    out = []
    by_set: dict[str, list[str]] = {}
    for s, f in profile.templates:
        by_set.setdefault(s, []).append(f)
    for s, faces in by_set.items():
        for i, a in enumerate(faces):
            ta = _norm(profile.templates[(s, a)])
            for b in faces[i + 1:]:
                tb = profile.templates[(s, b)]
                sim = max(float((ta * _norm(np.rot90(tb, k))).sum()) for k in range(4))
                if sim > limit:
                    out.append(f"{s} faces {a!r} and {b!r} look alike ({sim:.2f}); "
                               "the reader may call them unknown")
    return out


def _count_correct(readings: list[DieReading], truth: Any, mat: Any, spec: MatSpec) -> int:
    pts = [np.array(d.mat_xy) * spec.px_per_mm for d in truth.dice]
    used: set[int] = set()
    correct = 0
    for r in readings:
        if not pts:
            break
        dist = [math.dist(r.centre, p) if i not in used else 1e9 for i, p in enumerate(pts)]
        i = int(np.argmin(dist))
        if dist[i] < truth.die_mm * spec.px_per_mm / 2:
            used.add(i)
            d = truth.dice[i]
            if r.face == d.face and r.dice_set == d.dice_set:
                correct += 1
    return correct


SET_DRAW_BGR = {"red": (60, 60, 255), "blue": (255, 120, 40), "black": (40, 40, 40),
                "white": (255, 255, 255)}


def annotate(view_img: np.ndarray, readings: list[DieReading]) -> np.ndarray:
    """The view with each die's box, set and face drawn on it."""
    out = view_img.copy()
    for r in readings:
        colour = SET_DRAW_BGR.get(r.dice_set, (0, 255, 255))
        x0, y0, x1, y1 = r.box
        cv2.rectangle(out, (x0, y0), (x1, y1), (0, 255, 255) if r.face == UNKNOWN else colour, 1)
        label = f"{r.face} {r.confidence:.2f}"
        cv2.putText(out, label, (x0, max(8, y0 - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                    (0, 0, 0), 2, cv2.LINE_AA)
        cv2.putText(out, label, (x0, max(8, y0 - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                    (255, 255, 255), 1, cv2.LINE_AA)
    return out
