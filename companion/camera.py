"""The camera beside the buttons.

A VisionWorker reads frames off the event loop and hands settled readings back with
call_soon_threadsafe. Each reading goes to the game being played: its own reader
(`Game.camera_sense`: Vault Assault's stage mosaics) or the house's reading of the
pip dice (`PipSense`). What it makes of the reading (a `Seen`) is said, raised,
proposed and drawn here, knowing no game. The referee never takes a verdict from the
camera: the buttons and the table's events decide. If the camera goes, the companion
says so and carries on from the buttons.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from companion.claims import ClaimWatch, effective_mode
from companion.games.camera_sense import CameraSense, Seen
from companion.games.claims import DEFAULT_SURE, OFF
from companion.games.registry import Game
from companion.loop import Referee
from companion.speech.phrases import unread_phrase
from companion.vision.readers import DEFAULT_PIP_READER
from companion.vision.types import UNKNOWN, FrameReading, box_side

log = logging.getLogger(__name__)


class CameraInput:
    def __init__(
        self,
        referee: Referee,
        source: Any,
        *,
        profile_dir: str = "",
        fps: float = 30.0,
        threads: int | None = 1,
        nice: int = 10,
        gate: bool = True,
        process: bool = True,
        post: Any = None,
        reader: str = DEFAULT_PIP_READER,
        claims: str = OFF,
    ) -> None:
        self.referee = referee
        # `[camera] claims`: what the camera does with the table's claims (asked; the
        # mode it works in is `watch.mode`, see companion.claims.effective_mode)
        self.claims = claims
        self.watch: ClaimWatch | None = None
        # where an event the camera proposes goes (the table's queue, like a typed
        # line); None: the camera proposes nothing
        self.post = post
        self.process = process  # the worker in a child process (else a thread here)
        self.reader = reader  # the pip dice's reader, by name (companion.vision.readers)
        self.fps = fps
        self.threads = threads
        self.nice = nice
        self.gate = gate
        self.source_spec = source
        self.profile_dir = profile_dir
        self.worker: Any = None
        self.gone = False
        self.readings = 0
        self._dice: Any = None
        self._sense: tuple[Game, CameraSense] | None = None  # the game's reader

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the vision thread. Whatever goes wrong here (a profile that will not
        load, a source spec that names nothing) is a camera failure: one line in the
        journal, "CAMERA GONE" on the table, and the game goes on from the buttons.
        Failures on the thread (open, read) arrive through the worker's on_camera_gone."""
        try:
            self._start(loop)
        except Exception as exc:
            log.error("camera gone: %s", _first_line(exc))
            self.on_gone(exc)
            return
        self._watch_claims(loop)

    def _watch_claims(self, loop: asyncio.AbstractEventLoop) -> None:
        """Check the table's claims (`[camera] claims`), with the profile's own check
        deciding whether "challenge" may be on and how sure a die must be read."""
        if self.claims == OFF or self.gone:
            return
        check = None
        if self.profile_dir:
            try:
                from companion.vision.profile_head import profile_check

                check = profile_check(self.profile_dir)
            except Exception as exc:  # the camera runs; only "challenge" needs the check
                log.warning("claims: the profile's check unreadable: %s", _first_line(exc))
        mode, why = effective_mode(self.claims, None if check is None else check.passed)
        if why is not None:
            self.referee.notice(why)
        self.watch = ClaimWatch(self.referee, self.post, mode=mode,
                                sure=check.sure if check is not None else DEFAULT_SURE,
                                dice=self._dice)
        self.watch.attach(loop)

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        # OpenCV and numpy are imported only where frames are read: in the camera's
        # process that is the child, so the referee's own process never loads them for
        # it (9 MiB less PSS for serve with the camera as a process)
        from companion.vision.readers import check_pip_reader

        check_pip_reader(self.reader)
        # A source spec (config/command line), or a FrameSource already made.
        spec = self.source_spec
        if self.process:
            from companion.vision.process import VisionProcess

            if self.profile_dir:  # the child loads it whole; here its dice are enough
                from companion.vision.profile_head import profile_dice

                self._dice = profile_dice(self.profile_dir)
            self.worker = VisionProcess(
                spec,
                loop,
                self.on_reading,
                on_camera_gone=self.on_gone,
                on_frame_error=self.on_frame_error,
                profile_dir=self.profile_dir,
                pips=not self.profile_dir,  # a profile: a symbol-dice table, no pip reader
                max_fps=self.fps,
                threads=self.threads or 1,
                nice=self.nice,
                gate=self.gate,
                reader=self.reader,
            )
            self.worker.start()
            return
        from companion.vision.frames import open_source
        from companion.vision.pipeline import Pipeline
        from companion.vision.readers import load_pip_reader
        from companion.vision.worker import ChangeGate, VisionWorker

        profile = None
        if self.profile_dir:
            from companion.vision.profile import load_profile

            profile = load_profile(self.profile_dir)
            self._dice = getattr(profile, "dice", None)
        source = spec if hasattr(spec, "read") and hasattr(spec, "open") else open_source(spec)
        self.worker = VisionWorker(
            source,
            loop,
            self.on_reading,
            on_camera_gone=self.on_gone,
            on_frame_error=self.on_frame_error,
            # With a profile this is a symbol-dice table (Vault Assault): no pip reader.
            pipeline=Pipeline(profile=profile, pips=profile is None,
                              pip_reader=None if profile is not None
                              else load_pip_reader(self.reader, self.threads or 1)),
            max_fps=self.fps,
            threads=self.threads,
            nice=self.nice,
            gate=ChangeGate() if self.gate else None,
        )
        self.worker.start()

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()

    async def aclose(self) -> None:
        """Stop without blocking the loop (a camera read may take a while to give up)."""
        if self.worker is not None:
            await self.worker.aclose()

    # ---- on the loop's thread
    def sense(self, game: Game) -> CameraSense:
        """The reader of this camera's readings for `game` (made anew when the game
        changes, so nothing said of one game's table is kept for the next)."""
        if self._sense is None or self._sense[0] is not game:
            made = (game.camera_sense(self._dice) if game.camera_sense
                    else PipSense(game, claims=self.claims))
            self._sense = (game, made)
        return self._sense[1]

    def on_reading(self, reading: FrameReading) -> None:
        self.readings += 1
        referee = self.referee
        seen = self.sense(referee.game).read(referee.state, reading)
        if seen.propose is not None and self.post is not None:  # logged like any event
            self.post(seen.propose)
        for line in seen.says:
            referee.say(line)
        if seen.alert is not None:  # the table must act: LED, page, speaker
            referee.alert(*seen.alert)
        referee.set_camera_overlay(seen.overlay, seen.status)
        referee.refresh()
        if self.watch is not None:
            self.watch.on_reading(reading)

    def on_gone(self, exc: Exception) -> None:
        self.gone = True
        self.referee.set_camera_overlay(None, "Camera: GONE (refereeing from the buttons)")
        text = _first_line(exc)
        claims = ""
        if self.watch is not None and self.watch.on:
            self.watch.off()
            claims = ", claims off"
        self.referee.notice(f"Camera gone ({text}): refereeing from the buttons{claims}",
                            "camera_gone")

    def on_frame_error(self, message: str) -> None:
        self.referee.say(f"Camera: {message}")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class PipSense:
    """The house's reading for a game without a reader of its own: the pips of the
    settled pip dice, left to right, through the game's `camera_event` (Vault
    solitaire: `seen`, the roll proposed) and `camera_advice` (the helper's use of
    this roll), said once per new advice; the table takes the roll with a press,
    `take` or the page. Dice the reader could not read are a "?" in the status line,
    and what the game's `camera_unread` says of them is raised to the table once per
    new line (`Referee.alert`: the messages, "NUDGE!" on the LED, and spoken).

    With `claims` on ("advise" or "challenge", `[camera] claims`) and every settled pip
    die read with a face at least `sure` confident, the game's `camera_take` event is
    proposed instead (Vault solitaire: the roll itself, by the camera; one tap takes it
    back): once per roll, never the same dice at the same places twice in a row (a
    roll the table took back is not entered again; thrown again, it is new)."""

    def __init__(self, game: Game, claims: str = OFF, sure: float = DEFAULT_SURE) -> None:
        self.game = game
        self.claims = claims
        self.sure = sure
        self._advice: str | None = None  # the last advice said
        self._unread: str | None = None  # and what was last said of dice not read
        # the last roll the camera entered: its dice's (face, centre, half a die's side)
        self._taken: tuple[tuple[str, tuple[float, float], float], ...] | None = None

    def read(self, state: Any, reading: FrameReading) -> Seen:
        game = self.game
        # the pip dice left to right: a face 1-6, or None where the reader said unknown
        faces = [int(d.face) if d.face.isdigit() else None
                 for d in sorted((d for d in reading.dice if d.dice_set == "pip"
                                  and (d.face.isdigit() or d.face == UNKNOWN)),
                                 key=lambda d: d.centre)]
        pips = [f for f in faces if f is not None]
        proposal = game.camera_event(state, pips)
        sure, take = self._take(state, reading, faces, pips)
        if sure:  # the camera enters the roll itself (once), and proposes no `seen`
            proposal = take
        advice = game.camera_advice(state, pips)
        says = (advice,) if advice and advice != self._advice else ()
        self._advice = advice
        unread = game.camera_unread(state, faces)
        alert = None
        if unread and unread != self._unread:
            alert = (unread, "dice_unread", unread_phrase(faces.count(None)))
        self._unread = unread
        shown = " ".join("?" if f is None else str(f) for f in faces) or "-"
        status = (f"Camera: {len(reading.dice)} dice settled, pips {shown}"
                  f"{'' if reading.mat_found else ', no mat in view'}")
        return Seen(status, says=says, alert=alert, propose=proposal)

    def _take(self, state: Any, reading: FrameReading, faces: list[int | None],
              pips: list[int]) -> tuple[bool, dict[str, Any] | None]:
        """(True, the game's `camera_take` event) when claims are on, every settled pip
        die is read surely and the game takes them; (True, None) when that is the roll
        entered last (the same faces, each die within half its side of where it lay:
        entered already, perhaps taken back); (False, None): the proposal stays as it
        was (today's `seen`)."""
        if self.claims == OFF or not pips or None in faces:
            return False, None
        dice = sorted((d for d in reading.dice if d.dice_set == "pip" and d.face.isdigit()),
                      key=lambda d: d.centre)
        if any(d.confidence < self.sure for d in dice):
            return False, None
        event = self.game.camera_take(state, pips)
        if event is None:
            return False, None
        here = tuple((d.face, d.centre, box_side(d.box) / 2) for d in dice)
        if self._taken is not None and len(self._taken) == len(here) and all(
                f == g and math.dist(c, e) <= r
                for (f, c, r), (g, e, _) in zip(self._taken, here, strict=True)):
            return True, None
        self._taken = here
        return True, event
