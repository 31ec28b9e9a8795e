"""Numbers in words, for the speaker: "four tenths of a millisecond", not "0.4 ms"."""

from __future__ import annotations

ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """A whole number from 0 to 999,999,999 in words ("one hundred twenty thousand")."""
    if n < 0:
        return "minus " + number_words(-n)
    if n < 20:
        return ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS[tens] + ("" if ones == 0 else "-" + ONES[ones])
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return ONES[hundreds] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    for size, name in ((1_000_000, "million"), (1000, "thousand")):
        if n >= size:
            high, rest = divmod(n, size)
            return number_words(high) + f" {name}" + ("" if rest == 0 else " " + number_words(rest))
    raise AssertionError("unreachable")


def _plural(n: int, unit: str) -> str:
    return f"{number_words(n)} {unit}{'' if n == 1 else 's'}"


def margin_words(ns: int) -> str:
    """A photo-finish margin, in words a table can take in at once:
    400_000 -> "four tenths of a millisecond", 30_000 -> "thirty microseconds",
    2_500_000 -> "two point five milliseconds", 12_000_000 -> "twelve milliseconds"."""
    ns = abs(int(ns))
    if ns < 1000:
        return _plural(ns, "nanosecond")
    if ns < 100_000:
        return _plural(round(ns / 1000), "microsecond")
    if ns < 950_000:
        tenths = round(ns / 100_000)
        return f"{number_words(tenths)} tenth{'' if tenths == 1 else 's'} of a millisecond"
    if ns < 9_950_000:
        tenths = round(ns / 100_000)
        whole, frac = divmod(tenths, 10)
        if frac == 0:
            return _plural(whole, "millisecond")
        return f"{number_words(whole)} point {ONES[frac]} milliseconds"
    if ns < 999_500_000:
        return _plural(round(ns / 1_000_000), "millisecond")
    tenths = round(ns / 100_000_000)
    whole, frac = divmod(tenths, 10)
    if frac == 0:
        return _plural(whole, "second")
    return f"{number_words(whole)} point {ONES[frac]} seconds"
