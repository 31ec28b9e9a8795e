"""The Big Score's private choosing screen, through the page's HTTP API: a paired phone
says which player it is (POST /api/seat), chooses for that seat only, nothing any
device is sent reveals a choice before the window closes, then the reveal shows every
choice at once (page, LED, speaker), and the seconds left while choosing."""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from companion.display.bitfont import FONT_3X5, render_text
from companion.gamelog import GameLog, read_log
from companion.loop import Referee, TableLoop
from companion.speech.phrases import callouts
from companion.web.pairing import Pairing
from companion.web.server import CSRF_HEADER, PageServer
from companion.window_timer import WindowTimer

H = {CSRF_HEADER: "1"}
PIN = "4321"
START = {"type": "new_game", "game": "big-score", "players": 3, "names": ["Ann", "Bob", "Cat"],
         "floor": ["artifact", "silver", "cash20", "diamond", "key"], "first_player": 0}


def who(answer):
    """The seat and name of a `/api/seat` answer or a `me` message (the server may
    say more about the device)."""
    return {k: answer[k] for k in ("seat", "name")}


class Device:
    """One phone: its own cookie jar (its own session on the box)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def pair(self) -> Device:
        r = await self.http.post(self.url + "/api/pair", json={"pin": PIN}, headers=H)
        assert r.status == 200
        return self

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        r = await self.http.post(self.url + path, json=body, headers=H)
        return r.status, await r.json()

    async def state_text(self) -> str:
        r = await self.http.get(self.url + "/api/state")
        assert r.status == 200
        return await r.text()

    async def state(self) -> dict[str, Any]:
        return json.loads(await self.state_text())


@asynccontextmanager
async def table(tmp_path, seconds: float = 0.0, clock=None):
    log = GameLog(tmp_path / "game-1.jsonl", fsync=False)
    referee = Referee(log=log)
    loop = TableLoop(referee, tick_seconds=0.02)
    timer = WindowTimer(referee, loop.post, seconds, clock=clock)
    loop.tick_hooks.append(timer.check)
    await loop.start()
    server = PageServer(loop, pairing=Pairing(pin=PIN), log_dir=tmp_path, port=0,
                        window_timer=timer)
    await server.start()
    devices: list[Device] = []

    async def device(paired: bool = True) -> Device:
        d = Device(server.url)
        devices.append(d)
        return await d.pair() if paired else d

    try:
        yield server, device
    finally:
        for d in devices:
            await d.http.close()
        await server.stop()
        await loop.stop()
        log.close()


async def until(test, timeout: float = 5.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not test():
        assert asyncio.get_running_loop().time() < end, "the table did not get there"
        await asyncio.sleep(0.01)


def test_a_phone_claims_its_seat_and_chooses_only_for_it(tmp_path):
    async def go():
        async with table(tmp_path) as (server, device):
            ann, bob, table_page, stranger = (await device(), await device(), await device(),
                                              await device(paired=False))
            assert (await ann.post("/api/seat", {"seat": 0}))[0] == 409  # no game yet
            assert (await table_page.post("/api/events", START))[0] == 200
            status, me = await ann.post("/api/seat", {"seat": 0})
            assert status == 200 and who(me) == {"seat": 0, "name": "Ann"}
            assert (await bob.post("/api/seat", {"seat": 1}))[1]["name"] == "Bob"
            assert (await ann.state())["my_seat"] == 0
            assert (await table_page.state())["my_seat"] is None
            assert (await stranger.state())["my_seat"] is None
            # Bad claims: one line each, nothing claimed.
            status, body = await ann.post("/api/seat", {"seat": 3})
            assert status == 409 and body["error"].startswith("seat: this game's seats are ")
            assert body["error"].endswith(", got 3")  # (the server's line)
            assert (await ann.post("/api/seat", {"seat": "1"}))[0] == 400
            assert (await ann.post("/api/seat", {"seat": True}))[0] == 400
            assert (await stranger.post("/api/seat", {"seat": 2}))[0] == 401
            assert (await ann.state())["my_seat"] == 0

            applied = server.referee.state.events_applied
            status, body = await ann.post("/api/events", {"type": "choose", "seat": 1,
                                                          "flee": True})
            assert status == 403
            # (the server's line; how it numbers the seats is the server's)
            assert body["error"].startswith("choose: this phone is Ann's (seat ")
            assert "it may not choose for Bob (seat " in body["error"]
            status, body = await ann.post("/api/events", {"command": "rob 3"})  # seat 3: Cat
            assert status == 403 and "choose for Cat (seat " in body["error"]
            # Refused before the referee: nothing applied, nothing in the history.
            assert server.referee.state.events_applied == applied
            assert server.referee.rejections == 0

            assert (await ann.post("/api/events", {"type": "choose", "seat": 0,
                                                   "flee": True}))[0] == 200
            # The table's own control page (no seat claimed) still chooses for anyone.
            assert (await table_page.post("/api/events", {"command": "rob 2"}))[0] == 200
            # A phone may give its seat back (then it is a control page again).
            assert who((await bob.post("/api/seat", {"seat": None}))[1]) == {"seat": None,
                                                                             "name": None}
            assert (await bob.state())["my_seat"] is None

            # A new game: every phone says again who it is.
            assert (await bob.post("/api/seat", {"seat": 1}))[0] == 200
            for _ in range(3):  # back to before the new_game
                assert (await table_page.post("/api/events", {"type": "undo"}))[0] == 200
            assert server.referee.state.players == ()
            assert (await ann.state())["my_seat"] is None  # no game: no seat
            async with bob.http.ws_connect(server.url + "api/ws") as ws:
                seen = [json.loads((await ws.receive(timeout=5)).data) for _ in range(3)]
                assert seen[2]["kind"] == "me" and who(seen[2]) == {"seat": None, "name": None}
                assert (await table_page.post("/api/events", START))[0] == 200
                assert server.claims == {}
                assert (await bob.post("/api/seat", {"seat": 2}))[0] == 200
                while (msg := json.loads((await ws.receive(timeout=5)).data))["kind"] != "me":
                    pass
                assert who(msg) == {"seat": 2, "name": "Cat"}  # told as it changes
            assert (await ann.state())["my_seat"] is None
            assert (await bob.state())["my_seat"] == 2

    asyncio.run(go())


def same(texts: list[str]) -> list[str]:
    """The texts without the times the box stamped on the events (never the same twice)."""
    return [re.sub(r'"(ts_ns|clock)": ?("[^"]*"|\d+)', r'"\1": 0', t) for t in texts]


async def _everything_sent(server: PageServer, devices: list[Device]) -> list[str]:
    """Every payload a device can get now: /api/state for each device, and the
    WebSocket's first messages (state, LED, who this device is) for each."""
    out = [await d.state_text() for d in devices]
    for d in devices:
        async with d.http.ws_connect(server.url + "api/ws") as ws:
            for _ in range(3):
                out.append((await ws.receive(timeout=5)).data)
    for d in devices:
        r = await d.http.get(server.url + "board")
        out.append(await r.text())
    return out


def test_nothing_sent_to_any_device_tells_a_choice_before_the_reveal(tmp_path):
    """Two tables, the same taps but Ann flees at one and robs at the other: every
    payload any device gets (state, history, messages, LED, the WebSocket, the board,
    the sim's log pane, the spoken lines) is the same until the window closes."""

    async def play(folder, flee: bool) -> tuple[list[str], list[str], list[str], list[str]]:
        folder.mkdir()
        async with table(folder) as (server, device):
            ann, table_page, stranger = (await device(), await device(),
                                         await device(paired=False))
            said: list[str] = []
            server.referee.listeners.append(lambda ev, r: said.extend(callouts(ev, r)))
            async with ann.http.ws_connect(server.url + "api/ws") as live:
                assert (await table_page.post("/api/events", START))[0] == 200
                await ann.post("/api/seat", {"seat": 0})
                status, answer = await ann.post("/api/events", {"type": "choose", "seat": 0,
                                                                "flee": flee})
                assert status == 200
                # A second try (the other way) is refused the same way at both tables.
                status, again = await ann.post("/api/events", {"type": "choose", "seat": 0,
                                                               "flee": not flee})
                assert status == 409
                await table_page.post("/api/events", {"command": "flee 1"})
                await asyncio.sleep(0.2)
                pushed = []
                while True:  # what the WebSocket pushed while it happened
                    try:
                        msg = await live.receive(timeout=0.2)
                    except TimeoutError:
                        break
                    pushed.append(msg.data)
            sent = await _everything_sent(server, [ann, table_page, stranger])
            sent += [json.dumps(answer), json.dumps(again)]
            # The log keeps the choice whole (replay needs it).
            logged = [ev for _, ev in read_log(folder / "game-1.jsonl").events
                      if ev.get("type") == "choose"]
            assert logged[0]["flee"] is flee
            return sent, pushed, list(server.referee.recent_events), said

    def last(pushed: list[str], kind: str) -> str:
        return [m for m in pushed if json.loads(m)["kind"] == kind][-1]

    async def go():
        fled = await play(tmp_path / "flee", True)
        robbed = await play(tmp_path / "rob", False)
        sent, pushed, pane, said = (same(x) for x in fled)
        assert sent == same(robbed[0])
        assert pane == same(robbed[2]) and said == same(robbed[3])
        # How many pushes the WebSocket coalesced may differ; what it ended with may not.
        for kind in ("state", "led", "me"):
            assert last(pushed, kind) == last(same(robbed[1]), kind)
        for text in sent + pushed + same(robbed[1]) + pane:
            assert '"flee"' not in text and "flees" not in text and "robs" not in text
        assert "Ann has chosen." in said

    asyncio.run(go())


def test_the_reveal_shows_every_choice_at_once_on_the_page_led_and_speaker(tmp_path):
    async def go():
        async with table(tmp_path) as (server, device):
            ann, bob, table_page = await device(), await device(), await device()
            said: list[str] = []
            server.referee.listeners.append(lambda ev, r: said.extend(callouts(ev, r)))
            two = {**START, "players": 2, "names": ["Ann", "Bob"]}
            assert (await table_page.post("/api/events", two))[0] == 200
            await ann.post("/api/seat", {"seat": 0})
            await bob.post("/api/seat", {"seat": 1})
            await ann.post("/api/events", {"type": "choose", "seat": 0, "flee": True})
            s = await bob.state()
            assert s["details"]["revealed"] is None and s["details"]["chosen"] == [0]
            status, body = await bob.post("/api/events", {"type": "choose", "seat": 1,
                                                          "flee": False})
            assert status == 200
            for s in (body["state"], await ann.state(), await table_page.state()):
                assert s["details"]["revealed"] == [
                    {"seat": 0, "name": "Ann", "flee": True},
                    {"seat": 1, "name": "Bob", "flee": False}]
                assert s["status"][2] == "Revealed: Ann flees, Bob robs: enter the tokens drawn"
                assert "Ann flees, Bob robs" in s["messages"]
                assert s["moves"]["reveal"]["seats"] == [1]
            assert said[-2:] == ["Everyone has chosen: open your fists!",
                                 "Ann flees, Bob robs."]
            # The LED: the OPEN! flash, then F and R over the seats' marks.
            assert server.referee.flash == "reveal"
            board = server.referee.game.render(server.referee.state)
            letters = render_text("FR", FONT_3X5, x=0, y=0)
            assert all(board.pixel(x, y) == letters.pixel(x, y)
                       for x in range(32) for y in range(5))
            # The tokens drawn entered: the round goes on, the reveal is over.
            await table_page.post("/api/events", {"type": "reveal", "tokens": [None, "gold"]})
            assert (await ann.state())["details"]["revealed"] is None

    asyncio.run(go())


def test_the_seconds_left_in_the_choosing_window(tmp_path):
    now = [100.0]

    async def go():
        async with table(tmp_path, seconds=10, clock=lambda: now[0]) as (server, device):
            ann = await device()
            assert "window" not in await ann.state()
            await ann.post("/api/events", START)
            await until(lambda: server.window() is not None)
            s = await ann.state()
            assert s["window"] == {"seconds_left": 10, "seconds": 10}
            now[0] += 3.5
            assert (await ann.state())["window"]["seconds_left"] == 7
            # The WebSocket is told as the seconds go.
            async with ann.http.ws_connect(server.url + "api/ws") as ws:
                first = json.loads((await ws.receive(timeout=5)).data)
                assert first["window"]["seconds_left"] == 7
                now[0] += 1.0
                # a push already on its way may still say 7 (on a loaded machine the
                # referee's tick can land between the page's first state and the clock
                # moving); the next state that says otherwise must say 6
                while True:
                    msg = json.loads((await ws.receive(timeout=5)).data)
                    if msg["kind"] == "state" and msg["window"]["seconds_left"] != 7:
                        break
                assert msg["window"]["seconds_left"] == 6
            for seat in range(3):
                await ann.post("/api/events", {"type": "choose", "seat": seat, "flee": False})
            assert "window" not in await ann.state()  # all chose: no window

    asyncio.run(go())
