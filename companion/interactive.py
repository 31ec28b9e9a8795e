"""The interactive terminal table for `companion sim`.

On a terminal, keys 0-3 typed on an empty line press that seat's button at once (a
press on a simulated gpiozero pin, through the same path as a real button); any other
key starts a command line, finished with Enter. With stdin not a terminal (a pipe),
input is read a line at a time: a line holding just a digit presses that seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

from companion.buzzers import BuzzerInput, attach_buttons, prepare_interpreter
from companion.display.terminal import TerminalDisplay
from companion.hardware.buttons import DEFAULT_PINS
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop
from companion.sim_table import HELP, parse_command

PROMPT = "keys 0-3 press buttons · command + Enter · help · quit > "


async def run_interactive(
    referee: Referee,
    camera: str | None = None,
    profile: str = "",
    page: tuple[str, int, str | None] | None = None,
) -> int:
    tty = sys.stdin.isatty()
    display = TerminalDisplay(clear=tty)
    referee.displays.append(display)
    table = TableLoop(referee)
    await table.start()
    buzzers = BuzzerInput(table)
    prepare_interpreter(buzzers.config)
    loop = asyncio.get_running_loop()
    buttons = attach_buttons(buzzers, DEFAULT_PINS, make_pin_factory("mock"))
    server = None
    if page is not None:  # the table page, in this loop (companion.web)
        from companion.web.server import start_page

        server = await start_page(table, *page)
    cam = None
    if camera:
        from companion.camera import CameraInput

        cam = CameraInput(referee, camera, profile_dir=profile)
        try:
            cam.start(loop)
        except Exception as exc:  # say so, and referee on from the buttons
            cam.on_gone(exc)
    done = asyncio.Event()
    buffer: list[str] = []
    pending: list[asyncio.Future[None]] = []  # presses on their way

    def set_prompt() -> None:
        display.prompt = PROMPT + "".join(buffer)
        referee.refresh()

    def handle_command(text: str) -> None:
        text = text.strip()
        if not text:
            return
        if text in ("quit", "exit", "q"):
            done.set()
            return
        if text == "help":
            referee.messages.extend(HELP.splitlines())
            return
        if text.isdigit() and len(text) == 1:
            seat = int(text)
            if seat < len(buttons.devices):
                # Press the simulated pin from another thread, like a real edge.
                pending.append(loop.run_in_executor(None, buttons.press, seat, None))
            return
        try:
            table.post(parse_command(text, referee.state))
        except ValueError as exc:
            referee.messages.append(f"? {exc}")

    def on_key() -> None:
        data = os.read(sys.stdin.fileno(), 1024).decode(errors="replace")
        if not data:
            done.set()
            return
        if not tty:
            buffer.append(data)
            text = "".join(buffer)
            *lines, rest = text.split("\n")
            buffer[:] = [rest]
            for line in lines:
                handle_command(line)
            return
        for ch in data:
            if ch in "\r\n":
                handle_command("".join(buffer))
                buffer.clear()
            elif ch in ("\x7f", "\b"):
                if buffer:
                    buffer.pop()
            elif ch in ("\x03", "\x04"):
                done.set()
            elif ch.isdigit() and not buffer:
                handle_command(ch)
            elif ch.isprintable():
                buffer.append(ch)
        set_prompt()

    old = None
    if tty:
        import termios
        import tty as ttymod

        old = termios.tcgetattr(sys.stdin.fileno())
        ttymod.setcbreak(sys.stdin.fileno())
    loop.add_reader(sys.stdin.fileno(), on_key)
    set_prompt()
    try:
        await done.wait()
        await asyncio.gather(*pending)
        await asyncio.sleep(0)  # let the presses' hand-over to the loop run
        buzzers.flush()
        await table.drain()
    finally:
        loop.remove_reader(sys.stdin.fileno())
        if old is not None:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, old)
        buttons.close()
        if server is not None:
            await server.stop()
        if cam is not None:
            await cam.aclose()
        with contextlib.suppress(Exception):
            await table.stop()
    return 0
