"""The LED matrix as a display of the referee's views: the board frame, and each flash
as its full animation (companion.display.animations), whose first frame (the word) is
sent to the device at once, inside ``show``. Its ``size`` is the device's: the referee
has the games draw for it, and the animations are built for it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from companion.display.frame import DEFAULT_SIZE, Frame, Size
from companion.display.view import View


class LedDisplay:
    """Shows the referee's view on the LED matrix: the board frame, and each flash as
    its full animation (companion.display.animations), whose first frame (the word) is
    sent to the device at once, inside ``show``. A flash started again (a second
    "Escaped!") restarts its animation."""

    def __init__(self, led: Any) -> None:
        from companion.display.animations import prebuild

        self.led = led
        self._flash: str | None = None
        self._serial = -1
        self._anim: asyncio.Task[Any] | None = None
        prebuild(*self.size)  # every animation drawn now, not when the first verdict is shown

    @property
    def size(self) -> Size:
        """The device's (width, height): what the referee's frames are drawn for."""
        return tuple(getattr(self.led, "size", DEFAULT_SIZE))  # type: ignore[return-value]

    def show(self, view: View) -> None:
        from companion.display.animations import flash as animation

        if view.flash and (view.flash != self._flash or view.flash_serial != self._serial):
            self._flash = view.flash
            self._serial = view.flash_serial
            steps = (animation(view.flash, None, *self.size) if view.flash in ANIMATED
                     else [(view.frame, 900)])
            if self._anim:
                self._anim.cancel()
                self._anim = None
            self.led.show(steps[0][0])  # the word, now
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.led.show(steps[-1][0])
                return
            self._anim = loop.create_task(self.led.play_async(steps, start_shown=True))
            return
        self._flash = view.flash
        self._serial = view.flash_serial
        if self._anim and not self._anim.done():
            return
        self.led.show(view.frame)

    def close(self) -> None:
        if self._anim:
            self._anim.cancel()
        with contextlib.suppress(Exception):
            self.led.show(Frame.blank(*self.size), force=True)


ANIMATED = frozenset({"go", "bang", "hostage", "escaped", "arrested", "empty", "photo_finish"})
