"""A detector's cost on one core: multiply-adds and ONNX Runtime time per frame.

    python -m reader_lab detector-speed                  # the big detector, untrained
    python -m reader_lab detector-speed --onnx DIR/detector.onnx
    python -m reader_lab detector-speed --no-detector --new-faces --classifiers DIR/*.onnx

One thread (``intra_op_num_threads=1``), the median of ``--runs`` forwards after three
warm-ups, at each of ``--sizes`` (WxH, multiples of 32). The weights do not change the
time, so an untrained network measures an architecture before it is trained. The last
line is the load average: timings on a shared machine read high.

``--classifiers FILE ...`` and ``--new-faces`` (``train-faces``' network, untrained, at its
defaults) time face networks too: ``--dice`` crops a frame (16), each network on crops of
its own input side, and the networks named by ``--classifiers`` together.
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
    ap.add_argument("--no-detector", action="store_true", help="time no detector")
    ap.add_argument("--classifiers", type=Path, nargs="+", default=[],
                    help="classifier ONNX files to time on --dice crops")
    ap.add_argument("--new-faces", action="store_true",
                    help="time train-faces' network too (untrained, its defaults)")
    ap.add_argument("--dice", type=int, default=16, help="crops a frame for the classifiers")
    args = ap.parse_args(argv)
    if not 1 <= args.dice <= 256:
        ap.error("--dice must be 1-256")
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1

    def median_ms(session, name: str, x: np.ndarray) -> float:
        for _ in range(3):
            session.run(None, {name: x})
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            session.run(None, {name: x})
            times.append(time.perf_counter() - t0)
        return float(np.median(times)) * 1000

    macs = None
    with tempfile.TemporaryDirectory() as tmp:
        files = list(args.classifiers)
        if args.new_faces:
            files.append(_new_faces(Path(tmp)))
        total = 0.0
        for file in files:
            session = ort.InferenceSession(str(file), opts, providers=["CPUExecutionProvider"])
            side = session.get_inputs()[0].shape[-1]
            if not isinstance(side, int):
                side = 48
            x = np.random.default_rng(0).random((args.dice, 3, side, side), np.float32)
            ms = median_ms(session, "crops", x)
            total += ms if file in args.classifiers else 0.0
            print(f"{file.name}: {ms:.1f} ms for {args.dice} crops of {side} px on one thread")
        if len(args.classifiers) > 1:
            print(f"the {len(args.classifiers)} named together: {total:.1f} ms")
        path = args.onnx
        if args.no_detector:
            print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
            return 0
        if path is None:
            from reader_lab.big_detector import BigDetector, count_macs, parameters
            from reader_lab.train_detector import export

            model = BigDetector().eval()
            path = Path(tmp) / "detector.onnx"
            export(model, path)
            print(f"big detector: {parameters(model):,} parameters")
            macs = {s: count_macs(model, *s) for s in args.sizes}
        session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        for w, h in args.sizes:
            x = np.random.default_rng(0).random((1, 3, h, w), np.float32)
            ms = median_ms(session, "image", x)
            gmac = f", {macs[(w, h)] / 1e9:.2f} GMAC" if macs else ""
            print(f"{w}x{h}: {ms:.1f} ms median on one thread{gmac}")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


def _new_faces(folder: Path) -> Path:
    """train-faces' network at its defaults, untrained, as the file it exports."""
    import torch

    from reader_lab.train_faces import DEFAULT_CROP, DEFAULT_WIDTH
    from reader_lab.train_reader import Classifier, _export_cls

    torch.manual_seed(0)
    _export_cls(Classifier(DEFAULT_WIDTH).eval(), folder, "classifier_upright_dev",
                crop_size=DEFAULT_CROP)
    return folder / "classifier_upright_dev.onnx"
