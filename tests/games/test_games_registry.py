"""Every game's rules are found by the `new_game` id and start from a `new_game`
event read from its own script; the games share the undo/notes/garbage behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.gamelog import read_log
from companion.games import registry

SCRIPTS = Path(__file__).parent.parent / "scripts"
SCRIPT_OF = {"big-score": "big-score-3p.jsonl", "vault-solitaire": "vault-solitaire.jsonl",
             "vault-abstract": "vault-abstract.jsonl"}


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_each_game_replays_its_script_with_undo_at_every_step(game_id):
    rules = registry.get(game_id)
    events = [ev for _, ev in read_log(SCRIPTS / SCRIPT_OF[game_id]).events]
    assert events[0]["game"] == game_id
    state = rules.new_state()
    for ev in events:
        assert ev["type"] in rules.event_types
        r = rules.apply(state, ev)
        assert r.rejection is None, r.rejection
        assert rules.apply(r.state, {"type": "undo"}).state == state
        assert rules.apply(r.state, {"type": "note", "text": "hi"}).state is r.state
        state = r.state
    assert rules.summary(state)["over"] is True
    assert rules.summary(state)["game"] == game_id
    # A game refuses another game's new_game, and a second new_game.
    for other in registry.MODULES:
        r = rules.apply(rules.new_state(), {**events[0], "game": other})
        assert (r.rejection is None) == (other == game_id)
    assert "already under way" in rules.apply(state, events[0]).rejection


def test_unknown_game():
    with pytest.raises(KeyError):
        registry.get("chess")


@pytest.mark.parametrize("game_id", sorted(registry.MODULES))
@pytest.mark.parametrize("garbage", [None, 3, "x", [], {}, {"type": ""}, {"type": "undo"},
                                     {"type": "x" * 10_000}, {"type": "roll", "ts_ns": -1}])
def test_garbage_before_any_game(game_id, garbage):
    rules = registry.get(game_id)
    s = rules.new_state()
    r = rules.apply(s, garbage)
    assert r.state is s and r.rejection and "\n" not in r.rejection and len(r.rejection) < 200
