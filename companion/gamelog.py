"""The game log: every accepted event appended in order and fsync'd by a writer thread
that group-commits (the verdict is shown from memory, not after the disk), so a game
killed at any moment resumes from its log as a prefix of what the table did.

A process killed mid-write can leave a torn last line (no newline, not JSON). Reading
reports it and skips it; opening the log for appending moves the torn bytes to a
`<log>.torn` file beside it (nothing is thrown away) and truncates the log back to its
last whole line, so the next event starts on a line of its own.

Tamper evidence: every line the companion writes ends with a `"chain"` field, the first
8 hex digits of BLAKE2b over the previous line's chain and this line's JSON without it
(`encode_log_line`, the one encoder of a log line). Reading checks the chain: the first
line that fails (edited, blanked, deleted, not JSON) is *damaged*; reading stops there
and says which line, so a resume never plays a silently different game. Opening such a
log for appending keeps the game up to the line before (the whole original is copied
to `<log>.damaged` beside it) and the table may still choose to start anew. Lines
without a chain before the first chained one (logs written before checksums, scripts)
are read as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import heapq
import itertools
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from companion.events import EventFormatError, decode, encode, is_comment

CHAIN_FIELD = "chain"
MAX_SYNC_WAITERS = 4096  # waiters kept before those that timed out are swept
_CHAIN_PREFIX = ',"chain":"'
_CHAIN_LEN = 8


def _chain(prev: str, body: str) -> str:
    data = (prev + body).encode("utf-8")
    return hashlib.blake2b(data, digest_size=_CHAIN_LEN // 2).hexdigest()


def encode_log_line(event: dict[str, Any], prev: str) -> str:
    """The game log's line for `event` (no newline): the event's JSON with a last field
    `"chain"` linking it to the previous line's chain `prev` ("" for a log's first line).
    The one place a log line is encoded; a writer keeps `line_chain(line)` as the next
    `prev`. An event's own "chain" field is replaced (the name is the log's)."""
    if CHAIN_FIELD in event:
        event = {k: v for k, v in event.items() if k != CHAIN_FIELD}
    body = encode(event)
    h = _chain(prev, body)
    sep = "," if len(body) > 2 else ""
    return f'{body[:-1]}{sep}"{CHAIN_FIELD}":"{h}"}}'


def line_chain(line: str) -> str:
    """The chain value of a line written by encode_log_line (the next line's `prev`)."""
    return line.rstrip("\r\n")[-2 - _CHAIN_LEN : -2]


def check_chain(text: str, event: dict[str, Any], prev: str) -> str | None:
    """For a decoded chained line: None if its chain is right, else why not. Pops the
    chain field from `event`."""
    h = event.pop(CHAIN_FIELD)
    suffix = f'{_CHAIN_PREFIX}{h}"}}' if isinstance(h, str) else None
    if suffix is None or not text.endswith(suffix):
        if isinstance(h, str) and text == f'{{"{CHAIN_FIELD}":"{h}"}}':
            body = "{}"
        else:
            return "checksum field malformed"
    else:
        body = text[: -len(suffix)] + "}"
    if _chain(prev, body) != h:
        return "checksum does not match (edited, or a line before it changed or went missing)"
    return None


class LogProblem(str):
    """One problem found reading a log: the line "line N: reason" (a `str`, as it always
    was) with its `line` number and a `code`, so nobody parses the text back: "undecodable"
    (skipped), "torn" (a torn last line, skipped), "damaged" (a checksum fails: reading
    stopped there), "rejected" (the rules refused the event: resume skips it)."""

    line: int
    code: str

    def __new__(cls, line: int, code: str, reason: str) -> LogProblem:
        obj = super().__new__(cls, f"line {line}: {reason}")
        obj.line = line
        obj.code = code
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (LogProblem, (self.line, self.code, str(self).split(": ", 1)[1]))


@dataclass
class LogContents:
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line no, event)
    problems: list[str] = field(default_factory=list)  # LogProblem each: "line N: reason"
    torn_tail: bytes = b""  # bytes after the last newline that do not decode
    good_length: int = 0  # bytes up to and including the last whole line
    chained: bool = False  # the log carries checksums (a chain)
    last_chain: str = ""  # the chain of the last good line ("": none yet)
    damaged_line: int | None = None  # the first line failing its checksum; reading stopped
    damage: str | None = None  # why that line is damaged
    damaged_offset: int | None = None  # byte offset where that line starts


def read_log(path: str | os.PathLike[str]) -> LogContents:
    data = Path(path).read_bytes()
    out = LogContents()
    end_of_whole = data.rfind(b"\n") + 1
    whole, tail = data[:end_of_whole], data[end_of_whole:]
    raw_lines = whole.split(b"\n")[:-1] if whole else []
    offset = 0
    for n, raw in enumerate(raw_lines, 1):
        start, offset = offset, offset + len(raw) + 1
        line = raw.decode("utf-8", errors="replace")
        why = _take_line(out, n, line, raw)
        if why:
            out.damaged_line, out.damage, out.damaged_offset = n, why, start
            out.problems.append(
                LogProblem(n, "damaged", f"damaged ({why}); the game is kept up to line {n - 1}")
            )
            out.good_length = start
            return out
    out.good_length = end_of_whole
    if tail.strip():
        n = len(raw_lines) + 1
        try:
            # A last line that decodes but lacks its newline was written whole.
            text = tail.decode("utf-8")
            event = decode(text)
        except (EventFormatError, UnicodeDecodeError):
            out.torn_tail = tail
            out.problems.append(
                LogProblem(n, "torn", f"torn last line ({len(tail)} bytes) skipped"))
        else:
            why = _chain_problem(out, text.strip(), event)
            if why:  # a last line cut exactly at a brace is torn too, not damage
                out.torn_tail = tail
                out.problems.append(
                    LogProblem(n, "torn", f"torn last line ({len(tail)} bytes) skipped"))
            else:
                out.events.append((n, event))
                out.good_length = len(data)
    return out


def _take_line(out: LogContents, n: int, line: str, raw: bytes) -> str | None:
    """Read one whole line into `out`; returns why it is damaged, or None."""
    if is_comment(line):
        return "a blank or comment line inside a checksummed log" if out.chained else None
    if out.chained and b"\xef\xbf\xbd" not in raw and "\ufffd" in line:
        return "not UTF-8 text"
    try:
        event = decode(line)
    except EventFormatError as exc:
        if out.chained:
            return str(exc)
        out.problems.append(LogProblem(n, "undecodable", str(exc)))
        return None
    why = _chain_problem(out, line.strip(), event)
    if why:
        return why
    out.events.append((n, event))
    return None


def _chain_problem(out: LogContents, text: str, event: dict[str, Any]) -> str | None:
    if CHAIN_FIELD not in event:
        return "no checksum in a checksummed log" if out.chained else None
    h = event.get(CHAIN_FIELD)
    why = check_chain(text, event, out.last_chain)
    if why:
        return why
    out.chained = True
    out.last_chain = h
    return None


def _resolve(futures: list[Any]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(True)


class LogFault(NamedTuple):
    """What the writer last failed to do; ``text`` is one line for the table."""

    text: str
    since: float  # time.monotonic() of the first failure in this run of failures


class GameLog:
    """Append-only JSON Lines writer that group-commits off the caller's thread.

    ``append`` only hands the encoded line to a writer thread and returns at once, so the
    referee shows a verdict from memory without waiting for the disk. The writer takes
    everything handed to it since its last commit, writes it with one ``os.write`` (on
    an O_APPEND descriptor) and one ``fsync``, and goes round again: a line is on disk
    within one commit of the one in progress (``durable_ns`` records each line's time
    from ``append`` to its fsync). Lines are written in the order appended, so a crash
    at any moment leaves a prefix of the game (at worst a torn last line, set aside on
    the next open): a verdict not yet on disk resumes as the race still on.

    Storage faults (disk full, file too large, read-only, the path a directory, EIO)
    never lose an accepted line: the writer keeps every unwritten byte in memory, sets
    ``fault`` (one line), calls ``on_change`` (from its thread), retries every
    ``retry_s`` seconds and, once a write succeeds, writes everything it holds and
    clears ``fault``. A partial write is continued where it stopped. ``close`` waits up
    to ``close_timeout_s`` for the writer and makes a last attempt; lines that still
    cannot be written are saved to ``rescue_path`` (in the temp directory) and named in
    ``fault``.

    ``background=False`` commits inside ``append`` (the caller waits for the fsync), as
    scripts and tests that want the old behaviour may choose.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fsync: bool = True,
        *,
        background: bool = True,
        retry_s: float = 0.5,
        close_timeout_s: float = 2.0,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.background = background
        self.retry_s = retry_s
        self.close_timeout_s = close_timeout_s
        self.on_change = on_change
        self.recovered: LogContents = LogContents()
        self.fault: LogFault | None = None
        self.faults_seen = 0  # how many runs of failures there have been
        self.rescue_path: Path | None = None
        self.durable_ns: deque[int] = deque(maxlen=100_000)  # append -> fsync done, per line
        self.lines_written = 0
        self._pending = bytearray()  # encoded lines not yet (wholly) on disk
        self._stamps: deque[tuple[int, int]] = deque()  # (end offset in _pending, t_append)
        self._appended = 0  # bytes handed over in all
        self._synced = 0  # bytes known to be on disk (fsync'd)
        self._fd: int | None = None
        self._cond = threading.Condition()
        self._commit_lock = threading.Lock()
        self._closing = False
        self._closed = False
        # Who waits for a line to be on disk (`synced`): (mark, n, loop, future), a heap.
        self._sync_waiters: list[tuple[int, int, asyncio.AbstractEventLoop, Any]] = []
        self._waiter_seq = itertools.count()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                self.recovered = read_log(self.path)
                self._repair(self.recovered)
            self._open()
        except OSError as exc:
            self._set_fault(exc, "open")
        self.prev_chain = self.recovered.last_chain  # the checksum chain goes on from here
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._run, name="gamelog", daemon=True)
            self._thread.start()

    # ---- opening and repair
    def _open(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair(self, contents: LogContents) -> None:
        size = self.path.stat().st_size
        if contents.damaged_line is not None:
            # Keep the game up to the damaged line; the original stays whole beside it.
            aside = self.path.with_name(self.path.name + ".damaged")
            n = 1
            while aside.exists():
                n += 1
                aside = self.path.with_name(f"{self.path.name}.damaged-{n}")
            shutil.copyfile(self.path, aside)
            self.set_aside = aside
            with open(self.path, "r+b") as fh:
                fh.truncate(contents.good_length)
                fh.flush()
                os.fsync(fh.fileno())
        elif contents.torn_tail:
            with open(self.path.with_name(self.path.name + ".torn"), "ab") as keep:
                keep.write(contents.torn_tail + b"\n")
                keep.flush()
                os.fsync(keep.fileno())
            with open(self.path, "r+b") as fh:
                fh.truncate(contents.good_length)
                fh.flush()
                os.fsync(fh.fileno())
        elif size and contents.good_length == size and not self._ends_with_newline():
            with open(self.path, "ab") as fh:
                fh.write(b"\n")

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"

    set_aside: Path | None = None  # where a damaged original was copied

    # ---- the caller's side
    def append(self, event: dict[str, Any]) -> int:
        """Hand one accepted event to the writer (returns at once when background).
        Returns the line's mark: once `synced_bytes` reaches it, the line is on disk
        (`synced(mark)` waits for that)."""
        text = encode_log_line(event, self.prev_chain)
        line = text.encode("utf-8") + b"\n"
        with self._cond:
            if self._closed:
                raise ValueError(f"{self.path}: append to a closed game log")
            self.prev_chain = line_chain(text)
            self._pending += line
            self._appended += len(line)
            self._stamps.append((self._appended, time.perf_counter_ns()))
            mark = self._appended
            self._cond.notify()
        if not self.background:
            self._commit()
        return mark

    @property
    def appended_bytes(self) -> int:
        """The mark of the last line handed over (0: none yet)."""
        return self._appended

    @property
    def synced_bytes(self) -> int:
        """Bytes known to be on disk (fsync'd): every line whose mark is at most this."""
        return self._synced

    async def synced(self, mark: int, timeout: float) -> bool:
        """Wait (on the running asyncio loop, never blocking it) until the line whose
        mark is `mark` is on disk. False when it is not within `timeout` seconds (the
        storage is slow or failing: see `fault`); the line stays held and is written
        when the storage lets it."""
        loop = asyncio.get_running_loop()
        with self._cond:
            if self._synced >= mark:
                return True
            future = loop.create_future()
            waiters = self._sync_waiters
            if len(waiters) >= MAX_SYNC_WAITERS:  # bounded: drop those that gave up
                waiters[:] = [w for w in waiters if not w[3].done()]
                heapq.heapify(waiters)
            heapq.heappush(waiters, (mark, next(self._waiter_seq), loop, future))
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except TimeoutError:
            return False

    def _wake_synced(self) -> None:
        """From the writer, after a commit: resolve every waiter whose line is on disk,
        one call into each waiting loop."""
        ready: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        with self._cond:
            waiters = self._sync_waiters
            while waiters and waiters[0][0] <= self._synced:
                _, _, loop, future = heapq.heappop(waiters)
                ready.setdefault(loop, []).append(future)
        for loop, futures in ready.items():
            with contextlib.suppress(RuntimeError):  # a loop already closed
                loop.call_soon_threadsafe(_resolve, futures)

    @property
    def unwritten_bytes(self) -> int:
        """Bytes handed over but not yet known to be on disk."""
        with self._cond:
            return self._appended - self._synced

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything appended so far is on disk (fsync'd); False on timeout
        (the storage is failing: see ``fault``)."""
        if not self.background:
            return self._commit()
        target = self._appended
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._synced < target:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left if left is not None else 0.1)
        return True

    # ---- the writer's side
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                if not self._pending and self._closing:
                    return
            if not self._commit():
                with self._cond:
                    if self._closing:
                        return
                    self._cond.wait(self.retry_s)  # a retry, or woken by close

    def _commit(self) -> bool:
        """Write and fsync everything pending. True when all of it is on disk."""
        with self._commit_lock:
            with self._cond:
                data = bytes(self._pending)
                end = self._appended
            if not data:
                return True
            written = 0
            try:
                self._open()
                assert self._fd is not None
                while written < len(data):
                    n = os.write(self._fd, data[written:])
                    if n <= 0:
                        raise OSError(errno.EIO, "write wrote nothing")
                    written += n
                if self.fsync:
                    os.fsync(self._fd)
            except OSError as exc:
                with self._cond:
                    del self._pending[:written]  # what did get written stays written
                self._set_fault(exc, "write")
                return False
            now = time.perf_counter_ns()
            with self._cond:
                del self._pending[: len(data)]
                self._synced = end
                while self._stamps and self._stamps[0][0] <= end:
                    _, t0 = self._stamps.popleft()
                    self.durable_ns.append(now - t0)
                    self.lines_written += 1
                self._cond.notify_all()
            if self._sync_waiters:
                self._wake_synced()
            if self.fault is not None:
                self.fault = None
                self._changed()
            return True

    def _set_fault(self, exc: OSError, doing: str) -> None:
        reason = exc.strerror or type(exc).__name__
        with self._cond:
            held = self._appended - self._synced
        text = f"LOG FAILING: cannot {doing} {self.path}: {reason}; {held} bytes held in memory"
        if self._fd is not None and isinstance(exc, IsADirectoryError | FileNotFoundError):
            self._drop_fd()
        first = self.fault is None
        self.fault = LogFault(text, self.fault.since if self.fault else time.monotonic())
        if first:
            self.faults_seen += 1
            self._changed()

    def _drop_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def _changed(self) -> None:
        callback = self.on_change
        if callback is not None:
            with contextlib.suppress(Exception):
                callback()

    # ---- closing
    def close(self) -> None:
        if self._closed:
            return
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(self.close_timeout_s)
        with self._cond:
            self._closed = True
        if self._pending and not self._commit():
            self._rescue()
        self._drop_fd()

    def _rescue(self) -> None:
        """The storage never came back: save what is held where it can go, and say so."""
        with self._cond:
            data = bytes(self._pending)
        fd, name = tempfile.mkstemp(prefix=f"{self.path.stem}-unsaved-", suffix=".jsonl")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        self.rescue_path = Path(name)
        reason = self.fault.text if self.fault else "LOG FAILING"
        self.fault = LogFault(
            f"{reason}; on closing, {len(data)} bytes saved to {name}",
            self.fault.since if self.fault else time.monotonic(),
        )
        self._changed()

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
