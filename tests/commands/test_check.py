"""`companion check`: the display's size from [display], the camera (a frame), the
speaker (a callout), the page (it answers), and every failure one line. The hardware is
the libraries' own doubles: gpiozero's MockFactory (--simulate), luma's dummy device,
luma's own DeviceNotFoundError for SPI that is off, espeak-ng and aplay stood in for by
small programs, the synthetic camera and folders of frames."""

from __future__ import annotations

import functools
import io
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from companion.cli import main
from companion.commands import check
from companion.config import parse_config


def write(tmp_path: Path, text: str = "") -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[gpio]\npin_factory = "mock"\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n' + text)
    return cfg


def config(text: str = ""):
    display = "" if "[display]" in text else '[display]\ntype = "none"\n'
    return parse_config('[gpio]\npin_factory = "mock"\n' + display + text)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CACHE_DIRECTORY", raising=False)


# ---- the whole command


def test_simulate_checks_every_part_and_ends_with_nothing_failed(tmp_path, capsys):
    assert main(["check", "--simulate", "--config", str(write(tmp_path))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "check: all seats answered" in out
    assert any(line.startswith("camera: synthetic seed 0: a ") for line in out), out
    assert any(line.startswith("speaker: simulated: would say ") for line in out), out
    assert any(line.startswith("page: http://127.0.0.1:") and "answers" in line
               for line in out), out
    assert out[-1] == "check: nothing failed"


@pytest.mark.parametrize("cascaded, rotate, size, modules", [
    (8, 0, "64x8", 8), (2, 0, "16x8", 2), (3, 1, "8x24", 3)])
def test_the_display_size_comes_from_the_config(tmp_path, capsys, cascaded, rotate, size,
                                                modules):
    cfg = write(tmp_path, f'[display]\ntype = "max7219"\ncascaded = {cascaded}\n'
                          f"rotate = {rotate}\n")
    assert main(["check", "--simulate", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    height = int(size.split("x")[1])
    assert (f"display: rows 0-{height - 1} and modules 1-{modules} lit in turn (max7219, "
            f"{size})") in out


def test_the_simulated_panel_draws_on_luma_dummy_device(monkeypatch):
    from luma.core.device import dummy

    drawn = []
    real = dummy.display

    def display(self, image):
        drawn.append(int(np.count_nonzero(np.asarray(image))))
        return real(self, image)

    monkeypatch.setattr(dummy, "display", display)
    cfg = config('[display]\ntype = "max7219"\ncascaded = 6\n').display
    panel = check.simulated_panel(type("C", (), {"display": cfg})())
    assert panel.size == (48, 8)
    out = io.StringIO()
    assert check.check_display(type("C", (), {"display": cfg})(), False, 0.0, out,
                               panel=panel) is None
    # eight rows of 48, six modules of 64, then blank
    assert drawn == [48] * 8 + [64] * 6 + [0]


def test_spi_off_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    """What SPI that is off gives luma (its own DeviceNotFoundError), through the real
    path: the registry's panel, LedMatrixDisplay, open_max7219. The other parts are
    still checked and the last line names what failed."""
    import luma.core.interface.serial as serial
    from luma.core.error import DeviceNotFoundError

    def spi(**kwargs):
        raise DeviceNotFoundError("SPI device not found")

    monkeypatch.setattr(serial, "spi", spi)
    cfg = write(tmp_path, '[display]\ntype = "max7219"\n[buttons]\npins = [17, 27]\n')
    assert main(["check", "--config", str(cfg), "--timeout", "0.05", "--step", "0"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    display = [line for line in lines if line.startswith("display: ")]
    assert display == ["display: MAX7219 display on /dev/spidev0.0: SPI device not found "
                       "(is SPI enabled, and the user in the spi group?)"]
    assert "Traceback" not in captured.out + captured.err
    assert lines[-1].startswith("check: ") and "failed: display, buttons" in lines[-1]


def test_a_pin_factory_that_cannot_open_still_checks_the_rest(tmp_path, capsys):
    cfg = write(tmp_path, '[display]\ntype = "none"\n[buttons]\npins = [17, 27]\n'
                          '[sound]\nenabled = false\n')
    cfg.write_text(cfg.read_text().replace('"mock"', '"rpigpio"'))
    status = main(["check", "--config", str(cfg), "--timeout", "0.05", "--step", "0"])
    captured = capsys.readouterr()
    if "cannot open pin factory" not in captured.err:
        pytest.skip("RPi.GPIO opens here (a Pi?)")
    assert status == 1 and len(captured.err.strip().splitlines()) == 1
    assert "display: rows 0-7 and modules 1-4 lit in turn (none, 32x8)" in captured.out
    assert captured.out.splitlines()[-1].startswith("check: 1 part(s) failed: pins")


# ---- the camera


def test_the_camera_gives_a_frame_and_its_size():
    out = io.StringIO()
    assert check.check_camera(config('[camera]\nsource = "synthetic:3"\n'), False, out) is None
    line = out.getvalue().strip()
    assert line.startswith("camera: synthetic seed 3: a ") and " frame in " in line


def test_a_camera_that_is_not_there_is_one_line(tmp_path):
    out = io.StringIO()
    missing = tmp_path / "no-such-video.mp4"
    line = check.check_camera(config(f'[camera]\nsource = "{missing}"\n'), False, out)
    assert line is not None and line.startswith("camera: ") and "\n" not in line
    assert out.getvalue() == line + "\n"


def test_a_black_frame_is_said_to_be_black(tmp_path):
    import cv2

    folder = tmp_path / "frames"
    folder.mkdir()
    cv2.imwrite(str(folder / "a.png"), np.zeros((48, 64, 3), np.uint8))
    out = io.StringIO()
    assert check.check_camera(config(f'[camera]\nsource = "{folder}"\n'), False, out) is None
    assert "a 64x48 frame" in out.getvalue() and "nearly black" in out.getvalue()


def test_no_camera_in_the_config_is_not_checked_and_not_a_failure():
    out = io.StringIO()
    assert check.check_camera(config(), False, out) is None
    assert out.getvalue().startswith('camera: none in the config')


# ---- the speaker


def _program(path: Path, body: str) -> str:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def fake_sound(tmp_path):
    """espeak-ng that writes a tiny WAV to -w, aplay that records what it played (or
    fails as ALSA does without the device); make_speaker finds them."""
    played = tmp_path / "played.txt"
    espeak = _program(tmp_path / "espeak-ng", (
        "import sys\nout = sys.argv[sys.argv.index('-w') + 1]\n"
        "open(out, 'wb').write(b'RIFF' + bytes(40))\n"))
    aplay = _program(tmp_path / "aplay", (
        "import os, sys\n"
        "if os.environ.get('FAKE_APLAY_FAIL'):\n"
        "    sys.stderr.write('aplay: main:831: audio open error: No such file or "
        "directory\\n')\n    sys.exit(1)\n"
        f"open({str(played)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"))
    names = {"espeak-ng": espeak, "aplay": aplay}

    from companion.speech.player import make_speaker

    make = functools.partial(make_speaker, which=names.get)
    return make, played


# /proc/asound/cards of a Pi 5 (two HDMI outputs) and of a USB speaker plugged in
PI5_HDMI = (" 0 [vc4hdmi0      ]: vc4-hdmi - vc4-hdmi-0\n"
            "                      vc4-hdmi-0\n"
            " 1 [vc4hdmi1      ]: vc4-hdmi - vc4-hdmi-1\n"
            "                      vc4-hdmi-1\n")
USB = (" 2 [UACDemoV10     ]: USB-Audio - UACDemoV1.0\n"
       "                      Jieli Technology UACDemoV1.0 at usb-xhci-hcd.1-1, full speed\n")


def speaker(cfg, make, cards, **kwargs):
    out = io.StringIO()
    line = check.check_speaker(cfg, False, out, make=make, cards=lambda: cards,
                               configured_default=lambda: False, **kwargs)
    return line, out.getvalue()


def test_the_speaker_plays_a_callout_on_the_configured_device(fake_sound):
    make, played = fake_sound
    cfg = config('[sound]\ndevice = "plughw:CARD=UACDemoV10,DEV=0"\n')
    line, out = speaker(cfg, make, PI5_HDMI + USB)
    assert line is None
    assert "-D plughw:CARD=UACDemoV10,DEV=0" in played.read_text()
    assert out == ("speaker: said \"Check. This is the table's speaker.\" on ALSA device "
                   "'plughw:CARD=UACDemoV10,DEV=0' (card 2 UACDemoV10): heard it?\n")


def test_a_card_that_is_not_there_is_one_line_and_nothing_plays(fake_sound):
    make, played = fake_sound
    cfg = config('[sound]\ndevice = "plughw:CARD=UACDemoV10,DEV=0"\n')
    line, out = speaker(cfg, make, PI5_HDMI)
    assert out == line + "\n"
    assert line == ("speaker: ALSA device 'plughw:CARD=UACDemoV10,DEV=0': no card UACDemoV10 "
                    "in /proc/asound/cards (0 vc4hdmi0, 1 vc4hdmi1); aplay -L lists the "
                    "devices: no spoken callouts")
    assert not played.exists()


def test_a_device_that_will_not_play_is_one_line(fake_sound, monkeypatch):
    make, _ = fake_sound
    monkeypatch.setenv("FAKE_APLAY_FAIL", "1")
    line, out = speaker(config('[sound]\ndevice = "hw:2"\n'), make, PI5_HDMI + USB, wait_s=5)
    assert line == out.strip()
    assert line.startswith("speaker: ALSA device 'hw:2': a callout could not be played "
                           "(aplay exited 1: aplay: main:831: audio open error")


def test_hdmi_only_sound_says_where_a_table_speaker_goes(fake_sound):
    make, played = fake_sound
    line, out = speaker(config(), make, PI5_HDMI)
    assert line is None and "-D" not in played.read_text()  # played, on ALSA's default
    assert out.count("\n") == 1
    assert out.startswith("speaker: said \"Check. This is the table's speaker.\" on ALSA "
                          "device 'default' (card 0 vc4hdmi0): heard it?; but ALSA's default "
                          "device plays on card 0 vc4hdmi0, HDMI: silent on a box without a "
                          "screen's speakers; add a USB speaker or an I2S amplifier")


def test_the_default_on_hdmi_beside_a_usb_speaker_names_it(fake_sound):
    make, _ = fake_sound
    line, out = speaker(config(), make, PI5_HDMI + USB)
    assert line is None
    assert out.rstrip().endswith('set [sound] device = "plughw:CARD=UACDemoV10,DEV=0" '
                                 "(card 2 UACDemoV10)")


def test_no_espeak_is_make_speakers_one_line(tmp_path):
    from companion.speech.player import make_speaker

    make = functools.partial(make_speaker, which=lambda name: None)
    out = io.StringIO()
    line = check.check_speaker(config(), False, out, make=make)
    assert line == "speaker: espeak-ng not found (apt install espeak-ng): no spoken callouts"


def test_sound_off_is_not_checked():
    out = io.StringIO()
    assert check.check_speaker(config("[sound]\nenabled = false\n"), False, out) is None
    assert "off in the config" in out.getvalue()


# ---- the page


def test_the_page_answers_on_its_address():
    out = io.StringIO()
    assert check.check_page(config(), True, out) is None
    assert out.getvalue().startswith("page: http://127.0.0.1:")


def test_a_page_address_the_box_does_not_have_is_one_line():
    # 192.0.2.1 (TEST-NET-1) is nobody's address: binding it fails at once, sending nothing
    out = io.StringIO()
    line = check.check_page(config('[page]\nenabled = true\nhost = "192.0.2.1"\n'), False, out)
    assert line is not None and "\n" not in line
    assert line.startswith("page: cannot listen on 192.0.2.1:8080 (")
    assert "hostname -I" in line


def test_a_page_that_is_off_is_not_checked():
    out = io.StringIO()
    assert check.check_page(config(), False, out) is None
    assert "off in the config" in out.getvalue()


def test_every_failure_line_is_one_line_without_a_traceback(tmp_path, capsys, monkeypatch):
    """All at once: SPI off, a camera that is not there, a device aplay cannot open, an
    address the box lacks; each is one line, and the last line names them."""
    import luma.core.interface.serial as serial
    from luma.core.error import DeviceNotFoundError

    def spi(**kwargs):
        raise DeviceNotFoundError("SPI device not found")

    monkeypatch.setattr(serial, "spi", spi)
    monkeypatch.setenv("PATH", "/nonexistent")  # no espeak-ng, no aplay
    cfg = write(tmp_path, '[display]\ntype = "max7219"\n[buttons]\npins = [17, 27]\n'
                          f'[camera]\nsource = "{tmp_path / "none.mp4"}"\n'
                          '[page]\nenabled = true\nhost = "192.0.2.1"\n')
    assert main(["check", "--config", str(cfg), "--timeout", "0.05", "--step", "0"]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    lines = captured.out.splitlines()
    for part in ("display", "camera", "speaker", "page"):
        assert len([line for line in lines if line.startswith(f"{part}: ")]) == 1, lines
    assert lines[-1] == "check: 5 part(s) failed: display, buttons, camera, speaker, page"
    assert os.environ["PATH"] == "/nonexistent"
