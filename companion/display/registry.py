"""The display types, by name: the one list that the config (``[display] type``),
``serve`` (companion.appliance) and ``companion check`` all read.

``DISPLAY_TYPES`` maps each name to a :class:`DisplayType`: a line for people, the
display ``serve`` shows the referee's views on, and the panel ``check`` lights frame by
frame, both made from the ``[display]`` table (companion.config.DisplayConfig) and both
opening nothing yet. Each carries its ``size`` (width, height): the frame size the
games draw for (companion.display.frame.DEFAULT_SIZE, 32x8, unless the hardware says
otherwise). A name added here is accepted by the config and shown by serve and check,
with nothing else to edit.

Plain Python at import; each factory imports its driver.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from companion.display.frame import DEFAULT_SIZE, Frame, Size


@dataclass(frozen=True)
class Panel:
    """What ``companion check`` lights: ``show(frame)`` at once, on a panel of ``size``."""

    size: Size
    show: Callable[[Frame], Any]


@dataclass(frozen=True)
class DisplayType:
    """One display type. ``make(display_config)``: the display of the referee's views
    for ``serve`` (its ``size`` is the frame size the games draw for), or None: nothing
    shown. ``panel(display_config)``: the :class:`Panel` ``companion check`` lights.
    ``spi``: it drives the SPI bus ``[display] spi_port`` names, whose pins the config
    keeps clear of buttons and lamps."""

    description: str
    make: Callable[[Any], Any]
    panel: Callable[[Any], Panel]
    spi: bool = False


def _max7219(display: Any) -> Any:
    from companion.display.led_display import LedDisplay
    from companion.display.led_matrix import LedMatrixDisplay

    return LedDisplay(LedMatrixDisplay.from_config(display))


def _max7219_panel(display: Any) -> Panel:
    from companion.display.led_matrix import LedMatrixDisplay

    led = LedMatrixDisplay.from_config(display)
    return Panel(led.size, lambda frame: led.show(frame, force=True))


def _terminal(display: Any) -> Any:
    from companion.display.terminal import TerminalDisplay

    # at most 20 drawings a second: a burst of events from the page is not a drawing each
    return TerminalDisplay(clear=sys.stdout.isatty(), min_interval=0.05)


def _terminal_panel(display: Any) -> Panel:
    def show(frame: Frame) -> None:
        print("\n".join(frame.to_lines("#", ".")) + "\n", flush=True)

    return Panel(DEFAULT_SIZE, show)


def _none(display: Any) -> None:
    return None


def _none_panel(display: Any) -> Panel:
    return Panel(DEFAULT_SIZE, lambda frame: None)


DISPLAY_TYPES: dict[str, DisplayType] = {
    "max7219": DisplayType("a chain of MAX7219 8x8 modules on SPI (luma.led_matrix)",
                           _max7219, _max7219_panel, spi=True),
    "terminal": DisplayType("the frame and the table printed on stdout", _terminal,
                            _terminal_panel),
    "none": DisplayType("no display", _none, _none_panel),
}


def display_type(name: str) -> DisplayType:
    """The display type named ``name``; ValueError, one line, for a name not listed."""
    try:
        return DISPLAY_TYPES[name]
    except KeyError:
        raise ValueError(f"unknown display type {name!r} (expected one of "
                         f"{', '.join(DISPLAY_TYPES)})") from None
