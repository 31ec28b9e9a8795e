"""Write every display flash as pictures a person can look at (no pytest needed).

    .venv/bin/python benchmarks/render_gallery.py OUT_DIR [--scale 4]

For each flash kind: OUT_DIR/<kind>.gif (the whole animation, luma.emulator gifanim) and
OUT_DIR/<kind>.png (its last, held frame, luma.emulator capture), drawn as round LEDs
the way the MAX7219 modules look. Prints one line per file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from companion.display.animations import KINDS, duration_ms, flash  # noqa: E402
from companion.display.led_matrix import LedMatrixDisplay  # noqa: E402

GIF_TICK_MS = 25


def render(kind: str, out: Path, scale: int) -> tuple[Path, Path]:
    from luma.emulator.device import capture, gifanim

    steps = flash(kind)
    gif_path = out / f"{kind}.gif"
    gif = gifanim(width=32, height=8, mode="1", transform="led_matrix", scale=scale,
                  filename=str(gif_path), duration=GIF_TICK_MS / 1000, loop=0)
    display = LedMatrixDisplay(gif)
    for frame, ms in steps:
        # gifanim has one frame duration: repeat a frame to hold it.
        for _ in range(max(1, round(ms / GIF_TICK_MS))):
            display.show(frame, force=True)
    gif.write_animation()
    gif._images.clear()  # noqa: SLF001 - so luma's atexit hook does not write it again

    png_path = out / f"{kind}.png"
    cap = capture(width=32, height=8, mode="1", transform="led_matrix", scale=scale,
                  file_template=str(png_path))
    LedMatrixDisplay(cap).show(steps[-1][0])
    return gif_path, png_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the PNG/GIF files")
    parser.add_argument("--scale", type=int, default=4, help="pixels per LED (default 4)")
    parser.add_argument("--kind", action="append", choices=KINDS, help="only these kinds")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in args.kind or KINDS:
        gif_path, png_path = render(kind, args.out, args.scale)
        print(f"{kind:13} {duration_ms(flash(kind)):5d} ms  {gif_path}  {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
