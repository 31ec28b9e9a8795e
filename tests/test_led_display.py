"""The appliance's LED display: the verdict's word reaches the device inside show(),
and a repeated verdict restarts its animation."""

import asyncio

from game_builders import ROW5, new_game
from luma.core.device import dummy

from companion.display.animations import flash
from companion.display.led_display import LedDisplay
from companion.display.led_matrix import LedMatrixDisplay
from companion.loop import Referee


def race(ref: Referee) -> None:
    for ev in (
        new_game(3),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}, {"seat": 2, "stop": True}]},
        {"type": "assault_start"},
    ):
        assert ref.submit(ev).rejection is None


class CountingDevice(dummy):
    def __init__(self) -> None:
        super().__init__(width=32, height=8, mode="1")
        self.frames = 0

    def display(self, image):  # noqa: ANN001
        self.frames += 1
        super().display(image)


def test_the_verdict_word_is_on_the_device_when_show_returns() -> None:
    async def main() -> None:
        led = LedMatrixDisplay(CountingDevice())
        ref = Referee(displays=[LedDisplay(led)])
        race(ref)
        ref.submit({"type": "buzz", "seat": 1, "ts_ns": 10**12})
        assert led.shown == flash("escaped")[0][0]  # no await in between

    asyncio.run(main())


def test_a_repeated_verdict_restarts_its_animation() -> None:
    async def main() -> None:
        device = CountingDevice()
        led = LedMatrixDisplay(device)
        ref = Referee(displays=[LedDisplay(led)])
        race(ref)
        ref.submit({"type": "buzz", "seat": 1, "ts_ns": 10**12})
        await asyncio.sleep(0.5)  # inside the sweep
        assert led.shown != flash("escaped")[0][0]
        ref.submit({"type": "buzz", "seat": 2, "ts_ns": 10**12 + 1})  # "escaped" again
        assert ref.flash == "escaped"
        assert led.shown == flash("escaped")[0][0]  # started over, from its word

    asyncio.run(main())
