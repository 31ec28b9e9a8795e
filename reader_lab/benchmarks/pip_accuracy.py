"""Pip-dice reader on the real photo sets: prints precision, recall, face accuracy,
end-to-end accuracy, unknowns, confidently wrong faces and ms per image for each set.

    .venv/bin/python -m reader_lab pip-accuracy

Same algorithm and parameters for every set (no per-set flags). The photos are read
from ../shared/datasets/dice-photos/ relative to the repo root. OpenCV is held to one
thread, as on one core of the Pi; ms/image is the reader alone (decoding excluded).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from companion.vision.evaluate import (  # noqa: E402
    evaluate_manifest,
    format_report,
    load_manifest,
)

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT.parent / "shared" / "datasets" / "dice-photos"
SETS = ("webcam-white-d6", "webcam-two-d6")


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="the classical pip reader on the real photo sets "
                            "(no options)").parse_args(argv)
    cv2.setNumThreads(1)
    missing = [s for s in SETS if not (DATASETS / s / "labels.csv").is_file()]
    if missing:
        print(f"photo sets not found under {DATASETS}: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = []
    for name in SETS:
        manifest = load_manifest(DATASETS / name / "labels.csv")
        result = evaluate_manifest(manifest, on_error=lambda m: print(m, file=sys.stderr))
        s = result.summary
        print(format_report(s, title=f"== {name} =="))
        print()
        rows.append((name, s))
    print(f"{'set':<18}{'prec':>8}{'recall':>8}{'face':>8}{'e2e':>8}{'unk':>6}{'wrong':>7}"
          f"{'ms/img':>8}")
    for name, s in rows:
        print(f"{name:<18}{s.precision:>8.2%}{s.recall:>8.2%}{s.face_accuracy:>8.2%}"
              f"{s.end_to_end:>8.2%}{s.unknown:>6}{s.wrong:>7}{s.ms_per_image_median:>8.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          "(a busy machine inflates ms/img)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
