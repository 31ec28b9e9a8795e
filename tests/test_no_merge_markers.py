"""No tracked text file keeps a merge's conflict markers (README.md once did, for
sessions, with two versions of one list side by side)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
TEXT = (".py", ".md", ".toml", ".txt", ".js", ".css", ".html", ".json", ".jsonl", ".csv",
        ".service", ".cfg", ".ini", ".sh", ".yml", ".yaml")


def tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / p for p in out.splitlines() if p.endswith(TEXT) or "/" not in p]


def test_no_tracked_text_file_holds_conflict_markers():
    found = []
    for path in tracked():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}"
                  for m in MARKER.finditer(text)]
    assert not found, "conflict markers at " + ", ".join(found)


def test_the_marker_pattern_finds_a_conflict():
    text = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\n"
    assert len(MARKER.findall(text)) == 3
