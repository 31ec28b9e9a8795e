"""reader_lab/benchmarks/reader_accuracy.py: the speed rounds set against issue 8's budget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scripts import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "reader_lab/benchmarks/reader_accuracy.py"


def test_the_budget_verdict_goes_by_the_median_round_not_the_worst():
    lines = load_script(SCRIPT).budget_lines(
        {"640x640": [29.0, 31.5, 28.0], "1280x720": [58.0, 61.0, 60.5, 62.0]})
    assert lines == [
        "640x640: median of 3 rounds 29.0 ms (rounds 28.0-31.5); budget 30 ms: within",
        "1280x720: median of 4 rounds 60.8 ms (rounds 58.0-62.0); budget 60 ms: OVER"]


def test_rounds_below_one_are_refused_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPT), "--rounds", "0"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "reader_accuracy.py: error: --rounds must be at least 1, not 0")


def test_peak_bands_count_each_die_once_by_its_boxs_score():
    # (detector score or None, top face's confidence, top face right)
    records = [(None, 0.0, False), (0.05, 0.9, True), (0.4, 0.85, True), (0.4, 0.5, True),
               (0.45, 0.95, False), (0.69, 0.7, True), (0.7, 0.99, True), (1.0, 0.8, False)]
    rows = load_script(SCRIPT).peak_bands(records, 0.8)
    assert rows == [
        "no peak | 12.5% (1) | | |",
        "0.02-0.1 | 12.5% (1) | 100.0% | 100.0% / 0.0% |",
        "0.1-0.3 | 0.0% (0) | 0.0% | 0.0% / 0.0% |",
        "0.3-0.5 | 37.5% (3) | 66.7% | 33.3% / 33.3% |",
        "0.5-0.7 | 12.5% (1) | 100.0% | 0.0% / 0.0% |",  # 0.7 sure is under 0.8
        "0.7-1 | 25.0% (2) | 50.0% | 50.0% / 50.0% |",  # the top band holds 1.0
    ]
