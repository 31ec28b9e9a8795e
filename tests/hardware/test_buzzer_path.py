"""The whole buzzer path in a real asyncio loop: gpiozero MockFactory pins (edges
stamped through gpiozero's real pin-level callback path) -> SeatButtons (lockout,
stuck detection) -> BuzzerInput (settle window, live arrival clock, asyncio timer) ->
TableLoop -> Referee. Edges are driven from other threads, as gpiozero calls back.

Games: 3 players unless a test says otherwise, cops at seat 0, robbers 1 and 2, the
race armed with stages 1-3 claimed, so either side may buzz.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time

import pytest
from game_builders import ROW5, new_game
from log_lines import unchained

from companion.cli import main
from companion.gamelog import GameLog
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee
from companion.table_builder import ButtonParts, TableBuilder

US = 1_000
MS = 1_000_000
S = 1_000_000_000
# Presses are stamped a day after this module loads, so always after Go!, which the loop
# stamps on the live clock: a fixed stamp fails as a false start on a machine up longer.
T = time.monotonic_ns() + 86_400 * S + 123_456_789
PINS = (17, 27, 22, 23)
COP = 0
GAPS_NS = [1 * US, 10 * US, 49 * US, 51 * US, 100 * US, 1 * MS, 4_900 * US, 10 * MS]
# A generous settle window for races delivered back-to-back from one thread, so that a
# loaded 2-core CI machine pausing that thread cannot split them; the pure tests pin
# the 5 ms default down exactly, and the tests with "default" in their names use it here
# where the timing cannot split a pair.
WIDE = ArbiterConfig(settle_ns=40 * MS)
STUCK = re.compile(r"Seat (\d+)'s button is stuck \((.+?)\)")
FREE = re.compile(r"Seat (\d+)'s button is free again")


def expected_winner(seat_a, ts_a, seat_b, ts_b, cop=COP, tie_ns=50 * US):
    """Earlier stamp wins; inside tie_ns the robbers (default rule), then the earlier
    stamp, then the lower seat."""
    if abs(ts_a - ts_b) >= tie_ns:
        return seat_a if ts_a < ts_b else seat_b
    if (seat_a == cop) != (seat_b == cop):
        return seat_b if seat_a == cop else seat_a
    return min((ts_a, seat_a), (ts_b, seat_b))[1]


class Recorder:
    """A display that keeps the flashes it was shown."""

    def __init__(self):
        self.flashes = []

    def show(self, view):
        if view.flash and (not self.flashes or self.flashes[-1] != view.flash):
            self.flashes.append(view.flash)


class Rig:
    def __init__(self, *, players=3, config=None, log_path=None, **buttons_kw):
        self.players = players
        self.log = GameLog(log_path, fsync=False) if log_path else None
        self.display = Recorder()
        self.ref = Referee(log=self.log, displays=[self.display])
        self.config = config or ArbiterConfig()
        self.buttons_kw = buttons_kw
        self.seen: list[tuple[dict, str | None]] = []
        self.now = [0]  # the clock the stuck-check tick hook reads

    async def __aenter__(self):
        # wired as serve wires a live table (companion.table_builder), on the mock pins
        builder = TableBuilder(self.ref, tick_seconds=0.005)
        self.table = await builder.start()
        self.loop = asyncio.get_running_loop()
        self.buzzers, self.buttons, _ = builder.buttons(ButtonParts(
            arbiter=self.config, pins=PINS[: self.players], pin_factory=make_pin_factory("mock"),
            stuck_clock=lambda: self.now[0], **self.buttons_kw))
        self.ref.listeners.append(lambda ev, r: self.seen.append((ev, r.rejection)))
        return self

    @property
    def stuck(self) -> list[tuple[int, str]]:
        """The stuck notices the table was given: (seat, why)."""
        found = (STUCK.match(m) for m in self.ref.messages)
        return [(int(m[1]) - 1, m[2]) for m in found if m]

    @property
    def unstuck(self) -> list[int]:
        found = (FREE.match(m) for m in self.ref.messages)
        return [int(m[1]) - 1 for m in found if m]

    async def __aexit__(self, *exc):
        self.buttons.close()
        await self.table.stop()
        if self.log:
            self.log.close()

    async def post(self, *events):
        for ev in events:
            self.table.post(ev)
        await self.table.drain()

    async def to_heist_over(self):
        robbers = [s for s in range(self.players) if s != COP]
        await self.post(
            new_game(self.players, first_cop=COP),
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": r, "stop": True} for r in robbers]},
        )

    async def arm(self):
        await self.to_heist_over()
        await self.post(
            {"type": "assault_start"}, *({"type": "stage", "stage": k} for k in (1, 2, 3))
        )
        assert self.ref.state.phase == "assault" and self.ref.state.turn.stages == 3

    async def deliver(self, *actions):
        """Run the actions one after the other on a worker thread (edges arrive on
        gpiozero's callback thread), then let the hand-over to the loop run."""

        def run():
            for act in actions:
                act()

        await self.loop.run_in_executor(None, run)
        await asyncio.sleep(0)

    async def settle(self, timeout=3.0):
        """Wait for the open settle window to close on its timer, then for the loop."""
        deadline = time.monotonic() + timeout
        while self.buzzers.window.open:
            assert time.monotonic() < deadline, "the settle window never closed"
            await asyncio.sleep(0.001)
        await self.table.drain()

    def press(self, seat, ts, hold=80 * MS):
        return lambda: self.buttons.press(seat, ts_ns=ts, hold_ns=hold)

    def buzzes(self):
        """(seat, rejection) for every buzz the referee saw, in order."""
        return [(ev["seat"], rej) for ev, rej in self.seen if ev.get("type") == "buzz"]


def run(coro):
    return asyncio.run(coro)


# ---------------------------------------------------------------- two presses


@pytest.mark.parametrize("pair", [(1, COP), (1, 2)], ids=["robber-vs-cops", "robber-vs-robber"])
@pytest.mark.parametrize("gap", GAPS_NS, ids=[f"{g / 1000:g}us" for g in GAPS_NS])
@pytest.mark.parametrize("stamp_order", ["a-first", "b-first"])
@pytest.mark.parametrize("delivery", ["stamp-order", "reverse"])
def test_two_presses_both_orders_both_deliveries(pair, gap, stamp_order, delivery):
    a, b = pair
    ts = {a: T, b: T + gap} if stamp_order == "a-first" else {a: T + gap, b: T}
    by_stamp = sorted(pair, key=lambda s: ts[s])
    sequence = by_stamp if delivery == "stamp-order" else by_stamp[::-1]
    winner = expected_winner(a, ts[a], b, ts[b])
    loser = b if winner == a else a

    async def body():
        async with Rig(config=WIDE) as rig:
            await rig.arm()
            await rig.deliver(*(rig.press(s, ts[s]) for s in sequence))
            await rig.settle()
            return rig

    rig = run(body())
    (verdict,) = rig.buzzers.verdicts
    assert [(p.seat, p.ts_ns) for p in verdict.order] == [(winner, ts[winner]), (loser, ts[loser])]
    first_ev, _ = next((ev, r) for ev, r in rig.seen if ev.get("type") == "buzz")
    assert first_ev["seat"] == winner and first_ev["ts_ns"] == ts[winner]
    assert first_ev["photo_finish"]["seats"] == [winner, loser]
    assert first_ev["photo_finish"]["ties"] == ([[winner, loser]] if gap < 50 * US else [])
    seats = rig.ref.state.seats
    if COP in pair:
        if winner == COP:  # Arrested! both robbers; the robber's press came too late
            assert rig.buzzes() == [(COP, None), (1, rig.buzzes()[1][1])]
            assert "too late" in rig.buzzes()[1][1]
            assert seats[1].escaped == 0 and seats[1].arrested == 1
        else:  # the robber escaped first; the cops then arrest the other robber
            assert rig.buzzes() == [(1, None), (COP, None)]
            assert seats[1].escaped == 1 and seats[1].arrested == 0
            assert seats[2].arrested == 1
    else:  # two robbers: both escape, the winner first
        assert rig.buzzes() == [(winner, None), (loser, None)]
        assert seats[winner].escaped == 1 and seats[loser].escaped == 1


@pytest.mark.parametrize(
    "cops_ts, robber_ts, winner",
    [
        (T + 60 * US, T, 1),  # the robber by 60 us
        (T, T + 1 * US, 1),  # the cops by 1 us: a tie, the robbers' by the default rule
        (T, T + 49 * US, 1),  # still a tie
        (T, T + 60 * US, COP),  # the cops by 60 us
    ],
)
def test_photo_finish_with_the_default_config_cops_delivered_first(cops_ts, robber_ts, winner):
    """Default config (5 ms settle, 50 us ties, robbers' rule), 2 players. The cops'
    edge is delivered first, the robber's second, while the loop's thread is busy (so
    the settle timer cannot run between the two)."""

    async def body():
        async with Rig(players=2) as rig:
            await rig.arm()
            release = threading.Event()
            rig.loop.call_soon(release.wait, 5)  # the loop's thread blocks until released

            def edges():
                rig.buttons.press(COP, ts_ns=cops_ts)
                rig.buttons.press(1, ts_ns=robber_ts)
                release.set()

            await rig.deliver(edges)
            await rig.settle()
            return rig

    rig = run(body())
    loser = 1 if winner == COP else COP
    assert [p.seat for p in rig.buzzers.verdicts[0].order] == [winner, loser]
    assert rig.buzzes()[0] == (winner, None)
    assert "too late" in rig.buzzes()[1][1]
    seats = rig.ref.state.seats
    assert (seats[1].escaped, seats[1].arrested) == ((1, 0) if winner == 1 else (0, 1))
    # the photo-finish flash shows once the verdict's own flash has had its time
    assert "photo_finish" in [*rig.display.flashes, *rig.ref.flash_queue]
    gap = abs(robber_ts - cops_ts)
    expected = "Photo finish: a tie (" if gap < 50_000 else "Photo finish: won by"
    assert any(m.startswith(expected) for m in rig.ref.messages)


@pytest.mark.parametrize("pair", [(1, COP), (1, 2)], ids=["robber-vs-cops", "robber-vs-robber"])
def test_an_earlier_stamp_delivered_after_the_window_closed_cannot_win(pair):
    """The later-stamped press is delivered, its window closes and its verdict is in;
    only then the press stamped 1 ms earlier arrives: too late to change the verdict."""
    early, late = pair[0], pair[1]  # `early` was stamped first but is delivered last

    async def body():
        async with Rig() as rig:
            await rig.arm()
            await rig.deliver(rig.press(late, T + 1 * MS))
            await rig.settle()
            assert len(rig.buzzers.verdicts) == 1
            await rig.deliver(rig.press(early, T))
            await rig.settle()
            return rig

    rig = run(body())
    assert rig.buzzes()[0] == (late, None)
    seats = rig.ref.state.seats
    if late == COP:
        assert rig.buzzes()[1][0] == early and rig.buzzes()[1][1] is not None
        assert seats[early].escaped == 0 and seats[early].arrested == 1
    else:
        assert rig.buzzes() == [(late, None), (early, None)]
        assert seats[late].escaped == seats[early].escaped == 1


def test_three_presses_in_one_window_cops_tie_goes_to_the_robber():
    """Cops at T, robber 2 at T + 20 us (tie -> robber first), robber 1 at T + 300 us;
    delivered latest-stamp first."""

    async def body():
        async with Rig(config=WIDE) as rig:
            await rig.arm()
            await rig.deliver(
                rig.press(1, T + 300 * US), rig.press(COP, T), rig.press(2, T + 20 * US)
            )
            await rig.settle()
            return rig

    rig = run(body())
    assert [p.seat for p in rig.buzzers.verdicts[0].order] == [2, COP, 1]
    assert rig.buzzers.verdicts[0].ties == ((2, COP),)
    assert [s for s, _ in rig.buzzes()] == [2, COP, 1]
    seats = rig.ref.state.seats
    assert seats[2].escaped == 1 and seats[1].arrested == 1 and seats[1].escaped == 0


# ---------------------------------------------------------------- bounce


def bounce_train(start, length, step=300 * US):
    """A press whose contact bounces for `length`: low/high every `step`, ending low.
    Returns the (ts, low?) edges."""
    edges = []
    t = start
    while t < start + length:
        edges.append((t, True))
        edges.append((t + step // 2, False))
        t += step
    edges.append((t, True))
    return edges


def drive(pin, edges):
    for ts, low in edges:
        (pin.drive_low if low else pin.drive_high)(ts_ns=ts)


@pytest.mark.parametrize("bounce_ms", [1, 5, 10, 20])
@pytest.mark.parametrize("threads", [1, 2])
def test_bounce_trains_on_two_seats_interleaved(bounce_ms, threads):
    """The robber presses first (T) and bounces longer than the cops' lead; the cops
    press 200 us later and bounce too; edges interleaved in time. One press each, the
    first edge's stamp, the robber wins."""

    async def body():
        async with Rig(players=2, config=WIDE) as rig:
            await rig.arm()
            robber = [(ts, low, 1) for ts, low in bounce_train(T, bounce_ms * MS)]
            cops = [(ts, low, COP) for ts, low in bounce_train(T + 200 * US, bounce_ms * MS)]
            if threads == 1:
                merged = sorted(robber + cops)

                def one():
                    for ts, low, seat in merged:
                        pin = rig.buttons.pin(seat)
                        (pin.drive_low if low else pin.drive_high)(ts_ns=ts)

                await rig.deliver(one)
            else:
                both = [
                    rig.loop.run_in_executor(
                        None, drive, rig.buttons.pin(seat), [(ts, low) for ts, low, _ in train]
                    )
                    for seat, train in ((COP, cops), (1, robber))
                ]
                await asyncio.gather(*both)
                await asyncio.sleep(0)
            await rig.settle()
            return rig, sum(1 for _, low, _ in robber + cops if low)

    rig, n_falling = run(body())
    assert rig.buttons.presses == 2
    assert [(p.seat, p.ts_ns) for p in rig.buzzers.verdicts[0].order] == [
        (1, T),
        (COP, T + 200 * US),
    ]
    assert rig.buzzes()[0] == (1, None)
    # every falling edge but the two first ones was counted as a bounce
    assert rig.buttons.bounces == n_falling - 2


def test_release_bounce_is_not_a_second_press():
    async def body():
        async with Rig(config=WIDE) as rig:
            await rig.arm()
            pin = rig.buttons.pin(2)
            press = bounce_train(T, 8 * MS)
            release = [(T + 150 * MS + i * 200 * US, i % 2 == 1) for i in range(41)]  # ends high
            await rig.deliver(lambda: drive(pin, press + release))
            await rig.settle()
            return rig

    rig = run(body())
    assert rig.buttons.presses == 1 and rig.buzzes() == [(2, None)]


# ---------------------------------------------------------------- false starts


def test_false_starts_before_go_are_rejected_and_logged(tmp_path):
    log = tmp_path / "game.jsonl"

    async def body():
        async with Rig(log_path=log) as rig:
            await rig.to_heist_over()
            await rig.deliver(rig.press(1, T))
            await asyncio.sleep(0.02)
            await rig.table.drain()
            assert not rig.buzzers.window.open  # no settle window before Go!
            await rig.post({"type": "assault_start"})
            await rig.deliver(rig.press(2, T + 1 * S))
            await rig.settle()
            return rig

    rig = run(body())
    assert "false start" in rig.buzzes()[0][1] and rig.buzzes()[0][0] == 1
    assert rig.buzzes()[1] == (2, None)
    assert "false_start" in rig.display.flashes
    lines = [unchained(x) for x in log.read_text().splitlines()]
    notes = [x for x in lines if x["type"] == "rejected"]
    assert len(notes) == 1
    assert notes[0]["event"] == {"type": "buzz", "seat": 1, "ts_ns": T}
    assert notes[0]["reason"].startswith("buzz: false start: Bob (seat 2)")
    assert lines[-1] == {"type": "buzz", "seat": 2, "ts_ns": T + 1 * S}
    assert rig.ref.state.seats[1].escaped == 0 and rig.ref.state.seats[2].escaped == 1


def test_a_press_stamped_before_go_but_delivered_after_is_a_false_start(tmp_path):
    """Live clock. The robber's edge is stamped (CLOCK_MONOTONIC, as lgpio does) before
    the loop applies Go!, but its callback reaches the loop only after (a busy callback
    thread or loop): still a false start."""

    async def body():
        async with Rig(players=2, log_path=tmp_path / "g.jsonl") as rig:
            await rig.to_heist_over()
            pressed_at = time.monotonic_ns()  # the edge, before Go!
            await rig.post({"type": "assault_start"})
            go_at = rig.seen[-1][0]["ts_ns"]
            assert pressed_at < go_at
            await rig.deliver(rig.press(1, pressed_at))
            await rig.settle()
            return rig

    rig = run(body())
    assert rig.ref.state.seats[1].escaped == 0
    assert "false start" in rig.buzzes()[0][1]


# ---------------------------------------------------------------- stuck buttons


def test_button_held_down_for_seconds_is_reported_once_not_as_presses():
    async def body():
        async with Rig(config=WIDE) as rig:
            await rig.arm()
            pin = rig.buttons.pin(COP)  # the cops lean on their button
            await rig.deliver(lambda: pin.drive_low(ts_ns=T))
            await rig.settle()
            for now in (T + 1 * S, T + 1_999 * MS, T + 2 * S, T + 3 * S, T + 10 * S):
                rig.now[0] = now  # the ticker calls check_stuck(now)
                await asyncio.sleep(0.03)
            assert rig.stuck == [(COP, "held down")]
            await rig.table.drain()
            # released after 12 s: free again, and a real press counts
            await rig.deliver(lambda: pin.drive_high(ts_ns=T + 12 * S))
            assert rig.unstuck == [COP]
            return rig

    rig = run(body())
    assert rig.stuck == [(COP, "held down")]
    assert rig.buttons.presses == 1 and len(rig.buzzes()) == 1
    assert any("stuck (held down)" in m for m in rig.ref.messages)
    assert "stuck" in rig.display.flashes


@pytest.mark.parametrize("period_us", [400, 2_000, 20_000])
def test_button_chattering_for_seconds_is_reported_once_not_as_presses(period_us):
    """A contact chattering every `period_us` (< the 50 ms lockout) for 5 s."""

    async def body():
        async with Rig(players=2, config=WIDE) as rig:
            await rig.arm()
            pin = rig.buttons.pin(1)
            edges = [(T + i * period_us * US, i % 2 == 0) for i in range(5 * S // (period_us * US))]
            await rig.deliver(lambda: drive(pin, edges))
            await rig.settle()
            for now in (T + 6 * S, T + 8 * S):  # the tick's check must not report it again
                rig.now[0] = now
                await asyncio.sleep(0.03)
            return rig, edges

    rig, edges = run(body())
    assert rig.stuck == [(1, "chattering")]
    assert rig.buttons.is_stuck(1)
    # The first falling edge was the press (the robber escaped once); nothing after it.
    assert rig.buttons.presses == 1 and rig.buzzes() == [(1, None)]
    assert rig.buttons.bounces == sum(1 for _, low in edges if low) - 1


def test_first_press_after_chattering_stops_counts():
    async def body():
        async with Rig(players=2, config=WIDE) as rig:
            await rig.to_heist_over()
            pin = rig.buttons.pin(1)
            edges = [(T + i * MS, i % 2 == 0) for i in range(3_000)]  # 3 s, ends released
            await rig.deliver(lambda: drive(pin, edges))
            await rig.table.drain()
            assert rig.stuck == [(1, "chattering")]
            await rig.post({"type": "assault_start"})
            # 2 s of quiet, released; then the robber presses for real
            await rig.deliver(rig.press(1, T + 5 * S))
            await rig.settle()
            return rig

    rig = run(body())
    assert rig.unstuck == [1]
    assert rig.buzzes()[-1] == (1, None)
    assert rig.ref.state.seats[1].escaped == 1


# ---------------------------------------------------------------- loop under load


def _hog(seconds, cpu):
    """Block the loop's thread: sleeping (I/O-like, GIL released) or spinning (GIL)."""
    end = time.perf_counter() + seconds
    if cpu:
        while time.perf_counter() < end:
            pass
    else:
        time.sleep(seconds)


@pytest.mark.parametrize(
    "cpu, config",
    [(False, ArbiterConfig()), (True, WIDE)],
    ids=["blocking-io-default-window", "cpu-spin-40ms-window"],
)
def test_presses_during_a_50ms_loop_stall_are_ordered_by_stamp(cpu, config):
    """While the loop's thread is stalled for 50 ms, the cops' edge (stamped T + 200 us)
    and then the robber's (stamped T) come in on another thread (one callback thread,
    like lgpio's): the robber escaped first.

    A stall that blocks outside Python (I/O, sleep) releases the GIL: the default 5 ms
    window holds. A pure-Python spin holds the GIL: the callback thread can lose it
    between the two edges for a whole switch interval (5 ms), so their arrival stamps
    may be >= 5 ms apart (seen in about 1 run in 12 here) and the default window would
    split them; this case runs with a 40 ms window (see the report to the lead)."""

    async def body():
        async with Rig(players=2, config=config) as rig:
            await rig.arm()
            started = threading.Event()
            rig.loop.call_soon(lambda: (started.set(), _hog(0.05, cpu)))

            def edges():
                started.wait(5)
                time.sleep(0.005)
                rig.buttons.press(COP, ts_ns=T + 200 * US)
                rig.buttons.press(1, ts_ns=T)

            await rig.deliver(edges)
            await rig.settle()
            return rig

    rig = run(body())
    assert [p.seat for p in rig.buzzers.verdicts[0].order] == [1, COP]
    assert rig.buzzes()[0] == (1, None) and "too late" in rig.buzzes()[1][1]


def test_presses_from_three_threads_during_a_loop_stall_are_ordered_by_stamp():
    """Three seats' edges, each from its own thread, while the loop's thread sleeps
    50 ms; stamps 100 us apart in no particular relation to the delivery order."""

    async def body():
        async with Rig(config=WIDE) as rig:
            await rig.arm()
            started = threading.Event()
            stamps = {2: T + 300 * US, COP: T + 200 * US, 1: T + 100 * US}

            def press(seat):
                started.wait(5)
                rig.buttons.press(seat, ts_ns=stamps[seat])

            futures = [rig.loop.run_in_executor(None, press, seat) for seat in stamps]
            rig.loop.call_soon(lambda: (started.set(), _hog(0.05, False)))
            await asyncio.gather(*futures)
            await asyncio.sleep(0)
            await rig.settle()
            return rig

    rig = run(body())
    assert [p.seat for p in rig.buzzers.verdicts[0].order] == [1, COP, 2]
    assert [s for s, _ in rig.buzzes()] == [1, COP, 2]


def test_new_window_opened_by_a_late_press_gets_its_full_settle_window():
    """Real clock, settle 100 ms. The loop's thread is busy for 60 ms when robber 1's
    press A arrives (r0), so A is handled at ~r0 + 60 ms and its window's timer set for
    ~r0 + 160 ms. The cops' press B arrives at r0 + 110 ms, after A's window (closes at
    r0 + 100 ms): it closes A's window and opens its own, closing at r0 + 210 ms. Robber
    2's press C, stamped 1 ms before B, arrives at r0 + 185 ms, inside B's window: C
    must beat B. (The stale timer of A's window closes B's at ~r0 + 160 ms instead.)"""

    async def body():
        async with Rig(config=ArbiterConfig(settle_ns=100 * MS)) as rig:
            await rig.arm()
            started = threading.Event()

            def edges():
                started.wait(5)
                r0 = time.perf_counter()
                rig.buttons.press(1, ts_ns=T)
                for at, seat, ts in ((0.110, COP, T + 3 * MS), (0.185, 2, T + 2 * MS)):
                    time.sleep(max(0.0, r0 + at - time.perf_counter()))
                    rig.buttons.press(seat, ts_ns=ts)

            rig.loop.call_soon(lambda: (started.set(), _hog(0.06, False)))
            await rig.deliver(edges)
            await rig.settle()
            return rig

    rig = run(body())
    orders = [[p.seat for p in v.order] for v in rig.buzzers.verdicts]
    assert orders == [[1], [2, COP]]


# ---------------------------------------------------------------- a scripted photo finish


SETUP_2P = [
    new_game(2),
    {"type": "heist_hide", "row": ROW5},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
    {"type": "assault_start"},
    {"type": "stage", "stage": 1},
    {"type": "stage", "stage": 2},
    {"type": "stage", "stage": 3},
]


@pytest.mark.parametrize("margin_ns", [1_000, 40_000, 300_000, 4_000_000])
def test_script_photo_finish_robber_line_second_but_stamped_earlier_escapes(
    tmp_path, capsys, margin_ns
):
    script = tmp_path / "photo.jsonl"
    lines = [json.dumps(e) for e in SETUP_2P] + [
        "# the cops' line comes first, stamped later; the robber's second, stamped earlier",
        json.dumps({"type": "buzz", "seat": 0, "ts_ns": 5 * S + margin_ns}),
        json.dumps({"type": "buzz", "seat": 1, "ts_ns": 5 * S}),
    ]
    script.write_text("\n".join(lines) + "\n")
    log = tmp_path / "game.jsonl"
    assert main(["sim", "--script", str(script), "--headless", "--log", str(log)]) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out.strip().splitlines()[-1])
    assert summary["seats"][1]["escaped"] == 1 and summary["seats"][1]["arrested"] == 0
    assert summary["turns_played"] == 1
    logged = [unchained(x) for x in log.read_text().splitlines()]
    assert logged[-2]["type"] == "buzz" and logged[-2]["seat"] == 1
    assert logged[-2]["ts_ns"] == 5 * S
    assert logged[-2]["photo_finish"]["margin_ns"] == margin_ns
    note = logged[-1]
    assert note["type"] == "rejected" and note["event"]["seat"] == 0
    assert note["reason"].startswith("buzz: too late: Ann (seat 1) pressed")
    assert f"{margin_ns} ns after Bob (seat 2)" in note["reason"]
    assert "too late" in out.err  # the sim reports the rejected line
    # The log replays to the same result.
    assert main(["replay", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == summary


def test_script_cops_stamped_earlier_arrest_even_when_their_line_comes_second(tmp_path, capsys):
    script = tmp_path / "photo.jsonl"
    lines = [json.dumps(e) for e in SETUP_2P] + [
        json.dumps({"type": "buzz", "seat": 1, "ts_ns": 5 * S + 100_000}),
        json.dumps({"type": "buzz", "seat": 0, "ts_ns": 5 * S}),
    ]
    script.write_text("\n".join(lines) + "\n")
    log = tmp_path / "game.jsonl"
    assert main(["sim", "--script", str(script), "--headless", "--log", str(log)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["seats"][1]["arrested"] == 1 and summary["seats"][1]["escaped"] == 0
    logged = [unchained(x) for x in log.read_text().splitlines()]
    assert logged[-2]["seat"] == 0 and logged[-1]["type"] == "rejected"
    assert "too late" in logged[-1]["reason"]
