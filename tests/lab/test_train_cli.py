"""`python -m reader_lab train` refuses bad options with one line, before loading photos or
torch."""

from __future__ import annotations

import pytest

from reader_lab.cli import main


@pytest.mark.parametrize("extra, names", [
    (["--det-scale", "0", "1.5"], "--det-scale 0 1.5: needs 0 < LO <= HI"),
    (["--det-scale", "2", "1"], "--det-scale 2 1: needs 0 < LO <= HI"),
    (["--small-weight", "0"], "--small-weight 0: needs at least 1"),
    (["--part-negatives", "1.5"], "--part-negatives 1.5: needs a share from 0 to 1"),
    (["--false-peaks", "/nowhere"], "--false-peaks /nowhere: no detector.onnx there"),
    (["--die-boxes", "/nowhere"], "--die-boxes /nowhere: no detector.onnx there"),
    (["--hard-photos", "/nowhere"], "--hard-photos /nowhere: no detector.onnx there"),
    (["--hard-share", "0"], "--hard-share 0: needs a share above 0, at most 1"),
    (["--det-stretch", "0.5"], "--det-stretch 0.5: needs a ratio from 1 to 4"),
    (["--dye-share", "-0.1"], "--dye-share -0.1: needs a share from 0 to 1"),
    (["--unreadable-share", "1"], "--unreadable-share 1: needs a share from 0 to below 1"),
    (["--unreadable-share", "-0.2"], "--unreadable-share -0.2: needs a share from 0 to below 1"),
    (["--hard-weight", "0"], "--hard-weight 0: needs at least 1"),
    (["--hard-dice", "/nowhere"], "--hard-dice /nowhere: no reader.json there"),
    # issue 9b
    (["--soft-dice", "/nowhere"], "--soft-dice /nowhere: no reader.json there"),
    (["--soft-share", "0"], "--soft-share 0: needs a share above 0, at most 1"),
    (["--soft-share", "1.5"], "--soft-share 1.5: needs a share above 0, at most 1"),
    # issue 9g
    (["--low-res-share", "1.5"], "--low-res-share 1.5: needs a share from 0 to 1"),
    (["--low-res-share", "-0.1"], "--low-res-share -0.1: needs a share from 0 to 1"),
    (["--tune-sizes", "416", "500"], "--tune-sizes 416 500: each a multiple of 32 from 64 to 2048"),
    (["--tune-views", "3"], "--tune-views 3: each 1, 2, 4 or 8"),
    (["--ema", "1"], "--ema 1: needs a decay from 0 (off) to below 1"),
    (["--ema", "-0.5"], "--ema -0.5: needs a decay from 0 (off) to below 1"),
    (["--cls-crop", "8"], "--cls-crop 8: needs a side from 16 to 256 px"),
    (["--cls-crop", "512"], "--cls-crop 512: needs a side from 16 to 256 px"),
    (["--cls-span", "0.5"], "--cls-span 0.5: needs from 0.8 to 4 die sides"),
    # issue 8y: a step count of 0 trained nothing for minutes; --threads 0 was torch's
    # RuntimeError
    (["--det-steps", "0"], "--det-steps 0: needs at least 1"),
    (["--cls-steps", "-1"], "--cls-steps -1: needs at least 1"),
    (["--upright-steps", "0"], "--upright-steps 0: needs at least 1"),
    (["--threads", "0"], "--threads 0: needs at least 1"),
    (["--rendered", "-1"], "--rendered -1: needs 0 or more scenes"),
    (["--cls-width", "0"], "--cls-width 0: needs a multiplier from 0.25 to 4"),
    # issue 8z: the parts must tile the last feature map (48 px: 3 cells, 64 px: 4)
    (["--cls-grid", "2"], "--cls-grid 2: needs a whole divisor of the 3 cells across a "
                          "48 px crop's last feature map (e.g. 1)"),
    (["--cls-grid", "3", "--cls-crop", "64"], "--cls-grid 3: needs a whole divisor of the 4 "
                                              "cells across a 64 px crop's last feature map "
                                              "(e.g. 1)"),
    (["--wide-box-jitter"], "--wide-box-jitter: spreads crops on --die-boxes DIR's boxes; "
                            "give that too"),
    # issue 9w
    (["--init-lr", "1e-4"], "--init-lr: sets a fine-tune's rate; give --init DIR too"),
    (["--init-lr", "0", "--init", "/nowhere"], "--init-lr 0: needs a rate above 0, at most 0.01"),
    (["--init-lr", "0.1", "--init", "/nowhere"],
     "--init-lr 0.1: needs a rate above 0, at most 0.01"),
    # issue 9v
    (["--rated-negatives", "/nowhere"], "--rated-negatives /nowhere: needs key.csv and two "
                                        "rater-*.csv files (found 0)"),
    # issue 9y
    (["--sure-phantoms", "/nowhere"], "--sure-phantoms /nowhere: no reader.json there"),
    (["--cls-grid", "0"], "--cls-grid 0: needs a whole divisor of the 3 cells across a 48 px "
                          "crop's last feature map (e.g. 1)"),
])
def test_bad_options_are_one_line(tmp_path, capsys, extra, names):
    assert main(["train", "--out", str(tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"reader_lab train: {names}"
    assert not (tmp_path / "run").exists()


def test_a_cache_that_is_a_file_is_one_line(tmp_path, capsys):
    """Issue 9w: --cache names a folder (made when missing); a file there is refused."""
    f = tmp_path / "cache"
    f.write_text("")
    assert main(["train", "--out", str(tmp_path / "run"), "--cache", str(f)]) == 2
    assert capsys.readouterr().err.strip() == f"reader_lab train: --cache {f}: not a folder"


def test_init_without_the_network_asked_for_names_it(tmp_path, capsys):
    init = tmp_path / "init"
    init.mkdir()
    (init / "detector.onnx").write_bytes(b"")  # a detector, but no classifier
    code = main(["train", "--out", str(tmp_path / "run"), "--init", str(init),
                 "--part", "det", "--part", "cls"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"reader_lab train: --init {init}: neither classifier.pt nor "
                   "classifier.onnx there")


def test_the_small_dice_split_with_two_tenths_is_one_line(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--out", str(run), "--part", "tune", "--val-tenths", "2",
                 "--tray-small-val"]) == 2
    assert capsys.readouterr().err.strip() == (
        "reader_lab train: --val-tenths 2 --tray-small-val: no such split "
        "(--tray-small-val goes with --val-tenths 1)")


@pytest.mark.parametrize("recorded, extra, had, asked", [
    ('{"val_tenths": 2}', ["--val-tenths", "1"], "--val-tenths 2", "--val-tenths 1"),
    ('{"val_tenths": 1}', ["--webcam-val"], "--val-tenths 1", "--val-tenths 1 --webcam-val"),
    ('{"val_tenths": 1, "webcam_val": true}', ["--tray-small-val"],
     "--val-tenths 1 --webcam-val", "--val-tenths 1 --webcam-val --tray-small-val")])
def test_a_part_with_another_split_than_the_folders_is_one_line(tmp_path, capsys, recorded,
                                                                extra, had, asked):
    run = tmp_path / "run"
    run.mkdir()
    (run / "split.json").write_text(recorded + "\n")
    assert main(["train", "--out", str(run), "--part", "tune", *extra]) == 2
    assert capsys.readouterr().err.strip() == (
        f"reader_lab train: {run}: its networks were trained with {had}, not {asked}")


@pytest.mark.parametrize("key, extra, want", [
    ("camera_aug", [], False), ("camera_aug", ["--camera-aug"], True),
    ("area_crops", [], False), ("area_crops", ["--area-crops"], True),
    ("tray_small_val", [], None), ("tray_small_val", ["--tray-small-val"], True),
    ("low_res_share", [], 0.1), ("low_res_share", ["--low-res-share", "0.4"], 0.4),
    ("dye_share", [], 0.0), ("dye_share", ["--dye-share", "0.5"], 0.5),
    ("unreadable_share", [], 0.0), ("unreadable_share", ["--unreadable-share", "0.15"], 0.15),
    ("rated_negatives", [], None),
    ("rated_negatives", ["--rated-negatives", "reader_lab/benchmarks/box_audit_9u/train"],
     "reader_lab/benchmarks/box_audit_9u/train"),
    ("cache_dir", [], None), ("cache_dir", ["--cache", "/tmp/c"], "/tmp/c")])
def test_classifier_crop_options_reach_training(tmp_path, monkeypatch, key, extra, want):
    seen = _options_reaching_training(tmp_path, monkeypatch, extra)
    assert seen[key] == want and type(seen[key]) is type(want)


def _options_reaching_training(tmp_path, monkeypatch, extra: list[str]) -> dict:
    """The keywords `reader_lab train --part cls-upright EXTRA` hands to training (a
    photo root that passes the check; training itself replaced)."""
    pytest.importorskip("torch")
    from reader_lab import train_reader

    seen: dict = {}
    monkeypatch.setattr(train_reader, "train", lambda out, **kw: seen.update(kw))
    photos = tmp_path / "photos" / "table-mixed-d6"
    photos.mkdir(parents=True)
    (photos / "labels_test.csv").write_text("")
    assert main(["train", "--out", str(tmp_path / "run"), "--photos",
                 str(tmp_path / "photos"), "--part", "cls-upright", *extra]) == 0
    return seen


@pytest.mark.parametrize("extra, want", [([], 1e-3), (["--init-lr", "2e-4"], 2e-4)])
def test_a_fine_tunes_rate_reaches_training(tmp_path, monkeypatch, extra, want):
    init = tmp_path / "init"
    init.mkdir()
    (init / "classifier_upright.onnx").write_bytes(b"")
    seen = _options_reaching_training(tmp_path, monkeypatch, ["--init", str(init), *extra])
    assert seen["init_lr"] == want


def test_tuning_a_folder_with_no_networks_is_one_line(tmp_path, capsys):
    """--part tune where no detector was trained: the reader's own one line, no traceback
    (it was a ModelMissing traceback)."""
    pytest.importorskip("torch")
    from reader_lab import dice_photos

    if not dice_photos.available():
        pytest.skip("photo sets missing")
    run = tmp_path / "run"
    assert main(["train", "--out", str(run), "--part", "tune"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"reader_lab train: learned reader model not found in {run}")


def test_a_checkpoint_that_will_not_resume_is_one_line(tmp_path, capsys):
    """Issue 9d: a half-written or foreign <network>.resume.pt in the folder is named in
    one line before any photo is read, and left where it is."""
    pytest.importorskip("torch")
    photos = tmp_path / "photos" / "table-mixed-d6"
    photos.mkdir(parents=True)
    (photos / "labels_test.csv").write_text("")
    run = tmp_path / "run"
    run.mkdir()
    checkpoint = run / "classifier_upright.resume.pt"
    checkpoint.write_bytes(b"half a file")
    assert main(["train", "--out", str(run), "--photos", str(tmp_path / "photos"),
                 "--part", "cls-upright"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"reader_lab train: {checkpoint}: cannot resume from it: ")
    assert err.count("\n") == 1 and checkpoint.read_bytes() == b"half a file"


def test_ctrl_c_is_one_line_saying_the_same_command_goes_on(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    from reader_lab import train_reader

    def stopped(out, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_reader, "train", stopped)
    photos = tmp_path / "photos" / "table-mixed-d6"
    photos.mkdir(parents=True)
    (photos / "labels_test.csv").write_text("")
    run = tmp_path / "run"
    assert main(["train", "--out", str(run), "--photos", str(tmp_path / "photos"),
                 "--part", "det"]) == 130
    assert capsys.readouterr().err == ("reader_lab train: stopped; the same command goes on "
                                       f"from the last checkpoint (every 500 steps) in {run}\n")


def test_the_labs_command_line_loads_neither_opencv_numpy_nor_torch():
    """``python -m reader_lab --help`` (every command's options, train's defaults among
    them) is quick: the parser is built from plain Python only."""
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-c", "import sys; from reader_lab.cli import "
                          "build_parser; build_parser(); print(sorted(m for m in ('cv2', "
                          "'numpy', 'torch', 'onnx') if m in sys.modules))"],
                         cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
