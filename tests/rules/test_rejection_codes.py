"""Typed rejections and log problems: each carries a code beside its one line, so the
callers that decide on them (the false-start flash, the spoken callouts, replay's
torn/damaged policy) never match text. The text stays exactly what it was."""

from __future__ import annotations

import json
import pickle

from game_builders import ROW5, at_race, new_game, play

from companion.gamelog import LogProblem, read_log
from companion.games import registry
from companion.games.base import Rejection, rejection_code
from companion.games.vault_assault.engine import apply
from companion.games.vault_assault.state import GameState
from companion.loop import Referee, judged_lines


def code(state, event):
    return rejection_code(apply(state, event).rejection)


def test_vault_assault_rejections_carry_codes_and_the_same_text():
    before_go = play(new_game(2), {"type": "heist_hide", "row": ROW5})
    r = apply(before_go, {"type": "buzz", "seat": 1})
    assert isinstance(r.rejection, Rejection) and r.rejection.code == "false_start"
    assert r.rejection == "buzz: false start: Bob (seat 2) pressed before Go!"
    assert [o.name for o in r.outputs] == ["false_start"]  # the flash, from the code
    race = at_race(3)
    assert code(race, {"type": "buzz", "seat": 0, "ts_ns": 5}) == "arrest_too_early"
    assert code(race, {"type": "stage", "stage": 3}) == "stage_out_of_order"
    assert code(race, {"type": "stage"}) == "missing_field"
    assert code(race, {"type": "stage", "stage": "x"}) == "bad_value"
    assert code(race, {"type": "heist_hide", "row": ROW5}) == "wrong_phase"
    assert code(race, {"type": "nonsense"}) == "unknown_event"
    assert code(GameState(), {"type": "undo"}) == "nothing_to_undo"
    assert code(race, [1]) == "not_an_object" and code(race, {}) == "no_type"
    assert code(race, {"type": "loot", "seat": 9}) == "bad_value"
    assert rejection_code(None) is None and rejection_code("plain") == "rejected"


def test_a_rejection_is_still_a_string_everywhere():
    r = apply(GameState(), {"type": "undo"})
    assert json.dumps({"r": r.rejection}) == '{"r": "undo: nothing to undo"}'
    back = pickle.loads(pickle.dumps(r.rejection))
    assert back == r.rejection and back.code == "nothing_to_undo"


def test_other_games_rejections_carry_codes_too():
    s = registry.judge(GameState(), {"type": "new_game", "game": "vault-abstract",
                                     "players": 2, "names": ["A", "B"]}).state
    assert rejection_code(registry.judge(s, {"type": "move", "from": "c1"}).rejection) == (
        "missing_field")
    assert rejection_code(registry.judge(s, {"type": "roll"}).rejection) == "unknown_event"
    illegal = registry.judge(s, {"type": "move", "from": "c1", "to": "c5"}).rejection
    assert rejection_code(illegal) == "rejected" and illegal.startswith("move:")


def test_the_referees_internal_error_is_coded():
    ref = Referee()
    ref.state = object()  # nothing a game knows: judging it fails inside
    r = ref.submit({"type": "stage", "stage": 1})
    assert rejection_code(r.rejection) == "internal_error"
    assert r.rejection.startswith("internal error (judging)")


def test_log_problems_carry_line_and_code_and_replay_walks_like_resume(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps(new_game(2)) + "\nnot json\n" + json.dumps({"type": "stage"})
                 + '\n{"type":"heist_hi')
    contents = read_log(p)
    kinds = [(x.line, x.code) for x in contents.problems]
    assert kinds == [(2, "undecodable"), (4, "torn")]
    assert all(isinstance(x, LogProblem) and x.startswith(f"line {x.line}: ")
               for x in contents.problems)
    walked = [(j.line, j.problem.code if j.problem else None) for j in judged_lines(contents)]
    assert walked == [(1, None), (2, "undecodable"), (3, "rejected"), (4, "torn")]
    back = pickle.loads(pickle.dumps(contents.problems[1]))
    assert (back, back.line, back.code) == (contents.problems[1], 4, "torn")
