"""A model folder's copy with its detector stored as 8-bit integers:

    python -m reader_lab int8-detector MODEL_DIR OUT_DIR [--size PX] [--photos N] [--seed S]

Calibrated on N training photos (default 96; the shared photo sets); ``--size`` also sets
the copy's detector input side (reader.json ``det_size``). Needs the [train] extra (onnx).
The copy's thresholds are the original's: tune it (``python -m reader_lab train --out
OUT_DIR --part tune``) or judge it held out (``python -m reader_lab tuning-crossval
--against OUT_DIR``).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab.quantize import (  # noqa: E402
    CALIBRATION_PHOTOS,
    QuantizeError,
    check_folders,
    int8_folder,
    train_blobs,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--size", type=int, default=None, help="detector input side (px)")
    ap.add_argument("--photos", type=int, default=CALIBRATION_PHOTOS)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.photos < 1:
        print(f"int8_detector: --photos must be at least 1, not {args.photos}", file=sys.stderr)
        return 2
    try:
        import onnx  # noqa: F401  (onnxruntime's quantization needs it)
    except ImportError:
        print("int8_detector: needs the onnx package: pip install -e '.[train]'",
              file=sys.stderr)
        return 2
    from reader_lab import dice_photos

    if not dice_photos.available():
        print(f"int8_detector: photo sets not found under {dice_photos.photo_root()}",
              file=sys.stderr)
        return 2
    try:
        check_folders(args.model, args.out, args.size)  # before loading any photo
        got = int8_folder(args.model, args.out, train_blobs(args.photos, args.seed),
                          size=args.size, seed=args.seed)
    except (QuantizeError, OSError) as exc:
        print(f"int8_detector: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: int8 detector, input {got['det_size']} px, calibrated on "
          f"{got['calibration_photos']} photos (seed {got['seed']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
