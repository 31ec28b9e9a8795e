"""`companion serve`: run the companion as the table's appliance (systemd runs this).

Before anything is read or opened in the log folder, `serve` takes the folder's lock
(companion.log_lock) and holds it until it ends: a second `serve` on the same folder
says which process has it and exits with EX_TEMPFAIL (75), a failure systemd restarts
(`Restart=on-failure`), so a service that found a hand-started `serve` in its way
starts once that one stops. Not 78, which the unit never restarts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from companion.config import Config, ConfigError, check_log_dir, load_config

EX_CONFIG = 78  # sysexits EX_CONFIG: the unit does not restart on it
EX_TEMPFAIL = 75  # sysexits EX_TEMPFAIL: the log folder is in use; try again later


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="run the referee on the table's hardware")
    p.add_argument("--config", metavar="TOML", help="configuration file (default: simulated)")
    p.add_argument(
        "--input",
        metavar="PATH",
        help="read events (JSON Lines) from a file, a FIFO, or - for stdin",
    )
    p.add_argument(
        "--page",
        metavar="HOST:PORT",
        help="serve the table page on this address (overrides the config's [page])",
    )
    p.add_argument("--pin", metavar="PIN", help="the page's pairing PIN (default: a new one)")
    p.add_argument("--log-dir", metavar="DIR", help="game logs here (overrides log.dir)")
    p.set_defaults(func=run)


def load(path: str | None) -> Config:
    return load_config(path) if path else Config()


def with_overrides(config: Config, args: argparse.Namespace) -> Config:
    """--page, --pin and --log-dir on top of the config file; one-line ConfigError."""
    from dataclasses import replace
    from pathlib import Path

    from companion.config import LogConfig
    from companion.web.pairing import valid_pin
    from companion.web.server import parse_hostport

    page = config.page
    if getattr(args, "page", None):
        try:
            host, port = parse_hostport(args.page)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        page = replace(page, enabled=True, host=host, port=port)
    if getattr(args, "pin", None) is not None:
        if not valid_pin(args.pin):
            raise ConfigError(f"--pin must be 4 to 8 digits, got {args.pin!r}")
        page = replace(page, pin=args.pin)
    config = replace(config, page=page)
    if getattr(args, "log_dir", None):
        config = replace(config, log=LogConfig(dir=Path(args.log_dir)))
    return config


def run(args: argparse.Namespace) -> int:
    try:
        config = with_overrides(load(args.config), args)
        check_log_dir(config)
    except ConfigError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return EX_CONFIG
    from companion.log_lock import LogFolderInUse, lock_log_folder

    try:
        lock = lock_log_folder(config.log.dir)  # held until this process ends
    except LogFolderInUse as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return EX_TEMPFAIL
    except OSError as exc:  # no lock to be had here (a full disk, no flock): go on
        lock = None
        print(
            f"companion: warning: cannot lock the log folder {config.log.dir} "
            f"({exc.strerror or exc}); nothing stops a second companion using it",
            file=sys.stderr,
        )
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
    finally:
        if lock is not None:
            lock.release()
