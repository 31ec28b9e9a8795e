"""Storage faults: the log holds every accepted line in memory, the referee announces
"LOG FAILING" at once and referees on, the writer retries and writes what it holds
when the storage comes back; nothing accepted is ever silently dropped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from game_builders import ROW5, new_game
from log_lines import unchained

from companion.gamelog import GameLog, read_log
from companion.loop import Referee, resume_state

REPO = Path(__file__).resolve().parents[1]
EVENTS = [
    new_game(3),
    {"type": "heist_hide", "row": ROW5},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
    {"type": "assault_start"},
]


def test_a_log_path_that_is_a_directory_is_announced_held_and_written_later(tmp_path):
    p = tmp_path / "g.jsonl"
    p.mkdir()
    log = GameLog(p, retry_s=0.02)
    ref = Referee(log=log)
    for ev in EVENTS:
        assert ref.submit(ev).rejection is None
    ref.submit({"type": "buzz", "seat": 1, "ts_ns": 10**12})  # the verdict, shown
    assert ref.flash == "escaped"  # the verdict first; LOG FAILING waits its turn
    assert log.fault is not None and "LOG FAILING" in log.fault.text
    assert any("LOG FAILING" in m and "Is a directory" in m for m in ref.messages)
    assert log.unwritten_bytes > 0
    assert not log.flush(timeout=0.1)
    p.rmdir()  # the storage comes back
    assert log.flush(timeout=10)
    assert log.fault is None
    ref.on_tick()
    assert any("writing again" in m for m in ref.messages)
    log.close()
    assert [e for _, e in read_log(p).events] == [
        *EVENTS,
        {"type": "buzz", "seat": 1, "ts_ns": 10**12},
    ]


def test_the_fault_reaches_the_loop_at_once_through_the_writer_callback(tmp_path):
    import asyncio

    from companion.loop import TableLoop

    p = tmp_path / "g.jsonl"
    p.mkdir()

    async def main() -> Referee:
        ref = Referee(log=GameLog(p, retry_s=0.05))
        table = TableLoop(ref)
        await table.start()
        ref.flash = None
        table.post(EVENTS[0])
        await table.drain()
        for _ in range(100):  # the writer's callback schedules check_log on the loop
            if ref.flash == "log_failing" or any("LOG FAILING" in m for m in ref.messages):
                break
            await asyncio.sleep(0.01)
        await table.stop()
        ref.log.close()
        return ref

    ref = asyncio.run(main())
    assert any("LOG FAILING" in m for m in ref.messages)


def test_closing_while_the_storage_is_still_gone_rescues_the_held_lines(tmp_path):
    p = tmp_path / "g.jsonl"
    p.mkdir()
    log = GameLog(p, retry_s=0.02, close_timeout_s=0.2)
    for ev in EVENTS:
        log.append(ev)
    log.close()
    assert log.rescue_path is not None and log.fault is not None
    assert str(log.rescue_path) in log.fault.text
    rescued = [unchained(x) for x in log.rescue_path.read_text().splitlines()]
    log.rescue_path.unlink()
    assert rescued == EVENTS


FSIZE_CHILD = r"""
import json, resource, sys
from companion.gamelog import GameLog, read_log
path, events = sys.argv[1], json.loads(sys.stdin.read())
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (300, hard))  # the file may not pass 300 bytes
log = GameLog(path, retry_s=0.02)
for ev in events:
    log.append(ev)
held_ok = not log.flush(timeout=0.5)
fault = log.fault.text if log.fault else None
held = log.unwritten_bytes
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # room again
ok = log.flush(timeout=10)
log.close()
print(json.dumps({"held_ok": held_ok, "fault": fault, "held": held, "ok": ok,
                  "after": log.fault is None}))
"""


def test_file_size_limit_holds_lines_and_continues_a_partial_write(tmp_path):
    p = tmp_path / "g.jsonl"
    events = [*EVENTS] + [{"type": "loot", "seat": 1, "pad": "x" * 40}] * 6
    out = subprocess.run(
        [sys.executable, "-c", FSIZE_CHILD, str(p)],
        input=json.dumps(events),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["held_ok"] and r["held"] > 0 and "File too large" in r["fault"]
    assert r["ok"] and r["after"]
    contents = read_log(p)
    assert contents.problems == [] and [e for _, e in contents.events] == events


def _mount_tmpfs(where: Path, size: str) -> bool:
    return not subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    ).returncode


def test_a_read_only_directory_is_announced_and_written_once_writable(tmp_path):
    """Root writes anywhere, so as root the directory is a tmpfs remounted read-only
    (as an SD card remounted ro after errors); otherwise a chmod 555 directory."""
    d = tmp_path / "ro"
    d.mkdir()
    mounted = os.geteuid() == 0 and _mount_tmpfs(d, "1m")
    if os.geteuid() == 0 and not mounted:
        pytest.skip("root, and cannot mount a tmpfs to make read-only")

    def read_only(on: bool) -> None:
        if mounted:
            opt = "remount,ro" if on else "remount,rw"
            subprocess.run(["mount", "-o", opt, str(d)], check=True, capture_output=True)
        else:
            d.chmod(0o555 if on else 0o755)

    try:
        read_only(True)
        log = GameLog(d / "g.jsonl", retry_s=0.02)
        log.append({"type": "note", "n": 1})
        assert not log.flush(timeout=0.3)
        assert log.fault is not None
        assert "Read-only file system" in log.fault.text or "Permission denied" in log.fault.text
        read_only(False)
        assert log.flush(timeout=10) and log.fault is None
        log.close()
        assert [unchained(x) for x in (d / "g.jsonl").read_text().splitlines()] == [
            {"type": "note", "n": 1}
        ]
    finally:
        if mounted:
            subprocess.run(["umount", str(d)], check=False)


def test_a_full_disk_on_a_small_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or not _mount_tmpfs(mnt, "16k"):
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        (mnt / "filler").write_bytes(b"\0" * 12 * 1024)
        p = mnt / "g.jsonl"
        log = GameLog(p, retry_s=0.02)
        events = [{"type": "note", "pad": "y" * 200, "n": i} for i in range(40)]  # ~9 KB
        for ev in events:
            log.append(ev)
        assert not log.flush(timeout=0.5)
        assert log.fault is not None and "No space left" in log.fault.text
        (mnt / "filler").unlink()
        assert log.flush(timeout=10) and log.fault is None
        log.close()
        assert [e for _, e in read_log(p).events] == events
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_a_verdict_shown_but_not_yet_on_disk_resumes_as_the_race_still_on(tmp_path):
    """A power cut between showing the verdict and its commit: what is on disk is the
    game before the verdict, never a different verdict."""
    p = tmp_path / "g.jsonl"
    with GameLog(p) as log:
        ref = Referee(log=log)
        for ev in EVENTS:
            ref.submit(ev)
        assert log.flush(timeout=10)
    on_disk = p.read_bytes()
    p.unlink()
    p.mkdir()  # the storage "dies" before the verdict's commit
    log = GameLog(p, retry_s=0.02)
    ref.log = log
    ref.submit({"type": "buzz", "seat": 1, "ts_ns": 10**12})
    assert ref.flash == "escaped" and ref.state.turn.escaped == (1,)
    log.close()
    log.rescue_path.unlink()
    p.rmdir()
    p.write_bytes(on_disk)  # what survived the power cut
    state, report = resume_state(p)
    assert report.problems == [] and state.phase == "assault" and state.turn.escaped == ()


def test_the_held_lines_are_rescued_beside_the_log_not_in_a_private_tmp(tmp_path):
    """The state directory outlives the service (systemd's PrivateTmp=yes does not)."""
    p = tmp_path / "logs" / "g.jsonl"
    p.mkdir(parents=True)  # the log cannot be written: everything stays held
    log = GameLog(p, retry_s=0.02, close_timeout_s=0.2)
    for ev in EVENTS:
        log.append(ev)
    log.close()
    assert log.rescue_path is not None
    assert log.rescue_path.parent == tmp_path / "logs" / "unsaved"
    assert log.rescue_path.name.startswith("g-unsaved-") and log.rescue_path.suffix == ".jsonl"
    assert "could not take them" not in log.fault.text
    assert [unchained(x) for x in log.rescue_path.read_text().splitlines()] == EVENTS


def test_a_rescue_the_log_folder_refuses_goes_to_the_temp_dir_and_says_so(tmp_path, monkeypatch):
    import tempfile

    p = tmp_path / "logs" / "g.jsonl"
    p.mkdir(parents=True)
    (tmp_path / "logs" / "unsaved").write_text("a file where the folder would go")
    spare = tmp_path / "tmp"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    log = GameLog(p, retry_s=0.02, close_timeout_s=0.2)
    for ev in EVENTS:
        log.append(ev)
    log.close()
    assert log.rescue_path is not None and log.rescue_path.parent == spare
    assert str(log.rescue_path) in log.fault.text
    assert "the log folder could not take them" in log.fault.text
    assert [unchained(x) for x in log.rescue_path.read_text().splitlines()] == EVENTS


# A game killed while its disk was full, restarted while it still is. "fill": write until
# the storage refuses (a write cut short: a torn last line), then wait to be killed.
# "restart": open that log while the storage still refuses, append, report, wait for the
# parent to give room back (a line on stdin), then flush and close.
FULL_CHILD = r"""
import json, resource, sys, time
from companion.gamelog import GameLog
mode, step, path, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
if mode == "fsize":
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
log = GameLog(path, retry_s=0.05)
if step == "fill":
    for i in range(100):
        log.append({"type": "note", "n": i, "pad": "x" * 150})
    while log.fault is None:
        time.sleep(0.01)
    print("full", flush=True)
    time.sleep(60)
events = [{"type": "note", "after": i} for i in range(3)]
for ev in events:
    log.append(ev)
held = not log.flush(timeout=0.5)
print(json.dumps({"held": held, "fault": log.fault.text if log.fault else None}), flush=True)
sys.stdin.readline()  # room again
if mode == "fsize":
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
ok = log.flush(timeout=10)
log.close()
print(json.dumps({"ok": ok, "fault": log.fault.text if log.fault else None}), flush=True)
"""


def _child(mode: str, step: str, path: Path, limit: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", FULL_CHILD, mode, step, str(path), str(limit)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mode", ["fsize", "tmpfs"])
def test_a_torn_tail_left_by_a_full_disk_is_set_aside_before_anything_is_appended(
    tmp_path, mode
):
    """kill -9 while the disk is full leaves a torn last line; restarted while it is
    still full, the copy to .torn cannot be written: nothing may be appended behind the
    torn bytes (the lines are held), and once there is room the tail is set aside first,
    so every line after the restart is part of the game at the next start. "fsize":
    a file-size limit (anyone); "tmpfs": a real full file system (root)."""
    d = tmp_path / "d"
    d.mkdir()
    if mode == "tmpfs":
        if os.geteuid() != 0 or not _mount_tmpfs(d, "16k"):
            pytest.skip("cannot mount a tmpfs here (not root)")
        (d / "filler").write_bytes(b"\0" * 12 * 1024)
    p = d / "g.jsonl"
    try:
        fill = _child(mode, "fill", p, 1111)
        try:
            assert fill.stdout.readline().strip() == "full", fill.stderr.read()
        finally:
            fill.kill()  # kill -9 while the disk is full
            fill.wait(10)
        before = p.read_bytes()
        whole = before[: before.rfind(b"\n") + 1]
        torn = before[len(whole):]
        assert torn and whole, "the full disk cut a line short"
        restart = _child(mode, "restart", p, 20)  # a limit below the torn tail's copy
        try:
            held = json.loads(restart.stdout.readline())
            assert held["held"] and "LOG FAILING" in held["fault"], held
            assert "torn last line" in held["fault"], held  # the repair is what waits
            assert p.read_bytes() == before  # nothing appended behind the torn bytes
            if mode == "tmpfs":
                (d / "filler").unlink()
            out, err = restart.communicate("room\n", timeout=30)
        finally:
            if restart.poll() is None:
                restart.kill()
        done = json.loads(out.splitlines()[-1])
        assert done == {"ok": True, "fault": None}, err
        contents = read_log(p)
        assert contents.problems == [] and contents.chained
        assert [e["after"] for _, e in contents.events if "after" in e] == [0, 1, 2]
        assert len(contents.events) == whole.count(b"\n") + 3
        assert (d / "g.jsonl.torn").read_bytes() == torn + b"\n"
    finally:
        if mode == "tmpfs":
            subprocess.run(["umount", str(d)], check=False)


DAMAGED_CHILD = r"""
import json, resource, sys
from companion.gamelog import GameLog
path, limit = sys.argv[1], int(sys.argv[2])
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
log = GameLog(path, retry_s=0.05)
log.append({"type": "note", "text": "after the damage"})
held = not log.flush(timeout=0.5)
fault = log.fault.text if log.fault else None
with open(path, "rb") as fh:
    untouched = fh.read()
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
ok = log.flush(timeout=10)
log.close()
print(json.dumps({"held": held, "fault": fault, "untouched": untouched.decode(), "ok": ok,
                  "aside": str(log.set_aside)}))
"""


def test_a_damaged_log_is_not_cut_before_its_original_is_copied_aside(tmp_path):
    """The .damaged copy needs room; until it is written the log is left whole (not cut
    back) and the new line is held, then both happen in that order."""
    p = tmp_path / "g.jsonl"
    with GameLog(p, fsync=False) as log:
        for ev in EVENTS:
            log.append(ev)
    lines = p.read_text().splitlines()
    lines[2] = lines[2].replace('"seat":1', '"seat":0', 1)
    p.write_text("\n".join(lines) + "\n")
    original = p.read_text()
    out = subprocess.run(
        [sys.executable, "-c", DAMAGED_CHILD, str(p), str(len(original) // 2)],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["held"] and "damaged" in r["fault"], r
    assert r["untouched"] == original  # not cut back while the copy could not be made
    assert r["ok"] and r["aside"] == str(tmp_path / "g.jsonl.damaged")
    assert (tmp_path / "g.jsonl.damaged").read_text() == original
    contents = read_log(p)
    assert contents.damaged_line is None and contents.problems == []
    after = {"type": "note", "text": "after the damage"}
    assert [e for _, e in contents.events] == [*EVENTS[:2], after]
