"""The race's late seat (whose press answers the race) comes from the game definition:
Vault Assault's cops, nobody in the games where the buttons never race."""

from __future__ import annotations

from companion.games import registry
from companion.games.vault_assault.engine import apply, new_state


def test_vault_assault_late_seat_follows_the_cops():
    game = registry.get("vault-assault")
    state = new_state()
    assert game.late_seat(state) is None  # no game yet: no cop seat
    new_game = {"type": "new_game", "game": "vault-assault", "players": 3,
                "names": ["Ann", "Bob", "Cat"], "first_cop": 1}
    result = apply(state, new_game)
    assert result.rejection is None, result.rejection
    assert game.late_seat(result.state) == result.state.cop == 1


def test_other_games_have_no_late_seat():
    for game_id in ("big-score", "vault-solitaire", "vault-abstract"):
        game = registry.get(game_id)
        assert game.late_seat(game.new_state()) is None
