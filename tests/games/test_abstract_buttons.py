"""Vault (abstract) on a 2-seat table's buttons: the seat to move presses, the
companion plays that side's move (the sim's `bot` move)."""

from __future__ import annotations

import asyncio
import json

from companion.commands.sim import play_script
from companion.games.vault_abstract import opponent
from companion.games.vault_abstract.table import DEFAULT_LEVEL, press_event
from companion.loop import Referee

NEW = {"type": "new_game", "game": "vault-abstract", "players": 2, "names": ["Wes", "Bea"]}


def test_the_seat_to_move_gets_the_companions_move() -> None:
    ref = Referee()
    ref.submit(NEW)
    expected = opponent.choose_move(ref.state, DEFAULT_LEVEL, seed=0)
    assert press_event(ref.state, 1, 5) is None  # Black's button on White's turn
    event = press_event(ref.state, 0, 5)
    assert event == {"type": "move", "from": expected[0], "to": expected[1], "ts_ns": 5}


def test_presses_through_the_buttons_play_the_moves() -> None:
    lines = [json.dumps(NEW), '{"type":"buzz","seat":0,"ts_ns":1000000000}',
             '{"type":"buzz","seat":1,"ts_ns":2000000000}']
    ref = Referee()
    played, rejected = asyncio.run(play_script(lines, ref, echo_rejections=False))
    assert (played, rejected) == (3, 0)
    assert len(ref.state.moves) == 2 and ref.state.to_move == 0
