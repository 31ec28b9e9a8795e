"""`companion sim`: the simulated table.

Interactive (default): the LED frame, the state and the event log in the terminal;
keys 0-3 press the seat buttons (simulated gpiozero pins), other events are typed as
short commands (`help`). `--script FILE --headless` plays a script through the same
loop, buzz lines becoming presses on the simulated pins, and prints the JSON summary.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from companion.buzzers import BuzzerInput
from companion.events import EventFormatError, decode, is_comment
from companion.gamelog import GameLog
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import DEFAULT_PINS, SeatButtons
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop, resume_state
from companion.rules.summary import summary


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("sim", help="play on a simulated table in the terminal")
    p.add_argument("--script", metavar="FILE", help="play this event script (JSON Lines)")
    p.add_argument("--headless", action="store_true", help="no screen; print the summary")
    p.add_argument(
        "--log",
        metavar="FILE",
        help="game log to write; an existing log is resumed "
        "(default: vault-logs/game-TIME.jsonl when interactive, none when headless)",
    )
    p.add_argument("--strict", action="store_true", help="exit 2 if any script line is rejected")
    p.add_argument(
        "--camera",
        metavar="SOURCE",
        help="also watch the table with a camera: synthetic[:SEED], a webcam index, "
        "picamera, a video file or a folder of images (interactive only)",
    )
    p.add_argument(
        "--profile",
        metavar="DIR",
        default="calibration/synthetic",
        help="calibration profile for the camera's symbol dice (default: %(default)s)",
    )
    p.add_argument("--no-fsync", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def _open_log(path: str | None) -> tuple[GameLog | None, Referee]:
    if path is None:
        return None, Referee()
    state, report = resume_state(path)
    for problem in report.problems:
        print(f"{path}: {problem}", file=sys.stderr)
    log = GameLog(path)
    if report.events:
        print(f"resumed {path}: {report.events} events", file=sys.stderr)
    return log, Referee(state=state, log=log)


async def play_script(
    lines: list[str],
    referee: Referee,
    *,
    echo_rejections: bool = True,
    arbiter: ArbiterConfig | None = None,
) -> tuple[int, int]:
    """Play script lines through the loop. Returns (lines played, lines rejected)."""
    table = TableLoop(referee, stamp_missing=False)
    await table.start()
    buzzers = BuzzerInput(table, arbiter or ArbiterConfig(), virtual_clock=True)
    buttons = SeatButtons(DEFAULT_PINS, buzzers.on_press, pin_factory=make_pin_factory("mock"))
    loop = asyncio.get_running_loop()
    played = rejected = 0
    current: dict[str, int] = {"line": 0}
    line_of: dict[tuple[int, int | None], int] = {}  # buzz presses come back later

    def note(event, result) -> None:
        nonlocal rejected
        if result.rejection:
            rejected += 1
            n = current["line"]
            if event.get("type") == "buzz":
                n = line_of.get((event.get("seat"), event.get("ts_ns")), n)
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
    return played, rejected


def run(args: argparse.Namespace) -> int:
    if args.script:
        try:
            lines = Path(args.script).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            print(f"sim: cannot read script {args.script}: {exc}", file=sys.stderr)
            return 2
        log, referee = _open_log(args.log)
        if log and args.no_fsync:
            log.fsync = False
        try:
            if not args.headless:
                from companion.display.terminal import TerminalDisplay

                referee.displays.append(TerminalDisplay(clear=False))
            _, rejected = asyncio.run(play_script(lines, referee))
        finally:
            if log:
                log.close()
                if log.rescue_path is not None and log.fault is not None:
                    print(f"sim: {log.fault.text}", file=sys.stderr)
        print(json.dumps(summary(referee.state)))
        return 2 if args.strict and rejected else 0
    if args.headless:
        print("sim: --headless needs --script FILE", file=sys.stderr)
        return 2
    if args.camera:
        from companion.vision.threads import limit_native_threads

        limit_native_threads(1)  # before numpy loads: the camera gets one thread
    from companion.interactive import run_interactive

    path = args.log or time.strftime("vault-logs/game-%Y%m%d-%H%M%S.jsonl")
    log, referee = _open_log(path)
    try:
        return asyncio.run(run_interactive(referee, camera=args.camera, profile=args.profile))
    finally:
        if log:
            log.close()
            if log.rescue_path is not None and log.fault is not None:
                print(f"sim: {log.fault.text}", file=sys.stderr)
        print(f"game log: {path}")
