"""The companion as an opponent for Vault (abstract): alpha-beta (negamax) search with a
budget counted in positions, so a level plays the same move for the same seed on any
machine. Level 0 plays a random legal move; levels 1-3 search 1-3 plies
(`definition.LEVELS`), ties between equally good moves broken by a seeded generator.

    choose_move(state, level=2, seed=0) -> ("c1", "c2")
"""

from __future__ import annotations

import random

from companion.games.vault_abstract import definition as d
from companion.games.vault_abstract.engine import move_pawns, moves_of, on_far_rank
from companion.games.vault_abstract.state import PLAYING, AbstractState

N = d.SIZE
WIN = 1_000_000
Pawns = tuple[frozenset[int], frozenset[int]]

# Worth of a pawn by how far it has come (0 = home row .. N-1 = far rank): grows faster
# near the goal, so the search likes pawns that are about to arrive.
PROGRESS = tuple(100 + 6 * k * k for k in range(N))
CAPTURE_ORDER_BONUS = 1000


def _progress(seat: int, p: int) -> int:
    r = p // N
    return r if seat == 0 else N - 1 - r


def evaluate(pawns: Pawns, seat: int) -> int:
    """Static worth of the position for `seat`, who is to move (higher is better)."""
    score = 0
    for s, sign in ((seat, 1), (1 - seat, -1)):
        best = 0
        for p in pawns[s]:
            k = _progress(s, p)
            score += sign * PROGRESS[k]
            best = max(best, k)
        score += sign * 25 * best * best
    return score


class _Search:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nodes = 0

    def ordered(self, pawns: Pawns, seat: int) -> list[tuple[int, int]]:
        other = pawns[1 - seat]
        moves = moves_of(pawns, seat)
        return sorted(
            moves,
            key=lambda m: -((CAPTURE_ORDER_BONUS if m[1] in other else 0)
                            + _progress(seat, m[1]) - _progress(seat, m[0])),
        )

    def negamax(self, pawns: Pawns, seat: int, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if on_far_rank(pawns, seat):
            return WIN + depth
        if depth == 0 or self.nodes >= self.budget:
            return evaluate(pawns, seat)
        moves = self.ordered(pawns, seat)
        if not moves:
            return -WIN - depth
        best = -2 * WIN
        for frm, to in moves:
            value = -self.negamax(move_pawns(pawns, seat, frm, to), 1 - seat, depth - 1,
                                  -beta, -alpha)
            if value > best:
                best = value
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        return best


def choose_move(state: AbstractState, level: int = 2, seed: int = 0) -> tuple[str, str]:
    """The move the companion plays for the player to move, as (from, to) cell names."""
    if state.phase != PLAYING:
        raise ValueError("the game is not being played")
    if level not in d.LEVELS:
        raise ValueError(f"level must be one of {sorted(d.LEVELS)}, got {level!r}")
    seat, pawns = state.to_move, state.pawns
    rng = random.Random(seed * 1_000_003 + len(state.moves))
    moves = moves_of(pawns, seat)
    if not moves:
        raise ValueError("no legal move")
    depth, budget = d.LEVELS[level]
    if depth == 0:
        frm, to = rng.choice(moves)
        return d.cell_name(frm), d.cell_name(to)
    search = _Search(budget)
    scored = []
    for frm, to in search.ordered(pawns, seat):
        after = move_pawns(pawns, seat, frm, to)
        # Full window at the root: every move gets its exact value (to within the budget),
        # so equal moves can be told apart by the seeded tie-break alone.
        value = -search.negamax(after, 1 - seat, depth - 1, -2 * WIN, 2 * WIN)
        scored.append((value, frm, to))
    top = max(v for v, _, _ in scored)
    best = sorted((frm, to) for v, frm, to in scored if v == top)
    frm, to = rng.choice(best)
    return d.cell_name(frm), d.cell_name(to)
