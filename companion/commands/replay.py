"""`companion replay FILE [--json] [--skip-invalid]`: replay a game log or script."""

from __future__ import annotations

import argparse
import json
import sys

from companion.gamelog import read_log
from companion.games import registry
from companion.loop import judged_lines


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
    game = registry.default()
    state = game.new_state()
    # The same walk as resume_state (companion.loop.judged_lines), with replay's policy:
    # stop at the first problem, or report each and go on with --skip-invalid.
    for judged in judged_lines(contents, state, game):
        game, state = judged.game, judged.state
        problem = judged.problem
        if problem is None:
            continue
        print(problem, file=sys.stderr)
        if not args.skip_invalid and problem.code != "torn":
            return 2
        if problem.code == "damaged":
            return 2  # a damaged (checksum) line ends what can be trusted, skip or not
    if args.json:
        print(json.dumps(game.summary(state)))
    else:
        text = "\n".join(game.status_lines(state))
        print(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return 0
