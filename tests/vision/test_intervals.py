"""Bootstrap intervals over source photos (companion/vision/intervals.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.vision.evaluate import ImageScore
from companion.vision.intervals import (
    FIGURES,
    bootstrap_difference,
    bootstrap_intervals,
    exact_share,
    point_figures,
)


def _score(labelled: int, correct: int, wrong: int = 0, predicted: int | None = None
           ) -> ImageScore:
    matched = correct + wrong
    return ImageScore(labelled=labelled, predicted=matched if predicted is None else predicted,
                      matched=matched, correct=correct, wrong=wrong)


def test_a_perfect_set_is_sure() -> None:
    scores = [_score(3, 3) for _ in range(20)]
    ci = bootstrap_intervals(scores, [f"p{i}" for i in range(20)])
    assert (ci["end_to_end"].low, ci["end_to_end"].high) == (1.0, 1.0)
    assert (ci["wrong_confident"].low, ci["wrong_confident"].high) == (0.0, 0.0)


def test_the_interval_holds_the_figure_and_narrows_with_more_photos() -> None:
    half = [_score(4, 4), _score(4, 0)]  # half the photos read, half lost
    few = bootstrap_intervals(half * 5, [f"p{i}" for i in range(10)])
    many = bootstrap_intervals(half * 200, [f"p{i}" for i in range(400)])
    for ci in (few, many):
        assert ci["end_to_end"].low < 0.5 < ci["end_to_end"].high
    assert (many["end_to_end"].high - many["end_to_end"].low
            < (few["end_to_end"].high - few["end_to_end"].low) / 3)


def test_copies_of_one_photo_are_drawn_together() -> None:
    """Three augmented copies of each photo: as one group each, the interval is as wide
    as three times fewer photos would give, wider than counting the copies apart."""
    scores = [_score(4, 4), _score(4, 0)] * 30
    copies = [s for s in scores for _ in range(3)]
    apart = bootstrap_intervals(copies, [f"c{i}" for i in range(len(copies))])
    together = bootstrap_intervals(copies, [f"p{i // 3}" for i in range(len(copies))])
    width = {k: v["end_to_end"].high - v["end_to_end"].low
             for k, v in (("apart", apart), ("together", together))}
    assert width["together"] > 1.4 * width["apart"]


def test_deterministic_for_a_seed() -> None:
    scores = [_score(5, i % 6) for i in range(30)]
    groups = [f"p{i}" for i in range(30)]
    assert bootstrap_intervals(scores, groups, seed=3) == bootstrap_intervals(scores, groups,
                                                                             seed=3)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="2 image scores but 1 group"):
        bootstrap_intervals([_score(1, 1), _score(1, 1)], ["a"])
    with pytest.raises(ValueError, match="level"):
        bootstrap_intervals([_score(1, 1)], ["a"], level=1.5)
    with pytest.raises(ValueError, match="draws"):
        bootstrap_intervals([_score(1, 1)], ["a"], draws=0)


def test_an_empty_set_gives_zero_intervals() -> None:
    assert all(str(v) == "0.0%-0.0%" for v in bootstrap_intervals([], []).values())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6),
                          st.integers(0, 3)), min_size=1, max_size=25))
def test_intervals_are_ordered_shares_around_the_figure(rows) -> None:
    scores = []
    for labelled, c, w, extra in rows:
        correct = min(c, labelled)
        wrong = min(w, labelled - correct)
        scores.append(_score(labelled, correct, wrong, correct + wrong + extra))
    ci = bootstrap_intervals(scores, [f"p{i % 7}" for i in range(len(scores))], draws=200)
    assert set(ci) == set(FIGURES)
    for f, v in ci.items():
        assert v.low <= v.high
        if f != "objective":
            assert 0.0 <= v.low <= v.high <= 1.0


def test_the_objective_counts_a_wrong_die_as_ten_and_a_phantom_as_one() -> None:
    # 10 dice: 8 right, 1 wrong, 1 missed, and 2 boxes where no die is
    ci = bootstrap_intervals([_score(10, 8, 1, predicted=11)], ["p"], draws=5)
    assert ci["objective"].low == pytest.approx(0.8 - 10 * 0.1 - 0.2)
    # other costs, as tuning may be asked to use
    ci = bootstrap_intervals([_score(10, 8, 1, predicted=11)], ["p"], draws=5, costs=(2, 0))
    assert ci["objective"].low == pytest.approx(0.8 - 2 * 0.1)
    point = point_figures([_score(10, 8, 1, predicted=11), _score(10, 10)])
    assert point["objective"] == pytest.approx(0.9 - 10 * 0.05 - 0.1)
    assert point["precision"] == pytest.approx(19 / 21)


def test_a_reader_against_itself_differs_by_nothing() -> None:
    scores = [_score(4, i % 5, 0) for i in range(40)]
    groups = [f"p{i}" for i in range(40)]
    diff = bootstrap_difference(scores, scores, groups)
    assert all((v.low, v.high) == (0.0, 0.0) for v in diff.values())


def test_a_paired_difference_is_surer_than_the_two_intervals_apart() -> None:
    """Photos vary a lot (some all lost, some all read), and the second reader reads one
    more die on every photo: apart, the two intervals overlap; paired, the gain is sure."""
    first = [_score(6, 0 if i % 2 else 4) for i in range(30)]
    second = [_score(6, 1 if i % 2 else 5) for i in range(30)]
    groups = [f"p{i}" for i in range(30)]
    a, b = (bootstrap_intervals(s, groups)["end_to_end"] for s in (first, second))
    assert b.low < a.high  # overlapping apart
    diff = bootstrap_difference(first, second, groups)["end_to_end"]
    assert diff.low == pytest.approx(1 / 6) and diff.high == pytest.approx(1 / 6)


def test_paired_scores_must_cover_the_same_photos() -> None:
    with pytest.raises(ValueError, match="1 image scores but 2 group"):
        bootstrap_difference([_score(1, 1), _score(1, 1)], [_score(1, 1)], ["a", "b"])


def test_the_exact_interval_allows_more_than_nought_when_none_is_found() -> None:
    none = exact_share(0, 45)
    assert none.low == 0.0 and none.high == pytest.approx(1 - 0.025 ** (1 / 45), abs=1e-9)
    every = exact_share(5, 5)
    assert every.high == 1.0 and every.low == pytest.approx(0.025 ** (1 / 5), abs=1e-9)
    one = exact_share(1, 10)
    assert one.low < 0.1 < one.high
    assert (exact_share(0, 0).low, exact_share(0, 0).high) == (0.0, 1.0)
    with pytest.raises(ValueError):
        exact_share(3, 2)
