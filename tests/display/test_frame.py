import pytest

from companion.display.frame import Frame


def test_pixels_round_trip_and_bounds():
    f = Frame.from_pixels([(0, 0), (31, 7), (40, 2), (-1, 0)])
    assert f.lit() == [(0, 0), (31, 7)]
    assert f.pixel(31, 7) and not f.pixel(32, 7)
    assert f.count() == 2
    assert f.inverted().count() == 32 * 8 - 2


def test_to_lines_and_image():
    f = Frame.from_pixels([(1, 0)])
    assert f.to_lines("#", ".")[0].startswith(".#.")
    img = f.to_image()
    assert img.size == (32, 8) and img.getpixel((1, 0)) and not img.getpixel((0, 0))


def test_frames_are_immutable_values():
    f = Frame.from_pixels([(2, 2)])
    assert f == Frame.from_pixels([(2, 2)])
    with pytest.raises(AttributeError):
        f.rows = ()  # type: ignore[misc]
