"""The page against a stranger on the table's network: PIN guesses sent all at once are
counted before they are read, every connection and WebSocket is bounded, a malformed
request is one journal line, and an event is answered 200 only once it is on disk.

The PageServers here are started for real (`PageServer.start`, port 0) and driven with
raw sockets, as a prober would; small limits keep each test to a second or two.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import resource
import socket
import subprocess
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from game_builders import ROW5, new_game

from companion.gamelog import GameLog, read_log
from companion.loop import Referee, TableLoop
from companion.web.pairing import FREE_TRIES, GLOBAL_TRIES, Attempt, Pairing
from companion.web.server import MAX_CONNECTIONS, STATE_SECONDS, Journal, PageServer

PIN = "4321"
ROOT = Path(__file__).resolve().parents[2]
RACE = [
    new_game(3),
    {"type": "heist_hide", "row": ROW5},
    {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
    {"type": "assault_start"},
]


def run(coro):
    return asyncio.run(coro)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def page(tmp_path=None, log=None, **options):
    """A PageServer on 127.0.0.1 (an ephemeral port), its journal kept quiet."""
    referee = Referee(log=log)
    table = TableLoop(referee, tick_seconds=0.05)
    await table.start()
    options.setdefault("journal", Journal(interval=60.0))
    server = PageServer(table, pairing=Pairing(pin=PIN), log_dir=tmp_path, port=0,
                        **options)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
        await table.stop()


def head(path: str, port: int, length: int, cookie: str | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "X-Vault-Companion: 1",
             "Content-Type: application/json", f"Content-Length: {length}"]
    if cookie:
        lines.append(f"Cookie: {cookie}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict]:
    """One HTTP answer: its status and JSON body."""
    status = int((await reader.readline()).split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    body = await reader.readexactly(length)
    return status, json.loads(body)


async def dispatched(server: PageServer, n: int) -> None:
    """Until the server has handed `n` requests to their handlers, and a little more."""
    runner = server._runner
    assert runner is not None and runner.server is not None
    for _ in range(2000):
        if runner.server.requests_count >= n:
            break
        await asyncio.sleep(0.005)
    for _ in range(20):
        await asyncio.sleep(0)


async def burst_of_pins(server: PageServer, sources: list[str], right_at: int) -> list[dict]:
    """One /api/pair request from each source address, every body held back until the
    server has read every request's headers (so each handler waits for its body at
    the same time), then sent: the answers."""
    port = server.port
    conns = []
    for i, source in enumerate(sources):
        reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                       local_addr=(source, 0))
        pin = PIN if i == right_at else f"{i:04d}"
        body = json.dumps({"pin": pin}).encode()
        writer.write(head("/api/pair", port, len(body)))
        conns.append((reader, writer, body))
    for _, writer, _ in conns:
        await writer.drain()
    await dispatched(server, len(sources))
    for _, writer, body in conns:
        with contextlib.suppress(ConnectionError):
            writer.write(body)
    answers = []
    for reader, writer, _ in conns:
        status, body = await answer(reader)
        answers.append({"status": status, **body})
        writer.close()
    return answers


def compared(answers: list[dict]) -> int:
    """Answers that compared a PIN: a wrong one, or pairing."""
    return sum(1 for a in answers if a.get("paired") or a.get("error", "").startswith("wrong PIN"))


def test_a_burst_of_pins_from_one_address_compares_at_most_the_free_tries():
    async def go():
        async with page() as server:
            answers = await burst_of_pins(server, ["127.0.0.1"] * 200, right_at=150)
            assert len(answers) == 200
            assert compared(answers) <= FREE_TRIES
            assert server.pairing.compared <= FREE_TRIES
            assert sum("too many wrong PINs" in a.get("error", "") for a in answers) >= 195

    run(go())


def test_a_burst_from_many_addresses_compares_at_most_the_global_budget():
    async def go():
        async with page() as server:
            sources = [f"127.0.1.{1 + i // 5}" for i in range(200)]  # 40 addresses, 5 each
            answers = await burst_of_pins(server, sources, right_at=199)
            assert compared(answers) <= GLOBAL_TRIES
            assert server.pairing.compared <= GLOBAL_TRIES
            assert not server.pairing.sessions  # the right PIN came after the budget

    run(go())


def test_a_right_pin_takes_its_try_back_and_a_counted_try_stays_counted():
    now = [0.0]
    p = Pairing(pin="2580", clock=lambda: now[0])
    first = p.attempt("a")
    assert isinstance(first, Attempt) and len(p.global_misses) == 1
    assert p.check(first, "2580") is not None
    assert p.global_misses == [] and "a" not in p.clients  # refunded and forgiven
    tries = [p.attempt("b") for _ in range(FREE_TRIES)]  # begun, none compared yet
    assert all(isinstance(t, Attempt) for t in tries)
    assert p.attempt("b") > 0  # the sixth waits, before any PIN was read
    assert p.compared == 1
    for i in range(GLOBAL_TRIES - FREE_TRIES):
        assert isinstance(p.attempt(f"c{i}"), Attempt)
    assert p.attempt("fresh") > 0  # the budget for everyone is spent
    now[0] += 3600.0
    assert isinstance(p.attempt("fresh"), Attempt)


def test_the_attempt_budget_keeps_a_night_of_guessing_under_one_percent():
    """Guesses one address and all addresses get in a 4-hour night, by the limits."""
    now = [0.0]
    p = Pairing(pin="0000", clock=lambda: now[0])
    guesses = 0
    sources = iter(f"10.0.{i // 250}.{i % 250}" for i in range(100_000))
    source = next(sources)
    while now[0] <= 4 * 3600:
        attempt = p.attempt(source)
        if isinstance(attempt, Attempt):
            assert p.check(attempt, "9999") is None
            guesses += 1
            source = next(sources)  # a fresh address for every guess: only the global limit
        else:
            now[0] += min(attempt, 60.0)
    assert guesses <= 50 and guesses / 10_000 < 0.01


def test_idle_connections_past_the_cap_close_the_oldest_and_the_page_answers():
    async def go():
        async with page(max_connections=8) as server:
            idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(30)]
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(f"GET /api/state HTTP/1.1\r\nHost: x:{server.port}\r\n\r\n".encode())
                status, state = await asyncio.wait_for(answer(reader), 10)
                assert status == 200 and state["phase"] == "no_game"
                writer.close()
                assert server.connections is not None
                assert len(server.connections.open) <= 8
                assert server.connections.evicted >= 30 - 8
                closed = 0
                for s in idle[:20]:  # the oldest: closed by the server
                    s.settimeout(5)
                    with contextlib.suppress(ConnectionError):
                        closed += s.recv(1) == b""
                assert closed == 20
            finally:
                for s in idle:
                    s.close()

    run(go())


def test_a_connection_that_sends_nothing_or_half_its_headers_is_closed():
    async def go():
        async with page(keepalive_seconds=0.3) as server:
            silent = await asyncio.open_connection("127.0.0.1", server.port)
            slow = await asyncio.open_connection("127.0.0.1", server.port)
            slow[1].write(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")  # never finished
            for reader, _ in (silent, slow):
                assert await asyncio.wait_for(reader.read(), 5) == b""  # closed

    run(go())


def test_a_body_that_does_not_arrive_is_408_and_the_connection_closed():
    async def go():
        async with page(body_seconds=0.3) as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(head("/api/pair", server.port, 40) + b'{"pin":')
            status, body = await asyncio.wait_for(answer(reader), 5)
            assert status == 408 and "body" in body["error"]
            assert await asyncio.wait_for(reader.read(), 5) == b""

    run(go())


def test_malformed_requests_are_one_journal_line_never_a_traceback(capsys, caplog):
    bad = [b"GARBAGE\r\n\r\n", b"GET /\x00 HTTP/1.1\r\n\r\n",
           b"GET / HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
           b"GET / HTTP/1.1\r\n" + b"".join(b"X%d: y\r\n" % i for i in range(200)) + b"\r\n",
           b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"]

    async def go():
        async with page() as server:
            for _ in range(4):
                for data in bad:
                    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                    writer.write(data)
                    with contextlib.suppress(ConnectionError):
                        status = (await asyncio.wait_for(reader.read(), 5)).split(b" ")[1]
                        assert status == b"400"
                    writer.close()
            return server.journal

    with caplog.at_level(logging.DEBUG, logger="aiohttp"):
        journal = run(go())
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("companion: page: ")
    assert list(journal.lines) == lines
    assert journal.held["request"] >= 5  # the rest held back (and counted)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_journal_writes_one_line_a_second_and_counts_what_it_held_back(capsys):
    now = [0.0]
    journal = Journal(interval=1.0, clock=lambda: now[0])
    assert journal.note("request", "bad request\nfrom 1.2.3.4")
    for _ in range(9):
        assert not journal.note("request", "bad request")
    assert journal.note("websocket", "another kind")
    now[0] += 1.0
    assert journal.note("request", "bad request")
    err = capsys.readouterr().err.splitlines()
    assert err == ["companion: page: bad request from 1.2.3.4",
                   "companion: page: another kind",
                   "companion: page: bad request (9 more like it held back)"]


async def ws_handshake(port: int, rcvbuf: int = 4096) -> socket.socket:
    """A WebSocket to /api/ws that will not read a byte after the handshake."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
              "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              "Sec-WebSocket-Version: 13\r\n\r\n".encode())
    s.settimeout(5)
    got = b""
    while b"\r\n\r\n" not in got:
        got += await asyncio.to_thread(s.recv, 1)  # the answer's head, byte by byte
    assert got.startswith(b"HTTP/1.1 101"), got
    return s


def frames(data: bytes) -> list[str]:
    """The whole text frames in bytes a server sent."""
    out, i = [], 0
    while i + 2 <= len(data):
        n, at = data[i + 1] & 0x7F, i + 2
        if n == 126:
            n, at = int.from_bytes(data[at:at + 2], "big"), at + 2
        elif n == 127:
            n, at = int.from_bytes(data[at:at + 8], "big"), at + 8
        if at + n > len(data):
            break
        if data[i] & 0x0F == 1:
            out.append(data[at:at + n].decode())
        i = at + n
    return out


def shrink_send_buffers(server: PageServer) -> None:
    for peer in server.peers.values():
        sock = peer.transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)


async def changes(server: PageServer, n: int, start: int = 0) -> None:
    """`n` changes of the state (each a 4 KB message), each pushed before the next."""
    for i in range(start, start + n):
        server.referee.notice(f"change {i} " + "x" * 4000)
        await asyncio.sleep(STATE_SECONDS * 1.2)


def test_websockets_that_never_read_hold_one_message_each_and_are_closed():
    async def go():
        async with page(ws_buffer_bytes=16 * 1024, ws_send_seconds=0.5) as server:
            socks = [await ws_handshake(server.port) for _ in range(3)]
            try:
                for _ in range(200):
                    if len(server.peers) == 3:
                        break
                    await asyncio.sleep(0.01)
                shrink_send_buffers(server)
                peers = list(server.peers.values())
                for k in range(100):
                    await changes(server, 1, k)
                    # Never more than the latest of each kind waits for a page.
                    assert all(len(p.pending) <= 3 for p in peers)
                    if not server.peers:
                        break
                for _ in range(300):
                    if not server.peers:
                        break
                    await asyncio.sleep(0.01)
                assert not server.peers and server.ws_closed == 3
                assert all(p.closed and p.unsent_bytes() == 0 for p in peers)
                lines = [x for x in server.journal.lines if "WebSocket" in x]
                assert len(lines) == 1 and "does not read" in lines[0]
                assert server.journal.held["websocket"] == 2
            finally:
                for s in socks:
                    s.close()

    run(go())


def test_a_page_that_reads_late_gets_the_latest_state_not_every_one():
    async def go():
        async with page(ws_send_seconds=30) as server:
            s = await ws_handshake(server.port)
            try:
                for _ in range(200):
                    if server.peers:
                        break
                    await asyncio.sleep(0.01)
                shrink_send_buffers(server)
                await changes(server, 100)
                assert server.peers  # slow, not stuck: still open
                got, texts = b"", []
                s.setblocking(False)
                for _ in range(500):
                    with contextlib.suppress(BlockingIOError):
                        chunk = s.recv(65536)
                        got += chunk
                    texts = [json.loads(t) for t in frames(got)]
                    states = [t for t in texts if t["kind"] == "state"]
                    if states and any("change 99 " in m for m in states[-1]["messages"]):
                        break
                    await asyncio.sleep(0.01)
                states = [t for t in texts if t["kind"] == "state"]
                assert any("change 99 " in m for m in states[-1]["messages"])
                assert len(states) < 50  # the ones in between were replaced, not queued
            finally:
                s.close()

    run(go())


class SlowDisk:
    """os.fsync for the game log's writer held until released."""

    def __init__(self, real):
        self.real = real
        self.go = threading.Event()

    def __call__(self, fd):
        self.go.wait(10)
        return self.real(fd)


def test_an_event_is_answered_only_once_its_line_is_on_disk(tmp_path, monkeypatch):
    import companion.gamelog as gamelog

    disk = SlowDisk(gamelog.os.fsync)
    monkeypatch.setattr(gamelog.os, "fsync", disk)
    log = GameLog(tmp_path / "game-1.jsonl")

    async def go():
        async with page(tmp_path, log=log, durable_seconds=5.0) as server:
            pairing = server.pairing
            token = pairing.check(pairing.attempt("x"), PIN)
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            body = json.dumps(new_game(2)).encode()
            writer.write(head("/api/events", server.port, len(body), f"vc_session={token}")
                         + body)
            pending = asyncio.ensure_future(answer(reader))
            for _ in range(100):
                if server.referee.state.phase != "no_game":
                    break
                await asyncio.sleep(0.01)
            assert server.referee.state.phase == "heist_hide"  # judged and shown at once
            await asyncio.sleep(0.3)
            assert not pending.done()  # but not answered: the line is not on disk
            disk.go.set()
            status, reply = await asyncio.wait_for(pending, 5)
            assert status == 200 and reply["accepted"] and "durable" not in reply
            assert log.synced_bytes == log.appended_bytes
            writer.close()

    try:
        run(go())
    finally:
        disk.go.set()
        log.close()


def test_an_event_not_on_disk_in_time_is_202_with_the_logs_fault(tmp_path):
    path = tmp_path / "game-1.jsonl"
    path.mkdir()  # the storage fails: every write does
    log = GameLog(path, retry_s=0.02)

    async def go():
        async with page(log=log, durable_seconds=0.2) as server:
            pairing = server.pairing
            cookie = f"vc_session={pairing.check(pairing.attempt('x'), PIN)}"
            answers = []
            for ev in (new_game(2), {"type": "stage", "stage": 1}):
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                body = json.dumps(ev).encode()
                writer.write(head("/api/events", server.port, len(body), cookie) + body)
                answers.append(await asyncio.wait_for(answer(reader), 5))
                writer.close()
            (status, accepted), (status2, rejected) = answers
            assert status == 202 and accepted["accepted"] is True
            assert accepted["durable"] is False and "LOG FAILING" in accepted["warning"]
            assert "\n" not in accepted["warning"]
            assert accepted["state"]["phase"] == "heist_hide"
            assert status2 == 409 and rejected["rejected"].startswith("stage:")
            assert rejected["durable"] is False

    try:
        run(go())
        path.rmdir()  # the storage comes back: what was held is written
        assert log.flush(timeout=10)
    finally:
        log.close()
    assert [e["type"] for _, e in read_log(path).events] == ["new_game", "rejected"]


def test_the_page_js_takes_202_as_accepted():
    js = (ROOT / "companion" / "web" / "static" / "app.js").read_text()
    assert re.search(r"status === 200 \|\| status === 202", js)


def test_the_connection_cap_is_far_below_the_services_file_limit():
    unit = (ROOT / "systemd" / "companion.service").read_text()
    m = re.search(r"^LimitNOFILE=(\d+)$", unit, re.M)
    assert m, "the unit sets LimitNOFILE"
    backlog = 128  # connections the kernel may hand over before the cap is applied
    assert MAX_CONNECTIONS + backlog + 128 <= int(m.group(1))


# `companion serve` with every fsync taking 300 ms longer (a slow SD card).
SLOW_DISK = """
import os, sys, time
fsync = os.fsync
os.fsync = lambda fd: (time.sleep(0.3), fsync(fd))[1]
from companion.cli import main
sys.exit(main(sys.argv[1:]))
"""


def serve(log_dir: Path, port: int, files: int | None = None,
          slow_disk: bool = False) -> subprocess.Popen:
    """`companion serve --page` on 127.0.0.1:port with the test PIN, simulated hardware,
    its log in log_dir; `files`: its soft limit on open files (systemd's default 1024)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("NOTIFY_SOCKET", None)

    def limit() -> None:
        if files is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))

    start = ["-c", SLOW_DISK] if slow_disk else ["-m", "companion"]
    return subprocess.Popen(
        [sys.executable, *start, "serve", "--page", f"127.0.0.1:{port}",
         "--pin", PIN, "--log-dir", str(log_dir)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=limit,
    )


def ready(proc: subprocess.Popen) -> None:
    lines = []
    while line := proc.stderr.readline():
        lines.append(line)
        if "ready" in line:
            return
    raise AssertionError(f"serve did not start: {lines}")


def test_serve_with_1024_files_answers_while_1100_idle_connections_are_held(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    port = free_port()
    proc = serve(tmp_path / "logs", port, files=1024)
    held: list[socket.socket] = []
    try:
        ready(proc)
        for _ in range(1100):
            with contextlib.suppress(OSError):
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        assert len(held) == 1100

        async def go():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            body = json.dumps({"pin": PIN}).encode()
            writer.write(head("/api/pair", port, len(body)) + body)
            status, reply = await asyncio.wait_for(answer(reader), 10)
            writer.close()
            return status, reply

        status, reply = run(go())
        assert status == 200 and reply == {"paired": True}
    finally:
        for s in held:
            s.close()
        proc.kill()
        proc.communicate(timeout=30)


def test_every_event_answered_200_is_in_the_log_after_a_kill_9(tmp_path):
    """Events posted all at once to `serve` on a slow disk (each fsync 300 ms: lines
    wait in memory meanwhile); kill -9 as soon as 50 are answered 200: each of those is
    in the log (none is lost), once."""
    import aiohttp

    port = free_port()
    logs = tmp_path / "logs"
    proc = serve(logs, port, slow_disk=True)
    url = f"http://127.0.0.1:{port}"
    h = {"X-Vault-Companion": "1"}
    answered: list[int] = []

    async def go():
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200),
                                         cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.post(url + "/api/pair", json={"pin": PIN}, headers=h) as r:
                assert r.status == 200
            for ev in RACE:
                async with http.post(url + "/api/events", json=ev, headers=h) as r:
                    assert r.status == 200, await r.text()

            async def one(i: int) -> tuple[int, int]:
                event = {"type": "loot", "seat": 1, "probe": i}
                try:
                    async with http.post(url + "/api/events", json=event, headers=h) as r:
                        return i, r.status
                except aiohttp.ClientError:
                    return i, 0

            tasks = [asyncio.ensure_future(one(i)) for i in range(300)]
            for next_done in asyncio.as_completed(tasks):
                i, status = await next_done
                if status == 200:
                    answered.append(i)
                    if len(answered) == 50:
                        proc.kill()  # SIGKILL: no flush, no goodbye
                        break
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    try:
        ready(proc)
        run(go())
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert len(answered) >= 50
    (path,) = logs.glob("game-*.jsonl")
    events = [e for _, e in read_log(path).events]
    probes = [e["probe"] for e in events if "probe" in e]
    assert set(answered) <= set(probes), f"lost: {sorted(set(answered) - set(probes))}"
    assert len(probes) == len(set(probes))  # each once


def test_what_the_journal_held_back_is_counted_once_the_interval_is_over(capsys):
    async def go():
        journal = Journal(interval=0.05)
        for n in range(3):
            journal.note("websocket", f"closed a page {n}")
        await asyncio.sleep(0.2)
        return journal

    journal = run(go())
    assert list(journal.lines) == [
        "companion: page: closed a page 0",
        "companion: page: 2 more like it held back, the last: closed a page 2"]
    assert not journal.held


def test_a_burst_of_answers_shares_one_state_made_after_all_of_them():
    async def go():
        referee = Referee()
        table = TableLoop(referee, tick_seconds=0.05)
        await table.start()
        server = PageServer(table, pairing=Pairing(pin=PIN))
        made = []
        state = server.state
        server.state = lambda: made.append(1) or state()  # count the states made
        try:
            for event in RACE:
                referee.submit(event)
            await server.fresh_state_fields()
            assert len(made) == 1
            for probe in range(3):
                referee.submit({"type": "loot", "seat": 1, "probe": probe})
            answers = await asyncio.gather(*(server.fresh_state_fields() for _ in range(20)))
            assert len(made) == 2  # one state for the 20 answers, made after the 3 events
            assert len(set(answers)) == 1
            assert json.loads(answers[0])["history_seq"] == len(RACE) + 3
            assert await server.fresh_state_fields() is answers[0]  # nothing changed
            assert len(made) == 2
        finally:
            await table.stop()

    run(go())


def test_events_posted_at_once_are_logged_once_in_the_order_answered(tmp_path):
    log = GameLog(tmp_path / "game-1.jsonl", fsync=False)

    async def go():
        async with page(tmp_path, log=log) as server:
            pairing = server.pairing
            cookie = f"vc_session={pairing.check(pairing.attempt('x'), PIN)}"

            async def post(event: dict) -> tuple[int, dict]:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                body = json.dumps(event).encode()
                writer.write(head("/api/events", server.port, len(body), cookie) + body)
                try:
                    return await asyncio.wait_for(answer(reader), 10)
                finally:
                    writer.close()

            for event in RACE:
                assert (await post(event))[0] == 200
            done: list[int] = []

            async def loot(probe: int) -> None:
                status, _ = await post({"type": "loot", "seat": 1, "probe": probe})
                assert status == 200
                done.append(probe)

            await asyncio.gather(*(loot(p) for p in range(100)))
            return done

    try:
        done = run(go())
    finally:
        log.close()
    probes = [e["probe"] for _, e in read_log(tmp_path / "game-1.jsonl").events if "probe" in e]
    assert sorted(probes) == list(range(100))  # each once
    assert len(done) == 100


def test_an_open_page_outlives_the_idle_timeout_of_connections():
    import aiohttp

    async def go():
        async with page(keepalive_seconds=0.2) as server, aiohttp.ClientSession() as http:
            ws = await http.ws_connect(f"http://127.0.0.1:{server.port}/api/ws")
            kinds = {(await ws.receive_json(timeout=5))["kind"] for _ in range(3)}
            assert kinds == {"state", "led", "me"}
            await asyncio.sleep(0.6)  # three idle timeouts
            server.referee.notice("still here")
            for _ in range(10):
                msg = await ws.receive_json(timeout=5)
                if msg["kind"] == "state" and "still here" in msg["messages"]:
                    break
            else:
                raise AssertionError("the page heard nothing after the idle timeout")
            await ws.close()

    run(go())


def test_pairing_paused_for_everyone_is_told_to_the_table_once_and_unpair_all_reopens_it():
    async def go():
        async with page() as server:
            sources = [f"127.0.2.{1 + i // 5}" for i in range(GLOBAL_TRIES + 20)]
            await burst_of_pins(server, sources, right_at=-1)
            told = [m for m in server.referee.messages if "pairing paused" in m]
            assert len(told) == 1 and server.pairing.everyone_locked()
            assert server.pairing.try_pin("10.9.9.9", PIN) is None  # even the right PIN waits
            server.pairing.unpair_all()  # what the page's "unpair every device" does
            assert not server.pairing.everyone_locked()
            assert server.pairing.try_pin("10.9.9.9", server.pairing.pin) is not None

    run(go())


def test_the_aiohttp_internals_the_connection_cap_reads_are_there():
    """Connections reads aiohttp's request handler state (whether a connection sent a
    request, holds one unread, was upgraded) and wraps its Server's connection hooks:
    an aiohttp without them must fail here, not quietly close the wrong connections."""
    from aiohttp import web_protocol, web_server

    handler = web_protocol.RequestHandler
    source = Path(web_protocol.__file__).read_text()
    for name in ("_request_count", "_messages", "_upgraded"):
        assert f"self.{name}" in source, name
    assert callable(getattr(handler, "force_close", None))
    server = web_server.Server
    assert callable(server.connection_made) and callable(server.connection_lost)
