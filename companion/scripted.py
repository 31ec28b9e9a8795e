"""A script of events (JSON Lines, as `companion sim --script` reads them) played
through a table built like the box's: buzz lines become presses on the simulated seat
buttons (through the same settle window as a live press), every other line is posted to
the loop like a typed one. `sim --script`, the tests and the benchmarks play scripts
with `play_script`.
"""

from __future__ import annotations

import asyncio
import sys

from companion.events import EventFormatError, decode, is_comment
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import DEFAULT_PINS
from companion.loop import Referee
from companion.table_builder import ButtonParts, TableBuilder


async def play_script(
    lines: list[str],
    referee: Referee,
    *,
    echo_rejections: bool = True,
    arbiter: ArbiterConfig | None = None,
) -> tuple[int, int]:
    """Play script lines through the loop. Returns (lines played, lines rejected).

    A comment line starting `# rejected` marks the next event line as a rejection the
    script means to show (a false start, a second hostage): when it is rejected it is
    reported as expected and not counted; when it is accepted instead, that is counted."""
    builder = TableBuilder(referee, stamp_missing=False)
    table = await builder.start()
    buzzers, buttons, _ = builder.buttons(
        ButtonParts(
            arbiter=arbiter or ArbiterConfig(),
            pins=DEFAULT_PINS,
            virtual_clock=True,
            watch_stuck=False,
        )
    )
    loop = asyncio.get_running_loop()
    played = rejected = 0
    current: dict[str, int] = {"line": 0}
    expected = intended_rejections(lines)
    rejected_lines: set[int] = set()
    line_of: dict[tuple[int, int | None], int] = {}  # buzz presses come back later

    def note(event, result) -> None:
        nonlocal rejected
        if result.rejection:
            n = current["line"]
            seat, ts = event.get("seat"), event.get("ts_ns")
            if event.get("type") == "buzz" and isinstance(seat, int) and isinstance(ts, int):
                n = line_of.get((seat, ts), n)  # (a seat like [1] is unhashable: not a key)
            rejected_lines.add(n)
            if n in expected:
                if echo_rejections:
                    print(f"line {n} (rejected as intended): {result.rejection}", file=sys.stderr)
                return
            rejected += 1
            if echo_rejections:
                print(f"line {n}: {result.rejection}", file=sys.stderr)

    referee.listeners.append(note)
    try:
        for n, line in enumerate(lines, 1):
            if is_comment(line):
                continue
            current["line"] = n
            try:
                event = decode(line)
            except EventFormatError as exc:
                rejected += 1
                print(f"line {n}: {exc}", file=sys.stderr)
                continue
            played += 1
            seat = event.get("seat")
            if (
                event.get("type") == "buzz"
                and isinstance(seat, int)
                and not isinstance(seat, bool)
                and 0 <= seat < len(buttons.devices)
            ):
                ts = event.get("ts_ns")
                ts = ts if isinstance(ts, int) and not isinstance(ts, bool) else None
                before = buttons.presses
                line_of[(seat, ts)] = n
                # Pressed from a worker thread, as gpiozero's callbacks arrive on the Pi;
                # the edge goes through the same settle window as a live press.
                await loop.run_in_executor(None, buttons.press, seat, ts)
                await asyncio.sleep(0)  # let the hand-over from that thread run
                if buttons.presses == before:
                    rejected += 1
                    print(f"line {n}: press ignored (inside the button's lockout)", file=sys.stderr)
            else:
                buzzers.flush()
                table.post(event)
            await table.drain()
        buzzers.flush()
        await table.drain()
    finally:
        buttons.close()
        await table.stop()
    for n in sorted(expected - rejected_lines):
        rejected += 1
        print(f"line {n}: marked '# rejected' but the referee accepted it", file=sys.stderr)
    return played, rejected


def intended_rejections(lines: list[str]) -> set[int]:
    """Line numbers (1-based) of event lines right after a `# rejected...` comment."""
    marked: set[int] = set()
    pending = False
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if text.lower().startswith("# rejected"):
            pending = True
        elif is_comment(line):
            continue
        elif pending:
            marked.add(n)
            pending = False
    return marked
