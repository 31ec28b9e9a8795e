"""Benchmark: events applied per second by the pure engine, and the latency from a
simulated button press to the display update inside the event loop.

    .venv/bin/python benchmarks/engine_bench.py [--presses N]

The press is made on a gpiozero MockFactory pin from a separate thread (as gpiozero
calls back on lgpio's thread on a Pi); the clock starts just before the pin is driven
low and stops when a display receives the frame showing the escape. Run with and
without the fsync'd game log, since every accepted event is on disk before it shows.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from companion.events import decode, is_comment
from companion.gamelog import GameLog
from companion.hardware.buttons import SeatButtons
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop
from companion.rules.engine import apply, new_state

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"


def accepted_events() -> list[list[dict]]:
    games = []
    for script in sorted(SCRIPTS.glob("game-*.jsonl")):
        state, events = new_state(), []
        for line in script.read_text().splitlines():
            if is_comment(line):
                continue
            ev = decode(line)
            r = apply(state, ev)
            if r.rejection is None:
                events.append(ev)
                state = r.state
        games.append(events)
    return games


def engine_throughput(seconds: float = 2.0) -> tuple[float, int]:
    games = accepted_events()
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for events in games:
            s = new_state()
            for ev in events:
                s = apply(s, ev).state
            n += len(events)
    return n / (time.perf_counter() - start), n


class StampingDisplay:
    def __init__(self) -> None:
        self.shown_escaped = threading.Event()
        self.t_shown = 0

    def show(self, view) -> None:
        turn = view.state.turn
        if turn and 1 in turn.escaped and not self.shown_escaped.is_set():
            self.t_shown = time.perf_counter_ns()
            self.shown_escaped.set()


async def press_latency(presses: int, log_path: Path | None) -> list[float]:
    display = StampingDisplay()
    log = GameLog(log_path) if log_path else None
    ref = Referee(log=log, displays=[display])
    table = TableLoop(ref)
    await table.start()
    buttons = SeatButtons(
        [17, 27, 22], table.on_press, pin_factory=make_pin_factory("mock"), lockout_ns=0
    )
    setup = [
        {"type": "new_game", "game": "vault-assault", "players": 3, "names": ["A", "B", "C"]},
        {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
        {"type": "assault_start"},
    ]
    for ev in setup:
        table.post(ev)
    await table.drain()
    loop = asyncio.get_running_loop()
    lat_us = []
    for _ in range(presses):
        display.shown_escaped.clear()
        t0_box = [0]

        def press(box=t0_box) -> None:
            box[0] = time.perf_counter_ns()
            buttons.press(1)  # stamped now, on CLOCK_MONOTONIC, like a real edge

        await loop.run_in_executor(None, press)
        while not display.shown_escaped.is_set():
            await asyncio.sleep(0)
        lat_us.append((display.t_shown - t0_box[0]) / 1000)
        await table.drain()
        table.post({"type": "undo"})
        await table.drain()
    buttons.close()
    await table.stop()
    if log:
        log.close()
    return lat_us


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presses", type=int, default=2000)
    args = ap.parse_args()
    rate, n = engine_throughput()
    print(f"engine: {rate:,.0f} events/s applied ({n:,} events of 3 whole scripted games)")
    for label, use_log in (("no log", False), ("fsync'd game log", True)):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.jsonl" if use_log else None
            lat = asyncio.run(press_latency(args.presses, path))
        print(
            f"press -> display ({label}, {len(lat)} presses): p50 {statistics.median(lat):.0f} us"
            f"  p99 {pct(lat, 99):.0f} us  max {max(lat):.0f} us"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
