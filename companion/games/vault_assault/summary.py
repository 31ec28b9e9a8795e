"""The game summary printed by `companion replay --json` and `companion sim --headless`."""

from __future__ import annotations

from typing import Any

from companion.games.vault_assault.engine import cop_seat, current_round, total_of, winners_of
from companion.games.vault_assault.state import GAME_OVER, GameState


def summary(state: GameState) -> dict[str, Any]:
    return {
        "over": state.phase == GAME_OVER,
        "turns_played": state.turns_played,
        "round": current_round(state),
        "cop": cop_seat(state),
        "seats": [
            {
                "name": s.name,
                "diamonds": s.diamonds,
                "cars": s.cars,
                "escaped": s.escaped,
                "arrested": s.arrested,
                "total": total_of(state, i),
            }
            for i, s in enumerate(state.seats)
        ],
        "winners": list(winners_of(state)),
    }
