"""reader_lab/benchmarks/tuning_crossval.py: tuning procedures judged on photos they did not choose
their rule on (the photo tests need the shared photo sets)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts import load_script

from reader_lab import dice_photos

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/tuning_crossval.py"


@pytest.fixture(scope="module")
def crossval():
    return load_script(SCRIPT)


def test_every_read_is_scored_by_rules_chosen_without_it_on_the_procedures_sets(crossval):
    reads = {"a": [f"a{i}" for i in range(7)], "b": [f"b{i}" for i in range(5)],
             "c": [f"c{i}" for i in range(4)]}
    folds = {n: [crossval.fold_of(f"{n[0]}/{r[1:]}", 3) for r in rs] for n, rs in reads.items()}
    procedures = {"A": (("a",), "told A"), "B": (("a", "b"), "told B")}
    chosen = []

    def choose(tune, told):
        assert told == f"told {'AB'[len(chosen) % 2]}"
        chosen.append(frozenset(tune))
        return len(chosen) - 1  # the rule is which choice it was

    rules, held = crossval.cross_validate(reads, folds, 3, procedures, choose,
                                          lambda some, rule: [(rule, r) for r in some])
    assert [(k, p) for k, p, _, _ in rules] == [(k, p) for k in range(3) for p in "AB"]
    for k, p, rule, out in rules:
        assert out == sum(f == k for n in reads for f in folds[n])
        want = {r for n in procedures[p][0]
                for r, f in zip(reads[n], folds[n], strict=True) if f != k}
        assert chosen[rule] == want
    for p in procedures:
        for n, rs in reads.items():
            for r, f, (rule, scored) in zip(rs, folds[n], held[p][n], strict=True):
                assert scored == r and r not in chosen[rule]
                assert rules[rule][:2] == (f, p)  # the rule chosen for its own fold
    assert len(set(folds["a"] + folds["b"] + folds["c"])) > 1


def test_folds_are_fixed_and_in_range(crossval):
    names = [f"table-val/dice_{i}" for i in range(200)]
    got = [crossval.fold_of(g, 5) for g in names]
    assert got == [crossval.fold_of(g, 5) for g in names]
    assert set(got) == set(range(5))
    assert max(got.count(k) for k in range(5)) < 2 * min(got.count(k) for k in range(5))


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets missing")
@pytest.mark.parametrize("name", ["table-val", "trays-val"])
def test_a_half_size_image_falls_with_its_source_photos(crossval, name):
    full = crossval.family_sources(name, dice_photos.load_set(name))
    half = crossval.family_sources(f"{name}-half", dice_photos.load_set(f"{name}-half"))
    assert len(half) == len(set(half)) == len(set(full)) > 20
    assert set(half) == set(full)
    assert all(g.startswith(f"{name}/") for g in half)


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets missing")
@pytest.mark.parametrize("name", ["table-val", "trays-val"])
@pytest.mark.parametrize("copy", ["-hue", "-dyed"])
def test_a_repainted_copy_falls_with_its_base_photo(crossval, name, copy):
    full = crossval.family_sources(name, dice_photos.load_set(name))
    copies = crossval.family_sources(f"{name}{copy}", dice_photos.load_set(f"{name}{copy}"))
    assert copies == full  # photo by photo, the copy's source is its base photo's
    assert len(set(full)) > 20


def test_each_procedure_tunes_on_its_sets_at_its_own_wrong_cost(crossval):
    from companion.vision.intervals import WRONG_COST

    sets, (sides, cost) = crossval.PROCEDURES["A"]
    assert (sets, sides, cost) == (crossval.OLD_VAL, (), WRONG_COST)
    assert crossval.PROCEDURES["W"] == (crossval.OLD_VAL, ((), 3 * WRONG_COST))
    assert crossval.PROCEDURES["R"] == (crossval.OLD_VAL + crossval.REPAINTED,
                                        ((), WRONG_COST))
    assert crossval.PROCEDURES["RW"][1] == crossval.PROCEDURES["W"][1]
    assert set(crossval.REPAINTED) <= set(crossval.READ)  # every rule reads the copies


@pytest.mark.parametrize("args, says", [
    (["--folds", "1"], "--folds must be at least 2, not 1"),
    (["--draws", "0"], "--draws must be at least 1, not 0"),
])
def test_bad_numbers_get_one_line(crossval, capsys, args, says):
    assert crossval.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuning_crossval: {says}"]


@pytest.mark.skipif(not dice_photos.available(), reason="photo sets missing")
def test_a_missing_model_gets_one_line(crossval, capsys):
    assert crossval.main(["--model", "/nonexistent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/nonexistent" in err[0], err


@pytest.mark.parametrize("against, says", [
    (["a/YH", "b/YH"], "YH YH"),
    (["a/B"], "B"),
])
def test_candidates_without_names_of_their_own_get_one_line(crossval, capsys, against, says):
    assert crossval.main(["--against", *against]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuning_crossval: --against folders need names of their own, not {says}"]


def pool_rows(crossval, out: str) -> list[list[str]]:
    """The held-out table's rows (split at " | ") printed in ``out``, one per pool of sets
    and figure."""
    return [line.split(" | ") for line in out.splitlines() if line.startswith("| ")
            and line.split("|")[1].strip() in crossval.POOLS]


def rendered_sets(crossval, tmp_path, monkeypatch) -> None:
    """Every set read four rendered photos and one broken file, in place of the real
    ones (skips when the committed model is missing)."""
    import cv2

    from companion.vision.evaluate import LabelledDie, ManifestImage
    from companion.vision.learned import MODEL_DIR
    from reader_lab.render_dice import render_dice_scene

    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("model missing")
    sets = {}
    for n, name in enumerate(crossval.READ):
        items = []
        for i in range(4):
            image, dice = render_dice_scene(7_100_000 + 10 * n + i, size=416)
            key = f"{i:04d}_s{i}.png" if name.endswith("-half") else f"s{i}.png"
            path = tmp_path / f"{name}-{key}"
            cv2.imwrite(str(path), image)
            items.append(ManifestImage(key, path, tuple(LabelledDie(
                str(d.face), tuple(float(v) for v in d.box)) for d in dice)))
        broken = tmp_path / f"{name}-broken.png"
        broken.write_bytes(b"not a png")
        items.append(ManifestImage("0009_s9.png" if name.endswith("-half") else "s9.png",
                                   broken, ()))
        sets[name] = items
    monkeypatch.setattr(dice_photos, "available", lambda root=None: True)
    monkeypatch.setattr(dice_photos, "load_set", lambda name, root=None: sets[name])
    monkeypatch.setattr(dice_photos, "sources_of",
                        lambda name, items, root=None: [Path(m.key).stem for m in items])


def test_an_unreadable_photo_is_one_line_and_the_rest_are_judged(crossval, tmp_path,
                                                                 monkeypatch, capsys):
    """Every set a few rendered photos and one broken file: the broken one is one line
    naming it, left out, and the held-out table is printed for the rest."""
    rendered_sets(crossval, tmp_path, monkeypatch)
    assert crossval.main(["--folds", "2", "--draws", "50", "--procedures", "A", "D"]) == 0
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == len(crossval.READ)
    assert all("broken.png" in line and line.endswith("(left out)") for line in err), err
    out = captured.out
    assert "2 folds over 12 source photos" in out  # s0-s3 of table-val, trays-val, webcam
    rows = pool_rows(crossval, out)
    assert len(rows) == len(crossval.POOLS) * len(crossval.SHOWN)


def test_the_header_says_how_each_detector_reads(crossval):
    from types import SimpleNamespace

    plain = SimpleNamespace(det_size=416, views=1, det_flip=False)
    assert crossval.how_read(plain) == "input 416 px, views 1"
    assert crossval.how_read(SimpleNamespace(det_size=512, views=4, det_flip=True)) == (
        "input 512 px, views 4, the mirror too")


def test_a_candidate_is_tuned_fold_by_fold_and_paired_against_the_model(crossval, tmp_path,
                                                                       monkeypatch, capsys):
    """A candidate folder holding the committed networks chooses the same rule in every
    fold and so reads exactly as the model: each of its held-out differences is zero; a
    candidate with a changed rule in its reader.json chooses the same (tuning ignores it)."""
    import shutil

    from companion.vision.learned import MODEL_DIR

    rendered_sets(crossval, tmp_path, monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(MODEL_DIR, same)
    meta = same / "reader.json"
    meta.write_text(meta.read_text().replace('"face_threshold": 0.7', '"face_threshold": 0.3'))
    assert crossval.main(["--folds", "2", "--draws", "50", "--procedures", "A",
                          "--against", str(same)]) == 0
    out = capsys.readouterr().out
    assert f"against same ({same}): input 416 px, views 1" in out
    rules = [line.split(" | ")[2:] for line in out.splitlines()
             if line.startswith("| 0 |") or line.startswith("| 1 |")]
    assert [r[0] for r in rules] == ["A", "same", "A", "same"]
    assert rules[0][1:] == rules[1][1:] and rules[2][1:] == rules[3][1:]
    rows = pool_rows(crossval, out)
    assert len(rows) == len(crossval.POOLS) * len(crossval.SHOWN)
    for row in rows:
        assert row[2] == row[3]  # A's figure and the candidate's
        assert row[4].startswith("+0.0000 (+0.0000 to +0.0000)"), row


def test_a_column_procedure_tunes_the_candidate_columns_as_that_procedure(
        crossval, tmp_path, monkeypatch, capsys):
    """``--column-procedure D``: the candidate column's rule is chosen as procedure D
    chooses (the small sides offered to tuning), fold by fold, while A stays A; a copy of
    the model's networks so tuned chooses D's rule in every fold and reads as D does."""
    import shutil

    from companion.vision import learned
    from reader_lab import tune_reader

    rendered_sets(crossval, tmp_path, monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(learned.MODEL_DIR, same)
    offered, costs = [], []
    real = tune_reader.best_rule

    def recording(reader, reads, **kw):
        offered.append(kw.get("small_sides", ()))
        costs.append(kw.get("wrong_cost"))
        return real(reader, reads, **kw)

    monkeypatch.setattr(tune_reader, "best_rule", recording)
    args = ["--folds", "2", "--draws", "50", "--procedures", "A", "D", "--against", str(same)]
    assert crossval.main([*args, "--column-procedure", "D"]) == 0
    out = capsys.readouterr().out
    sides = crossval.SMALL_SIDES
    assert offered == [(), sides, (), sides, sides, sides]  # A, D per fold; then the column
    assert "the columns besides the procedures are tuned by procedure D" in out
    lines = [x.split(" | ") for x in out.splitlines() if x.startswith(("| 0 |", "| 1 |"))]
    rules = {(r[0].strip("| "), r[2]): r[3:] for r in lines}  # (fold, procedure): rule
    assert rules["0", "same"] == rules["0", "D"]
    assert rules["1", "same"] == rules["1", "D"]
    for row in pool_rows(crossval, out):  # | pool | figure | A | D | D - A | same | same - A
        assert row[3] == row[5], row

    offered.clear()
    assert crossval.main(args) == 0  # by default the column is tuned by A
    assert offered == [(), sides, (), sides, (), ()]
    assert "tuned by procedure" not in capsys.readouterr().out

    costs.clear()
    assert crossval.main(["--folds", "2", "--draws", "50", "--procedures", "A", "W",
                          "--against", str(same), "--column-procedure", "W"]) == 0
    dear = crossval.DEAR
    assert costs == [10.0, dear, 10.0, dear, dear, dear]  # W (and the column) told 30
    out = capsys.readouterr().out
    lines = [x.split(" | ") for x in out.splitlines() if x.startswith(("| 0 |", "| 1 |"))]
    rules = {(r[0].strip("| "), r[2]): r[3:] for r in lines}
    assert rules["0", "same"] == rules["0", "W"] and rules["1", "same"] == rules["1", "W"]


class MarkedReader:
    """A reader whose detector gives fixed boxes and whose classifiers read every box as
    ``mark`` (so a test sees which reader read which box)."""

    def __init__(self, mark: float, boxes=()):
        self.mark, self.boxes, self.calls = mark, list(boxes), []

    def detect(self, image, threshold):
        assert threshold == 0.1
        return list(self.boxes)

    def classify_both(self, image, boxes, *, upright):
        import numpy as np

        self.calls.append(list(boxes))
        probs = np.full((len(boxes), 7), self.mark, np.float32)
        return probs, None, probs + 1 if upright else None


def test_small_box_reads_add_small_boxes_and_route_them_to_the_small_classifiers(crossval):
    import numpy as np

    from reader_lab.tune_reader import TuningRead

    big, small = (0, 0, 40, 30, 0.9), (50, 50, 70, 60, 0.8)  # longer sides 40 and 20 px
    base = TuningRead([big, small], np.zeros((2, 7), np.float32),
                      np.full((2, 7), 5, np.float32), ("dice",))
    images = {"s": [("image", ("dice",))]}
    other_small, other_big = (100, 100, 120, 131, 0.5), (200, 200, 231, 210, 0.4)
    detector = MarkedReader(7, [other_small, other_big])  # sides 31 and 31: both under 32
    reader, classifiers = MarkedReader(1), MarkedReader(2)

    got, added, routed = crossval.small_box_reads(reader, {"s": [base]}, images, 32.0,
                                                  detector, classifiers)
    r = got["s"][0]
    assert (added, routed) == (2, 3)
    assert r.boxes == [big, small, other_small, other_big] and r.dice == ("dice",)
    assert r.probs[:, 0].tolist() == [0, 2, 2, 2]  # the big box as the model read it
    assert r.upright[:, 0].tolist() == [5, 3, 3, 3]
    assert detector.calls == [] and reader.calls == []
    assert base.probs[:, 0].tolist() == [0, 0]  # the model's own reads untouched

    got, added, routed = crossval.small_box_reads(reader, {"s": [base]}, images, 31.0,
                                                  detector, None)
    r = got["s"][0]
    assert (added, routed) == (0, 0) and r is not base and r.boxes == [big, small]
    assert r.probs[:, 0].tolist() == [0, 0]  # nothing under 31 px added; none re-read

    got, added, routed = crossval.small_box_reads(reader, {"s": [base]}, images, 32.0,
                                                  detector, None)
    assert got["s"][0].probs[:, 0].tolist() == [0, 0, 1, 1]  # added, read by the model

    got, added, routed = crossval.small_box_reads(reader, {"s": [base]}, images, 32.0,
                                                  None, classifiers)
    assert (added, routed) == (0, 1) and got["s"][0].probs[:, 0].tolist() == [0, 2]


@pytest.mark.parametrize("args, says", [
    (["--small-side", "0", "--small-classifiers", "x"], "--small-side must be above 0, not 0"),
    (["--small-side", "24"], "--small-side needs --small-detector or --small-classifiers"),
    (["--small-classifiers", "x", "--against", "a/S32"],
     "--against folders need names of their own, not S32"),
])
def test_bad_small_box_options_get_one_line(crossval, capsys, args, says):
    assert crossval.main(args) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"tuning_crossval: {says}"]


def test_small_boxes_read_by_the_same_classifiers_read_as_the_model(crossval, tmp_path,
                                                                    monkeypatch, capsys):
    """``--small-classifiers`` naming a copy of the model's own networks re-reads every
    small box the same, so the S column is the model's figure in every row and passes
    the same dice wrong in every photo (``--wrong`` lists none)."""
    import shutil

    from companion.vision.learned import MODEL_DIR

    rendered_sets(crossval, tmp_path, monkeypatch)
    same = tmp_path / "same"
    shutil.copytree(MODEL_DIR, same)
    assert crossval.main(["--folds", "2", "--draws", "50", "--procedures", "A",
                          "--small-side", "400", "--small-classifiers", str(same),
                          "--wrong"]) == 0
    out = capsys.readouterr().out
    listed = out.split("| column | set | photo | source photo | A | column |")[1]
    assert "| S400 |" not in listed  # the same dice wrong in every photo
    line = next(x for x in out.splitlines() if x.startswith("against S400:"))
    assert "own detector (0 added" in line and f"read by {same} classifiers" in line
    assert int(line.split("classifiers (")[1].split()[0]) > 10  # the rendered dice re-read
    rows = pool_rows(crossval, out)
    assert len(rows) == len(crossval.POOLS) * len(crossval.SHOWN)
    assert all(row[2] == row[3] for row in rows)


def test_wrong_changes_lists_the_photos_whose_wrong_dice_differ(crossval):
    from companion.vision.evaluate import ImageScore

    def score(*pairs):
        return ImageScore(pairs=list(pairs))

    first = [score(("1", "1"), ("2", "3")), score(("4", "unknown")), score(("5", "6")),
             score()]
    second = [score(("2", "3"), ("1", "1")), score(("4", "2")), score(("5", "5")),
              score(("6", "unknown"))]
    assert crossval.wrong_changes(first, second) == [(1, "", "4 as 2"), (2, "5 as 6", "")]
    assert crossval.wrong_changes(first, first) == []
    with pytest.raises(ValueError):
        crossval.wrong_changes(first, second[:2])
