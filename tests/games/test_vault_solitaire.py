"""Vault (solitaire): the board as data, the scripted game, marking rules, skimmers,
re-rolls, locks, the helper, bad input and invariants (hypothesis)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.gamelog import read_log
from companion.games.vault_solitaire import definition as d
from companion.games.vault_solitaire import engine as e
from companion.games.vault_solitaire.helper import evaluate, greedy, suggest
from companion.games.vault_solitaire.state import GAME_OVER, PLAY, ROLL
from companion.games.vault_solitaire.summary import summary

SCRIPT = Path(__file__).parent.parent / "scripts" / "vault-solitaire.jsonl"
NEW = {"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]}


def rolled(dice, **changes):
    s = e.apply(e.new_state(), NEW).state
    s = e.apply(s, {"type": "roll", "dice": dice}).state
    from dataclasses import replace
    return replace(s, **changes)


def test_board_data():
    assert len(d.GRID) == 6 and all(len(row) == 6 for row in d.GRID)
    assert sorted(d.LOCK_LINES) == list(d.LOCKS)
    lines = set(d.LOCK_LINES.values())
    assert len(lines) == 12  # every row and every column has exactly one lock
    assert sum(d.GEMS.values()) == 27
    assert [d.rank_of(s) for s in (0, 9, 10, 12, 13, 16, 19, 22, 30)] == [
        "Busted!!!", "Busted!!!", "Pickpocket", "Pickpocket", "Shoplifter", "Cat Burglar",
        "Bank Robber", "Pink Panther", "Pink Panther"]


def test_scripted_game_worked_out_by_hand():
    state = e.replay([ev for _, ev in read_log(SCRIPT).events])
    # Column b (lock A, 1 gem) in round A; row 4 (lock E, 1 gem) in round D; skimmer 0
    # was used for f1, skimmers 1 and 2 never: 2 gems + 2 unused skimmers = 4, Busted.
    assert summary(state) == {
        "game": "vault-solitaire", "name": "Sam", "over": True, "round": "L",
        "locks_closed": "ABCDEFGHIJKL",
        "marked": ["b3", "b5", "c3", "c4", "d2", "e3", "e4", "f1"],
        "circled": ["A", "E"], "gems": 2,
        "skimmers": [{"boxes": 9, "used": True}, {"boxes": 0, "used": False},
                     {"boxes": 0, "used": False}],
        "unused_skimmers": 2, "rerolls_used": 1, "score": 4, "rank": "Busted!!!",
    }


def test_marking_rules():
    assert e.signed_sums([6, 1]) == {7, 5, -5, -7}
    assert e.can_mark(5, [6, 1], []) and e.can_mark(7, [6, 1], [])
    assert not e.can_mark(4, [6, 1], [])
    assert e.can_mark("odd", [3], []) and not e.can_mark("odd", [4], [])
    assert not e.can_mark("even", [2, 2], [])  # one die only
    assert e.can_mark("x2", [4, 4], []) and not e.can_mark("x2", [4, 2], [])
    assert not e.can_mark("x2", [2, 2, 2], [])
    assert e.can_mark(18, [5], [13])  # the rulebook's example
    s = rolled([6, 1, 3, 3, 2])
    r = e.apply(s, {"type": "mark", "cell": "c1", "dice": [0]})  # 6
    assert r.rejection is None and ("c1" in summary(r.state)["marked"])
    r = e.apply(r.state, {"type": "mark", "cell": "c1", "dice": [1]})
    assert "already marked" in r.rejection
    assert "blacked out" in e.apply(s, {"type": "mark", "cell": "b1", "dice": [0]}).rejection
    r = e.apply(s, {"type": "mark", "cell": "d1", "dice": [0, 1]})  # 15 from 6 and 1
    assert "adding or subtracting to 15" in r.rejection and r.state is s


def test_completing_a_line_after_its_lock_loses_the_gems():
    # Column b (lock A) finished in round B: lost.
    s = rolled([5, 6, 1, 1, 1])
    s = e.apply(s, {"type": "mark", "cell": "b3", "dice": [0, 1]}).state
    s = e.apply(s, {"type": "pass"}).state
    assert s.phase == ROLL and s.round == 1
    s = e.apply(s, {"type": "roll", "dice": [5, 5, 5, 1, 1]}).state
    r = e.apply(s, {"type": "mark", "cell": "b5", "dice": [0, 1, 2]})
    assert "lock is closed" in r.outputs[1].text and r.state.circled == frozenset()


def test_skimmers_and_rerolls():
    s = rolled([6, 6, 6, 6, 6])
    for i in range(3):
        s = e.apply(s, {"type": "power", "die": i, "skimmer": 1}).state
    r = e.apply(s, {"type": "power", "die": 3, "skimmer": 1})
    assert "room for 2 more boxes" in r.rejection
    assert "no power yet" in e.apply(s, {"type": "mark", "cell": "a1", "dice": [3],
                                         "skimmers": [0]}).rejection
    s = e.apply(s, {"type": "mark", "cell": "c6", "dice": [3], "skimmers": [1]}).state  # 18-6
    assert s.skimmer_used[1] and summary(s)["unused_skimmers"] == 2
    assert "already used" in e.apply(s, {"type": "power", "die": 4, "skimmer": 1}).rejection
    s = rolled([1, 1, 1, 1, 1])
    for k in range(3):
        s = e.apply(s, {"type": "reroll", "dice": [0], "values": [k + 2]}).state
    assert s.dice[0] == 4 and s.rerolls_used == 3
    r = e.apply(s, {"type": "reroll", "dice": [0], "values": [6]})
    assert "all 3 re-rolls are used" in r.rejection


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "roll", "dice": [1, 2, 3]}, "not allowed now"),
        ({"type": "mark", "cell": "z9", "dice": [0]}, "'cell' must be a square"),
        ({"type": "mark", "cell": "c1", "dice": [7]}, "'dice' must list distinct"),
        ({"type": "mark", "cell": "c1", "dice": [0, 0]}, "'dice' must list distinct"),
        ({"type": "mark", "cell": "c1", "dice": "0"}, "'dice' must list distinct"),
        ({"type": "mark", "cell": "c1", "dice": [10**30]}, "'dice' must list distinct"),
        ({"type": "mark", "dice": [0]}, "missing field 'cell'"),
        ({"type": "power", "die": -1, "skimmer": 0}, "'die' must be 0..4"),
        ({"type": "power", "die": 0, "skimmer": 3}, "'skimmer' must be 0..2"),
        ({"type": "reroll", "dice": [0], "values": [7]}, "die values 1-6"),
        ({"type": "reroll", "dice": [], "values": []}, "at least one"),
        ({"type": "reroll", "dice": [0, 1], "values": [2]}, "must list 2 die values"),
        ({"type": "bet"}, "unknown event type"),
        (42, "must be a JSON object"),
    ],
)
def test_bad_input_one_line_state_unchanged(event, reason):
    s = rolled([6, 1, 3, 3, 2])
    r = e.apply(s, event)
    assert r.state is s and r.rejection and reason in r.rejection, r.rejection
    assert "\n" not in r.rejection


def test_roll_checks_the_dice():
    s = e.apply(e.new_state(), NEW).state
    for dice in ([1, 2, 3, 4], [1, 2, 3, 4, 0], [1, 2, 3, 4, True], "12345", [1.5] * 5):
        assert "die values 1-6" in e.apply(s, {"type": "roll", "dice": dice}).rejection
    assert "players' must be 1..1" in e.apply(e.new_state(), {**NEW, "players": 2}).rejection


def test_helper_suggests_legal_moves_with_one_line_reason():
    s = e.apply(e.new_state(), NEW).state
    s = e.apply(s, {"type": "roll", "dice": [5, 6, 1, 1, 2]}).state
    s = e.apply(s, {"type": "mark", "cell": "b3", "dice": [0, 1]}).state  # 11
    s = e.apply(s, {"type": "pass"}).state
    # Round B: column b is lost already; the helper still plays every die legally.
    sug = suggest(s, [5, 5, 5, 1, 2])
    assert "\n" not in sug.reason and "lock B closes" in sug.reason
    state = e.apply(s, {"type": "roll", "dice": [5, 5, 5, 1, 2]}).state
    for ev in sug.events:
        r = e.apply(state, ev)
        assert r.rejection is None, r.rejection
        state = r.state
    assert state.phase == ROLL and state.round == 2
    # With column d (lock B) one 15 short: 5+5+5 cracks it, and the helper sees it.
    from dataclasses import replace
    s2 = replace(s, marked=s.marked | {d.parse_cell("d2")})
    s2 = e.apply(s2, {"type": "roll", "dice": [5, 5, 5, 3, 3]}).state
    sug = suggest(s2)
    assert "cracks B" in sug.reason, sug.reason


def test_helper_beats_greedy_on_a_few_seeded_games():
    def play(player, seed):
        rng = random.Random(seed)
        s = e.apply(e.new_state(), NEW).state
        while s.phase != GAME_OVER:
            s = e.apply(s, {"type": "roll", "dice": [rng.randint(1, 6) for _ in range(5)]}).state
            while s.phase == PLAY:
                for ev in player(s):
                    if ev["type"] == "reroll":  # the helper leaves the new values to the dice
                        ev = {**ev, "values": [rng.randint(1, 6) for _ in ev["dice"]]}
                    r = e.apply(s, ev)
                    assert r.rejection is None, r.rejection
                    s = r.state
        return e.score(s)

    helper = sum(play(lambda s: suggest(s).events, g) for g in range(5))
    base = sum(play(greedy, g) for g in range(5))
    assert helper > base


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=10, max_size=150))
def test_invariants_over_random_play(draws):
    s = e.apply(e.new_state(), NEW).state
    rng = random.Random(draws[0])
    for x in draws:
        if s.phase == GAME_OVER:
            break
        before = s
        if s.phase == ROLL:
            ev = {"type": "roll", "dice": [rng.randint(1, 6) for _ in range(5)]}
        else:
            marks = e.legal_marks(s)
            choice = x % 5
            if choice < 2 and marks:
                ev = marks[x % len(marks)]
            elif choice == 2 and s.unused_dice():
                ev = {"type": "power", "die": s.unused_dice()[0], "skimmer": x % 3}
            elif choice == 3:
                ev = {"type": "reroll", "dice": [s.unused_dice()[0]], "values": [x % 6 + 1]}
            else:
                ev = {"type": "pass"}
        r = e.apply(s, ev)
        if r.rejection:
            assert r.state is s
            continue
        s = r.state
        assert e.score(s) >= 0 and evaluate(s) >= 0
        assert s.marked >= before.marked and s.circled >= before.circled
        assert all(0 <= b <= d.SKIMMER_BOXES for b in s.skimmer_boxes)
        assert s.rerolls_used <= d.REROLLS
        assert e.apply(s, {"type": "undo"}).state == before
        if s.phase == PLAY:
            bad = e.apply(s, {"type": "mark", "cell": "b1", "dice": [0]})
            assert bad.state is s and bad.rejection
    assert summary(s)["score"] == e.score(s)


def test_helper_may_ask_for_a_reroll_of_the_dice_it_would_waste():
    everything_but_c1 = frozenset(e.OPEN_CELLS) - {d.parse_cell("c1")}
    s = rolled([6, 1, 1, 1, 1], marked=everything_but_c1)
    sug = suggest(s, reroll_leftovers=1)
    assert sug.events[0] == {"type": "mark", "cell": "c1", "dice": [0], "skimmers": []}
    last = sug.events[-1]
    assert last["type"] == "reroll" and "values" not in last and "re-roll 1 of 3" in sug.reason
    for ev in sug.events[:-1]:
        s = e.apply(s, ev).state
    s = e.apply(s, {**last, "values": [6] * len(last["dice"])}).state
    assert s.rerolls_used == 1 and s.phase == PLAY and s.dice == (6, 6, 6, 6, 6)
    # Out of re-rolls, the helper plays on without asking.
    from dataclasses import replace
    s = replace(s, rerolls_used=3)
    assert all(ev["type"] != "reroll" for ev in suggest(s, reroll_leftovers=1).events)


def test_marks_read_as_the_sums_they_are_minus_signs_kept():
    assert e.arithmetic(10, [5, 6, 4, 5], []) == "5 + 6 + 4 - 5 = 10"
    assert e.arithmetic(2, [3, 5], []) == "5 - 3 = 2"
    assert e.arithmetic(18, [5], [(0, 13)]) == "5 + 13 (skimmer 1) = 18"  # the rulebook's
    assert e.arithmetic(13, [6, 3, 5], [(0, 9)]) == "6 + 3 + 9 (skimmer 1) - 5 = 13"
    assert e.arithmetic("odd", [3], []) == "3 (odd)"
    assert e.arithmetic("x2", [2, 2], []) == "2 and 2 (a pair)"
    assert e.arithmetic(14, [6, 1], []) is None
    # Every mark the page offers reads as a sum that makes its square.
    from companion.games.vault_solitaire.table import page_details

    s = rolled([5, 6, 4, 5, 1], skimmer_boxes=(9, 0, 0))
    ways = page_details(s)["ways"]
    assert set(ways) == set(e.markable_cells(s))
    for cell, options in ways.items():
        r, c = d.parse_cell(cell)
        square = d.GRID[r][c]
        for way in options:
            text = way["text"]
            if isinstance(square, int):
                left, right = text.split(" = ")
                assert int(right) == square
                value = eval(left.replace(" (skimmer 1)", ""))  # digits, + and - only
                assert value == square, text
            assert e.apply(s, way["event"]).rejection is None
    assert "5 + 6 + 4 - 5 = 10" in [w["text"] for w in ways["a3"]]


def test_words_that_are_true_no_rank_before_the_end():
    from companion.games.vault_solitaire.table import headline, status_lines

    s = e.apply(e.new_state(), NEW).state
    assert summary(s)["rank"] is None and summary(s)["score"] == 3  # 3 unused skimmers
    assert not any("Busted" in line for line in status_lines(s))
    assert "Busted" not in headline(s)
    final = e.replay([ev for _, ev in read_log(SCRIPT).events])
    assert summary(final)["rank"] == "Busted!!!"
    assert any("Game over: 4 points, Busted!!!" in line for line in status_lines(final))


def test_dice_and_skimmers_counted_from_1_in_commands_and_messages():
    from companion.games.vault_solitaire.table import describe, parse_command

    s = rolled([5, 6, 4, 6, 5], skimmer_boxes=(9, 0, 0))
    assert parse_command("mark b3 1 2", s) == {"type": "mark", "cell": "b3", "dice": [0, 1],
                                               "skimmers": []}
    assert parse_command("mark f1 1 3 s1", s)["skimmers"] == [0]
    assert parse_command("power 5 3", s) == {"type": "power", "die": 4, "skimmer": 2}
    assert parse_command("reroll 4:6 5:2", s) == {"type": "reroll", "dice": [3, 4],
                                                   "values": [6, 2]}
    for bad, why in (("mark b3 0", "a number 1-5"), ("power 6 1", "a number 1-5"),
                     ("mark b3 1 s4", "a number 1-3"), ("power 1 0", "a number 1-3")):
        with pytest.raises(ValueError, match=why):
            parse_command(bad, s)
    s2 = e.apply(s, {"type": "mark", "cell": "b3", "dice": [0, 1]}).state
    r = e.apply(s2, {"type": "mark", "cell": "c1", "dice": [0]})
    assert r.rejection == "mark: die 1 (a 5) is already used"
    r = e.apply(s2, {"type": "power", "die": 2, "skimmer": 1})
    assert [o.text for o in r.outputs] == ["Skimmer 2: 4 boxes"]
    assert describe({"type": "mark", "cell": "b3", "dice": [0, 1], "skimmers": [0]}) == (
        "mark b3 with dice 1, 2 and skimmer 1")
    assert describe({"type": "power", "die": 4, "skimmer": 0}) == "die 5 powers skimmer 1"
