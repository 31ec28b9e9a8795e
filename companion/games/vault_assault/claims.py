"""The claims the camera checks at a Vault Assault table, and how it judges them (pure).

    claim_of(before, event, after) -> Claim | None
        an accepted robber's press ("Escaped!": five Escapes among their dice), a stage
        (its mosaic assembled) and the cops' press (the Arrest: the fourth mosaic);
    judge(claim, reading, dice, sure, state) -> Judgement

Whose dice are which colours comes from the rules' setup (definition.Setup: the
robbers' sets in the cops' comparison order, the cops' red and blue, how many dice
each holds). A die counts only when its face was read with at least `sure` confidence
by a set that owns that face (interpret.counted). The camera challenges only what the
dice it reads surely prove: the claim cannot be true whatever the dice it cannot read
show. Anything short of proof either way is "can't see", never a challenge.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from companion.games.claims import CANT_SEE, CHALLENGED, CONFIRMED, Claim, Judgement
from companion.games.vault_assault import definition as d
from companion.games.vault_assault.interpret import counted, mosaic_stages
from companion.games.vault_assault.state import ASSAULT, GameState
from companion.vision.dice_data import DiceData, load_dice_data
from companion.vision.types import FrameReading

ARREST_STAGE = d.STAGES_BEFORE_ARREST + 1  # the Arrest is the fourth mosaic


def robber_sets_of(state: GameState, seat: int) -> tuple[str, ...]:
    """The colours of a robber seat's dice this turn (the setup's order)."""
    order = state.robbers()
    sets = d.SETUPS[state.players].robber_sets
    if seat not in order:
        return ()
    i = order.index(seat)
    return sets[i] if i < len(sets) else ()


def claim_of(before: Any, event: Mapping[str, Any], after: Any) -> Claim | None:
    """The claim an accepted event makes, or None."""
    if not isinstance(after, GameState) or not isinstance(before, GameState):
        return None
    kind = event.get("type")
    turn = before.turn
    if turn is None or before.phase != ASSAULT:
        return None
    setup = d.SETUPS[before.players]
    number = after.events_applied
    if kind == "stage":
        stage = event.get("stage")
        if not isinstance(stage, int):
            return None
        return Claim("stage", number, turn.cop, f"stage {stage}'s mosaic", stage,
                     setup.cop_sets)
    if kind != "buzz":
        return None
    seat = event.get("seat")
    if not isinstance(seat, int):
        return None
    if seat == turn.cop:
        return Claim("arrest", number, seat, "the Arrest mosaic", ARREST_STAGE, setup.cop_sets)
    return Claim("escape", number, seat, f"{setup.escape_needs} Escapes", None,
                 robber_sets_of(before, seat))


@lru_cache(maxsize=1)
def _shipped() -> DiceData:
    return load_dice_data()


def judge(claim: Claim, reading: FrameReading, dice: DiceData | None, sure: float,
          state: Any = None) -> Judgement:
    """The camera's answer to `claim` from one settled reading (`state`: the game now,
    for the player count; None: 2-3 players' dice counts)."""
    data = dice if dice is not None else _shipped()
    players = getattr(state, "players", 0) or 2
    setup = d.SETUPS.get(players, d.SETUPS[2])
    if claim.kind == "escape":
        return _judge_escape(claim, reading, data, sure, setup)
    return _judge_stage(claim, reading, data, sure, setup)


def _judge_escape(claim: Claim, reading: FrameReading, data: DiceData, sure: float,
                  setup: d.Setup) -> Judgement:
    needs, total = setup.escape_needs, setup.robber_dice
    mine = [x for x in reading.dice if x.dice_set in claim.sets]
    good = counted(FrameReading(reading.width, reading.height, tuple(mine)), data, sure)
    escapes = sum(1 for x in good if x.face == data.escape_face)
    others = len(good) - escapes
    colours = " and ".join(claim.sets) or "their"
    if escapes >= needs:
        return Judgement(CONFIRMED, escapes, needs, f"the camera sees {escapes} Escapes")
    if len(mine) > total:  # more dice of these colours than the seat holds: a misread
        return Judgement(CANT_SEE, escapes, needs,
                         f"the camera sees {len(mine)} {colours} dice, not {total}")
    if total - others < needs:  # even the dice it cannot read could not make it
        return Judgement(CHALLENGED, escapes, needs,
                         f"the camera sees {escapes} Escape{'s' if escapes != 1 else ''}")
    unread = total - len(good)
    return Judgement(CANT_SEE, escapes, needs,
                     f"the camera sees {escapes} Escapes and can't read {unread} "
                     f"{colours} {'die' if unread == 1 else 'dice'}")


def _judge_stage(claim: Claim, reading: FrameReading, data: DiceData, sure: float,
                 setup: d.Setup) -> Judgement:
    stage = claim.stage or ARREST_STAGE
    mine = tuple(x for x in reading.dice if x.dice_set in claim.sets)
    view = FrameReading(reading.width, reading.height, mine, reading.mat_found)
    name = f"stage {stage}" if stage != ARREST_STAGE else "the Arrest"
    for s in mosaic_stages(view, data, min_confidence=sure):
        if s.stage == stage and s.complete:
            return Judgement(CONFIRMED, 4, 4, f"the camera sees {name}'s mosaic assembled")
    good = counted(view, data, sure)
    places = {p[1] for x in good if (p := data.piece(x.face)) is not None and p[0] == stage}
    wild = any(data.wild(x.face) == stage for x in good)
    filled = len(places) + (1 if wild and len(places) < 4 else 0)
    total = setup.cop_dice
    if len(mine) > total:
        return Judgement(CANT_SEE, filled, 4,
                         f"the camera sees {len(mine)} cops' dice, not {total}")
    if filled >= 4:  # every piece showing, not seen side by side in place
        return Judgement(CANT_SEE, filled, 4,
                         f"the camera sees {name}'s pieces but not assembled")
    # every missing place needs a die the camera could not read surely
    could = filled + max(0, total - len(good))
    if could < 4:
        return Judgement(CHALLENGED, filled, 4,
                         f"the camera sees {filled} of {name}'s 4 pieces")
    return Judgement(CANT_SEE, filled, 4,
                     f"the camera sees {filled} of {name}'s 4 pieces and can't read "
                     f"{total - len(good)} cops' dice")
