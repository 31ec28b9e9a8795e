"""The play mat: find it in a frame by its ArUco corner markers, and print it.

``find_mat(image)`` detects the four markers (OpenCV's ArucoDetector, dictionary from
``mat_spec``) and fits the homography from frame pixels to the mat's top-down view;
three markers are enough (twelve corners still fix a homography). It returns a
``MatView`` that warps frames to the top-down view (``spec.px_per_mm`` pixels a
millimetre) and converts points between frame pixels, view pixels and mat millimetres.
Without enough markers it returns None and the pipeline works on the whole frame.

``render_mat(spec, dpi)`` draws the printable mat (felt green, a marker in each corner);
``companion calibrate`` adds the seat zones and writes the PNG/PDF, and the synthetic
renderer lays dice on it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.vision.mat_spec import ARUCO_DICT, DEFAULT_MAT, MatSpec

MM_PER_INCH = 25.4
# Detect markers on a copy this wide, then (if any is missing) at most DETECT_MAX_WIDTH;
# corners are then refined at full size.
DETECT_FAST_WIDTH = 800
DETECT_MAX_WIDTH = 1280
# Reject a fit whose marker corners miss their mat positions by more than this (mm).
MAX_FIT_ERROR_MM = 4.0

_local = threading.local()


def _detector() -> cv2.aruco.ArucoDetector:
    """One ArucoDetector per thread (the detector object is not documented thread-safe)."""
    det = getattr(_local, "detector", None)
    if det is None:
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, ARUCO_DICT))
        params = cv2.aruco.DetectorParameters()
        det = cv2.aruco.ArucoDetector(dictionary, params)
        _local.detector = det
    return det


def _as_points(points: np.ndarray | tuple | list) -> np.ndarray:
    return np.asarray(points, dtype=np.float64).reshape(-1, 2)


def _apply(h: np.ndarray, points: np.ndarray | tuple | list) -> np.ndarray:
    pts = _as_points(points)
    if not len(pts):
        return pts
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), h).reshape(-1, 2)


@dataclass(frozen=True)
class MatView:
    """Where the mat lies in one frame.

    homography: 3x3, frame pixels -> mat millimetres.
    markers: ids of the markers found.
    corners: frame-pixel corners of every marker found, keyed by id (TL, TR, BR, BL).
    fit_error_mm: RMS distance between the found corners, mapped to the mat, and
        where the spec says they are.
    """

    spec: MatSpec
    homography: np.ndarray
    markers: tuple[int, ...]
    corners: dict[int, np.ndarray]
    fit_error_mm: float
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def view_homography(self) -> np.ndarray:
        """3x3, frame pixels -> top-down view pixels (what ``warp`` applies)."""
        s = self.spec.px_per_mm
        return np.diag([s, s, 1.0]) @ self.homography

    def warp(self, image: np.ndarray, interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
        """The top-down view of the mat, ``spec.view_size`` pixels.

        The per-pixel source coordinates are computed once per MatView and kept (fixed
        point), so warping every frame of a stream is a plain remap: well over twice
        as fast as warpPerspective, the same picture to within rounding."""
        maps = self._cache.get("maps")
        if maps is None:
            w, h = self.spec.view_size
            xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
            grid = np.stack([xs, ys], axis=-1).reshape(-1, 1, 2)
            src = cv2.perspectiveTransform(grid, np.linalg.inv(self.view_homography))
            src = src.reshape(h, w, 2)
            maps = cv2.convertMaps(src[..., 0], src[..., 1], cv2.CV_16SC2)
            self._cache["maps"] = maps
        return cv2.remap(image, maps[0], maps[1], interpolation,
                         borderMode=cv2.BORDER_REPLICATE)

    def same_place(self, other: MatView | None, tolerance_px: float = 0.75) -> bool:
        """True when ``other`` found the same markers within tolerance_px (frame pixels):
        the camera has not moved, and this view (with its warp maps) can stay."""
        if other is None or other.markers != self.markers or other.spec != self.spec:
            return False
        return all(
            float(np.abs(self.corners[m] - other.corners[m]).max()) <= tolerance_px
            for m in self.markers
        )

    def frame_to_mm(self, points: np.ndarray | tuple | list) -> np.ndarray:
        """(N, 2) frame pixels -> (N, 2) mat millimetres."""
        return _apply(self.homography, points)

    def mm_to_frame(self, points: np.ndarray | tuple | list) -> np.ndarray:
        """(N, 2) mat millimetres -> (N, 2) frame pixels."""
        return _apply(np.linalg.inv(self.homography), points)

    def frame_to_view(self, points: np.ndarray | tuple | list) -> np.ndarray:
        return self.frame_to_mm(points) * self.spec.px_per_mm

    def view_to_frame(self, points: np.ndarray | tuple | list) -> np.ndarray:
        return self.mm_to_frame(_as_points(points) / self.spec.px_per_mm)

    def outline(self) -> np.ndarray:
        """The mat's four corners (TL, TR, BR, BL) in frame pixels, (4, 2)."""
        w, h = self.spec.width_mm, self.spec.height_mm
        return self.mm_to_frame([(0, 0), (w, 0), (w, h), (0, h)])

    def contains_mm(self, xy: tuple[float, float], inset_mm: float = 0.0) -> bool:
        x, y = xy
        return (inset_mm <= x <= self.spec.width_mm - inset_mm
                and inset_mm <= y <= self.spec.height_mm - inset_mm)

    def in_marker_mm(self, xy: tuple[float, float], pad_mm: float = 3.0) -> bool:
        """True when a mat point lies on (or within pad_mm of) a corner marker."""
        x, y = xy
        for quad in self.spec.marker_corners_mm().values():
            (x0, y0), _, (x1, y1), _ = quad
            if x0 - pad_mm <= x <= x1 + pad_mm and y0 - pad_mm <= y <= y1 + pad_mm:
                return True
        return False


def _detect_at(gray: np.ndarray, width: int, wanted: set[int]) -> tuple[dict, float]:
    scale = 1.0
    small = gray
    if gray.shape[1] > width:
        scale = width / gray.shape[1]
        small = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    corners, ids, _ = _detector().detectMarkers(small)
    found: dict[int, np.ndarray] = {}
    if ids is not None:
        for quad, mid in zip(corners, ids.ravel(), strict=True):
            mid = int(mid)
            if mid in wanted and mid not in found:
                found[mid] = quad.reshape(4, 2).astype(np.float32) / scale
    return found, scale


def detect_markers(image: np.ndarray, spec: MatSpec = DEFAULT_MAT) -> dict[int, np.ndarray]:
    """The mat's markers in a frame: {id: (4, 2) frame-pixel corners}, others ignored.

    Looks on a copy DETECT_FAST_WIDTH wide first (markers of a mat that fills the frame
    are big); when that misses any, looks again at up to DETECT_MAX_WIDTH. Corners are
    refined to sub-pixel precision on the full-size frame either way.
    """
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    wanted = set(spec.marker_ids)
    found, scale = _detect_at(gray, DETECT_FAST_WIDTH, wanted)
    if len(found) < len(wanted) and gray.shape[1] > DETECT_FAST_WIDTH:
        again, again_scale = _detect_at(gray, DETECT_MAX_WIDTH, wanted)
        if len(again) > len(found):
            found, scale = again, again_scale
    if found:
        pts = np.concatenate(list(found.values())).reshape(-1, 1, 2)
        win = max(3, int(round(2 / scale)))
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.05)
        refined = cv2.cornerSubPix(gray, pts, (win, win), (-1, -1), criteria).reshape(-1, 4, 2)
        found = {mid: refined[i] for i, mid in enumerate(found)}
    return found


def fit_mat(found: dict[int, np.ndarray], spec: MatSpec = DEFAULT_MAT,
            min_markers: int = 3) -> MatView | None:
    """The MatView from detected marker corners, or None when too few or inconsistent."""
    if len(found) < min_markers:
        return None
    truth = spec.marker_corners_mm()
    ids = sorted(found)
    src = np.concatenate([found[i] for i in ids]).astype(np.float64)
    dst = np.concatenate([np.asarray(truth[i], np.float64) for i in ids])
    h, _ = cv2.findHomography(src, dst, 0)
    if h is None or not np.all(np.isfinite(h)):
        return None
    mapped = _apply(h, src)
    err = float(np.sqrt(np.mean(np.sum((mapped - dst) ** 2, axis=1))))
    if err > MAX_FIT_ERROR_MM:
        return None
    return MatView(spec, h, tuple(ids), {i: found[i] for i in ids}, err)


def find_mat(
    image: np.ndarray, spec: MatSpec = DEFAULT_MAT, min_markers: int = 3
) -> MatView | None:
    """Find the mat in a BGR or grey frame; None when fewer than min_markers are seen."""
    return fit_mat(detect_markers(image, spec), spec, min_markers)


def render_mat(spec: MatSpec = DEFAULT_MAT, dpi: float = 150.0) -> np.ndarray:
    """The printable mat at ``dpi``, BGR: the one `companion calibrate` prints (felt
    green, so dice stand out from it, seat zones, an ArUco marker in each corner)."""
    from companion.vision.synthetic import draw_mat

    return draw_mat(spec, px_per_mm=dpi / MM_PER_INCH)
