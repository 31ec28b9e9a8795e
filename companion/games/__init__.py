"""More games on the same box, each a pure rules module beside `companion.rules`.

Each subpackage holds `definition.py` (the numbers as data), `state.py` (an immutable
state), `engine.py` (`new_state()` and `apply(state, event) -> Result`) and `summary.py`
(what `replay --json` prints). `GAMES` maps a `new_game` event's `game` field to the
subpackage's engine module name; nothing here is imported by the Vault Assault referee.
"""

GAMES = {
    "big-score": "companion.games.big_score",
    "vault-solitaire": "companion.games.vault_solitaire",
    "vault-abstract": "companion.games.vault_abstract",
}
