"""Payouts and the summary `replay --json` prints for The Big Score (money in dollars).

{"game", "over", "round", "phase", "cops", "busted_at", "busted", "first_player", "floor",
 "tokens_in_vault", "players": [{"name", "status", "expert", "ability_used",
 "vault_tokens", "breakdown": {"cash", "silver", "gold", "diamonds", "artifacts",
 "artifact_majority", "hard_drives", "hacker"}, "total"}], "winners", "advice"}

Totals are shown as the game goes (what each would take home now); `winners` is filled
once Act II is over.
"""

from __future__ import annotations

from typing import Any

from companion.games.big_score import definition as d
from companion.games.big_score.engine import advice
from companion.games.big_score.state import BUSTED, GAME_OVER, BigScoreState, Player

K = 1000


def artifacts_of(p: Player) -> int:
    return p.act1_artifacts + p.vault.count("artifact")


def breakdown(state: BigScoreState, seat: int) -> dict[str, int]:
    """Each payout line of one player, in dollars."""
    p = state.players[seat]
    counts = [artifacts_of(q) for q in state.players]
    top = max(counts, default=0)
    majority = top > 0 and counts.count(top) == 1 and counts[seat] == top
    drives, keys = p.act1_drives, p.vault.count("key")
    pairs = min(drives, keys)
    unpaired = (drives - pairs) + (keys - pairs)
    cash = p.act1_cash + sum(d.CASH_VALUE.get(t, 0) for t in p.vault)
    lines = {
        "cash": cash,
        "silver": p.vault.count("silver") * d.SILVER_BAR,
        "gold": p.vault.count("gold") * d.GOLD_BAR,
        "diamonds": d.diamonds_worth(p.act1_diamonds + p.vault.count("diamond")),
        "artifacts": artifacts_of(p) * d.ARTIFACT_EACH,
        "artifact_majority": d.ARTIFACT_MAJORITY if majority else 0,
        "hard_drives": pairs * d.DRIVE_WITH_KEY,
        "hacker": unpaired * d.HACKER_UNPAIRED if p.expert == "hacker" else 0,
    }
    return {k: v * K for k, v in lines.items()}


def total(state: BigScoreState, seat: int) -> int:
    return sum(breakdown(state, seat).values())


def winners(state: BigScoreState) -> list[int]:
    """Highest total; ties: a busted player loses to one not busted, then the most Act I
    cash, then the most Vault Tokens; still tied: shared."""
    if state.phase != GAME_OVER:
        return []

    def key(seat: int) -> tuple[int, bool, int, int]:
        p = state.players[seat]
        return (total(state, seat), p.status != BUSTED, p.act1_cash, len(p.vault))

    best = max(key(s) for s in range(state.n))
    return [s for s in range(state.n) if key(s) == best]


def summary(state: BigScoreState) -> dict[str, Any]:
    return {
        "game": d.GAME_ID,
        "over": state.phase == GAME_OVER,
        "round": state.round,
        "phase": state.phase,
        "cops": state.cops,
        "busted_at": d.busted_after(state.n) if state.n else None,
        "busted": state.busted,
        "first_player": state.marker if state.n else None,
        "floor": list(state.floor),
        "tokens_in_vault": sum(state.bag),
        "players": [
            {
                "name": p.name,
                "status": p.status,
                "expert": p.expert,
                "ability_used": p.ability_used,
                "vault_tokens": list(p.vault),
                "breakdown": breakdown(state, i),
                "total": total(state, i),
            }
            for i, p in enumerate(state.players)
        ],
        "winners": winners(state),
        "advice": advice(state),
    }
