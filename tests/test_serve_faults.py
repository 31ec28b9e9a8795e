"""`companion serve` as real processes: one per log folder (a second one exits at once,
naming the first), and SIGTERM ends it within seconds whatever its --input is, a FIFO
or stdin held open by a writer that sends nothing included, with its log intact."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from game_builders import ROW5, new_game
from log_lines import wait_for_logged_lines

from companion.gamelog import read_log
from companion.log_lock import LOCK_NAME

ROOT = Path(__file__).resolve().parents[1]
EVENTS = [new_game(2), {"type": "heist_hide", "row": ROW5}]
EX_TEMPFAIL = 75


def write_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[sound]\nenabled = false\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n'
    )
    return cfg


class Serve:
    """`companion serve` in a subprocess; its stderr lines collected as they come."""

    def __init__(self, cfg: Path, *args: str, stdin: int | None = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion", "serve", "--config", str(cfg), *args],
            cwd=ROOT, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True,
        )
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.err):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never said; stderr: {self.err}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.kill()
        rc = self.proc.wait(10)
        self._reader.join(5)
        return rc


def open_fifo_writer(fifo: Path, timeout: float = 30) -> int:
    """Open the FIFO for writing once serve has it open for reading."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:  # ENXIO: no reader yet
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.parametrize("kind", ["fifo", "stdin", "file"])
def test_serve_ends_within_5_s_of_sigterm_whatever_its_input(tmp_path, kind):
    cfg = write_config(tmp_path)
    text = "".join(json.dumps(e) + "\n" for e in EVENTS)
    writer = None
    if kind == "fifo":
        fifo = tmp_path / "in.fifo"
        os.mkfifo(fifo)
        serve = Serve(cfg, "--input", str(fifo))
        writer = open_fifo_writer(fifo)
        os.write(writer, text.encode())  # then holds it open, sending nothing
    elif kind == "stdin":
        serve = Serve(cfg, "--input", "-", stdin=subprocess.PIPE)
        serve.proc.stdin.write(text)
        serve.proc.stdin.flush()  # and holds it open
    else:
        inp = tmp_path / "in.jsonl"
        inp.write_text(text)
        serve = Serve(cfg, "--input", str(inp))
    try:
        logs = wait_for_logged_lines(tmp_path / "logs", len(EVENTS), 30)
        assert logs, serve.err
        t0 = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        try:
            rc = serve.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve --input {kind} still running 5 s after SIGTERM")
        took = time.monotonic() - t0
    finally:
        serve.stop()
        if writer is not None:
            os.close(writer)
        if kind == "stdin":
            serve.proc.stdin.close()
    assert rc == 0, serve.err
    assert took < 5
    assert not any("Traceback" in line for line in serve.err), serve.err
    contents = read_log(logs[0])
    assert contents.problems == [] and contents.chained
    assert [e["type"] for _, e in contents.events] == ["new_game", "heist_hide"]


def test_a_second_serve_on_the_same_log_folder_exits_at_once_naming_the_first(tmp_path):
    cfg = write_config(tmp_path)
    logs = tmp_path / "logs"
    first = Serve(cfg)
    try:
        first.wait_for("ready")
        assert (logs / LOCK_NAME).read_text().strip() == str(first.proc.pid)
        before = {p.name: p.read_bytes() for p in logs.iterdir()}
        t0 = time.monotonic()
        second = subprocess.run(
            [sys.executable, "-m", "companion", "serve", "--config", str(cfg)],
            cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
        )
        took = time.monotonic() - t0
        assert second.returncode == EX_TEMPFAIL, second.stderr
        assert second.stderr.splitlines() == [
            f"companion: the log folder {logs} is in use by another companion "
            f"(PID {first.proc.pid}); stop it first"
        ]
        assert took < 15
        # It opened, resumed and wrote nothing: the folder is as the first one left it.
        assert {p.name: p.read_bytes() for p in logs.iterdir()} == before
        assert first.proc.poll() is None
    finally:
        first.stop()  # kill -9: the lock goes with the process
    third = Serve(cfg)
    try:
        third.wait_for("ready")
        assert (logs / LOCK_NAME).read_text().strip() == str(third.proc.pid)
        time.sleep(0.5)  # the SIGTERM handler is installed just after "ready"
        third.proc.send_signal(signal.SIGTERM)
        assert third.proc.wait(10) == 0, third.err
    finally:
        third.stop()
