"""`companion calibrate`: the mat print, the guided steps, and the profile it writes."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.calibrate import (
    CalibrationError,
    LiveTable,
    Step,
    SyntheticTable,
    calibrate,
    check_markers,
)
from companion.vision.dice_data import load_dice_data
from companion.vision.mat import find_mat
from companion.vision.profile import load_profile
from companion.vision.symbols import read_symbol_dice
from companion.vision.synthetic import render_scene, render_view
from companion.vision.types import UNKNOWN


def test_print_mat_only_writes_an_a3_mat_with_four_markers(tmp_path, capsys) -> None:
    assert main(["calibrate", "--print-mat-only", "--dpi", "60", "--out", str(tmp_path)]) == 0
    png = tmp_path / "mat_a3.png"
    img = cv2.imread(str(png))
    assert img is not None
    h, w = img.shape[:2]
    assert w / h == pytest.approx(420 / 297, rel=0.01)
    assert w == round(420 / 25.4 * 60)
    mat = find_mat(img)
    assert mat is not None and set(mat.markers) == {0, 1, 2, 3}
    pdf = tmp_path / "mat_a3.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert "mat_a3.png" in capsys.readouterr().out
    assert not (tmp_path / "profile.toml").exists()


def test_non_interactive_synthetic_calibration_writes_a_working_profile(tmp_path, capsys):
    out = tmp_path / "synthetic"
    code = main(["calibrate", "--source", "synthetic:3", "--yes", "--samples", "1",
                 "--no-mat", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "all four markers seen" in captured.out
    assert f"profile: {out / 'profile.toml'}" in captured.out
    assert not (out / "mat_a3.png").exists()
    preview = cv2.imread(str(out / "preview.jpg"))
    assert preview is not None and preview.shape[:2] == (594, 840)

    profile = load_profile(out)
    assert profile.name == "synthetic"
    assert len(profile.templates) == 15 + 15 + 6 + 6
    right = total = 0
    for seed in range(5):
        view, truth = render_view(seed)
        readings = read_symbol_dice(view, profile)
        for t in truth.dice:
            c = (t.mat_xy[0] * 2, t.mat_xy[1] * 2)
            near = [r for r in readings if math.dist(r.centre, c) < 12]
            total += 1
            right += bool(near) and (near[0].face, near[0].dice_set) == (t.face, t.dice_set)
    assert right / total >= 0.97


def test_bad_synthetic_seed_and_unopenable_camera(tmp_path, capsys) -> None:
    assert main(["calibrate", "--source", "synthetic:x", "--no-mat", "--yes",
                 "--out", str(tmp_path / "a")]) == 2
    assert "must be an integer" in capsys.readouterr().err
    missing = tmp_path / "no-such-video.mp4"
    assert main(["calibrate", "--source", str(missing), "--no-mat", "--yes",
                 "--out", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot open" in err[0]
    assert not (tmp_path / "b" / "profile.toml").exists()


def test_missing_markers_are_named() -> None:
    frame, _ = render_scene(2, dice=[], perspective=False)
    mat = find_mat(frame)
    assert mat is not None
    # Cover the bottom-right marker.
    (x, y), = mat.mm_to_frame([(390, 267)])
    frame[int(y) - 60:int(y) + 60, int(x) - 60:int(x) + 60] = (60, 128, 70)
    with pytest.raises(CalibrationError, match=r"marker\(s\) 2 \(bottom-right\)"):
        check_markers(frame)


class ScriptedTable:
    """A person who first leaves two dice on the mat, then does as asked."""

    def __init__(self) -> None:
        self.inner = SyntheticTable(1, load_dice_data())
        self.calls = 0

    def frame(self, step: Step) -> np.ndarray:
        self.calls += 1
        if step.kind == "face" and self.calls == 2:
            img, _ = render_scene(9, width=1280, height=720)  # all 16 dice: not one
            return img
        return self.inner.frame(step)


def test_a_crowded_mat_is_asked_again_and_a_refused_face_is_taught_again() -> None:
    data = load_dice_data()
    # Just one red die to teach, to keep the test short.
    data_small = replace(data, sets={"red": replace(data.sets["red"], dice=("alarm-1",))})
    answers = iter([False] + [True] * 20)
    log: list[str] = []
    result = calibrate(ScriptedTable(), data_small, "t", samples=1, log=log.append,
                       confirm=lambda q: next(answers))
    assert any("found 16" in line and "again" in line for line in log)
    assert any("red alarm: again" in line for line in log)
    assert set(result.profile.templates) == {("red", f) for f in data.kinds["alarm-1"]}
    assert result.preview.shape[:2] == (594, 840)


def test_live_table_reports_a_silent_camera() -> None:
    class Silent:
        description = "camera 7"

        def read(self):
            return None

    table = LiveTable(Silent(), ask=lambda _q: "")
    with pytest.raises(CalibrationError, match="camera 7: no frame came from the camera"):
        table.frame(Step("empty"))


def test_preview_marks_unknown_dice_differently() -> None:
    from companion.vision.calibrate import annotate
    from companion.vision.types import DieReading

    view, _ = render_view(1, dice=[])
    a = annotate(view, [DieReading("red", "alarm", 0.9, (100, 100, 140, 140), (120, 120))])
    b = annotate(view, [DieReading("red", UNKNOWN, 0.2, (100, 100, 140, 140), (120, 120))])
    assert not np.array_equal(a, view) and not np.array_equal(a, b)
