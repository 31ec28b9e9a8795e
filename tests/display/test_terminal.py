"""The terminal display under a burst of changes: with `min_interval` it draws the
first at once and then at most once an interval, always ending on the newest view."""

from __future__ import annotations

import asyncio
import io

from companion.display.terminal import TerminalDisplay
from companion.loop import Referee


def views(n):
    referee = Referee()
    out = []
    for i in range(n):
        referee.say(f"message {i}")
        out.append(referee.view())
    return out


def test_a_burst_is_drawn_at_once_then_once_more_with_the_newest_view():
    shown = views(50)
    out = io.StringIO()
    display = TerminalDisplay(out=out, clear=False, min_interval=0.05)

    async def burst():
        for view in shown:
            display.show(view)
        drawn_now = out.getvalue().count("-- messages")
        await asyncio.sleep(0.12)
        return drawn_now

    drawn_now = asyncio.run(burst())
    assert drawn_now == 1  # the first at once, the other 49 wait
    text = out.getvalue()
    last = text.rsplit("-- messages", 1)[1]
    assert text.count("-- messages") == 2 and "message 49" in last


def test_without_an_interval_every_change_is_drawn_at_once():
    shown = views(5)
    out = io.StringIO()
    display = TerminalDisplay(out=out, clear=False)
    for view in shown:
        display.show(view)
    assert out.getvalue().count("-- messages") == 5
