"""The companion as an appliance: everything `companion serve` wires together.

Configuration is validated before any hardware is touched. Then: the game log (an
unfinished game is resumed), the pin factory, the seat buttons through the settle
window, the button lamps and the stage bar, the LED display, the optional Pico
co-processor, the optional camera, and systemd's notify protocol (READY=1 once the
hardware is up, WATCHDOG=1 from the event loop itself, so a stalled loop gets
restarted). Other events (the cops' row, stages, tallies, ...) come in as JSON Lines
from `--input` (a file, a FIFO, or `-` for stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.buzzers import BuzzerInput, attach_buttons, prepare_interpreter
from companion.config import Config
from companion.display.frame import Frame
from companion.events import EventFormatError, decode, is_comment
from companion.gamelog import GameLog
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import SeatButtons
from companion.hardware.notify import Notifier
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop, View, resume_state
from companion.rules.engine import Result, winners_of
from companion.rules.state import ASSAULT, GAME_OVER, NO_GAME, GameState

LOG_PATTERN = "game-*.jsonl"


def game_finished(state: GameState) -> bool:
    return state.phase == GAME_OVER and bool(winners_of(state))


def pick_log(log_dir: Path, now: Callable[[], float] = time.time) -> Path:
    """The newest game log in `log_dir` if its game is unfinished, else a new path."""
    log_dir.mkdir(parents=True, exist_ok=True)
    logs = sorted(log_dir.glob(LOG_PATTERN))
    if logs:
        state, _ = resume_state(logs[-1])
        if not game_finished(state):
            return logs[-1]
    return new_log_path(log_dir, now)


def new_log_path(log_dir: Path, now: Callable[[], float] = time.time) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now()))
    path = log_dir / f"game-{stamp}.jsonl"
    n = 1
    while path.exists():
        n += 1
        path = log_dir / f"game-{stamp}-{n}.jsonl"
    return path


def live_seats(state: GameState) -> set[int]:
    """Seats whose button counts now: robbers not yet escaped during the race, and the
    cops once they may call the Arrest."""
    turn = state.turn
    if state.phase != ASSAULT or turn is None:
        return set()
    live = {s for s in state.robbers() if s not in turn.escaped}
    if turn.stages >= 3 or state.bank_empty:
        live.add(turn.cop)
    return live


class LedDisplay:
    """Shows the referee's view on the LED matrix: the board frame, and each new flash
    as its full animation (companion.display.animations)."""

    def __init__(self, led: Any) -> None:
        self.led = led
        self._flash: str | None = None
        self._anim: asyncio.Task[Any] | None = None

    def show(self, view: View) -> None:
        from companion.display.animations import flash as animation

        if view.flash and view.flash != self._flash:
            self._flash = view.flash
            steps = animation(view.flash) if view.flash in ANIMATED else [(view.frame, 900)]
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.led.show(steps[-1][0])
                return
            if self._anim:
                self._anim.cancel()
            self._anim = loop.create_task(self.led.play_async(steps))
            return
        self._flash = view.flash
        if self._anim and not self._anim.done():
            return
        self.led.show(view.frame)

    def close(self) -> None:
        if self._anim:
            self._anim.cancel()
        with contextlib.suppress(Exception):
            self.led.show(Frame.blank(), force=True)


ANIMATED = frozenset({"go", "bang", "hostage", "escaped", "arrested", "empty", "photo_finish"})


class Appliance:
    """Owns the hardware for one run of `companion serve`."""

    def __init__(self, config: Config, *, echo: bool = True) -> None:
        self.config = config
        self.echo = echo
        self.notifier = Notifier()
        self.log_path = pick_log(Path(config.log.dir))
        state, report = resume_state(self.log_path)
        self.resumed = report
        for problem in report.problems:
            self._say(f"{self.log_path}: {problem}")
        self.log = GameLog(self.log_path)
        self.referee = Referee(state=state, log=self.log)
        self.table = TableLoop(self.referee)
        self.table.before_submit.append(self._rotate_log_for_new_game)
        self.buttons: SeatButtons | None = None
        self.buzzers: BuzzerInput | None = None
        self.lamps: Any = None
        self.bar: Any = None
        self.pico: Any = None
        self.led: LedDisplay | None = None
        self.camera: Any = None
        self.stop_event = asyncio.Event()

    def _say(self, text: str) -> None:
        if self.echo:
            print(text, file=sys.stderr, flush=True)

    # ---- set-up, on the loop
    async def start(self) -> None:
        cfg = self.config
        await self.table.start()
        loop = asyncio.get_running_loop()
        t = cfg.timing
        arbiter = ArbiterConfig(settle_ns=t.settle_ns, tie_ns=t.tie_ns, tie_rule=t.tie_rule)
        warning = prepare_interpreter(arbiter)
        if warning:
            self._say(f"companion: warning: {warning}")
        self.buzzers = BuzzerInput(self.table, arbiter)
        factory = make_pin_factory(cfg.gpio.pin_factory, workdir=cfg.log.dir)
        self.factory = factory
        self.buttons = attach_buttons(
            self.buzzers,
            cfg.buttons.pins,
            factory,
            lockout_ns=t.lockout_ns,
            stuck_ns=t.stuck_after_ns,
        )
        from companion.hardware.lamps import lamps_from_config

        self.lamps, self.bar = lamps_from_config(cfg.lamps, factory)
        self.referee.listeners.append(self._update_lamps)
        if cfg.display.type == "max7219":
            from companion.display.led_matrix import LedMatrixDisplay

            self.led = LedDisplay(LedMatrixDisplay.from_config(cfg.display))
            self.referee.displays.append(self.led)
        elif cfg.display.type == "terminal":
            from companion.display.terminal import TerminalDisplay

            self.referee.displays.append(TerminalDisplay(clear=sys.stdout.isatty()))
        if cfg.pico.enabled:
            from companion.hardware.pico_link import PicoLink

            self.pico = PicoLink.from_config(cfg, self.buzzers.on_press)
            self.pico.start()
        if cfg.camera.source != "none":
            from companion.camera import CameraInput

            self.camera = CameraInput(
                self.referee, cfg.camera.source, profile_dir=cfg.camera.profile
            )
            try:
                self.camera.start(loop)
            except Exception as exc:  # a camera that will not open: say so, referee on
                self.camera.on_gone(exc)
        self._update_lamps(None, None)
        self.referee.refresh()
        state = self.referee.state
        what = (
            f"resumed {self.log_path.name} ({self.resumed.events} events)"
            if (self.resumed.events)
            else f"new log {self.log_path.name}"
        )
        self.notifier.ready(f"refereeing: {what}; phase {state.phase}")
        self._say(f"companion: ready: {what}")

    def _update_lamps(self, _event: Any, _result: Result | None) -> None:
        state = self.referee.state
        if self.lamps is not None:
            self.lamps.set_live(live_seats(state))
        if self.bar is not None:
            self.bar.show(state.turn.stages if state.turn else 0)

    def _rotate_log_for_new_game(self, event: dict[str, Any]) -> None:
        """A new game after a finished one starts a new log file."""
        if event.get("type") != "new_game":
            return
        state = self.referee.state
        if state.phase == NO_GAME or not game_finished(state):
            return
        self.log.close()
        self.log_path = new_log_path(self.log_path.parent)
        self.log = GameLog(self.log_path)
        self.referee.log = self.log
        self.referee.state = GameState()
        self._say(f"companion: new game: log {self.log_path.name}")

    # ---- running
    async def watchdog(self) -> None:
        period = self.notifier.watchdog_period()
        if not period:
            return
        while True:
            self.notifier.watchdog()  # sent from the loop: a stalled loop stops pinging
            await asyncio.sleep(period)

    async def read_input(self, path: str) -> None:
        """JSON Lines events from a file, FIFO or stdin ('-'), one line at a time."""
        loop = asyncio.get_running_loop()
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            n = 0
            while True:
                line = await loop.run_in_executor(None, fh.readline)
                if not line:
                    if path == "-" or not Path(path).is_fifo():
                        return
                    await asyncio.sleep(0.1)
                    continue
                n += 1
                if is_comment(line):
                    continue
                try:
                    event = decode(line)
                except EventFormatError as exc:
                    self._say(f"input line {n}: {exc}")
                    continue
                if event.get("type") == "buzz" and self.buzzers is not None:
                    seat, ts = event.get("seat"), event.get("ts_ns")
                    if isinstance(seat, int) and isinstance(ts, int):
                        self.buzzers.arrive(seat, ts, time.monotonic_ns())
                        continue
                self.table.post(event)
        finally:
            if fh is not sys.stdin:
                fh.close()

    async def close(self) -> None:
        self.notifier.stopping()
        if self.buzzers:
            self.buzzers.flush()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.table.drain(), 2)
        await self.table.stop()
        if self.pico:
            self.pico.stop()
        if self.camera:
            await self.camera.aclose()
        if self.buttons:
            self.buttons.close()
        for dev in (self.lamps, self.bar):
            if dev is not None:
                dev.close()
        if self.led:
            self.led.close()
        self.log.close()


async def serve(config: Config, input_path: str | None = None, *, echo: bool = True) -> int:
    app = Appliance(config, echo=echo)
    await app.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, app.stop_event.set)
    tasks = [asyncio.create_task(app.watchdog())]
    if input_path:
        tasks.append(asyncio.create_task(app.read_input(input_path)))
    try:
        await app.stop_event.wait()
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        await app.close()
    return 0
