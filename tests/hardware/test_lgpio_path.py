"""From the kernel's edge timestamp to the verdict, through gpiozero's REAL lgpio pin
factory (gpiozero/pins/lgpio.py), against a stand-in `lgpio` module
(tests/support/lgpio_standin.py) that delivers alerts with chosen nanosecond stamps
from its own thread, as lgpio does.

gpiozero asks the board's revision when a pin is first looked up
(LocalPiFactory._get_revision -> gpiozero.pins.local.get_pi_revision, which reads
/proc/device-tree/system/linux,revision or /proc/cpuinfo); the tests answer with a
Raspberry Pi 5's revision code.

Resolution: lgpio hands gpiozero an int of nanoseconds; gpiozero divides it by 10**9
(float seconds) and companion.hardware.pins.ticks_to_ns multiplies back and rounds. The
round trip is exact to the nanosecond while the stamp is below 2**23 s of uptime
(~97.09 days: the float spacing there is 2**-30 s < 1 ns); beyond, it is off by at most
the float spacing (2**-29 s ~ 1.9 ns up to 2**24 s ~ 194 days, 3.7 ns up to ~388 days).
"""

from __future__ import annotations

import asyncio
import importlib
import math
import random
import sys

import lgpio_standin as lg
import pytest
from game_builders import ROW5, new_game

from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import SeatButtons
from companion.hardware.pins import KERNEL_EDGE_STAMPS, make_pin_factory
from companion.loop import Referee
from companion.table_builder import ButtonParts, TableBuilder

PI5_REVISION = 0xD04170  # Raspberry Pi 5 Model B, 4 GB
GPIOS = (17, 27, 22)  # seats 0, 1, 2
US = 1_000
MS = 1_000_000
S = 1_000_000_000
DAY = 86_400 * S
LIMIT_NS = 2**23 * S  # stamps below this survive float seconds exactly


@pytest.fixture
def lgpio(monkeypatch):
    """gpiozero.pins.lgpio imported against the stand-in; yields its module."""
    lg.reset()
    monkeypatch.setitem(sys.modules, "lgpio", lg)
    sys.modules.pop("gpiozero.pins.lgpio", None)
    import gpiozero.pins
    import gpiozero.pins.local

    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: PI5_REVISION)
    module = importlib.import_module("gpiozero.pins.lgpio")
    assert module.lgpio is lg
    yield module
    lg.reset()
    sys.modules.pop("gpiozero.pins.lgpio", None)
    if hasattr(gpiozero.pins, "lgpio"):
        delattr(gpiozero.pins, "lgpio")


@pytest.fixture
def factory(lgpio):
    f = lgpio.LGPIOFactory(chip=0)
    yield f
    f.close()


def press_edges(gpio, ts, hold=80 * MS):
    return [(gpio, 0, ts), (gpio, 1, ts + hold)]


# ---------------------------------------------------------------- set-up


def test_buttons_claim_alerts_on_both_edges_with_pull_up_and_no_kernel_debounce(factory):
    buttons = SeatButtons(GPIOS, lambda s, t: None, pin_factory=factory)
    try:
        handle = factory._handle
        assert lg.alert_lines(handle) == {g: lg.BOTH_EDGES for g in GPIOS}
        claims = [c for c in lg.calls if c[0] == "gpio_claim_alert"]
        assert {c[2] for c in claims} == set(GPIOS)
        assert all(c[4] & lg.SET_PULL_UP for c in claims), claims
        assert sorted(lg.active_callbacks()) == sorted((g, lg.BOTH_EDGES) for g in GPIOS)
        # No kernel debounce: it would re-stamp the edge late.
        assert lg.debounce_set == {} or set(lg.debounce_set.values()) == {0}
        assert all(lg.gpio_read(handle, g) == 1 for g in GPIOS)  # pulled up: released
    finally:
        buttons.close()
    # closing re-claims the lines as plain inputs: no more alerts from them
    assert lg.alert_lines(factory._handle) == {}


def test_pin_factory_by_name_gives_lgpio_on_gpiochip0(lgpio):
    f = make_pin_factory("lgpio")
    handle = f._handle
    try:
        assert isinstance(f, lgpio.LGPIOFactory) and f.chip == 0  # no /dev/gpiochip4 here
        assert ("gpiochip_open", 0) in lg.calls
        assert KERNEL_EDGE_STAMPS["lgpio"] is True
    finally:
        f.close()
    assert ("gpiochip_close", handle) in lg.calls


def test_closed_buttons_get_no_edges_and_the_factory_closes_the_chip(lgpio):
    f = lgpio.LGPIOFactory(chip=0)
    handle = f._handle
    got = []
    buttons = SeatButtons(GPIOS, lambda s, t: got.append((s, t)), pin_factory=f)
    assert len(lg.active_callbacks()) == 3
    buttons.close()
    lg.alerts(handle, press_edges(17, DAY))
    lg.wait_idle()
    assert got == []
    # the same pins taken again (gpiozero reuses its pin objects): edges flow again
    again = SeatButtons(GPIOS, lambda s, t: got.append((s, t)), pin_factory=f)
    lg.alerts(handle, press_edges(27, 2 * DAY))
    lg.wait_idle()
    assert got == [(1, 2 * DAY)]
    again.close()
    f.close()
    assert ("gpiochip_close", handle) in lg.calls


# ---------------------------------------------------------------- edges to presses


def test_kernel_stamp_reaches_on_press_exactly_and_release_is_not_a_press(factory):
    got = []
    buttons = SeatButtons(GPIOS, lambda s, t: got.append((s, t)), pin_factory=factory)
    try:
        t = 3 * DAY + 123_456_789
        lg.alerts(factory._handle, press_edges(27, t) + press_edges(17, t + 5 * S))
        lg.wait_idle()
        assert got == [(1, t), (0, t + 5 * S)]
    finally:
        buttons.close()


def test_a_20ms_bounce_train_is_one_press_stamped_at_its_first_edge(factory):
    got = []
    buttons = SeatButtons(GPIOS, lambda s, t: got.append((s, t)), pin_factory=factory)
    try:
        t = 7 * DAY + 1
        edges = []
        for i in range(0, 20 * MS, 250 * US):
            edges += [(22, 0, t + i), (22, 1, t + i + 100 * US)]
        edges.append((22, 0, t + 20 * MS))
        lg.alerts(factory._handle, edges)
        lg.wait_idle()
        assert got == [(2, t)]
        assert buttons.bounces == 80
    finally:
        buttons.close()


def test_alerts_on_lines_not_claimed_reach_nobody(factory):
    got = []
    buttons = SeatButtons(GPIOS[:2], lambda s, t: got.append((s, t)), pin_factory=factory)
    try:
        lg.alerts(factory._handle, press_edges(22, DAY) + press_edges(27, DAY + S))
        lg.wait_idle()
        assert got == [(1, DAY + S)]
    finally:
        buttons.close()


# ---------------------------------------------------------------- resolution


@pytest.mark.parametrize(
    "uptime_ns",
    [3_600 * S, DAY, 30 * DAY, LIMIT_NS - 10 * S],
    ids=["1h", "1d", "30d", "97d"],
)
def test_nanosecond_stamps_survive_gpiozero_float_ticks_below_2_to_the_23_seconds(
    factory, uptime_ns
):
    got = []
    buttons = SeatButtons(GPIOS, lambda s, t: got.append(t), pin_factory=factory, lockout_ns=0)
    try:
        rnd = random.Random(uptime_ns)
        stamps = [uptime_ns + k * 2 * MS + rnd.randrange(MS) for k in range(2_000)]
        edges = []
        for ts in stamps:
            edges += [(17, 0, ts), (17, 1, ts + 1)]  # released 1 ns later
        lg.alerts(factory._handle, edges)
        lg.wait_idle()
        assert got == stamps
    finally:
        buttons.close()


@pytest.mark.parametrize("uptime_ns", [LIMIT_NS + S, 365 * DAY], ids=["97.1d", "1y"])
def test_beyond_2_to_the_23_seconds_stamps_are_off_by_at_most_the_float_spacing(factory, uptime_ns):
    got = []
    buttons = SeatButtons(GPIOS, lambda s, t: got.append(t), pin_factory=factory, lockout_ns=0)
    try:
        rnd = random.Random(uptime_ns)
        stamps = [uptime_ns + k * 2 * MS + rnd.randrange(MS) for k in range(2_000)]
        edges = []
        for ts in stamps:
            edges += [(17, 0, ts), (17, 1, ts + 1)]
        lg.alerts(factory._handle, edges)
        lg.wait_idle()
        errors = [abs(a - b) for a, b in zip(got, stamps, strict=True)]
        spacing_ns = math.ulp(uptime_ns / 1e9) * 1e9
        assert 1 < spacing_ns < 4
        assert max(errors) <= math.ceil(spacing_ns)
        assert sum(e > 0 for e in errors) > 100  # the nanosecond really is lost here
    finally:
        buttons.close()


# ---------------------------------------------------------------- to the verdict


async def _race(factory, edges, config=None, players=3):
    ref = Referee()
    builder = TableBuilder(ref, tick_seconds=0.01)  # wired as serve wires a live table
    table = await builder.start()
    buzzers, buttons, _ = builder.buttons(ButtonParts(arbiter=config or ArbiterConfig(),
                                                      pins=GPIOS[:players], pin_factory=factory))
    seen = []
    ref.listeners.append(lambda ev, r: seen.append((ev, r.rejection)))
    try:
        robbers = [s for s in range(players) if s != 0]
        for ev in (
            new_game(players),
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": r, "stop": True} for r in robbers]},
            # Go! a second before the first edge, on the stand-in kernel's clock: the
            # loop's own stamp (the live clock) would make a machine up for longer than
            # the edges' made-up uptime call every press a false start.
            {"type": "assault_start", "ts_ns": min(ts for _, _, ts in edges) - S},
            *({"type": "stage", "stage": k} for k in (1, 2, 3)),
        ):
            table.post(ev)
        await table.drain()
        # The edges come from the stand-in's alert thread; wait for it off the loop.
        lg.alerts(factory._handle, edges)
        await asyncio.get_running_loop().run_in_executor(None, lg.wait_idle)
        await asyncio.sleep(0)
        for _ in range(2_000):
            if not buzzers.window.open:
                break
            await asyncio.sleep(0.001)
        await table.drain()
    finally:
        buttons.close()
        await table.stop()
    buzzes = [(ev["seat"], ev["ts_ns"], rej) for ev, rej in seen if ev["type"] == "buzz"]
    return buzzers.verdicts, buzzes, ref


T = 12 * DAY + 345_678_901  # an odd nanosecond at 12 days of uptime


def test_two_robbers_1us_apart_delivered_in_reverse_are_ordered_by_kernel_stamp(factory):
    # robber 2 (gpio 22) stamped T + 1 us is delivered before robber 1 (gpio 27) at T
    edges = [(22, 0, T + 1 * US), (27, 0, T), (22, 1, T + 90 * MS), (27, 1, T + 90 * MS)]
    verdicts, buzzes, ref = asyncio.run(_race(factory, edges))
    assert [(p.seat, p.ts_ns) for p in verdicts[0].order] == [(1, T), (2, T + 1 * US)]
    assert buzzes == [(1, T, None), (2, T + 1 * US, None)]
    assert ref.state.seats[1].escaped == ref.state.seats[2].escaped == 1


@pytest.mark.parametrize("reverse", [False, True])
def test_cops_1us_ahead_win_on_stamp_alone_with_ties_off(factory, reverse):
    """tie_ns = 0: the stamps alone decide, 1 us is enough either way round."""
    edges = [(17, 0, T), (27, 0, T + 1 * US)]
    if reverse:
        edges.reverse()
    verdicts, buzzes, ref = asyncio.run(_race(factory, edges, ArbiterConfig(tie_ns=0), players=2))
    assert [(p.seat, p.ts_ns) for p in verdicts[0].order] == [(0, T), (1, T + 1 * US)]
    assert buzzes[0] == (0, T, None) and "too late" in buzzes[1][2]
    assert ref.state.seats[1].arrested == 1


def test_cops_1us_ahead_lose_the_tie_to_the_robber_by_default(factory):
    edges = [(27, 0, T + 1 * US), (17, 0, T)]
    verdicts, buzzes, _ = asyncio.run(_race(factory, edges, players=2))
    assert [p.seat for p in verdicts[0].order] == [1, 0]
    assert verdicts[0].ties == ((1, 0),)
    assert buzzes[0] == (1, T + 1 * US, None)
