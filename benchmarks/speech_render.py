"""Every phrase the box would say in the shipped scripted games, rendered with espeak-ng
and measured: duration, peak level, render time (first time, then from the cache), and
what `Speaker.say` costs the event loop.

    .venv/bin/python benchmarks/speech_render.py [--out DIR] [--voice en]

Needs espeak-ng (apt install espeak-ng). Prints one line per phrase and a summary.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import statistics
import sys
import tempfile
import time
import wave
from pathlib import Path

from companion.loop import Referee
from companion.scripted import play_script
from companion.speech.callouts import attach_speaker
from companion.speech.player import EspeakSpeaker, RecordingSpeaker

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"


def phrases_of_scripts() -> list[str]:
    said: list[str] = []
    for script in sorted(SCRIPTS.glob("*.jsonl")):
        referee = Referee()
        speaker = RecordingSpeaker()
        attach_speaker(referee, speaker)
        lines = script.read_text().splitlines()
        asyncio.run(play_script(lines, referee, echo_rejections=False))
        said += speaker.said
    return said


def stats(path: Path) -> tuple[float, int]:
    with wave.open(str(path)) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
        return w.getnframes() / w.getframerate(), max(map(abs, samples))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="keep the WAV files here")
    parser.add_argument("--voice", default="en")
    args = parser.parse_args(argv)
    said = phrases_of_scripts()
    unique = list(dict.fromkeys(said))
    out = args.out or Path(tempfile.mkdtemp(prefix="speech-"))
    sp = EspeakSpeaker(voice=args.voice, cache_dir=out, aplay=None)
    first, cached, durations = [], [], []
    try:
        for text in unique:
            t0 = time.perf_counter()
            path = sp.wav_for(text)
            first.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            sp.wav_for(text)
            cached.append(time.perf_counter() - t0)
            seconds, peak = stats(path)
            durations.append(seconds)
            print(f"{seconds:5.2f} s  peak {peak:5d}  {first[-1] * 1e3:5.0f} ms  {text}")
        costs = []
        for text in said:
            t0 = time.perf_counter_ns()
            sp.say(text)
            costs.append(time.perf_counter_ns() - t0)
        sp.close(timeout=0.1)
    finally:
        sp.close(timeout=0.1)
    costs.sort()
    print(
        f"{len(said)} callouts in 3 games, {len(unique)} different phrases; "
        f"spoken {statistics.median(durations):.2f} s median, {max(durations):.2f} s longest; "
        f"render {statistics.median(first) * 1e3:.0f} ms median (first time), "
        f"{statistics.median(cached) * 1e6:.0f} us cached; "
        f"say() p50 {costs[len(costs) // 2] / 1e3:.1f} us, "
        f"p99 {costs[int(len(costs) * 0.99)] / 1e3:.1f} us"
    )
    print(f"WAV files: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
