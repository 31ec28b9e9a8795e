"""More games on the same box, each a pure rules module beside `companion.rules`.

Each subpackage holds `definition.py` (the numbers as data), `state.py` (an immutable
state), `engine.py` (`new_state()` and `apply(state, event) -> Result`) and `summary.py`
(what `replay --json` prints). `game(game_id)` gives a game's entry points by the
`new_game` event's `game` field; nothing here is imported by the Vault Assault referee.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

PACKAGES = {
    "big-score": "companion.games.big_score",
    "vault-solitaire": "companion.games.vault_solitaire",
    "vault-abstract": "companion.games.vault_abstract",
}


class GameRules(NamedTuple):
    id: str
    new_state: Callable[[], Any]
    apply: Callable[[Any, Any], Any]  # (state, event) -> companion.rules.engine.Result
    summary: Callable[[Any], dict[str, Any]]
    event_types: frozenset[str]


def game(game_id: str) -> GameRules:
    """The rules of a game by its `new_game` id; KeyError for an unknown id."""
    package = PACKAGES[game_id]
    engine = importlib.import_module(f"{package}.engine")
    summary = importlib.import_module(f"{package}.summary")
    return GameRules(game_id, engine.new_state, engine.apply, summary.summary,
                     engine.EVENT_TYPES)
