"""The simulated table's screen: stdin from a file or /dev/null, help, seat keys that
do nothing, a new game after game over in a new log, resuming, and 80x24."""

import subprocess
import sys
from pathlib import Path

from game_builders import at_race, play, stages

from companion.display.terminal import render_view
from companion.games import registry
from companion.games.vault_assault.commands import HELP
from companion.interactive import PROMPT, why_no_press
from companion.loop import Referee

VAULT = registry.get("vault-assault")

ROOT = Path(__file__).resolve().parents[1]

GAME_3P = """\
new 3 Ann Bob Cat
hide A P D A A
flip 2:3 3:1
go
6
stage 1
empty
1
impound 2
impound 3
tally 1 30k
tally 2 10k
tally 3 5k
"""


def sim(tmp_path, stdin_path, log="g.jsonl"):
    with open(stdin_path, "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "companion", "sim", "--log", log],
            stdin=stdin, capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )
    return proc


def test_sim_reads_dev_null_and_a_file(tmp_path):
    proc = sim(tmp_path, "/dev/null")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    script = tmp_path / "cmds.txt"
    script.write_text(GAME_3P + "help\n")
    proc = sim(tmp_path, script, log="h.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert "key 6: no seat 6 in this 3-player game (seats 1-3)" in out
    screens = out.split("\n\n+--")  # each screen is drawn after a blank line
    last = screens[-1].splitlines()
    assert all(line in last for line in HELP.splitlines()[:12])  # help's first page
    footer = [line for line in last if line.startswith("-- help")]
    assert footer == [
        "-- help, page 1 of 2: Enter for the next, a command closes it ".ljust(80, "-")]
    # the LED frame on top (its top border split off above), 24 lines with the prompt
    assert last.index(PROMPT) == 23 and last[0].endswith("-+")
    text = screens[-2]  # the screen before help: totals, winner, turn counter
    assert "turn 1/6 · game over · BANK EMPTY" in text
    assert "Winner: Bob with $50,000" in text
    assert "seat 2 Bob        cars 2 diamonds 1 escaped 0 arrested 1 total $50,000" in text
    assert "WINNER" in text


def test_new_game_after_game_over_opens_a_new_log_and_resume_says_so(tmp_path):
    script = tmp_path / "cmds.txt"
    script.write_text(GAME_3P)
    assert sim(tmp_path, script).returncode == 0
    first = tmp_path / "g.jsonl"
    before = first.read_text()
    assert len(before.splitlines()) == 12
    again = tmp_path / "again.txt"
    again.write_text("new 2 Dan Eve\nhide D A A A P\n")
    proc = sim(tmp_path, again)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "resumed g.jsonl: 12 events" in out
    assert "this game is over: winner Bob" in out
    logs = sorted(p for p in tmp_path.glob("*.jsonl") if p != first)
    assert len(logs) == 1 and "Dan" in logs[0].read_text()
    assert "New game: log" in out
    assert first.read_text() == before  # the finished game's log is left alone


def test_screen_fits_80x24_with_readable_log_and_rejections():
    from companion.display.terminal import TerminalDisplay

    ref = Referee(state=stages(at_race(3), 1))
    shown = TerminalDisplay(out=open("/dev/null", "w"), clear=False)  # noqa: SIM115
    ref.displays.append(shown)
    ref.listeners.append(shown.on_event)
    for ev in (
        {"type": "hostage", "seat": 1},
        {"type": "dye_pack", "targets": [1, 2], "ts_ns": 123456789},
        {"type": "stage", "stage": 3},
        {"type": "buzz", "seat": 0, "ts_ns": 5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 4}]},
    ):
        ref.submit(ev)
    text = render_view(ref.view(), "prompt > ", shown.log)
    lines = text.splitlines()
    assert len(lines) <= 24
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "ts_ns" not in text and "{" not in text
    assert "  bang 2 3" in text  # seats as people count them
    assert "✗ stage 3: stage: stages go in order; next is stage 2, got 3" in text
    assert "✗ flip 2:?: heist_attempt: not allowed now" in text  # 3 players: dice hidden


def test_keys_that_press_nothing_say_why():
    s = play({"type": "new_game", "game": "vault-assault", "players": 4, "names": ["R", "B"]})
    # keys and seats as people count them: key 3 is the third seat (0-based 2)
    assert why_no_press(VAULT, s, 2, 4) == "key 3: no seat 3 in this 4-player game (teams 1-2)"
    assert why_no_press(VAULT, s, 1, 4) is None
    assert why_no_press(VAULT, s, 7, 4) == "key 8: no seat 8 in this 4-player game (teams 1-2)"
    assert why_no_press(VAULT, play(), 7, 4) == "key 8: the simulated table has buttons 1-4 only"
    assert why_no_press(VAULT, s, -1, 4) == "key 0: seats count from 1 (keys 1-4)"
