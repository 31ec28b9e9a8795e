"""The race: stages, dye packs, hostages, backup, loot/steal, empty, buzzes, impound."""

import pytest
from game_builders import ROW5, at_race, new_game, play, reject, stages

from companion.games.vault_assault.engine import apply
from companion.games.vault_assault.state import ASSAULT, GAME_OVER, HEIST_HIDE, IMPOUND


def test_go_starts_the_race_with_a_flash():
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
    )
    r = apply(s, {"type": "assault_start"})
    assert r.state.phase == ASSAULT
    assert ("flash", "go") in [(o.kind, o.name) for o in r.outputs]


def test_stages_in_order_only():
    s = at_race()
    assert "next is stage 1" in reject(s, {"type": "stage", "stage": 2}).rejection
    s = stages(s, 1)
    assert "next is stage 2" in reject(s, {"type": "stage", "stage": 1}).rejection
    s = play({"type": "stage", "stage": 2}, {"type": "stage", "stage": 3}, state=s)
    assert s.turn.stages == 3
    assert "1..3" in reject(s, {"type": "stage", "stage": 4}).rejection


def test_one_dye_pack_before_each_stage_four_in_all():
    s = at_race(3)
    bang = {"type": "dye_pack", "targets": [1, 2]}
    s = play(bang, state=s)
    assert "only one Bang!" in reject(s, bang).rejection
    for k in (1, 2, 3):
        s = play({"type": "stage", "stage": k}, bang, state=s)
    assert s.turn.bang_intervals == frozenset({0, 1, 2, 3})
    assert "only one Bang!" in reject(s, bang).rejection
    assert s.seats[1].tiles_lost == 4 and s.seats[2].tiles_lost == 4


@pytest.mark.parametrize(
    ("targets", "needle"),
    [([], "1 to 2"), ([1, 1, 1], "1 to 2"), ([0], "is the cops"), ([5], "0..1"), ("1", "1 to 2")],
)
def test_dye_pack_target_rejections(targets, needle):
    assert needle in reject(at_race(), {"type": "dye_pack", "targets": targets}).rejection


def test_escaped_robber_cannot_be_dye_packed_but_can_be_stolen_from():
    s = play({"type": "buzz", "seat": 1}, state=at_race(3))
    assert "already escaped" in reject(s, {"type": "dye_pack", "targets": [1]}).rejection
    s = play({"type": "steal", "seat": 2, "from": 1}, state=s)
    assert s.seats[1].stolen_from == 1 and s.seats[2].steals == 1


def test_hostage_one_at_a_time_and_backup_needs_one():
    s = at_race()
    assert "no hostage" in reject(s, {"type": "backup", "seat": 1}).rejection
    r = apply(s, {"type": "hostage", "seat": 1})
    assert ("flash", "hostage") in [(o.kind, o.name) for o in r.outputs]
    s = r.state
    assert "already has a hostage" in reject(s, {"type": "hostage", "seat": 1}).rejection
    s = play({"type": "backup", "seat": 1}, state=s)
    assert s.turn.hostages == frozenset()
    assert "is the cops" in reject(s, {"type": "hostage", "seat": 0}).rejection


def test_heist_trap_die_counts_as_the_hostage():
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 1}]},
        {"type": "assault_start"},
    )
    assert "already has a hostage" in reject(s, {"type": "hostage", "seat": 1}).rejection
    s = play({"type": "backup", "seat": 1}, state=s)
    assert 1 not in s.turn.hostages


def test_robber_with_hostage_cannot_escape_with_five_dice_but_a_team_can():
    s = play({"type": "hostage", "seat": 1}, state=at_race(2))
    assert "Backup first" in reject(s, {"type": "buzz", "seat": 1}).rejection
    s4 = play({"type": "hostage", "seat": 1}, {"type": "buzz", "seat": 1}, state=at_race(4))
    assert s4.seats[1].escaped == 1


def test_arrest_needs_three_stages():
    s = stages(at_race(), 2)
    assert "stages 1-3" in reject(s, {"type": "buzz", "seat": 0}).rejection
    s = stages(at_race(), 3)
    r = apply(s, {"type": "buzz", "seat": 0})
    assert r.rejection is None
    assert r.state.phase == IMPOUND
    assert r.state.turn.arrested == frozenset({1})
    assert r.state.seats[1].arrested == 1
    assert ("flash", "arrested") in [(o.kind, o.name) for o in r.outputs]


def test_arrest_only_takes_robbers_not_yet_escaped():
    s = play({"type": "buzz", "seat": 2}, state=stages(at_race(3)))
    s = play({"type": "buzz", "seat": 0}, state=s)
    assert s.turn.arrested == frozenset({1})
    assert s.seats[2].escaped == 1 and s.seats[2].arrested == 0


def test_all_robbers_escaped_ends_turn_cop_dice_pass_clockwise():
    s = play({"type": "buzz", "seat": 1}, state=at_race(3, first_cop=0))
    assert s.phase == ASSAULT
    s = play({"type": "buzz", "seat": 2}, state=s)
    assert s.phase == HEIST_HIDE
    assert s.turns_played == 1 and s.cop == 1


def test_double_escape_rejected():
    s = play({"type": "buzz", "seat": 1}, state=at_race(3))
    assert "already escaped" in reject(s, {"type": "buzz", "seat": 1}).rejection


def test_false_start_is_rejected_with_a_flash():
    s = play(new_game(2))
    r = reject(s, {"type": "buzz", "seat": 1, "ts_ns": 5})
    assert "false start" in r.rejection
    assert [o.name for o in r.outputs] == ["false_start"]


def test_empty_lets_cops_arrest_directly_and_ends_game_with_turn():
    s = play({"type": "loot", "seat": 1}, {"type": "empty"}, state=at_race())
    assert "stages are skipped" in reject(s, {"type": "stage", "stage": 1}).rejection
    assert "bank is empty" in reject(s, {"type": "loot", "seat": 1}).rejection
    assert "already empty" in reject(s, {"type": "empty"}).rejection
    s = play({"type": "buzz", "seat": 0}, {"type": "impound", "seat": 1, "car": 2}, state=s)
    assert s.phase == GAME_OVER
    assert s.turns_played == 1
    assert s.seats[1].cars == 2


def test_impound_rules():
    s = play({"type": "buzz", "seat": 0}, state=stages(at_race(3)))
    assert s.turn.impounds_due == frozenset({1, 2})
    assert "no car due" in reject(s, {"type": "impound", "seat": 0, "car": 0}).rejection
    assert "0..2" in reject(s, {"type": "impound", "seat": 1, "car": 3}).rejection
    s = play({"type": "impound", "seat": 1, "car": 0}, state=s)
    assert s.phase == IMPOUND  # seat 2 still due
    assert "no car due" in reject(s, {"type": "impound", "seat": 1, "car": 1}).rejection
    s = play({"type": "impound", "seat": 2, "car": 1}, state=s)
    assert s.phase == HEIST_HIDE and s.cop == 1
    assert s.seats[1].impounded == (0,) and s.seats[2].impounded == (1,)


def test_a_seat_with_no_cars_loses_nothing():
    s = at_race(2)
    for car in range(3):
        s = play({"type": "buzz", "seat": 0}, state=stages(s))
        s = play({"type": "impound", "seat": 1, "car": car}, state=s)
        # next turn: seat 1 are the cops; play a turn where seat 0 escapes
        s = play(
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": 0, "stop": True}]},
            {"type": "assault_start"},
            {"type": "buzz", "seat": 0},
            state=s,
        )
        if s.phase == GAME_OVER:
            break
        s = play(
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
            {"type": "assault_start"},
            state=s,
        )
    assert s.seats[1].cars == 0
    assert s.phase == GAME_OVER


def test_impounding_same_car_twice_rejected():
    s = play(
        {"type": "buzz", "seat": 0},
        {"type": "impound", "seat": 1, "car": 1},
        state=stages(at_race(2)),
    )
    s = play(
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 0, "stop": True}]},
        {"type": "assault_start"},
        {"type": "buzz", "seat": 0},
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
        {"type": "assault_start"},
        state=s,
    )
    s = play({"type": "buzz", "seat": 0}, state=stages(s))
    assert "already impounded" in reject(s, {"type": "impound", "seat": 1, "car": 1}).rejection


def test_steal_and_loot_are_counted():
    s = play({"type": "loot", "seat": 1}, {"type": "steal", "seat": 1, "from": 0}, state=at_race(2))
    assert s.seats[1].loots == 1 and s.seats[1].steals == 1 and s.seats[0].stolen_from == 1
    assert "itself" in reject(s, {"type": "steal", "seat": 1, "from": 1}).rejection
    assert "is the cops" in reject(s, {"type": "loot", "seat": 0}).rejection


def test_race_events_rejected_after_race_settled():
    s = play({"type": "buzz", "seat": 0}, state=stages(at_race(2)))
    for ev in (
        {"type": "buzz", "seat": 1},
        {"type": "stage", "stage": 1},
        {"type": "hostage", "seat": 1},
        {"type": "dye_pack", "targets": [1]},
    ):
        assert "not allowed now" in reject(s, ev).rejection


def test_a_press_stamped_before_go_is_a_false_start_even_if_it_arrives_after():
    s = play(new_game(2), {"type": "heist_hide", "row": ROW5},
             {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
             {"type": "assault_start", "ts_ns": 5_000_000_000})
    r = reject(s, {"type": "buzz", "seat": 1, "ts_ns": 4_999_000_000})
    assert r.rejection == "buzz: false start: Bob (seat 2) pressed 1.000 ms before Go!"
    assert [o.name for o in r.outputs] == ["false_start"]
    s = play({"type": "buzz", "seat": 1, "ts_ns": 5_000_000_001}, state=s)
    assert s.seats[1].escaped == 1
