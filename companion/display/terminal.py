"""The LED frame, the state, the messages and the event log drawn in a terminal.

The screen fits 80x24 in every game, whatever it holds: the LED frame in half-block
characters (two pixel rows a line, 6 lines with its border, the flash word set in the
top border) always on top, the state in words (long lines wrapped), then the
referee's messages (wrapped) and the log as readable lines (the game's
`describe_event`, as screens may show the event: a secret choice says who, never what;
no ts_ns, rejections included), each pane keeping its newest lines, and the prompt on
the last line (no newline after it, so nothing scrolls). The game's lines come with the
view (`View.game`); this module knows no game. `help` replaces the panes with the
command list, wrapped, a page at a time under the LED frame (Enter: the next page).
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, TextIO

from companion.display.frame import Frame
from companion.display.view import Shown, View

CLEAR = "\x1b[H\x1b[2J"
COLUMNS = 80
ROWS = 24
HALF_BLOCKS = {(False, False): " ", (True, False): "▀", (False, True): "▄", (True, True): "█"}


def led_lines(frame: Frame, flash: str | None = None) -> list[str]:
    """The frame in half blocks (each pixel 2 columns wide), inside a border."""
    inner = frame.width * 2
    title = f" {flash.upper().replace('_', ' ')} " if flash else ""
    top = "+" + ("--" + title).ljust(inner, "-")[:inner] + "+"
    rows = [[frame.pixel(x, y) for x in range(frame.width)] for y in range(frame.height)]
    if len(rows) % 2:
        rows.append([False] * frame.width)
    lines = [top]
    for y in range(0, len(rows), 2):
        cells = (HALF_BLOCKS[(a, b)] * 2 for a, b in zip(rows[y], rows[y + 1], strict=True))
        lines.append("|" + "".join(cells) + "|")
    lines.append("+" + "-" * inner + "+")
    return lines


def _clip(line: str, width: int = COLUMNS) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _wrapped(messages: Sequence[str], width: int = COLUMNS) -> list[str]:
    out: list[str] = []
    for m in messages:
        out += textwrap.wrap(m, width - 2, initial_indent="  ", subsequent_indent="    ") or [""]
    return out


def _folded(lines: Sequence[str], width: int = COLUMNS) -> list[str]:
    """Lines as they are when they fit, else wrapped (the rest indented): nothing cut."""
    out: list[str] = []
    for line in lines:
        for part in str(line).splitlines() or [""]:
            if len(part) <= width:
                out.append(part)
                continue
            indent = " " * min(len(part) - len(part.lstrip()) + 4, 32)
            out += textwrap.wrap(part, width, subsequent_indent=indent,
                                 break_long_words=True, break_on_hyphens=False)
    return out


def help_pages(help_lines: Sequence[str], frame_lines: int, rows: int = ROWS,
               prompt: bool = True) -> list[list[str]]:
    """The help, wrapped to the width, in pages that fit under the LED frame with their
    footer line (and the prompt)."""
    per_page = max(1, rows - frame_lines - 1 - (1 if prompt else 0))
    lines = _folded(help_lines)
    return [lines[i:i + per_page] for i in range(0, len(lines), per_page)] or [[]]


def _prompt_line(prompt: str, width: int = COLUMNS) -> str:
    """The prompt and what is typed: its end kept in view when it is long."""
    return prompt if len(prompt) <= width else "…" + prompt[-(width - 1):]


def _described(recent_events: Sequence[str], game: Shown | None) -> list[str]:
    lines = []
    for text in recent_events:
        try:
            event = json.loads(text)
        except ValueError:
            lines.append(text)
            continue
        lines.append(game.describe_event(event) if game is not None else text)
    return lines


def render_view(
    view: View,
    prompt: str = "",
    log_lines: Sequence[str] | None = None,
    help_lines: Sequence[str] | None = None,
    rows: int = ROWS,
    help_page: int = 0,
) -> str:
    """The screen: at most `rows` lines of at most 80 columns, the LED frame first."""
    lines = led_lines(view.frame, view.flash)
    room = rows - len(lines) - (1 if prompt else 0)  # under the frame, above the prompt
    if help_lines:
        pages = help_pages(help_lines, len(lines), rows, bool(prompt))
        page = min(max(help_page, 0), len(pages) - 1)
        lines += pages[page]
        more = (f"page {page + 1} of {len(pages)}: Enter for the next, a command closes it"
                if page + 1 < len(pages) else "Enter or any command closes this help")
        lines.append(f"-- help, {more} ".ljust(COLUMNS, "-")[:COLUMNS])
    else:
        state = _folded(view.game.status_lines(view.state)) if view.game is not None else []
        if view.camera:
            state += _folded([view.camera])
        # The panes keep 2 message lines and 1 log line with their headers at least.
        keep = max(0, room - 5)
        if len(state) > keep:
            cut = len(state) - keep + 1
            state = [*state[: keep - 1], f"  (and {cut} more lines of the state)"][:keep]
        lines += state
        log = (list(log_lines) if log_lines is not None
               else _described(view.recent_events, view.game))
        room -= len(state) + 2
        messages = _wrapped(view.messages)
        n_log = min(len(log), max(1, room // 2 - 1))
        n_msg = room - n_log
        lines.append("-- messages " + "-" * 68)
        lines += messages[-n_msg:] if n_msg > 0 else []
        lines.append("-- log " + "-" * 73)
        lines += [_clip("  " + e) for e in log[-n_log:]] if n_log > 0 else []
    if prompt:
        lines.append(_prompt_line(prompt))
    return "\n".join(lines)


class TerminalDisplay:
    """Redraws the whole screen on every change (interactive sim). As a referee
    listener (`on_event`) it keeps the log pane: every event, rejections too.

    `min_interval` (seconds) draws at most that often while an event loop runs: a
    change sooner than that after the last drawing is drawn once, that long after it,
    with whatever is newest then (`serve` under a burst of events from the page draws
    the screen some 20 times a second, not once per event). 0: every change at once."""

    def __init__(
        self, out: TextIO | None = None, clear: bool = True, min_interval: float = 0.0
    ) -> None:
        self.out = out
        self.clear = clear
        self.min_interval = min_interval
        self._drawn_at = float("-inf")
        self._draw_due = False
        self.prompt = ""
        self.help: list[str] | None = None  # shown instead of the panes until cleared
        self.help_page = 0  # which page of the help is shown
        self.log: deque[str] | None = None
        self._last = ""
        self._view: View | None = None

    def on_event(self, event: Any, result: Any) -> None:
        """A referee listener: the event in words (by the game of the last view, drawn
        before the listeners are told), with its rejection."""
        if self.log is None:
            self.log = deque(maxlen=20)
        game = self._view.game if self._view is not None else None
        if game is not None:  # as screens may show it: a secret choice, who not what
            line = game.describe_event(game.public_event(event, getattr(result, "state", None)))
        else:
            line = repr(event)[:120]
        if result.rejection:
            self.log.append(f"✗ {line}: {result.rejection}")
        else:
            self.log.append(line)
        if self._view is not None:  # the referee drew before telling its listeners
            self.show(self._view)

    def next_help_page(self) -> bool:
        """Turn the help to its next page (True), or False on its last page."""
        if not self.help or self._view is None:
            return False
        pages = help_pages(self.help, len(led_lines(self._view.frame)), ROWS, bool(self.prompt))
        if self.help_page + 1 >= len(pages):
            return False
        self.help_page += 1
        return True

    def show(self, view: View) -> None:
        self._view = view
        if self.min_interval > 0:
            if self._draw_due:
                return  # drawn soon, with the newest view
            wait = self._drawn_at + self.min_interval - time.monotonic()
            if wait > 0:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    pass  # no loop to draw later: draw now
                else:
                    self._draw_due = True
                    loop.call_later(wait, self._draw_later)
                    return
            self._drawn_at = time.monotonic()
        self._draw(view)

    def _draw_later(self) -> None:
        self._draw_due = False
        if self._view is not None:
            self._drawn_at = time.monotonic()
            self._draw(self._view)

    def _draw(self, view: View) -> None:
        text = render_view(view, self.prompt, self.log, self.help, help_page=self.help_page)
        if text == self._last:
            return
        self._last = text
        out = self.out or sys.stdout
        # On a terminal the prompt is the last line and the cursor stays on it: a
        # newline after it would scroll the LED frame's top off a 24-line screen.
        out.write(CLEAR + text if self.clear else "\n" + text + "\n")
        out.flush()
