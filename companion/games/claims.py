"""What the camera makes of a claim, as data every game shares (pure: no I/O, no clock).

A claim is an accepted event that says something the dice must show: Vault Assault's
"Escaped!" (five Escapes among the robber's dice), a stage (its mosaic assembled), the
Arrest (the fourth mosaic). A game names its claims (`Game.claim_of`) and judges one
against a settled reading of the table (`Game.judge_claim`), giving a `Judgement`:

- ``confirmed``: every die the claim needs is read, each surely (at least the
  profile's ``sure`` confidence), and they show what was claimed;
- ``challenged``: the dice the camera reads surely cannot show what was claimed (the
  robber's five dice all read and only four Escapes among them);
- ``cant_see``: neither (a hand over the dice, a die off the mat, glare, a die read
  unsurely). Never a challenge.

The house (companion.claims) asks within `WINDOW_S` of the claim and logs the answer as
a ``claim_check`` event (`check_event`); with ``[camera] claims = "challenge"`` a
challenged claim waits for the table's ``challenge_upheld`` (the verdict is undone) or
``play_on`` (it stands).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OFF, ADVISE, CHALLENGE = "off", "advise", "challenge"
CLAIM_MODES = (OFF, ADVISE, CHALLENGE)

CONFIRMED, CHALLENGED, CANT_SEE = "confirmed", "challenged", "cant_see"
ANSWERS = (CONFIRMED, CHALLENGED, CANT_SEE)

WINDOW_S = 1.0  # the camera answers a claim within this many seconds of it
# The confidence a die's reading must reach to count as sure when a profile says none
# (a profile's own check sets its own: companion.vision.profile `check.sure`).
DEFAULT_SURE = 0.5


@dataclass(frozen=True)
class Claim:
    """One claim the camera can check: `kind` (a game's word: "escape", "stage",
    "arrest"), `event` (the claimed event's number in the game: the state's
    `events_applied` right after it), the claiming `seat` (0-based) and, for a stage,
    the `stage`; `what` says for people what the dice must show ("5 Escapes")."""

    kind: str
    event: int
    seat: int | None
    what: str
    stage: int | None = None
    # The dice sets the claim is about (Vault Assault: the robber's colours, or the
    # cops' red and blue), for the benchmark's and the page's lines.
    sets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judgement:
    """The camera's answer to a claim: `answer` (CONFIRMED, CHALLENGED, CANT_SEE),
    `seen` (how many of what was claimed it reads surely: Escapes, pieces), `needs`
    (how many the claim needs) and one line for the table ("the camera sees 4
    Escapes")."""

    answer: str
    seen: int
    needs: int
    text: str


def check_event(claim: Claim, judgement: Judgement, mode: str) -> dict[str, Any]:
    """The logged `claim_check` event for `claim` judged `judgement` in `mode`
    ("advise" or "challenge": only a challenged claim in "challenge" mode waits for the
    table's answer)."""
    event: dict[str, Any] = {
        "type": "claim_check",
        "claim": claim.kind,
        "event": claim.event,
        "answer": judgement.answer,
        "seen": judgement.seen,
        "needs": judgement.needs,
        "text": judgement.text,
        "mode": mode,
    }
    if claim.seat is not None:
        event["seat"] = claim.seat
    if claim.stage is not None:
        event["stage"] = claim.stage
    return event
