"""Vault Assault played by touch only in Chromium (Playwright) on 360x740 phones, as
`companion sim --page` serves it (issue 65): taps and names typed into their boxes,
never JSON, never the command box, never the seat buttons (the page's "Buttons not
working?" fold presses for a seat).

- A 3-player game from pairing to the winner with three phones: the cops' phone (the
  table's controls) and two robbers' phones, each robber flipping in secret on their
  own phone ("A 3-player game is not a team game, so Robbers hide their chosen dice
  from other Robbers"): no other page shows which dice; then the next game started
  from the page.
- The key to the LED board: drawn from the frame the page shows.
- A restart: the page says it is no longer paired before a tap is lost; a tap made
  before it knew waits for the PIN and is then sent.

After each screen every page is checked for text that is cut or sticks out."""

from __future__ import annotations

import asyncio

from page_checks import CUT
from test_browser import RIGHTMOST, chromium_or_skip, launch

from companion.gamelog import GameLog
from companion.interactive import new_log_after_game_over
from companion.loop import Referee, TableLoop
from companion.web.server import start_page

PHONE = {"width": 360, "height": 740}
PIN = "2468"

# What a page shows that names a flipped die: the faces of flipped positions.
SHOWN_DICE = "[...document.querySelectorAll('#my-dice, [data-pos], [data-my-pos]')]" \
    ".map((e) => e.textContent).join(' | ')"


class SimTable:
    """The sim's objects in one loop, as `companion sim --page` serves them: a new
    game after a finished one starts a new log."""

    async def start(self, tmp_path, port=0):
        self.tmp = tmp_path
        self.log = GameLog(tmp_path / "game-1.jsonl", fsync=False)
        self.referee = Referee(log=self.log)
        self.table = TableLoop(self.referee)
        self.table.before_submit.append(
            lambda event: new_log_after_game_over(self.referee, event))
        await self.table.start()
        await self.serve(port)
        return self

    async def serve(self, port=0):
        self.server = await start_page(self.table, "127.0.0.1", port, PIN,
                                       new_game_after_over=True)

    async def until(self, test, timeout=10.0):
        end = asyncio.get_running_loop().time() + timeout
        while not test():
            if asyncio.get_running_loop().time() > end:
                raise AssertionError("the table did not get there")
            await asyncio.sleep(0.01)

    async def close(self):
        await self.server.stop()
        await self.table.stop()
        if self.referee.log is not None:
            self.referee.log.close()
        self.log.close()


class Phone:
    """One phone (its own browser context: its own session cookie)."""

    def __init__(self, t: SimTable, page, name: str):
        self.t, self.page, self.name = t, page, name

    @classmethod
    async def open(cls, t, browser, name, path=""):
        context = await browser.new_context(viewport=PHONE)
        page = await context.new_page()
        await page.goto(t.server.url + path)
        return cls(t, page, name)

    async def pair(self):
        await self.page.fill("#pin", PIN)
        await self.page.click("#pair-form button")
        await self.page.wait_for_selector("#device-card:not([hidden])")

    async def synced(self):
        await self.page.wait_for_selector(f'body[data-seq="{self.t.server.history.seq}"]')

    async def tap(self, selector, *, changes=True):
        seq = self.t.server.history.seq
        await self.page.click(selector)
        if changes:
            await self.t.until(lambda: self.t.server.history.seq > seq)
        await self.synced()

    async def check(self):
        """Nothing cut, nothing right of the 360 px screen."""
        assert await self.page.evaluate(CUT) == [], self.name
        assert await self.page.evaluate(RIGHTMOST) <= 360, self.name


async def hide(cops: Phone, row):
    cycles = {"alarm": 0, "dye_pack": 1, "diamond": 2}
    for pos, face in enumerate(row):
        for _ in range(cycles[face]):
            await cops.tap(f'.tile[data-pos="{pos}"]', changes=False)
    await cops.tap("#hide")


async def secret_flip(robber: Phone, position: int | None):
    """A robber's own flip on their phone: a wire (from 0 here, 1 on screen) or stop."""
    await robber.page.wait_for_selector("#my-flip-send")
    if position is None:
        await robber.tap('[data-my-stop="1"]', changes=False)
    else:
        await robber.tap(f'[data-my-pos="{position}"]', changes=False)
    await robber.tap("#my-flip-send")


async def everyone_synced(*phones):
    for p in phones:
        await p.synced()


def test_a_3_player_game_by_touch_with_secret_flips_from_two_robber_phones(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await SimTable().start(tmp_path)
        pw, browser = await launch(executable)
        try:
            cops = await Phone.open(t, browser, "cops")
            bob = await Phone.open(t, browser, "bob")
            cat = await Phone.open(t, browser, "cat")
            board = await Phone.open(t, browser, "board", "board")
            for p in (cops, bob, cat):
                await p.pair()
            # The new game, typed and tapped on the cops' phone: Ann the first cops.
            for i, who in enumerate(["Ann", "Bob", "Cat"]):
                await cops.page.fill(f"#name-{i}", who)
            await cops.tap("#start-game")
            await everyone_synced(bob, cat)
            # Bob and Cat say which player their phone is.
            await bob.tap('[data-claim="1"]', changes=False)
            await cat.tap('[data-claim="2"]', changes=False)
            await t.until(lambda: len(t.server.claims) == 2)
            for p in (cops, bob, cat):
                await p.check()

            # Turn 1, Ann the cops: the diamond at 4, the trap at 2.
            await hide(cops, ["alarm", "dye_pack", "alarm", "diamond", "alarm"])
            await everyone_synced(bob, cat)
            assert await bob.page.locator("#hide").count() == 0  # the cops' screen only
            await bob.page.wait_for_selector("#my-flip")
            await bob.check()
            # Bob flips wire 1 (an alarm); Cat waits to choose.
            await secret_flip(bob, 0)
            await everyone_synced(cops, cat, board)
            waiting = await bob.page.text_content("#my-waiting")
            assert "chosen (wire 1)" in waiting and "Waiting for Cat" in waiting
            assert "Chosen on their phones: Bob" in await cops.page.text_content("#controls")
            # Cat flips wire 3 (an alarm): the attempt is judged.
            await secret_flip(cat, 2)
            await everyone_synced(cops, bob, board)
            assert t.referee.state.turn.preset == 1
            # Each robber's phone shows its own die; no other page says which die.
            await bob.page.wait_for_selector("#my-dice")
            assert "1 Alarm" in await bob.page.text_content("#my-dice")
            assert "3 Alarm" not in await bob.page.evaluate(SHOWN_DICE)
            assert "3 Alarm" in await cat.page.text_content("#my-dice")
            assert "1 Alarm" not in await cat.page.evaluate(SHOWN_DICE)
            board_text = await board.page.text_content("body")
            assert "Heist (dice hidden): Bob 1 flipped · Cat 1 flipped" in board_text
            assert "flip 2:1" not in board_text and "wire 1" not in board_text, board_text
            # The cops compare every robber's dice: their phone shows both.
            assert "1 A" in await cops.page.text_content('[data-seat="1"][data-pos="0"]')
            assert "3 A" in await cops.page.text_content('[data-seat="2"][data-pos="2"]')
            for p in (cops, bob, cat, board):
                await p.check()
            # Second attempt: Bob stops on his phone; Cat finds the diamond on hers.
            await secret_flip(bob, None)
            await secret_flip(cat, 3)
            await everyone_synced(cops, bob, board)
            assert t.referee.state.seats[2].diamonds == 1
            assert t.referee.state.phase == "heist_over"

            # The race, on the cops' phone; Escaped!/Arrested! from the page's fold.
            await cops.tap("#go")
            await cops.page.click("#buzz-fold summary")
            # The key to the LED: the getaway cars read from the frame the page shows.
            await cops.page.click("#legend summary")
            key = await cops.page.text_content("#legend-key")
            assert "one dot per getaway car · now: seat 1 Ann 3, seat 2 Bob 3, seat 3 Cat 3" in key
            assert "one dot per diamond · now: seat 1 Ann 0, seat 2 Bob 0, seat 3 Cat 1" in key
            assert "bar on top: this seat is the cops · now: seat 1 Ann" in key
            await cops.check()
            await cops.tap("#stage")
            await cops.tap('[data-buzz="2"]')  # Cat escapes
            await cops.tap("#stage")
            await cops.tap("#stage")
            await cops.tap('[data-buzz="0"]')  # Ann arrests Bob (the fold stays open)
            assert "Car 1" in await cops.page.text_content('[data-impound="1:0"]')
            await cops.tap('[data-impound="1:1"]')
            said = " ".join(t.referee.messages)
            assert "Bob (seat 2) loses getaway car 2" in said  # the car tapped, as shown

            # Turn 2, Bob the cops: his phone hides the row; Ann flips on the cops'
            # phone... no: Ann's own phone is the table's, so she says who she is there.
            await bob.page.wait_for_selector("#hide")
            await hide(bob, ["diamond", "alarm", "alarm", "dye_pack", "alarm"])
            await everyone_synced(cops, cat)
            await cat.page.wait_for_selector("#my-flip")
            await secret_flip(cat, 1)  # an alarm
            # Ann flips on the table's controls (the buttons-only way still works).
            await cops.page.wait_for_selector('[data-seat="0"][data-pos="0"]')
            assert await cops.page.locator('[data-seat="2"][data-pos="0"]').count() == 0
            await cops.tap('[data-seat="0"][data-pos="0"]', changes=False)
            await cops.tap("#flip")
            assert t.referee.state.seats[0].diamonds == 1  # Ann, the cops' left, first
            await cops.tap("#go")
            await cops.tap("#empty")
            await cops.tap('[data-buzz="1"]')  # Bob arrests Ann and Cat
            await cops.tap('[data-impound="0:0"]')
            await cops.tap('[data-impound="2:2"]')
            assert t.referee.state.phase == "game_over"
            for seat, cash in ((0, "20k"), (1, "50000"), (2, "$20,000")):
                await cops.page.fill(f"#cash-{seat}", cash)
                await cops.tap(f'[data-tally="{seat}"]')
            winners = await cops.page.text_content("#winners")
            assert winners == "Winners: Ann ($60,000) and Cat ($60,000)"
            await board.synced()
            assert "Ann" in await board.page.text_content("#winners")
            for p in (cops, bob, cat, board):
                await p.check()

            # The next game, from the page: a 2-player game in a new log.
            await cops.page.wait_for_selector("#start-game")
            await cops.tap('button[data-players="2"]', changes=False)
            await cops.page.fill("#name-0", "Dan")
            await cops.page.fill("#name-1", "Eve")
            await cops.tap("#start-game")
            assert t.referee.state.phase == "heist_hide"
            assert [s.name for s in t.referee.state.seats] == ["Dan", "Eve"]
            assert t.referee.log.path != t.log.path  # the finished game kept its log
            assert t.referee.rejections == 0
            await cops.check()
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_after_a_restart_the_page_asks_for_the_pin_and_no_tap_is_lost(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await SimTable().start(tmp_path)
        pw, browser = await launch(executable)
        try:
            phone = await Phone.open(t, browser, "phone")
            await phone.pair()
            await phone.page.click('button[data-players="2"]')
            await phone.tap("#start-game")
            await hide(phone, ["alarm", "dye_pack", "diamond", "alarm", "alarm"])
            await phone.tap('[data-seat="1"][data-stop="1"]', changes=False)
            await phone.tap("#flip")
            await phone.page.wait_for_selector("#go")
            # The box restarts (its page server anew: every session forgotten). A tap
            # made before the page knows is not lost: it waits for the PIN.
            port = t.server.port
            await t.server.stop()
            await t.serve(port)
            await phone.page.click("#go")
            await phone.page.wait_for_selector("#pair-card:not([hidden])")
            assert await phone.page.text_content("#pair-title") == (
                "This phone is no longer paired")
            assert "Not sent: this phone is no longer paired" in await phone.page.text_content(
                "#notice")
            assert "The sim shows it among its messages" in await phone.page.text_content(
                "#pin-where")
            assert t.referee.state.phase == "heist_over"
            await phone.check()
            await phone.pair()
            await t.until(lambda: t.referee.state.phase == "assault")  # the tap, sent
            # Another restart, the page idle: it says so by itself, before any tap.
            await t.server.stop()
            await t.serve(port)
            await phone.page.wait_for_selector("#pair-card:not([hidden])", timeout=10000)
            assert await phone.page.locator("#controls button").count() == 0
            assert await phone.page.text_content("#pair-title") == (
                "This phone is no longer paired")
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())
