"""A whole 3-player game played by tapping the page in a real browser (Debian's
Chromium driven by Playwright), against the sim's objects in-process: the TableLoop,
simulated seat buttons (gpiozero mock pins through the settle window) and the page
server on 127.0.0.1. The summary must equal tests/scripts/game-3p.jsonl's."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest

from companion.buzzers import BuzzerInput, attach_buttons
from companion.gamelog import GameLog
from companion.games.vault_assault.summary import summary
from companion.hardware.buttons import DEFAULT_PINS
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# The right edge of the widest box on the page (the body hides horizontal overflow, so
# scrollWidth alone would not show a box sticking out).
RIGHTMOST = """Math.max(document.documentElement.scrollWidth, ...[...document.querySelectorAll(
    'body *')].map((e) => Math.ceil(e.getBoundingClientRect().right)))"""
HOW = "no Chromium: apt-get install chromium (and pip install playwright) to run browser tests"


def chromium_or_skip() -> str:
    pytest.importorskip("playwright", reason=HOW)
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        pytest.skip(HOW)
    return path


class Table:
    """The sim's objects in one loop, with the page served on an ephemeral port."""

    async def start(self, log_path, pin="2468"):
        from companion.web.server import start_page

        self.log = GameLog(log_path, fsync=False)
        self.referee = Referee(log=self.log)
        self.table = TableLoop(self.referee)
        await self.table.start()
        self.buzzers = BuzzerInput(self.table)
        self.buttons = attach_buttons(self.buzzers, DEFAULT_PINS, make_pin_factory("mock"))
        self.server = await start_page(self.table, "127.0.0.1", 0, pin)
        return self

    async def press(self, seat):
        loop = asyncio.get_running_loop()
        seq = self.server.history.seq
        await loop.run_in_executor(None, self.buttons.press, seat, None)
        await self.until(lambda: self.server.history.seq > seq)

    async def until(self, test, timeout=10.0):
        end = asyncio.get_running_loop().time() + timeout
        while not test():
            if asyncio.get_running_loop().time() > end:
                raise AssertionError("the table did not get there")
            await asyncio.sleep(0.01)

    async def close(self):
        await self.server.stop()
        self.buttons.close()
        await self.table.stop()
        self.log.close()


async def launch(executable):
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(
        executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
    )
    return pw, browser


async def play_3p_game(t: Table, page) -> None:
    """tests/scripts/game-3p.jsonl, by touch; buzzes on the simulated buttons."""

    async def synced():
        await t.until(lambda: True)
        await page.wait_for_selector(f'body[data-seq="{t.server.history.seq}"]')

    async def tap(selector, *, changes=True):
        seq = t.server.history.seq
        await page.click(selector)
        if changes:
            await t.until(lambda: t.server.history.seq > seq)
        await synced()

    async def press(seat):
        await t.press(seat)
        await synced()

    async def hide(row):
        cycles = {"alarm": 0, "dye_pack": 1, "diamond": 2}
        for pos, face in enumerate(row):
            for _ in range(cycles[face]):
                await tap(f'.tile[data-pos="{pos}"]', changes=False)
        await tap("#hide")

    async def flip(*flips):
        for seat, pos in flips:
            await tap(f'button[data-seat="{seat}"][data-pos="{pos}"]', changes=False)
        await tap("#flip")

    # Pair with the PIN, then a new game: Ann, Bob, Cat, Bob's seat the first cops.
    await page.fill("#pin", t.server.pairing.pin)
    await page.click("#pair-form button")
    await page.wait_for_selector("#start-game")
    for i, name in enumerate(["Ann", "Bob", "Cat"]):
        await page.fill(f"#name-{i}", name)
    await tap('button[data-cop="1"]', changes=False)
    await tap("#start-game")

    # Turn 1: Bob are the cops.
    await hide(["alarm", "alarm", "dye_pack", "diamond", "alarm"])
    await flip((0, 2), (2, 0))
    await flip((2, 3))
    await tap("#go")
    # (The script's `hostage 0` here is refused by the referee: Ann's trap already set a
    # hostage die aside. The page does not offer it, so there is nothing to tap.)
    assert await page.locator('[data-hostage="0"]').count() == 0
    await tap('[data-bang="0"]', changes=False)
    await tap('[data-bang="2"]', changes=False)
    await tap("#bang")
    await tap("#stage")
    await tap('[data-bang="0"]', changes=False)
    await tap("#bang")
    await tap("#stage")
    await tap("#stage")
    await press(2)  # Cat: Escaped!
    await press(1)  # Bob, the cops: Arrested! (Ann)
    await tap('[data-impound="0:1"]')
    # Turn 2: Cat are the cops.
    await hide(["diamond", "alarm", "alarm", "alarm", "dye_pack"])
    await flip((0, 1), (1, 0))
    await tap("#go")
    await tap('[data-steal="0:1"]')
    await press(0)
    await press(1)
    # Turn 3: Ann are the cops.
    await hide(["alarm", "diamond", "alarm", "dye_pack", "alarm"])
    await flip((2, 1), (1, 1))
    await tap("#go")
    await tap('[data-loot="2"]')
    await tap("#empty")
    await press(0)  # Ann arrests Bob and Cat
    await tap('[data-impound="1:0"]')
    await tap('[data-impound="2:0"]')
    for seat, cash in ((0, "90000"), (1, "10k"), (2, "$30,000")):
        await page.fill(f"#cash-{seat}", cash)
        await tap(f'[data-tally="{seat}"]')


def test_a_whole_3p_game_by_touch_equals_the_scripted_game(tmp_path):
    executable = chromium_or_skip()
    from test_full_games import EXPECTED

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await browser.new_page(viewport={"width": 360, "height": 740})
            await page.goto(t.server.url)
            await play_3p_game(t, page)
            assert summary(t.referee.state) == EXPECTED["game-3p.jsonl"]
            assert t.referee.rejections == 0  # only legal moves were offered
            winners = await page.text_content("#winners")
            assert "Ann" in winners and "Bob" in winners
            # No horizontal scroll on a 360 px phone: no box sticks out to the right.
            assert await page.evaluate(RIGHTMOST) <= 360
            # The spectator board shows the same game, with no controls.
            board = await browser.new_page(viewport={"width": 1280, "height": 800})
            await board.goto(t.server.url + "board")
            await board.wait_for_selector("table.score tbody tr")
            assert await board.locator("#controls").count() == 0
            assert "Ann" in await board.text_content("#winners")
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_unpaired_page_is_a_scoreboard_and_a_rejection_shows_its_reason(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await browser.new_page(viewport={"width": 360, "height": 740})
            await page.goto(t.server.url)
            await page.wait_for_selector("#pair-card:not([hidden])")
            assert await page.locator("#controls button").count() == 0
            await page.fill("#pin", "0000" if t.server.pairing.pin != "0000" else "1111")
            await page.click("#pair-form button")
            await page.wait_for_selector("#notice:not([hidden])")
            assert "wrong PIN" in await page.text_content("#notice")
            await page.fill("#pin", t.server.pairing.pin)
            await page.click("#pair-form button")
            await page.wait_for_selector("#start-game")
            # A move the rules refuse arrives from elsewhere (the stage before a game):
            # the page shows the reason the API gives.
            reply = await page.evaluate(
                """async () => { const r = await fetch('/api/events', {method: 'POST',
                headers: {'X-Vault-Companion': '1', 'Content-Type': 'application/json'},
                body: JSON.stringify({type: 'stage', stage: 1})}); return [r.status,
                await r.json()]; }"""
            )
            assert reply[0] == 409 and reply[1]["rejected"].startswith("stage:")
            await page.wait_for_selector("#history li.rej")
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_no_horizontal_scroll_at_360_px_in_any_phase_of_a_4_player_game(tmp_path):
    executable = chromium_or_skip()
    long = ["The Extraordinarily Long Red Team Name", "Blue-Team-With-A-Hyphenated-Name"]
    events = [
        {"type": "new_game", "game": "vault-assault", "players": 4, "names": long},
        {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm",
                                       "alarm"]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
        {"type": "assault_start"},
        {"type": "hostage", "seat": 1},
        {"type": "stage", "stage": 1},
        {"type": "stage", "stage": 2},
        {"type": "stage", "stage": 3},
        {"type": "buzz", "seat": 0},
    ]

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await browser.new_page(viewport={"width": 360, "height": 740})
            await page.goto(t.server.url)
            await page.fill("#pin", t.server.pairing.pin)
            await page.click("#pair-form button")
            await page.wait_for_selector("#start-game")
            await page.click('button[data-players="4"]')
            widths = [await page.evaluate(RIGHTMOST)]
            for event in events:
                assert (await t.table.submit(event)).rejection is None, event
                await page.wait_for_selector(f'body[data-seq="{t.server.history.seq}"]')
                widths.append(await page.evaluate(RIGHTMOST))
            assert await page.locator(".tiles.six").count() == 0  # the row is hidden now
            assert max(widths) <= 360, widths
            assert await page.locator('[data-impound="1:0"]').count() == 1
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_undo_shows_what_it_takes_back_and_a_refusal_shows_its_reason(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await browser.new_page(viewport={"width": 360, "height": 740})
            await page.goto(t.server.url)
            await page.fill("#pin", t.server.pairing.pin)
            await page.click("#pair-form button")
            await page.click('button[data-players="2"]')
            await page.click("#start-game")
            await page.click("#undo")
            ask = await page.text_content(".confirm")
            assert "Take back: New game of Vault Assault, 2 players" in ask
            await page.click("#undo-yes")
            await t.until(lambda: t.referee.state.phase == "no_game")
            await page.wait_for_selector("#start-game")
            # A move refused by the rules (say another phone was quicker): the page shows
            # the referee's one-line reason.
            await page.evaluate("send({type: 'stage', stage: 1})")
            await page.wait_for_selector("#notice:not([hidden])")
            assert (await page.text_content("#notice")).startswith("stage: not allowed now")
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_a_damaged_log_shows_keep_or_new_and_the_tap_answers_it(tmp_path):
    executable = chromium_or_skip()
    answers: list[str] = []

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        offer = {"damaged_line": 7, "damage": "checksum does not match", "kept_events": 6,
                 "keep": "keep the game up to line 6", "new": "start a new game",
                 "options": ["keep", "new"]}
        t.referee.resume_choice = offer

        def answer(choice: str) -> str:
            answers.append(choice)
            t.referee.resume_choice = None
            t.referee.notice(f"Log: {offer[choice]}")
            return offer[choice]

        t.server.on_resume_choice = answer
        pw, browser = await launch(executable)
        try:
            page = await browser.new_page(viewport={"width": 360, "height": 740})
            await page.goto(t.server.url)
            assert await page.is_hidden("#resume-card")  # unpaired: no say in it
            await page.fill("#pin", t.server.pairing.pin)
            await page.click("#pair-form button")
            await page.wait_for_selector("#resume-keep")
            text = await page.text_content("#resume-card")
            assert "Line 7: checksum does not match" in text and "up to line 6" in text
            await page.click("#resume-keep")
            await t.until(lambda: answers == ["keep"])
            await page.wait_for_selector("#resume-card", state="hidden")
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())
