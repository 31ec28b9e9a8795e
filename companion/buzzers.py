"""The buzzer path: seat button edges -> settle window -> ordered `buzz` events.

Live, presses arrive on gpiozero's callback thread and are handed to the loop with
call_soon_threadsafe; their arrival is stamped on the host's CLOCK_MONOTONIC and an
asyncio timer closes each settle window. For scripts and saved logs the arrival clock
is *virtual*: an edge is taken to arrive at its own stamp, or, if stamped before an
edge already delivered, at that edge's arrival (it came late). So a script replays a
photo finish exactly: a robber's press stamped earlier than the cops' wins even when
its line comes second, as long as it falls inside the settle window.

Presses before the race is armed (before Go!) skip the window: they go straight to
the referee, which rejects them as false starts.

With `cop_claims_stages` (config `table.cop_button_claims_stages`), a press of the
race's late seat may claim progress first, as the game says (`Game.late_claim`; Vault
Assault: the cops' press before stage 3 is claimed becomes the next `stage` event,
stamped with the press, and only after stage 3 is it "Arrested!").

What a press means is the game's to say (`companion.games.registry.Game`): whether the
buttons race now (`buzz_armed`), whose press answers the race (`late_seat`) and what
a press means while they do not race (`press_event`). This module knows no game.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from companion.hardware.arbitration import ArbiterConfig, Press, Verdict, Window, close, offer
from companion.hardware.buttons import DEFAULT_LOCKOUT_NS, DEFAULT_STUCK_NS, SeatButtons
from companion.loop import TableLoop

SWITCH_INTERVAL_S = 0.001
VERDICTS_KEPT = 64  # recent verdicts kept for a look (the log holds them all)


def prepare_interpreter(config: ArbiterConfig) -> str | None:
    """Shorten the GIL switch interval (5 ms by default, as long as the settle window)
    so gpiozero's callback thread hands an edge over promptly while the loop's thread
    is busy. Returns a one-line warning if the settle window is still too short."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
    if config.settle_ns < 2 * sys.getswitchinterval() * 1e9:
        return (
            f"timing.settle_ms {config.settle_ns / 1e6:g} is under twice the interpreter's "
            f"switch interval ({sys.getswitchinterval() * 1e3:g} ms): close presses may split"
        )
    return None


class BuzzerInput:
    def __init__(
        self,
        table: TableLoop,
        config: ArbiterConfig | None = None,
        *,
        virtual_clock: bool = False,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.table = table
        self.config = config or ArbiterConfig()
        self.virtual = virtual_clock
        self.clock = clock
        self.window = Window()
        self.last_arrival = 0
        self.verdicts: deque[Verdict] = deque(maxlen=VERDICTS_KEPT)  # the latest only
        self._timer: asyncio.TimerHandle | None = None
        self.cop_claims_stages = False
        self._claimed: Any = None  # the game's key of the last claim by a press
        # The clock epoch of live presses (the boot id, see companion.clocks): the
        # table's, from the first press on (a press while the box is still starting is
        # live too); presses from a script keep theirs (None: the script's own). A
        # window never mixes two.
        self.live_clock: str | None = getattr(table, "clock_id", None)
        self._clocks: dict[tuple[int, int], str] = {}
        self._window_clock: str | None = None

    # ---- from any thread
    def on_press(self, seat: int, ts_ns: int) -> None:
        loop = self.table.loop
        assert loop is not None, "start the TableLoop first"
        arrival = None if self.virtual else self.clock()
        loop.call_soon_threadsafe(self.arrive, seat, ts_ns, arrival, self.live_clock)

    # ---- on the loop
    def _armed(self) -> bool:
        referee = self.table.referee
        return referee.game.buzz_armed(referee.state)

    def arrive(
        self, seat: int, ts_ns: int, arrival_ns: int | None = None, clock: str | None = None
    ) -> None:
        if self.window.open and clock != self._window_clock:
            self.flush()  # stamps of two clocks are never compared
        self._window_clock = clock
        if clock is not None:
            if len(self._clocks) > 256:
                self._clocks.clear()
            self._clocks[(seat, ts_ns)] = clock
        if arrival_ns is None:
            arrival_ns = max(ts_ns, self.last_arrival)
        self.last_arrival = max(self.last_arrival, arrival_ns)
        if not self._armed():
            self.flush()
            event = self._press_event(seat, ts_ns)
            if event is not None:  # the game's own event (it may name no seat: a move)
                clock = self._clocks.pop((seat, ts_ns), None)
                self.table.post(event if clock is None else {**event, "clock": clock})
            else:  # said, not silently dropped
                self._clocks.pop((seat, ts_ns), None)
                referee = self.table.referee
                referee.notice(f"Seat {seat + 1}'s button does nothing in {referee.game.name}")
            return
        late = self._late_seat()
        if self.cop_claims_stages and seat == late and self._claim_stage(ts_ns):
            return
        result = offer(self.window, Press(seat, ts_ns, arrival_ns), late, self.config)
        if result.closed:
            self._emit(result.closed)
        new_window = result.window.open and result.window.closes_at != self.window.closes_at
        self.window = result.window
        if new_window and not self.virtual:
            self._schedule()

    def _late_seat(self) -> int | None:
        """The seat whose press answers the race, as the game defines it (Vault
        Assault: the cops)."""
        referee = self.table.referee
        return referee.game.late_seat(referee.state)

    def _press_event(self, seat: int, ts_ns: int) -> dict[str, Any] | None:
        """What a press means while the buttons do not race, as the game says (Vault
        Assault: a `buzz`, judged a false start; The Big Score: that seat flees)."""
        referee = self.table.referee
        return referee.game.press_event(referee.state, seat, ts_ns)

    def _claim_stage(self, ts_ns: int) -> bool:
        """The late seat's press as the game's claim (Vault Assault: the next stage,
        while stages 1-3 are not all in). The last claim is kept here, since the
        claimed event may not be applied yet when the next press comes."""
        referee = self.table.referee
        claim = referee.game.late_claim(referee.state, ts_ns, self._claimed)
        if claim is None:
            return False
        event, self._claimed = claim
        self.table.post(event)
        return True

    def _schedule(self) -> None:
        """Arm the timer for the open window's close time (on the arrival clock)."""
        loop = self.table.loop
        assert loop is not None and self.window.closes_at is not None
        if self._timer:
            self._timer.cancel()
        delay = max(0, self.window.closes_at - self.clock()) / 1e9
        self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Close the open window now and pass its verdict on."""
        if self._timer:
            self._timer.cancel()
            self._timer = None
        if self.window.open:
            self.window, verdict = close(self.window, self._late_seat(), self.config)
            self._emit(verdict)

    def _emit(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)
        for i, p in enumerate(verdict.order):
            event: dict[str, Any] = {"type": "buzz", "seat": p.seat, "ts_ns": p.ts_ns}
            if i == 0 and verdict.photo_finish:
                event["photo_finish"] = {
                    "seats": [q.seat for q in verdict.order],
                    "margin_ns": verdict.margin_ns(),
                    "ties": [list(t) for t in verdict.ties],
                }
            elif i > 0:
                first = verdict.order[0]
                event["after"] = {"seat": first.seat, "by_ns": p.ts_ns - first.ts_ns}
            self.table.post(self._with_clock(event))

    def _with_clock(self, event: dict[str, Any]) -> dict[str, Any]:
        clock = self._clocks.pop((event["seat"], event["ts_ns"]), None)
        if clock is not None:
            event["clock"] = clock
        return event


def attach_buttons(
    buzzers: BuzzerInput,
    pins: Sequence[int | str],
    pin_factory: Any,
    *,
    lockout_ns: int = DEFAULT_LOCKOUT_NS,
    stuck_ns: int = DEFAULT_STUCK_NS,
    clock: Callable[[], int] = time.monotonic_ns,
) -> SeatButtons:
    """The seat buttons feeding `buzzers`, with stuck/free notices on the referee and
    the held-down check on the loop's ticker (at `clock`, the edges' clock: a test's
    own). Call from the loop's thread."""
    table = buzzers.table
    loop = table.loop
    assert loop is not None, "start the TableLoop first"
    referee = table.referee
    buttons = SeatButtons(
        pins,
        buzzers.on_press,
        pin_factory=pin_factory,
        lockout_ns=lockout_ns,
        stuck_ns=stuck_ns,
        on_stuck=lambda seat, why: loop.call_soon_threadsafe(
            referee.notice,
            f"Seat {seat + 1}'s button is stuck ({why}): ignored until released",
            "stuck",
        ),
        on_unstuck=lambda seat: loop.call_soon_threadsafe(
            referee.notice, f"Seat {seat + 1}'s button is free again"
        ),
    )
    table.tick_hooks.append(lambda: buttons.check_stuck(clock()))
    return buttons
