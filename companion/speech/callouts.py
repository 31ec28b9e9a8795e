"""Wires the speaker to the referee: every event the referee handles goes through the
pure `phrases.callouts` (by the game being played) and each phrase to `Speaker.say`,
which returns at once; so does each line an edge raises with `Referee.alert` (the
camera cannot read a die)."""

from __future__ import annotations

from typing import Any

from companion.games.base import Result
from companion.loop import Referee
from companion.speech.phrases import callouts
from companion.speech.player import Speaker


def attach_speaker(referee: Referee, speaker: Speaker) -> None:
    def speak(event: dict[str, Any], result: Result) -> None:
        for phrase in callouts(event, result, referee.game):
            speaker.say(phrase)

    referee.listeners.append(speak)
    referee.speech.append(speaker.say)  # the edges' alerts (Referee.alert)
