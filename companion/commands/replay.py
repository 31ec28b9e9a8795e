"""`companion replay FILE [--json] [--skip-invalid]`: replay a game log or script."""

from __future__ import annotations

import argparse
import json
import sys

from companion.gamelog import read_log
from companion.games.registry import judge, status_lines, summary
from companion.rules.engine import new_state


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("replay", help="replay a game log and print where it ended")
    p.add_argument("file", help="a game log or script (JSON Lines)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report each rejected line on stderr and go on (default: stop, exit 2)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        contents = read_log(args.file)
    except OSError as exc:
        print(f"replay: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    problems = {int(p.split(":")[0].split()[1]): p for p in contents.problems}
    state = new_state()
    entries: list[tuple[int, dict | None]] = [(n, ev) for n, ev in contents.events]
    entries += [(n, None) for n in problems]
    for n, event in sorted(entries, key=lambda e: e[0]):
        if event is None:
            reason = problems[n]
        else:
            result = judge(state, event)  # the game named by the first new_game
            if not result.rejection:
                state = result.state
                continue
            reason = f"line {n}: {result.rejection}"
        print(reason, file=sys.stderr)
        torn = "torn last line" in reason
        if not args.skip_invalid and not torn:
            return 2
        if n == contents.damaged_line:
            return 2  # a damaged (checksum) line ends what can be trusted, skip or not
    if args.json:
        print(json.dumps(summary(state)))
    else:
        text = "\n".join(status_lines(state))
        print(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return 0
