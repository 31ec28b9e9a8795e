"""What a device call brought back, judged by its rounds' gates and made a candidate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reader_lab import device_candidate as C
from tests.support.learned_model import MODEL_DIR, needs_model

DET_PASS = {"0.3": {"recall": 0.96, "precision": 0.93, "dice": 817, "found": 784,
                    "false": 59}}
FACES_PASS = {"table-val": {"dice": 316, "right": 0.95, "not_a_die": 0.0, "other_face": 0.05,
                            "table": 0, "table_right": 0.0},
              "trays-val": {"dice": 501, "right": 0.90, "not_a_die": 0.03, "other_face": 0.07,
                            "table": 501, "table_right": 0.99}}


def _det_record(val=DET_PASS, **extra):
    return {"steps_done": 9000, "steps": 60000, "this_call_steps": 9000,
            "train_seconds": 450.0, "device": "cuda", "device_name": "NVIDIA H200",
            "batch": 64, "size": 512, "val": val, **extra}


def _faces_record(val=FACES_PASS, **extra):
    return {"steps_done": 6000, "steps": 12000, "this_call_steps": 6000,
            "train_seconds": 420.0, "device": "cuda", "device_name": "NVIDIA H200",
            "batch": 512, "crop": 64, "width": 1.5, "metric": 0.5, "glyphs": 4000,
            "val": val, **extra}


def test_the_detectors_gate_is_round_64as():
    ok, line = C.detector_verdict(_det_record())
    assert ok and line.endswith("64a's gate (recall >= 95%, precision >= 90%): passed")
    assert "recall 96.0%, precision 93.0% at 0.3 (817 dice)" in line
    low = {"0.3": {**DET_PASS["0.3"], "recall": 0.949}}
    assert C.detector_verdict(_det_record(low))[0] is False
    loose = {"0.3": {**DET_PASS["0.3"], "precision": 0.89}}
    assert C.detector_verdict(_det_record(loose))[0] is False
    with pytest.raises(C.CandidateError, match="no val at 0.3"):
        C.detector_verdict(_det_record({"0.5": DET_PASS["0.3"]}))


@pytest.mark.parametrize("change", [
    ("table-val", "right", 0.939),      # under the model of record's 94.0%
    ("trays-val", "right", 0.891),
    ("table-val", "other_face", 0.058),  # more dice read as another face than 5.7%
    ("trays-val", "other_face", 0.077),
    ("trays-val", "table_right", 0.979),  # table read "not a die" under 98%
])
def test_the_faces_gate_is_round_64bs(change):
    assert C.faces_verdict(_faces_record())[0] is True
    name, key, value = change
    val = json.loads(json.dumps(FACES_PASS))
    val[name][key] = value
    ok, line = C.faces_verdict(_faces_record(val))
    assert ok is False and line.endswith("not passed")
    with pytest.raises(C.CandidateError, match="no val for table-val and trays-val"):
        C.faces_verdict(_faces_record({"table-val": FACES_PASS["table-val"]}))


def test_provenance_sums_the_calls_training_time():
    history = [_det_record(train_seconds=300.0, device_name="NVIDIA H100 80GB HBM3"),
               _det_record()]
    text = C.provenance("detector", history, "train_both.sh")
    assert text.startswith("issue 64: the big detector")
    assert "9000 of 60000 steps over 2 calls of train_both.sh, 12.5 minutes of training on " \
        in text
    assert "NVIDIA H100 80GB HBM3, NVIDIA H200" in text
    assert "1 call of" in C.provenance("faces", [_faces_record()], "x.sh")


def _call_files(tmp_path: Path, det_val=DET_PASS, faces_val=FACES_PASS) -> Path:
    files = tmp_path / "files"
    for name, rec, src, dst in (
            ("det", _det_record(det_val), "detector.onnx", C.DET_FILE),
            ("faces", _faces_record(faces_val), "classifier_upright.onnx", C.FACES_FILE)):
        (files / name).mkdir(parents=True)
        (files / name / "val.json").write_text(json.dumps([rec]))
        (files / name / "resume.pt").write_bytes(b"weights")
        # the model of record's own files stand in for the call's networks
        shutil.copyfile(MODEL_DIR / src, files / name / dst)
        for path in (files / name).iterdir():
            path.chmod(0o444)  # files_at is read-only
    return files


@needs_model
def test_networks_that_pass_become_a_candidate_folder(tmp_path, capsys):
    pytest.importorskip("onnx")
    files = _call_files(tmp_path)
    lab, out = tmp_path / "lab", tmp_path / "cand"
    (lab / "det").mkdir(parents=True)
    (lab / "det" / "old.log").write_text("the last call's")
    code = C.main([str(files), "--lab", str(lab), "--out", str(out), "--models",
                   str(MODEL_DIR), "--no-tune"])
    said = capsys.readouterr().out
    assert code == 0, said
    assert "64a's gate" in said and "64b's gate" in said and "compare-readers" in said
    # kept for the next call, writable, the last call's folder replaced
    assert sorted(p.name for p in (lab / "det").iterdir()) == [
        "detector.onnx", "resume.pt", "val.json"]
    (lab / "faces" / "resume.pt").write_bytes(b"writable")
    meta = json.loads((out / "reader.json").read_text())
    assert meta["upright_files"] == [C.UPRIGHT]
    assert meta["crop_shapes"] == {C.UPRIGHT: [64, 1.3]}
    assert sorted(p.name for p in out.glob("classifier_upright*.onnx")) == [C.UPRIGHT]
    assert (out / C.UPRIGHT).read_bytes() == (files / "faces" / C.FACES_FILE).read_bytes()
    assert meta["networks"][C.DET_FILE].startswith("issue 64: the big detector")
    assert meta["networks"][C.UPRIGHT].startswith("issue 64: one upright face network")
    assert set(meta["networks"]) == {C.DET_FILE, C.UPRIGHT, "classifier.onnx"}
    from companion.vision.learned import LearnedReader
    reader = LearnedReader(out)  # the folder loads as the companion loads it
    assert reader.upright_files == [C.UPRIGHT]
    # a second run does not write over a candidate
    assert C.main([str(files), "--lab", str(lab), "--out", str(out), "--models",
                   str(MODEL_DIR), "--no-tune"]) == 2
    assert "already there" in capsys.readouterr().err


@needs_model
def test_a_network_that_fails_its_gate_is_kept_but_not_placed(tmp_path, capsys):
    pytest.importorskip("onnx")
    weak = {"0.3": {**DET_PASS["0.3"], "recall": 0.90}}
    files = _call_files(tmp_path, det_val=weak)
    out = tmp_path / "cand"
    assert C.main([str(files), "--lab", str(tmp_path / "lab"), "--out", str(out),
                   "--models", str(MODEL_DIR), "--no-tune"]) == 0
    assert (out / C.DET_FILE).read_bytes() == (MODEL_DIR / C.DET_FILE).read_bytes()
    assert "issue 64" not in json.loads((out / "reader.json").read_text())["networks"][
        C.DET_FILE]
    assert (tmp_path / "lab" / "det" / "resume.pt").is_file()
    shutil.rmtree(files)
    files = _call_files(tmp_path, det_val=weak, faces_val={
        **FACES_PASS, "table-val": {**FACES_PASS["table-val"], "right": 0.5}})
    assert C.main([str(files), "--lab", str(tmp_path / "lab"), "--out",
                   str(tmp_path / "cand2"), "--no-tune"]) == 1
    assert "no network passed its gate" in capsys.readouterr().out
    assert not (tmp_path / "cand2").exists()


def test_what_cannot_be_used_is_one_line(tmp_path, capsys):
    assert C.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"device-candidate: {tmp_path}: neither det/ nor faces/ (not a call's files)")
    (tmp_path / "det").mkdir()
    (tmp_path / "det" / "val.json").write_text('[{"steps_done": ')
    assert C.main([str(tmp_path), "--lab", str(tmp_path / "lab")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"device-candidate: {tmp_path / 'det' / 'val.json'}: unreadable " \
                          "(JSONDecodeError)"
    (tmp_path / "det" / "val.json").write_text("{}")
    assert C.main([str(tmp_path), "--lab", str(tmp_path / "lab")]) == 2
    assert "not a list of call records" in capsys.readouterr().err
