"""A detector's cost on one core: multiply-adds and ONNX Runtime time per frame.

    python -m reader_lab detector-speed                  # the big detector, untrained
    python -m reader_lab detector-speed --onnx DIR/detector.onnx

One thread (``intra_op_num_threads=1``), the median of ``--runs`` forwards after three
warm-ups, at each of ``--sizes`` (WxH, multiples of 32). The weights do not change the
time, so an untrained network measures an architecture before it is trained. The last
line is the load average: timings on a shared machine read high.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def _size(text: str) -> tuple[int, int]:
    w, _, h = text.partition("x")
    try:
        size = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is WxH, not {text!r}") from None
    if any(v % 32 or not 32 <= v <= 4096 for v in size):
        raise argparse.ArgumentTypeError(f"{text}: each side a multiple of 32 in 32-4096")
    return size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab detector-speed",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--onnx", type=Path, default=None, help="a detector.onnx (default: the "
                    "big detector, exported untrained)")
    ap.add_argument("--sizes", type=_size, nargs="+",
                    default=[(416, 416), (640, 640), (1280, 736)])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    import onnxruntime as ort

    macs = None
    with tempfile.TemporaryDirectory() as tmp:
        path = args.onnx
        if path is None:
            from reader_lab.big_detector import BigDetector, count_macs, parameters
            from reader_lab.train_detector import export

            model = BigDetector().eval()
            path = Path(tmp) / "detector.onnx"
            export(model, path)
            print(f"big detector: {parameters(model):,} parameters")
            macs = {s: count_macs(model, *s) for s in args.sizes}
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        for w, h in args.sizes:
            x = np.random.default_rng(0).random((1, 3, h, w), np.float32)
            for _ in range(3):
                session.run(None, {"image": x})
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                session.run(None, {"image": x})
                times.append(time.perf_counter() - t0)
            gmac = f", {macs[(w, h)] / 1e9:.2f} GMAC" if macs else ""
            print(f"{w}x{h}: {np.median(times) * 1000:.1f} ms median on one thread{gmac}")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0
