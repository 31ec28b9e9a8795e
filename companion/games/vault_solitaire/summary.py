"""The summary `replay --json` prints for a game of Vault (solitaire):

{"game", "name", "over", "round" (the current lock letter), "locks_closed", "marked"
 (cells), "circled" (locks whose gems were taken), "gems", "skimmers" ([{"boxes",
 "used"}]), "unused_skimmers", "rerolls_used", "score", "rank" (the rulebook's title
 for the final score; null until the game is over: a score so far is no rank)}
"""

from __future__ import annotations

from typing import Any

from companion.games.vault_solitaire import definition as d
from companion.games.vault_solitaire.engine import locked, score
from companion.games.vault_solitaire.state import GAME_OVER, SolitaireState


def summary(state: SolitaireState) -> dict[str, Any]:
    over = state.phase == GAME_OVER
    pts = score(state)
    return {
        "game": d.GAME_ID,
        "name": state.name,
        "over": over,
        "round": d.LOCKS[min(state.round, d.ROUNDS - 1)],
        "locks_closed": "".join(d.LOCKS) if over else "".join(sorted(locked(state))),
        "marked": sorted(d.cell_name(r, c) for r, c in state.marked),
        "circled": sorted(state.circled),
        "gems": sum(d.GEMS[k] for k in state.circled),
        "skimmers": [{"boxes": b, "used": u}
                     for b, u in zip(state.skimmer_boxes, state.skimmer_used, strict=True)],
        "unused_skimmers": sum(not u for u in state.skimmer_used),
        "rerolls_used": state.rerolls_used,
        "score": pts,
        "rank": d.rank_of(pts) if over else None,
    }
