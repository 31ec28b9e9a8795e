"""Benchmark: the camera checking claims on rendered tables, true claims and false.

    .venv/bin/python benchmarks/claim_check.py [--claims 400] [--seed 1] [--mode challenge]

Each claim is a 3-player Vault Assault race at the moment of a claim: a robber's
"Escaped!" (seat 2 black dice, seat 3 white), a stage of the cops or their Arrest. The
table is rendered by the synthetic camera (companion.vision.synthetic) with every die
in play (the cops' 5 red and blue, both robbers' 5): the claimant's dice showing what
was claimed (true) or one or two dice short of it (false), the others at random. The
dice are thrown first (three frames of other arrangements), then lie still; each claim
happens under one condition:

- ``clean``: the press comes once the dice lie still;
- ``rolling``: the press comes as the last die lands (before the camera settled it);
- ``hand``: a hand covers one or two of the claimant's dice;
- ``glare``: a bright reflection over one of the claimant's dice.

Frames go through the camera's own path (companion.camera.CameraInput: the worker, its
change gate, the pipeline with the shipped profile calibration/synthetic, the settle
tracker) at ``--fps``, the press through the table's queue to the referee, and the
claim's answer comes back as the logged `claim_check` event (companion.claims). A
claim is "in view" when nothing hides any of the claimant's dice (clean, rolling); a
hand or glare is where the camera should say "can't see" (or still prove it).

Printed: per kind and condition, the answers; the false claims challenged in view;
the time per claim; and, last, the line

    claims: true T (challenged F, cant_see C), false M (challenged X, cant_see Y)
"""

from __future__ import annotations

import sys

from companion.vision.threads import limit_native_threads

limit_native_threads(1)  # before numpy loads

import argparse  # noqa: E402
import asyncio  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.games.claims import CHALLENGE, CLAIM_MODES  # noqa: E402
from companion.games.vault_assault.engine import apply, new_state  # noqa: E402
from companion.loop import Referee  # noqa: E402
from companion.table_builder import CameraParts, TableBuilder  # noqa: E402
from companion.vision.dice_data import DiceData  # noqa: E402
from companion.vision.frames import Frame  # noqa: E402
from companion.vision.profile import load_profile  # noqa: E402
from companion.vision.synthetic import DieSpec, mosaic_specs, render_scene  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "calibration" / "synthetic"
SIZE = (1280, 720)
KINDS = ("escape", "escape", "stage", "arrest")  # robbers' claims twice as often
CONDITIONS = ("clean", "rolling", "hand", "glare")
THROW_FRAMES = 5  # the bare mat while the dice are in the air (the old dice leave)
STILL_FRAMES = 6  # frames the dice lie still before a press (the settle needs 3)
ANSWER_WAIT_S = 3.0


# ---------------------------------------------------------------- the game at the claim


def _race() -> Any:
    """A 3-player race (seat 1 the cops; seats 2 and 3 robbers, black and white)."""
    state = new_state()
    for ev in (
        {"type": "new_game", "game": "vault-assault", "players": 3,
         "names": ["Ann", "Bob", "Cat"], "first_cop": 0},
        {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "stop": True},
                                            {"seat": 2, "stop": True}]},
        {"type": "assault_start"},
    ):
        result = apply(state, ev)
        assert result.rejection is None, result.rejection
        state = result.state
    return state


def _with_stages(state: Any, n: int) -> Any:
    for k in range(1, n + 1):
        state = apply(state, {"type": "stage", "stage": k}).state
    return state


# ---------------------------------------------------------------- the scenes


@dataclass
class Scenario:
    kind: str  # escape, stage, arrest
    true: bool
    condition: str
    seat: int
    stage: int | None
    specs: list[DieSpec]
    proof: list[int]  # indices in specs of the dice that make a false claim false
    covered: list[int] = field(default_factory=list)  # indices under a hand

    @property
    def in_view(self) -> bool:
        """Every die of the claimant's lies in plain view: no hand over any, no glare."""
        return self.condition in ("clean", "rolling")


COP_DICE = [("red", "alarm-1"), ("red", "alarm-2"), ("red", "special"),
            ("blue", "alarm-3"), ("blue", "alarm-4")]


def _random_faces(rng: np.random.Generator, data: DiceData, dice: list[tuple[str, str]],
                  avoid: set[str] = frozenset()) -> list[DieSpec]:  # type: ignore[assignment]
    out = []
    for set_name, kind in dice:
        faces = [f for f in data.kinds[kind] if f not in avoid] or list(data.kinds[kind])
        out.append(DieSpec(set_name, kind, str(rng.choice(faces))))
    return out


def scenario(rng: np.random.Generator, data: DiceData) -> Scenario:
    kind = str(rng.choice(KINDS))
    true = bool(rng.random() < 0.5)
    condition = str(rng.choice(CONDITIONS))
    robbers = {1: "black", 2: "white"}
    if kind == "escape":
        seat = int(rng.integers(1, 3))
        mine = robbers[seat]
        short = 0 if true else int(rng.choice([1, 1, 1, 2]))
        specs = [DieSpec(mine, "robber", data.escape_face) for _ in range(5 - short)]
        specs += [DieSpec(mine, "robber", str(rng.choice(
            [f for f in data.kinds["robber"] if f != data.escape_face]))) for _ in range(short)]
        proof = list(range(5 - short, 5))
        claimant = list(range(5))
        other = robbers[3 - seat]
        specs += _random_faces(rng, data, [(other, "robber")] * 5)
        specs += _random_faces(rng, data, COP_DICE)
        stage = None
    else:
        seat = 0
        stage = 4 if kind == "arrest" else int(rng.integers(1, 4))
        centre = (float(rng.uniform(150, 270)), float(rng.uniform(90, 200)))
        angle = float(rng.uniform(0, 360))
        wild = int(rng.integers(1, 5)) if rng.random() < 0.3 else None
        mosaic = mosaic_specs(data, stage, centre, angle, wild_position=wild,
                              gap_mm=float(rng.uniform(0.0, 1.2)))
        used = [(m.dice_set, m.kind) for m in mosaic]
        proof = []
        if not true:  # one place shows something else: no piece, no wild of this stage
            i = int(rng.integers(4))
            m = mosaic[i]
            wrong = [f for f in data.kinds[m.kind] if data.wild(f) != stage
                     and not ((p := data.piece(f)) is not None and p[0] == stage)]
            mosaic[i] = DieSpec(m.dice_set, m.kind, str(rng.choice(wrong)), m.xy_mm, m.angle)
            proof = [i]
        rest = [d for d in COP_DICE if d not in used]
        pieces_and_wilds = {f for fs in data.kinds.values() for f in fs if data.wild(f) == stage
                            or ((p := data.piece(f)) is not None and p[0] == stage)}
        specs = mosaic + _random_faces(rng, data, rest, avoid=pieces_and_wilds)
        if not true:  # the other cop dice must not fill the missing place either
            proof += list(range(4, len(specs)))
        claimant = list(range(len(specs)))
        specs += _random_faces(rng, data, [("black", "robber")] * 5 + [("white", "robber")] * 5)
    covered: list[int] = []
    if condition == "hand":
        k = int(rng.integers(1, 3))
        covered = [int(i) for i in rng.choice(claimant[:5], size=k, replace=False)]
    return Scenario(kind, true, condition, seat, stage, specs, proof, covered)


def _skin(image: np.ndarray, box: tuple[int, int, int, int], rng: np.random.Generator) -> None:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    r = int(max(x1 - x0, y1 - y0) * rng.uniform(0.9, 1.4))
    colour = (int(rng.integers(90, 140)), int(rng.integers(140, 180)), int(rng.integers(200, 235)))
    cv2.ellipse(image, (cx, cy + r // 2), (r, int(r * 1.8)), float(rng.uniform(-30, 30)),
                0, 360, colour, -1, cv2.LINE_AA)


def _glare(image: np.ndarray, box: tuple[int, int, int, int], rng: np.random.Generator) -> None:
    x0, y0, x1, y1 = box
    spot = np.zeros(image.shape[:2], np.float32)
    cx = int(rng.uniform(x0, x1))
    cy = int(rng.uniform(y0, y1))
    cv2.circle(spot, (cx, cy), max(2, (x1 - x0) // 3), 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), max(1.0, (x1 - x0) / 5))
    out = image.astype(np.float32) + 170.0 * spot[:, :, None]
    image[:] = np.clip(out, 0, 255).astype(np.uint8)


def table_of(seed: int) -> dict[str, Any]:
    """One table for a run: the camera's pose and the room's light stay put."""
    _, truth = render_scene(seed, dice=[], width=SIZE[0], height=SIZE[1])
    return {"homography": truth.homography, "lighting": truth.lighting}


def frames_for(sc: Scenario, seed: int, data: DiceData, table: dict[str, Any]
               ) -> tuple[list[np.ndarray], np.ndarray]:
    """The throw (the bare mat while the dice are in the air) and the still scene."""
    rng = np.random.default_rng(seed)
    still, truth = render_scene(seed, dice=sc.specs, width=SIZE[0], height=SIZE[1],
                                data=data, touching=0.3, **table)
    # The renderer keeps the spec order in its truth (fixed places first is not
    # assumed): match each spec to its drawn die by set, kind and face, in order.
    boxes = _boxes(sc.specs, truth)
    for i in sc.covered:
        _skin(still, boxes[i], rng)
    if sc.condition == "glare":
        _glare(still, boxes[int(rng.choice(range(min(5, len(sc.specs)))))], rng)
    bare = render_scene(seed, dice=[], width=SIZE[0], height=SIZE[1], data=data, **table)[0]
    return [bare] * THROW_FRAMES, still


def _boxes(specs: list[DieSpec], truth: Any) -> list[tuple[int, int, int, int]]:
    left = list(truth.dice)
    out = []
    for s in specs:
        for j, t in enumerate(left):
            if (t.dice_set, t.kind, t.face) == (s.dice_set, s.kind, s.face) and (
                    s.xy_mm is None or abs(t.mat_xy[0] - s.xy_mm[0]) < 1e-3):
                out.append(t.box)
                del left[j]
                break
        else:
            out.append((0, 0, 1, 1))
    return out


# ---------------------------------------------------------------- the camera's stream


class Stage:
    """A FrameSource the benchmark drives: it shows whatever scene is put up, at
    `fps`, and counts the frames of the current scene it has served."""

    def __init__(self, fps: float) -> None:
        self.description = "claim benchmark table"
        self.interval = 1.0 / fps
        self._lock = threading.Lock()
        self._frames: list[np.ndarray] = []
        self._served = 0
        self._index = 0
        self._closed = False

    def show(self, frames: list[np.ndarray]) -> None:
        """Serve these frames in turn, the last one for ever after."""
        with self._lock:
            self._frames = frames
            self._served = 0

    @property
    def served(self) -> int:
        with self._lock:
            return self._served

    def open(self) -> None:
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def read(self) -> Frame | None:
        time.sleep(self.interval)
        with self._lock:
            if self._closed:
                return None
            if not self._frames:
                image = np.full((SIZE[1], SIZE[0], 3), 60, np.uint8)
            else:
                image = self._frames[min(self._served, len(self._frames) - 1)]
            self._served += 1
            self._index += 1
            index = self._index
        return Frame(image.copy(), index, time.monotonic(), "claim benchmark")

    def __enter__(self) -> Stage:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def run(claims: int, seed: int, mode: str, fps: float, verbose: bool = False
              ) -> list[tuple[Scenario, str]]:
    profile = load_profile(PROFILE)
    data = profile.dice
    race = _race()
    states = {"escape": race, "stage": {k: _with_stages(race, k - 1) for k in (1, 2, 3)},
              "arrest": _with_stages(race, 3)}
    referee = Referee(state=race)
    builder = TableBuilder(referee)
    await builder.start()
    stage = Stage(fps)
    answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    referee.listeners.append(lambda ev, res: answers.put_nowait(ev)
                             if isinstance(ev, dict) and ev.get("type") == "claim_check"
                             and not res.rejection else None)
    cam = builder.camera(CameraParts(stage, {"profile_dir": str(PROFILE), "process": False,
                                             "claims": mode, "fps": fps}))
    if cam.watch is None:
        raise SystemExit("claim_check: the camera did not start watching claims")
    cam.watch.mode = mode  # measure the mode asked, whatever the profile's check says
    rng = np.random.default_rng(seed)
    table = table_of(seed)
    out: list[tuple[Scenario, str]] = []
    try:
        for n in range(claims):
            sc = scenario(rng, data)
            throw, still = frames_for(sc, seed * 100_003 + n, data, table)
            state = states["stage"][sc.stage] if sc.kind == "stage" else states[sc.kind]
            stage.show(throw + [still])
            press_at = len(throw) + (0 if sc.condition == "rolling" else STILL_FRAMES)
            while stage.served <= press_at:
                await asyncio.sleep(0.002)
            referee.state = state
            event = ({"type": "stage", "stage": sc.stage} if sc.kind == "stage"
                     else {"type": "buzz", "seat": sc.seat})
            await builder.table.submit(event)
            number = referee.state.events_applied
            answer, text = "none", ""
            deadline = time.monotonic() + ANSWER_WAIT_S
            while time.monotonic() < deadline:  # this claim's answer (never an older one's)
                try:
                    check = await asyncio.wait_for(answers.get(), deadline - time.monotonic())
                except TimeoutError:
                    break
                if check.get("event") == number:
                    answer, text = str(check["answer"]), str(check.get("text"))
                    break
            if verbose:
                print(f"{n + 1:4} {sc.kind:7} {'true ' if sc.true else 'false'} "
                      f"{sc.condition:8} {answer:10} {text}", flush=True)
                if verbose > 1 and cam.watch.reading is not None:
                    print("      ", sorted((d.dice_set, d.face, round(d.confidence, 2))
                                           for d in cam.watch.reading.dice))
            out.append((sc, answer))
    finally:
        await cam.aclose()
        await builder.table.stop()
    return out


def report(results: list[tuple[Scenario, str]], seconds: float) -> list[str]:
    lines = []
    by: Counter[tuple[str, bool, str, str]] = Counter()
    for sc, answer in results:
        by[(sc.kind, sc.true, sc.condition, answer)] += 1
    for kind in ("escape", "stage", "arrest"):
        for true in (True, False):
            for cond in CONDITIONS:
                cell = {a: by[(kind, true, cond, a)] for a in
                        ("confirmed", "challenged", "cant_see", "none")}
                total = sum(cell.values())
                if total:
                    lines.append(f"{kind:7} {'true ' if true else 'false'} {cond:8} n={total:4}  "
                                 + "  ".join(f"{a} {v}" for a, v in cell.items() if v))
    false_in_view = [(sc, a) for sc, a in results if not sc.true and sc.in_view]
    caught = sum(1 for _, a in false_in_view if a == "challenged")
    if false_in_view:
        lines.append(f"false claims in view: {caught}/{len(false_in_view)} challenged "
                     f"({100.0 * caught / len(false_in_view):.1f}%; goal >= 99%)")
    hidden = [(sc, a) for sc, a in results if not sc.true and not sc.in_view]
    if hidden:
        n_ch = sum(1 for _, a in hidden if a == "challenged")
        lines.append(f"false claims under a hand or glare: {n_ch}/{len(hidden)} challenged, "
                     f"the rest can't see")
    true_in_view = [a for sc, a in results if sc.true and sc.in_view]
    if true_in_view:
        lines.append(f"true claims in view confirmed: {true_in_view.count('confirmed')}/"
                     f"{len(true_in_view)}")
    true_sure = [a for sc, a in results if sc.true]
    lines.append(f"true claims challenged: {true_sure.count('challenged')} (goal 0)")
    lines.append(f"{seconds / max(1, len(results)):.2f} s a claim, {len(results)} claims")
    t = [a for sc, a in results if sc.true]
    f = [a for sc, a in results if not sc.true]
    lines.append(f"claims: true {len(t)} (challenged {t.count('challenged')}, cant_see "
                 f"{t.count('cant_see') + t.count('none')}), false {len(f)} (challenged "
                 f"{f.count('challenged')}, cant_see {f.count('cant_see') + f.count('none')})")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--claims", type=int, default=400, help="claims to make (default 400)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mode", choices=CLAIM_MODES[1:], default=CHALLENGE)
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--verbose", "-v", action="count", default=0,
                   help="a line per claim (twice: and the camera's reading)")
    args = p.parse_args(argv)
    if args.claims < 1:
        print("claim_check: --claims must be at least 1", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    results = asyncio.run(run(args.claims, args.seed, args.mode, args.fps, args.verbose))
    for line in report(results, time.perf_counter() - t0):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
