"""Screenshots of the table page in the other games (no pytest needed).

    .venv/bin/python benchmarks/page_games.py docs

Plays part of tests/scripts/vault-abstract.jsonl and big-score-3p.jsonl through a
TableLoop with the page on 127.0.0.1 and saves the paired phone page (360x740, full
page) with Debian's Chromium through Playwright: page-abstract.png (a pawn selected,
its legal destinations lit), page-big-score.png (the choosing window, one seat has
chosen) and page-big-score-phone.png (a phone that said it is Bob's: his private Rob/Flee
and the seconds left). Prints one line per file.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from page_gallery import PHONE, chromium

from companion.gamelog import GameLog, read_log
from companion.loop import Referee, TableLoop
from companion.web.server import start_page
from companion.window_timer import WindowTimer

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"
# (picture, script, events played, what to tap first and what to wait for then, or None)
SHOTS = (
    ("page-abstract.png", "vault-abstract.jsonl", 7,
     ('#abstract-board [data-cell="a5"]', "#abstract-board td.dest")),
    ("page-big-score.png", "big-score-3p.jsonl", 2, None),
    ("page-big-score-phone.png", "big-score-3p.jsonl", 2, ('[data-claim="1"]', "#my-choice")),
)
CHOOSE_SECONDS = 10  # [table] choose_seconds' default


async def shoot(browser, out: Path, name: str, script: str, n: int,
                tap: tuple[str, str] | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="page-games-"))
    log = GameLog(tmp / "game-1.jsonl", fsync=False)
    referee = Referee(log=log)
    table = TableLoop(referee)
    timer = WindowTimer(referee, table.post, CHOOSE_SECONDS)
    table.tick_hooks.append(timer.check)
    await table.start()
    server = await start_page(table, "127.0.0.1", 0, "2468", window_timer=timer)
    try:
        for _, ev in list(read_log(SCRIPTS / script).events)[:n]:
            await table.submit(ev)
        page = await browser.new_page(viewport=PHONE)
        await page.goto(server.url)
        await page.fill("#pin", "2468")
        await page.click("#pair-form button")
        await page.wait_for_selector("#controls .card")
        if tap:
            await page.click(tap[0])
            await page.wait_for_selector(tap[1])
            await page.evaluate("window.scrollTo(0, 0)")  # the sticky header on top
        await page.screenshot(path=str(out / name), full_page=True)
        print(out / name)
        await page.close()
    finally:
        await server.stop()
        await table.stop()
        log.close()


async def main(out: Path) -> int:
    from playwright.async_api import async_playwright

    out.mkdir(parents=True, exist_ok=True)
    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path=chromium(),
                                       args=["--no-sandbox", "--disable-gpu"])
    try:
        for shot in SHOTS:
            await shoot(browser, out, *shot)
    finally:
        await browser.close()
        await pw.stop()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    sys.exit(asyncio.run(main(ap.parse_args().out_dir)))
