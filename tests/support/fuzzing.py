"""The fuzzers behind tests/fuzz/ and benchmarks/fuzz_soak.py: seeded, bounded by a time
budget, each returning how many inputs it tried. A failure raises AssertionError naming
the input (repr, cut short) and the seed, so it can be replayed.

What counts as a failure: an exception out of a boundary that should hold it (a crash),
a call that does not return within its time (a hang), or a referee that stops taking
events while it looks alive (a silent stop: a sentinel event after the fuzz does not
come out the other end).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "tests" / "scripts"

# Values that have broken parsers somewhere: huge and odd numbers, deep nesting,
# surrogates, line separators, control characters, wrong types.
NASTY_TEXT = [
    "\ud800",
    "\udfff",
    "\u2028",
    "\u2029",
    "\x85",
    "\x00",
    "\n",
    "\r\n",
    "",
    " ",
    "#",
    "\ufeff",
    "😀",
    "\\",
    '"',
    "A" * 300,
]
NASTY_JSON = [
    "9" * 400,
    "9" * 5000,
    "-1",
    "1e400",
    "-0",
    "1.5",
    "NaN",
    "Infinity",
    "[" * 5000 + "]" * 5000,
    "[" * 40 + "]" * 40,
    '{"a":' * 30 + "1" + "}" * 30,
    "null",
    "true",
    "[]",
    "{}",
    '"\\ud800"',
    '"\\u2028"',
    '"\u2028"',
    str(2**63),
    str(2**63 - 1),
    "[1]",
    '{"seat":1}',
    '"x"',
]


def script_lines() -> list[str]:
    out: list[str] = []
    for p in sorted(SCRIPTS.glob("*.jsonl")):
        out += [x for x in p.read_text().splitlines() if x.strip() and not x.startswith("#")]
    return out


def mutate_line(rng: random.Random, line: str) -> str:
    """One event line, changed the way bad luck or an attacker would."""
    how = rng.randrange(9)
    if how == 0 and line:  # a character replaced
        i = rng.randrange(len(line))
        return line[:i] + rng.choice(NASTY_TEXT + ["{", "}", "[", ",", ":", "0"]) + line[i + 1 :]
    if how == 1 and line:  # cut short
        return line[: rng.randrange(len(line))]
    if how == 2:  # a value replaced by a nasty JSON value
        try:
            ev = json.loads(line)
        except ValueError:
            return line
        if isinstance(ev, dict) and ev:
            key = rng.choice(list(ev))
            text = json.dumps({k: v for k, v in ev.items() if k != key})[:-1]
            sep = ", " if len(text) > 1 else ""
            return f"{text}{sep}{json.dumps(key)}: {rng.choice(NASTY_JSON)}}}"
        return line
    if how == 3:  # an extra field
        return line[:-1] + f', "photo_finish": {rng.choice(NASTY_JSON)}}}'
    if how == 4:  # a nasty string somewhere
        return line.replace('"', '"' + rng.choice(NASTY_TEXT).replace('"', ""), 1)
    if how == 5:  # ts_ns
        return line[:-1] + f', "ts_ns": {rng.choice(NASTY_JSON[:6] + ["5", "0"])}}}'
    if how == 6:  # type changed
        kinds = ["buzz", "undo", "rejected", "clock", "\n", "", "new_game", "tally", "x" * 80]
        return json.dumps({"type": rng.choice(kinds), "seat": rng.choice([0, 1, [1], "1", -1])})
    if how == 7:  # raw bytes as text
        return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 40)))
    return line


def event_lines(rng: random.Random, n: int) -> list[str]:
    """n lines: mostly a real game's lines (so play goes deep), a third of them mutated."""
    base = script_lines()
    out = []
    while len(out) < n:
        for line in base:
            out.append(mutate_line(rng, line) if rng.random() < 0.33 else line)
            if len(out) >= n:
                break
    return out


def within(seconds: float, fn: Callable[[], Any], what: str) -> Any:
    """Run fn in a thread; a hang (not done in `seconds`) is a failure."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # reported below, with what it was running
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise AssertionError(f"hang: {what} did not finish in {seconds:g} s")
    if "error" in box:
        raise AssertionError(f"crash: {what}: {box['error']!r}") from box["error"]
    return box.get("value")


def budget(seconds: float) -> Iterator[int]:
    """0, 1, 2, ... until `seconds` have passed (at least one round)."""
    end = time.monotonic() + seconds
    i = 0
    while True:
        yield i
        i += 1
        if time.monotonic() >= end:
            return


# ------------------------------------------------------------------ the targets


def fuzz_referee(seconds: float, seed: int) -> int:
    """Lines through the one gate and the referee, in memory: nothing escapes, every
    rejection is a short non-empty line, and a sentinel is still accepted at the end."""
    from companion.events import MAX_REASON_CHARS, EventFormatError, decode_line
    from companion.loop import Referee

    rng = random.Random(seed)
    tried = 0
    for _ in budget(seconds):
        ref = Referee()
        for line in event_lines(rng, 60):
            tried += 1
            try:
                event = decode_line(line)
            except EventFormatError as exc:
                assert str(exc) and len(str(exc)) <= MAX_REASON_CHARS, (seed, line[:80])
                continue
            result = ref.submit(event)
            r = result.rejection
            assert r is None or (r and len(r) <= MAX_REASON_CHARS and "\n" not in r), r
            assert ref.internal_errors == 0, (seed, ref.last_fault, line[:120])
        assert ref.submit({"type": "note", "text": "sentinel"}).rejection is None
    return tried


def fuzz_replay(seconds: float, seed: int, tmp: Path) -> int:
    """Fuzzed scripts through `companion replay --skip-invalid` (both outputs)."""
    from companion.cli import main

    rng = random.Random(seed)
    tried = 0
    for i in budget(seconds):
        lines = event_lines(rng, 80)
        p = tmp / f"replay-{i % 4}.jsonl"
        p.write_text("".join(x + "\n" for x in lines), encoding="utf-8", errors="surrogatepass")
        args = ["replay", str(p), "--skip-invalid"] + (["--json"] if i % 2 else [])
        out, err = io.StringIO(), io.StringIO()

        def run(args: list[str] = args, out: io.StringIO = out, err: io.StringIO = err) -> int:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                return main(args)

        code = within(20, run, f"replay seed={seed} round {i}")
        assert code in (0, 2), (code, err.getvalue()[-300:])
        assert "Traceback" not in err.getvalue()
        tried += len(lines)
    return tried


def fuzz_sim(seconds: float, seed: int) -> int:
    """Fuzzed scripts through the headless sim's loop (buttons, settle window, referee):
    every run finishes and a last sentinel line is still judged."""
    from companion.loop import Referee
    from companion.scripted import play_script

    rng = random.Random(seed)
    tried = 0
    for i in budget(seconds):
        lines = event_lines(rng, 60) + ['{"type":"note","text":"sentinel"}']
        ref = Referee()
        seen: list[str] = []
        ref.listeners.append(lambda e, r, seen=seen: seen.append(e.get("text", "")))
        err = io.StringIO()

        def run(lines: list[str] = lines, ref: Referee = ref, err: io.StringIO = err) -> Any:
            with contextlib.redirect_stderr(err):
                return asyncio.run(play_script(lines, ref))

        within(30, run, f"sim seed={seed} round {i}")
        assert ref.internal_errors == 0, (seed, i, ref.last_fault)
        assert seen and seen[-1] == "sentinel", f"silent stop: sim seed={seed} round {i}"
        tried += len(lines)
    return tried


def fuzz_pico(seconds: float, seed: int) -> int:
    """Bytes through the Pico line parser and the link's state machine (no thread, a
    fake port): only ProtocolError comes out, buffers stay bounded."""
    from companion.hardware import pico_link as pl
    from companion.hardware.pico_protocol import (
        MAX_LINE,
        LineSplitter,
        ProtocolError,
        encode,
        parse_resync,
    )

    class Port:
        def __init__(self) -> None:
            self.sent = 0

        def write(self, data: bytes) -> int:
            self.sent += 1
            return len(data)

    rng = random.Random(seed)
    good = [
        encode("HI", 1, 77, 4, 1, "fw"),
        encode("PONG", 1, 1000, 1),
        encode("EDGE", 1, 0, "D", 2000),
        encode("EDGE", 2, 0, "U", 3000),
        encode("LOST", 1, 1),
        encode("LED", 3),
        encode("ERR", "crc"),
    ]
    tried = 0
    for _ in budget(seconds):
        link = pl.PicoLink("fuzz://", lambda s, t: None, on_error=lambda m: None)
        link._ser = Port()
        link._session.state = "hello"
        link._handle_line(good[0])
        link._session.state = "run"
        link.offset_ns = 0
        splitter = LineSplitter()
        for _ in range(200):
            tried += 1
            how = rng.randrange(4)
            if how == 0:
                data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
            elif how == 1:
                b = bytearray(rng.choice(good))
                for _ in range(rng.randrange(1, 4)):
                    b[rng.randrange(len(b))] = rng.randrange(256)
                data = bytes(b)
            elif how == 2:
                kind = rng.choice(["EDGE", "LOST", "PONG", "HI"])
                nums = [rng.choice([0, 1, 2, 63, 64, 2**31, 2**40, 10**19, 10**20, 2**64])]
                args = nums * {"EDGE": 1, "LOST": 2, "PONG": 3, "HI": 4}[kind]
                body = " ".join([kind, *map(str, args)]).encode()
                if kind == "EDGE":
                    body = f"EDGE {args[0]} {rng.randrange(40)} D {rng.randrange(10**6)}".encode()
                from companion.hardware.pico_protocol import crc8

                c = crc8(body)
                cc = rng.choice([b"%02X" % c, b"%02x" % c, b"0" + b"%02X" % c])
                data = body + b"*" + cc + b"\n"
            else:
                data = rng.choice(good)
            for line in splitter.feed(data):
                assert len(line) <= 2 * MAX_LINE + len(data) + 1  # one read at most
                with contextlib.suppress(ProtocolError):
                    parse_resync(line)
                link._handle_line(line)
            assert splitter.pending <= 2 * MAX_LINE
            assert len(link._pending) <= pl.MAX_PENDING
            assert link.expected <= link.pico_next + pl.MAX_EDGE_JUMP + 1
    return tried


CONFIG_BASE = """\
[gpio]
pin_factory = "mock"
[buttons]
pins = [17, 27, 22, 23]
[lamps]
pins = [5, 6, 13, 19]
[display]
type = "none"
[timing]
settle_ms = 2.0
tie_us = 100
lockout_ms = 40
[pico]
enabled = false
port = "picosim://x"
[log]
dir = "vault-logs"
[camera]
source = "none"
"""


def fuzz_config(seconds: float, seed: int) -> int:
    """Mutated TOML through the config loader: a Config or a one-line ConfigError."""
    from companion.config import ConfigError, parse_config

    rng = random.Random(seed)
    pieces = ['"', "[", "]", "=", "\n", "\x00", "~nosuchuser", "9" * 400, "1e999", "nan",
              "[" * 300, "\\u0000", "/dev/null", "-1", "true", "{", "}", "'", "\ud800"]
    tried = 0
    for _ in budget(seconds):
        text = CONFIG_BASE
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(text))
            j = min(len(text), i + rng.randrange(0, 8))
            text = text[:i] + rng.choice(pieces) + text[j:]
        tried += 1
        try:
            parse_config(text)
        except ConfigError as exc:
            assert "\n" not in str(exc).strip(), str(exc)[:200]
    return tried


def fuzz_logs(seconds: float, seed: int, tmp: Path) -> int:
    """Corrupted and truncated checksummed logs through resume: it stops at the first
    damaged line and the game it rebuilds is always the original game up to some line,
    never a different one; opening the log for appending keeps the original aside."""
    from companion.events import decode, is_comment
    from companion.gamelog import GameLog
    from companion.loop import resume_state

    rng = random.Random(seed)
    original = tmp / "original.jsonl"
    if original.exists():
        original.unlink()
    with GameLog(original, fsync=False) as log:
        for line in (SCRIPTS / "game-3p.jsonl").read_text().splitlines():
            if not is_comment(line):
                log.append(decode(line))
    data = original.read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    prefixes = {}
    for k, end in enumerate(starts):
        part = tmp / "prefix.jsonl"
        part.write_bytes(data[:end])
        prefixes[k] = resume_state(part)[0]
    tried = 0
    for i in budget(seconds):
        b = bytearray(data)
        how = rng.randrange(4)
        if how == 0:
            for _ in range(rng.randrange(1, 3)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif how == 1:
            del b[rng.randrange(len(b)) :]
        elif how == 2:
            a = rng.randrange(len(b))
            del b[a : a + rng.randrange(1, 40)]
        else:
            k = rng.randrange(len(starts) - 1)
            line = bytes(b[starts[k] : starts[k + 1]])
            b[starts[k] : starts[k + 1]] = line.replace(b"1", b"2", 1)
        p = tmp / f"log-{i % 4}.jsonl"
        p.write_bytes(bytes(b))
        for extra in tmp.glob(f"log-{i % 4}.jsonl.*"):
            extra.unlink()
        state, report = within(10, lambda p=p: resume_state(p), f"resume seed={seed} {i}")
        tried += 1
        assert any(state == s for s in prefixes.values()), (
            f"a different game: seed={seed} round {i} {report}"
        )
        with GameLog(p, fsync=False) as log:
            log.append({"type": "note", "text": "after"})
        state2, report2 = resume_state(p)
        assert report2.damaged_line is None, report2
    return tried


def fuzz_serve_input(seed: int, tmp: Path, lines: int = 400, timeout: float = 60) -> int:
    """One `companion serve --input FILE` run on fuzzed lines, then a sentinel: the
    sentinel must reach the log (the reader and the referee are alive), no traceback."""
    import signal
    import subprocess
    import sys

    rng = random.Random(seed)
    body = event_lines(rng, lines)
    body = [x for x in body if '"type":"buzz"' not in x.replace(" ", "")]  # no settle waits
    sentinel = json.dumps({"type": "note", "text": f"sentinel {seed}"})
    inp = tmp / "serve-in.jsonl"
    inp.write_text("\n".join(body + [sentinel]) + "\n", encoding="utf-8", errors="surrogatepass")
    logs = tmp / f"serve-logs-{seed}"
    cfg = tmp / "serve.toml"
    cfg.write_text(
        f'[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[log]\ndir = "{logs}"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg), "--input", str(inp)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    found = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and not found:
            time.sleep(0.1)
            found = any(
                f'"sentinel {seed}"' in p.read_text(errors="replace")
                for p in logs.glob("game-*.jsonl")
            )
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err[-2000:]
    assert proc.returncode == 0, err[-500:]
    assert found, f"silent stop: the sentinel never reached the log (seed {seed})"
    return len(body)
