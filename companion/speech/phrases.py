"""What the box says out loud: a pure function from what the referee did (the event
and its Result, judged by the game being played) to a few short phrases.

A game says what it likes (`Game.callouts`: Vault Assault's shouts, verdicts and
winner); the house says the others' spoken outputs (`Game.spoken`), each its own text
without seat tags, and "Undone." for an undo; rejections stay on the screen. Here too:
the camera's unread dice, the pairing PIN and the page's address, said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from companion.games.base import Result
from companion.speech.numbers import number_words

SEAT_TAG = re.compile(r" \(seat \d+\)")


def callouts(event: Any, result: Result, game: Any = None) -> list[str]:
    """The phrases to say for one event the referee handled (accepted or rejected) in
    `game` (a companion.games.registry.Game; None: the game of the result's state)."""
    if not isinstance(event, Mapping):
        return []
    if game is None:
        from companion.games import registry

        game = registry.of_state(result.state)
    if game.callouts is not None:
        return game.callouts(event, result)  # type: ignore[no-any-return]
    return spoken_outputs(game.spoken, result)


def spoken_outputs(spoken: frozenset[str], result: Result) -> list[str]:
    """Each output named in `spoken`, its text without seat tags ("Act II" read "Act
    two"), and "Undone." for an undo; nothing for a rejection."""
    if result.rejection:
        return []
    said: list[str] = []
    for out in result.outputs:
        if out.name == "undo":
            said.append("Undone.")
        elif out.name in spoken and out.text:
            text = SEAT_TAG.sub("", out.text).replace("Act II", "Act two")
            said.append(text if text.endswith(("!", ".", "?")) else text + ".")
    return said


def unread_phrase(count: int) -> str:
    """The camera's dice it cannot read, said: "The camera cannot read one die: nudge
    it, or enter the roll."."""
    which = "die: nudge it" if count == 1 else "dice: nudge them"
    return f"The camera cannot read {number_words(count)} {which}, or enter the roll."


def pin_phrase(pin: str) -> str:
    """A pairing PIN read digit by digit: "The pin is four, seven, one, nine."."""
    digits = ", ".join(number_words(int(c)) if c.isdigit() else c for c in pin)
    return f"The pin is {digits}."


SPOKEN_MARKS = {".": "dot", ":": "colon", "-": "dash"}


def address_words(host: str) -> str:
    """A host as it is said: words whole, digits one by one, marks named:
    "vault.local" -> "vault dot local", "192.168.1.20" -> "one nine two dot ...".
    """
    words: list[str] = []
    for part in re.findall(r"[A-Za-z]+|\d|[^A-Za-z\d]", host):
        if part.isdigit():
            words.append(number_words(int(part)))
        elif part.isalpha():
            words.append(part.lower())
        elif part in SPOKEN_MARKS:
            words.append(SPOKEN_MARKS[part])
    return " ".join(words)


def page_phrase(host: str, port: int, pin: str) -> str:
    """Where the table page is and its PIN: "The table page is at vault dot local, port
    eight zero eight zero. The pin is four, seven, one, nine." (port 80 not said)."""
    where = address_words(host)
    if port != 80:
        where += ", port " + " ".join(number_words(int(c)) for c in str(port))
    return f"The table page is at {where}. {pin_phrase(pin)}"
