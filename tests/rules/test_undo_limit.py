"""Bounded undo history: the game is the same, only how far back undo reaches changes."""

import json
from pathlib import Path

from game_builders import undo_steps

from companion.games.base import trim_undo
from companion.games.vault_assault.engine import apply, new_state

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "game-3p.jsonl"


def accepted() -> list[dict]:
    state, out = new_state(), []
    for line in SCRIPT.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        ev = json.loads(line)
        r = apply(state, ev)
        if r.rejection is None:
            out.append(ev)
            state = r.state
    return out


def test_a_bounded_history_plays_the_same_game_and_keeps_at_least_the_limit():
    events = accepted()
    assert len(events) >= 30
    full, bounded = new_state(), new_state()
    for i, ev in enumerate(events, 1):
        full = apply(full, ev).state
        bounded = apply(bounded, ev, undo_limit=5).state
        assert bounded == full and bounded.events_applied == full.events_applied == i
        assert min(i, 5) <= undo_steps(bounded) <= 10
        assert bounded.undo_depth == undo_steps(bounded)
    assert undo_steps(full) == len(events)  # the default keeps the whole game
    # Undo walks back through the same positions as far as the bound reaches.
    a, b = full, bounded
    for _ in range(5):
        a = apply(a, {"type": "undo"}).state
        b = apply(b, {"type": "undo"}).state
        assert a == b


def test_undo_past_the_bound_is_rejected_not_wrong():
    s = new_state()
    for ev in accepted()[:25]:
        s = apply(s, ev, undo_limit=2).state
    s = trim_undo(s, 2)
    for _ in range(2):
        r = apply(s, {"type": "undo"})
        assert r.rejection is None
        s = r.state
    assert apply(s, {"type": "undo"}).rejection == "undo: nothing to undo"


def test_trimming_leaves_the_position_alone():
    s = new_state()
    for ev in accepted()[:20]:
        s = apply(s, ev).state
    t = trim_undo(s, 3)
    assert t == s and undo_steps(t) == 3 and t.events_applied == s.events_applied
    assert trim_undo(t, 10) is t  # nothing older to let go
