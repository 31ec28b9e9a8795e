"""Vault, the abstract pawn race (Néstor Romeral Andrés, 2015), as data.

Cells are named a1-j10: files a-j left to right from White's side, rank 1 White's home
row, rank 10 Black's. Internally a cell is an index `(rank - 1) * SIZE + file`.
"""

from __future__ import annotations

GAME_ID = "vault-abstract"
PLAYERS = 2
SIZE = 10  # the recommended 10x10 grid; each side has SIZE pawns on its home row
FILES = "abcdefghij"[:SIZE]
WHITE, BLACK = 0, 1
COLOURS = ("White", "Black")
HOME_RANK = (0, SIZE - 1)  # row index of each seat's home row
FAR_RANK = (SIZE - 1, 0)  # the row each seat races to (the opponent's back rank)
FORWARD = (1, -1)  # row direction towards the far rank

# Picking a move on a 2-seat table's buttons: the seat to move presses to step through
# its pawns (then the chosen pawn's cells); this many seconds without a press chooses
# the one shown. A guess at what a player needs to read the LED and stop; data.
PICK_SECONDS = 2.0

# The opponent's levels: (search depth in plies, node budget per move). Level 0 plays a
# uniformly random legal move (for a seed). The budget is counted in positions visited,
# not seconds, so a level plays the same move on a slow Pi and a fast laptop.
LEVELS: dict[int, tuple[int, int]] = {
    0: (0, 0),
    1: (1, 400),
    2: (2, 6_000),
    3: (3, 25_000),
}


def cell_name(index: int) -> str:
    return f"{FILES[index % SIZE]}{index // SIZE + 1}"


def parse_cell(name: str) -> int | None:
    """`"c1"` -> index, or None if `name` is not a cell of the board."""
    if not isinstance(name, str) or not 2 <= len(name) <= 3:
        return None
    f = FILES.find(name[0].lower())
    digits = name[1:]
    if f < 0 or not digits.isdigit() or digits.startswith("0"):
        return None
    rank = int(digits)
    if not 1 <= rank <= SIZE:
        return None
    return (rank - 1) * SIZE + f
