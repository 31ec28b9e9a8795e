"""`companion eval MANIFEST.csv [--json] [--predictions FILE] [--reader learned|pips]
[--profile DIR]`: score the die reader on any labelled photo set (manifest format:
../shared/datasets/dice-photos/README.md).

The reader is the classical pip counter unless ``--reader learned`` asks for the learned
detector + classifier (companion/data/models; it does not beat the classical one on
every set yet: see README "The learned die reader").
``--profile DIR`` reads the faces by few-shot calibration
(``companion calibrate --from-manifest``): nearest face prototype, no pip counting.

No hints: the reader sees each photo alone, exactly as the camera would hand it over.
Each figure also gets a 95% interval, resampling the source photos
(``companion/vision/intervals.py``); ``--json`` adds them under ``intervals``.
A photo that cannot be read (missing, truncated, not an image) gets a one-line error on
stderr and is left out; the evaluation carries on and says how many were skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path

from companion.vision.evaluate import (
    ManifestError,
    PredictedDie,
    evaluate_manifest,
    format_report,
    load_manifest,
    source_intervals,
)
from companion.vision.readers import DEFAULT_PIP_READER, PIP_READERS, load_pip_reader, readers_help

PREDICTION_HEADER = ["image", "face", "x0", "y0", "x1", "y1", "confidence"]


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
    try:
        reader, what = _reader_for(args)
    except Exception as exc:  # a missing/broken model or profile: one line
        error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return 2
    held: list[str] = []  # per-photo errors, shown unless every photo failed
    result = evaluate_manifest(manifest, reader=reader, on_error=held.append)
    if result.unreadable and len(result.unreadable) == len(manifest):
        error(f"none of the {len(manifest)} images could be read (first: {held[0]})")
        return 1
    for msg in held:
        error(msg)
    if result.unreadable:
        error(f"{len(result.unreadable)} unreadable image(s) skipped")
    if args.predictions:
        try:
            write_predictions(Path(args.predictions), result.predictions)
        except OSError as exc:
            error(f"cannot write predictions {args.predictions}: {exc.strerror or exc}")
            return 2
    photos, spread = source_intervals(result)
    if args.json:
        figures = result.summary.as_json_dict()
        figures["intervals"] = {"source_photos": photos, "level": 0.95, **{
            f: [round(spread[f].low, 6), round(spread[f].high, 6)] for f in INTERVAL_FIGURES}}
        print(json.dumps(figures))
    else:
        print(format_report(result.summary, title=f"{what} on {args.manifest}"))
        print(f"\n95% intervals over the {photos} source photos (augmented copies of a photo "
              f"drawn together; 1,000 draws):\n" + ", ".join(
                  f"{name} {spread[f].low:.2%}-{spread[f].high:.2%}"
                  for f, name in INTERVAL_FIGURES.items()))
        if result.unreadable:
            print(f"unreadable images  {len(result.unreadable)} skipped (listed on stderr)")
    return 0


# the figures given an interval, and how the text report names them
INTERVAL_FIGURES = {"end_to_end": "end-to-end", "wrong_confident": "confidently wrong",
                    "precision": "precision", "recall": "recall"}


def _reader_for(args: argparse.Namespace) -> tuple[Callable, str]:
    """The reader the options ask for, and how the report names it."""
    if getattr(args, "profile", None):
        from companion.vision.fewshot import FewShotError, FewShotReader, load_fewshot

        protos = load_fewshot(args.profile)
        try:
            few = FewShotReader(protos, model_dir=args.model)
        except FewShotError as exc:  # it does not fit this model: name the profile
            raise FewShotError(f"{args.profile}: {exc}") from None
        return few, f"few-shot profile {args.profile}"
    name = getattr(args, "reader", DEFAULT_PIP_READER)
    what = "classical pip" if name == DEFAULT_PIP_READER else name
    return load_pip_reader(name, model_dir=args.model), f"pip dice ({what} reader)"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score the die reader on a labelled photo manifest",
        description="Score the die reader on a labelled photo manifest "
        "(CSV: image,face,x0,y0,x1,y1; image paths relative to the CSV's folder).",
    )
    parser.add_argument("manifest", help="labels CSV (image,face,x0,y0,x1,y1)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument(
        "--predictions",
        metavar="FILE",
        help="also write every predicted die as CSV image,face,x0,y0,x1,y1,confidence",
    )
    parser.add_argument("--reader", choices=PIP_READERS, default=DEFAULT_PIP_READER,
                        help=f"the pip dice's reader (default {DEFAULT_PIP_READER}): "
                             f"{readers_help()}")
    parser.add_argument("--model", metavar="DIR", default=None,
                        help="learned model folder (default: companion/data/models)")
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="read faces with a few-shot profile from `companion calibrate "
                             "--from-manifest` (nearest prototype, no pip counting)")
    parser.set_defaults(func=run)
