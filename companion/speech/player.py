"""The speaker: a small player interface with a real and a simulated implementation.

``EspeakSpeaker`` renders each phrase once with espeak-ng into a WAV file in a cache
folder (named by a hash of the phrase, voice, speed and volume) and plays it with ALSA's
``aplay``, both on a worker thread of its own: ``say()`` only appends to a short queue
and returns, so speech never runs on the event loop and never delays a verdict. The
queue is bounded: when callouts come faster than they can be spoken the oldest waiting
ones are dropped (a stale "Go!" is worse than none), and a phrase that waited longer
than ``max_wait_s`` is skipped.

``RecordingSpeaker`` says nothing and records what would have been said (tests, and
tables without sound). ``make_speaker`` picks one from the ``[sound]`` config and, when
espeak-ng, aplay or the sound card it would play on is missing, says so in one line
and carries on silent (the card: companion.speech.alsa).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol

from companion.cache import cache_dir as _cache_dir
from companion.speech.alsa import check_device, own_default, read_cards

QUEUE_LENGTH = 3
MAX_WAIT_S = 4.0
RENDER_TIMEOUT_S = 10.0


class Speaker(Protocol):
    def say(self, text: str) -> None: ...

    def close(self) -> None: ...


class RecordingSpeaker:
    """Records what would be said, in order; says nothing."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def close(self) -> None:
        pass


def render_wav(
    text: str,
    out: Path,
    *,
    voice: str = "en",
    speed: int = 175,
    volume: int = 100,
    espeak: str = "espeak-ng",
) -> Path:
    """Render `text` to the WAV file `out` with espeak-ng (written beside it, then moved
    into place, so a half-written file is never played). Raises OSError/CalledProcessError."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}.wav")
    amplitude = max(0, min(200, round(volume)))  # espeak-ng -a: 100 is its normal loudness
    subprocess.run(
        [espeak, "-v", voice, "-s", str(speed), "-a", str(amplitude), "-w", str(tmp), "--", text],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=RENDER_TIMEOUT_S,
    )
    os.replace(tmp, out)
    return out


class EspeakSpeaker:
    """espeak-ng + aplay on a worker thread, with a bounded queue (see the module doc)."""

    def __init__(
        self,
        *,
        voice: str = "en",
        speed: int = 175,
        volume: int = 100,
        device: str = "",
        cache_dir: Path | None = None,
        espeak: str = "espeak-ng",
        aplay: str | None = "aplay",
        queue_length: int = QUEUE_LENGTH,
        max_wait_s: float = MAX_WAIT_S,
        notice: Callable[[str], None] = lambda text: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.voice, self.speed, self.volume, self.device = voice, speed, volume, device
        self.cache_dir = cache_dir or _cache_dir("speech")
        self.espeak, self.aplay = espeak, aplay
        self.max_wait_s = max_wait_s
        self.notice = notice
        self.clock = clock
        self.queue: deque[tuple[float, str]] = deque(maxlen=queue_length)
        self.prerender_queue: deque[str] = deque()
        self.dropped = 0  # callouts dropped for being old or crowded out
        self.played: list[str] = []  # phrases played (or rendered, with aplay None)
        self._failed_once = False
        self._cv = threading.Condition()
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name="speaker", daemon=True)
        self._thread.start()

    # ---- from the loop (or any thread): never blocks on sound
    def say(self, text: str) -> None:
        with self._cv:
            if len(self.queue) == self.queue.maxlen:
                self.dropped += 1
            self.queue.append((self.clock(), text))
            self._cv.notify()

    def prerender(self, phrases: Iterable[str]) -> None:
        """Render these phrases into the cache in the background (idle time only)."""
        with self._cv:
            self.prerender_queue.extend(phrases)
            self._cv.notify()

    def wav_path(self, text: str) -> Path:
        key = f"{self.voice}\0{self.speed}\0{self.volume}\0{text}".encode()
        return self.cache_dir / f"{hashlib.sha1(key).hexdigest()[:16]}.wav"

    def wav_for(self, text: str) -> Path:
        path = self.wav_path(text)
        if not path.exists():
            render_wav(
                text,
                path,
                voice=self.voice,
                speed=self.speed,
                volume=self.volume,
                espeak=self.espeak,
            )
        return path

    def close(self, timeout: float = 2.0) -> None:
        with self._cv:
            self._closed = True
            self.queue.clear()
            self.prerender_queue.clear()
            self._cv.notify()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
        self._thread.join(timeout)

    def idle(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is queued or playing (tests). True if it got there."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._cv:
                if not self.queue and not self.prerender_queue and not self._busy:
                    return True
            time.sleep(0.01)
        return False

    # ---- the worker thread
    _busy = False

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._closed and not self.queue and not self.prerender_queue:
                    self._cv.wait()
                if self._closed:
                    return
                self._busy = True
                item = self.queue.popleft() if self.queue else None
                pre = self.prerender_queue.popleft() if item is None else None
            try:
                if item is not None:
                    queued_at, text = item
                    if self.clock() - queued_at > self.max_wait_s:
                        self.dropped += 1
                        continue
                    self._speak(text)
                elif pre is not None:
                    self.wav_for(pre)
            except (OSError, subprocess.SubprocessError) as exc:
                self._fail(exc)
            finally:
                with self._cv:
                    self._busy = False

    def _speak(self, text: str) -> None:
        path = self.wav_for(text)
        if self.aplay:
            cmd = [self.aplay, "-q"] + (["-D", self.device] if self.device else []) + [str(path)]
            self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, err = self._proc.communicate()
            code = self._proc.returncode
            self._proc = None
            if code not in (0, -15) and not self._closed:
                first = (err or b"").decode(errors="replace").strip().splitlines()[:1]
                raise OSError(f"aplay exited {code}: {first[0] if first else ''}")
        self.played.append(text)

    def _fail(self, exc: BaseException) -> None:
        if self._failed_once:
            return
        self._failed_once = True
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.notice(f"sound: a callout could not be played ({detail}); the game goes on")


def make_speaker(
    sound: object,
    notice: Callable[[str], None],
    *,
    which: Callable[[str], str | None] = shutil.which,
    cards: Callable[[], str] = read_cards,
    configured_default: Callable[[], bool] = own_default,
) -> Speaker:
    """The speaker the `[sound]` config asks for (a SoundConfig), or a silent recorder
    with a one-line notice when sound is off or cannot work here. The device it will
    play on is checked against `cards()` (/proc/asound/cards: companion.speech.alsa):
    a card that is not there is silence and one line; ALSA's default on HDMI is one
    line of warning, and the speaker plays there all the same."""
    if not getattr(sound, "enabled", True):
        return RecordingSpeaker()
    espeak = which("espeak-ng")
    if espeak is None:
        notice("sound: espeak-ng not found (apt install espeak-ng): no spoken callouts")
        return RecordingSpeaker()
    device = str(getattr(sound, "device", ""))
    aplay = which("aplay")
    if aplay is None:
        notice("sound: aplay not found (apt install alsa-utils): no spoken callouts")
        return RecordingSpeaker()
    found = check_device(device, cards(), configured_default=configured_default())
    if not found.ok:
        notice(f"sound: {found.line}: no spoken callouts")
        return RecordingSpeaker()
    if found.line:
        notice(f"sound: {found.line}")
    speaker = EspeakSpeaker(
        voice=str(getattr(sound, "voice", "en")),
        speed=int(getattr(sound, "speed", 175)),
        volume=int(getattr(sound, "volume", 100)),
        device=device,
        cache_dir=getattr(sound, "cache_dir", None) or None,
        espeak=espeak,
        aplay=aplay,
        notice=notice,
    )
    from companion.games import registry

    for game in registry.games():  # each game's phrases worth rendering ahead
        speaker.prerender(game.common_phrases)
    return speaker
