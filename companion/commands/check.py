"""`companion check`: a hardware self-test for the person building the box.

It reports the pin factory and whether its edge timestamps are the kernel's, lights
each display row and each lamp in turn, then asks for each seat's button and shows the
bounce it measured (every edge for 100 ms after the first), warning when the bounce is
longer than the configured lockout. `--simulate` runs it unattended on mock pins with
generated bouncing presses (what the tests and a laptop use).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from typing import Any

from companion.config import ConfigError, load_config
from companion.display.frame import Frame
from companion.display.registry import display_type
from companion.hardware.pins import KERNEL_EDGE_STAMPS, make_pin_factory, ticks_to_ns

EX_CONFIG = 78
BOUNCE_WINDOW_S = 0.1


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("check", help="hardware self-test: display, lamps, buttons")
    p.add_argument("--config", metavar="TOML", help="configuration file (default: simulated)")
    p.add_argument(
        "--simulate", action="store_true", help="mock pins and generated presses (runs unattended)"
    )
    p.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for each press")
    p.add_argument("--step", type=float, default=0.3, help="seconds each row/lamp stays lit")
    p.set_defaults(func=run)


def factory_report(name: str, factory: Any) -> str:
    if factory is None:  # "auto": whatever gpiozero picks
        from gpiozero import Device

        factory = Device._default_pin_factory()  # noqa: SLF001 - gpiozero's own chooser
        Device.pin_factory = factory
    cls = type(factory).__name__
    resolved = {
        "LGPIOFactory": "lgpio",
        "RPiGPIOFactory": "rpigpio",
        "NativeFactory": "native",
        "MockFactory": "mock",
    }.get(cls, name)
    kernel = KERNEL_EDGE_STAMPS.get(resolved, False)
    how = (
        "edges carry the kernel's CLOCK_MONOTONIC timestamp (true edge times)"
        if kernel
        else "edges are stamped when the callback runs (not the edge itself)"
    )
    return f"pin factory: {cls} ({resolved}): {how}"


class EdgeRecorder:
    """Every edge on one pin, with its timestamp, through gpiozero's pin callback."""

    def __init__(self, device: Any) -> None:
        self.edges: list[tuple[int, bool]] = []
        self.first = threading.Event()
        self._cb = self._changed  # strong reference: gpiozero holds it weakly
        device.pin.edges = "both"
        device.pin.when_changed = self._cb

    def _changed(self, ticks: float, state: int) -> None:
        self.edges.append((ticks_to_ns(ticks), bool(state)))
        if not state:
            self.first.set()

    def bounce(self) -> tuple[int, float]:
        """(edges after the first falling edge until the line settles, their span in ms).
        The bounce is over at the first quiet 20 ms; the release is not counted."""
        falls = [i for i, (_, high) in enumerate(self.edges) if not high]
        if not falls:
            return 0, 0.0
        t0 = last = self.edges[falls[0]][0]
        count = 0
        for t, _ in self.edges[falls[0] + 1 :]:
            if t - last > 20_000_000 or t - t0 > BOUNCE_WINDOW_S * 1e9:
                break
            last = t
            count += 1
        return count, (last - t0) / 1e6


def simulate_press(pin: Any, rng: random.Random) -> None:
    """A bouncing press and release on a mock pin, stamped like real edges."""
    t = time.monotonic_ns()
    pin.drive_low(ts_ns=t)
    for _ in range(rng.randint(0, 8)):
        t += rng.randint(100_000, 1_500_000)
        pin.drive_high(ts_ns=t)
        t += rng.randint(50_000, 800_000)
        pin.drive_low(ts_ns=t)
    pin.drive_high(ts_ns=t + 150_000_000)


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config) if args.config else None
    except ConfigError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return EX_CONFIG
    from companion.config import Config

    config = config or Config()
    name = "mock" if args.simulate else config.gpio.pin_factory
    step = 0.0 if args.simulate else args.step
    out = sys.stdout
    try:
        factory = make_pin_factory(name, workdir=config.log.dir)
        print(factory_report(name, factory), file=out)
    except Exception as exc:
        print(f"companion check: cannot open pin factory {name!r}: {exc}", file=sys.stderr)
        return 1
    if args.simulate and factory is not None:
        from companion.hardware.pins import StampedMockPin

        factory.pin_class = StampedMockPin

    # The display: each row, then each 8x8 module, across the panel's size.
    panel = display_type(config.display.type).panel(config.display)
    (width, height), show = panel.size, panel.show
    if args.simulate:  # nothing drawn, whatever the config's display
        def show(frame: Frame) -> None:
            return None

    for y in range(height):
        show(Frame.from_pixels([(x, y) for x in range(width)], width, height))
        time.sleep(step)
    # the 8x8 modules in reading order (a chain turned a quarter stands in a column)
    blocks = [(8 * bx, 8 * by) for by in range(-(-height // 8)) for bx in range(-(-width // 8))]
    for x0, y0 in blocks:
        show(Frame.from_pixels([(x, y) for x in range(x0, x0 + 8) for y in range(y0, y0 + 8)],
                               width, height))
        time.sleep(step)
    show(Frame.blank(width, height))
    print(f"display: rows 0-{height - 1} and modules 1-{len(blocks)} lit in turn", file=out)

    from companion.hardware.lamps import lamps_from_config

    lamps, bar = lamps_from_config(config.lamps, factory)
    if lamps is not None:
        for seat in range(len(config.lamps.pins)):
            lamps.set_live({seat})
            time.sleep(step)
        lamps.off()
        print(f"lamps: {len(config.lamps.pins)} button lamps lit in turn", file=out)
    if bar is not None:
        for n in range(len(config.lamps.progress_pins) + 1):
            bar.show(n)
            time.sleep(step)
        bar.show(0)
        print("stage bar: 0-4 shown in turn", file=out)

    if config.pico.enabled:  # the seat buttons are on the Pico, not on GPIO
        missing = _check_pico(config, args, out)
        for dev in (lamps, bar):
            if dev is not None:
                dev.close()
        if missing is None:
            return 1
        if missing:
            print(f"check: no press from seat(s) {', '.join(map(str, missing))}", file=out)
            return 1
        print("check: all seats answered", file=out)
        return 0

    from gpiozero import InputDevice

    lockout_ms = config.timing.lockout_ns / 1e6
    rng = random.Random(7)
    missing = []
    for seat, pin_no in enumerate(config.buttons.pins):
        dev = InputDevice(pin_no, pull_up=True, pin_factory=factory)
        try:
            rec = EdgeRecorder(dev)
            print(f"seat {seat} (GPIO{pin_no}): press the button...", file=out, flush=True)
            if args.simulate:
                simulate_press(dev.pin, rng)
            if not rec.first.wait(args.timeout):
                print(
                    f"seat {seat} (GPIO{pin_no}): no press within {args.timeout:g} s: check "
                    "the wiring (button between the pin and GND)",
                    file=out,
                )
                missing.append(seat)
                continue
            time.sleep(0 if args.simulate else BOUNCE_WINDOW_S)
            count, span = rec.bounce()
            verdict = (
                "covered by the lockout"
                if span < lockout_ms
                else f"LONGER than the {lockout_ms:g} ms lockout: raise timing.lockout_ms"
            )
            print(
                f"seat {seat} (GPIO{pin_no}): pressed; bounce {count} edges over "
                f"{span:.2f} ms, {verdict}",
                file=out,
            )
        finally:
            dev.close()
    for dev in (lamps, bar):
        if dev is not None:
            dev.close()
    if missing:
        print(f"check: no press from seat(s) {', '.join(map(str, missing))}", file=out)
        return 1
    print("check: all seats answered", file=out)
    return 0


def _check_pico(config: Any, args: argparse.Namespace, out: Any) -> list[int] | None:
    """The [pico] buttons: the link must shake hands and sync its clock, then each seat
    is pressed in turn (--simulate: on a simulated Pico). None: no link at all."""
    import queue

    from companion.hardware.pico_link import PicoLink

    port = config.pico.port
    if args.simulate and not str(port).startswith("picosim://"):
        port = "picosim://check"
    presses: queue.Queue[int] = queue.Queue()
    link = PicoLink(
        port,
        lambda seat, ts_ns: presses.put(seat),
        baud=config.pico.baud,
        lockout_us=round(config.timing.lockout_ms * 1000),
    )
    link.start()
    try:
        if not link.wait_synced(args.timeout):
            why = link.errors[-1] if link.errors else "no answer"
            print(f"pico: {port}: not synced within {args.timeout:g} s ({why})", file=out)
            return None
        print(
            f"pico: {port}: firmware {link.firmware}, {link.seats} seats, clock synced "
            f"(round trip {(link.rtt_ns or 0) / 1e3:.0f} us)",
            file=out,
        )
        seats = link.seats or 0
        missing = []
        for seat in range(seats):
            print(f"seat {seat} (Pico): press the button...", file=out, flush=True)
            if args.simulate:
                from companion.hardware.pico_sim import get_device

                dev = get_device(port.removeprefix("picosim://").split("?")[0])
                dev.press(seat)
                dev.release(seat)
            deadline = time.monotonic() + args.timeout
            got = False
            while time.monotonic() < deadline:
                try:
                    if presses.get(timeout=max(0.0, deadline - time.monotonic())) == seat:
                        got = True
                        break
                except queue.Empty:
                    break
            if got:
                print(f"seat {seat} (Pico): pressed", file=out)
            else:
                print(f"seat {seat} (Pico): no press within {args.timeout:g} s", file=out)
                missing.append(seat)
        return missing
    finally:
        link.stop()
