"""Scripted whole games, one per player count, played headless through the loop (buzz
lines become presses on simulated pins). Expected figures worked out by hand from the
scripts' comments."""

import json
from pathlib import Path

import pytest

from companion.cli import main

SCRIPTS = Path(__file__).parent / "scripts"


def seat(name, diamonds, cars, escaped, arrested, total):
    return {
        "name": name,
        "diamonds": diamonds,
        "cars": cars,
        "escaped": escaped,
        "arrested": arrested,
        "total": total,
    }


EXPECTED = {
    # 2p: Bob took the turn-1 diamond, was arrested in turn 1 (car 0) and escaped in
    # turns 3 and 5; Ann trapped in turn 2 (backup, escape), diamond in turn 4, arrested
    # (car 2), diamond + escape in turn 6. Sticky fingers: Bob takes one of Ann's 2
    # diamonds. Totals: Ann 35,000 + 1 x 40,000; Bob 60,000 + 2 x 40,000.
    "game-2p.jsonl": {
        "over": True,
        "turns_played": 6,
        "round": 3,
        "cop": 1,
        "seats": [seat("Ann", 1, 2, 2, 1, 75000), seat("Bob", 2, 2, 2, 1, 140000)],
        "winners": [1],
    },
    # 3p: turn 1 Cat diamond + escape, Ann arrested (car 1); turn 2 Bob diamond, Ann and
    # Bob escape; turn 3 Bob diamond (compared before Cat), Empty!, Ann arrests Bob and
    # Cat directly: the game ends after 3 turns in round 1. Totals: Ann 90,000,
    # Bob 10,000 + 80,000, Cat 30,000 + 40,000: Ann and Bob share the win.
    "game-3p.jsonl": {
        "over": True,
        "turns_played": 3,
        "round": 1,
        "cop": 0,
        "seats": [
            seat("Ann", 0, 2, 1, 1, 90000),
            seat("Bob", 2, 2, 1, 1, 90000),
            seat("Cat", 1, 2, 1, 1, 70000),
        ],
        "winners": [0, 1],
    },
    # 4p teams: Red escape in turns 1 and 3, arrested in 5 (car 0), diamond in 5;
    # Blue diamond in turn 2, arrested in 2 (car 1) and 6 (car 0), escape in 4.
    "game-4p.jsonl": {
        "over": True,
        "turns_played": 6,
        "round": 3,
        "cop": 0,
        "seats": [seat("Red Team", 1, 2, 2, 1, 85000), seat("Blue Team", 1, 1, 1, 2, 85000)],
        "winners": [0, 1],
    },
}


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_scripted_game_through_the_loop(script, tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    code = main(["sim", "--script", str(SCRIPTS / script), "--headless", "--log", str(log)])
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(out) == EXPECTED[script]
    # The game log written on the way replays to the same summary.
    assert main(["replay", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == EXPECTED[script]


def test_resuming_a_game_cut_short(tmp_path, capsys):
    """Play half the script, stop, play the rest against the same log: same result."""
    lines = (SCRIPTS / "game-2p.jsonl").read_text().splitlines()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join(lines[:25]) + "\n")
    second.write_text("\n".join(lines[25:]) + "\n")
    log = tmp_path / "game.jsonl"
    assert main(["sim", "--script", str(first), "--headless", "--log", str(log)]) == 0
    capsys.readouterr()
    assert main(["sim", "--script", str(second), "--headless", "--log", str(log)]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(out) == EXPECTED["game-2p.jsonl"]
