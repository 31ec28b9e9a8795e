"""The camera beside the buttons, through the real VisionWorker on a running loop, wired
by the TableBuilder as serve wires it."""

import asyncio

from game_builders import ROW5, new_game

from companion.loop import Referee
from companion.table_builder import CameraParts, TableBuilder


async def settle(pred, timeout=10.0):
    end = asyncio.get_running_loop().time() + timeout
    while not pred():
        if asyncio.get_running_loop().time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


def test_camera_that_will_not_open_is_announced_and_refereeing_goes_on(tmp_path):
    async def main():
        ref = Referee()
        builder = TableBuilder(ref)
        table = await builder.start()
        # some sources fail at once (said by the builder), others on the worker
        cam = builder.camera(CameraParts(str(tmp_path / "no-such-camera.avi")))
        assert await settle(lambda: cam.gone)
        said = list(ref.messages)
        flash = ref.flash
        for ev in (new_game(2), {"type": "heist_hide", "row": ROW5},
                   {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]},
                   {"type": "assault_start"}, {"type": "buzz", "seat": 1}):
            table.post(ev)
        await table.drain()
        cam.stop()
        await table.stop()
        return ref, said, flash

    ref, said, flash = asyncio.run(main())
    assert any(m.startswith("Camera gone (") and "refereeing from the buttons" in m
               for m in said)
    assert flash == "camera_gone"
    assert ref.view().camera == "Camera: GONE (refereeing from the buttons)"
    assert ref.mosaic is None
    assert ref.state.seats[1].escaped == 1


def test_synthetic_camera_feeds_settled_readings_to_the_display():
    async def main():
        ref = Referee()
        builder = TableBuilder(ref)
        table = await builder.start()
        cam = builder.camera(CameraParts("synthetic:3",
                                         {"profile_dir": "calibration/synthetic"}))
        ok = await settle(lambda: cam.readings > 0, timeout=30)
        cam.stop()
        await table.stop()
        return ref, cam, ok

    ref, cam, ok = asyncio.run(main())
    assert ok and not cam.gone
    assert ref.mosaic is not None and set(ref.mosaic) == {1, 2, 3, 4}
    assert ref.view().camera.startswith("Camera: ") and "dice settled" in ref.view().camera
