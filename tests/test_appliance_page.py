"""`serve`'s page on a box just switched on (issue 67): a page that cannot listen yet is
said once and tried again until it listens; on every address it is announced as
HOSTNAME.local (never 0.0.0.0); and until the first phone pairs, the address and the
PIN are on the LED (a luma dummy device here) and said (the recording speaker), at
start and again while no game is under way."""

from __future__ import annotations

import asyncio
import dataclasses
import socket

import aiohttp
import pytest
from luma.core.device import dummy

from companion.appliance import Appliance
from companion.config import Config, DisplayConfig, LogConfig, PageConfig, SoundConfig
from companion.display import registry as displays
from companion.display.led_display import LedDisplay
from companion.display.led_matrix import LedMatrixDisplay
from companion.display.model import flash_cycle_ticks, flash_frame
from companion.speech.phrases import page_phrase
from companion.speech.player import RecordingSpeaker
from companion.web.address import Lookup
from companion.web.server import CSRF_HEADER

PIN = "4826"
VAULT = Lookup(hostname=lambda: "vault", addresses=lambda: ["192.168.1.20"])


class Chain(dummy):
    """A luma dummy 32x8 chain keeping the pixels of every image it was sent."""

    def __init__(self) -> None:
        super().__init__(width=32, height=8, mode="1")
        self.sent: list[frozenset[tuple[int, int]]] = []

    def display(self, image) -> None:  # noqa: ANN001 - luma's signature
        self.sent.append(frozenset((x, y) for x in range(32) for y in range(8)
                                   if image.getpixel((x, y))))
        super().display(image)


@pytest.fixture
def chain(monkeypatch):
    """The display type "chain": serve's LED display on a luma dummy device."""
    made: list[Chain] = []

    def make(config: DisplayConfig) -> LedDisplay:
        made.append(Chain())
        return LedDisplay(LedMatrixDisplay(made[-1]))

    monkeypatch.setitem(displays.DISPLAY_TYPES, "chain", displays.DisplayType(
        "a luma dummy chain", make, lambda config: None))
    return made


def config(tmp_path, host: str, port: int = 0, display: str = "none") -> Config:
    return dataclasses.replace(
        Config(),
        display=DisplayConfig(type=display),
        log=LogConfig(dir=tmp_path / "logs"),
        sound=SoundConfig(enabled=False),  # the recording speaker
        page=PageConfig(enabled=True, host=host, port=port, pin=PIN),
    )


def fast(app: Appliance) -> Appliance:
    app.page_retry_s = (0.05, 0.2)
    app.announce_every_s, app.announce_times = 0.1, 50
    app.lookup = VAULT
    return app


async def until(test, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if test():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not within the time")


def free_port_held() -> tuple[socket.socket, int]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder, holder.getsockname()[1]


def test_a_page_that_cannot_listen_yet_is_said_once_and_tried_until_it_listens(
        tmp_path, capsys):
    holder, port = free_port_held()  # the port taken, as by a companion still stopping

    async def go():
        app = fast(Appliance(config(tmp_path, "127.0.0.1", port)))
        await app.start()
        try:
            await asyncio.sleep(0.5)  # several tries while the port is taken
            waiting = (app.page_listening, list(app.referee.messages), list(app.speaker.said))
            holder.close()
            await until(lambda: app.page_listening)
            async with (aiohttp.ClientSession() as http,
                        http.get(f"http://127.0.0.1:{port}/api/state") as r):
                status = r.status
            await until(lambda: app.speaker.said)
            return waiting, status, list(app.referee.messages), list(app.speaker.said)
        finally:
            await app.close()

    (listening, before, said_before), status, after, said = asyncio.run(go())
    err = capsys.readouterr().err
    assert not listening and said_before == []  # nothing announced before it listens
    assert err.count("table page not served yet") == 1
    assert (f"companion: table page not served yet: cannot listen on 127.0.0.1:{port} (") in err
    assert "trying again every 0.05-0.2 s" in err
    assert f"Page not served yet: cannot listen on 127.0.0.1:{port}; trying again" in before
    assert status == 200 and f"Page up on 127.0.0.1:{port}" in after
    assert f"companion: table page http://127.0.0.1:{port}/ PIN {PIN}" in err
    assert said[0] == page_phrase("127.0.0.1", port, PIN)


def test_an_address_the_box_lacks_is_tried_again_and_serve_stops_cleanly(tmp_path, capsys):
    # 192.0.2.1 (TEST-NET-1) is an address this machine does not have
    async def go():
        app = fast(Appliance(config(tmp_path, "192.0.2.1", 8080)))
        await app.start()
        await asyncio.sleep(0.3)
        listening = app.page_listening
        tasks = list(app._page_tasks)
        await app.close()
        return listening, tasks

    listening, tasks = asyncio.run(go())
    if listening:
        pytest.skip("this sandbox lets any address bind")
    assert "table page not served yet: cannot listen on 192.0.2.1:8080" in capsys.readouterr().err
    assert all(t.done() for t in tasks)  # the retrying ended with serve


def test_until_a_phone_pairs_the_led_shows_and_the_speaker_says_the_address_and_pin(
        tmp_path, capsys, chain):
    async def go():
        app = fast(Appliance(config(tmp_path, "0.0.0.0", display="chain")))
        await app.start()
        try:
            assert isinstance(app.speaker, RecordingSpeaker)
            port = app.page.port
            await until(lambda: len(app.speaker.said) >= 3)  # at start, then again
            flash, frame, tick = app.referee.flash, app.referee.view().frame, app.referee.tick
            led = app.page.led()
            async with (aiohttp.ClientSession() as http,
                        http.post(f"http://127.0.0.1:{port}/api/pair", json={"pin": PIN},
                                  headers={CSRF_HEADER: "1"}) as r):
                paired = r.status
            await asyncio.sleep(0.4)  # a tick: the flash with the address goes
            flash_after, said = app.referee.flash, len(app.speaker.said)
            await asyncio.sleep(0.5)  # five periods: nothing said again
            return (port, flash, frame, tick, led, paired, flash_after, said,
                    list(app.speaker.said))
        finally:
            await app.close()

    port, flash, frame, tick, led, paired, flash_after, said, said_all = asyncio.run(go())
    where = f"vault.local:{port}"
    word = f"PIN {PIN} VAULT.LOCAL:{port}"
    assert flash == f"pin:{PIN} VAULT.LOCAL:{port}"
    assert frame == flash_frame(word, tick)  # scrolling through the address and PIN
    scroll = {frozenset(flash_frame(word, t).lit()) for t in range(flash_cycle_ticks(word))}
    (device,) = chain
    assert any(pixels in scroll for pixels in device.sent)  # on the LED chain itself
    assert led["flash"] is None and PIN not in str(led)  # never on the page's own LED
    assert said_all[:3] == [page_phrase("vault.local", port, PIN)] * 3
    assert paired == 200
    assert flash_after in (None, f"pin:{PIN}")  # the address gone (the plain PIN may show)
    assert len(said_all) == said
    out, err = capsys.readouterr()
    assert (f"companion: table page http://{where}/ PIN {PIN} "
            f"(also http://192.168.1.20:{port}/)") in err
    assert "0.0.0.0" not in out + err
    assert (f"table: pair a phone: open http://{where}/ and enter PIN {PIN} (on the LED and "
            "said until a phone pairs)") in out


def test_a_game_under_way_is_not_interrupted_by_the_announcement(tmp_path):
    async def go():
        app = fast(Appliance(config(tmp_path, "127.0.0.1")))
        await app.start()
        try:
            await until(lambda: app.speaker.said)
            result = await app.table.submit({"type": "new_game", "game": "vault-assault",
                                             "players": 2, "names": ["Ann", "Bob"]})
            assert result.rejection is None
            before = [s for s in app.speaker.said if s.startswith("The table page")]
            await asyncio.sleep(0.5)  # five periods, no phone paired
            return before, [s for s in app.speaker.said if s.startswith("The table page")]
        finally:
            await app.close()

    before, after = asyncio.run(go())
    assert before and after == before


def test_the_address_scrolls_through_once_from_its_start(tmp_path):
    async def go():
        app = Appliance(config(tmp_path, "0.0.0.0"))
        app.lookup = VAULT
        app.announce_times = 0  # nothing on its own: announced here
        await app.start()
        try:
            holds = []
            for tick in (0, 5, 37):
                app.referee.tick = tick
                app.announce_page()
                holds.append((tick, app.referee.flash_until - app.referee.clock()))
            return app.page.port, holds, app.table.tick_seconds
        finally:
            await app.close()

    port, holds, tick_s = asyncio.run(go())
    cycle = flash_cycle_ticks(f"PIN {PIN} VAULT.LOCAL:{port}")
    assert cycle > 1  # wider than the panel: it scrolls
    for tick, hold in holds:
        ends = tick + hold / tick_s  # the tick it goes at
        assert cycle <= hold / tick_s < 2 * cycle + 1
        assert int(ends) % cycle == 0  # at the end of a scroll, not in the middle


def test_a_frame_of_the_scroll_is_drawn_from_the_flash_word():
    # flash_cycle_ticks is flash_frame's own period: the frame at tick t + cycle is t's
    word = f"PIN {PIN} VAULT.LOCAL:8080"
    cycle = flash_cycle_ticks(word)
    assert flash_frame(word, 3) == flash_frame(word, 3 + cycle) != flash_frame(word, 4)
    assert flash_cycle_ticks("PIN 4826") == 1
    assert flash_frame("PIN 4826", 7) == flash_frame("PIN 4826", 0)
