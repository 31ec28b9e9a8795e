"""Tuning few-shot profiles on the validation splits (``python -m reader_lab train --part
tune``): per number of shots, which embedding, similarity and margin thresholds, detector
threshold and faint-box rule a profile of that many shots reads with, written into the
model's reader.json ``fewshot`` table for ``companion.vision.fewshot`` to read.
"""

from __future__ import annotations

import numpy as np

from companion.vision.fewshot import build_prototypes, face_scores, faint_kept
from companion.vision.intervals import FALSE_COST, WRONG_COST
from companion.vision.learned import LearnedReader, kept_boxes
from reader_lab.tune_reader import match_kept

# the detector scores from which the few-shot reader may read a box (``tune_fewshot``)
FEWSHOT_DET_GRID = (0.3, 0.4, 0.5, 0.6, 0.7)
# the faint-box rules it may add (issue 8n): boxes from these lower scores when their
# nearest prototype is at least this similar
FEWSHOT_LOW_GRID = (0.2, 0.3, 0.4)
FEWSHOT_LOW_SIM_GRID = (0.85, 0.9, 0.93, 0.95)


def tune_fewshot(reader: LearnedReader, *, root=None, shots: tuple[int, ...] = (1, 3, 10),
                 seeds: int = 3, wrong_cost: float = WRONG_COST,
                 false_cost: float = FALSE_COST,
                 log=print, val_sets: tuple[str, ...] | None = None,
                 dets: tuple[float, ...] = FEWSHOT_DET_GRID,
                 lows: tuple[float, ...] = FEWSHOT_LOW_GRID,
                 low_sims: tuple[float, ...] = FEWSHOT_LOW_SIM_GRID) -> dict[str, list]:
    """Choose (min_similarity, min_margin, embedding, detector threshold, faint-box
    threshold, faint-box similarity) per number of shots on the validation splits only:
    prototypes from a set's train split, read on its validation split, scored as
    end-to-end minus ``wrong_cost`` x confidently wrong minus ``false_cost`` x boxes where
    no die is (since issue 8m, when the threshold became a choice; as
    ``tune_reader.tune_thresholds`` counts them), over ``seeds`` draws. The validation splits
    are ``val_sets`` (a model's reader.json ``val_sets``; default
    ``dice_photos.VAL_SETS``), each with its train split (``dice_photos.train_of``); the
    detector thresholds tried are ``dets``, each alone or (issue 8n) with a faint-box
    rule from ``lows`` below it and ``low_sims`` (``faint_kept``; no rule: None, None,
    kept on a tie). Each choice is counted from ``fewshot_tally`` (the same count as
    reading with ``FewShotReader`` and scoring, done once per rule)."""
    from companion.vision.frames import FrameUnreadable, load_image
    from reader_lab import dice_photos

    kinds = reader.embeddings
    cached = []  # (source manifest, [(boxes, probs, {embedding: emb}, labels)])
    for val in val_sets or dice_photos.VAL_SETS:
        src = dice_photos.train_of(val)
        rows = []
        for m in dice_photos.load_set(val, root):
            try:
                img = load_image(m.path)
            except FrameUnreadable:
                continue
            boxes = reader.detect(img, min((*dets, *lows)))
            probs, embs = reader.classify_all(img, boxes)  # every kind it has
            rows.append((boxes, probs, embs, m.dice))
        cached.append((dice_photos.load_set(src, root), rows))

    def kept_rows(rows: list, tops: list, det: float, low: float | None,
                  low_sim: float | None) -> list:
        """The rows with only the boxes the rule reads (``tops``: per row, each box's
        best prototype similarity)."""
        out = []
        for (boxes, probs, embs, dice), top in zip(rows, tops, strict=True):
            keep = faint_kept(boxes, top, det, low, low_sim)
            out.append(([boxes[i] for i in keep], probs[keep],
                        {k: e[keep] for k, e in embs.items()}, dice))
        return out

    sims = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97)
    margins = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
    rules = [(det, None, None) for det in dets] + [
        (det, low, low_sim) for det in dets for low in lows if low < det
        for low_sim in low_sims]
    chosen: dict[str, list] = {}
    for n in shots:
        best = None
        for kind in kinds:  # a tie keeps the earlier kind (turned)
            protos_of = []  # (set index, faces, prototypes, per row each box's best)
            for ci, (source, rows) in enumerate(cached):
                for seed in range(seeds):
                    data = build_prototypes(source, n, seed=seed, reader=reader,
                                            embedding=kind)
                    faces = list(data["prototypes"])
                    protos = np.array([data["prototypes"][f] for f in faces], np.float32)
                    tops = [face_scores(embs[kind], protos, kind).max(axis=1) if len(boxes)
                            else np.zeros(0) for boxes, _, embs, _ in rows]
                    protos_of.append((ci, faces, protos, tops))
            for det, low, low_sim in rules:  # a tie keeps the earlier rule (none)
                tallies = [fewshot_tally(kept_rows(cached[ci][1], tops, det, low, low_sim),
                                         kind, faces, protos, reader.keep_nested)
                           for ci, faces, protos, tops in protos_of]
                top = np.concatenate([t[0] for t in tallies])
                gap = np.concatenate([t[1] for t in tallies])
                right = np.concatenate([t[2] for t in tallies])
                predicted = sum(t[3] for t in tallies)
                labelled = max(1, sum(t[4] for t in tallies))
                false = (predicted - len(top)) / labelled
                for sim in sims:
                    for margin in margins:
                        sure = (top >= sim) & (gap >= margin)
                        e2e = int(np.count_nonzero(sure & right)) / labelled
                        wrong = int(np.count_nonzero(sure & ~right)) / labelled
                        key = (round(e2e - wrong_cost * wrong - false_cost * false, 4), sim,
                               margin, det)
                        if best is None or key > best[0]:
                            best = (key, kind, sim, margin, det, low, low_sim, e2e, wrong)
        (objective, *_), kind, sim, margin, det, low, low_sim, e2e, wrong = best
        faint = (f", faint boxes from {low} at similarity {low_sim}" if low is not None
                 else ", no faint boxes")
        log(f"few-shot N={n}: {kind} embedding, detector {det}{faint}, min_similarity "
            f"{sim} min_margin {margin}: end-to-end {e2e:.4f} wrong {wrong:.4f} "
            f"objective {objective:.4f} (validation, {seeds} draws)")
        # no faint boxes: the four numbers an issue 8m reader.json holds
        chosen[str(n)] = [sim, margin, kind, det] + ([low, low_sim] if low is not None
                                                     else [])
    return chosen


def fewshot_tally(rows: list, kind: str, faces: list[str], protos: np.ndarray,
                  keep_nested: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """What any (min_similarity, min_margin) then counts, for ``nearest_faces`` over
    ``rows`` ((boxes, probs, {embedding: emb}, labelled dice) per photo): for each box
    it keeps that is matched to a labelled die, its best similarity, the gap to the
    runner-up and whether the nearest face is the label's; and how many boxes it keeps
    and dice are labelled. Which boxes are kept and matched does not depend on the two
    thresholds (an "unknown" die is still a box), so they are matched once."""
    top, gap, right, predicted, labelled = [], [], [], 0, 0
    for boxes, probs, embs, dice in rows:
        labelled += len(dice)
        kept = kept_boxes(boxes, probs, keep_nested=keep_nested)
        predicted += len(kept)
        matched = match_kept(boxes, kept, dice)
        scores = face_scores(embs[kind][[kept[pi] for pi, _ in matched]], protos, kind)
        for (_, li), sims in zip(matched, scores, strict=True):
            order = np.argsort(-sims)
            first = float(sims[order[0]])
            second = float(sims[order[1]]) if len(order) > 1 else -1.0
            top.append(first)
            gap.append(first - second)
            right.append(faces[int(order[0])] == dice[li].face)
    return (np.array(top, np.float64), np.array(gap, np.float64), np.array(right, bool),
            predicted, labelled)
