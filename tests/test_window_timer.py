"""The Big Score's choosing window closes on its own (companion.window_timer), driven by
a fake clock: no timed test."""

from __future__ import annotations

from typing import Any

from companion.config import TableConfig
from companion.loop import Referee
from companion.window_timer import WindowTimer

NEW = {"type": "new_game", "game": "big-score", "players": 3, "names": ["Ann", "Bob", "Cat"],
       "floor": ["artifact", "silver", "cash20", "diamond", "key"], "first_player": 0}


def _table(seconds: float) -> tuple[Referee, WindowTimer, list[dict[str, Any]], list[float]]:
    now = [0.0]
    ref = Referee(clock=lambda: now[0])
    posted: list[dict[str, Any]] = []
    timer = WindowTimer(ref, posted.append, seconds)
    return ref, timer, posted, now


def test_no_press_by_the_deadline_is_rob() -> None:
    ref, timer, posted, now = _table(8.0)
    assert not ref.submit(NEW).rejection
    timer.check()  # the window opens at 0
    assert not ref.submit({"type": "choose", "seat": 1, "flee": True}).rejection
    now[0] = 7.9
    timer.check()
    assert posted == [] and timer.remaining() is not None
    now[0] = 8.0
    timer.check()
    timer.check()  # once per window
    assert posted == [{"type": "close_choices"}]
    assert not ref.submit(posted[0]).rejection
    flee = [p.flee for p in ref.state.players]
    assert flee == [False, True, False]  # Bob pressed: Flee; the others robbed
    timer.check()
    assert timer.remaining() is None  # everyone has chosen: no window to time


def test_everyone_chosen_in_time_posts_nothing() -> None:
    ref, timer, posted, now = _table(8.0)
    ref.submit(NEW)
    timer.check()
    for seat in range(3):
        ref.submit({"type": "choose", "seat": seat, "flee": False})
    now[0] = 60.0
    timer.check()
    assert posted == []


def test_zero_seconds_is_no_timer_and_the_default_is_a_few_seconds() -> None:
    ref, timer, posted, now = _table(0)
    ref.submit(NEW)
    timer.check()
    now[0] = 1e6
    timer.check()
    assert posted == []
    assert 3 <= TableConfig().choose_seconds <= 30


def test_other_games_have_no_timed_window() -> None:
    ref, timer, posted, now = _table(1.0)
    ref.submit({"type": "new_game", "game": "vault-abstract", "players": 2,
                "names": ["W", "B"]})
    timer.check()
    now[0] = 100.0
    timer.check()
    assert posted == []


def test_a_failing_window_is_said_once_by_the_ticker_and_the_table_goes_on() -> None:
    import asyncio
    from types import SimpleNamespace

    from companion.loop import TableLoop

    async def main() -> tuple[Referee, list[str]]:
        ref = Referee()
        faults: list[str] = []
        ref.fault_hooks.append(faults.append)
        table = TableLoop(ref, tick_seconds=0.002)
        timer = WindowTimer(ref, table.post, 8.0)

        def broken(state: Any) -> Any:
            raise KeyError("window")

        timer.referee = SimpleNamespace(game=SimpleNamespace(timed_window=broken), state=None)
        table.tick_hooks.append(timer.check)
        await table.start()
        await asyncio.sleep(0.05)  # many ticks
        table.post(NEW)
        await table.drain()
        await table.stop()
        return ref, faults

    ref, faults = asyncio.run(main())
    assert faults == ["internal error (a tick): KeyError: 'window'"]
    assert ref.state.phase != "no_game"  # the referee refereed on
