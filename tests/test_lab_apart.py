"""The reader's lab (reader_lab/: training, tuning, the photo sets, audits, quantisation
and weight tools) stays out of the companion: nothing the companion runs imports it, and
the wheel that installs the companion holds none of it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# the lab's modules, by their last name (they lived in companion/vision/ or were the
# tuning halves of learned.py and fewshot.py, or the train command)
LAB_MODULES = frozenset({
    "train_reader", "render_dice", "dice_photos", "dyed_dice", "half_size", "hue_turned",
    "mine_cache", "rated_boxes", "quantize", "weight_soup", "tune_reader", "tune_fewshot",
    "train_spec", "train_cli"})

RUNTIME = """
import sys

import numpy as np

from companion.cli import build_parser

parser = build_parser()
import companion.appliance
import companion.commands.calibrate
import companion.commands.eval
import companion.commands.watch
import companion.vision.calibrate
import companion.vision.evaluate
import companion.vision.fewshot
import companion.vision.intervals
import companion.vision.learned
import companion.vision.pipeline
import companion.vision.pips
import companion.vision.process
import companion.vision.symbols
import companion.vision.worker
from companion.vision.learned import MODEL_DIR, LearnedReader

if (MODEL_DIR / "detector.onnx").is_file():  # the learned reader reads, at run time
    LearnedReader()(np.zeros((480, 640, 3), np.uint8))
commands = next(a.choices for a in parser._actions if a.choices and a.dest == "command")
print(" ".join(sorted(commands)))
print(" ".join(sorted(sys.modules)))
"""


def test_the_runtime_imports_no_lab_module():
    """A fresh interpreter that builds the command line, imports the appliance, the
    camera process, the readers (learned, few-shot, pips, symbols) and the maker's tools
    (calibrate, eval), and reads a frame with the learned reader, has loaded no module
    of the lab, nor torch or onnx; and ``companion`` has no ``train`` command."""
    out = subprocess.run([sys.executable, "-c", RUNTIME], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    commands, modules = (line.split() for line in out.stdout.splitlines()[-2:])
    assert "train" not in commands and {"eval", "calibrate", "watch"} <= set(commands)
    lab = [m for m in modules if m == "reader_lab" or m.startswith("reader_lab.")
           or m.rsplit(".", 1)[-1] in LAB_MODULES]
    assert lab == []
    assert not {"torch", "onnx"} & set(modules)


def test_the_wheel_holds_the_runtime_and_no_lab_file(tmp_path):
    """``pip wheel`` of the project (built from a copy, lab included, so the repository
    gets no build folder): the runtime's reader and model are there; no file of the lab,
    no training, tuning, data-set or audit module, no label fixes, and the model card is
    the short page (the rounds' history is the lab's, reader_lab/HISTORY.md)."""
    src = tmp_path / "src"
    src.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("companion", "reader_lab"):
        shutil.copytree(REPO / name, src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q",
                           "-w", str(tmp_path / "out")], cwd=src, capture_output=True,
                          text=True, timeout=300)
    if done.returncode and any(s in done.stdout + done.stderr for s in (
            "No matching distribution", "Could not find a version", "NewConnectionError")):
        pytest.skip("pip cannot fetch the build backend (setuptools, wheel) here")
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "out").glob("vault_companion-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for runtime in ("companion/vision/learned.py", "companion/vision/fewshot.py",
                    "companion/vision/evaluate.py", "companion/commands/eval.py",
                    "companion/data/models/detector.onnx", "companion/data/models/reader.json",
                    "companion/data/models/MODEL_CARD.md"):
        assert runtime in names
    assert [n for n in names if n.startswith("reader_lab/")] == []
    assert [n for n in names if n.endswith(".py") and Path(n).stem in LAB_MODULES] == []
    assert "companion/commands/train.py" not in names
    assert [n for n in names if n.endswith(".csv")] == []  # the label fixes are the lab's
    card = zipfile.ZipFile(wheel).getinfo("companion/data/models/MODEL_CARD.md")
    assert card.file_size < 20_000
