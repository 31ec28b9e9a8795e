"""The camera checking the table's claims (`[camera] claims`), knowing no game.

A press is judged at once by the referee, as always. `ClaimWatch` hears every accepted
event (a referee listener), asks the game whether it is a claim (`Game.claim_of`) and
judges it (`Game.judge_claim`) against the camera's latest settled reading, then
against each new one, for `WINDOW_S` seconds:

- confirmed or challenged: the answer is posted at once as a `claim_check` event (the
  table's queue: logged like any event, judged by the game, said on the LED, the page
  and the speaker);
- "can't see" on every reading until the window closes: posted as "can't see" then.

Modes (companion.games.claims): "off" checks nothing; "advise" says what the camera
sees; "challenge" also opens a challenge the table answers ("challenge upheld" or
"play on"), and only with a calibration profile whose own check passed (else the
table is told once and the camera advises). A camera that goes turns the checks off
(its one message says so).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from companion.games.base import Result
from companion.games.claims import (
    ADVISE,
    CANT_SEE,
    CHALLENGE,
    CLAIM_MODES,
    DEFAULT_SURE,
    OFF,
    WINDOW_S,
    Claim,
    Judgement,
    check_event,
)

log = logging.getLogger(__name__)

MAX_PENDING = 16  # claims waiting for the camera at once (a table makes a few a second)


@dataclass
class _Pending:
    claim: Claim
    last: Judgement | None = None
    timer: Any = None


def effective_mode(asked: str, check_passed: bool | None) -> tuple[str, str | None]:
    """The mode the camera works in for `asked` ([camera] claims), given whether the
    calibration profile's own check passed (None: no profile, or one never checked),
    and the line to tell the table when it differs from what was asked."""
    if asked not in CLAIM_MODES:
        raise ValueError(f"claims must be one of {', '.join(CLAIM_MODES)}, got {asked!r}")
    if asked == CHALLENGE and not check_passed:
        why = " (this one's did not)" if check_passed is False else ""
        return ADVISE, ('Claims: "challenge" needs a calibration profile whose own check '
                        f"passed{why}; the camera advises instead "
                        "(companion calibrate --check-only)")
    return asked, None


class ClaimWatch:
    """Checks claims for one camera. `post` puts an event on the table's queue;
    `notice` tells the table one line; `mode`, `sure` as the module says."""

    def __init__(
        self,
        referee: Any,
        post: Callable[[dict[str, Any]], None] | None,
        *,
        mode: str = ADVISE,
        sure: float = DEFAULT_SURE,
        dice: Any = None,
        window_s: float = WINDOW_S,
    ) -> None:
        if mode not in CLAIM_MODES:
            raise ValueError(f"claims must be one of {', '.join(CLAIM_MODES)}, got {mode!r}")
        self.referee = referee
        self.post = post
        self.mode = mode
        self.sure = sure
        self.dice = dice
        self.window_s = window_s
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reading: Any = None  # the latest settled reading
        self.pending: list[_Pending] = []
        self.posted = 0
        self.dropped = 0

    @property
    def on(self) -> bool:
        return self.mode != OFF and self.post is not None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hear the referee's accepted events from now on."""
        self.loop = loop
        self.referee.claims_mode = self.mode
        if self.on_event not in self.referee.listeners:
            self.referee.listeners.append(self.on_event)

    def off(self) -> None:
        """No more checks (the camera went): what waits is let go unsaid."""
        self.mode = OFF
        self.referee.claims_mode = OFF
        for p in self.pending:
            if p.timer is not None:
                p.timer.cancel()
        self.pending.clear()

    # ---- on the loop's thread
    def on_event(self, event: Mapping[str, Any], result: Result) -> None:
        if not self.on or result.rejection or not isinstance(event, Mapping):
            return
        game = self.referee.game
        if game.claim_of is None or game.judge_claim is None:
            return
        before = getattr(result.state, "prev", None)
        claim = game.claim_of(before, event, result.state)
        if claim is None:
            return
        if len(self.pending) >= MAX_PENDING:
            self.dropped += 1
            log.warning("claims: %d claims wait already; not checking event %d",
                        MAX_PENDING, claim.event)
            return
        pending = _Pending(claim)
        self.pending.append(pending)
        if self.loop is not None:
            pending.timer = self.loop.call_later(self.window_s, self._expire, pending)
        if self.reading is not None:
            self._judge(pending, self.reading)

    def on_reading(self, reading: Any) -> None:
        self.reading = reading
        for pending in list(self.pending):
            self._judge(pending, reading)

    def _judge(self, pending: _Pending, reading: Any) -> None:
        game = self.referee.game
        if game.judge_claim is None:
            return
        try:
            judgement = game.judge_claim(pending.claim, reading, self.dice, self.sure,
                                         self.referee.state)
        except Exception:  # a bug in a judge must not stop the camera or the referee
            log.exception("claims: judging event %d failed", pending.claim.event)
            return
        pending.last = judgement
        if judgement.answer != CANT_SEE:
            self._answer(pending, judgement)

    def _expire(self, pending: _Pending) -> None:
        if pending in self.pending:
            last = pending.last or Judgement(CANT_SEE, 0, 0,
                                             "the camera had no settled view of the dice")
            self._answer(pending, last)

    def _answer(self, pending: _Pending, judgement: Judgement) -> None:
        if pending.timer is not None:
            pending.timer.cancel()
        if pending in self.pending:
            self.pending.remove(pending)
        if self.post is not None and self.mode != OFF:
            self.posted += 1
            self.post(check_event(pending.claim, judgement, self.mode))
