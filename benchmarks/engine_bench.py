"""Benchmark: game events per second through the event codec and the rules engine.

    .venv/bin/python benchmarks/engine_bench.py [--seconds S]

Every accepted event of the whole scripted Vault Assault games in tests/scripts (3
games, 2-4 players) is encoded as its log line once; the timed loop replays the games
from those lines: ``companion.events.decode`` then
``companion.games.vault_assault.engine.apply``, a new game state per event, the undo
history kept (the referee's default: the whole game). This is what `resume` and
`replay` do, and the referee's own per-event cost.

Printed: events/s by the wall clock and by this process's CPU time (the steadier
figure when other jobs share the machine), each beside the goal (>= 100,000 events/s).
The press-to-display latency lives in benchmarks/verdict_latency.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from companion.events import decode, encode, is_comment
from companion.games.vault_assault.engine import apply, new_state

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"
GOAL = 100_000


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


def throughput(seconds: float) -> tuple[float, float, int]:
    """(events/s wall, events/s CPU, events) decoding and applying whole games."""
    games = [[encode(ev) for ev in events] for events in accepted_events()]
    n = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        for lines in games:
            state = new_state()
            for line in lines:
                state = apply(state, decode(line)).state
            n += len(lines)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return n / wall, n / cpu, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)
    throughput(0.3)  # warm up
    wall, cpu, n = throughput(args.seconds)
    for label, rate in (("wall clock", wall), ("CPU time", cpu)):
        verdict = "met" if rate >= GOAL else "NOT met"
        print(
            f"engine, decode + apply ({label}): {rate:,.0f} events/s "
            f"(goal: >= {GOAL:,} events/s: {verdict}); {n:,} events of 3 whole games"
        )
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
