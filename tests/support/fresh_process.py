"""Running a few lines of Python in a fresh interpreter, as the camera's process is one."""

from __future__ import annotations

import subprocess
import sys


def in_fresh_process(code: str) -> str:
    """What ``code`` prints (stripped), run by this Python in a new process; it must
    exit 0."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
