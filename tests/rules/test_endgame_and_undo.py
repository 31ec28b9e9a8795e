"""Rounds, game end, tallies, sticky fingers, winners, undo, and event format errors."""

import pytest
from game_builders import ROW5, ROW6, at_race, new_game, play, reject, stages

from companion.games.vault_assault.engine import apply, current_round, new_state, winners_of
from companion.games.vault_assault.state import GAME_OVER
from companion.games.vault_assault.summary import summary


def escape_turn(s):
    robbers = s.robbers()
    s = play(
        {"type": "heist_hide", "row": ROW6 if s.players == 4 else ROW5},
        {"type": "heist_attempt", "flips": [{"seat": r, "stop": True} for r in robbers]},
        {"type": "assault_start"},
        state=s,
    )
    return play(*({"type": "buzz", "seat": r} for r in robbers), state=s)


@pytest.mark.parametrize(("players", "turns", "rounds"), [(2, 6, 3), (3, 6, 2), (4, 6, 3)])
def test_rounds_and_cop_rotation(players, turns, rounds):
    s = play(new_game(players, first_cop=1))
    n = s.nseats
    cops = []
    for t in range(turns):
        assert s.phase != GAME_OVER
        assert current_round(s) == t // n + 1
        cops.append(s.cop)
        s = escape_turn(s)
    assert s.phase == GAME_OVER
    assert cops == [(1 + t) % n for t in range(turns)]
    assert summary(s)["round"] == rounds
    assert summary(s)["turns_played"] == turns


def game_over(players=2):
    s = play(new_game(players))
    while s.phase != GAME_OVER:
        s = escape_turn(s)
    return s


def test_tally_and_winners_with_ties_shared():
    s = game_over(3)
    assert winners_of(s) == ()
    s = play(
        {"type": "tally", "seat": 0, "cash": 50000},
        {"type": "tally", "seat": 1, "cash": 10},
        state=s,
    )
    assert summary(s)["winners"] == []
    assert summary(s)["seats"][2]["total"] is None
    s = play({"type": "tally", "seat": 2, "cash": 50000}, state=s)
    assert winners_of(s) == (0, 2)
    assert "already tallied" in reject(s, {"type": "tally", "seat": 0, "cash": 1}).rejection


def over_with_one_diamond_for_seat_1():
    """A 2-player game played out in which seat 1 found the diamond in the first turn."""
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 2}]},
        {"type": "assault_start"},
        {"type": "buzz", "seat": 1},
    )
    while s.phase != GAME_OVER:
        s = escape_turn(s)
    return s


def test_diamonds_count_40000_each():
    s = over_with_one_diamond_for_seat_1()
    s = play(
        {"type": "tally", "seat": 0, "cash": 70000},
        {"type": "tally", "seat": 1, "cash": 0},
        state=s,
    )
    assert summary(s)["seats"][1]["total"] == 40000
    assert winners_of(s) == (0,)


def test_sticky_fingers_from_seat_or_box_once():
    s = over_with_one_diamond_for_seat_1()
    assert "no Diamond" in reject(s, {"type": "sticky_fingers", "seat": 1, "from": 0}).rejection
    assert "itself" in reject(s, {"type": "sticky_fingers", "seat": 1, "from": 1}).rejection
    s2 = play({"type": "sticky_fingers", "seat": 0, "from": 1}, state=s)
    assert (s2.seats[0].diamonds, s2.seats[1].diamonds) == (1, 0)
    assert (
        "already used" in reject(s2, {"type": "sticky_fingers", "seat": 0, "from": None}).rejection
    )
    s3 = play({"type": "sticky_fingers", "seat": 0, "from": None}, state=s)
    assert s3.diamonds_in_box == 3 and s3.seats[0].diamonds == 1


def test_endgame_events_only_at_game_end():
    s = at_race()
    assert "not allowed now" in reject(s, {"type": "tally", "seat": 0, "cash": 1}).rejection
    assert (
        "not allowed now"
        in reject(s, {"type": "sticky_fingers", "seat": 0, "from": None}).rejection
    )
    over = game_over()
    assert "not allowed now" in reject(over, {"type": "heist_hide", "row": ROW5}).rejection
    assert ">= 0" in reject(over, {"type": "tally", "seat": 0, "cash": -5}).rejection


def test_undo_restores_exact_prior_state_step_by_step():
    s0 = at_race(3)
    s1 = play({"type": "hostage", "seat": 1}, state=s0)
    s2 = play({"type": "stage", "stage": 1}, state=s1)
    u1 = apply(s2, {"type": "undo"}).state
    assert u1 is s1 and u1 == s1
    u0 = apply(u1, {"type": "undo"}).state
    assert u0 is s0


def test_undo_with_nothing_to_undo():
    assert "nothing to undo" in reject(new_state(), {"type": "undo"}).rejection


def test_undo_can_take_back_a_whole_turn_end():
    s = play({"type": "buzz", "seat": 0}, state=stages(at_race(2)))
    before = s
    s = play({"type": "impound", "seat": 1, "car": 0}, state=s)
    assert s.turns_played == 1
    assert apply(s, {"type": "undo"}).state == before


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        ({"type": "teleport"}, "unknown event type"),
        ({"seat": 1}, "no 'type'"),
        ([1, 2], "JSON object"),
        ({"type": "stage"}, "missing field 'stage'"),
        ({"type": "stage", "stage": "2"}, "whole number"),
        ({"type": "stage", "stage": 1, "ts_ns": -1}, "ts_ns"),
        ({"type": "stage", "stage": 1, "ts_ns": 1.5}, "ts_ns"),
    ],
)
def test_malformed_events(event, needle):
    assert needle in reject(at_race(), event).rejection


def test_unknown_extra_fields_are_allowed():
    s = play({"type": "stage", "stage": 1, "by": "camera", "ts_ns": 7}, state=at_race())
    assert s.turn.stages == 1


def test_rejected_notes_replay_as_no_ops():
    s = at_race()
    r = apply(s, {"type": "rejected", "reason": "x", "event": {"type": "buzz", "seat": 1}})
    assert r.rejection is None and r.state is s
