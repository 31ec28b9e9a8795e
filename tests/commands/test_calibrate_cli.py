"""`companion calibrate`: the mat print, the guided steps, and the profile it writes."""

from __future__ import annotations

import math
import shutil
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import cv2
import numpy as np
import pytest

from companion.cli import build_parser, main
from companion.commands import calibrate as calibrate_cmd
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
from companion.vision.profile import default_profile_path, load_profile
from companion.vision.profile_head import profile_check
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
    assert captured.out.rstrip().endswith(
        'check: passed: "challenge" may be turned on ([camera] claims)')
    assert not (out / "mat_a3.png").exists()
    preview = cv2.imread(str(out / "preview.jpg"))
    assert preview is not None and preview.shape[:2] == (594, 840)

    profile = load_profile(out)
    assert profile.name == "synthetic"
    assert profile.check is not None and profile.check.rounds == 3
    assert profile.check.dice == 48 and profile.check.passed
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


def test_check_only_rewrites_the_check_and_keeps_the_rest(tmp_path, capsys) -> None:
    out = tmp_path / "prof"
    shutil.copytree(default_profile_path(), out)
    toml = out / "profile.toml"
    rest = toml.read_text().split("\n[check]")[0]
    toml.write_text(rest + "\n")  # a profile never checked
    faces = {p: p.read_bytes() for p in out.rglob("*.png")}
    args = build_parser().parse_args(["calibrate", "--check-only", "--source", "synthetic:5",
                                      "--check-rounds", "2", "--seed", "3", "--out", str(out)])
    when = datetime(2026, 12, 6, 11, 30, 5, tzinfo=timezone(timedelta(hours=2)))
    assert calibrate_cmd.run(args, clock=lambda: when) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == 'check: passed: "challenge" may be turned on ([camera] claims)'
    assert printed[-2].startswith("check: 32 dice in 2 roll(s): ")
    text = toml.read_text()
    assert text.startswith(rest) and text.count("[check]") == 1
    assert {p: p.read_bytes() for p in out.rglob("*.png")} == faces
    assert not (out / "mat_a3.png").exists()
    check = profile_check(out)
    assert check is not None and (check.rounds, check.dice) == (2, 32)
    assert check.when == "2026-12-06T09:30:05Z"


def test_check_only_says_in_one_line_what_is_wrong(tmp_path, capsys) -> None:
    assert main(["calibrate", "--check-only", "--source", "synthetic", "--check-rounds", "0",
                 "--out", str(default_profile_path())]) == 2
    assert main(["calibrate", "--check-only", "--source", "synthetic",
                 "--out", str(tmp_path / "none")]) == 1
    assert main(["calibrate", "--source", "synthetic", "--check-rounds", "-1",
                 "--out", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "--check-rounds of at least 1" in err[0]
    assert "profile not found" in err[1]
    assert "--check-rounds must be 0 or more" in err[2]
    assert not (tmp_path / "none").exists()


def test_the_shipped_profiles_check_is_what_the_command_gives(tmp_path, capsys) -> None:
    """calibration/README.md's command for the shipped [check], run again on a copy."""
    shipped = profile_check(default_profile_path())
    assert shipped is not None and shipped.passed
    out = tmp_path / "synthetic"
    shutil.copytree(default_profile_path(), out)
    assert main(["calibrate", "--check-only", "--source", "synthetic", "--check-rounds",
                 str(shipped.rounds), "--out", str(out)]) == 0
    again = profile_check(out)
    assert again is not None and replace(again, when=shipped.when) == shipped


def test_a_check_that_cannot_finish_keeps_the_faces_taught(tmp_path, capsys, monkeypatch):
    from companion.vision import calibrate_check

    def no_mat(*_a, **_k):
        raise CalibrationError("check, roll 1: the camera does not see marker(s) 2")

    monkeypatch.setattr(calibrate_check, "run_check", no_mat)
    out = tmp_path / "p"
    assert main(["calibrate", "--source", "synthetic:2", "--yes", "--samples", "1",
                 "--no-mat", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the profile is written without its check" in err[0]
    profile = load_profile(out)
    assert profile.check is None and len(profile.templates) == 42
