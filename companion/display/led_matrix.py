"""Show Frames on a luma device: a chain of MAX7219 8x8 modules, or any luma device.

On the box the device is ``luma.led_matrix.device.max7219`` over
``luma.core.interface.serial.spi`` (spidev, /dev/spidev<port>.<device>), created lazily
on the first ``show`` so that importing this module, or building the object from a
config, needs neither spidev nor an SPI bus. Anywhere else pass a luma device:
``luma.core.device.dummy`` (tests read back its ``image``), or luma.emulator's
``capture`` (a PNG per frame) / ``gifanim`` (an animated GIF) for a person to look at.

The display's ``size`` is the device's (luma devices carry ``width`` and ``height``);
for a chain opened from the config it is known before the device is opened: 8 pixels
per cascaded module by 8 (8 by 8 per module when ``rotate`` turns it a quarter). The
referee has the games draw frames of that size (companion.loop.Referee.size). A frame
of another size is placed at the top-left of the device's canvas (cropped when larger).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from companion.display.frame import Frame, Size
from companion.errors import CompanionError


class DisplayError(CompanionError, RuntimeError):
    """The display could not be opened or written; ``str`` is one line."""


def open_max7219(
    cascaded: int = 4,
    spi_port: int = 0,
    spi_device: int = 0,
    block_orientation: int = 0,
    rotate: int = 0,
    blocks_reversed: bool = False,
    brightness: int = 64,
    serial_interface: Any = None,
) -> Any:
    """A luma max7219 device for a chain of ``cascaded`` modules. ``serial_interface``
    defaults to SPI (spidev); tests pass a recording stand-in."""
    try:
        from luma.led_matrix.device import max7219

        if serial_interface is None:
            from luma.core.interface.serial import noop, spi

            serial_interface = spi(port=spi_port, device=spi_device, gpio=noop())
        return max7219(
            serial_interface,
            cascaded=cascaded,
            block_orientation=block_orientation,
            rotate=rotate,
            blocks_arranged_in_reverse_order=blocks_reversed,
            contrast=brightness,
        )
    except Exception as exc:  # luma.core.error.*, ImportError (no spidev), OSError
        where = f"/dev/spidev{spi_port}.{spi_device}"
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DisplayError(
            f"MAX7219 display on {where}: {reason} (is SPI enabled, and the user in the "
            f"spi group?)"
        ) from None


def max7219_size(cascaded: int = 4, rotate: int = 0) -> Size:
    """The (width, height) of a chain of ``cascaded`` 8x8 modules turned ``rotate``
    quarter turns, as luma's max7219 device gives it."""
    return (8 * cascaded, 8) if rotate % 2 == 0 else (8, 8 * cascaded)


class LedMatrixDisplay:
    """Shows Frames on one luma device (given, or a MAX7219 chain opened on first use).
    ``size``: the device's (width, height); for an ``opener``, what the device it opens
    will be (default: the four-module chain's, 32x8)."""

    def __init__(
        self,
        device: Any = None,
        *,
        opener: Callable[[], Any] | None = None,
        size: Size | None = None,
    ) -> None:
        if device is None and opener is None:
            opener = open_max7219
        self._device = device
        self._opener = opener
        self._size = size
        self._last: Frame | None = None

    @classmethod
    def from_config(cls, display: Any, serial_interface: Any = None) -> LedMatrixDisplay:
        """From a ``companion.config.DisplayConfig`` (type "max7219"); opens nothing yet."""

        def opener() -> Any:
            return open_max7219(
                cascaded=display.cascaded,
                spi_port=display.spi_port,
                spi_device=display.spi_device,
                block_orientation=display.block_orientation,
                rotate=display.rotate,
                blocks_reversed=display.blocks_reversed,
                brightness=display.brightness,
                serial_interface=serial_interface,
            )

        return cls(opener=opener, size=max7219_size(display.cascaded, display.rotate))

    @property
    def size(self) -> Size:
        """(width, height) in pixels: the device's, without opening it."""
        if self._device is not None:
            return (int(self._device.width), int(self._device.height))
        return self._size or max7219_size()

    @property
    def device(self) -> Any:
        """The luma device, opened now if it was not yet (may raise DisplayError)."""
        if self._device is None:
            assert self._opener is not None
            self._device = self._opener()
        return self._device

    @property
    def is_open(self) -> bool:
        return self._device is not None

    def image_for(self, frame: Frame) -> Any:
        """The PIL image the device is sent for ``frame`` (its size and mode)."""
        from PIL import Image

        device = self.device
        img = frame.to_image()
        if img.size != device.size:
            canvas = Image.new("1", device.size, 0)
            canvas.paste(img, (0, 0))
            img = canvas
        return img if device.mode == "1" else img.convert(device.mode)

    def show(self, frame: Frame, force: bool = False) -> bool:
        """Display ``frame``; skipped (False) when it is the frame already shown."""
        if frame == self._last and not force:
            return False
        self.device.display(self.image_for(frame))
        self._last = frame
        return True

    @property
    def shown(self) -> Frame | None:
        return self._last

    def set_brightness(self, level: int) -> None:
        """0-255 (the MAX7219 has 16 steps)."""
        if not 0 <= level <= 255:
            raise ValueError(f"brightness must be 0-255, got {level}")
        self.device.contrast(level)

    def clear(self) -> None:
        self.show(Frame.blank(*self.device.size), force=True)

    def play(
        self, steps: Iterable[tuple[Frame, int]], sleep: Callable[[float], Any] = time.sleep
    ) -> None:
        """Show each frame for its duration (blocking: for scripts and ``companion check``)."""
        for frame, ms in steps:
            self.show(frame)
            sleep(ms / 1000)

    async def play_async(
        self, steps: Iterable[tuple[Frame, int]], *, start_shown: bool = False
    ) -> None:
        """As ``play`` but awaiting between frames; cancel the task to cut it short.
        ``start_shown``: the first frame is already on the device (shown by the caller
        the moment the flash began); only wait out its duration."""
        for i, (frame, ms) in enumerate(steps):
            if i or not start_shown:
                self.show(frame)
            await asyncio.sleep(ms / 1000)

    def close(self) -> None:
        """Blank the display and release it (the MAX7219 keeps its last image otherwise)."""
        if self._device is None:
            return
        try:
            self._device.clear()
            self._device.cleanup()
        except Exception:  # closing must not raise on the way out
            pass
        self._device = None
        self._last = None
