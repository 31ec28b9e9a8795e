"""Reading log lines in tests: the event a line holds, without the log's own field."""

from __future__ import annotations

import json
import time
from pathlib import Path


def unchained(line: str) -> dict:
    """A log line's event without the log's own checksum field ("chain")."""
    event = json.loads(line)
    event.pop("chain", None)
    return event


def wait_for_logged_lines(log_dir: Path, lines: int, timeout: float) -> list[Path]:
    """The game logs in `log_dir`, once the first holds `lines` lines or `timeout`
    seconds have passed (the caller's assertions then say what was missing)."""
    deadline = time.monotonic() + timeout
    logs: list[Path] = []
    while time.monotonic() < deadline:
        logs = sorted(log_dir.glob("game-*.jsonl"))
        if logs and len(logs[0].read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    return logs
