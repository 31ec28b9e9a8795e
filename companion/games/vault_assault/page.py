"""Vault Assault on the table page: its fields at the top level of the page's state
(the `replay --json` summary, the phase, the seats and the turn in detail), and its
events as the page shows them.

The cops' hidden row is never sent while the heist is on: only the positions the
robbers have flipped (the table sees those dice), and the whole row once the heist is
over (the cops show their dice). In a 3-player game robbers hide their chosen dice from
each other (the rules), so which dice each robber flipped is never sent to the table:
only how many, and who has chosen this attempt; a robber's own phone, the cops' and the
table's controls get theirs through `private` (companion.games.vault_assault.moves).
"""

from __future__ import annotations

from typing import Any

from companion.games.vault_assault.engine import setup_of, total_of
from companion.games.vault_assault.moves import private_moves
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
        "challenges": [
            {"event": c.event, "claim": c.claim, "seat": c.seat, "stage": c.stage,
             "text": c.text} for c in state.challenges
        ],
    }


def page_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """The cops' row hidden (the page's history shows it was hidden, not where)."""
    if event.get("type") == "heist_hide":
        return {"type": "heist_hide", "row": "hidden"}
    return None


def private(state: GameState, seat: int | None) -> dict[str, Any] | None:
    """What one paired device may see that the table may not (`Game.private`): in a
    3-player heist, a robber's phone its own dice, the cops' phone and the table's
    controls (`seat` None) every robber's."""
    return private_moves(state, seat)


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
        secret = setup_of(state).secret_flips
        heist = {
            "row_length": len(h.row),
            "row": list(h.row) if show_row else None,
            "revealed": {} if secret else revealed,
            "flipped": {} if secret else {str(s): sorted(p) for s, p in h.flipped},
            "flips": {str(s): len(p) for s, p in h.flipped},
            "secret": secret,
            "chosen": sorted(h.chosen()),
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
