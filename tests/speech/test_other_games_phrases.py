"""What the box says in the other games: each spoken output's text, no seat tags,
never what a Big Score player chose, nothing for rejections."""

from __future__ import annotations

from pathlib import Path

from companion.gamelog import read_log
from companion.games import registry
from companion.games.base import Result
from companion.games.vault_assault.state import GameState
from companion.speech.phrases import callouts

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def said(script):
    s = GameState()
    out = []
    for _, ev in read_log(SCRIPTS / script).events:
        r = registry.judge(s, ev)
        out += callouts(ev, r)
        s = r.state
    return out


def test_big_score_says_who_has_chosen_never_what_and_the_bust():
    lines = said("big-score-3p.jsonl")
    assert lines[0] == "The Big Score, Act two: 3 players in the vault."
    assert "Cat holds the First Player Marker." in lines
    assert "Ann has chosen." in lines and "Everyone has chosen: open your fists!" in lines
    assert "BUSTED! Act two tokens lost: Bob. Act two is over." in lines
    assert not any("(seat" in x for x in lines)
    chosen = [x for x in lines if "has chosen" in x and not x.startswith("Everyone")]
    assert chosen and all(x in ("Ann has chosen.", "Bob has chosen.", "Cat has chosen.")
                          for x in chosen)


def test_solitaire_and_abstract_say_gems_locks_captures_and_the_winner():
    sol = said("vault-solitaire.jsonl")
    assert "Line A cracked: 1 gem circled." in sol and "Lock A closes." in sol
    assert sol[-1] == "Game over: 4 points, Busted!!!"
    ab = said("vault-abstract.jsonl")
    assert "Wanda (White) jumps over a5: a4-a6 and captures." in ab
    assert ab[-1] == "Wanda (White) wins: a pawn on the far rank."
    assert not any("walks" in x for x in ab)  # plain moves stay on the board


def test_rejections_and_undo_in_another_game():
    s = registry.judge(GameState(), {"type": "new_game", "game": "vault-abstract",
                                     "players": 2, "names": ["A", "B"]}).state
    bad = {"type": "move", "from": "c1", "to": "c5"}
    assert callouts(bad, registry.judge(s, bad)) == []
    moved = registry.judge(s, {"type": "move", "from": "c1", "to": "c2"}).state
    assert callouts({"type": "undo"}, registry.judge(moved, {"type": "undo"})) == ["Undone."]
    assert callouts({"type": "buzz", "seat": 0}, Result(s, "unknown event type 'buzz'", ())) == []
