"""The house's commands work for every game, before it, during it and after it ends:
`help` answers with the games, `new ...` starts the next game (the one just played,
or Vault Assault when the words fit only it), `play GAME NAME...` starts any game,
`undo` takes either back. The same lines through the sim's command path, `serve
--input` and the page's command box: each of the four games is played to its end, then
the commands, then the next game's script."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from log_lines import unchained

from companion.events import is_comment
from companion.gamelog import GameLog
from companion.games import house, registry
from companion.interactive import new_log_after_game_over, run_interactive
from companion.loop import Referee, TableLoop
from companion.web.pairing import Pairing
from companion.web.server import CSRF_HEADER, PageServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "scripts"
H = {CSRF_HEADER: "1"}

# Vault Assault in short commands (presses as seat digits, stamped as they arrive, as
# at the table; seats, positions and cars counted from 1), played to its end with
# every seat tallied.
VAULT = """\
new 3 Ann Bob Cat
hide A P D A A
flip 2:3 3:1
go
stage 1
empty
1
impound 2
impound 3
tally 1 30k
tally 2 10k
tally 3 5k"""


def script(name: str) -> list[str]:
    return [x for x in (SCRIPTS / name).read_text().splitlines() if not is_comment(x)]


# (a game's lines, played to its end; then `new ...`; the game that starts)
CHAIN = [
    (VAULT.splitlines(), "new 2 Dan Eve", ("vault-assault", ["Dan", "Eve"])),
    (script("big-score-3p.jsonl"), "new Ann Bob floor=artifact,silver,cash20,diamond,key",
     ("big-score", ["Ann", "Bob"])),
    (script("vault-solitaire.jsonl"), "new 2 Ann Bob", ("vault-assault", ["Ann", "Bob"])),
    (script("vault-abstract.jsonl"), "new Ann Bob", ("vault-abstract", ["Ann", "Bob"])),
]
AFTER = ["help", None, "undo", "play vault-abstract Ann Bob", "undo"]  # None: the `new`


def chain_lines() -> list[str]:
    lines: list[str] = []
    for played, new, _ in CHAIN:
        lines += played
        lines += [new if x is None else x for x in AFTER]
    return lines


def expected_new_games() -> list[tuple[str, list[str]]]:
    """The new_game events accepted along the chain, in order: (game, names)."""
    out = []
    for played, _, started in CHAIN:
        first = registry.parse_command(played[0], registry.default().new_state())
        out += [(first["game"], first["names"]), started, ("vault-abstract", ["Ann", "Bob"])]
    return out


def new_games_in(events) -> list[tuple[str, list[str]]]:
    return [(ev.get("game"), ev.get("names")) for ev in events if ev.get("type") == "new_game"]


def test_help_new_play_and_undo_read_the_same_for_every_game():
    for game in registry.games():
        state = game.new_state()
        text = house.command("help", game, state)
        assert isinstance(text, house.Help) and "play GAME WORDS..." in text
        assert all(g.id in text for g in registry.games())
        own = set(game.help.splitlines())
        assert all(len(line) <= 80 for line in text.splitlines() if line not in own)
        assert house.command("undo", game, state) == {"type": "undo"}
        assert house.command("play vault-abstract Ann Bob", game, state)["game"] == (
            "vault-abstract")
    solitaire = registry.get("vault-solitaire")
    assert house.command("new Sam", solitaire, None)["game"] == "vault-solitaire"
    assert house.command("new 1 Sam", solitaire, None)["names"] == ["Sam"]
    assert house.command("new 2 Ann Bob", solitaire, None) == {  # as on a fresh box
        "type": "new_game", "game": "vault-assault", "players": 2, "names": ["Ann", "Bob"],
        "first_cop": 0}
    with pytest.raises(ValueError, match=re.escape("usage: play vault-assault|big-score|")):
        house.command("play chess Ann", solitaire, None)
    with pytest.raises(ValueError, match="^play vault-solitaire: give 1 names$"):
        house.command("play vault-solitaire Ann Bob", solitaire, None)


def test_the_sims_command_path_starts_the_next_game_after_every_game(
        tmp_path, monkeypatch, capsys):
    r, w = os.pipe()
    body = ("\n".join([*chain_lines(), "quit"]) + "\n").encode()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", os.fdopen(r))
    accepted: list[dict] = []
    log = GameLog(tmp_path / "game-0.jsonl", fsync=False)
    ref = Referee(log=log)
    ref.listeners.append(lambda ev, res: accepted.append(ev) if not res.rejection else None)

    async def run():
        writer = asyncio.get_running_loop().run_in_executor(None, _write_all, w, body)
        code = await run_interactive(ref)
        await writer
        return code

    assert asyncio.run(run()) == 0
    if ref.log is not log:
        ref.log.close()
    log.close()
    out = capsys.readouterr().out
    assert new_games_in(accepted) == expected_new_games()
    assert sum(1 for ev in accepted if ev.get("type") == "undo") == 2 * len(CHAIN)
    # help, after every game (on the sim's screen a page at a time, under the LED)
    assert out.count("-- help, ") >= len(CHAIN)
    assert "unknown command" not in out and not any(
        "unknown command" in m for m in ref.messages)
    # every game after a finished one went into a log of its own
    assert len(list(tmp_path.glob("game-*.jsonl"))) == 1 + len(CHAIN)


def _write_all(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


def test_serve_input_starts_the_next_game_after_every_game(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n')
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(chain_lines()) + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg), "--input", str(inp)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    want = expected_new_games()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(new_games_in(_logged(tmp_path / "logs"))) >= len(want):
                time.sleep(0.5)  # the last lines (an undo) a moment longer
                break
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    events = _logged(tmp_path / "logs")
    assert new_games_in(events) == want
    assert sum(1 for ev in events if ev.get("type") == "undo") == 2 * len(CHAIN)
    assert out.count("help: play GAME WORDS...") == len(CHAIN)
    assert "unknown command" not in out + err
    assert len(list((tmp_path / "logs").glob("game-*.jsonl"))) == 1 + len(CHAIN)


def _logged(log_dir: Path) -> list[dict]:
    """Every accepted line of every log in the folder, the logs in the order made."""
    def made(path: Path) -> tuple[str, str, int]:  # game-DATE-TIME[-N]
        _, date, clock, *n = path.stem.split("-")
        return date, clock, int(n[0]) if n else 1

    lines: list[dict] = []
    for path in sorted(log_dir.glob("game-*.jsonl"), key=made):
        lines += [unchained(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if x.get("type") != "rejected"]


def test_the_pages_command_box_starts_the_next_game_after_every_game(tmp_path):
    async def go():
        log = GameLog(tmp_path / "game-0.jsonl", fsync=False)
        referee = Referee(log=log)
        accepted: list[dict] = []
        referee.listeners.append(
            lambda ev, res: accepted.append(ev) if not res.rejection else None)
        table = TableLoop(referee, tick_seconds=0.05)
        table.before_submit.append(lambda ev: new_log_after_game_over(referee, ev))
        await table.start()
        server = PageServer(table, pairing=Pairing(pin="4321"), log_dir=tmp_path,
                            new_game_after_over=True)
        client = TestClient(TestServer(server.app))
        await client.start_server()
        helped = 0
        try:
            assert (await client.post("/api/pair", json={"pin": "4321"}, headers=H)).status == 200
            for line in chain_lines():
                body = json.loads(line) if line.startswith("{") else {"command": line}
                r = await client.post("/api/events", json=body, headers=H)
                answer = await r.json()
                assert r.status in (200, 409), answer
                if line == "help":
                    assert r.status == 200
                    assert any(x.startswith("play GAME WORDS...") for x in answer["help"])
                    helped += 1
                if r.status == 200 and referee.game.finished(referee.state):
                    # a new game may be started now: the page lists every other game
                    assert {g["game"] for g in answer["state"]["other_games"]} == (
                        set(registry.MODULES) - {referee.game.id})
        finally:
            await client.close()
            await table.stop()
            if referee.log is not log:
                referee.log.close()
            log.close()
        return accepted, helped

    accepted, helped = asyncio.run(go())
    assert helped == len(CHAIN)
    assert new_games_in(accepted) == expected_new_games()
    assert sum(1 for ev in accepted if ev.get("type") == "undo") == 2 * len(CHAIN)
