"""The summary `replay --json` prints for a game of Vault (abstract):

{"game", "over", "winner" (seat or null), "end" (why), "moves" ([[from, to], ...]),
 "pawns" ([white, black] still on the board), "to_move" (seat, null once over),
 "names"}
"""

from __future__ import annotations

from typing import Any

from companion.games.vault_abstract.definition import GAME_ID
from companion.games.vault_abstract.state import GAME_OVER, AbstractState


def summary(state: AbstractState) -> dict[str, Any]:
    over = state.phase == GAME_OVER
    return {
        "game": GAME_ID,
        "over": over,
        "winner": state.winner,
        "end": state.end or None,
        "moves": [list(m) for m in state.moves],
        "pawns": [len(state.pawns[0]), len(state.pawns[1])],
        "to_move": None if over else state.to_move,
        "names": list(state.names),
    }
