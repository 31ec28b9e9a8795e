from __future__ import annotations

import pytest
from luma.core.device import dummy
from luma.led_matrix.const import max7219 as MAX

from companion.config import DisplayConfig
from companion.display.animations import flash
from companion.display.frame import Frame
from companion.display.led_matrix import DisplayError, LedMatrixDisplay, open_max7219

# luma.led_matrix 1.9 calls Image.getdata, which Pillow 13 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")


class RecordingSerial:
    """A serial interface for luma (same methods as luma's ``noop``) that keeps what
    the MAX7219 driver sends."""

    def __init__(self) -> None:
        self.sent: list[list[int]] = []

    def data(self, data) -> None:  # noqa: ANN001 - luma's signature
        self.sent.append(list(data))

    def command(self, *cmd) -> None:  # noqa: ANN002
        self.sent.append(list(cmd))

    def cleanup(self) -> None:
        pass


def decode_chain(sent: list[list[int]], cascaded: int) -> set[tuple[int, int]]:
    """The lit pixels the modules show after the last full refresh, module 0 being the
    one the SPI input enters (leftmost), with block_orientation 0: digit d of a module
    is its column d, bit y its row y. The first byte pair of a message is shifted
    through to the farthest module."""
    digit_msgs = [m for m in sent if MAX.DIGIT_0 <= m[0] < MAX.DIGIT_0 + 8]
    assert len(digit_msgs) >= 8
    lit = set()
    for msg in digit_msgs[-8:]:
        assert len(msg) == 2 * cascaded
        for pair in range(cascaded):
            digit, byte = msg[2 * pair] - MAX.DIGIT_0, msg[2 * pair + 1]
            module = cascaded - 1 - pair
            lit |= {(8 * module + digit, y) for y in range(8) if byte >> y & 1}
    return lit


PATTERN = Frame.from_pixels([(0, 0), (7, 7), (8, 0), (15, 3), (16, 4), (31, 7), (31, 0), (20, 2)])


def test_dummy_device_shows_the_frame_pixels() -> None:
    device = dummy(width=32, height=8, mode="1")
    display = LedMatrixDisplay(device)
    assert display.show(PATTERN)
    img = device.image
    lit = {(x, y) for x in range(32) for y in range(8) if img.getpixel((x, y))}
    assert lit == set(PATTERN.lit())


def test_a_repeated_frame_is_not_resent_unless_forced() -> None:
    device = dummy(width=32, height=8, mode="1")
    display = LedMatrixDisplay(device)
    assert display.show(PATTERN)
    assert not display.show(PATTERN)
    assert display.show(PATTERN, force=True)
    assert display.shown == PATTERN


def test_rgb_device_and_longer_chain_get_the_frame_top_left() -> None:
    device = dummy(width=64, height=8, mode="RGB")
    LedMatrixDisplay(device).show(PATTERN)
    img = device.image
    lit = {(x, y) for x in range(64) for y in range(8) if img.getpixel((x, y)) != (0, 0, 0)}
    assert lit == set(PATTERN.lit())


def test_max7219_chain_of_four_modules_gets_each_pixel_in_its_module() -> None:
    serial = RecordingSerial()
    display = LedMatrixDisplay(open_max7219(cascaded=4, serial_interface=serial))
    display.show(PATTERN)
    assert decode_chain(serial.sent, 4) == set(PATTERN.lit())


def test_max7219_every_single_pixel_lands_at_its_coordinates() -> None:
    serial = RecordingSerial()
    display = LedMatrixDisplay(open_max7219(cascaded=4, serial_interface=serial))
    for x, y in [(0, 0), (1, 0), (0, 1), (9, 5), (23, 6), (24, 1), (31, 7)]:
        display.show(Frame.from_pixels([(x, y)]))
        assert decode_chain(serial.sent, 4) == {(x, y)}


def test_max7219_block_orientation_rotates_within_the_module() -> None:
    serial = RecordingSerial()
    display = LedMatrixDisplay(
        open_max7219(cascaded=4, block_orientation=-90, serial_interface=serial)
    )
    display.show(Frame.from_pixels([(8 + 1, 0)]))  # module 1, column 1, row 0
    # PIL's rotate(-90) turns the 8x8 block clockwise: (x, y) -> (7 - y, x).
    assert decode_chain(serial.sent, 4) == {(8 + 7, 1)}


def test_brightness_goes_to_the_intensity_register() -> None:
    serial = RecordingSerial()
    display = LedMatrixDisplay(open_max7219(cascaded=4, brightness=0x70, serial_interface=serial))
    assert [MAX.INTENSITY, 0x7] * 4 in serial.sent
    display.set_brightness(255)
    assert serial.sent[-1] == [MAX.INTENSITY, 0xF] * 4
    with pytest.raises(ValueError, match="0-255"):
        display.set_brightness(256)


def test_from_config_opens_lazily() -> None:
    serial = RecordingSerial()
    display = LedMatrixDisplay.from_config(DisplayConfig(type="max7219", cascaded=4), serial)
    assert not display.is_open and serial.sent == []
    display.show(PATTERN)
    assert display.is_open
    assert decode_chain(serial.sent, 4) == set(PATTERN.lit())


def test_missing_spi_bus_is_a_one_line_display_error() -> None:
    # On a laptop there is no spidev module or /dev/spidev9.1: one line, no traceback.
    display = LedMatrixDisplay.from_config(DisplayConfig(type="max7219", spi_port=1,
                                                         spi_device=1))
    with pytest.raises(DisplayError) as info:
        display.show(PATTERN)
    assert "/dev/spidev1.1" in str(info.value)
    assert "\n" not in str(info.value)


def test_play_shows_each_step_for_its_duration() -> None:
    device = dummy(width=32, height=8, mode="1")
    display = LedMatrixDisplay(device)
    steps = flash("bang")
    slept: list[float] = []
    display.play(steps, sleep=slept.append)
    assert slept == [ms / 1000 for _, ms in steps]
    assert display.shown == steps[-1][0]


def test_play_async_can_be_cut_short() -> None:
    import asyncio

    device = dummy(width=32, height=8, mode="1")
    display = LedMatrixDisplay(device)
    steps = flash("hostage")

    async def main() -> None:
        task = asyncio.create_task(display.play_async(steps))
        await asyncio.sleep(0.45)  # past the first frame (the word), inside the intro
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert display.shown is not None and display.shown != steps[-1][0]


def test_close_blanks_and_forgets_the_device() -> None:
    device = dummy(width=32, height=8, mode="1")
    display = LedMatrixDisplay(device)
    display.show(PATTERN)
    display.close()
    assert not display.is_open
    assert device.image.getbbox() is None


def test_emulator_capture_writes_a_png_of_the_frame(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from luma.emulator.device import capture
    from PIL import Image

    path = tmp_path / "frame.png"
    device = capture(width=32, height=8, mode="1", transform="none", scale=1,
                     file_template=str(path))
    LedMatrixDisplay(device).show(PATTERN)
    img = Image.open(path).convert("L")
    assert img.size == (32, 8)
    lit = {(x, y) for x in range(32) for y in range(8) if img.getpixel((x, y)) > 128}
    assert lit == set(PATTERN.lit())


def test_gallery_script_writes_a_gif_and_png_per_kind(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    from PIL import Image

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "render_gallery.py"
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path), "--kind", "bang", "--kind", "go"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for kind in ("bang", "go"):
        gif = Image.open(tmp_path / f"{kind}.gif")
        assert gif.n_frames > 5
        assert Image.open(tmp_path / f"{kind}.png").size[0] > 32
    assert "bang" in result.stdout
