"""Strength of the Vault (abstract) opponent: win rate of level N against level N-1 and
against random (level 0), and the time it takes per move on one core.

    .venv/bin/python benchmarks/abstract_strength.py            # default: 200 games a pair
    .venv/bin/python benchmarks/abstract_strength.py --games 40 --levels 1 2

Each pairing plays half its games with the stronger side as White. A game that reaches
--max-plies without a winner counts as a draw (half a win). Seeds are fixed, so the
figures repeat exactly (the times do not).
"""

from __future__ import annotations

import argparse
import statistics
import time

from companion.games.vault_abstract import engine as e
from companion.games.vault_abstract.opponent import choose_move
from companion.games.vault_abstract.state import GAME_OVER


def play(white: int, black: int, seed: int, max_plies: int, times: dict[int, list[float]]
         ) -> int | None:
    state = e.apply(e.new_state(), {"type": "new_game", "game": "vault-abstract",
                                    "players": 2, "names": ["W", "B"]}).state
    levels = (white, black)
    while state.phase != GAME_OVER and len(state.moves) < max_plies:
        level = levels[state.to_move]
        t0 = time.perf_counter()
        frm, to = choose_move(state, level, seed * 2 + state.to_move)
        times.setdefault(level, []).append(time.perf_counter() - t0)
        result = e.apply(state, {"type": "move", "from": frm, "to": to})
        assert result.rejection is None, result.rejection
        state = result.state
    return state.winner if state.phase == GAME_OVER else None


def match(strong: int, weak: int, games: int, max_plies: int,
          times: dict[int, list[float]]) -> tuple[float, int, int, int]:
    wins = draws = losses = 0
    for g in range(games):
        strong_seat = g % 2
        levels = (strong, weak) if strong_seat == 0 else (weak, strong)
        winner = play(*levels, seed=g, max_plies=max_plies, times=times)
        if winner is None:
            draws += 1
        elif winner == strong_seat:
            wins += 1
        else:
            losses += 1
    rate = (wins + draws / 2) / games
    return rate, wins, draws, losses


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="games per pairing (default 200)")
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 2],
                    help="levels N to test against N-1 and against 0 (default 1 2)")
    ap.add_argument("--max-plies", type=int, default=300)
    args = ap.parse_args(argv)
    times: dict[int, list[float]] = {}
    print(f"Vault (abstract) opponent, {args.games} games a pairing, colours alternated, "
          f"draw after {args.max_plies} plies")
    pairs: list[tuple[int, int]] = []
    for n in args.levels:
        pairs.append((n, n - 1))
        if n - 1 != 0:
            pairs.append((n, 0))
    for strong, weak in pairs:
        t0 = time.perf_counter()
        rate, w, dr, lo = match(strong, weak, args.games, args.max_plies, times)
        print(f"level {strong} vs level {weak}: win rate {rate:.1%} ({w} won, {dr} drawn, "
              f"{lo} lost) in {time.perf_counter() - t0:.1f} s")
    for level in sorted(times):
        ts = sorted(times[level])
        print(f"level {level}: {len(ts)} moves, mean {statistics.mean(ts) * 1000:.2f} ms, "
              f"median {ts[len(ts) // 2] * 1000:.2f} ms, max {ts[-1] * 1000:.1f} ms per move "
              "(one core)")


if __name__ == "__main__":
    main()
