"""Benchmark: the table page against a prober on its network, through a real
`companion serve --page` (simulated hardware, its log on disk) that it starts itself.

    .venv/bin/python benchmarks/lan_probe.py [--pair] [--ws] [--idle] [--load] [--kill]
        [--full] [--pair-requests 10000] [--pair-sources 100] [--ws-sockets 60]
        [--ws-rate 100] [--ws-seconds 15] [--idle-connections 1100] [--load-rate 2000]
        [--load-seconds 10] [--kills 5] [--kill-events 400]

No part flag: every part. --full: the WebSockets for 60 s (as the prober ran them).
`serve` is started with a soft limit of 1024 open files (systemd's default); this
process raises its own to the hard limit, to open the prober's sockets. Each part
prints its figures one a line, then a summary line for all.

(pair) A burst of N /api/pair requests, one connection each, all sent at once, each
    with a distinct wrong PIN (the right one at 90% of the way), from 127.0.0.1 alone,
    then (a fresh serve) from S addresses (127.0.1.x, ...): the PINs compared (answers
    "wrong PIN" or paired) per address (the most) and in all, and how the rest were
    answered or refused (a connection closed at the cap gets no answer).
(ws) W WebSockets that never read a byte after the handshake while events arrive at R
    a second (posted by one paired client that reads its answers) for T seconds:
    serve's RSS (VmRSS, /proc/PID/status) before and after, its peak (VmHWM), its
    open files, and how many of the W it closed (its journal lines).
(idle) C idle TCP connections held open while GET / and a paired POST /api/events are
    timed, 10 of each, each on a new connection made from a thread of its own (a phone
    is another device): reachable when every one answers within 2 s. --idle-reopen:
    each connection the page closes is opened again at once (a flood of connections,
    not only idle ones).
(load) Events offered at R a second for T seconds (an open loop: each is due at its
    own time and its latency counts from then), over 64 keep-alive connections: `loot`
    events of the race, each with a distinct "probe" field, all accepted. Served a
    second, p50/p99/max per request, and the log checked: every accepted event in it
    exactly once, and in order (an event answered before another was sent comes
    before it).
(kill) K times: a fresh serve, N events posted at once (one connection each, opened
    first), kill -9 as soon as half are answered 200: events answered 200 (or 202) that
    are not in the log afterwards; --slow-fsync MS: again on a disk whose every fsync
    takes MS longer (a slow SD card).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.gamelog import read_log  # noqa: E402

PIN = "2580"
ROW5 = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]
RACE = [
    {"type": "new_game", "game": "vault-assault", "players": 3,
     "names": ["Ann", "Bob", "Cat"], "first_cop": 0},
    {"type": "heist_hide", "row": ROW5},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
    {"type": "assault_start"},
]
SERVE_FILES = 1024  # systemd's default soft limit on open files
# `companion serve` with every fsync made slower by argv[1] seconds (a slow SD card).
SLOW_FSYNC = """
import os, sys, time
delay = float(sys.argv.pop(1))
fsync = os.fsync
os.fsync = lambda fd: (time.sleep(delay), fsync(fd))[1]
from companion.cli import main
sys.exit(main(sys.argv[1:]))
"""


# ---- serve, as a subprocess
class Serve:
    """`companion serve --page 127.0.0.1:PORT` with its log in a fresh folder; its
    stderr (the journal) collected by a thread."""

    display = "terminal"  # serve's own default (no --config); --display none: none
    fsync_delay = 0.0  # seconds added to each fsync of serve's (--slow-fsync)

    def __init__(self, log_dir: Path | None = None) -> None:
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix="lan-probe-"))
        config: list[str] = []
        if self.display != "terminal":
            path = self.log_dir.with_suffix(".toml")
            path.write_text(f'[display]\ntype = "{self.display}"\n')
            config = ["--config", str(path)]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("NOTIFY_SOCKET", None)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (SERVE_FILES, hard))

        start = (["-c", SLOW_FSYNC, str(self.fsync_delay)] if self.fsync_delay
                 else ["-m", "companion"])
        self.proc = subprocess.Popen(
            [sys.executable, *start, "serve", "--page", f"127.0.0.1:{self.port}",
             "--pin", PIN, "--log-dir", str(self.log_dir), *config],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, preexec_fn=limit,
        )
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(60):
            raise SystemExit(f"serve did not start: {self.lines[-5:]}")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if "ready" in line:
                self._ready.set()

    def status(self, key: str) -> int:
        """A figure of /proc/PID/status, in kB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return -1

    def files(self) -> int:
        try:
            return len(os.listdir(f"/proc/{self.proc.pid}/fd"))
        except OSError:
            return -1

    def cpu_s(self) -> tuple[float, float]:
        """Seconds of CPU serve has used: user, system."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return int(fields[11]) / tick, int(fields[12]) / tick

    def log_path(self) -> Path:
        logs = sorted(self.log_dir.glob("game-*.jsonl"))
        assert logs, "serve wrote no log"
        return logs[-1]

    def cleanup(self) -> None:
        """Remove its log folder (and config)."""
        shutil.rmtree(self.log_dir, ignore_errors=True)
        self.log_dir.with_suffix(".toml").unlink(missing_ok=True)

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---- a small HTTP/1.1 client (cheap enough to offer thousands of requests a second)
class Http:
    def __init__(self, port: int, source: str | None = None) -> None:
        self.port = port
        self.source = source
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> Http:
        local = (self.source, 0) if self.source else None
        self.reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", self.port, local_addr=local, limit=1 << 20)
        return self

    def send(self, method: str, path: str, body: Any = None, cookie: str | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        if method == "POST":
            head += ("X-Vault-Companion: 1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\n")
        if cookie:
            head += f"Cookie: {cookie}\r\n"
        assert self.writer is not None
        self.writer.write(head.encode() + b"\r\n" + data)

    async def answer(self) -> tuple[int, dict[str, str], bytes]:
        assert self.reader is not None
        line = await self.reader.readline()
        if not line:
            raise ConnectionResetError("closed by the page")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body

    async def request(self, method: str, path: str, body: Any = None,
                      cookie: str | None = None) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            await self.open()
        self.send(method, path, body, cookie)
        return await self.answer()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def pair(port: int) -> str:
    http = await Http(port).open()
    status, headers, body = await http.request("POST", "/api/pair", {"pin": PIN})
    http.close()
    assert status == 200, body
    return headers["set-cookie"].split(";")[0]


async def start_race(port: int, cookie: str) -> None:
    http = await Http(port).open()
    for event in RACE:
        status, _, body = await http.request("POST", "/api/events", event, cookie)
        assert status == 200, body
    http.close()


def loot(probe: int) -> dict[str, Any]:
    return {"type": "loot", "seat": 1, "probe": probe}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def say(name: str, value: Any) -> None:
    print(f"{name}: {value}", flush=True)


# ---- (pair)
async def pair_burst(n: int, sources: int) -> dict[str, Any]:
    serve = Serve()
    port = serve.port
    addresses = ["127.0.0.1"] if sources == 1 else [
        f"127.0.{1 + k // 250}.{1 + k % 250}" for k in range(sources)]
    right_at = int(n * 0.9)
    t0 = time.perf_counter()

    async def one(i: int) -> tuple[str, str]:
        source = addresses[i % len(addresses)]
        pin = PIN if i == right_at else f"{(i + 1 + int(PIN)) % 10_000:04d}"
        http = Http(port, source)
        try:
            async with asyncio.timeout(60):
                status, _, body = await http.request("POST", "/api/pair", {"pin": pin})
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
            return source, f"no answer ({type(exc).__name__})"
        finally:
            http.close()
        reply = json.loads(body)
        if reply.get("paired"):
            return source, "paired"
        error = str(reply.get("error", status))
        return source, error.split(":")[0].split(" (")[0]

    results = await asyncio.gather(*(one(i) for i in range(n)))
    seconds = time.perf_counter() - t0
    serve.stop()
    serve.cleanup()
    kinds: dict[str, int] = {}
    per_source: dict[str, int] = {}
    for source, kind in results:
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind in ("paired", "wrong PIN"):
            per_source[source] = per_source.get(source, 0) + 1
    total = sum(per_source.values())
    say("pair: requests", f"{n} at once from {sources} addresses, in {seconds:.1f} s")
    say("pair: PINs compared, in all", total)
    say("pair: PINs compared, most from one address", max(per_source.values(), default=0))
    say("pair: the right PIN (sent at 90%) paired", kinds.get("paired", 0) > 0)
    for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
        say(f"pair: answered {kind!r}", count)
    return {"compared": total, "per_address": max(per_source.values(), default=0)}


# ---- (ws)
def ws_handshake(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
              "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        got += s.recv(1)
    if not got.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(got.decode(errors="replace"))
    return s  # and never read again


async def never_reading(sockets: int, rate: float, seconds: float) -> dict[str, Any]:
    serve = Serve()
    cookie = await pair(serve.port)
    await start_race(serve.port, cookie)
    await asyncio.sleep(1.0)
    rss0, files0 = serve.status("VmRSS"), serve.files()
    socks = [ws_handshake(serve.port) for _ in range(sockets)]
    files1 = serve.files()
    jobs: asyncio.Queue[int | None] = asyncio.Queue()
    slowest = 0.0

    async def poster() -> None:
        nonlocal slowest
        http = await Http(serve.port).open()
        while (i := await jobs.get()) is not None:
            t = time.perf_counter()
            await http.request("POST", "/api/events", loot(i), cookie)
            slowest = max(slowest, time.perf_counter() - t)
        http.close()

    posters = [asyncio.ensure_future(poster()) for _ in range(8)]
    t0 = time.perf_counter()
    sent = 0
    while (due := t0 + sent / rate) < t0 + seconds:
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        jobs.put_nowait(sent)
        sent += 1
    for _ in posters:
        jobs.put_nowait(None)
    await asyncio.gather(*posters)
    await asyncio.sleep(1.5)  # the journal's held-back count is written a second later
    rss1, hwm, files2 = serve.status("VmRSS"), serve.status("VmHWM"), serve.files()
    notes = [x for x in serve.lines if "WebSocket" in x]
    for s in socks:
        s.close()
    serve.stop()
    serve.cleanup()
    say("ws: never-reading WebSockets", f"{sockets}, {sent} events at {rate:g}/s "
        f"for {seconds:g} s")
    say("ws: serve RSS before", f"{rss0 / 1024:.1f} MB")
    say("ws: serve RSS after", f"{rss1 / 1024:.1f} MB (peak {hwm / 1024:.1f} MB)")
    say("ws: serve open files", f"{files0} before, {files1} with the sockets, {files2} after")
    closed = files1 - files2
    say("ws: sockets closed by the page (its open files)", closed)
    say("ws: journal lines about them", f"{len(notes)}: {notes[:1]}{' ...' if notes else ''}")
    say("ws: slowest event answer meanwhile", f"{slowest * 1000:.1f} ms")
    return {"rss0": rss0, "rss1": rss1, "hwm": hwm, "closed": closed}


# ---- (idle)
def phone(port: int, name: str, i: int, cookie: str) -> tuple[float, str | None]:
    """One request as a phone makes it (blocking, 2 s at most): seconds, and why it
    failed (None: answered 200)."""
    t = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
    try:
        if name == "GET /":
            conn.request("GET", "/")
        else:
            conn.request("POST", "/api/events", json.dumps(loot(i)),
                         {"X-Vault-Companion": "1", "Content-Type": "application/json",
                          "Cookie": cookie})
        response = conn.getresponse()
        response.read()
        error = None if response.status == 200 else f"HTTP {response.status}"
    except OSError as exc:
        error = type(exc).__name__
    finally:
        conn.close()
    seconds = time.perf_counter() - t
    return seconds, error if error or seconds <= 2.0 else "over 2 s"


async def idle_connections(count: int, reopen: bool, probes: int = 10) -> dict[str, Any]:
    serve = Serve()
    cookie = await pair(serve.port)
    await start_race(serve.port, cookie)
    stop = asyncio.Event()
    reopened = 0
    opened = 0

    async def hold() -> None:
        nonlocal reopened, opened
        first = True
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", serve.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            opened += 1
            if not first:
                reopened += 1
            first = False
            reading = asyncio.ensure_future(reader.read())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            reading.cancel()
            stopping.cancel()
            writer.close()
            if not reopen:
                await stop.wait()
                return
            await asyncio.sleep(0.01)  # a prober opening again at once, but not a spin

    holders = [asyncio.ensure_future(hold()) for _ in range(count)]
    while opened < count:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    files = serve.files()
    times: dict[str, list[float]] = {"GET /": [], "POST /api/events": []}
    failed: dict[str, list[str]] = {name: [] for name in times}
    for i in range(probes):
        for name in times:
            # A phone is another device: its requests are made in a thread of their own,
            # not queued behind the prober's thousand sockets on this loop.
            seconds, error = await asyncio.to_thread(phone, serve.port, name, i, cookie)
            if error:
                failed[name].append(error)
            times[name].append(seconds)
        await asyncio.sleep(0.3)
    failures = sum(len(f) for f in failed.values())
    stop.set()
    await asyncio.gather(*holders, return_exceptions=True)
    journal = [x for x in serve.lines if "connections open" in x]
    serve.stop()
    serve.cleanup()
    say("idle: connections held", f"{count} (those the page closed opened again: "
        f"{reopened} times)" if reopen else f"{count} (those the page closed stay closed)")
    say("idle: serve open files meanwhile", files)
    for name, values in times.items():
        say(f"idle: {name} answered", f"{len(values) - len(failed[name])}/{len(values)}, "
            f"slowest {max(values) * 1000:.0f} ms, median "
            f"{statistics.median(values) * 1000:.0f} ms" +
            (f"; failed: {', '.join(failed[name])}" if failed[name] else ""))
    say("idle: page reachable (every probe within 2 s)", failures == 0)
    say("idle: journal lines about the cap", len(journal))
    return {"reachable": failures == 0,
            "slowest_ms": max(max(v) for v in times.values()) * 1000}


# ---- (load)
async def load(rate: float, seconds: float, connections: int = 64) -> dict[str, Any]:
    serve = Serve()
    cookie = await pair(serve.port)
    await start_race(serve.port, cookie)
    await asyncio.sleep(0.5)
    total = int(rate * seconds)
    jobs: asyncio.Queue[int | None] = asyncio.Queue()
    sent_at: dict[int, float] = {}
    due_at: dict[int, float] = {}
    done_at: dict[int, float] = {}
    status_of: dict[int, int] = {}
    conns = [await Http(serve.port).open() for _ in range(connections)]
    cpu0 = serve.cpu_s()
    own0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter() + 0.05

    async def worker(http: Http) -> None:
        while (i := await jobs.get()) is not None:
            sent_at[i] = time.perf_counter()
            try:
                status, _, _ = await http.request("POST", "/api/events", loot(i), cookie)
            except (OSError, asyncio.IncompleteReadError):
                status = 0
                http.close()
            done_at[i] = time.perf_counter()
            status_of[i] = status

    workers = [asyncio.ensure_future(worker(c)) for c in conns]
    i = 0
    while i < total:
        now = time.perf_counter()
        while i < total and t0 + i / rate <= now:
            due_at[i] = t0 + i / rate
            jobs.put_nowait(i)
            i += 1
        await asyncio.sleep(0.001)
    for _ in workers:
        jobs.put_nowait(None)
    await asyncio.gather(*workers)
    end = max(done_at.values())
    cpu1 = serve.cpu_s()
    user, system = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    own1 = resource.getrusage(resource.RUSAGE_SELF)
    own = (own1.ru_utime - own0.ru_utime) + (own1.ru_stime - own0.ru_stime)
    for c in conns:
        c.close()
    latency = [(done_at[k] - due_at[k]) * 1000 for k in done_at]
    accepted = [k for k, s in status_of.items() if s in (200, 202)]
    statuses: dict[int, int] = {}
    for s in status_of.values():
        statuses[s] = statuses.get(s, 0) + 1
    # The log: every accepted probe once; an event answered before another was sent
    # comes before it.
    path = serve.log_path()
    serve.stop()
    probes = [e["probe"] for _, e in read_log(path).events
              if e.get("type") == "loot" and "probe" in e]
    serve.cleanup()
    index = {p: n for n, p in enumerate(probes)}
    once = len(probes) == len(index) and set(accepted) == set(index)
    in_order = True
    by_answer = sorted(accepted, key=lambda k: done_at[k])
    latest_before = -1  # the greatest log index among events answered so far
    pointer = 0
    for k in sorted(accepted, key=lambda k: sent_at[k]):
        while pointer < len(by_answer) and done_at[by_answer[pointer]] < sent_at[k]:
            latest_before = max(latest_before, index.get(by_answer[pointer], -1))
            pointer += 1
        if index.get(k, -1) <= latest_before:
            in_order = False
    served = len(done_at) / (end - t0)
    say("load: offered", f"{rate:g} events/s for {seconds:g} s ({total} events, "
        f"{connections} connections)")
    say("load: served", f"{served:.0f} events/s ({len(done_at)} answered in "
        f"{end - t0:.2f} s; statuses {dict(sorted(statuses.items()))})")
    say("load: latency per request", f"p50 {pct(latency, 0.5):.1f} ms, p99 "
        f"{pct(latency, 0.99):.1f} ms, max {max(latency):.1f} ms")
    say("load: CPU", f"serve {(user + system) / (end - t0) * 100:.0f}% of one core "
        f"({user / (end - t0) * 100:.0f}% user, {system / (end - t0) * 100:.0f}% system), "
        f"this prober {own / (end - t0) * 100:.0f}%")
    say("load: every accepted event in the log exactly once", once)
    say("load: in the order answered", in_order)
    return {"served": served, "p99": pct(latency, 0.99), "once": once, "in_order": in_order}


# ---- (kill)
async def post_until_killed(serve: Serve, http: Http, cookie: str, i: int,
                            answered: list[int], kill_at: int) -> None:
    """Post event i; once `kill_at` events are answered 200 (or 202), kill -9 serve."""
    try:
        status, _, _ = await http.request("POST", "/api/events", loot(i), cookie)
    except (OSError, asyncio.IncompleteReadError):
        return
    finally:
        http.close()
    if status in (200, 202):
        answered.append(i)
        if len(answered) == kill_at:
            serve.proc.kill()  # SIGKILL, right after these answers


async def kills(times: int, events: int) -> dict[str, Any]:
    lost_each = []
    answered_each = []
    for _ in range(times):
        serve = Serve()
        cookie = await pair(serve.port)
        await start_race(serve.port, cookie)
        answered: list[int] = []
        conns = [await Http(serve.port).open() for _ in range(events)]  # then all at once
        await asyncio.gather(
            *(post_until_killed(serve, http, cookie, i, answered, events // 2)
              for i, http in enumerate(conns)),
            return_exceptions=True)
        serve.stop(kill=True)
        probes = {e.get("probe") for _, e in read_log(serve.log_path()).events}
        serve.cleanup()
        lost = [i for i in answered if i not in probes]
        lost_each.append(len(lost))
        answered_each.append(len(answered))
    say("kill: kills", f"{times}, {events} events posted at once each, kill -9 after "
        f"{events // 2} answered")
    say("kill: answered 200/202 before each kill", answered_each)
    say("kill: of those, lost (not in the log)", lost_each)
    return {"lost": sum(lost_each), "worst": max(lost_each, default=0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for part in ("pair", "ws", "idle", "load", "kill"):
        ap.add_argument(f"--{part}", action="store_true")
    ap.add_argument("--full", action="store_true", help="the WebSockets for 60 s")
    ap.add_argument("--display", choices=("terminal", "none", "max7219"), default="terminal",
                    help="serve's display: terminal (its default, drawn to /dev/null here)")
    ap.add_argument("--pair-requests", type=int, default=10_000)
    ap.add_argument("--pair-sources", type=int, default=100)
    ap.add_argument("--ws-sockets", type=int, default=60)
    ap.add_argument("--ws-rate", type=float, default=100.0)
    ap.add_argument("--ws-seconds", type=float, default=15.0)
    ap.add_argument("--idle-connections", type=int, default=1100)
    ap.add_argument("--idle-reopen", action="store_true",
                    help="(idle) open again at once each connection the page closes")
    ap.add_argument("--load-rate", type=float, default=2000.0)
    ap.add_argument("--load-seconds", type=float, default=10.0)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--kill-events", type=int, default=400)
    ap.add_argument("--slow-fsync", type=float, default=0.0, metavar="MS",
                    help="the kill part also on a disk whose fsync takes MS longer")
    args = ap.parse_args()
    parts = [p for p in ("pair", "ws", "idle", "load", "kill") if getattr(args, p)]
    parts = parts or ["pair", "ws", "idle", "load", "kill"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    Serve.display = args.display
    say("serve", f"companion serve --page (simulated hardware, display {args.display}, "
        f"soft limit {SERVE_FILES} files), log on {tempfile.gettempdir()}")
    summary: dict[str, Any] = {}
    if "pair" in parts:
        one = asyncio.run(pair_burst(args.pair_requests, 1))
        summary["pair"] = asyncio.run(pair_burst(args.pair_requests, args.pair_sources))
        summary["pair"]["one_address"] = one["compared"]
    if "ws" in parts:
        seconds = 60.0 if args.full else args.ws_seconds
        summary["ws"] = asyncio.run(never_reading(args.ws_sockets, args.ws_rate, seconds))
    if "idle" in parts:
        summary["idle"] = asyncio.run(idle_connections(args.idle_connections,
                                                       args.idle_reopen))
    if "load" in parts:
        summary["load"] = asyncio.run(load(args.load_rate, args.load_seconds))
    if "kill" in parts:
        summary["kill"] = asyncio.run(kills(args.kills, args.kill_events))
        if args.slow_fsync:
            Serve.fsync_delay = args.slow_fsync / 1000
            say("kill: on a slow disk", f"each fsync {args.slow_fsync:g} ms longer")
            slow = asyncio.run(kills(args.kills, args.kill_events))
            summary["kill"]["slow"] = slow["lost"]
            Serve.fsync_delay = 0.0
    out = []
    if "pair" in summary:
        s = summary["pair"]
        out.append(f"pair: {s['one_address']} PINs compared from one address alone, "
                   f"{s['compared']} from {args.pair_sources} addresses "
                   f"({s['per_address']} at most from one)")
    if "ws" in summary:
        s = summary["ws"]
        out.append(f"ws: RSS {s['rss0'] / 1024:.0f} -> {s['rss1'] / 1024:.0f} MB (peak "
                   f"{s['hwm'] / 1024:.0f}), {s['closed']} of {args.ws_sockets} closed")
    if "idle" in summary:
        s = summary["idle"]
        out.append(f"idle: reachable {s['reachable']} (slowest {s['slowest_ms']:.0f} ms)")
    if "load" in summary:
        s = summary["load"]
        out.append(f"load: {s['served']:.0f}/s p99 {s['p99']:.1f} ms, log once "
                   f"{s['once']}, in order {s['in_order']}")
    if "kill" in summary:
        s = summary["kill"]
        out.append(f"kill: {s['lost']} lost in all (worst kill {s['worst']})"
                   + (f", {s['slow']} on the slow disk" if "slow" in s else ""))
    print("summary: " + "; ".join(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
