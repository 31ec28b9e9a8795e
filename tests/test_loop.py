import asyncio
import threading
import time

from game_builders import ROW5, new_game
from log_lines import unchained

from companion.gamelog import GameLog
from companion.hardware.buttons import SeatButtons
from companion.hardware.pins import make_pin_factory
from companion.loop import Referee, TableLoop, resume_state


class RecordingDisplay:
    def __init__(self):
        self.views = []

    def show(self, view):
        self.views.append(view)


def test_accepted_events_are_shown_at_once_and_on_disk_after_the_group_commit(tmp_path):
    """The verdict is shown from memory; the log's writer puts every accepted event on
    disk, in order, within its commit (flush waits for it)."""
    p = tmp_path / "g.jsonl"
    display = RecordingDisplay()
    events = (
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
    )
    with GameLog(p) as log:
        ref = Referee(log=log, displays=[display])
        for ev in events:
            assert ref.submit(ev).rejection is None
        assert [v.state.events_applied for v in display.views] == [1, 2, 3]
        assert log.flush(timeout=10)
        assert [unchained(x) for x in p.read_text().splitlines()] == list(events)
        assert len(log.durable_ns) == 3 and log.unwritten_bytes == 0


def test_rejected_input_is_logged_as_a_note_and_replays(tmp_path):
    p = tmp_path / "g.jsonl"
    with GameLog(p) as log:
        ref = Referee(log=log)
        ref.submit(new_game(2))
        r = ref.submit({"type": "buzz", "seat": 1, "ts_ns": 9})
        assert "false start" in r.rejection
        assert ref.flash == "false_start"
    lines = [unchained(x) for x in p.read_text().splitlines()]
    assert lines[1]["type"] == "rejected" and lines[1]["event"]["seat"] == 1
    state, report = resume_state(p)
    assert report.problems == [] and state == ref.state


def test_flash_clears_after_its_time():
    now = [0.0]
    ref = Referee(clock=lambda: now[0], flash_seconds=1.0)
    ref.submit(new_game(2))
    ref.submit({"type": "heist_hide", "row": ROW5})
    ref.submit({"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]})
    ref.submit({"type": "assault_start"})
    assert ref.flash == "go"
    now[0] = 0.5
    ref.on_tick()
    assert ref.flash == "go"
    now[0] = 1.01
    ref.on_tick()
    assert ref.flash is None


def test_button_press_on_another_thread_reaches_the_referee_in_the_loop():
    async def main():
        ref = Referee()
        table = TableLoop(ref, tick_seconds=0.01)
        await table.start()
        buttons = SeatButtons([17, 27], table.on_press, pin_factory=make_pin_factory("mock"))
        for ev in (
            new_game(2),
            {"type": "heist_hide", "row": ROW5},
            {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
            {"type": "assault_start"},
        ):
            table.post(ev)
        await table.drain()
        loop_thread = threading.get_ident()
        seen_threads = []
        ref.listeners.append(lambda ev, r: seen_threads.append(threading.get_ident()))
        stamp = time.monotonic_ns()  # after Go!, on the loop's clock (CLOCK_MONOTONIC)
        t = threading.Thread(target=buttons.press, args=(1, stamp))
        t.start()
        t.join()
        for _ in range(100):
            await asyncio.sleep(0.001)
            if seen_threads:
                break
        await table.drain()
        buttons.close()
        await table.stop()
        return ref, seen_threads, loop_thread, stamp

    ref, seen, loop_thread, stamp = asyncio.run(main())
    assert seen == [loop_thread], "the engine must run on the loop's thread"
    assert ref.state.seats[1].escaped == 1
    assert f'"ts_ns":{stamp}' in ref.recent_events[-1]


def test_loop_stamps_events_without_ts():
    async def main():
        ref = Referee()
        table = TableLoop(ref)
        await table.start()
        table.post(new_game(2))
        await table.drain()
        await table.stop()
        return ref

    ref = asyncio.run(main())
    assert '"ts_ns":' in ref.recent_events[0]


def test_submit_awaits_the_result_through_the_same_queue():
    """TableLoop.submit (the page's way in) waits for its own event's Result; events
    posted around it keep their order."""

    async def go():
        referee = Referee()
        table = TableLoop(referee, tick_seconds=10)
        await table.start()
        seen = []
        referee.listeners.append(lambda ev, _r: seen.append(ev["type"]))
        table.post({"type": "new_game", "game": "vault-assault", "players": 2,
                    "names": ["Ann", "Bob"]})
        ok, refused = await asyncio.gather(
            table.submit({"type": "heist_hide",
                          "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]}),
            table.submit({"type": "stage", "stage": 1}),
        )
        await table.stop()
        return ok, refused, seen

    ok, refused, seen = asyncio.run(go())
    assert ok.rejection is None and refused.rejection.startswith("stage: not allowed now")
    assert seen == ["new_game", "heist_hide", "stage"]


def test_a_failing_tick_hook_is_said_once_and_the_ticker_goes_on():
    async def main():
        ref = Referee()
        faults = []
        ref.fault_hooks.append(faults.append)
        table = TableLoop(ref, tick_seconds=0.002)
        calls = {"bad": 0, "good": 0}
        broken = [True]

        def bad():
            calls["bad"] += 1
            if broken[0]:
                raise RuntimeError("sensor unplugged")

        table.tick_hooks += [bad, lambda: calls.__setitem__("good", calls["good"] + 1)]
        await table.start()
        while calls["bad"] < 20:
            await asyncio.sleep(0.005)
        said_while_broken = list(faults)
        broken[0] = False  # it works again ...
        n = calls["bad"]
        while calls["bad"] < n + 5:
            await asyncio.sleep(0.005)
        broken[0] = True  # ... and breaks again: said again, once
        n = calls["bad"]
        while calls["bad"] < n + 5:
            await asyncio.sleep(0.005)
        table.post(new_game(2))  # the referee still referees
        await table.drain()
        await table.stop()
        return ref, faults, said_while_broken, calls

    ref, faults, said, calls = asyncio.run(main())
    assert said == ["internal error (a tick): RuntimeError: sensor unplugged"]
    assert faults == said * 2
    assert calls["good"] >= calls["bad"] - 1  # the next hook ran on every tick
    assert ref.state.phase == "heist_hide"
