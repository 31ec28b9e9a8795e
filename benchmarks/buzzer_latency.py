"""Benchmark: the buzzer path's timestamp resolution and its edge-to-verdict latency.

    .venv/bin/python benchmarks/buzzer_latency.py [--presses N] [--stamps N] [--log]

(a) Resolution carried end to end: edges stamped with chosen CLOCK_MONOTONIC
    nanoseconds at typical uptimes go through gpiozero's real pin-level callback path
    (ticks are float seconds there), SeatButtons and BuzzerInput into the `buzz`
    event's ts_ns; printed: the float spacing of the ticks at that uptime and the
    largest error seen. Two back ends: MockFactory pins (companion's StampedMockPin) and
    gpiozero's real lgpio factory against the test stand-in lgpio module
    (tests/support/lgpio_standin.py), which hands gpiozero integer nanoseconds as the
    kernel does.

(b) Latency from an edge to the verdict on a display: a dedicated thread (like lgpio's
    alert thread) drives a MockFactory pin low; the clock starts just before that and
    stops when a Display's show() first sees the escape. This includes the settle
    window (5 ms by default): also printed are its parts, edge -> BuzzerInput on the
    loop, the settle wait (window opened -> its timer fired), and verdict -> display.
    Run idle, with a busy pure-Python thread in the same process (GIL contention), and
    with a separate busy process (CPU contention). The end-to-end figure, to the LED
    device's frame with `serve`'s wiring and the camera on, is verdict_latency.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import queue
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from companion.buzzers import BuzzerInput, prepare_interpreter
from companion.gamelog import GameLog
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import SeatButtons
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop

REPO = Path(__file__).resolve().parents[1]
S = 1_000_000_000
DAY = 86_400 * S
UPTIMES = [
    ("1 hour", 3_600 * S),
    ("1 day", DAY),
    ("30 days", 30 * DAY),
    ("97 days", 97 * DAY),
    ("98 days", 98 * DAY),
    ("1 year", 365 * DAY),
]
SETUP_3P = [
    {"type": "new_game", "game": "vault-assault", "players": 3, "names": ["A", "B", "C"]},
    {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
    {"type": "assault_start"},
]


# ---------------------------------------------------------------- (a) resolution


def stamps_at(uptime_ns: int, n: int, seed: int) -> list[int]:
    rnd = random.Random(seed)
    return [uptime_ns + k * 2_000_000 + rnd.randrange(1_000_000) for k in range(n)]


def through_mock_pins(stamps: list[int]) -> list[int]:
    got: list[int] = []
    buttons = SeatButtons(
        [17], lambda s, t: got.append(t), pin_factory=make_pin_factory("mock"), lockout_ns=0
    )
    pin = buttons.pin(0)
    for ts in stamps:
        pin.drive_low(ts_ns=ts)
        pin.drive_high(ts_ns=ts + 1)
    buttons.close()
    return got


def through_lgpio_standin(stamps: list[int]) -> list[int] | None:
    sys.path.insert(0, str(REPO / "tests" / "support"))
    try:
        import lgpio_standin as lg
    except ImportError:
        return None
    import importlib

    import gpiozero.pins.local

    saved = sys.modules.get("lgpio")
    saved_rev = gpiozero.pins.local.get_pi_revision
    sys.modules["lgpio"] = lg
    sys.modules.pop("gpiozero.pins.lgpio", None)
    gpiozero.pins.local.get_pi_revision = lambda: 0xD04170  # a Raspberry Pi 5
    try:
        lg.reset()
        factory = importlib.import_module("gpiozero.pins.lgpio").LGPIOFactory(chip=0)
        got: list[int] = []
        buttons = SeatButtons([17], lambda s, t: got.append(t), pin_factory=factory, lockout_ns=0)
        edges = []
        for ts in stamps:
            edges += [(17, 0, ts), (17, 1, ts + 1)]
        lg.alerts(factory._handle, edges)
        lg.wait_idle()
        buttons.close()
        factory.close()
        return got
    finally:
        gpiozero.pins.local.get_pi_revision = saved_rev
        sys.modules.pop("gpiozero.pins.lgpio", None)
        if saved is None:
            sys.modules.pop("lgpio", None)
        else:
            sys.modules["lgpio"] = saved


async def into_buzz_events(stamps: list[int]) -> list[int]:
    """Mock pins -> SeatButtons -> BuzzerInput -> TableLoop -> Referee: the ts_ns of
    the buzz events the referee receives (one press per race, undone after)."""
    ref = Referee()
    table = TableLoop(ref)
    await table.start()
    buzzers = BuzzerInput(table, ArbiterConfig(), virtual_clock=True)
    buttons = SeatButtons(
        [17, 27, 22], buzzers.on_press, pin_factory=make_pin_factory("mock"), lockout_ns=0
    )
    seen: list[int] = []
    ref.listeners.append(lambda ev, r: seen.append(ev["ts_ns"]) if ev["type"] == "buzz" else None)
    for ev in SETUP_3P:
        table.post(ev)
    await table.drain()
    for ts in stamps:
        buttons.press(1, ts_ns=ts, hold_ns=1)
        await asyncio.sleep(0)
        buzzers.flush()
        await table.drain()
        table.post({"type": "undo"})
        await table.drain()
    buttons.close()
    await table.stop()
    return seen


def resolution(n: int) -> None:
    print("(a) timestamp resolution, edge stamp -> buzz event ts_ns")
    print(f"    {n:,} random stamps per uptime; error = |ts_ns out - stamp in|")
    print(
        f"    {'uptime':>8}  {'tick spacing':>12}  {'mock pins: max err':>18}  "
        f"{'lgpio: max err':>14}  {'exact':>7}  {'buzz events':>11}"
    )
    for label, uptime in UPTIMES:
        stamps = stamps_at(uptime, n, uptime)
        spacing = math.ulp(uptime / 1e9) * 1e9
        mock = through_mock_pins(stamps)
        lgp = through_lgpio_standin(stamps)
        err_m = max(abs(a - b) for a, b in zip(mock, stamps, strict=True))
        exact = sum(a == b for a, b in zip(mock, stamps, strict=True)) / n
        err_l = "n/a" if lgp is None else max(abs(a - b) for a, b in zip(lgp, stamps, strict=True))
        sample = stamps[:200]
        events = asyncio.run(into_buzz_events(sample))
        same = events == through_mock_pins(sample)
        print(
            f"    {label:>8}  {spacing:>9.3f} ns  {err_m:>15} ns  {err_l!s:>11} ns  "
            f"{exact:>6.1%}  {'unchanged' if same else 'CHANGED':>11}"
        )
    limit_days = 2**23 / 86_400
    print(
        f"    exact to the nanosecond while uptime < 2**23 s = {limit_days:.2f} days "
        "(tick spacing < 1 ns); the buzz events carry the on_press stamp unchanged"
    )


# ---------------------------------------------------------------- (b) latency


class TimedBuzzerInput(BuzzerInput):
    """Records when each press reaches the loop and when its window's timer fires."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.t_arrive: list[int] = []
        self.t_close: list[int] = []

    def arrive(self, seat, ts_ns, arrival_ns=None) -> None:
        self.t_arrive.append(time.perf_counter_ns())
        super().arrive(seat, ts_ns, arrival_ns)

    def _on_timer(self) -> None:
        self.t_close.append(time.perf_counter_ns())
        super()._on_timer()


class VerdictDisplay:
    """A Display whose show() stamps the moment seat 1's escape first appears."""

    def __init__(self) -> None:
        self.target = -1
        self.t_shown = 0
        self.shown: asyncio.Event | None = None

    def expect(self, escaped_count: int) -> None:
        self.target = escaped_count
        self.shown = asyncio.Event()

    def show(self, view) -> None:
        ready = self.shown is not None and not self.shown.is_set()
        if ready and view.state.seats and view.state.seats[1].escaped == self.target:
            self.t_shown = time.perf_counter_ns()
            self.shown.set()


class EdgeThread(threading.Thread):
    """One thread delivering edges, as lgpio's alert thread does."""

    def __init__(self, buttons: SeatButtons) -> None:
        super().__init__(daemon=True, name="edges")
        self.buttons = buttons
        self.jobs: queue.Queue = queue.Queue()
        self.t0 = 0

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            seat, ts = job
            self.t0 = time.perf_counter_ns()
            self.buttons.press(seat, ts_ns=ts, hold_ns=1_000_000)


def _spin_forever() -> None:
    x = 0
    while True:
        x += 1


def _spin_until(stop: threading.Event) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(1000):
            x += 1


async def latency(presses: int, config: ArbiterConfig, log_path: Path | None) -> dict:
    display = VerdictDisplay()
    log = GameLog(log_path) if log_path else None
    ref = Referee(log=log, displays=[display])
    table = TableLoop(ref)
    await table.start()
    buzzers = TimedBuzzerInput(table, config)
    buttons = SeatButtons(
        [17, 27, 22], buzzers.on_press, pin_factory=make_pin_factory("mock"), lockout_ns=0
    )
    for ev in SETUP_3P:
        table.post(ev)
    await table.drain()
    edges = EdgeThread(buttons)
    edges.start()
    total, to_loop, settle, to_display = [], [], [], []
    base = time.monotonic_ns()
    for i in range(presses):
        display.expect(ref.state.seats[1].escaped + 1)
        n_arr, n_close = len(buzzers.t_arrive), len(buzzers.t_close)
        edges.jobs.put((1, base + i * 10_000_000))
        assert display.shown is not None
        await asyncio.wait_for(display.shown.wait(), 10)
        t0 = edges.t0
        t_arr, t_close = buzzers.t_arrive[n_arr], buzzers.t_close[n_close]
        total.append((display.t_shown - t0) / 1e3)
        to_loop.append((t_arr - t0) / 1e3)
        settle.append((t_close - t_arr) / 1e3)
        to_display.append((display.t_shown - t_close) / 1e3)
        await table.drain()
        table.post({"type": "undo"})
        await table.drain()
        await asyncio.sleep(0.001)
    edges.jobs.put(None)
    buttons.close()
    await table.stop()
    if log:
        log.close()
    return {"total": total, "edge->loop": to_loop, "settle": settle, "verdict->display": to_display}


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def fmt(values: list[float]) -> str:
    def u(x: float) -> str:
        return f"{x / 1000:.2f} ms" if x >= 1000 else f"{x:.0f} us"

    p50, p99, top = statistics.median(values), pct(values, 99), max(values)
    return f"p50 {u(p50):>9}  p99 {u(p99):>9}  max {u(top):>9}"


def run_latency(label: str, presses: int, config: ArbiterConfig, use_log: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl" if use_log else None
        res = asyncio.run(latency(presses, config, path))
    print(f"    {label} ({presses} presses)")
    print(f"      edge -> verdict on display   {fmt(res['total'])}")
    beyond = [t - config.settle_ns / 1e3 for t in res["total"]]
    print(f"        minus the {config.settle_ns / 1e6:g} ms settle window {fmt(beyond)}")
    print(f"        edge -> BuzzerInput (loop) {fmt(res['edge->loop'])}")
    print(f"        settle wait (timer)        {fmt(res['settle'])}")
    print(f"        verdict -> display         {fmt(res['verdict->display'])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presses", type=int, default=300, help="presses per latency run")
    ap.add_argument("--stamps", type=int, default=20_000, help="stamps per uptime in (a)")
    ap.add_argument("--log", action="store_true", help="also run with the fsync'd game log")
    ap.add_argument(
        "--default-switch-interval",
        action="store_true",
        help="keep Python's 5 ms GIL switch interval (serve and sim set 1 ms)",
    )
    args = ap.parse_args()
    resolution(args.stamps)
    config = ArbiterConfig()
    if not args.default_switch_interval:
        prepare_interpreter(config)  # as `companion serve` does
    print()
    print(
        f"(b) latency, edge (on its own thread) -> verdict on a display; settle "
        f"{config.settle_ns / 1e6:g} ms, tie {config.tie_ns / 1e3:g} us, no game log"
    )
    run_latency("idle", args.presses, config, False)

    stop = threading.Event()
    hog = threading.Thread(target=_spin_until, args=(stop,), daemon=True)
    hog.start()
    try:
        run_latency("busy Python thread in the same process", args.presses, config, False)
    finally:
        stop.set()
        hog.join()

    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_spin_forever, daemon=True)
    proc.start()
    try:
        run_latency("busy separate process", args.presses, config, False)
    finally:
        proc.terminate()
        proc.join()
    if args.log:
        run_latency("idle, fsync'd game log", args.presses, config, True)
    print(
        f"    (switch interval {sys.getswitchinterval() * 1e3:g} ms; machine has "
        f"{multiprocessing.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
