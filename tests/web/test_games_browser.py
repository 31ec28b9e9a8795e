"""The other games played by tapping the page in Chromium (Playwright): start Vault
(abstract) from the page and play the scripted game's moves by tapping pawn then cell;
The Big Score's secret choices and reveal; Vault (solitaire)'s roll and the helper's
suggestion played by one tap."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_browser import RIGHTMOST, Table, chromium_or_skip, launch

from companion.gamelog import read_log
from companion.games import registry

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def events(script):
    return [ev for _, ev in read_log(SCRIPTS / script).events]


async def paired_page(t, browser):
    page = await browser.new_page(viewport={"width": 360, "height": 740})
    await page.goto(t.server.url)
    await page.fill("#pin", t.server.pairing.pin)
    await page.click("#pair-form button")
    await page.wait_for_selector("#start-other")
    return page


async def tap(t, page, selector):
    seq = t.server.history.seq
    await page.click(selector)
    await t.until(lambda: t.server.history.seq > seq)
    await page.wait_for_selector(f'body[data-seq="{t.server.history.seq}"]')


def test_abstract_game_by_taps_equals_the_scripted_game(tmp_path):
    executable = chromium_or_skip()
    evs = events("vault-abstract.jsonl")

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await paired_page(t, browser)
            await page.click('[data-game="vault-abstract"]')
            await page.fill("#other-names", "Wanda, Boris")
            await tap(t, page, "#start-other")
            for ev in evs[1:]:
                await page.click(f'#abstract-board [data-cell="{ev["from"]}"]')
                await page.wait_for_selector(f'#abstract-board td.dest[data-cell="{ev["to"]}"]')
                await tap(t, page, f'#abstract-board [data-cell="{ev["to"]}"]')
            final = registry.default().new_state()
            for ev in evs:
                final = registry.judge(final, ev).state
            assert registry.summary(t.referee.state) == registry.summary(final)
            assert t.referee.rejections == 0
            assert "Wanda" in await page.text_content("#winners")
            assert await page.evaluate(RIGHTMOST) <= 360
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())


def test_big_score_choices_and_solitaire_suggestion_by_touch(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        pw, browser = await launch(executable)
        try:
            page = await paired_page(t, browser)
            await page.click('[data-game="big-score"]')
            await page.fill("#other-names", "Ann, Bob")
            await page.fill("#other-floor", "artifact,silver,cash20,diamond,key")
            await tap(t, page, "#start-other")
            await tap(t, page, '[data-flee="0"]')
            assert "chosen" in await page.text_content('tr[data-seat="0"]')
            await tap(t, page, "#close-choices")  # Bob robs
            await page.select_option('[data-token="1"]', "cash50")
            await tap(t, page, "#reveal")
            state = t.referee.state
            assert [p.status for p in state.players] == ["fled", "in"]
            assert "cash50" in state.players[1].vault
            assert await page.evaluate(RIGHTMOST) <= 360
            await page.close()
            # A new table for the solitaire.
            await t.close()
            t2 = await Table().start(tmp_path / "game-2.jsonl")
            try:
                page = await paired_page(t2, browser)
                await page.click('[data-game="vault-solitaire"]')
                await page.fill("#other-names", "Sam")
                await tap(t2, page, "#start-other")
                for i, v in enumerate([5, 6, 4, 6, 5]):
                    await page.select_option(f'[data-die="{i}"]', str(v))
                await tap(t2, page, "#roll")
                reason = await page.text_content("#suggestion")
                assert reason and reason.startswith(("Mark", "Power", "Re-roll", "Pass", "Feed"))
                before = t2.referee.state.events_applied
                await tap(t2, page, "#play-suggestion")
                assert t2.referee.state.events_applied == before + 1
                assert t2.referee.rejections == 0
            finally:
                await t2.close()
                t = None
        finally:
            await browser.close()
            await pw.stop()
            if t is not None:
                await t.close()

    asyncio.run(go())
