"""What the camera's settled readings mean at a Vault Assault table: the pieces of
each stage mosaic in place, drawn on the LED board (`Seen.overlay`: stage -> pieces
0-3, for `board.render_seen`), and what the camera sees that the table has not said
yet (a mosaic assembled, a robber set showing five Escapes), said once as advice.
The referee never takes a verdict from the camera: the buttons and the table's events
decide."""

from __future__ import annotations

from typing import Any

from companion.games.camera_sense import Seen
from companion.games.vault_assault.interpret import interpret


class MosaicSense:
    """One camera's reader (`Game.camera_sense`): `dice`, the profile's dice data
    (None: the shipped dice)."""

    def __init__(self, dice: Any = None) -> None:
        self.dice = dice
        self._complete: set[int] = set()
        self._escaped: set[str] = set()

    def read(self, state: Any, reading: Any) -> Seen:
        table = interpret(reading, self.dice) if self.dice else interpret(reading)
        mosaic = {
            s.stage: frozenset(p - 1 for p in s.placed if 1 <= p <= 4) for s in table.stages
        }
        says = [f"Camera: stage {s.stage} mosaic assembled" for s in table.stages
                if s.complete and s.stage not in self._complete]
        self._complete = {s.stage for s in table.stages if s.complete}
        says += [f"Camera: the {name} dice show five Escapes"
                 for name, rs in table.robbers.items() if rs.escaped and name not in self._escaped]
        self._escaped = {n for n, rs in table.robbers.items() if rs.escaped}
        unknown = sum(1 for d in reading.dice if d.face == "unknown")
        mosaics = " ".join(f"{s.stage}:{len(s.placed)}/4" for s in table.stages)
        status = (f"Camera: {len(reading.dice)} dice settled ({unknown} unknown)"
                  f"{'' if reading.mat_found else ', no mat in view'} · mosaics {mosaics}")
        return Seen(status, says=tuple(says), overlay=mosaic)
