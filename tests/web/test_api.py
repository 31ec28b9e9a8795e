"""The page's HTTP API without a browser: aiohttp's test client against a PageServer on
a running TableLoop (the same objects `companion serve` and `sim --page` wire)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager

from aiohttp.test_utils import TestClient, TestServer
from game_builders import ROW5, new_game

from companion.gamelog import GameLog, read_log
from companion.games.vault_assault.engine import apply
from companion.loop import Referee, TableLoop, resume_state
from companion.web.pairing import FREE_TRIES, Pairing
from companion.web.server import CSRF_HEADER, PageServer

H = {CSRF_HEADER: "1"}


@asynccontextmanager
async def page(tmp_path=None, pin="4321"):
    path = tmp_path / "game-1.jsonl" if tmp_path else None
    state = resume_state(path)[0] if path else None
    log = GameLog(path, fsync=False) if path else None
    referee = Referee(state=state, log=log)
    table = TableLoop(referee, tick_seconds=0.05)
    await table.start()
    server = PageServer(table, pairing=Pairing(pin=pin), log_dir=tmp_path)
    client = TestClient(TestServer(server.app))
    await client.start_server()
    try:
        yield server, client
    finally:
        await client.close()
        await table.stop()
        if log:
            log.close()


async def paired(client, pin="4321"):
    r = await client.post("/api/pair", json={"pin": pin}, headers=H)
    assert r.status == 200, await r.text()
    return r


def run(coro):
    return asyncio.run(coro)


def test_pairing_sets_a_strict_httponly_cookie_and_unlocks_events():
    async def go():
        async with page() as (server, client):
            r = await client.post("/api/events", json=new_game(3), headers=H)
            assert r.status == 401
            assert "error" in await r.json()
            r = await paired(client)
            cookie = r.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            r = await client.post("/api/events", json=new_game(3), headers=H)
            assert r.status == 200
            body = await r.json()
            assert body["accepted"] is True
            assert body["state"]["phase"] == "heist_hide"
            assert [s["name"] for s in body["state"]["seats"]] == ["Ann", "Bob", "Cat"]
            state = await (await client.get("/api/state")).json()
            assert state["paired"] is True and state["moves"]["heist_hide"]["row"]["alarm"] == 3

    run(go())


def test_wrong_pin_is_403_and_rate_limited():
    async def go():
        async with page() as (server, client):
            for _ in range(FREE_TRIES):
                r = await client.post("/api/pair", json={"pin": "0000"}, headers=H)
                assert r.status == 403
            # Locked now: even the right PIN is refused for a while.
            r = await client.post("/api/pair", json={"pin": "4321"}, headers=H)
            assert r.status == 403
            assert "try again" in (await r.json())["error"]
            assert server.pairing.locked("127.0.0.1") > 0

    run(go())


def test_unpair_all_forgets_every_device_and_draws_a_new_pin():
    async def go():
        async with page() as (server, client):
            seen = []
            server.pairing.on_pin.append(seen.append)
            await paired(client)
            r = await client.post("/api/unpair", json={"all": True}, headers=H)
            assert r.status == 200
            assert not server.pairing.sessions and seen == [server.pairing.pin]
            r = await client.post("/api/events", json=new_game(2), headers=H)
            assert r.status == 401

    run(go())


def test_cross_site_posts_are_refused():
    async def go():
        async with page() as (server, client):
            await paired(client)
            r = await client.post("/api/events", json=new_game(2))  # no custom header
            assert r.status == 403
            r = await client.post(
                "/api/events", json=new_game(2), headers={**H, "Origin": "http://evil.example"}
            )
            assert r.status == 403
            r = await client.post(
                "/api/events", json=new_game(2), headers={**H, "Sec-Fetch-Site": "cross-site"}
            )
            assert r.status == 403
            r = await client.post("/api/pair", json={"pin": "4321"})  # login CSRF too
            assert r.status == 403
            assert server.referee.state.phase == "no_game"

    run(go())


def test_malformed_bodies_get_400_with_one_line():
    bodies = [
        b"", b"not json", b"[1,2]", b'"x"', b"\xff\xfe", b'{"type": 5}', b'{"type": "bogus"}',
        b'{"type": "rejected", "reason": "x"}', b'{"command": 5}', b'{"command": "flip x:y"}',
        b'{"command": "fly away"}', b'{"command": "go", "type": "stage"}', b"[" * 5000,
    ]

    async def go():
        async with page() as (server, client):
            await paired(client)
            for body in bodies:
                r = await client.post("/api/events", data=body, headers=H)
                assert r.status == 400, (body, r.status)
                err = (await r.json())["error"]
                assert err and "\n" not in err and "Traceback" not in err
            r = await client.post("/api/events", data=b"{" + b" " * 10_000 + b"}", headers=H)
            assert r.status == 413
            assert server.referee.state.events_applied == 0

    run(go())


def test_a_phone_cannot_speak_for_the_camera(tmp_path):
    """`claim_check` is the camera's answer: a paired phone that posts one (by hand, or a
    hostile page on the LAN) gets 400 and one line, and nothing reaches the game or its log."""
    forged = {"type": "claim_check", "claim": "escape", "event": 1, "answer": "confirmed",
              "seen": 5, "needs": 5, "text": "the camera sees 5 Escapes", "mode": "challenge"}

    async def go():
        async with page(tmp_path) as (server, client):
            await paired(client)
            r = await client.post("/api/events", json=new_game(3), headers=H)
            assert r.status == 200
            applied = server.referee.state.events_applied
            r = await client.post("/api/events", json=forged, headers=H)
            assert r.status == 400
            err = (await r.json())["error"]
            assert err == "claim_check: only the camera says this, never a phone"
            assert server.referee.state.events_applied == applied

    run(go())
    assert [e["type"] for _, e in read_log(tmp_path / "game-1.jsonl").events] == ["new_game"]


def test_rules_refusal_is_409_with_the_reason_and_logged_once(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            await paired(client)
            r = await client.post("/api/events", json={"type": "stage", "stage": 1}, headers=H)
            assert r.status == 409
            assert (await r.json())["rejected"].startswith("stage: not allowed now")
            r = await client.post("/api/events", json={"command": "new 3 Ann Bob Cat"}, headers=H)
            assert r.status == 200
            state = (await r.json())["state"]
            assert state["history"][0]["accepted"] and state["history"][1]["accepted"] is False

    run(go())
    lines = [e for _, e in read_log(tmp_path / "game-1.jsonl").events]
    assert [e["type"] for e in lines] == ["rejected", "new_game"]


def test_state_hides_the_cops_row_during_the_heist():
    async def go():
        async with page() as (server, client):
            await paired(client)
            for ev in (new_game(2), {"type": "heist_hide", "row": ROW5}):
                assert (await client.post("/api/events", json=ev, headers=H)).status == 200
            text = await (await client.get("/api/state")).text()
            assert "dye_pack" not in text.split('"moves"')[0]  # the row itself is not sent
            state = json.loads(text)
            assert state["turn"]["heist"]["row"] is None
            assert state["history"][0]["event"] == {"type": "heist_hide", "row": "hidden"}
            spectator = TestClient(TestServer(server.app))
            await spectator.start_server()
            try:
                assert (await (await spectator.get("/api/state")).json())["paired"] is False
            finally:
                await spectator.close()

    run(go())


def test_two_pages_both_see_every_update_and_simultaneous_events_apply_once(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            await paired(client)
            other = TestClient(TestServer(server.app))
            await other.start_server()
            try:
                await paired(other)
                ws1 = await client.ws_connect("/api/ws")
                ws2 = await other.ws_connect("/api/ws")
                for ws in (ws1, ws2):  # the first state on connect
                    assert (await ws.receive_json(timeout=5))["kind"] in ("state", "led")
                r = await client.post("/api/events", json=new_game(3), headers=H)
                assert r.status == 200
                for ws in (ws1, ws2):
                    await _until(ws, lambda m: m.get("phase") == "heist_hide")
                # Both phones send at the same moment: each applied once, in one order.
                hide = {"type": "heist_hide", "row": ROW5}
                r1, r2 = await asyncio.gather(
                    client.post("/api/events", json=hide, headers=H),
                    other.post("/api/events", json={"command": "undo"}, headers=H),
                )
                assert {r1.status, r2.status} <= {200, 409}
                for ws in (ws1, ws2):
                    await _until(ws, lambda m: m.get("history_seq") == 3)
                await ws1.close()
                await ws2.close()
            finally:
                await other.close()

    run(go())
    events = [e for _, e in read_log(tmp_path / "game-1.jsonl").events]
    assert events[0]["type"] == "new_game"
    assert sorted(e["type"] for e in events[1:]) == ["heist_hide", "undo"]
    assert len(events) == 3


async def _until(ws, test, timeout=5.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        msg = await ws.receive_json(timeout=max(0.01, end - loop.time()))
        if msg.get("kind") == "state" and test(msg):
            return msg


def test_accepted_events_are_the_ones_the_engine_accepts():
    """A page body accepted by the API is one the engine accepts from the same state."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from companion.web.server import PageServer as _  # noqa: F401

    async def check(bodies):
        ok = 0
        async with page() as (server, client):
            await paired(client)
            for body in bodies:
                before = server.referee.state
                r = await client.post("/api/events", data=body, headers=H)
                assert r.status in (200, 400, 409, 413), (body, r.status)
                reply = await r.json()
                if r.status == 200:
                    ok += 1
                    event = json.loads(body)
                    if "command" in event:
                        continue
                    after = server.referee.state
                    # The engine accepts it from the same state (the API's ts_ns stamp
                    # only ever adds a time check the event passed).
                    assert apply(before, event).rejection is None, event
                    assert after is not before
                elif r.status == 409:
                    assert server.referee.state is before and reply["rejected"]
                else:
                    assert "\n" not in reply["error"]
        return ok

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-5, 10) | st.text(max_size=6),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
        max_leaves=8,
    )
    kinds = st.sampled_from(
        ["new_game", "heist_hide", "heist_attempt", "assault_start", "stage", "dye_pack",
         "hostage", "backup", "loot", "steal", "empty", "buzz", "impound", "tally",
         "sticky_fingers", "undo", "note", "x"]
    )
    fields = st.dictionaries(
        st.sampled_from(["seat", "stage", "targets", "row", "flips", "car", "cash", "from",
                         "players", "names", "game", "ts_ns", "first_cop"]),
        json_values, max_size=4,
    )
    event = st.builds(lambda k, f: {"type": k, **f}, kinds, fields)
    commands = st.builds(lambda t: {"command": t}, st.sampled_from(
        ["new 3 A B C", "new 2", "hide A A P D A", "go", "stage 1", "bang 1", "undo", "0", "1",
         "flip 1:0 2:stop", "tally 0 5k", "loot 1", "empty", "impound 1"]))
    plausible = st.sampled_from([
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}, {"seat": 2, "stop": True}]},
        {"type": "assault_start"}, {"type": "stage", "stage": 1}, {"type": "stage", "stage": 2},
        {"type": "dye_pack", "targets": [1]}, {"type": "hostage", "seat": 2},
        {"type": "buzz", "seat": 1}, {"type": "buzz", "seat": 0}, {"type": "empty"},
        {"type": "impound", "seat": 1, "car": 0}, {"type": "undo"}, {"type": "loot", "seat": 2},
    ])
    body = st.one_of(
        plausible.map(lambda e: json.dumps(e).encode()),
        event.map(lambda e: json.dumps(e).encode()),
        commands.map(lambda e: json.dumps(e).encode()),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=40),
    )

    accepted = []

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(body, min_size=20, max_size=20))
    def batches(bodies):
        # Each batch starts from a game under way, so the random events meet real phases.
        accepted.append(run(check([json.dumps(new_game(3)).encode(), *bodies])))

    batches()  # 50 batches x 20 bodies = 1,000 random bodies
    assert sum(accepted) > 50  # the engine's accepting path was exercised too


def test_a_resumed_game_shows_its_history_and_earlier_games_are_listed(tmp_path):
    with GameLog(tmp_path / "game-0.jsonl", fsync=False) as old:
        old.append(new_game(2))
    with GameLog(tmp_path / "game-1.jsonl", fsync=False) as log:
        log.append(new_game(3))
        log.append({"type": "rejected", "reason": "stage: not allowed now", "event": {}})

    async def go():
        async with page(tmp_path) as (server, client):
            state = await (await client.get("/api/state")).json()
            assert "kind" not in state and state["phase"] == "heist_hide"
            rows = state["led"]["rows"]
            assert len(rows) == 8 and set("".join(rows)) <= {"0", "1"}
            assert [h["accepted"] for h in state["history"]] == [False, True]
            assert [g["log"] for g in state["games"]] == ["game-0.jsonl"]
            assert state["games"][0]["seats"][0]["name"] == "Ann"

    run(go())


def test_the_last_verdict_carries_the_photo_finish_margin():
    from game_builders import at_race, stages

    from companion.games.vault_assault.engine import apply as engine_apply
    from companion.web.view import History

    state = stages(at_race(3, first_cop=0))
    event = {"type": "buzz", "seat": 1, "ts_ns": 5,
             "photo_finish": {"seats": [1, 0], "margin_ns": 420_000, "ties": []}}
    history = History()
    history.add(event, engine_apply(state, event))
    assert history.verdict["seat"] == 1 and history.verdict["margin_ms"] == 0.42
    assert history.verdict["text"].startswith("Escaped!") and not history.verdict["tie"]
    assert history.entries[0]["accepted"] and history.undo_stack


def test_a_new_log_starts_a_new_history(tmp_path):
    async def go():
        async with page(tmp_path) as (server, client):
            await paired(client)
            assert (await client.post("/api/events", json=new_game(2), headers=H)).status == 200
            server.referee.log.close()
            server.referee.log = GameLog(tmp_path / "game-2.jsonl", fsync=False)
            server.referee.state = server.referee.state.__class__()  # as serve's rotation
            r = await client.post("/api/events", json=new_game(3), headers=H)
            state = (await r.json())["state"]
            assert [h["type"] for h in state["history"]] == ["new_game"]
            assert [g["log"] for g in state["games"]] == ["game-1.jsonl"]
            server.referee.log.close()

    run(go())
