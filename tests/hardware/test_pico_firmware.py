"""The MicroPython firmware (hardware/pico/main.py), run on CPython with stand-ins for
the MicroPython-only modules: its framing matches the host's, and its debouncer and
edge ring behave as PROTOCOL.md says."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

import pytest

from companion.hardware.pico_protocol import HOST_KINDS, crc8, encode, parse_line

FIRMWARE = Path(__file__).resolve().parents[2] / "hardware" / "pico" / "main.py"
PROTOCOL_DOC = FIRMWARE.parent / "PROTOCOL.md"


def test_firmware_compiles() -> None:
    compile(FIRMWARE.read_text(), str(FIRMWARE), "exec")


@pytest.fixture
def fw_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The firmware's module namespace, with machine/micropython stand-ins and the
    MicroPython time functions (ticks_us wrapping at 2**30) added to time."""
    ticks = {"now": 0}
    machine = types.ModuleType("machine")

    class Pin:  # only what the module body touches; main() is not run
        IN = OUT = PULL_UP = IRQ_FALLING = IRQ_RISING = 0

    machine.Pin = Pin  # type: ignore[attr-defined]
    micropython = types.ModuleType("micropython")
    micropython.alloc_emergency_exception_buf = lambda n: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "machine", machine)
    monkeypatch.setitem(sys.modules, "micropython", micropython)
    monkeypatch.setattr(time, "ticks_us", lambda: ticks["now"] % 2**30, raising=False)
    monkeypatch.setattr(
        time, "ticks_diff",
        lambda a, b: ((a - b + 2**29) % 2**30) - 2**29, raising=False,
    )
    module = types.ModuleType("pico_main")
    module.__dict__["__name__"] = "pico_main"  # not "__main__": main() does not run
    exec(compile(FIRMWARE.read_text(), str(FIRMWARE), "exec"), module.__dict__)
    module.ticks = ticks  # type: ignore[attr-defined]
    return module


class Wire:
    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def __call__(self, text: str) -> None:
        self.lines.append(text.encode())

    def messages(self) -> list[str]:
        return [str(parse_line(line)) for line in self.lines]


def make_fw(mod, seats: int = 4, levels: dict[int, int] | None = None):
    wire = Wire()
    lamps: dict[int, int] = {}
    state = levels if levels is not None else {}
    fw = mod.Firmware(mod.Clock64(), seats, lambda s: state.get(s, 1),
                      lambda s, on: lamps.__setitem__(s, on), wire, 12345)
    return fw, wire, lamps, state


def test_firmware_crc_and_frames_match_the_host(fw_module) -> None:
    for data in (b"", b"123456789", b"EDGE 5 1 D 123456", bytes(range(32, 127))):
        assert fw_module.crc8(data) == crc8(data)
    assert fw_module.frame("PONG 1 2 3").encode() == encode("PONG", 1, 2, 3)
    assert fw_module.unframe(encode("RESEND", 9).decode()) == ["RESEND", "9"]
    assert fw_module.unframe("RESEND 9*00") is None


def test_handshake_ping_led_lockout(fw_module) -> None:
    fw, wire, lamps, _ = make_fw(fw_module)
    fw.handle_line(encode("HELLO", 1).decode())
    fw_module.ticks["now"] = 777
    fw.handle_line(encode("PING", 42).decode())
    fw.handle_line(encode("LED", 0b0101).decode())
    fw.handle_line(encode("LOCKOUT", 20000).decode())
    fw.handle_line(encode("HELLO", 2).decode())
    fw.handle_line("HELLO 1*00")
    assert wire.messages() == [
        "HI 1 12345 4 1 vault-pico-1.0",
        "PONG 42 777 1",
        "LED 5",
        "LOCKOUT 20000",
        "ERR version",
        "ERR crc",
    ]
    assert lamps == {0: 1, 1: 0, 2: 1, 3: 0}
    assert fw.lockout_us == 20000
    # every host message kind is understood
    assert set(HOST_KINDS) == {"HELLO", "PING", "ACK", "RESEND", "LED", "LOCKOUT"}


def test_bounce_train_is_one_press_stamped_at_its_first_edge(fw_module) -> None:
    fw, wire, _, levels = make_fw(fw_module)
    fw.lockout_us = 50_000
    t0 = 1_000_000
    # a 20 ms bounce train on seat 2: edges every 700 us
    for k in range(29):
        fw.raw_edge(2, t0 + 700 * k)
    levels[2] = 0  # it settles pressed
    fw.reconcile(t0 + 60_000)
    assert wire.messages() == [f"EDGE 1 2 D {t0}"]
    # released 100 ms later, with its own bounce
    levels[2] = 1
    for k in range(5):
        fw.raw_edge(2, t0 + 100_000 + 300 * k)
    fw.reconcile(t0 + 200_000)
    assert wire.messages()[1] == f"EDGE 2 2 U {t0 + 100_000}"


def test_tap_shorter_than_the_lockout_is_press_then_release(fw_module) -> None:
    fw, wire, _, levels = make_fw(fw_module)
    fw.lockout_us = 50_000
    fw.raw_edge(0, 10_000)  # press
    fw.raw_edge(0, 30_000)  # release inside the lockout: ignored for now
    levels[0] = 1
    fw.reconcile(40_000)  # still locked
    assert wire.messages() == ["EDGE 1 0 D 10000"]
    fw.reconcile(70_000)
    assert wire.messages() == ["EDGE 1 0 D 10000", "EDGE 2 0 U 30000"]


def test_two_seats_microseconds_apart_keep_their_stamps(fw_module) -> None:
    fw, wire, _, _ = make_fw(fw_module)
    fw.raw_edge(3, 5_000_001)
    fw.raw_edge(1, 5_000_000)  # delivered second, stamped first
    assert wire.messages() == ["EDGE 1 3 D 5000001", "EDGE 2 1 D 5000000"]


def test_irq_queue_and_clock_extension_across_the_wrap(fw_module) -> None:
    mod = fw_module
    fw, wire, _, _ = make_fw(mod)
    for step in range(1, 4):  # the main loop keeps the clock fresh (every ms, really)
        mod.ticks["now"] = step * 2**28
        fw.clock.now()
    mod.ticks["now"] = 2**30 - 10  # just before ticks_us wraps
    assert fw.clock.now() == 2**30 - 10
    handler = mod.make_handler(1)
    mod.ticks["now"] = 2**30 + 5  # raw ticks_us reads 5 now
    handler(None)
    fw.drain()
    assert wire.messages() == [f"EDGE 1 1 D {2**30 + 5}"]


def test_resend_and_lost(fw_module) -> None:
    fw, wire, _, levels = make_fw(fw_module)
    fw.lockout_us = 0
    for k in range(70):  # 70 edges into a ring of 64
        fw.raw_edge(0, 1000 * (k + 1))
    wire.lines.clear()
    fw.handle_line(encode("RESEND", 68).decode())
    assert wire.messages() == ["EDGE 68 0 U 68000", "EDGE 69 0 D 69000", "EDGE 70 0 U 70000"]
    wire.lines.clear()
    fw.handle_line(encode("RESEND", 3).decode())
    msgs = wire.messages()
    assert msgs[0] == "LOST 3 6"
    assert msgs[1] == "EDGE 7 0 D 7000" and len(msgs) == 1 + 64


def test_protocol_doc_names_every_message() -> None:
    text = PROTOCOL_DOC.read_text()
    for kind in ("HELLO", "HI", "PING", "PONG", "EDGE", "ACK", "RESEND", "LOST", "LED",
                 "LOCKOUT", "ERR"):
        assert f"`{kind}" in text, kind
