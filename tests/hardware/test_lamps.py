from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from companion.config import LampsConfig
from companion.hardware.lamps import ButtonLamps, ProgressBar, lamps_from_config

LAMP_PINS = [5, 6, 13, 19]
BAR_PINS = [12, 16, 20, 21]


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


def states(factory: MockFactory, pins: list[int]) -> list[bool]:
    return [bool(factory.pin(p).state) for p in pins]


def test_lamps_start_dark(factory: MockFactory) -> None:
    lamps = ButtonLamps(LAMP_PINS, pin_factory=factory)
    assert states(factory, LAMP_PINS) == [False] * 4
    assert lamps.live == frozenset()


def test_live_seats_are_lit_and_only_they(factory: MockFactory) -> None:
    lamps = ButtonLamps(LAMP_PINS, pin_factory=factory)
    lamps.set_live({1, 3})
    assert states(factory, LAMP_PINS) == [False, True, False, True]
    lamps.set_live([0])
    assert states(factory, LAMP_PINS) == [True, False, False, False]
    assert lamps.live == {0}
    lamps.set_live([7, -1])  # not seats of this board
    assert states(factory, LAMP_PINS) == [False] * 4


def test_single_lamp_and_all(factory: MockFactory) -> None:
    lamps = ButtonLamps(LAMP_PINS, pin_factory=factory)
    lamps.set(2, True)
    assert states(factory, LAMP_PINS) == [False, False, True, False]
    lamps.on()
    assert states(factory, LAMP_PINS) == [True] * 4
    lamps.off()
    assert states(factory, LAMP_PINS) == [False] * 4
    with pytest.raises(ValueError, match="seat must be 0-3, got 4"):
        lamps.set(4, True)


def test_active_low_lamps_drive_the_pin_low(factory: MockFactory) -> None:
    lamps = ButtonLamps(LAMP_PINS, pin_factory=factory, active_high=False)
    assert states(factory, LAMP_PINS) == [True] * 4  # dark = high
    lamps.set_live({0})
    assert states(factory, LAMP_PINS) == [False, True, True, True]
    assert lamps.live == {0}


def test_close_releases_the_pins(factory: MockFactory) -> None:
    lamps = ButtonLamps(LAMP_PINS, pin_factory=factory)
    lamps.close()
    again = ButtonLamps(LAMP_PINS, pin_factory=factory)  # would raise if still reserved
    again.set_live({3})
    assert states(factory, LAMP_PINS)[3]


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4])
def test_progress_bar_lights_count_from_the_first(factory: MockFactory, count: int) -> None:
    bar = ProgressBar(BAR_PINS, pin_factory=factory)
    bar.show(count)
    assert states(factory, BAR_PINS) == [i < count for i in range(4)]
    assert bar.lit == count


def test_progress_bar_clamps(factory: MockFactory) -> None:
    bar = ProgressBar(BAR_PINS, pin_factory=factory)
    bar.show(9)
    assert bar.lit == 4
    bar.show(-2)
    assert states(factory, BAR_PINS) == [False] * 4


def test_empty_pin_lists_are_refused(factory: MockFactory) -> None:
    with pytest.raises(ValueError):
        ButtonLamps([], pin_factory=factory)
    with pytest.raises(ValueError):
        ProgressBar([], pin_factory=factory)


def test_from_config(factory: MockFactory) -> None:
    lamps, bar = lamps_from_config(
        LampsConfig(pins=(5, 6), progress_pins=(12, 16, 20), active_low=True), factory
    )
    assert lamps is not None and bar is not None
    lamps.set_live({1})
    bar.show(2)
    assert states(factory, [5, 6]) == [True, False]  # active low: lit = low
    assert states(factory, [12, 16, 20]) == [False, False, True]
    assert lamps_from_config(LampsConfig(), factory) == (None, None)
