"""kill -9 at random moments of a scripted game, then restart: every accepted event is
intact, nothing is lost or duplicated, and the game ends as an uninterrupted one does.

The script is tests/scripts/game-2p.jsonl padded with loot/undo pairs in every race
(~240 log lines, each fsync'd), played by
`python -m companion sim --script S --headless --log L` in a subprocess that is sent
SIGKILL at a random moment: once the log reaches a random line, plus up to 3 ms (so
the kills spread over the whole game however fast the disk is), or during start-up.
Every script line leaves exactly one line in the log (the accepted event, or a
`rejected` note), so the restart plays the script from the line
after the last whole log line. A third of the runs also get a torn last line appended
by hand (a write cut short by a power cut), which the restart must set aside.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.events import decode, is_comment
from companion.games.vault_assault.engine import apply, new_state

REPO = Path(__file__).resolve().parents[1]
GAME = REPO / "tests" / "scripts" / "game-2p.jsonl"
ITERATIONS = 25
PAD_PAIRS = 200  # loot/undo pairs after each Go!: a game long enough to kill inside
# (the log's writer commits lines in groups, so a short game is on disk in a few commits)


def padded_script() -> list[str]:
    """game-2p's lines with PAD_PAIRS loot/undo pairs after each assault_start (the loot
    by a robber of that turn, so every pair is accepted)."""
    out: list[str] = []
    state = new_state()
    for line in GAME.read_text().splitlines():
        if is_comment(line):
            continue
        out.append(line)
        ev = decode(line)
        result = apply(state, ev)
        if result.rejection is None:
            state = result.state
        if ev["type"] == "assault_start" and result.rejection is None:
            robber = state.robbers()[0]
            for _ in range(PAD_PAIRS):
                out += [json.dumps({"type": "loot", "seat": robber}), '{"type":"undo"}']
    return out


def comparable(event: dict) -> dict:
    """An event without the ts_ns the loop adds to unstamped events (buzz lines carry
    their own stamp, which must survive), also inside a rejected note."""
    ev = dict(event)
    if ev.get("type") == "rejected" and isinstance(ev.get("event"), dict):
        ev["event"] = comparable(ev["event"])
    elif ev.get("type") != "buzz":
        ev.pop("ts_ns", None)
    return ev


def read_log_lines(path: Path) -> tuple[list[dict], bytes]:
    """Whole JSON lines, and the torn tail (bytes after the last newline), asserting
    that every line but a torn last one is whole JSON."""
    if not path.exists():
        return [], b""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    whole, tail = data[:end], data[end:]
    lines = [json.loads(x) for x in whole.decode("utf-8").splitlines()]
    if tail:
        with pytest.raises(json.JSONDecodeError):
            json.loads(tail)  # a whole event without its newline would be a bug
    return lines, tail


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def sim(script: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "companion",
            "sim",
            "--script",
            str(script),
            "--headless",
            "--log",
            str(log),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    lines = padded_script()
    script = tmp / "script.jsonl"
    script.write_text("\n".join(lines) + "\n")
    log = tmp / "game.jsonl"
    start = time.monotonic()
    proc = sim(script, log)
    while not log.exists() and proc.poll() is None:
        time.sleep(0.001)
    began = time.monotonic()
    summary = finish(proc)
    writing = time.monotonic() - began
    logged, tail = read_log_lines(log)
    assert tail == b""
    assert len(logged) == len(lines), "one log line per script line"
    assert summary["over"] and summary["winners"] == [1]
    return {
        "lines": lines,
        "summary": summary,
        "log": [comparable(e) for e in logged],
        "writing_s": writing,
        "startup_s": began - start,
    }


def test_padded_script_is_long_enough_to_kill_inside(reference):
    accepted = [e for e in reference["log"] if e["type"] != "rejected"]
    assert len(accepted) > 150


def test_kill_9_at_random_moments_then_resume(reference, tmp_path):
    rnd = random.Random(20261121)
    lines = reference["lines"]
    expected_log = reference["log"]
    expected_accepted = [e for e in expected_log if e["type"] != "rejected"]
    kills_mid_game = 0
    torn_made = 0
    for i in range(ITERATIONS):
        d = tmp_path / f"run{i}"
        d.mkdir()
        script = d / "script.jsonl"
        script.write_text("\n".join(lines) + "\n")
        log = d / "game.jsonl"
        proc = sim(script, log)
        # A random moment: mostly once the game has reached a random line (so the kills
        # spread over the whole game however fast the disk is), plus a random jitter;
        # sometimes during start-up instead.
        if rnd.random() < 0.1:
            time.sleep(rnd.uniform(0, reference["startup_s"]))
        else:
            target = rnd.randrange(len(lines))
            while proc.poll() is None and count_lines(log) < target:
                time.sleep(0.0005)
            time.sleep(rnd.uniform(0, 0.003))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)

        logged, tail = read_log_lines(log)
        got = [comparable(e) for e in logged]
        # What was logged is exactly the start of the uninterrupted game's log: no
        # accepted event lost or duplicated, nothing out of order.
        assert got == expected_log[: len(got)], f"run {i}"
        got_accepted = [e for e in got if e["type"] != "rejected"]
        assert got_accepted == expected_accepted[: len(got_accepted)]
        if 0 < len(got) < len(expected_log):
            kills_mid_game += 1

        if i % 2 == 0 and len(got) < len(lines):
            # a write cut short: half of the next event, no newline
            with open(log, "ab") as fh:
                fh.write(lines[len(got)].encode()[: max(1, len(lines[len(got)]) // 2)])
            torn_made += 1

        rest = d / "rest.jsonl"
        rest.write_text("".join(x + "\n" for x in lines[len(got) :]))
        summary = finish(sim(rest, log))
        assert summary == reference["summary"], f"run {i}"
        final, tail = read_log_lines(log)
        assert tail == b""
        assert [comparable(e) for e in final] == expected_log, f"run {i}"
        if i % 2 == 0 and len(got) < len(lines):
            assert (d / "game.jsonl.torn").exists()
        if i % 5:
            continue
        # and the log replays to the same summary
        replay = subprocess.run(
            [sys.executable, "-m", "companion", "replay", str(log), "--json"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert replay.returncode == 0, replay.stderr
        assert json.loads(replay.stdout) == reference["summary"]
    print(f"{ITERATIONS} kills, {kills_mid_game} mid-game, {torn_made} torn tails made")
    assert kills_mid_game >= ITERATIONS // 2, "the kills should mostly land mid-game"
    assert torn_made >= ITERATIONS // 4
