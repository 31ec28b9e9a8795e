"""Vault Assault's state in words, for the terminal beside the LED frame, `replay` and
the page's status lines (each line fits 78 columns with names of up to 10 characters;
seats counted from 1, as people count). In a 3-player game the heist's line says how
many dice each robber has flipped and who has chosen, never which (robbers hide their
dice from each other)."""

from __future__ import annotations

from companion.games.vault_assault.engine import (
    current_round,
    setup_of,
    total_of,
    total_turns,
    winners_of,
)
from companion.games.vault_assault.state import (
    ASSAULT,
    GAME_OVER,
    HEIST,
    HEIST_HIDE,
    HEIST_OVER,
    IMPOUND,
    GameState,
)

PHASE_WORDS = {
    HEIST_HIDE: "cops hide the diamond",
    HEIST: "diamond heist",
    HEIST_OVER: "ready: waiting for Go!",
    ASSAULT: "the race is on",
    IMPOUND: "impound cars",
    GAME_OVER: "game over",
}



def status_lines(state: GameState) -> list[str]:
    """The state in words, a line each."""
    if state.nseats == 0:
        return ["No game yet: start one with new_game."]
    turn = state.turn
    over = state.phase == GAME_OVER
    turn_no = state.turns_played if over else min(state.turns_played + 1, total_turns(state))
    lines = [
        f"Round {current_round(state)} · turn {turn_no}/{total_turns(state)} · "
        f"{PHASE_WORDS.get(state.phase, state.phase)}"
        + (" · BANK EMPTY" if state.bank_empty else "")
    ]
    if turn:
        lines.append(
            f"Cops: {state.seats[turn.cop].name:.20} (seat {turn.cop + 1}) · "
            f"stages {turn.stages}/3 · preset pieces {turn.preset} · "
            f"Bang! used {len(turn.bang_intervals)}/4"
        )
    if state.phase == HEIST and turn and turn.heist:
        heist = turn.heist
        secret = setup_of(state).secret_flips
        parts = []
        for seat, flipped in heist.flipped:
            if secret:  # how many, never which
                shown = f"{len(flipped)} flipped"
            else:
                shown = ",".join(str(p + 1) for p in sorted(flipped)) or "-"
            out = "" if seat in heist.in_heist else " (out)"
            chosen = " (chosen)" if seat in heist.chosen() else ""
            parts.append(f"{state.seats[seat].name:.10} {shown}{out}{chosen}")
        head = ("Heist (dice hidden): " if secret
                else f"Heist, positions 1-{len(heist.row)} flipped: ")
        lines.append(head + " · ".join(parts))
    winners = winners_of(state)
    if over:
        if winners:
            names = " and ".join(state.seats[w].name for w in winners)
            best = total_of(state, winners[0]) or 0
            lines.append(f"Winner: {names} with ${best:,} (total: cash + $40,000 a diamond)")
        else:
            left = [str(i + 1) for i, s in enumerate(state.seats) if s.cash is None]
            lines.append(f"Tally each seat's cash: tally S CASH (seat {', '.join(left)} to go)")
    for i, s in enumerate(state.seats):
        tags = []
        if turn and turn.cop == i:
            tags.append("COPS")
        if turn and i in turn.hostages:
            tags.append("hostage")
        if turn and i in turn.escaped:
            tags.append("ESCAPED")
        if turn and i in turn.arrested:
            tags.append("ARRESTED")
        total = total_of(state, i)
        if total is not None:
            tags.append(f"total ${total:,}")
        if i in winners:
            tags.append("WINNER")
        lines.append(
            f"  seat {i + 1} {s.name:<10.10} cars {s.cars} diamonds {s.diamonds} "
            f"escaped {s.escaped} arrested {s.arrested} {' '.join(tags)}".rstrip()
        )
    return lines
