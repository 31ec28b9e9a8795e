"""A file system that hangs (an SD card that stops answering, a stuck USB disk): the log
announces a write that has not finished within seconds, `close` returns within its
bound with the held lines rescued, and a new game after a finished one is judged and
shown while the disk hangs, the event loop never waiting for it.

The hang is one the tests control: file-system calls on paths under a folder, and the
log writer's own writes and fsyncs, wait on an Event until released. A call made from
the event loop's thread is recorded and waits at most 2 s, and the loop runs on a
thread of its own, so code that blocks the loop fails these tests instead of hanging
them."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from game_builders import ROW5, new_game
from log_lines import unchained

from companion import gamelog
from companion.appliance import Appliance, game_finished
from companion.config import Config, DisplayConfig, LogConfig, SoundConfig
from companion.events import decode, is_comment
from companion.gamelog import RESCUE_TIMEOUT_S, GameLog, read_log
from companion.loop import Referee

SCRIPT = Path(__file__).parent / "scripts" / "game-2p.jsonl"
HANG_CALLS = ("open", "stat", "mkdir", "replace", "rename", "unlink", "write", "fsync")


class Hang:
    """While `on`: os calls on paths under `root`, and the writer thread's (named
    "gamelog") os.write and os.fsync, wait until `release()`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.root = str(root)
        self.on = False
        self.gate = threading.Event()
        self.loop_ident: int | None = None  # the event loop's thread
        self.loop_calls: list[str] = []
        self.waiting = 0  # calls waiting now
        for name in HANG_CALLS:
            monkeypatch.setattr(os, name, self._wrap(name, getattr(os, name)))

    def _wrap(self, name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if self.on and self._hits(name, args):
                self._wait(name, args)
            return real(*args, **kwargs)

        return call

    def _hits(self, name: str, args: tuple[Any, ...]) -> bool:
        if name in ("write", "fsync"):
            return threading.current_thread().name == "gamelog"
        path = args[0] if args else None
        return isinstance(path, str | os.PathLike) and os.fspath(path).startswith(self.root)

    def _wait(self, name: str, args: tuple[Any, ...]) -> None:
        if threading.get_ident() == self.loop_ident:
            self.loop_calls.append(f"os.{name}({args[0]!r})")
            self.gate.wait(2)
            return
        self.waiting += 1
        try:
            self.gate.wait(60)
        finally:
            self.waiting -= 1

    def release(self) -> None:
        self.on = False
        self.gate.set()


def wait_until(check, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return check()


def test_a_hung_write_is_announced_and_close_returns_with_the_lines_rescued(
    tmp_path, monkeypatch
):
    logs, spare = tmp_path / "logs", tmp_path / "tmp"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    hang = Hang(monkeypatch, logs)
    hang.loop_ident = threading.get_ident()
    log = GameLog(logs / "g.jsonl", hang_after_s=0.3)
    ref = Referee(log=log)
    ref.submit(new_game(2))
    assert log.flush(timeout=10)
    hang.on = True
    t0 = time.monotonic()
    ref.submit({"type": "heist_hide", "row": ROW5})  # shown from memory; its write hangs
    assert ref.state.phase == "heist"
    assert wait_until(lambda: log.fault is not None, 5)
    noticed = time.monotonic() - t0
    assert 0.3 <= noticed < 2.0, noticed
    assert "has not finished for" in log.fault.text and "bytes held in memory" in log.fault.text
    ref.on_tick()  # the loop's tick announces it
    assert any("LOG FAILING" in m and "has not finished" in m for m in ref.messages)
    assert ref.flash == "log_failing"

    # close returns within its bound although the writer is stuck: the held line is
    # rescued, not beside the log (that folder hangs too) but in the temp dir.
    closer = threading.Thread(target=log.close, kwargs={"timeout": 0.5}, daemon=True)
    t0 = time.monotonic()
    closer.start()
    closer.join(15)
    took = time.monotonic() - t0
    try:
        assert not closer.is_alive(), "close waited for a hung disk"
        assert took < 0.5 + 2 * RESCUE_TIMEOUT_S + 1.0, took
        assert log.rescue_path is not None and log.rescue_path.parent == spare
        assert "the log folder could not take them" in log.fault.text
        rescued = [unchained(x) for x in log.rescue_path.read_text().splitlines()]
        assert rescued == [{"type": "heist_hide", "row": ROW5}]
        assert hang.loop_calls == []
    finally:
        hang.release()


def finished_game() -> list[dict[str, Any]]:
    return [decode(x) for x in SCRIPT.read_text().splitlines() if not is_comment(x)]


class Shown:
    """A display that notes when each phase was first shown."""

    def __init__(self) -> None:
        self.first: dict[str, float] = {}

    def show(self, view: Any) -> None:
        self.first.setdefault(view.state.phase, time.monotonic())


def test_a_new_game_after_a_finished_one_is_judged_while_the_disk_hangs(tmp_path, monkeypatch):
    """The rotation to a new log (Appliance._rotate_log_for_new_game) touches no disk on
    the loop: the loop keeps ticking, the new game is judged and shown at once, the hang
    is announced, and once the disk answers both logs hold what they should."""
    monkeypatch.setattr(gamelog, "HANG_AFTER_S", 0.5)
    logs = tmp_path / "logs"
    config = dataclasses.replace(
        Config(),
        display=DisplayConfig(type="none"),
        log=LogConfig(dir=logs),
        sound=SoundConfig(enabled=False),
    )
    hang = Hang(monkeypatch, logs)
    found: dict[str, Any] = {}

    async def scenario() -> None:
        hang.loop_ident = threading.get_ident()
        app = Appliance(config, echo=False)
        found["app"] = app
        await app.start()
        shown = Shown()
        app.referee.displays.append(shown)
        for event in finished_game():
            app.table.post(event)
        await app.table.drain()
        assert game_finished(app.referee.state)
        assert app.log.flush(timeout=10)
        old = app.log
        old.close_timeout_s = 30  # its writer finishes once the disk answers
        found["old_path"] = app.log_path
        gaps: list[float] = []

        async def heartbeat() -> None:
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.02)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        beat = asyncio.create_task(heartbeat())
        hang.on = True
        app.table.post({"type": "loot", "seat": 1})  # refused (game over): a note, written
        await asyncio.sleep(0.2)  # ... by a writer now stuck in its write
        t0 = time.monotonic()
        result = await asyncio.wait_for(app.table.submit(new_game(2)), 10)
        found["judged_s"] = time.monotonic() - t0
        found["rejection"] = result.rejection
        found["shown_s"] = shown.first.get("heist", float("inf")) - t0
        found["new_log"] = app.log is not old
        for _ in range(400):  # the new log's open hangs: announced from the tick
            if any("has not finished" in m for m in app.referee.messages):
                break
            await asyncio.sleep(0.01)
        found["announced_s"] = time.monotonic() - t0
        found["messages"] = list(app.referee.messages)
        found["max_gap"] = max(gaps)
        hang.release()
        found["synced"] = await app.log.synced(app.log.appended_bytes, 10)
        beat.cancel()
        await app.close()

    runner = threading.Thread(target=lambda: asyncio.run(scenario()), daemon=True)
    runner.start()
    try:
        runner.join(60)
        assert not runner.is_alive(), f"the loop is stuck; calls on it: {hang.loop_calls}"
    finally:
        hang.release()
        runner.join(10)
    assert hang.loop_calls == [], hang.loop_calls
    assert found["rejection"] is None and found["new_log"]
    assert found["judged_s"] < 1.0 and found["shown_s"] < 1.0, found
    assert found["max_gap"] < 1.0, found["max_gap"]
    assert any("LOG FAILING" in m and "has not finished" in m for m in found["messages"])
    assert found["announced_s"] < 0.5 + 1.5, found["announced_s"]
    assert found["synced"]
    app = found["app"]
    old = read_log(found["old_path"])
    assert old.problems == [] and old.chained
    assert old.events[-1][1]["type"] == "rejected"  # the line held while the disk hung
    assert app.log.rescue_path is None
    new = read_log(app.log_path)
    assert new.problems == [] and [e["type"] for _, e in new.events] == ["new_game"]
