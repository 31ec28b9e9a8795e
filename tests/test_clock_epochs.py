"""Clocks across reboots: live stamps carry their boot's epoch, the log records the
change, stamps of two epochs are never compared. A race resumed after a power cut goes
on; a script's own stamps are one epoch of their own wherever it is played."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from game_builders import ROW5, at_race, new_game, stages
from log_lines import wait_for_logged_lines

import companion.appliance as appliance_mod
from companion.appliance import Appliance
from companion.cli import main
from companion.clocks import boot_clock
from companion.config import parse_config
from companion.gamelog import GameLog
from companion.games.vault_assault.engine import apply, new_state
from companion.hardware.pico_sim import SimPico, forget_devices
from companion.loop import ResumeReport, resume_state

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


# A log written live by a companion from before clock epochs: stamps of a boot long
# gone (Go! 10 days into its uptime), no "clock" on any line, no checksums.
OLD_GO_NS = 900_000_000_000_000
OLD_LOG = [
    {**new_game(2), "ts_ns": OLD_GO_NS - 3_000_000_000},
    {"type": "heist_hide", "row": ROW5, "ts_ns": OLD_GO_NS - 2_000_000_000},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}],
     "ts_ns": OLD_GO_NS - 1_000_000_000},
    {"type": "assault_start", "ts_ns": OLD_GO_NS},
]
BOOT_B = "boot:bbbbbbbbbbbb"


def write_old_log(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "game-20250101-120000.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in OLD_LOG))
    return path


def press_during_start(monkeypatch, after: str, press) -> None:
    """Press while `Appliance.start` is still setting up (after its step `after`)."""
    step = getattr(Appliance, after)

    def wrapped(self, *args, **kwargs):
        out = step(self, *args, **kwargs)
        press(self)
        return out

    monkeypatch.setattr(Appliance, after, wrapped)


@pytest.mark.parametrize(
    "path", ["button_while_starting", "pico_while_starting", "button", "typed_digit", "page"]
)
def test_an_old_logs_race_goes_on_whichever_way_the_seat_presses(tmp_path, monkeypatch, path):
    """Resumed in this boot, the old log's unmarked Go! is never compared with a live
    press: Bob's press is an escape, not a false start "10 days before Go!"."""
    monkeypatch.setattr(appliance_mod, "boot_clock", lambda: BOOT_B)
    log = write_old_log(tmp_path / "logs")
    text = ('[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[sound]\nenabled = false\n'
            f'[log]\ndir = "{tmp_path / "logs"}"\n')
    if path == "button_while_starting":  # a seat button's edge, the box still starting
        press_during_start(monkeypatch, "_start_lamps",
                           lambda app: app.buzzers.on_press(1, time.monotonic_ns()))
    if path == "pico_while_starting":  # the Pico's edge, the box still starting
        name = uuid.uuid4().hex[:8]
        dev = SimPico.create(name, lockout_us=0)
        text += f'[pico]\nenabled = true\nport = "picosim://{name}"\n'

        def pico_press(app):
            assert app.pico.wait_synced(5)
            assert dev.press(1) is not None
            deadline = time.monotonic() + 5
            while app.pico.stats.presses < 1 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert app.pico.stats.presses == 1  # handed to the buzzers, still in start()

        press_during_start(monkeypatch, "_start_pico", pico_press)
    typed = tmp_path / "typed.txt"
    typed.write_text("2\n")  # seat 2 as people count: the event's seat 1

    async def resume():
        app = Appliance(parse_config(text), echo=False)
        await app.start()
        assert app.log_path == log and app.referee.state.phase == "assault"
        if path == "button":
            app.buzzers.on_press(1, time.monotonic_ns())
        elif path == "typed_digit":
            await app.read_input(str(typed))
        elif path == "page":
            result = await app.table.submit({"type": "buzz", "seat": 1})
            assert result.rejection is None
        await asyncio.sleep(0.05)
        app.buzzers.flush()
        await app.table.drain()
        await app.close()
        return app

    try:
        app = asyncio.run(resume())
    finally:
        forget_devices()
    assert app.referee.rejections == 0, list(app.referee.messages)
    assert app.referee.state.seats[1].escaped == 1
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["clock"] for x in lines if x["type"] == "clock"] == [BOOT_B]
    assert lines[-1]["type"] == "buzz" and lines[-1]["clock"] == BOOT_B
    assert resume_state(log)[0] == app.referee.state


def test_a_clock_note_lets_go_of_a_go_of_another_epoch():
    """After the note, Go!'s stamp of another (or an unknown) epoch is compared with no
    press at all, a script's own included; Go! of the note's own epoch still is."""
    from dataclasses import replace

    race = stages(at_race(2), 1)
    for go_clock in (None, "boot:aaaaaaaaaaaa"):
        s = replace(race, turn=replace(race.turn, go_ns=OLD_GO_NS, go_clock=go_clock))
        early = {"type": "buzz", "seat": 1, "ts_ns": 5}  # Go!'s own epoch: compared
        if go_clock is not None:
            early["clock"] = go_clock
        assert "false start" in (apply(s, early).rejection or "")
        noted = apply(s, {"type": "clock", "clock": BOOT_B, "wall_ns": 1})
        assert noted.rejection is None and noted.outputs == ()
        assert noted.state.turn.go_ns is None and noted.state.turn.stages == 1
        assert noted.state.events_applied == s.events_applied  # a note, not an event
        for clock in (None, go_clock, BOOT_B):  # no press of any epoch is compared now
            press = {"type": "buzz", "seat": 1, "ts_ns": 5}
            if clock is not None:
                press["clock"] = clock
            assert apply(noted.state, press).rejection is None
        undone = apply(noted.state, {"type": "undo"}).state
        assert undone.turn.stages == 0  # undo takes back the stage, as before the note
    s = replace(race, turn=replace(race.turn, go_ns=OLD_GO_NS, go_clock=BOOT_B))
    same = apply(s, {"type": "clock", "clock": BOOT_B, "wall_ns": 1})
    assert same.state is s  # the same epoch: Go! still compares
    assert "false start" in apply(same.state, {"type": "buzz", "seat": 1, "ts_ns": 5,
                                               "clock": BOOT_B}).rejection
    heist = new_game(2)
    before_race = apply(apply(new_state(), heist).state, {"type": "clock", "clock": BOOT_B})
    assert before_race.rejection is None and before_race.state.phase == "heist_hide"


def test_resuming_an_old_log_in_another_boot_replays_to_the_same_race(tmp_path):
    """The note the box appends, and the game after it, are what a replay gives: a press
    of any epoch after it is an escape, live and in the replay alike."""
    log = write_old_log(tmp_path)
    state, report = resume_state(log)
    assert report.last_clock is None and state.turn.go_ns == OLD_GO_NS
    after, note = report.clock_change(state, BOOT_B)
    assert note is not None and note["type"] == "clock" and note["clock"] == BOOT_B
    assert after.phase == "assault" and after.turn.go_ns is None
    glog = GameLog(log)
    glog.append(note)
    press = {"type": "buzz", "seat": 1, "ts_ns": 2_000_000}  # a script's stamp, no clock
    live = apply(after, press)
    assert live.rejection is None
    glog.append(press)
    glog.close()
    replayed, again = resume_state(log)
    assert again.problems == [] and replayed == live.state
    assert replayed.seats[1].escaped == 1
    assert again.clock_change(replayed, BOOT_B) == (replayed, None)  # already on B
    fresh = ResumeReport()
    assert fresh.clock_change(new_state(), BOOT_B) == (new_state(), None)  # nothing yet


def test_the_box_takes_the_clock_note_as_the_replay_does(tmp_path, monkeypatch):
    """Resumed mid-race in another boot, the live game is the log's replay, note and all."""
    monkeypatch.setattr(appliance_mod, "boot_clock", lambda: BOOT_B)
    log = write_old_log(tmp_path / "logs")

    async def resume():
        app = Appliance(config(tmp_path), echo=False)
        await app.start()
        await app.close()
        return app

    app = asyncio.run(resume())
    assert app.referee.state.phase == "assault" and app.referee.state.turn.go_ns is None
    assert resume_state(log)[0] == app.referee.state
