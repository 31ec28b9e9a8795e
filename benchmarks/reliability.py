"""Reliability figures for README.md ("Reliability"), from real runs:

1. watchdog: `companion serve` under a stand-in for systemd's watchdog (a unix datagram
   notify socket bound here, NOTIFY_SOCKET + WATCHDOG_USEC set as systemd sets them).
   The referee task is wedged mid-game (it stops taking events while the event loop and
   everything else stay alive, as an exception used to leave it); the stand-in does what
   systemd does when no WATCHDOG=1 arrives within WatchdogSec (SIGABRT), restarts the
   service and checks that it resumes from its log. With `--tree DIR` the same run uses
   another checkout (e.g. an older commit, to compare).
2. kill -9: `sim --script` killed at random moments and restarted (as
   tests/test_kill_resume.py, more runs): nothing lost, duplicated or damaged, and every
   log still verifies its checksum chain.
3. reboot: a race started in one boot, the box "rebooted" (a new boot id, the monotonic
   clock back near zero), the presses after the resume are escapes, never false starts.

    .venv/bin/python benchmarks/reliability.py [--wedges 5] [--kills 100] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Run inside the served process: wedge the referee task on a {"type":"note","text":"wedge"}
# event (it awaits forever: the loop, the ticker, the input reader all stay alive).
WEDGE_WRAPPER = r"""
import asyncio, sys
import companion.loop as loop_mod
orig = loop_mod.TableLoop._consume
async def _consume(self):
    while True:
        event = await self.queue.get()
        try:
            if isinstance(event, dict) and event.get("text") == "wedge":
                print("companion: (benchmark) referee wedged", file=sys.stderr, flush=True)
                await asyncio.Event().wait()
            if callable(event):
                event()
                continue
            for hook in self.before_submit:
                hook(event)
            self.referee.submit(event)
        finally:
            if hasattr(self, "beats"):
                self.beats += 1
            self.queue.task_done()
loop_mod.TableLoop._consume = _consume
from companion.cli import main
sys.exit(main(sys.argv[1:]))
"""

GAME = [
    {"type": "new_game", "game": "vault-assault", "players": 2, "names": ["Ann", "Bob"]},
    {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
    {"type": "assault_start"},
    {"type": "loot", "seat": 1},
]


def recv_all(sock: socket.socket, timeout: float) -> list[tuple[float, str]]:
    out = []
    sock.settimeout(timeout)
    try:
        while True:
            out.append((time.monotonic(), sock.recv(4096).decode()))
            sock.settimeout(0.0)
    except (TimeoutError, BlockingIOError):
        return out


def watchdog_run(tmp: Path, watchdog_s: float, tree: Path, rnd: random.Random) -> dict:
    sock_path = str(tmp / "notify.sock")
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    cfg = tmp / "c.toml"
    cfg.write_text(
        f'[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[log]\ndir = "{tmp / "logs"}"\n'
    )
    fifo = tmp / "in.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    env = {
        **os.environ,
        "NOTIFY_SOCKET": sock_path,
        "WATCHDOG_USEC": str(int(watchdog_s * 1e6)),
        "PYTHONPATH": str(tree),
    }
    env.pop("WATCHDOG_PID", None)

    def start() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", WEDGE_WRAPPER, "serve", "--config", str(cfg), "--input",
             str(fifo)],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_ready(proc: subprocess.Popen) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            for _, msg in recv_all(sock, 0.2):
                if "READY=1" in msg:
                    return time.monotonic() - t0
        raise SystemExit("no READY=1 within 30 s")

    proc = start()
    writer = open(fifo, "w")  # noqa: SIM115 - held open for the run
    wait_ready(proc)
    for ev in GAME:
        writer.write(json.dumps(ev) + "\n")
    writer.flush()
    time.sleep(rnd.uniform(1.0, 2.0) * watchdog_s)
    pings_before = sum(m.count("WATCHDOG=1") for _, m in recv_all(sock, 0.05))
    writer.write(json.dumps({"type": "note", "text": "wedge"}) + "\n")
    writer.flush()
    wedged_at = time.monotonic()
    # systemd's rule: no WATCHDOG=1 for WatchdogSec -> SIGABRT. The clock starts at the
    # last ping, so detection happens within WatchdogSec of the wedge.
    last_ping = wedged_at
    late_pings = 0
    killed_at = None
    while time.monotonic() - wedged_at < 10 * watchdog_s:
        for t, msg in recv_all(sock, 0.02):
            if "WATCHDOG=1" in msg:
                late_pings += msg.count("WATCHDOG=1")
                last_ping = t
        if time.monotonic() - last_ping > watchdog_s:
            proc.send_signal(signal.SIGABRT)
            killed_at = time.monotonic()
            break
    if killed_at is None:
        proc.kill()  # the old behaviour: pings went on, nothing would restart it
    proc.wait(timeout=20)
    writer.close()
    result: dict = {
        "pings_before": pings_before,
        "pings_after_wedge": late_pings,
        "detected_s": None if killed_at is None else killed_at - wedged_at,
    }
    if killed_at is None:
        sock.close()
        return result
    # Restart, as systemd's Restart=on-failure does.
    restart_t = time.monotonic()
    proc = start()
    writer = open(fifo, "w")  # noqa: SIM115
    wait_ready(proc)
    result["restart_to_ready_s"] = time.monotonic() - restart_t
    writer.write(json.dumps({"type": "stage", "stage": 1}) + "\n")
    writer.flush()
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    writer.close()
    _, err = proc.communicate(timeout=20)
    sock.close()
    result["resumed"] = "resumed" in err
    result["resume_line"] = next((x for x in err.splitlines() if "ready:" in x), "")
    logs = sorted((tmp / "logs").glob("game-*.jsonl"))
    lines = [json.loads(x) for x in logs[-1].read_text().splitlines()]
    result["log_types"] = [x["type"] for x in lines]
    return result


def kills(n: int, seed: int) -> dict:
    sys.path.insert(0, str(REPO / "tests"))
    import test_kill_resume as kr

    from companion.gamelog import read_log

    rnd = random.Random(seed)
    lines = kr.padded_script()
    tmp = Path(tempfile.mkdtemp(prefix="kills-"))
    ref_script = tmp / "script.jsonl"
    ref_script.write_text("\n".join(lines) + "\n")
    ref_log = tmp / "ref.jsonl"
    reference = kr.finish(kr.sim(ref_script, ref_log))
    expected = [kr.comparable(e) for e in kr.read_log_lines(ref_log)[0]]
    mid = damaged = 0
    for i in range(n):
        d = tmp / f"run{i}"
        d.mkdir()
        log = d / "game.jsonl"
        proc = kr.sim(ref_script, log)
        target = rnd.randrange(len(lines))
        while proc.poll() is None and kr.count_lines(log) < target:
            time.sleep(0.0005)
        time.sleep(rnd.uniform(0, 0.003))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        got = [kr.comparable(e) for e in kr.read_log_lines(log)[0]]
        assert got == expected[: len(got)], f"run {i}: log is not a prefix"
        if log.exists() and read_log(log).damaged_line is not None:
            damaged += 1
        if 0 < len(got) < len(expected):
            mid += 1
        rest = d / "rest.jsonl"
        rest.write_text("".join(x + "\n" for x in lines[len(got) :]))
        assert kr.finish(kr.sim(rest, log)) == reference, f"run {i}: a different game"
        final = [kr.comparable(e) for e in kr.read_log_lines(log)[0]]
        assert final == expected, f"run {i}: final log differs"
        assert read_log(log).damaged_line is None and read_log(log).chained
    return {"kills": n, "mid_game": mid, "damaged_after_kill": damaged, "lines": len(lines)}


def reboot() -> dict:
    import asyncio

    import companion.appliance as appliance_mod
    from companion.config import parse_config
    from companion.loop import resume_state

    tmp = Path(tempfile.mkdtemp(prefix="reboot-"))
    cfg = parse_config(
        f'[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[log]\ndir = "{tmp}"\n'
    )

    async def boot(clock: str, events: list[dict], presses: list[tuple[int, int]]):
        appliance_mod.boot_clock = lambda: clock
        app = appliance_mod.Appliance(cfg, echo=False)
        await app.start()
        for ev in events:
            app.table.post(ev)
        await app.table.drain()
        for seat, ts in presses:
            app.buzzers.on_press(seat, ts)
            await asyncio.sleep(0.01)
        app.buzzers.flush()
        await app.table.drain()
        await app.close()
        return app

    a = asyncio.run(boot("boot:aaaaaaaaaaaa", GAME[:4], []))
    go_ns = a.referee.state.turn.go_ns
    b = asyncio.run(boot("boot:bbbbbbbbbbbb", [], [(1, 2_000_000)]))
    state, _ = resume_state(b.log_path)
    return {
        "go_ns_boot_a": go_ns,
        "press_ns_boot_b": 2_000_000,
        "rejections_after_resume": b.referee.rejections,
        "escaped": state.seats[1].escaped,
        "clock_notes": sum(
            1 for x in b.log_path.read_text().splitlines() if '"type":"clock"' in x
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wedges", type=int, default=5)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--watchdog-s", type=float, default=2.0)
    ap.add_argument("--tree", type=Path, default=REPO)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    print(f"watchdog: WatchdogSec={args.watchdog_s:g} s, tree {args.tree}")
    detected = []
    for i in range(args.wedges):
        with tempfile.TemporaryDirectory() as d:
            r = watchdog_run(Path(d), args.watchdog_s, args.tree, rnd)
        print(f"  wedge {i + 1}: {r}")
        if r["detected_s"] is not None:
            detected.append(r["detected_s"])
    if detected:
        print(
            f"watchdog: {len(detected)}/{args.wedges} wedged referees restarted; detected "
            f"{min(detected):.2f}-{max(detected):.2f} s after the wedge "
            f"(WatchdogSec {args.watchdog_s:g} s)"
        )
    else:
        print(f"watchdog: 0/{args.wedges} wedged referees noticed: the pings went on")
    if args.tree == REPO:
        if args.kills:
            print(f"kill -9: {kills(args.kills, args.seed)}")
        print(f"reboot: {reboot()}")


if __name__ == "__main__":
    main()
