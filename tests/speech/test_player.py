"""The speaker: WAV rendering (where espeak-ng exists), the bounded queue, and the
one-line notices when sound cannot work."""

import array
import shutil
import sys
import time
import wave
from pathlib import Path
from types import SimpleNamespace

import pytest

from companion.games.vault_assault.phrases import COMMON_PHRASES
from companion.speech.player import EspeakSpeaker, RecordingSpeaker, make_speaker, render_wav

ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(
    ESPEAK is None, reason="espeak-ng not installed (apt-get install espeak-ng; .ci/run does)"
)


def wav_stats(path: Path) -> tuple[float, int]:
    """(seconds, peak amplitude) of a 16-bit mono WAV."""
    with wave.open(str(path)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        frames = w.readframes(w.getnframes())
        seconds = w.getnframes() / w.getframerate()
    samples = array.array("h", frames)
    return seconds, max(abs(s) for s in samples)


@needs_espeak
@pytest.mark.parametrize(
    "text",
    [
        *COMMON_PHRASES,
        "Photo finish! Ann, by four tenths of a millisecond.",
        "The winner is Bob, with one hundred twenty thousand dollars!",
    ],
)
def test_phrases_render_to_audible_wav(tmp_path, text):
    path = render_wav(text, tmp_path / "p.wav")
    seconds, peak = wav_stats(path)
    words = len(text.split())
    assert 0.2 < seconds < 1.0 + words * 0.8, seconds
    assert peak > 3000, peak  # not silence


@needs_espeak
def test_volume_and_speed_change_the_sound(tmp_path):
    loud_s, loud = wav_stats(render_wav("Go!", tmp_path / "a.wav", volume=100))
    quiet_s, quiet = wav_stats(render_wav("Go!", tmp_path / "b.wav", volume=25))
    assert quiet < loud * 0.6
    slow, _ = wav_stats(render_wav("Arrested! Bob and Cat.", tmp_path / "c.wav", speed=100))
    fast, _ = wav_stats(render_wav("Arrested! Bob and Cat.", tmp_path / "d.wav", speed=300))
    assert fast < slow * 0.7


@needs_espeak
def test_phrases_are_rendered_once_and_cached(tmp_path):
    sp = EspeakSpeaker(cache_dir=tmp_path, aplay=None)
    try:
        sp.say("Go!")
        assert sp.idle()
        path = sp.wav_path("Go!")
        first = path.stat().st_mtime_ns
        sp.say("Go!")
        assert sp.idle()
        assert path.stat().st_mtime_ns == first
        assert sp.played == ["Go!", "Go!"]
        assert len(list(tmp_path.glob("*.wav"))) == 1
    finally:
        sp.close()


def fake_tools(tmp_path: Path, delay: float) -> tuple[str, str, Path]:
    """A stand-in espeak-ng (writes a file) and aplay (sleeps, then records its file)."""
    played = tmp_path / "played.txt"
    espeak = tmp_path / "espeak"
    espeak.write_text(
        f"#!{sys.executable}\nimport sys\nargs = sys.argv\n"
        "open(args[args.index('-w') + 1], 'w').write(args[-1])\n"
    )
    aplay = tmp_path / "aplay"
    aplay.write_text(
        f"#!{sys.executable}\nimport sys, time\ntime.sleep({delay})\n"
        f"open({str(played)!r}, 'a').write(open(sys.argv[-1]).read() + '\\n')\n"
    )
    for p in (espeak, aplay):
        p.chmod(0o755)
    return str(espeak), str(aplay), played


def test_say_returns_at_once_and_old_callouts_are_dropped(tmp_path):
    espeak, aplay, played = fake_tools(tmp_path, delay=0.3)
    sp = EspeakSpeaker(cache_dir=tmp_path / "cache", espeak=espeak, aplay=aplay, queue_length=2)
    try:
        start = time.perf_counter()
        for i in range(6):
            sp.say(f"callout {i}")
        took = time.perf_counter() - start
        assert took < 0.25  # well under one playback: say() never waits for sound
        assert sp.idle(timeout=10)
        lines = played.read_text().splitlines()
        # The first was already playing; of the rest only the newest two were kept.
        assert lines[-2:] == ["callout 4", "callout 5"]
        assert len(lines) <= 3
        assert sp.dropped >= 3
    finally:
        sp.close()


def test_a_callout_that_waited_too_long_is_skipped(tmp_path):
    espeak, aplay, played = fake_tools(tmp_path, delay=0.0)
    now = [100.0]
    sp = EspeakSpeaker(
        cache_dir=tmp_path / "c", espeak=espeak, aplay=aplay, max_wait_s=1.0, clock=lambda: now[0]
    )
    try:
        sp.say("fresh")
        assert sp.idle()
        now[0] = 100.0
        with sp._cv:  # queue one, then let the clock jump before the worker takes it
            sp.queue.append((now[0], "stale"))
            now[0] = 105.0
            sp._cv.notify()
        assert sp.idle()
        assert played.read_text().splitlines() == ["fresh"]
    finally:
        sp.close()


def test_a_failing_player_is_one_notice_not_a_crash(tmp_path):
    notices = []
    espeak, _, _ = fake_tools(tmp_path, 0)
    bad = tmp_path / "broken-aplay"
    bad.write_text(
        "#!/bin/sh\necho 'aplay: main:831: audio open error: No such file' >&2\nexit 1\n"
    )
    bad.chmod(0o755)
    sp = EspeakSpeaker(
        cache_dir=tmp_path / "c", espeak=espeak, aplay=str(bad), notice=notices.append
    )
    try:
        sp.say("one")
        sp.say("two")
        assert sp.idle()
    finally:
        sp.close()
    assert len(notices) == 1
    assert notices[0].startswith("sound: a callout could not be played (aplay exited 1: aplay:")


def test_make_speaker_without_espeak_or_device_is_a_notice():
    notices = []
    cfg = SimpleNamespace(enabled=True, voice="en", volume=100, speed=175, device="")
    sp = make_speaker(cfg, notices.append, which=lambda name: None)
    assert isinstance(sp, RecordingSpeaker)
    assert notices == ["sound: espeak-ng not found (apt install espeak-ng): no spoken callouts"]
    notices.clear()
    sp = make_speaker(cfg, notices.append, which=lambda n: "/usr/bin/espeak-ng"
                      if n == "espeak-ng" else None)
    assert isinstance(sp, RecordingSpeaker)
    assert notices == ["sound: aplay not found (apt install alsa-utils): no spoken callouts"]
    notices.clear()
    sp = make_speaker(cfg, notices.append, which=lambda n: f"/usr/bin/{n}", cards=lambda: "",
                      configured_default=lambda: False)
    assert isinstance(sp, RecordingSpeaker)
    assert notices == ["sound: ALSA's default device: no sound card (/proc/asound/cards lists "
                       "none): no spoken callouts"]
    notices.clear()
    off = SimpleNamespace(enabled=False)
    assert isinstance(make_speaker(off, notices.append), RecordingSpeaker) and notices == []


PI5_HDMI = (" 0 [vc4hdmi0       ]: vc4-hdmi - vc4-hdmi-0\n"
            " 1 [vc4hdmi1       ]: vc4-hdmi - vc4-hdmi-1\n")
USB = " 2 [UACDemoV10     ]: USB-Audio - UACDemoV1.0\n"


def test_make_speaker_checks_the_card_it_will_play_on(tmp_path):
    """A named card that is not there: silent, one line. ALSA's default on HDMI: one
    line, and the speaker plays there all the same (a screen may have speakers)."""
    notices: list[str] = []
    usb = SimpleNamespace(enabled=True, voice="en", volume=100, speed=175,
                          device="plughw:CARD=UACDemoV10,DEV=0", cache_dir=tmp_path)
    sp = make_speaker(usb, notices.append, which=lambda n: f"/usr/bin/{n}",
                      cards=lambda: PI5_HDMI, configured_default=lambda: False)
    assert isinstance(sp, RecordingSpeaker)
    assert notices == ["sound: ALSA device 'plughw:CARD=UACDemoV10,DEV=0': no card UACDemoV10 "
                       "in /proc/asound/cards (0 vc4hdmi0, 1 vc4hdmi1); aplay -L lists the "
                       "devices: no spoken callouts"]
    notices.clear()
    sp = make_speaker(usb, notices.append, which=lambda n: f"/usr/bin/{n}",
                      cards=lambda: PI5_HDMI + USB, configured_default=lambda: False)
    sp.close()
    assert isinstance(sp, EspeakSpeaker) and sp.device == usb.device and notices == []
    default = SimpleNamespace(**{**vars(usb), "device": ""})
    sp = make_speaker(default, notices.append, which=lambda n: f"/usr/bin/{n}",
                      cards=lambda: PI5_HDMI + USB, configured_default=lambda: False)
    sp.close()
    assert isinstance(sp, EspeakSpeaker) and len(notices) == 1
    assert notices[0].startswith("sound: ALSA's default device plays on card 0 vc4hdmi0, HDMI")
    assert notices[0].endswith('"plughw:CARD=UACDemoV10,DEV=0" (card 2 UACDemoV10)')
