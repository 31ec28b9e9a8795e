"""What `replay --json` prints for Coin Race."""

from __future__ import annotations

from typing import Any

from toy_game.definition import GAME_ID
from toy_game.state import GAME_OVER, CoinState


def summary(state: CoinState) -> dict[str, Any]:
    return {"game": GAME_ID, "over": state.phase == GAME_OVER, "names": list(state.names),
            "pos": list(state.pos), "winner": state.winner}
