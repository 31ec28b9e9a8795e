"""The LED frame, the state and the event log drawn in a terminal."""

from __future__ import annotations

import sys
from typing import TextIO

from companion.display.model import status_lines
from companion.loop import View

CLEAR = "\x1b[H\x1b[2J"


def render_view(view: View, prompt: str = "") -> str:
    border = "+" + "-" * (view.frame.width * 2) + "+"
    lines = [border]
    lines += ["|" + "".join(c * 2 for c in row) + "|" for row in view.frame.to_lines("█", " ")]
    lines.append(border)
    if view.flash:
        lines.append(f"  ** {view.flash.upper().replace('_', ' ')} **")
    lines += status_lines(view.state)
    if view.camera:
        lines.append(view.camera)
    lines.append("")
    lines.append("Messages:")
    lines += ["  " + m for m in view.messages[-6:]]
    lines.append("Log (last events):")
    lines += ["  " + e for e in view.recent_events[-6:]]
    if prompt:
        lines.append(prompt)
    return "\n".join(lines)


class TerminalDisplay:
    """Redraws the whole screen on every change (interactive sim)."""

    def __init__(self, out: TextIO | None = None, clear: bool = True) -> None:
        self.out = out
        self.clear = clear
        self.prompt = ""
        self._last = ""

    def show(self, view: View) -> None:
        text = render_view(view, self.prompt)
        if text == self._last:
            return
        self._last = text
        out = self.out or sys.stdout
        out.write((CLEAR if self.clear else "\n") + text + "\n")
        out.flush()
