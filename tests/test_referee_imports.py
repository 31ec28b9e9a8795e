"""The referee's own process stays free of OpenCV and numpy when the camera runs in a
process of its own: the command line builds its parser without them (as
``companion.cli`` promises), and the camera's child reports to the referee in plain
Python objects, so even its "camera gone" does not load them, nor its
readings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import asyncio, sys
from companion.cli import build_parser
build_parser()
from companion.camera import CameraInput
from companion.loop import Referee

async def main():
    ref = Referee()
    profile = sys.argv[1] if len(sys.argv) > 1 else ""
    cam = CameraInput(ref, "/nonexistent/no-such-camera.mp4", profile_dir=profile,
                      reader="pips" if profile else "learned")
    cam.start(asyncio.get_running_loop())
    for _ in range(3000):
        if cam.gone:
            break
        await asyncio.sleep(0.01)
    await cam.aclose()
    return cam.gone, ref.flash

gone, flash = asyncio.run(main())
print(gone, flash, " ".join(m for m in ("cv2", "numpy", "onnxruntime") if m in sys.modules))
"""


@pytest.mark.parametrize("profile", ["", "calibration/synthetic"])
def test_the_referee_process_never_loads_opencv_for_a_camera_process(profile):
    """Without a profile (the learned reader) and with the shipped one (symbol dice: the
    referee reads only its head, the camera's process all of it)."""
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", SCRIPT, *([profile] if profile else [])],
                         cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "camera_gone"], (out.stdout, out.stderr)


def test_the_parser_alone_loads_neither():
    out = subprocess.run([sys.executable, "-c", "import sys; from companion.cli import "
                          "build_parser; build_parser(); print('cv2' in sys.modules, "
                          "'numpy' in sys.modules)"], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


READINGS = """
import asyncio, sys
from companion.camera import CameraInput
from companion.loop import Referee

async def main():
    ref = Referee()
    cam = CameraInput(ref, sys.argv[1], profile_dir="", reader=sys.argv[2])
    cam.start(asyncio.get_running_loop())
    for _ in range(6000):
        if cam.readings or cam.gone:
            break
        await asyncio.sleep(0.01)
    await cam.aclose()
    return cam.readings, cam.gone

readings, gone = asyncio.run(main())
print(readings > 0, gone, " ".join(m for m in ("cv2", "numpy", "onnxruntime") if m in sys.modules))
"""


@pytest.mark.parametrize("reader", ["pips", "learned"])
def test_readings_from_the_camera_process_do_not_load_numpy_here(tmp_path, reader):
    """The settled readings cross the pipe pickled: a numpy number in one (the pip
    reader's confidence, the learned reader's centre, once) made the referee
    load numpy, 7 MiB of its memory, at the first reading."""
    import cv2

    from companion.vision.synthetic import pip_dice_specs, render_scene

    folder = tmp_path / "shots"
    folder.mkdir()
    image, _ = render_scene(1, pip_dice_specs(3), width=1280, height=720)
    for i in range(6):
        cv2.imwrite(str(folder / f"{i:02d}.png"), image)  # a still table
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", READINGS, str(folder), reader], cwd=repo,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"], (out.stdout, out.stderr)
