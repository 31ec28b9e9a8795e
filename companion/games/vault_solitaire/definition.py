"""Vault, the solitaire dice game (v1.7), as data: the board, locks, gems, skimmers.

The rulebook text lost most of the board picture. What survives is a 6-row grid of
numbers/Odd/Even/x2 with lock letters around it; see the README ("More games on the
same box") for each reading. In short:
- the grid is 6x6, taken from the text's first six cells of each row; a blank cell is a
  blacked-out square (already marked); the text's seventh value in a row is read as
  debris of the right-hand lock column and dropped;
- the 12 locks go clockwise round the board, one per row or column: A B C over columns
  b d f, D E F beside rows 2 4 6 on the right, G H I under columns e c a, J K L beside
  rows 5 3 1 on the left (the text shows L K J on rows 1 3 5, A over the grid, F on the
  right, G H I below);
- the gem icons are lost: a row or column holds ceil(open squares / 2) gems (27 in all);
- a skimmer holds SKIMMER_BOXES boxes (the text's example has 13 marked).
Cells are named like a chess board read from the top: column a-f left to right, row 1-6
top to bottom ("c2" is the third square of the second row).
"""

from __future__ import annotations

GAME_ID = "vault-solitaire"
SIZE = 6
COLS = "abcdef"
DICE = 5
ROUNDS = 12
LOCKS = "ABCDEFGHIJKL"  # round k (0-based) closes LOCKS[k] at its end
SKIMMERS = 3
SKIMMER_BOXES = 20
REROLLS = 3
UNUSED_SKIMMER_POINTS = 1  # the board's "⚡ = 1"

# Squares, row by row from the top: an int is a number square; "odd", "even", "x2";
# None is blacked out.
GRID: tuple[tuple[int | str | None, ...], ...] = (
    (20, None, 6, 15, 4, 13),
    (None, None, 7, 2, "even", 5),
    (10, 11, "odd", None, "x2", 9),
    (None, None, 14, None, 5, None),
    (9, 15, 4, "x2", 3, None),
    (None, None, 12, None, 6, 5),
)

# Which row or column each lock closes: ("col", index) or ("row", index), 0-based.
LOCK_LINES: dict[str, tuple[str, int]] = {
    "A": ("col", 1), "B": ("col", 3), "C": ("col", 5),
    "D": ("row", 1), "E": ("row", 3), "F": ("row", 5),
    "G": ("col", 4), "H": ("col", 2), "I": ("col", 0),
    "J": ("row", 4), "K": ("row", 2), "L": ("row", 0),
}

# Score ranks: (lowest score, title), highest first.
RANKS = (
    (22, "Pink Panther"),
    (19, "Bank Robber"),
    (16, "Cat Burglar"),
    (13, "Shoplifter"),
    (10, "Pickpocket"),
    (0, "Busted!!!"),
)


def cell_name(r: int, c: int) -> str:
    return f"{COLS[c]}{r + 1}"


def parse_cell(name: object) -> tuple[int, int] | None:
    if not isinstance(name, str) or len(name) != 2:
        return None
    c = COLS.find(name[0].lower())
    if c < 0 or not name[1].isdigit() or not 1 <= int(name[1]) <= SIZE:
        return None
    return int(name[1]) - 1, c


def line_cells(lock: str) -> tuple[tuple[int, int], ...]:
    kind, i = LOCK_LINES[lock]
    if kind == "row":
        return tuple((i, c) for c in range(SIZE))
    return tuple((r, i) for r in range(SIZE))


def open_cells(lock: str) -> tuple[tuple[int, int], ...]:
    """The squares of a lock's line that are not blacked out."""
    return tuple(rc for rc in line_cells(lock) if GRID[rc[0]][rc[1]] is not None)


# Gems beside each lock (our reading: half the line's open squares, rounded up).
GEMS: dict[str, int] = {k: (len(open_cells(k)) + 1) // 2 for k in LOCKS}


def rank_of(score: int) -> str:
    for lowest, title in RANKS:
        if score >= lowest:
            return title
    return RANKS[-1][1]
