"""The line protocol between the companion and its Raspberry Pi Pico (hardware/pico/PROTOCOL.md).

Pure functions: build lines and parse them. A line is printable ASCII::

    KIND ARG ARG ...*CC\\n

``CC`` is the CRC-8 (polynomial 0x07, initial value 0, no reflection; "123456789" gives
F4) of every byte before the ``*``, as two uppercase hex digits. Arguments are decimal
integers except where a message says otherwise. A garbage, torn or corrupted line is a
:class:`ProtocolError` with a one-line reason; the reader skips it and goes on (edges
are numbered, so a lost one is asked for again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from companion.errors import CompanionError

PROTOCOL_VERSION = 1
MAX_LINE = 96  # bytes, newline excluded

DOWN = "D"  # an edge report for a button pressed (line pulled low)
UP = "U"  # released

# Message kinds and their argument types ("i": decimal int >= 0, "e": D/U, "s": word).
# Host -> Pico
HOST_KINDS: dict[str, str] = {
    "HELLO": "i",  # version
    "PING": "i",  # token
    "ACK": "i",  # highest edge number the host holds, all below included
    "RESEND": "i",  # send again every edge numbered from this on
    "LED": "i",  # lamp bit mask, bit s = seat s
    "LOCKOUT": "i",  # per-button lockout after an edge, microseconds
}
# Pico -> host
PICO_KINDS: dict[str, str] = {
    "HI": "iiiis",  # version, boot id, seats, next edge number, firmware name
    "PONG": "iii",  # token, Pico time (us since boot), next edge number
    "EDGE": "iiei",  # edge number, seat, D/U, Pico time of the edge (us since boot)
    "LOST": "ii",  # first, last edge number the Pico can no longer resend
    "LED": "i",  # lamp mask now shown
    "LOCKOUT": "i",  # lockout now in force, us
    "ERR": "s",  # the Pico could not use a line: a word saying why
}

# The largest value each whole-number argument may take (the smallest is 0, or 1 where
# noted in RANGES). Anything else is a bad line: one well-formed line with a 20-digit
# edge number must not be able to wedge the link.
MAX_EDGE = 2**40  # edge numbers: a press a second for 34,000 years
MAX_US = 2**53  # Pico microseconds since boot (285 years); us * 1000 fits int64 ns
RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "HELLO": ((0, 1_000),),
    "PING": ((0, 10**9),),
    "ACK": ((0, MAX_EDGE),),
    "RESEND": ((0, MAX_EDGE),),
    "LED": ((0, 2**32 - 1),),
    "LOCKOUT": ((0, 10_000_000),),
    "HI": ((0, 1_000), (1, 2**32 - 1), (1, 32), (1, MAX_EDGE)),
    "PONG": ((0, 10**9), (0, MAX_US), (1, MAX_EDGE)),
    "EDGE": ((1, MAX_EDGE), (0, 31), (0, MAX_US)),
    "LOST": ((1, MAX_EDGE), (1, MAX_EDGE)),
}

_WORD = re.compile(r"[A-Za-z0-9._:-]{1,32}\Z")
_NUMBER = re.compile(r"(0|[1-9][0-9]{0,19})\Z")
_CHECKSUM = re.compile(rb"\*[0-9A-F]{2}\Z")
_CRC_TABLE: list[int] = []


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc << 1 ^ 0x07) & 0xFF if crc & 0x80 else crc << 1 & 0xFF
        table.append(crc)
    return table


_CRC_TABLE = _make_table()


def crc8(data: bytes) -> int:
    """CRC-8 (poly 0x07, init 0x00): crc8(b"123456789") == 0xF4."""
    crc = 0
    for b in data:
        crc = _CRC_TABLE[crc ^ b]
    return crc


class ProtocolError(CompanionError, ValueError):
    """A line that cannot be used; ``str`` is one line saying why."""


@dataclass(frozen=True)
class Message:
    kind: str
    args: tuple[int | str, ...] = ()

    def __str__(self) -> str:
        return " ".join([self.kind, *map(str, self.args)])


def encode(kind: str, *args: int | str) -> bytes:
    """One framed line, newline included. Raises ValueError for arguments that could
    not be parsed back (negative numbers, spaces, non-ASCII)."""
    parts = [kind]
    for a in args:
        if isinstance(a, bool) or (isinstance(a, int) and a < 0):
            raise ValueError(f"{kind}: arguments must be whole numbers >= 0, got {a!r}")
        text = str(a)
        if not _WORD.match(text):
            raise ValueError(f"{kind}: argument {text!r} is not a plain word")
        parts.append(text)
    body = " ".join(parts).encode("ascii")
    line = body + b"*%02X\n" % crc8(body)
    if len(line) - 1 > MAX_LINE:
        raise ValueError(f"{kind}: line longer than {MAX_LINE} bytes")
    return line


def parse_line(line: bytes, kinds: dict[str, str] = PICO_KINDS) -> Message:
    """Check and split one line (with or without its newline)."""
    raw = line[:-1] if line.endswith(b"\n") else line
    if raw.endswith(b"\r"):
        raw = raw[:-1]  # one \r before the \n is allowed, nothing more
    if not raw:
        raise ProtocolError("empty line")
    if len(raw) > MAX_LINE:
        raise ProtocolError(f"line of {len(raw)} bytes, longer than {MAX_LINE}")
    if any(b < 0x20 or b > 0x7E for b in raw):
        raise ProtocolError(f"non-ASCII or control bytes in line {_show(raw)}")
    star = raw.rfind(b"*")
    if star < 0 or len(raw) - star != 3:
        raise ProtocolError(f"no *CC checksum at the end of {_show(raw)} (torn line?)")
    body, cc = raw[:star], raw[star + 1 :]
    if not _CHECKSUM.search(raw) or b"*" in body:
        raise ProtocolError(
            f"checksum {cc.decode()!r} is not hex (two uppercase hex digits) in {_show(raw)}"
        )
    want = int(cc, 16)
    got = crc8(body)
    if got != want:
        raise ProtocolError(f"checksum mismatch ({want:02X} sent, {got:02X} computed) in "
                            f"{_show(raw)}")
    fields = body.decode("ascii").split(" ")
    kind, values = fields[0], fields[1:]
    if kind not in kinds:
        raise ProtocolError(f"unknown message {kind!r} in {_show(raw)}")
    spec = kinds[kind]
    if len(values) != len(spec):
        raise ProtocolError(f"{kind} needs {len(spec)} arguments, got {len(values)}")
    args: list[int | str] = []
    ranges = iter(RANGES.get(kind, ()))
    for i, (t, v) in enumerate(zip(spec, values, strict=True)):
        if t == "i":
            if not _NUMBER.match(v):
                raise ProtocolError(
                    f"{kind} argument {i + 1} must be a whole number, got {v[:24]!r}"
                )
            lo, hi = next(ranges, (0, 2**63 - 1))
            if not lo <= int(v) <= hi:
                raise ProtocolError(f"{kind} argument {i + 1} must be {lo}..{hi}, got {v}")
            args.append(int(v))
        elif t == "e":
            if v not in (DOWN, UP):
                raise ProtocolError(f"{kind} argument {i + 1} must be D or U, got {v!r}")
            args.append(v)
        else:
            if not _WORD.match(v):
                raise ProtocolError(f"{kind} argument {i + 1} is not a plain word: {v!r}")
            args.append(v)
    return Message(kind, tuple(args))


def parse_resync(line: bytes, kinds: dict[str, str] = PICO_KINDS) -> tuple[Message, str | None]:
    """Parse a line; if it fails, look for a good message starting later in it (the
    tail of a torn line followed by a whole one). Returns (message, problem-or-None);
    raises ProtocolError if nothing in the line is usable."""
    try:
        return parse_line(line, kinds), None
    except ProtocolError as first:
        raw = line.rstrip(b"\r\n")
        for kind in kinds:
            token = kind.encode()
            start = raw.find(token, 1)
            while start > 0:
                try:
                    message = parse_line(raw[start:], kinds)
                except ProtocolError:
                    start = raw.find(token, start + 1)
                    continue
                return message, f"skipped {start} bytes of garbage before {kind}: {first}"
        raise


def _show(raw: bytes) -> str:
    text = raw.decode("ascii", "backslashreplace")
    return repr(text if len(text) <= 48 else text[:45] + "...")


class LineSplitter:
    """Bytes in, lines out. A line longer than MAX_LINE without a newline is cut off
    and returned as is (it will fail to parse), so garbage cannot grow the buffer."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        lines = []
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                if len(self._buf) > 2 * MAX_LINE:
                    lines.append(bytes(self._buf))
                    self._buf.clear()
                break
            lines.append(bytes(self._buf[: nl + 1]))
            del self._buf[: nl + 1]
        return lines

    def reset(self) -> bytes:
        """Forget a partial line (a new connection); returns what was dropped."""
        dropped = bytes(self._buf)
        self._buf.clear()
        return dropped

    @property
    def pending(self) -> int:
        return len(self._buf)
