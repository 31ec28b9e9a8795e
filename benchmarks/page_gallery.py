"""Screenshots of the table page for people to look at (no pytest needed).

    .venv/bin/python benchmarks/page_gallery.py OUT_DIR          # every screen
    .venv/bin/python benchmarks/page_gallery.py docs --docs      # the pictures docs/ shows

Plays tests/scripts/game-3p.jsonl through a TableLoop with the page served on
127.0.0.1 as `companion sim --page` serves it (the sim's objects, in-process) and, at
chosen moments, saves the phone page (paired, 360x740), the unpaired phone page and the
spectator board (1280x800) with Debian's Chromium through Playwright. Then a 3-player
heist with the robbers flipping in secret on their own phones (Bob's phone, and the
board showing no die), the key to the LED board, a page whose session the box forgot
after a restart, and the next game's card. Prints one line per file.

With --docs only the pictures the docs embed are written, under their names there:
page-phone.png, page-board.png, page-secret-flip.png, page-secret-board.png,
page-legend.png, page-pair-again.png, page-next-game.png.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from companion.events import decode, is_comment
from companion.gamelog import GameLog
from companion.interactive import new_log_after_game_over
from companion.loop import Referee, TableLoop
from companion.web.server import start_page

SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "scripts" / "game-3p.jsonl"
PHONE = {"width": 360, "height": 740}
WIDE = {"width": 1280, "height": 800}
PIN = "2468"
# After how many script events to take which pictures.
SHOTS = {
    0: ["phone-new-game"],
    1: ["phone-hide"],
    3: ["phone-heist"],
    5: ["phone-race"],
    12: ["board-race"],
    13: ["phone-impound"],
    25: ["phone-unpaired"],
    29: ["phone-tally"],
    31: ["phone-gameover", "board-gameover"],
}
# The docs' pictures: their name in docs/ <- the screen's name here.
DOCS = {
    "phone-race": "page-phone",
    "board-gameover": "page-board",
    "phone-secret-flip": "page-secret-flip",
    "board-secret-heist": "page-secret-board",
    "phone-legend": "page-legend",
    "phone-pair-again": "page-pair-again",
    "phone-next-game": "page-next-game",
}
NEW_3P = {"type": "new_game", "game": "vault-assault", "players": 3,
          "names": ["Ann", "Bob", "Cat"], "first_cop": 0}
ROW = ["alarm", "dye_pack", "alarm", "diamond", "alarm"]


def chromium() -> str:
    path = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if os.path.exists(path):
        return path
    found = shutil.which("chromium")
    if not found:
        sys.exit("page_gallery: no Chromium: apt-get install chromium")
    return found


class Gallery:
    def __init__(self, out: Path, docs_only: bool, server, browser) -> None:
        self.out, self.docs_only, self.server, self.browser = out, docs_only, server, browser

    async def page(self, viewport, path: str = "", scale: int = 2):
        context = await self.browser.new_context(viewport=viewport,
                                                 device_scale_factor=scale)
        page = await context.new_page()
        await page.goto(self.server.url + path)
        return page

    async def pair(self, page) -> None:
        await page.fill("#pin", PIN)
        await page.click("#pair-form button")
        await page.wait_for_selector("#device-card:not([hidden])")

    async def synced(self, page) -> None:
        await page.wait_for_selector(f'body[data-seq="{self.server.history.seq}"]')

    async def save(self, page, name: str, *, top: str | None = None) -> None:
        """The screen as it is (scrolled to `top`'s element, else the top)."""
        target = DOCS.get(name) if self.docs_only else name
        if target is None:
            return
        if top:  # under the sticky header
            await page.evaluate(f"window.scrollTo(0, document.querySelector({json.dumps(top)})"
                                ".getBoundingClientRect().top + window.scrollY - 52)")
        else:
            await page.evaluate("window.scrollTo(0, 0)")
        await asyncio.sleep(0.3)  # the LED canvas and layout settle
        path = self.out / f"{target}.png"
        await page.screenshot(path=str(path))
        print(path)


async def main(out: Path, docs_only: bool) -> int:
    from playwright.async_api import async_playwright

    out.mkdir(parents=True, exist_ok=True)
    events = [decode(line) for line in SCRIPT.read_text().splitlines() if not is_comment(line)]
    tmp = Path(tempfile.mkdtemp(prefix="page-gallery-"))
    # An earlier game in the log folder, so the "Earlier games" list shows one.
    with GameLog(tmp / "game-20261122-200000.jsonl", fsync=False) as earlier:
        for ev in events:
            earlier.append(ev)
    log = GameLog(tmp / "game-20261123-200000.jsonl", fsync=False)
    referee = Referee(log=log)
    table = TableLoop(referee, stamp_missing=False)  # the script's own times, as sim does
    table.before_submit.append(lambda event: new_log_after_game_over(referee, event))
    await table.start()
    server = await start_page(table, "127.0.0.1", 0, PIN, new_game_after_over=True)
    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    g = Gallery(out, docs_only, server, browser)
    try:
        phone = await g.page(PHONE)
        await g.pair(phone)
        stranger = await g.page(PHONE)
        board = await g.page(WIDE, "board", scale=1)

        async def shoot(name: str) -> None:
            page = {"phone": phone, "board": board}[name.split("-")[0]]
            if name == "phone-unpaired":
                page = stranger
            await g.synced(page)
            if name == "phone-race":  # a Bang! being chosen
                await page.click('[data-bang="2"]')
            if name == "phone-tally":
                await page.fill("#cash-2", "30000")
            if name == "phone-new-game":
                for i, who in enumerate(["Ann", "Bob", "Cat"]):
                    await page.fill(f"#name-{i}", who)
                await page.evaluate("document.activeElement.blur()")
            await g.save(page, name)

        for name in SHOTS.get(0, []):
            await shoot(name)
        for n, event in enumerate(events, 1):
            await table.submit(event)
            for name in SHOTS.get(n, []):
                await shoot(name)
        if not docs_only:
            full = out / "phone-gameover-full.png"
            await phone.screenshot(path=str(full), full_page=True)
            print(full)

        # The next game's card, on the phone, after the game is over.
        await phone.wait_for_selector("#start-game")
        for i, who in enumerate(["Ann", "Bob", "Cat"]):
            await phone.fill(f"#name-{i}", who)
        await phone.evaluate("document.activeElement.blur()")
        await g.save(phone, "phone-next-game", top="#controls")

        # A 3-player heist, each robber flipping in secret on their own phone.
        await table.submit(NEW_3P)
        await table.submit({"type": "heist_hide", "row": ROW})
        bob = await g.page(PHONE)
        await g.pair(bob)
        await bob.click('[data-claim="1"]')
        await bob.wait_for_selector("#my-flip")
        await table.submit({"type": "heist_flip", "seat": 2, "position": 0})  # Cat's phone
        await bob.click('[data-my-pos="2"]')
        await g.synced(bob)
        await g.save(bob, "phone-secret-flip", top="#my-flip")
        await g.synced(board)
        await g.save(board, "board-secret-heist")

        # The key to the LED board, in the race.
        await bob.click("#my-flip-send")
        await table.submit({"type": "heist_attempt", "flips": [{"seat": 1, "position": 3},
                                                               {"seat": 2, "stop": True}]})
        await table.submit({"type": "assault_start"})
        await table.submit({"type": "stage", "stage": 1})
        await g.synced(phone)
        await phone.click("#legend summary")
        await asyncio.sleep(2.5)  # the STAGE 1 flash gives way to the board
        await g.save(phone, "phone-legend", top="#legend")

        # The box restarts: the page says so before a tap is lost.
        port = server.port
        await server.stop()
        server = await start_page(table, "127.0.0.1", port, PIN, new_game_after_over=True)
        g.server = server
        await phone.wait_for_selector("#pair-card:not([hidden])", timeout=10000)
        await g.save(phone, "phone-pair-again", top="#pair-card")
        print(json.dumps({"events": len(events), "rejections": referee.rejections}))
    finally:
        await browser.close()
        await pw.stop()
        await server.stop()
        await table.stop()
        if referee.log is not None:
            referee.log.close()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--docs", action="store_true",
                    help="only the pictures docs/ embeds, under their names there")
    args = ap.parse_args()
    sys.exit(asyncio.run(main(args.out, args.docs)))
