from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.display.animations import (
    KINDS,
    WORDS,
    blink,
    duration_ms,
    flash,
    scroll_text,
    word,
)
from companion.display.bitfont import FONT_3X5, FONT_5X7, centred_text, render_text
from companion.display.frame import Frame


def glyph_frame(ch: str, font=FONT_5X7) -> list[str]:
    return render_text(ch, font).to_lines("#", ".")


def test_5x7_letter_shapes() -> None:
    lines = glyph_frame("A")
    assert lines[:7] == [
        ".###" + "." * 28,
        "#...#" + "." * 27,
        "#...#" + "." * 27,
        "#...#" + "." * 27,
        "#####" + "." * 27,
        "#...#" + "." * 27,
        "#...#" + "." * 27,
    ]
    assert lines[7] == "." * 32


def test_proportional_widths() -> None:
    assert FONT_5X7.text_width("!") == 1
    assert FONT_5X7.text_width("I") == 3
    assert FONT_5X7.text_width("BANG!") == 4 * 5 + 1 + 4
    assert FONT_3X5.text_width("HOSTAGE!") == 7 * 3 + 1 + 7
    assert FONT_5X7.text_width("") == 0


def test_every_glyph_is_within_its_cell() -> None:
    for font in (FONT_5X7, FONT_3X5):
        for ch, rows in font.glyphs.items():
            assert len(rows) == font.height, ch
            assert all(0 <= r < 1 << font.width for r in rows), ch
            assert any(rows), ch


def test_unknown_characters_are_question_marks_and_lowercase_is_upper() -> None:
    assert render_text("~") == render_text("?")
    assert render_text("bang") == render_text("BANG")


def test_text_is_clipped_not_wrapped() -> None:
    frame = render_text("BANG!", x=-3)
    assert frame.width == 32
    assert frame.pixel(0, 0)  # B's top bar, columns 0-3, seen from column 3 on
    assert render_text("BANG!", x=40).count() == 0


def test_centred_text_is_centred() -> None:
    frame = centred_text("GO!")
    xs = [x for x, _ in frame.lit()]
    left, right = min(xs), 31 - max(xs)
    assert abs(left - right) <= 1


@pytest.mark.parametrize("kind", KINDS)
def test_every_flash_is_short_and_ends_on_its_word(kind: str) -> None:
    steps = flash(kind)
    assert steps
    assert all(isinstance(f, Frame) and f.width == 32 and f.height == 8 for f, _ in steps)
    assert all(ms > 0 for _, ms in steps)
    assert duration_ms(steps) <= 4500
    last = steps[-1][0]
    assert last.count() > 0
    text = WORDS[kind]
    # The held word: 5x7 if it fits, else 3x5 (perhaps without "!" or after word 1).
    candidates = [centred_text(text), centred_text(text, FONT_3X5),
                  centred_text(text.rstrip("!"), FONT_3X5),
                  centred_text(text.split()[0] + ("" if text.split()[0].endswith("!") else "!"),
                               FONT_3X5)]
    assert last in candidates


def test_short_words_are_big_and_long_words_scroll() -> None:
    bang = flash("bang")
    assert bang[-1][0] == centred_text("BANG!")
    assert len(bang) < 15
    assert not any(f == render_text("BANG!", x=x) for f, _ in bang for x in (0, 1, 2, 4, 5))
    hostage = flash("hostage")
    scrolled = scroll_text("HOSTAGE!")
    # The scroll is inside the animation, frame by frame, in order.
    frames = [f for f, _ in hostage]
    start = frames.index(scrolled[0][0])
    assert frames[start : start + len(scrolled)] == [f for f, _ in scrolled]
    assert hostage[-1][0] == centred_text("HOSTAGE!", FONT_3X5)


def test_arrested_drops_its_exclamation_mark_to_fit_in_3x5() -> None:
    assert FONT_3X5.text_width("ARRESTED!") > 32
    assert flash("arrested")[-1][0] == centred_text("ARRESTED", FONT_3X5)


def test_scroll_enters_right_and_leaves_left() -> None:
    steps = scroll_text("ESCAPED!")
    assert steps[0][0].count() == 0
    assert steps[-1][0].count() == 0
    assert any(f.count() > 0 for f, _ in steps)
    # Each step moves the text exactly one column left (a new column enters at x=31).
    keep = (1 << 31) - 1
    for i in (10, 30):
        f1, f2 = steps[i][0], steps[i + 1][0]
        assert [r >> 1 for r in f1.rows] == [r & keep for r in f2.rows]
        assert f1 != f2


def test_detail_follows_the_word() -> None:
    steps = flash("escaped", detail="SEAT 1")
    assert steps[-1][0] == centred_text("SEAT 1")
    assert len(steps) > len(flash("escaped"))


def test_photo_finish_has_a_camera_flash() -> None:
    frames = [f for f, _ in flash("photo_finish")]
    full = Frame.blank().inverted()
    assert frames.count(full) >= 2


def test_blink_alternates_with_the_inverse() -> None:
    f = centred_text("GO!")
    assert [x for x, _ in blink(f, times=2)] == [f.inverted(), f, f.inverted(), f]


def test_unknown_kind_is_a_one_line_error() -> None:
    with pytest.raises(ValueError, match="unknown flash kind 'boom'"):
        flash("boom")


def test_other_frame_sizes() -> None:
    steps = flash("bang", width=64)
    assert all(f.width == 64 for f, _ in steps)
    assert steps[-1][0] == centred_text("BANG!", width=64)


@settings(deadline=None)  # timing is for benchmarks: this ran over 200 ms under load
@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!? ", max_size=20))
def test_word_always_ends_readable_or_scrolled(text: str) -> None:
    steps = word(text)
    assert steps
    if FONT_5X7.text_width(text) <= 32:
        assert steps == [(centred_text(text), steps[0][1])]
    else:
        assert [f for f, _ in steps[: len(scroll_text(text))]] == [
            f for f, _ in scroll_text(text)
        ]


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_frame_of_every_flash_is_its_word(kind: str) -> None:
    steps = flash(kind)
    assert steps[0][0] == steps[-1][0]  # the word as it is finally held
    assert steps[0][0].count() > 0 and steps[0][1] >= 200


def test_flashes_are_built_once_and_handed_out_as_copies() -> None:
    a, b = flash("escaped"), flash("escaped")
    assert a == b and a is not b
    a.clear()
    assert flash("escaped") == b
