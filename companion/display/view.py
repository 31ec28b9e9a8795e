"""What a display is handed: everything it may show at one moment (`View`), and what
a display is (`Display`). The referee (companion.loop) makes the views; a display
draws what it is given, the game's own lines among them through `View.game`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from companion.display.frame import Frame


class Shown(Protocol):
    """What a display asks of the game being played (companion.games.registry.Game)."""

    status_lines: Callable[[Any], list[str]]

    def describe_event(self, event: Any) -> str: ...

    def public_event(self, event: Any, state: Any = None) -> Any:
        """The event as screens may show it (a secret choice: who, never what)."""
        ...


@dataclass(frozen=True)
class View:
    """Everything a display may show at one moment."""

    frame: Frame
    state: Any  # the game's state
    flash: str | None = None
    messages: tuple[str, ...] = ()
    recent_events: tuple[str, ...] = ()
    camera: str | None = None  # one line on what the camera sees, when there is one
    flash_serial: int = 0  # counts flashes started: a repeated flash restarts its animation
    game: Shown | None = None  # the game being played: its lines in words


class Display(Protocol):
    def show(self, view: View) -> None: ...
