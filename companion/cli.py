"""The `companion` command line: one sub-command per module under companion.commands.

Each command module exposes ``register(subparsers) -> None``; the parser it adds sets
``func`` to a callable taking the parsed arguments and returning an exit code.
Command modules import their heavy dependencies (OpenCV, gpiozero, luma) lazily inside
``func`` so that ``companion --help`` stays fast and works without hardware.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Sub-command modules, in the order `companion --help` lists them.
COMMAND_MODULES = [
    "companion.commands.sim",
    "companion.commands.replay",
    "companion.commands.serve",
    "companion.commands.check",
    "companion.commands.watch",
    "companion.commands.calibrate",
    "companion.commands.eval",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="vault-companion: the referee at the heist dice table",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
