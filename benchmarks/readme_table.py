"""Run the goal benchmarks and print the benchmark table of
docs/benchmarks.md from their output.

    .venv/bin/python benchmarks/readme_table.py [--quick]

Runs, one after another (each in its own process, so one's threads and memory never
colour the next): engine_bench.py, verdict_latency.py (5,000 presses a run; --quick:
1,000), vision_stream.py, serve_memory.py. Every line they print with a figure becomes
a row: the benchmark, what was measured, the goal (when the line states one) and the
figure. Paste the rows under the table header in docs/benchmarks.md ("Goals and figures").
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOAL_LINE = re.compile(r"^(?P<what>.+?): (?P<figure>.+?)\s*\(goal: (?P<goal>[^)]*)\)(?P<rest>.*)$")
PLAIN_LINE = re.compile(r"^(?P<what>[^:]+): (?P<figure>.+)$")


def benches(quick: bool) -> list[list[str]]:
    presses = "1000" if quick else "5000"
    return [
        ["engine_bench.py"],
        ["verdict_latency.py", "--presses", presses],
        ["vision_stream.py"],
        ["serve_memory.py"],
    ]


def rows_of(command: list[str], output: str) -> list[str]:
    rows = []
    name = " ".join(["benchmarks/" + command[0], *command[1:]])
    for line in output.splitlines():
        text = line.strip()
        if not text or text.startswith(("load average", "one thread", "serve:")):
            continue
        m = GOAL_LINE.match(text)
        if m:
            goal = m["goal"]
            figure = (m["figure"] + m["rest"]).strip()
        else:
            m = PLAIN_LINE.match(text)
            if not m:
                continue
            goal, figure = "", m["figure"]
        figure = re.sub(r"\s{2,}", " ", figure).replace("|", "/")
        rows.append(f"| `{name}` | {m['what']} | {goal} | {figure} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1,000 presses a latency run")
    args = ap.parse_args(argv)
    print("| benchmark | what | goal | measured |")
    print("|---|---|---|---|")
    loads = []
    for command in benches(args.quick):
        out = subprocess.run(
            [sys.executable, str(HERE / command[0]), *command[1:]],
            capture_output=True,
            text=True,
            cwd=HERE.parent,
        )
        if out.returncode:
            print(f"| `benchmarks/{command[0]}` | FAILED | | {out.stderr.strip()[-200:]} |")
            continue
        for row in rows_of(command, out.stdout):
            print(row, flush=True)
        loads.append(os.getloadavg()[0])
    print()
    print(
        f"Measured on {os.cpu_count()} cores; load average after each benchmark: "
        + ", ".join(f"{x:.1f}" for x in loads)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
