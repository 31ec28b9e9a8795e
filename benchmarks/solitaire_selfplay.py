"""Vault (solitaire): the helper plays whole games by itself against a greedy baseline,
on the same seeded dice, through the rules engine.

    .venv/bin/python benchmarks/solitaire_selfplay.py            # 1,000 games
    .venv/bin/python benchmarks/solitaire_selfplay.py --games 100

Prints the mean score (and spread, best, the rank reached most often) of each player:
the helper (re-rolling when 3+ dice would be wasted), the helper without re-rolls, and
the greedy baseline. Game g uses dice seeded seed * 100000 + g.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from companion.games.vault_solitaire import definition as d
from companion.games.vault_solitaire import engine as e
from companion.games.vault_solitaire.helper import greedy, suggest
from companion.games.vault_solitaire.state import GAME_OVER, PLAY, SolitaireState

Player = Callable[[SolitaireState], list[dict[str, Any]]]


def play(player: Player, seed: int) -> int:
    rng = random.Random(seed)
    state = e.apply(e.new_state(), {"type": "new_game", "game": "vault-solitaire",
                                    "players": 1, "names": ["bot"]}).state
    while state.phase != GAME_OVER:
        dice = [rng.randint(1, 6) for _ in range(d.DICE)]
        state = e.apply(state, {"type": "roll", "dice": dice}).state
        while state.phase == PLAY:
            for ev in player(state):
                if ev["type"] == "reroll" and "values" not in ev:
                    ev = {**ev, "values": [rng.randint(1, 6) for _ in ev["dice"]]}
                r = e.apply(state, ev)
                assert r.rejection is None, (ev, r.rejection)
                state = r.state
    return e.score(state)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000)
    # Seed 1's first 100 games tuned REROLL_LEFTOVERS; the default figures use seed 2.
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args(argv)
    players: dict[str, Player] = {
        "helper (suggest)": lambda s: suggest(s).events,
        "helper, no re-rolls": lambda s: suggest(s, reroll_leftovers=None).events,
        "greedy baseline": greedy,
    }
    print(f"Vault (solitaire) self-play: {args.games} games, dice seeded from {args.seed}")
    for name, player in players.items():
        t0 = time.perf_counter()
        scores = [play(player, args.seed * 100_000 + g) for g in range(args.games)]
        ranks = Counter(d.rank_of(s) for s in scores)
        print(f"{name}: mean {statistics.mean(scores):.2f} points (sd "
              f"{statistics.pstdev(scores):.2f}, best {max(scores)}), most often "
              f"{ranks.most_common(1)[0][0]}; {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
