"""The game log: every accepted event appended and flushed to disk (fsync) before its
effect is shown, so a game killed at any moment resumes from its log.

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

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.events import EventFormatError, decode, encode, is_comment

CHAIN_FIELD = "chain"
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


@dataclass
class LogContents:
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line no, event)
    problems: list[str] = field(default_factory=list)  # one line each: "line N: reason"
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
                f"line {n}: damaged ({why}); the game is kept up to line {n - 1}"
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
            out.problems.append(f"line {n}: torn last line ({len(tail)} bytes) skipped")
        else:
            why = _chain_problem(out, text.strip(), event)
            if why:  # a last line cut exactly at a brace is torn too, not damage
                out.torn_tail = tail
                out.problems.append(f"line {n}: torn last line ({len(tail)} bytes) skipped")
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
        out.problems.append(f"line {n}: {exc}")
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


class GameLog:
    """Append-only JSON Lines writer with fsync on every event."""

    def __init__(self, path: str | os.PathLike[str], fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.recovered: LogContents = LogContents()
        if self.path.exists():
            self.recovered = read_log(self.path)
            self._repair(self.recovered)
        self.prev_chain = self.recovered.last_chain
        self._fh = open(self.path, "ab")  # noqa: SIM115 - held open for the game's life

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

    def append(self, event: dict[str, Any]) -> None:
        line = encode_log_line(event, self.prev_chain)
        self._fh.write(line.encode("utf-8") + b"\n")
        self.prev_chain = line_chain(line)
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
