"""`companion serve`: run the companion as the table's appliance (systemd runs this)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from companion.config import Config, ConfigError, load_config

EX_CONFIG = 78  # sysexits EX_CONFIG: the unit does not restart on it


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="run the referee on the table's hardware")
    p.add_argument("--config", metavar="TOML", help="configuration file (default: simulated)")
    p.add_argument(
        "--input",
        metavar="PATH",
        help="read events (JSON Lines) from a file, a FIFO, or - for stdin",
    )
    p.set_defaults(func=run)


def load(path: str | None) -> Config:
    return load_config(path) if path else Config()


def run(args: argparse.Namespace) -> int:
    try:
        config = load(args.config)
    except ConfigError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return EX_CONFIG
    from companion.vision.threads import limit_native_threads

    limit_native_threads(config.camera.threads)  # before numpy loads
    from companion.appliance import serve

    try:
        return asyncio.run(serve(config, args.input))
    except Exception as exc:  # a device that fails to open: one line, non-zero, restart
        print(
            f"companion: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            file=sys.stderr,
        )
        return 1
