"""A device call checked here before it is made: ``python -m reader_lab device-call NAME``.

The device tool's ``run`` sends the working tree (tracked and untracked-not-ignored
files) with the ignored paths named in ``carry``: 64 MiB at most, 8 carried paths. What
the command leaves under ``$OUT`` comes back only within limits: 8 files at most, 16 MiB
each, 64 MiB together, no more than two folders down, each name of letters, digits,
'.', '_' and '-'. A call over the first is refused; one over the second loses files
after its device time is spent. So each of the lab's calls is written down here (its
script, what it carries, what it brings back) and checked before it is made::

    python -m reader_lab device-call both          # what would travel, and the run's arguments
    python -m reader_lab device-call both --try    # and the script tried here on the CPU
    python -m reader_lab device-call both --rates FILES_AT   # after: what sharing cost

``--try`` runs the call's script on this machine's CPU for a few seconds of training, on a
pack of a few photos a set made in a temporary folder (``photo-pack --limit``), and checks
what it left in its ``$OUT`` against the limits on what comes back: the networks' files
are as large as the device makes them, whatever the training's length. The exit status
is 0 when the call fits, 1 when something would not, 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from companion.errors import CompanionError

MIB = 2 ** 20
TRAVEL_LIMIT = 64 * MIB     # the working tree and what it carries
CARRY_PATHS = 8
RETURN_FILES = 8
RETURN_FILE = 16 * MIB
RETURN_TOTAL = 64 * MIB
RETURN_DEPTH = 2            # $OUT/a/b/file comes back, $OUT/a/b/c/file does not
NAME = re.compile(r"[A-Za-z0-9._-]+")
TIMEOUT_S = 600
PACK = ".lab/pack"


@dataclass(frozen=True)
class Call:
    """One device call of the lab: the script ``run`` starts, the ignored paths it
    carries, the files it leaves under ``$OUT``, and the settings that try it on the CPU."""

    script: str
    carry: tuple[str, ...]
    brings_back: tuple[str, ...]
    cpu_try: dict[str, str] = field(default_factory=dict)


_DET_TRY = {"MINUTES": "0.3", "BATCH": "2", "SIZE": "128", "RENDERED": "4"}
_FACES_TRY = {"MINUTES": "0.3", "BATCH": "16", "RENDERED": "4", "GLYPHS": "12",
              "GLYPH_VIEWS": "4"}
_DET_CARRY = (".lab/det/resume.pt", ".lab/det/val.json")
_FACES_CARRY = (".lab/faces/resume.pt", ".lab/faces/val.json")
_DET_BACK = ("det/resume.pt", "det/detector.onnx", "det/val.json", "det/train.log")
_FACES_BACK = ("faces/resume.pt", "faces/classifier_upright_dev.onnx", "faces/val.json",
               "faces/train.log")

CALLS: dict[str, Call] = {
    "detector": Call("reader_lab/accelerator/train_detector.sh", (PACK, *_DET_CARRY),
                     (*_DET_BACK, "det/console.log"), _DET_TRY),
    "faces": Call("reader_lab/accelerator/train_faces.sh", (PACK, *_FACES_CARRY),
                  (*_FACES_BACK, "faces/console.log"), _FACES_TRY),
    "both": Call("reader_lab/accelerator/train_both.sh", (PACK, *_DET_CARRY, *_FACES_CARRY),
                 (*_DET_BACK, *_FACES_BACK),
                 {"DET_MINUTES": "0.3", "DET_BATCH": "2", "DET_SIZE": "128",
                  "DET_RENDERED": "4", "FACES_MINUTES": "0.3", "FACES_BATCH": "16",
                  "FACES_RENDERED": "4", "FACES_DELAY": "0", "GLYPHS": "12",
                  "GLYPH_VIEWS": "4"}),
}


class CallError(CompanionError, ValueError):
    """A check that could not be made (no git, an unreadable path), in one line."""


def tree_bytes(root: Path) -> int:
    """The bytes of the working tree that travels: tracked files and untracked files git
    does not ignore (a tracked file deleted here travels as nothing)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise CallError(f"{root}: not a git checkout ({exc})") from None
    total = 0
    for name in {n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n}:
        path = root / name
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total


def path_bytes(path: Path) -> int:
    """The bytes under ``path`` (a file or a folder; 0 when it is not there)."""
    if path.is_file():
        return path.stat().st_size
    if not path.is_dir():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def travel_problems(tree: int, carried: dict[str, int]) -> list[str]:
    """One line for each limit on what travels that ``tree`` bytes of working tree and
    the ``carried`` paths' bytes break (none: it fits)."""
    problems = []
    if len(carried) > CARRY_PATHS:
        problems.append(f"{len(carried)} carried paths: the device takes {CARRY_PATHS} at most")
    total = tree + sum(carried.values())
    if total > TRAVEL_LIMIT:
        biggest = max(carried, key=carried.get) if carried else "the tree"
        problems.append(f"{total / MIB:.1f} MiB would travel, over {TRAVEL_LIMIT // MIB} MiB "
                        f"(the largest carried: {biggest})")
    return problems


def return_problems(out: Path) -> list[str]:
    """One line for each file under ``out`` that would not come back from the device,
    and each limit on what comes back that the whole breaks (none: all of it comes)."""
    problems = []
    files = sorted(p for p in out.rglob("*") if not p.is_dir())
    for p in files:
        rel = p.relative_to(out)
        if p.is_symlink() or not p.is_file():
            problems.append(f"{rel}: not a plain file, it would not come back")
        elif len(rel.parts) - 1 > RETURN_DEPTH:
            problems.append(f"{rel}: more than {RETURN_DEPTH} folders down, it would not come back")
        elif not all(NAME.fullmatch(part) for part in rel.parts):
            problems.append(f"{rel}: a name of other than letters, digits, '.', '_' and '-'")
        elif p.stat().st_size > RETURN_FILE:
            problems.append(f"{rel}: {p.stat().st_size / MIB:.1f} MiB, over "
                            f"{RETURN_FILE // MIB} MiB a file")
    if len(files) > RETURN_FILES:
        problems.append(f"{len(files)} files, over the {RETURN_FILES} that come back")
    total = sum(p.stat().st_size for p in files if p.is_file())
    if total > RETURN_TOTAL:
        problems.append(f"{total / MIB:.1f} MiB in all, over {RETURN_TOTAL // MIB} MiB")
    return problems


def run_arguments(call: Call) -> dict:
    """The device tool's ``run`` arguments for ``call``."""
    return {"command": f"bash {call.script}", "carry": list(call.carry), "timeout_s": TIMEOUT_S}


def check_travel(call: Call, root: Path, say=print) -> list[str]:
    """Say what ``call`` would carry from ``root`` and return what breaks a limit."""
    problems = []
    if not (root / PACK / "pack.json").is_file():
        problems.append(f"no photo pack in {PACK}: python -m reader_lab photo-pack {PACK}")
    tree = tree_bytes(root)
    carried = {path: path_bytes(root / path) for path in call.carry}
    parts = ", ".join(f"{path} {size / MIB:.1f}" for path, size in carried.items() if size)
    say(f"travels: {(tree + sum(carried.values())) / MIB:.1f} MiB of {TRAVEL_LIMIT // MIB} "
        f"(the tree {tree / MIB:.1f}{', ' + parts if parts else ''}); "
        f"{len(call.carry)} carried paths of {CARRY_PATHS}")
    absent = [path for path, size in carried.items() if not size and path != PACK]
    if absent:
        say("not here, so not carried: " + ", ".join(absent)
            + " (a first call; a later one resumes from what the last brought back)")
    return problems + travel_problems(tree, carried)


def try_on_cpu(call: Call, root: Path, limit: int, say=print) -> list[str]:
    """Run ``call``'s script on this machine's CPU on a pack of ``limit`` photos a set,
    say what it left under its ``$OUT``, and return what would not come back."""
    from reader_lab import photo_pack

    with tempfile.TemporaryDirectory(prefix="device-call-") as tmp:
        lab, out = Path(tmp) / "lab", Path(tmp) / "out"
        out.mkdir()
        made = photo_pack.main([str(lab / "pack"), "--limit", str(limit)])
        if made != 0 or not (lab / "pack" / "pack.json").is_file():
            return [f"could not make a pack of {limit} photos a set to try the call on"]
        # the script's python3 is this one (the device's is its image's)
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {**os.environ, **call.cpu_try, "DEVICE": "cpu", "OUT": str(out),
               "LAB": str(lab), "PYTHONPATH": str(root), "PATH": path}
        t0 = time.time()
        done = subprocess.run(["bash", call.script], cwd=root, env=env,
                              capture_output=True, text=True)
        took = time.time() - t0
        if done.returncode != 0:
            lines = (done.stdout + done.stderr).strip().splitlines()
            say("\n".join(lines[-20:]))
            return [f"{call.script} failed on the CPU (exit {done.returncode}): "
                    f"{lines[-1] if lines else '(no output)'}"]
        files = sorted(p for p in out.rglob("*") if p.is_file())
        say(f"tried on the CPU in {took:.0f} s; it left {len(files)} files, "
            f"{sum(p.stat().st_size for p in files) / MIB:.1f} MiB: " + ", ".join(
                f"{p.relative_to(out)} {p.stat().st_size / MIB:.1f}" for p in files))
        problems = return_problems(out)
        problems += [f"{name}: the call did not leave it" for name in call.brings_back
                     if not (out / name).is_file()]
        return problems


STEP_LINE = re.compile(r"^step (\d+)/\d+ .* steps/s, ([\d.]+) s$")


def step_times(text: str) -> list[tuple[float, int]]:
    """(seconds into training, step) of each step line of a trainer's ``train.log``."""
    found = (STEP_LINE.match(line.strip()) for line in text.splitlines())
    return [(float(m[2]), int(m[1])) for m in found if m]


def interval_rates(points: list[tuple[float, int]]) -> list[tuple[float, float, float]]:
    """(from, to, steps/s) between each two step lines in a row."""
    return [(t0, t1, (s1 - s0) / (t1 - t0))
            for (t0, s0), (t1, s1) in pairwise(points) if t1 > t0 and s1 >= s0]


LOADED = re.compile(r"loaded in (\d+)s")


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    return values[len(values) // 2] if values else None


def shared_rates(det_log: str, faces_log: str, faces_seconds: float, delay: float) -> dict:
    """The detector's steps/s alone on the GPU and beside the faces, in a both call whose
    faces started ``delay`` seconds after it and trained ``faces_seconds``: the medians of
    its intervals before the faces' training began and of those wholly inside it, each
    with how many intervals it had. The faces' span is placed on the detector's clock by
    the two trainers' "loaded in" lines (the seconds from each one's start to its first
    step)."""
    loaded = [LOADED.search(text) for text in (det_log, faces_log)]
    if not all(loaded):
        raise CallError("a train.log without its 'loaded in' line")
    start = delay + float(loaded[1][1]) - float(loaded[0][1])
    end = start + faces_seconds
    rates = interval_rates(step_times(det_log))
    alone = [r for _, t1, r in rates if t1 <= start]
    beside = [r for t0, t1, r in rates if t0 >= start and t1 <= end]
    return {"alone": _median(alone), "alone_n": len(alone), "beside": _median(beside),
            "beside_n": len(beside), "faces_from": start, "faces_to": end}


def report_rates(folder: Path, delay: float, say=print) -> list[str]:
    """Say what sharing the GPU cost the detector in a ``both`` call whose files are in
    ``folder`` (det/train.log, faces/train.log, faces/val.json)."""
    try:
        det_log = (folder / "det" / "train.log").read_text()
        faces_log = (folder / "faces" / "train.log").read_text()
        faces = json.loads((folder / "faces" / "val.json").read_text())[-1]
        seconds, steps = float(faces["train_seconds"]), int(faces["this_call_steps"])
        got = shared_rates(det_log, faces_log, seconds, delay)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError,
            CallError) as exc:
        return [f"{folder}: cannot read the call's logs ({exc.__class__.__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})"]
    if got["alone"] is None or got["beside"] is None:
        return [f"{folder / 'det' / 'train.log'}: too few step lines to tell the detector's "
                f"rate alone (to {got['faces_from']:.0f} s) from its rate beside the faces "
                f"({got['faces_from']:.0f}-{got['faces_to']:.0f} s)"]
    say(f"the detector alone: {got['alone']:.1f} steps/s ({got['alone_n']} intervals to "
        f"{got['faces_from']:.0f} s); beside the faces: {got['beside']:.1f} steps/s "
        f"({got['beside_n']} intervals to {got['faces_to']:.0f} s), "
        f"{got['beside'] / got['alone']:.0%} of alone; the faces: "
        f"{steps / max(seconds, 1e-6):.1f} steps/s over {seconds:.0f} s")
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m reader_lab device-call",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("call", choices=sorted(CALLS), help="which call")
    ap.add_argument("--try", dest="try_it", action="store_true",
                    help="run its script here on the CPU and check what it leaves")
    ap.add_argument("--limit", type=int, default=3,
                    help="photos a set in the pack --try makes (default 3)")
    ap.add_argument("--root", default=".", help="the repository's root (default .)")
    ap.add_argument("--rates", metavar="DIR", help="a both call's files (det/, faces/): "
                    "the detector's steps/s alone and beside the faces, nothing else")
    ap.add_argument("--delay", type=float, default=60.0,
                    help="with --rates: the call's FACES_DELAY (default 60)")
    args = ap.parse_args(argv)
    if args.limit < 1:
        ap.error("--limit must be at least 1")
    if args.rates is not None:
        if args.call != "both" or args.delay <= 0:
            ap.error("--rates reads a both call's files, with a --delay above 0")
        problems = report_rates(Path(args.rates), args.delay)
        for line in problems:
            print(f"device-call both: {line}", file=sys.stderr)
        return 1 if problems else 0
    root = Path(args.root).resolve()
    call = CALLS[args.call]
    if not (root / call.script).is_file():
        ap.error(f"{root / call.script}: no such script (run from the repository's root)")
    try:
        problems = check_travel(call, root)
        if args.try_it:
            problems += try_on_cpu(call, root, args.limit)
    except CallError as exc:
        print(f"device-call: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(f"device-call {args.call}: {line}", file=sys.stderr)
    print("run: " + json.dumps(run_arguments(call)))
    return 1 if problems else 0
