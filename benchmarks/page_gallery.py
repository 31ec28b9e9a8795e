"""Screenshots of the table page for people to look at (no pytest needed).

    .venv/bin/python benchmarks/page_gallery.py OUT_DIR

Plays tests/scripts/game-3p.jsonl through a TableLoop with the page served on
127.0.0.1 (the sim's objects, in-process) and, at chosen moments, saves the phone
page (paired, 360x740), the unpaired phone page and the spectator board (1280x800)
with Debian's Chromium through Playwright. Prints one line per file.
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
from companion.loop import Referee, TableLoop
from companion.web.server import start_page

SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "scripts" / "game-3p.jsonl"
PHONE = {"width": 360, "height": 740}
WIDE = {"width": 1280, "height": 800}
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


def chromium() -> str:
    path = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if os.path.exists(path):
        return path
    found = shutil.which("chromium")
    if not found:
        sys.exit("page_gallery: no Chromium: apt-get install chromium")
    return found


async def main(out: Path) -> int:
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
    await table.start()
    server = await start_page(table, "127.0.0.1", 0, "2468")
    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    try:
        phone = await browser.new_page(viewport=PHONE, device_scale_factor=2)
        await phone.goto(server.url)
        await phone.fill("#pin", server.pairing.pin)
        await phone.click("#pair-form button")
        await phone.wait_for_selector("#device-card:not([hidden])")
        stranger = await browser.new_page(viewport=PHONE, device_scale_factor=2)
        await stranger.goto(server.url)
        board = await browser.new_page(viewport=WIDE)
        await board.goto(server.url + "board")

        async def shoot(name: str) -> None:
            page = {"phone": phone, "board": board}[name.split("-")[0]]
            if name == "phone-unpaired":
                page = stranger
            seq = server.history.seq
            await page.wait_for_selector(f'body[data-seq="{seq}"]')
            if name == "phone-race":  # a Bang! being chosen
                await page.click('[data-bang="2"]')
            if name == "phone-tally":
                await page.fill("#cash-2", "30000")
            if name == "phone-new-game":
                for i, who in enumerate(["Ann", "Bob", "Cat"]):
                    await page.fill(f"#name-{i}", who)
                await page.evaluate("document.activeElement.blur()")
            await page.evaluate("window.scrollTo(0, 0)")
            await asyncio.sleep(0.3)  # the LED canvas and layout settle
            path = out / f"{name}.png"
            await page.screenshot(path=str(path))
            print(path)

        for name in SHOTS.get(0, []):
            await shoot(name)
        for n, event in enumerate(events, 1):
            await table.submit(event)
            for name in SHOTS.get(n, []):
                await shoot(name)
        full = out / "phone-gameover-full.png"
        await phone.screenshot(path=str(full), full_page=True)
        print(full)
        print(json.dumps({"events": len(events), "rejections": referee.rejections}))
    finally:
        await browser.close()
        await pw.stop()
        await server.stop()
        await table.stop()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    sys.exit(asyncio.run(main(ap.parse_args().out)))
