"""Reading symbol dice (Vault Assault's cop and robber dice) on the top-down mat view.

    read_symbol_dice(view_image, profile, spec=DEFAULT_MAT) -> list[DieReading]

Steps, all driven by the calibration profile:
1. Foreground: pixels whose colour lacks the mat's chroma (the profile's sampled mat
   colour), markers masked out.
2. Dice: connected blobs, split by area (known die size) with erosion and k-means
   when dice touch; each die's angle (mod 90 degrees) from its outline's tangents.
3. Set: the die's body colour (a band just inside its edge) relative to the local mat
   colour, nearest of the calibrated set colours.
4. Face: normalised correlation of the upright crop against the set's templates in
   all four quarter turns, with a small shift search; the winning quarter turn gives
   the glyph's full angle. Below the profile's score or margin the face is "unknown".

Confidence (see ``confidence``): 0.5 when the best template score sits at the
profile's min_score or its lead over the runner-up face at min_margin, rising to 1.0
at a score of 0.95 and a lead of 0.25; a face is reported only at 0.5 and above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from companion.vision.mat_spec import DEFAULT_MAT, MatSpec
from companion.vision.profile import Profile
from companion.vision.types import UNKNOWN, DieReading

SEARCH_PX = 2  # shift search, in template pixels, each way
KNOWN_AT = 0.5  # confidence at and above which a face counts as read
MAX_SET_DISTANCE = 0.9  # log-colour distance beyond which the set is unknown
FULL_SCORE = 0.95  # template correlation that earns full confidence
FULL_MARGIN = 0.25  # lead over the runner-up face that earns full confidence
REFINE_BELOW = 0.75  # confidence under which angles across the quarter turn are tried
SURE = 0.95  # confidence at which a touching die's outline angle is trusted
REFINE_ANGLES = tuple(7.5 * k for k in range(-5, 7) if k)  # the whole quarter turn
MIN_PURITY = 0.4  # share of the edge band in the set's colour needed to read a face
PURITY_DISTANCE = 0.8  # log-colour distance counted as "the set's colour"
KMEANS_POINTS_PER_DIE = 120  # k-means on a sample of a blob's pixels
MAX_BLOB_DICE = 16  # a bigger blob is a hand or an arm, not dice
KMEANS_TRIES = 3  # touching dice: k-means restarts (one try often lands in a poor split)


@dataclass(frozen=True)
class DieCandidate:
    centre: tuple[float, float]  # view pixels
    angle: float  # degrees, modulo 90, in [0, 90)
    touching: bool = False  # split out of a blob of several dice


@dataclass
class _Bank:
    sets: list[str]
    set_logs: np.ndarray  # (S, 3) log(body / mat)
    chroma: np.ndarray  # (3,) unit, zero-mean mat chroma direction (BGR)
    per_set: dict[str, tuple[np.ndarray, list[str], np.ndarray, np.ndarray]]
    # set -> (templates (4F, t*t) normalised, faces (F), face index per row (4F), quarter turn (4F))
    oriented: dict[tuple[str, str], bool]  # does the face's quarter turn matter?


def _normalise_rows(a: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return a / np.maximum(n, 1e-6)


def _bank(profile: Profile) -> _Bank:
    cached = profile._cache.get("bank")
    if cached is not None:
        return cached
    mat = np.array(profile.mat_colour, np.float64)
    c = mat - mat.mean()
    norm = float(np.linalg.norm(c))
    chroma = c / max(norm, 1e-6)
    sets = list(profile.set_colours)
    set_logs = np.log(np.maximum(
        np.array([profile.set_colours[s] for s in sets], np.float64).reshape(-1, 3), 1e-3))
    per_set = {}
    oriented = {}
    for s in sets:
        faces = profile.faces_of(s)
        rows, face_idx, turns = [], [], []
        for fi, face in enumerate(faces):
            tmpl = profile.templates[(s, face)].astype(np.float32)
            rots = [np.rot90(tmpl, -k) for k in range(4)]  # k quarter turns clockwise
            for k, r in enumerate(rots):
                rows.append(r.reshape(-1))
                face_idx.append(fi)
                turns.append(k)
            flat = _normalise_rows(np.stack([r.reshape(-1) for r in rots]))
            self_sim = float(np.max(flat[1:] @ flat[0]))
            # Orientation matters for mosaic pieces; a face that looks the same turned
            # has no usable orientation.
            oriented[(s, face)] = profile.dice.piece(face) is not None and self_sim < 0.9
        if rows:
            per_set[s] = (
                _normalise_rows(np.stack(rows)).astype(np.float32),
                faces,
                np.array(face_idx),
                np.array(turns),
            )
    bank = _Bank(sets, set_logs, chroma, per_set, oriented)
    profile._cache["bank"] = bank
    return bank


# ---------------------------------------------------------------- finding dice


def _marker_mask(shape: tuple[int, int], spec: MatSpec, scale: float = 1.0) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    ppm = spec.px_per_mm * scale
    q = 5.0
    for corners in spec.marker_corners_mm().values():
        (x0, y0), _, (x1, y1), _ = corners
        cv2.rectangle(mask, (int((x0 - q) * ppm), int((y0 - q) * ppm)),
                      (int(math.ceil((x1 + q) * ppm)), int(math.ceil((y1 + q) * ppm))), 255, -1)
    # The mat's own edge (where the table shows through a slightly-off fit).
    edge = max(1, round(3.0 * ppm))
    cv2.rectangle(mask, (0, 0), (shape[1] - 1, shape[0] - 1), 255, edge)
    return mask


STEP = 2  # dice are found on every STEP-th pixel of the view: 4x less work


def foreground_mask(
    view: np.ndarray, profile: Profile, spec: MatSpec = DEFAULT_MAT, step: int = STEP
) -> np.ndarray:
    """uint8 mask (255 = not mat) of every ``step``-th pixel of the view."""
    bank = _bank(profile)
    h, w = view.shape[:2]
    size = ((w + step - 1) // step, (h + step - 1) // step)
    small = view if step == 1 else cv2.resize(view, size, interpolation=cv2.INTER_NEAREST)
    # Projection on the mat's chroma, saturated to 0..255 (negative: surely not mat).
    score = cv2.transform(small, bank.chroma.reshape(1, 3).astype(np.float32))
    if score.ndim == 3:
        score = score[:, :, 0]
    med = float(np.median(score[::4, ::4]))
    if med <= 0:  # no mat chroma at all: not our mat, read nothing
        return np.zeros(small.shape[:2], np.uint8)
    fg = cv2.compare(score, 0.4 * med, cv2.CMP_LT)
    mm = _markers_for(view, fg.shape, step, profile, spec)
    fg = cv2.bitwise_and(fg, cv2.bitwise_not(mm))
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    return fg


def _markers_for(view: np.ndarray, shape: tuple[int, ...], step: int, profile: Profile,
                 spec: MatSpec) -> np.ndarray:
    """The marker (and mat edge) mask at ``shape``, when ``view`` is the mat's view."""
    h, w = shape[:2]
    key = ("markers", h, w, step, spec)
    mm = profile._cache.get(key)
    if mm is None:
        full = view.shape[1] == spec.view_size[0] and view.shape[0] == spec.view_size[1]
        mm = _marker_mask((h, w), spec, 1.0 / step) if full else np.zeros((h, w), np.uint8)
        profile._cache[key] = mm
    return mm


def _contour_angle(points: np.ndarray) -> float | None:
    """Dominant edge direction (degrees mod 90) of contour points in sequence."""
    if len(points) < 12:
        return None
    d = np.roll(points, -2, axis=0) - np.roll(points, 2, axis=0)
    phi = np.arctan2(d[:, 1], d[:, 0])
    s, c = np.sin(4 * phi).sum(), np.cos(4 * phi).sum()
    if math.hypot(s, c) < 1e-6:
        return None
    return (math.degrees(math.atan2(s, c)) / 4.0) % 90.0


def find_dice(
    view: np.ndarray, profile: Profile, spec: MatSpec = DEFAULT_MAT,
    fg: np.ndarray | None = None, step: int = STEP,
) -> list[DieCandidate]:
    """Every die-sized object on the view, touching dice separated. ``fg`` is
    foreground_mask(view, ..., step) when already computed."""
    if fg is None:
        fg = foreground_mask(view, profile, spec, step)
    side = profile.dice.die_mm * spec.px_per_mm / step
    die_area = side * side * 0.96
    found: list[tuple[float, float, float, bool]] = []
    r = max(1, round(0.12 * side))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    eroded_area = (side - 2 * r) ** 2 * 0.95
    # Blobs by their outlines (much cheaper than labelling every pixel). Outer
    # outlines and holes: a die may lie inside a ring of other things.
    outlines, tree = cv2.findContours(fg, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    holes: dict[int, list[np.ndarray]] = {}
    for k, (_next, _prev, _child, parent) in enumerate(tree[0] if tree is not None else []):
        if parent != -1:
            holes.setdefault(int(parent), []).append(outlines[k])
    for k, outline in enumerate(outlines):
        if tree[0][k][3] != -1:
            continue
        x, y, w, h = cv2.boundingRect(outline)
        if w * h < 0.55 * die_area:
            continue
        pad = 2
        x0, y0 = x - pad, y - pad
        comp = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
        cv2.drawContours(comp, [outline], -1, 1, -1, offset=(-x0, -y0))
        if k in holes:  # the blob's own pixels only
            cv2.drawContours(comp, holes[k], -1, 0, -1, offset=(-x0, -y0))
            cv2.drawContours(comp, holes[k], -1, 1, 1, offset=(-x0, -y0))
        area = cv2.countNonZero(comp)
        if area < 0.55 * die_area:
            continue
        n = round(area / die_area)
        if n > MAX_BLOB_DICE:  # an arm across the mat, not dice
            continue
        cnt = outline - np.array([x0, y0], outline.dtype)
        if n <= 1:
            (cx, cy), _sz, a = cv2.minAreaRect(cnt)
            ang = _contour_angle(cnt.reshape(-1, 2).astype(np.float64))
            found.append((cx + x0, cy + y0, a % 90.0 if ang is None else ang, False))
            continue
        centres = _split(comp, n, kernel, eroded_area)
        cen = np.array(centres, np.float64).reshape(-1, 2)
        angles = _owned_angles([cnt], cen)
        for (cx, cy), ang in zip(centres, angles, strict=True):
            found.append((cx + x0, cy + y0, ang, True))
    # mask pixel (i, j) sits at view pixel (step * j, step * i)
    return [DieCandidate((cx * step, cy * step), ang % 90.0 if ang < 89.999 else 0.0, many)
            for cx, cy, ang, many in found]


def gradient_angle(gray: np.ndarray, centre: tuple[float, float], side: float) -> float | None:
    """A die's angle (degrees mod 90) from the image gradients in a ring around its
    centre where its edges run (its glyph lies inside the ring)."""
    key = round(side * 10)
    ring = _GRAD_RINGS.get(key)
    h = int(side * 0.65)
    if ring is None:
        yy, xx = np.mgrid[-h:h + 1, -h:h + 1]
        rr = np.hypot(xx, yy) / side
        ring = ((rr > 0.40) & (rr < 0.62)).astype(np.float32)
        _GRAD_RINGS[key] = ring
    x, y = int(round(centre[0])), int(round(centre[1]))
    if x - h < 0 or y - h < 0 or x + h + 1 > gray.shape[1] or y + h + 1 > gray.shape[0]:
        return None
    p = gray[y - h:y + h + 1, x - h:x + h + 1].astype(np.float32)
    gx = cv2.Sobel(p, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(p, cv2.CV_32F, 0, 1, ksize=3)
    w = (gx * gx + gy * gy) * ring
    phi = np.arctan2(gy, gx)
    s, c = float((w * np.sin(4 * phi)).sum()), float((w * np.cos(4 * phi)).sum())
    if math.hypot(s, c) < 1e-6:
        return None
    return (math.degrees(math.atan2(s, c)) / 4.0) % 90.0


_GRAD_RINGS: dict[int, np.ndarray] = {}


def _owned_angles(cnts: list[np.ndarray], cen: np.ndarray) -> list[float]:
    """Per centre, the dominant direction (mod 90) of the outline points nearest to it."""
    k = len(cen)
    s_sum, c_sum = np.zeros(k), np.zeros(k)
    for c in cnts:
        cp = c.reshape(-1, 2).astype(np.float64)
        if len(cp) < 12:
            continue
        d = np.roll(cp, -2, axis=0) - np.roll(cp, 2, axis=0)
        phi = np.arctan2(d[:, 1], d[:, 0])
        own = ((cp[:, None, :] - cen[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
        s_sum += np.bincount(own, np.sin(4 * phi), k)
        c_sum += np.bincount(own, np.cos(4 * phi), k)
    return [(math.degrees(math.atan2(s_, c_)) / 4.0) % 90.0
            for s_, c_ in zip(s_sum, c_sum, strict=True)]


def _split(
    comp: np.ndarray, n: int, kernel: np.ndarray, eroded_area: float
) -> list[tuple[float, float]]:
    """Centres of the n dice in one blob."""
    er = cv2.erode(comp, kernel)
    cores, _ = cv2.findContours(er, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    parts = []
    for core in cores:
        m = cv2.moments(core)
        a = m["m00"] + 0.5 * cv2.arcLength(core, True) + 1.0  # pixels, not polygon area
        if a >= 0.35 * eroded_area:
            parts.append((core, a, m))
    counts = [max(1, round(a / eroded_area)) for _c, a, _m in parts]
    if not parts or sum(counts) != n:
        # Erosion did not explain the blob: k-means over the whole blob.
        ys, xs = np.nonzero(comp)
        return _kmeans(np.column_stack([xs, ys]).astype(np.float32), n)
    centres: list[tuple[float, float]] = []
    for (core, _a, m), k in zip(parts, counts, strict=True):
        if k == 1 and m["m00"] > 0:
            centres.append((m["m10"] / m["m00"], m["m01"] / m["m00"]))
        else:
            part = np.zeros_like(comp)
            cv2.drawContours(part, [core], -1, 1, -1)
            ys, xs = np.nonzero(part & er)
            centres.extend(_kmeans(np.column_stack([xs, ys]).astype(np.float32), k))
    return centres


def _kmeans(pts: np.ndarray, k: int) -> list[tuple[float, float]]:
    """k-means (k-means++ seeds, best of several tries; deterministic)."""
    if len(pts) < k:
        return []
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.05)
    cv2.setRNGSeed(12345)
    every = max(1, len(pts) // (KMEANS_POINTS_PER_DIE * k))
    pts = pts[::every]
    _c, _l, centres = cv2.kmeans(pts.astype(np.float32), k, None, crit, KMEANS_TRIES,
                                 cv2.KMEANS_PP_CENTERS)
    return [(float(x), float(y)) for x, y in centres]


# ---------------------------------------------------------------- reading dice


def crop_die(
    view: np.ndarray, centre: tuple[float, float], angle: float, profile: Profile,
    spec: MatSpec = DEFAULT_MAT, margin: int = SEARCH_PX,
) -> np.ndarray:
    """The die turned upright by ``angle`` (degrees clockwise) and resampled so the
    central template_span of its edge is template_px wide, plus ``margin`` pixels each
    side. Colour in, colour out."""
    t = profile.template_px
    side = profile.dice.die_mm * spec.px_per_mm
    k = t / (profile.template_span * side)
    size = t + 2 * margin
    th = math.radians(angle)
    ca, sa = math.cos(th) * k, math.sin(th) * k
    c = (size - 1) / 2.0
    cx, cy = centre
    # view -> patch: k * R(-angle) * (p - centre) + c
    M = np.array([[ca, sa, c - (ca * cx + sa * cy)],
                  [-sa, ca, c - (-sa * cx + ca * cy)]], np.float64)
    return cv2.warpAffine(view, M, (size, size), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def _ring_index(profile: Profile, margin: int) -> np.ndarray:
    key = ("ring", margin)
    idx = profile._cache.get(key)
    if idx is None:
        t = profile.template_px
        size = t + 2 * margin
        c = (size - 1) / 2.0
        px_per_die = t / profile.template_span
        yy, xx = np.mgrid[0:size, 0:size]
        cheb = np.maximum(np.abs(xx - c), np.abs(yy - c)) / px_per_die
        idx = np.nonzero((cheb >= 0.375) & (cheb <= 0.45))
        profile._cache[key] = idx
    return idx


def _local_mat(view: np.ndarray, fg: np.ndarray, profile: Profile,
               spec: MatSpec = DEFAULT_MAT) -> tuple[np.ndarray, int]:
    """The mat's colour around each point, from every f-th pixel with dice left out:
    (array, f) where array[y // f, x // f] is the local mat BGR."""
    step = max(1, round(view.shape[0] / fg.shape[0]))
    f = 8
    sub = f // step
    small = view[::f, ::f].astype(np.float32)
    mm = _markers_for(view, fg.shape, step, profile, spec)
    bg = ((fg[::sub, ::sub] == 0) & (mm[::sub, ::sub] == 0))[: small.shape[0], : small.shape[1]]
    bg = bg.astype(np.float32)
    bg = cv2.erode(bg, np.ones((3, 3), np.uint8))  # keep off the dice's edges and shadows
    num = cv2.blur(small * bg[:, :, None], (9, 9))
    den = cv2.blur(bg, (9, 9))[:, :, None]
    n_bg = float(bg.sum())
    glob = ((small * bg[:, :, None]).sum(axis=(0, 1)) / n_bg if n_bg
            else np.array(profile.mat_colour, np.float32))
    local = np.where(den > 0.05, num / np.maximum(den, 1e-6), glob)
    return local, f


def relative_body_colour(
    view: np.ndarray, cand: DieCandidate, profile: Profile, spec: MatSpec = DEFAULT_MAT,
    fg: np.ndarray | None = None,
) -> np.ndarray:
    """A die's body colour divided by the mat colour around it (BGR ratios): what
    calibration stores per set and the reader compares against."""
    if fg is None:
        fg = foreground_mask(view, profile, spec)
    local, f = _local_mat(view, fg, profile, spec)
    patch = crop_die(view, cand.centre, cand.angle, profile, spec, SEARCH_PX)
    body = body_colour(patch, profile, SEARCH_PX)
    ly = min(int(cand.centre[1] / f), local.shape[0] - 1)
    lx = min(int(cand.centre[0] / f), local.shape[1] - 1)
    return np.maximum(body, 1.0) / np.maximum(local[ly, lx].astype(np.float64), 1.0)


def ring_pixels(patch: np.ndarray, profile: Profile, margin: int = SEARCH_PX) -> np.ndarray:
    """(N, 3) BGR pixels of the band just inside the die's edge (no glyph there)."""
    iy, ix = _ring_index(profile, margin)
    return patch[iy, ix].reshape(-1, 3)


def body_colour(patch: np.ndarray, profile: Profile, margin: int = SEARCH_PX) -> np.ndarray:
    """Median BGR of the band just inside the die's edge."""
    return np.median(ring_pixels(patch, profile, margin), axis=0).astype(np.float64)


def read_symbol_dice(
    view_image: np.ndarray, profile: Profile, spec: MatSpec = DEFAULT_MAT
) -> list[DieReading]:
    """Every symbol die on the mat view: set, face (or "unknown"), confidence, box,
    centre and angle in view pixels, mat_xy in mm.

    Given any other image (a whole frame, when the mat was not found) the dice's size
    in pixels is measured from the lone dice in it, and mat_xy is None."""
    if view_image is None or view_image.ndim != 3 or view_image.shape[2] != 3:
        raise ValueError("read_symbol_dice: expected a BGR image (height x width x 3)")
    if (view_image.shape[1], view_image.shape[0]) == spec.view_size:
        return _read(view_image, profile, spec)
    ppm = estimate_px_per_mm(view_image, profile, spec)
    if ppm is None:
        return []
    dice = _read(view_image, profile, replace(spec, px_per_mm=ppm))
    return [replace(d, mat_xy=None) for d in dice]


def estimate_px_per_mm(
    image: np.ndarray, profile: Profile, spec: MatSpec = DEFAULT_MAT
) -> float | None:
    """The image's scale from the dice in it: the median edge of the blobs that look
    like one lone die (square, solid), over the die's size in mm. None: no lone die."""
    fg = foreground_mask(image, profile, spec, step=1)
    outlines, tree = cv2.findContours(fg, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    sides = []
    for k, c in enumerate(outlines):
        if tree[0][k][3] != -1:  # a hole, not a blob
            continue
        area = cv2.contourArea(c)
        if area < 64:
            continue
        (_cx, _cy), (w, h), _a = cv2.minAreaRect(c)
        if min(w, h) <= 0 or not 0.85 <= w / h <= 1.18 or area / (w * h) < 0.85:
            continue
        sides.append(math.sqrt(area))
    if not sides:
        return None
    # Dice are the smallest lone squares (the corner markers are bigger ones).
    sides.sort()
    small = [v for v in sides if v <= 1.5 * sides[len(sides) // 10]]
    return small[len(small) // 2] / profile.dice.die_mm


def _read(view_image: np.ndarray, profile: Profile, spec: MatSpec) -> list[DieReading]:
    bank = _bank(profile)
    fg = foreground_mask(view_image, profile, spec)
    cands = find_dice(view_image, profile, spec, fg)
    if not cands:
        return []
    local, f = _local_mat(view_image, fg, profile, spec)
    margin = SEARCH_PX
    side = profile.dice.die_mm * spec.px_per_mm
    gray = cv2.cvtColor(view_image, cv2.COLOR_BGR2GRAY)

    # Every die's body colour (the band just inside its edge) against the mat beside it.
    iy, ix = _ring_index(profile, margin)
    rings = np.stack([
        crop_die(view_image, c.centre, c.angle, profile, spec, margin)[iy, ix] for c in cands
    ]).astype(np.float32)  # (n, band pixels, 3)
    ly = np.minimum((np.array([c.centre[1] for c in cands]) / f).astype(int), local.shape[0] - 1)
    lx = np.minimum((np.array([c.centre[0] for c in cands]) / f).astype(int), local.shape[1] - 1)
    mat_here = np.maximum(local[ly, lx], 1.0)[:, None, :]  # (n, 1, 3)
    logs = np.log(np.maximum(rings, 1.0) / mat_here)  # (n, band, 3)
    body = np.median(logs, axis=1)  # (n, 3)
    dist = np.linalg.norm(body[:, None, :] - bank.set_logs[None, :, :], axis=2)  # (n, sets)
    set_of: list[str] = []
    set_conf: list[float] = []
    purity: list[float] = []
    for i in range(len(cands)):
        if not len(bank.sets):
            set_of.append(UNKNOWN)
            set_conf.append(0.0)
            purity.append(0.0)
            continue
        order = np.argsort(dist[i])
        d1 = float(dist[i, order[0]])
        d2 = float(dist[i, order[1]]) if len(order) > 1 else d1 + 1.0
        if d1 > MAX_SET_DISTANCE:
            set_of.append(UNKNOWN)
            set_conf.append(0.0)
            purity.append(0.0)
            continue
        set_of.append(bank.sets[order[0]])
        set_conf.append(float(np.clip(1.0 - d1 / max(d2, 1e-6), 0.0, 1.0)))
        # Share of the band that has the set's colour: low when the crop is off the die
        # (a poor split of touching dice).
        near = np.linalg.norm(logs[i] - bank.set_logs[order[0]], axis=1) < PURITY_DISTANCE
        purity.append(float(near.mean()))

    # First each die at its outline's angle.
    tries: list[list[DieCandidate]] = [[c] for c in cands]
    results: list[tuple[DieReading, float] | None] = [None] * len(cands)
    for s, bank_set in bank.per_set.items():
        idx = [i for i, ss in enumerate(set_of) if ss == s]
        if idx:
            _best_of(idx, tries, results, bank_set, s, gray, profile, bank, side, spec,
                     set_conf)
    # A die split out of a blob has its outline partly hidden: unless it read very
    # clearly, also try the angle its edges' gradients give and the other side of the
    # quarter turn.
    for s, bank_set in bank.per_set.items():
        idx = []
        for i, c in enumerate(cands):
            res = results[i]
            if set_of[i] != s or not c.touching or res is None or res[0].confidence >= SURE:
                continue
            tries[i] = [DieCandidate(c.centre, (c.angle + 45.0) % 90.0, True)]
            g = gradient_angle(gray, c.centre, side)
            if g is not None and abs((g - c.angle + 45.0) % 90.0 - 45.0) > 2.0:
                tries[i].append(DieCandidate(c.centre, g, True))
            idx.append(i)
        if idx:
            _best_of(idx, tries, results, bank_set, s, gray, profile, bank, side, spec,
                     set_conf)
    # A die read without much confidence may be turned otherwise than its outline said:
    # try angles across the quarter turn, keep the one whose best template fits best.
    for i, res in enumerate(results):
        if res is None or res[0].confidence >= REFINE_BELOW:
            continue
        cand = cands[i]
        tries[i] = [DieCandidate(cand.centre, (cand.angle + d) % 90.0) for d in REFINE_ANGLES]
        _best_of([i], tries, results, bank.per_set[set_of[i]], set_of[i], gray, profile, bank,
                 side, spec, set_conf)
    for i, res in enumerate(results):
        if res is not None and purity[i] < MIN_PURITY and res[0].face != UNKNOWN:
            r = res[0]
            results[i] = (replace(r, face=UNKNOWN, confidence=min(r.confidence, 0.49)), res[1])
    out = []
    for i, cand in enumerate(cands):
        r = results[i]
        out.append(r[0] if r is not None else
                   _reading(UNKNOWN, UNKNOWN, 0.0, cand, cand.angle, side, spec, 0.0))
    return out


def _best_of(
    idx: list[int], tries: list[list[DieCandidate]], results: list, bank_set: tuple,
    set_name: str, gray: np.ndarray, profile: Profile, bank: _Bank, side: float,
    spec: MatSpec, set_conf: list[float],
) -> None:
    """For each die i in idx, read every candidate pose in tries[i] and keep (in
    results[i]) the reading whose best template score is highest."""
    tmpl, faces, face_idx, turns = bank_set
    poses = [(i, c) for i in idx for c in tries[i]]
    crops = [crop_die(gray, c.centre, c.angle, profile, spec, SEARCH_PX) for _i, c in poses]
    rows = _scores(crops, tmpl, profile.template_px, SEARCH_PX)
    best = rows.max(axis=1)
    chosen: dict[int, int] = {}
    for k, (i, _c) in enumerate(poses):
        if i not in chosen or best[k] > best[chosen[i]]:
            chosen[i] = k
    for i, k in chosen.items():
        if results[i] is None or best[k] > results[i][1]:
            results[i] = _decide(rows[k], faces, face_idx, turns, set_name, profile, bank,
                                 poses[k][1], side, spec, set_conf[i])


def _scores(crops: list[np.ndarray], tmpl: np.ndarray, t: int, margin: int) -> np.ndarray:
    """(n, rows of tmpl): each crop's best normalised correlation with each template
    row over every shift within the margin."""
    win = 2 * margin + 1
    stack = np.stack(crops).astype(np.float32)  # (n, P, P)
    stack -= stack.mean(axis=(1, 2), keepdims=True)  # near-centred: no float32 cancellation
    w = sliding_window_view(stack, (t, t), axis=(1, 2)).reshape(len(crops) * win * win, t * t)
    # Templates are zero-mean and unit-norm, so window . template needs no centring of
    # the window; dividing by the window's own centred norm makes it the correlation.
    dots = w @ tmpl.T
    n = float(t * t)
    sums = w.sum(axis=1)
    centred_sq = np.einsum("ij,ij->i", w, w) - sums * sums / n
    dots /= np.sqrt(np.maximum(centred_sq, 1e-6))[:, None]
    return dots.reshape(len(crops), win * win, -1).max(axis=1)


def confidence(score: float, margin: float, profile: Profile) -> float:
    """0..1; 0.5 exactly at the profile's min_score or min_margin (whichever is worse),
    1.0 at a score of FULL_SCORE and a margin of FULL_MARGIN."""
    a = 0.5 + 0.5 * (score - profile.min_score) / max(FULL_SCORE - profile.min_score, 1e-6)
    b = 0.5 + 0.5 * (margin - profile.min_margin) / max(FULL_MARGIN - profile.min_margin, 1e-6)
    return float(np.clip(min(a, b), 0.0, 1.0))


def _decide(
    row: np.ndarray, faces: list[str], face_idx: np.ndarray, turns: np.ndarray, set_name: str,
    profile: Profile, bank: _Bank, cand: DieCandidate, side: float, spec: MatSpec,
    set_conf: float,
) -> tuple[DieReading, float]:
    """The reading from one die's template scores, and its best score."""
    best = int(np.argmax(row))
    fi = int(face_idx[best])
    s1 = float(row[best])
    others = row[face_idx != fi]
    s2 = float(others.max()) if len(others) else -1.0
    face = faces[fi]
    if bank.oriented[(set_name, face)]:
        same = row[(face_idx == fi) & (turns != turns[best])]
        if len(same):
            s2 = max(s2, float(same.max()))
    conf = confidence(s1, s1 - s2, profile)
    angle = (cand.angle + 90.0 * int(turns[best])) % 360.0
    if conf < KNOWN_AT:
        face = UNKNOWN
    return _reading(set_name, face, conf, cand, angle, side, spec, set_conf), s1


def _reading(
    set_name: str, face: str, conf: float, cand: DieCandidate, angle: float, side: float,
    spec: MatSpec, set_conf: float,
) -> DieReading:
    cx, cy = cand.centre
    th = math.radians(cand.angle)
    half = side / 2.0 * (abs(math.cos(th)) + abs(math.sin(th)))
    box = (int(math.floor(cx - half)), int(math.floor(cy - half)),
           int(math.ceil(cx + half)), int(math.ceil(cy + half)))
    return DieReading(
        dice_set=set_name,
        face=face,
        confidence=round(conf, 4),
        box=box,
        centre=(float(cx), float(cy)),
        angle=round(angle, 2),
        mat_xy=(cx / spec.px_per_mm, cy / spec.px_per_mm),
        set_confidence=round(set_conf, 4),
    )
