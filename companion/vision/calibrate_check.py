"""The profile's own check: fresh rolls read back with the profile just taught.

The box "rolls" for the person: it picks a face for every die of every set (from a
seed), asks for the dice laid anywhere on the mat showing them, and reads the frame as
the camera does (``pipeline.read_frame`` with the profile, symbol dice only). Over the
rounds every face of a set comes up where the rounds hold enough dice.

    check_rolls(data, rounds, seed) -> list[Roll]
    score_round(roll, readings) -> list[Outcome]     one frame's dice matched to the roll
    summarise(outcomes, rounds, when) -> ProfileCheck
    report(check, outcomes) -> list[str]             the lines `companion calibrate` prints
    run_check(table, profile, rounds=3, seed=0, when=...) -> CheckRun

Matching knows no positions (a person lays the dice anywhere): per set, a die read with
a face the roll asked of that set is right (the most confident reading first); a die
read with any other face is wrong (an extra die so too); an asked face nobody read, or
read without a face or set, is unread. ``sure`` is the lowest confidence from 0.5 (in
the readings' steps of 0.0001) at and above which no die was read wrong; the check
passes when no die is wrong at ``sure``, at least 95% of the dice asked are read right
at ``sure`` or above, and every face asked of a set is read right at least once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from companion.vision.calibrate import CalibrationError, CalibrationTable, Step, check_markers
from companion.vision.dice_data import DiceData
from companion.vision.mat_spec import DEFAULT_MAT, MatSpec
from companion.vision.pipeline import read_frame
from companion.vision.profile import PASS_SHARE, Profile, ProfileCheck
from companion.vision.symbols import KNOWN_AT
from companion.vision.types import UNKNOWN, DieReading

DEFAULT_ROUNDS = 3
STEP = 0.0001  # the readings' confidences are rounded to 4 places
RIGHT, WRONG, UNREAD = "right", "wrong", "unread"

Roll = tuple[tuple[str, str, str], ...]  # (set, die kind, face) for every die


@dataclass(frozen=True)
class Outcome:
    """One die of a round: the face ``asked`` of ``dice_set`` ("" for an extra die), the
    face ``read`` (UNKNOWN when unread), its confidence and RIGHT, WRONG or UNREAD."""

    dice_set: str
    asked: str
    read: str
    confidence: float
    status: str


@dataclass(frozen=True)
class CheckRun:
    check: ProfileCheck
    outcomes: tuple[Outcome, ...]
    lines: tuple[str, ...]


def check_rolls(data: DiceData, rounds: int, seed: int = 0) -> list[Roll]:
    """``rounds`` rolls of every die; each die shows a face its set has not shown yet
    while its kind has one, else any of its faces."""
    rng = random.Random(seed)
    shown: dict[str, set[str]] = {s: set() for s in data.sets}
    rolls = []
    for _ in range(rounds):
        roll = []
        for set_name, kind in data.all_dice():
            faces = list(data.kinds[kind])
            fresh = [f for f in faces if f not in shown[set_name]]
            face = rng.choice(fresh or faces)
            shown[set_name].add(face)
            roll.append((set_name, kind, face))
        rolls.append(tuple(roll))
    return rolls


def score_round(roll: Roll, readings: list[DieReading] | tuple[DieReading, ...]
                ) -> list[Outcome]:
    """The dice read in one round matched to the faces asked, set by set."""
    left: dict[str, list[str]] = {}
    for set_name, _kind, face in roll:
        left.setdefault(set_name, []).append(face)
    out: list[Outcome] = []
    misread: list[DieReading] = []
    faceless: dict[str, list[DieReading]] = {}
    for r in sorted(readings, key=lambda r: -r.confidence):
        if r.face == UNKNOWN or r.dice_set == UNKNOWN or r.confidence < KNOWN_AT:
            faceless.setdefault(r.dice_set, []).append(r)
        elif r.face in left.get(r.dice_set, ()):
            left[r.dice_set].remove(r.face)
            out.append(Outcome(r.dice_set, r.face, r.face, r.confidence, RIGHT))
        else:
            misread.append(r)
    for r in misread:  # each takes the place of a face of its set nobody read right
        asked = left[r.dice_set].pop(0) if left.get(r.dice_set) else ""
        out.append(Outcome(r.dice_set, asked, r.face, r.confidence, WRONG))
    for set_name, faces in left.items():
        for face in faces:
            pool = faceless.get(set_name) or faceless.get(UNKNOWN) or []
            r = pool.pop(0) if pool else None
            out.append(Outcome(set_name, face, UNKNOWN, r.confidence if r else 0.0, UNREAD))
    return out


def choose_sure(outcomes: list[Outcome] | tuple[Outcome, ...]) -> float:
    """The lowest confidence from 0.5 at and above which no die was read wrong (at most
    1.0: a die read wrong at full confidence leaves none)."""
    wrong = [o.confidence for o in outcomes if o.status == WRONG]
    if not wrong:
        return KNOWN_AT
    return min(1.0, max(KNOWN_AT, round(max(wrong) + STEP, 4)))


def never_read(outcomes: list[Outcome] | tuple[Outcome, ...], sure: float
               ) -> list[tuple[str, str]]:
    """The faces of a set asked in the check and never read right at `sure` or more: a
    profile that cannot read a face at all does not pass, however few dice show it."""
    asked = {(o.dice_set, o.asked) for o in outcomes if o.asked}
    read = {(o.dice_set, o.asked) for o in outcomes
            if o.asked and o.status == RIGHT and o.confidence >= sure}
    return sorted(asked - read)


def _counts(pairs: list[tuple[str, bool]]) -> dict[str, tuple[int, int]]:
    asked = Counter(k for k, _ok in pairs)
    right = Counter(k for k, ok in pairs if ok)
    return {k: (asked[k], right[k]) for k in sorted(asked)}


def summarise(outcomes: list[Outcome] | tuple[Outcome, ...], rounds: int, when: str
              ) -> ProfileCheck:
    sure = choose_sure(outcomes)
    asked = [o for o in outcomes if o.asked]

    def good(o: Outcome) -> bool:
        return o.status == RIGHT and o.confidence >= sure

    right = sum(good(o) for o in asked)
    wrong = sum(o.status == WRONG for o in outcomes)
    unsure = sum(o.status != WRONG and not good(o) for o in asked)
    sure_wrong = any(o.status == WRONG and o.confidence >= sure for o in outcomes)
    passed = (not sure_wrong and bool(asked) and right >= PASS_SHARE * len(asked)
              and not never_read(outcomes, sure))
    return ProfileCheck(
        passed=passed, sure=sure, dice=len(asked), right=right, unsure=unsure, wrong=wrong,
        rounds=rounds, when=when,
        per_face=_counts([(o.asked, good(o)) for o in asked]),
        per_set=_counts([(o.dice_set, good(o)) for o in asked]),
    )


def report(check: ProfileCheck, outcomes: list[Outcome] | tuple[Outcome, ...]) -> list[str]:
    """One line overall, one per face of a set not read right every time (and one per
    set with extra dice), then whether ``claims = "challenge"`` may be turned on."""
    lines = [f"check: {check.dice} dice in {check.rounds} roll(s): {check.right} read right, "
             f"{check.unsure} unsure or unread, {check.wrong} wrong (sure from confidence "
             f"{check.sure:g})"]
    by_face: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        by_face.setdefault((o.dice_set, o.asked), []).append(o)
    for (set_name, face), group in sorted(by_face.items()):
        wrong = [o for o in group if o.status == WRONG]
        if not face:
            lines.append(f"check:   {set_name}: {len(group)} extra dice read ("
                         + ", ".join(o.read for o in group) + ")")
            continue
        right = sum(o.status == RIGHT and o.confidence >= check.sure for o in group)
        if right == len(group):
            continue
        unsure = len(group) - right - len(wrong)
        line = f"check:   {set_name} {face}: {right} of {len(group)} read right"
        if unsure:
            line += f", {unsure} unsure or unread"
        if wrong:
            line += f", {len(wrong)} wrong (read as " + ", ".join(
                f"{o.read} {o.confidence:.2f}" for o in wrong) + ")"
        lines.append(line)
    if check.passed:
        lines.append('check: passed: "challenge" may be turned on ([camera] claims)')
        return lines
    reasons = []
    full = sum(o.status == WRONG and o.confidence >= check.sure for o in outcomes)
    if full:
        reasons.append(f"{full} dice read wrong at full confidence")
    if not check.dice:
        reasons.append("no die was asked")
    elif check.right < PASS_SHARE * check.dice:
        reasons.append(f"{check.right} of {check.dice} dice read right at confidence "
                       f"{check.sure:g} or more ({PASS_SHARE:.0%} needed)")
    never = never_read(outcomes, check.sure)
    if never:
        reasons.append("never read right: " + ", ".join(f"{s} {f}" for s, f in never))
    lines.append("check: not passed: " + "; ".join(reasons) + '; claims stay "advise"')
    return lines


def run_check(
    table: CalibrationTable,
    profile: Profile,
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    when: str,
    spec: MatSpec = DEFAULT_MAT,
    log: Callable[[str], None] = print,
    retries: int = 3,
) -> CheckRun:
    """Ask ``table`` for ``rounds`` rolls and read each with ``profile``; nothing is
    written here. A frame that does not show the mat is asked again, ``retries`` times
    in all, then CalibrationError."""
    outcomes: list[Outcome] = []
    for k, roll in enumerate(check_rolls(profile.dice, rounds, seed)):
        for attempt in range(retries):
            frame: Any = table.frame(Step("check", sample=k, dice=roll))
            try:
                mat = check_markers(frame, spec)
                break
            except CalibrationError as exc:
                if attempt == retries - 1:
                    raise CalibrationError(f"check, roll {k + 1}: {exc}") from None
                log(f"check, roll {k + 1}: {exc}; again")
        reading = read_frame(frame, profile=profile, mat_spec=spec, mat=mat, pips=False)
        got = score_round(roll, reading.dice)
        outcomes.extend(got)
        log(f"check, roll {k + 1}: {len(roll)} dice asked, "
            f"{sum(o.status == RIGHT for o in got)} read right, "
            f"{sum(o.status == WRONG for o in got)} wrong")
    check = summarise(outcomes, rounds, when)
    return CheckRun(check, tuple(outcomes), tuple(report(check, outcomes)))
