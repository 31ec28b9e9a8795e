"""Shared test set-up: tests/support holds builders several test folders use."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
