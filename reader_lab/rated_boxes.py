"""A box audit's round (``reader_lab/benchmarks/box_audit.py``: ``key.csv`` and the raters'
``tile,face`` answers), read and checked in one place: the audit's scoring and
``python -m reader_lab train --rated-negatives`` (the boxes two blind raters both called "not a
die") read it alike. No torch or OpenCV here, so the train command checks the folder
before it loads either. Each reader takes the exception class it raises (the
benchmarks exit with ``SystemExit``; training raises ``RatedNegativesError``); the
messages are the same either way."""

from __future__ import annotations

import csv
from pathlib import Path

from companion.errors import CompanionError

ANSWERS = frozenset("123456?n")  # a rater's answer: a face, "cannot tell" or "not a die"
BOX_KEY_HEADER = ["tile", "kind", "set", "image", "x0", "y0", "x1", "y1", "read",
                  "confidence"]
BOX_KINDS = ("unmatched", "labelled", "background")


class RatedNegativesError(CompanionError, ValueError):
    """A box audit's folder that cannot be read as rated boxes (one line names why)."""


def read_answers(path: Path, tiles: int, error: type[Exception] = RatedNegativesError
                 ) -> dict[int, str]:
    """A rater's ``tile,face`` CSV; a bad line is refused in one line naming it."""
    answers: dict[int, str] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.reader(fh), start=1):
            if not row or row[0].strip().lower() == "tile":
                continue
            try:
                n, face = int(row[0]), row[1].strip().lower()
            except (ValueError, IndexError):
                raise error(f"{path}:{lineno}: expected tile,face, got {row}") from None
            if face not in ANSWERS or not 1 <= n <= tiles:
                raise error(f"{path}:{lineno}: tile {row[0]} face {row[1]!r}: "
                            f"a tile 1-{tiles} and 1-6, ? or n")
            answers[n] = face
    return answers


def both_answers(first: Path, second: Path, rows: list[dict], program: str,
                 error: type[Exception] = RatedNegativesError
                 ) -> tuple[dict[int, str], dict[int, str]]:
    """Two raters' answers to a round's key ``rows``; a tile either leaves unanswered is
    refused in one line naming ``program``, both files and the tiles."""
    a, b = read_answers(first, len(rows), error), read_answers(second, len(rows), error)
    missing = [r["tile"] for r in rows if int(r["tile"]) not in a or int(r["tile"]) not in b]
    if missing:
        raise error(f"{program}: {first} or {second}: no answer for tiles "
                    f"{', '.join(missing[:10])}")
    return a, b


def read_box_key(key: Path, error: type[Exception] = RatedNegativesError) -> list[dict]:
    """A box audit's key.csv; one not of ``BOX_KEY_HEADER``'s columns, ``BOX_KINDS``'
    kinds and numbered tiles is refused in one line."""
    with key.open(encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    if reader.fieldnames != BOX_KEY_HEADER or any(r["kind"] not in BOX_KINDS
                                                  or not r["tile"].isdigit() for r in rows):
        raise error(f"box_audit: {key}: not a box audit key (header "
                    f"{','.join(BOX_KEY_HEADER)}, kinds {', '.join(BOX_KINDS)}, numbered tiles)")
    return rows


def box_verdict(a: str, b: str) -> str:
    """"die" (both answer a face, any), "not a die" (both n), else "unclear"."""
    if a in "123456" and b in "123456":
        return "die"
    return "not a die" if a == b == "n" else "unclear"


def rated_not_dice(folder: str | Path) -> list[dict]:
    """The key rows of a box audit's round (``key.csv`` and two ``rater-*.csv``) whose
    box both raters called not a die, each with its ``box`` as four numbers. Only the
    key's ``unmatched`` rows count: its labelled dice and background boxes are the
    audit's controls. A folder without a key and two answer files, a key or answer not
    of the audit's form, a tile either rater left unanswered, or a box that is not four
    numbers, is ``RatedNegativesError`` in one line."""
    folder = Path(folder)
    raters = sorted(folder.glob("rater-*.csv"))
    if not (folder / "key.csv").is_file() or len(raters) != 2:
        raise RatedNegativesError(f"--rated-negatives {folder}: needs key.csv and two "
                                  f"rater-*.csv files (found {len(raters)})")
    try:
        rows = read_box_key(folder / "key.csv")
        a, b = both_answers(*raters, rows, "--rated-negatives")
    except (OSError, UnicodeDecodeError) as exc:
        raise RatedNegativesError(f"--rated-negatives {folder}: {exc}") from None
    out = []
    for r in rows:
        n = int(r["tile"])
        if r["kind"] != "unmatched" or box_verdict(a[n], b[n]) != "not a die":
            continue
        try:
            r["box"] = tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
        except ValueError:
            raise RatedNegativesError(f"--rated-negatives {folder}: tile {r['tile']}'s box "
                                      f"is not four numbers") from None
        out.append(r)
    return out


def read_rated_negatives(folder: str | Path) -> dict[str, list[tuple[float, ...]]]:
    """The boxes of ``rated_not_dice`` per photo (its path below the photo root)."""
    out: dict[str, list[tuple[float, ...]]] = {}
    for r in rated_not_dice(folder):
        out.setdefault(r["image"], []).append(r["box"])
    return out
