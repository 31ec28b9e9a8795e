"""The camera beside the buttons, through the real VisionWorker on a running loop, wired
by the TableBuilder as serve wires it."""

import asyncio

import pytest
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
    assert ref.camera_overlay is None
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
    assert ref.camera_overlay is not None and set(ref.camera_overlay) == {1, 2, 3, 4}
    assert ref.view().camera.startswith("Camera: ") and "dice settled" in ref.view().camera


def _solitaire_camera(frames_dir, options):
    async def main():
        ref = Referee()
        builder = TableBuilder(ref)
        table = await builder.start()
        table.post({"type": "new_game", "game": "vault-solitaire", "players": 1,
                    "names": ["Sam"]})
        await table.drain()
        cam = builder.camera(CameraParts(str(frames_dir), {"profile_dir": "", **options}))
        ok = await settle(lambda: cam.gone or "dice settled" in (ref.camera_status or ""),
                          timeout=60)
        flash = ref.flash  # as the settled reading left it (a flash times out)
        await cam.aclose()
        await table.stop()
        return ref, cam, ok, flash

    return asyncio.run(main())


@pytest.mark.parametrize("process", [False, True])
def test_the_camera_reads_pip_dice_with_the_learned_reader_when_the_config_says(
        tmp_path, process):
    import cv2

    from companion.vision.learned import MODEL_DIR, LearnedReader
    from reader_lab.render_dice import render_dice_scene

    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no learned model committed")
    image, _ = render_dice_scene(7_000_003)
    for i in range(12):  # a still table: the same frame, again and again
        cv2.imwrite(str(tmp_path / f"frame-{i:02d}.png"), image)
    read = sorted(LearnedReader()(image), key=lambda d: d.centre)
    pips = " ".join("?" if d.face == "unknown" else d.face for d in read)
    ref, cam, ok, _ = _solitaire_camera(tmp_path, {"reader": "learned", "process": process})
    assert ok and not cam.gone, list(ref.messages)
    assert ref.camera_status.startswith(f"Camera: {len(read)} dice settled, pips {pips}")
    if not process:  # the thread's pipeline holds the learned reader itself
        assert isinstance(cam.worker.pipeline.pip_reader, LearnedReader)


def test_an_unknown_pip_reader_is_the_camera_gone_in_one_line(tmp_path):
    ref, cam, ok, _ = _solitaire_camera(tmp_path, {"reader": "yolo", "process": False})
    assert cam.gone
    assert ("Camera gone (unknown pip reader 'yolo' (expected one of pips, learned)): "
            "refereeing from the buttons") in ref.messages


def test_five_dice_one_unread_by_the_learned_reader_reach_the_table_as_a_nudge(tmp_path):
    import cv2

    from companion.vision.learned import MODEL_DIR, LearnedReader
    from reader_lab.render_dice import render_dice_scene

    if not (MODEL_DIR / "detector.onnx").is_file():
        pytest.skip("no learned model committed")
    reader = LearnedReader()
    for seed in range(7_000_040, 7_000_200):  # a rendered roll of five, one not read
        image, _ = render_dice_scene(seed)
        faces = [d.face for d in sorted(reader(image), key=lambda d: d.centre)]
        if len(faces) == 5 and faces.count("unknown") == 1:
            break
    else:
        raise AssertionError("no rendered roll of five with one die unread")
    for i in range(12):
        cv2.imwrite(str(tmp_path / f"frame-{i:02d}.png"), image)
    ref, cam, ok, flash = _solitaire_camera(tmp_path, {"reader": "learned", "process": False})
    shown = " ".join("?" if f == "unknown" else f for f in faces)
    assert ok and not cam.gone
    assert (f"Camera cannot read 1 of the 5 dice ({shown}): nudge it or enter the roll"
            in ref.messages)
    assert flash == "dice_unread"
    assert ref.state.seen == ()  # four faces are no roll: nothing proposed


@pytest.mark.parametrize("broken", ["missing", "corrupt"])
def test_a_learned_model_that_will_not_load_is_the_camera_gone_in_one_line(
        tmp_path, monkeypatch, broken):
    import shutil

    from companion.vision import learned

    models = tmp_path / "models"
    if broken == "corrupt":  # the committed folder with a detector cut short
        shutil.copytree(learned.MODEL_DIR, models)
        det = models / "detector.onnx"
        det.write_bytes(det.read_bytes()[:1000])
    monkeypatch.setattr(learned, "MODEL_DIR", models)
    frames = tmp_path / "frames"
    frames.mkdir()
    ref, cam, ok, _ = _solitaire_camera(frames, {"reader": "learned", "process": False})
    gone = [m for m in ref.messages if m.startswith("Camera gone (")]
    assert cam.gone and len(gone) == 1 and "\n" not in gone[0], list(ref.messages)
    assert str(models) in gone[0] and gone[0].endswith("): refereeing from the buttons")
    assert ref.submit({"type": "roll", "dice": [1, 2, 3, 4, 5]}).rejection is None
