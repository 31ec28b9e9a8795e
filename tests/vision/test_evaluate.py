"""Scoring readings against a labelled manifest: loading, one-to-one nearest-first
matching, and the figures `companion eval` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.vision.evaluate import (
    LabelledDie,
    ManifestError,
    ManifestImage,
    PredictedDie,
    confidently_wrong,
    format_report,
    load_manifest,
    match,
    matched_readings,
    score_image,
    summarise,
)


def pred(face, x, y, conf=0.9):
    return PredictedDie(face=face, box=(x - 10, y - 10, x + 10, y + 10), centre=(x, y),
                        confidence=conf)


def lab(face, x0, y0, x1, y1):
    return LabelledDie(face=face, box=(x0, y0, x1, y1))


# ---------------------------------------------------------------- manifest


def write(tmp_path, text, name="labels.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_manifest_groups_rows_by_image_and_resolves_paths(tmp_path):
    path = write(tmp_path, "image,face,x0,y0,x1,y1\n"
                           "a/one.jpg,3,10,20,30,40\n"
                           "b/two.jpg,6,1,2,3,4\n"
                           "a/one.jpg,1,50,60,70,80\n"
                           "/abs/three.png,2,0,0,5,5\n")
    images = load_manifest(path)
    assert [i.key for i in images] == ["a/one.jpg", "b/two.jpg", "/abs/three.png"]
    assert images[0].path == tmp_path / "a" / "one.jpg"
    assert str(images[2].path) == "/abs/three.png"
    assert [d.face for d in images[0].dice] == ["3", "1"]
    assert images[0].dice[1].box == (50.0, 60.0, 70.0, 80.0)


def test_manifest_tolerates_a_bom_and_blank_lines(tmp_path):
    path = write(tmp_path, "\ufeffimage,face,x0,y0,x1,y1\n\nx.jpg,4,0,0,9,9\n\n")
    assert [d.face for d in load_manifest(path)[0].dice] == ["4"]


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty manifest"),
        ("name,face,x0,y0,x1,y1\nx.jpg,1,0,0,1,1\n", ":1: bad header"),
        ("image,face,x0,y0,x1,y1\nx.jpg,7,0,0,1,1\n", ":2: face '7' is not 1..6"),
        ("image,face,x0,y0,x1,y1\nx.jpg,1,0,0,1\n", ":2: expected 6 fields, got 5"),
        ("image,face,x0,y0,x1,y1\nx.jpg,1,0,0,1,1\nx.jpg,2,a,0,1,1\n", ":3: box"),
        ("image,face,x0,y0,x1,y1\nx.jpg,1,5,0,1,1\n", "x0<=x1"),
        ("image,face,x0,y0,x1,y1\n,1,0,0,1,1\n", "empty image path"),
        ("image,face,x0,y0,x1,y1\n", "no labelled dice"),
    ],
)
def test_bad_manifests_get_a_one_line_error_naming_the_line(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    message = str(err.value)
    assert needle in message
    assert "\n" not in message
    assert str(path) in message


def test_missing_manifest(tmp_path):
    with pytest.raises(ManifestError, match="manifest not found"):
        load_manifest(tmp_path / "nope.csv")


# ---------------------------------------------------------------- matching


def test_centre_must_lie_inside_the_box_edges_included():
    labels = [lab("1", 0, 0, 10, 10)]
    assert match([pred("1", 10, 10)], labels) == [(0, 0)]
    assert match([pred("1", 10.01, 5)], labels) == []


def test_one_to_one_nearest_first_within_one_box():
    labels = [lab("4", 0, 0, 100, 100)]
    preds = [pred("4", 90, 90), pred("2", 52, 48), pred("4", 10, 50)]
    # the prediction nearest the box's centre wins; the others stay unmatched
    assert match(preds, labels) == [(1, 0)]


def test_one_prediction_in_two_overlapping_boxes_goes_to_the_nearer():
    labels = [lab("1", 0, 0, 60, 60), lab("2", 40, 40, 100, 100)]
    assert match([pred("2", 45, 45)], labels) == [(0, 0)]  # A's centre (30,30) is nearer
    assert match([pred("2", 55, 55)], labels) == [(0, 1)]  # B's centre (70,70) is nearer
    assert match([pred("2", 58, 58), pred("1", 20, 20)], labels) == [(0, 1), (1, 0)]


def test_nearest_first_is_greedy_not_a_maximum_matching():
    """P0 lies in both boxes and is nearest of all to box B's centre, so it takes B;
    P1 lies only in B and goes unmatched, though P0->A, P1->B would match both."""
    labels = [lab("1", 0, 0, 100, 100), lab("2", 60, 0, 120, 100)]
    p0 = pred("2", 90, 50)  # 0 from B's centre (90,50), 40 from A's (50,50)
    p1 = pred("2", 110, 50)  # only inside B, 20 from its centre
    assert match([p0, p1], labels) == [(0, 1)]


def test_every_label_and_prediction_used_at_most_once():
    labels = [lab("3", 0, 0, 50, 50), lab("3", 0, 0, 50, 50)]  # a duplicated label
    preds = [pred("3", 25, 25), pred("3", 26, 25), pred("3", 27, 25)]
    pairs = match(preds, labels)
    assert len(pairs) == 2
    assert len({p for p, _ in pairs}) == 2 and {lb for _, lb in pairs} == {0, 1}


# ---------------------------------------------------------------- scores


def test_score_buckets_correct_wrong_unknown_missed():
    labels = [lab("1", 0, 0, 20, 20), lab("2", 30, 0, 50, 20), lab("6", 60, 0, 80, 20),
              lab("5", 90, 0, 110, 20)]
    preds = [pred("1", 10, 10), pred("3", 40, 10, 0.95), pred("unknown", 70, 10, 0.2),
             pred("4", 300, 300), pred("unknown", 400, 400, 0.1)]
    s = score_image(preds, labels)
    assert (s.labelled, s.predicted, s.matched) == (4, 5, 3)
    assert (s.correct, s.wrong, s.unknown, s.unmatched_unknown) == (1, 1, 1, 1)
    assert sorted(s.pairs) == [("1", "1"), ("2", "3"), ("6", "unknown")]


def test_summary_figures_and_confusion():
    a = score_image([pred("1", 10, 10), pred("3", 40, 10)],
                    [lab("1", 0, 0, 20, 20), lab("2", 30, 0, 50, 20)])
    b = score_image([pred("unknown", 10, 10), pred("6", 500, 500)],
                    [lab("6", 0, 0, 20, 20), lab("6", 100, 100, 120, 120)])
    s = summarise([a, b], [4.0, 2.0, 9.0], labelled_faces=["1", "2", "6", "6"])
    assert (s.images, s.labelled, s.predicted, s.matched) == (2, 4, 4, 3)
    assert s.precision == pytest.approx(3 / 4)
    assert s.recall == pytest.approx(3 / 4)
    assert s.face_accuracy == pytest.approx(1 / 3)
    assert s.end_to_end == pytest.approx(1 / 4)
    assert s.unknown_share == pytest.approx(1 / 4)
    assert s.wrong == 1 and s.wrong_share == pytest.approx(1 / 4)
    assert s.ms_per_image_median == 4.0
    assert s.confusion[0][0] == 1  # 1 read as 1
    assert s.confusion[1][2] == 1  # 2 read as 3
    assert sum(map(sum, s.confusion)) == 2  # the unknown is not in the 6x6 matrix
    assert s.unknown_by_face == [0, 0, 0, 0, 0, 1]
    assert s.missed_by_face == [0, 0, 0, 0, 0, 1]


def test_empty_summary_has_no_division_by_zero():
    s = summarise([], [])
    assert (s.precision, s.recall, s.face_accuracy, s.end_to_end) == (0.0, 0.0, 0.0, 0.0)
    assert s.ms_per_image_median == 0.0


def test_json_keys_and_report_text():
    s = summarise([score_image([pred("5", 10, 10)], [lab("5", 0, 0, 20, 20)])], [3.0], ["5"])
    d = s.as_json_dict()
    assert list(d) == ["images", "labelled", "predicted", "matched", "precision", "recall",
                       "face_accuracy", "end_to_end", "unknown", "ms_per_image_median",
                       "wrong_confident", "missed"]
    assert json.loads(json.dumps(d))["end_to_end"] == 1.0
    assert d["wrong_confident"] == 0.0 and d["missed"] == 0
    two = summarise([score_image([pred("3", 10, 10)], [lab("5", 0, 0, 20, 20),
                                                       lab("1", 50, 50, 60, 60)])], [], "51")
    assert two.as_json_dict()["wrong_confident"] == 0.5 and two.as_json_dict()["missed"] == 1
    text = format_report(s, title="demo")
    for needle in ("demo", "precision         100.00%", "end-to-end        100.00%",
                   "confidently wrong", "read as unknown", "median ms/image   3.00",
                   "confusion (rows: labelled face, columns: read face)"):
        assert needle in text
    matrix = [line for line in text.splitlines() if line.startswith("   5")]
    assert matrix == ["   5         0     0     0     0     1     0     0     0"]


def test_a_labelled_dies_side_is_its_boxs_longer_edge():
    assert LabelledDie(3, (10, 20, 40, 30)).side == 30  # wide
    assert LabelledDie(3, (10, 20, 15, 60)).side == 40  # tall


def test_matched_readings_give_each_labelled_die_its_match_or_none():
    a = ManifestImage("a.jpg", Path("a.jpg"), (LabelledDie("1", (0, 0, 10, 10)),
                                               LabelledDie("2", (20, 0, 30, 10))))
    b = ManifestImage("b.jpg", Path("b.jpg"), (LabelledDie("3", (0, 0, 10, 10)),))
    hit = PredictedDie("2", (20, 0, 30, 10), (25.0, 5.0), 0.9)
    stray = PredictedDie("4", (50, 50, 60, 60), (55.0, 55.0), 0.9)
    got = matched_readings([a, b], [("a.jpg", stray), ("a.jpg", hit)])
    assert [(m.key, li, p) for m, li, p in got] == [("a.jpg", 1, hit), ("a.jpg", 0, None),
                                                    ("b.jpg", 0, None)]


def test_confidently_wrong_dice_are_score_images_wrong_ones():
    dice = (LabelledDie("1", (0, 0, 20, 20)), LabelledDie("2", (30, 0, 50, 20)),
            LabelledDie("3", (60, 0, 80, 20)), LabelledDie("4", (90, 0, 110, 20)))
    item = ManifestImage("a.jpg", Path("a.jpg"), dice)
    preds = [pred("1", 10, 10), pred("5", 40, 10), pred("unknown", 70, 10), pred("6", 200, 200)]
    got = confidently_wrong([item], [("a.jpg", p) for p in preds])
    assert [(li, p.face) for _, li, p in got] == [(1, "5")]  # not the unknown, nor the stray
    assert len(got) == score_image(preds, dice).wrong
