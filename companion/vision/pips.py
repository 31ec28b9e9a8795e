"""Reading ordinary pip dice: find every die in a BGR frame and count its top face.

No calibration and no scale hint: the reader works from the pips themselves, so dice
from ~40 to ~200 px across and pips darker or lighter than the die all read the same way.

1. Pip candidates. The green channel (it tells red from cream as well as black from
   white) is smoothed and compared with its local mean: blobs darker than it (black pips
   on a white die) and blobs lighter (cream pips on a red die) are traced, at C and again
   at 2C (which parts pips that merged). A blob is kept when it is compact and all but
   one point of a ring just outside it contrast with it (wood grain, edges and noise fail
   that). Blobs holding smaller blobs are die faces, not pips.
2. Top-face pips. Pips on the side faces are seen edge-on and look like slits: blobs
   flatter than _MAX_ROUND_RATIO are ignored.
3. Faces. Round pips of the same polarity, size, shape and surrounding colour link up
   when closer than a face's diagonal (in pip diameters). A linked group must fit a die
   face's layout (1..6 pips on the 3x3 grid, seen through a nearly square affine view);
   a group that does not (touching dice, a side pip joining in) gives up its
   best-scoring faces one by one. Lone twin pips a little further apart may make a 2
   (dice with small pips).
4. Checks. A face's empty layout points must show the face's colour (else a pip was
   missed: the confidence drops, or it is no face at all); the die must stand out from
   what surrounds it (else it is a pattern on the table); a lone pip is a "1" only on a
   plain patch of die face. Of two faces on one die (centres closer than a die), the one
   with flatter or much smaller pips is a side face and is dropped.
5. Confidence. From the layout fit, the pips' contrast and roundness and the plain
   check; a face below ``min_confidence`` is reported as "unknown", and below
   _MIN_DIE_CONFIDENCE not at all.

Measured on the real photo sets by ``companion eval`` (and the lab's pip_accuracy benchmark).
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.vision.types import UNKNOWN, DieReading

DEFAULT_MIN_CONFIDENCE = 0.5
# Below this a pip group is not reported at all; between it and min_confidence it is a
# die whose face is "unknown".
_MIN_DIE_CONFIDENCE = 0.35

# Blob finding.
_BLOCK = 51  # adaptive-threshold window (px): larger than the largest pip expected
_C = 25  # grey levels a pip must differ from its neighbourhood's mean
_MIN_AREA = 9  # px: a pip 3.4 px across (pips of 40 px dice are 15-45 px in area)
# Sensor noise makes small blobs of middling contrast: blobs under _SMALL_AREA px need
# _SMALL_RING_CONTRAST (a real small pip still stands out clearly).
_SMALL_AREA = 20
_SMALL_RING_CONTRAST = 45
_MAX_AREA = 3000  # px: pips of 200 px dice are ~ 1100 px in area
_MIN_BOUNDARY = 8  # outline pixels of the smallest blob, at the least
_MAX_BOUNDARY = 600
_RING = 12  # samples on the ring around each blob
_MIN_RING_CONTRAST = 25  # ring samples must be this much brighter (darker) than the blob
_RING_SKIP = 1  # ... all but this many (a neighbouring pip, the die's edge)
# Top-face pips.
_MAX_ROUND_RATIO = 2.3  # major / minor axis; flatter blobs are pips seen edge-on
# Pips of one face look alike: axis ratios within a factor _SHAPE_DIFF, and when both are
# elongated (ratio > _SHAPE_RATIO) their major axes within _SHAPE_TURN radians.
_SHAPE_DIFF = 1.5
_SHAPE_RATIO = 1.3
_SHAPE_TURN = 0.5
# Grouping (all distances in pip diameters).
_LINK = 3.9  # a face's diagonal: ~3 pip diameters on big-pip dice
_FACE_SPAN = 6.0  # no two pips of one face are further apart (a 6's diagonal)
_MAX_SIZE_RATIO = 1.7
_MAX_COLOUR_DIFF = 70.0  # BGR distance between the face colours around two pips
# Layout: grid step (distance from the centre pip to an edge pip) in pip diameters.
_GRID_MIN, _GRID_MAX = 0.75, 1.9
_MAX_SKEW = 1.9  # ratio of the affine view's singular values
_MAX_FIT_ERR = 0.22  # rms residual, in grid steps
# One die, several faces seen: faces whose centres are closer than this many half-widths
# are on one die; a face whose pips are flatter by _FLATTER (or smaller) is a side face.
_SAME_DIE = 2.4
# Lone pips pair up as a 2 (small-pip dice) up to this many diameters apart, when their
# sizes and axis ratios agree within this factor.
_PAIR_SPAN = 5.2
_PAIR_ALIKE = 1.25
_SPLIT_BUDGET = 400  # layouts tried to untangle one linked group (touching dice)
# A die stands out from the table: the share of a ring around the face (3.5-5.5 pip
# diameters out) that is not the face's colour, for faces of 2+ pips and for a lone pip.
_EDGE_RADII = np.array([3.5, 4.5, 5.5])
_EDGE_MIN = 0.55
_EDGE_MIN_LONE = 0.7
_EDGE_MIN_PAIR = 0.65
_MAX_RATIO_PAIR = 1.8
# The layout points of a face that hold no pip show the plain face: below _PLAIN_MIN of
# them it is no die face; any missing lowers the confidence (a pip was probably missed).
_PLAIN_MIN = 0.6
_FLATTER = 0.12
_SMALLER = 1.5

_ANGLES = np.linspace(0.0, 2.0 * np.pi, _RING, endpoint=False)
_COS, _SIN = np.cos(_ANGLES), np.sin(_ANGLES)

# Face layouts on the 3x3 grid (units of the grid step).
_LAYOUTS: dict[int, np.ndarray] = {
    4: np.array([(-1, -1), (1, -1), (-1, 1), (1, 1)], float),
    5: np.array([(-1, -1), (1, -1), (-1, 1), (1, 1), (0, 0)], float),
    6: np.array([(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)], float),
}


def _distinct_assignments(layout: np.ndarray) -> np.ndarray:
    """Ways to assign n points to a layout's n positions, one per class of assignments
    that differ by a symmetry of the layout (an affine fit cannot tell those apart)."""
    n = len(layout)
    index = {tuple(pt): i for i, pt in enumerate(layout.tolist())}
    symmetries = []
    for m in ([[1, 0], [0, 1]], [[0, -1], [1, 0]], [[-1, 0], [0, -1]], [[0, 1], [-1, 0]],
              [[1, 0], [0, -1]], [[-1, 0], [0, 1]], [[0, 1], [1, 0]], [[0, -1], [-1, 0]]):
        moved = [tuple(pt) for pt in (layout @ np.array(m, float).T).tolist()]
        if all(pt in index for pt in moved):
            symmetries.append([index[pt] for pt in moved])
    kept = []
    for perm in itertools.permutations(range(n)):
        if all(perm <= tuple(sym[k] for k in perm) for sym in symmetries):
            kept.append(perm)
    return np.array(kept)


_PERMS = {n: _distinct_assignments(t) for n, t in _LAYOUTS.items()}
# Layout points where a face has no pip: they show the plain face.
_EMPTY: dict[int, np.ndarray] = {
    2: np.array([(-1, 1), (1, -1), (0, 0), (0, 1), (0, -1), (1, 0), (-1, 0)], float),
    3: np.array([(-1, 1), (1, -1), (0, 1), (0, -1), (1, 0), (-1, 0)], float),
    4: np.array([(0, 0), (0, 1), (0, -1), (1, 0), (-1, 0)], float),
    5: np.array([(0, 1), (0, -1), (1, 0), (-1, 0)], float),
    6: np.array([(0, -1), (0, 0), (0, 1)], float),
}
_PINV = {
    n: np.linalg.pinv(np.hstack([t, np.ones((len(t), 1))])) for n, t in _LAYOUTS.items()
}


@dataclass(frozen=True)
class Pips:
    """Pip candidates as parallel arrays (one entry per blob)."""

    polarity: np.ndarray  # 0 dark pip, 1 light pip
    x: np.ndarray
    y: np.ndarray
    major: np.ndarray  # ellipse axes (px)
    minor: np.ndarray
    angle: np.ndarray  # major axis direction (radians)
    contrast: np.ndarray  # weakest ring contrast (grey levels)
    colour: np.ndarray  # (n, 3) median BGR of the ring: the colour of the face around it
    diameter: np.ndarray = field(init=False)  # sqrt(major * minor)
    ratio: np.ndarray = field(init=False)  # major / minor

    def __post_init__(self) -> None:
        object.__setattr__(self, "diameter", np.sqrt(self.major * self.minor))
        object.__setattr__(self, "ratio", self.major / np.maximum(self.minor, 1e-6))

    def __len__(self) -> int:
        return len(self.x)


@dataclass(frozen=True)
class Face:
    value: int
    members: tuple[int, ...]
    centre: tuple[float, float]
    half_size: float  # half the die face's width (px)
    angle: float
    fit: float  # 0..1 layout quality
    axes: np.ndarray | None = None  # layout units -> px (see FaceFit)


def _empty_pips() -> Pips:
    z = np.zeros(0)
    return Pips(z, z, z, z, z, z, z, np.zeros((0, 3)))


def _grey(image: np.ndarray) -> np.ndarray:
    """The green channel: it separates red from cream and white from black best (the
    grey mix keeps much of a red die's red, which makes it as bright as wood)."""
    if image.ndim == 2:
        return image
    return cv2.extractChannel(image, 1)


def find_pip_candidates(image: np.ndarray) -> Pips:
    """Every compact blob, darker or lighter than its surroundings, that could be a pip."""
    colour_img = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    grey = _grey(image)
    # 1080p webcams are noisier per pixel than the pips are small: smooth a little more
    ksize = 3 if max(grey.shape) <= 1000 else 5
    grey = cv2.GaussianBlur(grey, (ksize, ksize), 0)
    local_mean = cv2.blur(grey, (_BLOCK, _BLOCK), borderType=cv2.BORDER_REPLICATE)
    parts: list[tuple] = []
    for polarity in (0, 1):
        # dark pips: mean - grey >= C; light pips: grey - mean >= C (saturating uint8)
        if polarity == 0:
            src, diff = grey, cv2.subtract(local_mean, grey)
        else:
            src, diff = 255 - grey, cv2.subtract(grey, local_mean)
        found = _blobs(src, diff, _C, colour_img, polarity, None)
        # again at 2C: that parts pips which merged at C (close pips, a blurred frame);
        # blobs that are only the core of one found at C are skipped
        found += _blobs(src, diff, 2 * _C, colour_img, polarity, np.array(found).reshape(-1, 10))
        parts += found
    if not parts:
        return _empty_pips()
    a = np.array(parts, float)
    a = a[_not_containers(a)]
    a = a[np.lexsort((a[:, 1], a[:, 2]))]  # top to bottom, left to right: order-free output
    return Pips(*(a[:, k] for k in range(7)), a[:, 7:10])


def _blobs(
    src: np.ndarray,
    diff: np.ndarray,
    threshold: int,
    colour_img: np.ndarray,
    polarity: int,
    found: np.ndarray | None,
) -> list[tuple]:
    """Pip-like blobs where ``diff`` >= threshold, as rows of Pips' fields; none within
    half a diameter of a blob in ``found``."""
    height, width = src.shape
    _, mask = cv2.threshold(diff, threshold - 1, 1, cv2.THRESH_BINARY)
    # contours are ~10x faster than labelling the whole frame; the boundary length is
    # free and rules out specks and long streaks before any other work (CCOMP: blobs
    # inside another blob's hole, like pips ringed by a die's shadow, are outer outlines
    # too; the holes' own outlines are dropped)
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    if hierarchy is None:
        return []
    contours = [
        c
        for c, link in zip(contours, hierarchy[0], strict=True)
        if link[3] < 0 and _MIN_BOUNDARY <= len(c) <= _MAX_BOUNDARY
    ]
    if not contours:
        return []
    boxes, area, cx_all, cy_all = _outline_stats(contours)
    w, h = boxes[:, 2], boxes[:, 3]
    ok_shape = (
        (area >= _MIN_AREA)
        & (area <= _MAX_AREA)
        & (area >= 0.35 * w * h)
        & (np.maximum(w, h) <= 4 * np.minimum(w, h) + 2)
    )
    if found is not None and len(found):
        near = np.hypot(
            cx_all[:, None] - found[None, :, 1], cy_all[:, None] - found[None, :, 2]
        ) < 0.5 * np.sqrt(found[None, :, 3] * found[None, :, 4])
        ok_shape &= ~near.any(axis=1)
    keep = np.nonzero(ok_shape)[0]
    if len(keep) == 0:
        return []
    cx, cy = cx_all[keep], cy_all[keep]
    radius = 0.5 * np.maximum(w[keep], h[keep])
    ring = 1.25 * radius + 1.5
    xs = np.clip(np.rint(cx[:, None] + ring[:, None] * _COS), 0, width - 1).astype(int)
    ys = np.clip(np.rint(cy[:, None] + ring[:, None] * _SIN), 0, height - 1).astype(int)
    centre_val = src[
        np.clip(np.rint(cy), 0, height - 1).astype(int),
        np.clip(np.rint(cx), 0, width - 1).astype(int),
    ].astype(np.int16)
    ring_diff = src[ys, xs].astype(np.int16) - centre_val[:, None]
    # the weakest but _RING_SKIP: a neighbouring pip may cover a sample, a line two
    ring_contrast = np.partition(ring_diff, _RING_SKIP, axis=1)[:, _RING_SKIP]
    ok = np.nonzero(
        (ring_contrast >= _MIN_RING_CONTRAST)
        & ((area[keep] >= _SMALL_AREA) | (ring_contrast >= _SMALL_RING_CONTRAST))
    )[0]
    if len(ok) == 0:
        return []
    ring_bgr = np.median(colour_img[ys[ok], xs[ok]].astype(float), axis=1)
    rows = []
    for k, j in enumerate(ok):
        # the blob's own pixels give its ellipse (a traced outline runs through the
        # boundary pixels' centres: too thin for small pips)
        x, y, bw, bh = (int(v) for v in boxes[keep[j]])
        blob = np.zeros((bh, bw), np.uint8)
        cv2.drawContours(blob, [contours[keep[j]]], 0, 1, thickness=-1, offset=(-x, -y))
        m = cv2.moments(blob, binaryImage=True)
        if m["m00"] <= 0:
            continue
        bx, by = x + m["m10"] / m["m00"], y + m["m01"] / m["m00"]
        mu20, mu02, mu11 = m["mu20"] / m["m00"], m["mu02"] / m["m00"], m["mu11"] / m["m00"]
        half_diff = math.sqrt(((mu20 - mu02) / 2) ** 2 + mu11**2)
        l1 = (mu20 + mu02) / 2 + half_diff
        l2 = (mu20 + mu02) / 2 - half_diff
        major = 4 * math.sqrt(max(l1, 1e-6))
        minor = 4 * math.sqrt(max(l2, 1e-6))
        theta = 0.5 * math.atan2(2 * mu11, mu20 - mu02)
        rows.append((polarity, bx, by, major, minor, theta, ring_contrast[j], *ring_bgr[k]))
    return rows


def _outline_stats(contours) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For traced outlines, all at once: boxes (x, y, w, h), pixel counts (by Pick's
    theorem: polygon area + boundary / 2 + 1) and centres (of the polygon; of the box
    for degenerate outlines)."""
    lens = np.array([len(c) for c in contours])
    pts = np.concatenate(contours).reshape(-1, 2).astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    x, y = pts[:, 0], pts[:, 1]
    x0, x1 = np.minimum.reduceat(x, starts), np.maximum.reduceat(x, starts)
    y0, y1 = np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts)
    nxt = np.arange(1, len(pts) + 1)
    nxt[starts + lens - 1] = starts
    cross = x * y[nxt] - x[nxt] * y
    twice_area = np.add.reduceat(cross, starts)
    area = np.abs(twice_area) / 2 + lens / 2 + 1
    boxes = np.column_stack([x0, y0, x1 - x0 + 1, y1 - y0 + 1])
    ok = np.abs(twice_area) > 1e-9
    safe = np.where(ok, twice_area, 1.0)
    cx = np.where(ok, np.add.reduceat((x + x[nxt]) * cross, starts) / (3 * safe), (x0 + x1) / 2)
    cy = np.where(ok, np.add.reduceat((y + y[nxt]) * cross, starts) / (3 * safe), (y0 + y1) / 2)
    return boxes, area, cx, cy


def _not_containers(a: np.ndarray) -> np.ndarray:
    """False for blobs with smaller blobs inside them (a whole die face, not a pip)."""
    xy = a[:, 1:3]
    diam = np.sqrt(a[:, 3] * a[:, 4])
    dist = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    inside = (dist < 0.45 * a[:, 3][:, None]) & (diam[None, :] < 0.6 * diam[:, None])
    return ~inside.any(axis=1)


# ---------------------------------------------------------------- layouts


@dataclass(frozen=True)
class FaceFit:
    """How a set of pips fits a face: ``axes`` maps layout units to pixels (columns)."""

    quality: float  # 0..1
    grid: float  # px per layout unit
    angle: float  # degrees, 0..90
    centre: tuple[float, float]
    axes: np.ndarray | None  # 2x2, None for a lone pip


def _fit_grid(points: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Best affine fit of 4, 5 or 6 points to their layout: (sum sq err, 2x2, offset)."""
    n = len(points)
    xp = points[_PERMS[n]]  # (P, n, 2)
    affine = _PINV[n] @ xp  # (P, 3, 2)
    layout = np.hstack([_LAYOUTS[n], np.ones((n, 1))])
    err = ((layout @ affine - xp) ** 2).sum(axis=(1, 2))
    best = int(np.argmin(err))
    return float(err[best]), affine[best, :2, :].T, affine[best, 2, :]


def _diagonal_axes(v: np.ndarray) -> np.ndarray:
    """Axes of a square face whose layout point (1, 1) is at centre + v."""
    w = np.array([-v[1], v[0]])  # (1, -1), for a square face seen nearly face-on
    return np.column_stack([(v + w) / 2, (v - w) / 2])


def fit_face(points: np.ndarray, diam: float) -> FaceFit | None:
    """Do these top-face pips form a die face? ``diam`` is the mean pip diameter."""
    n = len(points)
    centre = points.mean(axis=0)
    if n == 1:
        return FaceFit(1.0, 1.1 * diam, 0.0, (float(centre[0]), float(centre[1])), None)
    if n in (2, 3):
        if n == 2:
            ends, quality = points, 0.85
        else:
            order = np.argsort(np.hypot(*(points - centre).T))
            mid, ends = points[order[0]], points[order[1:]]
        span = float(np.hypot(*(ends[1] - ends[0])))
        grid = span / (2 * math.sqrt(2))
        if span <= 0 or not _GRID_MIN <= grid / diam <= _GRID_MAX:
            return None
        if n == 3:
            off = float(np.hypot(*(mid - ends.mean(axis=0)))) / grid
            if off > 0.3:
                return None
            quality = max(0.0, 1.0 - off / 0.45)
        centre = ends.mean(axis=0)
        vec = ends[1] - centre
        angle = (math.degrees(math.atan2(vec[1], vec[0])) - 45.0) % 90.0
        return FaceFit(quality, grid, angle, (float(centre[0]), float(centre[1])),
                       _diagonal_axes(vec))
    if n > 6:
        return None
    err, axes, offset = _fit_grid(points)
    sv = np.linalg.svd(axes, compute_uv=False)
    if sv[1] <= 1e-6:
        return None
    grid = math.sqrt(sv[0] * sv[1])
    rms = math.sqrt(err / n) / grid
    skew = sv[0] / sv[1]
    if rms > _MAX_FIT_ERR or skew > _MAX_SKEW or not _GRID_MIN <= grid / diam <= _GRID_MAX:
        return None
    quality = max(0.0, 1.0 - rms / (_MAX_FIT_ERR * 1.6)) * max(0.0, 1.0 - (skew - 1) / 3)
    angle = math.degrees(math.atan2(axes[1, 0], axes[0, 0])) % 90.0
    return FaceFit(quality, grid, angle, (float(offset[0]), float(offset[1])), axes)


# ---------------------------------------------------------------- grouping


def _links(p: Pips, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(linked, may_share_a_face) between round pips: alike, and closer than _LINK or
    _FACE_SPAN pip diameters respectively."""
    xy = np.column_stack([p.x[idx], p.y[idx]])
    d = p.diameter[idx]
    dist = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    mean_d = (d[:, None] + d[None, :]) / 2
    size_ratio = np.maximum(d[:, None], d[None, :]) / np.minimum(d[:, None], d[None, :])
    col = p.colour[idx]
    col_diff = np.linalg.norm(col[:, None, :] - col[None, :, :], axis=2)
    same_pol = p.polarity[idx][:, None] == p.polarity[idx][None, :]
    # pips of one face are seen through one projection: alike in shape and direction
    ratio = p.ratio[idx]
    ang = p.angle[idx]
    turn = np.abs(((ang[:, None] - ang[None, :]) + np.pi / 2) % np.pi - np.pi / 2)
    elongated = np.minimum(ratio[:, None], ratio[None, :]) > _SHAPE_RATIO
    ratio_of_ratios = np.maximum(ratio[:, None], ratio[None, :]) / np.minimum(
        ratio[:, None], ratio[None, :]
    )
    alike = (ratio_of_ratios <= _SHAPE_DIFF) & (
        ~elongated | (turn <= _SHAPE_TURN)
    )
    compatible = (
        alike & (size_ratio <= _MAX_SIZE_RATIO) & (col_diff <= _MAX_COLOUR_DIFF) & same_pol
    )
    adj = compatible & (dist <= _LINK * mean_d)
    np.fill_diagonal(adj, False)
    may_share = compatible & (dist <= _FACE_SPAN * mean_d)
    np.fill_diagonal(may_share, True)
    return adj, may_share


def _components(adj: np.ndarray) -> list[list[int]]:
    n = len(adj)
    seen = np.zeros(n, bool)
    comps = []
    for start in range(n):
        if seen[start]:
            continue
        stack, comp = [start], []
        seen[start] = True
        while stack:
            k = stack.pop()
            comp.append(k)
            for nb in np.nonzero(adj[k] & ~seen)[0]:
                seen[nb] = True
                stack.append(int(nb))
        comps.append(sorted(comp))
    return comps


def _make_face(p: Pips, members: list[int], fit: FaceFit) -> Face:
    return Face(
        len(members), tuple(members), fit.centre, 2.3 * fit.grid, fit.angle, fit.quality,
        fit.axes,
    )


def _try(p: Pips, members: list[int]) -> Face | None:
    pts = np.column_stack([p.x[members], p.y[members]])
    fit = fit_face(pts, float(p.diameter[members].mean()))
    return None if fit is None else _make_face(p, members, fit)


def _cliques(nodes: list[int], nbrs: dict[int, set[int]], k: int):
    """Every k-subset of ``nodes`` whose members are all neighbours of each other."""

    def grow(clique: list[int], cands: list[int]):
        if len(clique) == k:
            yield clique
            return
        for n, v in enumerate(cands):
            if len(clique) + len(cands) - n < k:
                return
            yield from grow(clique + [v], [u for u in cands[n + 1 :] if u in nbrs[v]])

    yield from grow([], sorted(nodes))


def _split(
    p: Pips,
    comp: list[int],
    may_share: np.ndarray,
    pos: dict[int, int],
    score: Callable[[Face], float],
) -> list[Face]:
    """A linked group that is no single face (touching dice, stray blobs): take out the
    largest best-scoring face, repeat. Lone pips left over may each be a "1"."""
    nbrs = {
        i: {j for j in comp if j != i and may_share[pos[i], pos[j]]} for i in comp
    }
    faces: list[Face] = []
    left = list(comp)
    budget = _SPLIT_BUDGET
    tried: dict[tuple[int, ...], tuple[Face | None, float]] = {}
    while left and budget > 0:
        best: Face | None = None
        best_score = 0.0
        for k in range(min(6, len(left)), 1, -1):
            for subset in _cliques(left, nbrs, k):
                key = tuple(subset)
                if key not in tried:
                    budget -= 1
                    if budget <= 0:
                        break
                    face = _try(p, subset)
                    tried[key] = (face, 0.0 if face is None else score(face))
                face, face_score = tried[key]
                if face is not None and face_score > best_score:
                    best, best_score = face, face_score
            if best is not None or budget <= 0:
                break
        if best is None:
            break
        faces.append(best)
        left = [i for i in left if i not in best.members]
    faces.extend(Face(1, (i,), (float(p.x[i]), float(p.y[i])), 0.0, 0.0, 0.5) for i in left)
    return faces


def _pair_lone_pips(p: Pips, faces: list[Face], score: Callable[[Face], float]) -> list[Face]:
    """Small-pip dice put a 2's pips further apart than the link distance: pair up lone
    pips that are each other's nearest twin (same polarity, size, shape and face colour)
    at up to _PAIR_SPAN diameters, when the pair fits a 2 with every empty layout point
    plain (two touching dice showing 1 have their seam there)."""
    lone = [f.members[0] for f in faces if f.value == 1]
    if len(lone) < 2:
        return faces
    idx = np.array(lone)
    xy = np.column_stack([p.x[idx], p.y[idx]])
    d = p.diameter[idx]
    ratio = p.ratio[idx]
    dist = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    twin = (
        (p.polarity[idx][:, None] == p.polarity[idx][None, :])
        & (np.maximum(d[:, None], d[None, :]) <= _PAIR_ALIKE * np.minimum(d[:, None], d[None, :]))
        & (
            np.maximum(ratio[:, None], ratio[None, :])
            <= _PAIR_ALIKE * np.minimum(ratio[:, None], ratio[None, :])
        )
        & (np.linalg.norm(p.colour[idx][:, None] - p.colour[idx][None, :], axis=2) <= 40.0)
        & (dist <= _PAIR_SPAN * (d[:, None] + d[None, :]) / 2)
    )
    np.fill_diagonal(twin, False)
    near = np.where(twin, dist, np.inf)
    nearest = near.argmin(axis=1)
    paired: dict[int, Face] = {}
    for a, b in enumerate(nearest):
        if a < b and np.isfinite(near[a, b]) and nearest[b] == a:
            face = _try(p, [int(idx[a]), int(idx[b])])
            if face is not None and score(face) >= face.fit * 0.999:
                paired[int(idx[a])] = paired[int(idx[b])] = face
    if not paired:
        return faces
    out = [f for f in faces if not (f.value == 1 and f.members[0] in paired)]
    out.extend({id(f): f for f in paired.values()}.values())
    return out


def _share_like_rays(
    smooth: np.ndarray,
    centre: tuple[float, float],
    colour: np.ndarray,
    radii: np.ndarray,
    tol: float,
) -> np.ndarray:
    """(len(radii), _RING) booleans: is the colour at that radius and direction within
    tol of ``colour``? ``smooth`` is the frame at half size."""
    h, w = smooth.shape[:2]
    r = np.asarray(radii, float)[:, None]
    xs = np.clip(np.rint((centre[0] + r * _COS) / 2), 0, w - 1).astype(int)
    ys = np.clip(np.rint((centre[1] + r * _SIN) / 2), 0, h - 1).astype(int)
    return np.linalg.norm(smooth[ys, xs].astype(float) - colour, axis=2) <= tol


def _plain_around(smooth: np.ndarray, p: Pips, i: int) -> float:
    """For a lone pip: the share of rings just outside it that match the face colour
    around it (a die face is plain there; wood grain or a cable is not)."""
    centre, d = (float(p.x[i]), float(p.y[i])), float(p.diameter[i])
    like = _share_like_rays(smooth, centre, p.colour[i], np.array([1.1 * d, 1.5 * d]), 40.0)
    return float(like.mean(axis=1).min())


def _face_colour(p: Pips, members: list[int]) -> np.ndarray:
    """The face's colour: the median over its pips' ring colours."""
    if len(members) == 1:
        return p.colour[members[0]]
    cols = p.colour[members].tolist()
    return np.array([statistics.median(c[k] for c in cols) for k in range(3)])


def _plain_between(smooth: np.ndarray, p: Pips, face: Face) -> float:
    """The share of the face's empty layout points that show the face's colour."""
    if face.axes is None or face.value not in _EMPTY:
        return 1.0
    members = list(face.members)
    colour = _face_colour(p, members)
    pts = np.asarray(face.centre) + _EMPTY[face.value] @ face.axes.T
    h, w = smooth.shape[:2]
    xs = np.clip(np.rint(pts[:, 0] / 2), 0, w - 1).astype(int)
    ys = np.clip(np.rint(pts[:, 1] / 2), 0, h - 1).astype(int)
    diff = np.linalg.norm(smooth[ys, xs].astype(float) - colour, axis=1)
    return float((diff <= 40.0).mean())


def _stands_out(smooth: np.ndarray, p: Pips, face: Face) -> float:
    """The share of rings at 3.5-5.5 pip diameters from the face's centre, off the die,
    whose colour differs from the face's: a die stands out from the table, a pair of
    dark spots on the wood does not."""
    members = list(face.members)
    colour = _face_colour(p, members)
    d = float(p.diameter[members].mean())
    like = _share_like_rays(smooth, face.centre, colour, d * _EDGE_RADII, 30.0)
    return 1.0 - float(like.mean())


def read_pip_dice(
    image: np.ndarray, *, min_confidence: float = DEFAULT_MIN_CONFIDENCE
) -> list[DieReading]:
    """Every pip die in a BGR uint8 image, with its top face ("1".."6" or "unknown")."""
    if image is None or image.size == 0:
        return []
    if image.dtype != np.uint8:
        raise ValueError(f"expected a uint8 image, got {image.dtype}")
    if image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    pips = find_pip_candidates(image)
    if len(pips) == 0:
        return []
    round_idx = np.nonzero(pips.ratio <= _MAX_ROUND_RATIO)[0]
    if len(round_idx) == 0:
        return []
    colour_img = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    smooth = cv2.pyrDown(colour_img)

    def score(face: Face) -> float:
        return face.fit * _plain_between(smooth, pips, face) ** 3

    adj, may_share = _links(pips, round_idx)
    pos = {int(g): k for k, g in enumerate(round_idx)}
    faces: list[Face] = []
    for comp in _components(adj):
        members = [int(round_idx[k]) for k in comp]
        whole = _try(pips, members) if len(members) > 1 else None
        if whole is not None:
            faces.append(whole)
        elif len(members) == 1:
            faces.append(Face(1, tuple(members), (float(pips.x[members[0]]),
                                                  float(pips.y[members[0]])), 0.0, 0.0, 1.0))
        else:
            faces.extend(_split(pips, members, may_share, pos, score))
    faces = _pair_lone_pips(pips, faces, score)

    height, width = image.shape[:2]
    kept: list[tuple[Face, float, float]] = []  # (face, confidence, half size)
    for face in faces:
        members = list(face.members)
        contrast = float(pips.contrast[members].min())
        roundness = statistics.median(pips.ratio[members].tolist())
        conf = face.fit
        conf *= min(1.0, contrast / 60.0) ** 0.5
        conf *= max(0.0, 1.0 - max(0.0, roundness - 1.6) / 1.0)
        half = face.half_size
        edge = _stands_out(smooth, pips, face)
        plain_face = _plain_between(smooth, pips, face)
        if plain_face < _PLAIN_MIN:
            continue
        conf *= plain_face**3
        if face.value > 1 and edge < _EDGE_MIN:
            continue
        if face.value == 2 and (edge < _EDGE_MIN_PAIR or roundness > _MAX_RATIO_PAIR):
            continue  # two blobs are the weakest layout: ask more of them
        if face.value == 1:
            i = members[0]
            plain = _plain_around(smooth, pips, i)
            small = pips.major[i] * pips.minor[i] * math.pi / 4 < _SMALL_AREA
            if plain < 0.75 or roundness > 1.6 or contrast < 40 or small:
                continue
            if edge < _EDGE_MIN_LONE:
                continue
            conf *= plain
            half = 2.4 * float(pips.diameter[i])
        if conf < min(_MIN_DIE_CONFIDENCE, min_confidence):
            continue  # too weak to be called a die at all, even an unreadable one
        kept.append((face, conf, half))
    kept = _top_faces_only(pips, kept)

    readings = []
    for face, conf, half in kept:
        cx, cy = face.centre
        box = (
            max(0, int(round(cx - half))),
            max(0, int(round(cy - half))),
            min(width - 1, int(round(cx + half))),
            min(height - 1, int(round(cy + half))),
        )
        label = str(face.value) if conf >= min_confidence else UNKNOWN
        readings.append(
            DieReading(
                dice_set="pip",
                face=label,
                confidence=round(conf, 4),
                box=box,
                centre=(cx, cy),
                angle=face.angle,
            )
        )
    return readings


def _top_faces_only(
    pips: Pips, faces: list[tuple[Face, float, float]]
) -> list[tuple[Face, float, float]]:
    """Two faces closer than a die's width belong to one die: keep the one facing the
    camera, whose pips are the roundest (then the largest)."""
    n = len(faces)
    if n < 2:
        return faces
    centre = np.array([f.centre for f, _, _ in faces])
    half = np.array([h for _, _, h in faces])
    flat = np.array([float(pips.ratio[list(f.members)].mean()) for f, _, _ in faces])
    size = np.array([float(pips.diameter[list(f.members)].mean()) for f, _, _ in faces])
    dist = np.hypot(*(centre[:, None, :] - centre[None, :, :]).transpose(2, 0, 1))
    same_die = dist < _SAME_DIE * np.maximum(half[:, None], half[None, :])
    drop = np.zeros(n, bool)
    for a in range(n):
        for b in range(n):
            if a == b or not same_die[a, b]:
                continue
            # b is a side face if its pips are flatter (and not much bigger: tiny blobs
            # look round whatever their shape), or much smaller
            if (flat[b] > flat[a] + _FLATTER and size[a] >= size[b] / _SMALLER) or (
                size[b] < size[a] / _SMALLER
            ):
                drop[b] = True
    return [f for f, d in zip(faces, drop, strict=True) if not d]
