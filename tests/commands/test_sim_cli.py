import asyncio
import json
import os
import sys

from companion.cli import main
from companion.interactive import run_interactive
from companion.loop import Referee


def test_headless_needs_a_script(capsys):
    assert main(["sim", "--headless"]) == 2
    assert "--script" in capsys.readouterr().err


def test_unreadable_script(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xff\xfe\x00bad")
    assert main(["sim", "--script", str(p), "--headless"]) == 2
    assert "cannot read script" in capsys.readouterr().err


def test_script_with_garbage_lines_reports_and_goes_on(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_text(
        '{"type":"new_game","game":"vault-assault","players":2,"names":["A","B"]}\n'
        "garbage\n"
        '{"type":"buzz","seat":1,"ts_ns":5}\n'
        '{"type":"buzz","seat":9}\n'
    )
    assert main(["sim", "--script", str(p), "--headless"]) == 0
    cap = capsys.readouterr()
    assert cap.err.strip().splitlines() == [
        "line 2: not JSON (Expecting value at column 1)",
        "line 3: buzz: false start: B (seat 2) pressed before Go!",
        "line 4: buzz: 'seat' must be 0..1, got 9",
    ]
    assert json.loads(cap.out)["seats"][1]["name"] == "B"
    assert main(["sim", "--script", str(p), "--headless", "--strict"]) == 2


def test_interactive_table_from_a_pipe(tmp_path, monkeypatch, capsys):
    """The interactive table reads commands a line at a time when stdin is a pipe;
    a line holding a digit presses that seat's simulated button."""
    r, w = os.pipe()
    commands = ["new 2 Ann Bob", "hide A P D A A", "flip 2:3", "go", "2", "quit"]
    os.write(w, ("\n".join(commands) + "\n").encode())
    os.close(w)
    monkeypatch.setattr(sys, "stdin", os.fdopen(r))
    ref = Referee()

    async def run():
        return await run_interactive(ref)

    assert asyncio.run(run()) == 0
    assert ref.state.turns_played == 1
    assert ref.state.seats[1].escaped == 1 and ref.state.seats[1].diamonds == 1
    assert "Escaped! Bob (seat 2)" in capsys.readouterr().out  # seats from 1


def test_shipped_scripts_pass_strict_with_their_rejections_marked(capsys):
    from pathlib import Path

    scripts = sorted((Path(__file__).parents[1] / "scripts").glob("*.jsonl"))
    assert len(scripts) >= 3
    for script in scripts:
        assert main(["sim", "--script", str(script), "--headless", "--strict"]) == 0, script
        err = capsys.readouterr().err
        assert all("(rejected as intended)" in line for line in err.splitlines()), err


def test_a_marked_line_that_is_accepted_fails_strict(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_text(
        '{"type":"new_game","game":"vault-assault","players":2,"names":["A","B"]}\n'
        "# rejected: nothing wrong with this one, really\n"
        '{"type":"heist_hide","row":["alarm","dye_pack","diamond","alarm","alarm"]}\n'
    )
    assert main(["sim", "--script", str(p), "--headless", "--strict"]) == 2
    assert "line 3: marked '# rejected' but the referee accepted it" in capsys.readouterr().err


def test_the_log_a_new_game_moved_to_is_closed_at_exit(tmp_path, monkeypatch, capsys):
    """A new game after game over writes a new log (``new_log_after_game_over``); the
    sim closes that one too at exit, so its last lines reach the disk (it once closed
    only the first, and a loaded machine could exit before the writer thread wrote)."""
    import companion.interactive as interactive
    from companion.gamelog import GameLog

    closed = []
    real_close = GameLog.close
    monkeypatch.setattr(GameLog, "close", lambda self: (closed.append(self.path.name),
                                                       real_close(self)))
    second = tmp_path / "second.jsonl"

    async def session(referee, **_):
        referee.start_new_log(GameLog(second))
        referee.log.append({"type": "new_game", "game": "vault-assault", "players": 2,
                            "names": ["Dan", "Eve"]})
        return 0

    monkeypatch.setattr(interactive, "run_interactive", session)
    assert main(["sim", "--log", str(tmp_path / "first.jsonl")]) == 0
    assert closed.count("first.jsonl") == 1 and closed.count("second.jsonl") == 1
    assert "Dan" in second.read_text()
    assert capsys.readouterr().out.splitlines()[-2:] == [
        f"game log: {tmp_path / 'first.jsonl'}", f"game log: {second}"]


def test_the_learned_pip_reader_with_a_symbol_profile_is_refused_in_one_line(capsys):
    assert main(["sim", "--camera", "synthetic", "--reader", "learned"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ('sim: --reader learned reads pip dice, which a profile turns off: '
                   'add --profile ""')
