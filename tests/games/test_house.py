"""The house takes the other games: the registry, the Referee choosing the game from
the `new_game` it accepts, resume choosing it from the log's first `new_game`, replay
and the sim printing each game's summary, `serve --input` playing a game's script, and
a Big Score press meaning Flee."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from log_lines import unchained

from companion.cli import main
from companion.gamelog import GameLog, read_log
from companion.games import registry
from companion.games.vault_assault.state import GameState
from companion.loop import Referee, resume_state
from companion.scripted import play_script

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "scripts"
SCRIPT_OF = {"big-score": "big-score-3p.jsonl", "vault-solitaire": "vault-solitaire.jsonl",
             "vault-abstract": "vault-abstract.jsonl"}


def events_of(game_id):
    return [ev for _, ev in read_log(SCRIPTS / SCRIPT_OF[game_id]).events]


def expected_summary(game_id):
    rules = registry.get(game_id)
    state = rules.new_state()
    for ev in events_of(game_id):
        state = rules.apply(state, ev).state
    return rules.summary(state)


def test_registry_has_vault_assault_as_default_and_each_game_by_id():
    assert registry.default().id == "vault-assault"
    assert registry.of_state(GameState()).id == "vault-assault"
    for game_id in SCRIPT_OF:
        g = registry.get(game_id)
        assert g.id == game_id and registry.of_state(g.new_state()) is g
        assert not g.started(g.new_state())
    with pytest.raises(KeyError):
        registry.get("chess")


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_referee_plays_each_game_from_its_new_game_and_undo_goes_back_to_no_game(game_id):
    ref = Referee()
    evs = events_of(game_id)
    assert ref.submit(evs[0]).rejection is None
    assert ref.game.id == game_id
    assert ref.submit({"type": "undo"}).rejection is None
    assert ref.game.id == game_id and not ref.game.started(ref.state)
    # Nothing started: a new_game of any game is taken again (here Vault Assault).
    vault = {"type": "new_game", "game": "vault-assault", "players": 2, "names": ["A", "B"]}
    assert ref.submit(vault).rejection is None and ref.game.id == "vault-assault"
    ref = Referee()
    for ev in evs:
        r = ref.submit(ev)
        assert r.rejection is None, r.rejection
    assert ref.game.summary(ref.state) == expected_summary(game_id)
    assert ref.view().frame.count() > 0


def test_a_started_game_refuses_another_games_new_game_and_unknown_ids_stay_vaults():
    ref = Referee()
    assert ref.submit(events_of("vault-abstract")[0]).rejection is None
    r = ref.submit(events_of("vault-solitaire")[0])
    assert "already under way" in r.rejection and ref.game.id == "vault-abstract"
    r = Referee().submit({"type": "new_game", "game": "chess", "players": 2, "names": ["A", "B"]})
    assert r.rejection == "new_game: unknown game 'chess' (this referee plays 'vault-assault')"


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_resume_picks_the_game_from_the_logs_first_new_game(tmp_path, game_id):
    path = tmp_path / "g.jsonl"
    evs = events_of(game_id)
    half = len(evs) // 2
    with GameLog(path, fsync=False) as log:
        ref = Referee(log=log)
        for ev in evs[:half]:
            assert ref.submit(ev).rejection is None
        ref.submit({"type": "no such event"})  # logged as a rejected note
    state, report = resume_state(path)
    assert registry.of_state(state).id == game_id
    assert report.events == half + 1 and not report.problems
    assert state == ref.state
    ref = Referee(state=state)
    for ev in evs[half:]:
        assert ref.submit(ev).rejection is None
    assert ref.game.summary(ref.state) == expected_summary(game_id)


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_replay_json_and_sim_script_print_each_games_summary(game_id, capsys):
    script = str(SCRIPTS / SCRIPT_OF[game_id])
    assert main(["replay", script, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected_summary(game_id)
    assert main(["sim", "--script", script, "--headless", "--strict"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == expected_summary(game_id) and out.err == ""
    assert main(["replay", script]) == 0
    assert capsys.readouterr().out.splitlines()[0] == registry.status_lines(
        _final_state(game_id))[0]


def _final_state(game_id):
    state = GameState()
    for ev in events_of(game_id):
        state = registry.judge(state, ev).state
    return state


def test_replay_of_a_bad_line_in_another_game_names_it(tmp_path, capsys):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps(events_of("vault-abstract")[0]) + "\n"
                 + '{"type":"move","from":"c1","to":"c5"}\n')
    assert main(["replay", str(p), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("line 2: move:") and len(err.splitlines()) == 1


def test_a_big_score_press_while_choosing_is_flee_and_the_lamps_stay_vaults():
    evs = events_of("big-score")
    lines = [json.dumps(evs[0]), '{"type":"buzz","seat":1,"ts_ns":1000}']
    ref = Referee()
    played, rejected = asyncio.run(play_script(lines, ref, echo_rejections=False))
    assert (played, rejected) == (2, 0)
    assert ref.state.players[1].flee is True  # a press means Flee
    assert [p.flee for p in ref.state.players] == [None, True, None]
    # The Big Score's state says who has chosen, and the buttons do not race.
    assert not registry.get("big-score").buzz_armed(ref.state)


def test_short_commands_start_and_play_the_other_games():
    s = GameState()
    ev = registry.parse_command("play vault-abstract Ann Bob", s)
    assert ev == {"type": "new_game", "game": "vault-abstract", "players": 2,
                  "names": ["Ann", "Bob"]}
    s = registry.judge(s, ev).state
    assert registry.parse_command("c1 c2", s) == {"type": "move", "from": "c1", "to": "c2"}
    bot = registry.parse_command("bot 1", s)
    assert bot["type"] == "move" and registry.judge(s, bot).rejection is None
    with pytest.raises(ValueError, match="give 1 names"):
        registry.parse_command("play vault-solitaire", GameState())
    with pytest.raises(ValueError, match="floor="):
        registry.parse_command("play big-score Ann Bob", GameState())
    ev = registry.parse_command("play big-score Ann Bob floor=artifact,silver,cash20,diamond,key "
                                "first=2", GameState())  # seats counted from 1: Bob
    s = registry.judge(GameState(), ev).state
    assert registry.of_state(s).id == "big-score" and s.marker == 1
    assert registry.parse_command("1", s) == {"type": "choose", "seat": 0, "flee": True}
    ev = registry.parse_command("play big-score Ann Bob floor=artifact,silver,cash20,diamond,key",
                                GameState())
    assert ev["first_player"] == 0 and registry.judge(GameState(), ev).rejection is None
    assert registry.parse_command("reveal cop -", s) == {"type": "reveal",
                                                         "tokens": ["cop", None]}
    sol = registry.judge(GameState(), registry.parse_command("play vault-solitaire Sam",
                                                             GameState())).state
    roll = registry.parse_command("roll 5 6 4 6 5", sol)
    sol = registry.judge(sol, roll).state
    mark = registry.parse_command("mark b3 1 2", sol)  # dice counted from 1
    assert mark == {"type": "mark", "cell": "b3", "dice": [0, 1], "skimmers": []}
    assert registry.judge(sol, mark).rejection is None
    assert registry.parse_command("suggest", sol)["type"] == "note"


def test_serve_input_plays_another_games_script(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n')
    inp = tmp_path / "in.jsonl"
    inp.write_text((SCRIPTS / "vault-abstract.jsonl").read_text() + "c1 c2\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg), "--input", str(inp)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    want = len(events_of("vault-abstract"))
    try:
        deadline = time.monotonic() + 30
        logs: list[Path] = []
        while time.monotonic() < deadline:
            logs = sorted((tmp_path / "logs").glob("game-*.jsonl"))
            if logs and len(logs[0].read_text().splitlines()) >= want + 1:
                break
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    lines = [unchained(x) for x in logs[0].read_text().splitlines()]
    stamps = ("ts_ns", "clock")  # live input is stamped on arrival
    assert [{k: v for k, v in x.items() if k not in stamps} for x in lines[:want]] == (
        events_of("vault-abstract"))
    # The game is over: a move after it is refused (a rejected note), with its reason.
    assert lines[want]["type"] == "rejected" and "over" in lines[want]["reason"]
    state, _ = resume_state(logs[0])
    assert registry.summary(state) == expected_summary("vault-abstract")


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_the_sims_terminal_shows_each_game_without_a_fault(game_id):
    import io

    from companion.display.terminal import TerminalDisplay

    out = io.StringIO()
    ref = Referee(displays=[TerminalDisplay(out=out, clear=False)])
    for ev in events_of(game_id):
        ref.submit(ev)
    ref.on_tick()
    assert ref.internal_errors == 0
    assert registry.status_lines(ref.state)[0][:60] in out.getvalue()  # lines are clipped
    # The interactive sim's help is the game's own.
    assert ref.game.help == registry.get(game_id).help and "undo" in ref.game.help


def test_a_press_in_a_game_without_buttons_is_said_not_dropped():
    # Vault solitaire before the camera has read a roll: a press has nothing to take.
    lines = [json.dumps(events_of("vault-solitaire")[0]), '{"type":"buzz","seat":0,"ts_ns":1000}']
    ref = Referee()
    played, rejected = asyncio.run(play_script(lines, ref, echo_rejections=False))
    assert played == 2 and ref.state.dice == ()
    assert "Seat 1's button does nothing in Vault (solitaire)" in ref.messages


def test_a_big_score_choice_is_logged_whole_but_shown_without_what(tmp_path):
    path = tmp_path / "g.jsonl"
    with GameLog(path, fsync=False) as log:
        ref = Referee(log=log)
        ref.submit(events_of("big-score")[0])
        ref.submit({"type": "choose", "seat": 0, "flee": True})
    assert ref.recent_events[-1] == '{"type":"choose","seat":0}'
    assert unchained(path.read_text().splitlines()[-1])["flee"] is True


@pytest.mark.parametrize("game_id", sorted(SCRIPT_OF))
def test_a_log_resumed_in_another_boot_keeps_every_game_whole(tmp_path, game_id):
    """serve appends a `clock` note when it resumes a log in another boot: every game
    takes it as a note (no problem reported on the next resume, the same game)."""
    events = events_of(game_id)
    half = len(events) // 2
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events[:half]))
    note = {"type": "clock", "clock": "boot:bbbbbbbbbbbb", "wall_ns": 1}
    with path.open("a") as fh:
        for ev in [note, *events[half:]]:
            fh.write(json.dumps(ev) + "\n")
    state, report = resume_state(path)
    assert report.problems == [] and report.events == len(events) + 1
    rules = registry.get(game_id)
    plain = rules.new_state()
    for ev in events:
        plain = rules.apply(plain, ev).state
    assert rules.summary(state) == rules.summary(plain)
