"""The pairing PIN is reachable at any time on `serve` (issue 65): a long press of any
seat button shows it on the LED (and says and prints it), between games the LED shows it
by itself, the page's copy of the LED never carries it, and the wrong-PIN answer says
where it truly is."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from aiohttp.test_utils import TestClient, TestServer

from companion.appliance import Appliance
from companion.config import (
    Config,
    DisplayConfig,
    LogConfig,
    PageConfig,
    SoundConfig,
)
from companion.web.server import CSRF_HEADER


def config(tmp_path):
    return dataclasses.replace(
        Config(),
        display=DisplayConfig(type="none"),
        log=LogConfig(dir=tmp_path / "logs"),
        sound=SoundConfig(enabled=False),
        page=PageConfig(enabled=True, host="127.0.0.1", port=0, pin="4826"),
    )


def test_a_long_press_shows_the_pin_mid_game_and_the_page_never_gets_it(tmp_path, capsys):
    async def go():
        app = Appliance(config(tmp_path))
        await app.start()
        try:
            for event in ({"type": "new_game", "game": "vault-assault", "players": 2,
                           "names": ["Ann", "Bob"]},
                          {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond",
                                                         "alarm", "alarm"]}):
                assert (await app.table.submit(event)).rejection is None
            app.referee.flash = None  # the start-up PIN has gone by
            assert not app.page.between_games()
            pin = app.buttons.pin(1)
            pin.drive_low()  # seat 2 held down...
            await asyncio.sleep(0.01)
            app.buttons.check_stuck(time.monotonic_ns() + 10 * 10**9)  # ...for a while
            for _ in range(100):
                if app.referee.flash == "pin:4826":
                    break
                await asyncio.sleep(0.01)
            shown = app.referee.flash
            led = app.page.led()
            messages = list(app.referee.messages)
            pin.drive_high()
        finally:
            await app.close()
        return shown, led, messages

    shown, led, messages = asyncio.run(go())
    assert shown == "pin:4826"
    assert ("Seat 2's button held down: the pairing PIN is on the display (the button "
            "counts again once released)") in messages
    assert led["flash"] is None and "4826" not in str(led)  # the page: the board, no PIN
    assert "table: pairing PIN 4826" in capsys.readouterr().out  # the serve console


def test_between_games_the_led_shows_the_pin_and_a_wrong_pin_says_where(tmp_path):
    async def go():
        app = Appliance(config(tmp_path))
        await app.start()
        try:
            app.referee.flash = None
            app.page._pin_shown_at = float("-inf")
            app.referee.on_tick()  # a tick: no game under way
            await asyncio.sleep(0.01)
            between = app.referee.flash
            client = TestClient(TestServer(app.page.app))
            await client.start_server()
            try:
                wrong = await client.post("/api/pair", json={"pin": "0000"},
                                          headers={CSRF_HEADER: "1"})
                body = await wrong.json()
                state = await (await client.get("/api/state")).json()
            finally:
                await client.close()
        finally:
            await app.close()
        return between, body, state

    between, body, state = asyncio.run(go())
    assert between == "pin:4826"
    assert body["error"].startswith("wrong PIN (hold any seat button for 2 s and the box's "
                                    "LED display shows it; between games")
    assert "4826" not in str(state)  # no PIN in what anyone may read
    assert state["led"]["flash"] is None and state["pin_where"].startswith("hold any seat")
