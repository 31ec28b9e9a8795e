import json
from pathlib import Path

from companion.cli import main

SCRIPT = Path(__file__).parents[1] / "scripts" / "game-2p.jsonl"


def write(tmp_path, lines):
    p = tmp_path / "log.jsonl"
    p.write_text("".join(x + "\n" for x in lines))
    return p


NEW = '{"type":"new_game","game":"vault-assault","players":2,"names":["A","B"]}'


def test_replay_json_summary_of_a_fresh_game(tmp_path, capsys):
    assert main(["replay", str(write(tmp_path, [NEW])), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "over": False,
        "turns_played": 0,
        "round": 1,
        "cop": 0,
        "seats": [
            {"name": n, "diamonds": 0, "cars": 3, "escaped": 0, "arrested": 0, "total": None}
            for n in "AB"
        ],
        "winners": [],
    }


def test_illegal_line_stops_with_line_number_and_exit_2(tmp_path, capsys):
    p = write(tmp_path, [NEW, '{"type":"stage","stage":1}', '{"type":"undo"}'])
    assert main(["replay", str(p), "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "line 2: stage: not allowed now: the cops have not hidden the diamond yet (heist_hide)"
    ]


def test_skip_invalid_reports_each_and_goes_on(tmp_path, capsys):
    p = write(tmp_path, [NEW, "not json", '{"type":"stage","stage":1}', '{"type":"undo"}'])
    assert main(["replay", str(p), "--json", "--skip-invalid"]) == 0
    cap = capsys.readouterr()
    assert cap.err.strip().splitlines() == [
        "line 2: not JSON (Expecting value at column 1)",
        "line 3: stage: not allowed now: the cops have not hidden the diamond yet (heist_hide)",
    ]
    assert json.loads(cap.out)["seats"] == []  # the undo took back new_game


def test_torn_last_line_is_reported_not_fatal(tmp_path, capsys):
    p = tmp_path / "log.jsonl"
    p.write_text(NEW + '\n{"type":"heist_hide","ro')
    assert main(["replay", str(p), "--json"]) == 0
    cap = capsys.readouterr()
    assert "torn last line" in cap.err
    assert json.loads(cap.out)["seats"][0]["name"] == "A"


def test_missing_file(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_text_summary(capsys):
    assert main(["replay", str(SCRIPT), "--skip-invalid"]) == 0
    out = capsys.readouterr().out
    assert "game over" in out and "Bob" in out
