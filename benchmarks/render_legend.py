"""The LED display's screens as pictures for players (README), drawn by luma's emulator
through the same LedMatrixDisplay path as the real MAX7219 (no pytest needed).

    .venv/bin/python benchmarks/render_legend.py [OUT_DIR]      # default: docs/

Writes OUT_DIR/led-legend.png (a board in the middle of a 3-player race with every
part labelled) and led-<screen>.png for: stage-2 (the flash after a stage claim),
empty (the lasting Empty! mark), game-over (the winner's name scrolling, then a total)
and pin (the pairing PIN at start-up). Prints one line per file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from companion.display.frame import Frame  # noqa: E402
from companion.display.led_matrix import LedMatrixDisplay  # noqa: E402
from companion.games.vault_assault.board import SEAT_X, STAGE_X, render, render_seen  # noqa: E402
from companion.games.vault_assault.engine import apply, new_state  # noqa: E402
from companion.games.vault_assault.state import GameState  # noqa: E402

SCALE = 12
ROW = ["alarm", "dye_pack", "diamond", "alarm", "alarm"]


def play(*events: dict) -> GameState:
    state = new_state()
    for ev in events:
        result = apply(state, ev)
        assert result.rejection is None, (ev, result.rejection)
        state = result.state
    return state


NEW = {"type": "new_game", "game": "vault-assault", "players": 3, "names": ["Ann", "Bob", "Cat"]}
RACE = (
    NEW,
    {"type": "heist_hide", "row": ROW},
    {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}, {"seat": 2, "position": 1}]},
    {"type": "heist_attempt", "flips": [{"seat": 1, "position": 2}]},  # Bob: the diamond
    {"type": "assault_start"},
    {"type": "dye_pack", "targets": [1, 2]},
    {"type": "stage", "stage": 1},
    {"type": "buzz", "seat": 1, "ts_ns": 5},  # Bob escapes; Cat has the trap's hostage
)


def screens() -> dict[str, Frame]:
    race = play(*RACE)
    stage2 = play(*RACE, {"type": "stage", "stage": 2})
    empty = play(*RACE, {"type": "empty"})
    over = play(
        *RACE,
        {"type": "empty"},
        {"type": "buzz", "seat": 0, "ts_ns": 9},
        {"type": "impound", "seat": 2, "car": 0},
        {"type": "tally", "seat": 0, "cash": 30000},
        {"type": "tally", "seat": 1, "cash": 20000},
        {"type": "tally", "seat": 2, "cash": 5000},
    )
    return {
        "legend": render_seen(race, None, 0, {2: frozenset({0, 3})}),
        "stage-2": render(stage2, "stage"),
        "empty": render(empty, None, tick=0),
        "game-over": render(over, None, tick=12),  # "WINNER Bob" scrolling by
        "game-over-total": render(over, None, tick=40),  # then each seat's total
        "pin": render(new_state(), "pin:4719"),
    }


def capture_png(frame: Frame, path: Path, scale: int = SCALE) -> Path:
    from luma.emulator.device import capture

    cap = capture(width=32, height=8, mode="1", transform="led_matrix", scale=scale,
                  file_template=str(path))
    LedMatrixDisplay(cap).show(frame, force=True)
    return path


# (text, LED x range, LED y) for the labels: above the picture (stages, seats), on the
# left (rows under the stages) and on the right (rows of the seat columns).
TOP = [
    ("stage 1", STAGE_X[0], STAGE_X[0] + 3),
    ("stage 2", STAGE_X[1], STAGE_X[1] + 3),
    ("stage 3", STAGE_X[2], STAGE_X[2] + 3),
    ("arrest", STAGE_X[3], STAGE_X[3] + 3),
    ("seat 1", SEAT_X[0], SEAT_X[0] + 2),  # seats as people count them, from 1
    ("2", SEAT_X[1], SEAT_X[1] + 2),
    ("3", SEAT_X[2], SEAT_X[2] + 2),
]
LEFT = [
    (1.5, "cops' stages: claimed = solid; current = mosaic pieces in place"),
    (4, "marker: the stage being worked on"),
    (5, "a Bang! was used before this stage"),
    (7, "cop track: one mark per turn (blinks: now)"),
]
RIGHT = [
    (0, "bar: this seat is the cops"),
    (1, "dot: a hostage set aside"),
    (2, "one dot per getaway car"),
    (3.5, "one dot per diamond"),
    (6, "solid: escaped · dotted: arrested"),
]


def legend(frame: Frame, out: Path) -> Path:
    led = Image.open(capture_png(frame, out.with_name("_led.png"))).convert("RGB")
    out.with_name("_led.png").unlink()
    font = ImageFont.load_default(size=15)
    small = ImageFont.load_default(size=13)
    lw, lh = led.size
    px = lw / 32  # one LED
    margin_l, margin_r, margin_t, margin_b = 430, 300, 40, 16
    img = Image.new("RGB", (margin_l + lw + margin_r, margin_t + lh + margin_b), "white")
    img.paste(led, (margin_l, margin_t))
    d = ImageDraw.Draw(img)
    for text, x0, x1 in TOP:
        cx = margin_l + (x0 + x1 + 1) / 2 * px
        d.text((cx, margin_t - 6), text, fill="black", font=small, anchor="mb")
    for y, text in LEFT:
        cy = margin_t + (y + 0.5) * lh / 8
        d.text((margin_l - 22, cy), text, fill="black", font=font, anchor="rm")
        d.line([(margin_l - 16, cy), (margin_l + 2, cy)], fill="grey", width=2)
    for y, text in RIGHT:
        cy = margin_t + (y + 0.5) * lh / 8
        d.text((margin_l + lw + 22, cy), text, fill="black", font=font, anchor="lm")
        d.line([(margin_l + lw - 2, cy), (margin_l + lw + 16, cy)], fill="grey", width=2)
    img.save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=Path("docs"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    frames = screens()
    print(legend(frames.pop("legend"), args.out / "led-legend.png"))
    for name, frame in frames.items():
        print(capture_png(frame, args.out / f"led-{name}.png", scale=6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
