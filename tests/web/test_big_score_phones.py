"""The Big Score's private choosing screens in Chromium (Playwright): two phones (two
browser contexts, two sessions on the box) each say which player they are, choose
Rob or Flee on their own screen, never see the other's choice, and both see the
reveal when the window closes."""

from __future__ import annotations

import asyncio
import re

from test_browser import RIGHTMOST, Table, chromium_or_skip, launch

from companion.window_timer import WindowTimer

PHONE = {"width": 360, "height": 740}


async def phone(t, browser):
    context = await browser.new_context(viewport=PHONE)
    page = await context.new_page()
    await page.goto(t.server.url)
    await page.fill("#pin", t.server.pairing.pin)
    await page.click("#pair-form button")
    await page.wait_for_selector("#controls .card")
    return context, page


async def text_when(page, selector, ok, *, every=False, seconds=10.0):
    """The text of `selector` once ok(text) holds, polled from Python: the page's CSP
    forbids the string evaluation wait_for_function would poll with."""
    text = ""
    for _ in range(int(seconds / 0.05)):
        if every:
            texts = [await e.text_content() or "" for e in await page.query_selector_all(selector)]
            text = " | ".join(texts)
        else:
            text = await page.text_content(selector) or ""
        if ok(text):
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"{selector} never matched; last text {text!r}")


def test_two_phones_choose_privately_then_both_see_the_reveal(tmp_path):
    executable = chromium_or_skip()

    async def go():
        t = await Table().start(tmp_path / "game-1.jsonl")
        timer = WindowTimer(t.referee, t.table.post, 120)  # long: the phones close it
        t.table.tick_hooks.append(timer.check)
        t.server.window_timer = timer  # the page's seconds left
        pw, browser = await launch(executable)
        try:
            ctx_a, ann = await phone(t, browser)
            await ann.click('[data-game="big-score"]')
            await ann.click('[data-count="2"]')
            await ann.fill("#other-name-0", "Ann")
            await ann.fill("#other-name-1", "Bob")
            for tok in ("artifact", "silver", "cash20", "diamond", "key"):
                await ann.click(f'[data-floor="{tok}"]')
            await ann.click('[data-first="0"]')  # no Act I tokens: a tie, Ann the youngest
            await ann.click("#start-other")
            await ann.wait_for_selector('[data-claim="0"]')
            ctx_b, bob = await phone(t, browser)
            await ann.click('[data-claim="0"]')
            await bob.click('[data-claim="1"]')
            for page, who in ((ann, "Ann"), (bob, "Bob")):
                await page.wait_for_selector("#my-choice")
                assert await page.text_content("#my-choice h2") == f"{who}: Rob or Flee?"
                # Only this player's two buttons: no other seat's, no closing the window.
                assert await page.query_selector("[data-flee], [data-rob], #close-choices") is None
                left = await text_when(page, "#my-choice [data-seconds-left]",
                                       lambda s: s.endswith(" s left"))
                assert re.fullmatch(r"\d+ s left", left) and 0 < int(left.split()[0]) <= 120
            assert t.server.claims and sorted(t.server.claims.values()) == [0, 1]

            await ann.click("#my-flee")
            await ann.wait_for_selector("#my-waiting")
            await text_when(bob, "td.name", lambda s: "chosen" in s, every=True)
            for page in (ann, bob):  # chosen, never what, on either screen
                text = await page.text_content("body")
                assert "flees" not in text and "robs" not in text
            assert "waiting for the others" in await ann.text_content("#my-waiting")
            assert await bob.query_selector("#my-choice") is not None

            await bob.click("#my-rob")
            for page in (ann, bob):
                await page.wait_for_selector("#revealed")
                assert await page.text_content('[data-revealed="0"]') == "Ann flees"
                assert await page.text_content('[data-revealed="1"]') == "Bob robs"
                assert await page.evaluate(RIGHTMOST) <= PHONE["width"]
            assert [p.flee for p in t.referee.state.players] == [True, False]
            assert t.referee.rejections == 0
            await ctx_a.close()
            await ctx_b.close()
        finally:
            await browser.close()
            await pw.stop()
            await t.close()

    asyncio.run(go())
