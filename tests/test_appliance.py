"""`companion serve` and `companion check` on simulated hardware."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from game_builders import ROW5, at_race, new_game, play, stages
from log_lines import unchained, wait_for_logged_lines

from companion.appliance import game_finished, new_log_path, pick_log
from companion.cli import main
from companion.gamelog import GameLog
from companion.games.vault_assault.buttons import live_seats

ROOT = Path(__file__).resolve().parents[1]


def write_config(tmp_path, extra=""):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[gpio]\npin_factory = "mock"\n'
        "[lamps]\npins = [5, 6, 13, 19]\nprogress_pins = [12, 16, 20]\n"
        '[display]\ntype = "none"\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n' + extra
    )
    return cfg


def test_pick_log_resumes_unfinished_and_starts_new_after_finished(tmp_path):
    d = tmp_path / "logs"
    first = pick_log(d, now=lambda: 1_700_000_000)
    assert first.parent == d and first.name.startswith("game-")
    with GameLog(first) as log:
        log.append(new_game())
    assert pick_log(d) == first  # unfinished: resumed
    assert new_log_path(d, now=lambda: 1_700_000_000) != first


def test_live_seats_follow_the_race():
    s = at_race(3, first_cop=0)
    assert live_seats(s) == {1, 2}
    s = play({"type": "buzz", "seat": 1}, state=stages(s))
    assert live_seats(s) == {0, 2}
    assert live_seats(play(new_game())) == set()


def notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(20)
    return sock, path


def serve(cfg, tmp_path, input_path, notify_path):
    env = {**os.environ, "NOTIFY_SOCKET": notify_path, "WATCHDOG_USEC": "400000"}
    return subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg), "--input",
         str(input_path)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for(sock, word, timeout=20):
    end = time.monotonic() + timeout
    seen = []
    while time.monotonic() < end:
        msg = sock.recv(4096).decode()
        seen.append(msg)
        if word in msg:
            return seen
    raise AssertionError(f"{word} not sent; got {seen}")


def test_serve_notifies_ready_pings_watchdog_logs_and_resumes(tmp_path):
    cfg = write_config(tmp_path)
    events = [new_game(2), {"type": "heist_hide", "row": ROW5},
              {"type": "heist_attempt", "flips": [{"seat": 1, "position": 2}]}]
    inp = tmp_path / "in.jsonl"
    # The garbage line comes before the last event, so that once all three are
    # logged its complaint is surely on stderr (as the last line it raced SIGTERM).
    lines = [json.dumps(e) for e in events]
    inp.write_text("\n".join([*lines[:2], "garbage", lines[2]]) + "\n")
    sock, path = notify_socket(tmp_path)
    proc = serve(cfg, tmp_path, inp, path)
    try:
        wait_for(sock, "READY=1")
        wait_for(sock, "WATCHDOG=1")
        logs = wait_for_logged_lines(tmp_path / "logs", 3, 10)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "input line 3: unknown command 'garbage'" in err
    lines = [unchained(x) for x in logs[0].read_text().splitlines()]
    assert [x["type"] for x in lines] == ["new_game", "heist_hide", "heist_attempt"]
    # Restart: the unfinished game is resumed from its log.
    inp.write_text('{"type":"assault_start"}\n')
    proc = serve(cfg, tmp_path, inp, path)
    try:
        wait_for(sock, "READY=1")
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert "resumed" in err and "(3 events)" in err
    assert json.loads(logs[0].read_text().splitlines()[-1])["type"] == "assault_start"
    sock.close()


def test_serve_bad_config_exits_78_without_touching_hardware(tmp_path, capsys):
    cfg = write_config(tmp_path, '[timing]\ntie_rule = "fastest"\n')
    assert main(["serve", "--config", str(cfg)]) == 78
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "timing.tie_rule" in err
    assert not (tmp_path / "logs").exists()


def test_check_simulated_reports_factory_display_lamps_and_bounce(tmp_path, capsys):
    assert main(["check", "--simulate", "--config", str(write_config(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "pin factory: MockFactory (mock): edges are stamped when the callback runs" in out
    assert "lamps: 4 button lamps lit in turn" in out
    assert out.count("pressed; bounce") == 4
    assert "check: all seats answered" in out


def test_game_finished_needs_tallies():
    assert not game_finished(at_race())
