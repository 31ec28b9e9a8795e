"""Benchmark: the table page on 127.0.0.1: load size and time, button press to page
latency, and the memory the web server adds.

    .venv/bin/python benchmarks/page_latency.py [--presses 500] [--loads 20]

Everything runs as `companion sim --page` wires it, in one process and one loop: a
TableLoop, simulated seat buttons (gpiozero mock pins, pressed from another thread as
gpiozero's callbacks arrive) through the settle window, and the page server.

(a) Page load: bytes of the page, its CSS and JS and the first /api/state; time from
    navigation to the first state drawn (body[data-seq] set), in Debian's Chromium,
    each load in a fresh browser context (nothing cached); median and max.
(b) Update latency: a robber's button pressed during the race (an Escaped!, through the
    5 ms settle window, logged with fsync) until (1) a WebSocket client in this process
    has the new state, and (2) the page in Chromium has drawn it (a MutationObserver
    stamps performance.timeOrigin + now(), the same wall clock as time.time()). After
    each press an `undo` puts the race back. p50/p99 over N presses.
(c) Memory: this process's RSS before the web server is imported and once it serves;
    then its growth during the presses with two pages open (the browser is another
    process; the benchmark's own clients are counted apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from companion.buzzers import BuzzerInput, attach_buttons
from companion.gamelog import GameLog
from companion.hardware.buttons import DEFAULT_PINS
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop

ROW5 = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]
OBSERVER = """
window.__seen = [];
new MutationObserver(() => {
  window.__seen.push([Number(document.body.dataset.seq),
                      performance.timeOrigin + performance.now()]);
}).observe(document, {subtree: true, attributes: true,
                   attributeFilter: ["data-seq"]});
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def chromium() -> str | None:
    path = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    return path if os.path.exists(path) else shutil.which("chromium")


async def main(presses: int, loads: int) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="page-latency-"))
    log = GameLog(tmp / "game-1.jsonl")  # fsync'd, as on the box
    referee = Referee(log=log)
    table = TableLoop(referee)
    await table.start()
    buzzers = BuzzerInput(table)
    buttons = attach_buttons(buzzers, DEFAULT_PINS, make_pin_factory("mock"))
    for event in (
        {"type": "new_game", "game": "vault-assault", "players": 3,
         "names": ["Ann", "Bob", "Cat"], "first_cop": 0},
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
        {"type": "assault_start"},
    ):
        assert (await table.submit(event)).rejection is None
    await asyncio.sleep(0.3)
    rss_before = rss_mb()

    import aiohttp

    from companion.web.server import start_page

    server = await start_page(table, "127.0.0.1", 0, "2468")
    await asyncio.sleep(0.3)
    rss_serving = rss_mb()
    print(f"web server memory: RSS {rss_before:.1f} MB before aiohttp/companion.web, "
          f"{rss_serving:.1f} MB serving (+{rss_serving - rss_before:.1f} MB)")

    # (a) sizes
    async with aiohttp.ClientSession() as http:
        sizes = {}
        for path in ("", "static/app.css", "static/app.js", "api/state"):
            async with http.get(server.url + path) as r:
                sizes[path or "index.html"] = len(await r.read())
    total = sum(sizes.values())
    print("page load size: " + ", ".join(f"{k} {v:,} B" for k, v in sizes.items())
          + f"; total {total:,} B ({total / 1024:.1f} KiB), no other requests")

    exe = chromium()
    pw = browser = None
    if exe is None:
        print("page load time / browser latency: skipped (no Chromium: apt-get install chromium)")
    else:
        from playwright.async_api import async_playwright

        pw = await async_playwright().start()
        browser = await pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        times = []
        for _ in range(loads):
            ctx = await browser.new_context(viewport={"width": 360, "height": 740})
            page = await ctx.new_page()
            t0 = time.perf_counter()
            await page.goto(server.url)
            await page.wait_for_selector("body[data-seq]")
            times.append((time.perf_counter() - t0) * 1000)
            await ctx.close()
        print(f"page load time (navigation to first state drawn, cold, {loads} loads): "
              f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms")

    # (b) latency
    rss_clients = rss_mb()  # includes the Playwright driver's Python side, when used
    loop = asyncio.get_running_loop()
    received: dict[int, float] = {}
    async with aiohttp.ClientSession() as http:
        ws = await http.ws_connect(server.url + "api/ws")

        async def reader() -> None:
            async for msg in ws:
                data = json.loads(msg.data)
                if data.get("kind") == "state":
                    received.setdefault(data["history_seq"], time.time())

        reader_task = asyncio.create_task(reader())
        pages = []
        if browser is not None:
            for _ in range(2):  # two phones watching
                page = await browser.new_page(viewport={"width": 360, "height": 740})
                await page.add_init_script(OBSERVER)
                await page.goto(server.url)
                await page.wait_for_selector("body[data-seq]")
                pages.append(page)
        pressed: dict[int, float] = {}

        def press(seat: int) -> float:
            t = time.time()
            buttons.press(seat)
            return t

        for i in range(presses):
            seat = 1 + i % 2
            seq = server.history.seq + 1
            pressed[seq] = await loop.run_in_executor(None, press, seat)
            end = time.monotonic() + 5
            while seq not in received and time.monotonic() < end:
                await asyncio.sleep(0.001)
            if pages:  # both pages drawn it before the next press
                for page in pages:
                    await page.wait_for_selector(f'body[data-seq="{seq}"]', timeout=5000)
            result = await table.submit({"type": "undo"})
            assert result.rejection is None, result.rejection
            await asyncio.sleep(0.02)
        ws_ms = [(received[s] - t) * 1000 for s, t in pressed.items() if s in received]
        print(f"button press -> state on a WebSocket client ({len(ws_ms)}/{presses} presses, "
              f"settle window {buzzers.config.settle_ns / 1e6:g} ms and fsync included): "
              f"p50 {pct(ws_ms, 50):.2f} ms, p99 {pct(ws_ms, 99):.2f} ms, "
              f"max {max(ws_ms):.2f} ms")
        for n, page in enumerate(pages, 1):
            seen = {int(s): t / 1000 for s, t in await page.evaluate("window.__seen")}
            ms = [(seen[s] - t) * 1000 for s, t in pressed.items() if s in seen]
            print(f"button press -> drawn on page {n} in Chromium ({len(ms)}/{presses}): "
                  f"p50 {pct(ms, 50):.2f} ms, p99 {pct(ms, 99):.2f} ms, max {max(ms):.2f} ms")
        rss_after = rss_mb()
        print(f"web server memory during {presses} presses with 2 pages + 1 socket open: "
              f"+{rss_after - rss_clients:.1f} MB (RSS {rss_after:.1f} MB, of which the "
              f"benchmark's own Playwright/aiohttp clients {rss_clients - rss_serving:.1f} MB)")
        await ws.close()
        reader_task.cancel()
    if browser is not None:
        await browser.close()
        await pw.stop()
    await server.stop()
    buttons.close()
    await table.stop()
    log.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=500)
    ap.add_argument("--loads", type=int, default=20)
    a = ap.parse_args()
    sys.exit(asyncio.run(main(a.presses, a.loads)))
