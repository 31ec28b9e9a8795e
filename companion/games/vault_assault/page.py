"""Vault Assault on the table page: its fields at the top level of the page's state
(the `replay --json` summary, the phase, the seats and the turn in detail), and its
events as the page shows them.

The cops' hidden row is never sent while the heist is on: only the positions the
robbers have flipped (the table sees those dice), and the whole row once the heist is
over (the cops show their dice).
"""

from __future__ import annotations

from typing import Any

from companion.games.vault_assault.engine import total_of
from companion.games.vault_assault.state import HEIST, HEIST_HIDE, GameState
from companion.games.vault_assault.status import status_lines
from companion.games.vault_assault.summary import summary


def page_state(state: GameState) -> dict[str, Any]:
    """The page's top level for Vault Assault (the house adds its own keys)."""
    return {
        **summary(state),
        "phase": state.phase,
        "players": state.players,
        "status": status_lines(state),
        "diamonds_in_box": state.diamonds_in_box,
        "bank_empty": state.bank_empty,
        "sticky_fingers_used": state.sticky_fingers_used,
        "events_applied": state.events_applied,
        "seat_details": seat_details(state),
        "turn": turn_details(state),
    }


def page_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The cops' row hidden (the page's history shows it was hidden, not where)."""
    if event.get("type") == "heist_hide":
        return {"type": "heist_hide", "row": "hidden"}
    return None


def seat_details(state: GameState) -> list[dict[str, Any]]:
    turn = state.turn
    out = []
    for i, s in enumerate(state.seats):
        out.append(
            {
                "seat": i,
                "name": s.name,
                "cops": bool(turn and turn.cop == i),
                "cash": s.cash,
                "total": total_of(state, i),
                "impounded": list(s.impounded),
                "hostage": bool(turn and i in turn.hostages),
                "escaped_now": bool(turn and i in turn.escaped),
                "arrested_now": bool(turn and i in turn.arrested),
                "impound_due": bool(turn and i in turn.impounds_due),
                "tiles_lost": s.tiles_lost,
            }
        )
    return out


def turn_details(state: GameState) -> dict[str, Any] | None:
    turn = state.turn
    if turn is None:
        return None
    heist = None
    if turn.heist is not None:
        h = turn.heist
        revealed: dict[str, str] = {}
        for _seat, positions in h.flipped:
            for p in positions:
                revealed[str(p)] = h.row[p]
        show_row = state.phase not in (HEIST_HIDE, HEIST)
        heist = {
            "row_length": len(h.row),
            "row": list(h.row) if show_row else None,
            "revealed": revealed,
            "flipped": {str(s): sorted(p) for s, p in h.flipped},
            "in_heist": sorted(h.in_heist),
            "attempts": h.attempts,
            "diamond_to": h.diamond_to,
        }
    return {
        "cop": turn.cop,
        "stages": turn.stages,
        "preset": turn.preset,
        "bangs": len(turn.bang_intervals),
        "bang_since_stage": turn.bang_since_stage,
        "hostages": sorted(turn.hostages),
        "escaped": list(turn.escaped),
        "arrested": sorted(turn.arrested),
        "impounds_due": sorted(turn.impounds_due),
        "empty": turn.empty,
        "heist": heist,
    }
