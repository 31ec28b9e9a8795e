"""A fifth game plugs in with no edit outside its own folder (tests/games/toy_game) and
one registry line: Coin Race is played through the Referee (its game held, not looked
up again), replayed and resumed from its log, played with the sim's commands and
keys and through the page's API, and the house asks it, not which game is on, for
its lamps, its callouts, its camera and its screens."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp.test_utils import TestClient, TestServer

from companion.appliance import Appliance, game_finished
from companion.camera import CameraInput
from companion.cli import main
from companion.display.terminal import TerminalDisplay
from companion.gamelog import GameLog
from companion.games import house, registry
from companion.interactive import run_interactive, why_no_press
from companion.loop import Referee, TableLoop, resume_state
from companion.speech.callouts import attach_speaker
from companion.speech.player import RecordingSpeaker
from companion.vision.types import DieReading, FrameReading
from companion.web.pairing import Pairing
from companion.web.server import CSRF_HEADER, PageServer

TOY = "coin-race"
H = {CSRF_HEADER: "1"}
NEW = {"type": "new_game", "game": TOY, "players": 2, "names": ["Ann", "Bob"]}
# Ann 3, Bob 1, Ann 6: Ann wins
STEPS = [{"type": "step", "seat": 0, "n": 3}, {"type": "step", "seat": 1, "n": 1},
         {"type": "step", "seat": 0, "n": 3}]
WON = {"game": TOY, "over": True, "names": ["Ann", "Bob"], "pos": [6, 1], "winner": 0}


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.setitem(registry.MODULES, TOY, "toy_game.table")  # the one registry line
    return registry.get(TOY)


def test_the_referee_plays_it_holding_its_game(toy, monkeypatch):
    ref = Referee()
    shown = TerminalDisplay(out=io.StringIO(), clear=False)
    ref.displays.append(shown)
    ref.listeners.append(shown.on_event)

    def no_lookups(state):
        raise AssertionError("the referee looked its game up again")

    monkeypatch.setattr(registry, "of_state", no_lookups)
    assert ref.submit(NEW).rejection is None and ref.game is toy
    assert ref.submit({"type": "step", "seat": 1, "n": 1}).rejection == "step: it is Ann's turn"
    for ev in STEPS:
        assert ref.submit(ev).rejection is None
    assert toy.summary(ref.state) == WON and toy.finished(ref.state)
    assert ref.view().frame == toy.render(ref.state, ref.flash, ref.tick)
    assert list(shown.log)[-1] == "seat 0 steps 3"  # the game's own line in words
    assert ref.submit({"type": "undo"}).rejection is None and not toy.over(ref.state)
    assert ref.game is toy and ref.internal_errors == 0


def test_it_replays_and_resumes_from_its_log(tmp_path, capsys):
    path = tmp_path / "game.jsonl"
    with GameLog(path, fsync=False) as log:
        ref = Referee(log=log)
        for ev in [NEW, *STEPS]:
            assert ref.submit(ev).rejection is None
    assert main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == WON
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out.startswith("Coin Race to 6: Ann at 6, Bob at 1")
    state, report = resume_state(path)
    assert report.game.id == TOY and state == ref.state and not report.problems
    assert game_finished(state, report.game)
    assert Referee(state=state, game=report.game).game.over_line(state) == (
        "this race is over: Ann won")


def test_the_sims_commands_and_keys_play_it_and_start_the_next_game(
        tmp_path, monkeypatch, capsys):
    r, w = os.pipe()
    lines = ["play coin-race Ann Bob", "help", "step 3", "2", "6", "step 3",
             "play vault-abstract Wanda Boris", "quit"]
    os.write(w, ("\n".join(lines) + "\n").encode())
    os.close(w)
    monkeypatch.setattr(sys, "stdin", os.fdopen(r))
    log = GameLog(tmp_path / "game-0.jsonl", fsync=False)
    ref = Referee(log=log)
    said: list[str] = []
    ref.listeners.append(lambda ev, res: said.append(res.rejection or ev["type"]))
    assert asyncio.run(run_interactive(ref)) == 0
    ref.log.close()
    log.close()
    out = capsys.readouterr().out
    # the race (key 2, the second seat's button, stepped Bob by 1), won, then the next game
    assert said == ["new_game", "step", "step", "step", "new_game"], said
    assert ref.game.id == "vault-abstract"
    assert "step N                       the player to move steps N" in out  # help
    assert "key 6: no seat 6 in this race" in out  # keys and seats counted from 1
    assert "Coin Race to 6: Ann at 3, Bob at 1" in out  # its status lines
    first = [json.loads(x) for x in (tmp_path / "game-0.jsonl").read_text().splitlines()]
    assert [x["type"] for x in first] == ["new_game", "step", "step", "step"]
    assert len(list(tmp_path.glob("game-*.jsonl"))) == 2  # the next game: a new log


def test_the_page_plays_it(tmp_path):
    async def go():
        log = GameLog(tmp_path / "game-1.jsonl", fsync=False)
        referee = Referee(log=log)
        table = TableLoop(referee, tick_seconds=0.05)
        await table.start()
        server = PageServer(table, pairing=Pairing(pin="4321"), log_dir=tmp_path,
                            new_game_after_over=True)
        client = TestClient(TestServer(server.app))
        await client.start_server()
        try:
            await client.post("/api/pair", json={"pin": "4321"}, headers=H)
            s = await (await client.get("/api/state")).json()
            assert {"game": TOY, "name": "Coin Race", "players": [2, 3]} in s["other_games"]
            r = await client.post("/api/events", json={"command": "play coin-race Ann Bob"},
                                  headers=H)
            s = (await r.json())["state"]
            assert r.status == 200 and s["game"] == TOY and s["title"] == "Coin Race"
            assert s["summary"]["names"] == ["Ann", "Bob"] and s["details"]["to_move"] == 0
            assert s["moves"]["step"] == {"seat": 0, "n": [1, 2, 3]}
            assert s["status"] == ["Coin Race to 6: Ann at 0, Bob at 0"]
            r = await client.post("/api/seat", json={"seat": 1}, headers=H)
            me = await r.json()
            assert (me["seat"], me["name"]) == (1, "Bob")  # its seat names
            r = await client.post("/api/events", json={"type": "roll"}, headers=H)
            assert r.status == 400  # not an event of this game
            r = await client.post("/api/events", json={"command": "help"}, headers=H)
            assert "step N                       the player to move steps N (1-3); a seat's " \
                   "button: 1" in (await r.json())["help"]
            for ev in STEPS:
                r = await client.post("/api/events", json=ev, headers=H)
                assert r.status == 200
            s = (await r.json())["state"]
            assert s["over"] and s["winner"] == 0 and "new_game" in s["moves"]
            last = s["history"][0]["event"]
            assert {k: v for k, v in last.items() if k not in ("ts_ns", "clock")} == STEPS[-1]
        finally:
            await client.close()
            await table.stop()
            log.close()

    asyncio.run(go())


def test_its_lamps_callouts_and_camera_are_its_own(toy):
    ref = Referee()
    speaker = RecordingSpeaker()
    attach_speaker(ref, speaker)
    ref.submit(NEW)
    ref.submit(STEPS[0])
    assert speaker.said == ["Ann steps to 3."]
    # the lamps: the seat to move lit, the bar at the leader's position
    lamps = SimpleNamespace(live=None, set_live=lambda s: setattr(lamps, "live", set(s)))
    bar = SimpleNamespace(count=None, show=lambda n: setattr(bar, "count", n))
    Appliance._update_lamps(SimpleNamespace(referee=ref, lamps=lamps, bar=bar), None, None)
    assert lamps.live == {1} and bar.count == 3
    assert why_no_press(ref.game, ref.state, 2, 4) == "key 3: no seat 3 in this race"
    assert why_no_press(ref.game, ref.state, 1, 4) is None
    # the camera: its reader says what changed and draws on its board
    cam = CameraInput(ref, "none")
    die = DieReading("pip", "4", 0.9, (0, 0, 10, 10), (5.0, 5.0))
    cam.on_reading(FrameReading(100, 100, (die, die), mat_found=True))
    cam.on_reading(FrameReading(100, 100, (die, die), mat_found=True))
    assert ref.camera_status == "Camera: 2 dice" and ref.camera_overlay == 2
    assert list(ref.messages).count("Camera: 2 coins") == 1  # said once
    view = ref.view()
    assert view.frame == toy.camera_render(ref.state, None, 0, 2) != toy.render(ref.state)
    assert view.frame.pixel(0, 6) and view.frame.pixel(1, 6) and not view.frame.pixel(2, 6)
    ref.submit({"type": "step", "seat": 1, "n": 3})
    ref.submit({"type": "step", "seat": 0, "n": 3})
    assert speaker.said[-2:] == ["Ann steps to 6.", "Ann wins!"]
    assert house.command("new Cy Di", ref.game, ref.state)["names"] == ["Cy", "Di"]
