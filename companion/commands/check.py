"""`companion check`: a hardware self-test for the person building the box.

It reports the pin factory and whether its edge timestamps are the kernel's, lights
each display row and each 8x8 module in turn (the panel's size from ``[display]``),
each lamp, then asks for each seat's button and shows the bounce it measured (every
edge for 100 ms after the first), warning when the bounce is longer than the configured
lockout. Then the rest of the box: the camera (``[camera] source``: one frame), the
speaker (``[sound]``: a callout played on the device the box plays on) and the page
(``[page]``: served on its address and answering). Every failure is one line, the other
parts are still checked, and the last line says what failed (exit 1).

`--simulate` runs it unattended: mock pins with generated bouncing presses, a MAX7219
drawn on luma's dummy device of the configured size, the synthetic camera, a speaker
that records, and the page on a free port of 127.0.0.1 (what the tests and a laptop
use).
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from companion.config import ConfigError, load_config
from companion.display.frame import Frame
from companion.display.registry import Panel, display_type
from companion.hardware.pins import KERNEL_EDGE_STAMPS, make_pin_factory, ticks_to_ns
from companion.speech.alsa import check_device, own_default, read_cards

EX_CONFIG = 78
BOUNCE_WINDOW_S = 0.1
CALLOUT = "Check. This is the table's speaker."
CAMERA_WAIT_S = 10.0  # for the first readable frame
SPEAKER_WAIT_S = 20.0  # for the callout to be rendered and played
PAGE_WAIT_S = 10.0  # for the page to answer
DARK = 8  # a frame whose mean brightness is below this is nearly black


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="hardware self-test: display, lamps, buttons, camera, speaker, page"
    )
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


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def simulated_panel(config: Any) -> Panel | None:
    """``--simulate``: a MAX7219 chain of the configured size drawn on luma's own dummy
    device (the real frame -> device path, nothing on SPI); None for other types."""
    if config.display.type != "max7219":
        return None
    from luma.core.device import dummy

    from companion.display.led_matrix import LedMatrixDisplay, max7219_size

    width, height = max7219_size(config.display.cascaded, config.display.rotate)
    led = LedMatrixDisplay(dummy(width=width, height=height, mode="1"))
    return Panel(led.size, lambda frame: led.show(frame, force=True))


def check_display(config: Any, simulate: bool, step: float, out: Any,
                  panel: Panel | None = None) -> str | None:
    """Each row, then each 8x8 module, across the panel's size (from ``[display]``).
    Returns the failure's one line, or None."""
    try:
        if panel is None and simulate:
            panel = simulated_panel(config)
            if panel is None:  # nothing drawn, whatever else the config names
                base = display_type(config.display.type).panel(config.display)
                panel = Panel(base.size, lambda frame: None)
        if panel is None:
            panel = display_type(config.display.type).panel(config.display)
        (width, height), show = panel.size, panel.show
        for y in range(height):
            show(Frame.from_pixels([(x, y) for x in range(width)], width, height))
            time.sleep(step)
        # the 8x8 modules in reading order (a chain turned a quarter stands in a column)
        blocks = [(8 * bx, 8 * by) for by in range(-(-height // 8))
                  for bx in range(-(-width // 8))]
        for x0, y0 in blocks:
            show(Frame.from_pixels([(x, y) for x in range(x0, x0 + 8)
                                    for y in range(y0, y0 + 8)], width, height))
            time.sleep(step)
        show(Frame.blank(width, height))
    except Exception as exc:  # DisplayError (SPI off, no spidev), luma's, a bad driver
        line = f"display: {_one_line(exc)}"
        print(line, file=out)
        return line
    print(f"display: rows 0-{height - 1} and modules 1-{len(blocks)} lit in turn "
          f"({config.display.type}, {width}x{height})", file=out)
    return None


def check_camera(config: Any, simulate: bool, out: Any, wait_s: float = CAMERA_WAIT_S,
                 source: Any = None) -> str | None:
    """One readable frame from ``[camera] source`` (``--simulate``: the synthetic
    camera). Returns the failure's one line, or None."""
    from companion.vision.faults import CameraGone, FrameUnreadable, SourceError
    from companion.vision.frames import open_checked, open_source, read_checked

    spec = "synthetic" if simulate else config.camera.source
    if source is None and str(spec).strip() in ("", "none"):
        print('camera: none in the config ([camera] source = "none"): not checked', file=out)
        return None
    try:
        if source is None:
            source = open_source(spec)
        name = getattr(source, "description", str(spec))
        t0 = time.monotonic()
        open_checked(source)
        try:
            frame, why = None, "no frame"
            while frame is None and time.monotonic() - t0 < wait_s:
                try:
                    frame = read_checked(source)
                except FrameUnreadable as exc:
                    why = _one_line(exc)
                    continue
                if frame is None:
                    why = "the stream ended"
                    break
        finally:
            source.close()
    except (SourceError, CameraGone, OSError, ValueError) as exc:
        line = f"camera: {_one_line(exc)}"
        print(line, file=out)
        return line
    if frame is None:
        line = f"camera: {name}: no readable frame within {wait_s:g} s ({why})"
        print(line, file=out)
        return line
    h, w = frame.image.shape[:2]
    mean = float(frame.image.mean())
    dark = ("; it is nearly black: a lens cap, or no light on the table?"
            if mean < DARK else "")
    print(f"camera: {name}: a {w}x{h} frame in {time.monotonic() - t0:.1f} s (mean "
          f"brightness {mean:.0f} of 255){dark}", file=out)
    return None


def check_speaker(config: Any, simulate: bool, out: Any, wait_s: float = SPEAKER_WAIT_S,
                  make: Callable[..., Any] | None = None,
                  cards: Callable[[], str] = read_cards,
                  configured_default: Callable[[], bool] = own_default) -> str | None:
    """A callout on the device the box plays on (``[sound] device``, else ALSA's
    default), through the same speaker ``serve`` uses, once its card is found in
    /proc/asound/cards (`cards`); ``--simulate``: a speaker that records. Returns the
    failure's one line, or None."""
    from companion.speech.player import RecordingSpeaker, make_speaker

    sound = config.sound
    if not sound.enabled:
        print("speaker: off in the config ([sound] enabled = false): not checked", file=out)
        return None
    if simulate:
        recorder = RecordingSpeaker()
        recorder.say(CALLOUT)
        print(f"speaker: simulated: would say {recorder.said[0]!r}", file=out)
        return None
    notices: list[str] = []
    speaker = (make or make_speaker)(sound, notices.append, cards=cards,
                                     configured_default=configured_default)
    device = sound.device or "default"
    found = check_device(sound.device, cards(), configured_default=configured_default())
    warning = f"sound: {found.line}" if found.ok and found.line else None
    try:
        if isinstance(speaker, RecordingSpeaker):  # make_speaker said why, in one line
            why = notices[0].removeprefix("sound: ") if notices else "no speaker"
            line = f"speaker: {why}"
            print(line, file=out)
            return line
        speaker.say(CALLOUT)
        deadline = time.monotonic() + wait_s
        while (CALLOUT not in speaker.played and not _faults(notices, warning)
               and time.monotonic() < deadline):
            time.sleep(0.05)
    finally:
        speaker.close()
    faults = _faults(notices, warning)
    if faults or CALLOUT not in speaker.played:
        why = (faults[0].removeprefix("sound: ").removesuffix("; the game goes on") if faults
               else f"the callout was not played within {wait_s:g} s")
        line = f"speaker: ALSA device {device!r}: {why}"
        print(line, file=out)
        return line
    on = f" (card {found.card})" if found.card is not None else ""
    hint = f"; but {found.line}" if warning else ""  # where a box without a screen is silent
    print(f"speaker: said {CALLOUT!r} on ALSA device {device!r}{on}: heard it?{hint}",
          file=out)
    return None


def _faults(notices: list[str], warning: str | None) -> list[str]:
    return [n for n in notices if n != warning]


def check_page(config: Any, simulate: bool, out: Any,
               wait_s: float = PAGE_WAIT_S) -> str | None:
    """The table page served on ``[page] host:port`` as ``serve`` serves it, and asked
    for its page and its board over HTTP (``--simulate``: on a free port of
    127.0.0.1). Returns the failure's one line, or None."""
    import asyncio

    page = config.page
    if not page.enabled and not simulate:
        print("page: off in the config ([page] enabled = false): not checked", file=out)
        return None
    host, port = ("127.0.0.1", 0) if simulate else (page.host, page.port)
    try:
        ok, line = asyncio.run(_page_answers(host, port, page.pin, wait_s))
    except Exception as exc:  # an import or loop failure: still one line
        ok, line = False, f"page: {_one_line(exc)}"
    print(line, file=out)
    return None if ok else line


async def _page_answers(host: str, port: int, pin: str | None,
                        wait_s: float) -> tuple[bool, str]:
    import aiohttp

    from companion.loop import Referee, TableLoop
    from companion.web.pairing import Pairing
    from companion.web.server import PageServer

    table = TableLoop(Referee())
    server = PageServer(table, pairing=Pairing(pin=pin) if pin else Pairing(), host=host,
                        port=port)
    try:
        await server.start()
    except OSError as exc:  # an address this box does not have, a port in use
        await server.stop()
        return False, (f"page: cannot listen on {host}:{port} ({exc.strerror or exc}): set "
                       "[page] host to this box's address (hostname -I), or 0.0.0.0 for all")
    ask = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    base = f"http://[{ask}]:{server.port}" if ":" in ask else f"http://{ask}:{server.port}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=wait_s)) as http:
            for path in ("/", "/board"):
                async with http.get(base + path) as r:
                    body = await r.text()
                    if r.status != 200 or "<html" not in body.lower():
                        return False, f"page: {base}{path} answered {r.status}, not the page"
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        return False, f"page: {base}/ did not answer within {wait_s:g} s ({_one_line(exc)})"
    finally:
        await server.stop()
    return True, f"page: {server.url} answers (the page and /board)"


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
    problems: list[str] = []  # the parts that failed, in order
    try:
        factory = make_pin_factory(name, workdir=config.log.dir)
        print(factory_report(name, factory), file=out)
    except Exception as exc:
        print(f"companion check: cannot open pin factory {name!r}: {exc}", file=sys.stderr)
        factory = None
        problems.append("pins")
    if args.simulate and factory is not None:
        from companion.hardware.pins import StampedMockPin

        factory.pin_class = StampedMockPin

    if check_display(config, args.simulate, step, out):
        problems.append("display")
    if "pins" not in problems:
        problems += _check_buttons(config, factory, args, step, out)
    for part, check in (("camera", check_camera), ("speaker", check_speaker),
                        ("page", check_page)):
        if check(config, args.simulate, out):
            problems.append(part)
    if problems:
        print(f"check: {len(problems)} part(s) failed: {', '.join(problems)}", file=out)
        return 1
    print("check: nothing failed", file=out)
    return 0


def _check_buttons(config: Any, factory: Any, args: argparse.Namespace, step: float,
                   out: Any) -> list[str]:
    """The lamps, the stage bar and each seat's button; the parts that failed."""
    from companion.hardware.lamps import lamps_from_config

    problems: list[str] = []
    try:
        lamps, bar = lamps_from_config(config.lamps, factory)
    except Exception as exc:  # gpiozero's: a pin in use, a pin this board lacks
        print(f"lamps: {type(exc).__name__}: {_one_line(exc)}", file=out)
        lamps = bar = None
        problems.append("lamps")
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
        print(f"stage bar: 0-{len(config.lamps.progress_pins)} shown in turn", file=out)

    try:
        if config.pico.enabled:  # the seat buttons are on the Pico, not on GPIO
            missing = _check_pico(config, args, out)
        else:
            missing = _check_gpio_buttons(config, factory, args, out)
    finally:
        for dev in (lamps, bar):
            if dev is not None:
                dev.close()
    if missing is None:
        return [*problems, "buttons"]
    if missing:
        print(f"check: no press from seat(s) {', '.join(map(str, missing))}", file=out)
        return [*problems, "buttons"]
    print("check: all seats answered", file=out)
    return problems


def _check_gpio_buttons(config: Any, factory: Any, args: argparse.Namespace,
                        out: Any) -> list[int]:
    from gpiozero import InputDevice

    lockout_ms = config.timing.lockout_ns / 1e6
    rng = random.Random(7)
    missing = []
    for seat, pin_no in enumerate(config.buttons.pins):
        try:
            dev = InputDevice(pin_no, pull_up=True, pin_factory=factory)
        except Exception as exc:  # gpiozero's: a pin in use, a pin this board lacks
            print(f"seat {seat} (GPIO{pin_no}): cannot open the pin: {type(exc).__name__}: "
                  f"{_one_line(exc)}", file=out)
            missing.append(seat)
            continue
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
    return missing


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
