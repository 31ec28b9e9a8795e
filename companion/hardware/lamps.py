"""Discrete LEDs through gpiozero: the lamps inside the seats' buttons, and a bar graph.

``ButtonLamps``: one lamp per seat (a gpiozero ``LEDBoard``); a lit lamp means that
seat's button is live (e.g. during the race: robbers still running, and the cops' once
the Arrest may be claimed). ``ProgressBar``: a gpiozero ``LEDBarGraph`` showing a count,
e.g. the cops' stage progress 0-4.

Both take the gpiozero pin factory to use (``MockFactory`` in tests and in the simulated
table; ``None`` means gpiozero's default). Pins are BCM numbers; ``active_high=False`` for
drivers that light on LOW.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


class ButtonLamps:
    """The lamp in each seat's button, seat 0 first."""

    def __init__(
        self, pins: Sequence[int], pin_factory: Any = None, active_high: bool = True
    ) -> None:
        from gpiozero import LEDBoard

        if not pins:
            raise ValueError("ButtonLamps needs at least one pin")
        self._board = LEDBoard(
            *pins, pwm=False, active_high=active_high, initial_value=False,
            pin_factory=pin_factory,
        )
        self.seats = len(pins)

    def set_live(self, seats: Iterable[int]) -> None:
        """Light exactly these seats' lamps (seat numbers outside the board are ignored)."""
        wanted = {s for s in seats if 0 <= s < self.seats}
        for seat, led in enumerate(self._board):
            if (seat in wanted) != bool(led.is_lit):
                led.on() if seat in wanted else led.off()

    def set(self, seat: int, lit: bool) -> None:
        if not 0 <= seat < self.seats:
            raise ValueError(f"seat must be 0-{self.seats - 1}, got {seat}")
        led = self._board[seat]
        led.on() if lit else led.off()

    @property
    def live(self) -> frozenset[int]:
        return frozenset(seat for seat, led in enumerate(self._board) if led.is_lit)

    def off(self) -> None:
        self._board.off()

    def on(self) -> None:
        """Every lamp lit (``companion check``)."""
        self._board.on()

    def close(self) -> None:
        self._board.close()


class ProgressBar:
    """A row of LEDs lit from the first: ``show(n)`` lights n of them."""

    def __init__(
        self, pins: Sequence[int], pin_factory: Any = None, active_high: bool = True
    ) -> None:
        from gpiozero import LEDBarGraph

        if not pins:
            raise ValueError("ProgressBar needs at least one pin")
        self._bar = LEDBarGraph(
            *pins, pwm=False, active_high=active_high, initial_value=0,
            pin_factory=pin_factory,
        )
        self.size = len(pins)

    def show(self, count: int) -> None:
        """Light the first ``count`` LEDs (clamped to 0..size)."""
        count = max(0, min(self.size, count))
        self._bar.value = count / self.size

    @property
    def lit(self) -> int:
        return sum(1 for led in self._bar if led.is_lit)

    def close(self) -> None:
        self._bar.close()


def lamps_from_config(
    lamps: Any, pin_factory: Any = None
) -> tuple[ButtonLamps | None, ProgressBar | None]:
    """The button lamps and progress bar a ``companion.config.LampsConfig`` asks for
    (None where it gives no pins)."""
    active_high = not lamps.active_low
    buttons = ButtonLamps(lamps.pins, pin_factory, active_high) if lamps.pins else None
    bar = (
        ProgressBar(lamps.progress_pins, pin_factory, active_high)
        if lamps.progress_pins else None
    )
    return buttons, bar
