"""The page's API plays the other games: each game's summary at the top level of
/api/state, its legal moves (abstract: from/to with the legal destinations; Big Score:
choose/close/reveal/trade/pass; solitaire: marks from legal_marks and the helper's
suggestion with its reason), its short commands, and a whole game by touch."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from companion.gamelog import GameLog, read_log
from companion.games import registry
from companion.games.vault_solitaire import engine as sol
from companion.loop import Referee, TableLoop
from companion.web.pairing import Pairing
from companion.web.server import CSRF_HEADER, PageServer

H = {CSRF_HEADER: "1"}
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def events(script):
    return [ev for _, ev in read_log(SCRIPTS / script).events]


@asynccontextmanager
async def page(tmp_path):
    log = GameLog(tmp_path / "game-1.jsonl", fsync=False)
    referee = Referee(log=log)
    table = TableLoop(referee, tick_seconds=0.05)
    await table.start()
    server = PageServer(table, pairing=Pairing(pin="4321"), log_dir=tmp_path)
    client = TestClient(TestServer(server.app))
    await client.start_server()
    r = await client.post("/api/pair", json={"pin": "4321"}, headers=H)
    assert r.status == 200
    try:
        yield server, client
    finally:
        await client.close()
        await table.stop()
        log.close()


async def send(client, event, status=200):
    r = await client.post("/api/events", json=event, headers=H)
    body = await r.json()
    assert r.status == status, body
    return body


async def state(client):
    return await (await client.get("/api/state")).json()


def test_a_fresh_box_offers_the_other_games_and_starts_one(tmp_path):
    async def go():
        async with page(tmp_path) as (_, client):
            s = await state(client)
            offered = {g["game"]: g["players"] for g in s["other_games"]}
            assert offered == {"big-score": [1, 6], "vault-solitaire": [1, 1],
                               "vault-abstract": [2, 2]}
            body = await send(client, {"command": "play vault-abstract Ann Bob"})
            assert body["state"]["game"] == "vault-abstract"
            assert "other_games" not in body["state"]

    asyncio.run(go())


def test_abstract_by_taps_with_legal_destinations_and_a_reason_for_an_illegal_move(tmp_path):
    async def go():
        async with page(tmp_path) as (_, client):
            evs = events("vault-abstract.jsonl")
            s = (await send(client, evs[0]))["state"]
            assert s["game"] == "vault-abstract" and s["to_move"] == 0
            assert s["pawns"] == [10, 10] and s["details"]["last_move"] is None
            moves = s["moves"]["move"]
            assert sorted(moves["c1"]) == ["b2", "c2", "d2"]  # walks only: no friend ahead
            assert set(moves) == set(s["details"]["white"])
            body = await send(client, {"type": "move", "from": "c1", "to": "c5"}, 409)
            assert body["rejected"].startswith("move:")
            for ev in evs[1:]:
                s = (await send(client, ev))["state"]
            assert s["over"] is True and s["winner"] == 0 and s["moves"] == {"undo": True}
            # The summary whole under "summary": its played moves (top-level "moves" are
            # the legal ones, as on Vault Assault's page).
            assert len(s["summary"]["moves"]) == len(evs) - 1 and s["summary"]["over"] is True
            assert s["details"]["headline"] == "Vault (abstract): Wanda (White) wins (far rank)"
            assert any("Vault (abstract)" in line for line in s["status"])
            body = await send(client, {"type": "undo"})
            assert body["state"]["over"] is False and body["state"]["moves"]["move"]
            bot = await send(client, {"command": "bot 1"})
            # The companion moved for Black: one more move on the record.
            assert bot["accepted"] is True and bot["state"]["history"][0]["type"] == "move"
            assert bot["state"]["events_applied"] == len(evs)

    asyncio.run(go())


def test_big_score_choose_reveal_trade_and_payouts_by_touch(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            evs = events("big-score-3p.jsonl")
            s = (await send(client, evs[0]))["state"]
            assert s["game"] == "big-score" and s["moves"]["choose"] == [0, 1, 2]
            assert s["moves"]["close_choices"] is True
            s = (await send(client, {"type": "choose", "seat": 0, "flee": True}))["state"]
            # Who has chosen, never what: not in the moves, details, history or summary.
            assert s["details"]["chosen"] == [0] and s["moves"]["choose"] == [1, 2]
            assert s["history"][0]["event"] == {"type": "choose", "seat": 0}
            assert s["history"][0]["text"] == "Ann has chosen"
            assert s["players"][0]["status"] == "in" and "flee" not in str(s["players"])
            await send(client, {"type": "undo"})
            for ev in evs[1:]:
                if ev["type"] == "trade":
                    t = (await state(client))["moves"]["trade"]
                    assert t["seat"] == ev["seat"] and ev["take"] in t["take"]
                if ev["type"] == "reveal":
                    r = (await state(client))["moves"]["reveal"]
                    assert r["seats"] == [i for i, tok in enumerate(ev["tokens"])
                                          if tok is not None] or "driver" in ev
                s = (await send(client, ev))["state"]
            assert s["over"] is True and s["winners"] == [0]
            assert [p["total"] for p in s["players"]] == [830000, 660000, 670000]
            assert s["players"][0]["breakdown"]["hard_drives"] == 200000

    asyncio.run(go())


def test_solitaire_marks_from_legal_marks_and_the_helpers_suggestion(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            s = (await send(client, {"command": "play vault-solitaire Sam"}))["state"]
            assert s["moves"]["roll"] is True and "mark" not in s["moves"]
            s = (await send(client, {"command": "roll 5 6 4 6 5"}))["state"]
            marks = s["moves"]["mark"]
            assert marks == sol.legal_marks(server.referee.state)
            assert {m["cell"] for m in marks} == set(s["details"]["markable"])
            tip = s["moves"]["suggestion"]
            assert tip["reason"] and tip["events"] and tip["events"][0]["type"] in (
                "mark", "power", "reroll", "pass")
            first = tip["events"][0]
            if first["type"] == "mark":
                assert first in marks
            s = (await send(client, marks[0]))["state"]
            assert marks[0]["cell"] in s["marked"]
            s = (await send(client, {"type": "pass"}))["state"]
            assert s["locks_closed"] == "A" and s["moves"]["roll"] is True

    asyncio.run(go())


def test_earlier_games_of_other_kinds_are_listed_with_their_summary(tmp_path):
    done = tmp_path / "game-0.jsonl"
    with GameLog(done, fsync=False) as log:
        for ev in events("vault-abstract.jsonl"):
            log.append(ev)

    async def go():
        async with page(tmp_path) as (_, client):
            s = await state(client)
            assert [g["log"] for g in s["games"]] == ["game-0.jsonl"]
            assert s["games"][0]["game"] == "vault-abstract" and s["games"][0]["winner"] == 0

    asyncio.run(go())


def test_registry_page_moves_are_all_accepted():
    """Every move each game's page offers at the start is accepted by its engine."""
    for script in ("big-score-3p.jsonl", "vault-abstract.jsonl"):
        s = registry.judge(registry.default().new_state(), events(script)[0]).state
        moves = registry.of_state(s).page_moves(s)
        for frm, tos in moves.get("move", {}).items():
            for to in tos:
                assert registry.judge(s, {"type": "move", "from": frm, "to": to}).rejection is None
        for seat in moves.get("choose", []):
            ev = {"type": "choose", "seat": seat, "flee": False}
            assert registry.judge(s, ev).rejection is None


def test_solitaire_offers_the_cameras_roll_to_take(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            await send(client, {"command": "play vault-solitaire Sam"})
            server.table.post({"type": "seen", "dice": [3, 5, 5, 6, 1]})  # as the camera
            for _ in range(100):
                s = await state(client)
                if "take" in s["moves"]:
                    break
                await asyncio.sleep(0.02)
            assert s["moves"]["take"] == {"type": "roll", "dice": [3, 5, 5, 6, 1]}
            s = (await send(client, s["moves"]["take"]))["state"]
            assert "take" not in s["moves"] and s["details"]["dice"] == [3, 5, 5, 6, 1]

    asyncio.run(go())


def test_solitaire_offers_one_tap_to_take_back_the_roll_the_camera_entered(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            await send(client, {"command": "play vault-solitaire Sam"})
            # as the camera, claims on: five dice read surely are the roll itself
            server.table.post({"type": "roll", "dice": [3, 5, 5, 6, 1], "by": "camera"})
            for _ in range(100):
                s = await state(client)
                if "take_back" in s["moves"]:
                    break
                await asyncio.sleep(0.02)
            assert s["moves"]["take_back"] == {"dice": [3, 5, 5, 6, 1],
                                               "text": "Camera entered 3 5 5 6 1"}
            assert s["details"]["dice"] == [3, 5, 5, 6, 1]
            assert "entered by the camera" in s["undo_takes_back"]
            s = (await send(client, {"type": "undo"}))["state"]  # the button's event
            assert s["phase"] == "roll" and "take_back" not in s["moves"]
            assert s["moves"]["roll"] is True and s["details"]["dice"] == []

    asyncio.run(go())


def test_the_pages_big_score_numbers_are_the_rules():
    """games.js checks a Big Score setup before it is sent, with the rules' numbers:
    they must be definition.py's."""
    import re

    from companion.games.big_score import definition as d

    js = (Path(__file__).resolve().parents[2] / "companion" / "web" / "static" /
          "games.js").read_text()
    block = js[js.index("const BIG = {"):js.index("};", js.index("const BIG = {"))]

    def pairs(name):
        inner = re.search(name + r": \{([^}]*)\}", block).group(1)
        return {k: (int(v) if v.isdigit() else v.strip('"'))
                for k, v in re.findall(r'(\w+): ("[^"]*"|\d+)', inner)}

    def number(name):
        return int(re.search(name + r": (\d+)", block).group(1))

    assert pairs("vault") == d.VAULT_TOKENS
    assert pairs("supply") == d.ACT1_SUPPLY
    assert pairs("experts") == d.EXPERT_NAMES
    assert number("floorSize") == d.FLOOR_SIZE and number("startCash") == d.START_CASH
    assert number("cashToken") == d.CASH_TOKEN
    assert number("maxSameExpert") == d.MAX_SAME_EXPERT
