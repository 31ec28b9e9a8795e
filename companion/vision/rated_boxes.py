"""Boxes people rated in a box audit (``benchmarks/box_audit.py``), read for training:
the boxes two blind raters both called "not a die". No torch or OpenCV here, so the
``companion train`` command checks the folder before it loads either."""

from __future__ import annotations

import csv
from pathlib import Path


class RatedNegativesError(ValueError):
    """A box audit's folder that cannot be read as rated boxes (one line names why)."""


def read_rated_negatives(folder: str | Path) -> dict[str, list[tuple[float, ...]]]:
    """The boxes two blind raters both called "not a die" (answer ``n``) in a box
    audit's round (``benchmarks/box_audit.py``: ``key.csv`` and two ``rater-*.csv``
    files of ``tile,face``), per photo (its path below the photo root). Only the key's
    ``unmatched`` rows count: its labelled dice and background boxes are the audit's
    controls. A folder without a key and two answer files, or a tile either rater left
    unanswered, is ``RatedNegativesError``."""
    folder = Path(folder)
    raters = sorted(folder.glob("rater-*.csv"))
    if not (folder / "key.csv").is_file() or len(raters) != 2:
        raise RatedNegativesError(f"--rated-negatives {folder}: needs key.csv and two "
                                  f"rater-*.csv files (found {len(raters)})")
    answers = []
    for path in raters:
        with path.open(encoding="utf-8") as fh:
            answers.append({r["tile"].strip(): r["face"].strip().lower()
                            for r in csv.DictReader(fh) if r.get("tile") and r.get("face")})
    out: dict[str, list[tuple[float, ...]]] = {}
    with (folder / "key.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row.get("kind") != "unmatched":
                continue
            tile = row["tile"]
            if any(tile not in a for a in answers):
                raise RatedNegativesError(f"--rated-negatives {folder}: tile {tile} is not "
                                          f"answered in both {raters[0].name} and "
                                          f"{raters[1].name}")
            if all(a[tile] == "n" for a in answers):
                out.setdefault(row["image"], []).append(
                    tuple(float(row[k]) for k in ("x0", "y0", "x1", "y1")))
    return out
