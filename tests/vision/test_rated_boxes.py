"""Boxes a box audit's raters both called "not a die", read for training (issue 9v)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from companion.vision.rated_boxes import RatedNegativesError, read_rated_negatives

KEY = ("tile,kind,set,image,x0,y0,x1,y1,read,confidence\n"
       "1,unmatched,table-train,a.jpg,1,2,11,12,1,0.9\n"
       "2,unmatched,table-train,a.jpg,20,20,30,30,6,0.9\n"
       "3,labelled,table-train,b.jpg,5,5,15,15,2,0.9\n"
       "4,unmatched,table-val,c.jpg,0,0,8,8,3,0.8\n"
       "5,background,table-val,c.jpg,40,40,50,50,,\n")


def _round(folder: Path, first: str, second: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "key.csv").write_text(KEY, encoding="utf-8")
    (folder / "rater-A.csv").write_text(first, encoding="utf-8")
    (folder / "rater-B.csv").write_text(second, encoding="utf-8")
    return folder


def test_only_unmatched_boxes_both_raters_call_not_a_die(tmp_path):
    folder = _round(tmp_path / "r", "tile,face\n1,n\n2,n\n3,n\n4,n\n5,n\n",
                    "tile,face\n1,N\n2,6\n3,n\n4,n\n5,n\n")
    rated = read_rated_negatives(folder)
    # tile 2: one rater saw a die; 3 and 5 are the audit's controls
    assert rated == {"a.jpg": [(1.0, 2.0, 11.0, 12.0)], "c.jpg": [(0.0, 0.0, 8.0, 8.0)]}


def test_a_round_without_two_raters_or_with_an_unanswered_tile_is_one_line(tmp_path):
    folder = _round(tmp_path / "r", "tile,face\n1,n\n", "tile,face\n1,n\n")
    (folder / "rater-B.csv").unlink()
    with pytest.raises(RatedNegativesError, match="two rater-\\*.csv files \\(found 1\\)"):
        read_rated_negatives(folder)
    (folder / "rater-B.csv").write_text("tile,face\n1,n\n2,n\n4,n\n", encoding="utf-8")
    with pytest.raises(RatedNegativesError, match="tile 2 is not answered") as exc:
        read_rated_negatives(folder)
    assert "\n" not in str(exc.value)


def test_the_committed_train_round_gives_the_rated_board_pieces():
    folder = Path(__file__).parents[2] / "benchmarks/box_audit_9u/train"
    rated = read_rated_negatives(folder)
    with (folder / "key.csv").open(encoding="utf-8") as fh:
        set_of = {r["image"]: r["set"] for r in csv.DictReader(fh)}
    by_set: dict[str, int] = {}
    for image, boxes in rated.items():
        by_set[set_of[image]] = by_set.get(set_of[image], 0) + len(boxes)
    assert by_set == {"table-train": 19, "table-val": 3}  # the README's round 2 table
