"""The SD card image recipe (image/: a pi-gen stage), the wiring picture
(hardware/draw_wiring.py) and what systemd/emulated-pi-check.sh declares. No root, no
qemu, no network: the recipe's own scripts run for real in the emulated check."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
IMAGE = REPO / "image"
STAGE = IMAGE / "stage-vault"
SETUP = IMAGE / "vault-setup.sh"
CHECK = REPO / "systemd" / "emulated-pi-check.sh"


def run(*cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120,
                          **kw)


def config_vars() -> dict[str, str]:
    out = {}
    for line in (IMAGE / "config").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = value.strip('"')
    return out


# ---------------------------------------------------------------- the recipe


@pytest.mark.parametrize("script", [
    "build.sh", "vault-setup.sh", "stage-vault/prerun.sh", "stage-vault/00-vault/00-run.sh",
    "stage-vault/00-vault/01-run-chroot.sh"])
def test_the_recipes_scripts_parse_and_pi_gen_can_run_them(script):
    path = IMAGE / script
    assert run("bash", "-n", path).returncode == 0
    assert os.access(path, os.X_OK), f"{script} must be executable (pi-gen runs -x ones)"


def test_the_stage_is_a_pi_gen_stage_after_stage2():
    assert "copy_previous" in (STAGE / "prerun.sh").read_text()
    assert (STAGE / "EXPORT_IMAGE").is_file()
    packages = (STAGE / "00-vault" / "00-packages").read_text().split()
    assert {"avahi-daemon", "libnss-mdns"} <= set(packages)
    # the chroot step is the same setup the emulated check runs, which runs install.sh
    assert "image/vault-setup.sh" in (STAGE / "00-vault" / "01-run-chroot.sh").read_text()
    assert '"$SRC/systemd/install.sh"' in SETUP.read_text()
    build = (IMAGE / "build.sh").read_text()
    assert 'STAGE_LIST="stage0 stage1 stage2 $HERE/stage-vault"' in build
    assert "stage2/SKIP_IMAGES" in build


def test_user_password_and_wifi_are_left_to_raspberry_pi_imager():
    conf = config_vars()
    assert conf["TARGET_HOSTNAME"] == "vault" and conf["RELEASE"] == "bookworm"
    for key in ("FIRST_USER_PASS", "WPA_ESSID", "WPA_PASSWORD", "PUBKEY_SSH_FIRST_USER"):
        assert key not in conf, key
    assert conf.get("ENABLE_SSH") == "0"  # Imager's "Enable SSH" turns it on


def test_the_boot_config_gets_spi_sound_and_the_camera_once(tmp_path):
    cfg = tmp_path / "config.txt"
    cfg.write_text("#dtparam=spi=on\ndtparam=audio=off\ncamera_auto_detect=0\n\n[cm4]\n"
                   "otg_mode=1\n\n[all]\n")
    for _ in range(2):  # again: nothing added twice
        r = run(SETUP, "--boot-only", "--boot-config", cfg)
        assert r.returncode == 0, r.stderr
    lines = cfg.read_text().splitlines()
    for want in ("dtparam=spi=on", "dtparam=audio=on", "camera_auto_detect=1"):
        assert lines.count(want) == 1, (want, lines)
    assert "dtparam=audio=off" not in lines and "#dtparam=spi=on" not in lines
    fresh = tmp_path / "empty.txt"
    assert run(SETUP, "--boot-only", "--boot-config", fresh).returncode == 0
    assert fresh.read_text().splitlines()[-3:] == ["dtparam=spi=on", "dtparam=audio=on",
                                                   "camera_auto_detect=1"]


def test_setup_refuses_an_unknown_option_in_one_line():
    r = run(SETUP, "--wifi")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "vault-setup.sh: unknown option --wifi (try --help)"]
    assert "Raspberry Pi Imager" in run(SETUP, "--help").stdout


def test_the_host_step_copies_the_checkout_without_git(tmp_path):
    r = run(STAGE / "00-vault" / "00-run.sh", env={**os.environ, "ROOTFS_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    src = tmp_path / "opt" / "vault-companion" / "src"
    for name in ("pyproject.toml", "systemd/install.sh", "image/vault-setup.sh",
                 "companion/data/models/detector.onnx"):
        assert (src / name).is_file(), name
    assert not (src / ".git").exists() and not (src / ".venv").exists()
    assert os.access(src / "systemd" / "install.sh", os.X_OK)


def test_build_needs_a_pi_gen_checkout_and_says_so(tmp_path):
    r = run(IMAGE / "build.sh")
    assert r.returncode == 2 and "git clone" in r.stdout
    r = run(IMAGE / "build.sh", tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == f"image/build.sh: {tmp_path} is not a pi-gen checkout (no " \
                               "build.sh, stage2)"


# ---------------------------------------------------------------- the wiring picture


def draw(*args: str) -> subprocess.CompletedProcess:
    return run(sys.executable, REPO / "hardware" / "draw_wiring.py", *args)


def test_the_wiring_picture_is_drawn_from_the_config(tmp_path):
    out = tmp_path / "w.png"
    r = draw("--out", str(out))
    assert r.returncode == 0, r.stderr
    from PIL import Image

    assert Image.open(out).size == (1500, 1120)
    sys.path.insert(0, str(REPO / "hardware"))
    try:
        import draw_wiring
    finally:
        sys.path.pop(0)
    from companion.config import load_config

    roles = draw_wiring.roles(load_config(REPO / "hardware" / "companion.example.toml"))
    assert roles[11][0].startswith("seat 0 button")  # GPIO17
    assert roles[19][0] == "MAX7219 DIN" and roles[24][0] == "MAX7219 CS"
    assert roles[35][0].startswith("seat 3 lamp")  # GPIO19


def test_an_i2s_amp_on_a_lamps_pin_is_one_line_naming_both(tmp_path):
    r = draw("--speaker", "i2s", "--out", str(tmp_path / "w.png"))
    assert r.returncode == 2 and not (tmp_path / "w.png").exists()
    assert r.stderr.strip().splitlines() == [
        "draw_wiring: GPIO19 is both seat 3 lamp (1k to a transistor) and I2S amp LRC: move "
        "one (free GPIOs: 2, 3, 4, 14, 15, 24, 25, 26)"]
    moved = tmp_path / "i2s.toml"
    text = (REPO / "hardware" / "companion.example.toml").read_text()
    text = re.sub(r"(?m)^pins = \[5, 6, 13, 19\]", "pins = [5, 6, 13, 26]", text)
    text = re.sub(r"(?m)^progress_pins = \[12, 16, 20, 21\]", "progress_pins = [12, 16, 20, 24]",
                  text)
    moved.write_text(text)
    r = draw("--speaker", "i2s", "--config", str(moved), "--out", str(tmp_path / "i.png"))
    assert r.returncode == 0, r.stderr


def test_the_maker_guide_shows_the_drawn_picture():
    guide = (REPO / "docs" / "maker-guide.md").read_text()
    assert "](wiring.png)" in guide and (REPO / "docs" / "wiring.png").is_file()
    assert "hardware/draw_wiring.py" in guide and "companion check" in guide


# ---------------------------------------------------------------- the emulated check


def test_the_emulated_check_parses_and_runs_as_a_pis_cpu():
    assert run("bash", "-n", CHECK).returncode == 0
    text = CHECK.read_text()
    assert "cpu=cortex-a76" in text and "cpu=cortex-a72" in text
    assert 'mount --bind "$WORK/cpuinfo" "$ROOT/proc/cpuinfo"' in text
    assert "image/stage-vault/00-vault" in text


def test_each_test_the_emulated_check_leaves_out_exists_and_says_why():
    text = CHECK.read_text()
    block = text[text.index("EMULATION_DESELECT=("):]
    block = block[:block.index("\n)\n")]
    entries = re.findall(r'"([^"|]+)\|([^"]+)"', block)
    assert entries, "no entries parsed"
    for node, why in entries:
        path, _, name = node.partition("::")
        if name:
            assert f"def {name}(" in (REPO / path).read_text(), node
        else:  # a folder left out whole
            assert (REPO / path).is_dir(), node
        assert len(why) > 40  # a reason, not a label


def test_the_emulated_checks_first_boot_line_matches_what_serve_prints(tmp_path):
    """Its service step's check of the first boot (the page's address and PIN on the LED
    and said until a phone pairs), run on what `serve` prints; and failing on a PIN that
    is not the one serve gave."""
    import signal
    import socket
    import time

    text = CHECK.read_text()
    start = text.index("# the first boot: until a phone pairs")
    block = text[start:text.index('check "service wrote its game log', start)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--page", f"127.0.0.1:{port}",
         "--log-dir", str(tmp_path / "logs")],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not any("pair a phone" in x for x in lines):
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
    finally:
        proc.send_signal(signal.SIGTERM)
        lines.append(proc.communicate(timeout=30)[0])
    log = "".join(lines)
    check = 'check() { echo "CHECK $1"; shift; if "$@"; then echo PASS; else echo FAIL; fi; }\n'
    vars_ = {**os.environ, "LOGDIR": str(tmp_path), "PAGE_PORT": str(port)}
    (tmp_path / "service.log").write_text(log)
    r = run("bash", "-c", check + block, env=vars_)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "PASS", (r.stdout, log)
    assert f"table: pair a phone: open http://127.0.0.1:{port}/ and enter PIN" in r.stdout
    def another(m: re.Match[str]) -> str:  # each digit one more: never the same PIN
        return m.group(1) + "".join(str((int(d) + 1) % 10) for d in m.group(2))

    other = re.sub(r"(table page \S+ PIN )(\d+)", another, log, count=1)
    (tmp_path / "service.log").write_text(other)
    assert run("bash", "-c", check + block, env=vars_).stdout.splitlines()[-1] == "FAIL"
