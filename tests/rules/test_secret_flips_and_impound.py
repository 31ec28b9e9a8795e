"""Issue 65's rules: robbers' secret flips in a 3-player game, impound skipping a seat
with no car left, and people's numbers (from 1) in what the referee says."""

from __future__ import annotations

import pytest
from game_builders import ROW5, at_race, new_game, play, reject, stages

from companion.games import registry
from companion.games.vault_assault.commands import describe, parse_command
from companion.games.vault_assault.engine import apply
from companion.games.vault_assault.moves import legal_moves, private_moves
from companion.games.vault_assault.page import turn_details
from companion.games.vault_assault.state import GAME_OVER, HEIST, HEIST_OVER, IMPOUND
from companion.games.vault_assault.status import status_lines

VAULT = registry.get("vault-assault")
# Cops Ann (seat 1); Bob (seat 2) and Cat (seat 3) rob. Diamond at position 3.
ROW = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]


def heist_3p():
    return play(new_game(3), {"type": "heist_hide", "row": ROW})


def arrest_everyone(s):
    """The race of a turn: every robber stops, Go!, three stages, Arrested!."""
    s = play({"type": "heist_hide", "row": ROW5}, state=s)
    s = play({"type": "heist_attempt",
              "flips": [{"seat": r, "stop": True} for r in sorted(s.turn.heist.in_heist)]},
             {"type": "assault_start"}, state=s)
    return play({"type": "buzz", "seat": s.cop}, state=stages(s))


# --------------------------------------------------------------------------- impound


def test_impound_says_the_car_as_people_count_it():
    s = play({"type": "buzz", "seat": 0}, state=stages(at_race(2)))
    r = apply(s, {"type": "impound", "seat": 1, "car": 1})
    assert [o.text for o in r.outputs][0] == "Bob (seat 2) loses getaway car 2"
    again = play({"type": "heist_hide", "row": ROW5}, state=r.state)
    assert again.seats[1].impounded == (1,)


def free_car(seat):
    return min(set(range(3)) - set(seat.impounded))


def test_an_arrested_seat_with_no_car_left_is_skipped_with_a_message_not_asked():
    # 3 players, 2 rounds, every robber arrested every turn. Cops: Ann, Bob, Cat, Ann,
    # Bob, Cat. Cat robs in turns 1, 2, 4 and 5: no car left for the 4th arrest.
    s = play(new_game(3, first_cop=0))
    for _ in range(4):
        s = arrest_everyone(s)
        s = play(*({"type": "impound", "seat": x, "car": free_car(s.seats[x])}
                   for x in sorted(s.turn.impounds_due)), state=s)
    assert s.cop == 1 and s.seats[2].cars == 0 and s.seats[0].cars == 1
    r = apply(stages(play({"type": "heist_hide", "row": ROW5},
                          {"type": "heist_attempt", "flips": [{"seat": 2, "stop": True},
                                                              {"seat": 0, "stop": True}]},
                          {"type": "assault_start"}, state=s)), {"type": "buzz", "seat": 1})
    said = [o.text for o in r.outputs]
    # Cat is not asked: only Ann is due, and the table is told why Cat is not.
    assert r.state.phase == IMPOUND and r.state.turn.impounds_due == frozenset({0})
    assert "Cat (seat 3) has no getaway car left: nothing to impound" in said
    assert said[-1] == "Cops: choose a getaway car to impound from Ann (seat 1)"
    assert set(legal_moves(r.state)["impound"]) == {"0"}
    assert "no car due" in reject(r.state, {"type": "impound", "seat": 2, "car": 0}).rejection
    assert r.state.seats[2].arrested == 4
    s = play({"type": "impound", "seat": 0, "car": free_car(r.state.seats[0])}, state=r.state)
    # Turn 6 (Cat the cops): Ann and Bob have no car left either: the turn, and the
    # game, end at the arrest, nobody asked.
    assert s.seats[0].cars == 0 and s.seats[1].cars == 0 and s.cop == 2
    r = apply(stages(play({"type": "heist_hide", "row": ROW5},
                          {"type": "heist_attempt", "flips": [{"seat": 0, "stop": True},
                                                              {"seat": 1, "stop": True}]},
                          {"type": "assault_start"}, state=s)), {"type": "buzz", "seat": 2})
    assert r.rejection is None and r.state.phase == GAME_OVER
    assert [o.name for o in r.outputs][:3] == ["arrested", "no_car", "no_car"]
    assert "impound" not in [o.name for o in r.outputs]


# --------------------------------------------------------------------------- secrets


def test_the_rules_sentence_robbers_hide_their_chosen_dice_in_a_3_player_game():
    """"A 3-player game is not a team game, so Robbers hide their chosen dice from
    other Robbers": nothing the table sees says which dice a robber flipped."""
    s = heist_3p()
    event = {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0},
                                                {"seat": 2, "position": 3}]}
    s = play(event, state=s)  # both hit alarms: one preset piece
    assert s.phase == HEIST and s.turn.preset == 1
    shown = VAULT.public_event(event, s)
    assert shown == {"type": "heist_attempt", "flips": [{"seat": 1}, {"seat": 2}]}
    assert VAULT.describe_event(shown) == "flip 2:? 3:?"
    heist = turn_details(s)["heist"]
    assert heist["revealed"] == {} and heist["flipped"] == {} and heist["secret"] is True
    assert heist["flips"] == {"1": 1, "2": 1}
    moves = legal_moves(s)["heist_attempt"]
    assert moves["secret"] is True and all("positions" not in x for x in moves["seats"].values())
    text = "\n".join(status_lines(s))
    assert "Heist (dice hidden): Bob 1 flipped · Cat 1 flipped" in text
    # The robbers' own phones: each its own die only.
    bob = private_moves(s, 1)["heist"]
    assert bob["flipped"] == {"0": "alarm"} and bob["heist_flip"]["positions"] == [1, 2, 3, 4]
    assert private_moves(s, 2)["heist"]["flipped"] == {"3": "alarm"}  # Cat: hers only
    # The cops' phone and the table's controls: every robber's (the cops compare them).
    for who in (0, None):
        table = private_moves(s, who)["heist"]
        assert table["flipped"] == {"1": {"0": "alarm"}, "2": {"3": "alarm"}}
        assert table["heist_attempt"]["seats"]["2"]["positions"] == [0, 1, 2, 4]
    # A rejection never names the position either.
    r = reject(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0},
                                                      {"seat": 2, "stop": True}]})
    assert r.rejection == "heist_attempt: Bob (seat 2) already flipped that die"


def test_two_and_four_player_heists_keep_showing_the_flipped_dice():
    s = play(new_game(2), {"type": "heist_hide", "row": ROW},
             {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]})
    assert VAULT.shown({"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]},
                       s) is None
    assert turn_details(s)["heist"]["revealed"] == {"0": "alarm"}
    assert private_moves(s, 1) is None


def test_each_robber_flips_on_their_own_and_the_attempt_is_judged_when_all_chose():
    s = heist_3p()
    r = apply(s, {"type": "heist_flip", "seat": 2, "position": 2})  # Cat: the diamond
    assert r.rejection is None and r.state.phase == HEIST
    assert [o.text for o in r.outputs] == ["Cat (seat 3) has chosen; waiting for Bob (seat 2)"]
    assert r.state.seats[2].diamonds == 0  # not judged yet
    assert VAULT.public_event({"type": "heist_flip", "seat": 2, "position": 2}, r.state) == {
        "type": "heist_flip", "seat": 2}
    assert legal_moves(r.state)["heist_flip"] == [1]
    assert private_moves(r.state, 2)["heist"]["choice"] == 2
    assert "already chosen" in reject(r.state, {"type": "heist_flip", "seat": 2,
                                                "stop": True}).rejection
    assert "already chosen" in reject(r.state, {"type": "heist_attempt", "flips": [
        {"seat": 1, "stop": True}, {"seat": 2, "stop": True}]}).rejection
    done = apply(r.state, {"type": "heist_flip", "seat": 1, "position": 1})  # Bob: the trap
    # The same as one heist_attempt of both: Bob (the cops' left) is compared first.
    same = apply(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 1},
                                                        {"seat": 2, "position": 2}]})
    def position(state):
        return state.turn, state.seats, state.phase, state.diamonds_in_box

    assert position(done.state) == position(same.state) and done.outputs == same.outputs
    assert done.state.phase == HEIST_OVER and done.state.seats[2].diamonds == 1
    assert done.state.turn.heist.pending == ()
    # The table's controls complete an attempt a phone began.
    mixed = play({"type": "heist_attempt", "flips": [{"seat": 1, "position": 1}]},
                 state=r.state)
    assert position(mixed) == position(same.state)
    # Undo takes back one robber's choice.
    back = apply(r.state, {"type": "undo"}).state
    assert back == s and back.turn.heist.pending == ()


@pytest.mark.parametrize(("flip", "needle"), [
    ({"seat": 0, "position": 1}, "Ann (seat 1) is not in the heist"),
    ({"seat": 1, "position": 9}, "0..4"),
    ({"seat": 1}, "missing field 'position'"),
    ({"seat": 1, "position": 1, "stop": True}, "both stops and flips"),
    ({"seat": 7, "stop": True}, "0..2"),
])
def test_a_bad_heist_flip_is_one_clear_line(flip, needle):
    assert needle in reject(heist_3p(), {"type": "heist_flip", **flip}).rejection


# --------------------------------------------------------------------------- people's numbers


def test_short_commands_count_seats_positions_and_cars_from_1():
    s = play(new_game(3), {"type": "heist_hide", "row": ROW})
    assert parse_command("flip 2:3 3:stop", s) == {
        "type": "heist_attempt", "flips": [{"seat": 1, "position": 2}, {"seat": 2, "stop": True}]}
    assert parse_command("flip 3:1", s) == {"type": "heist_flip", "seat": 2, "position": 0}
    race = play({"type": "buzz", "seat": 0}, state=stages(at_race(3)))
    assert parse_command("impound 2 3", race) == {"type": "impound", "seat": 1, "car": 2}
    assert parse_command("impound 3", race) == {"type": "impound", "seat": 2, "car": 0}
    assert parse_command("1", race) == {"type": "buzz", "seat": 0}
    assert parse_command("bang 2 3", race)["targets"] == [1, 2]
    assert parse_command("tally 1 35k", race) == {"type": "tally", "seat": 0, "cash": 35000}
    assert parse_command("sticky 3 box", race)["seat"] == 2
    assert parse_command("steal 2 3", race) == {"type": "steal", "seat": 1, "from": 2}
    new = parse_command("new 3 Ann Bob Cat cop=2", s)
    assert new["first_cop"] == 1
    for bad, why in (("hostage 0", "seat must be 1-3 (seats count from 1), got 0"),
                     ("hostage 4", "seat must be 1-3"), ("impound 2 4", "car must be 1-3"),
                     ("new 3 A B C cop=4", "cop must be 1-3"), ("0", "key must be 1-3")):
        with pytest.raises(ValueError, match=r".*") as err:
            parse_command(bad, race)
        assert why in str(err.value) and "\n" not in str(err.value)


def test_log_lines_in_words_count_from_1():
    assert describe({"type": "impound", "seat": 1, "car": 1}) == "impound 2 car 2"
    assert describe({"type": "heist_attempt", "flips": [{"seat": 1, "position": 2},
                                                        {"seat": 2, "stop": True}]}) == (
        "flip 2:3 3:stop")
    assert describe({"type": "buzz", "seat": 0}) == "button 1"
    assert describe({"type": "tally", "seat": 2, "cash": 5000}) == "tally 3 $5,000"
    assert describe({"type": "new_game", "game": "vault-assault", "players": 2,
                     "names": ["A", "B"], "first_cop": 1}).endswith("cops seat 2")


def test_messages_and_status_say_seats_from_1():
    s = at_race(3, first_cop=1)
    text = "\n".join(status_lines(s))
    assert "Cops: Bob (seat 2)" in text and "  seat 1 Ann" in text and "  seat 3 Cat" in text
    assert "seat 0" not in text
    r = apply(s, {"type": "buzz", "seat": 2, "after": {"seat": 0, "by_ns": 5}})
    assert r.rejection is None or "seat 0" not in r.rejection
