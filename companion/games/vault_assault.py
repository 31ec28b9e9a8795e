"""Vault Assault's entry in the games registry: its existing modules, unchanged."""

from __future__ import annotations

from typing import Any

from companion.display.model import render, status_lines
from companion.games.registry import Game
from companion.rules import definition as d
from companion.rules.definition import STAGES_BEFORE_ARREST
from companion.rules.engine import EVENT_TYPES, apply, new_state
from companion.rules.state import ASSAULT, GameState
from companion.rules.summary import summary
from companion.sim_table import HELP, parse_command


def _page_moves(state: GameState, new_game_after_over: bool = False) -> dict[str, Any]:
    from companion.web.moves import legal_moves

    return legal_moves(state, new_game_after_over=new_game_after_over)


def _press(state: GameState, seat: int, ts_ns: int) -> dict[str, Any]:
    return {"type": "buzz", "seat": seat, "ts_ns": ts_ns}


def _stage_claim(
    state: GameState, ts_ns: int, last: tuple[int, int] | None
) -> tuple[dict[str, Any], tuple[int, int]] | None:
    """The cops' press as the next stage claim, while stages 1-3 are not all in; `last`
    is the (turn, stage) of the last press's claim, which may not be applied yet."""
    turn = state.turn
    if turn is None or state.bank_empty:
        return None
    last_turn, last_stage = last or (-1, 0)
    done = max(turn.stages, last_stage if last_turn == state.turns_played else 0)
    if done >= STAGES_BEFORE_ARREST:
        return None
    return ({"type": "stage", "stage": done + 1, "ts_ns": ts_ns},
            (state.turns_played, done + 1))


GAME = Game(
    id=d.GAME_ID,
    name="Vault Assault",
    state_type=GameState,
    new_state=new_state,
    apply=apply,
    summary=summary,
    event_types=frozenset(EVENT_TYPES),
    render=render,
    status_lines=status_lines,
    parse_command=parse_command,
    help=HELP + "\nplay GAME NAME...             before a game: big-score, vault-solitaire, "
    "vault-abstract",
    page_moves=_page_moves,
    buzz_armed=lambda state: state.phase == ASSAULT,
    late_seat=lambda state: state.cop,
    camera_reads="mosaic",
    late_claim=_stage_claim,
    press_event=_press,
)
