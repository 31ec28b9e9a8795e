"""Clocks across reboots: live stamps carry their boot's epoch, the log records the
change, stamps of two epochs are never compared. A race resumed after a power cut goes
on; a script's own stamps are one epoch of their own wherever it is played."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

from game_builders import ROW5, at_race, new_game
from log_lines import wait_for_logged_lines

import companion.appliance as appliance_mod
from companion.appliance import Appliance
from companion.cli import main
from companion.clocks import boot_clock
from companion.config import parse_config
from companion.loop import resume_state
from companion.rules.engine import apply

ROOT = Path(__file__).resolve().parents[1]


def test_boot_clock_names_this_boot(tmp_path):
    assert boot_clock() == boot_clock() and boot_clock().startswith(("boot:", "proc:"))
    f = tmp_path / "boot_id"
    f.write_text("0123ABCD-4567-89ab-cdef-0123456789ab\n")
    assert boot_clock(f) == "boot:0123abcd4567"
    assert boot_clock(tmp_path / "missing").startswith("proc:")


def test_stamps_of_two_epochs_are_never_compared():
    s = apply(at_race(2), {"type": "stage", "stage": 1}).state
    s = at_race(2)
    from dataclasses import replace

    s = replace(s, turn=replace(s.turn, go_ns=10**15, go_clock="boot:a"))
    same = apply(s, {"type": "buzz", "seat": 1, "ts_ns": 5, "clock": "boot:a"})
    assert same.rejection and "false start" in same.rejection
    other = apply(s, {"type": "buzz", "seat": 1, "ts_ns": 5, "clock": "boot:b"})
    assert other.rejection is None
    script = apply(s, {"type": "buzz", "seat": 1, "ts_ns": 5})  # a script's own epoch
    assert script.rejection is None


def config(tmp_path):
    return parse_config(
        '[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n'
    )


def test_a_race_resumed_after_a_power_cut_goes_on(tmp_path, monkeypatch):
    """Boot A: the race starts (Go! stamped late in a long uptime). Power cut. Boot B:
    CLOCK_MONOTONIC starts again near 0; the presses after the resume are escapes."""
    monkeypatch.setattr(appliance_mod, "boot_clock", lambda: "boot:aaaaaaaaaaaa")

    async def boot_a():
        app = Appliance(config(tmp_path), echo=False)
        await app.start()
        for ev in (
            new_game(2),
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
            {"type": "assault_start"},
        ):
            app.table.post(ev)
        await app.table.drain()
        go = app.referee.state.turn.go_ns
        app.log.close()  # the power goes: nothing closed cleanly after this
        await app.table.stop()
        return go

    go_ns = asyncio.run(boot_a())
    assert go_ns > 0
    monkeypatch.setattr(appliance_mod, "boot_clock", lambda: "boot:bbbbbbbbbbbb")

    async def boot_b():
        app = Appliance(config(tmp_path), echo=False)
        await app.start()
        assert app.referee.state.phase == "assault"
        app.buzzers.on_press(1, 1_000_000)  # 1 ms after boot B: far "before" boot A's Go!
        await asyncio.sleep(0.05)
        app.buzzers.flush()
        await app.table.drain()
        await app.close()
        return app

    app = asyncio.run(boot_b())
    state = app.referee.state
    assert app.referee.rejections == 0, list(app.referee.messages)
    assert state.seats[1].escaped == 1
    lines = [json.loads(x) for x in app.log_path.read_text().splitlines()]
    clocks = [x for x in lines if x["type"] == "clock"]
    assert [c["clock"] for c in clocks] == ["boot:bbbbbbbbbbbb"], "the epoch change is logged"
    assert lines[-1]["type"] != "rejected" and lines[-1]["clock"] == "boot:bbbbbbbbbbbb"
    assert resume_state(app.log_path)[0] == state  # and it replays the same


SCRIPT = [
    new_game(2),
    {"type": "heist_hide", "row": ROW5},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
    {"type": "assault_start", "ts_ns": 5_000_000_000},
    {"type": "buzz", "seat": 1, "ts_ns": 4_000_000_000},  # its own false start
    {"type": "stage", "stage": 1, "ts_ns": 6_000_000_000},
    {"type": "buzz", "seat": 1, "ts_ns": 7_000_000_000},
]


def test_a_scripts_own_stamps_play_the_same_through_sim_and_serve_input(tmp_path, capsys):
    script = tmp_path / "s.jsonl"
    script.write_text("".join(json.dumps(e) + "\n" for e in SCRIPT))
    sim_log = tmp_path / "sim.jsonl"
    assert main(["sim", "--script", str(script), "--headless", "--log", str(sim_log)]) == 0
    capsys.readouterr()
    sim_state, _ = resume_state(sim_log)
    assert sim_state.seats[1].escaped == 1
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg), "--input", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        logs = wait_for_logged_lines(tmp_path / "logs", len(SCRIPT), 20)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    serve_state, _ = resume_state(logs[0])
    assert serve_state.seats == sim_state.seats, (logs[0].read_text(), sim_log.read_text())
    assert serve_state.seats == sim_state.seats and serve_state.phase == sim_state.phase

    def kinds(p: Path) -> list[tuple[str, str | None]]:
        lines = map(json.loads, p.read_text().splitlines())
        return sorted((x["type"], x.get("event", {}).get("type")) for x in lines)

    assert kinds(logs[0]) == kinds(sim_log)
