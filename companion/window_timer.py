"""A game's timed window, closed on its own: The Big Score's choosing window.

Each round of The Big Score opens a window for the secret Rob/Flee choices: a press is
that seat's Flee, and nobody pressing by the time the window closes robs. The table
may close it (`close`, the page's "Close the window"); this timer closes it after
`[table] choose_seconds` (0: never on its own), by posting the game's own closing
event, as the table would. A game names its window with `Game.timed_window(state)`:
a key for this window (a new key starts the timer again), the event that closes it and,
optionally, the window's own seconds (Vault abstract's pause that chooses a picked pawn
or cell, kept in the game's data), or None while no window is open.

An edge: it reads the referee's clock (injectable, so a test drives it with a fake
one) on the loop's ticks and posts the closing event once per window.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from companion.loop import Referee


class WindowTimer:
    def __init__(
        self,
        referee: Referee,
        post: Callable[[dict[str, Any]], None],
        seconds: float,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.referee = referee
        self.post = post
        self.seconds = seconds
        self.clock = clock or referee.clock
        self._key: Hashable | None = None
        self._seconds = seconds  # the open window's (its own, or `seconds`)
        self._opened = 0.0
        self._closed_key: Hashable | None = None

    def remaining(self) -> float | None:
        """Seconds left in the open window (None: no window, or no timer)."""
        if self._key is None or self._seconds <= 0:
            return None
        return max(0.0, self._seconds - (self.clock() - self._opened))

    def check(self) -> None:
        """On each tick: start the timer when a window opens, close it when due. A
        fault here is the loop's ticker's to announce (once), never its end."""
        window = self.referee.game.timed_window(self.referee.state)
        if window is None:
            self._key = self._closed_key = None
            return
        key, closing, *own = window
        seconds = float(own[0]) if own else self.seconds
        if seconds <= 0:  # 0: never on its own
            self._key = self._closed_key = None
            return
        now = self.clock()
        if key != self._key:
            self._key, self._opened, self._seconds = key, now, seconds
            return
        if self._closed_key != key and now - self._opened >= self._seconds:
            self._closed_key = key
            self.post(dict(closing))
