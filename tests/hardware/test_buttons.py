"""Seat buttons through gpiozero's real pin-level callback path on MockFactory pins."""

import gc

from companion.hardware.buttons import SeatButtons
from companion.hardware.pins import StampedMockPin, make_pin_factory, ticks_to_ns


def make(lockout_ns=50_000_000):
    presses = []
    factory = make_pin_factory("mock")
    buttons = SeatButtons(
        [17, 27, 22],
        lambda s, t: presses.append((s, t)),
        pin_factory=factory,
        lockout_ns=lockout_ns,
    )
    return buttons, presses


def test_press_reports_seat_and_edge_timestamp():
    buttons, presses = make()
    assert isinstance(buttons.pin(0), StampedMockPin)
    buttons.press(1, ts_ns=5_000_000_123)
    buttons.press(0, ts_ns=5_000_000_456)
    assert presses == [(1, 5_000_000_123), (0, 5_000_000_456)]
    buttons.close()


def test_release_is_not_a_press():
    buttons, presses = make()
    buttons.pin(2).drive_low(ts_ns=10)
    assert presses == [(2, 10)]
    buttons.pin(2).drive_high(ts_ns=20)
    assert presses == [(2, 10)]
    buttons.close()


def test_bounce_inside_lockout_is_ignored_first_edge_wins():
    buttons, presses = make(lockout_ns=20_000_000)
    pin = buttons.pin(0)
    t0 = 1_000_000_000
    # a 10 ms bounce train: low/high every 0.5 ms
    for i in range(20):
        pin.drive_low(ts_ns=t0 + i * 500_000)
        pin.drive_high(ts_ns=t0 + i * 500_000 + 250_000)
    assert presses == [(0, t0)]
    assert buttons.bounces == 19
    # a new press after the lockout counts
    pin.drive_low(ts_ns=t0 + 30_000_000)
    assert presses[-1] == (0, t0 + 30_000_000)
    buttons.close()


def test_callbacks_survive_garbage_collection():
    # gpiozero holds when_changed weakly: the buttons must keep strong references.
    buttons, presses = make()
    gc.collect()
    buttons.press(1, ts_ns=42)
    assert presses == [(1, 42)]
    buttons.close()


def test_unstamped_press_uses_the_monotonic_clock():
    import time

    buttons, presses = make()
    before = time.monotonic_ns()
    buttons.press(0)
    after = time.monotonic_ns()
    assert before - 1000 <= presses[0][1] <= after + 1000
    buttons.close()


def test_ticks_to_ns_rounds():
    assert ticks_to_ns(1.5) == 1_500_000_000
    assert ticks_to_ns(123.000000001) == 123_000_000_001


def test_unknown_factory_name():
    import pytest

    with pytest.raises(ValueError, match="unknown pin factory"):
        make_pin_factory("bogus")
