"""The interactive terminal table for `companion sim`.

On a terminal, keys 1-4 typed on an empty line press that seat's button at once (seats
counted from 1, as people count; a press on a simulated gpiozero pin, through the same
path as a real button); any other key starts a command line, finished with Enter. With
stdin not a terminal (a pipe, a file, /dev/null), input is read a line at a time on a
worker thread: a line holding just a digit presses that seat; the end of the input ends
the session.

Lines are the house's commands (`help`, `new ...`, `play GAME NAME...`, `undo`) and
the game's own (companion.games.house); `pin` shows the table page's address and PIN
again (with `--page`). `help` is shown a page at a time (Enter: the next page). A new
game after game over starts a new log beside the old one, as `serve` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

from companion.config import TableConfig
from companion.display.terminal import TerminalDisplay
from companion.gamelog import GameLog
from companion.games.claims import ADVISE
from companion.games.house import Help, command
from companion.games.registry import Game
from companion.hardware.buttons import DEFAULT_PINS
from companion.loop import Referee
from companion.table_builder import ButtonParts, CameraParts, TableBuilder
from companion.vision.readers import DEFAULT_PIP_READER

PROMPT = "keys 1-4 press buttons · command + Enter · help · quit > "


async def run_interactive(
    referee: Referee,
    camera: str | None = None,
    profile: str = "",
    page: tuple[str, int, str | None] | None = None,
    reader: str = DEFAULT_PIP_READER,
    claims: str = ADVISE,
    choose_seconds: float = TableConfig().choose_seconds,
) -> int:
    tty = sys.stdin.isatty()
    builder = TableBuilder(referee)
    display = builder.display(TerminalDisplay(clear=tty), listens=True)
    table = builder.table
    table.before_submit.append(lambda event: new_log_after_game_over(referee, event))
    await builder.start()
    buzzers, buttons, _ = builder.buttons(ButtonParts(pins=DEFAULT_PINS))
    timer = builder.window_timer(choose_seconds)
    loop = asyncio.get_running_loop()
    server = None
    if page is not None:  # the table page, in this loop (companion.web)
        from companion.web.server import start_page

        server = await start_page(table, *page, new_game_after_over=True, window_timer=timer)
    cam = None
    if camera:  # one that will not open is said, and the referee goes on
        cam = builder.camera(CameraParts(camera, {"profile_dir": profile, "reader": reader,
                                                     "claims": claims}),
                             loop)
    done = asyncio.Event()
    buffer: list[str] = []
    pending: list[asyncio.Future[None]] = []  # presses on their way

    def set_prompt() -> None:
        display.prompt = PROMPT + "".join(buffer)
        referee.refresh()

    def handle_command(text: str) -> None:
        text = text.strip()
        if not text and display.next_help_page():  # Enter: the help's next page
            referee.refresh()
            return
        display.help = None
        display.help_page = 0
        if not text:
            referee.refresh()
            return
        if text in ("quit", "exit", "q"):
            done.set()
            return
        if text == "pin":
            if server is None:
                referee.notice("pin: no table page (start the sim with --page HOST:PORT)")
            else:
                referee.notice(f"Table page {server.url} PIN {server.pairing.pin}")
            return
        if text.isdigit() and len(text) == 1:
            seat = int(text) - 1  # people count seats (and their keys) from 1
            why = why_no_press(referee.game, referee.state, seat, len(buttons.devices))
            if why:
                referee.notice(why)
            else:
                # Press the simulated pin from another thread, like a real edge.
                pending.append(loop.run_in_executor(None, buttons.press, seat, None))
            return
        try:
            event = command(text, referee.game, referee.state)
        except ValueError as exc:
            referee.say(f"? {exc}")
            return
        if isinstance(event, Help):
            display.help = [*event.splitlines(),
                            "pin                          the table page's PIN (with --page)"]
            display.help_page = 0
            referee.refresh()
            return
        table.post(event)

    async def read_lines() -> None:
        """Not a terminal: a line at a time from a worker thread (a pipe, a regular file
        or /dev/null, which the loop's add_reader cannot watch)."""
        while not done.is_set():
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            handle_command(line)
            if pending:  # lines come in order: settle each press before the next line
                await asyncio.gather(*pending)
                pending.clear()
                await asyncio.sleep(0)
                buzzers.flush()
            await table.drain()
        done.set()

    def on_key() -> None:
        data = os.read(sys.stdin.fileno(), 1024).decode(errors="replace")
        if not data:
            done.set()
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
    reader: asyncio.Task[None] | None = None
    if tty:
        import termios
        import tty as ttymod

        old = termios.tcgetattr(sys.stdin.fileno())
        ttymod.setcbreak(sys.stdin.fileno())
        loop.add_reader(sys.stdin.fileno(), on_key)
    else:
        reader = asyncio.create_task(read_lines())
    set_prompt()
    try:
        await done.wait()
        await asyncio.gather(*pending)
        await asyncio.sleep(0)  # let the presses' hand-over to the loop run
        buzzers.flush()
        await table.drain()
    finally:
        if tty:
            loop.remove_reader(sys.stdin.fileno())
        if reader is not None and not reader.done():
            reader.cancel()  # its thread's readline returns with the input
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


def why_no_press(game: Game, state: Any, seat: int, buttons: int) -> str | None:
    """Why a seat key does nothing, in one line (None: it presses a button): key 0 (seats
    count from 1), a seat the game has not (`Game.no_seat`), or a button the table has
    not. `seat` is the 0-based seat (the key's number less one)."""
    if seat < 0:
        return f"key {seat + 1}: seats count from 1 (keys 1-{buttons})"
    why = game.no_seat(state, seat)
    if why is not None:
        return why
    if seat >= buttons:
        return f"key {seat + 1}: the simulated table has buttons 1-{buttons} only"
    return None


def new_log_after_game_over(referee: Referee, event: dict) -> None:
    """A `new_game` after game over starts a fresh game in a new log beside the old."""
    if event.get("type") != "new_game" or not referee.game.over(referee.state):
        return
    from companion.appliance import new_log_path

    old = referee.log
    if old is None:
        referee.start_new_log(None)
        referee.say("New game (no log)")
        return
    old.close()
    path = new_log_path(old.path.parent)
    referee.start_new_log(GameLog(path, fsync=getattr(old, "fsync", True)))
    referee.say(f"New game: log {path}")
