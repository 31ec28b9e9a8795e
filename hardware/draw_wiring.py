"""Draw the box's wiring from the pin map a config uses: the Pi's 40-pin header, each
pin's role (seat buttons, lamps, stage LEDs, the MAX7219 on SPI, an I2S amplifier if the
speaker is one), power and ground, as a PNG for docs/maker-guide.md.

    python hardware/draw_wiring.py [--config TOML] [--speaker usb|i2s] [--out PNG]

The default config is hardware/companion.example.toml (what install.sh installs), the
default picture docs/wiring.png. A pin given two roles (a lamp on the I2S amplifier's
LRC pin, say) is one line naming both, and no picture (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# phys pin -> what is there: an int is a BCM GPIO number
HEADER: dict[int, int | str] = {
    1: "3V3", 2: "5V", 3: 2, 4: "5V", 5: 3, 6: "GND", 7: 4, 8: 14, 9: "GND", 10: 15,
    11: 17, 12: 18, 13: 27, 14: "GND", 15: 22, 16: 23, 17: "3V3", 18: 24, 19: 10,
    20: "GND", 21: 9, 22: 25, 23: 11, 24: 8, 25: "GND", 26: 7, 27: 0, 28: 1, 29: 5,
    30: "GND", 31: 6, 32: 12, 33: 13, 34: "GND", 35: 19, 36: 16, 37: 26, 38: 20,
    39: "GND", 40: 21,
}
PHYS = {v: k for k, v in HEADER.items() if isinstance(v, int)}
# SPI buses: (MOSI, SCLK, chip selects by spi_device)
SPI = {0: (10, 11, (8, 7)), 1: (20, 21, (18, 17, 16))}
# A MAX98357A-style I2S amplifier on the Pi's PCM pins
I2S = {18: "I2S amp BCLK", 19: "I2S amp LRC", 21: "I2S amp DIN"}
COLOURS = {"button": (214, 39, 40), "lamp": (255, 127, 14), "stage": (148, 103, 189),
           "display": (31, 119, 180), "speaker": (44, 160, 44), "power": (200, 0, 0),
           "ground": (40, 40, 40)}


class WiringError(ValueError):
    """A pin map that cannot be wired as given; ``str`` is one line."""


def roles(config, speaker: str = "usb") -> dict[int, tuple[str, str]]:
    """phys pin -> (what is wired there, its kind) for ``config`` (a companion Config)."""
    by_gpio: dict[int, list[tuple[str, str]]] = {}

    def add(gpio: int, what: str, kind: str) -> None:
        by_gpio.setdefault(int(gpio), []).append((what, kind))

    if not config.pico.enabled:
        for seat, pin in enumerate(config.buttons.pins):
            add(pin, f"seat {seat} button (other tab to GND)", "button")
    for seat, pin in enumerate(config.lamps.pins):
        add(pin, f"seat {seat} lamp (1k to a transistor)", "lamp")
    for n, pin in enumerate(config.lamps.progress_pins, start=1):
        add(pin, f"stage LED {n} (330 ohm to the LED)", "stage")
    if config.display.type == "max7219":
        bus = SPI.get(config.display.spi_port)
        if bus is None or config.display.spi_device >= len(bus[2]):
            raise WiringError(f"display: SPI {config.display.spi_port}.{config.display.spi_device}"
                              " is not drawn (SPI 0.0, 0.1 or 1.0-1.2)")
        mosi, sclk, cs = bus
        add(mosi, "MAX7219 DIN", "display")
        add(sclk, "MAX7219 CLK", "display")
        add(cs[config.display.spi_device], "MAX7219 CS", "display")
    if speaker == "i2s":
        for gpio, what in I2S.items():
            add(gpio, what, "speaker")
    out: dict[int, tuple[str, str]] = {}
    for gpio, uses in sorted(by_gpio.items()):
        if gpio not in PHYS:
            raise WiringError(f"GPIO{gpio} ({uses[0][0]}) is not on the 40-pin header")
        if len(uses) > 1:
            raise WiringError(f"GPIO{gpio} is both {uses[0][0]} and {uses[1][0]}: move one "
                              f"(free GPIOs: {', '.join(map(str, free(by_gpio)))})")
        out[PHYS[gpio]] = uses[0]
    out[2] = ("5 V: MAX7219 VCC" if config.display.type == "max7219" else "5 V", "power")
    out[6] = ("GND: MAX7219 GND", "ground")
    if speaker == "i2s":
        out[4] = ("5 V: I2S amp VIN", "power")
        out[39] = ("GND: I2S amp GND", "ground")
    if config.buttons.pins and not config.pico.enabled:
        out[14] = ("GND: the buttons' common tab", "ground")
    if config.lamps.pins or config.lamps.progress_pins:
        out[30] = ("GND: lamp drivers and stage LEDs", "ground")
    return out


def free(by_gpio: dict) -> list[int]:
    """GPIOs on the header that nothing uses, past the ID EEPROM's 0-1 and SPI0's 7-11."""
    return [g for g in sorted(PHYS) if g not in by_gpio and g not in (0, 1, 7, 8, 9, 10, 11)]


def draw(config, source: str, speaker: str, out: Path) -> Path:
    from PIL import Image, ImageDraw, ImageFont

    wired = roles(config, speaker)
    w, h = 1500, 1120
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)

    def font(size: int):
        try:
            return ImageFont.load_default(size)
        except TypeError:  # Pillow before 10.1: one size
            return ImageFont.load_default()

    title, body, small = font(30), font(19), font(15)
    d.text((40, 24), "vault-companion: the wiring", fill="black", font=title)
    d.text((40, 66), f"from {source}; BCM GPIO numbers, (phys) = header pin; pin 1 is "
                     "nearest the SD card end", fill=(90, 90, 90), font=small)
    cx, top, step = w // 2, 130, 44
    d.rounded_rectangle((cx - 70, top - 30, cx + 70, top + 20 * step - 14), 12,
                        fill=(30, 100, 60), outline="black")
    for phys, what in HEADER.items():
        row, right = (phys - 1) // 2, phys % 2 == 0
        x = cx + (34 if right else -34)
        y = top + row * step
        label = what if isinstance(what, str) else f"GPIO{what}"
        use = wired.get(phys)
        colour = COLOURS[use[1]] if use else (200, 200, 200)
        d.ellipse((x - 12, y - 12, x + 12, y + 12), fill=colour, outline="black")
        d.text((x, y), str(phys), fill="white" if use else "black", font=small, anchor="mm")
        # the pin's own name beside the header
        nx = cx + 80 if right else cx - 80
        d.text((nx, y), label, fill="black", font=small, anchor="lm" if right else "rm")
        if use:
            lx = nx + (80 if right else -80)
            d.line((lx, y, lx + (40 if right else -40), y), fill=colour, width=4)
            d.text((lx + (50 if right else -50), y), use[0], fill=colour, font=body,
                   anchor="lm" if right else "rm")
    notes = [
        "Camera: ribbon cable to the CSI port (CAM/DISP 0 on a Pi 5), no GPIO",
        "Speaker: a USB speaker, no GPIO ([sound] device, aplay -L)" if speaker == "usb"
        else "Speaker: I2S amplifier on GPIO18/19/21 (dtoverlay=max98357a), 4-8 ohm speaker",
        "Buttons on the Pico (GP2-GP5), by USB: no seat GPIOs" if config.pico.enabled
        else "Pico: not used ([pico] enabled = false)",
    ]
    y = top + 20 * step + 10
    for text in notes:
        d.text((40, y), text, fill="black", font=body)
        y += 28
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "hardware" / "companion.example.toml"))
    ap.add_argument("--speaker", choices=("usb", "i2s"), default="usb")
    ap.add_argument("--out", default=str(ROOT / "docs" / "wiring.png"))
    args = ap.parse_args(argv)
    from companion.config import ConfigError, load_config

    try:
        config = load_config(args.config)
        path = draw(config, Path(args.config).name, args.speaker, Path(args.out))
    except (ConfigError, WiringError) as exc:
        print(f"draw_wiring: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
