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
are read as before, as long as the first chained line checks from the start of the
chain (""), as a newer companion resuming such a log writes it; if it does not, the
unchained lines cannot be vouched for (a first line whose chain was removed looks like
them) and the damage is named at the first of them.

Repairs come before anything is appended: while a torn tail or a damaged log cannot be
set aside (a full disk), the writer holds the new lines in memory and retries the
repair first, never appending behind bytes that are not whole lines.
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
HANG_AFTER_S = 3.0  # a write, fsync or open unfinished this long is a fault ("LOG FAILING")
RESCUE_TIMEOUT_S = 1.0  # each place a rescue on closing tries is given this long
UNSAVED_DIR = "unsaved"  # held lines rescued on closing: <log dir>/unsaved/<stem>-unsaved-*
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
    # The first line read without a chain before the chain began: (line, offset, events
    # and problems before it). If the first chained line then fails, that is the damage.
    unchained: tuple[int, int, int, int] | None = None
    for n, raw in enumerate(raw_lines, 1):
        start, offset = offset, offset + len(raw) + 1
        line = raw.decode("utf-8", errors="replace")
        before = (n, start, len(out.events), len(out.problems))
        chained = out.chained
        why = _take_line(out, n, line, raw)
        if why and not chained and unchained is not None:
            _damaged_from_unchained(out, unchained, n, why)
            return out
        if why:
            out.damaged_line, out.damage, out.damaged_offset = n, why, start
            out.problems.append(
                LogProblem(n, "damaged", f"damaged ({why}); the game is kept up to line {n - 1}")
            )
            out.good_length = start
            return out
        if unchained is None and not out.chained and not is_comment(line):
            unchained = before
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
            chained = out.chained
            has_chain = CHAIN_FIELD in event
            why = _chain_problem(out, text.strip(), event)
            if why and has_chain and not chained and unchained is not None:
                _damaged_from_unchained(out, unchained, n, why)
            elif why:  # a last line cut exactly at a brace is torn too, not damage
                out.torn_tail = tail
                out.problems.append(
                    LogProblem(n, "torn", f"torn last line ({len(tail)} bytes) skipped"))
            else:
                out.events.append((n, event))
                out.good_length = len(data)
    return out


def _damaged_from_unchained(
    out: LogContents, first: tuple[int, int, int, int], n: int, why: str
) -> None:
    """The first chained line (line `n`) fails its check and lines without a chain come
    before it: they cannot be vouched for (a first line whose chain was removed reads as
    one of them), so the damage is the first of them and the game is kept before it."""
    line, start, events, problems = first
    del out.events[events:]
    del out.problems[problems:]
    reason = (
        f"no checksum, and line {n}, the first line with one, does not follow from the "
        f"lines before it ({why})"
    )
    out.damaged_line, out.damage, out.damaged_offset = line, reason, start
    out.problems.append(
        LogProblem(line, "damaged", f"damaged ({reason}); the game is kept up to line {line - 1}")
    )
    out.good_length = start
    out.last_chain = ""


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


def _write_all(fd: int, data: bytes) -> None:
    written = 0
    while written < len(data):
        n = os.write(fd, data[written:])
        if n <= 0:
            raise OSError(errno.EIO, "write wrote nothing")
        written += n


def _rechain(lines: bytes, prev: str) -> tuple[bytes, str]:
    """Lines written by encode_log_line, chained again from `prev` (same lengths: only
    the 8 hex digits change). Returns them and the last one's chain."""
    out = []
    for raw in lines.split(b"\n")[:-1]:
        text = raw.decode("utf-8")
        h = line_chain(text)
        suffix = f'{_CHAIN_PREFIX}{h}"}}'
        body = text[: -len(suffix)] + "}" if text.endswith(suffix) else "{}"
        prev = _chain(prev, body)
        out.append(text[: -2 - _CHAIN_LEN] + prev + '"}')
    return ("\n".join(out) + "\n").encode("utf-8") if out else b"", prev


def _save_within(place: Path, prefix: str, data: bytes, timeout: float) -> tuple[str | None, str]:
    """Write `data` to a new file in `place` on a thread of its own, waiting at most
    `timeout` seconds (the disk may hang): (its name, "") or (None, why not)."""
    result: dict[str, str] = {}

    def work() -> None:
        name = None
        try:
            place.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=prefix, suffix=".jsonl", dir=place)
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            result["name"] = name
        except OSError as exc:
            result["why"] = exc.strerror or type(exc).__name__
            if name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(name)

    worker = threading.Thread(target=work, name="gamelog-rescue", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return None, f"not finished after {timeout:g} s"
    if "name" in result:
        return result["name"], ""
    return None, result.get("why", "failed")


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

    Opening reads what is in the file and repairs it (a torn tail to ``<log>.torn``, a
    damaged log's original to ``<log>.damaged``, then the file cut back to its last good
    line) before anything is appended. A repair that cannot be done (the copy cannot be
    written: a full disk) stays pending: the writer retries it first and appends nothing
    until it is done. ``lazy=True`` does none of this in the constructor (no file-system
    call at all, for a caller on the event loop while the disk may hang): the writer
    thread opens the file, and lines appended meanwhile are chained on from what it finds.

    Storage faults (disk full, file too large, read-only, the path a directory, EIO)
    never lose an accepted line: the writer keeps every unwritten byte in memory, sets
    ``fault`` (one line), calls ``on_change`` (from its thread), retries every
    ``retry_s`` seconds and, once a write succeeds, writes everything it holds and
    clears ``fault``. A partial write is continued where it stopped. A write, fsync or
    open that has not returned after ``hang_after_s`` seconds (a hung file system) is a
    fault too: ``fault`` reports it to whoever reads it (the referee, every tick), since
    the writer itself is stuck. ``close`` waits up to ``close_timeout_s`` for the writer
    (never longer, however the disk hangs: a stuck writer is left behind, a daemon);
    lines that still cannot be written are saved to ``rescue_path`` (under
    ``<log dir>/unsaved/``, else the temp directory, each tried for at most
    ``RESCUE_TIMEOUT_S``) and named in ``fault``.

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
        lazy: bool = False,
        hang_after_s: float | None = None,
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.background = background
        self.retry_s = retry_s
        self.close_timeout_s = close_timeout_s
        self.hang_after_s = HANG_AFTER_S if hang_after_s is None else hang_after_s
        self.on_change = on_change
        self.recovered: LogContents = LogContents()
        self._fault: LogFault | None = None
        self.faults_seen = 0  # how many runs of failures there have been
        self.rescue_path: Path | None = None
        self.durable_ns: deque[int] = deque(maxlen=100_000)  # append -> fsync done, per line
        self.lines_written = 0
        self.prev_chain = ""  # the checksum chain goes on from here
        self._pending = bytearray()  # encoded lines not yet (wholly) on disk
        self._stamps: deque[tuple[int, int]] = deque()  # (end offset in _pending, t_append)
        self._appended = 0  # bytes handed over in all
        self._synced = 0  # bytes known to be on disk (fsync'd)
        self._fd: int | None = None
        self._cond = threading.Condition()
        self._commit_lock = threading.Lock()
        self._closing = False
        self._closed = False
        # Opening: the file read (None: not yet), repaired, and ready to append to.
        self._contents: LogContents | None = None
        self._torn_saved = False
        self._repaired = False
        self._need_newline = False
        self._ready = False
        self._aside_target: Path | None = None
        self._doing = "open"
        # The writer's file-system call in progress since (time.monotonic()), if any.
        self._busy_since: float | None = None
        self._hang_shown = False  # `fault` has reported the call in progress as hung
        # Who waits for a line to be on disk (`synced`): (mark, n, loop, future), a heap.
        self._sync_waiters: list[tuple[int, int, asyncio.AbstractEventLoop, Any]] = []
        self._waiter_seq = itertools.count()
        if not (lazy and background):
            try:
                self._prepare()
            except OSError as exc:
                self._set_fault(exc, self._doing)
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._run, name="gamelog", daemon=True)
            self._thread.start()

    set_aside: Path | None = None  # where a damaged original was copied

    # ---- opening and repair (the constructor, or the writer under _commit_lock)
    def _prepare(self) -> None:
        """Read the file, repair it and open it for appending; any step that fails
        raises and is retried from where it stopped (nothing is appended before)."""
        if self._contents is None:
            self._doing = "open"
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._doing = "read"
            contents = read_log(self.path) if self.path.exists() else LogContents()
            with self._cond:
                # Lines appended before the file was read (a lazy open) were chained
                # from the empty chain: chain them on from the file's last line.
                if self._pending and contents.last_chain:
                    self._pending[:], self.prev_chain = _rechain(
                        bytes(self._pending), contents.last_chain)
                elif not self._pending:
                    self.prev_chain = contents.last_chain
                self.recovered = self._contents = contents
        if not self._repaired:
            self._repair(self._contents)
        self._doing = "open"
        self._open()
        self._ready = True

    def _open(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _repair(self, contents: LogContents) -> None:
        """Set aside what cannot be appended behind, then cut the file back to its last
        good line. The copy first (it needs space; a crash before the cut only repeats
        it), the cut after (it needs none). Nothing acknowledged is in what is cut."""
        if contents.damaged_line is not None:
            self._doing = "set aside the damaged log"
            if self._aside_target is None:
                aside = self.path.with_name(self.path.name + ".damaged")
                n = 1
                while aside.exists():
                    n += 1
                    aside = self.path.with_name(f"{self.path.name}.damaged-{n}")
                self._aside_target = aside
            if self.set_aside is None:
                self._copy_aside(self._aside_target)
                self.set_aside = self._aside_target
            self._cut(contents.good_length)
        elif contents.torn_tail:
            self._doing = "set aside the torn last line of"
            if not self._torn_saved:
                self._save_torn(contents.torn_tail)
                self._torn_saved = True
            self._cut(contents.good_length)
        elif (
            contents.good_length
            and contents.good_length == self.path.stat().st_size
            and not self._ends_with_newline()
        ):
            self._need_newline = True  # a whole last line without its newline
        self._repaired = True

    def _copy_aside(self, aside: Path) -> None:
        try:
            with open(self.path, "rb") as src, open(aside, "wb") as dst:
                shutil.copyfileobj(src, dst)
                dst.flush()
                os.fsync(dst.fileno())
        except OSError:
            with contextlib.suppress(OSError):
                aside.unlink()  # no half copy left behind; the next try starts again
            raise

    def _save_torn(self, tail: bytes) -> None:
        fd = os.open(self.path.with_name(self.path.name + ".torn"),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            start = os.fstat(fd).st_size
            try:
                _write_all(fd, tail + b"\n")
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)  # no half copy: the next try writes it whole
                raise
        finally:
            os.close(fd)

    def _cut(self, length: int) -> None:
        self._doing = "cut back"
        fd = os.open(self.path, os.O_WRONLY)
        try:
            if os.fstat(fd).st_size > length:
                os.ftruncate(fd, length)
                os.fsync(fd)
        finally:
            os.close(fd)

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"

    # ---- the caller's side
    def append(self, event: dict[str, Any]) -> int:
        """Hand one accepted event to the writer (returns at once when background).
        Returns the line's mark: once `synced_bytes` reaches it, the line is on disk
        (`synced(mark)` waits for that)."""
        with self._cond:
            if self._closed:
                raise ValueError(f"{self.path}: append to a closed game log")
            text = encode_log_line(event, self.prev_chain)
            line = text.encode("utf-8") + b"\n"
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

    @property
    def fault(self) -> LogFault | None:
        """What is wrong with the storage now, one line for the table, or None. Besides
        the failures the writer saw, a file-system call of the writer's that has not
        returned for `hang_after_s` seconds (cheap to ask: the loop asks every tick)."""
        fault = self._fault
        if fault is not None:
            return fault
        since = self._busy_since
        if since is None:
            return None
        waited = time.monotonic() - since
        if waited < self.hang_after_s:
            return None
        if not self._hang_shown:
            self._hang_shown = True
            self.faults_seen += 1
        held = self._appended - self._synced
        return LogFault(
            f"LOG FAILING: writing {self.path} has not finished for {waited:.0f} s "
            f"(the storage hangs); {held} bytes held in memory",
            since,
        )

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
                while self._ready and self._synced >= self._appended and not self._closing:
                    self._cond.wait()
                if self._synced >= self._appended and self._closing:
                    return
            if not self._commit():
                with self._cond:
                    if self._closing:
                        return
                    self._cond.wait(self.retry_s)  # a retry, or woken by close

    def _commit(self) -> bool:
        """Open (and repair) the file if that is still to do, then write and fsync
        everything pending. True when all of it is on disk."""
        with self._commit_lock:
            with self._cond:
                data = bytes(self._pending)
                end = self._appended
            if not data and self._ready and self._synced >= end:
                return True
            written = 0
            self._busy_since = time.monotonic()
            try:
                if not self._ready:
                    self._prepare()
                    with self._cond:  # chained on from the file's last line
                        data = bytes(self._pending)
                        end = self._appended
                self._doing = "write"
                self._open()
                assert self._fd is not None
                if self._need_newline:
                    _write_all(self._fd, b"\n")
                    self._need_newline = False
                while written < len(data):
                    n = os.write(self._fd, data[written:])
                    if n <= 0:
                        raise OSError(errno.EIO, "write wrote nothing")
                    written += n
                if self.fsync and end > self._synced:
                    os.fsync(self._fd)  # (also lines written whole by a try whose fsync failed)
            except OSError as exc:
                with self._cond:
                    del self._pending[:written]  # what did get written stays written
                self._set_fault(exc, self._doing)
                return False
            finally:
                self._busy_since = None
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
            if self._fault is not None or self._hang_shown:
                self._fault = None
                self._hang_shown = False
                self._changed()
            return True

    def _set_fault(self, exc: OSError, doing: str) -> None:
        reason = exc.strerror or type(exc).__name__
        with self._cond:
            held = self._appended - self._synced
        text = f"LOG FAILING: cannot {doing} {self.path}: {reason}; {held} bytes held in memory"
        if self._fd is not None and isinstance(exc, IsADirectoryError | FileNotFoundError):
            self._drop_fd()
        shown = self._fault or (self.fault if self._hang_shown else None)
        self._fault = LogFault(text, shown.since if shown else time.monotonic())
        if shown is None:
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
    def close(self, timeout: float | None = None) -> None:
        """Stop the writer once it has written what it holds, waiting at most `timeout`
        seconds (default `close_timeout_s`) however the disk behaves; what is still held
        then is rescued (`rescue_path`, said in `fault`), which takes at most
        2 x RESCUE_TIMEOUT_S more. A writer stuck in the file system is left behind."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cond.notify_all()
        stuck = False
        if self._thread is not None:
            self._thread.join(self.close_timeout_s if timeout is None else timeout)
            stuck = self._thread.is_alive()
        with self._cond:
            self._closed = True
        if self._thread is None and self._pending:
            self._commit()  # no writer thread: the last try is the caller's
        if self._pending:
            self._rescue()
        if not stuck:
            self._drop_fd()

    def _rescue(self) -> None:
        """The storage never came back: save what is held where it can go, and say so:
        beside the log (`<log dir>/unsaved/`, the state directory, kept across restarts),
        else the temp directory."""
        with self._cond:
            data = bytes(self._pending)
        fault = self.fault
        reason = fault.text if fault else "LOG FAILING"
        since = fault.since if fault else time.monotonic()
        prefix = f"{self.path.stem}-unsaved-"
        failed: list[str] = []
        for place in (self.path.parent / UNSAVED_DIR, Path(tempfile.gettempdir())):
            name, why = _save_within(place, prefix, data, RESCUE_TIMEOUT_S)
            if name is not None:
                self.rescue_path = Path(name)
                break
            failed.append(f"{place}: {why}")
        if self.rescue_path is not None:
            text = f"{reason}; on closing, {len(data)} bytes saved to {self.rescue_path}"
            if failed:
                text += f" (the log folder could not take them: {failed[0]})"
        else:
            nowhere = "; ".join(failed)
            text = f"{reason}; on closing, {len(data)} bytes could not be saved ({nowhere})"
        self._fault = LogFault(text, since)
        self._changed()

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
