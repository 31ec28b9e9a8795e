"""The Pico link under well-formed but hostile lines: numbers and ranges are
checked, buffers stay bounded, a reboot resyncs whatever the edge numbers were, and the
checksum field is exactly what PROTOCOL.md says."""

from __future__ import annotations

import resource
import time

import pytest
from test_pico_link import table, wait_until  # noqa: F401 - the fixture

from companion.hardware.pico_protocol import (
    MAX_LINE,
    ProtocolError,
    crc8,
    encode,
    parse_line,
)


def framed(body: bytes, cc: bytes | None = None) -> bytes:
    return body + b"*" + (cc if cc is not None else b"%02X" % crc8(body)) + b"\n"


@pytest.mark.parametrize(
    "line",
    [
        framed(b"EDGE 5 1 D 123", b"%02x" % crc8(b"EDGE 5 1 D 123")),  # lower case hex
        b"EDGE 5 1 D 123*" + b"%03X" % crc8(b"EDGE 5 1 D 123") + b"\n",  # three digits
        framed(b"EDGE 5 1 D 123", b"+" + b"%X" % (crc8(b"EDGE 5 1 D 123") & 15)),
        framed(b"EDGE 5 1 D 123", b" " + b"%X" % (crc8(b"EDGE 5 1 D 123") & 15)),
        framed(b"EDGE 5 1 D 123")[:-1] + b"\r\r\n",  # one \r only
        framed(b"LOST 1 99999999999999999999"),
        framed(b"EDGE 99999999999999999999 1 D 5"),
        framed(b"EDGE 5 99 D 5"),
        framed(b"EDGE 0 1 D 5"),
        framed(b"EDGE 05 1 D 5"),
        framed(b"PONG 1 " + b"9" * 20 + b" 3"),
        framed(b"HI 1 0 4 1 fw"),
    ],
)
def test_lines_the_document_forbids_are_refused(line):
    with pytest.raises(ProtocolError):
        parse_line(line)


def test_good_lines_still_parse():
    assert parse_line(encode("EDGE", 17, 2, "D", 912400001)).args == (17, 2, "D", 912400001)
    assert parse_line(framed(b"EDGE 5 1 D 123")[:-1] + b"\r\n").kind == "EDGE"
    assert len(encode("PONG", 10**9, 2**53, 2**40)) <= MAX_LINE + 1


def test_a_lost_range_past_the_picos_numbers_cannot_wedge_the_link(table):  # noqa: F811
    dev, link, rec = table()
    dev.press(0)
    assert wait_until(lambda: len(rec.presses) == 1)
    dev.send_garbage(encode("LOST", 1, 10**12))  # well-formed, in range, but not true
    dev.press(1)
    dev.press(2)
    assert wait_until(lambda: len(rec.presses) == 3), rec.errors
    assert [s for s, _ in rec.presses] == [0, 1, 2]
    assert link.synced and link.expected == 4
    assert any("has not numbered" in e for e in rec.errors)


def test_a_huge_edge_number_then_a_reboot_resyncs_in_bounded_memory(table):  # noqa: F811
    dev, link, rec = table()
    dev.press(0)
    assert wait_until(lambda: len(rec.presses) == 1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dev.send_garbage(encode("EDGE", 2**40, 1, "D", 5))
    dev.send_garbage(encode("EDGE", 10**9, 1, "D", 5))
    old = link.boot_id
    dev.reboot()
    dev.press(3)
    assert wait_until(lambda: link.boot_id != old and len(rec.presses) == 2, 10), rec.errors
    assert [s for s, _ in rec.presses] == [0, 3]
    time.sleep(0.2)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 50_000, grown_kb
    assert len(link._pending) == 0
    assert any("far past" in e for e in rec.errors)
