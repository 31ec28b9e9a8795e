"""The frame size flows from the display to whatever draws: a MAX7219 chain is 8 pixels
wide per module, the referee takes the LED display's size, and every game, flash and
animation is drawn for it. On a 64x8 chain (8 modules) and a 24x8 one (3 modules) every
frame sent matches the device and nothing fails; at 32x8 nothing changes (the other
tests compare those frames)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from game_builders import ROW5, new_game, script_states
from luma.core.device import dummy

from companion.config import DisplayConfig
from companion.display.animations import KINDS, flash
from companion.display.bitfont import FONT_3X5, FONT_5X7, centred_text, render_text
from companion.display.frame import DEFAULT_SIZE, Frame
from companion.display.led_display import LedDisplay
from companion.display.led_matrix import LedMatrixDisplay, max7219_size, open_max7219
from companion.display.model import BOARD_SIZE, flash_frame, placed
from companion.gamelog import read_log
from companion.games import registry
from companion.games.vault_assault import board as va
from companion.loop import Referee

# luma.led_matrix 1.9 calls Image.getdata, which Pillow 13 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
SIZES = [(64, 8), (24, 8)]


class Chain(dummy):
    """A luma dummy device keeping the size of every image it was sent."""

    def __init__(self, width: int, height: int = 8) -> None:
        super().__init__(width=width, height=height, mode="1")
        self.sent: list[tuple[int, int]] = []

    def display(self, image) -> None:  # noqa: ANN001 - luma's signature
        self.sent.append(image.size)
        super().display(image)


class NoSerial:
    """luma's serial interface, sending nowhere."""

    def data(self, data) -> None:  # noqa: ANN001
        pass

    def command(self, *cmd) -> None:  # noqa: ANN002
        pass

    def cleanup(self) -> None:
        pass


@pytest.mark.parametrize(("cascaded", "rotate", "size"),
                         [(4, 0, (32, 8)), (8, 0, (64, 8)), (3, 0, (24, 8)), (3, 1, (8, 24))])
def test_a_chain_from_the_config_knows_its_size_before_it_is_opened(cascaded, rotate, size):
    cfg = DisplayConfig(type="max7219", cascaded=cascaded, rotate=rotate)
    led = LedMatrixDisplay.from_config(cfg, serial_interface=NoSerial())
    assert led.size == size and not led.is_open
    assert max7219_size(cascaded, rotate) == size
    # luma's own device agrees once it is open
    assert led.device.size == size == led.size
    assert open_max7219(cascaded, rotate=rotate, serial_interface=NoSerial()).size == size


def test_the_referee_draws_for_the_led_displays_size():
    assert Referee().size == DEFAULT_SIZE == (32, 8)  # no display: the box's 32x8
    for width, height in SIZES:
        ref = Referee(displays=[LedDisplay(LedMatrixDisplay(Chain(width)))])
        assert ref.size == (width, height)
        assert (ref.view().frame.width, ref.view().frame.height) == (width, height)
    # a display without a size (the terminal, the page) leaves it alone
    assert Referee(displays=[object()]).size == DEFAULT_SIZE  # type: ignore[list-item]


@pytest.mark.parametrize("size", SIZES)
def test_every_animation_is_built_for_the_panel(size):
    for kind in KINDS:
        steps = flash(kind, "SEAT 2", *size)
        assert steps and all((f.width, f.height) == size for f, _ in steps)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.jsonl")))
def test_every_shipped_game_on_the_panel_sends_frames_of_its_size(size, script):
    """Each scripted game played through a referee showing on the chain, in a running
    loop (flash animations play): every frame sent matches the device."""

    async def main() -> tuple[Chain, list[Frame]]:
        device = Chain(size[0])
        ref = Referee(displays=[LedDisplay(LedMatrixDisplay(device))])
        frames = []
        for _, ev in read_log(SCRIPTS / script).events:
            ref.submit(ev)
            for tick in range(3):  # blinking, scrolling, the game-over lines
                ref.on_tick()
                frames.append(ref.view().frame)
                frames.append(ref.game.render(ref.state, None, ref.tick + tick, ref.size))
            await asyncio.sleep(0)
        await asyncio.sleep(0.3)  # inside the last animation
        for tick in range(200):  # the game-over screen cycles through all its lines
            frames.append(ref.game.render(ref.state, None, tick, ref.size))
        ref.displays[0].close()
        return device, frames

    device, frames = asyncio.run(main())
    assert device.sent and set(device.sent) == {size}
    assert {(f.width, f.height) for f in frames} == {size}


@pytest.mark.parametrize("size", SIZES)
def test_a_verdict_on_the_panel_is_its_animation_for_that_size(size):
    async def main() -> LedMatrixDisplay:
        led = LedMatrixDisplay(Chain(size[0]))
        ref = Referee(displays=[LedDisplay(led)])
        for ev in (new_game(3), {"type": "heist_hide", "row": ROW5},
                   {"type": "heist_attempt",
                    "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
                   {"type": "assault_start"}):
            assert ref.submit(ev).rejection is None
        ref.submit({"type": "buzz", "seat": 1, "ts_ns": 10**12})
        return led

    led = asyncio.run(main())
    assert led.shown == flash("escaped", None, *size)[0][0]


def test_words_use_the_whole_width():
    w = FONT_3X5.text_width("BANG!")
    assert flash_frame("BANG!", size=(64, 8)) == render_text(
        "BANG!", FONT_3X5, x=(64 - w) // 2, y=1, width=64, height=8)
    # a word wider than 24 px scrolls there, and is held still on 32 px
    assert flash_frame("HOSTAGE!", 0) == flash_frame("HOSTAGE!", 5)
    assert flash_frame("HOSTAGE!", 0, (24, 8)) != flash_frame("HOSTAGE!", 5, (24, 8))
    # "ARRESTED!" in 5x7 fits on 64 px and is held there, centred; 32 px end in 3x5
    w = FONT_5X7.text_width("ARRESTED!")
    assert 32 < w <= 64
    assert flash("arrested", None, 64, 8)[-1][0] == render_text(
        "ARRESTED!", FONT_5X7, x=(64 - w) // 2, width=64, height=8)
    assert flash("arrested")[-1][0] in (centred_text(t, FONT_3X5) for t in ("ARRESTED!",
                                                                             "ARRESTED"))


def test_vault_assault_board_is_centred_on_a_wider_panel_and_cut_on_a_narrower():
    assert BOARD_SIZE == (32, 8)
    for s in script_states("game-3p.jsonl"):
        base = va.board(s, 1)
        assert (base.width, base.height) == (32, 8)
        wide = va.board(s, 1, size=(64, 8))
        assert wide.rows == tuple(r << 16 for r in base.rows)  # x 16-47
        narrow = va.board(s, 1, size=(24, 8))
        assert narrow.rows == tuple(r & (1 << 24) - 1 for r in base.rows)  # x 0-23
        assert placed(base) == base


@pytest.mark.parametrize("game_id,script", [("big-score", "big-score-3p.jsonl"),
                                            ("vault-solitaire", "vault-solitaire.jsonl"),
                                            ("vault-abstract", "vault-abstract.jsonl")])
def test_the_small_boards_keep_to_the_left_at_any_width(game_id, script):
    """Their text from the left edge and the marks as far as the panel reaches: the
    32x8 board's pixels in the first columns of a wider panel, its left part on a
    narrower one."""
    g = registry.get(game_id)
    for s in script_states(script):
        if g.over(s):
            continue  # the game-over lines are words: centred on the panel
        base = g.render(s)
        assert g.render(s, None, 0, (64, 8)).rows == base.rows
        assert g.render(s, None, 0, (24, 8)).rows == tuple(r & (1 << 24) - 1 for r in base.rows)
