"""The lab's command line: ``python -m reader_lab COMMAND [ARGS]``, run from the
repository root.

``train`` trains the learned die reader (``reader_lab.train_cli``; the options the
companion's ``train`` command had). Every other command is a tool or a benchmark of the
lab, a module with ``main(argv)`` whose own options follow its name (``python -m
reader_lab reader-accuracy --help``); each also runs as ``python -m
reader_lab.benchmarks.NAME`` or ``python -m reader_lab.tools.NAME``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command -> (module with main(argv), one line for the listing), in the order listed
SCRIPTS: dict[str, tuple[str, str]] = {
    "half-weights": ("reader_lab.tools.half_weights",
                     "store ONNX networks' weights at half precision, in place"),
    "merge-heads": ("reader_lab.tools.merge_heads",
                    "merge a detector's two output convolutions into one, in place"),
    "int8-detector": ("reader_lab.tools.int8_detector",
                      "copy a model folder with its detector stored as int8"),
    "soup-networks": ("reader_lab.tools.soup_networks",
                      "average networks fine-tuned from one start"),
    "reader-accuracy": ("reader_lab.benchmarks.reader_accuracy",
                        "the reader's figures on the held-aside photo sets"),
    "compare-readers": ("reader_lab.benchmarks.compare_readers",
                        "two models on the same photos, with paired intervals"),
    "tuning-crossval": ("reader_lab.benchmarks.tuning_crossval",
                        "tuning procedures judged on photos they did not choose on"),
    "network-alone": ("reader_lab.benchmarks.network_alone",
                      "each classifier network alone on the labelled boxes"),
    "still-stream": ("reader_lab.benchmarks.still_stream",
                     "held-aside photos as a still camera's stream"),
    "reader-pictures": ("reader_lab.benchmarks.reader_pictures",
                        "draw what the reader makes of held-aside photos"),
    "render-training-dice": ("reader_lab.benchmarks.render_training_dice",
                             "draw the rendered dice the classifiers train on"),
    "pip-accuracy": ("reader_lab.benchmarks.pip_accuracy",
                     "the classical pip reader on the real photo sets"),
    "label-audit": ("reader_lab.benchmarks.label_audit",
                    "a blind audit of the photo sets' labels"),
    "box-audit": ("reader_lab.benchmarks.box_audit",
                  "a blind audit of the boxes where no die is labelled"),
    "photo-pack": ("reader_lab.photo_pack",
                   "the train and validation photos packed small for the accelerator"),
    "pack-boxes": ("reader_lab.pack_boxes",
                   "a detector's boxes on a photo pack, for train-faces --boxes"),
    "train-detector": ("reader_lab.train_detector",
                       "train the big detector on a photo pack (on the accelerator)"),
    "train-faces": ("reader_lab.train_faces",
                    "train a face classifier on a photo pack (on the accelerator)"),
    "device-call": ("reader_lab.device_call",
                    "check a device call (what travels, what comes back) before making it"),
    "device-candidate": ("reader_lab.device_candidate",
                         "judge what a device call brought back; make it a candidate folder"),
    "glyph-dice": ("reader_lab.glyph_dice",
                   "draw dice with made-up symbols (the few-shot embedding's classes)"),
    "detector-speed": ("reader_lab.benchmarks.detector_speed",
                       "a detector's multiply-adds and time per frame on one core"),
    "rated-boxes-kept": ("reader_lab.benchmarks.rated_boxes_kept",
                         "how many rated 'not a die' boxes each model still keeps"),
}


def build_parser() -> argparse.ArgumentParser:
    from reader_lab import train_cli

    parser = argparse.ArgumentParser(
        prog="python -m reader_lab",
        description="the learned die reader's lab: training, tuning, audits, tools and "
                    "benchmarks (not part of the companion)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    train_cli.register(subparsers)
    for name, (_, line) in SCRIPTS.items():
        # listed here; run by ``main`` with the rest of the line as their own options
        subparsers.add_parser(name, help=line, add_help=False)
    return parser


def run_script(name: str, argv: list[str]) -> int:
    """Run lab command ``name`` (a tool or benchmark) with its options ``argv``; its
    usage lines name it as this command line does."""
    module = importlib.import_module(SCRIPTS[name][0])
    was = sys.argv[0]
    sys.argv[0] = f"python -m reader_lab {name}"  # argparse's prog, in usage and errors
    try:
        return int(module.main(argv) or 0)
    finally:
        sys.argv[0] = was


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SCRIPTS:
        try:
            return run_script(argv[0], argv[1:])
        except KeyboardInterrupt:
            return 130
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
