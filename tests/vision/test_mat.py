"""The mat: printed with its markers, found again under perspective, mm <-> pixels."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision.mat import MM_PER_INCH, find_mat, render_mat
from companion.vision.mat_spec import DEFAULT_MAT

DPI = 100.0
MAT = render_mat(DEFAULT_MAT, DPI)
PX_PER_MM = DPI / MM_PER_INCH


def photograph(corners_px, size, mat=MAT):
    """The printed mat seen by a camera: a perspective warp onto a green table."""
    h, w = mat.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    warp = cv2.getPerspectiveTransform(src, np.float32(corners_px))
    frame = cv2.warpPerspective(mat, warp, size, borderValue=(40, 110, 50))
    # mm -> frame pixels, the truth to compare against
    truth = warp @ np.diag([PX_PER_MM, PX_PER_MM, 1.0])
    return frame, truth


def to_frame(truth, pts):
    return cv2.perspectiveTransform(np.float64(pts).reshape(-1, 1, 2), truth).reshape(-1, 2)


OBLIQUE_720 = [(150, 60), (1150, 95), (1215, 680), (85, 650)]
MM_POINTS = [(100.0, 100.0), (300.0, 200.0), (210.0, 148.5), (30.0, 270.0)]


def test_render_mat_size_and_markers():
    h, w = MAT.shape[:2]
    assert (w, h) == (round(420 * PX_PER_MM), round(297 * PX_PER_MM))
    assert MAT.dtype == np.uint8 and MAT.shape[2] == 3
    view = find_mat(MAT)
    assert view is not None and view.markers == (0, 1, 2, 3)
    # The middle of the mat is felt green (dice stand out from it); a marker's border is
    # black.
    b, g, r = MAT[h // 2, w // 2].tolist()
    assert g > r and g > b
    x, y = DEFAULT_MAT.marker_corners_mm()[0][0]
    assert MAT[round(y * PX_PER_MM) + 2, round(x * PX_PER_MM) + 2].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "size,scale", [((640, 480), 0.5), ((1280, 720), 1.0), ((1920, 1080), 1.5)]
)
def test_homography_round_trip_under_perspective(size, scale):
    frame, truth = photograph([(x * scale, y * scale) for x, y in OBLIQUE_720], size)
    view = find_mat(frame)
    assert view is not None
    assert view.markers == (0, 1, 2, 3)
    assert view.fit_error_mm < 1.0
    expected_px = to_frame(truth, MM_POINTS)
    assert np.abs(view.mm_to_frame(MM_POINTS) - expected_px).max() < 1.5
    assert np.abs(view.frame_to_mm(expected_px) - MM_POINTS).max() < 1.0
    # and back again exactly
    back = view.frame_to_mm(view.mm_to_frame(MM_POINTS))
    assert np.abs(back - MM_POINTS).max() < 1e-6
    view_px = view.frame_to_view(expected_px)
    assert np.abs(view_px / DEFAULT_MAT.px_per_mm - MM_POINTS).max() < 1.0
    assert np.abs(view.view_to_frame(view_px) - expected_px).max() < 1e-6


def test_warp_gives_the_top_down_view_at_known_scale():
    frame, _ = photograph(OBLIQUE_720, (1280, 720))
    view = find_mat(frame)
    top = view.warp(frame)
    w, h = DEFAULT_MAT.view_size
    assert top.shape == (h, w, 3)
    # The top-down view is the printed mat again, at spec.px_per_mm.
    expected = cv2.resize(MAT, (w, h), interpolation=cv2.INTER_AREA)
    diff = np.abs(top.astype(int) - expected.astype(int)).mean()
    assert diff < 12
    # and the markers sit where the spec puts them
    found = find_mat(top)
    assert found is not None
    s = DEFAULT_MAT.px_per_mm
    for mid, quad in DEFAULT_MAT.marker_corners_mm().items():
        assert np.abs(found.corners[mid] - np.float64(quad) * s).max() < 2.0


def test_three_markers_still_give_the_mat():
    frame, truth = photograph(OBLIQUE_720, (1280, 720))
    hidden = to_frame(truth, DEFAULT_MAT.marker_corners_mm()[2]).astype(np.int32)
    cv2.fillConvexPoly(frame, cv2.convexHull(hidden), (200, 170, 150))  # a hand on marker 2
    cv2.circle(frame, tuple(hidden.mean(axis=0).astype(int)), 80, (200, 170, 150), -1)
    view = find_mat(frame)
    assert view is not None
    assert view.markers == (0, 1, 3)
    assert np.abs(view.mm_to_frame(MM_POINTS) - to_frame(truth, MM_POINTS)).max() < 2.0
    assert find_mat(frame, min_markers=4) is None


def test_no_markers_no_mat():
    table = np.full((480, 640, 3), (40, 110, 50), np.uint8)
    cv2.rectangle(table, (200, 150), (260, 210), (250, 250, 250), -1)  # a die, not a mat
    assert find_mat(table) is None
    assert find_mat(cv2.cvtColor(table, cv2.COLOR_BGR2GRAY)) is None


def test_mat_regions():
    view = find_mat(MAT)
    assert view.contains_mm((210, 150))
    assert not view.contains_mm((-5, 150))
    assert not view.contains_mm((425, 150))
    assert view.in_marker_mm((30, 30))  # marker 0 spans 10..50 mm
    assert view.in_marker_mm((400, 280))
    assert not view.in_marker_mm((210, 150))
    outline = view.outline()
    assert outline.shape == (4, 2)
    h, w = MAT.shape[:2]
    assert np.abs(outline - [(0, 0), (w, 0), (w, h), (0, h)]).max() < 2.0


def test_warp_matches_warp_perspective_and_same_place():
    frame, _ = photograph(OBLIQUE_720, (1280, 720))
    view = find_mat(frame)
    fast = view.warp(frame)
    slow = cv2.warpPerspective(frame, view.view_homography, DEFAULT_MAT.view_size,
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    assert np.abs(fast.astype(int) - slow.astype(int)).max() <= 8
    assert np.abs(fast.astype(int) - slow.astype(int)).mean() < 0.5
    assert view.same_place(find_mat(frame.copy()))
    moved, _ = photograph([(x + 6, y) for x, y in OBLIQUE_720], (1280, 720))
    assert not view.same_place(find_mat(moved))
    assert not view.same_place(None)
