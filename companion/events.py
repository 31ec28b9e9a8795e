"""The event line format: one JSON object a line (JSON Lines).

The same format is the game log, the script format and the input format. Decoding is
strict about JSON and lenient about fields: unknown fields are kept (the format grows
by adding fields), and whether an event is legal is the rules engine's call.
"""

from __future__ import annotations

import json
from typing import Any


class EventFormatError(ValueError):
    """A line that is not one JSON object."""


def decode(line: str) -> dict[str, Any]:
    text = line.strip()
    if not text:
        raise EventFormatError("empty line")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise EventFormatError(f"not a JSON object (got {type(value).__name__})")
    return value


def encode(event: dict[str, Any]) -> str:
    """One compact line, no newline. Keys keep their order, `type` first."""
    ordered = {"type": event["type"], **event} if "type" in event else dict(event)
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)


def is_comment(line: str) -> bool:
    """Blank lines and lines starting with '#' are allowed in hand-written scripts."""
    text = line.strip()
    return not text or text.startswith("#")
