import pytest

from companion.speech.numbers import margin_words, number_words


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (7, "seven"),
        (19, "nineteen"),
        (40, "forty"),
        (42, "forty-two"),
        (100, "one hundred"),
        (305, "three hundred five"),
        (40_000, "forty thousand"),
        (125_500, "one hundred twenty-five thousand five hundred"),
        (2_000_001, "two million one"),
    ],
)
def test_number_words(n, words):
    assert number_words(n) == words


@pytest.mark.parametrize(
    ("ns", "words"),
    [
        (400_000, "four tenths of a millisecond"),
        (100_000, "one tenth of a millisecond"),
        (30_000, "thirty microseconds"),
        (1_000, "one microsecond"),
        (850, "eight hundred fifty nanoseconds"),
        (960_000, "one millisecond"),
        (2_500_000, "two point five milliseconds"),
        (12_000_000, "twelve milliseconds"),
        (1_500_000_000, "one point five seconds"),
        (-400_000, "four tenths of a millisecond"),
    ],
)
def test_margin_words(ns, words):
    assert margin_words(ns) == words
