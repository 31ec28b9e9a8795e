"""The mine cache (issue 9w): a teacher's mined boxes stored once, read back only for the
same teacher files, photos and settings; a broken file is mined again."""

from __future__ import annotations

import numpy as np
import pytest

from reader_lab import mine_cache


class _Photos:
    """As RealImages holds train photos: encoded bytes, boxes, faces; set names; keys."""

    def __init__(self, n: int = 3) -> None:
        self.items = [(bytes([i]) * 10, np.array([[i, 0, i + 5, 5]], np.float32),
                       np.array([i % 6 + 1], np.int64)) for i in range(n)]
        self.sets = ["trays-train"] * n
        self.keys = [f"t/{i}.jpg" for i in range(n)]
        self.false_peaks: list = []
        self.hard_dice: list = []
        self.missed: list = []

    def __len__(self) -> int:
        return len(self.items)


def _teacher(tmp_path, content: bytes = b"detector"):
    d = tmp_path / "teacher"
    d.mkdir(exist_ok=True)
    (d / "detector.onnx").write_bytes(content)
    (d / "reader.json").write_text("{}")
    return d


def _miner(real, calls: list):
    def mine():
        calls.append(1)
        real.false_peaks = [np.full((i, 4), i, np.float32) for i in range(len(real))]
    return mine


def test_a_second_run_reads_what_the_first_mined_without_mining(tmp_path):
    cache, teacher, lines = tmp_path / "cache", _teacher(tmp_path), []
    first, calls = _Photos(), []
    mine_cache.mined(cache, "false_peaks", {"threshold": 0.3}, teacher, first,
                     _miner(first, calls), log=lines.append)
    again, calls2 = _Photos(), []
    mine_cache.mined(cache, "false_peaks", {"threshold": 0.3}, teacher, again,
                     lambda: calls2.append(1), log=lines.append)
    assert calls == [1] and calls2 == []
    assert [a.tolist() for a in again.false_peaks] == [a.tolist() for a in first.false_peaks]
    assert all(a.dtype == np.float32 and a.shape[1:] == (4,) for a in again.false_peaks)
    assert "stored in the mine cache" in lines[0] and "read from the mine cache" in lines[1]
    assert lines[1].endswith(": 3")  # boxes: 0 + 1 + 2


@pytest.mark.parametrize("change", ["teacher", "settings", "label", "photo", "more photos"])
def test_any_change_of_input_mines_again(tmp_path, change):
    cache, teacher = tmp_path / "cache", _teacher(tmp_path)
    real, calls = _Photos(), []
    mine_cache.mined(cache, "false_peaks", {"threshold": 0.3}, teacher, real,
                     _miner(real, calls), log=lambda m: None)
    settings = {"threshold": 0.3}
    real = _Photos(4 if change == "more photos" else 3)
    if change == "teacher":
        _teacher(tmp_path, b"another detector")
    elif change == "settings":
        settings = {"threshold": 0.2}
    elif change == "label":
        real.items[1][2][0] = 6 if real.items[1][2][0] != 6 else 1
    elif change == "photo":
        real.items[2] = (b"other bytes", *real.items[2][1:])
    mine_cache.mined(cache, "false_peaks", settings, teacher, real, _miner(real, calls),
                     log=lambda m: None)
    assert calls == [1, 1] and len(list(cache.glob("*.npz"))) == 2


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 cut short", b"not a zip at all"])
def test_a_broken_cache_file_is_one_line_and_mined_again(tmp_path, content):
    cache, teacher = tmp_path / "cache", _teacher(tmp_path)
    real, calls, lines = _Photos(), [], []
    mine_cache.mined(cache, "false_peaks", {}, teacher, real, _miner(real, calls),
                     log=lambda m: None)
    (path,) = cache.glob("*.npz")
    path.write_bytes(content)
    real = _Photos()
    mine_cache.mined(cache, "false_peaks", {}, teacher, real, _miner(real, calls),
                     log=lines.append)
    assert calls == [1, 1]
    assert lines[0].startswith(f"mine cache {path}: unreadable (") and "\n" not in lines[0]
    assert lines[0].endswith("); mining again")
    assert len(real.false_peaks) == 3
    # written again whole: the next run reads it
    again = _Photos()
    mine_cache.mined(cache, "false_peaks", {}, teacher, again, lambda: calls.append(1),
                     log=lambda m: None)
    assert calls == [1, 1] and len(again.false_peaks) == 3


def test_a_file_of_another_kind_or_count_is_refused_naming_what_it_holds(tmp_path):
    path = tmp_path / "x.npz"
    mine_cache.save(path, "missed", [1, 0])
    with pytest.raises(ValueError, match="holds missed for 2 photos, not false_peaks for 2"):
        mine_cache.load(path, "false_peaks", 2)
    with pytest.raises(ValueError, match="holds missed for 2 photos, not missed for 3"):
        mine_cache.load(path, "missed", 3)


def test_each_kind_comes_back_as_mined(tmp_path):
    for kind, per_photo in (
            ("false_peaks", [np.zeros((0, 4), np.float32), np.ones((2, 4), np.float32)]),
            ("die_boxes", [np.arange(10, dtype=np.float32).reshape(2, 5)]),
            ("hard_dice", [np.array([True, False]), np.zeros(0, bool)]),
            ("soft_dice", [np.full((1, 7), 1 / 7, np.float32)]),
            ("missed", [0, 3, 1])):
        path = tmp_path / f"{kind}.npz"
        mine_cache.save(path, kind, per_photo)
        back = mine_cache.load(path, kind, len(per_photo))
        if kind == "missed":
            assert back == per_photo and all(type(v) is int for v in back)
        else:
            assert all(a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
                       for a, b in zip(back, per_photo, strict=True))


def test_counts_are_boxes_or_dice_as_the_miners_say():
    assert mine_cache.count("false_peaks", [np.zeros((2, 4)), np.zeros((0, 4))]) == 2
    assert mine_cache.count("hard_dice", [np.array([True, False, True])]) == 2
    assert mine_cache.count("missed", [0, 3, 1]) == 4


def test_without_a_cache_folder_it_just_mines(tmp_path):
    real, calls = _Photos(), []
    mine_cache.mined(None, "false_peaks", {}, _teacher(tmp_path), real, _miner(real, calls))
    assert calls == [1] and len(real.false_peaks) == 3


def test_a_kind_no_miner_fills_is_refused():
    with pytest.raises(ValueError, match="no miner fills 'boxes'"):
        mine_cache.cache_file("/tmp", "boxes", {}, "m", "p")


def _draw(calls: list, shift: int = 0):
    def draw(i: int):
        calls.append(i)
        img = np.full((8, 8, 3), i + shift, np.uint8)
        return img, np.full((i % 3, 4), i, np.float32), np.arange(i % 3, dtype=np.int64) + 1
    return draw


def test_rendered_scenes_come_back_as_drawn_without_drawing_them_again(tmp_path):
    first, lines = [], []
    drawn = mine_cache.scenes(tmp_path, 5, 3, True, True, 8, _draw(first), log=lines.append)
    again = []
    back = mine_cache.scenes(tmp_path, 5, 3, True, True, 8, _draw(again), log=lines.append)
    assert first == [0, 1, 2, 3, 4] and again == [0]  # only the first, to check it
    for (a, b, c), (x, y, z) in zip(drawn, back, strict=True):
        assert np.array_equal(a, x) and a.dtype == x.dtype
        assert np.array_equal(b, y) and y.dtype == np.float32 and y.shape[1:] == (4,)
        assert np.array_equal(c, z) and z.dtype == np.int64
    assert "stored in the cache" in lines[0] and "read from the cache" in lines[1]
    # another seed, count or kind is another file
    mine_cache.scenes(tmp_path, 5, 4, True, True, 8, _draw([]), log=lambda m: None)
    mine_cache.scenes(tmp_path, 4, 3, True, True, 8, _draw([]), log=lambda m: None)
    mine_cache.scenes(tmp_path, 5, 3, False, True, 8, _draw([]), log=lambda m: None)
    assert len(list(tmp_path.glob("rendered-*.npz"))) == 4


def test_rendered_scenes_the_renderer_now_draws_otherwise_are_drawn_again(tmp_path):
    mine_cache.scenes(tmp_path, 3, 0, False, True, 8, _draw([]), log=lambda m: None)
    calls, lines = [], []
    items = mine_cache.scenes(tmp_path, 3, 0, False, True, 8, _draw(calls, shift=7),
                              log=lines.append)
    assert lines[0].endswith("(its first scene is not the one drawn now); drawing again")
    assert calls == [0, 0, 1, 2] and int(items[2][0][0, 0, 0]) == 9


@pytest.mark.parametrize("content", [b"", b"garbage", b"PK\x03\x04"])
def test_a_broken_scene_file_is_one_line_and_drawn_again(tmp_path, content):
    mine_cache.scenes(tmp_path, 2, 0, False, False, 8, _draw([]), log=lambda m: None)
    (path,) = tmp_path.glob("rendered-*.npz")
    path.write_bytes(content)
    calls, lines = [], []
    items = mine_cache.scenes(tmp_path, 2, 0, False, False, 8, _draw(calls), log=lines.append)
    assert calls == [0, 1] and len(items) == 2
    assert lines[0].startswith(f"render cache {path}: unreadable (") and "\n" not in lines[0]


def test_without_a_cache_folder_scenes_are_just_drawn():
    calls = []
    assert len(mine_cache.scenes(None, 3, 0, False, False, 8, _draw(calls))) == 3
    assert calls == [0, 1, 2]
