"""Boxes a box audit's raters both called "not a die", read for training (issue 9v)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reader_lab.rated_boxes import (
    RatedNegativesError,
    rated_not_dice,
    read_rated_negatives,
)

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
    with pytest.raises(RatedNegativesError, match="no answer for tiles 2, 3, 4, 5") as exc:
        read_rated_negatives(folder)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("answer, key_line, names", [
    ("3,banana", None, "rater-A.csv:4: tile 3 face 'banana'"),  # a garbage answer
    ("3,n", "1,unmatched,table-train,a.jpg,1,2,eleven,12,1,0.9",
     "tile 1's box is not four numbers"),
    ("3,n", "one,unmatched,table-train,a.jpg,1,2,11,12,1,0.9", "not a box audit key"),
    ("3,n", "1,somewhere,table-train,a.jpg,1,2,11,12,1,0.9", "not a box audit key"),
])
def test_a_corrupt_answer_or_key_is_one_line_naming_it(tmp_path, answer, key_line, names):
    answers = f"tile,face\n1,n\n2,n\n{answer}\n4,n\n5,n\n"
    folder = _round(tmp_path / "r", answers, "tile,face\n1,n\n2,n\n3,n\n4,n\n5,n\n")
    if key_line:
        lines = KEY.splitlines()
        (folder / "key.csv").write_text("\n".join([lines[0], key_line, *lines[2:]]) + "\n",
                                        encoding="utf-8")
    with pytest.raises(RatedNegativesError, match=names) as exc:
        rated_not_dice(folder)
    assert "\n" not in str(exc.value)


def test_the_committed_train_round_gives_the_rated_board_pieces():
    rows = rated_not_dice(Path(__file__).parents[2] / "reader_lab/benchmarks/box_audit_9u/train")
    by_set: dict[str, int] = {}
    for r in rows:
        by_set[r["set"]] = by_set.get(r["set"], 0) + 1
    assert by_set == {"table-train": 19, "table-val": 3}  # the README's round 2 table
