from __future__ import annotations

import pytest
import serial
from hypothesis import given
from hypothesis import strategies as st

from companion.hardware.pico_protocol import (
    HOST_KINDS,
    MAX_LINE,
    LineSplitter,
    Message,
    ProtocolError,
    crc8,
    encode,
    parse_line,
    parse_resync,
)


def test_crc8_check_value() -> None:
    # CRC-8 (poly 0x07, init 0): the catalogue's check value for "123456789".
    assert crc8(b"123456789") == 0xF4
    assert crc8(b"") == 0


def test_encode_frames_with_checksum_and_newline() -> None:
    line = encode("EDGE", 5, 1, "D", 123456)
    body = b"EDGE 5 1 D 123456"
    assert line == body + b"*%02X\n" % crc8(body)


def test_round_trip() -> None:
    assert parse_line(encode("PONG", 7, 10**12, 3)) == Message("PONG", (7, 10**12, 3))
    assert parse_line(encode("HI", 1, 99, 4, 1, "vault-pico-1.0")).args[-1] == "vault-pico-1.0"
    assert parse_line(encode("RESEND", 4), HOST_KINDS) == Message("RESEND", (4,))
    assert parse_line(encode("EDGE", 1, 0, "U", 5) .replace(b"\n", b"\r\n")).args[2] == "U"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"\n", "empty line"),
        (b"EDGE 5 1 D 123", "no *CC checksum"),
        (b"EDGE 5 1 D 123*ZZ\n", "not hex"),
        (b"EDGE 5 1 D 123*00\n", "checksum mismatch"),
        (b"\x00\xffEDGE\n", "non-ASCII or control bytes"),
        (b"A" * (MAX_LINE + 1) + b"\n", "longer than"),
    ],
)
def test_bad_lines_give_one_line_reasons(line: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_line(line)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def framed(body: str) -> bytes:
    raw = body.encode()
    return raw + b"*%02X\n" % crc8(raw)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("BOOM 1", "unknown message 'BOOM'"),
        ("EDGE 1 2 D", "EDGE needs 4 arguments, got 3"),
        ("EDGE 1 2 X 5", "must be D or U"),
        ("EDGE 1 -2 D 5", "must be a whole number"),
        ("PONG 1 2.5 3", "must be a whole number"),
        ("HELLO 1", "unknown message 'HELLO'"),  # a host message is not a Pico message
    ],
)
def test_well_framed_but_wrong_messages(body: str, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        parse_line(framed(body))


def test_encode_refuses_what_would_not_parse() -> None:
    with pytest.raises(ValueError):
        encode("EDGE", -1, 0, "D", 0)
    with pytest.raises(ValueError):
        encode("ERR", "two words")
    with pytest.raises(ValueError):
        encode("ERR", "x" * 200)


def test_resync_finds_a_whole_line_after_a_torn_one() -> None:
    good = encode("EDGE", 6, 2, "D", 777)
    torn = encode("EDGE", 5, 1, "D", 123456)[:9]
    msg, problem = parse_resync(torn + good)
    assert msg == Message("EDGE", (6, 2, "D", 777))
    assert problem is not None and "garbage" in problem
    msg, problem = parse_resync(b"\xff\x00junk" + good)
    assert msg.args[0] == 6 and problem
    with pytest.raises(ProtocolError):
        parse_resync(b"EDGE 5 1 D 12EDGE 6 2 D")
    assert parse_resync(good) == (Message("EDGE", (6, 2, "D", 777)), None)


def test_splitter_cuts_lines_and_bounds_garbage() -> None:
    sp = LineSplitter()
    a, b = encode("PONG", 1, 2, 3), encode("EDGE", 1, 0, "D", 9)
    assert sp.feed(a[:5]) == []
    assert sp.feed(a[5:] + b[:3]) == [a]
    assert sp.feed(b[3:]) == [b]
    assert sp.feed(b"x" * (3 * MAX_LINE)) == [b"x" * (3 * MAX_LINE)]
    assert sp.pending == 0
    sp.feed(b"half a li")
    assert sp.reset() == b"half a li"


def test_lines_through_a_pyserial_loop_port() -> None:
    """Framing over a real pyserial port: good lines survive garbage and a torn line."""
    port = serial.serial_for_url("loop://", timeout=0.05)
    lines = [encode("EDGE", n, n % 4, "D", 1000 * n) for n in range(1, 6)]
    port.write(lines[0] + b"\x00\x13garbage\n" + lines[1] + lines[2][:7] + lines[3] + lines[4])
    sp = LineSplitter()
    got, problems = [], []
    for line in sp.feed(port.read(4096)):
        try:
            msg, problem = parse_resync(line)
        except ProtocolError as exc:
            problems.append(str(exc))
            continue
        got.append(msg.args[0])
        if problem:
            problems.append(problem)
    port.close()
    assert got == [1, 2, 4, 5]  # 3 was torn: the link asks for it again by number
    assert len(problems) == 2


@given(st.binary(max_size=300))
def test_any_bytes_never_raise_anything_but_protocol_error(data: bytes) -> None:
    for line in LineSplitter().feed(data + b"\n"):
        try:
            parse_resync(line)
        except ProtocolError as exc:
            assert "\n" not in str(exc)


@given(
    st.integers(0, 2**40), st.integers(0, 7), st.sampled_from("DU"), st.integers(0, 2**50),
    st.integers(0, 200), st.integers(0, 7),
)
def test_any_single_byte_change_is_caught(n, seat, level, us, pos, bit) -> None:
    line = encode("EDGE", n, seat, level, us)
    pos %= len(line) - 1
    bad = bytearray(line)
    bad[pos] ^= 1 << bit
    try:
        msg = parse_line(bytes(bad))
    except ProtocolError:
        return
    # CRC-8 catches every single-bit error; a changed byte that still parses can only
    # be the newline's neighbour turned into another line ending.
    assert msg == parse_line(line)
