"""The play mat's geometry: shared by the mat printer, the mat finder and the
synthetic renderer so that all three agree. Millimetres throughout.

The mat is A3 landscape with an ArUco marker (OpenCV's DICT_4X4_50) inside each
corner: id 0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left. Each marker's
outer corner sits MARGIN_MM from the mat's edges. The top-down view the pipeline
works in is the whole mat at PX_PER_MM pixels a millimetre.
"""

from __future__ import annotations

from dataclasses import dataclass

ARUCO_DICT = "DICT_4X4_50"


@dataclass(frozen=True)
class MatSpec:
    width_mm: float = 420.0
    height_mm: float = 297.0
    marker_mm: float = 40.0
    margin_mm: float = 10.0
    px_per_mm: float = 2.0
    marker_ids: tuple[int, int, int, int] = (0, 1, 2, 3)  # TL, TR, BR, BL

    def marker_corners_mm(self) -> dict[int, tuple[tuple[float, float], ...]]:
        """Each marker's four corners (TL, TR, BR, BL, as ArUco reports them) in mm."""
        m, s, w, h = self.margin_mm, self.marker_mm, self.width_mm, self.height_mm
        origins = [(m, m), (w - m - s, m), (w - m - s, h - m - s), (m, h - m - s)]
        out = {}
        for mid, (x, y) in zip(self.marker_ids, origins, strict=True):
            out[mid] = ((x, y), (x + s, y), (x + s, y + s), (x, y + s))
        return out

    @property
    def view_size(self) -> tuple[int, int]:
        """(width, height) in pixels of the top-down view."""
        return round(self.width_mm * self.px_per_mm), round(self.height_mm * self.px_per_mm)


DEFAULT_MAT = MatSpec()
