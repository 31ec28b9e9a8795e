"""The event line format: one JSON object a line (JSON Lines).

The same format is the game log, the script format and the input format. Decoding is
strict about JSON and lenient about fields: unknown fields are kept (the format grows
by adding fields), and whether an event is legal is the rules engine's call.

Every line from outside (the game log, a script, `serve --input`, the page's API) goes
through one gate, `decode_line`: bounded before it is decoded (line length, digits in a
number, nesting depth), then checked after (strings are valid Unicode text, finite
numbers, `ts_ns` in range). A line that fails gets `EventFormatError` with a short
one-line reason; nothing else escapes it. The limits below are part of the contract.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from companion.errors import CompanionError

MAX_LINE_CHARS = 64 * 1024  # one event line, in characters
MAX_NUMBER_DIGITS = 40  # digits in one JSON number (ts_ns needs 19)
MAX_NESTING = 16  # [ and { levels in one event (events use 4 at most)
MAX_TS_NS = 2**63 - 1  # stamps are int64 nanoseconds, as the kernel's clocks are
MAX_REASON_CHARS = 200  # a rejection reason or error message, in characters
MAX_TYPE_CHARS = 64

_LONG_NUMBER = re.compile("[0-9]{" + str(MAX_NUMBER_DIGITS + 1) + "}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SEPARATORS = re.compile("[\u2028\u2029\x85]")


class EventFormatError(CompanionError, ValueError):
    """A line that is not one acceptable JSON object."""


def _no_constant(name: str) -> Any:
    raise EventFormatError(f"not JSON ({name} is not a number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise EventFormatError(f"number out of range ({clip(text, 24)})")
    return value


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def _depth_exceeds(text: str, limit: int) -> bool:
    """True if brackets outside strings nest deeper than `limit`."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def decode_line(line: str | bytes) -> dict[str, Any]:
    """One line from outside -> one event, or EventFormatError with a one-line reason.

    The only gate for the log, scripts, `serve --input` and the page's API. Costs a
    few microseconds on an ordinary line: the bounds are C-speed scans, the slow
    checks run only when a cheap scan says they might be needed."""
    if isinstance(line, bytes | bytearray):
        if len(line) > MAX_LINE_CHARS * 4:
            raise EventFormatError(f"line too long ({len(line)} bytes, limit {MAX_LINE_CHARS})")
        try:
            line = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EventFormatError(f"not UTF-8 text (byte {exc.start})") from None
    text = line.strip()
    if not text:
        raise EventFormatError("empty line")
    if len(text) > MAX_LINE_CHARS:
        raise EventFormatError(f"line too long ({len(text)} characters, limit {MAX_LINE_CHARS})")
    if _LONG_NUMBER.search(text):
        raise EventFormatError(f"number too long (more than {MAX_NUMBER_DIGITS} digits)")
    if (text.count("[") + text.count("{") > MAX_NESTING) and _depth_exceeds(text, MAX_NESTING):
        raise EventFormatError(f"nested too deeply (more than {MAX_NESTING} levels)")
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except EventFormatError:
        raise
    except (ValueError, RecursionError, OverflowError) as exc:  # belt and braces
        raise EventFormatError(f"not JSON ({clip(str(exc), 60)})") from None
    if not isinstance(value, dict):
        raise EventFormatError(f"not a JSON object (got {type(value).__name__})")
    if (_SURROGATE_ESCAPE.search(text) or not text.isascii()) and _has_lone_surrogate(value):
        raise EventFormatError("not Unicode text (a lone surrogate such as \\ud800)")
    problem = event_problem(value)
    if problem:
        raise EventFormatError(problem)
    return value


def event_problem(event: dict[str, Any]) -> str | None:
    """Field checks every event gets before the engine sees it (None: fine)."""
    kind = event.get("type")
    if isinstance(kind, str) and len(kind) > MAX_TYPE_CHARS:
        return f"'type' too long ({len(kind)} characters)"
    if "ts_ns" in event:
        ts = event["ts_ns"]
        if isinstance(ts, bool) or not isinstance(ts, int) or not 0 <= ts <= MAX_TS_NS:
            return f"'ts_ns' must be a whole number 0..{MAX_TS_NS}, got {clip(repr(ts), 40)}"
    clock = event.get("clock")
    if clock is not None and not (isinstance(clock, str) and 0 < len(clock) <= MAX_TYPE_CHARS):
        return "'clock' must be a short string"
    return None


def validate_event(event: Any) -> dict[str, Any]:
    """An already-decoded event (the page's API, tests) through the same rules as a line:
    re-encoded and decoded by `decode_line`, so both paths accept exactly the same."""
    if not isinstance(event, dict):
        raise EventFormatError(f"not a JSON object (got {type(event).__name__})")
    try:
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError, OverflowError) as exc:
        raise EventFormatError(f"not JSON ({clip(str(exc), 60)})") from None
    return decode_line(line)


# The historic name: every caller goes through the bounded gate.
decode = decode_line


def encode(event: dict[str, Any]) -> str:
    """One compact line, no newline. Keys keep their order, `type` first.

    U+2028/U+2029/U+0085 are written escaped, so a reader splitting on every Unicode
    line break (str.splitlines) never cuts an event in two."""
    ordered = {"type": event["type"], **event} if "type" in event else dict(event)
    text = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
    if _SEPARATORS.search(text):
        text = _SEPARATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def split_lines(text: str) -> list[str]:
    """Lines of a JSON Lines text: split on '\\n' only (a raw U+2028 inside a JSON
    string is part of the line, not a line break as str.splitlines() would have it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def clip(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """One line of at most `limit` characters: control characters and line breaks shown
    escaped, lone surrogates replaced, a long text cut with its length noted."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > limit:
        text = f"{text[: limit - 20]}... ({len(text)} chars)"
    return text


def is_comment(line: str) -> bool:
    """Blank lines and lines starting with '#' are allowed in hand-written scripts."""
    text = line.strip()
    return not text or text.startswith("#")


def command_words(text: str) -> dict[str, Any] | list[str]:
    """One line of a game's short command language, read up to its words: the event
    a JSON line holds (through the bounded gate, as logs, scripts and --input), or the
    line's words with the first one lower-cased. ValueError (one line) for an empty
    line or a JSON line the gate refuses."""
    text = text.strip()
    if not text:
        raise ValueError("empty command")
    if text.startswith("{"):
        try:
            return decode_line(text)
        except EventFormatError as exc:
            raise ValueError(str(exc)) from None
    words = text.split()
    words[0] = words[0].lower()
    return words
