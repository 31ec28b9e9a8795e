"""The companion as an appliance: everything `companion serve` wires together.

Configuration is validated before any hardware is touched. Then: the game log (an
unfinished game is resumed), the pin factory, the seat buttons through the settle
window, the button lamps and the stage bar, the LED display, the optional Pico
co-processor, the optional camera, and systemd's notify protocol (READY=1 once the
hardware is up, WATCHDOG=1 from the event loop itself, so a stalled loop gets
restarted). Other events (the cops' row, stages, tallies, ...) come in as JSON Lines
or the sim's short commands from `--input` (a file, a FIFO, or `-` for stdin), read on
a thread of its own so that a reader waiting for a line never holds up a stop. The
referee's messages (rejections, "choose a car to impound", the winner) are printed to
stdout, one line each (the journal), and spoken by the speaker (`[sound]`).

Once the table is running, nothing on the event loop waits for the log's disk: a new
log (a new game after a finished one, or a new start after a damaged log) is opened by
its own writer thread, and the old one is closed on a thread of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Collection, Coroutine
from pathlib import Path
from typing import Any

from companion.buzzers import BuzzerInput
from companion.clocks import boot_clock
from companion.config import Config
from companion.display.model import BOARD_SIZE
from companion.events import MAX_LINE_CHARS, EventFormatError, clip, decode, is_comment
from companion.gamelog import RESCUE_TIMEOUT_S, GameLog
from companion.games import registry
from companion.games.base import Result
from companion.games.house import Help, command
from companion.games.registry import Game
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import SeatButtons
from companion.hardware.notify import Notifier
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, resume_state
from companion.table_builder import ButtonParts, CameraParts, TableBuilder
from companion.web.address import Lookup

LOG_PATTERN = "game-*.jsonl"
INPUT_QUEUE = 64  # lines read from --input ahead of the referee, at most
# A page that cannot listen yet (its address not up at boot, its port in use) is tried
# again after PAGE_RETRY_FIRST_S, the wait doubling up to PAGE_RETRY_MAX_S, until it
# listens or serve stops.
PAGE_RETRY_FIRST_S = 2.0
PAGE_RETRY_MAX_S = 30.0
# Until the first phone pairs, the page's address and the PIN on the LED and said at
# start, then every ANNOUNCE_EVERY_S while no game is under way, ANNOUNCE_TIMES at most.
ANNOUNCE_EVERY_S = 60.0
ANNOUNCE_TIMES = 15
ANNOUNCE_HOLD_S = 10.0  # on the LED this long when the line fits without scrolling


def game_finished(state: Any, game: Game | None = None) -> bool:
    """Whether the game in `state` is finished for good (`Game.finished`): a new game
    then starts a new log. `game`: the game of `state` (None: found from it)."""
    return (game or registry.of_state(state)).finished(state)


def pick_log(log_dir: Path, now: Callable[[], float] = time.time) -> Path:
    """The newest game log in `log_dir` if its game is unfinished, else a new path. A
    directory that cannot be made is the log's fault to announce (it retries), not a
    reason to stop refereeing."""
    with contextlib.suppress(OSError):
        log_dir.mkdir(parents=True, exist_ok=True)
    logs = sorted(log_dir.glob(LOG_PATTERN))
    if logs:
        state, report = resume_state(logs[-1])
        if not game_finished(state, report.game):
            return logs[-1]
    return new_log_path(log_dir, now)


def new_log_path(
    log_dir: Path,
    now: Callable[[], float] = time.time,
    taken: Collection[str] | None = None,
) -> Path:
    """A new log's path, named by the time. With `taken` (the names known to be in the
    folder), no file-system call: for the event loop, where a hung disk must not wait."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now()))
    path = log_dir / f"game-{stamp}.jsonl"
    n = 1
    while (path.name in taken) if taken is not None else path.exists():
        n += 1
        path = log_dir / f"game-{stamp}-{n}.jsonl"
    return path


class LineReader:
    """Lines of a file descriptor, at most `limit` bytes each kept (a longer line is
    read to its end and thrown away, and a one-line reason given instead), read with
    os.read: no Python file object (whose lock a reader blocked at exit would hold),
    one syscall a chunk."""

    def __init__(self, fd: int, limit: int = MAX_LINE_CHARS * 4) -> None:
        self.fd = fd
        self.limit = limit
        self._buf = bytearray()

    def read(self) -> bytes | str | None:
        """The next line (with its newline; the last one of a file may lack it), a
        one-line reason for a line longer than the limit (read and thrown away), or
        None at the end (a FIFO: until another writer opens it)."""
        skipped = 0
        while True:
            i = self._buf.find(b"\n")
            if i >= 0:
                line = bytes(self._buf[: i + 1])
                del self._buf[: i + 1]
                if skipped or len(line) > self.limit + 1:
                    return self._too_long(skipped + len(line))
                return line
            if len(self._buf) > self.limit:
                skipped += len(self._buf)
                self._buf.clear()
            chunk = os.read(self.fd, 65536)
            if not chunk:
                rest, self._buf = bytes(self._buf), bytearray()
                if skipped:
                    return self._too_long(skipped + len(rest))
                return rest or None
            self._buf += chunk

    def _too_long(self, size: int) -> str:
        return f"line too long ({size} bytes, limit {self.limit}) skipped"


class InputFailed(str):
    """The input could not be opened or read: one line, from the input's thread."""


def read_lines_into(
    path: str,
    hand: Callable[[bytes | str | None], None],
    room: threading.Semaphore,
    stop: threading.Event,
) -> None:
    """On the input's own thread: each line of `path` (a file, a FIFO, or "-" for
    stdin) to `hand`, one `room` taken for each (released by whoever takes the line:
    a bounded queue), then None at the end of a file. A FIFO is read again when its
    next writer opens it. A failure to open or read is handed over as an InputFailed.
    Ends soon after `stop` is set, unless a read is waiting for data: the thread is a
    daemon, so it never holds up the end of the process."""
    fd = None
    try:
        # A FIFO's open waits for a writer: here, not on the event loop.
        fd = 0 if path == "-" else os.open(path, os.O_RDONLY)
        fifo = path != "-" and stat.S_ISFIFO(os.fstat(fd).st_mode)
        lines = LineReader(fd)
        while not stop.is_set():
            raw = lines.read()
            if raw is None and fifo:
                time.sleep(0.1)
                continue
            while not room.acquire(timeout=0.5):
                if stop.is_set():
                    return
            if stop.is_set():
                return
            hand(raw)
            if raw is None:
                return
    except OSError as exc:
        if not stop.is_set():
            with contextlib.suppress(RuntimeError):
                hand(InputFailed(f"cannot read --input {path}: {exc.strerror or exc}"))
    except RuntimeError:  # the loop is closed: nobody takes lines any more
        return
    finally:
        if fd not in (None, 0):
            os.close(fd)


class Appliance:
    """Owns the hardware for one run of `companion serve`."""

    def __init__(self, config: Config, *, echo: bool = True) -> None:
        self.config = config
        self.echo = echo
        self.notifier = Notifier()
        self.log_path = pick_log(Path(config.log.dir))
        # The names in the log folder, so a new log is named without asking the disk
        # (this companion holds the folder: companion.log_lock).
        self._log_names = {p.name for p in self.log_path.parent.glob("game-*")}
        self._log_names.add(self.log_path.name)
        self._retiring: list[threading.Thread] = []  # old logs closing on their own thread
        state, report = resume_state(self.log_path)
        self.resumed = report
        for problem in report.problems:
            self._say(f"{self.log_path}: {problem}")
        self.log = GameLog(self.log_path)
        # Live stamps are CLOCK_MONOTONIC of this boot: their epoch is the boot id. A log
        # resumed from another boot gets a note of the change (companion.clocks), and
        # the game takes the note as the log's replay will: a race's Go! of another
        # epoch is compared with no press.
        self.clock_id = boot_clock()
        state, note = report.clock_change(state, self.clock_id)
        if note is not None:
            self.log.append(note)
        self.referee = Referee(
            state=state, game=report.game, log=self.log,
            undo_limit=config.log.undo_limit or None,
        )
        self.referee.fault_hooks.append(self._on_fault)
        self.builder = TableBuilder(self.referee, clock_id=self.clock_id)
        self.table = self.builder.table
        # A damaged log: the game is kept up to the line before the damage (the whole
        # original is beside it, <log>.damaged) and the table may start anew instead:
        # `resume_choice` is the offer, as data for the page; choose_resume() answers.
        self.resume_choice = report.choice()
        self.referee.resume_choice = self.resume_choice
        self.pings = 0  # watchdog pings sent (each one proves the referee took a probe)
        self.table.before_submit.append(self._rotate_log_for_new_game)
        self.buttons: SeatButtons | None = None
        self.buzzers: BuzzerInput | None = None
        self.window_timer: Any = None  # The Big Score's choosing window closed on its own
        self.lamps: Any = None
        self.bar: Any = None
        self.pico: Any = None
        self.display: Any = None  # the configured display (companion.display.registry)
        self.camera: Any = None
        self.speaker: Any = None
        self.page: Any = None  # companion.web.server.PageServer when [page] is on
        self.page_listening = False  # the page listens (it may be trying again)
        self.page_retry_s = (PAGE_RETRY_FIRST_S, PAGE_RETRY_MAX_S)
        self.announce_every_s, self.announce_times = ANNOUNCE_EVERY_S, ANNOUNCE_TIMES
        self.lookup = Lookup()  # the box's name and LAN addresses, for the page's address
        self._page_tasks: list[asyncio.Task[None]] = []  # retrying, announcing
        self._address_flash: str | None = None  # the address-and-PIN flash last shown
        self.stop_event = asyncio.Event()
        from companion.announce import subscribe_messages

        subscribe_messages(self.referee, self._tell)

    def _say(self, text: str) -> None:
        if self.echo:
            print(text, file=sys.stderr, flush=True)

    def _tell(self, text: str) -> None:
        """One of the referee's messages, for the people: a line on stdout (journald),
        written after the referee has shown the event (never before a verdict)."""
        if not self.echo:
            return
        try:
            asyncio.get_running_loop().call_soon(self._print_line, f"table: {text}")
        except RuntimeError:
            self._print_line(f"table: {text}")

    @staticmethod
    def _print_line(line: str) -> None:
        print(line, flush=True)

    def announce_pin(self, pin: str, seconds: float = 10.0) -> None:
        """Show the pairing PIN on the LED display, say it, and print it."""
        from companion.speech.phrases import pin_phrase

        self._tell(f"pairing PIN {pin}")
        self.referee.show_flash_for(f"pin:{pin}", seconds)
        if self.speaker is not None:
            self.speaker.say(pin_phrase(pin))
        self.referee.refresh()

    def announce_page(self) -> None:
        """Where the page is and its PIN, for a phone to pair: the address (the box's
        mDNS name when it listens on every address) and the PIN on the LED, scrolled
        through once from its start, said, and printed."""
        from companion.display.model import flash_cycle_ticks
        from companion.speech.phrases import page_phrase
        from companion.web.address import host_port, page_host

        page, pin = self.page, self.page.pairing.pin
        host = page_host(page.host, self.lookup)
        where = host_port(host, page.port)
        self._tell(f"pair a phone: open http://{where}/ and enter PIN {pin} (on the LED "
                   "and said until a phone pairs)")
        flash = f"pin:{pin} {where.upper()}"  # a PIN flash: never on the page's own LED
        cycle = flash_cycle_ticks("PIN " + flash[4:], self.referee.size)
        seconds = ANNOUNCE_HOLD_S
        if cycle > 1:  # to where the scroll begins, then once through
            seconds = ((-self.referee.tick) % cycle + cycle + 0.5) * self.table.tick_seconds
        self._address_flash = flash
        self.referee.show_flash_for(flash, seconds)
        if self.speaker is not None:
            self.speaker.say(page_phrase(host, page.port, pin))
        self.referee.refresh()

    async def _announce_until_paired(self) -> None:
        """`announce_page` at start, then every `announce_every_s` while no game is
        under way, until a phone pairs (`announce_times` at most)."""
        pairing = self.page.pairing
        for n in range(self.announce_times):
            if pairing.paired:
                return
            if n == 0 or self.page.between_games():
                self.announce_page()
            await asyncio.sleep(self.announce_every_s)

    def _paired(self) -> None:
        """A phone paired: the address-and-PIN announcements stop, the one up too."""
        flash = self._address_flash
        if flash is not None and self.referee.flash == flash:
            self.referee.show_flash_for(flash, 0.0)  # gone at the next tick

    # ---- set-up, on the loop
    async def start(self) -> None:
        await self.builder.start()
        self._start_buttons()
        self._start_lamps()
        self._start_display()
        self._start_pico()
        self._start_camera()
        self._start_speaker()
        if self.config.page.enabled:
            await self._start_page()
        self._update_lamps(None, None)
        self.buzzers.live_clock = self.clock_id
        self._announce_damaged_log()
        self.referee.refresh()
        self._announce_ready()

    def _start_buttons(self) -> None:
        """The pin factory, the seat buttons and their arbiter, and the choosing timer."""
        cfg = self.config
        t = cfg.timing
        arbiter = ArbiterConfig(settle_ns=t.settle_ns, tie_ns=t.tie_ns, tie_rule=t.tie_rule)
        factory = make_pin_factory(cfg.gpio.pin_factory, workdir=cfg.log.dir)
        self.factory = factory
        self.buzzers, self.buttons, warning = self.builder.buttons(
            ButtonParts(
                arbiter=arbiter,
                pins=cfg.buttons.pins,
                pin_factory=factory,
                lockout_ns=t.lockout_ns,
                stuck_ns=t.stuck_after_ns,
            )
        )
        if warning:
            self._say(f"companion: warning: {warning}")
        # A seat button held down is a long press: the pairing PIN on the LED (seats
        # said as people count them, from 1).
        loop = asyncio.get_running_loop()
        self.buttons.on_stuck = lambda seat, why: loop.call_soon_threadsafe(
            self._button_held, seat, why)
        self.buttons.on_unstuck = lambda seat: loop.call_soon_threadsafe(
            self.referee.notice, f"Seat {seat + 1}'s button is free again")
        self.buzzers.cop_claims_stages = cfg.table.cop_button_claims_stages
        self.window_timer = self.builder.window_timer(cfg.table.choose_seconds)

    def _button_held(self, seat: int, why: str) -> None:
        """A button held down (a long press) shows the pairing PIN when the page is
        served; a chattering one, or a held one without the page, is stuck."""
        if why == "held down" and self.page is not None:
            self.referee.notice(f"Seat {seat + 1}'s button held down: the pairing PIN is on "
                                "the display (the button counts again once released)")
            self.announce_pin(self.page.pairing.pin)
            return
        self.referee.notice(f"Seat {seat + 1}'s button is stuck ({why}): ignored until "
                            "released", "stuck")

    def pin_where(self) -> str:
        """Where people find the PIN on this box, for the page's wrong-PIN answer."""
        held = self.config.timing.stuck_after_ns / 1e9
        return (f"hold any seat button for {held:g} s and the box's LED display shows it; "
                "between games it shows there by itself; serve printed it at start")

    def _start_lamps(self) -> None:
        """The seat lamps and the stage bar, kept up to date by the referee."""
        from companion.hardware.lamps import lamps_from_config

        self.lamps, self.bar = lamps_from_config(self.config.lamps, self.factory)
        self.referee.listeners.append(self._update_lamps)

    def _start_display(self) -> None:
        """The configured display (companion.display.registry): the LED matrix, the
        terminal or none. The games draw for its size."""
        from companion.display.registry import display_type

        display = display_type(self.config.display.type).make(self.config.display)
        if display is None:
            return
        self.display = self.builder.display(display)
        (width, height), (board_w, board_h) = self.referee.size, BOARD_SIZE
        if width < board_w or height < board_h:
            self._say(f"companion: warning: the display is {width}x{height}, smaller than "
                      f"the {board_w}x{board_h} the games' boards are laid out for: only "
                      "their top-left part shows")

    def _start_pico(self) -> None:
        """The Pico's serial link feeding the buttons, when enabled."""
        cfg = self.config
        if cfg.pico.enabled:
            from companion.hardware.pico_link import PicoLink

            self.pico = PicoLink.from_config(cfg, self.buzzers.on_press)
            self.pico.start()

    def _start_camera(self) -> None:
        """The camera reading the dice, unless its source is "none"."""
        cfg = self.config
        if cfg.camera.source != "none":
            self.camera = self.builder.camera(
                CameraParts(
                    cfg.camera.source,
                    {
                        "profile_dir": cfg.camera.profile,
                        "fps": cfg.camera.fps,
                        "threads": cfg.camera.threads,
                        "nice": cfg.camera.nice,
                        "process": cfg.camera.process,
                        "reader": cfg.camera.reader,
                        "claims": cfg.camera.claims,
                    },
                )
            )

    def _start_speaker(self) -> None:
        self.speaker = self.builder.speaker(
            self.config.sound, lambda text: self._say(f"companion: {text}")
        )

    def _announce_damaged_log(self) -> None:
        """A damaged log's choice, to the table and the output."""
        if self.resume_choice:
            self.referee.notice(
                f"LOG DAMAGED at line {self.resume_choice['damaged_line']}: "
                f"{self.resume_choice['keep']} (original kept as {self.log_path.name}.damaged);"
                ' {"type":"resume_choice","choice":"new"} starts a new game'
            )
            self._say(f"companion: {self.referee.messages[-1]}")

    def _announce_ready(self) -> None:
        """Ready: to systemd (sd_notify) and the output."""
        state = self.referee.state
        what = (
            f"resumed {self.log_path.name} ({self.resumed.events} events)"
            if (self.resumed.events)
            else f"new log {self.log_path.name}"
        )
        self.notifier.ready(f"refereeing: {what}; phase {state.phase}")
        self._say(f"companion: ready: {what}")

    async def _start_page(self) -> None:
        """The table page in this loop. Its PIN goes to the output (journald), the LED
        display and the speaker, at start and whenever a new one is drawn; with its
        address until the first phone pairs. A page that cannot listen yet is said
        once and tried again (`_retry_page`): the referee goes on meanwhile."""
        from companion.web.pairing import Pairing
        from companion.web.server import PageServer

        p = self.config.page
        pairing = Pairing(pin=p.pin) if p.pin else Pairing()
        pairing.on_pin.append(self.announce_pin)
        pairing.on_paired.append(self._paired)
        self.page = PageServer(
            self.table,
            pairing=pairing,
            log_dir=self.config.log.dir,
            new_game_after_over=True,
            host=p.host,
            port=p.port,
            window_timer=self.window_timer,
            pin_where=self.pin_where(),
        )
        self.page.lookup = self.lookup
        self.page.on_resume_choice = self.choose_resume
        try:
            await self.page.start()
        except OSError as exc:  # an address this box does not have (yet), a port in use
            wait, most = self.page_retry_s
            self._say(
                f"companion: table page not served yet: cannot listen on {p.host}:{p.port} "
                f"({exc.strerror or exc}); trying again every {wait:g}-{most:g} s (check "
                'page.host, or "0.0.0.0" for every address of the box)'
            )
            self.referee.notice(f"Page not served yet: cannot listen on {p.host}:{p.port}; "
                                "trying again")
            self._page_task(self._retry_page())
            return
        await self._page_up()

    def _page_task(self, work: Coroutine[Any, Any, None]) -> None:
        self._page_tasks.append(asyncio.create_task(work))

    async def _retry_page(self) -> None:
        """The page tried again, the wait doubling up to a cap, until it listens (said
        to the table) or serve stops."""
        p = self.config.page
        wait, most = self.page_retry_s
        while True:
            await asyncio.sleep(wait)
            try:
                await self.page.start()
            except OSError:
                wait = min(wait * 2, most)
                continue
            break
        self.referee.notice(f"Page up on {p.host}:{p.port}")
        await self._page_up()

    async def _page_up(self) -> None:
        """The page listens: its addresses and PIN to the output, then to the table
        until the first phone pairs."""
        self.page_listening = True
        urls = await asyncio.to_thread(self.page.urls)  # may run `ip`: off the loop
        also = f" (also {' '.join(urls[1:])})" if urls[1:] else ""
        self._say(f"companion: table page {urls[0]} PIN {self.page.pairing.pin}{also}")
        self._page_task(self._announce_until_paired())

    def _update_lamps(self, _event: Any, _result: Result | None) -> None:
        """The lamps as the game says: the seats whose button counts now, and the bar."""
        game, state = self.referee.game, self.referee.state
        if self.lamps is not None:
            self.lamps.set_live(game.live_seats(state))
        if self.bar is not None:
            self.bar.show(game.bar(state))

    def _rotate_log_for_new_game(self, event: dict[str, Any]) -> None:
        """A new game after a finished one starts a new log file."""
        if event.get("type") != "new_game":
            return
        if not self.referee.game.finished(self.referee.state):
            return
        self._new_log()
        self._say(f"companion: new game: log {self.log_path.name}")

    def _new_log(self, then: Callable[[Path], None] | None = None) -> Path:
        """Write to a new log from now; the old one is closed on a thread of its own
        (its held lines written, or rescued and said), then `then(old path)` runs there.
        No file-system call here: the loop never waits for a disk that hangs."""
        old, old_path = self.log, self.log_path
        self.log_path = new_log_path(old_path.parent, taken=self._log_names)
        self._log_names.add(self.log_path.name)
        self.log = GameLog(self.log_path, lazy=True)
        self.referee.start_new_log(self.log)
        self._retire(old, old_path, then)
        return old_path

    def _retire(
        self, log: GameLog, path: Path, then: Callable[[Path], None] | None = None
    ) -> None:
        """Close `log` on a daemon thread (Appliance.close waits for it, bounded), say
        any fault it ends with (held lines rescued, and where), then `then(path)`."""

        def work() -> None:
            log.close()
            if log.fault is not None:
                self._say(f"companion: {log.fault.text}")
            if then is not None:
                try:
                    then(path)
                except OSError as exc:
                    self._say(f"companion: {path.name}: {exc.strerror or exc}")

        self._retiring = [t for t in self._retiring if t.is_alive()]
        closer = threading.Thread(target=work, name="gamelog-close", daemon=True)
        closer.start()
        self._retiring.append(closer)

    def _on_fault(self, reason: str) -> None:
        """An internal error in the referee: to the journal and systemctl status (the
        displays already show it)."""
        self._say(f"companion: {reason}")
        self.notifier.status(reason)

    def choose_resume(self, choice: str) -> str:
        """The table's answer to a damaged log: "keep" the game up to the damaged line
        (what runs meanwhile), or "new": the kept log is set aside and a new one begun."""
        if not self.resume_choice:
            return "no choice pending"
        if choice == "new":
            # The kept log is renamed once closed, on the closing thread (not the loop).
            old = self._new_log(lambda old: old.replace(old.with_name(old.name + ".kept")))
            what = f"new game: log {self.log_path.name} (the old one is {old.name}.kept)"
        elif choice == "keep":
            what = self.resume_choice["keep"]
        else:
            return f"resume_choice: 'choice' must be keep or new, got {clip(repr(choice), 40)}"
        self.resume_choice = self.referee.resume_choice = None
        self.referee.notice(f"Log: {what}")
        self._say(f"companion: {what}")
        return what

    # ---- running
    def _watchdog_ping(self) -> None:
        if self.notifier.watchdog():
            self.pings += 1

    async def watchdog(self) -> None:
        """WATCHDOG=1 proves the referee is taking events: each ping is a probe queued
        behind the waiting events and sent by the referee task itself when it gets
        there. A referee task that died or wedged sends no more pings; systemd then
        restarts the service (WatchdogSec) and it resumes from its log."""
        period = self.notifier.watchdog_period()
        if not period:
            return
        while True:
            self.table.probe(self._watchdog_ping)
            await asyncio.sleep(period)

    async def read_input(self, path: str) -> None:
        """Events from a file, FIFO or stdin ('-'), one line at a time: JSON Lines, or
        the sim's short commands (`go`, `stage 2`, `flip 1:3 2:stop`, a seat digit).

        Every JSON line goes through the one bounded gate (events.decode_line); a line
        that fails, or any surprise while handing it on, is one message on stderr (the
        journal) and the reader goes on with the next line: it never ends quietly.

        The lines are read on a daemon thread of the input's own (read_lines_into), at
        most INPUT_QUEUE ahead: cancelling this task stops the reading, and a read
        waiting on a FIFO or stdin never delays the end of `serve`."""
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | str | None] = asyncio.Queue()
        room = threading.Semaphore(INPUT_QUEUE)
        stop = threading.Event()

        def hand(item: bytes | str | None) -> None:  # from the input's thread
            loop.call_soon_threadsafe(lines.put_nowait, item)

        reader = threading.Thread(
            target=read_lines_into, args=(path, hand, room, stop), name="serve-input",
            daemon=True,
        )
        reader.start()
        try:
            n = 0
            while True:
                raw = await lines.get()
                room.release()
                if raw is None:
                    return
                if isinstance(raw, InputFailed):
                    self._say(f"companion: {raw}")
                    return
                n += 1
                try:
                    self._take_input_line(n, raw)
                except Exception as exc:  # the reader never dies of one line
                    self._say(f"input line {n}: internal error: {clip(repr(exc))}")
                if self.table.loop is not None:
                    # The next line is read against the game after this one (a short
                    # command's meaning depends on it), as `sim --script` plays it.
                    await self.table.drain()
        finally:
            stop.set()

    def _take_input_line(self, n: int, raw: bytes | str) -> None:
        if isinstance(raw, str):  # the reader's own verdict (a line too long)
            self._say(f"input line {n}: {raw}")
            return
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._say(f"input line {n}: not UTF-8 text (byte {exc.start})")
            return
        if is_comment(line):
            return
        try:
            if line.lstrip()[:1].isalnum():  # a short command: `go`, `stage 2`, `1`
                event = command(line, self.referee.game, self.referee.state)
            else:  # anything else is JSON, through the bounded gate
                event = decode(line)
        except (EventFormatError, ValueError) as exc:
            self._say(f"input line {n}: {clip(str(exc))}")
            return
        if isinstance(event, Help):  # `help`: the commands now, to the output
            for text in event.splitlines():
                self._print_line(f"help: {text}")
            return
        if event.get("type") == "buzz" and "ts_ns" not in event:
            # A seat digit typed: pressed now, on this boot's clock.
            event = {**event, "ts_ns": time.monotonic_ns(), "clock": self.clock_id}
        if event.get("type") == "resume_choice":
            self._say(f"input line {n}: {self.choose_resume(event.get('choice'))}")
            return
        if event.get("type") == "buzz" and self.buzzers is not None:
            seat, ts = event.get("seat"), event.get("ts_ns")
            if (
                isinstance(seat, int)
                and isinstance(ts, int)
                and not isinstance(seat, bool)
            ):
                clock = event.get("clock")  # a script's own stamps: its own epoch (None)
                self.buzzers.arrive(seat, ts, time.monotonic_ns(), clock)
                return
        if self.buzzers is not None:
            # The input is the table's own order of events: presses read before this
            # line are judged before it, as `sim --script` does, so a script plays the
            # same game through both.
            self.buzzers.flush()
        self.table.post(event)

    async def close(self) -> None:
        self.notifier.stopping()
        for task in self._page_tasks:
            task.cancel()
        for task in self._page_tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.page is not None:
            await self.page.stop()
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
        if self.display is not None and hasattr(self.display, "close"):
            self.display.close()  # the LED matrix blanked
        if self.speaker is not None:
            self.speaker.close()
        # Bounded however the disk behaves: the log's close_timeout_s and its rescue
        # (2 x RESCUE_TIMEOUT_S); old logs still closing get as long, at the same time.
        deadline = time.monotonic() + self.log.close_timeout_s + 2 * RESCUE_TIMEOUT_S + 0.5
        self.log.close()
        if self.log.fault is not None:  # what was held, and where it went
            self._say(f"companion: {self.log.fault.text}")
        for closer in self._retiring:
            closer.join(max(0.0, deadline - time.monotonic()))


async def serve(config: Config, input_path: str | None = None, *, echo: bool = True) -> int:
    app = Appliance(config, echo=echo)
    await app.start()
    # Everything built so far (modules, the resumed game, the hardware) lives as long
    # as the process: out of the cyclic collector's sight, so a full collection walks
    # only what the game made since (some 9,000 objects, not 53,000).
    gc.freeze()
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
