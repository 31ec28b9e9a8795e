"""The Raspberry Pi install: pins that fit the apt camera stack (numpy < 2), extras by
board, a first boot that names no missing profile, install.sh's --help.

The numpy-ABI proof needs wheels, and tests never need the network: it runs when
COMPANION_PI_WHEELHOUSE names a folder holding them, and is skipped (saying how to
fill one) otherwise. systemd/emulated-pi-check.sh does the whole proof on arm64.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from companion.config import load_config

REPO = Path(__file__).resolve().parents[1]
INSTALL = REPO / "systemd" / "install.sh"
CONSTRAINTS = REPO / "systemd" / "pi-constraints.txt"
BOOKWORM_NUMPY = Version("1.24.2")  # python3-numpy in Debian 12 / Raspberry Pi OS Bookworm
BOOKWORM_SETUPTOOLS = Version("66.1.1")  # what `python3 -m venv` puts in a Bookworm venv


def constraints() -> dict[str, Requirement]:
    reqs = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            reqs[req.name.lower()] = req
    return reqs


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def project_requirement(name: str) -> Requirement:
    for dep in pyproject()["project"]["dependencies"]:
        req = Requirement(dep)
        if req.name.lower() == name:
            return req
    raise AssertionError(f"{name} is not a dependency")


# ---------------------------------------------------------------- the pins


def test_constraints_hold_numpy_below_2_and_keep_bookworms_numpy():
    numpy = constraints()["numpy"].specifier
    assert not numpy.contains("2.0.0") and numpy.contains("1.26.4")
    # The project's own floor lets pip keep the system numpy the camera stack is built on.
    assert project_requirement("numpy").specifier.contains(BOOKWORM_NUMPY)
    assert numpy.contains(BOOKWORM_NUMPY)


def test_constraints_pin_an_opencv_built_for_numpy_1():
    pinned = constraints()["opencv-python-headless"].specifier
    (spec,) = list(pinned)
    assert spec.operator == "=="
    # 4.12.0.88 and later require numpy >= 2 (their wheels' Requires-Dist); 4.11.0.86 is
    # the newest that accepts numpy >= 1.23.5 on Python 3.11.
    assert Version(spec.version) < Version("4.12")
    assert project_requirement("opencv-python-headless").specifier.contains(spec.version)


def test_constraints_pin_the_onnx_runtime_proved_on_arm64():
    # systemd/emulated-pi-check.sh proves this aarch64 wheel (with a Pi's /proc/cpuinfo:
    # on the host's it segfaults at import under qemu) against the frozen sample's stored
    # answers (tests/vision/test_learned_frozen.py); a new release is proved before the
    # pin moves
    (spec,) = list(constraints()["onnxruntime"].specifier)
    assert spec.operator == "=="
    assert project_requirement("onnxruntime").specifier.contains(spec.version)


def test_install_uses_the_constraints_and_checks_numpy():
    text = INSTALL.read_text()
    assert '-c "$REPO/systemd/pi-constraints.txt"' in text
    assert "numpy.__version__" in text


def test_the_build_needs_no_newer_setuptools_than_bookworms():
    for req in pyproject()["build-system"]["requires"]:
        r = Requirement(req)
        if r.name == "setuptools":
            assert r.specifier.contains(BOOKWORM_SETUPTOOLS)
    assert "--no-build-isolation" in INSTALL.read_text()


def test_install_builds_from_a_clean_copy_not_the_checkout():
    text = INSTALL.read_text()
    assert 'SRC="$(mktemp -d' in text and "--exclude=./build" in text
    assert '"$REPO[' not in text  # never pip install the checkout itself (build/ as root)


# ---------------------------------------------------------------- RPi.GPIO only where it works


def test_rpi_gpio_is_not_in_the_pi_extra():
    extras = pyproject()["project"]["optional-dependencies"]
    assert not any(Requirement(r).name == "RPi.GPIO" for r in extras["pi"])
    assert {Requirement(r).name for r in extras["pi"]} == {"lgpio", "spidev"}
    assert [Requirement(r).name for r in extras["rpigpio"]] == ["RPi.GPIO"]


@pytest.mark.parametrize(
    ("model", "extras"),
    [
        ("Raspberry Pi 5 Model B Rev 1.0", "[pi]"),
        ("Raspberry Pi Compute Module 5 Rev 1.0", "[pi]"),
        ("Raspberry Pi 500 Rev 1.0", "[pi]"),
        ("Raspberry Pi 4 Model B Rev 1.5", "[pi,rpigpio]"),
        ("Raspberry Pi 3 Model B Plus Rev 1.3", "[pi,rpigpio]"),
        ("Raspberry Pi Zero 2 W Rev 1.0", "[pi,rpigpio]"),
        (None, "[pi]"),
    ],
)
def test_install_picks_extras_by_board(tmp_path, model, extras):
    model_file = tmp_path / "model"
    if model is not None:
        model_file.write_bytes(model.encode() + b"\0")  # as the device tree has it
    env = {**os.environ, "VAULT_PI_MODEL_FILE": str(model_file)}
    out = subprocess.run(["bash", str(INSTALL), "--print-extras"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"{model or 'not a Raspberry Pi'}: {extras}"


# ---------------------------------------------------------------- --help, first boot


def test_help_prints_usage_not_script_lines():
    result = subprocess.run(["bash", str(INSTALL), "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    out = result.stdout
    assert out.startswith("Usage: sudo systemd/install.sh")
    for option in ("--no-apt", "--no-start", "--prefix DIR", "--help"):
        assert option in out
    assert not re.search(r"set -e|REPO=|\bfi\b|^#", out, re.M)


def test_the_example_config_names_no_missing_profile():
    cfg = load_config(REPO / "hardware" / "companion.example.toml")
    assert cfg.camera.source == "picamera2"
    assert cfg.camera.profile == ""  # pip dice until the table is calibrated


def test_install_does_not_start_the_service_while_spi_waits_for_a_reboot():
    text = INSTALL.read_text()
    assert "SPI_REBOOT=1" in text and "reboot now" in text
    start = text.index('systemctl enable "$UNIT"')
    tail = text[start:]
    assert tail.index("SPI_REBOOT -eq 1") < tail.index('systemctl restart "$UNIT"')


# ---------------------------------------------------------------- the numpy ABI, for real


def base_python() -> str | None:
    """The system Python 3.11 that install.sh's `python3 -m venv` would use."""
    for candidate in ("/usr/bin/python3", getattr(sys, "_base_executable", "")):
        if candidate and Path(candidate).exists():
            out = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                 capture_output=True, text=True)
            if out.stdout.strip() == "(3, 11)":
                return candidate
    return None


WHEELS = ("numpy-1.", "numpy-2.", "opencv_python_headless-4.11.0.86", "PyWavelets-1.4.1")
FILL = ("pip download --only-binary :all: --no-deps -d DIR 'numpy<2' 'numpy>=2,<2.3' "
        "opencv-python-headless==4.11.0.86 PyWavelets==1.4.1")


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    folder = os.environ.get("COMPANION_PI_WHEELHOUSE")
    if not folder or not Path(folder).is_dir():
        pytest.skip(f"set COMPANION_PI_WHEELHOUSE to a folder filled with: {FILL}")
    names = [p.name for p in Path(folder).iterdir()]
    missing = [w for w in WHEELS if not any(n.startswith(w) for n in names)]
    if missing:
        pytest.skip(f"{folder} lacks {', '.join(missing)} (fill it with: {FILL})")
    return Path(folder)


def make_pi_venv(where: Path, wheelhouse: Path, *reqs: str, constrained: bool) -> Path:
    python = base_python()
    if python is None:
        pytest.skip("no system Python 3.11 to make a venv the way install.sh does")
    subprocess.run([python, "-m", "venv", "--system-site-packages", str(where)], check=True)
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
           "--find-links", str(wheelhouse)]
    if constrained:
        pip += ["-c", str(CONSTRAINTS)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    subprocess.run([*pip, *reqs], check=True, env=env)
    return where / "bin" / "python"


# PyWavelets 1.4.1's wheel is compiled against numpy 1.x (like Bookworm's simplejpeg and
# picamera2 stack): the same kind of extension the Pi camera imports.
PROBE = ("import numpy, pywt, cv2; print(numpy.__version__, cv2.__version__, "
         "pywt.dwt([1.0, 2.0, 3.0, 4.0], 'haar')[0].round(3).tolist())")


def test_a_numpy_1_abi_extension_imports_in_the_constrained_venv(tmp_path, wheelhouse):
    py = make_pi_venv(tmp_path / "pi", wheelhouse, "numpy", "opencv-python-headless",
                      "PyWavelets==1.4.1", constrained=True)
    out = subprocess.run([str(py), "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    numpy_v, cv_v, _ = out.stdout.split(" ", 2)
    assert Version(numpy_v) < Version("2") and cv_v.startswith("4.11.")


def test_the_same_extension_breaks_under_numpy_2(tmp_path, wheelhouse):
    """The defect the constraints prevent: what an unpinned install put in the venv."""
    py = make_pi_venv(tmp_path / "np2", wheelhouse, "numpy>=2", "PyWavelets==1.4.1",
                      constrained=False)
    out = subprocess.run([str(py), "-c", "import pywt"], capture_output=True, text=True)
    assert out.returncode != 0
    assert re.search(r"numpy\.dtype size changed|compiled using NumPy 1\.x", out.stderr)
