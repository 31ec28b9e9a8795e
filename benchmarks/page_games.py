"""Screenshots of the table page in the other games (no pytest needed).

    .venv/bin/python benchmarks/page_games.py docs

Plays part of a script of tests/scripts/ through a TableLoop with the page on
127.0.0.1 (as `companion sim --page` serves it: after a game the page starts the next),
taps the paired phone page (360x740) as a player would and saves it with Debian's
Chromium through Playwright. Prints one line per file:

- page-big-score-setup.png: a new Big Score from the page, Act I's results entered;
- page-big-score.png: the choosing window, one seat has chosen;
- page-big-score-phone.png: a phone that said it is Bob's: his private Rob/Flee and the
  seconds left;
- page-big-score-reveal.png: the fists open, the tokens drawn being tapped;
- page-big-score-over.png: the phone's screen at the end: the winner, the next game's card;
- page-big-score-payouts.png: the scoreboard at the end: each player's payouts;
- page-solitaire.png: the board mid-game, a square tapped and the sums that mark it;
- page-solitaire-roll.png: the roll entered by tapping faces;
- page-solitaire-over.png: the final score and "Play again";
- page-abstract.png: a pawn selected, its legal destinations lit;
- page-abstract-over.png: the winner and the next game's card.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from page_gallery import PHONE, chromium

from companion.gamelog import GameLog, read_log
from companion.interactive import new_log_after_game_over
from companion.loop import Referee, TableLoop
from companion.web.server import start_page
from companion.window_timer import WindowTimer

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"
BIG_SETUP = [  # the script's Act I, tapped
    '[data-game="big-score"]', '[data-count="3"]', "fill #other-name-0 Ann",
    "fill #other-name-1 Bob", "fill #other-name-2 Cat",
    '[data-cash-step="0:100"]', '[data-step="0:diamonds:1"]', '[data-step="0:diamonds:1"]',
    '[data-step="0:artifacts:1"]', '[data-step="0:hard_drives:1"]', '[data-expert="0:gun_man"]',
    *['[data-cash-step="1:10"]'] * 5, '[data-step="1:artifacts:1"]',
    '[data-step="1:artifacts:1"]', '[data-step="1:hard_drives:1"]',
    '[data-step="1:hard_drives:1"]', '[data-expert="1:hacker"]',
    '[data-cash-step="2:100"]', '[data-cash-step="2:100"]', '[data-step="2:diamonds:1"]',
    '[data-expert="2:driver"]',
    '[data-floor="artifact"]', '[data-floor="silver"]', '[data-floor="cash20"]',
]
# (picture, script, events played, taps ("fill SELECTOR TEXT" types), what to wait for
# then, the part shown (None: the whole page; "viewport": the phone's screen))
SHOTS = (
    ("page-big-score-setup.png", "big-score-3p.jsonl", 0, BIG_SETUP, "#game-setup",
     "#game-setup"),
    ("page-big-score.png", "big-score-3p.jsonl", 2, [], "#controls .card", None),
    ("page-big-score-phone.png", "big-score-3p.jsonl", 2, ['[data-claim="1"]'], "#my-choice",
     None),
    ("page-big-score-reveal.png", "big-score-3p.jsonl", 4,
     ['[data-token="0"] [data-token-kind="cash50"]'], "#reveal", "#controls"),
    ("page-big-score-over.png", "big-score-3p.jsonl", 99, [], "#game-setup", "viewport"),
    ("page-big-score-payouts.png", "big-score-3p.jsonl", 99, [], "#game-setup",
     "section.card:has(#score)"),
    ("page-solitaire.png", "vault-solitaire.jsonl", 11, ['[data-sq="f1"]'], "#ways",
     "#controls"),
    ("page-solitaire-roll.png", "vault-solitaire.jsonl", 1,
     ['.faces [data-face="5"]', '.faces [data-face="6"]', '.faces [data-face="4"]'], "#roll",
     "#controls"),
    ("page-solitaire-over.png", "vault-solitaire.jsonl", 99, [], "#game-setup", None),
    ("page-abstract.png", "vault-abstract.jsonl", 7, ['#abstract-board [data-cell="a5"]'],
     "#abstract-board td.dest", None),
    ("page-abstract-over.png", "vault-abstract.jsonl", 99, [], "#game-setup", None),
)
CHOOSE_SECONDS = 10  # [table] choose_seconds' default


async def shoot(browser, out: Path, name: str, script: str, n: int, taps: list[str],
                wait: str, part: str | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="page-games-"))
    log = GameLog(tmp / "game-1.jsonl", fsync=False)
    referee = Referee(log=log)
    table = TableLoop(referee)
    table.before_submit.append(lambda ev: new_log_after_game_over(referee, ev))
    timer = WindowTimer(referee, table.post, CHOOSE_SECONDS)
    table.tick_hooks.append(timer.check)
    await table.start()
    server = await start_page(table, "127.0.0.1", 0, "2468", window_timer=timer,
                              new_game_after_over=True)
    try:
        for _, ev in list(read_log(SCRIPTS / script).events)[:n]:
            await table.submit(ev)
        page = await browser.new_page(viewport=PHONE)
        await page.goto(server.url)
        await page.fill("#pin", "2468")
        await page.click("#pair-form button")
        await page.wait_for_selector("#controls .card")
        for tap in taps:
            if tap.startswith("fill "):
                _, selector, text = tap.split(" ", 2)
                await page.fill(selector, text)
            else:
                await page.click(tap)
        await page.wait_for_selector(wait)
        await page.evaluate("window.scrollTo(0, 0)")  # the sticky header on top
        await asyncio.sleep(0.2)  # the LED's first frame
        if part == "viewport":
            await page.screenshot(path=str(out / name))
        elif part:
            await page.evaluate("document.querySelector('header').style.position = 'static'")
            await page.locator(part).screenshot(path=str(out / name))
        else:
            await page.screenshot(path=str(out / name), full_page=True)
        print(out / name)
        await page.close()
    finally:
        await server.stop()
        await table.stop()
        if referee.log is not None and referee.log is not log:
            referee.log.close()
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
