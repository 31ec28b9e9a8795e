"""What a device call brought back, judged and made a candidate model folder:
``python -m reader_lab device-candidate FILES_AT``.

A call of ``reader_lab/accelerator/`` brings back ``det/`` (the big detector), ``faces/``
(the face network) or both, each with ``val.json``: one record per call, the last this
call's. This command does what docs/reader.md's "After a device call" lists, in order:

1. keeps each folder as the next call's start (``.lab/det``, ``.lab/faces``: its
   ``val.json`` already holds the whole history, so nothing is lost by replacing);
2. judges each network's last record by the gate its round wrote before the call
   (reader_lab/HISTORY.md: 64a for the detector, 64b for the faces), one line each;
3. for the networks that pass, makes a candidate model folder (``--out``, default
   ``.lab/cand``): a copy of the model of record with the network in place, its weights
   at half precision (and the detector's two output convolutions merged), reader.json
   naming the new face network as the only upright one with its crop, and each new
   network's training (its steps, calls, device and seconds: the model card's device
   time) in reader.json ``networks``;
4. tunes the folder's thresholds on validation (``train --part tune --tune-sizes 416
   --tune-views 1``; ``--no-tune`` leaves that), then prints the paired comparisons that
   decide whether it replaces the model of record.

Exit status: 0 when a candidate folder was made, 1 when no network passed its gate (the
folders are still kept for the next call), 2 when the call's files or a folder cannot be
used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from companion.errors import CompanionError

# The gates written before the first device call (reader_lab/HISTORY.md)
DET_GATE = {"threshold": "0.3", "recall": 0.95, "precision": 0.90}   # round 64a
FACES_RIGHT = {"table-val": 0.940, "trays-val": 0.892}              # round 64b: the model
FACES_OTHER = {"table-val": 0.057, "trays-val": 0.076}              # of record's figures
FACES_TABLE = 0.98
DET_FILE, FACES_FILE = "detector.onnx", "classifier_upright_dev.onnx"
UPRIGHT = "classifier_upright.onnx"
TUNE = ["--part", "tune", "--tune-sizes", "416", "--tune-views", "1"]


class CandidateError(CompanionError, ValueError):
    """A call's files or a folder that cannot be used, in one line."""


def records(folder: Path) -> list[dict]:
    """A network folder's ``val.json``: its calls' records, oldest first."""
    path = folder / "val.json"
    try:
        got = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CandidateError(f"{path}: unreadable ({exc.__class__.__name__})") from None
    if not isinstance(got, list) or not got or not all(isinstance(r, dict) for r in got):
        raise CandidateError(f"{path}: not a list of call records")
    return got


def detector_verdict(record: dict) -> tuple[bool, str]:
    """Round 64a's gate on the detector's record: recall and precision of its peaks at
    0.3 on table-val and trays-val."""
    try:
        at = record["val"][DET_GATE["threshold"]]
        recall, precision, dice = float(at["recall"]), float(at["precision"]), int(at["dice"])
    except (KeyError, TypeError, ValueError):
        raise CandidateError("the detector's last record has no val at 0.3") from None
    ok = recall >= DET_GATE["recall"] and precision >= DET_GATE["precision"]
    return ok, (f"detector, step {record.get('steps_done')}: recall {recall:.1%}, precision "
                f"{precision:.1%} at {DET_GATE['threshold']} ({dice} dice); 64a's gate "
                f"(recall >= {DET_GATE['recall']:.0%}, precision >= "
                f"{DET_GATE['precision']:.0%}): {'passed' if ok else 'not passed'}")


def faces_verdict(record: dict) -> tuple[bool, str]:
    """Round 64b's gate on the face network's record: on both sets dice read right at
    least and as another face at most the model of record's; table read "not a die" at
    least 98% wherever table was cut."""
    val = record.get("val")
    parts, ok = [], True
    try:
        for name in FACES_RIGHT:
            got = val[name]
            right, other = float(got["right"]), float(got["other_face"])
            ok &= right >= FACES_RIGHT[name] and other <= FACES_OTHER[name]
            part = f"{name} {right:.1%} right, {other:.1%} another face"
            if int(got.get("table", 0)):
                table = float(got["table_right"])
                ok &= table >= FACES_TABLE
                part += f", table {table:.1%} not a die"
            parts.append(part)
    except (KeyError, TypeError, ValueError):
        raise CandidateError("the face network's last record has no val for "
                             + " and ".join(FACES_RIGHT)) from None
    bar = "; ".join(f"{n} >= {FACES_RIGHT[n]:.1%} right, <= {FACES_OTHER[n]:.1%} another face"
                    for n in FACES_RIGHT)
    return ok, (f"faces, step {record.get('steps_done')}: " + "; ".join(parts)
                + f"; 64b's gate ({bar}; table >= {FACES_TABLE:.0%}): "
                + ("passed" if ok else "not passed"))


def provenance(kind: str, history: list[dict], script: str) -> str:
    """reader.json ``networks`` text for a network trained over ``history``'s calls:
    what, how far, on what, and the seconds of training (the model card's device time)."""
    last = history[-1]
    seconds = sum(float(r.get("train_seconds", 0)) for r in history)
    names = sorted({str(r.get("device_name") or r.get("device", "?")) for r in history})
    if kind == "detector":
        what = (f"the big detector (reader_lab/big_detector.py) trained from scratch, "
                f"{last.get('batch')} crops of {last.get('size')} px a step")
    else:
        what = (f"one upright face network (reader_lab/train_faces.py, width "
                f"{last.get('width')}, {last.get('crop')} px crops) trained from scratch, "
                f"batch {last.get('batch')}, contrastive weight {last.get('metric')} with "
                f"{last.get('glyphs')} made-up symbols")
    return (f"issue 64: {what}; {last.get('steps_done')} of {last.get('steps')} steps over "
            f"{len(history)} call{'s' if len(history) != 1 else ''} of {script}, "
            f"{seconds / 60:.1f} minutes of training on "
            f"{', '.join(names)}; its val.json's last figures: {json.dumps(last.get('val'))}")


def keep(folder: Path, lab: Path, name: str) -> Path:
    """Copy a call's network folder to ``lab/name`` (replacing the last one: its history
    is in the new val.json), as plain writable files."""
    dest = lab / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for path in folder.iterdir():
        if path.is_file():
            shutil.copyfile(path, dest / path.name)
    return dest


def build(out: Path, models: Path, det: Path | None, faces: Path | None,
          crop: int | None, networks: dict[str, str]) -> None:
    """The candidate folder: ``models`` copied to ``out`` with the detector file ``det``
    and the face network file ``faces`` in place (either may be None), each stored at
    half precision (the detector's output convolutions merged), reader.json saying so."""
    try:
        from reader_lab.train_reader import merge_heads, store_half
    except ImportError as exc:
        raise CandidateError(f"needs the lab's train extra (pip install -e \".[train]\"): "
                             f"{exc}") from None
    from companion.vision.learned_spec import CROP_SPAN

    if out.exists():
        raise CandidateError(f"{out}: already there; remove it or name another --out")
    if not (models / "reader.json").is_file():
        raise CandidateError(f"{models}: no reader.json, not a model folder")
    shutil.copytree(models, out)
    meta = json.loads((out / "reader.json").read_text())
    if det is not None:
        shutil.copyfile(det, out / DET_FILE)
        store_half(out / DET_FILE)
        merge_heads(out / DET_FILE)
    if faces is not None:
        for old in out.glob("classifier_upright*.onnx"):
            old.unlink()
        shutil.copyfile(faces, out / UPRIGHT)
        store_half(out / UPRIGHT)
        meta["upright_files"] = [UPRIGHT]
        meta["crop_shapes"] = {UPRIGHT: [int(crop or 64), CROP_SPAN]}
        meta["area_crops"] = []
    meta["networks"] = {k: v for k, v in meta.get("networks", {}).items()
                        if (out / k).is_file()} | networks
    (out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")


def tune(out: Path, networks: dict[str, str]) -> int:
    """Tune ``out``'s thresholds on validation with the lab's own command, then put back
    reader.json ``networks`` (tuning writes reader.json anew)."""
    from reader_lab.cli import main as lab

    code = lab(["train", "--out", str(out), *TUNE])
    if code == 0:
        meta = json.loads((out / "reader.json").read_text())
        meta["networks"] = networks
        (out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    return code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab device-candidate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("files", help="what the call brought back (the reply's files_at)")
    ap.add_argument("--lab", default=".lab", help="where the networks are kept for the next "
                    "call (default .lab)")
    ap.add_argument("--out", default=".lab/cand", help="the candidate model folder "
                    "(default .lab/cand; must not exist)")
    ap.add_argument("--models", default="companion/data/models",
                    help="the model of record (default companion/data/models)")
    ap.add_argument("--no-tune", action="store_true", help="make the folder, tune nothing")
    args = ap.parse_args(argv)
    files, lab, out = Path(args.files), Path(args.lab), Path(args.out)
    found = {name: files / name for name in ("det", "faces") if (files / name).is_dir()}
    if not found:
        print(f"device-candidate: {files}: neither det/ nor faces/ (not a call's files)",
              file=sys.stderr)
        return 2
    try:
        passed: dict[str, Path] = {}
        networks: dict[str, str] = {}
        crop = None
        for name, folder in found.items():
            history = records(folder)
            verdict = detector_verdict if name == "det" else faces_verdict
            ok, line = verdict(history[-1])
            print(line)
            kept = keep(folder, lab, name)
            print(f"kept in {kept} for the next call")
            if not ok:
                continue
            net = kept / (DET_FILE if name == "det" else FACES_FILE)
            if not net.is_file():
                raise CandidateError(f"{folder}: no {net.name}")
            passed[name] = net
            script = ("reader_lab/accelerator/train_detector.sh or train_both.sh"
                      if name == "det" else
                      "reader_lab/accelerator/train_faces.sh or train_both.sh")
            networks[DET_FILE if name == "det" else UPRIGHT] = provenance(
                "detector" if name == "det" else "faces", history, script)
            if name == "faces":
                crop = history[-1].get("crop")
        if not passed:
            print("no network passed its gate: the next call resumes them")
            return 1
        build(out, Path(args.models), passed.get("det"), passed.get("faces"), crop, networks)
        print(f"candidate folder {out}: " + ", ".join(
            f"{'the big detector' if k == 'det' else 'the new face network'} in place"
            for k in passed))
    except (CandidateError, OSError) as exc:
        print(f"device-candidate: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    if not args.no_tune:
        meta = json.loads((out / "reader.json").read_text())
        if tune(out, meta["networks"]) != 0:
            print(f"device-candidate: tuning {out} failed", file=sys.stderr)
            return 2
    print("then, the paired comparisons that decide (docs/reader.md):\n"
          f"  python -m reader_lab compare-readers --second {out}\n"
          f"  python -m reader_lab tuning-crossval --procedures A --against {out}\n"
          f"  python -m reader_lab rated-boxes-kept --model {args.models} {out}")
    return 0
