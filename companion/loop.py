"""The event loop: inputs become events, the engine decides, outputs go to the log and
the displays.

Everything that touches the game state runs on one asyncio loop. Inputs that arrive
on other threads (gpiozero's edge callbacks, later the camera and serial readers)
hand their events over with `loop.call_soon_threadsafe`. An accepted event is handed
to the game log (in order) and its effect shown at once, from memory; the log's writer
thread fsyncs it within one group commit (companion.gamelog). A storage fault is
announced on the table ("LOG FAILING") and the game goes on in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.display.frame import DEFAULT_SIZE, Size
from companion.display.view import Display, View
from companion.events import MAX_REASON_CHARS, clip, encode
from companion.gamelog import GameLog, LogContents, LogProblem, read_log
from companion.games import registry
from companion.games.base import Output, Rejection, Result
from companion.games.registry import Game

FLASH_SECONDS = 1.2
TICK_SECONDS = 0.25
LOG_FAULT_REFLASH_SECONDS = 15.0  # "LOG FAILING" comes back this often while it lasts


@dataclass
class ResumeReport:
    events: int = 0
    problems: list[str] = field(default_factory=list)
    # The first damaged line (its checksum fails): the game was rebuilt up to the line
    # before it and nothing after; `damage` says why. None: the log reads whole.
    damaged_line: int | None = None
    damage: str | None = None
    last_clock: str | None = None  # the clock epoch of the log's last stamped line
    chained: bool = False  # the log carries checksums
    # The game of the log (of its first accepted new_game; the default without one).
    game: Game = field(default_factory=registry.default)

    def choice(self) -> dict[str, Any] | None:
        """For the table (the page, the display, `serve --input`): what a damaged log
        offers. Answer with {"type": "resume_choice", "choice": "keep" | "new"}."""
        if self.damaged_line is None:
            return None
        return {
            "damaged_line": self.damaged_line,
            "damage": self.damage,
            "kept_events": self.events,
            "keep": f"keep the game up to line {self.damaged_line - 1}",
            "new": "start a new game",
            "options": ["keep", "new"],
        }

    def clock_change(self, state: Any, clock_id: str) -> tuple[Any, dict[str, Any] | None]:
        """Resuming this log live on the clock epoch `clock_id` (companion.clocks): the
        `clock` note to append to the log and the game after it, as a replay of the log
        with that line gives (a race's Go! of another epoch is no longer compared with
        anything). No note (None) for a log without events or already on `clock_id`."""
        from companion.clocks import clock_note

        if not self.events or self.last_clock == clock_id:
            return state, None
        note = clock_note(clock_id)
        result = self.game.apply(state, note)
        return (state if result.rejection else result.state), note


@dataclass(frozen=True)
class JudgedLine:
    """One line of a log, judged: its event and the rules' Result, or the problem that
    kept it out (a LogProblem: undecodable, torn, damaged, or rejected by the rules);
    `state` is the game after this line."""

    line: int
    event: dict[str, Any] | None
    result: Result | None
    problem: LogProblem | None
    state: Any
    game: Game  # the game of `state`


def judged_lines(
    contents: LogContents, state: Any = None, game: Game | None = None
) -> Iterator[JudgedLine]:
    """Every line of a read log in order, each event judged by the game of the log's
    first `new_game` (companion.games.registry; before it, `game`: by default the
    default game, or the game of `state`). The one replay policy-free walk that
    `resume_state` (skip what is refused) and `replay` (stop, or skip) share."""
    if game is None:
        game = registry.default() if state is None else registry.of_state(state)
    state = game.new_state() if state is None else state
    problems = [p for p in contents.problems if isinstance(p, LogProblem)]
    entries: list[tuple[int, Any]] = [(n, ev) for n, ev in contents.events]
    entries += [(p.line, p) for p in problems]
    for n, item in sorted(entries, key=lambda e: e[0]):
        if isinstance(item, LogProblem):
            yield JudgedLine(n, None, None, item, state, game)
            continue
        judge, before = registry.chosen_by(game, state, item)
        result = judge.apply(before, item)
        if result.rejection:
            problem = LogProblem(n, "rejected", result.rejection)
            yield JudgedLine(n, item, result, problem, state, game)
            continue
        game, state = judge, result.state
        yield JudgedLine(n, item, result, None, state, game)


def resume_state(path: str | Path) -> tuple[Any, ResumeReport]:
    """Rebuild the game from its log (its game in `report.game`). Lines that fail to
    decode or apply are reported (one line each) and skipped; a torn last line is
    reported, never fatal."""
    report = ResumeReport()
    state = report.game.new_state()
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return state, report
    contents = read_log(p)
    report.problems.extend(contents.problems)
    report.damaged_line, report.damage = contents.damaged_line, contents.damage
    report.chained = contents.chained
    for judged in judged_lines(contents, state):
        event = judged.event
        if event is None:  # a read problem: already reported above
            continue
        clock = event.get("clock")
        if isinstance(clock, str):
            report.last_clock = clock
        if judged.problem is not None:  # refused by the rules: reported and skipped
            report.problems.append(judged.problem)
            continue
        state, report.game = judged.state, judged.game
        report.events += 1
    return state, report


MAX_NOTE_EVENT_CHARS = 2048  # a rejected event kept whole in the log up to this size


def rejected_note(reason: str, event: dict[str, Any]) -> dict[str, Any]:
    """The log's note for a rejected input: the reason (capped) and the event itself,
    or, if it is large or not recordable, its type and size (never a megabyte twice)."""
    try:
        body = encode(event)
        body.encode("utf-8")
    except Exception:
        body = None
    if body is not None and len(body) <= MAX_NOTE_EVENT_CHARS:
        kept: dict[str, Any] = event
    else:
        kind = event.get("type")
        kept = {"type": clip(kind, 64) if isinstance(kind, str) else None}
        kept["clipped_chars"] = len(body) if body is not None else None
    return {"type": "rejected", "reason": clip(reason, MAX_REASON_CHARS), "event": kept}


class Referee:
    """Owns the game state. Call only from the event loop's thread."""

    def __init__(
        self,
        *,
        state: Any = None,
        game: Game | None = None,
        log: GameLog | None = None,
        displays: Iterable[Display] = (),
        clock: Callable[[], float] = time.monotonic,
        flash_seconds: float = FLASH_SECONDS,
        undo_limit: int | None = None,
        size: Size | None = None,
    ) -> None:
        # The game being played (the default until a new_game names another): given,
        # or the game of `state` (a resumed log's is its ResumeReport.game).
        self.game: Game = game or (registry.of_state(state) if state is not None
                                   else registry.default())
        self._state: Any = self.game.new_state() if state is None else state
        self.undo_limit = undo_limit  # undo steps kept (None: the whole game)
        self.loop: asyncio.AbstractEventLoop | None = None  # set by TableLoop.start
        self._log: GameLog | None = None
        self._log_fault_since: float | None = None  # the log fault announced, if any
        self._log_fault_flashed = 0.0
        self.log = log
        self.flash_serial = 0
        self.displays: list[Display] = []
        # The frame size the games draw for (width, height): given, else the first
        # display that has one says it (an LED panel: its device's), else 32x8.
        self.size: Size = size or DEFAULT_SIZE
        self._size_given = size is not None
        for display in displays:
            self.add_display(display)
        self.clock = clock
        self.flash_seconds = flash_seconds
        self.flash: str | None = None  # the flash showing now
        self.flash_until = 0.0
        self.flash_queue: deque[str] = deque(maxlen=4)  # flashes waiting their turn
        self.tick = 0
        self.messages: deque[str] = deque(maxlen=8)
        self.recent_events: deque[str] = deque(maxlen=12)
        self.rejections = 0
        # What the camera's reader for this game draws on the board (Game.camera_render:
        # Vault Assault's stage mosaics' pieces in place); None: nothing to draw.
        self.camera_overlay: Any = None
        self.camera_status: str | None = None
        # What the camera does with the table's claims now (companion.claims): "off"
        # without a camera, else the mode it works in; for the page.
        self.claims_mode: str = "off"
        self.listeners: list[Callable[[dict[str, Any], Result], None]] = []
        # Who hears a line the table must act on (`alert`): the speaker, with [sound].
        self.speech: list[Callable[[str], None]] = []
        self.internal_errors = 0
        self.last_fault: str | None = None
        self.fault_hooks: list[Callable[[str], None]] = []  # e.g. the journal
        # A damaged log's offer to the table (ResumeReport.choice()), for the page.
        self.resume_choice: dict[str, Any] | None = None

    @property
    def state(self) -> Any:
        """The game's state now (of `game`)."""
        return self._state

    @state.setter
    def state(self, state: Any) -> None:
        """A state set from outside (a test, a resumed game): `game` follows it."""
        if not isinstance(state, self.game.state_type):
            self.game = registry.of_state(state)
        self._state = state

    # ---- the game log and its faults
    @property
    def log(self) -> GameLog | None:
        return self._log

    @log.setter
    def log(self, log: GameLog | None) -> None:
        self._log = log
        self._log_fault_since = None
        if log is not None:
            log.on_change = self._log_changed_threadsafe

    def _log_changed_threadsafe(self) -> None:
        """From the log's writer thread: look at the log on the loop, now."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.check_log)

    def check_log(self) -> None:
        """Announce a log fault at once (flash, message) and its end; repeat the flash
        while it lasts. Runs on the loop (after each event, each tick, and whenever the
        writer reports a change)."""
        log = self._log
        fault = log.fault if log is not None else None
        if fault is not None:
            now = self.clock()
            if self._log_fault_since != fault.since:
                self._log_fault_since = fault.since
                self._log_fault_flashed = now
                # After a verdict showing now, never over it.
                self.messages.append(f"{fault.text}; refereeing goes on, retrying")
                self.show_flash("log_failing", queued=True)
                self.refresh()
            elif now - self._log_fault_flashed >= LOG_FAULT_REFLASH_SECONDS:
                self._log_fault_flashed = now
                self.show_flash("log_failing", queued=True)
        elif self._log_fault_since is not None:
            self._log_fault_since = None
            self.notice("Log writing again: everything held in memory is on disk")

    def submit(self, event: dict[str, Any]) -> Result:
        """Judge one event. Never raises: an unexpected exception while judging or
        recording it becomes an announced "internal error: ..." rejection, and one in
        showing it an announced notice; the referee goes on with the next event."""
        game = self.game
        try:
            game, state = registry.chosen_by(game, self._state, event)
            result = game.apply(state, event, self.undo_limit)
        except Exception as exc:  # a bug in the rules must not stop the referee
            reason = Rejection(self._fault(exc, "judging"), "internal_error")
            result = Result(self._state, reason, ())
        if result.rejection:
            self.rejections += 1
            self.messages.append(f"REJECTED {result.rejection}")
            if self.log is not None and isinstance(event, dict):
                # The log keeps what the table did, rejected inputs too, as a note
                # that replays as a no-op.
                try:
                    self.log.append(rejected_note(result.rejection, event))
                except Exception as exc:
                    self._fault(exc, "logging a rejection")
        else:
            try:
                if self.log is not None:
                    self.log.append(event)  # in order; fsync'd by the log's writer thread
                line = encode(event)
            except Exception as exc:  # not recordable: not accepted (nothing unlogged)
                reason = Rejection(self._fault(exc, "logging"), "internal_error")
                self.rejections += 1
                self.messages.append(f"REJECTED {reason}")
                result = Result(self._state, reason, ())
            else:
                self.game, self._state = game, result.state
                # e.g. a Big Score choice, a 3-player heist's flips: who, not what
                hidden = game.public_line(event, result.state)
                self.recent_events.append(line if hidden is None else hidden)
        try:
            self._take_outputs(result.outputs)
            finish = event.get("photo_finish") if isinstance(event, dict) else None
            if not result.rejection and isinstance(finish, dict):
                self._photo_finish(finish)
        except Exception as exc:
            self._fault(exc, "announcing")
        self.refresh()
        if self._log is not None and self._log.fault is not None:
            self.check_log()
        for listener in self.listeners:
            try:
                listener(event, result)
            except Exception as exc:
                self._fault(exc, "a listener")
        return result

    def _photo_finish(self, finish: dict[str, Any]) -> None:
        margin = finish.get("margin_ns")
        ties = finish.get("ties")
        seats = finish.get("seats")
        margin = margin if isinstance(margin, int) and not isinstance(margin, bool) else None
        tied = (
            isinstance(ties, list)
            and bool(ties)
            and isinstance(ties[0], list)
            and isinstance(seats, list)
            and len(seats) > 1
            and all(s in ties[0] for s in seats[:2])
        )
        if margin is not None and tied:
            self.messages.append(
                f"Photo finish: a tie ({abs(margin) / 1e6:.3f} ms apart), decided by the tie rule"
            )
        elif margin is not None:
            self.messages.append(f"Photo finish: won by {margin / 1e6:.3f} ms")
        self.show_flash("photo_finish", queued=True)

    def _fault(self, exc: BaseException, doing: str) -> str:
        """An unexpected exception: counted, announced on every display and to the
        fault hooks (the journal), and returned as a one-line rejection reason."""
        self.internal_errors += 1
        reason = clip(f"internal error ({doing}): {type(exc).__name__}: {exc}")
        self.messages.append(reason)
        self.last_fault = reason
        for hook in self.fault_hooks:
            with contextlib.suppress(Exception):
                hook(reason)
        return reason

    def tick_fault(self, exc: BaseException) -> None:
        """For the loop's ticker: a tick hook (or this referee's tick) failed."""
        self._fault(exc, "a tick")
        with contextlib.suppress(Exception):
            self.refresh()

    def internal_error(self, exc: BaseException, event: Any = None) -> None:
        """For the loop: an exception outside submit() (a before-submit hook)."""
        self._fault(exc, "taking an event")
        with contextlib.suppress(Exception):
            self.refresh()

    def _take_outputs(self, outputs: Iterable[Output]) -> None:
        for out in outputs:
            self.messages.append(out.text)
            if out.kind == "flash":
                self.show_flash(out.name)

    def show_flash(self, name: str, queued: bool = False) -> None:
        """Show a flash now (the verdict of a race must be seen at once), or after
        the current one when `queued`."""
        if queued and self.flash:
            self.flash_queue.append(name)
            return
        self.flash = name
        self.flash_serial += 1
        self.flash_until = self.clock() + self.flash_seconds

    def notice(self, text: str, flash: str | None = None) -> None:
        """A message from the hardware side (a stuck button, a camera gone)."""
        self.messages.append(text)
        if flash:
            self.show_flash(flash)
        self.refresh()

    def alert(self, text: str, flash: str | None = None, spoken: str | None = None) -> None:
        """A line the table must act on, from an edge (the camera cannot read a die): on
        the screens (the messages), `flash` on the LED, and `spoken` (default: the line
        itself) to each of `speech`'s hooks (the speaker); then a redraw. A hook that
        fails is a fault like a listener's: counted and journalled, the game goes on."""
        self.messages.append(text)
        if flash:
            self.show_flash(flash)
        for hook in self.speech:
            try:
                hook(spoken or text)
            except Exception as exc:
                self._fault(exc, "a speech hook")
        self.refresh()

    # ---- the narrow API for the edges (camera, serve, sim): no edge writes fields
    def say(self, text: str) -> None:
        """A line for the screens' messages, without a flash or a redraw (the caller
        redraws once when it has said everything)."""
        self.messages.append(text)

    def set_camera_overlay(self, overlay: Any, status: str | None) -> None:
        """What the camera sees, for the displays: what the game's reader draws on the
        board (None: nothing) and its one status line. Drawn at the next refresh."""
        self.camera_overlay = overlay
        self.camera_status = status

    def show_flash_for(self, name: str, seconds: float) -> None:
        """A flash shown now and held `seconds` (a pairing PIN), then a redraw."""
        self.show_flash(name)
        self.flash_until = self.clock() + seconds

    def start_new_log(self, log: GameLog | None) -> None:
        """No game, writing to `log` from now (a new game after a finished one, or the
        table's "new" answer to a damaged log): the default game, not started, until
        a new_game names one."""
        self.log = log
        self.game = registry.default()
        self._state = self.game.new_state()

    def on_tick(self) -> None:
        self.tick += 1
        if self._log is not None:
            self.check_log()
        if self.flash and self.clock() >= self.flash_until:
            self.flash = None
            if self.flash_queue:
                self.show_flash(self.flash_queue.popleft())
        self.refresh()

    def add_display(self, display: Display) -> None:
        """A display shown each view. The first with a `size` (an LED panel) sets the
        frame size the games draw for, unless the referee was given one."""
        size = getattr(display, "size", None)
        if size is not None and not self._size_given:
            self.size = (int(size[0]), int(size[1]))
            self._size_given = True
        self.displays.append(display)

    def view(self) -> View:
        game, state = self.game, self._state
        overlay = self.camera_overlay
        if overlay is not None and game.camera_render is not None:
            frame = game.camera_render(state, self.flash, self.tick, overlay, self.size)
        else:
            frame = game.render(state, self.flash, self.tick, self.size)
        return View(
            frame,
            state,
            self.flash,
            tuple(self.messages),
            tuple(self.recent_events),
            self.camera_status,
            self.flash_serial,
            game,
        )

    def refresh(self) -> None:
        if not self.displays:
            return
        v = self.view()
        for d in self.displays:
            try:
                d.show(v)
            except Exception as exc:  # a display fault: said on the others, game on
                self.internal_errors += 1
                self.last_fault = clip(f"internal error (display): {type(exc).__name__}: {exc}")
                self.messages.append(self.last_fault)


class TableLoop:
    """The asyncio side: a queue of input events feeding the referee, and a ticker
    that animates flashes and blinking."""

    def __init__(
        self,
        referee: Referee,
        tick_seconds: float = TICK_SECONDS,
        stamp_missing: bool = True,
        clock_id: str | None = None,
    ) -> None:
        self.referee = referee
        # The clock epoch stamped with live times (companion.clocks.boot_clock()).
        self.clock_id = clock_id
        self.beats = 0  # items the referee task has taken (events and probes)
        # Live inputs without a ts_ns get the loop's CLOCK_MONOTONIC time. Scripts keep
        # their own (virtual) times, so they are not stamped with the wall of this run.
        self.stamp_missing = stamp_missing
        self.tick_seconds = tick_seconds
        self.queue: asyncio.Queue[Any] = asyncio.Queue()  # events, and probe callables
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self.tick_hooks: list[Callable[[], None]] = []  # run on every tick (loop thread)
        self.before_submit: list[Callable[[dict[str, Any]], None]] = []
        # Posted events whose poster awaits the Result (TableLoop.submit), by identity:
        # the Result, with the log that took its line and the line's mark in it.
        self._waiters: dict[int, asyncio.Future[tuple[Result, GameLog | None, int]]] = {}

    # ---- inputs (any thread)
    def _stamped(self, event: dict[str, Any]) -> dict[str, Any]:
        """An input gets the time it arrived (CLOCK_MONOTONIC), unless it has one."""
        if self.stamp_missing and isinstance(event, dict) and "ts_ns" not in event:
            stamped = {**event, "ts_ns": time.monotonic_ns()}
            if self.clock_id is not None:
                stamped["clock"] = self.clock_id
            return stamped
        return event

    def probe(self, callback: Callable[[], None]) -> None:
        """Queue `callback` behind the waiting events: the referee task runs it when it
        gets there, so it proves that task is alive and taking events (the watchdog)."""
        self.queue.put_nowait(callback)

    def post_threadsafe(self, event: dict[str, Any]) -> None:
        assert self.loop is not None, "TableLoop.start() first"
        self.loop.call_soon_threadsafe(self.queue.put_nowait, self._stamped(event))

    def on_press(self, seat: int, ts_ns: int) -> None:
        """A seat button's press, from gpiozero's callback thread."""
        self.post_threadsafe({"type": "buzz", "seat": seat, "ts_ns": ts_ns})

    def post(self, event: dict[str, Any]) -> None:
        """From the loop's own thread."""
        self.queue.put_nowait(self._stamped(event))

    async def submit(self, event: dict[str, Any]) -> Result:
        """Post an event from the loop's thread and wait for the referee's Result. It
        goes through the same queue as every other input (one order, one log line)."""
        result, _, _ = await self._submit(event)
        return result

    async def submit_durable(
        self, event: dict[str, Any], timeout: float
    ) -> tuple[Result, bool | None]:
        """As `submit`, then wait (up to `timeout` seconds, never blocking the loop) until
        the event's log line (its `rejected` note, when refused) is on disk. Returns the
        Result and whether that line is durable: True, False (not yet: the storage is
        slow or failing; the line is held and written when it can be), or None (no log).
        The verdict is shown when judged, not after the disk."""
        result, log, mark = await self._submit(event)
        if log is None or mark <= 0:
            return result, None
        return result, await log.synced(mark, timeout)

    async def _submit(self, event: dict[str, Any]) -> tuple[Result, GameLog | None, int]:
        stamped = self._stamped(event)
        if stamped is event:
            stamped = dict(event)  # a fresh object: its identity keys the waiter
        future: asyncio.Future[tuple[Result, GameLog | None, int]] = (
            asyncio.get_running_loop().create_future())
        self._waiters[id(stamped)] = future
        self.queue.put_nowait(stamped)
        try:
            return await future
        finally:
            self._waiters.pop(id(stamped), None)

    # ---- running
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.referee.loop = self.loop
        self._tasks = [
            asyncio.create_task(self._consume(), name="referee"),
            asyncio.create_task(self._ticker(), name="ticker"),
        ]
        self.referee.refresh()

    async def _consume(self) -> None:
        while True:
            event = await self.queue.get()
            try:
                if callable(event):  # a probe (the watchdog's ping)
                    event()
                    continue
                waiter = self._waiters.pop(id(event), None)
                try:
                    for hook in self.before_submit:
                        hook(event)
                    result = self.referee.submit(event)
                except Exception as exc:
                    if waiter is not None and not waiter.done():
                        waiter.set_exception(exc)
                    raise
                if waiter is not None and not waiter.done():
                    log = self.referee.log
                    mark = log.appended_bytes if log is not None else 0
                    waiter.set_result((result, log, mark))
            except Exception as exc:  # never the end of the referee task
                self.referee.internal_error(exc, event)
            finally:
                self.beats += 1
                self.queue.task_done()

    async def _ticker(self) -> None:
        """The tick hooks (a held-down button check, a window's timer) and the
        referee's tick (flash animations, the display), each inside its own boundary:
        a fault is announced once (until that hook works again) and the ticker goes
        on, so one broken hook never stills the display or the other hooks."""
        failing: set[Any] = set()  # the hooks whose fault was said
        tick = self.referee.on_tick  # one bound method, so it can be told apart
        while True:
            await asyncio.sleep(self.tick_seconds)
            for hook in (*self.tick_hooks, tick):
                try:
                    hook()
                except Exception as exc:
                    if hook not in failing:
                        failing.add(hook)
                        self.referee.tick_fault(exc)
                    continue
                failing.discard(hook)

    async def drain(self) -> None:
        """Wait until every posted event has been handled."""
        await self.queue.join()

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
        self._tasks.clear()
