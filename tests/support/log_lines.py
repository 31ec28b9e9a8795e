"""Reading log lines in tests: the event a line holds, without the log's own field."""

from __future__ import annotations

import json


def unchained(line: str) -> dict:
    """A log line's event without the log's own checksum field ("chain")."""
    event = json.loads(line)
    event.pop("chain", None)
    return event
