"""`companion eval MANIFEST.csv [--json] [--predictions FILE]`: score the pip-dice reader on
any labelled photo set (manifest format: ../shared/datasets/dice-photos/README.md).

No hints: the reader sees each photo alone, exactly as the camera would hand it over.
A photo that cannot be read (missing, truncated, not an image) gets a one-line error on
stderr and is left out; the evaluation carries on and says how many were skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from companion.vision.evaluate import (
    ManifestError,
    ManifestImage,
    PredictedDie,
    Summary,
    format_report,
    load_manifest,
    score_image,
    summarise,
)

PREDICTION_HEADER = ["image", "face", "x0", "y0", "x1", "y1", "confidence"]


@dataclass
class EvalResult:
    summary: Summary
    unreadable: list[str]
    predictions: list[tuple[str, PredictedDie]]


def evaluate_manifest(
    manifest: list[ManifestImage],
    *,
    reader: Callable | None = None,
    on_error: Callable[[str], None] | None = None,
) -> EvalResult:
    """Run ``reader`` (default: read_pip_dice) on every photo of a loaded manifest."""
    from companion.vision.frames import FrameUnreadable, load_image

    if reader is None:
        from companion.vision.pips import read_pip_dice

        reader = read_pip_dice
    scores, times, unreadable, faces = [], [], [], []
    predictions: list[tuple[str, PredictedDie]] = []
    for item in manifest:
        try:
            image = load_image(item.path)
        except FrameUnreadable as exc:
            unreadable.append(item.key)
            if on_error is not None:
                on_error(str(exc))
            continue
        start = time.perf_counter()
        readings = reader(image)
        times.append((time.perf_counter() - start) * 1000.0)
        preds = [
            PredictedDie(face=r.face, box=tuple(r.box), centre=tuple(r.centre),
                         confidence=r.confidence)
            for r in readings
        ]
        predictions.extend((item.key, p) for p in preds)
        scores.append(score_image(preds, item.dice))
        faces.extend(d.face for d in item.dice)
    return EvalResult(summarise(scores, times, faces), unreadable, predictions)


def write_predictions(path: Path, predictions: list[tuple[str, PredictedDie]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(PREDICTION_HEADER)
        for image, p in predictions:
            writer.writerow([image, p.face, *(int(v) for v in p.box), f"{p.confidence:.4f}"])


def run(args: argparse.Namespace) -> int:
    def error(msg: str) -> None:
        print(f"companion eval: {msg}", file=sys.stderr)

    try:
        manifest = load_manifest(args.manifest)
    except ManifestError as exc:
        error(str(exc))
        return 2
    result = evaluate_manifest(manifest, on_error=error)
    if result.unreadable:
        error(f"{len(result.unreadable)} unreadable image(s) skipped")
    if args.predictions:
        try:
            write_predictions(Path(args.predictions), result.predictions)
        except OSError as exc:
            error(f"cannot write predictions {args.predictions}: {exc.strerror or exc}")
            return 2
    if args.json:
        print(json.dumps(result.summary.as_json_dict()))
    else:
        print(format_report(result.summary, title=f"pip dice on {args.manifest}"))
        if result.unreadable:
            print(f"unreadable images  {len(result.unreadable)} skipped (listed on stderr)")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score the pip-dice reader on a labelled photo manifest",
        description="Score the pip-dice reader on a labelled photo manifest "
        "(CSV: image,face,x0,y0,x1,y1; image paths relative to the CSV's folder).",
    )
    parser.add_argument("manifest", help="labels CSV (image,face,x0,y0,x1,y1)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument(
        "--predictions",
        metavar="FILE",
        help="also write every predicted die as CSV image,face,x0,y0,x1,y1,confidence",
    )
    parser.set_defaults(func=run)
