"""What a game makes of one settled camera reading: a `Seen`, which the camera
(companion.camera) acts on, knowing no game. A game with a reader of its own gives
`Game.camera_sense`, a factory of `CameraSense` objects (one per camera, holding
what it said already); the others get the house's pip reading (companion.camera)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Seen:
    """What to do with one reading: lines to say on the screens (`says`), a line the
    table must act on (`alert`: its text, the LED flash, the spoken line), an event
    to propose (`propose`: logged like any event, the table takes it or not), what
    to draw on the board (`overlay`, for `Game.camera_render`; None: nothing) and the
    camera's one status line."""

    status: str
    says: tuple[str, ...] = ()
    alert: tuple[str, str, str] | None = None
    propose: dict[str, Any] | None = None
    overlay: Any = None


class CameraSense(Protocol):
    def read(self, state: Any, reading: Any) -> Seen: ...
