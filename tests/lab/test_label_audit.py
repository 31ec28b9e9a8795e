"""reader_lab/benchmarks/label_audit.py and the corrections it writes (dice_photos.label_fixes):
a blind label audit of the photo sets (issue 8, session 9o)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from scripts import load_script

from companion.vision.evaluate import LabelledDie, ManifestError, ManifestImage
from reader_lab import dice_photos

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/label_audit.py"


@pytest.fixture(scope="module")
def audit():
    return load_script(SCRIPT)


def test_a_label_changes_only_when_both_raters_read_the_same_other_face(audit):
    assert audit.verdict("1", "3", "3") == "fix"
    assert audit.verdict("3", "3", "3") == "agree"
    assert audit.verdict("1", "3", "4") == "unclear"
    assert audit.verdict("1", "3", "?") == "unclear"
    assert audit.verdict("1", "?", "?") == "unclear"
    assert audit.verdict("1", "n", "n") == "not a die"
    assert audit.verdict("1", "n", "3") == "unclear"


def test_a_tile_shows_the_die_and_nothing_of_its_label(audit):
    img = np.zeros((100, 120, 3), np.uint8)
    img[40:60, 50:70] = 255
    a = audit.tile(img, (50, 40, 70, 60), 7)
    assert a.shape == (22 + audit.PANEL, 2 * audit.PANEL + 4, 3)
    # the close-up (1.25 sides) is mostly the white die; a box at the frame's edge is padded
    close = a[22:, audit.PANEL + 4:]
    assert close[audit.PANEL // 2, audit.PANEL // 2].tolist() == [255, 255, 255]
    assert audit.tile(img, (0, 0, 10, 10), 8).shape == a.shape


def _key(tmp_path: Path, header: list[str], rows: list[list]) -> Path:
    path = tmp_path / "key.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _answers(tmp_path: Path, name: str, faces: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("tile,face\n" + "".join(f"{i},{f}\n" for i, f in enumerate(faces, 1)))
    return path


def test_score_writes_the_fixes_the_rule_allows_and_counts_the_sample(audit, tmp_path,
                                                                       capsys, monkeypatch):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    rows = [
        [1, "candidate", "trays-test", "t/a.jpg", 1, 2, 11, 12, "1", "3", "0.95", "s1"],
        [2, "candidate", "trays-test", "t/a.jpg", 20, 2, 31, 12, "3", "4", "0.90", "s1"],
        [3, "sample", "table-test", "b/b.jpg", 5, 5, 25, 25, "6", "", "", "s2"],
        [4, "sample", "table-test", "b/c.jpg", 5, 5, 25, 25, "2", "", "", "s3"],
        [5, "candidate", "table-test", "b/c.jpg", 40, 5, 60, 25, "5", "2", "0.80", "s3"],
    ]
    key = _key(tmp_path, audit.KEY_HEADER, rows)
    a = _answers(tmp_path, "a.csv", ["3", "4", "6", "5", "5"])
    b = _answers(tmp_path, "b.csv", ["3", "?", "6", "5", "5"])
    fixes = tmp_path / "fixes.csv"
    assert audit.main(["score", str(key), str(a), str(b), "--fixes", str(fixes)]) == 0
    out = capsys.readouterr().out
    assert "raters agree on 4 of 5 tiles" in out
    # sample: tile 4's label is wrong; 1 of 2 dice both read
    assert "| table-test | 2 | 1 | 1 | 0 | 0 | 1.3%-98.7% |" in out
    assert "| trays-test | 0 | 0 | 0 | 0 | 0 | 0.0%-100.0% |" in out
    # candidates: tile 1 the label's error (the reader's face), tile 2 unclear, tile 5 the
    # reader's
    assert "| trays-test | 2 | 1 | 0 | 0 | 1 | 0 |" in out
    assert "| table-test | 1 | 0 | 0 | 1 | 0 | 0 |" in out
    written = dice_photos.label_fixes(fixes)
    assert written == {("b/c.jpg", (5, 5, 25, 25)): ("2", "5"),
                       ("t/a.jpg", (1, 2, 11, 12)): ("1", "3")}
    # scored again with other answers, the file is the new scoring's alone
    b2 = _answers(tmp_path, "b2.csv", ["?", "4", "6", "5", "5"])
    assert audit.main(["score", str(key), str(a), str(b2), "--fixes", str(fixes)]) == 0
    assert "2 corrections written" in capsys.readouterr().out
    assert dice_photos.label_fixes(fixes) == {("b/c.jpg", (5, 5, 25, 25)): ("2", "5"),
                                              ("t/a.jpg", (20, 2, 31, 12)): ("3", "4")}


def test_a_later_round_settles_only_what_the_first_left_unclear(audit, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    first = tmp_path / "r1"
    later = tmp_path / "r2"
    first.mkdir()
    later.mkdir()
    die_a = ["trays-test", "t/a.jpg", 1, 2, 11, 12, "1", "3", "0.95", "s1"]
    die_b = ["trays-test", "t/a.jpg", 20, 2, 31, 12, "3", "4", "0.90", "s1"]
    key1 = _key(first, audit.KEY_HEADER, [[1, "candidate", *die_a], [2, "candidate", *die_b]])
    key2 = _key(later, audit.KEY_HEADER, [[1, "candidate", *die_b], [2, "candidate", *die_a]])
    a1, b1 = _answers(first, "a.csv", ["1", "?"]), _answers(first, "b.csv", ["1", "?"])
    # round 2 reads die b as 4 (settled) and die a as 3, which round 1 had already settled
    a2, b2 = _answers(later, "a.csv", ["4", "3"]), _answers(later, "b.csv", ["4", "3"])
    fixes = tmp_path / "fixes.csv"
    assert audit.main(["score", str(key1), str(a1), str(b1), "--then", str(key2), str(a2),
                       str(b2), "--fixes", str(fixes)]) == 0
    out = capsys.readouterr().out
    assert "| trays-test | 2 | 1 | 0 | 1 | 0 | 0 |" in out  # a: the reader erred; b: the label
    assert dice_photos.label_fixes(fixes) == {("t/a.jpg", (20, 2, 31, 12)): ("3", "4")}
    assert "r2 candidate tile 1" in fixes.read_text()


def test_a_correction_stands_only_if_fresh_raters_read_the_same_face(audit, tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    first, later = tmp_path / "r1", tmp_path / "r4"
    first.mkdir()
    later.mkdir()
    die_a = ["table-test", "b/a.jpg", 1, 2, 11, 12, "4", "", "", "s1"]
    die_b = ["table-test", "b/a.jpg", 20, 2, 31, 12, "1", "", "", "s1"]
    key1 = _key(first, audit.KEY_HEADER, [[1, "sample", *die_a], [2, "sample", *die_b]])
    a1, b1 = _answers(first, "a.csv", ["3", "4"]), _answers(first, "b.csv", ["3", "4"])
    key2 = _key(later, audit.KEY_HEADER, [[1, "confirm", *die_b], [2, "confirm", *die_a]])
    # the fresh raters read b as 4 again, but a as its label
    a2, b2 = _answers(later, "a.csv", ["4", "4"]), _answers(later, "b.csv", ["4", "4"])
    fixes = tmp_path / "fixes.csv"
    assert audit.main(["score", str(key1), str(a1), str(b1), "--then", str(key2), str(a2),
                       str(b2), "--fixes", str(fixes)]) == 0
    out = capsys.readouterr().out
    assert "the correction of tile 1 (r1) is not confirmed: dropped" in out
    assert dice_photos.label_fixes(fixes) == {("b/a.jpg", (20, 2, 31, 12)): ("1", "4")}
    # the confirming round's tiles are not new sample dice
    assert "| table-test | 2 | 0 | 1 | 1 | 0 |" in out


def test_a_bad_answer_line_is_one_line_naming_it(audit, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    key = _key(tmp_path, audit.KEY_HEADER,
               [[1, "sample", "table-test", "b/b.jpg", 5, 5, 25, 25, "6", "", "", "s2"]])
    good = _answers(tmp_path, "a.csv", ["6"])
    bad = _answers(tmp_path, "b.csv", ["seven"])
    with pytest.raises(SystemExit, match=r"b\.csv:2: tile 1 face 'seven'"):
        audit.main(["score", str(key), str(good), str(bad)])
    short = tmp_path / "c.csv"
    short.write_text("tile,face\n")
    with pytest.raises(SystemExit, match="c.csv: no answer for tiles 1$"):
        audit.main(["score", str(key), str(good), str(short)])
    assert audit.main(["score", str(key), str(good), str(tmp_path / "gone.csv")]) == 2


def test_a_bad_key_or_fixes_file_is_one_line(audit, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    answers = _answers(tmp_path, "a.csv", ["6"])
    wrong_header = tmp_path / "k1.csv"
    wrong_header.write_text("tile,face\n1,6\n")
    with pytest.raises(SystemExit, match="k1.csv: not a key"):
        audit.main(["score", str(wrong_header), str(answers), str(answers)])
    short_row = _key(tmp_path, audit.KEY_HEADER, [[1, "sample", "table-test", "b/b.jpg", 5]])
    with pytest.raises(SystemExit, match="key.csv: a row is not"):
        audit.main(["score", str(short_row), str(answers), str(answers)])
    key = _key(tmp_path, audit.KEY_HEADER,
               [[1, "sample", "table-test", "b/b.jpg", 5, 5, 25, 25, "6", "", "", "s2"]])
    broken = tmp_path / "fixes.csv"
    broken.write_text("not,a,fixes,file\n")
    assert audit.main(["sheets", "--out", str(tmp_path / "out"), "--retry", str(key),
                       str(answers), str(answers), "--confirm", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fixes.csv:1: header is not" in err
    assert audit.main(["sheets", "--out", str(tmp_path / "out"), "--retry", str(key),
                       str(answers), str(tmp_path / "gone.csv")]) == 2
    assert "gone.csv" in capsys.readouterr().err
    assert audit.main(["sheets", "--out", str(tmp_path / "o"), "--sample", "nope=3"]) == 2
    assert "no set 'nope'" in capsys.readouterr().err
    assert audit.main(["sheets", "--out", str(tmp_path / "o"), "--panel", "9000"]) == 2


def test_fixes_change_only_the_named_die_with_the_label_they_were_made_against(tmp_path):
    root = tmp_path / "photos"
    (root / "set").mkdir(parents=True)
    a, b = LabelledDie("1", (10.2, 20.0, 30.0, 40.0)), LabelledDie("4", (50, 20, 70, 40))
    items = [ManifestImage("x.jpg", root / "set" / "x.jpg", (a, b)),
             ManifestImage("y.jpg", root / "set" / "y.jpg", (a,))]
    fixes = {("set/x.jpg", (10, 20, 30, 40)): ("1", "3"),   # a, rounded box
             ("set/x.jpg", (50, 20, 70, 40)): ("5", "6"),   # b, but made against a 5
             ("set/z.jpg", (10, 20, 30, 40)): ("1", "2")}   # another photo
    elsewhere = ManifestImage("x.jpg", tmp_path / "cache" / "x.jpg", (a,))
    out = dice_photos.apply_fixes(items + [elsewhere], root, fixes)
    assert out[2] == elsewhere  # a photo outside the root (a half-size set's) is left be
    assert [d.face for d in out[0].dice] == ["3", "4"]
    assert [d.face for d in out[1].dice] == ["1"]
    assert out[0].dice[0].box == a.box and items[0].dice[0].face == "1"


@pytest.mark.parametrize("text, says", [
    ("image,face\n", "header is not image,x0,y0,x1,y1,label,face,note"),
    ("image,x0,y0,x1,y1,label,face,note\nset/x.jpg,1,2,3\n", ":2: expected"),
    ("image,x0,y0,x1,y1,label,face,note\nset/x.jpg,1,2,3,4,1,7,n\n", ":2: label '1' and face '7'"),
    ("image,x0,y0,x1,y1,label,face,note\nset/x.jpg,1,2,3,4,1,34,n\n", ":2: label"),
])
def test_a_malformed_fixes_file_is_one_line(tmp_path, text, says):
    path = tmp_path / "fixes.csv"
    path.write_text(text)
    with pytest.raises(ManifestError, match=says) as exc:
        dice_photos.label_fixes(path)
    assert "\n" not in str(exc.value)
    with pytest.raises(ManifestError, match="label fixes"):
        dice_photos.label_fixes(tmp_path / "gone.csv")


def test_the_committed_fixes_read():
    assert all(old != new for old, new in dice_photos.label_fixes().values())


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets not found")
def test_an_audited_set_differs_from_its_set_only_in_the_fixed_dice():
    fixes = dice_photos.label_fixes()
    for name in ("trays-test", "table-test", "webcam-two"):
        plain, audited = dice_photos.load_set(name), dice_photos.load_set(name + "-audited")
        assert [m.key for m in plain] == [m.key for m in audited]
        changed = [(p.face, q.face) for m, n in zip(plain, audited, strict=True)
                   for p, q in zip(m.dice, n.dice, strict=True) if p != q]
        assert all(a != b for a, b in changed)
        if name == "trays-test":  # the audit found wrong labels there
            assert changed
        assert len(changed) <= len(fixes)
    # every fix names a labelled die of the photo sets with the label it was made against
    by_photo: dict[str, set] = {}
    for name in dice_photos.HELD_ASIDE + dice_photos.VAL_SETS + ("webcam-val",):
        for m in dice_photos.load_set(name):
            by_photo.setdefault(dice_photos.photo_key(m.path), set()).update(
                (tuple(round(v) for v in d.box), d.face) for d in m.dice)
    for (image, box), (old, _) in fixes.items():
        assert (box, old) in by_photo.get(image, set()), (image, box)


def test_the_committed_rounds_give_the_committed_fixes(audit, tmp_path, capsys):
    """The five rounds' keys and answers (reader_lab/benchmarks/label_audit_9o) score to exactly the
    corrections in reader_lab/data/dice_photo_fixes.csv (no photos needed)."""
    rounds = SCRIPT.parent / "label_audit_9o"
    raters = {"r1": "AB", "r2": "CD", "r3": "EF", "r4": "GH", "r5": "IJ"}
    files = {r: [rounds / r / "key.csv", *(rounds / r / f"rater-{x}.csv" for x in ab)]
             for r, ab in raters.items()}
    argv = ["score", *map(str, files["r1"])]
    for r in ("r2", "r3", "r4", "r5"):
        argv += ["--then", *map(str, files[r])]
    out = tmp_path / "fixes.csv"
    assert audit.main([*argv, "--fixes", str(out)]) == 0
    assert out.read_text() == dice_photos.FIXES.read_text()
    printed = capsys.readouterr().out
    assert "| all | 320 | 223 | 0 | 97 | 0 | 0.0%-1.6% |" in printed  # held aside
    assert "| trays-val | 80 | 47 | 0 | 33 | 0 | 0.0%-7.5% |" in printed  # round 5
    assert "the correction of tile 99 (r3) is not confirmed: dropped" in printed


def test_the_reader_on_dice_nobody_could_read_counts_its_sure_and_wrong_faces(
        audit, monkeypatch, capsys):
    """Issue 9x: on the sample dice no two raters could read, the table says how often
    the reader still names a face, and how often a wrong one; a missed die or an
    "unknown" is not sure. The reader is the one given (main loads --model's)."""
    from types import SimpleNamespace

    from companion.vision import evaluate as evaluate_module
    from companion.vision.evaluate import PredictedDie

    boxes = [(10 * i, 0, 10 * i + 8, 8) for i in range(5)]
    dice = tuple(LabelledDie(face="3", box=b) for b in boxes)
    photo = ManifestImage(key="p.jpg", path=Path("/photos/p.jpg"), dice=dice)
    monkeypatch.setattr(audit.dice_photos, "load_set", lambda name: [photo])
    monkeypatch.setattr(audit.dice_photos, "photo_key", lambda path: "p.jpg")
    # die 0 readable and read right; dice 1-4 unclear: read right, wrong, unknown, missed
    faces = ["3", "3", "5", "unknown"]
    preds = [("p.jpg", PredictedDie(face=f, box=boxes[i], centre=(10 * i + 4, 4),
                                    confidence=0.9)) for i, f in enumerate(faces)]
    given, used = object(), []
    monkeypatch.setattr(evaluate_module, "evaluate_manifest",
                        lambda items, reader: used.append(reader)
                        or SimpleNamespace(predictions=preds))
    rows = [{"kind": "sample", "set": "table-val", "image": "p.jpg",
             **dict(zip(("x0", "y0", "x1", "y1"), map(str, b), strict=True)),
             "label": "3", "verdict": "agree" if i == 0 else "unclear", "face": ""}
            for i, b in enumerate(boxes)]
    audit.readable_or_not(rows, given, "/models/x")
    assert used == [given]  # the reader given reads the photos
    out = capsys.readouterr().out
    assert "the /models/x reader" in out
    assert ("| table-val | 5 | 1 (20%) | 1 (100%) | 2.5%-100.0% | 4 | 1 (25%) | 2 (50%) | "
            "1 (25%) |") in out
    assert "| all |" not in out  # no held-aside die in this sample: no empty rows


def test_a_model_without_the_reader_is_one_line(audit, tmp_path, capsys):
    key = _key(tmp_path, audit.KEY_HEADER,
               [[1, "sample", "table-test", "b/b.jpg", 5, 5, 25, 25, "6", "", "", "s2"]])
    a = _answers(tmp_path, "a.csv", ["6"])
    assert audit.main(["score", str(key), str(a), str(a), "--model", "/m"]) == 2
    assert capsys.readouterr().err.strip() == (
        "label_audit: --model: names the reader --reader scores; give --reader too")


@pytest.mark.parametrize("cmd", ["score", "sheets"])
def test_a_model_folder_with_no_model_is_one_line_before_anything_is_written(
        audit, tmp_path, capsys, monkeypatch, cmd):
    monkeypatch.setattr(audit.dice_photos, "available", lambda: True)
    if cmd == "score":
        key = _key(tmp_path, audit.KEY_HEADER,
                   [[1, "sample", "table-test", "b/b.jpg", 5, 5, 25, 25, "6", "", "", "s2"]])
        a = _answers(tmp_path, "a.csv", ["6"])
        fixes = tmp_path / "fixes.csv"
        args = ["score", str(key), str(a), str(a), "--reader", "--model",
                str(tmp_path / "none"), "--fixes", str(fixes)]
    else:
        fixes = tmp_path / "out"
        args = ["sheets", "--out", str(fixes), "--model", str(tmp_path / "none")]
    assert audit.main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"label_audit: learned reader model not found in {tmp_path / 'none'}")
    assert not fixes.exists() and "|" not in captured.out  # no table, no file
