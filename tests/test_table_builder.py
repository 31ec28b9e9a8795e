"""The one table builder (companion.table_builder): a table wired from injected parts."""

from __future__ import annotations

import asyncio

from companion.hardware.arbitration import ArbiterConfig
from companion.loop import Referee
from companion.table_builder import ButtonParts, CameraParts, TableBuilder


def test_buttons_press_reaches_the_referee_through_the_built_table() -> None:
    async def main() -> list[dict]:
        referee = Referee()
        seen: list[dict] = []
        referee.listeners.append(lambda event, result: seen.append(event))
        builder = TableBuilder(referee, stamp_missing=False)
        table = await builder.start()
        buzzers, buttons, warning = builder.buttons(
            ButtonParts(arbiter=ArbiterConfig(), virtual_clock=True, watch_stuck=False)
        )
        assert warning is None  # a script's presses: no interpreter warning asked
        assert buzzers.table is table and len(buttons.devices) == 4
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, buttons.press, 2, 1_000)
        await asyncio.sleep(0)
        buzzers.flush()
        await table.drain()
        buttons.close()
        await table.stop()
        return seen

    seen = asyncio.run(main())
    assert [e.get("type") for e in seen] == ["buzz"]
    assert seen[0]["seat"] == 2


def test_a_camera_that_will_not_open_is_announced_and_refereeing_goes_on(tmp_path) -> None:
    async def main() -> Referee:
        referee = Referee()
        builder = TableBuilder(referee)
        await builder.start()
        cam = builder.camera(CameraParts(str(tmp_path / "no-such-camera.avi")))
        for _ in range(200):
            if cam.gone:
                break
            await asyncio.sleep(0.01)
        await cam.aclose()
        await builder.table.stop()
        return referee

    referee = asyncio.run(main())
    assert referee.camera_status and "GONE" in referee.camera_status
