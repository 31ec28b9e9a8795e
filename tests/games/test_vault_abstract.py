"""Vault (abstract): the scripted game, the move rules, bad input, the opponent, and
invariants over random games (hypothesis)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.gamelog import read_log
from companion.games.vault_abstract import definition as d
from companion.games.vault_abstract import engine as e
from companion.games.vault_abstract.opponent import choose_move
from companion.games.vault_abstract.state import GAME_OVER, PLAYING
from companion.games.vault_abstract.summary import summary

SCRIPT = Path(__file__).parent.parent / "scripts" / "vault-abstract.jsonl"
NEW = {"type": "new_game", "game": "vault-abstract", "players": 2, "names": ["W", "B"]}


def started():
    return e.apply(e.new_state(), NEW).state


def cells(*names):
    return frozenset(d.parse_cell(n) for n in names)


def test_scripted_game_summary_worked_out_by_hand():
    events = [ev for _, ev in read_log(SCRIPT).events]
    state = e.replay(events)
    # 18 moves; White captured a6 and a8, Black captured a8 once; White's a10 survives
    # Black's turn, so White wins at the start of White's 10th turn.
    assert summary(state) == {
        "game": "vault-abstract",
        "over": True,
        "winner": 0,
        "end": "far rank",
        "moves": [[ev["from"], ev["to"]] for ev in events[1:]],
        "pawns": [9, 8],
        "to_move": None,
        "names": ["Wanda", "Boris"],
    }
    assert len(state.moves) == 18
    assert state.pawns[0] == cells("a10", "b2", "d1", "e1", "f1", "g1", "h1", "i1", "j1")


def test_start_position_and_destinations():
    s = started()
    assert summary(s)["pawns"] == [10, 10] and summary(s)["to_move"] == 0
    assert e.legal_destinations(s, "b1") == ["a2", "b2", "c2"]
    assert e.legal_destinations(s, "b10") == []  # not White's pawn
    assert len(e.legal_moves(s)) == 28  # walks only: 2 + 8 x 3
    s = e.apply(s, {"type": "move", "from": "b1", "to": "b2"}).state
    s = e.apply(s, {"type": "move", "from": "j10", "to": "j9"}).state
    dest = e.legal_destinations(s, "c1")
    assert "a3" in dest  # the mirror over b2
    assert "b1" in dest and "c2" in dest


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "move", "from": "b10", "to": "b9"}, "b10 is Black's pawn"),
        ({"type": "move", "from": "b2", "to": "b3"}, "b2 is empty"),
        ({"type": "move", "from": "b1", "to": "c1"}, "c1 holds your own pawn"),
        ({"type": "move", "from": "b1", "to": "b3"}, "over b2, which holds no White"),
        ({"type": "move", "from": "b1", "to": "c3"}, "neither a walk"),
        ({"type": "move", "from": "k1", "to": "a2"}, "'from' must be a cell"),
        ({"type": "move", "from": "a0", "to": "a2"}, "'from' must be a cell"),
        ({"type": "move", "from": "a1", "to": "a11"}, "'to' must be a cell"),
        ({"type": "move", "from": 12, "to": "a2"}, "'from' must be a cell"),
        ({"type": "move", "from": "a1"}, "missing field 'to'"),
        ({"type": "move", "from": "a" * 10**5, "to": "a2"}, "'from' must be a cell"),
        ({"type": "resign", "seat": 10**30}, "'seat' must be 0..1"),
        ({"type": "resign", "seat": True}, "whole number"),
        ({"type": "castle"}, "unknown event type"),
        ({"type": 5}, "no 'type'"),
        ([1, 2], "must be a JSON object"),
        ({"type": "undo"}, "nothing to undo"),
        (NEW, "already under way"),
    ],
)
def test_bad_moves_and_garbage_get_one_line_and_change_nothing(event, reason):
    s = started()
    s = replace(s, prev=None)  # a freshly resumed game: nothing to undo
    r = e.apply(s, event)
    assert r.state is s
    assert r.rejection is not None and reason in r.rejection, r.rejection
    assert "\n" not in r.rejection and len(r.rejection) < 200


def test_walk_cannot_capture_and_new_game_is_checked():
    s = replace(started(), pawns=(cells("a1", "j1"), cells("a2", "j10")))
    r = e.apply(s, {"type": "move", "from": "a1", "to": "a2"})
    assert "captures are by jumping only" in r.rejection
    for bad in ({**NEW, "game": "chess"}, {**NEW, "players": 3}, {**NEW, "names": ["W"]},
                {**NEW, "names": ["W", ""]}, {k: v for k, v in NEW.items() if k != "names"}):
        r = e.apply(e.new_state(), bad)
        assert r.rejection and r.state == e.new_state()
    assert "no game has started" in e.apply(e.new_state(), {"type": "move", "from": "a1",
                                                              "to": "a2"}).rejection


def test_no_legal_move_loses_and_the_far_rank_wins_only_at_the_start_of_your_turn():
    # White's only pawn on a1 is boxed in by Black's a2 and b1 once Black walks c3-b2.
    s = replace(started(), to_move=1, pawns=(cells("a1"), cells("a2", "b1", "c3", "j10")))
    r = e.apply(s, {"type": "move", "from": "c3", "to": "b2"})
    assert r.state.phase == GAME_OVER and r.state.winner == 1
    assert r.state.end == "no legal move"
    # White reaches rank 10, Black captures it at once: no win.
    s = replace(started(), pawns=(cells("a8", "a9", "e5"), cells("c10", "e10", "j5")))
    s = e.apply(s, {"type": "move", "from": "a8", "to": "a10"}).state  # over a9
    assert s.phase == PLAYING
    s = e.apply(s, {"type": "move", "from": "e10", "to": "a10"}).state  # over c10, captures
    assert s.phase == PLAYING and s.pawns[0] == cells("a9", "e5")
    # Black's turn start with a Black pawn on rank 1 wins for Black even if White just
    # reached rank 10 too: only the player to move is checked.
    s = replace(started(), to_move=0, pawns=(cells("a9", "c3"), cells("h1", "j9")))
    r = e.apply(s, {"type": "move", "from": "a9", "to": "a10"})
    assert r.state.winner == 1 and r.state.end == "far rank"


def test_resign_draw_and_moves_after_the_end():
    s = e.apply(started(), {"type": "resign", "seat": 0}).state
    assert summary(s)["winner"] == 1 and summary(s)["over"]
    assert "game is over" in e.apply(s, {"type": "move", "from": "a1", "to": "a2"}).rejection
    s = e.apply(started(), {"type": "draw"}).state
    assert summary(s)["winner"] is None and summary(s)["over"]


def test_opponent_levels_are_legal_and_deterministic():
    s = started()
    for level in d.LEVELS:
        m = choose_move(s, level, seed=3)
        assert m in e.legal_moves(s)
        assert choose_move(s, level, seed=3) == m
    # With a winning jump available, level 1 takes it: a8 over a9 to a10 cannot be
    # captured (Black's pawns are far away).
    s = replace(started(), pawns=(cells("a8", "a9", "e1"), cells("j1", "j2")))
    assert choose_move(s, 2, seed=0) in {("a8", "a10"), ("a9", "a10"), ("a9", "b10")}
    with pytest.raises(ValueError):
        choose_move(s, 99)


def test_level_two_beats_random_over_a_few_games():
    wins = 0
    for seed in range(4):
        s = started()
        while s.phase == PLAYING and len(s.moves) < 200:
            level = 2 if s.to_move == seed % 2 else 0
            frm, to = choose_move(s, level, seed)
            s = e.apply(s, {"type": "move", "from": frm, "to": to}).state
        wins += s.winner == seed % 2
    assert wins == 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=60),
       st.lists(st.sampled_from(["a1", "b2", "j10", "e5", "zz", "", "a10", "c3"]),
                min_size=2, max_size=2))
def test_invariants_over_random_games(choices, garbage):
    s = started()
    for c in choices:
        moves = e.legal_moves(s)
        if not moves:
            assert s.phase == GAME_OVER
            break
        before = s
        counts = [len(p) for p in s.pawns]
        frm, to = moves[c % len(moves)]
        r = e.apply(s, {"type": "move", "from": frm, "to": to})
        assert r.rejection is None
        s = r.state
        # Pawns never appear; only the mover's opponent may lose one, and only one.
        mover = before.to_move
        assert len(s.pawns[mover]) == counts[mover]
        assert counts[1 - mover] - len(s.pawns[1 - mover]) in (0, 1)
        assert not (s.pawns[0] & s.pawns[1])
        # Undo is exact; a rejected event leaves the very same state.
        assert e.apply(s, {"type": "undo"}).state == before
        bad = e.apply(s, {"type": "move", "from": garbage[0], "to": garbage[1]})
        if bad.rejection:
            assert bad.state is s
    assert summary(s)["pawns"] == [len(s.pawns[0]), len(s.pawns[1])]


def test_seats_counted_from_1_in_the_short_commands():
    from companion.games.vault_abstract.table import describe, parse_command

    s = started()
    assert parse_command("resign 1", s) == {"type": "resign", "seat": 0}
    assert parse_command("pick 2 choose", s) == {"type": "pick", "seat": 1, "choose": True}
    for bad in ("resign 0", "pick 3", "resign white"):
        with pytest.raises(ValueError, match="seat 1 White, 2 Black"):
            parse_command(bad, s)
    assert describe({"type": "resign", "seat": 1}) == "seat 2 (Black) resigns"
