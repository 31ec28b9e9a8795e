"""`companion eval MANIFEST.csv [--json] [--predictions FILE]` on a few real photos (read
in place from the shared dataset, never copied) and on broken inputs."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main

REPO = Path(__file__).resolve().parents[2]
PHOTOS = REPO.parent / "shared" / "datasets" / "dice-photos"
JSON_KEYS = ["images", "labelled", "predicted", "matched", "precision", "recall",
             "face_accuracy", "end_to_end", "unknown", "ms_per_image_median",
             "wrong_confident", "missed", "intervals"]


def real_manifest(tmp_path, per_set=3) -> tuple[Path, int, set[str]]:
    """A manifest in tmp_path pointing (absolute paths) at a few photos of each set."""
    rows, images = [], []
    for name in ("webcam-white-d6", "webcam-two-d6"):
        labels = PHOTOS / name / "labels.csv"
        if not labels.is_file():
            pytest.skip(f"photo set not found: {labels}")
        with labels.open(newline="") as fh:
            chosen: list[str] = []
            for row in csv.DictReader(fh):
                if row["image"] not in chosen:
                    if len(chosen) == per_set:
                        continue
                    chosen.append(row["image"])
                path = str((labels.parent / row["image"]).resolve())
                rows.append([path, row["face"], row["x0"], row["y0"], row["x1"], row["y1"]])
            images += [str((labels.parent / c).resolve()) for c in chosen]
    manifest = tmp_path / "few.csv"
    with manifest.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image", "face", "x0", "y0", "x1", "y1"])
        writer.writerows(rows)
    return manifest, len(rows), set(images)


def drawn_die_photo(path: Path, face_pips=((-1, -1), (1, 1))) -> None:
    """A plain table with one white die showing two pips, saved as an image file."""
    img = np.full((240, 320, 3), (120, 140, 150), np.uint8)
    cv2.rectangle(img, (130, 90), (190, 150), (235, 238, 240), -1)
    for gx, gy in face_pips:
        cv2.circle(img, (160 + 16 * gx, 120 + 16 * gy), 5, (25, 25, 30), -1, cv2.LINE_AA)
    cv2.imwrite(str(path), img)


def test_json_figures_on_real_photos(tmp_path, capsys):
    manifest, n_dice, _ = real_manifest(tmp_path)
    assert main(["eval", str(manifest), "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    figures = json.loads(out[0])
    assert list(figures) == JSON_KEYS
    assert figures["images"] == 6
    assert figures["labelled"] == n_dice
    assert figures["matched"] <= min(figures["predicted"], figures["labelled"])
    assert figures["precision"] >= 0.9
    assert figures["end_to_end"] >= 0.8
    assert figures["ms_per_image_median"] > 0
    assert figures["missed"] == figures["labelled"] - figures["matched"]
    assert 0.0 <= figures["wrong_confident"] <= 1.0 - figures["end_to_end"]
    # each figure's 95% interval over the 6 photos (none of them copies of another)
    spread = figures["intervals"]
    assert spread["source_photos"] == 6 and spread["level"] == 0.95
    for key in ("end_to_end", "wrong_confident", "precision", "recall"):
        low, high = spread[key]
        assert 0.0 <= low <= round(figures[key], 6) + 1e-6 and figures[key] - 1e-6 <= high <= 1.0


def test_text_report_and_predictions_file(tmp_path, capsys):
    manifest, _, images = real_manifest(tmp_path, per_set=2)
    predictions = tmp_path / "out" / "pred.csv"
    predictions.parent.mkdir()
    assert main(["eval", str(manifest), "--predictions", str(predictions)]) == 0
    text = capsys.readouterr().out
    for needle in ("precision", "recall", "face accuracy", "end-to-end", "read as unknown",
                   "confidently wrong", "median ms/image", "confusion"):
        assert needle in text
    assert len([line for line in text.splitlines() if line.startswith(("   1", "   6"))]) == 2
    assert "95% intervals over the 4 source photos" in text
    assert re.search(r"end-to-end \d+\.\d\d%-\d+\.\d\d%, confidently wrong", text)
    with predictions.open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["image", "face", "x0", "y0", "x1", "y1", "confidence"]
    assert len(rows) > 1
    for image, face, x0, y0, x1, y1, conf in rows[1:]:
        assert image in images
        assert face in {"1", "2", "3", "4", "5", "6", "unknown"}
        assert int(x0) <= int(x1) and int(y0) <= int(y1)
        assert 0.0 <= float(conf) <= 1.0


def test_unreadable_and_truncated_images_are_named_and_skipped(tmp_path, capsys):
    good = tmp_path / "good.png"
    drawn_die_photo(good)
    ok, jpeg = cv2.imencode(".jpg", cv2.imread(str(good)))
    assert ok
    (tmp_path / "cut.jpg").write_bytes(jpeg.tobytes()[: len(jpeg) // 2])
    (tmp_path / "junk.jpg").write_bytes(b"this is no picture at all")
    png = good.read_bytes()
    (tmp_path / "cut.png").write_bytes(png[: len(png) - 40])
    manifest = tmp_path / "labels.csv"
    manifest.write_text("image,face,x0,y0,x1,y1\n"
                        "good.png,2,130,90,190,150\n"
                        "cut.jpg,2,130,90,190,150\n"
                        "junk.jpg,5,0,0,10,10\n"
                        "cut.png,2,130,90,190,150\n"
                        "missing.jpg,1,0,0,10,10\n")
    assert main(["eval", str(manifest), "--json"]) == 0
    captured = capsys.readouterr()
    figures = json.loads(captured.out)
    assert figures["images"] == 1 and figures["labelled"] == 1
    assert figures["end_to_end"] == 1.0
    errors = captured.err.strip().splitlines()
    for name in ("cut.jpg", "junk.jpg", "cut.png", "missing.jpg"):
        assert len([e for e in errors if name in e]) == 1, errors
    assert any("truncated" in e and "cut.jpg" in e for e in errors)
    assert errors[-1] == "companion eval: 4 unreadable image(s) skipped"


def test_missing_manifest_and_bad_rows_exit_2(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "nope.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "manifest not found" in err[0] and "nope.csv" in err[0]
    bad = tmp_path / "bad.csv"
    bad.write_text("image,face,x0,y0,x1,y1\nx.jpg,2,0,0,10,10\nx.jpg,9,0,0,10,10\n")
    assert main(["eval", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "bad.csv:3" in err[0] and "'9'" in err[0]


def test_every_image_missing_exits_1_with_one_line(tmp_path, capsys):
    manifest = tmp_path / "labels.csv"
    manifest.write_text("image,face,x0,y0,x1,y1\nnone1.jpg,1,0,0,10,10\nnone2.jpg,2,0,0,9,9\n")
    assert main(["eval", str(manifest), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("companion eval: none of the 2 images could be "
                                               "read (first: ") and "none1.jpg" in err[0]


def test_learned_reader_selectable(tmp_path, capsys):
    if not (REPO / "companion" / "data" / "models" / "detector.onnx").is_file():
        pytest.skip("no learned model committed yet")
    manifest, n_dice, _ = real_manifest(tmp_path)
    assert main(["eval", str(manifest), "--reader", "learned"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pip dice (learned reader) on ")
    assert f"labelled dice     {n_dice}" in out
    assert main(["eval", str(manifest), "--reader", "learned", "--model",
                 str(tmp_path / "nomodel")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model not found" in err[0]


def test_fewshot_profile_from_manifest_reads_another_set(tmp_path, capsys):
    if not (PHOTOS / "webcam-white-d6" / "labels.csv").is_file():
        pytest.skip(f"photo sets not found under {PHOTOS}")
    if not (REPO / "companion" / "data" / "models" / "detector.onnx").is_file():
        pytest.skip("no learned model committed yet")
    out_dir = tmp_path / "few"
    assert main(["calibrate", "--from-manifest", str(PHOTOS / "webcam-white-d6" / "labels.csv"),
                 "--shots", "3", "--out", str(out_dir)]) == 0
    text = capsys.readouterr().out
    assert "6 faces" in text and (out_dir / "prototypes.json").is_file()
    written = json.loads((out_dir / "prototypes.json").read_text())
    score = ("sure (the networks' mean)" if written["embedding"] == "members"
             else "similar")
    faint = ("" if written["det_low_threshold"] is None else
             f", or from {written['det_low_threshold']:g} when the nearest face is at "
             f"least {written['low_similarity']:g} {score}")
    assert (f"; {written['embedding']} embedding; dice read from detector score "
            f"{written['det_threshold']:g}{faint})") in text
    assert "[learned]" in (out_dir / "profile.toml").read_text()
    manifest, n_dice, _ = real_manifest(tmp_path)
    assert main(["eval", str(manifest), "--profile", str(out_dir), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["labelled"] == n_dice and figures["recall"] >= 0.3
    assert main(["eval", str(manifest), "--profile", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no few-shot prototypes" in err[0]
    # a profile made by other networks than this model's: one line naming it
    written["upright_files"] = ["classifier_upright_other.onnx"]
    (out_dir / "prototypes.json").write_text(json.dumps(written))
    assert main(["eval", str(manifest), "--profile", str(out_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(out_dir) in err[0]
    assert "built with upright classifiers ['classifier_upright_other.onnx']" in err[0]


def test_each_read_photo_keeps_its_key_and_score(tmp_path):
    """evaluate_manifest hands back every photo it read with its own score (what the
    bootstrap intervals resample), and leaves an unreadable one out of them."""
    from companion.vision.evaluate import evaluate_manifest, load_manifest

    good, broken = tmp_path / "die.png", tmp_path / "broken.png"
    drawn_die_photo(good)
    broken.write_bytes(b"not an image")
    manifest = tmp_path / "m.csv"
    manifest.write_text("image,face,x0,y0,x1,y1\ndie.png,2,130,90,190,150\n"
                        "broken.png,3,10,10,40,40\n")
    res = evaluate_manifest(load_manifest(manifest), on_error=lambda _: None)
    assert [k for k, _ in res.image_scores] == ["die.png"]
    assert res.unreadable == ["broken.png"]
    (_, score), = res.image_scores
    assert score.labelled == 1 and score.correct == res.summary.correct
