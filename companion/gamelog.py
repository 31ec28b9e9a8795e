"""The game log: every accepted event appended and flushed to disk (fsync) before its
effect is shown, so a game killed at any moment resumes from its log.

A process killed mid-write can leave a torn last line (no newline, not JSON). Reading
reports it and skips it; opening the log for appending moves the torn bytes to a
`<log>.torn` file beside it (nothing is thrown away) and truncates the log back to its
last whole line, so the next event starts on a line of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.events import EventFormatError, decode, encode, is_comment


@dataclass
class LogContents:
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line no, event)
    problems: list[str] = field(default_factory=list)  # one line each: "line N: reason"
    torn_tail: bytes = b""  # bytes after the last newline that do not decode
    good_length: int = 0  # bytes up to and including the last whole line


def read_log(path: str | os.PathLike[str]) -> LogContents:
    data = Path(path).read_bytes()
    out = LogContents()
    end_of_whole = data.rfind(b"\n") + 1
    whole, tail = data[:end_of_whole], data[end_of_whole:]
    lines = whole.decode("utf-8", errors="replace").split("\n")[:-1] if whole else []
    for n, line in enumerate(lines, 1):
        if is_comment(line):
            continue
        try:
            out.events.append((n, decode(line)))
        except EventFormatError as exc:
            out.problems.append(f"line {n}: {exc}")
    out.good_length = end_of_whole
    if tail.strip():
        n = len(lines) + 1
        try:
            # A last line that decodes but lacks its newline was written whole.
            out.events.append((n, decode(tail.decode("utf-8"))))
            out.good_length = len(data)
        except (EventFormatError, UnicodeDecodeError):
            out.torn_tail = tail
            out.problems.append(f"line {n}: torn last line ({len(tail)} bytes) skipped")
    return out


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
        self._fh = open(self.path, "ab")  # noqa: SIM115 - held open for the game's life

    def _repair(self, contents: LogContents) -> None:
        size = self.path.stat().st_size
        if contents.torn_tail:
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

    def append(self, event: dict[str, Any]) -> None:
        self._fh.write(encode(event).encode("utf-8") + b"\n")
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
