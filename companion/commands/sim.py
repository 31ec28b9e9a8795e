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

from companion.events import split_lines
from companion.gamelog import GameLog
from companion.games.claims import ADVISE, CLAIM_MODES
from companion.loop import Referee, resume_state
from companion.scripted import play_script
from companion.table_builder import wire_speaker
from companion.vision.readers import DEFAULT_PIP_READER, PIP_READERS, readers_help


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
    p.add_argument(
        "--reader",
        choices=PIP_READERS,
        default=DEFAULT_PIP_READER,
        help=f"the camera's pip-dice reader (default {DEFAULT_PIP_READER}; another reads only "
        f"with --profile \"\"): {readers_help()}",
    )
    p.add_argument(
        "--claims",
        choices=CLAIM_MODES,
        default=ADVISE,
        help="what the camera does with the table's claims (as [camera] claims; default "
        "%(default)s): off, advise (says what it sees), challenge (a claim it sees is false "
        "is challenged; needs a profile whose own check passed)",
    )
    p.add_argument(
        "--sound",
        action="store_true",
        help="speak the callouts, as the box does (espeak-ng and aplay; default: silent)",
    )
    p.add_argument(
        "--page",
        metavar="HOST:PORT",
        help="also serve the table page here (e.g. 127.0.0.1:8080; interactive only)",
    )
    p.add_argument("--pin", metavar="PIN", help="the page's pairing PIN (default: a new one)")
    p.add_argument("--no-fsync", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def _open_log(path: str | None) -> tuple[GameLog | None, Referee]:
    """The log to write (an existing one is resumed). What resuming found is printed on
    stderr and also left in the referee's messages, for the screen."""
    if path is None:
        return None, Referee()
    state, report = resume_state(path)
    notes = [f"{path}: skipped {problem}" for problem in report.problems]
    log = GameLog(path)
    if report.events:
        notes.append(f"resumed {path}: {report.events} events")
    game = report.game
    if game.over(state):
        notes.append(game.over_line(state) + "; `new ...` or `play GAME NAME...` starts a "
                     "new game in a new log")
    for note in notes:
        print(note, file=sys.stderr)
    referee = Referee(state=state, game=game, log=log)
    referee.messages.extend(notes)
    return log, referee


def _speaker(args: argparse.Namespace, referee: Referee) -> object | None:
    if not getattr(args, "sound", False):
        return None
    from companion.config import SoundConfig

    def notice(text: str) -> None:
        print(text, file=sys.stderr)
        referee.messages.append(text)

    return wire_speaker(referee, SoundConfig(), notice)


def run(args: argparse.Namespace) -> int:
    if args.script:
        try:
            # Split on '\n' only: a raw U+2028 inside a JSON string is not a line break.
            lines = split_lines(Path(args.script).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"sim: cannot read script {args.script}: {exc}", file=sys.stderr)
            return 2
        log, referee = _open_log(args.log)
        if log and args.no_fsync:
            log.fsync = False
        speaker = _speaker(args, referee)
        try:
            if not args.headless:
                from companion.display.terminal import TerminalDisplay

                referee.displays.append(TerminalDisplay(clear=False))
            _, rejected = asyncio.run(play_script(lines, referee))
        finally:
            if log:
                log.close()
                if log.fault is not None:
                    print(f"sim: {log.fault.text}", file=sys.stderr)
            if speaker is not None:
                speaker.close()  # type: ignore[attr-defined]
        print(json.dumps(referee.game.summary(referee.state)))
        return 2 if args.strict and rejected else 0
    if args.headless:
        print("sim: --headless needs --script FILE", file=sys.stderr)
        return 2
    if args.camera and args.reader != DEFAULT_PIP_READER and args.profile:
        print(f'sim: --reader {args.reader} reads pip dice, which a profile turns off: add '
              '--profile ""', file=sys.stderr)
        return 2
    if args.camera:
        from companion.vision.threads import limit_native_threads

        limit_native_threads(1)  # before numpy loads: the camera gets one thread
    from companion.interactive import run_interactive

    page = None
    if getattr(args, "page", None):
        from companion.web.pairing import valid_pin
        from companion.web.server import parse_hostport

        try:
            host, port = parse_hostport(args.page)
        except ValueError as exc:
            print(f"sim: {exc}", file=sys.stderr)
            return 2
        if args.pin is not None and not valid_pin(args.pin):
            print(f"sim: --pin must be 4 to 8 digits, got {args.pin!r}", file=sys.stderr)
            return 2
        page = (host, port, args.pin)
    path = args.log or time.strftime("vault-logs/game-%Y%m%d-%H%M%S.jsonl")
    log, referee = _open_log(path)
    speaker = _speaker(args, referee)
    try:
        return asyncio.run(
            run_interactive(referee, camera=args.camera, profile=args.profile, page=page,
                            reader=args.reader, claims=args.claims)
        )
    finally:
        # the log the sim opened, and the one a new game after game over moved the
        # referee to: each is closed, so its last lines are on disk before exit
        logs = [log] + ([referee.log] if referee.log not in (None, log) else [])
        for each in logs:
            if each:
                each.close()
                if each.fault is not None:
                    print(f"sim: {each.fault.text}", file=sys.stderr)
        if speaker is not None:
            speaker.close()  # type: ignore[attr-defined]
        print(f"game log: {path}")
        if len(logs) > 1:
            print(f"game log: {logs[-1].path}")
