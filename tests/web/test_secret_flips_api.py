"""A 3-player Vault Assault heist through the page's HTTP API (issue 65): "A 3-player
game is not a team game, so Robbers hide their chosen dice from other Robbers." Each
robber's phone flips for its own seat only, sees its own dice only, and nothing any
other device is sent (the state, the history, the WebSocket, the LED) says which dice a
robber flipped; the table's controls still play the heist alone. And a page whose
session the box forgot is told so at once."""

from __future__ import annotations

import asyncio
import json

import aiohttp
from test_big_score_private import table

from companion.gamelog import read_log

NEW = {"type": "new_game", "game": "vault-assault", "players": 3,
       "names": ["Ann", "Bob", "Cat"], "first_cop": 0}
# Ann the cops; the diamond at position 4 (0-based 3), the trap at 2 (0-based 1).
HIDE = {"type": "heist_hide", "row": ["alarm", "dye_pack", "alarm", "diamond", "alarm"]}


def secret_free(text: str) -> bool:
    """No trace of a flipped position in what a device was sent."""
    return '"position"' not in text and '"revealed": {"' not in text


def test_each_robber_flips_on_their_phone_and_no_one_else_sees_which(tmp_path):
    async def go():
        async with table(tmp_path) as (server, device):
            tablet, bob, cat = await device(), await device(), await device()
            board = await device(paired=False)
            for event in (NEW, HIDE):
                assert (await tablet.post("/api/events", event))[0] == 200
            assert (await bob.post("/api/seat", {"seat": 1}))[0] == 200
            assert (await cat.post("/api/seat", {"seat": 2}))[0] == 200
            ws = await board.http.ws_connect(server.url + "api/ws")
            # Bob flips wire 2 (the trap) on his phone; Cat may not flip for Bob.
            status, body = await cat.post("/api/events", {"type": "heist_flip", "seat": 1,
                                                          "position": 0})
            assert status == 403 and "Cat's (seat 3): it may not choose for Bob (seat 2)" in (
                body["error"])
            status, body = await bob.post("/api/events", {"type": "heist_flip", "seat": 1,
                                                          "position": 1})
            assert status == 200, body
            assert secret_free(json.dumps(body["state"]))
            assert body["state"]["turn"]["heist"]["chosen"] == [1]
            mine = await bob.state()
            assert mine["my_secret"]["heist"]["choice"] == 1  # his own, on his phone
            theirs = await cat.state()
            assert theirs["my_secret"]["heist"]["flipped"] == {}
            assert theirs["my_secret"]["heist"]["heist_flip"]["positions"] == [0, 1, 2, 3, 4]
            # Cat flips wire 1 (an alarm): the attempt is judged, Bob compared first.
            status, body = await cat.post("/api/events", {"type": "heist_flip", "seat": 2,
                                                          "position": 0})
            assert status == 200
            state = await board.state()
            text = json.dumps(state)
            assert secret_free(text), text
            heist = state["turn"]["heist"]
            assert heist["flips"] == {"1": 1, "2": 1} and heist["in_heist"] == [2]
            said = " ".join(state["messages"])
            assert "Bob (seat 2) hit the trap" in said and "Cat (seat 3) tripped an alarm" in said
            assert state["my_secret"] is None  # the board is no one's
            # Cat's phone: her own die; Bob's: his; the cops' phone (the table's
            # controls, claiming nobody): both, with what each may flip next.
            cat_secret = (await cat.state())["my_secret"]["heist"]
            assert cat_secret["flipped"] == {"0": "alarm"}
            assert (await bob.state())["my_secret"]["heist"]["flipped"] == {"1": "dye_pack"}
            cops = (await tablet.state())["my_secret"]["heist"]
            assert cops["flipped"] == {"1": {"1": "dye_pack"}, "2": {"0": "alarm"}}
            assert cops["heist_attempt"]["seats"]["2"]["positions"] == [1, 2, 3, 4]
            # Every WebSocket message the unpaired board was sent says nothing either.
            seen = []
            end = asyncio.get_running_loop().time() + 1.0
            while asyncio.get_running_loop().time() < end:  # (the LED blinks: it goes on)
                try:
                    msg = await ws.receive(timeout=0.3)
                except TimeoutError:
                    break
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                seen.append(msg.data)
            assert seen and all(secret_free(m) for m in seen)
            await ws.close()
            # The table's controls finish the heist alone (the buttons-only table).
            status, body = await tablet.post("/api/events", {"type": "heist_attempt", "flips": [
                {"seat": 2, "position": 3}]})
            assert status == 200 and body["state"]["phase"] == "heist_over"
            assert body["state"]["turn"]["heist"]["row"] == HIDE["row"]  # cops show theirs
            assert secret_free(json.dumps(body["state"]["history"]))
            return server.referee.log.path

    path = asyncio.run(go())
    logged = [e for _, e in read_log(path).events]
    # The log keeps everything (the referee's record), in the event format.
    assert {"type": "heist_flip", "seat": 1, "position": 1} in [
        {k: v for k, v in e.items() if k != "ts_ns"} for e in logged]


def test_a_page_whose_session_the_box_forgot_is_told_before_a_tap(tmp_path):
    async def go():
        async with table(tmp_path) as (server, device):
            phone = await device()
            ws = await phone.http.ws_connect(server.url + "api/ws")
            me = None
            while me is None:
                msg = json.loads((await ws.receive(timeout=2)).data)
                if msg["kind"] == "me":
                    me = msg
            assert me["paired"] is True and me["forgotten"] is False
            # The box forgets every session (as after a restart, or "unpair every device").
            server.pairing.sessions.clear()
            server.referee.refresh()
            told = None
            while told is None:
                msg = json.loads((await ws.receive(timeout=2)).data)
                if msg["kind"] == "me":
                    told = msg
            await ws.close()
            state = await phone.state()
            status, body = await phone.post("/api/events", NEW)
            fresh = await device(paired=False)
            status_fresh, body_fresh = await fresh.post("/api/events", NEW)
            return told, state, (status, body), (status_fresh, body_fresh)

    told, state, (status, body), (status_fresh, body_fresh) = asyncio.run(go())
    assert told["paired"] is False and told["forgotten"] is True
    assert state["paired"] is False and state["forgotten"] is True
    assert status == 401 and body["error"].startswith(
        "this phone is no longer paired (the box restarted or every device was unpaired)")
    assert status_fresh == 401 and body_fresh["error"].startswith("not paired: enter the PIN")
