"""Vault Assault at the table: its entry in the games registry, like every game's.

Its pure rules (definition, state, engine, summary) and, apart from them, what the
table makes of them: the LED board (`board`), the state in words (`status`), the
short commands and help (`commands`), the page's moves and fields (`moves`, `page`),
the buttons and lamps (`buttons`), what the table hears (`phrases`) and what the
camera's readings mean (`camera`, through `interpret`). It is also the registry's
default game (a log without `new_game`, a fresh box).
"""

from __future__ import annotations

from typing import Any

from companion.games.registry import Game
from companion.games.vault_assault import board, buttons, commands, page, phrases
from companion.games.vault_assault import definition as d
from companion.games.vault_assault.engine import EVENT_TYPES, apply, new_state, winners_of
from companion.games.vault_assault.moves import legal_moves
from companion.games.vault_assault.state import ASSAULT, GAME_OVER, GameState
from companion.games.vault_assault.status import status_lines
from companion.games.vault_assault.summary import summary


class _Claims:
    """Vault Assault's claims module, imported on the first claim (it loads the dice
    data and the camera's reading types, which a table without a camera never needs)."""

    @staticmethod
    def claim_of(before: Any, event: Any, after: Any) -> Any:
        from companion.games.vault_assault import claims as c

        return c.claim_of(before, event, after)

    @staticmethod
    def judge(claim: Any, reading: Any, dice: Any, sure: float, state: Any) -> Any:
        from companion.games.vault_assault import claims as c

        return c.judge(claim, reading, dice, sure, state)


claims = _Claims


def _camera_sense(dice: Any) -> Any:
    from companion.games.vault_assault.camera import MosaicSense

    return MosaicSense(dice)


def _tallied(state: GameState) -> bool:
    """Finished for good: over, and every seat tallied (the winners known)."""
    return state.phase == GAME_OVER and bool(winners_of(state))


def over_line(state: GameState) -> str:
    """A finished game, for the sim resuming its log: the winner, or the tally to do."""
    winners = winners_of(state)
    who = " and ".join(state.seats[w].name for w in winners)
    return f"this game is over: winner {who}" if winners else "this game is over (tally)"


GAME = Game(
    id=d.GAME_ID,
    name="Vault Assault",
    state_type=GameState,
    new_state=new_state,
    apply=apply,
    summary=summary,
    event_types=frozenset(EVENT_TYPES),
    render=board.render,
    led_legend=board.legend,
    status_lines=status_lines,
    parse_command=commands.parse_command,
    help=commands.HELP,
    page_moves=lambda state, new_game_after_over=False: legal_moves(
        state, new_game_after_over=new_game_after_over),
    players=(min(d.SETUPS), max(d.SETUPS)),
    new_words="PLAYERS NAME... [cop=N]",
    new_command=commands.new_command,
    buzz_armed=lambda state: state.phase == ASSAULT,
    late_seat=lambda state: state.cop,
    late_claim=buttons.stage_claim,
    press_event=buttons.press,
    live_seats=buttons.live_seats,
    bar=buttons.bar,
    no_seat=buttons.no_seat,
    done=_tallied,
    over_line=over_line,
    page_state=page.page_state,
    seat_names=lambda state: [s.name for s in state.seats],
    page_event=page.page_event,
    # Robbers hide their chosen dice from each other in a 3-player game: each may flip
    # on their own phone (`heist_flip`), and screens never show which dice were flipped.
    secret_events=frozenset({"heist_flip"}),
    public=commands.public,
    public_in=commands.public_in,
    private=page.private,
    callouts=phrases.callouts,
    common_phrases=phrases.COMMON_PHRASES,
    camera_sense=_camera_sense,
    claim_of=claims.claim_of,
    camera_only=frozenset({"claim_check"}),
    judge_claim=lambda claim, reading, dice, sure, state: claims.judge(
        claim, reading, dice, sure, state),
    camera_render=board.render_seen,
    describe=commands.describe,
)
