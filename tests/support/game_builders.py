"""Shared builders for the rules tests."""

from __future__ import annotations

from typing import Any

from companion.games.base import Result
from companion.games.vault_assault.engine import apply, new_state
from companion.games.vault_assault.state import GameState

ROW5 = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]
ROW6 = ["alarm", "dye_pack", "diamond", "alarm", "alarm", "alarm"]


def new_game(players: int = 2, first_cop: int = 0) -> dict[str, Any]:
    names = ["Team A", "Team B"] if players == 4 else ["Ann", "Bob", "Cat"][:players]
    return {
        "type": "new_game",
        "game": "vault-assault",
        "players": players,
        "names": names,
        "first_cop": first_cop,
    }


def play(*events: dict[str, Any], state: GameState | None = None) -> GameState:
    state = state or new_state()
    for ev in events:
        r = apply(state, ev)
        assert r.rejection is None, (ev, r.rejection)
        state = r.state
    return state


def reject(state: GameState, event: dict[str, Any]) -> Result:
    r = apply(state, event)
    assert r.rejection is not None, event
    assert r.state is state
    assert "\n" not in r.rejection
    return r


def at_race(players: int = 2, first_cop: int = 0) -> GameState:
    """A game at the start of the race: every robber stopped at once."""
    s = play(
        new_game(players, first_cop), {"type": "heist_hide", "row": ROW6 if players == 4 else ROW5}
    )
    robbers = s.robbers()
    s = play(
        {"type": "heist_attempt", "flips": [{"seat": r, "stop": True} for r in robbers]}, state=s
    )
    return play({"type": "assault_start"}, state=s)


def stages(state: GameState, upto: int = 3) -> GameState:
    return play(*({"type": "stage", "stage": k} for k in range(1, upto + 1)), state=state)


def undo_steps(state: Any) -> int:
    """How many undo steps lie behind a state (any game's): the length of its `prev` chain."""
    n = 0
    while state.prev is not None:
        state, n = state.prev, n + 1
    return n


def script_states(script: str) -> list:
    """The state after each event of a shipped script (tests/scripts), any game's."""
    from pathlib import Path

    from companion.gamelog import read_log
    from companion.games import registry

    s: Any = GameState()
    out = []
    for _, ev in read_log(Path(__file__).resolve().parents[1] / "scripts" / script).events:
        s = registry.judge(s, ev).state
        out.append(s)
    return out
