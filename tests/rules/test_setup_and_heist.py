"""new_game, heist_hide and the Diamond Heist."""

import pytest
from game_builders import ROW5, ROW6, new_game, play, reject

from companion.games.vault_assault.engine import apply, new_state
from companion.games.vault_assault.state import HEIST, HEIST_HIDE, HEIST_OVER


@pytest.mark.parametrize(("players", "seats"), [(2, 2), (3, 3), (4, 2)])
def test_new_game_sets_up_seats(players, seats):
    s = play(new_game(players, first_cop=1))
    assert s.phase == HEIST_HIDE
    assert s.nseats == seats
    assert s.cop == 1
    assert all(seat.cars == 3 and seat.diamonds == 0 for seat in s.seats)
    assert s.diamonds_in_box == 5


@pytest.mark.parametrize(
    ("event", "needle"),
    [
        ({"type": "new_game", "game": "vault", "players": 2, "names": ["a", "b"]}, "unknown game"),
        ({"type": "new_game", "game": "vault-assault", "players": 5, "names": ["a"] * 5}, "2..4"),
        (
            {
                "type": "new_game",
                "game": "vault-assault",
                "players": 4,
                "names": ["a", "b", "c", "d"],
            },
            "2 non-empty names",
        ),
        (
            {"type": "new_game", "game": "vault-assault", "players": 3, "names": ["a", "b"]},
            "3 non-empty names",
        ),
        (
            {"type": "new_game", "game": "vault-assault", "players": 2, "names": ["a", ""]},
            "non-empty",
        ),
        (
            {
                "type": "new_game",
                "game": "vault-assault",
                "players": 2,
                "names": ["a", "b"],
                "first_cop": 2,
            },
            "first_cop",
        ),
        ({"type": "new_game", "game": "vault-assault", "names": ["a", "b"]}, "missing field"),
        (
            {"type": "new_game", "game": "vault-assault", "players": True, "names": ["a", "b"]},
            "whole number",
        ),
    ],
)
def test_new_game_rejections(event, needle):
    assert needle in reject(new_state(), event).rejection


def test_second_new_game_rejected():
    s = play(new_game())
    assert "already under way" in reject(s, new_game()).rejection


def test_events_before_new_game_rejected():
    r = reject(new_state(), {"type": "assault_start"})
    assert "no game has started" in r.rejection


@pytest.mark.parametrize(
    ("players", "row"),
    [
        (2, ["alarm", "alarm", "alarm", "alarm", "diamond"]),  # no trap
        (2, ROW6),  # six dice in a 2-player game
        (4, ROW5),  # five dice in a 4-player game
        (3, ["alarm", "dye_pack", "diamond", "alarm", "wires"]),
        (2, "alarm"),
    ],
)
def test_heist_hide_wrong_dice(players, row):
    s = play(new_game(players))
    assert "heist_hide" in reject(s, {"type": "heist_hide", "row": row}).rejection


def test_alarm_gives_one_preset_piece_per_attempt_even_if_both_robbers_hit():
    s = play(new_game(3, first_cop=0), {"type": "heist_hide", "row": ROW5})
    s = play(
        {
            "type": "heist_attempt",
            "flips": [{"seat": 1, "position": 0}, {"seat": 2, "position": 3}],
        },
        state=s,
    )
    assert s.turn.preset == 1
    assert s.phase == HEIST


def test_preset_pieces_capped_at_four():
    s = play(
        new_game(4),
        {"type": "heist_hide", "row": ["alarm", "alarm", "alarm", "alarm", "dye_pack", "diamond"]},
    )
    for pos in range(4):
        s = play({"type": "heist_attempt", "flips": [{"seat": 1, "position": pos}]}, state=s)
    assert s.turn.preset == 4
    # A row in which a fifth alarm could be flipped does not exist; check the cap directly
    # with a 3-player game where attempts keep hitting alarms.
    s = play(new_game(3), {"type": "heist_hide", "row": ROW5})
    for a, b in [(0, 3), (3, 4), (4, 0)]:
        s = play(
            {
                "type": "heist_attempt",
                "flips": [{"seat": 1, "position": a}, {"seat": 2, "position": b}],
            },
            state=s,
        )
    assert s.turn.preset == 3


def test_diamond_ends_heist_at_once_and_later_flips_are_not_evaluated():
    s = play(new_game(3, first_cop=0), {"type": "heist_hide", "row": ROW5})
    # Seat 1 is compared first (the cops' left), finds the diamond; seat 2's trap is not
    # evaluated, so seat 2 gets no hostage.
    s = play(
        {
            "type": "heist_attempt",
            "flips": [{"seat": 2, "position": 1}, {"seat": 1, "position": 2}],
        },
        state=s,
    )
    assert s.phase == HEIST_OVER
    assert s.seats[1].diamonds == 1 and s.seats[2].diamonds == 0
    assert s.turn.hostages == frozenset()
    assert s.diamonds_in_box == 4


def test_comparison_order_is_clockwise_from_the_cops_left():
    # Cops at seat 1: seat 2 is compared before seat 0.
    s = play(new_game(3, first_cop=1), {"type": "heist_hide", "row": ROW5})
    s = play(
        {
            "type": "heist_attempt",
            "flips": [{"seat": 0, "position": 2}, {"seat": 2, "position": 2}],
        },
        state=s,
    )
    assert s.seats[2].diamonds == 1 and s.seats[0].diamonds == 0


def test_trap_makes_hostage_and_leaves_heist_other_robber_continues():
    s = play(new_game(3, first_cop=0), {"type": "heist_hide", "row": ROW5})
    s = play(
        {
            "type": "heist_attempt",
            "flips": [{"seat": 1, "position": 1}, {"seat": 2, "position": 0}],
        },
        state=s,
    )
    assert s.turn.hostages == frozenset({1})
    assert s.turn.heist.in_heist == frozenset({2})
    assert s.phase == HEIST
    # Seat 1 is out: it may not flip again.
    r = reject(
        s,
        {
            "type": "heist_attempt",
            "flips": [{"seat": 1, "position": 3}, {"seat": 2, "position": 3}],
        },
    )
    assert "not in the heist" in r.rejection
    s = play({"type": "heist_attempt", "flips": [{"seat": 2, "stop": True}]}, state=s)
    assert s.phase == HEIST_OVER


def test_no_diamond_tile_left_in_box_still_ends_heist():
    s = play(new_game(2), {"type": "heist_hide", "row": ROW5})
    s = s.__class__(**{**s.__dict__, "diamonds_in_box": 0})
    r = apply(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 2}]})
    assert r.rejection is None
    assert r.state.phase == HEIST_OVER
    assert r.state.seats[1].diamonds == 0
    assert r.state.diamonds_in_box == 0


@pytest.mark.parametrize(
    ("flips", "needle"),
    [
        ([], "missing Bob (seat 2)"),
        ([{"seat": 1, "position": 5}], "0..4"),
        ([{"seat": 0, "position": 1}], "not in the heist"),
        ([{"seat": 1, "position": 1}, {"seat": 1, "position": 2}], "twice"),
        ([{"seat": 1, "position": 1, "stop": True}], "both stops and flips"),
        ([{"seat": 1}], "missing field 'position'"),
        ("nope", "list"),
    ],
)
def test_heist_attempt_rejections(flips, needle):
    s = play(new_game(2), {"type": "heist_hide", "row": ROW5})
    assert needle in reject(s, {"type": "heist_attempt", "flips": flips}).rejection


def test_cannot_flip_same_position_twice():
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]},
    )
    r = reject(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]})
    assert "already flipped position 1" in r.rejection  # people count from 1


def test_heist_events_out_of_phase():
    s = play(new_game(2))
    assert "not allowed now" in reject(s, {"type": "heist_attempt", "flips": []}).rejection
    assert "not allowed now" in reject(s, {"type": "assault_start"}).rejection
