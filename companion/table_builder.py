"""One builder that wires a table from injected parts: the loop, the buzzers and the
seat buttons, the displays, the camera and the speaker.

`serve` (companion.appliance), the interactive sim (companion.interactive),
`sim --script` (companion.commands.sim) and the tests call these steps instead of
writing the wiring themselves; each caller injects what differs (the pin factory, the
pins, the arbiter's windows, a virtual clock for scripts, the camera source). The page
stays where it is (companion.web), started by its callers on the built loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.buzzers import BuzzerInput, attach_buttons, prepare_interpreter
from companion.hardware.arbitration import ArbiterConfig
from companion.hardware.buttons import DEFAULT_PINS, SeatButtons
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop


@dataclass
class ButtonParts:
    """What the seat buttons are made of: pins on a pin factory (None: gpiozero's
    MockFactory, the simulated table), the arbiter's windows, and whether presses carry
    a script's own (virtual) stamps. `watch_stuck` adds the stuck/free notices and the
    held-down check on the loop's ticker (a live table); a script's presses skip it."""

    arbiter: ArbiterConfig = field(default_factory=ArbiterConfig)
    pins: Sequence[int | str] = DEFAULT_PINS
    pin_factory: Any = None
    lockout_ns: int | None = None
    stuck_ns: int | None = None
    virtual_clock: bool = False
    watch_stuck: bool = True
    stuck_clock: Callable[[], int] | None = None  # the held-down check's (None: monotonic)


@dataclass
class CameraParts:
    source: str
    options: dict[str, Any] = field(default_factory=dict)  # CameraInput's keywords


class TableBuilder:
    """Builds one table around a referee, a step at a time, in the order the callers
    need: `loop` at construction, then `await start()`, `buttons(...)`, `display(...)`,
    `camera(...)`, `speaker(...)`. The built parts are attributes."""

    def __init__(self, referee: Referee, **loop_options: Any) -> None:
        self.referee = referee
        self.table = TableLoop(referee, **loop_options)
        self.buzzers: BuzzerInput | None = None
        self.buttons_: SeatButtons | None = None
        self.camera_: Any = None
        self.pin_factory: Any = None

    async def start(self) -> TableLoop:
        await self.table.start()
        return self.table

    def buttons(
        self, parts: ButtonParts | None = None
    ) -> tuple[BuzzerInput, SeatButtons, str | None]:
        """The buzzers and the seat buttons feeding them. Returns them with the
        interpreter's warning (None: the settle window is long enough)."""
        parts = parts or ButtonParts()
        warning = None if parts.virtual_clock else prepare_interpreter(parts.arbiter)
        buzzers = BuzzerInput(self.table, parts.arbiter, virtual_clock=parts.virtual_clock)
        factory = parts.pin_factory if parts.pin_factory is not None else make_pin_factory("mock")
        self.pin_factory = factory
        timing: dict[str, int] = {}
        if parts.lockout_ns is not None:
            timing["lockout_ns"] = parts.lockout_ns
        if parts.stuck_ns is not None:
            timing["stuck_ns"] = parts.stuck_ns
        if parts.watch_stuck:
            clock = {} if parts.stuck_clock is None else {"clock": parts.stuck_clock}
            buttons = attach_buttons(buzzers, parts.pins, factory, **timing, **clock)
        else:
            buttons = SeatButtons(parts.pins, buzzers.on_press, pin_factory=factory, **timing)
        self.buzzers, self.buttons_ = buzzers, buttons
        return buzzers, buttons, warning

    def display(self, display: Any, *, listens: bool = False) -> Any:
        """A display shown each view (and told each event when `listens`); one with a
        `size` (an LED panel) sets the frame size the games draw for."""
        self.referee.add_display(display)
        if listens:
            self.referee.listeners.append(display.on_event)
        return display

    def camera(self, parts: CameraParts, loop: asyncio.AbstractEventLoop | None = None) -> Any:
        """The camera reading the table off the loop. One that will not open is said
        to the table (CAMERA GONE) and the referee goes on from the buttons."""
        from companion.camera import CameraInput

        cam = CameraInput(self.referee, parts.source, post=self.table.post, **parts.options)
        self.camera_ = cam
        try:
            cam.start(loop or asyncio.get_running_loop())
        except Exception as exc:  # a camera that will not open: say so, referee on
            cam.on_gone(exc)
        return cam

    def speaker(self, sound: Any, notice: Any) -> Any:
        return wire_speaker(self.referee, sound, notice)

    def window_timer(self, seconds: float) -> Any:
        """A game's timed window (The Big Score's choosing) closed on its own after
        `seconds` ([table] choose_seconds; 0: no timer), checked on the loop's ticks."""
        from companion.window_timer import WindowTimer

        timer = WindowTimer(self.referee, self.table.post, seconds)
        self.table.tick_hooks.append(timer.check)
        return timer


def wire_speaker(referee: Referee, sound: Any, notice: Any) -> Any:
    """The speaker saying the referee's callouts (`[sound]`), its faults to `notice`."""
    from companion.speech.callouts import attach_speaker
    from companion.speech.player import make_speaker

    speaker = make_speaker(sound, notice)
    attach_speaker(referee, speaker)
    return speaker
