"""`companion calibrate`: set up a table's camera and teach it the dice.

    companion calibrate --print-mat-only --out calibration/mytable   # just the mat PNG/PDF
    companion calibrate --source 0 --out calibration/mytable         # guided, webcam 0
    companion calibrate --source synthetic --yes --out calibration/synthetic
    companion calibrate --check-only --source 0 --out calibration/mytable  # check again

Steps: write the A3 mat (PNG, and PDF when Pillow can), check the camera sees all
four markers, sample the mat's and each set's colour, teach every face of every symbol
die (show it, confirm), read back a frame with every die (preview.jpg), then the
profile's own check: --check-rounds rolls the box picks, laid on the mat and read back
with the new profile, per-face accuracy and whether [camera] claims = "challenge" may
be turned on. profile.toml keeps the check as its [check] table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def utc_now() -> datetime:
    return datetime.now(UTC)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="print the mat, check the camera and teach it the dice",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--source", default="0",
                   help="frame source: 'synthetic[:SEED]', a webcam index, 'picamera', a "
                        "video file or a folder of images (default: 0)")
    p.add_argument("--out", default="calibration/table",
                   help="profile directory to write (default: calibration/table)")
    p.add_argument("--name", default=None, help="profile name (default: the --out folder name)")
    p.add_argument("--game", default="vault_assault",
                   help="dice data file companion/data/dice_GAME.toml (default: vault_assault)")
    p.add_argument("--samples", type=int, default=3,
                   help="views of each face to average (default: 3)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="accept every face without asking (non-interactive)")
    p.add_argument("--dpi", type=float, default=150.0, help="mat print resolution (default: 150)")
    p.add_argument("--no-mat", action="store_true", help="do not write the printable mat")
    p.add_argument("--print-mat-only", action="store_true",
                   help="write the printable mat and stop")
    p.add_argument("--from-manifest", metavar="LABELS.csv", default=None,
                   help="few-shot: learn each face from labelled photos (image,face,x0,y0,x1,y1) "
                        "instead of the camera; writes prototypes.json under --out")
    p.add_argument("--shots", type=int, default=10,
                   help="with --from-manifest: labelled dice per face to learn from (default: 10)")
    p.add_argument("--seed", type=int, default=0,
                   help="with --from-manifest: which dice to draw; else which faces the "
                        "check asks for (default: 0)")
    p.add_argument("--check-rounds", type=int, default=3, metavar="N",
                   help="the profile's own check: rolls to read back (default: 3; 0 skips "
                        "the check)")
    p.add_argument("--check-only", action="store_true",
                   help="check the profile in --out again and rewrite only its [check] table")
    p.set_defaults(func=run)


def run_from_manifest(args: argparse.Namespace) -> int:
    """Few-shot calibration from a labelled manifest: face prototypes, no camera."""
    from companion.vision.evaluate import ManifestError, load_manifest
    from companion.vision.fewshot import FewShotError, build_prototypes, save_fewshot
    from companion.vision.learned import ModelMissing

    try:
        manifest = load_manifest(args.from_manifest)
        data = build_prototypes(manifest, args.shots, seed=args.seed)
        path = save_fewshot(data, args.out, args.name)
    except (ManifestError, FewShotError, ModelMissing, OSError) as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 1 if not isinstance(exc, FewShotError) else 2
    counts = ", ".join(f"{f}:{len(v)}" for f, v in sorted(data["shot_images"].items()))
    print(f"few-shot profile: {path} ({len(data['prototypes'])} faces; shots {counts}; "
          f"{data['embedding']} embedding; dice read from detector score "
          f"{data['det_threshold']:g}{_faint(data)})")
    return 0


def _faint(data: dict) -> str:
    """The few-shot faint-box rule as ``calibrate`` prints it ("" when there is none)."""
    if data.get("det_low_threshold") is None:
        return ""
    score = "similar" if data.get("embedding") != "members" else "sure (the networks' mean)"
    return (f", or from {data['det_low_threshold']:g} when the nearest face is at least "
            f"{data['low_similarity']:g} {score}")


def _stamp(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _open_table(args: argparse.Namespace, data: Any) -> tuple[Any, Any] | int:
    """(table, source to close or None) for --source, or the exit code after one line."""
    from companion.vision.calibrate import LiveTable, SyntheticTable

    if args.source.startswith("synthetic"):
        _, _, seed = args.source.partition(":")
        try:
            return SyntheticTable(int(seed) if seed else 0, data), None
        except ValueError:
            print(f"companion calibrate: {args.source}: the seed after 'synthetic:' must be "
                  "an integer", file=sys.stderr)
            return 2
    from companion.vision.frames import open_source

    try:
        source = open_source(args.source)
        source.open()
    except Exception as exc:  # any failure to open is reported the same way
        print(f"companion calibrate: cannot open {args.source}: {exc}", file=sys.stderr)
        return 1
    # --yes: nobody at the keyboard; say each step and go on (never wait for Enter).
    return LiveTable(source, ask=_no_wait if args.yes else input), source


def _close(source: Any) -> None:
    close = getattr(source, "close", None) if source is not None else None
    if close:
        close()


def run_check_only(args: argparse.Namespace, clock: Callable[[], datetime]) -> int:
    """Read the profile in --out, run its check again, rewrite only its [check] table."""
    from companion.vision.calibrate import CalibrationError
    from companion.vision.calibrate_check import run_check
    from companion.vision.profile import ProfileError, load_profile, save_check

    if args.check_rounds < 1:
        print("companion calibrate: --check-only needs --check-rounds of at least 1",
              file=sys.stderr)
        return 2
    try:
        profile = load_profile(args.out)
    except ProfileError as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 1
    opened = _open_table(args, profile.dice)
    if isinstance(opened, int):
        return opened
    table, source = opened
    try:
        checked = run_check(table, profile, rounds=args.check_rounds, seed=args.seed,
                            when=_stamp(clock))
        path = save_check(args.out, checked.check)
    except (CalibrationError, ProfileError, OSError) as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, EOFError):
        print("\ncompanion calibrate: stopped; nothing written", file=sys.stderr)
        return 130
    finally:
        _close(source)
    print(f"profile: {path} ([check] rewritten)")
    print("\n".join(checked.lines))
    return 0


def run(args: argparse.Namespace, clock: Callable[[], datetime] = utc_now) -> int:
    from companion.vision.calibrate import CalibrationError, calibrate, print_mat
    from companion.vision.calibrate_check import run_check
    from companion.vision.dice_data import DiceDataError, data_path, load_dice_data
    from companion.vision.profile import ProfileError, save_profile

    if args.from_manifest:
        return run_from_manifest(args)
    if args.check_rounds < 0:
        print("companion calibrate: --check-rounds must be 0 or more", file=sys.stderr)
        return 2
    if args.check_only:
        return run_check_only(args, clock)
    out = Path(args.out)
    name = args.name or out.name
    if args.samples < 1:
        print("companion calibrate: --samples must be at least 1", file=sys.stderr)
        return 2
    if not args.no_mat or args.print_mat_only:
        try:
            paths = print_mat(out, dpi=args.dpi)
        except (OSError, CalibrationError) as exc:
            print(f"companion calibrate: cannot write the mat: {exc}", file=sys.stderr)
            return 1
        print("mat: " + ", ".join(str(p) for p in paths)
              + " (print at 100% on A3, landscape)")
        if args.print_mat_only:
            return 0
    try:
        data = load_dice_data(data_path(args.game))
    except DiceDataError as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 1

    opened = _open_table(args, data)
    if isinstance(opened, int):
        return opened
    table, source = opened

    def confirm(question: str) -> bool:
        if args.yes:
            return True
        answer = input(f"{question} [Y/n] ").strip().lower()
        return answer in ("", "y", "yes")

    checked, unchecked = None, ""
    try:
        result = calibrate(table, data, name, samples=args.samples, confirm=confirm,
                           game=args.game)
        if args.check_rounds:
            try:
                checked = run_check(table, result.profile, rounds=args.check_rounds,
                                    seed=args.seed, when=_stamp(clock))
                result.profile.check = checked.check
            except CalibrationError as exc:  # the faces taught are kept all the same
                unchecked = str(exc)
        toml_path = save_profile(result.profile, out)
    except (CalibrationError, ProfileError, OSError) as exc:
        print(f"companion calibrate: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, EOFError):
        print("\ncompanion calibrate: stopped; nothing written", file=sys.stderr)
        return 130
    finally:
        _close(source)

    import cv2

    preview_path = out / "preview.jpg"  # JPEG: a noisy camera frame is ~0.7 MB as PNG
    cv2.imwrite(str(preview_path), result.preview, [cv2.IMWRITE_JPEG_QUALITY, 85])
    print(f"profile: {toml_path} ({len(result.profile.templates)} faces)")
    print(f"preview: {preview_path}")
    if checked is not None:
        print("\n".join(checked.lines))
    elif unchecked:
        print(f"companion calibrate: {unchecked}; the profile is written without its check "
              "(run calibrate --check-only)", file=sys.stderr)
        return 1
    else:
        print("check: skipped (--check-rounds 0); claims stay \"advise\"")
    return 0


def _no_wait(prompt: str) -> str:
    print(prompt.replace(" Press Enter when ready.", "").rstrip(), flush=True)
    return ""
