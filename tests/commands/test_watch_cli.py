"""`companion watch`: settled readings on stdout, bad frames named on stderr, annotated PNGs."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.commands.watch import describe_settled
from companion.vision.synthetic import pip_dice_specs, render_scene
from companion.vision.types import DieReading, FrameReading


def photo_folder(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for i, seed in enumerate((1, 2)):
        image, _ = render_scene(seed, dice=pip_dice_specs(3), width=1280, height=720,
                                lighting="flat", perspective=False, touching=0.0)
        cv2.imwrite(str(folder / f"{i * 2}.png"), image)
    ok, jpeg = cv2.imencode(".jpg", image)
    (folder / "1.jpg").write_bytes(jpeg.tobytes()[:1000])  # truncated on the way
    return folder


def test_watch_a_folder_with_annotated_frames(tmp_path, capsys):
    out = tmp_path / "annotated"
    assert main(["watch", str(photo_folder(tmp_path)), "--save-annotated", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines and lines[0].startswith("frame 0: ")
    assert all(line.startswith(("frame 0: ", "frame 2: ")) for line in lines)
    assert "mm" in lines[0]  # the mat was found: positions in mat millimetres
    err = captured.err.splitlines()
    assert any("skipped" in e and "1.jpg" in e for e in err)
    assert err[-1].startswith("2 frames, 1 skipped")
    written = sorted(p.name for p in out.iterdir())
    assert written == ["000000.png", "000002.png"]
    annotated = cv2.imread(str(out / "000000.png"))
    original = cv2.imread(str(tmp_path / "photos" / "0.png"))
    assert annotated.shape == original.shape
    assert np.abs(annotated.astype(int) - original.astype(int)).sum() > 0  # boxes drawn


def test_watch_the_synthetic_camera_for_n_frames(capsys):
    assert main(["watch", "synthetic:5", "--frames", "6"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("6 frames, 0 skipped")


def test_watch_a_missing_source_is_a_one_line_error(tmp_path, capsys):
    missing = tmp_path / "nowhere.mp4"
    assert main(["watch", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and len(err.strip().splitlines()) == 1


def test_watch_a_video_file_to_its_end(tmp_path, capsys):
    image, _ = render_scene(3, dice=pip_dice_specs(2), width=640, height=480, lighting="flat")
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (640, 480))
    for _ in range(5):
        writer.write(image)
    writer.release()
    assert main(["watch", str(path), "--settle", "2"]) == 0
    assert capsys.readouterr().err.splitlines()[-1].startswith("5 frames, 0 skipped")


def test_describe_settled():
    reading = FrameReading(640, 480, (
        DieReading("pip", "6", 0.93, (0, 0, 10, 10), (5.0, 50.0), mat_xy=(12.0, 30.4)),
        DieReading("red", "alarm", 0.88, (0, 0, 10, 10), (5.0, 5.0)),
    ), True, 17)
    assert describe_settled(reading) == (
        "frame 17: 2 dice: red alarm (0.88) @5,5px | 6 (0.93) @12,30mm")
    assert describe_settled(FrameReading(640, 480, (), False, 3)) == "frame 3: no dice settled"


def test_a_profile_that_cannot_be_loaded_is_a_clear_error(capsys):
    assert main(["watch", "synthetic", "--profile", "/nonexistent/profile"]) == 2
    assert "cannot load profile /nonexistent/profile" in capsys.readouterr().err


def test_an_empty_profile_is_no_profile_as_in_sim(tmp_path, capsys):
    # sim's --profile "" and the config's profile = "" mean none; watch reads pip dice
    assert main(["watch", str(photo_folder(tmp_path)), "--profile", ""]) == 0
    captured = capsys.readouterr()
    assert "cannot load profile" not in captured.err
    assert captured.out.splitlines()[0].startswith("frame 0: 3 dice: ")


def test_an_empty_profile_keeps_the_shipped_one_off_the_synthetic_table(capsys):
    assert main(["watch", "synthetic:5", "--frames", "2"]) == 0
    assert "using the shipped profile" in capsys.readouterr().err
    assert main(["watch", "synthetic:5", "--frames", "2", "--profile", ""]) == 0
    assert "using the shipped profile" not in capsys.readouterr().err


def test_no_pips_without_a_profile_is_refused(tmp_path, capsys):
    assert main(["watch", str(photo_folder(tmp_path)), "--no-pips"]) == 2
    assert "--no-pips needs --profile" in capsys.readouterr().err


def test_watch_with_a_bad_settle_count(capsys):
    assert main(["watch", "synthetic", "--settle", "0"]) == 2
    assert "--settle" in capsys.readouterr().err


def test_watch_with_the_learned_reader(tmp_path, capsys):
    from companion.vision.learned import MODEL_DIR

    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no learned model committed")
    assert main(["watch", str(photo_folder(tmp_path)), "--reader", "learned"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and lines[0].startswith("frame 0: ")
