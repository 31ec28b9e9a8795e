"""`[log] undo_limit` bounds the undo history in every game, not only Vault Assault:
the game is the same, only how far back undo reaches changes."""

from pathlib import Path

import pytest
from game_builders import undo_steps

from companion.gamelog import read_log
from companion.games import registry

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
GAMES = {
    "big-score": "big-score-3p.jsonl",
    "vault-solitaire": "vault-solitaire.jsonl",
    "vault-abstract": "vault-abstract.jsonl",
}


def accepted(script: str) -> list[dict]:
    """The script's events that change the game (read as the log reader reads them)."""
    state, out = registry.default().new_state(), []
    for _, ev in read_log(SCRIPTS / script).events:
        r = registry.judge(state, ev)
        if r.rejection is None:
            state = r.state
            if ev.get("type") not in ("undo", "note", "rejected"):
                out.append(ev)
    return out


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_bounded_history_plays_the_same_game_and_undo_reaches_the_limit(game_id):
    events = accepted(GAMES[game_id])
    assert len(events) >= 8
    limit = 3
    full = bounded = registry.default().new_state()
    for i, ev in enumerate(events, 1):
        full = registry.judge(full, ev).state
        bounded = registry.judge(bounded, ev, undo_limit=limit).state
        assert registry.of_state(bounded).id == game_id
        assert bounded == full and bounded.events_applied == full.events_applied
        assert min(i, limit) <= undo_steps(bounded) <= 2 * limit
        assert bounded.undo_depth == undo_steps(bounded)
    # `limit` undos give exactly the unbounded game's earlier positions
    for _ in range(limit):
        full = registry.judge(full, {"type": "undo"}).state
        bounded = registry.judge(bounded, {"type": "undo"}).state
        assert bounded == full
    assert undo_steps(full) > undo_steps(bounded)  # the whole game keeps more


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_no_limit_keeps_the_whole_game(game_id):
    events = accepted(GAMES[game_id])
    state = registry.default().new_state()
    for ev in events:
        state = registry.judge(state, ev).state
    assert undo_steps(state) == len(events)
