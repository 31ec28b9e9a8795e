"""How sure a figure measured on labelled photos is: a bootstrap over source photos. Pure.

A set's end to end (or confidently wrong, precision, recall) is a count over a few
hundred or thousand dice, and the dice of one photo (and of a photo's augmented copies,
which share a source photo) succeed or fail together. So the interval resamples whole
groups of photos, not single dice: draw as many groups as the set has, with replacement,
add up their counts, take the figure; repeat; the middle ``level`` share of the draws is
the interval (percentile bootstrap). Deterministic for a seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from companion.vision.evaluate import ImageScore

FIGURES = ("end_to_end", "wrong_confident", "precision", "recall", "objective")
# the objective tuning maximises (``reader_lab.tune_reader.tune_thresholds``, whose costs
# these are by default): end to end less these per labelled die, per confidently wrong
# die and per box where no die is
WRONG_COST, FALSE_COST = 10.0, 1.0


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.low:.1%}-{self.high:.1%}"


def _check(n_scores: int, groups: Sequence[str], draws: int, level: float) -> None:
    if n_scores != len(groups):
        raise ValueError(f"{n_scores} image scores but {len(groups)} group names")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, not {draws}")


def _group_counts(scores: Sequence[ImageScore], groups: Sequence[str], names: list[str]
                  ) -> np.ndarray:
    """Per group: labelled, predicted, matched, correct, wrong."""
    index = {g: i for i, g in enumerate(names)}
    counts = np.zeros((len(names), 5), np.int64)
    for s, g in zip(scores, groups, strict=True):
        counts[index[g]] += (s.labelled, s.predicted, s.matched, s.correct, s.wrong)
    return counts


def _draws(n_groups: int, draws: int, seed: int) -> np.ndarray:
    """draws x groups: how many times each group is drawn in each resample."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_groups, size=(draws, n_groups))
    drawn = np.zeros((draws, n_groups), np.int64)
    np.add.at(drawn, (np.repeat(np.arange(draws), n_groups), picks.ravel()), 1)
    return drawn


def _figures(sums: np.ndarray, costs: tuple[float, float] = (WRONG_COST, FALSE_COST)
             ) -> dict[str, np.ndarray]:
    labelled, predicted, matched, correct, wrong = sums.T

    def share(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.where(den > 0, num / np.maximum(den, 1), 0.0)

    out = {"end_to_end": share(correct, labelled), "wrong_confident": share(wrong, labelled),
           "precision": share(matched, predicted), "recall": share(matched, labelled)}
    wrong_cost, false_cost = costs
    out["objective"] = (out["end_to_end"] - wrong_cost * out["wrong_confident"]
                        - false_cost * share(predicted - matched, labelled))
    return out


def point_figures(scores: Sequence[ImageScore]) -> dict[str, float]:
    """``FIGURES`` of the scores as they are (no resampling), counted as tuning counts."""
    sums = np.array([[sum(s.labelled for s in scores), sum(s.predicted for s in scores),
                      sum(s.matched for s in scores), sum(s.correct for s in scores),
                      sum(s.wrong for s in scores)]], np.int64)
    return {f: float(v[0]) for f, v in _figures(sums).items()}


def _percentiles(values: dict[str, np.ndarray], level: float) -> dict[str, Interval]:
    tail = (1 - level) / 2 * 100
    return {f: Interval(float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail)))
            for f, v in values.items()}


def bootstrap_intervals(scores: Sequence[ImageScore], groups: Sequence[str], *,
                        draws: int = 1000, level: float = 0.95, seed: int = 0,
                        costs: tuple[float, float] = (WRONG_COST, FALSE_COST)
                        ) -> dict[str, Interval]:
    """Intervals for ``FIGURES`` from per-image scores, resampling the photos by
    ``groups`` (one name per score: photos with the same name are drawn together);
    ``costs``: the objective's (per confidently wrong die, per box where no die is)."""
    _check(len(scores), groups, draws, level)
    names = sorted(set(groups))
    if not names:
        return {f: Interval(0.0, 0.0) for f in FIGURES}
    counts = _group_counts(scores, groups, names)
    return _percentiles(_figures(_draws(len(names), draws, seed) @ counts, costs), level)


def bootstrap_difference(first: Sequence[ImageScore], second: Sequence[ImageScore],
                         groups: Sequence[str], *, draws: int = 1000, level: float = 0.95,
                         seed: int = 0) -> dict[str, Interval]:
    """Intervals for ``FIGURES`` of ``second`` less ``first``: two readers' scores of the
    same photos (in the same order, named by ``groups``), both resampled with the same
    draws (a paired bootstrap), so that the photos both find hard cancel out."""
    _check(len(first), groups, draws, level)
    _check(len(second), groups, draws, level)
    names = sorted(set(groups))
    if not names:
        return {f: Interval(0.0, 0.0) for f in FIGURES}
    drawn = _draws(len(names), draws, seed)
    a = _figures(drawn @ _group_counts(first, groups, names))
    b = _figures(drawn @ _group_counts(second, groups, names))
    return _percentiles({f: b[f] - a[f] for f in FIGURES}, level)


def exact_share(hits: int, n: int, level: float = 0.95) -> Interval:
    """The Clopper-Pearson interval for ``hits`` of ``n`` independent items (a share that
    may be nought: 0 of 45 still allows up to 7.9% at 95%)."""
    if not 0 <= hits <= n:
        raise ValueError(f"hits must be 0..n, not {hits} of {n}")
    if n == 0:
        return Interval(0.0, 1.0)
    tail = (1 - level) / 2

    def at_most(k: int, p: float) -> float:  # P(X <= k) for X ~ Binomial(n, p)
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

    def solve(f, want: float) -> float:  # f falls from 1 to 0 as p goes 0 -> 1
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > want else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if hits == 0 else solve(lambda p: at_most(hits - 1, p), 1 - tail)
    high = 1.0 if hits == n else solve(lambda p: at_most(hits, p), tail)
    return Interval(low, high)
